//! A local Solana JSON-RPC stand-in: serves a wallet's signature history
//! and recorded `getTransaction` answers, accepts or refuses batches, and
//! injects faults (HTTP 429 with Retry-After, 500) on demand. Loopback only.
//! For staking it serves the Stake program's accounts (`getProgramAccounts`
//! honouring `memcmp` and `dataSize` filters and `dataSlice`), inflation
//! rewards per (account, epoch) with epochs it refuses like a provider
//! that keeps no old ones (-32004), the epoch schedule and current epoch,
//! block times with skipped slots (-32009) and `getBlocksWithLimit`, and
//! account balances by `getMultipleAccounts` (at most 100 addresses, `null`
//! for an account that does not exist), in the response shapes of Solana's
//! JSON-RPC documentation.

// Shared by several test crates; each uses part of it.
#![allow(dead_code)]

use std::{
    collections::{HashMap, HashSet, VecDeque},
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::Duration,
};

use axum::{
    Json, Router,
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::post,
};
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug)]
pub enum Fault {
    TooMany { retry_after_secs: u64 },
    ServerError,
}

#[derive(Default)]
pub struct Shared {
    /// Signature entries, newest first, per address.
    pub history: HashMap<String, Vec<Value>>,
    pub transactions: HashMap<String, Value>,
    /// Transactions answered `null` from now on (a node that lost them).
    pub unserved_transactions: Mutex<HashSet<String>>,
    /// Token accounts per owner (getTokenAccountsByOwner); none by default.
    pub token_accounts: HashMap<String, Vec<String>>,
    pub refuse_batches: bool,
    pub faults: Mutex<VecDeque<Fault>>,
    pub http_requests: AtomicUsize,
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    pub encodings: Mutex<Vec<String>>,
    pub delay: Duration,
    /// Payments: blockhashes `isBlockhashValid` calls stale.
    pub stale_blockhashes: Mutex<HashSet<String>>,
    /// Payments: the `err` `simulateTransaction` answers (None: success).
    pub simulate_error: Mutex<Option<Value>>,
    /// Payments: the `err` a landed transaction carries (None: success).
    pub land_error: Mutex<Option<Value>>,
    /// Payments: every `sendTransaction`, by signature, in order.
    pub sent: Mutex<Vec<String>>,
    /// Payments: signatures the "chain" has processed.
    pub landed: Mutex<HashSet<String>>,
    /// Payments: the JSON-RPC error `sendTransaction` answers (None: accepted).
    pub send_error: Mutex<Option<Value>>,
    /// Staking: Stake program accounts (address, raw `StakeStateV2` bytes).
    pub stake_accounts: Vec<(String, Vec<u8>)>,
    /// Staking: `getInflationReward` entries by (address, epoch).
    pub inflation_rewards: Mutex<HashMap<(String, u64), Value>>,
    /// Staking: epochs `getInflationReward` refuses (-32004).
    pub unserved_epochs: Mutex<HashSet<u64>>,
    /// Staking: the current epoch (`getEpochInfo`).
    pub epoch: std::sync::atomic::AtomicU64,
    /// Staking: slots per epoch (432,000 when 0, mainnet's).
    pub slots_per_epoch: u64,
    /// Staking: block times by slot; a slot not here was skipped.
    pub block_times: std::collections::BTreeMap<u64, i64>,
    /// Staking: lamports of accounts that exist now (`getMultipleAccounts`);
    /// an address not here does not exist (closed).
    pub balances: Mutex<HashMap<String, u64>>,
    /// Staking: answer `getMultipleAccounts` with -32601 (a provider that
    /// does not serve it).
    pub refuse_balances: AtomicBool,
    /// Staking: answer `getProgramAccounts` with -32601 (a provider that
    /// does not serve it).
    pub refuse_program_accounts: AtomicBool,
    /// Staking: answer `getProgramAccounts` with every Stake account,
    /// ignoring the `memcmp` filters (a broken or hostile provider).
    pub ignore_program_account_filters: AtomicBool,
    /// Every JSON-RPC request served: method and params, in order.
    pub requests: Mutex<Vec<(String, Value)>>,
    /// Payments: accept sends without processing them (a node that drops
    /// them, or a crash before they land).
    pub hold_sends: AtomicBool,
}

