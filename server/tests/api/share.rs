//! Share links end to end: `create_snapshot` / `revoke_snapshot` and their
//! REST twins, every refusal with its own test, the `/s/{token}` page, its
//! reads and its card, expiry with a hand-driven clock, and the token kept
//! only as its hash. docs/share-links.md is the long form.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use server::{
    accounts::{self, AccountId, Scopes, TokenKind},
    clock::ManualClock,
};
use sha2::{Digest, Sha256};

use crate::{
    helpers::{Options, TestApp, relaxed_limits, spawn_with},
    payments::paid_app,
    scans::{WALLET, scan_to_end, shared},
};

/// 2024-04-01T00:00:00Z: after the fixtures' transactions, inside the
/// price stand-in's series.
const NOW_MS: i64 = 1_711_929_600_000;

/// A new account and a token that may publish (read and scan).
async fn mint_token(app: &TestApp) -> (AccountId, String) {
    let account = accounts::create_account(app.state.store(), app.state.now_ms(), "tests")
        .await
        .unwrap();
    let token = token_of(app, &account, "read,scan").await;
    (account, token)
}

/// Another token of `account`, with `scopes`.
async fn token_of(app: &TestApp, account: &AccountId, scopes: &str) -> String {
    accounts::mint(
        app.state.store(),
        app.state.now_ms(),
        account,
        TokenKind::Mcp,
        Scopes::parse(scopes).unwrap(),
        "test token",
    )
    .await
    .unwrap()
    .plaintext
    .clone()
}

async fn call_as(app: &TestApp, bearer: Option<&str>, name: &str, arguments: Value) -> Value {
    let auth = bearer.map(|b| format!("Bearer {b}"));
    let headers: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("authorization", a)])
        .unwrap_or_default();
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":name,"arguments":arguments}}),
            &headers,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    body["result"].clone()
}

fn refusal(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["structuredContent"]["code"].as_str().unwrap()
}

fn ok(result: &Value) -> &Value {
    assert_eq!(result["isError"], false, "{result}");
    &result["structuredContent"]
}

/// A scanned wallet on a server with payments off, prices from the
/// stand-in, a hand-driven clock at [`NOW_MS`], and `configure` applied.
pub(crate) async fn scanned(
    configure: impl FnOnce(&mut server::config::Config) + Send + 'static,
) -> (
    TestApp,
    ManualClock,
    crate::standin::StandIn,
    crate::price_standin::PriceStandIn,
) {
    let prices = crate::price_standin::start().await;
    let stand_in = crate::standin::start(shared(0, Duration::ZERO)).await;
    let (rpc, price_url) = (stand_in.url.clone(), prices.url.clone());
    let clock = ManualClock::new(NOW_MS);
    let app = spawn_with(Options {
        clock: std::sync::Arc::new(clock.clone()),
        configure: Box::new(move |c| {
            relaxed_limits(c);
            crate::price_standin::configure(c, &price_url);
            c.solana.rpc_url = rpc;
            c.solana.retry_base_ms = 1;
            c.solana.batch_size = 4;
            c.worker.in_process = true;
            c.worker.poll_ms = 20;
            configure(c);
        }),
    })
    .await;
    let job = scan_to_end(&app, "full").await;
    assert_eq!(job["status"], "completed");
    (app, clock, stand_in, prices)
}

/// An account watching the wallet, and its token.
pub(crate) async fn owner(app: &TestApp) -> (AccountId, String) {
    let (account, token) = mint_token(app).await;
    ok(&call_as(app, Some(&token), "add_wallet", json!({"address": WALLET})).await);
    (account, token)
}

pub(crate) async fn create(app: &TestApp, token: &str, args: Value) -> Value {
    ok(&call_as(app, Some(token), "create_snapshot", args).await).clone()
}

