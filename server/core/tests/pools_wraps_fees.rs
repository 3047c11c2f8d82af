//! Liquidity positions in AMM pools (Orca Whirlpools, Raydium CPMM,
//! Meteora DLMM), wrapping and unwrapping SOL, and Token-2022 transfer
//! fees, on hand-built `jsonParsed` and raw transactions (no recorded one
//! is among the fixtures; instruction accounts are laid out in the order
//! the programs' IDLs give, cited in `ledger::protocols::liquidity`). Balances are chosen by hand; expected legs are worked
//! from them in the comments, never from what the decoder printed, and
//! every transaction is checked for conservation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ledger_core::basis::{EventKind, LegInput, events_from_legs};
use ledger_core::ledger::{self, Leg, OperationType, SOL, TxView};
use rust_decimal::Decimal;
use serde_json::{Value, json};

mod support;
use support::{Build, FEE};

const W: &str = "Wa11et1111111111111111111111111111111111111";
const OTHER: &str = "0ther11111111111111111111111111111111111111";
const WSOL_ATA: &str = "WsoLAta111111111111111111111111111111111111";
const SRC: &str = "SrcAta11111111111111111111111111111111111111";
const DST: &str = "DstAta11111111111111111111111111111111111111";
const FEE_MINT: &str = "FeeMint111111111111111111111111111111111111";
const SYSTEM: &str = "11111111111111111111111111111111";
const TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const TOKEN_2022: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
const NATIVE_MINT: &str = "So11111111111111111111111111111111111111112";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const USDC_ATA: &str = "UsdcAta1111111111111111111111111111111111111";
const LP_ATA: &str = "LpAta111111111111111111111111111111111111111";
const LP_MINT: &str = "LpMint11111111111111111111111111111111111111";
const POSITION: &str = "Posit1on11111111111111111111111111111111111";
const POOL: &str = "Poo11111111111111111111111111111111111111111";
const WHIRLPOOLS: &str = "whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc";
const CPMM: &str = "CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C";
const DLMM: &str = "LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo";
const TOKEN_RENT: u64 = 2_039_280;
const START: u64 = 10_000_000_000;
const ONE_SOL: u64 = 1_000_000_000;

/// A raw Anchor instruction: `name`'s discriminator and some argument
/// bytes over `accounts`.
fn anchor_ix(program: &str, name: &str, accounts: &[&str]) -> Value {
    use sha2::{Digest, Sha256};
    let mut data = Sha256::digest(format!("global:{name}").as_bytes())[..8].to_vec();
    data.extend_from_slice(&[0u8; 24]);
    json!({"programId": program, "accounts": accounts, "data": bs58::encode(data).into_string()})
}

/// `n` placeholder accounts, for slots the decoder does not read.
fn filler(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("F{}{i}", "1".repeat(42 - i.to_string().len())))
        .collect()
}

fn shape(legs: &[Leg]) -> Vec<(OperationType, &str, i128)> {
    legs.iter()
        .map(|l| (l.operation_type, l.mint.as_str(), l.amount))
        .collect()
}

/// The wallet's legs sum to its balance change; and, where no leg names a
/// position (wraps, fees), also together with positions. A pool position's
/// tokens sit in the pool's vaults, which the position account does not
/// own, so a transaction cannot show the position's own balance: as for
/// lending, the wallet-alone check is the one that covers every leg.
fn conserves(tx: &TxView, wallet: &str) -> Vec<Leg> {
    let legs = ledger::legs(tx, wallet);
    assert_eq!(
        ledger::sum_by_asset(&legs),
        ledger::balance_changes(tx, wallet),
        "{legs:#?}"
    );
    if legs.iter().all(|l| l.position.is_none()) {
        assert_eq!(
            ledger::sum_with_positions(&legs),
            ledger::balance_changes_with_positions(tx, wallet, &legs),
            "{legs:#?}"
        );
    }
    legs
}

/// Cost-basis events of `legs`, SOL and wSOL priced at $200.
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
            usd_value: Some(
                Decimal::from(200) * Decimal::from(l.amount.abs()) / Decimal::from(ONE_SOL),
            ),
            position: l.position.clone(),
        })
        .collect();
    events_from_legs(&inputs, true)
}

