//! A completed scan written straight into the store, for benchmarks that
//! need a scanned wallet of a chosen shape without a scan: the quote, the
//! job (created, claimed, finished) and the legs, 1,000 transactions to a
//! write.

use server::{
    ledger::Leg,
    store::{QuoteRecord, Store, TransactionLegs},
};

/// One transaction's legs: signature, block time, legs.
pub type Transaction = (String, i64, Vec<Leg>);

/// Record a completed full scan of `wallet` at `now_ms` holding
/// `transactions`; a transaction's slot is its first leg's.
pub async fn completed_scan(
    store: &Store,
    wallet: &str,
    now_ms: i64,
    transactions: impl IntoIterator<Item = Transaction>,
) {
    store
        .insert_quote(&QuoteRecord {
            id: "q_bench".into(),
            address: wallet.into(),
            scope: "full".into(),
            tier: "whale".into(),
            price_micros: 0,
            signatures: None,
            created_at: now_ms,
            expires_at: now_ms + 60_000,
        })
        .await
        .unwrap();
    store
        .create_scan_job(&server::store::NewScanJob {
            id: "job_bench",
            address: wallet,
            scope: "full",
            quote_id: "q_bench",
            stop_at: None,
            account_id: None,
            now: now_ms,
        })
        .await
        .unwrap();
    store
        .claim_job("bench", now_ms, 60_000)
        .await
        .unwrap()
        .unwrap();
    let mut batch: Vec<Transaction> = Vec::new();
    for tx in transactions {
        batch.push(tx);
        if batch.len() == 1000 {
            write(store, wallet, &batch).await;
            batch.clear();
        }
    }
    write(store, wallet, &batch).await;
    store
        .finish_job("job_bench", "bench", "completed", None, now_ms)
        .await
        .unwrap();
}

async fn write(store: &Store, wallet: &str, batch: &[Transaction]) {
    let txs: Vec<TransactionLegs<'_>> = batch
        .iter()
        .map(|(signature, t, legs)| TransactionLegs {
            signature,
            slot: legs.first().map_or(0, |l| l.slot),
            block_time: Some(*t),
            failed: false,
            legs,
        })
        .collect();
    if !txs.is_empty() {
        store.write_legs(wallet, &txs).await.unwrap();
    }
}
