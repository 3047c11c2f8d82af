//! Configuration: compiled-in defaults, then an optional TOML file
//! (`--config PATH`), then environment variables, each layer overriding the
//! one before. The service runs with no file and no environment at all.
//!
//! Environment names: `DATABASE_URL` is the conventional unprefixed name;
//! every other key is `LEDGER_` plus the key in upper case, with `__` between
//! a table and its key (`mcp.session_ttl_secs` is `LEDGER_MCP__SESSION_TTL_SECS`).
//! docs/configuration.md is the table of every key; a test keeps it in step.

pub use ledger_store::DatabaseConfig;
use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
};

use figment::{
    Figment,
    providers::{Format, Serialized, Toml},
};
use serde::{Deserialize, Serialize};

/// The whole configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address the HTTP server binds.
    pub listen: SocketAddr,
    /// `sqlite://PATH` (embedded default) or `postgres://…`.
    pub database_url: String,
    /// The URL users and agents see. Defaults to `http://{listen}`.
    pub public_url: Option<String>,
    /// Directory to serve site assets (`pkg/`, images, `style/`) from, ahead
    /// of the copies embedded in the binary.
    pub site_root: Option<PathBuf>,
    /// Extra origins (scheme://host[:port]) allowed to call `/mcp` from a browser.
    pub allowed_origins: Vec<String>,
    /// Take the client IP from the last `X-Forwarded-For` hop (only behind a
    /// proxy you run).
    pub trust_forwarded_for: bool,
    /// Lowercase hex SHA-256 of the operator's admin key (a bearer that
    /// reads any job and any wallet); none by default. The key itself is
    /// never configured: `printf %s "$KEY" | sha256sum`.
    pub admin_key_sha256: Option<String>,
    /// Seconds in-flight requests get to finish after SIGTERM or Ctrl-C.
    pub shutdown_grace_secs: u64,
    /// `text` or `json`: how log lines are written.
    pub log_format: crate::telemetry::LogFormat,
    /// HTTP connections: how long a client may take, how many it may hold.
    pub connections: ConnectionsConfig,
    /// The Prometheus metrics endpoint: off unless `metrics.listen` is set.
    pub metrics: MetricsConfig,
    pub mcp: McpConfig,
    pub rate_limit: RateLimitConfig,
    /// How much one account may hold: labels, tokens, MCP sessions,
    /// pending OAuth consents (docs/configuration.md#quotas).
    pub quota: QuotaConfig,
    pub worker: WorkerConfig,
    pub database: DatabaseConfig,
    pub solana: SolanaConfig,
    pub pricing: PricingConfig,
    pub prices: PricesConfig,
    /// `off`: every paid tool is free; `x402`: paid tools answer a challenge
    /// and are paid in USDC on Solana.
    pub payments: PaymentsMode,
    /// Where x402 payments go and what they may look like.
    pub x402: X402Config,
    /// Portal (cookie) sessions: how long they live.
    pub session: SessionConfig,
    /// Sign in with Google (OpenID Connect); off until a client is set.
    pub google: GoogleConfig,
    /// Sign-In With Solana.
    pub siws: SiwsConfig,
    /// The OAuth 2.1 authorization server of `/mcp` (docs/oauth.md).
    pub oauth: OAuthConfig,
    /// Follow the money: research credits, prices and bounds of
    /// expand_graph and find_first_funder.
    pub graph: GraphConfig,
    /// Share links (`/s/{token}`): how long they live, how many an account holds.
    pub share: ShareConfig,
    /// The sample report the home page links to (`/sample`).
    pub sample: SampleConfig,
}

/// The sample report (docs/portal.md#the-sample-report): a made-up wallet
/// whose ledger ships in the repository (`server/src/sample/wallet.json`),
/// seeded into the database when `ledger serve` starts and shown read-only
/// at `/sample`. No network, no payment, no account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SampleConfig {
    /// Seed the sample wallet at startup and serve `/sample`.
    pub enabled: bool,
}

impl Default for SampleConfig {
    fn default() -> Self {
        Self { enabled: true }
    }
}

/// Timeouts and caps of the HTTP connections (docs/operations.md): a
/// client that opens connections and sends nothing, or half a request,
/// must not hold the server's file descriptors.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConnectionsConfig {
    /// A request's head must arrive complete within this (milliseconds),
    /// counted from the connection's opening for its first request, and
    /// from the first byte of each later one.
    pub header_timeout_ms: u64,
    /// A connection with no request in flight is closed after this long
    /// without one (milliseconds).
    pub idle_timeout_ms: u64,
    /// Most connections open at once; 0: the open-file limit less what the
    /// database pool and outgoing clients need.
    pub max_open: u32,
    /// Most connections open at once from one address (IPv6: one /64); 0:
    /// no per-address cap. Not applied with `trust_forwarded_for`, where
    /// every connection comes from the proxy.
    pub max_open_per_ip: u32,
    /// A request's body must arrive whole within this (milliseconds) of
    /// the end of its head, however it trickles in.
    pub body_timeout_ms: u64,
}

impl Default for ConnectionsConfig {
    fn default() -> Self {
        Self {
            header_timeout_ms: 10_000,
            idle_timeout_ms: 60_000,
            max_open: 0,
            max_open_per_ip: 64,
            body_timeout_ms: 30_000,
        }
    }
}

/// The Prometheus metrics endpoint (docs/operations.md).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Where `GET /metrics` is served; none (the default) serves no metrics.
    pub listen: Option<SocketAddr>,
}

