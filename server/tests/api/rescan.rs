//! Versioned readings (docs/ledger.md, "Decoder versions"): a wallet whose
//! stored legs an older decoder read gets the current decoder's legs on its
//! next scan, derived from the stored transaction views with no
//! `getTransaction` at all, or, for transactions stored before views were
//! kept, fetched again at the RPC cost its quote showed; and a transaction
//! the provider cannot serve again keeps its old legs.

use std::time::Duration;

use serde_json::{Value, json};
use server::{
    ledger::{self, DECODER_VERSION, Leg, OperationType, TxView},
    store::{LedgerQuery, LegRow, TransactionLegs},
};

use crate::{
    helpers::TestApp,
    scans::{WALLET, app, fixtures, scan_to_end, shared},
};

/// The wallet's whole stored ledger, newest first.
async fn ledger_rows(app: &TestApp) -> Vec<LegRow> {
    app.state
        .store()
        .ledger_page(&LedgerQuery {
            wallet: WALLET.to_owned(),
            limit: 1000,
            ..LedgerQuery::default()
        })
        .await
        .unwrap()
}

/// What an older decoder made of a transaction, standing in for readings
/// that have changed since: no position, venue or router, and every
/// movement a plain transfer by its sign (no fee, rent or trade told apart).
fn older_reading(legs: &[Leg]) -> Vec<Leg> {
    legs.iter()
        .map(|leg| {
            let mut old = leg.clone();
            old.position = None;
            old.venue = None;
            old.router = None;
            old.operation_type = if old.amount > 0 {
                OperationType::TransferIn
            } else {
                OperationType::TransferOut
            };
            old
        })
        .collect()
}

/// Put the older decoder's legs of every recorded transaction in place of
/// the scan's, recorded as read by version 0 (before versions existed).
async fn read_by_older_decoder(app: &TestApp) {
    let views: Vec<TxView> = fixtures()
        .iter()
        .map(|t| TxView::parse(t).unwrap())
        .collect();
    let legs: Vec<Vec<Leg>> = views
        .iter()
        .map(|v| older_reading(&ledger::legs(v, WALLET)))
        .collect();
    let batch: Vec<TransactionLegs<'_>> = views
        .iter()
        .zip(&legs)
        .map(|(v, legs)| TransactionLegs::new(v, legs))
        .collect();
    app.state
        .store()
        .replace_legs(WALLET, &batch, 0)
        .await
        .unwrap();
}

async fn quote_of(app: &TestApp, scope: &str) -> Value {
    let q = app
        .call_tool("quote_wallet", json!({"address": WALLET, "scope": scope}))
        .await;
    assert_eq!(q["isError"], false, "{q}");
    q
}

#[tokio::test]
async fn a_wallet_read_by_an_older_decoder_reads_the_new_legs_after_a_scan_with_no_transaction_fetched()
 {
    let (app, stand_in) = app(shared(0, Duration::ZERO), None).await;
    let first = scan_to_end(&app, "full").await;
    assert_eq!(first["status"], "completed", "{first}");
    let current = ledger_rows(&app).await;
    assert!(
        current
            .iter()
            .any(|r| !r.operation_type.starts_with("transfer_")),
        "the history holds fees and more, which the older decoder read as transfers"
    );
    let txs = fixtures().len();

    read_by_older_decoder(&app).await;
    let old = ledger_rows(&app).await;
    assert_ne!(old, current);
    assert!(
        old.iter()
            .all(|r| r.operation_type.starts_with("transfer_"))
    );

    // The quote says what the scan derives again, and that it costs no
    // RPC request: every transaction's view was kept by the first scan.
    let q = quote_of(&app, "incremental").await;
    assert_eq!(
        q["structuredContent"]["rederive"],
        json!({"transactions": txs, "from_stored_views": txs, "refetched": 0, "rpc_credits": 0}),
        "{q}"
    );
    let text = q["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "It derives again the legs of {txs} transactions an older decoder read: {txs} from \
             stored views, 0 fetched again (0 getTransaction requests)."
        )),
        "{text}"
    );

    let fetched_before = stand_in.shared.count("getTransaction");
    let job = scan_to_end(&app, "incremental").await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(
        stand_in.shared.count("getTransaction"),
        fetched_before,
        "derived from stored views: no getTransaction"
    );
    // Progress in get_job's own counters: every transaction read again.
    assert_eq!(job["progress"]["transactions_fetched"], txs);
    assert_eq!(job["progress"]["transactions_missing"], 0);
    assert_eq!(job["progress"]["legs_written"], current.len());
    assert_eq!(
        ledger_rows(&app).await,
        current,
        "the current decoder's legs"
    );

    // Nothing is left to derive again, and the quote says nothing of it.
    let q = quote_of(&app, "incremental").await;
    assert!(q["structuredContent"].get("rederive").is_none(), "{q}");
    let again = scan_to_end(&app, "incremental").await;
    assert_eq!(again["progress"]["transactions_fetched"], 0);
    assert_eq!(
        app.state
            .store()
            .stale_counts(WALLET, DECODER_VERSION)
            .await
            .unwrap()
            .transactions,
        0
    );
    app.stop().await;
}

