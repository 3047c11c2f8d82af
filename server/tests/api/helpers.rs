//! The test harness: the real server on 127.0.0.1:0 with a fresh database.
//!
//! The database is SQLite in a temporary directory, or, when
//! `TEST_DATABASE_URL` names a PostgreSQL server (as `.ci/test` sets
//! it for the second pass), a fresh database created on it for this test and
//! dropped afterwards. Every test therefore runs on both databases.

use std::{net::SocketAddr, sync::Arc};

use reqwest::{Response, StatusCode, header::HeaderMap};
use serde_json::{Value, json};
use server::{
    clock::{Clock, ManualClock, SystemClock},
    config::Config,
    startup::Application,
    state::AppState,
};
use sqlx::{Connection, Executor, PgConnection};
use tokio::sync::oneshot;

pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";

pub struct TestApp {
    pub base: String,
    /// `http://…` of the metrics listener, when `metrics.listen` was set.
    pub metrics_base: Option<String>,
    pub client: reqwest::Client,
    pub state: AppState,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// Dropped with the app (its Drop removes a PostgreSQL test database).
    _database: TestDatabase,
}

pub enum TestDatabase {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

/// Options for [`spawn_with`].
pub struct Options {
    pub clock: Arc<dyn Clock>,
    pub configure: Box<dyn FnOnce(&mut Config) + Send>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            clock: Arc::new(SystemClock),
            configure: Box::new(|_| {}),
        }
    }
}

/// The server with default settings, anonymous limits raised so that tests
/// exercising other rules are not throttled.
pub async fn spawn_app() -> TestApp {
    spawn_with(Options {
        configure: Box::new(relaxed_limits),
        ..Options::default()
    })
    .await
}

/// The server with a hand-driven clock.
pub async fn spawn_with_clock(clock: ManualClock) -> TestApp {
    spawn_with(Options {
        clock: Arc::new(clock),
        configure: Box::new(relaxed_limits),
    })
    .await
}

pub fn relaxed_limits(config: &mut Config) {
    let limits = &mut config.rate_limit;
    limits.anon_rps = 100_000.0;
    limits.anon_burst = Some(100_000);
    limits.account_units_per_sec = 1_000_000.0;
    limits.account_burst_units = 1_000_000;
    limits.bearer_ip_units_per_sec = 1_000_000.0;
    limits.bearer_ip_burst_units = 1_000_000;
    limits.bearer_failures_per_sec = 100_000.0;
    limits.bearer_failure_burst = 100_000;
    limits.siws_challenges_per_minute = 1_000_000;
    limits.siws_challenge_burst = 100_000;
    limits.signups_per_hour = 1_000_000;
    limits.signup_burst = 100_000;
}

pub async fn spawn_with(options: Options) -> TestApp {
    let (database_url, database) = fresh_database().await;
    let mut config = Config {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        database_url,
        ..Config::default()
    };
    config.worker.in_process = false;
    config.shutdown_grace_secs = 5;
    // No sample wallet unless a test asks for it (tests/api/sample.rs).
    config.sample.enabled = false;
    // Never the real price sources: a closed port unless a test points
    // them at the price stand-in.
    for url in [
        &mut config.prices.coinbase_url,
        &mut config.prices.coinbase_exchange_url,
        &mut config.prices.jupiter_url,
        &mut config.prices.ecb_url,
    ] {
        *url = "http://127.0.0.1:9".to_owned();
    }
    (options.configure)(&mut config);
    let app = Application::build(config, options.clock)
        .await
        .expect("server builds");
    let addr = app.local_addr().expect("bound");
    let metrics_base = app.metrics_addr().map(|a| format!("http://{a}"));
    let state = app.state().clone();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        app.run_until(async move {
            let _ = stopped.await;
        })
        .await
        .expect("server runs");
    });
    TestApp {
        base: format!("http://{addr}"),
        metrics_base,
        client: reqwest::Client::new(),
        state,
        stop: Some(stop),
        task: Some(task),
        _database: database,
    }
}

