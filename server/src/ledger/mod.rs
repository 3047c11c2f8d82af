//! The ledger as the server uses it: the pure model, decoder and cursors
//! live in the core crate ([`ledger_core::ledger`]) and are re-exported here
//! so every module names them one way. The paid read of a stored ledger a
//! page at a time is `reads::ledger_page`.

pub use ledger_core::ledger::*;
