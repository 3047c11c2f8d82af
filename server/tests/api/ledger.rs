//! get_ledger and GET /v1/wallets/{address}/ledger over a scanned wallet.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::{
    helpers::TestApp,
    scans::{WALLET, app, scan_to_end, shared},
};

async fn scanned() -> (TestApp, crate::standin::StandIn) {
    let (app, stand_in) = app(shared(0, Duration::ZERO), None).await;
    let job = scan_to_end(&app, "full").await;
    assert_eq!(job["status"], "completed");
    (app, stand_in)
}

async fn ledger(app: &TestApp, args: Value) -> Value {
    let mut args = args;
    args["address"] = json!(WALLET);
    app.call_tool("get_ledger", args).await
}

#[tokio::test]
async fn a_wallet_never_scanned_is_not_found() {
    let (app, _s) = app(shared(0, Duration::ZERO), None).await;
    let result = ledger(&app, json!({})).await;
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["code"], "not_found");
    let rest = app
        .client
        .get(app.url(&format!("/v1/wallets/{WALLET}/ledger")))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn pages_walk_the_whole_ledger_newest_first() {
    let (app, _s) = scanned().await;
    let all = ledger(&app, json!({"limit": 1000})).await["structuredContent"].clone();
    let all_entries = all["entries"].as_array().unwrap().clone();
    assert_eq!(
        all_entries.len() as i64,
        app.state.store().count_legs(WALLET).await.unwrap()
    );
    assert!(all["next_cursor"].is_null());
    let slots: Vec<u64> = all_entries
        .iter()
        .map(|e| e["slot"].as_u64().unwrap())
        .collect();
    assert!(slots.windows(2).all(|w| w[0] >= w[1]), "newest first");

    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"limit": 3});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = ledger(&app, args).await;
        let text = page["content"][0]["text"].as_str().unwrap().to_owned();
        let page = page["structuredContent"].clone();
        walked.extend(page["entries"].as_array().unwrap().clone());
        match page["next_cursor"].as_str() {
            Some(c) => {
                assert!(text.contains("more follow"), "{text}");
                cursor = Some(c.to_owned());
            }
            None => {
                assert!(text.contains("last page"), "{text}");
                break;
            }
        }
    }
    assert_eq!(walked, all_entries);
    app.stop().await;
}

#[tokio::test]
async fn the_rest_route_answers_what_the_tool_answers() {
    let (app, _s) = scanned().await;
    let tool = ledger(
        &app,
        json!({"limit": 4, "exclude": ["network_fee"], "include_counterparties": true}),
    )
    .await["structuredContent"]
        .clone();
    let rest: Value = app
        .client
        .get(app.url(&format!(
            "/v1/wallets/{WALLET}/ledger?limit=4&exclude=network_fee&include_counterparties=true"
        )))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rest["entries"], tool["entries"]);
    assert!(tool["entries"][0]["counterparties"].is_array());
    app.stop().await;
}

#[tokio::test]
async fn filters_narrow_the_ledger() {
    let (app, _s) = scanned().await;
    let entries = |v: Value| {
        v["structuredContent"]["entries"]
            .as_array()
            .unwrap()
            .clone()
    };
    let fees = entries(
        ledger(
            &app,
            json!({"operation_type": "network_fee", "limit": 1000}),
        )
        .await,
    );
    assert!(!fees.is_empty());
    assert!(
        fees.iter()
            .all(|e| e["operation_type"] == "network_fee" && e["mint"] == "sol")
    );
    assert!(fees.iter().all(|e| e.get("counterparties").is_none()));
    let rest = entries(ledger(&app, json!({"exclude": ["network_fee"], "limit": 1000})).await);
    assert!(rest.iter().all(|e| e["operation_type"] != "network_fee"));
    let all = entries(ledger(&app, json!({"limit": 1000})).await);
    assert_eq!(fees.len() + rest.len(), all.len());
    let sol = entries(ledger(&app, json!({"mint": "SOL", "limit": 1000})).await);
    assert!(sol.iter().all(|e| e["mint"] == "sol"));

    // A time window: only legs inside it, bounds inclusive.
    let newest = all[0]["block_time"].as_str().unwrap().to_owned();
    let window = entries(ledger(&app, json!({"from": newest, "to": newest, "limit": 1000})).await);
    assert!(!window.is_empty());
    assert!(window.iter().all(|e| e["block_time"] == newest.as_str()));
    let before_everything = entries(ledger(&app, json!({"to": "2001-01-01"})).await);
    assert!(before_everything.is_empty());

    // With no price source answering, only stablecoin legs have a value.
    let priced = entries(ledger(&app, json!({"min_usd_value": 0.01, "limit": 1000})).await);
    assert!(priced.iter().all(|e| e["priced"] == true));
    assert!(
        all.iter()
            .any(|e| e["priced"] == false && e["usd_value"].is_null())
    );
    app.stop().await;
}

