//! Follow the money over the real server: research credits and their
//! ledger, the `follow_the_money` feature, `expand_graph` from the ledger
//! and live (the RPC stand-in serving the recorded mainnet transactions),
//! `find_first_funder`, idempotency under `action_id`, refunds, limits, and
//! concurrent charges that never overdraw. Like every test of this binary
//! they run on SQLite, and on PostgreSQL when `TEST_DATABASE_URL` names it.

use std::{sync::atomic::Ordering, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};
use server::{
    accounts::{self, AccountId, Scopes, TokenKind},
    config::Config,
    credits::FOLLOW_THE_MONEY,
    store::{Begun, NewAction, NewCredit},
};

use crate::{
    helpers::{Options, TestApp, relaxed_limits, spawn_with},
    scans::{WALLET, fixtures, scan_to_end, shared},
    standin::{self, Shared, StandIn},
};

/// The default prices, in atomic USDC.
const LEDGER: i64 = 5_000;
const LIVE: i64 = 20_000;
const CACHED_LIVE: i64 = 5_000;
const FUNDER: i64 = 50_000;
const CACHED_FUNDER: i64 = 5_000;

/// The server over the stand-in `shared`, configured further by `configure`.
async fn research_app(
    shared: Shared,
    configure: impl FnOnce(&mut Config) + Send + 'static,
) -> (TestApp, StandIn) {
    let stand_in = standin::start(shared).await;
    let url = stand_in.url.clone();
    let app = spawn_with(Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.solana.retry_base_ms = 1;
            c.solana.batch_size = 4;
            c.worker.in_process = true;
            c.worker.poll_ms = 20;
            // Price sources down: edges are unpriced, never guessed.
            c.prices.coinbase_url = "http://127.0.0.1:9".to_owned();
            c.prices.coinbase_exchange_url = "http://127.0.0.1:9".to_owned();
            c.prices.jupiter_url = "http://127.0.0.1:9".to_owned();
            configure(c);
        }),
        ..Options::default()
    })
    .await;
    (app, stand_in)
}

/// The wallet of the recorded fixtures, scanned.
async fn scanned(configure: impl FnOnce(&mut Config) + Send + 'static) -> (TestApp, StandIn) {
    let (app, stand_in) = research_app(shared(0, Duration::ZERO), configure).await;
    let job = scan_to_end(&app, "full").await;
    assert_eq!(job["status"], "completed");
    (app, stand_in)
}

/// A new account with a token that may spend credits (read and scan), the
/// feature as asked and `grant` USD.
async fn account(app: &TestApp, feature: bool, grant: Option<&str>) -> (AccountId, String) {
    account_with(app, "read,scan", feature, grant).await
}

/// [`account`] with a token of `scopes`.
async fn account_with(
    app: &TestApp,
    scopes: &str,
    feature: bool,
    grant: Option<&str>,
) -> (AccountId, String) {
    let store = app.state.store();
    let now = app.state.now_ms();
    let account = accounts::create_account(store, now, "research")
        .await
        .unwrap();
    let minted = accounts::mint(
        store,
        now,
        &account,
        TokenKind::Mcp,
        Scopes::parse(scopes).unwrap(),
        "t",
    )
    .await
    .unwrap();
    if feature {
        store
            .set_feature(account.as_str(), FOLLOW_THE_MONEY, true, now)
            .await
            .unwrap();
    }
    if let Some(usd) = grant {
        app.state
            .credits()
            .grant(
                &account,
                server::values::Usd::parse(usd).unwrap(),
                "test grant",
            )
            .await
            .unwrap();
    }
    (account, minted.plaintext.clone())
}

/// `tools/call` as `token`: the tool result.
async fn call(app: &TestApp, token: &str, tool: &str, arguments: Value) -> Value {
    let auth = format!("Bearer {token}");
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":tool,"arguments":arguments}}),
            &[("authorization", &auth)],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    body["result"].clone()
}

fn ok(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"].clone()
}

fn refused(result: &Value, code: &str) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["structuredContent"]["code"], code, "{result}");
    result["structuredContent"].clone()
}

async fn balance(app: &TestApp, account: &AccountId) -> i64 {
    app.state
        .store()
        .credit_balance(account.as_str())
        .await
        .unwrap()
}

/// The balance equals the sum of the movements, line by line.
async fn assert_explained(app: &TestApp, account: &AccountId) {
    let store = app.state.store();
    let sum = store.credit_movements_sum(account.as_str()).await.unwrap();
    assert_eq!(
        balance(app, account).await,
        sum,
        "balance = sum of movements"
    );
    let mut lines = store
        .credit_movements(account.as_str(), 1000)
        .await
        .unwrap();
    lines.reverse();
    let mut running = 0;
    for m in lines {
        running += m.amount_atomic;
        assert_eq!(m.balance_after, running, "{m:?}");
    }
}

async fn kinds(app: &TestApp, account: &AccountId) -> Vec<(String, i64)> {
    let mut lines = app
        .state
        .store()
        .credit_movements(account.as_str(), 1000)
        .await
        .unwrap();
    lines.reverse();
    lines
        .into_iter()
        .map(|m| (m.kind, m.amount_atomic))
        .collect()
}

fn requests(stand_in: &StandIn) -> usize {
    stand_in.shared.http_requests.load(Ordering::SeqCst)
}

#[tokio::test]
async fn research_tools_are_not_found_until_the_feature_is_on() {
    let (app, _s) = scanned(|_| {}).await;
    let (account, token) = account(&app, false, Some("1")).await;
    for (tool, args) in [
        (
            "expand_graph",
            json!({"address": WALLET, "action_id": "a1"}),
        ),
        (
            "find_first_funder",
            json!({"address": WALLET, "action_id": "f1"}),
        ),
    ] {
        refused(&call(&app, &token, tool, args).await, "not_found");
    }
    assert_eq!(balance(&app, &account).await, 1_000_000, "nothing charged");
    app.state
        .store()
        .set_feature(account.as_str(), FOLLOW_THE_MONEY, true, app.state.now_ms())
        .await
        .unwrap();
    ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "a1"}),
    )
    .await);
    app.stop().await;
}

#[tokio::test]
async fn the_feature_can_be_on_for_everyone_by_config() {
    let (app, _s) = scanned(|c| c.graph.enabled_for_all = true).await;
    let (_, token) = account(&app, false, Some("1")).await;
    ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "a1"}),
    )
    .await);
    app.stop().await;
}

