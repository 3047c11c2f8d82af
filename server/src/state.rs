//! The application state every handler and tool receives: configuration,
//! the store, the clock and the tool registry. Cheap to clone.

use std::sync::Arc;

use leptos::prelude::LeptosOptions;

use crate::{
    clock::Clock, config::Config, mcp::registry::Registry, prices::Prices, solana::RpcClient,
    store::Store,
};

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub config: Config,
    pub public_url: String,
    pub store: Store,
    pub rpc: RpcClient,
    /// Our fee payer and payee for x402 payments.
    pub payments: crate::payments::Runtime,
    pub prices: Prices,
    pub clock: Arc<dyn Clock>,
    pub registry: Registry,
    pub leptos: LeptosOptions,
    /// Whether a wasm bundle is available, so pages carry hydration scripts.
    pub hydrate: bool,
}

impl AppState {
    pub fn new(inner: Inner) -> Self {
        Self(Arc::new(inner))
    }

    pub fn config(&self) -> &Config {
        &self.0.config
    }

    pub fn public_url(&self) -> &str {
        &self.0.public_url
    }

    pub fn store(&self) -> &Store {
        &self.0.store
    }

    pub fn rpc(&self) -> &RpcClient {
        &self.0.rpc
    }

    pub fn payments(&self) -> &crate::payments::Runtime {
        &self.0.payments
    }

    pub fn prices(&self) -> &Prices {
        &self.0.prices
    }

    pub fn now_ms(&self) -> i64 {
        self.0.clock.now_ms()
    }

    pub fn registry(&self) -> &Registry {
        &self.0.registry
    }

    pub fn leptos(&self) -> &LeptosOptions {
        &self.0.leptos
    }

    pub fn hydrate(&self) -> bool {
        self.0.hydrate
    }
}

impl axum::extract::FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.0.leptos.clone()
    }
}
