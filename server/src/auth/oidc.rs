//! Google sign-in: the OpenID Connect authorization-code flow with PKCE,
//! state and nonce, through the `openidconnect` crate.
//!
//! [`Oidc::begin`] writes a pending flow (the SHA-256 of its state, the PKCE
//! verifier and the ID-token nonce) for ten minutes and answers the URL to
//! send the browser to. [`Oidc::finish`] takes that flow out of the store in
//! one statement (so a callback replayed, or raced, finds nothing), exchanges
//! the code with the verifier, and accepts the ID token only if it is RS256,
//! signed by a key of the provider's JWKS, for this client, from this issuer,
//! unexpired at the time passed in, and carrying the flow's nonce.
//!
//! The provider's metadata and keys are discovered on first use and kept;
//! a failed discovery is retried on the next call rather than remembered, and
//! a token signed by a key the cached set does not hold triggers one refetch
//! of the JWKS, so Google's key rotation needs no restart. HTTP goes through
//! the server's reqwest with redirects off: an identity provider has no
//! reason to redirect a back-channel call, and following one is an SSRF door.

use std::{sync::Arc, time::Duration};

use chrono::{DateTime, Utc};
use openidconnect::{
    AuthenticationFlow, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet,
    EndpointNotSet, EndpointSet, IssuerUrl, JsonWebKeySet, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RequestTokenError, Scope, TokenResponse,
    core::{
        CoreClient, CoreIdToken, CoreIdTokenClaims, CoreJwsSigningAlgorithm, CoreProviderMetadata,
        CoreResponseType,
    },
};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::sync::RwLock;

use super::signin::{Refusal, SignInError, refuse};
use crate::clock::UnixMillis;
use crate::store::{NewOidcFlow, Store};

/// How long a begun flow may take to come back.
pub const FLOW_TTL_MS: i64 = 10 * 60 * 1000;
/// A state longer than this is not one we issued.
const MAX_STATE_LEN: usize = 512;
/// Time allowed for each call to the provider.
const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

/// What the operator configures (the lead maps `Config` onto it).
#[derive(Clone, PartialEq, Eq)]
pub struct OidcSettings {
    /// `https://accounts.google.com` for Google.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    /// `{public_url}/auth/google/callback`.
    pub redirect_uri: String,
}

/// The client secret never reaches a log.
impl std::fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"…")
            .field("redirect_uri", &self.redirect_uri)
            .finish()
    }
}

/// A begun flow: where to send the browser, and the state to bind to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcStart {
    pub authorize_url: String,
    /// Also set in a short-lived cookie by the caller and compared with the
    /// callback's `state` ([`states_match`]), so a callback link made for
    /// someone else's flow cannot sign this browser in.
    pub state: String,
}

/// Who the provider says signed in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcIdentity {
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: bool,
}

type Client = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// The Google sign-in service. Cheap to share (`Arc` it); holds the
/// discovered provider.
pub struct Oidc {
    issuer: IssuerUrl,
    client_id: ClientId,
    client_secret: ClientSecret,
    redirect_uri: RedirectUrl,
    http: reqwest::Client,
    provider: RwLock<Option<Arc<CoreProviderMetadata>>>,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("issuer", &self.issuer.as_str())
            .field("client_id", &self.client_id.as_str())
            .finish_non_exhaustive()
    }
}

impl Oidc {
    /// Validate the settings. Nothing is fetched until the first sign-in.
    pub fn new(settings: OidcSettings) -> Result<Self, String> {
        let issuer =
            IssuerUrl::new(settings.issuer).map_err(|e| format!("OIDC issuer URL: {e}"))?;
        let redirect_uri = RedirectUrl::new(settings.redirect_uri)
            .map_err(|e| format!("OIDC redirect URI: {e}"))?;
        if settings.client_id.is_empty() || settings.client_secret.is_empty() {
            return Err("OIDC client id and secret must both be set".to_owned());
        }
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(HTTP_TIMEOUT)
            .build()
            .map_err(|e| format!("OIDC HTTP client: {e}"))?;
        Ok(Self {
            issuer,
            client_id: ClientId::new(settings.client_id),
            client_secret: ClientSecret::new(settings.client_secret),
            redirect_uri,
            http,
            provider: RwLock::new(None),
        })
    }

