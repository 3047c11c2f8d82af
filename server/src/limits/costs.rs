//! What one call costs against the bearer budgets
//! (`rate_limit.account_*`, `rate_limit.bearer_ip_*`), in units, by what
//! it asks of the world outside our database: one table for every tool
//! and its REST twin, and for the REST routes that are no tool's twin.
//!
//! The classes rather than per-tool numbers keep the table honest: a tool
//! moves class when its upstream work changes (a read starts asking a
//! price source), and the class says why it costs what it does. A test
//! holds the table to the tool registry, so a new tool cannot go unpriced.
//! docs/configuration.md#what-a-call-costs is the same table for people.

/// A class of call, by its upstream work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    /// Answered from our own database: `ping`, a job, the watchlist,
    /// labels; also every MCP message that is not a tool call
    /// (`initialize`, `tools/list`, a notification).
    Local,
    /// Reads a scanned wallet's stored legs: a ledger page, its flows, a
    /// share link of it.
    StoredRead,
    /// May ask a price source on the internet: spot prices, a missing
    /// stretch of price history, a valuation at today's price.
    PriceSource,
    /// Replays a whole ledger through the cost-basis engine and renders a
    /// file (`get_report`).
    Replay,
    /// Calls Solana RPC: a quote counts signature pages, a scan and a live
    /// expansion read transactions, a top-up verifies and settles a
    /// payment on chain.
    Chain,
}

impl Cost {
    /// Its units.
    pub const fn units(self) -> u32 {
        match self {
            Cost::Local => 1,
            Cost::StoredRead => 2,
            Cost::PriceSource => 3,
            Cost::Replay => 5,
            Cost::Chain => DEAREST_UNITS,
        }
    }
}

/// The units of the dearest call: a burst smaller than this could never
/// admit it (configuration validation refuses one).
pub const DEAREST_UNITS: u32 = 10;

/// One row: a tool (none for a route that is no tool's twin), its REST
/// route, and its cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub tool: Option<&'static str>,
    pub method: &'static str,
    pub path: &'static str,
    pub cost: Cost,
}

const fn tool(name: &'static str, method: &'static str, path: &'static str, cost: Cost) -> Row {
    Row {
        tool: Some(name),
        method,
        path,
        cost,
    }
}

/// Every tool and priced route. A route not listed costs [`Cost::Local`].
pub const TABLE: [Row; 19] = [
    tool("ping", "GET", "/v1/ping", Cost::Local),
    tool("get_job", "GET", "/v1/jobs/{job_id}", Cost::Local),
    tool("list_wallets", "GET", "/v1/wallets", Cost::Local),
    tool("add_wallet", "POST", "/v1/wallets", Cost::Local),
    tool("set_address_label", "POST", "/v1/labels", Cost::Local),
    tool(
        "revoke_snapshot",
        "DELETE",
        "/v1/snapshots/{token}",
        Cost::Local,
    ),
    tool(
        "get_ledger",
        "GET",
        "/v1/wallets/{address}/ledger",
        Cost::StoredRead,
    ),
    tool(
        "get_flows",
        "GET",
        "/v1/wallets/{address}/flows",
        Cost::StoredRead,
    ),
    tool("create_snapshot", "POST", "/v1/snapshots", Cost::StoredRead),
    tool("get_prices", "GET", "/v1/prices", Cost::PriceSource),
    tool(
        "get_price_history",
        "GET",
        "/v1/prices/history",
        Cost::PriceSource,
    ),
    tool(
        "get_positions",
        "GET",
        "/v1/wallets/{address}/positions",
        Cost::PriceSource,
    ),
    tool(
        "get_value_history",
        "GET",
        "/v1/wallets/{address}/value-history",
        Cost::PriceSource,
    ),
    tool("get_report", "GET", "/v1/reports", Cost::Replay),
    tool("quote_wallet", "POST", "/v1/quotes", Cost::Chain),
    tool("scan_wallet", "POST", "/v1/scans", Cost::Chain),
    tool("expand_graph", "POST", "/v1/graph/expand", Cost::Chain),
    tool("find_first_funder", "POST", "/v1/graph/funder", Cost::Chain),
    Row {
        tool: None,
        method: "POST",
        path: "/v1/credits",
        cost: Cost::Chain,
    },
];

/// What a call of tool `name` costs. An unknown name costs
/// [`Cost::Local`]: the call is refused before it runs.
pub fn of_tool(name: &str) -> Cost {
    TABLE
        .iter()
        .find(|row| row.tool == Some(name))
        .map_or(Cost::Local, |row| row.cost)
}

/// What a REST request costs: its route as the router matched it
/// (`/v1/wallets/{address}/ledger`), and its method.
pub fn of_route(method: &str, path: &str) -> Cost {
    TABLE
        .iter()
        .find(|row| row.path == path && row.method.eq_ignore_ascii_case(method))
        .map_or(Cost::Local, |row| row.cost)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rpc_call_costs_more_than_a_cached_read_which_costs_more_than_a_local_one() {
        assert!(of_tool("quote_wallet").units() > of_tool("get_ledger").units());
        assert!(of_tool("get_ledger").units() > of_tool("ping").units());
        assert_eq!(of_tool("quote_wallet").units(), DEAREST_UNITS);
        assert_eq!(
            of_route("GET", "/v1/wallets/{address}/ledger"),
            Cost::StoredRead
        );
        assert_eq!(of_route("post", "/v1/credits"), Cost::Chain);
        assert_eq!(of_route("GET", "/v1/credits"), Cost::Local);
        assert_eq!(of_tool("no_such_tool"), Cost::Local);
    }

    #[test]
    fn no_class_costs_more_than_the_dearest() {
        for row in TABLE {
            assert!(row.cost.units() <= DEAREST_UNITS, "{row:?}");
        }
    }
}
