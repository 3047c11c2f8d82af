//! A staker's wallet scanned end to end through the real surfaces: the
//! stand-in serves a history of stake accounts (created and delegated,
//! split, merged, deactivated, withdrawn and closed, one handed to someone
//! else) and their rewards over many epochs; `get_ledger` must show one
//! `staking_reward` leg per epoch and account with the lamports the
//! provider reported, at the time of the block at the reward's effective
//! slot (or the first block after it), and nothing once an account left
//! the wallet. Rewards cost one `getInflationReward` per epoch; a rescan
//! asks only newer epochs; an epoch the provider will not serve leaves the
//! scan `partial`, naming it.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Mutex, atomic::Ordering},
};

use serde_json::{Value, json};
use server::solana::TxEncoding;

use crate::{
    helpers::TestApp,
    scans::{app_with_encoding, wait_done},
    standin::{Shared, StandIn},
};

const STAKE: &str = "Stake11111111111111111111111111111111111111";
const SYSTEM: &str = "11111111111111111111111111111111";
const CLOCK: &str = "SysvarC1ock11111111111111111111111111111111";
const HISTORY: &str = "SysvarStakeHistory1111111111111111111111111";
const RENT: &str = "SysvarRent111111111111111111111111111111111";
const CONFIG: &str = "StakeConfig11111111111111111111111111111111";
const SOL: u64 = 1_000_000_000;
const FEE: u64 = 5_000;
/// Slots per epoch in this made-up cluster (mainnet: 432,000).
const SPE: u64 = 100;

fn key(n: u8) -> String {
    bs58::encode([n; 32]).into_string()
}

fn wallet() -> String {
    key(21)
}
/// Stake accounts: 1 current (split into 2, then 2 merged back), 3
/// deactivated and withdrawn (closed), 4 handed to someone else, 5 never
/// the wallet's.
fn stake(i: u8) -> String {
    key(30 + i)
}
fn other() -> String {
    key(41)
}
fn vote() -> String {
    key(51)
}

/// The reward the provider reports for stake account `i` in `epoch`.
fn amount(i: u8, epoch: u64) -> u64 {
    1_000_000 * u64::from(i) + 1_000 * epoch + 7
}

/// The block time at slot `slot`: the first slot of each epoch has a
/// block two days after the last, except slot 600, which was skipped (its
/// next block, 601, comes a second later).
fn block_times() -> BTreeMap<u64, i64> {
    let mut times: BTreeMap<u64, i64> = (1..=15)
        .map(|k| (k * SPE, 1_700_000_000 + k as i64 * 172_800))
        .collect();
    let skipped = times.remove(&600).unwrap();
    times.insert(601, skipped + 1);
    times
}

fn rfc3339(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn stake_ix(kind: &str, info: Value) -> Value {
    json!({"program": "stake", "programId": STAKE, "parsed": {"type": kind, "info": info}, "stackHeight": null})
}

fn create(account: &str, lamports: u64) -> Value {
    json!({"program": "system", "programId": SYSTEM, "stackHeight": null, "parsed": {"type": "createAccount",
        "info": {"source": wallet(), "newAccount": account, "lamports": lamports, "space": 200, "owner": STAKE}}})
}

fn initialize(account: &str) -> Value {
    stake_ix(
        "initialize",
        json!({"stakeAccount": account, "rentSysvar": RENT,
            "authorized": {"staker": wallet(), "withdrawer": wallet()},
            "lockup": {"unixTimestamp": 0, "epoch": 0, "custodian": SYSTEM}}),
    )
}

fn delegate(account: &str) -> Value {
    stake_ix(
        "delegate",
        json!({"stakeAccount": account, "voteAccount": vote(), "clockSysvar": CLOCK,
            "stakeHistorySysvar": HISTORY, "stakeConfigAccount": CONFIG, "stakeAuthority": wallet()}),
    )
}

fn addresses(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s)
            if s.len() >= 32
                && bs58::decode(s).into_vec().is_ok_and(|b| b.len() == 32)
                && !out.contains(s) =>
        {
            out.push(s.clone());
        }
        Value::Object(map) => map.values().for_each(|v| addresses(v, out)),
        Value::Array(list) => list.iter().for_each(|v| addresses(v, out)),
        _ => {}
    }
}

/// A recorded-shape (`jsonParsed`) transaction signed by the wallet:
/// `balances` are (account, before, after); every other account keeps
/// one SOL.
fn tx(n: u8, slot: u64, instructions: Vec<Value>, balances: &[(String, u64, u64)]) -> Value {
    tx_by(&wallet(), n, slot, instructions, balances)
}

/// As [`tx`], signed (and its fee paid) by `payer`.
fn tx_by(
    payer: &str,
    n: u8,
    slot: u64,
    instructions: Vec<Value>,
    balances: &[(String, u64, u64)],
) -> Value {
    let mut keys = vec![payer.to_owned()];
    for (account, _, _) in balances {
        if !keys.contains(account) {
            keys.push(account.clone());
        }
    }
    addresses(&json!(instructions), &mut keys);
    let balance = |k: &String| balances.iter().find(|(a, _, _)| a == k);
    let pre: Vec<u64> = keys
        .iter()
        .map(|k| balance(k).map_or(SOL, |b| b.1))
        .collect();
    let post: Vec<u64> = keys
        .iter()
        .map(|k| balance(k).map_or(SOL, |b| b.2))
        .collect();
    let account_keys: Vec<Value> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| json!({"pubkey": k, "signer": i == 0, "writable": balance(k).is_some() || i == 0, "source": "transaction"}))
        .collect();
    json!({"jsonrpc": "2.0", "id": 1, "result": {
        "slot": slot, "blockTime": 1_700_000_000 + slot as i64 * 1_728, "version": "legacy",
        "meta": {"err": null, "fee": FEE, "preBalances": pre, "postBalances": post,
                 "preTokenBalances": [], "postTokenBalances": [], "innerInstructions": [], "logMessages": []},
        "transaction": {"signatures": [bs58::encode([n; 64]).into_string()],
            "message": {"accountKeys": account_keys, "instructions": instructions,
                        "recentBlockhash": key(99)}}}})
}

/// `StakeStateV2::Stake` bytes: staker, withdrawer, activation epoch.
fn stake_state(staker: &str, withdrawer: &str, activation_epoch: u64) -> Vec<u8> {
    let mut d = 2u32.to_le_bytes().to_vec();
    d.extend(2_282_880u64.to_le_bytes());
    d.extend(bs58::decode(staker).into_vec().unwrap());
    d.extend(bs58::decode(withdrawer).into_vec().unwrap());
    d.extend([0u8; 48]);
    d.extend(bs58::decode(vote()).into_vec().unwrap());
    d.extend(SOL.to_le_bytes());
    d.extend(activation_epoch.to_le_bytes());
    d.extend(u64::MAX.to_le_bytes());
    d.resize(200, 0);
    d
}

fn reward(i: u8, epoch: u64) -> ((String, u64), Value) {
    let effective = (epoch + 1) * SPE;
    (
        (stake(i), epoch),
        json!({"epoch": epoch, "effectiveSlot": effective, "amount": amount(i, epoch),
               "postBalance": SOL + amount(i, epoch), "commission": 7}),
    )
}

/// The rewards stake account `i` earned in `epochs`, summed.
fn paid(i: u8, epochs: std::ops::RangeInclusive<u64>) -> u64 {
    epochs.map(|e| amount(i, e)).sum()
}

