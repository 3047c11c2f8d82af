//! A scan of a large synthetic history, for RPC cost and memory.
//!
//! `cargo bench -p server --bench scan` runs, for each history size
//! (`SCAN_SIZES`, default `10000,100000`), two child processes of this same
//! binary: a JSON-RPC stand-in that makes the history up on the fly (the
//! recorded mainnet transactions, round-robin, each under its own
//! signature), and the scanner (the real `jobs::scan::run` against a fresh
//! SQLite database). The scanner's peak RSS (`VmHWM`) is read from its own
//! `/proc/self/status`, so the stand-in's memory is not counted. It prints
//! RPC calls and credits per 1,000 transactions against the floor (one
//! `getTransaction` per transaction plus one signature page per 1,000),
//! and the peak memory per size, which must not grow with the history.
//! The wallet also holds `STAKE_ACCOUNTS` (3) stake accounts delegated
//! `REWARD_EPOCHS` (500) epochs ago: the stand-in counts the
//! `getInflationReward` calls, against the floor of one per epoch for all
//! of the accounts together.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::peak_rss_kib;

use std::{
    io::{BufRead, BufReader, Write},
    net::SocketAddr,
    process::{Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use std::sync::atomic::{AtomicUsize, Ordering};

use axum::{Json, Router, extract::State, routing::post};
use serde_json::{Value, json};

const WALLET: &str = "71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6";

fn templates() -> Vec<Value> {
    let dir = support::recorded::staketaxcsv().join("fetch_tx");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let mut v: Value =
                serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap();
            // Logs are not read by the decoder; leave them out of the wire.
            v["result"]["meta"]["logMessages"] = json!([]);
            v["result"].clone()
        })
        .collect()
}

struct History {
    size: usize,
    templates: Vec<Value>,
    inflation_reward_calls: AtomicUsize,
}

const STAKE_ACCOUNTS: u8 = 3;
const REWARD_EPOCHS: u64 = 500;
const CURRENT_EPOCH: u64 = 800;
const SLOTS_PER_EPOCH: u64 = 432_000;

fn stake_account(i: u8) -> String {
    bs58::encode([100 + i; 32]).into_string()
}

/// `StakeStateV2::Stake` of an account the wallet stakes and withdraws,
/// activated `REWARD_EPOCHS` before the last completed epoch.
fn stake_state() -> String {
    use base64::Engine;
    let wallet = bs58::decode(WALLET).into_vec().unwrap();
    let mut d = 2u32.to_le_bytes().to_vec();
    d.extend(2_282_880u64.to_le_bytes());
    d.extend(&wallet);
    d.extend(&wallet);
    d.extend([0u8; 48 + 32 + 8]);
    d.extend((CURRENT_EPOCH - REWARD_EPOCHS).to_le_bytes());
    d.resize(172, 0);
    base64::engine::general_purpose::STANDARD.encode(d)
}

fn signature(i: usize) -> String {
    format!("synthetic{i:09}")
}

