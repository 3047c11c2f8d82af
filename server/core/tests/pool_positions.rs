//! Liquidity positions in Raydium AMM v4, Raydium CLMM and Meteora Pools,
//! fee and reward claims from pool positions (Orca Whirlpools, Meteora
//! DLMM), and Jupiter Lend Earn read as a swap venue, on hand-built
//! transactions laid out as each program's own source orders its accounts
//! (cited in `ledger::protocols::liquidity`). No recorded transaction of
//! these programs is among the fixtures. Balances are chosen by hand and
//! the expected legs worked from them in the comments, never from what the
//! decoder printed. Every transaction is checked for conservation twice:
//! the wallet alone (its legs sum to its balance change), and the wallet
//! together with its pool position, whose tokens sit in the pool's vaults:
//! the wallet's and the vaults' changes together, less the receipt the
//! pool minted or burned, are what the legs that are no position transfer
//! add up to (for a deposit or a withdrawal, the network fee alone).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use ledger_core::basis::{EventKind, LegInput, Method, events_from_legs, replay};
use ledger_core::ledger::{self, Leg, OperationType, SOL, TxView};
use rust_decimal::Decimal;
use serde_json::{Value, json};

mod support;
use support::{Build, FEE};

const W: &str = "Wa11et1111111111111111111111111111111111111";
const OTHER: &str = "0ther11111111111111111111111111111111111111";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const RAY: &str = "4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R";
const LP_MINT: &str = "LpMint11111111111111111111111111111111111111";
const NFT_MINT: &str = "PosNftMint111111111111111111111111111111111";
const JL_USDC: &str = "9BEcn9aPEmhSPbPQeFGjidRiEKki46fVQDyPpSQXPA2D";
const USDC_ATA: &str = "UsdcAta1111111111111111111111111111111111111";
const RAY_ATA: &str = "RayAta11111111111111111111111111111111111111";
const LP_ATA: &str = "LpAta111111111111111111111111111111111111111";
const VAULT_USDC: &str = "VauUsdc111111111111111111111111111111111111";
const VAULT_RAY: &str = "VauRay1111111111111111111111111111111111111";
const POOL: &str = "Poo11111111111111111111111111111111111111111";
const POOL_AUTH: &str = "Poo1Auth11111111111111111111111111111111111";
const POSITION: &str = "Posit1on11111111111111111111111111111111111";
const AMM_V4: &str = "675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8";
const CLMM: &str = "CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK";
const METEORA_POOLS: &str = "Eo7WjKq67rjJQSZxS6z3YkapzY3eMj6Xy8X5EQVn5UaB";
const WHIRLPOOLS: &str = "whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc";
const DLMM: &str = "LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo";
const JUPITER_LEND_EARN: &str = "jup3YeL8QhtSx1e253b2FDvsMNC87fDrgQZivbrndc9";
const TOKEN_RENT: u64 = 2_039_280;
const START: u64 = 10_000_000_000;

/// A raw Anchor instruction: `name`'s discriminator and some argument bytes.
fn anchor_ix(program: &str, name: &str, accounts: &[&str]) -> Value {
    use sha2::{Digest, Sha256};
    let mut data = Sha256::digest(format!("global:{name}").as_bytes())[..8].to_vec();
    data.extend_from_slice(&[7u8; 24]);
    json!({"programId": program, "accounts": accounts, "data": bs58::encode(data).into_string()})
}

/// A raw Raydium AMM v4 instruction: its one-byte tag, then u64 arguments.
fn native_ix(program: &str, tag: u8, accounts: &[&str]) -> Value {
    let mut data = vec![tag];
    data.extend_from_slice(&[7u8; 24]);
    json!({"programId": program, "accounts": accounts, "data": bs58::encode(data).into_string()})
}

/// `n` placeholder accounts with the named ones put in place.
fn layout(n: usize, at: &[(usize, &str)]) -> Vec<String> {
    let mut accounts: Vec<String> = (0..n)
        .map(|i| format!("F{}{i}", "1".repeat(42 - i.to_string().len())))
        .collect();
    for (i, account) in at {
        accounts[*i] = (*account).to_owned();
    }
    accounts
}

fn refs(accounts: &[String]) -> Vec<&str> {
    accounts.iter().map(String::as_str).collect()
}

/// One token's balance on each side, as `(pre, post)`.
type Side = (u64, u64);

