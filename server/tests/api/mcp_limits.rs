//! SPEC T6, T7 and A1 at the endpoint: body cap, anonymous rate limit,
//! browser refusals, bearer refusals. One test per refusal.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{Options, spawn_app, spawn_with};

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
    // Default limits: 3 POST/s per IP, burst 6.
    let app = spawn_with(Options::default()).await;
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
    app.stop().await;
}

#[tokio::test]
async fn invalid_bearers_count_against_the_anonymous_limit() {
    let app = spawn_with(Options::default()).await;
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
