//! The share pages' HTTP side: `/s/{token}` (the report page),
//! `/s/{token}/report.json` (its reads, as JSON) and `/s/{token}/card.png`
//! (the preview card). Each opens the link first (`share::open`, against
//! the clock): an unknown, revoked or expired link is a 404 that says which
//! in words, on all three. A live link reads as `Principal::Link`, which
//! the access module lets read that one wallet and nothing else.
//!
//! Every answer carries `X-Robots-Tag: noindex`, `Cache-Control: no-store`
//! (a revoked link must stop showing at once), `Referrer-Policy:
//! no-referrer` (the token is in the URL) and a CSP allowing this origin's
//! scripts and styles only.
//!
//! Each read is held to the anonymous budget of its client address
//! (`rate_limit.anon_rps`, the one `/mcp` and `/v1` anonymous callers
//! share), weighted by its work ([`CARD_REQUESTS`]): a page reads the
//! wallet's legs and a card draws a PNG, and anyone with the link may ask.
//! Over it is 429 with `Retry-After`, before the link is even looked up.
//! A drawn card is kept a minute per link and view (`Caches::cards`),
//! asked only once the link is checked live.

use axum::{
    body::Body,
    extract::{Path, Query, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Deserialize;

use crate::{
    error::{AppError, Code},
    http::ClientAddr,
    limits::ClientKey,
    share::{
        self, ChartRange, Closed, Denomination, OpenLink,
        html::{self, SharePage},
        report::{self, Report, ReportQuery},
    },
    state::AppState,
    values::rfc3339,
};

/// The share pages' content security policy: scripts, styles and images
/// from this origin only (ECharts draws on a canvas it creates).
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                       connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; \
                       frame-ancestors 'none'";

/// The headers every share answer carries.
pub fn protect(headers: &mut HeaderMap) {
    protect_without_csp(headers);
    headers.insert("content-security-policy", HeaderValue::from_static(CSP));
}

/// [`protect`] but the CSP, for the portal's report view: a Leptos page
/// whose hydration bootstrap is an inline module script, like every other
/// portal page, so it takes the portal's nonce policy (`site::headers`).
pub fn protect_without_csp(headers: &mut HeaderMap) {
    let set = |h: &mut HeaderMap, name: &'static str, value: &'static str| {
        h.insert(name, HeaderValue::from_static(value));
    };
    set(headers, "x-robots-tag", "noindex, nofollow");
    set(headers, "cache-control", "no-store");
    set(headers, "referrer-policy", "no-referrer");
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "x-frame-options", "DENY");
}

fn respond(status: StatusCode, content_type: &'static str, body: impl Into<Body>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    protect(response.headers_mut());
    response
}

const HTML: &str = "text/html; charset=utf-8";

/// What a page and its reads (`report.json`) take from the anonymous
/// budget: one request each, as any anonymous call.
pub const PAGE_REQUESTS: u32 = 1;
/// What a card takes: three requests, for drawing a PNG on top of reading
/// the report (a kept card costs the same: which one is kept is not the
/// caller's to know, nor to exploit).
pub const CARD_REQUESTS: u32 = 3;

/// Take `requests` from the anonymous budget of `client` (none: a request
/// that came over no socket, in-process tests). At most a whole burst, so
/// a small configured burst still lets a card through.
async fn limit(
    state: &AppState,
    client: Option<&ClientKey>,
    requests: u32,
) -> Result<(), AppError> {
    let Some(client) = client else {
        return Ok(());
    };
    let requests = requests.min(state.config().rate_limit.anon_burst());
    state
        .limiter()
        .anonymous(client, requests)
        .await
        .map_err(|err| match err.retry_after() {
            Some(secs) => AppError::rate_limited_because(
                secs,
                "share pages are read within the anonymous rate of each address; a card counts \
                 as three requests",
            ),
            None => err,
        })
}

/// The page's view: range, currency and the ledger page.
#[derive(Debug, Default, Deserialize)]
pub struct ViewQuery {
    #[serde(default)]
    pub range: Option<String>,
    #[serde(default)]
    pub denominate: Option<String>,
    #[serde(default)]
    pub cursor: Option<String>,
}

impl ViewQuery {
    /// The report to read for `wallet`, falling back to the link's view.
    pub fn resolve(
        self,
        wallet: crate::solana::WalletAddress,
        range: ChartRange,
        denominate: Denomination,
    ) -> Result<ReportQuery, AppError> {
        let range = match self.range.as_deref().filter(|r| !r.is_empty()) {
            None => range,
            Some(r) => ChartRange::parse(r)
                .ok_or_else(|| AppError::invalid_params("range must be 30d, 90d, 1y or all"))?,
        };
        let denominate = match self.denominate.as_deref().filter(|d| !d.is_empty()) {
            None => denominate,
            Some(d) => Denomination::parse(d)
                .ok_or_else(|| AppError::invalid_params("denominate must be usd or sol"))?,
        };
        Ok(ReportQuery {
            wallet,
            range,
            denominate,
            cursor: self.cursor.filter(|c| !c.is_empty()),
        })
    }
}

/// A refusal while reading, as a page people read.
pub fn problem(err: &AppError) -> Response {
    let (status, title) = match err.code() {
        Code::InvalidParams => (StatusCode::BAD_REQUEST, "This view cannot be shown"),
        Code::NotFound => (StatusCode::NOT_FOUND, "Nothing to show yet"),
        Code::RateLimited => (StatusCode::TOO_MANY_REQUESTS, "Too many requests"),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "The report could not be read",
        ),
    };
    let words = if status == StatusCode::INTERNAL_SERVER_ERROR {
        "Something went wrong on our side while reading this report. Try again in a moment."
    } else {
        err.message()
    };
    with_retry_after(respond(status, HTML, html::problem_page(title, words)), err)
}

