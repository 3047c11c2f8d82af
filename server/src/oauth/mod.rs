//! Ledger as the OAuth 2.1 authorization server of its own MCP endpoint
//! (docs/oauth.md): dynamic client registration (RFC 7591) and Client ID
//! Metadata Documents, the authorization code flow with PKCE S256 only,
//! RFC 8707 resource indicators, RFC 9207 `iss`, refresh rotation with
//! reuse detection, and RFC 7009 revocation.
//!
//! This module is the protocol and nothing else: it knows no axum, no
//! cookies and no HTML. Each step is a function over an [`OAuth`] context
//! (the store, the time, the [`Settings`], the metadata fetcher) that
//! returns a value or an [`OAuthError`] in RFC 6749's vocabulary; the
//! surfaces over it only parse a request, call one step, and render: the
//! JSON endpoints in `oauth_http`, the consent page in `portal::consent`,
//! each with its context from `Services::oauth`. (kanidm splits
//! `idm/oauth2.rs` from its HTTP handlers the same way.)
//!
//! An access token is `lo_` and 32 random bytes in base58, a refresh token
//! `lr_` and the same; codes and client secrets are random too. Only their
//! SHA-256 is stored. Every code, and every token issued from it, belongs to
//! one grant: revoking the grant (a second use of the code, a rotated-out
//! refresh token presented again, a disconnect on the Keys page) revokes
//! them all at once, because a token is live only while its grant is.
//! An access token resolves to the account's MCP principal with the
//! granted scopes ([`flow::resolve_access`]), never more.

pub mod clients;
pub mod flow;
pub mod metadata;
pub mod redirect;

use std::fmt;

use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::{
    accounts::{Scope, Scopes},
    config::OAuthConfig,
    error::{AppError, Code},
    store::{Store, StoreError},
};

pub use clients::{Client, ClientKind};
pub use metadata::{HttpFetcher, MetadataFetcher};
pub use redirect::RedirectUri;

/// What an access token starts with.
pub const ACCESS_PREFIX: &str = "lo_";
/// What a refresh token starts with.
pub const REFRESH_PREFIX: &str = "lr_";
/// Codes may not outlive this, whatever the configuration says.
const CODE_TTL_CAP_SECS: u64 = 60;

/// A refusal in RFC 6749 terms (§4.1.2.1, §5.2), plus RFC 7591's
/// registration errors and RFC 8707's `invalid_target`.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("invalid_request: {0}")]
    InvalidRequest(String),
    #[error("invalid_client: {0}")]
    InvalidClient(String),
    #[error("invalid_grant: {0}")]
    InvalidGrant(String),
    #[error("unauthorized_client: {0}")]
    UnauthorizedClient(String),
    #[error("unsupported_grant_type: {0}")]
    UnsupportedGrantType(String),
    #[error("unsupported_response_type: {0}")]
    UnsupportedResponseType(String),
    #[error("invalid_scope: {0}")]
    InvalidScope(String),
    #[error("invalid_target: {0}")]
    InvalidTarget(String),
    #[error("access_denied: {0}")]
    AccessDenied(String),
    #[error("invalid_redirect_uri: {0}")]
    InvalidRedirectUri(String),
    #[error("invalid_client_metadata: {0}")]
    InvalidClientMetadata(String),
    #[error("storage: {0}")]
    Store(#[from] StoreError),
}

impl OAuthError {
    /// The wire code (`error`).
    pub fn code(&self) -> &'static str {
        match self {
            OAuthError::InvalidRequest(_) => "invalid_request",
            OAuthError::InvalidClient(_) => "invalid_client",
            OAuthError::InvalidGrant(_) => "invalid_grant",
            OAuthError::UnauthorizedClient(_) => "unauthorized_client",
            OAuthError::UnsupportedGrantType(_) => "unsupported_grant_type",
            OAuthError::UnsupportedResponseType(_) => "unsupported_response_type",
            OAuthError::InvalidScope(_) => "invalid_scope",
            OAuthError::InvalidTarget(_) => "invalid_target",
            OAuthError::AccessDenied(_) => "access_denied",
            OAuthError::InvalidRedirectUri(_) => "invalid_redirect_uri",
            OAuthError::InvalidClientMetadata(_) => "invalid_client_metadata",
            OAuthError::Store(_) => "server_error",
        }
    }

    /// The human description (`error_description`); internal failures
    /// say nothing of their cause.
    pub fn description(&self) -> String {
        match self {
            OAuthError::Store(_) => "internal error".to_owned(),
            OAuthError::InvalidRequest(m)
            | OAuthError::InvalidClient(m)
            | OAuthError::InvalidGrant(m)
            | OAuthError::UnauthorizedClient(m)
            | OAuthError::UnsupportedGrantType(m)
            | OAuthError::UnsupportedResponseType(m)
            | OAuthError::InvalidScope(m)
            | OAuthError::InvalidTarget(m)
            | OAuthError::AccessDenied(m)
            | OAuthError::InvalidRedirectUri(m)
            | OAuthError::InvalidClientMetadata(m) => m.clone(),
        }
    }

    /// The HTTP status of this error on the token, registration and
    /// revocation endpoints.
    pub fn status(&self) -> u16 {
        match self {
            OAuthError::InvalidClient(_) => 401,
            OAuthError::Store(_) => 500,
            _ => 400,
        }
    }

    pub(crate) fn request(message: impl Into<String>) -> Self {
        OAuthError::InvalidRequest(message.into())
    }

    pub(crate) fn grant(message: impl Into<String>) -> Self {
        OAuthError::InvalidGrant(message.into())
    }
}

