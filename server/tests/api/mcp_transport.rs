//! SPEC T1-T5, T8, T9 for initialize-era clients: one test per rule.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{ACCEPT_BOTH, session_id, spawn_app};

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

#[tokio::test]
async fn initialize_echoes_every_supported_version_and_opens_a_session() {
    let app = spawn_app().await;
    for version in LEGACY.iter().chain(&["2026-07-28"]) {
        let (session, result) = app.initialize(version).await;
        assert_eq!(result["protocolVersion"], *version);
        assert_eq!(result["serverInfo"]["name"], "ledger");
        assert_eq!(result["capabilities"]["tools"]["listChanged"], false);
        assert!(!session.is_empty());
        assert!(
            session.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            "session id must be visible ASCII: {session}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn initialize_with_an_unknown_version_settles_on_2025_11_25_and_keeps_its_session() {
    let app = spawn_app().await;
    let (session, result) = app.initialize("2099-01-01").await;
    // Not the stateless 2026-07-28: it has no sessions, and a client that
    // followed it would drop the one it was just given.
    assert_eq!(result["protocolVersion"], "2025-11-25");
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let listed = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
            &headers,
        )
        .await;
    assert!(crate::helpers::tool(&listed["result"], "ping").is_some());
    let ended = app
        .client
        .delete(app.url("/mcp"))
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(
        ended.status(),
        StatusCode::NO_CONTENT,
        "the session was kept"
    );
    app.stop().await;
}

#[tokio::test]
async fn requests_without_a_session_are_served() {
    let app = spawn_app().await;
    let body = app
        .rpc(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}), &[])
        .await;
    assert!(crate::helpers::tool(&body["result"], "ping").is_some());
    app.stop().await;
}

#[tokio::test]
async fn a_session_serves_its_requests() {
    let app = spawn_app().await;
    let (session, _) = app.initialize("2025-06-18").await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let note = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            &headers,
        )
        .await;
    assert_eq!(note.status(), StatusCode::ACCEPTED);
    let result = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","arguments":{}}}),
            &headers,
        )
        .await;
    assert_eq!(result["result"]["structuredContent"]["ok"], true);
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_session_is_404() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[("mcp-session-id", "no-such-session")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn a_stale_session_s_404_answers_the_request_s_id() {
    let app = spawn_app().await;
    let (session, _) = app.initialize("2025-11-25").await;
    let deleted = app
        .client
        .delete(app.url("/mcp"))
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    for raw in ["7", "\"call-7\"", "100000000000000000000000000001"] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"tools/list"}}"#);
        let response = app
            .post_mcp_raw(body, &[("mcp-session-id", session.as_str())])
            .await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{raw}");
        let text = response.text().await.unwrap();
        assert!(text.contains(&format!(r#""id":{raw}"#)), "{raw}: {text}");
        assert!(text.contains(r#""code":-32001"#), "{text}");
    }
    // A non-ASCII session id is refused the same way, with the id.
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":8,"method":"tools/list"}),
            &[("mcp-session-id", "séance")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["id"], 8, "{reply}");
    app.stop().await;
}

#[tokio::test]
async fn a_404_or_400_without_a_readable_id_answers_null() {
    let app = spawn_app().await;
    for (body, headers) in [
        // A notification has no id; a batch has no one id.
        (
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            ("mcp-session-id", "no-such-session"),
        ),
        (
            json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]),
            ("mcp-session-id", "no-such-session"),
        ),
        (
            json!({"jsonrpc":"2.0","id":{"a":1},"method":"ping"}),
            ("mcp-protocol-version", "1999-01-01"),
        ),
        (
            json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]),
            ("mcp-protocol-version", "1999-01-01"),
        ),
    ] {
        let response = app.post_mcp(&body, &[headers]).await;
        assert!(
            matches!(
                response.status(),
                StatusCode::NOT_FOUND | StatusCode::BAD_REQUEST
            ),
            "{body}"
        );
        let reply: Value = response.json().await.unwrap();
        assert_eq!(reply["id"], Value::Null, "{body}: {reply}");
        assert!(
            reply.get("id").is_some(),
            "JSON-RPC 2.0 writes null: {reply}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn delete_ends_a_session_and_it_is_404_afterwards() {
    let app = spawn_app().await;
    let (session, _) = app.initialize("2025-11-25").await;
    let deleted = app
        .client
        .delete(app.url("/mcp"))
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let after = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[("mcp-session-id", session.as_str())],
        )
        .await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
    let again = app
        .client
        .delete(app.url("/mcp"))
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    let without = app.client.delete(app.url("/mcp")).send().await.unwrap();
    assert_eq!(without.status(), StatusCode::BAD_REQUEST);
    app.stop().await;
}