/// Lifetimes and limits of the OAuth authorization server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OAuthConfig {
    /// An access token lives this long (seconds).
    pub access_token_ttl_secs: u64,
    /// A refresh token lives this long (seconds); each refresh issues a new one.
    pub refresh_token_ttl_secs: u64,
    /// A connection (the tokens of one approval) ends this long after the
    /// consent, however often it is refreshed (seconds).
    pub grant_max_age_secs: u64,
    /// The Keys page's OAuth activity is kept this long (seconds).
    pub event_retention_secs: u64,
    /// An authorization code must be exchanged within this (seconds, at most 60).
    pub code_ttl_secs: u64,
    /// A consent page must be answered within this (seconds).
    pub request_ttl_secs: u64,
    /// A registered client that never obtained a code is deleted after this (seconds).
    pub unused_client_ttl_secs: u64,
    /// Registrations per hour per client IP.
    pub register_per_hour: u32,
    /// Registrations one IP may make at once.
    pub register_burst: u32,
    /// Largest Client ID Metadata Document read (bytes).
    pub metadata_max_bytes: usize,
    /// How long fetching a Client ID Metadata Document may take (milliseconds).
    pub metadata_timeout_ms: u64,
    /// Longest a fetched metadata document is cached (seconds), whatever its headers say.
    pub metadata_max_cache_secs: u64,
    /// Tests only: fetch metadata documents from loopback addresses, over http.
    pub metadata_allow_loopback: bool,
    /// Client ID Metadata Document fetches per hour per client IP (IPv6: per /64).
    pub metadata_fetch_per_hour: u32,
    /// Metadata document fetches one IP may cause at once.
    pub metadata_fetch_burst: u32,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        Self {
            access_token_ttl_secs: 3600,
            refresh_token_ttl_secs: 30 * 24 * 3600,
            grant_max_age_secs: 90 * 24 * 3600,
            event_retention_secs: 180 * 24 * 3600,
            code_ttl_secs: 60,
            request_ttl_secs: 600,
            unused_client_ttl_secs: 24 * 3600,
            register_per_hour: 30,
            register_burst: 10,
            metadata_max_bytes: 5 * 1024,
            metadata_timeout_ms: 5_000,
            metadata_max_cache_secs: 24 * 3600,
            metadata_allow_loopback: false,
            metadata_fetch_per_hour: 60,
            metadata_fetch_burst: 10,
        }
    }
}

/// Share links expire `ttl_secs` after they are minted (unless revoked
/// sooner); an account holds at most `max_live_links` live ones.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShareConfig {
    /// Seconds a share link lives after it is minted.
    pub ttl_secs: u64,
    /// Live links one account may hold at once (`snapshot_limit` beyond).
    pub max_live_links: u32,
}

impl Default for ShareConfig {
    fn default() -> Self {
        Self {
            ttl_secs: 30 * 24 * 3600,
            max_live_links: 20,
        }
    }
}

/// Follow the money (docs/follow-the-money.md). Prices are USD (atomic
/// USDC), taken from an account's research credits before any fetch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GraphConfig {
    /// Switch the `follow_the_money` feature on for every account.
    pub enabled_for_all: bool,
    /// expand_graph from a scanned wallet's ledger.
    pub ledger_usd: crate::values::Usd,
    /// expand_graph live, when it reads the chain.
    pub live_usd: crate::values::Usd,
    /// expand_graph live, served from the live cache.
    pub cached_live_usd: crate::values::Usd,
    /// find_first_funder, when it reads the chain.
    pub funder_usd: crate::values::Usd,
    /// find_first_funder, served from its cache.
    pub cached_funder_usd: crate::values::Usd,
    /// Top-up amounts `POST /v1/credits` accepts.
    pub topup_usd: Vec<crate::values::Usd>,
    /// Counterparties expand_graph returns when `limit` is not given.
    pub default_limit: u32,
    /// Recent signatures a live expansion reads when `window_sigs` is not given.
    pub default_window_sigs: u32,
    /// How long a live expansion's chain read is reused (seconds).
    pub live_cache_secs: u64,
    /// How long a funder lookup's answer is reused (seconds).
    pub funder_cache_secs: u64,
    /// A wallet with more counterparties than this is a hub.
    pub hub_counterparties: u32,
    /// Counterparties a hub expansion returns.
    pub hub_cap: u32,
    /// Counterparties a hub expansion returns with `force`, never more.
    pub hub_max: u32,
    /// Signature pages (1000 each) find_first_funder walks back, at most.
    pub funder_max_pages: u32,
    /// Oldest transactions find_first_funder reads forward, at most.
    pub funder_max_transactions: u32,
    /// Research calls per second per account, sustained.
    pub rate_per_sec: f64,
    /// Research calls per account at once.
    pub rate_burst: u32,
    /// Research actions per account in 24 hours (too_many_expansions).
    pub daily_max_actions: u32,
}

impl Default for GraphConfig {
    fn default() -> Self {
        let usd = crate::values::Usd::from_micros;
        Self {
            enabled_for_all: false,
            ledger_usd: usd(5_000),
            live_usd: usd(20_000),
            cached_live_usd: usd(5_000),
            funder_usd: usd(50_000),
            cached_funder_usd: usd(5_000),
            topup_usd: vec![usd(1_000_000), usd(5_000_000), usd(20_000_000)],
            default_limit: 20,
            default_window_sigs: 50,
            live_cache_secs: 600,
            funder_cache_secs: 24 * 3600,
            hub_counterparties: 200,
            hub_cap: 10,
            hub_max: 50,
            funder_max_pages: 10,
            funder_max_transactions: 20,
            rate_per_sec: 1.0,
            rate_burst: 5,
            daily_max_actions: 500,
        }
    }
}

impl ShareConfig {
    /// When a link minted at `now_ms` expires.
    pub fn expires_at(&self, now_ms: i64) -> i64 {
        now_ms.saturating_add(secs_to_ms(self.ttl_secs))
    }
}

/// Portal sessions end after `idle_secs` without a request, and
/// `absolute_secs` after sign-in whatever happens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionConfig {
    /// A session unused this long is over (seconds).
    pub idle_secs: u64,
    /// A session is over this long after sign-in, used or not (seconds).
    pub absolute_secs: u64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            idle_secs: 7 * 24 * 3600,
            absolute_secs: 30 * 24 * 3600,
        }
    }
}

impl SessionConfig {
    /// Sessions created at or before this time (ms) are past their
    /// absolute lifetime at `now_ms`.
    pub fn absolute_cutoff(&self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(secs_to_ms(self.absolute_secs))
    }

    /// The idle deadline of a session used at `now_ms`.
    pub fn idle_deadline(&self, now_ms: i64) -> i64 {
        now_ms.saturating_add(secs_to_ms(self.idle_secs))
    }
}

fn secs_to_ms(secs: u64) -> i64 {
    i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX)
}

