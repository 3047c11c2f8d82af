//! Hand-built transactions for the cases the mainnet fixtures lack.

use serde_json::{Value, json};
use server::ledger::{self, CounterpartyKind, Direction, OperationType, SOL, TxView};

const W: &str = "Wa11et1111111111111111111111111111111111111";
const OTHER: &str = "0ther11111111111111111111111111111111111111";
const ATA: &str = "Ata1111111111111111111111111111111111111111";
const MINT: &str = "Mint111111111111111111111111111111111111111";

fn tx(keys: &[(&str, bool)], pre: &[u64], post: &[u64], ixs: Value, extra: Value) -> TxView {
    let keys: Vec<Value> = keys
        .iter()
        .map(|(k, signer)| json!({"pubkey": k, "signer": signer, "writable": true, "source": "transaction"}))
        .collect();
    let mut meta = json!({
        "err": null, "fee": 5000, "preBalances": pre, "postBalances": post,
        "preTokenBalances": [], "postTokenBalances": [], "innerInstructions": []
    });
    if let (Some(meta), Some(extra)) = (meta.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            meta.insert(k.clone(), v.clone());
        }
    }
    TxView::parse(&json!({
        "slot": 10, "blockTime": 1_700_000_000,
        "transaction": {"signatures": ["sig"], "message": {"accountKeys": keys, "instructions": ixs}},
        "meta": meta
    }))
    .unwrap()
}

fn conserves(tx: &TxView, wallet: &str) -> Vec<ledger::Leg> {
    let legs = ledger::legs(tx, wallet);
    assert_eq!(
        ledger::sum_by_asset(&legs),
        ledger::balance_changes(tx, wallet),
        "{legs:#?}"
    );
    legs
}

fn system_transfer(from: &str, to: &str, lamports: u64) -> Value {
    json!({"program": "system", "programId": "11111111111111111111111111111111",
           "parsed": {"type": "transfer", "info": {"source": from, "destination": to, "lamports": lamports}}})
}

#[test]
fn a_sol_transfer_out_names_the_recipient() {
    let t = tx(
        &[
            (W, true),
            (OTHER, false),
            ("11111111111111111111111111111111", false),
        ],
        &[1_000_000, 0, 1],
        &[1_000_000 - 5000 - 250_000, 250_000, 1],
        json!([system_transfer(W, OTHER, 250_000)]),
        json!({}),
    );
    let legs = conserves(&t, W);
    assert_eq!(legs.len(), 2);
    assert_eq!(legs[0].operation_type, OperationType::NetworkFee);
    assert_eq!(legs[1].operation_type, OperationType::TransferOut);
    assert_eq!(legs[1].amount, -250_000);
    assert_eq!(legs[1].counterparties[0].address, OTHER);
    assert_eq!(legs[1].counterparties[0].direction, Direction::Out);
    assert_eq!(legs[1].counterparties[0].kind, CounterpartyKind::Wallet);
    // And the recipient sees it come in, with no fee.
    let theirs = conserves(&t, OTHER);
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0].operation_type, OperationType::TransferIn);
    assert_eq!(theirs[0].counterparties[0].address, W);
}

#[test]
fn a_failed_transaction_still_costs_its_fee() {
    let mut t = tx(
        &[(W, true), (OTHER, false)],
        &[1_000_000, 0],
        &[995_000, 0],
        json!([system_transfer(W, OTHER, 250_000)]),
        json!({}),
    );
    t.failed = true;
    let legs = conserves(&t, W);
    assert_eq!(legs.len(), 1);
    assert_eq!(legs[0].operation_type, OperationType::NetworkFee);
    assert_eq!(legs[0].amount, -5000);
}

fn token_balance(index: usize, owner: &str, amount: u64) -> Value {
    json!({"accountIndex": index, "mint": MINT, "owner": owner,
           "uiTokenAmount": {"amount": amount.to_string(), "decimals": 6}})
}

#[test]
fn creating_a_token_account_is_a_rent_deposit_and_closing_it_a_refund() {
    let create = json!({"program": "spl-associated-token-account",
        "programId": "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
        "parsed": {"type": "create", "info": {"source": W, "account": ATA, "wallet": W, "mint": MINT}}});
    let t = tx(
        &[(W, true), (ATA, false)],
        &[10_000_000, 0],
        &[10_000_000 - 5000 - 2_039_280, 2_039_280],
        json!([create]),
        json!({"postTokenBalances": [token_balance(1, W, 0)]}),
    );
    let legs = conserves(&t, W);
    assert_eq!(legs[1].operation_type, OperationType::RentDeposit);
    assert_eq!(legs[1].amount, -2_039_280);
    assert_eq!(legs[1].counterparties[0].address, ATA);
    assert_eq!(
        legs[1].counterparties[0].kind,
        CounterpartyKind::TokenAccount
    );
    assert_eq!(legs.len(), 2, "{legs:#?}");

    let close = json!({"program": "spl-token", "programId": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        "parsed": {"type": "closeAccount", "info": {"account": ATA, "destination": W, "owner": W}}});
    let t = tx(
        &[(W, true), (ATA, false)],
        &[1_000_000, 2_039_280],
        &[1_000_000 - 5000 + 2_039_280, 0],
        json!([close]),
        json!({"preTokenBalances": [token_balance(1, W, 0)]}),
    );
    let legs = conserves(&t, W);
    assert_eq!(legs.len(), 2, "{legs:#?}");
    assert_eq!(legs[1].operation_type, OperationType::RentRefund);
    assert_eq!(legs[1].amount, 2_039_280);
}

