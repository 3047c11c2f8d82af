//! The REST API under `/v1`: thin handlers over the same domain functions
//! the MCP tools call, so a route and its tool answer the same JSON.
//! Each handler is registered once, in [`router`], with utoipa-axum's
//! `routes!`: its `#[utoipa::path]` (whose path is a `crate::routes`
//! constant) gives both the axum route and its OpenAPI operation. The
//! document is that router's, then completed from the tool registry
//! ([`complete`]): a tool route's
//! parameters, body and result are its tool's schemas, so the document, the
//! check every route makes ([`query_args`], [`body_args`]) and `tools/list`
//! state one rule. The `IntoParams` structs below only read the query once
//! it has passed that check.

pub mod reports;

use axum::{
    Json,
    extract::{Path, RawQuery, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

mod research;

pub use research::{credits_get, credits_topup, graph_expand, graph_funder};

use crate::{
    accounts::{PrincipalView, api as account_api},
    analytics::{
        flows::{self, GetFlowsArgs},
        positions::{self, GetPositionsArgs},
        value_history::{self, GetValueHistoryArgs},
    },
    auth::{self, PingResult},
    error::AppError,
    http::{Caller, ClientAddr, JsonBody, paid_json, paid_json_kept},
    jobs::{self, GetJobArgs, JobView, ScanWalletArgs},
    mcp::{
        registry::{ArgumentError, ToolDef},
        schema,
    },
    payments::{self, Quote, QuoteWalletArgs},
    prices::api::{
        self as price_api, GetPriceHistoryArgs, GetPricesArgs, PriceHistory, PricesView,
    },
    reads::ledger_page::{self, GetLedgerArgs},
    routes,
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
    components(schemas(ErrorBody, PingResult, PrincipalView, HealthBody, ReadyBody)),
    tags(
        (name = "meta", description = "Service health and identity"),
        (name = "scans", description = "Quotes and scans"),
        (name = "ledger", description = "Reading a scanned wallet"),
        (name = "prices", description = "USD prices, current and past (free)"),
        (name = "account", description = "Your account's watchlist, labels and payments (a bearer token)"),
        (name = "research", description = "Follow the money, paid from your account's research credits"),
        (name = "share", description = "Share links: public, read-only report pages of one wallet (a bearer token)"),
    ),
)]
struct ApiDoc;

/// Every route the OpenAPI document describes, each registered with its
/// operation in one `routes!` (the method and path are the handler's
/// `#[utoipa::path]`, one `routes!` per path), and the document's own
/// route, which it does not list. `startup::router` mounts it.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(health))
        .routes(routes!(ready))
        .routes(routes!(ping))
        .routes(routes!(quotes))
        .routes(routes!(scans))
        .routes(routes!(job))
        .routes(routes!(ledger))
        .routes(routes!(payments_list))
        .routes(routes!(wallets_list, wallets_add))
        .routes(routes!(wallets_remove))
        .routes(routes!(labels_set))
        .routes(routes!(tax_defaults_set, tax_defaults_get))
        .routes(routes!(wallet_positions))
        .routes(routes!(wallet_value_history))
        .routes(routes!(wallet_flows))
        .routes(routes!(research::graph_expand))
        .routes(routes!(research::graph_funder))
        .routes(routes!(research::credits_get, research::credits_topup))
        .routes(routes!(reports::report))
        .routes(routes!(snapshots_list, snapshots_create))
        .routes(routes!(snapshots_revoke))
        .routes(routes!(prices))
        .routes(routes!(price_history))
        .route(routes::OPENAPI.path, axum::routing::get(openapi))
}

/// The document [`router`] builds, built once.
fn document() -> &'static utoipa::openapi::OpenApi {
    static DOCUMENT: std::sync::OnceLock<utoipa::openapi::OpenApi> = std::sync::OnceLock::new();
    DOCUMENT.get_or_init(|| router().into_openapi())
}

/// The OpenAPI document, with this deployment's URL as its server.
pub fn openapi_json(public_url: &str) -> Value {
    let mut doc = document().clone();
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    doc.servers = Some(vec![utoipa::openapi::Server::new(public_url)]);
    let mut doc = serde_json::to_value(doc).unwrap_or(Value::Null);
    complete(&mut doc);
    reports::document(&mut doc);
    doc
}

/// `GET /v1/openapi.json`.
pub async fn openapi(State(state): State<AppState>) -> Response {
    Json(openapi_json(state.public_url())).into_response()
}

