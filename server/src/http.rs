//! What every REST route needs at its edge: who is calling ([`Caller`]),
//! the JSON body refused in our error shape ([`JsonBody`]), and the 401
//! challenge an OAuth-capable client follows ([`unauthenticated`]). The MCP
//! transport uses the same challenge, browser guard ([`check_browser`]) and
//! media-type rule ([`check_json_content_type`]).
//!
//! [`api_edge`] is the one layer over the JSON surfaces (`/v1`, `/mcp`,
//! `/.well-known`, and the OAuth endpoints' paths): it keeps cookies away from
//! `/v1` and `/mcp` (bearers only, so a browser's session can never be
//! ridden cross-site), refuses cross-site and non-JSON writes to `/v1`
//! before any handler runs, and turns whatever plain-text or empty error
//! the framework answers (a path that is not UTF-8, a 405, a 413) into our
//! JSON error body, so no JSON route ever answers text or HTML.

use axum::{
    body::Body,
    extract::{FromRequest, FromRequestParts, MatchedPath, Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts},
    middleware::Next,
    response::{IntoResponse, Response},
};
use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::de::DeserializeOwned;

use crate::{
    accounts::{AccountId, Principal},
    auth,
    error::{AppError, Code},
    limits::{
        ClientKey,
        costs::{self, Cost},
    },
    state::AppState,
};

/// A 401 with the `WWW-Authenticate` challenge naming our protected-resource
/// metadata, so an OAuth-capable client can find its way.
pub fn unauthenticated(state: &AppState, err: AppError) -> Response {
    let mut response = err.into_response();
    let challenge = format!(
        "Bearer error=\"invalid_token\", resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
        state.public_url()
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The protected-resource metadata a path's challenge names: the
/// account endpoint's own for `/mcp/account`, the root document (which
/// describes `/mcp`) for the rest.
pub fn resource_metadata_url(state: &AppState, path: &str) -> String {
    let account = path == "/mcp/account" || path.starts_with("/mcp/account/");
    format!(
        "{}/.well-known/oauth-protected-resource{}",
        state.public_url(),
        if account { "/mcp/account" } else { "" }
    )
}

/// Make a `/v1` or `/mcp` 401 (or a 403 for a missing scope) name the
/// resource metadata in its `WWW-Authenticate` challenge (RFC 9728 §5.1):
/// `error="invalid_token"` when a bearer was presented and refused,
/// `scope` when a scope was missing, the bare challenge for an anonymous
/// caller of `/mcp/account`.
fn name_resource_metadata(state: &AppState, path: &str, had_bearer: bool, response: &mut Response) {
    let status = response.status();
    let existing = response
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let metadata = resource_metadata_url(state, path);
    let challenge = if status == StatusCode::UNAUTHORIZED {
        // RFC 6750 §3.1: no error code when no credential was presented.
        if had_bearer {
            format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata}\"")
        } else {
            // MCP authorization: the challenge SHOULD name the scopes a
            // client needs (here, all of ours).
            format!("Bearer resource_metadata=\"{metadata}\", scope=\"read scan\"")
        }
    } else if status == StatusCode::FORBIDDEN && existing.contains("insufficient_scope") {
        format!("{existing}, resource_metadata=\"{metadata}\"")
    } else {
        return;
    };
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
}

/// The `Authorization` header resolved to a principal; an unreadable or
/// unknown credential is refused, never downgraded to anonymous.
pub async fn resolve(
    state: &AppState,
    headers: &axum::http::HeaderMap,
) -> Result<Principal, AppError> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|value| {
            value.to_str().map_err(|_| {
                AppError::new(Code::Unauthenticated, "unreadable Authorization header")
            })
        })
        .transpose()?;
    let resolver = auth::Resolver {
        store: state.store(),
        now_ms: state.now_ms(),
        admin_key_sha256: state.config().admin_key_sha256.as_deref(),
    };
    auth::resolve(resolver, authorization).await
}

/// What the request's headers present to pay for the call it carries:
/// `X-PAYMENT` (x402 v1) or `PAYMENT-SIGNATURE` (x402 v2), and `X-Receipt`.
/// Headers cover that one request only.
pub fn presented(headers: &axum::http::HeaderMap) -> crate::payments::Presented {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    crate::payments::Presented {
        payment: get("x-payment").or_else(|| get("payment-signature")),
        quote_id: None,
        receipt: get("x-receipt"),
    }
}