/// A fresh database for one test: its URL, and a guard that drops it.
pub async fn fresh_database() -> (String, TestDatabase) {
    match std::env::var("TEST_DATABASE_URL") {
        Ok(admin_url) if admin_url.starts_with("postgres") => {
            let name = format!("ledger_test_{}", random_suffix());
            let mut admin = PgConnection::connect(&admin_url)
                .await
                .expect("connect to the PostgreSQL admin database");
            admin
                .execute(format!(r#"CREATE DATABASE "{name}""#).as_str())
                .await
                .expect("create the test database");
            let url = match admin_url.rsplit_once('/') {
                Some((server, _db)) => format!("{server}/{name}"),
                None => panic!("TEST_DATABASE_URL needs a database path"),
            };
            (url, TestDatabase::Postgres { admin_url, name })
        }
        _ => {
            let dir = tempfile::tempdir().expect("temp dir");
            let url = format!("sqlite://{}/ledger.db", dir.path().display());
            (url, TestDatabase::Sqlite(dir))
        }
    }
}

fn random_suffix() -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    (0..12)
        .map(|_| char::from(b'a' + rng.gen_range(0..26)))
        .collect()
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// GET the metrics listener's `/metrics` and expect 200 text.
    pub async fn scrape(&self) -> String {
        let base = self.metrics_base.as_deref().expect("metrics are on");
        let response = self
            .client
            .get(format!("{base}/metrics"))
            .send()
            .await
            .expect("scrape sent");
        assert_eq!(response.status(), StatusCode::OK);
        response.text().await.expect("scrape body")
    }

    /// Stop the server gracefully (the database is dropped with the app).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// POST a raw body to /mcp with the usual MCP headers plus `extra`.
    pub async fn post_mcp_raw(
        &self,
        body: impl Into<reqwest::Body>,
        extra: &[(&str, &str)],
    ) -> Response {
        let mut request = self
            .client
            .post(self.url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", ACCEPT_BOTH)
            .body(body);
        for (k, v) in extra {
            request = request.header(*k, *v);
        }
        request.send().await.expect("request sent")
    }

    /// POST a JSON-RPC message to /mcp.
    pub async fn post_mcp(&self, message: &Value, extra: &[(&str, &str)]) -> Response {
        self.post_mcp_raw(message.to_string(), extra).await
    }

    /// POST and expect HTTP 200 with a JSON body.
    pub async fn rpc(&self, message: &Value, extra: &[(&str, &str)]) -> Value {
        let response = self.post_mcp(message, extra).await;
        assert_eq!(response.status(), StatusCode::OK, "POST {message}");
        response.json().await.expect("JSON body")
    }

    /// `initialize` with `version`; returns the session id and the result.
    pub async fn initialize(&self, version: &str) -> (String, Value) {
        let response = self
            .post_mcp(
                &json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name":"harness","version":"1"}}}),
                &[],
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let session = session_id(response.headers()).expect("Mcp-Session-Id on initialize");
        let body: Value = response.json().await.expect("JSON");
        (session, body["result"].clone())
    }

    /// A stateless (2026-07-28) request with correct `_meta` and headers.
    pub async fn stateless(
        &self,
        id: Value,
        method: &str,
        mut params: Value,
    ) -> (StatusCode, Value) {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "harness", "version": "1"},
        });
        let name = params["name"].as_str().map(str::to_owned);
        let mut headers = vec![
            ("mcp-protocol-version", "2026-07-28".to_owned()),
            ("mcp-method", method.to_owned()),
        ];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let response = self
            .post_mcp(
                &json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}),
                &headers,
            )
            .await;
        let status = response.status();
        (status, response.json().await.expect("JSON body"))
    }

    /// `tools/call` without a session; returns the JSON-RPC `result`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Value {
        let body = self
            .rpc(
                &json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":name,"arguments":arguments}}),
                &[],
            )
            .await;
        body["result"].clone()
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let TestDatabase::Postgres { admin_url, name } = self {
            // Drop runs outside async context: use a thread with its own runtime.
            let (admin_url, name) = (admin_url.clone(), name.clone());
            let _ = std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                rt.block_on(async {
                    if let Ok(mut admin) = PgConnection::connect(&admin_url).await {
                        let sql = format!(r#"DROP DATABASE IF EXISTS "{name}" WITH (FORCE)"#);
                        let _ = admin.execute(sql.as_str()).await;
                    }
                });
            })
            .join();
        }
    }
}

pub fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The tool named `name` in a `tools/list` result.
pub fn tool<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["tools"].as_array()?.iter().find(|t| t["name"] == name)
}

/// The value of `series` (`name{label="…",…}` exactly as scraped) in a
/// Prometheus text scrape, if it is there.
pub fn sample(scrape: &str, series: &str) -> Option<f64> {
    scrape.lines().find_map(|line| {
        line.strip_prefix(series)
            .and_then(|rest| rest.strip_prefix(' '))
            .and_then(|value| value.trim().parse().ok())
    })
}

/// One transaction of a seeded scan: signature, slot, block time (none:
/// not recorded), legs.
pub type SeededTx = (String, u64, Option<i64>, Vec<server::ledger::Leg>);

/// Record a completed scan of `wallet` holding `txs`, as a scan leaves it:
/// its quote, its job (created, claimed, finished) and its legs. Only on a
/// server without in-process workers, which would race this for the job.
pub async fn seed_completed_scan(app: &TestApp, wallet: &str, txs: &[SeededTx]) {
    let store = app.state.store();
    let now = app.state.now_ms();
    let (quote, job) = (format!("q_seed_{wallet}"), format!("job_seed_{wallet}"));
    store
        .insert_quote(&server::store::QuoteRecord {
            id: quote.clone(),
            address: wallet.into(),
            scope: "full".into(),
            tier: "small".into(),
            price_micros: 0,
            signatures: None,
            created_at: now,
            expires_at: now + 60_000,
        })
        .await
        .unwrap();
    store
        .create_scan_job(&server::store::NewScanJob {
            id: &job,
            address: wallet,
            scope: "full",
            quote_id: &quote,
            stop_at: None,
            account_id: None,
            now,
        })
        .await
        .unwrap();
    let claimed = store.claim_job("seed", now, 60_000).await.unwrap().unwrap();
    assert_eq!(claimed.id, job, "no other job may be waiting");
    let rows: Vec<server::store::TransactionLegs<'_>> = txs
        .iter()
        .map(
            |(signature, slot, block_time, legs)| server::store::TransactionLegs {
                signature,
                slot: *slot,
                block_time: *block_time,
                failed: false,
                legs,
            },
        )
        .collect();
    store.write_legs(wallet, &rows).await.unwrap();
    assert!(
        store
            .finish_job(&job, "seed", "completed", None, now)
            .await
            .unwrap()
    );
}
