//! The portal over HTTP: cookie sessions (attributes, a new id at sign-in,
//! sign-out, idle and absolute expiry on the service clock), CSRF on every
//! form, the sign-in JSON API's login-CSRF guard, Sign-In With Solana with
//! a real ed25519 key, Google against the OIDC stand-in, linking, and the
//! Keys and Wallets pages. A small cookie-keeping client stands in for the
//! browser so every Set-Cookie attribute can be read.

use std::{collections::HashMap, sync::Arc};

use ed25519_dalek::{Signer, SigningKey};
use reqwest::{StatusCode, header};
use serde_json::{Value, json};
use server::{
    accounts::{self, AccountId},
    clock::ManualClock,
};

use crate::helpers::{Options, TestApp, relaxed_limits, spawn_app, spawn_with};
use crate::oidc_standin;

/// A browser's cookie jar over a client that does not follow redirects.
#[derive(Clone)]
pub(crate) struct Browser {
    client: reqwest::Client,
    jar: HashMap<String, String>,
    /// Every Set-Cookie line seen, newest last.
    set_cookies: Vec<String>,
}

impl Browser {
    pub(crate) fn new() -> Self {
        Self {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            jar: HashMap::new(),
            set_cookies: Vec::new(),
        }
    }

    /// The cookies, as a request of its own would send them.
    pub(crate) fn cookie_header_pub(&self) -> String {
        self.cookie_header()
    }

    fn cookie_header(&self) -> String {
        self.jar
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub(crate) fn session(&self) -> Option<String> {
        self.jar.get("ledger_session").cloned()
    }

    fn keep(&mut self, response: &reqwest::Response) {
        for line in response.headers().get_all(header::SET_COOKIE) {
            let line = line.to_str().unwrap().to_owned();
            let pair = line.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            let removed = line.to_ascii_lowercase().contains("max-age=0") || value.is_empty();
            if removed {
                self.jar.remove(name);
            } else {
                self.jar.insert(name.to_owned(), value.to_owned());
            }
            self.set_cookies.push(line);
        }
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> reqwest::Response {
        let request = if self.jar.is_empty() {
            request
        } else {
            request.header(header::COOKIE, self.cookie_header())
        };
        let response = request.send().await.unwrap();
        self.keep(&response);
        response
    }

    pub(crate) async fn get(&mut self, url: &str) -> reqwest::Response {
        let request = self.client.get(url);
        self.send(request).await
    }

    /// A GET with an `Accept-Language` header, as a browser in `language`
    /// sends it.
    pub(crate) async fn get_in(&mut self, url: &str, language: &str) -> reqwest::Response {
        let request = self
            .client
            .get(url)
            .header(header::ACCEPT_LANGUAGE, language);
        self.send(request).await
    }

    pub(crate) async fn post_form(
        &mut self,
        url: &str,
        form: &[(&str, &str)],
    ) -> reqwest::Response {
        let body = serde_urlencoded::to_string(form).unwrap();
        let request = self
            .client
            .post(url)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        self.send(request).await
    }

    async fn post_json(&mut self, url: &str, body: &Value) -> reqwest::Response {
        let request = self.client.post(url).json(body);
        self.send(request).await
    }

    /// The page's CSRF token (the hidden `csrf` field of its forms).
    pub(crate) async fn csrf(&mut self, app: &TestApp) -> String {
        let html = self.get(&app.url("/keys")).await.text().await.unwrap();
        hidden_csrf(&html).expect("a signed-in page carries a CSRF token")
    }
}

/// The CSRF token of a page's forms.
pub(crate) fn hidden_csrf_of(html: &str) -> String {
    hidden_csrf(html).expect("a signed-in page carries a CSRF token")
}

fn hidden_csrf(html: &str) -> Option<String> {
    let at = html.find("name=\"csrf\" value=\"")?;
    let rest = &html[at + "name=\"csrf\" value=\"".len()..];
    Some(rest[..rest.find('"')?].to_owned())
}

/// The text of a page's `<title>`, which must hold no markup: leptos_meta
/// writes it unescaped, so only fixed titles are safe.
pub(crate) fn title_of(html: &str) -> &str {
    let start = html.find("<title>").expect("a page has a title") + "<title>".len();
    let end = start + html[start..].find("</title>").expect("a closed title");
    &html[start..end]
}

/// What the store keeps of `browser`'s session (its `portal_sessions`
/// row's data), found as the service finds it: by the id's SHA-256.
pub(crate) async fn session_row(app: &TestApp, browser: &Browser) -> String {
    use sha2::Digest;
    let id = browser.session().expect("a session cookie");
    let hash: String = sha2::Sha256::digest(id.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    app.state
        .store()
        .load_portal_session(&hash, 0, i64::MIN)
        .await
        .unwrap()
        .expect("the session's row")
}

fn wallet() -> (SigningKey, String) {
    let key = SigningKey::from_bytes(&rand::random::<[u8; 32]>());
    let address = bs58::encode(key.verifying_key().to_bytes()).into_string();
    (key, address)
}

/// Sign in with a fresh (or the given) wallet: the account id.
async fn sign_in_with(browser: &mut Browser, app: &TestApp, key: &SigningKey) -> Value {
    let address = bs58::encode(key.verifying_key().to_bytes()).into_string();
    let challenge = browser
        .post_json(
            &app.url("/auth/solana/challenge"),
            &json!({ "address": address }),
        )
        .await;
    assert_eq!(challenge.status(), StatusCode::OK);
    let challenge: Value = challenge.json().await.unwrap();
    let message = challenge["message"].as_str().unwrap();
    let signature = bs58::encode(key.sign(message.as_bytes()).to_bytes()).into_string();
    let verified = browser
        .post_json(
            &app.url("/auth/solana/verify"),
            &json!({ "message": message, "signature": signature }),
        )
        .await;
    assert_eq!(verified.status(), StatusCode::OK);
    verified.json().await.unwrap()
}

pub(crate) async fn sign_in(browser: &mut Browser, app: &TestApp) -> AccountId {
    let (key, _) = wallet();
    let body = sign_in_with(browser, app, &key).await;
    AccountId::parse(body["account_id"].as_str().unwrap()).unwrap()
}

async fn tokens(app: &TestApp, account: &AccountId) -> usize {
    accounts::list_tokens(app.state.store(), account)
        .await
        .unwrap()
        .len()
}

fn mint_form(csrf: &str) -> Vec<(&str, &str)> {
    vec![
        ("csrf", csrf),
        ("kind", "mcp"),
        ("scope_read", "on"),
        ("label", "laptop"),
    ]
}

// ------------------------------------------------------------ caching

#[tokio::test]
async fn a_signed_in_home_page_is_never_stored_by_a_cache() {
    // The home and tools pages name who is signed in: a shared cache must
    // not keep one person's page for the next visitor.
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let anonymous = browser.get(&app.url("/")).await;
    assert_eq!(anonymous.status(), 200);
    sign_in(&mut browser, &app).await;
    for page in ["/", "/tools"] {
        let response = browser.get(&app.url(page)).await;
        assert_eq!(response.status(), 200, "{page}");
        assert_eq!(
            response
                .headers()
                .get("cache-control")
                .and_then(|v| v.to_str().ok()),
            Some("no-store"),
            "{page} signed in"
        );
    }
}

// ------------------------------------------------------------ cookies

#[tokio::test]
async fn the_session_cookie_is_httponly_lax_and_not_secure_over_http() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let line = browser
        .set_cookies
        .iter()
        .find(|l| l.starts_with("ledger_session="))
        .expect("sign-in sets the session cookie")
        .to_ascii_lowercase();
    assert!(line.contains("httponly"), "{line}");
    assert!(line.contains("samesite=lax"), "{line}");
    assert!(line.contains("path=/"), "{line}");
    assert!(
        line.contains(&format!("max-age={}", 7 * 24 * 3600)),
        "{line}"
    );
    assert!(!line.contains("secure"), "{line}");
    app.stop().await;
}

#[tokio::test]
async fn the_session_cookie_is_secure_when_the_public_url_is_https() {
    let app = spawn_with(Options {
        configure: Box::new(|config| {
            relaxed_limits(config);
            config.public_url = Some("https://ledger.example".to_owned());
        }),
        ..Options::default()
    })
    .await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let line = browser
        .set_cookies
        .iter()
        .find(|l| l.starts_with("ledger_session="))
        .unwrap()
        .to_ascii_lowercase();
    assert!(line.contains("; secure"), "{line}");
    assert!(
        line.contains("httponly") && line.contains("samesite=lax"),
        "{line}"
    );
    app.stop().await;
}

#[tokio::test]
async fn signed_out_visitors_of_account_pages_are_sent_to_signin_and_get_no_session() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    // Each is sent with `next` naming it, so the sign-in returns there.
    for (page, next) in [
        ("/keys", "%2Fkeys"),
        ("/wallets", "%2Fwallets"),
        ("/payments", "%2Fpayments"),
        ("/credits", "%2Fcredits"),
        (
            "/wallets/7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU?range=1y",
            "%2Fwallets%2F7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU%3Frange%3D1y",
        ),
    ] {
        let response = browser.get(&app.url(page)).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{page}");
        assert_eq!(
            response.headers()["location"],
            format!("/signin?next={next}").as_str(),
            "{page}"
        );
    }
    let signin = browser.get(&app.url("/signin")).await;
    assert_eq!(signin.status(), StatusCode::OK);
    let html = signin.text().await.unwrap();
    assert!(html.contains("Sign in with a Solana wallet"), "{html}");
    assert!(
        !html.contains("Sign in with Google"),
        "Google is not configured"
    );
    assert!(browser.session().is_none(), "no session for a visitor");
    app.stop().await;
}

#[tokio::test]
async fn sign_in_draws_a_new_session_id_and_the_old_one_is_dead() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let (key, _) = wallet();
    sign_in_with(&mut browser, &app, &key).await;
    let first = browser.session().unwrap();
    // Signing in again (the same wallet) in the same browser.
    sign_in_with(&mut browser, &app, &key).await;
    let second = browser.session().unwrap();
    assert_ne!(first, second);
    let mut old = Browser::new();
    old.jar.insert("ledger_session".to_owned(), first);
    let response = old.get(&app.url("/keys")).await;
    assert_eq!(
        response.status(),
        StatusCode::SEE_OTHER,
        "the old id signs nobody in"
    );
    assert_eq!(
        browser.get(&app.url("/keys")).await.status(),
        StatusCode::OK
    );
    app.stop().await;
}

