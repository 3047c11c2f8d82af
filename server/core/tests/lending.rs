//! Lending programs (Jupiter Lend Borrow and Earn, Kamino Lend, marginfi
//! v2) and receipt-token venues (SPL stake pools, Marinade, pump.fun) on
//! hand-built `jsonParsed` transactions. No recorded lending transaction
//! is among the fixtures (server/tests/fixtures/solana holds none), so each
//! transaction here is laid out as the program's published IDL orders its
//! accounts (the decoder modules cite it) and its balances are chosen by
//! hand; expected legs are worked from those balances in the comments,
//! never from what the decoder printed. Every transaction is also checked
//! for conservation: the wallet's legs sum to its balance change.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ledger_core::ledger::{
    self, Leg, OperationType, SOL, TxView,
    protocols::{
        JUPITER_LEND_EARN, JUPITER_LEND_LIQUIDITY, JUPITER_LEND_VAULTS, KAMINO_LEND, MARGINFI_V2,
        MARINADE, PUMP_FUN, SPL_STAKE_POOL,
    },
};
use serde_json::{Value, json};

mod support;
use support::{Build, FEE};

const W: &str = "Wa11et1111111111111111111111111111111111111";
const OTHER: &str = "0ther11111111111111111111111111111111111111";
const TMP: &str = "WsoLTmp111111111111111111111111111111111111";
const POSITION: &str = "Posit1on11111111111111111111111111111111111";
const POSITION_MINT: &str = "PosMint1111111111111111111111111111111111111";
const NFT_ATA: &str = "NftAta11111111111111111111111111111111111111";
const VAULT: &str = "L1qVau1t11111111111111111111111111111111111";
const VAULT_AUTH: &str = "L1qAuth111111111111111111111111111111111111";
const USDC_ATA: &str = "UsdcAta1111111111111111111111111111111111111";
const JUPSOL_ATA: &str = "JupsoLAta11111111111111111111111111111111111";
const OBLIGATION: &str = "ob1igation1111111111111111111111111111111111";
const MARGIN_ACCOUNT: &str = "Margin1111111111111111111111111111111111111";
const SYSTEM: &str = "11111111111111111111111111111111";
const TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const NATIVE_MINT: &str = "So11111111111111111111111111111111111111112";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const JUPSOL: &str = "jupSoLaHXQiZZTSfEWMTRRgpnyFm8f6sZdosWBjx93v";
const TOKEN_RENT: u64 = 2_039_280;
const MINT_RENT: u64 = 1_461_600;
const POSITION_RENT: u64 = 2_500_000;

fn create_account(funder: &str, account: &str, lamports: u64) -> Value {
    json!({"program": "system", "programId": SYSTEM, "parsed": {"type": "createAccount",
        "info": {"source": funder, "newAccount": account, "lamports": lamports, "space": 165,
                 "owner": TOKEN}}})
}

fn token_transfer(source: &str, destination: &str, authority: &str, amount: u64) -> Value {
    json!({"program": "spl-token", "programId": TOKEN, "parsed": {"type": "transfer",
        "info": {"source": source, "destination": destination, "authority": authority,
                 "amount": amount.to_string()}}})
}

fn close_account(account: &str, destination: &str) -> Value {
    json!({"program": "spl-token", "programId": TOKEN, "parsed": {"type": "closeAccount",
        "info": {"account": account, "destination": destination, "owner": W}}})
}

fn sha_tag(name: &str) -> [u8; 8] {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("global:{name}").as_bytes());
    let mut out = [0u8; 8];
    out.copy_from_slice(&digest[..8]);
    out
}

/// A raw (unparsed) Anchor instruction: `name`'s discriminator and some
/// argument bytes, over `accounts` in the IDL's order.
fn anchor_ix(program: &str, name: &str, accounts: &[&str]) -> Value {
    let mut data = sha_tag(name).to_vec();
    data.extend_from_slice(&[0u8; 16]);
    json!({"programId": program, "accounts": accounts, "data": bs58::encode(data).into_string()})
}

/// `n` placeholder accounts named after `prefix`, for slots the decoder
/// does not read.
fn filler(prefix: char, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let mut s = String::new();
            s.push(prefix);
            s.push_str(&"1".repeat(42 - i.to_string().len()));
            s.push_str(&i.to_string());
            s
        })
        .collect()
}

