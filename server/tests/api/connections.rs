//! The accept loop against clients that hold connections: sockets that
//! send nothing or half a request are closed at the header timeout, an idle
//! keep-alive connection at the idle timeout, connections over a cap as
//! soon as they are accepted, while `/healthz` keeps answering everyone
//! else. Timeouts are set small here; every wait is bounded, and which
//! timeout or cap closed a connection is read from the metrics, so a test
//! cannot pass on the wrong mechanism.

use std::{net::SocketAddr, time::Duration};

use server::config::Config;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpSocket, TcpStream},
};

use crate::helpers::{Options, TestApp, relaxed_limits, sample, spawn_with};

/// Longest any test waits for the server to act.
const BOUND: Duration = Duration::from_secs(20);

async fn spawn(configure: impl FnOnce(&mut Config) + Send + 'static) -> TestApp {
    spawn_with(Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.metrics.listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
            configure(c);
        }),
        ..Options::default()
    })
    .await
}

fn addr(app: &TestApp) -> SocketAddr {
    app.base.trim_start_matches("http://").parse().unwrap()
}

/// A connection to `app` from `local` (any loopback address: Linux routes
/// all of 127.0.0.0/8 to the loopback interface).
async fn connect_from(app: &TestApp, local: [u8; 4]) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::from((local, 0)))
        .expect("bind a loopback source address");
    socket.connect(addr(app)).await.unwrap()
}

/// Read until the server closes `stream` (or resets it); what it sent.
/// Fails if it is still open after [`BOUND`].
async fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let read_all = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    assert!(
        tokio::time::timeout(BOUND, read_all).await.is_ok(),
        "the server kept the connection open"
    );
    got
}

/// Whether `stream` is still open, nothing read, after `wait`.
async fn still_open(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buf = [0u8; 1];
    tokio::time::timeout(wait, stream.read(&mut buf))
        .await
        .is_err()
}

/// Whether `stream` is still open with nothing to read after `wait`;
/// unlike [`still_open`], takes nothing of an answer that came.
async fn quiet(stream: &TcpStream, wait: Duration) -> bool {
    let mut buf = [0u8; 1];
    tokio::time::timeout(wait, stream.peek(&mut buf))
        .await
        .is_err()
}

/// `GET /healthz` on a connection of its own from `local`; the status
/// line, or `None` when the connection was closed without an answer.
async fn healthz_from(app: &TestApp, local: [u8; 4]) -> Option<String> {
    let mut stream = connect_from(app, local).await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: ledger\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    let answer = String::from_utf8_lossy(&until_closed(&mut stream).await).into_owned();
    answer.lines().next().map(str::to_owned)
}

/// Retry `healthz_from` until it answers 200 (the server may not have
/// seen a close yet); panics after [`BOUND`].
async fn healthz_answers(app: &TestApp, local: [u8; 4]) {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        if healthz_from(app, local)
            .await
            .is_some_and(|status| status.starts_with("HTTP/1.1 200"))
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "/healthz never answered"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Wait until the server holds `open` connections (its gauge says so).
async fn wait_open(app: &TestApp, open: f64) {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        if sample(&app.scrape().await, "ledger_http_connections_open") == Some(open) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never {open} open connections"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn counted(scrape: &str, series: &str) -> f64 {
    sample(scrape, series).unwrap_or(0.0)
}

#[tokio::test]
async fn sockets_that_send_nothing_are_closed_at_the_header_timeout() {
    let app = spawn(|c| {
        c.connections.header_timeout_ms = 300;
        c.connections.idle_timeout_ms = 600_000;
    })
    .await;
    let mut idle = Vec::new();
    for _ in 0..5 {
        idle.push(connect_from(&app, [127, 0, 0, 1]).await);
    }
    for stream in &mut idle {
        assert!(
            until_closed(stream).await.is_empty(),
            "closed without an answer"
        );
    }
    let scrape = app.scrape().await;
    assert_eq!(
        counted(
            &scrape,
            "ledger_http_connections_timed_out_total{reason=\"header\"}"
        ),
        5.0,
        "{scrape}"
    );
    assert_eq!(sample(&scrape, "ledger_http_connections_open"), Some(0.0));
    healthz_answers(&app, [127, 0, 0, 1]).await;
    app.stop().await;
}

#[tokio::test]
async fn a_half_sent_request_head_is_closed_even_while_it_trickles() {
    let app = spawn(|c| {
        c.connections.header_timeout_ms = 400;
        c.connections.idle_timeout_ms = 600_000;
    })
    .await;
    let mut half = connect_from(&app, [127, 0, 0, 1]).await;
    half.write_all(b"GET /healthz HTTP/1.1\r\nHost: ledger\r\n")
        .await
        .unwrap();
    // A byte every 50 ms never completes the head: the timer counts from
    // the opening, not from the last byte.
    let mut trickle = connect_from(&app, [127, 0, 0, 1]).await;
    let header = b"GET /healthz HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let deadline = tokio::time::Instant::now() + BOUND;
    let mut cut = false;
    for byte in header.iter() {
        if trickle.write_all(&[*byte]).await.is_err() {
            cut = true;
            break;
        }
        if !still_open(&mut trickle, Duration::from_millis(50)).await {
            cut = true;
            break;
        }
        assert!(tokio::time::Instant::now() < deadline);
    }
    assert!(cut, "a head trickled for longer than the timeout was kept");
    assert!(until_closed(&mut half).await.is_empty());
    let scrape = app.scrape().await;
    assert_eq!(
        counted(
            &scrape,
            "ledger_http_connections_timed_out_total{reason=\"header\"}"
        ),
        2.0,
        "{scrape}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_keep_alive_connection_idle_past_the_idle_timeout_is_closed() {
    let app = spawn(|c| {
        c.connections.header_timeout_ms = 600_000;
        c.connections.idle_timeout_ms = 300;
    })
    .await;
    let mut stream = connect_from(&app, [127, 0, 0, 1]).await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: ledger\r\n\r\n")
        .await
        .unwrap();
    let answer = String::from_utf8_lossy(&until_closed(&mut stream).await).into_owned();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        !answer.contains("connection: close"),
        "kept alive: {answer}"
    );
    let scrape = app.scrape().await;
    assert_eq!(
        counted(
            &scrape,
            "ledger_http_connections_timed_out_total{reason=\"idle\"}"
        ),
        1.0,
        "{scrape}"
    );
    assert_eq!(
        counted(
            &scrape,
            "ledger_http_connections_timed_out_total{reason=\"header\"}"
        ),
        0.0
    );
    app.stop().await;
}

/// The head of a `tools/call` of `ping` over `/mcp` whose body is `body`
/// (not sent), announcing its length.
fn ping_head(body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: ledger\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
}

const PING_BODY: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}}"#;

