//! Valuing legs: each leg's USD value at its block time from the stored
//! series: the close of the hour holding it, else the close of its day;
//! stablecoins at exactly 1; anything else unpriced (`priced: false`).
//!
//! Before valuing, the series a set of legs needs are made complete: the
//! daily series over the legs' span (inline when the gap is small, else by
//! a backfill job), and the hourly one only when its gap is small enough
//! to fetch inline. Nothing is fetched twice (see [`super::series`]). A leg
//! in the hour that has not closed yet has no close: it is valued at spot.
//!
//! The closes read are kept in memory per store ([`SeriesCache`], keyed by
//! mint and granularity) with the ranges they are final over: a range
//! already asked of the source, whose points were stored in the same
//! transaction as the range, never changes again. A span inside those
//! ranges is valued without asking the database; anything else (a gap, or
//! buckets that have not closed) goes the way it always did, and what it
//! reads is added to the cache.
//!
//! While the series' source rests after failing (its breaker is open),
//! nothing can be fetched, so a gap is not asked of it again on every read:
//! one look at the stored ranges says whether the database holds anything
//! the cache lacks (closes are stored only with their range), and only then
//! are closes read. So the valuer of an unchanged span keeps its
//! fingerprint and a page kept from it is served (docs/prices.md).

use std::{
    collections::{BTreeMap, HashMap},
    hash::{Hash, Hasher},
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
};

use rust_decimal::Decimal;

use super::{Granularity, Prices, series};
use crate::{clock::UnixMillis, store::Store};

/// What one process has read of a stored series: the ranges (bucket
/// starts, `[start, end)`, sorted and disjoint) known final, and every
/// close stored in them (and any other it happened to read).
#[derive(Debug)]
struct Snapshot {
    /// Unique per content, so a valuer can say which closes it used.
    id: u64,
    final_ranges: Vec<(i64, i64)>,
    closes: Arc<BTreeMap<i64, Decimal>>,
}

static NEXT_SNAPSHOT: AtomicU64 = AtomicU64::new(1);

fn snapshot_id() -> u64 {
    NEXT_SNAPSHOT.fetch_add(1, Ordering::Relaxed)
}

impl Snapshot {
    fn empty() -> Self {
        Self {
            id: 0,
            final_ranges: Vec::new(),
            closes: Arc::default(),
        }
    }

    /// Whether every bucket starting in `[from, to)` is final here.
    fn covers(&self, from: i64, to: i64) -> bool {
        from >= to || series::gaps(from, to, &self.final_ranges).is_empty()
    }
}