/// Who this credential resolves to (the REST twin of the `ping` tool).
#[utoipa::path(
    get,
    path = routes::PING.path,
    tag = "meta",
    responses(
        (status = 200, description = "The principal", body = PingResult),
        (status = 401, description = "Unknown or revoked bearer", body = ErrorBody),
    ),
)]
pub async fn ping(State(state): State<AppState>, Caller(principal, _): Caller) -> Json<PingResult> {
    Json(auth::ping(&principal, state.payments_view()))
}

/// Price a scan (or a cached read) of a wallet: the REST twin of `quote_wallet`.
#[utoipa::path(
    post,
    path = routes::QUOTES.path,
    tag = "scans",
    responses(
        (status = 200, description = "The quote and the tier table (see quote_wallet)"),
        (status = 400, description = "Bad body or address", body = ErrorBody),
        (status = 401, description = "Unknown or revoked bearer", body = ErrorBody),
        (status = 503, description = "The Solana RPC endpoint did not answer", body = ErrorBody),
    ),
)]
pub async fn quotes(
    State(state): State<AppState>,
    Caller(_caller, _): Caller,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<Quote>, AppError> {
    let args: QuoteWalletArgs = body_args("quote_wallet", body)?;
    payments::quote(&state.paywall(), args).await.map(Json)
}

/// Start the scan a quote priced: the REST twin of `scan_wallet`.
#[utoipa::path(
    post,
    path = routes::SCANS.path,
    tag = "scans",
    responses(
        (status = 202, description = "The job, running (see get_job)"),
        (status = 400, description = "Bad body, or wrong_quote: the quote prices no scan (a read, a top-up)", body = ErrorBody),
        (status = 402, description = "Payment required (x402 challenge)", body = ErrorBody),
        (status = 404, description = "quote_not_found", body = ErrorBody),
        (status = 409, description = "job_already_running: the body's `job` names it", body = ErrorBody),
        (status = 410, description = "quote_expired", body = ErrorBody),
    ),
)]
pub async fn scans(
    State(state): State<AppState>,
    Caller(principal, presented): Caller,
    JsonBody(body): JsonBody<Value>,
) -> Result<Response, AppError> {
    let args: ScanWalletArgs = body_args("scan_wallet", body)?;
    let job = jobs::start_scan(&state.paywall(), &principal, args, &presented).await?;
    let mut response = paid_json(&job, job.payment.as_ref());
    *response.status_mut() = StatusCode::ACCEPTED;
    Ok(response)
}

/// Read a scan job: the REST twin of `get_job`.
#[utoipa::path(
    get,
    path = routes::JOB.path,
    tag = "scans",
    params(("job_id" = String, Path, description = "The job id scan_wallet returned")),
    responses(
        (status = 200, description = "The job"),
        (status = 404, description = "No such job, or not yours to read", body = ErrorBody),
    ),
)]
pub async fn job(
    State(state): State<AppState>,
    Caller(principal, presented): Caller,
    Path(job_id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<JobView>, AppError> {
    let args: GetJobArgs = query_args("get_job", &[("job_id", &job_id)], raw)?;
    jobs::get_job(&state.paywall(), &principal, args, &presented)
        .await
        .map(Json)
}

/// One page of a scanned wallet's ledger: the REST twin of `get_ledger`.
#[utoipa::path(
    get,
    path = routes::LEDGER.path,
    tag = "ledger",
    params(("address" = String, Path, description = "The wallet's base58 public key")),
    responses(
        (status = 200, description = "A page of legs, newest first, and next_cursor"),
        (status = 400, description = "Bad parameter or cursor", body = ErrorBody),
        (status = 402, description = "Payment required (x402 challenge)", body = ErrorBody),
        (status = 404, description = "The wallet has never been scanned", body = ErrorBody),
    ),
)]
pub async fn ledger(
    State(state): State<AppState>,
    Caller(principal, presented): Caller,
    Path(address): Path<String>,
    headers: axum::http::HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, AppError> {
    let args: GetLedgerArgs = query_args("get_ledger", &[("address", &address)], raw)?;
    let (body, payment) = ledger_page::get_ledger_json(
        &state.reads(),
        &state.services().caches().pages,
        &principal,
        args,
        &presented,
    )
    .await?;
    Ok(paid_json_kept(&headers, &body, payment.as_ref()))
}

/// A signed-in account's payments, newest first (P8).
#[utoipa::path(
    get,
    path = routes::PAYMENTS.path,
    tag = "account",
    responses(
        (status = 200, description = "The account's payments", body = [crate::accounts::PaymentView]),
        (status = 401, description = "No account: anonymous payers keep their payment blocks", body = ErrorBody),
    ),
)]
pub async fn payments_list(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
) -> Result<Json<Vec<crate::accounts::PaymentView>>, Response> {
    let account = principal
        .require_account(
            "listing payments (an anonymous payer keeps the payment block its call answered with)",
        )
        .map_err(|err| crate::http::unauthenticated(&state, err))?;
    // A receipt reads what it paid for: listing them needs the read scope.
    principal
        .permit(crate::accounts::Action::ReadAccount)
        .map_err(IntoResponse::into_response)?;
    crate::accounts::list_payments(state.store(), &account.account_id)
        .await
        .map(Json)
        .map_err(|err| AppError::from(err).into_response())
}

