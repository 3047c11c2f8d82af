//! The payment itself: from an x402 challenge and a keypair to the base64
//! value a client passes as `payment` (or sends as `X-PAYMENT`).
//!
//! The x402 `exact` scheme on Solana pays with a partially signed transaction
//! the server completes: the server's fee payer is account 0 and signs last,
//! at settlement; the payer signs only its own slot now. The instruction list
//! is fixed by the scheme and checked instruction by instruction by the
//! verifier (compute budget, one `TransferChecked` to the payee's associated
//! token account, one Memo carrying the quote id, nothing else), so it is
//! built here from first principles rather than by a generic builder.
//!
//! This file is self-contained on purpose (crates only, no sibling modules):
//! an end-to-end test can include it with `#[path]` and call
//! [`build_payment`] against a real chain. The chain is reached through two
//! JSON-RPC reads only: the latest blockhash, and the mint's owner program
//! (SPL Token or Token-2022), which decides the associated token accounts.

use std::time::Duration;

use base64::Engine as _;
use serde::Serialize;
use serde_json::{Value, json};
use solana_compute_budget_interface::ComputeBudgetInstruction;
use solana_hash::Hash;
use solana_instruction::{AccountMeta, Instruction};
use solana_keypair::Keypair;
use solana_message::{Message, VersionedMessage, v0};
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;
use spl_associated_token_account_interface::address::get_associated_token_address_with_program_id;
use spl_token_interface::instruction::TokenInstruction;

/// The classic SPL Token program.
pub const TOKEN_PROGRAM: Pubkey = spl_token_interface::ID;
/// Token-2022: same `TransferChecked` layout, its own associated token accounts.
pub const TOKEN_2022_PROGRAM: Pubkey =
    Pubkey::from_str_const("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
/// Memo v3, the program the verifier expects the quote id under.
pub const MEMO_PROGRAM: Pubkey = spl_memo_interface::v3::ID;

/// Solana mainnet-beta as a CAIP-2 network (genesis hash prefix).
pub const MAINNET: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d";
/// Solana devnet as a CAIP-2 network.
pub const DEVNET: &str = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

/// Default compute unit limit: a `TransferChecked` (about 6k CU, more on
/// Token-2022 with extensions) plus a short memo and the two budget
/// instructions, with room to spare.
pub const DEFAULT_CU_LIMIT: u32 = 40_000;
/// Default priority fee in micro-lamports per compute unit: the smallest
/// non-zero price, since the server pays the fee.
pub const DEFAULT_CU_PRICE: u64 = 1;

/// The x402 protocol version this client speaks.
const X402_VERSION: u64 = 1;

#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    #[error("challenge: {0}")]
    Challenge(String),
    #[error("{0}")]
    Rpc(String),
    #[error(
        "no RPC for network {0}: pass -rpc URL (or set X402PAY_RPC_URL); only {MAINNET} and {DEVNET} have a default"
    )]
    NoRpc(String),
    #[error("keyfile {path}: {reason}")]
    Keyfile { path: String, reason: String },
    #[error("building the transaction: {0}")]
    Build(String),
}

/// Compute budget instructions, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaymentOptions {
    /// `None` omits both compute budget instructions (`-no-compute-budget`).
    pub compute_budget: Option<ComputeBudget>,
    /// Build a legacy message instead of v0 (`-legacy`).
    pub legacy: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComputeBudget {
    pub unit_limit: u32,
    pub unit_price_micro_lamports: u64,
}

impl Default for PaymentOptions {
    fn default() -> Self {
        Self {
            compute_budget: Some(ComputeBudget {
                unit_limit: DEFAULT_CU_LIMIT,
                unit_price_micro_lamports: DEFAULT_CU_PRICE,
            }),
            legacy: false,
        }
    }
}

/// The accepts entry this client pays, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirements {
    pub network: String,
    pub asset: Pubkey,
    pub amount: u64,
    pub pay_to: Pubkey,
    pub fee_payer: Pubkey,
    pub decimals: u8,
    pub quote_id: String,
}

