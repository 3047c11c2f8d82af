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
use support::peak_rss_kib;

use std::{sync::Arc, time::Instant};

use server::{
    analytics::value_history::{GetValueHistoryArgs, get_value_history},
    auth::Principal,
    clock::ManualClock,
    config::Config,
    ledger::{Leg, OperationType},
    startup::Application,
};

const WALLET: &str = "71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
/// 2026-09-01T00:00:00Z.
const NOW: i64 = 1_788_220_800;
const SPAN: i64 = 730 * 86_400;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn mint_of(i: usize) -> (String, u8) {
    match i % 10 {
        0..=4 => ("sol".to_owned(), 9),
        5 | 6 => (USDC.to_owned(), 6),
        k => {
            // Nine made-up token mints (valid base58 keys), unpriced.
            let mut bytes = [7u8; 32];
            bytes[0] = u8::try_from(k * 10 + i % 3).unwrap();
            (bs58::encode(bytes).into_string(), 6)
        }
    }
}

fn close(t: i64) -> String {
    let n = (t / 3600).rem_euclid(400);
    format!("{}.{:02}", 100 + n / 4, (n % 4) * 25)
}

async fn seed(state: &server::state::AppState, legs_wanted: usize) {
    let store = state.store();
    // Two legs per transaction: a movement and its fee.
    let transactions = legs_wanted / 2;
    let step = SPAN / i64::try_from(transactions).unwrap();
    let start = NOW - SPAN;
    let txs = (0..transactions).map(|i| {
        let t = start + i64::try_from(i).unwrap() * step;
        let signature = format!("bench{i:09}");
        let (mint, decimals) = mint_of(i);
        let incoming = i % 3 != 2;
        let amount: i128 = if incoming { 2_000_000 } else { -1_000_000 } * 1000;
        let leg = |index, operation_type, mint: String, amount, decimals| Leg {
            signature: signature.clone(),
            slot: u64::try_from(i).unwrap() + 1,
            block_time: Some(t),
            index,
            operation_type,
            mint,
            amount,
            decimals,
            counterparties: Vec::new(),
        };
        let op = if incoming {
            OperationType::TransferIn
        } else {
            OperationType::TransferOut
        };
        let legs = vec![
            leg(0, op, mint, amount, decimals),
            leg(1, OperationType::NetworkFee, "sol".into(), -5000, 9),
        ];
        (signature.clone(), t, legs)
    });
    support::seed::completed_scan(store, WALLET, NOW * 1000, txs).await;

    for (granularity, step) in [(3600i64, 3600i64), (86_400, 86_400)] {
        let first = (start - 86_400).div_euclid(86_400) * 86_400;
        let points: Vec<(i64, String)> = (first..NOW)
            .step_by(usize::try_from(step).unwrap())
            .map(|b| (b, close(b)))
            .collect();
        store
            .store_price_range("sol", granularity, (first, NOW), &points, "coinbase")
            .await
            .unwrap();
    }
}

fn main() {
    let legs = env_usize("VH_LEGS", 100_000);
    let runs = env_usize("VH_RUNS", 5);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config {
            database_url: format!("sqlite://{}/bench.db", dir.path().display()),
            listen: "127.0.0.1:0".parse().unwrap(),
            ..Config::default()
        };
        config.worker.in_process = false;
        for url in [
            &mut config.prices.coinbase_url,
            &mut config.prices.coinbase_exchange_url,
            &mut config.prices.jupiter_url,
        ] {
            *url = "http://127.0.0.1:9".to_owned();
        }
        let app = Application::build(config, Arc::new(ManualClock::new(NOW * 1000 + 1_800_000)))
            .await
            .unwrap();
        let state = app.state().clone();
        let seeding = Instant::now();
        seed(&state, legs).await;
        eprintln!(
            "seeded {} legs and the SOL series in {:.1} s",
            state.store().count_legs(WALLET).await.unwrap(),
            seeding.elapsed().as_secs_f64()
        );
        let args = || GetValueHistoryArgs {
            address: WALLET.into(),
            granularity: Some("1h".into()),
            from: Some("2024-09-01".into()),
            to: Some("2026-08-31T23:59:59Z".into()),
            ..GetValueHistoryArgs::default()
        };
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..runs {
            let started = Instant::now();
            let history = get_value_history(&state, &Principal::Anonymous, args(), &Default::default())
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
