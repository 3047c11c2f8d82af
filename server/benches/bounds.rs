//! The largest answer an anonymous caller can ask for, measured through
//! the real HTTP server.
//!
//! `cargo bench -p server --bench bounds` starts the real server
//! (`Application::build` over a fresh SQLite database, a hand-set clock at
//! 2026-12-01T00:30:00Z, price URLs at a closed port so nothing leaves the
//! machine, anonymous limits raised so the limit is not what is measured)
//! and seeds it with the worst wallet for `get_value_history`: `BOUNDS_MINTS`
//! mints (default 100) and SOL all held from Solana's genesis day, so every
//! daily point holds every mint: 2,452 points of 101 holdings, just under
//! the 250,000-holding cap. Then, each phase with the peak RSS reset first
//! (`/proc/self/clear_refs`):
//!
//! 1. baseline: a batch of twenty `ping` calls;
//! 2. the REST route `GET /v1/wallets/{a}/value-history?from=1972-03-01`;
//! 3. one MCP call with the same arguments (2025-06-18);
//! 4. the hardening issue's request: a batch of twenty of those calls
//!    (2025-03-26, about 3.5 KB);
//! 5. three such batches at once.
//!
//! It prints, per phase, the request and response bytes, the wall time
//! (median of `BOUNDS_RUNS`, default 3) and the process's peak RSS above
//! what it held before the phase.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::{env_usize, peak_rss_kib, rss_kib};

use std::{sync::Arc, time::Instant};

use serde_json::{Value, json};
use server::{
    clock::ManualClock,
    ledger::{Leg, OperationType},
    startup::Application,
};

const WALLET: &str = "71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6";
/// 2026-12-01T00:00:00Z.
const NOW: i64 = 1_796_083_200;
const GENESIS: i64 = 1_584_316_800;

fn mint(k: usize) -> String {
    let mut bytes = [9u8; 32];
    bytes[..8].copy_from_slice(&(k as u64 + 1).to_le_bytes());
    bs58::encode(bytes).into_string()
}

async fn seed(state: &server::state::AppState, mints: usize) {
    let txs = (0..=mints).map(|k| {
        let signature = format!("bounds{k:06}");
        let (mint, decimals) = if k == mints {
            ("sol".to_owned(), 9)
        } else {
            (mint(k), 6)
        };
        let t = GENESIS + 3600 + i64::try_from(k).unwrap();
        let leg = Leg {
            signature: signature.clone(),
            slot: u64::try_from(k).unwrap() + 1,
            block_time: Some(t),
            index: 0,
            operation_type: OperationType::TransferIn,
            mint,
            amount: 1_000_000_000,
            decimals,
            counterparties: Vec::new(),
            position: None,
            venue: None,
            router: None,
        };
        (signature, t, vec![leg])
    });
    support::seed::completed_scan(state.store(), WALLET, NOW * 1000, txs).await;
    // SOL's daily closes for the whole span, marked fetched: no source is asked.
    let first = GENESIS - 86_400;
    let points: Vec<(i64, String)> = (first..NOW)
        .step_by(86_400)
        .map(|b| (b, format!("{}.25", 20 + (b / 86_400) % 200)))
        .collect();
    state
        .store()
        .store_price_range("sol", 86_400, (first, NOW), &points, "coinbase")
        .await
        .unwrap();
}

/// Forget this process's peak RSS, so the next reading is the phase's.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

struct Phase {
    name: &'static str,
    request_bytes: usize,
    response_bytes: usize,
    median_ms: f64,
    peak_above_kib: u64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mints = env_usize("BOUNDS_MINTS", 100);
    let runs = env_usize("BOUNDS_RUNS", 3);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let mut config = support::offline_config(dir.path());
        config.rate_limit.anon_rps = 1_000_000.0;
        config.rate_limit.anon_burst = Some(1_000_000);
        let app = Application::build(config, Arc::new(ManualClock::new(NOW * 1000 + 1_800_000)))
            .await
            .unwrap();
        let base = format!("http://{}", app.local_addr().unwrap());
        seed(app.state(), mints).await;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(app.run_until(async move {
            let _ = stopped.await;
        }));
        let client = reqwest::Client::new();

