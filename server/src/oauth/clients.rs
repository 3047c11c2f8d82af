//! Clients: registered through `POST /register` (RFC 7591), or named by
//! the URL of their Client ID Metadata Document. Either way a [`Client`]
//! is a name, its redirect URIs, how it authenticates at the token
//! endpoint, and the scopes it may ask for.
//!
//! Registration is open (any MCP client may register) and cheap to abuse,
//! so the HTTP layer rate limits it per IP and every registration purges
//! the registered clients that never got a code within
//! `oauth.unused_client_ttl_secs`: Claude.ai registers twice per connect
//! attempt, and the spare one simply ages out.

use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;
use url::Url;

use super::{
    OAuth, OAuthError, RedirectUri, metadata::FetchError, new_secret, parse_scope, scope_string,
    sha256_hex, stored_scopes,
};
use crate::{
    accounts::Scopes,
    ids,
    store::{OAuthClientRecord, RateDecision, RateRule},
};

const CLIENT_ID_PREFIX: &str = "oc_";
const CLIENT_SECRET_PREFIX: &str = "ls_";
/// The longest client name kept.
const NAME_MAX: usize = 100;
/// The most redirect URIs one client may have.
const MAX_REDIRECT_URIS: usize = 10;

/// How a client authenticates at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthMethod {
    /// A public client: PKCE alone proves it.
    None,
    ClientSecretPost,
    ClientSecretBasic,
}

impl AuthMethod {
    pub fn parse(input: &str) -> Option<Self> {
        match input {
            "none" => Some(AuthMethod::None),
            "client_secret_post" => Some(AuthMethod::ClientSecretPost),
            "client_secret_basic" => Some(AuthMethod::ClientSecretBasic),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::ClientSecretBasic => "client_secret_basic",
        }
    }
}

/// Where a client comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientKind {
    /// Registered through `POST /register`: its name is its own claim.
    Registered,
    /// A metadata document: the host that serves it vouches for it.
    Metadata { host: String },
}

/// A client, resolved.
#[derive(Clone, Debug)]
pub struct Client {
    pub id: String,
    pub kind: ClientKind,
    /// Empty when the client gave none.
    pub name: String,
    pub redirect_uris: Vec<RedirectUri>,
    pub auth_method: AuthMethod,
    secret_hash: Option<String>,
    pub scopes: Scopes,
}

impl Client {
    /// The name a person reads ("an unnamed client" when it gave none).
    pub fn display_name(&self) -> String {
        if self.name.is_empty() {
            "An unnamed client".to_owned()
        } else {
            self.name.clone()
        }
    }

    /// The registered redirect URI `requested` is, if any.
    pub fn redirect_uri(&self, requested: &RedirectUri) -> Option<&RedirectUri> {
        self.redirect_uris.iter().find(|r| r.matches(requested))
    }

    /// Whether `secret` is this client's secret (constant time).
    fn secret_matches(&self, secret: &str) -> bool {
        self.secret_hash
            .as_deref()
            .is_some_and(|hash| bool::from(hash.as_bytes().ct_eq(sha256_hex(secret).as_bytes())))
    }
}

/// An RFC 7591 registration request. Members we do not use are accepted
/// and ignored, as §2 asks.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct RegistrationRequest {
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default)]
    pub client_name: Option<String>,
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
    #[serde(default)]
    pub scope: Option<String>,
}

/// The registration response (RFC 7591 §3.2.1). The secret is here once.
#[derive(Clone, Serialize)]
pub struct Registered {
    pub client_id: String,
    pub client_id_issued_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<i64>,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: &'static str,
    pub grant_types: [&'static str; 2],
    pub response_types: [&'static str; 1],
    pub scope: String,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| super::Redacted),
            )
            .finish_non_exhaustive()
    }
}

/// Whether `c` is a Unicode format character (general category Cf) or
/// another invisible that can reorder or hide text: bidi embeddings,
/// overrides and isolates, zero-width spaces and joiners, the BOM, soft
/// hyphen, word joiner and invisible operators, tag characters.
fn is_format_char(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{070F}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// A client's name as a person may read it: no control or format
/// characters (a right-to-left override could make "Evil" read as a
/// trusted name), at most [`NAME_MAX`] characters, trimmed.
fn clean_name(name: Option<&str>) -> String {
    name.unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control() && !is_format_char(*c))
        .take(NAME_MAX)
        .collect::<String>()
        .trim()
        .to_owned()
}