/// A scanned wallet's positions under a cost-basis method: the REST twin of `get_positions`.
#[utoipa::path(
    get,
    path = routes::POSITIONS.path,
    tag = "ledger",
    params(("address" = String, Path, description = "The wallet's base58 public key")),
    responses(
        (status = 200, description = "positions per mint (open lots, realized), realized totals, rent-locked SOL"),
        (status = 400, description = "Bad parameter", body = ErrorBody),
        (status = 402, description = "Payment required (x402 challenge)", body = ErrorBody),
        (status = 404, description = "The wallet has never been scanned", body = ErrorBody),
    ),
)]
pub async fn wallet_positions(
    State(state): State<AppState>,
    Caller(principal, presented): Caller,
    Path(address): Path<String>,
    headers: axum::http::HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, AppError> {
    let args: GetPositionsArgs = query_args("get_positions", &[("address", &address)], raw)?;
    let (body, payment) = positions::get_positions_json(
        &state.reads(),
        &state.services().caches().positions,
        &principal,
        args,
        &presented,
    )
    .await?;
    Ok(paid_json_kept(&headers, &body, payment.as_ref()))
}

/// A scanned wallet's value at every bucket close: the REST twin of `get_value_history`.
#[utoipa::path(
    get,
    path = routes::VALUE_HISTORY.path,
    tag = "ledger",
    params(("address" = String, Path, description = "The wallet's base58 public key")),
    responses(
        (status = 200, description = "points (t, usd, sol, estimated, holdings), unpriced_mints, coverage_pct"),
        (status = 400, description = "Bad parameter", body = ErrorBody),
        (status = 402, description = "Payment required (x402 challenge)", body = ErrorBody),
        (status = 404, description = "The wallet has never been scanned", body = ErrorBody),
    ),
)]
pub async fn wallet_value_history(
    State(state): State<AppState>,
    Caller(principal, presented): Caller,
    Path(address): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, AppError> {
    let args: GetValueHistoryArgs = query_args("get_value_history", &[("address", &address)], raw)?;
    let body =
        value_history::get_value_history(&state.reads(), &principal, args, &presented).await?;
    Ok(paid_json(&body, body.payment.as_ref()))
}

/// A scanned wallet's counterparty graph: the REST twin of `get_flows`.
#[utoipa::path(
    get,
    path = routes::FLOWS.path,
    tag = "ledger",
    params(("address" = String, Path, description = "The wallet's base58 public key")),
    responses(
        (status = 200, description = "nodes and edges (source, target, mint, amount, usd, legs)"),
        (status = 400, description = "Bad parameter", body = ErrorBody),
        (status = 402, description = "Payment required (x402 challenge)", body = ErrorBody),
        (status = 404, description = "The wallet has never been scanned", body = ErrorBody),
    ),
)]
pub async fn wallet_flows(
    State(state): State<AppState>,
    Caller(principal, presented): Caller,
    Path(address): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, AppError> {
    let args: GetFlowsArgs = query_args("get_flows", &[("address", &address)], raw)?;
    let body = flows::get_flows(&state.reads(), &principal, args, &presented).await?;
    Ok(paid_json(&body, body.payment.as_ref()))
}

/// Current USD prices: the REST twin of `get_prices`. Free.
#[utoipa::path(
    get,
    path = routes::PRICES.path,
    tag = "prices",
        responses(
        (status = 200, description = "One price per mint asked (usd, change_24h_pct, source, at)"),
        (status = 400, description = "A mint that is not a base58 key", body = ErrorBody),
    ),
)]
pub async fn prices(
    State(state): State<AppState>,
    Caller(_caller, _): Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<PricesView>, AppError> {
    let args: GetPricesArgs = query_args("get_prices", &[], raw)?;
    price_api::get_prices(&state.price_query(), args)
        .await
        .map(Json)
}

/// A mint's USD price series: the REST twin of `get_price_history`. Free.
#[utoipa::path(
    get,
    path = routes::PRICE_HISTORY.path,
    tag = "prices",
        responses(
        (status = 200, description = "points as [unix seconds, usd], oldest first, with coverage; complete false and backfill_job_id while a gap is backfilled"),
        (status = 400, description = "Bad parameter", body = ErrorBody),
        (status = 404, description = "No price source keeps a history of this mint", body = ErrorBody),
        (status = 503, description = "The price source did not answer", body = ErrorBody),
    ),
)]
pub async fn price_history(
    State(state): State<AppState>,
    Caller(_caller, _): Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<PriceHistory>, AppError> {
    let args: GetPriceHistoryArgs = query_args("get_price_history", &[], raw)?;
    price_api::get_price_history(&state.price_query(), args)
        .await
        .map(Json)
}

/// An account route's refusal: `unauthenticated` carries the 401 challenge.
fn account_refusal(state: &AppState, err: AppError) -> Response {
    if err.code() == crate::error::Code::Unauthenticated {
        crate::http::unauthenticated(state, err)
    } else {
        err.into_response()
    }
}

/// The wallets your account watches: the REST twin of `list_wallets`.
#[utoipa::path(
    get,
    path = routes::WALLETS_LIST.path,
    tag = "account",
    responses(
        (status = 200, description = "The watchlist, each wallet with its last scan and ledger size"),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
    ),
)]
pub async fn wallets_list(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
) -> Result<Json<account_api::Wallets>, Response> {
    account_api::list_wallets(state.store(), &principal)
        .await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

/// Watch a wallet: the REST twin of `add_wallet`.
#[utoipa::path(
    post,
    path = routes::WALLETS_ADD.path,
    tag = "account",
    responses(
        (status = 200, description = "The watched wallet as the list shows it"),
        (status = 400, description = "Bad address or label", body = ErrorBody),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
    ),
)]
pub async fn wallets_add(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<account_api::WalletView>, Response> {
    let run = async {
        let args: account_api::AddWalletArgs = body_args("add_wallet", body)?;
        account_api::add_wallet(state.store(), state.now_ms(), &principal, args).await
    };
    run.await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

/// Stop watching a wallet. No MCP tool does this; the Wallets page and
/// this route do.
#[utoipa::path(
    delete,
    path = routes::WALLETS_REMOVE.path,
    tag = "account",
    params(("address" = String, Path, description = "The wallet's base58 public key")),
    responses(
        (status = 204, description = "No longer watched"),
        (status = 400, description = "Not a base58 public key", body = ErrorBody),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
        (status = 404, description = "Your account does not watch this wallet", body = ErrorBody),
    ),
)]
pub async fn wallets_remove(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
    Path(address): Path<String>,
) -> Result<StatusCode, Response> {
    let run = async {
        let address = crate::solana::WalletAddress::parse(&address)
            .map_err(|why| AppError::invalid_params(format!("address: {why}")))?;
        account_api::remove_wallet(state.store(), &principal, &address).await
    };
    run.await
        .map(|()| StatusCode::NO_CONTENT)
        .map_err(|err| account_refusal(&state, err))
}

