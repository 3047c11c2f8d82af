//! The HTTP side of `/mcp` (Streamable HTTP): who may call, how much, in
//! which framing, and with which session. JSON-RPC semantics live in
//! `dispatch`; this module turns HTTP into messages and replies into HTTP.
//!
//! Order of checks on a POST, cheapest and most protective first:
//! cross-site and foreign-origin browser requests (403); the bearer (401,
//! never downgraded); the anonymous rate limit per client IP, or for a
//! bearer one unit of its budgets (429 with `Retry-After`); media types
//! (415, 406); the 64 KiB body cap (413); JSON (-32700, HTTP 400); for a
//! bearer, the rest of what the POST's calls cost against its account's
//! and its address's budgets (`limits::costs`; 429 with `Retry-After`, or
//! 400 for a batch dearer than a whole burst); the session named by
//! `Mcp-Session-Id` (404 when unknown or ended); for an anonymous batch,
//! one more token per further request in it (429 as a whole before any
//! runs); then dispatch. `initialize` opens a session within the session
//! quotas (`quota.mcp_*sessions*`; see `store::sessions`): over an
//! account's or an anonymous quota the least recently used session of
//! that class ends to make room; only the server's quota of bearer
//! sessions refuses (503).

use std::net::SocketAddr;

use axum::{
    body::Body,
    extract::{ConnectInfo, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use base64::Engine as _;
use rand::RngCore;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{
    dispatch::{self, McpHeaders, Reply},
    jsonrpc::{self, Incoming, Outgoing},
    registry::ToolContext,
    version,
};
use crate::{
    accounts::Principal,
    error::{AppError, Code},
    limits::{ClientKey, costs},
    state::AppState,
    store::{NewSession, SessionClass, SessionOpened, SessionQuota},
};

pub const SESSION_HEADER: &str = "mcp-session-id";
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// `POST /mcp`.
pub async fn post(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match handle_post(&state, peer, &headers, body).await {
        Ok(response) => response,
        Err(refusal) => refusal,
    }
}

async fn handle_post(
    state: &AppState,
    peer: SocketAddr,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, Response> {
    let refuse = IntoResponse::into_response;
    crate::http::check_browser(state, headers).map_err(refuse)?;
    let crate::http::Caller(principal, presented) =
        crate::http::admit(state, Some(peer), headers).await?;
    crate::http::check_json_content_type(headers, false).map_err(refuse)?;
    let sse = wants_sse(headers).map_err(refuse)?;
    let bytes = crate::http::read_body(body, state.config().mcp.max_body_bytes).await?;
    let mcp_headers = McpHeaders {
        protocol_version: header_str(headers, PROTOCOL_VERSION_HEADER).map(str::to_owned),
        method: header_str(headers, "mcp-method").map(str::to_owned),
        name: header_str(headers, "mcp-name").map(str::to_owned),
    };
    let stateless_header =
        mcp_headers.protocol_version.as_deref().map(str::trim) == Some(version::STATELESS);
    let body = jsonrpc::parse(&bytes).ok_or_else(|| {
        let error = jsonrpc::error(
            None,
            jsonrpc::PARSE_ERROR,
            "Parse error: the body is not JSON",
            None,
        );
        let error = if stateless_header {
            jsonrpc::without_null_id(error)
        } else {
            error
        };
        json_reply(StatusCode::BAD_REQUEST, error, false)
    })?;
    let client = crate::http::client_key(state, peer, headers);
    // A bearer's POST is charged by what it calls, once that is known:
    // each request in it by its tool's cost (`limits::costs`), less the
    // unit `admit` took.
    if let Principal::Account(account) = &principal {
        let units = bearer_units(&body, presented.payment.is_some());
        let burst = state
            .config()
            .rate_limit
            .account_burst_units
            .min(state.config().rate_limit.bearer_ip_burst_units);
        if units > burst {
            // Only a batch can cost this much; it could never pass.
            return Err(json_reply(
                StatusCode::BAD_REQUEST,
                jsonrpc::error(
                    None,
                    jsonrpc::INVALID_REQUEST,
                    &format!(
                        "Invalid Request: this batch costs {units} units, more than the {burst} \
                         a bearer may spend at once; send smaller batches"
                    ),
                    None,
                ),
                false,
            ));
        }
        let rest = crate::http::beyond_admission(units);
        if rest > 0 {
            crate::http::charge_bearer(state, &account.account_id, Some(&client), rest).await?;
        }
    }
    let ctx = ToolContext {
        state: state.clone(),
        principal,
        presented,
    };

    match body {
        jsonrpc::Body::Single(message) if dispatch::is_stateless(&message.value, &mcp_headers) => {
            // 2026-07-28 has no sessions: an Mcp-Session-Id is ignored.
            let reply = match jsonrpc::classify(message) {
                Err(error) => {
                    Reply::status(StatusCode::BAD_REQUEST, jsonrpc::without_null_id(error))
                }
                Ok(Incoming::Request { id, method, params }) => {
                    dispatch::stateless_request(ctx, id, &method, params, &mcp_headers).await
                }
                Ok(Incoming::Notification { .. } | Incoming::Response) => Reply::accepted(),
            };
            Ok(render(reply, sse, None))
        }
        body => legacy(ctx, headers, &mcp_headers, body, sse, client).await,
    }
}

/// Requests of the initialize era: sessions, batches, `initialize`.
async fn legacy(
    ctx: ToolContext,
    headers: &HeaderMap,
    mcp_headers: &McpHeaders,
    body: jsonrpc::Body,
    sse: bool,
    client: ClientKey,
) -> Result<Response, Response> {
    let state = ctx.state.clone();
    // Who a batch's further calls are charged to: anonymous callers only.
    let charged = ctx.principal.is_anonymous().then_some(&client);
    // A refusal before the message is classified still answers its id
    // when one can be read: the client matches replies by id.
    let echo = match &body {
        jsonrpc::Body::Single(message) => message.readable_id(),
        jsonrpc::Body::Batch(_) => None,
    };
    let header_version = mcp_headers.protocol_version.as_deref().map(str::trim);
    if let Some(v) = header_version
        && !version::is_supported(v)
    {
        return Err(json_reply(
            StatusCode::BAD_REQUEST,
            jsonrpc::error(
                echo,
                jsonrpc::INVALID_REQUEST,
                &format!(
                    "Bad Request: unsupported MCP-Protocol-Version {v:?}; supported: {}",
                    version::SUPPORTED.join(", ")
                ),
                None,
            ),
            false,
        ));
    }
    let session_version = match session_header(headers) {
        Err(UnknownSession) => return Err(session_not_found(echo)),
        Ok(None) => None,
        Ok(Some(id)) => match find_session(&state, &ctx.principal, id).await? {
            Some(version) => Some(version),
            None => return Err(session_not_found(echo)),
        },
    };
    let speaks = session_version
        .as_deref()
        .or(header_version)
        .unwrap_or(version::ASSUMED_WITHOUT_HEADER)
        .to_owned();

    match body {
        jsonrpc::Body::Batch(batch) => {
            let max = state.config().mcp.max_batch;
            let refuse = |text: String| {
                let error = jsonrpc::error(None, jsonrpc::INVALID_REQUEST, &text, None);
                let error = if speaks == version::STATELESS {
                    jsonrpc::without_null_id(error)
                } else {
                    error
                };
                json_reply(StatusCode::BAD_REQUEST, error, false)
            };
            if !version::allows_batches(&speaks) {
                return Err(refuse(format!(
                    "Invalid Request: protocol version {speaks} does not allow JSON-RPC batches"
                )));
            }
            if batch.is_empty() {
                return Err(refuse("Invalid Request: empty batch".to_owned()));
            }
            if batch.len() > max {
                return Err(refuse(format!(
                    "Invalid Request: a batch holds at most {max} messages, this one {}",
                    batch.len()
                )));
            }
            let incoming: Vec<_> = batch.into_iter().map(jsonrpc::classify).collect();
            let calls = incoming
                .iter()
                .filter(|m| matches!(m, Ok(Incoming::Request { .. })))
                .count();
            // The POST itself took one token; every further request in the
            // batch takes one more, all or none, before any of them runs.
            if let Some(client) = charged
                && calls > 1
            {
                // One larger than the whole burst could never pass: say so
                // once, with no Retry-After a client would loop on.
                let burst = state.config().rate_limit.anon_burst();
                if u32::try_from(calls).map_or(true, |c| c > burst) {
                    return Err(refuse(format!(
                        "Invalid Request: an anonymous batch holds at most {burst} requests, \
                         this one {calls}; send smaller batches or present a bearer token"
                    )));
                }
                crate::http::limit_anonymous_batch(&state, client, calls).await?;
            }
            let mut responses = Vec::new();
            for message in incoming {
                match message {
                    Err(error) => responses.push(error),
                    Ok(Incoming::Request { id, method, params }) => responses.push(
                        dispatch::legacy_request(ctx.clone(), id, &method, params, &speaks).await,
                    ),
                    Ok(Incoming::Notification { .. } | Incoming::Response) => {}
                }
            }
            let reply = if responses.is_empty() {
                Reply::accepted()
            } else {
                Reply {
                    status: StatusCode::OK,
                    body: Some(Outgoing::Batch(responses)),
                }
            };
            Ok(render(reply, sse, None))
        }
        jsonrpc::Body::Single(message) => match jsonrpc::classify(message) {
            Err(error) => Err(json_reply(StatusCode::BAD_REQUEST, error, sse)),
            Ok(Incoming::Notification { .. } | Incoming::Response) => {
                Ok(render(Reply::accepted(), sse, None))
            }
            Ok(Incoming::Request { id, method, params }) if method == "initialize" => {
                let init = match dispatch::parse_initialize(&id, params.as_ref()) {
                    Ok(init) => init,
                    Err(error) => return Ok(json_reply(StatusCode::OK, error, sse)),
                };
                let session = open_session(&state, &ctx.principal, &client, &init).await?;
                let body = jsonrpc::result(id, dispatch::initialize_result(init.version, &state));
                Ok(render(Reply::ok(body), sse, Some(session)))
            }
            Ok(Incoming::Request { id, method, params }) => {
                let body = dispatch::legacy_request(ctx, id, &method, params, &speaks).await;
                Ok(render(Reply::ok(body), sse, None))
            }
        },
    }
}

/// What a POST costs a bearer, in units (`limits::costs`): a `tools/call`
/// its tool's cost as its arguments shape it (a report's wallets and
/// format; a payment in its arguments or, for every call of the POST, in
/// its `X-PAYMENT` header), any other request one, notifications and
/// responses nothing; at least one for the POST itself.
fn bearer_units(body: &jsonrpc::Body, header_payment: bool) -> u32 {
    let cost = |message: &jsonrpc::Message| -> u32 {
        let value = &message.value;
        let Some(method) = value.get("method").and_then(Value::as_str) else {
            return 0;
        };
        if value.get("id").is_none() {
            return 0;
        }
        let tool = value.pointer("/params/name").and_then(Value::as_str);
        match (method, tool) {
            ("tools/call", Some(name)) => {
                let shape = crate::http::call_shape(value.pointer("/params/arguments"))
                    .paying(header_payment);
                costs::units(costs::of_tool(name), shape)
            }
            _ => costs::Cost::Local.units(),
        }
    };
    let total = match body {
        jsonrpc::Body::Single(message) => cost(message),
        jsonrpc::Body::Batch(messages) => messages.iter().map(cost).fold(0, u32::saturating_add),
    };
    total.max(1)
}

/// The `Mcp-Session-Id` header. A value that is not visible ASCII cannot be
/// one we issued, so it names an unknown session (404), never none.
fn session_header(headers: &HeaderMap) -> Result<Option<&str>, UnknownSession> {
    headers
        .get(SESSION_HEADER)
        .map(|value| value.to_str().map_err(|_| UnknownSession))
        .transpose()
}

/// An `Mcp-Session-Id` that names no session we could have issued.
struct UnknownSession;

impl From<UnknownSession> for Response {
    fn from(_: UnknownSession) -> Self {
        session_not_found(None)
    }
}

/// `/mcp/account`: the same endpoint as `/mcp` for a caller with a
/// bearer, and 401 with the `WWW-Authenticate` challenge for one without
/// (`http::api_edge` names the account endpoint's resource metadata). MCP
/// hosts start OAuth only on a 401, and `/mcp` never answers one to an
/// anonymous caller, so this is the URL to connect with OAuth.
fn anonymous_refused(headers: &HeaderMap) -> Option<Response> {
    (!headers.contains_key(header::AUTHORIZATION)).then(|| {
        AppError::new(
            Code::Unauthenticated,
            "this endpoint needs a bearer: connect with OAuth (see the WWW-Authenticate challenge) or present an MCP token; /mcp serves anonymous callers",
        )
        .into_response()
    })
}

/// `POST /mcp/account`.
pub async fn post_account(
    state: State<AppState>,
    peer: ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Some(refused) = anonymous_refused(&headers) {
        return refused;
    }
    post(state, peer, headers, body).await
}

/// `GET /mcp/account`.
pub async fn get_account(state: State<AppState>, headers: HeaderMap) -> Response {
    if let Some(refused) = anonymous_refused(&headers) {
        return refused;
    }
    get(state, headers).await
}

/// `DELETE /mcp/account`.
pub async fn delete_account(
    state: State<AppState>,
    peer: ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = anonymous_refused(&headers) {
        return refused;
    }
    delete(state, peer, headers).await
}

/// `GET /mcp`: no server-initiated stream, so a client opening one (it
/// names `text/event-stream` in `Accept`, or a session) gets 405 `Allow:
/// POST`; a plain GET (a browser, curl's `*/*`) gets the description.
pub async fn get(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if names(&headers, "text/event-stream") || headers.contains_key(SESSION_HEADER) {
        return method_not_allowed();
    }
    axum::Json(describe(&state)).into_response()
}

fn method_not_allowed() -> Response {
    let mut response = AppError::new(
        Code::MethodNotAllowed,
        "this endpoint has no server-initiated stream; POST JSON-RPC messages instead",
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

/// The JSON description a plain `GET /mcp` returns.
pub fn describe(state: &AppState) -> Value {
    json!({
        "name": super::SERVER_NAME,
        "title": super::SERVER_TITLE,
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Solana wallet reports over MCP: quote, pay in USDC through x402, scan and read a wallet's ledger.",
        "endpoint": format!("{}/mcp", state.public_url()),
        "transport": "streamable-http",
        "methods": ["POST"],
        "protocolVersions": version::SUPPORTED,
        "authentication": "optional: Authorization: Bearer lm_… (MCP token) or lk_… (API key); anonymous otherwise",
        "oauthEndpoint": app::snippets::account_url(state.public_url()),
        "whichEndpoint": app::snippets::which_url(state.public_url()),
        "tools": crate::mcp::tools::registry().iter().map(|t| t.meta.name).collect::<Vec<_>>(),
        "serverCard": format!("{}/.well-known/mcp/server-card.json", state.public_url()),
        "documentation": format!("{}/llms.txt", state.public_url()),
    })
}

/// `DELETE /mcp`: end the session named by `Mcp-Session-Id`.
///
/// Charged like any request (`http::admit`): to the anonymous budget of
/// the address, or one unit of a bearer's. Each one is a database write,
/// so it must not come free; a client closing within its budget never
/// notices, and a refused DELETE only leaves a session to idle out.
pub async fn delete(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    let run = async {
        crate::http::check_browser(&state, &headers).map_err(IntoResponse::into_response)?;
        let crate::http::Caller(principal, _) =
            crate::http::admit(&state, Some(peer), &headers).await?;
        let Some(id) = session_header(&headers)? else {
            return Err(AppError::invalid_params(
                "DELETE needs the Mcp-Session-Id of the session to end",
            )
            .into_response());
        };
        let ended = state
            .store()
            .delete_session(&hash_session_id(id), &principal.key())
            .await
            .map_err(|e| AppError::from(e).into_response())?;
        if ended {
            Ok(StatusCode::NO_CONTENT.into_response())
        } else {
            Err(session_not_found(None))
        }
    };
    run.await.unwrap_or_else(|refusal| refusal)
}

/// Whether to answer as one SSE `message` event: when the client accepts
/// only `text/event-stream`. 406 when it accepts neither framing.
fn wants_sse(headers: &HeaderMap) -> Result<bool, AppError> {
    if headers.get(header::ACCEPT).is_none() {
        return Ok(false);
    }
    let json = accepts(headers, "application/json");
    let sse = accepts(headers, "text/event-stream");
    if !json && !sse {
        return Err(AppError::new(
            Code::NotAcceptable,
            "Accept must admit application/json or text/event-stream",
        ));
    }
    Ok(sse && !json)
}

/// Whether the Accept header admits `mime` (wildcards count, `q=0` refuses).
fn accepts(headers: &HeaderMap, mime: &str) -> bool {
    quality(headers, mime, true).is_some_and(|q| q > 0.0)
}

/// Whether the Accept header names `mime` itself (not through a wildcard)
/// with a quality above zero.
fn names(headers: &HeaderMap, mime: &str) -> bool {
    quality(headers, mime, false).is_some_and(|q| q > 0.0)
}

/// The quality Accept gives `mime`: the most specific matching range
/// decides (`type/sub`, then `type/*`, then `*/*`, as RFC 9110 §12.5.1
/// says); `None` when no range matches.
fn quality(headers: &HeaderMap, mime: &str, wildcards: bool) -> Option<f32> {
    let (kind, _) = mime.split_once('/').unwrap_or((mime, ""));
    let mut best: Option<(u8, f32)> = None;
    let items = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','));
    for item in items {
        let mut parts = item.split(';');
        let range = parts.next().unwrap_or_default().trim();
        let specificity = if range.eq_ignore_ascii_case(mime) {
            3
        } else if !wildcards {
            continue;
        } else if range
            .strip_suffix("/*")
            .is_some_and(|k| k.eq_ignore_ascii_case(kind))
        {
            2
        } else if range == "*/*" {
            1
        } else {
            continue;
        };
        let q = parts
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
            .map_or(1.0, |(_, v)| v.trim().parse::<f32>().unwrap_or(1.0));
        best = match best {
            Some((s, b)) if s > specificity || (s == specificity && b >= q) => Some((s, b)),
            _ => Some((specificity, q)),
        };
    }
    best.map(|(_, q)| q)
}

/// The protocol version of the live session `id` (touched, so it lives
/// on); `None` when it is unknown, ended, expired or another principal's.
async fn find_session(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> Result<Option<String>, Response> {
    let now = state.now_ms();
    let ttl = session_ttl_ms(state, principal);
    let record = state
        .store()
        .touch_session(&hash_session_id(id), &principal.key(), now, now + ttl)
        .await
        .map_err(|e| AppError::from(e).into_response())?;
    Ok(record.map(|r| r.protocol_version))
}

async fn open_session(
    state: &AppState,
    principal: &Principal,
    client: &ClientKey,
    init: &dispatch::Initialize,
) -> Result<String, Response> {
    let mut raw = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut raw);
    let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    let now = state.now_ms();
    let quota = &state.config().quota;
    let class = match principal {
        Principal::Anonymous => SessionClass::Anonymous {
            client: client.as_str().to_owned(),
        },
        _ => SessionClass::Bearer {
            account_id: principal.account().map(|a| a.as_str().to_owned()),
        },
    };
    let opened = state
        .store()
        .create_session(
            &NewSession {
                id_hash: hash_session_id(&id),
                protocol_version: init.version.to_owned(),
                client_name: init.client_name.clone(),
                client_version: init.client_version.clone(),
                principal: principal.key(),
                class,
                now,
                expires_at: now + session_ttl_ms(state, principal),
            },
            SessionQuota {
                per_account: quota.mcp_sessions_per_account,
                total: quota.mcp_sessions_total,
                anonymous_per_client: quota.mcp_anonymous_sessions_per_ip,
                anonymous_total: quota.mcp_anonymous_sessions_total,
            },
        )
        .await
        .map_err(|e| AppError::from(e).into_response())?;
    match opened {
        SessionOpened::Opened { ended: 0 } => Ok(id),
        SessionOpened::Opened { ended } => {
            // Anonymous quotas end sessions as a matter of course; an
            // account's is worth a line.
            if principal.is_anonymous() {
                tracing::debug!(client = %client, ended, "ended the least recently used anonymous sessions to open one");
            } else {
                tracing::info!(principal = %principal.key(), ended, "ended the account's least recently used session to open one (quota.mcp_sessions_per_account)");
            }
            Ok(id)
        }
        SessionOpened::ServerFull => {
            tracing::warn!(
                total = quota.mcp_sessions_total,
                "refused a session: the server's quota of bearer sessions is reached"
            );
            Err(AppError::new(
                Code::Unavailable,
                format!(
                    "this server holds as many open MCP sessions opened with a bearer as it \
                     may ({}, quota.mcp_sessions_total); retry later",
                    quota.mcp_sessions_total
                ),
            )
            .with_retry_after(60)
            .into_response())
        }
    }
}

/// How long an idle session of `principal` lives: anonymous ones
/// (`mcp.anonymous_session_ttl_secs`) shorter than those opened with a
/// bearer (`mcp.session_ttl_secs`).
fn session_ttl_ms(state: &AppState, principal: &Principal) -> i64 {
    let mcp = &state.config().mcp;
    let secs = if principal.is_anonymous() {
        mcp.anonymous_session_ttl_secs
    } else {
        mcp.session_ttl_secs
    };
    i64::try_from(secs)
        .unwrap_or(i64::MAX / 2000)
        .saturating_mul(1000)
}

/// Session ids are stored as their SHA-256 only.
pub fn hash_session_id(id: &str) -> String {
    let digest = Sha256::digest(id.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// 404 for a session we do not know, answering `id` when the request's
/// was readable (`None` for a DELETE, a batch or an unreadable id).
fn session_not_found(id: Option<jsonrpc::Id>) -> Response {
    json_reply(
        StatusCode::NOT_FOUND,
        jsonrpc::error(
            id,
            jsonrpc::SESSION_NOT_FOUND,
            "Session not found: it ended or expired; initialize a new one",
            None,
        ),
        false,
    )
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn json_reply(status: StatusCode, body: jsonrpc::Response, sse: bool) -> Response {
    render(Reply::status(status, body), sse, None)
}

/// Turn a reply into HTTP: 202 without a body, JSON, or one SSE event.
fn render(reply: Reply, sse: bool, session: Option<String>) -> Response {
    let mut response = match reply.body {
        None => reply.status.into_response(),
        Some(body) if sse => (
            reply.status,
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
                (header::HeaderName::from_static("x-accel-buffering"), "no"),
            ],
            format!(
                "event: message\ndata: {}\n\n",
                serde_json::to_string(&body).unwrap_or_default()
            ),
        )
            .into_response(),
        Some(body) => (reply.status, axum::Json(body)).into_response(),
    };
    if let Some(session) = session
        && let Ok(value) = HeaderValue::from_str(&session)
    {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}