fn check_redirect_uris(uris: &[String]) -> Result<Vec<RedirectUri>, OAuthError> {
    if uris.is_empty() {
        return Err(OAuthError::InvalidRedirectUri(
            "redirect_uris must name at least one redirect URI".to_owned(),
        ));
    }
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::InvalidRedirectUri(format!(
            "at most {MAX_REDIRECT_URIS} redirect URIs"
        )));
    }
    uris.iter().map(|u| RedirectUri::parse(u)).collect()
}

/// A client must be able to use the code flow; other grant and response
/// types it lists are ignored (the token endpoint grants only
/// `authorization_code` and `refresh_token` whatever was registered), so
/// a host that lists more still connects.
fn check_grant_types(request: &RegistrationRequest) -> Result<(), OAuthError> {
    if let Some(types) = &request.grant_types
        && !types.iter().any(|t| t == "authorization_code")
    {
        return Err(OAuthError::InvalidClientMetadata(
            "grant_types must include authorization_code".to_owned(),
        ));
    }
    if let Some(types) = &request.response_types
        && !types.iter().any(|t| t == "code")
    {
        return Err(OAuthError::InvalidClientMetadata(
            "response_types must include code".to_owned(),
        ));
    }
    Ok(())
}

/// The scopes a registration asks for, kept to `read` and `scan` (others
/// are dropped, RFC 7591 §2 lets the server replace them); none of ours
/// means both.
fn registered_scopes(scope: Option<&str>) -> Scopes {
    let ours: Vec<&str> = scope
        .unwrap_or_default()
        .split_ascii_whitespace()
        .filter(|s| matches!(*s, "read" | "scan"))
        .collect();
    parse_scope(Some(&ours.join(" ")))
        .ok()
        .flatten()
        .unwrap_or(Scopes::ALL)
}

/// Register a client. A public client (`token_endpoint_auth_method:
/// none`) gets no secret; a confidential one gets a secret, returned here
/// once and stored hashed. Unused registrations past their time are purged
/// first.
pub async fn register(
    ctx: OAuth<'_>,
    request: &RegistrationRequest,
) -> Result<Registered, OAuthError> {
    let redirect_uris = check_redirect_uris(&request.redirect_uris)?;
    check_grant_types(request)?;
    // RFC 7591 §2: the default is client_secret_basic.
    let method = match request.token_endpoint_auth_method.as_deref() {
        None => AuthMethod::ClientSecretBasic,
        Some(m) => AuthMethod::parse(m).ok_or_else(|| {
            OAuthError::InvalidClientMetadata(format!(
                "token_endpoint_auth_method {m:?} is not supported; use none, client_secret_post or client_secret_basic"
            ))
        })?,
    };
    let scopes = registered_scopes(request.scope.as_deref());
    let name = clean_name(request.client_name.as_deref());
    purge_unused(ctx).await?;
    let id = ids::new_id(CLIENT_ID_PREFIX, ctx.now_ms);
    let secret = (method != AuthMethod::None).then(|| new_secret(CLIENT_SECRET_PREFIX));
    ctx.store
        .insert_oauth_client(&OAuthClientRecord {
            id: id.clone(),
            kind: "registered".to_owned(),
            name: name.clone(),
            redirect_uris: serde_json::to_string(
                &redirect_uris
                    .iter()
                    .map(RedirectUri::as_str)
                    .collect::<Vec<_>>(),
            )
            .unwrap_or_else(|_| "[]".to_owned()),
            auth_method: method.as_str().to_owned(),
            secret_hash: secret.as_deref().map(sha256_hex),
            scope: scope_string(scopes),
            created_at: ctx.now_ms,
            last_used_at: None,
            cache_until: None,
        })
        .await?;
    tracing::info!(client_id = %id, method = method.as_str(), "registered an OAuth client");
    Ok(Registered {
        client_id: id,
        client_id_issued_at: ctx.now_ms / 1000,
        client_secret_expires_at: secret.as_ref().map(|_| 0),
        client_secret: secret,
        client_name: name,
        redirect_uris: redirect_uris
            .iter()
            .map(|r| r.as_str().to_owned())
            .collect(),
        token_endpoint_auth_method: method.as_str(),
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        scope: scope_string(scopes),
    })
}

/// Delete registered clients that never got a code within
/// `unused_client_ttl`, and metadata-document clients that never got one
/// and whose cached document has expired.
async fn purge_unused(ctx: OAuth<'_>) -> Result<(), OAuthError> {
    let cutoff = ctx.now_ms.saturating_sub(ctx.settings.unused_client_ttl_ms);
    let purged = ctx
        .store
        .purge_unused_oauth_clients(cutoff, ctx.now_ms)
        .await?;
    if purged > 0 {
        tracing::info!(purged, "purged unused OAuth clients");
    }
    Ok(())
}

