//! The report as HTML: one section ([`report_section`]) that the share
//! page and the portal's report view both render (in the order a person
//! reads it: value and change, the value chart, allocation, positions with
//! their unrealized gain, one row per transaction, counterparties; tokens
//! by symbol, signatures and addresses linked through `app::explorer`), and the share page
//! around it ([`share_page`]) with its Open Graph card and `noindex`.
//!
//! Every number is written into tables from the decimal values, so the
//! page reads the same with JavaScript off; with it on, `/report.js` hands
//! each chart's options (JSON built in [`super::charts`], in a
//! `<script type="application/json">` that never executes) to the ECharts
//! copy Ledger serves itself. No inline script: the page's CSP allows
//! scripts from this origin only.

use std::fmt::Write as _;

use rust_decimal::Decimal;

use super::{
    ChartRange, Closed, Denomination,
    charts::ChartJson,
    report::{Report, mint_label},
};
use crate::values::format::{self, Locale};

/// Escape text for HTML content and double-quoted attributes.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encode a query value.
fn query_value(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// An atomic amount in whole tokens, to its meaningful digits (`−1.5` for
/// -1500000 with 6 decimals; `values::format::atomic`).
pub fn units(amount: &str, decimals: u32) -> String {
    format::atomic_text(amount, decimals)
}

/// A USD decimal string as money people read: cents, thousands grouped
/// (the JSON reads keep every digit).
fn cents(text: &str, locale: Locale) -> String {
    text.parse::<Decimal>()
        .map(|d| format::decimal_in(d, 2, locale))
        .unwrap_or_else(|_| text.to_owned())
}

/// Places a value in `unit` is read to: cents for USD, four for SOL.
fn places(unit: &str) -> u32 {
    if unit == "SOL" { 4 } else { 2 }
}

/// A figure in `unit`, grouped (`86,088.34`).
fn amount_in(text: &str, unit: &str, locale: Locale) -> String {
    text.parse::<Decimal>()
        .map(|d| format::decimal_in(d, places(unit), locale))
        .unwrap_or_else(|_| text.to_owned())
}

/// A change: always signed, grouped (`+1,200.00`, `−81,521.90`).
fn signed(text: &str, places: u32, locale: Locale) -> String {
    match text.parse::<Decimal>() {
        // Zero (at the places shown) has no direction.
        Ok(d) => format::signed_in(d, places, locale),
        Err(_) => text.to_owned(),
    }
}

/// Where the section's own links point: the page it is on.
pub struct Links<'a> {
    /// The page's path (`/s/{token}` or `/wallets/{address}`).
    pub base: &'a str,
    /// The locale numbers are written in (en-US unless the reader's
    /// setting or `Accept-Language` says otherwise).
    pub locale: Locale,
}

impl Links<'_> {
    fn view(&self, range: ChartRange, denominate: Denomination) -> String {
        format!(
            "{}?range={}&amp;denominate={}",
            self.base,
            range.as_str(),
            denominate.as_str()
        )
    }

    fn page(&self, report: &Report, cursor: Option<&str>) -> String {
        let mut href = self.view(report.range, report.denominate);
        if let Some(c) = cursor {
            let _ = write!(href, "&amp;cursor={}", query_value(c));
        }
        href.push_str("#ledger");
        href
    }
}

fn chart(out: &mut String, id: &str, label: &str, json: &str) {
    let _ = write!(
        out,
        "<div class=\"chart\" id=\"{id}\" data-chart=\"{id}-data\" role=\"img\" aria-label=\"{}\"></div>\
         <script type=\"application/json\" id=\"{id}-data\">{json}</script>",
        esc(label)
    );
}

/// The headline: value at the end of the range and its change.
pub fn headline(report: &Report) -> String {
    headline_in(report, Locale::EnUs)
}

/// [`headline`] in `locale`.
pub fn headline_in(report: &Report, locale: Locale) -> String {
    let s = &report.summary;
    match &s.value_end {
        None => "No value in this range yet.".to_owned(),
        Some(end) => {
            let change = match (&s.change, &s.change_pct) {
                (Some(c), Some(p)) => {
                    format!(
                        "{} {} ({}%) over {}",
                        signed(c, places(&s.unit), locale),
                        s.unit,
                        signed(p, 1, locale),
                        report.range.words()
                    )
                }
                (Some(c), None) => {
                    format!(
                        "{} {} over {}",
                        signed(c, places(&s.unit), locale),
                        s.unit,
                        report.range.words()
                    )
                }
                _ => String::new(),
            };
            let change = if change.is_empty() || s.stale.is_empty() {
                change
            } else {
                let names: Vec<String> = s.stale.iter().map(|m| mint_label(&m.mint)).collect();
                format!("{change}, {} left out (stale price)", names.join(", "))
            };
            format!(
                "{} {}{}",
                amount_in(end, &s.unit, locale),
                s.unit,
                if change.is_empty() {
                    String::new()
                } else {
                    format!(" · {change}")
                }
            )
        }
    }
}

