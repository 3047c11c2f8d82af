//! The decoder against recorded mainnet transactions (tests/fixtures/solana):
//! every transaction, for every wallet it touches, in both encodings,
//! conserves (SPEC S4); and the legs of known transactions read right.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod encoding;
#[path = "../support/encoding.rs"]
mod encoding_support;
#[path = "../support/recorded.rs"]
mod recorded;
mod stored;
mod synthetic;

use std::path::PathBuf;

use serde_json::Value;
use server::ledger::{self, OperationType, SOL, TxView};

pub fn fixtures_dir() -> PathBuf {
    recorded::staketaxcsv().join("fetch_tx")
}

/// Every recorded transaction, parsed JSON, by file name.
pub fn fixtures() -> Vec<(String, Value)> {
    let dir = fixtures_dir();
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fixtures at {}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                serde_json::from_str(&text).unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 19, "expected the 19 recorded transactions");
    out
}

/// Every wallet a transaction touches: its signers and token owners.
pub fn wallets(tx: &TxView) -> Vec<String> {
    let mut out: Vec<String> = tx
        .keys
        .iter()
        .zip(&tx.signers)
        .filter(|(_, s)| **s)
        .map(|(k, _)| k.clone())
        .chain(
            tx.pre_tokens
                .iter()
                .chain(&tx.post_tokens)
                .filter_map(|b| b.owner.clone()),
        )
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn every_fixture_conserves_for_every_wallet_it_touches() {
    let mut checked = 0;
    for (name, json) in fixtures() {
        let tx = TxView::parse(&json).unwrap_or_else(|e| panic!("{name}: {e}"));
        for wallet in wallets(&tx) {
            let legs = ledger::legs(&tx, &wallet);
            assert_eq!(
                ledger::sum_by_asset(&legs),
                ledger::balance_changes(&tx, &wallet),
                "{name} for {wallet}: {legs:#?}"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} (transaction, wallet) pairs");
}

#[test]
fn the_fee_payer_pays_the_fee_in_its_own_leg() {
    for (name, json) in fixtures() {
        let tx = TxView::parse(&json).unwrap();
        let payer = tx.fee_payer().unwrap().to_owned();
        let legs = ledger::legs(&tx, &payer);
        let fee: Vec<_> = legs
            .iter()
            .filter(|l| l.operation_type == OperationType::NetworkFee)
            .collect();
        assert_eq!(fee.len(), 1, "{name}");
        assert_eq!(fee[0].amount, -i128::from(tx.fee), "{name}");
        assert_eq!(fee[0].mint, SOL);
    }
}

const RAYDIUM_AMM: &str = "675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8";

#[test]
fn raydium_swaps_are_swaps_against_the_amm() {
    let mut swaps = 0;
    for (name, json) in fixtures() {
        let tx = TxView::parse(&json).unwrap();
        if !tx.programs.iter().any(|p| p == RAYDIUM_AMM) {
            continue;
        }
        let legs = ledger::legs(&tx, tx.fee_payer().unwrap());
        let swap: Vec<_> = legs
            .iter()
            .filter(|l| l.operation_type == OperationType::Swap)
            .collect();
        assert_eq!(swap.len(), 2, "{name}: one asset in, one out: {legs:#?}");
        assert_eq!(swap.iter().filter(|l| l.amount > 0).count(), 1, "{name}");
        for leg in &swap {
            assert_eq!(leg.counterparties.len(), 1, "{name}");
            assert_eq!(leg.counterparties[0].address, RAYDIUM_AMM);
            assert_eq!(
                leg.counterparties[0].kind,
                ledger::CounterpartyKind::Program
            );
            assert_eq!(leg.counterparties[0].direction, leg.direction());
        }
        swaps += 1;
    }
    assert_eq!(swaps, 2, "the two recorded Raydium swaps");
}

#[test]
fn a_limit_order_escrows_tokens_and_pays_rent() {
    // Jupiter limit order creation: the maker funds the order and escrow
    // accounts and moves USDC into the order's escrow, a position it keeps
    // (docs/ledger.md), not a transfer out.
    let name = "4aBP4353YQuQ";
    let (_, json) = fixtures()
        .into_iter()
        .find(|(n, _)| n.starts_with(name))
        .unwrap();
    let tx = TxView::parse(&json).unwrap();
    let legs = ledger::legs(&tx, tx.fee_payer().unwrap());
    let kinds: Vec<_> = legs.iter().map(|l| l.operation_type).collect();
    assert_eq!(
        kinds,
        [
            OperationType::NetworkFee,
            OperationType::RentDeposit,
            OperationType::RentDeposit,
            OperationType::RentDeposit,
            OperationType::PositionDeposit,
        ]
    );
    let usdc = legs.last().unwrap();
    assert_eq!(usdc.mint, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
    assert_eq!(usdc.amount, -2_390_000_000);
    assert_eq!(usdc.decimals, 6);
}

#[test]
fn a_raydium_swap_reads_leg_by_leg() {
    let name = "2rY9ky2Ypps3KMxcgEoerPPKc1ZYEhxbV7x2bRZf8n31RuBDddvguvdmWMLyDJB8ayvbcUGH2LPpxDhT2rhubTEX.json";
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures_dir().join(name)).unwrap()).unwrap();
    let tx = TxView::parse(&json).unwrap();
    let legs = ledger::legs(&tx, tx.fee_payer().unwrap());
    insta::assert_json_snapshot!("raydium_swap_legs", legs);
}
