//! Configuration: compiled-in defaults, then an optional TOML file
//! (`--config PATH`), then environment variables, each layer overriding the
//! one before. The service runs with no file and no environment at all.
//!
//! Environment names: `DATABASE_URL` is the conventional unprefixed name;
//! every other key is `LEDGER_` plus the key in upper case, with `__` between
//! a table and its key (`mcp.session_ttl_secs` is `LEDGER_MCP__SESSION_TTL_SECS`).
//! docs/configuration.md is the table of every key; a test keeps it in step.

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
    /// Seconds in-flight requests get to finish after SIGTERM or Ctrl-C.
    pub shutdown_grace_secs: u64,
    pub mcp: McpConfig,
    pub rate_limit: RateLimitConfig,
    pub worker: WorkerConfig,
    pub database: DatabaseConfig,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// An idle MCP session is forgotten after this many seconds.
    pub session_ttl_secs: u64,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// Most messages in one JSON-RPC batch.
    pub max_batch: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitConfig {
    /// Anonymous POSTs per second per client IP on `/mcp`.
    pub anon_rps: f64,
    /// Burst allowance for anonymous callers (requests).
    pub anon_burst: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkerConfig {
    /// Run the in-process workers under `serve`.
    pub in_process: bool,
    /// Seconds between maintenance passes.
    pub maintenance_interval_secs: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    /// Connection pool size.
    pub max_connections: u32,
    /// SQLite busy timeout, milliseconds.
    pub busy_timeout_ms: u64,
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
            shutdown_grace_secs: 20,
            mcp: McpConfig::default(),
            rate_limit: RateLimitConfig::default(),
            worker: WorkerConfig::default(),
            database: DatabaseConfig::default(),
        }
    }
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            session_ttl_secs: 24 * 3600,
            max_body_bytes: 64 * 1024,
            max_batch: 20,
        }
    }
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        Self {
            anon_rps: 3.0,
            anon_burst: 6,
        }
    }
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            in_process: true,
            maintenance_interval_secs: 60,
        }
    }
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            max_connections: 16,
            busy_timeout_ms: 5_000,
        }
    }
}

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
        let database_url = env
            .iter()
            .find(|(k, _)| k == "DATABASE_URL")
            .map(|(_, v)| v.clone());
        // figment's `Env` provider reads the real process environment; we
        // take the variables as given so tests stay hermetic, and parse each
        // value the way `Env` would (numbers, booleans, arrays, else string).
        for (key, value) in env {
            let Some(rest) = key.strip_prefix("LEDGER_").filter(|r| !r.is_empty()) else {
                continue;
            };
            let path = rest.to_ascii_lowercase().replace("__", ".");
            let value: figment::value::Value = value
                .parse()
                .unwrap_or_else(|never: std::convert::Infallible| match never {});
            figment = figment.merge(Serialized::global(&path, value));
        }
        if let Some(url) = database_url {
            figment = figment.merge(Serialized::global("database_url", url));
        }
        let config: Config = figment
            .extract()
            .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if let Some(url) = &self.public_url {
            let parsed = url::Url::parse(url)
                .map_err(|e| ConfigError::Invalid(format!("public_url {url:?}: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(ConfigError::Invalid(format!(
                    "public_url {url:?}: must be http or https"
                )));
            }
        }
        for origin in &self.allowed_origins {
            url::Url::parse(origin)
                .map_err(|e| ConfigError::Invalid(format!("allowed_origins {origin:?}: {e}")))?;
        }
        if !(self.rate_limit.anon_rps > 0.0 && self.rate_limit.anon_rps.is_finite()) {
            return Err(ConfigError::Invalid(
                "rate_limit.anon_rps must be a positive number".to_owned(),
            ));
        }
        if self.rate_limit.anon_burst == 0 {
            return Err(ConfigError::Invalid(
                "rate_limit.anon_burst must be at least 1".to_owned(),
            ));
        }
        if self.mcp.max_batch == 0 || self.mcp.max_body_bytes == 0 {
            return Err(ConfigError::Invalid(
                "mcp.max_batch and mcp.max_body_bytes must be positive".to_owned(),
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
