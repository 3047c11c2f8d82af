//! Scan jobs and the wallet data they write.
//!
//! Workers claim a running job with a lease: SQLite in one
//! `UPDATE … WHERE id = (SELECT …) RETURNING`, PostgreSQL with
//! `FOR UPDATE SKIP LOCKED` so concurrent workers never wait on each other.
//! Every progress write is fenced by the lease owner: a worker that lost
//! its lease (it stalled, another took over) finds its writes refused and
//! stops. Legs are written with their transaction marker in one database
//! transaction, and both are keyed by (wallet, signature), so a job that
//! is resumed never duplicates or loses a leg.

use std::collections::HashSet;

use super::{Dialect, Pool, Store, StoreError};
use ledger_core::{clock::UnixMillis, ledger::Leg};

/// Where a job stands, as `jobs.status` stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobStatus {
    Running,
    Completed,
    Partial,
    Failed,
    Cancelled,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Partial => "partial",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }

    /// A stored status; `None` for text no job is ever given.
    pub fn parse(text: &str) -> Option<Self> {
        [
            JobStatus::Running,
            JobStatus::Completed,
            JobStatus::Partial,
            JobStatus::Failed,
            JobStatus::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct JobRecord {
    pub id: String,
    pub kind: String,
    pub address: String,
    pub scope: String,
    pub quote_id: String,
    pub status: String,
    pub phase: String,
    pub lease_owner: Option<String>,
    pub lease_until: Option<i64>,
    pub attempts: i32,
    pub resume_before: Option<String>,
    pub stop_at: Option<String>,
    pub signatures_listed: i64,
    pub transactions_fetched: i64,
    pub transactions_missing: i64,
    pub legs_written: i64,
    pub rpc_calls: i64,
    pub rpc_credits: i64,
    pub error: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub finished_at: Option<i64>,
    /// JSON array of the addresses the scan lists (the wallet first).
    pub sources: Option<String>,
    pub source_index: i32,
    /// The account that started the scan; none for an anonymous payer.
    pub account_id: Option<String>,
}

pub(super) const COLUMNS: &str = "id, kind, address, scope, quote_id, status, phase, lease_owner, lease_until, \
    attempts, resume_before, stop_at, signatures_listed, transactions_fetched, transactions_missing, \
    legs_written, rpc_calls, rpc_credits, error, created_at, updated_at, finished_at, sources, \
    source_index, account_id";

/// A scan job to create.
#[derive(Clone, Copy, Debug)]
pub struct NewScanJob<'a> {
    pub id: &'a str,
    pub address: &'a str,
    pub scope: &'a str,
    pub quote_id: &'a str,
    pub stop_at: Option<&'a str>,
    /// The account starting it, if any.
    pub account_id: Option<&'a str>,
    pub now: UnixMillis,
}

/// Progress a worker reports after each page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobProgress {
    pub phase: String,
    /// Which of the job's sources is being listed.
    pub source_index: i32,
    pub resume_before: Option<String>,
    pub signatures_listed: i64,
    pub transactions_fetched: i64,
    pub transactions_missing: i64,
    pub legs_written: i64,
    pub rpc_calls: i64,
    pub rpc_credits: i64,
}

/// The outcome of creating a scan job.
#[derive(Debug, PartialEq, Eq)]
pub enum Created {
    Job(JobRecord),
    /// A scan of the wallet is already running: this one.
    AlreadyRunning(JobRecord),
}

/// One transaction's contribution to a wallet's ledger.
pub struct TransactionLegs<'a> {
    pub signature: &'a str,
    pub slot: u64,
    pub block_time: Option<i64>,
    pub failed: bool,
    pub legs: &'a [Leg],
}

impl<'a> TransactionLegs<'a> {
    /// A decoded transaction and its legs for the wallet.
    pub fn new(view: &'a ledger_core::ledger::TxView, legs: &'a [Leg]) -> Self {
        Self {
            signature: &view.signature,
            slot: view.slot,
            block_time: view.block_time,
            failed: view.failed,
            legs,
        }
    }
}

