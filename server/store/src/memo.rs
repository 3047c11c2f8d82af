//! What a process remembers of its database between requests, so the read
//! path does not ask the database again for what cannot have changed.
//!
//! [`Known`] holds facts that, once true in the database, stay true for
//! ever: a named server secret (inserted once, never updated), a wallet
//! whose scan has ended (jobs are never deleted and an ended job never runs
//! again), and the wallet and expiry of a settled payment's receipt (set
//! when it settles, never changed). Only what was read from the database is
//! remembered, never an absence, so another instance on the same database
//! creating the fact is seen on the next call. The caches of the layers
//! above (kept pages, replays, price series) are the server's `Caches`.

use std::{
    collections::{HashMap, HashSet},
    sync::{Mutex, MutexGuard, PoisonError},
};

/// The most entries one set of [`Known`] facts holds before it starts
/// over: a bound on memory, not a correctness matter (a forgotten fact is
/// read again).
const MAX_ENTRIES: usize = 65_536;

/// Lock `mutex`, whether or not a panicking holder poisoned it: every
/// value kept here is whole after each statement that writes it.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Facts read from the database that can never become false.
#[derive(Default)]
pub(super) struct Known {
    secrets: Mutex<HashMap<String, String>>,
    scanned: Mutex<HashSet<String>>,
    /// Receipt hash to the wallet it covers and when it expires.
    receipts: Mutex<HashMap<String, (String, Option<i64>)>>,
}

fn bounded<K: Eq + std::hash::Hash, V>(map: &mut HashMap<K, V>, key: K, value: V) {
    if map.len() >= MAX_ENTRIES {
        map.clear();
    }
    map.insert(key, value);
}

impl Known {
    pub(super) fn secret(&self, name: &str) -> Option<String> {
        lock(&self.secrets).get(name).cloned()
    }

    pub(super) fn remember_secret(&self, name: &str, secret: &str) {
        bounded(&mut lock(&self.secrets), name.to_owned(), secret.to_owned());
    }

    pub(super) fn scanned(&self, wallet: &str) -> bool {
        lock(&self.scanned).contains(wallet)
    }

    pub(super) fn remember_scanned(&self, wallet: &str) {
        let mut scanned = lock(&self.scanned);
        if scanned.len() >= MAX_ENTRIES {
            scanned.clear();
        }
        scanned.insert(wallet.to_owned());
    }

    pub(super) fn receipt(&self, hash: &str) -> Option<(String, Option<i64>)> {
        lock(&self.receipts).get(hash).cloned()
    }

    pub(super) fn remember_receipt(&self, hash: &str, wallet: &str, expires_at: Option<i64>) {
        bounded(
            &mut lock(&self.receipts),
            hash.to_owned(),
            (wallet.to_owned(), expires_at),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_bounded() {
        let known = Known::default();
        for i in 0..=MAX_ENTRIES {
            known.remember_scanned(&i.to_string());
        }
        assert!(known.scanned(&MAX_ENTRIES.to_string()));
        assert!(!known.scanned("0"), "the set started over at its bound");
    }
}
