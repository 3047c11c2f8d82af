//! The authorization code flow, end to end: checking an authorization
//! request, holding it while the person decides, issuing the code,
//! exchanging it (PKCE S256), refreshing with rotation and reuse
//! detection, revoking, and resolving an access token to its principal.
//!
//! Order matters for safety. Nothing found before the person's decision
//! is ever answered by an automatic redirect (it would make us an open
//! redirector for anyone who registers a client). A request whose client
//! or redirect URI is wrong is [`Checked::Fatal`]: the page shows the
//! error and nothing else. Any other refusal is [`Checked::Refused`]: the
//! page shows the error and a plain "Return to {host}" link, carrying
//! `error`, `error_description`, `state` and `iss`, that the person may
//! click. Only [`decide`] (approve or deny) redirects by itself.

use base64::Engine;
use sha2::{Digest, Sha256};
use url::Url;

use super::{
    ACCESS_PREFIX, OAuth, OAuthError, REFRESH_PREFIX, RedirectUri,
    clients::{self, Client, Credentials},
    new_secret, parse_scope, random_bytes,
    redirect::Destination,
    scope_string, scopes_within, sha256_hex, stored_scopes,
};
use crate::{
    accounts::{AccountId, Scopes, TokenId},
    clock::UnixMillis,
    ids,
    store::{OAuthGrantRecord, OAuthRequestRecord, OAuthTokenRecord},
};

/// `last_used_at` of a grant is written at most this often.
const LAST_USED_RESOLUTION_MS: i64 = 60_000;
/// The grant's id is a token id (`tok_…`): an MCP session bound to it
/// survives a refresh.
const GRANT_ID_PREFIX: &str = "tok_";
const REQUEST_ID_PREFIX: &str = "oar_";
const EVENT_ID_PREFIX: &str = "oev_";

/// The parameters of `GET /authorize`, as sent.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct AuthorizeParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub state: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
}

/// A request that passed every check.
#[derive(Clone, Debug)]
pub struct Valid {
    pub client: Client,
    /// The redirect URI as the request named it (with its port).
    pub redirect_uri: RedirectUri,
    /// The request named it (rather than leaving the client's only one).
    pub redirect_uri_named: bool,
    pub code_challenge: String,
    pub scopes: Scopes,
    pub resource: String,
    pub state: Option<String>,
}

/// A refusal whose client and redirect URI checked out: shown with a
/// link back to the client the person may click.
#[derive(Debug)]
pub struct Refused {
    pub error: OAuthError,
    /// The redirect URI with `error`, `error_description`, `state`, `iss`.
    pub return_to: String,
    /// Where it goes (a site's host, or an app's scheme), for the
    /// link's words.
    pub destination: Destination,
}

/// What checking an authorization request decided.
#[derive(Debug)]
pub enum Checked {
    /// Show the error; no link (unknown client or redirect URI).
    Fatal(OAuthError),
    /// Show the error with a link back to the client; never redirect.
    Refused(Box<Refused>),
    Valid(Box<Valid>),
}

/// Where the response to an authorization request goes: `redirect_uri`
/// with `params`, `state` and `iss` added to its query.
pub fn response_url(
    redirect_uri: &RedirectUri,
    issuer: &str,
    state: Option<&str>,
    params: &[(&str, &str)],
) -> String {
    let mut url: Url = redirect_uri.url().clone();
    {
        let mut query = url.query_pairs_mut();
        for (k, v) in params {
            query.append_pair(k, v);
        }
        if let Some(state) = state {
            query.append_pair("state", state);
        }
        query.append_pair("iss", issuer);
    }
    url.to_string()
}

fn error_url(
    valid_uri: &RedirectUri,
    issuer: &str,
    state: Option<&str>,
    err: &OAuthError,
) -> String {
    let description = err.description();
    response_url(
        valid_uri,
        issuer,
        state,
        &[("error", err.code()), ("error_description", &description)],
    )
}