#[tokio::test]
async fn research_tools_need_an_account() {
    let (app, _s) = scanned(|c| c.graph.enabled_for_all = true).await;
    let result = app
        .call_tool(
            "expand_graph",
            json!({"address": WALLET, "action_id": "a1"}),
        )
        .await;
    refused(&result, "unauthenticated");
    let rest = app
        .client
        .post(app.url("/v1/graph/funder"))
        .json(&json!({"address": WALLET, "action_id": "f1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test]
async fn a_ledger_expansion_is_charged_once_and_its_retry_is_free() {
    let (app, stand_in) = scanned(|_| {}).await;
    let (account, token) = account(&app, true, Some("1")).await;
    let before = requests(&stand_in);
    let args = json!({"address": WALLET, "action_id": "hop-1"});
    let first = ok(&call(&app, &token, "expand_graph", args.clone()).await);
    assert_eq!(first["source"], "ledger");
    assert_eq!(first["cost_atomic"], LEDGER.to_string());
    assert_eq!(first["balance_atomic"], (1_000_000 - LEDGER).to_string());
    assert_eq!(first["replayed"], false);
    assert_eq!(
        requests(&stand_in),
        before,
        "a ledger expansion reads no RPC"
    );
    // The wallet node first, then counterparties with edges to them.
    let nodes = first["nodes"].as_array().unwrap();
    assert_eq!(nodes[0]["id"], WALLET);
    assert_eq!(nodes[0]["kind"], "wallet");
    let total = first["counterparties_total"].as_u64().unwrap();
    assert!(total > 0);
    assert_eq!(nodes[0]["signals"]["counterparty_count"], total);
    assert!(nodes.len() > 1);
    for node in &nodes[1..] {
        let id = node["id"].as_str().unwrap();
        assert!(
            first["edges"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["source"] == id || e["target"] == id),
            "{id} has an edge"
        );
        assert!(node["signals"]["legs"].as_u64().unwrap() >= 1);
        assert!(node["signals"]["first_seen"].is_string());
    }

    // The same call again: the stored answer, nothing charged.
    let again = ok(&call(&app, &token, "expand_graph", args.clone()).await);
    assert_eq!(again["cost_atomic"], "0");
    assert_eq!(again["replayed"], true);
    assert_eq!(again["nodes"], first["nodes"]);
    assert_eq!(again["balance_atomic"], (1_000_000 - LEDGER).to_string());
    // The REST twin is the same action.
    let rest: Value = app
        .client
        .post(app.url("/v1/graph/expand"))
        .bearer_auth(&token)
        .json(&args)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rest["cost_atomic"], "0");
    assert_eq!(rest["edges"], first["edges"]);

    assert_eq!(
        kinds(&app, &account).await,
        vec![
            ("grant".to_owned(), 1_000_000),
            ("charge".to_owned(), -LEDGER)
        ]
    );
    assert_explained(&app, &account).await;
    app.stop().await;
}

#[tokio::test]
async fn the_same_action_id_with_other_arguments_is_action_conflict() {
    let (app, _s) = scanned(|_| {}).await;
    let (account, token) = account(&app, true, Some("1")).await;
    ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "x"}),
    )
    .await);
    let err = refused(
        &call(
            &app,
            &token,
            "expand_graph",
            json!({"address": WALLET, "action_id": "x", "direction": "in"}),
        )
        .await,
        "action_conflict",
    );
    assert!(err["message"].as_str().unwrap().contains("other arguments"));
    // Spelling a default out is the same action, not a conflict.
    let same = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "x", "direction": "both", "source": "ledger", "depth": 1}),
    )
    .await);
    assert_eq!(same["cost_atomic"], "0");
    // Another tool under the same id is a conflict too.
    refused(
        &call(
            &app,
            &token,
            "find_first_funder",
            json!({"address": WALLET, "action_id": "x"}),
        )
        .await,
        "action_conflict",
    );
    assert_eq!(balance(&app, &account).await, 1_000_000 - LEDGER);
    app.stop().await;
}

#[tokio::test]
async fn insufficient_credit_makes_no_rpc_call_and_charges_nothing() {
    let (app, stand_in) = research_app(shared(0, Duration::ZERO), |_| {}).await;
    let (account, token) = account(&app, true, Some("0.01")).await;
    let before = requests(&stand_in);
    let args =
        json!({"address": WALLET, "action_id": "live-1", "source": "live", "window_sigs": 5});
    let err = refused(
        &call(&app, &token, "expand_graph", args.clone()).await,
        "insufficient_credit",
    );
    assert_eq!(err["cost_atomic"], LIVE.to_string());
    assert_eq!(err["balance_atomic"], "10000");
    let err = refused(
        &call(
            &app,
            &token,
            "find_first_funder",
            json!({"address": WALLET, "action_id": "f-1"}),
        )
        .await,
        "insufficient_credit",
    );
    assert_eq!(err["cost_atomic"], FUNDER.to_string());
    assert_eq!(requests(&stand_in), before, "nothing was fetched");
    assert_eq!(kinds(&app, &account).await.len(), 1, "only the grant");
    // Nothing was recorded under the id either: topped up, the same
    // action_id now runs.
    app.state
        .credits()
        .grant(&account, server::values::Usd::parse("1").unwrap(), "more")
        .await
        .unwrap();
    let done = ok(&call(&app, &token, "expand_graph", args).await);
    assert_eq!(done["cost_atomic"], LIVE.to_string());
    assert_explained(&app, &account).await;
    app.stop().await;
}

#[tokio::test]
async fn a_live_expansion_reads_the_window_and_a_repeat_is_the_cached_price() {
    let (app, stand_in) = research_app(shared(0, Duration::ZERO), |_| {}).await;
    let (account, token) = account(&app, true, Some("1")).await;
    let window = 8u32;
    let before = requests(&stand_in);
    let first = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "l1", "source": "live", "window_sigs": window}),
    )
    .await);
    assert_eq!(first["source"], "live");
    assert_eq!(first["cached"], false);
    assert_eq!(first["complete"], true);
    assert_eq!(first["signatures_read"], window);
    assert_eq!(first["cost_atomic"], LIVE.to_string());
    // The floor: one signatures page plus one read per transaction.
    assert_eq!(first["rpc_calls"], 1 + u64::from(window));
    let http = requests(&stand_in) - before;
    eprintln!(
        "live expansion of {window} signatures: {} JSON-RPC requests in {http} HTTP requests (floor {})",
        first["rpc_calls"],
        1 + window
    );
    assert!(first["counterparties_total"].as_u64().unwrap() > 0);

    // A new action within the cache time: the cached live price, no RPC.
    let before = requests(&stand_in);
    let second = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "l2", "source": "live", "window_sigs": window}),
    )
    .await);
    assert_eq!(second["cached"], true);
    assert_eq!(second["cost_atomic"], CACHED_LIVE.to_string());
    assert_eq!(second["rpc_calls"], 0);
    assert_eq!(second["edges"], first["edges"]);
    assert_eq!(requests(&stand_in), before);
    assert_eq!(
        balance(&app, &account).await,
        1_000_000 - LIVE - CACHED_LIVE
    );
    assert_explained(&app, &account).await;
    app.stop().await;
}

#[tokio::test]
async fn a_live_read_missing_transactions_is_partial_and_still_charged() {
    // Two signatures the node cannot serve, newest first in the window.
    let mut shared = shared(0, Duration::ZERO);
    let history = shared.history.get_mut(WALLET).unwrap();
    for i in 0..2 {
        history.insert(0, json!({"signature": format!("gone{i}"), "slot": 999_999_999u64, "blockTime": null, "err": null, "memo": null}));
    }
    let (app, _s) = research_app(shared, |_| {}).await;
    let (account, token) = account(&app, true, Some("1")).await;
    let out = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "p", "source": "live", "window_sigs": 6}),
    )
    .await);
    assert_eq!(out["complete"], false);
    assert_eq!(out["cost_atomic"], LIVE.to_string());
    assert_eq!(balance(&app, &account).await, 1_000_000 - LIVE);
    app.stop().await;
}