/// How old a close is, in words: hours under two days, else days.
pub fn age_words(secs: i64) -> String {
    let hours = secs.max(0) / 3600;
    match hours {
        0 => "less than an hour old".to_owned(),
        1 => "1 hour old".to_owned(),
        2..=47 => format!("{hours} hours old"),
        _ => format!("{} days old", hours / 24),
    }
}

/// The warning when the last point values a mint at an earlier close: its
/// price is unavailable (a source is down), so the value carries an old
/// price and the change leaves it out. Says nothing when every price is
/// current.
fn stale_note(o: &mut String, report: &Report) {
    let stale = &report.summary.stale;
    if stale.is_empty() {
        return;
    }
    let named: Vec<String> = stale
        .iter()
        .map(|s| {
            format!(
                "{} at its last known close ({}, {})",
                mint_label(&s.mint),
                format::date_time_text(&s.close_at),
                age_words(s.age_secs)
            )
        })
        .collect();
    let _ = write!(
        o,
        "<p class=\"stale\" id=\"stale-prices\" role=\"status\">Current prices are unavailable: \
         the value counts {}. Stale and unpriced holdings are left out of the change.</p>",
        esc(&named.join("; "))
    );
}

/// The report: headline, value, allocation, flows, positions, ledger.
pub fn report_section(report: &Report, charts: &ChartJson, links: &Links<'_>) -> String {
    let mut o = String::with_capacity(32 * 1024);
    let unit = &report.summary.unit;
    let locale = links.locale;
    let _ = write!(
        o,
        "<section class=\"report-head\"><p class=\"meta\">Wallet {}</p>\
         <p class=\"headline\" id=\"headline\">{}</p>",
        wallet_cell(&report.address),
        esc(&headline_in(report, locale))
    );
    // Range tabs above the chart they change; the currency beside them.
    o.push_str(
        "<nav class=\"views tabs\" aria-label=\"Range and currency\"><span class=\"tab-group\">",
    );
    for r in ChartRange::ALL {
        let current = if r == report.range {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(
            o,
            "<a href=\"{}\"{current}>{}</a>",
            links.view(r, report.denominate),
            r.tab()
        );
    }
    o.push_str("</span><span class=\"tab-group\">");
    for d in [Denomination::Usd, Denomination::Sol] {
        let current = if d == report.denominate {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(
            o,
            "<a href=\"{}\"{current}>{}</a>",
            links.view(report.range, d),
            d.unit()
        );
    }
    o.push_str("</span>");
    o.push_str("</nav>");
    stale_note(&mut o, report);
    let _ = write!(
        o,
        "<p class=\"meta\">Generated {} from the ledger Ledger holds for this wallet.{}</p></section>",
        esc(&format::date_time_text(&report.generated_at)),
        if report.value.unpriced_mints.is_empty() {
            String::new()
        } else {
            let n = report.value.unpriced_mints.len();
            let names: Vec<String> = report
                .value
                .unpriced_mints
                .iter()
                .map(|m| mint_label(m))
                .collect();
            format!(
                " {} no price and {} left out of the value: {}.",
                if n == 1 {
                    "1 token has".to_owned()
                } else {
                    format!("{n} tokens have")
                },
                if n == 1 { "is" } else { "are" },
                esc(&names.join(", "))
            )
        }
    );

    // Value over the range.
    let _ = write!(
        o,
        "<section id=\"value\"><h2>Value over {} ({unit})</h2>",
        report.range.words()
    );
    chart(
        &mut o,
        "chart-value",
        &format!("Value in {unit} over {}", report.range.words()),
        &charts.value,
    );
    let _ = write!(
        o,
        "<details open data-close-when-drawn=\"chart-value\"><summary>Value by day (table, {} points)</summary>\
         <table class=\"data\" id=\"table-value\"><thead><tr><th scope=\"col\">Day</th>\
         <th scope=\"col\" class=\"num\">Value ({unit})</th></tr></thead><tbody>",
        report.value.points.len()
    );
    for p in &report.value.points {
        let v = super::report::point_value(p, report.denominate)
            .map(|d| format::decimal_in(d, places(unit), locale))
            .unwrap_or_else(|| "—".to_owned());
        let stale = if p.stale_mints.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = p.stale_mints.iter().map(|s| mint_label(&s.mint)).collect();
            format!(" (old price: {})", names.join(", "))
        };
        let _ = write!(
            o,
            "<tr><td>{}{}{}</td><td class=\"num\">{}</td></tr>",
            esc(&format::date(p.t.saturating_mul(1000))),
            if p.estimated { " (at spot)" } else { "" },
            esc(&stale),
            esc(&v)
        );
    }
    o.push_str("</tbody></table></details></section>");

    allocation_part(&mut o, report, charts, locale);
    positions_part(&mut o, report, locale);
    ledger_part(&mut o, report, links);
    flows_part(&mut o, report, charts, locale);
    o
}

/// A mint as a table cell: its symbol linked to its explorer page (the
/// address in the title), or, for a mint the token list does not name,
/// the address shortened with a button that copies it whole (`report.js`
/// shows the button; without JavaScript the title and the link carry it).
pub fn token_cell(mint: &str) -> String {
    let label = esc(&mint_label(mint));
    let known = crate::reports::tokens::symbol(mint) != mint;
    match app::explorer::address_url(mint) {
        None => label,
        Some(url) if known => format!(
            "<a href=\"{}\" title=\"{}\" rel=\"external noreferrer\">{label}</a>",
            esc(&url),
            esc(mint)
        ),
        Some(url) => format!(
            "<a href=\"{u}\" title=\"{m}\" rel=\"external noreferrer\"><code>{label}</code></a> \
             <button type=\"button\" class=\"copy\" hidden data-copy=\"{m}\" \
             aria-label=\"Copy the mint address {m}\">Copy</button>",
            u = esc(&url),
            m = esc(mint)
        ),
    }
}

/// The report's wallet in full (it breaks anywhere on a phone), linked
/// to its explorer page, with a copy button.
fn wallet_cell(address: &str) -> String {
    let text = format!("<code class=\"address\">{}</code>", esc(address));
    match app::explorer::address_url(address) {
        Some(url) => format!(
            "<a href=\"{u}\" rel=\"external noreferrer\">{text}</a> \
             <button type=\"button\" class=\"copy\" hidden data-copy=\"{a}\" \
             aria-label=\"Copy the wallet address\">Copy</button>",
            u = esc(&url),
            a = esc(address)
        ),
        None => text,
    }
}

/// An address (a counterparty, a wallet) as a cell: `name` linked to its
/// explorer page when it is an address.
fn address_cell(address: &str, name: &str) -> String {
    match app::explorer::address_url(address) {
        Some(url) => format!(
            "<a href=\"{}\" title=\"{}\" rel=\"external noreferrer\">{}</a>",
            esc(&url),
            esc(address),
            esc(name)
        ),
        None => format!("<span title=\"{}\">{}</span>", esc(address), esc(name)),
    }
}

fn allocation_part(o: &mut String, report: &Report, charts: &ChartJson, locale: Locale) {
    o.push_str("<section id=\"allocation\"><h2>Allocation now (USD)</h2>");
    if report.allocation.is_empty() {
        o.push_str("<p>No priced holdings.</p>");
    } else {
        chart(
            o,
            "chart-allocation",
            "Allocation of the value by token",
            &charts.allocation,
        );
    }
    o.push_str(
        "<div class=\"scroll\"><table class=\"data\" id=\"table-allocation\"><thead><tr><th scope=\"col\">Token</th>\
         <th scope=\"col\" class=\"num\">USD</th><th scope=\"col\" class=\"num\">Share</th></tr></thead><tbody>",
    );
    for s in &report.allocation {
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}%</td></tr>",
            token_cell(&s.mint),
            esc(&cents(&s.usd, locale)),
            esc(&s.pct)
        );
    }
    o.push_str("</tbody></table></div></section>");
}