/// A pool transaction of the wallet's: its USDC and RAY accounts, a third
/// account for the receipt (LP token or position NFT) or a reward, and the
/// pool's two vaults (owned by the pool's authority), with `ix` the pool's
/// instruction. The wallet pays only the network fee in SOL.
fn pool_tx(
    usdc: Side,
    ray: Side,
    receipt: Option<(&str, u8, Side)>,
    vaults: (Side, Side),
    ix: Value,
) -> TxView {
    let mut b = Build::default()
        .account(W, true, START, START - FEE)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(RAY_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(LP_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_USDC, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_RAY, false, TOKEN_RENT, TOKEN_RENT)
        .account(POOL, false, 1, 1)
        .account(POSITION, false, 1, 1)
        .token(USDC_ATA, USDC, W, 6, Some(usdc.0), Some(usdc.1))
        .token(RAY_ATA, RAY, W, 6, Some(ray.0), Some(ray.1))
        .token(
            VAULT_USDC,
            USDC,
            POOL_AUTH,
            6,
            Some(vaults.0.0),
            Some(vaults.0.1),
        )
        .token(
            VAULT_RAY,
            RAY,
            POOL_AUTH,
            6,
            Some(vaults.1.0),
            Some(vaults.1.1),
        );
    if let Some((mint, decimals, (pre, post))) = receipt {
        b = b.token(LP_ATA, mint, W, decimals, Some(pre), Some(post));
    }
    b.ix(ix, vec![]).build()
}

/// A claim's legs: the wallet alone conserves, and together with the
/// position too, where the yield counts as arriving when received (the
/// fees sat in the pool's vaults, not in the position, until claimed).
fn claim_conserves(tx: &TxView) -> Vec<Leg> {
    let legs = ledger::legs(tx, W);
    assert_eq!(
        ledger::sum_by_asset(&legs),
        ledger::balance_changes(tx, W),
        "{legs:#?}"
    );
    assert_eq!(
        ledger::sum_with_positions(&legs),
        ledger::balance_changes(tx, W),
        "{legs:#?}"
    );
    legs
}

/// The legs of `tx` for the wallet, checked for conservation of the wallet
/// alone and of the wallet with its pool position (module comment).
fn conserves(tx: &TxView, receipt: Option<&str>) -> Vec<Leg> {
    let legs = ledger::legs(tx, W);
    assert_eq!(
        ledger::sum_by_asset(&legs),
        ledger::balance_changes(tx, W),
        "{legs:#?}"
    );
    let mut together: BTreeMap<String, i128> = BTreeMap::new();
    for (mint, delta) in ledger::balance_changes(tx, W)
        .into_iter()
        .chain(ledger::balance_changes(tx, POOL_AUTH))
    {
        if Some(mint.as_str()) != receipt {
            *together.entry(mint).or_insert(0) += delta;
        }
    }
    together.retain(|_, d| *d != 0);
    assert_eq!(ledger::sum_with_positions(&legs), together, "{legs:#?}");
    legs
}

fn with_position(legs: &[Leg]) -> Vec<(OperationType, &str, i128, Option<&str>)> {
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

/// Cost-basis events of `legs`: USDC and RAY at $1 a unit, SOL at $200,
/// anything else unpriced.
fn events(legs: &[Leg]) -> Vec<ledger_core::basis::Event> {
    let inputs: Vec<LegInput> = legs
        .iter()
        .map(|l| LegInput {
            signature: l.signature.clone(),
            index: l.index,
            block_time: l.block_time.unwrap(),
            operation_type: l.operation_type,
            mint: l.mint.clone(),
            amount: l.amount,
            decimals: l.decimals,
            usd_value: match l.mint.as_str() {
                USDC | RAY => Some(Decimal::new(l.amount.abs() as i64, 6)),
                SOL => Some(Decimal::from(200) * Decimal::new(l.amount.abs() as i64, 9)),
                _ => None,
            },
            position: l.position.clone(),
        })
        .collect();
    events_from_legs(&inputs, true)
}

/// Only the network fee is disposed of, and the pooled tokens are locked
/// (or released) in the position, never sold or bought.
fn moves_no_lots_but_the_fee(legs: &[Leg], lock: EventKind) {
    let events = events(legs);
    let disposed: Vec<&str> = events
        .iter()
        .filter(|e| e.kind == EventKind::Dispose)
        .map(|e| e.asset.as_str())
        .collect();
    assert_eq!(disposed, [SOL], "{events:#?}");
    assert!(!events.iter().any(|e| e.kind == EventKind::Acquire));
    assert!(events.iter().any(|e| e.kind == lock), "{events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| e.asset == LP_MINT || e.asset == NFT_MINT)
    );
}

// Raydium AMM v4 ---------------------------------------------------------

#[test]
fn an_amm_v4_deposit_locks_both_tokens_and_its_lp_token_is_the_receipt() {
    // `Deposit` (tag 3) with the 14 accounts of a pool with an OpenBook
    // market: amm 1, owner 12. USDC 500 -> 400 and RAY 80 -> 30 into the
    // vaults (1,000 -> 1,100 and 500 -> 550); 70 LP minted to the wallet.
    let accounts = layout(
        14,
        &[
            (1, POOL),
            (9, RAY_ATA),
            (10, USDC_ATA),
            (11, LP_ATA),
            (12, W),
        ],
    );
    let tx = pool_tx(
        (500_000_000, 400_000_000),
        (80_000_000, 30_000_000),
        Some((LP_MINT, 6, (0, 70_000_000))),
        ((1_000_000_000, 1_100_000_000), (500_000_000, 550_000_000)),
        native_ix(AMM_V4, 3, &refs(&accounts)),
    );
    let legs = conserves(&tx, Some(LP_MINT));
    // Remaining changes in mint order: RAY (4k3D…), USDC (EPjF…), LP (LpMi…).
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::PositionDeposit, RAY, -50_000_000, Some(POOL)),
            (
                OperationType::PositionDeposit,
                USDC,
                -100_000_000,
                Some(POOL)
            ),
            (
                OperationType::PositionDeposit,
                LP_MINT,
                70_000_000,
                Some(POOL)
            ),
        ]
    );
    assert!(
        legs[1..]
            .iter()
            .all(|l| l.router.as_deref() == Some("Raydium AMM v4") && l.venue.is_none())
    );
    moves_no_lots_but_the_fee(&legs, EventKind::PositionLock);
}

#[test]
fn an_amm_v4_withdraw_without_the_market_hands_the_lp_token_back() {
    // `Withdraw` (tag 4) with 11 accounts (no OpenBook market): owner 10.
    // 70 LP burned; USDC 400 -> 505 and RAY 30 -> 79 out of the vaults.
    let accounts = layout(
        11,
        &[(1, POOL), (7, LP_ATA), (8, USDC_ATA), (9, RAY_ATA), (10, W)],
    );
    let tx = pool_tx(
        (400_000_000, 505_000_000),
        (30_000_000, 79_000_000),
        Some((LP_MINT, 6, (70_000_000, 0))),
        ((1_100_000_000, 995_000_000), (550_000_000, 501_000_000)),
        native_ix(AMM_V4, 4, &refs(&accounts)),
    );
    let legs = conserves(&tx, Some(LP_MINT));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::PositionWithdraw, RAY, 49_000_000, Some(POOL)),
            (
                OperationType::PositionWithdraw,
                USDC,
                105_000_000,
                Some(POOL)
            ),
            (
                OperationType::PositionWithdraw,
                LP_MINT,
                -70_000_000,
                Some(POOL)
            ),
        ]
    );
    moves_no_lots_but_the_fee(&legs, EventKind::PositionRelease);
}