fn one(h: &History, request: &Value) -> Value {
    let id = request["id"].clone();
    let params = &request["params"];
    let result = match request["method"].as_str() {
        Some("getSignaturesForAddress") if params[0] != WALLET => json!([]),
        Some("getSignaturesForAddress") => {
            // Newest first: index size-1 down to 0.
            let start = params[1]["before"]
                .as_str()
                .and_then(|b| b.strip_prefix("synthetic"))
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(h.size);
            let limit = params[1]["limit"].as_u64().unwrap_or(1000) as usize;
            let page: Vec<Value> = (0..start)
                .rev()
                .take(limit)
                .map(|i| json!({"signature": signature(i), "slot": i, "blockTime": 1_600_000_000 + i, "err": null, "memo": null}))
                .collect();
            json!(page)
        }
        Some("getTokenAccountsByOwner") => json!({"context": {"slot": 1}, "value": []}),
        Some("getProgramAccounts") => json!((0..STAKE_ACCOUNTS)
            .map(|i| json!({"pubkey": stake_account(i), "account": {"data": [stake_state(), "base64"],
                "executable": false, "lamports": 1_000_000_000u64, "owner": params[0], "rentEpoch": 0}}))
            .collect::<Vec<_>>()),
        Some("getEpochSchedule") => json!({"firstNormalEpoch": 0, "firstNormalSlot": 0,
            "leaderScheduleSlotOffset": SLOTS_PER_EPOCH, "slotsPerEpoch": SLOTS_PER_EPOCH, "warmup": false}),
        Some("getEpochInfo") => json!({"absoluteSlot": CURRENT_EPOCH * SLOTS_PER_EPOCH, "blockHeight": 1,
            "epoch": CURRENT_EPOCH, "slotIndex": 0, "slotsInEpoch": SLOTS_PER_EPOCH, "transactionCount": 1}),
        Some("getInflationReward") => {
            h.inflation_reward_calls.fetch_add(1, Ordering::SeqCst);
            let epoch = params[1]["epoch"].as_u64().unwrap();
            json!(params[0].as_array().unwrap().iter()
                .map(|_| json!({"epoch": epoch, "effectiveSlot": (epoch + 1) * SLOTS_PER_EPOCH,
                    "amount": 1_000_000, "postBalance": 2_000_000_000u64, "commission": 5}))
                .collect::<Vec<_>>())
        }
        Some("getBlockTime") => json!(1_600_000_000 + params[0].as_u64().unwrap() / 2),
        // Each stake account holds exactly the rewards paid above (this
        // made-up history has no deposit transaction), so each reconciles.
        Some("getMultipleAccounts") => json!({"context": {"slot": 1}, "value": params[0]
            .as_array()
            .unwrap()
            .iter()
            .map(|_| json!({"data": ["", "base64"], "executable": false,
                "lamports": REWARD_EPOCHS * 1_000_000, "owner": "Stake11111111111111111111111111111111111111",
                "rentEpoch": 0, "space": 200}))
            .collect::<Vec<_>>()}),
        Some("getTransaction") => {
            let i: usize = params[0]
                .as_str()
                .and_then(|s| s.strip_prefix("synthetic"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let mut tx = h.templates[i % h.templates.len()].clone();
            tx["transaction"]["signatures"][0] = json!(signature(i));
            tx["slot"] = json!(i);
            tx
        }
        _ => Value::Null,
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

async fn handle(State(h): State<Arc<History>>, Json(body): Json<Value>) -> Json<Value> {
    Json(match body {
        Value::Array(requests) => Value::Array(requests.iter().map(|r| one(&h, r)).collect()),
        request => one(&h, &request),
    })
}

/// Child: serve the synthetic history until stdin closes.
async fn standin(size: usize) {
    let history = Arc::new(History {
        size,
        templates: templates(),
        inflation_reward_calls: AtomicUsize::new(0),
    });
    let app = Router::new()
        .route("/", post(handle))
        .with_state(history.clone());
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    println!("http://{}/", listener.local_addr().unwrap());
    std::io::stdout().flush().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    })
    .await
    .unwrap();
    println!("{}", history.inflation_reward_calls.load(Ordering::SeqCst));
}

/// Child: scan the stand-in's history; print what it cost.
async fn scan(url: String) {
    use server::{
        config::Config,
        jobs::scan::{self, ScanContext, ScanSettings},
        solana::RpcClient,
        store::{QuoteRecord, Store},
    };
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.solana.rpc_url = url;
    let store = Store::open(
        &format!("sqlite://{}/scan.db", dir.path().display()),
        &config.database,
    )
    .await
    .unwrap();
    let rpc = RpcClient::new(config.solana.rpc_settings()).unwrap();
    store
        .insert_quote(&QuoteRecord {
            id: "q_bench".into(),
            address: WALLET.into(),
            scope: "full".into(),
            tier: "bench".into(),
            price_micros: 0,
            signatures: None,
            created_at: 0,
            expires_at: i64::MAX,
        })
        .await
        .unwrap();
    store
        .create_scan_job(&server::store::NewScanJob {
            id: "job_bench",
            address: WALLET,
            scope: "full",
            quote_id: "q_bench",
            stop_at: None,
            account_id: None,
            now: 0,
        })
        .await
        .unwrap();
    let job = store
        .claim_job("bench", 0, i64::MAX / 4)
        .await
        .unwrap()
        .unwrap();
    let settings = ScanSettings {
        lease_ms: i64::MAX / 4,
        page_size: 1000,
        fetch_batch: config.solana.batch_size,
        preview_signatures: 100,
    };
    let started = Instant::now();
    let ctx = ScanContext {
        store: &store,
        rpc: &rpc,
        settings: &settings,
        owner: "bench",
        now: &|| 0,
        should_stop: &|| false,
    };
    let outcome = scan::run(&ctx, &job).await.unwrap();
    let secs = started.elapsed().as_secs_f64();
    let job = store.job("job_bench").await.unwrap().unwrap();
    assert_eq!(outcome, scan::Outcome::Completed);
    println!(
        "{}",
        json!({
            "transactions": job.transactions_fetched,
            "legs": job.legs_written,
            "calls": job.rpc_calls,
            "credits": job.rpc_credits,
            "secs": secs,
            "peak_rss_kib": peak_rss_kib(),
            "batch": config.solana.batch_size,
        })
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    match args.get(1).map(String::as_str) {
        Some("standin") => return runtime.block_on(standin(args[2].parse().unwrap())),
        Some("scan") => return runtime.block_on(scan(args[2].clone())),
        _ => {}
    }
    let sizes: Vec<usize> = std::env::var("SCAN_SIZES")
        .unwrap_or_else(|_| "10000,100000".to_owned())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let me = std::env::current_exe().unwrap();
    println!(
        "| transactions | legs | time (s) | tx/s | calls | credits | calls / 1000 tx | credits / 1000 tx | credit floor / 1000 tx | peak RSS (MiB) | reward epochs | getInflationReward calls |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for size in sizes {
        let mut standin = Command::new(&me)
            .args(["standin", &size.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut url = String::new();
        let mut standin_out = BufReader::new(standin.stdout.take().unwrap());
        standin_out.read_line(&mut url).unwrap();
        let output = Command::new(&me)
            .args(["scan", url.trim()])
            .output()
            .unwrap();
        drop(standin.stdin.take());
        let mut reward_calls = String::new();
        standin_out.read_line(&mut reward_calls).unwrap();
        let _ = standin.wait_timeout_or_kill(Duration::from_secs(5));
        let r = support::child_report(&output);
        let tx = r["transactions"].as_f64().unwrap();
        let per_k = |v: f64| v / tx * 1000.0;
        // Floor: one getTransaction per transaction, one page per 1,000
        // signatures, plus the final short page; the rewards cost extra.
        let floor = size as f64 + (size / 1000) as f64 + 1.0;
        // Rewards: one getInflationReward per epoch from the activation
        // epoch through the last completed one, all accounts at once.
        println!(
            "| {} | {} | {:.1} | {:.0} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} |",
            r["transactions"],
            r["legs"],
            r["secs"].as_f64().unwrap(),
            tx / r["secs"].as_f64().unwrap(),
            r["calls"],
            r["credits"],
            per_k(r["calls"].as_f64().unwrap()),
            per_k(r["credits"].as_f64().unwrap()),
            per_k(floor),
            r["peak_rss_kib"].as_f64().unwrap() / 1024.0,
            REWARD_EPOCHS,
            reward_calls.trim(),
        );
    }
}

trait WaitOrKill {
    fn wait_timeout_or_kill(&mut self, limit: Duration) -> std::io::Result<()>;
}

impl WaitOrKill for std::process::Child {
    fn wait_timeout_or_kill(&mut self, limit: Duration) -> std::io::Result<()> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill()?;
        self.wait().map(|_| ())
    }
}
