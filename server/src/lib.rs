//! Ledger's server: the backend behind every surface (MCP at `/mcp`, REST at
//! `/v1`, discovery documents, the Leptos portal) and the workers.
//!
//! Layout, top down (docs/architecture.md has the table): the surfaces
//! `startup` (the router, binding, graceful shutdown), `v1` (REST), `mcp`
//! (transport and tool registry), `portal` (pages, forms, the OAuth consent
//! page), `oauth_http` (OAuth's JSON endpoints), `discovery`, `site`,
//! `http` (the edge: credentials, bodies, guards), `state` (the services and
//! the small context each domain call takes), `worker`, `cli`; the domain
//! `reads` (the paid-read prelude and `get_ledger`), `analytics`, `reports`,
//! `share`, `graph`, `credits`, `jobs`, `access`, `payments` (the typed
//! paywall), `routes` (every REST path once), `caches` (the read path's
//! caches, each with its invalidation rule), `auth` (the
//! credential resolver, sign-in), `oauth` (the authorization server's
//! protocol), `accounts` (tokens, watchlist, and `accounts::principal`, who
//! is calling), `limits`, `prices`, `solana` (the RPC client); the
//! `ledger-store` crate as `store` (sqlx over SQLite and PostgreSQL); the
//! `ledger-core` crate as `values`, `ids`, `params`, `clock`, `basis` and
//! the pure half of `ledger` and `solana` (the model, decoder, cursors,
//! `WalletAddress`); and `config`, `telemetry`, `error` (one error, three
//! renderings). Domain modules know nothing of
//! HTTP; the REST handlers and MCP tools are thin adapters over the same
//! functions. Each module imports only the ones below it, but for the few
//! arrows back up that docs/architecture.md counts.

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
pub mod oauth_http;
pub mod payments;
pub mod portal;
pub mod prices;
pub mod reads;
pub mod reports;
pub mod routes;
pub mod sample;
pub mod share;
pub mod site;
pub mod solana;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod v1;
pub mod worker;
