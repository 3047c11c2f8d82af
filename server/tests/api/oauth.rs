//! The OAuth 2.1 authorization server over real HTTP: discovery, dynamic
//! registration and Client ID Metadata Documents (served on loopback),
//! `/authorize` with sign-in and consent, `/token` with PKCE S256, refresh
//! rotation and reuse detection, revocation, `/mcp/account`'s challenge,
//! and the Keys page's connected clients. Each refusal has its own test,
//! named for what it proves; time moves on a hand-driven clock. Every
//! test runs on SQLite and, in `.ci/test`'s second pass, PostgreSQL.

use std::{collections::HashMap, sync::Arc};

use base64::Engine;
use ed25519_dalek::{Signer, SigningKey};
use reqwest::{StatusCode, header};
use serde_json::{Value, json};
use server::clock::ManualClock;
use sha2::{Digest, Sha256};

use crate::helpers::{ACCEPT_BOTH, Options, TestApp, relaxed_limits, spawn_with};

const CLAUDE_AI: &str = "https://claude.ai/api/mcp/auth_callback";
const LOOPBACK: &str = "http://localhost:33418/callback";

// ---------------------------------------------------------------- harness

/// A browser's cookie jar over a client that does not follow redirects.
struct Browser {
    client: reqwest::Client,
    jar: HashMap<String, String>,
}

impl Browser {
    fn new() -> Self {
        Self {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            jar: HashMap::new(),
        }
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> reqwest::Response {
        let cookie = self
            .jar
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let request = if cookie.is_empty() {
            request
        } else {
            request.header(header::COOKIE, cookie)
        };
        let response = request.send().await.unwrap();
        for line in response.headers().get_all(header::SET_COOKIE) {
            let line = line.to_str().unwrap();
            let (name, value) = line.split(';').next().unwrap().split_once('=').unwrap();
            if value.is_empty() || line.to_ascii_lowercase().contains("max-age=0") {
                self.jar.remove(name);
            } else {
                self.jar.insert(name.to_owned(), value.to_owned());
            }
        }
        response
    }

    async fn get(&mut self, url: &str) -> reqwest::Response {
        let request = self.client.get(url);
        self.send(request).await
    }

    async fn post_form(&mut self, url: &str, form: &[(&str, &str)]) -> reqwest::Response {
        let request = self
            .client
            .post(url)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form).unwrap());
        self.send(request).await
    }

    async fn post_json(&mut self, url: &str, body: &Value) -> reqwest::Response {
        let request = self.client.post(url).json(body);
        self.send(request).await
    }
}

fn hidden(html: &str, name: &str) -> Option<String> {
    let needle = format!("name=\"{name}\" value=\"");
    let at = html.find(&needle)?;
    let rest = &html[at + needle.len()..];
    Some(rest[..rest.find('"')?].to_owned())
}

/// Sign the browser in with a fresh wallet: the account id.
async fn sign_in(browser: &mut Browser, app: &TestApp) -> String {
    let key = SigningKey::from_bytes(&rand::random::<[u8; 32]>());
    let address = bs58::encode(key.verifying_key().to_bytes()).into_string();
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
    let signature = bs58::encode(key.sign(message.as_bytes()).to_bytes()).into_string();
    let verified = browser
        .post_json(
            &app.url("/auth/solana/verify"),
            &json!({ "message": message, "signature": signature }),
        )
        .await;
    assert_eq!(verified.status(), StatusCode::OK);
    let body: Value = verified.json().await.unwrap();
    body["account_id"].as_str().unwrap().to_owned()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

async fn spawn(
    configure: impl FnOnce(&mut server::config::Config) + Send + 'static,
) -> (TestApp, ManualClock) {
    let clock = ManualClock::new(now_ms());
    let app = spawn_with(Options {
        clock: Arc::new(clock.clone()),
        configure: Box::new(move |c| {
            relaxed_limits(c);
            configure(c);
        }),
    })
    .await;
    (app, clock)
}

async fn spawn_default() -> (TestApp, ManualClock) {
    spawn(|_| {}).await
}

fn pkce() -> (String, String) {
    let verifier =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>());
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

async fn register_raw(app: &TestApp, body: &Value) -> reqwest::Response {
    app.client
        .post(app.url("/register"))
        .json(body)
        .send()
        .await
        .unwrap()
}

/// Register a public client with `redirect_uris`: its client_id.
async fn register(app: &TestApp, redirect_uris: &[&str]) -> String {
    let response = register_raw(
        app,
        &json!({
            "client_name": "Test Agent",
            "redirect_uris": redirect_uris,
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let body: Value = response.json().await.unwrap();
    assert!(body.get("client_secret").is_none(), "{body}");
    body["client_id"].as_str().unwrap().to_owned()
}

fn authorize_url(app: &TestApp, params: &[(&str, &str)]) -> String {
    format!(
        "{}/authorize?{}",
        app.base,
        serde_urlencoded::to_string(params).unwrap()
    )
}

fn standard_params<'a>(
    client_id: &'a str,
    redirect: &'a str,
    challenge: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", "st-123"),
        ("scope", "read scan"),
    ]
}

fn location(response: &reqwest::Response) -> url::Url {
    let location = response.headers()[header::LOCATION].to_str().unwrap();
    url::Url::parse(location).unwrap_or_else(|_| panic!("absolute Location: {location}"))
}

fn query(url: &url::Url) -> HashMap<String, String> {
    url.query_pairs().into_owned().collect()
}

/// GET the consent page signed in: (request_id, csrf, html).
async fn consent(browser: &mut Browser, url: &str) -> (String, String, String) {
    let response = browser.get(url).await;
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await.unwrap();
    let request_id =
        hidden(&html, "request_id").unwrap_or_else(|| panic!("a consent form: {html}"));
    let csrf = hidden(&html, "csrf").unwrap();
    (request_id, csrf, html)
}

async fn decide(
    browser: &mut Browser,
    app: &TestApp,
    request_id: &str,
    csrf: &str,
    decision: &str,
) -> reqwest::Response {
    browser
        .post_form(
            &app.url("/authorize"),
            &[
                ("csrf", csrf),
                ("request_id", request_id),
                ("decision", decision),
            ],
        )
        .await
}

/// Everything up to a code: a signed-in browser, a registered client, the
/// approved request. (browser, client_id, code, verifier)
async fn approved(app: &TestApp, redirect: &str) -> (Browser, String, String, String) {
    let mut browser = Browser::new();
    sign_in(&mut browser, app).await;
    let client_id = register(app, &[redirect]).await;
    let (verifier, challenge) = pkce();
    let url = authorize_url(app, &standard_params(&client_id, redirect, &challenge));
    let (request_id, csrf, _) = consent(&mut browser, &url).await;
    let response = decide(&mut browser, app, &request_id, &csrf, "approve").await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let back = location(&response);
    let q = query(&back);
    assert_eq!(q["state"], "st-123");
    assert_eq!(q["iss"], app.base);
    (browser, client_id, q["code"].clone(), verifier)
}

async fn token(app: &TestApp, form: &[(&str, &str)]) -> reqwest::Response {
    app.client
        .post(app.url("/token"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(form).unwrap())
        .send()
        .await
        .unwrap()
}

async fn exchange(
    app: &TestApp,
    client_id: &str,
    code: &str,
    verifier: &str,
    redirect: &str,
) -> reqwest::Response {
    token(
        app,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect),
            ("client_id", client_id),
            ("code_verifier", verifier),
        ],
    )
    .await
}

/// A full grant: (client_id, token response body).
async fn tokens(app: &TestApp) -> (String, Value) {
    let (_, client_id, code, verifier) = approved(app, LOOPBACK).await;
    let response = exchange(app, &client_id, &code, &verifier, LOOPBACK).await;
    assert_eq!(response.status(), StatusCode::OK);
    (client_id, response.json().await.unwrap())
}

/// A fresh account signed in through the browser, a client it approves
/// for `scope` (`read`, `read scan`, …), and the code exchanged: (the
/// account's id, the access token).
pub(crate) async fn access_token_for(app: &TestApp, scope: &str) -> (String, String) {
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, app).await;
    let client_id = register(app, &[LOOPBACK]).await;
    let (verifier, challenge) = pkce();
    let mut params = standard_params(&client_id, LOOPBACK, &challenge);
    params.retain(|(k, _)| *k != "scope");
    params.push(("scope", scope));
    let (request_id, csrf, _) = consent(&mut browser, &authorize_url(app, &params)).await;
    let code = query(&location(
        &decide(&mut browser, app, &request_id, &csrf, "approve").await,
    ))["code"]
        .clone();
    let response = exchange(app, &client_id, &code, &verifier, LOOPBACK).await;
    assert_eq!(response.status(), StatusCode::OK);
    let issued: Value = response.json().await.unwrap();
    assert_eq!(issued["scope"], scope);
    (account, issued["access_token"].as_str().unwrap().to_owned())
}

async fn refresh(app: &TestApp, client_id: &str, refresh_token: &str) -> reqwest::Response {
    token(
        app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
        ],
    )
    .await
}

async fn oauth_error(response: reqwest::Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(response.status(), status);
    assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], code, "{body}");
    assert!(body["error_description"].is_string());
    body
}

