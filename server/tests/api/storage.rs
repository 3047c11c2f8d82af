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

    // An anonymous session idles out after an hour
    // (`mcp.anonymous_session_ttl_secs`). Use keeps it alive: 59 min
    // later it still answers and is extended.
    clock.advance_ms(59 * 60_000);
    let alive = app
        .post_mcp(&list, &[("mcp-session-id", session.as_str())])
        .await;
    assert_eq!(alive.status(), StatusCode::OK);

    // A pass now removes nothing; an hour of silence later it is gone.
    assert_eq!(maintenance_pass(&app.state).await.unwrap().sessions, 0);
    clock.advance_ms(3_600_000 + 1);
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

// ------------------------------------------------- quotas under a race
//
// Many inserts at once against one quota never pass it. On SQLite one
// writer at a time made this hold already; on PostgreSQL (READ COMMITTED)
// two statements could count the same rows and both insert, until each
// quota's insert took its owner's advisory lock (`store::in_quota_tx`).
// Run with `TEST_DATABASE_URL` naming PostgreSQL to test the latter.

/// How many inserts race for each quota.
const RACERS: usize = 40;
/// The quota they race for.
const QUOTA: u32 = 5;

async fn racing_account(app: &crate::helpers::TestApp) -> String {
    server::accounts::create_account(app.state.store(), app.state.now_ms(), "race")
        .await
        .unwrap()
        .as_str()
        .to_owned()
}

/// How many of `results` inserted.
fn inserted(results: Vec<Result<bool, server::store::StoreError>>) -> usize {
    results.into_iter().filter(|r| *r.as_ref().unwrap()).count()
}

#[tokio::test]
async fn concurrent_label_inserts_never_pass_the_quota() {
    let app = spawn_app().await;
    let (store, now) = (app.state.store(), app.state.now_ms());
    let account = racing_account(&app).await;
    let addresses: Vec<String> = (0..RACERS)
        .map(|i| bs58::encode([u8::try_from(i).unwrap() + 1; 32]).into_string())
        .collect();
    let results = futures_util::future::join_all(
        addresses
            .iter()
            .map(|a| store.upsert_address_label(&account, a, "race", "", now, QUOTA)),
    )
    .await;
    assert_eq!(inserted(results), QUOTA as usize);
    assert_eq!(
        store.address_labels_of(&account).await.unwrap().len(),
        QUOTA as usize
    );
    app.stop().await;
}

#[tokio::test]
async fn concurrent_token_mints_never_pass_the_quota() {
    let app = spawn_app().await;
    let (store, now) = (app.state.store(), app.state.now_ms());
    let account = racing_account(&app).await;
    let tokens: Vec<server::store::TokenRecord> = (0..RACERS)
        .map(|i| server::store::TokenRecord {
            id: format!("tok_race{i}"),
            account_id: account.clone(),
            kind: "mcp".to_owned(),
            prefix: format!("lm_race{i}"),
            hash: format!("{i:064x}"),
            scopes: "read".to_owned(),
            label: String::new(),
            created_at: now,
            last_used_at: None,
            revoked_at: None,
        })
        .collect();
    let results =
        futures_util::future::join_all(tokens.iter().map(|t| store.insert_token_within(t, QUOTA)))
            .await;
    assert_eq!(inserted(results), QUOTA as usize);
    assert_eq!(
        store.live_tokens_of(&account).await.unwrap().len(),
        QUOTA as usize
    );
    app.stop().await;
}

#[tokio::test]
async fn concurrent_share_links_never_pass_the_quota() {
    let app = spawn_app().await;
    let (store, now) = (app.state.store(), app.state.now_ms());
    let account = racing_account(&app).await;
    let links: Vec<server::store::ShareLinkRecord> = (0..RACERS)
        .map(|i| server::store::ShareLinkRecord {
            id: format!("shl_race{i}"),
            token_hash: format!("{i:064x}"),
            hint: format!("race{i}"),
            account_id: account.clone(),
            wallet: bs58::encode([7u8; 32]).into_string(),
            chart_range: "90d".to_owned(),
            denominate: "usd".to_owned(),
            created_at: now,
            expires_at: now + 3_600_000,
            revoked_at: None,
        })
        .collect();
    let results = futures_util::future::join_all(
        links.iter().map(|l| store.insert_share_link(l, QUOTA, now)),
    )
    .await;
    assert_eq!(inserted(results), QUOTA as usize);
    assert_eq!(
        store.count_live_share_links(&account, now).await.unwrap(),
        u64::from(QUOTA)
    );
    app.stop().await;
}

