//! A local stand-in for Google's OpenID Connect provider, for tests and the
//! end-to-end browser suite (through `examples/oidc_standin.rs`): discovery,
//! JWKS, `/authorize` (no login page: it answers 302 straight back to the
//! redirect URI with a code and the state) and `/token` (checks the client,
//! the code, the redirect URI and the PKCE verifier, and issues an RS256 ID
//! token carrying the nonce `/authorize` was given).
//!
//! [`Fault`] makes it misbehave the ways a real provider or an attacker
//! could, so each refusal of `auth::oidc` has a test. The RSA keys next to
//! this file (`oidc_standin_*key_TEST_ONLY.pem`) are TEST-ONLY keys
//! generated for this stand-in; they protect nothing.
#![allow(dead_code)]

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use axum::{
    Json, Router,
    extract::{Query, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use base64::Engine as _;
use openidconnect::{
    Audience, EmptyAdditionalClaims, EndUserEmail, IssuerUrl, JsonWebKeyId, Nonce,
    PrivateSigningKey, StandardClaims, SubjectIdentifier,
    core::{
        CoreIdToken, CoreIdTokenClaims, CoreJsonWebKeySet, CoreJwsSigningAlgorithm,
        CoreRsaPrivateSigningKey,
    },
};
use rand::{Rng, distributions::Alphanumeric};
use serde_json::json;
use sha2::{Digest, Sha256};

/// TEST-ONLY signing key, published in the JWKS as `test-key-1`.
const KEY_PEM: &str = include_str!("oidc_standin_key_TEST_ONLY.pem");
/// TEST-ONLY second key: not in the JWKS (a forged signature), or published
/// as `test-key-2` after a rotation.
const OTHER_KEY_PEM: &str = include_str!("oidc_standin_other_key_TEST_ONLY.pem");
const KEY_ID: &str = "test-key-1";
const OTHER_KEY_ID: &str = "test-key-2";

pub const CLIENT_ID: &str = "ledger-test-client.apps.example";
pub const CLIENT_SECRET: &str = "ledger-test-secret";
pub const SUBJECT: &str = "100000000000000000001";
pub const EMAIL: &str = "tester@example.com";

/// How the stand-in misbehaves in the ID tokens it issues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fault {
    #[default]
    None,
    /// `aud` is another client.
    WrongAudience,
    /// `iss` is another issuer.
    WrongIssuer,
    /// `exp` is an hour ago.
    Expired,
    /// Signed by a key that is not in the JWKS, under the published key id.
    BadSignature,
    /// `nonce` is not the one `/authorize` was given.
    OtherNonce,
    /// Signed by a new key (`test-key-2`) that the JWKS now also publishes,
    /// as after a key rotation.
    RotatedKey,
    /// Discovery answers 503.
    DiscoveryDown,
}

/// Options for [`start`].
#[derive(Clone, Debug)]
pub struct Options {
    /// 0 picks a free port.
    pub port: u16,
    pub client_id: String,
    pub client_secret: String,
    /// The subject of a sign-in without `login_hint`.
    pub subject: String,
    pub email: String,
    pub fault: Fault,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            port: 0,
            client_id: CLIENT_ID.to_owned(),
            client_secret: CLIENT_SECRET.to_owned(),
            subject: SUBJECT.to_owned(),
            email: EMAIL.to_owned(),
            fault: Fault::None,
        }
    }
}