#[test]
fn an_amm_v4_withdraw_whose_owner_slot_is_another_wallet_stays_conservative() {
    // With 22 accounts (two padding accounts) the owner is at 18: OTHER.
    // The wallet sitting at 16 (where the 20-account form has it) does not
    // make the withdrawal the wallet's, so its LP out and tokens in remain a
    // swap at the venue.
    let accounts = layout(22, &[(1, POOL), (16, W), (18, OTHER)]);
    let tx = pool_tx(
        (400_000_000, 505_000_000),
        (30_000_000, 79_000_000),
        Some((LP_MINT, 6, (70_000_000, 0))),
        ((1_100_000_000, 995_000_000), (550_000_000, 501_000_000)),
        native_ix(AMM_V4, 4, &refs(&accounts)),
    );
    let legs = ledger::legs(&tx, W);
    assert!(
        legs[1..]
            .iter()
            .all(|l| l.operation_type == OperationType::Swap
                && l.venue.as_deref() == Some("Raydium AMM v4")),
        "{legs:#?}"
    );
}

// Raydium CLMM -----------------------------------------------------------

#[test]
fn opening_a_clmm_position_deposits_both_tokens_and_the_nft_is_the_receipt() {
    // `open_position_v2`: payer 0, position_nft_owner 1, personal_position
    // 9. USDC 500 -> 300 and RAY 80 -> 0 into the vaults; the position NFT
    // (0 decimals) 0 -> 1 in the wallet.
    let accounts = layout(
        22,
        &[
            (0, W),
            (1, W),
            (2, NFT_MINT),
            (3, LP_ATA),
            (5, POOL),
            (9, POSITION),
        ],
    );
    let tx = pool_tx(
        (500_000_000, 300_000_000),
        (80_000_000, 0),
        Some((NFT_MINT, 0, (0, 1))),
        ((1_000_000_000, 1_200_000_000), (500_000_000, 580_000_000)),
        anchor_ix(CLMM, "open_position_v2", &refs(&accounts)),
    );
    let legs = conserves(&tx, Some(NFT_MINT));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionDeposit,
                RAY,
                -80_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionDeposit,
                USDC,
                -200_000_000,
                Some(POSITION)
            ),
            (OperationType::PositionDeposit, NFT_MINT, 1, Some(POSITION)),
        ]
    );
    assert!(
        legs[1..]
            .iter()
            .all(|l| l.router.as_deref() == Some("Raydium CLMM"))
    );
    moves_no_lots_but_the_fee(&legs, EventKind::PositionLock);
}

#[test]
fn increasing_a_clmm_position_is_a_deposit_into_the_personal_position() {
    // `increase_liquidity_v2`: nft_owner 0, personal_position 4.
    // USDC 300 -> 250, RAY 40 -> 20.
    let accounts = layout(15, &[(0, W), (2, POOL), (4, POSITION)]);
    let tx = pool_tx(
        (300_000_000, 250_000_000),
        (40_000_000, 20_000_000),
        None,
        ((1_200_000_000, 1_250_000_000), (580_000_000, 600_000_000)),
        anchor_ix(CLMM, "increase_liquidity_v2", &refs(&accounts)),
    );
    let legs = conserves(&tx, None);
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionDeposit,
                RAY,
                -20_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionDeposit,
                USDC,
                -50_000_000,
                Some(POSITION)
            ),
        ]
    );
}

#[test]
fn decreasing_and_closing_a_clmm_position_withdraws_and_hands_the_nft_back() {
    // `decrease_liquidity_v2` (nft_owner 0, personal_position 2) then
    // `close_position` (nft_owner 0, personal_position 3): USDC 250 ->
    // 512, RAY 20 -> 121 out of the vaults, and the NFT burned (1 -> 0).
    let decrease = layout(16, &[(0, W), (1, LP_ATA), (2, POSITION), (3, POOL)]);
    let close = layout(6, &[(0, W), (1, NFT_MINT), (2, LP_ATA), (3, POSITION)]);
    let tx = Build::default()
        .account(W, true, START, START - FEE)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(RAY_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(LP_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_USDC, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_RAY, false, TOKEN_RENT, TOKEN_RENT)
        .token(USDC_ATA, USDC, W, 6, Some(250_000_000), Some(512_000_000))
        .token(RAY_ATA, RAY, W, 6, Some(20_000_000), Some(121_000_000))
        .token(LP_ATA, NFT_MINT, W, 0, Some(1), Some(0))
        .token(
            VAULT_USDC,
            USDC,
            POOL_AUTH,
            6,
            Some(1_250_000_000),
            Some(988_000_000),
        )
        .token(
            VAULT_RAY,
            RAY,
            POOL_AUTH,
            6,
            Some(600_000_000),
            Some(499_000_000),
        )
        .ix(
            anchor_ix(CLMM, "decrease_liquidity_v2", &refs(&decrease)),
            vec![],
        )
        .ix(anchor_ix(CLMM, "close_position", &refs(&close)), vec![])
        .build();
    let legs = conserves(&tx, Some(NFT_MINT));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionWithdraw,
                RAY,
                101_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionWithdraw,
                USDC,
                262_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionWithdraw,
                NFT_MINT,
                -1,
                Some(POSITION)
            ),
        ]
    );
    moves_no_lots_but_the_fee(&legs, EventKind::PositionRelease);
}

