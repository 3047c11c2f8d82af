//! Scans paid with research credits from the portal (docs/pricing.md,
//! docs/portal.md): with payments on and a balance that covers the quote,
//! the offer's button says what it uses and the form debits the credits
//! through `credits` (one `charge` movement, the balance the sum of the
//! movements, never below zero), once per quote however often the form is
//! sent; a balance that does not cover it shows the price and how to buy
//! credits, and a forced form charges nothing.

use reqwest::{StatusCode, header};
use server::{accounts::AccountId, config::PaymentsMode, values::Usd};

use crate::{
    helpers::{Options, TestApp, relaxed_limits, spawn_with},
    portal::{Browser, hidden_csrf_of, sign_in},
    scans::{WALLET, shared},
    standin::StandIn,
};

/// Whether the page holds a `<p>` that is an error alert (class error,
/// role alert), in whatever order the attributes come.
pub(crate) fn has_error_alert(html: &str) -> bool {
    html.split("<p ").skip(1).any(|rest| {
        let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
        tag.contains("class=\"error\"") && tag.contains("role=\"alert\"")
    })
}

/// The small tier's price (the recorded wallet's size), atomic USDC.
const PRICE: i64 = 250_000;

async fn paid_app(worker: bool) -> (TestApp, StandIn) {
    let stand_in = crate::standin::start(shared(0, std::time::Duration::ZERO)).await;
    let url = stand_in.url.clone();
    let app = spawn_with(Options {
        configure: Box::new(move |c| {
            relaxed_limits(c);
            c.solana.rpc_url = url;
            c.solana.retry_base_ms = 1;
            c.solana.batch_size = 4;
            c.worker.in_process = worker;
            c.worker.poll_ms = 20;
            c.payments = PaymentsMode::X402;
        }),
        ..Options::default()
    })
    .await;
    (app, stand_in)
}

/// Signed in, watching the recorded wallet, granted `usd`.
async fn watching(app: &TestApp, browser: &mut Browser, usd: &str) -> AccountId {
    let account = sign_in(browser, app).await;
    let now = app.state.now_ms();
    server::accounts::watchlist::add_wallet(
        app.state.store(),
        now,
        &account,
        server::solana::WalletAddress::parse(WALLET).unwrap(),
        "main",
    )
    .await
    .unwrap();
    app.state
        .credits()
        .grant(&account, Usd::parse(usd).unwrap(), "test grant")
        .await
        .unwrap();
    account
}

async fn offer(app: &TestApp, browser: &mut Browser) -> String {
    let page = browser
        .get(&app.url(&format!("/wallets/{WALLET}/scan")))
        .await;
    assert_eq!(page.status(), StatusCode::OK);
    crate::pages::unescape(&page.text().await.unwrap())
}

fn quote_of(html: &str) -> String {
    let at = html
        .find("name=\"quote_id\" value=\"")
        .expect("a start form")
        + "name=\"quote_id\" value=\"".len();
    html[at..at + html[at..].find('"').unwrap()].to_owned()
}

async fn start(app: &TestApp, browser: &mut Browser, csrf: &str, quote: &str) -> reqwest::Response {
    browser
        .post_form(
            &app.url(&format!("/wallets/{WALLET}/scan")),
            &[("csrf", csrf), ("quote_id", quote)],
        )
        .await
}

fn location(response: &reqwest::Response) -> String {
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "PRG");
    response.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned()
}

/// (kind, amount) of every movement, oldest first.
async fn movements(app: &TestApp, account: &AccountId) -> Vec<(String, i64)> {
    let mut rows = app
        .state
        .store()
        .credit_movements(account.as_str(), 100)
        .await
        .unwrap();
    rows.reverse();
    rows.into_iter()
        .map(|m| (m.kind, m.amount_atomic))
        .collect()
}

/// The balance, checked against the sum of the movements.
async fn balance(app: &TestApp, account: &AccountId) -> i64 {
    let store = app.state.store();
    let balance = store.credit_balance(account.as_str()).await.unwrap();
    let sum = store.credit_movements_sum(account.as_str()).await.unwrap();
    assert_eq!(balance, sum, "the balance is the sum of its movements");
    assert!(balance >= 0);
    balance
}

