//! The PDF report for an accountant: a cover page of totals (wallets,
//! range or tax year, method, jurisdiction and currency, gains in the
//! jurisdiction's terms, income, fees, values, warnings, the disclaimer),
//! then realized gains by term per wallet, open positions, income by kind,
//! the tax section when one was asked for (each tax year's summary in the
//! jurisdiction's own terms and currency, each disposal with the rule that
//! matched it), the value over the range as a vector chart, and the ledger.
//!
//! Written with `pdf-writer` in DejaVu Sans, embedded as subsets
//! ([`fonts`]): the text is real text (selectable, searchable, and what
//! `pdftotext` reads back) and any character the font has prints. Every
//! string is measured with the font's widths and wrapped or cut with an
//! ellipsis to its cell, so nothing runs off the page. Pages are kept open
//! until the last one is written, then each gets its footer ("page N of
//! M" and the disclaimer), so M is known. Content streams are deflated
//! with `miniz_oxide`.
//!
//! The figures are the report object's ([`super::summary::report`]), so
//! the PDF and `format: json` print the same numbers. Floats appear only
//! as drawing coordinates, never as an amount shown.

pub mod fonts;

use pdf_writer::{Content, Filter, Finish, Pdf, Rect, Ref, Str, TextStr};
use rust_decimal::{Decimal, prelude::ToPrimitive};

use super::{
    book::{Book, time_of, whole},
    summary::{Figures, Report},
    tokens,
};
use crate::{analytics::tax::TaxSection, values::format};
pub use fonts::FontError;
use fonts::{Fonts, Style};

const WIDTH: f32 = 612.0;
const HEIGHT: f32 = 792.0;
const MARGIN: f32 = 48.0;
/// Content stops here; the footer is below.
const BOTTOM: f32 = 58.0;
const LEADING: f32 = 13.0;
/// Points on the value chart.
const CHART_POINTS: usize = 60;
/// zlib level of the content streams: 1 deflates 100,000 ledger rows four
/// times faster than 6 for a file about 14% larger (docs/benchmarks.md).
const DEFLATE_LEVEL: u8 = 1;

/// On the cover, in full.
pub const DISCLAIMER: &str = "Not tax advice. The figures are computed from on-chain data and \
     the price sources stated in this report, and may be incomplete where a price or part of \
     the history is missing. Check them with a tax professional before you file.";
/// In every footer.
pub const FOOTER_DISCLAIMER: &str = "Not tax advice: figures from on-chain data and the stated \
     price sources. Check them with a tax professional.";
/// What the values are made of, on the cover.
const PRICE_SOURCES: &str = "Prices: each leg in USD at the hour's close at its block time, \
     else the day's (SOL from Coinbase, other tokens from Jupiter), stablecoins at 1 USD; \
     other currencies at the European Central Bank's daily euro reference rates.";

/// A table column: where it starts, how wide it is, and whether its text
/// is aligned right (amounts).
#[derive(Clone, Copy)]
struct Col {
    x: f32,
    w: f32,
    right: bool,
}

const fn col(x: f32, w: f32) -> Col {
    Col { x, w, right: false }
}

const fn num(x: f32, w: f32) -> Col {
    Col { x, w, right: true }
}

/// Pages as they are written: each page's content stays open until the
/// document is done, so its footer can say how many pages there are.
struct Pages {
    fonts: Fonts,
    done: Vec<Content>,
    content: Content,
    y: f32,
    /// Said in every footer: what the report covers.
    title: String,
}

impl Pages {
    fn new(title: String) -> Result<Self, FontError> {
        Ok(Self {
            fonts: Fonts::new()?,
            done: Vec::new(),
            content: Content::new(),
            y: HEIGHT - MARGIN,
            title,
        })
    }

    fn break_page(&mut self) {
        let content = std::mem::replace(&mut self.content, Content::new());
        self.done.push(content);
        self.y = HEIGHT - MARGIN;
    }

    /// Room for `height` more points, or a new page.
    fn need(&mut self, height: f32) -> bool {
        if self.y - height < BOTTOM {
            self.break_page();
            return true;
        }
        false
    }

    fn text_at(&mut self, x: f32, y: f32, style: Style, size: f32, s: &str) {
        let glyphs = self.fonts.encode(style, s);
        self.content
            .begin_text()
            .set_font(style.resource(), size)
            .next_line(x, y)
            .show(Str(&glyphs))
            .end_text();
    }

    /// `s` in `col` on the line at `y`: cut with an ellipsis to its width.
    fn cell(&mut self, c: Col, y: f32, style: Style, size: f32, s: &str) {
        let fitted = self.fonts.fit(style, size, s, c.w);
        let x = if c.right {
            c.x + c.w - self.fonts.width(style, size, &fitted)
        } else {
            c.x
        };
        self.text_at(x, y, style, size, &fitted);
    }

