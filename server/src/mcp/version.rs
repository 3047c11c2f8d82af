//! The protocol versions we speak and what each one allows.
//!
//! Versions up to 2025-11-25 negotiate once, with `initialize`, and may keep
//! an `Mcp-Session-Id`. 2026-07-28 is stateless: every request names its
//! version and the client's capabilities in `params._meta`, `server/discover`
//! replaces the handshake, and sessions are gone.

/// Every version we accept, oldest first.
pub const SUPPORTED: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    STATELESS,
];

/// The stateless revision.
pub const STATELESS: &str = "2026-07-28";

/// The newest version (the server card's `protocolVersion`).
pub const NEWEST: &str = STATELESS;

/// The newest version that negotiates with `initialize` and keeps a
/// session: the answer to an `initialize` naming a version we lack. Not
/// 2026-07-28, which has no `initialize` and no sessions, so a client that
/// followed it would drop the session it just opened.
pub const NEWEST_INITIALIZE: &str = "2025-11-25";

/// What a request that names no version speaks (the transport spec's rule).
pub const ASSUMED_WITHOUT_HEADER: &str = "2025-03-26";

/// The versions a stateless (2026-07-28) request may name.
pub const STATELESS_SUPPORTED: [&str; 1] = [STATELESS];

pub fn is_supported(version: &str) -> bool {
    SUPPORTED.contains(&version)
}

/// `initialize`: echo the client's version when we speak it, else offer
/// the newest initialize-era one.
pub fn negotiate(requested: &str) -> &'static str {
    SUPPORTED
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(NEWEST_INITIALIZE)
}

/// JSON-RPC batches exist in 2025-03-26 (and are plain JSON-RPC 2.0 for
/// 2024-11-05 clients); 2025-06-18 removed them.
pub fn allows_batches(version: &str) -> bool {
    matches!(version, "2024-11-05" | "2025-03-26")
}

/// `structuredContent` and `outputSchema` arrived in 2025-06-18; older
/// clients also get the JSON as a second text block.
pub fn has_structured_content(version: &str) -> bool {
    !matches!(version, "2024-11-05" | "2025-03-26")
}

/// Whether arguments the input schema refuses are answered as the tool's
/// `invalid_params` result (`isError: true`) rather than a JSON-RPC -32602.
///
/// The tools page of 2024-11-05, 2025-03-26 and 2025-06-18 lists "Invalid
/// arguments" among the protocol errors (standard JSON-RPC errors), next
/// to "Unknown tools"; 2025-11-25 (SEP-1303) and 2026-07-28 move "Input
/// validation errors" to the tool execution errors, reported in the result
/// with `isError: true` so a model can correct itself, and keep only
/// unknown tools and requests that are not a `CallToolRequest` as protocol
/// errors. Each revision is answered as its own text says (docs/mcp.md).
pub fn validation_errors_are_results(version: &str) -> bool {
    !matches!(version, "2024-11-05" | "2025-03-26" | "2025-06-18")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_supported_versions() {
        for v in SUPPORTED {
            assert_eq!(negotiate(v), v);
        }
    }

    #[test]
    fn unknown_versions_get_the_newest_with_sessions() {
        assert_eq!(negotiate("2099-01-01"), NEWEST_INITIALIZE);
        assert_eq!(negotiate(""), NEWEST_INITIALIZE);
        assert!(is_supported(NEWEST_INITIALIZE) && NEWEST_INITIALIZE != STATELESS);
    }

    #[test]
    fn validation_errors_are_results_from_2025_11_25() {
        let results: Vec<&str> = SUPPORTED
            .into_iter()
            .filter(|v| validation_errors_are_results(v))
            .collect();
        assert_eq!(results, ["2025-11-25", STATELESS]);
    }

    #[test]
    fn batches_only_before_2025_06_18() {
        assert!(allows_batches("2025-03-26"));
        assert!(allows_batches("2024-11-05"));
        assert!(!allows_batches("2025-06-18"));
        assert!(!allows_batches("2025-11-25"));
        assert!(!allows_batches(STATELESS));
    }
}
