//! Analytics over a scanned wallet's legs: its positions under a cost-basis
//! method ([`positions`], SPEC N3, on the `basis` engine), its value through
//! time ([`value_history`], N4) and who it trades with ([`flows`], N5).
//! Both read the wallet's whole ledger from the store and prices from
//! `prices`; the pure cores take legs and a valuer, so the benchmark and
//! unit tests run them without a server. docs/analytics.md is the long form.

pub mod flows;
pub mod positions;
pub mod registry;
pub mod value_history;

use std::sync::{Arc, Mutex, PoisonError};

use crate::{error::AppError, ledger::SOL, reads::Reads, solana::WalletAddress};

/// A leg as the analytics use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leg {
    pub signature: String,
    pub index: u32,
    pub block_time: Option<i64>,
    pub operation_type: String,
    pub mint: String,
    pub amount: i128,
    pub decimals: u32,
    pub counterparties: Vec<crate::ledger::Counterparty>,
}

impl Leg {
    fn from_row(row: crate::store::AnalyticsLeg) -> Option<Self> {
        Some(Self {
            signature: row.signature,
            index: u32::try_from(row.leg_index).unwrap_or(0),
            block_time: row.block_time,
            amount: row.amount.parse().ok()?,
            decimals: u32::try_from(row.decimals).unwrap_or(0),
            counterparties: serde_json::from_str(&row.counterparties).unwrap_or_default(),
            operation_type: row.operation_type,
            mint: row.mint,
        })
    }
}

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
    let cache = &reads.caches.legs;
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

/// The most legs [`LegsCache`] holds over all wallets (a leg is about
/// 300 bytes in memory, so about 90 MiB); a wallet with more is read from
/// the store every time.
pub const MAX_KEPT_LEGS: usize = 300_000;

/// The legs of each wallet's latest ledger version read, bounded by
/// [`MAX_KEPT_LEGS`] in total; past it the oldest kept wallets go first.
#[derive(Default)]
pub struct LegsCache(Mutex<Vec<Kept>>);

/// A wallet, the ledger version its legs were read at, and the legs.
type Kept = (String, i64, Arc<[Leg]>);

impl LegsCache {
    fn get(&self, wallet: &str, version: i64) -> Option<Arc<[Leg]>> {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter()
            .find(|(w, v, _)| w == wallet && *v == version)
            .map(|(_, _, legs)| legs.clone())
    }

    fn keep(&self, wallet: &str, version: i64, legs: Arc<[Leg]>) {
        if legs.len() > MAX_KEPT_LEGS {
            return;
        }
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // A slower call that read an older version must not replace a
        // newer one.
        if kept.iter().any(|(w, v, _)| w == wallet && *v > version) {
            return;
        }
        kept.retain(|(w, _, _)| w != wallet);
        let mut total: usize = kept.iter().map(|(_, _, l)| l.len()).sum();
        while total + legs.len() > MAX_KEPT_LEGS && !kept.is_empty() {
            total -= kept.remove(0).2.len();
        }
        kept.push((wallet.to_owned(), version, legs));
    }
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

#[cfg(test)]
mod legs_cache_tests {
    use super::*;

    fn legs(n: usize) -> Arc<[Leg]> {
        (0..n)
            .map(|i| Leg {
                signature: format!("s{i}"),
                index: 0,
                block_time: Some(i as i64),
                operation_type: "transfer_in".into(),
                mint: SOL.into(),
                amount: 1,
                decimals: 9,
                counterparties: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn legs_are_kept_per_version_and_an_older_read_never_replaces_a_newer() {
        let cache = LegsCache::default();
        cache.keep("w", 2, legs(3));
        assert_eq!(cache.get("w", 2).map(|l| l.len()), Some(3));
        assert!(
            cache.get("w", 1).is_none(),
            "another version is not these legs"
        );
        cache.keep("w", 1, legs(1));
        assert_eq!(cache.get("w", 2).map(|l| l.len()), Some(3));
        cache.keep("w", 3, legs(4));
        assert!(cache.get("w", 2).is_none(), "a newer version replaces it");
        assert_eq!(cache.get("w", 3).map(|l| l.len()), Some(4));
    }

    #[test]
    fn the_cache_holds_at_most_its_bound_dropping_the_oldest_wallet_first() {
        let cache = LegsCache::default();
        let half = MAX_KEPT_LEGS / 2;
        cache.keep("a", 1, legs(half));
        cache.keep("b", 1, legs(half));
        cache.keep("c", 1, legs(10));
        assert!(cache.get("a", 1).is_none(), "the oldest went first");
        assert!(cache.get("b", 1).is_some() && cache.get("c", 1).is_some());
        cache.keep("huge", 1, legs(MAX_KEPT_LEGS + 1));
        assert!(
            cache.get("huge", 1).is_none(),
            "a wallet past the bound is never kept"
        );
        assert!(cache.get("b", 1).is_some(), "and pushes nothing out");
    }
}