    fn title(&mut self, s: &str) {
        let y = self.y - 14.0;
        self.text_at(MARGIN, y, Style::Bold, 22.0, s);
        self.y -= LEADING * 2.6;
    }

    fn heading(&mut self, s: &str) {
        self.need(LEADING * 4.0);
        self.y -= LEADING * 0.6;
        let y = self.y;
        let fitted = self.fonts.fit(Style::Bold, 13.0, s, WIDTH - 2.0 * MARGIN);
        self.text_at(MARGIN, y, Style::Bold, 13.0, &fitted);
        self.y -= LEADING * 1.5;
    }

    fn subheading(&mut self, s: &str) {
        self.need(LEADING * 3.0);
        self.y -= LEADING * 0.3;
        let y = self.y;
        let fitted = self.fonts.fit(Style::Bold, 10.0, s, WIDTH - 2.0 * MARGIN);
        self.text_at(MARGIN, y, Style::Bold, 10.0, &fitted);
        self.y -= LEADING * 1.2;
    }

    /// A paragraph wrapped to the page's width.
    fn paragraph(&mut self, s: &str, size: f32, style: Style) {
        let lines = self.fonts.wrap(style, size, s, WIDTH - 2.0 * MARGIN);
        for line in lines {
            self.need(LEADING);
            let y = self.y;
            self.text_at(MARGIN, y, style, size, &line);
            self.y -= size * 1.35;
        }
    }

    fn line(&mut self, s: &str) {
        self.paragraph(s, 9.5, Style::Regular);
    }

    /// A label and its value, the value aligned right at `LABEL + VALUE`.
    fn pair(&mut self, label: &str, value: &str, bold: bool) {
        self.need(LEADING);
        let y = self.y;
        let style = if bold { Style::Bold } else { Style::Regular };
        self.cell(col(MARGIN, 300.0), y, style, 9.5, label);
        self.cell(num(MARGIN + 300.0, 216.0), y, style, 9.5, value);
        self.y -= LEADING;
    }

    /// One table row at 8 points.
    fn row(&mut self, cols: &[Col], cells: &[&str], bold: bool) {
        self.need(LEADING);
        let y = self.y;
        let style = if bold { Style::Bold } else { Style::Regular };
        for (c, s) in cols.iter().zip(cells) {
            self.cell(*c, y, style, 8.0, s);
        }
        self.y -= LEADING * 0.9;
    }

    /// A table: its header, repeated at the top of every page it runs on.
    fn table<I>(&mut self, cols: &[Col], header: &[&str], rows: I)
    where
        I: IntoIterator<Item = (Vec<String>, bool)>,
    {
        self.need(LEADING * 3.0);
        self.row(cols, header, true);
        for (cells, bold) in rows {
            if self.y - LEADING < BOTTOM {
                self.break_page();
                self.row(cols, header, true);
            }
            let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
            self.row(cols, &cells, bold);
        }
    }

    /// Every page, each with its footer: what the report is, the
    /// disclaimer, and "page N of M".
    fn finish(mut self) -> (Vec<Vec<u8>>, Fonts) {
        let last = std::mem::replace(&mut self.content, Content::new());
        self.done.push(last);
        let total = self.done.len();
        let done = std::mem::take(&mut self.done);
        let mut out = Vec::with_capacity(total);
        for (i, content) in done.into_iter().enumerate() {
            self.content = content;
            let page = format!("page {} of {total}", i + 1);
            let width = self.fonts.width(Style::Regular, 7.5, &page);
            self.content.set_fill_gray(0.35);
            self.text_at(WIDTH - MARGIN - width, 34.0, Style::Regular, 7.5, &page);
            let title = self.fonts.fit(
                Style::Regular,
                7.5,
                &self.title,
                WIDTH - 2.0 * MARGIN - width - 12.0,
            );
            self.text_at(MARGIN, 34.0, Style::Regular, 7.5, &title);
            let note = self
                .fonts
                .fit(Style::Regular, 7.0, FOOTER_DISCLAIMER, WIDTH - 2.0 * MARGIN);
            self.text_at(MARGIN, 24.0, Style::Regular, 7.0, &note);
            let content = std::mem::replace(&mut self.content, Content::new());
            out.push(content.finish().into_vec());
        }
        (out, self.fonts)
    }
}

/// A wallet address as tables show it: `71WDyy…xiJ6`.
pub fn short(address: &str) -> String {
    if address.chars().count() <= 14 {
        return address.to_owned();
    }
    let head: String = address.chars().take(6).collect();
    let tail: String = address
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{head}…{tail}")
}

/// A money cell: two decimals and thousands separators (`86,088.34 USD`,
/// `−1,234.50 USD`), as every surface writes money (`values::format`).
fn money(s: &str, currency: &str) -> String {
    match s.parse::<Decimal>() {
        Ok(d) => format::fiat(d, currency),
        Err(_) => s.to_owned(),
    }
}

