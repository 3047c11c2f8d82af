//! One error type for every surface, rendered three ways:
//!
//! * REST: HTTP status plus `{"code", "message", …}` ([`AppError::rest_body`]).
//! * MCP: a tool result with `isError: true` whose `structuredContent` is that
//!   same object (see `mcp::tools`); JSON-RPC errors are kept for protocol
//!   faults only.
//! * OAuth endpoints: RFC 6749 §5.2 `{"error", "error_description"}`
//!   ([`AppError::oauth_body`]).
//!
//! Internal failures are logged with their context and their whole cause
//! chain where they are created ([`AppError::internal`]), keep their cause
//! as the error's `source()`, and are answered with a generic message, so
//! nothing internal reaches a caller.

use std::sync::Arc;

use http::StatusCode;
use serde_json::{Map, Value, json};

/// The wire codes. Stable: clients match on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    InvalidParams,
    Unauthenticated,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    RateLimited,
    PayloadTooLarge,
    /// The request's body did not arrive within `connections.body_timeout_ms`.
    RequestTimeout,
    UnsupportedMediaType,
    NotAcceptable,
    PaymentRequired,
    QuoteNotFound,
    QuoteExpired,
    /// The quote exists but prices something else (a read, a top-up) than
    /// the call it was given to.
    WrongQuote,
    JobAlreadyRunning,
    EntitlementConsumed,
    SnapshotLimit,
    Conflict,
    InsufficientCredit,
    ActionConflict,
    TooManyExpansions,
    Unavailable,
    Internal,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidParams => "invalid_params",
            Code::Unauthenticated => "unauthenticated",
            Code::Forbidden => "forbidden",
            Code::NotFound => "not_found",
            Code::MethodNotAllowed => "method_not_allowed",
            Code::RateLimited => "rate_limited",
            Code::PayloadTooLarge => "payload_too_large",
            Code::RequestTimeout => "request_timeout",
            Code::UnsupportedMediaType => "unsupported_media_type",
            Code::NotAcceptable => "not_acceptable",
            Code::PaymentRequired => "payment_required",
            Code::QuoteNotFound => "quote_not_found",
            Code::QuoteExpired => "quote_expired",
            Code::WrongQuote => "wrong_quote",
            Code::JobAlreadyRunning => "job_already_running",
            Code::EntitlementConsumed => "entitlement_consumed",
            Code::SnapshotLimit => "snapshot_limit",
            Code::Conflict => "conflict",
            Code::InsufficientCredit => "insufficient_credit",
            Code::ActionConflict => "action_conflict",
            Code::TooManyExpansions => "too_many_expansions",
            Code::Unavailable => "unavailable",
            Code::Internal => "internal_error",
        }
    }

    pub fn status(self) -> StatusCode {
        match self {
            Code::InvalidParams => StatusCode::BAD_REQUEST,
            Code::Unauthenticated => StatusCode::UNAUTHORIZED,
            Code::Forbidden => StatusCode::FORBIDDEN,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Code::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Code::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Code::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Code::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Code::NotAcceptable => StatusCode::NOT_ACCEPTABLE,
            Code::PaymentRequired => StatusCode::PAYMENT_REQUIRED,
            Code::QuoteNotFound => StatusCode::NOT_FOUND,
            Code::QuoteExpired => StatusCode::GONE,
            Code::WrongQuote => StatusCode::BAD_REQUEST,
            Code::JobAlreadyRunning => StatusCode::CONFLICT,
            Code::EntitlementConsumed => StatusCode::CONFLICT,
            Code::SnapshotLimit => StatusCode::CONFLICT,
            Code::Conflict => StatusCode::CONFLICT,
            // Not 402: that status promises an x402 challenge, and credit
            // is topped up through POST /v1/credits, not by retrying.
            Code::InsufficientCredit => StatusCode::FORBIDDEN,
            Code::ActionConflict => StatusCode::CONFLICT,
            Code::TooManyExpansions => StatusCode::TOO_MANY_REQUESTS,
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The RFC 6749 §5.2 error code an OAuth endpoint answers with.
    fn oauth(self) -> &'static str {
        match self {
            Code::InvalidParams
            | Code::PayloadTooLarge
            | Code::RequestTimeout
            | Code::UnsupportedMediaType
            | Code::NotAcceptable
            | Code::NotFound
            | Code::MethodNotAllowed
            | Code::QuoteNotFound
            | Code::QuoteExpired
            | Code::WrongQuote
            | Code::JobAlreadyRunning
            | Code::EntitlementConsumed
            | Code::Conflict
            | Code::SnapshotLimit
            | Code::ActionConflict => "invalid_request",
            Code::Unauthenticated => "invalid_client",
            Code::Forbidden | Code::PaymentRequired | Code::InsufficientCredit => "access_denied",
            Code::RateLimited | Code::TooManyExpansions | Code::Unavailable => {
                "temporarily_unavailable"
            }
            Code::Internal => "server_error",
        }
    }
}

