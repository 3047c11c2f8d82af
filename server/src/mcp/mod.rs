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
//! * [`schema`]: portable tool schemas and the argument check.
//! * [`transport`]: the axum handlers (POST, GET, DELETE).

pub mod dispatch;
pub mod jsonrpc;
pub mod registry;
pub mod schema;
pub mod tools;
pub mod transport;
pub mod version;

/// The name this server reports in `serverInfo`.
pub const SERVER_NAME: &str = "ledger";
/// The human title in `serverInfo`.
pub const SERVER_TITLE: &str = "Ledger";
/// Instructions for a model, sent on initialize and discover.
pub const INSTRUCTIONS: &str = "Ledger reports on Solana wallets. quote_wallet prices a scan, \
scan_wallet starts it, get_job polls it, then read the ledger, positions, value history, flows \
and reports. Paid tools answer payment_required with an x402 challenge in \
structuredContent.x402: pay it and retry with the payment and quote_id arguments, or pass a \
receipt from an earlier payment. ping tells you who you are connected as.";

/// `serverInfo` as MCP describes the implementation.
pub fn server_info() -> serde_json::Value {
    serde_json::json!({
        "name": SERVER_NAME,
        "title": SERVER_TITLE,
        "version": env!("CARGO_PKG_VERSION"),
    })
}