#[test]
fn another_owners_clmm_instruction_leaves_the_wallet_conservative() {
    // nft_owner OTHER: the wallet's USDC out and RAY in stay a swap.
    let accounts = layout(15, &[(0, OTHER), (2, POOL), (4, POSITION)]);
    let tx = pool_tx(
        (300_000_000, 250_000_000),
        (40_000_000, 60_000_000),
        None,
        ((1_200_000_000, 1_250_000_000), (580_000_000, 560_000_000)),
        anchor_ix(CLMM, "increase_liquidity_v2", &refs(&accounts)),
    );
    let legs = ledger::legs(&tx, W);
    assert_eq!(
        legs.iter()
            .map(|l| (l.operation_type, l.position.as_deref()))
            .collect::<Vec<_>>(),
        [
            (OperationType::NetworkFee, None),
            (OperationType::Swap, None),
            (OperationType::Swap, None),
        ]
    );
}

// Meteora Pools ----------------------------------------------------------

#[test]
fn a_meteora_pools_balanced_deposit_is_a_position_deposit_keyed_by_the_pool() {
    // `add_balance_liquidity`: pool 0, user 13. USDC 500 -> 450, RAY 80 ->
    // 55; 30 LP minted.
    let accounts = layout(
        16,
        &[
            (0, POOL),
            (1, LP_MINT),
            (2, LP_ATA),
            (11, USDC_ATA),
            (12, RAY_ATA),
            (13, W),
        ],
    );
    let tx = pool_tx(
        (500_000_000, 450_000_000),
        (80_000_000, 55_000_000),
        Some((LP_MINT, 6, (0, 30_000_000))),
        ((1_000_000_000, 1_050_000_000), (500_000_000, 525_000_000)),
        anchor_ix(METEORA_POOLS, "add_balance_liquidity", &refs(&accounts)),
    );
    let legs = conserves(&tx, Some(LP_MINT));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::PositionDeposit, RAY, -25_000_000, Some(POOL)),
            (
                OperationType::PositionDeposit,
                USDC,
                -50_000_000,
                Some(POOL)
            ),
            (
                OperationType::PositionDeposit,
                LP_MINT,
                30_000_000,
                Some(POOL)
            ),
        ]
    );
    assert!(
        legs[1..]
            .iter()
            .all(|l| l.router.as_deref() == Some("Meteora Pools"))
    );
    moves_no_lots_but_the_fee(&legs, EventKind::PositionLock);
}

#[test]
fn a_meteora_pools_single_side_withdrawal_releases_one_token() {
    // `remove_liquidity_single_side`: pool 0, user 12. 30 LP burned, all
    // of it taken as USDC: 450 -> 551.
    let accounts = layout(
        15,
        &[
            (0, POOL),
            (1, LP_MINT),
            (2, LP_ATA),
            (11, USDC_ATA),
            (12, W),
        ],
    );
    let tx = pool_tx(
        (450_000_000, 551_000_000),
        (55_000_000, 55_000_000),
        Some((LP_MINT, 6, (30_000_000, 0))),
        ((1_050_000_000, 949_000_000), (525_000_000, 525_000_000)),
        anchor_ix(
            METEORA_POOLS,
            "remove_liquidity_single_side",
            &refs(&accounts),
        ),
    );
    let legs = conserves(&tx, Some(LP_MINT));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionWithdraw,
                USDC,
                101_000_000,
                Some(POOL)
            ),
            (
                OperationType::PositionWithdraw,
                LP_MINT,
                -30_000_000,
                Some(POOL)
            ),
        ]
    );
}

// Fee and reward claims ----------------------------------------------------

#[test]
fn collecting_whirlpool_fees_is_interest_from_the_position() {
    // `collect_fees`: whirlpool 0, position_authority 1, position 2. The
    // fees owed leave the vaults: USDC 100 -> 102.5, RAY 10 -> 11.
    let accounts = layout(
        9,
        &[
            (0, POOL),
            (1, W),
            (2, POSITION),
            (4, USDC_ATA),
            (6, RAY_ATA),
        ],
    );
    let tx = pool_tx(
        (100_000_000, 102_500_000),
        (10_000_000, 11_000_000),
        None,
        ((1_000_000_000, 997_500_000), (500_000_000, 499_000_000)),
        anchor_ix(WHIRLPOOLS, "collect_fees", &refs(&accounts)),
    );
    let legs = claim_conserves(&tx);
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::Interest, RAY, 1_000_000, Some(POSITION)),
            (OperationType::Interest, USDC, 2_500_000, Some(POSITION)),
        ]
    );
    assert!(
        legs[1..]
            .iter()
            .all(|l| l.router.as_deref() == Some("Orca Whirlpools"))
    );
    // Income at fair value when received: $1 of RAY and $2.50 of USDC.
    let income: Vec<(String, Option<Decimal>)> = events(&legs)
        .into_iter()
        .filter(|e| e.kind == EventKind::Income)
        .map(|e| (e.asset, e.usd_value))
        .collect();
    assert_eq!(
        income,
        [
            (RAY.to_owned(), Some(Decimal::new(1, 0))),
            (USDC.to_owned(), Some(Decimal::new(25, 1)))
        ]
    );
}

#[test]
fn claiming_a_dlmm_reward_is_interest_and_another_senders_claim_is_not() {
    // `claim_reward2`: lb_pair 0, position 1, sender 2. 5 RAY of rewards
    // (10 -> 15) out of the reward vault (VAULT_RAY 500 -> 495).
    let claim = |sender: &str| {
        let accounts = layout(10, &[(0, POOL), (1, POSITION), (2, sender), (5, RAY_ATA)]);
        pool_tx(
            (100_000_000, 100_000_000),
            (10_000_000, 15_000_000),
            None,
            ((1_000_000_000, 1_000_000_000), (500_000_000, 495_000_000)),
            anchor_ix(DLMM, "claim_reward2", &refs(&accounts)),
        )
    };
    let legs = claim_conserves(&claim(W));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::Interest, RAY, 5_000_000, Some(POSITION)),
        ]
    );
    assert_eq!(legs[1].router.as_deref(), Some("Meteora DLMM"));
    // Another sender's claim paying the wallet is not the wallet's yield:
    // the conservative reading (a transfer in, no position).
    let legs = ledger::legs(&claim(OTHER), W);
    assert_eq!(legs[1].operation_type, OperationType::TransferIn);
    assert_eq!(legs[1].position, None);
}

