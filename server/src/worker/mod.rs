//! Background work, run in-process by `ledger serve` or alone by
//! `ledger worker` (several workers may share one PostgreSQL database).
//!
//! The work: scan jobs (claimed with leases, see `jobs`) and maintenance
//! (forgetting expired MCP sessions, idle rate-limit buckets, unpaid
//! quotes and spent OAuth tokens; settling portal scan debits an earlier
//! version left pending). Shutdown
//! is observed at safe points only: between maintenance passes, and
//! between pages of a scan, where the job is handed back for the next
//! worker.

use std::time::Duration;

use tokio::sync::watch;

use crate::state::Services;

/// What one maintenance pass removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Maintenance {
    pub sessions: u64,
    pub rate_buckets: u64,
    /// Expired quotes nothing refers to (unpaid challenges).
    pub quotes: u64,
    /// Pending payments finished from the chain (a crash between sending
    /// and recording; see payments::settle).
    pub payments_recovered: usize,
    /// OAuth rows past use: expired or revoked tokens, spent grants,
    /// expired consent requests, old activity (see oauth::purge).
    pub oauth: u64,
    /// Portal scan debits an earlier version left pending (a crash
    /// between its debit and its job), settled: refunded, or given the
    /// job they paid for (see credits::settle_stale_scan_debits).
    pub scan_debits_settled: usize,
    /// Credit-paid scans whose job failed, given back here when the worker
    /// stopped between the failure and its refund (see
    /// credits::refund_failed_scans).
    pub failed_scans_refunded: usize,
}

/// One maintenance pass.
pub async fn maintenance_pass(state: &Services) -> Result<Maintenance, crate::store::StoreError> {
    let now = state.now_ms();
    let sessions = state.store().purge_expired_sessions(now).await?
        + (state.store())
            .purge_portal_sessions(now, state.config().session.absolute_cutoff(now))
            .await?;
    let rate_buckets = state.store().purge_rate_limits(now).await?;
    let quotes = state.store().purge_expired_quotes(now).await?;
    let payments_recovered = crate::payments::settle::recover(&state.paywall()).await?;
    let oauth = crate::oauth::purge(state.store(), &state.config().oauth, now).await?;
    let scan_debits_settled = crate::credits::settle_stale_scan_debits(
        state.store(),
        crate::jobs::CREDITS_TOOL,
        now - crate::jobs::STALE_SCAN_DEBIT_MS,
        now,
    )
    .await?;
    let failed_scans_refunded =
        crate::credits::refund_failed_scans(state.store(), crate::jobs::CREDITS_TOOL, now).await?;
    Ok(Maintenance {
        scan_debits_settled,
        failed_scans_refunded,
        oauth,
        sessions,
        rate_buckets,
        quotes,
        payments_recovered,
    })
}

/// A name for this worker, unique across processes and hosts.
pub fn worker_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "host".to_owned());
    crate::ids::new_id(&format!("{host}-{}-", std::process::id()), 0)
}

/// Run jobs and maintenance until `stop` turns true. Each job runs to its
/// end or to a safe point (between pages) when a stop is asked for.
pub async fn run(state: Services, mut stop: watch::Receiver<bool>) {
    let maintenance_every =
        Duration::from_secs(state.config().worker.maintenance_interval_secs.max(1));
    let poll = Duration::from_millis(state.config().worker.poll_ms.max(10));
    let owner = worker_id();
    tracing::info!(%owner, ?maintenance_every, "worker started");
    let mut last_maintenance: Option<tokio::time::Instant> = None;
    loop {
        if last_maintenance.is_none_or(|t| t.elapsed() >= maintenance_every) {
            match maintenance_pass(&state).await {
                Ok(done) if done != Maintenance::default() => {
                    tracing::info!(?done, "maintenance pass");
                }
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "maintenance pass failed; will retry"),
            }
            last_maintenance = Some(tokio::time::Instant::now());
        }
        let stopping = {
            let stop = stop.clone();
            move || *stop.borrow()
        };
        let found = match crate::jobs::run_next(&state.runner(), &owner, &stopping).await {
            Ok(found) => found,
            Err(err) => {
                tracing::warn!(error = %err, "job loop: store failed; will retry");
                false
            }
        };
        if *stop.borrow() {
            break;
        }
        if found {
            continue;
        }
        tokio::select! {
            changed = stop.wait_for(|stop| *stop) => {
                let _ = changed;
                break;
            }
            () = tokio::time::sleep(poll) => {}
        }
    }
    tracing::info!("worker stopped at a safe point");
}
