//! Research credits, research actions, account features and the graph
//! cache: the rows behind `crate::credits` and `crate::graph`.
//!
//! A balance is never read and then written: every movement is one
//! transaction whose first statement writes, so SQLite takes its write lock
//! up front (no busy upgrade) and PostgreSQL locks the balance row. A charge
//! is `UPDATE … SET balance = balance - cost WHERE balance >= cost`: two
//! charges racing on PostgreSQL queue on the row and the second re-checks
//! the condition against the first one's result, so no interleaving takes
//! a balance below zero. Each movement line records the balance it left.

use super::{JobRecord, NewScanJob, Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

/// One line of an account's credit ledger.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct MovementRow {
    pub id: String,
    pub account_id: String,
    pub kind: String,
    pub amount_atomic: i64,
    pub balance_after: i64,
    pub action_id: Option<String>,
    pub reference: Option<String>,
    pub note: String,
    pub created_at: UnixMillis,
}

/// One research action.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct ActionRow {
    pub account_id: String,
    pub action_id: String,
    pub tool: String,
    pub args_hash: String,
    pub state: String,
    pub cost_atomic: i64,
    pub result: Option<String>,
    pub created_at: UnixMillis,
    pub finished_at: Option<UnixMillis>,
}

/// A new action to charge for.
#[derive(Clone, Debug)]
pub struct NewAction<'a> {
    pub account_id: &'a str,
    pub action_id: &'a str,
    pub tool: &'a str,
    pub args_hash: &'a str,
    pub cost_atomic: i64,
    pub movement_id: &'a str,
    pub note: &'a str,
    pub now: UnixMillis,
}

/// The outcome of [`Store::begin_action`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Begun {
    /// Recorded and charged; the balance it left.
    Charged { balance_after: i64 },
    /// The account already has an action under this id (nothing charged).
    Exists(ActionRow),
    /// The balance is short of the cost (nothing recorded or charged).
    Insufficient { balance: i64 },
}

/// A credit to apply once.
#[derive(Clone, Debug)]
pub struct NewCredit<'a> {
    pub id: &'a str,
    pub account_id: &'a str,
    /// topup or grant.
    pub kind: &'a str,
    /// Above zero.
    pub amount_atomic: i64,
    /// The most the balance may hold once credited; a credit that would
    /// take it higher is not applied ([`Credited::OverLimit`]). Never above
    /// `i64::MAX`, so the sum cannot overflow whatever is passed.
    pub max_balance: i64,
    /// Makes the credit happen once (a payment id); none for a grant.
    pub reference: Option<&'a str>,
    pub note: &'a str,
    pub now: UnixMillis,
}

/// The outcome of [`Store::credit`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credited {
    /// Applied; the balance it left.
    Applied { balance_after: i64 },
    /// A movement with this reference exists: nothing applied.
    AlreadyApplied,
    /// The balance would pass `max_balance`: nothing applied. The balance
    /// as it stands.
    OverLimit { balance: i64 },
}

/// A scan paid from credits, taken all or nothing by
/// [`Store::begin_paid_scan`]: the action (its charge) and the job.
#[derive(Clone, Debug)]
pub struct NewPaidScan<'a> {
    pub action: NewAction<'a>,
    pub job: NewScanJob<'a>,
    /// The action's result, kept for the same form sent again: the job's
    /// id (`{"job_id": …}`).
    pub result: &'a str,
}

/// The outcome of [`Store::begin_paid_scan`].
#[derive(Debug, PartialEq, Eq)]
pub enum PaidScan {
    /// Charged and queued, in one commit; the balance it left.
    Started { job: JobRecord, balance_after: i64 },
    /// The account already has an action under this id (nothing charged).
    Exists(ActionRow),
    /// The balance is short of the cost (nothing recorded or charged).
    Insufficient { balance: i64 },
    /// A scan of the wallet is running: this one (nothing recorded or
    /// charged).
    AlreadyRunning(JobRecord),
}

