//! Accounts, identities, tokens, the watchlist and address labels: the rows
//! behind `crate::accounts`. The store takes and returns plain rows; what
//! a value may be (an id's prefix, a label's length, a scope) is decided in
//! `accounts`, which is the only caller. A token's plaintext never reaches
//! this file: rows carry its SHA-256 and its display prefix only.

use super::{Pool, Store, StoreError};
use ledger_core::clock::UnixMillis;

/// One identity row. `issuer` is `''` for a Solana wallet.
/// An account's tax and display defaults as stored (names as the REST
/// schema writes them; `None`: not set).
#[derive(Clone, Debug, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct TaxSettingsRow {
    pub jurisdiction: String,
    pub currency: Option<String>,
    pub unlabelled: Option<String>,
    pub method: Option<String>,
    /// A BCP 47 tag of the supported set (`de-DE`).
    pub locale: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct IdentityRecord {
    pub account_id: String,
    pub kind: String,
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    pub created_at: UnixMillis,
}

/// One token row.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct TokenRecord {
    pub id: String,
    pub account_id: String,
    pub kind: String,
    pub prefix: String,
    pub hash: String,
    pub scopes: String,
    pub label: String,
    pub created_at: UnixMillis,
    pub last_used_at: Option<UnixMillis>,
    pub revoked_at: Option<UnixMillis>,
}

const TOKEN_COLUMNS: &str =
    "id, account_id, kind, prefix, hash, scopes, label, created_at, last_used_at, revoked_at";

/// One watched wallet with its last scan and ledger size.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct WatchRow {
    pub address: String,
    pub label: String,
    pub added_at: UnixMillis,
    pub job_id: Option<String>,
    pub job_status: Option<String>,
    pub job_finished_at: Option<UnixMillis>,
    pub job_account_id: Option<String>,
    pub legs: i64,
}