fn from_record(row: OAuthClientRecord) -> Result<Client, OAuthError> {
    let corrupt =
        || OAuthError::InvalidClient("this client's registration is unreadable".to_owned());
    let uris: Vec<String> = serde_json::from_str(&row.redirect_uris).map_err(|_| corrupt())?;
    let redirect_uris = uris
        .iter()
        .map(|u| RedirectUri::parse(u))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| corrupt())?;
    let kind = if row.kind == "metadata" {
        ClientKind::Metadata {
            host: Url::parse(&row.id)
                .ok()
                .map(|u| host_with_port(&u))
                .unwrap_or_default(),
        }
    } else {
        ClientKind::Registered
    };
    Ok(Client {
        id: row.id,
        kind,
        name: row.name,
        redirect_uris,
        auth_method: AuthMethod::parse(&row.auth_method).ok_or_else(corrupt)?,
        secret_hash: row.secret_hash,
        scopes: stored_scopes(&row.scope).map_err(|_| corrupt())?,
    })
}

/// A URL's host as a person reads it: with its port when the URL names
/// one that is not the scheme's default (`localhost:39669`), since a
/// different port can be a different party.
pub fn host_with_port(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// Whether `client_id` names a metadata document (an https URL, or http
/// on loopback when the test-only setting allows it).
fn metadata_url(client_id: &str) -> Option<Url> {
    if !(client_id.starts_with("https://") || client_id.starts_with("http://")) {
        return None;
    }
    Url::parse(client_id).ok()
}

/// Check a metadata document URL's shape (the draft's §3 rules).
fn check_metadata_url(ctx: OAuth<'_>, url: &Url, client_id: &str) -> Result<(), OAuthError> {
    let refuse = |why: &str| {
        OAuthError::InvalidClient(format!(
            "client_id {client_id:?} is not a usable metadata document URL: {why}"
        ))
    };
    let loopback_http = url.scheme() == "http"
        && ctx.settings.metadata_allow_loopback
        && url.host().is_some_and(|h| {
            matches!(h, url::Host::Ipv4(ip) if ip.is_loopback())
                || matches!(h, url::Host::Domain("localhost"))
        });
    if url.scheme() != "https" && !loopback_http {
        return Err(refuse("it must be https"));
    }
    if url.path() == "/" || url.path().is_empty() {
        return Err(refuse("it must have a path"));
    }
    if url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("no fragment or user information"));
    }
    if client_id.split('/').any(|seg| seg == "." || seg == "..") {
        return Err(refuse("no dot segments"));
    }
    Ok(())
}

/// What a metadata document must hold.
#[derive(Deserialize)]
struct MetadataDocument {
    client_id: String,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    redirect_uris: Vec<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    grant_types: Option<Vec<String>>,
    #[serde(default)]
    response_types: Option<Vec<String>>,
}

/// How long a failed metadata fetch is remembered: the same document is
/// not fetched again sooner.
pub const FETCH_FAILURE_CACHE_MS: i64 = 60_000;

/// The failure cache as a rate-limit bucket: one fetch per
/// [`FETCH_FAILURE_CACHE_MS`], taken only when a fetch fails.
fn failure_rule() -> RateRule {
    RateRule {
        per_second: 1000.0 / FETCH_FAILURE_CACHE_MS as f64,
        burst: 1,
    }
}

fn failure_bucket(client_id: &str) -> String {
    format!("oauth-cimd-failed:{}", sha256_hex(client_id))
}

/// Who is asking `/authorize` to fetch a document, and how often they may.
#[derive(Clone, Debug)]
pub struct FetchBudget {
    /// The rate-limit bucket (`oauth-cimd:{ip}`, IPv6 on its /64).
    pub bucket: String,
    pub rule: RateRule,
}

