//! What a process remembers of its database between requests, so the read
//! path does not ask the database again for what cannot have changed.
//!
//! [`Known`] holds facts that, once true in the database, stay true for
//! ever: a named server secret (inserted once, never updated), a wallet
//! whose scan has ended (jobs are never deleted and an ended job never runs
//! again), and the wallet and expiry of a settled payment's receipt (set
//! when it settles, never changed). Only what was read from the database is
//! remembered, never an absence, so another instance on the same database
//! creating the fact is seen on the next call. [`Memo`] keeps one cache of
//! each type for the layers above the store (the price series valuation
//! reads, the positions replays), so each lives exactly as long as the
//! `Store` it was built from and two servers in one process never share one.

use std::{
    any::{Any, TypeId},
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, MutexGuard, PoisonError},
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

/// One value of each type `T: Default`, made on first use: the caches the
/// layers above keep per database ([`crate::store::Store::memo`]).
#[derive(Default)]
pub struct Memo(Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>);

impl Memo {
    /// The `T` of this store, made with `T::default()` the first time.
    pub fn get<T: Any + Default + Send + Sync>(&self) -> Arc<T> {
        let any = lock(&self.0)
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()) as Arc<dyn Any + Send + Sync>)
            .clone();
        // The entry for `TypeId::of::<T>()` only ever holds a `T`.
        any.downcast::<T>().unwrap_or_else(|_| unreachable!())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Counter(std::sync::atomic::AtomicU32);

    #[test]
    fn one_value_per_type() {
        let memo = Memo::default();
        memo.get::<Counter>()
            .0
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(
            memo.get::<Counter>()
                .0
                .load(std::sync::atomic::Ordering::Relaxed),
            1
        );
        assert!(memo.get::<Mutex<Vec<u8>>>().lock().unwrap().is_empty());
    }

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
