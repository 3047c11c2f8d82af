//! Prices: what a mint was worth in USD, now and at any past hour or day
//! (SPEC N1, N2). docs/prices.md is the long form.
//!
//! Sources sit behind one interface, [`PriceSource`], each an HTTP client
//! configured by URL: Coinbase for SOL/USD (spot, candles, 24h stats),
//! Jupiter for token spot prices, and stablecoins at exactly 1 USD. Which
//! one answered is always said (`source`). Past prices are stored as series
//! of bucket closes (hourly and daily), together with the ranges already
//! asked of the source, so a bucket is fetched once; [`series`] fills gaps,
//! inline when small and by a backfill job in the jobs queue when large.
//! [`valuation`] prices ledger legs from the stored series. Each HTTP
//! source sits behind a [`breaker::Breaker`], so one that is down is asked
//! once per cool-down rather than on every read. Nothing here
//! knows of HTTP handlers; [`api`] holds the domain functions the tools and
//! routes call.

pub mod api;
pub mod breaker;
pub mod coinbase;
pub mod ecb;
pub mod json;
pub mod jupiter;
pub mod series;
pub mod valuation;

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use futures_util::future::BoxFuture;
use rust_decimal::Decimal;
use serde::Serialize;

use crate::{clock::UnixMillis, config::PricesConfig, ledger::SOL};

/// Wrapped SOL: priced as SOL.
pub const WSOL: &str = "So11111111111111111111111111111111111111112";

/// Which source answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Coinbase,
    Jupiter,
    Stablecoin,
    // Nothing prices the mint. (Plain comments: a doc comment would turn
    // the variant's schema into a oneOf.)
    None,
    // A source that prices the mint did not answer, or is not being asked
    // while its breaker is open: try again later.
    Unavailable,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Coinbase => "coinbase",
            Source::Jupiter => "jupiter",
            Source::Stablecoin => "stablecoin",
            Source::None => "none",
            Source::Unavailable => "unavailable",
        }
    }
}

/// A series' bucket width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Granularity {
    Hour,
    Day,
}

impl Granularity {
    pub fn secs(self) -> i64 {
        match self {
            Granularity::Hour => 3600,
            Granularity::Day => 86_400,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Granularity::Hour => "1h",
            Granularity::Day => "1d",
        }
    }

    /// `1d` (also the default when absent or empty) or `1h`.
    pub fn parse(text: Option<&str>) -> Option<Self> {
        match text.map(str::trim) {
            None | Some("") | Some("1d") => Some(Granularity::Day),
            Some("1h") => Some(Granularity::Hour),
            _ => None,
        }
    }

    /// The start of the bucket holding `t`.
    pub fn floor(self, t: i64) -> i64 {
        t.div_euclid(self.secs()) * self.secs()
    }
}

/// A current price.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spot {
    pub usd: Decimal,
    pub change_24h_pct: Option<Decimal>,
    pub source: Source,
}

/// One bucket's close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candle {
    /// Bucket start, unix seconds.
    pub start: i64,
    pub close: Decimal,
}

#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    #[error("price source unreachable: {0}")]
    Http(String),
    #[error("price source answered HTTP {status} for {url}")]
    Status { status: u16, url: String },
    #[error("price source answered an unexpected shape: {0}")]
    Shape(String),
    #[error("price source {0} is failing; not asked until its cool-down ends")]
    Open(&'static str),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl PriceError {
    /// Whether this says the source is down (and counts towards opening
    /// its breaker). A 4xx other than 408 and 429 is a request the source
    /// refused, which asking again would not change; it does not count.
    fn is_outage(&self) -> bool {
        match self {
            PriceError::Http(_) | PriceError::Shape(_) => true,
            PriceError::Status { status, .. } => *status >= 500 || *status == 408 || *status == 429,
            PriceError::Open(_) | PriceError::Store(_) => false,
        }
    }

    /// Whether the source's breaker has accounted for this error: an outage
    /// (warned once, when it opens the breaker) or a call refused while it
    /// is open. Callers log the others; these would repeat on every read.
    pub fn breaker_reports(&self) -> bool {
        self.is_outage() || matches!(self, PriceError::Open(_))
    }
}

