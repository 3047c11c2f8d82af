//! What one scan run is handed and how it fails: the small context a scan
//! takes instead of the application state (store, RPC client, settings,
//! clock, stop signal), its error, and [`record`], which every step of a
//! scan calls to save progress and keep its lease; and how a batch of
//! transactions becomes legs ([`legs_of`], [`note_unknown_programs`]). It
//! is the ground the signature scan ([`super::scan`]), its staking half
//! ([`super::staking`]) and the re-derivation of old readings
//! ([`super::rescan`]) stand on, so none imports another for it.

use std::collections::BTreeSet;

use crate::{
    ledger::{self, TxView},
    solana::{RpcClient, RpcCost, RpcError},
    store::{JobProgress, JobRecord, Store, StoreError},
};

/// How a scan runs.
#[derive(Clone, Debug)]
pub struct ScanSettings {
    pub lease_ms: i64,
    pub page_size: usize,
    pub fetch_batch: usize,
    pub preview_signatures: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Rpc(#[from] RpcError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the job's lease was lost to another worker")]
    LeaseLost,
    #[error("stopped at a safe point for shutdown")]
    Stopped,
    #[error("the job names an unknown scope {0:?}")]
    BadScope(String),
}

pub struct ScanContext<'a> {
    pub store: &'a Store,
    pub rpc: &'a RpcClient,
    pub settings: &'a ScanSettings,
    pub owner: &'a str,
    pub now: &'a (dyn Fn() -> i64 + Send + Sync),
    pub should_stop: &'a (dyn Fn() -> bool + Send + Sync),
}

/// Record progress (this run's RPC cost added to what earlier runs spent)
/// and extend the lease; a lost lease ends the run.
pub(super) async fn record(
    ctx: &ScanContext<'_>,
    job: &JobRecord,
    cost: &RpcCost,
    progress: &JobProgress,
) -> Result<(), ScanError> {
    let mut p = progress.clone();
    p.rpc_calls = job.rpc_calls + i64::try_from(cost.calls()).unwrap_or(i64::MAX);
    p.rpc_credits = job.rpc_credits + i64::try_from(cost.credits()).unwrap_or(i64::MAX);
    let held = ctx
        .store
        .record_progress(&job.id, ctx.owner, &p, (ctx.now)(), ctx.settings.lease_ms)
        .await?;
    if held {
        Ok(())
    } else {
        Err(ScanError::LeaseLost)
    }
}

/// The wallet's legs of each transaction. The stake accounts the scan
/// knows to be the wallet's at a slot (`StakeAccountRow::owned_at`: not
/// before it received one, nor after it handed one over) count: SOL sent to one of them is a
/// stake deposit even when the transaction has no stake instruction saying
/// so (docs/ledger.md, Staking).
pub(super) fn legs_of(
    views: &[TxView],
    address: &str,
    known: &[crate::store::StakeAccountRow],
) -> Vec<Vec<ledger::Leg>> {
    views
        .iter()
        .map(|v| {
            let own: BTreeSet<String> = known
                .iter()
                .filter(|k| k.owned_at(v.slot))
                .map(|k| k.account.clone())
                .collect();
            ledger::legs_with_stake_accounts(v, address, &own)
        })
        .collect()
}

/// Programs read the conservative way, listed on the job (get_job's
/// unknown_programs): how many of these transactions ran each.
pub(super) async fn note_unknown_programs(
    ctx: &ScanContext<'_>,
    job: &JobRecord,
    views: &[TxView],
) -> Result<(), ScanError> {
    let mut unknown: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
    for view in views {
        for program in ledger::protocols::unknown_programs(view) {
            *unknown.entry(program).or_insert(0) += 1;
        }
    }
    let unknown: Vec<(String, i64)> = unknown.into_iter().collect();
    ctx.store.add_unknown_programs(&job.id, &unknown).await?;
    Ok(())
}