#[test]
fn unsolicited_tokens_are_transfers_airdrops_or_spam() {
    let transfer = |dest: &str| {
        json!({"program": "spl-token", "programId": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        "parsed": {"type": "transfer", "info": {"source": "Src1111111111111111111111111111111111111111", "destination": dest, "authority": OTHER, "amount": "5"}}})
    };
    let mint_to = |dest: &str| {
        json!({"program": "spl-token", "programId": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        "parsed": {"type": "mintTo", "info": {"account": dest, "mint": MINT, "mintAuthority": OTHER, "amount": "5"}}})
    };
    let sender_src = "Src1111111111111111111111111111111111111111";
    let one_recipient = |ix: Value| {
        tx(
            &[(OTHER, true), (sender_src, false), (ATA, false)],
            &[1_000_000, 2_039_280, 2_039_280],
            &[995_000, 2_039_280, 2_039_280],
            json!([ix]),
            json!({
                "preTokenBalances": [token_balance(1, OTHER, 100), token_balance(2, W, 0)],
                "postTokenBalances": [token_balance(1, OTHER, 95), token_balance(2, W, 5)]
            }),
        )
    };
    // Someone sends the wallet tokens: a transfer in, from them.
    let legs = conserves(&one_recipient(transfer(ATA)), W);
    assert_eq!(legs.len(), 1);
    assert_eq!(legs[0].operation_type, OperationType::TransferIn);
    assert_eq!(legs[0].counterparties[0].address, OTHER);
    assert_eq!(legs[0].mint, MINT);

    // Tokens minted straight into the wallet, unasked: an airdrop.
    let legs = conserves(&one_recipient(mint_to(ATA)), W);
    assert_eq!(legs[0].operation_type, OperationType::Airdrop);

    // Three recipients in one transaction: spam.
    let (a2, a3) = (
        "Ata2111111111111111111111111111111111111111",
        "Ata3111111111111111111111111111111111111111",
    );
    let t = tx(
        &[
            (OTHER, true),
            (sender_src, false),
            (ATA, false),
            (a2, false),
            (a3, false),
        ],
        &[1_000_000, 1, 1, 1, 1],
        &[995_000, 1, 1, 1, 1],
        json!([transfer(ATA), transfer(a2), transfer(a3)]),
        json!({
            "preTokenBalances": [token_balance(1, OTHER, 100), token_balance(2, W, 0),
                                 token_balance(3, "R2", 0), token_balance(4, "R3", 0)],
            "postTokenBalances": [token_balance(1, OTHER, 85), token_balance(2, W, 5),
                                  token_balance(3, "R2", 5), token_balance(4, "R3", 5)]
        }),
    );
    let legs = conserves(&t, W);
    assert_eq!(legs[0].operation_type, OperationType::AirdropSpam);
}

#[test]
fn sol_for_a_token_is_a_swap() {
    let t = tx(
        &[
            (W, true),
            (ATA, false),
            ("Dex1111111111111111111111111111111111111111", false),
        ],
        &[10_000_000, 2_039_280, 1],
        &[10_000_000 - 5000 - 1_000_000, 2_039_280, 1],
        json!([{"programId": "Dex1111111111111111111111111111111111111111", "accounts": [], "data": ""}]),
        json!({
            "preTokenBalances": [token_balance(1, W, 0)],
            "postTokenBalances": [token_balance(1, W, 42)]
        }),
    );
    let legs = conserves(&t, W);
    let swap: Vec<_> = legs
        .iter()
        .filter(|l| l.operation_type == OperationType::Swap)
        .collect();
    assert_eq!(swap.len(), 2);
    assert_eq!(swap[0].mint, SOL);
    assert_eq!(swap[0].amount, -1_000_000);
    assert_eq!(swap[1].amount, 42);
    assert_eq!(
        swap[1].counterparties[0].address,
        "Dex1111111111111111111111111111111111111111"
    );
}

#[test]
fn malformed_transactions_are_refused_not_guessed() {
    for bad in [
        json!({}),
        json!({"transaction": {"signatures": ["s"]}, "meta": {}}),
        json!({"slot": 1, "transaction": {"signatures": ["s"], "message": {"accountKeys": ["A"], "header": {"numRequiredSignatures": 1}, "instructions": []}},
               "meta": {"fee": 1, "err": null, "preBalances": [1, 2], "postBalances": [1]}}),
    ] {
        assert!(TxView::parse(&bad).is_err(), "{bad}");
    }
}
