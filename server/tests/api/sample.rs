//! The way in (docs/portal.md#the-sample-report): the home page offers
//! sign-in and a sample report; the sample wallet is seeded at startup from
//! the repository's data when `sample.enabled`, once, and shown read-only
//! at `/sample` under the share pages' headers.

use reqwest::StatusCode;

use crate::helpers::{Options, TestApp, relaxed_limits, spawn_with};

async fn app(enabled: bool) -> TestApp {
    spawn_with(Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.sample.enabled = enabled;
        }),
        ..Options::default()
    })
    .await
}

#[tokio::test]
async fn the_home_page_offers_sign_in_a_sample_and_a_developer_section() {
    let app = app(true).await;
    let home = app.client.get(app.url("/")).send().await.unwrap();
    assert_eq!(home.status(), StatusCode::OK);
    let home = home.text().await.unwrap();
    assert!(home.contains("id=\"home-signin\""), "sign in: {home}");
    assert!(home.contains("href=\"/sample\""), "the sample: {home}");
    let developers = home.find("id=\"developers\"").expect("a developer section");
    for link in ["href=\"/llms.txt\"", "href=\"/v1/openapi.json\"", "/mcp"] {
        let at = home[developers..].find(link);
        assert!(at.is_some(), "{link} in the developer section");
    }
    // The bar no longer carries the developer links.
    let header = &home[home.find("<header").unwrap()..home.find("</header>").unwrap()];
    assert!(!header.contains("llms.txt"), "{header}");
    assert!(!header.contains("openapi"), "{header}");
    app.stop().await;
}

#[tokio::test]
async fn the_sample_report_is_seeded_once_and_read_only_under_the_share_pages_csp() {
    let app = app(true).await;
    let wallet = server::sample::address().unwrap();
    let store = app.state.store();
    assert!(store.wallet_scanned(wallet.as_str()).await.unwrap());
    let legs = store.wallet_legs(wallet.as_str()).await.unwrap().len();
    // The data file's legs, every one: 7 incoming transfers (one leg
    // each), 6 outgoing (the transfer and its fee), 4 swaps (both sides
    // and the fee): 7 + 12 + 12.
    assert_eq!(legs, 31);
    // A second start seeds nothing more.
    assert!(
        !server::sample::seed(store, app.state.now_ms())
            .await
            .unwrap()
    );
    assert_eq!(
        store.wallet_legs(wallet.as_str()).await.unwrap().len(),
        legs
    );

    let page = app.client.get(app.url("/sample")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(
        page.headers()["content-security-policy"],
        server::site::share::CSP,
        "the share pages' policy: no inline script or style"
    );
    assert_eq!(page.headers()["x-robots-tag"], "noindex, nofollow");
    let html = page.text().await.unwrap();
    assert!(html.contains("id=\"sample-banner\""), "{html}");
    assert!(html.contains("<strong>Sample</strong>"), "labelled: {html}");
    assert!(html.contains("id=\"table-ledger\""), "the ledger: {html}");
    assert!(!html.contains("<form method=\"post\""), "read only: {html}");
    assert!(!html.contains("name=\"csrf\""), "read only");
    // No inline script runs on it (the CSP would refuse one anyway).
    for script in html.split("<script").skip(1) {
        let open = &script[..script.find('>').unwrap()];
        assert!(
            open.contains("src=") || open.contains("application/json"),
            "an inline script: {open}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn with_the_sample_off_nothing_is_seeded_and_nothing_links_it() {
    let app = app(false).await;
    let wallet = server::sample::address().unwrap();
    assert!(
        !app.state
            .store()
            .wallet_scanned(wallet.as_str())
            .await
            .unwrap()
    );
    let page = app.client.get(app.url("/sample")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::NOT_FOUND);
    let home = app
        .client
        .get(app.url("/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!home.contains("href=\"/sample\""));
    assert!(home.contains("id=\"home-signin\""));
    app.stop().await;
}
