//! Scans paid with research credits from the portal (docs/pricing.md,
//! docs/portal.md): with payments on and a balance that covers the quote,
//! the offer's button says what it uses and the form debits the credits
//! through `credits` (one `charge` movement, the balance the sum of the
//! movements, never below zero), once per quote however often the form is
//! sent; a balance that does not cover it shows the price and how to buy
//! credits, and a forced form charges nothing. The debit and the job are
//! one transaction (a fault between them keeps no money), and every
//! refusal has its own test asserting that no money moved.

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
    // A form forced through anyway (a quote made for this account, as
    // the offer makes its own, though the page offered no form): refused
    // on the offer page, no job, no movement but the grant.
    let quote = server::payments::quote(
        &app.state.paywall(),
        server::payments::QuoteWalletArgs {
            address: server::solana::WalletAddress::parse(WALLET).unwrap(),
            scope: None,
        },
    )
    .await
    .unwrap();
    app.state
        .store()
        .bind_quote_to_account(&quote.quote_id, account.as_str())
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

// ---- The security review's findings (docs/pricing.md) -------------------

/// Another valid wallet address, which the stand-in does not serve.
const OTHER_WALLET: &str = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";

/// Run `statements` on the test's own database, beside the server: what a
/// test does to the database that no request can (inject a fault, age a
/// quote). `pg` is used on PostgreSQL, `sqlite` on SQLite.
async fn on_database(app: &TestApp, sqlite: &str, pg: &str) {
    let url = &app.state.config().database_url;
    if url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::raw_sql(pg).execute(&pool).await.unwrap();
        pool.close().await;
    } else {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::raw_sql(sqlite).execute(&pool).await.unwrap();
        pool.close().await;
    }
}

/// How many scan jobs of the wallet exist, whatever their status.
async fn jobs_of(app: &TestApp, address: &str) -> i64 {
    let url = &app.state.config().database_url;
    let sql = "SELECT COUNT(*) FROM jobs WHERE address = $1 AND kind = 'scan'";
    if url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        let n = sqlx::query_scalar(sql)
            .bind(address)
            .fetch_one(&pool)
            .await
            .unwrap();
        pool.close().await;
        n
    } else {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        let n = sqlx::query_scalar(sql)
            .bind(address)
            .fetch_one(&pool)
            .await
            .unwrap();
        pool.close().await;
        n
    }
}

/// The money of an account as it stands: (balance, movements).
async fn money(app: &TestApp, account: &AccountId) -> (i64, Vec<(String, i64)>) {
    (balance(app, account).await, movements(app, account).await)
}

/// A refused form: its status, and the offer page it answers with.
async fn refused(response: reqwest::Response, status: StatusCode) -> String {
    assert_eq!(response.status(), status);
    crate::pages::unescape(&response.text().await.unwrap())
}

/// A quote written straight into the store for `address`, made for
/// `account` as the offer page makes its own, expiring at `expires_at`.
async fn stored_quote(
    app: &TestApp,
    account: &AccountId,
    address: &str,
    expires_at: i64,
) -> String {
    let now = app.state.now_ms();
    let id = server::ids::new_id("q_", now);
    let store = app.state.store();
    store
        .insert_quote(&server::store::QuoteRecord {
            id: id.clone(),
            address: address.to_owned(),
            scope: "full".to_owned(),
            tier: "small".to_owned(),
            price_micros: PRICE,
            signatures: Some(10),
            created_at: now,
            expires_at,
        })
        .await
        .unwrap();
    store
        .bind_quote_to_account(&id, account.as_str())
        .await
        .unwrap();
    id
}

/// A `pending` portal scan debit of `quote`, begun at `at`, as the earlier
/// version left one when it stopped between its debit and its job.
async fn pending_debit(app: &TestApp, account: &AccountId, quote: &str, at: i64) {
    let action_id = format!("scan:{quote}");
    let begun = app
        .state
        .store()
        .begin_action(&server::store::NewAction {
            account_id: account.as_str(),
            action_id: &action_id,
            tool: server::jobs::CREDITS_TOOL,
            args_hash: "h",
            cost_atomic: PRICE,
            movement_id: &server::ids::new_id("cm_", at),
            note: "scan (earlier version)",
            now: at,
        })
        .await
        .unwrap();
    assert!(
        matches!(begun, server::store::Begun::Charged { .. }),
        "{begun:?}"
    );
}

