//! The watchlist: wallets an account follows, each with a label. Watching
//! is what grants an account free owner reads of a wallet (the access
//! module asks [`is_watching`]), and the list shows each wallet's newest
//! scan and ledger size so a person sees at a glance what is ready.
//! The scan and the ledger belong to the wallet, not the account: two
//! accounts watching one wallet see the same scan.

use super::{AccountId, AccountsError, check_label};
use crate::{solana::WalletAddress, store::Store};

/// The longest watchlist label.
pub const WALLET_LABEL_MAX: usize = 128;

/// The most wallets one account watches.
pub const MAX_WATCHED: usize = 1000;

/// The newest scan job of a wallet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastScan {
    pub job_id: String,
    /// running, completed, partial, failed or cancelled.
    pub status: String,
    /// None while it runs.
    pub finished_at: Option<i64>,
    /// The account that started it; none for an anonymous payer.
    pub account_id: Option<String>,
}

/// One watched wallet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchedWallet {
    pub address: WalletAddress,
    /// Empty when none was given.
    pub label: String,
    pub added_at: i64,
    /// None when the wallet was never scanned.
    pub last_scan: Option<LastScan>,
    /// Legs in the wallet's ledger.
    pub ledger_legs: u64,
}

/// Watch `address` with `label` (empty for none, at most
/// [`WALLET_LABEL_MAX`] characters). Watching it again replaces the label
/// and keeps when it was first added.
pub async fn add_wallet(
    store: &Store,
    now_ms: i64,
    account: &AccountId,
    address: WalletAddress,
    label: &str,
) -> Result<(), AccountsError> {
    let label = check_label("label", label, WALLET_LABEL_MAX)?;
    let watched = store.watched_labels(account.as_str()).await?;
    if watched.len() >= MAX_WATCHED && !watched.iter().any(|(a, _)| a == address.as_str()) {
        return Err(AccountsError::invalid(
            "address",
            format!("a watchlist holds at most {MAX_WATCHED} wallets; remove one first"),
        ));
    }
    store
        .upsert_watch(account.as_str(), address.as_str(), &label, now_ms)
        .await?;
    Ok(())
}

/// Stop watching `address`. False when it was not watched.
pub async fn remove_wallet(
    store: &Store,
    account: &AccountId,
    address: &WalletAddress,
) -> Result<bool, AccountsError> {
    Ok(store
        .delete_watch(account.as_str(), address.as_str())
        .await?)
}

/// Whether `account` watches `address`.
pub async fn is_watching(
    store: &Store,
    account: &AccountId,
    address: &WalletAddress,
) -> Result<bool, AccountsError> {
    Ok(store.watching(account.as_str(), address.as_str()).await?)
}

/// The account's watched addresses and labels (empty for none), oldest
/// first: the list without scans and ledger sizes, for naming them.
pub async fn watched(
    store: &Store,
    account: &AccountId,
) -> Result<Vec<(String, String)>, AccountsError> {
    Ok(store.watched_labels(account.as_str()).await?)
}

/// The account's watched wallets, oldest first.
pub async fn list_wallets(
    store: &Store,
    account: &AccountId,
) -> Result<Vec<WatchedWallet>, AccountsError> {
    store
        .watchlist_of(account.as_str())
        .await?
        .into_iter()
        .map(|row| {
            let address = WalletAddress::parse(&row.address).map_err(|e| {
                AccountsError::Corrupt(format!("watched address {:?}: {e}", row.address))
            })?;
            let last_scan = match (row.job_id, row.job_status) {
                (Some(job_id), Some(status)) => Some(LastScan {
                    job_id,
                    status,
                    finished_at: row.job_finished_at,
                    account_id: row.job_account_id,
                }),
                _ => None,
            };
            Ok(WatchedWallet {
                address,
                label: row.label,
                added_at: row.added_at,
                last_scan,
                ledger_legs: u64::try_from(row.legs).unwrap_or(0),
            })
        })
        .collect()
}
