//! The PDF report for an accountant: a summary page (wallets, range,
//! method, totals), realized gains by term, open positions, the value over
//! the range as a vector chart, and the ledger. Written with `pdf-writer`
//! in the standard Helvetica fonts (no font is embedded, and the text is
//! real text: selectable, searchable, and what `pdftotext` reads back),
//! content streams deflated with `miniz_oxide`.
//!
//! The figures are the report object's ([`super::summary::report`]), so
//! the PDF and `format: json` print the same numbers. Floats appear only
//! as drawing coordinates of the chart, never as an amount shown.

use pdf_writer::{Content, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};
use rust_decimal::{Decimal, prelude::ToPrimitive};

use super::{
    book::{Book, text, time_of, whole},
    summary::{Figures, Report},
    tokens,
};
use crate::values::rfc3339;

const WIDTH: f32 = 612.0;
const HEIGHT: f32 = 792.0;
const MARGIN: f32 = 48.0;
const LEADING: f32 = 13.0;
const REGULAR: Name<'static> = Name(b"F1");
const BOLD: Name<'static> = Name(b"F2");
/// Points on the value chart.
const CHART_POINTS: usize = 60;
/// zlib level of the content streams: 1 deflates 100,000 ledger rows four
/// times faster than 6 for a file about 14% larger (docs/benchmarks.md).
const DEFLATE_LEVEL: u8 = 1;

/// Pages as they are written: one content stream each.
struct Pages {
    done: Vec<Vec<u8>>,
    content: Content,
    y: f32,
    page_no: usize,
}

impl Pages {
    fn new() -> Self {
        Self {
            done: Vec::new(),
            content: Content::new(),
            y: HEIGHT - MARGIN,
            page_no: 1,
        }
    }

    fn break_page(&mut self) {
        self.footer();
        let content = std::mem::replace(&mut self.content, Content::new());
        self.done.push(content.finish().into_vec());
        self.y = HEIGHT - MARGIN;
        self.page_no += 1;
    }

    fn footer(&mut self) {
        let label = format!("Ledger report - page {}", self.page_no);
        self.text_at(MARGIN, MARGIN / 2.0, REGULAR, 8.0, &label);
    }

    /// Room for `lines` more lines, or a new page.
    fn need(&mut self, lines: f32) {
        if self.y - lines * LEADING < MARGIN {
            self.break_page();
        }
    }

    fn text_at(&mut self, x: f32, y: f32, font: Name<'_>, size: f32, s: &str) {
        let s = ascii(s);
        self.content
            .begin_text()
            .set_font(font, size)
            .next_line(x, y)
            .show(Str(s.as_bytes()))
            .end_text();
    }

    fn heading(&mut self, s: &str) {
        self.need(3.0);
        self.y -= LEADING * 0.6;
        let y = self.y;
        self.text_at(MARGIN, y, BOLD, 13.0, s);
        self.y -= LEADING * 1.5;
    }

    fn line(&mut self, s: &str) {
        self.need(1.0);
        let y = self.y;
        self.text_at(MARGIN, y, REGULAR, 9.5, s);
        self.y -= LEADING;
    }

    /// One table row: cells at the given x positions.
    fn row(&mut self, cells: &[(f32, &str)], bold: bool) {
        self.need(1.0);
        let y = self.y;
        for (x, s) in cells {
            self.text_at(*x, y, if bold { BOLD } else { REGULAR }, 8.0, s);
        }
        self.y -= LEADING * 0.9;
    }

    fn finish(mut self) -> Vec<Vec<u8>> {
        self.footer();
        self.done.push(self.content.finish().into_vec());
        self.done
    }
}

