//! `GET /v1/reports`, the REST twin of `get_report`, and the file response
//! it shares with the portal's download route: the report's bytes with the
//! format's `Content-Type`, a `Content-Disposition` naming the file, and
//! the settlement header when the call settled a payment.

use axum::{
    extract::{RawQuery, State},
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};

use serde_json::{Value, json};

use super::{ErrorBody, query_args};
use crate::{
    error::AppError,
    http::Caller,
    reports::{self, GetReportArgs, ReportFile},
    routes,
    state::AppState,
};

/// A report over up to 20 scanned wallets: the REST twin of `get_report`.
#[utoipa::path(
    get,
    path = routes::REPORTS.path,
    tag = "ledger",
    responses(
        (status = 200, description = "The report: application/json (the report object), text/csv (csv, positions_csv, 8949, koinly, cointracker) or application/pdf, as an attachment"),
        (status = 400, description = "Bad parameter (more than 20 wallets, an unknown format, from after to)", body = ErrorBody),
        (status = 402, description = "Payment required for the first wallet nothing covers (x402 challenge)", body = ErrorBody),
        (status = 404, description = "A wallet has never been scanned", body = ErrorBody),
    ),
)]
pub async fn report(
    State(state): State<AppState>,
    Caller(principal, presented): Caller,
    RawQuery(raw): RawQuery,
) -> Result<Response, AppError> {
    let args: GetReportArgs = query_args("get_report", &[], raw)?;
    let file = reports::get_report(&state.reads(), &principal, args, &presented).await?;
    file_response(file)
}

/// What the registry cannot say of `GET /v1/reports`: its 200 is the
/// report object as JSON (not the tool's linked or CSV descriptions) or a
/// file of the format asked for.
pub(super) fn document(doc: &mut Value) {
    let Some(ok) = doc["paths"][routes::REPORTS.path]["get"]["responses"]
        .get_mut("200")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let report = ok["content"]["application/json"]["schema"]["anyOf"][0].clone();
    ok.insert(
        "content".to_owned(),
        json!({
            "application/json": {"schema": report},
            "text/csv": {"schema": {"type": "string"}},
            "application/pdf": {"schema": {"type": "string", "format": "binary"}},
        }),
    );
}

/// The download of a rendered report.
pub fn file_response(file: ReportFile) -> Result<Response, AppError> {
    let mime = file.format.mime();
    let disposition = format!("attachment; filename=\"{}\"", file.filename);
    let payment = file.payment.clone();
    let bytes = file.into_bytes()?;
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(block) = payment
        && let Ok(value) = HeaderValue::from_str(&block.response_header())
    {
        headers.insert("x-payment-response", value.clone());
        headers.insert("payment-response", value);
    }
    Ok(response)
}