/// `ranges` with `[from, to)` added, still sorted and disjoint.
fn add_range(ranges: &[(i64, i64)], (from, to): (i64, i64)) -> Vec<(i64, i64)> {
    let mut all: Vec<(i64, i64)> = ranges.to_vec();
    all.push((from, to));
    all.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(all.len());
    for (a, b) in all {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The stored closes this process has read, per mint and granularity
/// (`Caches::series`).
#[derive(Debug, Default)]
pub struct SeriesCache {
    series: Mutex<HashMap<Granularity, HashMap<String, Arc<Snapshot>>>>,
    /// Per series, what was checked against the database during the
    /// current rest of its source ([`Rested`]).
    rests: Mutex<HashMap<(Granularity, String), Rested>>,
    /// Times closes were read from the database (tests and benchmarks
    /// watch it: a span the cache answers reads none).
    database_reads: AtomicU64,
}

/// Spans of one series found to hold nothing the snapshot lacks, during
/// one rest of its source (`HistorySource::rest`) and with no price range
/// stored by this process since (`Store::price_writes`): until either
/// changes, a read over them needs neither the source nor the database.
#[derive(Debug)]
struct Rested {
    rest: (u64, u64),
    spans: Vec<(i64, i64)>,
}

impl SeriesCache {
    /// How many times closes were read from the database so far.
    pub fn database_reads(&self) -> u64 {
        self.database_reads.load(Ordering::Relaxed)
    }

    fn counted_read(&self) {
        self.database_reads.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether `[from, to)` was checked during `rest` ([`Rested`]).
    fn checked(
        &self,
        mint: &str,
        granularity: Granularity,
        rest: (u64, u64),
        from: i64,
        to: i64,
    ) -> bool {
        self.rests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(granularity, mint.to_owned()))
            .is_some_and(|r| r.rest == rest && series::gaps(from, to, &r.spans).is_empty())
    }

    /// `[from, to)` was checked during `rest`.
    fn mark_checked(
        &self,
        mint: &str,
        granularity: Granularity,
        rest: (u64, u64),
        span: (i64, i64),
    ) {
        let mut rests = self.rests.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = rests
            .entry((granularity, mint.to_owned()))
            .or_insert_with(|| Rested {
                rest,
                spans: Vec::new(),
            });
        if entry.rest != rest {
            *entry = Rested {
                rest,
                spans: Vec::new(),
            };
        }
        entry.spans = add_range(&entry.spans, span);
    }

    fn get(&self, mint: &str, granularity: Granularity) -> Arc<Snapshot> {
        self.series
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&granularity)
            .and_then(|m| m.get(mint))
            .cloned()
            .unwrap_or_else(|| Arc::new(Snapshot::empty()))
    }

    /// Add what was just read over `[from, to)`: the source ranges that
    /// overlap it (read before the closes, so each has its closes) and the
    /// closes. A new snapshot only when something is new.
    fn merge(
        &self,
        mint: &str,
        granularity: Granularity,
        (from, to): (i64, i64),
        ranges: &[(i64, i64)],
        closes: BTreeMap<i64, Decimal>,
    ) -> Arc<Snapshot> {
        let mut all = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        let series = all.entry(granularity).or_default();
        let current = series
            .get(mint)
            .cloned()
            .unwrap_or_else(|| Arc::new(Snapshot::empty()));
        let mut final_ranges = current.final_ranges.clone();
        for &(a, b) in ranges {
            let (a, b) = (a.max(from), b.min(to));
            if a < b {
                final_ranges = add_range(&final_ranges, (a, b));
            }
        }
        let new_closes = closes.iter().any(|(t, c)| current.closes.get(t) != Some(c));
        if final_ranges == current.final_ranges && !new_closes {
            return current;
        }
        let mut merged = (*current.closes).clone();
        merged.extend(closes);
        let snapshot = Arc::new(Snapshot {
            id: snapshot_id(),
            final_ranges,
            closes: Arc::new(merged),
        });
        series.insert(mint.to_owned(), snapshot.clone());
        snapshot
    }
}

/// The closes of one series a valuer may use: those starting in
/// `[from, to)`, from a shared snapshot and, for buckets not final there,
/// as just read from the database.
#[derive(Clone, Debug)]
struct Closes {
    snapshot: u64,
    shared: Arc<BTreeMap<i64, Decimal>>,
    read: BTreeMap<i64, Decimal>,
    from: i64,
    to: i64,
}

impl Closes {
    fn whole(closes: BTreeMap<i64, Decimal>) -> Self {
        Self {
            snapshot: snapshot_id(),
            shared: Arc::new(closes),
            read: BTreeMap::new(),
            from: i64::MIN,
            to: i64::MAX,
        }
    }

    fn get(&self, bucket: i64) -> Option<Decimal> {
        if bucket < self.from || bucket >= self.to {
            return None;
        }
        self.read
            .get(&bucket)
            .or_else(|| self.shared.get(&bucket))
            .copied()
    }

    fn is_empty(&self) -> bool {
        self.read.is_empty() && self.shared.range(self.from..self.to).next().is_none()
    }

    /// The latest bucket with a close that starts before `before`, and its
    /// close.
    fn last_before(&self, before: i64) -> Option<(i64, Decimal)> {
        let end = before.min(self.to);
        if end <= self.from {
            return None;
        }
        let read = self.read.range(self.from..end).next_back();
        let shared = self.shared.range(self.from..end).next_back();
        match (read, shared) {
            (Some(r), Some(s)) => Some(if r.0 >= s.0 { r } else { s }),
            (r, s) => r.or(s),
        }
        .map(|(t, c)| (*t, *c))
    }

    fn fingerprint(&self, hasher: &mut impl Hasher) {
        (self.snapshot, self.from, self.to).hash(hasher);
        for (t, c) in &self.read {
            (t, c).hash(hasher);
        }
    }
}

/// The closes of `mint` at `granularity` over `[start, end)`, making the
/// series complete first ([`series::ensure`]) unless the cache already
/// knows every closed bucket of the span to be final, in which case
/// `ensure` would find nothing to do.
#[allow(clippy::too_many_arguments)]
async fn closes(
    store: &Store,
    prices: &Prices,
    cache: &SeriesCache,
    mint: &str,
    granularity: Granularity,
    (start, end): (i64, i64),
    now: UnixMillis,
    allow_job: bool,
    // Where to say which backfill fills the series; None when the caller
    // has no use for it (then a resting source costs no job lookup).
    backfill_job_id: Option<&mut Option<String>>,
) -> Result<Closes, crate::store::StoreError> {
    let closed_end = granularity.floor(now.div_euclid(1000));
    let known = cache.get(mint, granularity);
    let resting = prices
        .history_source(mint)
        .and_then(|source| source.rest(now));
    let (snapshot, read) = if known.covers(start, end.min(closed_end)) {
        // Only buckets that have not closed can be missing here; nothing
        // stores those, but read them as the database has them.
        let open_from = start.max(closed_end);
        let read = if known.covers(open_from, end) {
            BTreeMap::new()
        } else {
            cache.counted_read();
            series::load(store, mint, granularity, open_from, end).await?
        };
        (known, read)
    } else if let Some(rest) = resting.map(|r| (r, store.price_writes()))
        && backfill_job_id.is_none()
        && cache.checked(mint, granularity, rest, start, end)
    {
        // Checked during this rest, and nothing stored since by this
        // process: what the database holds over the span is in the cache.
        (known, BTreeMap::new())
    } else if let Some(rest) = resting.map(|r| (r, store.price_writes())) {
        // The source rests: `ensure` could only fail at once (the breaker
        // warned when it opened). Closes are stored only with the range
        // they were asked for, in one transaction
        // (`Store::store_price_range`), so when every stored range over
        // the span is already final here the cache holds every stored
        // close of it and nothing is read; anything new (a backfill,
        // another instance) is read and merged as it always was. The span
        // is then known checked for the rest of this rest (the count of
        // writes is read before the ranges, so a write during the check
        // is seen next time); another instance's writes during it are
        // read when it ends.
        let ranges = store
            .price_ranges(mint, granularity.secs(), start, end)
            .await?;
        let remember = backfill_job_id.is_none();
        if let Some(report) = backfill_job_id
            && allow_job
            && !series::gaps(start, end.min(closed_end), &ranges).is_empty()
        {
            // What `ensure` reports for a gap: the series' running backfill.
            if let Some(job) = store
                .running_job_for(&series::series_key(mint, granularity))
                .await?
            {
                *report = Some(job.id);
            }
        }
        let all_known = ranges
            .iter()
            .all(|&(a, b)| known.covers(a.max(start), b.min(end)));
        let snapshot = if all_known {
            known
        } else {
            cache.counted_read();
            let closes = series::load(store, mint, granularity, start, end).await?;
            cache.merge(mint, granularity, (start, end), &ranges, closes)
        };
        if remember {
            cache.mark_checked(mint, granularity, rest, (start, end));
        }
        (snapshot, BTreeMap::new())
    } else {
        match series::ensure(
            store,
            prices,
            mint,
            granularity,
            (start, end),
            now,
            allow_job,
        )
        .await
        {
            Ok(series::Filled::Backfilling(job)) => {
                if let Some(report) = backfill_job_id {
                    *report = Some(job);
                }
            }
            Ok(series::Filled::Complete) => {}
            Err(super::PriceError::Store(e)) => return Err(e),
            // An outage is warned of once per cool-down, by the breaker.
            Err(err) if err.breaker_reports() => {
                tracing::debug!(mint, error = %err, "price series unavailable; legs stay unpriced");
            }
            Err(err) => {
                tracing::warn!(mint, error = %err, "price series unavailable; legs stay unpriced");
            }
        }
        let ranges = store
            .price_ranges(mint, granularity.secs(), start, end)
            .await?;
        cache.counted_read();
        let closes = series::load(store, mint, granularity, start, end).await?;
        (
            cache.merge(mint, granularity, (start, end), &ranges, closes),
            BTreeMap::new(),
        )
    };
    Ok(Closes {
        snapshot: snapshot.id,
        shared: snapshot.closes.clone(),
        read,
        from: start,
        to: end,
    })
}

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
    hourly: HashMap<String, Closes>,
    daily: HashMap<String, Closes>,
    stablecoins: std::collections::HashSet<String>,
    /// Spot prices for legs in the hour that has not closed yet.
    spot: HashMap<String, Decimal>,
    /// The start of that hour (unix seconds); `i64::MAX` when unused.
    open_from: i64,
    /// A backfill job started to complete a series, if any (said only by
    /// [`Valuer::prepare_with`]).
    pub backfill_job_id: Option<String>,
}

