//! Bearers on `/mcp` and `/v1`: MCP tokens and API keys resolve to their
//! account and scopes, every refusal (unknown, revoked, malformed, missing
//! scope, anonymous on an account tool) has its own test, owner reads are
//! free, payments made with a bearer belong to the account, and the admin
//! key reads any job. docs/accounts.md is the long form.

use reqwest::StatusCode;
use serde_json::{Value, json};
use server::accounts::{self, AccountId, Scopes, TokenKind};
use sha2::{Digest, Sha256};

use crate::{
    helpers::{Options, TestApp, relaxed_limits, spawn_app, spawn_with},
    payments::{Paid, paid_app},
    scans::WALLET,
};

/// A new account and a token of `kind` with `scopes` for it.
async fn mint_token(app: &TestApp, kind: TokenKind, scopes: &str) -> (AccountId, String) {
    let store = app.state.store();
    let now = app.state.now_ms();
    let account = accounts::create_account(store, now, "tests").await.unwrap();
    let minted = accounts::mint(
        store,
        now,
        &account,
        kind,
        Scopes::parse(scopes).unwrap(),
        "test token",
    )
    .await
    .unwrap();
    (account, minted.plaintext.clone())
}

/// `tools/call` with `Authorization: Bearer {bearer}`: the HTTP status and
/// the JSON body.
async fn call_as(app: &TestApp, bearer: &str, name: &str, arguments: Value) -> (StatusCode, Value) {
    let auth = format!("Bearer {bearer}");
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":name,"arguments":arguments}}),
            &[("authorization", &auth)],
        )
        .await;
    let status = response.status();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(json!({"raw": text})),
    )
}

async fn get_as(app: &TestApp, bearer: Option<&str>, path: &str) -> reqwest::Response {
    let mut request = app.client.get(app.url(path));
    if let Some(bearer) = bearer {
        request = request.bearer_auth(bearer);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn an_mcp_token_resolves_to_its_account_and_scopes_on_mcp_and_rest() {
    let app = spawn_app().await;
    let (account, token) = mint_token(&app, TokenKind::Mcp, "read,scan").await;
    let (status, body) = call_as(&app, &token, "ping", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let principal = &body["result"]["structuredContent"]["principal"];
    assert_eq!(
        principal,
        &json!({"kind":"account","account_id":account.as_str(),"credential":"mcp_token","scopes":["read","scan"]})
    );
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "ok: connected as account {} with an MCP token (scopes: read, scan);",
            account.as_str()
        )),
        "{text}"
    );
    let rest: Value = get_as(&app, Some(&token), "/v1/ping")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(rest, body["result"]["structuredContent"]);
    app.stop().await;
}

#[tokio::test]
async fn an_api_key_resolves_as_an_api_key() {
    let app = spawn_app().await;
    let (_, key) = mint_token(&app, TokenKind::Api, "read").await;
    assert!(key.starts_with("lk_"));
    let body: Value = get_as(&app, Some(&key), "/v1/ping")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["principal"]["credential"], "api_key");
    assert_eq!(body["principal"]["scopes"], json!(["read"]));
    app.stop().await;
}

/// A 401 that names the protected-resource metadata.
fn assert_challenged(response: &reqwest::Response) {
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(
        challenge.contains("/.well-known/oauth-protected-resource"),
        "{challenge}"
    );
}

#[tokio::test]
async fn an_unknown_token_is_refused_with_401_and_never_downgraded() {
    let app = spawn_app().await;
    // Right shape, never minted.
    let unknown = format!("lm_{}", bs58::encode([7u8; 32]).into_string());
    let rest = get_as(&app, Some(&unknown), "/v1/ping").await;
    assert_challenged(&rest);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["code"], "unauthenticated");
    let auth = format!("Bearer {unknown}");
    let mcp = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}}),
            &[("authorization", &auth)],
        )
        .await;
    assert_challenged(&mcp);
    app.stop().await;
}