/// Rides on every rendered refusal's response (an extension, never sent):
/// the metrics layer counts refusals by this wire code, whatever the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused(pub &'static str);

/// What an internal error was caused by, kept for `Error::source` (never
/// rendered). Behind one thin pointer, so `AppError` stays small enough to
/// return by value.
type Cause = Arc<Box<dyn std::error::Error + Send + Sync>>;

/// A refusal or failure, ready to be rendered on any surface.
#[derive(Debug, Clone)]
pub struct AppError {
    code: Code,
    message: String,
    /// Extra members of the error object (`x402`, `job`, `retry_after`, …).
    extra: Map<String, Value>,
    /// Seconds for a `Retry-After` header (a `u32` saturated: 136 years;
    /// it keeps the error small).
    retry_after: Option<u32>,
    /// The text a model reads, when it says more than `code: message` (a
    /// payment challenge spells out the price and how to pay).
    text: Option<String>,
    /// Extra REST response headers (`PAYMENT-REQUIRED`).
    headers: Vec<(&'static str, String)>,
    /// An internal error's cause, with its own chain.
    source: Option<Cause>,
}

/// Two errors are equal when they render the same: the cause of an
/// internal one is no part of what a caller sees.
impl PartialEq for AppError {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.extra == other.extra
            && self.retry_after == other.retry_after
            && self.text == other.text
            && self.headers == other.headers
    }
}

impl AppError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            extra: Map::new(),
            retry_after: None,
            text: None,
            headers: Vec::new(),
            source: None,
        }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidParams, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(Code::NotFound, message)
    }

    /// Log `error` and its whole cause chain with `context`, once, here,
    /// and answer a generic internal error that keeps `error` as its
    /// source. Nothing of the cause is rendered.
    pub fn internal(
        context: &str,
        error: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        let cause: Cause = Arc::new(error.into());
        let chain = chain(&**cause);
        tracing::error!(context, error = %chain, "internal error");
        let mut err = Self::new(Code::Internal, "internal error; it has been logged");
        err.source = Some(cause);
        err
    }

    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let mut err = Self::new(
            Code::RateLimited,
            format!(
                "rate limited, retry after {retry_after_secs} s; anonymous requests are limited per client IP; present a bearer token for an account's larger budget"
            ),
        );
        err.retry_after = Some(saturate(retry_after_secs));
        err.extra
            .insert("retry_after".to_owned(), json!(retry_after_secs));
        err
    }

    /// A rate limit other than the anonymous one: the same opening words
    /// (what a client shows from the status line), then `reason`.
    pub fn rate_limited_because(retry_after_secs: u64, reason: &str) -> Self {
        Self::new(
            Code::RateLimited,
            format!("rate limited, retry after {retry_after_secs} s; {reason}"),
        )
        .with_retry_after(retry_after_secs)
    }

    /// A quota reached (HTTP 409, like `snapshot_limit`): `message` says
    /// what is full, names its setting and how to make room; `limit` is the
    /// quota, as the `limit` member.
    pub fn quota_reached(message: String, limit: u32) -> Self {
        Self::new(Code::Conflict, message).with("limit", json!(limit))
    }

    /// A `Retry-After` of `secs` (and a `retry_after` member).
    pub fn with_retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(saturate(secs));
        self.extra.insert("retry_after".to_owned(), json!(secs));
        self
    }

    /// Add a clause to the message.
    pub fn with_detail(mut self, detail: impl AsRef<str>) -> Self {
        self.message = format!("{}; {}", self.message, detail.as_ref());
        self
    }

    /// Add a member to the error object.
    pub fn with(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }

    /// Replace the one-line summary a model reads.
    pub fn with_text(mut self, text: String) -> Self {
        self.text = Some(text);
        self
    }

    /// Add a header to the REST rendering.
    pub fn with_header(mut self, name: &'static str, value: String) -> Self {
        self.headers.push((name, value));
        self
    }

    /// A member of the error object.
    pub fn extra(&self, key: &str) -> Option<&Value> {
        self.extra.get(key)
    }

    pub fn code(&self) -> Code {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after.map(u64::from)
    }

    /// The REST body, also the MCP `structuredContent` of a failed tool call.
    pub fn rest_body(&self) -> Value {
        let mut body = Map::new();
        body.insert("code".to_owned(), json!(self.code.as_str()));
        body.insert("message".to_owned(), json!(self.message));
        for (k, v) in &self.extra {
            body.insert(k.clone(), v.clone());
        }
        Value::Object(body)
    }

    /// The one-line summary a model reads as a failed tool's `content[0].text`.
    pub fn summary(&self) -> String {
        match &self.text {
            Some(text) => text.clone(),
            None => format!("{}: {}", self.code.as_str(), self.message),
        }
    }

    /// The RFC 6749 §5.2 body for OAuth endpoints.
    pub fn oauth_body(&self) -> Value {
        json!({ "error": self.code.oauth(), "error_description": self.message })
    }

    /// The OAuth endpoints' rendering: the code's status and
    /// [`AppError::oauth_body`].
    pub fn into_oauth_response(self) -> axum::response::Response {
        use axum::response::IntoResponse;
        let mut response = (self.status(), axum::Json(self.oauth_body())).into_response();
        response
            .extensions_mut()
            .insert(Refused(self.code.as_str()));
        response
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary())
    }
}

