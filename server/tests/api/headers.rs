//! The security headers of every page, one test per header, each over the
//! same four pages: a Leptos page (`/`), a page a handler renders itself
//! (`/signin`), the not-found page and a live share page (`/s/{token}`).
//! `site::headers` sets them in one layer; these prove no kind of page
//! escapes it, asked with GET or with HEAD.

use reqwest::{StatusCode, header::HeaderMap};
use serde_json::json;

use crate::{helpers::TestApp, scans::WALLET};

/// The server with a scanned wallet and a live share link of it, public
/// at `public_url`, and the four pages' (path, status, headers).
async fn pages(public_url: &'static str) -> (TestApp, Vec<(String, HeaderMap)>) {
    let (app, _clock, _stand_in, _prices) = crate::share::scanned(move |c| {
        c.public_url = Some(public_url.to_owned());
    })
    .await;
    let (_, token) = crate::share::owner(&app).await;
    let link = crate::share::create(&app, &token, json!({"address": WALLET})).await;
    let share = format!("/s/{}", link["token"].as_str().unwrap());
    let mut out = Vec::new();
    for (path, status) in [
        ("/".to_owned(), StatusCode::OK),
        ("/signin".to_owned(), StatusCode::OK),
        ("/no/such/page".to_owned(), StatusCode::NOT_FOUND),
        (share, StatusCode::OK),
    ] {
        let response = app.client.get(app.url(&path)).send().await.unwrap();
        assert_eq!(response.status(), status, "{path}");
        let content_type = response.headers()["content-type"].to_str().unwrap();
        assert!(
            content_type.starts_with("text/html"),
            "{path}: {content_type}"
        );
        out.push((path, response.headers().clone()));
    }
    (app, out)
}

fn one<'h>(headers: &'h HeaderMap, name: &str, path: &str) -> &'h str {
    let values: Vec<_> = headers.get_all(name).iter().collect();
    assert_eq!(values.len(), 1, "one {name} on {path}");
    values[0].to_str().unwrap()
}

#[tokio::test]
async fn every_page_says_nosniff() {
    let (app, pages) = pages("https://ledger.example").await;
    for (path, headers) in &pages {
        assert_eq!(one(headers, "x-content-type-options", path), "nosniff");
    }
    app.stop().await;
}

/// Portal pages keep their URLs (wallets, OAuth requests) to this origin;
/// a share page, whose URL is its credential, sends none at all.
#[tokio::test]
async fn every_page_sets_a_referrer_policy() {
    let (app, pages) = pages("https://ledger.example").await;
    for (path, headers) in &pages {
        let expected = if path.starts_with("/s/") {
            "no-referrer"
        } else {
            "same-origin"
        };
        assert_eq!(one(headers, "referrer-policy", path), expected);
    }
    app.stop().await;
}

#[tokio::test]
async fn every_page_is_strict_transport_when_the_public_url_is_https() {
    let (app, pages) = pages("https://ledger.example").await;
    for (path, headers) in &pages {
        assert_eq!(
            one(headers, "strict-transport-security", path),
            "max-age=31536000"
        );
    }
    app.stop().await;
}

/// Over plain http the header would be ignored by browsers and wrong to
/// promise: none is sent.
#[tokio::test]
async fn no_page_is_strict_transport_when_the_public_url_is_http() {
    let (app, pages) = pages("http://127.0.0.1").await;
    for (path, headers) in &pages {
        assert!(headers.get("strict-transport-security").is_none(), "{path}");
    }
    app.stop().await;
}

