//! get_report and GET /v1/reports against the real server: every format
//! from the same replay as get_positions (and `ledger basis`), snapshots
//! of every CSV header and a small report in each format, the PDF read
//! back with pdftotext, the MCP answer per format (structuredContent,
//! text, resource_link), the REST headers, the paywall's refusals as for
//! get_ledger, and the portal's download.

use std::{collections::HashMap, str::FromStr};

use reqwest::{StatusCode, header};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use server::{
    accounts::{self, Scopes, TokenKind},
    basis::{EventKind, Method},
    ledger::{Leg, OperationType},
    reports::{Book, Range, csv_formats, tax_templates},
};

use crate::{
    helpers::TestApp,
    ledger::scanned_priced,
    payments::{Paid, paid_app},
    scans::WALLET,
};

/// Wallets written into the store as completed scans ([`seed_wallet`]).
const OTHER: &str = "4kLALtynrmd6pU2LkGXZCmUaMDfsnVixs7SkLjPKNJQG";
const THIRD: &str = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

fn ok(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"].clone()
}

fn dec(v: &Value) -> Decimal {
    Decimal::from_str(v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))).unwrap()
}

/// `tools/call get_report` at a protocol version with structuredContent
/// and resource_link content.
async fn report(app: &TestApp, args: Value) -> Value {
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                    "params":{"name":"get_report","arguments":args}}),
            &[("mcp-protocol-version", "2025-06-18")],
        )
        .await;
    let body: Value = response.json().await.unwrap();
    body["result"].clone()
}

/// The CSV a CSV-family answer carries as its second content item.
fn csv_of(result: &Value) -> String {
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][1]["type"], "text", "{result}");
    result["content"][1]["text"].as_str().unwrap().to_owned()
}