fn usd(s: &str) -> String {
    money(s, "USD")
}

/// A quantity cell: exact, grouped (`1,739.46`).
fn qty(s: &str) -> String {
    match s.parse::<Decimal>() {
        Ok(d) => format::quantity(d),
        Err(_) => s.to_owned(),
    }
}

/// `2025-06-04 01:00` (UTC), compact for tables.
fn stamp(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

/// An RFC 3339 time or a `YYYY-MM-DD` date as a day people read.
fn day_of(s: &str) -> String {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return format::date(t.timestamp_millis());
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        && let Some(t) = d.and_hms_opt(0, 0, 0)
    {
        return format::date(t.and_utc().timestamp_millis());
    }
    s.to_owned()
}

/// The name people know a jurisdiction by.
fn jurisdiction_name(code: &str) -> &str {
    match code {
        "us" => "United States",
        "uk" => "United Kingdom",
        "ca" => "Canada",
        "de" => "Germany",
        "au" => "Australia",
        other => other,
    }
}

/// A tax year's figures in the jurisdiction's own terms: the summary's
/// fields in the order its return asks for them, each with its label and
/// whether it is money.
fn year_terms(jurisdiction: &str) -> &'static [(&'static str, &'static str, bool)] {
    match jurisdiction {
        "us" => &[
            ("proceeds", "Proceeds, Form 8949 column (d)", true),
            ("basis", "Cost or other basis, column (e)", true),
            ("short_term_gain", "Short-term gain or (loss), Part I", true),
            ("long_term_gain", "Long-term gain or (loss), Part II", true),
        ],
        "uk" => &[
            ("disposals", "Number of disposals (SA108)", false),
            ("proceeds", "Disposal proceeds", true),
            (
                "allowable_costs",
                "Allowable costs (including incidental costs)",
                true,
            ),
            ("gains", "Gains in the year, before losses", true),
            ("losses", "Losses in the year", true),
            (
                "gains_from_2024_10_30",
                "Gains on or after 30 October 2024",
                true,
            ),
            (
                "losses_from_2024_10_30",
                "Losses on or after 30 October 2024",
                true,
            ),
        ],
        "ca" => &[
            ("proceeds", "Proceeds of disposition (Schedule 3)", true),
            ("adjusted_cost_base", "Adjusted cost base", true),
            ("outlays", "Outlays and expenses", true),
            ("gain", "Gain (or loss)", true),
            (
                "superficial_losses",
                "Superficial losses denied (added to the ACB)",
                true,
            ),
            (
                "taxable_capital_gain",
                "Taxable capital gain (one half, line 12700)",
                true,
            ),
        ],
        "de" => &[
            (
                "gain_within_one_year",
                "Gain within one year (§ 23 EStG, Anlage SO)",
                true,
            ),
            (
                "gain_after_one_year",
                "Gain after more than one year (not taxable)",
                true,
            ),
            ("exemption_limit", "Exemption limit (Freigrenze)", true),
            ("taxable_gain", "Taxable gain", true),
        ],
        "au" => &[
            (
                "discountable_gains",
                "Gains on assets held 12 months or more",
                true,
            ),
            ("other_gains", "Other capital gains", true),
            ("losses", "Capital losses", true),
            (
                "net_capital_gain",
                "Net capital gain (after losses and the 50% discount)",
                true,
            ),
            ("net_capital_loss", "Net capital loss carried forward", true),
        ],
        _ => &[],
    }
}

/// What a disposal row's `rule` means, in words.
fn rule_words(rule: &str) -> &str {
    match rule {
        "same_day" => "same day",
        "bed_and_breakfast" => "30 days (B&B)",
        "section_104" => "Section 104",
        "acb" => "ACB",
        "superficial_loss" => "superficial loss",
        "held_over_1y" => "held > 1 year",
        "held_1y_or_less" => "held ≤ 1 year",
        "discount" => "discount",
        "no_discount" => "no discount",
        other => other,
    }
}

/// The PDF of `report` over `books`.
pub fn render(report: &Report, books: &[Book]) -> Result<Vec<u8>, FontError> {
    let m = &report.meta;
    let who = match m.wallets.as_slice() {
        [one] => format!("wallet {}", short(one)),
        many => format!("{} wallets", many.len()),
    };
    let mut p = Pages::new(format!(
        "Ledger report · {who} · generated {}",
        generated(report)
    ))?;
    cover(&mut p, report);
    p.break_page();
    gains(&mut p, report);
    positions(&mut p, &report.total);
    p.break_page();
    income(&mut p, report);
    if let Some(tax) = &report.tax {
        p.break_page();
        tax_pages(&mut p, tax);
    }
    p.break_page();
    chart(&mut p, books);
    ledger(&mut p, books);
    let (contents, fonts) = p.finish();
    let title = format!("Ledger report ({})", report.meta.wallets.join(", "));
    assemble(contents, &fonts, &title)
}

