//! The RPC client against a local JSON-RPC stand-in serving recorded
//! mainnet answers: paging, batches and their refusal, retries, the
//! concurrency bound and cost accounting.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/encoding.rs"]
mod encoding_support;
#[path = "../support/recorded.rs"]
mod recorded;
#[path = "../support/rpc_standin.rs"]
mod standin;

use std::{path::PathBuf, sync::atomic::Ordering, time::Duration};

use serde_json::{Value, json};
use server::solana::{RpcClient, RpcCost, RpcError, TxEncoding, rpc::RpcSettings};
use standin::{Fault, Shared};

const WALLET: &str = "4kLALtynrmd6pU2LkGXZCmUaMDfsnVixs7SkLjPKNJQG";

fn fixtures() -> PathBuf {
    recorded::staketaxcsv()
}

fn recorded_transactions() -> std::collections::HashMap<String, Value> {
    std::fs::read_dir(fixtures().join("fetch_tx"))
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            (name, value)
        })
        .collect()
}

/// The wallet's recorded 1000-entry signature page (real mainnet data).
fn recorded_history() -> Vec<Value> {
    let path = fixtures().join(format!("_get_txids/{WALLET}-1000-.json"));
    let page: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    page["result"].as_array().unwrap().clone()
}

fn synthetic_history(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"signature": format!("sig{:06}", n - i), "slot": 1_000_000 - i, "blockTime": 1_700_000_000 - i as i64, "err": null, "memo": null}))
        .collect()
}

fn settings(url: &str) -> RpcSettings {
    RpcSettings {
        url: url.to_owned(),
        encoding: TxEncoding::Json,
        max_concurrency: 4,
        batch_size: 5,
        max_retries: 3,
        retry_base: Duration::from_millis(5),
        timeout: Duration::from_secs(10),
    }
}

#[tokio::test]
async fn recorded_signature_pages_parse() {
    let history = recorded_history();
    assert!(!history.is_empty());
    let stand_in = standin::start(Shared {
        history: [(WALLET.to_owned(), history.clone())].into(),
        ..Shared::default()
    })
    .await;
    let client = RpcClient::new(settings(&stand_in.url)).unwrap();
    let cost = RpcCost::default();
    let page = client
        .signatures(WALLET, None, None, 1000, &cost)
        .await
        .unwrap();
    assert_eq!(page.len(), history.len());
    assert_eq!(page[0].signature, history[0]["signature"].as_str().unwrap());
    assert_eq!(
        page.iter().filter(|s| s.err).count(),
        history.iter().filter(|h| !h["err"].is_null()).count()
    );
    assert!(
        page.iter().any(|s| s.memo.is_some()),
        "real pages carry memos"
    );
    assert_eq!((cost.calls(), cost.credits()), (1, 1));
}

#[tokio::test]
async fn pages_walk_back_with_before_and_stop_at_until() {
    let stand_in = standin::start(Shared {
        history: [(WALLET.to_owned(), synthetic_history(2500))].into(),
        ..Shared::default()
    })
    .await;
    let client = RpcClient::new(settings(&stand_in.url)).unwrap();
    let cost = RpcCost::default();
    let mut before: Option<String> = None;
    let mut all = Vec::new();
    loop {
        let page = client
            .signatures(WALLET, before.as_deref(), None, 1000, &cost)
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        before = page.last().map(|s| s.signature.clone());
        all.extend(page);
    }
    assert_eq!(all.len(), 2500);
    assert_eq!(cost.calls(), 4, "1000 + 1000 + 500 + the empty page");
    let mut unique: Vec<_> = all.iter().map(|s| &s.signature).collect();
    unique.dedup();
    assert_eq!(unique.len(), 2500);

    // Incremental: only what is newer than a known signature.
    let newer = client
        .signatures(WALLET, None, Some("sig002490"), 1000, &cost)
        .await
        .unwrap();
    assert_eq!(newer.len(), 10);
}

