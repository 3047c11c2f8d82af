//! Order programs and venues on recorded mainnet transactions
//! (server/tests/fixtures/solana/staketaxcsv/fetch_tx): Jupiter Limit Order
//! v1 and v2 and Jupiter DCA read as position deposits, fills and
//! withdrawals; no fill is spam; every transaction conserves for every
//! wallet alone and together with its positions. Expected amounts are the
//! transactions' own pre/post balances, worked out in the comments.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use ledger_core::ledger::{self, Leg, OperationType, SOL, TxView};

const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const JUPSOL: &str = "jupSoLaHXQiZZTSfEWMTRRgpnyFm8f6sZdosWBjx93v";

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/solana/staketaxcsv/fetch_tx")
}

fn all() -> Vec<(String, TxView)> {
    let mut out: Vec<(String, TxView)> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                TxView::parse(&json).unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn tx(prefix: &str) -> TxView {
    all()
        .into_iter()
        .find(|(n, _)| n.starts_with(prefix))
        .unwrap_or_else(|| panic!("no fixture {prefix}"))
        .1
}

/// The full address in `tx` that starts with `prefix`.
fn key(tx: &TxView, prefix: &str) -> String {
    tx.keys
        .iter()
        .find(|k| k.starts_with(prefix))
        .unwrap_or_else(|| panic!("no key {prefix}"))
        .clone()
}

fn shape(legs: &[Leg]) -> Vec<(OperationType, &str, i128, Option<&str>)> {
    legs.iter()
        .map(|l| {
            (
                l.operation_type,
                l.mint.as_str(),
                l.amount,
                l.position.as_deref(),
            )
        })
        .collect()
}

/// Every wallet a transaction touches: its signers and token owners.
fn wallets(tx: &TxView) -> Vec<String> {
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
fn every_fixture_conserves_for_the_wallet_and_for_the_wallet_with_its_positions() {
    let mut pairs = 0;
    let mut with_positions = 0;
    for (name, tx) in all() {
        for wallet in wallets(&tx) {
            let legs = ledger::legs(&tx, &wallet);
            assert_eq!(
                ledger::sum_by_asset(&legs),
                ledger::balance_changes(&tx, &wallet),
                "{name} for {wallet}: {legs:#?}"
            );
            assert_eq!(
                ledger::sum_with_positions(&legs),
                ledger::balance_changes_with_positions(&tx, &wallet, &legs),
                "{name} for {wallet} with positions: {legs:#?}"
            );
            pairs += 1;
            with_positions += usize::from(legs.iter().any(|l| l.position.is_some()));
        }
    }
    assert!(pairs > 100, "{pairs}");
    // The maker of the v1 order in its open and 10 fills, the v2 maker in
    // its 2 opens, 1 cancel and 1 fill, the 2 DCA owners in their fills.
    assert_eq!(with_positions, 11 + 4 + 2);
}

#[test]
fn a_v2_limit_order_opens_as_a_position_deposit() {
    // 4aBP4353…: the maker moves 2,390 USDC into the escrow Hs7q6NnH, which
    // the order CTRk9ma9 owns: E3znWCfV 20,001.004392 -> 17,611.004392 USDC
    // (-2,390,000,000) and Hs7q6NnH 0 -> 2,390,000,000. SOL: fee 53,787 +
    // rent 2,074,080 (GND3Z51k, the maker's output account, created first)
    // + 3,480,000 (order) + 2,039,280 (escrow)
    // = 7,647,147 = 6,505,166,042 - 6,497,518,895.
    let tx = tx("4aBP4353");
    let maker = key(&tx, "4abvSWug");
    let order = key(&tx, "CTRk9ma9");
    let legs = ledger::legs(&tx, &maker);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -53_787, None),
            (OperationType::RentDeposit, SOL, -2_074_080, None),
            (OperationType::RentDeposit, SOL, -3_480_000, None),
            (OperationType::RentDeposit, SOL, -2_039_280, None),
            (
                OperationType::PositionDeposit,
                USDC,
                -2_390_000_000,
                Some(order.as_str())
            ),
        ]
    );
}