fn conserves(tx: &TxView, wallet: &str) -> Vec<Leg> {
    let legs = ledger::legs(tx, wallet);
    assert_eq!(
        ledger::sum_by_asset(&legs),
        ledger::balance_changes(tx, wallet),
        "{legs:#?}"
    );
    legs
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

/// Jupiter Lend `operate` accounts: signer 0, supply mint 8, borrow mint 9,
/// position 11 (jup-ag/jupiter-lend docs/borrow/cpi.md), the rest filler.
fn operate(supply_mint: &str, borrow_mint: &str, token_account: &str) -> Value {
    let fill = filler('F', 35);
    let mut accounts: Vec<&str> = fill.iter().map(String::as_str).collect();
    accounts[0] = W;
    accounts[1] = token_account;
    accounts[2] = token_account;
    accounts[8] = supply_mint;
    accounts[9] = borrow_mint;
    accounts[11] = POSITION;
    anchor_ix(JUPITER_LEND_VAULTS, "operate", &accounts)
}

/// The Jupiter Lend collateral deposit (see the test below).
fn jupiter_lend_deposit() -> TxView {
    let deposit = 515_000_000u64;
    let pre = 10_000_000_000u64;
    let post = pre - FEE - POSITION_RENT - MINT_RENT - TOKEN_RENT - deposit;
    Build::default()
        .account(W, true, pre, post)
        .account(TMP, false, 0, 0)
        .account(POSITION, false, 0, POSITION_RENT)
        .account(POSITION_MINT, false, 0, MINT_RENT)
        .account(NFT_ATA, false, 0, TOKEN_RENT)
        .account(VAULT, false, 50_000_000_000, 50_000_000_000 + deposit)
        .token(TMP, NATIVE_MINT, W, 9, None, None)
        .token(NFT_ATA, POSITION_MINT, W, 0, None, Some(1))
        .token(
            VAULT,
            NATIVE_MINT,
            VAULT_AUTH,
            9,
            Some(50_000_000_000 - TOKEN_RENT),
            Some(50_000_000_000 - TOKEN_RENT + deposit),
        )
        .ix(create_account(W, TMP, TOKEN_RENT + deposit), vec![])
        .ix(
            anchor_ix(
                JUPITER_LEND_VAULTS,
                "init_position",
                &[W, OTHER, OTHER, POSITION, POSITION_MINT, NFT_ATA],
            ),
            vec![
                create_account(W, POSITION, POSITION_RENT),
                create_account(W, POSITION_MINT, MINT_RENT),
                create_account(W, NFT_ATA, TOKEN_RENT),
            ],
        )
        .ix(
            operate(NATIVE_MINT, USDC, TMP),
            vec![
                anchor_ix(JUPITER_LEND_LIQUIDITY, "pre_operate", &[W]),
                token_transfer(TMP, VAULT, W, deposit),
            ],
        )
        .ix(close_account(TMP, W), vec![])
        .build()
}

#[test]
fn a_jupiter_lend_collateral_deposit_is_a_position_deposit_not_a_swap_for_the_nft() {
    // The case: 0.515 SOL deposited as collateral into a new
    // position. The wallet wraps 0.515 SOL in a temporary wSOL account (its
    // 2,039,280 rent comes back when it closes), `init_position` creates the
    // position (2,500,000), the NFT mint (1,461,600) and the NFT's token
    // account (2,039,280), and `operate` moves the 0.515 wSOL into the
    // liquidity vault. The wallet's SOL: 10 SOL - 5,000 fee - 2,500,000 -
    // 1,461,600 - 2,039,280 - 515,000,000.
    let tx = jupiter_lend_deposit();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::RentDeposit, SOL, -2_500_000, None),
            (OperationType::RentDeposit, SOL, -1_461_600, None),
            (OperationType::RentDeposit, SOL, -2_039_280, None),
            (
                OperationType::PositionDeposit,
                SOL,
                -515_000_000,
                Some(POSITION)
            ),
            // The position's NFT is its key: no swap, no disposal of SOL.
            (OperationType::TransferIn, POSITION_MINT, 1, None),
        ],
        "{legs:#?}"
    );
    assert_eq!(legs[4].router.as_deref(), Some("Jupiter Lend Borrow"));
    assert!(legs.iter().all(|l| l.operation_type != OperationType::Swap));
}

