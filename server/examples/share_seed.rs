//! Seeds a database for the Chromium share-page suite
//! (`end2end/tests/share.test.mjs`): the synthetic scanned wallet the
//! benchmarks use (`benches/support::seed_wallet`: legs over two years and
//! the SOL price series, so every chart has something to draw), an account,
//! and a live share link to the wallet, whose token it writes to a file.
//!
//!   cargo run -p server --example share_seed -- DATABASE_URL TOKEN_FILE [LEGS]
//!
//! end2end/run.sh runs it on the database the server is about to serve.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/support/mod.rs"]
#[allow(dead_code)]
mod support;

use server::{
    ledger::{Counterparty, CounterpartyKind, Direction, Leg, OperationType},
    share::ShareToken,
    store::{ShareLinkRecord, TransactionLegs},
};

/// Transfers with named counterparties over the last days (the synthetic
/// wallet's own legs have none), so the flow graph has edges to draw.
async fn counterparty_transfers(store: &server::store::Store, now: i64) {
    let peers = [
        "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
        "5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1",
        "H8sMJSCQxfKiFTCfDR3DUMLPwcRbM61LGFJ8N4dK3WjS",
        "2ojv9BAiHUrvsm9gxDe7fJSzbNZSJcxZvf8dqmWGHG8S",
    ];
    for (i, peer) in peers.iter().enumerate() {
        let i64_i = i64::try_from(i).unwrap();
        let signature = format!("sharee2e{i:04}");
        let t = now - 86_400 * (3 + i64_i);
        let incoming = i % 2 == 0;
        let leg = Leg {
            signature: signature.clone(),
            slot: 900_000_000 + u64::try_from(i).unwrap(),
            block_time: Some(t),
            index: 0,
            operation_type: if incoming {
                OperationType::TransferIn
            } else {
                OperationType::TransferOut
            },
            mint: "sol".to_owned(),
            amount: if incoming { 1 } else { -1 } * 2_000_000_000 * (i128::from(i64_i) + 1),
            decimals: 9,
            counterparties: vec![Counterparty {
                address: (*peer).to_owned(),
                direction: if incoming {
                    Direction::In
                } else {
                    Direction::Out
                },
                kind: CounterpartyKind::Wallet,
            }],
            position: None,
            venue: None,
            router: None,
        };
        store
            .write_legs(
                support::WALLET,
                &[TransactionLegs {
                    signature: &signature,
                    slot: leg.slot,
                    block_time: Some(t),
                    failed: false,
                    legs: std::slice::from_ref(&leg),
                }],
            )
            .await
            .unwrap();
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let url = args.next().expect("DATABASE_URL");
    let out = args.next().expect("TOKEN_FILE");
    let legs: usize = args.next().map_or(2000, |n| n.parse().expect("LEGS"));
    let store = server::store::Store::open(&url, &server::config::DatabaseConfig::default())
        .await
        .expect("the database opens");
    let now_ms = chrono::Utc::now().timestamp_millis();
    support::seed_wallet(&store, legs, now_ms / 1000).await;
    counterparty_transfers(&store, now_ms / 1000).await;
    let account = server::accounts::create_account(&store, now_ms, "share e2e")
        .await
        .unwrap();
    let token = ShareToken::generate();
    let inserted = store
        .insert_share_link(
            &ShareLinkRecord {
                id: server::ids::new_id("snap_", now_ms),
                token_hash: token.hash(),
                hint: token.as_str().chars().take(6).collect(),
                account_id: account.as_str().to_owned(),
                wallet: support::WALLET.to_owned(),
                chart_range: "90d".to_owned(),
                denominate: "usd".to_owned(),
                created_at: now_ms,
                expires_at: now_ms + 86_400_000,
                revoked_at: None,
            },
            20,
            now_ms,
        )
        .await
        .unwrap();
    assert!(inserted);
    std::fs::write(&out, token.as_str()).unwrap();
    println!("seeded {legs} legs of {} and a share link", support::WALLET);
}