impl std::error::Error for AppError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|cause| &**cause as &(dyn std::error::Error + 'static))
    }
}

fn saturate(secs: u64) -> u32 {
    u32::try_from(secs).unwrap_or(u32::MAX)
}

/// `error` and every `source()` under it, joined with `: `. A cause whose
/// words its parent already says (`storage: disk full` over `disk full`)
/// is not said twice.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let words = cause.to_string();
        if !text.contains(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
        next = cause.source();
    }
    text
}

/// The REST rendering: the code's status, the error object, and
/// `Retry-After` when the refusal carries one.
impl axum::response::IntoResponse for AppError {
    fn into_response(self) -> axum::response::Response {
        let retry_after = self.retry_after;
        // A payment challenge is the x402 body itself (what raw x402
        // clients parse), with our code and message beside it.
        let body = match (self.code, self.extra.get("x402")) {
            (Code::PaymentRequired, Some(Value::Object(x402))) => {
                let mut body = x402.clone();
                for (k, v) in self.rest_body().as_object().into_iter().flatten() {
                    if k != "x402" {
                        body.insert(k.clone(), v.clone());
                    }
                }
                Value::Object(body)
            }
            _ => self.rest_body(),
        };
        let mut response = (self.status(), axum::Json(body)).into_response();
        response
            .extensions_mut()
            .insert(Refused(self.code.as_str()));
        for (name, value) in &self.headers {
            if let Ok(value) = http::HeaderValue::from_str(value) {
                response.headers_mut().insert(*name, value);
            }
        }
        if let Some(secs) = retry_after
            && let Ok(value) = http::HeaderValue::from_str(&secs.to_string())
        {
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, value);
            // Some clients show their user the status line and nothing of
            // the body (the Python MCP SDK raises "Client error '429 …' for
            // url …"): the reason phrase says it too. (A 503's keeps its own.)
            if response.status() == StatusCode::TOO_MANY_REQUESTS
                && let Ok(reason) = hyper::ext::ReasonPhrase::try_from(format!(
                    "rate limited, retry after {secs} s"
                ))
            {
                response.extensions_mut().insert(reason);
            }
        }
        response
    }
}