#[tokio::test]
async fn sse_only_clients_get_one_message_event() {
    let app = spawn_app().await;
    let response = app
        .client
        .post(app.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(json!({"jsonrpc":"2.0","id":4,"method":"tools/list"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    assert_eq!(text.matches("event: message\n").count(), 1, "{text}");
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("a data line");
    let message: Value = serde_json::from_str(data).unwrap();
    assert_eq!(message["id"], 4);
    assert!(crate::helpers::tool(&message["result"], "ping").is_some());
    app.stop().await;
}

#[tokio::test]
async fn json_is_the_default_framing() {
    let app = spawn_app().await;
    for accept in [
        None,
        Some(ACCEPT_BOTH),
        Some("*/*"),
        Some("application/json"),
    ] {
        let mut request = app
            .client
            .post(app.url("/mcp"))
            .header("content-type", "application/json")
            .body(json!({"jsonrpc":"2.0","id":1,"method":"ping"}).to_string());
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "application/json");
    }
    app.stop().await;
}

#[tokio::test]
async fn accept_admitting_neither_framing_is_406() {
    let app = spawn_app().await;
    let response = app
        .client
        .post(app.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "text/html")
        .body(json!({"jsonrpc":"2.0","id":1,"method":"ping"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    app.stop().await;
}

#[tokio::test]
async fn a_non_json_content_type_is_415() {
    let app = spawn_app().await;
    let response = app
        .client
        .post(app.url("/mcp"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("a=b")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "unsupported_media_type");
    app.stop().await;
}

#[tokio::test]
async fn get_with_event_stream_is_405_allow_post() {
    let app = spawn_app().await;
    let response = app
        .client
        .get(app.url("/mcp"))
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()["allow"], "POST");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "method_not_allowed");
    app.stop().await;
}

#[tokio::test]
async fn the_python_sdk_listening_stream_get_is_405_not_the_description() {
    // What the Python SDK sends after initialize to open its GET stream.
    let app = spawn_app().await;
    let (session, _) = app.initialize("2025-06-18").await;
    let response = app
        .client
        .get(app.url("/mcp"))
        .header("accept", ACCEPT_BOTH)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()["allow"], "POST");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "method_not_allowed");
    assert_ne!(body["code"], "invalid_params");
    // Either signal alone asks for a stream.
    for (name, value) in [
        ("accept", ACCEPT_BOTH),
        ("mcp-session-id", session.as_str()),
    ] {
        let response = app
            .client
            .get(app.url("/mcp"))
            .header(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED, "{name}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_get_accepting_anything_still_gets_the_description() {
    let app = spawn_app().await;
    for accept in [
        "*/*",
        "text/html,application/xhtml+xml,*/*;q=0.8",
        "application/json",
    ] {
        let response = app
            .client
            .get(app.url("/mcp"))
            .header("accept", accept)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{accept}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_plain_get_describes_the_server() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/mcp")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["name"], "ledger");
    assert_eq!(body["endpoint"], app.url("/mcp"));
    let names: Vec<&str> = server::mcp::tools::registry()
        .iter()
        .map(|t| t.meta.name)
        .collect();
    assert_eq!(body["tools"], json!(names));
    assert!(names.contains(&"ping"));
    assert_eq!(
        body["protocolVersions"],
        json!([
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ])
    );
    app.stop().await;
}

#[tokio::test]
async fn notifications_and_responses_get_202_without_a_body() {
    let app = spawn_app().await;
    for message in [
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}),
        json!({"jsonrpc":"2.0","id":"srv-1","result":{}}),
    ] {
        let response = app.post_mcp(&message, &[]).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED, "{message}");
        assert!(response.text().await.unwrap().is_empty());
    }
    app.stop().await;
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_with_http_400() {
    let app = spawn_app().await;
    let response = app.post_mcp_raw("{\"jsonrpc\": \"2.0\", ", &[]).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700);
    assert_eq!(body["id"], Value::Null);
    app.stop().await;
}

#[tokio::test]
async fn an_invalid_request_is_32600() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(&json!({"jsonrpc":"1.0","id":3,"method":"tools/list"}), &[])
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600);
    assert_eq!(body["id"], 3);
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_method_is_32601() {
    let app = spawn_app().await;
    let body = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":"x","method":"resources/list"}),
            &[],
        )
        .await;
    assert_eq!(body["error"]["code"], -32601);
    assert_eq!(body["id"], "x");
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_tool_is_32602() {
    let app = spawn_app().await;
    let body = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}),
            &[],
        )
        .await;
    assert_eq!(body["error"]["code"], -32602);
    assert_eq!(body["error"]["message"], "Unknown tool: rm_rf");
    app.stop().await;
}

