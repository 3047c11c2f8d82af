//! The portal's form POSTs, checked in one place. Every form carries the
//! session's CSRF token; [`CheckedForm`] is the axum extractor that finds
//! the session, compares its token with the form's before anything else
//! runs, and only then parses the body into the form's own type. A form
//! without the session's token (another site's, an old page's, a session
//! that ended) is answered with its page's 403 refusal and nothing changes;
//! a body that is no such form is `invalid_params`. A handler that takes a
//! `CheckedForm` therefore starts with a signed-in account whose form is
//! known to come from its own page.

use axum::{
    extract::{FromRequest, FromRequestParts, RawPathParams, Request},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use serde::{Deserialize, de::DeserializeOwned};
use tower_sessions::Session;

use super::{Parts, render, viewer};
use crate::{accounts::AccountId, error::AppError, state::AppState};
use app::frame::{Portal, PortalPage, Viewer};

/// What a refused form reads.
const REFUSED: &str = "This form was refused: it was sent without this session's form token (it may be from an old page, another site, or a session that has ended). Reload the page and try again.";

/// A form of a portal page: its fields, and the page a refusal renders.
pub trait PortalForm: DeserializeOwned {
    /// The page of a form posted to a fixed path.
    const PAGE: &'static str = "/";

    /// The page a refusal renders, from the `{address}` of the path the
    /// form was posted to (when its route has one). An address no page can
    /// have is refused here, before the form is read.
    fn page(address: Option<&str>) -> Result<String, AppError> {
        let _ = address;
        Ok(Self::PAGE.to_owned())
    }
}

/// A form POST whose CSRF token matched the session's: who sent it and
/// what it says.
pub struct CheckedForm<T> {
    pub viewer: Viewer,
    pub account: AccountId,
    pub form: T,
    /// The session, for the flash a handler leaves before its 303.
    pub session: Session,
}

impl<T: PortalForm> FromRequest<AppState> for CheckedForm<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Response> {
        let (mut head, body) = request.into_parts();
        let axum::Extension(parts) = axum::Extension::<Parts>::from_request_parts(&mut head, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let session = Session::from_request_parts(&mut head, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let address = RawPathParams::from_request_parts(&mut head, state)
            .await
            .ok()
            .and_then(|params| {
                params
                    .iter()
                    .find(|(name, _)| *name == "address")
                    .map(|(_, value)| value.to_owned())
            });
        let page = T::page(address.as_deref()).map_err(IntoResponse::into_response)?;
        let body = Bytes::from_request(Request::from_parts(head, body), state)
            .await
            .map_err(IntoResponse::into_response)?;
        check(state, &parts, &session, &page, &body).await
    }
}

/// The CSRF check, then the body as `T`.
async fn check<T: DeserializeOwned>(
    state: &AppState,
    parts: &Parts,
    session: &Session,
    page: &str,
    body: &Bytes,
) -> Result<CheckedForm<T>, Response> {
    #[derive(Deserialize)]
    struct Token {
        #[serde(default)]
        csrf: String,
    }
    let presented = serde_urlencoded::from_bytes::<Vec<(String, String)>>(body)
        .ok()
        .and_then(|pairs| {
            pairs
                .into_iter()
                .find(|(k, _)| k == "csrf")
                .map(|(_, v)| Token { csrf: v })
        });
    let (viewer, signed_in) = viewer(state, parts, session)
        .await
        .map_err(IntoResponse::into_response)?;
    let ok = matches!((&signed_in, &presented), (Some(s), Some(t)) if s.csrf_matches(&t.csrf));
    let Some(signed) = signed_in.filter(|_| ok) else {
        tracing::info!(
            page,
            "refused a portal form without this session's CSRF token"
        );
        return Err(refused(state, parts, session, page).await);
    };
    let account = signed.account().map_err(IntoResponse::into_response)?;
    let form = serde_urlencoded::from_bytes::<T>(body)
        .map_err(|e| AppError::invalid_params(format!("form: {e}")).into_response())?;
    Ok(CheckedForm {
        viewer,
        account,
        form,
        session: session.clone(),
    })
}

/// The 403 page of a refused form.
pub async fn refused(state: &AppState, parts: &Parts, session: &Session, page: &str) -> Response {
    let viewer = match viewer(state, parts, session).await {
        Ok((viewer, _)) => viewer,
        Err(err) => return err.into_response(),
    };
    let portal = Portal {
        viewer,
        page: PortalPage::Refused(REFUSED.to_owned()),
    };
    render(state, page, StatusCode::FORBIDDEN, portal).await
}
