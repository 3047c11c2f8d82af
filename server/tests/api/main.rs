//! Integration tests against the real server (see `helpers`). One binary,
//! so the crate links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod accounts_cli;
mod analytics;
mod bearers;
mod binary;
mod bounds;
mod connections;
mod contract;
mod discovery;
#[path = "../support/ecb_standin.rs"]
mod ecb_standin;
mod edge;
#[path = "../support/encoding.rs"]
mod encoding_support;
mod headers;
mod helpers;
mod ledger;
mod limits;
mod mcp_limits;
mod mcp_stateless;
mod mcp_transport;
mod metrics;
mod oauth;
#[path = "../support/oidc_standin.rs"]
mod oidc_standin;
mod pages;
mod payments;
mod portal;
mod portal_tax;
#[path = "../support/price_standin.rs"]
mod price_standin;
mod prices;
mod quotes;
#[path = "../support/recorded.rs"]
mod recorded;
mod reports;
mod reports_tax;
mod rescan;
mod research;
mod sample;
mod scan_credits;
mod scans;
mod schemas;
mod share;
mod staking;
#[path = "../support/rpc_standin.rs"]
mod standin;
mod storage;