/// Pick the first `accepts` entry with scheme `exact` on a Solana network
/// and parse it; anything missing or malformed is refused by name.
pub fn select_requirements(challenge: &Value) -> Result<Requirements, PaymentError> {
    let bad = |m: String| PaymentError::Challenge(m);
    let version = challenge.get("x402Version").and_then(Value::as_u64);
    if version != Some(X402_VERSION) {
        return Err(bad(format!(
            "x402Version must be {X402_VERSION}, got {}",
            challenge.get("x402Version").unwrap_or(&Value::Null)
        )));
    }
    let accepts = challenge
        .get("accepts")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no accepts array".into()))?;
    let (i, entry) = accepts
        .iter()
        .enumerate()
        .find(|(_, a)| {
            a.get("scheme").and_then(Value::as_str) == Some("exact")
                && a.get("network")
                    .and_then(Value::as_str)
                    .is_some_and(is_solana_network)
        })
        .ok_or_else(|| {
            bad("no accepts entry with scheme \"exact\" on a solana network; this client pays only that".into())
        })?;
    let field = |name: &str| -> Result<&Value, PaymentError> {
        entry
            .get(name)
            .ok_or_else(|| bad(format!("accepts[{i}].{name} is missing")))
    };
    let text = |name: &str| -> Result<&str, PaymentError> {
        field(name)?
            .as_str()
            .ok_or_else(|| bad(format!("accepts[{i}].{name} is not a string")))
    };
    let address = |name: &str, value: &str| -> Result<Pubkey, PaymentError> {
        value
            .parse::<Pubkey>()
            .map_err(|_| bad(format!("{name} is not a base58 Solana address: {value:?}")))
    };
    let extra = field("extra")?;
    let extra_text = |name: &str| -> Result<&str, PaymentError> {
        extra
            .get(name)
            .ok_or_else(|| bad(format!("accepts[{i}].extra.{name} is missing")))?
            .as_str()
            .ok_or_else(|| bad(format!("accepts[{i}].extra.{name} is not a string")))
    };

    let network = text("network")?.to_owned();
    let asset = address(&format!("accepts[{i}].asset"), text("asset")?)?;
    let pay_to = address(&format!("accepts[{i}].payTo"), text("payTo")?)?;
    // v1 of the x402 spec names it maxAmountRequired; this service says amount.
    let amount_value = entry
        .get("amount")
        .or_else(|| entry.get("maxAmountRequired"))
        .ok_or_else(|| bad(format!("accepts[{i}].amount is missing")))?;
    let amount = integer(amount_value).filter(|a| *a > 0).ok_or_else(|| {
        bad(format!(
            "accepts[{i}].amount must be a positive integer in atomic units, got {amount_value}"
        ))
    })?;
    let fee_payer = address(
        &format!("accepts[{i}].extra.feePayer"),
        extra_text("feePayer")?,
    )?;
    let decimals_value = extra
        .get("decimals")
        .ok_or_else(|| bad(format!("accepts[{i}].extra.decimals is missing")))?;
    let decimals = integer(decimals_value)
        .and_then(|d| u8::try_from(d).ok())
        .ok_or_else(|| {
            bad(format!(
                "accepts[{i}].extra.decimals must be an integer 0..=255, got {decimals_value}"
            ))
        })?;
    let quote_id = extra_text("quoteId")?.to_owned();
    if quote_id.is_empty() {
        return Err(bad(format!("accepts[{i}].extra.quoteId is empty")));
    }
    if let Some(memo) = extra.get("memo").and_then(Value::as_str)
        && memo != quote_id
    {
        return Err(bad(format!(
            "accepts[{i}].extra.memo {memo:?} differs from extra.quoteId {quote_id:?}; the memo must be the quote id"
        )));
    }
    Ok(Requirements {
        network,
        asset,
        amount,
        pay_to,
        fee_payer,
        decimals,
        quote_id,
    })
}

/// CAIP-2 `solana:…`, or the x402 v1 short names.
fn is_solana_network(network: &str) -> bool {
    network.starts_with("solana:") || network == "solana" || network == "solana-devnet"
}

