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

#[cfg(test)]
pub(crate) mod tests {
    use std::{collections::HashSet, str::FromStr};

    use axum::{Json, Router, routing::post};
    use base64::engine::general_purpose::STANDARD;
    use solana_message::compiled_instruction::CompiledInstruction;

    use super::*;

    pub(crate) const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    pub(crate) const TREASURY: &str = "3qkZ6QEiycJUNMzhBYMjHt7hJaNhqLXMp29MEN6Yh8Dj";
    pub(crate) const FEE_PAYER: &str = "49YRcYkyHkyBEfN6h2u6cHvhrXzcYfQKcgXyA6bTYpt8";
    pub(crate) const BLOCKHASH: &str = "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N";
    pub(crate) const QUOTE: &str = "q_01J9X4A7M3";
    /// A network no default RPC exists for, so `-rpc` must be given.
    pub(crate) const LOCAL_NETWORK: &str = "solana:localtest";

    pub(crate) fn challenge(network: &str) -> Value {
        json!({
            "x402Version": 1,
            "accepts": [{
                "scheme": "exact",
                "network": network,
                "asset": USDC,
                "amount": "20000",
                "payTo": TREASURY,
                "maxTimeoutSeconds": 60,
                "resource": "/v1/wallets/7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU/ledger",
                "description": "Wallet reporting: read of 7xKXtg2C…gAsU.",
                "extra": {"quoteId": QUOTE, "decimals": "6", "feePayer": FEE_PAYER, "memo": QUOTE}
            }]
        })
    }