// Jupiter Lend Earn --------------------------------------------------------

/// A Jupiter Lend Earn move: the wallet's USDC and jlUSDC change, and the
/// Earn program ran (its instructions are not decoded: registry only).
fn earn(usdc: Side, jl: Side) -> TxView {
    Build::default()
        .account(W, true, START, START - FEE)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(LP_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .token(USDC_ATA, USDC, W, 6, Some(usdc.0), Some(usdc.1))
        .token(LP_ATA, JL_USDC, W, 6, Some(jl.0), Some(jl.1))
        .ix(
            json!({"programId": JUPITER_LEND_EARN, "accounts": [W, USDC_ATA, LP_ATA], "data": "3Bxs4Bc3VYuGVB19"}),
            vec![],
        )
        .build()
}

#[test]
fn jupiter_earn_shares_are_a_holding_minted_and_redeemed_by_swaps_at_the_venue() {
    // Decision (docs/ledger.md "Jupiter Lend", docs/cost-basis.md "Receipt
    // tokens"): a jlToken is a share whose value grows, a holding like any
    // token, so depositing is a swap USDC -> jlUSDC and withdrawing a swap
    // back, both at the venue "Jupiter Lend Earn"; the growth is a gain
    // when the share is redeemed, never interest.
    // Deposit: 100 USDC (500 -> 400) for 96.5 jlUSDC.
    let deposit = earn((500_000_000, 400_000_000), (0, 96_500_000));
    // Withdrawal: the 96.5 jlUSDC back for 101 USDC (400 -> 501).
    let withdraw = earn((400_000_000, 501_000_000), (96_500_000, 0));
    let mut legs = Vec::new();
    for (tx, usdc, jl, signature) in [
        (&deposit, -100_000_000, 96_500_000, "deposit"),
        (&withdraw, 101_000_000, -96_500_000, "withdraw"),
    ] {
        let mut these = ledger::legs(tx, W);
        // The builder signs every transaction "sig"; cost basis reads a
        // swap's two sides by signature, so the two get their own.
        for leg in &mut these {
            leg.signature = signature.to_owned();
        }
        assert_eq!(ledger::sum_by_asset(&these), ledger::balance_changes(tx, W));
        assert_eq!(
            with_position(&these),
            [
                (OperationType::NetworkFee, SOL, -5_000, None),
                (OperationType::Swap, JL_USDC, jl, None),
                (OperationType::Swap, USDC, usdc, None),
            ]
        );
        assert!(
            these[1..]
                .iter()
                .all(|l| l.venue.as_deref() == Some("Jupiter Lend Earn"))
        );
        legs.extend(these);
    }
    // No `interest` and no income: the $1 of growth is realized as a gain
    // when the shares are redeemed: proceeds $101 less the withdrawal's
    // network fee (5,000 lamports at $200 = $0.001, a cost of the
    // disposal, §1.1001-7(b)(2)), basis $100 (the deposit's own fee
    // reduces the proceeds of the USDC it disposed of instead): $0.999.
    let events = events(&legs);
    assert!(!events.iter().any(|e| e.kind == EventKind::Income));
    let result = replay(&events, Method::Fifo);
    let jl_gain: Vec<Option<Decimal>> = result
        .disposals
        .iter()
        .filter(|d| d.asset == JL_USDC)
        .map(|d| d.gain)
        .collect();
    assert_eq!(jl_gain, [Some(Decimal::new(999, 3))]);
}

// Zaps ---------------------------------------------------------------------

const SWAP_AUTH: &str = "SwapAuth11111111111111111111111111111111111";
const SWAP_VAULT_RAY: &str = "SwVauRay111111111111111111111111111111111111";
const SWAP_VAULT_USDC: &str = "SwVauUsdc11111111111111111111111111111111111";
const TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

/// A parsed SPL Token `transfer`, as `jsonParsed` shows an inner one.
fn transfer(source: &str, destination: &str, authority: &str, amount: u64) -> Value {
    json!({"program": "spl-token", "programId": TOKEN, "parsed": {"type": "transfer",
           "info": {"source": source, "destination": destination, "authority": authority,
                    "amount": amount.to_string()}}})
}

/// A zap's accounts: the wallet's USDC, RAY and LP accounts, the Meteora
/// pool's vaults (owned by POOL_AUTH) and a Raydium AMM v4 pool's vaults
/// (owned by SWAP_AUTH) the swap part goes through.
#[allow(clippy::too_many_arguments)]
fn zap_tx(
    usdc: Side,
    ray: Side,
    lp: Side,
    vaults: (Side, Side),
    swap_vaults: (Side, Side),
    first: (Value, Vec<Value>),
    second: (Value, Vec<Value>),
) -> TxView {
    Build::default()
        .account(W, true, START, START - FEE)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(RAY_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(LP_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_USDC, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_RAY, false, TOKEN_RENT, TOKEN_RENT)
        .account(SWAP_VAULT_USDC, false, TOKEN_RENT, TOKEN_RENT)
        .account(SWAP_VAULT_RAY, false, TOKEN_RENT, TOKEN_RENT)
        .token(USDC_ATA, USDC, W, 6, Some(usdc.0), Some(usdc.1))
        .token(RAY_ATA, RAY, W, 6, Some(ray.0), Some(ray.1))
        .token(LP_ATA, LP_MINT, W, 6, Some(lp.0), Some(lp.1))
        .token(
            VAULT_USDC,
            USDC,
            POOL_AUTH,
            6,
            Some(vaults.0.0),
            Some(vaults.0.1),
        )
        .token(
            VAULT_RAY,
            RAY,
            POOL_AUTH,
            6,
            Some(vaults.1.0),
            Some(vaults.1.1),
        )
        .token(
            SWAP_VAULT_USDC,
            USDC,
            SWAP_AUTH,
            6,
            Some(swap_vaults.0.0),
            Some(swap_vaults.0.1),
        )
        .token(
            SWAP_VAULT_RAY,
            RAY,
            SWAP_AUTH,
            6,
            Some(swap_vaults.1.0),
            Some(swap_vaults.1.1),
        )
        .ix(first.0, first.1)
        .ix(second.0, second.1)
        .build()
}

/// Raydium AMM v4 `SwapBaseInV2` (tag 16): `[token_program, amm, authority,
/// coin_vault, pc_vault, user_source, user_destination, user_owner]`.
fn amm_v4_swap(source: &str, destination: &str) -> Value {
    native_ix(
        AMM_V4,
        16,
        &[
            TOKEN,
            "SwapPoo111111111111111111111111111111111111",
            SWAP_AUTH,
            SWAP_VAULT_RAY,
            SWAP_VAULT_USDC,
            source,
            destination,
            W,
        ],
    )
}

#[test]
fn a_zap_in_is_a_swap_of_half_and_a_deposit_of_both() {
    // The wallet puts 80 RAY in: 40 RAY are swapped for 40 USDC at a
    // Raydium AMM v4 pool (RAY_ATA -> its RAY vault, its USDC vault ->
    // USDC_ATA), then `add_balance_liquidity` deposits 40 RAY and the 40
    // USDC (RAY_ATA, USDC_ATA -> the Meteora pool's vaults) and mints 30 LP.
    // Wallet: RAY 80 -> 0, USDC 100 -> 100, LP 0 -> 30.
    let add = layout(
        16,
        &[
            (0, POOL),
            (1, LP_MINT),
            (2, LP_ATA),
            (11, USDC_ATA),
            (12, RAY_ATA),
            (13, W),
        ],
    );
    let tx = zap_tx(
        (100_000_000, 100_000_000),
        (80_000_000, 0),
        (0, 30_000_000),
        ((1_000_000_000, 1_040_000_000), (500_000_000, 540_000_000)),
        ((900_000_000, 860_000_000), (700_000_000, 740_000_000)),
        (
            amm_v4_swap(RAY_ATA, USDC_ATA),
            vec![
                transfer(RAY_ATA, SWAP_VAULT_RAY, W, 40_000_000),
                transfer(SWAP_VAULT_USDC, USDC_ATA, SWAP_AUTH, 40_000_000),
            ],
        ),
        (
            anchor_ix(METEORA_POOLS, "add_balance_liquidity", &refs(&add)),
            vec![
                transfer(USDC_ATA, VAULT_USDC, W, 40_000_000),
                transfer(RAY_ATA, VAULT_RAY, W, 40_000_000),
            ],
        ),
    );
    let legs = conserves(&tx, Some(LP_MINT));
    // The deposit is what `add_balance_liquidity` moved (40 RAY, 40 USDC)
    // and the LP it minted; what is left of the change (RAY -80 + 40 = -40,
    // USDC 0 + 40 = +40) is the swap.
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::PositionDeposit, RAY, -40_000_000, Some(POOL)),
            (
                OperationType::PositionDeposit,
                USDC,
                -40_000_000,
                Some(POOL)
            ),
            (
                OperationType::PositionDeposit,
                LP_MINT,
                30_000_000,
                Some(POOL)
            ),
            (OperationType::Swap, RAY, -40_000_000, None),
            (OperationType::Swap, USDC, 40_000_000, None),
        ]
    );
    assert!(
        legs[4..].iter().all(|l| l
            .venue
            .as_deref()
            .is_some_and(|v| v.contains("Raydium AMM v4"))),
        "{legs:#?}"
    );
    // Cost basis: the 40 RAY swapped are disposed of ($40 of proceeds at
    // $1 a unit) and 40 USDC acquired; the deposited RAY and USDC are
    // locked, not sold.
    let events = events(&legs);
    let disposed: Vec<(&str, Decimal)> = events
        .iter()
        .filter(|e| e.kind == EventKind::Dispose)
        .map(|e| (e.asset.as_str(), e.quantity))
        .collect();
    assert_eq!(
        disposed,
        [(SOL, Decimal::new(5_000, 9)), (RAY, Decimal::new(40, 0))]
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e.kind == EventKind::PositionLock)
            .count(),
        2
    );
}