fn generated(report: &Report) -> String {
    chrono::DateTime::parse_from_rfc3339(&report.meta.generated_at)
        .map(|t| format::date_time(t.timestamp_millis()))
        .unwrap_or_else(|_| report.meta.generated_at.clone())
}

/// The range as people read it.
fn range_words(report: &Report) -> String {
    let r = &report.meta.range;
    match (&r.from, &r.to) {
        (None, None) => "all history, to the time of generation".to_owned(),
        (Some(from), None) => format!("{} to the time of generation", day_of(from)),
        (None, Some(to)) => format!("from the first transaction to {}", day_of(to)),
        (Some(from), Some(to)) => format!("{} to {}", day_of(from), day_of(to)),
    }
}

/// Page 1: what the report covers, how it was made, its totals, what to
/// be careful about, and the disclaimer.
fn cover(p: &mut Pages, report: &Report) {
    let m = &report.meta;
    p.title("Ledger report");
    let tax = report.tax.as_ref();
    let mut facts: Vec<(String, String)> = Vec::new();
    let wallets = match m.wallets.as_slice() {
        [one] => one.clone(),
        many => format!("{} wallets", many.len()),
    };
    facts.push(("Wallets".to_owned(), wallets));
    facts.push(("Range".to_owned(), range_words(report)));
    if let Some(tax) = tax {
        facts.push((
            "Tax year".to_owned(),
            tax.tax_year
                .clone()
                .unwrap_or_else(|| "every year with disposals".to_owned()),
        ));
        facts.push((
            "Jurisdiction and currency".to_owned(),
            format!(
                "{}, {} (matching: {})",
                jurisdiction_name(&tax.jurisdiction),
                tax.currency,
                tax.matching.replace('_', " ")
            ),
        ));
    } else {
        facts.push((
            "Jurisdiction and currency".to_owned(),
            "none asked: figures in USD, gains by US holding period".to_owned(),
        ));
    }
    let mut method = m.method.clone();
    if !m.accepted_for_us_filings {
        method.push_str(" (not accepted for US filings of digital assets)");
    }
    facts.push(("Cost-basis method".to_owned(), method));
    facts.push(("Generated".to_owned(), generated(report)));
    facts.push((
        "SOL price at generation".to_owned(),
        m.sol_usd_at_generation
            .as_deref()
            .map(usd)
            .unwrap_or_else(|| "unavailable".to_owned()),
    ));
    facts.push((
        "Airdrop spam".to_owned(),
        if m.exclude_spam {
            "left out"
        } else {
            "included"
        }
        .to_owned(),
    ));
    for (label, value) in &facts {
        p.need(LEADING);
        let y = p.y;
        p.cell(col(MARGIN, 150.0), y, Style::Bold, 9.5, label);
        p.cell(
            col(MARGIN + 155.0, WIDTH - 2.0 * MARGIN - 155.0),
            y,
            Style::Regular,
            9.5,
            value,
        );
        p.y -= LEADING;
    }
    if m.wallets.len() > 1 {
        let list = m
            .wallets
            .iter()
            .map(|w| short(w))
            .collect::<Vec<_>>()
            .join(", ");
        p.paragraph(&list, 8.0, Style::Regular);
    }

    if let Some(tax) = tax {
        for year in &tax.years {
            let name = year["tax_year"].as_str().unwrap_or_default();
            p.heading(&format!(
                "Tax year {name}: {} terms, in {}",
                jurisdiction_name(&tax.jurisdiction),
                tax.currency
            ));
            year_figures(p, &tax.jurisdiction, &tax.currency, year);
        }
        if tax.years.is_empty() {
            p.heading("Tax summary");
            p.line("No disposals in the tax year asked for.");
        }
    }

    let t = &report.total;
    p.heading("Totals in USD, over the range");
    let r = &t.realized;
    for (label, value, bold) in [
        ("Proceeds", usd(&r.proceeds), false),
        ("Cost basis", usd(&r.basis), false),
        ("Short-term gain or (loss)", usd(&r.short_term_gain), false),
        ("Long-term gain or (loss)", usd(&r.long_term_gain), false),
        ("Realized gain or (loss)", usd(&r.gain), true),
        (
            "Income (staking rewards, MEV tips, airdrops, interest)",
            usd(&t.income.usd),
            false,
        ),
        (
            "Network fees",
            format!("{} SOL, {}", qty(&t.fees.sol), usd(&t.fees.usd)),
            false,
        ),
        ("Value at start", usd(&t.value_start_usd), false),
        ("Value at end", usd(&t.value_end_usd), false),
    ] {
        p.pair(label, &value, bold);
    }
    warnings(p, report);
    p.heading("Read this first");
    p.paragraph(DISCLAIMER, 9.5, Style::Bold);
    p.y -= 3.0;
    p.paragraph(PRICE_SOURCES, 8.5, Style::Regular);
}