#[tokio::test]
async fn a_planted_session_id_is_replaced_at_sign_in() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    browser.jar.insert(
        "ledger_session".to_owned(),
        "AAAAAAAAAAAAAAAAAAAAAA".to_owned(),
    );
    sign_in(&mut browser, &app).await;
    assert_ne!(browser.session().unwrap(), "AAAAAAAAAAAAAAAAAAAAAA");
    app.stop().await;
}

#[tokio::test]
async fn sign_out_ends_the_session() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let cookie = browser.session().unwrap();
    let csrf = browser.csrf(&app).await;
    let response = browser
        .post_form(&app.url("/auth/signout"), &[("csrf", &csrf)])
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert!(browser.session().is_none(), "the cookie is removed");
    let mut replay = Browser::new();
    replay.jar.insert("ledger_session".to_owned(), cookie);
    assert_eq!(
        replay.get(&app.url("/keys")).await.status(),
        StatusCode::SEE_OTHER,
        "the ended session's id signs nobody in"
    );
    app.stop().await;
}

#[tokio::test]
async fn sign_out_without_the_csrf_token_is_refused_and_the_session_lives() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let response = browser
        .post_form(&app.url("/auth/signout"), &[("csrf", "nope")])
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        browser.get(&app.url("/keys")).await.status(),
        StatusCode::OK
    );
    app.stop().await;
}

async fn spawn_with_manual_clock(clock: ManualClock) -> TestApp {
    spawn_with(Options {
        clock: Arc::new(clock),
        configure: Box::new(|config| {
            relaxed_limits(config);
            config.session.idle_secs = 3600;
            config.session.absolute_secs = 4 * 3600;
        }),
    })
    .await
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[tokio::test]
async fn a_session_idle_past_idle_secs_is_over() {
    let clock = ManualClock::new(now_ms());
    let app = spawn_with_manual_clock(clock.clone()).await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    clock.advance_ms(3600 * 1000 - 1000);
    assert_eq!(
        browser.get(&app.url("/keys")).await.status(),
        StatusCode::OK,
        "used within the idle window"
    );
    clock.advance_ms(3600 * 1000 - 1000);
    assert_eq!(
        browser.get(&app.url("/keys")).await.status(),
        StatusCode::OK,
        "each request moves the idle deadline"
    );
    clock.advance_ms(3600 * 1000 + 1000);
    let response = browser.get(&app.url("/keys")).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "idle too long");
    assert_eq!(response.headers()["location"], "/signin?next=%2Fkeys");
    app.stop().await;
}