#[tokio::test]
async fn transactions_stored_without_a_view_are_fetched_again_at_the_cost_the_quote_showed() {
    let (app, stand_in) = app(shared(0, Duration::ZERO), None).await;
    scan_to_end(&app, "full").await;
    let current = ledger_rows(&app).await;
    let txs = fixtures();
    let signatures: Vec<String> = txs
        .iter()
        .map(|t| {
            t["result"]["transaction"]["signatures"][0]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    // Scanned before views were kept: older legs, no view.
    read_by_older_decoder(&app).await;
    let store = app.state.store();
    assert_eq!(store.forget_views(&signatures[..5]).await.unwrap(), 5);

    let q = quote_of(&app, "refresh").await;
    assert_eq!(
        q["structuredContent"]["rederive"],
        json!({"transactions": txs.len(), "from_stored_views": txs.len() - 5, "refetched": 5, "rpc_credits": 5}),
        "{q}"
    );
    let fetched_before = stand_in.shared.count("getTransaction");
    let job = scan_to_end(&app, "refresh").await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(
        stand_in.shared.count("getTransaction") - fetched_before,
        5,
        "exactly the quote's rpc_credits"
    );
    assert_eq!(ledger_rows(&app).await, current);
    // The refetched transactions' views are kept now.
    let (bytes, views) = store.view_bytes(WALLET).await.unwrap();
    assert_eq!(views, txs.len() as i64);
    assert!(bytes > 0);
    app.stop().await;
}

#[tokio::test]
async fn a_transaction_the_provider_cannot_serve_again_keeps_its_old_legs() {
    let (app, stand_in) = app(shared(0, Duration::ZERO), None).await;
    scan_to_end(&app, "full").await;
    let txs = fixtures();
    let gone = txs[0]["result"]["transaction"]["signatures"][0]
        .as_str()
        .unwrap()
        .to_owned();
    read_by_older_decoder(&app).await;
    let old_of_gone: Vec<LegRow> = ledger_rows(&app)
        .await
        .into_iter()
        .filter(|r| r.signature == gone)
        .collect();
    let store = app.state.store();
    store
        .forget_views(std::slice::from_ref(&gone))
        .await
        .unwrap();
    stand_in
        .shared
        .unserved_transactions
        .lock()
        .unwrap()
        .insert(gone.clone());

    let job = scan_to_end(&app, "incremental").await;
    assert_eq!(job["status"], "partial", "{job}");
    assert_eq!(job["progress"]["transactions_missing"], 1);
    let kept: Vec<LegRow> = ledger_rows(&app)
        .await
        .into_iter()
        .filter(|r| r.signature == gone)
        .collect();
    assert_eq!(
        kept, old_of_gone,
        "its old legs stay until new ones are read"
    );
    let stale = store.stale_counts(WALLET, DECODER_VERSION).await.unwrap();
    assert_eq!((stale.transactions, stale.without_view), (1, 1));
    app.stop().await;
}