#[tokio::test]
async fn a_revoked_token_is_refused_on_its_next_request() {
    let app = spawn_app().await;
    let (account, token) = mint_token(&app, TokenKind::Mcp, "read").await;
    assert_eq!(
        get_as(&app, Some(&token), "/v1/ping").await.status(),
        StatusCode::OK
    );
    let listed = accounts::list_tokens(app.state.store(), &account)
        .await
        .unwrap();
    accounts::revoke(
        app.state.store(),
        app.state.now_ms(),
        &account,
        &listed[0].token_id,
    )
    .await
    .unwrap();
    assert_challenged(&get_as(&app, Some(&token), "/v1/ping").await);
    let (status, _) = call_as(&app, &token, "ping", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test]
async fn a_malformed_or_foreign_bearer_is_refused() {
    let app = spawn_app().await;
    for bearer in [
        "lm_short",
        "lk_0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl",
        "ghp_somebody_elses_token",
        "eyJhbGciOiJIUzI1NiJ9.e30.sig",
    ] {
        assert_challenged(&get_as(&app, Some(bearer), "/v1/ping").await);
    }
    let basic = app
        .client
        .get(app.url("/v1/ping"))
        .header("authorization", "Basic dXNlcjpwYXNz")
        .send()
        .await
        .unwrap();
    assert_challenged(&basic);
    app.stop().await;
}

#[tokio::test]
async fn a_token_of_one_kind_does_not_pass_as_the_other() {
    let app = spawn_app().await;
    let (_, token) = mint_token(&app, TokenKind::Mcp, "read").await;
    let swapped = token.replacen("lm_", "lk_", 1);
    assert_challenged(&get_as(&app, Some(&swapped), "/v1/ping").await);
    app.stop().await;
}

#[tokio::test]
async fn a_token_without_the_read_scope_is_forbidden_a_read() {
    let paid = paid_app(|_| {}).await;
    paid.paid_scan().await;
    let (_, token) = mint_token(&paid.app, TokenKind::Mcp, "scan").await;
    let (status, body) = call_as(&paid.app, &token, "get_ledger", json!({"address": WALLET})).await;
    assert_eq!(status, StatusCode::OK);
    let result = &body["result"];
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["code"], "forbidden");
    assert!(
        result["structuredContent"]["message"]
            .as_str()
            .unwrap()
            .contains("lacks the read scope"),
        "{result}"
    );
    let rest = get_as(
        &paid.app,
        Some(&token),
        &format!("/v1/wallets/{WALLET}/ledger"),
    )
    .await;
    assert_eq!(rest.status(), StatusCode::FORBIDDEN);
    assert_eq!(paid.sent(), 1, "only the scan's payment: nothing charged");
    paid.app.stop().await;
}

#[tokio::test]
async fn a_token_without_the_scan_scope_is_forbidden_a_scan() {
    let app = spawn_app().await;
    let (_, token) = mint_token(&app, TokenKind::Mcp, "read").await;
    let (_, body) = call_as(
        &app,
        &token,
        "scan_wallet",
        json!({"quote_id": "q_01JDZQ3Y3E8W9V5K2M7N4P6R8T"}),
    )
    .await;
    assert_eq!(body["result"]["structuredContent"]["code"], "forbidden");
    app.stop().await;
}

#[tokio::test]
async fn bearers_are_not_held_to_the_anonymous_rate_limit() {
    let app = spawn_with(Options {
        configure: Box::new(|c| {
            c.rate_limit.anon_rps = 0.001;
            c.rate_limit.anon_burst = Some(2);
        }),
        ..Options::default()
    })
    .await;
    let (_, token) = mint_token(&app, TokenKind::Api, "read").await;
    for _ in 0..10 {
        assert_eq!(
            get_as(&app, Some(&token), "/v1/ping").await.status(),
            StatusCode::OK
        );
    }
    let mut limited = false;
    for _ in 0..5 {
        limited |= get_as(&app, None, "/v1/ping").await.status() == StatusCode::TOO_MANY_REQUESTS;
    }
    assert!(limited, "anonymous callers are still limited");
    app.stop().await;
}

