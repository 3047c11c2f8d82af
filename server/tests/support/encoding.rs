//! Re-encode a recorded `jsonParsed` `getTransaction` answer the way a
//! provider answering `encoding: "json"` would: string keys,
//! `loadedAddresses`, account indexes and base58 instruction data. Shared
//! by the test crates (the decoder's encoding test, the RPC stand-in).

// Shared by several test crates; each uses part of it.
#![allow(dead_code)]

use serde_json::{Map, Value, json};

fn u64_le(v: u64) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

/// Raw data and account order for a parsed instruction, as the program
/// itself would receive it.
fn raw(program: &str, parsed: &Value) -> (Vec<u8>, Vec<String>) {
    let info = &parsed["info"];
    let kind = parsed["type"].as_str().unwrap_or_default();
    let s = |k: &str| info[k].as_str().unwrap_or_default().to_owned();
    let amount = |v: &Value| -> u64 {
        v["amount"]
            .as_str()
            .or_else(|| v["tokenAmount"]["amount"].as_str())
            .and_then(|a| a.parse().ok())
            .unwrap_or(0)
    };
    match (program, kind) {
        ("11111111111111111111111111111111", "transfer") => {
            let mut d = u64_le(2)[..4].to_vec();
            d.extend(u64_le(info["lamports"].as_u64().unwrap()));
            (d, vec![s("source"), s("destination")])
        }
        ("11111111111111111111111111111111", "createAccount") => {
            let mut d = vec![0, 0, 0, 0];
            d.extend(u64_le(info["lamports"].as_u64().unwrap()));
            d.extend(u64_le(info["space"].as_u64().unwrap()));
            d.extend(bs58::decode(s("owner")).into_vec().unwrap());
            (d, vec![s("source"), s("newAccount")])
        }
        ("11111111111111111111111111111111", _) => (vec![99, 0, 0, 0], vec![]),
        (_, "transfer") => {
            let mut d = vec![3];
            d.extend(u64_le(amount(info)));
            (d, vec![s("source"), s("destination"), s("authority")])
        }
        (_, "transferChecked") => {
            let mut d = vec![12];
            d.extend(u64_le(amount(info)));
            d.push(info["tokenAmount"]["decimals"].as_u64().unwrap_or(0) as u8);
            (
                d,
                vec![s("source"), s("mint"), s("destination"), s("authority")],
            )
        }
        (_, "closeAccount") => (vec![9], vec![s("account"), s("destination"), s("owner")]),
        ("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL", "create" | "createIdempotent") => (
            if kind == "create" { vec![] } else { vec![1] },
            vec![s("source"), s("account"), s("wallet"), s("mint")],
        ),
        ("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL", _) => (vec![2], vec![]),
        ("Stake11111111111111111111111111111111111111", _) => stake_raw(kind, info),
        // Other SPL Token instructions (syncNative, initializeAccount3, …).
        _ => (vec![17], vec![]),
    }
}