/// The Google OAuth client (Google Cloud console, type *Web application*,
/// redirect URI `{public_url}/auth/google/callback`). Google sign-in is
/// offered only when both the client id and secret are set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GoogleConfig {
    /// The OpenID provider (`https://accounts.google.com`).
    pub issuer: String,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

impl Default for GoogleConfig {
    fn default() -> Self {
        Self {
            issuer: "https://accounts.google.com".to_owned(),
            client_id: None,
            client_secret: None,
        }
    }
}

/// Sign-In With Solana.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SiwsConfig {
    /// The chain id sign-in messages name (`mainnet`, `devnet`, …).
    pub chain_id: String,
}

impl Default for SiwsConfig {
    fn default() -> Self {
        Self {
            chain_id: "mainnet".to_owned(),
        }
    }
}

/// How paid tools are paid for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaymentsMode {
    /// Paid tools are free (development, private deployments).
    #[default]
    Off,
    /// Paid tools answer an x402 challenge (exact scheme, USDC on Solana).
    X402,
}

/// The x402 exact scheme on Solana: the asset, the payee, our fee payer and
/// the caps a payment transaction must stay within.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct X402Config {
    /// CAIP-2 id of the cluster `solana.rpc_url` points at.
    pub network: String,
    /// The SPL mint payments are made in (USDC).
    pub asset: String,
    /// The asset's decimals.
    pub asset_decimals: u8,
    /// The wallet paid (`payTo`); payments go to its associated token account.
    pub treasury: Option<String>,
    /// A solana-keygen JSON keypair: our fee payer, who co-signs and pays
    /// the network fee of every payment.
    pub fee_payer_keyfile: Option<PathBuf>,
    /// `maxTimeoutSeconds` of a challenge.
    pub max_timeout_secs: u64,
    /// The most compute units a payment may ask for.
    pub max_compute_unit_limit: u32,
    /// The most a payment may bid per compute unit, in micro-lamports (our
    /// fee payer pays it).
    pub max_compute_unit_price: u64,
    /// How long settlement waits for confirmation before leaving the
    /// payment to recovery.
    pub confirm_timeout_secs: u64,
    /// How long after settling a payment presented again still answers
    /// its receipt (settled transactions are public on chain).
    pub replay_window_secs: u64,
    /// How long a receipt covers reads of its wallet.
    pub receipt_ttl_secs: u64,
}

impl Default for X402Config {
    fn default() -> Self {
        Self {
            network: crate::solana::MAINNET.to_owned(),
            asset: crate::solana::USDC_MAINNET.to_owned(),
            asset_decimals: 6,
            treasury: None,
            fee_payer_keyfile: None,
            max_timeout_secs: 60,
            max_compute_unit_limit: 200_000,
            max_compute_unit_price: 50_000,
            confirm_timeout_secs: 45,
            replay_window_secs: 120,
            receipt_ttl_secs: 30 * 24 * 3600,
        }
    }
}

/// One scan tier: histories up to `max_signatures` (none: any size).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTier {
    pub name: String,
    pub max_signatures: Option<u64>,
    pub price_usd: crate::values::Usd,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PricingConfig {
    /// How long a quote stays valid.
    pub quote_ttl_secs: u64,
    /// A read of an already-scanned wallet.
    pub cached_read_usd: crate::values::Usd,
    /// A preview scan (the most recent signatures).
    pub preview_usd: crate::values::Usd,
    /// How many recent signatures a preview covers.
    pub preview_signatures: usize,
    /// The least an incremental scan costs (a wallet that has not moved).
    pub incremental_min_usd: crate::values::Usd,
    /// Signature pages (1000 each) counted to estimate a wallet's size.
    pub estimate_max_pages: usize,
    /// Scan tiers, smallest first; the last should have no maximum.
    pub tiers: Vec<PriceTier>,
}