async fn http_get(
    http: &reqwest::Client,
    url: &str,
    api_key: Option<&str>,
) -> Result<String, PriceError> {
    let mut request = http.get(url).header("accept", "application/json");
    if let Some(key) = api_key {
        request = request.header("x-api-key", key);
    }
    let response = request
        .send()
        .await
        .map_err(|e| PriceError::Http(e.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(PriceError::Status {
            status: status.as_u16(),
            url: url.to_owned(),
        });
    }
    response
        .text()
        .await
        .map_err(|e| PriceError::Http(e.to_string()))
}

/// One price source: current prices of the mints it covers, and, for the
/// mints it keeps history of, bucket closes over a range.
pub trait PriceSource: Send + Sync {
    fn name(&self) -> Source;
    /// Whether it would price `mint` at all (so its failure leaves the mint
    /// `unavailable` rather than unpriced).
    fn covers(&self, mint: &str) -> bool;
    /// Current prices; a mint it cannot price is absent.
    fn spot<'a>(
        &'a self,
        mints: &'a [String],
    ) -> BoxFuture<'a, Result<HashMap<String, Spot>, PriceError>>;
    /// Whether it serves a history of `mint`.
    fn has_history(&self, mint: &str) -> bool;
    /// Closes of the buckets starting in `[from, to)`, oldest first.
    fn candles<'a>(
        &'a self,
        mint: &'a str,
        granularity: Granularity,
        from: i64,
        to: i64,
    ) -> BoxFuture<'a, Result<Vec<Candle>, PriceError>>;
}

impl PriceSource for coinbase::Coinbase {
    fn name(&self) -> Source {
        Source::Coinbase
    }

    fn covers(&self, mint: &str) -> bool {
        mint == SOL
    }

    fn spot<'a>(
        &'a self,
        mints: &'a [String],
    ) -> BoxFuture<'a, Result<HashMap<String, Spot>, PriceError>> {
        Box::pin(async move {
            let mut out = HashMap::new();
            if mints.iter().any(|m| m == SOL) {
                out.insert(SOL.to_owned(), self.sol_spot().await?);
            }
            Ok(out)
        })
    }

    fn has_history(&self, mint: &str) -> bool {
        mint == SOL
    }

    fn candles<'a>(
        &'a self,
        mint: &'a str,
        granularity: Granularity,
        from: i64,
        to: i64,
    ) -> BoxFuture<'a, Result<Vec<Candle>, PriceError>> {
        Box::pin(async move {
            if mint != SOL {
                return Ok(Vec::new());
            }
            self.sol_candles(granularity, from, to).await
        })
    }
}

impl PriceSource for jupiter::Jupiter {
    fn name(&self) -> Source {
        Source::Jupiter
    }

    fn covers(&self, _mint: &str) -> bool {
        // Any SPL token, and SOL as wrapped SOL.
        true
    }

    fn spot<'a>(
        &'a self,
        mints: &'a [String],
    ) -> BoxFuture<'a, Result<HashMap<String, Spot>, PriceError>> {
        Box::pin(async move {
            // SOL reaches Jupiter only when Coinbase did not answer: asked
            // as wrapped SOL, answered as SOL.
            let tokens: Vec<String> = mints
                .iter()
                .map(|m| if m == SOL { WSOL.to_owned() } else { m.clone() })
                .collect();
            if tokens.is_empty() {
                return Ok(HashMap::new());
            }
            let mut found = self.spot(&tokens).await?;
            if mints.iter().any(|m| m == SOL)
                && let Some(spot) = found.remove(WSOL)
            {
                found.insert(SOL.to_owned(), spot);
            }
            Ok(found)
        })
    }

    fn has_history(&self, _mint: &str) -> bool {
        // Price API v3 has no history.
        false
    }

    fn candles<'a>(
        &'a self,
        _mint: &'a str,
        _granularity: Granularity,
        _from: i64,
        _to: i64,
    ) -> BoxFuture<'a, Result<Vec<Candle>, PriceError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// Stablecoins: exactly 1 USD, now and at every past bucket.
pub struct Stablecoins(pub HashSet<String>);

impl PriceSource for Stablecoins {
    fn name(&self) -> Source {
        Source::Stablecoin
    }

    fn covers(&self, mint: &str) -> bool {
        self.0.contains(mint)
    }

    fn spot<'a>(
        &'a self,
        mints: &'a [String],
    ) -> BoxFuture<'a, Result<HashMap<String, Spot>, PriceError>> {
        Box::pin(async move {
            Ok(mints
                .iter()
                .filter(|m| self.0.contains(*m))
                .map(|m| {
                    (
                        m.clone(),
                        Spot {
                            usd: Decimal::ONE,
                            change_24h_pct: Some(Decimal::ZERO),
                            source: Source::Stablecoin,
                        },
                    )
                })
                .collect())
        })
    }

    fn has_history(&self, mint: &str) -> bool {
        self.0.contains(mint)
    }

    fn candles<'a>(
        &'a self,
        mint: &'a str,
        granularity: Granularity,
        from: i64,
        to: i64,
    ) -> BoxFuture<'a, Result<Vec<Candle>, PriceError>> {
        Box::pin(async move {
            if !self.0.contains(mint) {
                return Ok(Vec::new());
            }
            let step = granularity.secs();
            let first = granularity.floor(from + step - 1);
            Ok((0..)
                .map(|i| first + i * step)
                .take_while(|s| *s < to)
                .map(|start| Candle {
                    start,
                    close: Decimal::ONE,
                })
                .collect())
        })
    }
}

