//! MCP sessions. A session id is a bearer-like secret, so only its SHA-256
//! is stored; lookups hash the presented id and compare in the database.
//! A session is bound to the principal that opened it: presenting it under
//! another principal finds nothing.
//!
//! Sessions come in two classes with quotas of their own, so neither can
//! crowd out the other: anonymous ones (`client_key` set: the address that
//! opened it, as `limits::ClientKey` keys it) and those opened with a
//! bearer (`client_key` NULL). Anyone can open anonymous sessions, so
//! reaching an anonymous quota never refuses: it ends the least recently
//! used anonymous session (of that address, or anywhere), whose client
//! then meets 404 and initializes again, as the MCP transport says it
//! must. An account's own quota ends its least recently used session the
//! same way; only the server-wide quota of bearer sessions refuses.

use super::{Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

/// What `initialize` records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSession {
    pub id_hash: String,
    pub protocol_version: String,
    pub client_name: String,
    pub client_version: String,
    pub principal: String,
    pub class: SessionClass,
    pub now: UnixMillis,
    pub expires_at: UnixMillis,
}

/// Whose a session is, as its quotas count it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionClass {
    /// Opened without a bearer, from this client address
    /// (`limits::ClientKey`).
    Anonymous { client: String },
    /// Opened with a bearer: an account's token (`Some`), or the admin key.
    Bearer { account_id: Option<String> },
}

/// How many live sessions there may be, by class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionQuota {
    /// One account's, across its tokens (its oldest ends beyond it).
    pub per_account: u32,
    /// Every session opened with a bearer (refused beyond it).
    pub total: u32,
    /// One client address's anonymous sessions (its oldest ends beyond it).
    pub anonymous_per_client: u32,
    /// Every anonymous session (the oldest ends beyond it).
    pub anonymous_total: u32,
}

/// What [`Store::create_session`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionOpened {
    /// Recorded; `ended` least recently used sessions of its class made
    /// room for it.
    Opened { ended: u64 },
    /// The server holds `total` live bearer sessions already.
    ServerFull,
}

/// A live session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    pub protocol_version: String,
    pub principal: String,
}

/// Statements that end the least recently used live sessions of a class
/// so that fewer than a quota remain: those ranked at the quota and after
/// by last use. One address's anonymous sessions (`$1` the address, `$2`
/// now, `$3` the quota):
const END_CLIENTS_OLDEST: &str = "DELETE FROM mcp_sessions WHERE id_hash IN ( \
    SELECT id_hash FROM ( \
      SELECT id_hash, ROW_NUMBER() OVER \
        (ORDER BY last_seen_at DESC, created_at DESC, id_hash DESC) AS n \
      FROM mcp_sessions WHERE client_key = $1 AND expires_at > $2) ranked \
    WHERE n >= $3)";
/// ... one account's (`$1` the account, `$2` now, `$3` the quota) ...
const END_ACCOUNTS_OLDEST: &str = "DELETE FROM mcp_sessions WHERE id_hash IN ( \
    SELECT id_hash FROM ( \
      SELECT id_hash, ROW_NUMBER() OVER \
        (ORDER BY last_seen_at DESC, created_at DESC, id_hash DESC) AS n \
      FROM mcp_sessions WHERE account_id = $1 AND expires_at > $2) ranked \
    WHERE n >= $3)";
/// ... every anonymous session (`$1` now, `$2` the quota).
const END_ANONYMOUS_OLDEST: &str = "DELETE FROM mcp_sessions WHERE id_hash IN ( \
    SELECT id_hash FROM ( \
      SELECT id_hash, ROW_NUMBER() OVER \
        (ORDER BY last_seen_at DESC, created_at DESC, id_hash DESC) AS n \
      FROM mcp_sessions WHERE client_key IS NOT NULL AND expires_at > $1) ranked \
    WHERE n >= $2)";

impl Store {
    /// Record a session within its class's quotas (see the module): for an
    /// anonymous one, end the least recently used of its address's and
    /// then of all anonymous sessions as needed; for an account's, end the
    /// account's least recently used as needed; refuse a bearer session
    /// only when the server holds `total` of them. All of it in one
    /// transaction holding its class's quota lock (`in_quota_tx`), so
    /// concurrent `initialize`s cannot pass a quota together on either
    /// database.
    pub async fn create_session(
        &self,
        s: &NewSession,
        quota: SessionQuota,
    ) -> Result<SessionOpened, StoreError> {
        let (lock, client, account) = match &s.class {
            SessionClass::Anonymous { client } => {
                ("mcp-sessions:anonymous", Some(client.as_str()), None)
            }
            SessionClass::Bearer { account_id } => {
                ("mcp-sessions:bearer", None, account_id.as_deref())
            }
        };
        let opened = in_quota_tx!(&self.pool, lock, |tx| {
            let mut ended = 0;
            // The owner's own quota first (an address's anonymous
            // sessions, an account's), then every anonymous session's.
            let own = match (client, account) {
                (Some(client), _) => Some((END_CLIENTS_OLDEST, client, quota.anonymous_per_client)),
                (None, Some(account)) => Some((END_ACCOUNTS_OLDEST, account, quota.per_account)),
                (None, None) => None,
            };
            if let Some((sql, owner, cap)) = own {
                ended += sqlx::query(sql)
                    .bind(owner)
                    .bind(s.now)
                    .bind(i64::from(cap))
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            }
            if client.is_some() {
                ended += sqlx::query(END_ANONYMOUS_OLDEST)
                    .bind(s.now)
                    .bind(i64::from(quota.anonymous_total))
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            }
            // Only bearer sessions are refused, and only by their total:
            // an anonymous one has made its room above.
            let inserted = sqlx::query(
                "INSERT INTO mcp_sessions (id_hash, protocol_version, client_name, \
                 client_version, principal, created_at, last_seen_at, expires_at, account_id, \
                 client_key) \
                 SELECT $1, $2, $3, $4, $5, $6, $6, $7, $8, $9 \
                 WHERE $9 IS NOT NULL OR (SELECT COUNT(*) FROM mcp_sessions \
                    WHERE client_key IS NULL AND expires_at > $6) < $10",
            )
            .bind(&s.id_hash)
            .bind(&s.protocol_version)
            .bind(&s.client_name)
            .bind(&s.client_version)
            .bind(&s.principal)
            .bind(s.now)
            .bind(s.expires_at)
            .bind(account)
            .bind(client)
            .bind(i64::from(quota.total))
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted == 1 {
                SessionOpened::Opened { ended }
            } else {
                SessionOpened::ServerFull
            }
        });
        Ok(opened)
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