/// One tax year's figures, label and amount, in the jurisdiction's terms.
fn year_figures(p: &mut Pages, jurisdiction: &str, currency: &str, year: &serde_json::Value) {
    for (key, label, is_money) in year_terms(jurisdiction) {
        let value = &year[*key];
        let shown = match value {
            serde_json::Value::String(s) if *is_money => money(s, currency),
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) => n.to_string(),
            _ => continue,
        };
        p.pair(label, &shown, false);
    }
    if let Some(n) = year["incomplete_rows"].as_u64().filter(|n| *n > 0) {
        p.pair(
            "Rows left out (unpriced or beyond the history)",
            &n.to_string(),
            false,
        );
    }
    if let Some(list) = year["unlabelled"].as_array().filter(|l| !l.is_empty()) {
        let count: u64 = list.iter().filter_map(|u| u["count"].as_u64()).sum();
        p.paragraph(
            &format!(
                "Warning: {count} unlabelled transfer(s) this year are read at market value \
                 (a disposal or an acquisition); label the addresses (own wallet, exchange or \
                 merchant) before filing."
            ),
            8.5,
            Style::Regular,
        );
    }
}

/// Stale and unpriced holdings, incomplete rows, and what else changes how
/// far the figures can be trusted.
fn warnings(p: &mut Pages, report: &Report) {
    let t = &report.total;
    let mut said: Vec<String> = Vec::new();
    for s in &t.stale_mints {
        let hours = s.age_secs / 3600;
        let age = if hours >= 48 {
            format!("{} days", hours / 24)
        } else {
            format!("{hours} hours")
        };
        said.push(format!(
            "{} is valued at its last known close ({}, {age} old): its price source was \
             unavailable.",
            tokens::symbol(&s.mint),
            day_of(&s.close_at)
        ));
    }
    if !t.unpriced_mints.is_empty() {
        let names: Vec<String> = t
            .unpriced_mints
            .iter()
            .map(|m| short(tokens::symbol(m)))
            .collect();
        said.push(format!(
            "Held with no price, left out of the values: {}.",
            names.join(", ")
        ));
    }
    if t.realized.incomplete_rows > 0 {
        said.push(format!(
            "{} realized row(s) have no price or no known basis and are left out of the gains \
             (known proceeds {}).",
            t.realized.incomplete_rows,
            usd(&t.realized.incomplete_proceeds)
        ));
    }
    if t.income.unpriced_legs > 0 {
        said.push(format!(
            "{} income leg(s) have no price and are left out of income.",
            t.income.unpriced_legs
        ));
    }
    if !report.meta.accepted_for_us_filings {
        said.push("Average cost is not accepted for US filings of digital assets.".to_owned());
    }
    if said.is_empty() {
        return;
    }
    p.heading("Warnings");
    for s in said {
        p.paragraph(&format!("• {s}"), 9.0, Style::Regular);
    }
}

fn gains(p: &mut Pages, report: &Report) {
    p.heading("Realized gains by term (USD)");
    let cols = [
        col(MARGIN, 100.0),
        num(150.0, 90.0),
        num(245.0, 90.0),
        num(340.0, 90.0),
        num(435.0, 45.0),
        num(485.0, 79.0),
    ];
    let mut all: Vec<(String, &Figures)> = report
        .wallets
        .iter()
        .map(|w| (short(&w.address), &w.figures))
        .collect();
    all.push(("All wallets".to_owned(), &report.total));
    let rows = all.into_iter().map(|(name, f)| {
        let r = &f.realized;
        let total = name == "All wallets";
        (
            vec![
                name,
                usd(&r.short_term_gain),
                usd(&r.long_term_gain),
                usd(&r.gain),
                r.rows.to_string(),
                r.incomplete_rows.to_string(),
            ],
            total,
        )
    });
    p.table(
        &cols,
        &[
            "Wallet",
            "Short term",
            "Long term",
            "Total",
            "Rows",
            "Incomplete",
        ],
        rows,
    );
}

