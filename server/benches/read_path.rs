//! The paid read path under load: `GET /v1/wallets/{address}/ledger` and
//! `/positions` of a 40,000-leg wallet, against `/healthz` in the same run.
//!
//! `cargo bench -p server --bench read_path` seeds a fresh SQLite database
//! through the store API with the synthetic scanned wallet of
//! `support::seed_wallet` (`READ_LEGS` legs, default 40000, over the two
//! years before yesterday, and its SOL series), then starts the release
//! `ledger serve` binary on it (127.0.0.1, payments off, the anonymous rate
//! limit raised so it never refuses, price sources at a closed port so
//! nothing leaves the machine) and drives it with `wrk -t2 -c50 --latency`
//! (`BENCH_CLIENTS`, `BENCH_SECS` default 10, `BENCH_WARMUP_SECS` default
//! 2) on: `/healthz`, the newest ledger page (`?limit=100`), a page deep
//! in the history (through a real `next_cursor`), the newest page again
//! asking for gzip (`Accept-Encoding: gzip`, as HTTP client libraries
//! send it), and the positions plain and gzip. It
//! does `BENCH_ROUNDS` rounds (default 3) of all six and prints each
//! measurement, then the medians with their ratios to `/healthz`. The
//! server's CPU time per request comes from `/proc/PID/stat` around each
//! measurement, which the other load on a shared machine does not inflate
//! the way it does latency. Needs `wrk` on the PATH; loopback only,
//! bounded in time.
//!
//! `READ_PRICES=down` measures a price outage instead: the SOL series is
//! not stored, so valuing a page needs the source, which is down (the
//! closed port): its breaker opens and the reads go on during its
//! cool-downs, with their legs unpriced. The run also counts the server
//! log's `WARN` lines (one per cool-down expected, not one per request).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::{
    net::TcpListener,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use server::config::DatabaseConfig;
use support::{WALLET, env_usize, seed_wallet, seed_wallet_legs};

/// What wrk measured, and the server's CPU over it.
#[derive(Clone, Debug)]
struct Measured {
    rps: f64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_us_per_request: f64,
}

/// A wrk duration (`812.00us`, `1.23ms`, `2.00s`) in milliseconds.
fn millis(text: &str) -> f64 {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("us") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1000.0)
    } else {
        panic!("a wrk duration: {text}")
    };
    number.parse::<f64>().unwrap() * scale
}

/// The server's user + system CPU time so far, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the parenthesised command name; utime and stime are
    // the 14th and 15th fields overall.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn ticks_per_second() -> f64 {
    let out = Command::new("getconf").arg("CLK_TCK").output();
    out.ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// wrk on `url`; with `gzip`, asking for a gzip answer as HTTP clients
