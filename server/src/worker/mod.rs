//! Background work, run in-process by `ledger serve` or alone by
//! `ledger worker` (several workers may share one PostgreSQL database).
//!
//! Each pass runs to completion; shutdown is only observed between passes,
//! which are the safe points. Today the work is maintenance (forgetting
//! expired MCP sessions and idle rate-limit buckets); the job queue plugs in
//! here as another pass.

use std::time::Duration;

use tokio::sync::watch;

use crate::state::AppState;

/// What one maintenance pass removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Maintenance {
    pub sessions: u64,
    pub rate_buckets: u64,
}

/// One maintenance pass.
pub async fn maintenance_pass(state: &AppState) -> Result<Maintenance, crate::store::StoreError> {
    let now = state.now_ms();
    let sessions = state.store().purge_expired_sessions(now).await?;
    let rate_buckets = state.store().purge_rate_limits(now).await?;
    Ok(Maintenance {
        sessions,
        rate_buckets,
    })
}

/// Run passes until `stop` turns true.
pub async fn run(state: AppState, mut stop: watch::Receiver<bool>) {
    let interval = Duration::from_secs(state.config().worker.maintenance_interval_secs.max(1));
    tracing::info!(?interval, "worker started");
    loop {
        match maintenance_pass(&state).await {
            Ok(done) if done != Maintenance::default() => {
                tracing::info!(?done, "maintenance pass");
            }
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "maintenance pass failed; will retry"),
        }
        tokio::select! {
            changed = stop.wait_for(|stop| *stop) => {
                let _ = changed;
                break;
            }
            () = tokio::time::sleep(interval) => {}
        }
    }
    tracing::info!("worker stopped at a safe point");
}