async fn fetch_metadata_client(
    ctx: OAuth<'_>,
    url: &Url,
    client_id: &str,
    budget: &FetchBudget,
) -> Result<Client, OAuthError> {
    check_metadata_url(ctx, url, client_id)?;
    let refuse = |why: String| {
        tracing::info!(client_id, reason = %why, "refused a client metadata document");
        OAuthError::InvalidClient(format!("client metadata document {client_id}: {why}"))
    };
    let failed = failure_bucket(client_id);
    if !ctx
        .store
        .rate_allows(&failed, ctx.now_ms, failure_rule(), 1)
        .await?
    {
        return Err(refuse(
            "could not be used a moment ago; try again in a minute".to_owned(),
        ));
    }
    match ctx
        .store
        .take_rate_token(&budget.bucket, ctx.now_ms, budget.rule)
        .await?
    {
        RateDecision::Allowed => {}
        RateDecision::Limited { .. } => {
            tracing::info!(bucket = %budget.bucket, "refused a metadata fetch: rate limited");
            return Err(OAuthError::InvalidClient(
                "too many client metadata documents fetched for this address; retry later"
                    .to_owned(),
            ));
        }
    }
    let result = fetch_and_check(ctx, url, client_id, &refuse).await;
    if result.is_err() {
        ctx.store
            .take_rate_token(&failed, ctx.now_ms, failure_rule())
            .await?;
    }
    let record = result?;
    purge_unused(ctx).await?;
    ctx.store.upsert_oauth_metadata_client(&record).await?;
    from_record(record)
}

async fn fetch_and_check(
    ctx: OAuth<'_>,
    url: &Url,
    client_id: &str,
    refuse: &(dyn Fn(String) -> OAuthError + Sync),
) -> Result<OAuthClientRecord, OAuthError> {
    let fetched = ctx
        .fetcher
        .fetch(url)
        .await
        .map_err(|e: FetchError| refuse(e.to_string()))?;
    let doc: MetadataDocument = serde_json::from_slice(&fetched.body)
        .map_err(|_| refuse("is not a JSON client metadata document".to_owned()))?;
    if doc.client_id != client_id {
        return Err(refuse(format!(
            "names itself {:?}; a metadata document must name its own URL as client_id",
            doc.client_id
        )));
    }
    let redirect_uris =
        check_redirect_uris(&doc.redirect_uris).map_err(|e| refuse(e.description()))?;
    let request = RegistrationRequest {
        grant_types: doc.grant_types.clone(),
        response_types: doc.response_types.clone(),
        ..RegistrationRequest::default()
    };
    check_grant_types(&request).map_err(|e| refuse(e.description()))?;
    match doc.token_endpoint_auth_method.as_deref() {
        None | Some("none") => {}
        Some(other) => {
            return Err(refuse(format!(
                "token_endpoint_auth_method {other:?}: a metadata-document client authenticates with none (shared secrets cannot be published)"
            )));
        }
    }
    let scopes = registered_scopes(doc.scope.as_deref());
    let cache_until = match fetched.max_age_secs {
        None => ctx.now_ms,
        Some(secs) => ctx.now_ms.saturating_add(
            i64::try_from(secs.saturating_mul(1000))
                .unwrap_or(i64::MAX)
                .min(ctx.settings.metadata_max_cache_ms),
        ),
    };
    let record = OAuthClientRecord {
        id: client_id.to_owned(),
        kind: "metadata".to_owned(),
        name: clean_name(doc.client_name.as_deref()),
        redirect_uris: serde_json::to_string(
            &redirect_uris
                .iter()
                .map(RedirectUri::as_str)
                .collect::<Vec<_>>(),
        )
        .unwrap_or_else(|_| "[]".to_owned()),
        auth_method: "none".to_owned(),
        secret_hash: None,
        scope: scope_string(scopes),
        created_at: ctx.now_ms,
        last_used_at: None,
        cache_until: Some(cache_until),
    };
    Ok(record)
}

fn unknown_client() -> OAuthError {
    OAuthError::InvalidClient("unknown client_id; register first (POST /register)".to_owned())
}

fn check_client_id(client_id: &str) -> Result<(), OAuthError> {
    if client_id.is_empty() || client_id.len() > 2000 {
        return Err(OAuthError::InvalidClient(
            "client_id is required".to_owned(),
        ));
    }
    Ok(())
}

/// The client `client_id` names, for `/authorize`: a registered one, or a
/// metadata document (from the cache while its lifetime lasts, else
/// fetched within `budget` and cached). Unknown is `invalid_client`.
/// This is the only place a document is fetched.
pub async fn find(
    ctx: OAuth<'_>,
    client_id: &str,
    budget: &FetchBudget,
) -> Result<Client, OAuthError> {
    check_client_id(client_id)?;
    let row = ctx.store.oauth_client(client_id).await?;
    if let Some(url) = metadata_url(client_id) {
        if let Some(row) =
            row.filter(|r| r.kind == "metadata" && r.cache_until.is_some_and(|t| t > ctx.now_ms))
        {
            return from_record(row);
        }
        return fetch_metadata_client(ctx, &url, client_id, budget).await;
    }
    match row {
        Some(row) if row.kind == "registered" => from_record(row),
        _ => Err(unknown_client()),
    }
}