/// Finding 1: the debit and the job are one transaction. The fault is
/// injected between them: a trigger makes the job's INSERT fail after the
/// action row, the balance row and the charge line were written in the
/// same transaction (what a crash or a database error at that point
/// does). Nothing of it may stay: no charge, no action, no job; and the
/// same form once the fault is gone starts the scan with one charge.
#[tokio::test]
async fn a_failure_between_the_debit_and_the_job_keeps_no_money() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    on_database(
        &app,
        "CREATE TRIGGER injected_fault BEFORE INSERT ON jobs \
         BEGIN SELECT RAISE(ABORT, 'injected fault: the job is not written'); END;",
        "CREATE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'injected fault: the job is not written'; END $$; \
         CREATE TRIGGER injected_fault BEFORE INSERT ON jobs \
         FOR EACH ROW EXECUTE FUNCTION injected_fault();",
    )
    .await;
    let failed = start(&app, &mut browser, &csrf, &quote).await;
    assert_eq!(failed.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let text = failed.text().await.unwrap();
    assert!(!text.contains("injected"), "nothing internal leaks: {text}");
    assert_eq!(
        money(&app, &account).await,
        (1_000_000, vec![("grant".to_owned(), 1_000_000)]),
        "the charge was rolled back with the job"
    );
    assert!(
        app.state
            .store()
            .action(account.as_str(), &format!("scan:{quote}"))
            .await
            .unwrap()
            .is_none(),
        "no action is left to keep the money"
    );
    assert_eq!(jobs_of(&app, WALLET).await, 0);

    on_database(
        &app,
        "DROP TRIGGER injected_fault;",
        "DROP TRIGGER injected_fault ON jobs; DROP FUNCTION injected_fault();",
    )
    .await;
    let started = location(&start(&app, &mut browser, &csrf, &quote).await);
    assert!(started.starts_with("/scans/job_"), "{started}");
    assert_eq!(
        money(&app, &account).await,
        (
            1_000_000 - PRICE,
            vec![
                ("grant".to_owned(), 1_000_000),
                ("charge".to_owned(), -PRICE)
            ]
        )
    );
    assert_eq!(jobs_of(&app, WALLET).await, 1);
    app.stop().await;
}

/// Finding 1, what an earlier version left: a `pending` scan debit with no
/// job (it crashed between the two commits). The maintenance pass (run at
/// start and then periodically) refunds it once: the balance exactly as
/// before the debit, one `refund` movement, and a second pass refunds
/// nothing. A pending debit younger than the bound is left alone.
#[tokio::test]
async fn a_pending_scan_debit_with_no_job_is_refunded_once_by_maintenance() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let now = app.state.now_ms();
    let old = stored_quote(&app, &account, WALLET, now + 900_000).await;
    let young = stored_quote(&app, &account, WALLET, now + 900_000).await;
    pending_debit(
        &app,
        &account,
        &old,
        now - server::jobs::STALE_SCAN_DEBIT_MS - 1,
    )
    .await;
    pending_debit(&app, &account, &young, now).await;
    assert_eq!(balance(&app, &account).await, 1_000_000 - 2 * PRICE);

    let first = server::worker::maintenance_pass(app.state.services())
        .await
        .unwrap();
    assert_eq!(first.scan_debits_settled, 1);
    let expected = (
        1_000_000 - PRICE,
        vec![
            ("grant".to_owned(), 1_000_000),
            ("charge".to_owned(), -PRICE),
            ("charge".to_owned(), -PRICE),
            ("refund".to_owned(), PRICE),
        ],
    );
    assert_eq!(money(&app, &account).await, expected);
    let second = server::worker::maintenance_pass(app.state.services())
        .await
        .unwrap();
    assert_eq!(second.scan_debits_settled, 0, "settled once");
    assert_eq!(money(&app, &account).await, expected, "refunded once");
    let action = app
        .state
        .store()
        .action(account.as_str(), &format!("scan:{old}"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(action.state, "refunded");
    app.stop().await;
}

/// Finding 1, the other half an earlier version could leave: a pending
/// debit whose job was created (it stopped before recording the job on
/// the debit). Maintenance records the job and refunds nothing (the scan
/// ran); the form of that quote then answers that scan.
#[tokio::test]
async fn a_pending_scan_debit_whose_job_exists_keeps_its_charge_and_answers_its_scan() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    let now = app.state.now_ms();
    let at = now - server::jobs::STALE_SCAN_DEBIT_MS - 1;
    pending_debit(&app, &account, &quote, at).await;
    let job_id = server::ids::new_id("job_", at);
    app.state
        .store()
        .create_scan_job(&server::store::NewScanJob {
            id: &job_id,
            address: WALLET,
            scope: "full",
            quote_id: &quote,
            stop_at: None,
            account_id: Some(account.as_str()),
            now: at,
        })
        .await
        .unwrap();
    let pass = server::worker::maintenance_pass(app.state.services())
        .await
        .unwrap();
    assert_eq!(pass.scan_debits_settled, 1);
    let again = location(&start(&app, &mut browser, &csrf, &quote).await);
    assert_eq!(again, format!("/scans/{job_id}"));
    assert_eq!(
        money(&app, &account).await,
        (
            1_000_000 - PRICE,
            vec![
                ("grant".to_owned(), 1_000_000),
                ("charge".to_owned(), -PRICE)
            ]
        )
    );
    app.stop().await;
}

