//! The `ledger` binary as an operator runs it: from any directory with no
//! environment, configured by file and environment, stopped by SIGTERM.

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

const BIN: &str = env!("CARGO_BIN_EXE_ledger");

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// Start `ledger serve` in `dir` with a clean environment plus `env`.
fn start(dir: &std::path::Path, env: &[(&str, String)]) -> (Child, SocketAddr) {
    let port = free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut command = Command::new(BIN);
    command
        .current_dir(dir)
        .env_clear()
        .env("LEDGER_LISTEN", addr.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let child = command.spawn().unwrap();
    wait_healthy(addr);
    (child, addr)
}

fn http_get(addr: SocketAddr, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    stream.read_to_string(&mut out).ok()?;
    Some(out)
}

fn wait_healthy(addr: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if http_get(addr, "/healthz").is_some_and(|r| r.starts_with("HTTP/1.1 200")) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("ledger did not become healthy on {addr}");
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "ledger did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn runs_from_any_directory_with_embedded_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr) = start(dir.path(), &[]);
    assert!(
        dir.path().join("data/ledger.db").is_file(),
        "SQLite file under ./data"
    );
    let home = http_get(addr, "/").unwrap();
    assert!(home.starts_with("HTTP/1.1 200"), "{home}");
    assert!(home.contains(&format!("http://{addr}/mcp")));
    let css = http_get(addr, "/style/ledger.css").unwrap();
    assert!(css.starts_with("HTTP/1.1 200"));
    sigterm(&child);
    assert!(wait_exit(&mut child).success());
}

#[test]
fn sigterm_lets_an_in_flight_request_finish() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr) = start(dir.path(), &[]);
    let body =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}}"#;
    let (first, rest) = body.split_at(20);
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{first}",
        body.len()
    )
    .unwrap();
    stream.flush().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    sigterm(&child);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "still serving the request"
    );
    stream.write_all(rest.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains(r#""isError":false"#), "{response}");
    drop(stream);
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status:?}");
    // New connections are refused once it stopped.
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn migrate_creates_the_database_and_exits() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .current_dir(dir.path())
        .env_clear()
        .arg("migrate")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("database ready"), "{stdout}");
    assert!(dir.path().join("data/ledger.db").is_file());
}

#[test]
fn a_config_file_is_read_and_the_environment_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ledger.toml");
    std::fs::write(
        &file,
        "database_url = \"sqlite://from-file.db\"\n[mcp]\nsession_ttl_secs = 60\n",
    )
    .unwrap();
    let run = |env: &[(&str, &str)]| {
        let mut command = Command::new(BIN);
        command.current_dir(dir.path()).env_clear().args([
            "--config",
            file.to_str().unwrap(),
            "migrate",
        ]);
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().unwrap()
    };
    assert!(run(&[]).status.success());
    assert!(dir.path().join("from-file.db").is_file());
    assert!(
        run(&[("DATABASE_URL", "sqlite://from-env.db")])
            .status
            .success()
    );
    assert!(dir.path().join("from-env.db").is_file());
}

#[test]
fn invalid_configuration_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .current_dir(dir.path())
        .env_clear()
        .env("LEDGER_RATE_LIMIT__ANON_RPS", "-1")
        .arg("migrate")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("anon_rps"), "{stderr}");
    let typo = dir.path().join("typo.toml");
    std::fs::write(&typo, "[mcp]\nsesion_ttl_secs = 5\n").unwrap();
    let output = Command::new(BIN)
        .current_dir(dir.path())
        .env_clear()
        .args(["--config", typo.to_str().unwrap(), "migrate"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("sesion_ttl_secs"));
    // An unknown LEDGER_* variable is only a warning (build scripts share the prefix).
    let output = Command::new(BIN)
        .current_dir(dir.path())
        .env_clear()
        .env("LEDGER_NO_SUCH_KEY", "1")
        .arg("migrate")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("LEDGER_NO_SUCH_KEY"));
}

