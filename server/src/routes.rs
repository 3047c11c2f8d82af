//! Every REST route's method and path, written once. The route's handler
//! takes its path from here in its `#[utoipa::path]`, and `v1::router`
//! registers each handler with utoipa-axum's `routes!`, so the router and
//! the OpenAPI document are one declaration. The MCP tool registry names a
//! tool's REST twin with these constants, challenges name their resource
//! with them and `limits::costs` prices them; a test holds every twin to
//! an operation of the built document (`v1::tests`).
//!
//! A leaf: it imports nothing, so the surfaces and the domain modules that
//! name a route can all import it without a circle.

/// A REST route: its method (upper case) and its path template, with
/// `{name}` segments as axum and OpenAPI write them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RestRoute {
    pub method: &'static str,
    pub path: &'static str,
}

impl RestRoute {
    const fn get(path: &'static str) -> Self {
        Self {
            method: "GET",
            path,
        }
    }

    const fn post(path: &'static str) -> Self {
        Self {
            method: "POST",
            path,
        }
    }

    const fn delete(path: &'static str) -> Self {
        Self {
            method: "DELETE",
            path,
        }
    }

    /// The path with `{address}` filled in: the resource a wallet read's
    /// challenge names.
    pub fn for_wallet(self, address: &str) -> String {
        self.path.replace("{address}", address)
    }
}

pub const HEALTH: RestRoute = RestRoute::get("/healthz");
pub const READY: RestRoute = RestRoute::get("/readyz");
pub const OPENAPI: RestRoute = RestRoute::get("/v1/openapi.json");
pub const PING: RestRoute = RestRoute::get("/v1/ping");

pub const QUOTES: RestRoute = RestRoute::post("/v1/quotes");
pub const SCANS: RestRoute = RestRoute::post("/v1/scans");
pub const JOB: RestRoute = RestRoute::get("/v1/jobs/{job_id}");

pub const LEDGER: RestRoute = RestRoute::get("/v1/wallets/{address}/ledger");
pub const POSITIONS: RestRoute = RestRoute::get("/v1/wallets/{address}/positions");
pub const VALUE_HISTORY: RestRoute = RestRoute::get("/v1/wallets/{address}/value-history");
pub const FLOWS: RestRoute = RestRoute::get("/v1/wallets/{address}/flows");
pub const REPORTS: RestRoute = RestRoute::get("/v1/reports");

pub const PRICES: RestRoute = RestRoute::get("/v1/prices");
pub const PRICE_HISTORY: RestRoute = RestRoute::get("/v1/prices/history");

pub const PAYMENTS: RestRoute = RestRoute::get("/v1/payments");
pub const WALLETS_LIST: RestRoute = RestRoute::get("/v1/wallets");
pub const WALLETS_ADD: RestRoute = RestRoute::post("/v1/wallets");
pub const WALLETS_REMOVE: RestRoute = RestRoute::delete("/v1/wallets/{address}");
pub const LABELS: RestRoute = RestRoute::post("/v1/labels");
pub const TAX_DEFAULTS: RestRoute = RestRoute::post("/v1/settings/tax");
pub const TAX_DEFAULTS_GET: RestRoute = RestRoute::get("/v1/settings/tax");

pub const GRAPH_EXPAND: RestRoute = RestRoute::post("/v1/graph/expand");
pub const GRAPH_FUNDER: RestRoute = RestRoute::post("/v1/graph/funder");
pub const CREDITS: RestRoute = RestRoute::get("/v1/credits");
pub const CREDITS_TOPUP: RestRoute = RestRoute::post("/v1/credits");

pub const SNAPSHOTS_LIST: RestRoute = RestRoute::get("/v1/snapshots");
pub const SNAPSHOTS_CREATE: RestRoute = RestRoute::post("/v1/snapshots");
pub const SNAPSHOTS_REVOKE: RestRoute = RestRoute::delete("/v1/snapshots/{token}");