/// Whether `s` is a PKCE challenge or verifier's shape: 43 to 128
/// characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
fn pkce_shaped(s: &str) -> bool {
    (43..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Whether `s` is an S256 challenge's shape: the unpadded base64url of 32
/// bytes, exactly 43 characters of `[A-Za-z0-9-_]`.
fn challenge_shaped(s: &str) -> bool {
    s.len() == 43
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// Check an authorization request (see the module docs for the order).
pub async fn check(
    ctx: OAuth<'_>,
    params: &AuthorizeParams,
    budget: &clients::FetchBudget,
) -> Checked {
    let client_id = params.client_id.as_deref().unwrap_or_default();
    let client = match clients::find(ctx, client_id, budget).await {
        Ok(client) => client,
        Err(err) => return Checked::Fatal(err),
    };
    let redirect_uri = match params.redirect_uri.as_deref() {
        Some(requested) => match RedirectUri::parse(requested) {
            Ok(parsed) if client.redirect_uri(&parsed).is_some() => parsed,
            Ok(_) | Err(_) => {
                tracing::info!(client_id, "refused an unregistered redirect_uri");
                return Checked::Fatal(OAuthError::request(
                    "redirect_uri is not one this client registered",
                ));
            }
        },
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => {
            return Checked::Fatal(OAuthError::request(
                "redirect_uri is required (this client registered several)",
            ));
        }
    };
    let issuer = &ctx.settings.issuer;
    let state = params.state.clone();
    let back = |err: OAuthError| {
        tracing::info!(client_id, error = %err, "refused an authorization request");
        Checked::Refused(Box::new(Refused {
            return_to: error_url(&redirect_uri, issuer, state.as_deref(), &err),
            destination: redirect_uri.destination(),
            error: err,
        }))
    };
    if params.response_type.as_deref() != Some("code") {
        return back(OAuthError::UnsupportedResponseType(
            "response_type must be code".to_owned(),
        ));
    }
    match params.code_challenge_method.as_deref() {
        Some("S256") => {}
        None => {
            return back(OAuthError::request(
                "PKCE is required: send code_challenge with code_challenge_method=S256",
            ));
        }
        Some(_) => {
            return back(OAuthError::request(
                "code_challenge_method must be S256 (plain is not accepted)",
            ));
        }
    }
    let challenge = match params.code_challenge.as_deref() {
        Some(c) if challenge_shaped(c) => c.to_owned(),
        Some(_) => {
            return back(OAuthError::request(
                "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)",
            ));
        }
        None => {
            return back(OAuthError::request(
                "PKCE is required: send code_challenge with code_challenge_method=S256",
            ));
        }
    };
    let scopes = match parse_scope(params.scope.as_deref()) {
        Ok(Some(scopes)) if scopes_within(scopes, client.scopes) => scopes,
        Ok(Some(_)) => {
            return back(OAuthError::InvalidScope(format!(
                "this client may ask for {} only",
                scope_string(client.scopes)
            )));
        }
        Ok(None) => client.scopes,
        Err(err) => return back(err),
    };
    let resource = match params.resource.as_deref() {
        Some(r) => match ctx.settings.check_resource(r) {
            Ok(r) => r,
            Err(err) => return back(err),
        },
        None => ctx.settings.mcp_resource(),
    };
    Checked::Valid(Box::new(Valid {
        client,
        redirect_uri,
        redirect_uri_named: params.redirect_uri.is_some(),
        code_challenge: challenge,
        scopes,
        resource,
        state,
    }))
}

/// Hold a valid request for `account`'s decision: the pending request's
/// id, which is all the consent form carries. An account holds at most
/// `max_pending` requests waiting for its answer
/// (`quota.pending_consents_per_account`); beyond it is [`Held::Full`].
pub async fn hold(
    ctx: OAuth<'_>,
    account: &AccountId,
    valid: &Valid,
    max_pending: u32,
) -> Result<Held, OAuthError> {
    ctx.store.purge_expired_oauth_requests(ctx.now_ms).await?;
    let id = ids::new_id(REQUEST_ID_PREFIX, ctx.now_ms);
    let held = ctx
        .store
        .insert_oauth_request(
            &OAuthRequestRecord {
                id: id.clone(),
                client_id: valid.client.id.clone(),
                account_id: account.as_str().to_owned(),
                redirect_uri: valid.redirect_uri.as_str().to_owned(),
                code_challenge: valid.code_challenge.clone(),
                scope: scope_string(valid.scopes),
                resource: valid.resource.clone(),
                state: valid.state.clone(),
                created_at: ctx.now_ms,
                expires_at: ctx.now_ms.saturating_add(ctx.settings.request_ttl_ms),
                decided_at: None,
                redirect_uri_named: valid.redirect_uri_named,
            },
            max_pending,
        )
        .await?;
    Ok(if held { Held::Pending(id) } else { Held::Full })
}

/// What [`hold`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held {
    /// Held, under this id.
    Pending(String),
    /// The account has as many requests waiting for its answer as it may.
    Full,
}

async fn event(
    ctx: OAuth<'_>,
    account_id: &str,
    client_id: &str,
    kind: &str,
) -> Result<(), OAuthError> {
    ctx.store
        .insert_oauth_event(
            &ids::new_id(EVENT_ID_PREFIX, ctx.now_ms),
            account_id,
            client_id,
            kind,
            ctx.now_ms,
        )
        .await?;
    Ok(())
}

/// Approve or deny a held request, once: where to send the browser. A
/// request that is not this account's, already decided or expired is
/// `invalid_request` (shown, never redirected).
pub async fn decide(
    ctx: OAuth<'_>,
    account: &AccountId,
    request_id: &str,
    approve: bool,
) -> Result<String, OAuthError> {
    let Some(held) = ctx
        .store
        .decide_oauth_request(request_id, account.as_str(), ctx.now_ms)
        .await?
    else {
        return Err(OAuthError::request(
            "this authorization request is unknown, already answered or expired; start again from the app",
        ));
    };
    let redirect_uri = RedirectUri::parse(&held.redirect_uri)?;
    // The client may have been purged, or its document changed, while the
    // person read the page: the redirect URI must still be one of its own.
    let still_ours = match clients::known(ctx, &held.client_id).await? {
        Some(client) => client.redirect_uri(&redirect_uri).is_some(),
        None => false,
    };
    if !still_ours {
        tracing::info!(client_id = %held.client_id, "refused a decision: the client or its redirect URI is gone");
        return Err(OAuthError::request(
            "this app's registration changed while you were deciding; start again from the app",
        ));
    }
    let issuer = &ctx.settings.issuer;
    if !approve {
        event(ctx, &held.account_id, &held.client_id, "denied").await?;
        return Ok(error_url(
            &redirect_uri,
            issuer,
            held.state.as_deref(),
            &OAuthError::AccessDenied("the person denied the request".to_owned()),
        ));
    }
    let code = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random_bytes());
    ctx.store
        .insert_oauth_grant(&OAuthGrantRecord {
            id: ids::new_id(GRANT_ID_PREFIX, ctx.now_ms),
            client_id: held.client_id.clone(),
            account_id: held.account_id.clone(),
            scope: held.scope.clone(),
            resource: held.resource.clone(),
            redirect_uri: held.redirect_uri.clone(),
            code_hash: sha256_hex(&code),
            code_challenge: held.code_challenge.clone(),
            code_expires_at: ctx.now_ms.saturating_add(ctx.settings.code_ttl_ms),
            code_used_at: None,
            created_at: ctx.now_ms,
            last_used_at: None,
            revoked_at: None,
            redirect_uri_named: held.redirect_uri_named,
        })
        .await?;
    event(ctx, &held.account_id, &held.client_id, "authorized").await?;
    Ok(response_url(
        &redirect_uri,
        issuer,
        held.state.as_deref(),
        &[("code", &code)],
    ))
}

/// A `POST /token` request's parameters (client credentials apart).
#[derive(Clone, Default, serde::Deserialize)]
pub struct TokenParams {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

/// A successful token response (RFC 6749 §5.1).
#[derive(Clone, serde::Serialize)]
pub struct Issued {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    pub refresh_token: String,
    pub scope: String,
}

impl std::fmt::Debug for Issued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issued")
            .field("expires_in", &self.expires_in)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// When `grant`'s connection ends: its consent plus the maximum age.
fn grant_ends_at(ctx: OAuth<'_>, grant: &OAuthGrantRecord) -> UnixMillis {
    grant
        .created_at
        .saturating_add(ctx.settings.grant_max_age_ms)
}

/// An access and a refresh token for `grant`, neither outliving the
/// connection's maximum age.
async fn issue(
    ctx: OAuth<'_>,
    grant: &OAuthGrantRecord,
    scopes: Scopes,
) -> Result<Issued, OAuthError> {
    let access = new_secret(ACCESS_PREFIX);
    let refresh = new_secret(REFRESH_PREFIX);
    let scope = scope_string(scopes);
    let ends_at = grant_ends_at(ctx, grant);
    let access_expires_at = ctx
        .now_ms
        .saturating_add(ctx.settings.access_ttl_ms)
        .min(ends_at);
    for (plaintext, kind, expires_at) in [
        (&access, "access", access_expires_at),
        (
            &refresh,
            "refresh",
            ctx.now_ms
                .saturating_add(ctx.settings.refresh_ttl_ms)
                .min(ends_at),
        ),
    ] {
        ctx.store
            .insert_oauth_token(&OAuthTokenRecord {
                hash: sha256_hex(plaintext),
                grant_id: grant.id.clone(),
                kind: kind.to_owned(),
                scope: scope.clone(),
                created_at: ctx.now_ms,
                expires_at,
                rotated_at: None,
                revoked_at: None,
            })
            .await?;
    }
    Ok(Issued {
        access_token: access,
        token_type: "Bearer",
        expires_in: (access_expires_at - ctx.now_ms).max(0) / 1000,
        refresh_token: refresh,
        scope,
    })
}

/// The base64url SHA-256 of a verifier: what its challenge must be.
pub fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn same(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// `POST /token`: `authorization_code` or `refresh_token`.
pub async fn token(
    ctx: OAuth<'_>,
    params: &TokenParams,
    credentials: &Credentials,
) -> Result<Issued, OAuthError> {
    match params.grant_type.as_deref() {
        Some("authorization_code") => {
            let client = clients::authenticate(ctx, credentials).await?;
            exchange_code(ctx, &client, params).await
        }
        Some("refresh_token") => {
            let client = clients::authenticate(ctx, credentials).await?;
            refresh(ctx, &client, params).await
        }
        Some(other) => Err(OAuthError::UnsupportedGrantType(format!(
            "grant_type {other:?} is not supported; use authorization_code or refresh_token"
        ))),
        None => Err(OAuthError::request("grant_type is required")),
    }
}

async fn exchange_code(
    ctx: OAuth<'_>,
    client: &Client,
    params: &TokenParams,
) -> Result<Issued, OAuthError> {
    let code = params
        .code
        .as_deref()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| OAuthError::request("code is required"))?;
    let Some(grant) = ctx.store.oauth_grant_by_code(&sha256_hex(code)).await? else {
        return Err(OAuthError::grant("unknown authorization code"));
    };
    // Who presents the code is checked before whether it was used: the
    // client (authenticated above), its redirect URI and the PKCE verifier.
    // Only a presenter who passes all three could have redeemed the code,
    // so only they revoke the grant on a second use (OAuth 2.1 §4.1.3); a
    // stolen code alone, or another client holding it, is refused without
    // touching the victim's tokens.
    if grant.client_id != client.id {
        tracing::info!(client_id = %client.id, "refused a code issued to another client");
        return Err(OAuthError::grant(
            "the authorization code was issued to another client",
        ));
    }
    // OAuth 2.1 §4.1.3: required when the authorization request named
    // it, and then identical; when it named none, one sent must still be
    // the one used.
    match params.redirect_uri.as_deref() {
        Some(uri)
            if uri == grant.redirect_uri
                || RedirectUri::parse(uri).is_ok_and(|u| u.as_str() == grant.redirect_uri) => {}
        None if !grant.redirect_uri_named => {}
        _ => {
            return Err(OAuthError::grant(
                "redirect_uri must be the one the authorization request named",
            ));
        }
    }
    let verifier = params
        .code_verifier
        .as_deref()
        .ok_or_else(|| OAuthError::grant("code_verifier is required (PKCE)"))?;
    if !pkce_shaped(verifier) || !same(&s256(verifier), &grant.code_challenge) {
        tracing::info!(client_id = %client.id, "refused a wrong PKCE verifier");
        return Err(OAuthError::grant(
            "code_verifier does not match the code_challenge",
        ));
    }
    if grant.code_used_at.is_some() {
        return Err(code_reused(ctx, &grant).await);
    }
    if grant.revoked_at.is_some() || grant.code_expires_at <= ctx.now_ms {
        return Err(OAuthError::grant("the authorization code has expired"));
    }
    same_resource(ctx, params.resource.as_deref(), &grant)?;
    if !ctx.store.use_oauth_code(&grant.id, ctx.now_ms).await? {
        return Err(code_reused(ctx, &grant).await);
    }
    let scopes = stored_scopes(&grant.scope)?;
    issue(ctx, &grant, scopes).await
}

/// A token request's `resource` (RFC 8707 §2.2), when it names one, must be
/// the one the grant was made for; otherwise `invalid_target`.
fn same_resource(
    ctx: OAuth<'_>,
    resource: Option<&str>,
    grant: &OAuthGrantRecord,
) -> Result<(), OAuthError> {
    let Some(resource) = resource else {
        return Ok(());
    };
    let asked = ctx.settings.check_resource(resource)?;
    if asked != grant.resource {
        return Err(OAuthError::InvalidTarget(format!(
            "this grant is for {}; resource must be that or absent",
            grant.resource
        )));
    }
    Ok(())
}

/// A code presented again: revoke every token issued from it.
async fn code_reused(ctx: OAuth<'_>, grant: &OAuthGrantRecord) -> OAuthError {
    tracing::warn!(grant = %grant.id, client_id = %grant.client_id, "an authorization code was used twice; revoking its tokens");
    let result = async {
        if ctx.store.revoke_oauth_grant(&grant.id, ctx.now_ms).await? {
            event(ctx, &grant.account_id, &grant.client_id, "code_reused").await?;
        }
        Ok::<(), OAuthError>(())
    }
    .await;
    match result {
        Ok(()) => OAuthError::grant("the authorization code was already used"),
        Err(err) => err,
    }
}

async fn refresh(
    ctx: OAuth<'_>,
    client: &Client,
    params: &TokenParams,
) -> Result<Issued, OAuthError> {
    let presented = params
        .refresh_token
        .as_deref()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| OAuthError::request("refresh_token is required"))?;
    let hash = sha256_hex(presented);
    let Some(found) = ctx.store.oauth_token(&hash).await? else {
        return Err(OAuthError::grant("unknown refresh token"));
    };
    let (token, grant) = (found.token, found.grant);
    if token.kind != "refresh" || !same(&token.hash, &hash) {
        return Err(OAuthError::grant("unknown refresh token"));
    }
    if grant.client_id != client.id {
        tracing::info!(client_id = %client.id, "refused a refresh token issued to another client");
        return Err(OAuthError::grant(
            "the refresh token was issued to another client",
        ));
    }
    if token.rotated_at.is_some() {
        return Err(refresh_reused(ctx, &grant).await);
    }
    if token.revoked_at.is_some() || grant.revoked_at.is_some() {
        return Err(OAuthError::grant("the refresh token was revoked"));
    }
    if token.expires_at <= ctx.now_ms {
        return Err(OAuthError::grant("the refresh token has expired"));
    }
    if grant_ends_at(ctx, &grant) <= ctx.now_ms {
        return Err(OAuthError::grant(
            "this connection reached its maximum age; authorize again",
        ));
    }
    let held = stored_scopes(&token.scope)?;
    let scopes = match parse_scope(params.scope.as_deref())? {
        Some(asked) if scopes_within(asked, held) => asked,
        Some(_) => {
            return Err(OAuthError::InvalidScope(format!(
                "a refresh may narrow the scope, not widen it (granted: {})",
                scope_string(held)
            )));
        }
        None => held,
    };
    same_resource(ctx, params.resource.as_deref(), &grant)?;
    if !ctx.store.rotate_oauth_refresh(&hash, ctx.now_ms).await? {
        return Err(refresh_reused(ctx, &grant).await);
    }
    let issued = issue(ctx, &grant, scopes).await?;
    // The old refresh token is rotated out and the new ones exist: failing
    // now would leave the client with neither. The activity line is
    // best-effort.
    if let Err(err) = event(ctx, &grant.account_id, &grant.client_id, "refreshed").await {
        tracing::warn!(grant = %grant.id, error = %err, "could not record a refresh in the activity");
    }
    Ok(issued)
}

/// A rotated-out refresh token presented again: someone holds a copy, so
/// the whole family (the grant) is revoked.
async fn refresh_reused(ctx: OAuth<'_>, grant: &OAuthGrantRecord) -> OAuthError {
    tracing::warn!(grant = %grant.id, client_id = %grant.client_id, "a rotated refresh token was presented again; revoking the family");
    let result = async {
        if ctx.store.revoke_oauth_grant(&grant.id, ctx.now_ms).await? {
            event(ctx, &grant.account_id, &grant.client_id, "refresh_reused").await?;
        }
        Ok::<(), OAuthError>(())
    }
    .await;
    match result {
        Ok(()) => OAuthError::grant(
            "the refresh token was already used; every token of this grant is revoked",
        ),
        Err(err) => err,
    }
}

/// `POST /revoke` (RFC 7009): revoke a token of the authenticated client.
/// An unknown token, or one of another client, changes nothing and is
/// still answered 200 (§2.2), so the endpoint reveals nothing. Revoking a
/// refresh token revokes its grant, and with it the access tokens.
pub async fn revoke(
    ctx: OAuth<'_>,
    token: Option<&str>,
    credentials: &Credentials,
) -> Result<(), OAuthError> {
    let client = clients::authenticate(ctx, credentials).await?;
    let token = token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| OAuthError::request("token is required"))?;
    let hash = sha256_hex(token);
    let Some(found) = ctx.store.oauth_token(&hash).await? else {
        return Ok(());
    };
    if found.grant.client_id != client.id {
        tracing::info!(client_id = %client.id, "ignored a revocation of another client's token");
        return Ok(());
    }
    let revoked = if found.token.kind == "refresh" {
        ctx.store
            .revoke_oauth_grant(&found.grant.id, ctx.now_ms)
            .await?
    } else {
        ctx.store.revoke_oauth_token(&hash, ctx.now_ms).await?
    };
    if revoked {
        event(
            ctx,
            &found.grant.account_id,
            &found.grant.client_id,
            "revoked",
        )
        .await?;
    }
    Ok(())
}