async fn get(app: &TestApp, path: &str) -> reqwest::Response {
    app.client.get(app.url(path)).send().await.unwrap()
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn assert_noindex(response: &reqwest::Response) {
    let h = response.headers();
    assert_eq!(h["x-robots-tag"], "noindex, nofollow");
    assert_eq!(h["cache-control"], "no-store");
    assert_eq!(h["referrer-policy"], "no-referrer");
    assert!(
        h["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("script-src 'self'")
    );
}

#[tokio::test]
async fn create_snapshot_needs_an_account() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let result = call_as(&app, None, "create_snapshot", json!({"address": WALLET})).await;
    assert_eq!(refusal(&result), "unauthenticated");
    let rest = app
        .client
        .post(app.url("/v1/snapshots"))
        .json(&json!({"address": WALLET}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::UNAUTHORIZED);
    let listed = get(&app, "/v1/snapshots").await;
    assert_eq!(listed.status(), StatusCode::UNAUTHORIZED);
    let revoke = call_as(
        &app,
        None,
        "revoke_snapshot",
        json!({"token": "x".repeat(43)}),
    )
    .await;
    assert_eq!(refusal(&revoke), "unauthenticated");
}

/// A read-only token publishes nothing: the account watches the wallet
/// (so a read,scan token of it mints a link), yet `create_snapshot` and
/// `POST /v1/snapshots` are forbidden and no link exists afterwards.
#[tokio::test]
async fn a_read_only_token_cannot_publish_a_share_link() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (account, _) = owner(&app).await;
    let read = token_of(&app, &account, "read").await;
    let result = call_as(
        &app,
        Some(&read),
        "create_snapshot",
        json!({"address": WALLET}),
    )
    .await;
    assert_eq!(refusal(&result), "forbidden", "{result}");
    assert!(
        result["structuredContent"]["message"]
            .as_str()
            .unwrap()
            .contains("lacks the scan scope")
    );
    let rest = app
        .client
        .post(app.url("/v1/snapshots"))
        .bearer_auth(&read)
        .json(&json!({"address": WALLET}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::FORBIDDEN);
    let challenge = rest.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"read scan\""),
        "{challenge}"
    );
    let live = app
        .state
        .store()
        .count_live_share_links(account.as_str(), app.state.now_ms())
        .await
        .unwrap();
    assert_eq!(live, 0, "no link was minted");
    app.stop().await;
}

/// Nor does it withdraw one: `revoke_snapshot` and `DELETE
/// /v1/snapshots/{token}` are forbidden and the link still opens.
#[tokio::test]
async fn a_read_only_token_cannot_revoke_a_share_link() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (account, token) = owner(&app).await;
    let minted = create(&app, &token, json!({"address": WALLET})).await;
    let link = minted["token"].as_str().unwrap();
    let read = token_of(&app, &account, "read").await;
    let result = call_as(&app, Some(&read), "revoke_snapshot", json!({"token": link})).await;
    assert_eq!(refusal(&result), "forbidden", "{result}");
    let rest = app
        .client
        .delete(app.url(&format!("/v1/snapshots/{link}")))
        .bearer_auth(&read)
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::FORBIDDEN);
    let page = get(&app, &format!("/s/{link}")).await;
    assert_eq!(page.status(), StatusCode::OK, "still live");
    // The read token still lists the account's links (without tokens).
    let listed = app
        .client
        .get(app.url("/v1/snapshots"))
        .bearer_auth(&read)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
    app.stop().await;
}

/// A scan-only token neither publishes nor revokes: a link reads a wallet,
/// which needs read.
#[tokio::test]
async fn a_scan_only_token_cannot_publish_or_revoke_a_share_link() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (account, token) = owner(&app).await;
    let minted = create(&app, &token, json!({"address": WALLET})).await;
    let scan = token_of(&app, &account, "scan").await;
    let created = call_as(
        &app,
        Some(&scan),
        "create_snapshot",
        json!({"address": WALLET}),
    )
    .await;
    assert_eq!(refusal(&created), "forbidden", "{created}");
    let revoked = call_as(
        &app,
        Some(&scan),
        "revoke_snapshot",
        json!({"token": minted["token"]}),
    )
    .await;
    assert_eq!(refusal(&revoked), "forbidden", "{revoked}");
    let live = app
        .state
        .store()
        .count_live_share_links(account.as_str(), app.state.now_ms())
        .await
        .unwrap();
    assert_eq!(live, 1, "only the read,scan token's link");
    app.stop().await;
}