impl From<crate::accounts::AccountsError> for OAuthError {
    fn from(err: crate::accounts::AccountsError) -> Self {
        match err {
            crate::accounts::AccountsError::Store(e) => OAuthError::Store(e),
            other => OAuthError::InvalidRequest(other.to_string()),
        }
    }
}

/// An OAuth refusal met outside the OAuth endpoints (the Keys page's
/// connected clients, a bearer's resolution): a storage failure is an
/// internal error that keeps its cause; a refusal keeps its description.
impl From<OAuthError> for AppError {
    fn from(err: OAuthError) -> Self {
        match err {
            OAuthError::Store(_) => AppError::internal("oauth", err),
            OAuthError::InvalidClient(_) => AppError::new(Code::Unauthenticated, err.description()),
            OAuthError::AccessDenied(_) => AppError::new(Code::Forbidden, err.description()),
            other => AppError::invalid_params(other.description()),
        }
    }
}

/// What the authorization server is configured with, in milliseconds.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The issuer: the public URL, no trailing slash.
    pub issuer: String,
    pub access_ttl_ms: i64,
    pub refresh_ttl_ms: i64,
    /// No token of a grant outlives its consent by more than this.
    pub grant_max_age_ms: i64,
    pub code_ttl_ms: i64,
    pub request_ttl_ms: i64,
    pub unused_client_ttl_ms: i64,
    pub metadata_max_bytes: usize,
    pub metadata_timeout_ms: u64,
    pub metadata_max_cache_ms: i64,
    pub metadata_allow_loopback: bool,
}

/// A grant's code is kept this long past its expiry before a grant left
/// without tokens is deleted, so a purge never races an exchange.
const PURGE_CODE_MARGIN_MS: i64 = 10 * 60 * 1000;

/// The maintenance pass's OAuth part: forget tokens that expired or were
/// revoked, grants left with neither a token nor a usable code, expired
/// consent requests and activity older than `event_retention_secs`. The
/// rows deleted.
pub async fn purge(
    store: &crate::store::Store,
    config: &OAuthConfig,
    now_ms: i64,
) -> Result<u64, crate::store::StoreError> {
    store
        .purge_oauth(
            now_ms,
            now_ms.saturating_sub(PURGE_CODE_MARGIN_MS),
            now_ms.saturating_sub(ms(config.event_retention_secs)),
        )
        .await
}

fn ms(secs: u64) -> i64 {
    i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX)
}

impl Settings {
    pub fn new(public_url: &str, config: &OAuthConfig) -> Self {
        Self {
            issuer: public_url.trim_end_matches('/').to_owned(),
            access_ttl_ms: ms(config.access_token_ttl_secs),
            refresh_ttl_ms: ms(config.refresh_token_ttl_secs),
            grant_max_age_ms: ms(config.grant_max_age_secs),
            code_ttl_ms: ms(config.code_ttl_secs.min(CODE_TTL_CAP_SECS)),
            request_ttl_ms: ms(config.request_ttl_secs),
            unused_client_ttl_ms: ms(config.unused_client_ttl_secs),
            metadata_max_bytes: config.metadata_max_bytes,
            metadata_timeout_ms: config.metadata_timeout_ms,
            metadata_max_cache_ms: ms(config.metadata_max_cache_secs),
            metadata_allow_loopback: config.metadata_allow_loopback,
        }
    }

    /// The MCP endpoint that answers anonymous callers.
    pub fn mcp_resource(&self) -> String {
        format!("{}/mcp", self.issuer)
    }

    /// The MCP endpoint that refuses anonymous callers with a challenge.
    pub fn account_resource(&self) -> String {
        format!("{}/mcp/account", self.issuer)
    }

