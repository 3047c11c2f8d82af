//! The `tax` section of get_report (and get_positions) against the real
//! server: the taxpayer's books over several wallets (moves between own
//! wallets keep dates and bases and realize nothing), labels read on every
//! call (exchange out of the books, merchant a disposal), the UK's figures
//! in GBP through the ECB stand-in, the arguments refused naming what is
//! allowed, an ECB outage answered as such, and no `tax` key when no tax
//! argument is given.
//!
//! Prices: a stored daily SOL series, 100 USD a SOL before 1 June 2024,
//! 150 USD until the end of 2024, 200 USD until 31 May 2025 and 120 USD
//! from 1 June 2025, so every figure below is arithmetic on round numbers
//! (said at each assertion).

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{Value, json};
use server::{
    accounts::{self, AddressCategory, Scopes, TokenKind},
    ledger::{Counterparty, CounterpartyKind, Direction, Leg, OperationType},
    solana::WalletAddress,
};

use crate::{ecb_standin, helpers::TestApp};

pub(crate) const A: &str = "4kLALtynrmd6pU2LkGXZCmUaMDfsnVixs7SkLjPKNJQG";
const B: &str = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
/// Someone who sent SOL in, and someone it went out to.
pub(crate) const STRANGER: &str = "71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6";
const SHOP: &str = "GThUX1Atko4tqhN2NaiTazWSeFWMuiUvfFnyJyUghFMJ";

fn dec(v: &Value) -> Decimal {
    Decimal::from_str(v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))).unwrap()
}

fn d(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

/// Unix seconds of a UTC date at 12:00.
pub(crate) fn noon(date: &str) -> i64 {
    chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .unwrap()
        .and_hms_opt(12, 0, 0)
        .unwrap()
        .and_utc()
        .timestamp()
}

/// The stored SOL close of the day starting at `day`.
fn sol_close(day: i64) -> &'static str {
    if day < noon("2024-06-01") - 12 * 3600 {
        "100"
    } else if day < noon("2025-01-01") - 12 * 3600 {
        "150"
    } else if day < noon("2025-06-01") - 12 * 3600 {
        "200"
    } else {
        "120"
    }
}

/// A transaction: signature, time (0: none recorded), legs (operation,
/// lamports, counterparty).
type Tx<'a> = (&'a str, i64, Vec<(OperationType, i128, Option<&'a str>)>);

/// Record a completed scan of `wallet` holding `txs` (SOL legs only).
pub(crate) async fn seed(app: &TestApp, wallet: &str, txs: Vec<Tx<'_>>) {
    let legs: Vec<crate::helpers::SeededTx> = txs
        .into_iter()
        .enumerate()
        .map(|(i, (sig, t, legs))| {
            let slot = i as u64 + 1;
            let legs = legs
                .into_iter()
                .enumerate()
                .map(|(index, (op, amount, other))| Leg {
                    signature: sig.to_owned(),
                    slot,
                    block_time: (t != 0).then_some(t),
                    index: index as u32,
                    operation_type: op,
                    mint: "sol".to_owned(),
                    amount,
                    decimals: 9,
                    counterparties: other
                        .map(|address| Counterparty {
                            address: address.to_owned(),
                            direction: if amount > 0 {
                                Direction::In
                            } else {
                                Direction::Out
                            },
                            kind: CounterpartyKind::Wallet,
                        })
                        .into_iter()
                        .collect(),
                    position: None,
                    venue: None,
                    router: None,
                })
                .collect();
            (sig.to_owned(), slot, (t != 0).then_some(t), legs)
        })
        .collect();
    crate::helpers::seed_completed_scan(app, wallet, &legs).await;
}

pub(crate) const SOL: i128 = 1_000_000_000;

/// A server with the price and ECB stand-ins and the SOL series stored.
pub(crate) async fn app_with(
    ecb: Vec<ecb_standin::Day>,
) -> (
    TestApp,
    crate::price_standin::PriceStandIn,
    ecb_standin::EcbStandIn,
) {
    let prices = crate::price_standin::start().await;
    let ecb = ecb_standin::start(ecb).await;
    let (url, ecb_url) = (prices.url.clone(), ecb.url.clone());
    let app = crate::helpers::spawn_with(crate::helpers::Options {
        configure: Box::new(move |c| {
            crate::helpers::relaxed_limits(c);
            crate::price_standin::configure(c, &url);
            c.prices.ecb_url = ecb_url;
            c.worker.in_process = false;
        }),
        ..crate::helpers::Options::default()
    })
    .await;
    let (first, last) = (
        noon("2024-01-01") - 12 * 3600,
        noon("2026-01-01") - 12 * 3600,
    );
    let points: Vec<(i64, String)> = (first..last)
        .step_by(86_400)
        .map(|day| (day, sol_close(day).to_owned()))
        .collect();
    app.state
        .store()
        .store_price_range("sol", 86_400, (first, last), &points, "coinbase")
        .await
        .unwrap();
    (app, prices, ecb)
}

async fn call(app: &TestApp, tool: &str, args: Value, bearer: Option<&str>) -> Value {
    let auth = bearer.map(|b| format!("Bearer {b}"));
    let mut headers = vec![("mcp-protocol-version", "2025-06-18")];
    if let Some(auth) = &auth {
        headers.push(("authorization", auth));
    }
    let response = app
        .post_mcp(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
                    "params":{"name":tool,"arguments":args}}),
            &headers,
        )
        .await;
    let body: Value = response.json().await.unwrap();
    body["result"].clone()
}

fn ok(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"].clone()
}

fn refused(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    result["structuredContent"].clone()
}

