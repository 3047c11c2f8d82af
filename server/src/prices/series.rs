//! Stored price series: which buckets are missing, filling them, and the
//! backfill job that fills a large gap in the background.
//!
//! A series has one backfill job, ever: the row is keyed by the series and
//! re-queued when a later read finds a gap again (after it completed, or
//! after it failed), so a source that keeps failing cannot pile jobs up.
//! While the source's breaker is open nothing is queued: the read is
//! answered `unavailable` as an inline fetch would be.
//!
//! Only closed buckets are stored (a bucket whose end is still in the
//! future would change). A range asked of the source is recorded whether or
//! not every bucket in it had a candle, so a bucket is fetched once.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{Granularity, PriceError, Prices};
use crate::{
    clock::UnixMillis,
    ids,
    store::{JobRecord, Store, StoreError},
};

/// The sub-ranges of `[from, to)` not covered by `covered` (sorted by start).
pub fn gaps(from: i64, to: i64, covered: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut at = from;
    for &(start, end) in covered {
        if end <= at {
            continue;
        }
        if start >= to {
            break;
        }
        if start > at {
            out.push((at, start.min(to)));
        }
        at = at.max(end);
        if at >= to {
            break;
        }
    }
    if at < to {
        out.push((at, to));
    }
    out
}

/// What [`ensure`] did about a range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filled {
    /// Nothing is left to fetch now: every closed bucket of the range has
    /// been asked of the source, or, for a caller that queues no jobs, the
    /// gap is left for later.
    Complete,
    /// The gap is being filled by this backfill job.
    Backfilling(String),
}

/// The stored closes of a series over `[from, to)`, bucket start to close.
pub async fn load(
    store: &Store,
    mint: &str,
    granularity: Granularity,
    from: i64,
    to: i64,
) -> Result<BTreeMap<i64, Decimal>, StoreError> {
    let rows = store
        .price_points(mint, granularity.secs(), from, to)
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| super::json::decimal(&r.close).map(|d| (r.bucket_start, d)))
        .collect())
}

/// What a backfill job fills.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackfillSpec {
    pub mint: String,
    pub granularity: String,
    pub from: i64,
    pub to: i64,
}

/// Make sure every closed bucket of `mint`'s series starting in
/// `[from, to)` has been asked of its source. A gap up to the configured
/// threshold (in buckets) is fetched now; a larger one is queued as a
/// backfill job when `allow_job`, else left for later. Stablecoins need
/// no storage; a mint without a history source is the caller's to refuse.
pub async fn ensure(
    store: &Store,
    prices: &Prices,
    mint: &str,
    granularity: Granularity,
    (from, to): (i64, i64),
    now: UnixMillis,
    allow_job: bool,
) -> Result<Filled, PriceError> {
    let mint = Prices::canonical(mint);
    if prices.is_stablecoin(mint) {
        return Ok(Filled::Complete);
    }
    let Some(source) = prices.history_source(mint) else {
        return Ok(Filled::Complete);
    };
    let step = granularity.secs();
    // Closed buckets only: the last one ends at or before now.
    let closed_end = granularity.floor(now.div_euclid(1000));
    let from = granularity.floor(from);
    let to = to.min(closed_end);
    if from >= to {
        return Ok(Filled::Complete);
    }
    let covered = store.price_ranges(mint, step, from, to).await?;
    let missing = gaps(from, to, &covered);
    let buckets: i64 = missing.iter().map(|(a, b)| (b - a) / step).sum();
    if buckets == 0 {
        return Ok(Filled::Complete);
    }
    // A backfill of this series is running: it fetches the gap; fetching
    // part of it inline too would ask for some buckets twice.
    if let Some(job) = store
        .running_job_for(&series_key(mint, granularity))
        .await?
    {
        return Ok(if allow_job {
            Filled::Backfilling(job.id)
        } else {
            Filled::Complete
        });
    }
    if u64::try_from(buckets).unwrap_or(u64::MAX) > prices.backfill_threshold() {
        if !allow_job {
            return Ok(Filled::Complete);
        }
        // The job would fail at its first request; queueing it would only
        // wake a worker to fail it.
        if source.is_open(now) {
            return Err(PriceError::Open(source.name().as_str()));
        }
        let spec = BackfillSpec {
            mint: mint.to_owned(),
            granularity: granularity.as_str().to_owned(),
            from,
            to,
        };
        let id = ids::new_id("job_", now);
        let (job, queued) = store
            .queue_backfill_job(
                &id,
                &series_key(mint, granularity),
                granularity.as_str(),
                &serde_json::to_string(&spec).unwrap_or_default(),
                now,
            )
            .await?;
        if queued {
            tracing::info!(job = %job.id, mint, granularity = granularity.as_str(), buckets, "price backfill queued");
        }
        return Ok(Filled::Backfilling(job.id));
    }
    for (a, b) in missing {
        let candles = source.candles(mint, granularity, (a, b), now).await?;
        let points: Vec<(i64, String)> = candles
            .iter()
            .map(|c| (c.start, c.close.normalize().to_string()))
            .collect();
        store
            .store_price_range(mint, step, (a, b), &points, source.name().as_str())
            .await?;
    }
    Ok(Filled::Complete)
}

