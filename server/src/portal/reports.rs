//! The people's download of a report: `GET /wallets/{address}/report`
//! with `format`, `method`, `from`, `to` and `exclude_spam` as query
//! parameters, for a signed-in account that can read the wallet (the
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
    let spec = Spec::new(
        vec![wallet.clone()],
        format,
        q.method,
        q.exclude_spam,
        q.from,
        q.to,
    )
    .and_then(|spec| {
        let dust = q.dust_threshold.filter(|_| format == Format::Form8949);
        spec.with_dust_threshold(dust)
    })
    .map_err(IntoResponse::into_response)?;
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