#[test]
fn a_v2_limit_order_fill_is_a_swap_from_the_escrow_and_not_spam() {
    // k2eGRDNq…, signed by the keeper j1oAbxxi, not the maker: the escrow
    // Hs7q6NnH pays 2,390,000,000 USDC (2,390,000,000 -> 0), the maker's
    // GND3Z51k receives 999,000,000,000 HeLp6N… (0 -> 999,000,000,000) and
    // the fee account DtL4JtjX 1,000,000,000 (0.1%): 1,000,000,000,000
    // bought gross, the fee a platform_fee leg; the order (3,480,000) and
    // escrow (2,039,280) close into the maker:
    // 6,497,518,895 -> 6,503,038,175 = +5,519,280 = 3,480,000 + 2,039,280.
    let tx = tx("k2eGRDNq");
    let maker = key(&tx, "4abvSWug");
    let order = key(&tx, "CTRk9ma9");
    let help = key(&tx, "HeLp6N");
    let legs = ledger::legs(&tx, &maker);
    let mut rows = shape(&legs);
    rows.sort_by_key(|r| (r.0, r.2));
    let mut want = vec![
        (
            OperationType::Swap,
            USDC,
            -2_390_000_000,
            Some(order.as_str()),
        ),
        (OperationType::Swap, help.as_str(), 1_000_000_000_000, None),
        (
            OperationType::PlatformFee,
            help.as_str(),
            -1_000_000_000,
            None,
        ),
        (OperationType::RentRefund, SOL, 2_039_280, None),
        (OperationType::RentRefund, SOL, 3_480_000, None),
    ];
    want.sort_by_key(|r| (r.0, r.2));
    assert_eq!(rows, want, "{legs:#?}");
    for swap in legs
        .iter()
        .filter(|l| l.operation_type == OperationType::Swap)
    {
        assert_eq!(
            swap.router.as_deref(),
            Some("Jupiter Limit Order v2, Jupiter Aggregator v6")
        );
        assert_eq!(swap.venue.as_deref(), Some("Raydium CLMM, Orca Whirlpools"));
    }
}

#[test]
fn a_v2_limit_order_cancel_withdraws_what_was_left() {
    // 4iZxoW1D…: the escrow HADfwkTf (owned by the order DqsyUJ3h) returns
    // 178 jupSOL (178,000,000,000 -> 0) to the maker's pJT9DKkx (0 ->
    // 178,000,000,000); the order (3,480,000) and escrow (2,039,280) close
    // into the maker, who pays the fee 111,935: 481,238,318 - 475,830,973 =
    // 5,407,345 = 3,480,000 + 2,039,280 - 111,935.
    let tx = tx("4iZxoW1D");
    let maker = key(&tx, "4abvSWug");
    let order = key(&tx, "DqsyUJ3h");
    let legs = ledger::legs(&tx, &maker);
    let mut rows = shape(&legs);
    rows.sort_by_key(|r| (r.0, r.2));
    let mut want = vec![
        (OperationType::NetworkFee, SOL, -111_935, None),
        (OperationType::RentRefund, SOL, 2_039_280, None),
        (OperationType::RentRefund, SOL, 3_480_000, None),
        (
            OperationType::PositionWithdraw,
            JUPSOL,
            178_000_000_000,
            Some(order.as_str()),
        ),
    ];
    want.sort_by_key(|r| (r.0, r.2));
    assert_eq!(rows, want, "{legs:#?}");
}

#[test]
fn the_v1_order_deposits_10000_usdc_and_its_ten_fills_spend_exactly_that() {
    // 5iPvQ1Th…: the maker GAgnD5Xv moves 10,000 USDC into the escrow
    // 73aBorVD of the order 3XQkm6Ss (3f5MBRkz 61,354.47 -> 51,354.47).
    // The ten fills take the escrow from 10,000,000,000 down to 0:
    // 399,360,000 + 16,000,000 + 2,000,000,000 + 400,000,000 +
    // 1,536,102,400 + 1,084,519,219 + 182,560,735 + 182,560,735 +
    // 839,779,382 + 3,359,117,529 = 10,000,000,000.
    let maker = "GAgnD5XviS4wN7GpcTBbgvtFAZnT6Lc1ehkbnP3qo1bz";
    let order = "3XQkm6SsH1Dors1DTdTBAFxiEQB4AFWJzXNVEkMxDADV";
    let mut deposited = 0i128;
    let mut filled = 0i128;
    let mut fills = 0;
    for (name, tx) in all() {
        let legs = ledger::legs(&tx, maker);
        assert!(
            legs.iter()
                .all(|l| l.operation_type != OperationType::AirdropSpam),
            "{name}: {legs:#?}"
        );
        for leg in &legs {
            match (leg.operation_type, leg.position.as_deref()) {
                (OperationType::PositionDeposit, Some(p)) => {
                    assert_eq!((p, leg.mint.as_str()), (order, USDC));
                    deposited += leg.amount;
                }
                (OperationType::Swap, Some(p)) => {
                    assert_eq!((p, leg.mint.as_str()), (order, USDC));
                    filled += leg.amount;
                    fills += 1;
                }
                _ => {}
            }
        }
    }
    assert_eq!(deposited, -10_000_000_000);
    assert_eq!(filled, -10_000_000_000);
    assert_eq!(fills, 10);
}

