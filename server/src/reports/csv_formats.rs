//! The CSV reports of the ledger itself: every leg (`csv`), every open lot
//! (`positions_csv`) and IRS Form 8949's rows (`8949`). Each writes one
//! header row (the column constants below, snapshotted in the tests) and
//! returns the bytes and how many data rows it wrote. docs/reports.md
//! gives every column's source.

use std::io;

use chrono::{DateTime, Datelike};
use rust_decimal::Decimal;

use super::{
    book::{Book, Range, text, whole},
    tokens,
};
use crate::{
    basis::{Disposal, Term, Totals},
    values::rfc3339,
};

/// `csv`: one row per ledger leg in the range.
pub const LEDGER_COLUMNS: [&str; 12] = [
    "wallet",
    "signature",
    "leg_index",
    "block_time",
    "operation_type",
    "mint",
    "symbol",
    "amount",
    "decimals",
    "quantity",
    "usd_value",
    "priced",
];

/// `positions_csv`: one row per lot open at the end of the range.
pub const POSITION_COLUMNS: [&str; 10] = [
    "wallet",
    "mint",
    "symbol",
    "quantity",
    "acquired",
    "basis_usd",
    "unit_cost_usd",
    "price_usd",
    "value_usd",
    "unrealized_gain_usd",
];

/// `8949`: Form 8949's columns (a) to (h), with the part, the checkbox and
/// where each row comes from.
pub const FORM_8949_COLUMNS: [&str; 14] = [
    "record",
    "part",
    "box",
    "(a) description of property",
    "(b) date acquired",
    "(c) date sold or disposed of",
    "(d) proceeds",
    "(e) cost or other basis",
    "(f) code",
    "(g) amount of adjustment",
    "(h) gain or (loss)",
    "wallet",
    "mint",
    "note",
];

pub(super) fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new())
}

pub(super) fn finish(w: csv::Writer<Vec<u8>>, rows: u64) -> io::Result<(Vec<u8>, u64)> {
    w.into_inner()
        .map(|bytes| (bytes, rows))
        .map_err(|e| io::Error::other(e.to_string()))
}

fn csv_err(e: csv::Error) -> io::Error {
    io::Error::other(e.to_string())
}

/// Every leg of the range, wallet by wallet, oldest first.
pub fn ledger(books: &[Book]) -> io::Result<(Vec<u8>, u64)> {
    let mut w = writer();
    w.write_record(LEDGER_COLUMNS).map_err(csv_err)?;
    let mut rows = 0;
    for book in books {
        for (leg, usd) in book.legs_in_range() {
            let signed = usd.map(|v| if leg.amount < 0 { -v } else { v });
            w.write_record([
                book.address.as_str(),
                leg.signature.as_str(),
                &leg.index.to_string(),
                &leg.block_time
                    .map(|t| rfc3339(t.saturating_mul(1000)))
                    .unwrap_or_default(),
                leg.operation_type.as_str(),
                leg.mint.as_str(),
                tokens::symbol(&leg.mint),
                &leg.amount.to_string(),
                &leg.decimals.to_string(),
                &text(whole(leg.amount, leg.decimals)),
                &signed.map(text).unwrap_or_default(),
                if usd.is_some() { "true" } else { "false" },
            ])
            .map_err(csv_err)?;
            rows += 1;
        }
    }
    finish(w, rows)
}

/// Every lot open at the end of the range, wallet by wallet, by mint and
/// acquisition.
pub fn positions(books: &[Book]) -> io::Result<(Vec<u8>, u64)> {
    let mut w = writer();
    w.write_record(POSITION_COLUMNS).map_err(csv_err)?;
    let mut rows = 0;
    for book in books {
        for lot in &book.replay.open_lots {
            let price = book.price_at_end(&lot.asset);
            let value = price.map(|p| (p * lot.quantity).round_dp(8));
            let unit = lot
                .basis
                .filter(|_| !lot.quantity.is_zero())
                .map(|b| (b / lot.quantity).round_dp(8));
            let unrealized = value.zip(lot.basis).map(|(v, b)| v - b);
            let opt = |d: Option<Decimal>| d.map(text).unwrap_or_default();
            w.write_record([
                book.address.as_str(),
                lot.asset.as_str(),
                tokens::symbol(&lot.asset),
                &text(lot.quantity),
                &rfc3339(lot.acquired.saturating_mul(1000)),
                &opt(lot.basis.map(|b| b.round_dp(8))),
                &opt(unit),
                &opt(price),
                &opt(value),
                &opt(unrealized),
            ])
            .map_err(csv_err)?;
            rows += 1;
        }
    }
    finish(w, rows)
}