/// Name an address in your own reports: the REST twin of `set_address_label`.
#[utoipa::path(
    post,
    path = routes::LABELS.path,
    tag = "account",
    responses(
        (status = 200, description = "The address's label and category as they now stand"),
        (status = 400, description = "Bad address, label or category", body = ErrorBody),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
    ),
)]
pub async fn labels_set(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<account_api::AddressLabel>, Response> {
    let run = async {
        let args: account_api::SetAddressLabelArgs = body_args("set_address_label", body)?;
        account_api::set_address_label(
            state.store(),
            state.now_ms(),
            &principal,
            args,
            state.config().quota.labels_per_account,
        )
        .await
    };
    run.await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

/// Set your account's tax defaults for `get_report` (json) and
/// `get_positions`: REST only, since the MCP tool list is the contract's
/// (docs/contract/guide.txt); the tools read the defaults all the same.
#[utoipa::path(
    post,
    path = routes::TAX_DEFAULTS.path,
    tag = "account",
    responses(
        (status = 200, description = "The account's tax defaults as they now stand", body = account_api::TaxDefaults),
        (status = 400, description = "Bad jurisdiction, currency or treatment", body = ErrorBody),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
    ),
)]
pub async fn tax_defaults_set(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<account_api::TaxDefaults>, Response> {
    let run = async {
        // No tool behind this route, so no tool schema: the arguments'
        // own deserialiser checks the body (unknown fields refused).
        if !body.is_object() {
            return Err(AppError::invalid_params("body: must be a JSON object"));
        }
        let args: account_api::SetTaxDefaultsArgs = serde_json::from_value(body)
            .map_err(|e| AppError::invalid_params(format!("body: {e}")))?;
        account_api::set_tax_defaults(state.store(), state.now_ms(), &principal, args).await
    };
    run.await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

/// Your account's tax defaults as they stand.
#[utoipa::path(
    get,
    path = routes::TAX_DEFAULTS_GET.path,
    tag = "account",
    responses(
        (status = 200, description = "The account's tax defaults (jurisdiction null: none)", body = account_api::TaxDefaults),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
    ),
)]
pub async fn tax_defaults_get(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
) -> Result<Json<account_api::TaxDefaults>, Response> {
    account_api::tax_defaults(state.store(), &principal)
        .await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

/// The body of `/healthz`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct HealthBody {
    /// `ok`
    status: &'static str,
    /// `sqlite` or `postgres`.
    database: &'static str,
    /// Migrations applied when this process started (the server binds only
    /// after migrating).
    migrations: i64,
    version: &'static str,
}