        let init = client
            .post(format!("{base}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
                    "protocolVersion":"2025-03-26","capabilities":{},
                    "clientInfo":{"name":"bench","version":"1"}}})
                .to_string(),
            )
            .send()
            .await
            .unwrap();
        let session = init.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();

        let call = |id: usize, name: &str, arguments: Value| {
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                   "params":{"name":name,"arguments":arguments}})
        };
        let long = json!({"address": WALLET, "from": "1972-03-01"});
        let batch = |name: &str, arguments: &Value| {
            Value::Array((0..20).map(|i| call(i, name, arguments.clone())).collect()).to_string()
        };
        let pings = batch("ping", &json!({}));
        let longs = batch("get_value_history", &long);
        let single = call(1, "get_value_history", long.clone()).to_string();
        let rest = format!("{base}/v1/wallets/{WALLET}/value-history?from=1972-03-01");

        let post = |body: String, version: &'static str| {
            let client = client.clone();
            let url = format!("{base}/mcp");
            let session = session.clone();
            async move {
                let mut request = client
                    .post(url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", version);
                if version == "2025-03-26" {
                    request = request.header("mcp-session-id", session);
                }
                let response = request.body(body).send().await.unwrap();
                assert!(response.status().is_success());
                response.bytes().await.unwrap().len()
            }
        };

        let mut phases = Vec::new();
        for (name, request_bytes) in [
            ("20 pings in one batch (baseline)", pings.len()),
            ("REST value-history from 1972", rest.len()),
            ("one MCP get_value_history from 1972", single.len()),
            ("batch of 20 get_value_history from 1972", longs.len()),
            ("three such batches at once", 3 * longs.len()),
        ] {
            let mut times = Vec::new();
            let mut response_bytes = 0;
            let before = rss_kib();
            reset_peak();
            for _ in 0..runs {
                let started = Instant::now();
                response_bytes = match name {
                    n if n.starts_with("20 pings") => post(pings.clone(), "2025-03-26").await,
                    n if n.starts_with("REST") => client
                        .get(&rest)
                        .send()
                        .await
                        .unwrap()
                        .bytes()
                        .await
                        .unwrap()
                        .len(),
                    n if n.starts_with("one MCP") => post(single.clone(), "2025-06-18").await,
                    n if n.starts_with("batch") => post(longs.clone(), "2025-03-26").await,
                    _ => {
                        let (a, b, c) = tokio::join!(
                            post(longs.clone(), "2025-03-26"),
                            post(longs.clone(), "2025-03-26"),
                            post(longs.clone(), "2025-03-26"),
                        );
                        a + b + c
                    }
                };
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            phases.push(Phase {
                name,
                request_bytes,
                response_bytes,
                median_ms: median(times),
                peak_above_kib: peak_rss_kib().saturating_sub(before),
            });
        }
        let _ = stop.send(());
        let _ = server.await;

        println!(
            "wallet: {} mints and SOL held since 2020-03-16; 2,452 daily points of {} holdings",
            mints,
            mints + 1
        );
        println!(
            "{:<42} {:>10} {:>12} {:>10} {:>14}",
            "phase", "request B", "response B", "median ms", "peak RSS +MiB"
        );
        for p in &phases {
            println!(
                "{:<42} {:>10} {:>12} {:>10.0} {:>14.1}",
                p.name,
                p.request_bytes,
                p.response_bytes,
                p.median_ms,
                p.peak_above_kib as f64 / 1024.0
            );
        }
        println!("process peak RSS at the end: {} MiB", peak_rss_kib() / 1024);
    });
}
