//! MCP sessions. A session id is a bearer-like secret, so only its SHA-256
//! is stored; lookups hash the presented id and compare in the database.
//! A session is bound to the principal that opened it: presenting it under
//! another principal finds nothing.

use super::{Pool, Store, StoreError};
use crate::clock::UnixMillis;

/// What `initialize` records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSession {
    pub id_hash: String,
    pub protocol_version: String,
    pub client_name: String,
    pub client_version: String,
    pub principal: String,
    pub now: UnixMillis,
    pub expires_at: UnixMillis,
}

/// A live session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    pub protocol_version: String,
    pub principal: String,
}

impl Store {
    pub async fn create_session(&self, s: &NewSession) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| {
            sqlx::query(
            "INSERT INTO mcp_sessions (id_hash, protocol_version, client_name, client_version, principal, created_at, last_seen_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $6, $7)",
        )
        .bind(&s.id_hash)
        .bind(&s.protocol_version)
        .bind(&s.client_name)
        .bind(&s.client_version)
        .bind(&s.principal)
        .bind(s.now)
        .bind(s.expires_at)
        .execute(pool)
        .await?;
        });
        Ok(())
    }

    /// Find a live session and extend its life to `expires_at`. `None` when
    /// the id is unknown, ended, expired or was opened by another principal.
    pub async fn touch_session(
        &self,
        id_hash: &str,
        principal: &str,
        now: UnixMillis,
        expires_at: UnixMillis,
    ) -> Result<Option<SessionRecord>, StoreError> {
        let row: Option<(String, String)> = on_pool!(&self.pool, |pool| sqlx::query_as(
            "UPDATE mcp_sessions SET last_seen_at = $1, expires_at = $2 \
             WHERE id_hash = $3 AND principal = $4 AND expires_at > $1 \
             RETURNING protocol_version, principal",
        )
        .bind(now)
        .bind(expires_at)
        .bind(id_hash)
        .bind(principal)
        .fetch_optional(pool)
        .await?);
        Ok(row.map(|(protocol_version, principal)| SessionRecord {
            protocol_version,
            principal,
        }))
    }

    /// End a session. Returns whether a live one was ended.
    pub async fn delete_session(&self, id_hash: &str, principal: &str) -> Result<bool, StoreError> {
        let affected = on_pool!(&self.pool, |pool| sqlx::query(
            "DELETE FROM mcp_sessions WHERE id_hash = $1 AND principal = $2",
        )
        .bind(id_hash)
        .bind(principal)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(affected > 0)
    }

    /// Forget sessions that expired before `now`. Returns how many.
    pub async fn purge_expired_sessions(&self, now: UnixMillis) -> Result<u64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query(
            "DELETE FROM mcp_sessions WHERE expires_at <= $1"
        )
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected()))
    }

    /// Sessions currently stored (live or not yet purged).
    pub async fn count_sessions(&self) -> Result<i64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM mcp_sessions"
        )
        .fetch_one(pool)
        .await?))
    }
}
