//! Talking to Solana: the JSON-RPC client the scanner (and later payment
//! settlement) uses. Decoding what comes back into legs is `ledger`'s job.

pub mod address;
pub mod rpc;

pub use address::WalletAddress;

/// CAIP-2 id of Solana mainnet (genesis hash prefix).
pub const MAINNET: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d";
/// USDC on mainnet.
pub const USDC_MAINNET: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
pub use rpc::{RpcClient, RpcCost, RpcError, SignatureInfo, TxEncoding};
