//! The rows behind `crate::oauth`: clients, pending authorization
//! requests, grants (one per approved code) with their tokens, and the
//! activity the Keys page lists. What a value may be is decided in
//! `oauth`; this file takes and returns plain rows, and holds only hashes
//! of secrets. The few writes that must happen once (a code's first use, a
//! refresh token's rotation, a request's decision) are single conditional
//! `UPDATE`s, so two racing requests cannot both win.

use super::{Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

/// One client row.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct OAuthClientRecord {
    pub id: String,
    /// `registered` or `metadata`.
    pub kind: String,
    pub name: String,
    /// A JSON array of strings.
    pub redirect_uris: String,
    pub auth_method: String,
    pub secret_hash: Option<String>,
    /// Space-separated.
    pub scope: String,
    pub created_at: UnixMillis,
    pub last_used_at: Option<UnixMillis>,
    /// A metadata document's cache lifetime.
    pub cache_until: Option<UnixMillis>,
}

/// One pending authorization request.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct OAuthRequestRecord {
    pub id: String,
    pub client_id: String,
    pub account_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub scope: String,
    pub resource: String,
    pub state: Option<String>,
    pub created_at: UnixMillis,
    pub expires_at: UnixMillis,
    pub decided_at: Option<UnixMillis>,
    /// The request named `redirect_uri` (else the client's only one was used).
    pub redirect_uri_named: bool,
}

/// One grant: an approval, its code, and the family of tokens from it.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct OAuthGrantRecord {
    pub id: String,
    pub client_id: String,
    pub account_id: String,
    pub scope: String,
    pub resource: String,
    pub redirect_uri: String,
    pub code_hash: String,
    pub code_challenge: String,
    pub code_expires_at: UnixMillis,
    pub code_used_at: Option<UnixMillis>,
    pub created_at: UnixMillis,
    pub last_used_at: Option<UnixMillis>,
    pub revoked_at: Option<UnixMillis>,
    /// The authorization request named `redirect_uri`: `/token` must too.
    pub redirect_uri_named: bool,
}

/// One access or refresh token (by hash).
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct OAuthTokenRecord {
    pub hash: String,
    pub grant_id: String,
    /// `access` or `refresh`.
    pub kind: String,
    pub scope: String,
    pub created_at: UnixMillis,
    pub expires_at: UnixMillis,
    pub rotated_at: Option<UnixMillis>,
    pub revoked_at: Option<UnixMillis>,
}

/// A token with its grant, as resolving or refreshing reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthTokenWithGrant {
    pub token: OAuthTokenRecord,
    pub grant: OAuthGrantRecord,
}

/// A client an account has live grants with, for the Keys page.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct ConnectedClientRow {
    pub client_id: String,
    pub kind: String,
    pub name: String,
    /// Space-separated union is not needed: the newest grant's scope.
    pub scope: String,
    pub connected_at: UnixMillis,
    pub last_used_at: Option<UnixMillis>,
}

/// One activity row.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct OAuthEventRow {
    pub client_id: String,
    pub client_name: Option<String>,
    pub kind: String,
    pub at: UnixMillis,
}

const CLIENT_COLUMNS: &str = "id, kind, name, redirect_uris, auth_method, secret_hash, scope, \
                              created_at, last_used_at, cache_until";
const GRANT_COLUMNS: &str = "id, client_id, account_id, scope, resource, redirect_uri, code_hash, \
                             code_challenge, code_expires_at, code_used_at, created_at, \
                             last_used_at, revoked_at, redirect_uri_named";

