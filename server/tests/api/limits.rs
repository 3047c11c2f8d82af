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
    // Nothing was spent: the whole burst is still there.
    for _ in 0..2 {
        let response = call_as(&app, &token, "quote_wallet", json!({})).await;
        assert_eq!(response.status(), StatusCode::OK);
    }
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
        assert_eq!(minted.status(), StatusCode::OK);
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
    let auth = bearer.map(|b| format!("Bearer {b}"));
    let mut headers = Vec::new();
    if let Some(auth) = &auth {
        headers.push(("authorization", auth.as_str()));
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

#[tokio::test]
async fn mcp_sessions_beyond_the_accounts_quota_are_refused_until_one_ends() {
    let app = spawn(|c| c.quota.mcp_sessions_per_account = 2).await;
    let (account, first) = account_token(&app).await;
    let second = another_token(&app, &account).await;
    let opened = initialize_as(&app, Some(&first)).await;
    assert_eq!(opened.status(), StatusCode::OK);
    let session = session_id(opened.headers()).unwrap();
    assert_eq!(
        initialize_as(&app, Some(&second)).await.status(),
        StatusCode::OK
    );
    // The quota is the account's, across its tokens.
    let refused = initialize_as(&app, Some(&second)).await;
    assert!(session_id(refused.headers()).is_none());
    assert_quota(refused, "quota.mcp_sessions_per_account", 2).await;
    // Anonymous sessions and other accounts are not held to it.
    assert_eq!(initialize_as(&app, None).await.status(), StatusCode::OK);
    let (_, stranger) = account_token(&app).await;
    assert_eq!(
        initialize_as(&app, Some(&stranger)).await.status(),
        StatusCode::OK
    );
    // Ending one makes room.
    let ended = app
        .client
        .delete(app.url("/mcp"))
        .bearer_auth(&first)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        initialize_as(&app, Some(&first)).await.status(),
        StatusCode::OK
    );
    app.stop().await;
}

#[tokio::test]
async fn mcp_sessions_beyond_the_servers_quota_are_503_with_retry_after() {
    let app = spawn(|c| c.quota.mcp_sessions_total = 2).await;
    for _ in 0..2 {
        assert_eq!(initialize_as(&app, None).await.status(), StatusCode::OK);
    }
    let (_, token) = account_token(&app).await;
    let refused = initialize_as(&app, Some(&token)).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "unavailable", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("quota.mcp_sessions_total"), "{message}");
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