/// A scanned wallet whose server reads prices from the price stand-in.
pub async fn scanned_priced() -> (
    TestApp,
    crate::standin::StandIn,
    crate::price_standin::PriceStandIn,
) {
    let prices = crate::price_standin::start().await;
    let stand_in = crate::standin::start(shared(0, Duration::ZERO)).await;
    let (rpc, price_url) = (stand_in.url.clone(), prices.url.clone());
    let app = crate::helpers::spawn_with(crate::helpers::Options {
        configure: Box::new(move |c| {
            crate::helpers::relaxed_limits(c);
            crate::price_standin::configure(c, &price_url);
            c.solana.rpc_url = rpc;
            c.solana.retry_base_ms = 1;
            c.solana.batch_size = 4;
            c.worker.in_process = true;
            c.worker.poll_ms = 20;
        }),
        ..crate::helpers::Options::default()
    })
    .await;
    let job = scan_to_end(&app, "full").await;
    assert_eq!(job["status"], "completed");
    (app, stand_in, prices)
}

/// A scanned wallet whose server's price sources are down (a closed port).
pub async fn scanned_unpriced() -> (TestApp, crate::standin::StandIn) {
    let stand_in = crate::standin::start(shared(0, Duration::ZERO)).await;
    let rpc = stand_in.url.clone();
    let app = crate::helpers::spawn_with(crate::helpers::Options {
        configure: Box::new(move |c| {
            crate::helpers::relaxed_limits(c);
            crate::price_standin::configure(c, "http://127.0.0.1:9");
            c.solana.rpc_url = rpc;
            c.solana.retry_base_ms = 1;
            c.solana.batch_size = 4;
            c.worker.in_process = true;
            c.worker.poll_ms = 20;
        }),
        ..crate::helpers::Options::default()
    })
    .await;
    let job = scan_to_end(&app, "full").await;
    assert_eq!(job["status"], "completed");
    (app, stand_in)
}

/// Store a SOL daily close of $100 for every day from the first of `times`
/// to the last, as a backfill (or another instance) would.
pub async fn store_sol_daily_closes(app: &TestApp, times: &[i64]) {
    let first_day = times.iter().min().unwrap().div_euclid(86_400) * 86_400;
    let end = (times.iter().max().unwrap().div_euclid(86_400) + 1) * 86_400;
    let closes: Vec<(i64, String)> = (first_day..end)
        .step_by(86_400)
        .map(|d| (d, "100".to_owned()))
        .collect();
    app.state
        .store()
        .store_price_range("sol", 86_400, (first_day, end), &closes, "coinbase")
        .await
        .unwrap();
}

/// Write one transaction of `lamports` into the wallet through the store,
/// as a scan does.
pub async fn write_transfer(app: &TestApp, signature: &str, slot: u64, t: i64, lamports: i128) {
    use server::ledger::{Leg, OperationType};
    let legs = [Leg {
        signature: signature.to_owned(),
        slot,
        block_time: Some(t),
        index: 0,
        operation_type: OperationType::TransferIn,
        mint: "sol".to_owned(),
        amount: lamports,
        decimals: 9,
        counterparties: Vec::new(),
        position: None,
        venue: None,
        router: None,
    }];
    let written = app
        .state
        .store()
        .write_legs(
            WALLET,
            &[server::store::TransactionLegs {
                signature,
                slot,
                block_time: Some(t),
                failed: false,
                legs: &legs,
            }],
        )
        .await
        .unwrap();
    assert_eq!(written, 1);
}

fn unix(entry: &Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(entry["block_time"].as_str().unwrap())
        .unwrap()
        .timestamp()
}

#[tokio::test]
async fn legs_written_after_a_read_appear_on_the_next_read() {
    let (app, _s, _p) = scanned_priced().await;
    let all = ledger(&app, json!({"limit": 1000})).await["structuredContent"]["entries"].clone();
    let first = ledger(&app, json!({"limit": 2})).await["structuredContent"].clone();
    let newest = first["entries"][0].clone();
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let slot = newest["slot"].as_u64().unwrap() + 1;
    write_transfer(
        &app,
        "newer1111111111111111111111111111",
        slot,
        unix(&newest),
        3_000_000_000,
    )
    .await;
    let again = ledger(&app, json!({"limit": 2})).await["structuredContent"].clone();
    let added = &again["entries"][0];
    assert_eq!(added["signature"], "newer1111111111111111111111111111");
    assert_eq!(added["amount"], "3000000000");
    // Valued from the series the first read stored, like its neighbour.
    let hour = unix(&newest) - unix(&newest).rem_euclid(3600);
    let close: rust_decimal::Decimal = crate::price_standin::close_at(hour).parse().unwrap();
    assert_eq!(
        added["usd_value"],
        (close * rust_decimal::Decimal::from(3))
            .normalize()
            .to_string()
    );
    assert_eq!(again["entries"][1], newest);
    // A cursor made before the write still pages on from where it was.
    let next = ledger(&app, json!({"limit": 2, "cursor": cursor})).await;
    assert_eq!(next["isError"], false, "{next}");
    assert_eq!(next["structuredContent"]["entries"][0], all[2]);
    app.stop().await;
}

