//! Stored price series and the ranges already asked of a source, and the
//! legs the analytics read whole. A bucket is written once (its key is
//! mint, granularity, bucket start); re-writing it is a no-op.

use super::{JobRecord, Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

/// One stored bucket close.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct PricePointRow {
    pub bucket_start: i64,
    /// Decimal text.
    pub close: String,
    pub source: String,
}

/// A leg as the analytics read it: everything but the cursor fields.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct AnalyticsLeg {
    pub signature: String,
    pub leg_index: i32,
    pub block_time: Option<i64>,
    pub operation_type: String,
    pub mint: String,
    pub amount: String,
    pub decimals: i32,
    pub counterparties: String,
    /// The program account the leg moves into, out of or from within.
    pub position: Option<String>,
    /// Registry name of the program that routed it.
    pub router: Option<String>,
}

/// The job kind of a price backfill.
pub const BACKFILL_KIND: &str = "price_backfill";
/// The sentinel quote every backfill names (see the prices migration).
pub const BACKFILL_QUOTE: &str = "q_price_backfill";

impl Store {
    /// Stored closes of `mint` at `granularity` with bucket starts in
    /// `[from, to)`, oldest first.
    pub async fn price_points(
        &self,
        mint: &str,
        granularity: i64,
        from: i64,
        to: i64,
    ) -> Result<Vec<PricePointRow>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT bucket_start, close, source FROM price_points \
             WHERE mint = $1 AND granularity = $2 AND bucket_start >= $3 AND bucket_start < $4 \
             ORDER BY bucket_start"
        )
        .bind(mint)
        .bind(granularity)
        .bind(from)
        .bind(to)
        .fetch_all(pool)
        .await?))
    }

    /// Store fetched closes and mark `[range_start, range_end)` as asked,
    /// in one transaction. Points already stored are left as they are, and
    /// points outside the range are not stored: every stored close lies in
    /// a stored range, which lets a reader that knows the ranges know it
    /// has every close (`prices::valuation`).
    pub async fn store_price_range(
        &self,
        mint: &str,
        granularity: i64,
        range: (i64, i64),
        points: &[(i64, String)],
        source: &str,
    ) -> Result<(), StoreError> {
        let inside = points
            .iter()
            .filter(|(start, _)| (range.0..range.1).contains(start));
        on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            for (start, close) in inside {
                sqlx::query(
                    "INSERT INTO price_points (mint, granularity, bucket_start, close, source) \
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                )
                .bind(mint)
                .bind(granularity)
                .bind(*start)
                .bind(close)
                .bind(source)
                .execute(&mut *tx)
                .await?;
            }
            sqlx::query(
                "INSERT INTO price_ranges (mint, granularity, range_start, range_end) \
                 VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (mint, granularity, range_start) DO UPDATE SET range_end = \
                 CASE WHEN price_ranges.range_end > excluded.range_end \
                 THEN price_ranges.range_end ELSE excluded.range_end END",
            )
            .bind(mint)
            .bind(granularity)
            .bind(range.0)
            .bind(range.1)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        self.price_writes
            .fetch_add(1, std::sync::atomic::Ordering::Release);
        Ok(())
    }

    /// How many price ranges this process has stored through this store:
    /// a reader that learnt something of the series can tell whether this
    /// process has stored anything since (another instance's writes it
    /// cannot see here).
    pub fn price_writes(&self) -> u64 {
        self.price_writes.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The ranges already asked of a source that overlap `[from, to)`.
    pub async fn price_ranges(
        &self,
        mint: &str,
        granularity: i64,
        from: i64,
        to: i64,
    ) -> Result<Vec<(i64, i64)>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT range_start, range_end FROM price_ranges \
             WHERE mint = $1 AND granularity = $2 AND range_end > $3 AND range_start < $4 \
             ORDER BY range_start"
        )
        .bind(mint)
        .bind(granularity)
        .bind(from)
        .bind(to)
        .fetch_all(pool)
        .await?))
    }

    /// Queue the backfill of one series. A series has one backfill row
    /// (the key is the job's address; see the backfill-per-series
    /// migration): the first read inserts it, a later one re-queues it with
    /// the new range once it has ended (completed or failed), and while it
    /// runs it is left alone. Returns the series' job and whether this call
    /// queued it.
    pub async fn queue_backfill_job(
        &self,
        id: &str,
        series_key: &str,
        granularity: &str,
        spec: &str,
        now: UnixMillis,
    ) -> Result<(JobRecord, bool), StoreError> {
        let queued = on_pool!(&self.pool, |pool| {
            sqlx::query(
                "INSERT INTO jobs (id, kind, address, scope, quote_id, status, phase, sources, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, 'running', 'queued', $6, $7, $7) \
                 ON CONFLICT (address) WHERE kind = 'price_backfill' DO UPDATE SET \
                 status = 'running', phase = 'queued', scope = excluded.scope, sources = excluded.sources, \
                 lease_owner = NULL, lease_until = NULL, attempts = 0, resume_before = NULL, \
                 signatures_listed = 0, transactions_fetched = 0, transactions_missing = 0, \
                 legs_written = 0, rpc_calls = 0, rpc_credits = 0, error = NULL, finished_at = NULL, \
                 source_index = 0, created_at = excluded.created_at, updated_at = excluded.updated_at \
                 WHERE jobs.status <> 'running'",
            )
            .bind(id)
            .bind(BACKFILL_KIND)
            .bind(series_key)
            .bind(granularity)
            .bind(BACKFILL_QUOTE)
            .bind(spec)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        let sql = format!(
            "SELECT {} FROM jobs WHERE address = $1 AND kind = $2",
            super::jobs::COLUMNS
        );
        let job: JobRecord = on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(series_key)
            .bind(BACKFILL_KIND)
            .fetch_optional(pool)
            .await?)
        .ok_or(StoreError::Vanished)?;
        Ok((job, queued == 1))
    }

    /// Every price backfill job, oldest first (one per series).
    pub async fn backfill_jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        let sql = format!(
            "SELECT {} FROM jobs WHERE kind = $1 ORDER BY created_at, id",
            super::jobs::COLUMNS
        );
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(BACKFILL_KIND)
            .fetch_all(pool)
            .await?))
    }

    /// Every leg of a wallet, oldest first (block time, then signature and
    /// leg order); legs without a block time come first.
    pub async fn wallet_legs(&self, wallet: &str) -> Result<Vec<AnalyticsLeg>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT signature, leg_index, block_time, operation_type, mint, amount, decimals, \
             counterparties, position, router FROM legs WHERE wallet = $1 \
             ORDER BY COALESCE(block_time, 0), slot, signature, leg_index"
        )
        .bind(wallet)
        .fetch_all(pool)
        .await?))
    }
}