/// USD per whole token of `mint` at the report's last point, from the
/// holding's value and amount there; with whether that price is stale.
fn unit_price(report: &Report, mint: &str) -> Option<(Decimal, bool)> {
    let last = report.value.points.last()?;
    let h = last.holdings.iter().find(|h| h.mint == mint)?;
    let usd: Decimal = h.usd.as_deref()?.parse().ok()?;
    let atomic: i128 = h.amount.parse().ok()?;
    let amount = Decimal::try_from_i128_with_scale(atomic, h.decimals).ok()?;
    if amount.is_zero() {
        return None;
    }
    let stale = last.stale_mints.iter().any(|s| s.mint == mint);
    // Checked: absurd stored figures show a dash, never a panic.
    Some((usd.checked_div(amount)?, stale))
}

fn positions_part(o: &mut String, report: &Report, locale: Locale) {
    let p = &report.positions;
    let _ = write!(
        o,
        "<section id=\"positions\"><h2>Positions</h2><p>Cost basis by {}. Realized gain {} USD \
         (short term {}, long term {}) over {}.</p>",
        esc(&p.method.to_uppercase()),
        esc(&cents(&p.realized.gain, locale)),
        esc(&cents(&p.realized.short_term_gain, locale)),
        esc(&cents(&p.realized.long_term_gain, locale)),
        esc(&format::count_in(
            p.realized.rows,
            "disposal",
            "disposals",
            locale
        ))
    );
    o.push_str(
        "<div class=\"scroll\"><table class=\"data\" id=\"table-positions\"><thead><tr><th scope=\"col\">Token</th>\
         <th scope=\"col\" class=\"num\">Quantity</th><th scope=\"col\" class=\"num\">Value now (USD)</th>\
         <th scope=\"col\" class=\"num\">Cost basis (USD)</th><th scope=\"col\" class=\"num\">Unrealized (USD)</th>\
         <th scope=\"col\" class=\"num\">Realized (USD)</th></tr></thead><tbody>",
    );
    let mut any_stale = false;
    for pos in &p.positions {
        // The basis of the open lots; unknown when any lot's is.
        let basis: Option<Decimal> = pos.lots.iter().try_fold(Decimal::ZERO, |sum, l| {
            l.basis_usd
                .as_deref()
                .and_then(|b| b.parse::<Decimal>().ok())
                .and_then(|b| sum.checked_add(b))
        });
        let quantity: Option<Decimal> = pos.open_quantity.parse().ok();
        let price = unit_price(report, &pos.mint);
        let value = quantity.zip(price).and_then(|(q, (u, _))| q.checked_mul(u));
        let stale = price.is_some_and(|(_, stale)| stale);
        any_stale |= stale;
        let mark = if stale { " (stale price)" } else { "" };
        // A stale price gives no honest gain: left out, as the change is.
        let unrealized = value
            .zip(basis)
            .filter(|_| !stale)
            .and_then(|(v, b)| v.checked_sub(b));
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}{mark}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            token_cell(&pos.mint),
            esc(&quantity.map_or_else(
                || pos.open_quantity.clone(),
                |q| format::quantity_in(q, locale)
            )),
            value.map_or("—".to_owned(), |v| format::decimal_in(v, 2, locale)),
            basis.map_or("—".to_owned(), |b| format::decimal_in(b, 2, locale)),
            unrealized.map_or("—".to_owned(), |u| signed(&u.to_string(), 2, locale)),
            esc(&cents(&pos.realized.gain, locale))
        );
    }
    if p.positions.is_empty() {
        o.push_str("<tr><td colspan=\"6\">No open positions.</td></tr>");
    }
    o.push_str("</tbody></table></div>");
    o.push_str(
        "<p class=\"meta\">Value now is the quantity at the last point's price; unrealized is that value less \
         the open lots' cost basis, shown only when both are known",
    );
    o.push_str(if any_stale {
        " and the price is current (a stale price is marked and left out).</p></section>"
    } else {
        ".</p></section>"
    });
}