#[test]
fn repaying_sol_while_taking_jupsol_back_is_a_repay_and_a_withdrawal_not_a_swap() {
    // The other case, on a JupSOL/SOL vault (supply JupSOL, borrow
    // SOL): 0.2 SOL repaid through a temporary wSOL account, 1 JupSOL back
    // into the wallet's JupSOL account (0 -> 1,000,000,000). SOL: -5,000 fee
    // - 200,000,000 repaid (the wSOL account's rent is paid and refunded).
    let repaid = 200_000_000u64;
    let withdrawn = 1_000_000_000u64;
    let pre = 3_000_000_000u64;
    let tx = Build::default()
        .account(W, true, pre, pre - FEE - repaid)
        .account(TMP, false, 0, 0)
        .account(JUPSOL_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT, false, 9_000_000_000, 9_000_000_000 + repaid)
        .token(JUPSOL_ATA, JUPSOL, W, 9, Some(0), Some(withdrawn))
        .ix(create_account(W, TMP, TOKEN_RENT + repaid), vec![])
        .ix(
            operate(JUPSOL, NATIVE_MINT, TMP),
            vec![token_transfer(TMP, VAULT, W, repaid)],
        )
        .ix(close_account(TMP, W), vec![])
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionWithdraw,
                JUPSOL,
                1_000_000_000,
                Some(POSITION)
            ),
            (OperationType::Repay, SOL, -200_000_000, Some(POSITION)),
        ],
        "{legs:#?}"
    );
}

/// Kamino Lend accounts: owner 0, obligation 1, mint 5 (4 for repay), the
/// user's token account 9 / 8 / 6 (`klend.json`).
fn kamino(name: &str, mint_at: usize, mint: &str, user_at: usize, user: &str) -> Value {
    let fill = filler('K', 17);
    let mut accounts: Vec<&str> = fill.iter().map(String::as_str).collect();
    accounts[0] = W;
    accounts[1] = OBLIGATION;
    accounts[mint_at] = mint;
    accounts[user_at] = user;
    anchor_ix(KAMINO_LEND, name, &accounts)
}

#[test]
fn kamino_collateral_deposit_and_borrow_are_a_position_deposit_and_a_borrow() {
    // 600 USDC from the wallet's account (1,000 -> 400 USDC) into the
    // obligation as collateral, then 1.5 SOL borrowed into a temporary wSOL
    // account that closes into the wallet: SOL +1,500,000,000 - 5,000 fee.
    let tx = Build::default()
        .account(W, true, 1_000_000_000, 1_000_000_000 - FEE + 1_500_000_000)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(TMP, false, 0, 0)
        .account(VAULT, false, 0, 0)
        .token(USDC_ATA, USDC, W, 6, Some(1_000_000_000), Some(400_000_000))
        .ix(
            kamino(
                "deposit_reserve_liquidity_and_obligation_collateral_v2",
                5,
                USDC,
                9,
                USDC_ATA,
            ),
            vec![token_transfer(USDC_ATA, VAULT, W, 600_000_000)],
        )
        .ix(
            kamino("borrow_obligation_liquidity_v2", 5, NATIVE_MINT, 8, TMP),
            vec![],
        )
        .ix(close_account(TMP, W), vec![])
        .build();
    let legs = conserves(&tx, W);
    let mut rows = shape(&legs);
    rows.sort_by_key(|r| (r.0, r.2));
    assert_eq!(
        rows,
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionDeposit,
                USDC,
                -600_000_000,
                Some(OBLIGATION)
            ),
            (OperationType::Borrow, SOL, 1_500_000_000, Some(OBLIGATION)),
        ],
        "{legs:#?}"
    );
    assert!(
        legs.iter()
            .all(|l| l.operation_type == OperationType::NetworkFee
                || l.router.as_deref() == Some("Kamino Lend"))
    );
}

