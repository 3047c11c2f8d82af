//! The portal's settings page and the report view's tax summary against
//! the real server: the settings form saved through the same function as
//! `POST /v1/settings/tax` (CSRF first, post/redirect/get with "Saved",
//! refusals in words beside their field), the report view's jurisdiction,
//! method, currency and tax-year choices with each country's terms, the
//! unlabelled transfers listed with a label form whose label changes the
//! next read, the download carrying the choices, and numbers in the
//! reader's locale (the setting over `Accept-Language`).
//!
//! The wallet and prices are `reports_tax`'s: A receives 10 SOL from a
//! stranger on 1 May 2024 at 100 USD (1,000 USD) and sends 4 back on
//! 1 July 2024 at 150 USD (600 USD); the ECB stand-in has 1 USD = 0.68 GBP
//! on 30 April (1.25 USD and 0.85 GBP a euro) and 0.70 GBP on 1 July (1.20
//! and 0.84), so every figure below is arithmetic said at its assertion.

use reqwest::StatusCode;
use serde_json::{Value, json};
use server::{
    accounts::{self, tax_settings},
    solana::WalletAddress,
};

use crate::{
    helpers::TestApp,
    portal::{Browser, hidden_csrf_of, sign_in},
    reports_tax::{A, STRANGER, app_with, day, uk_wallet},
};

async fn rates_app() -> (
    TestApp,
    crate::price_standin::PriceStandIn,
    crate::ecb_standin::EcbStandIn,
) {
    app_with(vec![
        day("2024-04-30", "1.2500", "0.85000"),
        day("2024-07-01", "1.2000", "0.84000"),
    ])
    .await
}

async fn page(browser: &mut Browser, app: &TestApp, path: &str) -> String {
    let response = browser.get(&app.url(path)).await;
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.text().await.unwrap()
}

/// A signed-in browser whose account watches A (seeded, scanned).
async fn watching_a(app: &TestApp) -> (Browser, accounts::AccountId, String) {
    uk_wallet(app).await;
    let mut browser = Browser::new();
    let account = sign_in(&mut browser, app).await;
    accounts::watchlist::add_wallet(
        app.state.store(),
        app.state.now_ms(),
        &account,
        WalletAddress::parse(A).unwrap(),
        "main",
    )
    .await
    .unwrap();
    let csrf = browser.csrf(app).await;
    (browser, account, csrf)
}

async fn save(browser: &mut Browser, app: &TestApp, form: &[(&str, &str)]) -> reqwest::Response {
    browser.post_form(&app.url("/settings"), form).await
}

