//! What every REST route needs at its edge: who is calling ([`Caller`]),
//! the JSON body refused in our error shape ([`JsonBody`]), and the 401
//! challenge an OAuth-capable client follows ([`unauthenticated`]). The MCP
//! transport uses the same challenge.

use axum::{
    extract::{FromRequest, FromRequestParts, Request},
    http::{HeaderValue, header, request::Parts},
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use serde::de::DeserializeOwned;

use crate::{
    auth::{self, Principal},
    error::{AppError, Code},
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

/// The caller of a REST request: who they are and what they present to pay.
pub struct Caller(pub Principal, pub crate::payments::Presented);

impl FromRequestParts<AppState> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let principal = resolve(&parts.headers).map_err(|err| unauthenticated(state, err))?;
        Ok(Caller(principal, presented(&parts.headers)))
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
