//! What the benchmarks share: the recorded fixtures' location, reading a
//! process's peak RSS, the one-line JSON report a measuring child prints,
//! a synthetic scanned wallet with its SOL price series ([`seed_wallet`],
//! for value_history and read_path), and the completed scan under it
//! ([`seed::completed_scan`], which bounds uses for a wallet of its own).
//! (A directory module, so Cargo does not take it for a bench target.)

use serde_json::Value;

#[allow(dead_code)] // only the benches that seed a scanned wallet
pub mod seed;

#[path = "../../tests/support/recorded.rs"]
#[allow(dead_code)] // basis and value_history make their own data
pub mod recorded;

/// A whole-number setting from the environment, or `default`.
#[allow(dead_code)]
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The configuration of a server a benchmark runs in-process: a SQLite
/// file in `dir`, a free loopback port, no in-process workers, and the
/// price sources at a closed port so nothing leaves the machine.
#[allow(dead_code)]
pub fn offline_config(dir: &std::path::Path) -> server::config::Config {
    let mut config = server::config::Config {
        database_url: format!("sqlite://{}/bench.db", dir.display()),
        listen: "127.0.0.1:0".parse().unwrap(),
        ..server::config::Config::default()
    };
    config.worker.in_process = false;
    config.sample.enabled = false;
    for url in [
        &mut config.prices.coinbase_url,
        &mut config.prices.coinbase_exchange_url,
        &mut config.prices.jupiter_url,
    ] {
        *url = "http://127.0.0.1:9".to_owned();
    }
    config
}

/// This process's peak resident set (`VmHWM` in `/proc/self/status`), KiB.
#[allow(dead_code)] // decode measures time only
pub fn peak_rss_kib() -> u64 {
    status_kib("VmHWM")
}

/// This process's resident set now (`VmRSS`), KiB.
#[allow(dead_code)]
pub fn rss_kib() -> u64 {
    status_kib("VmRSS")
}

/// One `kB` field of `/proc/self/status`; 0 where it cannot be read.
#[allow(dead_code)]
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A child's report: it must have succeeded, and its stdout holds one
/// line of JSON (other lines, from the code it ran, are skipped).
#[allow(dead_code)] // decode and value_history measure in-process
pub fn child_report(output: &std::process::Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(
        output
            .stdout
            .split(|b| *b == b'\n')
            .find(|l| l.starts_with(b"{"))
            .expect("a JSON report line"),
    )
    .expect("the report is JSON")
}

/// The synthetic wallet [`seed_wallet`] writes.
#[allow(dead_code)]
pub const WALLET: &str = "71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6";
#[allow(dead_code)]
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
/// Two years: the span [`seed_wallet`] spreads the legs over.
#[allow(dead_code)]
pub const SPAN: i64 = 730 * 86_400;

#[allow(dead_code)]
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

#[allow(dead_code)]
fn close(t: i64) -> String {
    let n = (t / 3600).rem_euclid(400);
    format!("{}.{:02}", 100 + n / 4, (n % 4) * 25)
}

/// Seed `store` with a completed scan of [`WALLET`]: `legs_wanted / 2`
/// transactions spread evenly over the [`SPAN`] before `now` (unix
/// seconds, a day boundary), each a transfer (SOL half the time, USDC a
/// fifth, nine made-up unpriced mints the rest; two in three incoming)
/// plus its SOL fee; and the stored SOL series for the range (hourly and
/// daily closes up to `now`, their ranges marked fetched, so no source is
/// asked).
#[allow(dead_code)]
pub async fn seed_wallet(store: &server::store::Store, legs_wanted: usize, now: i64) {
    seed_wallet_legs(store, legs_wanted, now).await;
    seed_sol_series(store, now).await;
}

/// [`seed_wallet`] without the SOL series: the legs only, so valuing them
/// needs the price source.
#[allow(dead_code)]
pub async fn seed_wallet_legs(store: &server::store::Store, legs_wanted: usize, now: i64) {
    use server::ledger::{Leg, OperationType};
    // Two legs per transaction: a movement and its fee.
    let transactions = legs_wanted / 2;
    let step = SPAN / i64::try_from(transactions).unwrap();
    let start = now - SPAN;
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
            position: None,
            venue: None,
            router: None,
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
    seed::completed_scan(store, WALLET, now * 1000, txs).await;
}

/// The SOL series [`seed_wallet`] stores: hourly and daily closes over the
/// [`SPAN`] before `now`, their ranges marked fetched.
#[allow(dead_code)]
pub async fn seed_sol_series(store: &server::store::Store, now: i64) {
    let start = now - SPAN;
    for (granularity, step) in [(3600i64, 3600i64), (86_400, 86_400)] {
        let first = (start - 86_400).div_euclid(86_400) * 86_400;
        let points: Vec<(i64, String)> = (first..now)
            .step_by(usize::try_from(step).unwrap())
            .map(|b| (b, close(b)))
            .collect();
        store
            .store_price_range("sol", granularity, (first, now), &points, "coinbase")
            .await
            .unwrap();
    }
}
