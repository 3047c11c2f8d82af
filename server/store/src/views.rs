//! Stored transaction views and versioned readings (docs/ledger.md,
//! "Decoder versions"): the compact view of each fetched transaction
//! (`ledger::stored`), kept by signature, and what a rescan needs to derive
//! a wallet's legs again with a newer decoder: which of its transactions
//! were read by an older one, whether each has a view, and replacing a
//! transaction's legs in the same database transaction that records the
//! new version, so a reader sees either the old legs or the new ones.

use super::{Pool, Store, StoreError, TransactionLegs, jobs::to_i64};

/// A transaction of a wallet's ledger read by an older decoder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleTransaction {
    pub signature: String,
    /// Its stored view, when one was kept; `None` means it must be fetched.
    pub view: Option<Vec<u8>>,
}

/// How many of a wallet's transactions an older decoder read, and how many
/// of those have no stored view (a rescan fetches those again).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StaleCounts {
    pub transactions: i64,
    pub without_view: i64,
}

impl Store {
    /// Keep the stored views of fetched transactions (`(signature, view)`);
    /// a view already kept is left as it is.
    pub async fn write_views(&self, views: &[(&str, &[u8])]) -> Result<(), StoreError> {
        if views.is_empty() {
            return Ok(());
        }
        on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            for (signature, view) in views {
                sqlx::query(
                    "INSERT INTO transaction_views (signature, view) VALUES ($1, $2) \
                     ON CONFLICT DO NOTHING",
                )
                .bind(*signature)
                .bind(*view)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// The total size in bytes and count of the stored views of `wallet`'s
    /// transactions (for the operator's view of what rescans cost to keep).
    pub async fn view_bytes(&self, wallet: &str) -> Result<(i64, i64), StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(LENGTH(v.view)), 0) AS BIGINT), COUNT(v.signature) \
             FROM wallet_transactions w JOIN transaction_views v ON v.signature = w.signature \
             WHERE w.wallet = $1"
        )
        .bind(wallet)
        .fetch_one(pool)
        .await?))
    }

    /// How many of `wallet`'s transactions a decoder older than `version`
    /// read. Synthetic rows (a staking reward's, whose signature holds a
    /// `:`) are no transaction and no decoder's reading: never counted.
    pub async fn stale_counts(
        &self,
        wallet: &str,
        version: i32,
    ) -> Result<StaleCounts, StoreError> {
        let (transactions, with_view): (i64, i64) = on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT COUNT(*), COUNT(v.signature) FROM wallet_transactions w \
             LEFT JOIN transaction_views v ON v.signature = w.signature \
             WHERE w.wallet = $1 AND w.decoder_version < $2 AND w.signature NOT LIKE '%:%'"
        )
        .bind(wallet)
        .bind(version)
        .fetch_one(pool)
        .await?);
        Ok(StaleCounts {
            transactions,
            without_view: transactions - with_view,
        })
    }

    /// Up to `limit` of `wallet`'s transactions a decoder older than
    /// `version` read, by signature after `after`, with their views.
    pub async fn stale_transactions(
        &self,
        wallet: &str,
        version: i32,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<StaleTransaction>, StoreError> {
        let rows: Vec<(String, Option<Vec<u8>>)> = on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT w.signature, v.view FROM wallet_transactions w \
             LEFT JOIN transaction_views v ON v.signature = w.signature \
             WHERE w.wallet = $1 AND w.decoder_version < $2 AND w.signature NOT LIKE '%:%' \
             AND w.signature > $3 ORDER BY w.signature LIMIT $4"
        )
        .bind(wallet)
        .bind(version)
        .bind(after.unwrap_or(""))
        .bind(limit)
        .fetch_all(pool)
        .await?);
        Ok(rows
            .into_iter()
            .map(|(signature, view)| StaleTransaction { signature, view })
            .collect())
    }

    /// Replace the legs of transactions already in `wallet`'s ledger with
    /// `batch`, read by decoder `version`: per transaction, its old legs go
    /// and the new ones come in the same database transaction that records
    /// the version (and bumps the wallet's ledger version), so nothing is
    /// lost if a rescan stops half way and no reader sees a transaction
    /// with no legs. Returns the legs written.
    pub async fn replace_legs(
        &self,
        wallet: &str,
        batch: &[TransactionLegs<'_>],
        version: i32,
    ) -> Result<u64, StoreError> {
        if batch.is_empty() {
            return Ok(0);
        }
        let written = on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            let mut written = 0u64;
            for t in batch {
                sqlx::query("DELETE FROM legs WHERE wallet = $1 AND signature = $2")
                    .bind(wallet)
                    .bind(t.signature)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(
                    "UPDATE wallet_transactions SET decoder_version = $3, slot = $4, \
                     block_time = $5, failed = $6 WHERE wallet = $1 AND signature = $2",
                )
                .bind(wallet)
                .bind(t.signature)
                .bind(version)
                .bind(to_i64(t.slot))
                .bind(t.block_time)
                .bind(t.failed)
                .execute(&mut *tx)
                .await?;
                for leg in t.legs {
                    bind_leg!(sqlx::query(crate::INSERT_LEG), wallet, leg)
                        .execute(&mut *tx)
                        .await?;
                    written += 1;
                }
            }
            sqlx::query(crate::BUMP_LEDGER_VERSION)
                .bind(wallet)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            written
        });
        Ok(written)
    }
}

impl Store {
    /// Forget the stored views of `signatures` (an operator pruning what
    /// rescans keep; a test standing in a wallet scanned before views were
    /// kept): the next rescan of a wallet holding them fetches them again.
    pub async fn forget_views(&self, signatures: &[String]) -> Result<u64, StoreError> {
        let mut forgotten = 0;
        for signature in signatures {
            forgotten += on_pool!(&self.pool, |pool| sqlx::query(
                "DELETE FROM transaction_views WHERE signature = $1"
            )
            .bind(signature)
            .execute(pool)
            .await?
            .rows_affected());
        }
        Ok(forgotten)
    }
}