/// The income page: each kind per wallet and in total, quantity and fair
/// value at receipt. Income is no disposal, so it is not on Form 8949.
fn income(p: &mut Pages, report: &Report) {
    p.heading("Income by kind (fair value at receipt, USD)");
    let cols = [
        col(MARGIN, 85.0),
        col(137.0, 80.0),
        col(220.0, 170.0),
        num(395.0, 90.0),
        num(490.0, 74.0),
    ];
    let mut all: Vec<(String, &Figures)> = report
        .wallets
        .iter()
        .map(|w| (short(&w.address), &w.figures))
        .collect();
    all.push(("All wallets".to_owned(), &report.total));
    let mut rows = Vec::new();
    for (name, f) in all {
        let total = name == "All wallets";
        for kind in &f.income.by_kind {
            let quantity = kind
                .assets
                .iter()
                .map(|a| format!("{} {}", qty(&a.quantity), short(&a.symbol)))
                .collect::<Vec<_>>()
                .join(", ");
            rows.push((
                vec![
                    name.clone(),
                    kind.kind.replace('_', " "),
                    if quantity.is_empty() {
                        "–".to_owned()
                    } else {
                        quantity
                    },
                    usd(&kind.usd),
                    format!("{} ({})", kind.legs, kind.unpriced_legs),
                ],
                total,
            ));
        }
    }
    p.table(
        &cols,
        &["Wallet", "Kind", "Quantity", "Value", "Legs (unpriced)"],
        rows,
    );
    p.y -= 4.0;
    p.line(
        "Staking rewards, MEV tips and airdrops are income when received, not disposals: they \
         are not on Form 8949. US filers report them on Schedule 1 (Form 1040).",
    );
}

fn positions(p: &mut Pages, total: &Figures) {
    p.heading("Open positions at the end of the range (USD)");
    if total.open_positions.is_empty() {
        p.line("No open positions.");
        return;
    }
    let cols = [
        col(MARGIN, 95.0),
        num(145.0, 110.0),
        num(260.0, 95.0),
        num(360.0, 95.0),
        num(460.0, 104.0),
    ];
    let none = || "unpriced".to_owned();
    let rows = total.open_positions.iter().map(|o| {
        (
            vec![
                short(&o.symbol),
                qty(&o.quantity),
                o.basis_usd.as_deref().map(usd).unwrap_or_else(none),
                o.price_usd.as_deref().map(usd).unwrap_or_else(none),
                o.value_usd.as_deref().map(usd).unwrap_or_else(none),
            ],
            false,
        )
    });
    p.table(
        &cols,
        &["Asset", "Quantity", "Cost basis", "Price", "Value"],
        rows,
    );
}

/// The tax section: each year's summary in the jurisdiction's terms, then
/// every disposal with the rule that matched it, in the section's currency.
fn tax_pages(p: &mut Pages, tax: &TaxSection) {
    let name = jurisdiction_name(&tax.jurisdiction);
    p.heading(&format!(
        "Tax summary: {name}, in {}{}",
        tax.currency,
        tax.tax_year
            .as_deref()
            .map(|y| format!(", tax year {y}"))
            .unwrap_or_default()
    ));
    if tax.currency != "USD" {
        p.line(&format!(
            "Amounts converted from USD into {} at the ECB's reference rate of each event's day.",
            tax.currency
        ));
    }
    for year in &tax.years {
        p.subheading(&format!(
            "Tax year {}",
            year["tax_year"].as_str().unwrap_or_default()
        ));
        year_figures(p, &tax.jurisdiction, &tax.currency, year);
    }
    p.heading(&format!(
        "Disposals and the rule that matched each ({})",
        tax.currency
    ));
    if tax.rows.is_empty() {
        p.line("No disposals.");
    } else {
        let cols = [
            col(MARGIN, 49.0),
            col(99.0, 58.0),
            col(163.0, 32.0),
            num(197.0, 48.0),
            col(249.0, 48.0),
            num(300.0, 56.0),
            num(360.0, 54.0),
            num(418.0, 52.0),
            col(476.0, 88.0),
        ];
        let amount = |v: &Option<String>| {
            v.as_deref()
                .and_then(|s| s.parse::<Decimal>().ok())
                .map(|d| format::decimal(d, 2))
                .unwrap_or_else(|| "unknown".to_owned())
        };
        let rows = tax.rows.iter().map(|r| {
            let acquired = match r.acquired.as_deref() {
                Some("pool") => "pool".to_owned(),
                Some(t) => t.get(..10).unwrap_or(t).to_owned(),
                None => "unknown".to_owned(),
            };
            (
                vec![
                    r.disposed.get(..10).unwrap_or(&r.disposed).to_owned(),
                    short(&r.wallet),
                    short(tokens::symbol(&r.asset)),
                    qty(&r.quantity),
                    acquired,
                    amount(&r.proceeds),
                    amount(&r.cost),
                    amount(&r.gain),
                    rule_words(&r.rule).to_owned(),
                ],
                false,
            )
        });
        p.table(
            &cols,
            &[
                "Disposed", "Wallet", "Asset", "Quantity", "Acquired", "Proceeds", "Cost", "Gain",
                "Rule",
            ],
            rows,
        );
    }
    if !tax.unlabelled.is_empty() {
        p.subheading("Unlabelled transfers (label them before filing)");
        let cols = [
            col(MARGIN, 120.0),
            col(172.0, 80.0),
            num(255.0, 50.0),
            num(310.0, 120.0),
            num(435.0, 129.0),
        ];
        let rows = tax.unlabelled.iter().map(|u| {
            (
                vec![
                    short(tokens::symbol(&u.asset)),
                    if u.outgoing { "sent" } else { "received" }.to_owned(),
                    u.count.to_string(),
                    qty(&u.quantity),
                    money(&u.value, &tax.currency),
                ],
                false,
            )
        });
        p.table(
            &cols,
            &["Asset", "Direction", "Count", "Quantity", "Value"],
            rows,
        );
    }
}