#[tokio::test]
async fn the_settings_page_saves_through_the_rest_routes_function_with_prg_csrf_and_refusals_in_words()
 {
    let (app, _p, _e) = rates_app().await;
    let (mut browser, account, csrf) = watching_a(&app).await;
    let html = page(&mut browser, &app, "/settings").await;
    assert!(html.contains("id=\"settings-form\""), "{html}");
    assert!(html.contains("id=\"settings-unsaved\""));
    assert!(html.contains("href=\"/settings\""), "the header links it");
    for name in ["jurisdiction", "method", "currency", "unlabelled", "locale"] {
        assert!(html.contains(&format!("name=\"{name}\"")), "{name}");
    }

    // Without the session's token: refused, nothing stored.
    let forged = save(&mut browser, &app, &[("jurisdiction", "uk")]).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        tax_settings::of(app.state.store(), &account).await.unwrap(),
        None
    );

    // Refusals in words, beside their field, nothing stored.
    for (form, field, words) in [
        (
            vec![("jurisdiction", "uk"), ("method", "fifo")],
            "method",
            "fifo is not accepted in uk",
        ),
        (
            vec![("jurisdiction", "ca"), ("method", "hifo")],
            "method",
            "adjusted cost base",
        ),
        (
            vec![("jurisdiction", "de"), ("currency", "GBP")],
            "currency",
            "EUR only",
        ),
        (
            vec![("jurisdiction", "us"), ("locale", "xx-YY")],
            "locale",
            "en-US",
        ),
        (
            vec![("jurisdiction", "fr")],
            "jurisdiction",
            "none of us, uk, ca, de, au",
        ),
        (
            vec![("jurisdiction", "")],
            "jurisdiction",
            "Choose a jurisdiction",
        ),
    ] {
        let mut sent = vec![("csrf", csrf.as_str())];
        sent.extend(form.iter().copied());
        let refused = save(&mut browser, &app, &sent).await;
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "{form:?}");
        let html = refused.text().await.unwrap();
        let at = html
            .find(&format!("id=\"{field}-error\""))
            .unwrap_or_else(|| panic!("{form:?}: no {field} error in {html}"));
        assert!(
            html[at..].contains(words),
            "{form:?}: {}",
            &html[at..at + 400]
        );
        assert_eq!(
            tax_settings::of(app.state.store(), &account).await.unwrap(),
            None
        );
    }

    // Saved: a 303 back to the page, "Saved" shown once.
    let saved = save(
        &mut browser,
        &app,
        &[
            ("csrf", &csrf),
            ("jurisdiction", "uk"),
            ("method", ""),
            ("currency", ""),
            ("unlabelled", "out_of_books"),
            ("locale", "de-DE"),
        ],
    )
    .await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    assert_eq!(saved.headers()["location"], "/settings");
    let html = page(&mut browser, &app, "/settings").await;
    assert!(html.contains("id=\"settings-notice\""), "{html}");
    assert!(html.contains("Saved: United Kingdom rules, in GBP; numbers as de-DE."));
    assert!(html.contains("<option value=\"uk\" selected"), "{html}");
    assert!(html.contains("<option value=\"de-DE\" selected"));
    let again = page(&mut browser, &app, "/settings").await;
    assert!(
        !again.contains("id=\"settings-notice\""),
        "a reload shows it no more"
    );

    // The REST route reads what the page stored: one function, one row.
    let (_, bearer) = crate::reports_tax::account_of(&app, &account).await;
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
    assert_eq!(
        read,
        json!({"jurisdiction": "uk", "currency": "GBP", "unlabelled": "out_of_books",
               "method": null, "locale": "de-DE"})
    );
    // And a method the US accepts is stored with it.
    let saved = save(
        &mut browser,
        &app,
        &[
            ("csrf", &csrf),
            ("jurisdiction", "us"),
            ("method", "hifo"),
            ("locale", ""),
        ],
    )
    .await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    let stored = tax_settings::of(app.state.store(), &account)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.method, Some(server::basis::Method::Hifo));
    assert_eq!(stored.locale, None);
    app.stop().await;
}

