//! Who is calling. Every `/mcp` and `/v1` request resolves to a
//! `Principal` (`accounts::principal`) before anything else runs (`http::admit`): no `Authorization` header is
//! the anonymous principal (a first-class mode, not a fallback); a bearer
//! must resolve, or the request is refused with 401 and a `WWW-Authenticate`
//! challenge naming the protected-resource metadata. A bearer is never
//! silently downgraded to anonymous.
//!
//! A bearer is an MCP token (`lm_…`) or an API key (`lk_…`), which resolve
//! to their account and scopes through `accounts::tokens::resolve`, or the
//! operator's admin key, whose SHA-256 alone is in the configuration. The
//! sign-in methods people use in the portal (`siws`, `oidc`) live here too;
//! a portal session never authenticates `/v1` or `/mcp`.

pub mod oidc;
pub mod ping;
pub mod signin;
pub mod siws;

pub use ping::{PingResult, ping};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::{
    accounts::{
        AccountCaller, Principal,
        tokens::{self, TokenKind},
    },
    error::{AppError, Code},
    store::Store,
};

/// What resolving a bearer reads: the store (tokens), the time (a token's
/// last use), and the admin key's hash from the configuration.
#[derive(Clone, Copy)]
pub struct Resolver<'a> {
    pub store: &'a Store,
    pub now_ms: i64,
    /// Lowercase hex SHA-256 of the admin key, if one is configured.
    pub admin_key_sha256: Option<&'a str>,
}

/// Resolve the `Authorization` header value, if any.
pub async fn resolve(
    resolver: Resolver<'_>,
    authorization: Option<&str>,
) -> Result<Principal, AppError> {
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
            resolve_bearer(resolver, token).await
        }
    }
}

/// Look a bearer up: an account's token, or the admin key.
async fn resolve_bearer(resolver: Resolver<'_>, token: &str) -> Result<Principal, AppError> {
    if token.starts_with(crate::oauth::ACCESS_PREFIX) {
        return resolve_oauth(resolver, token).await;
    }
    let kind = if token.starts_with("lm_") {
        "MCP token"
    } else if token.starts_with("lk_") {
        "API key"
    } else {
        if is_admin_key(resolver.admin_key_sha256, token) {
            return Ok(Principal::Admin);
        }
        "bearer token"
    };
    if let Some(credential) = tokens::resolve(resolver.store, resolver.now_ms, token).await? {
        return Ok(Principal::Account(AccountCaller {
            account_id: credential.account_id,
            token_id: credential.token_id,
            kind: credential.kind,
            scopes: credential.scopes,
        }));
    }
    tracing::info!(kind, "refused an unknown or revoked bearer");
    Err(AppError::new(
        Code::Unauthenticated,
        format!("unknown or revoked {kind}; connect without a token to be anonymous"),
    ))
}

/// An OAuth access token (`lo_…`): exactly an MCP token of its account,
/// with the scopes it was granted. Expired, revoked, or of a revoked grant
/// is refused like any unknown bearer.
async fn resolve_oauth(resolver: Resolver<'_>, token: &str) -> Result<Principal, AppError> {
    let resolved = crate::oauth::flow::resolve_access(resolver.store, resolver.now_ms, token)
        .await
        .map_err(|e| AppError::internal("oauth token", e))?;
    match resolved {
        Some(grant) => Ok(Principal::Account(AccountCaller {
            account_id: grant.account_id,
            token_id: grant.grant_id,
            kind: TokenKind::Mcp,
            scopes: grant.scopes,
        })),
        None => {
            tracing::info!("refused an unknown, expired or revoked OAuth access token");
            Err(AppError::new(
                Code::Unauthenticated,
                "unknown, expired or revoked OAuth access token; refresh it or authorize again",
            ))
        }
    }
}

/// Whether `token` is the admin key: its SHA-256 against the configured
/// one, in constant time.
fn is_admin_key(configured: Option<&str>, token: &str) -> bool {
    let Some(configured) = configured else {
        return false;
    };
    let digest = Sha256::digest(token.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    bool::from(
        hex.as_bytes()
            .ct_eq(configured.trim().to_ascii_lowercase().as_bytes()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // sha256("admin-key-for-tests")
    fn hash_of(text: &str) -> String {
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn the_admin_key_matches_only_its_own_hash() {
        let hash = hash_of("admin-key-for-tests");
        assert!(is_admin_key(Some(&hash), "admin-key-for-tests"));
        assert!(is_admin_key(
            Some(&hash.to_ascii_uppercase()),
            "admin-key-for-tests"
        ));
        assert!(!is_admin_key(Some(&hash), "admin-key-for-test"));
        assert!(!is_admin_key(Some(&hash), &hash));
        assert!(!is_admin_key(None, "admin-key-for-tests"));
        assert!(!is_admin_key(Some(""), ""));
    }
}