/// The wallet creates its wSOL account (rent 2,039,280), sends 1 SOL into
/// it and syncs: SOL START -> START - 5,000 - 2,039,280 - 1,000,000,000;
/// the account 0 -> 2,039,280 + 1,000,000,000 lamports, of which
/// 1,000,000,000 are its wSOL balance (absent before, since it did not exist).
fn wrap() -> TxView {
    let w_post = START - FEE - TOKEN_RENT - ONE_SOL;
    Build::default()
        .account(W, true, START, w_post)
        .account(WSOL_ATA, false, 0, TOKEN_RENT + ONE_SOL)
        .account(SYSTEM, false, 1, 1)
        .account(TOKEN, false, 1, 1)
        .token(WSOL_ATA, NATIVE_MINT, W, 9, None, Some(ONE_SOL))
        .ix(
            json!({"program": "system", "programId": SYSTEM, "parsed": {"type": "createAccount",
                "info": {"source": W, "newAccount": WSOL_ATA, "lamports": TOKEN_RENT, "space": 165,
                         "owner": TOKEN}}}),
            vec![],
        )
        .ix(
            json!({"program": "system", "programId": SYSTEM, "parsed": {"type": "transfer",
                "info": {"source": W, "destination": WSOL_ATA, "lamports": ONE_SOL}}}),
            vec![],
        )
        .ix(
            json!({"program": "spl-token", "programId": TOKEN, "parsed": {"type": "syncNative",
                "info": {"account": WSOL_ATA}}}),
            vec![],
        )
        .build()
}

/// The wallet closes its wSOL account holding 1 wSOL into itself: SOL
/// START -> START - 5,000 + 2,039,280 + 1,000,000,000.
fn unwrap() -> TxView {
    let w_post = START - FEE + TOKEN_RENT + ONE_SOL;
    Build::default()
        .account(W, true, START, w_post)
        .account(WSOL_ATA, false, TOKEN_RENT + ONE_SOL, 0)
        .account(TOKEN, false, 1, 1)
        .token(WSOL_ATA, NATIVE_MINT, W, 9, Some(ONE_SOL), None)
        .ix(
            json!({"program": "spl-token", "programId": TOKEN, "parsed": {"type": "closeAccount",
                "info": {"account": WSOL_ATA, "destination": W, "owner": W}}}),
            vec![],
        )
        .build()
}

#[test]
fn wrapping_sol_is_no_swap_and_moves_no_lots() {
    let legs = conserves(&wrap(), W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::RentDeposit, SOL, -2_039_280),
            (OperationType::PositionDeposit, SOL, -1_000_000_000),
            (OperationType::PositionWithdraw, NATIVE_MINT, 1_000_000_000),
        ]
    );
    assert!(legs.iter().all(|l| l.position.is_none()));
    assert_eq!(legs[3].counterparties[0].address, WSOL_ATA);
    // One asset for cost basis: 1 SOL locked and released as SOL, so
    // the only disposal is the network fee.
    let events = events(&legs);
    assert!(events.iter().all(|e| e.asset == SOL), "{events:#?}");
    let disposed: Vec<Decimal> = events
        .iter()
        .filter(|e| e.kind == EventKind::Dispose)
        .map(|e| e.quantity)
        .collect();
    assert_eq!(disposed, [Decimal::new(5_000, 9)]);
    assert!(!events.iter().any(|e| e.kind == EventKind::Acquire));
}

#[test]
fn unwrapping_sol_is_no_swap_and_moves_no_lots() {
    let legs = conserves(&unwrap(), W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::RentRefund, SOL, 2_039_280),
            (OperationType::PositionDeposit, NATIVE_MINT, -1_000_000_000),
            (OperationType::PositionWithdraw, SOL, 1_000_000_000),
        ]
    );
    let events = events(&legs);
    assert!(events.iter().all(|e| e.asset == SOL), "{events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Acquire | EventKind::Income))
    );
}

#[test]
fn paying_with_wsol_beside_sol_leaves_the_rest_a_swap() {
    // The wallet's wSOL account grows by 1 SOL while 3 SOL leave the
    // wallet and 50 tokens arrive: 1 SOL was wrapped, 2 SOL bought the
    // tokens (the overlap of SOL out and wSOL in is the wrap).
    let w_post = START - FEE - 3 * ONE_SOL;
    let tx = Build::default()
        .account(W, true, START, w_post)
        .account(WSOL_ATA, false, TOKEN_RENT, TOKEN_RENT + ONE_SOL)
        .account(SRC, false, TOKEN_RENT, TOKEN_RENT)
        .token(WSOL_ATA, NATIVE_MINT, W, 9, Some(0), Some(ONE_SOL))
        .token(SRC, FEE_MINT, W, 6, Some(0), Some(50_000_000))
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::PositionDeposit, SOL, -1_000_000_000),
            (OperationType::PositionWithdraw, NATIVE_MINT, 1_000_000_000),
            (OperationType::Swap, SOL, -2_000_000_000),
            (OperationType::Swap, FEE_MINT, 50_000_000),
        ]
    );
}

