//! The share page under load and the share card's drawing time.
//!
//! `cargo bench -p server --bench share` seeds a fresh SQLite database with
//! the synthetic scanned wallet of `support::seed_wallet` (`SHARE_LEGS`
//! legs, default 5000, over two years), mints a share link for it, starts
//! the server in-process (payments off, price sources at a closed port, so
//! nothing leaves the machine) and then:
//!
//! - `/s/{token}`: `BENCH_READERS` (default 20) concurrent readers, each
//!   fetching the page `BENCH_PAGES` times (default 10), after one warm-up
//!   request; prints p50 / p99 / max of the request latency;
//! - `/s/{token}/card.png`: `BENCH_CARDS` sequential requests (default 20),
//!   p50 / p99, and the drawing alone (`share::card::png` on a built
//!   report: SVG + resvg + PNG encoding), p50.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use server::{
    clock::SystemClock,
    share::{ChartRange, Denomination, ShareToken, report},
    startup::Application,
    store::ShareLinkRecord,
};
use support::{WALLET, env_usize, offline_config, seed_wallet};

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{name}: n={} p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        samples.len(),
        percentile(&samples, 0.50),
        percentile(&samples, 0.99),
        samples.last().unwrap().as_secs_f64() * 1000.0
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let legs = env_usize("SHARE_LEGS", 5000);
    let readers = env_usize("BENCH_READERS", 20);
    let pages = env_usize("BENCH_PAGES", 10);
    let cards = env_usize("BENCH_CARDS", 20);
    let dir = tempfile::tempdir().unwrap();
    let config = offline_config(dir.path());
    let now_ms = chrono::Utc::now().timestamp_millis();
    {
        let store = server::store::Store::open(&config.database_url, &config.database)
            .await
            .unwrap();
        let t = Instant::now();
        seed_wallet(&store, legs, now_ms / 1000).await;
        println!("seeded {legs} legs in {:.1} s", t.elapsed().as_secs_f64());
    }
    let app = Application::build(config, std::sync::Arc::new(SystemClock))
        .await
        .unwrap();
    let base = format!("http://{}", app.local_addr().unwrap());
    let state = app.state().clone();
    let store = state.store().clone();
    let account = server::accounts::create_account(&store, now_ms, "bench")
        .await
        .unwrap();
    let token = ShareToken::generate();
    let inserted = store
        .insert_share_link(
            &ShareLinkRecord {
                id: "snap_bench".to_owned(),
                token_hash: token.hash(),
                hint: "bench".to_owned(),
                account_id: account.as_str().to_owned(),
                wallet: WALLET.to_owned(),
                chart_range: "90d".to_owned(),
                denominate: "usd".to_owned(),
                created_at: now_ms,
                expires_at: now_ms + 86_400_000,
                revoked_at: None,
            },
            20,
            now_ms,
        )
        .await
        .unwrap();
    assert!(inserted);
    let server = tokio::spawn(async move {
        app.run_until(std::future::pending::<()>()).await.unwrap();
    });
    let client = reqwest::Client::new();
    let page_url = format!("{base}/s/{}", token.as_str());
    let warm = client.get(&page_url).send().await.unwrap();
    assert_eq!(warm.status(), 200);
    let bytes = warm.bytes().await.unwrap().len();
    println!("page: {bytes} bytes");

    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..readers {
        let (client, url) = (client.clone(), page_url.clone());
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::with_capacity(pages);
            for _ in 0..pages {
                let t = Instant::now();
                let r = client.get(&url).send().await.unwrap();
                assert_eq!(r.status(), 200);
                r.bytes().await.unwrap();
                times.push(t.elapsed());
            }
            times
        }));
    }
    let mut samples = Vec::new();
    for task in tasks {
        samples.extend(task.await.unwrap());
    }
    let wall = started.elapsed().as_secs_f64();
    println!(
        "{} pages with {readers} concurrent readers in {wall:.1} s ({:.1} pages/s)",
        samples.len(),
        samples.len() as f64 / wall
    );
    summary(
        &format!("share page, {readers} concurrent readers, {legs} legs"),
        samples,
    );

    let card_url = format!("{base}/s/{}/card.png", token.as_str());
    let mut samples = Vec::new();
    for _ in 0..cards {
        let t = Instant::now();
        let r = client.get(&card_url).send().await.unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
        samples.push(t.elapsed());
    }
    summary("card.png request (reads + drawing)", samples);

    let caches = state.services().caches();
    let built = report::build(
        &state.reads(),
        (&caches.pages, &caches.positions),
        &server::accounts::Principal::Link(server::accounts::LinkReader {
            wallet: server::solana::WalletAddress::parse(WALLET).unwrap(),
        }),
        report::ReportQuery {
            wallet: server::solana::WalletAddress::parse(WALLET).unwrap(),
            range: ChartRange::Days90,
            denominate: Denomination::Usd,
            cursor: None,
        },
    )
    .await
    .unwrap();
    let mut samples = Vec::new();
    for _ in 0..cards {
        let t = Instant::now();
        let png = server::share::card::png(&built).unwrap();
        assert!(png.len() > 1000);
        samples.push(t.elapsed());
    }
    summary("card drawing alone (SVG + resvg + PNG)", samples);
    server.abort();
}
