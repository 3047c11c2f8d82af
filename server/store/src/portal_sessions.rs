//! Portal (cookie) sessions: the rows behind `portal::sessions`, the
//! `tower_sessions::SessionStore` the portal uses. Only the SHA-256 of a
//! session id is stored. Every read checks both deadlines against the time
//! the caller passes in (the idle deadline `expires_at`, and `created_at`
//! against the absolute cutoff), so an expired row is never answered even
//! before the maintenance pass deletes it.

use super::{Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

impl Store {
    /// Insert a new session; false when the id hash is taken (the caller
    /// draws another id).
    pub async fn insert_portal_session(
        &self,
        id_hash: &str,
        data: &str,
        now: UnixMillis,
        expires_at: UnixMillis,
    ) -> Result<bool, StoreError> {
        let done = on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO portal_sessions (id_hash, data, created_at, expires_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (id_hash) DO NOTHING",
        )
        .bind(id_hash)
        .bind(data)
        .bind(now)
        .bind(expires_at)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(done == 1)
    }

    /// Write a session's data and move its idle deadline. A session that
    /// has expired, or was deleted (signed out) meanwhile, is not brought
    /// back: false.
    pub async fn save_portal_session(
        &self,
        id_hash: &str,
        data: &str,
        now: UnixMillis,
        expires_at: UnixMillis,
        created_after: UnixMillis,
    ) -> Result<bool, StoreError> {
        let done = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE portal_sessions SET data = $1, expires_at = $2 \
             WHERE id_hash = $3 AND expires_at > $4 AND created_at > $5",
        )
        .bind(data)
        .bind(expires_at)
        .bind(id_hash)
        .bind(now)
        .bind(created_after)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(done == 1)
    }

    /// A live session's data: `None` when unknown, idle past its deadline,
    /// or created at or before `created_after` (the absolute cutoff).
    pub async fn load_portal_session(
        &self,
        id_hash: &str,
        now: UnixMillis,
        created_after: UnixMillis,
    ) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> = on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT data FROM portal_sessions \
             WHERE id_hash = $1 AND expires_at > $2 AND created_at > $3",
        )
        .bind(id_hash)
        .bind(now)
        .bind(created_after)
        .fetch_optional(pool)
        .await?);
        Ok(row.map(|(data,)| data))
    }

    pub async fn delete_portal_session(&self, id_hash: &str) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| {
            sqlx::query("DELETE FROM portal_sessions WHERE id_hash = $1")
                .bind(id_hash)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Delete sessions idle past their deadline or created at or before
    /// `created_after`; answers how many went.
    pub async fn purge_portal_sessions(
        &self,
        now: UnixMillis,
        created_after: UnixMillis,
    ) -> Result<u64, StoreError> {
        let gone = on_pool!(&self.pool, |pool| sqlx::query(
            "DELETE FROM portal_sessions WHERE expires_at <= $1 OR created_at <= $2",
        )
        .bind(now)
        .bind(created_after)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(gone)
    }
}