pub(super) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Store {
    /// Create a running scan job, unless one is running for the wallet.
    pub async fn create_scan_job(&self, new: &NewScanJob<'_>) -> Result<Created, StoreError> {
        self.create_scan_job_attempt(new, 1).await
    }

    /// [`Store::create_scan_job`], attempt `attempt`: a running scan that
    /// refused the insert and ended before it could be read back is tried
    /// again, at most three times in all.
    async fn create_scan_job_attempt(
        &self,
        new: &NewScanJob<'_>,
        attempt: u8,
    ) -> Result<Created, StoreError> {
        let NewScanJob {
            id,
            address,
            scope,
            quote_id,
            stop_at,
            account_id,
            now,
        } = *new;
        let inserted = on_pool!(&self.pool, |pool| {
            sqlx::query(crate::INSERT_SCAN_JOB)
                .bind(id)
                .bind(address)
                .bind(scope)
                .bind(quote_id)
                .bind(stop_at)
                .bind(now)
                .bind(account_id)
                .execute(pool)
                .await?
                .rows_affected()
        });
        if inserted == 1 {
            let job = self.job(id).await?.ok_or(StoreError::Vanished)?;
            return Ok(Created::Job(job));
        }
        match self.running_job_for(address).await? {
            Some(job) => Ok(Created::AlreadyRunning(job)),
            // The running job ended between our insert and this read.
            None if attempt < 3 => Box::pin(self.create_scan_job_attempt(new, attempt + 1)).await,
            None => Err(StoreError::Vanished),
        }
    }

    /// Record a scan that is already complete, its legs written by the
    /// caller: the sample wallet seeded at startup (`server::sample`),
    /// whose data ships in the repository. Inserted finished, so no worker
    /// ever claims it; false when a job of this id exists.
    pub async fn insert_completed_scan(&self, new: &NewScanJob<'_>) -> Result<bool, StoreError> {
        let inserted = on_pool!(&self.pool, |pool| {
            sqlx::query(
            "INSERT INTO jobs (id, kind, address, scope, quote_id, status, phase, stop_at, created_at, updated_at, finished_at, account_id) \
             VALUES ($1, 'scan', $2, $3, $4, 'completed', 'done', $5, $6, $6, $6, $7) \
             ON CONFLICT DO NOTHING"
        )
        .bind(new.id)
        .bind(new.address)
        .bind(new.scope)
        .bind(new.quote_id)
        .bind(new.stop_at)
        .bind(new.now)
        .bind(new.account_id)
        .execute(pool)
        .await?
        .rows_affected()
        });
        Ok(inserted == 1)
    }

    pub async fn job(&self, id: &str) -> Result<Option<JobRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM jobs WHERE id = $1");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await?))
    }

    pub async fn running_job_for(&self, address: &str) -> Result<Option<JobRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM jobs WHERE address = $1 AND status = 'running'");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(address)
            .fetch_optional(pool)
            .await?))
    }

    /// Unfinished jobs per kind at `now`: how many wait for a worker (no
    /// lease, or one that ran out) and how many a worker holds.
    pub async fn job_counts(&self, now: UnixMillis) -> Result<Vec<(String, i64, i64)>, StoreError> {
        let sql = "SELECT kind, \
                   CAST(SUM(CASE WHEN lease_until IS NULL OR lease_until < $1 THEN 1 ELSE 0 END) AS BIGINT), \
                   CAST(SUM(CASE WHEN lease_until >= $1 THEN 1 ELSE 0 END) AS BIGINT) \
                   FROM jobs WHERE status = 'running' GROUP BY kind";
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(sql)
            .bind(now)
            .fetch_all(pool)
            .await?))
    }

    /// Claim the oldest running job whose lease is free or expired.
    pub async fn claim_job(
        &self,
        owner: &str,
        now: UnixMillis,
        lease_ms: i64,
    ) -> Result<Option<JobRecord>, StoreError> {
        let job = match &self.pool {
            Pool::Sqlite(pool) => {
                let sql = format!(
                    "UPDATE jobs SET lease_owner = $1, lease_until = $2, attempts = attempts + 1, updated_at = $3 \
                     WHERE id = (SELECT id FROM jobs WHERE status = 'running' \
                                 AND (lease_until IS NULL OR lease_until < $3) \
                                 ORDER BY created_at LIMIT 1) \
                     RETURNING {COLUMNS}"
                );
                sqlx::query_as(&sql)
                    .bind(owner)
                    .bind(now + lease_ms)
                    .bind(now)
                    .fetch_optional(pool)
                    .await?
            }
            Pool::Postgres(pool) => {
                let sql = format!(
                    "WITH claimable AS (SELECT id FROM jobs WHERE status = 'running' \
                         AND (lease_until IS NULL OR lease_until < $3) \
                         ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED) \
                     UPDATE jobs SET lease_owner = $1, lease_until = $2, attempts = attempts + 1, updated_at = $3 \
                     FROM claimable WHERE jobs.id = claimable.id \
                     RETURNING {}",
                    COLUMNS
                        .split(", ")
                        .map(|c| format!("jobs.{c}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                sqlx::query_as(&sql)
                    .bind(owner)
                    .bind(now + lease_ms)
                    .bind(now)
                    .fetch_optional(pool)
                    .await?
            }
        };
        Ok(job)
    }

    /// Record progress and extend the lease. False when `owner` no longer
    /// holds the job (the caller must stop).
    pub async fn record_progress(
        &self,
        id: &str,
        owner: &str,
        p: &JobProgress,
        now: UnixMillis,
        lease_ms: i64,
    ) -> Result<bool, StoreError> {
        let affected = on_pool!(&self.pool, |pool| {
            sqlx::query(
            "UPDATE jobs SET phase = $3, resume_before = $4, signatures_listed = $5, \
             transactions_fetched = $6, transactions_missing = $7, legs_written = $8, \
             rpc_calls = $9, rpc_credits = $10, updated_at = $11, lease_until = $12, source_index = $13 \
             WHERE id = $1 AND lease_owner = $2 AND status = 'running'"
        )
        .bind(id)
        .bind(owner)
        .bind(&p.phase)
        .bind(&p.resume_before)
        .bind(p.signatures_listed)
        .bind(p.transactions_fetched)
        .bind(p.transactions_missing)
        .bind(p.legs_written)
        .bind(p.rpc_calls)
        .bind(p.rpc_credits)
        .bind(now)
        .bind(now + lease_ms)
        .bind(p.source_index)
        .execute(pool)
        .await?
        .rows_affected()
        });
        Ok(affected == 1)
    }

    /// Fix the addresses a job lists, on its first run. False when `owner`
    /// no longer holds the job.
    pub async fn set_job_sources(
        &self,
        id: &str,
        owner: &str,
        sources: &str,
    ) -> Result<bool, StoreError> {
        let affected = on_pool!(&self.pool, |pool| {
            sqlx::query(
            "UPDATE jobs SET sources = $3 WHERE id = $1 AND lease_owner = $2 AND status = 'running'"
        )
        .bind(id)
        .bind(owner)
        .bind(sources)
        .execute(pool)
        .await?
        .rows_affected()
        });
        Ok(affected == 1)
    }

    /// End a job with `status` (completed, partial, failed, cancelled).
    pub async fn finish_job(
        &self,
        id: &str,
        owner: &str,
        status: &str,
        error: Option<&str>,
        now: UnixMillis,
    ) -> Result<bool, StoreError> {
        let affected = on_pool!(&self.pool, |pool| {
            sqlx::query(
            "UPDATE jobs SET status = $3, phase = 'done', error = $4, finished_at = $5, updated_at = $5, \
             lease_owner = NULL, lease_until = NULL \
             WHERE id = $1 AND lease_owner = $2 AND status = 'running'"
        )
        .bind(id)
        .bind(owner)
        .bind(status)
        .bind(error)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected()
        });
        Ok(affected == 1)
    }

    /// Give a job back (shutdown at a safe point): the next claim takes it.
    pub async fn release_job(&self, id: &str, owner: &str) -> Result<bool, StoreError> {
        let affected = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE jobs SET lease_owner = NULL, lease_until = NULL \
             WHERE id = $1 AND lease_owner = $2 AND status = 'running'"
        )
        .bind(id)
        .bind(owner)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(affected == 1)
    }

    /// Which of `signatures` the wallet's ledger already holds.
    pub async fn known_signatures(
        &self,
        wallet: &str,
        signatures: &[String],
    ) -> Result<HashSet<String>, StoreError> {
        let mut known = HashSet::new();
        for chunk in signatures.chunks(500) {
            let placeholders: Vec<String> =
                (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
            let sql = format!(
                "SELECT signature FROM wallet_transactions WHERE wallet = $1 AND signature IN ({})",
                placeholders.join(", ")
            );
            let found: Vec<String> = on_pool!(&self.pool, |pool| {
                let mut query = sqlx::query_scalar(&sql).bind(wallet);
                for sig in chunk {
                    query = query.bind(sig);
                }
                query.fetch_all(pool).await?
            });
            known.extend(found);
        }
        Ok(known)
    }

    /// The newest signature in the wallet's ledger (where an incremental
    /// scan stops listing). Synthetic signatures (a staking reward's, which
    /// hold a `:` that base58 never does) are not on any signature list.
    pub async fn newest_known_signature(&self, wallet: &str) -> Result<Option<String>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT signature FROM wallet_transactions WHERE wallet = $1 \
             AND signature NOT LIKE '%:%' ORDER BY slot DESC, signature DESC LIMIT 1"
        )
        .bind(wallet)
        .fetch_optional(pool)
        .await?))
    }

    /// Write a batch of transactions' legs for a wallet, atomically, read
    /// by the current decoder (`ledger::DECODER_VERSION`). Rows already
    /// present are left as they are. Returns the legs written.
    pub async fn write_legs(
        &self,
        wallet: &str,
        batch: &[TransactionLegs<'_>],
    ) -> Result<u64, StoreError> {
        self.write_legs_read_by(wallet, batch, ledger_core::ledger::DECODER_VERSION)
            .await
    }

    /// [`Store::write_legs`], recording that decoder version `version` read
    /// them (a test stands in an older decoder's legs with it).
    pub async fn write_legs_read_by(
        &self,
        wallet: &str,
        batch: &[TransactionLegs<'_>],
        version: i32,
    ) -> Result<u64, StoreError> {
        let written = on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            let mut written = 0u64;
            for t in batch {
                let fresh = sqlx::query(
                    "INSERT INTO wallet_transactions (wallet, signature, slot, block_time, failed, decoder_version) \
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                )
                .bind(wallet)
                .bind(t.signature)
                .bind(to_i64(t.slot))
                .bind(t.block_time)
                .bind(t.failed)
                .bind(version)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if fresh == 0 {
                    continue;
                }
                for leg in t.legs {
                    bind_leg!(sqlx::query(crate::INSERT_LEG_OR_SKIP), wallet, leg)
                        .execute(&mut *tx)
                        .await?;
                    written += 1;
                }
            }
            if written > 0 {
                // In the same transaction as the legs: a reader that sees
                // the old version cannot have missed a leg of the new one.
                sqlx::query(crate::BUMP_LEDGER_VERSION)
                    .bind(wallet)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            written
        });
        Ok(written)
    }

    /// A number that changes whenever legs of `wallet` are written (0 before
    /// any): what is computed from a wallet's whole ledger is cached on it.
    pub async fn ledger_version(&self, wallet: &str) -> Result<i64, StoreError> {
        let version: Option<i64> = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT version FROM ledger_versions WHERE wallet = $1"
        )
        .bind(wallet)
        .fetch_optional(pool)
        .await?);
        Ok(version.unwrap_or(0))
    }

    /// Count, for job `job_id`, the transactions it wrote that ran each of
    /// `programs` (programs the ledger's registry does not know): added to
    /// what earlier batches counted.
    pub async fn add_unknown_programs(
        &self,
        job_id: &str,
        programs: &[(String, i64)],
    ) -> Result<(), StoreError> {
        if programs.is_empty() {
            return Ok(());
        }
        on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            for (program, transactions) in programs {
                sqlx::query(
                    "INSERT INTO job_unknown_programs (job_id, program, transactions) \
                     VALUES ($1, $2, $3) ON CONFLICT (job_id, program) DO UPDATE \
                     SET transactions = job_unknown_programs.transactions + excluded.transactions",
                )
                .bind(job_id)
                .bind(program)
                .bind(*transactions)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// The unknown programs job `job_id` met, most transactions first.
    pub async fn unknown_programs(&self, job_id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT program, transactions FROM job_unknown_programs WHERE job_id = $1 \
             ORDER BY transactions DESC, program"
        )
        .bind(job_id)
        .fetch_all(pool)
        .await?))
    }

    /// Apply the history-wide spam rule (`ledger::spam`) to every stored
    /// leg of `wallet`: an `airdrop_spam` leg of a mint the wallet dealt in
    /// anywhere in its history becomes the `transfer_in` or `airdrop` the
    /// decoder would have read without the per-transaction rule. One
    /// database transaction, and the wallet's ledger version moves when a
    /// leg changes. Returns the legs changed.
    pub async fn unmark_spam(&self, wallet: &str) -> Result<u64, StoreError> {
        use ledger_core::ledger::{
            Counterparty, OperationType,
            spam::{self, SpamInput},
        };
        let rows: Vec<(String, i32, String, String, String)> =
            on_pool!(&self.pool, |pool| sqlx::query_as(
                "SELECT signature, leg_index, operation_type, mint, counterparties \
                 FROM legs WHERE wallet = $1"
            )
            .bind(wallet)
            .fetch_all(pool)
            .await?);
        let parsed: Vec<(usize, OperationType, Vec<Counterparty>)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, (_, _, op, _, parties))| {
                Some((
                    i,
                    OperationType::parse(op)?,
                    serde_json::from_str(parties).unwrap_or_default(),
                ))
            })
            .collect();
        let inputs: Vec<SpamInput<'_>> = parsed
            .iter()
            .map(|(i, operation, parties)| SpamInput {
                operation: *operation,
                mint: rows[*i].3.as_str(),
                parties: parties.iter().map(|p| p.direction).collect(),
            })
            .collect();
        let changes: Vec<(&str, i32, OperationType)> = spam::unmark(&inputs)
            .into_iter()
            .map(|(k, operation)| {
                let row = &rows[parsed[k].0];
                (row.0.as_str(), row.1, operation)
            })
            .collect();
        if changes.is_empty() {
            return Ok(0);
        }
        let changed = on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            let mut changed = 0u64;
            for (signature, index, operation) in &changes {
                changed += sqlx::query(
                    "UPDATE legs SET operation_type = $1 \
                     WHERE wallet = $2 AND signature = $3 AND leg_index = $4",
                )
                .bind(operation.as_str())
                .bind(wallet)
                .bind(*signature)
                .bind(*index)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            }
            sqlx::query(crate::BUMP_LEDGER_VERSION)
                .bind(wallet)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            changed
        });
        Ok(changed)
    }

    /// Apply the history-wide interest rule (`ledger::interest`) to every
    /// stored leg of `wallet`: a lending withdrawal that took more out of
    /// its position than the history put in keeps the principal as its
    /// amount, and the excess becomes an `interest` leg of the same
    /// transaction (the next free index), with the withdrawal's position,
    /// router and counterparties. One database transaction; the wallet's
    /// ledger version moves when a leg changes. Idempotent: once split, a
    /// history has no excess left. Returns the withdrawals split.
    pub async fn split_interest(&self, wallet: &str) -> Result<u64, StoreError> {
        use ledger_core::ledger::{
            OperationType,
            interest::{self, PositionLeg},
        };
        type Row = (
            String,
            i32,
            i64,
            Option<i64>,
            String,
            String,
            String,
            i32,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let rows: Vec<Row> = on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT signature, leg_index, slot, block_time, operation_type, mint, amount, \
             decimals, counterparties, position, venue, router \
             FROM legs WHERE wallet = $1 AND position IS NOT NULL \
             ORDER BY COALESCE(block_time, 0), slot, signature, leg_index"
        )
        .bind(wallet)
        .fetch_all(pool)
        .await?);
        let parsed: Vec<(usize, OperationType, i128)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, OperationType::parse(&r.4)?, r.6.parse().ok()?)))
            .collect();
        let inputs: Vec<PositionLeg<'_>> = parsed
            .iter()
            .map(|(i, operation, amount)| PositionLeg {
                operation: *operation,
                position: rows[*i].9.as_deref(),
                router: rows[*i].11.as_deref(),
                mint: rows[*i].5.as_str(),
                amount: *amount,
            })
            .collect();
        let splits = interest::split(&inputs);
        if splits.is_empty() {
            return Ok(0);
        }
        let changed = on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            let mut changed = 0u64;
            for split in &splits {
                let row = &rows[parsed[split.index].0];
                changed += sqlx::query(
                    "UPDATE legs SET amount = $1 \
                     WHERE wallet = $2 AND signature = $3 AND leg_index = $4",
                )
                .bind(split.principal.to_string())
                .bind(wallet)
                .bind(&row.0)
                .bind(row.1)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                let next: i32 = sqlx::query_scalar(
                    "SELECT COALESCE(MAX(leg_index), -1) + 1 FROM legs \
                     WHERE wallet = $1 AND signature = $2",
                )
                .bind(wallet)
                .bind(&row.0)
                .fetch_one(&mut *tx)
                .await?;
                sqlx::query(
                    "INSERT INTO legs (wallet, signature, leg_index, slot, block_time, operation_type, \
                     mint, amount, decimals, counterparties, position, venue, router) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                )
                .bind(wallet)
                .bind(&row.0)
                .bind(next)
                .bind(row.2)
                .bind(row.3)
                .bind(OperationType::Interest.as_str())
                .bind(&row.5)
                .bind(split.interest.to_string())
                .bind(row.7)
                .bind(&row.8)
                .bind(row.9.as_deref())
                .bind(row.10.as_deref())
                .bind(row.11.as_deref())
                .execute(&mut *tx)
                .await?;
            }
            sqlx::query(crate::BUMP_LEDGER_VERSION)
                .bind(wallet)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            changed
        });
        Ok(changed)
    }

    /// Legs stored for a wallet (for tests and reports).
    pub async fn count_legs(&self, wallet: &str) -> Result<i64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM legs WHERE wallet = $1"
        )
        .bind(wallet)
        .fetch_one(pool)
        .await?))
    }

    /// A named server secret, created (32 random bytes, hex) on first use.
    /// Every instance on the same database sees the same one. Read first,
    /// so the common case is one SELECT and no write; a secret never changes
    /// once stored, so after that it is answered from memory.
    pub async fn server_secret(&self, name: &str) -> Result<String, StoreError> {
        if let Some(secret) = self.known.secret(name) {
            return Ok(secret);
        }
        let read = || async {
            let secret: Option<String> = on_pool!(&self.pool, |pool| sqlx::query_scalar(
                "SELECT secret FROM server_secrets WHERE name = $1"
            )
            .bind(name)
            .fetch_optional(pool)
            .await?);
            if let Some(secret) = &secret {
                self.known.remember_secret(name, secret);
            }
            Ok::<Option<String>, StoreError>(secret)
        };
        if let Some(secret) = read().await? {
            return Ok(secret);
        }
        use rand::RngCore;
        let mut raw = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut raw);
        let fresh: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        // Two instances may race here; the first insert wins and both read it.
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO server_secrets (name, secret) VALUES ($1, $2) ON CONFLICT DO NOTHING"
        )
        .bind(name)
        .bind(&fresh)
        .execute(pool)
        .await
        .map(|_| ())?);
        read().await?.ok_or(StoreError::Vanished)
    }
}

