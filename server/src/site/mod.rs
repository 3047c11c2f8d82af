//! The portal and static assets. Assets (`public/`, the stylesheet and, once
//! built, the wasm bundle in `public/pkg/`) are embedded in the binary, so it
//! runs from any working directory with no files beside it. A configured
//! `site_root` (`LEDGER_SITE_ROOT`) is searched first, for operators who
//! want to serve a newer bundle or their own images without rebuilding.

use std::{path::PathBuf, sync::Arc};

use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use leptos::prelude::{AnyView, IntoAny, LeptosOptions, provide_context};
use rust_embed::Embed;

pub mod headers;
pub mod share;

use crate::state::AppState;

#[derive(Embed)]
#[folder = "$CARGO_MANIFEST_DIR/../public"]
struct Public;

#[derive(Embed)]
#[folder = "$CARGO_MANIFEST_DIR/../style"]
#[prefix = "style/"]
struct Style;

/// The wasm bundle's name: `pkg/ledger.js` and `pkg/ledger_bg.wasm`.
pub const OUTPUT_NAME: &str = "ledger";

/// Whether a wasm bundle is available (embedded or under `site_root`), so
/// pages should carry the hydration scripts.
pub fn hydration_available(site_root: Option<&PathBuf>) -> bool {
    let js = format!("pkg/{OUTPUT_NAME}.js");
    let wasm = format!("pkg/{OUTPUT_NAME}_bg.wasm");
    let on_disk =
        site_root.is_some_and(|root| root.join(&js).is_file() && root.join(&wasm).is_file());
    on_disk || (Public::get(&js).is_some() && Public::get(&wasm).is_some())
}

/// The Leptos options for rendering (no files are read through them).
pub fn leptos_options(site_addr: std::net::SocketAddr) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(OUTPUT_NAME)
        .site_pkg_dir("pkg")
        .site_root("public")
        .site_addr(site_addr)
        .build()
}

/// Look an asset up: `site_root` first, then the embedded copies.
async fn asset(site_root: Option<&PathBuf>, path: &str) -> Option<(Vec<u8>, String)> {
    if path.is_empty() || path.split('/').any(|seg| seg == ".." || seg.is_empty()) {
        return None;
    }
    let mime = || {
        mime_guess::from_path(path)
            .first_or_octet_stream()
            .essence_str()
            .to_owned()
    };
    if let Some(root) = site_root {
        let file = root.join(path);
        if let Ok(bytes) = tokio::fs::read(&file).await {
            return Some((bytes, mime()));
        }
    }
    let embedded = Public::get(path).or_else(|| Style::get(path))?;
    Some((
        embedded.data.into_owned(),
        embedded.metadata.mimetype().to_owned(),
    ))
}

/// The fallback for every request no route claimed: under a JSON surface
/// (`/v1`, `/mcp`, `/.well-known`, the OAuth paths) our JSON 404, whatever
/// the path holds (a raw `/v1/jobs/../..` included); else a static asset,
/// else the portal's not-found page. HEAD is answered as GET is, headers
/// and status alike (the router drops the body): link checkers and
/// monitors ask HEAD, and a 404 for an asset that exists, or a not-found
/// page without its HTML headers, would mislead them.
pub async fn fallback(State(state): State<AppState>, request: Request) -> Response {
    if let Some(not_found) = crate::http::unrouted(request.uri().path()) {
        return not_found;
    }
    let path = request.uri().path().trim_start_matches('/').to_owned();
    let read = matches!(
        *request.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    );
    if read && let Some((bytes, mime)) = asset(state.config().site_root.as_ref(), &path).await {
        let mut response = Response::new(Body::from(bytes));
        if let Ok(value) = HeaderValue::from_str(&mime) {
            response.headers_mut().insert(header::CONTENT_TYPE, value);
        }
        let cache = if path.starts_with("pkg/") {
            "no-cache"
        } else {
            "public, max-age=3600"
        };
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
        return response;
    }
    if !read {
        return StatusCode::NOT_FOUND.into_response();
    }
    let handler = leptos_axum::render_app_to_stream_with_context(
        backend_context(state.clone()),
        shell_fn(&state),
    );
    handler(request).await.into_response()
}

/// The shell render function for Leptos.
pub fn shell_fn(state: &AppState) -> impl Fn() -> AnyView + Clone + Send + Sync + 'static {
    let options = state.leptos().clone();
    let hydrate = state.hydrate();
    move || app::shell(options.clone(), hydrate).into_any()
}

/// Provides the backend to the portal's renders and server functions, and
/// the request's CSP nonce to the render (`headers::provide_nonce`).
pub fn backend_context(state: AppState) -> impl Fn() + Clone + Send + Sync + 'static {
    let handle = app::backend::BackendHandle(Arc::new(PortalBackend(state)));
    move || {
        provide_context(handle.clone());
        headers::provide_nonce();
    }
}

struct PortalBackend(AppState);

impl app::backend::Backend for PortalBackend {
    fn site_info(&self) -> app::SiteInfo {
        app::SiteInfo {
            public_url: self.0.public_url().to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            sample_report: self.0.config().sample.enabled,
        }
    }

    fn tools(&self) -> Vec<app::ToolSummary> {
        crate::mcp::tools::registry().summaries(self.0.config())
    }
}