    /// A JSON-RPC stand-in answering the two reads with mainnet's reply
    /// shapes; the USDC mint is owned by `owner`, any other mint is absent.
    pub(crate) async fn spawn_rpc(owner: Pubkey) -> String {
        let app = Router::new().route(
            "/",
            post(move |Json(request): Json<Value>| async move {
                let id = request["id"].clone();
                let context = json!({"apiVersion": "2.2.7", "slot": 341_197_053u64});
                let result = match request["method"].as_str() {
                    Some("getLatestBlockhash") => json!({
                        "context": context,
                        "value": {"blockhash": BLOCKHASH, "lastValidBlockHeight": 319_512_300u64}
                    }),
                    Some("getAccountInfo") if request["params"][0] == USDC => json!({
                        "context": context,
                        "value": {
                            "data": ["", "base64"],
                            "executable": false,
                            "lamports": 388_127_047_454u64,
                            "owner": owner.to_string(),
                            "rentEpoch": u64::MAX,
                            "space": 82
                        }
                    }),
                    Some("getAccountInfo") => json!({"context": context, "value": null}),
                    _ => {
                        return Json(json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": -32601, "message": "Method not found"}}));
                    }
                };
                Json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{address}/")
    }

    /// base64 → JSON → wire bytes → a transaction, through the codec
    /// solana-transaction itself uses.
    pub(crate) fn decode(value: &str) -> (Value, VersionedTransaction) {
        let json: Value = serde_json::from_slice(&STANDARD.decode(value).unwrap()).unwrap();
        let wire = STANDARD
            .decode(json["payload"]["transaction"].as_str().unwrap())
            .unwrap();
        let transaction: VersionedTransaction = wincode::deserialize(&wire).unwrap();
        assert_eq!(
            wincode::serialize(&transaction).unwrap(),
            wire,
            "our wire bytes are exactly the crate's encoding"
        );
        (json, transaction)
    }

    fn key(s: &str) -> Pubkey {
        Pubkey::from_str(s).unwrap()
    }

    fn program<'a>(tx: &'a VersionedTransaction, ix: &CompiledInstruction) -> &'a Pubkey {
        &tx.message.static_account_keys()[usize::from(ix.program_id_index)]
    }

    fn accounts(tx: &VersionedTransaction, ix: &CompiledInstruction) -> Vec<Pubkey> {
        let keys = tx.message.static_account_keys();
        ix.accounts.iter().map(|i| keys[usize::from(*i)]).collect()
    }

    /// Everything the verifier checks, on a decoded payment.
    fn assert_layout(
        tx: &VersionedTransaction,
        payer: &Keypair,
        token_program: Pubkey,
        budget: Option<ComputeBudget>,
    ) {
        tx.sanitize().unwrap();
        let keys = tx.message.static_account_keys();
        let fee_payer = key(FEE_PAYER);
        assert_eq!(keys[0], fee_payer, "the fee payer is account 0");
        assert_eq!(tx.message.header().num_required_signatures, 2);
        assert_eq!(keys[1], payer.pubkey(), "the payer is the second signer");
        assert_eq!(tx.signatures.len(), 2);
        assert_eq!(
            tx.signatures[0],
            Signature::default(),
            "the fee payer's slot stays zeroed for the server"
        );
        assert!(
            tx.signatures[1].verify(payer.pubkey().as_ref(), &tx.message.serialize()),
            "the payer's signature verifies over the message"
        );
        assert_eq!(tx.verify_with_results(), vec![false, true]);
        assert_eq!(
            *tx.message.recent_blockhash(),
            Hash::from_str(BLOCKHASH).unwrap()
        );

        let ixs = tx.message.instructions();
        let mut rest = ixs.iter();
        if let Some(budget) = budget {
            assert_eq!(ixs.len(), 4);
            let limit = rest.next().unwrap();
            assert_eq!(*program(tx, limit), solana_compute_budget_interface::ID);
            let mut data = vec![2];
            data.extend_from_slice(&budget.unit_limit.to_le_bytes());
            assert_eq!(limit.data, data, "SetComputeUnitLimit");
            let price = rest.next().unwrap();
            assert_eq!(*program(tx, price), solana_compute_budget_interface::ID);
            let mut data = vec![3];
            data.extend_from_slice(&budget.unit_price_micro_lamports.to_le_bytes());
            assert_eq!(price.data, data, "SetComputeUnitPrice");
            assert!(limit.accounts.is_empty() && price.accounts.is_empty());
        } else {
            assert_eq!(ixs.len(), 2);
        }

        let transfer = rest.next().unwrap();
        assert_eq!(*program(tx, transfer), token_program);
        let usdc = key(USDC);
        let source =
            get_associated_token_address_with_program_id(&payer.pubkey(), &usdc, &token_program);
        let destination =
            get_associated_token_address_with_program_id(&key(TREASURY), &usdc, &token_program);
        assert_eq!(
            accounts(tx, transfer),
            vec![source, usdc, destination, payer.pubkey()],
            "TransferChecked: source ATA, mint, payTo's ATA, payer as authority"
        );
        let mut data = vec![12];
        data.extend_from_slice(&20_000u64.to_le_bytes());
        data.push(6);
        assert_eq!(
            transfer.data, data,
            "TransferChecked amount 20000, decimals 6"
        );
        let source_index = keys.iter().position(|k| *k == source).unwrap();
        let destination_index = keys.iter().position(|k| *k == destination).unwrap();
        let writable = |i: usize| {
            tx.message
                .is_maybe_writable_with_reserved_addresses(i, None::<&HashSet<Pubkey>>)
        };
        assert!(writable(0), "the fee payer is a writable signer");
        assert!(!writable(1), "the payer only signs");
        assert!(writable(source_index) && writable(destination_index));

        let memo = rest.next().unwrap();
        assert_eq!(*program(tx, memo), MEMO_PROGRAM);
        assert_eq!(
            MEMO_PROGRAM.to_string(),
            "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
        );
        assert!(memo.accounts.is_empty(), "the memo names no accounts");
        assert_eq!(memo.data, QUOTE.as_bytes(), "the memo is the quote id");

        for ix in ixs {
            assert!(
                !ix.accounts.contains(&0),
                "the fee payer is in no instruction's accounts"
            );
        }
    }

    #[tokio::test]
    async fn builds_a_v0_payment_the_verifier_accepts() {
        let rpc = spawn_rpc(TOKEN_PROGRAM).await;
        let payer = Keypair::new();
        let options = PaymentOptions::default();
        let value = build_payment(&challenge(MAINNET), &payer, &rpc, &options)
            .await
            .unwrap();
        assert!(
            value.starts_with("eyJ4NDAyVmVyc2lvbiI6MSwic2NoZW1lIjoiZXhhY3QiLCJuZXR3b3JrIjoi"),
            "the seed's example prefix: {value}"
        );
        let (json, tx) = decode(&value);
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 4);
        assert_eq!(json["x402Version"], 1);
        assert_eq!(json["scheme"], "exact");
        assert_eq!(json["network"], MAINNET);
        assert!(matches!(tx.message, VersionedMessage::V0(_)));
        assert_eq!(tx.message.address_table_lookups().map(<[_]>::len), Some(0));
        assert_layout(&tx, &payer, TOKEN_PROGRAM, options.compute_budget);
    }

    #[tokio::test]
    async fn a_token_2022_mint_pays_through_token_2022_accounts() {
        let rpc = spawn_rpc(TOKEN_2022_PROGRAM).await;
        let payer = Keypair::new();
        let options = PaymentOptions::default();
        let value = build_payment(&challenge(MAINNET), &payer, &rpc, &options)
            .await
            .unwrap();
        let (_, tx) = decode(&value);
        assert_layout(&tx, &payer, TOKEN_2022_PROGRAM, options.compute_budget);
    }

    #[tokio::test]
    async fn compute_budget_flags_set_or_omit_the_budget() {
        let rpc = spawn_rpc(TOKEN_PROGRAM).await;
        let payer = Keypair::new();
        let custom = PaymentOptions {
            compute_budget: Some(ComputeBudget {
                unit_limit: 77_777,
                unit_price_micro_lamports: 42,
            }),
            legacy: false,
        };
        let value = build_payment(&challenge(MAINNET), &payer, &rpc, &custom)
            .await
            .unwrap();
        assert_layout(
            &decode(&value).1,
            &payer,
            TOKEN_PROGRAM,
            custom.compute_budget,
        );

        let none = PaymentOptions {
            compute_budget: None,
            legacy: false,
        };
        let value = build_payment(&challenge(MAINNET), &payer, &rpc, &none)
            .await
            .unwrap();
        assert_layout(&decode(&value).1, &payer, TOKEN_PROGRAM, None);
    }

    #[tokio::test]
    async fn legacy_builds_a_legacy_message_with_the_same_layout() {
        let rpc = spawn_rpc(TOKEN_PROGRAM).await;
        let payer = Keypair::new();
        let options = PaymentOptions {
            legacy: true,
            ..PaymentOptions::default()
        };
        let value = build_payment(&challenge(MAINNET), &payer, &rpc, &options)
            .await
            .unwrap();
        let (_, tx) = decode(&value);
        assert!(matches!(tx.message, VersionedMessage::Legacy(_)));
        assert_layout(&tx, &payer, TOKEN_PROGRAM, options.compute_budget);
    }

    #[tokio::test]
    async fn an_asset_that_does_not_exist_is_refused_by_name() {
        let rpc = spawn_rpc(TOKEN_PROGRAM).await;
        let mut other = challenge(MAINNET);
        other["accepts"][0]["asset"] = json!(TREASURY);
        let err = build_payment(&other, &Keypair::new(), &rpc, &PaymentOptions::default())
            .await
            .unwrap_err();
        assert!(err.to_string().contains(TREASURY), "{err}");
    }

    #[tokio::test]
    async fn an_asset_not_owned_by_a_token_program_is_refused() {
        let rpc = spawn_rpc(key(TREASURY)).await;
        let err = build_payment(
            &challenge(MAINNET),
            &Keypair::new(),
            &rpc,
            &PaymentOptions::default(),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("not a mint"), "{err}");
    }

    #[test]
    fn the_server_fee_payer_cannot_pay() {
        let fee_payer = Keypair::new();
        let mut c = challenge(MAINNET);
        c["accepts"][0]["extra"]["feePayer"] = json!(fee_payer.pubkey().to_string());
        let requirements = select_requirements(&c).unwrap();
        let err = build_transaction(
            &requirements,
            &fee_payer,
            TOKEN_PROGRAM,
            Hash::default(),
            &PaymentOptions::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("fee payer"), "{err}");
    }

    #[test]
    fn picks_the_first_exact_entry_on_a_solana_network() {
        let mut c = challenge(DEVNET);
        let solana = c["accepts"][0].clone();
        let mut upto = solana.clone();
        upto["scheme"] = json!("upto");
        let mut evm = solana.clone();
        evm["network"] = json!("eip155:8453");
        let mut later = solana.clone();
        later["extra"]["quoteId"] = json!("q_later");
        later["extra"]["memo"] = json!("q_later");
        c["accepts"] = json!([upto, evm, solana, later]);
        let r = select_requirements(&c).unwrap();
        assert_eq!(r.network, DEVNET);
        assert_eq!(r.quote_id, QUOTE);
        assert_eq!(r.amount, 20_000);
        assert_eq!(r.decimals, 6);
        assert_eq!(r.asset, key(USDC));
        assert_eq!(r.pay_to, key(TREASURY));
        assert_eq!(r.fee_payer, key(FEE_PAYER));
    }

    #[test]
    fn refuses_a_challenge_it_cannot_pay() {
        let refused = |edit: &dyn Fn(&mut Value), expect: &str| {
            let mut c = challenge(MAINNET);
            edit(&mut c);
            let err = select_requirements(&c).unwrap_err().to_string();
            assert!(err.contains(expect), "{err:?} should mention {expect:?}");
        };
        refused(
            &|c| c["accepts"][0]["scheme"] = json!("upto"),
            "scheme \"exact\"",
        );
        refused(
            &|c| c["accepts"][0]["network"] = json!("eip155:8453"),
            "solana network",
        );
        refused(&|c| c["accepts"] = json!([]), "no accepts entry");
        refused(&|c| c["accepts"] = json!(null), "no accepts array");
        refused(&|c| c["x402Version"] = json!(2), "x402Version");
        refused(
            &|c| {
                c["accepts"][0]["extra"]
                    .as_object_mut()
                    .unwrap()
                    .remove("feePayer");
            },
            "extra.feePayer is missing",
        );
        refused(
            &|c| {
                c["accepts"][0]["extra"]
                    .as_object_mut()
                    .unwrap()
                    .remove("quoteId");
            },
            "extra.quoteId is missing",
        );
        refused(
            &|c| {
                c["accepts"][0]["extra"]
                    .as_object_mut()
                    .unwrap()
                    .remove("decimals");
            },
            "extra.decimals is missing",
        );
        refused(
            &|c| {
                c["accepts"][0].as_object_mut().unwrap().remove("extra");
            },
            "extra is missing",
        );
        refused(
            &|c| {
                c["accepts"][0].as_object_mut().unwrap().remove("payTo");
            },
            "payTo is missing",
        );
        refused(
            &|c| c["accepts"][0]["payTo"] = json!("3qkZ…treasury"),
            "payTo is not a base58",
        );
        refused(
            &|c| c["accepts"][0]["amount"] = json!("0.02"),
            "amount must be",
        );
        refused(
            &|c| c["accepts"][0]["amount"] = json!("0"),
            "amount must be",
        );
        refused(
            &|c| c["accepts"][0]["extra"]["decimals"] = json!("256"),
            "decimals",
        );
        refused(
            &|c| c["accepts"][0]["extra"]["memo"] = json!("q_other"),
            "memo",
        );
    }

    #[test]
    fn accepts_numbers_and_the_v1_amount_name() {
        let mut c = challenge(MAINNET);
        let entry = c["accepts"][0].as_object_mut().unwrap();
        entry.remove("amount");
        entry.insert("maxAmountRequired".into(), json!(20000));
        c["accepts"][0]["extra"]["decimals"] = json!(6);
        let r = select_requirements(&c).unwrap();
        assert_eq!((r.amount, r.decimals), (20_000, 6));
    }

    #[test]
    fn rpc_is_the_flag_then_the_environment_then_the_network_default() {
        assert_eq!(
            resolve_rpc(Some("http://flag"), Some("http://env"), MAINNET).unwrap(),
            "http://flag"
        );
        assert_eq!(
            resolve_rpc(None, Some("http://env"), MAINNET).unwrap(),
            "http://env"
        );
        assert_eq!(
            resolve_rpc(None, None, MAINNET).unwrap(),
            "https://api.mainnet-beta.solana.com"
        );
        assert_eq!(
            resolve_rpc(None, None, DEVNET).unwrap(),
            "https://api.devnet.solana.com"
        );
        let err = resolve_rpc(None, None, LOCAL_NETWORK)
            .unwrap_err()
            .to_string();
        assert!(err.contains("-rpc") && err.contains(LOCAL_NETWORK), "{err}");
    }

    #[test]
    fn reads_a_solana_keygen_keyfile() {
        let payer = Keypair::new();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id.json");
        std::fs::write(
            &path,
            serde_json::to_string(&payer.to_bytes().to_vec()).unwrap(),
        )
        .unwrap();
        let read = read_keyfile(path.to_str().unwrap()).unwrap();
        assert_eq!(read.pubkey(), payer.pubkey());

        std::fs::write(&path, "[1,2,3]").unwrap();
        let err = read_keyfile(path.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("64 bytes"), "{err}");
        std::fs::write(&path, "not json").unwrap();
        let err = read_keyfile(path.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("solana-keygen"), "{err}");
    }
}
