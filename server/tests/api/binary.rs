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
