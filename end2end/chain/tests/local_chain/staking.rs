//! A staker on a real runtime (issue 21 item 7): surfpool runs the Stake
//! program (the core BPF build Agave 4.2 ships) and the Vote program, so a
//! wallet here creates stake accounts, delegates one to a vote account,
//! splits, merges, withdraws, closes and hands one over, exactly as on
//! mainnet. `ledger` scans the wallet in both encodings (the `json` one on
//! `CHAIN_DATABASE_URL` when set) and must show:
//!
//! - every transaction's legs summing to the wallet's own balance change
//!   read from the chain (per-transaction conservation);
//! - `stake_deposit` / `stake_withdraw` for SOL moved into and out of the
//!   wallet's own stake accounts, nothing but the fee for a split, a merge,
//!   a delegation or a deactivation, and the handover of a stake account's
//!   withdraw authority as `stake_withdraw` + `transfer_out` (a disposal of
//!   its SOL at that time);
//! - each stake account reconciled to the lamport against the chain (the
//!   scan completes, never `partial`);
//! - the lots as they were: the one lot the airdrop opened is still the only
//!   SOL lot, with its date; SOL's open quantity is the wallet's balance on
//!   chain plus what its open stake account holds, `staked` that account's
//!   balance; and no gain, since every price is the same 150.25.
//!
//! Rewards cannot be tested here: surfpool stays in epoch 0 and answers
//! `getInflationReward` with made-up zeros; the API tests serve them from a
//! stand-in (`server/tests/api/staking.rs`).

use solana_stake_interface::{
    instruction as stake,
    state::{Authorized, Lockup, StakeAuthorize, StakeStateV2},
};
use solana_vote_interface::{
    instruction::{CreateVoteAccountConfig, create_account_with_config},
    state::VoteInit,
};

use super::*;

const SOL: u64 = 1_000_000_000;

/// What the staker's history holds, for the checks.
struct Staker {
    wallet: Keypair,
    airdrop: String,
    /// Creates stake account 1 with 5 SOL.
    create_one: String,
    /// Creates stake account 4 with 3 SOL and delegates it.
    create_delegated: String,
    split: String,
    withdraw_part: String,
    merge: String,
    withdraw_all: String,
    /// Creates stake account 3 with 2 SOL.
    create_three: String,
    /// Moves stake account 3's withdraw authority to someone else.
    hand_over: String,
    deactivate: String,
    accounts: [Keypair; 4],
    buyer: Keypair,
}

