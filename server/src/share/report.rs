//! A wallet's report as the share page and the portal's report view show
//! it: value over the range, allocation by mint, the counterparty graph,
//! open positions and one page of the ledger. Every part comes from the
//! read functions the tools use (`get_value_history`, `get_positions`,
//! `get_flows`, `get_ledger`) called as the principal the caller passes (a
//! share link's), so the page and the tools cannot disagree and the page
//! reads nothing the access module would not grant.

use std::str::FromStr as _;

use rust_decimal::Decimal;
use serde::Serialize;

use super::{ChartRange, Denomination};
use crate::{
    accounts::Principal,
    analytics::{
        flows::{self, Flows, GetFlowsArgs},
        positions::{self, GetPositionsArgs, Positions, ReplayCache},
        value_history::{self, GetValueHistoryArgs, ValueHistory},
    },
    error::AppError,
    payments::{PayArgs, Presented},
    reads::Reads,
    reads::ledger_page::{self, GetLedgerArgs, LedgerPage, PageCache},
    solana::WalletAddress,
    values::{TimeBound, rfc3339},
};

/// Ledger entries per page of the report.
pub const LEDGER_PAGE: u32 = 50;

/// Counterparties per direction in the flow graph.
pub const FLOW_TOP: u32 = 12;

/// What to read.
#[derive(Clone, Debug)]
pub struct ReportQuery {
    pub wallet: WalletAddress,
    pub range: ChartRange,
    pub denominate: Denomination,
    /// The ledger page to show: a `next_cursor` of an earlier page.
    pub cursor: Option<String>,
}

/// One mint's share of the wallet's value now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Slice {
    pub mint: String,
    /// SOL for native SOL, else the mint shortened.
    pub label: String,
    /// USD, a decimal string with cents.
    pub usd: String,
    /// Percent of the priced value, one decimal.
    pub pct: String,
}

/// The headline figures: value at the range's end and its change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// USD or SOL.
    pub unit: String,
    /// Value at the last point, in `unit`; null without points.
    pub value_end: Option<String>,
    /// Value at the first point of the range.
    pub value_start: Option<String>,
    /// The change of the holdings priced at both ends, signed: the
    /// holdings in `excluded` are left out, so an old or missing price
    /// never reads as a loss.
    pub change: Option<String>,
    /// The change in percent of those holdings' value at the start; null
    /// when that was zero.
    pub change_pct: Option<String>,
    /// Mints held at either end whose price there is stale or missing:
    /// left out of the change and its percentage.
    pub excluded: Vec<String>,
    /// The mints the last point values at an earlier close.
    pub stale: Vec<value_history::StaleMint>,
}

/// A wallet's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    pub address: String,
    pub range: ChartRange,
    pub denominate: Denomination,
    /// RFC 3339.
    pub generated_at: String,
    pub summary: Summary,
    pub allocation: Vec<Slice>,
    pub value: ValueHistory,
    pub positions: Positions,
    pub flows: Flows,
    pub ledger: LedgerPage,
}

/// A mint as people read it: its symbol from the token list
/// (`reports/tokens.json`), else the address shortened.
pub fn mint_label(mint: &str) -> String {
    crate::values::format::mint_name(mint, Some(crate::reports::tokens::symbol(mint)))
}

fn dec(text: &str) -> Option<Decimal> {
    Decimal::from_str(text).ok()
}

/// The value of a point in `denominate`.
pub fn point_value(p: &value_history::ValuePoint, denominate: Denomination) -> Option<Decimal> {
    match denominate {
        Denomination::Usd => dec(&p.usd),
        Denomination::Sol => p.sol.as_deref().and_then(dec),
    }
}

/// Money for people: two decimals for USD, four for SOL.
pub fn money(d: Decimal, denominate: Denomination) -> String {
    let places = match denominate {
        Denomination::Usd => 2,
        Denomination::Sol => 4,
    };
    d.round_dp(places).to_string()
}