/// Anonymous callers share one budget per client address across MCP and
/// REST (`rate_limit.anon_rps`, burst `rate_limit.anon_burst`); over it is
/// 429 with `Retry-After`.
pub async fn limit_anonymous(state: &AppState, client: &ClientKey) -> Result<(), Response> {
    state
        .limiter()
        .anonymous(client, 1)
        .await
        .map_err(IntoResponse::into_response)
}

/// A JSON-RPC batch of `calls` requests costs what `calls` separate POSTs
/// would: its POST already took one token, so the other `calls - 1` are
/// taken here, all or none, before any call runs. (A batch larger than the
/// whole burst is refused by the transport before it gets here.)
pub async fn limit_anonymous_batch(
    state: &AppState,
    client: &ClientKey,
    calls: usize,
) -> Result<(), Response> {
    let count = u32::try_from(calls).unwrap_or(u32::MAX).saturating_sub(1);
    state
        .limiter()
        .anonymous(client, count)
        .await
        .map_err(IntoResponse::into_response)
}

/// Spend `units` (`limits::costs`) of an account's bearer traffic, and of
/// its client address's when there is one; over either is 429 with
/// `Retry-After`.
pub async fn charge_bearer(
    state: &AppState,
    account: &AccountId,
    client: Option<&ClientKey>,
    units: u32,
) -> Result<(), Response> {
    state
        .limiter()
        .bearer(account, client, units)
        .await
        .map_err(IntoResponse::into_response)
}

/// The client's rate-limit key: [`client_ip`] under the one keying rule
/// ([`ClientKey`]: IPv4 as itself, IPv6 by /64).
pub fn client_key(state: &AppState, peer: SocketAddr, headers: &HeaderMap) -> ClientKey {
    ClientKey::of(client_ip(state, peer, headers))
}

/// The client's IP: the peer, or the last `X-Forwarded-For` hop behind a
/// proxy we were told to trust.
pub fn client_ip(state: &AppState, peer: SocketAddr, headers: &axum::http::HeaderMap) -> IpAddr {
    // The last header line's last hop: a proxy that appends its own line
    // (rather than extending the client's) puts the peer it saw last.
    if state.config().trust_forwarded_for
        && let Some(ip) = headers
            .get_all("x-forwarded-for")
            .iter()
            .next_back()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .and_then(|v| v.trim().parse().ok())
    {
        return ip;
    }
    peer.ip()
}

/// A request's client address as rate limits key it ([`client_key`]);
/// `None` for a request that did not come over a socket (in-process tests),
/// which is not limited.
pub struct ClientAddr(pub Option<ClientKey>);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, std::convert::Infallible> {
        Ok(ClientAddr(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(peer)| client_key(state, *peer, &parts.headers)),
        ))
    }
}

/// The caller of a request: who they are and what they present to pay.
pub struct Caller(pub Principal, pub crate::payments::Presented);

/// The one credential check of `/v1` and `/mcp`: the bearer resolved to its
/// principal (an unknown or revoked one is 401 with the challenge, never a
/// downgrade), and every request charged before anything else is read:
/// anonymous callers, or callers whose bearer failed, to the anonymous
/// budget of their address, so guessing tokens is rate limited too; a
/// valid bearer one unit ([`ADMISSION_UNITS`]) of its budgets, so even a
/// request refused before its body is read (415, 406, 413, a body that is
/// not JSON, a `DELETE /mcp`) is paid for. The rest of what a call costs
/// is charged once it is known ([`charge_bearer`]). `peer` is absent only
/// for requests that did not come over a socket (in-process tests); they
/// are not limited by address.
///
/// Failed bearers are also counted in a budget of their own per address
/// (`rate_limit.bearer_failures_per_sec`); once it is spent a failed
/// bearer is answered 429 rather than 401. Only failures are counted and
/// only failures refused: a valid bearer from the same address (someone
/// else behind the same NAT or proxy) is served whatever the failures
/// before it. Guessing gains nothing from that: a token is 32 random bytes.
pub async fn admit(
    state: &AppState,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
) -> Result<Caller, Response> {
    let client = peer.map(|peer| client_key(state, peer, headers));
    let principal = match resolve(state, headers).await {
        Ok(principal) => principal,
        Err(err) => {
            if err.code() == Code::Unauthenticated
                && let Some(client) = &client
            {
                state
                    .limiter()
                    .bearer_failure(client)
                    .await
                    .map_err(IntoResponse::into_response)?;
                limit_anonymous(state, client).await?;
            }
            return Err(unauthenticated(state, err));
        }
    };
    match &principal {
        Principal::Anonymous => {
            if let Some(client) = &client {
                limit_anonymous(state, client).await?;
            }
        }
        Principal::Account(account) => {
            charge_bearer(state, &account.account_id, client.as_ref(), ADMISSION_UNITS).await?;
        }
        Principal::Admin | Principal::Link(_) => {}
    }
    Ok(Caller(principal, presented(headers)))
}