#[tokio::test]
async fn a_session_past_absolute_secs_is_over_however_busy() {
    let clock = ManualClock::new(now_ms());
    let app = spawn_with_manual_clock(clock.clone()).await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    for _ in 0..7 {
        clock.advance_ms(1800 * 1000);
        assert_eq!(
            browser.get(&app.url("/keys")).await.status(),
            StatusCode::OK
        );
    }
    clock.advance_ms(1800 * 1000 + 1000);
    assert_eq!(
        browser.get(&app.url("/keys")).await.status(),
        StatusCode::SEE_OTHER,
        "four hours after sign-in"
    );
    // The maintenance pass deletes the row.
    let done = server::worker::maintenance_pass(app.state.services())
        .await
        .unwrap();
    assert!(done.sessions >= 1, "{done:?}");
    app.stop().await;
}

// ------------------------------------------------------------ CSRF

#[tokio::test]
async fn a_form_without_the_csrf_token_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let form: Vec<_> = mint_form("").into_iter().skip(1).collect();
    let response = browser.post_form(&app.url("/keys"), &form).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let html = response.text().await.unwrap();
    assert!(html.contains("Nothing was changed"), "{html}");
    assert!(!html.contains("lm_"), "no token minted");
    assert_eq!(tokens(&app, &account).await, 0);
    app.stop().await;
}

#[tokio::test]
async fn a_form_with_a_wrong_csrf_token_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let response = browser
        .post_form(&app.url("/keys"), &mint_form("not-the-token"))
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(tokens(&app, &account).await, 0);
    let (_, address) = wallet();
    let response = browser
        .post_form(
            &app.url("/wallets"),
            &[("csrf", "not-the-token"), ("address", &address)],
        )
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        accounts::list_wallets(app.state.store(), &account)
            .await
            .unwrap()
            .is_empty()
    );
    app.stop().await;
}

#[tokio::test]
async fn a_form_with_another_sessions_csrf_token_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let mut mallory = Browser::new();
    sign_in(&mut mallory, &app).await;
    let mallorys_token = mallory.csrf(&app).await;
    let mut alice = Browser::new();
    let account = sign_in(&mut alice, &app).await;
    let response = alice
        .post_form(&app.url("/keys"), &mint_form(&mallorys_token))
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(tokens(&app, &account).await, 0);
    app.stop().await;
}

#[tokio::test]
async fn a_form_without_a_session_is_refused() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let response = browser.post_form(&app.url("/keys"), &mint_form("x")).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    app.stop().await;
}

// ------------------------------------------------------------ sign-in API

#[tokio::test]
async fn the_sign_in_api_refuses_cross_site_browser_requests() {
    let app = spawn_app().await;
    let (_, address) = wallet();
    for (name, value) in [
        ("sec-fetch-site", "cross-site"),
        ("origin", "https://evil.example"),
    ] {
        for path in ["/auth/solana/challenge", "/auth/solana/verify"] {
            let response = app
                .client
                .post(app.url(path))
                .header(name, value)
                .json(&json!({ "address": address }))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path} {name}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["code"], "forbidden");
        }
    }
    app.stop().await;
}

#[tokio::test]
async fn the_sign_in_api_refuses_bodies_that_are_not_json() {
    let app = spawn_app().await;
    let (_, address) = wallet();
    for content_type in ["text/plain", "application/x-www-form-urlencoded", ""] {
        let mut request = app
            .client
            .post(app.url("/auth/solana/challenge"))
            .body(format!("{{\"address\":\"{address}\"}}"));
        if !content_type.is_empty() {
            request = request.header(header::CONTENT_TYPE, content_type);
        }
        let response = request.send().await.unwrap();
        assert_eq!(
            response.status(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type:?}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn siws_signs_in_end_to_end_and_creates_the_account_once() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let (key, address) = wallet();
    let first = sign_in_with(&mut browser, &app, &key).await;
    assert_eq!(first["created"], true);
    let account = first["account_id"].as_str().unwrap().to_owned();
    assert!(account.starts_with("acct_"));
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(html.contains(">Sign out<"), "signed-in nav");
    assert!(html.contains(">Keys<") && html.contains(">Wallets<") && html.contains(">Payments<"));
    let mut other = Browser::new();
    let again = sign_in_with(&mut other, &app, &key).await;
    assert_eq!(again["created"], false);
    assert_eq!(again["account_id"], account.as_str());
    let signin = browser.get(&app.url("/signin")).await.text().await.unwrap();
    assert!(
        signin.contains(&format!("Solana wallet {address}")),
        "{signin}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_bad_siws_signature_is_refused_in_our_json_error_body() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let (key, address) = wallet();
    let (other, _) = wallet();
    let challenge: Value = browser
        .post_json(
            &app.url("/auth/solana/challenge"),
            &json!({ "address": address }),
        )
        .await
        .json()
        .await
        .unwrap();
    let message = challenge["message"].as_str().unwrap();
    let signature = bs58::encode(other.sign(message.as_bytes()).to_bytes()).into_string();
    let response = browser
        .post_json(
            &app.url("/auth/solana/verify"),
            &json!({ "message": message, "signature": signature }),
        )
        .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "unauthenticated");
    assert!(browser.session().is_none());
    let _ = key;
    app.stop().await;
}

// ------------------------------------------------------------ Google

async fn spawn_with_google() -> (TestApp, oidc_standin::Standin) {
    let standin = oidc_standin::start(oidc_standin::Options::default()).await;
    let issuer = standin.issuer.clone();
    let app = spawn_with(Options {
        configure: Box::new(move |config| {
            relaxed_limits(config);
            config.google.issuer = issuer;
            config.google.client_id = Some(oidc_standin::CLIENT_ID.to_owned());
            config.google.client_secret = Some(oidc_standin::CLIENT_SECRET.to_owned());
        }),
        ..Options::default()
    })
    .await;
    (app, standin)
}

/// `/auth/google/start`, then the provider's authorize step: the callback
/// URL the provider sends the browser to.
async fn google_to_callback(browser: &mut Browser, app: &TestApp) -> String {
    google_to_callback_from(browser, app, "/auth/google/start").await
}

/// The same, beginning at `start` (which may carry a `next`).
async fn google_to_callback_from(browser: &mut Browser, app: &TestApp, start: &str) -> String {
    let start = browser.get(&app.url(start)).await;
    assert_eq!(start.status(), StatusCode::FOUND);
    let authorize = start.headers()["location"].to_str().unwrap().to_owned();
    let line = browser
        .set_cookies
        .iter()
        .rev()
        .find(|l| l.starts_with("ledger_google_state="))
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        line.contains("httponly") && line.contains("samesite=lax"),
        "{line}"
    );
    let provider = browser.get(&authorize).await;
    assert_eq!(provider.status(), StatusCode::FOUND);
    let callback = provider.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        callback.starts_with(&app.url("/auth/google/callback")),
        "{callback}"
    );
    callback
}

