//! The sign-in routes: Sign-In With Solana as a JSON API a page script
//! calls (`/auth/solana/challenge`, `/auth/solana/verify`), Google as two
//! redirects (`/auth/google/start`, `/auth/google/callback`), and sign-out.
//!
//! Login CSRF (a page elsewhere signing a visitor in to an account of its
//! choosing) is refused on both paths: the JSON API takes only
//! `application/json` and refuses cross-site browser requests and foreign
//! Origins (`http::check_browser`, as `/v1` does), and the Google callback
//! must carry the state bound to this browser in a short-lived cookie.
//! A signed-in visitor who signs in with another method links that
//! identity to the current account. Every sign-in draws a new session id.

use axum::{
    Json,
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tower_sessions::Session;

use super::{Parts, form, pages, sessions};
use crate::{
    accounts::{self, AccountId, Identity},
    auth::{oidc, siws},
    error::{AppError, Code},
    http::{ClientAddr, JsonBody, check_browser},
    limits::ClientKey,
    state::AppState,
};

/// The cookie that binds a Google flow's state to the browser that began it.
const STATE_COOKIE: &str = "ledger_google_state";
/// As long as a flow lives (`oidc::FLOW_TTL_MS`).
const STATE_COOKIE_SECS: i64 = oidc::FLOW_TTL_MS / 1000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChallengeRequest {
    address: String,
}

#[derive(Serialize)]
pub struct ChallengeResponse {
    message: String,
    nonce: String,
    expires_at: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyRequest {
    message: String,
    signature: String,
}

#[derive(Serialize)]
pub struct SignedInResponse {
    account_id: String,
    /// This sign-in created the account.
    created: bool,
    /// This sign-in newly linked the wallet to the account already signed in.
    linked: bool,
}

/// The login-CSRF guard of the JSON API, checked before the body is read:
/// no cross-site browser request, no foreign `Origin` (`JsonBody` then
/// takes `application/json` only, which no cross-site form can send).
pub struct NotCrossSite;

impl axum::extract::FromRequestParts<AppState> for NotCrossSite {
    type Rejection = AppError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, AppError> {
        check_browser(state, &parts.headers).map(|()| NotCrossSite)
    }
}

fn siws_settings(parts: &Parts) -> Result<&siws::SiwsSettings, AppError> {
    parts
        .siws
        .as_ref()
        .ok_or_else(|| AppError::new(Code::Unavailable, "wallet sign-in is not available"))
}

/// `POST /auth/solana/challenge {"address"}`: the message to sign.
///
/// Each challenge stores a nonce, so a client address may ask for
/// `rate_limit.siws_challenges_per_minute` (429 with `Retry-After` beyond).
pub async fn solana_challenge(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    _guard: NotCrossSite,
    ClientAddr(client): ClientAddr,
    JsonBody(body): JsonBody<ChallengeRequest>,
) -> Result<Json<ChallengeResponse>, AppError> {
    if let Some(client) = &client {
        state.limiter().siws_challenge(client).await?;
    }
    let ctx = siws::SiwsContext {
        store: state.store(),
        settings: siws_settings(&parts)?,
        now_ms: state.now_ms(),
    };
    let challenge = siws::challenge(ctx, &body.address).await?;
    Ok(Json(ChallengeResponse {
        message: challenge.message,
        nonce: challenge.nonce,
        expires_at: challenge.expires_at,
    }))
}

/// `POST /auth/solana/verify {"message","signature"}`: sign in (or link),
/// answered with the account and the session cookie.
pub async fn solana_verify(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    _guard: NotCrossSite,
    ClientAddr(client): ClientAddr,
    JsonBody(body): JsonBody<VerifyRequest>,
) -> Result<Json<SignedInResponse>, AppError> {
    let ctx = siws::SiwsContext {
        store: state.store(),
        settings: siws_settings(&parts)?,
        now_ms: state.now_ms(),
    };
    let wallet = siws::verify(ctx, &body.message, &body.signature).await?;
    let outcome = complete(
        &state,
        &session,
        client.as_ref(),
        Identity::Solana {
            address: wallet.address,
        },
    )
    .await?;
    Ok(Json(SignedInResponse {
        account_id: outcome.account.to_string(),
        created: outcome.created,
        linked: outcome.linked,
    }))
}

/// What a sign-in did.
pub struct Outcome {
    pub account: AccountId,
    pub created: bool,
    pub linked: bool,
}

/// Sign the session in with `identity`, or link it to the account already
/// signed in; either way the session gets a new id. A conflict (the
/// identity belongs to another account) changes nothing. A first sign-in,
/// which creates an account, is limited per client address
/// (`rate_limit.signups_per_hour`; 429 with `Retry-After` beyond).
pub async fn complete(
    state: &AppState,
    session: &Session,
    client: Option<&ClientKey>,
    identity: Identity,
) -> Result<Outcome, AppError> {
    let now = state.now_ms();
    let current = match sessions::signed_in(session).await? {
        Some(signed) => Some(signed.account()?),
        None => None,
    };
    let outcome = match current {
        Some(account) => {
            let linked = accounts::link_identity(state.store(), now, &account, identity).await?;
            Outcome {
                account,
                created: false,
                linked,
            }
        }
        None => {
            if let Some(client) = client
                && accounts::signs_in_to(state.store(), &identity)
                    .await?
                    .is_none()
            {
                state.limiter().sign_up(client).await?;
            }
            let (account, created) = accounts::sign_in(state.store(), now, identity).await?;
            Outcome {
                account,
                created,
                linked: false,
            }
        }
    };
    sessions::begin(session, &outcome.account, now).await?;
    Ok(outcome)
}

fn state_cookie(value: &str, max_age: i64, secure: bool) -> Option<HeaderValue> {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{STATE_COOKIE}={value}; Path=/auth/google; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}"
    ))
    .ok()
}