#[tokio::test]
async fn credits_that_cover_the_quote_pay_the_scan_once_however_often_the_form_is_sent() {
    let (app, _s) = paid_app(true).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    assert!(
        page.contains("Scan now (uses 0.25 USD of credits)"),
        "the button says what it uses: {page}"
    );
    assert!(page.contains("0.75 USD left after this scan"), "{page}");
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));

    let first = location(&start(&app, &mut browser, &csrf, &quote).await);
    assert!(first.starts_with("/scans/job_"), "{first}");
    assert_eq!(balance(&app, &account).await, 1_000_000 - PRICE);
    // The same form again at once (a double click, or a reload that
    // resends the POST): the same scan, nothing debited again.
    let again = location(&start(&app, &mut browser, &csrf, &quote).await);
    assert_eq!(again, first);
    // Reloading the progress page debits nothing either.
    for _ in 0..2 {
        assert_eq!(browser.get(&app.url(&first)).await.status(), StatusCode::OK);
    }
    assert_eq!(balance(&app, &account).await, 1_000_000 - PRICE);

    // Once the scan is over, the same form once more answers that scan
    // (the debit's stored result), still without a second debit.
    let job_id = first.trim_start_matches("/scans/");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let job = app.state.store().job(job_id).await.unwrap().unwrap();
        if job.status != "running" {
            assert_eq!(job.status, "completed", "{job:?}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the scan ends");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let after = location(&start(&app, &mut browser, &csrf, &quote).await);
    assert_eq!(after, first);
    assert_eq!(
        movements(&app, &account).await,
        vec![
            ("grant".to_owned(), 1_000_000),
            ("charge".to_owned(), -PRICE)
        ],
        "one grant, one charge"
    );
    assert_eq!(balance(&app, &account).await, 1_000_000 - PRICE);
    app.stop().await;
}

#[tokio::test]
async fn two_forms_sent_at_the_same_moment_debit_once() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    let mut other = browser.clone();
    let (a, b) = tokio::join!(
        start(&app, &mut browser, &csrf, &quote),
        start(&app, &mut other, &csrf, &quote)
    );
    let statuses = [a.status(), b.status()];
    assert!(
        statuses.contains(&StatusCode::SEE_OTHER),
        "one of them starts the scan: {statuses:?}"
    );
    assert_eq!(
        movements(&app, &account).await,
        vec![
            ("grant".to_owned(), 1_000_000),
            ("charge".to_owned(), -PRICE)
        ]
    );
    assert_eq!(balance(&app, &account).await, 1_000_000 - PRICE);
    app.stop().await;
}

#[tokio::test]
async fn credits_that_do_not_cover_the_quote_show_the_price_and_how_to_buy_and_charge_nothing() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "0.10").await;
    let page = offer(&app, &mut browser).await;
    assert!(page.contains("0.25 USD"), "the price: {page}");
    assert!(page.contains("do not cover this scan"), "{page}");
    assert!(
        page.contains("href=\"/credits\""),
        "how to buy credits: {page}"
    );
    assert!(!page.contains("id=\"scan-form\""), "no start form: {page}");
    // A form forced through anyway (a quote from elsewhere): refused on
    // the offer page, no job, no movement but the grant.
    let quote = server::payments::quote(
        &app.state.paywall(),
        server::payments::QuoteWalletArgs {
            address: server::solana::WalletAddress::parse(WALLET).unwrap(),
            scope: None,
        },
    )
    .await
    .unwrap();
    let csrf = hidden_csrf_of(&page);
    let refused = start(&app, &mut browser, &csrf, &quote.quote_id).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let text = crate::pages::unescape(&refused.text().await.unwrap());
    assert!(has_error_alert(&text), "{text}");
    assert!(text.contains("insufficient credit"), "{text}");
    assert!(
        app.state
            .store()
            .running_job_for(WALLET)
            .await
            .unwrap()
            .is_none(),
        "no scan started"
    );
    assert_eq!(
        movements(&app, &account).await,
        vec![("grant".to_owned(), 100_000)]
    );
    assert_eq!(balance(&app, &account).await, 100_000);
    app.stop().await;
}