#[tokio::test]
async fn create_snapshot_refuses_a_wallet_the_account_cannot_read() {
    let paid = paid_app(|_| {}).await;
    paid.paid_scan().await;
    let (account, token) = mint_token(&paid.app).await;
    let result = call_as(
        &paid.app,
        Some(&token),
        "create_snapshot",
        json!({"address": WALLET}),
    )
    .await;
    assert_eq!(refusal(&result), "payment_required", "{result}");
    assert_eq!(
        result["structuredContent"]["x402"]["accepts"][0]["resource"],
        "/v1/snapshots"
    );
    let live = paid
        .app
        .state
        .store()
        .count_live_share_links(account.as_str(), paid.app.state.now_ms())
        .await
        .unwrap();
    assert_eq!(live, 0, "nothing was minted");
    // Watching the wallet is what lets the account share it.
    ok(&call_as(
        &paid.app,
        Some(&token),
        "add_wallet",
        json!({"address": WALLET}),
    )
    .await);
    let minted = create(&paid.app, &token, json!({"address": WALLET})).await;
    assert!(minted["token"].is_string());
    paid.app.stop().await;
}

#[tokio::test]
async fn create_snapshot_refuses_a_wallet_never_scanned() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (_, token) = mint_token(&app).await;
    let other = "11111111111111111111111111111112";
    let result = call_as(
        &app,
        Some(&token),
        "create_snapshot",
        json!({"address": other}),
    )
    .await;
    assert_eq!(refusal(&result), "not_found");
}

#[tokio::test]
async fn create_snapshot_refuses_a_bad_range_or_denominate() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (_, token) = owner(&app).await;
    for args in [
        json!({"address": WALLET, "range": "7d"}),
        json!({"address": WALLET, "denominate": "eur"}),
        json!({"address": "not-a-wallet"}),
    ] {
        let result = call_as(&app, Some(&token), "create_snapshot", args.clone()).await;
        // A value the schema refuses is -32602 or invalid_params, never a link.
        let refused = result.is_null() || result["isError"] == true;
        assert!(refused, "{args}: {result}");
    }
    let rest = app
        .client
        .post(app.url("/v1/snapshots"))
        .bearer_auth(&token)
        .json(&json!({"address": WALLET, "range": "7d"}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::BAD_REQUEST);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["code"], "invalid_params");
}

#[tokio::test]
async fn the_limit_of_live_links_is_snapshot_limit_and_revoking_frees_a_place() {
    let (app, _clock, _s, _p) = scanned(|c| c.share.max_live_links = 2).await;
    let (_, token) = owner(&app).await;
    let first = create(&app, &token, json!({"address": WALLET})).await;
    create(&app, &token, json!({"address": WALLET, "range": "30d"})).await;
    let third = call_as(
        &app,
        Some(&token),
        "create_snapshot",
        json!({"address": WALLET}),
    )
    .await;
    assert_eq!(refusal(&third), "snapshot_limit");
    let rest = app
        .client
        .post(app.url("/v1/snapshots"))
        .bearer_auth(&token)
        .json(&json!({"address": WALLET}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::CONFLICT);
    assert_eq!(
        rest.json::<Value>().await.unwrap()["code"],
        "snapshot_limit"
    );
    ok(&call_as(
        &app,
        Some(&token),
        "revoke_snapshot",
        json!({"token": first["token"]}),
    )
    .await);
    create(&app, &token, json!({"address": WALLET})).await;
}

#[tokio::test]
async fn the_token_is_stored_only_as_its_sha256_and_listed_without_it() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (_, token) = owner(&app).await;
    let minted = create(
        &app,
        &token,
        json!({"address": WALLET, "denominate": "sol"}),
    )
    .await;
    let plaintext = minted["token"].as_str().unwrap();
    assert_eq!(plaintext.len(), 43);
    let store = app.state.store();
    let row = store
        .share_link_by_hash(&sha256_hex(plaintext))
        .await
        .unwrap()
        .expect("found by its hash");
    assert_ne!(row.token_hash, plaintext);
    assert!(!format!("{row:?}").contains(plaintext));
    assert!(store.share_link_by_hash(plaintext).await.unwrap().is_none());
    assert_eq!(row.denominate, "sol");
    assert_eq!(row.chart_range, "90d");
    let listed: Value = app
        .client
        .get(app.url("/v1/snapshots"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let links = listed["snapshots"].as_array().unwrap();
    assert_eq!(links.len(), 1);
    assert_eq!(links[0]["id"], minted["id"]);
    assert!(links[0].get("token").is_none() && links[0].get("url").is_none());
    assert!(!listed.to_string().contains(plaintext));
}

#[tokio::test]
async fn revoking_another_accounts_link_is_not_found_and_changes_nothing() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (_, token) = owner(&app).await;
    let minted = create(&app, &token, json!({"address": WALLET})).await;
    let (_, other) = mint_token(&app).await;
    let result = call_as(
        &app,
        Some(&other),
        "revoke_snapshot",
        json!({"token": minted["token"]}),
    )
    .await;
    assert_eq!(refusal(&result), "not_found");
    let rest = app
        .client
        .delete(app.url(&format!(
            "/v1/snapshots/{}",
            minted["token"].as_str().unwrap()
        )))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::NOT_FOUND);
    let page = get(&app, &format!("/s/{}", minted["token"].as_str().unwrap())).await;
    assert_eq!(page.status(), StatusCode::OK, "still live");
}