#[tokio::test]
async fn bad_params_are_32602() {
    let app = spawn_app().await;
    for params in [
        json!(null),
        json!([]),
        json!({"arguments":{}}),
        json!({"name":7}),
        json!({"name":"ping","arguments":[1]}),
        json!({"name":"ping","arguments":"x"}),
    ] {
        let body = app
            .rpc(
                &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":params}),
                &[],
            )
            .await;
        assert_eq!(body["error"]["code"], -32602, "{params}");
    }
    app.stop().await;
}

#[tokio::test]
async fn unknown_argument_fields_are_32602() {
    let app = spawn_app().await;
    let body = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{"verbose":true}}}),
            &[],
        )
        .await;
    assert_eq!(body["error"]["code"], -32602);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `verbose`"),
        "{body}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_batch_is_answered_in_2025_03_26() {
    let app = spawn_app().await;
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"tools/list"},
        {"jsonrpc":"2.0","method":"notifications/initialized"},
        {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","arguments":{}}},
        {"jsonrpc":"2.0","id":3,"method":"nope"}
    ]);
    let body = app
        .rpc(&batch, &[("mcp-protocol-version", "2025-03-26")])
        .await;
    let responses = body.as_array().expect("an array of responses");
    assert_eq!(responses.len(), 3);
    assert_eq!(responses[0]["id"], 1);
    assert_eq!(responses[1]["result"]["isError"], false);
    assert_eq!(responses[2]["error"]["code"], -32601);
    app.stop().await;
}

#[tokio::test]
async fn a_batch_of_only_notifications_is_202() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!([{"jsonrpc":"2.0","method":"notifications/initialized"}]),
            &[],
        )
        .await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    app.stop().await;
}

#[tokio::test]
async fn batches_hold_at_most_twenty() {
    let app = spawn_app().await;
    let make = |n: usize| {
        Value::Array(
            (0..n)
                .map(|i| json!({"jsonrpc":"2.0","id":i,"method":"ping"}))
                .collect(),
        )
    };
    let ok = app.rpc(&make(20), &[]).await;
    assert_eq!(ok.as_array().map(Vec::len), Some(20));
    let response = app.post_mcp(&make(21), &[]).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600);
    let empty = app.post_mcp(&json!([]), &[]).await;
    assert_eq!(empty.status(), StatusCode::BAD_REQUEST);
    app.stop().await;
}

#[tokio::test]
async fn batches_are_refused_from_2025_06_18_on() {
    let app = spawn_app().await;
    let batch = json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]);
    for version in ["2025-06-18", "2025-11-25"] {
        let response = app
            .post_mcp(&batch, &[("mcp-protocol-version", version)])
            .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{version}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32600);
    }
    let (session, _) = app.initialize("2025-06-18").await;
    let response = app
        .post_mcp(&batch, &[("mcp-session-id", session.as_str())])
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    app.stop().await;
}

