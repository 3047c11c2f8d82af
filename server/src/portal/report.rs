//! The report view of a watched wallet (`GET /wallets/{address}`) and its
//! share-link forms (`POST /wallets/{address}/share`, `.../share/revoke`).
//! The view renders the share page's report section
//! (`share::html::report_section`) from the same reads, as the wallet's
//! link principal once the account is seen to watch it; the forms check
//! the session's CSRF token before anything else (`form::CheckedForm`)
//! and answer a 303 back to the view, what they did kept in the session's
//! one-time flash (a new link's URL shown once), so a reload never mints
//! a second link. Revoking a link asks first
//! (`GET /wallets/{address}/share/revoke?id=…`). The tax summary's label
//! form (`POST /wallets/{address}/label`) is here too: a refused label shows
//! this view again.

use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use tower_sessions::Session;

use super::{
    Parts,
    form::{CheckedForm, PortalForm},
    pages::{account_page, confirm_page, done},
    render,
    sessions::{Flashed, take_flash},
};
use crate::{
    accounts::{AccountId, LinkReader, Principal, watchlist},
    error::AppError,
    share::{
        self, ChartRange, Denomination,
        html::{Links, report_section},
        report,
    },
    site::share::ViewQuery,
    solana::WalletAddress,
    state::AppState,
};
use app::{
    frame::{Portal, PortalPage, Viewer},
    views::{ConfirmView, ReportView, ShareLinkRow},
};

/// What a render of the view carries besides the report.
#[derive(Default)]
struct Outcome {
    new_link: Option<String>,
    notice: Option<String>,
    error: Option<String>,
    /// The tax choices of the view (the GET's query; defaults otherwise).
    tax: super::tax_view::TaxQuery,
    /// The request's `Accept-Language`, when the answer is a GET's.
    accept_language: Option<axum::http::HeaderMap>,
}

async fn watched(
    state: &AppState,
    account: &AccountId,
    address: &str,
) -> Result<(WalletAddress, String), AppError> {
    let not_found = || AppError::not_found("your account does not watch this wallet");
    let wallet = WalletAddress::parse(address).map_err(|_| not_found())?;
    let entry = watchlist::list_wallets(state.store(), account)
        .await?
        .into_iter()
        .find(|w| w.address == wallet)
        .ok_or_else(not_found)?;
    Ok((wallet, entry.label))
}

async fn view_response(
    state: &AppState,
    viewer: Viewer,
    account: &AccountId,
    address: &str,
    query: ViewQuery,
    status: StatusCode,
    outcome: Outcome,
) -> Response {
    let (wallet, label) = match watched(state, account, address).await {
        Ok(found) => found,
        Err(err) => return crate::site::share::problem(&err),
    };
    let query = match query.resolve(
        wallet.clone(),
        ChartRange::default(),
        Denomination::default(),
    ) {
        Ok(q) => q,
        Err(err) => return crate::site::share::problem(&err),
    };
    // The account watches the wallet, so it reads it; as the wallet's link
    // principal the view can read nothing else.
    let reader = Principal::Link(LinkReader {
        wallet: wallet.clone(),
    });
    let headers = outcome.accept_language.clone().unwrap_or_default();
    let locale = match super::settings::locale_for(state, Some(account), &headers).await {
        Ok(locale) => locale,
        Err(err) => return err.into_response(),
    };
    let caches = state.services().caches();
    let kept = (&*caches.pages, &*caches.positions);
    let (section, scanned) = match report::build(&state.reads(), kept, &reader, query).await {
        Ok(built) => {
            let charts = share::charts::charts(&built);
            let base = format!("/wallets/{wallet}");
            (
                report_section(
                    &built,
                    &charts,
                    &Links {
                        base: &base,
                        locale,
                    },
                ),
                true,
            )
        }
        // Nothing scanned yet: say so in words, and offer no downloads.
        Err(err) if err.code() == crate::error::Code::NotFound => (
            format!(
                "<p class=\"empty\" id=\"not-scanned\">This wallet has not been scanned \
                 yet, so there is nothing to report. Scan it: its value, positions and \
                 transactions show here once the scan has finished, with downloads of the \
                 report.</p><p><a class=\"button primary\" id=\"scan-now\" rel=\"external\" \
                 href=\"/wallets/{wallet}/scan\">Scan now</a> (you see its price first)</p>"
            ),
            false,
        ),
        Err(err) => return crate::site::share::problem(&err),
    };
    let sharing = state.sharing();
    let links = match share::list_for(&sharing, account).await {
        Ok(listed) => listed,
        Err(err) => return err.into_response(),
    };
    let limit = links.limit;
    let rows = links
        .snapshots
        .into_iter()
        .filter(|l| l.address == wallet.as_str())
        .map(|l| ShareLinkRow {
            id: l.id,
            hint: l.hint,
            range: l.range,
            denominate: l.denominate,
            created: l.created_at,
            expires: l.expires_at,
        })
        .collect();
    let tax = if scanned {
        match super::tax_view::tax_view(state, account, &wallet, &outcome.tax, locale).await {
            Ok(view) => Some(Box::new(view)),
            Err(err) if err.code() == crate::error::Code::Internal => {
                return err.into_response();
            }
            // Rates unavailable and the like: said in words, the rest of
            // the page still shown.
            Err(err) => Some(Box::new(app::views::TaxView {
                error: Some(err.message().to_owned()),
                ..app::views::TaxView::default()
            })),
        }
    } else {
        None
    };
    let portal = Portal {
        viewer,
        page: PortalPage::Report(ReportView {
            address: wallet.to_string(),
            label,
            section_html: section,
            new_link: outcome.new_link,
            notice: outcome.notice,
            error: outcome.error,
            links: rows,
            limit,
            scanned,
            tax,
        }),
    };
    let mut response = render(state, &format!("/wallets/{wallet}"), status, portal).await;
    crate::site::share::protect_without_csp(response.headers_mut());
    response
}

