//! Decode-and-legs throughput over the recorded mainnet transactions, on
//! one core, from each form a transaction reaches the decoder in: the JSON
//! text a provider answers (`jsonParsed` as recorded, and re-encoded as
//! `json`, the default encoding), and the stored view a rescan reads
//! (`ledger::stored`, encoded from either). Each row reads the form into a
//! `TxView` and computes the fee payer's legs, as a scan or a rescan does
//! per transaction; the last row is the decoder alone on read views. All
//! rows run in this one process, so their ratios compare like with like.
//! Run: `taskset -c 0 cargo bench -p server --bench decode` (`BENCH_SECS`,
//! default 5).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

#[path = "../tests/support/encoding.rs"]
mod encoding;

use std::time::{Duration, Instant};

use server::ledger::{self, TxView, stored};

/// Transactions a second of `step` over `inputs`, for `limit`.
fn measure<T>(inputs: &[T], limit: Duration, step: impl Fn(&T) -> usize) -> f64 {
    let start = Instant::now();
    let mut txs = 0u64;
    let mut legs = 0usize;
    while start.elapsed() < limit {
        for input in inputs {
            legs += step(input);
            txs += 1;
        }
    }
    std::hint::black_box(legs);
    txs as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let dir = support::recorded::staketaxcsv().join("fetch_tx");
    let parsed_texts: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| std::fs::read_to_string(e.expect("entry").path()).expect("read"))
        .collect();
    let values: Vec<serde_json::Value> = parsed_texts
        .iter()
        .map(|t| serde_json::from_str(t).expect("json"))
        .collect();
    let json_texts: Vec<String> = values
        .iter()
        .map(|v| serde_json::to_string(&encoding::to_json_encoding(v)).expect("json"))
        .collect();
    let stored_parsed: Vec<Vec<u8>> = values
        .iter()
        .map(|v| stored::encode(v).expect("view"))
        .collect();
    let stored_json: Vec<Vec<u8>> = json_texts
        .iter()
        .map(|t| stored::encode(&serde_json::from_str(t).expect("json")).expect("view"))
        .collect();
    let views: Vec<TxView> = values
        .iter()
        .map(|v| TxView::parse(v).expect("tx"))
        .collect();
    let secs: u64 = std::env::var("BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let limit = Duration::from_secs(secs);

    let from_text = |text: &String| {
        let value: serde_json::Value = serde_json::from_str(text).expect("json");
        let view = TxView::parse(&value).expect("tx");
        ledger::legs(&view, view.fee_payer().expect("payer")).len()
    };
    let from_view = |bytes: &Vec<u8>| {
        let view = stored::decode(bytes).expect("view");
        ledger::legs(&view, view.fee_payer().expect("payer")).len()
    };
    let read_only = |bytes: &Vec<u8>| stored::decode(bytes).expect("view").ops.len();
    let legs_only = |view: &TxView| ledger::legs(view, view.fee_payer().expect("payer")).len();

    // Warm-up, then measure.
    let _ = measure(&parsed_texts, Duration::from_millis(500), from_text);
    let rows = [
        (
            "JSON text (jsonParsed) -> TxView -> legs",
            measure(&parsed_texts, limit, from_text),
        ),
        (
            "JSON text (json) -> TxView -> legs",
            measure(&json_texts, limit, from_text),
        ),
        (
            "stored view (from jsonParsed) -> TxView -> legs",
            measure(&stored_parsed, limit, from_view),
        ),
        (
            "stored view (from json) -> TxView -> legs",
            measure(&stored_json, limit, from_view),
        ),
        (
            "stored view (from json) -> TxView (reading alone)",
            measure(&stored_json, limit, read_only),
        ),
        (
            "TxView -> legs (decoder alone)",
            measure(&views, limit, legs_only),
        ),
    ];
    let mean = |list: &[usize]| list.iter().sum::<usize>() as f64 / list.len() as f64;
    println!(
        "fixtures: {} transactions; mean bytes per transaction: JSON text {:.0} (jsonParsed, as \
         recorded) / {:.0} (json); stored view {:.0} (from jsonParsed) / {:.0} (from json)",
        parsed_texts.len(),
        mean(&parsed_texts.iter().map(String::len).collect::<Vec<_>>()),
        mean(&json_texts.iter().map(String::len).collect::<Vec<_>>()),
        mean(&stored_parsed.iter().map(Vec::len).collect::<Vec<_>>()),
        mean(&stored_json.iter().map(Vec::len).collect::<Vec<_>>()),
    );
    println!("| stage | transactions/s (one core) |");
    println!("|---|---:|");
    for (stage, rate) in &rows {
        println!("| {stage} | {rate:.0} |");
    }
    println!(
        "stored view (from json) / JSON text (json): {:.1}x; stored view (from jsonParsed) / \
         JSON text (jsonParsed): {:.1}x",
        rows[3].1 / rows[1].1,
        rows[2].1 / rows[0].1
    );
}
