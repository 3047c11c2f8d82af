//! Ledger's server: the backend behind every surface (MCP at `/mcp`, REST at
//! `/v1`, discovery documents, the Leptos portal) and the workers.
//!
//! Layout: `config` (layered settings), `telemetry` (logging), `startup`
//! (the router, binding, graceful shutdown), `store` (sqlx over SQLite and
//! PostgreSQL), `auth` (principals), `mcp` (transport and tool registry),
//! `v1` (REST handlers), `discovery` (server card, llms.txt, OpenAPI), `site`
//! (portal pages and static assets), `worker` (background work), `error`
//! (one error, three renderings). Domain modules know nothing of HTTP; the
//! REST handlers and MCP tools are thin adapters over the same functions.

#![recursion_limit = "256"]

// The pure domain and the storage are crates of their own (server/core,
// server/store), so the compiler keeps their direction: core <- store <-
// server. They are re-exported under their old module names, so every
// module of this crate names a type one way.
pub use ledger_core::{basis, clock, ids, params, values};
pub use ledger_store as store;

pub mod access;
pub mod accounts;
pub mod analytics;
pub mod auth;
pub mod caches;
pub mod cli;
pub mod config;
pub mod credits;
pub mod discovery;
pub mod error;
pub mod graph;
pub mod http;
pub mod jobs;
pub mod ledger;
pub mod limits;
pub mod mcp;
pub mod oauth;
pub mod payments;
pub mod portal;
pub mod prices;
pub mod reads;
pub mod reports;
pub mod routes;
pub mod share;
pub mod site;
pub mod solana;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod v1;
pub mod worker;
