//! A Solana JSON-RPC client shaped for scanning whole histories.
//!
//! * `getSignaturesForAddress` pages newest first with `before`/`until`.
//! * `getTransaction` with `maxSupportedTransactionVersion: 0`, in the
//!   `json` or `jsonParsed` encoding (providers differ; the decoder reads
//!   both), many at a time: as one JSON-RPC batch where the endpoint accepts
//!   batches (learned on first use), else as single calls.
//! * At most `max_concurrency` HTTP requests in flight per client.
//! * Retries with exponential backoff on transport errors, HTTP 429 and
//!   5xx, honouring `Retry-After`.
//! * Staking: the Stake program accounts an authority controls
//!   (`getProgramAccounts` with `memcmp` on the authority fields), one
//!   epoch's inflation rewards for many accounts in one `getInflationReward`,
//!   the epoch schedule and the current epoch, and the time of the block at
//!   (or first after) a reward's effective slot.
//! * Every HTTP round trip is counted in an [`RpcCost`] as a call, and
//!   every JSON-RPC request inside it as a credit (providers bill per
//!   request, batched or not), so a job can record what it spent; the
//!   server's metrics count the same per JSON-RPC method.
//!
//! Written on reqwest rather than the agave `solana-rpc-client`: that
//! client has no JSON-RPC batches and no hook for per-job accounting.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU8, AtomicU64, Ordering},
    },
    time::Duration,
};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::telemetry::Metrics;

/// The transaction encoding to request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TxEncoding {
    Json,
    JsonParsed,
}

impl TxEncoding {
    pub fn as_str(self) -> &'static str {
        match self {
            TxEncoding::Json => "json",
            TxEncoding::JsonParsed => "jsonParsed",
        }
    }
}

/// What a scan spent on RPC: HTTP round trips and JSON-RPC requests.
#[derive(Debug, Default)]
pub struct RpcCost {
    calls: AtomicU64,
    credits: AtomicU64,
}

impl RpcCost {
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    pub fn credits(&self) -> u64 {
        self.credits.load(Ordering::Relaxed)
    }

    fn add(&self, requests: u64) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.credits.fetch_add(requests, Ordering::Relaxed);
    }
}

/// Why an RPC call failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum RpcError {
    #[error("RPC transport: {0}")]
    Transport(String),
    #[error("RPC HTTP status {0}")]
    Status(u16),
    #[error("RPC error {code}: {message}")]
    Rpc { code: i64, message: String },
    #[error("RPC answer not understood: {0}")]
    Decode(String),
    #[error("RPC gave up after {attempts} attempts: {last}")]
    Exhausted { attempts: u32, last: Box<RpcError> },
}

/// One entry of `getSignaturesForAddress`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureInfo {
    pub signature: String,
    pub slot: u64,
    #[serde(default)]
    pub block_time: Option<i64>,
    /// The transaction failed (its fee was still paid).
    #[serde(default, deserialize_with = "failed")]
    pub err: bool,
    #[serde(default)]
    pub memo: Option<String>,
}

fn failed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(!Value::deserialize(d)?.is_null())
}

/// Where a sent transaction stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureStatus {
    /// Confirmed or finalized (not merely processed).
    pub confirmed: bool,
    /// The transaction landed, confirmed, but failed (its fee was paid).
    pub err: Option<String>,
}

