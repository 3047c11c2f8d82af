//! `get_report` in every format for one wallet with 100,000 legs: time and
//! peak memory.
//!
//! `cargo bench -p server --bench reports` seeds a fresh SQLite database
//! once (`REPORT_LEGS` legs, default 100000: the synthetic wallet of
//! `support::seed_wallet`, SOL, USDC and nine unpriced mints over two
//! years, with the stored SOL series so no source is asked), then runs one
//! child process of this same binary per format (`REPORT_FORMATS`, default
//! all seven). Each child builds the real server state over that database
//! (`Application::build`, price URLs at a closed port) and renders the
//! report with the domain function `reports::render` (store read of every
//! leg, valuation, the replay, the format) `REPORT_RUNS` times (default 3),
//! including turning it into the bytes served. The first render of a
//! child is cold (nothing of the wallet is in memory yet: the legs are
//! read from SQLite); later ones find the legs kept by
//! `analytics::scanned_legs` for that ledger version, as a second report
//! of an unchanged wallet does. It prints the cold time, the median of the
//! warm ones, the file size and rows, its resident set before the first
//! render and its peak (`VmHWM`), so each format's peak is its own. With
//! `REPORT_SAVE_DIR` set, each child also writes its file there (to look
//! at the PDF, say).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::{WALLET, child_report, env_usize, peak_rss_kib, rss_kib, seed_wallet};

use std::{process::Command, sync::Arc, time::Instant};

use serde_json::json;
use server::{
    clock::ManualClock,
    reports::{self, Format, Spec},
    solana::WalletAddress,
    startup::Application,
};

/// 2026-09-01T00:00:00Z.
const NOW: i64 = 1_788_220_800;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if let (Ok(format), Ok(dir)) = (
        std::env::var("REPORT_BENCH_FORMAT"),
        std::env::var("REPORT_BENCH_DIR"),
    ) {
        runtime.block_on(child(&format, &dir));
        return;
    }
    let legs = env_usize("REPORT_LEGS", 100_000);
    let dir = tempfile::tempdir().unwrap();
    runtime.block_on(async {
        let app = build(dir.path()).await;
        let seeding = Instant::now();
        seed_wallet(app.state().store(), legs, NOW).await;
        eprintln!(
            "seeded {} legs and the SOL series in {:.1} s",
            app.state().store().count_legs(WALLET).await.unwrap(),
            seeding.elapsed().as_secs_f64()
        );
        app.state().store().close().await;
    });
    let formats = std::env::var("REPORT_FORMATS")
        .unwrap_or_else(|_| Format::ALL.map(Format::as_str).join(","));
    println!(
        "| format | legs | rows | file (MiB) | cold (s) | warm median (s) | RSS before (MiB) | peak RSS (MiB) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let me = std::env::current_exe().unwrap();
    for format in formats.split(',') {
        let output = Command::new(&me)
            .env("REPORT_BENCH_FORMAT", format)
            .env("REPORT_BENCH_DIR", dir.path())
            .output()
            .unwrap();
        let r = child_report(&output);
        println!(
            "| {} | {} | {} | {:.2} | {:.3} | {:.3} | {:.0} | {:.0} |",
            r["format"].as_str().unwrap(),
            legs,
            r["rows"],
            r["bytes"].as_f64().unwrap() / 1_048_576.0,
            r["cold_s"].as_f64().unwrap(),
            r["warm_median_s"].as_f64().unwrap_or(f64::NAN),
            r["rss_before_kib"].as_f64().unwrap() / 1024.0,
            r["peak_rss_kib"].as_f64().unwrap() / 1024.0,
        );
    }
}

async fn build(dir: &std::path::Path) -> Application {
    let config = support::offline_config(dir);
    Application::build(config, Arc::new(ManualClock::new(NOW * 1000 + 1_800_000)))
        .await
        .unwrap()
}

async fn child(format: &str, dir: &str) {
    let format = Format::parse(format).expect("a report format");
    let runs = env_usize("REPORT_RUNS", 3);
    let app = build(std::path::Path::new(dir)).await;
    let state = app.state().clone();
    let spec = Spec::new(
        vec![WalletAddress::parse(WALLET).unwrap()],
        format,
        None,
        None,
        None,
        None,
    )
    .unwrap();
    let before = rss_kib();
    let mut times = Vec::new();
    let (mut bytes, mut rows) = (0, 0);
    for _ in 0..runs {
        let started = Instant::now();
        let file = reports::render(&state.reads(), &spec).await.unwrap();
        rows = file.rows;
        let name = file.filename.clone();
        let body = file.into_bytes().unwrap();
        times.push(started.elapsed().as_secs_f64());
        bytes = body.len();
        if let Ok(save) = std::env::var("REPORT_SAVE_DIR") {
            std::fs::write(std::path::Path::new(&save).join(name), &body).unwrap();
        }
    }
    let cold = times[0];
    let mut warm = times[1..].to_vec();
    warm.sort_by(f64::total_cmp);
    println!(
        "{}",
        json!({
            "format": format.as_str(),
            "rows": rows,
            "bytes": bytes,
            "cold_s": cold,
            "warm_median_s": warm.get(warm.len() / 2),
            "rss_before_kib": before,
            "peak_rss_kib": peak_rss_kib(),
        })
    );
    state.store().close().await;
}