#[tokio::test]
async fn a_google_sign_in_returns_to_the_page_it_was_sent_from() {
    let (app, _standin) = spawn_with_google().await;
    let mut browser = Browser::new();
    // A signed-out visit to a report is sent to sign in with `next`.
    let page = "/wallets/7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU?range=1y";
    let sent = browser.get(&app.url(page)).await;
    let signin = sent.headers()["location"].to_str().unwrap().to_owned();
    let html = browser.get(&app.url(&signin)).await.text().await.unwrap();
    let start = "/auth/google/start?next=%2Fwallets%2F7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU%3Frange%3D1y";
    assert!(html.contains(&start.replace('&', "&amp;")), "{html}");
    let callback = google_to_callback_from(&mut browser, &app, start).await;
    let done = browser.get(&callback).await;
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    assert_eq!(done.headers()["location"], page);
    app.stop().await;
}

#[tokio::test]
async fn a_google_sign_in_refuses_every_next_that_leaves_the_origin() {
    let (app, _standin) = spawn_with_google().await;
    // One per way out (each also refused alone in `http::safe_next`'s tests).
    for bad in [
        "//evil.example",
        "/\\evil.example",
        "https://evil.example",
        "javascript:alert(1)",
        "/%2F%2Fevil.example",
        "/%5Cevil.example",
        "/%252F%252Fevil.example",
        "/%09/evil.example",
        "/\t/evil.example",
    ] {
        let mut browser = Browser::new();
        let encoded: String = url::form_urlencoded::byte_serialize(bad.as_bytes()).collect();
        // The sign-in page does not carry it to either method.
        let html = browser
            .get(&app.url(&format!("/signin?next={encoded}")))
            .await
            .text()
            .await
            .unwrap();
        assert!(html.contains("data-next=\"\""), "{bad}: {html}");
        assert!(html.contains("href=\"/auth/google/start\""), "{bad}");
        // And a flow begun with it lands on the wallets.
        let start = format!("/auth/google/start?next={encoded}");
        let callback = google_to_callback_from(&mut browser, &app, &start).await;
        let done = browser.get(&callback).await;
        assert_eq!(done.status(), StatusCode::SEE_OTHER, "{bad}");
        assert_eq!(done.headers()["location"], "/wallets", "{bad}");
    }
    app.stop().await;
}

#[tokio::test]
async fn google_signs_in_end_to_end_against_the_standin() {
    let (app, _standin) = spawn_with_google().await;
    let mut browser = Browser::new();
    let signin = browser.get(&app.url("/signin")).await.text().await.unwrap();
    assert!(signin.contains("Sign in with Google"));
    let callback = google_to_callback(&mut browser, &app).await;
    let done = browser.get(&callback).await;
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        done.headers()["location"],
        "/wallets",
        "lands on the wallets"
    );
    assert!(browser.session().is_some());
    assert!(
        !browser.jar.contains_key("ledger_google_state"),
        "state cookie cleared"
    );
    let signin = browser.get(&app.url("/signin")).await.text().await.unwrap();
    assert!(
        signin.contains(&format!("Google account {}", oidc_standin::EMAIL)),
        "{signin}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_google_callback_without_this_browsers_state_cookie_is_refused() {
    let (app, _standin) = spawn_with_google().await;
    let mut victim = Browser::new();
    let mut attacker = Browser::new();
    // The attacker begins a flow and hands the callback link to the victim.
    let callback = google_to_callback(&mut attacker, &app).await;
    let response = victim.get(&callback).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(victim.session().is_none(), "nobody signed in");
    // A victim with a state cookie of their own flow is refused too.
    let _own = google_to_callback(&mut victim, &app).await;
    let response = victim.get(&callback).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(victim.session().is_none());
    app.stop().await;
}

#[tokio::test]
async fn google_routes_answer_404_when_google_is_not_configured() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    for path in ["/auth/google/start", "/auth/google/callback?code=x&state=y"] {
        assert_eq!(
            browser.get(&app.url(path)).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn signing_in_with_google_while_signed_in_links_it_to_the_account() {
    let (app, _standin) = spawn_with_google().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let before = browser.session().unwrap();
    let callback = google_to_callback(&mut browser, &app).await;
    assert_eq!(browser.get(&callback).await.status(), StatusCode::SEE_OTHER);
    assert_ne!(browser.session().unwrap(), before, "linking draws a new id");
    let identities = accounts::identities(app.state.store(), &account)
        .await
        .unwrap();
    assert_eq!(identities.len(), 2);
    // Google now signs in to the same account, in a fresh browser.
    let mut fresh = Browser::new();
    let callback = google_to_callback(&mut fresh, &app).await;
    assert_eq!(fresh.get(&callback).await.status(), StatusCode::SEE_OTHER);
    let html = fresh.get(&app.url("/signin")).await.text().await.unwrap();
    assert!(html.contains("Solana wallet"), "same account: {html}");
    app.stop().await;
}

#[tokio::test]
async fn linking_an_identity_of_another_account_is_refused_with_a_clear_message() {
    let (app, _standin) = spawn_with_google().await;
    let mut first = Browser::new();
    let callback = google_to_callback(&mut first, &app).await;
    first.get(&callback).await;
    let mut second = Browser::new();
    let account = sign_in(&mut second, &app).await;
    let callback = google_to_callback(&mut second, &app).await;
    let response = second.get(&callback).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let html = response.text().await.unwrap();
    assert!(html.contains("already linked to another account"), "{html}");
    let identities = accounts::identities(app.state.store(), &account)
        .await
        .unwrap();
    assert_eq!(identities.len(), 1, "nothing linked");
    app.stop().await;
}

// ------------------------------------------------------------ surfaces

#[tokio::test]
async fn a_session_cookie_never_authenticates_v1_or_mcp() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let ping = browser.get(&app.url("/v1/ping")).await;
    let body = ping.text().await.unwrap();
    assert!(!body.contains(account.as_str()), "{body}");
    let mcp = app
        .client
        .post(app.url("/mcp"))
        .header(header::COOKIE, browser.cookie_header())
        .header(header::ACCEPT, crate::helpers::ACCEPT_BOTH)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}}))
        .send()
        .await
        .unwrap();
    let body = mcp.text().await.unwrap();
    assert!(!body.contains(account.as_str()), "{body}");
    app.stop().await;
}

