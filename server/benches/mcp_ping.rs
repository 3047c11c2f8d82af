//! Benchmark: MCP `tools/call ping` on the real Ledger server versus a bare
//! axum handler that returns a fixed JSON-RPC result (same HTTP stack, no MCP
//! work), both in this process on loopback, with 1 and 32 concurrent
//! keep-alive clients.
//!
//! Run: `cargo bench -p server --bench mcp_ping`
//! Env: `BENCH_SECS` (measured seconds per cell, default 5),
//!      `BENCH_WARMUP_SECS` (warm-up seconds per cell, default 1).
//!
//! Every response must be HTTP 200 and contain `"isError":false`; any failure
//! makes the run exit non-zero (after printing the table).

// This is a benchmark binary, not service code: panicking on a broken setup
// is acceptable, though the code below mostly propagates errors with `?`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{
    net::SocketAddr,
    process::ExitCode,
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{Router, body::Bytes, http::header, routing::post};
use server::{
    clock::SystemClock,
    config::{Config, RateLimitConfig, WorkerConfig},
    startup::Application,
};
use tokio::{net::TcpListener, sync::oneshot};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const REQUEST_BODY: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}}"#;

/// What the baseline answers: a small fixed `tools/call` result.
const BASELINE_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"ok\":true,\"principal\":\"anonymous\"}"}],"isError":false}}"#;

const CONCURRENCIES: [usize; 2] = [1, 32];
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Ledger,
    Baseline,
}

impl Target {
    fn label(self) -> &'static str {
        match self {
            Target::Ledger => "ledger ping",
            Target::Baseline => "bare axum",
        }
    }
}

struct Cell {
    target: Target,
    concurrency: usize,
    requests: usize,
    failures: usize,
    rps: f64,
    p50: Duration,
    p99: Duration,
}

/// Per-task outcome of one measured run.
struct TaskResult {
    latencies: Vec<Duration>,
    failures: usize,
    first_failure: Option<String>,
    finished: Instant,
}

fn env_secs(name: &str, default: f64) -> Result<Duration, BoxError> {
    match std::env::var(name) {
        Ok(v) => {
            let secs: f64 = v.trim().parse().map_err(|e| format!("{name}={v:?}: {e}"))?;
            if !(0.0..3600.0).contains(&secs) {
                return Err(format!("{name}={v:?}: must be between 0 and 3600").into());
            }
            Ok(Duration::from_secs_f64(secs))
        }
        Err(_) => Ok(Duration::from_secs_f64(default)),
    }
}

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp_ping: cannot build the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("mcp_ping: some requests failed; see the table");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("mcp_ping: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Returns whether every request succeeded.
async fn run() -> Result<bool, BoxError> {
    let measure = env_secs("BENCH_SECS", 5.0)?;
    let warmup = env_secs("BENCH_WARMUP_SECS", 1.0)?;
    if measure.is_zero() {
        return Err("BENCH_SECS must be positive".into());
    }

    // The real server, on a fresh SQLite file.
    let dir = tempfile::tempdir()?;
    let defaults = Config::default();
    let config = Config {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        database_url: format!("sqlite://{}/bench.db", dir.path().display()),
        shutdown_grace_secs: 5,
        // Anonymous callers are otherwise limited to a few requests a second.
        rate_limit: RateLimitConfig {
            anon_rps: 1e9,
            anon_burst: Some(1_000_000_000),
            ..defaults.rate_limit.clone()
        },
        worker: WorkerConfig {
            in_process: false,
            ..defaults.worker.clone()
        },
        ..defaults
    };
    let app = Application::build(config, Arc::new(SystemClock)).await?;
    let ledger_addr = app.local_addr().ok_or("ledger: no local address")?;
    let (ledger_stop, ledger_stopped) = oneshot::channel::<()>();
    let ledger = tokio::spawn(app.run_until(async move {
        let _ = ledger_stopped.await;
    }));

    // The baseline: bare axum, same HTTP/1 stack, fixed answer.
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let baseline_addr = listener.local_addr()?;
    let router = Router::new().route(
        "/mcp",
        post(|_body: Bytes| async {
            ([(header::CONTENT_TYPE, "application/json")], BASELINE_BODY)
        }),
    );
    let (baseline_stop, baseline_stopped) = oneshot::channel::<()>();
    let baseline = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = baseline_stopped.await;
            })
            .await
    });

    let url = |target: Target| match target {
        Target::Ledger => format!("http://{ledger_addr}/mcp"),
        Target::Baseline => format!("http://{baseline_addr}/mcp"),
    };

    // One request each, so a broken setup fails fast and visibly.
    for target in [Target::Ledger, Target::Baseline] {
        let client = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()?;
        let (status, body) = send(&client, &url(target)).await?;
        eprintln!("{} sample: HTTP {status} {body}", target.label());
    }
    eprintln!(
        "measuring {:.1}s (after {:.1}s warm-up) per cell ...",
        measure.as_secs_f64(),
        warmup.as_secs_f64()
    );

    let mut cells = Vec::new();
    for concurrency in CONCURRENCIES {
        for target in [Target::Baseline, Target::Ledger] {
            let cell = measure_cell(target, &url(target), concurrency, warmup, measure).await?;
            eprintln!(
                "  {:<12} c={:<3} {:>9.0} req/s  p50 {:>8.1} µs  p99 {:>8.1} µs  failures {}",
                target.label(),
                concurrency,
                cell.rps,
                micros(cell.p50),
                micros(cell.p99),
                cell.failures
            );
            cells.push(cell);
        }
    }

    let _ = ledger_stop.send(());
    let _ = baseline_stop.send(());
    tokio::time::timeout(Duration::from_secs(10), ledger).await???;
    tokio::time::timeout(Duration::from_secs(10), baseline).await???;
    drop(dir);

    print_table(&cells, measure, warmup);
    Ok(cells.iter().all(|c| c.failures == 0))
}