/// Finding 2: the form of a paid quote sent again after the quote expired
/// (a reload an hour later) answers the scan it paid for, never a fresh
/// price and never a second debit: the replay is checked before the
/// expiry, as `start_scan` does for a known x402 payment.
#[tokio::test]
async fn the_form_of_a_paid_quote_sent_after_it_expired_answers_its_scan_and_charges_nothing() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    let first = location(&start(&app, &mut browser, &csrf, &quote).await);
    let sql = format!("UPDATE quotes SET expires_at = 0 WHERE id = '{quote}';");
    on_database(&app, &sql, &sql).await;
    let again = location(&start(&app, &mut browser, &csrf, &quote).await);
    assert_eq!(again, first, "the scan it paid for");
    assert_eq!(
        money(&app, &account).await,
        (
            1_000_000 - PRICE,
            vec![
                ("grant".to_owned(), 1_000_000),
                ("charge".to_owned(), -PRICE)
            ]
        )
    );
    app.stop().await;
}

/// Finding 3: a quote whose debit was refunded is said as such, in words
/// of its own (not "started elsewhere"), and charges nothing again.
#[tokio::test]
async fn the_form_of_a_refunded_quote_says_it_was_refunded_and_charges_nothing() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    let at = app.state.now_ms() - server::jobs::STALE_SCAN_DEBIT_MS - 1;
    pending_debit(&app, &account, &quote, at).await;
    server::worker::maintenance_pass(app.state.services())
        .await
        .unwrap();
    let before = money(&app, &account).await;
    assert_eq!(before.0, 1_000_000, "refunded");
    let text = refused(
        start(&app, &mut browser, &csrf, &quote).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert!(has_error_alert(&text), "{text}");
    assert!(
        text.contains(
            "the scan this price paid for did not run to its end, and its cost went back to your \
             credits; here is a new price"
        ),
        "{text}"
    );
    assert!(!text.contains("started elsewhere"), "{text}");
    assert!(!text.contains("action_id"), "no internals: {text}");
    assert_eq!(money(&app, &account).await, before, "no money moved");
    assert_eq!(jobs_of(&app, WALLET).await, 0);
    app.stop().await;
}

/// Finding 4: `jobs::start_portal_scan` itself refuses a quote of another
/// wallet and a quote made for another account, whatever its caller
/// checked, before any debit.
#[tokio::test]
async fn start_portal_scan_itself_refuses_a_quote_of_another_wallet_or_account() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let mut other = Browser::new();
    let someone = watching(&app, &mut other, "1").await;
    let now = app.state.now_ms();
    let wallet = server::solana::WalletAddress::parse(WALLET).unwrap();
    let elsewhere = stored_quote(&app, &account, OTHER_WALLET, now + 900_000).await;
    let theirs = stored_quote(&app, &someone, WALLET, now + 900_000).await;
    let before = money(&app, &account).await;
    for quote in [&elsewhere, &theirs] {
        let err = server::jobs::start_portal_scan(
            &app.state.paywall(),
            &app.state.credits(),
            &account,
            &wallet,
            quote,
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), server::error::Code::WrongQuote, "{err:?}");
    }
    assert_eq!(money(&app, &account).await, before);
    assert_eq!(money(&app, &someone).await.1.len(), 1, "theirs untouched");
    assert_eq!(jobs_of(&app, WALLET).await, 0);
    app.stop().await;
}