/// A portal scan's debit left `pending` by an earlier version (which took
/// the debit and created the job in two commits), with the job of its
/// quote and account if one was created.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct StaleScanDebit {
    pub account_id: String,
    pub action_id: String,
    pub job_id: Option<String>,
}

/// Which actions a refund may settle.
#[derive(Clone, Copy)]
enum RefundOf<'a> {
    /// A `pending` action that failed.
    Pending,
    /// A `pending` portal scan debit while no job of its quote exists.
    PendingScanWithoutJob,
    /// A `done` action of `tool` whose paid scan job `job_id` failed.
    FailedScan { tool: &'a str, job_id: &'a str },
}

/// The result a paid portal scan's action keeps: the job it paid for, as
/// `credits::pay_scan` writes it (`{"job_id":"job_…"}`). A refund matches
/// it, so only the failure of the very job the credits paid for gives
/// them back (another job started on the same quote, say through
/// `scan_wallet`, is not that job).
pub fn paid_job_result(job_id: &str) -> String {
    serde_json::json!({ "job_id": job_id }).to_string()
}

/// A portal scan paid from credits whose job failed while its action is
/// still `done` (charged): what [`Store::refund_failed_scan`] gives back.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct FailedPaidScan {
    pub account_id: String,
    pub action_id: String,
    pub job_id: String,
}

const MOVEMENT_COLUMNS: &str = "id, account_id, kind, amount_atomic, balance_after, action_id, \
    reference, note, created_at";
const ACTION_COLUMNS: &str = "account_id, action_id, tool, args_hash, state, cost_atomic, result, \
    created_at, finished_at";

/// Inside the open transaction `$tx`, charge action `$a`'s cost: one
/// conditional update of the balance row (never below zero) and its
/// `charge` movement line. `Some(balance left)`, or `None` when the balance
/// does not cover a cost above zero (nothing written; the caller rolls
/// back). Shared by [`Store::begin_action`] and [`Store::begin_paid_scan`],
/// which write the action row before it, so both take their locks in the
/// same order.
macro_rules! charge_in_tx {
    ($tx:ident, $a:expr) => {{
        let a = $a;
        let left: Option<i64> = sqlx::query_scalar(
            "UPDATE credit_balances SET balance_atomic = balance_atomic - $1 \
             WHERE account_id = $2 AND balance_atomic >= $1 RETURNING balance_atomic",
        )
        .bind(a.cost_atomic)
        .bind(a.account_id)
        .fetch_optional(&mut *$tx)
        .await?;
        match left {
            None if a.cost_atomic > 0 => None,
            left => {
                let left = left.unwrap_or(0);
                sqlx::query(
                    "INSERT INTO credit_movements (id, account_id, kind, amount_atomic, \
                     balance_after, action_id, reference, note, created_at) \
                     VALUES ($1, $2, 'charge', $3, $4, $5, NULL, $6, $7)",
                )
                .bind(a.movement_id)
                .bind(a.account_id)
                .bind(-a.cost_atomic)
                .bind(left)
                .bind(a.action_id)
                .bind(a.note)
                .bind(a.now)
                .execute(&mut *$tx)
                .await?;
                Some(left)
            }
        }
    }};
}