    /// Start a sign-in: store the pending flow and answer where to go.
    pub async fn begin(&self, store: &Store, now_ms: UnixMillis) -> Result<OidcStart, SignInError> {
        let provider = self.provider().await?;
        let client = self.client(&provider);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                AuthenticationFlow::<CoreResponseType>::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".to_owned()))
            .set_pkce_challenge(challenge)
            .url();
        store
            .insert_oidc_flow(&NewOidcFlow {
                state_hash: state_hash(state.secret()),
                pkce_verifier: verifier.secret().clone(),
                nonce: nonce.secret().clone(),
                created_at: now_ms,
                expires_at: now_ms + FLOW_TTL_MS,
            })
            .await?;
        Ok(OidcStart {
            authorize_url: url.to_string(),
            state: state.secret().clone(),
        })
    }

    /// Finish a sign-in from the callback's `state` and `code`.
    pub async fn finish(
        &self,
        store: &Store,
        now_ms: UnixMillis,
        state: &str,
        code: &str,
    ) -> Result<OidcIdentity, SignInError> {
        let refused = |reason| refuse("google", reason);
        if state.is_empty() || state.len() > MAX_STATE_LEN {
            return Err(refused(Refusal::UnknownState));
        }
        if code.is_empty() {
            return Err(refused(Refusal::CodeRejected));
        }
        // Discover before taking the flow, so an outage does not burn it.
        let provider = self.provider().await?;
        let Some(flow) = store.take_oidc_flow(&state_hash(state)).await? else {
            return Err(refused(Refusal::UnknownState));
        };
        if flow.expires_at <= now_ms {
            return Err(refused(Refusal::StateExpired));
        }
        let client = self.client(&provider);
        let request = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| unavailable("the provider has no token endpoint", &e))?
            .set_pkce_verifier(PkceCodeVerifier::new(flow.pkce_verifier));
        let token = match request.request_async(&self.http).await {
            Ok(token) => token,
            Err(RequestTokenError::ServerResponse(response)) => {
                tracing::info!(error = %response.error(), "the provider refused the code");
                return Err(refused(Refusal::CodeRejected));
            }
            Err(e) => return Err(unavailable("exchanging the code", &e)),
        };
        let id_token = token
            .id_token()
            .ok_or_else(|| refused(Refusal::NoIdToken))?;
        let nonce = Nonce::new(flow.nonce);
        let claims = match verify_id_token(&client, id_token, &nonce, now_ms) {
            Err(Refusal::TokenSignature) if unknown_key(id_token, &provider) => {
                // Google rotates its keys: fetch them again, once.
                let provider = self.refresh_keys(&provider).await?;
                verify_id_token(&self.client(&provider), id_token, &nonce, now_ms)
            }
            other => other,
        }
        .map_err(refused)?;
        Ok(OidcIdentity {
            issuer: claims.issuer().to_string(),
            subject: claims.subject().to_string(),
            email: claims.email().map(|e| e.to_string()),
            email_verified: claims.email_verified().unwrap_or(false),
        })
    }

    fn client(&self, provider: &CoreProviderMetadata) -> Client {
        CoreClient::from_provider_metadata(
            provider.clone(),
            self.client_id.clone(),
            Some(self.client_secret.clone()),
        )
        .set_redirect_uri(self.redirect_uri.clone())
    }

    /// The provider's metadata and keys, discovered on first use.
    async fn provider(&self) -> Result<Arc<CoreProviderMetadata>, SignInError> {
        if let Some(provider) = self.provider.read().await.as_ref() {
            return Ok(provider.clone());
        }
        let mut slot = self.provider.write().await;
        if let Some(provider) = slot.as_ref() {
            return Ok(provider.clone());
        }
        let provider = CoreProviderMetadata::discover_async(self.issuer.clone(), &self.http)
            .await
            .map_err(|e| unavailable("discovering the provider", &e))?;
        let provider = Arc::new(provider);
        *slot = Some(provider.clone());
        Ok(provider)
    }

    /// Fetch the JWKS again and keep it, unless another call already did.
    async fn refresh_keys(
        &self,
        seen: &Arc<CoreProviderMetadata>,
    ) -> Result<Arc<CoreProviderMetadata>, SignInError> {
        let mut slot = self.provider.write().await;
        if let Some(current) = slot.as_ref()
            && !Arc::ptr_eq(current, seen)
        {
            return Ok(current.clone());
        }
        let keys = JsonWebKeySet::fetch_async(seen.jwks_uri(), &self.http)
            .await
            .map_err(|e| unavailable("fetching the provider's keys", &e))?;
        let provider = Arc::new((**seen).clone().set_jwks(keys));
        *slot = Some(provider.clone());
        Ok(provider)
    }
}

