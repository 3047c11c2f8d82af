//! The security headers of every answer, set in one place: [`guard`], a
//! layer around the whole router, so a page added later, the not-found
//! page and an error page any handler renders carry them without anyone
//! remembering to.
//!
//! - `X-Content-Type-Options: nosniff` on everything: a browser never
//!   guesses a script or a page out of another type.
//! - `Referrer-Policy: same-origin` unless the answer chose its own (the
//!   share pages say `no-referrer`): portal URLs name wallets and OAuth
//!   requests, and no other site learns them. Not `no-referrer` here: under
//!   it a browser sends `Origin: null` on a same-origin POST, and the
//!   wallet sign-in checks `Origin`.
//! - `Strict-Transport-Security: max-age=31536000` when the public URL is
//!   https (a year; no `includeSubDomains`, which would bind every other
//!   host of the operator's domain).
//! - On an HTML answer: a content security policy unless it set its own
//!   (the share pages' allows no inline script at all). Scripts come from
//!   this origin (`/pkg/` for hydration, `/vendor/echarts.min.js`,
//!   `public/*.js`) or carry this response's nonce (the hydration bootstrap
//!   and the resource data Leptos writes inline); `'wasm-unsafe-eval'`
//!   lets the hydration bundle instantiate. Inline styles stay allowed (a
//!   sized chart container; ECharts styles the elements it creates): this
//!   is a script policy. `form-action 'self'`, so no form (nor one an
//!   injection slipped in) sends its fields, the CSRF token among them,
//!   to another site; except on the consent page ([`CONSENT_PATH`]),
//!   whose answer redirects to the client's redirect URI, which a browser
//!   would check against it. Framing is refused on every page
//!   ([`deny_framing`]).
//!
//! The nonce is drawn here for each request (16 bytes from the OS), put in
//! the request's extensions and, for pages a handler renders itself
//! (`portal::render`), in a task-local ([`current_nonce`]); Leptos is told
//! to use it ([`provide_nonce`]) instead of drawing its own, so the header
//! and the page agree.

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, header},
    middleware::Next,
    response::Response,
};
use base64::Engine as _;
use rand::RngCore as _;

use crate::state::AppState;

/// The CSP nonce of one response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CspNonce(Arc<str>);

impl CspNonce {
    fn new() -> Self {
        let mut bytes = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        Self(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(bytes)
                .into(),
        )
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

tokio::task_local! {
    static NONCE: CspNonce;
}

/// The nonce of the request being answered, for a handler that renders a
/// page from a request of its own making (`portal::render`).
pub fn current_nonce() -> Option<CspNonce> {
    NONCE.try_with(Clone::clone).ok()
}

/// Hand Leptos the request's nonce, in the render's context: its
/// hydration scripts and inline resource data then carry the nonce the
/// header names. Called from the render context (`site::backend_context`).
pub fn provide_nonce() {
    let nonce = leptos::prelude::use_context::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<CspNonce>().cloned())
        .or_else(current_nonce);
    if let Some(nonce) = nonce {
        leptos::prelude::provide_context(leptos::nonce::Nonce::from_value(nonce.0));
    }
}

/// A year, in seconds.
const HSTS: &str = "max-age=31536000";
const REFERRER_POLICY: &str = "same-origin";

/// The CSP directive that forbids any page from framing ours.
const FRAME_ANCESTORS: &str = "frame-ancestors 'none'";

/// The OAuth consent page: its form's answer redirects to the client.
pub const CONSENT_PATH: &str = "/authorize";

/// The policy of a portal page answered with `nonce`; forms post only to
/// this origin unless `consent` (the page whose form's answer redirects
/// to an OAuth client).
pub fn page_policy(nonce: &str, consent: bool) -> String {
    let form_action = if consent { "" } else { "form-action 'self'; " };
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
         font-src 'self'; object-src 'none'; base-uri 'none'; {form_action}{FRAME_ANCESTORS}"
    )
}

