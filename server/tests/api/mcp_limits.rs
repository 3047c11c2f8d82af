//! SPEC T6, T7 and A1 at the endpoint: body cap, anonymous rate limit,
//! browser refusals, bearer refusals. One test per refusal.

use reqwest::StatusCode;
use serde_json::{Value, json};

use server::clock::ManualClock;

use crate::helpers::{Options, TestApp, spawn_app, spawn_with};

#[tokio::test]
async fn bodies_over_64_kib_are_413() {
    let app = spawn_app().await;
    let padding = "x".repeat(64 * 1024);
    let body =
        json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad": padding}}).to_string();
    assert!(body.len() > 64 * 1024);
    let response = app.post_mcp_raw(body, &[]).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["code"], "payload_too_large");
    app.stop().await;
}

#[tokio::test]
async fn a_body_just_under_the_cap_is_served() {
    let app = spawn_app().await;
    let overhead = json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad": ""}})
        .to_string()
        .len();
    let padding = "x".repeat(64 * 1024 - overhead);
    let body =
        json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad": padding}}).to_string();
    assert_eq!(body.len(), 64 * 1024);
    let response = app.post_mcp_raw(body, &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn anonymous_callers_get_a_burst_of_six_then_429_with_retry_after() {
    // Default limits: 3 POST/s per IP, burst 6 (on a clock that does not
    // move, so no token comes back while the burst is spent).
    let (app, _clock) = limited_app().await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    let mut statuses = Vec::new();
    for _ in 0..7 {
        statuses.push(app.post_mcp(&ping, &[]).await);
    }
    for response in &statuses[..6] {
        assert_eq!(response.status(), StatusCode::OK);
    }
    let refused = statuses.pop().unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in whole seconds");
    assert!(retry_after >= 1);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited");
    // What an SDK shows its user: "rate limited, retry after N s".
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("rate limited, retry after {retry_after} s")),
        "{message}"
    );
    assert_eq!(body["retry_after"], retry_after);
    app.stop().await;
}

/// Default anonymous limits (burst 6, 3/s) on a clock that only moves when
/// told, so the budget is exact.
async fn limited_app() -> (TestApp, ManualClock) {
    let clock = ManualClock::new(1_700_000_000_000);
    let app = spawn_with(Options {
        clock: std::sync::Arc::new(clock.clone()),
        ..Options::default()
    })
    .await;
    (app, clock)
}

fn pings(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"ping","arguments":{}}}))
            .collect(),
    )
}

const BATCHES: [(&str, &str); 1] = [("mcp-protocol-version", "2025-03-26")];

#[tokio::test]
async fn each_call_in_a_batch_takes_a_token() {
    let (app, _clock) = limited_app().await;
    // Six calls (and notifications, which cost nothing) use the whole burst.
    let mut batch = pings(6);
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    batch.as_array_mut().unwrap().extend([note.clone(), note]);
    let served = app.post_mcp(&batch, &BATCHES).await;
    assert_eq!(served.status(), StatusCode::OK);
    let served: Value = served.json().await.unwrap();
    assert_eq!(served.as_array().map(Vec::len), Some(6));
    let next = app
        .post_mcp(&json!({"jsonrpc":"2.0","id":1,"method":"ping"}), &[])
        .await;
    assert_eq!(next.status(), StatusCode::TOO_MANY_REQUESTS);
    app.stop().await;
}

