//! The portal shell, server-rendered: complete without JavaScript.

use reqwest::StatusCode;

use crate::helpers::{TestApp, spawn_app};

async fn page(app: &TestApp, path: &str) -> (StatusCode, String) {
    let response = app.client.get(app.url(path)).send().await.unwrap();
    let status = response.status();
    (status, response.text().await.unwrap())
}

#[tokio::test]
async fn home_explains_ledger_and_how_to_connect_with_the_real_url() {
    let app = spawn_app().await;
    let (status, html) = page(&app, "/").await;
    assert_eq!(status, StatusCode::OK);
    let mcp = app.url("/mcp");
    assert!(html.contains("<title>Ledger"));
    for section in ["claude-code", "cursor", "claude-desktop", "curl"] {
        assert!(html.contains(&format!("id=\"{section}\"")), "{section}");
    }
    assert!(html.contains(&format!("claude mcp add --transport http ledger {mcp}")));
    assert!(html.contains("mcp-remote"));
    assert!(html.contains(&format!("URL={mcp}")));
    assert!(
        html.matches(&mcp).count() >= 5,
        "every snippet names the URL"
    );
    app.stop().await;
}

#[tokio::test]
async fn tools_page_is_generated_from_the_registry() {
    let app = spawn_app().await;
    let (status, html) = page(&app, "/tools").await;
    assert_eq!(status, StatusCode::OK);
    for tool in app.state.registry().iter() {
        assert!(
            html.contains(&format!("id=\"tool-{}\"", tool.meta.name)),
            "{}",
            tool.meta.name
        );
        assert!(html.contains(tool.meta.title));
        assert!(html.contains(tool.meta.tier.as_str()));
    }
    app.stop().await;
}

#[tokio::test]
async fn unknown_pages_are_404_in_the_portal_frame() {
    let app = spawn_app().await;
    let (status, html) = page(&app, "/no/such/page").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(html.contains("Not found"));
    app.stop().await;
}

#[tokio::test]
async fn the_stylesheet_and_assets_are_served_from_the_binary() {
    let app = spawn_app().await;
    let response = app
        .client
        .get(app.url("/style/ledger.css"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/css");
    assert!(response.text().await.unwrap().contains(".site-header"));
    let icon = app
        .client
        .get(app.url("/favicon.svg"))
        .send()
        .await
        .unwrap();
    assert_eq!(icon.status(), StatusCode::OK);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    app.stop().await;
}

#[tokio::test]
async fn asset_paths_cannot_escape() {
    let app = spawn_app().await;
    for path in [
        "/../Cargo.toml",
        "/style/../../Cargo.toml",
        "/%2e%2e/Cargo.toml",
    ] {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        assert_ne!(response.status(), StatusCode::OK, "{path}");
    }
    app.stop().await;
}