/// Whether the `state` a callback carries is the one bound to the browser
/// (compared in constant time).
pub fn states_match(bound: &str, presented: &str) -> bool {
    bool::from(bound.as_bytes().ct_eq(presented.as_bytes()))
}

fn state_hash(state: &str) -> String {
    Sha256::digest(state.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn unavailable(context: &'static str, error: &dyn std::fmt::Display) -> SignInError {
    tracing::warn!(context, %error, "Google sign-in unavailable");
    SignInError::ProviderUnavailable
}

fn verify_id_token(
    client: &Client,
    id_token: &CoreIdToken,
    nonce: &Nonce,
    now_ms: UnixMillis,
) -> Result<CoreIdTokenClaims, Refusal> {
    use openidconnect::{ClaimsVerificationError as E, SignatureVerificationError as S};
    let now = DateTime::<Utc>::from_timestamp_millis(now_ms).unwrap_or_default();
    let verifier = client
        .id_token_verifier()
        .set_allowed_algs([CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256])
        .set_time_fn(move || now);
    id_token.claims(&verifier, nonce).cloned().map_err(|e| {
        let refusal = match &e {
            E::Expired(_) => Refusal::TokenExpired,
            E::InvalidAudience(_) => Refusal::WrongAudience,
            E::InvalidIssuer(_) => Refusal::WrongIssuer,
            E::InvalidNonce(_) => Refusal::NonceMismatch,
            E::SignatureVerification(S::DisallowedAlg(_) | S::UnsupportedAlg(_)) => {
                Refusal::TokenInvalid
            }
            E::SignatureVerification(_) => Refusal::TokenSignature,
            _ => Refusal::TokenInvalid,
        };
        tracing::info!(error = %e, "ID token refused");
        refusal
    })
}

/// Whether the token names a key id the cached set does not hold.
fn unknown_key(id_token: &CoreIdToken, provider: &CoreProviderMetadata) -> bool {
    use openidconnect::JsonWebKey;
    let header_kid = id_token_kid(id_token);
    match header_kid {
        Some(kid) => !provider
            .jwks()
            .keys()
            .iter()
            .any(|k| k.key_id().map(|id| id.as_str()) == Some(kid.as_str())),
        None => false,
    }
}

/// The `kid` of the token's JOSE header, read from its first segment.
fn id_token_kid(id_token: &CoreIdToken) -> Option<String> {
    use base64::Engine as _;
    let text = id_token.to_string();
    let header = text.split('.').next()?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .ok()?;
    let header: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    header.get("kid")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {

    #[test]
    fn settings_never_show_the_client_secret() {
        let settings = OidcSettings {
            issuer: "https://issuer.example".into(),
            client_id: "client".into(),
            client_secret: "very-secret-value".into(),
            redirect_uri: "https://ledger.example/auth/google/callback".into(),
        };
        assert!(!format!("{settings:?}").contains("very-secret-value"));
    }
    use super::*;

    fn settings() -> OidcSettings {
        OidcSettings {
            issuer: "https://accounts.google.com".to_owned(),
            client_id: "id".to_owned(),
            client_secret: "secret".to_owned(),
            redirect_uri: "https://ledger.example/auth/google/callback".to_owned(),
        }
    }

    #[test]
    fn settings_are_validated_without_fetching_anything() {
        assert!(Oidc::new(settings()).is_ok());
        let bad_issuer = OidcSettings {
            issuer: "accounts.google.com".to_owned(),
            ..settings()
        };
        assert!(Oidc::new(bad_issuer).unwrap_err().contains("issuer"));
        let no_secret = OidcSettings {
            client_secret: String::new(),
            ..settings()
        };
        assert!(Oidc::new(no_secret).is_err());
    }

    #[test]
    fn states_are_compared_whole() {
        assert!(states_match("abc", "abc"));
        assert!(!states_match("abc", "abd"));
        assert!(!states_match("abc", "ab"));
    }

    #[test]
    fn the_state_is_stored_hashed() {
        let hash = state_hash("state");
        assert_eq!(hash.len(), 64);
        assert!(!hash.contains("state"));
    }
}
