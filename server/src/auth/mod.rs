//! Who is calling. Every `/mcp` and `/v1` request resolves to a [`Principal`]
//! before anything else runs: no `Authorization` header is the anonymous
//! principal (a first-class mode, not a fallback); a bearer must resolve to
//! an account, or the request is refused with 401 and a `WWW-Authenticate`
//! challenge naming the protected-resource metadata. A bearer is never
//! silently downgraded to anonymous.
//!
//! Accounts, MCP tokens (`lm_…`) and API keys (`lk_…`) arrive with the
//! accounts work; until then no bearer can resolve, so every bearer is
//! refused. [`resolve_bearer`] is the one seam where token lookup plugs in.

pub mod oidc;
pub mod ping;
pub mod signin;
pub mod siws;

pub use ping::{PingResult, ping};

use serde::Serialize;

use crate::error::{AppError, Code};

/// The caller of a request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Principal {
    /// No credential: may quote, pay per call and reuse receipts.
    Anonymous,
}

impl Principal {
    /// A stable key for binding state (sessions) to the principal.
    pub fn key(&self) -> String {
        match self {
            Principal::Anonymous => "anonymous".to_owned(),
        }
    }

    pub fn is_anonymous(&self) -> bool {
        matches!(self, Principal::Anonymous)
    }
}

/// Resolve the `Authorization` header value, if any.
pub fn resolve(authorization: Option<&str>) -> Result<Principal, AppError> {
    match authorization {
        None => Ok(Principal::Anonymous),
        Some(value) => {
            let token = value
                .strip_prefix("Bearer ")
                .or_else(|| value.strip_prefix("bearer "))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .ok_or_else(|| {
                    AppError::new(
                        Code::Unauthenticated,
                        "the Authorization header must be `Bearer <token>`",
                    )
                })?;
            resolve_bearer(token)
        }
    }
}

/// Look a bearer token up. No token kinds exist yet, so none resolves.
fn resolve_bearer(token: &str) -> Result<Principal, AppError> {
    let kind = if token.starts_with("lm_") {
        "MCP token"
    } else if token.starts_with("lk_") {
        "API key"
    } else {
        "bearer token"
    };
    tracing::info!(kind, "refused an unknown bearer");
    Err(AppError::new(
        Code::Unauthenticated,
        format!("unknown or revoked {kind}; connect without a token to be anonymous"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_header_is_anonymous() {
        assert_eq!(resolve(None), Ok(Principal::Anonymous));
    }

    #[test]
    fn unknown_mcp_token_is_refused_not_downgraded() {
        let err = resolve(Some("Bearer lm_0123456789")).err();
        assert_eq!(err.map(|e| e.code()), Some(Code::Unauthenticated));
    }

    #[test]
    fn malformed_authorization_is_refused() {
        for value in ["Basic dXNlcjpwYXNz", "Bearer ", "lm_abc"] {
            assert_eq!(
                resolve(Some(value)).err().map(|e| e.code()),
                Some(Code::Unauthenticated),
                "{value}"
            );
        }
    }
}
