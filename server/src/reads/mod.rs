//! The prelude every paid read shares (`get_ledger`, `get_positions`,
//! `get_value_history`, `get_flows`): once a call's arguments are parsed
//! (at the edge, into newtypes), it passes the paywall for its wallet with
//! what it presented, and then reads the store and values legs at their
//! block times. [`Reads`] is that call's whole context; the read modules
//! take it and nothing else. [`ledger_page`] is the ledger's paid read
//! (`get_ledger`); the analytics reads live in `analytics`.

pub mod ledger_page;

pub mod legs;

use legs::LegsCache;

use crate::{
    accounts::{Action, Principal},
    error::AppError,
    payments::{self, PayArgs, PaymentBlock, Paywall, Presented},
    prices::{
        Prices,
        valuation::{SeriesCache, Valuer},
    },
    routes::RestRoute,
    solana::WalletAddress,
    store::Store,
};

/// What a paid read needs: the paywall (and through it the store and the
/// clock), the price sources and the read caches.
#[derive(Clone, Copy)]
pub struct Reads<'a> {
    pub paywall: Paywall<'a>,
    pub prices: &'a Prices,
    /// Stored price closes the valuer reads through (`Caches::series`).
    pub series: &'a SeriesCache,
    /// Each wallet's legs at its latest ledger version (`Caches::legs`).
    pub legs: &'a LegsCache,
}

/// The route and tool a read is served as: the challenge names both.
#[derive(Clone, Copy, Debug)]
pub struct ReadKind {
    /// The wallet's REST route (`/v1/wallets/{address}/…`).
    pub route: RestRoute,
    pub tool: &'static str,
}

impl<'a> Reads<'a> {
    pub fn store(&self) -> &'a Store {
        self.paywall.store
    }

    pub fn now_ms(&self) -> i64 {
        self.paywall.now_ms()
    }

    /// Pass the paywall for reading `wallet` as `kind`, with the payment
    /// arguments of the call (which win over the request's headers). Call
    /// it once every argument is checked: only then may a call be paid for.
    /// `Ok(None)`: covered without a payment; `Ok(Some(block))`: a payment
    /// settled (or replayed) for it.
    pub async fn authorize(
        &self,
        principal: &Principal,
        wallet: &WalletAddress,
        pay: &PayArgs,
        headers: &Presented,
        kind: ReadKind,
    ) -> Result<Option<PaymentBlock>, AppError> {
        principal.permit(Action::ReadWallet)?;
        let presented = pay.presented(headers);
        payments::authorize_wallet_read(
            &self.paywall,
            principal,
            wallet,
            &presented,
            kind.route,
            kind.tool,
        )
        .await
    }

    /// The valuer of legs in `mints` over `span` (unix seconds); none
    /// without a span (a wallet with no timed legs).
    pub async fn valuer(
        &self,
        mints: Vec<String>,
        span: Option<(i64, i64)>,
    ) -> Result<Valuer, AppError> {
        Ok(match span {
            Some(span) => {
                Valuer::prepare(
                    self.store(),
                    self.prices,
                    self.series,
                    mints,
                    span,
                    self.now_ms(),
                )
                .await?
            }
            None => Valuer::default(),
        })
    }
}