fn rows(csv: &str) -> Vec<HashMap<String, String>> {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

/// Unix seconds of a UTC date and hour.
fn at(date: &str, hour: u32) -> i64 {
    chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .unwrap()
        .and_hms_opt(hour, 0, 0)
        .unwrap()
        .and_utc()
        .timestamp()
}

/// The stored SOL close of the day starting at `day`: 100 USD plus a
/// day-of-year wave, so gains are neither zero nor round.
fn sol_close(day: i64) -> String {
    let n = day.div_euclid(86_400);
    format!("{}.{:02}", 100 + n % 37, n % 100)
}

type Plan<'a> = Vec<(&'a str, i64, Vec<(OperationType, &'a str, i128)>)>;

/// Record a completed scan of `wallet` holding `plan`'s transactions, as a
/// scan leaves it: its quote, its job (created, claimed, finished) and its
/// legs. Only on a server without in-process workers, which would race
/// this for the job.
async fn seed_wallet(app: &TestApp, wallet: &str, plan: Plan<'_>) {
    let legs: Vec<crate::helpers::SeededTx> = plan
        .into_iter()
        .enumerate()
        .map(|(i, (sig, t, legs))| {
            let slot = i as u64 + 1;
            let legs = legs
                .into_iter()
                .enumerate()
                .map(|(index, (op, mint, amount))| Leg {
                    signature: sig.to_owned(),
                    slot,
                    block_time: Some(t),
                    index: index as u32,
                    operation_type: op,
                    mint: mint.to_owned(),
                    amount,
                    decimals: if mint == "sol" { 9 } else { 6 },
                    counterparties: Vec::new(),
                    position: None,
                    venue: None,
                    router: None,
                })
                .collect();
            (sig.to_owned(), slot, Some(t), legs)
        })
        .collect();
    crate::helpers::seed_completed_scan(app, wallet, &legs).await;
}

/// `OTHER`: SOL bought in January 2024 and swapped for USDC in June 2025
/// (long term), SOL bought in July 2025 and partly sent away in August
/// (short term, and long term for what is left of the 2024 lot), a USDC
/// deposit, an airdrop and a USDC payment. `THIRD`: SOL in and out in
/// 2025. Both priced by a stored daily SOL series over 2024-2025.
async fn seed_wallets(app: &TestApp) {
    use OperationType::*;
    let other: Plan = vec![
        (
            "o1",
            at("2024-01-10", 9),
            vec![
                (TransferIn, "sol", 2_000_000_000),
                (NetworkFee, "sol", -5000),
            ],
        ),
        (
            "o2",
            at("2025-01-15", 10),
            vec![(TransferIn, USDC, 100_000_000), (NetworkFee, "sol", -5000)],
        ),
        ("o3", at("2025-03-10", 12), vec![(Airdrop, USDC, 5_000_000)]),
        (
            "o4",
            at("2025-06-04", 1),
            vec![
                (Swap, "sol", -1_500_000_000),
                (Swap, USDC, 300_000_000),
                (NetworkFee, "sol", -5000),
            ],
        ),
        (
            "o5",
            at("2025-07-01", 8),
            vec![(TransferIn, "sol", 1_000_000_000)],
        ),
        (
            "o6",
            at("2025-08-01", 8),
            vec![
                (TransferOut, "sol", -800_000_000),
                (NetworkFee, "sol", -5000),
            ],
        ),
        (
            "o7",
            at("2025-09-01", 8),
            vec![(TransferOut, USDC, -40_000_000), (NetworkFee, "sol", -5000)],
        ),
    ];
    seed_wallet(app, OTHER, other).await;
    let third: Plan = vec![
        (
            "t1",
            at("2025-02-01", 9),
            vec![(TransferIn, "sol", 1_000_000_000)],
        ),
        (
            "t2",
            at("2025-10-01", 9),
            vec![
                (TransferOut, "sol", -250_000_000),
                (NetworkFee, "sol", -5000),
            ],
        ),
    ];
    seed_wallet(app, THIRD, third).await;
    let (first, last) = (at("2024-01-01", 0), at("2026-01-01", 0));
    let points: Vec<(i64, String)> = (first..last)
        .step_by(86_400)
        .map(|d| (d, sol_close(d)))
        .collect();
    app.state
        .store()
        .store_price_range("sol", 86_400, (first, last), &points, "coinbase")
        .await
        .unwrap();
}

/// A server without in-process workers, prices from the stand-in, and the
/// seeded wallets.
async fn seeded() -> (TestApp, crate::price_standin::PriceStandIn) {
    let prices = crate::price_standin::start().await;
    let url = prices.url.clone();
    let app = crate::helpers::spawn_with(crate::helpers::Options {
        configure: Box::new(move |c| {
            crate::helpers::relaxed_limits(c);
            crate::price_standin::configure(c, &url);
            c.worker.in_process = false;
        }),
        ..crate::helpers::Options::default()
    })
    .await;
    seed_wallets(&app).await;
    (app, prices)
}

/// The basis input CSV (`ledger basis`) of a book's events: acquisitions
/// and disposals as the replay saw them, rent handled as the engine does
/// (a lock moves no lot; a release beyond what is locked opens one);
/// income and stake movements under their own types, which the CLI reads.
fn basis_input(book: &Book) -> String {
    let mut out = String::from("date,type,asset,quantity,usd_value,fee_usd\n");
    // Rent (false) and positions (true) are locked apart, as in the engine.
    let mut locked: HashMap<(bool, String), Decimal> = HashMap::new();
    for e in &book.events {
        let date = server::values::rfc3339(e.time * 1000);
        let (kind, quantity, value) = match e.kind {
            EventKind::Acquire => ("acquire", e.quantity, e.usd_value),
            EventKind::Dispose => ("dispose", e.quantity, e.usd_value),
            EventKind::Income => ("income", e.quantity, e.usd_value),
            EventKind::StakeLock => ("stake_deposit", e.quantity, e.usd_value),
            EventKind::StakeRelease => ("stake_withdraw", e.quantity, e.usd_value),
            EventKind::RentLock | EventKind::PositionLock => {
                let key = (e.kind == EventKind::PositionLock, e.asset.clone());
                *locked.entry(key).or_default() += e.quantity;
                continue;
            }
            EventKind::PositionSpend => {
                let held = locked.entry((true, e.asset.clone())).or_default();
                *held -= e.quantity.min(*held);
                continue;
            }
            EventKind::RentRelease | EventKind::PositionRelease => {
                let key = (e.kind == EventKind::PositionRelease, e.asset.clone());
                let held = locked.entry(key).or_default();
                let released = e.quantity.min(*held);
                *held -= released;
                let excess = e.quantity - released;
                if excess <= Decimal::ZERO {
                    continue;
                }
                let value = e.usd_value.map(|v| {
                    if excess >= e.quantity {
                        v
                    } else {
                        (v * (excess / e.quantity)).round_dp_with_strategy(
                            8,
                            rust_decimal::RoundingStrategy::MidpointAwayFromZero,
                        )
                    }
                });
                ("acquire", excess, value)
            }
        };
        out.push_str(&format!(
            "{date},{kind},{},{},{},{}\n",
            e.asset,
            quantity.normalize(),
            value.map(|v| v.normalize().to_string()).unwrap_or_default(),
            e.fee_usd.normalize()
        ));
    }
    out
}

/// Realized (gain, short, long, proceeds, basis) of `ledger basis` output.
fn cli_totals(output: &str) -> (Decimal, Decimal, Decimal, Decimal, Decimal) {
    let mut t = (
        Decimal::ZERO,
        Decimal::ZERO,
        Decimal::ZERO,
        Decimal::ZERO,
        Decimal::ZERO,
    );
    for row in rows(output) {
        if row["record"] != "disposal" || !row["note"].is_empty() {
            continue;
        }
        let gain = Decimal::from_str(&row["gain"]).unwrap();
        t.0 += gain;
        if row["term"] == "long" {
            t.2 += gain;
        } else {
            t.1 += gain;
        }
        t.3 += Decimal::from_str(&row["proceeds"]).unwrap();
        t.4 += Decimal::from_str(&row["basis"]).unwrap();
    }
    t
}

/// The totals rows of a Form 8949 CSV: (part → (proceeds, basis, gain)).
fn totals_8949(form: &[HashMap<String, String>]) -> HashMap<String, (Decimal, Decimal, Decimal)> {
    form.iter()
        .filter(|r| r["record"] == "total")
        .map(|r| {
            let d = |c: &str| Decimal::from_str(&r[c]).unwrap();
            (
                r["part"].clone(),
                (
                    d("(d) proceeds"),
                    d("(e) cost or other basis"),
                    d("(h) gain or (loss)"),
                ),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_8949_and_json_totals_equal_get_positions_and_ledger_basis() {
    let (app, _p) = seeded().await;
    let positions = ok(&app
        .call_tool(
            "get_positions",
            json!({"address": OTHER, "exclude_spam": false, "method": "fifo"}),
        )
        .await);
    let realized = &positions["realized"];
    assert!(realized["rows"].as_u64().unwrap() >= 5, "{positions}");
    assert_ne!(
        dec(&realized["short_term_gain"]),
        Decimal::ZERO,
        "{realized}"
    );
    assert_ne!(
        dec(&realized["long_term_gain"]),
        Decimal::ZERO,
        "{realized}"
    );

    let whole = ok(&report(&app, json!({"wallets": [OTHER], "format": "json"})).await);
    assert_eq!(&whole["total"]["realized"], realized);
    assert_eq!(&whole["wallets"][0]["realized"], realized);

    // Form 8949 per tax year: the two years together are get_positions.
    let mut sum = (
        Decimal::ZERO,
        Decimal::ZERO,
        Decimal::ZERO,
        Decimal::ZERO,
        Decimal::ZERO,
    );
    let mut data_rows = 0;
    for (year, short_box, long_box) in [("2024", "C", "F"), ("2025", "I", "L")] {
        let range = json!({"wallets": [OTHER], "from": format!("{year}-01-01"), "to": format!("{year}-12-31")});
        let mut args = range.clone();
        args["format"] = json!("8949");
        // One row per disposal, as the replay has them (no dust grouping).
        args["dust_threshold"] = json!(0);
        let form = rows(&csv_of(&report(&app, args).await));
        let totals = totals_8949(&form);
        let (short, long) = (totals["I"], totals["II"]);
        // A self-custodied wallet's rows are "not reported on a 1099".
        for r in form.iter().filter(|r| r["record"] == "row") {
            let expected = if r["part"] == "I" {
                short_box
            } else {
                long_box
            };
            assert_eq!(r["box"], expected, "{year}: {r:?}");
        }
        let mut args = range.clone();
        args["format"] = json!("json");
        let in_year = ok(&report(&app, args).await)["total"]["realized"].clone();
        assert_eq!(short.2, dec(&in_year["short_term_gain"]), "{year}");
        assert_eq!(long.2, dec(&in_year["long_term_gain"]), "{year}");
        assert_eq!(short.0 + long.0, dec(&in_year["proceeds"]), "{year}");
        assert_eq!(short.1 + long.1, dec(&in_year["basis"]), "{year}");
        let n = form.iter().filter(|r| r["record"] == "row").count() as u64;
        assert_eq!(n, in_year["rows"].as_u64().unwrap(), "{year}");
        data_rows += n;
        sum.0 += short.2 + long.2;
        sum.1 += short.2;
        sum.2 += long.2;
        sum.3 += short.0 + long.0;
        sum.4 += short.1 + long.1;
    }
    assert_eq!(data_rows, realized["rows"].as_u64().unwrap());
    assert_eq!(sum.0, dec(&realized["gain"]));
    assert_eq!(sum.1, dec(&realized["short_term_gain"]));
    assert_eq!(sum.2, dec(&realized["long_term_gain"]));
    assert_eq!(sum.3, dec(&realized["proceeds"]));
    assert_eq!(sum.4, dec(&realized["basis"]));

    // `ledger basis` over the same events gives the same totals.
    let wallet = server::solana::WalletAddress::parse(OTHER).unwrap();
    let book = Book::read(
        &app.state.reads(),
        &wallet,
        Method::Fifo,
        false,
        Range::default(),
        app.state.now_ms() / 1000,
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("events.csv");
    std::fs::write(&input, basis_input(&book)).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ledger"))
        .args(["basis", "--method", "fifo", "--input"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli = cli_totals(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(
        cli, sum,
        "ledger basis: (gain, short, long, proceeds, basis)"
    );

    app.stop().await;
}

#[tokio::test]
async fn every_csv_header_and_a_small_report_in_each_format_are_snapshotted() {
    let (app, _p) = seeded().await;
    let headers = [
        ("csv", csv_formats::LEDGER_COLUMNS.join(",")),
        ("positions_csv", csv_formats::POSITION_COLUMNS.join(",")),
        ("8949", csv_formats::FORM_8949_COLUMNS.join(",")),
        ("koinly", tax_templates::KOINLY_COLUMNS.join(",")),
        ("cointracker", tax_templates::COINTRACKER_COLUMNS.join(",")),
    ];
    let mut all = String::new();
    for (format, header) in &headers {
        let args = json!({"wallets": [OTHER], "format": format, "to": "2025-12-31"});
        let csv = csv_of(&report(&app, args).await);
        assert_eq!(csv.lines().next().unwrap(), header, "{format}");
        all.push_str(&format!("{format}: {header}\n"));
        insta::assert_snapshot!(format!("report_{format}"), csv);
    }
    insta::assert_snapshot!("report_csv_headers", all);
    // The exact templates the importers document.
    assert_eq!(
        headers[3].1,
        "Date,Sent Amount,Sent Currency,Received Amount,Received Currency,Fee Amount,Fee Currency,Net Worth Amount,Net Worth Currency,Label,Description,TxHash"
    );
    assert_eq!(
        headers[4].1,
        "Date,Received Quantity,Received Currency,Sent Quantity,Sent Currency,Fee Amount,Fee Currency,Tag"
    );

    // 2025: the digital-asset boxes, I for short term and L for long.
    let form = rows(&csv_of(
        &report(
            &app,
            json!({"wallets": [OTHER], "format": "8949", "from": "2025-01-01", "to": "2025-12-31"}),
        )
        .await,
    ));
    let row = |description: &str| {
        form.iter()
            .find(|r| r["record"] == "row" && r["(a) description of property"] == description)
            .unwrap_or_else(|| panic!("no row {description}: {form:?}"))
    };
    let usdc = row("40 USDC");
    assert_eq!(usdc["box"], "I");
    assert_eq!(usdc["(b) date acquired"], "01/15/2025");
    assert_eq!(usdc["(c) date sold or disposed of"], "09/01/2025");
    let swapped = row("1.5 SOL");
    assert_eq!(
        (swapped["part"].as_str(), swapped["box"].as_str()),
        ("II", "L")
    );
    assert_eq!(swapped["(b) date acquired"], "01/10/2024");
    assert_eq!(swapped["(c) date sold or disposed of"], "06/04/2025");
    assert_eq!(
        swapped["(d) proceeds"], "299.999478",
        "300 USDC less the fee's value (0.000005 SOL at 104.40)"
    );

    // Koinly: a swap is one row, the airdrop is labelled, fees in the fee columns.
    let koinly = rows(&csv_of(
        &report(&app, json!({"wallets": [OTHER], "format": "koinly"})).await,
    ));
    assert_eq!(koinly.len(), 7);
    assert_eq!(koinly[0]["Date"], "2024-01-10 09:00 UTC");
    assert_eq!(koinly[2]["Label"], "airdrop");
    let swap = &koinly[3];
    assert_eq!(
        (swap["Sent Amount"].as_str(), swap["Sent Currency"].as_str()),
        ("1.5", "SOL")
    );
    assert_eq!(
        (
            swap["Received Amount"].as_str(),
            swap["Received Currency"].as_str()
        ),
        ("300", "USDC")
    );
    assert_eq!(
        (swap["Fee Amount"].as_str(), swap["Fee Currency"].as_str()),
        ("0.000005", "SOL")
    );
    assert_eq!(swap["TxHash"], "o4");
    let tracker = rows(&csv_of(
        &report(&app, json!({"wallets": [OTHER], "format": "cointracker"})).await,
    ));
    assert_eq!(tracker[0]["Date"], "01/10/2024 09:00:00");
    assert_eq!(tracker[2]["Tag"], "airdrop");
    assert_eq!(tracker[3]["Received Quantity"], "300");
    assert_eq!(tracker[6]["Sent Quantity"], "40");

    let json_report = ok(&report(&app, json!({"wallets": [OTHER, THIRD], "format": "json", "from": "2024-03-01", "to": "2025-12-31"})).await);
    assert_eq!(json_report["wallets"].as_array().unwrap().len(), 2);
    assert_eq!(json_report["wallets"][0]["income"]["usd"], "5");
    assert_eq!(json_report["wallets"][0]["fees"]["lamports"], "20000");
    // The range ends in the stored series: every figure is fixed but the
    // time of generation and the SOL price then.
    assert_eq!(json_report["total"]["unpriced_mints"], json!([]));
    insta::assert_json_snapshot!("report_json", json_report, {
        ".meta.generated_at" => "[generated_at]",
        ".meta.sol_usd_at_generation" => "[spot]",
    });
    app.stop().await;
}

/// pdftotext, or a loud skip outside CI.
pub(crate) fn pdftotext(pdf: &[u8]) -> Option<String> {
    poppler("pdftotext", pdf, &["-layout"], &["-"])
}

/// A poppler tool over `pdf` (written to a file), or a loud skip outside CI.
fn poppler(tool: &str, pdf: &[u8], before: &[&str], after: &[&str]) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.pdf");
    std::fs::write(&path, pdf).unwrap();
    match std::process::Command::new(tool)
        .args(before)
        .arg(&path)
        .args(after)
        .output()
    {
        Ok(out) if out.status.success() => Some(String::from_utf8(out.stdout).unwrap()),
        result => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{tool} (poppler-utils) must be installed in CI: {result:?}"
            );
            eprintln!(
                "\n!!! SKIPPED: {tool} is not installed (apt-get install -y poppler-utils); \
                 the PDF was not read back !!!\n"
            );
            None
        }
    }
}

#[tokio::test]
async fn a_pdf_report_is_a_resource_link_to_rest_and_pdftotext_reads_its_totals() {
    let (app, _s, _p) = scanned_priced().await;
    let figures = ok(&report(&app, json!({"wallets": [WALLET], "format": "json"})).await);
    let result = report(&app, json!({"wallets": [WALLET], "format": "pdf"})).await;
    let sc = ok(&result);
    assert_eq!(sc["code"], "result_linked");
    assert_eq!(sc["mime_type"], "application/pdf");
    let link = &result["content"][1];
    assert_eq!(link["type"], "resource_link", "{result}");
    assert_eq!(link["mimeType"], "application/pdf");
    let uri = link["uri"].as_str().unwrap();
    assert_eq!(uri, sc["uri"]);
    assert!(uri.starts_with(&app.url("/v1/reports?")), "{uri}");
    let response = app.client.get(uri).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CONTENT_TYPE], "application/pdf");
    assert_eq!(
        response.headers()[header::CONTENT_DISPOSITION],
        "attachment; filename=\"ledger-71WDyyCs-pdf-fifo-start-now.pdf\""
    );
    let pdf = response.bytes().await.unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    // The link renders the report again, with its own generation time in
    // the (deflated, level 1) text, so the size can differ by some bytes:
    // one changed digit moves a fast deflate's output by up to ~100 (seen:
    // 72 of a 4 KB document).
    let described = sc["bytes"].as_u64().unwrap();
    assert!(
        (pdf.len() as u64).abs_diff(described) <= 256,
        "{} bytes served, {described} described",
        pdf.len()
    );
    if let Some(text) = pdftotext(&pdf) {
        for needle in [
            "Ledger report",
            WALLET,
            "Cost-basis method",
            "fifo",
            "Not tax advice",
            "page 1 of ",
            "Realized gains by term",
            "Open positions at the end of the range",
            "Value over the range",
            "Ledger",
        ] {
            assert!(text.contains(needle), "{needle} not in:\n{text}");
        }
        let gain = figures["total"]["realized"]["gain"].as_str().unwrap();
        let short = figures["total"]["realized"]["short_term_gain"]
            .as_str()
            .unwrap();
        let line = text
            .lines()
            .find(|l| l.contains("Realized gain or (loss)"))
            .unwrap();
        // Money cells read as people write money: 1,234.50 USD.
        let fiat = |text: &str| server::values::format::fiat(text.parse().unwrap(), "USD");
        assert!(line.contains(&fiat(gain)), "{line}");
        assert!(text.contains(&fiat(short)), "short-term gain {short}");
        assert!(text.contains(&fiat(figures["total"]["fees"]["usd"].as_str().unwrap())));
    }
    app.stop().await;
}

#[tokio::test]
async fn rest_serves_every_format_with_its_content_type_and_filename() {
    let (app, _s, _p) = scanned_priced().await;
    for (format, mime, ext) in [
        ("json", "application/json", "json"),
        ("csv", "text/csv; charset=utf-8", "csv"),
        ("positions_csv", "text/csv; charset=utf-8", "csv"),
        ("8949", "text/csv; charset=utf-8", "csv"),
        ("koinly", "text/csv; charset=utf-8", "csv"),
        ("cointracker", "text/csv; charset=utf-8", "csv"),
        ("pdf", "application/pdf", "pdf"),
    ] {
        let path =
            format!("/v1/reports?wallets={WALLET}&format={format}&method=hifo&from=2024-03-01");
        let response = app.client.get(app.url(&path)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{format}");
        assert_eq!(response.headers()[header::CONTENT_TYPE], mime, "{format}");
        let name = format!(
            "attachment; filename=\"ledger-71WDyyCs-{}-hifo-20240301-now.{ext}\"",
            format.replace('_', "-")
        );
        assert_eq!(
            response.headers()[header::CONTENT_DISPOSITION],
            name.as_str()
        );
        let body = response.bytes().await.unwrap();
        let args =
            json!({"wallets": [WALLET], "format": format, "method": "hifo", "from": "2024-03-01"});
        let tool = report(&app, args).await;
        match format {
            "json" => {
                let mut rest: Value = serde_json::from_slice(&body).unwrap();
                let mut mcp = ok(&tool);
                rest["meta"]["generated_at"] = json!(null);
                mcp["meta"]["generated_at"] = json!(null);
                assert_eq!(
                    rest, mcp,
                    "the tool's structuredContent is the route's body"
                );
            }
            "pdf" => assert!(body.starts_with(b"%PDF-")),
            _ => assert_eq!(
                std::str::from_utf8(&body).unwrap(),
                csv_of(&tool),
                "{format}"
            ),
        }
    }
    app.stop().await;
}

#[tokio::test]
async fn more_than_twenty_wallets_and_unknown_formats_are_refused_as_invalid_params() {
    let (app, _s, _p) = scanned_priced().await;
    let many: Vec<String> = (0..21u8)
        .map(|i| {
            let mut key = [7u8; 32];
            key[0] = i;
            bs58::encode(key).into_string()
        })
        .collect();
    let result = report(&app, json!({"wallets": many, "format": "csv"})).await;
    assert_eq!(
        result["structuredContent"]["code"], "invalid_params",
        "{result}"
    );
    let message = result["structuredContent"]["message"].as_str().unwrap();
    assert!(
        message.contains("wallets") && message.contains("20"),
        "{message}"
    );
    let rest = app
        .client
        .get(app.url(&format!(
            "/v1/reports?wallets={}&format=csv",
            many.join(",")
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::BAD_REQUEST);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["code"], "invalid_params");
    assert!(body["message"].as_str().unwrap().contains("20"), "{body}");

    let rest = app
        .client
        .get(app.url(&format!("/v1/reports?wallets={WALLET}&format=xlsx")))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::BAD_REQUEST);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["code"], "invalid_params");
    assert!(
        body["message"].as_str().unwrap().contains("format"),
        "{body}"
    );
    let rpc = app
        .rpc(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_report","arguments":{"wallets":[WALLET],"format":"xlsx"}}}),
            &[],
        )
        .await;
    let refused = rpc["error"]["message"]
        .as_str()
        .or(rpc["result"]["structuredContent"]["message"].as_str())
        .unwrap_or_default();
    assert!(refused.contains("format"), "{rpc}");

    // A range a Form 8949 cannot cover, and a range out of order.
    for (args, needle) in [
        (
            json!({"wallets": [WALLET], "format": "8949", "from": "2024-06-01", "to": "2025-02-01"}),
            "tax year",
        ),
        (
            json!({"wallets": [WALLET], "format": "csv", "from": "2025-01-01", "to": "2024-01-01"}),
            "from is after to",
        ),
    ] {
        let result = report(&app, args).await;
        assert_eq!(
            result["structuredContent"]["code"], "invalid_params",
            "{result}"
        );
        assert!(
            result["structuredContent"]["message"]
                .as_str()
                .unwrap()
                .contains(needle),
            "{result}"
        );
    }
    // A wallet named twice is reported once (schemathesis sends such lists:
    // the schema does not ask for unique items).
    let twice = report(&app, json!({"wallets": [WALLET, WALLET], "format": "json"})).await;
    assert_eq!(twice["isError"], false, "{twice}");
    let once = report(&app, json!({"wallets": [WALLET], "format": "json"})).await;
    assert_eq!(
        twice["structuredContent"]["wallets"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "{twice}"
    );
    assert_eq!(
        twice["structuredContent"]["total"],
        once["structuredContent"]["total"]
    );
    let never = report(&app, json!({"wallets": [OTHER], "format": "csv"})).await;
    assert_eq!(never["structuredContent"]["code"], "not_found", "{never}");
    app.stop().await;
}

async fn paid_and_scanned() -> (Paid, String) {
    let paid = paid_app(|c| c.prices.coinbase_url = "http://127.0.0.1:9".to_owned()).await;
    let (started, _) = paid.paid_scan().await;
    let receipt = started["structuredContent"]["payment"]["receipt"]
        .as_str()
        .unwrap()
        .to_owned();
    (paid, receipt)
}

#[tokio::test]
async fn an_unpaid_report_is_challenged_and_the_scans_receipt_covers_it() {
    let (paid, receipt) = paid_and_scanned().await;
    let app = &paid.app;
    let challenge = report(app, json!({"wallets": [WALLET], "format": "csv"})).await;
    let sc = &challenge["structuredContent"];
    assert_eq!(sc["code"], "payment_required", "{challenge}");
    assert_eq!(sc["x402"]["accepts"][0]["resource"], "/v1/reports");
    assert!(
        challenge["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("-tool get_report "),
        "{challenge}"
    );
    let rest = app
        .client
        .get(app.url(&format!("/v1/reports?wallets={WALLET}&format=csv")))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::PAYMENT_REQUIRED);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["accepts"][0]["resource"], "/v1/reports", "{body}");

    let covered = report(
        app,
        json!({"wallets": [WALLET], "format": "csv", "receipt": receipt}),
    )
    .await;
    assert!(csv_of(&covered).starts_with("wallet,signature,"));
    let rest = app
        .client
        .get(app.url(&format!("/v1/reports?wallets={WALLET}&format=csv")))
        .header("X-Receipt", &receipt)
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::OK);

    // The PDF's link carries the receipt; without it the link is refused.
    let linked = report(
        app,
        json!({"wallets": [WALLET], "format": "pdf", "receipt": receipt}),
    )
    .await;
    let uri = ok(&linked)["uri"].as_str().unwrap().to_owned();
    assert!(uri.contains(&format!("receipt={receipt}")), "{uri}");
    let got = app.client.get(&uri).send().await.unwrap();
    assert_eq!(got.status(), StatusCode::OK);
    assert_eq!(got.headers()[header::CONTENT_TYPE], "application/pdf");
    let bare = uri.split("&receipt=").next().unwrap();
    let refused = app.client.get(bare).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::PAYMENT_REQUIRED);
    let forged = format!("{bare}&receipt=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    let refused = app.client.get(&forged).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::PAYMENT_REQUIRED);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "invalid_receipt");
}

#[tokio::test]
async fn a_receipt_for_another_wallet_is_refused_and_a_payment_covers_the_one_wallet_it_prices() {
    let paid = paid_app(|c| c.worker.in_process = false).await;
    let app = &paid.app;
    seed_wallets(app).await;
    // A read payment for OTHER: its receipt covers OTHER.
    let challenge = report(app, json!({"wallets": [OTHER], "format": "csv"})).await;
    let x402 = &challenge["structuredContent"]["x402"];
    let quote_id = x402["accepts"][0]["extra"]["quoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    let payment = paid.build(&paid.payment_for(x402));
    let first = report(
        app,
        json!({"wallets": [OTHER], "format": "csv", "payment": payment, "quote_id": quote_id}),
    )
    .await;
    assert_eq!(
        first["structuredContent"]["payment"]["settled"], true,
        "{first}"
    );
    let receipt = first["structuredContent"]["payment"]["receipt"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(csv_of(&first).contains(OTHER));
    assert_eq!(paid.sent(), 1);

    let wrong = report(
        app,
        json!({"wallets": [THIRD], "format": "csv", "receipt": receipt}),
    )
    .await;
    assert_eq!(
        wrong["structuredContent"]["code"], "payment_required",
        "{wrong}"
    );
    assert_eq!(
        wrong["structuredContent"]["error"],
        "receipt_not_for_wallet"
    );

    // Both wallets: the receipt covers one, the challenge prices the other.
    let both = json!({"wallets": [OTHER, THIRD], "format": "json", "receipt": receipt});
    let challenge = report(app, both.clone()).await;
    let x402 = &challenge["structuredContent"]["x402"];
    assert_eq!(
        challenge["structuredContent"]["code"], "payment_required",
        "{challenge}"
    );
    let quote_id = x402["accepts"][0]["extra"]["quoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    let quote = app.state.store().quote(&quote_id).await.unwrap().unwrap();
    assert_eq!(quote.address, THIRD);
    assert_eq!(paid.sent(), 1, "nothing more has gone out");
    let payment = paid.build(&paid.payment_for(x402));
    let mut args = both.clone();
    args["payment"] = json!(payment);
    args["quote_id"] = json!(quote_id);
    let result = report(app, args.clone()).await;
    let body = ok(&result);
    assert_eq!(body["payment"]["settled"], true, "{result}");
    assert_eq!(body["wallets"].as_array().unwrap().len(), 2);
    assert_eq!(paid.sent(), 2);
    // The new receipt covers THIRD alone.
    let third_receipt = body["payment"]["receipt"].as_str().unwrap();
    let alone = report(
        app,
        json!({"wallets": [THIRD], "format": "csv", "receipt": third_receipt}),
    )
    .await;
    assert!(csv_of(&alone).contains(THIRD));
    let not_other = report(
        app,
        json!({"wallets": [OTHER], "format": "csv", "receipt": third_receipt}),
    )
    .await;
    assert_eq!(
        not_other["structuredContent"]["error"],
        "receipt_not_for_wallet"
    );
    // A payment whose quote prices none of the wallets is refused, nothing charged.
    let mut stray = json!({"wallets": [THIRD], "format": "csv"});
    let other_challenge = report(app, json!({"wallets": [OTHER], "format": "csv"})).await;
    let x402 = &other_challenge["structuredContent"]["x402"];
    stray["payment"] = json!(paid.build(&paid.payment_for(x402)));
    stray["quote_id"] = x402["accepts"][0]["extra"]["quoteId"].clone();
    let refused = report(app, stray).await;
    assert_eq!(
        refused["structuredContent"]["error"], "wrong_quote",
        "{refused}"
    );
    assert_eq!(paid.sent(), 2);
    // Presented again, the same payment settles nothing more.
    let again = report(app, args).await;
    assert_eq!(ok(&again)["payment"]["replayed"], true);
    assert_eq!(paid.sent(), 2);
}

async fn mint(app: &TestApp) -> (server::accounts::AccountId, String) {
    let store = app.state.store();
    let now = app.state.now_ms();
    let account = accounts::create_account(store, now, "tests").await.unwrap();
    let minted = accounts::mint(
        store,
        now,
        &account,
        TokenKind::Mcp,
        Scopes::parse("read").unwrap(),
        "report test",
    )
    .await
    .unwrap();
    (account, minted.plaintext.clone())
}

async fn report_as(app: &TestApp, bearer: &str, args: Value) -> Value {
    let auth = format!("Bearer {bearer}");
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_report","arguments":args}}),
            &[("authorization", &auth), ("mcp-protocol-version", "2025-06-18")],
        )
        .await;
    let body: Value = response.json().await.unwrap();
    body["result"].clone()
}

#[tokio::test]
async fn a_watching_accounts_pdf_link_opens_with_its_bearer_and_for_no_one_else() {
    let (paid, _receipt) = paid_and_scanned().await;
    let app = &paid.app;
    let (owner, bearer) = mint(app).await;
    let (_, stranger) = mint(app).await;
    let wallet = server::solana::WalletAddress::parse(WALLET).unwrap();
    accounts::watchlist::add_wallet(app.state.store(), app.state.now_ms(), &owner, wallet, "")
        .await
        .unwrap();
    let result = report_as(app, &bearer, json!({"wallets": [WALLET], "format": "pdf"})).await;
    let uri = ok(&result)["uri"].as_str().unwrap().to_owned();
    assert!(
        !uri.contains("receipt="),
        "nothing but the bearer covers it: {uri}"
    );
    let with_bearer = app
        .client
        .get(&uri)
        .bearer_auth(&bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(with_bearer.status(), StatusCode::OK);
    let anonymous = app.client.get(&uri).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::PAYMENT_REQUIRED);
    let other = app
        .client
        .get(&uri)
        .bearer_auth(&stranger)
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::PAYMENT_REQUIRED);
    let stranger_call = report_as(
        app,
        &stranger,
        json!({"wallets": [WALLET], "format": "csv"}),
    )
    .await;
    assert_eq!(
        stranger_call["structuredContent"]["code"],
        "payment_required"
    );
}

#[tokio::test]
async fn the_portal_downloads_a_watched_wallets_report_with_the_session_only() {
    let (paid, _receipt) = paid_and_scanned().await;
    let app = &paid.app;
    let mut browser = crate::portal::Browser::new();
    let path = format!("/wallets/{WALLET}/report?format=csv&method=fifo&exclude_spam=true");
    let signed_out = browser.get(&app.url(&path)).await;
    assert_eq!(signed_out.status(), StatusCode::SEE_OTHER);
    let account = crate::portal::sign_in(&mut browser, app).await;
    let unwatched = browser.get(&app.url(&path)).await;
    assert_eq!(unwatched.status(), StatusCode::NOT_FOUND);
    let wallet = server::solana::WalletAddress::parse(WALLET).unwrap();
    accounts::watchlist::add_wallet(app.state.store(), app.state.now_ms(), &account, wallet, "")
        .await
        .unwrap();
    let got = browser.get(&app.url(&path)).await;
    assert_eq!(got.status(), StatusCode::OK);
    assert_eq!(
        got.headers()[header::CONTENT_TYPE],
        "text/csv; charset=utf-8"
    );
    assert_eq!(
        got.headers()[header::CONTENT_DISPOSITION],
        "attachment; filename=\"ledger-71WDyyCs-csv-fifo-start-now.csv\""
    );
    let csv = got.text().await.unwrap();
    assert!(csv.starts_with("wallet,signature,"));
    assert!(
        !csv.contains("airdrop_spam"),
        "exclude_spam=true was applied"
    );
    let pdf = browser
        .get(&app.url(&format!("/wallets/{WALLET}/report?format=pdf")))
        .await;
    assert_eq!(pdf.headers()[header::CONTENT_TYPE], "application/pdf");
    let bad = browser
        .get(&app.url(&format!("/wallets/{WALLET}/report?format=docx")))
        .await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    // The cookie never opens the REST route.
    let rest = browser
        .get(&app.url(&format!("/v1/reports?wallets={WALLET}&format=csv")))
        .await;
    assert_eq!(rest.status(), StatusCode::PAYMENT_REQUIRED);
}

/// A wallet of 1,000 transactions over 2024 and 2025 (SOL bought every
/// tenth, swapped for USDC and back, sent, airdropped, each with its
/// network fee): enough for a ledger of many pages and a Form 8949 of
/// many fee-dust rows.
async fn seed_thousand(app: &TestApp) -> String {
    use OperationType::*;
    let wallet = bs58::encode([9u8; 32]).into_string();
    let sigs: Vec<String> = (0..1000).map(|i| format!("big{i}")).collect();
    let start = at("2024-01-02", 0);
    let plan: Plan = sigs
        .iter()
        .enumerate()
        .map(|(i, sig)| {
            let t = start + i as i64 * 62_000;
            let fee = (NetworkFee, "sol", -5000);
            let legs = match i % 10 {
                0 => vec![(TransferIn, "sol", 2_000_000_000)],
                1..=4 => vec![
                    (Swap, "sol", -50_000_000),
                    (Swap, USDC, 5_000_000 + i as i128 * 1000),
                    fee,
                ],
                5 | 6 => vec![(Swap, USDC, -3_000_000), (Swap, "sol", 25_000_000), fee],
                7 => vec![(TransferOut, "sol", -10_000_000), fee],
                8 => vec![(Airdrop, USDC, 1_000_000)],
                _ => vec![fee],
            };
            (sig.as_str(), t, legs)
        })
        .collect();
    seed_wallet(app, &wallet, plan).await;
    wallet
}

/// The PDF of `query` from REST.
async fn pdf_of(app: &TestApp, query: &str) -> Vec<u8> {
    let response = app
        .client
        .get(app.url(&format!("/v1/reports?{query}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{query}");
    response.bytes().await.unwrap().to_vec()
}

#[tokio::test]
async fn a_thousand_transaction_pdf_numbers_its_pages_embeds_its_fonts_and_its_cover_is_jsons() {
    let (app, _p) = seeded().await;
    let wallet = seed_thousand(&app).await;
    // Over 256 KiB, so from REST (the tool would answer a link).
    let query = format!("wallets={wallet}&jurisdiction=us&tax_year=2025&to=2025-12-31");
    let figures: Value =
        serde_json::from_slice(&pdf_of(&app, &format!("{query}&format=json")).await).unwrap();
    let pdf = pdf_of(&app, &format!("{query}&format=pdf")).await;
    if let Ok(dir) = std::env::var("LEDGER_PDF_OUT") {
        std::fs::write(format!("{dir}/thousand.pdf"), &pdf).unwrap();
    }
    // The fonts are in the file (the dictionaries are not compressed).
    let has = |needle: &[u8]| pdf.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"/FontFile2") && has(b"+DejaVuSans-Bold") && !has(b"/Helvetica"));
    if let Some(fonts) = poppler("pdffonts", &pdf, &[], &[]) {
        // name, type, encoding, emb, sub, uni, object, generation
        let listed: Vec<Vec<&str>> = fonts
            .lines()
            .skip(2)
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(listed.len(), 2, "{fonts}");
        for f in &listed {
            assert!(f[0].contains("+DejaVuSans"), "{fonts}");
            assert_eq!(
                f[f.len() - 5..f.len() - 2],
                ["yes", "yes", "yes"],
                "{fonts}"
            );
        }
    }
    let Some(text) = pdftotext(&pdf) else {
        app.stop().await;
        return;
    };
    // pdftotext ends each page with a form feed.
    let pages: Vec<&str> = text
        .split('\u{c}')
        .filter(|p| !p.trim().is_empty())
        .collect();
    let m = pages.len();
    assert!(m > 10, "{m} pages");
    for (i, page) in pages.iter().enumerate() {
        assert!(
            page.contains(&format!("page {} of {m}", i + 1)),
            "page {}:\n{page}",
            i + 1
        );
        assert!(page.contains("Not tax advice"), "page {}", i + 1);
    }
    // The cover: json's figures, as people write money.
    let cover = pages[0];
    let fiat = |v: &Value| server::values::format::fiat(dec(v), "USD");
    let year = &figures["tax"]["years"][0];
    assert!(figures["tax"].is_object(), "{}", figures["tax"]);
    assert_eq!(year["tax_year"], "2025");
    let total = &figures["total"];
    for (label, value) in [
        ("Proceeds, Form 8949 column (d)", fiat(&year["proceeds"])),
        ("Cost or other basis, column (e)", fiat(&year["basis"])),
        (
            "Short-term gain or (loss), Part I",
            fiat(&year["short_term_gain"]),
        ),
        (
            "Long-term gain or (loss), Part II",
            fiat(&year["long_term_gain"]),
        ),
        ("Realized gain or (loss)", fiat(&total["realized"]["gain"])),
        (
            "Short-term gain or (loss) ",
            fiat(&total["realized"]["short_term_gain"]),
        ),
        ("Income (staking", fiat(&total["income"]["usd"])),
        ("Value at start", fiat(&total["value_start_usd"])),
        ("Value at end", fiat(&total["value_end_usd"])),
        ("Network fees", fiat(&total["fees"]["usd"])),
    ] {
        let line = cover
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("no {label:?} on the cover:\n{cover}"));
        assert!(line.contains(&value), "{label}: {value} not in {line:?}");
    }
    for needle in [
        "Tax year",
        "2025",
        "United States, USD",
        "Not tax advice",
        "tax professional",
    ] {
        assert!(
            cover.contains(needle),
            "{needle} not on the cover:\n{cover}"
        );
    }
    // Each disposal with its rule, and the ledger's addresses shortened.
    assert!(text.contains("Disposals and the rule that matched each (USD)"));
    assert!(
        text.lines()
            .any(|l| l.contains("fifo") && l.contains("2025-")),
        "no disposal row with its rule"
    );
    let short = format!("{}…{}", &wallet[..6], &wallet[wallet.len() - 4..]);
    assert!(text.contains(&short), "{short}");
    app.stop().await;
}

#[tokio::test]
async fn form_8949_combines_dust_per_asset_and_term_and_its_totals_do_not_change() {
    let (app, _p) = seeded().await;
    let wallet = seed_thousand(&app).await;
    let form = |threshold: Option<f64>| {
        let mut args = json!({"wallets": [wallet], "format": "8949",
                              "from": "2025-01-01", "to": "2025-12-31"});
        if let Some(t) = threshold {
            args["dust_threshold"] = json!(t);
        }
        let app = &app;
        async move { rows(&csv_of(&report(app, args).await)) }
    };
    let every = form(Some(0.0)).await;
    let grouped = form(None).await;
    let count = |f: &[HashMap<String, String>], record: &str| {
        f.iter().filter(|r| r["record"] == record).count()
    };
    // The same totals, part by part.
    assert_eq!(totals_8949(&every), totals_8949(&grouped));
    // Each part's rows add up to its total (the combined rows included).
    for part in ["I", "II"] {
        let sum = |c: &str| -> Decimal {
            grouped
                .iter()
                .filter(|r| r["record"] == "row" && r["part"] == part)
                .map(|r| Decimal::from_str(&r[c]).unwrap())
                .sum()
        };
        let (p, b, g) = totals_8949(&grouped)[part];
        assert_eq!(
            (
                sum("(d) proceeds"),
                sum("(e) cost or other basis"),
                sum("(h) gain or (loss)")
            ),
            (p, b, g),
            "{part}"
        );
    }
    // Far fewer rows on the form; every disposal still listed once.
    let combined: Vec<&HashMap<String, String>> =
        grouped.iter().filter(|r| r["(f) code"] == "M").collect();
    assert!(!combined.is_empty());
    let (rows_every, rows_grouped) = (count(&every, "row"), count(&grouped, "row"));
    assert!(
        rows_grouped * 2 < rows_every,
        "{rows_grouped} of {rows_every}"
    );
    assert_eq!(
        rows_grouped - combined.len() + count(&grouped, "statement"),
        rows_every
    );
    // A combined row says how many disposals it holds, each under 1 USD,
    // and leaves the dates blank with code M (Form 8949 instructions,
    // Exception 2).
    let mut held = 0;
    for row in &combined {
        let description = &row["(a) description of property"];
        let n: usize = description
            .split(": ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            description.ends_with("under 1.00 USD, see attached statement"),
            "{description}"
        );
        assert_eq!(
            (
                row["(b) date acquired"].as_str(),
                row["(c) date sold or disposed of"].as_str()
            ),
            ("", "")
        );
        held += n;
    }
    assert_eq!(held, count(&grouped, "statement"));
    for r in grouped.iter().filter(|r| r["record"] == "statement") {
        assert!(
            Decimal::from_str(&r["(d) proceeds"]).unwrap().abs() < Decimal::ONE,
            "{r:?}"
        );
    }
    // A higher threshold combines more.
    let coarse = form(Some(50.0)).await;
    assert!(count(&coarse, "statement") > count(&grouped, "statement"));
    assert_eq!(totals_8949(&coarse), totals_8949(&every));
    app.stop().await;
}

#[tokio::test]
async fn tax_arguments_with_a_csv_format_and_a_dust_threshold_off_the_8949_are_refused() {
    let (app, _p) = seeded().await;
    for format in ["csv", "positions_csv", "8949", "koinly", "cointracker"] {
        let result = report(
            &app,
            json!({"wallets": [OTHER], "format": format, "jurisdiction": "us"}),
        )
        .await;
        assert_eq!(
            result["structuredContent"]["code"], "invalid_params",
            "{format}: {result}"
        );
        let message = result["structuredContent"]["message"].as_str().unwrap();
        assert!(
            message.contains("json and pdf formats only"),
            "{format}: {message}"
        );
    }
    for format in ["json", "pdf", "csv"] {
        let result = report(
            &app,
            json!({"wallets": [OTHER], "format": format, "dust_threshold": 1}),
        )
        .await;
        assert_eq!(
            result["structuredContent"]["code"], "invalid_params",
            "{format}: {result}"
        );
        assert!(
            result["structuredContent"]["message"]
                .as_str()
                .unwrap()
                .contains("8949 only")
        );
    }
    // A negative threshold is refused by the schema (minimum 0).
    let response = app
        .client
        .get(app.url(&format!(
            "/v1/reports?wallets={OTHER}&format=8949&dust_threshold=-1"
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    // REST answers the same refusal.
    let response = app
        .client
        .get(app.url(&format!(
            "/v1/reports?wallets={OTHER}&format=koinly&tax_year=2025"
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    app.stop().await;
}