#[tokio::test]
async fn initialize_inside_a_batch_is_refused() {
    let app = spawn_app().await;
    let body = app
        .rpc(
            &json!([{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}]),
            &[],
        )
        .await;
    assert_eq!(body[0]["error"]["code"], -32600);
    app.stop().await;
}

#[tokio::test]
async fn an_unsupported_protocol_version_header_is_400() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[("mcp-protocol-version", "1999-01-01")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    app.stop().await;
}

#[tokio::test]
async fn an_unsupported_protocol_version_s_400_answers_the_request_s_id() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":"v-1","method":"tools/list"}),
            &[("mcp-protocol-version", "1999-01-01")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["id"], "v-1", "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unsupported MCP-Protocol-Version \"1999-01-01\""),
        "{reply}"
    );
    app.stop().await;
}

/// `tools/call` of `tool` with `arguments`, speaking `version` (its
/// `MCP-Protocol-Version` header, no session).
async fn call_speaking(
    app: &crate::helpers::TestApp,
    version: &str,
    tool: &str,
    arguments: Value,
) -> Value {
    app.rpc(
        &json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":tool,"arguments":arguments}}),
        &[("mcp-protocol-version", version)],
    )
    .await
}

/// Arguments the input schema refuses, and what the refusal says.
fn refused_arguments() -> [(&'static str, Value, &'static str); 5] {
    [
        (
            "add_wallet",
            json!({}),
            "address: required, must be a base58 public key",
        ),
        (
            "ping",
            json!({"verbose": true}),
            "unknown field `verbose`: ping takes no arguments",
        ),
        (
            "get_ledger",
            json!({"address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", "limit": "5"}),
            "limit: must be an integer from 1 to 1000",
        ),
        (
            "quote_wallet",
            json!({"address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", "scope": "everything"}),
            "scope: must be one of preview, full, incremental, refresh, read",
        ),
        (
            "add_wallet",
            json!({"address": 42}),
            "address: must be a base58 public key",
        ),
    ]
}

#[tokio::test]
async fn invalid_arguments_are_32602_before_2025_11_25() {
    let app = spawn_app().await;
    for version in ["2024-11-05", "2025-03-26", "2025-06-18"] {
        for (tool, arguments, says) in refused_arguments() {
            let body = call_speaking(&app, version, tool, arguments.clone()).await;
            assert_eq!(
                body["error"]["code"], -32602,
                "{version} {tool} {arguments}: {body}"
            );
            let message = body["error"]["message"].as_str().unwrap();
            assert!(
                message.starts_with(&format!("Invalid params: arguments for {tool}: "))
                    && message.contains(says),
                "{version} {tool}: {message}"
            );
        }
    }
    app.stop().await;
}

