//! `get_value_history` over two years, hourly, for a wallet with 100,000
//! legs.
//!
//! `cargo bench -p server --bench value_history` builds the real server
//! state over a fresh SQLite database (`Application::build`, price URLs at
//! a closed port so nothing leaves the machine), seeds it with a completed
//! scan of a synthetic wallet (`VH_LEGS` legs, default 100000, spread
//! evenly over the two years before a fixed now: SOL fees and transfers,
//! USDC, and nine other mints with no price series) and the stored SOL
//! series for the range (17,520 hourly and 730 daily closes, with their
//! ranges marked fetched, so no source is asked). It then times the domain
//! function `analytics::value_history::get_value_history` (store read of
//! every leg, series load, valuation, the per-bucket holdings) `VH_RUNS`
//! times (default 5), and prints min / median, the points and holdings
//! produced, the JSON size and the time to serialize it, and the process's
//! peak RSS (`VmHWM`, seeding included).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::{WALLET, env_usize, peak_rss_kib, seed_wallet};

use std::{sync::Arc, time::Instant};

use server::{
    accounts::Principal,
    analytics::value_history::{GetValueHistoryArgs, get_value_history},
    clock::ManualClock,
    startup::Application,
};

/// 2026-09-01T00:00:00Z.
const NOW: i64 = 1_788_220_800;

fn main() {
    let legs = env_usize("VH_LEGS", 100_000);
    let runs = env_usize("VH_RUNS", 5);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let config = support::offline_config(dir.path());
        let app = Application::build(config, Arc::new(ManualClock::new(NOW * 1000 + 1_800_000)))
            .await
            .unwrap();
        let state = app.state().clone();
        let seeding = Instant::now();
        seed_wallet(state.store(), legs, NOW).await;
        eprintln!(
            "seeded {} legs and the SOL series in {:.1} s",
            state.store().count_legs(WALLET).await.unwrap(),
            seeding.elapsed().as_secs_f64()
        );
        // Read as the edge reads a call's arguments.
        let args = || -> GetValueHistoryArgs {
            serde_json::from_value(serde_json::json!({
                "address": WALLET,
                "granularity": "1h",
                "from": "2024-09-01",
                "to": "2026-08-31T23:59:59Z",
            }))
            .unwrap()
        };
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..runs {
            let started = Instant::now();
            let history = get_value_history(&state.reads(), &Principal::Anonymous, args(), &Default::default())
                .await
                .unwrap();
            times.push(started.elapsed().as_secs_f64());
            last = Some(history);
        }
        let history = last.unwrap();
        assert!(history.complete, "no backfill: the series is stored");
        let holdings: usize = history.points.iter().map(|p| p.holdings.len()).sum();
        let json = serde_json::to_vec(&history).unwrap().len();
        let serialize = Instant::now();
        let _ = serde_json::to_vec(&history).unwrap();
        let serialize = serialize.elapsed().as_secs_f64();
        times.sort_by(f64::total_cmp);
        println!(
            "| legs | points | holdings rows | response (MiB) | min (s) | median (s) | to JSON (s) | peak RSS (MiB) |"
        );
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
        println!(
            "| {} | {} | {} | {:.1} | {:.3} | {:.3} | {:.3} | {:.0} |",
            legs,
            history.points.len(),
            holdings,
            json as f64 / 1_048_576.0,
            times[0],
            times[times.len() / 2],
            serialize,
            peak_rss_kib() as f64 / 1024.0,
        );
        app.state().store().close().await;
    });
}