impl Store {
    /// An account's balance (0 when it never had credit).
    pub async fn credit_balance(&self, account_id: &str) -> Result<i64, StoreError> {
        let balance: Option<i64> = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT balance_atomic FROM credit_balances WHERE account_id = $1"
        )
        .bind(account_id)
        .fetch_optional(pool)
        .await?);
        Ok(balance.unwrap_or(0))
    }

    /// The sum of an account's movements (what the balance must equal).
    pub async fn credit_movements_sum(&self, account_id: &str) -> Result<i64, StoreError> {
        let sum: Option<i64> = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(amount_atomic), 0) AS BIGINT) FROM credit_movements \
             WHERE account_id = $1"
        )
        .bind(account_id)
        .fetch_one(pool)
        .await?);
        Ok(sum.unwrap_or(0))
    }

    /// An account's movements, newest first, at most `limit`.
    pub async fn credit_movements(
        &self,
        account_id: &str,
        limit: i64,
    ) -> Result<Vec<MovementRow>, StoreError> {
        let sql = format!(
            "SELECT {MOVEMENT_COLUMNS} FROM credit_movements WHERE account_id = $1 \
             ORDER BY seq DESC LIMIT $2"
        );
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(account_id)
            .bind(limit)
            .fetch_all(pool)
            .await?))
    }

    /// Apply a top-up or grant once: [`Credited::AlreadyApplied`] when a
    /// movement with the same reference exists, [`Credited::OverLimit`]
    /// when the balance would pass `max_balance`. The balance row is
    /// written first (it locks the row), only while the sum stays within
    /// the limit, computed as `balance <= max - amount` so the check itself
    /// cannot overflow; then the line. A duplicate reference rolls both
    /// back.
    pub async fn credit(&self, c: &NewCredit<'_>) -> Result<Credited, StoreError> {
        if c.amount_atomic <= 0 || c.amount_atomic > c.max_balance {
            let balance = self.credit_balance(c.account_id).await?;
            return Ok(Credited::OverLimit { balance });
        }
        let applied = on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            let balance: Option<i64> = sqlx::query_scalar(
                "INSERT INTO credit_balances (account_id, balance_atomic) VALUES ($1, $2) \
                 ON CONFLICT (account_id) DO UPDATE \
                 SET balance_atomic = credit_balances.balance_atomic + excluded.balance_atomic \
                 WHERE credit_balances.balance_atomic <= $3 - excluded.balance_atomic \
                 RETURNING balance_atomic",
            )
            .bind(c.account_id)
            .bind(c.amount_atomic)
            .bind(c.max_balance)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(balance) = balance {
                let inserted = sqlx::query(
                    "INSERT INTO credit_movements (id, account_id, kind, amount_atomic, \
                 balance_after, action_id, reference, note, created_at) \
                 VALUES ($1, $2, $3, $4, $5, NULL, $6, $7, $8) ON CONFLICT DO NOTHING",
                )
                .bind(c.id)
                .bind(c.account_id)
                .bind(c.kind)
                .bind(c.amount_atomic)
                .bind(balance)
                .bind(c.reference)
                .bind(c.note)
                .bind(c.now)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if inserted == 0 {
                    tx.rollback().await?;
                    Some(Credited::AlreadyApplied)
                } else {
                    tx.commit().await?;
                    Some(Credited::Applied {
                        balance_after: balance,
                    })
                }
            } else {
                tx.rollback().await?;
                None
            }
        });
        match applied {
            Some(outcome) => Ok(outcome),
            None => Ok(Credited::OverLimit {
                balance: self.credit_balance(c.account_id).await?,
            }),
        }
    }

    /// Record action `a` and charge its cost, all or nothing.
    pub async fn begin_action(&self, a: &NewAction<'_>) -> Result<Begun, StoreError> {
        let begun = on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            let inserted = sqlx::query(
                "INSERT INTO research_actions (account_id, action_id, tool, args_hash, state, \
                 cost_atomic, result, created_at, finished_at) \
                 VALUES ($1, $2, $3, $4, 'pending', $5, NULL, $6, NULL) ON CONFLICT DO NOTHING",
            )
            .bind(a.account_id)
            .bind(a.action_id)
            .bind(a.tool)
            .bind(a.args_hash)
            .bind(a.cost_atomic)
            .bind(a.now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted == 0 {
                tx.rollback().await?;
                None
            } else {
                match charge_in_tx!(tx, a) {
                    None => {
                        tx.rollback().await?;
                        Some(None)
                    }
                    Some(left) => {
                        tx.commit().await?;
                        Some(Some(left))
                    }
                }
            }
        });
        Ok(match begun {
            Some(Some(balance_after)) => Begun::Charged { balance_after },
            Some(None) => Begun::Insufficient {
                balance: self.credit_balance(a.account_id).await?,
            },
            None => Begun::Exists(
                self.action(a.account_id, a.action_id)
                    .await?
                    .ok_or(StoreError::Vanished)?,
            ),
        })
    }

    /// Record the portal scan's action, charge its cost and create its
    /// job in ONE transaction, so no state keeps the money without a job
    /// (nor a job without its charge): a crash or an error at any step
    /// rolls back every step. The action is written `done` with the job's
    /// id as its result. The statements run in the order
    /// [`Store::begin_action`]'s do (action row, balance row, movement
    /// line), then the job: its insert meets `jobs_one_running`, and a
    /// running scan of the wallet rolls the charge back.
    pub async fn begin_paid_scan(&self, p: &NewPaidScan<'_>) -> Result<PaidScan, StoreError> {
        self.begin_paid_scan_attempt(p, 1).await
    }

    /// [`Store::begin_paid_scan`], attempt `attempt`: a scan of the wallet
    /// that refused the job and ended before it could be read back is tried
    /// again, at most three times in all (each attempt rolls back whole).
    async fn begin_paid_scan_attempt(
        &self,
        p: &NewPaidScan<'_>,
        attempt: u8,
    ) -> Result<PaidScan, StoreError> {
        let a = &p.action;
        let j = &p.job;
        enum Step {
            Committed(i64),
            Exists,
            Short,
            Running,
        }
        let step = on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            let inserted = sqlx::query(
                "INSERT INTO research_actions (account_id, action_id, tool, args_hash, state, \
                 cost_atomic, result, created_at, finished_at) \
                 VALUES ($1, $2, $3, $4, 'done', $5, $6, $7, $7) ON CONFLICT DO NOTHING",
            )
            .bind(a.account_id)
            .bind(a.action_id)
            .bind(a.tool)
            .bind(a.args_hash)
            .bind(a.cost_atomic)
            .bind(p.result)
            .bind(a.now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted == 0 {
                tx.rollback().await?;
                Step::Exists
            } else {
                match charge_in_tx!(tx, a) {
                    None => {
                        tx.rollback().await?;
                        Step::Short
                    }
                    Some(left) => {
                        let queued = sqlx::query(crate::INSERT_SCAN_JOB)
                            .bind(j.id)
                            .bind(j.address)
                            .bind(j.scope)
                            .bind(j.quote_id)
                            .bind(j.stop_at)
                            .bind(j.now)
                            .bind(j.account_id)
                            .execute(&mut *tx)
                            .await?
                            .rows_affected();
                        if queued == 1 {
                            tx.commit().await?;
                            Step::Committed(left)
                        } else {
                            tx.rollback().await?;
                            Step::Running
                        }
                    }
                }
            }
        });
        Ok(match step {
            Step::Committed(balance_after) => PaidScan::Started {
                job: self.job(j.id).await?.ok_or(StoreError::Vanished)?,
                balance_after,
            },
            Step::Exists => PaidScan::Exists(
                self.action(a.account_id, a.action_id)
                    .await?
                    .ok_or(StoreError::Vanished)?,
            ),
            Step::Short => PaidScan::Insufficient {
                balance: self.credit_balance(a.account_id).await?,
            },
            Step::Running => match self.running_job_for(j.address).await? {
                Some(job) => PaidScan::AlreadyRunning(job),
                // The running scan ended between our insert and this read.
                None if attempt < 3 => {
                    Box::pin(self.begin_paid_scan_attempt(p, attempt + 1)).await?
                }
                None => return Err(StoreError::Vanished),
            },
        })
    }

    /// Portal scan debits (tool `scan_wallet`, action `scan:{quote}`)
    /// still `pending` and begun before `before`: what an earlier version
    /// left when it crashed (or failed) between its debit and its job, or
    /// between the job and recording it. Each with the job of its quote
    /// and account, if any. None are written any more
    /// ([`Store::begin_paid_scan`] writes `done`).
    pub async fn stale_scan_debits(
        &self,
        tool: &str,
        before: UnixMillis,
    ) -> Result<Vec<StaleScanDebit>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT r.account_id, r.action_id, \
             (SELECT j.id FROM jobs j WHERE j.account_id = r.account_id \
              AND 'scan:' || j.quote_id = r.action_id ORDER BY j.created_at LIMIT 1) AS job_id \
             FROM research_actions r \
             WHERE r.tool = $1 AND r.state = 'pending' AND r.created_at < $2 \
             ORDER BY r.created_at"
        )
        .bind(tool)
        .bind(before)
        .fetch_all(pool)
        .await?))
    }

    /// Portal scans paid from credits (actions of `tool`, `scan:{quote}`,
    /// whose result names the job: [`paid_job_result`]) whose job ended
    /// `failed` and whose charge was not given back yet:
    /// the maintenance pass refunds them, so a crash between a job's
    /// failure and its refund loses nobody's money. Read from the failed
    /// jobs side (few), each action by its primary key.
    pub async fn failed_paid_scans(&self, tool: &str) -> Result<Vec<FailedPaidScan>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT r.account_id, r.action_id, j.id AS job_id \
             FROM jobs j JOIN research_actions r \
               ON r.account_id = j.account_id AND r.action_id = 'scan:' || j.quote_id \
               AND r.result = '{\"job_id\":\"' || j.id || '\"}' \
             WHERE j.status = 'failed' AND j.account_id IS NOT NULL \
               AND r.tool = $1 AND r.state = 'done' \
             ORDER BY j.finished_at"
        )
        .bind(tool)
        .fetch_all(pool)
        .await?))
    }

    pub async fn action(
        &self,
        account_id: &str,
        action_id: &str,
    ) -> Result<Option<ActionRow>, StoreError> {
        let sql = format!(
            "SELECT {ACTION_COLUMNS} FROM research_actions WHERE account_id = $1 AND action_id = $2"
        );
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(account_id)
            .bind(action_id)
            .fetch_optional(pool)
            .await?))
    }

    /// Research actions an account began at or after `since` (a portal
    /// scan paid from credits, tool `scan_wallet`, is no research action
    /// and counts against no research limit).
    pub async fn count_actions_since(
        &self,
        account_id: &str,
        since: UnixMillis,
    ) -> Result<i64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM research_actions WHERE account_id = $1 AND created_at >= $2 \
             AND tool <> 'scan_wallet'"
        )
        .bind(account_id)
        .bind(since)
        .fetch_one(pool)
        .await?))
    }

    /// A pending action succeeded: keep its result for retries.
    pub async fn finish_action(
        &self,
        account_id: &str,
        action_id: &str,
        result: &str,
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE research_actions SET state = 'done', result = $1, finished_at = $2 \
             WHERE account_id = $3 AND action_id = $4 AND state = 'pending'"
        )
        .bind(result)
        .bind(now)
        .bind(account_id)
        .bind(action_id)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// A pending action failed: mark it refunded and give its cost back,
    /// once. The balance it left, or `None` when it was not pending.
    pub async fn refund_action(
        &self,
        account_id: &str,
        action_id: &str,
        movement_id: &str,
        now: UnixMillis,
    ) -> Result<Option<i64>, StoreError> {
        self.refund(account_id, action_id, RefundOf::Pending, movement_id, now)
            .await
    }

    /// A portal scan debit an earlier version left `pending` with no job:
    /// refunded as [`Store::refund_action`] does, but only while still no
    /// job of the account exists on its quote, checked in the refund's own
    /// UPDATE (an earlier-version server that stalled between its debit and
    /// its job and inserts the job now is not refunded from under it).
    pub async fn refund_stale_scan_debit(
        &self,
        account_id: &str,
        action_id: &str,
        movement_id: &str,
        now: UnixMillis,
    ) -> Result<Option<i64>, StoreError> {
        self.refund(
            account_id,
            action_id,
            RefundOf::PendingScanWithoutJob,
            movement_id,
            now,
        )
        .await
    }

    /// A portal scan paid from credits whose job `job_id` ended `failed`
    /// (the RPC endpoint kept failing): its `done` action becomes
    /// `refunded` and its cost comes back, once, in one transaction, and
    /// only while that job of this account is failed and was started on
    /// this action's quote. The balance it left, or `None` when there was
    /// nothing to refund (no such action, already refunded, or the job not
    /// failed).
    pub async fn refund_failed_scan(
        &self,
        account_id: &str,
        action_id: &str,
        tool: &str,
        job_id: &str,
        movement_id: &str,
        now: UnixMillis,
    ) -> Result<Option<i64>, StoreError> {
        self.refund(
            account_id,
            action_id,
            RefundOf::FailedScan { tool, job_id },
            movement_id,
            now,
        )
        .await
    }

    /// [`Store::refund_action`], [`Store::refund_stale_scan_debit`] and
    /// [`Store::refund_failed_scan`] ([`RefundOf`] says which actions each
    /// may settle): the state change, the balance and the `refund` movement in
    /// one transaction; the movement's unique reference
    /// `refund:{account}:{action}` makes a second refund impossible even
    /// past the state check.
    async fn refund(
        &self,
        account_id: &str,
        action_id: &str,
        of: RefundOf<'_>,
        movement_id: &str,
        now: UnixMillis,
    ) -> Result<Option<i64>, StoreError> {
        let reference = format!("refund:{account_id}:{action_id}");
        Ok(on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            let cost: Option<i64> = match of {
                RefundOf::Pending => {
                    sqlx::query_scalar(
                        "UPDATE research_actions SET state = 'refunded', finished_at = $1 \
                         WHERE account_id = $2 AND action_id = $3 AND state = 'pending' \
                         RETURNING cost_atomic",
                    )
                    .bind(now)
                    .bind(account_id)
                    .bind(action_id)
                    .fetch_optional(&mut *tx)
                    .await?
                }
                RefundOf::PendingScanWithoutJob => {
                    sqlx::query_scalar(
                        "UPDATE research_actions SET state = 'refunded', finished_at = $1 \
                         WHERE account_id = $2 AND action_id = $3 AND state = 'pending' \
                         AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.account_id = $2 \
                           AND 'scan:' || j.quote_id = $3) \
                         RETURNING cost_atomic",
                    )
                    .bind(now)
                    .bind(account_id)
                    .bind(action_id)
                    .fetch_optional(&mut *tx)
                    .await?
                }
                RefundOf::FailedScan { tool, job_id } => {
                    sqlx::query_scalar(
                        "UPDATE research_actions SET state = 'refunded', finished_at = $1 \
                         WHERE account_id = $2 AND action_id = $3 AND state = 'done' AND tool = $5 \
                         AND result = $6 \
                         AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = $4 \
                           AND j.account_id = $2 AND j.status = 'failed' \
                           AND 'scan:' || j.quote_id = $3) \
                         RETURNING cost_atomic",
                    )
                    .bind(now)
                    .bind(account_id)
                    .bind(action_id)
                    .bind(job_id)
                    .bind(tool)
                    .bind(paid_job_result(job_id))
                    .fetch_optional(&mut *tx)
                    .await?
                }
            };
            match cost {
                None => {
                    tx.rollback().await?;
                    None
                }
                Some(cost) => {
                    let balance: i64 = sqlx::query_scalar(
                        "INSERT INTO credit_balances (account_id, balance_atomic) VALUES ($1, $2) \
                         ON CONFLICT (account_id) DO UPDATE \
                         SET balance_atomic = credit_balances.balance_atomic + excluded.balance_atomic \
                         RETURNING balance_atomic",
                    )
                    .bind(account_id)
                    .bind(cost)
                    .fetch_one(&mut *tx)
                    .await?;
                    sqlx::query(
                        "INSERT INTO credit_movements (id, account_id, kind, amount_atomic, \
                         balance_after, action_id, reference, note, created_at) \
                         VALUES ($1, $2, 'refund', $3, $4, $5, $6, $7, $8)",
                    )
                    .bind(movement_id)
                    .bind(account_id)
                    .bind(cost)
                    .bind(balance)
                    .bind(action_id)
                    .bind(&reference)
                    .bind(match of {
                        RefundOf::Pending => "failed; refunded",
                        RefundOf::PendingScanWithoutJob => "scan never started; refunded",
                        RefundOf::FailedScan { .. } => "scan failed; refunded",
                    })
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                    tx.commit().await?;
                    Some(balance)
                }
            }
        }))
    }

    /// Whether `feature` is switched on for the account.
    pub async fn feature_enabled(
        &self,
        account_id: &str,
        feature: &str,
    ) -> Result<bool, StoreError> {
        let n: i64 = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM account_features WHERE account_id = $1 AND feature = $2"
        )
        .bind(account_id)
        .bind(feature)
        .fetch_one(pool)
        .await?);
        Ok(n > 0)
    }

    /// Switch `feature` on or off for the account; true when it changed.
    pub async fn set_feature(
        &self,
        account_id: &str,
        feature: &str,
        on: bool,
        now: UnixMillis,
    ) -> Result<bool, StoreError> {
        let changed = if on {
            on_pool!(&self.pool, |pool| sqlx::query(
                "INSERT INTO account_features (account_id, feature, enabled_at) \
                 VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"
            )
            .bind(account_id)
            .bind(feature)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected())
        } else {
            on_pool!(&self.pool, |pool| sqlx::query(
                "DELETE FROM account_features WHERE account_id = $1 AND feature = $2"
            )
            .bind(account_id)
            .bind(feature)
            .execute(pool)
            .await?
            .rows_affected())
        };
        Ok(changed > 0)
    }

    /// Settled payments of top-up quotes for the account: (payment id,
    /// price in micro-USD). Crediting them is idempotent per payment.
    pub async fn settled_topups(&self, account_id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT p.id, q.price_micros FROM payments p JOIN quotes q ON q.id = p.quote_id \
             WHERE q.scope = 'topup' AND q.address = $1 AND p.status = 'settled' \
             AND NOT EXISTS (SELECT 1 FROM credit_movements m \
                             WHERE m.reference = 'topup:' || p.id)"
        )
        .bind(account_id)
        .fetch_all(pool)
        .await?))
    }

    /// A cached chain read fetched at or after `fresh_since`.
    pub async fn graph_cache_get(
        &self,
        key: &str,
        fresh_since: UnixMillis,
    ) -> Result<Option<String>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT value FROM graph_cache WHERE cache_key = $1 AND fetched_at >= $2"
        )
        .bind(key)
        .bind(fresh_since)
        .fetch_optional(pool)
        .await?))
    }

    pub async fn graph_cache_put(
        &self,
        key: &str,
        value: &str,
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO graph_cache (cache_key, value, fetched_at) VALUES ($1, $2, $3) \
             ON CONFLICT (cache_key) DO UPDATE SET value = excluded.value, \
             fetched_at = excluded.fetched_at"
        )
        .bind(key)
        .bind(value)
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// Keep an expansion made on `wallet`'s graph page, once.
    pub async fn keep_graph_expansion(
        &self,
        account_id: &str,
        wallet: &str,
        action_id: &str,
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO portal_graph_expansions (account_id, wallet, action_id, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING"
        )
        .bind(account_id)
        .bind(wallet)
        .bind(action_id)
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// The stored results of the expansions kept on `wallet`'s graph page,
    /// oldest first: only finished ones (a refunded action has no hop).
    pub async fn kept_graph_expansions(
        &self,
        account_id: &str,
        wallet: &str,
    ) -> Result<Vec<String>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT r.result FROM portal_graph_expansions g \
             JOIN research_actions r ON r.account_id = g.account_id AND r.action_id = g.action_id \
             WHERE g.account_id = $1 AND g.wallet = $2 AND r.state = 'done' \
             AND r.result IS NOT NULL ORDER BY g.created_at, g.action_id"
        )
        .bind(account_id)
        .bind(wallet)
        .fetch_all(pool)
        .await?))
    }
}