#[tokio::test]
async fn closes_stored_after_a_read_value_the_next_read() {
    // The source was down for the first read; a later fill of the series
    // (a backfill, another instance) prices the same legs on the next.
    let (app, _s) = scanned_unpriced().await;
    let sol = |v: &Value| -> Vec<Value> {
        v["structuredContent"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["mint"] == "sol")
            .cloned()
            .collect()
    };
    let before = sol(&ledger(&app, json!({"limit": 1000})).await);
    assert!(!before.is_empty());
    assert!(
        before.iter().all(|e| e["priced"] == false),
        "no source, no price"
    );
    let times: Vec<i64> = before.iter().map(unix).collect();
    store_sol_daily_closes(&app, &times).await;
    let after = sol(&ledger(&app, json!({"limit": 1000})).await);
    assert_eq!(after.len(), before.len());
    for e in &after {
        assert_eq!(e["priced"], true, "{e}");
        let amount = rust_decimal::Decimal::from_i128_with_scale(
            e["amount"].as_str().unwrap().parse().unwrap(),
            9,
        );
        assert_eq!(
            e["usd_value"],
            (amount * rust_decimal::Decimal::from(100))
                .round_dp(6)
                .normalize()
                .to_string()
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn legs_are_valued_at_their_block_time_and_a_usd_floor_filters() {
    use rust_decimal::Decimal;
    let entries = |v: Value| {
        v["structuredContent"]["entries"]
            .as_array()
            .unwrap()
            .clone()
    };
    let (app, _s, prices) = scanned_priced().await;
    let all = entries(ledger(&app, json!({"limit": 1000})).await);
    let sol: Vec<&Value> = all.iter().filter(|e| e["mint"] == "sol").collect();
    assert!(!sol.is_empty());
    for e in &sol {
        assert_eq!(e["priced"], true, "{e}");
        // The close of the hour holding the leg (the wallet's history is
        // short enough that its hourly series is fetched inline).
        let t = chrono::DateTime::parse_from_rfc3339(e["block_time"].as_str().unwrap())
            .unwrap()
            .timestamp();
        let hour = t - t.rem_euclid(3600);
        let close: Decimal = crate::price_standin::close_at(hour).parse().unwrap();
        let amount =
            Decimal::from_i128_with_scale(e["amount"].as_str().unwrap().parse().unwrap(), 9);
        let usd: Decimal = e["usd_value"].as_str().unwrap().parse().unwrap();
        assert_eq!(usd, (amount * close).round_dp(6), "{e}");
    }
    insta::assert_json_snapshot!("ledger_priced_entries", all[..4]);
    let unpriced = all.iter().filter(|e| e["priced"] == false).count();
    let candles = prices
        .counters
        .candles
        .load(std::sync::atomic::Ordering::SeqCst);
    assert!(candles > 0);
    // Reading again fetches nothing: every bucket was stored once.
    let again = entries(ledger(&app, json!({"limit": 1000})).await);
    assert_eq!(again, all);
    assert_eq!(
        prices
            .counters
            .candles
            .load(std::sync::atomic::Ordering::SeqCst),
        candles
    );

    // A floor keeps exactly the legs worth at least that much, across pages.
    let floor = Decimal::new(1, 2);
    let expected: Vec<&Value> = all
        .iter()
        .filter(|e| {
            e["usd_value"]
                .as_str()
                .is_some_and(|u| u.parse::<Decimal>().unwrap().abs() >= floor)
        })
        .collect();
    assert!(
        expected.len() < all.len() - unpriced,
        "the floor leaves some out"
    );
    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"min_usd_value": 0.01, "limit": 3});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = ledger(&app, args).await["structuredContent"].clone();
        walked.extend(page["entries"].as_array().unwrap().clone());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(walked.iter().collect::<Vec<_>>(), expected);
    let rest = app
        .client
        .get(app.url(&format!(
            "/v1/wallets/{WALLET}/ledger?min_usd_value=0.01&limit=1000"
        )))
        .send()
        .await
        .unwrap();
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["entries"].as_array().unwrap().len(), expected.len());
    app.stop().await;
}

