//! Payment verification on one core: how much the offline checks of an
//! x402 payment (base64 and JSON unwrapping, transaction decoding, the
//! layout rules, the payer's ed25519 signature) cost over the one thing no
//! verifier can skip, the signature check itself, run in the same process
//! as the baseline. Run: `cargo bench -p server --bench payments`
//! (`BENCH_SECS`, default 3).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use base64::{Engine, engine::general_purpose::STANDARD};
use server::payments::{verify, x402};
use solana_hash::Hash;
use solana_instruction::{AccountMeta, Instruction};
use solana_keypair::Keypair;
use solana_message::{VersionedMessage, v0};
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;

const NETWORK: &str = "solana:bench";

fn main() {
    let secs: u64 = std::env::var("BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let (fee_payer, payer) = (Keypair::new(), Keypair::new());
    let (asset, treasury) = (Pubkey::new_unique(), Pubkey::new_unique());
    let ata = |owner: &Pubkey| {
        spl_associated_token_account_interface::address::get_associated_token_address_with_program_id(
            owner,
            &asset,
            &verify::TOKEN_PROGRAM,
        )
    };
    let mut transfer = vec![12u8];
    transfer.extend_from_slice(&20_000u64.to_le_bytes());
    transfer.push(6);
    let ixs = [
        Instruction::new_with_bytes(verify::COMPUTE_BUDGET_PROGRAM, &[2, 32, 78, 0, 0], vec![]),
        Instruction::new_with_bytes(
            verify::COMPUTE_BUDGET_PROGRAM,
            &[3, 1, 0, 0, 0, 0, 0, 0, 0],
            vec![],
        ),
        Instruction::new_with_bytes(
            verify::TOKEN_PROGRAM,
            &transfer,
            vec![
                AccountMeta::new(ata(&payer.pubkey()), false),
                AccountMeta::new_readonly(asset, false),
                AccountMeta::new(ata(&treasury), false),
                AccountMeta::new_readonly(payer.pubkey(), true),
            ],
        ),
        Instruction::new_with_bytes(verify::MEMO_PROGRAM, b"q_01JBENCHBENCHBENCHBENCHBE", vec![]),
    ];
    let message = VersionedMessage::V0(
        v0::Message::try_compile(
            &fee_payer.pubkey(),
            &ixs,
            &[],
            Hash::new_from_array([7; 32]),
        )
        .unwrap(),
    );
    let message_bytes = message.serialize();
    let signature = payer.sign_message(&message_bytes);
    let tx = VersionedTransaction {
        signatures: vec![Signature::default(), signature],
        message,
    };
    let wire = wincode::serialize(&tx).unwrap();
    let value = STANDARD.encode(
        serde_json::json!({"x402Version": 1, "scheme": "exact", "network": NETWORK,
                           "payload": {"transaction": STANDARD.encode(&wire)}})
        .to_string(),
    );
    let expected = verify::Expected {
        fee_payer: fee_payer.pubkey(),
        asset,
        decimals: 6,
        pay_to: treasury,
        amount: 20_000,
        quote_id: "q_01JBENCHBENCHBENCHBENCHBE",
        max_compute_unit_limit: 200_000,
        max_compute_unit_price: 5_000_000,
    };
    let payer_key = payer.pubkey();

    let run = |full: bool| {
        let limit = Duration::from_secs(secs);
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < limit {
            for _ in 0..100 {
                if full {
                    let parsed = x402::parse_payment(&value, NETWORK).unwrap();
                    verify::verify(&parsed.transaction, &expected).unwrap();
                } else {
                    assert!(signature.verify(payer_key.as_ref(), &message_bytes));
                }
            }
            n += 100;
        }
        n as f64 / start.elapsed().as_secs_f64()
    };
    let baseline = run(false);
    let full = run(true);
    println!("payment verification, one core, {secs} s each:");
    println!("  baseline (ed25519 verify only): {baseline:>10.0} /s");
    println!("  parse + verify (all checks):    {full:>10.0} /s");
    println!("  ratio: {:.2} of the baseline's rate", full / baseline);
}
