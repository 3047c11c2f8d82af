//! quote_wallet and POST /v1/quotes against a local RPC stand-in.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::{
    helpers::{Options, TestApp, relaxed_limits, spawn_with},
    standin::{self, Fault, Shared},
};

const WALLET: &str = "4kLALtynrmd6pU2LkGXZCmUaMDfsnVixs7SkLjPKNJQG";

fn history(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"signature": format!("s{:07}", n - i), "slot": 10_000_000 - i, "blockTime": 1_700_000_000, "err": null, "memo": null}))
        .collect()
}

async fn app_with_history(n: usize) -> (TestApp, standin::StandIn) {
    let stand_in = standin::start(Shared {
        history: [(WALLET.to_owned(), history(n))].into(),
        ..Shared::default()
    })
    .await;
    let url = stand_in.url.clone();
    let app = spawn_with(Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.solana.retry_base_ms = 1;
            c.solana.max_retries = 1;
        }),
        ..Options::default()
    })
    .await;
    (app, stand_in)
}

#[tokio::test]
async fn a_full_quote_prices_the_counted_history() {
    let (app, stand_in) = app_with_history(1500).await;
    let before = app.state.now_ms();
    let result = app
        .call_tool("quote_wallet", json!({"address": WALLET}))
        .await;
    assert_eq!(result["isError"], false, "{result}");
    let quote = &result["structuredContent"];
    let id = quote["quote_id"].as_str().unwrap();
    assert!(server::ids::is_id("q_", id), "{id}");
    assert_eq!(quote["scope"], "full");
    assert_eq!(quote["tier"], "medium");
    assert_eq!(quote["price_usd"], "1.00");
    assert_eq!(quote["amount_atomic"], "1000000");
    assert_eq!(
        quote["signatures"],
        json!({"counted": 1500, "complete": true})
    );
    assert_eq!(quote["tiers"].as_array().unwrap().len(), 4);
    assert_eq!(quote["cached_read_usd"], "0.02");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(id) && text.contains("1.00 USD"), "{text}");
    assert!(!text.contains('\n'));

    let stored = app.state.store().quote(id).await.unwrap().expect("stored");
    assert_eq!(stored.address, WALLET);
    assert_eq!(stored.price_micros, 1_000_000);
    let ttl = stored.expires_at - stored.created_at;
    assert_eq!(ttl, 15 * 60 * 1000);
    assert!(stored.created_at >= before);
    assert_eq!(
        quote["expires_at"],
        server::values::rfc3339(stored.expires_at)
    );
    // Two pages of signatures were read.
    assert_eq!(
        stand_in
            .shared
            .http_requests
            .load(std::sync::atomic::Ordering::SeqCst),
        2
    );
    app.stop().await;
}