// ------------------------------------------------------------ pages

#[tokio::test]
async fn a_minted_token_is_shown_once_and_absent_from_the_list_page() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let csrf = browser.csrf(&app).await;
    let posted = browser
        .post_form(&app.url("/keys"), &mint_form(&csrf))
        .await;
    // Post/redirect/get: the POST answers 303 to a URL without the secret.
    assert_eq!(posted.status(), StatusCode::SEE_OTHER);
    let location = posted.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(location, "/keys");
    assert!(!posted.text().await.unwrap().contains("lm_"));
    let response = browser.get(&app.url(&location)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let html = response.text().await.unwrap();
    let at = html
        .find("<pre><code>lm_")
        .expect("the plaintext is on the response page")
        + "<pre><code>".len();
    let plaintext: String = html[at..]
        .chars()
        .take_while(char::is_ascii_alphanumeric_or_underscore)
        .collect();
    assert!(plaintext.len() > 40, "{plaintext}");
    assert!(html.contains(&format!(
        "claude mcp add --transport http ledger {}/mcp",
        app.base
    )));
    assert!(html.contains(&format!("Authorization: Bearer {plaintext}")));
    assert!(html.contains("mcp-remote"));
    // The snippets are the guide's, filled in with this server and this
    // token; the files that may be committed read it from the environment.
    let text = crate::pages::unescape(&html);
    let mcp = format!("{}/mcp", app.base);
    for snippet in app::snippets::token_snippets(&mcp, &plaintext) {
        assert!(
            text.contains(&format!("<pre><code>{}</code></pre>", snippet.code)),
            "{} is on the Keys page, whole:\n{}",
            snippet.id,
            snippet.code
        );
    }
    assert!(text.contains(&format!("\"LEDGER_AUTH\": \"Bearer {plaintext}\"")));
    // Of the code blocks shown, only the token's own, Claude Code's line
    // and Claude Desktop's env carry the plaintext.
    let blocks: Vec<&str> = text
        .split("<pre><code>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</code></pre>").map(|(code, _)| code))
        .filter(|code| code.contains(&plaintext))
        .collect();
    assert_eq!(blocks.len(), 3, "{blocks:#?}");
    assert_eq!(blocks[0], plaintext);
    assert!(blocks[1].starts_with("claude mcp add"), "{}", blocks[1]);
    assert!(
        blocks[2].contains("\"LEDGER_AUTH\": \"Bearer "),
        "{}",
        blocks[2]
    );
    assert!(text.contains(&app::snippets::which_url(&app.base)));
    let resolved = accounts::resolve(app.state.store(), now_ms(), &plaintext)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resolved.account_id, account);
    // A reload of the page the 303 led to shows the list, without the
    // secret, and mints nothing.
    let list = browser.get(&app.url(&location)).await.text().await.unwrap();
    assert!(!list.contains(&plaintext), "never shown again");
    assert!(list.contains(&plaintext[..10]), "the prefix is listed");
    assert_eq!(tokens(&app, &account).await, 1, "one mint, one token");
    assert!(list.contains("laptop"));
    assert!(list.contains("OAuth clients"));
    app.stop().await;
}

trait TokenChar {
    fn is_ascii_alphanumeric_or_underscore(&self) -> bool;
}

impl TokenChar for char {
    fn is_ascii_alphanumeric_or_underscore(&self) -> bool {
        self.is_ascii_alphanumeric() || *self == '_'
    }
}

#[tokio::test]
async fn revoking_from_the_keys_page_kills_the_token() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let minted = accounts::mint(
        app.state.store(),
        now_ms(),
        &account,
        accounts::TokenKind::Mcp,
        accounts::Scopes::parse("read").unwrap(),
        "ci",
    )
    .await
    .unwrap();
    let csrf = browser.csrf(&app).await;
    // The list links to a confirm page naming the token; asking changes
    // nothing.
    let keys = browser.get(&app.url("/keys")).await.text().await.unwrap();
    let confirm_href = format!("/keys/revoke?token_id={}", minted.token_id.as_str());
    assert!(keys.contains(&format!("href=\"{confirm_href}\"")), "{keys}");
    assert!(keys.contains(">Revoke ci</a>"));
    let confirm = browser.get(&app.url(&confirm_href)).await;
    assert_eq!(confirm.status(), StatusCode::OK);
    let confirm = crate::pages::unescape(&confirm.text().await.unwrap());
    let day = server::values::format::date(now_ms());
    assert!(
        confirm.contains(&format!("Revoke MCP token `ci` (created {day})?")),
        "{confirm}"
    );
    assert!(confirm.contains(">Revoke ci</button>"), "{confirm}");
    assert!(confirm.contains("name=\"token_id\""));
    assert_eq!(tokens(&app, &account).await, 1, "asking revokes nothing");
    let response = browser
        .post_form(
            &app.url("/keys/revoke"),
            &[("csrf", &csrf), ("token_id", minted.token_id.as_str())],
        )
        .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()["location"], "/keys");
    assert_eq!(tokens(&app, &account).await, 0);
    let shown = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(
        crate::pages::unescape(&shown).contains("Revoked `ci`: it no longer works."),
        "what happened is said once"
    );
    let again = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(!again.contains("Revoked `ci`"), "and not on a reload");
    assert!(
        accounts::resolve(app.state.store(), now_ms(), &minted.plaintext)
            .await
            .unwrap()
            .is_none()
    );
    app.stop().await;
}

