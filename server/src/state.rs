//! The running service's parts, in two layers.
//!
//! [`Services`] is what the domain is served from: configuration, the
//! store, the Solana RPC client, the payments runtime, the price sources
//! and the clock. It hands each domain call the small context that call
//! takes ([`Services::paywall`], [`Services::reads`], [`Services::runner`],
//! [`Services::oauth`]),
//! so no domain module sees the whole. A worker process builds only this.
//!
//! [`AppState`] is the surfaces' state: the services plus what only the
//! portal needs (Leptos options, whether a hydration bundle exists). The
//! tool registry is no part of either: it is built once and borrowed
//! (`mcp::tools::registry`). Both are cheap to clone.

use std::{ops::Deref, sync::Arc};

use leptos::prelude::LeptosOptions;

use crate::{
    clock::Clock, config::Config, prices::Prices, solana::RpcClient, store::Store,
    telemetry::Metrics,
};

/// What the domain is served from.
#[derive(Clone)]
pub struct Services(Arc<Built>);

/// The parts, and what is derived from them once: the authorization
/// server's settings and its metadata fetcher.
struct Built {
    parts: Parts,
    oauth: crate::oauth::Settings,
    fetcher: crate::oauth::HttpFetcher,
}

impl Deref for Built {
    type Target = Parts;

    fn deref(&self) -> &Parts {
        &self.parts
    }
}

pub struct Parts {
    pub config: Config,
    pub public_url: String,
    pub store: Store,
    pub rpc: RpcClient,
    /// Our fee payer and payee for x402 payments.
    pub payments: crate::payments::Runtime,
    pub prices: Prices,
    pub clock: Arc<dyn Clock>,
    /// The Prometheus metrics (off unless `metrics.listen` is set).
    pub metrics: Metrics,
    /// The read path's caches, each with its invalidation rule.
    pub caches: Arc<crate::caches::Caches>,
    /// Migrations applied when this process opened the store: `/healthz`
    /// reports it without asking the database, so liveness never depends on
    /// the database answering.
    pub migrations: i64,
}

impl Services {
    pub fn new(parts: Parts) -> Self {
        let oauth = crate::oauth::Settings::new(&parts.public_url, &parts.config.oauth);
        let fetcher = crate::oauth::HttpFetcher::new(&oauth);
        Self(Arc::new(Built {
            parts,
            oauth,
            fetcher,
        }))
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

    /// The read path's caches.
    pub fn caches(&self) -> &crate::caches::Caches {
        &self.0.caches
    }

    pub fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }

    /// Migrations applied when the store was opened (read once at startup).
    pub fn migrations(&self) -> i64 {
        self.0.migrations
    }

    /// The rate limits, at this instant.
    pub fn limiter(&self) -> crate::limits::Limiter<'_> {
        crate::limits::Limiter {
            store: &self.0.store,
            now_ms: self.now_ms(),
            config: &self.0.config.rate_limit,
        }
    }

    /// The paywall's part: pricing, challenges, settlement, access.
    pub fn paywall(&self) -> crate::payments::Paywall<'_> {
        let parts = &*self.0;
        crate::payments::Paywall {
            store: &parts.store,
            rpc: &parts.rpc,
            runtime: &parts.payments,
            mode: parts.config.payments,
            x402: &parts.config.x402,
            pricing: &parts.config.pricing,
            public_url: &parts.public_url,
            clock: &*parts.clock,
            metrics: &parts.metrics,
        }
    }

    /// The OAuth authorization server's part: the store, the time, its
    /// settings and the metadata-document fetcher.
    pub fn oauth(&self) -> crate::oauth::OAuth<'_> {
        crate::oauth::OAuth {
            store: &self.0.store,
            now_ms: self.now_ms(),
            settings: &self.0.oauth,
            fetcher: &self.0.fetcher,
        }
    }

    /// A paid read's part: the paywall and the price sources.
    pub fn reads(&self) -> crate::reads::Reads<'_> {
        crate::reads::Reads {
            paywall: self.paywall(),
            prices: &self.0.prices,
            series: &self.0.caches.series,
            legs: &self.0.caches.legs,
        }
    }

    /// The follow-the-money tools' part: reads (store, prices, clock), the
    /// RPC client and the research config.
    pub fn graph(&self) -> crate::graph::Graph<'_> {
        crate::graph::Graph {
            reads: self.reads(),
            rpc: &self.0.rpc,
            config: &self.0.config.graph,
        }
    }

    /// Research credits: balances, grants, top-ups.
    pub fn credits(&self) -> crate::credits::Credits<'_> {
        crate::credits::Credits {
            store: &self.0.store,
            config: &self.0.config.graph,
            now_ms: self.now_ms(),
        }
    }

    /// The share links' part: the paid-read context and the share settings.
    pub fn sharing(&self) -> crate::share::Sharing<'_> {
        crate::share::Sharing {
            reads: self.reads(),
            config: &self.0.config.share,
        }
    }

    /// The free price tools' part.
    pub fn price_query(&self) -> crate::prices::api::PriceQuery<'_> {
        crate::prices::api::PriceQuery {
            store: &self.0.store,
            prices: &self.0.prices,
            now_ms: self.now_ms(),
        }
    }

    /// The job runner's part: what scans and price backfills use.
    pub fn runner(&self) -> crate::jobs::Runner<'_> {
        let parts = &*self.0;
        crate::jobs::Runner {
            store: &parts.store,
            rpc: &parts.rpc,
            prices: &parts.prices,
            clock: &*parts.clock,
            worker: &parts.config.worker,
            solana: &parts.config.solana,
            preview_signatures: parts.config.pricing.preview_signatures,
        }
    }

    /// How this server takes payment, as every surface states it.
    pub fn payments_view(&self) -> crate::payments::PaymentsView {
        crate::payments::view::view(
            self.0.config.payments,
            &self.0.payments,
            &self.0.config.x402.network,
        )
    }
}

/// The surfaces' state: the services, and what the portal needs.
#[derive(Clone)]
pub struct AppState {
    services: Services,
    leptos: Arc<LeptosOptions>,
    /// Whether a wasm bundle is available, so pages carry hydration scripts.
    hydrate: bool,
}

impl AppState {
    pub fn new(services: Services, leptos: LeptosOptions, hydrate: bool) -> Self {
        Self {
            services,
            leptos: Arc::new(leptos),
            hydrate,
        }
    }

    pub fn services(&self) -> &Services {
        &self.services
    }

    pub fn leptos(&self) -> &LeptosOptions {
        &self.leptos
    }

    pub fn hydrate(&self) -> bool {
        self.hydrate
    }
}

impl Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.services
    }
}

impl axum::extract::FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        (*state.leptos).clone()
    }
}