/// What a live access token stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessGrant {
    pub account_id: AccountId,
    /// The grant's id: stable across refreshes.
    pub grant_id: TokenId,
    pub scopes: Scopes,
}

/// Resolve an access token: `None` when it is not one of ours, unknown,
/// expired, revoked, or its grant is.
pub async fn resolve_access(
    store: &crate::store::Store,
    now_ms: i64,
    plaintext: &str,
) -> Result<Option<AccessGrant>, OAuthError> {
    let Some(body) = plaintext.strip_prefix(ACCESS_PREFIX) else {
        return Ok(None);
    };
    if body.len() > 44 || !bs58::decode(body).into_vec().is_ok_and(|b| b.len() == 32) {
        return Ok(None);
    }
    let hash = sha256_hex(plaintext);
    let Some(found) = store.oauth_token(&hash).await? else {
        return Ok(None);
    };
    let (token, grant) = (found.token, found.grant);
    if token.kind != "access"
        || !same(&token.hash, &hash)
        || token.revoked_at.is_some()
        || grant.revoked_at.is_some()
        || token.expires_at <= now_ms
    {
        return Ok(None);
    }
    let stale = now_ms - LAST_USED_RESOLUTION_MS;
    if grant.last_used_at.is_none_or(|at| at <= stale) {
        store.touch_oauth_grant(&grant.id, now_ms, stale).await?;
    }
    let account_id = AccountId::parse(&grant.account_id)?;
    let grant_id = TokenId::parse(&grant.id)?;
    Ok(Some(AccessGrant {
        account_id,
        grant_id,
        scopes: stored_scopes(&token.scope)?,
    }))
}

