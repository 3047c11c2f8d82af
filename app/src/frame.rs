//! The portal's frame: the one per-request value every page renders from
//! ([`Portal`]: who is looking, what the page shows), how components read
//! it, and the parts every page shares (the navigation that changes with
//! the session, the refusal page, the CSRF field).
//!
//! The server computes the value and puts it in Leptos context for the
//! render; [`provide_portal`] shares it with the components as a
//! `SharedValue`, so hydration finds the same value serialized in the page.
//! The pages (`account`, `report`, `research`) read it from here and never
//! from each other; what each page shows is plain data in `views`.

use leptos::prelude::*;
use leptos_meta::Title;
use serde::{Deserialize, Serialize};

use crate::views::{
    ConfirmView, ConsentView, CreditsPage, GraphPage, KeysView, OAuthErrorView, PaymentRow,
    ReportView, SignInView, WalletsView,
};

/// Everything a portal render knows about its request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Portal {
    pub viewer: Viewer,
    pub page: PortalPage,
}

/// Who is looking.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Viewer {
    /// The signed-in account, if any.
    pub account: Option<ViewerAccount>,
    /// The session's CSRF token, carried by every form (empty when signed out).
    pub csrf: String,
    /// Whether Google sign-in is configured.
    pub google: bool,
    /// The public URL, without a trailing slash.
    pub public_url: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerAccount {
    pub id: String,
    pub label: String,
    /// "Google account a@b.c", "Solana wallet 7xKX…gAsU", oldest first.
    pub identities: Vec<String>,
}

/// What the page shows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum PortalPage {
    /// A page with nothing of its own (home, tools).
    #[default]
    None,
    SignIn(SignInView),
    Keys(KeysView),
    Wallets(WalletsView),
    Payments(Vec<PaymentRow>),
    /// Research credits (follow the money).
    Credits(CreditsPage),
    /// A wallet's follow-the-money graph.
    Graph(GraphPage),
    /// The report view of one watched wallet (`/wallets/{address}`).
    Report(ReportView),
    /// What a scan of a watched wallet costs, asked before it starts.
    ScanOffer(crate::views::ScanOffer),
    /// A scan's progress (`/scans/{job_id}`).
    ScanProgress(crate::views::ScanProgress),
    /// The account's settings (`/settings`).
    Settings(Box<crate::views::SettingsView>),
    /// A form was refused (CSRF); nothing changed.
    Refused(String),
    /// A destructive action, asked about before it is done.
    Confirm(ConfirmView),
    /// An OAuth client asks for access (`/authorize`).
    Consent(ConsentView),
    /// An authorization request that cannot be answered (`/authorize`):
    /// shown, never redirected automatically.
    OAuthError(OAuthErrorView),
}

/// The request's [`Portal`] as the components read it: on the server the
/// value the server put in context, serialized into the page; in the
/// browser, during hydration, that same value read back. Synchronous, so
/// no page waits on it.
#[derive(Clone)]
struct SharedPortal(Portal);

pub fn provide_portal() {
    let portal = leptos::server::SharedValue::new(|| use_context::<Portal>().unwrap_or_default())
        .into_inner();
    provide_context(SharedPortal(portal));
}

/// Render `f` with the request's portal value.
pub(crate) fn with_portal<V: IntoView + 'static>(f: impl FnOnce(Portal) -> V) -> V {
    f(use_context::<SharedPortal>()
        .map(|shared| shared.0)
        .unwrap_or_default())
}

/// Whether someone is signed in (for the navigation's layout).
pub fn is_signed_in() -> bool {
    with_portal(|portal| portal.viewer.account.is_some())
}

/// The navigation entries that depend on the session.
#[component]
pub fn AccountNav() -> impl IntoView {
    let path = leptos_router::hooks::use_location()
        .pathname
        .get_untracked();
    let current = move |href: &str| (path == href).then_some("page");
    with_portal(|portal| match portal.viewer.account {
        None => {
            view! { <a href="/signin" rel="external" aria-current=current("/signin")>"Sign in"</a> }
                .into_any()
        }
        Some(_) => view! {
            <a href="/keys" rel="external" aria-current=current("/keys")>"Keys"</a>
            <a href="/wallets" rel="external" aria-current=current("/wallets")>"Wallets"</a>
            <a href="/payments" rel="external" aria-current=current("/payments")>"Payments"</a>
            <a href="/credits" rel="external" aria-current=current("/credits")>"Credits"</a>
            <form method="post" action="/auth/signout" class="signout">
                <input type="hidden" name="csrf" value=portal.viewer.csrf.clone()/>
                <button type="submit" class="link">"Sign out"</button>
            </form>
        }
        .into_any(),
    })
}

/// "Signed in as <name>" under the navigation, for every signed-in page.
#[component]
pub fn SignedInAs() -> impl IntoView {
    with_portal(|portal| {
        portal.viewer.account.map(|account| {
            view! {
                <p class="who" id="signed-in-as">"Signed in as " <strong>{account.label}</strong>
                    " · " <a href="/settings" rel="external" id="settings-link">"Settings"</a></p>
            }
        })
    })
}

pub(crate) fn refused(message: String) -> AnyView {
    view! {
        <Title text="Ledger: refused"/>
        <h1>"Refused"</h1>
        <p class="error" role="alert">{message}</p>
        <p>"Nothing was changed. " <a href="/keys" rel="external">"Back to your keys"</a>"."</p>
    }
    .into_any()
}

/// The hidden CSRF field every form carries.
pub(crate) fn csrf_field(viewer: &Viewer) -> impl IntoView + use<> {
    view! { <input type="hidden" name="csrf" value=viewer.csrf.clone()/> }
}