/// The calendar (tax) year `t` falls in, UTC.
pub fn year_of(t: i64) -> i32 {
    DateTime::from_timestamp(t, 0).map_or(1970, |d| d.year())
}

/// The tax year a range covers: the year of its end, else of its start,
/// else the year now.
pub fn tax_year(range: Range, now_s: i64) -> i32 {
    year_of(range.to.or(range.from).unwrap_or(now_s))
}

/// The checkbox of Form 8949 a self-custodied wallet's rows belong to:
/// transactions not reported to the taxpayer on a Form 1099. From tax year
/// 2025 digital assets have their own boxes (I short term, L long term);
/// before that they were C and F.
pub fn checkbox(year: i32, term: Term) -> &'static str {
    match (year >= 2025, term) {
        (true, Term::Short) => "I",
        (true, Term::Long) => "L",
        (false, Term::Short) => "C",
        (false, Term::Long) => "F",
    }
}

fn part(term: Term) -> &'static str {
    match term {
        Term::Short => "I",
        Term::Long => "II",
    }
}

/// MM/DD/YYYY in UTC, as the form is filled in.
fn form_date(t: i64) -> String {
    DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%m/%d/%Y").to_string())
        .unwrap_or_default()
}

/// The rows a book reports on Form 8949 for `year`: disposals in the range
/// and in that year.
pub fn rows_8949(book: &Book, year: i32) -> impl Iterator<Item = &Disposal> {
    book.disposals_in_range()
        .filter(move |d| year_of(d.disposed) == year)
}

/// The default dust threshold of Form 8949 (USD): a disposal whose
/// proceeds are under one dollar (a network fee's few lamports, a sliver of
/// a token) is combined with the others of its asset and term.
pub const DEFAULT_DUST_THRESHOLD: Decimal = Decimal::ONE;

/// The dust disposals of one wallet, asset and term, combined into one row.
#[derive(Default)]
struct Dust<'a> {
    proceeds: Decimal,
    basis: Decimal,
    gain: Decimal,
    disposals: Vec<&'a Disposal>,
}

/// Whether `d` (complete) is dust under `threshold`: its proceeds are
/// under it. A threshold of 0 makes nothing dust.
fn is_dust(d: &Disposal, threshold: Decimal) -> bool {
    threshold > Decimal::ZERO && d.proceeds.unwrap_or_default().abs() < threshold
}

