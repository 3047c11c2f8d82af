//! Who is calling. Every `/mcp` and `/v1` request resolves to a [`Principal`]
//! before anything else runs (`http::admit`): no `Authorization` header is
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

pub mod action;
pub mod oidc;
pub mod ping;
pub mod signin;
pub mod siws;

pub use action::Action;
pub use ping::{PingResult, ping};

use serde::Serialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::{
    accounts::{
        AccountId,
        tokens::{self, Scopes, TokenId, TokenKind},
    },
    error::{AppError, Code},
    store::Store,
};

/// The caller of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Principal {
    /// No credential: may quote, pay per call and reuse receipts.
    Anonymous,
    /// An account, through one of its tokens.
    Account(AccountCaller),
    /// The operator, through the admin key: reads any job and any wallet.
    Admin,
    /// Whoever holds a live share link (`/s/{token}`): reads that one
    /// wallet and nothing else. Never resolved from a bearer; only the
    /// share pages build it, once the link is checked (`share::open`).
    Link(LinkReader),
}

/// The holder of a share link: the wallet the link shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkReader {
    pub wallet: crate::solana::WalletAddress,
}

/// An account calling with one of its tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountCaller {
    pub account_id: AccountId,
    pub token_id: TokenId,
    pub kind: TokenKind,
    pub scopes: Scopes,
}

impl Principal {
    /// A stable key for binding state (sessions) to the principal.
    pub fn key(&self) -> String {
        match self {
            Principal::Anonymous => "anonymous".to_owned(),
            Principal::Account(a) => format!("account:{}", a.token_id.as_str()),
            Principal::Admin => "admin".to_owned(),
            Principal::Link(l) => format!("link:{}", l.wallet),
        }
    }

    pub fn is_anonymous(&self) -> bool {
        matches!(self, Principal::Anonymous)
    }

    /// The calling account, if any.
    pub fn account(&self) -> Option<&AccountId> {
        match self {
            Principal::Account(a) => Some(&a.account_id),
            Principal::Anonymous | Principal::Admin | Principal::Link(_) => None,
        }
    }

    /// Refuse an account token that lacks a scope `action` needs
    /// (`forbidden`, before anything is read, charged or published).
    /// Anonymous callers pay per call and the admin key holds every scope,
    /// so only a token's scopes can refuse; what needs an account asks
    /// [`Principal::require_account`] first.
    pub fn permit(&self, action: Action) -> Result<(), AppError> {
        let Principal::Account(a) = self else {
            return Ok(());
        };
        let needs = action.needs();
        let Some(missing) = needs.iter().find(|s| !a.scopes.allows(**s)) else {
            return Ok(());
        };
        let all: Vec<&str> = needs.iter().map(|s| s.as_str()).collect();
        Err(AppError::new(
            Code::Forbidden,
            format!(
                "this {} lacks the {} scope (it has {}); {} needs {}: mint one with it on the \
                 Keys page",
                credential_name(a.kind),
                missing.as_str(),
                a.scopes,
                action.words(),
                all.join(" and "),
            ),
        )
        // RFC 6750 §3.1: `scope` lists every scope the action needs;
        // `http::api_edge` adds the resource metadata.
        .with_header(
            "www-authenticate",
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}\"",
                all.join(" ")
            ),
        ))
    }

    /// Refuse anyone but an account (`unauthenticated`), naming what needs
    /// one.
    pub fn require_account(&self, what: &str) -> Result<&AccountCaller, AppError> {
        match self {
            Principal::Account(a) => Ok(a),
            Principal::Anonymous | Principal::Admin | Principal::Link(_) => Err(AppError::new(
                Code::Unauthenticated,
                format!(
                    "{what} needs an account: present an MCP token (lm_…) or an API key (lk_…) \
                     as Authorization: Bearer"
                ),
            )),
        }
    }

    /// The principal as `ping` and `GET /v1/ping` show it.
    pub fn view(&self) -> PrincipalView {
        match self {
            // A link's holder is anonymous to everything but its wallet.
            Principal::Anonymous | Principal::Link(_) => PrincipalView::Anonymous,
            Principal::Account(a) => PrincipalView::Account {
                account_id: a.account_id.as_str().to_owned(),
                credential: match a.kind {
                    TokenKind::Mcp => CredentialView::McpToken,
                    TokenKind::Api => CredentialView::ApiKey,
                },
                scopes: a.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
            },
            Principal::Admin => PrincipalView::Admin,
        }
    }
}

