//! Storage: one API over SQLite (the embedded default) and PostgreSQL (the
//! scale-out path), chosen by the `DATABASE_URL` scheme.
//!
//! The rest of the code calls methods on [`Store`] and never sees a pool or a
//! dialect. Each method holds the SQL for both databases side by side, so a
//! change to one is made next to the other. Migrations live in
//! `migrations/sqlite` and `migrations/postgres` and are embedded in the
//! binary; `Store::connect` runs them, so a fresh database is ready at start.
//!
//! State that several API instances must share (MCP sessions, and on
//! PostgreSQL the anonymous rate limits) lives here. On SQLite the rate limiter
//! is kept in process memory: an embedded SQLite database belongs to a single
//! host, and a write per anonymous request would serialise every caller on
//! the database lock.
//!
//! A `Store` also remembers what cannot change once read (`memo`): server
//! secrets, which wallets have been scanned, settled receipts, so the paid
//! read path asks the database only for what a request really needs. The
//! caches of the layers above are theirs (the server's `Caches`).

/// Run `$body` with `$conn` bound to the store's pool, whichever database it
/// is. The body is type-checked once per driver, so one query text and one
/// bind chain serve both.
macro_rules! on_pool {
    ($pool:expr, |$conn:ident| $body:expr) => {
        match $pool {
            Pool::Sqlite($conn) => $body,
            Pool::Postgres($conn) => $body,
        }
    };
}

/// Run `$body` with `$tx` a transaction that holds the quota lock named
/// `$key` (a string: the quota and its owner, `labels:acc_…`) until it
/// commits, and commit it. A quota is checked by counting rows and then
/// inserting; under PostgreSQL's READ COMMITTED two transactions can count
/// the same rows and both insert, so each takes a transaction-scoped
/// advisory lock on the key first (`pg_advisory_xact_lock`; a hash
/// collision of two keys only makes them wait for each other). SQLite
/// runs one writer at a time: `BEGIN IMMEDIATE` takes the write lock up
/// front, so the count and the insert see the same rows (and a read
/// never has to upgrade to a write, which WAL mode may refuse).
/// An error anywhere drops the transaction, which rolls it back.
macro_rules! in_quota_tx {
    ($pool:expr, $key:expr, |$tx:ident| $body:expr) => {
        match $pool {
            Pool::Sqlite(pool) => {
                let mut $tx = pool.begin_with("BEGIN IMMEDIATE").await?;
                let out = $body;
                $tx.commit().await?;
                out
            }
            Pool::Postgres(pool) => {
                let mut $tx = pool.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                    .bind($key)
                    .execute(&mut *$tx)
                    .await?;
                let out = $body;
                $tx.commit().await?;
                out
            }
        }
    };
}

/// The one INSERT of a leg row, for the scan (`write_legs`, where a row
/// already kept is skipped: append `ON CONFLICT DO NOTHING`) and the rescan
/// (`replace_legs`, which deleted the transaction's rows first). Its
/// parameters are bound by `bind_leg!`, in this order.
macro_rules! insert_leg_sql {
    () => {
        "INSERT INTO legs (wallet, signature, leg_index, slot, block_time, operation_type, \
         mint, amount, decimals, counterparties, position, venue, router) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
    };
}
const INSERT_LEG: &str = insert_leg_sql!();
const INSERT_LEG_OR_SKIP: &str = concat!(insert_leg_sql!(), " ON CONFLICT DO NOTHING");

/// Bump `$1`'s ledger version (`Store::ledger_version`), in the same
/// transaction as the legs it changed, so a reader that sees the old
/// version cannot have missed a leg of the new one. Every writer of legs
/// uses it.
const BUMP_LEDGER_VERSION: &str = "INSERT INTO ledger_versions (wallet, version) VALUES ($1, 1) \
     ON CONFLICT (wallet) DO UPDATE SET version = ledger_versions.version + 1";

/// Queue a scan job (`$1` id, `$2` address, `$3` scope, `$4` quote, `$5`
/// stop_at, `$6` now, `$7` account), unless one of the wallet is running
/// (`jobs_one_running` makes the insert do nothing): `create_scan_job` and
/// the credit-paid `begin_paid_scan`.
const INSERT_SCAN_JOB: &str = "INSERT INTO jobs (id, kind, address, scope, quote_id, status, \
     phase, stop_at, created_at, updated_at, account_id) \
     VALUES ($1, 'scan', $2, $3, $4, 'running', 'queued', $5, $6, $6, $7) ON CONFLICT DO NOTHING";

/// Bind one ledger `Leg` of `$wallet` to a query of `INSERT_LEG` (with
/// either driver: it expands inside each arm of `on_pool!`).
macro_rules! bind_leg {
    ($query:expr, $wallet:expr, $leg:expr) => {{
        let leg = $leg;
        let counterparties =
            serde_json::to_string(&leg.counterparties).unwrap_or_else(|_| "[]".to_owned());
        $query
            .bind($wallet)
            .bind(&leg.signature)
            .bind(i32::try_from(leg.index).unwrap_or(i32::MAX))
            .bind(to_i64(leg.slot))
            .bind(leg.block_time)
            .bind(leg.operation_type.as_str())
            .bind(&leg.mint)
            .bind(leg.amount.to_string())
            .bind(i32::from(leg.decimals))
            .bind(counterparties)
            .bind(leg.position.as_deref())
            .bind(leg.venue.as_deref())
            .bind(leg.router.as_deref())
    }};
}

