//! Payments: what things cost (quotes, prices in USD micro-units) and, in
//! the payments work, x402 challenges, verification, settlement and
//! receipts. Nothing here knows of HTTP.

pub mod money;
pub mod quote;

pub use money::Usd;
pub use quote::{Quote, Scope};

use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    error::{AppError, Code},
    solana::WalletAddress,
    state::AppState,
};

/// The arguments of `quote_wallet` and the body of `POST /v1/quotes`.
#[derive(Debug, Deserialize, JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteWalletArgs {
    /// The wallet's base58 public key.
    pub address: String,
    /// preview | full | incremental | refresh | read; default full.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub scope: Option<Scope>,
}

impl From<quote::QuoteError> for AppError {
    fn from(err: quote::QuoteError) -> Self {
        match err {
            quote::QuoteError::Rpc(e) => {
                tracing::warn!(error = %e, "quote: RPC failed");
                AppError::new(
                    Code::Unavailable,
                    "the Solana RPC endpoint did not answer while sizing the wallet; try again shortly",
                )
            }
            quote::QuoteError::Store(e) => AppError::internal("quote store", &e),
        }
    }
}

/// `quote_wallet` for the MCP tool and the REST route alike.
pub async fn quote(state: &AppState, args: QuoteWalletArgs) -> Result<Quote, AppError> {
    let address = WalletAddress::parse(&args.address)
        .map_err(|why| AppError::invalid_params(format!("address: {why}")))?;
    let quoting = quote::Quoting {
        rpc: state.rpc(),
        store: state.store(),
        pricing: &state.config().pricing,
        now_ms: state.now_ms(),
    };
    Ok(quote::quote_wallet(quoting, address, args.scope.unwrap_or_default()).await?)
}

/// The paywall seam for scans. With `payments = off` every scan is free;
/// the payments work verifies `args.payment` or `args.receipt` here and
/// answers `payment_required` with a challenge otherwise.
pub fn authorize_scan(
    state: &AppState,
    _principal: &crate::auth::Principal,
    _quote: &crate::store::QuoteRecord,
    _args: &crate::jobs::ScanWalletArgs,
) -> Result<(), AppError> {
    match state.config().payments {
        crate::config::PaymentsMode::Off => Ok(()),
    }
}

/// The paywall seam for paid reads of a wallet (get_ledger and the reads
/// to come). With `payments = off` every read is free; the payments work
/// checks receipts, owner reads and payments here.
pub fn authorize_read(
    state: &AppState,
    _principal: &crate::auth::Principal,
    _address: &WalletAddress,
) -> Result<(), AppError> {
    match state.config().payments {
        crate::config::PaymentsMode::Off => Ok(()),
    }
}
