//! OAuth's HTTP endpoints, as thin adapters over the protocol in `oauth`
//! (`oauth::flow`, `oauth::clients`): the discovery documents (RFC 9728,
//! RFC 8414), `POST /register`, `POST /token` and `POST /revoke`, and the
//! CORS of those public endpoints. Each handler parses, calls one protocol
//! function over `Services::oauth()`, and renders: JSON errors in RFC 6749
//! §5.2 shape with `Cache-Control: no-store`. The consent page
//! (`/authorize`) is a person's page and lives in the portal
//! (`portal::consent`). Routes are declared in `startup::router`.

use axum::{
    body::Body,
    extract::{ConnectInfo, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};
use std::net::SocketAddr;

use crate::{
    http::no_store,
    oauth::{
        OAuthError,
        clients::{self, Credentials, RegistrationRequest},
        flow::{self, TokenParams},
    },
    state::AppState,
    store::{RateDecision, RateRule},
};

/// The largest body `/register`, `/token` and `/revoke` read.
const MAX_BODY: usize = 16 * 1024;

/// An error in RFC 6749 §5.2 shape.
pub fn error_response(err: &OAuthError) -> Response {
    if let OAuthError::Store(e) = err {
        tracing::error!(error = %e, "OAuth endpoint storage failure");
    }
    let status = StatusCode::from_u16(err.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let body = json!({ "error": err.code(), "error_description": err.description() });
    let mut response = no_store((status, axum::Json(body)).into_response());
    response
        .extensions_mut()
        .insert(crate::error::Refused(err.code()));
    response
}

// ---- CORS ----------------------------------------------------------------

/// CORS of the public OAuth endpoints (routed in `startup`): a preflight
/// `OPTIONS` is answered 204 here; every response allows any origin, with
/// no credentials (these endpoints take no cookies, and a token request's
/// only secret is in its own body or `Authorization` header).
pub async fn public_cors(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let mut response = if request.method() == axum::http::Method::OPTIONS {
        StatusCode::NO_CONTENT.into_response()
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type, mcp-protocol-version"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("www-authenticate, retry-after"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    response
}

// ---- discovery -----------------------------------------------------------

/// The protected-resource metadata of `resource` (RFC 9728 §2).
pub fn protected_resource_json(state: &AppState, resource: &str) -> Value {
    let public = state.public_url();
    json!({
        "resource": resource,
        "authorization_servers": [public],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["read", "scan"],
        "resource_name": "Ledger",
        "resource_documentation": format!("{public}/llms.txt"),
    })
}

/// `GET /.well-known/oauth-protected-resource` and its `/mcp` path form.
pub async fn protected_resource_mcp(State(state): State<AppState>) -> Response {
    let resource = state.oauth().settings.mcp_resource();
    axum::Json(protected_resource_json(&state, &resource)).into_response()
}

/// `GET /.well-known/oauth-protected-resource/mcp/account`.
pub async fn protected_resource_account(State(state): State<AppState>) -> Response {
    let resource = state.oauth().settings.account_resource();
    axum::Json(protected_resource_json(&state, &resource)).into_response()
}

/// The authorization server metadata (RFC 8414 §2).
pub fn authorization_server_json(state: &AppState) -> Value {
    let base = state.public_url();
    json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "revocation_endpoint": format!("{base}/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "scopes_supported": ["read", "scan"],
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
        "service_documentation": format!("{base}/llms.txt"),
    })
}

/// `GET /.well-known/oauth-authorization-server`.
pub async fn authorization_server(State(state): State<AppState>) -> Response {
    axum::Json(authorization_server_json(&state)).into_response()
}

// ---- registration --------------------------------------------------------

fn is_media(headers: &HeaderMap, mime: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(mime))
}

async fn read(body: Body) -> Result<Bytes, Response> {
    crate::http::read_body(body, MAX_BODY).await.map_err(|_| {
        error_response(&OAuthError::request(
            "the request body is too large or unreadable",
        ))
    })
}

/// `POST /register` (RFC 7591): rate limited per client IP.
pub async fn register(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let ip = crate::http::client_key(&state, peer, &headers);
    let config = &state.config().oauth;
    let rule = RateRule::per_hour(config.register_per_hour, config.register_burst);
    match state
        .store()
        .take_rate_tokens(&format!("oauth-register:{ip}"), state.now_ms(), rule, 1)
        .await
    {
        Ok(RateDecision::Allowed) => {}
        Ok(RateDecision::Limited { retry_after_ms }) => {
            tracing::info!(%ip, "refused a registration: rate limited");
            let secs = u64::try_from(retry_after_ms.max(1))
                .unwrap_or(1)
                .div_ceil(1000)
                .max(1);
            let mut response = no_store(
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    axum::Json(json!({
                        "error": "temporarily_unavailable",
                        "error_description": "too many registrations from this address; retry later",
                    })),
                )
                    .into_response(),
            );
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
            return response;
        }
        Err(err) => return error_response(&OAuthError::Store(err)),
    }
    if !is_media(&headers, "application/json") {
        return error_response(&OAuthError::InvalidClientMetadata(
            "send the client metadata as Content-Type: application/json".to_owned(),
        ));
    }
    let bytes = match read(body).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let request: RegistrationRequest = match serde_json::from_slice(&bytes) {
        Ok(request) => request,
        Err(e) => {
            return error_response(&OAuthError::InvalidClientMetadata(format!(
                "the body is not client metadata: {e}"
            )));
        }
    };
    let result = clients::register(state.oauth(), &request).await;
    match result {
        Ok(registered) => no_store((StatusCode::CREATED, axum::Json(registered)).into_response()),
        Err(err) => error_response(&err),
    }
}