/// `tools/call ping` on `path` with `bearer`: (status, WWW-Authenticate, body).
async fn ping_on(app: &TestApp, path: &str, bearer: Option<&str>) -> (StatusCode, String, Value) {
    let mut request = app
        .client
        .post(app.url(path))
        .header("content-type", "application/json")
        .header("accept", ACCEPT_BOTH)
        .header("mcp-protocol-version", "2025-06-18")
        .body(
            json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}})
                .to_string(),
        );
    if let Some(bearer) = bearer {
        request = request.header("authorization", format!("Bearer {bearer}"));
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, challenge, body)
}

// -------------------------------------------------------------- discovery

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
async fn authorization_server_metadata_snapshot() {
    let app = spawn_public().await;
    let doc = get_json(&app, "/.well-known/oauth-authorization-server").await;
    assert_eq!(doc["issuer"], "https://ledger.example");
    assert_eq!(doc["code_challenge_methods_supported"], json!(["S256"]));
    insta::assert_json_snapshot!("oauth_authorization_server", doc);
    app.stop().await;
}

#[tokio::test]
async fn protected_resource_metadata_path_forms_snapshot() {
    let app = spawn_public().await;
    let mcp = get_json(&app, "/.well-known/oauth-protected-resource/mcp").await;
    assert_eq!(
        mcp,
        get_json(&app, "/.well-known/oauth-protected-resource").await
    );
    assert_eq!(mcp["resource"], "https://ledger.example/mcp");
    insta::assert_json_snapshot!("oauth_protected_resource_mcp", mcp);
    let account = get_json(&app, "/.well-known/oauth-protected-resource/mcp/account").await;
    assert_eq!(account["resource"], "https://ledger.example/mcp/account");
    insta::assert_json_snapshot!("oauth_protected_resource_mcp_account", account);
    app.stop().await;
}

#[tokio::test]
async fn anonymous_callers_of_mcp_account_get_401_naming_its_resource_metadata_and_scopes() {
    let (app, _) = spawn_default().await;
    let (status, challenge, _) = ping_on(&app, "/mcp/account", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp/account\", scope=\"read scan\"",
            app.base
        )
    );
    // /mcp itself still serves anonymous callers.
    let (status, _, body) = ping_on(&app, "/mcp", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["result"]["structuredContent"]["principal"]["kind"], "anonymous",
        "{body}"
    );
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_bearer_on_mcp_account_is_invalid_token_with_its_metadata() {
    let (app, _) = spawn_default().await;
    let (status, challenge, _) = ping_on(&app, "/mcp/account", Some("lo_unknown")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge,
        format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp/account\"",
            app.base
        )
    );
    app.stop().await;
}

#[tokio::test]
async fn an_anonymous_401_on_v1_names_the_resource_metadata() {
    let (app, _) = spawn_default().await;
    let response = app.client.get(app.url("/v1/wallets")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        response.headers()["www-authenticate"].to_str().unwrap(),
        format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\", scope=\"read scan\"",
            app.base
        )
    );
    app.stop().await;
}

// ----------------------------------------------------------- registration

#[tokio::test]
async fn the_real_hosts_redirect_uris_register() {
    let (app, _) = spawn_default().await;
    for uri in [
        CLAUDE_AI,
        "https://claude.com/api/mcp/auth_callback",
        "http://localhost:49152/callback",
        "http://127.0.0.1:8976/callback",
        "cursor://anysphere.cursor-mcp/oauth/callback",
    ] {
        register(&app, &[uri]).await;
    }
    app.stop().await;
}

#[tokio::test]
async fn registering_a_non_loopback_http_redirect_uri_is_refused() {
    let (app, _) = spawn_default().await;
    let response = register_raw(
        &app,
        &json!({"redirect_uris": ["http://evil.example/callback"], "token_endpoint_auth_method": "none"}),
    )
    .await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_redirect_uri").await;
    app.stop().await;
}

#[tokio::test]
async fn registering_a_redirect_uri_with_a_fragment_or_wildcard_is_refused() {
    let (app, _) = spawn_default().await;
    for uri in ["https://claude.ai/cb#x", "https://*.claude.ai/cb"] {
        let response = register_raw(
            &app,
            &json!({"redirect_uris": [uri], "token_endpoint_auth_method": "none"}),
        )
        .await;
        oauth_error(response, StatusCode::BAD_REQUEST, "invalid_redirect_uri").await;
    }
    app.stop().await;
}

#[tokio::test]
async fn a_confidential_client_gets_its_secret_once_and_must_present_it() {
    let (app, _) = spawn_default().await;
    let response = register_raw(
        &app,
        &json!({"client_name": "Backend", "redirect_uris": [CLAUDE_AI], "token_endpoint_auth_method": "client_secret_post"}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let body: Value = response.json().await.unwrap();
    let secret = body["client_secret"].as_str().unwrap().to_owned();
    let client_id = body["client_id"].as_str().unwrap().to_owned();
    // Stored hashed: the row holds the SHA-256, not the secret.
    let row = app
        .state
        .store()
        .oauth_client(&client_id)
        .await
        .unwrap()
        .unwrap();
    let hash: String = Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(row.secret_hash.as_deref(), Some(hash.as_str()));
    // Without the secret the token endpoint refuses the client.
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", "x"),
            ("client_id", &client_id),
        ],
    )
    .await;
    oauth_error(response, StatusCode::UNAUTHORIZED, "invalid_client").await;
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", "x"),
            ("client_id", &client_id),
            ("client_secret", "ls_wrong"),
        ],
    )
    .await;
    oauth_error(response, StatusCode::UNAUTHORIZED, "invalid_client").await;
    // With it, the code is judged (and unknown).
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", "x"),
            ("client_id", &client_id),
            ("client_secret", &secret),
        ],
    )
    .await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn registration_is_rate_limited_per_client_ip() {
    let (app, _) = spawn(|c| {
        c.oauth.register_burst = 3;
        c.oauth.register_per_hour = 1;
    })
    .await;
    for _ in 0..3 {
        register(&app, &[CLAUDE_AI]).await;
    }
    let response = register_raw(
        &app,
        &json!({"redirect_uris": [CLAUDE_AI], "token_endpoint_auth_method": "none"}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(response.headers().contains_key(header::RETRY_AFTER));
    app.stop().await;
}

#[tokio::test]
async fn unused_registrations_are_purged_after_the_configured_time_and_used_ones_kept() {
    let (app, clock) = spawn(|c| c.oauth.unused_client_ttl_secs = 3600).await;
    let unused = register(&app, &[CLAUDE_AI]).await;
    let (_, used, _, _) = approved(&app, LOOPBACK).await;
    clock.advance_ms(3601 * 1000);
    register(&app, &[CLAUDE_AI]).await; // a registration purges
    assert!(
        app.state
            .store()
            .oauth_client(&unused)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        app.state
            .store()
            .oauth_client(&used)
            .await
            .unwrap()
            .is_some()
    );
    app.stop().await;
}

// -------------------------------------------------------------- authorize

/// The `href` of the "Return to" link of a refusal page, unescaped.
fn return_link(html: &str) -> Option<String> {
    let at = html.find("id=\"oauth-return\" href=\"")?;
    let rest = &html[at + "id=\"oauth-return\" href=\"".len()..];
    Some(rest[..rest.find('"')?].replace("&amp;", "&"))
}

/// An authorization request refused before consent, for a known client
/// and redirect URI: a 400 page (never a redirect) whose "Return to" link
/// carries the error; the link's query.
async fn refused_back(app: &TestApp, params: &[(&str, &str)]) -> HashMap<String, String> {
    let mut browser = Browser::new();
    sign_in(&mut browser, app).await;
    let response = browser.get(&authorize_url(app, params)).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get(header::LOCATION).is_none());
    let html = response.text().await.unwrap();
    assert!(html.contains("id=\"oauth-error\""), "{html}");
    assert!(hidden(&html, "request_id").is_none(), "no consent form");
    assert!(html.contains("Return to localhost"), "{html}");
    let back = url::Url::parse(&return_link(&html).unwrap()).unwrap();
    assert!(back.as_str().starts_with(LOOPBACK), "{back}");
    let q = query(&back);
    assert_eq!(q["state"], "st-123");
    assert_eq!(q["iss"], app.base);
    assert!(q.contains_key("error_description"));
    q
}

#[tokio::test]
async fn a_bad_response_type_is_an_error_page_with_a_return_link_never_an_automatic_redirect() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let mut params = standard_params(&client_id, LOOPBACK, &challenge);
    params.retain(|(k, _)| *k != "response_type");
    params.push(("response_type", "token"));
    let q = refused_back(&app, &params).await;
    assert_eq!(q["error"], "unsupported_response_type");
    // Signed out too: the page, not a redirect to the client or sign-in.
    let response = app
        .client
        .get(authorize_url(&app, &params))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get(header::LOCATION).is_none());
    app.stop().await;
}

#[tokio::test]
async fn a_code_challenge_that_is_not_43_base64url_characters_is_refused() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    for bad in [
        "a".repeat(44),
        "a".repeat(128),
        format!("{}.", "a".repeat(42)),
        format!("{}~", "a".repeat(42)),
    ] {
        let q = refused_back(&app, &standard_params(&client_id, LOOPBACK, &bad)).await;
        assert_eq!(q["error"], "invalid_request", "{bad}");
        assert!(q["error_description"].contains("43"), "{bad}");
    }
    app.stop().await;
}

#[tokio::test]
async fn an_authorization_request_without_pkce_is_refused() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let q = refused_back(
        &app,
        &[
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", LOOPBACK),
            ("state", "st-123"),
        ],
    )
    .await;
    assert_eq!(q["error"], "invalid_request");
    assert!(q["error_description"].contains("PKCE"));
    app.stop().await;
}

