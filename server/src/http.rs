//! What every REST route needs at its edge: who is calling ([`Caller`]),
//! the JSON body refused in our error shape ([`JsonBody`]), and the 401
//! challenge an OAuth-capable client follows ([`unauthenticated`]). The MCP
//! transport uses the same challenge.

use axum::{
    extract::{FromRequest, FromRequestParts, Request},
    http::{HeaderValue, header, request::Parts},
    response::{IntoResponse, Response},
};
use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use bytes::Bytes;
use serde::de::DeserializeOwned;

use crate::{
    auth::{self, Principal},
    error::{AppError, Code},
    state::AppState,
    store::{RateDecision, RateRule},
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

/// The `Authorization` header resolved to a principal; an unreadable or
/// unknown credential is refused, never downgraded to anonymous.
pub fn resolve(headers: &axum::http::HeaderMap) -> Result<Principal, AppError> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|value| {
            value.to_str().map_err(|_| {
                AppError::new(Code::Unauthenticated, "unreadable Authorization header")
            })
        })
        .transpose()?;
    auth::resolve(authorization)
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

/// Anonymous callers share one budget per client IP across MCP and REST
/// (`rate_limit.anon_rps`, burst `rate_limit.anon_burst`); over it is 429
/// with `Retry-After`.
pub async fn limit_anonymous(state: &AppState, ip: IpAddr) -> Result<(), Response> {
    let rule = RateRule {
        per_second: state.config().rate_limit.anon_rps,
        burst: state.config().rate_limit.anon_burst,
    };
    let decision = state
        .store()
        .take_rate_token(&format!("anon:{ip}"), state.now_ms(), rule)
        .await
        .map_err(|e| AppError::from(e).into_response())?;
    match decision {
        RateDecision::Allowed => Ok(()),
        RateDecision::Limited { retry_after_ms } => {
            let secs = u64::try_from(retry_after_ms.max(1))
                .unwrap_or(1)
                .div_ceil(1000)
                .max(1);
            Err(AppError::rate_limited(secs).into_response())
        }
    }
}

/// The client's IP: the peer, or the last `X-Forwarded-For` hop behind a
/// proxy we were told to trust.
pub fn client_ip(state: &AppState, peer: SocketAddr, headers: &axum::http::HeaderMap) -> IpAddr {
    if state.config().trust_forwarded_for
        && let Some(ip) = headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .and_then(|v| v.trim().parse().ok())
    {
        return ip;
    }
    peer.ip()
}

/// The caller of a REST request: who they are and what they present to pay.
pub struct Caller(pub Principal, pub crate::payments::Presented);

impl FromRequestParts<AppState> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let principal = resolve(&parts.headers).map_err(|err| unauthenticated(state, err))?;
        if matches!(principal, Principal::Anonymous)
            && let Some(ConnectInfo(peer)) = parts.extensions.get::<ConnectInfo<SocketAddr>>()
        {
            limit_anonymous(state, client_ip(state, *peer, &parts.headers)).await?;
        }
        Ok(Caller(principal, presented(&parts.headers)))
    }
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
    let mut response = axum::Json(body).into_response();
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

/// A JSON request body; a malformed one is `invalid_params` in the REST
/// error shape (axum's own rejection is plain text).
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for JsonBody<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Response> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(IntoResponse::into_response)?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| AppError::invalid_params(format!("body: {e}")).into_response())
    }
}