    /// `resource` as one of ours (tokens for either work on both), or
    /// `invalid_target`. A trailing slash is tolerated.
    pub fn check_resource(&self, resource: &str) -> Result<String, OAuthError> {
        let trimmed = resource.trim_end_matches('/');
        [self.mcp_resource(), self.account_resource()]
            .into_iter()
            .find(|ours| ours == trimmed)
            .ok_or_else(|| {
                OAuthError::InvalidTarget(format!(
                    "resource must be this server's MCP endpoint ({} or {})",
                    self.mcp_resource(),
                    self.account_resource()
                ))
            })
    }
}

/// What every OAuth step works with.
#[derive(Clone, Copy)]
pub struct OAuth<'a> {
    pub store: &'a Store,
    pub now_ms: i64,
    pub settings: &'a Settings,
    pub fetcher: &'a dyn MetadataFetcher,
}

/// OAuth's space-separated `scope` as our [`Scopes`]: `None` when absent
/// or empty; `invalid_scope` for anything but `read` and `scan`.
pub fn parse_scope(input: Option<&str>) -> Result<Option<Scopes>, OAuthError> {
    let Some(input) = input.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let mut names = Vec::new();
    for item in input.split_ascii_whitespace() {
        match item {
            "read" | "scan" => names.push(item),
            other => {
                return Err(OAuthError::InvalidScope(format!(
                    "unknown scope {other:?}; this server grants read and scan"
                )));
            }
        }
    }
    Scopes::parse(&names.join(","))
        .map(Some)
        .map_err(|e| OAuthError::InvalidScope(e.to_string()))
}

/// [`Scopes`] the OAuth way: `read scan`.
pub fn scope_string(scopes: Scopes) -> String {
    scopes
        .iter()
        .map(Scope::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether every scope of `inner` is in `outer`.
pub fn scopes_within(inner: Scopes, outer: Scopes) -> bool {
    inner.iter().all(|s| outer.allows(s))
}

/// A stored scope string back as [`Scopes`] (a corrupt one grants nothing).
fn stored_scopes(stored: &str) -> Result<Scopes, OAuthError> {
    parse_scope(Some(stored))?.ok_or_else(|| OAuthError::InvalidScope("no scope".to_owned()))
}

/// 32 random bytes from the OS.
fn random_bytes() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes
}

/// A new secret: `prefix` and 32 random bytes in base58.
fn new_secret(prefix: &str) -> String {
    format!("{prefix}{}", bs58::encode(random_bytes()).into_string())
}

/// Lowercase hex SHA-256.
pub(crate) fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A secret for `Debug` output.
pub struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/oauth.md quotes what each scope allows in the words the
    /// consent page and the Keys page show (`app::scopes`): one source,
    /// and the document may not drift from it.
    #[test]
    fn the_scope_words_are_the_documented_ones() {
        let docs = include_str!("../../../docs/oauth.md");
        for (scope, words) in [
            ("read", crate::accounts::Scope::Read.words()),
            ("scan", crate::accounts::Scope::Scan.words()),
        ] {
            let line = format!("- `{scope}`: \"{words}\"");
            assert!(docs.contains(&line), "docs/oauth.md lacks {line}");
        }
        assert!(docs.contains(&format!("\"{}\"", app::scopes::NEVER)));
    }

    #[test]
    fn scopes_are_space_separated_read_and_scan() {
        assert_eq!(parse_scope(None).unwrap(), None);
        assert_eq!(parse_scope(Some("  ")).unwrap(), None);
        assert_eq!(
            scope_string(parse_scope(Some("scan read")).unwrap().unwrap()),
            "read scan"
        );
        assert_eq!(
            scope_string(parse_scope(Some("read")).unwrap().unwrap()),
            "read"
        );
    }

    #[test]
    fn a_scope_beyond_read_and_scan_is_invalid_scope() {
        for bad in ["admin", "read admin", "read,scan", "openid"] {
            let err = parse_scope(Some(bad)).unwrap_err();
            assert_eq!(err.code(), "invalid_scope", "{bad}");
        }
    }

    #[test]
    fn only_our_two_resources_are_accepted() {
        let s = Settings::new("https://ledger.example/", &OAuthConfig::default());
        assert_eq!(
            s.check_resource("https://ledger.example/mcp").unwrap(),
            "https://ledger.example/mcp"
        );
        assert_eq!(
            s.check_resource("https://ledger.example/mcp/account/")
                .unwrap(),
            "https://ledger.example/mcp/account"
        );
        for bad in [
            "https://evil.example/mcp",
            "https://ledger.example/v1",
            "https://ledger.example/mcpx",
            "",
        ] {
            assert_eq!(s.check_resource(bad).unwrap_err().code(), "invalid_target");
        }
    }

    #[test]
    fn the_code_lifetime_is_capped_at_sixty_seconds() {
        let config = OAuthConfig {
            code_ttl_secs: 600,
            ..OAuthConfig::default()
        };
        assert_eq!(Settings::new("http://x", &config).code_ttl_ms, 60_000);
    }
}