/// What [`admit`] charges a valid bearer for any request, before its body
/// is read; the rest of its cost is charged once the call is known.
pub const ADMISSION_UNITS: u32 = 1;

/// What a call costs beyond the [`ADMISSION_UNITS`] [`admit`] charged.
pub fn beyond_admission(units: u32) -> u32 {
    units.saturating_sub(ADMISSION_UNITS)
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(peer)| *peer);
        let caller = admit(state, peer, &parts.headers).await?;
        if let Principal::Account(account) = &caller.0 {
            // A REST request is one call: its route's cost, shaped by its
            // query (a report's wallets and format) and any payment it
            // presents in its query or headers. A payment in a JSON body
            // is charged by the handler that reads it
            // ([`charge_body_payment`]).
            let cost = parts
                .extensions
                .get::<MatchedPath>()
                .map_or(Cost::Local, |path| {
                    costs::of_route(parts.method.as_str(), path.as_str())
                });
            let shape = query_shape(parts.uri.query()).paying(caller.1.payment.is_some());
            let units = beyond_admission(costs::units(cost, shape));
            if units > 0 {
                let client = peer.map(|peer| client_key(state, peer, &parts.headers));
                charge_bearer(state, &account.account_id, client.as_ref(), units).await?;
            }
        }
        Ok(caller)
    }
}

/// What a tool call's `arguments` carry that changes its price
/// (`limits::costs::Shape`): a report's wallets and whether it is a PDF, a
/// payment. Anything not an object, or members of the wrong type, count
/// for nothing: the call is refused before it runs, at its class's price.
pub fn call_shape(arguments: Option<&serde_json::Value>) -> costs::Shape {
    let member = |name: &str| arguments.and_then(|a| a.get(name));
    costs::Shape {
        wallets: member("wallets")
            .and_then(serde_json::Value::as_array)
            .map_or(0, |w| u32::try_from(w.len()).unwrap_or(u32::MAX)),
        pdf: member("format")
            .and_then(serde_json::Value::as_str)
            .is_some_and(is_pdf),
        payment: member("payment")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|p| !p.trim().is_empty()),
    }
}

/// [`call_shape`] of a REST query string (`wallets=a,b&format=pdf`), read
/// as the routes read it: a list is comma-separated.
pub fn query_shape(query: Option<&str>) -> costs::Shape {
    let pairs: Vec<(String, String)> = query
        .and_then(|q| serde_urlencoded::from_str(q).ok())
        .unwrap_or_default();
    let value = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    costs::Shape {
        wallets: value("wallets").map_or(0, |w| {
            u32::try_from(w.split(',').filter(|w| !w.is_empty()).count()).unwrap_or(u32::MAX)
        }),
        pdf: value("format").is_some_and(is_pdf),
        payment: value("payment").is_some_and(|p| !p.trim().is_empty()),
    }
}

/// Whether `format` names the PDF format, as the report's own parser
/// reads it.
fn is_pdf(format: &str) -> bool {
    serde_json::from_value::<crate::reports::Format>(serde_json::Value::from(format))
        .is_ok_and(|f| f == crate::reports::Format::Pdf)
}

/// Charge what a `payment` in a REST route's JSON body adds to the route's
/// `cost`, which the [`Caller`] extractor charged without seeing the body:
/// nothing when the headers presented a payment already (charged then) or
/// the caller is no account.
pub async fn charge_body_payment(
    state: &AppState,
    principal: &Principal,
    presented: &crate::payments::Presented,
    client: Option<&ClientKey>,
    cost: Cost,
    body_payment: bool,
) -> Result<(), AppError> {
    let Principal::Account(account) = principal else {
        return Ok(());
    };
    if !body_payment || presented.payment.is_some() {
        return Ok(());
    }
    let charged = costs::units(cost, costs::Shape::default());
    let paying = costs::units(cost, costs::Shape::default().paying(true));
    let more = paying.saturating_sub(charged);
    if more == 0 {
        return Ok(());
    }
    state
        .limiter()
        .bearer(&account.account_id, client, more)
        .await
}

/// A route's query parameters; malformed ones are `invalid_params` in the
/// REST error shape (axum's own `Query` rejection is plain text).
pub struct QueryParams<T>(pub T);

impl<T: DeserializeOwned> FromRequestParts<AppState> for QueryParams<T> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &AppState) -> Result<Self, Response> {
        serde_urlencoded::from_str(parts.uri.query().unwrap_or(""))
            .map(QueryParams)
            .map_err(|e| AppError::invalid_params(format!("query: {e}")).into_response())
    }
}

