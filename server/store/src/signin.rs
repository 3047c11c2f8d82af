//! Sign-in proofs in flight: Sign-In With Solana nonces and pending Google
//! (OpenID Connect) flows. Both are short-lived and single use, and both are
//! consumed by one statement that only one caller can win, so two concurrent
//! verifies of the same proof cannot both succeed. Expired rows are deleted
//! whenever a new row is written, which keeps the tables at the size of the
//! sign-ins of the last few minutes without a sweeper job.

use super::{Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

/// A nonce handed out by a SIWS challenge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSiwsNonce {
    pub nonce: String,
    pub address: String,
    pub issued_at: UnixMillis,
    pub expires_at: UnixMillis,
}

/// What happened when a verify tried to consume a nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonceUse {
    /// This call consumed it: the only one that ever will.
    Consumed,
    /// No such nonce (never issued, or expired and deleted).
    Unknown,
    /// Already consumed by an earlier verify.
    AlreadyUsed,
    /// Issued, not used, but past its expiry.
    Expired,
    /// Issued for another address.
    OtherAddress,
}

/// A pending OpenID Connect flow, keyed by the SHA-256 of its state.
#[derive(Clone, PartialEq, Eq)]
pub struct NewOidcFlow {
    pub state_hash: String,
    pub pkce_verifier: String,
    pub nonce: String,
    pub created_at: UnixMillis,
    pub expires_at: UnixMillis,
}

/// A flow taken out of the store (it is gone from the store once returned).
#[derive(Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct OidcFlowRecord {
    pub pkce_verifier: String,
    pub nonce: String,
    pub expires_at: UnixMillis,
}

/// The PKCE verifier and nonce never reach a log.
impl std::fmt::Debug for NewOidcFlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewOidcFlow")
            .field("state_hash", &self.state_hash)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for OidcFlowRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcFlowRecord")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Record a SIWS nonce, first deleting nonces that have expired.
    pub async fn insert_siws_nonce(&self, n: &NewSiwsNonce) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| {
            sqlx::query("DELETE FROM siws_nonces WHERE expires_at <= $1")
                .bind(n.issued_at)
                .execute(pool)
                .await?;
            sqlx::query(
                "INSERT INTO siws_nonces (nonce, address, issued_at, expires_at) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(&n.nonce)
            .bind(&n.address)
            .bind(n.issued_at)
            .bind(n.expires_at)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Consume `nonce` for `address` at `now`. The UPDATE only matches an
    /// unused, unexpired nonce of that address, so of two concurrent calls
    /// exactly one sees `Consumed`; the others are told why they lost.
    pub async fn consume_siws_nonce(
        &self,
        nonce: &str,
        address: &str,
        now: UnixMillis,
    ) -> Result<NonceUse, StoreError> {
        let affected = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE siws_nonces SET used_at = $1 \
             WHERE nonce = $2 AND address = $3 AND used_at IS NULL AND expires_at > $1",
        )
        .bind(now)
        .bind(nonce)
        .bind(address)
        .execute(pool)
        .await?
        .rows_affected());
        if affected == 1 {
            return Ok(NonceUse::Consumed);
        }
        let row: Option<(String, UnixMillis, Option<UnixMillis>)> =
            on_pool!(&self.pool, |pool| sqlx::query_as(
                "SELECT address, expires_at, used_at FROM siws_nonces WHERE nonce = $1",
            )
            .bind(nonce)
            .fetch_optional(pool)
            .await?);
        Ok(match row {
            None => NonceUse::Unknown,
            Some((owner, _, _)) if owner != address => NonceUse::OtherAddress,
            Some((_, _, Some(_))) => NonceUse::AlreadyUsed,
            Some(_) => NonceUse::Expired,
        })
    }

    /// Record a pending OIDC flow, first deleting flows that have expired.
    pub async fn insert_oidc_flow(&self, f: &NewOidcFlow) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| {
            sqlx::query("DELETE FROM oidc_flows WHERE expires_at <= $1")
                .bind(f.created_at)
                .execute(pool)
                .await?;
            sqlx::query(
                "INSERT INTO oidc_flows (state_hash, pkce_verifier, nonce, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(&f.state_hash)
            .bind(&f.pkce_verifier)
            .bind(&f.nonce)
            .bind(f.created_at)
            .bind(f.expires_at)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Take the flow with this state hash out of the store, expired or not
    /// (the caller decides). One DELETE, so a state is taken at most once.
    pub async fn take_oidc_flow(
        &self,
        state_hash: &str,
    ) -> Result<Option<OidcFlowRecord>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "DELETE FROM oidc_flows WHERE state_hash = $1 \
             RETURNING pkce_verifier, nonce, expires_at",
        )
        .bind(state_hash)
        .fetch_optional(pool)
        .await?))
    }

    /// Rows of both tables (live or not yet deleted), for tests and health.
    pub async fn count_signin_rows(&self) -> Result<(i64, i64), StoreError> {
        let nonces: i64 = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM siws_nonces"
        )
        .fetch_one(pool)
        .await?);
        let flows: i64 = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM oidc_flows"
        )
        .fetch_one(pool)
        .await?);
        Ok((nonces, flows))
    }
}
