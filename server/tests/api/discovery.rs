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