fn ledger_part(o: &mut String, report: &Report, links: &Links<'_>) {
    o.push_str(
        "<section id=\"ledger\"><h2>Transactions</h2><div class=\"scroll\"><table class=\"data\" id=\"table-ledger\"><thead><tr>\
         <th scope=\"col\">Time</th><th scope=\"col\">What happened</th>\
         <th scope=\"col\" class=\"num\">USD</th><th scope=\"col\">Transaction</th></tr></thead><tbody>",
    );
    let rows = super::tx_rows::rows(&report.ledger.entries);
    for r in &rows {
        let sig = &r.signature;
        let short = format::short_address(sig);
        let tx = match app::explorer::tx_url(sig) {
            Some(url) => format!(
                "<a href=\"{}\" title=\"{}\" rel=\"external noreferrer\"><code>{}</code></a>",
                esc(&url),
                esc(sig),
                esc(&short)
            ),
            None => format!("<code title=\"{}\">{}</code>", esc(sig), esc(&short)),
        };
        let costs = if r.costs.is_empty() {
            String::new()
        } else {
            format!("<br><span class=\"meta\">{}</span>", esc(&r.costs))
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"what\">{}{costs}</td><td class=\"num\">{}</td><td>{tx}</td></tr>",
            esc(&r
                .block_time
                .as_deref()
                .map_or_else(|| "—".to_owned(), format::date_time_text)),
            esc(&r.what),
            r.usd.map_or("—".to_owned(), |u| esc(&format::decimal_in(
                u,
                2,
                links.locale
            ))),
        );
    }
    if rows.is_empty() {
        o.push_str("<tr><td colspan=\"4\">No transactions.</td></tr>");
    }
    o.push_str("</tbody></table></div><nav class=\"pager\" aria-label=\"Ledger pages\">");
    let _ = write!(
        o,
        "<a href=\"{}\">Newest transactions</a>",
        links.page(report, None)
    );
    if let Some(next) = &report.ledger.next_cursor {
        let _ = write!(
            o,
            "<a href=\"{}\" rel=\"next\">Older transactions →</a>",
            links.page(report, Some(next))
        );
    } else {
        o.push_str("<span>This is the oldest page.</span>");
    }
    o.push_str("</nav></section>");
}

