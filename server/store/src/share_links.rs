//! Share links: the rows behind `share`. Only the SHA-256 of a link's
//! token is stored; a row is found by that hash and the domain decides,
//! with the time it passes in, whether the link is still live. The one
//! write that needs care is minting: the per-account limit is checked in
//! the same statement that inserts, under the account's quota lock
//! (`in_quota_tx`), so two concurrent mints cannot both take the last free
//! place on either database.

use super::{Pool, Store, StoreError};

/// A share link as stored.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct ShareLinkRecord {
    pub id: String,
    /// Lowercase hex SHA-256 of the token.
    pub token_hash: String,
    /// The token's first characters, for people telling links apart.
    pub hint: String,
    pub account_id: String,
    pub wallet: String,
    pub chart_range: String,
    pub denominate: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub revoked_at: Option<i64>,
}

const COLUMNS: &str = "id, token_hash, hint, account_id, wallet, chart_range, denominate, \
                       created_at, expires_at, revoked_at";

impl Store {
    /// Insert `link` unless its account already holds `limit` links live
    /// at `now`: false then, and nothing is written.
    pub async fn insert_share_link(
        &self,
        link: &ShareLinkRecord,
        limit: u32,
        now: i64,
    ) -> Result<bool, StoreError> {
        let lock = format!("share-links:{}", link.account_id);
        let done = in_quota_tx!(&self.pool, &lock, |tx| sqlx::query(
            "INSERT INTO share_links (id, token_hash, hint, account_id, wallet, chart_range, \
             denominate, created_at, expires_at, revoked_at) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, NULL \
             WHERE (SELECT COUNT(*) FROM share_links \
                    WHERE account_id = $4 AND revoked_at IS NULL AND expires_at > $10) < $11",
        )
        .bind(&link.id)
        .bind(&link.token_hash)
        .bind(&link.hint)
        .bind(&link.account_id)
        .bind(&link.wallet)
        .bind(&link.chart_range)
        .bind(&link.denominate)
        .bind(link.created_at)
        .bind(link.expires_at)
        .bind(now)
        .bind(i64::from(limit))
        .execute(&mut *tx)
        .await?
        .rows_affected());
        Ok(done == 1)
    }

    /// The link whose token hashes to `token_hash`, live or not.
    pub async fn share_link_by_hash(
        &self,
        token_hash: &str,
    ) -> Result<Option<ShareLinkRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM share_links WHERE token_hash = $1");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(token_hash)
            .fetch_optional(pool)
            .await?))
    }

    /// The account's links live at `now`, newest first.
    pub async fn live_share_links(
        &self,
        account_id: &str,
        now: i64,
    ) -> Result<Vec<ShareLinkRecord>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM share_links \
             WHERE account_id = $1 AND revoked_at IS NULL AND expires_at > $2 \
             ORDER BY created_at DESC, id DESC"
        );
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(account_id)
            .bind(now)
            .fetch_all(pool)
            .await?))
    }

    /// How many links the account holds live at `now`.
    pub async fn count_live_share_links(
        &self,
        account_id: &str,
        now: i64,
    ) -> Result<u64, StoreError> {
        let (n,): (i64,) = on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT COUNT(*) FROM share_links \
             WHERE account_id = $1 AND revoked_at IS NULL AND expires_at > $2",
        )
        .bind(account_id)
        .bind(now)
        .fetch_one(pool)
        .await?);
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Revoke the account's live link whose token hashes to `token_hash`
    /// (`by_id`: whose id is it); false when the account holds no such live
    /// link (unknown, another account's, expired or revoked already).
    pub async fn revoke_share_link(
        &self,
        account_id: &str,
        key: &str,
        by_id: bool,
        now: i64,
    ) -> Result<bool, StoreError> {
        let column = if by_id { "id" } else { "token_hash" };
        let sql = format!(
            "UPDATE share_links SET revoked_at = $1 \
             WHERE {column} = $2 AND account_id = $3 AND revoked_at IS NULL AND expires_at > $1"
        );
        let done = on_pool!(&self.pool, |pool| sqlx::query(&sql)
            .bind(now)
            .bind(key)
            .bind(account_id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done == 1)
    }
}