/// The wallet sends 100 tokens (6 decimals) of a mint whose transfer fee
/// withholds 1% (1 token) in the recipient's account: SRC 500 -> 400,
/// DST 0 -> 99 (the withheld 1 is held apart in the account's
/// `TransferFeeAmount` extension, not in its balance).
fn fee_transfer(ix: Value) -> TxView {
    Build::default()
        .account(W, true, START, START - FEE)
        .account(SRC, false, TOKEN_RENT, TOKEN_RENT)
        .account(DST, false, TOKEN_RENT, TOKEN_RENT)
        .account(FEE_MINT, false, 1, 1)
        .account(OTHER, false, 1, 1)
        .account(TOKEN_2022, false, 1, 1)
        .token(SRC, FEE_MINT, W, 6, Some(500_000_000), Some(400_000_000))
        .token(DST, FEE_MINT, OTHER, 6, Some(0), Some(99_000_000))
        .ix(ix, vec![])
        .build()
}

fn expect_fee_legs(tx: &TxView) {
    let legs = conserves(tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::PlatformFee, FEE_MINT, -1_000_000),
            (OperationType::TransferOut, FEE_MINT, -99_000_000),
        ]
    );
    assert_eq!(legs[1].counterparties[0].address, OTHER);
    // The recipient's side is what it was credited: 99 tokens.
    let theirs = conserves(tx, OTHER);
    assert_eq!(
        shape(&theirs),
        [(OperationType::TransferIn, FEE_MINT, 99_000_000)]
    );
}

#[test]
fn a_token_2022_transfer_fee_is_a_fee_leg_of_its_own_parsed() {
    expect_fee_legs(&fee_transfer(json!({
        "program": "spl-token-2022", "programId": TOKEN_2022,
        "parsed": {"type": "transferCheckedWithFee", "info": {
            "source": SRC, "mint": FEE_MINT, "destination": DST, "authority": W,
            "tokenAmount": {"amount": "100000000", "decimals": 6},
            "feeAmount": {"amount": "1000000", "decimals": 6}}}
    })));
}

#[test]
fn a_token_2022_transfer_fee_is_a_fee_leg_of_its_own_raw() {
    // TransferFeeExtension (26), TransferCheckedWithFee (1), amount
    // 100,000,000 u64 LE, decimals 6, fee 1,000,000 u64 LE.
    let mut data = vec![26u8, 1];
    data.extend_from_slice(&100_000_000u64.to_le_bytes());
    data.push(6);
    data.extend_from_slice(&1_000_000u64.to_le_bytes());
    expect_fee_legs(&fee_transfer(json!({
        "programId": TOKEN_2022,
        "accounts": [SRC, FEE_MINT, DST, W],
        "data": bs58::encode(data).into_string()
    })));
}

/// A pool transaction of the wallet's: its SOL and USDC change by the
/// given amounts (beside the 5,000 fee), and `other` (a second token or an
/// LP token) by `other_delta`; `ix` is the pool's instruction.
fn pool_tx(sol: i64, usdc: (u64, u64), other: Option<(&str, u64, u64)>, ix: Value) -> TxView {
    let post = u64::try_from(i64::try_from(START - FEE).unwrap() + sol).unwrap();
    let mut b = Build::default()
        .account(W, true, START, post)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(LP_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(POSITION, false, 1, 1)
        .account(POOL, false, 1, 1)
        .token(USDC_ATA, USDC, W, 6, Some(usdc.0), Some(usdc.1));
    if let Some((mint, pre, post)) = other {
        b = b.token(LP_ATA, mint, W, 6, Some(pre), Some(post));
    }
    b.ix(ix, vec![]).build()
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

/// `[whirlpool, token_program, position_authority, position, …]`
fn whirlpool(name: &str, authority: &str) -> Value {
    let fill = filler(11);
    let mut accounts: Vec<&str> = fill.iter().map(String::as_str).collect();
    accounts[0] = POOL;
    accounts[2] = authority;
    accounts[3] = POSITION;
    anchor_ix(WHIRLPOOLS, name, &accounts)
}

#[test]
fn adding_liquidity_to_a_whirlpool_is_a_position_deposit_not_a_sale() {
    // 1 SOL and 150 USDC (500 -> 350) into the position: both leave the
    // wallet into the position; nothing is sold.
    let tx = pool_tx(
        -(ONE_SOL as i64),
        (500_000_000, 350_000_000),
        None,
        whirlpool("increase_liquidity", W),
    );
    let legs = conserves(&tx, W);
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionDeposit,
                SOL,
                -1_000_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionDeposit,
                USDC,
                -150_000_000,
                Some(POSITION)
            ),
        ]
    );
    assert!(
        legs[1..]
            .iter()
            .all(|l| l.router.as_deref() == Some("Orca Whirlpools"))
    );
    // The only disposal is the network fee; 1 SOL is locked in the position.
    let events = events(&legs);
    let disposed: Vec<(&str, Decimal)> = events
        .iter()
        .filter(|e| e.kind == EventKind::Dispose)
        .map(|e| (e.asset.as_str(), e.quantity))
        .collect();
    assert_eq!(disposed, [(SOL, Decimal::new(5_000, 9))]);
}