/// One stored leg, as the ledger query reads it.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct LegRow {
    pub signature: String,
    pub leg_index: i32,
    pub slot: i64,
    pub block_time: Option<i64>,
    pub operation_type: String,
    pub mint: String,
    pub amount: String,
    pub decimals: i32,
    pub counterparties: String,
    /// The program account the leg moves into, out of or from within.
    pub position: Option<String>,
    /// Registry names of the pools and order books a swap went through.
    pub venue: Option<String>,
    /// Registry name of the aggregator or order program that routed it.
    pub router: Option<String>,
}

/// Which legs a ledger page holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LedgerQuery {
    pub wallet: String,
    /// Inclusive bounds on block time, unix seconds.
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub mint: Option<String>,
    pub operation_type: Option<String>,
    pub exclude: Vec<String>,
    /// A USD floor applies: values come from the price series at read
    /// time (`reads::ledger_page`), so the table query itself does not filter.
    pub priced_only: bool,
    /// Start after this leg: (slot, signature, leg_index), newest first.
    pub after: Option<(i64, String, i32)>,
    pub limit: u32,
}

impl Store {
    /// Whether a scan of `wallet` has ended (completed or partial). Once
    /// true it stays true (an ended job never runs again and jobs are never
    /// deleted), so a yes is remembered; a no is asked again each time.
    pub async fn wallet_scanned(&self, wallet: &str) -> Result<bool, StoreError> {
        if self.known.scanned(wallet) {
            return Ok(true);
        }
        let n: i64 = on_pool!(&self.pool, |pool| {
            sqlx::query_scalar(
            "SELECT COUNT(*) FROM jobs WHERE address = $1 AND status IN ('completed', 'partial')"
        )
        .bind(wallet)
        .fetch_one(pool)
        .await?
        });
        if n > 0 {
            self.known.remember_scanned(wallet);
        }
        Ok(n > 0)
    }

