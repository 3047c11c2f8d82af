//! scan_wallet, the worker and get_job, end to end against the RPC
//! stand-in serving the recorded mainnet transactions.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use server::{
    clock::ManualClock,
    ledger::{self, TxView},
};

use crate::{
    helpers::{Options, TestApp, relaxed_limits, spawn_with},
    standin::{self, Shared},
};

pub const WALLET: &str = "71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6";

pub fn fixtures() -> Vec<Value> {
    let dir = crate::recorded::staketaxcsv().join("fetch_tx");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap()
        })
        .collect()
}

/// The stand-in with every recorded transaction as the wallet's history
/// (newest first), plus `missing` signatures it cannot serve.
pub fn shared(missing: usize, delay: Duration) -> Shared {
    let mut txs = fixtures();
    txs.sort_by_key(|t| std::cmp::Reverse(t["result"]["slot"].as_u64().unwrap()));
    let mut history: Vec<Value> = txs
        .iter()
        .map(|t| {
            let r = &t["result"];
            json!({"signature": r["transaction"]["signatures"][0], "slot": r["slot"], "blockTime": r["blockTime"], "err": null, "memo": null})
        })
        .collect();
    for i in 0..missing {
        history.push(json!({"signature": format!("gone{i}"), "slot": 1, "blockTime": null, "err": null, "memo": null}));
    }
    Shared {
        history: [(WALLET.to_owned(), history)].into(),
        transactions: txs
            .into_iter()
            .map(|t| {
                (
                    t["result"]["transaction"]["signatures"][0]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                    t,
                )
            })
            .collect(),
        delay,
        ..Shared::default()
    }
}

pub async fn app(shared: Shared, clock: Option<ManualClock>) -> (TestApp, standin::StandIn) {
    app_with_encoding(shared, clock, server::solana::TxEncoding::Json).await
}

pub async fn app_with_encoding(
    shared: Shared,
    clock: Option<ManualClock>,
    encoding: server::solana::TxEncoding,
) -> (TestApp, standin::StandIn) {
    let stand_in = standin::start(shared).await;
    let url = stand_in.url.clone();
    let mut options = Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.solana.tx_encoding = encoding;
            c.solana.retry_base_ms = 1;
            c.solana.batch_size = 4;
            c.worker.in_process = true;
            c.worker.poll_ms = 20;
        }),
        ..Options::default()
    };
    if let Some(clock) = clock {
        options.clock = std::sync::Arc::new(clock);
    }
    (spawn_with(options).await, stand_in)
}