/// A bought 10 SOL from a stranger on 10 January 2024 (at 100: 1,000 USD),
/// sent 4 to B on 1 August 2024 (one transaction, both sides carry its
/// signature; a 5,000-lamport fee), and B sent those 4 to a stranger on
/// 1 March 2025 (at 200: 800 USD).
async fn two_wallets(app: &TestApp) {
    use OperationType::*;
    seed(
        app,
        A,
        vec![
            (
                "a1",
                noon("2024-01-10"),
                vec![(TransferIn, 10 * SOL, Some(STRANGER))],
            ),
            (
                "m1",
                noon("2024-08-01"),
                vec![(TransferOut, -4 * SOL, Some(B)), (NetworkFee, -5000, None)],
            ),
        ],
    )
    .await;
    seed(
        app,
        B,
        vec![
            (
                "m1",
                noon("2024-08-01"),
                vec![(TransferIn, 4 * SOL, Some(A))],
            ),
            (
                "b2",
                noon("2025-03-01"),
                vec![(TransferOut, -4 * SOL, Some(STRANGER))],
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn a_move_between_two_own_wallets_realizes_nothing_and_the_lot_keeps_its_date() {
    let (app, _prices, _ecb) = app_with(Vec::new()).await;
    two_wallets(&app).await;

    // Without tax arguments the report is as it always was: no `tax` key.
    let plain = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A, B],"format":"json"}),
        None,
    )
    .await);
    assert!(plain.get("tax").is_none(), "{plain}");

    let report = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A, B],"format":"json","jurisdiction":"us"}),
        None,
    )
    .await);
    let tax = &report["tax"];
    assert_eq!(tax["jurisdiction"], "us");
    assert_eq!(tax["currency"], "USD");
    assert_eq!(tax["rates"], "none");
    assert_eq!(tax["matching"], "fifo");
    // The move: listed, not a disposal.
    assert_eq!(tax["moves"].as_array().unwrap().len(), 1, "{tax}");
    assert_eq!(tax["moves"][0]["signature"], "m1");
    assert_eq!(tax["moves"][0]["from"], A);
    assert_eq!(tax["moves"][0]["to"], B);
    assert_eq!(dec(&tax["moves"][0]["quantity"]), d("4"));
    let rows = tax["rows"].as_array().unwrap();
    // Two rows: the fee's SOL (a disposal of its own) and B's sale. No row
    // for the 4 SOL moved.
    assert_eq!(rows.len(), 2, "{tax}");
    assert!(
        rows.iter()
            .all(|r| dec(&r["quantity"]) != d("4") || r["wallet"] == B)
    );
    // The fee: 0.000005 SOL on 1 August 2024 at 150 = 0.00075 USD, cost
    // 0.000005 x 100 = 0.0005 from the January lot: gain 0.00025.
    let fee = &rows[0];
    assert_eq!(fee["wallet"], A);
    assert_eq!(dec(&fee["quantity"]), d("0.000005"));
    assert_eq!(dec(&fee["gain"]), d("0.00025"));
    // B's sale: the 4 SOL keep A's acquisition date (10 January 2024) and
    // cost (4 x 100 = 400), so the sale on 1 March 2025 at 800 is a
    // long-term gain of 800 - 400 = 400. (Were the move a sale and a
    // purchase, B's lot would date from 1 August 2024 at 4 x 150 = 600: a
    // short-term gain of 200.)
    let sale = &rows[1];
    assert_eq!(sale["wallet"], B);
    assert_eq!(sale["acquired"], "2024-01-10T12:00:00Z");
    assert_eq!(sale["tax_year"], "2025");
    assert_eq!(dec(&sale["proceeds"]), d("800"));
    assert_eq!(dec(&sale["cost"]), d("400"));
    assert_eq!(dec(&sale["gain"]), d("400"));
    assert_eq!(sale["rule"], "fifo");
    let years = tax["years"].as_array().unwrap();
    assert_eq!(years.len(), 2, "{tax}");
    assert_eq!(years[1]["tax_year"], "2025");
    assert_eq!(dec(&years[1]["long_term_gain"]), d("400"));
    assert_eq!(dec(&years[1]["short_term_gain"]), d("0"));
    assert_eq!(dec(&years[0]["short_term_gain"]), d("0.00025"));
    // The two transfers with strangers are unlabelled, with their totals:
    // 10 SOL in at 1,000 USD and 4 SOL out at 800 USD.
    let unlabelled = tax["unlabelled"].as_array().unwrap();
    assert_eq!(unlabelled.len(), 2, "{tax}");
    assert_eq!(unlabelled[0]["outgoing"], false);
    assert_eq!(dec(&unlabelled[0]["quantity"]), d("10"));
    assert_eq!(dec(&unlabelled[0]["value"]), d("1000"));
    assert_eq!(unlabelled[1]["outgoing"], true);
    assert_eq!(dec(&unlabelled[1]["value"]), d("800"));

    // One tax year: only its rows and summary.
    let year = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A, B],"format":"json","jurisdiction":"us","tax_year":"2025"}),
        None,
    )
    .await);
    assert_eq!(year["tax"]["tax_year"], "2025");
    assert_eq!(year["tax"]["rows"].as_array().unwrap().len(), 1);
    assert_eq!(year["tax"]["years"].as_array().unwrap().len(), 1);
    assert!(year["tax"]["moves"].as_array().unwrap().is_empty());
}

async fn account(app: &TestApp) -> (accounts::AccountId, String) {
    let account = accounts::create_account(app.state.store(), app.state.now_ms(), "tests")
        .await
        .unwrap();
    account_of(app, &account).await
}

/// A read token of `account`.
pub(crate) async fn account_of(
    app: &TestApp,
    account: &accounts::AccountId,
) -> (accounts::AccountId, String) {
    let store = app.state.store();
    let now = app.state.now_ms();
    let account = account.clone();
    let minted = accounts::mint(
        store,
        now,
        &account,
        TokenKind::Mcp,
        Scopes::parse("read").unwrap(),
        "tax test",
    )
    .await
    .unwrap();
    (account, minted.plaintext.clone())
}