#[tokio::test]
async fn a_failing_rpc_is_refunded_and_its_action_id_is_then_a_conflict() {
    let (app, _s) = research_app(Shared::default(), |c| {
        c.solana.rpc_url = "http://127.0.0.1:9".to_owned();
    })
    .await;
    let (account, token) = account(&app, true, Some("1")).await;
    let args = json!({"address": WALLET, "action_id": "fails", "source": "live"});
    let err = refused(
        &call(&app, &token, "expand_graph", args.clone()).await,
        "unavailable",
    );
    assert!(
        err["message"].as_str().unwrap().contains("refunded"),
        "{err}"
    );
    assert_eq!(balance(&app, &account).await, 1_000_000);
    assert_eq!(
        kinds(&app, &account).await,
        vec![
            ("grant".to_owned(), 1_000_000),
            ("charge".to_owned(), -LIVE),
            ("refund".to_owned(), LIVE)
        ]
    );
    let again = refused(
        &call(&app, &token, "expand_graph", args).await,
        "action_conflict",
    );
    assert!(again["message"].as_str().unwrap().contains("refunded"));
    let funder = refused(
        &call(
            &app,
            &token,
            "find_first_funder",
            json!({"address": WALLET, "action_id": "ff"}),
        )
        .await,
        "unavailable",
    );
    assert!(funder["message"].as_str().unwrap().contains("refunded"));
    assert_eq!(balance(&app, &account).await, 1_000_000);
    assert_explained(&app, &account).await;
    app.stop().await;
}

#[tokio::test]
async fn a_ledger_expansion_of_a_wallet_never_scanned_is_not_found_and_free() {
    let (app, _s) = research_app(shared(0, Duration::ZERO), |_| {}).await;
    let (account, token) = account(&app, true, Some("1")).await;
    refused(
        &call(
            &app,
            &token,
            "expand_graph",
            json!({"address": WALLET, "action_id": "n"}),
        )
        .await,
        "not_found",
    );
    assert_eq!(kinds(&app, &account).await.len(), 1);
    app.stop().await;
}

#[tokio::test]
async fn bursts_are_rate_limited_per_account() {
    let (app, _s) = scanned(|c| {
        c.graph.rate_burst = 2;
        c.graph.rate_per_sec = 0.01;
    })
    .await;
    let (_, token) = account(&app, true, Some("1")).await;
    let (_, other) = account(&app, true, Some("1")).await;
    for i in 0..2 {
        ok(&call(
            &app,
            &token,
            "expand_graph",
            json!({"address": WALLET, "action_id": format!("r{i}")}),
        )
        .await);
    }
    let err = refused(
        &call(
            &app,
            &token,
            "expand_graph",
            json!({"address": WALLET, "action_id": "r2"}),
        )
        .await,
        "rate_limited",
    );
    assert!(err["retry_after"].as_u64().unwrap() >= 1);
    let rest = app
        .client
        .post(app.url("/v1/graph/expand"))
        .bearer_auth(&token)
        .json(&json!({"address": WALLET, "action_id": "r3"}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(rest.headers().get("retry-after").is_some());
    // Another account has its own allowance.
    ok(&call(
        &app,
        &other,
        "expand_graph",
        json!({"address": WALLET, "action_id": "r0"}),
    )
    .await);
    app.stop().await;
}

#[tokio::test]
async fn a_day_of_actions_is_capped_with_too_many_expansions() {
    let (app, _s) = scanned(|c| c.graph.daily_max_actions = 2).await;
    let (account, token) = account(&app, true, Some("1")).await;
    for i in 0..2 {
        ok(&call(
            &app,
            &token,
            "expand_graph",
            json!({"address": WALLET, "action_id": format!("d{i}")}),
        )
        .await);
    }
    refused(
        &call(
            &app,
            &token,
            "expand_graph",
            json!({"address": WALLET, "action_id": "d2"}),
        )
        .await,
        "too_many_expansions",
    );
    assert_eq!(balance(&app, &account).await, 1_000_000 - 2 * LEDGER);
    app.stop().await;
}

#[tokio::test]
async fn a_hub_returns_its_top_counterparties_and_force_stops_at_the_hub_maximum() {
    // The fixture wallet has two counterparties: past a threshold of one it
    // is a hub; the cap keeps one, and force cannot go past hub_max (1).
    let (app, _s) = scanned(|c| {
        c.graph.hub_counterparties = 1;
        c.graph.hub_cap = 1;
        c.graph.hub_max = 1;
    })
    .await;
    let (_, token) = account(&app, true, Some("1")).await;
    let capped = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "h1", "limit": 100}),
    )
    .await);
    let total = capped["counterparties_total"].as_u64().unwrap();
    assert_eq!(total, 2);
    assert_eq!(capped["hub"]["reason"], "counterparty_count");
    assert_eq!(capped["hub"]["cap"], 1);
    assert!(
        capped["hub"]["message"]
            .as_str()
            .unwrap()
            .contains("force raises this to 1")
    );
    assert_eq!(capped["nodes"].as_array().unwrap().len(), 2);
    assert_eq!(capped["counterparties_omitted"], 1);
    let text = call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "h1", "limit": 100}),
    )
    .await;
    assert!(
        text["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Hub:")
    );
    let forced = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "h2", "limit": 100, "force": true}),
    )
    .await);
    assert_eq!(forced["hub"]["cap"], 1);
    assert_eq!(
        forced["nodes"].as_array().unwrap().len(),
        2,
        "hub_max, no further"
    );
    assert_eq!(
        forced["nodes"][1]["id"], capped["nodes"][1]["id"],
        "the top one"
    );
    app.stop().await;
}

#[tokio::test]
async fn force_raises_a_hub_cap_to_the_hub_maximum() {
    let (app, _s) = scanned(|c| {
        c.graph.hub_counterparties = 1;
        c.graph.hub_cap = 1;
        c.graph.hub_max = 5;
    })
    .await;
    let (_, token) = account(&app, true, Some("1")).await;
    let forced = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "h", "limit": 100, "force": true}),
    )
    .await);
    assert_eq!(forced["hub"]["cap"], 5);
    assert_eq!(
        forced["nodes"].as_array().unwrap().len(),
        3,
        "both counterparties"
    );
    app.stop().await;
}

#[tokio::test]
async fn direction_limit_and_arguments_out_of_bounds() {
    let (app, _s) = scanned(|_| {}).await;
    let (_, token) = account(&app, true, Some("1")).await;
    let inbound = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "in", "direction": "in", "limit": 100}),
    )
    .await);
    assert!(
        inbound["edges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["target"] == WALLET),
        "in: every edge ends at the wallet"
    );
    let one = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "one", "limit": 1}),
    )
    .await);
    assert_eq!(one["nodes"].as_array().unwrap().len(), 2);
    // Unpriced edges are kept by min_usd (the price sources are down).
    let floor = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "floor", "limit": 100, "min_usd": 1000000}),
    )
    .await);
    let all = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "all", "limit": 100}),
    )
    .await);
    // USDC is priced flat at $1 even with the price sources down; the
    // other mints are unpriced and stay.
    let unpriced: Vec<&Value> = all["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["usd"].is_null())
        .collect();
    assert!(!unpriced.is_empty());
    assert!(
        all["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| !e["usd"].is_null())
    );
    let kept: Vec<&Value> = floor["edges"].as_array().unwrap().iter().collect();
    assert_eq!(kept, unpriced);
    for bad in [
        json!({"address": WALLET, "action_id": "b", "depth": 2}),
        json!({"address": WALLET, "action_id": "b", "limit": 0}),
        json!({"address": WALLET, "action_id": "b", "limit": 101}),
        json!({"address": WALLET, "action_id": "b", "window_sigs": 101, "source": "live"}),
        json!({"address": WALLET, "action_id": ""}),
        json!({"address": WALLET}),
        json!({"address": WALLET, "action_id": "b", "bogus": 1}),
    ] {
        let response = app
            .post_mcp(
                &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"expand_graph","arguments":bad}}),
                &[("authorization", &format!("Bearer {token}"))],
            )
            .await;
        let body: Value = response.json().await.unwrap();
        let invalid = body["error"]["code"] == -32602
            || body["result"]["structuredContent"]["code"] == "invalid_params";
        assert!(invalid, "{bad}: {body}");
    }
    app.stop().await;
}

