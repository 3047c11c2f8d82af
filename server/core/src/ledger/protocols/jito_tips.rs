//! Jito tips: SOL a transaction pays one of Jito's eight tip accounts so a
//! block engine includes its bundle. The tip is a cost of the transaction
//! like the network fee, not a transfer to a counterparty, so it is a leg
//! of its own (`tip`) and the rest of the wallet's SOL change (a swap's
//! sent side, say) stays what it was: gross and net both add up.
//!
//! The accounts are the answer of the block engine's `getTipAccounts`
//! method, constant since launch, as documented at
//! https://www.quicknode.com/docs/solana/getTipAccounts (example response)
//! and https://www.alchemy.com/docs/chains/solana/solana-jito-bundles-and-transactions
//! ("The tip accounts have remained constant").

use crate::ledger::tx::{Op, TxView};

pub const TIP_ACCOUNTS: [&str; 8] = [
    "3AVi9Tg9Uo68tJfuvoKvqKNWKkC5wPdSSdeBnizKZ6jT",
    "HFqU5x63VTqvQss8hp11i4wVV8bD44PvwucfZ2bU7gRe",
    "Cw8CFyM9FkoMi7K7Crf6HNQqf4uEMzpKw6QNghXLvLkY",
    "DfXygSm4jCyNCybVYYK6DwvWqjKee8pbDmJGcLWNDXjh",
    "96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5",
    "DttWaMuVvTiduZRnguLF7jNxTgiMBZ1hyAumKUiL2KRL",
    "ADuUkR4vqLUMWXxW9gh6D6L8pMSawimctcNZ5pGwDcEt",
    "ADaUMid9yfUytqMBgopwjb2DTLSokTSzL1zt6iGPaS49",
];

/// The tips `wallet` paid in `tx`: (tip account, lamports), in
/// instruction order. A failed transaction pays none (its transfers did
/// not happen).
pub fn tips(tx: &TxView, wallet: &str) -> Vec<(String, u64)> {
    if tx.failed {
        return Vec::new();
    }
    tx.ops
        .iter()
        .filter_map(|op| match op {
            Op::SolTransfer { from, to, lamports }
                if from == wallet && TIP_ACCOUNTS.contains(&to.as_str()) && *lamports > 0 =>
            {
                Some((to.clone(), *lamports))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tip_accounts_are_base58_of_32_bytes() {
        for account in TIP_ACCOUNTS {
            assert_eq!(
                bs58::decode(account).into_vec().unwrap_or_default().len(),
                32
            );
        }
    }
}