#[tokio::test]
async fn bad_parameters_are_invalid_params() {
    let (app, _s) = scanned().await;
    for args in [
        json!({"limit": 0}),
        json!({"limit": 1001}),
        json!({"operation_type": "theft"}),
        json!({"exclude": ["nope"]}),
        json!({"from": "last tuesday"}),
        json!({"from": "2026-02-01", "to": "2026-01-01"}),
        json!({"mint": "not-a-mint"}),
    ] {
        let result = ledger(&app, args.clone()).await;
        assert_eq!(
            result["structuredContent"]["code"], "invalid_params",
            "{args}"
        );
    }
    let rest = app
        .client
        .get(app.url(&format!("/v1/wallets/{WALLET}/ledger?limit=5&surprise=1")))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::BAD_REQUEST);
    app.stop().await;
}

#[tokio::test]
async fn cursors_cannot_be_tampered_with_or_reused_elsewhere() {
    let (app, _s) = scanned().await;
    let first = ledger(&app, json!({"limit": 2})).await["structuredContent"].clone();
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    // Flip one character of the signed payload.
    let mut tampered: Vec<char> = cursor.chars().collect();
    tampered[3] = if tampered[3] == 'A' { 'B' } else { 'A' };
    let tampered: String = tampered.into_iter().collect();
    for (args, why) in [
        (json!({"limit": 2, "cursor": tampered}), "tampered"),
        (json!({"limit": 2, "cursor": "bm90IGEgY3Vyc29y"}), "made up"),
        (
            json!({"limit": 2, "cursor": cursor, "mint": "sol"}),
            "other filters",
        ),
    ] {
        let result = ledger(&app, args).await;
        assert_eq!(
            result["structuredContent"]["code"], "invalid_params",
            "{why}"
        );
    }
    // The wallet is part of what the cursor is bound to: presented for
    // another wallet it opens nothing. Arguments are checked before the
    // paywall, so it is refused as invalid before anything could be paid.
    let other = "4kLALtynrmd6pU2LkGXZCmUaMDfsnVixs7SkLjPKNJQG";
    let result = app
        .call_tool("get_ledger", json!({"address": other, "cursor": cursor}))
        .await;
    assert_eq!(result["structuredContent"]["code"], "invalid_params");
    // The untouched cursor still works.
    let next = ledger(&app, json!({"limit": 2, "cursor": cursor})).await;
    assert_eq!(next["isError"], false);
    app.stop().await;
}