/// The jobs-queue key of a series: one backfill runs per series.
pub fn series_key(mint: &str, granularity: Granularity) -> String {
    format!("price:{mint}:{}", granularity.as_str())
}

/// Run a claimed backfill job: fetch its gaps a request's worth at a time,
/// recording progress (and renewing the lease) after each. Returns the
/// number of buckets stored; an error leaves the job for the caller to fail.
pub async fn run_backfill(
    store: &Store,
    prices: &Prices,
    job: &JobRecord,
    owner: &str,
    now: &(dyn Fn() -> UnixMillis + Send + Sync),
    lease_ms: i64,
) -> Result<BackfillOutcome, PriceError> {
    let Some(spec) = job
        .sources
        .as_deref()
        .and_then(|s| serde_json::from_str::<BackfillSpec>(s).ok())
    else {
        return Ok(BackfillOutcome::BadSpec);
    };
    let Some(granularity) = Granularity::parse(Some(&spec.granularity)) else {
        return Ok(BackfillOutcome::BadSpec);
    };
    let Some(source) = prices.history_source(&spec.mint) else {
        return Ok(BackfillOutcome::BadSpec);
    };
    let step = granularity.secs();
    let chunk = super::coinbase::MAX_CANDLES * step;
    let covered = store
        .price_ranges(&spec.mint, step, spec.from, spec.to)
        .await?;
    let mut done = 0i64;
    for (a, b) in gaps(spec.from, spec.to, &covered) {
        let mut start = a;
        while start < b {
            let end = (start + chunk).min(b);
            let candles = source
                .candles(&spec.mint, granularity, (start, end), now())
                .await?;
            let points: Vec<(i64, String)> = candles
                .iter()
                .map(|c| (c.start, c.close.normalize().to_string()))
                .collect();
            store
                .store_price_range(
                    &spec.mint,
                    step,
                    (start, end),
                    &points,
                    source.name().as_str(),
                )
                .await?;
            done += (end - start) / step;
            let progress = crate::store::JobProgress {
                phase: "backfilling".to_owned(),
                transactions_fetched: done,
                ..Default::default()
            };
            if !store
                .record_progress(&job.id, owner, &progress, now(), lease_ms)
                .await?
            {
                return Ok(BackfillOutcome::LeaseLost);
            }
            start = end;
        }
    }
    Ok(BackfillOutcome::Completed)
}

/// How a backfill run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum BackfillOutcome {
    Completed,
    LeaseLost,
    BadSpec,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_the_uncovered_parts() {
        assert_eq!(gaps(0, 10, &[]), vec![(0, 10)]);
        assert_eq!(gaps(0, 10, &[(0, 10)]), vec![]);
        assert_eq!(
            gaps(0, 10, &[(2, 4), (6, 8)]),
            vec![(0, 2), (4, 6), (8, 10)]
        );
        assert_eq!(gaps(5, 10, &[(0, 6), (9, 20)]), vec![(6, 9)]);
        assert_eq!(gaps(0, 10, &[(0, 3), (2, 5)]), vec![(5, 10)]);
    }
}
