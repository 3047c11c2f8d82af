//! What the benchmarks that measure memory share: reading a process's peak
//! RSS, and reading the one-line JSON report a measuring child prints.
//! (A directory module, so Cargo does not take it for a bench target.)

use serde_json::Value;

/// This process's peak resident set (`VmHWM` in `/proc/self/status`), KiB.
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A child's report: it must have succeeded, and its stdout holds one
/// line of JSON (other lines, from the code it ran, are skipped).
#[allow(dead_code)] // value_history measures in-process
pub fn child_report(output: &std::process::Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(
        output
            .stdout
            .split(|b| *b == b'\n')
            .find(|l| l.starts_with(b"{"))
            .expect("a JSON report line"),
    )
    .expect("the report is JSON")
}