fn build_staker(rpc: &RpcClient) -> Staker {
    let wallet = Keypair::new();
    let buyer = Keypair::new();
    let accounts = [
        Keypair::new(),
        Keypair::new(),
        Keypair::new(),
        Keypair::new(),
    ];
    let [one, two, three, four] = &accounts;
    let w = wallet.pubkey();
    let airdrop = rpc.request_airdrop(&w, 20 * SOL).unwrap().to_string();
    confirm(rpc, &airdrop);

    // A validator's vote account to delegate to, paid by someone else.
    let validator = Keypair::new();
    let vote = Keypair::new();
    confirm(
        rpc,
        &rpc.request_airdrop(&validator.pubkey(), 2 * SOL)
            .unwrap()
            .to_string(),
    );
    let vote_init = VoteInit {
        node_pubkey: validator.pubkey(),
        authorized_voter: validator.pubkey(),
        authorized_withdrawer: validator.pubkey(),
        commission: 5,
    };
    let config = CreateVoteAccountConfig::default();
    let vote_rent = rpc
        .get_minimum_balance_for_rent_exemption(config.space as usize)
        .unwrap();
    send(
        rpc,
        &create_account_with_config(
            &validator.pubkey(),
            &vote.pubkey(),
            &vote_init,
            vote_rent,
            config,
        ),
        &validator,
        &[&vote],
        false,
    );

    let mine = Authorized::auto(&w);
    let create_one = send(
        rpc,
        &stake::create_account(&w, &one.pubkey(), &mine, &Lockup::default(), 5 * SOL),
        &wallet,
        &[one],
        false,
    );
    let create_delegated = send(
        rpc,
        &stake::create_account_and_delegate_stake(
            &w,
            &four.pubkey(),
            &vote.pubkey(),
            &mine,
            &Lockup::default(),
            3 * SOL,
        ),
        &wallet,
        &[four],
        false,
    );
    // 2 SOL of account 1 into a new account 2: the wallet's SOL does not move.
    let split = send(
        rpc,
        &stake::split(&one.pubkey(), &w, 2 * SOL, &two.pubkey()),
        &wallet,
        &[two],
        false,
    );
    let withdraw_part = send(
        rpc,
        &[stake::withdraw(&two.pubkey(), &w, &w, SOL, None)],
        &wallet,
        &[],
        false,
    );
    // Account 2's remaining 1 SOL back into account 1.
    let merge = send(
        rpc,
        &stake::merge(&one.pubkey(), &two.pubkey(), &w),
        &wallet,
        &[],
        false,
    );
    // Account 1 holds 5 - 2 + 1 = 4 SOL; withdrawing all of it closes it.
    let withdraw_all = send(
        rpc,
        &[stake::withdraw(&one.pubkey(), &w, &w, 4 * SOL, None)],
        &wallet,
        &[],
        false,
    );
    let create_three = send(
        rpc,
        &stake::create_account(&w, &three.pubkey(), &mine, &Lockup::default(), 2 * SOL),
        &wallet,
        &[three],
        false,
    );
    let hand_over = send(
        rpc,
        &[stake::authorize(
            &three.pubkey(),
            &w,
            &buyer.pubkey(),
            StakeAuthorize::Withdrawer,
            None,
        )],
        &wallet,
        &[],
        false,
    );
    // Deactivating the delegated account moves no SOL.
    let deactivate = send(
        rpc,
        &[stake::deactivate_stake(&four.pubkey(), &w)],
        &wallet,
        &[],
        false,
    );
    Staker {
        wallet,
        airdrop,
        create_one,
        create_delegated,
        split,
        withdraw_part,
        merge,
        withdraw_all,
        create_three,
        hand_over,
        deactivate,
        accounts,
        buyer,
    }
}