#[tokio::test]
async fn a_link_opens_its_page_reads_and_card_until_revoked_then_all_three_say_so() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (_, token) = owner(&app).await;
    let minted = create(&app, &token, json!({"address": WALLET, "range": "30d"})).await;
    let link = minted["token"].as_str().unwrap().to_owned();
    assert_eq!(minted["url"], format!("{}/s/{link}", app.base));

    let page = get(&app, &format!("/s/{link}")).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_noindex(&page);
    let html = page.text().await.unwrap();
    assert!(html.contains("<meta name=\"robots\" content=\"noindex, nofollow\">"));
    assert!(html.contains(&format!(
        "<meta property=\"og:image\" content=\"{}/s/{link}/card.png\">",
        app.base
    )));
    assert!(html.contains("name=\"twitter:card\" content=\"summary_large_image\""));
    for id in [
        "table-value",
        "table-allocation",
        "table-flows",
        "table-positions",
        "table-ledger",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(html.contains("id=\"chart-value-data\""));
    assert!(!html.contains("<script>"), "no inline script");

    let data = get(&app, &format!("/s/{link}/report.json")).await;
    assert_eq!(data.status(), StatusCode::OK);
    assert_noindex(&data);
    let report: Value = data.json().await.unwrap();
    assert_eq!(report["address"], WALLET);
    assert_eq!(report["range"], "30d");
    // The page reads what the tools read.
    let ledger = ok(&call_as(
        &app,
        Some(&token),
        "get_ledger",
        json!({"address": WALLET, "limit": 50}),
    )
    .await)
    .clone();
    assert_eq!(report["ledger"]["entries"], ledger["entries"]);

    let card = get(&app, &format!("/s/{link}/card.png")).await;
    assert_eq!(card.status(), StatusCode::OK);
    assert_eq!(card.headers()["content-type"], "image/png");
    let png = card.bytes().await.unwrap();
    let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
    assert_eq!((pixmap.width(), pixmap.height()), (1200, 630));

    let revoked = call_as(
        &app,
        Some(&token),
        "revoke_snapshot",
        json!({"token": link}),
    )
    .await;
    assert_eq!(ok(&revoked)["revoked"], true);

    let page = get(&app, &format!("/s/{link}")).await;
    assert_eq!(page.status(), StatusCode::NOT_FOUND);
    assert_noindex(&page);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("was revoked by its owner")
    );
    let data = get(&app, &format!("/s/{link}/report.json")).await;
    assert_eq!(data.status(), StatusCode::NOT_FOUND);
    let body: Value = data.json().await.unwrap();
    assert_eq!(body["code"], "not_found");
    assert!(body["message"].as_str().unwrap().contains("revoked"));
    let card = get(&app, &format!("/s/{link}/card.png")).await;
    assert_eq!(card.status(), StatusCode::NOT_FOUND);
    assert!(card.text().await.unwrap().contains("revoked"));
    // Revoking twice is not_found.
    let again = call_as(
        &app,
        Some(&token),
        "revoke_snapshot",
        json!({"token": link}),
    )
    .await;
    assert_eq!(refusal(&again), "not_found");
}