/// The summed value of every book at `CHART_POINTS` times across the range.
pub fn value_points(books: &[Book]) -> Vec<(i64, Decimal)> {
    let first = books
        .iter()
        .filter_map(|b| b.range.from.or_else(|| b.legs.first().map(time_of)))
        .min();
    let end = books.iter().map(|b| b.end).max();
    let (Some(start), Some(end)) = (first, end) else {
        return Vec::new();
    };
    if end <= start {
        return Vec::new();
    }
    let step = (end - start) / (CHART_POINTS as i64 - 1);
    let times: Vec<i64> = (0..CHART_POINTS)
        .map(|i| {
            if i + 1 == CHART_POINTS {
                end
            } else {
                start + step * i as i64
            }
        })
        .collect();
    let mut values = vec![Decimal::ZERO; times.len()];
    for b in books {
        for (i, held) in b.balances_at_each(&times).iter().enumerate() {
            values[i] += b.value_of(held, times[i], b.over_range.as_ref()).0;
        }
    }
    times.into_iter().zip(values).collect()
}

fn chart(p: &mut Pages, books: &[Book]) {
    p.heading("Value over the range (USD, priced holdings)");
    let points = value_points(books);
    if points.len() < 2 {
        p.line("Not enough history to draw.");
        return;
    }
    let (x0, w, h) = (MARGIN + 62.0, WIDTH - 2.0 * MARGIN - 66.0, 220.0);
    let y0 = p.y - h;
    let max = points.iter().map(|(_, v)| *v).max().unwrap_or_default();
    let min = points.iter().map(|(_, v)| *v).min().unwrap_or_default();
    // The axis is fitted to the data (a swing from 82k to 93k is not flat),
    // with a margin of a tenth of the span; a flat line sits mid-height.
    let pad = ((max - min) / Decimal::from(10)).max(Decimal::ONE);
    let (lo, hi) = ((min - pad).max(Decimal::ZERO).min(min), max + pad);
    let span = (hi - lo).to_f32().unwrap_or(1.0).max(f32::EPSILON);
    let (t0, t1) = (points[0].0, points[points.len() - 1].0);
    let tspan = (t1 - t0).max(1) as f32;
    let c = &mut p.content;
    c.save_state();
    c.set_stroke_rgb(0.6, 0.6, 0.6).set_line_width(0.5);
    c.move_to(x0, y0).line_to(x0 + w, y0).stroke();
    c.move_to(x0, y0).line_to(x0, y0 + h).stroke();
    c.set_stroke_rgb(0.1, 0.35, 0.75).set_line_width(1.4);
    for (i, (t, v)) in points.iter().enumerate() {
        let x = x0 + w * ((t - t0) as f32 / tspan);
        let y = y0 + h * ((*v - lo).to_f32().unwrap_or(0.0) / span);
        if i == 0 {
            c.move_to(x, y);
        } else {
            c.line_to(x, y);
        }
    }
    c.stroke();
    c.restore_state();
    let axis = |d: Decimal| format::decimal(d, 2);
    p.cell(
        num(MARGIN - 4.0, 62.0),
        y0 + h - 3.0,
        Style::Regular,
        7.0,
        &axis(hi),
    );
    p.cell(
        num(MARGIN - 4.0, 62.0),
        y0 - 3.0,
        Style::Regular,
        7.0,
        &axis(lo),
    );
    p.text_at(x0, y0 - 12.0, Style::Regular, 7.0, &stamp(t0));
    p.cell(
        num(x0 + w - 100.0, 100.0),
        y0 - 12.0,
        Style::Regular,
        7.0,
        &stamp(t1),
    );
    p.y = y0 - LEADING * 2.5;
}

fn ledger(p: &mut Pages, books: &[Book]) {
    p.heading("Ledger (times UTC, values USD)");
    let cols = [
        col(MARGIN, 80.0),
        col(131.0, 58.0),
        col(192.0, 70.0),
        col(265.0, 60.0),
        num(328.0, 130.0),
        num(462.0, 102.0),
    ];
    let header = ["Time", "Wallet", "Operation", "Asset", "Quantity", "USD"];
    let mut any = false;
    let rows = books.iter().flat_map(|book| {
        let wallet = short(&book.address);
        book.legs_in_range().map(move |(leg, value)| {
            let signed = value.map(|v| if leg.amount < 0 { -v } else { v });
            (
                vec![
                    leg.block_time.map(stamp).unwrap_or_default(),
                    wallet.clone(),
                    leg.operation_type.replace('_', " "),
                    short(tokens::symbol(&leg.mint)),
                    format::quantity(whole(leg.amount, leg.decimals)),
                    signed.map(|v| format::decimal(v, 2)).unwrap_or_default(),
                ],
                false,
            )
        })
    });
    let rows = rows.inspect(|_| any = true);
    p.table(&cols, &header, rows);
    if !any {
        p.line("No legs in the range.");
    }
}