impl Default for PricingConfig {
    fn default() -> Self {
        let usd = crate::values::Usd::from_micros;
        let tier = |name: &str, max: Option<u64>, micros| PriceTier {
            name: name.to_owned(),
            max_signatures: max,
            price_usd: usd(micros),
        };
        Self {
            quote_ttl_secs: 15 * 60,
            cached_read_usd: usd(20_000),
            preview_usd: usd(50_000),
            preview_signatures: 100,
            incremental_min_usd: usd(10_000),
            estimate_max_pages: 10,
            tiers: vec![
                tier("small", Some(1_000), 250_000),
                tier("medium", Some(10_000), 1_000_000),
                tier("large", Some(100_000), 5_000_000),
                tier("whale", None, 20_000_000),
            ],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SolanaConfig {
    /// The JSON-RPC endpoint scans read from (`SOLANA_RPC_URL`).
    pub rpc_url: String,
    /// `json` or `jsonParsed`: the encoding requested for transactions
    /// (`SOLANA_TX_ENCODING`).
    pub tx_encoding: crate::solana::TxEncoding,
    /// Most RPC requests in flight per process.
    pub max_concurrency: usize,
    /// `getTransaction` requests per JSON-RPC batch.
    pub batch_size: usize,
    /// Signatures per `getSignaturesForAddress` page when scanning (1..=1000).
    pub signatures_page_size: usize,
    /// Retries on transport errors, HTTP 429 and 5xx.
    pub max_retries: u32,
    /// First backoff, doubled per retry (a `Retry-After` wins).
    pub retry_base_ms: u64,
    /// Per-request timeout.
    pub timeout_secs: u64,
}

impl Default for SolanaConfig {
    fn default() -> Self {
        Self {
            rpc_url: "https://api.mainnet-beta.solana.com".to_owned(),
            tx_encoding: crate::solana::TxEncoding::Json,
            max_concurrency: 8,
            batch_size: 50,
            signatures_page_size: 1000,
            max_retries: 5,
            retry_base_ms: 250,
            timeout_secs: 30,
        }
    }
}

impl SolanaConfig {
    /// The RPC client settings.
    pub fn rpc_settings(&self) -> crate::solana::rpc::RpcSettings {
        crate::solana::rpc::RpcSettings {
            url: self.rpc_url.clone(),
            encoding: self.tx_encoding,
            max_concurrency: self.max_concurrency,
            batch_size: self.batch_size,
            max_retries: self.max_retries,
            retry_base: std::time::Duration::from_millis(self.retry_base_ms),
            timeout: std::time::Duration::from_secs(self.timeout_secs),
        }
    }
}

/// Where prices come from and how they are kept (docs/prices.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PricesConfig {
    /// Coinbase's retail API (SOL/USD spot).
    pub coinbase_url: String,
    /// Coinbase Exchange's public API (SOL-USD candles and 24h stats).
    pub coinbase_exchange_url: String,
    /// Jupiter's Price API (token spot prices).
    pub jupiter_url: String,
    /// Sent as `x-api-key` to Jupiter when set (api.jup.ag needs one).
    pub jupiter_api_key: Option<String>,
    /// The ECB's euro reference rates as XML (`eurofxref-hist.xml`, or
    /// `eurofxref-hist-90d.xml`): reports in GBP, EUR, CAD and AUD.
    pub ecb_url: String,
    /// How long a spot price is served from memory.
    pub spot_ttl_secs: u64,
    /// Mints priced at exactly 1 USD.
    pub stablecoins: Vec<String>,
    /// Missing buckets fetched inline; a larger gap becomes a backfill job.
    pub backfill_threshold_buckets: u64,
    /// Per-request timeout for price sources.
    pub timeout_secs: u64,
    /// Consecutive failures of a source that open its breaker.
    pub breaker_failures: u32,
    /// How long an open breaker fails calls at once before one probe.
    pub breaker_cooldown_secs: u64,
}

impl Default for PricesConfig {
    fn default() -> Self {
        Self {
            coinbase_url: "https://api.coinbase.com".to_owned(),
            coinbase_exchange_url: "https://api.exchange.coinbase.com".to_owned(),
            jupiter_url: "https://lite-api.jup.ag".to_owned(),
            jupiter_api_key: None,
            ecb_url: "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.xml".to_owned(),
            spot_ttl_secs: 30,
            stablecoins: vec![
                "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".to_owned(),
                "Es9vMFrzaCERmJrfF4H2FYD4KCoNkY11McCe8BenwNYB".to_owned(),
            ],
            backfill_threshold_buckets: 900,
            timeout_secs: 10,
            breaker_failures: 3,
            breaker_cooldown_secs: 60,
        }
    }
}

/// Conventional environment names that are not `LEDGER_…`, and their keys.
pub const UNPREFIXED_ENV: [(&str, &str); 3] = [
    ("DATABASE_URL", "database_url"),
    ("SOLANA_RPC_URL", "solana.rpc_url"),
    ("SOLANA_TX_ENCODING", "solana.tx_encoding"),
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// An idle MCP session opened with a bearer is forgotten after this
    /// many seconds.
    pub session_ttl_secs: u64,
    /// An idle anonymous MCP session is forgotten after this many seconds.
    pub anonymous_session_ttl_secs: u64,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Most messages in one JSON-RPC batch.
    pub max_batch: usize,
}

/// Rate limits (docs/configuration.md#rate-limits): GCRA buckets in the
/// store, so every instance on one PostgreSQL database shares them. A
/// client IP is keyed by `limits::ClientKey` (IPv4 as itself, IPv6 by /64).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitConfig {
    /// Anonymous requests per second per client IP, `/mcp` and `/v1` alike.
    pub anon_rps: f64,
    /// Burst allowance for anonymous callers (requests); unset, twice
    /// `anon_rps` (the guide's rule), so raising the rate raises the burst.
    pub anon_burst: Option<u32>,
    /// Bearer traffic per account, in cost units per second (`limits::costs`).
    pub account_units_per_sec: f64,
    /// Cost units one account may spend at once.
    pub account_burst_units: u32,
    /// Bearer traffic per client IP, all accounts together, in cost units
    /// per second.
    pub bearer_ip_units_per_sec: f64,
    /// Cost units the bearers of one client IP may spend at once.
    pub bearer_ip_burst_units: u32,
    /// Requests with an unknown, revoked or unreadable bearer per second per
    /// client IP; beyond it such a request is 429, a valid bearer still passes.
    pub bearer_failures_per_sec: f64,
    /// Failed bearers one client IP may present at once.
    pub bearer_failure_burst: u32,
    /// `POST /auth/solana/challenge` calls per minute per client IP.
    pub siws_challenges_per_minute: u32,
    /// Sign-in challenges one client IP may ask for at once.
    pub siws_challenge_burst: u32,
    /// Accounts created by first sign-ins (SIWS or Google) per hour per client IP.
    pub signups_per_hour: u32,
    /// Accounts one client IP may create at once.
    pub signup_burst: u32,
}

impl RateLimitConfig {
    /// The anonymous burst: as set, else twice `anon_rps` rounded up (at
    /// least one).
    pub fn anon_burst(&self) -> u32 {
        self.anon_burst.unwrap_or_else(|| {
            // `as` saturates; the rate is positive and finite by validation.
            ((self.anon_rps * 2.0).ceil() as u32).max(1)
        })
    }
}

/// Quotas: how many of a thing one account may hold. Each is checked by
/// the insert that would exceed it, under its owner's quota lock, and
/// refused as `conflict` (HTTP 409) with a message naming the setting
/// (docs/configuration.md#quotas); but MCP sessions, where one more ends
/// the least recently used of its class instead, and the bearer sessions'
/// total, which is the server's and refused as `unavailable`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QuotaConfig {
    /// Address labels (`set_address_label`) one account may hold.
    pub labels_per_account: u32,
    /// Live MCP tokens and API keys one account may hold (the Keys page).
    pub tokens_per_account: u32,
    /// Open MCP sessions one account may hold, across its tokens; a new
    /// one beyond it ends the account's least recently used session.
    pub mcp_sessions_per_account: u32,
    /// Open MCP sessions opened with a bearer (accounts, the admin key) the
    /// server holds; beyond it `initialize` with a bearer is 503.
    pub mcp_sessions_total: u32,
    /// Open anonymous MCP sessions one client address (IPv6: one /64) may
    /// hold; a new one beyond it ends that address's least recently used.
    pub mcp_anonymous_sessions_per_ip: u32,
    /// Open anonymous MCP sessions the server holds; a new one beyond it
    /// ends the least recently used anonymous session. Never counted
    /// against sessions opened with a bearer.
    pub mcp_anonymous_sessions_total: u32,
    /// OAuth authorization requests one account may have waiting for its
    /// answer on the consent page.
    pub pending_consents_per_account: u32,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        Self {
            labels_per_account: 1_000,
            tokens_per_account: 50,
            mcp_sessions_per_account: 100,
            mcp_sessions_total: 100_000,
            mcp_anonymous_sessions_per_ip: 16,
            mcp_anonymous_sessions_total: 10_000,
            pending_consents_per_account: 10,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkerConfig {
    /// Run the in-process workers under `serve`.
    pub in_process: bool,
    /// Seconds between maintenance passes.
    pub maintenance_interval_secs: u64,
    /// How long a claimed job stays a worker's without progress; a job
    /// whose worker died is claimed again after this.
    pub lease_secs: u64,
    /// How often an idle worker looks for a job, in milliseconds.
    pub poll_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 3000)),
            database_url: "sqlite://./data/ledger.db".to_owned(),
            public_url: None,
            site_root: None,
            allowed_origins: Vec::new(),
            trust_forwarded_for: false,
            admin_key_sha256: None,
            shutdown_grace_secs: 20,
            log_format: crate::telemetry::LogFormat::Text,
            connections: ConnectionsConfig::default(),
            metrics: MetricsConfig::default(),
            mcp: McpConfig::default(),
            rate_limit: RateLimitConfig::default(),
            quota: QuotaConfig::default(),
            worker: WorkerConfig::default(),
            database: DatabaseConfig::default(),
            solana: SolanaConfig::default(),
            pricing: PricingConfig::default(),
            prices: PricesConfig::default(),
            payments: PaymentsMode::Off,
            x402: X402Config::default(),
            session: SessionConfig::default(),
            google: GoogleConfig::default(),
            siws: SiwsConfig::default(),
            oauth: OAuthConfig::default(),
            graph: GraphConfig::default(),
            share: ShareConfig::default(),
            sample: SampleConfig::default(),
        }
    }
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            session_ttl_secs: 24 * 3600,
            anonymous_session_ttl_secs: 3600,
            max_body_bytes: 64 * 1024,
            max_batch: 20,
        }
    }
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        Self {
            anon_rps: 3.0,
            anon_burst: None,
            account_units_per_sec: 20.0,
            account_burst_units: 200,
            bearer_ip_units_per_sec: 60.0,
            bearer_ip_burst_units: 600,
            bearer_failures_per_sec: 3.0,
            bearer_failure_burst: 6,
            siws_challenges_per_minute: 20,
            siws_challenge_burst: 10,
            signups_per_hour: 10,
            signup_burst: 3,
        }
    }
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            in_process: true,
            maintenance_interval_secs: 60,
            lease_secs: 60,
            poll_ms: 500,
        }
    }
}