/// SIGKILL in the middle of a scan: the restarted server resumes the job
/// once its lease runs out, and the ledger ends with every leg exactly once.
#[tokio::test]
async fn a_scan_killed_with_sigkill_resumes_on_restart_without_duplicates() {
    use serde_json::{Value, json};

    let stand_in = crate::standin::start(crate::scans::shared(0, Duration::from_millis(250))).await;
    let (database_url, _database) = crate::helpers::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let env = vec![
        ("DATABASE_URL", database_url.clone()),
        ("SOLANA_RPC_URL", stand_in.url.clone()),
        ("LEDGER_SOLANA__BATCH_SIZE", "2".to_owned()),
        ("LEDGER_WORKER__LEASE_SECS", "1".to_owned()),
        ("LEDGER_WORKER__POLL_MS", "50".to_owned()),
        ("LEDGER_RATE_LIMIT__ANON_RPS", "1000".to_owned()),
        ("LEDGER_RATE_LIMIT__ANON_BURST", "1000".to_owned()),
    ];
    let (mut first, addr) = start(dir.path(), &env);
    let client = reqwest::Client::new();
    let base = format!("http://{addr}");
    let quote: Value = client
        .post(format!("{base}/v1/quotes"))
        .json(&json!({"address": crate::scans::WALLET}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let job: Value = client
        .post(format!("{base}/v1/scans"))
        .json(&json!({"quote_id": quote["quote_id"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let job_id = job["job_id"].as_str().unwrap().to_owned();
    let read = |base: String| {
        let client = client.clone();
        let job_id = job_id.clone();
        async move {
            client
                .get(format!("{base}/v1/jobs/{job_id}"))
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    // Wait until some legs are written, then kill without warning.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let job = read(base.clone()).await;
        assert_eq!(
            job["status"], "running",
            "the scan must still be running: {job}"
        );
        if job["progress"]["transactions_fetched"].as_i64().unwrap() >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "no progress: {job}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    first.kill().unwrap();
    let _ = first.wait();

    let (mut second, addr) = start(dir.path(), &env);
    let base = format!("http://{addr}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let job = loop {
        let job = read(base.clone()).await;
        if job["status"] != "running" {
            break job;
        }
        assert!(Instant::now() < deadline, "not resumed: {job}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(job["status"], "completed", "{job}");

    let expected: Vec<(String, u32)> = {
        let mut legs: Vec<(String, u32)> = crate::scans::fixtures()
            .iter()
            .flat_map(|t| {
                let view = server::ledger::TxView::parse(t).unwrap();
                server::ledger::legs(&view, crate::scans::WALLET)
                    .into_iter()
                    .map(|l| (l.signature, l.index))
                    .collect::<Vec<_>>()
            })
            .collect();
        legs.sort();
        legs
    };
    let page: Value = client
        .get(format!(
            "{base}/v1/wallets/{}/ledger?limit=1000",
            crate::scans::WALLET
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut stored: Vec<(String, u32)> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["signature"].as_str().unwrap().to_owned(),
                e["index"].as_u64().unwrap() as u32,
            )
        })
        .collect();
    stored.sort();
    assert_eq!(stored, expected, "every leg exactly once");
    assert_eq!(job["progress"]["legs_written"], expected.len());
    assert!(job["progress"]["signatures_listed"].as_u64().unwrap() >= 19);
    sigterm(&second);
    assert!(wait_exit(&mut second).success());
}

#[test]
fn logs_written_to_a_file_carry_no_colour_codes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let port = free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .env_clear()
        .env("LEDGER_LISTEN", addr.to_string())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .arg("serve")
        .spawn()
        .unwrap();
    wait_healthy(addr);
    sigterm(&child);
    assert!(wait_exit(&mut child).success());
    let text = std::fs::read(&log).unwrap();
    assert!(
        text.windows(4).any(|w| w == b"INFO"),
        "the server logged: {}",
        String::from_utf8_lossy(&text)
    );
    assert!(
        !text.contains(&0x1b),
        "no ANSI escape in a log file: {:?}",
        String::from_utf8_lossy(&text)
    );
}

#[test]
fn json_logs_are_one_json_object_per_line_from_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let port = free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .env_clear()
        .env("LEDGER_LISTEN", addr.to_string())
        .env("LEDGER_LOG_FORMAT", "json")
        // Warned about while the configuration is read, before it is known.
        .env("LEDGER_NO_SUCH_KEY", "1")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .arg("serve")
        .spawn()
        .unwrap();
    wait_healthy(addr);
    sigterm(&child);
    assert!(wait_exit(&mut child).success());
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines.len() >= 3, "{text}");
    for line in &lines {
        for key in ["timestamp", "level", "target", "message"] {
            assert!(line.get(key).is_some(), "{key} missing: {line}");
        }
    }
    let said = |message: &str| lines.iter().find(|l| l["message"] == message);
    let serving = said("serving").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(serving["level"], "INFO");
    assert!(
        serving["public_url"]
            .as_str()
            .is_some_and(|u| u.contains(&port.to_string())),
        "fields sit beside the message: {serving}"
    );
    assert!(said("stopped").is_some(), "{text}");
    let warned = lines
        .iter()
        .find(|l| l["variable"] == "LEDGER_NO_SUCH_KEY")
        .unwrap_or_else(|| panic!("the early warning is JSON too: {text}"));
    assert_eq!(warned["level"], "WARN");
}

/// Run out of file descriptors: `ulimit -n` lowered in the child, more
/// half-sent requests than it has descriptors, no connection cap to stop
/// them first. Accept backs off instead of dying, every socket is closed
/// (accepted as descriptors free up, then timed out), `/healthz` answers
/// again, and the failures were logged once per burst, not once each.
#[test]
fn out_of_descriptors_the_server_backs_off_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let mut child = Command::new("/bin/sh")
        .args(["-c", "ulimit -n 96 && exec \"$0\" serve", BIN])
        .current_dir(dir.path())
        .env_clear()
        .env("LEDGER_LISTEN", addr.to_string())
        .env("LEDGER_METRICS__LISTEN", metrics.to_string())
        .env("LEDGER_CONNECTIONS__MAX_OPEN", "100000")
        .env("LEDGER_CONNECTIONS__MAX_OPEN_PER_IP", "0")
        .env("LEDGER_CONNECTIONS__HEADER_TIMEOUT_MS", "500")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    wait_healthy(addr);
    let sockets = 200;
    let mut held: Vec<TcpStream> = (0..sockets)
        .map(|_| {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: ledger\r\n")
                .unwrap();
            stream
        })
        .collect();
    for stream in &mut held {
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut buf = [0u8; 64];
        match stream.read(&mut buf) {
            Ok(0) => {}
            Ok(_) => panic!("a half-sent request was answered"),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("a half-sent request was never closed: {e}"),
        }
    }
    drop(held);
    wait_healthy(addr);
    let scrape = http_get(metrics, "/metrics").unwrap();
    let value = |series: &str| {
        scrape
            .lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let failures = value("ledger_http_accept_errors_total{reason=\"fd_exhausted\"}");
    assert!(
        failures >= 1.0,
        "the test must exhaust descriptors: {scrape}"
    );
    assert!(
        value("ledger_http_connections_timed_out_total{reason=\"header\"}") >= f64::from(sockets),
        "{scrape}"
    );
    sigterm(&child);
    assert!(wait_exit(&mut child).success());
    let text = std::fs::read_to_string(&log).unwrap();
    let logged = text.matches("out of file descriptors").count();
    assert!(logged >= 1, "{text}");
    assert!(
        (logged as f64) < failures,
        "{logged} lines for {failures} failed accepts: once per burst"
    );
}