#[tokio::test]
async fn find_first_funder_on_the_recorded_wallet_agrees_with_an_independent_read_and_caches() {
    let (app, stand_in) = research_app(shared(0, Duration::ZERO), |_| {}).await;
    let (account, token) = account(&app, true, Some("1")).await;
    // What the answer must be: the oldest successful transaction that
    // moves SOL into the wallet from a wallet, read independently here.
    let mut txs = fixtures();
    txs.sort_by_key(|t| t["result"]["slot"].as_u64().unwrap());
    let expected = txs.iter().find_map(|t| {
        let view = server::ledger::TxView::parse(&t["result"]).ok()?;
        server::ledger::legs(&view, WALLET).into_iter().find(|l| {
            l.mint == "sol"
                && l.amount > 0
                && l.counterparties.iter().any(|c| {
                    c.direction == server::ledger::Direction::In
                        && c.kind == server::ledger::CounterpartyKind::Wallet
                })
        })
    });
    let before = requests(&stand_in);
    let out = ok(&call(
        &app,
        &token,
        "find_first_funder",
        json!({"address": WALLET, "action_id": "f1"}),
    )
    .await);
    eprintln!(
        "funder lookup: {} ({}), {} JSON-RPC requests, {} HTTP requests; {} pages, {} transactions read",
        out["status"],
        out["first_inbound"]["signature"],
        out["rpc_calls"],
        requests(&stand_in) - before,
        out["pages_read"],
        out["transactions_read"]
    );
    assert_eq!(out["cost_atomic"], FUNDER.to_string());
    // The floor: one page per 1000 signatures, one read per inspected transaction.
    assert_eq!(
        out["rpc_calls"].as_u64().unwrap(),
        out["pages_read"].as_u64().unwrap() + out["transactions_read"].as_u64().unwrap()
    );
    assert_eq!(out["signatures_scanned"], txs.len() as u64);
    match expected {
        Some(leg) => {
            assert_eq!(out["status"], "found", "{out}");
            assert_eq!(out["complete"], true);
            assert_eq!(out["first_inbound"]["signature"], leg.signature);
            assert_eq!(out["first_inbound"]["lamports"], leg.amount.to_string());
            assert_eq!(
                out["label"],
                "first inbound transfer within the scanned window"
            );
            assert_eq!(out["node"]["id"], out["first_inbound"]["sender"]);
        }
        None => {
            assert_eq!(out["status"], "not_found_within_window", "{out}");
        }
    }
    // A new lookup of the same wallet is served from the cache.
    let before = requests(&stand_in);
    let cached = ok(&call(
        &app,
        &token,
        "find_first_funder",
        json!({"address": WALLET, "action_id": "f2"}),
    )
    .await);
    assert_eq!(cached["cached"], true);
    assert_eq!(cached["cost_atomic"], CACHED_FUNDER.to_string());
    assert_eq!(cached["first_inbound"], out["first_inbound"]);
    assert_eq!(requests(&stand_in), before);
    // A retry of the first: free; the same id for another wallet: conflict.
    let retry = ok(&call(
        &app,
        &token,
        "find_first_funder",
        json!({"address": WALLET, "action_id": "f1"}),
    )
    .await);
    assert_eq!(retry["cost_atomic"], "0");
    refused(
        &call(
            &app,
            &token,
            "find_first_funder",
            json!({"address": "11111111111111111111111111111112", "action_id": "f1"}),
        )
        .await,
        "action_conflict",
    );
    assert_eq!(
        balance(&app, &account).await,
        1_000_000 - FUNDER - CACHED_FUNDER
    );
    assert_explained(&app, &account).await;
    app.stop().await;
}

#[tokio::test]
async fn a_funder_beyond_the_page_cap_is_not_found_within_window_and_incomplete() {
    let history: Vec<Value> = (0..2500u64)
        .map(|i| json!({"signature": format!("sig{i}"), "slot": 10_000 - i, "blockTime": null, "err": null, "memo": null}))
        .collect();
    let shared = Shared {
        history: [(WALLET.to_owned(), history)].into(),
        ..Shared::default()
    };
    let (app, stand_in) = research_app(shared, |c| c.graph.funder_max_pages = 2).await;
    let (account, token) = account(&app, true, Some("1")).await;
    let before = requests(&stand_in);
    let out = ok(&call(
        &app,
        &token,
        "find_first_funder",
        json!({"address": WALLET, "action_id": "deep"}),
    )
    .await);
    assert_eq!(out["status"], "not_found_within_window");
    assert_eq!(out["complete"], false);
    assert_eq!(out["first_inbound"], Value::Null);
    assert_eq!(out["signatures_scanned"], 2000);
    assert_eq!(out["pages_read"], 2);
    assert_eq!(out["transactions_read"], 0);
    assert_eq!(out["rpc_calls"], 2, "two pages, nothing else");
    assert_eq!(requests(&stand_in) - before, 2);
    assert!(out["reason"].as_str().unwrap().contains("page cap"));
    // Charged: the lookup made RPC calls.
    assert_eq!(balance(&app, &account).await, 1_000_000 - FUNDER);
    app.stop().await;
}