#[test]
fn a_zap_out_is_a_withdrawal_of_both_and_a_swap_of_one() {
    // `remove_balance_liquidity` burns 30 LP and pays 50 USDC and 25 RAY
    // out of the Meteora pool's vaults; then the 25 RAY are swapped for 24
    // USDC at a Raydium AMM v4 pool. Wallet: USDC 100 -> 174, RAY 0 -> 0,
    // LP 30 -> 0.
    let remove = layout(
        16,
        &[
            (0, POOL),
            (1, LP_MINT),
            (2, LP_ATA),
            (11, USDC_ATA),
            (12, RAY_ATA),
            (13, W),
        ],
    );
    let tx = zap_tx(
        (100_000_000, 174_000_000),
        (0, 0),
        (30_000_000, 0),
        ((1_040_000_000, 990_000_000), (540_000_000, 515_000_000)),
        ((860_000_000, 836_000_000), (740_000_000, 765_000_000)),
        (
            anchor_ix(METEORA_POOLS, "remove_balance_liquidity", &refs(&remove)),
            vec![
                transfer(VAULT_USDC, USDC_ATA, POOL_AUTH, 50_000_000),
                transfer(VAULT_RAY, RAY_ATA, POOL_AUTH, 25_000_000),
            ],
        ),
        (
            amm_v4_swap(RAY_ATA, USDC_ATA),
            vec![
                transfer(RAY_ATA, SWAP_VAULT_RAY, W, 25_000_000),
                transfer(SWAP_VAULT_USDC, USDC_ATA, SWAP_AUTH, 24_000_000),
            ],
        ),
    );
    let legs = conserves(&tx, Some(LP_MINT));
    // Withdrawn: 25 RAY and 50 USDC, the LP handed back; left: USDC 74 -
    // 50 = +24 and RAY 0 - 25 = -25 (RAY, unchanged in the balances, joins
    // the remaining changes last), the swap.
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::PositionWithdraw, RAY, 25_000_000, Some(POOL)),
            (
                OperationType::PositionWithdraw,
                USDC,
                50_000_000,
                Some(POOL)
            ),
            (
                OperationType::PositionWithdraw,
                LP_MINT,
                -30_000_000,
                Some(POOL)
            ),
            (OperationType::Swap, USDC, 24_000_000, None),
            (OperationType::Swap, RAY, -25_000_000, None),
        ]
    );
}

