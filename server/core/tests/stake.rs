//! The Stake program's legs, on hand-built `jsonParsed` transactions whose
//! balances are those a real stake account would show: a stake account
//! holds the rent-exempt reserve of its 200 bytes, 2,282,880 lamports
//! ((128 + 200) bytes × 3,480 lamports per byte-year × 2 years), on top of
//! what is staked. Expected legs come from those balances, never from what
//! the decoder printed; every transaction is also checked for conservation
//! (the wallet's legs sum to its balance change).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use ledger_core::ledger::{
    self, CounterpartyKind, Direction, Leg, OperationType, SOL, TxView,
    protocols::stake::{
        self, BalanceFlow, Flow, JITO_TIP_DISTRIBUTION_PROGRAM, Mismatch, Reconciled,
        STAKE_PROGRAM, StakeAccountSeen, Standing,
    },
};
use serde_json::{Value, json};

const W: &str = "Wa11et1111111111111111111111111111111111111";
const A: &str = "StakeA1111111111111111111111111111111111111";
const B: &str = "StakeB1111111111111111111111111111111111111";
const BUYER: &str = "Buyer11111111111111111111111111111111111111";
const VOTE: &str = "Vote111111111111111111111111111111111111111";
const CRANK: &str = "Crank11111111111111111111111111111111111111";
const SYSTEM: &str = "11111111111111111111111111111111";
const RESERVE: u64 = 2_282_880;
const SOL_1: u64 = 1_000_000_000;
const FEE: u64 = 5_000;