#[tokio::test]
async fn an_authorization_request_with_plain_pkce_is_refused() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (verifier, _) = pkce();
    let mut params = standard_params(&client_id, LOOPBACK, &verifier);
    params.retain(|(k, _)| *k != "code_challenge_method");
    params.push(("code_challenge_method", "plain"));
    let q = refused_back(&app, &params).await;
    assert_eq!(q["error"], "invalid_request");
    assert!(q["error_description"].contains("S256"));
    app.stop().await;
}

async fn error_page(app: &TestApp, url: &str) -> String {
    let mut browser = Browser::new();
    sign_in(&mut browser, app).await;
    let response = browser.get(url).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get(header::LOCATION).is_none());
    let html = response.text().await.unwrap();
    assert!(html.contains("id=\"oauth-error\""), "{html}");
    assert!(hidden(&html, "request_id").is_none());
    html
}

#[tokio::test]
async fn an_unregistered_client_id_is_an_error_page_never_a_redirect() {
    let (app, _) = spawn_default().await;
    let (_, challenge) = pkce();
    let html = error_page(
        &app,
        &authorize_url(
            &app,
            &standard_params("oc_01JDZQ3Y3E8W9V5K2M7N4P6R8T", LOOPBACK, &challenge),
        ),
    )
    .await;
    assert!(html.contains("invalid_client"), "{html}");
    app.stop().await;
}

#[tokio::test]
async fn an_unregistered_redirect_uri_is_an_error_page_never_a_redirect() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    error_page(
        &app,
        &authorize_url(
            &app,
            &standard_params(&client_id, "https://evil.example/callback", &challenge),
        ),
    )
    .await;
    app.stop().await;
}

#[tokio::test]
async fn a_non_loopback_http_redirect_uri_is_an_error_page() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    error_page(
        &app,
        &authorize_url(
            &app,
            &standard_params(&client_id, "http://evil.example:33418/callback", &challenge),
        ),
    )
    .await;
    app.stop().await;
}

#[tokio::test]
async fn a_loopback_redirect_uri_matches_on_any_port() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let other_port = "http://localhost:51000/callback";
    let (_, _, html) = consent(
        &mut browser,
        &authorize_url(&app, &standard_params(&client_id, other_port, &challenge)),
    )
    .await;
    assert!(html.contains(other_port));
    app.stop().await;
}

#[tokio::test]
async fn a_resource_of_another_server_is_invalid_target() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let mut params = standard_params(&client_id, LOOPBACK, &challenge);
    params.push(("resource", "https://evil.example/mcp"));
    let q = refused_back(&app, &params).await;
    assert_eq!(q["error"], "invalid_target");
    app.stop().await;
}

#[tokio::test]
async fn a_scope_beyond_read_and_scan_is_invalid_scope() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let mut params = standard_params(&client_id, LOOPBACK, &challenge);
    params.retain(|(k, _)| *k != "scope");
    params.push(("scope", "read scan admin"));
    let q = refused_back(&app, &params).await;
    assert_eq!(q["error"], "invalid_scope");
    app.stop().await;
}

#[tokio::test]
async fn a_signed_out_visitor_signs_in_and_comes_straight_back_to_authorize() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let url = authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge));
    let mut browser = Browser::new();
    let response = browser.get(&url).await;
    assert_eq!(response.status(), StatusCode::FOUND);
    let to = response.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(to.starts_with("/signin?next="), "{to}");
    let signin = browser.get(&app.url(&to)).await.text().await.unwrap();
    let path_and_query = &url[app.base.len()..];
    // The sign-in page carries where to return to, for the wallet script
    // and the Google link.
    let escaped = path_and_query.replace('&', "&amp;");
    assert!(
        signin.contains(&format!("data-next=\"{escaped}\"")),
        "{signin}"
    );
    sign_in(&mut browser, &app).await;
    consent(&mut browser, &app.url(path_and_query)).await;
    app.stop().await;
}

#[tokio::test]
async fn signin_ignores_a_next_that_is_not_a_same_origin_path() {
    let (app, _) = spawn_default().await;
    for next in [
        "//evil.example/x",
        "https://evil.example/",
        "/\\evil.example",
    ] {
        let url = app.url(&format!(
            "/signin?next={}",
            url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>()
        ));
        let html = app
            .client
            .get(url)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(html.contains("data-next=\"\""), "{next}: {html}");
    }
    app.stop().await;
}

#[tokio::test]
async fn the_consent_page_names_the_client_where_it_returns_what_it_may_do_and_who() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[CLAUDE_AI]).await;
    let (_, challenge) = pkce();
    let mut params = standard_params(&client_id, CLAUDE_AI, &challenge);
    params.retain(|(k, _)| *k != "scope");
    params.push(("scope", "read"));
    let (_, _, html) = consent(&mut browser, &authorize_url(&app, &params)).await;
    assert!(html.contains("Test Agent"));
    assert!(html.contains(CLAUDE_AI) && html.contains("claude.ai"));
    assert!(html.contains(READ_WORDS), "{html}");
    assert!(
        !html.contains("start scans on your behalf") && !html.contains("publish"),
        "only the granted scopes"
    );
    assert!(
        html.contains("It will never be able to change your sign-in methods, keys or billing.")
    );
    assert!(
        html.contains("Test Agent (unverified) to your account?"),
        "{html}"
    );
    assert!(
        html.contains(&account) || html.contains("Solana wallet"),
        "{html}"
    );
    assert!(html.contains("<form method=\"post\" action=\"/authorize\""));
    assert!(html.contains("id=\"oauth-approve\" name=\"decision\" value=\"approve\""));
    assert!(html.contains("id=\"oauth-deny\" name=\"decision\" value=\"deny\""));
    app.stop().await;
}

/// A private-use scheme goes to whichever app on the device claimed it:
/// what follows the scheme (`//claude.ai/cb`) is that app's to read, so
/// the page names the scheme and says it is an app, never `claude.ai`.
#[tokio::test]
async fn the_consent_page_names_a_private_use_scheme_as_an_app_never_the_host_it_spells() {
    const EVIL: &str = "com.evil.app://claude.ai/cb";
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[EVIL]).await;
    let (_, challenge) = pkce();
    let params = standard_params(&client_id, EVIL, &challenge);
    let (_, _, html) = consent(&mut browser, &authorize_url(&app, &params)).await;
    let at = html
        .find("id=\"oauth-redirect\"")
        .expect("the destination line");
    let line = &html[at..at + html[at..].find("</p>").unwrap()];
    assert!(line.contains("an app on this device"), "{line}");
    assert!(line.contains("com.evil.app:"), "{line}");
    assert!(!line.contains("<strong>claude.ai</strong>"), "{line}");
    app.stop().await;
}

/// What `read` allows, as the consent page and the Keys page say it.
const READ_WORDS: &str = "read your watched wallets, reports and positions (ledgers too), your \
    payments, credit balance and share links; add and remove the wallets you watch, and label \
    any address (your labels name it in your reports)";
/// What `scan` allows.
const SCAN_WORDS: &str = "start scans on your behalf; with read as well, spend your research \
    credits (follow the money), buy more with its own payment, and publish or revoke share links";

/// Asked for both scopes, the consent page lists both, spending and
/// publishing among them: nothing a token can do is left unsaid.
#[tokio::test]
async fn the_consent_page_for_read_and_scan_says_it_may_spend_and_publish() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[CLAUDE_AI]).await;
    let (_, challenge) = pkce();
    let url = authorize_url(&app, &standard_params(&client_id, CLAUDE_AI, &challenge));
    let (_, _, html) = consent(&mut browser, &url).await;
    assert!(html.contains(READ_WORDS), "{html}");
    assert!(html.contains(SCAN_WORDS), "{html}");
    app.stop().await;
}

/// The Keys page's mint form says what each scope allows in the consent
/// page's words.
#[tokio::test]
async fn the_keys_page_says_what_each_scope_allows_in_the_consent_pages_words() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(html.contains(&format!(" read: {READ_WORDS}")), "{html}");
    assert!(html.contains(&format!(" scan: {SCAN_WORDS}")), "{html}");
    app.stop().await;
}

#[tokio::test]
async fn a_consent_post_without_the_csrf_token_is_refused_and_issues_nothing() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let (request_id, _, _) = consent(
        &mut browser,
        &authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge)),
    )
    .await;
    let response = browser
        .post_form(
            &app.url("/authorize"),
            &[("request_id", &request_id), ("decision", "approve")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response.headers().get(header::LOCATION).is_none());
    app.stop().await;
}

#[tokio::test]
async fn a_consent_post_with_a_wrong_csrf_token_is_refused_and_issues_nothing() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let (request_id, _, _) = consent(
        &mut browser,
        &authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge)),
    )
    .await;
    let response = decide(&mut browser, &app, &request_id, "not-the-token", "approve").await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response.headers().get(header::LOCATION).is_none());
    // The request is still pending: the real token approves it.
    app.stop().await;
}

#[tokio::test]
async fn another_accounts_pending_request_cannot_be_approved() {
    let (app, _) = spawn_default().await;
    let mut alice = Browser::new();
    sign_in(&mut alice, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let (request_id, _, _) = consent(
        &mut alice,
        &authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge)),
    )
    .await;
    let mut mallory = Browser::new();
    sign_in(&mut mallory, &app).await;
    let csrf = hidden(
        &mallory.get(&app.url("/keys")).await.text().await.unwrap(),
        "csrf",
    )
    .unwrap();
    let response = decide(&mut mallory, &app, &request_id, &csrf, "approve").await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get(header::LOCATION).is_none());
    app.stop().await;
}

