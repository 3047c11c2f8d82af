//! The follow-the-money routes: `POST /v1/graph/expand` and
//! `POST /v1/graph/funder` (the REST twins of `expand_graph` and
//! `find_first_funder`), and an account's research credits
//! (`GET /v1/credits`; `POST /v1/credits` tops them up through x402).

use axum::{
    Json,
    extract::State,
    response::{IntoResponse, Response},
};
use serde_json::Value;

use super::{ErrorBody, account_refusal, body_args};
use crate::{
    accounts::Action,
    credits::CreditsView,
    graph::{
        ExpandGraphArgs, GraphExpansion,
        funder::{FindFirstFunderArgs, FirstFunder},
    },
    http::{Caller, JsonBody},
    routes,
    state::AppState,
};

/// One hop of a wallet's counterparties: the REST twin of `expand_graph`.
#[utoipa::path(
    post,
    path = routes::GRAPH_EXPAND.path,
    tag = "research",
    responses(
        (status = 200, description = "Nodes and edges, with cost_atomic and balance_atomic"),
        (status = 400, description = "Bad arguments", body = ErrorBody),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
        (status = 403, description = "insufficient_credit (nothing fetched or charged), or the token lacks a scope (spending credits needs read and scan)", body = ErrorBody),
        (status = 404, description = "The follow_the_money feature is off for your account, or the wallet was never scanned (source ledger)", body = ErrorBody),
        (status = 409, description = "action_conflict: the action_id was used for other arguments, or failed and was refunded", body = ErrorBody),
        (status = 429, description = "rate_limited or too_many_expansions", body = ErrorBody),
        (status = 503, description = "The RPC failed; the charge was refunded", body = ErrorBody),
    ),
)]
pub async fn graph_expand(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<GraphExpansion>, Response> {
    let run = async {
        let args: ExpandGraphArgs = body_args("expand_graph", body)?;
        crate::graph::expand_graph(&state.graph(), &principal, args).await
    };
    run.await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

/// The first inbound SOL transfer: the REST twin of `find_first_funder`.
#[utoipa::path(
    post,
    path = routes::GRAPH_FUNDER.path,
    tag = "research",
    responses(
        (status = 200, description = "found or not_found_within_window, with cost_atomic and balance_atomic"),
        (status = 400, description = "Bad arguments", body = ErrorBody),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
        (status = 403, description = "insufficient_credit (nothing fetched or charged), or the token lacks a scope (spending credits needs read and scan)", body = ErrorBody),
        (status = 404, description = "The follow_the_money feature is off for your account", body = ErrorBody),
        (status = 409, description = "action_conflict", body = ErrorBody),
        (status = 429, description = "rate_limited or too_many_expansions", body = ErrorBody),
        (status = 503, description = "The RPC failed; the charge was refunded", body = ErrorBody),
    ),
)]
pub async fn graph_funder(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<FirstFunder>, Response> {
    let run = async {
        let args: FindFirstFunderArgs = body_args("find_first_funder", body)?;
        crate::graph::funder::find_first_funder(&state.graph(), &principal, args).await
    };
    run.await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

/// Buy research credits: answers HTTP 402 with an x402 challenge for the
/// amount, and with the payment (body `payment` or the `X-PAYMENT` header)
/// and its `quote_id` settles it and credits the account, once.
#[utoipa::path(
    post,
    path = routes::CREDITS_TOPUP.path,
    tag = "research",
    request_body = crate::credits::topup::TopUpArgs,
    responses(
        (status = 200, description = "Settled and credited (credited_atomic 0 when this payment was credited before)", body = crate::credits::topup::TopUp),
        (status = 400, description = "An amount the server does not sell, or one that would take the balance past its maximum (100,000 USD)", body = ErrorBody),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
        (status = 402, description = "The x402 challenge for the amount, or a refused payment with a fresh challenge", body = ErrorBody),
        (status = 403, description = "The token lacks a scope (buying credits needs read and scan), or a cross-site browser request or a foreign Origin", body = ErrorBody),
        (status = 503, description = "This server takes no payments, or the RPC failed (nothing charged)", body = ErrorBody),
    ),
)]
pub async fn credits_topup(
    State(state): State<AppState>,
    Caller(principal, presented): Caller,
    JsonBody(body): JsonBody<Value>,
) -> Result<Json<crate::credits::topup::TopUp>, Response> {
    let run = async {
        let args: crate::credits::topup::TopUpArgs = serde_json::from_value(body)
            .map_err(|e| crate::error::AppError::invalid_params(format!("body: {e}")))?;
        crate::credits::topup::top_up(
            &state.paywall(),
            &state.credits(),
            &principal,
            args,
            &presented,
        )
        .await
    };
    run.await
        .map(Json)
        .map_err(|err| account_refusal(&state, err))
}

/// Your research credits: balance, prices, top-up amounts, movements.
#[utoipa::path(
    get,
    path = routes::CREDITS.path,
    tag = "research",
    responses(
        (status = 200, description = "The balance (the sum of the movements) and the movements, newest first", body = CreditsView),
        (status = 401, description = "No account: present an MCP token or API key", body = ErrorBody),
    ),
)]
pub async fn credits_get(
    State(state): State<AppState>,
    Caller(principal, _): Caller,
) -> Result<Json<CreditsView>, Response> {
    let account = principal
        .require_account("reading research credits")
        .map_err(|err| crate::http::unauthenticated(&state, err))?;
    principal
        .permit(Action::ReadAccount)
        .map_err(IntoResponse::into_response)?;
    state
        .credits()
        .view(&account.account_id)
        .await
        .map(Json)
        .map_err(IntoResponse::into_response)
}