/// The legs of one signature as (operation type, lamports).
fn legs_of(entries: &[Value], sig: &str) -> Vec<(String, i128)> {
    entries
        .iter()
        .filter(|e| e["signature"] == sig)
        .map(|e| {
            (
                e["operation_type"].as_str().unwrap().to_owned(),
                e["amount"].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

fn fee_of(rpc: &RpcClient, sig: &str) -> i128 {
    let tx = call(
        rpc,
        RpcRequest::GetTransaction,
        json!([sig, {"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0}]),
    );
    i128::from(tx["meta"]["fee"].as_u64().unwrap())
}

/// Every signature of the wallet's own history (stake accounts' histories
/// are the scanner's business; their transactions are the wallet's here
/// because it signed them all).
fn wallet_signatures(rpc: &RpcClient, wallet: &str) -> Vec<String> {
    let page = call(
        rpc,
        RpcRequest::GetSignaturesForAddress,
        json!([wallet, {"limit": 1000, "commitment": "confirmed"}]),
    );
    page.as_array()
        .unwrap()
        .iter()
        .map(|e| e["signature"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_stakers_deposits_and_withdrawals_on_a_real_runtime_keep_its_lots() {
    let rpc_url = start_chain();
    let rpc = RpcClient::new_with_commitment(rpc_url.clone(), CommitmentConfig::confirmed());
    let staker = build_staker(&rpc);
    let wallet = staker.wallet.pubkey().to_string();
    let [one, two, three, four] = staker.accounts.each_ref().map(|k| k.pubkey().to_string());
    let stake_rent = i128::from(
        rpc.get_minimum_balance_for_rent_exemption(StakeStateV2::size_of())
            .unwrap(),
    );
    assert!(stake_rent > 0);

    let prices_url = start_prices();
    let dir = std::env::temp_dir().join(format!("ledger-chain-stake-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ledgers = Vec::new();
    let mut running = Vec::new();
    for encoding in ["json", "jsonParsed"] {
        let database_url = match std::env::var("CHAIN_DATABASE_URL") {
            Ok(url) if encoding == "json" => url,
            _ => format!("sqlite://{}/{encoding}.db", dir.display()),
        };
        let ledger = Ledger::start(&rpc_url, &database_url, encoding, &prices_url);
        // A completed scan: every stake account reconciled to the lamport
        // (a difference ends it `partial`, and scan() insists on completed).
        let entries = ledger.scan(&wallet);
        for sig in wallet_signatures(&rpc, &wallet) {
            let tx = call(
                &rpc,
                RpcRequest::GetTransaction,
                json!([sig, {"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0}]),
            );
            let mut sums: BTreeMap<String, i128> = BTreeMap::new();
            for (_, amount) in legs_of(&entries, &sig) {
                *sums.entry("sol".to_owned()).or_insert(0) += amount;
            }
            sums.retain(|_, v| *v != 0);
            assert_eq!(sums, chain_changes(&tx, &wallet), "{encoding}: {sig}");
        }
        ledgers.push(entries);
        running.push(ledger);
    }
    assert_eq!(ledgers[0], ledgers[1], "both encodings read the same legs");
    let signatures = wallet_signatures(&rpc, &wallet);
    let entries = &ledgers[0];

    // Each transaction's meaning, with amounts from first principles: what
    // the test moved, and the fee the chain charged.
    let fee = |sig: &str| ("network_fee".to_owned(), -fee_of(&rpc, sig));
    let leg = |op: &str, lamports: i128| (op.to_owned(), lamports);
    let s = i128::from(SOL);
    assert_eq!(
        legs_of(entries, &staker.airdrop),
        [leg("transfer_in", 20 * s)]
    );
    for (sig, lamports) in [
        (&staker.create_one, 5 * s),
        (&staker.create_delegated, 3 * s),
        (&staker.create_three, 2 * s),
    ] {
        // The reserve moves with the stake: no rent_deposit.
        assert_eq!(
            legs_of(entries, sig),
            [fee(sig), leg("stake_deposit", -lamports)],
            "{sig}"
        );
    }
    for sig in [&staker.split, &staker.merge, &staker.deactivate] {
        assert_eq!(legs_of(entries, sig), [fee(sig)], "{sig}");
    }
    assert_eq!(
        legs_of(entries, &staker.withdraw_part),
        [fee(&staker.withdraw_part), leg("stake_withdraw", s)]
    );
    assert_eq!(
        legs_of(entries, &staker.withdraw_all),
        [fee(&staker.withdraw_all), leg("stake_withdraw", 4 * s)]
    );
    // Handing the withdraw authority over disposes of the account's SOL.
    let hand_over = legs_of(entries, &staker.hand_over);
    assert_eq!(
        hand_over,
        [
            fee(&staker.hand_over),
            leg("stake_withdraw", 2 * s),
            leg("transfer_out", -2 * s)
        ]
    );
    let out = entries
        .iter()
        .find(|e| {
            e["signature"] == staker.hand_over.as_str() && e["operation_type"] == "transfer_out"
        })
        .unwrap();
    assert_eq!(
        out["counterparties"][0]["address"],
        staker.buyer.pubkey().to_string(),
        "{out}"
    );
    assert!(
        !entries
            .iter()
            .any(|e| e["operation_type"] == "rent_deposit"),
        "a stake account's reserve is staked SOL, not rent"
    );

    for ledger in &running {
        let (status, positions) =
            ledger.http("GET", &format!("/v1/wallets/{wallet}/positions"), None);
        assert_eq!(status, 200, "{positions}");
        // Each stake account, from the chain's own balances.
        let accounts: BTreeMap<String, Value> = positions["stake_accounts"]
            .as_array()
            .unwrap_or_else(|| panic!("no stake_accounts: {positions}"))
            .iter()
            .map(|a| (a["address"].as_str().unwrap().to_owned(), a.clone()))
            .collect();
        let balance = |who: &str| i128::from(rpc.get_balance(&pk(who)).unwrap());
        assert_eq!(balance(&one), 0, "withdrawn to the last lamport");
        assert_eq!(balance(&two), 0, "merged away");
        let expected = [
            (&one, "closed", 0),
            (&two, "closed", 0),
            (&three, "handed_over", balance(&three)),
            (&four, "open", balance(&four)),
        ];
        assert_eq!(accounts.len(), expected.len(), "{accounts:?}");
        for (address, status, lamports) in expected {
            let a = &accounts[address.as_str()];
            assert_eq!(a["status"], status, "{a}");
            assert_eq!(a["balance_lamports"], lamports.to_string(), "{a}");
            assert_eq!(a["reconciled"], true, "{a}");
            assert_eq!(a["difference_lamports"], "0", "{a}");
        }
        assert_eq!(balance(&four), 3 * s, "no reward in epoch 0");
        assert_eq!(positions["staked_lamports"], (3 * s).to_string());
        let liquid = balance(&wallet);
        assert_eq!(positions["liquid_lamports"], liquid.to_string());
        let sol = positions["positions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["mint"] == "sol")
            .unwrap_or_else(|| panic!("no SOL: {positions}"));
        let open = sol_string(liquid + 3 * s);
        assert_eq!(sol["open_quantity"], open, "{sol}");
        assert_eq!(sol["staked"], "3", "{sol}");
        // The airdrop's lot is still the only one, with its date: no stake
        // move opened or closed a lot (withdrawals are not purchases).
        let airdrop_time = entries
            .iter()
            .find(|e| e["signature"] == staker.airdrop.as_str())
            .unwrap()["block_time"]
            .clone();
        let lots = sol["lots"].as_array().unwrap();
        assert_eq!(lots.len(), 1, "{lots:?}");
        assert_eq!(lots[0]["acquired"], airdrop_time, "{lots:?}");
        assert_eq!(lots[0]["quantity"], open, "{lots:?}");
        // One price everywhere (150.25 USD a SOL, 150,250 pUSD a lamport):
        // the disposals are the 2 SOL handed over and every fee, at the
        // airdrop lot's own unit cost, so the basis is exact; the proceeds
        // are the same SOL at the same price, less the handover's fee (a
        // cost of that disposal, docs/cost-basis.md), with each leg's USD
        // value kept to the micro-dollar (at most half a micro-dollar off a
        // row). So the loss is the handover's fee, no more.
        let realized = &positions["realized"];
        assert_eq!(realized["incomplete_rows"], 0, "{realized}");
        let fees: i128 = signatures
            .iter()
            .filter(|sig| **sig != staker.airdrop)
            .map(|sig| fee_of(&rpc, sig))
            .sum();
        let disposed = 2 * s + fees;
        assert_eq!(
            pusd(&realized["basis"]),
            disposed * PUSD_PER_LAMPORT,
            "{realized}"
        );
        let rows = i128::from(realized["rows"].as_u64().unwrap());
        let expected_gain = -fee_of(&rpc, &staker.hand_over) * PUSD_PER_LAMPORT;
        let gain = pusd(&realized["gain"]);
        assert!(
            (gain - expected_gain).abs() <= rows * 500_000,
            "gain {gain} pUSD, expected {expected_gain} within {rows} half micro-dollars: {realized}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Lamports as a decimal string of SOL (`4.999995` for 4,999,995,000),
/// written by hand so the test does not lean on the server's formatting.
fn sol_string(lamports: i128) -> String {
    let whole = lamports / 1_000_000_000;
    let frac = lamports % 1_000_000_000;
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:09}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// SOL at 150.25 USD is 150,250 pico-dollars a lamport.
const PUSD_PER_LAMPORT: i128 = 150_250;

/// A decimal USD string in pico-dollars (10^-12), exactly.
fn pusd(v: &Value) -> i128 {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("not a decimal string: {v}"));
    let (sign, digits) = s.strip_prefix('-').map_or((1, s), |d| (-1, d));
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    assert!(frac.len() <= 12, "{s}");
    let frac = format!("{frac:0<12}");
    sign * (whole.parse::<i128>().unwrap() * 1_000_000_000_000 + frac.parse::<i128>().unwrap())
}