/// A paid route's JSON answer: a settled payment (the body's `payment`)
/// is also reported in the x402 settlement headers, `X-PAYMENT-RESPONSE`
/// (v1) and `PAYMENT-RESPONSE` (v2).
pub fn paid_json<T: serde::Serialize>(
    body: &T,
    payment: Option<&crate::payments::PaymentBlock>,
) -> Response {
    with_payment_headers(axum::Json(body).into_response(), payment)
}

/// [`paid_json`] for a body already serialised.
pub fn paid_json_bytes(body: Bytes, payment: Option<&crate::payments::PaymentBlock>) -> Response {
    let response = (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response();
    with_payment_headers(response, payment)
}

/// Whether `headers` accept a gzip-encoded answer (RFC 9110 §12.5.3):
/// `gzip`, `x-gzip` or `*` with a non-zero weight, unless `gzip` itself is
/// named with weight zero.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut gzip = None;
    let mut any = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let weight = parts
                .filter_map(|p| p.trim().strip_prefix("q=").or(p.trim().strip_prefix("Q=")))
                .map(|q| q.trim().parse::<f32>().unwrap_or(0.0))
                .next()
                .unwrap_or(1.0);
            match coding.as_str() {
                "gzip" | "x-gzip" => gzip = Some(weight > 0.0),
                "*" => any = Some(weight > 0.0),
                _ => {}
            }
        }
    }
    gzip.or(any).unwrap_or(false)
}