/// The Stake program's `StakeInstruction` in bincode (a u32 tag, then its
/// arguments) and its account order, for the instructions the staking
/// tests record.
fn stake_raw(kind: &str, info: &Value) -> (Vec<u8>, Vec<String>) {
    let s = |k: &str| info[k].as_str().unwrap_or_default().to_owned();
    let key = |v: &Value| bs58::decode(v.as_str().unwrap()).into_vec().unwrap();
    let tag = |t: u32| t.to_le_bytes().to_vec();
    let lamports = || info["lamports"].as_u64().unwrap().to_le_bytes().to_vec();
    match kind {
        "initialize" => {
            let mut d = tag(0);
            d.extend(key(&info["authorized"]["staker"]));
            d.extend(key(&info["authorized"]["withdrawer"]));
            d.extend([0u8; 16]);
            d.extend(key(&info["lockup"]["custodian"]));
            (d, vec![s("stakeAccount"), s("rentSysvar")])
        }
        "authorize" => {
            let mut d = tag(1);
            d.extend(key(&info["newAuthority"]));
            d.extend(tag(u32::from(info["authorityType"] == "Withdrawer")));
            (d, vec![s("stakeAccount"), s("clockSysvar"), s("authority")])
        }
        "delegate" => (
            tag(2),
            vec![
                s("stakeAccount"),
                s("voteAccount"),
                s("clockSysvar"),
                s("stakeHistorySysvar"),
                s("stakeConfigAccount"),
                s("stakeAuthority"),
            ],
        ),
        "split" => {
            let mut d = tag(3);
            d.extend(lamports());
            (
                d,
                vec![s("stakeAccount"), s("newSplitAccount"), s("stakeAuthority")],
            )
        }
        "withdraw" => {
            let mut d = tag(4);
            d.extend(lamports());
            (
                d,
                vec![
                    s("stakeAccount"),
                    s("destination"),
                    s("clockSysvar"),
                    s("stakeHistorySysvar"),
                    s("withdrawAuthority"),
                ],
            )
        }
        "deactivate" => (
            tag(5),
            vec![s("stakeAccount"), s("clockSysvar"), s("stakeAuthority")],
        ),
        "merge" => (
            tag(7),
            vec![
                s("destination"),
                s("source"),
                s("clockSysvar"),
                s("stakeHistorySysvar"),
                s("stakeAuthority"),
            ],
        ),
        other => panic!("no raw encoding for stake {other}"),
    }
}

fn reencode_ix(ix: &Value, index_of: &dyn Fn(&str) -> usize) -> Value {
    let program = ix["programId"].as_str().unwrap();
    let (data, accounts) = match ix.get("parsed") {
        Some(parsed) if parsed.is_object() => raw(program, parsed),
        _ => (
            bs58::decode(ix["data"].as_str().unwrap_or_default())
                .into_vec()
                .unwrap(),
            ix["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned())
                .collect(),
        ),
    };
    json!({
        "programIdIndex": index_of(program),
        "accounts": accounts.iter().map(|a| index_of(a)).collect::<Vec<_>>(),
        "data": bs58::encode(data).into_string(),
    })
}

/// The `json`-encoding twin of a `jsonParsed` result.
pub fn to_json_encoding(parsed: &Value) -> Value {
    let result = &parsed["result"];
    let keys = result["transaction"]["message"]["accountKeys"]
        .as_array()
        .unwrap();
    let mut statics = Vec::new();
    let mut writable = Vec::new();
    let mut readonly = Vec::new();
    let mut signers = 0;
    for k in keys {
        let key = k["pubkey"].as_str().unwrap().to_owned();
        if k["signer"].as_bool().unwrap() {
            signers += 1;
        }
        match (k["source"].as_str(), k["writable"].as_bool()) {
            (Some("lookupTable"), Some(true)) => writable.push(key),
            (Some("lookupTable"), _) => readonly.push(key),
            _ => statics.push(key),
        }
    }
    let all: Vec<String> = statics
        .iter()
        .chain(&writable)
        .chain(&readonly)
        .cloned()
        .collect();
    let index_of = |a: &str| all.iter().position(|k| k == a).unwrap();
    let message = &result["transaction"]["message"];
    let instructions: Vec<Value> = message["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ix| reencode_ix(ix, &index_of))
        .collect();
    let mut meta: Map<String, Value> = result["meta"].as_object().unwrap().clone();
    let inner: Vec<Value> = meta["innerInstructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|set| {
            json!({
                "index": set["index"],
                "instructions": set["instructions"].as_array().unwrap().iter()
                    .map(|ix| reencode_ix(ix, &index_of)).collect::<Vec<_>>(),
            })
        })
        .collect();
    meta.insert("innerInstructions".into(), Value::Array(inner));
    meta.insert(
        "loadedAddresses".into(),
        json!({"writable": writable, "readonly": readonly}),
    );
    json!({"jsonrpc": "2.0", "result": {
        "slot": result["slot"], "blockTime": result["blockTime"], "version": result["version"],
        "meta": meta,
        "transaction": {
            "signatures": result["transaction"]["signatures"],
            "message": {
                "header": {"numRequiredSignatures": signers},
                "accountKeys": statics,
                "instructions": instructions,
            }
        }
    }})
}