impl From<crate::store::StoreError> for AppError {
    fn from(err: crate::store::StoreError) -> Self {
        AppError::internal("store", err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::logs_of;

    const ALL: [Code; 21] = [
        Code::InvalidParams,
        Code::Unauthenticated,
        Code::Forbidden,
        Code::NotFound,
        Code::MethodNotAllowed,
        Code::RateLimited,
        Code::PayloadTooLarge,
        Code::UnsupportedMediaType,
        Code::NotAcceptable,
        Code::PaymentRequired,
        Code::QuoteNotFound,
        Code::QuoteExpired,
        Code::JobAlreadyRunning,
        Code::EntitlementConsumed,
        Code::SnapshotLimit,
        Code::Conflict,
        Code::InsufficientCredit,
        Code::ActionConflict,
        Code::TooManyExpansions,
        Code::Unavailable,
        Code::Internal,
    ];

    /// The codes of the guide's Errors table (docs/contract/guide.txt):
    /// the first word of each row, or the two either side of a `/`.
    fn guide_codes() -> Vec<String> {
        let guide = include_str!("../../docs/contract/guide.txt");
        let mut lines = guide.lines();
        lines
            .by_ref()
            .find(|l| *l == "structuredContent.code Meaning")
            .unwrap();
        lines
            .take_while(|l| !l.trim().is_empty())
            .flat_map(|row| {
                let words: Vec<&str> = row.split(' ').collect();
                if words.get(1) == Some(&"/") {
                    vec![words[0].to_owned(), words[2].to_owned()]
                } else {
                    vec![words[0].to_owned()]
                }
            })
            .collect()
    }

    #[test]
    fn every_code_the_guide_names_is_a_code_we_answer() {
        let codes = guide_codes();
        assert_eq!(codes.len(), 10, "{codes:?}");
        let ours: Vec<&str> = ALL.iter().map(|c| c.as_str()).collect();
        for code in &codes {
            assert!(ours.contains(&code.as_str()), "{code} is not a Code");
        }
    }

    #[test]
    fn rest_body_carries_code_message_and_extras() {
        let err = AppError::not_found("no such job").with("job", json!("job_1"));
        assert_eq!(
            err.rest_body(),
            json!({"code": "not_found", "message": "no such job", "job": "job_1"})
        );
        assert_eq!(err.status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn oauth_body_uses_rfc6749_codes() {
        let err = AppError::invalid_params("redirect_uri is not registered");
        assert_eq!(
            err.oauth_body(),
            json!({"error": "invalid_request", "error_description": "redirect_uri is not registered"})
        );
        assert_eq!(
            AppError::new(Code::Internal, "x").oauth_body()["error"],
            "server_error"
        );
    }

    #[test]
    fn internal_errors_hide_their_cause() {
        let err = AppError::internal("store", "disk I/O error at /secret/path");
        assert_eq!(err.code(), Code::Internal);
        assert!(!err.rest_body().to_string().contains("/secret/path"));
    }

    /// A failure two causes deep: `outer` over `middle` over `root`.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1
                .as_deref()
                .map(|l| l as &(dyn std::error::Error + 'static))
        }
    }

    #[test]
    fn an_internal_error_logs_its_whole_chain_once_and_answers_generically() {
        let cause = Layer(
            "reading a page",
            Some(Box::new(Layer(
                "database is locked",
                Some(Box::new(Layer("/secret/ledger.sqlite: EBUSY", None))),
            ))),
        );
        let (err, logs) = logs_of(|| AppError::internal("ledger page", cause));
        assert_eq!(logs.matches("internal error").count(), 1, "{logs}");
        assert!(logs.contains("ERROR"), "{logs}");
        assert!(logs.contains("ledger page"), "{logs}");
        assert!(
            logs.contains("reading a page: database is locked: /secret/ledger.sqlite: EBUSY"),
            "{logs}"
        );
        // The wire says nothing of it, on every rendering.
        for wire in [
            err.rest_body().to_string(),
            err.oauth_body().to_string(),
            err.summary(),
        ] {
            assert!(!wire.contains("database"), "{wire}");
            assert!(!wire.contains("secret"), "{wire}");
            assert!(
                wire.contains("internal error; it has been logged"),
                "{wire}"
            );
        }
        // The cause stays the error's source, chain and all.
        let source = std::error::Error::source(&err).unwrap();
        assert_eq!(source.to_string(), "reading a page");
        assert_eq!(
            chain(source),
            "reading a page: database is locked: /secret/ledger.sqlite: EBUSY"
        );
    }

    #[test]
    fn a_cause_its_parent_already_names_is_said_once() {
        let err = Layer(
            "storage: disk full",
            Some(Box::new(Layer("disk full", None))),
        );
        assert_eq!(chain(&err), "storage: disk full");
    }

    #[test]
    fn rate_limited_carries_retry_after() {
        let err = AppError::rate_limited(2);
        assert_eq!(err.retry_after(), Some(2));
        assert_eq!(err.rest_body()["code"], "rate_limited");
    }
}
