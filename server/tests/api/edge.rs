//! The JSON edge of `/v1`, `/mcp`, `/.well-known` and the OAuth paths: every
//! error is our JSON body with the right status (never plain text or the
//! portal's page), REST writes refuse what a browser sends on another
//! site's behalf, and a cookie never authenticates. One test per rule.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{
    helpers::{Options, TestApp, relaxed_limits, spawn_app, spawn_with},
    scans::{WALLET, quote, shared},
    standin,
};

/// A raw HTTP/1.1 exchange, for request lines a client library would
/// normalize (`%FF`, dot segments): the status, the lowercased headers and
/// the body.
pub async fn raw(
    app: &TestApp,
    request_line: &str,
    headers: &str,
    body: &str,
) -> (u16, String, String) {
    let addr = app.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{request_line} HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// The JSON error body of a raw response (a chunked body is one chunk here).
fn error_body(head: &str, body: &str) -> Value {
    assert!(
        head.contains("content-type: application/json"),
        "not JSON: {head}\n{body}"
    );
    let json = if head.contains("transfer-encoding: chunked") {
        body.split_once("\r\n").map_or(body, |(_, rest)| rest)
    } else {
        body
    };
    let end = json.rfind('}').map_or(json.len(), |i| i + 1);
    serde_json::from_str(&json[..end]).unwrap()
}

#[tokio::test]
async fn a_path_that_is_not_utf8_is_json_invalid_params() {
    let app = spawn_app().await;
    for path in [
        "/v1/wallets/%FF/ledger",
        "/v1/jobs/%FF",
        "/v1/wallets/%C3/flows",
    ] {
        let (status, head, body) = raw(&app, &format!("GET {path}"), "", "").await;
        assert_eq!(status, 400, "{path}");
        assert_eq!(error_body(&head, &body)["code"], "invalid_params", "{path}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_body_over_the_cap_on_v1_is_json_413() {
    let app = spawn_app().await;
    let big = format!(r#"{{"address":"{}"}}"#, "x".repeat(3 * 1024 * 1024));
    let response = app
        .client
        .post(app.url("/v1/quotes"))
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "payload_too_large");
    app.stop().await;
}

#[tokio::test]
async fn unrouted_json_paths_are_json_404_not_the_portal() {
    let app = spawn_app().await;
    for path in [
        "/v1",
        "/v1/",
        "/v1/nope",
        "/v1/wallets/x/nope",
        "/mcp/",
        "/mcp/extra",
        "/.well-known/nope",
        "/.well-known/mcp/nope.json",
    ] {
        for method in ["GET", "POST"] {
            let response = app
                .client
                .request(method.parse().unwrap(), app.url(path))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::NOT_FOUND, "{method} {path}");
            let body: Value = response.json().await.expect("a JSON 404");
            assert_eq!(body["code"], "not_found", "{method} {path}");
        }
    }
    app.stop().await;
}

#[tokio::test]
async fn unrouted_oauth_paths_are_json_404_in_the_oauth_shape() {
    let app = spawn_app().await;
    for path in ["/authorize/x", "/token/x", "/register/x", "/revoke/x"] {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        let body: Value = response.json().await.expect("a JSON 404");
        assert_eq!(body["error"], "invalid_request", "{path}");
        assert!(body["error_description"].is_string(), "{path}");
    }
    app.stop().await;
}

#[tokio::test]
async fn portal_paths_keep_the_portal_not_found_page() {
    let app = spawn_app().await;
    for path in ["/nope", "/tokens", "/v10"] {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            content_type.starts_with("text/html"),
            "{path}: {content_type}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn dot_segments_under_v1_are_json_404_never_the_home_page() {
    let app = spawn_app().await;
    for path in [
        "/v1/jobs/../..",
        "/v1/../",
        "/v1/wallets/../../",
        "/.well-known/../..",
    ] {
        let (status, head, body) = raw(&app, &format!("GET {path}"), "", "").await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(error_body(&head, &body)["code"], "not_found", "{path}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_wrong_method_on_a_json_route_is_json_405() {
    let app = spawn_app().await;
    for (method, path) in [
        ("GET", "/v1/quotes"),
        ("DELETE", "/v1/scans"),
        ("POST", "/v1/ping"),
        ("PUT", "/mcp"),
        ("POST", "/.well-known/mcp/server-card.json"),
    ] {
        let response = app
            .client
            .request(method.parse().unwrap(), app.url(path))
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        assert!(response.headers().contains_key("allow"), "{method} {path}");
        let body: Value = response.json().await.expect("a JSON 405");
        assert_eq!(body["code"], "method_not_allowed", "{method} {path}");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.ends_with("the Allow header names what it does"),
            "{message}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn a_declared_body_over_the_cap_is_refused_before_it_is_read() {
    // One byte of a declared 100 GB: the answer comes at once, not after
    // the client has trickled (or failed to send) the rest.
    let app = spawn_app().await;
    for path in ["/v1/quotes", "/mcp"] {
        let addr = app.base.trim_start_matches("http://");
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 99999999999\r\n\r\n{{"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut response = vec![0u8; 4096];
        // A bound on the test, not a timing claim: a server that waits for
        // the body never answers.
        let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut response))
            .await
            .expect("answered without the body")
            .unwrap();
        let text = String::from_utf8_lossy(&response[..n]).to_ascii_lowercase();
        assert!(text.starts_with("http/1.1 413"), "{path}: {text}");
        assert!(text.contains("payload_too_large"), "{path}: {text}");
    }
    app.stop().await;
}

#[tokio::test]
async fn portal_server_function_posts_refuse_cross_site_requests() {
    let app = spawn_app().await;
    let refused = app
        .client
        .post(app.url("/api/list_tools"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", "https://evil.example")
        .header("sec-fetch-site", "cross-site")
        .body("")
        .send()
        .await
        .unwrap();
    assert_refused(refused, StatusCode::FORBIDDEN, "forbidden").await;
    app.stop().await;
}

/// The server with the RPC stand-in (quotes need it) and no worker, so a
/// job that was started stays running where the test can see it.
async fn scan_app() -> (TestApp, standin::StandIn) {
    let stand_in = standin::start(shared(0, Duration::ZERO)).await;
    let url = stand_in.url.clone();
    let app = spawn_with(Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.solana.retry_base_ms = 1;
        }),
        ..Options::default()
    })
    .await;
    (app, stand_in)
}

/// POST /v1/scans for a fresh quote with `headers` and a raw body.
async fn post_scan(
    app: &TestApp,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> reqwest::Response {
    let body = body.unwrap_or_else(|| json!({"quote_id": "q_none"}).to_string());
    let mut request = app.client.post(app.url("/v1/scans")).body(body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request.send().await.unwrap()
}

async fn assert_refused(response: reqwest::Response, status: StatusCode, code: &str) {
    assert_eq!(response.status(), status);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], code);
}

#[tokio::test]
async fn rest_writes_refuse_cross_site_fetch_metadata() {
    let app = spawn_app().await;
    let response = post_scan(
        &app,
        &[
            ("content-type", "application/json"),
            ("sec-fetch-site", "cross-site"),
        ],
        None,
    )
    .await;
    assert_refused(response, StatusCode::FORBIDDEN, "forbidden").await;
    app.stop().await;
}

#[tokio::test]
async fn rest_writes_refuse_a_foreign_origin() {
    let app = spawn_app().await;
    for origin in ["https://evil.example", "null"] {
        let response = post_scan(
            &app,
            &[("content-type", "application/json"), ("origin", origin)],
            None,
        )
        .await;
        assert_refused(response, StatusCode::FORBIDDEN, "forbidden").await;
    }
    // A same-site request (another port of this host) is judged by Origin.
    let response = post_scan(
        &app,
        &[
            ("content-type", "application/json"),
            ("sec-fetch-site", "same-site"),
            ("origin", "http://127.0.0.1:1"),
        ],
        None,
    )
    .await;
    assert_refused(response, StatusCode::FORBIDDEN, "forbidden").await;
    app.stop().await;
}

#[tokio::test]
async fn rest_writes_refuse_a_text_plain_body() {
    let app = spawn_app().await;
    let response = post_scan(&app, &[("content-type", "text/plain")], None).await;
    assert_refused(
        response,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    )
    .await;
    app.stop().await;
}

#[tokio::test]
async fn rest_writes_refuse_a_form_encoded_body() {
    let app = spawn_app().await;
    for content_type in [
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let response = post_scan(&app, &[("content-type", content_type)], None).await;
        assert_refused(
            response,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        )
        .await;
    }
    app.stop().await;
}

#[tokio::test]
async fn rest_writes_refuse_a_body_without_a_content_type() {
    // What a no-cors fetch of an untyped Blob sends.
    let app = spawn_app().await;
    let response = post_scan(&app, &[], None).await;
    assert_refused(
        response,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    )
    .await;
    let response = app
        .client
        .post(app.url("/v1/quotes"))
        .body(json!({"address": WALLET}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    app.stop().await;
}

#[tokio::test]
async fn a_refused_cross_site_scan_starts_no_job() {
    let (app, _stand_in) = scan_app().await;
    let body = json!({"quote_id": quote(&app, "preview").await}).to_string();
    let refused = post_scan(
        &app,
        &[
            ("origin", "https://evil.example"),
            ("sec-fetch-site", "cross-site"),
            ("content-type", "text/plain"),
        ],
        Some(body.clone()),
    )
    .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(
        app.state
            .store()
            .running_job_for(WALLET)
            .await
            .unwrap()
            .is_none()
    );
    // The same request from a client starts it (so the quote was good).
    let started = post_scan(&app, &[("content-type", "application/json")], Some(body)).await;
    assert_eq!(started.status(), StatusCode::ACCEPTED);
    assert!(
        app.state
            .store()
            .running_job_for(WALLET)
            .await
            .unwrap()
            .is_some()
    );
    app.stop().await;
}

#[tokio::test]
async fn rest_writes_from_our_own_origin_are_served() {
    let (app, _stand_in) = scan_app().await;
    let response = app
        .client
        .post(app.url("/v1/quotes"))
        .header("origin", app.base.as_str())
        .header("sec-fetch-site", "same-origin")
        .json(&json!({"address": WALLET}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn reads_are_not_subject_to_the_write_guard() {
    // A cross-site GET reads nothing private (no cookie counts), and a
    // portal page may link to one.
    let app = spawn_app().await;
    let response = app
        .client
        .get(app.url("/v1/ping"))
        .header("sec-fetch-site", "cross-site")
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn a_cookie_without_a_bearer_is_anonymous_on_v1_and_mcp() {
    let app = spawn_app().await;
    let cookie = "id=portal-session; ledger_session=abc";
    let rest: Value = app
        .client
        .get(app.url("/v1/ping"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rest["principal"], json!({"kind": "anonymous"}));
    let mcp = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}}),
            &[("cookie", cookie)],
        )
        .await;
    assert_eq!(
        mcp["result"]["structuredContent"]["principal"],
        json!({"kind": "anonymous"})
    );
    app.stop().await;
}