#[tokio::test]
async fn invalid_arguments_are_an_invalid_params_result_from_2025_11_25() {
    let app = spawn_app().await;
    for (tool, arguments, says) in refused_arguments() {
        let body = call_speaking(&app, "2025-11-25", tool, arguments.clone()).await;
        assert!(body.get("error").is_none(), "{tool} {arguments}: {body}");
        let result = &body["result"];
        assert_eq!(result["isError"], true, "{tool}: {result}");
        // The REST error's shape, the rule for the argument as its message.
        assert_eq!(
            result["structuredContent"],
            json!({"code": "invalid_params", "message": says}),
            "{tool} {arguments}"
        );
        assert_eq!(
            result["content"][0]["text"],
            format!("invalid_params: {says}"),
            "{tool}"
        );
    }
    // The same through a session opened at 2025-11-25.
    let (session, _) = app.initialize("2025-11-25").await;
    let body = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add_wallet","arguments":{}}}),
            &[("mcp-session-id", session.as_str())],
        )
        .await;
    assert_eq!(
        body["result"]["structuredContent"]["code"], "invalid_params",
        "{body}"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_rest_twin_refuses_what_the_tool_refuses_with_the_same_words() {
    let app = spawn_app().await;
    let body = call_speaking(&app, "2025-11-25", "add_wallet", json!({})).await;
    let rest = app
        .client
        .post(app.url("/v1/wallets"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::BAD_REQUEST);
    let rest: Value = rest.json().await.unwrap();
    assert_eq!(rest, body["result"]["structuredContent"]);
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_tool_or_non_object_arguments_stay_32602_from_2025_11_25() {
    let app = spawn_app().await;
    for version in ["2025-11-25", "2025-06-18"] {
        let unknown = call_speaking(&app, version, "rm_rf", json!({})).await;
        assert_eq!(unknown["error"]["code"], -32602, "{version}: {unknown}");
        assert_eq!(unknown["error"]["message"], "Unknown tool: rm_rf");
        for arguments in [json!([1]), json!("x"), json!(7)] {
            let body = call_speaking(&app, version, "ping", arguments.clone()).await;
            assert_eq!(
                body["error"]["code"], -32602,
                "{version} {arguments}: {body}"
            );
            assert_eq!(
                body["error"]["message"],
                "Invalid params: arguments for ping must be a JSON object"
            );
        }
    }
    app.stop().await;
}

#[tokio::test]
async fn tools_list_declares_schemas_and_annotations() {
    let app = spawn_app().await;
    let body = app
        .rpc(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}), &[])
        .await;
    let ping = crate::helpers::tool(&body["result"], "ping").expect("ping listed");
    assert_eq!(ping["name"], "ping");
    assert_eq!(ping["title"], "Ping");
    assert!(ping["description"].as_str().unwrap().len() > 40);
    assert_eq!(ping["inputSchema"]["type"], "object");
    assert_eq!(ping["inputSchema"]["additionalProperties"], false);
    assert_eq!(ping["outputSchema"]["type"], "object");
    let shapes = ping["outputSchema"]["anyOf"].as_array().unwrap();
    assert_eq!(shapes.len(), 2, "success and error shapes");
    assert_eq!(shapes[1]["required"], json!(["code", "message"]));
    let annotations = &ping["annotations"];
    assert_eq!(annotations["readOnlyHint"], true);
    assert_eq!(annotations["destructiveHint"], false);
    assert_eq!(annotations["idempotentHint"], true);
    assert_eq!(annotations["openWorldHint"], false);
    app.stop().await;
}

#[tokio::test]
async fn ping_answers_ok_and_the_anonymous_principal() {
    let app = spawn_app().await;
    let result = app.call_tool("ping", json!({})).await;
    assert_eq!(result["isError"], false);
    assert_eq!(
        result["structuredContent"],
        json!({"ok": true, "principal": {"kind": "anonymous"}, "payments": {"mode": "off"}})
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains('\n'), "one line: {text}");
    assert!(text.starts_with("ok"));
    app.stop().await;
}

#[tokio::test]
async fn structured_content_equals_the_rest_route() {
    let app = spawn_app().await;
    let result = app.call_tool("ping", json!({})).await;
    let rest: Value = app
        .client
        .get(app.url("/v1/ping"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(result["structuredContent"], rest);
    app.stop().await;
}

#[tokio::test]
async fn clients_before_2025_06_18_also_get_the_json_as_text() {
    let app = spawn_app().await;
    let (session, _) = app.initialize("2025-03-26").await;
    let body = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping"}}),
            &[("mcp-session-id", session.as_str())],
        )
        .await;
    let content = body["result"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 2);
    let json_text: Value = serde_json::from_str(content[1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(json_text, body["result"]["structuredContent"]);
    let (session, _) = app.initialize("2025-06-18").await;
    let body = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping"}}),
            &[("mcp-session-id", session.as_str())],
        )
        .await;
    assert_eq!(body["result"]["content"].as_array().unwrap().len(), 1);
    app.stop().await;
}

#[tokio::test]
async fn the_protocol_ping_answers_an_empty_result() {
    let app = spawn_app().await;
    let body = app
        .rpc(&json!({"jsonrpc":"2.0","id":9,"method":"ping"}), &[])
        .await;
    assert_eq!(body, json!({"jsonrpc":"2.0","id":9,"result":{}}));
    app.stop().await;
}

#[tokio::test]
async fn initialize_response_carries_the_session_header_only_on_initialize() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}), &[])
        .await;
    assert!(session_id(response.headers()).is_none());
    app.stop().await;
}

