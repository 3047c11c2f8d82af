//! Solana values that need no network: the account address newtype and the
//! mainnet constants. The RPC client lives in the server crate.

pub mod address;

pub use address::WalletAddress;

/// CAIP-2 id of Solana mainnet (genesis hash prefix).
pub const MAINNET: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d";
/// USDC on mainnet.
pub const USDC_MAINNET: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
