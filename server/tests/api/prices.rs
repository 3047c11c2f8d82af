//! get_prices and get_price_history, and their REST twins, against the
//! price stand-in: sources, caching, stored series fetched once, backfill.

use std::{sync::atomic::Ordering, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};
use server::clock::ManualClock;

use crate::{
    helpers::{Options, TestApp, relaxed_limits, spawn_with},
    price_standin::{self, JUP, PriceStandIn, USDC},
    scans::wait_done,
};

/// 2026-09-01T10:30:00Z.
pub const NOW_MS: i64 = 1_788_258_600_000;

pub async fn priced_app(clock: ManualClock) -> (TestApp, PriceStandIn) {
    let standin = price_standin::start().await;
    let url = standin.url.clone();
    let app = spawn_with(Options {
        clock: std::sync::Arc::new(clock),
        configure: Box::new(move |c| {
            relaxed_limits(c);
            price_standin::configure(c, &url);
            c.worker.in_process = true;
            c.worker.poll_ms = 20;
        }),
    })
    .await;
    (app, standin)
}

async fn rest(app: &TestApp, path: &str) -> (StatusCode, Value) {
    let response = app.client.get(app.url(path)).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn sol_is_priced_by_coinbase_with_its_24h_change() {
    let (app, standin) = priced_app(ManualClock::new(NOW_MS)).await;
    let result = app.call_tool("get_prices", json!({})).await;
    assert_eq!(result["isError"], false, "{result}");
    let body = result["structuredContent"].clone();
    assert_eq!(body["prices"][0]["mint"], "sol");
    assert_eq!(body["prices"][0]["usd"], price_standin::SPOT);
    assert_eq!(body["prices"][0]["source"], "coinbase");
    // (142.37 - 140) / 140 = 1.69 %
    assert_eq!(body["prices"][0]["change_24h_pct"], "1.69");
    assert_eq!(body["prices"][0]["at"], "2026-09-01T10:30:00Z");
    let (status, rest_body) = rest(&app, "/v1/prices").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rest_body, body, "the REST twin answers the same");
    // Cached briefly: the second read did not ask Coinbase again.
    assert_eq!(standin.counters.spot.load(Ordering::SeqCst), 1);
    insta::assert_json_snapshot!("get_prices_sol", body, {".prices[].at" => "[at]"});
    app.stop().await;
}