#[tokio::test]
async fn a_non_ascii_session_id_is_404_not_ignored() {
    let app = spawn_app().await;
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[("mcp-session-id", "séance")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32001);
    let ended = app
        .client
        .delete(app.url("/mcp"))
        .header("mcp-session-id", "séance")
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn accept_with_q_zero_on_both_framings_is_406() {
    let app = spawn_app().await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"}).to_string();
    for accept in [
        "application/json;q=0, text/event-stream;q=0",
        "application/json; q=0.0, text/event-stream ;Q=0, text/html",
        "*/*;q=0",
    ] {
        let response = app
            .client
            .post(app.url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", accept)
            .body(ping.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE, "{accept}");
    }
    // q=0 on JSON alone leaves the stream: one SSE event.
    let response = app
        .client
        .post(app.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json;q=0, text/event-stream")
        .body(ping)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    app.stop().await;
}

#[tokio::test]
async fn a_json_content_type_in_utf_16_is_415() {
    let app = spawn_app().await;
    for content_type in [
        "application/json; charset=utf-16",
        "application/json;charset=\"UTF-16LE\"",
    ] {
        let response = app
            .client
            .post(app.url("/mcp"))
            .header("content-type", content_type)
            .header("accept", ACCEPT_BOTH)
            .body(json!({"jsonrpc":"2.0","id":1,"method":"ping"}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type}"
        );
    }
    let utf8 = app
        .post_mcp_raw(
            json!({"jsonrpc":"2.0","id":1,"method":"ping"}).to_string(),
            &[("content-type", "application/json; charset=UTF-8")],
        )
        .await;
    assert_eq!(utf8.status(), StatusCode::OK);
    app.stop().await;
}

/// The `"id":…` member of a response, as text.
fn raw_id_of(text: &str) -> &str {
    let start = text.find("\"id\":").expect("an id member") + 5;
    let rest = &text[start..];
    let end = rest.find([',', '}']).expect("the id ends");
    &rest[..end]
}

#[tokio::test]
async fn ids_are_echoed_exactly_as_written() {
    let app = spawn_app().await;
    for raw in [
        "100000000000000000000000000001",
        "-9223372036854775809",
        "18446744073709551616",
        "1.5",
        "1e3",
        "\"x\"",
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
        let response = app.post_mcp_raw(body, &[]).await;
        assert_eq!(response.status(), StatusCode::OK, "{raw}");
        let text = response.text().await.unwrap();
        assert_eq!(raw_id_of(&text), raw, "{text}");
    }
    // An error response echoes it too.
    let body = r#"{"jsonrpc":"2.0","id":100000000000000000000000000001,"method":"nope"}"#;
    let text = app.post_mcp_raw(body, &[]).await.text().await.unwrap();
    assert!(text.contains("-32601"), "{text}");
    assert_eq!(raw_id_of(&text), "100000000000000000000000000001");
    app.stop().await;
}

#[tokio::test]
async fn batch_ids_are_echoed_exactly_as_written() {
    let app = spawn_app().await;
    let body = r#"[{"jsonrpc":"2.0","id":100000000000000000000000000001,"method":"ping"},
                   {"jsonrpc":"2.0","id":-9223372036854775809,"method":"tools/call","params":{"name":"ping","arguments":{}}}]"#;
    let response = app
        .post_mcp_raw(body, &[("mcp-protocol-version", "2025-03-26")])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    let (first, second) = text.split_once("},{").expect("two responses");
    assert_eq!(raw_id_of(first), "100000000000000000000000000001", "{text}");
    assert!(second.contains(r#""id":-9223372036854775809,"#), "{text}");
    app.stop().await;
}

#[tokio::test]
async fn stateless_ids_are_echoed_exactly_as_written() {
    let app = spawn_app().await;
    let body = r#"{"jsonrpc":"2.0","id":100000000000000000000000000001,"method":"server/discover","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let response = app
        .post_mcp_raw(
            body,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "server/discover"),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert_eq!(raw_id_of(&text), "100000000000000000000000000001", "{text}");
    app.stop().await;
}