/// The finding: a read-only token charged `expand_graph` three
/// times. It is refused before anything is charged, on the tool and on
/// its REST twin, and the balance and its lines stay as granted.
#[tokio::test]
async fn a_read_only_token_cannot_expand_the_graph_and_no_credit_moves() {
    let (app, _s) = scanned(|_| {}).await;
    let (account, read) = account_with(&app, "read", true, Some("1")).await;
    for action in ["r1", "r2", "r3"] {
        let result = call(
            &app,
            &read,
            "expand_graph",
            json!({"address": WALLET, "action_id": action}),
        )
        .await;
        let refusal = refused(&result, "forbidden");
        assert!(
            refusal["message"]
                .as_str()
                .unwrap()
                .contains("spending research credits needs read and scan"),
            "{refusal}"
        );
    }
    let rest = app
        .client
        .post(app.url("/v1/graph/expand"))
        .bearer_auth(&read)
        .json(&json!({"address": WALLET, "action_id": "r4"}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::FORBIDDEN);
    assert_eq!(balance(&app, &account).await, 1_000_000, "nothing charged");
    assert_eq!(
        kinds(&app, &account).await,
        vec![("grant".to_owned(), 1_000_000)]
    );
    app.stop().await;
}

#[tokio::test]
async fn a_read_only_token_cannot_find_a_first_funder_and_no_credit_moves() {
    let (app, stand_in) = scanned(|_| {}).await;
    let (account, read) = account_with(&app, "read", true, Some("1")).await;
    let before = requests(&stand_in);
    let result = call(
        &app,
        &read,
        "find_first_funder",
        json!({"address": WALLET, "action_id": "f1"}),
    )
    .await;
    refused(&result, "forbidden");
    let rest = app
        .client
        .post(app.url("/v1/graph/funder"))
        .bearer_auth(&read)
        .json(&json!({"address": WALLET, "action_id": "f2"}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::FORBIDDEN);
    assert_eq!(requests(&stand_in), before, "no RPC call");
    assert_eq!(balance(&app, &account).await, 1_000_000, "nothing charged");
    app.stop().await;
}

/// `account` (an id as sign-in answers it) with the feature on, 1 USD of
/// credit and the scanned wallet watched: all a grant needs to spend and
/// to share.
async fn ready_to_spend_and_share(app: &TestApp, account: &str) -> AccountId {
    let account = AccountId::parse(account).unwrap();
    let (store, now) = (app.state.store(), app.state.now_ms());
    store
        .set_feature(account.as_str(), FOLLOW_THE_MONEY, true, now)
        .await
        .unwrap();
    app.state
        .credits()
        .grant(&account, server::values::Usd::parse("1").unwrap(), "g")
        .await
        .unwrap();
    server::accounts::watchlist::add_wallet(
        store,
        now,
        &account,
        server::solana::WalletAddress::parse(WALLET).unwrap(),
        "",
    )
    .await
    .unwrap();
    account
}

async fn live_links(app: &TestApp, account: &AccountId) -> u64 {
    app.state
        .store()
        .count_live_share_links(account.as_str(), app.state.now_ms())
        .await
        .unwrap()
}

/// The issue's own setting: an OAuth grant approved as `read` (the
/// consent page: no spending, no publishing) neither charges
/// `expand_graph` nor mints a share link, on MCP or REST; a grant of
/// `read scan` does both.
#[tokio::test]
async fn an_oauth_read_grant_neither_spends_nor_publishes_and_read_scan_does_both() {
    let (app, _s) = scanned(|_| {}).await;
    let (id, read) = crate::oauth::access_token_for(&app, "read").await;
    let account = ready_to_spend_and_share(&app, &id).await;
    let spent = call(
        &app,
        &read,
        "expand_graph",
        json!({"address": WALLET, "action_id": "a"}),
    )
    .await;
    refused(&spent, "forbidden");
    let shared = call(&app, &read, "create_snapshot", json!({"address": WALLET})).await;
    refused(&shared, "forbidden");
    for (path, body) in [
        (
            "/v1/graph/expand",
            json!({"address": WALLET, "action_id": "b"}),
        ),
        ("/v1/snapshots", json!({"address": WALLET})),
    ] {
        let response = app
            .client
            .post(app.url(path))
            .bearer_auth(&read)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path}");
    }
    assert_eq!(balance(&app, &account).await, 1_000_000, "no credit moved");
    assert_eq!(live_links(&app, &account).await, 0, "no link minted");

    let (id, both) = crate::oauth::access_token_for(&app, "read scan").await;
    let account = ready_to_spend_and_share(&app, &id).await;
    let spent = ok(&call(
        &app,
        &both,
        "expand_graph",
        json!({"address": WALLET, "action_id": "a"}),
    )
    .await);
    assert_eq!(spent["cost_atomic"], LEDGER.to_string());
    let shared = ok(&call(&app, &both, "create_snapshot", json!({"address": WALLET})).await);
    assert!(shared["token"].is_string());
    assert_eq!(balance(&app, &account).await, 1_000_000 - LEDGER);
    assert_eq!(live_links(&app, &account).await, 1);
    app.stop().await;
}

/// A scan-only token spends no credits either: a research result names the
/// account's own labels, which only read shows.
#[tokio::test]
async fn a_scan_only_token_cannot_spend_credits() {
    let (app, _s) = scanned(|_| {}).await;
    let (account, scan) = account_with(&app, "scan", true, Some("1")).await;
    let result = call(
        &app,
        &scan,
        "expand_graph",
        json!({"address": WALLET, "action_id": "s1"}),
    )
    .await;
    refused(&result, "forbidden");
    assert_eq!(balance(&app, &account).await, 1_000_000);
    app.stop().await;
}

/// `POST /v1/credits` checked no scope at all: a read-only token is now
/// refused before any challenge is priced.
#[tokio::test]
async fn a_read_only_token_cannot_buy_credits() {
    let paid = crate::payments::paid_app(|_| {}).await;
    let app = &paid.app;
    let (account, read) = account_with(app, "read", false, None).await;
    let response = app
        .client
        .post(app.url("/v1/credits"))
        .bearer_auth(&read)
        .json(&json!({"amount_usd": "5"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.contains("scope=\"read scan\""), "{challenge}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "forbidden");
    assert!(body.get("accepts").is_none(), "no challenge: {body}");
    assert_eq!(balance(app, &account).await, 0);
    assert_eq!(paid.sent(), 0);
}

/// A grant never takes a balance past the maximum: refused with a clear
/// error, nothing credited, and the next grant within it still works
/// (the balance once saturated at i64::MAX and every later grant failed).
#[tokio::test]
async fn a_grant_past_the_maximum_balance_is_refused_and_credits_nothing() {
    let (app, _s) = research_app(Shared::default(), |_| {}).await;
    let (account, _) = account(&app, false, None).await;
    let credits = app.state.credits();
    let usd = |text: &str| server::values::Usd::parse(text).unwrap();
    // Ten grants of 10,000 USD, the most one grant may add, fill it exactly.
    for _ in 0..10 {
        credits.grant(&account, usd("10000"), "big").await.unwrap();
    }
    let full = 100_000 * 1_000_000;
    assert_eq!(balance(&app, &account).await, full);
    let err = credits
        .grant(&account, usd("0.000001"), "one more")
        .await
        .unwrap_err();
    assert_eq!(err.code(), server::error::Code::InvalidParams);
    assert!(
        err.message()
            .contains("past the most an account may hold, 100000.00 USD"),
        "{}",
        err.message()
    );
    let err = credits
        .grant(&account, usd("10000.000001"), "too big")
        .await
        .unwrap_err();
    assert!(
        err.message().contains("a grant is at most 10000.00 USD"),
        "{}",
        err.message()
    );
    assert_eq!(balance(&app, &account).await, full, "nothing credited");
    assert_explained(&app, &account).await;
    app.stop().await;
}

/// A top-up the balance cannot take is refused before it is priced, so
/// nothing is paid for a credit that could not be made.
#[tokio::test]
async fn a_top_up_past_the_maximum_balance_is_refused_before_the_challenge() {
    let paid = crate::payments::paid_app(|_| {}).await;
    let app = &paid.app;
    let (account, token) = account(app, false, None).await;
    let credits = app.state.credits();
    for _ in 0..10 {
        credits
            .grant(
                &account,
                server::values::Usd::parse("10000").unwrap(),
                "big",
            )
            .await
            .unwrap();
    }
    let response = app
        .client
        .post(app.url("/v1/credits"))
        .bearer_auth(&token)
        .json(&json!({"amount_usd": "1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "invalid_params");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("past the most an account may hold"),
        "{body}"
    );
    assert_eq!(paid.sent(), 0);
    assert_eq!(balance(app, &account).await, 100_000 * 1_000_000);
}

#[tokio::test]
async fn parallel_charges_never_overdraw() {
    let (app, _s) = research_app(Shared::default(), |_| {}).await;
    let (account, _) = account(&app, true, None).await;
    let store = app.state.store().clone();
    let now = app.state.now_ms();
    store
        .credit(&NewCredit {
            id: "cm_grant",
            account_id: account.as_str(),
            kind: "grant",
            amount_atomic: 10 * 7,
            max_balance: i64::MAX,
            reference: None,
            note: "ten charges",
            now,
        })
        .await
        .unwrap();
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let store = store.clone();
            let account = account.as_str().to_owned();
            tokio::spawn(async move {
                let action = format!("p{i}");
                let movement = format!("cm_{i}");
                store
                    .begin_action(&NewAction {
                        account_id: &account,
                        action_id: &action,
                        tool: "expand_graph",
                        args_hash: "h",
                        cost_atomic: 7,
                        movement_id: &movement,
                        note: "parallel",
                        now,
                    })
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut charged = 0;
    for t in tasks {
        match t.await.unwrap() {
            Begun::Charged { balance_after } => {
                assert!(balance_after >= 0);
                charged += 1;
            }
            Begun::Insufficient { balance } => assert!(balance < 7),
            Begun::Exists(row) => panic!("no id was reused: {row:?}"),
        }
    }
    assert_eq!(charged, 10, "exactly what the balance covers");
    assert_eq!(balance(&app, &account).await, 0);
    assert_explained(&app, &account).await;
    app.stop().await;
}

#[tokio::test]
async fn parallel_expansions_over_http_never_overdraw() {
    let (app, _s) = scanned(|c| c.graph.rate_burst = 100).await;
    let (account, token) = account(&app, true, Some("0.02")).await; // 4 ledger expansions
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let client = app.client.clone();
            let url = app.url("/v1/graph/expand");
            let token = token.clone();
            tokio::spawn(async move {
                client
                    .post(url)
                    .bearer_auth(token)
                    .json(&json!({"address": WALLET, "action_id": format!("c{i}")}))
                    .send()
                    .await
                    .unwrap()
                    .status()
            })
        })
        .collect();
    let mut ok_count = 0;
    for t in tasks {
        match t.await.unwrap() {
            StatusCode::OK => ok_count += 1,
            StatusCode::FORBIDDEN => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(ok_count, 4);
    assert_eq!(balance(&app, &account).await, 0);
    assert_explained(&app, &account).await;
    app.stop().await;
}

#[tokio::test]
async fn get_credits_shows_the_balance_prices_and_every_movement() {
    let (app, _s) = scanned(|_| {}).await;
    let (_, token) = account(&app, true, Some("0.5")).await;
    ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": WALLET, "action_id": "v"}),
    )
    .await);
    let response = app
        .client
        .get(app.url("/v1/credits"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let view: Value = response.json().await.unwrap();
    assert_eq!(view["balance_atomic"], (500_000 - LEDGER).to_string());
    assert_eq!(view["balance_usd"], "0.495");
    assert_eq!(view["follow_the_money"], true);
    assert_eq!(view["prices"]["expand_graph_ledger"], "0.005");
    let movements = view["movements"].as_array().unwrap();
    assert_eq!(movements.len(), 2);
    assert_eq!(movements[0]["kind"], "charge");
    assert_eq!(movements[0]["action_id"], "v");
    assert_eq!(movements[1]["kind"], "grant");
    let anonymous = app.client.get(app.url("/v1/credits")).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test]
async fn a_top_up_answers_a_challenge_and_credits_once_when_the_payment_settles() {
    let paid = crate::payments::paid_app(|_| {}).await;
    let app = &paid.app;
    let (account, token) = account(app, false, None).await;
    let post = |body: Value| {
        app.client
            .post(app.url("/v1/credits"))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    // An amount the server does not sell.
    assert_eq!(
        post(json!({"amount_usd": "3"})).await.unwrap().status(),
        StatusCode::BAD_REQUEST
    );
    // The challenge, for exactly the amount.
    let response = post(json!({"amount_usd": "5"})).await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYMENT_REQUIRED);
    let challenge: Value = response.json().await.unwrap();
    assert_eq!(challenge["code"], "payment_required");
    let accepts = &challenge["accepts"][0];
    assert_eq!(accepts["amount"], "5000000");
    assert_eq!(accepts["resource"], "/v1/credits");
    assert!(
        accepts["description"]
            .as_str()
            .unwrap()
            .contains("Research credits")
    );
    let quote_id = accepts["extra"]["quoteId"].as_str().unwrap().to_owned();
    assert_eq!(
        balance(app, &account).await,
        0,
        "a challenge credits nothing"
    );

    let payment = paid.build(&paid.payment_for(&challenge));
    let body = json!({"amount_usd": "5", "payment": payment, "quote_id": quote_id});
    let response = post(body.clone()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let done: Value = response.json().await.unwrap();
    assert_eq!(done["credited_atomic"], "5000000");
    assert_eq!(done["balance_atomic"], "5000000");
    assert_eq!(done["payment"]["settled"], true);
    // The same payment again: its first settlement, credited once.
    let again: Value = post(body).await.unwrap().json().await.unwrap();
    assert_eq!(again["credited_atomic"], "0", "{again}");
    assert_eq!(again["payment"]["replayed"], true);
    assert_eq!(balance(app, &account).await, 5_000_000);
    assert_eq!(paid.sent(), 1, "settled once on chain");
    // Reading the credits does not credit it again either.
    let view: Value = app
        .client
        .get(app.url("/v1/credits"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(view["balance_atomic"], "5000000");
    assert_eq!(
        kinds(app, &account).await,
        vec![("topup".to_owned(), 5_000_000)]
    );
    assert_explained(app, &account).await;
}

#[tokio::test]
async fn a_top_up_quote_credits_only_its_own_account_and_amount() {
    let paid = crate::payments::paid_app(|_| {}).await;
    let app = &paid.app;
    let (_, token) = account(app, false, None).await;
    let (other, other_token) = account(app, false, None).await;
    let challenge: Value = app
        .client
        .post(app.url("/v1/credits"))
        .bearer_auth(&token)
        .json(&json!({"amount_usd": "1"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let quote_id = challenge["accepts"][0]["extra"]["quoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    let payment = paid.build(&paid.payment_for(&challenge));
    for (bearer, amount) in [(&other_token, "1"), (&token, "5")] {
        let response = app
            .client
            .post(app.url("/v1/credits"))
            .bearer_auth(bearer)
            .json(&json!({"amount_usd": amount, "payment": payment, "quote_id": quote_id}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::PAYMENT_REQUIRED);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"], "wrong_quote", "{body}");
    }
    assert_eq!(paid.sent(), 0, "nothing was settled");
    assert_eq!(balance(app, &other).await, 0);
}

#[tokio::test]
async fn top_ups_need_payments_switched_on() {
    let (app, _s) = research_app(Shared::default(), |_| {}).await;
    let (_, token) = account(&app, false, None).await;
    let response = app
        .client
        .post(app.url("/v1/credits"))
        .bearer_auth(&token)
        .json(&json!({"amount_usd": "1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    app.stop().await;
}

#[tokio::test]
async fn the_credits_page_shows_the_balance_its_movements_and_how_to_top_up() {
    let (app, _s) = scanned(|_| {}).await;
    let mut browser = crate::portal::Browser::new();
    let account = crate::portal::sign_in(&mut browser, &app).await;
    app.state
        .credits()
        .grant(
            &account,
            server::values::Usd::parse("1").unwrap(),
            "welcome",
        )
        .await
        .unwrap();
    let response = browser.get(&app.url("/credits")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await.unwrap();
    assert!(html.contains("1.00"), "the balance");
    assert!(
        html.contains("welcome") && html.contains("grant"),
        "the movement"
    );
    assert!(html.contains("POST /v1/credits"), "how to top up");
    assert!(html.contains("not switched on"), "the feature is off");
    assert!(
        html.contains("href=\"/credits\""),
        "the navigation links it"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_graph_page_expands_a_node_through_a_csrf_checked_form() {
    let (app, _s) = scanned(|_| {}).await;
    let mut browser = crate::portal::Browser::new();
    let account = crate::portal::sign_in(&mut browser, &app).await;
    let store = app.state.store();
    store
        .set_feature(account.as_str(), FOLLOW_THE_MONEY, true, app.state.now_ms())
        .await
        .unwrap();
    app.state
        .credits()
        .grant(&account, server::values::Usd::parse("1").unwrap(), "g")
        .await
        .unwrap();
    // The Wallets page links each watched wallet's graph.
    server::accounts::watchlist::add_wallet(
        store,
        app.state.now_ms(),
        &account,
        server::solana::WalletAddress::parse(WALLET).unwrap(),
        "hot",
    )
    .await
    .unwrap();
    let wallets = browser
        .get(&app.url("/wallets"))
        .await
        .text()
        .await
        .unwrap();
    assert!(wallets.contains(&format!("href=\"/wallets/{WALLET}/graph\"")));
    let url = app.url(&format!("/wallets/{WALLET}/graph"));
    let html = browser.get(&url).await.text().await.unwrap();
    assert!(html.contains("/vendor/echarts.min.js"));
    assert!(html.contains("id=\"graph-option\""));
    assert!(
        html.contains("\"type\":\"graph\""),
        "a charming graph option"
    );
    assert!(
        html.contains("costs 0.005 USD"),
        "the cost before expanding"
    );
    let csrf = crate::portal::hidden_csrf_of(&html);
    let action = {
        let at =
            html.find("name=\"action_id\" value=\"").unwrap() + "name=\"action_id\" value=\"".len();
        html[at..at + html[at..].find('"').unwrap()].to_owned()
    };
    // Without the CSRF token: refused, nothing charged.
    let refused = browser
        .post_form(
            &url,
            &[
                ("node", WALLET),
                ("action_id", &action),
                ("source", "ledger"),
            ],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(balance(&app, &account).await, 1_000_000);
    // With it: charged once, the balance after shown.
    let form = [
        ("csrf", csrf.as_str()),
        ("node", WALLET),
        ("action_id", action.as_str()),
        ("source", "ledger"),
        ("direction", "both"),
    ];
    let page = browser.post_form(&url, &form).await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains("cost 0.005 USD"), "{page}");
    assert!(page.contains("balance 0.995 USD"));
    assert!(page.contains("<table class=\"edges\""));
    assert_eq!(balance(&app, &account).await, 1_000_000 - LEDGER);
    // The same form again (a reload): not charged twice.
    let again = browser.post_form(&url, &form).await.text().await.unwrap();
    assert!(again.contains("not charged again"));
    assert_eq!(balance(&app, &account).await, 1_000_000 - LEDGER);
    // The script's JSON answer carries the hop's chart option.
    let body = serde_urlencoded::to_string([
        ("csrf", csrf.as_str()),
        ("node", WALLET),
        ("action_id", "portal-json-1"),
        ("source", "ledger"),
    ])
    .unwrap();
    let cookie = browser.cookie_header_pub();
    let json: Value = app
        .client
        .post(&url)
        .header("cookie", cookie)
        .header("accept", "application/json")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(json["option"]["series"][0]["type"], "graph");
    assert!(
        json["option"]["series"][0]["data"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
    assert_eq!(json["balance_usd"], "0.99");
    assert_explained(&app, &account).await;
    app.stop().await;
}

/// The `option` a graph page embeds, parsed.
fn graph_option(html: &str) -> Value {
    let open = "id=\"graph-option\">";
    let at = html.find(open).expect("the graph's option") + open.len();
    let text = &html[at..at + html[at..].find("</script>").unwrap()];
    serde_json::from_str(&crate::pages::unescape(text)).unwrap()
}

#[tokio::test]
async fn the_graph_page_keeps_paid_expansions_labels_its_nodes_and_styles_errors_as_errors() {
    let (app, _s) = scanned(|_| {}).await;
    let mut browser = crate::portal::Browser::new();
    let account = crate::portal::sign_in(&mut browser, &app).await;
    let store = app.state.store();
    store
        .set_feature(account.as_str(), FOLLOW_THE_MONEY, true, app.state.now_ms())
        .await
        .unwrap();
    app.state
        .credits()
        .grant(&account, server::values::Usd::parse("1").unwrap(), "g")
        .await
        .unwrap();
    server::accounts::watchlist::add_wallet(
        store,
        app.state.now_ms(),
        &account,
        server::solana::WalletAddress::parse(WALLET).unwrap(),
        "hot",
    )
    .await
    .unwrap();
    let url = app.url(&format!("/wallets/{WALLET}/graph"));
    let html = browser.get(&url).await.text().await.unwrap();
    let option = graph_option(&html);
    let series = &option["series"][0];
    assert_eq!(series["label"]["show"], true, "labelled nodes");
    assert_eq!(option["tooltip"]["renderMode"], "richText");
    assert_eq!(series["data"].as_array().unwrap().len(), 1);
    assert_eq!(series["data"][0]["name"], "hot", "the wallet by its label");
    let csrf = crate::portal::hidden_csrf_of(&html);
    let action = {
        let at =
            html.find("name=\"action_id\" value=\"").unwrap() + "name=\"action_id\" value=\"".len();
        html[at..at + html[at..].find('"').unwrap()].to_owned()
    };
    let form = [
        ("csrf", csrf.as_str()),
        ("node", WALLET),
        ("action_id", action.as_str()),
        ("source", "ledger"),
        ("direction", "both"),
    ];
    assert_eq!(
        browser.post_form(&url, &form).await.status(),
        StatusCode::OK
    );
    assert_eq!(balance(&app, &account).await, 1_000_000 - LEDGER);

    // A reload (a new GET) shows the paid hop again: nodes, edges, chart.
    let reloaded = browser.get(&url).await.text().await.unwrap();
    let option = graph_option(&reloaded);
    let nodes = option["series"][0]["data"].as_array().unwrap().clone();
    assert!(nodes.len() > 1, "the kept hop's counterparties: {option}");
    assert_eq!(nodes[0]["name"], "hot");
    for n in &nodes {
        let name = n["name"].as_str().unwrap();
        assert!(!name.is_empty(), "every node is labelled: {n}");
        let id = n["id"].as_str().unwrap();
        if id != WALLET {
            // A name, or the address shortened (7xKX…gAsU).
            assert!(name.contains('…') || name.len() < id.len(), "{n}");
        }
    }
    assert!(reloaded.contains("<table class=\"edges\""));
    assert!(
        reloaded.matches("<tr><td><code>").count() > 1,
        "the edge rows are back"
    );
    // Kept once: the same form again is a replay, the page no bigger.
    browser.post_form(&url, &form).await;
    let twice = graph_option(&browser.get(&url).await.text().await.unwrap());
    assert_eq!(
        twice["series"][0]["data"].as_array().unwrap().len(),
        nodes.len()
    );
    assert_eq!(balance(&app, &account).await, 1_000_000 - LEDGER);

    // Another account's page of the same wallet shows none of it.
    let mut other = crate::portal::Browser::new();
    crate::portal::sign_in(&mut other, &app).await;
    let theirs = graph_option(&other.get(&url).await.text().await.unwrap());
    assert_eq!(theirs["series"][0]["data"].as_array().unwrap().len(), 1);

    // A refusal is an error (class error, role alert), not a notice.
    let bad = browser
        .post_form(
            &url,
            &[
                ("csrf", csrf.as_str()),
                ("node", "not-an-address"),
                ("action_id", "portal-bad-1"),
            ],
        )
        .await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let bad = bad.text().await.unwrap();
    assert!(crate::scan_credits::has_error_alert(&bad), "{bad}");
    assert!(!bad.contains("id=\"graph-outcome\""), "{bad}");
    // The busy state's button is the form's own.
    assert!(bad.contains("id=\"expand-button\""));
    app.stop().await;
}

/// A fresh base58 public key.
fn key() -> String {
    bs58::encode(rand::random::<[u8; 32]>()).into_string()
}

/// A recorded-shape (jsonParsed) `getTransaction` answer: `from` pays `to`
/// `lamports` with a System transfer, `from` paying the fee.
fn transfer(sig: &str, slot: u64, from: &str, to: &str, lamports: u64) -> Value {
    const SYSTEM: &str = "11111111111111111111111111111111";
    let fee = 5_000u64;
    let start = 10_000_000_000u64;
    json!({"result": {
        "slot": slot,
        "blockTime": 1_700_000_000 + slot as i64,
        "meta": {
            "err": null, "fee": fee,
            "preBalances": [start, 0, 1],
            "postBalances": [start - lamports - fee, lamports, 1],
            "preTokenBalances": [], "postTokenBalances": [],
            "innerInstructions": [], "logMessages": []
        },
        "transaction": {
            "signatures": [sig],
            "message": {
                "accountKeys": [
                    {"pubkey": from, "signer": true, "writable": true, "source": "transaction"},
                    {"pubkey": to, "signer": false, "writable": true, "source": "transaction"},
                    {"pubkey": SYSTEM, "signer": false, "writable": false, "source": "transaction"}
                ],
                "instructions": [{
                    "programId": SYSTEM, "program": "system", "stackHeight": null,
                    "parsed": {"type": "transfer", "info": {"source": from, "destination": to, "lamports": lamports}}
                }],
                "recentBlockhash": "11111111111111111111111111111111"
            }
        },
        "version": "legacy"
    }})
}

fn entry(t: &Value, err: bool) -> Value {
    let r = &t["result"];
    json!({"signature": r["transaction"]["signatures"][0], "slot": r["slot"], "blockTime": r["blockTime"],
           "err": if err { json!({"InstructionError": [0, "Custom"]}) } else { Value::Null }, "memo": null})
}

#[tokio::test]
async fn a_funding_tree_finds_each_funder_and_expands_live_into_its_edges() {
    // funder pays A; A pays B and C. A also has a failed transaction first
    // (skipped) and a later inbound from B (not the first).
    let (funder, a, b, c) = (key(), key(), key(), key());
    let t1 = transfer("sig1", 10, &funder, &a, 3_000_000_000);
    let t2 = transfer("sig2", 20, &a, &b, 1_000_000_000);
    let t3 = transfer("sig3", 30, &a, &c, 500_000_000);
    let t4 = transfer("sig4", 40, &b, &a, 100_000_000);
    // A failed transfer moves nothing but its fee.
    let mut failed = transfer("sig0", 5, &b, &a, 1);
    failed["result"]["meta"]["err"] = json!({"InstructionError": [0, "Custom"]});
    failed["result"]["meta"]["postBalances"] = json!([10_000_000_000u64 - 5_000, 0, 1]);
    let mut shared = Shared::default();
    shared.history.insert(
        a.clone(),
        vec![
            entry(&t4, false),
            entry(&t3, false),
            entry(&t2, false),
            entry(&t1, false),
            entry(&failed, true),
        ],
    );
    shared
        .history
        .insert(b.clone(), vec![entry(&t4, false), entry(&t2, false)]);
    shared.history.insert(c.clone(), vec![entry(&t3, false)]);
    for t in [&t1, &t2, &t3, &t4, &failed] {
        shared.transactions.insert(
            t["result"]["transaction"]["signatures"][0]
                .as_str()
                .unwrap()
                .to_owned(),
            t.clone(),
        );
    }
    let (app, _s) = research_app(shared, |c| {
        c.solana.tx_encoding = server::solana::TxEncoding::JsonParsed;
    })
    .await;
    let (account, token) = account(&app, true, Some("1")).await;
    for (wallet, sender, signature, lamports) in [
        (&a, &funder, "sig1", "3000000000"),
        (&b, &a, "sig2", "1000000000"),
        (&c, &a, "sig3", "500000000"),
    ] {
        let out = ok(&call(
            &app,
            &token,
            "find_first_funder",
            json!({"address": wallet, "action_id": format!("ff-{wallet}")}),
        )
        .await);
        assert_eq!(out["status"], "found", "{out}");
        assert_eq!(out["complete"], true);
        assert_eq!(out["first_inbound"]["sender"], sender.as_str());
        assert_eq!(out["first_inbound"]["signature"], signature);
        assert_eq!(out["first_inbound"]["lamports"], lamports);
        assert_eq!(out["node"]["id"], sender.as_str());
        assert_eq!(
            out["label"],
            "first inbound transfer within the scanned window"
        );
        assert_eq!(
            out["rpc_calls"].as_u64().unwrap(),
            out["pages_read"].as_u64().unwrap() + out["transactions_read"].as_u64().unwrap()
        );
    }
    let live = ok(&call(
        &app,
        &token,
        "expand_graph",
        json!({"address": a, "action_id": "tree", "source": "live", "window_sigs": 10}),
    )
    .await);
    let mut edges: Vec<(String, String, String)> = live["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["source"].as_str().unwrap().to_owned(),
                e["target"].as_str().unwrap().to_owned(),
                e["amount"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    edges.sort();
    let mut expected = vec![
        (funder.clone(), a.clone(), "3000000000".to_owned()),
        (a.clone(), b.clone(), "1000000000".to_owned()),
        (a.clone(), c.clone(), "500000000".to_owned()),
        (b.clone(), a.clone(), "100000000".to_owned()),
    ];
    expected.sort();
    assert_eq!(edges, expected);
    assert_eq!(live["nodes"][0]["signals"]["fan_in"], 2);
    assert_eq!(live["nodes"][0]["signals"]["fan_out"], 2);
    assert_eq!(live["nodes"][0]["signals"]["counterparty_count"], 3);
    assert_eq!(balance(&app, &account).await, 1_000_000 - 3 * FUNDER - LIVE);
    app.stop().await;
}