#[tokio::test]
async fn a_mint_without_a_scope_answers_the_page_with_the_error_and_mints_nothing() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let csrf = browser.csrf(&app).await;
    let response = browser
        .post_form(
            &app.url("/keys"),
            &[("csrf", &csrf), ("kind", "mcp"), ("label", "x")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let html = response.text().await.unwrap();
    assert!(html.contains("choose at least one scope"), "{html}");
    assert_eq!(tokens(&app, &account).await, 0);
    app.stop().await;
}

#[tokio::test]
async fn wallets_are_added_relabelled_and_removed_from_the_page() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let csrf = browser.csrf(&app).await;
    let (_, address) = wallet();
    let added = browser
        .post_form(
            &app.url("/wallets"),
            &[("csrf", &csrf), ("address", &address), ("label", "cold")],
        )
        .await;
    assert_eq!(added.status(), StatusCode::SEE_OTHER);
    let html = browser
        .get(&app.url("/wallets"))
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains(&address) && html.contains("cold"), "{html}");
    assert!(html.contains("never scanned"));
    assert!(html.contains(&format!("/v1/wallets/{address}/ledger")));
    let relabelled = browser
        .post_form(
            &app.url("/wallets/relabel"),
            &[("csrf", &csrf), ("address", &address), ("label", "warm")],
        )
        .await;
    assert_eq!(relabelled.status(), StatusCode::SEE_OTHER);
    let list = accounts::list_wallets(app.state.store(), &account)
        .await
        .unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].label, "warm");
    let short = format!("{}…{}", &address[..4], &address[address.len() - 4..]);
    let shown = browser
        .get(&app.url("/wallets"))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        crate::pages::unescape(&shown).contains(&format!("Relabelled wallet `warm` ({short}).")),
        "the 303 led to what happened"
    );
    assert!(shown.contains(&format!("href=\"/wallets/remove?address={address}\"")));
    assert!(shown.contains(">Remove warm</a>"));
    let confirm = browser
        .get(&app.url(&format!("/wallets/remove?address={address}")))
        .await
        .text()
        .await
        .unwrap();
    let confirm = crate::pages::unescape(&confirm);
    assert!(
        confirm.contains(&format!("Remove wallet `warm` ({short}) (added ")),
        "{confirm}"
    );
    assert!(confirm.contains(">Remove warm</button>"), "{confirm}");
    assert_eq!(
        accounts::list_wallets(app.state.store(), &account)
            .await
            .unwrap()
            .len(),
        1,
        "asking removes nothing"
    );
    let removed = browser
        .post_form(
            &app.url("/wallets/remove"),
            &[("csrf", &csrf), ("address", &address)],
        )
        .await;
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    assert!(
        accounts::list_wallets(app.state.store(), &account)
            .await
            .unwrap()
            .is_empty()
    );
    app.stop().await;
}

#[tokio::test]
async fn a_bad_wallet_address_answers_the_page_with_the_error_and_adds_nothing() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let csrf = browser.csrf(&app).await;
    let response = browser
        .post_form(
            &app.url("/wallets"),
            &[
                ("csrf", &csrf),
                ("address", "not-an-address"),
                ("label", "x"),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let html = response.text().await.unwrap();
    assert!(html.contains("id=\"address-error\""), "{html}");
    assert!(
        html.contains("value=\"not-an-address\""),
        "the form keeps its input"
    );
    let (_, address) = wallet();
    let long = "x".repeat(129);
    let response = browser
        .post_form(
            &app.url("/wallets"),
            &[("csrf", &csrf), ("address", &address), ("label", &long)],
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("id=\"label-error\"")
    );
    assert!(
        accounts::list_wallets(app.state.store(), &account)
            .await
            .unwrap()
            .is_empty()
    );
    app.stop().await;
}

#[tokio::test]
async fn the_payments_page_lists_the_accounts_payments() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let response = browser.get(&app.url("/payments")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.text().await.unwrap().contains("No payments yet."));
    app.stop().await;
}

// ------------------------------------------------- the flash and titles

/// The plaintext on a Keys page showing a minted token.
fn minted_plaintext(html: &str) -> Option<String> {
    let at = html.find("<pre><code>lm_")? + "<pre><code>".len();
    Some(
        html[at..]
            .chars()
            .take_while(char::is_ascii_alphanumeric_or_underscore)
            .collect(),
    )
}

