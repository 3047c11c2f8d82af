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
    for tool in server::mcp::tools::registry().iter() {
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

/// The page's text with the entities Leptos writes decoded, so a snippet
/// can be looked for as the user copies it.
pub fn unescape(html: &str) -> String {
    html.replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[tokio::test]
async fn the_home_page_shows_the_guide_s_snippets_for_this_server() {
    let app = spawn_app().await;
    let (_, html) = page(&app, "/").await;
    let text = unescape(&html);
    let mcp = app.url("/mcp");
    let snippets = app::snippets::token_snippets(&mcp, app::snippets::TOKEN_PLACEHOLDER);
    assert_eq!(
        snippets.iter().map(|s| s.id).collect::<Vec<_>>(),
        ["claude-code", "mcp-json", "claude-desktop", "cursor"]
    );
    for snippet in &snippets {
        assert!(
            text.contains(&format!("<pre><code>{}</code></pre>", snippet.code)),
            "{} is on the home page, whole:\n{}",
            snippet.id,
            snippet.code
        );
    }
    assert!(text.contains(&app::snippets::curl_session(
        &mcp,
        app::snippets::TOKEN_PLACEHOLDER
    )));
    // The guide's details, on this server: http-only, no space inside an
    // argument, the token read from the environment in files.
    assert!(text.contains("\"--transport\", \"http-only\""));
    assert!(text.contains("\"--header\", \"Authorization:${LEDGER_AUTH}\""));
    assert!(text.contains("\"Authorization\": \"Bearer ${env:LEDGER_MCP_TOKEN}\""));
    assert!(text.contains("\"Authorization\": \"Bearer ${LEDGER_MCP_TOKEN}\""));
    assert!(
        !text.contains("LEDGER_TOKEN}"),
        "one variable name everywhere"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_home_page_says_which_url_a_host_that_starts_oauth_takes() {
    let app = spawn_app().await;
    let (_, html) = page(&app, "/").await;
    let text = unescape(&html);
    let note = app::snippets::which_url(&app.base);
    assert!(text.contains(&note), "{note}");
    assert!(note.contains(&format!("{} stays anonymous-first", app.url("/mcp"))));
    assert!(note.contains(&app.url("/mcp/account")));
    app.stop().await;
}

#[tokio::test]
async fn the_version_sits_in_the_footer_only() {
    let app = spawn_app().await;
    let (_, html) = page(&app, "/").await;
    let version = env!("CARGO_PKG_VERSION");
    let main = &html[html.find("<main").unwrap()..html.find("</main>").unwrap()];
    assert!(
        !main.contains(&format!("Ledger {version}")),
        "no stray version above the footer"
    );
    let footer = &html[html.find("<footer").unwrap()..];
    assert!(footer.contains(version), "{footer:.400}");
    app.stop().await;
}

#[tokio::test]
async fn tools_page_groups_tools_free_paid_account_with_prices() {
    let app = spawn_app().await;
    let (_, html) = page(&app, "/tools").await;
    let free = html.find("id=\"group-free\"").expect("a free group");
    let paid = html.find("id=\"group-paid\"").expect("a paid group");
    assert!(free < paid, "free tools first");
    let at = |name: &str| {
        html.find(&format!("id=\"tool-{name}\""))
            .unwrap_or_else(|| panic!("{name}"))
    };
    let account = html.find("id=\"group-account\"").expect("an account group");
    assert!(paid < account, "account tools last");
    for tool in server::mcp::tools::registry().iter() {
        let position = at(tool.meta.name);
        if tool.meta.tier == server::mcp::registry::Tier::FreeAccountOnly {
            assert!(position > account, "{} is under account", tool.meta.name);
        } else if tool.meta.tier.is_paid() {
            assert!(
                position > paid && position < account,
                "{} is under paid",
                tool.meta.name
            );
        } else {
            assert!(
                position > free && position < paid,
                "{} is under free",
                tool.meta.name
            );
        }
    }
    // As a user meets them: ping, then a quote, then the scan and its reads.
    assert!(at("ping") < at("quote_wallet"));
    assert!(at("scan_wallet") < at("get_ledger"));
    // Each card says its price, from the tier table quotes use.
    let card = |name: &str| {
        let start = at(name);
        let end = html[start..].find("</article>").unwrap() + start;
        html[start..end].to_owned()
    };
    assert!(
        card("ping").contains("Price: </strong>Free"),
        "{}",
        card("ping")
    );
    assert!(
        card("get_ledger").contains("$0.02 per wallet"),
        "{}",
        card("get_ledger")
    );
    let scan = card("scan_wallet");
    for price in [
        "preview $0.05",
        "small $0.25 up to 1,000 signatures",
        "whale $20.00 above",
    ] {
        assert!(scan.contains(price), "{price}: {scan}");
    }
    app.stop().await;
}