impl Store {
    /// Insert a registered client.
    pub async fn insert_oauth_client(&self, c: &OAuthClientRecord) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO oauth_clients (id, kind, name, redirect_uris, auth_method, secret_hash, \
             scope, created_at, last_used_at, cache_until) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        )
        .bind(&c.id)
        .bind(&c.kind)
        .bind(&c.name)
        .bind(&c.redirect_uris)
        .bind(&c.auth_method)
        .bind(&c.secret_hash)
        .bind(&c.scope)
        .bind(c.created_at)
        .bind(c.last_used_at)
        .bind(c.cache_until)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// Insert or refresh a metadata-document client (its id is its URL);
    /// `last_used_at` survives a refresh.
    pub async fn upsert_oauth_metadata_client(
        &self,
        c: &OAuthClientRecord,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO oauth_clients (id, kind, name, redirect_uris, auth_method, secret_hash, \
             scope, created_at, last_used_at, cache_until) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, \
             redirect_uris = excluded.redirect_uris, auth_method = excluded.auth_method, \
             scope = excluded.scope, cache_until = excluded.cache_until"
        )
        .bind(&c.id)
        .bind(&c.kind)
        .bind(&c.name)
        .bind(&c.redirect_uris)
        .bind(&c.auth_method)
        .bind(&c.secret_hash)
        .bind(&c.scope)
        .bind(c.created_at)
        .bind(c.last_used_at)
        .bind(c.cache_until)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    pub async fn oauth_client(&self, id: &str) -> Result<Option<OAuthClientRecord>, StoreError> {
        let sql = format!("SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE id = $1");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await?))
    }

    /// Delete clients that never got a code: registered ones created at or
    /// before `cutoff`, metadata-document ones whose cache ran out before
    /// `now`. The number deleted.
    pub async fn purge_unused_oauth_clients(
        &self,
        cutoff: UnixMillis,
        now: UnixMillis,
    ) -> Result<u64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query(
            "DELETE FROM oauth_clients WHERE last_used_at IS NULL AND \
             ((kind = 'registered' AND created_at <= $1) \
              OR (kind = 'metadata' AND cache_until < $2))"
        )
        .bind(cutoff)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected()))
    }

    /// Hold a request for its account's decision unless the account has
    /// `limit` requests pending already (undecided, unexpired at the
    /// request's `created_at`): false then, and nothing is written. The
    /// count is in the insert's own statement, under the account's quota
    /// lock (`in_quota_tx`).
    pub async fn insert_oauth_request(
        &self,
        r: &OAuthRequestRecord,
        limit: u32,
    ) -> Result<bool, StoreError> {
        let lock = format!("oauth-requests:{}", r.account_id);
        let inserted = in_quota_tx!(&self.pool, &lock, |tx| {
            sqlx::query(
            "INSERT INTO oauth_requests (id, client_id, account_id, redirect_uri, code_challenge, \
             scope, resource, state, created_at, expires_at, decided_at, redirect_uri_named) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
             WHERE (SELECT COUNT(*) FROM oauth_requests \
                    WHERE account_id = $3 AND decided_at IS NULL AND expires_at > $9) < $13"
        )
        .bind(&r.id)
        .bind(&r.client_id)
        .bind(&r.account_id)
        .bind(&r.redirect_uri)
        .bind(&r.code_challenge)
        .bind(&r.scope)
        .bind(&r.resource)
        .bind(&r.state)
        .bind(r.created_at)
        .bind(r.expires_at)
        .bind(r.decided_at)
        .bind(r.redirect_uri_named)
        .bind(i64::from(limit))
        .execute(&mut *tx)
        .await?
        .rows_affected()
        });
        Ok(inserted == 1)
    }

    /// Forget pending requests that expired at or before `now`.
    pub async fn purge_expired_oauth_requests(&self, now: UnixMillis) -> Result<u64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query(
            "DELETE FROM oauth_requests WHERE expires_at <= $1"
        )
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected()))
    }

    /// Take a pending request for a decision: the row, once, if it is
    /// `account`'s, undecided and not expired at `now`.
    pub async fn decide_oauth_request(
        &self,
        id: &str,
        account_id: &str,
        now: UnixMillis,
    ) -> Result<Option<OAuthRequestRecord>, StoreError> {
        let taken = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE oauth_requests SET decided_at = $3 WHERE id = $1 AND account_id = $2 \
             AND decided_at IS NULL AND expires_at > $3"
        )
        .bind(id)
        .bind(account_id)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected());
        if taken != 1 {
            return Ok(None);
        }
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT id, client_id, account_id, redirect_uri, code_challenge, scope, resource, \
             state, created_at, expires_at, decided_at, redirect_uri_named \
             FROM oauth_requests WHERE id = $1"
        )
        .bind(id)
        .fetch_optional(pool)
        .await?))
    }

    /// Record a grant (its code issued) and mark its client used.
    pub async fn insert_oauth_grant(&self, g: &OAuthGrantRecord) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            sqlx::query(
                "INSERT INTO oauth_grants (id, client_id, account_id, scope, resource, \
                 redirect_uri, code_hash, code_challenge, code_expires_at, code_used_at, \
                 created_at, last_used_at, revoked_at, redirect_uri_named) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            )
            .bind(&g.id)
            .bind(&g.client_id)
            .bind(&g.account_id)
            .bind(&g.scope)
            .bind(&g.resource)
            .bind(&g.redirect_uri)
            .bind(&g.code_hash)
            .bind(&g.code_challenge)
            .bind(g.code_expires_at)
            .bind(g.code_used_at)
            .bind(g.created_at)
            .bind(g.last_used_at)
            .bind(g.revoked_at)
            .bind(g.redirect_uri_named)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "UPDATE oauth_clients SET last_used_at = $2 WHERE id = $1 \
                 AND (last_used_at IS NULL OR last_used_at < $2)",
            )
            .bind(&g.client_id)
            .bind(g.created_at)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(())
    }

    pub async fn oauth_grant_by_code(
        &self,
        code_hash: &str,
    ) -> Result<Option<OAuthGrantRecord>, StoreError> {
        let sql = format!("SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE code_hash = $1");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(code_hash)
            .fetch_optional(pool)
            .await?))
    }

    /// Mark a grant's code used: true for the first use only.
    pub async fn use_oauth_code(
        &self,
        grant_id: &str,
        now: UnixMillis,
    ) -> Result<bool, StoreError> {
        let n = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE oauth_grants SET code_used_at = $2 WHERE id = $1 AND code_used_at IS NULL"
        )
        .bind(grant_id)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(n == 1)
    }

    /// Revoke a grant and so every token of it. True when it was live.
    pub async fn revoke_oauth_grant(
        &self,
        grant_id: &str,
        now: UnixMillis,
    ) -> Result<bool, StoreError> {
        let n = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE oauth_grants SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL"
        )
        .bind(grant_id)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(n == 1)
    }

    /// Revoke every live grant of `client_id` for `account_id`: the number.
    pub async fn revoke_oauth_client_grants(
        &self,
        account_id: &str,
        client_id: &str,
        now: UnixMillis,
    ) -> Result<u64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE oauth_grants SET revoked_at = $3 WHERE account_id = $1 AND client_id = $2 \
             AND revoked_at IS NULL"
        )
        .bind(account_id)
        .bind(client_id)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected()))
    }

    pub async fn insert_oauth_token(&self, t: &OAuthTokenRecord) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO oauth_tokens (hash, grant_id, kind, scope, created_at, expires_at, \
             rotated_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        )
        .bind(&t.hash)
        .bind(&t.grant_id)
        .bind(&t.kind)
        .bind(&t.scope)
        .bind(t.created_at)
        .bind(t.expires_at)
        .bind(t.rotated_at)
        .bind(t.revoked_at)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// A token by hash, with its grant.
    pub async fn oauth_token(&self, hash: &str) -> Result<Option<OAuthTokenWithGrant>, StoreError> {
        let token: Option<OAuthTokenRecord> = on_pool!(&self.pool, |pool| {
            sqlx::query_as(
            "SELECT hash, grant_id, kind, scope, created_at, expires_at, rotated_at, revoked_at \
             FROM oauth_tokens WHERE hash = $1"
        )
        .bind(hash)
        .fetch_optional(pool)
        .await?
        });
        let Some(token) = token else {
            return Ok(None);
        };
        let sql = format!("SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE id = $1");
        let grant: Option<OAuthGrantRecord> = on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(&token.grant_id)
            .fetch_optional(pool)
            .await?);
        Ok(grant.map(|grant| OAuthTokenWithGrant { token, grant }))
    }

    /// Rotate a refresh token out: true for the first rotation only.
    pub async fn rotate_oauth_refresh(
        &self,
        hash: &str,
        now: UnixMillis,
    ) -> Result<bool, StoreError> {
        let n = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE oauth_tokens SET rotated_at = $2 WHERE hash = $1 AND kind = 'refresh' \
             AND rotated_at IS NULL AND revoked_at IS NULL"
        )
        .bind(hash)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(n == 1)
    }

    /// Revoke one token. True when it was live.
    pub async fn revoke_oauth_token(
        &self,
        hash: &str,
        now: UnixMillis,
    ) -> Result<bool, StoreError> {
        let n = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE oauth_tokens SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL"
        )
        .bind(hash)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(n == 1)
    }

    /// Note a grant's use, at most once per `resolution` ms.
    pub async fn touch_oauth_grant(
        &self,
        grant_id: &str,
        now: UnixMillis,
        stale_before: UnixMillis,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1 \
             AND (last_used_at IS NULL OR last_used_at <= $3)"
        )
        .bind(grant_id)
        .bind(now)
        .bind(stale_before)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// The clients `account_id` has live grants with at `now`, most
    /// recently connected first. A grant is live when it is not revoked and
    /// one of its tokens still works: an access token not expired, or a
    /// refresh token neither expired nor rotated out.
    pub async fn oauth_connected_clients(
        &self,
        account_id: &str,
        now: UnixMillis,
    ) -> Result<Vec<ConnectedClientRow>, StoreError> {
        let rows: Vec<ConnectedClientRow> = on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT g.client_id AS client_id, COALESCE(c.kind, 'registered') AS kind, \
             COALESCE(c.name, '') AS name, MAX(g.scope) AS scope, \
             MIN(g.created_at) AS connected_at, MAX(g.last_used_at) AS last_used_at \
             FROM oauth_grants g LEFT JOIN oauth_clients c ON c.id = g.client_id \
             WHERE g.account_id = $1 AND g.revoked_at IS NULL AND EXISTS (\
             SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id AND t.revoked_at IS NULL \
             AND t.expires_at > $2 AND (t.kind = 'access' OR t.rotated_at IS NULL)) \
             GROUP BY g.client_id, c.kind, c.name ORDER BY MIN(g.created_at) DESC"
        )
        .bind(account_id)
        .bind(now)
        .fetch_all(pool)
        .await?);
        Ok(rows)
    }

    pub async fn insert_oauth_event(
        &self,
        id: &str,
        account_id: &str,
        client_id: &str,
        kind: &str,
        at: UnixMillis,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO oauth_events (id, account_id, client_id, kind, at) \
             VALUES ($1, $2, $3, $4, $5)"
        )
        .bind(id)
        .bind(account_id)
        .bind(client_id)
        .bind(kind)
        .bind(at)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// An account's newest `limit` events, newest first.
    pub async fn oauth_events(
        &self,
        account_id: &str,
        limit: i64,
    ) -> Result<Vec<OAuthEventRow>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT e.client_id AS client_id, c.name AS client_name, e.kind AS kind, e.at AS at \
             FROM oauth_events e LEFT JOIN oauth_clients c ON c.id = e.client_id \
             WHERE e.account_id = $1 ORDER BY e.at DESC, e.id DESC LIMIT $2"
        )
        .bind(account_id)
        .bind(limit)
        .fetch_all(pool)
        .await?))
    }

    /// Forget what can no longer be used or shown, at `now`: tokens that
    /// expired (a rotated-out refresh token only once its family has no
    /// live refresh token left), or whose grant was revoked; grants left without a token
    /// whose code expired before `code_cutoff` (a code cannot be exchanged
    /// any more, so its reuse cannot be detected either); pending
    /// requests that expired; activity lines older than `events_before`.
    /// The number of rows deleted.
    pub async fn purge_oauth(
        &self,
        now: UnixMillis,
        code_cutoff: UnixMillis,
        events_before: UnixMillis,
    ) -> Result<u64, StoreError> {
        Ok(on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            // A rotated-out refresh token outlives its own expiry while its
            // family has a live refresh token: presented again, it must still
            // revoke that family (a thief who refreshed first keeps it alive).
            let tokens = sqlx::query(
                "DELETE FROM oauth_tokens WHERE (expires_at <= $1 AND NOT (kind = 'refresh' \
                 AND rotated_at IS NOT NULL AND EXISTS (SELECT 1 FROM oauth_tokens l \
                 WHERE l.grant_id = oauth_tokens.grant_id AND l.kind = 'refresh' \
                 AND l.rotated_at IS NULL AND l.revoked_at IS NULL AND l.expires_at > $1))) \
                 OR grant_id IN (SELECT id FROM oauth_grants WHERE revoked_at IS NOT NULL)",
            )
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            let grants = sqlx::query(
                "DELETE FROM oauth_grants WHERE code_expires_at <= $1 AND NOT EXISTS \
                 (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = oauth_grants.id)",
            )
            .bind(code_cutoff)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            let requests = sqlx::query("DELETE FROM oauth_requests WHERE expires_at <= $1")
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            let events = sqlx::query("DELETE FROM oauth_events WHERE at < $1")
                .bind(events_before)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
            tokens + grants + requests + events
        }))
    }
}