/// The Stake program (agave `solana_sdk_ids::stake`).
pub const STAKE_PROGRAM: &str = "Stake11111111111111111111111111111111111111";
/// `StakeStateV2` is 200 bytes on the wire (`StakeStateV2::size_of()`).
pub const STAKE_ACCOUNT_SIZE: u64 = 200;
/// `StakeStateV2` in bincode: a u32 tag (0 uninitialized, 1 initialized, 2
/// stake, 3 rewards pool), then `Meta { rent_exempt_reserve: u64,
/// authorized: { staker, withdrawer }, lockup: { unix_timestamp: i64,
/// epoch: u64, custodian } }` (bytes 4..124), then for tag 2
/// `Stake { delegation: { voter_pubkey, stake: u64, activation_epoch: u64,
/// deactivation_epoch: u64, .. }, .. }` (delegation from byte 124).
/// The most addresses one `getMultipleAccounts` request may name ("up to a
/// maximum of 100", solana.com/docs/rpc/http/getmultipleaccounts).
const MULTIPLE_ACCOUNTS_MAX: usize = 100;
const STAKER_OFFSET: u64 = 12;
const WITHDRAWER_OFFSET: u64 = 44;
const ACTIVATION_OFFSET: usize = 164;
/// Bytes asked of each stake account: through `activation_epoch`.
pub const STAKE_SLICE: u64 = 172;
/// JSON-RPC errors that mean "no block at this slot here": -32004 block not
/// available, -32007 slot skipped or missing from long-term storage,
/// -32009 slot skipped (agave `rpc_custom_error`).
const NO_BLOCK_CODES: [i64; 3] = [-32004, -32007, -32009];

/// Which authority of a stake account to match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StakeAuthority {
    Staker,
    Withdrawer,
}

impl StakeAuthority {
    fn offset(self) -> u64 {
        match self {
            StakeAuthority::Staker => STAKER_OFFSET,
            StakeAuthority::Withdrawer => WITHDRAWER_OFFSET,
        }
    }
}

/// A current stake account, as much of it as the scan reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StakeAccount {
    pub address: String,
    pub staker: String,
    pub withdrawer: String,
    /// The delegation's activation epoch; `None` until delegated.
    pub activation_epoch: Option<u64>,
}

impl StakeAccount {
    fn from_rpc(entry: &Value) -> Result<Self, RpcError> {
        use base64::Engine;
        let bad = |what: &str| RpcError::Decode(format!("getProgramAccounts: {what}"));
        let address = entry["pubkey"].as_str().ok_or_else(|| bad("no pubkey"))?;
        let data = entry["account"]["data"][0]
            .as_str()
            .ok_or_else(|| bad("no base64 data"))?;
        let data = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|_| bad("data is not base64"))?;
        let key = |at: u64| {
            let at = usize::try_from(at).unwrap_or(usize::MAX);
            data.get(at..at + 32)
                .map(|k| bs58::encode(k).into_string())
                .ok_or_else(|| bad("data too short"))
        };
        let u64_at = |at: usize| {
            data.get(at..at + 8)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(u64::from_le_bytes)
        };
        let tag = data
            .get(..4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes);
        Ok(Self {
            address: address.to_owned(),
            staker: key(STAKER_OFFSET)?,
            withdrawer: key(WITHDRAWER_OFFSET)?,
            // u64::MAX is the runtime's "never" (a bootstrap stake is
            // activated at u64::MAX too); only a real epoch counts.
            activation_epoch: (tag == Some(2))
                .then(|| u64_at(ACTIVATION_OFFSET))
                .flatten()
                .filter(|e| *e != u64::MAX),
        })
    }
}

/// One address's entry of `getInflationReward`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InflationReward {
    /// The epoch the reward was earned in.
    pub epoch: u64,
    /// The slot the reward was credited in (the first of the next epoch).
    pub effective_slot: u64,
    /// Lamports.
    pub amount: u64,
    pub post_balance: u64,
    #[serde(default)]
    pub commission: Option<u8>,
}

/// `getEpochSchedule`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EpochSchedule {
    pub slots_per_epoch: u64,
    pub leader_schedule_slot_offset: u64,
    pub warmup: bool,
    pub first_normal_epoch: u64,
    pub first_normal_slot: u64,
}

