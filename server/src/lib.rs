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

pub mod access;
pub mod accounts;
pub mod analytics;
pub mod auth;
pub mod basis;
pub mod cli;
pub mod clock;
pub mod config;
pub mod credits;
pub mod discovery;
pub mod error;
pub mod graph;
pub mod http;
pub mod ids;
pub mod jobs;
pub mod ledger;
pub mod limits;
pub mod mcp;
pub mod oauth;
pub mod oauth_http;
pub mod params;
pub mod payments;
pub mod portal;
pub mod prices;
pub mod reads;
pub mod reports;
pub mod share;
pub mod site;
pub mod solana;
pub mod startup;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod v1;
pub mod values;
pub mod worker;
