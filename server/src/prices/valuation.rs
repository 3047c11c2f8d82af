//! Valuing legs: each leg's USD value at its block time from the stored
//! series: the close of the hour holding it, else the close of its day;
//! stablecoins at exactly 1; anything else unpriced (`priced: false`).
//!
//! Before valuing, the series a set of legs needs are made complete: the
//! daily series over the legs' span (inline when the gap is small, else by
//! a backfill job), and the hourly one only when its gap is small enough
//! to fetch inline. Nothing is fetched twice (see [`super::series`]). A leg
//! in the hour that has not closed yet has no close: it is valued at spot.

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;

use super::{Granularity, Prices, series};
use crate::{clock::UnixMillis, store::Store};

/// What to do about hourly series when preparing a [`Valuer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hourly {
    /// Daily closes only.
    Skip,
    /// Use hourly closes, fetching a small gap inline, never queueing a job.
    InlineOnly,
    /// Use hourly closes and queue a backfill for a large gap.
    Backfill,
}

/// Closes of the mints a set of legs needs, ready to value them.
#[derive(Debug, Default)]
pub struct Valuer {
    hourly: HashMap<String, BTreeMap<i64, Decimal>>,
    daily: HashMap<String, BTreeMap<i64, Decimal>>,
    stablecoins: std::collections::HashSet<String>,
    /// Spot prices for legs in the hour that has not closed yet.
    spot: HashMap<String, Decimal>,
    /// The start of that hour (unix seconds); `i64::MAX` when unused.
    open_from: i64,
    /// A backfill job started to complete a series, if any.
    pub backfill_job_id: Option<String>,
}

impl Valuer {
    /// Prepare to value legs of `mints` with block times in `[from, to]`.
    /// A price source that fails leaves what is stored; it never fails the
    /// caller (its legs come out unpriced).
    pub async fn prepare(
        store: &Store,
        prices: &Prices,
        mints: Vec<String>,
        span: (i64, i64),
        now: UnixMillis,
    ) -> Result<Self, crate::store::StoreError> {
        Self::prepare_with(store, prices, mints, span, now, Hourly::InlineOnly).await
    }

    /// [`Valuer::prepare`] with a say over the hourly series.
    pub async fn prepare_with(
        store: &Store,
        prices: &Prices,
        mints: Vec<String>,
        (from, to): (i64, i64),
        now: UnixMillis,
        hourly: Hourly,
    ) -> Result<Self, crate::store::StoreError> {
        let mut valuer = Valuer {
            open_from: i64::MAX,
            ..Valuer::default()
        };
        let mut seen = std::collections::HashSet::new();
        for mint in mints {
            let key = Prices::canonical(&mint).to_owned();
            if !seen.insert(key.clone()) {
                continue;
            }
            if prices.is_stablecoin(&key) {
                valuer.stablecoins.insert(key);
                continue;
            }
            if prices.history_source(&key).is_none() {
                continue;
            }
            let mut wanted = vec![(Granularity::Day, true)];
            match hourly {
                Hourly::Skip => {}
                Hourly::InlineOnly => wanted.push((Granularity::Hour, false)),
                Hourly::Backfill => wanted.push((Granularity::Hour, true)),
            }
            for (granularity, allow_job) in wanted {
                let start = granularity.floor(from);
                let end = granularity.floor(to) + granularity.secs();
                match series::ensure(
                    store,
                    prices,
                    &key,
                    granularity,
                    (start, end),
                    now,
                    allow_job,
                )
                .await
                {
                    Ok(series::Filled::Backfilling(job)) => valuer.backfill_job_id = Some(job),
                    Ok(series::Filled::Complete) => {}
                    Err(super::PriceError::Store(e)) => return Err(e),
                    Err(err) => {
                        tracing::warn!(mint = %key, error = %err, "price series unavailable; legs stay unpriced");
                    }
                }
                let closes = series::load(store, &key, granularity, start, end).await?;
                match granularity {
                    Granularity::Day => valuer.daily.insert(key.clone(), closes),
                    Granularity::Hour => valuer.hourly.insert(key.clone(), closes),
                };
            }
        }
        // Legs in the hour that has not closed have no close yet: spot.
        let open_hour = Granularity::Hour.floor(now.div_euclid(1000));
        if to >= open_hour {
            let keys: Vec<String> = valuer
                .hourly
                .keys()
                .chain(valuer.daily.keys())
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            if !keys.is_empty() {
                valuer.spot = prices
                    .spot(&keys, now)
                    .await
                    .into_iter()
                    .map(|(m, s)| (m, s.usd))
                    .collect();
                valuer.open_from = open_hour;
            }
        }
        Ok(valuer)
    }