/// `response` with the `Retry-After` of `err`, when it has one.
fn with_retry_after(mut response: Response, err: &AppError) -> Response {
    if let Some(secs) = err.retry_after()
        && let Ok(value) = HeaderValue::from_str(&secs.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

async fn opened(state: &AppState, token: &str) -> Result<Result<OpenLink, Closed>, AppError> {
    share::open(state.store(), state.now_ms(), token).await
}

async fn read(state: &AppState, link: &OpenLink, view: ViewQuery) -> Result<Report, AppError> {
    let query = view.resolve(link.wallet.clone(), link.range, link.denominate)?;
    let caches = state.services().caches();
    report::build(
        &state.reads(),
        (&caches.pages, &caches.positions),
        &link.principal(),
        query,
    )
    .await
}

/// `GET /s/{token}`.
pub async fn page(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    Path(token): Path<String>,
    Query(view): Query<ViewQuery>,
) -> Response {
    if let Err(err) = limit(&state, client.as_ref(), PAGE_REQUESTS).await {
        return problem(&err);
    }
    let link = match opened(&state, &token).await {
        Ok(Ok(link)) => link,
        Ok(Err(closed)) => return respond(StatusCode::NOT_FOUND, HTML, html::closed_page(closed)),
        Err(err) => return problem(&err),
    };
    match read(&state, &link, view).await {
        Ok(report) => {
            let charts = share::charts::charts(&report);
            let body = html::share_page(
                &report,
                &charts,
                &SharePage {
                    public_url: state.public_url(),
                    token: &token,
                    expires_at: &rfc3339(link.expires_at),
                    // No one is signed in here: the visitor's browser alone
                    // says how numbers read.
                    locale: crate::http::browser_locale(&headers),
                },
            );
            let mut response = respond(StatusCode::OK, HTML, body);
            response
                .headers_mut()
                .insert(header::VARY, HeaderValue::from_static("Accept-Language"));
            response
        }
        Err(err) => problem(&err),
    }
}

/// `GET /sample`: the sample report (`crate::sample`), read-only, with
/// the share pages' headers and budget. It reads as a share link of the
/// sample wallet would (`Principal::Link`), the whole history by default
/// (its data is from 2025). 404 when `sample.enabled` is off.
pub async fn sample(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    Query(view): Query<ViewQuery>,
) -> Response {
    if !state.config().sample.enabled {
        return problem(&AppError::not_found(
            "this service shows no sample report; sign in to read your own wallets",
        ));
    }
    if let Err(err) = limit(&state, client.as_ref(), PAGE_REQUESTS).await {
        return problem(&err);
    }
    let result = async {
        let wallet = crate::sample::address()?;
        let link = OpenLink {
            id: "sample".to_owned(),
            wallet,
            range: ChartRange::All,
            denominate: Denomination::Usd,
            expires_at: i64::MAX,
        };
        read(&state, &link, view).await
    }
    .await;
    match result {
        Ok(report) => {
            let charts = share::charts::charts(&report);
            respond(StatusCode::OK, HTML, html::sample_page(&report, &charts))
        }
        Err(err) => problem(&err),
    }
}

/// `GET /s/{token}/report.json`: the page's reads.
pub async fn data(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    Path(token): Path<String>,
    Query(view): Query<ViewQuery>,
) -> Response {
    let result = async {
        limit(&state, client.as_ref(), PAGE_REQUESTS).await?;
        let link = opened(&state, &token).await?.map_err(Closed::error)?;
        read(&state, &link, view).await
    }
    .await;
    let mut response = match result {
        Ok(report) => axum::Json(report).into_response(),
        Err(err) => err.into_response(),
    };
    protect(response.headers_mut());
    response
}

/// `GET /s/{token}/card.png`: drawn, or kept from a draw less than a
/// minute old for the same link and view.
pub async fn card(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    Path(token): Path<String>,
) -> Response {
    const TEXT: &str = "text/plain; charset=utf-8";
    if let Err(err) = limit(&state, client.as_ref(), CARD_REQUESTS).await {
        return with_retry_after(
            respond(
                StatusCode::TOO_MANY_REQUESTS,
                TEXT,
                err.message().to_owned(),
            ),
            &err,
        );
    }
    let link = match opened(&state, &token).await {
        Ok(Ok(link)) => link,
        Ok(Err(closed)) => return respond(StatusCode::NOT_FOUND, TEXT, closed.words()),
        Err(err) => return problem(&err),
    };
    // Asked only now, the link checked live: a kept card never outlives
    // its link's revocation or expiry.
    let cards = &state.services().caches().cards;
    let key = (link.id.clone(), link.range, link.denominate);
    if let Some(png) = cards.get(&key, state.now_ms()) {
        return respond(StatusCode::OK, "image/png", png);
    }
    let report = match read(&state, &link, ViewQuery::default()).await {
        Ok(report) => report,
        Err(err) if err.code() == Code::NotFound => {
            return respond(StatusCode::NOT_FOUND, TEXT, err.message().to_owned());
        }
        Err(err) => return problem(&err),
    };
    // Drawing is CPU work: off the async workers.
    match tokio::task::spawn_blocking(move || share::card::png(&report)).await {
        Ok(Ok(png)) => {
            let png = bytes::Bytes::from(png);
            cards.keep(key, state.now_ms(), png.clone());
            respond(StatusCode::OK, "image/png", png)
        }
        Ok(Err(err)) => problem(&AppError::internal("share card", err)),
        Err(err) => problem(&AppError::internal("share card task", err)),
    }
}