/// [`paid_json_bytes`] for a kept answer: its gzip when the caller accepts
/// it (made once per kept answer), else the JSON; `Vary: Accept-Encoding`
/// either way.
pub fn paid_json_kept(
    request: &HeaderMap,
    body: &crate::values::KeptJson,
    payment: Option<&crate::payments::PaymentBlock>,
) -> Response {
    let gzip = accepts_gzip(request).then(|| body.gzip()).flatten();
    let mut response = paid_json_bytes(
        gzip.cloned().unwrap_or_else(|| body.json().clone()),
        payment,
    );
    let headers = response.headers_mut();
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if gzip.is_some() {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

fn with_payment_headers(
    mut response: Response,
    payment: Option<&crate::payments::PaymentBlock>,
) -> Response {
    if let Some(block) = payment
        && let Ok(value) = HeaderValue::from_str(&block.response_header())
    {
        response
            .headers_mut()
            .insert("x-payment-response", value.clone());
        response.headers_mut().insert("payment-response", value);
    }
    response
}

/// The largest REST request body: the same 64 KiB `/mcp` allows by
/// default (a REST body is one tool's arguments).
pub const REST_MAX_BODY_BYTES: usize = 64 * 1024;

/// A JSON request body; a malformed one is `invalid_params` and one over
/// [`REST_MAX_BODY_BYTES`] `payload_too_large`, both in the REST error shape
/// (axum's own rejections are plain text).
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for JsonBody<T> {
    type Rejection = Response;

    async fn from_request(request: Request, _state: &AppState) -> Result<Self, Response> {
        // A form or a no-cors fetch (what another site's page can send
        // without a preflight) is refused before a byte is read.
        check_json_content_type(request.headers(), true).map_err(IntoResponse::into_response)?;
        let bytes = read_body(request.into_body(), REST_MAX_BODY_BYTES).await?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| AppError::invalid_params(format!("body: {e}")).into_response())
    }
}

/// Read a request body of at most `max` bytes (413 beyond; 408 when it
/// has not arrived whole by its deadline, [`BodyTimedOut`]).
pub async fn read_body(body: Body, max: usize) -> Result<Bytes, Response> {
    match Limited::new(body, max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.downcast_ref::<LengthLimitError>().is_some() => Err(AppError::new(
            Code::PayloadTooLarge,
            format!("request bodies are limited to {max} bytes"),
        )
        .into_response()),
        Err(err) if BodyTimedOut::caused(&*err) => Err(BodyTimedOut.refusal().into_response()),
        Err(err) => {
            tracing::debug!(error = %err, "request body unreadable");
            Err(AppError::invalid_params("the request body could not be read").into_response())
        }
    }
}

/// A request body that had not arrived whole when its deadline passed
/// (`connections.body_timeout_ms` after the end of its head; the accept
/// loop, `startup::connections`, sets the deadline on every body).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the request body did not arrive whole within connections.body_timeout_ms")]
pub struct BodyTimedOut;

impl BodyTimedOut {
    /// Whether `err` is, or was caused by, a body's deadline passing.
    pub fn caused(err: &(dyn std::error::Error + 'static)) -> bool {
        std::iter::successors(Some(err), |e| e.source()).any(|e| e.is::<BodyTimedOut>())
    }

    /// The answer: 408 `request_timeout` (the connection then closes, its
    /// body unread).
    pub fn refusal(self) -> AppError {
        AppError::new(
            Code::RequestTimeout,
            "the request body did not arrive in time; send it whole within \
             connections.body_timeout_ms of the request's head",
        )
    }
}

/// Refuse what a browser sends on another site's behalf: `Sec-Fetch-Site:
/// cross-site`, and any `Origin` other than the public URL's (or one of
/// `allowed_origins`). A `same-site` request (a sibling subdomain, another
/// port of the same host) is judged by its `Origin`, which a browser always
/// sends on a POST; `same-origin` and `none` (typed by the user) pass.
pub fn check_browser(state: &AppState, headers: &HeaderMap) -> Result<(), AppError> {
    if header_str(headers, "sec-fetch-site") == Some("cross-site") {
        tracing::info!("refused a cross-site browser request");
        return Err(AppError::new(
            Code::Forbidden,
            "cross-site browser requests are refused; this endpoint is for API and MCP clients",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin
            .to_str()
            .ok()
            .is_some_and(|o| origin_allowed(state, o));
        if !allowed {
            tracing::info!(origin = ?origin, "refused a foreign Origin");
            return Err(AppError::new(
                Code::Forbidden,
                "requests from this Origin are refused",
            ));
        }
    }
    Ok(())
}

fn origin_of(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .map(|u| u.origin().ascii_serialization())
}

fn origin_allowed(state: &AppState, origin: &str) -> bool {
    let Some(origin) = origin_of(origin) else {
        return false;
    };
    origin_of(state.public_url()).as_deref() == Some(origin.as_str())
        || state
            .config()
            .allowed_origins
            .iter()
            .any(|o| origin_of(o).as_deref() == Some(origin.as_str()))
}

/// A JSON body must say `Content-Type: application/json`, in UTF-8 (a
/// `charset` other than `utf-8` is refused, since we would misread it).
/// Without a `Content-Type` it is refused when `required`: a form or a
/// no-cors `fetch` can send a body with none.
pub fn check_json_content_type(headers: &HeaderMap, required: bool) -> Result<(), AppError> {
    let refuse = || {
        AppError::new(
            Code::UnsupportedMediaType,
            "send the body as Content-Type: application/json (UTF-8)",
        )
    };
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return if required { Err(refuse()) } else { Ok(()) };
    };
    let value = value.to_str().map_err(|_| refuse())?;
    let mut parts = value.split(';');
    let mime = parts.next().unwrap_or_default().trim();
    if !mime.eq_ignore_ascii_case("application/json") {
        return Err(refuse());
    }
    let charset_ok = parts
        .filter_map(|p| p.split_once('='))
        .filter(|(k, _)| k.trim().eq_ignore_ascii_case("charset"))
        .all(|(_, v)| v.trim().trim_matches('"').eq_ignore_ascii_case("utf-8"));
    if charset_ok { Ok(()) } else { Err(refuse()) }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Which JSON surface a path belongs to, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    /// `/v1` (REST).
    Rest,
    /// `/mcp`.
    Mcp,
    /// `/.well-known/…` (discovery documents).
    WellKnown,
    /// The OAuth endpoints' paths (`/authorize`, `/token`, `/register`,
    /// `/revoke`): RFC 6749 error bodies.
    OAuth,
}

impl Surface {
    pub fn of(path: &str) -> Option<Self> {
        let under = |prefix: &str| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        if under("/v1") {
            Some(Surface::Rest)
        } else if under("/mcp") {
            Some(Surface::Mcp)
        } else if under("/.well-known") {
            Some(Surface::WellKnown)
        } else if ["/authorize", "/token", "/register", "/revoke"]
            .into_iter()
            .any(under)
        {
            Some(Surface::OAuth)
        } else {
            None
        }
    }

    /// An error in this surface's body shape.
    pub fn render(self, err: AppError) -> Response {
        match self {
            Surface::OAuth => err.into_oauth_response(),
            _ => err.into_response(),
        }
    }
}

/// The JSON 404 for a path no route serves on a JSON surface (the router's
/// fallback asks first, so such paths never get the portal's page).
pub fn unrouted(path: &str) -> Option<Response> {
    let surface = Surface::of(path)?;
    let hint = match surface {
        Surface::Mcp => "no such endpoint; MCP is served at POST /mcp",
        Surface::Rest => "no such endpoint; the REST API is described at /v1/openapi.json",
        Surface::WellKnown | Surface::OAuth => "no such endpoint",
    };
    Some(surface.render(AppError::not_found(hint)))
}

/// Whether a path is the portal's server functions (`/api/…`): Leptos
/// posts forms there, so they get the same browser guard as `/v1` writes.
fn is_server_fn(path: &str) -> bool {
    path.starts_with("/api/")
}

/// The outermost layer: `Cookie` never reaches anything behind `/v1` or
/// `/mcp`, not even a session layer added inside it (bearers only, so a
/// browser's session can never be ridden cross-site).
pub async fn strip_cookies(mut request: Request, next: Next) -> Response {
    if matches!(
        Surface::of(request.uri().path()),
        Some(Surface::Rest | Surface::Mcp)
    ) {
        request.headers_mut().remove(header::COOKIE);
    }
    next.run(request).await
}

/// The largest body a surface reads: a `Content-Length` over it is refused
/// before a byte is read, so a client cannot hold a connection open
/// trickling a body that will be refused anyway.
fn body_cap(state: &AppState, surface: Surface) -> usize {
    match surface {
        Surface::Mcp => state.config().mcp.max_body_bytes,
        _ => REST_MAX_BODY_BYTES,
    }
}

/// The layer over every route and the fallback (see the module docs).
pub async fn api_edge(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let Some(surface) = Surface::of(&path) else {
        if is_server_fn(&path)
            && !request.method().is_safe()
            && let Err(err) = check_browser(&state, request.headers())
        {
            return err.into_response();
        }
        return next.run(request).await;
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let cap = body_cap(&state, surface);
    if declared.is_some_and(|n| n > cap as u64) {
        return surface.render(AppError::new(
            Code::PayloadTooLarge,
            format!("request bodies are limited to {cap} bytes"),
        ));
    }
    if !decodes_to_utf8(&path) {
        return surface.render(AppError::invalid_params(
            "the request path is not valid UTF-8 once percent-decoded",
        ));
    }
    if surface == Surface::Rest
        && !request.method().is_safe()
        && request.extensions().get::<MatchedPath>().is_some()
    {
        // The browser guard runs before any handler; the media type is the
        // body extractor's (`JsonBody`), so a method the route does not
        // serve is still a 405.
        if let Err(err) = check_browser(&state, request.headers()) {
            return err.into_response();
        }
    }
    let method = request.method().clone();
    let had_bearer = request.headers().contains_key(header::AUTHORIZATION);
    let response = next.run(request).await;
    let mut response = as_json_error(surface, &method, response);
    if matches!(surface, Surface::Rest | Surface::Mcp) {
        name_resource_metadata(&state, &path, had_bearer, &mut response);
    }
    response
}

/// A framework error (no body, or plain text) in our JSON error body, with
/// the headers it carried (`Allow`, `Retry-After`, …).
fn as_json_error(surface: Surface, method: &axum::http::Method, response: Response) -> Response {
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.to_ascii_lowercase());
    let plain = content_type
        .as_deref()
        .is_none_or(|ct| ct.starts_with("text/plain"));
    if !(status.is_client_error() || status.is_server_error()) || !plain {
        return response;
    }
    let err = match status {
        StatusCode::BAD_REQUEST => AppError::invalid_params("the request could not be read"),
        StatusCode::NOT_FOUND => AppError::not_found("no such endpoint"),
        // The router adds `Allow` after this layer has run: the header,
        // not the message, names the methods.
        StatusCode::METHOD_NOT_ALLOWED => AppError::new(
            Code::MethodNotAllowed,
            format!("this endpoint does not answer {method}; the Allow header names what it does"),
        ),
        StatusCode::PAYLOAD_TOO_LARGE => {
            AppError::new(Code::PayloadTooLarge, "the request body is too large")
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => AppError::new(
            Code::UnsupportedMediaType,
            "send the body as Content-Type: application/json (UTF-8)",
        ),
        status if status.is_server_error() => {
            tracing::warn!(%status, "a plain-text server error on a JSON route");
            AppError::new(Code::Internal, "internal error")
        }
        StatusCode::UNAUTHORIZED => AppError::new(Code::Unauthenticated, "authentication needed"),
        StatusCode::FORBIDDEN => AppError::new(Code::Forbidden, "the request was refused"),
        StatusCode::CONFLICT => AppError::new(Code::Conflict, "the request conflicts"),
        StatusCode::TOO_MANY_REQUESTS => AppError::new(Code::RateLimited, "rate limited"),
        StatusCode::NOT_ACCEPTABLE => {
            AppError::new(Code::NotAcceptable, "no acceptable response type")
        }
        _ => AppError::invalid_params("the request was refused"),
    };
    let (parts, _) = response.into_parts();
    let mut json = surface.render(err);
    *json.status_mut() = status;
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            json.headers_mut().insert(name.clone(), value.clone());
        }
    }
    json
}

/// Whether a path's percent-escapes decode to UTF-8 (what axum's `Path`
/// needs; its own rejection is plain text).
fn decodes_to_utf8(path: &str) -> bool {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| path.get(i + 1..i + 3))
            .flatten()
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                i += 3;
            }
            None => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    std::str::from_utf8(&decoded).is_ok()
}