/// A client an account is connected to, for the Keys page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connected {
    pub client_id: String,
    pub name: String,
    /// "registered through POST /register" or the metadata document's host.
    pub from: String,
    pub scope: String,
    pub connected_at: i64,
    pub last_used_at: Option<i64>,
}

/// The clients `account` is connected to at `now_ms`: a grant not revoked
/// with a token that still works (an access token not expired, or a
/// refresh token neither expired nor spent).
pub async fn connected(
    store: &crate::store::Store,
    account: &AccountId,
    now_ms: UnixMillis,
) -> Result<Vec<Connected>, OAuthError> {
    Ok(store
        .oauth_connected_clients(account.as_str(), now_ms)
        .await?
        .into_iter()
        .map(|row| Connected {
            from: if row.kind == "metadata" {
                Url::parse(&row.client_id)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_owned))
                    .unwrap_or_default()
            } else {
                "registered itself (dynamic registration)".to_owned()
            },
            name: if row.name.is_empty() {
                "An unnamed client".to_owned()
            } else {
                row.name
            },
            client_id: row.client_id,
            scope: row.scope,
            connected_at: row.connected_at,
            last_used_at: row.last_used_at,
        })
        .collect())
}

/// One line of activity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Activity {
    pub client: String,
    /// authorized, denied, refreshed, revoked, disconnected, code_reused,
    /// refresh_reused.
    pub kind: String,
    pub at: i64,
}

