//! The sample report: one made-up wallet whose ledger ships in the
//! repository (`wallet.json`: SOL and USDC transfers and swaps over 2025,
//! keys and signatures that are SHA-256 digests of names, so no real
//! person's wallet), seeded into the database when `ledger serve` starts
//! with `sample.enabled` (the embedded default) and shown read-only at
//! `/sample`, linked from the home page so a first visitor sees what a
//! report looks like before signing in.
//!
//! Seeding writes the legs and a completed scan, nothing else: no RPC,
//! no payment, no account, and never a price. Prices are shared by every
//! wallet, so a made-up series would value real wallets wrongly; the
//! sample is valued like any wallet, from the configured price sources
//! (USDC as a stablecoin needs none). The page reads it as a share link
//! would (`Principal::Link` of this one wallet), through the same report
//! code, so it can show nothing a share page could not.

use serde::Deserialize;

use crate::{
    error::AppError,
    ledger::Leg,
    solana::WalletAddress,
    store::{NewScanJob, QuoteRecord, Store, TransactionLegs},
};

/// The data, embedded at build time.
const DATA: &str = include_str!("wallet.json");

/// The quote and job the seeded scan is recorded under (fixed ids, so a
/// restart finds them and seeds nothing twice).
const QUOTE_ID: &str = "q_sample";
const JOB_ID: &str = "job_sample";

#[derive(Deserialize)]
struct SampleFile {
    address: String,
    transactions: Vec<SampleTx>,
}

#[derive(Deserialize)]
struct SampleTx {
    signature: String,
    slot: u64,
    block_time: i64,
    legs: Vec<Leg>,
}

fn data() -> Result<SampleFile, AppError> {
    serde_json::from_str(DATA).map_err(|e| AppError::internal("the sample wallet's data", e))
}

/// The sample wallet's address.
pub fn address() -> Result<WalletAddress, AppError> {
    let file = data()?;
    WalletAddress::parse(&file.address)
        .map_err(|e| AppError::internal("the sample wallet's address", e))
}

/// Seed the sample wallet unless it is there: its legs, then its completed
/// scan (last, so the wallet reads as scanned only once every leg is in).
/// True when it seeded.
pub async fn seed(store: &Store, now_ms: i64) -> Result<bool, AppError> {
    let file = data()?;
    if store.wallet_scanned(&file.address).await? {
        return Ok(false);
    }
    if store.quote(QUOTE_ID).await?.is_none() {
        store
            .insert_quote(&QuoteRecord {
                id: QUOTE_ID.to_owned(),
                address: file.address.clone(),
                scope: "full".to_owned(),
                tier: "sample".to_owned(),
                price_micros: 0,
                signatures: None,
                created_at: now_ms,
                expires_at: now_ms,
            })
            .await?;
    }
    let batch: Vec<TransactionLegs<'_>> = file
        .transactions
        .iter()
        .map(|tx| TransactionLegs {
            signature: &tx.signature,
            slot: tx.slot,
            block_time: Some(tx.block_time),
            failed: false,
            legs: &tx.legs,
        })
        .collect();
    store.write_legs(&file.address, &batch).await?;
    store
        .insert_completed_scan(&NewScanJob {
            id: JOB_ID,
            address: &file.address,
            scope: "full",
            quote_id: QUOTE_ID,
            stop_at: None,
            account_id: None,
            now: now_ms,
        })
        .await?;
    tracing::info!(wallet = %file.address, transactions = file.transactions.len(), "seeded the sample wallet");
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_reads_and_every_balance_stays_at_or_above_zero() {
        let file = data().unwrap();
        assert!(address().is_ok());
        assert!(!file.transactions.is_empty());
        // Each asset's running balance, in order, never goes below zero:
        // the sample is a wallet that could exist.
        let mut balances = std::collections::HashMap::<String, i128>::new();
        let mut last = i64::MIN;
        for tx in &file.transactions {
            assert!(tx.block_time > last, "in time order");
            last = tx.block_time;
            for leg in &tx.legs {
                assert_eq!(leg.signature, tx.signature);
                let b = balances.entry(leg.mint.clone()).or_default();
                *b += leg.amount;
                assert!(*b >= 0, "{} below zero at {}", leg.mint, tx.signature);
            }
        }
    }
}