pub async fn quote(app: &TestApp, scope: &str) -> String {
    let q = app
        .call_tool("quote_wallet", json!({"address": WALLET, "scope": scope}))
        .await;
    q["structuredContent"]["quote_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

pub async fn wait_done(app: &TestApp, job_id: &str) -> Value {
    for _ in 0..400 {
        let job = app.call_tool("get_job", json!({"job_id": job_id})).await;
        let job = job["structuredContent"].clone();
        if job["status"] != "running" {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("job {job_id} did not finish");
}

/// Quote `scope`, start the scan over MCP and wait for it to end; the job.
pub async fn scan_to_end(app: &TestApp, scope: &str) -> Value {
    let started = app
        .call_tool("scan_wallet", json!({"quote_id": quote(app, scope).await}))
        .await;
    assert_eq!(started["isError"], false, "{started}");
    wait_done(
        app,
        started["structuredContent"]["job_id"].as_str().unwrap(),
    )
    .await
}

#[tokio::test]
async fn a_scan_runs_to_completion_and_writes_conserving_legs() {
    let (app, _stand_in) = app(shared(0, Duration::ZERO), None).await;
    let quote_id = quote(&app, "full").await;
    let started = app
        .call_tool("scan_wallet", json!({"quote_id": quote_id}))
        .await;
    assert_eq!(started["isError"], false, "{started}");
    let job_id = started["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(server::ids::is_id("job_", &job_id));
    assert_eq!(started["structuredContent"]["status"], "running");

    let job = wait_done(&app, &job_id).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["quote"]["quote_id"], quote_id.as_str());
    let txs = fixtures();
    assert_eq!(job["progress"]["signatures_listed"], txs.len());
    assert_eq!(job["progress"]["transactions_fetched"], txs.len());
    assert!(job["rpc_cost"]["calls"].as_i64().unwrap() >= 2);
    assert!(job["rpc_cost"]["credits"].as_i64().unwrap() > txs.len() as i64);

    // The stored legs are exactly what the decoder makes of each transaction.
    let expected: usize = txs
        .iter()
        .map(|t| ledger::legs(&TxView::parse(t).unwrap(), WALLET).len())
        .sum();
    assert!(expected > 0);
    assert_eq!(job["progress"]["legs_written"], expected);
    assert_eq!(
        app.state.store().count_legs(WALLET).await.unwrap(),
        expected as i64
    );

    // Programs the registry does not know are listed with how many of the
    // scanned transactions ran each, most first.
    let mut unknown: std::collections::BTreeMap<String, i64> = Default::default();
    for t in &txs {
        for program in ledger::protocols::unknown_programs(&TxView::parse(t).unwrap()) {
            *unknown.entry(program).or_insert(0) += 1;
        }
    }
    let mut want: Vec<(String, i64)> = unknown.into_iter().collect();
    want.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let listed: Vec<(String, i64)> = job["unknown_programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["program"].as_str().unwrap().to_owned(),
                p["transactions"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed, want, "{job}");
    app.stop().await;
}

#[tokio::test]
async fn a_second_scan_while_one_runs_is_job_already_running() {
    let (app, _stand_in) = app(shared(0, Duration::from_millis(150)), None).await;
    let first = quote(&app, "full").await;
    let second = quote(&app, "refresh").await;
    let started = app
        .call_tool("scan_wallet", json!({"quote_id": first}))
        .await;
    let job_id = started["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = app
        .call_tool("scan_wallet", json!({"quote_id": second}))
        .await;
    assert_eq!(refused["isError"], true);
    assert_eq!(refused["structuredContent"]["code"], "job_already_running");
    assert_eq!(refused["structuredContent"]["job"], job_id.as_str());
    let rest = app
        .client
        .post(app.url("/v1/scans"))
        .json(&json!({"quote_id": second}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::CONFLICT);
    wait_done(&app, &job_id).await;
    app.stop().await;
}

#[tokio::test]
async fn a_rescan_fetches_only_what_is_missing() {
    let (app, stand_in) = app(shared(0, Duration::ZERO), None).await;
    let legs_before = scan_to_end(&app, "full").await["progress"]["legs_written"]
        .as_i64()
        .unwrap();
    let fetched_before = stand_in.shared.encodings.lock().unwrap().len();
    let job = scan_to_end(&app, "refresh").await;
    assert_eq!(job["status"], "completed");
    assert_eq!(job["progress"]["transactions_fetched"], 0);
    assert_eq!(job["progress"]["legs_written"], 0);
    assert_eq!(
        stand_in.shared.encodings.lock().unwrap().len(),
        fetched_before
    );
    assert_eq!(
        app.state.store().count_legs(WALLET).await.unwrap(),
        legs_before
    );
    app.stop().await;
}

#[tokio::test]
async fn transactions_the_node_lacks_make_the_scan_partial() {
    let (app, _stand_in) = app(shared(2, Duration::ZERO), None).await;
    let job = scan_to_end(&app, "full").await;
    assert_eq!(job["status"], "partial");
    assert_eq!(job["progress"]["transactions_missing"], 2);
    assert!(job["error"].as_str().unwrap().contains("2 transactions"));
    app.stop().await;
}

#[tokio::test]
async fn quotes_must_exist_be_live_and_price_a_scan() {
    let clock = ManualClock::new(1_800_000_000_000);
    let (app, _stand_in) = app(shared(0, Duration::ZERO), Some(clock.clone())).await;
    let unknown = app
        .call_tool(
            "scan_wallet",
            json!({"quote_id": "q_01JAAAAAAAAAAAAAAAAAAAAAAA"}),
        )
        .await;
    assert_eq!(unknown["structuredContent"]["code"], "quote_not_found");
    let read = app
        .call_tool(
            "scan_wallet",
            json!({"quote_id": quote(&app, "read").await}),
        )
        .await;
    assert_eq!(read["structuredContent"]["code"], "wrong_quote");
    let stale = quote(&app, "full").await;
    clock.advance_ms(15 * 60 * 1000 + 1);
    let expired = app
        .call_tool("scan_wallet", json!({"quote_id": stale}))
        .await;
    assert_eq!(expired["structuredContent"]["code"], "quote_expired");
    let rest = app
        .client
        .post(app.url("/v1/scans"))
        .json(&json!({"quote_id": stale}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::GONE);
    app.stop().await;
}

/// A credit top-up's quote (its scope `topup`, its address an account)
/// given to scan_wallet is the guide's `wrong_quote`, not an internal
/// error: it is a real quote, for something else.
#[tokio::test]
async fn a_top_up_quote_given_to_scan_wallet_is_wrong_quote() {
    let (app, _stand_in) = app(shared(0, Duration::ZERO), None).await;
    let now = app.state.now_ms();
    let account = server::accounts::create_account(app.state.store(), now, "topup")
        .await
        .unwrap();
    let topup = server::store::QuoteRecord {
        id: "q_01JTOPUPAAAAAAAAAAAAAAAAAA".to_owned(),
        address: account.as_str().to_owned(),
        scope: server::payments::Scope::TopUp.as_str().to_owned(),
        tier: server::payments::Scope::TopUp.as_str().to_owned(),
        price_micros: 5_000_000,
        signatures: None,
        created_at: now,
        expires_at: now + 15 * 60 * 1000,
    };
    app.state.store().insert_quote(&topup).await.unwrap();
    let refused = app
        .call_tool("scan_wallet", json!({"quote_id": topup.id}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["structuredContent"]["code"], "wrong_quote",
        "{refused}"
    );
    let rest = app
        .client
        .post(app.url("/v1/scans"))
        .json(&json!({"quote_id": topup.id}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::BAD_REQUEST);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["code"], "wrong_quote", "{body}");
    app.stop().await;
}

#[tokio::test]
async fn get_job_hides_what_does_not_exist_and_matches_its_rest_twin() {
    let (app, _stand_in) = app(shared(0, Duration::ZERO), None).await;
    for id in [
        "job_01JAAAAAAAAAAAAAAAAAAAAAAA",
        "nope",
        "q_01JAAAAAAAAAAAAAAAAAAAAAAA",
    ] {
        let result = app.call_tool("get_job", json!({"job_id": id})).await;
        assert_eq!(result["structuredContent"]["code"], "not_found", "{id}");
        let rest = app
            .client
            .get(app.url(&format!("/v1/jobs/{id}")))
            .send()
            .await
            .unwrap();
        assert_eq!(rest.status(), StatusCode::NOT_FOUND);
    }
    let started = app
        .client
        .post(app.url("/v1/scans"))
        .json(&json!({"quote_id": quote(&app, "preview").await}))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), StatusCode::ACCEPTED);
    let started: Value = started.json().await.unwrap();
    let job_id = started["job_id"].as_str().unwrap();
    let tool = wait_done(&app, job_id).await;
    let rest: Value = app
        .client
        .get(app.url(&format!("/v1/jobs/{job_id}")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tool, rest);
    assert_eq!(rest["scope"], "preview");
    app.stop().await;
}

#[tokio::test]
async fn a_job_whose_worker_died_is_resumed_without_duplicating_legs() {
    // Worker "dead" claims the job, writes the legs of a few transactions
    // and its progress, then vanishes. After its lease runs out worker "b"
    // claims the job, re-lists the page, skips what is written and ends.
    let clock = ManualClock::new(1_800_000_000_000);
    let stand_in = standin::start(shared(0, Duration::ZERO)).await;
    let url = stand_in.url.clone();
    let app = spawn_with(Options {
        clock: std::sync::Arc::new(clock.clone()),
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.solana.batch_size = 4;
        }),
    })
    .await;
    let store = app.state.store().clone();
    let quote_id = quote(&app, "full").await;
    let job_id = server::ids::new_id("job_", app.state.now_ms());
    store
        .create_scan_job(&server::store::NewScanJob {
            id: &job_id,
            address: WALLET,
            scope: "full",
            quote_id: &quote_id,
            stop_at: None,
            account_id: None,
            now: app.state.now_ms(),
        })
        .await
        .unwrap();
    let claimed = store
        .claim_job("dead", app.state.now_ms(), 60_000)
        .await
        .unwrap()
        .expect("claimable");
    assert_eq!(claimed.id, job_id);

    let mut txs = fixtures();
    txs.sort_by_key(|t| std::cmp::Reverse(t["result"]["slot"].as_u64().unwrap()));
    let views: Vec<TxView> = txs[..5].iter().map(|t| TxView::parse(t).unwrap()).collect();
    let legs: Vec<Vec<ledger::Leg>> = views.iter().map(|v| ledger::legs(v, WALLET)).collect();
    let batch: Vec<server::store::TransactionLegs<'_>> = views
        .iter()
        .zip(&legs)
        .map(|(v, legs)| server::store::TransactionLegs::new(v, legs))
        .collect();
    let written = store.write_legs(WALLET, &batch).await.unwrap() as i64;
    let progress = server::store::JobProgress {
        phase: "scanning".into(),
        transactions_fetched: 5,
        legs_written: written,
        ..Default::default()
    };
    assert!(
        store
            .record_progress(&job_id, "dead", &progress, app.state.now_ms(), 60_000)
            .await
            .unwrap()
    );

    // While the lease holds, nobody else may take the job.
    assert!(
        !server::jobs::run_next(&app.state.runner(), "b", &|| false)
            .await
            .unwrap()
    );
    clock.advance_ms(60_001);
    assert!(
        server::jobs::run_next(&app.state.runner(), "b", &|| false)
            .await
            .unwrap()
    );
    // The dead worker's late writes are refused: its lease is gone.
    assert!(
        !store
            .record_progress(&job_id, "dead", &progress, app.state.now_ms(), 60_000)
            .await
            .unwrap()
    );

    let job =
        app.call_tool("get_job", json!({"job_id": job_id})).await["structuredContent"].clone();
    assert_eq!(job["status"], "completed", "{job}");
    let expected: i64 = txs
        .iter()
        .map(|t| ledger::legs(&TxView::parse(t).unwrap(), WALLET).len() as i64)
        .sum();
    assert_eq!(store.count_legs(WALLET).await.unwrap(), expected);
    assert_eq!(job["progress"]["legs_written"], expected);
    assert_eq!(job["progress"]["transactions_fetched"], txs.len());
    app.stop().await;
}

#[tokio::test]
async fn json_and_json_parsed_scans_give_the_same_ledger() {
    let mut ledgers = Vec::new();
    for encoding in [
        server::solana::TxEncoding::Json,
        server::solana::TxEncoding::JsonParsed,
    ] {
        let (app, stand_in) = app_with_encoding(shared(0, Duration::ZERO), None, encoding).await;
        let job = scan_to_end(&app, "full").await;
        assert_eq!(job["status"], "completed");
        let requested = stand_in.shared.encodings.lock().unwrap().clone();
        assert!(
            requested.iter().all(|e| e == encoding.as_str()),
            "{requested:?}"
        );
        let page = app
            .call_tool(
                "get_ledger",
                json!({"address": WALLET, "limit": 1000, "include_counterparties": true}),
            )
            .await;
        ledgers.push(page["structuredContent"]["entries"].clone());
        app.stop().await;
    }
    assert!(!ledgers[0].as_array().unwrap().is_empty());
    assert_eq!(ledgers[0], ledgers[1]);
}
