//! `get_value_history`: a wallet's portfolio value at the close of every
//! bucket (1d or 1h) in a range, in USD and SOL, with the holdings behind
//! each point (SPEC N4).
//!
//! Holdings at a bucket's close are the sums of every leg before it. A
//! mint is valued at the bucket's close price (hourly series for 1h, else
//! the daily close; daily for 1d); a mint with no price series at all is
//! listed in `unpriced_mints` and left out of the value. The bucket that
//! holds now has not closed: it is valued at spot and marked `estimated`.
//! A mint with a series but no price at a point (its source is down, or
//! has not filled the bucket yet) is valued at its last known close and
//! named in the point's `stale_mints` with that close's time and age: a
//! missing price is never zero, which would show a healthy wallet losing
//! most of its value.
//! One pass over legs sorted by time, so the cost is legs + buckets × mints
//! held (docs/benchmarks.md has the figures).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Leg, scanned_legs};
use crate::{
    accounts::Principal,
    error::AppError,
    ledger::{OperationType, SOL, protocols::stake},
    payments::Presented,
    prices::{
        Granularity, Prices,
        api::range,
        valuation::{Hourly, Valuer, usd},
    },
    reads::{ReadKind, Reads},
    solana::WalletAddress,
    values::TimeBound,
    values::rfc3339,
};

/// The arguments of `get_value_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetValueHistoryArgs {
    /// The wallet's base58 public key.
    pub address: WalletAddress,
    /// usd (default) or sol; both values are always returned.
    #[serde(default)]
    #[schemars(with = "Option<crate::params::Denomination>", extend("default" = "usd"))]
    pub denominate: Option<String>,
    /// Start, RFC 3339 or YYYY-MM-DD; default 90 days before to.
    #[serde(default, deserialize_with = "crate::values::time::optional_bound")]
    pub from: Option<TimeBound>,
    /// 1d (default) or 1h.
    #[serde(default)]
    #[schemars(with = "Option<crate::params::GranularityName>", extend("default" = "1d"))]
    pub granularity: Option<String>,
    #[serde(flatten)]
    pub pay: crate::payments::PayArgs,
    /// End, RFC 3339 or YYYY-MM-DD; default now.
    #[serde(default, deserialize_with = "crate::values::time::optional_bound")]
    pub to: Option<TimeBound>,
}

/// One mint held at a point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Holding {
    /// A mint, or "sol".
    pub mint: String,
    /// Atomic units, as a string.
    pub amount: String,
    pub decimals: u32,
    /// USD worth at the point; null when the mint is unpriced there.
    pub usd: Option<String>,
}

/// A mint valued at an earlier close than the point's, because its price
/// at the point is unavailable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StaleMint {
    /// A mint, or "sol".
    pub mint: String,
    /// When the close it is valued at closed, RFC 3339.
    pub close_at: String,
    /// How old that close is at the point, in seconds.
    pub age_secs: i64,
}

/// The value at one bucket close.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ValuePoint {
    /// Unix seconds of the bucket's close (now, for the open bucket).
    pub t: i64,
    /// The same, RFC 3339.
    pub at: String,
    /// Sum of the priced holdings in USD, a decimal string.
    pub usd: String,
    /// The same in SOL at the point's SOL price; null without one.
    pub sol: Option<String>,
    /// Valued at spot: the bucket has not closed yet.
    pub estimated: bool,
    pub holdings: Vec<Holding>,
    /// Mints held here whose price at the point is unavailable, valued at
    /// their last known close (included in `usd`); absent when none.
    /// Leave them out when comparing points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_mints: Vec<StaleMint>,
}

/// A wallet's value history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ValueHistory {
    pub address: String,
    /// 1d or 1h.
    pub granularity: String,
    /// usd or sol: which value a chart should draw.
    pub denominate: String,
    pub from: String,
    pub to: String,
    pub points: Vec<ValuePoint>,
    /// Mints held in the range with no price series; left out of the value.
    pub unpriced_mints: Vec<String>,
    /// Share of the wallet's legs (up to `to`) whose mint is priced, percent.
    pub coverage_pct: String,
    /// False while a price backfill is filling the range; read again later.
    pub complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backfill_job_id: Option<String>,
    /// The payment this call settled (or replayed), with its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<crate::payments::PaymentBlock>,
}