/// `GET /v1/wallets/{WALLET}/ledger?{query}`: the body.
async fn rest_page(app: &TestApp, query: &str) -> Value {
    let response = app
        .client
        .get(app.url(&format!("/v1/wallets/{WALLET}/ledger?{query}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_kept_page_is_the_page_the_tool_makes_and_is_read_again_once_legs_are_written() {
    // Pages are kept per wallet, filters, start and size on the ledger
    // version, which the transaction writing legs bumps.
    let (app, _s, _p) = scanned_priced().await;
    let made = rest_page(&app, "limit=5&include_counterparties=true").await;
    let kept = rest_page(&app, "limit=5&include_counterparties=true").await;
    assert_eq!(kept, made, "the kept page is the page made");
    let tool = ledger(&app, json!({"limit": 5, "include_counterparties": true})).await;
    assert_eq!(tool["structuredContent"], made, "REST and MCP answer alike");
    let plain = rest_page(&app, "limit=5").await;
    assert!(
        plain["entries"][0].get("counterparties").is_none(),
        "another choice is another page: {plain}"
    );
    let newest_time = app
        .state
        .store()
        .wallet_legs(WALLET)
        .await
        .unwrap()
        .iter()
        .filter_map(|l| l.block_time)
        .max()
        .unwrap();
    let newest_slot = made["entries"][0]["slot"].as_u64().unwrap();
    let signature = "added111111111111111111111111111";
    write_transfer(
        &app,
        signature,
        newest_slot + 1,
        newest_time + 1,
        5_000_000_000,
    )
    .await;
    let after = rest_page(&app, "limit=5&include_counterparties=true").await;
    assert_eq!(after["entries"][0]["signature"], signature, "{after}");
    assert_eq!(after["entries"][1], made["entries"][0]);
    app.stop().await;
}

#[tokio::test]
async fn a_kept_page_is_valued_again_once_closes_are_stored() {
    let (app, _s) = scanned_unpriced().await;
    let before = rest_page(&app, "limit=1000&mint=sol").await;
    assert_eq!(rest_page(&app, "limit=1000&mint=sol").await, before);
    let entries = before["entries"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["priced"] == false), "{before}");
    let times: Vec<i64> = app
        .state
        .store()
        .wallet_legs(WALLET)
        .await
        .unwrap()
        .iter()
        .filter_map(|l| l.block_time)
        .collect();
    store_sol_daily_closes(&app, &times).await;
    let after = rest_page(&app, "limit=1000&mint=sol").await;
    let entries = after["entries"].as_array().unwrap();
    assert!(
        entries.iter().any(|e| e["priced"] == true),
        "closes stored after the page was kept price it: {after}"
    );
    app.stop().await;
}

#[tokio::test]
async fn kept_answers_are_sent_gzipped_to_a_caller_that_accepts_it() {
    use std::io::Read;
    let (app, _s, _p) = scanned_priced().await;
    for path in ["ledger?limit=1000", "positions"] {
        let url = app.url(&format!("/v1/wallets/{WALLET}/{path}"));
        let plain = app.client.get(&url).send().await.unwrap();
        assert_eq!(plain.status(), StatusCode::OK);
        assert!(plain.headers().get("content-encoding").is_none(), "{path}");
        assert_eq!(plain.headers()["vary"], "accept-encoding", "{path}");
        let plain = plain.bytes().await.unwrap();
        for _ in 0..2 {
            let zipped = app
                .client
                .get(&url)
                .header("accept-encoding", "br;q=1, gzip;q=0.8")
                .send()
                .await
                .unwrap();
            assert_eq!(zipped.status(), StatusCode::OK);
            assert_eq!(zipped.headers()["content-encoding"], "gzip", "{path}");
            assert_eq!(zipped.headers()["vary"], "accept-encoding");
            assert_eq!(zipped.headers()["content-type"], "application/json");
            let zipped = zipped.bytes().await.unwrap();
            assert!(
                zipped.len() < plain.len(),
                "{path}: {} of {}",
                zipped.len(),
                plain.len()
            );
            let mut back = Vec::new();
            flate2::read::GzDecoder::new(&zipped[..])
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(back, plain, "{path}: the same answer");
        }
        let refused = app
            .client
            .get(&url)
            .header("accept-encoding", "gzip;q=0, identity")
            .send()
            .await
            .unwrap();
        assert!(refused.headers().get("content-encoding").is_none());
        assert_eq!(refused.bytes().await.unwrap(), plain);
    }
    app.stop().await;
}

/// The source's cool-down in [`scanned_with_prices_down`].
const COOL_DOWN_MS: i64 = 60_000;

/// A scanned wallet whose server's price stand-in answers 503 to
/// everything (until a test says otherwise), with a breaker that opens at
/// the first failure for [`COOL_DOWN_MS`], on a hand-driven clock.
async fn scanned_with_prices_down() -> (
    TestApp,
    crate::standin::StandIn,
    crate::price_standin::PriceStandIn,
    server::clock::ManualClock,
) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let clock = server::clock::ManualClock::new(now);
    let prices = crate::price_standin::start().await;
    prices
        .counters
        .failing
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let stand_in = crate::standin::start(shared(0, Duration::ZERO)).await;
    let (rpc, price_url) = (stand_in.url.clone(), prices.url.clone());
    let app = crate::helpers::spawn_with(crate::helpers::Options {
        clock: std::sync::Arc::new(clock.clone()),
        configure: Box::new(move |c| {
            crate::helpers::relaxed_limits(c);
            crate::price_standin::configure(c, &price_url);
            c.prices.breaker_failures = 1;
            c.prices.breaker_cooldown_secs = (COOL_DOWN_MS / 1000) as u64;
            c.solana.rpc_url = rpc;
            c.solana.retry_base_ms = 1;
            c.solana.batch_size = 4;
            c.worker.in_process = true;
            c.worker.poll_ms = 20;
        }),
    })
    .await;
    let job = scan_to_end(&app, "full").await;
    assert_eq!(job["status"], "completed");
    (app, stand_in, prices, clock)
}

/// The SOL entries of a page.
fn sol_entries(page: &Value) -> Vec<Value> {
    page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["mint"] == "sol")
        .cloned()
        .collect()
}

/// `amount` lamports at `close` USD per SOL, as the ledger writes it.
fn usd_at(entry: &Value, close: rust_decimal::Decimal) -> String {
    let amount = rust_decimal::Decimal::from_i128_with_scale(
        entry["amount"].as_str().unwrap().parse().unwrap(),
        9,
    );
    (amount * close).round_dp(6).normalize().to_string()
}

