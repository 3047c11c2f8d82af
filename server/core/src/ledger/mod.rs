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
pub mod stored;
pub mod tx;

/// The version of the readings [`decode`] gives. Bump it in the same
/// commit as any change that makes the decoder read a transaction
/// differently (another operation type, amount, counterparty, position,
/// venue or router for some transaction; a protocol decoder added or
/// changed): a wallet whose stored legs carry an older version has them
/// derived again, from its stored views ([`stored`]), on its next scan
/// (docs/ledger.md, "Decoder versions"). A change that leaves every
/// reading as it was (speed, refactoring) keeps it.
///
/// 1: the readings of issue 22 (positions, lending, pools, NFT fees,
/// venues and routers), the first version stored with legs. Legs written
/// before versions existed read as version 0.
/// 2: a stake account is the wallet's only while it holds the withdraw
/// authority: one it received is read from the receiving transaction on
/// (the scanner notes receipts from stored views too,
/// [`protocols::stake::received_stake_accounts`]).
pub const DECODER_VERSION: i32 = 2;

pub use decode::{
    balance_changes, balance_changes_with_positions, legs, legs_with_stake_accounts, sum_by_asset,
    sum_with_positions,
};
pub use model::{Counterparty, CounterpartyKind, Direction, Leg, OperationType, SOL};
pub use tx::{TxError, TxView};