/// (reqwest, httpx, fetch) do.
fn wrk(url: &str, gzip: bool, clients: usize, secs: usize) -> String {
    let mut args = vec![
        "-t2".to_owned(),
        format!("-c{clients}"),
        format!("-d{secs}s"),
        "--timeout".to_owned(),
        "10s".to_owned(),
        "--latency".to_owned(),
    ];
    if gzip {
        args.extend(["-H".to_owned(), "Accept-Encoding: gzip".to_owned()]);
    }
    args.push(url.to_owned());
    let out = Command::new("wrk")
        .args(&args)
        .output()
        .expect("wrk on the PATH (apt-get install -y wrk)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn measure(url: &str, gzip: bool, pid: u32, clients: usize, secs: usize) -> Measured {
    let before = cpu_ticks(pid);
    let report = wrk(url, gzip, clients, secs);
    let cpu_secs = (cpu_ticks(pid) - before) as f64 / ticks_per_second();
    let value = |prefix: &str| {
        report
            .lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("{prefix} in wrk's report:\n{report}"))
            .trim()
            .to_owned()
    };
    for bad in ["Non-2xx or 3xx responses:", "Socket errors:"] {
        assert!(
            !report.contains(bad),
            "{url}: every response must succeed:\n{report}"
        );
    }
    let requests: f64 = report
        .lines()
        .find(|l| l.contains(" requests in "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a request count in wrk's report:\n{report}"));
    Measured {
        rps: value("Requests/sec:").parse().unwrap(),
        p50_ms: millis(&value("50%")),
        p99_ms: millis(&value("99%")),
        cpu_us_per_request: cpu_secs * 1e6 / requests.max(1.0),
    }
}

/// A free loopback port (the kernel's pick, released for the server).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let legs = env_usize("READ_LEGS", 40_000);
    let clients = env_usize("BENCH_CLIENTS", 50);
    let secs = env_usize("BENCH_SECS", 10);
    let warmup = env_usize("BENCH_WARMUP_SECS", 2);
    let rounds = env_usize("BENCH_ROUNDS", 3).max(1);
    let prices_down = match std::env::var("READ_PRICES").as_deref() {
        Ok("down") => true,
        Ok("stored") | Err(_) => false,
        Ok(other) => panic!("READ_PRICES is stored (the default) or down, not {other:?}"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let database_url = format!("sqlite://{}/read_path.db", dir.path().display());
    // The history ends yesterday at midnight, so every page's legs lie in
    // closed buckets of the stored series whatever the wall clock says.
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let end = wall.div_euclid(86_400) * 86_400 - 86_400;
    runtime.block_on(async {
        let store = server::store::Store::open(&database_url, &DatabaseConfig::default())
            .await
            .unwrap();
        let seeding = Instant::now();
        if prices_down {
            seed_wallet_legs(&store, legs, end).await;
        } else {
            seed_wallet(&store, legs, end).await;
        }
        eprintln!(
            "seeded {} legs{} in {:.1} s",
            store.count_legs(WALLET).await.unwrap(),
            if prices_down {
                " (no SOL series: the price source is down)"
            } else {
                " and the SOL series"
            },
            seeding.elapsed().as_secs_f64()
        );
        store.close().await;
    });

    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_ledger"));
    for (key, _) in std::env::vars() {
        if key.starts_with("LEDGER_") {
            command.env_remove(key);
        }
    }
    let child = command
        .arg("serve")
        .env("DATABASE_URL", &database_url)
        .env("LEDGER_LISTEN", format!("127.0.0.1:{port}"))
        .env("LEDGER_PAYMENTS", "off")
        .env("LEDGER_RATE_LIMIT__ANON_RPS", "1000000000")
        .env("LEDGER_RATE_LIMIT__ANON_BURST", "1000000000")
        .env("LEDGER_PRICES__COINBASE_URL", "http://127.0.0.1:9")
        .env("LEDGER_PRICES__COINBASE_EXCHANGE_URL", "http://127.0.0.1:9")
        .env("LEDGER_PRICES__JUPITER_URL", "http://127.0.0.1:9")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let server = Server(child);
    let pid = server.0.id();

    let ledger = format!("{base}/v1/wallets/{WALLET}/ledger?limit=100");
    let positions = format!("{base}/v1/wallets/{WALLET}/positions");
    // Check each route answers what it should, and take a cursor from
    // the middle of the history.
    let deep = runtime.block_on(async {
        let http = reqwest::Client::new();
        let started = Instant::now();
        while http.get(format!("{base}/healthz")).send().await.is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the server did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let get = |url: String| {
            let http = http.clone();
            async move {
                let response = http.get(&url).send().await.unwrap();
                assert!(
                    response.status().is_success(),
                    "{url}: {}",
                    response.status()
                );
                let body = response.bytes().await.unwrap();
                let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
                (value, body.len())
            }
        };
        let (mut page, page_bytes) = get(ledger.clone()).await;
        let entries = page["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 100);
        assert_eq!(
            entries
                .iter()
                .any(|e| e["mint"] == "sol" && e["priced"] == true),
            !prices_down,
            "SOL legs are priced unless the source is down"
        );
        for _ in 0..(legs / 200) {
            let cursor = page["next_cursor"].as_str().unwrap().to_owned();
            page = get(format!("{ledger}&cursor={cursor}")).await.0;
        }
        let (body, positions_bytes) = get(positions.clone()).await;
        assert!(!body["positions"].as_array().unwrap().is_empty());
        let lots: usize = body["positions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["lots"].as_array().map_or(0, Vec::len))
            .sum();
        println!(
            "responses: a ledger page {page_bytes} bytes; positions {positions_bytes} bytes ({lots} open lots)"
        );
        format!("{ledger}&cursor={}", page["next_cursor"].as_str().unwrap())
    });

    let routes = [
        ("/healthz", format!("{base}/healthz"), false),
        ("ledger, newest page", ledger.clone(), false),
        ("ledger, cursor page", deep, false),
        ("ledger, newest page, gzip", ledger, true),
        ("positions", positions.clone(), false),
        ("positions, gzip", positions, true),
    ];
    for (_, url, gzip) in &routes {
        let _ = wrk(url, *gzip, clients, warmup);
    }
    eprintln!("| round | route | req/s | p50 (ms) | p99 (ms) | server CPU/request (µs) |");
    let mut all: Vec<Vec<Measured>> = vec![Vec::new(); routes.len()];
    for round in 1..=rounds {
        for (i, (name, url, gzip)) in routes.iter().enumerate() {
            let m = measure(url, *gzip, pid, clients, secs);
            eprintln!(
                "| {round} | {name} | {:.0} | {:.2} | {:.2} | {:.0} |",
                m.rps, m.p50_ms, m.p99_ms, m.cpu_us_per_request
            );
            all[i].push(m);
        }
    }
    let medians: Vec<Measured> = all
        .iter()
        .map(|ms| Measured {
            rps: median(ms.iter().map(|m| m.rps).collect()),
            p50_ms: median(ms.iter().map(|m| m.p50_ms).collect()),
            p99_ms: median(ms.iter().map(|m| m.p99_ms).collect()),
            cpu_us_per_request: median(ms.iter().map(|m| m.cpu_us_per_request).collect()),
        })
        .collect();
    let health = medians[0].clone();
    println!(
        "medians of {rounds} round(s), {legs} legs, {clients} clients, {secs} s each (wrk -t2)"
    );
    println!(
        "| route | req/s | p50 (ms) | p99 (ms) | server CPU/request (µs) | req/s ÷ healthz | p99 ÷ healthz |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for ((name, _, _), m) in routes.iter().zip(&medians) {
        println!(
            "| {name} | {:.0} | {:.2} | {:.2} | {:.0} | {:.2} | {:.2} |",
            m.rps,
            m.p50_ms,
            m.p99_ms,
            m.cpu_us_per_request,
            m.rps / health.rps,
            m.p99_ms / health.p99_ms,
        );
    }
    drop(server);
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    let warnings = log.lines().filter(|l| l.contains(" WARN ")).count();
    let requests: f64 = all
        .iter()
        .flatten()
        .map(|m| m.rps * secs as f64)
        .sum::<f64>();
    println!(
        "prices {}; server log: {warnings} WARN lines over about {requests:.0} measured requests",
        if prices_down { "down" } else { "stored" }
    );
}
