//! Payments: the durable record of every payment we co-signed. A row is
//! written `pending` before the transaction is sent, and moves once, to
//! `settled` (with its receipt hash) or `failed`; every transition is a
//! conditional update on the current status, so two actors (a live request
//! and recovery) can never both finish one payment.

use super::{Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct PaymentRecord {
    pub id: String,
    pub quote_id: String,
    pub message_hash: String,
    pub signature: String,
    pub wire_tx: String,
    pub payer: String,
    pub network: String,
    pub asset: String,
    pub pay_to: String,
    pub amount_atomic: i64,
    pub status: String,
    pub error: Option<String>,
    pub receipt_hash: Option<String>,
    pub entitlement: String,
    pub wallet: String,
    pub scope: String,
    pub consumed_job_id: Option<String>,
    pub account_id: Option<String>,
    pub lease_until: UnixMillis,
    pub created_at: UnixMillis,
    pub settled_at: Option<UnixMillis>,
    pub expires_at: Option<UnixMillis>,
}

const COLUMNS: &str = "id, quote_id, message_hash, signature, wire_tx, payer, network, \
     asset, pay_to, amount_atomic, status, error, receipt_hash, entitlement, wallet, scope, \
     consumed_job_id, account_id, lease_until, created_at, settled_at, expires_at";

/// What recording a payment intent found.
#[derive(Debug)]
pub enum Intent {
    /// Ours: send it.
    New,
    /// This very payment was presented before: answer from that row.
    Same(Box<PaymentRecord>),
    /// Another payment for the same quote is settled or in flight.
    QuotePaid(Box<PaymentRecord>),
    /// Another payment from the same payer is in flight.
    PayerBusy(Box<PaymentRecord>),
}

impl Store {
    /// Record the intent to send `p` (status `pending`). Exactly one of any
    /// number of concurrent presentations of a payment gets [`Intent::New`].
    pub async fn record_payment_intent(&self, p: &PaymentRecord) -> Result<Intent, StoreError> {
        let sql = format!(
            "INSERT INTO payments ({COLUMNS}) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22) \
             ON CONFLICT DO NOTHING"
        );
        // A conflicting row can turn `failed` (and free its quote) between
        // our insert and our look; try again a few times before giving up.
        for _ in 0..3 {
            let inserted = on_pool!(&self.pool, |pool| sqlx::query(&sql)
                .bind(&p.id)
                .bind(&p.quote_id)
                .bind(&p.message_hash)
                .bind(&p.signature)
                .bind(&p.wire_tx)
                .bind(&p.payer)
                .bind(&p.network)
                .bind(&p.asset)
                .bind(&p.pay_to)
                .bind(p.amount_atomic)
                .bind(&p.status)
                .bind(&p.error)
                .bind(&p.receipt_hash)
                .bind(&p.entitlement)
                .bind(&p.wallet)
                .bind(&p.scope)
                .bind(&p.consumed_job_id)
                .bind(&p.account_id)
                .bind(p.lease_until)
                .bind(p.created_at)
                .bind(p.settled_at)
                .bind(p.expires_at)
                .execute(pool)
                .await?
                .rows_affected());
            if inserted == 1 {
                return Ok(Intent::New);
            }
            if let Some(same) = self.payment_by_message(&p.message_hash).await? {
                return Ok(Intent::Same(Box::new(same)));
            }
            if let Some(other) = self.live_payment_for_quote(&p.quote_id).await? {
                return Ok(Intent::QuotePaid(Box::new(other)));
            }
            if let Some(other) = self.pending_payment_of(&p.payer).await? {
                return Ok(Intent::PayerBusy(Box::new(other)));
            }
        }
        Err(StoreError::Vanished)
    }

    pub async fn payment_by_message(
        &self,
        message_hash: &str,
    ) -> Result<Option<PaymentRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM payments WHERE message_hash = $1");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(message_hash)
            .fetch_optional(pool)
            .await?))
    }

    pub async fn payment(&self, id: &str) -> Result<Option<PaymentRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM payments WHERE id = $1");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await?))
    }

    async fn live_payment_for_quote(
        &self,
        quote_id: &str,
    ) -> Result<Option<PaymentRecord>, StoreError> {
        let sql =
            format!("SELECT {COLUMNS} FROM payments WHERE quote_id = $1 AND status <> 'failed'");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(quote_id)
            .fetch_optional(pool)
            .await?))
    }

    async fn pending_payment_of(&self, payer: &str) -> Result<Option<PaymentRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM payments WHERE payer = $1 AND status = 'pending'");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(payer)
            .fetch_optional(pool)
            .await?))
    }

    /// Remove expired quotes nothing refers to (unpaid challenges).
    pub async fn purge_expired_quotes(&self, now: UnixMillis) -> Result<u64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query(
            "DELETE FROM quotes WHERE expires_at < $1 AND id <> $2 \
             AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.quote_id = quotes.id) \
             AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.quote_id = quotes.id)"
        )
        .bind(now)
        .bind(super::BACKFILL_QUOTE)
        .execute(pool)
        .await?
        .rows_affected()))
    }

    /// The settled payment a receipt names.
    pub async fn payment_by_receipt(
        &self,
        receipt_hash: &str,
    ) -> Result<Option<PaymentRecord>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM payments WHERE receipt_hash = $1 AND status = 'settled'"
        );
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(receipt_hash)
            .fetch_optional(pool)
            .await?))
    }

    /// The wallet a settled payment's receipt covers for reads, and when
    /// the receipt expires. A settled row never changes either (nor
    /// leaves `settled`), so after the first read it is answered from
    /// memory; an unknown receipt is asked again each time.
    pub async fn receipt_read_grant(
        &self,
        receipt_hash: &str,
    ) -> Result<Option<(String, Option<UnixMillis>)>, StoreError> {
        if let Some(grant) = self.known.receipt(receipt_hash) {
            return Ok(Some(grant));
        }
        let Some(p) = self.payment_by_receipt(receipt_hash).await? else {
            return Ok(None);
        };
        self.known
            .remember_receipt(receipt_hash, &p.wallet, p.expires_at);
        Ok(Some((p.wallet, p.expires_at)))
    }

    /// `pending` → `settled`. False when the row was no longer pending.
    pub async fn settle_payment(
        &self,
        id: &str,
        receipt_hash: &str,
        settled_at: UnixMillis,
        expires_at: UnixMillis,
    ) -> Result<bool, StoreError> {
        Ok(on_pool!(&self.pool, |pool| {
            sqlx::query(
            "UPDATE payments SET status = 'settled', receipt_hash = $2, settled_at = $3, expires_at = $4, error = NULL \
             WHERE id = $1 AND status = 'pending'"
        )
        .bind(id)
        .bind(receipt_hash)
        .bind(settled_at)
        .bind(expires_at)
        .execute(pool)
        .await?
        .rows_affected()
        }) == 1)
    }

    /// `pending` → `failed`, freeing the quote for another payment.
    pub async fn fail_payment(&self, id: &str, error: &str) -> Result<bool, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE payments SET status = 'failed', error = $2 WHERE id = $1 AND status = 'pending'"
        )
        .bind(id)
        .bind(error)
        .execute(pool)
        .await?
        .rows_affected())
            == 1)
    }

    /// Hand a pending payment to recovery now.
    pub async fn expire_payment_lease(&self, id: &str) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE payments SET lease_until = 0 WHERE id = $1 AND status = 'pending'"
        )
        .bind(id)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// Pending payments nobody holds (their lease ran out): what recovery
    /// reconciles. Each is taken by moving its lease, conditionally, so two
    /// recovering instances never work one payment at once.
    pub async fn claim_stale_payments(
        &self,
        now: UnixMillis,
        lease_ms: i64,
    ) -> Result<Vec<PaymentRecord>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM payments WHERE status = 'pending' AND lease_until < $1 \
             ORDER BY created_at LIMIT 50"
        );
        let stale: Vec<PaymentRecord> = on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(now)
            .fetch_all(pool)
            .await?);
        let mut claimed = Vec::with_capacity(stale.len());
        for mut p in stale {
            let taken = on_pool!(&self.pool, |pool| {
                sqlx::query(
                "UPDATE payments SET lease_until = $3 WHERE id = $1 AND status = 'pending' AND lease_until = $2"
            )
            .bind(&p.id)
            .bind(p.lease_until)
            .bind(now + lease_ms)
            .execute(pool)
            .await?
            .rows_affected()
            });
            if taken == 1 {
                p.lease_until = now + lease_ms;
                claimed.push(p);
            }
        }
        Ok(claimed)
    }

    /// Spend a scan entitlement on `job_id`. True when this call spent it;
    /// an entitlement whose job failed or never started can be spent again.
    pub async fn consume_entitlement(
        &self,
        payment_id: &str,
        previous: Option<&str>,
        job_id: &str,
    ) -> Result<bool, StoreError> {
        let affected = match previous {
            None => on_pool!(&self.pool, |pool| {
                sqlx::query(
                "UPDATE payments SET consumed_job_id = $2 WHERE id = $1 AND consumed_job_id IS NULL"
            )
            .bind(payment_id)
            .bind(job_id)
            .execute(pool)
            .await?
            .rows_affected()
            }),
            Some(previous) => on_pool!(&self.pool, |pool| {
                sqlx::query(
                "UPDATE payments SET consumed_job_id = $3 WHERE id = $1 AND consumed_job_id = $2"
            )
            .bind(payment_id)
            .bind(previous)
            .bind(job_id)
            .execute(pool)
            .await?
            .rows_affected()
            }),
        };
        Ok(affected == 1)
    }

    /// Give an entitlement back when its job could not be created.
    pub async fn release_entitlement(
        &self,
        payment_id: &str,
        job_id: &str,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE payments SET consumed_job_id = NULL WHERE id = $1 AND consumed_job_id = $2"
        )
        .bind(payment_id)
        .bind(job_id)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// An account's payments, newest first.
    pub async fn payments_for_account(
        &self,
        account_id: &str,
        limit: i64,
    ) -> Result<Vec<PaymentRecord>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM payments WHERE account_id = $1 ORDER BY created_at DESC LIMIT $2"
        );
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(account_id)
            .bind(limit)
            .fetch_all(pool)
            .await?))
    }

    /// How many payments reached `status` (tests and operations).
    pub async fn count_payments(&self, status: &str) -> Result<i64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM payments WHERE status = $1"
        )
        .bind(status)
        .fetch_one(pool)
        .await?))
    }
}
