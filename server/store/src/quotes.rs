//! Quotes: what `quote_wallet` priced, looked up by `scan_wallet` and the
//! paywall. A quote is immutable once written.

use super::{Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct QuoteRecord {
    pub id: String,
    pub address: String,
    pub scope: String,
    pub tier: String,
    pub price_micros: i64,
    pub signatures: Option<i64>,
    pub created_at: UnixMillis,
    pub expires_at: UnixMillis,
}

impl Store {
    pub async fn insert_quote(&self, q: &QuoteRecord) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| {
            sqlx::query(
                "INSERT INTO quotes (id, address, scope, tier, price_micros, signatures, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&q.id)
            .bind(&q.address)
            .bind(&q.scope)
            .bind(&q.tier)
            .bind(q.price_micros)
            .bind(q.signatures)
            .bind(q.created_at)
            .bind(q.expires_at)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// A quote by id, expired or not (the caller decides).
    pub async fn quote(&self, id: &str) -> Result<Option<QuoteRecord>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT id, address, scope, tier, price_micros, signatures, created_at, expires_at \
             FROM quotes WHERE id = $1"
        )
        .bind(id)
        .fetch_optional(pool)
        .await?))
    }

    /// Record that a portal offer made quote `id` for `account_id`, once:
    /// a quote already given to an account keeps it.
    pub async fn bind_quote_to_account(
        &self,
        id: &str,
        account_id: &str,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE quotes SET account_id = $1 WHERE id = $2 AND account_id IS NULL"
        )
        .bind(account_id)
        .bind(id)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// The account a portal offer made quote `id` for; `None` for a quote
    /// no account was given (`quote_wallet`'s) or no quote at all.
    pub async fn quote_account(&self, id: &str) -> Result<Option<String>, StoreError> {
        let account: Option<Option<String>> = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT account_id FROM quotes WHERE id = $1"
        )
        .bind(id)
        .fetch_optional(pool)
        .await?);
        Ok(account.flatten())
    }
}