#[test]
fn removing_liquidity_from_a_whirlpool_v2_is_a_position_withdraw() {
    // decrease_liquidity_v2 puts the authority at 4 and the position at 5.
    let fill = filler(15);
    let mut accounts: Vec<&str> = fill.iter().map(String::as_str).collect();
    accounts[0] = POOL;
    accounts[4] = W;
    accounts[5] = POSITION;
    let tx = pool_tx(
        1_010_000_000,
        (350_000_000, 490_000_000),
        None,
        anchor_ix(WHIRLPOOLS, "decrease_liquidity_v2", &accounts),
    );
    let legs = conserves(&tx, W);
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionWithdraw,
                SOL,
                1_010_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionWithdraw,
                USDC,
                140_000_000,
                Some(POSITION)
            ),
        ]
    );
}

#[test]
fn another_wallets_liquidity_instruction_leaves_the_conservative_reading() {
    // The position's authority is someone else: the wallet's own SOL out
    // and USDC in stay a swap at the venue.
    let tx = pool_tx(
        -(ONE_SOL as i64),
        (0, 150_000_000),
        None,
        whirlpool("increase_liquidity", OTHER),
    );
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::Swap, SOL, -1_000_000_000),
            (OperationType::Swap, USDC, 150_000_000),
        ]
    );
    assert_eq!(legs[1].venue.as_deref(), Some("Orca Whirlpools"));
}

/// `deposit` / `withdraw` `[owner, authority, pool_state, owner_lp_token, …]`
fn cpmm(name: &str) -> Value {
    let fill = filler(14);
    let mut accounts: Vec<&str> = fill.iter().map(String::as_str).collect();
    accounts[0] = W;
    accounts[2] = POOL;
    accounts[3] = LP_ATA;
    anchor_ix(CPMM, name, &accounts)
}

#[test]
fn a_cpmm_deposit_locks_the_tokens_and_its_lp_token_is_the_receipt() {
    // 0.5 SOL and 100 USDC in, 70 LP tokens back (0 -> 70,000,000).
    let tx = pool_tx(
        -500_000_000,
        (100_000_000, 0),
        Some((LP_MINT, 0, 70_000_000)),
        cpmm("deposit"),
    );
    let legs = conserves(&tx, W);
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionDeposit,
                SOL,
                -500_000_000,
                Some(POOL)
            ),
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
    assert_eq!(legs[3].router.as_deref(), Some("Raydium CPMM"));
    // The LP token opens no lot and SOL and USDC are locked, not sold.
    let events = events(&legs);
    assert!(!events.iter().any(|e| e.asset == LP_MINT), "{events:#?}");
    assert!(!events.iter().any(|e| e.kind == EventKind::Acquire));
    assert_eq!(
        events
            .iter()
            .filter(|e| e.kind == EventKind::PositionLock)
            .count(),
        2
    );
}

#[test]
fn a_cpmm_withdraw_hands_the_lp_token_back_and_releases_the_tokens() {
    let tx = pool_tx(
        510_000_000,
        (0, 98_000_000),
        Some((LP_MINT, 70_000_000, 0)),
        cpmm("withdraw"),
    );
    let legs = conserves(&tx, W);
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionWithdraw,
                SOL,
                510_000_000,
                Some(POOL)
            ),
            (
                OperationType::PositionWithdraw,
                USDC,
                98_000_000,
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
    let events = events(&legs);
    assert!(!events.iter().any(|e| e.asset == LP_MINT), "{events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| e.kind == EventKind::Dispose && e.asset != SOL)
    );
}