/// A decimal string with thousands separators, for headlines and the card
/// (`-1234567.5` reads `-1,234,567.5`).
pub fn grouped(text: &str) -> String {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let (int, frac) = match rest.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (rest, None),
    };
    if !int.bytes().all(|b| b.is_ascii_digit()) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + int.len() / 3);
    out.push_str(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// The mints of a point whose value is not a fresh price there: held
/// with no USD value, or valued at an earlier close.
fn not_fresh(p: &value_history::ValuePoint) -> impl Iterator<Item = &str> {
    p.holdings
        .iter()
        .filter(|h| h.usd.is_none())
        .map(|h| h.mint.as_str())
        .chain(p.stale_mints.iter().map(|s| s.mint.as_str()))
}

/// A point's value in `denominate` over its holdings other than
/// `excluded`: the USD sum of those, converted at the point's own SOL
/// price (its `sol` over its `usd`) for SOL.
fn comparable(
    p: &value_history::ValuePoint,
    excluded: &std::collections::BTreeSet<&str>,
    denominate: Denomination,
) -> Option<Decimal> {
    let usd: Decimal = p
        .holdings
        .iter()
        .filter(|h| !excluded.contains(h.mint.as_str()))
        .filter_map(|h| dec(h.usd.as_deref()?))
        .sum();
    match denominate {
        Denomination::Usd => Some(usd),
        Denomination::Sol => {
            let (total_usd, total_sol) = (dec(&p.usd)?, point_value(p, denominate)?);
            if total_usd.is_zero() {
                Some(usd)
            } else {
                Some(usd * total_sol / total_usd)
            }
        }
    }
}

fn summary(value: &ValueHistory, denominate: Denomination) -> Summary {
    let (first_point, last_point) = (value.points.first(), value.points.last());
    let first = first_point.and_then(|p| point_value(p, denominate));
    let last = last_point.and_then(|p| point_value(p, denominate));
    // A holding stale or unpriced at either end has no honest change: it
    // is left out of both ends, and the page says so.
    let excluded: std::collections::BTreeSet<&str> = first_point
        .into_iter()
        .chain(last_point)
        .flat_map(not_fresh)
        .collect();
    let start = first_point.and_then(|p| comparable(p, &excluded, denominate));
    let end = last_point.and_then(|p| comparable(p, &excluded, denominate));
    let change = start.zip(end).map(|(a, b)| b - a);
    let change_pct = start
        .zip(change)
        .filter(|(a, _)| !a.is_zero())
        .map(|(a, c)| (c / a * Decimal::ONE_HUNDRED).round_dp(1).to_string());
    Summary {
        unit: denominate.unit().to_owned(),
        value_end: last.map(|d| money(d, denominate)),
        value_start: first.map(|d| money(d, denominate)),
        change: change.map(|d| money(d, denominate)),
        change_pct,
        excluded: excluded.into_iter().map(str::to_owned).collect(),
        stale: last_point
            .map(|p| p.stale_mints.clone())
            .unwrap_or_default(),
    }
}

fn allocation(value: &ValueHistory) -> Vec<Slice> {
    let Some(last) = value.points.last() else {
        return Vec::new();
    };
    let mut priced: Vec<(String, Decimal)> = last
        .holdings
        .iter()
        .filter_map(|h| Some((h.mint.clone(), dec(h.usd.as_deref()?)?)))
        .filter(|(_, usd)| usd > &Decimal::ZERO)
        .collect();
    priced.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total: Decimal = priced.iter().map(|(_, u)| *u).sum();
    priced
        .into_iter()
        .map(|(mint, usd)| Slice {
            label: mint_label(&mint),
            pct: if total.is_zero() {
                "0".to_owned()
            } else {
                (usd / total * Decimal::ONE_HUNDRED).round_dp(1).to_string()
            },
            usd: usd.round_dp(2).to_string(),
            mint,
        })
        .collect()
}

/// For `all`, the days before the wallet's first holding are dropped.
fn trim_leading_empty(value: &mut ValueHistory) {
    let first = value
        .points
        .iter()
        .position(|p| !p.holdings.is_empty() || dec(&p.usd).is_some_and(|u| !u.is_zero()));
    match first {
        Some(0) => {}
        Some(i) => {
            value.points.drain(..i.saturating_sub(1));
        }
        None => {
            let keep = value.points.len().saturating_sub(1);
            value.points.drain(..keep);
        }
    }
    if let Some(p) = value.points.first() {
        value.from = p.at.clone();
    }
}

/// Read the report of `query.wallet` as `principal`.
pub async fn build(
    reads: &Reads<'_>,
    (pages, replays): (&PageCache, &ReplayCache),
    principal: &Principal,
    query: ReportQuery,
) -> Result<Report, AppError> {
    let now = reads.now_ms();
    let now_secs = now.div_euclid(1000);
    let from = TimeBound::parse(&rfc3339(
        query.range.from_secs(now_secs).saturating_mul(1000),
    ))
    .map_err(AppError::invalid_params)?;
    let nothing = Presented::default();
    let mut value = value_history::get_value_history(
        reads,
        principal,
        GetValueHistoryArgs {
            address: query.wallet.clone(),
            denominate: Some(query.denominate.as_str().to_owned()),
            from,
            granularity: None,
            pay: PayArgs::default(),
            to: None,
        },
        &nothing,
    )
    .await?;
    if query.range == ChartRange::All {
        trim_leading_empty(&mut value);
    }
    let positions = positions::get_positions(
        reads,
        replays,
        principal,
        GetPositionsArgs {
            address: query.wallet.clone(),
            exclude_spam: Some(true),
            method: None,
            pay: PayArgs::default(),
            tax: Default::default(),
        },
        &nothing,
    )
    .await?;
    let flows = flows::get_flows(
        reads,
        principal,
        GetFlowsArgs {
            address: query.wallet.clone(),
            from: None,
            mint: None,
            pay: PayArgs::default(),
            to: None,
            top: Some(FLOW_TOP),
        },
        &nothing,
    )
    .await?;
    let ledger = ledger_page::get_ledger(
        reads,
        pages,
        principal,
        GetLedgerArgs {
            address: query.wallet.clone(),
            cursor: query.cursor,
            exclude: None,
            from: None,
            include_counterparties: None,
            limit: Some(LEDGER_PAGE),
            min_usd_value: None,
            mint: None,
            operation_type: None,
            pay: PayArgs::default(),
            to: None,
        },
        &nothing,
    )
    .await?;
    Ok(Report {
        address: query.wallet.to_string(),
        range: query.range,
        denominate: query.denominate,
        generated_at: rfc3339(now),
        summary: summary(&value, query.denominate),
        allocation: allocation(&value),
        value,
        positions,
        flows,
        ledger,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_grouped_and_the_rest_kept() {
        assert_eq!(super::grouped("262743.36"), "262,743.36");
        assert_eq!(super::grouped("-1234567"), "-1,234,567");
        assert_eq!(super::grouped("999.5"), "999.5");
        assert_eq!(super::grouped("n/a"), "n/a");
    }
}
