//! What the benchmarks share: the recorded fixtures' location, a scanned
//! wallet seeded straight into the store, reading a process's peak RSS, and
//! the one-line JSON report a measuring child prints.
//! (A directory module, so Cargo does not take it for a bench target.)

use serde_json::Value;

#[allow(dead_code)] // only the benches that seed a scanned wallet
pub mod seed;

#[path = "../../tests/support/recorded.rs"]
#[allow(dead_code)] // basis and value_history make their own data
pub mod recorded;

/// This process's peak resident set (`VmHWM` in `/proc/self/status`), KiB.
#[allow(dead_code)] // decode measures time only
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
#[allow(dead_code)] // decode and value_history measure in-process
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
