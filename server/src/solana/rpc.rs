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
