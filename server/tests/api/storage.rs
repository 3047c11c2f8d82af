//! The store under the server: health, migrations, session expiry and the
//! maintenance worker. Runs on SQLite and on PostgreSQL.

use reqwest::StatusCode;
use serde_json::{Value, json};
use server::{clock::ManualClock, worker::maintenance_pass};

use crate::helpers::{spawn_app, spawn_with_clock};

#[tokio::test]
async fn healthz_reports_a_migrated_database() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "ok");
    assert!(body["migrations"].as_i64().unwrap() >= 1);
    let expected = match std::env::var("TEST_DATABASE_URL") {
        Ok(url) if url.starts_with("postgres") => "postgres",
        _ => "sqlite",
    };
    assert_eq!(body["database"], expected);
    app.stop().await;
}

#[tokio::test]
async fn migrating_twice_is_harmless() {
    let app = spawn_app().await;
    app.state.store().migrate().await.unwrap();
    assert!(app.state.store().applied_migrations().await.unwrap() >= 1);
    app.stop().await;
}

#[tokio::test]
async fn sessions_expire_and_the_worker_forgets_them() {
    let clock = ManualClock::new(1_800_000_000_000);
    let app = spawn_with_clock(clock.clone()).await;
    let (session, _) = app.initialize("2025-11-25").await;
    assert_eq!(app.state.store().count_sessions().await.unwrap(), 1);
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});

    // Use keeps it alive: 23 h later it still answers and is extended.
    clock.advance_ms(23 * 3_600_000);
    let alive = app
        .post_mcp(&list, &[("mcp-session-id", session.as_str())])
        .await;
    assert_eq!(alive.status(), StatusCode::OK);

    // A pass now removes nothing; a day of silence later it is gone.
    assert_eq!(maintenance_pass(&app.state).await.unwrap().sessions, 0);
    clock.advance_ms(24 * 3_600_000 + 1);
    let expired = app
        .post_mcp(&list, &[("mcp-session-id", session.as_str())])
        .await;
    assert_eq!(expired.status(), StatusCode::NOT_FOUND);
    assert_eq!(maintenance_pass(&app.state).await.unwrap().sessions, 1);
    assert_eq!(app.state.store().count_sessions().await.unwrap(), 0);
    app.stop().await;
}

#[tokio::test]
async fn session_ids_are_stored_only_as_hashes() {
    let app = spawn_app().await;
    let (session, _) = app.initialize("2025-11-25").await;
    let hash = server::mcp::transport::hash_session_id(&session);
    assert_eq!(hash.len(), 64);
    assert_ne!(hash, session);
    // Presenting the hash itself does not open the session.
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[("mcp-session-id", hash.as_str())],
        )
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn rate_limits_refill_with_time() {
    use server::store::{RateDecision, RateRule};
    let app = spawn_app().await;
    let store = app.state.store();
    let rule = RateRule {
        per_second: 3.0,
        burst: 6,
    };
    let t0 = 1_800_000_000_000;
    for _ in 0..6 {
        assert_eq!(
            store.take_rate_token("anon:test", t0, rule).await.unwrap(),
            RateDecision::Allowed
        );
    }
    assert!(matches!(
        store.take_rate_token("anon:test", t0, rule).await.unwrap(),
        RateDecision::Limited { .. }
    ));
    assert_eq!(
        store
            .take_rate_token("anon:test", t0 + 334, rule)
            .await
            .unwrap(),
        RateDecision::Allowed
    );
    assert_eq!(
        store.take_rate_token("anon:other", t0, rule).await.unwrap(),
        RateDecision::Allowed
    );
    assert!(store.purge_rate_limits(t0 + 10_000).await.unwrap() >= 2);
    app.stop().await;
}