#[tokio::test]
async fn each_mint_names_the_source_that_priced_it() {
    let clock = ManualClock::new(NOW_MS);
    let (app, standin) = priced_app(clock.clone()).await;
    let unknown = "11111111111111111111111111111112";
    let (status, body) = rest(
        &app,
        &format!("/v1/prices?mints=sol,{USDC},{JUP},{unknown}"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sources: Vec<(&str, &str)> = body["prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["mint"].as_str().unwrap(), p["source"].as_str().unwrap()))
        .collect();
    assert_eq!(
        sources,
        vec![
            ("sol", "coinbase"),
            (USDC, "stablecoin"),
            (JUP, "jupiter"),
            (unknown, "none")
        ]
    );
    assert_eq!(body["prices"][1]["usd"], "1", "a stablecoin is exactly 1");
    assert_eq!(
        body["prices"][2]["usd"], "0.5123",
        "Jupiter's number, digit for digit"
    );
    assert_eq!(body["prices"][2]["change_24h_pct"], "-2.42");
    assert!(body["prices"][3]["usd"].is_null());
    insta::assert_json_snapshot!("get_prices_mixed", body, {".prices[].at" => "[at]"});
    // After the TTL the price is read again.
    clock.advance_ms(31_000);
    let _ = rest(&app, "/v1/prices").await;
    assert_eq!(standin.counters.spot.load(Ordering::SeqCst), 2);

    let bad = app
        .call_tool("get_prices", json!({"mints": ["not-a-mint"]}))
        .await;
    assert_eq!(bad["structuredContent"]["code"], "invalid_params");
    app.stop().await;
}

#[tokio::test]
async fn sol_falls_back_to_jupiter_when_coinbase_is_down_and_the_api_key_is_sent() {
    let standin = price_standin::start().await;
    let url = standin.url.clone();
    let app = spawn_with(Options {
        clock: std::sync::Arc::new(ManualClock::new(NOW_MS)),
        configure: Box::new(move |c| {
            relaxed_limits(c);
            price_standin::configure(c, &url);
            c.prices.coinbase_url = "http://127.0.0.1:9".to_owned();
            c.prices.jupiter_api_key = Some("jup-test-key".to_owned());
        }),
    })
    .await;
    let body = ok_prices(
        &app.call_tool("get_prices", json!({"mints": ["sol", JUP]}))
            .await,
    );
    assert_eq!(body["prices"][0]["source"], "jupiter");
    assert_eq!(body["prices"][0]["usd"], "141.9");
    assert_eq!(body["prices"][1]["source"], "jupiter");
    let keys = standin.counters.jupiter_keys.lock().unwrap().clone();
    assert!(!keys.is_empty());
    assert!(keys.iter().all(|k| k.as_deref() == Some("jup-test-key")));
    app.stop().await;
}

fn ok_prices(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"].clone()
}

#[tokio::test]
async fn daily_history_defaults_to_thirty_days_and_is_fetched_once() {
    let (app, standin) = priced_app(ManualClock::new(NOW_MS)).await;
    let result = app.call_tool("get_price_history", json!({})).await;
    assert_eq!(result["isError"], false, "{result}");
    let body = result["structuredContent"].clone();
    assert_eq!(body["mint"], "sol");
    assert_eq!(body["granularity"], "1d");
    assert_eq!(body["source"], "coinbase");
    assert_eq!(body["complete"], true);
    let points = body["points"].as_array().unwrap();
    // From 2026-08-02T10:30 to now: the buckets of Aug 2 .. Aug 31 are closed.
    assert_eq!(points.len(), 30);
    assert_eq!(body["coverage"]["pct"], "100");
    let times: Vec<i64> = points.iter().map(|p| p[0].as_i64().unwrap()).collect();
    assert!(
        times.windows(2).all(|w| w[1] - w[0] == 86_400),
        "oldest first, daily"
    );
    let dec = |s: &str| s.parse::<rust_decimal::Decimal>().unwrap();
    assert_eq!(
        dec(points[0][1].as_str().unwrap()),
        dec(&price_standin::close_at(times[0]))
    );
    let fetched = standin.counters.candles.load(Ordering::SeqCst);
    assert_eq!(fetched, 1);

    let (status, again) = rest(&app, "/v1/prices/history").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again, body, "the REST twin answers the same");
    assert_eq!(
        standin.counters.candles.load(Ordering::SeqCst),
        fetched,
        "a stored bucket is never fetched again"
    );
    insta::assert_json_snapshot!("get_price_history_sol_1d", body);
    app.stop().await;
}

#[tokio::test]
async fn a_large_gap_is_backfilled_by_a_job() {
    let (app, standin) = priced_app(ManualClock::new(NOW_MS)).await;
    let args = json!({"granularity": "1h", "from": "2026-07-01", "to": "2026-08-31"});
    let first = app.call_tool("get_price_history", args.clone()).await;
    let body = &first["structuredContent"];
    assert_eq!(body["complete"], false, "{body}");
    let job_id = body["backfill_job_id"].as_str().unwrap().to_owned();
    assert!(server::ids::is_id("job_", &job_id));

    // Read again while it runs: the same job, never a second one (the
    // worker may already have finished, then the answer is complete).
    let again = app.call_tool("get_price_history", args.clone()).await;
    if again["structuredContent"]["complete"] == false {
        assert_eq!(
            again["structuredContent"]["backfill_job_id"],
            job_id.as_str()
        );
    }
    let job = wait_done(&app, &job_id).await;
    assert_eq!(job["status"], "completed", "{job}");
    let requests = standin.counters.candle_requests.lock().unwrap().clone();
    assert!(
        requests
            .iter()
            .all(|(g, s, e)| *g == 3600 && (e - s) / 3600 < 300)
    );

    let second = app.call_tool("get_price_history", args).await;
    let body = &second["structuredContent"];
    assert_eq!(body["complete"], true, "{body}");
    assert!(body.get("backfill_job_id").is_none());
    assert_eq!(body["points"].as_array().unwrap().len(), 62 * 24);
    assert_eq!(body["coverage"]["pct"], "100");
    assert_eq!(
        standin.counters.candles.load(Ordering::SeqCst),
        requests.len(),
        "the backfill stored everything: nothing fetched inline afterwards"
    );
    app.stop().await;
}

#[tokio::test]
async fn stablecoins_are_flat_and_other_mints_not_found() {
    let (app, standin) = priced_app(ManualClock::new(NOW_MS)).await;
    let flat = app
        .call_tool(
            "get_price_history",
            json!({"mint": USDC, "from": "2026-08-25"}),
        )
        .await;
    let body = &flat["structuredContent"];
    assert_eq!(body["source"], "stablecoin");
    assert!(
        body["points"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p[1] == "1")
    );
    assert_eq!(body["points"].as_array().unwrap().len(), 7);

    let jup = app
        .call_tool("get_price_history", json!({"mint": JUP}))
        .await;
    assert_eq!(jup["isError"], true);
    assert_eq!(jup["structuredContent"]["code"], "not_found");
    let (status, _) = rest(&app, &format!("/v1/prices/history?mint={JUP}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let bad = app
        .call_tool("get_price_history", json!({"granularity": "5m"}))
        .await;
    assert_eq!(bad["structuredContent"]["code"], "invalid_params");
    let (status, _) = rest(&app, "/v1/prices/history?from=2026-09-01&to=2026-08-01").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(standin.counters.candles.load(Ordering::SeqCst), 0);
    tokio::time::sleep(Duration::from_millis(1)).await;
    app.stop().await;
}

/// The default `prices.breaker_failures`.
const BREAKER_FAILURES: usize = 3;

#[tokio::test]
async fn failing_sources_are_asked_once_per_cool_down_and_their_mints_are_unavailable() {
    let clock = ManualClock::new(NOW_MS);
    let (app, standin) = priced_app(clock.clone()).await;
    let c = &standin.counters;
    c.failing.store(true, Ordering::SeqCst);
    let unknown = "11111111111111111111111111111112";
    let args = json!({"mints": ["sol", USDC, unknown]});
    let mut last = Value::Null;
    for _ in 0..10 {
        last = ok_prices(&app.call_tool("get_prices", args.clone()).await);
        let sources: Vec<&str> = last["prices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["source"].as_str().unwrap())
            .collect();
        assert_eq!(
            sources,
            vec!["unavailable", "stablecoin", "unavailable"],
            "a failed source is not `none` (nothing prices the mint): {last}"
        );
    }
    assert!(last["prices"][0]["usd"].is_null());
    insta::assert_json_snapshot!("get_prices_unavailable", last, {".prices[].at" => "[at]"});
    // Ten calls, two sources: without a breaker twenty requests.
    assert_eq!(c.spot.load(Ordering::SeqCst), BREAKER_FAILURES, "Coinbase");
    assert_eq!(
        c.jupiter.load(Ordering::SeqCst),
        BREAKER_FAILURES,
        "Jupiter"
    );
    assert_eq!(c.stats.load(Ordering::SeqCst), 0);

    // After the cool-down one probe goes to each; it fails, so the next
    // call asks nobody.
    clock.advance_ms(60_000);
    for _ in 0..3 {
        let _ = app.call_tool("get_prices", args.clone()).await;
    }
    assert_eq!(c.spot.load(Ordering::SeqCst), BREAKER_FAILURES + 1);
    assert_eq!(c.jupiter.load(Ordering::SeqCst), BREAKER_FAILURES + 1);

    // The sources are back: the next probe succeeds and closes the breaker.
    c.failing.store(false, Ordering::SeqCst);
    clock.advance_ms(60_000);
    let body = ok_prices(&app.call_tool("get_prices", args.clone()).await);
    assert_eq!(body["prices"][0]["source"], "coinbase", "{body}");
    assert_eq!(body["prices"][2]["source"], "none", "{body}");
    app.stop().await;
}

#[tokio::test]
async fn long_reads_with_sources_down_keep_one_backfill_job() {
    let clock = ManualClock::new(NOW_MS);
    let (app, standin) = priced_app(clock.clone()).await;
    let c = &standin.counters;
    c.failing.store(true, Ordering::SeqCst);
    let args = json!({"granularity": "1h", "from": "2026-07-01", "to": "2026-08-31"});
    let mut job_ids = std::collections::BTreeSet::new();
    let mut unavailable = 0;
    for _ in 0..10 {
        let read = app.call_tool("get_price_history", args.clone()).await;
        let body = &read["structuredContent"];
        if read["isError"] == true {
            assert_eq!(body["code"], "unavailable", "{read}");
            unavailable += 1;
            continue;
        }
        assert_eq!(body["complete"], false, "{body}");
        let job_id = body["backfill_job_id"].as_str().unwrap().to_owned();
        // Let the worker fail it before the next read.
        let job = wait_done(&app, &job_id).await;
        assert_eq!(job["status"], "failed", "{job}");
        job_ids.insert(job_id);
    }
    let jobs = app.state.store().backfill_jobs().await.unwrap();
    assert_eq!(jobs.len(), 1, "one backfill job per series: {jobs:?}");
    assert_eq!(job_ids.len(), 1, "every read named the same job");
    assert_eq!(
        unavailable,
        10 - BREAKER_FAILURES,
        "once the breaker opened, reads say unavailable and queue nothing"
    );
    assert_eq!(c.candles.load(Ordering::SeqCst), BREAKER_FAILURES);

    // The source is back: after the cool-down the next read re-queues the
    // same job, and it fills the series.
    c.failing.store(false, Ordering::SeqCst);
    clock.advance_ms(60_000);
    let read = app.call_tool("get_price_history", args.clone()).await;
    let job_id = read["structuredContent"]["backfill_job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{read}"))
        .to_owned();
    assert!(job_ids.contains(&job_id));
    let job = wait_done(&app, &job_id).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(app.state.store().backfill_jobs().await.unwrap().len(), 1);
    let done = app.call_tool("get_price_history", args).await;
    assert_eq!(done["structuredContent"]["complete"], true, "{done}");
    app.stop().await;
}
