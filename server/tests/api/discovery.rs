//! T10: discovery documents, generated from the code, snapshotted byte for
//! byte with a fixed public URL.

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::{Options, TestApp, relaxed_limits, spawn_with};

async fn spawn_public() -> TestApp {
    spawn_with(Options {
        configure: Box::new(|c| {
            relaxed_limits(c);
            c.public_url = Some("https://ledger.example".into());
        }),
        ..Options::default()
    })
    .await
}

async fn get_json(app: &TestApp, path: &str) -> Value {
    let response = app.client.get(app.url(path)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.json().await.unwrap()
}

#[tokio::test]
async fn tools_list_snapshot() {
    let app = spawn_public().await;
    let body = app
        .rpc(
            &serde_json::json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[],
        )
        .await;
    insta::assert_json_snapshot!("tools_list", body);
    app.stop().await;
}

#[tokio::test]
async fn server_card_snapshot() {
    let app = spawn_public().await;
    let card = get_json(&app, "/.well-known/mcp/server-card.json").await;
    assert_eq!(card["transport"]["endpoint"], "https://ledger.example/mcp");
    insta::assert_json_snapshot!("server_card", card, {".serverInfo.version" => "[version]"});
    app.stop().await;
}

#[tokio::test]
async fn server_card_lists_what_tools_list_lists() {
    let app = spawn_public().await;
    let card = get_json(&app, "/.well-known/mcp/server-card.json").await;
    let list = app
        .rpc(
            &serde_json::json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            &[],
        )
        .await;
    assert_eq!(card["tools"], list["result"]["tools"]);
    app.stop().await;
}

#[tokio::test]
async fn llms_txt_snapshot_marks_paid_routes() {
    let app = spawn_public().await;
    let response = app.client.get(app.url("/llms.txt")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = response.text().await.unwrap();
    assert!(text.contains("`ping` [free]"));
    insta::assert_snapshot!("llms_txt", text);
    app.stop().await;
}

#[tokio::test]
async fn openapi_snapshot() {
    let app = spawn_public().await;
    let doc = get_json(&app, "/v1/openapi.json").await;
    assert_eq!(doc["servers"][0]["url"], "https://ledger.example");
    assert!(doc["paths"]["/v1/ping"]["get"].is_object());
    insta::assert_json_snapshot!("openapi", doc, {".info.version" => "[version]"});
    app.stop().await;
}

#[tokio::test]
async fn protected_resource_metadata_snapshot() {
    let app = spawn_public().await;
    let doc = get_json(&app, "/.well-known/oauth-protected-resource").await;
    insta::assert_json_snapshot!("oauth_protected_resource", doc);
    app.stop().await;
}

/// What ping (text and structuredContent), llms.txt and the initialize
/// instructions say about payments on `app`.
async fn payment_words(app: &TestApp) -> (String, Value, String, String) {
    let ping = app.call_tool("ping", serde_json::json!({})).await;
    assert_eq!(ping["isError"], false, "{ping}");
    let text = ping["content"][0]["text"].as_str().unwrap().to_owned();
    let llms = app
        .client
        .get(app.url("/llms.txt"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let (_, init) = app.initialize("2025-06-18").await;
    let instructions = init["instructions"].as_str().unwrap().to_owned();
    (
        text,
        ping["structuredContent"]["payments"].clone(),
        llms,
        instructions,
    )
}

#[tokio::test]
async fn ping_llms_txt_and_instructions_say_payments_are_off() {
    let app = spawn_public().await;
    let (ping, payments, llms, instructions) = payment_words(&app).await;
    assert_eq!(
        ping,
        "ok: connected anonymously (no bearer token); payments are off on this server: paid \
         tools answer without charge."
    );
    assert_eq!(payments, serde_json::json!({"mode": "off"}));
    assert!(
        llms.contains(
            "Payments: payments are off on this server: paid tools answer without charge."
        ),
        "{llms}"
    );
    assert!(
        instructions.contains("Payments are off on this server")
            && !instructions.contains("x402 challenge"),
        "{instructions}"
    );
    app.stop().await;
}

#[tokio::test]
async fn ping_llms_txt_and_instructions_say_paid_tools_are_challenged_under_x402() {
    let paid = crate::payments::paid_app(|_| {}).await;
    let (ping, payments, llms, instructions) = payment_words(&paid.app).await;
    let network = paid.app.state.config().x402.network.clone();
    let challenged = format!("paid tools answer with an x402 challenge (USDC on {network})");
    assert!(ping.ends_with(&format!("{challenged}.")), "{ping}");
    assert_eq!(
        payments,
        serde_json::json!({"mode": "x402", "network": network})
    );
    assert!(llms.contains(&format!("Payments: {challenged}.")), "{llms}");
    assert!(
        instructions.contains("Paid tools answer payment_required with an x402 challenge"),
        "{instructions}"
    );
    paid.app.stop().await;
}

#[tokio::test]
async fn ping_llms_txt_and_instructions_say_when_payments_cannot_be_taken() {
    let paid = crate::payments::paid_app(|c| c.x402.treasury = None).await;
    let (ping, payments, llms, instructions) = payment_words(&paid.app).await;
    assert!(ping.contains("payments_not_configured"), "{ping}");
    assert_eq!(payments["mode"], "payments_not_configured");
    assert!(
        llms.contains("Payments: payments are on but not configured"),
        "{llms}"
    );
    assert!(
        instructions.contains("payments_not_configured") && instructions.contains("cannot be paid"),
        "{instructions}"
    );
    paid.app.stop().await;
}

#[tokio::test]
async fn openapi_states_what_the_routes_accept_and_answer() {
    let app = spawn_public().await;
    let doc = get_json(&app, "/v1/openapi.json").await;
    let key = "^[1-9A-HJ-NP-Za-km-z]{32,44}$";
    let ledger = &doc["paths"]["/v1/wallets/{address}/ledger"]["get"];
    let param = |name: &str| {
        ledger["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(param("address")["in"], "path");
    assert_eq!(param("address")["schema"]["pattern"], key);
    assert_eq!(
        param("limit")["schema"],
        serde_json::json!({"type": "integer", "minimum": 1, "maximum": 1000, "default": 100})
    );
    assert_eq!(param("min_usd_value")["schema"]["type"], "number");
    assert_eq!(param("exclude")["explode"], false);
    let quote =
        &doc["paths"]["/v1/quotes"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(quote["properties"]["scope"]["type"], "string");
    assert_eq!(
        quote["properties"]["scope"]["enum"],
        serde_json::json!(["preview", "full", "incremental", "refresh", "read"])
    );
    assert_eq!(quote["properties"]["address"]["pattern"], key);
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if let Some(params) = op.get("parameters") {
                assert!(params.is_array(), "{method} {path}: parameters {params}");
            }
            let responses = op["responses"].as_object().unwrap();
            let ok = responses
                .iter()
                .find(|(status, _)| status.starts_with('2'))
                .unwrap_or_else(|| panic!("{method} {path}: no 2xx"));
            // 204 No Content has no body to describe.
            assert!(
                ok.0 == "204" || ok.1["content"]["application/json"]["schema"].is_object(),
                "{method} {path}: no {} body schema",
                ok.0
            );
            for (status, response) in responses {
                if !status.starts_with('2') {
                    assert_eq!(
                        response["content"]["application/json"]["schema"]["$ref"],
                        "#/components/schemas/ErrorBody",
                        "{method} {path} {status}"
                    );
                }
            }
            if path.starts_with("/v1/") {
                assert!(responses.contains_key("429"), "{method} {path}");
                assert_eq!(op["security"][1]["bearer"], serde_json::json!([]));
            }
            if method == "post" {
                assert!(responses.contains_key("413"), "{method} {path}");
            }
        }
    }
    let text = doc.to_string();
    assert!(!text.contains("\"nullable\""));
    // int64 and double are OpenAPI's own formats; Rust's unsigned widths are not.
    for format in ["uint64", "uint32", "uint16", "uint8"] {
        assert!(!text.contains(&format!("\"{format}\"")), "{format}");
    }
    app.stop().await;
}