async fn label(
    app: &TestApp,
    account: &accounts::AccountId,
    address: &str,
    category: AddressCategory,
) {
    accounts::set_address_label(
        app.state.store(),
        app.state.now_ms(),
        account,
        WalletAddress::parse(address).unwrap(),
        "label",
        category,
        100,
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn an_exchange_label_keeps_a_send_out_of_the_books_and_relabelling_as_merchant_makes_it_a_disposal()
 {
    let (app, _prices, _ecb) = app_with(Vec::new()).await;
    use OperationType::*;
    // A: 10 SOL in on 10 January 2024 (1,000 USD), 2 SOL to SHOP on
    // 1 July 2024 (at 150: 300 USD).
    seed(
        &app,
        A,
        vec![
            (
                "a1",
                noon("2024-01-10"),
                vec![(TransferIn, 10 * SOL, Some(STRANGER))],
            ),
            (
                "s1",
                noon("2024-07-01"),
                vec![(TransferOut, -2 * SOL, Some(SHOP))],
            ),
        ],
    )
    .await;
    let (account, bearer) = account(&app).await;
    accounts::watchlist::add_wallet(
        app.state.store(),
        app.state.now_ms(),
        &account,
        WalletAddress::parse(A).unwrap(),
        "",
    )
    .await
    .unwrap();
    let args = json!({"wallets":[A],"format":"json","jurisdiction":"us"});

    label(&app, &account, SHOP, AddressCategory::Exchange).await;
    let tax = ok(&call(&app, "get_report", args.clone(), Some(&bearer)).await)["tax"].clone();
    // To the exchange: the 2 SOL leave with their basis (2 x 100 = 200);
    // nothing is realized.
    assert!(tax["rows"].as_array().unwrap().is_empty(), "{tax}");
    assert_eq!(tax["transfers"][1]["counterparty"], "exchange");
    assert_eq!(tax["transfers"][1]["treatment"], "out_of_books");
    let at_exchange: Vec<&Value> = tax["holdings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["holder"] == "exchange")
        .collect();
    assert_eq!(at_exchange.len(), 1, "{tax}");
    assert_eq!(dec(&at_exchange[0]["quantity"]), d("2"));
    assert_eq!(dec(&at_exchange[0]["cost"]), d("200"));

    // Relabelled a merchant, the next read has the payment as a disposal:
    // proceeds 300, cost 200, gain 100 (short term).
    label(&app, &account, SHOP, AddressCategory::Merchant).await;
    let tax = ok(&call(&app, "get_report", args, Some(&bearer)).await)["tax"].clone();
    let rows = tax["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{tax}");
    assert_eq!(dec(&rows[0]["proceeds"]), d("300"));
    assert_eq!(dec(&rows[0]["cost"]), d("200"));
    assert_eq!(dec(&rows[0]["gain"]), d("100"));
    assert_eq!(tax["transfers"][1]["treatment"], "disposal");
    assert_eq!(tax["transfers"][1]["counterparty"], "merchant");
}

pub(crate) fn day(date: &str, usd: &str, gbp: &str) -> ecb_standin::Day {
    (
        date.to_owned(),
        vec![
            ("USD".to_owned(), usd.to_owned()),
            ("JPY".to_owned(), "160.00".to_owned()),
            ("GBP".to_owned(), gbp.to_owned()),
        ],
    )
}

/// A: 10 SOL in on 1 May 2024 (at 100: 1,000 USD) and 4 SOL out on
/// 1 July 2024 (at 150: 600 USD), no fees.
pub(crate) async fn uk_wallet(app: &TestApp) {
    use OperationType::*;
    seed(
        app,
        A,
        vec![
            (
                "u1",
                noon("2024-05-01"),
                vec![(TransferIn, 10 * SOL, Some(STRANGER))],
            ),
            (
                "u2",
                noon("2024-07-01"),
                vec![(TransferOut, -4 * SOL, Some(STRANGER))],
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn uk_figures_are_in_pounds_at_the_ecbs_rates_as_on_sa108() {
    // 1 May is a TARGET holiday: the ECB publishes nothing that day, so
    // 30 April's rates apply. 30 April: 1 EUR = 1.25 USD = 0.85 GBP, so
    // 1 USD = 0.85 / 1.25 = 0.68 GBP. 1 July: 1 EUR = 1.20 USD = 0.84 GBP,
    // so 1 USD = 0.70 GBP.
    let (app, _prices, ecb) = app_with(vec![
        day("2024-04-30", "1.2500", "0.85000"),
        day("2024-07-01", "1.2000", "0.84000"),
    ])
    .await;
    uk_wallet(&app).await;
    let report = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"uk","tax_year":"2024-25"}),
        None,
    )
    .await);
    let tax = &report["tax"];
    assert_eq!(tax["currency"], "GBP");
    assert_eq!(tax["rates"], "ecb");
    assert_eq!(tax["matching"], "share_matching");
    // The Section 104 pool: 10 SOL costing 1,000 x 0.68 = 680 GBP. The
    // disposal of 4 (no acquisition that day or in the 30 days after, so
    // neither same-day nor bed-and-breakfast matching, CG51560): proceeds
    // 600 x 0.70 = 420 GBP, allowable cost 680 x 4 / 10 = 272 GBP, gain
    // 420 - 272 = 148 GBP, in the tax year 6 April 2024 to 5 April 2025.
    let rows = tax["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{tax}");
    assert_eq!(rows[0]["rule"], "section_104");
    assert_eq!(rows[0]["acquired"], "pool");
    assert_eq!(dec(&rows[0]["proceeds"]), d("420"));
    assert_eq!(dec(&rows[0]["cost"]), d("272"));
    assert_eq!(dec(&rows[0]["gain"]), d("148"));
    let year = &tax["years"][0];
    assert_eq!(year["jurisdiction"], "uk");
    assert_eq!(year["tax_year"], "2024-25");
    assert_eq!(year["disposals"], 1);
    assert_eq!(dec(&year["proceeds"]), d("420"));
    assert_eq!(dec(&year["allowable_costs"]), d("272"));
    assert_eq!(dec(&year["gains"]), d("148"));
    assert_eq!(dec(&year["losses"]), d("0"));
    // What is left in the pool: 6 SOL costing 680 - 272 = 408 GBP.
    let pool = &tax["holdings"][0];
    assert_eq!(dec(&pool["quantity"]), d("6"));
    assert_eq!(dec(&pool["cost"]), d("408"));
    // The rates were fetched once and stored: a second report asks no more.
    let fetched = ecb.state.requests.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(fetched, 1);
    let again = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"uk"}),
        None,
    )
    .await);
    assert_eq!(again["tax"]["rows"], tax["rows"]);
    assert_eq!(
        ecb.state.requests.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    let stored = app
        .state
        .store()
        .price_points(
            "ecb:GBP",
            86_400,
            noon("2024-04-30") - 43_200,
            noon("2024-04-30"),
        )
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(dec(&json!(stored[0].close)), d("0.85"));
}

#[tokio::test]
async fn get_positions_takes_the_same_tax_arguments() {
    let (app, _prices, _ecb) = app_with(vec![
        day("2024-04-30", "1.2500", "0.85000"),
        day("2024-07-01", "1.2000", "0.84000"),
    ])
    .await;
    uk_wallet(&app).await;
    let plain = ok(&call(&app, "get_positions", json!({"address": A}), None).await);
    assert!(plain.get("tax").is_none());
    let positions = ok(&call(
        &app,
        "get_positions",
        json!({"address": A, "jurisdiction": "uk"}),
        None,
    )
    .await);
    // As the report's: the pool keeps 6 SOL at 408 GBP, the gain is 148.
    assert_eq!(dec(&positions["tax"]["holdings"][0]["cost"]), d("408"));
    assert_eq!(dec(&positions["tax"]["years"][0]["gains"]), d("148"));
    // The same over REST.
    let rest: Value = app
        .client
        .get(format!(
            "{}/v1/wallets/{A}/positions?jurisdiction=uk",
            app.base
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rest["tax"], positions["tax"]);
}

#[tokio::test]
async fn an_ecb_outage_is_answered_unavailable_never_a_zero_rate() {
    let (app, _prices, ecb) = app_with(vec![day("2024-04-30", "1.25", "0.85")]).await;
    uk_wallet(&app).await;
    ecb.state
        .failing
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let err = refused(
        &call(
            &app,
            "get_report",
            json!({"wallets":[A],"format":"json","jurisdiction":"uk"}),
            None,
        )
        .await,
    );
    assert_eq!(err["code"], "unavailable", "{err}");
    assert!(err["message"].as_str().unwrap().contains("ECB"), "{err}");
    // USD needs no rates: the same books answer in dollars.
    ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"us"}),
        None,
    )
    .await);
}