#[tokio::test]
async fn a_body_still_arriving_within_its_deadline_outlives_the_header_and_idle_timeouts() {
    let app = spawn(|c| {
        c.connections.header_timeout_ms = 200;
        c.connections.idle_timeout_ms = 200;
        c.connections.body_timeout_ms = 10_000;
    })
    .await;
    let (first, rest) = PING_BODY.split_at(20);
    let mut stream = connect_from(&app, [127, 0, 0, 1]).await;
    let head = format!("{}{first}", ping_head(PING_BODY));
    stream.write_all(head.as_bytes()).await.unwrap();
    // Longer than both timeouts, with the request in flight: only the
    // body's deadline, far off, bounds it.
    assert!(still_open(&mut stream, Duration::from_millis(800)).await);
    stream.write_all(rest.as_bytes()).await.unwrap();
    let answer = String::from_utf8_lossy(&until_closed(&mut stream).await).into_owned();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""isError":false"#), "{answer}");
    app.stop().await;
}

#[tokio::test]
async fn a_body_trickled_past_its_deadline_is_408_and_its_connection_closed() {
    let app = spawn(|c| {
        c.connections.header_timeout_ms = 200;
        c.connections.idle_timeout_ms = 200;
        c.connections.body_timeout_ms = 500;
    })
    .await;
    let mut stream = connect_from(&app, [127, 0, 0, 1]).await;
    stream
        .write_all(ping_head(PING_BODY).as_bytes())
        .await
        .unwrap();
    // One byte every 50 ms: each frame comes well within any per-frame
    // timer, and the whole body would take over 4 s; its deadline is a
    // total of 0.5 s from the end of the head.
    let deadline = tokio::time::Instant::now() + BOUND;
    let mut cut = false;
    for byte in PING_BODY.as_bytes() {
        if stream.write_all(&[*byte]).await.is_err()
            || !quiet(&stream, Duration::from_millis(50)).await
        {
            cut = true;
            break;
        }
        assert!(tokio::time::Instant::now() < deadline);
    }
    assert!(cut, "a body trickled past its deadline was read whole");
    let answer = String::from_utf8_lossy(&until_closed(&mut stream).await).into_owned();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains(r#""code":"request_timeout""#), "{answer}");
    assert!(answer.contains("connections.body_timeout_ms"), "{answer}");
    app.stop().await;
}

#[tokio::test]
async fn an_address_over_its_cap_is_refused_while_others_are_served() {
    let app = spawn(|c| {
        c.connections.header_timeout_ms = 600_000;
        c.connections.max_open_per_ip = 2;
    })
    .await;
    let mut held = vec![
        connect_from(&app, [127, 0, 0, 1]).await,
        connect_from(&app, [127, 0, 0, 1]).await,
    ];
    wait_open(&app, 2.0).await;
    let mut third = connect_from(&app, [127, 0, 0, 1]).await;
    assert!(
        until_closed(&mut third).await.is_empty(),
        "refused without an answer"
    );
    for stream in &mut held {
        assert!(
            still_open(stream, Duration::from_millis(100)).await,
            "those under the cap stay"
        );
    }
    // Another address is not held to this one's cap.
    assert_eq!(
        healthz_from(&app, [127, 0, 0, 2]).await.as_deref(),
        Some("HTTP/1.1 200 OK")
    );
    // Once one of the two closes, the address is served again.
    held.pop();
    healthz_answers(&app, [127, 0, 0, 1]).await;
    let scrape = app.scrape().await;
    assert!(
        counted(
            &scrape,
            "ledger_http_connections_refused_total{reason=\"max_open_per_ip\"}"
        ) >= 1.0,
        "{scrape}"
    );
    app.stop().await;
}

#[tokio::test]
async fn connections_over_the_global_cap_are_refused_until_one_closes() {
    let app = spawn(|c| {
        c.connections.header_timeout_ms = 600_000;
        c.connections.max_open = 2;
        c.connections.max_open_per_ip = 0;
    })
    .await;
    let mut held = vec![
        connect_from(&app, [127, 0, 0, 1]).await,
        connect_from(&app, [127, 0, 0, 2]).await,
    ];
    wait_open(&app, 2.0).await;
    assert_eq!(healthz_from(&app, [127, 0, 0, 3]).await, None, "refused");
    assert!(still_open(&mut held[0], Duration::from_millis(100)).await);
    held.pop();
    healthz_answers(&app, [127, 0, 0, 3]).await;
    let scrape = app.scrape().await;
    assert!(
        counted(
            &scrape,
            "ledger_http_connections_refused_total{reason=\"max_open\"}"
        ) >= 1.0,
        "{scrape}"
    );
    app.stop().await;
}