pub struct StandIn {
    pub url: String,
    pub shared: Arc<Shared>,
}

pub async fn start(shared: Shared) -> StandIn {
    let shared = Arc::new(shared);
    let app = Router::new()
        .route("/", post(handle))
        .with_state(shared.clone());
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    StandIn { url, shared }
}

async fn handle(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    shared.http_requests.fetch_add(1, Ordering::SeqCst);
    let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
    if !shared.delay.is_zero() {
        tokio::time::sleep(shared.delay).await;
    }
    let response = answer(&shared, body);
    shared.in_flight.fetch_sub(1, Ordering::SeqCst);
    response
}

fn answer(shared: &Shared, body: Value) -> Response {
    let fault = shared.faults.lock().unwrap().pop_front();
    match fault {
        Some(Fault::TooMany { retry_after_secs }) => {
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [("retry-after", retry_after_secs.to_string())],
                "slow down",
            )
                .into_response();
        }
        Some(Fault::ServerError) => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response();
        }
        None => {}
    }
    match body {
        Value::Array(requests) if shared.refuse_batches => {
            let _ = requests;
            (
                StatusCode::OK,
                Json(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}})),
            )
                .into_response()
        }
        Value::Array(requests) => Json(Value::Array(
            requests.iter().map(|r| one(shared, r)).collect(),
        ))
        .into_response(),
        request => Json(one(shared, &request)).into_response(),
    }
}

impl Shared {
    fn slots_per_epoch(&self) -> u64 {
        if self.slots_per_epoch == 0 {
            432_000
        } else {
            self.slots_per_epoch
        }
    }

    /// How many requests of `method` were served.
    pub fn count(&self, method: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == method)
            .count()
    }

    /// The params of every request of `method`.
    pub fn params_of(&self, method: &str) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }
}

fn rpc_error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message}})
}