/// The staker's history. Epochs are 100 slots; the current epoch is 12,
/// so 11 is the last completed one. Each stake account's balance in a
/// transaction includes the rewards credited before it (epoch `e`'s reward
/// lands at slot `(e + 1) × 100`), as the chain's balances would.
fn staker() -> Shared {
    let w = wallet();
    // The wallet's balance after each transaction: 10 SOL, less what it
    // staked and the fees, plus what it withdrew.
    let withdrawn_3 = SOL + paid(3, 3..=5);
    let mut wb = vec![10 * SOL];
    for change in [
        -(2 * SOL as i64),
        -(SOL as i64),
        -(SOL as i64),
        0,
        0,
        0,
        0,
        withdrawn_3 as i64,
    ] {
        let last = *wb.last().unwrap();
        wb.push((last as i64 + change - FEE as i64) as u64);
    }
    let wal = |k: usize| (w.clone(), wb[k - 1], wb[k]);
    // Account 1 before the split (rewards of epochs 2-3) and before the
    // merge (2-6); account 2 before the merge (5-6).
    let one_at_split = 2 * SOL + paid(1, 2..=3);
    let one_at_merge = 3 * SOL / 2 + paid(1, 2..=6);
    let two_at_merge = SOL / 2 + paid(2, 5..=6);
    let three_at_deactivate = SOL + paid(3, 3..=4);
    let four_at_handover = SOL + paid(4, 3..=4);
    let txs = [
        // Epoch 1: create and delegate account 1 (2 SOL).
        tx(
            1,
            150,
            vec![
                create(&stake(1), 2 * SOL),
                initialize(&stake(1)),
                delegate(&stake(1)),
            ],
            &[wal(1), (stake(1), 0, 2 * SOL)],
        ),
        // Epoch 2: accounts 3 and 4 (1 SOL each).
        tx(
            2,
            220,
            vec![
                create(&stake(3), SOL),
                initialize(&stake(3)),
                delegate(&stake(3)),
            ],
            &[wal(2), (stake(3), 0, SOL)],
        ),
        tx(
            3,
            230,
            vec![
                create(&stake(4), SOL),
                initialize(&stake(4)),
                delegate(&stake(4)),
            ],
            &[wal(3), (stake(4), 0, SOL)],
        ),
        // Epoch 4: split half a SOL of account 1 into account 2.
        tx(
            4,
            450,
            vec![stake_ix(
                "split",
                json!({"stakeAccount": stake(1), "newSplitAccount": stake(2), "stakeAuthority": w, "lamports": SOL / 2}),
            )],
            &[
                wal(4),
                (stake(1), one_at_split, one_at_split - SOL / 2),
                (stake(2), 0, SOL / 2),
            ],
        ),
        // Epoch 5: deactivate account 3; hand account 4's withdraw authority to someone else.
        tx(
            5,
            520,
            vec![stake_ix(
                "deactivate",
                json!({"stakeAccount": stake(3), "clockSysvar": CLOCK, "stakeAuthority": w}),
            )],
            &[wal(5), (stake(3), three_at_deactivate, three_at_deactivate)],
        ),
        tx(
            6,
            530,
            vec![stake_ix(
                "authorize",
                json!({"stakeAccount": stake(4), "clockSysvar": CLOCK, "authority": w, "newAuthority": other(), "authorityType": "Withdrawer"}),
            )],
            &[wal(6), (stake(4), four_at_handover, four_at_handover)],
        ),
        // Epoch 7: merge account 2 (with its rewards) back into 1 (account 2 closes).
        tx(
            7,
            750,
            vec![stake_ix(
                "merge",
                json!({"destination": stake(1), "source": stake(2), "clockSysvar": CLOCK, "stakeHistorySysvar": HISTORY, "stakeAuthority": w}),
            )],
            &[
                wal(7),
                (stake(1), one_at_merge, one_at_merge + two_at_merge),
                (stake(2), two_at_merge, 0),
            ],
        ),
        // Epoch 8: withdraw everything from account 3 (it closes).
        tx(
            8,
            810,
            vec![stake_ix(
                "withdraw",
                json!({"stakeAccount": stake(3), "destination": w, "clockSysvar": CLOCK, "stakeHistorySysvar": HISTORY, "withdrawAuthority": w, "lamports": withdrawn_3}),
            )],
            &[wal(8), (stake(3), withdrawn_3, 0)],
        ),
    ];
    let entry = |t: &Value| {
        let r = &t["result"];
        json!({"signature": r["transaction"]["signatures"][0], "slot": r["slot"], "blockTime": r["blockTime"], "err": null, "memo": null})
    };
    let newest_first =
        |picks: &[usize]| -> Vec<Value> { picks.iter().rev().map(|i| entry(&txs[*i])).collect() };
    let history: HashMap<String, Vec<Value>> = [
        (w.clone(), newest_first(&[0, 1, 2, 3, 4, 5, 6, 7])),
        (stake(1), newest_first(&[0, 3, 6])),
        (stake(2), newest_first(&[3, 6])),
        (stake(3), newest_first(&[1, 4, 7])),
        (stake(4), newest_first(&[2, 5])),
    ]
    .into();
    // Account 1 earns from epoch 2 on; account 2 in epochs 5 and 6 (merged
    // in epoch 7); account 3 in epochs 3-5, the last one after its
    // deactivation; account 4 in 3-6, of which only 3 and 4 are paid
    // before its handover (slot 530); account 5 is not the wallet's.
    let mut rewards: HashMap<(String, u64), Value> = HashMap::new();
    rewards.extend((2..=11).map(|e| reward(1, e)));
    rewards.extend([5, 6].map(|e| reward(2, e)));
    rewards.extend((3..=5).map(|e| reward(3, e)));
    rewards.extend((3..=6).map(|e| reward(4, e)));
    rewards.extend((1..=11).map(|e| reward(5, e)));
    let shared = Shared {
        history,
        transactions: txs
            .iter()
            .map(|t| {
                (
                    t["result"]["transaction"]["signatures"][0]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                    t.clone(),
                )
            })
            .collect(),
        stake_accounts: vec![
            (stake(1), stake_state(&w, &w, 1)),
            (stake(4), stake_state(&w, &other(), 2)),
            (stake(5), stake_state(&other(), &other(), 1)),
        ],
        inflation_rewards: Mutex::new(rewards),
        balances: Mutex::new(balances_now()),
        slots_per_epoch: SPE,
        block_times: block_times(),
        ..Shared::default()
    };
    shared.epoch.store(12, Ordering::SeqCst);
    shared
}

/// What the stake accounts hold now (`getMultipleAccounts`), from first
/// principles: account 1 holds its 2 SOL, less the half SOL split out,
/// plus that half SOL and account 2's rewards merged back in, plus its own
/// rewards of epochs 2-11; account 4 (someone else's now) its SOL and all
/// its rewards; account 5 is someone else's. Accounts 2 and 3 are closed.
fn balances_now() -> HashMap<String, u64> {
    [
        (stake(1), 2 * SOL + paid(2, 5..=6) + paid(1, 2..=11)),
        (stake(4), SOL + paid(4, 3..=6)),
        (stake(5), SOL + paid(5, 1..=11)),
    ]
    .into()
}

/// The rewards the wallet earned, as (account, epoch): what the ledger
/// must show.
fn earned() -> Vec<(u8, u64)> {
    let mut all: Vec<(u8, u64)> = (2..=11).map(|e| (1, e)).collect();
    all.extend([(2, 5), (2, 6), (3, 3), (3, 4), (3, 5), (4, 3), (4, 4)]);
    all
}