/// The view again, answered `status`, with `message` as its error and the
/// tax summary's choices `tax` (a refused label form).
pub(super) async fn refused_view(
    state: &AppState,
    viewer: Viewer,
    account: &AccountId,
    address: &str,
    tax: super::tax_view::TaxQuery,
    status: StatusCode,
    message: String,
) -> Response {
    let outcome = Outcome {
        error: Some(message),
        tax,
        ..Outcome::default()
    };
    view_response(
        state,
        viewer,
        account,
        address,
        ViewQuery::default(),
        status,
        outcome,
    )
    .await
}

/// The view's query: the report's view, and the tax summary's choices.
#[derive(Deserialize)]
pub struct PageQuery {
    #[serde(flatten)]
    view: ViewQuery,
    #[serde(flatten)]
    tax: super::tax_view::TaxQuery,
}

/// `GET /wallets/{address}`.
pub async fn page(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
    headers: axum::http::HeaderMap,
    Path(address): Path<String>,
    Query(PageQuery { view: query, tax }): Query<PageQuery>,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let mut outcome = Outcome {
        tax,
        accept_language: Some(headers),
        ..Outcome::default()
    };
    match take_flash(
        &session,
        &account,
        state.now_ms(),
        &format!("/wallets/{address}"),
    )
    .await
    {
        Ok(Some(Flashed::NewLink { url, notice })) => {
            outcome.new_link = Some(url);
            outcome.notice = Some(notice);
        }
        Ok(Some(Flashed::Notice(notice))) => outcome.notice = Some(notice),
        Ok(_) => {}
        Err(err) => return err.into_response(),
    }
    view_response(
        &state,
        viewer,
        &account,
        &address,
        query,
        StatusCode::OK,
        outcome,
    )
    .await
}