fn flows_part(o: &mut String, report: &Report, charts: &ChartJson, locale: Locale) {
    o.push_str("<section id=\"flows\"><h2>Counterparties</h2>");
    if report.flows.edges.is_empty() {
        o.push_str("<p>No transfers with counterparties.</p>");
    } else {
        chart(
            o,
            "chart-flows",
            "Graph of the wallet's counterparties",
            &charts.flows,
        );
    }
    let names: std::collections::HashMap<&str, String> = report
        .flows
        .nodes
        .iter()
        .map(|n| {
            let name = if n.id == report.address {
                "this wallet".to_owned()
            } else {
                n.name
                    .clone()
                    .unwrap_or_else(|| format::short_address(&n.id))
            };
            (n.id.as_str(), name)
        })
        .collect();
    let name = |id: &str| {
        names
            .get(id)
            .cloned()
            .unwrap_or_else(|| format::short_address(id))
    };
    o.push_str(
        "<div class=\"scroll\"><table class=\"data\" id=\"table-flows\"><thead><tr><th scope=\"col\">From</th><th scope=\"col\">To</th>\
         <th scope=\"col\">Token</th><th scope=\"col\" class=\"num\">Amount</th><th scope=\"col\" class=\"num\">USD</th>\
         <th scope=\"col\" class=\"num\">Transfers</th></tr></thead><tbody>",
    );
    for e in &report.flows.edges {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            address_cell(&e.source, &name(&e.source)),
            address_cell(&e.target, &name(&e.target)),
            token_cell(&e.mint),
            esc(&format::atomic_text_in(&e.amount, e.decimals, locale)),
            esc(&e
                .usd
                .as_deref()
                .map_or_else(|| "—".to_owned(), |u| cents(u, locale))),
            esc(&format::quantity_in(Decimal::from(e.legs), locale))
        );
    }
    o.push_str("</tbody></table></div></section>");
}

/// What the share page needs besides the report.
pub struct SharePage<'a> {
    pub public_url: &'a str,
    pub token: &'a str,
    /// RFC 3339.
    pub expires_at: &'a str,
    /// The visitor's `Accept-Language`, negotiated (no account here).
    pub locale: Locale,
}

fn head(o: &mut String, title: &str) {
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex, nofollow\"><meta name=\"referrer\" content=\"no-referrer\">\
         <title>{}</title><link rel=\"icon\" href=\"/favicon.svg\" type=\"image/svg+xml\">\
         <link rel=\"stylesheet\" href=\"/style/ledger.css\"><link rel=\"stylesheet\" href=\"/style/report.css\">",
        esc(title)
    );
}

fn header(o: &mut String) {
    o.push_str(
        "<header class=\"site-header\"><a class=\"brand\" href=\"/\"><img src=\"/logo.svg\" alt=\"\" width=\"28\" height=\"28\">Ledger</a>\
         <span class=\"meta\">A read-only shared report</span></header>",
    );
}

