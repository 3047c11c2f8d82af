//! Tool input schemas say exactly what is accepted: what the schema refuses
//! the server refuses (on MCP and on the REST twin), with a message naming
//! the argument and the rule, and what it admits gets through.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};

const WALLET: &str = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";

/// How a call came back: a JSON-RPC error (code, message), or a tool
/// result (structuredContent code, message).
async fn call(app: &TestApp, tool: &str, arguments: Value) -> (String, String) {
    call_speaking(app, None, tool, arguments).await
}

/// [`call`], speaking `version` (the `MCP-Protocol-Version` header) when
/// given; without one a request speaks 2025-03-26.
async fn call_speaking(
    app: &TestApp,
    version: Option<&str>,
    tool: &str,
    arguments: Value,
) -> (String, String) {
    let headers: Vec<(&str, &str)> = version
        .map(|v| vec![("mcp-protocol-version", v)])
        .unwrap_or_default();
    let body = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":tool,"arguments":arguments}}),
            &headers,
        )
        .await;
    if let Some(error) = body.get("error") {
        return (
            error["code"].to_string(),
            error["message"].as_str().unwrap().to_owned(),
        );
    }
    let structured = &body["result"]["structuredContent"];
    (
        structured["code"].as_str().unwrap_or("ok").to_owned(),
        structured["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

fn assert_no_internals(message: &str) {
    for word in [
        "untagged", "Raw", "u32", "u64", "f64", "enum", "struct", "variant",
    ] {
        assert!(!message.contains(word), "{message:?} leaks {word}");
    }
}

#[tokio::test]
async fn bad_argument_values_are_refused_naming_the_argument_and_the_rule() {
    let app = spawn_app().await;
    let limit = "limit: must be an integer from 1 to 1000";
    let floor = "min_usd_value: must be a number of at least 0";
    for (args, code, rule) in [
        // Wrong JSON type: serde cannot read it, a -32602.
        (json!({"min_usd_value": "1"}), "-32602", floor),
        (json!({"min_usd_value": true}), "-32602", floor),
        // Of the right type, but the typed floor cannot hold it: -32602 too.
        (json!({"min_usd_value": -1}), "-32602", floor),
        (json!({"limit": "5"}), "-32602", limit),
        (json!({"limit": -1}), "-32602", limit),
        // Right type, broken rule: the tool's invalid_params.
        (json!({"limit": 0}), "invalid_params", limit),
        (json!({"limit": 1001}), "invalid_params", limit),
        (
            json!({"operation_type": "theft"}),
            "invalid_params",
            "operation_type: must be one of transfer_in, transfer_out, swap, network_fee, rent_deposit, rent_refund, airdrop, airdrop_spam, stake_deposit, stake_withdraw, staking_reward, mev_reward",
        ),
        (
            json!({"from": "last tuesday"}),
            "invalid_params",
            "from: must be an RFC 3339 time (2026-01-31T12:00:00Z) or a date as YYYY-MM-DD",
        ),
    ] {
        let mut arguments = args.clone();
        arguments["address"] = json!(WALLET);
        let (got_code, message) = call(&app, "get_ledger", arguments).await;
        assert_eq!(got_code.trim_matches('"'), code, "{args}: {message}");
        assert!(message.contains(rule), "{args}: {message:?}");
        assert_no_internals(&message);
    }
    let (code, message) = call(
        &app,
        "quote_wallet",
        json!({"address": WALLET, "scope": {"read": null}}),
    )
    .await;
    assert_eq!(code, "-32602");
    assert!(
        message.contains("scope: must be one of preview, full, incremental, refresh, read"),
        "{message}"
    );
    assert_no_internals(&message);
    let (code, message) = call(&app, "quote_wallet", json!({"address": " 1"})).await;
    assert_eq!(code, "invalid_params");
    assert_eq!(message, "address: must be a base58 public key");
    app.stop().await;
}

#[tokio::test]
async fn from_2025_11_25_every_refused_argument_is_the_tool_s_invalid_params_with_the_same_rule() {
    let app = spawn_app().await;
    let limit = "limit: must be an integer from 1 to 1000";
    let floor = "min_usd_value: must be a number of at least 0";
    for version in ["2025-11-25", "2026-07-28"] {
        for (args, rule) in [
            (json!({"min_usd_value": "1"}), floor),
            (json!({"min_usd_value": -1}), floor),
            (json!({"limit": "5"}), limit),
            (json!({"limit": 0}), limit),
            (json!({"surprise": 1}), "unknown field `surprise`"),
        ] {
            let mut arguments = args.clone();
            arguments["address"] = json!(WALLET);
            let (code, message) = if version == "2026-07-28" {
                let (_, body) = app
                    .stateless(
                        json!(1),
                        "tools/call",
                        json!({"name": "get_ledger", "arguments": arguments}),
                    )
                    .await;
                let structured = &body["result"]["structuredContent"];
                (
                    structured["code"].as_str().unwrap_or("-").to_owned(),
                    structured["message"].as_str().unwrap_or("-").to_owned(),
                )
            } else {
                call_speaking(&app, Some(version), "get_ledger", arguments).await
            };
            assert_eq!(code, "invalid_params", "{version} {args}: {message}");
            assert!(message.starts_with(rule), "{version} {args}: {message:?}");
            assert_no_internals(&message);
        }
    }
    app.stop().await;
}

#[tokio::test]
async fn values_the_schema_admits_get_through() {
    let app = spawn_app().await;
    // The wallet was never scanned: reaching not_found means the arguments
    // were accepted.
    for args in [
        json!({"min_usd_value": 0}),
        json!({"min_usd_value": 1}),
        json!({"min_usd_value": 0.25}),
        json!({"min_usd_value": 1e300}),
        json!({"limit": 1}),
        json!({"limit": 1000}),
        json!({"limit": 10.0}),
        json!({"from": "2026-01-01", "to": "2026-01-31T23:59:59Z", "mint": "sol"}),
        json!({"exclude": ["airdrop_spam"], "include_counterparties": true}),
    ] {
        let mut arguments = args.clone();
        arguments["address"] = json!(WALLET);
        let (code, message) = call(&app, "get_ledger", arguments).await;
        assert_eq!(code, "not_found", "{args}: {message}");
    }
    app.stop().await;
}

#[tokio::test]
async fn the_rest_twin_holds_its_query_to_the_same_schema() {
    let app = spawn_app().await;
    for (query, rule) in [
        ("limit=0", "limit: must be an integer from 1 to 1000"),
        ("limit=abc", "limit: must be an integer from 1 to 1000"),
        (
            "min_usd_value=-1",
            "min_usd_value: must be a number of at least 0",
        ),
        (
            "min_usd_value=true",
            "min_usd_value: must be a number of at least 0",
        ),
        (
            "exclude=swap,nope",
            "exclude: must be a list, each item one of",
        ),
        ("mint=%20sol", "mint: must be sol or a base58 mint"),
        ("surprise=1", "unknown field `surprise`"),
    ] {
        let response = app
            .client
            .get(app.url(&format!("/v1/wallets/{WALLET}/ledger?{query}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["code"], "invalid_params");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains(rule), "{query}: {message:?}");
        assert_no_internals(message);
    }
    for query in [
        "limit=1000",
        "min_usd_value=0.5",
        "exclude=swap,airdrop_spam",
        "mint=sol",
    ] {
        let response = app
            .client
            .get(app.url(&format!("/v1/wallets/{WALLET}/ledger?{query}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{query}");
    }
    let response = app
        .client
        .post(app.url("/v1/quotes"))
        .json(&json!({"address": WALLET, "scope": {"read": null}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["message"],
        "scope: must be one of preview, full, incremental, refresh, read"
    );
    app.stop().await;
}

/// Every keyword of every schema, with the path it sits at.
fn walk<'a>(value: &'a Value, path: String, out: &mut Vec<(String, &'a str, &'a Value)>) {
    match value {
        Value::Object(obj) => {
            for (k, v) in obj {
                out.push((path.clone(), k.as_str(), v));
                walk(v, format!("{path}.{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn tool_schemas_are_portable() {
    let app = spawn_app().await;
    let list = app
        .rpc(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}), &[])
        .await;
    let tools = list["result"]["tools"].as_array().unwrap();
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let mut keywords = Vec::new();
        walk(
            &tool["inputSchema"],
            format!("{name}.inputSchema"),
            &mut keywords,
        );
        walk(
            &tool["outputSchema"],
            format!("{name}.outputSchema"),
            &mut keywords,
        );
        for (path, key, value) in keywords {
            // Inside `properties` the keys are field names, not keywords.
            if path.ends_with(".properties") {
                continue;
            }
            match key {
                "type" => assert!(value.is_string(), "{path}: type {value}"),
                "format" => assert!(
                    value == "date-time" || value == "date",
                    "{path}: format {value}"
                ),
                "default" => assert!(!value.is_null(), "{path}: default null"),
                "nullable" => panic!("{path}: {key}"),
                "oneOf" => assert!(
                    !value
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|v| v.get("const").is_some()),
                    "{path}: an enum written as oneOf of consts"
                ),
                "enum" => assert!(value.as_array().unwrap().iter().all(Value::is_string)),
                _ => {}
            }
        }
        assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{name}");
        let text = tool["inputSchema"].to_string();
        assert!(!text.contains("\"null\""), "{name}: {text}");
    }
    let ledger = tools.iter().find(|t| t["name"] == "get_ledger").unwrap();
    assert_eq!(
        ledger["inputSchema"]["properties"]["limit"],
        json!({"type": "integer", "minimum": 1, "maximum": 1000, "default": 100, "description": "Page size, 1..1000; default 100."})
    );
    app.stop().await;
}
