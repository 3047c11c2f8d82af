//! The people's download of a report: `GET /wallets/{address}/report`
//! with `format`, `method`, `from`, `to`, `exclude_spam`, and the report
//! view's tax choices `jurisdiction`, `currency` and `tax_year` as query
//! parameters (the json format carries them as its tax section, with the
//! account's settings filling what is left out, as `get_report` does; the
//! other formats take the tax year's first and last days as their dates
//! when no `from`/`to` is given), for a signed-in account that can read the wallet (the
//! access module decides: it watches it, or payments are off). The same
//! domain function renders it as for `GET /v1/reports`, and the response
//! carries the same headers; the cookie authenticates only this route,
//! never `/v1`. A GET that changes nothing needs no CSRF token.

use axum::{
    extract::{Path, RawQuery, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use tower_sessions::Session;

use super::sessions;
use crate::{
    basis::Method,
    error::AppError,
    reports::{self, Format, Spec},
    solana::WalletAddress,
    state::AppState,
    values::{TimeBound, time::optional_bound},
};

/// The download's query: the report arguments a person picks.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DownloadQuery {
    #[serde(default)]
    format: Option<String>,
    #[serde(default, deserialize_with = "crate::params::optional_method")]
    method: Option<Method>,
    #[serde(default, deserialize_with = "optional_bound")]
    from: Option<TimeBound>,
    #[serde(default, deserialize_with = "optional_bound")]
    to: Option<TimeBound>,
    #[serde(default)]
    exclude_spam: Option<bool>,
    /// Form 8949's dust threshold (USD); the download form sends it with
    /// every format, so it is used for the 8949 only.
    #[serde(default)]
    dust_threshold: Option<crate::params::MinUsd>,
    #[serde(default, deserialize_with = "crate::params::optional_jurisdiction")]
    jurisdiction: Option<crate::basis::jurisdiction::Jurisdiction>,
    #[serde(default, deserialize_with = "crate::params::optional_currency")]
    currency: Option<crate::values::fx::Currency>,
    #[serde(default, deserialize_with = "crate::params::optional_tax_year")]
    tax_year: Option<crate::params::TaxYearArg>,
}

/// The first and last days of tax year `year` of `j` as date bounds
/// (whole UTC days, as every `from`/`to` of these formats is read; Form
/// 8949 checks its one calendar year in UTC too).
fn year_bounds(
    j: crate::basis::jurisdiction::Jurisdiction,
    year: crate::basis::jurisdiction::TaxYear,
) -> Option<(TimeBound, TimeBound)> {
    let last = j.last_day(year)?;
    let first = if year.split {
        // The day after the last day of the year before.
        j.last_day(crate::basis::jurisdiction::TaxYear::split(year.start - 1))?
            .succ_opt()?
    } else {
        chrono::NaiveDate::from_ymd_opt(year.start, 1, 1)?
    };
    let day = |d: chrono::NaiveDate| {
        TimeBound::parse(&d.format("%Y-%m-%d").to_string())
            .ok()
            .flatten()
    };
    Some((day(first)?, day(last)?))
}

/// `GET /wallets/{address}/report`.
pub async fn download(
    State(state): State<AppState>,
    session: Session,
    Path(address): Path<String>,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
    RawQuery(raw): RawQuery,
) -> Response {
    match answer(
        &state,
        &session,
        &uri,
        &address,
        raw.as_deref().unwrap_or(""),
    )
    .await
    {
        Ok(response) => response,
        Err(response) => response,
    }
}

fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    (status, message.into()).into_response()
}

async fn answer(
    state: &AppState,
    session: &Session,
    uri: &axum::http::Uri,
    address: &str,
    query: &str,
) -> Result<Response, Response> {
    let signed = sessions::signed_in(session)
        .await
        .map_err(IntoResponse::into_response)?
        .ok_or_else(|| super::pages::sign_in_first(uri))?;
    let account = signed.account().map_err(IntoResponse::into_response)?;
    let wallet = WalletAddress::parse(address)
        .map_err(|why| refuse(StatusCode::BAD_REQUEST, format!("address: {why}")))?;
    let q: DownloadQuery = serde_urlencoded::from_str(query)
        .map_err(|why| refuse(StatusCode::BAD_REQUEST, format!("query: {why}")))?;
    let format = match q.format.as_deref() {
        None | Some("") => Format::Pdf,
        Some(text) => Format::parse(text).ok_or_else(|| {
            refuse(
                StatusCode::BAD_REQUEST,
                format!(
                    "format: {text:?} is none of {}",
                    Format::ALL.map(Format::as_str).join(", ")
                ),
            )
        })?,
    };
    let settings = crate::analytics::tax::settings_of(state.store(), Some(&account))
        .await
        .map_err(IntoResponse::into_response)?;
    let (mut from, mut to) = (q.from, q.to);
    // json and pdf carry the tax section (`get_report`'s rule); the
    // other formats have none.
    let tax = if matches!(format, Format::Json | Format::Pdf) {
        crate::analytics::tax::TaxChoice::from_args(
            q.jurisdiction,
            q.currency,
            q.tax_year,
            q.method,
            settings,
        )
        .map_err(IntoResponse::into_response)?
    } else {
        None
    };
    // Every format but json reads a range: the tax year gives its dates
    // when none are given.
    if format != Format::Json
        && let Some(year) = q.tax_year
        && from.is_none()
        && to.is_none()
    {
        let j = q
            .jurisdiction
            .or(settings.map(|s| s.jurisdiction))
            .unwrap_or_default();
        let year = year
            .for_jurisdiction(j)
            .map_err(|why| refuse(StatusCode::BAD_REQUEST, why))?;
        if let Some((start, end)) = year_bounds(j, year) {
            from = Some(start);
            to = Some(end);
        }
    }
    let spec = Spec::new(
        vec![wallet.clone()],
        format,
        q.method,
        q.exclude_spam,
        from,
        to,
    )
    .and_then(|spec| {
        let dust = q.dust_threshold.filter(|_| format == Format::Form8949);
        spec.with_dust_threshold(dust)
    })
    .map_err(IntoResponse::into_response)?
    .with_tax(tax, Some(account.clone()));
    let reads = state.reads();
    let allowed = reads
        .paywall
        .access()
        .account_wallet_read(&account, &wallet)
        .await
        .map_err(IntoResponse::into_response)?;
    if !allowed {
        // Whether the wallet exists elsewhere is not this account's business.
        return Err(AppError::not_found(
            "this account does not watch that wallet: add it on the Wallets page first",
        )
        .into_response());
    }
    let file = reports::render(&reads, &spec)
        .await
        .map_err(IntoResponse::into_response)?;
    crate::v1::reports::file_response(file).map_err(IntoResponse::into_response)
}