/// What the pure core needs besides legs and closes.
pub struct Params {
    pub granularity: Granularity,
    pub from: i64,
    pub to: i64,
    pub now_secs: i64,
    /// Spot USD prices by canonical mint, for the open bucket.
    pub spot: HashMap<String, Decimal>,
}

/// Most points one call answers (buckets in the range).
pub const MAX_POINTS: i64 = 20_000;

/// Most holdings one call answers, summed over its points. Holdings, not
/// points, are what a response grows with (points × mints held): this
/// bounds the JSON of one call near 30 MB and its memory near 100 MB
/// (docs/benchmarks.md), while two years hourly of a wallet holding ten
/// mints (about 175,000) still fits.
pub const MAX_HOLDINGS: usize = 250_000;

/// A range whose points would hold more than [`MAX_HOLDINGS`] holdings.
#[derive(Debug, PartialEq, Eq)]
pub struct TooManyHoldings;

/// The points, unpriced mints and coverage over `legs` (oldest first);
/// refused as soon as the points would hold more than [`MAX_HOLDINGS`].
pub fn compute(
    legs: &[Leg],
    valuer: &Valuer,
    p: &Params,
) -> Result<(Vec<ValuePoint>, Vec<String>, String), TooManyHoldings> {
    let step = p.granularity.secs();
    let first = p.granularity.floor(p.from);
    let last = p.granularity.floor(p.to.min(p.now_secs));
    let mut held: BTreeMap<&str, (i128, u32)> = BTreeMap::new();
    let mut unpriced: BTreeSet<String> = BTreeSet::new();
    let mut next = 0usize;
    let mut points = Vec::new();
    let mut holdings_total = 0usize;
    let mut bucket = first;
    while bucket <= last {
        let close = bucket + step;
        let open = close > p.now_secs;
        let at = if open { p.now_secs } else { close };
        while next < legs.len() && legs[next].block_time.unwrap_or(0) < close.min(at + 1) {
            let leg = &legs[next];
            next += 1;
            // Staked SOL is still held: a move into or out of the
            // wallet's own stake account changes no holding.
            if OperationType::parse(&leg.operation_type).is_some_and(stake::within_holdings) {
                continue;
            }
            let entry = held.entry(leg.mint.as_str()).or_insert((0, leg.decimals));
            entry.0 += leg.amount;
        }
        let sol_price = price(valuer, p, SOL, bucket, open)
            .or_else(|| valuer.last_close_before(SOL, at).map(|(_, px)| px));
        let mut total = Decimal::ZERO;
        let mut holdings = Vec::with_capacity(held.len());
        let mut stale = Vec::new();
        for (mint, (amount, decimals)) in &held {
            if *amount == 0 {
                continue;
            }
            let value = if valuer.knows(mint) {
                let px = price(valuer, p, mint, bucket, open).or_else(|| {
                    let (closed, px) = valuer.last_close_before(mint, at)?;
                    stale.push(StaleMint {
                        mint: (*mint).to_owned(),
                        close_at: rfc3339(closed.saturating_mul(1000)),
                        age_secs: at - closed,
                    });
                    Some(px)
                });
                px.map(|px| usd(*amount, *decimals, px))
            } else {
                unpriced.insert((*mint).to_owned());
                None
            };
            if let Some(v) = value {
                total += v;
            }
            holdings.push(Holding {
                mint: (*mint).to_owned(),
                amount: amount.to_string(),
                decimals: *decimals,
                usd: value.map(|v| v.to_string()),
            });
        }
        holdings_total += holdings.len();
        if holdings_total > MAX_HOLDINGS {
            return Err(TooManyHoldings);
        }
        points.push(ValuePoint {
            t: at,
            at: rfc3339(at.saturating_mul(1000)),
            usd: total.round_dp(2).normalize().to_string(),
            sol: sol_price
                .filter(|px| !px.is_zero())
                .map(|px| (total / px).round_dp(9).normalize().to_string()),
            estimated: open,
            holdings,
            stale_mints: stale,
        });
        bucket += step;
    }
    let counted: Vec<&Leg> = legs
        .iter()
        .filter(|l| l.block_time.unwrap_or(0) <= p.to)
        .collect();
    let priced = counted.iter().filter(|l| valuer.knows(&l.mint)).count();
    let coverage = if counted.is_empty() {
        Decimal::ONE_HUNDRED
    } else {
        (Decimal::from(priced as u64) * Decimal::ONE_HUNDRED / Decimal::from(counted.len() as u64))
            .round_dp(2)
    };
    Ok((
        points,
        unpriced.into_iter().collect(),
        coverage.normalize().to_string(),
    ))
}