#[tokio::test]
async fn an_expired_quote_moves_no_money() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let csrf = hidden_csrf_of(&page);
    let expired = stored_quote(&app, &account, WALLET, app.state.now_ms() - 1).await;
    let before = money(&app, &account).await;
    let text = refused(
        start(&app, &mut browser, &csrf, &expired).await,
        StatusCode::GONE,
    )
    .await;
    assert!(has_error_alert(&text), "{text}");
    assert!(text.contains("the price shown expired"), "{text}");
    assert!(
        text.contains("Scan now (uses 0.25 USD of credits)"),
        "a new price: {text}"
    );
    assert_eq!(money(&app, &account).await, before);
    assert_eq!(jobs_of(&app, WALLET).await, 0);
    app.stop().await;
}

#[tokio::test]
async fn a_quote_for_another_wallet_moves_no_money() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let csrf = hidden_csrf_of(&page);
    let elsewhere = stored_quote(&app, &account, OTHER_WALLET, app.state.now_ms() + 900_000).await;
    let before = money(&app, &account).await;
    let text = refused(
        start(&app, &mut browser, &csrf, &elsewhere).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(has_error_alert(&text), "{text}");
    assert!(
        text.contains("this price was not made for this wallet on your account"),
        "{text}"
    );
    assert_eq!(money(&app, &account).await, before);
    assert_eq!(
        jobs_of(&app, WALLET).await + jobs_of(&app, OTHER_WALLET).await,
        0
    );
    app.stop().await;
}

/// Another account watching the same wallet copies this account's quote
/// id into its own form (its own session and CSRF token): refused, and
/// neither account's money moves.
#[tokio::test]
async fn a_quote_of_another_account_moves_no_money() {
    let (app, _s) = paid_app(false).await;
    let mut owner = Browser::new();
    let account = watching(&app, &mut owner, "1").await;
    let owners_quote = quote_of(&offer(&app, &mut owner).await);
    let mut mallory = Browser::new();
    let other = watching(&app, &mut mallory, "1").await;
    let csrf = hidden_csrf_of(&offer(&app, &mut mallory).await);
    let (before, others_before) = (money(&app, &account).await, money(&app, &other).await);
    let text = refused(
        start(&app, &mut mallory, &csrf, &owners_quote).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(has_error_alert(&text), "{text}");
    assert!(
        text.contains("this price was not made for this wallet on your account"),
        "{text}"
    );
    assert_eq!(money(&app, &account).await, before);
    assert_eq!(money(&app, &other).await, others_before);
    assert_eq!(jobs_of(&app, WALLET).await, 0);
    app.stop().await;
}

#[tokio::test]
async fn a_forged_quote_id_moves_no_money() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let csrf = hidden_csrf_of(&offer(&app, &mut browser).await);
    let before = money(&app, &account).await;
    for forged in ["q_01JFORGEDFORGEDFORGEDFORGED", "", "' OR 1=1 --"] {
        let text = refused(
            start(&app, &mut browser, &csrf, forged).await,
            StatusCode::NOT_FOUND,
        )
        .await;
        assert!(has_error_alert(&text), "{forged}: {text}");
        assert!(text.contains("this price is no longer known"), "{text}");
    }
    assert_eq!(money(&app, &account).await, before);
    assert_eq!(jobs_of(&app, WALLET).await, 0);
    app.stop().await;
}

#[tokio::test]
async fn a_wrong_csrf_token_moves_no_money() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let quote = quote_of(&offer(&app, &mut browser).await);
    let before = money(&app, &account).await;
    for csrf in ["not-the-token", ""] {
        let response = start(&app, &mut browser, csrf, &quote).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{csrf:?}");
    }
    assert_eq!(money(&app, &account).await, before);
    assert_eq!(jobs_of(&app, WALLET).await, 0);
    app.stop().await;
}