#[test]
fn the_first_v1_fill_reads_leg_by_leg() {
    // 4xqxLBqu…: escrow 73aBorVD 10,000,000,000 -> 9,600,640,000 USDC
    // (-399,360,000); the maker's GQjxPiKu 0 -> 177,317 of 9gr84r…, and the
    // program fee account AtUDWt7G (owned by the fee authority H3vkQqNV)
    // 0 -> 177 of it: the maker bought 177,494 gross and paid 177 (0.1%) as
    // Jupiter's fee; the keeper routed through Phoenix and Raydium AMM v4.
    let tx = tx("4xqxLBqu");
    let maker = key(&tx, "GAgnD5Xv");
    let order = key(&tx, "3XQkm6Ss");
    let bought = key(&tx, "9gr84r");
    let legs = ledger::legs(&tx, &maker);
    assert_eq!(
        shape(&legs),
        [
            (
                OperationType::Swap,
                USDC,
                -399_360_000,
                Some(order.as_str())
            ),
            (OperationType::PlatformFee, bought.as_str(), -177, None),
            (OperationType::Swap, bought.as_str(), 177_494, None),
        ]
    );
    assert_eq!(
        legs[1].counterparties[0].address,
        key(&tx, "H3vkQqNV"),
        "the fee account's owner"
    );
    assert_eq!(legs[2].venue.as_deref(), Some("Phoenix, Raydium AMM v4"));
    assert_eq!(
        legs[2].router.as_deref(),
        Some("Jupiter Limit Order v1, Jupiter Aggregator v6")
    );
    // The keeper's own reading is unchanged: not a position of its own.
    let keeper = key(&tx, "71WDyyCs");
    assert!(
        ledger::legs(&tx, &keeper)
            .iter()
            .all(|l| l.position.is_none())
    );
}

#[test]
fn the_last_v1_fill_returns_the_order_and_escrow_rent() {
    // 4v28RP4A…: the escrow pays its last 3,359,117,529 USDC; the maker's
    // SOL 92,703,845 -> 97,826,405 = +5,122,560 = 3,083,280 (order
    // 3XQkm6Ss closed) + 2,039,280 (escrow 73aBorVD closed).
    let tx = tx("4v28RP4A");
    let maker = key(&tx, "GAgnD5Xv");
    let legs = ledger::legs(&tx, &maker);
    let refunds: Vec<i128> = legs
        .iter()
        .filter(|l| l.operation_type == OperationType::RentRefund)
        .map(|l| l.amount)
        .collect();
    assert_eq!(refunds.iter().sum::<i128>(), 5_122_560, "{legs:#?}");
    assert!(
        legs.iter()
            .any(|l| l.operation_type == OperationType::Swap && l.amount == -3_359_117_529)
    );
}

#[test]
fn a_dca_fill_is_a_swap_of_the_escrowed_input() {
    // 2GMpqA7d…: the DCA account 7WZcPib1's wSOL escrow ECUPi4xJ pays
    // 20,000,000 - 18,571,429 = 1,428,571 lamports; the owner DHq9E6HL's
    // 9ewoAWZ8 receives 3,638,897,489 - 3,594,821,609 = 44,075,880 of 74DSHn…
    // and the fee account 4d3vmXkg (fee authority CpoD6tWA) 44,119 (0.1%):
    // 44,119,999 bought gross, as the pool paid out (892Km91n -44,119,999).
    let tx = tx("2GMpqA7d");
    let owner = key(&tx, "DHq9E6HL");
    let dca = key(&tx, "7WZcPib1");
    let bought = key(&tx, "74DSHn");
    assert_eq!(
        shape(&ledger::legs(&tx, &owner)),
        [
            (OperationType::Swap, SOL, -1_428_571, Some(dca.as_str())),
            (OperationType::PlatformFee, bought.as_str(), -44_119, None),
            (OperationType::Swap, bought.as_str(), 44_119_999, None),
        ]
    );
    // S3z6oPjo…: DbQVM6pT's USDC escrow Eu2MKgny pays 1,975,000,567 -
    // 1,972,222,790 = 2,777,777; 9QC3q9XT's HitShwPA receives 359,541,627,170
    // - 359,537,567,825 = 4,059,345 of 4k3Dyj… and the fee account 8KvPuzV2
    // 4,063: 4,063,408 gross (GM1CjxKi -4,063,408).
    let tx = self::tx("S3z6oPjo");
    let owner = key(&tx, "9QC3q9XT");
    let dca = key(&tx, "DbQVM6pT");
    let bought = key(&tx, "4k3Dyj");
    assert_eq!(
        shape(&ledger::legs(&tx, &owner)),
        [
            (OperationType::Swap, USDC, -2_777_777, Some(dca.as_str())),
            (OperationType::PlatformFee, bought.as_str(), -4_063, None),
            (OperationType::Swap, bought.as_str(), 4_063_408, None),
        ]
    );
}

#[test]
fn plain_swaps_name_their_venue_and_router() {
    // 2rY9ky2Y…: a Raydium AMM v4 swap with no aggregator.
    let tx = tx("2rY9ky2Y");
    let legs = ledger::legs(&tx, tx.fee_payer().unwrap());
    for leg in legs
        .iter()
        .filter(|l| l.operation_type == OperationType::Swap)
    {
        assert_eq!(leg.venue.as_deref(), Some("Raydium AMM v4"));
        assert_eq!(leg.router, None);
    }
}