mod accounts;
mod credits;
mod jobs;
mod memo;
mod oauth;
mod payments;
mod portal_sessions;
mod prices;
mod quotes;
mod ratelimit;
mod sessions;
mod share_links;
mod signin;
mod stake;
mod views;

use std::{str::FromStr, sync::Arc, time::Duration};

use sqlx::{
    PgPool, SqlitePool,
    postgres::PgPoolOptions,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
};

pub use accounts::{IdentityRecord, TaxSettingsRow, TokenRecord, WatchRow};
pub use credits::{
    ActionRow, Begun, Credited, FailedPaidScan, MovementRow, NewAction, NewCredit, NewPaidScan,
    PaidScan, StaleScanDebit, paid_job_result,
};
pub use jobs::{
    Created, JobProgress, JobRecord, JobStatus, LedgerQuery, LegRow, NewScanJob, TransactionLegs,
};
pub use oauth::{
    ConnectedClientRow, OAuthClientRecord, OAuthEventRow, OAuthGrantRecord, OAuthRequestRecord,
    OAuthTokenRecord, OAuthTokenWithGrant,
};
pub use payments::{Intent, PaymentRecord};
pub use prices::{AnalyticsLeg, BACKFILL_KIND, BACKFILL_QUOTE, PricePointRow};
pub use quotes::QuoteRecord;
pub use ratelimit::{RateDecision, RateRule};
pub use sessions::{NewSession, SessionClass, SessionOpened, SessionQuota, SessionRecord};
pub use share_links::ShareLinkRecord;
pub use signin::{NewOidcFlow, NewSiwsNonce, NonceUse, OidcFlowRecord};
pub use stake::{StakeAccountRow, StakeAccountSeen, StakeFlowRow};
pub use views::{StaleCounts, StaleTransaction};

/// The database pool's settings (`[database]` in the configuration; the
/// server's `config` re-exports this type).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    /// Connection pool size.
    pub max_connections: u32,
    /// SQLite busy timeout, milliseconds.
    pub busy_timeout_ms: u64,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            max_connections: 16,
            busy_timeout_ms: 5_000,
        }
    }
}

/// A storage failure. Rendered to callers as a generic internal error.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("database url: {0}")]
    Url(String),
    #[error("a row vanished between two statements")]
    Vanished,
    #[error("creating the database directory {path}: {source}")]
    Directory {
        path: String,
        source: std::io::Error,
    },
}

/// Which database a [`Store`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The store. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    local_limits: ratelimit::LocalLimiter,
    known: Arc<memo::Known>,
    /// Price ranges this process stored through this store
    /// ([`Store::price_writes`]); shared by the store's clones.
    price_writes: Arc<std::sync::atomic::AtomicU64>,
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

impl Store {
    /// Connect to `url` without migrating.
    pub async fn connect(url: &str, config: &DatabaseConfig) -> Result<Self, StoreError> {
        let pool = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(config.max_connections)
                .acquire_timeout(Duration::from_secs(10))
                .connect(url)
                .await?;
            Pool::Postgres(pool)
        } else if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)
                .map_err(|e| StoreError::Url(e.to_string()))?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_millis(config.busy_timeout_ms));
            let path = options.get_filename();
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| StoreError::Directory {
                    path: dir.display().to_string(),
                    source,
                })?;
            }
            let pool = SqlitePoolOptions::new()
                .max_connections(config.max_connections)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(options)
                .await?;
            Pool::Sqlite(pool)
        } else {
            return Err(StoreError::Url(
                "DATABASE_URL must start with sqlite: or postgres://".to_owned(),
            ));
        };
        Ok(Self {
            pool,
            local_limits: ratelimit::LocalLimiter::default(),
            known: Arc::default(),
            price_writes: Arc::default(),
        })
    }

    /// Connect and bring the schema up to date.
    pub async fn open(url: &str, config: &DatabaseConfig) -> Result<Self, StoreError> {
        let store = Self::connect(url, config).await?;
        store.migrate().await?;
        Ok(store)
    }

    /// Apply pending migrations. Safe to run from several processes at once:
    /// sqlx takes a database lock around them.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match &self.pool {
            Pool::Sqlite(pool) => SQLITE_MIGRATIONS.run(pool).await?,
            Pool::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await?,
        }
        Ok(())
    }

    pub fn dialect(&self) -> Dialect {
        match self.pool {
            Pool::Sqlite(_) => Dialect::Sqlite,
            Pool::Postgres(_) => Dialect::Postgres,
        }
    }

    /// A round trip to the database, for `/readyz`.
    pub async fn ping(&self) -> Result<(), StoreError> {
        on_pool!(&self.pool, |pool| sqlx::query("SELECT 1")
            .execute(pool)
            .await
            .map(|_| ())?);
        Ok(())
    }

    /// The number of migrations applied, read at startup for `/healthz` and by
    /// `ledger migrate`.
    pub async fn applied_migrations(&self) -> Result<i64, StoreError> {
        let sql = "SELECT COUNT(*) FROM _sqlx_migrations WHERE success";
        let count: i64 = on_pool!(&self.pool, |pool| sqlx::query_scalar(sql)
            .fetch_one(pool)
            .await?);
        Ok(count)
    }

    /// Close every connection (on shutdown).
    pub async fn close(&self) {
        on_pool!(&self.pool, |pool| pool.close().await)
    }
}