/// A scan that cannot start (one of the wallet started elsewhere is
/// running) is refused before any debit: with the debit and the job in
/// one transaction there is nothing to refund, and nothing moves.
#[tokio::test]
async fn a_scan_that_cannot_start_moves_no_money() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    let now = app.state.now_ms();
    let elsewhere = server::ids::new_id("job_", now);
    app.state
        .store()
        .create_scan_job(&server::store::NewScanJob {
            id: &elsewhere,
            address: WALLET,
            scope: "full",
            quote_id: &quote,
            stop_at: None,
            account_id: None,
            now,
        })
        .await
        .unwrap();
    let before = money(&app, &account).await;
    let text = refused(
        start(&app, &mut browser, &csrf, &quote).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert!(text.contains("started elsewhere is running"), "{text}");
    assert_eq!(money(&app, &account).await, before);
    assert!(
        app.state
            .store()
            .action(account.as_str(), &format!("scan:{quote}"))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(jobs_of(&app, WALLET).await, 1, "only the other scan");
    app.stop().await;
}

/// Two offers' quotes sent at the same moment when the credits cover one
/// scan: exactly one scan starts, one charge is taken, and the balance
/// never goes below zero (the other form follows that scan or is told
/// the credits do not cover it).
#[tokio::test]
async fn two_quotes_racing_for_credits_that_cover_one_start_one_scan() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "0.30").await;
    let first = offer(&app, &mut browser).await;
    let second = offer(&app, &mut browser).await;
    let (csrf, q1, q2) = (hidden_csrf_of(&second), quote_of(&first), quote_of(&second));
    assert_ne!(q1, q2);
    let mut other = browser.clone();
    let (a, b) = tokio::join!(
        start(&app, &mut browser, &csrf, &q1),
        start(&app, &mut other, &csrf, &q2)
    );
    let statuses = [a.status(), b.status()];
    assert!(
        statuses.contains(&StatusCode::SEE_OTHER),
        "one of them starts the scan: {statuses:?}"
    );
    for status in statuses {
        assert!(
            [StatusCode::SEE_OTHER, StatusCode::FORBIDDEN].contains(&status),
            "{statuses:?}"
        );
    }
    assert_eq!(jobs_of(&app, WALLET).await, 1, "exactly one scan");
    assert_eq!(
        money(&app, &account).await,
        (
            300_000 - PRICE,
            vec![("grant".to_owned(), 300_000), ("charge".to_owned(), -PRICE)]
        )
    );
    app.stop().await;
}

/// A quote no account owns (as `quote_wallet` and earlier versions' offer
/// pages made them: `quotes.account_id` NULL) starts nothing through the
/// form: `wrong_quote`, no action, no movement, no job.
#[tokio::test]
async fn a_quote_bound_to_no_account_moves_no_money() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let csrf = hidden_csrf_of(&offer(&app, &mut browser).await);
    let unbound = unbound_quote(&app, WALLET).await;
    let before = money(&app, &account).await;
    let text = refused(
        start(&app, &mut browser, &csrf, &unbound).await,
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(
        text.contains("this price was not made for this wallet on your account"),
        "{text}"
    );
    assert_eq!(money(&app, &account).await, before);
    assert!(
        app.state
            .store()
            .action(account.as_str(), &format!("scan:{unbound}"))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(jobs_of(&app, WALLET).await, 0);
    app.stop().await;
}

/// A quote the offer page made for an account is paid there, from the
/// account's credits, and nowhere else: given to `scan_wallet` (MCP) or
/// `POST /v1/scans` it is `wrong_quote` (not the payment challenge a
/// `quote_wallet` quote gets there), so one price never buys two scans;
/// no job, no movement; the portal still pays it once.
#[tokio::test]
async fn a_portal_quote_given_to_scan_wallet_is_wrong_quote_and_starts_nothing() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    let before = money(&app, &account).await;

    // The same path with a quote of quote_wallet's asks for the payment.
    let unbound = unbound_quote(&app, WALLET).await;
    let challenge = app
        .call_tool("scan_wallet", serde_json::json!({"quote_id": unbound}))
        .await;
    assert_eq!(
        challenge["structuredContent"]["code"], "payment_required",
        "{challenge}"
    );

    let mcp = app
        .call_tool("scan_wallet", serde_json::json!({"quote_id": quote}))
        .await;
    assert_eq!(mcp["isError"], true, "{mcp}");
    assert_eq!(mcp["structuredContent"]["code"], "wrong_quote", "{mcp}");
    assert!(
        mcp["structuredContent"].get("x402").is_none(),
        "no challenge to pay: {mcp}"
    );
    let rest = app
        .client
        .post(app.url("/v1/scans"))
        .json(&serde_json::json!({"quote_id": quote}))
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), StatusCode::BAD_REQUEST);
    let body: serde_json::Value = rest.json().await.unwrap();
    assert_eq!(body["code"], "wrong_quote", "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("made for a portal scan paid with research credits"),
        "{body}"
    );
    assert_eq!(jobs_of(&app, WALLET).await, 0);
    assert_eq!(money(&app, &account).await, before);

    let started = location(&start(&app, &mut browser, &csrf, &quote).await);
    assert!(started.starts_with("/scans/job_"), "{started}");
    assert_eq!(jobs_of(&app, WALLET).await, 1);
    assert_eq!(balance(&app, &account).await, 1_000_000 - PRICE);
    app.stop().await;
}

