//! Logging: `tracing` to stderr, filtered by `RUST_LOG`
//! (default `info,sqlx=warn`). Colours only on a terminal: a log written
//! to a file or a pipe (systemd, docker, `2>server.log`) gets plain text,
//! and `NO_COLOR` (https://no-color.org) turns them off everywhere.

use std::io::IsTerminal;

use tracing_subscriber::{EnvFilter, fmt};

pub fn init() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let _ = fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .try_init();
}

/// Whether to colour: on a terminal, unless `NO_COLOR` is set to anything
/// but the empty string (as the convention reads it).
fn colour(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
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