impl EpochSchedule {
    /// The epoch `slot` falls in (agave `EpochSchedule::get_epoch`): with
    /// warmup, epochs before `first_normal_epoch` are 32, 64, 128, … slots.
    pub fn epoch_of(&self, slot: u64) -> u64 {
        if slot < self.first_normal_slot {
            // Epoch e (warmup) covers slots 32·(2^e − 1) .. 32·(2^(e+1) − 1).
            let mut epoch = 0;
            let mut end = 32u64;
            while slot >= end && epoch < 63 {
                epoch += 1;
                end = end.saturating_mul(2).saturating_add(32);
            }
            epoch
        } else {
            let per = self.slots_per_epoch.max(1);
            self.first_normal_epoch + (slot - self.first_normal_slot) / per
        }
    }
}

/// `getEpochInfo` (the fields the scan reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EpochInfo {
    pub epoch: u64,
    pub absolute_slot: u64,
    pub slot_index: u64,
    pub slots_in_epoch: u64,
}

/// Client settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcSettings {
    pub url: String,
    pub encoding: TxEncoding,
    pub max_concurrency: usize,
    pub batch_size: usize,
    pub max_retries: u32,
    pub retry_base: Duration,
    pub timeout: Duration,
}

const BATCH_UNKNOWN: u8 = 0;
const BATCH_YES: u8 = 1;
const BATCH_NO: u8 = 2;

/// The client. Cheap to clone; clones share the concurrency limit.
#[derive(Clone)]
pub struct RpcClient {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    settings: RpcSettings,
    in_flight: Semaphore,
    batches: AtomicU8,
    metrics: Metrics,
}

enum Attempt {
    Done(Value),
    Retry(RpcError, Option<Duration>),
    Fail(RpcError),
}

impl RpcClient {
    pub fn new(settings: RpcSettings) -> Result<Self, RpcError> {
        Self::instrumented(settings, Metrics::off())
    }