/// A mint's price at a bucket: spot for the open bucket (falling back to
/// the series), else the bucket's close.
fn price(valuer: &Valuer, p: &Params, mint: &str, bucket: i64, open: bool) -> Option<Decimal> {
    if open && let Some(px) = p.spot.get(Prices::canonical(mint)) {
        return Some(*px);
    }
    match p.granularity {
        Granularity::Hour => valuer.price_at(mint, bucket),
        Granularity::Day => valuer.daily_close(mint, bucket),
    }
}

/// `get_value_history` for the MCP tool and the REST route alike.
pub async fn get_value_history(
    reads: &Reads<'_>,
    principal: &Principal,
    args: GetValueHistoryArgs,
    presented: &Presented,
) -> Result<ValueHistory, AppError> {
    let address = args.address;
    let granularity = Granularity::parse(args.granularity.as_deref())
        .ok_or_else(|| AppError::invalid_params("granularity must be 1d or 1h"))?;
    let denominate = match args.denominate.as_deref().map(str::trim) {
        None | Some("") | Some("usd") => "usd",
        Some("sol") => "sol",
        Some(other) => {
            return Err(AppError::invalid_params(format!(
                "denominate {other:?}: usd or sol"
            )));
        }
    };
    let now = reads.now_ms();
    let now_secs = now.div_euclid(1000);
    let (from, to) = range(args.from.as_ref(), args.to.as_ref(), 90, now_secs)?;
    if (to - from) / granularity.secs() > MAX_POINTS {
        return Err(AppError::invalid_params(format!(
            "from/to: at most {MAX_POINTS} points per call; narrow from/to or use 1d"
        )));
    }
    // Every argument is checked; only now may the call be paid for.
    let kind = ReadKind {
        route: crate::routes::VALUE_HISTORY,
        tool: "get_value_history",
    };
    let payment = reads
        .authorize(principal, &address, &args.pay, presented, kind)
        .await?;
    let legs = scanned_legs(reads, &address).await?;
    let mut mints: Vec<String> = legs.iter().map(|l| l.mint.clone()).collect();
    mints.push(SOL.to_owned());
    mints.sort();
    mints.dedup();
    let hourly = match granularity {
        Granularity::Hour => Hourly::Backfill,
        Granularity::Day => Hourly::Skip,
    };
    let valuer = Valuer::prepare_with(
        reads.store(),
        reads.prices,
        reads.series,
        mints.clone(),
        (from, to),
        now,
        hourly,
    )
    .await?;
    let spot = if to >= granularity.floor(now_secs) {
        let priced: Vec<String> = mints
            .iter()
            .filter(|m| valuer.knows(m))
            .map(|m| Prices::canonical(m).to_owned())
            .collect();
        reads
            .prices
            .spot(&priced, now)
            .await
            .into_iter()
            .map(|(m, s)| (m, s.usd))
            .collect()
    } else {
        HashMap::new()
    };
    let params = Params {
        granularity,
        from,
        to,
        now_secs,
        spot,
    };
    let (points, unpriced_mints, coverage_pct) =
        compute(&legs, &valuer, &params).map_err(|TooManyHoldings| {
            AppError::invalid_params(format!(
                "from/to: this range holds more than {MAX_HOLDINGS} holdings (points × mints held); \
                 narrow from/to or use 1d"
            ))
        })?;
    Ok(ValueHistory {
        address: address.to_string(),
        granularity: granularity.as_str().to_owned(),
        denominate: denominate.to_owned(),
        from: rfc3339(from * 1000),
        to: rfc3339(to * 1000),
        points,
        unpriced_mints,
        coverage_pct,
        complete: valuer.backfill_job_id.is_none(),
        backfill_job_id: valuer.backfill_job_id.clone(),
        payment,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leg(t: i64, mint: &str, amount: i128) -> Leg {
        Leg {
            signature: "s".into(),
            index: 0,
            block_time: Some(t),
            operation_type: "transfer_in".into(),
            mint: mint.into(),
            amount,
            decimals: if mint == SOL { 9 } else { 6 },
            counterparties: Vec::new(),
            position: None,
            router: None,
        }
    }

    #[test]
    fn each_point_values_the_holdings_at_its_close() {
        let day = 86_400;
        let daily = HashMap::from([(
            SOL.to_owned(),
            BTreeMap::from([(0, Decimal::from(100)), (day, Decimal::from(200))]),
        )]);
        let valuer = Valuer::from_series(HashMap::new(), daily, ["USDC".to_owned()].into());
        let legs = vec![
            leg(10, SOL, 2_000_000_000),
            leg(20, "USDC", 5_000_000),
            leg(day + 5, SOL, -1_000_000_000),
            leg(day + 6, "MYSTERY", 42),
        ];
        let params = Params {
            granularity: Granularity::Day,
            from: 0,
            to: 3 * day - 1,
            now_secs: 2 * day + 100,
            spot: HashMap::from([(SOL.to_owned(), Decimal::from(300))]),
        };
        let (points, unpriced, coverage) = compute(&legs, &valuer, &params).unwrap();
        assert_eq!(points.len(), 3);
        // Day 0 closes with 2 SOL at 100 and 5 USDC.
        assert_eq!(points[0].usd, "205");
        assert_eq!(points[0].sol.as_deref(), Some("2.05"));
        assert_eq!(points[0].t, day);
        // Day 1: 1 SOL at 200, 5 USDC, and an unpriced mint.
        assert_eq!(points[1].usd, "205");
        assert_eq!(points[1].holdings.len(), 3);
        // Day 2 is open: spot, estimated, closing now.
        assert!(points[2].estimated && !points[1].estimated);
        assert_eq!(points[2].usd, "305");
        assert_eq!(points[2].t, 2 * day + 100);
        assert_eq!(unpriced, vec!["MYSTERY".to_owned()]);
        assert_eq!(coverage, "75");
    }

    #[test]
    fn a_mint_without_a_price_at_a_point_keeps_its_last_close_and_is_marked_stale() {
        let day = 86_400;
        // SOL's source answered for day 0 only, then went down: no close
        // for day 1, no spot for the open day 2.
        let daily = HashMap::from([(SOL.to_owned(), BTreeMap::from([(0, Decimal::from(100))]))]);
        let valuer = Valuer::from_series(HashMap::new(), daily, ["USDC".to_owned()].into());
        let legs = vec![leg(10, SOL, 2_000_000_000), leg(20, "USDC", 5_000_000)];
        let params = Params {
            granularity: Granularity::Day,
            from: 0,
            to: 3 * day - 1,
            now_secs: 2 * day + 100,
            spot: HashMap::new(),
        };
        let (points, unpriced, _) = compute(&legs, &valuer, &params).unwrap();
        // 2 SOL at the day-0 close of 100, plus 5 USDC, at every point.
        let usd: Vec<&str> = points.iter().map(|p| p.usd.as_str()).collect();
        assert_eq!(usd, ["205", "205", "205"]);
        assert!(points[0].stale_mints.is_empty(), "day 0 has its own close");
        let stale = |i: usize| points[i].stale_mints.clone();
        let closed = rfc3339(day * 1000);
        assert_eq!(
            stale(1),
            [StaleMint {
                mint: SOL.to_owned(),
                close_at: closed.clone(),
                age_secs: day
            }]
        );
        assert_eq!(
            stale(2),
            [StaleMint {
                mint: SOL.to_owned(),
                close_at: closed,
                age_secs: day + 100
            }]
        );
        assert_eq!(
            points[2].sol.as_deref(),
            Some("2.05"),
            "SOL at the same close"
        );
        assert!(unpriced.is_empty(), "a stale mint is priced, only old");
    }

    #[test]
    fn a_range_holding_more_than_the_cap_is_refused_before_it_is_built() {
        let day = 86_400;
        let valuer = Valuer::from_series(HashMap::new(), HashMap::new(), Default::default());
        // 30 mints held from day 0: every daily point holds 30 holdings.
        let legs: Vec<Leg> = (0..30)
            .map(|k| leg(10, &format!("MINT{k:02}"), 1))
            .collect();
        let points_fitting = MAX_HOLDINGS / 30;
        let params = |days: usize| Params {
            granularity: Granularity::Day,
            from: 0,
            to: i64::try_from(days).unwrap() * day - 1,
            now_secs: 100_000 * day,
            spot: HashMap::new(),
        };
        let (points, _, _) = compute(&legs, &valuer, &params(points_fitting)).unwrap();
        assert_eq!(points.len(), points_fitting);
        assert_eq!(
            compute(&legs, &valuer, &params(points_fitting + 1)),
            Err(TooManyHoldings)
        );
    }
}