/// A running stand-in. Stops when dropped.
pub struct Standin {
    /// `http://127.0.0.1:{port}`, the issuer and base of every endpoint.
    pub issuer: String,
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Standin {
    /// Change how later tokens (and discovery) misbehave.
    pub fn set_fault(&self, fault: Fault) {
        *lock(&self.shared.fault) = fault;
    }

    /// How many discovery documents were served.
    pub fn discovery_requests(&self) -> usize {
        self.shared.discoveries.load(Ordering::SeqCst)
    }

    /// How many JWKS documents were served.
    pub fn jwks_requests(&self) -> usize {
        self.shared.jwks_fetches.load(Ordering::SeqCst)
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Pending {
    nonce: String,
    code_challenge: String,
    redirect_uri: String,
    subject: String,
}

struct Shared {
    issuer: String,
    options: Options,
    fault: Mutex<Fault>,
    codes: Mutex<HashMap<String, Pending>>,
    key: CoreRsaPrivateSigningKey,
    forged_key: CoreRsaPrivateSigningKey,
    rotated_key: CoreRsaPrivateSigningKey,
    discoveries: AtomicUsize,
    jwks_fetches: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn signing_key(pem: &str, kid: &str) -> Result<CoreRsaPrivateSigningKey, String> {
    CoreRsaPrivateSigningKey::from_pem(pem, Some(JsonWebKeyId::new(kid.to_owned())))
}

/// Start the stand-in on 127.0.0.1.
pub async fn start(options: Options) -> Standin {
    match try_start(options).await {
        Ok(standin) => standin,
        Err(e) => panic!("OIDC stand-in: {e}"),
    }
}

/// [`start`], answering an error instead of panicking.
pub async fn try_start(options: Options) -> Result<Standin, String> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", options.port))
        .await
        .map_err(|e| format!("bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let issuer = format!("http://{addr}");
    let shared = Arc::new(Shared {
        issuer: issuer.clone(),
        fault: Mutex::new(options.fault),
        options,
        codes: Mutex::default(),
        key: signing_key(KEY_PEM, KEY_ID)?,
        forged_key: signing_key(OTHER_KEY_PEM, KEY_ID)?,
        rotated_key: signing_key(OTHER_KEY_PEM, OTHER_KEY_ID)?,
        discoveries: AtomicUsize::new(0),
        jwks_fetches: AtomicUsize::new(0),
    });
    let router = Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/jwks", get(jwks))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(shared.clone());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(Standin {
        issuer,
        addr,
        shared,
        task,
    })
}

async fn discovery(State(s): State<Arc<Shared>>) -> Response {
    s.discoveries.fetch_add(1, Ordering::SeqCst);
    if *lock(&s.fault) == Fault::DiscoveryDown {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let issuer = &s.issuer;
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid", "email", "profile"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "claims_supported": ["aud", "email", "email_verified", "exp", "iat", "iss", "sub"],
        "code_challenge_methods_supported": ["S256"],
    }))
    .into_response()
}

async fn jwks(State(s): State<Arc<Shared>>) -> Response {
    s.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let mut keys = vec![s.key.as_verification_key()];
    if *lock(&s.fault) == Fault::RotatedKey {
        keys.push(s.rotated_key.as_verification_key());
    }
    Json(CoreJsonWebKeySet::new(keys)).into_response()
}

fn oauth_error(status: StatusCode, error: &str) -> Response {
    (status, Json(json!({ "error": error }))).into_response()
}

fn random(n: usize) -> String {
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(n)
        .map(char::from)
        .collect()
}

async fn authorize(
    State(s): State<Arc<Shared>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let param = |k: &str| q.get(k).cloned().unwrap_or_default();
    if param("client_id") != s.options.client_id {
        return (StatusCode::BAD_REQUEST, "unknown client_id").into_response();
    }
    if param("response_type") != "code"
        || param("code_challenge_method") != "S256"
        || param("code_challenge").is_empty()
        || param("nonce").is_empty()
        || param("state").is_empty()
        || !param("scope").split(' ').any(|s| s == "openid")
    {
        return (
            StatusCode::BAD_REQUEST,
            "needs response_type=code, openid scope, state, nonce and an S256 code_challenge",
        )
            .into_response();
    }
    let redirect_uri = param("redirect_uri");
    let Ok(mut location) = url::Url::parse(&redirect_uri) else {
        return (StatusCode::BAD_REQUEST, "bad redirect_uri").into_response();
    };
    let code = random(32);
    let subject = q
        .get("login_hint")
        .cloned()
        .unwrap_or_else(|| s.options.subject.clone());
    lock(&s.codes).insert(
        code.clone(),
        Pending {
            nonce: param("nonce"),
            code_challenge: param("code_challenge"),
            redirect_uri,
            subject,
        },
    );
    location
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &param("state"));
    (
        StatusCode::FOUND,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

/// The client's id and secret, from HTTP Basic (RFC 6749 §2.3.1: each
/// form-urlencoded) or the form body.
fn client_credentials(
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Option<(String, String)> {
    if let Some(basic) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic)
            .ok()?;
        let decoded = String::from_utf8(decoded).ok()?;
        let (id, secret) = decoded.split_once(':')?;
        let unescape = |s: &str| -> String {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        };
        return Some((unescape(id), unescape(secret)));
    }
    Some((
        form.get("client_id")?.clone(),
        form.get("client_secret")?.clone(),
    ))
}

async fn token(State(s): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    match client_credentials(&headers, &form) {
        Some((id, secret)) if id == s.options.client_id && secret == s.options.client_secret => {}
        _ => return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client"),
    }
    if form.get("grant_type").map(String::as_str) != Some("authorization_code") {
        return oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type");
    }
    // A code is good once, whatever happens next.
    let Some(pending) = form
        .get("code")
        .and_then(|code| lock(&s.codes).remove(code))
    else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
    };
    if form.get("redirect_uri") != Some(&pending.redirect_uri) {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
    }
    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
    let challenge =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier));
    if challenge != pending.code_challenge {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
    }
    match id_token(&s, &pending) {
        Ok(id_token) => Json(json!({
            "access_token": random(40),
            "token_type": "Bearer",
            "expires_in": 3599,
            "scope": "openid email",
            "id_token": id_token,
        }))
        .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

fn id_token(s: &Shared, pending: &Pending) -> Result<String, String> {
    let fault = *lock(&s.fault);
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| e.to_string())?;
    let now = chrono::DateTime::<chrono::Utc>::from_timestamp(
        i64::try_from(since_epoch.as_secs()).map_err(|e| e.to_string())?,
        0,
    )
    .ok_or("the clock is out of range")?;
    let issuer = match fault {
        Fault::WrongIssuer => "https://issuer.example".to_owned(),
        _ => s.issuer.clone(),
    };
    let audience = match fault {
        Fault::WrongAudience => "another-client.apps.example".to_owned(),
        _ => s.options.client_id.clone(),
    };
    let (issued, expires) = match fault {
        Fault::Expired => (
            now - chrono::Duration::hours(2),
            now - chrono::Duration::hours(1),
        ),
        _ => (now, now + chrono::Duration::hours(1)),
    };
    let nonce = match fault {
        Fault::OtherNonce => "another-nonce".to_owned(),
        _ => pending.nonce.clone(),
    };
    let claims = CoreIdTokenClaims::new(
        IssuerUrl::new(issuer).map_err(|e| e.to_string())?,
        vec![Audience::new(audience)],
        expires,
        issued,
        StandardClaims::new(SubjectIdentifier::new(pending.subject.clone()))
            .set_email(Some(EndUserEmail::new(s.options.email.clone())))
            .set_email_verified(Some(true)),
        EmptyAdditionalClaims {},
    )
    .set_nonce(Some(Nonce::new(nonce)));
    let key = match fault {
        Fault::BadSignature => &s.forged_key,
        Fault::RotatedKey => &s.rotated_key,
        _ => &s.key,
    };
    let token = CoreIdToken::new(
        claims,
        key,
        CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
        None,
        None,
    )
    .map_err(|e| e.to_string())?;
    Ok(token.to_string())
}