/// The public share page.
pub fn share_page(report: &Report, charts: &ChartJson, page: &SharePage<'_>) -> String {
    let short = mint_label(&report.address);
    let title = format!("Wallet {short}: Ledger report");
    let description = headline_in(report, page.locale);
    let base = page.public_url.trim_end_matches('/');
    let card = format!("{base}/s/{}/card.png", page.token);
    let url = format!("{base}/s/{}", page.token);
    let mut o = String::with_capacity(64 * 1024);
    head(&mut o, &title);
    let _ = write!(
        o,
        "<meta name=\"description\" content=\"{d}\">\
         <meta property=\"og:type\" content=\"website\"><meta property=\"og:site_name\" content=\"Ledger\">\
         <meta property=\"og:title\" content=\"{t}\"><meta property=\"og:description\" content=\"{d}\">\
         <meta property=\"og:url\" content=\"{u}\"><meta property=\"og:image\" content=\"{c}\">\
         <meta property=\"og:image:type\" content=\"image/png\"><meta property=\"og:image:width\" content=\"1200\">\
         <meta property=\"og:image:height\" content=\"630\"><meta property=\"og:image:alt\" content=\"{t}: {d}\">\
         <meta name=\"twitter:card\" content=\"summary_large_image\"><meta name=\"twitter:title\" content=\"{t}\">\
         <meta name=\"twitter:description\" content=\"{d}\"><meta name=\"twitter:image\" content=\"{c}\">\
         <script src=\"/vendor/echarts.min.js\" defer></script><script src=\"/report.js\" defer></script>\
         </head><body>",
        t = esc(&title),
        d = esc(&description),
        u = esc(&url),
        c = esc(&card),
    );
    header(&mut o);
    let _ = write!(o, "<main class=\"report\"><h1>Wallet {}</h1>", esc(&short));
    o.push_str(&report_section(
        report,
        charts,
        &Links {
            base: &format!("/s/{}", page.token),
            locale: page.locale,
        },
    ));
    let _ = write!(
        o,
        "<p class=\"meta\">This link shows one wallet, read only, until {}. Its owner may revoke it sooner.</p></main></body></html>",
        esc(&format::date_time_text(page.expires_at))
    );
    o
}

/// The sample report (`/sample`): the report section of the made-up
/// sample wallet under a banner that says it is one, with the way in.
pub fn sample_page(report: &Report, charts: &ChartJson) -> String {
    let mut o = String::with_capacity(64 * 1024);
    head(&mut o, "Sample report: Ledger");
    o.push_str(
        "<meta name=\"description\" content=\"A sample Ledger report of a made-up Solana wallet.\">\
         <script src=\"/vendor/echarts.min.js\" defer></script><script src=\"/report.js\" defer></script>\
         </head><body>",
    );
    header(&mut o);
    o.push_str(
        "<main class=\"report\"><p class=\"sample-banner\" id=\"sample-banner\" role=\"note\"><strong>Sample</strong>\
         A made-up wallet with made-up transactions, to show what a report looks like. Read only: \
         nothing here can be changed, paid for or scanned. \
         <a href=\"/signin\">Sign in</a> to watch and scan your own wallets.</p>\
         <h1>Sample report</h1>",
    );
    o.push_str(&report_section(
        report,
        charts,
        &Links {
            base: "/sample",
            // The sample is read by anyone: en-US, as the page it stands for
            // reads without a setting.
            locale: Locale::default(),
        },
    ));
    o.push_str("</main></body></html>");
    o
}

/// The page a closed (unknown, revoked, expired) link answers with.
pub fn closed_page(closed: Closed) -> String {
    let mut o = String::new();
    head(&mut o, "Share link not found: Ledger");
    o.push_str("</head><body>");
    header(&mut o);
    let _ = write!(
        o,
        "<main class=\"report\"><h1>This share link does not open</h1><p class=\"lede\" id=\"closed\">{}</p>\
         <p><a href=\"/\">Ledger</a></p></main></body></html>",
        esc(closed.words())
    );
    o
}

/// A page for a refusal while reading (a bad cursor, a wallet not scanned).
pub fn problem_page(title: &str, words: &str) -> String {
    let mut o = String::new();
    head(&mut o, &format!("{title}: Ledger"));
    o.push_str("</head><body>");
    header(&mut o);
    let _ = write!(
        o,
        "<main class=\"report\"><h1>{}</h1><p class=\"lede\">{}</p></main></body></html>",
        esc(title),
        esc(words)
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_what_breaks_out_of_text_and_attributes() {
        assert_eq!(
            esc("<a href=\"x\">'&"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;"
        );
    }

    #[test]
    fn atomic_amounts_read_in_whole_tokens() {
        assert_eq!(units("-1500000", 6), "−1.5");
        assert_eq!(units("1000000000", 9), "1");
        assert_eq!(units("x", 9), "x");
    }
}