fn tx(keys: &[(&str, bool)], pre: &[u64], post: &[u64], ixs: Value, inner: Value) -> TxView {
    let keys: Vec<Value> = keys
        .iter()
        .map(|(k, signer)| json!({"pubkey": k, "signer": signer, "writable": true, "source": "transaction"}))
        .collect();
    TxView::parse(&json!({
        "slot": 300_000_000, "blockTime": 1_730_000_000,
        "transaction": {"signatures": ["sig"], "message": {"accountKeys": keys, "instructions": ixs}},
        "meta": {"err": null, "fee": FEE, "preBalances": pre, "postBalances": post,
                 "preTokenBalances": [], "postTokenBalances": [], "innerInstructions": inner}
    }))
    .unwrap()
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

fn summary(legs: &[Leg]) -> Vec<(OperationType, i128, Option<&str>)> {
    legs.iter()
        .map(|l| {
            assert_eq!(l.mint, SOL);
            (
                l.operation_type,
                l.amount,
                l.counterparties.first().map(|c| c.address.as_str()),
            )
        })
        .collect()
}

fn create_account(funder: &str, account: &str, lamports: u64) -> Value {
    json!({"program": "system", "programId": SYSTEM, "parsed": {"type": "createAccount",
        "info": {"source": funder, "newAccount": account, "lamports": lamports, "space": 200,
                 "owner": STAKE_PROGRAM}}})
}

fn stake_ix(kind: &str, info: Value) -> Value {
    json!({"program": "stake", "programId": STAKE_PROGRAM, "parsed": {"type": kind, "info": info}})
}

fn initialize(account: &str, staker: &str, withdrawer: &str) -> Value {
    stake_ix(
        "initialize",
        json!({"stakeAccount": account, "rentSysvar": "SysvarRent111111111111111111111111111111111",
               "authorized": {"staker": staker, "withdrawer": withdrawer},
               "lockup": {"unixTimestamp": 0, "epoch": 0, "custodian": SYSTEM}}),
    )
}

fn delegate(account: &str) -> Value {
    stake_ix(
        "delegate",
        json!({"stakeAccount": account, "voteAccount": VOTE,
               "clockSysvar": "SysvarC1ock11111111111111111111111111111111",
               "stakeHistorySysvar": "SysvarStakeHistory1111111111111111111111111",
               "stakeConfigAccount": "StakeConfig11111111111111111111111111111111",
               "stakeAuthority": W}),
    )
}

#[test]
fn creating_and_delegating_a_stake_account_is_a_stake_deposit_not_rent() {
    // 10 SOL staked plus the reserve, all from the wallet.
    let funded = 10 * SOL_1 + RESERVE;
    let t = tx(
        &[(W, true), (A, true), (VOTE, false)],
        &[20 * SOL_1, 0, 1],
        &[20 * SOL_1 - FEE - funded, funded, 1],
        json!([
            create_account(W, A, funded),
            initialize(A, W, W),
            delegate(A)
        ]),
        json!([]),
    );
    let legs = conserves(&t, W);
    assert_eq!(
        summary(&legs),
        vec![
            (OperationType::NetworkFee, -(FEE as i128), None),
            (OperationType::StakeDeposit, -(funded as i128), Some(A)),
        ]
    );
    assert_eq!(legs[1].counterparties[0].direction, Direction::Out);
    assert_eq!(legs[1].index, 1);

    let seen = stake::stake_accounts_seen(&t, W, &BTreeSet::new());
    assert_eq!(
        seen,
        vec![StakeAccountSeen {
            stake_account: A.into(),
            signature: "sig".into(),
            slot: 300_000_000,
            block_time: Some(1_730_000_000),
            controlled_after: true,
            new_withdraw_authority: None,
            lamports_after: funded,
        }]
    );
}

#[test]
fn a_split_between_the_wallets_own_stake_accounts_moves_only_the_new_reserve() {
    // The example: splitting 30 SOL off A into a new B. The wallet
    // pre-funds B's reserve and pays the fee; its SOL falls by exactly
    // that, so there is no transfer_in of 30 and no rent_deposit of 30.002.
    let a_before = 100 * SOL_1 + RESERVE;
    let t = tx(
        &[(W, true), (A, false), (B, true)],
        &[SOL_1, a_before, 0],
        &[
            SOL_1 - FEE - RESERVE,
            a_before - 30 * SOL_1,
            30 * SOL_1 + RESERVE,
        ],
        json!([
            create_account(W, B, RESERVE),
            stake_ix(
                "split",
                json!({"stakeAccount": A, "newSplitAccount": B, "stakeAuthority": W,
                       "lamports": 30 * SOL_1})
            )
        ]),
        json!([]),
    );
    let legs = conserves(&t, W);
    assert_eq!(
        summary(&legs),
        vec![
            (OperationType::NetworkFee, -(FEE as i128), None),
            (OperationType::StakeDeposit, -(RESERVE as i128), Some(B)),
        ]
    );
    let seen: Vec<(String, bool)> = stake::stake_accounts_seen(&t, W, &BTreeSet::new())
        .into_iter()
        .map(|s| (s.stake_account, s.controlled_after))
        .collect();
    assert_eq!(seen, vec![(A.to_owned(), true), (B.to_owned(), true)]);
    assert_eq!(
        stake::flows(&t),
        vec![
            (B.to_owned(), Flow::Deposit(RESERVE)),
            (A.to_owned(), Flow::Withdrawal(30 * SOL_1)),
            (B.to_owned(), Flow::Deposit(30 * SOL_1)),
        ]
    );
}

#[test]
fn a_merge_of_the_wallets_stake_accounts_is_only_the_fee() {
    let a_before = 70 * SOL_1 + RESERVE;
    let b_before = 30 * SOL_1 + RESERVE;
    let t = tx(
        &[(W, true), (A, false), (B, false)],
        &[SOL_1, a_before, b_before],
        &[SOL_1 - FEE, a_before + b_before, 0],
        json!([stake_ix(
            "merge",
            json!({"destination": A, "source": B, "stakeAuthority": W,
                   "clockSysvar": "SysvarC1ock11111111111111111111111111111111",
                   "stakeHistorySysvar": "SysvarStakeHistory1111111111111111111111111"})
        )]),
        json!([]),
    );
    let legs = conserves(&t, W);
    assert_eq!(
        summary(&legs),
        vec![(OperationType::NetworkFee, -(FEE as i128), None)]
    );
    // B's whole balance, reserve included, moved into A.
    assert_eq!(
        stake::flows(&t),
        vec![
            (B.to_owned(), Flow::Withdrawal(b_before)),
            (A.to_owned(), Flow::Deposit(b_before)),
        ]
    );
}

fn withdraw(account: &str, to: &str, lamports: u64) -> Value {
    stake_ix(
        "withdraw",
        json!({"stakeAccount": account, "destination": to,
               "clockSysvar": "SysvarC1ock11111111111111111111111111111111",
               "stakeHistorySysvar": "SysvarStakeHistory1111111111111111111111111",
               "withdrawAuthority": W, "lamports": lamports}),
    )
}

#[test]
fn a_withdrawal_into_the_wallet_is_a_stake_withdraw_not_a_transfer_in() {
    // The 92.2 SOL withdrawal.
    let amount = 92_200_000_000u64;
    let a_before = amount + 5 * SOL_1;
    let t = tx(
        &[(W, true), (A, false)],
        &[SOL_1, a_before],
        &[SOL_1 - FEE + amount, a_before - amount],
        json!([withdraw(A, W, amount)]),
        json!([]),
    );
    let legs = conserves(&t, W);
    assert_eq!(
        summary(&legs),
        vec![
            (OperationType::NetworkFee, -(FEE as i128), None),
            (OperationType::StakeWithdraw, amount as i128, Some(A)),
        ]
    );
    assert_eq!(legs[1].counterparties[0].direction, Direction::In);
}

#[test]
fn a_withdrawal_paid_to_someone_else_is_released_and_disposed_of() {
    let amount = 4 * SOL_1;
    let t = tx(
        &[(W, true), (A, false), (BUYER, false)],
        &[SOL_1, 10 * SOL_1, 0],
        &[SOL_1 - FEE, 6 * SOL_1, amount],
        json!([withdraw(A, BUYER, amount)]),
        json!([]),
    );
    let legs = conserves(&t, W);
    assert_eq!(
        summary(&legs),
        vec![
            (OperationType::NetworkFee, -(FEE as i128), None),
            (OperationType::StakeWithdraw, amount as i128, Some(A)),
            (OperationType::TransferOut, -(amount as i128), Some(BUYER)),
        ]
    );
}

fn authorize(account: &str, new: &str, role: &str) -> Value {
    stake_ix(
        "authorize",
        json!({"stakeAccount": account, "clockSysvar": "SysvarC1ock11111111111111111111111111111111",
               "authority": W, "newAuthority": new, "authorityType": role}),
    )
}

#[test]
fn handing_the_withdraw_authority_to_someone_else_disposes_of_the_stake_accounts_sol() {
    let balance = 50 * SOL_1 + RESERVE;
    let t = tx(
        &[(W, true), (A, false)],
        &[SOL_1, balance],
        &[SOL_1 - FEE, balance],
        json!([
            authorize(A, BUYER, "Staker"),
            authorize(A, BUYER, "Withdrawer")
        ]),
        json!([]),
    );
    let legs = conserves(&t, W);
    assert_eq!(
        summary(&legs),
        vec![
            (OperationType::NetworkFee, -(FEE as i128), None),
            (OperationType::StakeWithdraw, balance as i128, Some(A)),
            (OperationType::TransferOut, -(balance as i128), Some(BUYER)),
        ]
    );
    let seen = stake::stake_accounts_seen(&t, W, &BTreeSet::new());
    assert_eq!(seen.len(), 1);
    assert!(!seen[0].controlled_after);
    assert_eq!(seen[0].new_withdraw_authority.as_deref(), Some(BUYER));

    // Moving only the staker role keeps the account, and its SOL, the
    // wallet's: the fee is all.
    let t = tx(
        &[(W, true), (A, false)],
        &[SOL_1, balance],
        &[SOL_1 - FEE, balance],
        json!([authorize(A, BUYER, "Staker")]),
        json!([]),
    );
    assert_eq!(
        summary(&conserves(&t, W)),
        vec![(OperationType::NetworkFee, -(FEE as i128), None)]
    );
}

#[test]
fn receiving_a_stake_account_is_a_transfer_in_that_stays_staked() {
    // BUYER's side of the sale above: W is the new withdraw authority,
    // the seller signs and pays the fee.
    let balance = 50 * SOL_1 + RESERVE;
    let t = tx(
        &[(BUYER, true), (A, false), (W, false)],
        &[SOL_1, balance, SOL_1],
        &[SOL_1 - FEE, balance, SOL_1],
        json!([stake_ix(
            "authorize",
            json!({"stakeAccount": A, "clockSysvar": "SysvarC1ock11111111111111111111111111111111",
                   "authority": BUYER, "newAuthority": W, "authorityType": "Withdrawer"})
        )]),
        json!([]),
    );
    let legs = conserves(&t, W);
    assert_eq!(
        summary(&legs),
        vec![
            (OperationType::TransferIn, balance as i128, Some(BUYER)),
            (OperationType::StakeDeposit, -(balance as i128), Some(A)),
        ]
    );
}

/// The receipt above, read from the transaction's ops: A is the wallet's
/// from here on, and the stored view says the same as the JSON (a wallet
/// scanned before receipts were read finds them from its stored views).
/// The seller's side, the staker role alone and a failed transaction
/// receive nothing.
#[test]
fn a_receipt_is_read_from_the_ops_and_from_the_stored_view_alike() {
    let balance = 50 * SOL_1 + RESERVE;
    let json = json!({
        "slot": 300_000_000, "blockTime": 1_730_000_000,
        "transaction": {"signatures": ["sig"], "message": {"accountKeys": [
            {"pubkey": BUYER, "signer": true, "writable": true, "source": "transaction"},
            {"pubkey": A, "signer": false, "writable": true, "source": "transaction"},
            {"pubkey": W, "signer": false, "writable": false, "source": "transaction"}],
            "instructions": [stake_ix(
                "authorize",
                json!({"stakeAccount": A, "clockSysvar": "SysvarC1ock11111111111111111111111111111111",
                       "authority": BUYER, "newAuthority": W, "authorityType": "Withdrawer"})
            )]}},
        "meta": {"err": null, "fee": FEE, "preBalances": [SOL_1, balance, SOL_1],
                 "postBalances": [SOL_1 - FEE, balance, SOL_1],
                 "preTokenBalances": [], "postTokenBalances": [], "innerInstructions": []}
    });
    let view = TxView::parse(&json).unwrap();
    assert_eq!(stake::received_stake_accounts(&view, W), vec![A.to_owned()]);
    assert!(stake::received_stake_accounts(&view, BUYER).is_empty());
    let stored = ledger::stored::decode(&ledger::stored::encode(&json).unwrap()).unwrap();
    assert_eq!(
        stake::received_stake_accounts(&stored, W),
        vec![A.to_owned()]
    );

    let mut staker_only = json.clone();
    staker_only["transaction"]["message"]["instructions"][0]["parsed"]["info"]["authorityType"] =
        json!("Staker");
    let view = TxView::parse(&staker_only).unwrap();
    assert!(stake::received_stake_accounts(&view, W).is_empty());

    let mut failed = json;
    failed["meta"]["err"] = json!({"InstructionError": [0, "Custom"]});
    let view = TxView::parse(&failed).unwrap();
    assert!(stake::received_stake_accounts(&view, W).is_empty());
}

#[test]
fn a_stake_account_created_for_someone_else_is_a_transfer_out_not_rent() {
    let funded = 3 * SOL_1 + RESERVE;
    let t = tx(
        &[(W, true), (A, true)],
        &[10 * SOL_1, 0],
        &[10 * SOL_1 - FEE - funded, funded],
        json!([create_account(W, A, funded), initialize(A, BUYER, BUYER)]),
        json!([]),
    );
    let legs = conserves(&t, W);
    assert_eq!(
        legs.iter()
            .map(|l| (l.operation_type, l.amount))
            .collect::<Vec<_>>(),
        vec![
            (OperationType::NetworkFee, -(FEE as i128)),
            (OperationType::TransferOut, -(funded as i128)),
        ]
    );
    assert!(stake::stake_accounts_seen(&t, W, &BTreeSet::new()).is_empty());
}

fn jito_claim(claimant: &str) -> Value {
    // Not parsed by the RPC node: program id, accounts and data as sent.
    json!({"programId": JITO_TIP_DISTRIBUTION_PROGRAM,
           "accounts": ["JitoConfig111111111111111111111111111111111", "TipDistAcct11111111111111111111111111111111",
                        "C1aimStatus11111111111111111111111111111111", claimant, CRANK, SYSTEM],
           "data": "3xTrTnPoqZ8A6vF", "stackHeight": null})
}

#[test]
fn a_jito_tip_claim_paid_to_the_wallet_is_mev_income() {
    let tip = 1_234_567u64;
    let t = tx(
        &[
            (CRANK, true),
            (W, false),
            (JITO_TIP_DISTRIBUTION_PROGRAM, false),
        ],
        &[SOL_1, 2 * SOL_1, 1],
        &[SOL_1 - FEE, 2 * SOL_1 + tip, 1],
        json!([jito_claim(W)]),
        json!([]),
    );
    let legs = conserves(&t, W);
    assert_eq!(
        summary(&legs),
        vec![(
            OperationType::MevReward,
            tip as i128,
            Some(JITO_TIP_DISTRIBUTION_PROGRAM)
        )]
    );
    assert_eq!(legs[0].counterparties[0].kind, CounterpartyKind::Program);
}

#[test]
fn a_jito_tip_claim_paid_to_the_wallets_stake_account_is_income_that_stays_staked() {
    let tip = 777u64;
    let balance = 10 * SOL_1 + RESERVE;
    let t = tx(
        &[
            (CRANK, true),
            (A, false),
            (JITO_TIP_DISTRIBUTION_PROGRAM, false),
        ],
        &[SOL_1, balance, 1],
        &[SOL_1 - FEE, balance + tip, 1],
        json!([jito_claim(A)]),
        json!([]),
    );
    let known: BTreeSet<String> = [A.to_owned()].into();
    let legs = ledger::legs_with_stake_accounts(&t, W, &known);
    // The wallet's own account did not change: the two legs cancel.
    assert_eq!(ledger::sum_by_asset(&legs), ledger::balance_changes(&t, W));
    assert_eq!(
        summary(&legs),
        vec![
            (
                OperationType::MevReward,
                tip as i128,
                Some(JITO_TIP_DISTRIBUTION_PROGRAM)
            ),
            (OperationType::StakeDeposit, -(tip as i128), Some(A)),
        ]
    );
    // Without knowing A, nothing of the wallet's moved.
    assert!(ledger::legs(&t, W).is_empty());
}

#[test]
fn a_known_stake_account_topped_up_by_a_plain_transfer_is_a_stake_deposit() {
    let t = tx(
        &[(W, true), (A, false), (SYSTEM, false)],
        &[10 * SOL_1, 5 * SOL_1, 1],
        &[8 * SOL_1 - FEE, 7 * SOL_1, 1],
        json!([{"program": "system", "programId": SYSTEM, "parsed": {"type": "transfer",
            "info": {"source": W, "destination": A, "lamports": 2 * SOL_1}}}]),
        json!([]),
    );
    let known: BTreeSet<String> = [A.to_owned()].into();
    let legs = ledger::legs_with_stake_accounts(&t, W, &known);
    assert_eq!(ledger::sum_by_asset(&legs), ledger::balance_changes(&t, W));
    assert_eq!(
        summary(&legs),
        vec![
            (OperationType::NetworkFee, -(FEE as i128), None),
            (OperationType::StakeDeposit, -2 * SOL_1 as i128, Some(A)),
        ]
    );
}

#[test]
fn a_failed_stake_transaction_costs_only_its_fee() {
    let funded = 10 * SOL_1 + RESERVE;
    let mut t = tx(
        &[(W, true), (A, true)],
        &[20 * SOL_1, 0],
        &[20 * SOL_1 - FEE, 0],
        json!([create_account(W, A, funded), initialize(A, W, W)]),
        json!([]),
    );
    t.failed = true;
    assert_eq!(
        summary(&conserves(&t, W)),
        vec![(OperationType::NetworkFee, -(FEE as i128), None)]
    );
}

/// The `json` encoding of the same instructions: bincode tag and
/// arguments, accounts by index.
#[test]
fn raw_stake_instructions_read_like_parsed_ones() {
    let key = |s: &str| bs58::decode(s).into_vec().unwrap();
    let mut create = vec![0, 0, 0, 0];
    let funded = 10 * SOL_1 + RESERVE;
    create.extend(funded.to_le_bytes());
    create.extend(200u64.to_le_bytes());
    create.extend(key(STAKE_PROGRAM));
    let mut init = vec![0, 0, 0, 0];
    init.extend(key(W));
    init.extend(key(W));
    init.extend([0u8; 48]);
    let mut withdraw = vec![4, 0, 0, 0];
    withdraw.extend(SOL_1.to_le_bytes());
    let keys = [
        W,
        A,
        SYSTEM,
        STAKE_PROGRAM,
        "SysvarRent111111111111111111111111111111111",
    ];
    let b58 = |d: &[u8]| bs58::encode(d).into_string();
    let raw = TxView::parse(&json!({
        "slot": 1, "blockTime": 1,
        "transaction": {"signatures": ["sig"], "message": {
            "header": {"numRequiredSignatures": 2},
            "accountKeys": keys,
            "instructions": [
                {"programIdIndex": 2, "accounts": [0, 1], "data": b58(&create)},
                {"programIdIndex": 3, "accounts": [1, 4], "data": b58(&init)},
                {"programIdIndex": 3, "accounts": [1, 0, 4, 4, 0], "data": b58(&withdraw)},
            ]}},
        "meta": {"err": null, "fee": FEE,
                 "preBalances": [20 * SOL_1, 0, 1, 1, 1],
                 "postBalances": [20 * SOL_1 - FEE - funded + SOL_1, funded - SOL_1, 1, 1, 1],
                 "preTokenBalances": [], "postTokenBalances": [], "innerInstructions": []}
    }))
    .unwrap();
    let legs = conserves(&raw, W);
    assert_eq!(
        summary(&legs),
        vec![
            (OperationType::NetworkFee, -(FEE as i128), None),
            (OperationType::StakeDeposit, -(funded as i128), Some(A)),
            (OperationType::StakeWithdraw, SOL_1 as i128, Some(A)),
        ]
    );
}

#[test]
fn a_reward_leg_is_named_by_epoch_and_stake_account() {
    let leg = stake::staking_reward_leg(A, 700, 1_234_567, 302_400_000, Some(1_731_000_000));
    assert_eq!(leg.signature, format!("reward:700:{A}"));
    assert_eq!(leg.signature, stake::reward_signature(700, A));
    assert_eq!(leg.slot, 302_400_000);
    assert_eq!(leg.block_time, Some(1_731_000_000));
    assert_eq!(leg.operation_type, OperationType::StakingReward);
    assert_eq!(leg.mint, SOL);
    assert_eq!(leg.amount, 1_234_567);
    assert_eq!(leg.decimals, 9);
    assert_eq!(leg.counterparties[0].address, A);
    assert_eq!(leg.counterparties[0].direction, Direction::In);
}

/// One stake account's life, by hand: every figure below is added up in
/// the comments, not read from the code.
#[test]
fn a_stake_accounts_history_reconciles_to_the_lamport() {
    let mut a = vec![
        // Created with 10 SOL staked plus the reserve: 10_002_282_880.
        Flow::Deposit(10 * SOL_1 + RESERVE),
        // Rewards for three epochs: 1_234_567 + 1_240_001 + 1_245_432 = 3_720_000.
        Flow::Reward(1_234_567),
        Flow::Reward(1_240_001),
        Flow::Reward(1_245_432),
        // 3 SOL split out into B.
        Flow::Withdrawal(3 * SOL_1),
    ];
    // 10_002_282_880 + 3_720_000 − 3_000_000_000 = 7_006_002_880.
    assert_eq!(stake::expected_balance(&a), 7_006_002_880);
    assert_eq!(stake::reconcile(&a, 7_006_002_880), Ok(()));

    let b = [
        // The wallet pre-funds B's reserve, then the split brings 3 SOL.
        Flow::Deposit(RESERVE),
        Flow::Deposit(3 * SOL_1),
        // One reward: 370_000.
        Flow::Reward(370_000),
    ];
    // 2_282_880 + 3_000_000_000 + 370_000 = 3_002_652_880, all merged into A.
    assert_eq!(stake::expected_balance(&b), 3_002_652_880);
    let mut b_closed = b.to_vec();
    b_closed.push(Flow::Withdrawal(3_002_652_880));
    assert_eq!(stake::reconcile(&b_closed, 0), Ok(()));

    a.push(Flow::Deposit(3_002_652_880));
    // 7_006_002_880 + 3_002_652_880 = 10_008_655_760; a reward after
    // deactivation still counts: + 1_000 = 10_008_656_760.
    a.push(Flow::Reward(1_000));
    // Partial withdrawal of 2.5 SOL: 7_508_656_760.
    a.push(Flow::Withdrawal(2_500_000_000));
    assert_eq!(stake::reconcile(&a, 7_508_656_760), Ok(()));
    // A lamport off is caught.
    assert_eq!(
        stake::reconcile(&a, 7_508_656_759),
        Err(Mismatch {
            expected: 7_508_656_760,
            actual: 7_508_656_759
        })
    );
    // Closed: the rest withdrawn.
    a.push(Flow::Withdrawal(7_508_656_760));
    assert_eq!(stake::reconcile(&a, 0), Ok(()));
}

/// What a scan stores per stake account comes from the transaction's own
/// balances: the split below takes 3 SOL out of A (its balance falls from
/// 10 SOL + reserve to 7 SOL + reserve) and into B (0 to 3 SOL: B's reserve
/// came with it here), whichever instruction did it; an account the
/// transaction does not name has no row.
#[test]
fn a_transactions_stake_flows_are_its_balance_changes() {
    let t = tx(
        &[(W, true), (A, false), (B, true)],
        &[5 * SOL_1, 10 * SOL_1 + RESERVE, 0],
        &[5 * SOL_1 - FEE, 7 * SOL_1 + RESERVE, 3 * SOL_1],
        json!([stake_ix(
            "split",
            json!({"stakeAccount": A, "newSplitAccount": B, "stakeAuthority": W, "lamports": 3 * SOL_1})
        )]),
        json!([]),
    );
    let mine: BTreeSet<String> = [A, B, "NotNamed111111111111111111111111111111111111"]
        .map(str::to_owned)
        .into();
    assert_eq!(
        stake::balance_flows(&t, &mine),
        vec![
            BalanceFlow {
                stake_account: A.to_owned(),
                flow: Flow::Withdrawal(3 * SOL_1),
                lamports_after: 7 * SOL_1 + RESERVE,
            },
            BalanceFlow {
                stake_account: B.to_owned(),
                flow: Flow::Deposit(3 * SOL_1),
                lamports_after: 3 * SOL_1,
            },
        ]
    );
    for flow in [
        Flow::Deposit(3),
        Flow::Reward(0),
        Flow::Withdrawal(u64::MAX),
    ] {
        let (kind, lamports) = flow.parts();
        assert_eq!(Flow::from_parts(kind, lamports), Some(flow));
    }
    assert_eq!(Flow::from_parts("gift", 1), None);
}

/// Reconciling a stake account by its standing, every figure added by
/// hand: open against its balance now, closed against 0, handed over
/// against what it held right after the handover (later flows are not the
/// wallet's).
#[test]
fn a_stake_account_reconciles_by_its_standing() {
    let history = [
        // Created with 1 SOL + reserve = 1_002_282_880, at slot 100.
        (100, Flow::Deposit(SOL_1 + RESERVE), Some(SOL_1 + RESERVE)),
        // Two rewards: 1_000 + 2_000.
        (200, Flow::Reward(1_000), None),
        (300, Flow::Reward(2_000), None),
        // Handed over at slot 350: nothing moves, it holds 1_002_285_880.
        (350, Flow::Deposit(0), Some(SOL_1 + RESERVE + 3_000)),
        // The new owner withdraws everything.
        (400, Flow::Withdrawal(SOL_1 + RESERVE + 3_000), Some(0)),
    ];
    assert_eq!(
        stake::reconcile_account(&history, Standing::HandedOver { slot: 350 }, None),
        Reconciled {
            balance: SOL_1 + RESERVE + 3_000,
            difference: 0
        }
    );
    assert_eq!(
        stake::reconcile_account(&history, Standing::Closed, None),
        Reconciled {
            balance: 0,
            difference: 0
        }
    );
    // Open with the rewards not withdrawn: 1_002_285_880 expected; a
    // provider saying 1_002_285_881 leaves one lamport unexplained.
    assert_eq!(
        stake::reconcile_account(&history[..4], Standing::Open(SOL_1 + RESERVE + 3_001), None),
        Reconciled {
            balance: SOL_1 + RESERVE + 3_001,
            difference: 1
        }
    );
    // A missed reward shows as the account holding more than its history.
    assert_eq!(
        stake::reconcile_account(&history[..2], Standing::Open(SOL_1 + RESERVE + 3_000), None),
        Reconciled {
            balance: SOL_1 + RESERVE + 3_000,
            difference: 2_000
        }
    );
}

/// The other side of the handover above: the account received at slot 350
/// opens with what it held right after (1_002_285_880, its 1 SOL + reserve
/// and the two rewards the former owner earned), and reconciles against
/// the new owner's history from there: one reward of 4_000 after, then
/// everything withdrawn (closed). The former owner's flows before slot 350
/// are not counted, so leaving them out or in changes nothing.
#[test]
fn a_received_stake_account_reconciles_from_its_receipt() {
    let held = SOL_1 + RESERVE + 3_000;
    let history = [
        (100, Flow::Deposit(SOL_1 + RESERVE), Some(SOL_1 + RESERVE)),
        (200, Flow::Reward(1_000), None),
        (300, Flow::Reward(2_000), None),
        (350, Flow::Deposit(0), Some(held)),
        (450, Flow::Reward(4_000), None),
    ];
    assert_eq!(
        stake::reconcile_account(&history, Standing::Open(held + 4_000), Some(350)),
        Reconciled {
            balance: held + 4_000,
            difference: 0
        }
    );
    assert_eq!(
        stake::reconcile_account(&history[3..], Standing::Open(held + 4_000), Some(350)),
        Reconciled {
            balance: held + 4_000,
            difference: 0
        }
    );
    let mut closed = history.to_vec();
    closed.push((500, Flow::Withdrawal(held + 4_000), Some(0)));
    assert_eq!(
        stake::reconcile_account(&closed, Standing::Closed, Some(350)),
        Reconciled {
            balance: 0,
            difference: 0
        }
    );
    // The receiving transaction missing from the history: the account
    // opens at 0 and the whole balance shows as unexplained, never hidden.
    let gap: Vec<_> = history.iter().copied().filter(|f| f.0 != 350).collect();
    assert_eq!(
        stake::reconcile_account(&gap, Standing::Open(held + 4_000), Some(350)),
        Reconciled {
            balance: held + 4_000,
            difference: i128::from(held)
        }
    );
}