/// An integer carried as a JSON string (as this service does) or number.
fn integer(value: &Value) -> Option<u64> {
    match value {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

/// `-rpc` first, then `X402PAY_RPC_URL`, then the public endpoint of a known
/// network. An unknown network with neither is an error naming the flag.
pub fn resolve_rpc(
    flag: Option<&str>,
    env: Option<&str>,
    network: &str,
) -> Result<String, PaymentError> {
    if let Some(url) = flag.or(env).filter(|u| !u.trim().is_empty()) {
        return Ok(url.trim().to_owned());
    }
    match network {
        MAINNET | "solana" => Ok("https://api.mainnet-beta.solana.com".to_owned()),
        DEVNET | "solana-devnet" => Ok("https://api.devnet.solana.com".to_owned()),
        other => Err(PaymentError::NoRpc(other.to_owned())),
    }
}

/// Read a solana-keygen keypair file (a JSON array of 64 bytes).
pub fn read_keyfile(path: &str) -> Result<Keypair, PaymentError> {
    let fail = |reason: String| PaymentError::Keyfile {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let bytes: Vec<u8> = serde_json::from_str(text.trim())
        .map_err(|_| fail("not a solana-keygen keypair (a JSON array of 64 bytes)".into()))?;
    if bytes.len() != 64 {
        return Err(fail(format!(
            "a keypair is 64 bytes, this array has {}",
            bytes.len()
        )));
    }
    Keypair::try_from(bytes.as_slice()).map_err(|e| fail(format!("invalid keypair: {e}")))
}

/// Build the payment value for `challenge`, signed by `payer`, reading the
/// blockhash and the mint's program from `rpc_url`.
pub async fn build_payment(
    challenge: &Value,
    payer: &Keypair,
    rpc_url: &str,
    options: &PaymentOptions,
) -> Result<String, PaymentError> {
    let requirements = select_requirements(challenge)?;
    let rpc = Rpc::new(rpc_url)?;
    let blockhash = rpc.latest_blockhash().await?;
    let token_program = rpc.token_program_of(&requirements.asset).await?;
    let transaction = build_transaction(&requirements, payer, token_program, blockhash, options)?;
    Ok(encode_payment(
        &requirements.network,
        &wire_bytes(&transaction),
    ))
}

/// The instructions, in the scheme's order.
pub fn payment_instructions(
    requirements: &Requirements,
    payer: &Pubkey,
    token_program: Pubkey,
    options: &PaymentOptions,
) -> Vec<Instruction> {
    let source =
        get_associated_token_address_with_program_id(payer, &requirements.asset, &token_program);
    let destination = get_associated_token_address_with_program_id(
        &requirements.pay_to,
        &requirements.asset,
        &token_program,
    );
    let mut instructions = Vec::with_capacity(4);
    if let Some(budget) = options.compute_budget {
        instructions.push(ComputeBudgetInstruction::set_compute_unit_limit(
            budget.unit_limit,
        ));
        instructions.push(ComputeBudgetInstruction::set_compute_unit_price(
            budget.unit_price_micro_lamports,
        ));
    }
    // spl-token-interface's `transfer_checked` refuses Token-2022's id; the
    // instruction is the same bytes and accounts for both programs.
    instructions.push(Instruction {
        program_id: token_program,
        accounts: vec![
            AccountMeta::new(source, false),
            AccountMeta::new_readonly(requirements.asset, false),
            AccountMeta::new(destination, false),
            AccountMeta::new_readonly(*payer, true),
        ],
        data: TokenInstruction::TransferChecked {
            amount: requirements.amount,
            decimals: requirements.decimals,
        }
        .pack(),
    });
    instructions.push(Instruction {
        program_id: MEMO_PROGRAM,
        accounts: Vec::new(),
        data: requirements.quote_id.as_bytes().to_vec(),
    });
    instructions
}

/// Compile with the server's fee payer as account 0 and sign the payer's
/// slot only; the fee payer's slot stays the default (all zero) signature.
pub fn build_transaction(
    requirements: &Requirements,
    payer: &Keypair,
    token_program: Pubkey,
    blockhash: Hash,
    options: &PaymentOptions,
) -> Result<VersionedTransaction, PaymentError> {
    let payer_key = payer.pubkey();
    if payer_key == requirements.fee_payer {
        return Err(PaymentError::Build(
            "the keypair is the server's fee payer; pay from another wallet".into(),
        ));
    }
    let instructions = payment_instructions(requirements, &payer_key, token_program, options);
    let message = if options.legacy {
        VersionedMessage::Legacy(Message::new_with_blockhash(
            &instructions,
            Some(&requirements.fee_payer),
            &blockhash,
        ))
    } else {
        VersionedMessage::V0(
            v0::Message::try_compile(&requirements.fee_payer, &instructions, &[], blockhash)
                .map_err(|e| PaymentError::Build(e.to_string()))?,
        )
    };
    let signers = usize::from(message.header().num_required_signatures);
    let keys = message.static_account_keys();
    let slot = keys
        .iter()
        .take(signers)
        .position(|k| *k == payer_key)
        .ok_or_else(|| PaymentError::Build("the payer is not a signer of the message".into()))?;
    let mut signatures = vec![Signature::default(); signers];
    if let Some(own) = signatures.get_mut(slot) {
        *own = payer.sign_message(&message.serialize());
    }
    Ok(VersionedTransaction {
        signatures,
        message,
    })
}

/// The wire form: a compact-u16 count of signatures, the signatures, then the
/// serialized message — exactly what solana-transaction's codec writes for
/// legacy and v0 transactions (the tests decode it with that codec).
pub fn wire_bytes(transaction: &VersionedTransaction) -> Vec<u8> {
    let message = transaction.message.serialize();
    let mut out = Vec::with_capacity(3 + 64 * transaction.signatures.len() + message.len());
    let mut count = transaction.signatures.len();
    loop {
        let low = (count & 0x7f) as u8;
        count >>= 7;
        if count == 0 {
            out.push(low);
            break;
        }
        out.push(low | 0x80);
    }
    for signature in &transaction.signatures {
        out.extend_from_slice(signature.as_ref());
    }
    out.extend_from_slice(&message);
    out
}

/// The x402 payment payload, in the field order x402 clients write.
#[derive(Serialize)]
struct PaymentPayload<'a> {
    #[serde(rename = "x402Version")]
    x402_version: u64,
    scheme: &'a str,
    network: &'a str,
    payload: TransactionPayload,
}

#[derive(Serialize)]
struct TransactionPayload {
    transaction: String,
}

/// base64(compact JSON `{"x402Version":1,"scheme":"exact","network":…,"payload":{"transaction":…}}`).
pub fn encode_payment(network: &str, wire: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD;
    let payload = PaymentPayload {
        x402_version: X402_VERSION,
        scheme: "exact",
        network,
        payload: TransactionPayload {
            transaction: b64.encode(wire),
        },
    };
    // Serializing a struct of strings and integers cannot fail.
    let json = serde_json::to_vec(&payload).unwrap_or_default();
    b64.encode(json)
}

/// The two JSON-RPC reads a payment needs.
struct Rpc {
    http: reqwest::Client,
    url: String,
}

impl Rpc {
    fn new(url: &str) -> Result<Self, PaymentError> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| PaymentError::Rpc(format!("RPC client: {e}")))?;
        Ok(Self {
            http,
            url: url.to_owned(),
        })
    }

    async fn call(&self, method: &str, params: Value) -> Result<Value, PaymentError> {
        let fail =
            |reason: String| PaymentError::Rpc(format!("{method} at {}: {reason}", self.url));
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = self
            .http
            .post(&self.url)
            .json(&body)
            .send()
            .await
            .map_err(|e| fail(e.to_string()))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| fail(e.to_string()))?;
        if !status.is_success() {
            return Err(fail(format!("HTTP {status}: {}", snippet(&text))));
        }
        let mut reply: Value = serde_json::from_str(&text)
            .map_err(|_| fail(format!("not JSON: {}", snippet(&text))))?;
        if let Some(error) = reply.get("error") {
            return Err(fail(format!("RPC error {error}")));
        }
        reply
            .get_mut("result")
            .map(Value::take)
            .ok_or_else(|| fail("no result in the reply".into()))
    }

    async fn latest_blockhash(&self) -> Result<Hash, PaymentError> {
        let result = self
            .call("getLatestBlockhash", json!([{"commitment": "confirmed"}]))
            .await?;
        let text = result
            .pointer("/value/blockhash")
            .and_then(Value::as_str)
            .ok_or_else(|| PaymentError::Rpc("getLatestBlockhash: no value.blockhash".into()))?;
        text.parse()
            .map_err(|_| PaymentError::Rpc(format!("getLatestBlockhash: bad blockhash {text:?}")))
    }

    /// The mint's owner: SPL Token or Token-2022, nothing else.
    async fn token_program_of(&self, mint: &Pubkey) -> Result<Pubkey, PaymentError> {
        let result = self
            .call(
                "getAccountInfo",
                json!([mint.to_string(), {
                    "encoding": "base64",
                    "commitment": "confirmed",
                    "dataSlice": {"offset": 0, "length": 0}
                }]),
            )
            .await?;
        let value = result.get("value").unwrap_or(&Value::Null);
        if value.is_null() {
            return Err(PaymentError::Rpc(format!(
                "the asset {mint} does not exist at {} (wrong network or RPC?)",
                self.url
            )));
        }
        let owner = value
            .get("owner")
            .and_then(Value::as_str)
            .and_then(|o| o.parse::<Pubkey>().ok())
            .ok_or_else(|| PaymentError::Rpc("getAccountInfo: no owner in the reply".into()))?;
        if owner == TOKEN_PROGRAM || owner == TOKEN_2022_PROGRAM {
            Ok(owner)
        } else {
            Err(PaymentError::Rpc(format!(
                "the asset {mint} is owned by {owner}, not a token program: not a mint"
            )))
        }
    }
}

fn snippet(text: &str) -> String {
    let t: String = text.chars().take(200).collect();
    t.trim().to_owned()
}
