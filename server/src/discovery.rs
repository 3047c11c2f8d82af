//! Documents that describe the service to machines, all generated from the
//! code: the MCP server card, `/llms.txt` (from the tool registry) and the
//! OpenAPI document (utoipa, from the REST handlers). None is hand-kept.

use axum::{
    extract::State,
    http::header,
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

use crate::{mcp, state::AppState};

/// `GET /.well-known/mcp/server-card.json`.
pub async fn server_card(State(state): State<AppState>) -> Response {
    axum::Json(server_card_json(&state)).into_response()
}

pub fn server_card_json(state: &AppState) -> Value {
    let public = state.public_url();
    json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/mcp-server-card/v1.json",
        "version": "1.0",
        "protocolVersion": mcp::version::NEWEST,
        "supportedProtocolVersions": mcp::version::SUPPORTED,
        "serverInfo": mcp::server_info(),
        "description": "Solana wallet reporting: quote, pay per call in USDC through x402, scan and read a wallet's ledger, positions, value history, flows and tax reports.",
        "documentationUrl": format!("{public}/llms.txt"),
        "transport": { "type": "streamable-http", "endpoint": format!("{public}/mcp") },
        "capabilities": { "tools": { "listChanged": false } },
        "authentication": {
            "required": false,
            "schemes": ["bearer"],
            "protectedResourceMetadata": format!("{public}/.well-known/oauth-protected-resource"),
            "oauth": {
                "endpoint": format!("{public}/mcp/account"),
                "description": format!(
                    "Connect with OAuth 2.1 here: it answers an anonymous caller 401 with the challenge, and the browser sign-in and consent give the client a token for your account. {}",
                    app::snippets::which_url(public)
                ),
                "protectedResourceMetadata": format!("{public}/.well-known/oauth-protected-resource/mcp/account"),
                "authorizationServer": format!("{public}/.well-known/oauth-authorization-server"),
            },
        },
        "instructions": mcp::instructions(&state.payments_view()),
        "tools": crate::mcp::tools::registry().iter().map(|t| t.listing()).collect::<Vec<_>>(),
    })
}

/// `GET /.well-known/oauth-protected-resource` (RFC 9728): what a client
/// that received our 401 learns about this resource.
pub async fn protected_resource(state: State<AppState>) -> Response {
    crate::oauth_http::protected_resource_mcp(state).await
}

/// `GET /llms.txt`: the service for a language model, paid routes marked.
pub async fn llms_txt(State(state): State<AppState>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        llms_txt_text(&state),
    )
        .into_response()
}

pub fn llms_txt_text(state: &AppState) -> String {
    let public = state.public_url();
    let mut out = format!(
        "# Ledger\n\n\
         > Solana wallet reports for people and AI agents: quote a wallet, pay per call in USDC \
         on Solana through x402, scan it, and read its ledger, positions, value history, flows \
         and tax reports over MCP and REST.\n\n\
         MCP endpoint (Streamable HTTP, JSON-RPC 2.0): {public}/mcp\n\
         Protocol versions: {versions}\n\
         Authentication: none (anonymous, pay per call) or `Authorization: Bearer lm_…` / `lk_…`.\n\
         OAuth 2.1 (sign in and consent in a browser, no pasted token): connect to {public}/mcp/account, which answers 401 with the challenge; metadata at {public}/.well-known/oauth-authorization-server.\n\
         {which}\n\
         Anonymous callers are limited per client IP; over the limit is HTTP 429 with Retry-After.\n\
         Payments: {payments}.\n\n\
         ## Tools\n\n",
        versions = mcp::version::SUPPORTED.join(", "),
        payments = state.payments_view().sentence(),
        which = app::snippets::which_url(public),
    );
    for tool in crate::mcp::tools::registry().iter() {
        let paid = if tool.meta.tier.is_paid() {
            " (paid)"
        } else {
            ""
        };
        let rest = tool
            .meta
            .rest
            .map(|r| format!(" REST: `{} {}{}`{paid}.", r.method, public, r.path))
            .unwrap_or_default();
        out.push_str(&format!(
            "- `{}` [{}]: {}{}\n",
            tool.meta.name,
            tool.meta.tier.as_str(),
            tool.meta.description,
            rest
        ));
    }
    out.push_str("\n## Client configuration\n\n");
    out.push_str(
        "Every host that sends a bearer wants an MCP token (`lm_…`) in place of `lm_...`; leave \
         the header out to connect anonymously.\n",
    );
    let mcp_url = app::snippets::mcp_url(public);
    for snippet in app::snippets::token_snippets(&mcp_url, app::snippets::TOKEN_PLACEHOLDER) {
        out.push_str(&format!(
            "\n### {}\n\n{}\n\n```{}\n{}\n```\n",
            snippet.title, snippet.intro, snippet.label, snippet.code
        ));
    }
    out.push_str(&format!(
        "\n## Documents\n\n\
         - [OpenAPI]({public}/v1/openapi.json): every REST route and its parameters\n\
         - [MCP server card]({public}/.well-known/mcp/server-card.json)\n\
         - [Tools, for people]({public}/tools)\n"
    ));
    out
}