/// A server whose `prices.ecb_url` is `ecb_url`.
async fn app_with_ecb_url(ecb_url: String) -> (TestApp, crate::price_standin::PriceStandIn) {
    let prices = crate::price_standin::start().await;
    let url = prices.url.clone();
    let app = crate::helpers::spawn_with(crate::helpers::Options {
        configure: Box::new(move |c| {
            crate::helpers::relaxed_limits(c);
            crate::price_standin::configure(c, &url);
            c.prices.ecb_url = ecb_url;
            c.worker.in_process = false;
        }),
        ..crate::helpers::Options::default()
    })
    .await;
    (app, prices)
}

#[tokio::test]
async fn an_unreachable_ecb_names_neither_its_url_nor_the_credentials_in_it() {
    // Nothing listens on port 9 of loopback; the URL carries a password
    // and a key, which no answer may repeat.
    let (app, _prices) =
        app_with_ecb_url("http://user:s3cret@127.0.0.1:9/x.xml?key=s3cretkey".to_owned()).await;
    uk_wallet(&app).await;
    let err = refused(
        &call(
            &app,
            "get_report",
            json!({"wallets":[A],"format":"json","jurisdiction":"uk"}),
            None,
        )
        .await,
    );
    assert_eq!(err["code"], "unavailable", "{err}");
    let text = err.to_string();
    assert!(text.contains("ECB"), "{err}");
    for secret in ["s3cret", "127.0.0.1", "x.xml", "user"] {
        assert!(!text.contains(secret), "{secret} leaked: {err}");
    }
}

#[tokio::test]
async fn concurrent_tax_calls_fetch_the_ecb_document_once() {
    let (app, _prices, ecb) = app_with(vec![
        day("2024-04-30", "1.2500", "0.85000"),
        day("2024-07-01", "1.2000", "0.84000"),
    ])
    .await;
    uk_wallet(&app).await;
    let calls = (0..8).map(|_| {
        call(
            &app,
            "get_report",
            json!({"wallets":[A],"format":"json","jurisdiction":"uk"}),
            None,
        )
    });
    for result in futures_util::future::join_all(calls).await {
        ok(&result);
    }
    assert_eq!(
        ecb.state.requests.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "eight calls at once, one download"
    );
}

#[tokio::test]
async fn a_failing_ecb_is_not_asked_again_during_its_cool_down() {
    let (app, _prices, ecb) = app_with(vec![day("2024-04-30", "1.25", "0.85")]).await;
    uk_wallet(&app).await;
    ecb.state
        .failing
        .store(true, std::sync::atomic::Ordering::SeqCst);
    for _ in 0..3 {
        let err = refused(
            &call(
                &app,
                "get_report",
                json!({"wallets":[A],"format":"json","jurisdiction":"uk"}),
                None,
            )
            .await,
        );
        assert_eq!(err["code"], "unavailable", "{err}");
    }
    // The default breaker opens after its configured failures; however
    // many that is, three calls never make more than that many requests.
    let asked = ecb.state.requests.load(std::sync::atomic::Ordering::SeqCst);
    let threshold = server::config::Config::default().prices.breaker_failures as usize;
    assert!(
        asked <= threshold.max(1),
        "{asked} requests for 3 calls with a breaker opening after {threshold}"
    );
}

#[tokio::test]
async fn an_oversized_ecb_document_is_refused_and_nothing_is_stored() {
    let (app, _prices, ecb) = app_with(vec![day("2024-04-30", "1.25", "0.85")]).await;
    uk_wallet(&app).await;
    ecb.state
        .oversized
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let err = refused(
        &call(
            &app,
            "get_report",
            json!({"wallets":[A],"format":"json","jurisdiction":"uk"}),
            None,
        )
        .await,
    );
    assert_eq!(err["code"], "unavailable", "{err}");
    let stored = app
        .state
        .store()
        .price_points("ecb:USD", 86_400, 0, i64::MAX / 2)
        .await
        .unwrap();
    assert!(stored.is_empty(), "{} rates stored", stored.len());
}

#[tokio::test]
async fn unknown_jurisdictions_currencies_and_tax_years_are_refused_naming_the_allowed_values() {
    let (app, _prices, _ecb) = app_with(Vec::new()).await;
    uk_wallet(&app).await;
    for (args, names) in [
        (json!({"jurisdiction":"fr"}), "us, uk, ca, de, au"),
        (json!({"currency":"JPY"}), "USD, GBP, EUR, CAD, AUD"),
        (json!({"tax_year":"last"}), "2024-25"),
        (json!({"jurisdiction":"uk","tax_year":"2024"}), "2024-25"),
        (
            json!({"jurisdiction":"us","tax_year":"2024-25"}),
            "write 2024",
        ),
        (
            json!({"jurisdiction":"uk","method":"fifo"}),
            "not accepted in uk",
        ),
        (
            json!({"jurisdiction":"us","method":"average"}),
            "not accepted in us",
        ),
        (
            json!({"jurisdiction":"uk","format":"csv"}),
            "json and pdf formats only",
        ),
        // The Freigrenze is 1,000 EUR (EStG §23 Abs. 3 S. 5): 10 SOL bought
        // for 1,250 USD at 1.25 (1,000 EUR), sold for 2,316 USD at 1.20
        // (1,930 EUR) gain 930 EUR, under the limit, tax-free; in USD the
        // same gain is 1,066 and would wrongly reach "1,000": refused.
        (
            json!({"jurisdiction":"de","currency":"USD"}),
            "Freigrenze of EStG §23 Abs. 3 S. 5",
        ),
        (json!({"jurisdiction":"de","currency":"GBP"}), "in euros"),
    ] {
        let mut full = json!({"wallets":[A],"format":"json"});
        for (k, v) in args.as_object().unwrap() {
            full[k] = v.clone();
        }
        let err = refused(&call(&app, "get_report", full, None).await);
        assert_eq!(err["code"], "invalid_params", "{args}: {err}");
        assert!(
            err["message"].as_str().unwrap().contains(names),
            "{args}: {err}"
        );
    }
    // REST answers the same refusal.
    let response = app
        .client
        .get(format!(
            "{}/v1/reports?wallets={A}&format=json&jurisdiction=fr",
            app.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "invalid_params");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("us, uk, ca, de, au")
    );
}

