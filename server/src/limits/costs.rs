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
//!
//! Two things a call carries change its price ([`Shape`], [`units`]): a
//! report is priced per wallet it replays, a PDF dearer still; and any call
//! presenting a payment costs at least a call to Solana RPC, since
//! verifying and settling the payment is one (`isBlockhashValid`,
//! `simulateTransaction`, sending it).

use crate::routes::{self, RestRoute};

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
    /// Replays whole ledgers through the cost-basis engine and renders a
    /// file (`get_report`): priced per wallet ([`units`]).
    Replay,
    /// Calls Solana RPC: a quote counts signature pages, a scan and a live
    /// expansion read transactions, a top-up verifies and settles a
    /// payment on chain.
    Chain,
}

impl Cost {
    /// Its units (a [`Cost::Replay`]'s for one wallet).
    pub const fn units(self) -> u32 {
        match self {
            Cost::Local => 1,
            Cost::StoredRead => 2,
            Cost::PriceSource => 3,
            Cost::Replay => REPLAY_UNITS_PER_WALLET,
            Cost::Chain => CHAIN_UNITS,
        }
    }
}

/// A call to Solana RPC, and the least a call presenting a payment costs.
pub const CHAIN_UNITS: u32 = 10;
/// A report, for each wallet it replays.
pub const REPLAY_UNITS_PER_WALLET: u32 = 5;
/// A report rendered as a PDF, on top of its wallets.
pub const PDF_UNITS: u32 = 5;
/// The most wallets one report covers (`get_report`'s schema says so too).
pub const MAX_REPORT_WALLETS: u32 = 20;

/// The units of the dearest single call, a PDF report of the most wallets:
/// a burst smaller than this could never admit it (configuration
/// validation refuses one).
pub const DEAREST_UNITS: u32 = REPLAY_UNITS_PER_WALLET * MAX_REPORT_WALLETS + PDF_UNITS;
// The configuration checks bursts against its own copy of this figure.
const _: () = assert!(DEAREST_UNITS == crate::config::DEAREST_CALL_UNITS);

/// What a call carries that changes its price, as the edge reads it from a
/// tool call's arguments or a REST query string (`http::call_shape`,
/// `http::query_shape`) and from the request's payment headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// Wallets named (`wallets`, a report's).
    pub wallets: u32,
    /// The format asked for is a PDF.
    pub pdf: bool,
    /// A payment is presented (a `payment` argument, or an `X-PAYMENT` /
    /// `PAYMENT-SIGNATURE` header).
    pub payment: bool,
}

impl Shape {
    /// This shape, with a payment presented in the request's headers.
    pub fn paying(self, header_payment: bool) -> Self {
        Self {
            payment: self.payment || header_payment,
            ..self
        }
    }
}

/// What a call of class `cost` carrying `shape` costs, in units: a report
/// its per-wallet units for each wallet (at least one, at most the most a
/// report may name), plus [`PDF_UNITS`] for a PDF; any call presenting a
/// payment at least [`CHAIN_UNITS`].
pub fn units(cost: Cost, shape: Shape) -> u32 {
    let units = match cost {
        Cost::Replay => {
            let wallets = shape.wallets.clamp(1, MAX_REPORT_WALLETS);
            cost.units() * wallets + if shape.pdf { PDF_UNITS } else { 0 }
        }
        other => other.units(),
    };
    if shape.payment {
        units.max(CHAIN_UNITS)
    } else {
        units
    }
}

/// One row: a tool (none for a route that is no tool's twin), its REST
/// route, and its cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub tool: Option<&'static str>,
    pub method: &'static str,
    pub path: &'static str,
    pub cost: Cost,
}

const fn tool(name: &'static str, route: RestRoute, cost: Cost) -> Row {
    Row {
        tool: Some(name),
        method: route.method,
        path: route.path,
        cost,
    }
}

/// Every tool and priced route. A route not listed costs [`Cost::Local`].
pub const TABLE: [Row; 19] = [
    tool("ping", routes::PING, Cost::Local),
    tool("get_job", routes::JOB, Cost::Local),
    tool("list_wallets", routes::WALLETS_LIST, Cost::Local),
    tool("add_wallet", routes::WALLETS_ADD, Cost::Local),
    tool("set_address_label", routes::LABELS, Cost::Local),
    tool("revoke_snapshot", routes::SNAPSHOTS_REVOKE, Cost::Local),
    tool("get_ledger", routes::LEDGER, Cost::StoredRead),
    tool("get_flows", routes::FLOWS, Cost::StoredRead),
    tool(
        "create_snapshot",
        routes::SNAPSHOTS_CREATE,
        Cost::StoredRead,
    ),
    tool("get_prices", routes::PRICES, Cost::PriceSource),
    tool(
        "get_price_history",
        routes::PRICE_HISTORY,
        Cost::PriceSource,
    ),
    tool("get_positions", routes::POSITIONS, Cost::PriceSource),
    tool(
        "get_value_history",
        routes::VALUE_HISTORY,
        Cost::PriceSource,
    ),
    tool("get_report", routes::REPORTS, Cost::Replay),
    tool("quote_wallet", routes::QUOTES, Cost::Chain),
    tool("scan_wallet", routes::SCANS, Cost::Chain),
    tool("expand_graph", routes::GRAPH_EXPAND, Cost::Chain),
    tool("find_first_funder", routes::GRAPH_FUNDER, Cost::Chain),
    Row {
        tool: None,
        method: routes::CREDITS_TOPUP.method,
        path: routes::CREDITS_TOPUP.path,
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
        assert_eq!(of_tool("quote_wallet").units(), CHAIN_UNITS);
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
        let dearest = Shape {
            wallets: MAX_REPORT_WALLETS,
            pdf: true,
            payment: true,
        };
        assert_eq!(units(Cost::Replay, dearest), DEAREST_UNITS);
        let more = Shape {
            wallets: 1000,
            ..dearest
        };
        assert_eq!(
            units(Cost::Replay, more),
            DEAREST_UNITS,
            "capped by the schema's most"
        );
    }

    #[test]
    fn a_report_costs_its_per_wallet_units_for_each_wallet_and_more_as_a_pdf() {
        let four = Shape {
            wallets: 4,
            ..Shape::default()
        };
        assert_eq!(units(Cost::Replay, four), 4 * REPLAY_UNITS_PER_WALLET);
        let pdf = Shape {
            wallets: 3,
            pdf: true,
            payment: false,
        };
        assert_eq!(
            units(Cost::Replay, pdf),
            3 * REPLAY_UNITS_PER_WALLET + PDF_UNITS
        );
        // Named no wallet (refused before it runs): one wallet's price.
        assert_eq!(
            units(Cost::Replay, Shape::default()),
            REPLAY_UNITS_PER_WALLET
        );
    }

    #[test]
    fn presenting_a_payment_costs_at_least_a_chain_call() {
        let paying = Shape::default().paying(true);
        assert_eq!(units(Cost::StoredRead, paying), CHAIN_UNITS);
        assert_eq!(units(Cost::Local, paying), CHAIN_UNITS);
        assert_eq!(units(Cost::Chain, paying), CHAIN_UNITS);
        assert_eq!(
            units(Cost::StoredRead, Shape::default()),
            Cost::StoredRead.units()
        );
    }
}
