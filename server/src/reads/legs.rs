//! A leg as the reads and analytics use it, and the legs of each wallet's
//! latest ledger version read, kept so the reads
//! of one view (value history, flows, positions, the report) read a large
//! ledger from the store once. A leaf: it knows legs and nothing above, so
//! the read context can carry it without importing the modules that read
//! through it.

use std::sync::{Arc, Mutex, PoisonError};

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
    /// The program account the leg moves into, out of or from within.
    pub position: Option<String>,
    /// Registry name of the program that routed it (`ledger::Leg::router`).
    pub router: Option<String>,
}

impl Leg {
    pub(crate) fn from_row(row: crate::store::AnalyticsLeg) -> Option<Self> {
        Some(Self {
            signature: row.signature,
            index: u32::try_from(row.leg_index).unwrap_or(0),
            block_time: row.block_time,
            amount: row.amount.parse().ok()?,
            decimals: u32::try_from(row.decimals).unwrap_or(0),
            counterparties: serde_json::from_str(&row.counterparties).unwrap_or_default(),
            operation_type: row.operation_type,
            mint: row.mint,
            position: row.position,
            router: row.router,
        })
    }
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
    pub(crate) fn get(&self, wallet: &str, version: i64) -> Option<Arc<[Leg]>> {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter()
            .find(|(w, v, _)| w == wallet && *v == version)
            .map(|(_, _, legs)| legs.clone())
    }

    pub(crate) fn keep(&self, wallet: &str, version: i64, legs: Arc<[Leg]>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::SOL;

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
                position: None,
                router: None,
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
