//! Talking to Solana: the JSON-RPC client the scanner (and later payment
//! settlement) uses. Decoding what comes back into legs is `ledger`'s job.

pub mod address;
pub mod rpc;

pub use address::WalletAddress;
pub use rpc::{RpcClient, RpcCost, RpcError, SignatureInfo, TxEncoding};
