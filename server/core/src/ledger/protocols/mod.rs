//! Protocol decoders: one small pure module per on-chain program, keyed by
//! its program id, each explaining part of a wallet's balance change that
//! the generic reading in [`super::decode`] would misname. A program no
//! module knows falls back to that generic reading.

pub mod stake;
