//! Which stake accounts a transaction shows to be a wallet's: the accounts
//! of its Stake program instructions (top level and inner) in which the
//! wallet takes part as an authority, a new authority, or a named staker or
//! withdrawer. A scan finds current stake accounts with `getProgramAccounts`;
//! this finds the ones closed or handed over since, from the wallet's own
//! history, whichever encoding the provider used (`jsonParsed` by
//! instruction type and field names, `json` by the bincode instruction tag
//! and account positions of the Stake program's `StakeInstruction`,
//! solana-program/stake `interface/src/instruction.rs`). Pure: JSON in,
//! addresses out; the scanner stores them and scans their histories.

use serde_json::Value;

/// The Stake program.
pub const STAKE_PROGRAM: &str = "Stake11111111111111111111111111111111111111";

/// One stake account a transaction showed to be the wallet's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StakeTouch {
    pub account: String,
    /// This instruction moved the account's withdraw authority from the
    /// wallet to someone else: from here on it is not the wallet's.
    pub handed_over: bool,
    /// This instruction moved the account's withdraw authority from someone
    /// else to the wallet: it is the wallet's from here on, and what it did
    /// before was the former owner's.
    pub acquired: bool,
}

/// The stake accounts `tx` (a `getTransaction` result, or the whole
/// response) shows to be `wallet`'s, in instruction order. `keys` is the
/// transaction's full account list (`TxView::keys`), which the `json`
/// encoding's account indexes point into.
pub fn stake_touches(tx: &Value, keys: &[String], wallet: &str) -> Vec<StakeTouch> {
    let result = tx.get("result").unwrap_or(tx);
    if !result["meta"]["err"].is_null() {
        return Vec::new();
    }
    let top = result["transaction"]["message"]["instructions"]
        .as_array()
        .into_iter()
        .flatten();
    let inner = result["meta"]["innerInstructions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|set| set["instructions"].as_array())
        .flatten();
    let mut touches = Vec::new();
    for ix in top.chain(inner) {
        let program = ix["programId"].as_str().map(str::to_owned).or_else(|| {
            ix["programIdIndex"]
                .as_u64()
                .and_then(|i| keys.get(usize::try_from(i).ok()?).cloned())
        });
        if program.as_deref() != Some(STAKE_PROGRAM) {
            continue;
        }
        match ix.get("parsed").filter(|p| p.is_object()) {
            Some(parsed) => parsed_touches(parsed, wallet, &mut touches),
            None => raw_touches(ix, keys, wallet, &mut touches),
        }
    }
    touches
}

/// Whether `value` (an instruction's `info`) names `wallet` anywhere but
/// under `skip`.
fn names(value: &Value, wallet: &str, skip: Option<&str>) -> bool {
    match value {
        Value::String(s) => s == wallet,
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| Some(k.as_str()) != skip && names(v, wallet, None)),
        Value::Array(list) => list.iter().any(|v| names(v, wallet, None)),
        _ => false,
    }
}

fn parsed_touches(parsed: &Value, wallet: &str, out: &mut Vec<StakeTouch>) {
    let kind = parsed["type"].as_str().unwrap_or_default();
    let info = &parsed["info"];
    // A withdraw's destination is whoever is paid, not an authority.
    let skip = (kind == "withdraw").then_some("destination");
    if !names(info, wallet, skip) {
        return;
    }
    let mut accounts: Vec<&str> = ["stakeAccount", "newSplitAccount"]
        .iter()
        .filter_map(|k| info[*k].as_str())
        .collect();
    // Merge and the move instructions name two stake accounts.
    if matches!(kind, "merge" | "moveStake" | "moveLamports") {
        accounts.extend(
            ["source", "destination"]
                .iter()
                .filter_map(|k| info[*k].as_str()),
        );
    }
    // `authorize` and `authorizeChecked` name the signing authority and the
    // new one `authority` / `newAuthority`; the `…WithSeed` forms
    // `authorityBase` / `newAuthorized` (agave's parse_stake).
    let withdrawer =
        kind.starts_with("authorize") && info["authorityType"].as_str() == Some("Withdrawer");
    let new = info["newAuthority"]
        .as_str()
        .or_else(|| info["newAuthorized"].as_str());
    let old = info["authority"]
        .as_str()
        .or_else(|| info["authorityBase"].as_str());
    let handed_over = withdrawer && new.is_some_and(|a| a != wallet);
    let acquired = withdrawer && new == Some(wallet) && old.is_some_and(|a| a != wallet);
    push(out, &accounts, handed_over, acquired);
}