#[tokio::test]
async fn guessing_tokens_is_held_to_the_anonymous_rate_limit() {
    let app = spawn_with(Options {
        configure: Box::new(|c| {
            c.rate_limit.anon_rps = 0.001;
            c.rate_limit.anon_burst = Some(3);
        }),
        ..Options::default()
    })
    .await;
    let mut statuses = Vec::new();
    for i in 0..6u8 {
        let guess = format!("lm_{}", bs58::encode([i; 32]).into_string());
        statuses.push(get_as(&app, Some(&guess), "/v1/ping").await.status());
    }
    assert!(
        statuses.contains(&StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
    app.stop().await;
}

#[tokio::test]
async fn account_tools_refuse_anonymous_callers() {
    let app = spawn_app().await;
    for (tool, args) in [
        ("list_wallets", json!({})),
        ("add_wallet", json!({"address": WALLET})),
        (
            "set_address_label",
            json!({"address": WALLET, "label": "cold storage"}),
        ),
    ] {
        let result = app.call_tool(tool, args).await;
        assert_eq!(result["isError"], true, "{tool}");
        assert_eq!(
            result["structuredContent"]["code"], "unauthenticated",
            "{tool}"
        );
    }
    assert_challenged(&get_as(&app, None, "/v1/wallets").await);
    assert_challenged(&get_as(&app, None, "/v1/payments").await);
    app.stop().await;
}

#[tokio::test]
async fn the_watchlist_adds_lists_relabels_and_removes() {
    let app = spawn_app().await;
    let (_, token) = mint_token(&app, TokenKind::Mcp, "read").await;
    let (_, added) = call_as(
        &app,
        &token,
        "add_wallet",
        json!({"address": WALLET, "label": "treasury"}),
    )
    .await;
    let added = &added["result"]["structuredContent"];
    assert_eq!(added["address"], WALLET);
    assert_eq!(added["label"], "treasury");
    assert_eq!(added["last_scan"], Value::Null);
    assert_eq!(added["ledger_legs"], 0);
    let listed: Value = get_as(&app, Some(&token), "/v1/wallets")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["wallets"].as_array().unwrap().len(), 1);
    assert_eq!(listed["wallets"][0]["label"], "treasury");
    // Adding again relabels.
    let relabel = app
        .client
        .post(app.url("/v1/wallets"))
        .bearer_auth(&token)
        .json(&json!({"address": WALLET, "label": "main"}))
        .send()
        .await
        .unwrap();
    assert_eq!(relabel.status(), StatusCode::OK);
    let (_, list) = call_as(&app, &token, "list_wallets", json!({})).await;
    assert_eq!(
        list["result"]["structuredContent"]["wallets"][0]["label"],
        "main"
    );
    // Another account sees none of it.
    let (_, other) = mint_token(&app, TokenKind::Mcp, "read").await;
    let theirs: Value = get_as(&app, Some(&other), "/v1/wallets")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["wallets"], json!([]));
    let removed = app
        .client
        .delete(app.url(&format!("/v1/wallets/{WALLET}")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), StatusCode::NO_CONTENT);
    let again = app
        .client
        .delete(app.url(&format!("/v1/wallets/{WALLET}")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn labels_over_their_limits_are_refused_naming_the_rule() {
    let app = spawn_app().await;
    let (_, token) = mint_token(&app, TokenKind::Mcp, "read").await;
    for (tool, args, rule) in [
        (
            "add_wallet",
            json!({"address": WALLET, "label": "x".repeat(129)}),
            "label: must be a string of at most 128 characters",
        ),
        (
            "set_address_label",
            json!({"address": WALLET, "label": "x".repeat(65)}),
            "label: must be a string of at most 64 characters",
        ),
        (
            "set_address_label",
            json!({"address": WALLET, "label": "a", "category": "friend"}),
            "category",
        ),
        (
            "add_wallet",
            json!({"address": "11111111111111111111111111111111111"}),
            "address",
        ),
    ] {
        let (_, body) = call_as(&app, &token, tool, args.clone()).await;
        let result = &body["result"];
        assert_eq!(result["isError"], true, "{args}: {body}");
        assert_eq!(
            result["structuredContent"]["code"], "invalid_params",
            "{args}"
        );
        let message = result["structuredContent"]["message"].as_str().unwrap();
        assert!(message.contains(rule), "{args}: {message}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_watched_wallet_reads_free_and_an_unwatched_one_is_challenged() {
    let paid = paid_app(|_| {}).await;
    paid.paid_scan().await;
    let (_, token) = mint_token(&paid.app, TokenKind::Mcp, "read").await;
    let (_, before) = call_as(&paid.app, &token, "get_ledger", json!({"address": WALLET})).await;
    assert_eq!(
        before["result"]["structuredContent"]["code"],
        "payment_required"
    );
    call_as(&paid.app, &token, "add_wallet", json!({"address": WALLET})).await;
    let (_, after) = call_as(
        &paid.app,
        &token,
        "get_ledger",
        json!({"address": WALLET, "limit": 5}),
    )
    .await;
    let result = &after["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert!(result["structuredContent"].get("payment").is_none());
    let rest = get_as(
        &paid.app,
        Some(&token),
        &format!("/v1/wallets/{WALLET}/positions"),
    )
    .await;
    assert_eq!(rest.status(), StatusCode::OK);
    assert_eq!(paid.sent(), 1, "only the scan was paid for");
    paid.app.stop().await;
}

#[tokio::test]
async fn a_payment_made_with_a_bearer_belongs_to_its_account() {
    let paid: Paid = paid_app(|_| {}).await;
    paid.paid_scan().await;
    let (_, token) = mint_token(&paid.app, TokenKind::Mcp, "read").await;
    let (_, challenge) = call_as(&paid.app, &token, "get_ledger", json!({"address": WALLET})).await;
    let sc = &challenge["result"]["structuredContent"];
    let quote_id = sc["x402"]["accepts"][0]["extra"]["quoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    let payment = paid.build(&paid.payment_for(&sc["x402"]));
    let (_, read) = call_as(
        &paid.app,
        &token,
        "get_ledger",
        json!({"address": WALLET, "payment": payment, "quote_id": quote_id}),
    )
    .await;
    let block = &read["result"]["structuredContent"]["payment"];
    assert_eq!(block["settled"], true, "{read}");
    let listed: Value = get_as(&paid.app, Some(&token), "/v1/payments")
        .await
        .json()
        .await
        .unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 1, "the scan was anonymous: {listed:?}");
    assert_eq!(listed[0]["quote_id"], quote_id);
    assert_eq!(listed[0]["entitlement"], "read");
    assert_eq!(listed[0]["status"], "settled");
    assert_eq!(listed[0]["receipt"], block["receipt"]);
    assert_eq!(listed[0]["transaction"], block["transaction"]);
    // Another account lists none of it.
    let (_, other) = mint_token(&paid.app, TokenKind::Mcp, "read").await;
    let theirs: Value = get_as(&paid.app, Some(&other), "/v1/payments")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(theirs, json!([]));
    paid.app.stop().await;
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn the_admin_key_reads_any_job_and_a_wrong_one_is_refused() {
    const ADMIN: &str = "admin-key-of-the-tests-0123456789abcdef";
    let paid = paid_app(|c| c.admin_key_sha256 = Some(sha256_hex(ADMIN))).await;
    let (_, job) = paid.paid_scan().await;
    let job_id = job["job_id"].as_str().unwrap().to_owned();
    // Without the scan's receipt an anonymous caller cannot read it.
    let anonymous = get_as(&paid.app, None, &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(anonymous.status(), StatusCode::NOT_FOUND);
    let admin = get_as(&paid.app, Some(ADMIN), &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(admin.status(), StatusCode::OK);
    let ping: Value = get_as(&paid.app, Some(ADMIN), "/v1/ping")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(ping["principal"], json!({"kind": "admin"}));
    assert_challenged(&get_as(&paid.app, Some("admin-key-of-the-tests"), "/v1/ping").await);
    // An account that did not start the job cannot read it either.
    let (_, token) = mint_token(&paid.app, TokenKind::Mcp, "read,scan").await;
    let theirs = get_as(&paid.app, Some(&token), &format!("/v1/jobs/{job_id}")).await;
    assert_eq!(theirs.status(), StatusCode::NOT_FOUND);
    paid.app.stop().await;
}

#[tokio::test]
async fn a_config_with_a_malformed_admin_hash_is_refused_at_start() {
    let env = [(
        "LEDGER_ADMIN_KEY_SHA256".to_owned(),
        "not-a-hash".to_owned(),
    )];
    let err = server::config::Config::load_from(None, env).unwrap_err();
    assert!(err.to_string().contains("admin_key_sha256"), "{err}");
}

#[tokio::test]
async fn a_cookie_never_authenticates_v1_or_mcp() {
    let app = spawn_with(Options {
        configure: Box::new(relaxed_limits),
        ..Options::default()
    })
    .await;
    let response = app
        .client
        .get(app.url("/v1/wallets"))
        .header("cookie", "ledger_session=anything; id=whatever")
        .send()
        .await
        .unwrap();
    assert_challenged(&response);
    app.stop().await;
}

#[tokio::test]
async fn get_flows_names_nodes_from_the_accounts_labels_and_its_watchlist() {
    let (app, _s, _p) = crate::ledger::scanned_priced().await;
    let (_, token) = mint_token(&app, TokenKind::Mcp, "read").await;
    let (_, anonymous) = call_as(
        &app,
        &token,
        "get_flows",
        json!({"address": WALLET, "top": 0}),
    )
    .await;
    let nodes = anonymous["result"]["structuredContent"]["nodes"]
        .as_array()
        .unwrap()
        .clone();
    let counterparties: Vec<String> = nodes
        .iter()
        .skip(1)
        .map(|n| n["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(counterparties.len() >= 2, "{nodes:?}");
    let (labelled, watched) = (&counterparties[0], &counterparties[1]);
    call_as(
        &app,
        &token,
        "set_address_label",
        json!({"address": labelled, "label": "Kraken deposit", "category": "exchange"}),
    )
    .await;
    call_as(
        &app,
        &token,
        "add_wallet",
        json!({"address": watched, "label": "my hot wallet"}),
    )
    .await;
    let (_, named) = call_as(
        &app,
        &token,
        "get_flows",
        json!({"address": WALLET, "top": 0}),
    )
    .await;
    let node = |id: &str| {
        named["result"]["structuredContent"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(node(labelled)["name"], "Kraken deposit");
    assert_eq!(node(labelled)["category"], "exchange");
    assert_eq!(node(watched)["name"], "my hot wallet");
    assert_eq!(node(watched)["category"], "own_wallet");
    // Anonymous callers, and other accounts, see none of it.
    let plain = app
        .call_tool("get_flows", json!({"address": WALLET, "top": 0}))
        .await;
    let plain_node = plain["structuredContent"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == labelled.as_str())
        .cloned()
        .unwrap();
    assert_ne!(plain_node["name"], "Kraken deposit");
    // An empty label removes the name again.
    let (_, removed) = call_as(
        &app,
        &token,
        "set_address_label",
        json!({"address": labelled, "label": ""}),
    )
    .await;
    assert_eq!(removed["result"]["structuredContent"]["removed"], true);
    app.stop().await;
}

#[tokio::test]
async fn an_account_reads_the_jobs_it_started_and_no_other() {
    let paid = paid_app(|_| {}).await;
    let (_, token) = mint_token(&paid.app, TokenKind::Mcp, "read,scan").await;
    let (_, quote) = call_as(
        &paid.app,
        &token,
        "quote_wallet",
        json!({"address": WALLET, "scope": "preview"}),
    )
    .await;
    let quote_id = quote["result"]["structuredContent"]["quote_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, challenge) = call_as(
        &paid.app,
        &token,
        "scan_wallet",
        json!({"quote_id": quote_id}),
    )
    .await;
    let x402 = &challenge["result"]["structuredContent"]["x402"];
    let payment = paid.build(&paid.payment_for(x402));
    let (_, started) = call_as(
        &paid.app,
        &token,
        "scan_wallet",
        json!({"quote_id": quote_id, "payment": payment}),
    )
    .await;
    let job_id = started["result"]["structuredContent"]["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_owned();
    let (_, read) = call_as(&paid.app, &token, "get_job", json!({"job_id": job_id})).await;
    assert_eq!(read["result"]["isError"], false, "{read}");
    let (_, other) = mint_token(&paid.app, TokenKind::Mcp, "read").await;
    let (_, theirs) = call_as(&paid.app, &other, "get_job", json!({"job_id": job_id})).await;
    assert_eq!(theirs["result"]["structuredContent"]["code"], "not_found");
    let listed: Value = get_as(&paid.app, Some(&token), "/v1/payments")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed[0]["entitlement"], "scan");
    paid.app.stop().await;
}

#[tokio::test]
async fn a_token_without_the_read_scope_lists_no_receipts_or_wallets() {
    let app = spawn_app().await;
    let (_, token) = mint_token(&app, TokenKind::Api, "scan").await;
    for path in ["/v1/payments", "/v1/wallets"] {
        let response = get_as(&app, Some(&token), path).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path}");
    }
    let (_, body) = call_as(&app, &token, "add_wallet", json!({"address": WALLET})).await;
    assert_eq!(body["result"]["structuredContent"]["code"], "forbidden");
    app.stop().await;
}

#[tokio::test]
async fn replaying_someone_elses_payment_does_not_move_it_into_your_account() {
    let paid: Paid = paid_app(|_| {}).await;
    paid.paid_scan().await;
    let challenge = paid.read_challenge().await;
    let sc = &challenge["structuredContent"];
    let quote_id = sc["x402"]["accepts"][0]["extra"]["quoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    let payment = paid.build(&paid.payment_for(&sc["x402"]));
    // The payer pays anonymously.
    let first = paid.read_with(&payment, &quote_id).await;
    assert_eq!(first["structuredContent"]["payment"]["settled"], true);
    // Someone rebuilt it from the chain and presents it with their key.
    let (_, token) = mint_token(&paid.app, TokenKind::Mcp, "read").await;
    let (_, replay) = call_as(
        &paid.app,
        &token,
        "get_ledger",
        json!({"address": WALLET, "payment": payment, "quote_id": quote_id}),
    )
    .await;
    assert_eq!(
        replay["result"]["structuredContent"]["payment"]["replayed"], true,
        "{replay}"
    );
    let listed: Value = get_as(&paid.app, Some(&token), "/v1/payments")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed, json!([]));
    paid.app.stop().await;
}

#[tokio::test]
async fn the_watchlist_shows_only_your_own_job_ids() {
    let paid = paid_app(|_| {}).await;
    paid.paid_scan().await;
    let (_, token) = mint_token(&paid.app, TokenKind::Mcp, "read").await;
    let (_, added) = call_as(&paid.app, &token, "add_wallet", json!({"address": WALLET})).await;
    let scan = &added["result"]["structuredContent"]["last_scan"];
    assert!(scan["status"].is_string(), "{added}");
    assert!(scan.get("job_id").is_none(), "another caller's job: {scan}");
    paid.app.stop().await;
}

#[tokio::test]
async fn a_full_watchlist_refuses_one_more_wallet_but_relabels_its_own() {
    let app = spawn_app().await;
    let (account, token) = mint_token(&app, TokenKind::Mcp, "read").await;
    let store = app.state.store();
    for i in 0..server::accounts::watchlist::MAX_WATCHED {
        let address = bs58::encode((i as u64).to_le_bytes().repeat(4)).into_string();
        store
            .upsert_watch(account.as_str(), &address, "", app.state.now_ms())
            .await
            .unwrap();
    }
    let (_, refused) = call_as(&app, &token, "add_wallet", json!({"address": WALLET})).await;
    let sc = &refused["result"]["structuredContent"];
    assert_eq!(sc["code"], "invalid_params", "{refused}");
    assert!(
        sc["message"]
            .as_str()
            .unwrap()
            .contains("at most 1000 wallets")
    );
    let own = bs58::encode(0u64.to_le_bytes().repeat(4)).into_string();
    let (_, relabel) = call_as(
        &app,
        &token,
        "add_wallet",
        json!({"address": own, "label": "still fits"}),
    )
    .await;
    assert_eq!(relabel["result"]["isError"], false, "{relabel}");
    app.stop().await;
}
