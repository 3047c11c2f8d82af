//! x402 payments end to end against the real server: challenges over REST
//! and MCP, one test per refusal (nothing sent, nothing charged, a fresh
//! challenge), settlement, receipts and entitlements, replay (sequential
//! and 50 at once), and recovery of a payment left pending by a crash.
//! The chain is the RPC stand-in; docs/payments.md, "Testing", says what
//! the local-chain tier adds.

use std::{sync::Arc, time::Duration};

use base64::{Engine, engine::general_purpose::STANDARD};
use reqwest::StatusCode;
use serde_json::{Value, json};
use server::clock::ManualClock;
use solana_hash::Hash;
use solana_instruction::{AccountMeta, Instruction};
use solana_keypair::Keypair;
use solana_message::{VersionedMessage, v0};
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;

use crate::{
    helpers::{Options, TestApp, relaxed_limits, spawn_with},
    scans::{WALLET, shared, wait_done},
    standin::{self, StandIn},
};

const NETWORK: &str = "solana:testnet0000000000000000000000000";
const TOKEN: Pubkey = Pubkey::from_str_const("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
const MEMO: Pubkey = Pubkey::from_str_const("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
const COMPUTE_BUDGET: Pubkey =
    Pubkey::from_str_const("ComputeBudget111111111111111111111111111111");

/// A server taking x402 payments, its stand-in chain and the parties.
pub struct Paid {
    pub app: TestApp,
    pub chain: StandIn,
    pub fee_payer: Pubkey,
    pub treasury: Pubkey,
    pub asset: Pubkey,
    pub payer: Keypair,
    keyfiles: tempfile::TempDir,
}

pub async fn paid_app(
    configure: impl FnOnce(&mut server::config::Config) + Send + 'static,
) -> Paid {
    paid_app_with(None, configure).await
}

pub async fn paid_app_with(
    clock: Option<ManualClock>,
    configure: impl FnOnce(&mut server::config::Config) + Send + 'static,
) -> Paid {
    let chain = standin::start(shared(0, Duration::ZERO)).await;
    let dir = tempfile::tempdir().unwrap();
    let fee_payer = Keypair::new();
    let keyfile = dir.path().join("fee-payer.json");
    std::fs::write(
        &keyfile,
        serde_json::to_string(&fee_payer.to_bytes().to_vec()).unwrap(),
    )
    .unwrap();
    let treasury = Pubkey::new_unique();
    let asset = Pubkey::new_unique();
    let url = chain.url.clone();
    let (treasury_s, asset_s) = (treasury.to_string(), asset.to_string());
    let mut options = Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.solana.retry_base_ms = 1;
            c.solana.tx_encoding = server::solana::TxEncoding::Json;
            c.worker.in_process = true;
            c.worker.poll_ms = 20;
            c.payments = server::config::PaymentsMode::X402;
            c.x402.network = NETWORK.to_owned();
            c.x402.asset = asset_s;
            c.x402.treasury = Some(treasury_s);
            c.x402.fee_payer_keyfile = Some(keyfile);
            c.x402.confirm_timeout_secs = 5;
            configure(c);
        }),
        ..Options::default()
    };
    if let Some(clock) = &clock {
        options.clock = Arc::new(clock.clone());
    }
    Paid {
        app: spawn_with(options).await,
        chain,
        fee_payer: fee_payer.pubkey(),
        treasury,
        asset,
        payer: Keypair::new(),
        keyfiles: dir,
    }
}

fn ata(owner: &Pubkey, mint: &Pubkey) -> Pubkey {
    spl_associated_token_account_interface::address::get_associated_token_address_with_program_id(
        owner, mint, &TOKEN,
    )
}

/// A payment transaction under construction: the right one by default,
/// each field there to be made wrong by a refusal test.
#[derive(Clone)]
pub struct Payment {
    pub amount: u64,
    pub decimals: u8,
    pub mint: Pubkey,
    pub destination: Pubkey,
    pub memo: Option<String>,
    pub cu_limit: Option<u32>,
    pub cu_price: Option<u64>,
    pub extra: Vec<Instruction>,
    pub authority_is_fee_payer: bool,
    pub blockhash: Hash,
    pub sign: bool,
    pub network: String,
}

impl Paid {
    /// The right payment for the challenge `x402` (its accepts[0]).
    pub fn payment_for(&self, x402: &Value) -> Payment {
        let accepts = &x402["accepts"][0];
        Payment {
            amount: accepts["amount"].as_str().unwrap().parse().unwrap(),
            decimals: 6,
            mint: self.asset,
            destination: ata(&self.treasury, &self.asset),
            memo: Some(accepts["extra"]["quoteId"].as_str().unwrap().to_owned()),
            cu_limit: Some(20_000),
            cu_price: Some(1),
            extra: Vec::new(),
            authority_is_fee_payer: false,
            blockhash: Hash::new_from_array(rand::random::<[u8; 32]>()),
            sign: true,
            network: NETWORK.to_owned(),
        }
    }

    /// The base64 payment value for `p`.
    pub fn build(&self, p: &Payment) -> String {
        let authority = if p.authority_is_fee_payer {
            self.fee_payer
        } else {
            self.payer.pubkey()
        };
        let mut ixs = Vec::new();
        if let Some(units) = p.cu_limit {
            let mut data = vec![2u8];
            data.extend_from_slice(&units.to_le_bytes());
            ixs.push(Instruction::new_with_bytes(COMPUTE_BUDGET, &data, vec![]));
        }
        if let Some(price) = p.cu_price {
            let mut data = vec![3u8];
            data.extend_from_slice(&price.to_le_bytes());
            ixs.push(Instruction::new_with_bytes(COMPUTE_BUDGET, &data, vec![]));
        }
        let mut data = vec![12u8];
        data.extend_from_slice(&p.amount.to_le_bytes());
        data.push(p.decimals);
        ixs.push(Instruction::new_with_bytes(
            TOKEN,
            &data,
            vec![
                AccountMeta::new(ata(&self.payer.pubkey(), &p.mint), false),
                AccountMeta::new_readonly(p.mint, false),
                AccountMeta::new(p.destination, false),
                AccountMeta::new_readonly(authority, true),
            ],
        ));
        if let Some(memo) = &p.memo {
            ixs.push(Instruction::new_with_bytes(MEMO, memo.as_bytes(), vec![]));
        }
        ixs.extend(p.extra.iter().cloned());
        // The payer must be a signer even when a test moves the authority.
        if p.authority_is_fee_payer {
            ixs.push(Instruction::new_with_bytes(
                MEMO,
                b"x",
                vec![AccountMeta::new_readonly(self.payer.pubkey(), true)],
            ));
        }
        let message = VersionedMessage::V0(
            v0::Message::try_compile(&self.fee_payer, &ixs, &[], p.blockhash.clone()).unwrap(),
        );
        let signature = if p.sign {
            self.payer.sign_message(&message.serialize())
        } else {
            Signature::default()
        };
        let tx = VersionedTransaction {
            signatures: vec![Signature::default(), signature],
            message,
        };
        let wire = wincode::serialize(&tx).unwrap();
        let value = json!({
            "x402Version": 1,
            "scheme": "exact",
            "network": p.network,
            "payload": {"transaction": STANDARD.encode(wire)},
        });
        STANDARD.encode(value.to_string())
    }

