//! Talking to Solana: the JSON-RPC client the scanner (and payment
//! settlement) uses. Decoding what comes back into legs is the core
//! crate's `ledger`; the address newtype and mainnet constants are the
//! core crate's `solana`, re-exported here.

pub mod rpc;

pub use ledger_core::solana::{MAINNET, USDC_MAINNET, WalletAddress, address};
pub use rpc::{
    EpochInfo, EpochSchedule, InflationReward, RpcClient, RpcCost, RpcError, SignatureInfo,
    StakeAccount, StakeAuthority, TxEncoding,
};