#[tokio::test]
async fn germany_in_euros_a_gain_within_one_year_under_the_exemption_limit_is_not_taxed() {
    // The UK wallet's two days: 30 April 1 EUR = 1.25 USD (1 May, a TARGET
    // holiday, takes it), 1 July 1 EUR = 1.20 USD.
    let (app, _prices, _ecb) = app_with(vec![
        day("2024-04-30", "1.2500", "0.85000"),
        day("2024-07-01", "1.2000", "0.84000"),
    ])
    .await;
    uk_wallet(&app).await;
    let tax = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"de","tax_year":"2024"}),
        None,
    )
    .await)["tax"]
        .clone();
    assert_eq!(tax["currency"], "EUR");
    // Bought 1,000 USD / 1.25 = 800 EUR for 10 SOL; sold 4 for 600 USD /
    // 1.20 = 500 EUR two months later (FIFO, BMF 10 May 2022 Rn. 61): cost
    // 800 x 4 / 10 = 320 EUR, gain 180 EUR, held one year or less, so a
    // private sale (EStG §23 Abs. 1 S. 1 Nr. 2). The 2024 Freigrenze is
    // 1,000 EUR (§23 Abs. 3 S. 5): 180 is below it, so nothing is taxable.
    let rows = tax["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{tax}");
    assert_eq!(rows[0]["rule"], "held_1y_or_less");
    assert_eq!(dec(&rows[0]["proceeds"]), d("500"));
    assert_eq!(dec(&rows[0]["cost"]), d("320"));
    assert_eq!(dec(&rows[0]["gain"]), d("180"));
    let year = &tax["years"][0];
    assert_eq!(year["jurisdiction"], "de");
    assert_eq!(dec(&year["gain_within_one_year"]), d("180"));
    assert_eq!(dec(&year["gain_after_one_year"]), d("0"));
    assert_eq!(dec(&year["exemption_limit"]), d("1000"));
    assert_eq!(dec(&year["taxable_gain"]), d("0"));
}

#[tokio::test]
async fn australia_in_dollars_halves_a_gain_on_an_asset_held_twelve_months() {
    use OperationType::*;
    // 10 January 2024: 1 EUR = 1.10 USD = 1.65 AUD, so 1 USD = 1.5 AUD.
    // 1 March 2025 is a Saturday: Friday 28 February's rates apply,
    // 1 EUR = 1.04 USD = 1.664 AUD, so 1 USD = 1.6 AUD.
    let aud = |date: &str, usd: &str, aud: &str| {
        (
            date.to_owned(),
            vec![
                ("USD".to_owned(), usd.to_owned()),
                ("AUD".to_owned(), aud.to_owned()),
            ],
        )
    };
    let (app, _prices, _ecb) = app_with(vec![
        aud("2024-01-10", "1.1000", "1.6500"),
        aud("2025-02-28", "1.0400", "1.6640"),
    ])
    .await;
    seed(
        &app,
        A,
        vec![
            (
                "x1",
                noon("2024-01-10"),
                vec![(TransferIn, 10 * SOL, Some(STRANGER))],
            ),
            (
                "x2",
                noon("2025-03-01"),
                vec![(TransferOut, -4 * SOL, Some(STRANGER))],
            ),
        ],
    )
    .await;
    let tax = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"au","tax_year":"2024-25"}),
        None,
    )
    .await)["tax"]
        .clone();
    assert_eq!(tax["currency"], "AUD");
    // Cost 1,000 USD x 1.5 = 1,500 AUD for 10 SOL, 600 AUD for the 4 sold;
    // proceeds 800 USD x 1.6 = 1,280 AUD; gain 680 AUD. Held from
    // 10 January 2024 to 1 March 2025, at least 12 months (ITAA 1997
    // s.115-25), so discountable: the net capital gain is half, 340 AUD
    // (s.115-100), in the income year 1 July 2024 to 30 June 2025.
    let rows = tax["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{tax}");
    assert_eq!(rows[0]["rule"], "discount");
    assert_eq!(rows[0]["tax_year"], "2024-25");
    assert_eq!(dec(&rows[0]["proceeds"]), d("1280"));
    assert_eq!(dec(&rows[0]["cost"]), d("600"));
    assert_eq!(dec(&rows[0]["gain"]), d("680"));
    let year = &tax["years"][0];
    assert_eq!(year["jurisdiction"], "au");
    assert_eq!(dec(&year["discountable_gains"]), d("680"));
    assert_eq!(dec(&year["other_gains"]), d("0"));
    assert_eq!(dec(&year["net_capital_gain"]), d("340"));
}

#[tokio::test]
async fn canada_in_dollars_denies_a_superficial_loss_and_adds_it_to_the_replacement_cost() {
    use OperationType::*;
    // 1 EUR = 1.00 USD = 1.50 CAD on every day used, so 1 USD = 1.5 CAD.
    let cad = |date: &str| {
        (
            date.to_owned(),
            vec![
                ("USD".to_owned(), "1.0000".to_owned()),
                ("CAD".to_owned(), "1.5000".to_owned()),
            ],
        )
    };
    let (app, _prices, _ecb) = app_with(vec![
        cad("2025-03-10"),
        cad("2025-06-10"),
        cad("2025-06-20"),
    ])
    .await;
    // 10 SOL bought on 10 March 2025 at 200 (2,000 USD = 3,000 CAD), all
    // sold on 10 June at 120 (1,200 USD = 1,800 CAD), 10 bought back on
    // 20 June at 120 (1,800 CAD) and still held 30 days after the sale.
    seed(
        &app,
        A,
        vec![
            (
                "c1",
                noon("2025-03-10"),
                vec![(TransferIn, 10 * SOL, Some(STRANGER))],
            ),
            (
                "c2",
                noon("2025-06-10"),
                vec![(TransferOut, -10 * SOL, Some(STRANGER))],
            ),
            (
                "c3",
                noon("2025-06-20"),
                vec![(TransferIn, 10 * SOL, Some(STRANGER))],
            ),
        ],
    )
    .await;
    let tax = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"ca","tax_year":"2025"}),
        None,
    )
    .await)["tax"]
        .clone();
    assert_eq!(tax["currency"], "CAD");
    assert_eq!(tax["matching"], "adjusted_cost_base");
    // The loss of 3,000 - 1,800 = 1,200 CAD is superficial: the same
    // property was bought within 30 days after the disposition and held at
    // the end of that period (ITA s.54 "superficial loss"), so it is nil
    // (s.40(2)(g)(i)) and added to the replacement's cost (s.53(1)(f)):
    // 1,800 + 1,200 = 3,000 CAD for the 10 SOL now held.
    let rows = tax["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{tax}");
    assert_eq!(rows[0]["rule"], "superficial_loss");
    assert_eq!(dec(&rows[0]["proceeds"]), d("1800"));
    assert_eq!(dec(&rows[0]["gain"]), d("0"));
    let year = &tax["years"][0];
    assert_eq!(year["jurisdiction"], "ca");
    assert_eq!(dec(&year["superficial_losses"]), d("1200"));
    assert_eq!(dec(&year["gain"]), d("0"));
    assert_eq!(dec(&year["taxable_capital_gain"]), d("0"));
    let held = &tax["holdings"][0];
    assert_eq!(dec(&held["quantity"]), d("10"));
    assert_eq!(dec(&held["cost"]), d("3000"));
}