async fn send(client: &reqwest::Client, url: &str) -> Result<(u16, String), reqwest::Error> {
    let response = client
        .post(url)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(REQUEST_BODY)
        .send()
        .await?;
    let status = response.status().as_u16();
    let body = response.text().await?;
    Ok((status, body))
}

async fn measure_cell(
    target: Target,
    url: &str,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
) -> Result<Cell, BoxError> {
    // A fresh keep-alive pool per cell: warm-up opens the connections.
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .pool_max_idle_per_host(concurrency)
        .build()?;
    let start = Instant::now();
    let measure_from = start + warmup;
    let until = measure_from + measure;

    let mut tasks = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let client = client.clone();
        let url = url.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut result = TaskResult {
                latencies: Vec::with_capacity(64 * 1024),
                failures: 0,
                first_failure: None,
                finished: Instant::now(),
            };
            loop {
                let sent = Instant::now();
                if sent >= until {
                    break;
                }
                let outcome = send(&client, &url).await;
                let took = sent.elapsed();
                let failure = match outcome {
                    Ok((200, body)) if body.contains(r#""isError":false"#) => None,
                    Ok((status, body)) => Some(format!("HTTP {status}: {body}")),
                    Err(e) => Some(format!("transport: {e}")),
                };
                if let Some(why) = failure {
                    result.failures += 1;
                    result.first_failure.get_or_insert(why);
                } else if sent >= measure_from {
                    result.latencies.push(took);
                }
            }
            result.finished = Instant::now();
            result
        }));
    }

    let mut latencies = Vec::new();
    let mut failures = 0;
    let mut last_finish = until;
    for task in tasks {
        let result = task.await?;
        latencies.extend(result.latencies);
        failures += result.failures;
        last_finish = last_finish.max(result.finished);
        if let Some(why) = result.first_failure {
            eprintln!("  {} c={concurrency} failure: {why}", target.label());
        }
    }
    latencies.sort_unstable();
    let elapsed = last_finish.saturating_duration_since(measure_from);
    let requests = latencies.len();
    Ok(Cell {
        target,
        concurrency,
        requests,
        failures,
        rps: requests as f64 / elapsed.as_secs_f64(),
        p50: percentile(&latencies, 50.0),
        p99: percentile(&latencies, 99.0),
    })
}

/// Nearest-rank percentile of a sorted slice.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn print_table(cells: &[Cell], measure: Duration, warmup: Duration) {
    println!(
        "\n### MCP ping over loopback ({:.1}s measured after {:.1}s warm-up per row)\n",
        measure.as_secs_f64(),
        warmup.as_secs_f64()
    );
    println!("| server | clients | requests | failures | req/s | p50 (µs) | p99 (µs) |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for c in cells {
        println!(
            "| {} | {} | {} | {} | {:.0} | {:.1} | {:.1} |",
            c.target.label(),
            c.concurrency,
            c.requests,
            c.failures,
            c.rps,
            micros(c.p50),
            micros(c.p99)
        );
    }
    println!("\n| clients | ledger/baseline req/s | ledger/baseline p50 |");
    println!("|---:|---:|---:|");
    for concurrency in CONCURRENCIES {
        let find = |t: Target| {
            cells
                .iter()
                .find(|c| c.target == t && c.concurrency == concurrency)
        };
        if let (Some(l), Some(b)) = (find(Target::Ledger), find(Target::Baseline)) {
            let p50_ratio = if b.p50.is_zero() {
                f64::NAN
            } else {
                l.p50.as_secs_f64() / b.p50.as_secs_f64()
            };
            println!(
                "| {concurrency} | {:.3} | {:.2} |",
                l.rps / b.rps,
                p50_ratio
            );
        }
    }
}
