//! Where the recorded Solana mainnet responses live: `shared/` beside the
//! repository, or `LEDGER_SHARED_DIR` when the checkout sits elsewhere
//! (`.ci/test` sets it from the clone's origin).

use std::path::PathBuf;

/// `shared/fixtures/solana/staketaxcsv`.
pub fn staketaxcsv() -> PathBuf {
    std::env::var_os("LEDGER_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
        .join("fixtures/solana/staketaxcsv")
}