#[test]
fn kamino_repay_and_collateral_withdrawal_are_a_repay_and_a_position_withdraw() {
    // 250 USDC repaid (400 -> 150 USDC) and 2 SOL of collateral back through
    // a temporary wSOL account that closes into the wallet: SOL
    // +2,000,000,000 - 5,000 fee. Neither side is a swap.
    let tx = Build::default()
        .account(W, true, 1_000_000_000, 1_000_000_000 - FEE + 2_000_000_000)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(TMP, false, 0, 0)
        .token(USDC_ATA, USDC, W, 6, Some(400_000_000), Some(150_000_000))
        .ix(
            kamino("repay_obligation_liquidity", 4, USDC, 6, USDC_ATA),
            vec![],
        )
        .ix(
            kamino(
                "withdraw_obligation_collateral_and_redeem_reserve_collateral",
                5,
                NATIVE_MINT,
                9,
                TMP,
            ),
            vec![],
        )
        .ix(close_account(TMP, W), vec![])
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::Repay, USDC, -250_000_000, Some(OBLIGATION)),
            (
                OperationType::PositionWithdraw,
                SOL,
                2_000_000_000,
                Some(OBLIGATION)
            ),
        ],
        "{legs:#?}"
    );
}

/// marginfi accounts: group 0, marginfi account 1, authority 2, bank 3, the
/// wallet's token account 4 (`marginfi_0.1.7.json`).
fn marginfi(name: &str, authority: &str, token_account: &str) -> Value {
    anchor_ix(
        MARGINFI_V2,
        name,
        &[
            OTHER,
            MARGIN_ACCOUNT,
            authority,
            OTHER,
            token_account,
            VAULT,
        ],
    )
}

#[test]
fn marginfi_deposit_is_a_position_deposit_and_repay_through_wrapped_sol_is_a_repay() {
    // 250 USDC deposited (1,000 -> 750) and 0.3 SOL repaid from a wSOL
    // account the transaction creates and closes (no token balance shows
    // it, so its mint is read as wrapped SOL): SOL -300,000,000 - 5,000.
    let tx = Build::default()
        .account(W, true, 2_000_000_000, 2_000_000_000 - FEE - 300_000_000)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(TMP, false, 0, 0)
        .account(VAULT, false, 0, 300_000_000)
        .token(USDC_ATA, USDC, W, 6, Some(1_000_000_000), Some(750_000_000))
        .ix(
            marginfi("lending_account_deposit", W, USDC_ATA),
            vec![token_transfer(USDC_ATA, VAULT, W, 250_000_000)],
        )
        .ix(create_account(W, TMP, TOKEN_RENT + 300_000_000), vec![])
        .ix(marginfi("lending_account_repay", W, TMP), vec![])
        .ix(close_account(TMP, W), vec![])
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (
                OperationType::PositionDeposit,
                USDC,
                -250_000_000,
                Some(MARGIN_ACCOUNT)
            ),
            (
                OperationType::Repay,
                SOL,
                -300_000_000,
                Some(MARGIN_ACCOUNT)
            ),
        ],
        "{legs:#?}"
    );
}

#[test]
fn a_lending_instruction_of_another_authority_does_not_name_the_wallets_legs() {
    // A liquidator (OTHER) signs a marginfi withdrawal for its own account;
    // the wallet only receives 10 USDC from it in the same transaction: a
    // plain transfer_in, not a position withdrawal.
    let tx = Build::default()
        .account(OTHER, true, 1_000_000_000, 1_000_000_000 - FEE)
        .account(W, false, 1_000_000_000, 1_000_000_000)
        .account(USDC_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT, false, TOKEN_RENT, TOKEN_RENT)
        .token(USDC_ATA, USDC, W, 6, Some(0), Some(10_000_000))
        .token(VAULT, USDC, OTHER, 6, Some(10_000_000), Some(0))
        .ix(marginfi("lending_account_withdraw", OTHER, VAULT), vec![])
        .ix(token_transfer(VAULT, USDC_ATA, OTHER, 10_000_000), vec![])
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [(OperationType::TransferIn, USDC, 10_000_000, None)]
    );
}

/// A swap of SOL for a receipt token through `program`: the wallet pays
/// `paid` lamports and its receipt account goes 0 -> `got`.
fn receipt_swap(program: &str, receipt: &str, paid: u64, got: u64) -> Vec<Leg> {
    let pre = 5_000_000_000u64;
    let tx = Build::default()
        .account(W, true, pre, pre - FEE - paid)
        .account(JUPSOL_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT, false, 1_000_000_000, 1_000_000_000 + paid)
        .token(JUPSOL_ATA, receipt, W, 9, Some(0), Some(got))
        .ix(
            anchor_ix(program, "deposit", &[W, VAULT, JUPSOL_ATA]),
            vec![],
        )
        .build();
    conserves(&tx, W)
}

