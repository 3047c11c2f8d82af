//! The ledger: every transaction of a wallet's history becomes legs, one
//! signed movement of one asset each, and per transaction and per asset the
//! legs sum exactly to the wallet's balance change (SPEC S3, S4).
//!
//! [`tx`] reads a `getTransaction` result in either encoding into one
//! shape (Stake instructions parsed by [`stake_ix`], the leaf that both it
//! and the stake decoder in [`protocols`] stand on, so neither imports the
//! other); [`decode`] turns it into legs for a wallet; [`model`] holds the
//! types; [`cursor`]s page a stored ledger and cannot be forged. Nothing
//! here knows of HTTP, the RPC client or the database; decoding is pure
//! functions over JSON values, tested against recorded mainnet
//! transactions. Reading a stored ledger back a page at a time is the
//! server's paid-read use case.

pub mod cursor;
pub mod decode;
pub mod interest;
pub mod model;
pub mod protocols;
pub mod spam;
pub mod stake_accounts;
pub mod stake_ix;
pub mod tx;

pub use decode::{
    balance_changes, balance_changes_with_positions, legs, legs_with_stake_accounts, sum_by_asset,
    sum_with_positions,
};
pub use model::{Counterparty, CounterpartyKind, Direction, Leg, OperationType, SOL};
pub use tx::{TxError, TxView};