#[tokio::test]
async fn the_report_view_shows_each_countrys_summary_in_its_currency_with_the_rule_of_each_disposal()
 {
    let (app, _p, _e) = rates_app().await;
    let (mut browser, _account, csrf) = watching_a(&app).await;
    let view = format!("/wallets/{A}");

    // No settings: the US in USD. 4 SOL sold at 150 (600 USD) bought at
    // 100 (400 USD): a short-term gain of 200 USD (held 2 months).
    let html = page(&mut browser, &app, &view).await;
    assert!(html.contains("id=\"tax-choices\""), "{html}");
    assert!(html.contains("Short-term gain or loss"), "{html}");
    for amount in ["600.00 USD", "400.00 USD", "200.00 USD"] {
        assert!(html.contains(amount), "{amount}");
    }
    assert!(html.contains("Tax year 2024"));

    // Saved UK defaults make the view the UK's, in pounds, as on SA108:
    // proceeds 600 x 0.70 = 420 GBP, allowable costs 1,000 x 0.68 x 4/10 =
    // 272 GBP, gain 148 GBP, matched by the Section 104 pool.
    let saved = browser
        .post_form(
            &app.url("/settings"),
            &[("csrf", &csrf), ("jurisdiction", "uk")],
        )
        .await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    let html = page(&mut browser, &app, &view).await;
    assert!(html.contains("from your settings"), "{html}");
    assert!(html.contains("Tax year 2024-25"));
    for term in [
        "Number of disposals",
        "Disposal proceeds",
        "Allowable costs (including purchase price)",
        "Gains in the year, before losses",
        "Losses in the year",
    ] {
        assert!(html.contains(term), "{term}");
    }
    for amount in ["420.00 GBP", "272.00 GBP", "148.00 GBP", "0.00 GBP"] {
        assert!(html.contains(amount), "{amount}");
    }
    assert!(
        html.contains("Section 104 pool"),
        "the rule of the disposal"
    );
    assert!(
        html.contains("<option value=\"2024-25\""),
        "the UK's year written 2024-25"
    );
    // The UK accepts no lot order: the method list offers only its own.
    let choices = &html[html.find("id=\"tax-choice-method\"").unwrap()..];
    let choices = &choices[..choices.find("</select>").unwrap()];
    assert!(!choices.contains("value=\"fifo\""), "{choices}");

    // A choice on the page wins over the settings; refusals in words.
    let html = page(
        &mut browser,
        &app,
        &format!("{view}?jurisdiction=uk&method=fifo"),
    )
    .await;
    assert!(html.contains("id=\"tax-error\""), "{html}");
    assert!(html.contains("fifo is not accepted in uk"));
    let html = page(
        &mut browser,
        &app,
        &format!("{view}?jurisdiction=de&currency=GBP"),
    )
    .await;
    assert!(html.contains("de is assessed in EUR only"), "{html}");
    let html = page(
        &mut browser,
        &app,
        &format!("{view}?jurisdiction=uk&tax_year=2024"),
    )
    .await;
    assert!(html.contains("write 2024-25"), "{html}");
    let html = page(
        &mut browser,
        &app,
        &format!("{view}?jurisdiction=us&method=lifo"),
    )
    .await;
    assert!(
        html.contains("200.00 USD") && html.contains("chosen on this page"),
        "{html}"
    );
    let html = page(
        &mut browser,
        &app,
        &format!("{view}?jurisdiction=uk&tax_year=2023-24"),
    )
    .await;
    assert!(html.contains("2023-24 (nothing in it)"), "{html}");
    assert!(html.contains("id=\"tax-no-years\""));

    // Canada in CAD needs a CAD rate the stand-in does not publish: the
    // page says so in words and still shows the rest.
    let html = page(&mut browser, &app, &format!("{view}?jurisdiction=ca")).await;
    assert!(html.contains("id=\"tax-error\""), "{html}");
    assert!(html.contains("id=\"headline\""));

    // The download carries the same choices: the json's tax section is
    // the UK's for 2024-25, and a CSV takes the tax year as its dates.
    let json: Value = browser
        .get(&app.url(&format!(
            "/wallets/{A}/report?format=json&jurisdiction=uk&tax_year=2024-25"
        )))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(json["tax"]["currency"], "GBP", "{json}");
    assert_eq!(json["tax"]["tax_year"], "2024-25");
    assert_eq!(json["tax"]["rows"][0]["gain"], "148");
    let csv = browser
        .get(&app.url(&format!(
            "/wallets/{A}/report?format=csv&jurisdiction=uk&tax_year=2023-24"
        )))
        .await;
    assert_eq!(csv.status(), StatusCode::OK);
    let csv = csv.text().await.unwrap();
    assert_eq!(
        csv.lines().count(),
        1,
        "6 Apr 2023 to 5 Apr 2024 has no leg: {csv}"
    );
    app.stop().await;
}