#[tokio::test]
async fn while_the_price_source_rests_closes_stored_here_count_at_once_and_another_instances_when_the_rest_ends()
 {
    let (app, _s, _prices, clock) = scanned_with_prices_down().await;
    let made = rest_page(&app, "limit=50").await;
    let sol = sol_entries(&made);
    assert!(!sol.is_empty());
    assert!(sol.iter().all(|e| e["priced"] == false), "{made}");
    assert_eq!(rest_page(&app, "limit=50").await, made, "kept");

    // Another instance on the same database stores daily closes of $100
    // while this one's source rests: this process reads them when the
    // rest ends (at most one cool-down later), not before.
    let times: Vec<i64> = sol.iter().map(unix).collect();
    let first_day = times.iter().min().unwrap().div_euclid(86_400) * 86_400;
    let end = (times.iter().max().unwrap().div_euclid(86_400) + 1) * 86_400;
    let closes: Vec<(i64, String)> = (first_day..end)
        .step_by(86_400)
        .map(|d| (d, "100".to_owned()))
        .collect();
    let other = server::store::Store::connect(
        &app.state.config().database_url,
        &server::config::DatabaseConfig::default(),
    )
    .await
    .unwrap();
    other
        .store_price_range("sol", 86_400, (first_day, end), &closes, "coinbase")
        .await
        .unwrap();
    other.close().await;
    assert_eq!(rest_page(&app, "limit=50").await, made);
    clock.advance_ms(COOL_DOWN_MS + 1);
    // The source is still down (the probe fails), but the rest the span
    // was checked in is over: the stored closes are read.
    let daily = rest_page(&app, "limit=50").await;
    assert_eq!(sol_entries(&daily).len(), sol.len());
    for e in sol_entries(&daily) {
        assert_eq!(
            e["usd_value"],
            usd_at(&e, rust_decimal::Decimal::from(100)),
            "{e}"
        );
    }

    // During the new rest, hourly closes stored through this process's
    // own store (a backfill here) count on the very next read.
    for &t in &times {
        let hour = t - t.rem_euclid(3600);
        app.state
            .store()
            .store_price_range(
                "sol",
                3600,
                (hour, hour + 3600),
                &[(hour, "200".to_owned())],
                "coinbase",
            )
            .await
            .unwrap();
    }
    let hourly = rest_page(&app, "limit=50").await;
    assert_eq!(sol_entries(&hourly).len(), sol.len());
    for e in sol_entries(&hourly) {
        assert_eq!(
            e["usd_value"],
            usd_at(&e, rust_decimal::Decimal::from(200)),
            "{e}"
        );
    }
    app.stop().await;
}

