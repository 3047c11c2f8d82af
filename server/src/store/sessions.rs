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
    /// The account the session belongs to (none: anonymous, the admin key).
    pub account_id: Option<String>,
    pub now: UnixMillis,
    pub expires_at: UnixMillis,
}

/// How many live sessions there may be: per account, and in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionQuota {
    pub per_account: u32,
    pub total: u32,
}

/// What [`Store::create_session`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionOpened {
    Opened,
    /// The account holds `per_account` live sessions already.
    AccountFull,
    /// The server holds `total` live sessions already.
    ServerFull,
}

/// A live session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    pub protocol_version: String,
    pub principal: String,
}

impl Store {
    /// Record a session unless the quota is reached: the counts are in
    /// the insert's own statement, so concurrent `initialize`s of one
    /// account cannot pass the quota together on SQLite (PostgreSQL may
    /// overshoot by a rare race, as share links do).
    pub async fn create_session(
        &self,
        s: &NewSession,
        quota: SessionQuota,
    ) -> Result<SessionOpened, StoreError> {
        let inserted = on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO mcp_sessions (id_hash, protocol_version, client_name, client_version, \
             principal, created_at, last_seen_at, expires_at, account_id) \
             SELECT $1, $2, $3, $4, $5, $6, $6, $7, $8 \
             WHERE (SELECT COUNT(*) FROM mcp_sessions WHERE expires_at > $6) < $9 \
               AND (SELECT COUNT(*) FROM mcp_sessions \
                    WHERE account_id = $8 AND expires_at > $6) < $10",
        )
        .bind(&s.id_hash)
        .bind(&s.protocol_version)
        .bind(&s.client_name)
        .bind(&s.client_version)
        .bind(&s.principal)
        .bind(s.now)
        .bind(s.expires_at)
        .bind(&s.account_id)
        .bind(i64::from(quota.total))
        .bind(i64::from(quota.per_account))
        .execute(pool)
        .await?
        .rows_affected());
        if inserted == 1 {
            return Ok(SessionOpened::Opened);
        }
        // Refused: say which quota, the account's when both are full.
        let Some(account_id) = &s.account_id else {
            return Ok(SessionOpened::ServerFull);
        };
        let held: i64 = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM mcp_sessions WHERE account_id = $1 AND expires_at > $2"
        )
        .bind(account_id)
        .bind(s.now)
        .fetch_one(pool)
        .await?);
        Ok(if held >= i64::from(quota.per_account) {
            SessionOpened::AccountFull
        } else {
            SessionOpened::ServerFull
        })
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
