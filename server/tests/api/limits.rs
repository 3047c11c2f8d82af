//! Limits against abuse, each refusal its own test on a clock that moves
//! only when told (so every budget is exact): failed bearers never lock
//! out a valid one; bearer traffic per account and per address, weighted
//! by the cost table; sign-in challenges and sign-ups per address; quotas
//! on labels, tokens and MCP sessions; the anonymous burst that follows
//! its rate; IPv6 keyed by /64. docs/configuration.md#rate-limits and
//! #quotas are the long form. (Pending OAuth consents are in `oauth`.)

use std::sync::Arc;

use ed25519_dalek::{Signer, SigningKey};
use reqwest::StatusCode;
use serde_json::{Value, json};
use server::{
    accounts::{self, AccountId, Scopes, TokenKind},
    clock::ManualClock,
    config::Config,
    limits::costs,
};

use crate::{
    helpers::{Options, TestApp, relaxed_limits, session_id, spawn_with},
    portal::{Browser, sign_in},
};

/// Relaxed limits, then `configure`, on a frozen clock.
async fn spawn(configure: impl FnOnce(&mut Config) + Send + 'static) -> TestApp {
    spawn_with(Options {
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        configure: Box::new(move |c| {
            relaxed_limits(c);
            configure(c);
        }),
    })
    .await
}

/// A new account and an MCP token for it.
async fn account_token(app: &TestApp) -> (AccountId, String) {
    let store = app.state.store();
    let now = app.state.now_ms();
    let account = accounts::create_account(store, now, "limits")
        .await
        .unwrap();
    let token = another_token(app, &account).await;
    (account, token)
}

async fn another_token(app: &TestApp, account: &AccountId) -> String {
    accounts::mint(
        app.state.store(),
        app.state.now_ms(),
        account,
        TokenKind::Mcp,
        Scopes::parse("read,scan").unwrap(),
        "",
    )
    .await
    .unwrap()
    .plaintext
}

async fn ping_as(app: &TestApp, bearer: &str) -> reqwest::Response {
    app.client
        .get(app.url("/v1/ping"))
        .bearer_auth(bearer)
        .send()
        .await
        .unwrap()
}

/// `tools/call` of `name` with `arguments` over `/mcp` as `bearer`.
async fn call_as(app: &TestApp, bearer: &str, name: &str, arguments: Value) -> reqwest::Response {
    let auth = format!("Bearer {bearer}");
    app.post_mcp(
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                "params":{"name":name,"arguments":arguments}}),
        &[("authorization", &auth)],
    )
    .await
}

fn guess(i: u8) -> String {
    format!("lm_{}", bs58::encode([i; 32]).into_string())
}

/// A 429 with a `Retry-After` of whole seconds and the `rate_limited`
/// body whose message says `why`.
async fn assert_rate_limited(response: reqwest::Response, why: &str) {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in whole seconds");
    assert!(retry_after >= 1);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited", "{body}");
    assert_eq!(body["retry_after"], retry_after);
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("rate limited, retry after {retry_after} s; ")),
        "{message}"
    );
    assert!(message.contains(why), "{message}");
}

/// A 409 `conflict` naming the quota's setting, with its `limit`.
async fn assert_quota(response: reqwest::Response, setting: &str, limit: u32) {
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let body: Value = response.json().await.unwrap();
    assert_quota_body(&body, setting, limit);
}

fn assert_quota_body(body: &Value, setting: &str, limit: u32) {
    assert_eq!(body["code"], "conflict", "{body}");
    assert_eq!(body["limit"], limit, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains(setting), "{message}");
    assert!(message.contains(&format!("({limit}, ")), "{message}");
}

// ------------------------------------------------------------ the table

#[test]
fn the_cost_table_prices_every_tool_at_its_rest_route() {
    let registry = server::mcp::tools::registry();
    for tool in registry.iter() {
        let row = costs::TABLE
            .iter()
            .find(|row| row.tool == Some(tool.meta.name))
            .unwrap_or_else(|| panic!("{} has no row in limits::costs::TABLE", tool.meta.name));
        let rest = tool.meta.rest.as_ref().expect("every tool has a REST twin");
        assert_eq!(
            (row.method, row.path),
            (rest.method, rest.path),
            "{}",
            tool.meta.name
        );
    }
    for row in costs::TABLE {
        if let Some(name) = row.tool {
            assert!(registry.get(name).is_some(), "{name} is no tool");
        }
    }
}