#[tokio::test]
async fn a_send_to_a_watched_wallet_outside_the_report_is_no_disposal() {
    let (app, _prices, _ecb) = app_with(Vec::new()).await;
    two_wallets(&app).await;
    let args = json!({"wallets":[A],"format":"json","jurisdiction":"us","tax_year":"2024"});
    // Anonymous, B is a stranger: the 4 SOL sent on 1 August 2024 are a
    // disposal at 4 x 150 = 600, less the transaction's fee (0.000005 SOL
    // x 150 = 0.00075, a cost of its first disposal: cost-basis.md), so
    // 599.99925, against a cost of 400: a gain of 199.99925.
    let anonymous = ok(&call(&app, "get_report", args.clone(), None).await)["tax"].clone();
    let sale = anonymous["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| dec(&r["quantity"]) == d("4"))
        .cloned()
        .unwrap_or_else(|| panic!("{anonymous}"));
    assert_eq!(dec(&sale["gain"]), d("199.99925"));
    // An account watching A and B: B is the taxpayer's, so the send leaves
    // the books at its basis (400) and is not realized.
    let (account, bearer) = account(&app).await;
    for wallet in [A, B] {
        accounts::watchlist::add_wallet(
            app.state.store(),
            app.state.now_ms(),
            &account,
            WalletAddress::parse(wallet).unwrap(),
            "",
        )
        .await
        .unwrap();
    }
    let tax = ok(&call(&app, "get_report", args, Some(&bearer)).await)["tax"].clone();
    let rows = tax["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| dec(&r["quantity"]) != d("4")), "{tax}");
    let sent = tax["transfers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["signature"] == "m1")
        .cloned()
        .unwrap_or_else(|| panic!("{tax}"));
    assert_eq!(sent["counterparty"], "own_wallet");
    assert_eq!(sent["treatment"], "out_of_books");
    let away: Vec<&Value> = tax["holdings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["holder"] == "exchange")
        .collect();
    assert_eq!(dec(&away[0]["cost"]), d("400"), "{tax}");
}

#[tokio::test]
async fn a_uk_tax_year_matches_a_buy_back_in_the_30_days_after_the_reports_end() {
    use OperationType::*;
    // 30 April 2024 (1 May is a TARGET holiday): 1 EUR = 1.25 USD =
    // 1.25 GBP, so 1 USD = 1 GBP. 1 April 2025: 1 EUR = 1.00 USD = 1.50
    // GBP, so 1 USD = 1.5 GBP. 10 April 2025: 1 EUR = 1.00 USD = 1.20 GBP,
    // so 1 USD = 1.2 GBP.
    let (app, _prices, _ecb) = app_with(vec![
        day("2024-04-30", "1.2500", "1.25000"),
        day("2025-04-01", "1.0000", "1.50000"),
        day("2025-04-10", "1.0000", "1.20000"),
    ])
    .await;
    // 10 SOL bought 1 May 2024 at 100 (1,000 USD = 1,000 GBP); 5 sold
    // 1 April 2025 at 200 (1,000 USD = 1,500 GBP); 5 bought back
    // 10 April 2025 at 200 (1,000 USD = 1,200 GBP), after the tax year's
    // end (5 April) and the report's `to`.
    seed(
        &app,
        A,
        vec![
            (
                "k1",
                noon("2024-05-01"),
                vec![(TransferIn, 10 * SOL, Some(STRANGER))],
            ),
            (
                "k2",
                noon("2025-04-01"),
                vec![(TransferOut, -5 * SOL, Some(STRANGER))],
            ),
            (
                "k3",
                noon("2025-04-10"),
                vec![(TransferIn, 5 * SOL, Some(STRANGER))],
            ),
        ],
    )
    .await;
    let tax = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"uk","tax_year":"2024-25",
               "to":"2025-04-05"}),
        None,
    )
    .await)["tax"]
        .clone();
    // The 5 bought within 30 days after the sale are matched first (TCGA
    // 1992 s.106A(5), CG51560, CRYPTO22255): proceeds 1,500 GBP, cost
    // 1,200 GBP, gain 300 GBP. (Stopping at `to`, the pool's 1,000 x 5/10
    // = 500 GBP would be matched: a gain of 1,000 GBP.)
    let rows = tax["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{tax}");
    assert_eq!(rows[0]["rule"], "bed_and_breakfast");
    assert_eq!(dec(&rows[0]["proceeds"]), d("1500"));
    assert_eq!(dec(&rows[0]["cost"]), d("1200"));
    assert_eq!(dec(&rows[0]["gain"]), d("300"));
    let years = tax["years"].as_array().unwrap();
    assert_eq!(years.len(), 1, "{tax}");
    assert_eq!(dec(&years[0]["gains"]), d("300"));
}

#[tokio::test]
async fn a_leg_with_no_block_time_is_left_out_of_the_tax_section_and_listed() {
    use OperationType::*;
    let (app, _prices, _ecb) = app_with(Vec::new()).await;
    // The UK wallet's 10 SOL in on 1 May 2024 (at 100) and 4 out on 1 July
    // (at 150), and 1 SOL in with no block time recorded.
    seed(
        &app,
        A,
        vec![
            ("x0", 0, vec![(TransferIn, SOL, Some(STRANGER))]),
            (
                "u1",
                noon("2024-05-01"),
                vec![(TransferIn, 10 * SOL, Some(STRANGER))],
            ),
            (
                "u2",
                noon("2024-07-01"),
                vec![(TransferOut, -4 * SOL, Some(STRANGER))],
            ),
        ],
    )
    .await;
    let tax = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"us"}),
        None,
    )
    .await)["tax"]
        .clone();
    assert_eq!(tax["undated"]["count"], 1, "{tax}");
    assert_eq!(tax["undated"]["signatures"], json!(["x0"]));
    // No 1970 lot first in FIFO: the 4 sold come from 1 May's lot, cost
    // 4 x 100 = 400 USD, proceeds 4 x 150 = 600, gain 200; 6 SOL held.
    let rows = tax["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{tax}");
    assert_eq!(rows[0]["acquired"], "2024-05-01T12:00:00Z");
    assert_eq!(dec(&rows[0]["quantity"]), d("4"));
    assert_eq!(dec(&rows[0]["gain"]), d("200"));
    assert_eq!(dec(&tax["holdings"][0]["quantity"]), d("6"));
}

