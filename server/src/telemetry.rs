//! What an operator sees: logs and metrics ([`metrics`]).
//!
//! Logging: `tracing` to stderr, filtered by `RUST_LOG` (default
//! `info,sqlx=warn`), as text or, with `log_format = "json"`, one JSON
//! object per line for a log pipeline. Colours only on a terminal: a log
//! written to a file or a pipe (systemd, docker, `2>server.log`) gets plain
//! text, and `NO_COLOR` (https://no-color.org) turns them off everywhere.
//! The format is a setting, so the configuration is read first; what is
//! logged while reading it (an unknown `LEDGER_…` variable) goes through
//! [`while_configuring`], which already follows `LEDGER_LOG_FORMAT`.

pub mod metrics;

pub use metrics::{CacheStats, Metrics};

use std::io::IsTerminal;

use serde::{Deserialize, Serialize};
use tracing_subscriber::{EnvFilter, fmt};

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// Human-readable lines (coloured on a terminal).
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`,
    /// `message` and the event's fields.
    Json,
}

fn filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"))
}

/// Install the process's logger (and route the `log` crate's records to it).
pub fn init(format: LogFormat) {
    use tracing_subscriber::util::SubscriberInitExt;
    let _ = subscriber(format).try_init();
}

fn subscriber(format: LogFormat) -> Box<dyn tracing::Subscriber + Send + Sync> {
    let builder = fmt().with_env_filter(filter()).with_writer(std::io::stderr);
    match format {
        LogFormat::Text => Box::new(
            builder
                .with_ansi(colour(
                    std::io::stderr().is_terminal(),
                    std::env::var_os("NO_COLOR").as_deref(),
                ))
                .finish(),
        ),
        LogFormat::Json => Box::new(
            builder
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .finish(),
        ),
    }
}

/// Run `read` (reading the configuration) with a logger in the format
/// `LEDGER_LOG_FORMAT` names (text when unset or unreadable): the file may
/// set another, but nothing can be read from it before it is read.
pub fn while_configuring<T>(read: impl FnOnce() -> T) -> T {
    let format = std::env::var("LEDGER_LOG_FORMAT")
        .ok()
        .and_then(|v| serde_json::from_value(serde_json::Value::String(v)).ok())
        .unwrap_or_default();
    tracing::subscriber::with_default(subscriber(format), read)
}

/// Whether to colour: on a terminal, unless `NO_COLOR` is set to anything
/// but the empty string (as the convention reads it).
fn colour(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Log lines written while `run` runs, every level included: the tests
/// that hold what is logged (the error chain, bad arguments' level) read
/// it through this one capture.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn logs_of<T>(run: impl FnOnce() -> T) -> (T, String) {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .finish();
    let out = tracing::subscriber::with_default(subscriber, run);
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    (out, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("".as_ref())));
        assert!(!colour(true, Some("1".as_ref())));
        assert!(!colour(false, None));
    }
}