/// Every price source, the spot cache and the series settings. Cheap to
/// clone; one per process.
#[derive(Clone)]
pub struct Prices(Arc<Inner>);

struct Inner {
    /// In order of preference: stablecoins, Coinbase, Jupiter.
    sources: Vec<Arc<Guarded>>,
    stablecoins: HashSet<String>,
    spot_ttl_ms: i64,
    backfill_threshold: u64,
    cache: Mutex<HashMap<String, (Spot, UnixMillis)>>,
    /// The ECB's reference rates (`prices.ecb_url`); none in tests that
    /// build sources by hand.
    ecb: Option<ecb::Ecb>,
}

impl Prices {
    pub fn new(config: &PricesConfig) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.timeout_secs.max(1)))
            .user_agent(concat!("ledger/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let trim = |u: &str| u.trim_end_matches('/').to_owned();
        let stablecoins: HashSet<String> = config.stablecoins.iter().cloned().collect();
        let ecb = ecb::Ecb::new(
            http.clone(),
            config.ecb_url.clone(),
            breaker::Breaker::new(
                config.breaker_failures,
                i64::try_from(config.breaker_cooldown_secs.saturating_mul(1000))
                    .unwrap_or(i64::MAX),
            ),
        );
        let sources: Vec<Arc<dyn PriceSource>> = vec![
            Arc::new(Stablecoins(stablecoins.clone())),
            Arc::new(coinbase::Coinbase {
                http: http.clone(),
                retail: trim(&config.coinbase_url),
                exchange: trim(&config.coinbase_exchange_url),
            }),
            Arc::new(jupiter::Jupiter {
                http,
                base: trim(&config.jupiter_url),
                api_key: config.jupiter_api_key.clone().filter(|k| !k.is_empty()),
            }),
        ];
        let mut prices = Self::with_sources(
            sources,
            stablecoins,
            i64::try_from(config.spot_ttl_secs.saturating_mul(1000)).unwrap_or(i64::MAX),
            config.backfill_threshold_buckets,
            BreakerSettings {
                failures: config.breaker_failures,
                cool_down_ms: i64::try_from(config.breaker_cooldown_secs.saturating_mul(1000))
                    .unwrap_or(i64::MAX),
            },
        );
        if let Some(inner) = Arc::get_mut(&mut prices.0) {
            inner.ecb = Some(ecb);
        }
        Ok(prices)
    }

    /// Prices over any sources (tests and benchmarks).
    pub fn with_sources(
        sources: Vec<Arc<dyn PriceSource>>,
        stablecoins: HashSet<String>,
        spot_ttl_ms: i64,
        backfill_threshold: u64,
        breakers: BreakerSettings,
    ) -> Self {
        Self(Arc::new(Inner {
            sources: sources
                .into_iter()
                .map(|source| {
                    Arc::new(Guarded {
                        source,
                        breaker: breaker::Breaker::new(breakers.failures, breakers.cool_down_ms),
                    })
                })
                .collect(),
            stablecoins,
            spot_ttl_ms,
            backfill_threshold,
            cache: Mutex::new(HashMap::new()),
            ecb: None,
        }))
    }

    /// The ECB's reference-rate document, when configured.
    pub fn ecb(&self) -> Option<&ecb::Ecb> {
        self.0.ecb.as_ref()
    }

    /// How a mint is priced: wrapped SOL is SOL.
    pub fn canonical(mint: &str) -> &str {
        if mint == WSOL { SOL } else { mint }
    }

    pub fn is_stablecoin(&self, mint: &str) -> bool {
        self.0.stablecoins.contains(mint)
    }

    pub fn backfill_threshold(&self) -> u64 {
        self.0.backfill_threshold
    }

    /// The source that keeps a history of `mint`, if any.
    pub fn history_source(&self, mint: &str) -> Option<HistorySource> {
        let mint = Self::canonical(mint);
        self.0
            .sources
            .iter()
            .find(|s| s.source.has_history(mint))
            .cloned()
            .map(HistorySource)
    }

    /// Current prices of `mints` (canonical names), from the cache when
    /// fresh. A source that fails is logged and its mints left unpriced.
    pub async fn spot(&self, mints: &[String], now: UnixMillis) -> HashMap<String, Spot> {
        self.spot_checked(mints, now).await.found
    }

    /// [`Prices::spot`], also saying which unpriced mints a source would
    /// have priced had it answered.
    pub async fn spot_checked(&self, mints: &[String], now: UnixMillis) -> SpotAnswer {
        let mut out = HashMap::new();
        let mut wanted: Vec<String> = Vec::new();
        if let Ok(cache) = self.0.cache.lock() {
            for mint in mints {
                match cache.get(mint) {
                    Some((spot, at)) if now - at < self.0.spot_ttl_ms => {
                        out.insert(mint.clone(), spot.clone());
                    }
                    _ => wanted.push(mint.clone()),
                }
            }
        } else {
            wanted = mints.to_vec();
        }
        wanted.sort();
        wanted.dedup();
        let mut unavailable = HashSet::new();
        for guarded in &self.0.sources {
            if wanted.is_empty() {
                break;
            }
            let source = &guarded.source;
            match guarded.call(now, source.spot(&wanted)).await {
                Ok(found) => {
                    wanted.retain(|m| !found.contains_key(m));
                    if let Ok(mut cache) = self.0.cache.lock() {
                        for (mint, spot) in &found {
                            cache.insert(mint.clone(), (spot.clone(), now));
                        }
                    }
                    out.extend(found);
                }
                Err(err) => {
                    if !err.breaker_reports() {
                        tracing::warn!(source = source.name().as_str(), error = %err, "spot price failed");
                    }
                    unavailable.extend(wanted.iter().filter(|m| source.covers(m)).cloned());
                }
            }
        }
        unavailable.retain(|m| !out.contains_key(m));
        SpotAnswer {
            found: out,
            unavailable,
        }
    }
}