    /// A valuer over given closes (tests, benchmarks).
    pub fn from_series(
        hourly: HashMap<String, BTreeMap<i64, Decimal>>,
        daily: HashMap<String, BTreeMap<i64, Decimal>>,
        stablecoins: std::collections::HashSet<String>,
    ) -> Self {
        Self {
            hourly,
            daily,
            stablecoins,
            spot: HashMap::new(),
            open_from: i64::MAX,
            backfill_job_id: None,
        }
    }

    /// USD per whole token of `mint` at `t`: the hour's close, else the day's.
    pub fn price_at(&self, mint: &str, t: i64) -> Option<Decimal> {
        let key = Prices::canonical(mint);
        if self.stablecoins.contains(key) {
            return Some(Decimal::ONE);
        }
        let hour = Granularity::Hour.floor(t);
        if let Some(p) = self.hourly.get(key).and_then(|s| s.get(&hour)) {
            return Some(*p);
        }
        let day = Granularity::Day.floor(t);
        if let Some(p) = self.daily.get(key).and_then(|s| s.get(&day)) {
            return Some(*p);
        }
        if t >= self.open_from {
            return self.spot.get(key).copied();
        }
        None
    }

    /// The day's close only (daily value history).
    pub fn daily_close(&self, mint: &str, day: i64) -> Option<Decimal> {
        let key = Prices::canonical(mint);
        if self.stablecoins.contains(key) {
            return Some(Decimal::ONE);
        }
        self.daily.get(key).and_then(|s| s.get(&day)).copied()
    }

    /// Whether `mint` has any price at all here.
    pub fn knows(&self, mint: &str) -> bool {
        let key = Prices::canonical(mint);
        self.stablecoins.contains(key)
            || self.hourly.get(key).is_some_and(|s| !s.is_empty())
            || self.daily.get(key).is_some_and(|s| !s.is_empty())
    }

    /// A leg's signed USD value: `amount` atomic units with `decimals`,
    /// at its block time. None when unpriced.
    pub fn value(
        &self,
        mint: &str,
        amount: i128,
        decimals: u32,
        t: Option<i64>,
    ) -> Option<Decimal> {
        let price = self.price_at(mint, t?)?;
        Some(usd(amount, decimals, price))
    }
}

/// `amount` atomic units with `decimals`, at `price` USD per whole token,
/// rounded to 6 decimals (a millionth of a cent is below any report).
pub fn usd(amount: i128, decimals: u32, price: Decimal) -> Decimal {
    let whole = Decimal::try_from_i128_with_scale(amount, decimals.min(28)).unwrap_or(Decimal::MAX);
    whole
        .checked_mul(price)
        .unwrap_or(Decimal::MAX)
        .round_dp(6)
        .normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hourly_close_wins_over_daily() {
        let mut hourly = HashMap::new();
        hourly.insert(
            "sol".to_owned(),
            BTreeMap::from([(3600, Decimal::from(150))]),
        );
        let mut daily = HashMap::new();
        daily.insert("sol".to_owned(), BTreeMap::from([(0, Decimal::from(140))]));
        let v = Valuer::from_series(hourly, daily, ["usdc".to_owned()].into());
        assert_eq!(v.price_at("sol", 4000), Some(Decimal::from(150)));
        assert_eq!(v.price_at("sol", 100), Some(Decimal::from(140)));
        assert_eq!(v.price_at("sol", 90_000), None);
        assert_eq!(v.price_at("usdc", 90_000), Some(Decimal::ONE));
        // 1.5 SOL out at 150 USD.
        assert_eq!(
            v.value("sol", -1_500_000_000, 9, Some(4000))
                .map(|d| d.to_string()),
            Some("-225".to_owned())
        );
        assert_eq!(v.value("sol", 1, 9, None), None);
    }
}