/// A cookie's value from the request's `Cookie` headers.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Where a sign-in lands without a `next`: the wallets, what a person
/// came for (Keys is a developer's page, one click away).
pub const DEFAULT_LANDING: &str = "/wallets";

/// The session key of where a sign-in returns to.
const NEXT_KEY: &str = "signin_next";

/// `GET /auth/google/start[?next=/path]`: begin a flow, bind its state to
/// this browser, send the browser to Google. `next` (a same-origin path)
/// is kept in the session for the callback. 404 when Google is not
/// configured.
pub async fn google_start(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    request: Request,
) -> Response {
    let Some(google) = &parts.google else {
        return crate::site::fallback(State(state), request).await;
    };
    let stored = match pages::next_of(request.uri().query()) {
        Some(next) => session.insert(NEXT_KEY, next).await,
        None => session.remove::<String>(NEXT_KEY).await.map(|_| ()),
    };
    if let Err(err) = stored {
        return AppError::internal("portal session", err).into_response();
    }
    let start = match google.begin(state.store(), state.now_ms()).await {
        Ok(start) => start,
        Err(err) => {
            let err = AppError::from(err);
            return pages::sign_in_error(&state, &parts, None, err.status(), err.message()).await;
        }
    };
    let mut response = Redirect::to(&start.authorize_url).into_response();
    *response.status_mut() = StatusCode::FOUND;
    if let Some(cookie) = state_cookie(&start.state, STATE_COOKIE_SECS, parts.secure) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

#[derive(Deserialize, Default)]
struct CallbackQuery {
    #[serde(default)]
    code: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    error: Option<String>,
}

/// `GET /auth/google/callback?code&state`: finish the flow begun in this
/// browser, sign in (or link), then to the `next` the flow began with,
/// else [`DEFAULT_LANDING`].
pub async fn google_callback(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    request: Request,
) -> Response {
    let Some(google) = &parts.google else {
        return crate::site::fallback(State(state), request).await;
    };
    let query: CallbackQuery =
        serde_urlencoded::from_str(request.uri().query().unwrap_or("")).unwrap_or_default();
    let bound = cookie(request.headers(), STATE_COOKIE).map(str::to_owned);
    let client = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| crate::http::client_key(&state, info.0, request.headers()));
    let mut response = google_finish(
        &state,
        &parts,
        google,
        &session,
        Finish {
            query,
            bound,
            client,
        },
    )
    .await;
    // The state is single use whatever happened.
    if let Some(clear) = state_cookie("", 0, parts.secure) {
        response.headers_mut().append(header::SET_COOKIE, clear);
    }
    response
}

/// What the callback brought: its query, the state bound to this browser,
/// and the client address (sign-ups are limited per address).
struct Finish {
    query: CallbackQuery,
    bound: Option<String>,
    client: Option<ClientKey>,
}

async fn google_finish(
    state: &AppState,
    parts: &Parts,
    google: &oidc::Oidc,
    session: &Session,
    finish: Finish,
) -> Response {
    let Finish {
        query,
        bound,
        client,
    } = finish;
    if query.error.is_some() {
        return pages::sign_in_error(
            state,
            parts,
            Some(session),
            StatusCode::UNAUTHORIZED,
            "Google sign-in was cancelled or refused; sign in again",
        )
        .await;
    }
    if !bound.is_some_and(|bound| oidc::states_match(&bound, &query.state)) {
        tracing::info!(
            method = "google",
            reason = "state_cookie_mismatch",
            "sign-in refused"
        );
        return pages::sign_in_error(
            state,
            parts,
            Some(session),
            StatusCode::FORBIDDEN,
            "this Google sign-in was not started in this browser, or it has expired; sign in again",
        )
        .await;
    }
    let result = async {
        let who = google
            .finish(state.store(), state.now_ms(), &query.state, &query.code)
            .await?;
        let identity = Identity::Google {
            issuer: who.issuer,
            subject: who.subject,
            email: who.email.filter(|_| who.email_verified),
        };
        complete(state, session, client.as_ref(), identity).await
    }
    .await;
    match result {
        Ok(_) => {
            let next = session.remove::<String>(NEXT_KEY).await.ok().flatten();
            let next = next
                .as_deref()
                .and_then(crate::http::safe_next)
                .unwrap_or(DEFAULT_LANDING);
            Redirect::to(next).into_response()
        }
        Err(err) => {
            pages::sign_in_error(state, parts, Some(session), err.status(), err.message()).await
        }
    }
}

#[derive(Deserialize)]
struct SignOutForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /auth/signout` (a form with the CSRF token): end the session.
pub async fn sign_out(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    body: Bytes,
) -> Response {
    let form: Option<SignOutForm> = serde_urlencoded::from_bytes(&body).ok();
    let signed_in = match sessions::signed_in(&session).await {
        Ok(signed_in) => signed_in,
        Err(err) => return err.into_response(),
    };
    let allowed = matches!((&signed_in, &form), (Some(s), Some(f)) if s.csrf_matches(&f.csrf));
    if !allowed {
        return form::refused(&state, &parts, &session, "/signin").await;
    }
    match sessions::end(&session).await {
        Ok(()) => Redirect::to("/").into_response(),
        Err(err) => err.into_response(),
    }
}
