//! The REST API under `/v1`: thin handlers over the same domain functions
//! the MCP tools call, so a route and its tool answer the same JSON.
//! The OpenAPI document is generated from these handlers by utoipa.

use axum::{
    extract::State,
    http::HeaderMap,
    response::{IntoResponse, Response},
};
use serde_json::Value;
use utoipa::OpenApi;

use axum::{
    body::Bytes,
    extract::{Path, Query},
    http::StatusCode,
};

use crate::{
    auth::{self, PingResult, Principal},
    error::AppError,
    jobs::{self, GetJobArgs, ScanWalletArgs},
    mcp::transport::{rest_error, unauthenticated},
    payments::{self, QuoteWalletArgs},
    state::AppState,
};

/// The REST error body: every refusal on every route.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ErrorBody {
    /// Stable machine-readable code: invalid_params, unauthenticated,
    /// forbidden, not_found, rate_limited, payment_required, …
    code: String,
    /// What went wrong, in words.
    message: String,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Ledger",
        description = "Solana wallet reports. Paid routes answer HTTP 402 with an x402 challenge.",
        license(name = "MIT"),
    ),
    paths(ping, health, quotes, scans, job),
    components(schemas(ErrorBody, PingResult, Principal, HealthBody, QuoteWalletArgs, ScanWalletArgs)),
    tags(
        (name = "meta", description = "Service health and identity"),
        (name = "scans", description = "Quotes and scans"),
    ),
)]
struct ApiDoc;

/// The OpenAPI document, with this deployment's URL as its server.
pub fn openapi_json(public_url: &str) -> Value {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    doc.servers = Some(vec![utoipa::openapi::Server::new(public_url)]);
    serde_json::to_value(doc).unwrap_or(Value::Null)
}

fn principal_of(headers: &HeaderMap) -> Result<Principal, AppError> {
    let authorization = headers
        .get(axum::http::header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or("\u{0}"));
    auth::resolve(authorization)
}

/// Who this credential resolves to (the REST twin of the `ping` tool).
#[utoipa::path(
    get,
    path = "/v1/ping",
    tag = "meta",
    responses(
        (status = 200, description = "The principal", body = PingResult),
        (status = 401, description = "Unknown or revoked bearer", body = ErrorBody),
    ),
)]
pub async fn ping(State(state): State<AppState>, headers: HeaderMap) -> Response {
    match principal_of(&headers) {
        Ok(principal) => axum::Json(auth::ping(&principal)).into_response(),
        Err(err) => unauthenticated(&state, &err),
    }
}

/// Price a scan (or a cached read) of a wallet: the REST twin of `quote_wallet`.
#[utoipa::path(
    post,
    path = "/v1/quotes",
    tag = "scans",
    request_body = QuoteWalletArgs,
    responses(
        (status = 200, description = "The quote and the tier table (see quote_wallet)"),
        (status = 400, description = "Bad body or address", body = ErrorBody),
        (status = 401, description = "Unknown or revoked bearer", body = ErrorBody),
        (status = 503, description = "The Solana RPC endpoint did not answer", body = ErrorBody),
    ),
)]
pub async fn quotes(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(err) = principal_of(&headers) {
        return unauthenticated(&state, &err);
    }
    let args: QuoteWalletArgs = match serde_json::from_slice(&body) {
        Ok(args) => args,
        Err(e) => return rest_error(&AppError::invalid_params(format!("body: {e}"))),
    };
    match payments::quote(&state, args).await {
        Ok(quote) => axum::Json(quote).into_response(),
        Err(err) => rest_error(&err),
    }
}

/// Start the scan a quote priced: the REST twin of `scan_wallet`.
#[utoipa::path(
    post,
    path = "/v1/scans",
    tag = "scans",
    request_body = ScanWalletArgs,
    responses(
        (status = 202, description = "The job, running (see get_job)"),
        (status = 400, description = "Bad body", body = ErrorBody),
        (status = 402, description = "Payment required (x402 challenge)", body = ErrorBody),
        (status = 404, description = "quote_not_found", body = ErrorBody),
        (status = 409, description = "job_already_running: the body's `job` names it", body = ErrorBody),
        (status = 410, description = "quote_expired", body = ErrorBody),
    ),
)]
pub async fn scans(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let principal = match principal_of(&headers) {
        Ok(principal) => principal,
        Err(err) => return unauthenticated(&state, &err),
    };
    let args: ScanWalletArgs = match serde_json::from_slice(&body) {
        Ok(args) => args,
        Err(e) => return rest_error(&AppError::invalid_params(format!("body: {e}"))),
    };
    match jobs::start_scan(&state, &principal, args).await {
        Ok(job) => (StatusCode::ACCEPTED, axum::Json(job)).into_response(),
        Err(err) => rest_error(&err),
    }
}

#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct JobQuery {
    /// Receipt of the payment the job was started on.
    receipt: Option<String>,
}

/// Read a scan job: the REST twin of `get_job`.
#[utoipa::path(
    get,
    path = "/v1/jobs/{job_id}",
    tag = "scans",
    params(("job_id" = String, Path, description = "The job id scan_wallet returned"), JobQuery),
    responses(
        (status = 200, description = "The job"),
        (status = 404, description = "No such job, or not yours to read", body = ErrorBody),
    ),
)]
pub async fn job(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(job_id): Path<String>,
    Query(query): Query<JobQuery>,
) -> Response {
    let principal = match principal_of(&headers) {
        Ok(principal) => principal,
        Err(err) => return unauthenticated(&state, &err),
    };
    let args = GetJobArgs {
        job_id,
        receipt: query.receipt,
    };
    match jobs::get_job(&state, &principal, args).await {
        Ok(job) => axum::Json(job).into_response(),
        Err(err) => rest_error(&err),
    }
}

/// The body of `/healthz`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct HealthBody {
    /// `ok`
    status: &'static str,
    /// `sqlite` or `postgres`.
    database: &'static str,
    /// Migrations applied.
    migrations: i64,
    version: &'static str,
}

/// Ready: the database answers and is migrated.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "meta",
    responses(
        (status = 200, description = "Serving", body = HealthBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ),
)]
pub async fn health(State(state): State<AppState>) -> Response {
    let store = state.store();
    let checked = async {
        store.ping().await?;
        store.applied_migrations().await
    };
    match checked.await {
        Ok(migrations) => axum::Json(HealthBody {
            status: "ok",
            database: match store.dialect() {
                crate::store::Dialect::Sqlite => "sqlite",
                crate::store::Dialect::Postgres => "postgres",
            },
            migrations,
            version: env!("CARGO_PKG_VERSION"),
        })
        .into_response(),
        Err(err) => {
            tracing::warn!(error = %err, "health check failed");
            rest_error(&AppError::new(
                crate::error::Code::Unavailable,
                "the database is unavailable",
            ))
        }
    }
}