/// A script policy on every page: portal pages admit this origin's
/// scripts and the response's nonce, never inline script without it; the
/// share page keeps its own stricter policy. None may be framed.
#[tokio::test]
async fn every_page_has_a_script_policy_and_refuses_framing() {
    let (app, pages) = pages("https://ledger.example").await;
    let mut nonces = Vec::new();
    for (path, headers) in &pages {
        let csp = one(headers, "content-security-policy", path);
        let directive = |name: &str| {
            csp.split(';')
                .map(str::trim)
                .find(|d| d.split_whitespace().next() == Some(name))
                .unwrap_or_else(|| panic!("{name} on {path}: {csp}"))
                .to_owned()
        };
        assert_eq!(
            directive("frame-ancestors"),
            "frame-ancestors 'none'",
            "{path}"
        );
        assert_eq!(one(headers, "x-frame-options", path), "DENY");
        let script = directive("script-src");
        assert!(!script.contains("'unsafe-inline'"), "{path}: {script}");
        assert!(!script.contains("'unsafe-eval'"), "{path}: {script}");
        if path.starts_with("/s/") {
            assert_eq!(script, "script-src 'self'", "{path}");
        } else {
            let nonce = script
                .split_whitespace()
                .find_map(|s| s.strip_prefix("'nonce-"))
                .and_then(|s| s.strip_suffix('\''))
                .unwrap_or_else(|| panic!("a nonce on {path}: {script}"))
                .to_owned();
            assert_eq!(
                script,
                format!("script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'"),
                "{path}"
            );
            assert_eq!(directive("object-src"), "object-src 'none'", "{path}");
            assert_eq!(directive("base-uri"), "base-uri 'none'", "{path}");
            nonces.push(nonce);
        }
    }
    let mut distinct = nonces.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), nonces.len(), "a fresh nonce per response");
    app.stop().await;
}

/// With a wasm bundle to hydrate, every inline script a page carries (the
/// hydration bootstrap, Leptos's resource data) has the nonce its header
/// names, on a Leptos page, a handler-rendered page and the 404 page; a
/// script with another nonce or none would be blocked and the page would
/// never hydrate.
#[tokio::test]
async fn every_inline_script_carries_the_nonce_its_policy_names() {
    let site = tempfile::tempdir().unwrap();
    let pkg = site.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("ledger.js"), "export default function(){}").unwrap();
    std::fs::write(pkg.join("ledger_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let root = site.path().to_owned();
    let app = crate::helpers::spawn_with(crate::helpers::Options {
        configure: Box::new(move |c| {
            crate::helpers::relaxed_limits(c);
            c.site_root = Some(root);
        }),
        ..Default::default()
    })
    .await;
    for path in ["/", "/signin", "/no/such/page"] {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        let csp = response.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_owned();
        let nonce = csp
            .split_whitespace()
            .find_map(|s| s.strip_prefix("'nonce-"))
            .and_then(|s| s.strip_suffix('\''))
            .unwrap_or_else(|| panic!("{path}: {csp}"))
            .to_owned();
        let html = response.text().await.unwrap();
        assert!(html.contains("/pkg/ledger.js"), "{path} hydrates");
        let mut inline = 0;
        for tag in html.split("<script").skip(1) {
            let open = &tag[..tag.find('>').unwrap()];
            if open.contains(" src=") || open.contains("application/json") {
                continue;
            }
            inline += 1;
            assert!(
                open.contains(&format!("nonce=\"{nonce}\"")),
                "{path}: <script{open}> lacks the nonce {nonce}"
            );
        }
        assert!(inline >= 1, "{path}: the hydration bootstrap is inline");
    }
    app.stop().await;
}

/// HEAD answers what GET does, without the body: an embedded asset is 200
/// with its type (it was 404), and the not-found page is HTML with its
/// security headers (it was a bare 404 with neither type nor policy).
#[tokio::test]
async fn head_answers_as_get_does() {
    let app = crate::helpers::spawn_app().await;
    for path in ["/favicon.svg", "/style/ledger.css", "/no/such/page", "/"] {
        let get = app.client.get(app.url(path)).send().await.unwrap();
        let head = app.client.head(app.url(path)).send().await.unwrap();
        assert_eq!(head.status(), get.status(), "{path}");
        for name in ["content-type", "x-content-type-options", "referrer-policy"] {
            assert_eq!(
                head.headers().get(name),
                get.headers().get(name),
                "{name} on {path}"
            );
        }
        for name in ["content-security-policy", "x-frame-options"] {
            assert_eq!(
                head.headers().contains_key(name),
                get.headers().contains_key(name),
                "{name} on {path}"
            );
        }
        assert!(head.bytes().await.unwrap().is_empty(), "{path}");
    }
    app.stop().await;
}