#[test]
fn stake_pool_marinade_and_pump_fun_trades_are_swaps_named_by_their_venue() {
    // Each: 1 SOL out, the receipt in; both sides are the swap's legs.
    for (program, venue) in [
        (SPL_STAKE_POOL, "SPL Stake Pool"),
        (MARINADE, "Marinade"),
        (PUMP_FUN, "pump.fun"),
        (JUPITER_LEND_EARN, "Jupiter Lend Earn"),
    ] {
        let legs = receipt_swap(program, JUPSOL, 1_000_000_000, 880_000_000);
        assert_eq!(
            shape(&legs),
            [
                (OperationType::NetworkFee, SOL, -5_000, None),
                (OperationType::Swap, SOL, -1_000_000_000, None),
                (OperationType::Swap, JUPSOL, 880_000_000, None),
            ],
            "{program}"
        );
        for swap in &legs[1..] {
            assert_eq!(swap.venue.as_deref(), Some(venue), "{program}");
        }
    }
}

#[test]
fn lending_programs_are_known_so_no_longer_listed_as_unknown() {
    let legs_tx = Build::default()
        .account(W, true, 1_000_000_000, 1_000_000_000 - FEE)
        .ix(marginfi("lending_account_deposit", W, USDC_ATA), vec![])
        .ix(
            kamino("repay_obligation_liquidity", 4, USDC, 6, USDC_ATA),
            vec![],
        )
        .ix(operate(NATIVE_MINT, USDC, TMP), vec![])
        .build();
    assert!(ledger::protocols::unknown_programs(&legs_tx).is_empty());
}

#[test]
fn a_jito_tip_is_a_tip_leg_and_the_swap_keeps_its_own_amount() {
    // A swap of 1 SOL for 0.88 JupSOL that also tips 1,000,000 lamports to
    // a Jito tip account: SOL -5,000 fee - 1,000,000 tip - 1,000,000,000.
    let tip_account = "96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5";
    let pre = 5_000_000_000u64;
    let tx = Build::default()
        .account(W, true, pre, pre - FEE - 1_000_000 - 1_000_000_000)
        .account(JUPSOL_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(VAULT, false, 1_000_000_000, 2_000_000_000)
        .account(tip_account, false, 1, 1_000_001)
        .token(JUPSOL_ATA, JUPSOL, W, 9, Some(0), Some(880_000_000))
        .ix(
            anchor_ix(SPL_STAKE_POOL, "deposit", &[W, VAULT, JUPSOL_ATA]),
            vec![],
        )
        .ix(
            json!({"program": "system", "programId": SYSTEM, "parsed": {"type": "transfer",
                "info": {"source": W, "destination": tip_account, "lamports": 1_000_000}}}),
            vec![],
        )
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000, None),
            (OperationType::Tip, SOL, -1_000_000, None),
            (OperationType::Swap, SOL, -1_000_000_000, None),
            (OperationType::Swap, JUPSOL, 880_000_000, None),
        ]
    );
    assert_eq!(legs[1].counterparties[0].address, tip_account);
}

#[test]
fn the_collateral_deposit_realizes_nothing_and_keeps_the_sols_lots() {
    // The deposit's legs, priced at $200 a SOL, into the basis engine's
    // events: the 0.515 SOL is locked in a position (no disposal, so no
    // gain on Form 8949); the only SOL disposal is the 5,000-lamport fee.
    use ledger_core::basis::{EventKind, LegInput, events_from_legs};
    use rust_decimal::Decimal;
    let tx = jupiter_lend_deposit();
    let legs = ledger::legs(&tx, W);
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
            usd_value: (l.mint == SOL).then(|| {
                Decimal::from(200) * Decimal::from(l.amount.abs()) / Decimal::from(1_000_000_000)
            }),
            position: l.position.clone(),
        })
        .collect();
    let events = events_from_legs(&inputs, true);
    let sol_disposals: Vec<Decimal> = events
        .iter()
        .filter(|e| e.asset == SOL && e.kind == EventKind::Dispose)
        .map(|e| e.quantity)
        .collect();
    assert_eq!(sol_disposals, [Decimal::new(5_000, 9)]);
    assert!(events.iter().any(|e| e.asset == SOL
        && e.kind == EventKind::PositionLock
        && e.quantity == Decimal::new(515_000_000, 9)));
}