/// The layer: a nonce for the request, the headers on its answer.
pub async fn guard(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let nonce = CspNonce::new();
    request.extensions_mut().insert(nonce.clone());
    let consent = request.uri().path() == CONSENT_PATH;
    let mut response = NONCE.scope(nonce.clone(), next.run(request)).await;
    protect(
        response.headers_mut(),
        &nonce,
        state.public_url().starts_with("https://"),
        consent,
    );
    response
}

/// Set the headers on an answer (see the module's list).
fn protect(headers: &mut HeaderMap, nonce: &CspNonce, https: bool, consent: bool) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if !headers.contains_key(header::REFERRER_POLICY) {
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static(REFERRER_POLICY),
        );
    }
    if https {
        headers.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static(HSTS),
        );
    }
    let html = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/html"));
    if html {
        if !headers.contains_key(header::CONTENT_SECURITY_POLICY)
            && let Ok(value) = HeaderValue::from_str(&page_policy(nonce.as_str(), consent))
        {
            headers.insert(header::CONTENT_SECURITY_POLICY, value);
        }
        deny_framing(headers);
    }
}

/// Forbid framing (clickjacking of the consent page and the forms):
/// `X-Frame-Options: DENY` for old browsers, and `frame-ancestors 'none'`
/// merged into the page's `Content-Security-Policy` if it has one (a
/// second CSP header would only add a policy, never replace one), or as
/// the whole policy.
pub fn deny_framing(headers: &mut HeaderMap) {
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    let merged = match headers
        .get(header::CONTENT_SECURITY_POLICY)
        .and_then(|v| v.to_str().ok())
    {
        Some(existing) if existing.to_ascii_lowercase().contains("frame-ancestors") => return,
        Some(existing) if !existing.trim().is_empty() => {
            format!(
                "{}; {FRAME_ANCESTORS}",
                existing.trim().trim_end_matches(';')
            )
        }
        _ => FRAME_ANCESTORS.to_owned(),
    };
    if let Ok(value) = HeaderValue::from_str(&merged) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        h
    }

    #[test]
    fn an_html_answer_gets_the_page_policy_with_its_nonce() {
        let nonce = CspNonce::new();
        let mut h = html();
        protect(&mut h, &nonce, false, false);
        let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("form-action 'self'"), "{csp}");
        let script = csp
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with("script-src"))
            .unwrap();
        assert_eq!(
            script,
            format!(
                "script-src 'self' 'nonce-{}' 'wasm-unsafe-eval'",
                nonce.as_str()
            ),
            "only this origin's scripts and the nonce's; never unsafe-inline"
        );
        assert!(csp.contains("frame-ancestors 'none'"));
        assert_eq!(h[header::X_FRAME_OPTIONS], "DENY");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(h[header::REFERRER_POLICY], "same-origin");
        assert!(h.get(header::STRICT_TRANSPORT_SECURITY).is_none(), "http");
    }

    #[test]
    fn an_answer_keeps_its_own_policy_and_referrer_policy() {
        let mut h = html();
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; script-src 'self'"),
        );
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        protect(&mut h, &CspNonce::new(), true, false);
        assert_eq!(
            h[header::CONTENT_SECURITY_POLICY],
            "default-src 'none'; script-src 'self'; frame-ancestors 'none'"
        );
        assert_eq!(h[header::REFERRER_POLICY], "no-referrer");
        assert_eq!(h[header::STRICT_TRANSPORT_SECURITY], "max-age=31536000");
    }

    #[test]
    fn the_consent_page_alone_may_post_off_site() {
        let mut h = html();
        protect(&mut h, &CspNonce::new(), false, true);
        let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(!csp.contains("form-action"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"));
    }

    #[test]
    fn json_gets_no_page_policy_but_the_rest() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        protect(&mut h, &CspNonce::new(), true, false);
        assert!(h.get(header::CONTENT_SECURITY_POLICY).is_none());
        assert!(h.get(header::X_FRAME_OPTIONS).is_none());
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(h[header::STRICT_TRANSPORT_SECURITY], "max-age=31536000");
    }

    #[test]
    fn nonces_are_fresh_and_unpadded_base64url() {
        let (a, b) = (CspNonce::new(), CspNonce::new());
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 22, "16 bytes");
        assert!(
            a.as_str()
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
    }
}