/// A debit an earlier version took on a quote it never bound (its offer
/// page did not record the account) is still this account's: the form
/// sent again is answered from the action (here refunded by maintenance:
/// its own words), never `wrong_quote`, and charges nothing.
#[tokio::test]
async fn an_earlier_versions_debit_on_an_unbound_quote_is_answered_from_its_action() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let csrf = hidden_csrf_of(&offer(&app, &mut browser).await);
    let unbound = unbound_quote(&app, WALLET).await;
    let at = app.state.now_ms() - server::jobs::STALE_SCAN_DEBIT_MS - 1;
    pending_debit(&app, &account, &unbound, at).await;
    server::worker::maintenance_pass(app.state.services())
        .await
        .unwrap();
    let before = money(&app, &account).await;
    assert_eq!(before.0, 1_000_000, "refunded");
    let text = refused(
        start(&app, &mut browser, &csrf, &unbound).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert!(
        text.contains("its cost went back to your credits"),
        "{text}"
    );
    assert!(!text.contains("not made for this wallet"), "{text}");
    assert_eq!(money(&app, &account).await, before, "no money moved");
    assert_eq!(jobs_of(&app, WALLET).await, 0);
    app.stop().await;
}

/// The store's one transaction itself: when a scan of the wallet is
/// already running, `begin_paid_scan` rolls back the action and the
/// charge it wrote (no action row, balance and movements unchanged) and
/// answers the running scan.
#[tokio::test]
async fn begin_paid_scan_rolls_the_charge_back_when_a_scan_of_the_wallet_runs() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let quote = stored_quote(&app, &account, WALLET, app.state.now_ms() + 60_000).await;
    let now = app.state.now_ms();
    let store = app.state.store();
    let elsewhere = server::ids::new_id("job_", now);
    store
        .create_scan_job(&server::store::NewScanJob {
            id: &elsewhere,
            address: WALLET,
            scope: "full",
            quote_id: &quote,
            stop_at: None,
            account_id: None,
            now,
        })
        .await
        .unwrap();
    let before = money(&app, &account).await;
    let action_id = format!("scan:{quote}");
    let ours = server::ids::new_id("job_", now);
    let outcome = store
        .begin_paid_scan(&server::store::NewPaidScan {
            action: server::store::NewAction {
                account_id: account.as_str(),
                action_id: &action_id,
                tool: server::jobs::CREDITS_TOOL,
                args_hash: "h",
                cost_atomic: PRICE,
                movement_id: &server::ids::new_id("cm_", now),
                note: "scan",
                now,
            },
            job: server::store::NewScanJob {
                id: &ours,
                address: WALLET,
                scope: "full",
                quote_id: &quote,
                stop_at: None,
                account_id: Some(account.as_str()),
                now,
            },
            result: &format!(r#"{{"job_id":"{ours}"}}"#),
        })
        .await
        .unwrap();
    match outcome {
        server::store::PaidScan::AlreadyRunning(job) => assert_eq!(job.id, elsewhere),
        other => panic!("expected the running scan, got {other:?}"),
    }
    assert!(
        store
            .action(account.as_str(), &action_id)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        money(&app, &account).await,
        before,
        "the charge rolled back"
    );
    assert_eq!(jobs_of(&app, WALLET).await, 1, "only the other scan");
    app.stop().await;
}