#[tokio::test]
async fn get_positions_reads_the_accounts_other_wallets_so_a_send_between_them_is_a_move() {
    let (app, _prices, _ecb) = app_with(Vec::new()).await;
    two_wallets(&app).await;
    let positions = |address: &'static str, bearer: Option<String>| {
        let app = &app;
        async move {
            ok(&call(
                app,
                "get_positions",
                json!({"address": address, "jurisdiction": "us"}),
                bearer.as_deref(),
            )
            .await)["tax"]
                .clone()
        }
    };
    // Anonymous, B's receive from A is a purchase at market value: 4 SOL
    // on 1 August 2024 at 150 = 600, sold on 1 March 2025 at 4 x 200 = 800,
    // a short-term gain of 200 (held seven months).
    let alone = positions(B, None).await;
    assert!(alone.get("other_wallets").is_none(), "{alone}");
    let rows = alone["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{alone}");
    assert_eq!(rows[0]["acquired"], "2024-08-01T12:00:00Z");
    assert_eq!(dec(&rows[0]["cost"]), d("600"));
    assert_eq!(dec(&rows[0]["gain"]), d("200"));

    // An account watching A only, and labelling B own_wallet: each wallet's
    // positions read the other's legs, as a report naming both would.
    let (account, bearer) = account(&app).await;
    accounts::watchlist::add_wallet(
        app.state.store(),
        app.state.now_ms(),
        &account,
        WalletAddress::parse(A).unwrap(),
        "",
    )
    .await
    .unwrap();
    label(&app, &account, B, AddressCategory::OwnWallet).await;

    // B: the 4 SOL came from A, so they keep A's date (10 January 2024)
    // and cost (4 x 100 = 400): the sale at 800 is a long-term gain of 400,
    // the same row as in the report over [A, B].
    let b = positions(B, Some(bearer.clone())).await;
    assert_eq!(b["other_wallets"], json!([A]), "{b}");
    let rows = b["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "only B's rows: {b}");
    assert_eq!(rows[0]["wallet"], B);
    assert_eq!(rows[0]["acquired"], "2024-01-10T12:00:00Z");
    assert_eq!(dec(&rows[0]["proceeds"]), d("800"));
    assert_eq!(dec(&rows[0]["cost"]), d("400"));
    assert_eq!(dec(&rows[0]["gain"]), d("400"));
    assert_eq!(b["moves"][0]["from"], A);
    assert_eq!(b["moves"][0]["to"], B);
    // B's year figures are its rows': 2025 long term 400, nothing short.
    let years = b["years"].as_array().unwrap();
    assert_eq!(years.len(), 1, "{b}");
    assert_eq!(years[0]["tax_year"], "2025");
    assert_eq!(dec(&years[0]["long_term_gain"]), d("400"));
    assert_eq!(dec(&years[0]["short_term_gain"]), d("0"));
    // Its transfers: the sale to the stranger only (the receive is the move).
    let transfers = b["transfers"].as_array().unwrap();
    assert_eq!(transfers.len(), 1, "{b}");
    assert_eq!(transfers[0]["signature"], "b2");

    // A: the send is a move, not a transfer out of the books; the only row
    // is the fee (0.000005 SOL at 150 = 0.00075 against 0.000005 x 100 =
    // 0.0005: gain 0.00025); A holds 10 - 4 - 0.000005 = 5.999995 SOL at
    // 5.999995 x 100 = 599.9995, and nothing is at an exchange.
    let a = positions(A, Some(bearer)).await;
    assert_eq!(a["other_wallets"], json!([B]), "{a}");
    assert_eq!(a["moves"].as_array().unwrap().len(), 1, "{a}");
    assert_eq!(a["moves"][0]["signature"], "m1");
    let rows = a["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{a}");
    assert_eq!(dec(&rows[0]["quantity"]), d("0.000005"));
    assert_eq!(dec(&rows[0]["gain"]), d("0.00025"));
    assert!(
        a["transfers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["signature"] != "m1"),
        "{a}"
    );
    let holdings = a["holdings"].as_array().unwrap();
    assert_eq!(holdings.len(), 1, "{a}");
    assert_eq!(holdings[0]["holder"], A);
    assert_eq!(dec(&holdings[0]["quantity"]), d("5.999995"));
    assert_eq!(dec(&holdings[0]["cost"]), d("599.9995"));
}

/// `POST /v1/settings/tax` with `body`, answered 200.
async fn set_defaults(app: &TestApp, bearer: &str, body: Value) -> Value {
    let response = app
        .client
        .post(format!("{}/v1/settings/tax", app.base))
        .bearer_auth(bearer)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    body
}

#[tokio::test]
async fn an_accounts_tax_defaults_ask_for_the_section_and_a_calls_arguments_win() {
    let (app, _prices, _ecb) = app_with(vec![
        day("2024-04-30", "1.2500", "0.85000"),
        day("2024-07-01", "1.2000", "0.84000"),
    ])
    .await;
    uk_wallet(&app).await;
    let (_account, bearer) = account(&app).await;
    // No defaults yet: a signed-in call without tax arguments is as it was.
    let before = ok(&call(&app, "get_positions", json!({"address": A}), Some(&bearer)).await);
    assert!(before.get("tax").is_none(), "{before}");

    let set = set_defaults(&app, &bearer, json!({"jurisdiction": "uk"})).await;
    assert_eq!(set["jurisdiction"], "uk");
    assert_eq!(set["currency"], "GBP", "the jurisdiction's own");
    assert_eq!(set["unlabelled"], "at_market_value");

    // The defaults alone ask for the UK section in GBP: the same figures
    // as get_positions_takes_the_same_tax_arguments (10 SOL at 1,000 USD x
    // 0.68 = 680 GBP; 4 sold at 600 USD x 0.70 = 420 GBP against 4/10 of
    // 680 = 272: a gain of 148; the pool keeps 680 - 272 = 408). The
    // report's `method` (fifo by default) gives way to share matching.
    let positions = ok(&call(&app, "get_positions", json!({"address": A}), Some(&bearer)).await);
    assert_eq!(positions["tax"]["jurisdiction"], "uk");
    assert_eq!(positions["tax"]["currency"], "GBP");
    assert_eq!(dec(&positions["tax"]["years"][0]["gains"]), d("148"));
    let report = ok(&call(
        &app,
        "get_report",
        json!({"wallets": [A], "format": "json", "method": "fifo"}),
        Some(&bearer),
    )
    .await);
    assert_eq!(report["tax"]["matching"], "share_matching");
    assert_eq!(dec(&report["tax"]["holdings"][0]["cost"]), d("408"));
    // A format that does not carry the section is not refused for them.
    let csv = call(
        &app,
        "get_report",
        json!({"wallets": [A], "format": "csv"}),
        Some(&bearer),
    )
    .await;
    assert_eq!(csv["isError"], false, "{csv}");
    // Anonymous callers have no defaults.
    let anonymous = ok(&call(&app, "get_positions", json!({"address": A}), None).await);
    assert!(anonymous.get("tax").is_none());
    // A call's own jurisdiction wins, in its own currency (US: USD; the
    // sale at 600 against 4 x 100 = 400: a short-term gain of 200).
    let us = ok(&call(
        &app,
        "get_positions",
        json!({"address": A, "jurisdiction": "us"}),
        Some(&bearer),
    )
    .await);
    assert_eq!(us["tax"]["currency"], "USD");
    assert_eq!(dec(&us["tax"]["years"][0]["short_term_gain"]), d("200"));
    // A tax year alone takes the stored jurisdiction.
    let year = ok(&call(
        &app,
        "get_positions",
        json!({"address": A, "tax_year": "2024-25"}),
        Some(&bearer),
    )
    .await);
    assert_eq!(year["tax"]["jurisdiction"], "uk");

    // Over REST, with the unlabelled treatment: out of the books, so the
    // 4 SOL sent to a stranger realize nothing and leave at basis.
    let rest = set_defaults(
        &app,
        &bearer,
        json!({"jurisdiction": "us", "unlabelled": "out_of_books"}),
    )
    .await;
    assert_eq!(rest["currency"], "USD", "{rest}");
    assert_eq!(rest["unlabelled"], "out_of_books");
    let out = ok(&call(&app, "get_positions", json!({"address": A}), Some(&bearer)).await);
    let sent = out["tax"]["transfers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["signature"] == "u2")
        .cloned()
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(sent["treatment"], "out_of_books");
    assert!(out["tax"]["rows"].as_array().unwrap().is_empty(), "{out}");

    // A currency with no jurisdiction is refused; nothing at all removes
    // the defaults, and calls read as before.
    let bad = app
        .client
        .post(format!("{}/v1/settings/tax", app.base))
        .bearer_auth(&bearer)
        .json(&json!({"currency": "EUR"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), reqwest::StatusCode::BAD_REQUEST);
    let bad: Value = bad.json().await.unwrap();
    assert_eq!(bad["code"], "invalid_params");
    let cleared = set_defaults(&app, &bearer, json!({})).await;
    assert_eq!(cleared["jurisdiction"], Value::Null);
    let read: Value = app
        .client
        .get(format!("{}/v1/settings/tax", app.base))
        .bearer_auth(&bearer)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(read, cleared);
    // Anonymous: no account to keep defaults for.
    let anonymous = app
        .client
        .post(format!("{}/v1/settings/tax", app.base))
        .json(&json!({"jurisdiction": "uk"}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), reqwest::StatusCode::UNAUTHORIZED);
    let after = ok(&call(&app, "get_positions", json!({"address": A}), Some(&bearer)).await);
    assert!(after.get("tax").is_none(), "{after}");
    assert_eq!(after, before);
}

#[tokio::test]
async fn a_uk_pdf_shows_the_sa108_figures_in_pounds_and_each_disposals_rule() {
    // The same days and rates as the json test above: proceeds 600 USD at
    // 0.70 = 420 GBP, allowable cost 1,000 USD at 0.68 x 4/10 = 272 GBP,
    // gain 148 GBP, matched by the Section 104 pool (CG51560).
    let (app, _prices, _ecb) = app_with(vec![
        day("2024-04-30", "1.2500", "0.85000"),
        day("2024-07-01", "1.2000", "0.84000"),
    ])
    .await;
    uk_wallet(&app).await;
    let response = app
        .client
        .get(format!(
            "{}/v1/reports?wallets={A}&format=pdf&jurisdiction=uk&tax_year=2024-25",
            app.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let pdf = response.bytes().await.unwrap();
    if let Ok(dir) = std::env::var("LEDGER_PDF_OUT") {
        std::fs::write(format!("{dir}/uk.pdf"), &pdf).unwrap();
    }
    let Some(text) = crate::reports::pdftotext(&pdf) else {
        return;
    };
    let cover = text.split('\u{c}').next().unwrap();
    for (label, value) in [
        ("Number of disposals", "1"),
        ("Disposal proceeds", "420.00 GBP"),
        ("Allowable costs", "272.00 GBP"),
        ("Gains in the year", "148.00 GBP"),
        ("Losses in the year", "0.00 GBP"),
    ] {
        let line = cover
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("no {label} on the cover:\n{cover}"));
        assert!(line.trim_end().ends_with(value), "{line}");
    }
    assert!(
        cover.contains("Tax year 2024-25: United Kingdom terms, in GBP"),
        "{cover}"
    );
    assert!(cover.contains("United Kingdom, GBP"), "{cover}");
    let rule = text
        .lines()
        .find(|l| l.contains("Section 104"))
        .unwrap_or_else(|| panic!("no Section 104 row:\n{text}"));
    for cell in ["2024-07-01", "pool", "420.00", "272.00", "148.00"] {
        assert!(rule.contains(cell), "{cell} not in {rule}");
    }
}

/// Staking income by the jurisdiction's own tax year, in its currency:
/// 1 SOL of rewards on 3 April 2024 (at 100 USD; that day 1 EUR = 1.25
/// USD = 0.85 GBP, so 1 USD = 0.68 GBP: 68 GBP, UK tax year 2023-24,
/// which ends on 5 April) and 2 SOL on 1 July 2024 (at 150 USD: 300 USD;
/// 1 EUR = 1.20 USD = 0.84 GBP, so 1 USD = 0.70 GBP: 210 GBP, tax year
/// 2024-25). HMRC CRYPTO21200: income at its sterling value when received.
/// The top-level `income` stays in USD (100 + 300 = 400).
#[tokio::test]
async fn staking_income_is_listed_by_uk_tax_year_in_pounds() {
    use OperationType::*;
    let (app, _prices, _ecb) = app_with(vec![
        day("2024-04-03", "1.2500", "0.85000"),
        day("2024-07-01", "1.2000", "0.84000"),
    ])
    .await;
    seed(
        &app,
        A,
        vec![
            (
                "r1",
                noon("2024-04-03"),
                vec![(StakingReward, SOL, Some(STRANGER))],
            ),
            (
                "r2",
                noon("2024-07-01"),
                vec![(StakingReward, 2 * SOL, Some(STRANGER))],
            ),
        ],
    )
    .await;
    let report = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"uk"}),
        None,
    )
    .await);
    assert_eq!(dec(&report["total"]["income"]["usd"]), d("400"));
    let income = report["tax"]["income"].as_array().unwrap();
    assert_eq!(income.len(), 2, "{income:?}");
    assert_eq!(income[0]["tax_year"], "2023-24");
    assert_eq!(income[0]["wallet"], A);
    assert_eq!(income[0]["asset"], "sol");
    assert_eq!(dec(&income[0]["quantity"]), d("1"));
    assert_eq!(dec(&income[0]["value"]), d("68"));
    assert_eq!(income[0]["unpriced"], 0);
    assert_eq!(income[1]["tax_year"], "2024-25");
    assert_eq!(dec(&income[1]["quantity"]), d("2"));
    assert_eq!(dec(&income[1]["value"]), d("210"));

    // One tax year asked: only its income.
    let report = ok(&call(
        &app,
        "get_report",
        json!({"wallets":[A],"format":"json","jurisdiction":"uk","tax_year":"2024-25"}),
        None,
    )
    .await);
    let income = report["tax"]["income"].as_array().unwrap();
    assert_eq!(income.len(), 1, "{income:?}");
    assert_eq!(dec(&income[0]["value"]), d("210"));
    app.stop().await;
}
