//! Ledger's pure domain: what a wallet's history means, with no database,
//! HTTP, Leptos or async runtime. The crate's manifest is the guarantee:
//! it depends on value and format crates only, so nothing here can reach a
//! socket or a table, and every rule is tested as plain functions.
//!
//! - [`values`]: money ([`values::Usd`]), time bounds and their parsing, kept
//!   (compressed) JSON answers.
//! - [`ids`]: prefixed random ids (`job_…`, `q_…`).
//! - [`clock`]: time passed in, never read deep inside ([`clock::Clock`]).
//! - [`solana`]: the wallet address newtype ([`solana::WalletAddress`]) and
//!   mainnet constants.
//! - [`ledger`]: a transaction becomes legs that conserve balances; the
//!   model, the decoder and the unforgeable page cursor.
//! - [`basis`]: the cost-basis replay (FIFO, LIFO, HIFO, average) and the
//!   offline CSV of `ledger basis`.
//! - [`params`]: tool and route parameters parsed at the edge into these
//!   types, with their JSON schemas.
//!
//! The store crate (`ledger-store`) sits on this one, the server on both.

pub mod basis;
pub mod clock;
pub mod ids;
pub mod ledger;
pub mod params;
pub mod solana;
pub mod values;