/// Form 8949 for the tax year the range covers: Part I (short term) then
/// Part II (long term), one row per lot consumed with its checkbox, each
/// part's totals, then the rows left out of the totals (unpriced, or
/// disposed beyond what the ledger shows acquired) for the preparer to
/// complete. Amounts are the replay's exact USD; the totals are their sums,
/// so they equal `get_positions`' realized figures over the same legs.
///
/// Disposals with proceeds under `dust_threshold` (USD; 0: none) are
/// combined into one row per wallet, asset and term, as the Instructions
/// for Form 8949 allow ("Exception 2": instead of a row per transaction,
/// report them on an attached statement with all the same information,
/// and on the form one row with "see attached statement" in column (a),
/// columns (b) and (c) blank, code M in column (f), and the totals in
/// (d), (e), (g) and (h)). Each combined disposal is then listed as a
/// `statement` row after the form's rows: that is the attached statement.
/// The part totals are the same sums as without grouping.
pub fn form_8949(
    books: &[Book],
    range: Range,
    now_s: i64,
    dust_threshold: Decimal,
) -> io::Result<(Vec<u8>, u64)> {
    let year = tax_year(range, now_s);
    let mut w = writer();
    w.write_record(FORM_8949_COLUMNS).map_err(csv_err)?;
    let mut rows = 0;
    let threshold_text = crate::values::format::fiat(dust_threshold, "USD");
    // (part, wallet, asset, disposal) of every combined disposal, for the
    // statement.
    let mut statement: Vec<(Term, &str, &Disposal)> = Vec::new();
    for term in [Term::Short, Term::Long] {
        let mut totals = Totals::default();
        let boxed = checkbox(year, term);
        for book in books {
            let mut dust: std::collections::BTreeMap<&str, Dust<'_>> = Default::default();
            for d in rows_8949(book, year).filter(|d| d.is_complete() && d.term == Some(term)) {
                totals.add(d);
                if is_dust(d, dust_threshold) {
                    let group = dust.entry(d.asset.as_str()).or_default();
                    group.proceeds += d.proceeds.unwrap_or_default();
                    group.basis += d.basis.unwrap_or_default();
                    group.gain += d.gain.unwrap_or_default();
                    group.disposals.push(d);
                    continue;
                }
                let (proceeds, basis, gain) = (
                    d.proceeds.unwrap_or_default(),
                    d.basis.unwrap_or_default(),
                    d.gain.unwrap_or_default(),
                );
                w.write_record([
                    "row",
                    part(term),
                    boxed,
                    &description(d),
                    &d.acquired.map(form_date).unwrap_or_default(),
                    &form_date(d.disposed),
                    &text(proceeds),
                    &text(basis),
                    "",
                    "",
                    &text(gain),
                    book.address.as_str(),
                    d.asset.as_str(),
                    "",
                ])
                .map_err(csv_err)?;
                rows += 1;
            }
            for (asset, group) in dust {
                let n = group.disposals.len();
                w.write_record([
                    "row",
                    part(term),
                    boxed,
                    &format!(
                        "{}: {n} disposal{} under {threshold_text}, see attached statement",
                        tokens::symbol(asset),
                        if n == 1 { "" } else { "s" }
                    ),
                    "",
                    "",
                    &text(group.proceeds),
                    &text(group.basis),
                    "M",
                    "",
                    &text(group.gain),
                    book.address.as_str(),
                    asset,
                    "",
                ])
                .map_err(csv_err)?;
                rows += 1;
                statement.extend(
                    group
                        .disposals
                        .into_iter()
                        .map(|d| (term, book.address.as_str(), d)),
                );
            }
        }
        w.write_record([
            "total",
            part(term),
            boxed,
            &format!("Totals, Part {} ({} disposals)", part(term), totals.rows),
            "",
            "",
            &text(totals.proceeds),
            &text(totals.basis),
            "",
            "",
            &text(totals.gain),
            "",
            "",
            "",
        ])
        .map_err(csv_err)?;
    }
    for book in books {
        for d in rows_8949(book, year).filter(|d| !d.is_complete()) {
            let note = if d.uncovered {
                "disposed beyond what the ledger shows acquired (history before the scan): basis unknown"
            } else if d.proceeds.is_none() {
                "unpriced disposal: proceeds unknown"
            } else {
                "unpriced acquisition: basis unknown"
            };
            w.write_record([
                "incomplete",
                d.term.map(part).unwrap_or_default(),
                d.term.map(|t| checkbox(year, t)).unwrap_or_default(),
                &description(d),
                &d.acquired.map(form_date).unwrap_or_default(),
                &form_date(d.disposed),
                &d.proceeds.map(text).unwrap_or_default(),
                &d.basis.map(text).unwrap_or_default(),
                "",
                "",
                "",
                book.address.as_str(),
                d.asset.as_str(),
                note,
            ])
            .map_err(csv_err)?;
            rows += 1;
        }
    }
    for (term, wallet, d) in statement {
        w.write_record([
            "statement",
            part(term),
            checkbox(year, term),
            &description(d),
            &d.acquired.map(form_date).unwrap_or_default(),
            &form_date(d.disposed),
            &d.proceeds.map(text).unwrap_or_default(),
            &d.basis.map(text).unwrap_or_default(),
            "",
            "",
            &d.gain.map(text).unwrap_or_default(),
            wallet,
            d.asset.as_str(),
            &format!(
                "in the combined row of {} (proceeds under {threshold_text})",
                tokens::symbol(&d.asset)
            ),
        ])
        .map_err(csv_err)?;
        rows += 1;
    }
    finish(w, rows)
}

/// Column (a): "1.5 SOL".
fn description(d: &Disposal) -> String {
    format!("{} {}", text(d.quantity), tokens::symbol(&d.asset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digital_assets_take_boxes_i_and_l_from_2025_and_c_and_f_before() {
        assert_eq!(checkbox(2025, Term::Short), "I");
        assert_eq!(checkbox(2026, Term::Long), "L");
        assert_eq!(checkbox(2024, Term::Short), "C");
        assert_eq!(checkbox(2024, Term::Long), "F");
    }

    #[test]
    fn the_tax_year_is_the_year_the_range_ends_in() {
        let jan_2025 = 1_735_689_600;
        let range = Range {
            from: Some(jan_2025),
            to: None,
        };
        assert_eq!(tax_year(range, 1_800_000_000), 2025);
        assert_eq!(tax_year(Range::default(), jan_2025), 2025);
        assert_eq!(form_date(jan_2025), "01/01/2025");
    }
}