#[tokio::test]
async fn a_token_minted_in_the_portal_never_rests_in_the_session_row_in_clear() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let csrf = browser.csrf(&app).await;
    let posted = browser
        .post_form(&app.url("/keys"), &mint_form(&csrf))
        .await;
    assert_eq!(posted.status(), StatusCode::SEE_OTHER);
    // The 303 not followed yet: the flash waits in the row, sealed.
    let waiting = session_row(&app, &browser).await;
    assert!(waiting.contains("\"flash\""), "{waiting}");
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    let plaintext = minted_plaintext(&html).expect("shown once");
    let secret_part = &plaintext[11..]; // what the display prefix does not show
    assert!(!waiting.contains(secret_part), "the plaintext is stored");
    assert!(!waiting.contains(&plaintext[3..]), "{waiting}");
    let after = session_row(&app, &browser).await;
    assert!(
        !after.contains(secret_part) && !after.contains("\"flash\""),
        "{after}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_flash_written_back_by_a_stale_request_is_not_shown_again() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let csrf = browser.csrf(&app).await;
    browser
        .post_form(&app.url("/keys"), &mint_form(&csrf))
        .await;
    let stale = session_row(&app, &browser).await;
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(minted_plaintext(&html).is_some());
    // A request that loaded the row before that GET saves it afterwards,
    // flash and all (tower-sessions writes the whole record back).
    use sha2::Digest;
    let id = browser.session().unwrap();
    let hash: String = sha2::Sha256::digest(id.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let now = app.state.now_ms();
    app.state
        .store()
        .save_portal_session(&hash, &stale, now, now + 3_600_000, i64::MIN)
        .await
        .unwrap();
    assert!(session_row(&app, &browser).await.contains("\"flash\""));
    let again = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(minted_plaintext(&again).is_none(), "shown once only");
    app.stop().await;
}

#[tokio::test]
async fn a_flash_not_taken_within_ten_minutes_is_dropped() {
    let clock = ManualClock::new(now_ms());
    let app = spawn_with_manual_clock(clock.clone()).await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let csrf = browser.csrf(&app).await;
    browser
        .post_form(&app.url("/keys"), &mint_form(&csrf))
        .await;
    clock.advance_ms(10 * 60 * 1000 + 1);
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(minted_plaintext(&html).is_none(), "expired unread");
    assert!(!session_row(&app, &browser).await.contains("\"flash\""));
    app.stop().await;
}

#[tokio::test]
async fn hostile_labels_never_reach_a_confirm_page_s_title() {
    let app = spawn_app().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let csrf = browser.csrf(&app).await;
    let token_label = "</title><b id=x>";
    let minted = browser
        .post_form(
            &app.url("/keys"),
            &[
                ("csrf", &csrf),
                ("kind", "mcp"),
                ("scope_read", "on"),
                ("label", token_label),
            ],
        )
        .await;
    assert_eq!(minted.status(), StatusCode::SEE_OTHER);
    let (_, address) = wallet();
    let wallet_label = "</title><meta http-equiv=refresh content=\"0;url=https://evil.example/\">";
    let added = browser
        .post_form(
            &app.url("/wallets"),
            &[
                ("csrf", &csrf),
                ("address", &address),
                ("label", wallet_label),
            ],
        )
        .await;
    assert_eq!(added.status(), StatusCode::SEE_OTHER);
    let token_id = accounts::list_tokens(app.state.store(), &account)
        .await
        .unwrap()[0]
        .token_id
        .as_str()
        .to_owned();
    for (page, title) in [
        (
            format!("/keys/revoke?token_id={token_id}"),
            "Ledger: revoke a token",
        ),
        (
            format!("/wallets/remove?address={address}"),
            "Ledger: remove a wallet",
        ),
    ] {
        let response = browser.get(&app.url(&page)).await;
        assert_eq!(response.status(), StatusCode::OK, "{page}");
        let csp = response.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(csp.contains("form-action 'self'"), "{csp}");
        let html = response.text().await.unwrap();
        assert_eq!(title_of(&html), title, "{page}");
        assert!(!html.contains("</title><b"), "{html}");
        assert!(!html.contains("<meta http-equiv"), "{html}");
        assert!(!html.contains("<b id=x>"), "{html}");
        // The names are still on the page, as text.
        assert!(
            html.contains("&lt;/title&gt;") || html.contains("&lt;/title>"),
            "{html}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn removing_a_wallet_not_on_the_list_says_not_found_and_changes_nothing() {
    let app = spawn_app().await;
    let mut alice = Browser::new();
    let alices = sign_in(&mut alice, &app).await;
    let alice_csrf = alice.csrf(&app).await;
    let (_, address) = wallet();
    alice
        .post_form(
            &app.url("/wallets"),
            &[("csrf", &alice_csrf), ("address", &address), ("label", "a")],
        )
        .await;
    alice
        .post_form(
            &app.url("/keys"),
            &[
                ("csrf", alice_csrf.as_str()),
                ("kind", "mcp"),
                ("scope_read", "on"),
                ("label", "alices-own"),
            ],
        )
        .await;
    let alices_token = accounts::list_tokens(app.state.store(), &alices)
        .await
        .unwrap()[0]
        .token_id
        .as_str()
        .to_owned();
    let mut bob = Browser::new();
    sign_in(&mut bob, &app).await;
    let bob_csrf = bob.csrf(&app).await;
    let removed = bob
        .post_form(
            &app.url("/wallets/remove"),
            &[("csrf", &bob_csrf), ("address", &address)],
        )
        .await;
    assert_eq!(removed.status(), StatusCode::NOT_FOUND);
    assert!(removed.headers().get(header::LOCATION).is_none());
    assert!(
        removed
            .text()
            .await
            .unwrap()
            .contains("this wallet is not on your list")
    );
    assert_eq!(
        accounts::list_wallets(app.state.store(), &alices)
            .await
            .unwrap()
            .len(),
        1,
        "Alice still watches it"
    );
    let page = bob.get(&app.url("/wallets")).await.text().await.unwrap();
    assert!(!page.contains("Removed wallet"), "{page}");
    // Nor does Bob's confirm page for Alice's token name it.
    let asked = bob
        .get(&app.url(&format!("/keys/revoke?token_id={alices_token}")))
        .await;
    assert_eq!(asked.status(), StatusCode::NOT_FOUND);
    assert!(!asked.text().await.unwrap().contains("alices-own"));
    assert_eq!(tokens(&app, &alices).await, 1);
    app.stop().await;
}

// ---- The scan flow -----------------------------------------------------

/// The scans suite's app (the RPC stand-in serving the recorded wallet),
/// the worker in process when `worker`.
async fn scan_app(worker: bool) -> (TestApp, crate::standin::StandIn) {
    use crate::scans::{WALLET, shared};
    let stand_in = crate::standin::start(shared(0, std::time::Duration::ZERO)).await;
    let url = stand_in.url.clone();
    let app = spawn_with(Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.solana.retry_base_ms = 1;
            c.solana.batch_size = 4;
            c.worker.in_process = worker;
            c.worker.poll_ms = 20;
        }),
        ..Options::default()
    })
    .await;
    let _ = WALLET;
    (app, stand_in)
}

/// Sign in, watch the recorded wallet, open its offer page and press
/// "Start the scan": the 303's target.
async fn scan_from_the_portal(app: &TestApp, browser: &mut Browser) -> (AccountId, String) {
    use crate::scans::WALLET;
    let account = sign_in(browser, app).await;
    let wallet = server::solana::WalletAddress::parse(WALLET).unwrap();
    accounts::watchlist::add_wallet(app.state.store(), now_ms(), &account, wallet, "main")
        .await
        .unwrap();
    let list = browser
        .get(&app.url("/wallets"))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        list.contains(&format!("href=\"/wallets/{WALLET}/scan\"")),
        "Scan now on the watched wallet: {list}"
    );
    let offer = browser
        .get(&app.url(&format!("/wallets/{WALLET}/scan")))
        .await;
    assert_eq!(offer.status(), StatusCode::OK);
    let offer = offer.text().await.unwrap();
    assert!(
        offer.contains("Free: payments are off on this service."),
        "the price, from the quote: {offer}"
    );
    assert!(offer.contains("A full scan of the wallet"), "{offer}");
    let at = offer
        .find("name=\"quote_id\" value=\"")
        .expect("the quote in the form")
        + "name=\"quote_id\" value=\"".len();
    let quote_id = offer[at..at + offer[at..].find('"').unwrap()].to_owned();
    assert!(quote_id.starts_with("q_"), "{quote_id}");
    let csrf = hidden_csrf_of(&offer);
    let started = browser
        .post_form(
            &app.url(&format!("/wallets/{WALLET}/scan")),
            &[("csrf", &csrf), ("quote_id", &quote_id)],
        )
        .await;
    assert_eq!(started.status(), StatusCode::SEE_OTHER, "PRG");
    let location = started.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(location.starts_with("/scans/job_"), "{location}");
    (account, location)
}