#[tokio::test]
async fn pending_consents_beyond_the_accounts_quota_are_refused_until_one_is_answered() {
    let (app, _) = spawn(|c| c.quota.pending_consents_per_account = 2).await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let url = authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge));
    let (first, csrf, _) = consent(&mut browser, &url).await;
    consent(&mut browser, &url).await;
    let refused = browser.get(&url).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    assert!(refused.headers().get(header::LOCATION).is_none());
    let page = refused.text().await.unwrap();
    assert!(
        page.contains("quota.pending_consents_per_account"),
        "{page}"
    );
    assert!(hidden(&page, "request_id").is_none(), "no consent form");
    // Another account is not held to it.
    let mut other = Browser::new();
    sign_in(&mut other, &app).await;
    consent(&mut other, &url).await;
    // Answering one makes room.
    let denied = decide(&mut browser, &app, &first, &csrf, "deny").await;
    assert_eq!(denied.status(), StatusCode::SEE_OTHER);
    consent(&mut browser, &url).await;
    app.stop().await;
}

#[tokio::test]
async fn denying_sends_access_denied_with_state_and_iss_and_no_code() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let (request_id, csrf, _) = consent(
        &mut browser,
        &authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge)),
    )
    .await;
    let response = decide(&mut browser, &app, &request_id, &csrf, "deny").await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let q = query(&location(&response));
    assert_eq!(q["error"], "access_denied");
    assert_eq!(q["state"], "st-123");
    assert_eq!(q["iss"], app.base);
    assert!(!q.contains_key("code"));
    // A decided request cannot be decided again.
    let again = decide(&mut browser, &app, &request_id, &csrf, "approve").await;
    assert_eq!(again.status(), StatusCode::BAD_REQUEST);
    app.stop().await;
}

// ------------------------------------------------------------------ token

