//! Decode-and-legs throughput over the recorded mainnet transactions, on
//! one core: each iteration parses the JSON text of every fixture, reads it
//! into a `TxView` and computes the fee payer's legs, as a scan does per
//! fetched transaction. Run: `cargo bench -p server --bench decode`
//! (`BENCH_SECS`, default 5).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use server::ledger::{self, TxView};

fn main() {
    let dir = support::recorded::staketaxcsv().join("fetch_tx");
    let texts: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| std::fs::read_to_string(e.expect("entry").path()).expect("read"))
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let secs: u64 = std::env::var("BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);

    let run = |only_legs: bool, limit: Duration| {
        let parsed: Vec<serde_json::Value> = texts
            .iter()
            .map(|t| serde_json::from_str(t).expect("json"))
            .collect();
        let views: Vec<TxView> = parsed
            .iter()
            .map(|v| TxView::parse(v).expect("tx"))
            .collect();
        let start = Instant::now();
        let mut txs = 0u64;
        let mut legs = 0usize;
        while start.elapsed() < limit {
            if only_legs {
                for view in &views {
                    legs += ledger::legs(view, view.fee_payer().expect("payer")).len();
                    txs += 1;
                }
            } else {
                for text in &texts {
                    let value: serde_json::Value = serde_json::from_str(text).expect("json");
                    let view = TxView::parse(&value).expect("tx");
                    legs += ledger::legs(&view, view.fee_payer().expect("payer")).len();
                    txs += 1;
                }
            }
        }
        let elapsed = start.elapsed().as_secs_f64();
        (txs as f64 / elapsed, legs)
    };
    // Warm-up, then measure.
    let _ = run(false, Duration::from_millis(500));
    let (full, _) = run(false, Duration::from_secs(secs));
    let (legs_only, _) = run(true, Duration::from_secs(secs));
    println!(
        "fixtures: {} transactions, {:.1} KiB of JSON on average",
        texts.len(),
        bytes as f64 / texts.len() as f64 / 1024.0
    );
    println!("| stage | transactions/s (one core) |");
    println!("|---|---:|");
    println!("| JSON text -> TxView -> legs | {full:.0} |");
    println!("| TxView -> legs (decoder alone) | {legs_only:.0} |");
}
