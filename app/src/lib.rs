//! Ledger's portal, as Leptos components. The same components render on the
//! server (feature `ssr`) and hydrate in the browser (feature `hydrate`, built
//! by the `frontend` crate). Every page is complete HTML without JavaScript;
//! hydration only adds conveniences such as copy buttons.
//!
//! The portal never depends on the `server` crate: whatever it needs from the
//! backend (the public URL, the MCP tool registry, later accounts and keys)
//! comes through the [`backend::Backend`] trait object that the server puts in
//! Leptos context, and reaches the browser through server functions.
//!
//! Layout: `explorer` (links to a block explorer), `frame` (the per-request value every page reads, the navigation,
//! the refusal page), `views` (the plain data each page shows), the pages
//! (`pages` for home and tools, `account`, `report`, `research`), which
//! import the frame and the views and never each other, and this file's
//! route table, which lists them all.

pub mod account;
pub mod backend;
pub mod explorer;
pub mod frame;
mod pages;
pub mod report;
pub mod research;
pub mod scan;
pub mod scopes;
pub mod settings;
pub mod snippets;
pub mod views;

use leptos::prelude::*;
use leptos_meta::{MetaTags, Stylesheet, provide_meta_context};
use leptos_router::{
    SsrMode,
    components::{A, Route, Router, Routes},
    path,
};

pub use backend::{ArgumentSummary, SiteInfo, ToolSummary};
pub use frame::Portal;

/// The portal's account pages, which the server renders itself (their
/// forms POST to the same paths); its route list leaves them out.
pub const ACCOUNT_PATHS: [&str; 15] = [
    "/signin",
    "/keys",
    "/keys/revoke",
    "/keys/oauth/disconnect",
    "/wallets",
    "/wallets/remove",
    "/wallets/{address}/share/revoke",
    "/payments",
    "/authorize",
    "/credits",
    "/wallets/{address}/graph",
    "/wallets/{address}/scan",
    "/scans/{job_id}",
    "/wallets/{address}",
    "/settings",
];

/// The stylesheet's URL; the server serves `style/ledger.css` here.
pub const STYLESHEET_PATH: &str = "/style/ledger.css";

/// The HTML document around [`App`]. `hydrate` adds the wasm bootstrap
/// scripts; the server passes `false` when no wasm bundle was built, and the
/// pages then stay fully server-rendered.
pub fn shell(options: LeptosOptions, hydrate: bool) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                {hydrate.then(|| view! { <HydrationScripts options=options.clone()/> })}
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The portal's router and frame.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    frame::provide_portal();
    view! {
        <Stylesheet id="ledger" href=STYLESHEET_PATH/>
        <Router>
            <header class="site-header">
                <A href="/" attr:class="brand">
                    <img src="/logo.svg" alt="" width="28" height="28"/>
                    <span>"Ledger"</span>
                </A>
                // The developer links (llms.txt, OpenAPI, the MCP endpoint)
                // live in the home page's developer section and the footer,
                // not the bar; a signed-in bar keeps only the account's
                // entries on a phone (the brand links home), so it never wraps.
                <nav class:signed-in=frame::is_signed_in()>
                    <A href="/" attr:class="site">"Home"</A>
                    <A href="/tools" attr:class="site">"Tools"</A>
                    <frame::AccountNav/>
                </nav>
            </header>
            // Under the bar, not in it: the bar stays one line on a phone.
            <frame::SignedInAs/>
            <main>
                <Routes fallback=pages::NotFound>
                    <Route path=path!("/") view=pages::HomePage ssr=SsrMode::Async/>
                    <Route path=path!("/tools") view=pages::ToolsPage ssr=SsrMode::Async/>
                    <Route path=path!("/signin") view=account::SignInPage ssr=SsrMode::Async/>
                    <Route path=path!("/keys") view=account::KeysPage ssr=SsrMode::Async/>
                    <Route path=path!("/wallets") view=account::WalletsPage ssr=SsrMode::Async/>
                    <Route path=path!("/keys/revoke") view=account::ConfirmPage ssr=SsrMode::Async/>
                    <Route path=path!("/keys/oauth/disconnect") view=account::ConfirmPage ssr=SsrMode::Async/>
                    <Route path=path!("/wallets/remove") view=account::ConfirmPage ssr=SsrMode::Async/>
                    <Route path=path!("/wallets/:address/share/revoke") view=account::ConfirmPage ssr=SsrMode::Async/>
                    <Route path=path!("/payments") view=account::PaymentsPage ssr=SsrMode::Async/>
                    <Route path=path!("/authorize") view=account::ConsentPage ssr=SsrMode::Async/>
                    <Route path=path!("/credits") view=research::CreditsView ssr=SsrMode::Async/>
                    <Route path=path!("/wallets/:address/graph") view=research::GraphView ssr=SsrMode::Async/>
                    <Route path=path!("/wallets/:address/scan") view=scan::ScanOfferPage ssr=SsrMode::Async/>
                    <Route path=path!("/scans/:job_id") view=scan::ScanProgressPage ssr=SsrMode::Async/>
                    <Route path=path!("/wallets/:address") view=report::WalletReportPage ssr=SsrMode::Async/>
                    <Route path=path!("/settings") view=settings::SettingsPage ssr=SsrMode::Async/>
                </Routes>
            </main>
            <footer class="site-footer">
                <p>
                    "Ledger: Solana wallet reports for people and agents. "
                    <a href="/.well-known/mcp/server-card.json">"Server card"</a>
                    " · " <a href="/llms.txt">"llms.txt"</a>
                    " · " <a href="/v1/openapi.json">"OpenAPI"</a>
                    <span class="version">" · version " {env!("CARGO_PKG_VERSION")}</span>
                </p>
            </footer>
        </Router>
    }
}