/// The document around the pages' content streams.
fn assemble(contents: Vec<Vec<u8>>, fonts: &Fonts, title: &str) -> Result<Vec<u8>, FontError> {
    let mut pdf = Pdf::new();
    let mut next = 1;
    let mut alloc = || {
        let r = Ref::new(next);
        next += 1;
        r
    };
    let catalog = alloc();
    let tree = alloc();
    let info = alloc();
    let font_ids = [
        [alloc(), alloc(), alloc(), alloc(), alloc()],
        [alloc(), alloc(), alloc(), alloc(), alloc()],
    ];
    let pages: Vec<(Ref, Ref)> = contents.iter().map(|_| (alloc(), alloc())).collect();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree)
        .kids(pages.iter().map(|(page, _)| *page))
        .count(i32::try_from(pages.len()).unwrap_or(i32::MAX));
    fonts.write(&mut pdf, font_ids, DEFLATE_LEVEL)?;
    pdf.document_info(info)
        .title(TextStr(title))
        .producer(TextStr("Ledger"));
    for ((page_id, content_id), content) in pages.iter().zip(contents) {
        let mut page = pdf.page(*page_id);
        page.media_box(Rect::new(0.0, 0.0, WIDTH, HEIGHT))
            .parent(tree)
            .contents(*content_id);
        let mut resources = page.resources();
        resources
            .fonts()
            .pair(Style::Regular.resource(), font_ids[0][0])
            .pair(Style::Bold.resource(), font_ids[1][0]);
        resources.finish();
        page.finish();
        let deflated = miniz_oxide::deflate::compress_to_vec_zlib(&content, DEFLATE_LEVEL);
        pdf.stream(*content_id, &deflated)
            .filter(Filter::FlateDecode);
    }
    Ok(pdf.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_addresses_are_shortened_with_an_ellipsis() {
        assert_eq!(
            short("71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6"),
            "71WDyy…xiJ6"
        );
        assert_eq!(short("SOL"), "SOL");
    }

    fn has(bytes: &[u8], needle: &[u8]) -> bool {
        bytes.windows(needle.len()).any(|w| w == needle)
    }

    /// A two-page document of `lines` on its first page.
    fn document(lines: &[&str]) -> Vec<u8> {
        let mut p = Pages::new("A test".to_owned()).unwrap();
        for line in lines {
            p.line(line);
        }
        p.break_page();
        p.line("second page");
        let (contents, fonts) = p.finish();
        assemble(contents, &fonts, "A test").unwrap()
    }

    #[test]
    fn the_fonts_are_embedded_as_subsets_with_a_unicode_map() {
        let pdf = document(&["Zürich · 1.234,50 € · £12 → Ωμέγα"]);
        for needle in [
            &b"/Subtype /Type0"[..],
            b"/Subtype /CIDFontType2",
            b"/FontFile2",
            b"/ToUnicode",
            b"+DejaVuSans",
            b"+DejaVuSans-Bold",
            b"/Encoding /Identity-H",
        ] {
            assert!(has(&pdf, needle), "{}", String::from_utf8_lossy(needle));
        }
        // No standard font is named: every glyph comes from the file.
        assert!(!has(&pdf, b"/Helvetica"));
        // Subsets: far smaller than the 760 KB font.
        assert!(pdf.len() < 60_000, "{} bytes", pdf.len());
    }

    #[test]
    fn non_ascii_text_and_the_page_numbers_read_back() {
        let pdf = document(&["Zürich · 1.234,50 € · £12 → Ωμέγα"]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.pdf");
        std::fs::write(&path, &pdf).unwrap();
        let Ok(out) = std::process::Command::new("pdftotext")
            .arg(&path)
            .arg("-")
            .output()
        else {
            assert!(
                std::env::var_os("CI").is_none(),
                "pdftotext (poppler-utils) must be installed in CI"
            );
            eprintln!("!!! SKIPPED: pdftotext is not installed !!!");
            return;
        };
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Zürich · 1.234,50 € · £12 → Ωμέγα"), "{text}");
        assert!(text.contains("page 1 of 2"), "{text}");
        assert!(text.contains("page 2 of 2"), "{text}");
        assert!(text.contains("Not tax advice"), "{text}");
    }

    #[test]
    fn every_jurisdiction_has_its_terms() {
        for j in ["us", "uk", "ca", "de", "au"] {
            assert!(!year_terms(j).is_empty(), "{j}");
        }
    }
}