/// `Cache-Control: no-store` and `Pragma: no-cache` on `response`: what
/// carries a secret or a one-time answer (OAuth's tokens and errors, the
/// consent's redirect) is never cached.
pub fn no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

/// `next` when it is a same-origin relative path a sign-in may return to
/// (`/wallets/…?range=90d`), else `None`. Refused: anything that does not
/// start with one `/` (`https://evil`, `javascript:…`, `evil`); `//evil`
/// and `/\evil` (browsers read both as another host); a backslash, a
/// control character anywhere (the URL parser drops tabs and
/// newlines, so `/\t/evil` would become `//evil`); and the same tricks
/// percent-encoded, once or more (`/%2F%2Fevil`, `/%5Cevil`,
/// `/%252F%252Fevil`, `/%09/evil`), which a proxy or a later decode could
/// turn back into a host. The path is decoded until it no longer changes
/// (at most four times; deeper nesting is refused) and checked each time.
pub fn safe_next(next: &str) -> Option<&str> {
    fn plain_ok(text: &str) -> bool {
        text.starts_with('/')
            && !text.starts_with("//")
            && !text.chars().any(|c| c.is_control() || c == '\\')
    }
    if next.len() > 4096 || !plain_ok(next) {
        return None;
    }
    // The path only: a query may carry encoded slashes (a ledger cursor).
    let path = next.split(['?', '#']).next().unwrap_or(next);
    let mut text = path.to_owned();
    for _ in 0..4 {
        let decoded = percent_decode(&text)?;
        if !plain_ok(&decoded) {
            return None;
        }
        if decoded == text {
            return Some(next);
        }
        text = decoded;
    }
    None
}