fn credential_name(kind: TokenKind) -> &'static str {
    match kind {
        TokenKind::Mcp => "MCP token",
        TokenKind::Api => "API key",
    }
}

/// Who a credential resolves to, as callers read it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[schema(as = Principal)]
#[schemars(rename = "Principal")]
pub enum PrincipalView {
    /// No credential.
    Anonymous,
    /// An account through one of its tokens.
    Account {
        account_id: String,
        /// mcp_token or api_key.
        credential: CredentialView,
        /// read and/or scan.
        scopes: Vec<String>,
    },
    /// The operator's admin key.
    Admin,
}

/// mcp_token (lm_…) or api_key (lk_…).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CredentialView {
    McpToken,
    ApiKey,
}

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

    fn account(scopes: &str) -> Principal {
        Principal::Account(AccountCaller {
            account_id: AccountId::parse("acct_01JDZQ3Y3E8W9V5K2M7N4P6R8T").unwrap(),
            token_id: TokenId::parse("tok_01JDZQ3Y3E8W9V5K2M7N4P6R8T").unwrap(),
            kind: TokenKind::Mcp,
            scopes: Scopes::parse(scopes).unwrap(),
        })
    }

    #[test]
    fn a_token_without_the_scope_is_forbidden_and_others_pass() {
        let err = account("read").permit(Action::StartScan).unwrap_err();
        assert_eq!(err.code(), Code::Forbidden);
        assert!(
            err.message().contains("lacks the scan scope"),
            "{}",
            err.message()
        );
        assert!(account("read").permit(Action::ReadWallet).is_ok());
        assert!(account("read,scan").permit(Action::StartScan).is_ok());
        assert!(Principal::Anonymous.permit(Action::StartScan).is_ok());
        assert!(Principal::Admin.permit(Action::SpendCredits).is_ok());
    }

    #[test]
    fn a_refusal_names_every_scope_the_action_needs() {
        let err = account("scan").permit(Action::PublishLink).unwrap_err();
        assert_eq!(err.code(), Code::Forbidden);
        assert!(
            err.message().contains("lacks the read scope")
                && err
                    .message()
                    .contains("publishing a share link needs read and scan"),
            "{}",
            err.message()
        );
        let response = axum::response::IntoResponse::into_response(err);
        assert_eq!(
            response.headers()["www-authenticate"],
            "Bearer error=\"insufficient_scope\", scope=\"read scan\""
        );
    }

    #[test]
    fn only_an_account_passes_require_account() {
        assert!(account("read").require_account("list_wallets").is_ok());
        for p in [Principal::Anonymous, Principal::Admin] {
            let err = p.require_account("list_wallets").unwrap_err();
            assert_eq!(err.code(), Code::Unauthenticated);
            assert_eq!(
                err.message(),
                "list_wallets needs an account: present an MCP token (lm_…) or an API key \
                 (lk_…) as Authorization: Bearer"
            );
        }
    }

    #[test]
    fn the_view_names_the_credential_and_scopes() {
        let view = serde_json::to_value(account("scan,read").view()).unwrap();
        assert_eq!(
            view,
            serde_json::json!({
                "kind": "account",
                "account_id": "acct_01JDZQ3Y3E8W9V5K2M7N4P6R8T",
                "credential": "mcp_token",
                "scopes": ["read", "scan"],
            })
        );
    }
}