/// What [`Prices::spot_checked`] found.
#[derive(Debug, Default)]
pub struct SpotAnswer {
    pub found: HashMap<String, Spot>,
    /// Unpriced mints a failed source covers: `unavailable`, not `none`.
    pub unavailable: HashSet<String>,
}

/// When a source's breaker opens and for how long (`prices.breaker_*`).
#[derive(Clone, Copy, Debug)]
pub struct BreakerSettings {
    /// Consecutive failures that open it.
    pub failures: u32,
    pub cool_down_ms: i64,
}

/// A source and its breaker: every call to the source goes through
/// [`Guarded::call`].
struct Guarded {
    source: Arc<dyn PriceSource>,
    breaker: breaker::Breaker,
}

impl Guarded {
    /// Run `call` unless the breaker is open, and tell the breaker how it
    /// went.
    async fn call<T>(
        &self,
        now: UnixMillis,
        call: impl std::future::Future<Output = Result<T, PriceError>>,
    ) -> Result<T, PriceError> {
        if !self.breaker.admit(now) {
            return Err(PriceError::Open(self.source.name().as_str()));
        }
        let result = call.await;
        match &result {
            Ok(_) => self.breaker.succeeded(),
            // One warning per cool-down: when this failure opens the
            // breaker. Failures before that, and calls refused while it is
            // open, would otherwise log on every read during an outage.
            Err(err) if err.is_outage() => {
                if self.breaker.failed(now) {
                    tracing::warn!(
                        source = self.source.name().as_str(),
                        error = %err,
                        cool_down_secs = self.breaker.cool_down_ms() / 1000,
                        "price source failing: not asked until its cool-down ends"
                    );
                } else {
                    tracing::debug!(source = self.source.name().as_str(), error = %err, "price source call failed");
                }
            }
            Err(_) => {}
        }
        result
    }
}

/// The source of a mint's history, behind its breaker. Cheap to clone.
#[derive(Clone)]
pub struct HistorySource(Arc<Guarded>);

impl HistorySource {
    pub fn name(&self) -> Source {
        self.0.source.name()
    }

    /// Whether its breaker is open at `now` (calls would fail at once).
    pub fn is_open(&self, now: UnixMillis) -> bool {
        self.0.breaker.is_open(now)
    }

    /// Which rest of its breaker `now` falls in, if it is open
    /// ([`breaker::Breaker::rest`]).
    pub fn rest(&self, now: UnixMillis) -> Option<u64> {
        self.0.breaker.rest(now)
    }

    /// Closes of the buckets starting in `[from, to)`, oldest first.
    pub async fn candles(
        &self,
        mint: &str,
        granularity: Granularity,
        (from, to): (i64, i64),
        now: UnixMillis,
    ) -> Result<Vec<Candle>, PriceError> {
        self.0
            .call(now, self.0.source.candles(mint, granularity, from, to))
            .await
    }
}
