//! Bounded answers (SPEC T9, hardening item 1): bucketed ranges clamp to
//! the span that can hold data, a result over 256 KiB is a link to its
//! REST route rather than megabytes inside JSON-RPC, and a batch of such
//! calls answers kilobytes.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::{ledger::scanned_priced, scans::WALLET};

/// Days from 2020-03-16 (Solana's genesis day) to the day holding `now`.
fn days_since_genesis(now_secs: i64) -> usize {
    usize::try_from((now_secs.div_euclid(86_400) * 86_400 - 1_584_316_800) / 86_400).unwrap() + 1
}

#[tokio::test]
async fn a_range_from_1972_starts_at_solanas_genesis_day() {
    let (app, _s, _p) = scanned_priced().await;
    let response = app
        .client
        .get(app.url(&format!(
            "/v1/wallets/{WALLET}/value-history?from=1972-03-01"
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["from"], "2020-03-16T00:00:00Z", "{}", body["from"]);
    let now = app.state.now_ms() / 1000;
    assert_eq!(
        body["points"].as_array().unwrap().len(),
        days_since_genesis(now)
    );

    let history = app
        .client
        .get(app.url("/v1/prices/history?from=1972-03-01&to=2020-03-20"))
        .send()
        .await
        .unwrap();
    assert_eq!(history.status(), StatusCode::OK);
    let history: Value = history.json().await.unwrap();
    assert_eq!(history["from"], "2020-03-16T00:00:00Z");

    // A range wholly before genesis holds nothing: it answers genesis day.
    let before = app
        .client
        .get(app.url("/v1/prices/history?from=1972-03-01&to=1999-12-31"))
        .send()
        .await
        .unwrap();
    assert_eq!(before.status(), StatusCode::OK);
    let before: Value = before.json().await.unwrap();
    assert_eq!(before["from"], "2020-03-16T00:00:00Z");
    assert_eq!(before["to"], "2020-03-16T00:00:00Z");
    app.stop().await;
}

#[tokio::test]
async fn an_hourly_range_past_the_point_cap_is_refused_naming_it() {
    let (app, _s, _p) = scanned_priced().await;
    let result = app
        .call_tool(
            "get_value_history",
            json!({"address": WALLET, "granularity": "1h", "from": "2020-03-16"}),
        )
        .await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["structuredContent"]["code"], "invalid_params");
    assert!(
        result["structuredContent"]["message"]
            .as_str()
            .unwrap()
            .contains("20000 points"),
        "{result}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_result_over_256_kib_is_a_resource_link_to_the_rest_route() {
    let (app, _s, _p) = scanned_priced().await;
    let args = json!({"address": WALLET, "from": "1972-03-01", "to": "2026-06-30"});
    // The first long read queues a price backfill; once the worker has
    // filled it, answers are stable and can be compared byte for byte.
    let path = format!("/v1/wallets/{WALLET}/value-history?from=1972-03-01&to=2026-06-30");
    let mut direct = bytes::Bytes::new();
    for _ in 0..200 {
        direct = app
            .client
            .get(app.url(&path))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        if serde_json::from_slice::<Value>(&direct).unwrap()["complete"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        serde_json::from_slice::<Value>(&direct).unwrap()["complete"],
        true,
        "the backfill finished"
    );
    assert!(
        direct.len() > 256 * 1024,
        "the fixture must make a large result: {} bytes",
        direct.len()
    );

    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                    "params":{"name":"get_value_history","arguments":args}}),
            &[("mcp-protocol-version", "2025-06-18")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.bytes().await.unwrap();
    assert!(body.len() < 8 * 1024, "{} bytes inline", body.len());
    let result = serde_json::from_slice::<Value>(&body).unwrap()["result"].clone();
    assert_eq!(result["isError"], false, "{result}");
    let linked = &result["structuredContent"];
    assert_eq!(linked["code"], "result_linked");
    assert_eq!(linked["bytes"], direct.len());
    let uri = linked["uri"].as_str().unwrap();
    let content = result["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "text");
    assert!(content[0]["text"].as_str().unwrap().contains(uri));
    assert_eq!(content[1]["type"], "resource_link");
    assert_eq!(content[1]["uri"], uri);
    assert_eq!(content[1]["mimeType"], "application/json");

    // The link answers the same JSON as the direct REST call.
    assert!(uri.starts_with(&app.base), "{uri}");
    let fetched = app.client.get(uri).send().await.unwrap();
    assert_eq!(fetched.status(), StatusCode::OK);
    let fetched = fetched.bytes().await.unwrap();
    assert!(
        fetched == direct,
        "the link answers the direct call's bytes"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_batch_of_twenty_long_value_histories_answers_kilobytes() {
    let (app, _s, _p) = scanned_priced().await;
    let (session, _) = app.initialize("2025-03-26").await;
    let batch: Vec<Value> = (0..20)
        .map(|i| {
            json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{
                "name":"get_value_history",
                "arguments":{"address": WALLET, "from": "1972-03-01"}}})
        })
        .collect();
    let request = Value::Array(batch).to_string();
    let response = app
        .post_mcp_raw(request.clone(), &[("mcp-session-id", session.as_str())])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.bytes().await.unwrap();
    // Twenty links, each under 2 KiB: no result is inlined, not even as
    // the text copy clients before 2025-06-18 read.
    assert!(
        body.len() < 20 * 2048,
        "a {}-byte batch answered {} bytes",
        request.len(),
        body.len()
    );
    let answers: Vec<Value> = serde_json::from_slice(&body).unwrap();
    assert_eq!(answers.len(), 20);
    for answer in &answers {
        let result = &answer["result"];
        assert_eq!(result["structuredContent"]["code"], "result_linked");
        // 2025-03-26 has no resource_link content: the summary carries the URI.
        let content = result["content"].as_array().unwrap();
        assert!(content.iter().all(|c| c["type"] == "text"));
        assert!(
            content[0]["text"]
                .as_str()
                .unwrap()
                .contains("/value-history?")
        );
    }
    app.stop().await;
}