/// What the dearest call costs in rate-limit units (a PDF report of 20
/// wallets): no burst may be smaller, or that call could never pass. The
/// costs are `limits::costs`' to set; it holds itself to this figure at
/// compile time, so configuration (below `limits`) need not import it.
pub const DEAREST_CALL_UNITS: u32 = 105;

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration file {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("configuration: {0}")]
    Invalid(String),
}

impl Config {
    /// Defaults, then `file` if given, then the process environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        Self::load_from(file, std::env::vars())
    }

    /// [`Config::load`] with the environment passed in, for tests.
    pub fn load_from(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::File {
                path: path.to_owned(),
                source,
            })?;
            figment = figment.merge(Toml::string(&text));
        }
        let env: Vec<(String, String)> = env.into_iter().collect();
        let unprefixed: Vec<(&str, String)> = UNPREFIXED_ENV
            .iter()
            .filter_map(|(name, key)| {
                env.iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| (*key, v.clone()))
            })
            .collect();
        // figment's `Env` provider reads the real process environment; we
        // take the variables as given so tests stay hermetic, and parse each
        // value the way `Env` would (numbers, booleans, arrays, else string).
        // `LEDGER_` is a common prefix (build scripts, wrappers), so a
        // variable naming no key is logged and ignored; a key in the file
        // that names nothing is an error.
        let known = known_keys();
        for (key, value) in env {
            let Some(rest) = key.strip_prefix("LEDGER_").filter(|r| !r.is_empty()) else {
                continue;
            };
            let path = rest.to_ascii_lowercase().replace("__", ".");
            if !known.contains(&path) {
                tracing::warn!(variable = %key, "ignoring an environment variable that names no setting");
                continue;
            }
            let value: figment::value::Value = value
                .parse()
                .unwrap_or_else(|never: std::convert::Infallible| match never {});
            figment = figment.merge(Serialized::global(&path, value));
        }
        for (key, value) in unprefixed {
            figment = figment.merge(Serialized::global(key, value));
        }
        let config: Config = figment
            .extract()
            .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Every key, dotted (`mcp.session_ttl_secs`), as the docs table lists them.
    pub fn keys() -> Vec<String> {
        known_keys()
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let g = &self.graph;
        if !(1..=100).contains(&g.default_limit)
            || !(1..=100).contains(&g.default_window_sigs)
            || g.hub_cap == 0
            || g.hub_max < g.hub_cap
            || g.funder_max_pages == 0
            || g.funder_max_transactions == 0
            || !(g.rate_per_sec.is_finite() && g.rate_per_sec > 0.0)
            || g.rate_burst == 0
            || g.topup_usd.iter().any(|u| u.micros() == 0)
        {
            return Err(ConfigError::Invalid(
                "graph: default_limit and default_window_sigs must be 1..=100, hub_cap positive \
                 and at most hub_max, funder_max_pages, funder_max_transactions, rate_per_sec \
                 and rate_burst positive, every topup_usd above zero"
                    .to_owned(),
            ));
        }
        if let Some(hash) = &self.admin_key_sha256
            && (hash.trim().len() != 64 || !hash.trim().bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(ConfigError::Invalid(
                "admin_key_sha256: must be the 64 hex digits of the admin key's SHA-256".to_owned(),
            ));
        }
        if let Some(url) = &self.public_url {
            let parsed = url::Url::parse(url)
                .map_err(|e| ConfigError::Invalid(format!("public_url {url:?}: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(ConfigError::Invalid(format!(
                    "public_url {url:?}: must be http or https"
                )));
            }
        }
        if self.oauth.metadata_allow_loopback && !is_loopback_url(&self.public_url()) {
            return Err(ConfigError::Invalid(format!(
                "oauth.metadata_allow_loopback is for tests on loopback only; the public URL {} \
                 is not a loopback address",
                self.public_url()
            )));
        }
        if self.oauth.grant_max_age_secs < self.oauth.access_token_ttl_secs {
            return Err(ConfigError::Invalid(
                "oauth.grant_max_age_secs must be at least oauth.access_token_ttl_secs".to_owned(),
            ));
        }
        for origin in &self.allowed_origins {
            url::Url::parse(origin)
                .map_err(|e| ConfigError::Invalid(format!("allowed_origins {origin:?}: {e}")))?;
        }
        let r = &self.rate_limit;
        for (key, rate) in [
            ("rate_limit.anon_rps", r.anon_rps),
            ("rate_limit.account_units_per_sec", r.account_units_per_sec),
            (
                "rate_limit.bearer_ip_units_per_sec",
                r.bearer_ip_units_per_sec,
            ),
            (
                "rate_limit.bearer_failures_per_sec",
                r.bearer_failures_per_sec,
            ),
        ] {
            if !(rate > 0.0 && rate.is_finite()) {
                return Err(ConfigError::Invalid(format!(
                    "{key} must be a positive number"
                )));
            }
        }
        for (key, value) in [
            ("rate_limit.anon_burst", r.anon_burst.unwrap_or(1)),
            ("rate_limit.bearer_failure_burst", r.bearer_failure_burst),
            (
                "rate_limit.siws_challenges_per_minute",
                r.siws_challenges_per_minute,
            ),
            ("rate_limit.siws_challenge_burst", r.siws_challenge_burst),
            ("rate_limit.signups_per_hour", r.signups_per_hour),
            ("rate_limit.signup_burst", r.signup_burst),
            ("quota.labels_per_account", self.quota.labels_per_account),
            ("quota.tokens_per_account", self.quota.tokens_per_account),
            (
                "quota.mcp_sessions_per_account",
                self.quota.mcp_sessions_per_account,
            ),
            ("quota.mcp_sessions_total", self.quota.mcp_sessions_total),
            (
                "quota.mcp_anonymous_sessions_per_ip",
                self.quota.mcp_anonymous_sessions_per_ip,
            ),
            (
                "quota.mcp_anonymous_sessions_total",
                self.quota.mcp_anonymous_sessions_total,
            ),
            (
                "quota.pending_consents_per_account",
                self.quota.pending_consents_per_account,
            ),
        ] {
            if value == 0 {
                return Err(ConfigError::Invalid(format!("{key} must be at least 1")));
            }
        }
        // A call that costs more than a whole burst could never pass.
        let dearest = DEAREST_CALL_UNITS;
        for (key, burst) in [
            ("rate_limit.account_burst_units", r.account_burst_units),
            ("rate_limit.bearer_ip_burst_units", r.bearer_ip_burst_units),
        ] {
            if burst < dearest {
                return Err(ConfigError::Invalid(format!(
                    "{key} must be at least {dearest}, the cost of the dearest call (a PDF \
                     report of 20 wallets)"
                )));
            }
        }
        if !(1..=1000).contains(&self.solana.signatures_page_size) {
            return Err(ConfigError::Invalid(
                "solana.signatures_page_size must be 1..=1000".to_owned(),
            ));
        }
        if self.solana.max_concurrency == 0 || self.solana.batch_size == 0 {
            return Err(ConfigError::Invalid(
                "solana.max_concurrency and solana.batch_size must be positive".to_owned(),
            ));
        }
        let tiers = &self.pricing.tiers;
        let ascending =
            tiers
                .windows(2)
                .all(|w| match (w[0].max_signatures, w[1].max_signatures) {
                    (Some(a), Some(b)) => a < b,
                    (Some(_), None) => true,
                    (None, _) => false,
                });
        if tiers.is_empty()
            || !ascending
            || tiers.last().is_some_and(|t| t.max_signatures.is_some())
        {
            return Err(ConfigError::Invalid(
                "pricing.tiers must be ascending by max_signatures and end with a tier without one"
                    .to_owned(),
            ));
        }
        if self.pricing.preview_signatures == 0
            || self.pricing.preview_signatures > 1000
            || self.pricing.estimate_max_pages == 0
        {
            return Err(ConfigError::Invalid(
                "pricing.preview_signatures must be 1..=1000 and pricing.estimate_max_pages positive"
                    .to_owned(),
            ));
        }
        url::Url::parse(&self.solana.rpc_url)
            .map_err(|e| ConfigError::Invalid(format!("solana.rpc_url: {e}")))?;
        for (key, url) in [
            ("prices.coinbase_url", &self.prices.coinbase_url),
            (
                "prices.coinbase_exchange_url",
                &self.prices.coinbase_exchange_url,
            ),
            ("prices.jupiter_url", &self.prices.jupiter_url),
            ("prices.ecb_url", &self.prices.ecb_url),
        ] {
            url::Url::parse(url).map_err(|e| ConfigError::Invalid(format!("{key}: {e}")))?;
        }
        if self.google.client_id.is_some() != self.google.client_secret.is_some() {
            return Err(ConfigError::Invalid(
                "google.client_id and google.client_secret are set together (or neither, for no Google sign-in)"
                    .to_owned(),
            ));
        }
        url::Url::parse(&self.google.issuer)
            .map_err(|e| ConfigError::Invalid(format!("google.issuer: {e}")))?;
        if self.siws.chain_id.is_empty() || self.siws.chain_id.contains(char::is_whitespace) {
            return Err(ConfigError::Invalid(
                "siws.chain_id must be one word (mainnet, devnet, …)".to_owned(),
            ));
        }
        if self.session.idle_secs == 0 || self.session.absolute_secs == 0 {
            return Err(ConfigError::Invalid(
                "session.idle_secs and session.absolute_secs must be positive".to_owned(),
            ));
        }
        if self.connections.header_timeout_ms == 0
            || self.connections.idle_timeout_ms == 0
            || self.connections.body_timeout_ms == 0
        {
            return Err(ConfigError::Invalid(
                "connections.header_timeout_ms, connections.idle_timeout_ms and \
                 connections.body_timeout_ms must be positive"
                    .to_owned(),
            ));
        }
        // Port 0 (tests) binds two different ports.
        if self.metrics.listen == Some(self.listen) && self.listen.port() != 0 {
            return Err(ConfigError::Invalid(
                "metrics.listen must differ from listen: metrics are served on their own address"
                    .to_owned(),
            ));
        }
        if self.mcp.max_batch == 0
            || self.mcp.max_body_bytes == 0
            || self.mcp.session_ttl_secs == 0
            || self.mcp.anonymous_session_ttl_secs == 0
        {
            return Err(ConfigError::Invalid(
                "mcp.max_batch, mcp.max_body_bytes, mcp.session_ttl_secs and \
                 mcp.anonymous_session_ttl_secs must be positive"
                    .to_owned(),
            ));
        }
        Ok(())
    }

    /// The public URL without a trailing slash.
    pub fn public_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{}", self.listen),
        }
    }
}

