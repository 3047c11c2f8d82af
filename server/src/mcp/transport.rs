//! The HTTP side of `/mcp` (Streamable HTTP): who may call, how much, in
//! which framing, and with which session. JSON-RPC semantics live in
//! `dispatch`; this module turns HTTP into messages and replies into HTTP.
//!
//! Order of checks on a POST, cheapest and most protective first:
//! cross-site and foreign-origin browser requests (403); the bearer (401,
//! never downgraded); the anonymous rate limit per client IP (429 with
//! `Retry-After`); media types (415, 406); the 64 KiB body cap (413); JSON
//! (-32700, HTTP 400); the session named by `Mcp-Session-Id` (404 when
//! unknown or ended); then dispatch.

use std::net::SocketAddr;

use axum::{
    body::{Body, Bytes},
    extract::{ConnectInfo, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use base64::Engine as _;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use rand::RngCore;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{
    dispatch::{self, McpHeaders, Reply},
    jsonrpc::{self, Incoming},
    registry::ToolContext,
    version,
};
use crate::{
    auth::{self, Principal},
    error::{AppError, Code},
    http::unauthenticated,
    state::AppState,
    store::NewSession,
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
    check_browser(state, headers).map_err(refuse)?;
    let principal = admit(state, peer, headers).await?;
    check_content_type(headers).map_err(refuse)?;
    let sse = wants_sse(headers).map_err(refuse)?;
    let bytes = read_body(body, state.config().mcp.max_body_bytes).await?;
    let mcp_headers = McpHeaders {
        protocol_version: header_str(headers, PROTOCOL_VERSION_HEADER).map(str::to_owned),
        method: header_str(headers, "mcp-method").map(str::to_owned),
        name: header_str(headers, "mcp-name").map(str::to_owned),
    };
    let stateless_header =
        mcp_headers.protocol_version.as_deref().map(str::trim) == Some(version::STATELESS);
    let message: Value = serde_json::from_slice(&bytes).map_err(|_| {
        let error = jsonrpc::error(
            Value::Null,
            jsonrpc::PARSE_ERROR,
            "Parse error: the body is not JSON",
            None,
        );
        let error = if stateless_header {
            jsonrpc::without_null_id(error)
        } else {
            error
        };
        json_reply(StatusCode::BAD_REQUEST, &error, false)
    })?;
    let ctx = ToolContext {
        state: state.clone(),
        principal,
        presented: crate::http::presented(headers),
    };

    if !message.is_array() && dispatch::is_stateless(&message, &mcp_headers) {
        // 2026-07-28 has no sessions: an Mcp-Session-Id is ignored.
        let reply = match jsonrpc::classify(message) {
            Err(error) => Reply {
                status: StatusCode::BAD_REQUEST,
                body: Some(jsonrpc::without_null_id(error)),
            },
            Ok(Incoming::Request { id, method, params }) => {
                dispatch::stateless_request(ctx, id, &method, params, &mcp_headers).await
            }
            Ok(Incoming::Notification { .. } | Incoming::Response) => Reply::accepted(),
        };
        return Ok(render(reply, sse, None));
    }
    legacy(ctx, headers, &mcp_headers, message, sse).await
}

/// Requests of the initialize era: sessions, batches, `initialize`.
async fn legacy(
    ctx: ToolContext,
    headers: &HeaderMap,
    mcp_headers: &McpHeaders,
    message: Value,
    sse: bool,
) -> Result<Response, Response> {
    let state = ctx.state.clone();
    let header_version = mcp_headers.protocol_version.as_deref().map(str::trim);
    if let Some(v) = header_version
        && !version::is_supported(v)
    {
        return Err(json_reply(
            StatusCode::BAD_REQUEST,
            &jsonrpc::error(
                Value::Null,
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
    let session_version = match header_str(headers, SESSION_HEADER) {
        None => None,
        Some(id) => Some(find_session(&state, &ctx.principal, id).await?),
    };
    let speaks = session_version
        .as_deref()
        .or(header_version)
        .unwrap_or(version::ASSUMED_WITHOUT_HEADER)
        .to_owned();

    match message {
        Value::Array(batch) => {
            let max = state.config().mcp.max_batch;
            let refuse = |text: String| {
                let error = jsonrpc::error(Value::Null, jsonrpc::INVALID_REQUEST, &text, None);
                let error = if speaks == version::STATELESS {
                    jsonrpc::without_null_id(error)
                } else {
                    error
                };
                json_reply(StatusCode::BAD_REQUEST, &error, false)
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
            let mut responses = Vec::new();
            for message in batch {
                match jsonrpc::classify(message) {
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
                    body: Some(Value::Array(responses)),
                }
            };
            Ok(render(reply, sse, None))
        }
        message => match jsonrpc::classify(message) {
            Err(error) => Err(json_reply(StatusCode::BAD_REQUEST, &error, sse)),
            Ok(Incoming::Notification { .. } | Incoming::Response) => {
                Ok(render(Reply::accepted(), sse, None))
            }
            Ok(Incoming::Request { id, method, params }) if method == "initialize" => {
                let init = match dispatch::parse_initialize(&id, params.as_ref()) {
                    Ok(init) => init,
                    Err(error) => return Ok(json_reply(StatusCode::OK, &error, sse)),
                };
                let session = open_session(&state, &ctx.principal, &init).await?;
                let body = jsonrpc::result(id, dispatch::initialize_result(init.version, &state));
                Ok(render(
                    Reply {
                        status: StatusCode::OK,
                        body: Some(body),
                    },
                    sse,
                    Some(session),
                ))
            }
            Ok(Incoming::Request { id, method, params }) => {
                let body = dispatch::legacy_request(ctx, id, &method, params, &speaks).await;
                Ok(render(
                    Reply {
                        status: StatusCode::OK,
                        body: Some(body),
                    },
                    sse,
                    None,
                ))
            }
        },
    }
}

/// `GET /mcp`: no server-initiated stream (405 for SSE clients); a plain GET
/// describes the server.
pub async fn get(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if accepts(&headers, "text/event-stream") && !accepts(&headers, "application/json") {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, "POST")],
            axum::Json(
                AppError::new(
                    Code::InvalidParams,
                    "this endpoint has no server-initiated stream; POST JSON-RPC messages instead",
                )
                .rest_body(),
            ),
        )
            .into_response();
    }
    axum::Json(describe(&state)).into_response()
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
        "tools": state.registry().iter().map(|t| t.meta.name).collect::<Vec<_>>(),
        "serverCard": format!("{}/.well-known/mcp/server-card.json", state.public_url()),
        "documentation": format!("{}/llms.txt", state.public_url()),
    })
}

/// `DELETE /mcp`: end the session named by `Mcp-Session-Id`.
pub async fn delete(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    let run = async {
        check_browser(&state, &headers).map_err(IntoResponse::into_response)?;
        let principal = admit(&state, peer, &headers).await?;
        let Some(id) = header_str(&headers, SESSION_HEADER) else {
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
            Err(session_not_found())
        }
    };
    run.await.unwrap_or_else(|refusal| refusal)
}

/// Refuse what a browser sends on another site's behalf.
fn check_browser(state: &AppState, headers: &HeaderMap) -> Result<(), AppError> {
    if header_str(headers, "sec-fetch-site") == Some("cross-site") {
        tracing::info!("refused a cross-site browser request");
        return Err(AppError::new(
            Code::Forbidden,
            "cross-site browser requests are refused; this endpoint is for MCP clients",
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

/// Resolve the bearer and apply the anonymous rate limit. A request whose
/// bearer is refused is counted against its IP first, so guessing tokens is
/// as limited as any anonymous traffic.
async fn admit(
    state: &AppState,
    peer: SocketAddr,
    headers: &HeaderMap,
) -> Result<Principal, Response> {
    let authorization = match headers.get(header::AUTHORIZATION) {
        None => None,
        Some(value) => Some(value.to_str().map_err(|_| {
            unauthenticated(
                state,
                AppError::new(Code::Unauthenticated, "unreadable Authorization header"),
            )
        })?),
    };
    let resolved = auth::resolve(authorization);
    if !matches!(&resolved, Ok(p) if !p.is_anonymous()) {
        crate::http::limit_anonymous(state, crate::http::client_ip(state, peer, headers)).await?;
    }
    resolved.map_err(|err| unauthenticated(state, err))
}

fn check_content_type(headers: &HeaderMap) -> Result<(), AppError> {
    match header_str(headers, "content-type") {
        None => Ok(()),
        Some(ct) => {
            let mime = ct.split(';').next().unwrap_or_default().trim();
            if mime.eq_ignore_ascii_case("application/json") {
                Ok(())
            } else {
                Err(AppError::new(
                    Code::UnsupportedMediaType,
                    "POST a JSON-RPC message with Content-Type: application/json",
                ))
            }
        }
    }
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

/// Whether the Accept header admits `mime` (wildcards count).
fn accepts(headers: &HeaderMap, mime: &str) -> bool {
    let (kind, _) = mime.split_once('/').unwrap_or((mime, ""));
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| item.split(';').next().unwrap_or_default().trim())
        .any(|item| {
            item.eq_ignore_ascii_case(mime)
                || item == "*/*"
                || item
                    .strip_suffix("/*")
                    .is_some_and(|k| k.eq_ignore_ascii_case(kind))
        })
}

async fn read_body(body: Body, max: usize) -> Result<Bytes, Response> {
    let too_large = || {
        AppError::new(
            Code::PayloadTooLarge,
            format!("request bodies are limited to {max} bytes"),
        )
        .into_response()
    };
    match Limited::new(body, max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Err(err) => {
            tracing::debug!(error = %err, "request body unreadable");
            Err(AppError::invalid_params("the request body could not be read").into_response())
        }
    }
}

async fn find_session(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> Result<String, Response> {
    let now = state.now_ms();
    let ttl = session_ttl_ms(state);
    let record = state
        .store()
        .touch_session(&hash_session_id(id), &principal.key(), now, now + ttl)
        .await
        .map_err(|e| AppError::from(e).into_response())?;
    record
        .map(|r| r.protocol_version)
        .ok_or_else(session_not_found)
}

async fn open_session(
    state: &AppState,
    principal: &Principal,
    init: &dispatch::Initialize,
) -> Result<String, Response> {
    let mut raw = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut raw);
    let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    let now = state.now_ms();
    state
        .store()
        .create_session(&NewSession {
            id_hash: hash_session_id(&id),
            protocol_version: init.version.to_owned(),
            client_name: init.client_name.clone(),
            client_version: init.client_version.clone(),
            principal: principal.key(),
            now,
            expires_at: now + session_ttl_ms(state),
        })
        .await
        .map_err(|e| AppError::from(e).into_response())?;
    Ok(id)
}

fn session_ttl_ms(state: &AppState) -> i64 {
    i64::try_from(state.config().mcp.session_ttl_secs)
        .unwrap_or(i64::MAX / 2000)
        .saturating_mul(1000)
}

/// Session ids are stored as their SHA-256 only.
pub fn hash_session_id(id: &str) -> String {
    let digest = Sha256::digest(id.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn session_not_found() -> Response {
    json_reply(
        StatusCode::NOT_FOUND,
        &jsonrpc::error(
            Value::Null,
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

fn json_reply(status: StatusCode, body: &Value, sse: bool) -> Response {
    render(
        Reply {
            status,
            body: Some(body.clone()),
        },
        sse,
        None,
    )
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
            format!("event: message\ndata: {body}\n\n"),
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