    /// One page of a wallet's legs, newest first (slot, then signature,
    /// descending; legs of a transaction in their order).
    pub async fn ledger_page(&self, q: &LedgerQuery) -> Result<Vec<LegRow>, StoreError> {
        // SQLite's driver hands every row, value by value, from its worker
        // thread to the caller's, which costs more than reading it; so on
        // SQLite the page comes back as one JSON array in one row.
        let packed = self.dialect() == Dialect::Sqlite;
        Ok(on_pool!(&self.pool, |pool| {
            let mut sql = sqlx::QueryBuilder::new(if packed {
                "SELECT json_group_array(json_array(signature, leg_index, slot, block_time, \
                 operation_type, mint, amount, decimals, counterparties, position, venue, router)) \
                 FROM ("
            } else {
                ""
            });
            sql.push(
                "SELECT signature, leg_index, slot, block_time, operation_type, mint, amount, decimals, \
                 counterparties, position, venue, router FROM legs WHERE wallet = ",
            );
            sql.push_bind(&q.wallet);
            if let Some(from) = q.from {
                sql.push(" AND block_time >= ").push_bind(from);
            }
            if let Some(to) = q.to {
                sql.push(" AND block_time <= ").push_bind(to);
            }
            if let Some(mint) = &q.mint {
                sql.push(" AND mint = ").push_bind(mint);
            }
            if let Some(op) = &q.operation_type {
                sql.push(" AND operation_type = ").push_bind(op);
            }
            for op in &q.exclude {
                sql.push(" AND operation_type <> ").push_bind(op);
            }
            if let Some((slot, signature, index)) = &q.after {
                // `slot <=` first: a bound the planner can seek to in
                // `legs_newest` (the OR alone is not), so a page deep in a
                // history is an index range scan like the first one.
                sql.push(" AND slot <= ").push_bind(*slot);
                sql.push(" AND (slot < ")
                    .push_bind(*slot)
                    .push(" OR (slot = ")
                    .push_bind(*slot)
                    .push(" AND signature < ")
                    .push_bind(signature)
                    .push(") OR (slot = ")
                    .push_bind(*slot)
                    .push(" AND signature = ")
                    .push_bind(signature)
                    .push(" AND leg_index > ")
                    .push_bind(*index)
                    .push("))");
            }
            sql.push(" ORDER BY slot DESC, signature DESC, leg_index ASC LIMIT ")
                .push_bind(i64::from(q.limit));
            if packed {
                sql.push(")");
                let packed: String = sql.build_query_scalar().fetch_one(pool).await?;
                unpack_legs(&packed)?
            } else {
                sql.build_query_as::<LegRow>().fetch_all(pool).await?
            }
        }))
    }
}

/// The rows of a packed page (see `ledger_page`), newest first: an
/// aggregate does not promise its input order, so they are sorted again.
fn unpack_legs(packed: &str) -> Result<Vec<LegRow>, StoreError> {
    type Packed = (
        String,
        i32,
        i64,
        Option<i64>,
        String,
        String,
        String,
        i32,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Packed> = serde_json::from_str(packed)
        .map_err(|e| StoreError::Database(sqlx::Error::Decode(Box::new(e))))?;
    let mut rows: Vec<LegRow> = rows
        .into_iter()
        .map(|r| LegRow {
            signature: r.0,
            leg_index: r.1,
            slot: r.2,
            block_time: r.3,
            operation_type: r.4,
            mint: r.5,
            amount: r.6,
            decimals: r.7,
            counterparties: r.8,
            position: r.9,
            venue: r.10,
            router: r.11,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.slot
            .cmp(&a.slot)
            .then_with(|| b.signature.cmp(&a.signature))
            .then_with(|| a.leg_index.cmp(&b.leg_index))
    });
    Ok(rows)
}
