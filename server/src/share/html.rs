//! The report as HTML: one section ([`report_section`]) that the share
//! page and the portal's report view both render, and the share page
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
use crate::values::format;

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
fn cents(text: &str) -> String {
    text.parse::<Decimal>()
        .map(|d| format::decimal(d, 2))
        .unwrap_or_else(|_| text.to_owned())
}

/// Places a value in `unit` is read to: cents for USD, four for SOL.
fn places(unit: &str) -> u32 {
    if unit == "SOL" { 4 } else { 2 }
}

/// A figure in `unit`, grouped (`86,088.34`).
fn amount_in(text: &str, unit: &str) -> String {
    text.parse::<Decimal>()
        .map(|d| format::decimal(d, places(unit)))
        .unwrap_or_else(|_| text.to_owned())
}

/// A change: always signed, grouped (`+1,200.00`, `−81,521.90`).
fn signed(text: &str, places: u32) -> String {
    match text.parse::<Decimal>() {
        Ok(d) => {
            let written = format::decimal(d, places);
            if written.starts_with(format::MINUS) {
                written
            } else {
                format!("+{written}")
            }
        }
        Err(_) => text.to_owned(),
    }
}

/// Where the section's own links point: the page it is on.
pub struct Links<'a> {
    /// The page's path (`/s/{token}` or `/wallets/{address}`).
    pub base: &'a str,
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
    let s = &report.summary;
    match &s.value_end {
        None => "No value in this range yet.".to_owned(),
        Some(end) => {
            let change = match (&s.change, &s.change_pct) {
                (Some(c), Some(p)) => {
                    format!(
                        "{} {} ({}%) over {}",
                        signed(c, places(&s.unit)),
                        s.unit,
                        signed(p, 1),
                        report.range.words()
                    )
                }
                (Some(c), None) => {
                    format!(
                        "{} {} over {}",
                        signed(c, places(&s.unit)),
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
                amount_in(end, &s.unit),
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
    let _ = write!(
        o,
        "<section class=\"report-head\"><p class=\"meta\">Wallet <code class=\"address\">{}</code></p>\
         <p class=\"headline\" id=\"headline\">{}</p>",
        esc(&report.address),
        esc(&headline(report))
    );
    o.push_str("<nav class=\"views\" aria-label=\"Range and currency\"><span>Range:</span>");
    for r in ChartRange::ALL {
        let current = if r == report.range {
            " aria-current=\"true\""
        } else {
            ""
        };
        let _ = write!(
            o,
            "<a href=\"{}\"{current}>{}</a>",
            links.view(r, report.denominate),
            r.as_str()
        );
    }
    o.push_str("<span>Currency:</span>");
    for d in [Denomination::Usd, Denomination::Sol] {
        let current = if d == report.denominate {
            " aria-current=\"true\""
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
    o.push_str("</nav>");
    stale_note(&mut o, report);
    let _ = write!(
        o,
        "<p class=\"meta\">Generated {} from the ledger Ledger holds for this wallet.{}</p></section>",
        esc(&format::date_time_text(&report.generated_at)),
        if report.value.unpriced_mints.is_empty() {
            String::new()
        } else {
            format!(
                " {} mint(s) have no price and are left out of the value.",
                report.value.unpriced_mints.len()
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
            .map(|d| format::decimal(d, places(unit)))
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

    // Allocation.
    o.push_str("<section id=\"allocation\"><h2>Allocation by mint (USD, now)</h2>");
    if report.allocation.is_empty() {
        o.push_str("<p>No priced holdings.</p>");
    } else {
        chart(
            &mut o,
            "chart-allocation",
            "Allocation of the value by mint",
            &charts.allocation,
        );
    }
    o.push_str(
        "<table class=\"data\" id=\"table-allocation\"><thead><tr><th scope=\"col\">Mint</th>\
         <th scope=\"col\" class=\"num\">USD</th><th scope=\"col\" class=\"num\">Share</th></tr></thead><tbody>",
    );
    for s in &report.allocation {
        let _ = write!(
            o,
            "<tr><td title=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}%</td></tr>",
            esc(&s.mint),
            esc(&s.label),
            esc(&cents(&s.usd)),
            esc(&s.pct)
        );
    }
    o.push_str("</tbody></table></section>");

    // Flows.
    o.push_str("<section id=\"flows\"><h2>Counterparties</h2>");
    if report.flows.edges.is_empty() {
        o.push_str("<p>No transfers with counterparties.</p>");
    } else {
        chart(
            &mut o,
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
                n.name.clone().unwrap_or_else(|| mint_label(&n.id))
            };
            (n.id.as_str(), name)
        })
        .collect();
    let name = |id: &str| names.get(id).cloned().unwrap_or_else(|| mint_label(id));
    o.push_str(
        "<table class=\"data\" id=\"table-flows\"><thead><tr><th scope=\"col\">From</th><th scope=\"col\">To</th>\
         <th scope=\"col\">Mint</th><th scope=\"col\" class=\"num\">Amount</th><th scope=\"col\" class=\"num\">USD</th>\
         <th scope=\"col\" class=\"num\">Legs</th></tr></thead><tbody>",
    );
    for e in &report.flows.edges {
        let _ = write!(
            o,
            "<tr><td title=\"{}\">{}</td><td title=\"{}\">{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&e.source),
            esc(&name(&e.source)),
            esc(&e.target),
            esc(&name(&e.target)),
            esc(&mint_label(&e.mint)),
            esc(&units(&e.amount, e.decimals)),
            esc(&e.usd.as_deref().map_or_else(|| "—".to_owned(), cents)),
            e.legs
        );
    }
    o.push_str("</tbody></table></section>");

    // Positions.
    let p = &report.positions;
    let _ = write!(
        o,
        "<section id=\"positions\"><h2>Open positions ({})</h2><p>Realized gain {} USD \
         (short term {}, long term {}) over {} disposals.</p>",
        esc(&p.method),
        esc(&cents(&p.realized.gain)),
        esc(&cents(&p.realized.short_term_gain)),
        esc(&cents(&p.realized.long_term_gain)),
        p.realized.rows
    );
    o.push_str(
        "<table class=\"data\" id=\"table-positions\"><thead><tr><th scope=\"col\">Mint</th>\
         <th scope=\"col\" class=\"num\">Open quantity</th><th scope=\"col\" class=\"num\">Open lots</th>\
         <th scope=\"col\" class=\"num\">Cost basis (USD)</th><th scope=\"col\" class=\"num\">Realized (USD)</th></tr></thead><tbody>",
    );
    for pos in &p.positions {
        let basis: Option<Decimal> = pos
            .lots
            .iter()
            .map(|l| {
                l.basis_usd
                    .as_deref()
                    .and_then(|b| b.parse::<Decimal>().ok())
            })
            .sum();
        let _ = write!(
            o,
            "<tr><td title=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&pos.mint),
            esc(&mint_label(&pos.mint)),
            esc(&pos.open_quantity),
            pos.lots.len(),
            basis.map_or("—".to_owned(), |b| b.round_dp(2).to_string()),
            esc(&cents(&pos.realized.gain))
        );
    }
    o.push_str("</tbody></table></section>");

    // Ledger.
    o.push_str(
        "<section id=\"ledger\"><h2>Ledger</h2><table class=\"data\" id=\"table-ledger\"><thead><tr>\
         <th scope=\"col\">Time</th><th scope=\"col\">Type</th><th scope=\"col\">Mint</th>\
         <th scope=\"col\" class=\"num\">Amount</th><th scope=\"col\" class=\"num\">USD</th>\
         <th scope=\"col\">Transaction</th></tr></thead><tbody>",
    );
    for e in &report.ledger.entries {
        let sig = &e.signature;
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td title=\"{}\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td><code title=\"{}\">{}…</code></td></tr>",
            esc(&e
                .block_time
                .as_deref()
                .map_or_else(|| "—".to_owned(), format::date_time_text)),
            esc(&e.operation_type.replace('_', " ")),
            esc(&e.mint),
            esc(&mint_label(&e.mint)),
            esc(&units(&e.amount, u32::from(e.decimals))),
            esc(&e.usd_value.as_deref().map_or_else(|| "—".to_owned(), cents)),
            esc(sig),
            esc(sig.get(..10).unwrap_or(sig))
        );
    }
    if report.ledger.entries.is_empty() {
        o.push_str("<tr><td colspan=\"6\">No entries.</td></tr>");
    }
    o.push_str("</tbody></table><nav class=\"pager\" aria-label=\"Ledger pages\">");
    let _ = write!(
        o,
        "<a href=\"{}\">Newest entries</a>",
        links.page(report, None)
    );
    if let Some(next) = &report.ledger.next_cursor {
        let _ = write!(
            o,
            "<a href=\"{}\" rel=\"next\">Older entries →</a>",
            links.page(report, Some(next))
        );
    } else {
        o.push_str("<span>This is the oldest page.</span>");
    }
    o.push_str("</nav></section>");
    o
}

/// What the share page needs besides the report.
pub struct SharePage<'a> {
    pub public_url: &'a str,
    pub token: &'a str,
    /// RFC 3339.
    pub expires_at: &'a str,
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
    let description = headline(report);
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
        },
    ));
    let _ = write!(
        o,
        "<p class=\"meta\">This link shows one wallet, read only, until {}. Its owner may revoke it sooner.</p></main></body></html>",
        esc(page.expires_at)
    );
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