/// One round of percent-decoding; `None` when the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push(u8::try_from(h * 16 + l).ok()?);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The locale a browser's `Accept-Language` negotiates against the
/// supported set (`values::format::Locale::negotiate`; en-US without one):
/// the portal's pages (under an account's own setting) and the share page
/// write numbers in it.
pub fn browser_locale(headers: &HeaderMap) -> crate::values::format::Locale {
    headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .map(crate::values::format::Locale::negotiate)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calls_shape_counts_a_reports_wallets_its_pdf_and_a_payment() {
        let four = call_shape(Some(&serde_json::json!({
            "wallets": ["a", "b", "c", "d"], "format": "json"})));
        assert_eq!((four.wallets, four.pdf, four.payment), (4, false, false));
        let pdf = query_shape(Some("wallets=a,b,c&format=pdf"));
        assert_eq!((pdf.wallets, pdf.pdf, pdf.payment), (3, true, false));
        assert!(call_shape(Some(&serde_json::json!({"payment": "AAAA"}))).payment);
        assert!(query_shape(Some("payment=AAAA")).payment);
        // An empty payment presents nothing; an unknown format is no PDF.
        assert!(!call_shape(Some(&serde_json::json!({"payment": " "}))).payment);
        assert!(!query_shape(Some("format=PDF")).pdf);
        assert_eq!(call_shape(None), costs::Shape::default());
        assert_eq!(query_shape(Some("%zz")), costs::Shape::default());
    }

    #[test]
    fn gzip_is_accepted_only_when_named_or_starred_with_a_weight() {
        let accepts = |values: &[&str]| {
            let mut headers = HeaderMap::new();
            for v in values {
                headers.append(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
            }
            accepts_gzip(&headers)
        };
        assert!(accepts(&["gzip"]));
        assert!(accepts(&["gzip, deflate, br"]));
        assert!(accepts(&["br;q=1.0, GZIP;q=0.5"]));
        assert!(accepts(&["x-gzip"]));
        assert!(accepts(&["*"]));
        assert!(accepts(&["deflate", "gzip"]), "two headers");
        assert!(!accepts(&[]), "none named");
        assert!(!accepts(&["identity"]));
        assert!(!accepts(&["br, deflate"]));
        assert!(!accepts(&["gzip;q=0"]));
        assert!(
            !accepts(&["gzip;q=0.000, *"]),
            "gzip refused by name wins over *"
        );
        assert!(!accepts(&["*;q=0"]));
        assert!(
            !accepts(&["gzip;q=nonsense"]),
            "an unreadable weight is zero"
        );
    }

    #[test]
    fn surfaces_are_whole_segments() {
        assert_eq!(Surface::of("/v1"), Some(Surface::Rest));
        assert_eq!(Surface::of("/v1/jobs/../.."), Some(Surface::Rest));
        assert_eq!(Surface::of("/mcp"), Some(Surface::Mcp));
        assert_eq!(Surface::of("/mcp/x"), Some(Surface::Mcp));
        assert_eq!(Surface::of("/.well-known/nope"), Some(Surface::WellKnown));
        assert_eq!(Surface::of("/token"), Some(Surface::OAuth));
        assert_eq!(Surface::of("/v10"), None);
        assert_eq!(Surface::of("/tokens"), None);
        assert_eq!(Surface::of("/tools"), None);
        assert_eq!(Surface::of("/"), None);
    }

    #[test]
    fn percent_escapes_must_decode_to_utf8() {
        assert!(decodes_to_utf8("/v1/jobs/job_1"));
        assert!(decodes_to_utf8("/v1/jobs/%C3%A9"));
        assert!(decodes_to_utf8("/v1/jobs/100%"));
        assert!(!decodes_to_utf8("/v1/jobs/%FF"));
        assert!(!decodes_to_utf8("/v1/wallets/%C3/ledger"));
    }

    #[test]
    fn json_content_types() {
        let with = |ct: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
            check_json_content_type(&h, true).is_ok()
        };
        assert!(with("application/json"));
        assert!(with("Application/JSON; charset=UTF-8"));
        assert!(with("application/json; charset=\"utf-8\""));
        assert!(!with("application/json; charset=utf-16"));
        assert!(!with("text/plain"));
        assert!(!with("application/x-www-form-urlencoded"));
        assert!(check_json_content_type(&HeaderMap::new(), false).is_ok());
        assert!(check_json_content_type(&HeaderMap::new(), true).is_err());
    }

    #[test]
    fn only_same_origin_relative_paths_are_safe_next_targets() {
        for good in [
            "/authorize?x=1",
            "/wallets",
            "/wallets/7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU?range=90d#ledger",
            // An encoded slash in the query (a ledger cursor) is the query's.
            "/wallets/abc?cursor=ab%2Fcd%3D%3D",
            "/wallets/a%20b",
        ] {
            assert_eq!(safe_next(good), Some(good), "{good}");
        }
    }

    /// One refusal per way a `next` could leave the origin.
    fn refused(next: &str) {
        assert_eq!(safe_next(next), None, "{next:?} must be refused");
    }

    #[test]
    fn next_refuses_a_protocol_relative_url() {
        refused("//evil.example");
        refused("///evil.example");
    }

    #[test]
    fn next_refuses_a_backslash_that_browsers_read_as_a_slash() {
        refused("/\\evil.example");
        refused("\\/evil.example");
        refused("/a\\b");
    }

    #[test]
    fn next_refuses_absolute_urls_and_schemes() {
        refused("https://evil.example");
        refused("http:evil.example");
        refused("javascript:alert(1)");
        refused("data:text/html,x");
    }

    #[test]
    fn next_refuses_relative_paths_and_empty_text() {
        refused("authorize");
        refused("");
        refused(" /wallets");
    }

    #[test]
    fn next_refuses_control_characters_the_url_parser_drops() {
        refused("/\t/evil.example");
        refused("/\n/evil.example");
        refused("/a\nb");
        refused("/a\u{0}b");
    }

    #[test]
    fn next_refuses_encoded_slashes_and_backslashes() {
        refused("/%2F%2Fevil.example");
        refused("/%2f/evil.example");
        refused("/%5Cevil.example");
        refused("/%5cevil.example");
        refused("/a%5Cb");
    }

    #[test]
    fn next_refuses_double_encoded_and_encoded_control_characters() {
        refused("/%252F%252Fevil.example");
        refused("/%25252F/evil.example");
        refused("/%09/evil.example");
        refused("/%0A/evil.example");
        // Four layers of encoding are more than any honest link has.
        refused("/%2525252541");
    }

    #[test]
    fn next_refuses_overlong_text() {
        refused(&format!("/{}", "a".repeat(4096)));
    }
}