// ---- token and revoke ----------------------------------------------------

/// The client credentials of a form request: `Authorization: Basic`
/// (RFC 6749 §2.3.1, form-encoded id and secret) and/or the body's.
fn credentials(
    headers: &HeaderMap,
    client_id: Option<&str>,
    secret: Option<&str>,
) -> Result<Credentials, OAuthError> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Basic ")
                .or_else(|| v.strip_prefix("basic "))
        });
    let Some(encoded) = basic else {
        return Ok(Credentials {
            client_id: client_id.map(str::to_owned),
            secret: secret.map(str::to_owned),
            basic: false,
        });
    };
    let refuse = || OAuthError::InvalidClient("the Basic credentials are unreadable".to_owned());
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| refuse())?;
    let decoded = String::from_utf8(decoded).map_err(|_| refuse())?;
    let (id, pw) = decoded.split_once(':').ok_or_else(refuse)?;
    let unescape = |s: &str| -> String {
        url::form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    let (id, pw) = (unescape(id), unescape(pw));
    if client_id.is_some_and(|c| c != id) || secret.is_some() {
        return Err(OAuthError::request(
            "authenticate the client one way: Basic or the body, not both",
        ));
    }
    Ok(Credentials {
        client_id: Some(id),
        secret: Some(pw),
        basic: true,
    })
}

async fn form<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    body: Body,
) -> Result<T, Response> {
    if !is_media(headers, "application/x-www-form-urlencoded") {
        return Err(error_response(&OAuthError::request(
            "send the parameters as application/x-www-form-urlencoded",
        )));
    }
    let bytes = read(body).await?;
    serde_urlencoded::from_bytes(&bytes).map_err(|_| {
        error_response(&OAuthError::request(
            "the parameters are malformed (a parameter may be repeated)",
        ))
    })
}

fn client_error(err: &OAuthError, basic: bool) -> Response {
    let mut response = error_response(err);
    if basic && matches!(err, OAuthError::InvalidClient(_)) {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"ledger\""),
        );
    }
    response
}

/// `POST /token`.
pub async fn token(State(state): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let params: TokenParams = match form(&headers, body).await {
        Ok(params) => params,
        Err(response) => return response,
    };
    let creds = match credentials(
        &headers,
        params.client_id.as_deref(),
        params.client_secret.as_deref(),
    ) {
        Ok(c) => c,
        Err(err) => return client_error(&err, true),
    };
    let result = flow::token(state.oauth(), &params, &creds).await;
    match result {
        Ok(issued) => no_store(axum::Json(issued).into_response()),
        Err(err) => client_error(&err, creds.basic),
    }
}

#[derive(serde::Deserialize)]
struct RevokeParams {
    token: Option<String>,
    #[serde(default, rename = "token_type_hint")]
    _hint: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
}

/// `POST /revoke` (RFC 7009): 200 whether or not the token was known.
pub async fn revoke(State(state): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let params: RevokeParams = match form(&headers, body).await {
        Ok(params) => params,
        Err(response) => return response,
    };
    let creds = match credentials(
        &headers,
        params.client_id.as_deref(),
        params.client_secret.as_deref(),
    ) {
        Ok(c) => c,
        Err(err) => return client_error(&err, true),
    };
    let result = flow::revoke(state.oauth(), params.token.as_deref(), &creds).await;
    match result {
        Ok(()) => no_store(StatusCode::OK.into_response()),
        Err(err) => client_error(&err, creds.basic),
    }
}