#[tokio::test]
async fn a_batch_over_the_remaining_budget_is_refused_whole_before_any_call_runs() {
    let (app, clock) = limited_app().await;
    let served = app.post_mcp(&pings(4), &BATCHES).await;
    assert_eq!(served.status(), StatusCode::OK);
    // Two tokens left; a batch of three is refused as a whole.
    let refused = app.post_mcp(&pings(3), &BATCHES).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited", "the /v1 body, not an array");
    // Its own POST was charged (one token), the calls were not: one left.
    let one = app.post_mcp(&pings(1), &BATCHES).await;
    assert_eq!(one.status(), StatusCode::OK);
    let none = app.post_mcp(&pings(1), &BATCHES).await;
    assert_eq!(none.status(), StatusCode::TOO_MANY_REQUESTS);
    // After the Retry-After the budget is back.
    clock.advance_ms(i64::try_from(retry_after).unwrap() * 1000 * 2);
    let later = app.post_mcp(&pings(2), &BATCHES).await;
    assert_eq!(later.status(), StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn a_batch_larger_than_the_burst_is_refused_and_says_why() {
    let (app, _clock) = limited_app().await;
    let refused = app.post_mcp(&pings(7), &BATCHES).await;
    // It could never pass: an invalid request, not a wait a client loops on.
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(!refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("an anonymous batch holds at most 6 requests, this one 7"),
        "{message}"
    );
    // Nothing but its own POST was taken: five single calls still pass.
    for _ in 0..5 {
        let response = app
            .post_mcp(&json!({"jsonrpc":"2.0","id":1,"method":"ping"}), &[])
            .await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    app.stop().await;
}

#[tokio::test]
async fn a_429_status_line_says_rate_limited_retry_after() {
    // The Python MCP SDK shows its user only "Client error '429 <reason>'
    // for url …", never the body: the reason phrase carries the message.
    let (app, _clock) = limited_app().await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"}).to_string();
    let headers =
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    for _ in 0..6 {
        let (status, _, _) = crate::edge::raw(&app, "POST /mcp", headers, &ping).await;
        assert_eq!(status, 200);
    }
    let (status, head, _) = crate::edge::raw(&app, "POST /mcp", headers, &ping).await;
    assert_eq!(status, 429);
    let status_line = head.lines().next().unwrap();
    assert_eq!(status_line, "http/1.1 429 rate limited, retry after 1 s");
    app.stop().await;
}

#[tokio::test]
async fn invalid_bearers_count_against_the_anonymous_limit() {
    // The default anonymous limit; failed bearers' own budget out of the way.
    let app = spawn_with(Options {
        clock: std::sync::Arc::new(ManualClock::new(1_700_000_000_000)),
        configure: Box::new(|c| c.rate_limit.bearer_failure_burst = 1_000),
    })
    .await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    for _ in 0..6 {
        let response = app
            .post_mcp(&ping, &[("authorization", "Bearer lm_guess")])
            .await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    let response = app
        .post_mcp(&ping, &[("authorization", "Bearer lm_guess")])
        .await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let body: Value = response.json().await.unwrap();
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("anonymous requests are limited per client IP"),
        "{message}"
    );
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_bearer_is_401_with_a_protected_resource_challenge() {
    let app = spawn_app().await;
    for token in ["lm_unknown", "lk_unknown", "something-else"] {
        let response = app
            .post_mcp(
                &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
                &[("authorization", &format!("Bearer {token}"))],
            )
            .await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{token}");
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.starts_with("Bearer "), "{challenge}");
        assert!(
            challenge.contains(&format!(
                "resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
                app.base
            )),
            "{challenge}"
        );
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["code"], "unauthenticated");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_malformed_authorization_header_is_401_not_anonymous() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[("authorization", "Basic dXNlcjpwYXNz")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test]
async fn the_rest_route_refuses_unknown_bearers_too() {
    let app = spawn_app().await;
    let response = app
        .client
        .get(app.url("/v1/ping"))
        .header("authorization", "Bearer lk_nope")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.headers().contains_key("www-authenticate"));
    app.stop().await;
}

#[tokio::test]
async fn cross_site_browser_requests_are_403() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[("sec-fetch-site", "cross-site")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "forbidden");
    app.stop().await;
}

#[tokio::test]
async fn foreign_origins_are_403() {
    let app = spawn_app().await;
    for origin in ["https://evil.example", "null", "http://127.0.0.1:1"] {
        let response = app
            .post_mcp(
                &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
                &[("origin", origin)],
            )
            .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{origin}");
    }
    app.stop().await;
}

#[tokio::test]
async fn our_own_origin_and_same_site_requests_are_served() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[
                ("origin", app.base.as_str()),
                ("sec-fetch-site", "same-origin"),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn configured_origins_are_allowed() {
    let app = spawn_with(Options {
        configure: Box::new(|c| {
            crate::helpers::relaxed_limits(c);
            c.allowed_origins = vec!["https://inspector.example".into()];
        }),
        ..Options::default()
    })
    .await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[("origin", "https://inspector.example")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn delete_is_refused_cross_site_too() {
    let app = spawn_app().await;
    let response = app
        .client
        .delete(app.url("/mcp"))
        .header("mcp-session-id", "x")
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    app.stop().await;
}

#[tokio::test]
async fn ending_a_session_is_charged_to_the_anonymous_budget() {
    let (app, _clock) = limited_app().await;
    let (session, _) = app.initialize("2025-06-18").await;
    let delete = || {
        app.client
            .delete(app.url("/mcp"))
            .header("mcp-session-id", "no-such-session")
            .send()
    };
    // The burst of six: initialize took one, four DELETEs take four.
    for _ in 0..4 {
        assert_eq!(delete().await.unwrap().status(), StatusCode::NOT_FOUND);
    }
    let ended = app
        .client
        .delete(app.url("/mcp"))
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    // Spent: a DELETE is refused like any other request.
    let refused = delete().await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
    app.stop().await;
}