#[tokio::test]
async fn the_rest_route_answers_what_the_tool_answers() {
    let (app, _s) = app_with_history(20).await;
    let tool = app
        .call_tool(
            "quote_wallet",
            json!({"address": WALLET, "scope": "refresh"}),
        )
        .await["structuredContent"]
        .clone();
    let response = app
        .client
        .post(app.url("/v1/quotes"))
        .json(&json!({"address": WALLET, "scope": "refresh"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut rest: Value = response.json().await.unwrap();
    let mut tool = tool;
    for v in [&mut rest, &mut tool] {
        v["quote_id"] = json!("q_");
        v["expires_at"] = json!("t");
    }
    assert_eq!(rest, tool);
    assert_eq!(rest["tier"], "small");
    app.stop().await;
}

#[tokio::test]
async fn preview_read_and_incremental_have_their_own_prices() {
    let (app, _s) = app_with_history(300).await;
    let quote = |scope: &'static str| {
        let app = &app;
        async move {
            app.call_tool("quote_wallet", json!({"address": WALLET, "scope": scope}))
                .await["structuredContent"]
                .clone()
        }
    };
    let preview = quote("preview").await;
    assert_eq!(preview["price_usd"], "0.05");
    assert_eq!(preview["signatures"]["counted"], 100);
    let read = quote("read").await;
    assert_eq!(read["price_usd"], "0.02");
    assert_eq!(read["tier"], "read");
    assert!(read.get("signatures").is_none());
    let incremental = quote("incremental").await;
    assert_eq!(incremental["scope"], "incremental");
    assert_eq!(incremental["price_usd"], "0.25");
    app.stop().await;
}

#[tokio::test]
async fn a_history_past_the_counting_cap_is_priced_above_it() {
    let (app, _s) = app_with_history(10_500).await;
    let quote = app
        .call_tool("quote_wallet", json!({"address": WALLET}))
        .await["structuredContent"]
        .clone();
    assert_eq!(
        quote["signatures"],
        json!({"counted": 10000, "complete": false})
    );
    assert_eq!(quote["tier"], "large");
    app.stop().await;
}

#[tokio::test]
async fn a_bad_address_is_refused_before_any_rpc() {
    let (app, stand_in) = app_with_history(5).await;
    let result = app
        .call_tool("quote_wallet", json!({"address": "not-a-wallet"}))
        .await;
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["code"], "invalid_params");
    let response = app
        .client
        .post(app.url("/v1/quotes"))
        .json(&json!({"address": "0OIl"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        stand_in
            .shared
            .http_requests
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_scope_or_field_is_refused() {
    let (app, _s) = app_with_history(5).await;
    let body = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quote_wallet","arguments":{"address": WALLET, "scope": "everything"}}}),
            &[],
        )
        .await;
    assert_eq!(body["error"]["code"], -32602);
    for bad in [
        json!({"address": WALLET, "scope": "everything"}),
        json!({"address": WALLET, "extra": 1}),
        json!({"scope": "full"}),
    ] {
        let response = app
            .client
            .post(app.url("/v1/quotes"))
            .json(&bad)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{bad}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["code"], "invalid_params");
    }
    app.stop().await;
}

#[tokio::test]
async fn an_rpc_outage_is_unavailable_not_internal() {
    let (app, stand_in) = app_with_history(5).await;
    stand_in
        .shared
        .faults
        .lock()
        .unwrap()
        .extend([Fault::ServerError; 4]);
    let result = app
        .call_tool("quote_wallet", json!({"address": WALLET}))
        .await;
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["code"], "unavailable");
    assert!(
        !result["structuredContent"]["message"]
            .as_str()
            .unwrap()
            .contains("500"),
        "no internals"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_read_quote_says_it_is_paid_on_the_read_not_by_scan_wallet() {
    let (app, _s) = app_with_history(10).await;
    let read = app
        .call_tool("quote_wallet", json!({"address": WALLET, "scope": "read"}))
        .await;
    assert_eq!(read["isError"], false, "{read}");
    let id = read["structuredContent"]["quote_id"].as_str().unwrap();
    let text = read["content"][0]["text"].as_str().unwrap();
    assert!(
        !text.contains("scan_wallet"),
        "scan_wallet refuses a read quote: {text}"
    );
    assert!(
        text.contains("cached read")
            && text.contains(&format!("call get_ledger (or get_positions, get_value_history, get_flows, get_report) for this wallet with quote_id={id}")),
        "{text}"
    );
    // What the text used to send the caller to is indeed refused.
    let refused = app.call_tool("scan_wallet", json!({"quote_id": id})).await;
    assert_eq!(refused["structuredContent"]["code"], "wrong_quote");

    let full = app
        .call_tool("quote_wallet", json!({"address": WALLET}))
        .await;
    let full_id = full["structuredContent"]["quote_id"].as_str().unwrap();
    let text = full["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("a full scan of")
            && text.ends_with(&format!("Start it with scan_wallet quote_id={full_id}.")),
        "{text}"
    );
    app.stop().await;
}