fn push(out: &mut Vec<StakeTouch>, accounts: &[&str], handed_over: bool, acquired: bool) {
    for (i, account) in accounts.iter().enumerate() {
        out.push(StakeTouch {
            account: (*account).to_owned(),
            // Only the first account of an authorize is the one handed
            // over or received.
            handed_over: handed_over && i == 0,
            acquired: acquired && i == 0,
        });
    }
}

// `StakeInstruction` tags (bincode u32, little-endian).
const INITIALIZE: u32 = 0;
const AUTHORIZE: u32 = 1;
const SPLIT: u32 = 3;
const WITHDRAW: u32 = 4;
const MERGE: u32 = 7;
const AUTHORIZE_WITH_SEED: u32 = 8;
const AUTHORIZE_CHECKED: u32 = 10;
const AUTHORIZE_CHECKED_WITH_SEED: u32 = 11;
const MOVE_STAKE: u32 = 16;
const MOVE_LAMPORTS: u32 = 17;
/// `StakeAuthorize::Withdrawer`.
const WITHDRAWER: u32 = 1;

fn raw_touches(ix: &Value, keys: &[String], wallet: &str, out: &mut Vec<StakeTouch>) {
    let accounts: Vec<&str> = ix["accounts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| match a {
            Value::String(s) => Some(s.as_str()),
            Value::Number(n) => keys
                .get(usize::try_from(n.as_u64()?).ok()?)
                .map(String::as_str),
            _ => None,
        })
        .collect();
    let data = ix["data"]
        .as_str()
        .and_then(|d| bs58::decode(d).into_vec().ok())
        .unwrap_or_default();
    let u32_at = |at: usize| {
        data.get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
    };
    let key_at = |at: usize| data.get(at..at + 32).map(|k| bs58::encode(k).into_string());
    let Some(tag) = u32_at(0) else { return };
    let in_accounts = accounts
        .iter()
        .enumerate()
        .any(|(i, a)| *a == wallet && !(tag == WITHDRAW && i == 1));
    let in_data = match tag {
        // Initialize(Authorized { staker, withdrawer }, Lockup).
        INITIALIZE => [key_at(4), key_at(36)]
            .iter()
            .flatten()
            .any(|k| k == wallet),
        // Authorize(new authority, StakeAuthorize), and with seed.
        AUTHORIZE | AUTHORIZE_WITH_SEED => key_at(4).is_some_and(|k| k == wallet),
        _ => false,
    };
    if !in_accounts && !in_data {
        return;
    }
    let mut stake: Vec<&str> = accounts.first().copied().into_iter().collect();
    if matches!(tag, SPLIT | MERGE | MOVE_STAKE | MOVE_LAMPORTS) {
        stake.extend(accounts.get(1).copied());
    }
    // (whether the withdraw authority moves, the new authority, the
    // signing one): `Authorize(new, role)` signed by account 2;
    // `AuthorizeWithSeed` signed through its base, account 1;
    // `AuthorizeChecked(role)` with the new authority at account 3 (signed
    // by account 2), `AuthorizeCheckedWithSeed` at account 3 (base 1).
    // solana-program/stake interface/src/instruction.rs.
    let moved = match tag {
        AUTHORIZE => Some((u32_at(36), key_at(4), accounts.get(2))),
        AUTHORIZE_WITH_SEED => Some((u32_at(36), key_at(4), accounts.get(1))),
        AUTHORIZE_CHECKED => Some((
            u32_at(4),
            accounts.get(3).map(|a| (*a).to_owned()),
            accounts.get(2),
        )),
        AUTHORIZE_CHECKED_WITH_SEED => Some((
            u32_at(4),
            accounts.get(3).map(|a| (*a).to_owned()),
            accounts.get(1),
        )),
        _ => None,
    }
    .filter(|(role, _, _)| *role == Some(WITHDRAWER));
    let handed_over = moved
        .as_ref()
        .is_some_and(|(_, new, _)| new.as_deref().is_some_and(|k| k != wallet));
    let acquired = moved.as_ref().is_some_and(|(_, new, old)| {
        new.as_deref() == Some(wallet) && old.is_some_and(|a| *a != wallet)
    });
    push(out, &stake, handed_over, acquired);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const WALLET: &str = "71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6";
    const STAKE: &str = "7WZcPib1yW3wig8sSLrhx2Qt97huiJMboQNrqSocGSyc";
    const OTHER: &str = "DCAKxn5PFNN1mBREPWGdk1RXg5aVH9rPErLfBFEi2Emb";

    fn tx(instructions: Value) -> Value {
        json!({"meta": {"err": null, "innerInstructions": []},
               "transaction": {"message": {"instructions": instructions}}})
    }

    fn parsed(kind: &str, info: Value) -> Value {
        json!({"program": "stake", "programId": STAKE_PROGRAM,
               "parsed": {"type": kind, "info": info}})
    }

    #[test]
    fn a_delegation_the_wallet_signs_is_its_stake_account() {
        let t = tx(json!([parsed(
            "delegate",
            json!({
            "stakeAccount": STAKE, "voteAccount": OTHER, "stakeAuthority": WALLET})
        )]));
        assert_eq!(
            stake_touches(&t, &[], WALLET),
            vec![StakeTouch {
                account: STAKE.into(),
                handed_over: false,
                acquired: false
            }]
        );
    }

    #[test]
    fn a_withdraw_that_only_pays_the_wallet_is_not_its_account() {
        let t = tx(json!([parsed(
            "withdraw",
            json!({
            "stakeAccount": STAKE, "destination": WALLET, "withdrawAuthority": OTHER, "lamports": 5})
        )]));
        assert!(stake_touches(&t, &[], WALLET).is_empty());
    }

    #[test]
    fn a_split_names_both_accounts() {
        let t = tx(json!([parsed(
            "split",
            json!({
            "stakeAccount": STAKE, "newSplitAccount": OTHER, "stakeAuthority": WALLET, "lamports": 5})
        )]));
        let found: Vec<String> = stake_touches(&t, &[], WALLET)
            .into_iter()
            .map(|t| t.account)
            .collect();
        assert_eq!(found, vec![STAKE.to_owned(), OTHER.to_owned()]);
    }

    #[test]
    fn handing_the_withdraw_authority_to_someone_else_is_a_handover() {
        let t = tx(json!([parsed(
            "authorize",
            json!({
            "stakeAccount": STAKE, "authority": WALLET, "newAuthority": OTHER, "authorityType": "Withdrawer"})
        )]));
        assert!(stake_touches(&t, &[], WALLET)[0].handed_over);
        let staker_only = tx(json!([parsed(
            "authorize",
            json!({
            "stakeAccount": STAKE, "authority": WALLET, "newAuthority": OTHER, "authorityType": "Staker"})
        )]));
        assert!(!stake_touches(&staker_only, &[], WALLET)[0].handed_over);
    }

    #[test]
    fn receiving_the_withdraw_authority_from_someone_else_is_an_acquisition() {
        let t = tx(json!([parsed(
            "authorize",
            json!({
            "stakeAccount": STAKE, "authority": OTHER, "newAuthority": WALLET, "authorityType": "Withdrawer"})
        )]));
        let touch = &stake_touches(&t, &[], WALLET)[0];
        assert!(touch.acquired && !touch.handed_over, "{touch:?}");
        // The wallet naming itself again moves nothing.
        let to_itself = tx(json!([parsed(
            "authorizeChecked",
            json!({
            "stakeAccount": STAKE, "authority": WALLET, "newAuthority": WALLET, "authorityType": "Withdrawer"})
        )]));
        let touch = &stake_touches(&to_itself, &[], WALLET)[0];
        assert!(!touch.acquired && !touch.handed_over, "{touch:?}");
        // The seed form names them authorityBase / newAuthorized.
        let seeded = tx(json!([parsed(
            "authorizeWithSeed",
            json!({
            "stakeAccount": STAKE, "authorityBase": OTHER, "newAuthorized": WALLET, "authorityType": "Withdrawer", "authoritySeed": "s", "authorityOwner": OTHER})
        )]));
        assert!(stake_touches(&seeded, &[], WALLET)[0].acquired);
        // Receiving only the staker role is no acquisition.
        let staker = tx(json!([parsed(
            "authorize",
            json!({
            "stakeAccount": STAKE, "authority": OTHER, "newAuthority": WALLET, "authorityType": "Staker"})
        )]));
        assert!(!stake_touches(&staker, &[], WALLET)[0].acquired);
    }

    #[test]
    fn the_json_encoding_reads_an_acquisition() {
        let keys: Vec<String> = [STAKE_PROGRAM, STAKE, WALLET, OTHER]
            .map(String::from)
            .to_vec();
        // Authorize(WALLET, Withdrawer) signed by OTHER.
        let mut auth = 1u32.to_le_bytes().to_vec();
        auth.extend(key(WALLET));
        auth.extend(1u32.to_le_bytes());
        // AuthorizeChecked(Withdrawer): [stake, clock, OTHER, WALLET].
        let mut checked = 10u32.to_le_bytes().to_vec();
        checked.extend(1u32.to_le_bytes());
        let t = tx(json!([
            raw(&auth, &[1, 0, 3]),
            raw(&checked, &[1, 0, 3, 2])
        ]));
        let touches = stake_touches(&t, &keys, WALLET);
        assert_eq!(touches.len(), 2, "{touches:?}");
        assert!(
            touches.iter().all(|t| t.acquired && !t.handed_over),
            "{touches:?}"
        );
    }

    fn raw(data: &[u8], accounts: &[usize]) -> Value {
        json!({"programIdIndex": 0, "accounts": accounts, "data": bs58::encode(data).into_string()})
    }

    fn key(address: &str) -> Vec<u8> {
        bs58::decode(address).into_vec().unwrap()
    }

    #[test]
    fn the_json_encoding_reads_tags_and_positions() {
        let keys: Vec<String> = [STAKE_PROGRAM, STAKE, WALLET, OTHER]
            .map(String::from)
            .to_vec();
        // Initialize naming the wallet as withdrawer in its data.
        let mut init = 0u32.to_le_bytes().to_vec();
        init.extend(key(OTHER));
        init.extend(key(WALLET));
        init.extend([0u8; 48]);
        // Authorize(OTHER, Withdrawer) signed by the wallet.
        let mut auth = 1u32.to_le_bytes().to_vec();
        auth.extend(key(OTHER));
        auth.extend(1u32.to_le_bytes());
        // Withdraw to the wallet by someone else: not the wallet's.
        let withdraw = [4u8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        let t = tx(json!([
            raw(&init, &[1, 0]),
            raw(&auth, &[1, 0, 2]),
            raw(&withdraw, &[1, 2, 0, 0, 3])
        ]));
        assert_eq!(
            stake_touches(&t, &keys, WALLET),
            vec![
                StakeTouch {
                    account: STAKE.into(),
                    handed_over: false,
                    acquired: false
                },
                StakeTouch {
                    account: STAKE.into(),
                    handed_over: true,
                    acquired: false
                },
            ]
        );
    }

    #[test]
    fn a_failed_transaction_shows_nothing() {
        let mut t = tx(json!([parsed(
            "delegate",
            json!({
            "stakeAccount": STAKE, "stakeAuthority": WALLET})
        )]));
        t["meta"]["err"] = json!({"InstructionError": [0, "Custom"]});
        assert!(stake_touches(&t, &[], WALLET).is_empty());
    }
}
