//! get_value_history and get_flows, and their REST twins, over a scanned
//! wallet whose server reads prices from the price stand-in.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::{
    helpers::TestApp,
    ledger::{scanned_priced, scanned_unpriced, write_transfer},
    scans::WALLET,
};

async fn rest(app: &TestApp, path: &str) -> (StatusCode, Value) {
    let response = app.client.get(app.url(path)).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

fn ok(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"].clone()
}

#[tokio::test]
async fn value_history_values_the_holdings_at_every_close() {
    let (app, _s, _p) = scanned_priced().await;
    let args = json!({"address": WALLET, "from": "2024-03-17", "to": "2024-03-21"});
    let body = ok(&app.call_tool("get_value_history", args).await);
    assert_eq!(body["granularity"], "1d");
    assert_eq!(body["denominate"], "usd");
    assert_eq!(body["complete"], true);
    let points = body["points"].as_array().unwrap();
    assert_eq!(points.len(), 5, "one point per day close");
    assert!(points.iter().all(|p| p["estimated"] == false));
    // Holdings change only where legs are: the last close holds every leg.
    let legs = app.state.store().wallet_legs(WALLET).await.unwrap();
    let sol_total: i128 = legs
        .iter()
        .filter(|l| l.mint == "sol")
        .map(|l| l.amount.parse::<i128>().unwrap())
        .sum();
    let last = &points[4];
    let sol = last["holdings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["mint"] == "sol")
        .unwrap();
    assert_eq!(sol["amount"], sol_total.to_string());
    assert!(!body["unpriced_mints"].as_array().unwrap().is_empty());
    let coverage: rust_decimal::Decimal = body["coverage_pct"].as_str().unwrap().parse().unwrap();
    assert!(
        coverage > rust_decimal::Decimal::ZERO && coverage < rust_decimal::Decimal::ONE_HUNDRED
    );

    let (status, rest_body) = rest(
        &app,
        &format!("/v1/wallets/{WALLET}/value-history?from=2024-03-17&to=2024-03-21"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rest_body, body, "the REST twin answers the same");
    insta::assert_json_snapshot!("value_history_1d", body);

    // Hourly over two days; the default range ends now, at spot.
    let hourly = ok(&app
        .call_tool(
            "get_value_history",
            json!({"address": WALLET, "granularity": "1h", "from": "2024-03-18", "to": "2024-03-19"}),
        )
        .await);
    assert_eq!(hourly["points"].as_array().unwrap().len(), 48);
    let recent = ok(&app
        .call_tool(
            "get_value_history",
            json!({"address": WALLET, "denominate": "sol"}),
        )
        .await);
    let recent_points = recent["points"].as_array().unwrap();
    assert_eq!(recent_points.last().unwrap()["estimated"], true);
    assert_eq!(recent["denominate"], "sol");
    app.stop().await;
}

#[tokio::test]
async fn flows_aggregate_by_counterparty_and_collapse_the_rest() {
    let (app, _s, _p) = scanned_priced().await;
    let all = ok(&app
        .call_tool("get_flows", json!({"address": WALLET, "top": 0}))
        .await);
    let nodes = all["nodes"].as_array().unwrap();
    assert_eq!(nodes[0]["id"], WALLET);
    assert_eq!(nodes[0]["category"], "self");
    assert!(nodes.iter().all(|n| n["id"] != "other"));
    let edges = all["edges"].as_array().unwrap();
    assert!(!edges.is_empty());
    for e in edges {
        assert!(e["source"] == WALLET || e["target"] == WALLET, "{e}");
        assert!(e["legs"].as_u64().unwrap() >= 1);
    }
    insta::assert_json_snapshot!("flows_all", all);

    let top1 = ok(&app
        .call_tool("get_flows", json!({"address": WALLET, "top": 1}))
        .await);
    let (status, rest_body) = rest(&app, &format!("/v1/wallets/{WALLET}/flows?top=1")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rest_body, top1, "the REST twin answers the same");
    let per_direction = |v: &Value, wallet_side: &str| {
        v["edges"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                e[wallet_side] == WALLET && e["source"] != "other" && e["target"] != "other"
            })
            .map(|e| {
                if wallet_side == "target" {
                    e["source"].to_string()
                } else {
                    e["target"].to_string()
                }
            })
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    assert!(per_direction(&top1, "target") <= 1);
    assert!(per_direction(&top1, "source") <= 1);
    let counterparties = nodes.len() - 1;
    if counterparties > 2 {
        assert!(
            top1["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n["id"] == "other")
        );
    }

    // A mint filter keeps only that mint's edges.
    let sol = ok(&app
        .call_tool(
            "get_flows",
            json!({"address": WALLET, "mint": "sol", "top": 0}),
        )
        .await);
    assert!(
        sol["edges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["mint"] == "sol")
    );
    app.stop().await;
}

#[tokio::test]
async fn analytics_refuse_what_they_cannot_answer() {
    let (app, _s, _p) = scanned_priced().await;
    let never = "11111111111111111111111111111112";
    for tool in ["get_value_history", "get_flows"] {
        let r = app.call_tool(tool, json!({"address": never})).await;
        assert_eq!(r["structuredContent"]["code"], "not_found", "{tool}");
        let r = app.call_tool(tool, json!({"address": "nope"})).await;
        assert_eq!(r["structuredContent"]["code"], "invalid_params", "{tool}");
        let r = app
            .call_tool(
                tool,
                json!({"address": WALLET, "from": "2024-02-01", "to": "2024-01-01"}),
            )
            .await;
        assert_eq!(r["structuredContent"]["code"], "invalid_params", "{tool}");
    }
    let r = app
        .call_tool(
            "get_value_history",
            json!({"address": WALLET, "granularity": "1w"}),
        )
        .await;
    assert_eq!(r["structuredContent"]["code"], "invalid_params");
    let r = app
        .call_tool(
            "get_value_history",
            json!({"address": WALLET, "denominate": "eur"}),
        )
        .await;
    assert_eq!(r["structuredContent"]["code"], "invalid_params");
    let (status, _) = rest(&app, &format!("/v1/wallets/{never}/flows")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = rest(&app, &format!("/v1/wallets/{WALLET}/value-history?bogus=1")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    app.stop().await;
}

#[tokio::test]
async fn positions_replay_the_valued_ledger_under_each_method() {
    let (app, _s, _p) = scanned_priced().await;
    let fifo = ok(&app
        .call_tool("get_positions", json!({"address": WALLET}))
        .await);
    assert_eq!(fifo["method"], "fifo");
    assert_eq!(fifo["exclude_spam"], true);
    assert_eq!(fifo["accepted_for_us_filings"], true);
    let positions = fifo["positions"].as_array().unwrap();
    assert!(positions.iter().any(|p| p["mint"] == "sol"));
    // Open quantities are what the lots add up to.
    for p in positions {
        let lots: rust_decimal::Decimal = p["lots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                l["quantity"]
                    .as_str()
                    .unwrap()
                    .parse::<rust_decimal::Decimal>()
                    .unwrap()
            })
            .sum();
        let open: rust_decimal::Decimal = p["open_quantity"].as_str().unwrap().parse().unwrap();
        assert_eq!(lots, open, "{p}");
    }
    let (status, rest_body) = rest(&app, &format!("/v1/wallets/{WALLET}/positions")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rest_body, fifo, "the REST twin answers the same");
    insta::assert_json_snapshot!("positions_fifo", fifo);

    for method in ["lifo", "hifo", "average"] {
        let (status, body) = rest(
            &app,
            &format!("/v1/wallets/{WALLET}/positions?method={method}&exclude_spam=false"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["method"], method);
        assert_eq!(body["exclude_spam"], false);
        assert_eq!(body["accepted_for_us_filings"], method != "average");
    }
    let bad = app
        .call_tool(
            "get_positions",
            json!({"address": WALLET, "method": "lofi"}),
        )
        .await;
    assert_eq!(bad["structuredContent"]["code"], "invalid_params");
    let never = app
        .call_tool(
            "get_positions",
            json!({"address": "11111111111111111111111111111112"}),
        )
        .await;
    assert_eq!(never["structuredContent"]["code"], "not_found");
    app.stop().await;
}

fn open_sol(body: &Value) -> rust_decimal::Decimal {
    body["positions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["mint"] == "sol")
        .map(|p| p["open_quantity"].as_str().unwrap().parse().unwrap())
        .unwrap()
}

#[tokio::test]
async fn positions_are_replayed_again_once_legs_are_written() {
    // A replay is kept per wallet, method and spam choice on the ledger
    // version, which the transaction writing legs bumps.
    let (app, _s, _p) = scanned_priced().await;
    let positions = |method: &'static str| {
        let app = &app;
        async move {
            ok(&app
                .call_tool(
                    "get_positions",
                    json!({"address": WALLET, "method": method}),
                )
                .await)
        }
    };
    let fifo = positions("fifo").await;
    let lifo = positions("lifo").await;
    assert_eq!(
        positions("fifo").await,
        fifo,
        "the kept answer is the replay's"
    );
    let store = app.state.store();
    let version = store.ledger_version(WALLET).await.unwrap();
    assert!(version > 0, "the scan's writes bumped it");
    let newest = store
        .wallet_legs(WALLET)
        .await
        .unwrap()
        .iter()
        .filter_map(|l| l.block_time)
        .max()
        .unwrap();
    write_transfer(
        &app,
        "added111111111111111111111111111",
        1 << 40,
        newest,
        5_000_000_000,
    )
    .await;
    assert_eq!(store.ledger_version(WALLET).await.unwrap(), version + 1);
    let five = rust_decimal::Decimal::from(5);
    for (method, before) in [("fifo", &fifo), ("lifo", &lifo)] {
        let after = positions(method).await;
        assert_eq!(open_sol(&after), open_sol(before) + five, "{method}");
    }
    app.stop().await;
}

#[tokio::test]
async fn positions_are_valued_again_once_closes_are_stored() {
    // Kept answers also carry the fingerprint of the prices they were
    // valued at: closes stored later (a backfill, another instance) are
    // used by the next call.
    let (app, _s) = scanned_unpriced().await;
    let positions = || async {
        ok(&app
            .call_tool("get_positions", json!({"address": WALLET}))
            .await)
    };
    let before = positions().await;
    assert_eq!(positions().await, before);
    let store = app.state.store();
    let times: Vec<i64> = store
        .wallet_legs(WALLET)
        .await
        .unwrap()
        .iter()
        .filter_map(|l| l.block_time)
        .collect();
    crate::ledger::store_sol_daily_closes(&app, &times).await;
    let after = positions().await;
    assert!(
        after["unpriced_legs"].as_u64().unwrap() < before["unpriced_legs"].as_u64().unwrap(),
        "{before} {after}"
    );
    assert_eq!(open_sol(&after), open_sol(&before), "the same legs");
    app.stop().await;
}

/// The SOL spot price source goes down: every surface values SOL at its
/// last known daily close, marks it stale with that close's time and age,
/// and leaves it out of the change, rather than counting it as zero.
#[tokio::test]
async fn a_price_outage_values_sol_at_its_last_close_marked_stale_and_out_of_the_change() {
    use rust_decimal::Decimal;
    use std::sync::atomic::Ordering::SeqCst;

    use crate::portal::{Browser, sign_in};

    let (app, clock, _s, prices) = crate::share::scanned(|c| {
        c.prices.breaker_failures = 1;
    })
    .await;
    let (_, token) = crate::share::owner(&app).await;
    let day = 86_400;
    let now = app.state.now_ms() / 1000;
    // The recorded history holds only fees; 10 SOL arrived 40 days ago.
    write_transfer(&app, "deposit", 1, now - 40 * day, 10_000_000_000).await;
    let from = server::values::rfc3339((now - 30 * day) * 1000);
    let args = json!({"address": WALLET, "from": from});
    // With the source up, the daily series is complete up to today.
    let before = ok(&app.call_tool("get_value_history", args.clone()).await);
    assert!(
        before["points"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p.get("stale_mints").is_none()),
        "no stale mint while prices work: {before}"
    );

    // The source goes down six hours into the day, past the spot cache.
    prices.counters.failing.store(true, SeqCst);
    clock.advance_ms(6 * 3600 * 1000);
    let now = app.state.now_ms() / 1000;
    let today = now - now.rem_euclid(day);
    let yesterday_close: Decimal = crate::price_standin::close_at(today - day).parse().unwrap();
    let legs = app.state.store().wallet_legs(WALLET).await.unwrap();
    let sol_held: i128 = legs
        .iter()
        .filter(|l| l.mint == "sol" && l.block_time.is_some_and(|t| t < now))
        .map(|l| l.amount.parse::<i128>().unwrap())
        .sum();
    assert!(sol_held > 0, "the wallet holds SOL now");
    let sol_usd = (Decimal::from_i128_with_scale(sol_held, 9) * yesterday_close)
        .round_dp(6)
        .normalize();

    let body = ok(&app.call_tool("get_value_history", args.clone()).await);
    let points = body["points"].as_array().unwrap();
    let last = points.last().unwrap();
    assert_eq!(last["estimated"], true);
    assert_eq!(
        last["stale_mints"],
        json!([{
            "mint": "sol",
            "close_at": server::values::rfc3339(today * 1000),
            "age_secs": 6 * 3600,
        }]),
        "SOL at yesterday's close, which closed six hours ago"
    );
    let holding = |p: &Value, mint: &str| -> Option<Decimal> {
        p["holdings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["mint"] == mint)
            .and_then(|h| h["usd"].as_str())
            .map(|u| u.parse().unwrap())
    };
    assert_eq!(holding(last, "sol"), Some(sol_usd), "never zero");
    let total: Decimal = last["usd"].as_str().unwrap().parse().unwrap();
    assert!(total >= sol_usd.round_dp(2), "{total} counts SOL");
    let (status, rest_body) = rest(
        &app,
        &format!("/v1/wallets/{WALLET}/value-history?from={from}"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rest_body, body, "the REST twin answers the same");

    // The change leaves SOL out: only what is priced fresh at both ends.
    let first = &points[0];
    assert!(first.get("stale_mints").is_none());
    let fresh = |p: &Value| -> Decimal {
        p["holdings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["mint"] != "sol")
            .filter_map(|h| h["usd"].as_str())
            .map(|u| u.parse::<Decimal>().unwrap())
            .sum()
    };
    let change = server::values::format::signed_fiat(fresh(last) - fresh(first), "USD");

    let link = crate::share::create(&app, &token, json!({"address": WALLET, "range": "30d"})).await
        ["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let share = app
        .client
        .get(app.url(&format!("/s/{link}")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let wallet = server::solana::WalletAddress::parse(WALLET).unwrap();
    server::accounts::watchlist::add_wallet(
        app.state.store(),
        app.state.now_ms(),
        &account,
        wallet,
        "main",
    )
    .await
    .unwrap();
    let portal = browser
        .get(&app.url(&format!("/wallets/{WALLET}")))
        .await
        .text()
        .await
        .unwrap();
    let close_at = server::values::rfc3339(today * 1000);
    for (page, html) in [("share page", &share), ("portal report", &portal)] {
        let close_words = server::values::format::date_time_text(&close_at);
        assert!(
            html.contains(&format!(
                "Current prices are unavailable: the value counts SOL at its last known close ({close_words}, 6 hours old)."
            )),
            "{page}: the stale warning\n{html}"
        );
        assert!(
            html.contains(&format!(" · {change}")),
            "{page}: the change of the fresh holdings only, {change}\n{html}"
        );
        assert!(
            html.contains("SOL left out (stale price)"),
            "{page}: the headline says so"
        );
    }

    // get_report's summary names the stale mint at the end.
    let answer: Value = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                    "params":{"name":"get_report","arguments":{"wallets": [WALLET], "format": "json"}}}),
            &[("mcp-protocol-version", "2025-06-18")],
        )
        .await
        .json()
        .await
        .unwrap();
    let report = ok(&answer["result"]);
    // The report values its end with the closes its own valuers hold (the
    // legs' span and the end's day): an older close than the chart's, but
    // a close, named with its age.
    let stale = &report["total"]["stale_mints"];
    assert_eq!(stale[0]["mint"], "sol", "{report}");
    let closed = chrono::DateTime::parse_from_rfc3339(stale[0]["close_at"].as_str().unwrap())
        .unwrap()
        .timestamp();
    assert!(closed <= today, "a close that has closed");
    assert_eq!(stale[0]["age_secs"], now - closed);
    let value_end: Decimal = report["total"]["value_end_usd"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        value_end > Decimal::from(900),
        "{value_end} counts the 10 SOL at a close of 100 USD or more"
    );
    app.stop().await;
}