#[tokio::test]
async fn a_wrong_pkce_verifier_is_invalid_grant() {
    let (app, _) = spawn_default().await;
    let (_, client_id, code, _) = approved(&app, LOOPBACK).await;
    let (wrong, _) = pkce();
    let response = exchange(&app, &client_id, &code, &wrong, LOOPBACK).await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn a_missing_pkce_verifier_is_invalid_grant() {
    let (app, _) = spawn_default().await;
    let (_, client_id, code, _) = approved(&app, LOOPBACK).await;
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", LOOPBACK),
            ("client_id", &client_id),
        ],
    )
    .await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn a_reused_code_is_refused_and_the_tokens_from_it_are_revoked() {
    let (app, _) = spawn_default().await;
    let (_, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let first: Value = exchange(&app, &client_id, &code, &verifier, LOOPBACK)
        .await
        .json()
        .await
        .unwrap();
    let access = first["access_token"].as_str().unwrap();
    assert_eq!(
        ping_on(&app, "/mcp/account", Some(access)).await.0,
        StatusCode::OK
    );
    let again = exchange(&app, &client_id, &code, &verifier, LOOPBACK).await;
    oauth_error(again, StatusCode::BAD_REQUEST, "invalid_grant").await;
    let (status, challenge, _) = ping_on(&app, "/mcp/account", Some(access)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(challenge.contains("invalid_token"));
    let response = refresh(&app, &client_id, first["refresh_token"].as_str().unwrap()).await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

/// A used code in another client's hands (a stolen code) is refused and
/// revokes nothing: only the client it was issued to can have redeemed
/// it, so only its second use means someone holds a copy.
#[tokio::test]
async fn a_used_code_presented_by_another_client_is_refused_and_revokes_nothing() {
    let (app, _) = spawn_default().await;
    let (_, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let first: Value = exchange(&app, &client_id, &code, &verifier, LOOPBACK)
        .await
        .json()
        .await
        .unwrap();
    let other = register(&app, &[LOOPBACK]).await;
    let stolen = exchange(&app, &other, &code, &verifier, LOOPBACK).await;
    oauth_error(stolen, StatusCode::BAD_REQUEST, "invalid_grant").await;
    let access = first["access_token"].as_str().unwrap();
    assert_eq!(
        ping_on(&app, "/mcp/account", Some(access)).await.0,
        StatusCode::OK,
        "the victim's access token still works"
    );
    let refreshed = refresh(&app, &client_id, first["refresh_token"].as_str().unwrap()).await;
    assert_eq!(
        refreshed.status(),
        StatusCode::OK,
        "and so does its refresh"
    );
    app.stop().await;
}

/// The same for the right client with the wrong redirect URI or PKCE
/// verifier: whoever cannot redeem the code cannot revoke its grant.
#[tokio::test]
async fn a_used_code_without_its_redirect_uri_or_verifier_revokes_nothing() {
    let (app, _) = spawn_default().await;
    let (_, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let first: Value = exchange(&app, &client_id, &code, &verifier, LOOPBACK)
        .await
        .json()
        .await
        .unwrap();
    let (wrong_verifier, _) = pkce();
    for (verifier, redirect) in [
        (wrong_verifier.as_str(), LOOPBACK),
        (verifier.as_str(), "http://localhost:33418/other"),
    ] {
        let again = exchange(&app, &client_id, &code, verifier, redirect).await;
        oauth_error(again, StatusCode::BAD_REQUEST, "invalid_grant").await;
    }
    let access = first["access_token"].as_str().unwrap();
    assert_eq!(
        ping_on(&app, "/mcp/account", Some(access)).await.0,
        StatusCode::OK
    );
    app.stop().await;
}

#[tokio::test]
async fn an_expired_code_is_refused() {
    let (app, clock) = spawn_default().await;
    let (_, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    clock.advance_ms(61_000);
    let response = exchange(&app, &client_id, &code, &verifier, LOOPBACK).await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn a_code_presented_by_another_client_is_refused() {
    let (app, _) = spawn_default().await;
    let (_, _, code, verifier) = approved(&app, LOOPBACK).await;
    let other = register(&app, &[LOOPBACK]).await;
    let response = exchange(&app, &other, &code, &verifier, LOOPBACK).await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn a_code_with_another_redirect_uri_is_refused() {
    let (app, _) = spawn_default().await;
    let (_, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let response = exchange(
        &app,
        &client_id,
        &code,
        &verifier,
        "http://localhost:33418/other",
    )
    .await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn a_token_request_for_another_resource_is_invalid_target() {
    let (app, _) = spawn_default().await;
    let (_, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", LOOPBACK),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
            ("resource", "https://evil.example/mcp"),
        ],
    )
    .await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_target").await;
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_grant_type_is_unsupported_grant_type() {
    let (app, _) = spawn_default().await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let response = token(
        &app,
        &[("grant_type", "password"), ("client_id", &client_id)],
    )
    .await;
    oauth_error(response, StatusCode::BAD_REQUEST, "unsupported_grant_type").await;
    app.stop().await;
}

#[tokio::test]
async fn a_refresh_rotates_and_the_rotated_token_reused_revokes_the_family() {
    let (app, _) = spawn_default().await;
    let (client_id, first) = tokens(&app).await;
    let old_refresh = first["refresh_token"].as_str().unwrap();
    let rotated = refresh(&app, &client_id, old_refresh).await;
    assert_eq!(rotated.status(), StatusCode::OK);
    assert_eq!(rotated.headers()[header::CACHE_CONTROL], "no-store");
    let second: Value = rotated.json().await.unwrap();
    assert_ne!(second["refresh_token"], first["refresh_token"]);
    let access = second["access_token"].as_str().unwrap();
    assert_eq!(
        ping_on(&app, "/mcp/account", Some(access)).await.0,
        StatusCode::OK
    );
    // The rotated-out token again: refused, and the whole family dies.
    let reused = refresh(&app, &client_id, old_refresh).await;
    oauth_error(reused, StatusCode::BAD_REQUEST, "invalid_grant").await;
    assert_eq!(
        ping_on(&app, "/mcp/account", Some(access)).await.0,
        StatusCode::UNAUTHORIZED
    );
    let newest = refresh(&app, &client_id, second["refresh_token"].as_str().unwrap()).await;
    oauth_error(newest, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn a_refresh_may_not_widen_the_scope() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (verifier, challenge) = pkce();
    let mut params = standard_params(&client_id, LOOPBACK, &challenge);
    params.retain(|(k, _)| *k != "scope");
    params.push(("scope", "read"));
    let (request_id, csrf, _) = consent(&mut browser, &authorize_url(&app, &params)).await;
    let code = query(&location(
        &decide(&mut browser, &app, &request_id, &csrf, "approve").await,
    ))["code"]
        .clone();
    let issued: Value = exchange(&app, &client_id, &code, &verifier, LOOPBACK)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(issued["scope"], "read");
    let response = token(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", issued["refresh_token"].as_str().unwrap()),
            ("client_id", &client_id),
            ("scope", "read scan"),
        ],
    )
    .await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_scope").await;
    app.stop().await;
}

#[tokio::test]
async fn a_refresh_token_of_another_client_is_refused() {
    let (app, _) = spawn_default().await;
    let (_, first) = tokens(&app).await;
    let other = register(&app, &[LOOPBACK]).await;
    let response = refresh(&app, &other, first["refresh_token"].as_str().unwrap()).await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn an_expired_refresh_token_is_refused() {
    let (app, clock) = spawn_default().await;
    let (client_id, first) = tokens(&app).await;
    clock.advance_ms(30 * 24 * 3600 * 1000 + 1000);
    let response = refresh(&app, &client_id, first["refresh_token"].as_str().unwrap()).await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn an_expired_access_token_gets_401_invalid_token_with_the_challenge() {
    let (app, clock) = spawn_default().await;
    let (_, issued) = tokens(&app).await;
    assert_eq!(issued["expires_in"], 3600);
    let access = issued["access_token"].as_str().unwrap();
    clock.advance_ms(3600 * 1000 + 1);
    for path in ["/mcp", "/mcp/account"] {
        let (status, challenge, _) = ping_on(&app, path, Some(access)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\", resource_metadata="),
            "{challenge}"
        );
    }
    let rest = app
        .client
        .get(app.url("/v1/ping"))
        .bearer_auth(access)
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::UNAUTHORIZED);
    assert!(
        rest.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("invalid_token")
    );
    app.stop().await;
}

#[tokio::test]
async fn a_revoked_access_token_gets_401_invalid_token_with_the_challenge() {
    let (app, _) = spawn_default().await;
    let (client_id, issued) = tokens(&app).await;
    let access = issued["access_token"].as_str().unwrap();
    let response = app
        .client
        .post(app.url("/revoke"))
        .form(&[
            ("token", access),
            ("client_id", &client_id),
            ("token_type_hint", "access_token"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let (status, challenge, _) = ping_on(&app, "/mcp/account", Some(access)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(challenge.contains("error=\"invalid_token\""));
    // The refresh token still works: only the access token was revoked.
    assert_eq!(
        refresh(&app, &client_id, issued["refresh_token"].as_str().unwrap())
            .await
            .status(),
        StatusCode::OK
    );
    app.stop().await;
}

#[tokio::test]
async fn revoking_a_refresh_token_revokes_its_access_tokens_and_unknown_tokens_are_200() {
    let (app, _) = spawn_default().await;
    let (client_id, issued) = tokens(&app).await;
    let revoke = |token: String| {
        let app = &app;
        let client_id = client_id.clone();
        async move {
            app.client
                .post(app.url("/revoke"))
                .form(&[("token", token.as_str()), ("client_id", client_id.as_str())])
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(revoke("lr_unknown".to_owned()).await, StatusCode::OK);
    assert_eq!(
        revoke(issued["refresh_token"].as_str().unwrap().to_owned()).await,
        StatusCode::OK
    );
    assert_eq!(
        ping_on(
            &app,
            "/mcp/account",
            Some(issued["access_token"].as_str().unwrap())
        )
        .await
        .0,
        StatusCode::UNAUTHORIZED
    );
    app.stop().await;
}

// ------------------------------------------------------------- happy path

#[tokio::test]
async fn the_full_flow_over_http_ends_with_ping_on_mcp_account_showing_the_account() {
    let (app, _) = spawn_default().await;
    // A bare 401 names the metadata; the metadata names the server.
    let (status, challenge, _) = ping_on(&app, "/mcp/account", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let metadata_url = challenge.split('"').nth(1).unwrap().to_owned();
    let resource: Value = app
        .client
        .get(&metadata_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let issuer = resource["authorization_servers"][0].as_str().unwrap();
    let server: Value = app
        .client
        .get(format!("{issuer}/.well-known/oauth-authorization-server"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // Register, authorize (sign in, consent), exchange.
    let registered: Value = app
        .client
        .post(server["registration_endpoint"].as_str().unwrap())
        .json(&json!({"client_name": "SDK", "redirect_uris": [LOOPBACK], "token_endpoint_auth_method": "none"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = registered["client_id"].as_str().unwrap();
    let (verifier, challenge) = pkce();
    let mut params = standard_params(client_id, LOOPBACK, &challenge);
    params.push(("resource", resource["resource"].as_str().unwrap()));
    let url = format!(
        "{}?{}",
        server["authorization_endpoint"].as_str().unwrap(),
        serde_urlencoded::to_string(&params).unwrap()
    );
    let mut browser = Browser::new();
    let to_signin = browser.get(&url).await;
    assert_eq!(to_signin.status(), StatusCode::FOUND);
    let account = sign_in(&mut browser, &app).await;
    let (request_id, csrf, _) = consent(&mut browser, &url).await;
    let back = decide(&mut browser, &app, &request_id, &csrf, "approve").await;
    let q = query(&location(&back));
    assert_eq!(q["iss"], server["issuer"].as_str().unwrap());
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &q["code"]),
            ("redirect_uri", LOOPBACK),
            ("client_id", client_id),
            ("code_verifier", &verifier),
            ("resource", resource["resource"].as_str().unwrap()),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CACHE_CONTROL], "no-store");
    let issued: Value = response.json().await.unwrap();
    assert_eq!(issued["token_type"], "Bearer");
    assert_eq!(issued["scope"], "read scan");
    let access = issued["access_token"].as_str().unwrap();
    assert!(access.starts_with("lo_"));
    // The token is the account's MCP principal, on both endpoints and /v1.
    let expected = json!({"kind": "account", "account_id": account, "credential": "mcp_token", "scopes": ["read", "scan"]});
    for path in ["/mcp/account", "/mcp"] {
        let (status, _, body) = ping_on(&app, path, Some(access)).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert_eq!(
            body["result"]["structuredContent"]["principal"], expected,
            "{path}: {body}"
        );
    }
    let rest: Value = app
        .client
        .get(app.url("/v1/ping"))
        .bearer_auth(access)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rest["principal"], expected, "{rest}");
    // The stored token is a hash: the plaintext is nowhere in the row.
    let hash: String = Sha256::digest(access.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        app.state
            .store()
            .oauth_token(&hash)
            .await
            .unwrap()
            .is_some()
    );
    app.stop().await;
}

#[tokio::test]
async fn an_oauth_token_with_read_only_cannot_scan() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (verifier, challenge) = pkce();
    let mut params = standard_params(&client_id, LOOPBACK, &challenge);
    params.retain(|(k, _)| *k != "scope");
    params.push(("scope", "read"));
    let (request_id, csrf, _) = consent(&mut browser, &authorize_url(&app, &params)).await;
    let code = query(&location(
        &decide(&mut browser, &app, &request_id, &csrf, "approve").await,
    ))["code"]
        .clone();
    let issued: Value = exchange(&app, &client_id, &code, &verifier, LOOPBACK)
        .await
        .json()
        .await
        .unwrap();
    let (status, _, body) = ping_on(
        &app,
        "/mcp/account",
        Some(issued["access_token"].as_str().unwrap()),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["result"]["structuredContent"]["principal"]["scopes"],
        json!(["read"])
    );
    // /v1 refuses the scan 403 with an insufficient_scope challenge.
    let response = app
        .client
        .post(app.url("/v1/scans"))
        .bearer_auth(issued["access_token"].as_str().unwrap())
        .json(&json!({"quote_id": "q_01JDZQ3Y3E8W9V5K2M7N4P6R8T"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        response.headers()["www-authenticate"].to_str().unwrap(),
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"scan\", resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
            app.base
        )
    );
    app.stop().await;
}

// ------------------------------------------------ client metadata documents

/// Serve metadata documents on loopback: `/good`, `/liar`, `/big`, `/moved`.
async fn metadata_server(redirect: &'static str) -> String {
    metadata_server_counted(redirect).await.0
}

/// [`metadata_server`], with how many requests it has answered; `/broken`
/// answers 500, `/any/{n}` a good document for its own URL.
async fn metadata_server_counted(
    redirect: &'static str,
) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use axum::{Router, http::HeaderMap as H, response::IntoResponse, routing::get};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let good_id = format!("{base}/good");
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let any_base = base.clone();
    let router = Router::new()
        .route(
            "/broken",
            get(|| async { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "down") }),
        )
        .route(
            "/any/{n}",
            get(move |axum::extract::Path(n): axum::extract::Path<String>| {
                let id = format!("{any_base}/any/{n}");
                async move {
                    axum::Json(json!({"client_id": id, "client_name": "Any", "redirect_uris": [redirect]}))
                }
            }),
        )
        .route(
            "/good",
            get(move || {
                let id = good_id.clone();
                async move {
                    let mut h = H::new();
                    h.insert("cache-control", "max-age=600".parse().unwrap());
                    (h, axum::Json(json!({"client_id": id, "client_name": "Metadata Agent", "redirect_uris": [redirect], "token_endpoint_auth_method": "none"})))
                        .into_response()
                }
            }),
        )
        .route(
            "/liar",
            get(move || async move {
                axum::Json(json!({"client_id": "https://claude.ai/oauth/client", "client_name": "Liar", "redirect_uris": [redirect]}))
            }),
        )
        .route(
            "/big",
            get(move || async move { format!("{{\"client_name\": \"{}\"}}", "x".repeat(20_000)) }),
        )
        .route("/moved", get(|| async { axum::response::Redirect::temporary("/good") }))
        .layer(axum::middleware::map_request(
            move |r: axum::extract::Request| {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    r
                }
            },
        ));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (base, hits)
}

async fn spawn_loopback_metadata() -> (TestApp, ManualClock) {
    spawn(|c| c.oauth.metadata_allow_loopback = true).await
}

#[tokio::test]
async fn a_metadata_document_client_completes_the_flow_without_registering() {
    let (app, _) = spawn_loopback_metadata().await;
    let base = metadata_server(LOOPBACK).await;
    let client_id = format!("{base}/good");
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let (verifier, challenge) = pkce();
    let (request_id, csrf, html) = consent(
        &mut browser,
        &authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge)),
    )
    .await;
    let host = base.trim_start_matches("http://");
    assert!(
        html.contains("Metadata Agent")
            && html.contains(&format!("published by <strong>{host}</strong>")),
        "the document's host with its port: {html}"
    );
    assert!(!html.contains("(unverified)"), "{html}");
    let code = query(&location(
        &decide(&mut browser, &app, &request_id, &csrf, "approve").await,
    ))["code"]
        .clone();
    let response = exchange(&app, &client_id, &code, &verifier, LOOPBACK).await;
    assert_eq!(response.status(), StatusCode::OK);
    let issued: Value = response.json().await.unwrap();
    assert_eq!(
        ping_on(
            &app,
            "/mcp/account",
            Some(issued["access_token"].as_str().unwrap())
        )
        .await
        .0,
        StatusCode::OK
    );
    app.stop().await;
}

async fn metadata_refused(path: &str) -> String {
    let (app, _) = spawn_loopback_metadata().await;
    let base = metadata_server(LOOPBACK).await;
    let (_, challenge) = pkce();
    let html = error_page(
        &app,
        &authorize_url(
            &app,
            &standard_params(&format!("{base}{path}"), LOOPBACK, &challenge),
        ),
    )
    .await;
    app.stop().await;
    html
}

#[tokio::test]
async fn a_metadata_document_that_does_not_name_itself_is_refused() {
    let html = metadata_refused("/liar").await;
    assert!(html.contains("must name its own URL"), "{html}");
}

#[tokio::test]
async fn a_metadata_document_that_is_too_large_is_refused() {
    let html = metadata_refused("/big").await;
    assert!(html.contains("larger than"), "{html}");
}

#[tokio::test]
async fn a_metadata_document_that_redirects_is_refused() {
    let html = metadata_refused("/moved").await;
    assert!(html.contains("redirect"), "{html}");
}

#[tokio::test]
async fn a_metadata_document_on_loopback_is_refused_without_the_test_setting() {
    let (app, _) = spawn_default().await;
    let base = metadata_server(LOOPBACK).await;
    let (_, challenge) = pkce();
    error_page(
        &app,
        &authorize_url(
            &app,
            &standard_params(&format!("{base}/good"), LOOPBACK, &challenge),
        ),
    )
    .await;
    app.stop().await;
}

// ---------------------------------------------------------------- keys page

#[tokio::test]
async fn the_keys_page_lists_connected_clients_and_activity_and_disconnect_revokes() {
    let (app, clock) = spawn_default().await;
    let (mut browser, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let issued: Value = exchange(&app, &client_id, &code, &verifier, LOOPBACK)
        .await
        .json()
        .await
        .unwrap();
    let access = issued["access_token"].as_str().unwrap();
    clock.advance_ms(1000);
    assert_eq!(
        refresh(&app, &client_id, issued["refresh_token"].as_str().unwrap())
            .await
            .status(),
        StatusCode::OK
    );
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(html.contains("class=\"oauth-client\""), "{html}");
    assert!(html.contains("Test Agent"));
    assert!(
        html.contains(&format!("{}/mcp/account", app.base)),
        "the OAuth connect URL"
    );
    let refreshed = html.find("refreshed its token").unwrap();
    let authorized = html.find("was authorized").unwrap();
    assert!(refreshed < authorized, "newest first");
    // The list asks first, on a page naming the client.
    assert!(html.contains(">Disconnect Test Agent</a>"), "{html}");
    let encoded: String = url::form_urlencoded::byte_serialize(client_id.as_bytes()).collect();
    let confirm = browser
        .get(&app.url(&format!("/keys/oauth/disconnect?client_id={encoded}")))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        confirm.contains("Disconnect Test Agent (connected "),
        "{confirm}"
    );
    assert!(confirm.contains(">Disconnect Test Agent</button>"));
    // Disconnect without the CSRF token: refused, nothing revoked.
    let refused = browser
        .post_form(
            &app.url("/keys/oauth/disconnect"),
            &[("client_id", &client_id)],
        )
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let csrf = hidden(&html, "csrf").unwrap();
    let done = browser
        .post_form(
            &app.url("/keys/oauth/disconnect"),
            &[("csrf", &csrf), ("client_id", &client_id)],
        )
        .await;
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    // Every token of the client is dead (the refreshed one included).
    assert_eq!(
        ping_on(&app, "/mcp/account", Some(access)).await.0,
        StatusCode::UNAUTHORIZED
    );
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(html.contains("id=\"oauth-no-clients\""));
    assert!(html.contains("was disconnected"));
    app.stop().await;
}

#[tokio::test]
async fn a_consent_request_left_past_its_lifetime_cannot_be_approved() {
    let (app, clock) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let (request_id, csrf, _) = consent(
        &mut browser,
        &authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge)),
    )
    .await;
    clock.advance_ms(601_000);
    let response = decide(&mut browser, &app, &request_id, &csrf, "approve").await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get(header::LOCATION).is_none());
    app.stop().await;
}

#[tokio::test]
async fn a_google_sign_in_from_authorize_comes_straight_back_to_authorize() {
    let standin = crate::oidc_standin::start(crate::oidc_standin::Options::default()).await;
    let issuer = standin.issuer.clone();
    let (app, _) = spawn(move |c| {
        c.google.issuer = issuer;
        c.google.client_id = Some(crate::oidc_standin::CLIENT_ID.to_owned());
        c.google.client_secret = Some(crate::oidc_standin::CLIENT_SECRET.to_owned());
    })
    .await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let url = authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge));
    let mut browser = Browser::new();
    let to_signin = browser.get(&url).await;
    let signin_path = to_signin.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    let signin = browser
        .get(&app.url(&signin_path))
        .await
        .text()
        .await
        .unwrap();
    let at = signin.find("href=\"/auth/google/start?next=").unwrap() + "href=\"".len();
    let start = &signin[at..at + signin[at..].find('"').unwrap()];
    let to_google = browser.get(&app.url(start)).await;
    assert_eq!(to_google.status(), StatusCode::FOUND);
    let provider = browser
        .get(to_google.headers()[header::LOCATION].to_str().unwrap())
        .await;
    let callback = provider.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    let done = browser.get(&callback).await;
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    let back = done.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(back, &url[app.base.len()..]);
    consent(&mut browser, &app.url(&back)).await;
    app.stop().await;
}

#[tokio::test]
async fn a_code_exchanged_twice_at_once_issues_once_and_the_race_revokes_it() {
    let (app, _) = spawn_default().await;
    let (_, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let (a, b) = tokio::join!(
        exchange(&app, &client_id, &code, &verifier, LOOPBACK),
        exchange(&app, &client_id, &code, &verifier, LOOPBACK),
    );
    let (won, lost) = if a.status() == StatusCode::OK {
        (a, b)
    } else {
        (b, a)
    };
    assert_eq!(won.status(), StatusCode::OK);
    oauth_error(lost, StatusCode::BAD_REQUEST, "invalid_grant").await;
    let issued: Value = won.json().await.unwrap();
    let (status, _, _) = ping_on(&app, "/mcp/account", issued["access_token"].as_str()).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "a second use revokes what the first got"
    );
    app.stop().await;
}

// ------------------------------------------------------- review hardening

fn hits(counter: &std::sync::atomic::AtomicUsize) -> usize {
    counter.load(std::sync::atomic::Ordering::SeqCst)
}

#[tokio::test]
async fn portal_pages_and_the_consent_page_refuse_to_be_framed() {
    let (app, _) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let consent_url = authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge));
    for url in [
        consent_url,
        app.url("/signin"),
        app.url("/keys"),
        app.url("/wallets"),
        app.url("/"),
    ] {
        let response = browser.get(&url).await;
        let headers = response.headers();
        assert_eq!(headers["x-frame-options"], "DENY", "{url}");
        let csp: Vec<_> = headers.get_all("content-security-policy").iter().collect();
        assert_eq!(csp.len(), 1, "one policy on {url}");
        assert!(
            csp[0].to_str().unwrap().contains("frame-ancestors 'none'"),
            "{url}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn public_oauth_endpoints_answer_cors_preflight_and_pages_do_not() {
    let (app, _) = spawn_default().await;
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp/account",
        "/register",
        "/token",
        "/revoke",
    ] {
        let preflight = app
            .client
            .request(reqwest::Method::OPTIONS, app.url(path))
            .header("origin", "http://localhost:6274")
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type")
            .send()
            .await
            .unwrap();
        assert!(
            preflight.status().is_success(),
            "{path}: {}",
            preflight.status()
        );
        let h = preflight.headers();
        assert_eq!(h["access-control-allow-origin"], "*", "{path}");
        assert!(
            h["access-control-allow-methods"]
                .to_str()
                .unwrap()
                .contains("POST")
        );
        assert!(
            h["access-control-allow-headers"]
                .to_str()
                .unwrap()
                .contains("content-type")
        );
        assert!(
            h.get("access-control-allow-credentials").is_none(),
            "{path}"
        );
    }
    // Real answers carry it too, errors included.
    let doc = app
        .client
        .get(app.url("/.well-known/oauth-authorization-server"))
        .header("origin", "http://localhost:6274")
        .send()
        .await
        .unwrap();
    assert_eq!(doc.headers()["access-control-allow-origin"], "*");
    let refused = token(&app, &[("grant_type", "password")]).await;
    assert_eq!(refused.headers()["access-control-allow-origin"], "*");
    // Never on /authorize or portal pages.
    for path in ["/authorize", "/signin", "/keys"] {
        let response = app
            .client
            .get(app.url(path))
            .header("origin", "http://localhost:6274")
            .send()
            .await
            .unwrap();
        assert!(
            response
                .headers()
                .get("access-control-allow-origin")
                .is_none(),
            "{path}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn registering_a_scheme_an_os_hands_to_a_handler_is_refused() {
    let (app, _) = spawn_default().await;
    for uri in [
        "ms-msdt:/id",
        "search-ms:query=x",
        "mailto:a@example.com",
        "myapp://callback",
        // A dot is not a reverse domain: neither begins with a TLD.
        "x-apple.systempreferences:com.apple.preference.security",
        "ms-msdt.x:/cb",
        // A domain only the OS vendor controls.
        "microsoft.windows.camera:/cb",
    ] {
        let response = register_raw(
            &app,
            &json!({"redirect_uris": [uri], "token_endpoint_auth_method": "none"}),
        )
        .await;
        oauth_error(response, StatusCode::BAD_REQUEST, "invalid_redirect_uri").await;
    }
    register(&app, &["cursor://anysphere.cursor-mcp/oauth/callback"]).await;
    register(&app, &["com.example.agent:/oauth/callback"]).await;
    app.stop().await;
}

#[tokio::test]
async fn a_token_request_for_our_other_resource_than_the_grants_is_invalid_target() {
    let (app, _) = spawn_default().await;
    // The grant is for /mcp (no resource at /authorize).
    let (_, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let account = format!("{}/mcp/account", app.base);
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", LOOPBACK),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
            ("resource", &account),
        ],
    )
    .await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_target").await;
    // The same resource as the grant's is fine, and so on refresh.
    let mcp = format!("{}/mcp", app.base);
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", LOOPBACK),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
            ("resource", &mcp),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let issued: Value = response.json().await.unwrap();
    let refresh_token = issued["refresh_token"].as_str().unwrap();
    let response = token(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", &client_id),
            ("resource", &account),
        ],
    )
    .await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_target").await;
    app.stop().await;
}

async fn confidential(app: &TestApp, method: &str) -> (String, String) {
    let response = register_raw(
        app,
        &json!({"client_name": "Backend", "redirect_uris": [LOOPBACK], "token_endpoint_auth_method": method}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let body: Value = response.json().await.unwrap();
    (
        body["client_id"].as_str().unwrap().to_owned(),
        body["client_secret"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn a_client_must_send_its_secret_the_way_it_registered() {
    let (app, _) = spawn_default().await;
    let basic = |id: &str, secret: &str| {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
        )
    };
    // Registered client_secret_basic, sends it in the body: refused.
    let (id, secret) = confidential(&app, "client_secret_basic").await;
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", "x"),
            ("client_id", &id),
            ("client_secret", &secret),
        ],
    )
    .await;
    oauth_error(response, StatusCode::UNAUTHORIZED, "invalid_client").await;
    // The registered way gets as far as judging the code.
    let response = app
        .client
        .post(app.url("/token"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::AUTHORIZATION, basic(&id, &secret))
        .body("grant_type=authorization_code&code=x")
        .send()
        .await
        .unwrap();
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    // Registered client_secret_post, sends Basic: refused.
    let (id, secret) = confidential(&app, "client_secret_post").await;
    let response = app
        .client
        .post(app.url("/token"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::AUTHORIZATION, basic(&id, &secret))
        .body("grant_type=authorization_code&code=x")
        .send()
        .await
        .unwrap();
    oauth_error(response, StatusCode::UNAUTHORIZED, "invalid_client").await;
    app.stop().await;
}

#[tokio::test]
async fn a_client_name_loses_bidi_and_zero_width_characters() {
    let (app, _) = spawn_default().await;
    let response = register_raw(
        &app,
        &json!({
            "client_name": "Cla\u{200B}ude \u{202E}tnegA\u{202C}\u{2066}x\u{2069}\u{FEFF}",
            "redirect_uris": [LOOPBACK],
            "token_endpoint_auth_method": "none",
        }),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["client_name"], "Claude tnegAx");
    app.stop().await;
}

#[tokio::test]
async fn a_decision_for_a_client_purged_meanwhile_is_refused_and_issues_nothing() {
    let (app, clock) = spawn(|c| c.oauth.unused_client_ttl_secs = 60).await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (_, challenge) = pkce();
    let (request_id, csrf, _) = consent(
        &mut browser,
        &authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge)),
    )
    .await;
    clock.advance_ms(61_000);
    register(&app, &[CLAUDE_AI]).await; // purges the unused client
    assert!(
        app.state
            .store()
            .oauth_client(&client_id)
            .await
            .unwrap()
            .is_none()
    );
    let response = decide(&mut browser, &app, &request_id, &csrf, "approve").await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get(header::LOCATION).is_none());
    app.stop().await;
}

#[tokio::test]
async fn token_and_revoke_never_fetch_a_metadata_document() {
    let (app, _) = spawn_loopback_metadata().await;
    let (base, counter) = metadata_server_counted(LOOPBACK).await;
    let client_id = format!("{base}/good");
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", "x"),
            ("client_id", &client_id),
        ],
    )
    .await;
    oauth_error(response, StatusCode::UNAUTHORIZED, "invalid_client").await;
    let response = app
        .client
        .post(app.url("/revoke"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string([("token", "x"), ("client_id", &client_id)]).unwrap())
        .send()
        .await
        .unwrap();
    oauth_error(response, StatusCode::UNAUTHORIZED, "invalid_client").await;
    assert_eq!(hits(&counter), 0, "nothing fetched");
    assert!(
        app.state
            .store()
            .oauth_client(&client_id)
            .await
            .unwrap()
            .is_none()
    );
    app.stop().await;
}

#[tokio::test]
async fn metadata_document_fetches_are_rate_limited_per_client_ip() {
    let (app, _) = spawn(|c| {
        c.oauth.metadata_allow_loopback = true;
        c.oauth.metadata_fetch_burst = 2;
        c.oauth.metadata_fetch_per_hour = 1;
    })
    .await;
    let (base, counter) = metadata_server_counted(LOOPBACK).await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let (_, challenge) = pkce();
    for n in 0..2 {
        let id = format!("{base}/any/{n}");
        consent(
            &mut browser,
            &authorize_url(&app, &standard_params(&id, LOOPBACK, &challenge)),
        )
        .await;
    }
    assert_eq!(hits(&counter), 2);
    let id = format!("{base}/any/third");
    let response = browser
        .get(&authorize_url(
            &app,
            &standard_params(&id, LOOPBACK, &challenge),
        ))
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let html = response.text().await.unwrap();
    assert!(
        html.contains("too many client metadata documents"),
        "{html}"
    );
    assert_eq!(hits(&counter), 2, "the third was not fetched");
    app.stop().await;
}

#[tokio::test]
async fn a_failed_metadata_fetch_is_remembered_for_sixty_seconds() {
    let (app, clock) = spawn_loopback_metadata().await;
    let (base, counter) = metadata_server_counted(LOOPBACK).await;
    let id = format!("{base}/broken");
    let (_, challenge) = pkce();
    let url = authorize_url(&app, &standard_params(&id, LOOPBACK, &challenge));
    error_page(&app, &url).await;
    assert_eq!(hits(&counter), 1);
    clock.advance_ms(30_000);
    let html = error_page(&app, &url).await;
    assert!(html.contains("a moment ago"), "{html}");
    assert_eq!(hits(&counter), 1, "not fetched again within the minute");
    clock.advance_ms(31_000);
    error_page(&app, &url).await;
    assert_eq!(hits(&counter), 2, "fetched again after it");
    app.stop().await;
}

#[tokio::test]
async fn an_unused_metadata_client_is_purged_once_its_cache_expires_and_a_used_one_kept() {
    let (app, clock) = spawn_loopback_metadata().await;
    let base = metadata_server(LOOPBACK).await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let (_, challenge) = pkce();
    let unused = format!("{base}/any/unused");
    consent(
        &mut browser,
        &authorize_url(&app, &standard_params(&unused, LOOPBACK, &challenge)),
    )
    .await;
    let used = format!("{base}/good");
    let (request_id, csrf, _) = consent(
        &mut browser,
        &authorize_url(&app, &standard_params(&used, LOOPBACK, &challenge)),
    )
    .await;
    decide(&mut browser, &app, &request_id, &csrf, "approve").await;
    let store = app.state.store();
    assert!(store.oauth_client(&unused).await.unwrap().is_some());
    clock.advance_ms(601_000); // past both documents' max-age (300, 600)
    register(&app, &[CLAUDE_AI]).await; // a registration purges
    assert!(store.oauth_client(&unused).await.unwrap().is_none());
    assert!(store.oauth_client(&used).await.unwrap().is_some());
    app.stop().await;
}

#[tokio::test]
async fn the_server_card_names_mcp_account_as_the_oauth_endpoint() {
    let (app, _) = spawn_default().await;
    let card = get_json(&app, "/.well-known/mcp/server-card.json").await;
    assert_eq!(
        card["authentication"]["oauth"]["endpoint"],
        format!("{}/mcp/account", app.base)
    );
    app.stop().await;
}

#[tokio::test]
async fn a_token_request_repeats_redirect_uri_only_when_the_authorization_request_named_it() {
    let (app, _) = spawn_default().await;
    // Named at /authorize: required at /token.
    let (_, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let without = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("client_id", client_id.as_str()),
        ("code_verifier", verifier.as_str()),
    ];
    let response = token(&app, &without).await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    // Not named (the client's only one was used): not required.
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let client_id = register(&app, &[LOOPBACK]).await;
    let (verifier, challenge) = pkce();
    let mut params = standard_params(&client_id, LOOPBACK, &challenge);
    params.retain(|(k, _)| *k != "redirect_uri");
    let (request_id, csrf, _) = consent(&mut browser, &authorize_url(&app, &params)).await;
    let response = decide(&mut browser, &app, &request_id, &csrf, "approve").await;
    let code = query(&location(&response))["code"].clone();
    let response = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    app.stop().await;
}

/// The stored form of a token: what the store looks it up by.
fn token_hash(plaintext: &str) -> String {
    Sha256::digest(plaintext.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A server whose portal sessions outlast every clock jump below.
async fn spawn_long_sessions() -> (TestApp, ManualClock) {
    spawn(|c| {
        c.session.idle_secs = 400 * 24 * 3600;
        c.session.absolute_secs = 400 * 24 * 3600;
    })
    .await
}

#[tokio::test]
async fn a_connection_ends_at_its_maximum_age_however_often_it_refreshes() {
    let (app, clock) = spawn(|c| c.oauth.grant_max_age_secs = 5400).await;
    let (client_id, first) = tokens(&app).await;
    assert_eq!(first["expires_in"], 3600);
    clock.advance_ms(3000 * 1000);
    let response = refresh(&app, &client_id, first["refresh_token"].as_str().unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let second: Value = response.json().await.unwrap();
    assert_eq!(
        second["expires_in"], 2400,
        "the new access token ends with the connection, not an hour later"
    );
    clock.advance_ms(2400 * 1000);
    let access = second["access_token"].as_str().unwrap();
    assert_eq!(
        ping_on(&app, "/mcp/account", Some(access)).await.0,
        StatusCode::UNAUTHORIZED
    );
    let response = refresh(&app, &client_id, second["refresh_token"].as_str().unwrap()).await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn the_keys_page_drops_a_connection_whose_tokens_all_expired() {
    let (app, clock) = spawn_long_sessions().await;
    let (mut browser, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let issued = exchange(&app, &client_id, &code, &verifier, LOOPBACK).await;
    assert_eq!(issued.status(), StatusCode::OK);
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(html.contains("class=\"oauth-client\""), "{html}");
    // The access token ran out, the refresh token still works: connected.
    clock.advance_ms(3600 * 1000 + 1);
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(html.contains("class=\"oauth-client\""), "{html}");
    // The refresh token ran out too: nothing left to disconnect.
    clock.advance_ms(30 * 24 * 3600 * 1000);
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(html.contains("id=\"oauth-no-clients\""), "{html}");
    assert!(html.contains("was authorized"), "the activity stays");
    app.stop().await;
}

#[tokio::test]
async fn maintenance_forgets_expired_tokens_spent_grants_and_old_activity() {
    let (app, clock) = spawn_long_sessions().await;
    let (mut browser, client_id, code, verifier) = approved(&app, LOOPBACK).await;
    let issued: Value = exchange(&app, &client_id, &code, &verifier, LOOPBACK)
        .await
        .json()
        .await
        .unwrap();
    let store = app.state.store();
    let access = token_hash(issued["access_token"].as_str().unwrap());
    let refresh_hash = token_hash(issued["refresh_token"].as_str().unwrap());
    assert!(store.oauth_token(&access).await.unwrap().is_some());
    // Nothing is due yet: a pass deletes nothing of this grant.
    let pass = server::worker::maintenance_pass(&app.state).await.unwrap();
    assert_eq!(pass.oauth, 0, "{pass:?}");
    // Past the refresh token's 30 days (and the request's, the code's and
    // the margin): both tokens, the grant and the consent request go.
    clock.advance_ms(30 * 24 * 3600 * 1000 + 1000);
    let pass = server::worker::maintenance_pass(&app.state).await.unwrap();
    assert_eq!(
        pass.oauth, 4,
        "two tokens, the grant, the request: {pass:?}"
    );
    assert!(store.oauth_token(&access).await.unwrap().is_none());
    assert!(store.oauth_token(&refresh_hash).await.unwrap().is_none());
    let code_hash = token_hash(&code);
    assert!(
        store
            .oauth_grant_by_code(&code_hash)
            .await
            .unwrap()
            .is_none()
    );
    // The activity outlives the tokens until its own retention (180 days).
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(html.contains("was authorized"), "{html}");
    clock.advance_ms(150 * 24 * 3600 * 1000);
    let pass = server::worker::maintenance_pass(&app.state).await.unwrap();
    assert_eq!(pass.oauth, 1, "the authorization line: {pass:?}");
    let html = browser.get(&app.url("/keys")).await.text().await.unwrap();
    assert!(!html.contains("was authorized"), "{html}");
    app.stop().await;
}

#[tokio::test]
async fn maintenance_keeps_a_rotated_refresh_token_so_its_reuse_still_revokes_the_family() {
    let (app, clock) = spawn_default().await;
    let (client_id, first) = tokens(&app).await;
    clock.advance_ms(1000);
    let second: Value = refresh(&app, &client_id, first["refresh_token"].as_str().unwrap())
        .await
        .json()
        .await
        .unwrap();
    // A day later the first access token expired and was forgotten; the
    // rotated-out refresh token is still inside its 30 days: kept.
    clock.advance_ms(24 * 3600 * 1000);
    let pass = server::worker::maintenance_pass(&app.state).await.unwrap();
    assert_eq!(
        pass.oauth, 3,
        "the two expired access tokens and the consent request: {pass:?}"
    );
    let reused = refresh(&app, &client_id, first["refresh_token"].as_str().unwrap()).await;
    oauth_error(reused, StatusCode::BAD_REQUEST, "invalid_grant").await;
    let response = refresh(&app, &client_id, second["refresh_token"].as_str().unwrap()).await;
    oauth_error(response, StatusCode::BAD_REQUEST, "invalid_grant").await;
    // The revoked family's tokens go at the next pass.
    let pass = server::worker::maintenance_pass(&app.state).await.unwrap();
    assert_eq!(
        pass.oauth, 3,
        "both refresh tokens of the revoked grant, and the grant: {pass:?}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_rotated_refresh_token_presented_after_its_expiry_still_revokes_a_live_family() {
    // A thief refreshes with a stolen token on day 29; the owner comes back
    // with the same (now rotated-out and expired) token on day 31. The
    // maintenance pass in between must not have forgotten it.
    let (app, clock) = spawn_default().await;
    let (client_id, first) = tokens(&app).await;
    clock.advance_ms(29 * 24 * 3600 * 1000);
    let thief: Value = refresh(&app, &client_id, first["refresh_token"].as_str().unwrap())
        .await
        .json()
        .await
        .unwrap();
    clock.advance_ms(2 * 24 * 3600 * 1000);
    server::worker::maintenance_pass(&app.state).await.unwrap();
    let owner = refresh(&app, &client_id, first["refresh_token"].as_str().unwrap()).await;
    oauth_error(owner, StatusCode::BAD_REQUEST, "invalid_grant").await;
    let stolen = refresh(&app, &client_id, thief["refresh_token"].as_str().unwrap()).await;
    oauth_error(stolen, StatusCode::BAD_REQUEST, "invalid_grant").await;
    app.stop().await;
}

#[tokio::test]
async fn a_hostile_client_name_is_text_on_the_disconnect_page_never_markup() {
    let (app, _clock) = spawn_default().await;
    let mut browser = Browser::new();
    sign_in(&mut browser, &app).await;
    let name = "</title><meta http-equiv=refresh content=\"0;url=https://evil.example/\">";
    let registered = register_raw(
        &app,
        &json!({
            "client_name": name,
            "redirect_uris": [LOOPBACK],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }),
    )
    .await;
    assert_eq!(registered.status(), StatusCode::CREATED);
    let body: Value = registered.json().await.unwrap();
    let client_id = body["client_id"].as_str().unwrap().to_owned();
    let (verifier, challenge) = pkce();
    let url = authorize_url(&app, &standard_params(&client_id, LOOPBACK, &challenge));
    // The consent page posts to this origin, but its answer redirects to
    // the client: it alone has no form-action.
    let asked = browser.get(&url).await;
    let csp = asked.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(!csp.contains("form-action"), "{csp}");
    let html = asked.text().await.unwrap();
    assert!(!html.contains("<meta http-equiv"), "{html}");
    let (request_id, csrf, _) = consent(&mut browser, &url).await;
    let approved = decide(&mut browser, &app, &request_id, &csrf, "approve").await;
    let code = query(&location(&approved))["code"].clone();
    let issued = exchange(&app, &client_id, &code, &verifier, LOOPBACK).await;
    assert_eq!(issued.status(), StatusCode::OK);
    let encoded: String = url::form_urlencoded::byte_serialize(client_id.as_bytes()).collect();
    let confirm = browser
        .get(&app.url(&format!("/keys/oauth/disconnect?client_id={encoded}")))
        .await;
    assert_eq!(confirm.status(), StatusCode::OK);
    let csp = confirm.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("form-action 'self'"), "{csp}");
    let html = confirm.text().await.unwrap();
    assert_eq!(crate::portal::title_of(&html), "Ledger: disconnect an app");
    assert!(!html.contains("<meta http-equiv"), "{html}");
    assert!(
        html.contains("Disconnect &lt;/title&gt;"),
        "named, as text: {html}"
    );
}