/// Counts the WARN events of the price code (`server::prices…`) on the
/// thread it is the default subscriber of: a `#[tokio::test]` runs the
/// server's tasks on its one thread, so those are the server's.
#[derive(Clone, Default)]
struct PriceWarnings(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl PriceWarnings {
    fn count(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Count on this thread until the guard is dropped. tracing caches per
    /// call site whether anyone listens, and while one dispatcher is
    /// registered it asks only the thread that first reaches the site: a
    /// parallel test with no subscriber would cache "never" and this count
    /// would miss events (tracing-core 0.1.36, tokio-rs/tracing#3611). An
    /// idle second dispatcher held alongside keeps every decision on the
    /// path that asks all live dispatchers, the layer answers "sometimes"
    /// so each event asks again, and the rebuild repairs sites cached
    /// before.
    fn install(&self) -> (tracing::subscriber::DefaultGuard, tracing::Dispatch) {
        use tracing_subscriber::layer::SubscriberExt as _;
        let anchor = tracing::Dispatch::new(tracing_subscriber::registry());
        let guard =
            tracing::subscriber::set_default(tracing_subscriber::registry().with(self.clone()));
        tracing::callsite::rebuild_interest_cache();
        (guard, anchor)
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for PriceWarnings {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let meta = event.metadata();
        if *meta.level() == tracing::Level::WARN && meta.target().starts_with("server::prices") {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

#[tokio::test]
async fn while_the_price_source_rests_a_kept_page_is_served_and_the_outage_warned_once_per_cool_down()
 {
    use std::sync::atomic::Ordering::SeqCst;

    let warnings = PriceWarnings::default();
    let _log = warnings.install();
    let (app, _s, prices, clock) = scanned_with_prices_down().await;
    let pages = app.state.services().caches().pages.clone();
    let series = app.state.services().caches().series.clone();

    // The first read asks the source, which fails: the breaker opens (one
    // warning) and the page is made with its SOL legs unpriced.
    let made = rest_page(&app, "limit=50").await;
    let sol: Vec<&Value> = made["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["mint"] == "sol")
        .collect();
    assert!(!sol.is_empty());
    assert!(sol.iter().all(|e| e["priced"] == false), "{made}");
    assert_eq!(
        warnings.count(),
        1,
        "the outage is warned of when the breaker opens"
    );

    // During the cool-down the same page is the kept one: nothing is asked
    // of the source, no close is read from the database, nothing logged.
    let (hits, reads, asked) = (
        pages.stats().hits(),
        series.database_reads(),
        prices.counters.total(),
    );
    for _ in 0..3 {
        assert_eq!(rest_page(&app, "limit=50").await, made);
    }
    assert_eq!(pages.stats().hits(), hits + 3, "served from the page cache");
    assert_eq!(series.database_reads(), reads, "no close read again");
    assert_eq!(
        prices.counters.total(),
        asked,
        "the resting source is not asked"
    );
    assert_eq!(warnings.count(), 1, "one warning for the whole cool-down");

    // The cool-down ends; the probe fails: a new cool-down, one more warning.
    clock.advance_ms(COOL_DOWN_MS + 1);
    assert_eq!(rest_page(&app, "limit=50").await, made);
    assert!(prices.counters.total() > asked, "the probe went out");
    let asked = prices.counters.total();
    assert_eq!(rest_page(&app, "limit=50").await, made);
    assert_eq!(prices.counters.total(), asked);
    assert_eq!(warnings.count(), 2, "one warning per cool-down");

    // The source comes back: the first read after the cool-down stores its
    // closes and answers a fresh page, never the kept unpriced one.
    prices.counters.failing.store(false, SeqCst);
    clock.advance_ms(COOL_DOWN_MS + 1);
    let fresh = rest_page(&app, "limit=50").await;
    let mut priced = 0;
    for e in fresh["entries"].as_array().unwrap() {
        if e["mint"] != "sol" {
            continue;
        }
        let t = unix(e);
        let close: rust_decimal::Decimal = crate::price_standin::close_at(t - t.rem_euclid(3600))
            .parse()
            .unwrap();
        let amount = rust_decimal::Decimal::from_i128_with_scale(
            e["amount"].as_str().unwrap().parse().unwrap(),
            9,
        );
        assert_eq!(e["priced"], true, "{e}");
        let usd: rust_decimal::Decimal = e["usd_value"].as_str().unwrap().parse().unwrap();
        assert_eq!(usd, (amount * close).round_dp(6), "{e}");
        priced += 1;
    }
    assert_eq!(priced, sol.len());
    assert_eq!(
        warnings.count(),
        2,
        "a source that answers is not warned of"
    );
    app.stop().await;
}

/// One leg of a hand-written transaction, for the spam rule's store test.
fn spam_test_leg(
    signature: &str,
    index: u32,
    operation_type: server::ledger::OperationType,
    mint: &str,
    amount: i128,
    from: Option<&str>,
) -> server::ledger::Leg {
    use server::ledger::{Counterparty, CounterpartyKind, Direction, Leg};
    Leg {
        signature: signature.to_owned(),
        slot: 100 + u64::from(index),
        block_time: Some(1_700_000_000),
        index,
        operation_type,
        mint: mint.to_owned(),
        amount,
        decimals: 6,
        counterparties: from
            .map(|address| Counterparty {
                address: address.to_owned(),
                direction: Direction::In,
                kind: CounterpartyKind::Wallet,
            })
            .into_iter()
            .collect(),
        position: None,
        venue: None,
        router: None,
    }
}

#[tokio::test]
async fn the_spam_rule_spares_every_token_the_wallet_dealt_in_anywhere_in_its_history() {
    use server::ledger::OperationType::{self, AirdropSpam, Swap};
    let app = crate::helpers::spawn_app().await;
    let store = app.state.store();
    // Three transactions: a mass distribution of HELP sent to the wallet
    // (spam by the per-transaction rule), HELP minted straight in to many
    // owners (spam too), a SCAM distribution, and later a swap of USDC for
    // HELP. HELP is a token the wallet bought, so neither HELP leg is spam;
    // SCAM it never dealt in, so it stays spam.
    let txs: Vec<(&str, Vec<server::ledger::Leg>)> = vec![
        (
            "spam1111111111111111111111111111",
            vec![
                spam_test_leg(
                    "spam1111111111111111111111111111",
                    0,
                    AirdropSpam,
                    "HELP",
                    5,
                    Some("Sender"),
                ),
                spam_test_leg(
                    "spam1111111111111111111111111111",
                    1,
                    AirdropSpam,
                    "SCAM",
                    7,
                    Some("Sender"),
                ),
            ],
        ),
        (
            "mint1111111111111111111111111111",
            vec![spam_test_leg(
                "mint1111111111111111111111111111",
                0,
                AirdropSpam,
                "HELP",
                3,
                None,
            )],
        ),
        (
            "swap1111111111111111111111111111",
            vec![
                spam_test_leg(
                    "swap1111111111111111111111111111",
                    0,
                    Swap,
                    "USDC",
                    -10,
                    None,
                ),
                spam_test_leg(
                    "swap1111111111111111111111111111",
                    1,
                    Swap,
                    "HELP",
                    20,
                    None,
                ),
            ],
        ),
    ];
    for (i, (signature, legs)) in txs.iter().enumerate() {
        store
            .write_legs(
                WALLET,
                &[server::store::TransactionLegs {
                    signature,
                    slot: 100 + i as u64,
                    block_time: Some(1_700_000_000),
                    failed: false,
                    legs,
                }],
            )
            .await
            .unwrap();
    }
    let before = store.ledger_version(WALLET).await.unwrap();
    assert_eq!(store.unmark_spam(WALLET).await.unwrap(), 2);
    assert!(store.ledger_version(WALLET).await.unwrap() > before);
    let mut read: Vec<(String, i32, OperationType)> = store
        .wallet_legs(WALLET)
        .await
        .unwrap()
        .into_iter()
        .map(|l| {
            (
                l.signature,
                l.leg_index,
                OperationType::parse(&l.operation_type).unwrap(),
            )
        })
        .collect();
    read.sort();
    assert_eq!(
        read,
        [
            (
                "mint1111111111111111111111111111".to_owned(),
                0,
                OperationType::Airdrop
            ),
            (
                "spam1111111111111111111111111111".to_owned(),
                0,
                OperationType::TransferIn
            ),
            (
                "spam1111111111111111111111111111".to_owned(),
                1,
                AirdropSpam
            ),
            ("swap1111111111111111111111111111".to_owned(), 0, Swap),
            ("swap1111111111111111111111111111".to_owned(), 1, Swap),
        ]
    );
    // Applying it again changes nothing.
    assert_eq!(store.unmark_spam(WALLET).await.unwrap(), 0);
}

#[tokio::test]
async fn lending_withdrawals_beyond_what_went_in_are_split_into_principal_and_interest() {
    use server::ledger::OperationType::{self, Interest, PositionDeposit, PositionWithdraw};
    let app = crate::helpers::spawn_app().await;
    let store = app.state.store();
    // A Kamino obligation: 1,000 USDC in, later 1,025.5 USDC out (the
    // decoder reads the whole amount the wallet received as the
    // withdrawal). By the history, 1,000 was principal and 25.5 interest.
    let leg = |signature: &str, slot: u64, operation_type, amount: i128| {
        let mut l = spam_test_leg(signature, 1, operation_type, "USDC", amount, None);
        l.slot = slot;
        l.block_time = Some(1_700_000_000 + slot as i64);
        l.position = Some("ob1igation".to_owned());
        l.router = Some("Kamino Lend".to_owned());
        l
    };
    let txs = [
        (
            "dep11111111111111111111111111111",
            200,
            leg(
                "dep11111111111111111111111111111",
                200,
                PositionDeposit,
                -1_000_000_000,
            ),
        ),
        (
            "wd111111111111111111111111111111",
            300,
            leg(
                "wd111111111111111111111111111111",
                300,
                PositionWithdraw,
                1_025_500_000,
            ),
        ),
    ];
    for (signature, slot, l) in &txs {
        store
            .write_legs(
                WALLET,
                &[server::store::TransactionLegs {
                    signature,
                    slot: *slot,
                    block_time: l.block_time,
                    failed: false,
                    legs: std::slice::from_ref(l),
                }],
            )
            .await
            .unwrap();
    }
    let before = store.ledger_version(WALLET).await.unwrap();
    assert_eq!(store.split_interest(WALLET).await.unwrap(), 1);
    assert!(store.ledger_version(WALLET).await.unwrap() > before);
    let read: Vec<(String, i32, OperationType, String, Option<String>)> = store
        .wallet_legs(WALLET)
        .await
        .unwrap()
        .into_iter()
        .map(|l| {
            (
                l.signature,
                l.leg_index,
                OperationType::parse(&l.operation_type).unwrap(),
                l.amount,
                l.position,
            )
        })
        .collect();
    let ob = Some("ob1igation".to_owned());
    assert_eq!(
        read,
        [
            (
                "dep11111111111111111111111111111".to_owned(),
                1,
                PositionDeposit,
                "-1000000000".to_owned(),
                ob.clone()
            ),
            (
                "wd111111111111111111111111111111".to_owned(),
                1,
                PositionWithdraw,
                "1000000000".to_owned(),
                ob.clone()
            ),
            // The next free index of the same transaction.
            (
                "wd111111111111111111111111111111".to_owned(),
                2,
                Interest,
                "25500000".to_owned(),
                ob
            ),
        ]
    );
    // Applying it again changes nothing.
    assert_eq!(store.split_interest(WALLET).await.unwrap(), 0);
}
