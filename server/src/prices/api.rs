//! `get_prices` and `get_price_history`: the domain functions behind the
//! free tools and their REST twins.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Granularity, Prices, Source, series};
use crate::{
    error::{AppError, Code},
    ledger::SOL,
    solana::WalletAddress,
    store::Store,
    values::TimeBound,
    values::rfc3339,
};

/// What the free price tools read: the store (kept series), the price
/// sources, and the time now.
#[derive(Clone, Copy)]
pub struct PriceQuery<'a> {
    pub store: &'a Store,
    pub prices: &'a super::Prices,
    pub now_ms: i64,
}

/// The arguments of `get_prices`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetPricesArgs {
    /// Token mints to price; empty means native SOL.
    #[serde(default)]
    #[schemars(with = "Option<Vec<crate::params::MintOrSol>>", length(max = 100))]
    pub mints: Option<Vec<String>>,
}

/// One current price.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PriceView {
    /// The mint as asked ("sol" for native SOL).
    pub mint: String,
    /// USD per whole token, as a decimal string; null when unpriced.
    pub usd: Option<String>,
    /// Change over 24 hours in percent, when the source knows it.
    pub change_24h_pct: Option<String>,
    /// coinbase, jupiter, stablecoin, none (nothing prices it) or unavailable (its source failed: retry later).
    pub source: Source,
    /// When the price was read (RFC 3339).
    pub at: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PricesView {
    pub prices: Vec<PriceView>,
}

fn invalid(message: impl Into<String>) -> AppError {
    AppError::invalid_params(message)
}

/// A mint argument: "sol" (or empty) for native SOL, else a base58 key.
pub fn parse_mint(text: Option<&str>) -> Result<String, AppError> {
    match text.map(str::trim) {
        None | Some("") => Ok(SOL.to_owned()),
        Some(m) if m.eq_ignore_ascii_case(SOL) => Ok(SOL.to_owned()),
        Some(m) => Ok(WalletAddress::parse(m)
            .map_err(|why| invalid(format!("mint {m:?}: {why}")))?
            .to_string()),
    }
}

/// `get_prices`.
pub async fn get_prices(q: &PriceQuery<'_>, args: GetPricesArgs) -> Result<PricesView, AppError> {
    let asked: Vec<String> = match args.mints {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|m| parse_mint(Some(m)))
            .collect::<Result<_, _>>()?,
        _ => vec![SOL.to_owned()],
    };
    if asked.len() > 100 {
        return Err(invalid("at most 100 mints per call"));
    }
    let now = q.now_ms;
    let canonical: Vec<String> = asked
        .iter()
        .map(|m| Prices::canonical(m).to_owned())
        .collect();
    let answer = q.prices.spot_checked(&canonical, now).await;
    let found = &answer.found;
    let at = rfc3339(now);
    Ok(PricesView {
        prices: asked
            .iter()
            .zip(&canonical)
            .map(|(mint, key)| match found.get(key) {
                Some(spot) => PriceView {
                    mint: mint.clone(),
                    usd: Some(spot.usd.normalize().to_string()),
                    change_24h_pct: spot.change_24h_pct.map(|c| c.normalize().to_string()),
                    source: spot.source,
                    at: at.clone(),
                },
                None => PriceView {
                    mint: mint.clone(),
                    usd: None,
                    change_24h_pct: None,
                    source: if answer.unavailable.contains(key) {
                        Source::Unavailable
                    } else {
                        Source::None
                    },
                    at: at.clone(),
                },
            })
            .collect(),
    })
}

/// The arguments of `get_price_history`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetPriceHistoryArgs {
    /// Start, RFC 3339 or YYYY-MM-DD; default 30 days before to.
    #[serde(default, deserialize_with = "crate::values::time::optional_bound")]
    pub from: Option<TimeBound>,
    /// 1d (default) or 1h.
    #[serde(default)]
    #[schemars(with = "Option<crate::params::GranularityName>", extend("default" = "1d"))]
    pub granularity: Option<String>,
    /// Token mint; empty or sol means native SOL.
    #[serde(default)]
    #[schemars(with = "Option<crate::params::MintOrSol>")]
    pub mint: Option<String>,
    /// End, RFC 3339 or YYYY-MM-DD; default now.
    #[serde(default, deserialize_with = "crate::values::time::optional_bound")]
    pub to: Option<TimeBound>,
}

/// How much of a range has a price.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Coverage {
    /// Closed buckets in the range.
    pub buckets: u64,
    /// Of those, buckets with a close.
    pub priced: u64,
    /// priced / buckets in percent, two decimals ("100" when the range is empty).
    pub pct: String,
}