/// A quote for `address` written into the store and bound to no account,
/// as `quote_wallet` makes them.
async fn unbound_quote(app: &TestApp, address: &str) -> String {
    let now = app.state.now_ms();
    let id = server::ids::new_id("q_", now);
    app.state
        .store()
        .insert_quote(&server::store::QuoteRecord {
            id: id.clone(),
            address: address.to_owned(),
            scope: "full".to_owned(),
            tier: "small".to_owned(),
            price_micros: PRICE,
            signatures: Some(10),
            created_at: now,
            expires_at: now + 600_000,
        })
        .await
        .unwrap();
    assert_eq!(app.state.store().quote_account(&id).await.unwrap(), None);
    id
}

/// Wait for the scan job at the progress path `location` to end; the job.
async fn ended(app: &TestApp, location: &str) -> server::store::JobRecord {
    let job_id = location.trim_start_matches("/scans/");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let job = app.state.store().job(job_id).await.unwrap().unwrap();
        if job.status != "running" {
            return job;
        }
        assert!(std::time::Instant::now() < deadline, "the scan ends");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A credit-paid scan that fails (the RPC endpoint answers 500 to every
/// request, past its retries) delivered nothing: its charge comes back as
/// one `refund` movement, the balance is the grant again, a maintenance
/// pass gives nothing more, and the form sent again says the cost went
/// back and charges nothing.
#[tokio::test]
async fn a_credit_paid_scan_that_fails_gives_its_credits_back_once() {
    let (app, stand_in) = paid_app(true).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    stand_in
        .shared
        .faults
        .lock()
        .unwrap()
        .extend([crate::standin::Fault::ServerError; 500]);
    let progress = location(&start(&app, &mut browser, &csrf, &quote).await);
    let job = ended(&app, &progress).await;
    assert_eq!(job.status, "failed", "{job:?}");
    let given_back = vec![
        ("grant".to_owned(), 1_000_000),
        ("charge".to_owned(), -PRICE),
        ("refund".to_owned(), PRICE),
    ];
    // The worker gives the credits back right after it records the
    // failure, in its own transaction: wait for it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while movements(&app, &account).await.len() < given_back.len() {
        assert!(std::time::Instant::now() < deadline, "the refund comes");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(movements(&app, &account).await, given_back);
    assert_eq!(balance(&app, &account).await, 1_000_000);
    let pass = server::worker::maintenance_pass(app.state.services())
        .await
        .unwrap();
    assert_eq!(pass.failed_scans_refunded, 0, "already given back");
    let shown = browser.get(&app.url(&progress)).await;
    assert_eq!(shown.status(), StatusCode::OK);
    let shown = crate::pages::unescape(&shown.text().await.unwrap());
    assert!(
        shown.contains("The credits it used went back to your balance."),
        "{shown}"
    );
    stand_in.shared.faults.lock().unwrap().clear();
    let text = refused(
        start(&app, &mut browser, &csrf, &quote).await,
        StatusCode::CONFLICT,
    )
    .await;
    assert!(
        text.contains("its cost went back to your credits"),
        "{text}"
    );
    assert_eq!(movements(&app, &account).await, given_back, "nothing moved");
    assert_eq!(balance(&app, &account).await, 1_000_000);
    app.stop().await;
}

/// A worker that stopped between a scan's failure and its refund: the
/// next maintenance pass gives the credits back, once however many passes
/// run; a scan that completed keeps its charge.
#[tokio::test]
async fn a_failed_scan_left_unrefunded_is_refunded_by_maintenance_once() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    let progress = location(&start(&app, &mut browser, &csrf, &quote).await);
    let job_id = progress.trim_start_matches("/scans/");
    assert_eq!(balance(&app, &account).await, 1_000_000 - PRICE);
    // Still running: nothing to give back.
    let pass = server::worker::maintenance_pass(app.state.services())
        .await
        .unwrap();
    assert_eq!(pass.failed_scans_refunded, 0);
    assert_eq!(balance(&app, &account).await, 1_000_000 - PRICE);
    let fail = format!("UPDATE jobs SET status = 'failed', phase = 'done' WHERE id = '{job_id}'");
    on_database(&app, &fail, &fail).await;
    let mut refunded = 0;
    for _ in 0..2 {
        refunded += server::worker::maintenance_pass(app.state.services())
            .await
            .unwrap()
            .failed_scans_refunded;
    }
    assert_eq!(refunded, 1, "once, over two passes");
    assert_eq!(
        movements(&app, &account).await,
        vec![
            ("grant".to_owned(), 1_000_000),
            ("charge".to_owned(), -PRICE),
            ("refund".to_owned(), PRICE),
        ]
    );
    assert_eq!(balance(&app, &account).await, 1_000_000);
    app.stop().await;
}

/// Only the failure of the very job the credits paid for gives them back:
/// a paid scan that completed (or ended partial) keeps its charge, and a
/// second job started on the same quote (as `scan_wallet` with a receipt
/// could) that fails gives nothing back, by the worker's call or by
/// maintenance.
#[tokio::test]
async fn only_the_paid_jobs_own_failure_gives_credits_back() {
    let (app, _s) = paid_app(true).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let page = offer(&app, &mut browser).await;
    let (csrf, quote) = (hidden_csrf_of(&page), quote_of(&page));
    let progress = location(&start(&app, &mut browser, &csrf, &quote).await);
    assert_eq!(ended(&app, &progress).await.status, "completed");
    let charged = vec![
        ("grant".to_owned(), 1_000_000),
        ("charge".to_owned(), -PRICE),
    ];
    let passes = |app: &TestApp| {
        let services = app.state.services().clone();
        async move {
            let mut refunded = 0;
            for _ in 0..2 {
                refunded += server::worker::maintenance_pass(&services)
                    .await
                    .unwrap()
                    .failed_scans_refunded;
            }
            refunded
        }
    };
    assert_eq!(passes(&app).await, 0, "a completed scan keeps its charge");
    let paid = progress.trim_start_matches("/scans/");
    let partial = format!("UPDATE jobs SET status = 'partial' WHERE id = '{paid}'");
    on_database(&app, &partial, &partial).await;
    assert_eq!(passes(&app).await, 0, "a partial scan keeps its charge");

    // A second job of the account on the same quote, failed.
    let other = format!(
        "INSERT INTO jobs (id, kind, address, scope, quote_id, status, phase, created_at, \
         updated_at, finished_at, account_id) VALUES ('job_second', 'scan', '{WALLET}', 'full', \
         '{quote}', 'failed', 'done', 1, 1, 1, '{}')",
        account.as_str()
    );
    on_database(&app, &other, &other).await;
    assert_eq!(
        passes(&app).await,
        0,
        "another job's failure gives nothing back"
    );
    let direct = server::credits::refund_failed_scan(
        app.state.store(),
        server::jobs::CREDITS_TOOL,
        account.as_str(),
        &quote,
        "job_second",
        app.state.now_ms(),
    )
    .await
    .unwrap();
    assert_eq!(direct, None, "nor by the worker's call");
    assert_eq!(movements(&app, &account).await, charged);
    assert_eq!(balance(&app, &account).await, 1_000_000 - PRICE);
    app.stop().await;
}

/// The stale-debit refund checks, in its own UPDATE, that still no job of
/// the account exists on the quote: an earlier-version server that
/// stalled between its debit and its job, and inserted the job after the
/// maintenance pass read the list, is not refunded from under it.
#[tokio::test]
async fn a_stale_debit_whose_job_appeared_meanwhile_is_not_refunded() {
    let (app, _s) = paid_app(false).await;
    let mut browser = Browser::new();
    let account = watching(&app, &mut browser, "1").await;
    let quote = stored_quote(&app, &account, WALLET, app.state.now_ms() + 60_000).await;
    let at = app.state.now_ms() - server::jobs::STALE_SCAN_DEBIT_MS - 1;
    pending_debit(&app, &account, &quote, at).await;
    let now = app.state.now_ms();
    let job = server::ids::new_id("job_", now);
    app.state
        .store()
        .create_scan_job(&server::store::NewScanJob {
            id: &job,
            address: WALLET,
            scope: "full",
            quote_id: &quote,
            stop_at: None,
            account_id: Some(account.as_str()),
            now,
        })
        .await
        .unwrap();
    let before = money(&app, &account).await;
    let refunded = app
        .state
        .store()
        .refund_stale_scan_debit(
            account.as_str(),
            &format!("scan:{quote}"),
            &server::ids::new_id("cm_", now),
            now,
        )
        .await
        .unwrap();
    assert_eq!(refunded, None);
    assert_eq!(
        money(&app, &account).await,
        before,
        "the scan keeps its charge"
    );
    app.stop().await;
}
