//! MCP over Streamable HTTP at `/mcp`, written by hand.
//!
//! Why not rmcp: its Streamable HTTP server owns the session map and the
//! version handshake, and it does not speak the stateless 2026-07-28 revision
//! (per-request `_meta`, `server/discover`, header checks), JSON-RPC batches
//! for 2025-03-26 clients, our rate limits and origin rules before the body
//! is read, or sessions kept in the database so several instances share
//! them. The wire format is small; owning it keeps every rule in SPEC T1-T11
//! in one place (`transport` for HTTP, `dispatch` for JSON-RPC methods).
//!
//! * [`version`]: the protocol versions and what each allows.
//! * [`jsonrpc`]: message classification and error objects.
//! * [`dispatch`]: the methods, for legacy (initialize-era) and 2026-07-28
//!   requests.
//! * [`registry`] and [`tools`]: the tool registry and the tools.
//! * [`inline`]: results over 256 KiB answered as a link to their REST route.
//! * [`schema`]: portable tool schemas and the argument check.
//! * [`transport`]: the axum handlers (POST, GET, DELETE).

pub mod dispatch;
pub mod inline;
pub mod jsonrpc;
pub mod registry;
pub mod report_tool;
pub mod research;
pub mod schema;
pub mod tools;
pub mod transport;
pub mod version;

/// The name this server reports in `serverInfo`.
pub const SERVER_NAME: &str = "ledger";
/// The human title in `serverInfo`.
pub const SERVER_TITLE: &str = "Ledger";
/// Instructions for a model, sent on initialize and discover: they say
/// whether this server charges, since a model told to pay that meets no
/// challenge (or one that cannot be paid) is misled.
pub fn instructions(payments: &crate::payments::PaymentsView) -> String {
    use crate::payments::PaymentsModeView;
    let paying = match payments.mode {
        PaymentsModeView::X402 => format!(
            "Paid tools answer payment_required with an x402 challenge (USDC on {}) in \
             structuredContent.x402: pay it and retry with the payment and quote_id arguments, \
             or pass a receipt from an earlier payment.",
            payments.network_name()
        ),
        PaymentsModeView::Off => "Payments are off on this server: paid tools answer without \
            charge and need no payment or receipt (scan_wallet still takes a quote_id from \
            quote_wallet)."
            .to_owned(),
        PaymentsModeView::PaymentsNotConfigured => "Payments are on but not configured on this \
            server (no treasury or fee payer): paid tools answer payment_required with status \
            payments_not_configured and cannot be paid yet; free tools work."
            .to_owned(),
    };
    format!(
        "Ledger reports on Solana wallets. quote_wallet prices a scan, scan_wallet starts it, \
         get_job polls it, then read the ledger, positions, value history, flows and reports. \
         {paying} ping tells you who you are connected as and how this server takes payment."
    )
}

/// `serverInfo` as MCP describes the implementation.
pub fn server_info() -> serde_json::Value {
    serde_json::json!({
        "name": SERVER_NAME,
        "title": SERVER_TITLE,
        "version": env!("CARGO_PKG_VERSION"),
    })
}