// ------------------------------------------------------ failed bearers

/// Three failed bearers per address at once, refilled once in 1000 s.
fn three_failures(c: &mut Config) {
    c.rate_limit.bearer_failures_per_sec = 0.001;
    c.rate_limit.bearer_failure_burst = 3;
}

#[tokio::test]
async fn a_valid_bearer_is_served_after_its_address_spent_the_failed_bearer_budget() {
    let app = spawn(three_failures).await;
    let (_, token) = account_token(&app).await;
    for i in 0..3 {
        assert_eq!(
            ping_as(&app, &guess(i)).await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(
        ping_as(&app, &guess(3)).await.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "the failure budget is spent"
    );
    // Someone else behind the same address, with a valid token.
    let served = ping_as(&app, &token).await;
    assert_eq!(served.status(), StatusCode::OK);
    let body: Value = served.json().await.unwrap();
    assert_eq!(body["principal"]["kind"], "account", "{body}");
    // And over MCP.
    let served = call_as(&app, &token, "ping", json!({})).await;
    assert_eq!(served.status(), StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn failed_bearers_beyond_the_budget_are_429_even_after_a_valid_one() {
    let app = spawn(three_failures).await;
    let (_, token) = account_token(&app).await;
    for i in 0..3 {
        assert_eq!(
            ping_as(&app, &guess(i)).await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(ping_as(&app, &token).await.status(), StatusCode::OK);
    assert_rate_limited(
        ping_as(&app, &guess(4)).await,
        "too many unknown or revoked bearers from this address",
    )
    .await;
    app.stop().await;
}

// ------------------------------------------------------ bearer traffic

/// An account may spend 20 units at once, refilled at one unit in 1000 s;
/// its address is not the limit.
fn account_budget_of_twenty(c: &mut Config) {
    c.rate_limit.account_units_per_sec = 0.001;
    c.rate_limit.account_burst_units = 20;
}

#[tokio::test]
async fn an_account_over_its_bearer_budget_is_429_with_retry_after() {
    let app = spawn(account_budget_of_twenty).await;
    let (account, token) = account_token(&app).await;
    // A ping costs one unit: twenty pass.
    for _ in 0..20 {
        assert_eq!(ping_as(&app, &token).await.status(), StatusCode::OK);
    }
    // The budget is the account's, whichever of its tokens calls.
    let other = another_token(&app, &account).await;
    assert_rate_limited(ping_as(&app, &other).await, "this account may spend").await;
    // Another account is not held to it.
    let (_, stranger) = account_token(&app).await;
    assert_eq!(ping_as(&app, &stranger).await.status(), StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn a_tool_call_that_reaches_solana_rpc_costs_ten_units() {
    let app = spawn(account_budget_of_twenty).await;
    let (_, token) = account_token(&app).await;
    assert_eq!(
        costs::of_tool("quote_wallet").units(),
        10,
        "the table's price"
    );
    // Charged before the call runs, so arguments the schema refuses (and
    // no RPC made) still show the price: two quotes spend twenty units.
    for _ in 0..2 {
        let response = call_as(&app, &token, "quote_wallet", json!({})).await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let refused = call_as(&app, &token, "ping", json!({})).await;
    assert_rate_limited(refused, "this call costs 1").await;
    app.stop().await;
}

#[tokio::test]
async fn a_rest_call_is_charged_its_routes_cost() {
    let app = spawn(account_budget_of_twenty).await;
    let (_, token) = account_token(&app).await;
    for _ in 0..2 {
        // POST /v1/quotes is quote_wallet's twin: ten units, even when
        // its body is then refused.
        let response = app
            .client
            .post(app.url("/v1/quotes"))
            .bearer_auth(&token)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
    assert_rate_limited(ping_as(&app, &token).await, "this account may spend").await;
    app.stop().await;
}

#[tokio::test]
async fn a_bearer_batch_dearer_than_a_whole_burst_is_refused_and_says_why() {
    let app = spawn(account_budget_of_twenty).await;
    let (_, token) = account_token(&app).await;
    let calls: Vec<Value> = (0..3)
        .map(|i| {
            json!({"jsonrpc":"2.0","id":i,"method":"tools/call",
                        "params":{"name":"quote_wallet","arguments":{}}})
        })
        .collect();
    let auth = format!("Bearer {token}");
    let refused = app
        .post_mcp(
            &Value::Array(calls),
            &[
                ("authorization", &auth),
                ("mcp-protocol-version", "2025-03-26"),
            ],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(!refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("costs 30 units"), "{message}");
    // Only the POST's admission unit was spent: nineteen are left, a
    // quote's ten and nine pings.
    let response = call_as(&app, &token, "quote_wallet", json!({})).await;
    assert_eq!(response.status(), StatusCode::OK);
    for _ in 0..9 {
        assert_eq!(ping_as(&app, &token).await.status(), StatusCode::OK);
    }
    assert_rate_limited(ping_as(&app, &token).await, "this account may spend").await;
    app.stop().await;
}

#[tokio::test]
async fn the_bearers_of_one_address_share_its_budget() {
    let app = spawn(|c| {
        c.rate_limit.bearer_ip_units_per_sec = 0.001;
        c.rate_limit.bearer_ip_burst_units = 20;
    })
    .await;
    let (_, alice) = account_token(&app).await;
    let (_, bob) = account_token(&app).await;
    for _ in 0..10 {
        assert_eq!(ping_as(&app, &alice).await.status(), StatusCode::OK);
        assert_eq!(ping_as(&app, &bob).await.status(), StatusCode::OK);
    }
    let (_, carol) = account_token(&app).await;
    assert_rate_limited(
        ping_as(&app, &carol).await,
        "the bearers of this address may spend",
    )
    .await;
    app.stop().await;
}

/// `GET /v1/ping` as `bearer` from client address `from`.
async fn ping_from(app: &TestApp, bearer: &str, from: &str) -> reqwest::Response {
    app.client
        .get(app.url("/v1/ping"))
        .bearer_auth(bearer)
        .header("x-forwarded-for", from)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_refusal_by_the_addresss_budget_spends_none_of_the_accounts() {
    let app = spawn(|c| {
        account_budget_of_twenty(c);
        c.rate_limit.bearer_ip_units_per_sec = 0.001;
        c.rate_limit.bearer_ip_burst_units = 10;
        c.trust_forwarded_for = true;
    })
    .await;
    let (_, token) = account_token(&app).await;
    for _ in 0..10 {
        assert_eq!(
            ping_from(&app, &token, "198.51.100.1").await.status(),
            StatusCode::OK
        );
    }
    for _ in 0..5 {
        assert_rate_limited(
            ping_from(&app, &token, "198.51.100.1").await,
            "the bearers of this address may spend",
        )
        .await;
    }
    // The five refusals took nothing from the account: from another
    // address it still has the other ten of its twenty units.
    for i in 0..10 {
        let response = ping_from(&app, &token, "198.51.100.2").await;
        assert_eq!(response.status(), StatusCode::OK, "ping {i}");
    }
    assert_rate_limited(
        ping_from(&app, &token, "198.51.100.3").await,
        "this account may spend",
    )
    .await;
    app.stop().await;
}

#[tokio::test]
async fn a_bearers_mcp_post_refused_before_its_body_is_read_is_still_charged() {
    let app = spawn(account_budget_of_twenty).await;
    let (_, token) = account_token(&app).await;
    for _ in 0..10 {
        // Not JSON by its media type: 415 before a byte is read.
        let refused = app
            .client
            .post(app.url("/mcp"))
            .bearer_auth(&token)
            .header("content-type", "text/plain")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        // Not JSON by its bytes: -32700 before any call is known.
        let auth = format!("Bearer {token}");
        let unparsed = app.post_mcp_raw("{", &[("authorization", &auth)]).await;
        assert_eq!(unparsed.status(), StatusCode::BAD_REQUEST);
    }
    assert_rate_limited(ping_as(&app, &token).await, "this account may spend").await;
    app.stop().await;
}

#[tokio::test]
async fn every_delete_of_a_bearer_is_charged() {
    let app = spawn(account_budget_of_twenty).await;
    let (_, token) = account_token(&app).await;
    for _ in 0..20 {
        let ended = app
            .client
            .delete(app.url("/mcp"))
            .bearer_auth(&token)
            .header("mcp-session-id", "no-such-session")
            .send()
            .await
            .unwrap();
        assert_eq!(ended.status(), StatusCode::NOT_FOUND);
    }
    assert_rate_limited(ping_as(&app, &token).await, "this account may spend").await;
    app.stop().await;
}

/// `n` distinct wallet addresses.
fn wallets(n: u8) -> Vec<String> {
    (1..=n)
        .map(|i| bs58::encode([i; 32]).into_string())
        .collect()
}

#[tokio::test]
async fn a_report_is_charged_for_each_wallet_and_more_as_a_pdf() {
    let app = spawn(account_budget_of_twenty).await;
    assert_eq!(costs::REPLAY_UNITS_PER_WALLET, 5);
    assert_eq!(costs::PDF_UNITS, 5);
    // Four wallets: 4 × 5 units, the whole budget, whatever it answers
    // (none of them was ever scanned).
    let (_, token) = account_token(&app).await;
    let report = call_as(
        &app,
        &token,
        "get_report",
        json!({"wallets": wallets(4), "format": "json"}),
    )
    .await;
    assert_eq!(report.status(), StatusCode::OK);
    assert_rate_limited(ping_as(&app, &token).await, "this account may spend").await;
    // REST: three wallets as a PDF, 3 × 5 + 5.
    let (_, other) = account_token(&app).await;
    let report = app
        .client
        .get(app.url("/v1/reports"))
        .query(&[
            ("wallets", wallets(3).join(",").as_str()),
            ("format", "pdf"),
        ])
        .bearer_auth(&other)
        .send()
        .await
        .unwrap();
    assert_ne!(report.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_rate_limited(ping_as(&app, &other).await, "this account may spend").await;
    // The same three as JSON leave five units: five pings.
    let (_, third) = account_token(&app).await;
    let report = app
        .client
        .get(app.url("/v1/reports"))
        .query(&[
            ("wallets", wallets(3).join(",").as_str()),
            ("format", "json"),
        ])
        .bearer_auth(&third)
        .send()
        .await
        .unwrap();
    assert_ne!(report.status(), StatusCode::TOO_MANY_REQUESTS);
    for _ in 0..5 {
        assert_eq!(ping_as(&app, &third).await.status(), StatusCode::OK);
    }
    assert_rate_limited(ping_as(&app, &third).await, "this account may spend").await;
    app.stop().await;
}

#[tokio::test]
async fn a_read_presenting_a_payment_costs_what_a_call_to_solana_rpc_does() {
    let app = spawn(account_budget_of_twenty).await;
    assert_eq!(costs::CHAIN_UNITS, 10);
    let wallet = &wallets(1)[0];
    // A payment argument (a stored read alone costs 2).
    let (_, token) = account_token(&app).await;
    let read = call_as(
        &app,
        &token,
        "get_ledger",
        json!({"address": wallet, "payment": "AAAA"}),
    )
    .await;
    assert_eq!(read.status(), StatusCode::OK);
    // An X-PAYMENT header on the REST twin.
    let read = app
        .client
        .get(app.url(&format!("/v1/wallets/{wallet}/ledger")))
        .bearer_auth(&token)
        .header("x-payment", "AAAA")
        .send()
        .await
        .unwrap();
    assert_ne!(read.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_rate_limited(ping_as(&app, &token).await, "this account may spend").await;
    // A payment in a REST body: create_snapshot (a stored read too).
    let (_, other) = account_token(&app).await;
    for _ in 0..2 {
        let minted = app
            .client
            .post(app.url("/v1/snapshots"))
            .bearer_auth(&other)
            .json(&json!({"address": wallet, "payment": "AAAA"}))
            .send()
            .await
            .unwrap();
        assert_ne!(minted.status(), StatusCode::TOO_MANY_REQUESTS);
    }
    assert_rate_limited(ping_as(&app, &other).await, "this account may spend").await;
    app.stop().await;
}

// ------------------------------------------------------------ sign-in

fn wallet() -> SigningKey {
    SigningKey::from_bytes(&rand::random::<[u8; 32]>())
}

async fn challenge(app: &TestApp, key: &SigningKey) -> reqwest::Response {
    let address = bs58::encode(key.verifying_key().to_bytes()).into_string();
    app.client
        .post(app.url("/auth/solana/challenge"))
        .json(&json!({ "address": address }))
        .send()
        .await
        .unwrap()
}

/// Challenge and verify with `key`: the verify response.
async fn siws(app: &TestApp, key: &SigningKey) -> reqwest::Response {
    let challenge = challenge(app, key).await;
    assert_eq!(challenge.status(), StatusCode::OK);
    let challenge: Value = challenge.json().await.unwrap();
    let message = challenge["message"].as_str().unwrap();
    let signature = bs58::encode(key.sign(message.as_bytes()).to_bytes()).into_string();
    app.client
        .post(app.url("/auth/solana/verify"))
        .json(&json!({ "message": message, "signature": signature }))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn sign_in_challenges_beyond_the_per_address_rate_are_429() {
    let app = spawn(|c| {
        c.rate_limit.siws_challenges_per_minute = 1;
        c.rate_limit.siws_challenge_burst = 3;
    })
    .await;
    let key = wallet();
    for _ in 0..3 {
        assert_eq!(challenge(&app, &key).await.status(), StatusCode::OK);
    }
    assert_rate_limited(
        challenge(&app, &key).await,
        "sign-in challenges from this address are limited to 1 a minute",
    )
    .await;
    app.stop().await;
}

#[tokio::test]
async fn sign_ups_beyond_the_per_address_rate_are_429_and_sign_ins_still_pass() {
    let app = spawn(|c| {
        c.rate_limit.signups_per_hour = 1;
        c.rate_limit.signup_burst = 2;
    })
    .await;
    let first = wallet();
    for key in [&first, &wallet()] {
        let created: Value = siws(&app, key).await.json().await.unwrap();
        assert_eq!(created["created"], true, "{created}");
    }
    assert_rate_limited(siws(&app, &wallet()).await, "sign-ups").await;
    // Signing in to an account that exists creates nothing and passes.
    let again = siws(&app, &first).await;
    assert_eq!(again.status(), StatusCode::OK);
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["created"], false, "{again}");
    app.stop().await;
}

#[tokio::test]
async fn google_first_sign_ins_count_against_the_same_sign_up_rate() {
    let standin = crate::oidc_standin::start(crate::oidc_standin::Options::default()).await;
    let issuer = standin.issuer.clone();
    let app = spawn(move |c| {
        c.rate_limit.signups_per_hour = 1;
        c.rate_limit.signup_burst = 1;
        c.google.issuer = issuer;
        c.google.client_id = Some(crate::oidc_standin::CLIENT_ID.to_owned());
        c.google.client_secret = Some(crate::oidc_standin::CLIENT_SECRET.to_owned());
    })
    .await;
    // Each Google subject (the stand-in's login_hint) is a new account.
    let mut statuses = Vec::new();
    for subject in ["100000000000000000101", "100000000000000000102"] {
        let mut browser = Browser::new();
        let start = browser.get(&app.url("/auth/google/start")).await;
        assert_eq!(start.status(), StatusCode::FOUND);
        let authorize = start.headers()["location"].to_str().unwrap().to_owned();
        let provider = browser
            .get(&format!("{authorize}&login_hint={subject}"))
            .await;
        assert_eq!(provider.status(), StatusCode::FOUND);
        let callback = provider.headers()["location"].to_str().unwrap().to_owned();
        let done = browser.get(&callback).await;
        let status = done.status();
        let page = done.text().await.unwrap();
        statuses.push((status, page));
    }
    assert_eq!(statuses[0].0, StatusCode::SEE_OTHER, "{}", statuses[0].1);
    assert_eq!(statuses[1].0, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        statuses[1].1.contains("are limited to 1 an hour"),
        "{}",
        statuses[1].1
    );
    app.stop().await;
}

// ------------------------------------------------------------- quotas

#[tokio::test]
async fn address_labels_beyond_the_quota_are_refused_and_relabelling_still_passes() {
    let app = spawn(|c| c.quota.labels_per_account = 2).await;
    let (_, token) = account_token(&app).await;
    let address = |i: u8| bs58::encode([i + 1; 32]).into_string();
    let set = |i: u8, label: &'static str| {
        let app = &app;
        let token = &token;
        async move {
            let response = call_as(
                app,
                token,
                "set_address_label",
                json!({"address": address(i), "label": label}),
            )
            .await;
            assert_eq!(response.status(), StatusCode::OK);
            let body: Value = response.json().await.unwrap();
            body["result"].clone()
        }
    };
    for i in 0..2 {
        assert_eq!(set(i, "kept").await["isError"], false);
    }
    let refused = set(2, "one too many").await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_quota_body(&refused["structuredContent"], "quota.labels_per_account", 2);
    assert_eq!(set(0, "renamed").await["isError"], false, "a relabel");
    // REST says the same with its status.
    let rest = app
        .client
        .post(app.url("/v1/labels"))
        .bearer_auth(&token)
        .json(&json!({"address": address(3), "label": "x"}))
        .send()
        .await
        .unwrap();
    assert_quota(rest, "quota.labels_per_account", 2).await;
    app.stop().await;
}

#[tokio::test]
async fn minting_beyond_the_token_quota_is_refused_on_the_keys_page() {
    let app = spawn(|c| c.quota.tokens_per_account = 2).await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let mint = |csrf: String| {
        vec![
            ("csrf", csrf),
            ("kind", "api".to_owned()),
            ("scope_read", "on".to_owned()),
        ]
    };
    for _ in 0..2 {
        let csrf = browser.csrf(&app).await;
        let form = mint(csrf);
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let minted = browser.post_form(&app.url("/keys"), &form).await;
        // Post/redirect/get: a mint answers 303 to the Keys page.
        assert_eq!(minted.status(), StatusCode::SEE_OTHER);
    }
    let csrf = browser.csrf(&app).await;
    let form = mint(csrf);
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let refused = browser.post_form(&app.url("/keys"), &form).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let page = refused.text().await.unwrap();
    assert!(page.contains("quota.tokens_per_account"), "{page}");
    let live = accounts::list_tokens(app.state.store(), &account)
        .await
        .unwrap();
    assert_eq!(live.len(), 2, "nothing minted");
    app.stop().await;
}

async fn initialize_as(app: &TestApp, bearer: Option<&str>) -> reqwest::Response {
    initialize_from(app, bearer, None).await
}

/// `initialize` as `bearer` (none: anonymously), from client address
/// `from` (an `X-Forwarded-For` the server trusts) when given.
async fn initialize_from(
    app: &TestApp,
    bearer: Option<&str>,
    from: Option<&str>,
) -> reqwest::Response {
    let auth = bearer.map(|b| format!("Bearer {b}"));
    let mut headers = Vec::new();
    if let Some(auth) = &auth {
        headers.push(("authorization", auth.as_str()));
    }
    if let Some(from) = from {
        headers.push(("x-forwarded-for", from));
    }
    app.post_mcp(
        &json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name":"limits","version":"1"}}}),
        &headers,
    )
    .await
}

/// A session opened as `bearer` from `from`: its id.
async fn session_from(app: &TestApp, bearer: Option<&str>, from: Option<&str>) -> String {
    let opened = initialize_from(app, bearer, from).await;
    assert_eq!(opened.status(), StatusCode::OK);
    session_id(opened.headers()).expect("Mcp-Session-Id")
}

/// The status of a `tools/list` in `session` as `bearer`: 200 while the
/// session lives (and the call makes it the most recently used), 404 once
/// it ended.
async fn use_session(app: &TestApp, session: &str, bearer: Option<&str>) -> StatusCode {
    let auth = bearer.map(|b| format!("Bearer {b}"));
    let mut headers = vec![("mcp-session-id", session)];
    if let Some(auth) = &auth {
        headers.push(("authorization", auth.as_str()));
    }
    app.post_mcp(
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        &headers,
    )
    .await
    .status()
}

/// Relaxed limits, client addresses from `X-Forwarded-For`, then
/// `configure`, on a clock the test moves (so "least recently used" is
/// exact): the app and its clock.
async fn spawn_clocked(
    configure: impl FnOnce(&mut Config) + Send + 'static,
) -> (TestApp, ManualClock) {
    let clock = ManualClock::new(1_700_000_000_000);
    let app = spawn_with(Options {
        clock: Arc::new(clock.clone()),
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.trust_forwarded_for = true;
            configure(c);
        }),
    })
    .await;
    (app, clock)
}

#[tokio::test]
async fn anonymous_sessions_never_refuse_a_bearers_initialize() {
    let (app, clock) = spawn_clocked(|c| {
        c.quota.mcp_sessions_total = 2;
        c.quota.mcp_anonymous_sessions_total = 2;
        c.quota.mcp_anonymous_sessions_per_ip = 2;
    })
    .await;
    // Anonymous callers from many addresses open more sessions than
    // either total: each is served, the oldest anonymous ones ending.
    for i in 0..5 {
        clock.advance_ms(1_000);
        session_from(&app, None, Some(&format!("198.51.100.{i}"))).await;
    }
    assert_eq!(app.state.store().count_sessions().await.unwrap(), 2);
    let (_, token) = account_token(&app).await;
    let opened = initialize_as(&app, Some(&token)).await;
    assert_eq!(
        opened.status(),
        StatusCode::OK,
        "anonymous sessions do not count"
    );
    assert!(session_id(opened.headers()).is_some());
    app.stop().await;
}

#[tokio::test]
async fn an_address_over_its_anonymous_session_quota_ends_its_least_recently_used_session() {
    let (app, clock) = spawn_clocked(|c| c.quota.mcp_anonymous_sessions_per_ip = 2).await;
    let here = Some("198.51.100.1");
    let first = session_from(&app, None, here).await;
    clock.advance_ms(1_000);
    let second = session_from(&app, None, here).await;
    clock.advance_ms(1_000);
    let elsewhere = session_from(&app, None, Some("198.51.100.2")).await;
    clock.advance_ms(1_000);
    // Used last, the first is no longer the least recently used.
    assert_eq!(use_session(&app, &first, None).await, StatusCode::OK);
    clock.advance_ms(1_000);
    let third = session_from(&app, None, here).await;
    assert_eq!(
        use_session(&app, &second, None).await,
        StatusCode::NOT_FOUND,
        "the address's least recently used session ended"
    );
    for kept in [&first, &third, &elsewhere] {
        assert_eq!(use_session(&app, kept, None).await, StatusCode::OK);
    }
    app.stop().await;
}

#[tokio::test]
async fn anonymous_sessions_over_the_servers_anonymous_quota_end_the_least_recently_used_anywhere()
{
    let (app, clock) = spawn_clocked(|c| c.quota.mcp_anonymous_sessions_total = 2).await;
    let oldest = session_from(&app, None, Some("198.51.100.1")).await;
    clock.advance_ms(1_000);
    let middle = session_from(&app, None, Some("198.51.100.2")).await;
    clock.advance_ms(1_000);
    let newest = session_from(&app, None, Some("198.51.100.3")).await;
    assert_eq!(
        use_session(&app, &oldest, None).await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(use_session(&app, &middle, None).await, StatusCode::OK);
    assert_eq!(use_session(&app, &newest, None).await, StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn anonymous_sessions_idle_out_sooner_than_bearer_sessions() {
    let (app, clock) = spawn_clocked(|c| {
        c.mcp.anonymous_session_ttl_secs = 3_600;
        c.mcp.session_ttl_secs = 86_400;
    })
    .await;
    let (_, token) = account_token(&app).await;
    let anonymous = session_from(&app, None, None).await;
    let bearer = session_from(&app, Some(&token), None).await;
    clock.advance_ms(3_600_000 + 1);
    assert_eq!(
        use_session(&app, &anonymous, None).await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        use_session(&app, &bearer, Some(&token)).await,
        StatusCode::OK
    );
    app.stop().await;
}

#[tokio::test]
async fn an_accounts_session_over_its_quota_ends_its_least_recently_used_session() {
    let (app, clock) = spawn_clocked(|c| c.quota.mcp_sessions_per_account = 2).await;
    let (account, first) = account_token(&app).await;
    let second = another_token(&app, &account).await;
    let (_, stranger) = account_token(&app).await;
    let strangers = session_from(&app, Some(&stranger), None).await;
    clock.advance_ms(1_000);
    let older = session_from(&app, Some(&first), None).await;
    clock.advance_ms(1_000);
    let newer = session_from(&app, Some(&second), None).await;
    clock.advance_ms(1_000);
    assert_eq!(
        use_session(&app, &older, Some(&first)).await,
        StatusCode::OK
    );
    clock.advance_ms(1_000);
    // The quota is the account's, across its tokens: a third session
    // opens and the account's least recently used (the second token's)
    // ends.
    let third = session_from(&app, Some(&second), None).await;
    assert_eq!(
        use_session(&app, &newer, Some(&second)).await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        use_session(&app, &older, Some(&first)).await,
        StatusCode::OK
    );
    assert_eq!(
        use_session(&app, &third, Some(&second)).await,
        StatusCode::OK
    );
    // Another account's session is not the account's to end.
    assert_eq!(
        use_session(&app, &strangers, Some(&stranger)).await,
        StatusCode::OK
    );
    app.stop().await;
}

#[tokio::test]
async fn bearer_sessions_beyond_the_servers_quota_are_503_with_retry_after() {
    let app = spawn(|c| c.quota.mcp_sessions_total = 2).await;
    for _ in 0..2 {
        let (_, token) = account_token(&app).await;
        assert_eq!(
            initialize_as(&app, Some(&token)).await.status(),
            StatusCode::OK
        );
    }
    let (_, token) = account_token(&app).await;
    let refused = initialize_as(&app, Some(&token)).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "unavailable", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("quota.mcp_sessions_total"), "{message}");
    // Anonymous sessions have a quota of their own.
    assert_eq!(initialize_as(&app, None).await.status(), StatusCode::OK);
    app.stop().await;
}

// ------------------------------------------------------- anonymous

#[tokio::test]
async fn an_anonymous_burst_left_unset_is_twice_the_rate() {
    let app = spawn_with(Options {
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        configure: Box::new(|c| {
            c.rate_limit.anon_rps = 10.0;
            c.rate_limit.anon_burst = None;
        }),
    })
    .await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    for i in 0..20 {
        let response = app.post_mcp(&ping, &[]).await;
        assert_eq!(response.status(), StatusCode::OK, "request {i}");
    }
    let refused = app.post_mcp(&ping, &[]).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    app.stop().await;
}

#[tokio::test]
async fn anonymous_ipv6_callers_share_one_budget_per_64() {
    let app = spawn_with(Options {
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        configure: Box::new(|c| {
            c.trust_forwarded_for = true;
            c.rate_limit.anon_rps = 0.001;
            c.rate_limit.anon_burst = Some(2);
        }),
    })
    .await;
    let ping = |from: &'static str| {
        let app = &app;
        async move {
            app.client
                .get(app.url("/v1/ping"))
                .header("x-forwarded-for", from)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(ping("2001:db8:1:2::1").await, StatusCode::OK);
    assert_eq!(ping("2001:db8:1:2:ffff::2").await, StatusCode::OK);
    assert_eq!(
        ping("2001:db8:1:2::3").await,
        StatusCode::TOO_MANY_REQUESTS,
        "the same /64"
    );
    assert_eq!(ping("2001:db8:1:3::1").await, StatusCode::OK, "another /64");
    assert_eq!(ping("203.0.113.7").await, StatusCode::OK);
    app.stop().await;
}