    pub fn sent(&self) -> usize {
        self.chain.shared.sent.lock().unwrap().len()
    }

    pub async fn payments(&self, status: &str) -> i64 {
        self.app.state.store().count_payments(status).await.unwrap()
    }

    /// Quote, pay and run a full scan of the stand-in wallet; the scan's
    /// result (with its payment block) and the finished job.
    pub async fn paid_scan(&self) -> (Value, Value) {
        let quote = self
            .app
            .call_tool("quote_wallet", json!({"address": WALLET, "scope": "full"}))
            .await;
        let quote_id = quote["structuredContent"]["quote_id"].as_str().unwrap();
        let challenge = self
            .app
            .call_tool("scan_wallet", json!({"quote_id": quote_id}))
            .await;
        assert_eq!(
            challenge["structuredContent"]["code"], "payment_required",
            "{challenge}"
        );
        let payment = self.build(&self.payment_for(&challenge["structuredContent"]["x402"]));
        let started = self
            .app
            .call_tool(
                "scan_wallet",
                json!({"quote_id": quote_id, "payment": payment}),
            )
            .await;
        assert_eq!(started["isError"], false, "{started}");
        let receipt = started["structuredContent"]["payment"]["receipt"]
            .as_str()
            .unwrap();
        let job_id = started["structuredContent"]["job_id"].as_str().unwrap();
        let mut job = Value::Null;
        for _ in 0..400 {
            job = self
                .app
                .call_tool("get_job", json!({"job_id": job_id, "receipt": receipt}))
                .await["structuredContent"]
                .clone();
            if job["status"] != "running" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(job["status"], "completed", "{job}");
        (started, job)
    }

    /// A read challenge for the (scanned) wallet.
    pub async fn read_challenge(&self) -> Value {
        let result = self
            .app
            .call_tool("get_ledger", json!({"address": WALLET, "limit": 5}))
            .await;
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(result["structuredContent"]["code"], "payment_required");
        result
    }

    /// Present `payment` for a read of the wallet over MCP.
    pub async fn read_with(&self, payment: &str, quote_id: &str) -> Value {
        self.app
            .call_tool(
                "get_ledger",
                json!({"address": WALLET, "limit": 5, "payment": payment, "quote_id": quote_id}),
            )
            .await
    }
}

fn quote_of(result: &Value) -> String {
    result["structuredContent"]["x402"]["accepts"][0]["extra"]["quoteId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A scanned wallet, and a read challenge for it.
async fn scanned() -> (Paid, Value) {
    let paid = paid_app(|_| {}).await;
    paid.paid_scan().await;
    let challenge = paid.read_challenge().await;
    (paid, challenge)
}

/// [`scanned`] on a hand-driven clock, with `configure` applied.
async fn scanned_at(
    configure: impl FnOnce(&mut server::config::Config) + Send + 'static,
) -> (Paid, ManualClock, Value) {
    let clock = ManualClock::new(1_800_000_000_000);
    let paid = paid_app_with(Some(clock.clone()), configure).await;
    paid.paid_scan().await;
    let challenge = paid.read_challenge().await;
    (paid, clock, challenge)
}

/// Present a payment made wrong by `spoil` and check it is refused as
/// `code`, with a fresh challenge and nothing sent or recorded.
async fn refused(spoil: impl FnOnce(&Paid, &mut Payment), code: &str) {
    let (paid, challenge) = scanned().await;
    let sent_before = paid.sent();
    let settled_before = paid.payments("settled").await;
    let quote_id = quote_of(&challenge);
    let mut p = paid.payment_for(&challenge["structuredContent"]["x402"]);
    spoil(&paid, &mut p);
    let result = paid.read_with(&paid.build(&p), &quote_id).await;
    let sc = &result["structuredContent"];
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(sc["code"], "payment_required", "{result}");
    assert_eq!(sc["error"], code, "{result}");
    assert_eq!(sc["x402"]["error"], code);
    assert_ne!(quote_of(&result), quote_id, "a fresh challenge");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(code), "{text}");
    assert!(text.contains("nothing was charged"), "{text}");
    assert_eq!(paid.sent(), sent_before, "nothing was sent");
    assert_eq!(paid.payments("settled").await, settled_before);
    assert_eq!(paid.payments("pending").await, 0);
}

#[tokio::test]
async fn refuses_a_wrong_amount() {
    refused(|_, p| p.amount -= 1, "wrong_amount").await;
}

#[tokio::test]
async fn refuses_a_larger_amount_too() {
    refused(|_, p| p.amount += 1, "wrong_amount").await;
}

#[tokio::test]
async fn refuses_a_wrong_mint() {
    refused(
        |paid, p| {
            p.mint = Pubkey::new_unique();
            p.destination = ata(&paid.treasury, &p.mint);
        },
        "wrong_asset",
    )
    .await;
}

#[tokio::test]
async fn refuses_wrong_decimals() {
    refused(|_, p| p.decimals = 9, "wrong_asset").await;
}

#[tokio::test]
async fn refuses_a_destination_that_is_not_the_payees_token_account() {
    refused(|paid, p| p.destination = paid.treasury, "wrong_recipient").await;
}

#[tokio::test]
async fn refuses_a_missing_memo_as_wrong_quote() {
    refused(|_, p| p.memo = None, "wrong_quote").await;
}

#[tokio::test]
async fn refuses_a_memo_naming_another_quote() {
    refused(
        |_, p| p.memo = Some("q_01AAAAAAAAAAAAAAAAAAAAAAAA".to_owned()),
        "wrong_quote",
    )
    .await;
}

#[tokio::test]
async fn refuses_an_extra_instruction() {
    refused(
        |_, p| {
            p.extra
                .push(Instruction::new_with_bytes(MEMO, b"second memo", vec![]))
        },
        "unexpected_instruction",
    )
    .await;
}

#[tokio::test]
async fn refuses_an_unknown_program() {
    refused(
        |_, p| {
            p.extra.push(Instruction::new_with_bytes(
                Pubkey::new_unique(),
                b"\x01",
                vec![],
            ))
        },
        "unexpected_instruction",
    )
    .await;
}

#[tokio::test]
async fn refuses_a_transfer_that_is_not_transfer_checked() {
    refused(
        |paid, p| {
            // A plain Transfer (tag 3) from the payer's account.
            let mut data = vec![3u8];
            data.extend_from_slice(&1u64.to_le_bytes());
            p.extra.push(Instruction::new_with_bytes(
                TOKEN,
                &data,
                vec![
                    AccountMeta::new(ata(&paid.payer.pubkey(), &paid.asset), false),
                    AccountMeta::new(ata(&paid.treasury, &paid.asset), false),
                    AccountMeta::new_readonly(paid.payer.pubkey(), true),
                ],
            ))
        },
        "unexpected_instruction",
    )
    .await;
}

#[tokio::test]
async fn refuses_our_fee_payer_in_an_instruction() {
    refused(
        |paid, p| {
            p.extra.push(Instruction::new_with_bytes(
                MEMO,
                b"",
                vec![AccountMeta::new_readonly(paid.fee_payer, true)],
            ))
        },
        "fee_payer_in_instruction",
    )
    .await;
}

#[tokio::test]
async fn refuses_our_fee_payer_as_the_transfer_authority() {
    refused(
        |_, p| p.authority_is_fee_payer = true,
        "fee_payer_in_instruction",
    )
    .await;
}

#[tokio::test]
async fn refuses_a_compute_unit_price_above_the_cap() {
    refused(|_, p| p.cu_price = Some(50_001), "compute_price_too_high").await;
}

#[tokio::test]
async fn refuses_a_compute_unit_limit_above_the_cap() {
    refused(
        |_, p| p.cu_limit = Some(1_400_000),
        "compute_limit_too_high",
    )
    .await;
}

#[tokio::test]
async fn refuses_a_missing_payer_signature() {
    refused(|_, p| p.sign = false, "invalid_signature").await;
}

#[tokio::test]
async fn refuses_a_signature_over_another_message() {
    let (paid, challenge) = scanned().await;
    let quote_id = quote_of(&challenge);
    let good = paid.payment_for(&challenge["structuredContent"]["x402"]);
    // Sign one message, then present it with another's bytes: take the
    // signature of a payment for amount+1 and graft it onto the right one.
    let mut other = good.clone();
    other.amount += 1;
    let grab = |value: &str| {
        let json: Value = serde_json::from_slice(&STANDARD.decode(value).unwrap()).unwrap();
        STANDARD
            .decode(json["payload"]["transaction"].as_str().unwrap())
            .unwrap()
    };
    let mut wire = grab(&paid.build(&good));
    let foreign = grab(&paid.build(&other));
    wire[65..129].copy_from_slice(&foreign[65..129]);
    let value = STANDARD.encode(
        json!({"x402Version":1,"scheme":"exact","network":NETWORK,"payload":{"transaction":STANDARD.encode(&wire)}})
            .to_string(),
    );
    let result = paid.read_with(&value, &quote_id).await;
    assert_eq!(
        result["structuredContent"]["error"], "invalid_signature",
        "{result}"
    );
    assert_eq!(paid.sent(), 1, "only the scan's payment was sent");
}

#[tokio::test]
async fn refuses_a_stale_blockhash() {
    refused(
        |paid, p| {
            paid.chain
                .shared
                .stale_blockhashes
                .lock()
                .unwrap()
                .insert(p.blockhash.to_string());
        },
        "stale_blockhash",
    )
    .await;
}

#[tokio::test]
async fn refuses_a_payment_that_fails_simulation() {
    refused(
        |paid, _| {
            *paid.chain.shared.simulate_error.lock().unwrap() =
                Some(json!({"InstructionError": [2, {"Custom": 1}]}));
        },
        "simulation_failed",
    )
    .await;
}

#[tokio::test]
async fn refuses_a_payment_for_another_network() {
    refused(
        |_, p| p.network = "solana:elsewhere".to_owned(),
        "wrong_network",
    )
    .await;
}

#[tokio::test]
async fn refuses_an_unknown_quote() {
    let (paid, challenge) = scanned().await;
    let p = paid.payment_for(&challenge["structuredContent"]["x402"]);
    let result = paid
        .read_with(&paid.build(&p), "q_01AAAAAAAAAAAAAAAAAAAAAAAA")
        .await;
    assert_eq!(
        result["structuredContent"]["error"], "quote_not_found",
        "{result}"
    );
    assert_eq!(paid.sent(), 1, "only the scan's payment was sent");
    says_each_thing_once(
        &result,
        "payment refused (quote_not_found): no such quote; nothing was charged. Pay the fresh \
         challenge.",
    );
}

/// A refused payment's message and text say "nothing was charged" and
/// "pay the fresh challenge" once each, however the reason is worded.
fn says_each_thing_once(result: &Value, message: &str) {
    assert_eq!(result["structuredContent"]["message"], message, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    for said in [message, text] {
        let lower = said.to_lowercase();
        assert_eq!(lower.matches("nothing was charged").count(), 1, "{said}");
        assert!(lower.matches("fresh challenge").count() <= 1, "{said}");
        assert!(!said.contains("  "), "{said}");
    }
}

#[tokio::test]
async fn refuses_an_expired_quote() {
    let (paid, clock, challenge) = scanned_at(|_| {}).await;
    let quote_id = quote_of(&challenge);
    let p = paid.payment_for(&challenge["structuredContent"]["x402"]);
    clock.advance_ms(16 * 60 * 1000);
    let result = paid.read_with(&paid.build(&p), &quote_id).await;
    assert_eq!(
        result["structuredContent"]["error"], "quote_expired",
        "{result}"
    );
    assert_ne!(quote_of(&result), quote_id);
    assert_eq!(paid.sent(), 1, "only the scan's payment was sent");
    says_each_thing_once(
        &result,
        "payment refused (quote_expired): the quote expired; nothing was charged. Pay the fresh \
         challenge.",
    );
}

#[tokio::test]
async fn refuses_a_scan_quote_presented_for_a_read() {
    let (paid, challenge) = scanned().await;
    let quote = paid
        .app
        .call_tool("quote_wallet", json!({"address": WALLET, "scope": "full"}))
        .await;
    let scan_quote = quote["structuredContent"]["quote_id"].as_str().unwrap();
    let mut p = paid.payment_for(&challenge["structuredContent"]["x402"]);
    p.memo = Some(scan_quote.to_owned());
    let result = paid.read_with(&paid.build(&p), scan_quote).await;
    assert_eq!(
        result["structuredContent"]["error"], "wrong_quote",
        "{result}"
    );
    assert_eq!(paid.sent(), 1);
}

#[tokio::test]
async fn a_transaction_failing_on_chain_is_settlement_failed_and_gives_no_receipt() {
    let (paid, challenge) = scanned().await;
    *paid.chain.shared.land_error.lock().unwrap() =
        Some(json!({"InstructionError": [2, {"Custom": 1}]}));
    let p = paid.payment_for(&challenge["structuredContent"]["x402"]);
    let result = paid.read_with(&paid.build(&p), &quote_of(&challenge)).await;
    assert_eq!(
        result["structuredContent"]["error"], "settlement_failed",
        "{result}"
    );
    assert_eq!(paid.payments("failed").await, 1);
    assert!(result["structuredContent"].get("payment").is_none());
}

#[tokio::test]
async fn the_full_exchange_over_mcp_settles_once_and_the_receipt_reads_again() {
    let (paid, challenge) = scanned().await;
    let sc = &challenge["structuredContent"];
    let accepts = &sc["x402"]["accepts"][0];
    assert_eq!(sc["x402"]["x402Version"], 1);
    assert_eq!(accepts["scheme"], "exact");
    assert_eq!(accepts["network"], NETWORK);
    assert_eq!(accepts["asset"], paid.asset.to_string());
    assert_eq!(accepts["amount"], "20000");
    assert_eq!(accepts["payTo"], paid.treasury.to_string());
    assert_eq!(accepts["maxTimeoutSeconds"], 60);
    assert_eq!(accepts["resource"], format!("/v1/wallets/{WALLET}/ledger"));
    assert_eq!(accepts["extra"]["decimals"], "6");
    assert_eq!(accepts["extra"]["feePayer"], paid.fee_payer.to_string());
    assert_eq!(accepts["extra"]["memo"], accepts["extra"]["quoteId"]);
    let text = challenge["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("payment_required: Wallet reporting: read of 71WDyyCs…xiJ6. No refunds;"),
        "{text}"
    );
    assert!(text.contains("The price is 0.02 (amount 20000 atomic units of asset"));
    assert!(text.contains(
        "x402pay mcp-call -keyfile <solana keypair> -url <this server's /mcp> -tool get_ledger"
    ));

    let quote_id = quote_of(&challenge);
    let value = paid.build(&paid.payment_for(&sc["x402"]));
    let result = paid.read_with(&value, &quote_id).await;
    assert_eq!(result["isError"], false, "{result}");
    let payment = &result["structuredContent"]["payment"];
    assert_eq!(payment["settled"], true);
    assert_eq!(payment["replayed"], false);
    assert_eq!(payment["network"], NETWORK);
    assert_eq!(payment["payer"], paid.payer.pubkey().to_string());
    let receipt = payment["receipt"].as_str().unwrap().to_owned();
    assert_eq!(receipt.len(), 43);
    let transaction = payment["transaction"].as_str().unwrap();
    assert_eq!(
        paid.chain.shared.sent.lock().unwrap().last().unwrap(),
        transaction
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.ends_with(&format!(
            "Payment settled (transaction {transaction}). Receipt {receipt} can be reused: pass it as the receipt argument of later tools instead of paying again."
        )),
        "{text}"
    );
    assert_eq!(
        result["structuredContent"]["entries"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(paid.sent(), 2, "the scan's payment and this one");

    // The receipt reads again, free and without a payment block.
    let again = paid
        .app
        .call_tool(
            "get_ledger",
            json!({"address": WALLET, "limit": 5, "receipt": receipt}),
        )
        .await;
    assert_eq!(again["isError"], false, "{again}");
    assert!(again["structuredContent"].get("payment").is_none());
    // So does the X-Receipt header, on REST.
    let rest = paid
        .app
        .client
        .get(
            paid.app
                .url(&format!("/v1/wallets/{WALLET}/ledger?limit=2")),
        )
        .header("X-Receipt", &receipt)
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::OK);
    assert_eq!(paid.sent(), 2);
    // The receipt is stored only as a hash.
    assert_eq!(paid.payments("settled").await, 2);
}

#[tokio::test]
async fn a_receipt_covers_reads_until_it_expires_and_not_a_moment_longer() {
    // The store remembers a settled receipt's wallet and expiry after the
    // first read; the expiry is still checked against the clock each call.
    let (paid, clock, challenge) = scanned_at(|c| c.x402.receipt_ttl_secs = 3600).await;
    let value = paid.build(&paid.payment_for(&challenge["structuredContent"]["x402"]));
    let result = paid.read_with(&value, &quote_of(&challenge)).await;
    assert_eq!(result["isError"], false, "{result}");
    let receipt = result["structuredContent"]["payment"]["receipt"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = |tool: &'static str| {
        let receipt = receipt.clone();
        let app = &paid.app;
        async move {
            app.call_tool(tool, json!({"address": WALLET, "receipt": receipt}))
                .await
        }
    };
    for tool in ["get_ledger", "get_positions", "get_ledger"] {
        let covered = read(tool).await;
        assert_eq!(covered["isError"], false, "{covered}");
    }
    clock.advance_ms(3_599_000);
    assert_eq!(read("get_ledger").await["isError"], false);
    clock.advance_ms(1_000);
    for tool in ["get_ledger", "get_positions"] {
        let expired = read(tool).await;
        let sc = &expired["structuredContent"];
        assert_eq!(sc["code"], "payment_required", "{expired}");
        assert_eq!(sc["error"], "invalid_receipt", "{expired}");
    }
    assert_eq!(paid.sent(), 2, "the scan's payment and the read's");
}

#[tokio::test]
async fn rest_positions_paid_by_header_carry_the_payment_block_on_the_kept_answer() {
    let paid = paid_app(|_| {}).await;
    let (started, _) = paid.paid_scan().await;
    let receipt = started["structuredContent"]["payment"]["receipt"]
        .as_str()
        .unwrap()
        .to_owned();
    let url = paid.app.url(&format!("/v1/wallets/{WALLET}/positions"));
    // Covered by the scan's receipt: the replay is made and kept.
    let kept: Value = paid
        .app
        .client
        .get(&url)
        .header("X-Receipt", &receipt)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(kept.get("payment").is_none(), "{kept}");
    // A paid read of the same wallet is served from the kept bytes, with
    // the payment block appended.
    let challenge: Value = paid
        .app
        .client
        .get(&url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let value = paid.build(&paid.payment_for(&challenge));
    let response = paid
        .app
        .client
        .get(&url)
        .header("X-PAYMENT", &value)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let header: Value = serde_json::from_slice(
        &STANDARD
            .decode(response.headers()["x-payment-response"].to_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    let mut body: Value = response.json().await.unwrap();
    let block = body.as_object_mut().unwrap().remove("payment").unwrap();
    assert_eq!(block["settled"], true, "{block}");
    assert_eq!(block["receipt"], header["receipt"]);
    assert_eq!(body, kept, "the same answer, only the payment added");
}

#[tokio::test]
async fn rest_answers_402_and_an_x_payment_header_settles() {
    let (paid, _) = scanned().await;
    let url = paid
        .app
        .url(&format!("/v1/wallets/{WALLET}/ledger?limit=3"));
    let challenge = paid.app.client.get(&url).send().await.unwrap();
    assert_eq!(challenge.status(), StatusCode::PAYMENT_REQUIRED);
    let v2: Value = serde_json::from_slice(
        &STANDARD
            .decode(challenge.headers()["payment-required"].to_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(v2["x402Version"], 2);
    let body: Value = challenge.json().await.unwrap();
    assert_eq!(body["x402Version"], 1);
    assert_eq!(body["code"], "payment_required");
    assert_eq!(v2["accepts"][0]["amount"], body["accepts"][0]["amount"]);
    assert!(
        v2["resource"]["url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v1/wallets/{WALLET}/ledger"))
    );

    // A raw x402 client sends only the header: the memo names the quote.
    let value = paid.build(&paid.payment_for(&body));
    let response = paid
        .app
        .client
        .get(&url)
        .header("X-PAYMENT", &value)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let header: Value = serde_json::from_slice(
        &STANDARD
            .decode(response.headers()["x-payment-response"].to_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    let page: Value = response.json().await.unwrap();
    assert_eq!(header["success"], true);
    assert_eq!(header["transaction"], page["payment"]["transaction"]);
    assert_eq!(header["receipt"], page["payment"]["receipt"]);
    assert_eq!(page["entries"].as_array().unwrap().len(), 3);
    // The header covered that request only.
    let next = paid.app.client.get(&url).send().await.unwrap();
    assert_eq!(next.status(), StatusCode::PAYMENT_REQUIRED);
}

#[tokio::test]
async fn the_same_payment_twice_settles_once_and_replays_the_first_receipt() {
    let (paid, challenge) = scanned().await;
    let quote_id = quote_of(&challenge);
    let value = paid.build(&paid.payment_for(&challenge["structuredContent"]["x402"]));
    let first = paid.read_with(&value, &quote_id).await;
    let second = paid.read_with(&value, &quote_id).await;
    let (a, b) = (
        &first["structuredContent"]["payment"],
        &second["structuredContent"]["payment"],
    );
    assert_eq!(a["replayed"], false, "{first}");
    assert_eq!(b["replayed"], true, "{second}");
    assert_eq!(a["receipt"], b["receipt"]);
    assert_eq!(a["transaction"], b["transaction"]);
    assert_eq!(paid.sent(), 2, "the scan's payment and this one, once");
}

#[tokio::test]
async fn fifty_presentations_at_once_settle_exactly_once() {
    let (paid, challenge) = scanned().await;
    let quote_id = quote_of(&challenge);
    let value = paid.build(&paid.payment_for(&challenge["structuredContent"]["x402"]));
    let url = paid
        .app
        .url(&format!("/v1/wallets/{WALLET}/ledger?limit=1"));
    let mut tasks = Vec::new();
    for i in 0..50 {
        let (client, url, value, quote_id) = (
            paid.app.client.clone(),
            url.clone(),
            value.clone(),
            quote_id.clone(),
        );
        let base = paid.app.base.clone();
        tasks.push(tokio::spawn(async move {
            if i % 2 == 0 {
                let response = client.get(&url).header("X-PAYMENT", &value).send().await.unwrap();
                assert_eq!(response.status(), StatusCode::OK);
                response.json::<Value>().await.unwrap()["payment"].clone()
            } else {
                let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_ledger","arguments":{"address":WALLET,"limit":1,"payment":value,"quote_id":quote_id}}});
                let response = client
                    .post(format!("{base}/mcp"))
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", "2025-06-18")
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                let reply: Value = response.json().await.unwrap();
                assert_eq!(reply["result"]["isError"], false, "{reply}");
                reply["result"]["structuredContent"]["payment"].clone()
            }
        }));
    }
    let mut blocks = Vec::new();
    for task in tasks {
        blocks.push(task.await.unwrap());
    }
    let fresh = blocks.iter().filter(|b| b["replayed"] == false).count();
    assert_eq!(fresh, 1, "exactly one presentation settled");
    assert!(blocks.iter().all(|b| b["receipt"] == blocks[0]["receipt"]));
    assert!(
        blocks
            .iter()
            .all(|b| b["transaction"] == blocks[0]["transaction"])
    );
    assert_eq!(paid.sent(), 2, "the scan's payment and this one, once");
    assert_eq!(paid.payments("settled").await, 2);
}

#[tokio::test]
async fn a_second_different_payment_for_a_paid_quote_is_refused() {
    let (paid, challenge) = scanned().await;
    let quote_id = quote_of(&challenge);
    let p = paid.payment_for(&challenge["structuredContent"]["x402"]);
    let first = paid.read_with(&paid.build(&p), &quote_id).await;
    assert_eq!(first["isError"], false, "{first}");
    let mut again = p.clone();
    again.blockhash = Hash::new_from_array(rand::random::<[u8; 32]>());
    let second = paid.read_with(&paid.build(&again), &quote_id).await;
    assert_eq!(
        second["structuredContent"]["error"], "quote_already_paid",
        "{second}"
    );
    assert_eq!(paid.sent(), 2);
}

#[tokio::test]
async fn a_scan_payment_starts_its_scan_once_and_its_receipt_reads_and_scopes_get_job() {
    let paid = paid_app(|_| {}).await;
    let (started, job) = paid.paid_scan().await;
    let receipt = started["structuredContent"]["payment"]["receipt"]
        .as_str()
        .unwrap();
    let job_id = job["job_id"].as_str().unwrap();
    assert!(
        started["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Payment settled")
    );

    // get_job needs the receipt.
    let hidden = paid
        .app
        .call_tool("get_job", json!({"job_id": job_id}))
        .await;
    assert_eq!(hidden["structuredContent"]["code"], "not_found", "{hidden}");
    let other = paid
        .app
        .call_tool(
            "get_job",
            json!({"job_id": job_id, "receipt": "A".repeat(43)}),
        )
        .await;
    assert_eq!(other["structuredContent"]["code"], "not_found");

    // The receipt reads the wallet.
    let read = paid
        .app
        .call_tool("get_ledger", json!({"address": WALLET, "receipt": receipt}))
        .await;
    assert_eq!(read["isError"], false, "{read}");

    // It does not start a second scan.
    let quote = paid
        .app
        .call_tool("quote_wallet", json!({"address": WALLET, "scope": "full"}))
        .await;
    let again = paid
        .app
        .call_tool(
            "scan_wallet",
            json!({"quote_id": quote["structuredContent"]["quote_id"], "receipt": receipt}),
        )
        .await;
    assert_eq!(
        again["structuredContent"]["code"], "entitlement_consumed",
        "{again}"
    );
    assert_eq!(paid.sent(), 1);
}

#[tokio::test]
async fn a_replayed_scan_payment_answers_the_job_it_started() {
    let paid = paid_app(|_| {}).await;
    let quote = paid
        .app
        .call_tool("quote_wallet", json!({"address": WALLET, "scope": "full"}))
        .await;
    let quote_id = quote["structuredContent"]["quote_id"].as_str().unwrap();
    let challenge = paid
        .app
        .call_tool("scan_wallet", json!({"quote_id": quote_id}))
        .await;
    let value = paid.build(&paid.payment_for(&challenge["structuredContent"]["x402"]));
    let first = paid
        .app
        .call_tool(
            "scan_wallet",
            json!({"quote_id": quote_id, "payment": value}),
        )
        .await;
    let job_id = first["structuredContent"]["job_id"].as_str().unwrap();
    let receipt = first["structuredContent"]["payment"]["receipt"]
        .as_str()
        .unwrap();
    wait_for(&paid, job_id, receipt).await;
    let second = paid
        .app
        .call_tool(
            "scan_wallet",
            json!({"quote_id": quote_id, "payment": value}),
        )
        .await;
    assert_eq!(second["isError"], false, "{second}");
    assert_eq!(second["structuredContent"]["job_id"], job_id);
    assert_eq!(second["structuredContent"]["payment"]["replayed"], true);
    assert_eq!(paid.sent(), 1);
}

async fn wait_for(paid: &Paid, job_id: &str, receipt: &str) {
    for _ in 0..400 {
        let job = paid
            .app
            .call_tool("get_job", json!({"job_id": job_id, "receipt": receipt}))
            .await;
        if job["structuredContent"]["status"] != "running" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("job did not finish");
}

#[tokio::test]
async fn an_unscanned_wallet_is_not_found_before_any_challenge() {
    let paid = paid_app(|_| {}).await;
    let result = paid
        .app
        .call_tool("get_ledger", json!({"address": WALLET}))
        .await;
    assert_eq!(result["structuredContent"]["code"], "not_found", "{result}");
}

#[tokio::test]
async fn an_unknown_receipt_is_refused_with_a_challenge() {
    let (paid, _) = scanned().await;
    let result = paid
        .app
        .call_tool(
            "get_ledger",
            json!({"address": WALLET, "receipt": "B".repeat(43)}),
        )
        .await;
    assert_eq!(result["structuredContent"]["code"], "payment_required");
    assert_eq!(
        result["structuredContent"]["error"], "invalid_receipt",
        "{result}"
    );
}

#[tokio::test]
async fn without_treasury_or_fee_payer_challenges_say_payments_not_configured() {
    let paid = paid_app(|c| c.x402.treasury = None).await;
    let quote = paid
        .app
        .call_tool("quote_wallet", json!({"address": WALLET, "scope": "full"}))
        .await;
    let quote_id = quote["structuredContent"]["quote_id"].as_str().unwrap();
    let result = paid
        .app
        .call_tool("scan_wallet", json!({"quote_id": quote_id}))
        .await;
    let sc = &result["structuredContent"];
    assert_eq!(sc["code"], "payment_required", "{result}");
    assert_eq!(sc["status"], "payments_not_configured");
    assert_eq!(sc["x402"]["accepts"], json!([]));
    let attempt = paid
        .app
        .call_tool(
            "scan_wallet",
            json!({"quote_id": quote_id, "payment": "e30="}),
        )
        .await;
    assert_eq!(
        attempt["structuredContent"]["status"],
        "payments_not_configured"
    );
    assert_eq!(paid.sent(), 0);
}

#[tokio::test]
async fn a_payment_left_pending_by_a_crash_is_settled_from_the_chain() {
    let (paid, clock, challenge) = scanned_at(|c| c.x402.confirm_timeout_secs = 1).await;
    let quote_id = quote_of(&challenge);
    let value = paid.build(&paid.payment_for(&challenge["structuredContent"]["x402"]));
    // The node takes the transaction but nothing confirms before the
    // request gives up: the payment is left pending.
    paid.chain
        .shared
        .hold_sends
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let first = paid.read_with(&value, &quote_id).await;
    assert_eq!(first["structuredContent"]["code"], "unavailable", "{first}");
    assert_eq!(paid.payments("pending").await, 1);
    // It lands; once the lease has run out, recovery finishes it.
    let signature = paid
        .chain
        .shared
        .sent
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    paid.chain
        .shared
        .landed
        .lock()
        .unwrap()
        .insert(signature.clone());
    assert_eq!(
        server::worker::maintenance_pass(&paid.app.state)
            .await
            .unwrap()
            .payments_recovered,
        0,
        "a leased payment is left to its request"
    );
    clock.advance_ms(60_000);
    let pass = server::worker::maintenance_pass(&paid.app.state)
        .await
        .unwrap();
    assert_eq!(pass.payments_recovered, 1);
    assert_eq!(paid.payments("settled").await, 2);
    // Presenting it again answers the receipt; it was sent once.
    let again = paid.read_with(&value, &quote_id).await;
    assert_eq!(
        again["structuredContent"]["payment"]["replayed"], true,
        "{again}"
    );
    assert_eq!(
        again["structuredContent"]["payment"]["transaction"],
        signature
    );
    let sends = paid.chain.shared.sent.lock().unwrap().clone();
    assert_eq!(sends.iter().filter(|s| **s == signature).count(), 1);
}

#[tokio::test]
async fn a_pending_payment_whose_blockhash_expired_unseen_is_failed_by_recovery() {
    let (paid, clock, challenge) = scanned_at(|c| c.x402.confirm_timeout_secs = 1).await;
    let p = paid.payment_for(&challenge["structuredContent"]["x402"]);
    paid.chain
        .shared
        .hold_sends
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let first = paid.read_with(&paid.build(&p), &quote_of(&challenge)).await;
    assert_eq!(first["structuredContent"]["code"], "unavailable", "{first}");
    paid.chain
        .shared
        .stale_blockhashes
        .lock()
        .unwrap()
        .insert(p.blockhash.to_string());
    // Until it is surely expired, a node's word is not enough.
    clock.advance_ms(60_000);
    let pass = server::worker::maintenance_pass(&paid.app.state)
        .await
        .unwrap();
    assert_eq!(pass.payments_recovered, 0);
    clock.advance_ms(150_000);
    let pass = server::worker::maintenance_pass(&paid.app.state)
        .await
        .unwrap();
    assert_eq!(pass.payments_recovered, 1);
    assert_eq!(paid.payments("failed").await, 1);
    assert_eq!(paid.payments("settled").await, 1, "only the scan's");
}

#[tokio::test]
async fn payments_off_keeps_every_paid_tool_free() {
    let chain = standin::start(shared(0, Duration::ZERO)).await;
    let url = chain.url.clone();
    let app = spawn_with(Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.worker.in_process = true;
            c.worker.poll_ms = 20;
        }),
        ..Options::default()
    })
    .await;
    let quote = app
        .call_tool("quote_wallet", json!({"address": WALLET, "scope": "full"}))
        .await;
    let started = app
        .call_tool(
            "scan_wallet",
            json!({"quote_id": quote["structuredContent"]["quote_id"]}),
        )
        .await;
    assert_eq!(started["isError"], false, "{started}");
    assert!(started["structuredContent"].get("payment").is_none());
    let job = wait_done(
        &app,
        started["structuredContent"]["job_id"].as_str().unwrap(),
    )
    .await;
    assert_eq!(job["status"], "completed");
    let read = app
        .call_tool("get_ledger", json!({"address": WALLET}))
        .await;
    assert_eq!(read["isError"], false);
}

/// The real `x402pay` binary: `X402PAY_BIN` when set, else the workspace's
/// `x402pay` package built into the target directory this test runs from.
/// It is a package of its own, so Cargo does not build it for the server's
/// tests; the `cargo build` here is a no-op once it is up to date.
fn x402pay_bin() -> &'static std::path::Path {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("X402PAY_BIN") {
            return bin.into();
        }
        // <target>/<profile>/deps/api-<hash>
        let exe = std::env::current_exe().unwrap();
        let profile = exe.parent().and_then(|deps| deps.parent()).unwrap();
        let target = profile.parent().unwrap();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = std::process::Command::new(cargo);
        build
            .args(["build", "--quiet", "-p", "x402pay", "--bin", "x402pay"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("CARGO_TARGET_DIR", target);
        if profile.file_name().is_some_and(|p| p == "release") {
            build.arg("--release");
        }
        let status = build.status().unwrap();
        assert!(status.success(), "cargo build -p x402pay: {status}");
        profile.join("x402pay")
    })
}

/// Run the real `x402pay` binary.
fn x402pay(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(x402pay_bin())
        .args(args)
        .env_remove("X402PAY_KEYFILE")
        .env_remove("X402PAY_BEARER")
        .env_remove("X402PAY_RPC_URL")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[tokio::test]
async fn x402pay_does_the_whole_exchange_and_its_receipt_reads_again() {
    let (paid, _) = scanned().await;
    let keyfile = paid.keyfiles.path().join("payer.json");
    std::fs::write(
        &keyfile,
        serde_json::to_string(&paid.payer.to_bytes().to_vec()).unwrap(),
    )
    .unwrap();
    let keyfile = keyfile.to_str().unwrap().to_owned();
    let url = paid.app.url("/mcp");
    let rpc = paid.chain.url.clone();
    let args = format!(r#"{{"address":"{WALLET}","limit":2}}"#);

    // Without a keyfile: the challenge, exit 1.
    let (code, out, _) = {
        let (url, args) = (url.clone(), args.clone());
        tokio::task::spawn_blocking(move || {
            x402pay(&[
                "mcp-call",
                "-url",
                &url,
                "-tool",
                "get_ledger",
                "-args",
                &args,
            ])
        })
        .await
        .unwrap()
    };
    assert_eq!(code, 1);
    let challenge: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(challenge["accepts"][0]["scheme"], "exact", "{out}");

    // With one: paid, settled, the receipt printed.
    let (code, out, err) = {
        let (url, args, keyfile, rpc) = (url.clone(), args.clone(), keyfile.clone(), rpc.clone());
        tokio::task::spawn_blocking(move || {
            x402pay(&[
                "mcp-call",
                "-keyfile",
                &keyfile,
                "-url",
                &url,
                "-tool",
                "get_ledger",
                "-args",
                &args,
                "-rpc",
                &rpc,
            ])
        })
        .await
        .unwrap()
    };
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("payer: {}", paid.payer.pubkey()));
    assert_eq!(lines[1], "tool: get_ledger");
    assert_eq!(
        lines[2],
        "paid: challenge answered with the payment argument"
    );
    assert_eq!(
        lines[3],
        format!(
            "payment: settled=true replayed=false network={NETWORK} payer={}",
            paid.payer.pubkey()
        )
    );
    assert!(lines[4].starts_with("transaction: "));
    let receipt = lines[5].strip_prefix("receipt: ").unwrap().to_owned();
    assert_eq!(lines[6], "status: ok");
    assert!(lines[8].starts_with("2 ledger entries for"), "{out}");
    assert_eq!(paid.sent(), 2);

    // The receipt, as a header on every POST: no payment, nothing sent.
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        x402pay(&[
            "mcp-call",
            "-url",
            &url,
            "-tool",
            "get_ledger",
            "-args",
            &args,
            "-H",
            &format!("X-Receipt: {receipt}"),
        ])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("status: ok"), "{out}");
    assert!(!out.contains("receipt: "), "{out}");
    assert_eq!(paid.sent(), 2);
}

#[tokio::test]
async fn a_settled_payment_replayed_after_its_quote_expired_reveals_no_receipt() {
    // Settled transactions are public on chain: anyone could rebuild the
    // payment value. Its receipt is answered again only while the quote lives.
    let (paid, clock, challenge) = scanned_at(|_| {}).await;
    let quote_id = quote_of(&challenge);
    let value = paid.build(&paid.payment_for(&challenge["structuredContent"]["x402"]));
    let first = paid.read_with(&value, &quote_id).await;
    assert_eq!(first["isError"], false, "{first}");
    clock.advance_ms(16 * 60 * 1000);
    let later = paid.read_with(&value, &quote_id).await;
    let sc = &later["structuredContent"];
    assert_eq!(sc["code"], "payment_required", "{later}");
    assert_eq!(sc["error"], "payment_already_settled");
    assert!(
        !later.to_string().contains(
            first["structuredContent"]["payment"]["receipt"]
                .as_str()
                .unwrap()
        )
    );
    // Without quote_id (a raw x402 client), the same.
    let response = paid
        .app
        .client
        .get(paid.app.url(&format!("/v1/wallets/{WALLET}/ledger")))
        .header("X-PAYMENT", &value)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYMENT_REQUIRED);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "payment_already_settled", "{body}");
    assert_eq!(paid.sent(), 2);
}

#[tokio::test]
async fn an_x_payment_header_on_the_mcp_post_pays_that_call_only() {
    let (paid, challenge) = scanned().await;
    let value = paid.build(&paid.payment_for(&challenge["structuredContent"]["x402"]));
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_ledger","arguments":{"address":WALLET,"limit":1}}});
    let reply = paid.app.rpc(&call, &[("X-PAYMENT", &value)]).await;
    let payment = &reply["result"]["structuredContent"]["payment"];
    assert_eq!(payment["settled"], true, "{reply}");
    assert_eq!(payment["replayed"], false);
    // The next POST has no header and is challenged again.
    let next = paid.app.rpc(&call, &[]).await;
    assert_eq!(
        next["result"]["structuredContent"]["code"],
        "payment_required"
    );
    // An X-Receipt header covers its POST.
    let covered = paid
        .app
        .rpc(
            &call,
            &[("X-Receipt", payment["receipt"].as_str().unwrap())],
        )
        .await;
    assert_eq!(covered["result"]["isError"], false, "{covered}");
    assert_eq!(paid.sent(), 2);
}

#[tokio::test]
async fn rest_scans_are_paid_with_an_x_payment_header_and_read_with_x_receipt() {
    let paid = paid_app(|_| {}).await;
    let client = &paid.app.client;
    let quote: Value = client
        .post(paid.app.url("/v1/quotes"))
        .json(&json!({"address": WALLET}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let body = json!({"quote_id": quote["quote_id"]});
    let challenge = client
        .post(paid.app.url("/v1/scans"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(challenge.status(), StatusCode::PAYMENT_REQUIRED);
    let x402: Value = challenge.json().await.unwrap();
    assert_eq!(x402["accepts"][0]["resource"], "/v1/scans");
    assert_eq!(x402["accepts"][0]["amount"], quote["amount_atomic"]);
    let value = paid.build(&paid.payment_for(&x402));
    let started = client
        .post(paid.app.url("/v1/scans"))
        .header("X-PAYMENT", &value)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), StatusCode::ACCEPTED);
    assert!(started.headers().contains_key("x-payment-response"));
    let job: Value = started.json().await.unwrap();
    let receipt = job["payment"]["receipt"].as_str().unwrap();
    let path = paid
        .app
        .url(&format!("/v1/jobs/{}", job["job_id"].as_str().unwrap()));
    let hidden = client.get(&path).send().await.unwrap();
    assert_eq!(hidden.status(), StatusCode::NOT_FOUND);
    let seen = client
        .get(&path)
        .header("X-Receipt", receipt)
        .send()
        .await
        .unwrap();
    assert_eq!(seen.status(), StatusCode::OK);
    assert_eq!(paid.sent(), 1);
}

#[tokio::test]
async fn listing_payments_needs_an_account() {
    let paid = paid_app(|_| {}).await;
    let response = paid
        .app
        .client
        .get(paid.app.url("/v1/payments"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.headers().contains_key("www-authenticate"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "unauthenticated");
}

#[tokio::test]
async fn every_paid_read_is_behind_the_paywall_and_the_scans_receipt_covers_it() {
    let paid = paid_app(|c| c.prices.coinbase_url = "http://127.0.0.1:9".to_owned()).await;
    let (started, _) = paid.paid_scan().await;
    let receipt = started["structuredContent"]["payment"]["receipt"]
        .as_str()
        .unwrap();
    for (tool, route) in [
        ("get_ledger", "ledger"),
        ("get_positions", "positions"),
        ("get_value_history", "value-history"),
        ("get_flows", "flows"),
    ] {
        let challenge = paid.app.call_tool(tool, json!({"address": WALLET})).await;
        let sc = &challenge["structuredContent"];
        assert_eq!(sc["code"], "payment_required", "{tool}: {challenge}");
        assert_eq!(
            sc["x402"]["accepts"][0]["resource"],
            format!("/v1/wallets/{WALLET}/{route}")
        );
        assert!(
            challenge["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(&format!("-tool {tool} ")),
            "{tool}"
        );
        let rest = paid
            .app
            .client
            .get(paid.app.url(&format!("/v1/wallets/{WALLET}/{route}")))
            .send()
            .await
            .unwrap();
        assert_eq!(rest.status(), StatusCode::PAYMENT_REQUIRED, "{route}");
        let covered = paid
            .app
            .call_tool(tool, json!({"address": WALLET, "receipt": receipt}))
            .await;
        assert_eq!(covered["isError"], false, "{tool}: {covered}");
        let rest = paid
            .app
            .client
            .get(paid.app.url(&format!("/v1/wallets/{WALLET}/{route}")))
            .header("X-Receipt", receipt)
            .send()
            .await
            .unwrap();
        assert_eq!(rest.status(), StatusCode::OK, "{route}");
        // The REST body is the tool's answer, its payment block included
        // (positions append it to an answer kept serialised).
        let rest: Value = rest.json().await.unwrap();
        assert_eq!(
            rest["payment"], covered["structuredContent"]["payment"],
            "{route}"
        );
        if route == "positions" {
            assert_eq!(rest, covered["structuredContent"]);
        }
    }
    // A read payment for get_flows settles and reports itself.
    let challenge = paid
        .app
        .call_tool("get_flows", json!({"address": WALLET}))
        .await;
    let value = paid.build(&paid.payment_for(&challenge["structuredContent"]["x402"]));
    let flows = paid
        .app
        .call_tool(
            "get_flows",
            json!({"address": WALLET, "payment": value, "quote_id": quote_of(&challenge)}),
        )
        .await;
    assert_eq!(
        flows["structuredContent"]["payment"]["settled"], true,
        "{flows}"
    );
    assert_eq!(paid.sent(), 2);
}

#[tokio::test]
async fn a_send_the_node_refuses_is_settlement_failed_and_the_chain_decides_the_row() {
    let (paid, clock, challenge) = scanned_at(|_| {}).await;
    let quote_id = quote_of(&challenge);
    let p = paid.payment_for(&challenge["structuredContent"]["x402"]);
    *paid.chain.shared.send_error.lock().unwrap() =
        Some(json!({"code": -32002, "message": "internal node detail at 10.0.0.7"}));
    let result = paid.read_with(&paid.build(&p), &quote_id).await;
    let sc = &result["structuredContent"];
    assert_eq!(sc["error"], "settlement_failed", "{result}");
    assert!(
        !result.to_string().contains("10.0.0.7"),
        "the node's words stay in our logs"
    );
    // The quote stays taken until the chain says the transaction cannot land.
    assert_eq!(paid.payments("pending").await, 1);
    let mut again = p.clone();
    again.blockhash = Hash::new_from_array(rand::random::<[u8; 32]>());
    *paid.chain.shared.send_error.lock().unwrap() = None;
    let second = paid.read_with(&paid.build(&again), &quote_id).await;
    assert_eq!(
        second["structuredContent"]["error"], "quote_already_paid",
        "{second}"
    );
    // Its blockhash expires unseen: recovery fails it and frees the quote.
    paid.chain
        .shared
        .stale_blockhashes
        .lock()
        .unwrap()
        .insert(p.blockhash.to_string());
    clock.advance_ms(200_000);
    let pass = server::worker::maintenance_pass(&paid.app.state)
        .await
        .unwrap();
    assert_eq!(pass.payments_recovered, 1);
    assert_eq!(paid.payments("failed").await, 1);
    let third = paid.read_with(&paid.build(&again), &quote_id).await;
    assert_eq!(
        third["structuredContent"]["payment"]["settled"], true,
        "{third}"
    );
}

#[tokio::test]
async fn a_payer_with_a_payment_in_flight_cannot_start_another() {
    let (paid, _clock, first) = scanned_at(|c| c.x402.confirm_timeout_secs = 1).await;
    let second = paid.read_challenge().await;
    paid.chain
        .shared
        .hold_sends
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let pending = paid
        .read_with(
            &paid.build(&paid.payment_for(&first["structuredContent"]["x402"])),
            &quote_of(&first),
        )
        .await;
    assert_eq!(
        pending["structuredContent"]["code"], "unavailable",
        "{pending}"
    );
    let refused = paid
        .read_with(
            &paid.build(&paid.payment_for(&second["structuredContent"]["x402"])),
            &quote_of(&second),
        )
        .await;
    assert_eq!(
        refused["structuredContent"]["error"], "payer_has_pending_payment",
        "{refused}"
    );
    assert_eq!(
        paid.sent(),
        2,
        "the scan's and the first read's; the second never left"
    );
}

#[tokio::test]
async fn a_compute_unit_price_without_a_limit_is_refused() {
    refused(|_, p| p.cu_limit = None, "unexpected_instruction").await;
}

#[tokio::test]
async fn a_replay_long_after_settlement_reveals_no_receipt_even_while_the_quote_lives() {
    let (paid, clock, challenge) = scanned_at(|_| {}).await;
    let quote_id = quote_of(&challenge);
    let value = paid.build(&paid.payment_for(&challenge["structuredContent"]["x402"]));
    let first = paid.read_with(&value, &quote_id).await;
    assert_eq!(first["isError"], false, "{first}");
    clock.advance_ms(121_000);
    let later = paid.read_with(&value, &quote_id).await;
    assert_eq!(
        later["structuredContent"]["error"], "payment_already_settled",
        "{later}"
    );
    assert_eq!(paid.sent(), 2);
}

#[tokio::test]
async fn anonymous_rest_calls_share_the_rate_limit() {
    let paid = paid_app(|c| {
        c.rate_limit.anon_rps = 1.0;
        c.rate_limit.anon_burst = Some(2);
    })
    .await;
    let url = paid.app.url(&format!("/v1/wallets/{WALLET}/ledger"));
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(paid.app.client.get(&url).send().await.unwrap().status());
    }
    assert_eq!(
        statuses.last(),
        Some(&StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
}
