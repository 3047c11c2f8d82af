//! The 2026-07-28 (stateless) rules: per-request `_meta`, header checks,
//! `server/discover`, removed methods, `resultType`.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::spawn_app;

const META: &str = "io.modelcontextprotocol/protocolVersion";

#[tokio::test]
async fn discover_names_versions_capabilities_and_server() {
    let app = spawn_app().await;
    let (status, body) = app
        .stateless(json!("d1"), "server/discover", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let result = &body["result"];
    assert_eq!(body["id"], "d1");
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": false})
    );
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].as_u64().is_some());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "ledger"
    );
    app.stop().await;
}

#[tokio::test]
async fn tools_list_and_call_carry_result_type_and_cache_hints() {
    let app = spawn_app().await;
    let (status, list) = app.stateless(json!(1), "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["result"]["resultType"], "complete");
    assert!(crate::helpers::tool(&list["result"], "ping").is_some());
    assert!(list["result"]["ttlMs"].is_u64());
    let (status, call) = app
        .stateless(
            json!(2),
            "tools/call",
            json!({"name":"ping","arguments":{}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(call["result"]["resultType"], "complete");
    assert_eq!(call["result"]["structuredContent"]["ok"], true);
    app.stop().await;
}

#[tokio::test]
async fn missing_meta_is_32602_with_http_400() {
    let app = spawn_app().await;
    for params in [
        json!({}),
        json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
        json!({"_meta": {META: "2026-07-28"}}),
    ] {
        let response = app
            .post_mcp(
                &json!({"jsonrpc":"2.0","id":5,"method":"server/discover","params":params}),
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "server/discover"),
                ],
            )
            .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{params}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32602);
        assert_eq!(body["id"], 5);
    }
    app.stop().await;
}

fn meta(version: &str) -> Value {
    json!({"_meta": {META: version, "io.modelcontextprotocol/clientCapabilities": {}}})
}

#[tokio::test]
async fn a_version_header_that_disagrees_with_meta_is_32020() {
    let app = spawn_app().await;
    for header in [Some("2025-11-25"), None] {
        let mut headers = vec![("mcp-method", "server/discover")];
        if let Some(h) = header {
            headers.push(("mcp-protocol-version", h));
        }
        let response = app
            .post_mcp(
                &json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":meta("2026-07-28")}),
                &headers,
            )
            .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32020);
    }
    app.stop().await;
}

#[tokio::test]
async fn an_unsupported_version_is_32022_with_the_supported_list() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":meta("v999.0.0")}),
            &[
                ("mcp-protocol-version", "v999.0.0"),
                ("mcp-method", "server/discover"),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32022);
    assert_eq!(
        body["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "v999.0.0"})
    );
    app.stop().await;
}

#[tokio::test]
async fn mcp_method_and_name_headers_must_match_the_body() {
    let app = spawn_app().await;
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"ping","arguments":{},
        "_meta": meta("2026-07-28")["_meta"].clone()}});
    let cases: [&[(&str, &str)]; 4] = [
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
            ("mcp-name", "ping"),
        ],
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "TOOLS/CALL"),
            ("mcp-name", "ping"),
        ],
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
        ],
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "pong"),
        ],
    ];
    for headers in cases {
        let response = app.post_mcp(&call, headers).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{headers:?}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32020, "{headers:?}");
    }
    for name in ["  ping  ", "=?base64?cGluZw==?="] {
        let response = app
            .post_mcp(
                &call,
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", name),
                ],
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK, "{name}");
    }
    app.stop().await;
}

#[tokio::test]
async fn removed_and_unknown_methods_are_404_with_32601() {
    let app = spawn_app().await;
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
    ] {
        let (status, body) = app.stateless(json!(method), method, json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method}");
        assert_eq!(body["error"]["code"], -32601, "{method}");
        assert_eq!(body["id"], method);
    }
    app.stop().await;
}

#[tokio::test]
async fn session_ids_are_ignored_and_never_issued() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":meta("2026-07-28")}),
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "server/discover"),
                ("mcp-session-id", "stale-session"),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none());
    app.stop().await;
}

#[tokio::test]
async fn batches_are_refused_in_2026_07_28() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!([{"jsonrpc":"2.0","id":1,"method":"server/discover","params":meta("2026-07-28")}]),
            &[("mcp-protocol-version", "2026-07-28")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600);
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_tool_is_32602_and_bad_arguments_an_invalid_params_result() {
    let app = spawn_app().await;
    let (_, unknown) = app
        .stateless(
            json!(1),
            "tools/call",
            json!({"name":"nope","arguments":{}}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
    let (status, bad) = app
        .stateless(
            json!(2),
            "tools/call",
            json!({"name":"ping","arguments":{"x":1}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(bad.get("error").is_none(), "{bad}");
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert_eq!(bad["result"]["resultType"], "complete", "{bad}");
    assert_eq!(
        bad["result"]["structuredContent"],
        json!({"code": "invalid_params", "message": "unknown field `x`: ping takes no arguments"})
    );
    let (_, not_an_object) = app
        .stateless(
            json!(3),
            "tools/call",
            json!({"name":"ping","arguments":[1]}),
        )
        .await;
    assert_eq!(not_an_object["error"]["code"], -32602, "{not_an_object}");
    app.stop().await;
}

/// What the conformance suite's `sep-2243-server-accepts-whitespace-header-value`
/// sends: the first tool `tools/list` names, with `{}`, and an `Mcp-Name`
/// padded with spaces. It must be answered, not refused.
#[tokio::test]
async fn the_first_listed_tool_called_with_no_arguments_and_a_padded_name_header_is_answered() {
    let app = spawn_app().await;
    let (_, list) = app.stateless(json!(1), "tools/list", json!({})).await;
    let first = list["result"]["tools"][0]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(first, "add_wallet");
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let padded = format!("  {first}  ");
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":first,"arguments":{},"_meta":meta}}),
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", padded.as_str()),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert!(body.get("error").is_none(), "{body}");
    assert_eq!(body["id"], 100);
    assert_eq!(body["result"]["isError"], true);
    assert_eq!(
        body["result"]["structuredContent"]["code"], "invalid_params",
        "{body}"
    );
    app.stop().await;
}

#[tokio::test]
async fn errors_without_a_readable_id_leave_the_id_out() {
    let app = spawn_app().await;
    let parse = app
        .post_mcp_raw("{not json", &[("mcp-protocol-version", "2026-07-28")])
        .await;
    assert_eq!(parse.status(), StatusCode::BAD_REQUEST);
    let body: Value = parse.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700);
    assert!(body.get("id").is_none(), "{body}");
    let batch = app
        .post_mcp(
            &json!([{"jsonrpc":"2.0","id":1,"method":"tools/list"}]),
            &[("mcp-protocol-version", "2026-07-28")],
        )
        .await;
    let body: Value = batch.json().await.unwrap();
    assert!(body.get("id").is_none(), "{body}");
    // Earlier versions keep JSON-RPC 2.0's null.
    let legacy = app.post_mcp_raw("{not json", &[]).await;
    let body: Value = legacy.json().await.unwrap();
    assert_eq!(body["id"], Value::Null);
    assert!(body.get("id").is_some());
    app.stop().await;
}