/// Liveness: the process serves requests.
///
/// It asks the database nothing, so an orchestrator's liveness probe does
/// not restart healthy instances during a database outage; `/readyz` is
/// the check that follows the database.
#[utoipa::path(
    get,
    path = routes::HEALTH.path,
    tag = "meta",
    responses(
        (status = 200, description = "Serving", body = HealthBody),
    ),
)]
pub async fn health(State(state): State<AppState>) -> Response {
    axum::Json(HealthBody {
        status: "ok",
        database: match state.store().dialect() {
            crate::store::Dialect::Sqlite => "sqlite",
            crate::store::Dialect::Postgres => "postgres",
        },
        migrations: state.migrations(),
        version: env!("CARGO_PKG_VERSION"),
    })
    .into_response()
}

/// How long `/readyz` waits for the database before answering 503.
const READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The body of `/readyz`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ReadyBody {
    /// `ready`
    status: &'static str,
}

/// Readiness, for a load balancer or an orchestrator's readiness probe:
/// 503 while the database does not answer, so traffic goes elsewhere
/// until it does.
#[utoipa::path(
    get,
    path = routes::READY.path,
    tag = "meta",
    responses(
        (status = 200, description = "Ready for traffic", body = ReadyBody),
        (status = 503, description = "The database is unreachable", body = ErrorBody),
    ),
)]
pub async fn ready(State(state): State<AppState>) -> Response {
    // A probe wants a prompt answer: the pool would wait its whole acquire
    // timeout (10 s) for a database that is down, longer than most probes'
    // own timeouts, so the check gives up after READY_TIMEOUT.
    let pinged = tokio::time::timeout(READY_TIMEOUT, state.store().ping()).await;
    match pinged {
        Ok(Ok(())) => axum::Json(ReadyBody { status: "ready" }).into_response(),
        Err(_) => {
            tracing::warn!(
                timeout_ms = READY_TIMEOUT.as_millis() as u64,
                "readiness check failed: the database did not answer in time"
            );
            AppError::new(
                crate::error::Code::Unavailable,
                "the database is unreachable",
            )
            .into_response()
        }
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "readiness check failed: the database does not answer");
            AppError::new(
                crate::error::Code::Unavailable,
                "the database is unreachable",
            )
            .into_response()
        }
    }
}

fn rest_tool(name: &str) -> Result<&'static ToolDef, AppError> {
    crate::mcp::tools::registry()
        .get(name)
        .ok_or_else(|| AppError::internal("rest route", format!("no tool {name}")))
}