#[test]
fn liquidity_transfers_that_match_the_whole_change_are_no_zap() {
    // The same deposit with no swap beside it: its transfers are the
    // wallet's whole change, so the plain reading stands.
    let add = layout(
        16,
        &[
            (0, POOL),
            (1, LP_MINT),
            (2, LP_ATA),
            (11, USDC_ATA),
            (12, RAY_ATA),
            (13, W),
        ],
    );
    let tx = zap_tx(
        (100_000_000, 60_000_000),
        (80_000_000, 40_000_000),
        (0, 30_000_000),
        ((1_000_000_000, 1_040_000_000), (500_000_000, 540_000_000)),
        ((900_000_000, 900_000_000), (700_000_000, 700_000_000)),
        (
            anchor_ix(METEORA_POOLS, "add_balance_liquidity", &refs(&add)),
            vec![
                transfer(USDC_ATA, VAULT_USDC, W, 40_000_000),
                transfer(RAY_ATA, VAULT_RAY, W, 40_000_000),
            ],
        ),
        (
            json!({"programId": "ComputeBudget111111111111111111111111111111", "accounts": [], "data": "3"}),
            vec![],
        ),
    );
    let legs = conserves(&tx, Some(LP_MINT));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::PositionDeposit, RAY, -40_000_000, Some(POOL)),
            (
                OperationType::PositionDeposit,
                USDC,
                -40_000_000,
                Some(POOL)
            ),
            (
                OperationType::PositionDeposit,
                LP_MINT,
                30_000_000,
                Some(POOL)
            ),
        ]
    );
}

#[test]
fn closing_a_clmm_position_returns_its_rent_as_a_rent_refund() {
    // `decrease_liquidity_v2` then `close_position`; the personal position
    // account (2,000,000 lamports -> 0) is closed to the wallet by the
    // program: the wallet's SOL goes START -> START - 5,000 + 2,000,000.
    // That SOL is the account's rent coming back, not SOL out of the pool.
    let decrease = layout(16, &[(0, W), (1, LP_ATA), (2, POSITION), (3, POOL)]);
    let close = layout(6, &[(0, W), (1, NFT_MINT), (2, LP_ATA), (3, POSITION)]);
    let tx = Build::default()
        .account(W, true, START, START - FEE + 2_000_000)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(RAY_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(LP_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_USDC, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_RAY, false, TOKEN_RENT, TOKEN_RENT)
        .account(POSITION, false, 2_000_000, 0)
        .token(USDC_ATA, USDC, W, 6, Some(250_000_000), Some(512_000_000))
        .token(RAY_ATA, RAY, W, 6, Some(20_000_000), Some(121_000_000))
        .token(LP_ATA, NFT_MINT, W, 0, Some(1), Some(0))
        .token(
            VAULT_USDC,
            USDC,
            POOL_AUTH,
            6,
            Some(1_250_000_000),
            Some(988_000_000),
        )
        .token(
            VAULT_RAY,
            RAY,
            POOL_AUTH,
            6,
            Some(600_000_000),
            Some(499_000_000),
        )
        .ix(
            anchor_ix(CLMM, "decrease_liquidity_v2", &refs(&decrease)),
            vec![],
        )
        .ix(anchor_ix(CLMM, "close_position", &refs(&close)), vec![])
        .build();
    let legs = conserves(&tx, Some(NFT_MINT));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::RentRefund, SOL, 2_000_000, None),
            (
                OperationType::PositionWithdraw,
                RAY,
                101_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionWithdraw,
                USDC,
                262_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionWithdraw,
                NFT_MINT,
                -1,
                Some(POSITION)
            ),
        ]
    );
    assert_eq!(legs[1].counterparties[0].address, POSITION);
}