fn one(shared: &Shared, request: &Value) -> Value {
    let id = request["id"].clone();
    let params = &request["params"];
    shared.requests.lock().unwrap().push((
        request["method"].as_str().unwrap_or_default().to_owned(),
        params.clone(),
    ));
    let result = match request["method"].as_str() {
        Some("getProgramAccounts") if shared.refuse_program_accounts.load(Ordering::SeqCst) => {
            return rpc_error(id, -32601, "Method not found".to_owned());
        }
        Some("getProgramAccounts") => {
            use base64::Engine;
            let options = &params[1];
            let ignore = shared.ignore_program_account_filters.load(Ordering::SeqCst);
            let filters = options["filters"].as_array().cloned().unwrap_or_default();
            let matches = |data: &[u8]| {
                filters.iter().all(|f| {
                    if let Some(size) = f["dataSize"].as_u64() {
                        return data.len() as u64 == size;
                    }
                    if ignore {
                        return true;
                    }
                    let offset = f["memcmp"]["offset"].as_u64().unwrap() as usize;
                    let bytes = bs58::decode(f["memcmp"]["bytes"].as_str().unwrap())
                        .into_vec()
                        .unwrap();
                    data.get(offset..offset + bytes.len()) == Some(&bytes[..])
                })
            };
            let accounts: Vec<Value> = shared
                .stake_accounts
                .iter()
                .filter(|(_, data)| {
                    params[0] == "Stake11111111111111111111111111111111111111" && matches(data)
                })
                .map(|(address, data)| {
                    let slice = &options["dataSlice"];
                    let start = slice["offset"].as_u64().map_or(0, |o| o as usize);
                    let end = slice["length"]
                        .as_u64()
                        .map_or(data.len(), |l| (start + l as usize).min(data.len()));
                    let wire = base64::engine::general_purpose::STANDARD.encode(&data[start..end]);
                    json!({"pubkey": address, "account": {"data": [wire, "base64"], "executable": false, "lamports": 2_282_880, "owner": "Stake11111111111111111111111111111111111111", "rentEpoch": 18_446_744_073_709_551_615u64, "space": data.len()}})
                })
                .collect();
            json!(accounts)
        }
        Some("getInflationReward") => {
            let epoch = params[1]["epoch"].as_u64().unwrap();
            if shared.unserved_epochs.lock().unwrap().contains(&epoch) {
                return rpc_error(
                    id,
                    -32004,
                    format!(
                        "Block not available for slot {}",
                        (epoch + 1) * shared.slots_per_epoch()
                    ),
                );
            }
            let rewards: Vec<Value> = params[0]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    shared
                        .inflation_rewards
                        .lock()
                        .unwrap()
                        .get(&(a.as_str().unwrap().to_owned(), epoch))
                        .cloned()
                        .unwrap_or(Value::Null)
                })
                .collect();
            json!(rewards)
        }
        Some("getMultipleAccounts") if shared.refuse_balances.load(Ordering::SeqCst) => {
            return rpc_error(id, -32601, "Method not found".to_owned());
        }
        Some("getMultipleAccounts") => {
            use base64::Engine;
            let addresses = params[0].as_array().unwrap();
            if addresses.len() > 100 {
                return rpc_error(id, -32602, "Too many inputs provided; max 100".to_owned());
            }
            let balances = shared.balances.lock().unwrap();
            let slice = &params[1]["dataSlice"];
            let value: Vec<Value> = addresses
                .iter()
                .map(|a| {
                    let address = a.as_str().unwrap();
                    match balances.get(address) {
                        Some(lamports) => {
                            let data = shared
                                .stake_accounts
                                .iter()
                                .find(|(k, _)| k == address)
                                .map(|(_, d)| d.clone())
                                .unwrap_or_default();
                            let start = slice["offset"].as_u64().map_or(0, |o| o as usize).min(data.len());
                            let end = slice["length"]
                                .as_u64()
                                .map_or(data.len(), |l| (start + l as usize).min(data.len()));
                            let wire = base64::engine::general_purpose::STANDARD.encode(&data[start..end]);
                            json!({"data": [wire, "base64"], "executable": false, "lamports": lamports, "owner": "Stake11111111111111111111111111111111111111", "rentEpoch": 18_446_744_073_709_551_615u64, "space": data.len()})
                        }
                        None => Value::Null,
                    }
                })
                .collect();
            json!({"context": {"apiVersion": "2.0.15", "slot": 1}, "value": value})
        }
        Some("getEpochSchedule") => {
            let per = shared.slots_per_epoch();
            json!({"firstNormalEpoch": 0, "firstNormalSlot": 0, "leaderScheduleSlotOffset": per, "slotsPerEpoch": per, "warmup": false})
        }
        Some("getEpochInfo") => {
            let per = shared.slots_per_epoch();
            let epoch = shared.epoch.load(Ordering::SeqCst);
            json!({"absoluteSlot": epoch * per + 7, "blockHeight": epoch * per, "epoch": epoch, "slotIndex": 7, "slotsInEpoch": per, "transactionCount": 1})
        }
        Some("getBlockTime") => {
            let slot = params[0].as_u64().unwrap();
            match shared.block_times.get(&slot) {
                Some(time) => json!(time),
                None => {
                    return rpc_error(
                        id,
                        -32009,
                        format!("Slot {slot} was skipped, or missing in long-term storage"),
                    );
                }
            }
        }
        Some("getBlocksWithLimit") => {
            let start = params[0].as_u64().unwrap();
            let limit = params[1].as_u64().unwrap() as usize;
            json!(
                shared
                    .block_times
                    .range(start..)
                    .take(limit)
                    .map(|(s, _)| *s)
                    .collect::<Vec<u64>>()
            )
        }
        Some("getSignaturesForAddress") => {
            let options = &params[1];
            let all = shared
                .history
                .get(params[0].as_str().unwrap_or_default())
                .cloned()
                .unwrap_or_default();
            let start = match options["before"].as_str() {
                Some(before) => all
                    .iter()
                    .position(|e| e["signature"] == before)
                    .map_or(all.len(), |i| i + 1),
                None => 0,
            };
            let limit = options["limit"].as_u64().unwrap_or(1000) as usize;
            let page: Vec<Value> = all[start..]
                .iter()
                .take_while(|e| options["until"].as_str() != e["signature"].as_str())
                .take(limit)
                .cloned()
                .collect();
            json!(page)
        }
        Some("getTokenAccountsByOwner") => {
            let accounts = shared
                .token_accounts
                .get(params[0].as_str().unwrap_or_default())
                .cloned()
                .unwrap_or_default();
            json!({"context": {"slot": 1}, "value": accounts.iter()
                .map(|a| json!({"pubkey": a, "account": {"data": ["", "base64"], "lamports": 2_039_280, "owner": params[1]["programId"], "executable": false, "rentEpoch": 0}}))
                .collect::<Vec<_>>()})
        }
        Some("getTransaction") => {
            shared
                .encodings
                .lock()
                .unwrap()
                .push(params[1]["encoding"].as_str().unwrap_or("?").to_owned());
            let sig = params[0].as_str().unwrap_or_default();
            let served = !shared.unserved_transactions.lock().unwrap().contains(sig);
            // Recorded answers are jsonParsed; re-encode them on request.
            match (
                shared.transactions.get(sig).filter(|_| served),
                params[1]["encoding"].as_str(),
            ) {
                (Some(t), Some("json")) => {
                    crate::encoding_support::to_json_encoding(t)["result"].clone()
                }
                (Some(t), _) => t["result"].clone(),
                (None, _) => Value::Null,
            }
        }
        Some("getLatestBlockhash") => {
            let blockhash = bs58::encode(rand::random::<[u8; 32]>()).into_string();
            json!({"context": {"slot": 1}, "value": {"blockhash": blockhash, "lastValidBlockHeight": 1000}})
        }
        Some("getAccountInfo") => {
            // Every other account is a mint owned by SPL Token (x402pay
            // asks to learn the token program).
            json!({"context": {"slot": 1}, "value": {"data": ["", "base64"], "lamports": 1_461_600, "owner": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "executable": false, "rentEpoch": 0}})
        }
        Some("isBlockhashValid") => {
            let stale = shared
                .stale_blockhashes
                .lock()
                .unwrap()
                .contains(params[0].as_str().unwrap_or_default());
            json!({"context": {"slot": 1}, "value": !stale})
        }
        Some("simulateTransaction") => {
            let err = shared.simulate_error.lock().unwrap().clone();
            json!({"context": {"slot": 1}, "value": {"err": err, "logs": [], "unitsConsumed": 1000}})
        }
        Some("sendTransaction") if shared.send_error.lock().unwrap().is_some() => {
            let error = shared.send_error.lock().unwrap().clone();
            return json!({"jsonrpc":"2.0","id":id,"error":error});
        }
        Some("sendTransaction") => {
            use base64::Engine;
            let wire = base64::engine::general_purpose::STANDARD
                .decode(params[0].as_str().unwrap_or_default())
                .unwrap_or_default();
            let signature = bs58::encode(&wire[1..65]).into_string();
            shared.sent.lock().unwrap().push(signature.clone());
            if !shared.hold_sends.load(Ordering::SeqCst) {
                shared.landed.lock().unwrap().insert(signature.clone());
            }
            json!(signature)
        }
        Some("getSignatureStatuses") => {
            let landed = shared.landed.lock().unwrap();
            let err = shared.land_error.lock().unwrap().clone();
            let statuses: Vec<Value> = params[0]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|sig| {
                    if landed.contains(sig.as_str().unwrap_or_default()) {
                        json!({"slot": 1, "confirmations": null, "err": err, "confirmationStatus": "confirmed"})
                    } else {
                        Value::Null
                    }
                })
                .collect();
            json!({"context": {"slot": 1}, "value": statuses})
        }
        _ => {
            return json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"Method not found"}});
        }
    };
    json!({"jsonrpc":"2.0","id":id,"result":result})
}