/// The printable ASCII of `s` (Helvetica's standard encoding covers it;
/// anything else becomes `?`).
fn ascii(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

fn short(address: &str) -> String {
    if address.len() <= 12 {
        return address.to_owned();
    }
    format!("{}..{}", &address[..6], &address[address.len() - 4..])
}

/// A money cell: two decimals and thousands separators (`86,088.34 USD`),
/// as every surface writes money (`values::format::fiat`); the minus sign
/// is the hyphen, which the PDF's standard encoding has.
fn usd(s: &str) -> String {
    match s.parse::<rust_decimal::Decimal>() {
        Ok(d) => crate::values::format::fiat(d, "USD").replace(crate::values::format::MINUS, "-"),
        Err(_) => s.to_owned(),
    }
}

fn date(t: i64) -> String {
    rfc3339(t.saturating_mul(1000))
        .replace('T', " ")
        .replace('Z', "")
}

/// The PDF of `report` over `books`.
pub fn render(report: &Report, books: &[Book]) -> Vec<u8> {
    let mut p = Pages::new();
    summary_page(&mut p, report);
    gains(&mut p, report);
    positions(&mut p, &report.total);
    p.break_page();
    income(&mut p, report);
    p.break_page();
    chart(&mut p, books);
    ledger(&mut p, books);
    assemble(p.finish(), report)
}

fn summary_page(p: &mut Pages, report: &Report) {
    let y = p.y;
    p.text_at(MARGIN, y, BOLD, 20.0, "Ledger report");
    p.y -= LEADING * 2.2;
    let m = &report.meta;
    p.line(&format!("Generated {}", m.generated_at));
    p.line(&format!(
        "Range: {} to {}",
        m.range.from.as_deref().unwrap_or("the first leg"),
        m.range.to.as_deref().unwrap_or("the time of generation")
    ));
    let mut method = format!("Cost-basis method: {}", m.method);
    if !m.accepted_for_us_filings {
        method.push_str(" (not accepted for US filings of digital assets)");
    }
    p.line(&method);
    p.line(&format!(
        "Airdrop spam: {}",
        if m.exclude_spam {
            "left out"
        } else {
            "included"
        }
    ));
    p.line(&format!(
        "SOL price at generation: {}",
        m.sol_usd_at_generation
            .as_deref()
            .map(usd)
            .unwrap_or_else(|| "unavailable".to_owned())
    ));
    p.heading(&format!("Wallets ({})", m.wallets.len()));
    for w in &m.wallets {
        p.line(w);
    }
    p.heading("Totals");
    let t = &report.total;
    for (label, value) in [
        ("Realized gain or (loss)", usd(&t.realized.gain)),
        ("  short term", usd(&t.realized.short_term_gain)),
        ("  long term", usd(&t.realized.long_term_gain)),
        ("Proceeds", usd(&t.realized.proceeds)),
        ("Cost basis", usd(&t.realized.basis)),
        (
            "Realized rows (incomplete)",
            format!("{} ({})", t.realized.rows, t.realized.incomplete_rows),
        ),
        (
            "Income (rewards, MEV, airdrops)",
            format!("{} over {} legs", usd(&t.income.usd), t.income.legs),
        ),
        (
            "Network fees",
            format!("{} SOL ({})", t.fees.sol, usd(&t.fees.usd)),
        ),
        ("Value at start", usd(&t.value_start_usd)),
        ("Value at end", usd(&t.value_end_usd)),
        ("Ledger legs in range", t.legs.to_string()),
    ] {
        p.row(&[(MARGIN, label), (MARGIN + 200.0, &value)], false);
    }
    if !t.unpriced_mints.is_empty() {
        p.line(&format!(
            "Held without a price (left out of the values): {}",
            t.unpriced_mints.join(", ")
        ));
    }
}

fn gains(p: &mut Pages, report: &Report) {
    p.heading("Realized gains by term");
    let cols = [MARGIN, 170.0, 260.0, 350.0, 440.0, 520.0];
    p.row(
        &[
            (cols[0], "Wallet"),
            (cols[1], "Short term"),
            (cols[2], "Long term"),
            (cols[3], "Total"),
            (cols[4], "Rows"),
            (cols[5], "Incomplete"),
        ],
        true,
    );
    let mut all: Vec<(String, &Figures)> = report
        .wallets
        .iter()
        .map(|w| (short(&w.address), &w.figures))
        .collect();
    all.push(("All wallets".to_owned(), &report.total));
    for (name, f) in all {
        let r = &f.realized;
        p.row(
            &[
                (cols[0], &name),
                (cols[1], &usd(&r.short_term_gain)),
                (cols[2], &usd(&r.long_term_gain)),
                (cols[3], &usd(&r.gain)),
                (cols[4], &r.rows.to_string()),
                (cols[5], &r.incomplete_rows.to_string()),
            ],
            name == "All wallets",
        );
    }
}

/// The income page: each kind per wallet and in total, quantity and fair
/// value at receipt. Income is no disposal, so it is not on Form 8949.
fn income(p: &mut Pages, report: &Report) {
    p.heading("Income by kind (fair value at receipt)");
    let cols = [MARGIN, 150.0, 250.0, 390.0, 480.0];
    p.row(
        &[
            (cols[0], "Wallet"),
            (cols[1], "Kind"),
            (cols[2], "Quantity"),
            (cols[3], "Value"),
            (cols[4], "Legs (unpriced)"),
        ],
        true,
    );
    let mut all: Vec<(String, &Figures)> = report
        .wallets
        .iter()
        .map(|w| (short(&w.address), &w.figures))
        .collect();
    all.push(("All wallets".to_owned(), &report.total));
    for (name, f) in all {
        let total = name == "All wallets";
        for kind in &f.income.by_kind {
            let quantity = kind
                .assets
                .iter()
                .map(|a| format!("{} {}", a.quantity, short(&a.symbol)))
                .collect::<Vec<_>>()
                .join(", ");
            p.row(
                &[
                    (cols[0], &name),
                    (cols[1], &kind.kind),
                    (cols[2], if quantity.is_empty() { "-" } else { &quantity }),
                    (cols[3], &usd(&kind.usd)),
                    (cols[4], &format!("{} ({})", kind.legs, kind.unpriced_legs)),
                ],
                total,
            );
        }
    }
    p.line("Staking rewards, MEV tips and airdrops are income when received, not disposals:");
    p.line("they are not on Form 8949. US filers report them on Schedule 1 (Form 1040).");
}

fn positions(p: &mut Pages, total: &Figures) {
    p.heading("Open positions at the end of the range");
    let cols = [MARGIN, 150.0, 270.0, 370.0, 470.0];
    p.row(
        &[
            (cols[0], "Asset"),
            (cols[1], "Quantity"),
            (cols[2], "Cost basis"),
            (cols[3], "Price"),
            (cols[4], "Value"),
        ],
        true,
    );
    if total.open_positions.is_empty() {
        p.line("No open positions.");
    }
    let none = || "unpriced".to_owned();
    for o in &total.open_positions {
        p.row(
            &[
                (cols[0], &short(&o.symbol)),
                (cols[1], &o.quantity),
                (
                    cols[2],
                    &o.basis_usd.as_deref().map(usd).unwrap_or_else(none),
                ),
                (
                    cols[3],
                    &o.price_usd.as_deref().map(usd).unwrap_or_else(none),
                ),
                (
                    cols[4],
                    &o.value_usd.as_deref().map(usd).unwrap_or_else(none),
                ),
            ],
            false,
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
    let (x0, w, h) = (MARGIN + 40.0, WIDTH - 2.0 * MARGIN - 50.0, 220.0);
    let y0 = p.y - h;
    let max = points.iter().map(|(_, v)| *v).max().unwrap_or_default();
    let min = points
        .iter()
        .map(|(_, v)| *v)
        .min()
        .unwrap_or_default()
        .min(Decimal::ZERO);
    let span = (max - min).to_f32().unwrap_or(1.0).max(f32::EPSILON);
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
        let y = y0 + h * ((*v - min).to_f32().unwrap_or(0.0) / span);
        if i == 0 {
            c.move_to(x, y);
        } else {
            c.line_to(x, y);
        }
    }
    c.stroke();
    c.restore_state();
    p.text_at(
        MARGIN - 4.0,
        y0 + h - 3.0,
        REGULAR,
        7.0,
        &usd(&text(max.round_dp(2))),
    );
    p.text_at(
        MARGIN - 4.0,
        y0 - 3.0,
        REGULAR,
        7.0,
        &usd(&text(min.round_dp(2))),
    );
    p.text_at(x0, y0 - 12.0, REGULAR, 7.0, &date(t0));
    p.text_at(x0 + w - 70.0, y0 - 12.0, REGULAR, 7.0, &date(t1));
    p.y = y0 - LEADING * 2.5;
}

fn ledger(p: &mut Pages, books: &[Book]) {
    p.heading("Ledger");
    let cols = [MARGIN, 135.0, 200.0, 290.0, 370.0, 470.0];
    let header = [
        (cols[0], "Time (UTC)"),
        (cols[1], "Wallet"),
        (cols[2], "Operation"),
        (cols[3], "Asset"),
        (cols[4], "Quantity"),
        (cols[5], "USD"),
    ];
    p.row(&header, true);
    let mut n = 0;
    for book in books {
        let wallet = short(&book.address);
        for (leg, value) in book.legs_in_range() {
            if p.y - LEADING < MARGIN {
                p.break_page();
                p.row(&header, true);
            }
            let signed = value.map(|v| if leg.amount < 0 { -v } else { v });
            p.row(
                &[
                    (cols[0], &leg.block_time.map(date).unwrap_or_default()),
                    (cols[1], &wallet),
                    (cols[2], &leg.operation_type),
                    (cols[3], &short(tokens::symbol(&leg.mint))),
                    (cols[4], &text(whole(leg.amount, leg.decimals))),
                    (
                        cols[5],
                        &signed.map(|v| text(v.round_dp(2))).unwrap_or_default(),
                    ),
                ],
                false,
            );
            n += 1;
        }
    }
    if n == 0 {
        p.line("No legs in the range.");
    }
}

/// The document around the pages' content streams.
fn assemble(contents: Vec<Vec<u8>>, report: &Report) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let mut next = 1;
    let mut alloc = || {
        let r = Ref::new(next);
        next += 1;
        r
    };
    let catalog = alloc();
    let tree = alloc();
    let regular = alloc();
    let bold = alloc();
    let info = alloc();
    let pages: Vec<(Ref, Ref)> = contents.iter().map(|_| (alloc(), alloc())).collect();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree)
        .kids(pages.iter().map(|(page, _)| *page))
        .count(i32::try_from(pages.len()).unwrap_or(i32::MAX));
    pdf.type1_font(regular)
        .base_font(Name(b"Helvetica"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    pdf.type1_font(bold)
        .base_font(Name(b"Helvetica-Bold"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    let title = format!("Ledger report ({})", report.meta.wallets.join(", "));
    pdf.document_info(info)
        .title(TextStr(&ascii(&title)))
        .producer(TextStr("Ledger"));
    for ((page_id, content_id), content) in pages.iter().zip(contents) {
        let mut page = pdf.page(*page_id);
        page.media_box(Rect::new(0.0, 0.0, WIDTH, HEIGHT))
            .parent(tree)
            .contents(*content_id);
        let mut resources = page.resources();
        resources.fonts().pair(REGULAR, regular).pair(BOLD, bold);
        resources.finish();
        page.finish();
        let deflated = miniz_oxide::deflate::compress_to_vec_zlib(&content, DEFLATE_LEVEL);
        pdf.stream(*content_id, &deflated)
            .filter(Filter::FlateDecode);
    }
    pdf.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_kept_to_what_the_standard_font_can_show() {
        assert_eq!(ascii("swap · wallet é"), "swap ? wallet ?");
        assert_eq!(
            short("71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6"),
            "71WDyy..xiJ6"
        );
    }
}