#[test]
fn fees_collected_while_removing_liquidity_are_interest_apart_from_the_withdrawal() {
    // Orca's way to empty a position: `decrease_liquidity` (authority 2,
    // position 3) pays 100 USDC and 50 RAY of liquidity out of the vaults,
    // then `collect_fees` (authority 1, position 2) pays 2 USDC and 1 RAY
    // of fees. Wallet: USDC 0 -> 102, RAY 0 -> 51. Each instruction's own
    // transfers tell the fees apart from the liquidity.
    let decrease = layout(11, &[(0, POOL), (2, W), (3, POSITION)]);
    let collect = layout(9, &[(0, POOL), (1, W), (2, POSITION)]);
    let tx = Build::default()
        .account(W, true, START, START - FEE)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(RAY_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_USDC, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_RAY, false, TOKEN_RENT, TOKEN_RENT)
        .token(USDC_ATA, USDC, W, 6, Some(0), Some(102_000_000))
        .token(RAY_ATA, RAY, W, 6, Some(0), Some(51_000_000))
        .token(
            VAULT_USDC,
            USDC,
            POOL_AUTH,
            6,
            Some(1_000_000_000),
            Some(898_000_000),
        )
        .token(
            VAULT_RAY,
            RAY,
            POOL_AUTH,
            6,
            Some(500_000_000),
            Some(449_000_000),
        )
        .ix(
            anchor_ix(WHIRLPOOLS, "decrease_liquidity", &refs(&decrease)),
            vec![
                transfer(VAULT_USDC, USDC_ATA, POOL_AUTH, 100_000_000),
                transfer(VAULT_RAY, RAY_ATA, POOL_AUTH, 50_000_000),
            ],
        )
        .ix(
            anchor_ix(WHIRLPOOLS, "collect_fees", &refs(&collect)),
            vec![
                transfer(VAULT_USDC, USDC_ATA, POOL_AUTH, 2_000_000),
                transfer(VAULT_RAY, RAY_ATA, POOL_AUTH, 1_000_000),
            ],
        )
        .build();
    let legs = ledger::legs(&tx, W);
    assert_eq!(ledger::sum_by_asset(&legs), ledger::balance_changes(&tx, W));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::Interest, RAY, 1_000_000, Some(POSITION)),
            (OperationType::Interest, USDC, 2_000_000, Some(POSITION)),
            (
                OperationType::PositionWithdraw,
                RAY,
                50_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionWithdraw,
                USDC,
                100_000_000,
                Some(POSITION)
            ),
        ]
    );
    // Together with the position: the liquidity only changed hands; what
    // the wallet and the position gained is the fee income, 1 RAY and 2
    // USDC, and the network fee went out.
    assert_eq!(
        ledger::sum_with_positions(&legs),
        BTreeMap::from([
            (RAY.to_owned(), 1_000_000),
            (USDC.to_owned(), 2_000_000),
            (SOL.to_owned(), -5_000),
        ])
    );
}

#[test]
fn a_dlmm_claim_fee_names_its_sender_in_either_published_layout() {
    // `claim_fee` `[lb_pair, position, bin_array_lower, bin_array_upper,
    // sender (4), …]`, and the later `[lb_pair, position, sender (2), …]`:
    // 3 USDC of fees (100 -> 103) out of the pool's USDC vault, either way.
    for at in [4, 2] {
        let accounts = layout(14, &[(0, POOL), (1, POSITION), (at, W)]);
        let tx = pool_tx(
            (100_000_000, 103_000_000),
            (10_000_000, 10_000_000),
            None,
            ((1_000_000_000, 997_000_000), (500_000_000, 500_000_000)),
            anchor_ix(DLMM, "claim_fee", &refs(&accounts)),
        );
        let legs = claim_conserves(&tx);
        assert_eq!(
            with_position(&legs),
            [
                (OperationType::NetworkFee, SOL, -5_000, None),
                (OperationType::Interest, USDC, 3_000_000, Some(POSITION)),
            ],
            "sender at {at}"
        );
    }
}

// Meteora DAMM v2 ------------------------------------------------------------

const DAMM_V2: &str = "cpamdpZCGKUy5JxQXB4dcpGPiikHawvSWAd6mEn1sGG";

#[test]
fn a_damm_v2_position_created_and_funded_is_a_deposit_with_its_nft_as_receipt() {
    // `create_position` (owner 0, position 4) mints the NFT (0 -> 1);
    // `add_liquidity` (position 1, owner 9) moves 60 USDC (500 -> 440) and
    // 30 RAY (80 -> 50) into the vaults.
    let create = layout(
        9,
        &[(0, W), (1, NFT_MINT), (2, LP_ATA), (3, POOL), (4, POSITION)],
    );
    let add = layout(
        14,
        &[
            (0, POOL),
            (1, POSITION),
            (2, USDC_ATA),
            (3, RAY_ATA),
            (8, LP_ATA),
            (9, W),
        ],
    );
    let tx = Build::default()
        .account(W, true, START, START - FEE)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(RAY_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(LP_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_USDC, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_RAY, false, TOKEN_RENT, TOKEN_RENT)
        .token(USDC_ATA, USDC, W, 6, Some(500_000_000), Some(440_000_000))
        .token(RAY_ATA, RAY, W, 6, Some(80_000_000), Some(50_000_000))
        .token(LP_ATA, NFT_MINT, W, 0, Some(0), Some(1))
        .token(
            VAULT_USDC,
            USDC,
            POOL_AUTH,
            6,
            Some(1_000_000_000),
            Some(1_060_000_000),
        )
        .token(
            VAULT_RAY,
            RAY,
            POOL_AUTH,
            6,
            Some(500_000_000),
            Some(530_000_000),
        )
        .ix(
            anchor_ix(DAMM_V2, "create_position", &refs(&create)),
            vec![],
        )
        .ix(anchor_ix(DAMM_V2, "add_liquidity", &refs(&add)), vec![])
        .build();
    let legs = conserves(&tx, Some(NFT_MINT));
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionDeposit,
                RAY,
                -30_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionDeposit,
                USDC,
                -60_000_000,
                Some(POSITION)
            ),
            (OperationType::PositionDeposit, NFT_MINT, 1, Some(POSITION)),
        ]
    );
    assert!(
        legs[1..]
            .iter()
            .all(|l| l.router.as_deref() == Some("Meteora DAMM v2"))
    );
    moves_no_lots_but_the_fee(&legs, EventKind::PositionLock);
}

#[test]
fn a_damm_v2_position_fee_claim_is_interest() {
    // `claim_position_fee` (position 2, signer 10): 1.5 USDC and 0.5 RAY.
    let accounts = layout(
        13,
        &[
            (1, POOL),
            (2, POSITION),
            (3, USDC_ATA),
            (4, RAY_ATA),
            (10, W),
        ],
    );
    let tx = pool_tx(
        (100_000_000, 101_500_000),
        (10_000_000, 10_500_000),
        None,
        ((1_000_000_000, 998_500_000), (500_000_000, 499_500_000)),
        anchor_ix(DAMM_V2, "claim_position_fee", &refs(&accounts)),
    );
    let legs = claim_conserves(&tx);
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::Interest, RAY, 500_000, Some(POSITION)),
            (OperationType::Interest, USDC, 1_500_000, Some(POSITION)),
        ]
    );
}
