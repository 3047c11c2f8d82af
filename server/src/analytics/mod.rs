//! Analytics over a scanned wallet's legs: its positions under a cost-basis
//! method ([`positions`], SPEC N3, on the `basis` engine), its value through
//! time ([`value_history`], N4) and who it trades with ([`flows`], N5).
//! Both read the wallet's whole ledger from the store and prices from
//! `prices`; the pure cores take legs and a valuer, so the benchmark and
//! unit tests run them without a server. docs/analytics.md is the long form.

pub mod flows;
pub mod positions;
pub mod registry;
pub mod tax;
pub mod value_history;

use std::sync::Arc;

use crate::{error::AppError, ledger::SOL, reads::Reads, solana::WalletAddress};

pub use crate::reads::legs::Leg;

/// A stored leg row as the analytics read it (the graph reads them too).
pub(crate) fn leg_from_row(row: crate::store::AnalyticsLeg) -> Option<Leg> {
    Leg::from_row(row)
}

fn invalid(message: impl Into<String>) -> AppError {
    AppError::invalid_params(message)
}

/// A scanned wallet's legs, oldest first; a wallet never scanned is
/// not_found. The legs of a ledger version are read from the store once
/// and then shared ([`LegsCache`]): the share page and the report view
/// read the same wallet's legs three times a view (value history, flows,
/// positions), and reading 100,000 legs costs more than all the rest of a
/// report together (docs/benchmarks.md).
pub(crate) async fn scanned_legs(
    reads: &Reads<'_>,
    address: &WalletAddress,
) -> Result<Arc<[Leg]>, AppError> {
    let store = reads.store();
    if !store.wallet_scanned(address.as_str()).await? {
        return Err(AppError::not_found(
            "this wallet has never been scanned: quote_wallet, scan_wallet, poll get_job, then read",
        ));
    }
    // Read before the legs: legs written after this bump it, so legs kept
    // under it are every leg of that version (or more).
    let version = store.ledger_version(address.as_str()).await?;
    let cache = reads.legs;
    if let Some(legs) = cache.get(address.as_str(), version) {
        return Ok(legs);
    }
    let legs: Arc<[Leg]> = store
        .wallet_legs(address.as_str())
        .await?
        .into_iter()
        .filter_map(Leg::from_row)
        .collect();
    cache.keep(address.as_str(), version, legs.clone());
    Ok(legs)
}

fn mint_filter(text: Option<&str>) -> Result<Option<String>, AppError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(m) if m.eq_ignore_ascii_case(SOL) => Ok(Some(SOL.to_owned())),
        Some(m) => Ok(Some(
            WalletAddress::parse(m)
                .map_err(|why| invalid(format!("mint: {why}")))?
                .to_string(),
        )),
    }
}