#[tokio::test]
async fn scan_now_starts_a_scan_whose_progress_page_follows_it_to_the_report() {
    let (app, _stand_in) = scan_app(true).await;
    let mut browser = Browser::new();
    let (_, progress) = scan_from_the_portal(&app, &mut browser).await;
    let page = browser.get(&app.url(&progress)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("id=\"scan-bar\""), "{html}");
    // Poll the JSON twin the script reads until the job ends.
    let mut last = Value::Null;
    for _ in 0..400 {
        let answer = browser.get(&app.url(&format!("{progress}/progress"))).await;
        assert_eq!(answer.status(), StatusCode::OK);
        last = answer.json().await.unwrap();
        if last["state"] != "running" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(last["state"], "done", "{last}");
    // The recorded wallet's own history: every listed signature read.
    let listed = crate::scans::fixtures().len() as i64;
    assert_eq!(last["done"], listed, "{last}");
    assert_eq!(last["total"], listed, "{last}");
    let html = browser.get(&app.url(&progress)).await.text().await.unwrap();
    let html = crate::pages::unescape(&html);
    assert!(
        html.contains(&format!("Done: {listed} transactions read")),
        "{html}"
    );
    assert!(html.contains("id=\"scan-report\""), "{html}");
    assert!(
        !html.contains("http-equiv=\"refresh\""),
        "an ended scan stops reloading"
    );
    assert!(!html.contains("/scan.js"), "{html}");
    app.stop().await;
}

#[tokio::test]
async fn a_running_scan_refreshes_without_javascript_and_a_failed_one_says_why_with_a_retry() {
    let (app, _stand_in) = scan_app(false).await;
    let mut browser = Browser::new();
    let (_, progress) = scan_from_the_portal(&app, &mut browser).await;
    let html = browser.get(&app.url(&progress)).await.text().await.unwrap();
    assert!(
        html.contains("<noscript><meta http-equiv=\"refresh\" content=\"5\"/></noscript>")
            || html.contains("<noscript><meta http-equiv=\"refresh\" content=\"5\"></noscript>"),
        "{html}"
    );
    assert!(html.contains("<script src=\"/scan.js\" defer"), "{html}");
    assert!(
        crate::pages::unescape(&html).contains("Waiting for a worker to start the scan."),
        "{html}"
    );
    // Reloading the progress page starts nothing more (PRG).
    let again = browser.get(&app.url(&progress)).await;
    assert_eq!(again.status(), StatusCode::OK);
    let job_id = progress.trim_start_matches("/scans/");
    let store = app.state.store();
    let claimed = store
        .claim_job("test", now_ms(), 60_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, job_id, "the one job the form started");
    assert!(
        store
            .claim_job("test", now_ms(), 60_000)
            .await
            .unwrap()
            .is_none()
    );
    let reason = "the Solana RPC endpoint failed; the scan can be run again";
    assert!(
        store
            .finish_job(job_id, "test", "failed", Some(reason), now_ms())
            .await
            .unwrap()
    );
    let html = browser.get(&app.url(&progress)).await.text().await.unwrap();
    let html = crate::pages::unescape(&html);
    assert!(html.contains(&format!("Why: {reason}.")), "{html}");
    assert!(
        html.contains(&format!(
            "action=\"/wallets/{}/scan\"",
            crate::scans::WALLET
        )) && html.contains(">Retry</button>"),
        "{html}"
    );
    assert!(!html.contains("http-equiv=\"refresh\""), "{html}");
    app.stop().await;
}

#[tokio::test]
async fn another_accounts_scan_and_a_signed_out_script_read_nothing() {
    let (app, _stand_in) = scan_app(false).await;
    let mut owner = Browser::new();
    let (_, progress) = scan_from_the_portal(&app, &mut owner).await;
    let mut other = Browser::new();
    sign_in(&mut other, &app).await;
    let page = other.get(&app.url(&progress)).await;
    assert_eq!(page.status(), StatusCode::NOT_FOUND);
    let json = other.get(&app.url(&format!("{progress}/progress"))).await;
    assert_eq!(json.status(), StatusCode::NOT_FOUND);
    let mut nobody = Browser::new();
    let json = nobody.get(&app.url(&format!("{progress}/progress"))).await;
    assert_eq!(json.status(), StatusCode::UNAUTHORIZED);
    let page = nobody.get(&app.url(&progress)).await;
    assert_eq!(page.status(), StatusCode::SEE_OTHER, "to sign-in first");
    app.stop().await;
}

#[tokio::test]
async fn with_payments_on_the_offer_names_the_price_and_how_to_pay_and_starts_nothing() {
    use crate::scans::WALLET;
    let stand_in = crate::standin::start(crate::scans::shared(0, std::time::Duration::ZERO)).await;
    let url = stand_in.url.clone();
    let app = spawn_with(Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.payments = server::config::PaymentsMode::X402;
        }),
        ..Options::default()
    })
    .await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let wallet = server::solana::WalletAddress::parse(WALLET).unwrap();
    accounts::watchlist::add_wallet(app.state.store(), now_ms(), &account, wallet, "")
        .await
        .unwrap();
    let offer = browser
        .get(&app.url(&format!("/wallets/{WALLET}/scan")))
        .await
        .text()
        .await
        .unwrap();
    let offer = crate::pages::unescape(&offer);
    let small = server::config::Config::default().pricing.tiers[0].price_usd;
    let micros = small.micros();
    let price = format!(
        "{}.{:02} USD",
        micros / 1_000_000,
        (micros % 1_000_000) / 10_000
    );
    assert!(offer.contains(&price), "{price} in {offer}");
    assert!(offer.contains("scan_wallet"), "{offer}");
    assert!(!offer.contains("id=\"scan-form\""), "{offer}");
    app.stop().await;
}