/// A query parameter's text as the JSON value its schema types: query
/// strings are text, so `limit=5` is the integer 5, `exclude=a,b` the list
/// [a, b] (OpenAPI's form style, unexploded). Text that is not of the type
/// stays a string, which the schema then refuses by name.
fn from_text(schema: &Value, text: &str) -> Value {
    match schema["type"].as_str() {
        Some("integer") => text
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| text.parse::<u64>().map(Value::from))
            .unwrap_or_else(|_| json!(text)),
        Some("number") => text
            .parse::<i64>()
            .map(Value::from)
            .ok()
            .or_else(|| {
                text.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .map(Value::from)
            })
            .unwrap_or_else(|| json!(text)),
        Some("boolean") => match text {
            "true" => json!(true),
            "false" => json!(false),
            _ => json!(text),
        },
        Some("array") if text.is_empty() => json!([]),
        Some("array") => Value::Array(
            text.split(',')
                .map(|item| from_text(&schema["items"], item))
                .collect(),
        ),
        _ => json!(text),
    }
}

/// Hold a GET route's path and query parameters to its tool's input schema
/// (the same check `tools/call` makes), then read them into the tool's own
/// argument type: the route and the tool take one type, parsed once.
pub(crate) fn query_args<T: DeserializeOwned>(
    tool: &str,
    path: &[(&str, &str)],
    raw: Option<String>,
) -> Result<T, AppError> {
    let schema = &rest_tool(tool)?.rest_schema;
    let query = raw.unwrap_or_default();
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(&query)
        .map_err(|_| AppError::invalid_params("query: not a URL-encoded query string"))?;
    let mut args = Map::new();
    for (name, value) in path {
        args.insert((*name).to_owned(), json!(value));
    }
    for (name, text) in pairs {
        if args.contains_key(&name) {
            return Err(AppError::invalid_params(format!("{name}: given twice")));
        }
        let value = from_text(&schema["properties"][&name], &text);
        args.insert(name, value);
    }
    let mut args = Value::Object(args);
    schema::check(schema, &mut args, tool).map_err(AppError::invalid_params)?;
    read_checked(args, tool, "query: does not match the parameters")
}

/// Hold a POST route's JSON body to its tool's input schema, then read it.
fn body_args<T: DeserializeOwned>(tool: &str, mut body: Value) -> Result<T, AppError> {
    let schema = &rest_tool(tool)?.rest_schema;
    if !body.is_object() {
        return Err(AppError::invalid_params("body: must be a JSON object"));
    }
    schema::check(schema, &mut body, tool).map_err(AppError::invalid_params)?;
    read_checked(body, tool, "body: does not match the arguments")
}

/// Checked arguments read into the tool's type, refused as the tool refuses.
fn read_checked<T: DeserializeOwned>(args: Value, tool: &str, shape: &str) -> Result<T, AppError> {
    crate::mcp::registry::read_value(args).map_err(|err| match err {
        ArgumentError::Value(message) => AppError::invalid_params(message),
        ArgumentError::Shape(detail) => {
            crate::mcp::registry::schema_disagrees(tool, &detail);
            AppError::invalid_params(shape)
        }
    })
}