async fn scan(app: &TestApp, scope: &str) -> Value {
    let quote = app
        .call_tool("quote_wallet", json!({"address": wallet(), "scope": scope}))
        .await;
    let quote_id = quote["structuredContent"]["quote_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let started = app
        .call_tool("scan_wallet", json!({"quote_id": quote_id}))
        .await;
    assert_eq!(started["isError"], false, "{started}");
    wait_done(
        app,
        started["structuredContent"]["job_id"].as_str().unwrap(),
    )
    .await
}

/// A full scan of a long staking history: as [`scan`], waiting up to two
/// minutes (hundreds of epochs each write their legs, on PostgreSQL too).
async fn scan_patiently(app: &TestApp) -> Value {
    let quote = app
        .call_tool(
            "quote_wallet",
            json!({"address": wallet(), "scope": "full"}),
        )
        .await;
    let quote_id = quote["structuredContent"]["quote_id"].as_str().unwrap();
    let started = app
        .call_tool("scan_wallet", json!({"quote_id": quote_id}))
        .await;
    assert_eq!(started["isError"], false, "{started}");
    let job_id = started["structuredContent"]["job_id"].as_str().unwrap();
    for _ in 0..1200 {
        let job = app.call_tool("get_job", json!({"job_id": job_id})).await;
        if job["structuredContent"]["status"] != "running" {
            return job["structuredContent"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("job {job_id} did not finish");
}

/// The wallet's staking_reward entries from get_ledger, by signature.
async fn rewards_in_ledger(app: &TestApp) -> BTreeMap<String, Value> {
    let page = app
        .call_tool("get_ledger", json!({"address": wallet(), "limit": 1000}))
        .await;
    assert_eq!(page["isError"], false, "{page}");
    page["structuredContent"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["operation_type"] == "staking_reward")
        .map(|e| (e["signature"].as_str().unwrap().to_owned(), e.clone()))
        .collect()
}

fn epochs_asked(stand_in: &StandIn) -> Vec<u64> {
    stand_in
        .shared
        .params_of("getInflationReward")
        .iter()
        .map(|p| p[1]["epoch"].as_u64().unwrap())
        .collect()
}

async fn staker_is_scanned_with(encoding: TxEncoding) {
    let (app, stand_in) = app_with_encoding(staker(), None, encoding).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "completed", "{job}");

    let found = rewards_in_ledger(&app).await;
    let times = block_times();
    let mut expected = BTreeMap::new();
    for (i, epoch) in earned() {
        let effective = (epoch + 1) * SPE;
        // Slot 600 had no block: the time is the next block's (601).
        let (_, time) = times.range(effective..).next().unwrap();
        expected.insert(
            format!("reward:{epoch}:{}", stake(i)),
            (amount(i, epoch).to_string(), effective, rfc3339(*time)),
        );
    }
    let got: BTreeMap<String, (String, u64, String)> = found
        .iter()
        .map(|(sig, e)| {
            assert_eq!(e["mint"], "sol");
            assert_eq!(e["decimals"], 9);
            (
                sig.clone(),
                (
                    e["amount"].as_str().unwrap().to_owned(),
                    e["slot"].as_u64().unwrap(),
                    e["block_time"].as_str().unwrap().to_owned(),
                ),
            )
        })
        .collect();
    assert_eq!(got, expected);

    // Every epoch from the first the wallet staked in (1) through the last
    // completed (11), once, for all of its accounts together.
    assert_eq!(epochs_asked(&stand_in), (1..=11).collect::<Vec<u64>>());
    for params in stand_in.shared.params_of("getInflationReward") {
        assert!(!params[0].as_array().unwrap().contains(&json!(stake(5))));
    }
    // The accounts found only in the history (2 closed by merge, 3 closed
    // by withdrawal) had their own signatures listed; account 5 did not.
    let listed: Vec<String> = stand_in
        .shared
        .params_of("getSignaturesForAddress")
        .iter()
        .map(|p| p[0].as_str().unwrap().to_owned())
        .collect();
    for i in 1..=4 {
        assert!(listed.contains(&stake(i)), "account {i} not listed");
    }
    assert!(!listed.contains(&stake(5)));
    // Two getProgramAccounts calls, with the authority at its offset.
    let gpa = stand_in.shared.params_of("getProgramAccounts");
    let offsets: Vec<u64> = gpa
        .iter()
        .map(|p| p[1]["filters"][1]["memcmp"]["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, vec![12, 44]);
    app.stop().await;
}

#[tokio::test]
async fn a_stakers_scan_shows_every_epochs_reward_at_its_block_time() {
    staker_is_scanned_with(TxEncoding::Json).await;
}

#[tokio::test]
async fn a_stakers_scan_reads_json_parsed_stake_instructions_too() {
    staker_is_scanned_with(TxEncoding::JsonParsed).await;
}

#[tokio::test]
async fn an_incremental_rescan_asks_only_the_epochs_not_read() {
    let (app, stand_in) = app_with_encoding(staker(), None, TxEncoding::Json).await;
    assert_eq!(scan(&app, "full").await["status"], "completed");
    assert_eq!(rewards_in_ledger(&app).await.len(), earned().len());

    // Nothing new: not one reward call.
    stand_in.shared.requests.lock().unwrap().clear();
    assert_eq!(scan(&app, "incremental").await["status"], "completed");
    assert!(epochs_asked(&stand_in).is_empty());

    // Two more epochs pass: only they are asked.
    {
        let mut rewards = stand_in.shared.inflation_rewards.lock().unwrap();
        rewards.extend([12, 13].map(|e| reward(1, e)));
        *stand_in
            .shared
            .balances
            .lock()
            .unwrap()
            .get_mut(&stake(1))
            .unwrap() += amount(1, 12) + amount(1, 13);
    }
    stand_in.shared.epoch.store(14, Ordering::SeqCst);
    stand_in.shared.requests.lock().unwrap().clear();
    assert_eq!(scan(&app, "incremental").await["status"], "completed");
    assert_eq!(epochs_asked(&stand_in), vec![12, 13]);
    let found = rewards_in_ledger(&app).await;
    assert_eq!(found.len(), earned().len() + 2);
    assert_eq!(
        found[&format!("reward:13:{}", stake(1))]["amount"],
        amount(1, 13).to_string()
    );
    app.stop().await;
}

#[tokio::test]
async fn epochs_the_provider_does_not_serve_leave_the_scan_partial_naming_them() {
    let shared = staker();
    shared.unserved_epochs.lock().unwrap().extend([2, 3, 7]);
    let (app, stand_in) = app_with_encoding(shared, None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "partial", "{job}");
    let error = job["error"].as_str().unwrap();
    assert!(error.contains("epochs 2-3, 7"), "{error}");
    assert!(!error.contains("transactions"), "{error}");
    let found = rewards_in_ledger(&app).await;
    assert_eq!(
        found.len(),
        earned()
            .iter()
            .filter(|(_, e)| ![2, 3, 7].contains(e))
            .count()
    );

    // Once the provider serves them, an incremental scan asks for those
    // epochs again (and nothing else) and completes.
    stand_in.shared.unserved_epochs.lock().unwrap().clear();
    stand_in.shared.requests.lock().unwrap().clear();
    let job = scan(&app, "incremental").await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(epochs_asked(&stand_in), vec![2, 3, 7]);
    assert_eq!(rewards_in_ledger(&app).await.len(), earned().len());
    app.stop().await;
}

/// A staker's rewards reach every report format as income: the json
/// report's `staking_rewards` kind holds every epoch's reward (quantity =
/// the sum of what `getInflationReward` answered, in SOL), and the csv,
/// Koinly and CoinTracker exports carry one income row per reward.
#[tokio::test]
async fn a_stakers_rewards_are_income_in_every_report_format() {
    let (app, _stand_in) = app_with_encoding(staker(), None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "completed", "{job}");

    // From the stand-in's answers: 17 rewards, their lamports summed.
    let lamports: u64 = earned().iter().map(|&(i, e)| amount(i, e)).sum();
    let expected = rust_decimal::Decimal::new(i64::try_from(lamports).unwrap(), 9);

    let result = app
        .call_tool(
            "get_report",
            json!({"wallets": [wallet()], "format": "json"}),
        )
        .await;
    assert_eq!(result["isError"], false, "{result}");
    let report = &result["structuredContent"];
    for figures in [&report["total"], &report["wallets"][0]] {
        let staking = figures["income"]["by_kind"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["kind"] == "staking_rewards")
            .unwrap_or_else(|| panic!("no staking_rewards kind: {figures}"));
        assert_eq!(staking["legs"], earned().len(), "{staking}");
        let sol = staking["assets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["mint"] == "sol")
            .unwrap_or_else(|| panic!("no SOL in staking income: {staking}"));
        let quantity: rust_decimal::Decimal = sol["quantity"].as_str().unwrap().parse().unwrap();
        assert_eq!(quantity, expected, "{sol}");
    }

    // One row per reward in each export (csv and Koinly name the reward's
    // synthetic signature `reward:<epoch>:<stake account>`).
    for format in ["csv", "koinly", "cointracker"] {
        let result = app
            .call_tool(
                "get_report",
                json!({"wallets": [wallet()], "format": format}),
            )
            .await;
        assert_eq!(result["isError"], false, "{format}: {result}");
        let text: String = result["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        for (i, epoch) in earned() {
            // CoinTracker's template has no signature column: its row is
            // the reward's quantity received, tagged `staking`.
            let row = if format == "cointracker" {
                let sol = rust_decimal::Decimal::new(i64::try_from(amount(i, epoch)).unwrap(), 9);
                format!(",{sol},SOL,,,,,staking")
            } else {
                format!("reward:{epoch}:{}", stake(i))
            };
            assert!(
                text.lines().any(|l| l.contains(&row)),
                "{format}: no row for {row}\n{text}"
            );
        }
        if format == "cointracker" {
            let tagged = text.lines().filter(|l| l.ends_with(",staking")).count();
            assert_eq!(tagged, earned().len(), "{text}");
        }
    }
    app.stop().await;
}

/// The USD price of SOL the test stores for day `day` (days since the
/// epoch), the same for every hour of that day, so a leg's fair value is
/// this day's price whichever of the hourly or daily close values it
/// (docs/prices.md "Valuation").
fn sol_price_on(day: i64) -> rust_decimal::Decimal {
    rust_decimal::Decimal::new(2_000 + (day % 13) * 125 + day % 4, 2)
}

/// Days 19,675 to 19,706 (2023-11-14 to 2023-12-15) cover every
/// transaction (`1_700_000_000 + slot × 1,728`) and every reward of the
/// staker: both series are stored whole, so valuation fetches nothing.
async fn store_sol_prices(app: &TestApp) {
    let (first, last): (i64, i64) = (19_675 * 86_400, 19_707 * 86_400);
    for granularity in [3_600, 86_400] {
        let points: Vec<(i64, String)> = (first..last)
            .step_by(granularity as usize)
            .map(|t| (t, sol_price_on(t.div_euclid(86_400)).to_string()))
            .collect();
        app.state
            .store()
            .store_price_range("sol", granularity, (first, last), &points, "coinbase")
            .await
            .unwrap();
    }
}

/// A reward's fair value at receipt, from first principles: its lamports
/// in SOL times the price of SOL on the day of its block time (the block
/// of its effective slot, or the next block when that slot was skipped).
fn reward_usd(i: u8, epoch: u64) -> rust_decimal::Decimal {
    let times = block_times();
    let (_, time) = times
        .range((epoch + 1) * SPE..)
        .next()
        .expect("a block at or after the effective slot");
    let sol = rust_decimal::Decimal::new(i64::try_from(amount(i, epoch)).unwrap(), 9);
    sol * sol_price_on(time.div_euclid(86_400))
}

/// Rewards are income at their fair value when received (US: Rev. Rul.
/// 2023-14): each reward leg is valued at SOL's price on its block's day;
/// `get_report`'s staking income, `get_positions`' income and the PDF's
/// income page carry their sum; Form 8949 carries none of them (income is
/// not a disposal) and its proceeds are the json report's.
#[tokio::test]
async fn a_stakers_rewards_are_income_at_fair_value_on_the_pdf_and_never_on_the_8949() {
    let (app, _stand_in) = app_with_encoding(staker(), None, TxEncoding::Json).await;
    store_sol_prices(&app).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "completed", "{job}");

    // Each leg's usd_value is kept to 6 decimals (docs/prices.md), so each
    // may be half a micro-dollar off the exact product.
    let half_micro = rust_decimal::Decimal::new(5, 7);
    let dec = |v: &Value| -> rust_decimal::Decimal {
        v.as_str()
            .unwrap_or_else(|| panic!("not a decimal string: {v}"))
            .parse()
            .unwrap()
    };
    let found = rewards_in_ledger(&app).await;
    let mut exact_total = rust_decimal::Decimal::ZERO;
    for (i, epoch) in earned() {
        let leg = &found[&reward_signature(i, epoch)];
        let exact = reward_usd(i, epoch);
        exact_total += exact;
        assert_eq!(leg["priced"], true, "{leg}");
        assert!(
            (dec(&leg["usd_value"]) - exact).abs() <= half_micro,
            "{leg}: expected {exact}"
        );
    }
    let tolerance = half_micro * rust_decimal::Decimal::from(earned().len());

    let figures = report(&app, json!({"wallets": [wallet()], "format": "json"})).await;
    assert_eq!(figures["isError"], false, "{figures}");
    let total = &figures["structuredContent"]["total"];
    let staking = total["income"]["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "staking_rewards")
        .unwrap_or_else(|| panic!("no staking_rewards: {total}"))
        .clone();
    assert_eq!(staking["unpriced_legs"], 0, "{staking}");
    let staking_usd = dec(&staking["usd"]);
    assert!(
        (staking_usd - exact_total).abs() <= tolerance,
        "staking income {staking_usd}, expected {exact_total}"
    );

    // get_positions: SOL's income is the same rewards, quantity exact.
    let positions = app
        .call_tool("get_positions", json!({"address": wallet()}))
        .await;
    let positions = &positions["structuredContent"];
    let sol = positions["positions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["mint"] == "sol")
        .unwrap_or_else(|| panic!("no SOL: {positions}"));
    let lamports: u64 = earned().iter().map(|&(i, e)| amount(i, e)).sum();
    assert_eq!(
        dec(&sol["income_quantity"]),
        rust_decimal::Decimal::new(i64::try_from(lamports).unwrap(), 9),
        "{sol}"
    );
    assert_eq!(dec(&sol["income_usd"]), staking_usd, "{sol}");

    // Form 8949 of 2023, the year of the whole history: disposals only
    // (network fees and the handover; this staker's own funding is not in
    // its history, so what it spent beyond its rewards is an `incomplete`
    // row, outside the form's parts). No reward row, and the proceeds of its
    // rows are the json report's realized proceeds.
    let form = report(
        &app,
        json!({"wallets": [wallet()], "format": "8949", "dust_threshold": 0,
               "from": "2023-01-01", "to": "2023-12-31"}),
    )
    .await;
    assert_eq!(form["isError"], false, "{form}");
    let csv = form["content"][1]["text"].as_str().unwrap();
    assert!(!csv.contains("reward"), "{csv}");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let column = headers
        .iter()
        .position(|h| h == "(d) proceeds")
        .unwrap_or_else(|| panic!("no proceeds column: {headers:?}"));
    let proceeds: rust_decimal::Decimal = reader
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[0] == "row")
        .map(|r| r[column].parse::<rust_decimal::Decimal>().unwrap())
        .sum();
    assert!(
        proceeds > rust_decimal::Decimal::ZERO,
        "the fees are disposals: {csv}"
    );
    assert_eq!(proceeds, dec(&total["realized"]["proceeds"]), "{csv}");

    // The PDF's income page names the kind and its fair value.
    let pdf = report(&app, json!({"wallets": [wallet()], "format": "pdf"})).await;
    let uri = pdf["content"][1]["uri"]
        .as_str()
        .unwrap_or_else(|| panic!("no link: {pdf}"));
    let bytes = app
        .client
        .get(uri)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    if let Some(text) = crate::reports::pdftotext(&bytes) {
        assert!(text.contains("Income by kind"), "{text}");
        let fiat = server::values::format::fiat(staking_usd, "USD");
        let line = text
            .lines()
            .find(|l| l.contains("All wallets") && l.contains("staking rewards"))
            .unwrap_or_else(|| panic!("no staking rewards line with {fiat}:\n{text}"));
        assert!(line.contains(&fiat), "{fiat} not in {line:?}");
    }
    app.stop().await;
}

/// `get_report` over MCP (a protocol version with resource links); the
/// tool result, or a panic naming the whole answer.
async fn report(app: &TestApp, args: Value) -> Value {
    let body: Value = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                    "params":{"name":"get_report","arguments":args}}),
            &[("mcp-protocol-version", "2025-06-18")],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["result"]["isError"], false, "{body}");
    body["result"].clone()
}

fn reward_signature(i: u8, epoch: u64) -> String {
    format!("reward:{epoch}:{}", stake(i))
}

/// `get_positions`' stake accounts, by address.
async fn stake_accounts_in_positions(app: &TestApp) -> BTreeMap<String, Value> {
    let result = app
        .call_tool("get_positions", json!({"address": wallet()}))
        .await;
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"]["stake_accounts"]
        .as_array()
        .unwrap_or_else(|| panic!("no stake_accounts: {result}"))
        .iter()
        .map(|a| (a["address"].as_str().unwrap().to_owned(), a.clone()))
        .collect()
}

/// Each of the staker's stake accounts reconciles to the lamport: its
/// deposits + rewards − withdrawals equal its balance now (account 1, from
/// one `getMultipleAccounts` for the accounts still the wallet's), 0 once
/// closed (2 merged away, 3 withdrawn), and for account 4 what it held
/// right after its handover (1 SOL + the rewards of epochs 3 and 4, from
/// the handover transaction's own balances).
#[tokio::test]
async fn a_stakers_stake_accounts_reconcile_to_the_lamport() {
    let (app, stand_in) = app_with_encoding(staker(), None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "completed", "{job}");

    // One getMultipleAccounts for the three accounts the wallet still
    // controls (4 was handed over; 5 was never its own).
    let asked = stand_in.shared.params_of("getMultipleAccounts");
    assert_eq!(asked.len(), 1, "{asked:?}");
    let mut named: Vec<String> = asked[0][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    named.sort();
    let mut expected_named = vec![stake(1), stake(2), stake(3)];
    expected_named.sort();
    assert_eq!(named, expected_named);

    let accounts = stake_accounts_in_positions(&app).await;
    let one = 2 * SOL + paid(2, 5..=6) + paid(1, 2..=11);
    let four = SOL + paid(4, 3..=4);
    let expected: BTreeMap<String, (&str, u64)> = [
        (stake(1), ("open", one)),
        (stake(2), ("closed", 0)),
        (stake(3), ("closed", 0)),
        (stake(4), ("handed_over", four)),
    ]
    .into();
    assert_eq!(accounts.len(), expected.len(), "{accounts:?}");
    for (address, (status, balance)) in &expected {
        let a = &accounts[address];
        assert_eq!(a["status"], *status, "{a}");
        assert_eq!(a["balance_lamports"], balance.to_string(), "{a}");
        let sol = rust_decimal::Decimal::new(i64::try_from(*balance).unwrap(), 9).normalize();
        assert_eq!(a["balance_sol"], sol.to_string(), "{a}");
        assert_eq!(a["reconciled"], true, "{a}");
        assert_eq!(a["difference_lamports"], "0", "{a}");
    }
    app.stop().await;
}

/// A provider that reports one stake account's balance 1,234 lamports
/// higher than its history gives: the scan ends `partial`, naming that
/// account and the difference, and `get_positions` shows it unreconciled
/// while the others still reconcile.
#[tokio::test]
async fn a_stake_account_that_does_not_reconcile_leaves_the_scan_partial_naming_it() {
    let shared = staker();
    *shared.balances.lock().unwrap().get_mut(&stake(1)).unwrap() += 1_234;
    let (app, _stand_in) = app_with_encoding(shared, None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "partial", "{job}");
    let error = job["error"].as_str().unwrap();
    assert!(
        error.contains(&format!("{} holds 1234 lamports more", stake(1))),
        "{error}"
    );
    for i in 2..=4 {
        assert!(!error.contains(&stake(i)), "{error}");
    }
    assert!(!error.contains("transactions"), "{error}");
    assert!(!error.contains("epochs"), "{error}");

    let accounts = stake_accounts_in_positions(&app).await;
    let one = &accounts[&stake(1)];
    assert_eq!(one["reconciled"], false, "{one}");
    assert_eq!(one["difference_lamports"], "1234", "{one}");
    for i in 2..=4 {
        assert_eq!(accounts[&stake(i)]["reconciled"], true);
    }
    app.stop().await;
}

/// Stake account `i` of the call-count wallet (distinct from the staker's).
fn counted(i: usize) -> String {
    let mut bytes = [200u8; 32];
    bytes[0] = u8::try_from(i).unwrap();
    bs58::encode(bytes).into_string()
}

/// A wallet with `accounts` stake accounts, each created and delegated (1
/// SOL) in its own transaction in epoch 1 and paid a reward every epoch
/// through the last completed one, `epochs`: the stand-in for counting a
/// staking scan's requests.
fn counted_staker(accounts: usize, epochs: u64) -> Shared {
    let w = wallet();
    let mut txs = Vec::new();
    let mut rewards: HashMap<(String, u64), Value> = HashMap::new();
    let mut balances = HashMap::new();
    let mut stake_states = Vec::new();
    for i in 0..accounts {
        let account = counted(i);
        let before = 1_000 * SOL - i as u64 * (SOL + FEE);
        txs.push(tx(
            u8::try_from(i + 1).unwrap(),
            150 + i as u64 / 10,
            vec![
                create(&account, SOL),
                initialize(&account),
                delegate(&account),
            ],
            &[
                (w.clone(), before, before - SOL - FEE),
                (account.clone(), 0, SOL),
            ],
        ));
        let mut held = SOL;
        for epoch in 1..=epochs {
            let lamports = 1_000 * (i as u64 + 1) + epoch;
            held += lamports;
            rewards.insert(
                (account.clone(), epoch),
                json!({"epoch": epoch, "effectiveSlot": (epoch + 1) * SPE, "amount": lamports,
                       "postBalance": held, "commission": 7}),
            );
        }
        balances.insert(account.clone(), held);
        stake_states.push((account, stake_state(&w, &w, 1)));
    }
    let entry = |t: &Value| {
        let r = &t["result"];
        json!({"signature": r["transaction"]["signatures"][0], "slot": r["slot"], "blockTime": r["blockTime"], "err": null, "memo": null})
    };
    let mut history: HashMap<String, Vec<Value>> = HashMap::new();
    history.insert(w.clone(), txs.iter().rev().map(entry).collect());
    for (i, t) in txs.iter().enumerate() {
        history.insert(counted(i), vec![entry(t)]);
    }
    let shared = Shared {
        history,
        transactions: txs
            .iter()
            .map(|t| {
                (
                    t["result"]["transaction"]["signatures"][0]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                    t.clone(),
                )
            })
            .collect(),
        stake_accounts: stake_states,
        inflation_rewards: Mutex::new(rewards),
        balances: Mutex::new(balances),
        slots_per_epoch: SPE,
        block_times: (1..=epochs + 2)
            .map(|k| (k * SPE, 1_700_000_000 + k as i64 * 172_800))
            .collect(),
        ..Shared::default()
    };
    shared.epoch.store(epochs + 1, Ordering::SeqCst);
    shared
}

/// The requests of a staking scan, by method, against the floor: one
/// `getInflationReward` per epoch for all of the wallet's stake accounts
/// together, one `getBlockTime` per distinct effective slot (one per epoch
/// here, no slot skipped), two `getProgramAccounts` (staker, withdrawer),
/// `getEpochSchedule` and `getEpochInfo` once each, and one
/// `getMultipleAccounts` per 100 stake accounts. The figures printed are
/// those docs/benchmarks.md gives; `cargo test -p server --test api
/// staking_scan_requests -- --nocapture` prints them again. Every scan
/// completes: each account reconciles.
#[tokio::test]
async fn staking_scan_requests_by_method_meet_the_floor() {
    println!(
        "| stake accounts | epochs | getInflationReward | getBlockTime | getProgramAccounts | getEpochSchedule + getEpochInfo | getMultipleAccounts | staking requests | floor |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (accounts, epochs) in [(3, 50), (3, 500), (120, 50)] {
        let (app, stand_in) =
            app_with_encoding(counted_staker(accounts, epochs), None, TxEncoding::Json).await;
        let job = scan_patiently(&app).await;
        assert_eq!(job["status"], "completed", "{job}");
        let n = |m: &str| stand_in.shared.count(m);
        let multiple = accounts.div_ceil(100);
        let epochs = usize::try_from(epochs).unwrap();
        assert_eq!(n("getInflationReward"), epochs, "one per epoch: the floor");
        assert_eq!(n("getBlockTime"), epochs);
        assert_eq!(n("getBlocksWithLimit"), 0);
        assert_eq!(n("getProgramAccounts"), 2);
        assert_eq!(n("getEpochSchedule") + n("getEpochInfo"), 2);
        assert_eq!(n("getMultipleAccounts"), multiple);
        // The transactions: one signature page per source (the wallet and
        // each stake account) and the quote's count of the wallet's, each
        // creation fetched once.
        assert_eq!(n("getSignaturesForAddress"), 2 + accounts);
        assert_eq!(n("getTransaction"), accounts);
        let staking = n("getInflationReward")
            + n("getBlockTime")
            + n("getProgramAccounts")
            + n("getEpochSchedule")
            + n("getEpochInfo")
            + n("getMultipleAccounts");
        let floor = 2 * epochs + 4 + multiple;
        assert_eq!(staking, floor);
        println!(
            "| {accounts} | {epochs} | {} | {} | 2 | 2 | {multiple} | {staking} | {floor} |",
            n("getInflationReward"),
            n("getBlockTime"),
        );
        app.stop().await;
    }
}

/// A provider that will not serve `getMultipleAccounts`: the accounts still
/// the wallet's cannot be checked, and the scan says so (`partial`, naming
/// them) rather than taking them for closed; the handed-over account,
/// checked against its own history, still reconciles.
#[tokio::test]
async fn stake_balances_the_provider_does_not_serve_leave_the_scan_partial() {
    let shared = staker();
    shared.refuse_balances.store(true, Ordering::SeqCst);
    let (app, _stand_in) = app_with_encoding(shared, None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "partial", "{job}");
    let error = job["error"].as_str().unwrap();
    for i in 1..=3 {
        assert!(
            error.contains(&format!("{}: its balance was not served", stake(i))),
            "{error}"
        );
    }
    assert!(!error.contains(&stake(4)), "{error}");
    let accounts = stake_accounts_in_positions(&app).await;
    assert_eq!(accounts.len(), 1, "{accounts:?}");
    assert_eq!(accounts[&stake(4)]["status"], "handed_over");
    assert_eq!(accounts[&stake(4)]["reconciled"], true);
    app.stop().await;
}

/// Someone else's stake account the wallet received: `other()` creates
/// account 6 with 2 SOL and delegates it (slot 120, a transaction without
/// the wallet), its rewards of epochs 2-4 are paid to them, then they hand
/// its withdraw authority to the wallet (slot 550, their transaction and
/// fee), and the wallet withdraws 1 SOL from it (slot 850).
fn receiver() -> Shared {
    let w = wallet();
    let o = other();
    let six = stake(6);
    let at_receipt = 2 * SOL + paid(6, 2..=4);
    let at_withdraw = 2 * SOL + paid(6, 2..=7);
    let txs = [
        tx_by(
            &o,
            61,
            120,
            vec![
                json!({"program": "system", "programId": SYSTEM, "stackHeight": null, "parsed": {"type": "createAccount",
                    "info": {"source": o, "newAccount": six, "lamports": 2 * SOL, "space": 200, "owner": STAKE}}}),
                stake_ix(
                    "initialize",
                    json!({"stakeAccount": six, "rentSysvar": RENT,
                        "authorized": {"staker": o, "withdrawer": o},
                        "lockup": {"unixTimestamp": 0, "epoch": 0, "custodian": SYSTEM}}),
                ),
                stake_ix(
                    "delegate",
                    json!({"stakeAccount": six, "voteAccount": vote(), "clockSysvar": CLOCK,
                        "stakeHistorySysvar": HISTORY, "stakeConfigAccount": CONFIG, "stakeAuthority": o}),
                ),
            ],
            &[
                (o.clone(), 5 * SOL, 3 * SOL - FEE),
                (six.clone(), 0, 2 * SOL),
            ],
        ),
        tx_by(
            &o,
            62,
            550,
            vec![stake_ix(
                "authorize",
                json!({"stakeAccount": six, "clockSysvar": CLOCK, "authority": o, "newAuthority": w, "authorityType": "Withdrawer"}),
            )],
            &[
                (o.clone(), 3 * SOL - FEE, 3 * SOL - 2 * FEE),
                (six.clone(), at_receipt, at_receipt),
            ],
        ),
        tx(
            63,
            850,
            vec![stake_ix(
                "withdraw",
                json!({"stakeAccount": six, "destination": w, "clockSysvar": CLOCK, "stakeHistorySysvar": HISTORY, "withdrawAuthority": w, "lamports": SOL}),
            )],
            &[
                (w.clone(), SOL, 2 * SOL - FEE),
                (six.clone(), at_withdraw, at_withdraw - SOL),
            ],
        ),
    ];
    let entry = |t: &Value| {
        let r = &t["result"];
        json!({"signature": r["transaction"]["signatures"][0], "slot": r["slot"], "blockTime": r["blockTime"], "err": null, "memo": null})
    };
    let newest_first =
        |picks: &[usize]| -> Vec<Value> { picks.iter().rev().map(|i| entry(&txs[*i])).collect() };
    let history: HashMap<String, Vec<Value>> = [
        (w.clone(), newest_first(&[1, 2])),
        (six.clone(), newest_first(&[0, 1, 2])),
        (o.clone(), newest_first(&[0, 1])),
    ]
    .into();
    let rewards: HashMap<(String, u64), Value> = (2..=11).map(|e| reward(6, e)).collect();
    let shared = Shared {
        history,
        transactions: txs
            .iter()
            .map(|t| {
                (
                    t["result"]["transaction"]["signatures"][0]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                    t.clone(),
                )
            })
            .collect(),
        stake_accounts: vec![(six.clone(), stake_state(&w, &w, 1))],
        inflation_rewards: Mutex::new(rewards),
        balances: Mutex::new([(six, SOL + paid(6, 2..=11))].into()),
        slots_per_epoch: SPE,
        block_times: block_times(),
        ..Shared::default()
    };
    shared.epoch.store(12, Ordering::SeqCst);
    shared
}

/// The wallet's get_ledger entries, by signature.
async fn ledger_by_signature(app: &TestApp) -> BTreeMap<String, Vec<Value>> {
    let page = app
        .call_tool("get_ledger", json!({"address": wallet(), "limit": 1000}))
        .await;
    assert_eq!(page["isError"], false, "{page}");
    let mut by: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for e in page["structuredContent"]["entries"].as_array().unwrap() {
        by.entry(e["signature"].as_str().unwrap().to_owned())
            .or_default()
            .push(e.clone());
    }
    by
}

/// A stake account the wallet received is the wallet's from the
/// transaction that gave it, and only from there: that transaction is a
/// `transfer_in` of everything the account held (2 SOL and the former
/// owner's rewards of epochs 2-4) that stays staked (`stake_deposit`); the
/// former owner's own transaction (its creation) is no leg of the
/// wallet's; the rewards are the wallet's income only from epoch 5 on (the
/// first credited after slot 550; epoch 4's was credited at slot 500, to
/// the former owner), and the account reconciles from its receipt: what it
/// held then + rewards 5-11 − the 1 SOL withdrawn = its balance now.
#[tokio::test]
async fn a_received_stake_account_is_the_wallets_only_from_its_receipt() {
    let (app, stand_in) = app_with_encoding(receiver(), None, TxEncoding::JsonParsed).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "completed", "{job}");
    let ledger = ledger_by_signature(&app).await;
    let sig = |n: u8| bs58::encode([n; 64]).into_string();
    assert!(
        !ledger.contains_key(&sig(61)),
        "the former owner's creation: {ledger:?}"
    );
    let at_receipt = 2 * SOL + paid(6, 2..=4);
    let legs = |n: u8| -> Vec<(String, String)> {
        let mut legs: Vec<(String, String)> = ledger[&sig(n)]
            .iter()
            .map(|e| {
                (
                    e["operation_type"].as_str().unwrap().to_owned(),
                    e["amount"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        legs.sort();
        legs
    };
    assert_eq!(
        legs(62),
        vec![
            ("stake_deposit".to_owned(), format!("-{at_receipt}")),
            ("transfer_in".to_owned(), at_receipt.to_string()),
        ]
    );
    assert_eq!(
        legs(63),
        vec![
            ("network_fee".to_owned(), format!("-{FEE}")),
            ("stake_withdraw".to_owned(), SOL.to_string()),
        ]
    );
    let rewards: BTreeMap<String, String> = rewards_in_ledger(&app)
        .await
        .into_iter()
        .map(|(s, e)| (s, e["amount"].as_str().unwrap().to_owned()))
        .collect();
    let expected: BTreeMap<String, String> = (5..=11)
        .map(|e| (reward_signature(6, e), amount(6, e).to_string()))
        .collect();
    assert_eq!(rewards, expected);
    // Asked from epoch 4 (the one before the receipt) on, once each.
    assert_eq!(epochs_asked(&stand_in), (4..=11).collect::<Vec<u64>>());
    let accounts = stake_accounts_in_positions(&app).await;
    let six = &accounts[&stake(6)];
    assert_eq!(six["status"], "open", "{six}");
    assert_eq!(six["balance_lamports"], (SOL + paid(6, 2..=11)).to_string());
    assert_eq!(six["reconciled"], true, "{six}");
    app.stop().await;
}

/// A provider that ignores `getProgramAccounts`' filters answers every
/// stake account it has: only those whose staker or withdrawer really is
/// the wallet are taken (account 5, someone else's, is not: none of its
/// rewards is income, its history is not listed).
#[tokio::test]
async fn stake_accounts_a_provider_lists_against_its_filter_are_left_out() {
    let shared = staker();
    shared
        .ignore_program_account_filters
        .store(true, Ordering::SeqCst);
    let (app, stand_in) = app_with_encoding(shared, None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "completed", "{job}");
    let found: Vec<String> = rewards_in_ledger(&app).await.into_keys().collect();
    let mut expected: Vec<String> = earned()
        .into_iter()
        .map(|(i, e)| reward_signature(i, e))
        .collect();
    expected.sort();
    assert_eq!(found, expected);
    let listed: Vec<String> = stand_in
        .shared
        .params_of("getSignaturesForAddress")
        .iter()
        .map(|p| p[0].as_str().unwrap().to_owned())
        .collect();
    assert!(!listed.contains(&stake(5)), "{listed:?}");
    assert!(
        !stake_accounts_in_positions(&app)
            .await
            .contains_key(&stake(5))
    );
    app.stop().await;
}

/// A provider that will not list stake accounts (`getProgramAccounts`
/// refused): the accounts the wallet's history names are still found and
/// their rewards read, and the scan ends `partial`, saying that an account
/// someone else created for the wallet may be missing; once the provider
/// lists them, the next scan completes.
#[tokio::test]
async fn a_provider_that_will_not_list_stake_accounts_leaves_the_scan_partial_saying_so() {
    let shared = staker();
    shared.refuse_program_accounts.store(true, Ordering::SeqCst);
    let (app, stand_in) = app_with_encoding(shared, None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "partial", "{job}");
    let error = job["error"].as_str().unwrap();
    assert!(
        error.contains("would not list the wallet's current stake accounts (getProgramAccounts)"),
        "{error}"
    );
    assert!(!error.contains("transactions could not"), "{error}");
    assert_eq!(rewards_in_ledger(&app).await.len(), earned().len());

    stand_in
        .shared
        .refuse_program_accounts
        .store(false, Ordering::SeqCst);
    let job = scan(&app, "incremental").await;
    assert_eq!(job["status"], "completed", "{job}");
    app.stop().await;
}

/// An answer that cannot be the epoch asked (another epoch's, or credited
/// outside the next epoch) is never income: that epoch counts as not
/// served, named in the `partial` outcome, and asked again next time; the
/// other epochs are read as usual.
#[tokio::test]
async fn a_reward_answer_for_another_epoch_is_no_income_and_leaves_its_epoch_missing() {
    let shared = staker();
    {
        let mut rewards = shared.inflation_rewards.lock().unwrap();
        let (key, mut answer) = reward(1, 4);
        answer["epoch"] = json!(9);
        rewards.insert(key, answer);
        let (key, mut answer) = reward(1, 8);
        answer["effectiveSlot"] = json!(8 * SPE + 5);
        rewards.insert(key, answer);
    }
    let (app, stand_in) = app_with_encoding(shared, None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "partial", "{job}");
    let error = job["error"].as_str().unwrap();
    assert!(error.contains("epochs 4, 8 were not served"), "{error}");
    let found = rewards_in_ledger(&app).await;
    assert!(!found.contains_key(&reward_signature(1, 4)));
    assert!(!found.contains_key(&reward_signature(1, 8)));
    assert_eq!(found.len(), earned().len() - 2);
    assert_eq!(
        found[&reward_signature(1, 9)]["amount"],
        amount(1, 9).to_string(),
        "epoch 9's own reward, once"
    );

    // Served right, the next scan asks those two epochs again and completes.
    {
        let mut rewards = stand_in.shared.inflation_rewards.lock().unwrap();
        rewards.extend([reward(1, 4), reward(1, 8)]);
    }
    stand_in.shared.requests.lock().unwrap().clear();
    let job = scan(&app, "incremental").await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(epochs_asked(&stand_in), vec![4, 8]);
    assert_eq!(rewards_in_ledger(&app).await.len(), earned().len());
    app.stop().await;
}

/// A reward whose slot has no block time the provider can give (no block
/// at or after its effective slot) is not written undated (a lot dated
/// 1970 would be long-term and valued at nothing): its epoch counts as not
/// served and is named.
#[tokio::test]
async fn a_reward_without_a_block_time_is_not_written_and_its_epoch_is_named() {
    let mut shared = staker();
    shared.block_times.retain(|slot, _| *slot < 12 * SPE);
    let (app, _stand_in) = app_with_encoding(shared, None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "partial", "{job}");
    let error = job["error"].as_str().unwrap();
    assert!(error.contains("epochs 11 were not served"), "{error}");
    let found = rewards_in_ledger(&app).await;
    assert!(!found.contains_key(&reward_signature(1, 11)));
    assert_eq!(found.len(), earned().len() - 1);
    assert!(found.values().all(|e| e["block_time"].is_string()));
    app.stop().await;
}

/// `getEpochInfo` answering an epoch no chain can have reached fails the
/// scan (the provider is broken; said as an RPC failure the scan can be run
/// again after) before any epoch is planned or asked.
#[tokio::test]
async fn an_epoch_no_chain_has_reached_fails_the_scan_before_asking_any() {
    let shared = staker();
    shared.epoch.store(1_000_000_000_000, Ordering::SeqCst);
    let (app, stand_in) = app_with_encoding(shared, None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "failed", "{job}");
    assert_eq!(
        job["error"],
        "the Solana RPC endpoint failed; the scan can be run again"
    );
    assert!(epochs_asked(&stand_in).is_empty());
    app.stop().await;
}

/// Run one statement on the test's database (SQLite or PostgreSQL).
async fn exec(app: &TestApp, sql: &str) {
    let url = &app.state.config().database_url;
    if url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query(sql).execute(&pool).await.unwrap();
        pool.close().await;
    } else {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::query(sql).execute(&pool).await.unwrap();
        pool.close().await;
    }
}

/// A wallet scanned before receipts were read (decoder 1) holds what that
/// decoder wrote: the former owner's creation of account 6 as the
/// wallet's `transfer_in` + `stake_deposit`, and the former owner's reward
/// of epoch 4 as income; no receipt slot is known. Its next scan derives
/// its legs again from the stored views: the receipt is found in them, the
/// creation is no leg of the wallet's, the epoch-4 reward and its flow are
/// removed, and the account reconciles from its receipt, with no
/// `getTransaction` asked.
#[tokio::test]
async fn a_wallet_scanned_before_receipts_were_read_is_corrected_by_its_next_scan() {
    let (app, stand_in) = app_with_encoding(receiver(), None, TxEncoding::Json).await;
    let job = scan(&app, "full").await;
    assert_eq!(job["status"], "completed", "{job}");

    // Back to what decoder 1 left.
    let w = wallet();
    let six = stake(6);
    let store = app.state.store();
    let created = 2 * SOL as i128;
    let sig61 = bs58::encode([61u8; 64]).into_string();
    let transfer_in = server::ledger::Leg {
        signature: sig61.clone(),
        slot: 120,
        block_time: Some(1_700_000_000 + 120 * 1_728),
        index: 0,
        operation_type: server::ledger::OperationType::TransferIn,
        mint: "sol".to_owned(),
        amount: created,
        decimals: 9,
        counterparties: Vec::new(),
        position: None,
        venue: None,
        router: None,
    };
    let old_legs = [
        transfer_in.clone(),
        server::ledger::Leg {
            index: 1,
            operation_type: server::ledger::OperationType::StakeDeposit,
            amount: -created,
            ..transfer_in
        },
    ];
    store
        .replace_legs(
            &w,
            &[server::store::TransactionLegs {
                signature: &sig61,
                slot: 120,
                block_time: Some(1_700_000_000 + 120 * 1_728),
                failed: false,
                legs: &old_legs,
            }],
            1,
        )
        .await
        .unwrap();
    let old_reward = server::ledger::protocols::stake::staking_reward_leg(
        &six,
        4,
        amount(6, 4),
        500,
        Some(1_700_000_000 + 5 * 172_800),
    );
    store
        .write_legs(
            &w,
            &[server::store::TransactionLegs {
                signature: &old_reward.signature,
                slot: 500,
                block_time: old_reward.block_time,
                failed: false,
                legs: std::slice::from_ref(&old_reward),
            }],
        )
        .await
        .unwrap();
    exec(
        &app,
        "UPDATE wallet_stake_accounts SET acquired_slot = NULL",
    )
    .await;
    exec(
        &app,
        "UPDATE wallet_transactions SET decoder_version = 1 WHERE signature NOT LIKE '%:%'",
    )
    .await;
    assert!(ledger_by_signature(&app).await.contains_key(&sig61));
    assert!(
        rewards_in_ledger(&app)
            .await
            .contains_key(&reward_signature(6, 4))
    );

    stand_in.shared.requests.lock().unwrap().clear();
    let job = scan(&app, "incremental").await;
    assert_eq!(job["status"], "completed", "{job}");
    assert!(
        stand_in.shared.params_of("getTransaction").is_empty(),
        "derived again from the stored views"
    );
    let ledger = ledger_by_signature(&app).await;
    assert!(!ledger.contains_key(&sig61), "{:?}", ledger.get(&sig61));
    let rewards: Vec<String> = rewards_in_ledger(&app).await.into_keys().collect();
    let mut expected: Vec<String> = (5..=11).map(|e| reward_signature(6, e)).collect();
    expected.sort();
    assert_eq!(rewards, expected);
    let accounts = stake_accounts_in_positions(&app).await;
    assert_eq!(accounts[&six]["reconciled"], true, "{}", accounts[&six]);
    app.stop().await;
}