/// The client `client_id` names if Ledger already knows it: registered,
/// or a metadata document fetched before (on `/authorize`). Nothing is
/// fetched: `/token`, `/revoke` and the consent decision use this, so an
/// anonymous caller cannot make the server fetch URLs from them.
pub async fn known(ctx: OAuth<'_>, client_id: &str) -> Result<Option<Client>, OAuthError> {
    check_client_id(client_id)?;
    match ctx.store.oauth_client(client_id).await? {
        Some(row)
            if row.kind == "registered"
                || (row.kind == "metadata" && metadata_url(client_id).is_some()) =>
        {
            from_record(row).map(Some)
        }
        _ => Ok(None),
    }
}

/// What a token or revocation request presents to authenticate its
/// client: `client_id` (body or Basic), and a secret (body or Basic).
#[derive(Clone, Default)]
pub struct Credentials {
    pub client_id: Option<String>,
    pub secret: Option<String>,
    /// The secret came in an `Authorization: Basic` header.
    pub basic: bool,
}

/// Authenticate the client of a token or revocation request: a
/// confidential client must present its secret the way it registered; a
/// public client only names itself (PKCE proves the rest).
pub async fn authenticate(ctx: OAuth<'_>, credentials: &Credentials) -> Result<Client, OAuthError> {
    let client_id = credentials
        .client_id
        .as_deref()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| OAuthError::InvalidClient("client_id is required".to_owned()))?;
    let client = known(ctx, client_id).await?.ok_or_else(unknown_client)?;
    match client.auth_method {
        AuthMethod::None => Ok(client),
        method => {
            // The client authenticates the way it registered (RFC 7591
            // §2): a secret sent the other way is refused.
            let sent_basic = credentials.basic;
            if credentials.secret.is_some()
                && sent_basic != (method == AuthMethod::ClientSecretBasic)
            {
                tracing::info!(
                    client_id,
                    "refused a client secret sent the unregistered way"
                );
                return Err(OAuthError::InvalidClient(format!(
                    "this client registered {}; send its secret that way",
                    method.as_str()
                )));
            }
            let Some(secret) = credentials.secret.as_deref() else {
                return Err(OAuthError::InvalidClient(format!(
                    "this client authenticates with {}",
                    method.as_str()
                )));
            };
            if !client.secret_matches(secret) {
                tracing::info!(client_id, "refused a wrong client secret");
                return Err(OAuthError::InvalidClient(
                    "client authentication failed".to_owned(),
                ));
            }
            Ok(client)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_names_lose_bidi_overrides_and_zero_width_characters() {
        assert_eq!(
            clean_name(Some("\u{202E}lapyaP\u{202C} Te\u{200D}st\u{2067}\u{FEFF}")),
            "lapyaP Test"
        );
        assert_eq!(clean_name(Some("Claude\u{E0041}")), "Claude");
        assert_eq!(clean_name(Some("Café 東京")), "Café 東京");
    }

    #[test]
    fn a_metadata_hosts_port_is_shown_when_not_the_default() {
        let host = |s: &str| host_with_port(&Url::parse(s).unwrap());
        assert_eq!(
            host("https://localhost:39669/client.json"),
            "localhost:39669"
        );
        assert_eq!(host("https://app.example/client.json"), "app.example");
        assert_eq!(host("https://app.example:443/client.json"), "app.example");
    }

    #[test]
    fn registered_scopes_keep_ours_and_default_to_both() {
        assert_eq!(registered_scopes(None), Scopes::ALL);
        assert_eq!(registered_scopes(Some("openid profile")), Scopes::ALL);
        assert_eq!(
            scope_string(registered_scopes(Some("read offline_access"))),
            "read"
        );
    }

    #[test]
    fn a_client_must_be_able_to_use_the_code_flow() {
        let with = |grants: &[&str], responses: &[&str]| {
            check_grant_types(&RegistrationRequest {
                grant_types: Some(grants.iter().map(|s| s.to_string()).collect()),
                response_types: Some(responses.iter().map(|s| s.to_string()).collect()),
                ..RegistrationRequest::default()
            })
        };
        assert!(with(&["authorization_code", "refresh_token"], &["code"]).is_ok());
        assert!(with(&["authorization_code", "client_credentials"], &["code"]).is_ok());
        assert!(with(&["client_credentials"], &["code"]).is_err());
        assert!(with(&["authorization_code"], &["token"]).is_err());
    }
}