#[tokio::test]
async fn unlabelled_transfers_are_listed_with_a_label_form_and_labelling_changes_the_next_read() {
    let (app, _p, _e) = rates_app().await;
    let (mut browser, account, csrf) = watching_a(&app).await;
    let view = format!("/wallets/{A}?jurisdiction=us");
    let html = page(&mut browser, &app, &view).await;
    // Both transfers have the stranger on the other side: 10 SOL received
    // (1,000 USD) and 4 SOL sent (600 USD), each at market value.
    let listed = &html[html.find("id=\"unlabelled\"").expect("listed")..];
    assert!(listed.contains(STRANGER), "{listed}");
    assert!(
        listed.contains("1 received: 10 SOL (1,000.00 USD)"),
        "{listed}"
    );
    assert!(listed.contains("1 sent: 4 SOL (600.00 USD)"), "{listed}");
    assert!(listed.contains(&format!("action=\"/wallets/{A}/label\"")));
    assert!(html.contains("Not ready to file"));
    assert!(html.contains("id=\"tax-rows\""), "the send is a disposal");

    // The label form without the session's token changes nothing.
    let forged = browser
        .post_form(
            &app.url(&format!("/wallets/{A}/label")),
            &[
                ("address", STRANGER),
                ("label", "kraken"),
                ("category", "exchange"),
            ],
        )
        .await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert!(
        accounts::address_labels(app.state.store(), &account)
            .await
            .unwrap()
            .is_empty()
    );

    // A label with no name is refused in words on the view; nothing stored.
    let nameless = browser
        .post_form(
            &app.url(&format!("/wallets/{A}/label")),
            &[
                ("csrf", &csrf),
                ("address", STRANGER),
                ("label", " "),
                ("category", "exchange"),
                ("back", "jurisdiction=us"),
            ],
        )
        .await;
    assert_eq!(nameless.status(), StatusCode::BAD_REQUEST);
    assert!(
        nameless
            .text()
            .await
            .unwrap()
            .contains("Not labelled: give the address a name")
    );
    let unknown = browser
        .post_form(
            &app.url(&format!("/wallets/{A}/label")),
            &[
                ("csrf", &csrf),
                ("address", STRANGER),
                ("label", "x"),
                ("category", "friend"),
            ],
        )
        .await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
    assert!(unknown.text().await.unwrap().contains("Not labelled:"));
    assert!(
        accounts::address_labels(app.state.store(), &account)
            .await
            .unwrap()
            .is_empty()
    );

    // Labelled an exchange: a 303 back to the same choices, and the next
    // read has both transfers in and out of the books at cost: no
    // disposal, nothing unlabelled.
    let labelled = browser
        .post_form(
            &app.url(&format!("/wallets/{A}/label")),
            &[
                ("csrf", &csrf),
                ("address", STRANGER),
                ("label", "my Kraken account"),
                ("category", "exchange"),
                ("back", "jurisdiction=us&evil=1"),
            ],
        )
        .await;
    assert_eq!(labelled.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        labelled.headers()["location"],
        format!("/wallets/{A}?jurisdiction=us#tax").as_str()
    );
    let html = page(&mut browser, &app, &view).await;
    assert!(
        html.contains("Labelled 71WD…xiJ6 as my Kraken account (exchange)"),
        "{html}"
    );
    assert!(html.contains("id=\"no-unlabelled\""), "{html}");
    assert!(!html.contains("id=\"tax-rows\""), "no disposal any more");
    app.stop().await;
}

#[tokio::test]
async fn numbers_follow_accept_language_unless_the_account_sets_a_locale() {
    let (app, _p, _e) = rates_app().await;
    let (mut browser, _account, csrf) = watching_a(&app).await;
    let view = format!("/wallets/{A}?jurisdiction=us");
    let de = browser
        .get_in(&app.url(&view), "de-DE,de;q=0.9,en;q=0.5")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        de.contains("1.000,00 USD") && de.contains("600,00 USD"),
        "{de}"
    );
    let gb = browser
        .get_in(&app.url(&view), "en-GB")
        .await
        .text()
        .await
        .unwrap();
    assert!(gb.contains("1,000.00 USD"), "{gb}");
    // The setting wins over the browser.
    let saved = browser
        .post_form(
            &app.url("/settings"),
            &[("csrf", &csrf), ("jurisdiction", "us"), ("locale", "fr-FR")],
        )
        .await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    let fr = browser
        .get_in(&app.url(&view), "de-DE")
        .await
        .text()
        .await
        .unwrap();
    assert!(fr.contains("1\u{202F}000,00 USD"), "{fr}");
    let hidden = hidden_csrf_of(&fr);
    assert_eq!(hidden, csrf);
    app.stop().await;
}
