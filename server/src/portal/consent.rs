//! The consent page of Ledger's OAuth authorization server: `GET
//! /authorize` checks the request through the protocol (`oauth::flow`) and
//! shows the portal's consent page, or why the request cannot be answered;
//! `POST /authorize` is the consent form, CSRF-checked like every portal
//! form ([`CheckedForm`]), answered with a 303 to the client. A person sees
//! these pages, so they are the portal's; the JSON endpoints are in
//! `oauth_http`. Routes are declared in `startup::router`.

use axum::{
    extract::{ConnectInfo, State},
    http::{HeaderMap, StatusCode, Uri},
    response::{IntoResponse, Redirect, Response},
};
use std::net::SocketAddr;
use tower_sessions::Session;

use super::{
    Parts,
    form::{CheckedForm, PortalForm},
    render, viewer,
};
use crate::{
    http::no_store,
    oauth::{
        ClientKind, OAuthError, clients,
        flow::{self, AuthorizeParams, Checked},
        redirect, scope_string,
    },
    state::AppState,
    store::RateRule,
};

/// What the consent page says each scope lets the client do: the same
/// words as the Keys page's (`Scope::words`).
fn abilities(scopes: crate::accounts::Scopes) -> Vec<String> {
    scopes.iter().map(|s| s.words().to_owned()).collect()
}

async fn error_page(
    state: &AppState,
    parts: &Parts,
    session: &Session,
    status: StatusCode,
    err: &OAuthError,
) -> Response {
    oauth_error_page(state, parts, session, status, err, None).await
}

/// A pre-consent refusal of a known client and redirect URI: 400, the
/// error, and a "Return to {host}" link the person clicks.
async fn refused_page(
    state: &AppState,
    parts: &Parts,
    session: &Session,
    refused: &flow::Refused,
) -> Response {
    oauth_error_page(
        state,
        parts,
        session,
        StatusCode::BAD_REQUEST,
        &refused.error,
        Some((
            refused.return_to.clone(),
            destination_view(&refused.destination),
        )),
    )
    .await
}

async fn oauth_error_page(
    state: &AppState,
    parts: &Parts,
    session: &Session,
    status: StatusCode,
    err: &OAuthError,
    back: Option<(String, app::views::Destination)>,
) -> Response {
    if let OAuthError::Store(e) = err {
        tracing::error!(error = %e, "authorize storage failure");
    }
    let viewer = match viewer(state, parts, session).await {
        Ok((viewer, _)) => viewer,
        Err(e) => return e.into_response(),
    };
    let (return_to, destination) = back.unzip();
    let portal = app::Portal {
        viewer,
        page: app::frame::PortalPage::OAuthError(app::views::OAuthErrorView {
            message: format!("{}: {}", err.code(), err.description()),
            return_to,
            destination,
        }),
    };
    render(state, "/authorize", status, portal).await
}