#[tokio::test]
async fn a_link_past_its_ttl_is_404_in_words_on_page_reads_and_card() {
    let (app, clock, _s, _p) = scanned(|c| c.share.ttl_secs = 3600).await;
    let (_, token) = owner(&app).await;
    let minted = create(&app, &token, json!({"address": WALLET})).await;
    let link = minted["token"].as_str().unwrap().to_owned();
    assert_eq!(
        get(&app, &format!("/s/{link}")).await.status(),
        StatusCode::OK
    );
    clock.advance_ms(3_600_000);
    let page = get(&app, &format!("/s/{link}")).await;
    assert_eq!(page.status(), StatusCode::NOT_FOUND);
    assert!(page.text().await.unwrap().contains("has expired"));
    let data = get(&app, &format!("/s/{link}/report.json")).await;
    assert_eq!(data.status(), StatusCode::NOT_FOUND);
    assert!(data.text().await.unwrap().contains("expired"));
    let card = get(&app, &format!("/s/{link}/card.png")).await;
    assert_eq!(card.status(), StatusCode::NOT_FOUND);
    assert!(card.text().await.unwrap().contains("expired"));
    // An expired link is no longer listed, and frees its place.
    let listed: Value = app
        .client
        .get(app.url("/v1/snapshots"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["snapshots"], json!([]));
}

/// Share reads spend the anonymous budget of their client address, a card
/// three requests' worth, before the link is even looked up (so guessing
/// tokens is limited too): past it, 429 with `Retry-After` on the page, its
/// reads and its card, while another address is still served.
#[tokio::test]
async fn share_reads_spend_the_anonymous_budget_and_a_card_three_times_a_page() {
    assert_eq!(
        (
            server::site::share::PAGE_REQUESTS,
            server::site::share::CARD_REQUESTS
        ),
        (1, 3)
    );
    let app = spawn_with(Options {
        clock: std::sync::Arc::new(ManualClock::new(NOW_MS)),
        configure: Box::new(|c| {
            c.trust_forwarded_for = true;
            c.rate_limit.anon_rps = 0.001;
            c.rate_limit.anon_burst = Some(7);
        }),
    })
    .await;
    let from = |path: &str, ip: &'static str| {
        app.client
            .get(app.url(path))
            .header("x-forwarded-for", ip)
            .send()
    };
    let here = "198.51.100.7";
    // Two cards and a page: the whole burst of seven.
    for path in [
        "/s/nosuchtoken/card.png",
        "/s/nosuchtoken/card.png",
        "/s/nosuchtoken",
    ] {
        assert_eq!(
            from(path, here).await.unwrap().status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    let page = from("/s/nosuchtoken", here).await.unwrap();
    assert_eq!(page.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(page.headers().contains_key("retry-after"));
    assert_noindex(&page);
    assert!(page.text().await.unwrap().contains("Too many requests"));
    let data = from("/s/nosuchtoken/report.json", here).await.unwrap();
    assert_eq!(data.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(data.headers().contains_key("retry-after"));
    let body: Value = data.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited", "{body}");
    let card = from("/s/nosuchtoken/card.png", here).await.unwrap();
    assert_eq!(card.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(card.headers().contains_key("retry-after"));
    // Another address has its own budget.
    assert_eq!(
        from("/s/nosuchtoken", "198.51.100.8")
            .await
            .unwrap()
            .status(),
        StatusCode::NOT_FOUND
    );
    app.stop().await;
}

/// A card is drawn once per link and view and kept a minute: the second
/// fetch is served from the cache (the metrics count it), and one a
/// minute later is drawn again.
#[tokio::test]
async fn a_card_is_drawn_once_a_minute_per_link_and_view() {
    let (app, clock, _s, _p) = scanned(|c| {
        c.metrics.listen = Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
    })
    .await;
    let (_, token) = owner(&app).await;
    let minted = create(&app, &token, json!({"address": WALLET})).await;
    let link = minted["token"].as_str().unwrap().to_owned();
    let cards = |scrape: &str| {
        (
            crate::helpers::sample(scrape, "ledger_cache_hits_total{cache=\"share_cards\"}"),
            crate::helpers::sample(scrape, "ledger_cache_misses_total{cache=\"share_cards\"}"),
        )
    };
    let first = get(&app, &format!("/s/{link}/card.png")).await;
    assert_eq!(first.status(), StatusCode::OK);
    let first = first.bytes().await.unwrap();
    let second = get(&app, &format!("/s/{link}/card.png")).await;
    assert_eq!(second.status(), StatusCode::OK);
    assert_eq!(second.bytes().await.unwrap(), first);
    assert_eq!(cards(&app.scrape().await), (Some(1.0), Some(1.0)));
    clock.advance_ms(server::share::card::CARD_TTL_MS);
    assert_eq!(
        get(&app, &format!("/s/{link}/card.png")).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        cards(&app.scrape().await),
        (Some(1.0), Some(2.0)),
        "drawn again"
    );
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_token_is_404_in_words() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    for path in ["/s/nope", &format!("/s/{}", "A".repeat(43))] {
        let page = get(&app, path).await;
        assert_eq!(page.status(), StatusCode::NOT_FOUND);
        assert_noindex(&page);
        assert!(
            page.text()
                .await
                .unwrap()
                .contains("no share link at this address")
        );
    }
}

#[tokio::test]
async fn a_bad_view_or_cursor_is_a_400_page_not_a_crash() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (_, token) = owner(&app).await;
    let link = create(&app, &token, json!({"address": WALLET})).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    for query in ["range=7d", "denominate=eur", "cursor=forged"] {
        let page = get(&app, &format!("/s/{link}?{query}")).await;
        assert_eq!(page.status(), StatusCode::BAD_REQUEST, "{query}");
    }
}

#[tokio::test]
async fn the_share_page_reads_as_snapshotted() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (_, token) = owner(&app).await;
    let link = create(&app, &token, json!({"address": WALLET, "range": "30d"})).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let html = get(&app, &format!("/s/{link}")).await.text().await.unwrap();
    let html = html.replace(&link, "[token]").replace(&app.base, "[base]");
    // One element per line, so a change reads as a small diff.
    let html = html.replace("><", ">\n<");
    insta::assert_snapshot!("share_page", html);
}

/// The share page as a visitor whose browser asks for `language` (no one
/// is signed in there: `Accept-Language` alone says how numbers read).
#[tokio::test]
async fn the_share_page_writes_numbers_in_the_visitors_locale() {
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let (_, token) = owner(&app).await;
    let link = create(&app, &token, json!({"address": WALLET, "range": "30d"})).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let en_us = get(&app, &format!("/s/{link}")).await.text().await.unwrap();
    for (language, name) in [
        ("de-DE,de;q=0.9", "share_page_de_de"),
        ("en-GB", "share_page_en_gb"),
    ] {
        let response = app
            .client
            .get(app.url(&format!("/s/{link}")))
            .header(reqwest::header::ACCEPT_LANGUAGE, language)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()[reqwest::header::VARY]
                .to_str()
                .unwrap()
                .contains("Accept-Language"),
            "a cache keeps one page per language"
        );
        let html = response.text().await.unwrap();
        if name == "share_page_en_gb" {
            // en-GB writes numbers as en-US does.
            assert_eq!(html, en_us);
        }
        let html = html.replace(&link, "[token]").replace(&app.base, "[base]");
        let html = html.replace("><", ">\n<");
        insta::assert_snapshot!(name, html);
    }
}

#[tokio::test]
async fn a_never_scanned_wallet_says_so_and_offers_no_downloads() {
    use crate::portal::{Browser, sign_in};
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    // A wallet nobody scanned.
    let other = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
    let wallet = server::solana::WalletAddress::parse(other).unwrap();
    server::accounts::watchlist::add_wallet(app.state.store(), NOW_MS, &account, wallet, "new")
        .await
        .unwrap();
    let page = browser.get(&app.url(&format!("/wallets/{other}"))).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("id=\"not-scanned\""), "{html}");
    assert!(
        html.contains("This wallet has not been scanned yet")
            && html.contains(&format!("href=\"/wallets/{other}/scan\"")),
        "says what to do, in words, with the way to do it: {html}"
    );
    assert!(
        !html.contains("/report?format="),
        "no downloads to a 404: {html}"
    );
    assert!(html.contains("id=\"share-form\""), "sharing is still below");
    app.stop().await;
}

#[tokio::test]
async fn the_portal_report_view_shares_and_revokes_behind_the_csrf_token() {
    use crate::portal::{Browser, sign_in};
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let wallet = server::solana::WalletAddress::parse(WALLET).unwrap();
    server::accounts::watchlist::add_wallet(app.state.store(), NOW_MS, &account, wallet, "main")
        .await
        .unwrap();
    let csrf = browser.csrf(&app).await;
    let list = browser
        .get(&app.url("/wallets"))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        list.contains(&format!("href=\"/wallets/{WALLET}\"")),
        "the Wallets page links the report"
    );

    let page = browser.get(&app.url(&format!("/wallets/{WALLET}"))).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    for id in [
        "table-value",
        "table-ledger",
        "chart-value-data",
        "share-form",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    for format in [
        "json",
        "csv",
        "positions_csv",
        "8949",
        "koinly",
        "cointracker",
        "pdf",
    ] {
        assert!(
            html.contains(&format!("/wallets/{WALLET}/report?format={format}")),
            "{format}"
        );
    }
    let live = |app: &TestApp| {
        let (store, account) = (app.state.store().clone(), account.clone());
        async move {
            store
                .count_live_share_links(account.as_str(), NOW_MS)
                .await
                .unwrap()
        }
    };

    // Without the form token nothing is minted.
    let refused = browser
        .post_form(
            &app.url(&format!("/wallets/{WALLET}/share")),
            &[("range", "30d"), ("denominate", "sol")],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(live(&app).await, 0);

    let minted = browser
        .post_form(
            &app.url(&format!("/wallets/{WALLET}/share")),
            &[("csrf", &csrf), ("range", "30d"), ("denominate", "sol")],
        )
        .await;
    // Post/redirect/get: the link is shown by the GET the 303 leads to,
    // once; reloading it twice mints nothing more.
    assert_eq!(minted.status(), StatusCode::SEE_OTHER);
    let location = minted.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(location, format!("/wallets/{WALLET}"));
    let waiting = crate::portal::session_row(&app, &browser).await;
    let html = browser.get(&app.url(&location)).await.text().await.unwrap();
    assert!(
        html.contains("id=\"new-share-link\""),
        "the link is shown once"
    );
    // Its URL waited in the session row sealed, never in clear.
    let shown = html.find("id=\"new-share-link\">").unwrap();
    let at = shown + html[shown..].find("/s/").expect("the new link's URL") + "/s/".len();
    let link_token: String = html[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    assert!(link_token.len() > 20, "{link_token}");
    assert!(waiting.contains("\"flash\""), "{waiting}");
    assert!(!waiting.contains(&link_token[8..]), "{waiting}");
    let again = browser.get(&app.url(&location)).await.text().await.unwrap();
    assert!(!again.contains("id=\"new-share-link\""), "and only once");
    assert_eq!(live(&app).await, 1, "one POST, two GETs: one link");
    let id = app
        .state
        .store()
        .live_share_links(account.as_str(), NOW_MS)
        .await
        .unwrap()[0]
        .id
        .clone();
    let confirm_href = format!("/wallets/{WALLET}/share/revoke?id={id}");
    assert!(
        again.contains(&format!("href=\"{confirm_href}\"")),
        "listed with a link that asks before revoking"
    );
    let confirm = browser.get(&app.url(&confirm_href)).await;
    assert_eq!(confirm.status(), StatusCode::OK);
    let confirm = confirm.text().await.unwrap();
    assert!(confirm.contains("Revoke share link /s/"), "{confirm}");
    assert!(confirm.contains("(30d, SOL, created "), "{confirm}");
    assert!(confirm.contains(&format!("value=\"{id}\"")), "{confirm}");
    assert_eq!(live(&app).await, 1, "asking revokes nothing");

    let refused = browser
        .post_form(
            &app.url(&format!("/wallets/{WALLET}/share/revoke")),
            &[("id", &id)],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(live(&app).await, 1);
    // Posted to another watched wallet's page, the id is not found there.
    let other = server::solana::WalletAddress::parse(
        &bs58::encode(rand::random::<[u8; 32]>()).into_string(),
    )
    .unwrap();
    let other_page = format!("/wallets/{other}/share/revoke");
    server::accounts::watchlist::add_wallet(app.state.store(), NOW_MS, &account, other, "b")
        .await
        .unwrap();
    let elsewhere = browser
        .post_form(&app.url(&other_page), &[("csrf", &csrf), ("id", &id)])
        .await;
    assert_eq!(elsewhere.status(), StatusCode::NOT_FOUND);
    assert_eq!(live(&app).await, 1, "another wallet's link is left alone");
    let revoked = browser
        .post_form(
            &app.url(&format!("/wallets/{WALLET}/share/revoke")),
            &[("csrf", &csrf), ("id", &id)],
        )
        .await;
    assert_eq!(revoked.status(), StatusCode::SEE_OTHER);
    assert_eq!(live(&app).await, 0);

    // A wallet the account does not watch has no report view.
    let other = browser
        .get(&app.url("/wallets/11111111111111111111111111111112"))
        .await;
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_report_view_s_tax_form_feeds_a_range_and_method_to_the_download() {
    use crate::portal::{Browser, sign_in};
    let (app, _clock, _s, _p) = scanned(|_| {}).await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let wallet = server::solana::WalletAddress::parse(WALLET).unwrap();
    server::accounts::watchlist::add_wallet(app.state.store(), NOW_MS, &account, wallet, "main")
        .await
        .unwrap();
    let html = browser
        .get(&app.url(&format!("/wallets/{WALLET}")))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        html.contains(&format!(
            "<form method=\"get\" action=\"/wallets/{WALLET}/report\" id=\"tax-download\""
        )),
        "{html}"
    );
    for field in [
        "name=\"from\"",
        "name=\"to\"",
        "name=\"method\"",
        "name=\"format\"",
        // Form 8949's dust threshold, shown with its default.
        "name=\"dust_threshold\" min=\"0\" step=\"0.01\" value=\"1.00\"",
    ] {
        assert!(html.contains(field), "{field}");
    }
    for method in ["fifo", "lifo", "hifo", "average"] {
        assert!(html.contains(&format!("value=\"{method}\"")), "{method}");
    }
    // What the form sends with the dates left empty, and with a tax year.
    for query in [
        "from=&to=&method=lifo&format=json",
        "from=2021-01-01&to=2021-12-31&method=hifo&format=csv",
        // The form sends the threshold with every format; only the 8949 uses it.
        "from=&to=&method=fifo&format=pdf&dust_threshold=1.00",
        "from=2021-01-01&to=2021-12-31&method=fifo&format=8949&dust_threshold=0",
    ] {
        let answer = browser
            .get(&app.url(&format!("/wallets/{WALLET}/report?{query}")))
            .await;
        assert_eq!(answer.status(), StatusCode::OK, "{query}");
    }
    let json: Value = browser
        .get(&app.url(&format!(
            "/wallets/{WALLET}/report?from=&to=&method=average&format=json"
        )))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(json["meta"]["method"], "average", "{json}");
    app.stop().await;
}
