//! Where the recorded Solana mainnet responses live: in the repository,
//! under `server/tests/fixtures/solana/staketaxcsv` (their README says what
//! they are, where they come from and their licence), so a clone anywhere
//! runs the tests that read them.

use std::path::PathBuf;

/// `server/tests/fixtures/solana/staketaxcsv`.
pub fn staketaxcsv() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/solana/staketaxcsv")
}