#[test]
fn a_dlmm_add_liquidity_by_strategy_is_a_position_deposit() {
    // `[position, lb_pair, …, sender (11), …]`
    let fill = filler(16);
    let mut accounts: Vec<&str> = fill.iter().map(String::as_str).collect();
    accounts[0] = POSITION;
    accounts[1] = POOL;
    accounts[11] = W;
    let tx = pool_tx(
        -(ONE_SOL as i64),
        (200_000_000, 0),
        None,
        anchor_ix(DLMM, "add_liquidity_by_strategy", &accounts),
    );
    let legs = conserves(&tx, W);
    assert_eq!(
        with_position(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionDeposit,
                SOL,
                -1_000_000_000,
                Some(POSITION)
            ),
            (
                OperationType::PositionDeposit,
                USDC,
                -200_000_000,
                Some(POSITION)
            ),
        ]
    );
    assert_eq!(legs[1].router.as_deref(), Some("Meteora DLMM"));
}

const JUPITER: &str = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4";
const VAULT_A: &str = "VauA1111111111111111111111111111111111111111";
const VAULT_B: &str = "VauB1111111111111111111111111111111111111111";
const TMP: &str = "WsoLTmp111111111111111111111111111111111111";

fn transfer(source: &str, destination: &str, authority: &str, amount: u64) -> Value {
    json!({"program": "spl-token", "programId": TOKEN, "parsed": {"type": "transfer",
        "info": {"source": source, "destination": destination, "authority": authority,
                 "amount": amount.to_string()}}})
}

#[test]
fn an_arbitrage_round_trip_through_sol_is_two_swaps_not_a_transfer_in() {
    // Jupiter route SOL -> USDC -> SOL through a temporary wSOL account
    // the wallet creates (rent + 1 SOL) and closes: 1 SOL out to the first
    // pool's vault, 1.01 SOL back from the second's. The wallet's SOL
    // changes by -5,000 + 10,000,000; the rent comes and goes within the
    // transaction. USDC passes through the wallet's USDC account (0 -> 0):
    // 150 in from the first pool, 150 out to the second.
    let tx = Build::default()
        .account(W, true, START, START - FEE + 10_000_000)
        .account(TMP, false, 0, 0)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_A, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_B, false, TOKEN_RENT, TOKEN_RENT)
        .account(JUPITER, false, 1, 1)
        .token(USDC_ATA, USDC, W, 6, Some(0), Some(0))
        .ix(
            json!({"program": "system", "programId": SYSTEM, "parsed": {"type": "createAccount",
                "info": {"source": W, "newAccount": TMP, "lamports": TOKEN_RENT + ONE_SOL,
                         "space": 165, "owner": TOKEN}}}),
            vec![],
        )
        .ix(
            json!({"programId": JUPITER, "accounts": [W, TMP, USDC_ATA], "data": "1111"}),
            vec![
                json!({"programId": WHIRLPOOLS, "accounts": [POOL], "data": "1111"}),
                transfer(TMP, VAULT_A, W, ONE_SOL),
                transfer(VAULT_A, USDC_ATA, POOL, 150_000_000),
                transfer(USDC_ATA, VAULT_B, W, 150_000_000),
                transfer(VAULT_B, TMP, POOL, 1_010_000_000),
            ],
        )
        .ix(
            json!({"program": "spl-token", "programId": TOKEN, "parsed": {"type": "closeAccount",
                "info": {"account": TMP, "destination": W, "owner": W}}}),
            vec![],
        )
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::Swap, SOL, -1_000_000_000),
            (OperationType::Swap, SOL, 1_010_000_000),
            (OperationType::Swap, USDC, 150_000_000),
            (OperationType::Swap, USDC, -150_000_000),
        ]
    );
    assert!(
        legs[1..]
            .iter()
            .all(|l| l.router.as_deref() == Some("Jupiter Aggregator v6")
                && l.venue.as_deref() == Some("Orca Whirlpools"))
    );
}

#[test]
fn a_one_way_transfer_with_no_round_trip_keeps_its_reading() {
    // Only a transfer out through the same accounts: no gross in, so
    // nothing is split and it stays a transfer_out.
    let tx = Build::default()
        .account(W, true, START, START - FEE)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT_A, false, TOKEN_RENT, TOKEN_RENT)
        .account(JUPITER, false, 1, 1)
        .token(USDC_ATA, USDC, W, 6, Some(150_000_000), Some(0))
        .token(VAULT_A, USDC, OTHER, 6, Some(0), Some(150_000_000))
        .ix(
            json!({"programId": JUPITER, "accounts": [W], "data": "1111"}),
            vec![transfer(USDC_ATA, VAULT_A, W, 150_000_000)],
        )
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::TransferOut, USDC, -150_000_000),
        ]
    );
}