impl Coverage {
    pub fn new(buckets: u64, priced: u64) -> Self {
        use rust_decimal::Decimal;
        let pct = if buckets == 0 {
            Decimal::ONE_HUNDRED
        } else {
            (Decimal::from(priced) * Decimal::ONE_HUNDRED / Decimal::from(buckets)).round_dp(2)
        };
        Self {
            buckets,
            priced,
            pct: pct.normalize().to_string(),
        }
    }
}

/// A price series.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PriceHistory {
    pub mint: String,
    /// 1d or 1h.
    pub granularity: String,
    /// The range, RFC 3339.
    pub from: String,
    pub to: String,
    /// Which source the series comes from.
    pub source: Source,
    /// [unix seconds of the bucket start, USD close as a decimal string], oldest first.
    pub points: Vec<(i64, String)>,
    pub coverage: Coverage,
    /// False while a backfill job is filling a gap; read again later.
    pub complete: bool,
    /// The job filling the gap (see get_job), when complete is false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backfill_job_id: Option<String>,
}

/// Solana mainnet-beta's genesis day, 2020-03-16T00:00:00Z: no ledger leg
/// and no price we serve is older, so a bucketed range starts no earlier.
pub const SOLANA_GENESIS_SECS: i64 = 1_584_316_800;

/// Parse from/to with a default span before `to` (now by default).
///
/// A `from` before Solana's genesis day is clamped to it (and so is a `to`
/// before it): buckets before it
/// can hold nothing, and without the clamp a range from 1970 cost thousands
/// of empty points per call (a batch of them answered about 100 MB). Buckets
/// after now are never built (the series stop at now), so `to` needs none.
pub fn range(
    from: Option<&TimeBound>,
    to: Option<&TimeBound>,
    default_days: i64,
    now_secs: i64,
) -> Result<(i64, i64), AppError> {
    let to = to.map(TimeBound::end).unwrap_or(now_secs);
    let from = from
        .map(TimeBound::start)
        .unwrap_or(to - default_days * 86_400)
        .max(SOLANA_GENESIS_SECS);
    // A range wholly before genesis holds nothing: it answers genesis.
    let to = to.max(SOLANA_GENESIS_SECS);
    if from > to {
        return Err(invalid("from is after to"));
    }
    Ok((from, to))
}

/// `get_price_history`.
pub async fn get_price_history(
    q: &PriceQuery<'_>,
    args: GetPriceHistoryArgs,
) -> Result<PriceHistory, AppError> {
    let mint = parse_mint(args.mint.as_deref())?;
    let granularity = Granularity::parse(args.granularity.as_deref())
        .ok_or_else(|| invalid("granularity must be 1d or 1h"))?;
    let now = q.now_ms;
    let (from, to) = range(args.from.as_ref(), args.to.as_ref(), 30, now / 1000)?;
    let step = granularity.secs();
    if (to - from) / step > 20_000 {
        return Err(invalid(
            "at most 20000 buckets per call; narrow from/to or use a coarser granularity",
        ));
    }
    let prices = q.prices;
    let Some(source) = prices.history_source(&mint) else {
        return Err(AppError::not_found(format!(
            "no price source keeps a history of {mint}: SOL and the configured stablecoins are served"
        )));
    };
    let first = granularity.floor(from);
    let closed_end = granularity.floor(now / 1000);
    let end = (granularity.floor(to) + step).min(closed_end);
    let filled = series::ensure(q.store, prices, &mint, granularity, (first, end), now, true)
        .await
        .map_err(|e| match e {
            super::PriceError::Store(e) => AppError::from(e),
            other => {
                // An outage is logged once, when it opens the breaker.
                if !other.breaker_reports() {
                    tracing::warn!(error = %other, "price history source failed");
                }
                AppError::new(
                    Code::Unavailable,
                    "the price source did not answer; try again later",
                )
            }
        })?;
    let points: Vec<(i64, String)> = if prices.is_stablecoin(Prices::canonical(&mint)) {
        source
            .candles(&mint, granularity, (first, end), now)
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|c| (c.start, c.close.to_string()))
            .collect()
    } else {
        series::load(q.store, Prices::canonical(&mint), granularity, first, end)
            .await?
            .into_iter()
            .map(|(t, c)| (t, c.normalize().to_string()))
            .collect()
    };
    let buckets = u64::try_from(((end - first) / step).max(0)).unwrap_or(0);
    let coverage = Coverage::new(buckets, points.len() as u64);
    let (complete, backfill_job_id) = match filled {
        series::Filled::Complete => (true, None),
        series::Filled::Backfilling(job) => (false, Some(job)),
    };
    Ok(PriceHistory {
        mint,
        granularity: granularity.as_str().to_owned(),
        from: rfc3339(from * 1000),
        to: rfc3339(to * 1000),
        source: source.name(),
        points,
        coverage,
        complete,
        backfill_job_id,
    })
}