#[derive(Deserialize)]
pub struct ShareForm {
    #[serde(default)]
    range: String,
    #[serde(default)]
    denominate: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for ShareForm {
    fn page(address: Option<&str>) -> Result<String, AppError> {
        Ok(format!("/wallets/{}", address.unwrap_or_default()))
    }
}

/// `POST /wallets/{address}/share`: mint a link; 303 to the view, which
/// shows the new link's URL once (from the session's flash).
pub async fn create(
    State(state): State<AppState>,
    Path(address): Path<String>,
    CheckedForm {
        viewer,
        account,
        form,
        session,
    }: CheckedForm<ShareForm>,
) -> Response {
    let parsed = (
        ChartRange::parse(form.range.trim()),
        Denomination::parse(form.denominate.trim()),
    );
    let (Some(range), Some(denominate)) = parsed else {
        let outcome = Outcome {
            error: Some("Pick a range (30d, 90d, 1y, all) and a currency (USD or SOL).".to_owned()),
            ..Outcome::default()
        };
        return view_response(
            &state,
            viewer,
            &account,
            &address,
            ViewQuery::default(),
            StatusCode::BAD_REQUEST,
            outcome,
        )
        .await;
    };
    let wallet = match WalletAddress::parse(&address) {
        Ok(w) => w,
        Err(_) => {
            return crate::site::share::problem(&AppError::not_found(
                "your account does not watch this wallet",
            ));
        }
    };
    let (status, outcome) =
        match share::create_for_account(&state.sharing(), &account, &wallet, range, denominate)
            .await
        {
            Ok(link) => {
                let notice = format!(
                    "Share link created; it expires {}.",
                    crate::values::format::date_time_text(&link.expires_at)
                );
                let page = format!("/wallets/{wallet}");
                return match link.url {
                    Some(url) => {
                        done(
                            &state,
                            &session,
                            &account,
                            &page,
                            Flashed::NewLink { url, notice },
                        )
                        .await
                    }
                    None => done(&state, &session, &account, &page, Flashed::Notice(notice)).await,
                };
            }
            Err(err) if err.code() == crate::error::Code::Internal => return err.into_response(),
            Err(err) => (
                err.code().status(),
                Outcome {
                    error: Some(err.message().to_owned()),
                    ..Outcome::default()
                },
            ),
        };
    view_response(
        &state,
        viewer,
        &account,
        &address,
        ViewQuery::default(),
        status,
        outcome,
    )
    .await
}

#[derive(Deserialize)]
pub struct RevokeForm {
    #[serde(default)]
    id: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for RevokeForm {
    fn page(address: Option<&str>) -> Result<String, AppError> {
        Ok(format!("/wallets/{}", address.unwrap_or_default()))
    }
}

#[derive(Deserialize)]
pub struct LinkQuery {
    #[serde(default)]
    id: String,
}

/// `GET /wallets/{address}/share/revoke?id=…`: ask before revoking,
/// naming the link.
pub async fn confirm_revoke(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
    Path(address): Path<String>,
    Query(query): Query<LinkQuery>,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let (wallet, _) = match watched(&state, &account, &address).await {
        Ok(found) => found,
        Err(err) => return crate::site::share::problem(&err),
    };
    let links = match share::list_for(&state.sharing(), &account).await {
        Ok(listed) => listed.snapshots,
        Err(err) => return err.into_response(),
    };
    let Some(link) = links
        .into_iter()
        .find(|l| l.id == query.id.trim() && l.address == wallet.as_str())
    else {
        let outcome = Outcome {
            error: Some(
                "No live share link of yours has that id; it may have been revoked already."
                    .to_owned(),
            ),
            ..Outcome::default()
        };
        return view_response(
            &state,
            viewer,
            &account,
            &address,
            ViewQuery::default(),
            StatusCode::NOT_FOUND,
            outcome,
        )
        .await;
    };
    let confirm = ConfirmView {
        title: "Ledger: revoke a share link".to_owned(),
        question: format!(
            "Revoke share link /s/{}… ({}, {}, created {})?",
            link.hint,
            link.range,
            link.denominate.to_uppercase(),
            crate::values::format::date_time_text(&link.created_at)
        ),
        consequence: "Anyone opening it sees that it was revoked; the report is no longer shown there. This cannot be undone.".to_owned(),
        action: format!("/wallets/{wallet}/share/revoke"),
        fields: vec![("id".to_owned(), link.id.clone())],
        button: format!("Revoke link {}…", link.hint),
        cancel: format!("/wallets/{wallet}#share-links"),
    };
    confirm_page(
        &state,
        viewer,
        &format!("/wallets/{wallet}/share/revoke"),
        confirm,
    )
    .await
}

/// `POST /wallets/{address}/share/revoke`: revoke one of the account's
/// links, then back to the view.
pub async fn revoke(
    State(state): State<AppState>,
    Path(address): Path<String>,
    CheckedForm {
        viewer,
        account,
        form,
        session,
    }: CheckedForm<RevokeForm>,
) -> Response {
    let (wallet, _) = match watched(&state, &account, &address).await {
        Ok(found) => found,
        Err(err) => return crate::site::share::problem(&err),
    };
    match share::revoke_by_id(&state.sharing(), &account, &wallet, form.id.trim()).await {
        Ok(_) => {
            let notice = "Share link revoked: it no longer shows the wallet.".to_owned();
            let page = format!("/wallets/{wallet}");
            done(&state, &session, &account, &page, Flashed::Notice(notice)).await
        }
        Err(err) if err.code() == crate::error::Code::Internal => err.into_response(),
        Err(err) => {
            let outcome = Outcome {
                error: Some(err.message().to_owned()),
                ..Outcome::default()
            };
            view_response(
                &state,
                viewer,
                &account,
                &address,
                ViewQuery::default(),
                err.code().status(),
                outcome,
            )
            .await
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_report_paths_are_left_out_of_the_leptos_route_list() {
        assert!(app::ACCOUNT_PATHS.contains(&"/wallets/{address}"));
    }
}

/// The label form of an unlabelled counterparty.
#[derive(Debug, Deserialize)]
pub struct LabelForm {
    #[serde(default)]
    address: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    category: String,
    /// The view's query to go back to.
    #[serde(default)]
    back: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for LabelForm {
    fn page(address: Option<&str>) -> Result<String, AppError> {
        Ok(format!("/wallets/{}", address.unwrap_or_default()))
    }
}

/// `POST /wallets/{address}/label`: label a counterparty of the tax
/// summary's unlabelled transfers (`super::tax_view`), then back to the
/// view with the same choices (`#tax`), whose next read sees the label.
pub async fn label(
    State(state): State<AppState>,
    Path(address): Path<String>,
    CheckedForm {
        viewer,
        account,
        form,
        session,
    }: CheckedForm<LabelForm>,
) -> Response {
    let Ok(wallet) = WalletAddress::parse(&address) else {
        return AppError::not_found("your account does not watch this wallet").into_response();
    };
    // Only the view's own choices go back into the URL.
    let back: super::tax_view::TaxQuery =
        serde_urlencoded::from_str(&form.back).unwrap_or_default();
    let query = back.query();
    let page = if query.is_empty() {
        format!("/wallets/{wallet}")
    } else {
        format!("/wallets/{wallet}?{query}")
    };
    // A refusal: the view again (400) with the reason, nothing labelled.
    let refuse = |message: String| {
        refused_view(
            &state,
            viewer.clone(),
            &account,
            &address,
            serde_urlencoded::from_str(&form.back).unwrap_or_default(),
            axum::http::StatusCode::BAD_REQUEST,
            format!("Not labelled: {message}"),
        )
    };
    let counterparty = match WalletAddress::parse(form.address.trim()) {
        Ok(a) => a,
        Err(e) => return refuse(format!("address: {e}")).await,
    };
    let category = match crate::accounts::labels::AddressCategory::parse(form.category.trim()) {
        Ok(c) => c,
        Err(e) => return refuse(e.to_string()).await,
    };
    if form.label.trim().is_empty() {
        return refuse("give the address a name (e.g. my Kraken account).".to_owned()).await;
    }
    match crate::accounts::labels::set_address_label(
        state.store(),
        state.now_ms(),
        &account,
        counterparty.clone(),
        &form.label,
        category,
        state.config().quota.labels_per_account,
    )
    .await
    {
        Ok(()) => {
            let notice = format!(
                "Labelled {} as {} ({}): the tax summary now reads it so.",
                crate::values::format::short_address(counterparty.as_str()),
                form.label.trim(),
                category.as_str()
            );
            // The flash is kept for the view's path; the query rides along.
            let flashed = done(
                &state,
                &session,
                &account,
                &format!("/wallets/{wallet}"),
                Flashed::Notice(notice),
            )
            .await;
            if flashed.status().is_redirection() {
                axum::response::Redirect::to(&format!("{page}#tax")).into_response()
            } else {
                flashed
            }
        }
        Err(err @ crate::accounts::AccountsError::Invalid { .. }) => refuse(err.to_string()).await,
        Err(err) => AppError::from(err).into_response(),
    }
}