/// The newest `limit` events of `account`'s clients and tokens.
pub async fn activity(
    store: &crate::store::Store,
    account: &AccountId,
    limit: i64,
) -> Result<Vec<Activity>, OAuthError> {
    Ok(store
        .oauth_events(account.as_str(), limit)
        .await?
        .into_iter()
        .map(|row| Activity {
            client: row
                .client_name
                .filter(|n| !n.is_empty())
                .unwrap_or(row.client_id),
            kind: row.kind,
            at: row.at,
        })
        .collect())
}

/// Disconnect a client from `account`: every token of every grant it has
/// is revoked. False when it had none live.
pub async fn disconnect(
    ctx: OAuth<'_>,
    account: &AccountId,
    client_id: &str,
) -> Result<bool, OAuthError> {
    let n = ctx
        .store
        .revoke_oauth_client_grants(account.as_str(), client_id, ctx.now_ms)
        .await?;
    if n > 0 {
        event(ctx, account.as_str(), client_id, "disconnected").await?;
    }
    Ok(n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_is_rfc7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn pkce_values_have_their_shape() {
        assert!(pkce_shaped("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!pkce_shaped("short"));
        assert!(!pkce_shaped(&"a".repeat(129)));
        assert!(!pkce_shaped(&format!("{}+", "a".repeat(43))));
    }

    #[test]
    fn a_code_challenge_is_exactly_43_base64url_characters() {
        assert!(challenge_shaped(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!challenge_shaped(&"a".repeat(42)));
        assert!(!challenge_shaped(&"a".repeat(44)));
        assert!(!challenge_shaped(&format!("{}.", "a".repeat(42))));
        assert!(!challenge_shaped(&format!("{}=", "a".repeat(42))));
    }

    #[test]
    fn responses_carry_state_and_iss() {
        let uri = RedirectUri::parse("http://localhost:4000/callback?x=1").unwrap();
        let url = response_url(
            &uri,
            "https://ledger.example",
            Some("s t"),
            &[("code", "abc")],
        );
        assert_eq!(
            url,
            "http://localhost:4000/callback?x=1&code=abc&state=s+t&iss=https%3A%2F%2Fledger.example"
        );
    }
}