/// Whether `url`'s host is `localhost` or a loopback address.
fn is_loopback_url(url: &str) -> bool {
    match url::Url::parse(url)
        .ok()
        .and_then(|u| u.host().map(|h| h.to_owned()))
    {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

fn known_keys() -> Vec<String> {
    fn walk(prefix: &str, value: &serde_json::Value, out: &mut Vec<String>) {
        match value.as_object() {
            Some(map) => {
                for (k, v) in map {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            None => out.push(prefix.to_owned()),
        }
    }
    let mut out = Vec::new();
    if let Ok(defaults) = serde_json::to_value(Config::default()) {
        walk("", &defaults, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_google_client_id_without_its_secret_is_refused() {
        let err = Config::load_from(None, env(&[("LEDGER_GOOGLE__CLIENT_ID", "x.apps")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("google.client_secret"), "{err}");
    }

    #[test]
    fn session_lifetimes_default_to_a_week_idle_and_a_month_absolute() {
        let config = Config::load_from(None, env(&[("LEDGER_SESSION__IDLE_SECS", "60")])).unwrap();
        assert_eq!(config.session.idle_secs, 60);
        assert_eq!(config.session.absolute_secs, 30 * 24 * 3600);
        assert_eq!(SessionConfig::default().idle_secs, 7 * 24 * 3600);
        assert_eq!(config.siws.chain_id, "mainnet");
    }

    #[test]
    fn no_file_and_no_environment_gives_the_defaults() {
        let config = Config::load_from(None, env(&[])).unwrap();
        assert_eq!(config, Config::default());
        assert_eq!(config.listen.to_string(), "127.0.0.1:3000");
        assert_eq!(config.database_url, "sqlite://./data/ledger.db");
        assert_eq!(config.public_url(), "http://127.0.0.1:3000");
    }

    #[test]
    fn environment_overrides_file_overrides_defaults() {
        let dir = std::env::temp_dir().join(format!("ledger-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ledger.toml");
        std::fs::write(
            &file,
            "listen = \"0.0.0.0:8080\"\npublic_url = \"https://file.example/\"\n[mcp]\nmax_batch = 5\n",
        )
        .unwrap();
        let config = Config::load_from(
            Some(&file),
            env(&[
                ("LEDGER_PUBLIC_URL", "https://env.example"),
                ("LEDGER_RATE_LIMIT__ANON_BURST", "12"),
                ("LEDGER_ALLOWED_ORIGINS", "[\"https://a.example\"]"),
                ("DATABASE_URL", "postgres://u:p@db/ledger"),
                ("SOLANA_RPC_URL", "http://127.0.0.1:8899"),
                ("SOLANA_TX_ENCODING", "jsonParsed"),
                ("UNRELATED", "ignored"),
            ]),
        )
        .unwrap();
        assert_eq!(config.listen.to_string(), "0.0.0.0:8080");
        assert_eq!(config.public_url(), "https://env.example");
        assert_eq!(config.mcp.max_batch, 5);
        assert_eq!(config.rate_limit.anon_burst, Some(12));
        assert_eq!(config.rate_limit.anon_burst(), 12);
        assert_eq!(config.allowed_origins, vec!["https://a.example".to_owned()]);
        assert_eq!(config.database_url, "postgres://u:p@db/ledger");
        assert_eq!(config.solana.rpc_url, "http://127.0.0.1:8899");
        assert_eq!(
            config.solana.tx_encoding,
            crate::solana::TxEncoding::JsonParsed
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_anonymous_burst_follows_the_rate_unless_set() {
        // The guide: "3 by default, burst twice that".
        assert_eq!(Config::default().rate_limit.anon_burst(), 6);
        let burst = |file: Option<&str>, pairs: &[(&str, &str)]| {
            let path = file.map(|text| {
                let path = std::env::temp_dir().join(format!(
                    "ledger-burst-{}-{}.toml",
                    std::process::id(),
                    rand::random::<u64>()
                ));
                std::fs::write(&path, text).unwrap();
                path
            });
            let config = Config::load_from(path.as_deref(), env(pairs)).unwrap();
            if let Some(path) = path {
                let _ = std::fs::remove_file(path);
            }
            config.rate_limit.anon_burst()
        };
        assert_eq!(burst(None, &[("LEDGER_RATE_LIMIT__ANON_RPS", "50")]), 100);
        assert_eq!(burst(Some("[rate_limit]\nanon_rps = 10\n"), &[]), 20);
        assert_eq!(
            burst(
                Some("[rate_limit]\nanon_rps = 10\n"),
                &[("LEDGER_RATE_LIMIT__ANON_RPS", "2.5")]
            ),
            5,
            "the environment's rate, the burst following it"
        );
        assert_eq!(
            burst(
                Some("[rate_limit]\nanon_burst = 4\n"),
                &[("LEDGER_RATE_LIMIT__ANON_RPS", "50")]
            ),
            4,
            "a burst set in the file stays"
        );
        assert_eq!(
            burst(
                Some("[rate_limit]\nanon_rps = 10\n"),
                &[("LEDGER_RATE_LIMIT__ANON_BURST", "7")]
            ),
            7
        );
        assert_eq!(
            burst(None, &[("LEDGER_RATE_LIMIT__ANON_RPS", "0.2")]),
            1,
            "at least one"
        );
        assert!(Config::load_from(None, env(&[("LEDGER_RATE_LIMIT__ANON_BURST", "0")])).is_err());
    }

    #[test]
    fn a_bearer_burst_smaller_than_the_dearest_call_is_refused() {
        for key in [
            "LEDGER_RATE_LIMIT__ACCOUNT_BURST_UNITS",
            "LEDGER_RATE_LIMIT__BEARER_IP_BURST_UNITS",
        ] {
            // A PDF report of 20 wallets: 20 × 5 units and 5 for the PDF.
            let err = Config::load_from(None, env(&[(key, "104")]))
                .unwrap_err()
                .to_string();
            assert!(err.contains("at least 105"), "{key}: {err}");
            assert!(
                Config::load_from(None, env(&[(key, "105")])).is_ok(),
                "{key}"
            );
        }
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        for pairs in [
            vec![("LEDGER_LISTEN", "not an address")],
            vec![("LEDGER_PUBLIC_URL", "ftp://x")],
            vec![("LEDGER_RATE_LIMIT__ANON_RPS", "0")],
            vec![("LEDGER_RATE_LIMIT__ACCOUNT_UNITS_PER_SEC", "0")],
            vec![("LEDGER_RATE_LIMIT__SIGNUPS_PER_HOUR", "0")],
            vec![("LEDGER_QUOTA__LABELS_PER_ACCOUNT", "0")],
            vec![("LEDGER_QUOTA__MCP_SESSIONS_TOTAL", "0")],
            vec![("LEDGER_MCP__MAX_BATCH", "0")],
            vec![("LEDGER_CONNECTIONS__HEADER_TIMEOUT_MS", "0")],
            vec![("LEDGER_CONNECTIONS__IDLE_TIMEOUT_MS", "0")],
            vec![("LEDGER_LOG_FORMAT", "xml")],
            vec![
                ("LEDGER_LISTEN", "127.0.0.1:3000"),
                ("LEDGER_METRICS__LISTEN", "127.0.0.1:3000"),
            ],
        ] {
            assert!(Config::load_from(None, env(&pairs)).is_err(), "{pairs:?}");
        }
    }

    #[test]
    fn metrics_are_off_and_logs_text_unless_configured() {
        let config = Config::load_from(None, env(&[])).unwrap();
        assert_eq!(config.metrics.listen, None);
        assert_eq!(config.log_format, crate::telemetry::LogFormat::Text);
        let config = Config::load_from(
            None,
            env(&[
                ("LEDGER_METRICS__LISTEN", "127.0.0.1:9464"),
                ("LEDGER_LOG_FORMAT", "json"),
            ]),
        )
        .unwrap();
        assert_eq!(
            config.metrics.listen,
            Some(SocketAddr::from(([127, 0, 0, 1], 9464)))
        );
        assert_eq!(config.log_format, crate::telemetry::LogFormat::Json);
    }

    #[test]
    fn metadata_allow_loopback_is_refused_unless_the_public_url_is_loopback() {
        let allow = ("LEDGER_OAUTH__METADATA_ALLOW_LOOPBACK", "true");
        for public in [
            "https://ledger.example",
            "http://10.0.0.5:3000",
            "http://[2001:db8::1]",
        ] {
            let err = Config::load_from(None, env(&[allow, ("LEDGER_PUBLIC_URL", public)]))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("oauth.metadata_allow_loopback"),
                "{public}: {err}"
            );
        }
        let wildcard = Config::load_from(None, env(&[allow, ("LEDGER_LISTEN", "0.0.0.0:3000")]));
        assert!(
            wildcard.is_err(),
            "a public URL derived from 0.0.0.0 is not loopback"
        );
        for public in [
            "http://127.0.0.1:4000",
            "https://localhost:9",
            "http://[::1]:80",
        ] {
            let config = Config::load_from(None, env(&[allow, ("LEDGER_PUBLIC_URL", public)]));
            assert!(
                config.is_ok_and(|c| c.oauth.metadata_allow_loopback),
                "{public}"
            );
        }
    }

    #[test]
    fn a_connection_may_not_end_before_its_first_access_token() {
        let err = Config::load_from(None, env(&[("LEDGER_OAUTH__GRANT_MAX_AGE_SECS", "60")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("oauth.grant_max_age_secs"), "{err}");
    }

    #[test]
    fn unknown_environment_variables_are_ignored_but_unknown_file_keys_refused() {
        let config = Config::load_from(
            None,
            env(&[("LEDGER_LISTNE", "1.2.3.4:5"), ("LEDGER_BIN", "/x")]),
        )
        .unwrap();
        assert_eq!(config, Config::default());
        let file = std::env::temp_dir().join(format!("ledger-typo-{}.toml", std::process::id()));
        std::fs::write(&file, "listne = \"1.2.3.4:5\"\n").unwrap();
        assert!(Config::load_from(Some(&file), env(&[])).is_err());
        let _ = std::fs::remove_file(file);
    }

    #[test]
    fn a_missing_file_is_an_error() {
        let missing = std::path::Path::new("/nonexistent/ledger.toml");
        assert!(matches!(
            Config::load_from(Some(missing), env(&[])),
            Err(ConfigError::File { .. })
        ));
    }

    #[test]
    fn docs_table_lists_every_key() {
        let docs = include_str!("../../../docs/configuration.md");
        let all = Config::keys();
        assert!(all.len() > 10);
        for key in all {
            let env = match UNPREFIXED_ENV.iter().find(|(_, k)| *k == key) {
                Some((name, _)) => (*name).to_owned(),
                None => format!("LEDGER_{}", key.to_ascii_uppercase().replace('.', "__")),
            };
            assert!(
                docs.contains(&format!("| `{key}` | `{env}` |")),
                "docs/configuration.md lacks a row for `{key}` (`{env}`)"
            );
        }
    }
}