/// What utoipa cannot say from the handlers, filled in from the tool
/// registry so the document cannot drift from what the routes accept and
/// answer: each tool route's parameters and body are its tool's input
/// schema, its 2xx body the tool's output schema; every error is the error
/// body; the optional bearer is declared and applied.
fn complete(doc: &mut Value) {
    let registry = crate::mcp::tools::registry();
    for tool in registry.iter() {
        let Some(route) = tool.meta.rest else {
            continue;
        };
        let method = route.method.to_ascii_lowercase();
        let Some(op) = doc["paths"][route.path][&method].as_object_mut() else {
            // `router` declares every twin the registry names (a test holds
            // it to that); one missing is a bug, said here, and the document
            // goes out without that tool's schemas.
            tracing::error!(
                tool = tool.meta.name,
                method = route.method,
                path = route.path,
                "a tool's REST twin has no operation in the OpenAPI document"
            );
            continue;
        };
        let mut schema = tool.rest_schema.clone();
        mark_keys(&mut schema);
        if schema["properties"]
            .as_object()
            .is_some_and(|p| !p.is_empty())
        {
            op["responses"].as_object_mut().into_iter().for_each(|r| {
                r.entry("400").or_insert_with(
                    || json!({"description": "A parameter breaks its rule; the message names it"}),
                );
            });
        }
        if route.method == "GET" {
            op.insert("parameters".to_owned(), parameters(route.path, &schema));
        } else {
            op.insert(
                "requestBody".to_owned(),
                json!({"required": true, "content": {"application/json": {"schema": schema}}}),
            );
        }
        let success = tool.output_schema["anyOf"][0].clone();
        let responses = op.entry("responses").or_insert_with(|| json!({}));
        for status in ["200", "202"] {
            if let Some(response) = responses.get_mut(status) {
                response["content"] = json!({"application/json": {"schema": success}});
            }
        }
    }
    // A route without a tool states its body from its arguments' own
    // schema, as a tool route does from its tool's.
    if let Some(op) = doc["paths"][routes::TAX_DEFAULTS.path]["post"].as_object_mut() {
        let schema = crate::mcp::registry::input_schema::<account_api::SetTaxDefaultsArgs>();
        op.insert(
            "requestBody".to_owned(),
            json!({"required": true, "content": {"application/json": {"schema": schema}}}),
        );
    }
    let error = json!({"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}});
    if let Some(paths) = doc["paths"].as_object_mut() {
        for (path, item) in paths.iter_mut() {
            let Some(item) = item.as_object_mut() else {
                continue;
            };
            for (method, op) in item.iter_mut() {
                if path.starts_with("/v1/") {
                    op["security"] = json!([{}, {"bearer": []}]);
                }
                // A route without a tool (DELETE /v1/wallets/{address})
                // states its address the way tool routes do.
                if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
                    for param in params {
                        if param["in"] == "path" && param["name"] == "address" {
                            param["schema"] = json!({
                                "type": "string",
                                "pattern": format!("^{}$", crate::params::BASE58_KEY),
                                "format": "solana-pubkey",
                            });
                        }
                    }
                }
                let Some(responses) = op["responses"].as_object_mut() else {
                    continue;
                };
                if path.starts_with("/v1/") {
                    responses
                        .entry("401")
                        .or_insert_with(|| json!({"description": "An unknown or revoked bearer"}));
                    responses.entry("429").or_insert_with(|| {
                        json!({
                            "description": "Rate limited (rate_limited): an anonymous caller per client IP; a bearer by its account's and its client IP's budgets, in units of what each call costs",
                            "headers": {"Retry-After": {"description": "Whole seconds to wait", "schema": {"type": "integer", "minimum": 1}}},
                        })
                    });
                    if method == "post" {
                        responses.entry("413").or_insert_with(
                            || json!({"description": "The body is over the size limit"}),
                        );
                        responses.entry("415").or_insert_with(|| {
                            json!({"description": "The body is not Content-Type: application/json (UTF-8)"})
                        });
                        responses.entry("403").or_insert_with(|| {
                            json!({"description": "A cross-site browser request or a foreign Origin"})
                        });
                    }
                }
                for (status, response) in responses.iter_mut() {
                    if !status.starts_with('2') && response.get("content").is_none() {
                        response["content"] = error.clone();
                    }
                }
            }
        }
    }
    doc["components"]["securitySchemes"] = json!({
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "Optional: an MCP token (lm_…) or an API key (lk_…). Without one a call is anonymous.",
        }
    });
}

/// Give every base58-key string `format: solana-pubkey`. A pattern can say
/// which characters and how many, not that they decode to 32 bytes; the
/// format names that rule for OpenAPI tools (the CI's schemathesis run
/// generates keys for it). Tool schemas leave it out: MCP clients warn
/// about formats they do not know.
fn mark_keys(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            if obj.get("pattern").and_then(Value::as_str)
                == Some(format!("^{}$", crate::params::BASE58_KEY).as_str())
            {
                obj.insert("format".to_owned(), json!("solana-pubkey"));
            }
            obj.values_mut().for_each(mark_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(mark_keys),
        _ => {}
    }
}

/// A GET route's parameters: those in its path, then its query.
fn parameters(path: &str, schema: &Value) -> Value {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let empty = Map::new();
    let props = schema["properties"].as_object().unwrap_or(&empty);
    let mut out = Vec::new();
    for (name, prop) in props {
        let mut prop = prop.clone();
        let description = prop
            .as_object_mut()
            .and_then(|p| p.remove("description"))
            .unwrap_or(Value::Null);
        let in_path = path.contains(&format!("{{{name}}}"));
        let mut param = json!({
            "name": name,
            "in": if in_path { "path" } else { "query" },
            "required": in_path || required.contains(&name.as_str()),
            "schema": prop,
        });
        if !description.is_null() {
            param["description"] = description;
        }
        if param["schema"]["type"] == "array" {
            param["style"] = json!("form");
            param["explode"] = json!(false);
        }
        out.push(param);
    }
    Value::Array(out)
}