    /// A client whose calls and credits are counted in `metrics`.
    pub fn instrumented(settings: RpcSettings, metrics: Metrics) -> Result<Self, RpcError> {
        let http = reqwest::Client::builder()
            .timeout(settings.timeout)
            .build()
            .map_err(|e| RpcError::Transport(e.to_string()))?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                in_flight: Semaphore::new(settings.max_concurrency.max(1)),
                batches: AtomicU8::new(BATCH_UNKNOWN),
                settings,
                metrics,
            }),
        })
    }

    pub fn encoding(&self) -> TxEncoding {
        self.inner.settings.encoding
    }

    /// One HTTP POST of `body` (a request or a batch of `requests`, all of
    /// `method`), with retries. Returns the parsed JSON answer.
    async fn post(
        &self,
        body: &Value,
        method: &'static str,
        requests: u64,
        cost: &RpcCost,
    ) -> Result<Value, RpcError> {
        let settings = &self.inner.settings;
        let mut attempt = 0;
        loop {
            let outcome = {
                let _permit = self
                    .inner
                    .in_flight
                    .acquire()
                    .await
                    .map_err(|e| RpcError::Transport(e.to_string()))?;
                cost.add(requests);
                self.inner.metrics.rpc_call(method, requests);
                self.attempt(body).await
            };
            let (error, wait) = match outcome {
                Attempt::Done(value) => return Ok(value),
                Attempt::Fail(error) => return Err(error),
                Attempt::Retry(error, wait) => (error, wait),
            };
            attempt += 1;
            if attempt > settings.max_retries {
                return Err(RpcError::Exhausted {
                    attempts: attempt,
                    last: Box::new(error),
                });
            }
            let backoff = settings.retry_base * 2u32.saturating_pow(attempt - 1);
            let wait = wait.unwrap_or(backoff).min(Duration::from_secs(30));
            tracing::debug!(%error, ?wait, attempt, "RPC retry");
            tokio::time::sleep(wait).await;
        }
    }

    async fn attempt(&self, body: &Value) -> Attempt {
        let response = match self
            .inner
            .http
            .post(&self.inner.settings.url)
            .json(body)
            .send()
            .await
        {
            Ok(response) => response,
            Err(e) => return Attempt::Retry(RpcError::Transport(e.to_string()), None),
        };
        let status = response.status();
        if status.as_u16() == 429 || status.is_server_error() {
            let wait = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            return Attempt::Retry(RpcError::Status(status.as_u16()), wait);
        }
        if !status.is_success() {
            return Attempt::Fail(RpcError::Status(status.as_u16()));
        }
        match response.json::<Value>().await {
            Ok(value) => Attempt::Done(value),
            Err(e) => Attempt::Retry(RpcError::Decode(e.to_string()), None),
        }
    }

    /// A single JSON-RPC call; its `result`.
    pub async fn call(
        &self,
        method: &'static str,
        params: Value,
        cost: &RpcCost,
    ) -> Result<Value, RpcError> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        result_of(self.post(&body, method, 1, cost).await?)
    }

    /// One page of signatures for `address`, newest first: at most `limit`
    /// (1..=1000), older than `before` and newer than `until` when given.
    pub async fn signatures(
        &self,
        address: &str,
        before: Option<&str>,
        until: Option<&str>,
        limit: usize,
        cost: &RpcCost,
    ) -> Result<Vec<SignatureInfo>, RpcError> {
        let mut options = json!({"limit": limit.clamp(1, 1000), "commitment": "confirmed"});
        if let Some(before) = before {
            options["before"] = json!(before);
        }
        if let Some(until) = until {
            options["until"] = json!(until);
        }
        let result = self
            .call("getSignaturesForAddress", json!([address, options]), cost)
            .await?;
        serde_json::from_value(result).map_err(|e| RpcError::Decode(e.to_string()))
    }

    /// The token accounts `owner` holds under `program` (SPL Token or
    /// Token-2022), current ones only.
    pub async fn token_accounts(
        &self,
        owner: &str,
        program: &str,
        cost: &RpcCost,
    ) -> Result<Vec<String>, RpcError> {
        let result = self
            .call(
                "getTokenAccountsByOwner",
                json!([owner, {"programId": program}, {
                    "encoding": "base64",
                    "dataSlice": {"offset": 0, "length": 0},
                    "commitment": "confirmed",
                }]),
                cost,
            )
            .await?;
        result["value"]
            .as_array()
            .ok_or_else(|| RpcError::Decode("getTokenAccountsByOwner: no value".to_owned()))?
            .iter()
            .map(|a| {
                a["pubkey"]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| RpcError::Decode("token account without pubkey".to_owned()))
            })
            .collect()
    }

    /// The Stake program accounts whose `authority` field (staker or
    /// withdrawer) is `owner`, current ones only. Only the first
    /// [`STAKE_SLICE`] bytes are asked for: enough for the authorities and
    /// the delegation's activation epoch.
    pub async fn stake_accounts(
        &self,
        owner: &str,
        authority: StakeAuthority,
        cost: &RpcCost,
    ) -> Result<Vec<StakeAccount>, RpcError> {
        let result = self
            .call(
                "getProgramAccounts",
                json!([STAKE_PROGRAM, {
                    "encoding": "base64",
                    "commitment": "confirmed",
                    "dataSlice": {"offset": 0, "length": STAKE_SLICE},
                    "filters": [
                        {"dataSize": STAKE_ACCOUNT_SIZE},
                        {"memcmp": {"offset": authority.offset(), "bytes": owner}},
                    ],
                }]),
                cost,
            )
            .await?;
        // Plain array by default; `{context, value}` when a provider adds
        // `withContext`.
        let list = result
            .as_array()
            .or_else(|| result["value"].as_array())
            .ok_or_else(|| RpcError::Decode("getProgramAccounts: no list".to_owned()))?;
        let mut accounts = Vec::with_capacity(list.len());
        for entry in list {
            let account = match StakeAccount::from_rpc(entry) {
                Ok(account) => account,
                Err(error) => {
                    tracing::warn!(%error, "getProgramAccounts answered an entry that is no stake account; left out");
                    continue;
                }
            };
            // The filter is checked again on what came back: an entry the
            // filter would not have matched (a provider that ignores
            // filters, or worse), an address that is no account, or the
            // wallet itself is dropped and said, never taken as the
            // wallet's stake account (its rewards would become income).
            let named = match authority {
                StakeAuthority::Staker => &account.staker,
                StakeAuthority::Withdrawer => &account.withdrawer,
            };
            if named != owner
                || account.address == owner
                || !super::WalletAddress::parse(&account.address)
                    .is_ok_and(|a| a.as_str() == account.address)
            {
                tracing::warn!(
                    address = %account.address,
                    ?authority,
                    "getProgramAccounts answered a stake account the filter does not match; left out"
                );
                continue;
            }
            accounts.push(account);
        }
        Ok(accounts)
    }

    /// One epoch's inflation rewards for `addresses`, in their order: `None`
    /// where the address earned nothing that epoch (or does not exist).
    /// One JSON-RPC request however many addresses, so a wallet's whole
    /// reward history costs one request per epoch.
    pub async fn inflation_rewards(
        &self,
        addresses: &[String],
        epoch: u64,
        cost: &RpcCost,
    ) -> Result<Vec<Option<InflationReward>>, RpcError> {
        let result = self
            .call(
                "getInflationReward",
                json!([addresses, {"epoch": epoch, "commitment": "finalized"}]),
                cost,
            )
            .await?;
        let rewards: Vec<Option<InflationReward>> =
            serde_json::from_value(result).map_err(|e| RpcError::Decode(e.to_string()))?;
        if rewards.len() != addresses.len() {
            return Err(RpcError::Decode(format!(
                "getInflationReward: {} answers for {} addresses",
                rewards.len(),
                addresses.len()
            )));
        }
        Ok(rewards)
    }

    /// The lamports of each of `addresses` now, in their order: `None` for
    /// an account that does not exist (closed). `getMultipleAccounts`
    /// takes at most 100 addresses per request (Solana's RPC
    /// documentation), so one request per 100; no account data is asked
    /// for (`dataSlice` of length 0), only the balances.
    pub async fn balances(
        &self,
        addresses: &[String],
        cost: &RpcCost,
    ) -> Result<Vec<Option<u64>>, RpcError> {
        let mut out = Vec::with_capacity(addresses.len());
        for chunk in addresses.chunks(MULTIPLE_ACCOUNTS_MAX) {
            let result = self
                .call(
                    "getMultipleAccounts",
                    json!([chunk, {
                        "encoding": "base64",
                        "commitment": "finalized",
                        "dataSlice": {"offset": 0, "length": 0},
                    }]),
                    cost,
                )
                .await?;
            let value = result["value"]
                .as_array()
                .ok_or_else(|| RpcError::Decode("getMultipleAccounts: no value".to_owned()))?;
            if value.len() != chunk.len() {
                return Err(RpcError::Decode(format!(
                    "getMultipleAccounts: {} answers for {} addresses",
                    value.len(),
                    chunk.len()
                )));
            }
            for account in value {
                out.push(match account {
                    Value::Null => None,
                    account => Some(account["lamports"].as_u64().ok_or_else(|| {
                        RpcError::Decode("getMultipleAccounts: account without lamports".to_owned())
                    })?),
                });
            }
        }
        Ok(out)
    }

    /// `getEpochSchedule`.
    pub async fn epoch_schedule(&self, cost: &RpcCost) -> Result<EpochSchedule, RpcError> {
        let result = self.call("getEpochSchedule", json!([]), cost).await?;
        serde_json::from_value(result).map_err(|e| RpcError::Decode(e.to_string()))
    }

    /// `getEpochInfo` at finalized commitment.
    pub async fn epoch_info(&self, cost: &RpcCost) -> Result<EpochInfo, RpcError> {
        let result = self
            .call("getEpochInfo", json!([{"commitment": "finalized"}]), cost)
            .await?;
        serde_json::from_value(result).map_err(|e| RpcError::Decode(e.to_string()))
    }

    /// The slot and time of the block at `slot`, or of the first block
    /// after it when that slot was skipped (`getBlockTime`, then
    /// `getBlocksWithLimit`). `None` when the node knows no such block.
    pub async fn block_time_at_or_after(
        &self,
        slot: u64,
        cost: &RpcCost,
    ) -> Result<Option<(u64, i64)>, RpcError> {
        if let Some(time) = self.block_time(slot, cost).await? {
            return Ok(Some((slot, time)));
        }
        let result = self
            .call(
                "getBlocksWithLimit",
                json!([slot, 1, {"commitment": "finalized"}]),
                cost,
            )
            .await?;
        let Some(next) = result
            .as_array()
            .and_then(|a| a.first())
            .and_then(Value::as_u64)
        else {
            return Ok(None);
        };
        if next == slot {
            return Ok(None);
        }
        Ok(self.block_time(next, cost).await?.map(|time| (next, time)))
    }

    /// `getBlockTime`: `None` for a slot without a block (skipped, -32009)
    /// or one the node does not hold (-32004 and kin).
    async fn block_time(&self, slot: u64, cost: &RpcCost) -> Result<Option<i64>, RpcError> {
        match self.call("getBlockTime", json!([slot]), cost).await {
            Ok(value) => Ok(value.as_i64()),
            Err(RpcError::Rpc { code, .. }) if NO_BLOCK_CODES.contains(&code) => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn transaction_params(&self, signature: &str) -> Value {
        json!([signature, {
            "encoding": self.inner.settings.encoding.as_str(),
            "maxSupportedTransactionVersion": 0,
            "commitment": "confirmed",
        }])
    }

    /// `isBlockhashValid` at confirmed commitment.
    pub async fn is_blockhash_valid(
        &self,
        blockhash: &str,
        cost: &RpcCost,
    ) -> Result<bool, RpcError> {
        let result = self
            .call(
                "isBlockhashValid",
                json!([blockhash, {"commitment": "confirmed"}]),
                cost,
            )
            .await?;
        result
            .get("value")
            .and_then(Value::as_bool)
            .ok_or_else(|| RpcError::Decode("isBlockhashValid: no value".to_owned()))
    }

    /// `simulateTransaction` without signature checks (the fee payer has not
    /// signed yet) and without replacing the blockhash. `Ok(None)` when the
    /// simulation succeeded, `Ok(Some(why))` when the transaction would fail.
    pub async fn simulate(
        &self,
        wire_b64: &str,
        cost: &RpcCost,
    ) -> Result<Option<String>, RpcError> {
        let result = self
            .call(
                "simulateTransaction",
                json!([wire_b64, {
                    "encoding": "base64",
                    "sigVerify": false,
                    "replaceRecentBlockhash": false,
                    "commitment": "confirmed",
                }]),
                cost,
            )
            .await?;
        let err = &result["value"]["err"];
        Ok((!err.is_null()).then(|| err.to_string()))
    }

    /// `sendTransaction` of a fully signed transaction (preflight already
    /// done by [`RpcClient::simulate`]). Sending the same bytes again is
    /// harmless: the runtime processes one signature once.
    pub async fn send_transaction(
        &self,
        wire_b64: &str,
        cost: &RpcCost,
    ) -> Result<String, RpcError> {
        let result = self
            .call(
                "sendTransaction",
                json!([wire_b64, {
                    "encoding": "base64",
                    "skipPreflight": true,
                    "maxRetries": 5,
                }]),
                cost,
            )
            .await?;
        result
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| RpcError::Decode("sendTransaction: no signature".to_owned()))
    }

    /// `getSignatureStatuses` for one signature, searching history.
    pub async fn signature_status(
        &self,
        signature: &str,
        cost: &RpcCost,
    ) -> Result<Option<SignatureStatus>, RpcError> {
        let result = self
            .call(
                "getSignatureStatuses",
                json!([[signature], {"searchTransactionHistory": true}]),
                cost,
            )
            .await?;
        let status = &result["value"][0];
        if status.is_null() {
            return Ok(None);
        }
        let confirmation = status["confirmationStatus"].as_str().unwrap_or("processed");
        let confirmed = matches!(confirmation, "confirmed" | "finalized");
        // An error at `processed` may sit on a fork that is dropped; only a
        // confirmed outcome is an outcome.
        Ok(Some(SignatureStatus {
            confirmed,
            err: (confirmed && !status["err"].is_null()).then(|| status["err"].to_string()),
        }))
    }

    /// `getTransaction` for one signature: `None` when the node does not
    /// have it (yet).
    pub async fn transaction(
        &self,
        signature: &str,
        cost: &RpcCost,
    ) -> Result<Option<Value>, RpcError> {
        let result = self
            .call("getTransaction", self.transaction_params(signature), cost)
            .await?;
        Ok((!result.is_null()).then_some(result))
    }

    /// `getTransaction` for many signatures, in order. Batched where the
    /// endpoint accepts batches, else one call each (still at most
    /// `max_concurrency` at once).
    pub async fn transactions(
        &self,
        signatures: &[String],
        cost: &RpcCost,
    ) -> Result<Vec<Option<Value>>, RpcError> {
        let mut out = Vec::with_capacity(signatures.len());
        let size = self.inner.settings.batch_size.max(1);
        for chunk in signatures.chunks(size) {
            if self.inner.batches.load(Ordering::Relaxed) != BATCH_NO && chunk.len() > 1 {
                match self.batch(chunk, cost).await {
                    Ok(found) => {
                        self.inner.batches.store(BATCH_YES, Ordering::Relaxed);
                        for (signature, item) in chunk.iter().zip(found) {
                            match item {
                                Some(tx) => out.push(tx),
                                // Answered with an error inside the batch:
                                // fetch it alone, which retries.
                                None => out.push(self.transaction(signature, cost).await?),
                            }
                        }
                        continue;
                    }
                    Err(BatchError::Failed(error)) => return Err(error),
                    Err(BatchError::Refused) => {
                        tracing::info!("RPC endpoint refuses JSON-RPC batches; calling one by one");
                        self.inner.batches.store(BATCH_NO, Ordering::Relaxed);
                    }
                }
            }
            let singles = chunk.iter().map(|sig| self.transaction(sig, cost));
            for found in futures_util::future::join_all(singles).await {
                out.push(found?);
            }
        }
        Ok(out)
    }

    /// One batch of `getTransaction`: per signature, `Some(answer)` or
    /// `None` when the batch answered that item with an error.
    async fn batch(
        &self,
        chunk: &[String],
        cost: &RpcCost,
    ) -> Result<Vec<Option<Option<Value>>>, BatchError> {
        let body: Vec<Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, sig)| {
                json!({"jsonrpc": "2.0", "id": i, "method": "getTransaction",
                       "params": self.transaction_params(sig)})
            })
            .collect();
        let items = match self
            .post(
                &Value::Array(body),
                "getTransaction",
                chunk.len() as u64,
                cost,
            )
            .await
        {
            Ok(Value::Array(items)) => items,
            // One error object instead of an array, or a 4xx: no batches here.
            Ok(_) | Err(RpcError::Status(400..=499)) => return Err(BatchError::Refused),
            Err(error) => return Err(BatchError::Failed(error)),
        };
        let mut found: Vec<Option<Option<Value>>> = vec![None; chunk.len()];
        for item in items {
            let Some(i) = item["id"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .filter(|i| *i < chunk.len())
            else {
                continue;
            };
            if item.get("error").is_none() {
                let result = item.get("result").cloned().unwrap_or(Value::Null);
                found[i] = Some((!result.is_null()).then_some(result));
            }
        }
        Ok(found)
    }
}

enum BatchError {
    Refused,
    Failed(RpcError),
}

fn result_of(answer: Value) -> Result<Value, RpcError> {
    if let Some(error) = answer.get("error") {
        return Err(RpcError::Rpc {
            code: error["code"].as_i64().unwrap_or(0),
            message: error["message"].as_str().unwrap_or_default().to_owned(),
        });
    }
    answer
        .get("result")
        .cloned()
        .ok_or_else(|| RpcError::Decode("no result".to_owned()))
}
