//! The caller of a request, as every layer names it: [`Principal`]
//! (anonymous, an account through one of its tokens, the admin key, a share
//! link's holder), what it may do ([`Principal::permit`], over the scope
//! table of `accounts::action`) and how `ping` shows it.
//!
//! A leaf: it is made of the accounts' own values (ids, token kinds,
//! scopes) and imports nothing above them, so the paywall, the reads and
//! the account tools take a principal without reaching the credential
//! resolver (`auth`), which builds one from an `Authorization` header.

use serde::Serialize;

use super::{
    AccountId, Action,
    tokens::{Scopes, TokenId, TokenKind},
};
use crate::error::{AppError, Code};

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

#[cfg(test)]
mod tests {
    use super::*;

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