#[tokio::test]
async fn transactions_come_back_in_order_in_batches() {
    let recorded = recorded_transactions();
    let stand_in = standin::start(Shared {
        transactions: recorded.clone(),
        ..Shared::default()
    })
    .await;
    let client = RpcClient::new(settings(&stand_in.url)).unwrap();
    let cost = RpcCost::default();
    let mut sigs: Vec<String> = recorded.keys().cloned().collect();
    sigs.sort();
    sigs.push("missing-signature".to_owned());
    let got = client.transactions(&sigs, &cost).await.unwrap();
    assert_eq!(got.len(), sigs.len());
    for (sig, tx) in sigs.iter().zip(&got) {
        match tx {
            Some(tx) => assert_eq!(tx["transaction"]["signatures"][0], sig.as_str()),
            None => assert_eq!(sig, "missing-signature"),
        }
    }
    // 20 requests in batches of 5: 4 HTTP calls, 20 credits.
    assert_eq!(cost.calls(), 4);
    assert_eq!(cost.credits(), 20);
    let encodings = stand_in.shared.encodings.lock().unwrap().clone();
    assert!(encodings.iter().all(|e| e == "json"), "{encodings:?}");
}

#[tokio::test]
async fn an_endpoint_that_refuses_batches_gets_single_calls() {
    let recorded = recorded_transactions();
    let stand_in = standin::start(Shared {
        transactions: recorded.clone(),
        refuse_batches: true,
        ..Shared::default()
    })
    .await;
    let mut s = settings(&stand_in.url);
    s.encoding = TxEncoding::JsonParsed;
    let client = RpcClient::new(s).unwrap();
    let cost = RpcCost::default();
    let sigs: Vec<String> = recorded.keys().cloned().collect();
    let got = client.transactions(&sigs, &cost).await.unwrap();
    assert!(got.iter().all(Option::is_some));
    // One refused batch, then one call per signature; later chunks skip the batch.
    assert_eq!(cost.calls(), 1 + sigs.len() as u64);
    let encodings = stand_in.shared.encodings.lock().unwrap().clone();
    assert!(encodings.iter().all(|e| e == "jsonParsed"), "{encodings:?}");
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    let stand_in = standin::start(Shared {
        history: [(WALLET.to_owned(), synthetic_history(3))].into(),
        faults: std::sync::Mutex::new(
            [
                Fault::TooMany {
                    retry_after_secs: 1,
                },
                Fault::ServerError,
                Fault::ServerError,
            ]
            .into(),
        ),
        ..Shared::default()
    })
    .await;
    let client = RpcClient::new(settings(&stand_in.url)).unwrap();
    let cost = RpcCost::default();
    let started = std::time::Instant::now();
    let page = client
        .signatures(WALLET, None, None, 10, &cost)
        .await
        .unwrap();
    assert_eq!(page.len(), 3);
    assert_eq!(cost.calls(), 4, "three refusals, then the answer");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was honoured"
    );
}

#[tokio::test]
async fn retries_end() {
    let stand_in = standin::start(Shared {
        faults: std::sync::Mutex::new(vec![Fault::ServerError; 10].into()),
        ..Shared::default()
    })
    .await;
    let client = RpcClient::new(settings(&stand_in.url)).unwrap();
    let cost = RpcCost::default();
    let err = client
        .signatures(WALLET, None, None, 10, &cost)
        .await
        .unwrap_err();
    assert!(
        matches!(err, RpcError::Exhausted { attempts: 4, .. }),
        "{err}"
    );
    assert_eq!(cost.calls(), 4);
}

#[tokio::test]
async fn concurrency_is_bounded() {
    let recorded = recorded_transactions();
    let stand_in = standin::start(Shared {
        transactions: recorded.clone(),
        refuse_batches: true,
        delay: Duration::from_millis(20),
        ..Shared::default()
    })
    .await;
    let mut s = settings(&stand_in.url);
    s.max_concurrency = 3;
    s.batch_size = 19;
    let client = RpcClient::new(s).unwrap();
    let sigs: Vec<String> = recorded.keys().cloned().collect();
    client
        .transactions(&sigs, &RpcCost::default())
        .await
        .unwrap();
    let max = stand_in.shared.max_in_flight.load(Ordering::SeqCst);
    assert!(max <= 3, "at most 3 in flight, saw {max}");
    assert!(max >= 2, "calls do overlap: {max}");
}