#[tokio::test]
async fn concurrent_pending_consents_never_pass_the_quota() {
    let app = spawn_app().await;
    let (store, now) = (app.state.store(), app.state.now_ms());
    let account = racing_account(&app).await;
    let requests: Vec<server::store::OAuthRequestRecord> = (0..RACERS)
        .map(|i| server::store::OAuthRequestRecord {
            id: format!("req_race{i}"),
            client_id: "client_race".to_owned(),
            account_id: account.clone(),
            redirect_uri: "https://claude.ai/api/mcp/auth_callback".to_owned(),
            code_challenge: "x".repeat(43),
            scope: "read".to_owned(),
            resource: String::new(),
            state: None,
            created_at: now,
            expires_at: now + 600_000,
            decided_at: None,
            redirect_uri_named: true,
        })
        .collect();
    let results = futures_util::future::join_all(
        requests
            .iter()
            .map(|r| store.insert_oauth_request(r, QUOTA)),
    )
    .await;
    assert_eq!(inserted(results), QUOTA as usize);
    app.stop().await;
}

#[tokio::test]
async fn concurrent_sessions_never_pass_their_quotas() {
    use server::store::{NewSession, SessionClass, SessionOpened, SessionQuota};
    let app = spawn_app().await;
    let (store, now) = (app.state.store(), app.state.now_ms());
    let account = racing_account(&app).await;
    let quota = SessionQuota {
        per_account: QUOTA,
        total: QUOTA * 2,
        anonymous_per_client: QUOTA,
        anonymous_total: QUOTA * 2,
    };
    let session = |i: usize, class: SessionClass| NewSession {
        id_hash: format!("{i:064x}"),
        protocol_version: "2025-06-18".to_owned(),
        client_name: "race".to_owned(),
        client_version: "1".to_owned(),
        principal: "race".to_owned(),
        class,
        now,
        expires_at: now + 3_600_000,
    };
    let opened = |results: Vec<Result<SessionOpened, server::store::StoreError>>| {
        results
            .into_iter()
            .filter(|r| matches!(r.as_ref().unwrap(), SessionOpened::Opened { .. }))
            .count()
    };
    // One account's sessions: every one opens, the oldest ending, and
    // the account holds its quota at most.
    let mine: Vec<NewSession> = (0..RACERS)
        .map(|i| {
            session(
                i,
                SessionClass::Bearer {
                    account_id: Some(account.clone()),
                },
            )
        })
        .collect();
    let results =
        futures_util::future::join_all(mine.iter().map(|s| store.create_session(s, quota))).await;
    assert_eq!(opened(results), RACERS);
    assert_eq!(store.count_sessions().await.unwrap(), i64::from(QUOTA));
    // One address's anonymous sessions, the same.
    let anonymous: Vec<NewSession> = (RACERS..2 * RACERS)
        .map(|i| {
            session(
                i,
                SessionClass::Anonymous {
                    client: "198.51.100.1".to_owned(),
                },
            )
        })
        .collect();
    let results =
        futures_util::future::join_all(anonymous.iter().map(|s| store.create_session(s, quota)))
            .await;
    assert_eq!(opened(results), RACERS);
    assert_eq!(store.count_sessions().await.unwrap(), i64::from(2 * QUOTA));
    // Bearer sessions of the admin key (no account): refused beyond the
    // total, which holds the account's five already.
    let admin: Vec<NewSession> = (2 * RACERS..3 * RACERS)
        .map(|i| session(i, SessionClass::Bearer { account_id: None }))
        .collect();
    let results =
        futures_util::future::join_all(admin.iter().map(|s| store.create_session(s, quota))).await;
    assert_eq!(opened(results), QUOTA as usize);
    assert_eq!(store.count_sessions().await.unwrap(), i64::from(3 * QUOTA));
    app.stop().await;
}