/// `GET /authorize`: check the request; a bad client or redirect URI is an
/// error page; a signed-out visitor goes to sign in and comes back; a
/// signed-in one sees the consent page.
pub async fn authorize(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let params: AuthorizeParams = match serde_urlencoded::from_str(uri.query().unwrap_or("")) {
        Ok(params) => params,
        Err(_) => {
            let err = OAuthError::request("the query is malformed (a parameter may be repeated)");
            return error_page(&state, &parts, &session, StatusCode::BAD_REQUEST, &err).await;
        }
    };
    let config = &state.config().oauth;
    let budget = clients::FetchBudget {
        bucket: format!(
            "oauth-cimd:{}",
            crate::http::client_key(&state, peer, &headers)
        ),
        rule: RateRule::per_hour(config.metadata_fetch_per_hour, config.metadata_fetch_burst),
    };
    let checked = flow::check(state.oauth(), &params, &budget).await;
    let valid = match checked {
        Checked::Fatal(err) => {
            let status = if matches!(err, OAuthError::Store(_)) {
                StatusCode::INTERNAL_SERVER_ERROR
            } else {
                StatusCode::BAD_REQUEST
            };
            return error_page(&state, &parts, &session, status, &err).await;
        }
        // Never an automatic redirect before the person decides: the
        // page shows the error and a link back they may click.
        Checked::Refused(refused) => {
            return refused_page(&state, &parts, &session, &refused).await;
        }
        Checked::Valid(valid) => valid,
    };
    let (viewer, signed_in) = match viewer(&state, &parts, &session).await {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let Some(signed) = signed_in else {
        let here = uri
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/authorize");
        let next: String = url::form_urlencoded::byte_serialize(here.as_bytes()).collect();
        return found(&format!("/signin?next={next}"));
    };
    let account = match signed.account() {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    let max_pending = state.config().quota.pending_consents_per_account;
    let held = flow::hold(state.oauth(), &account, &valid, max_pending).await;
    let request_id = match held {
        Ok(flow::Held::Pending(id)) => id,
        Ok(flow::Held::Full) => {
            tracing::info!(account = %account, "refused an authorization request: too many pending");
            let minutes = state.config().oauth.request_ttl_secs.div_ceil(60);
            let err = OAuthError::request(format!(
                "your account has as many authorization requests waiting for an answer as it may \
                 ({max_pending}, quota.pending_consents_per_account); answer one in its tab, or \
                 wait: an unanswered request ends after {minutes} min"
            ));
            return error_page(&state, &parts, &session, StatusCode::CONFLICT, &err).await;
        }
        Err(err) => {
            return error_page(
                &state,
                &parts,
                &session,
                StatusCode::INTERNAL_SERVER_ERROR,
                &err,
            )
            .await;
        }
    };
    let identity = viewer
        .account
        .as_ref()
        .map(|a| a.label.clone())
        .unwrap_or_default();
    let identities = viewer
        .account
        .as_ref()
        .map(|a| a.identities.clone())
        .unwrap_or_default();
    let view = app::views::ConsentView {
        request_id,
        client_name: valid.client.display_name(),
        client_from: match &valid.client.kind {
            ClientKind::Metadata { host } => Some(host.clone()),
            ClientKind::Registered => None,
        },
        redirect_uri: valid.redirect_uri.as_str().to_owned(),
        destination: destination_view(&valid.redirect_uri.destination()),
        abilities: abilities(valid.scopes),
        scope: scope_string(valid.scopes),
        identity,
        identities,
    };
    let portal = app::Portal {
        viewer,
        page: app::frame::PortalPage::Consent(view),
    };
    render(&state, "/authorize", StatusCode::OK, portal).await
}

fn found(location: &str) -> Response {
    let mut response = Redirect::to(location).into_response();
    *response.status_mut() = StatusCode::FOUND;
    no_store(response)
}

#[derive(serde::Deserialize)]
pub struct DecisionForm {
    #[serde(default)]
    request_id: String,
    #[serde(default)]
    decision: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for DecisionForm {
    const PAGE: &'static str = "/authorize";
}

/// `POST /authorize`: the consent form (CSRF-checked first); 303 to the
/// client with a code, or with `error=access_denied`.
pub async fn decide(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    CheckedForm { account, form, .. }: CheckedForm<DecisionForm>,
) -> Response {
    let approve = match form.decision.as_str() {
        "approve" => true,
        "deny" => false,
        _ => {
            let err = OAuthError::request("decision must be approve or deny");
            return error_page(&state, &parts, &session, StatusCode::BAD_REQUEST, &err).await;
        }
    };
    let decided = flow::decide(state.oauth(), &account, &form.request_id, approve).await;
    match decided {
        Ok(url) => no_store(Redirect::to(&url).into_response()),
        Err(err) => {
            let status = if matches!(err, OAuthError::Store(_)) {
                StatusCode::INTERNAL_SERVER_ERROR
            } else {
                StatusCode::BAD_REQUEST
            };
            error_page(&state, &parts, &session, status, &err).await
        }
    }
}

/// A redirect URI's destination, in the page's words.
fn destination_view(d: &redirect::Destination) -> app::views::Destination {
    match d {
        redirect::Destination::Site { host } => app::views::Destination::Site(host.clone()),
        redirect::Destination::App { scheme } => app::views::Destination::App(scheme.clone()),
    }
}