impl Store {
    pub async fn insert_account(
        &self,
        id: &str,
        label: &str,
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO accounts (id, label, created_at) VALUES ($1, $2, $3)"
        )
        .bind(id)
        .bind(label)
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    pub async fn account_exists(&self, id: &str) -> Result<bool, StoreError> {
        let n: i64 = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM accounts WHERE id = $1"
        )
        .bind(id)
        .fetch_one(pool)
        .await?);
        Ok(n > 0)
    }

    /// Create account `id` and its first identity in one transaction. False
    /// (and no account) when the identity already belongs to an account:
    /// two first sign-ins racing create one account, not two.
    pub async fn create_account_with_identity(
        &self,
        id: &str,
        label: &str,
        identity: &IdentityRecord,
    ) -> Result<bool, StoreError> {
        Ok(on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            sqlx::query("INSERT INTO accounts (id, label, created_at) VALUES ($1, $2, $3)")
                .bind(id)
                .bind(label)
                .bind(identity.created_at)
                .execute(&mut *tx)
                .await?;
            let linked = sqlx::query(
                "INSERT INTO identities (account_id, kind, issuer, subject, email, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            )
            .bind(id)
            .bind(&identity.kind)
            .bind(&identity.issuer)
            .bind(&identity.subject)
            .bind(&identity.email)
            .bind(identity.created_at)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if linked == 1 {
                tx.commit().await?;
                true
            } else {
                tx.rollback().await?;
                false
            }
        }))
    }

    /// An account's label; `None` when there is no such account.
    pub async fn account_label(&self, id: &str) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> = on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT label FROM accounts WHERE id = $1"
        )
        .bind(id)
        .fetch_optional(pool)
        .await?);
        Ok(row.map(|(label,)| label))
    }

    /// Link an identity to `identity.account_id`. False when it is already
    /// linked (to this account or another).
    pub async fn insert_identity(&self, identity: &IdentityRecord) -> Result<bool, StoreError> {
        let linked = on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO identities (account_id, kind, issuer, subject, email, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING"
        )
        .bind(&identity.account_id)
        .bind(&identity.kind)
        .bind(&identity.issuer)
        .bind(&identity.subject)
        .bind(&identity.email)
        .bind(identity.created_at)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(linked == 1)
    }

    /// The identity row for (kind, issuer, subject), whoever owns it.
    pub async fn identity(
        &self,
        kind: &str,
        issuer: &str,
        subject: &str,
    ) -> Result<Option<IdentityRecord>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT account_id, kind, issuer, subject, email, created_at FROM identities \
             WHERE kind = $1 AND issuer = $2 AND subject = $3"
        )
        .bind(kind)
        .bind(issuer)
        .bind(subject)
        .fetch_optional(pool)
        .await?))
    }

    /// Record the email an identity signed in with (Google emails change).
    pub async fn set_identity_email(
        &self,
        kind: &str,
        issuer: &str,
        subject: &str,
        email: Option<&str>,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE identities SET email = $4 WHERE kind = $1 AND issuer = $2 AND subject = $3"
        )
        .bind(kind)
        .bind(issuer)
        .bind(subject)
        .bind(email)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    /// An account's identities, oldest first.
    pub async fn identities_of(&self, account_id: &str) -> Result<Vec<IdentityRecord>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT account_id, kind, issuer, subject, email, created_at FROM identities \
             WHERE account_id = $1 ORDER BY created_at, kind, subject"
        )
        .bind(account_id)
        .fetch_all(pool)
        .await?))
    }

    pub async fn insert_token(&self, t: &TokenRecord) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO tokens ({TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        );
        on_pool!(&self.pool, |pool| sqlx::query(&sql)
            .bind(&t.id)
            .bind(&t.account_id)
            .bind(&t.kind)
            .bind(&t.prefix)
            .bind(&t.hash)
            .bind(&t.scopes)
            .bind(&t.label)
            .bind(t.created_at)
            .bind(t.last_used_at)
            .bind(t.revoked_at)
            .execute(pool)
            .await
            .map(|_| ())?);
        Ok(())
    }

    /// [`Store::insert_token`] unless the account already holds `limit`
    /// live (unrevoked) tokens: false then, and nothing is written. The
    /// count is in the insert's own statement, under the account's quota
    /// lock (`in_quota_tx`).
    pub async fn insert_token_within(
        &self,
        t: &TokenRecord,
        limit: u32,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "INSERT INTO tokens ({TOKEN_COLUMNS}) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 \
             WHERE (SELECT COUNT(*) FROM tokens WHERE account_id = $2 AND revoked_at IS NULL) < $11"
        );
        let lock = format!("tokens:{}", t.account_id);
        let inserted = in_quota_tx!(&self.pool, &lock, |tx| sqlx::query(&sql)
            .bind(&t.id)
            .bind(&t.account_id)
            .bind(&t.kind)
            .bind(&t.prefix)
            .bind(&t.hash)
            .bind(&t.scopes)
            .bind(&t.label)
            .bind(t.created_at)
            .bind(t.last_used_at)
            .bind(t.revoked_at)
            .bind(i64::from(limit))
            .execute(&mut *tx)
            .await?
            .rows_affected());
        Ok(inserted == 1)
    }

    /// The token whose plaintext hashes to `hash`, revoked or not.
    pub async fn token_by_hash(&self, hash: &str) -> Result<Option<TokenRecord>, StoreError> {
        let sql = format!("SELECT {TOKEN_COLUMNS} FROM tokens WHERE hash = $1");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(hash)
            .fetch_optional(pool)
            .await?))
    }

    /// Set `last_used_at` to `now` unless it was set after `not_after`
    /// (another request of the same minute got there first).
    pub async fn touch_token(
        &self,
        id: &str,
        now: UnixMillis,
        not_after: UnixMillis,
    ) -> Result<bool, StoreError> {
        let touched = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE tokens SET last_used_at = $2 \
             WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)"
        )
        .bind(id)
        .bind(now)
        .bind(not_after)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(touched == 1)
    }

    /// An account's live (unrevoked) tokens, newest first.
    pub async fn live_tokens_of(&self, account_id: &str) -> Result<Vec<TokenRecord>, StoreError> {
        let sql = format!(
            "SELECT {TOKEN_COLUMNS} FROM tokens WHERE account_id = $1 AND revoked_at IS NULL \
             ORDER BY created_at DESC, id DESC"
        );
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(account_id)
            .fetch_all(pool)
            .await?))
    }

    /// Live tokens whose display prefix starts with `prefix`.
    pub async fn live_tokens_with_prefix(
        &self,
        prefix: &str,
    ) -> Result<Vec<TokenRecord>, StoreError> {
        // substr rather than LIKE: `_` in `lm_` is a LIKE wildcard.
        let sql = format!(
            "SELECT {TOKEN_COLUMNS} FROM tokens \
             WHERE substr(prefix, 1, length($1)) = $1 AND revoked_at IS NULL ORDER BY id"
        );
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(prefix)
            .fetch_all(pool)
            .await?))
    }

    /// The live (unrevoked) token `id`, whatever its account.
    pub async fn live_token_by_id(&self, id: &str) -> Result<Option<TokenRecord>, StoreError> {
        let sql =
            format!("SELECT {TOKEN_COLUMNS} FROM tokens WHERE id = $1 AND revoked_at IS NULL");
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await?))
    }

    /// Revoke token `id` of `account_id`. False when the account has no
    /// such live token.
    pub async fn revoke_token(
        &self,
        account_id: &str,
        id: &str,
        now: UnixMillis,
    ) -> Result<bool, StoreError> {
        let revoked = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE tokens SET revoked_at = $3 \
             WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL"
        )
        .bind(id)
        .bind(account_id)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(revoked == 1)
    }

    /// Watch `address` from `account_id`, or relabel it when watched.
    pub async fn upsert_watch(
        &self,
        account_id: &str,
        address: &str,
        label: &str,
        now: UnixMillis,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO watchlist (account_id, address, label, added_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (account_id, address) DO UPDATE SET label = excluded.label"
        )
        .bind(account_id)
        .bind(address)
        .bind(label)
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ())?);
        Ok(())
    }

    pub async fn delete_watch(&self, account_id: &str, address: &str) -> Result<bool, StoreError> {
        let removed = on_pool!(&self.pool, |pool| sqlx::query(
            "DELETE FROM watchlist WHERE account_id = $1 AND address = $2"
        )
        .bind(account_id)
        .bind(address)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(removed == 1)
    }

    pub async fn watching(&self, account_id: &str, address: &str) -> Result<bool, StoreError> {
        let n: i64 = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM watchlist WHERE account_id = $1 AND address = $2"
        )
        .bind(account_id)
        .bind(address)
        .fetch_one(pool)
        .await?);
        Ok(n > 0)
    }

    /// An account's watched addresses and their labels, without the scans
    /// and leg counts [`Store::watchlist_of`] adds: what naming and the
    /// watchlist's size limit need.
    pub async fn watched_labels(
        &self,
        account_id: &str,
    ) -> Result<Vec<(String, String)>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT address, label FROM watchlist WHERE account_id = $1 ORDER BY added_at, address"
        )
        .bind(account_id)
        .fetch_all(pool)
        .await?))
    }

    /// An account's watchlist in the order it was added, each wallet with
    /// its newest scan job (running or ended) and how many legs its ledger
    /// holds, in one query.
    pub async fn watchlist_of(&self, account_id: &str) -> Result<Vec<WatchRow>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT w.address, w.label, w.added_at, \
                    j.id AS job_id, j.status AS job_status, j.finished_at AS job_finished_at, \
                    j.account_id AS job_account_id, \
                    (SELECT COUNT(*) FROM legs l WHERE l.wallet = w.address) AS legs \
             FROM watchlist w \
             LEFT JOIN jobs j ON j.id = ( \
                 SELECT j2.id FROM jobs j2 WHERE j2.address = w.address AND j2.kind = 'scan' \
                 ORDER BY j2.created_at DESC, j2.id DESC LIMIT 1) \
             WHERE w.account_id = $1 ORDER BY w.added_at, w.address"
        )
        .bind(account_id)
        .fetch_all(pool)
        .await?))
    }

    /// Label `address` for `account_id`, or relabel it. A new address is
    /// inserted only while the account holds fewer than `limit` labels
    /// (false then, and nothing is written); the count is in the same
    /// statement, under the account's quota lock (`in_quota_tx`), so
    /// concurrent inserts cannot pass it together on either database.
    pub async fn upsert_address_label(
        &self,
        account_id: &str,
        address: &str,
        label: &str,
        category: &str,
        now: UnixMillis,
        limit: u32,
    ) -> Result<bool, StoreError> {
        let lock = format!("labels:{account_id}");
        let written = in_quota_tx!(&self.pool, &lock, |tx| {
            sqlx::query(
                "INSERT INTO address_labels (account_id, address, label, category, updated_at) \
                 SELECT $1, $2, $3, $4, $5 \
                 WHERE (SELECT COUNT(*) FROM address_labels WHERE account_id = $1) < $6 \
                    OR EXISTS (SELECT 1 FROM address_labels WHERE account_id = $1 AND address = $2) \
                 ON CONFLICT (account_id, address) DO UPDATE \
                 SET label = excluded.label, category = excluded.category, \
                     updated_at = excluded.updated_at",
            )
            .bind(account_id)
            .bind(address)
            .bind(label)
            .bind(category)
            .bind(now)
            .bind(i64::from(limit))
            .execute(&mut *tx)
            .await?
            .rows_affected()
        });
        Ok(written == 1)
    }

    pub async fn delete_address_label(
        &self,
        account_id: &str,
        address: &str,
    ) -> Result<bool, StoreError> {
        let removed = on_pool!(&self.pool, |pool| sqlx::query(
            "DELETE FROM address_labels WHERE account_id = $1 AND address = $2"
        )
        .bind(account_id)
        .bind(address)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(removed == 1)
    }

    /// An account's address labels: (address, label, category).
    pub async fn address_labels_of(
        &self,
        account_id: &str,
    ) -> Result<Vec<(String, String, String)>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT address, label, category FROM address_labels WHERE account_id = $1"
        )
        .bind(account_id)
        .fetch_all(pool)
        .await?))
    }

    /// An account's tax defaults as stored; `None` when it has set none.
    pub async fn tax_settings_of(
        &self,
        account_id: &str,
    ) -> Result<Option<TaxSettingsRow>, StoreError> {
        Ok(on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT jurisdiction, currency, unlabelled, method, locale \
             FROM account_tax_settings WHERE account_id = $1"
        )
        .bind(account_id)
        .fetch_optional(pool)
        .await?))
    }

    /// Store an account's tax defaults (one row per account, replaced).
    pub async fn set_tax_settings(
        &self,
        account_id: &str,
        row: &TaxSettingsRow,
        now: i64,
    ) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO account_tax_settings \
             (account_id, jurisdiction, currency, unlabelled, method, locale, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (account_id) DO UPDATE \
             SET jurisdiction = excluded.jurisdiction, currency = excluded.currency, \
                 unlabelled = excluded.unlabelled, method = excluded.method, \
                 locale = excluded.locale, updated_at = excluded.updated_at"
        )
        .bind(account_id)
        .bind(&row.jurisdiction)
        .bind(&row.currency)
        .bind(&row.unlabelled)
        .bind(&row.method)
        .bind(&row.locale)
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(())
    }

    /// Forget an account's tax defaults; false when it had none.
    pub async fn delete_tax_settings(&self, account_id: &str) -> Result<bool, StoreError> {
        let removed = on_pool!(&self.pool, |pool| sqlx::query(
            "DELETE FROM account_tax_settings WHERE account_id = $1"
        )
        .bind(account_id)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(removed == 1)
    }

    /// Give an unowned payment to `account_id`. False when the payment does
    /// not exist or belongs to another account; true when it is (now or
    /// already) this account's.
    pub async fn assign_payment_account(
        &self,
        payment_id: &str,
        account_id: &str,
    ) -> Result<bool, StoreError> {
        let assigned = on_pool!(&self.pool, |pool| sqlx::query(
            "UPDATE payments SET account_id = $2 \
             WHERE id = $1 AND (account_id IS NULL OR account_id = $2)"
        )
        .bind(payment_id)
        .bind(account_id)
        .execute(pool)
        .await?
        .rows_affected());
        Ok(assigned == 1)
    }
}