impl Valuer {
    /// Prepare to value legs of `mints` with block times in `[from, to]`.
    /// A price source that fails leaves what is stored; it never fails the
    /// caller (its legs come out unpriced).
    pub async fn prepare(
        store: &Store,
        prices: &Prices,
        series: &SeriesCache,
        mints: Vec<String>,
        span: (i64, i64),
        now: UnixMillis,
    ) -> Result<Self, crate::store::StoreError> {
        Self::prepare_inner(
            store,
            prices,
            series,
            mints,
            span,
            now,
            Hourly::InlineOnly,
            false,
        )
        .await
    }

    /// [`Valuer::prepare`] with a say over the hourly series, and
    /// [`Valuer::backfill_job_id`] filled in.
    pub async fn prepare_with(
        store: &Store,
        prices: &Prices,
        series: &SeriesCache,
        mints: Vec<String>,
        span: (i64, i64),
        now: UnixMillis,
        hourly: Hourly,
    ) -> Result<Self, crate::store::StoreError> {
        Self::prepare_inner(store, prices, series, mints, span, now, hourly, true).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn prepare_inner(
        store: &Store,
        prices: &Prices,
        series: &SeriesCache,
        mints: Vec<String>,
        (from, to): (i64, i64),
        now: UnixMillis,
        hourly: Hourly,
        report_jobs: bool,
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
                let closes = closes(
                    store,
                    prices,
                    series,
                    &key,
                    granularity,
                    (start, end),
                    now,
                    allow_job,
                    report_jobs.then_some(&mut valuer.backfill_job_id),
                )
                .await?;
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
        let whole = |series: HashMap<String, BTreeMap<i64, Decimal>>| {
            series
                .into_iter()
                .map(|(mint, closes)| (mint, Closes::whole(closes)))
                .collect()
        };
        Self {
            hourly: whole(hourly),
            daily: whole(daily),
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
        if let Some(p) = self.hourly.get(key).and_then(|s| s.get(hour)) {
            return Some(p);
        }
        let day = Granularity::Day.floor(t);
        if let Some(p) = self.daily.get(key).and_then(|s| s.get(day)) {
            return Some(p);
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
        self.daily.get(key).and_then(|s| s.get(day))
    }

    /// The last close of `mint` known here that closed at or before `t`:
    /// (the close's time, unix seconds; USD per whole token), the later of
    /// the hourly and the daily series. What a mint is worth at `t` when
    /// its price there is unavailable (a source down): an old price, which
    /// the caller marks stale with its age, never zero. Only closes in the
    /// span the valuer was prepared over are known. None for stablecoins
    /// (always priced) and mints with no close before `t`.
    pub fn last_close_before(&self, mint: &str, t: i64) -> Option<(i64, Decimal)> {
        let key = Prices::canonical(mint);
        let hour = Granularity::Hour.secs();
        let day = Granularity::Day.secs();
        let hourly = self
            .hourly
            .get(key)
            .and_then(|s| s.last_before(t.saturating_sub(hour) + 1))
            .map(|(b, c)| (b + hour, c));
        let daily = self
            .daily
            .get(key)
            .and_then(|s| s.last_before(t.saturating_sub(day) + 1))
            .map(|(b, c)| (b + day, c));
        match (hourly, daily) {
            (Some(h), Some(d)) => Some(if h.0 >= d.0 { h } else { d }),
            (h, d) => h.or(d),
        }
    }

    /// Whether `mint` has any price at all here.
    pub fn knows(&self, mint: &str) -> bool {
        let key = Prices::canonical(mint);
        self.stablecoins.contains(key)
            || self.hourly.get(key).is_some_and(|s| !s.is_empty())
            || self.daily.get(key).is_some_and(|s| !s.is_empty())
    }

    /// What this valuer's prices came from: equal fingerprints of two
    /// prepared valuers mean every price they give is the same (the same
    /// snapshots of the same series over the same spans, the same closes
    /// read beside them, the same spot prices from the same hour on, the
    /// same stablecoins). What is computed from a valuer can be reused
    /// while the fingerprint stays.
    pub fn fingerprint(&self) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for (kind, series) in [(0u8, &self.hourly), (1, &self.daily)] {
            let mut mints: Vec<&String> = series.keys().collect();
            mints.sort();
            for mint in mints {
                (kind, mint).hash(&mut hasher);
                series[mint].fingerprint(&mut hasher);
            }
        }
        let mut stablecoins: Vec<&String> = self.stablecoins.iter().collect();
        stablecoins.sort();
        stablecoins.hash(&mut hasher);
        let mut spot: Vec<(&String, &Decimal)> = self.spot.iter().collect();
        spot.sort();
        spot.hash(&mut hasher);
        self.open_from.hash(&mut hasher);
        hasher.finish()
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
    fn final_ranges_merge_and_cover() {
        assert_eq!(add_range(&[], (0, 10)), vec![(0, 10)]);
        assert_eq!(add_range(&[(0, 10)], (10, 20)), vec![(0, 20)]);
        assert_eq!(add_range(&[(0, 10), (30, 40)], (5, 35)), vec![(0, 40)]);
        assert_eq!(add_range(&[(20, 30)], (0, 10)), vec![(0, 10), (20, 30)]);
        let cache = SeriesCache::default();
        let closes = BTreeMap::from([(0, Decimal::ONE), (3600, Decimal::TWO)]);
        let first = cache.merge(
            "sol",
            Granularity::Hour,
            (0, 7200),
            &[(0, 3600)],
            closes.clone(),
        );
        assert!(first.covers(0, 3600));
        assert!(
            !first.covers(0, 7200),
            "only the part inside a source range is final"
        );
        assert!(first.covers(5, 5), "an empty span is covered");
        // Nothing new: the same snapshot (the same fingerprint).
        let again = cache.merge("sol", Granularity::Hour, (0, 7200), &[(0, 3600)], closes);
        assert_eq!(again.id, first.id);
        // A range stored later: a new snapshot that covers it.
        let later = cache.merge(
            "sol",
            Granularity::Hour,
            (0, 7200),
            &[(0, 7200)],
            BTreeMap::new(),
        );
        assert_ne!(later.id, first.id);
        assert!(later.covers(0, 7200));
        assert_eq!(cache.get("sol", Granularity::Hour).id, later.id);
        assert_eq!(cache.get("sol", Granularity::Day).id, 0, "another series");
    }

    #[test]
    fn closes_answer_only_inside_their_span() {
        let closes = Closes {
            snapshot: 1,
            shared: Arc::new(BTreeMap::from([(0, Decimal::ONE), (7200, Decimal::TWO)])),
            read: BTreeMap::from([(3600, Decimal::TEN)]),
            from: 3600,
            to: 7200,
        };
        assert_eq!(closes.get(0), None, "before the span");
        assert_eq!(closes.get(3600), Some(Decimal::TEN));
        assert_eq!(closes.get(7200), None, "the span's end is not in it");
        assert!(!closes.is_empty());
    }

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
