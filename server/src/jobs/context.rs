//! What one scan run is handed and how it fails: the small context a scan
//! takes instead of the application state (store, RPC client, settings,
//! clock, stop signal), its error, and [`record`], which every step of a
//! scan calls to save progress and keep its lease. It is the ground both
//! the signature scan ([`super::scan`]) and its staking half
//! ([`super::staking`]) stand on, so neither imports the other for it.

use crate::{
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