/// Mint a share link: the REST twin of `create_snapshot`. A payment for the
/// read travels in the body's `payment` and `quote_id` or the `X-PAYMENT`
/// header.
#[utoipa::path(
    post,
    path = routes::SNAPSHOTS_CREATE.path,
    tag = "share",
    responses(
        (status = 200, description = "The new link, its token shown this once", body = crate::share::SnapshotView),
        (status = 400, description = "Bad address, range or denominate", body = ErrorBody),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
        (status = 402, description = "Your account cannot read the wallet: pay the read (x402 challenge)", body = ErrorBody),
        (status = 403, description = "The token lacks a scope (publishing a link needs read and scan), or a cross-site browser request or a foreign Origin", body = ErrorBody),
        (status = 404, description = "The wallet has never been scanned", body = ErrorBody),
        (status = 409, description = "snapshot_limit: as many live links as the account may hold", body = ErrorBody),
    ),
)]
pub async fn snapshots_create(
    State(state): State<AppState>,
    Caller(principal, presented): Caller,
    ClientAddr(client): ClientAddr,
    JsonBody(body): JsonBody<Value>,
) -> Result<Response, Response> {
    let run = async {
        let args: crate::share::CreateSnapshotArgs = body_args("create_snapshot", body)?;
        // A payment in the body verifies and settles on chain.
        crate::http::charge_body_payment(
            &state,
            &principal,
            &presented,
            client.as_ref(),
            crate::limits::costs::of_tool("create_snapshot"),
            args.payment
                .as_deref()
                .is_some_and(|p| !p.trim().is_empty()),
        )
        .await?;
        crate::share::create_snapshot(&state.sharing(), &principal, args, &presented).await
    };
    run.await
        .map(|view| paid_json(&view, view.payment.as_ref()))
        .map_err(|err| account_refusal(&state, err))
}

/// The account's live share links (tokens are never shown again).
#[utoipa::path(
    get,
    path = routes::SNAPSHOTS_LIST.path,
    tag = "share",
    responses(
        (status = 200, description = "Live links, newest first, and the account's limit", body = crate::share::Snapshots),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
    ),
)]
pub async fn snapshots_list(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
) -> Result<Json<crate::share::Snapshots>, Response> {
    crate::share::list_snapshots(&state.sharing(), &principal)
        .await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

/// Revoke a share link: the REST twin of `revoke_snapshot`.
#[utoipa::path(
    delete,
    path = routes::SNAPSHOTS_REVOKE.path,
    tag = "share",
    params(("token" = String, Path, description = "The share link's token (the part after /s/)")),
    responses(
        (status = 200, description = "Revoked: the page, its reads and its card answer not_found", body = crate::share::RevokedSnapshot),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
        (status = 403, description = "The token lacks a scope: revoking a link needs read and scan", body = ErrorBody),
        (status = 404, description = "Your account holds no live link with this token", body = ErrorBody),
    ),
)]
pub async fn snapshots_revoke(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
    Path(token): Path<String>,
) -> Result<Json<crate::share::RevokedSnapshot>, Response> {
    let args = crate::share::RevokeSnapshotArgs { token };
    crate::share::revoke_snapshot(&state.sharing(), &principal, args)
        .await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry names each tool's REST twin by a `crate::routes`
    /// constant and the router registers each handler under one: a twin
    /// the router does not declare fails here, never silently.
    #[test]
    fn every_rest_twin_is_an_operation_of_the_document() {
        let doc = serde_json::to_value(router().into_openapi()).unwrap();
        let mut twins = 0;
        for tool in crate::mcp::tools::registry().iter() {
            let Some(route) = tool.meta.rest else {
                continue;
            };
            let method = route.method.to_ascii_lowercase();
            assert!(
                doc["paths"][route.path][&method].is_object(),
                "{} names {} {} as its REST twin, and the router declares no such operation",
                tool.meta.name,
                route.method,
                route.path
            );
            twins += 1;
        }
        assert!(twins >= 15, "{twins} twins");
    }

    /// The router serves each documented operation at the path the
    /// document names, and only the document's route besides.
    #[test]
    fn the_document_lists_every_route_the_router_declares() {
        let doc = serde_json::to_value(router().into_openapi()).unwrap();
        let paths: Vec<&str> = doc["paths"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert!(paths.contains(&routes::LEDGER.path), "{paths:?}");
        assert!(!paths.contains(&routes::OPENAPI.path), "{paths:?}");
        assert_eq!(paths.len(), 23, "{paths:?}");
    }
}
