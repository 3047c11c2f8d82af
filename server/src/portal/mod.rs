//! The people side of the service: cookie sessions, CSRF, the sign-in
//! routes (Sign-In With Solana as a small JSON API, Google as redirects)
//! and the account pages (Keys, Wallets, Payments), as thin adapters over
//! `auth::siws`, `auth::oidc` and `accounts`.
//!
//! The pages are the `app` crate's Leptos components; this module computes
//! each request's [`app::Portal`] value (who is signed in, the CSRF token,
//! what a form just did) and renders the app with it in context
//! ([`render`]), so `app` never depends on the server. Every form POST
//! checks the session's CSRF token before anything else; cookies
//! authenticate these routes only (`http::strip_cookies` keeps them away
//! from `/v1` and `/mcp`). Routes are declared in `startup::router`.

pub mod consent;
pub mod form;
pub mod pages;
pub mod report;
pub mod reports;
pub mod research;
pub mod scan;
pub mod sessions;
pub mod settings;
pub mod signin;
pub mod tax_view;

use std::sync::Arc;

use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use leptos::prelude::provide_context;
use tower_sessions::Session;

use crate::{
    auth::{
        oidc::{Oidc, OidcSettings},
        siws::SiwsSettings,
    },
    error::AppError,
    site::{backend_context, shell_fn},
    state::AppState,
};

/// What the portal's routes share beyond the application state, built once
/// with the router: the SIWS settings and, when configured, Google.
pub struct PortalParts {
    pub siws: Option<SiwsSettings>,
    pub google: Option<Oidc>,
    /// Cookies say `Secure` (the public URL is https).
    pub secure: bool,
}

/// The parts as the handlers take them (an `Extension`).
pub type Parts = Arc<PortalParts>;

impl PortalParts {
    pub fn new(state: &AppState) -> Parts {
        let public_url = state.public_url();
        let config = state.config();
        let siws = SiwsSettings::new(public_url, &config.siws.chain_id)
            .map_err(|e| tracing::error!(error = %e, "Sign-In With Solana is off"))
            .ok();
        let google = match (&config.google.client_id, &config.google.client_secret) {
            (Some(client_id), Some(client_secret)) => Oidc::new(OidcSettings {
                issuer: config.google.issuer.clone(),
                client_id: client_id.clone(),
                client_secret: client_secret.clone(),
                redirect_uri: format!("{public_url}/auth/google/callback"),
            })
            .map_err(|e| tracing::error!(error = %e, "Google sign-in is off"))
            .ok(),
            _ => None,
        };
        Arc::new(Self {
            siws,
            google,
            secure: public_url.starts_with("https://"),
        })
    }
}

/// The viewer of a request: who is signed in (their account's label and
/// identities), the CSRF token, what sign-in methods exist.
pub async fn viewer(
    state: &AppState,
    parts: &PortalParts,
    session: &Session,
) -> Result<(app::frame::Viewer, Option<sessions::SignedIn>), AppError> {
    let signed_in = sessions::signed_in(session).await?;
    let mut viewer = app::frame::Viewer {
        account: None,
        csrf: String::new(),
        google: parts.google.is_some(),
        public_url: state.public_url().to_owned(),
    };
    if let Some(signed) = &signed_in {
        let account = signed.account()?;
        let linked = crate::accounts::identities(state.store(), &account).await?;
        // The name the header shows: the account's label, else the oldest
        // identity as a person knows it (an email, a wallet shortened);
        // never the internal account id.
        let fallback = linked
            .first()
            .map(|l| short_name(&l.identity))
            .unwrap_or_else(|| "your account".to_owned());
        let identities = linked
            .into_iter()
            .map(|linked| describe(&linked.identity))
            .collect();
        let label = crate::accounts::account_label(state.store(), &account)
            .await?
            .filter(|l| !l.is_empty())
            .unwrap_or(fallback);
        viewer.account = Some(app::frame::ViewerAccount {
            id: account.to_string(),
            label,
            identities,
        });
        viewer.csrf = signed.csrf.clone();
    }
    Ok((viewer, signed_in))
}

fn short_name(identity: &crate::accounts::Identity) -> String {
    match identity {
        crate::accounts::Identity::Google { email, subject, .. } => email
            .clone()
            .unwrap_or_else(|| format!("Google account {subject}")),
        crate::accounts::Identity::Solana { address } => {
            format!(
                "wallet {}",
                crate::values::format::short_address(&address.to_string())
            )
        }
    }
}

fn describe(identity: &crate::accounts::Identity) -> String {
    match identity {
        crate::accounts::Identity::Google { email, subject, .. } => {
            format!("Google account {}", email.as_deref().unwrap_or(subject))
        }
        crate::accounts::Identity::Solana { address } => format!("Solana wallet {address}"),
    }
}

/// Render the portal at `path` with `portal` in context, answered `status`.
/// Account pages are never cached (a minted token's plaintext is in one).
pub async fn render(
    state: &AppState,
    path: &str,
    status: StatusCode,
    portal: app::Portal,
) -> Response {
    let backend = backend_context(state.clone());
    let handler = leptos_axum::render_app_async_with_context(
        move || {
            backend();
            provide_context(portal.clone());
        },
        shell_fn(state),
    );
    let mut request = match Request::get(path).body(Body::empty()) {
        Ok(request) => request,
        Err(err) => return AppError::internal("portal render", err).into_response(),
    };
    // The answering request's CSP nonce, so the page carries the one its
    // header names (`site::headers`, which also sets the framing rules).
    if let Some(nonce) = crate::site::headers::current_nonce() {
        request.extensions_mut().insert(nonce);
    }
    let mut response = handler(request).await.into_response();
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// For the Leptos routes that are not account pages (home, tools): the
/// viewer, so the navigation shows "Sign in" or the account's entries.
pub async fn with_viewer(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    mut request: Request,
    next: Next,
) -> Response {
    match viewer(&state, &parts, &session).await {
        Ok((viewer, _)) => {
            // A signed-in page names its viewer ("Signed in as ..."): never
            // stored by a shared cache, as the account pages ([`render`]).
            let personal = viewer.account.is_some();
            request.extensions_mut().insert(app::Portal {
                viewer,
                page: app::frame::PortalPage::None,
            });
            let mut response = next.run(request).await;
            if personal {
                response
                    .headers_mut()
                    .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            }
            response
        }
        Err(err) => err.into_response(),
    }
}

/// The Leptos context of the non-account routes: the backend, and the
/// viewer [`with_viewer`] put in the request.
pub fn route_context(state: AppState) -> impl Fn() + Clone + Send + Sync + 'static {
    let backend = backend_context(state);
    move || {
        backend();
        let portal = leptos::prelude::use_context::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<app::Portal>().cloned())
            .unwrap_or_default();
        provide_context(portal);
    }
}
