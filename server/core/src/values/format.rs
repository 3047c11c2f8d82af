//! Numbers, quantities, times and mints as people read them: the one way
//! the portal pages, the share page, the card and the PDF write money and
//! time. Pure functions of exact values (decimals and atomic integers,
//! never floats), so every surface writes the same figure the same way and
//! snapshot tests pin it.
//!
//! - Fiat: two decimals, thousands separators, a real minus sign
//!   (`86,088.34 USD`, `−1,234.50 USD`); [`signed_fiat`] adds `+` for a
//!   change.
//! - Token quantities: from atomic units and the mint's decimals, exact,
//!   trailing zeros trimmed, thousands grouped (`1,739.46`, `0.000005`).
//! - Times: `2 Dec 2026, 14:05 UTC`; dates `2 Dec 2026`.
//! - Mints: the symbol when the token list knows it (the caller looks it
//!   up), else the address shortened (`EPjF…Dt1v`).
//!
//! The JSON reads keep every digit; only what people read goes through
//! here.

use rust_decimal::{Decimal, RoundingStrategy};

/// The minus sign people read (U+2212), not a hyphen.
pub const MINUS: char = '−';

/// Group the integer digits of a plain decimal text in threes.
fn group(int: &str) -> String {
    let mut out = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `d` with `places` decimals exactly (padded), grouped, with a real minus
/// sign; half away from zero, as people round money.
pub fn decimal(d: Decimal, places: u32) -> String {
    let mut rounded = d.round_dp_with_strategy(places, RoundingStrategy::MidpointAwayFromZero);
    rounded.rescale(places);
    let negative = rounded.is_sign_negative() && !rounded.is_zero();
    let text = rounded.abs().to_string();
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text.as_str(), None),
    };
    let mut out = String::new();
    if negative {
        out.push(MINUS);
    }
    out.push_str(&group(int));
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// Fiat money: two decimals and the currency (`86,088.34 USD`).
pub fn fiat(d: Decimal, currency: &str) -> String {
    format!("{} {currency}", decimal(d, 2))
}

/// A change in fiat: always signed (`+1,200.00 USD`, `−81,521.90 USD`).
pub fn signed_fiat(d: Decimal, currency: &str) -> String {
    let text = fiat(d, currency);
    if text.starts_with(MINUS) {
        text
    } else {
        format!("+{text}")
    }
}

/// A percentage with one decimal, signed (`+4.2%`, `−95.3%`).
pub fn signed_pct(d: Decimal) -> String {
    let text = decimal(d, 1);
    if text.starts_with(MINUS) {
        format!("{text}%")
    } else {
        format!("+{text}%")
    }
}

/// A decimal quantity to its meaningful digits: exact, trailing zeros
/// trimmed, thousands grouped, real minus sign (`1,739.46`, `0.000005`).
pub fn quantity(d: Decimal) -> String {
    let d = d.normalize();
    let negative = d.is_sign_negative() && !d.is_zero();
    let text = d.abs().to_string();
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text.as_str(), None),
    };
    let mut out = String::new();
    if negative {
        out.push(MINUS);
    }
    out.push_str(&group(int));
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// A token amount from its atomic units and the mint's decimals, exact
/// (no float between): `quantity` of `atomic / 10^decimals`. An amount
/// beyond what a decimal holds is written as its atomic digits.
pub fn atomic(atomic: i128, decimals: u32) -> String {
    if decimals <= 28
        && let Ok(d) = Decimal::try_from_i128_with_scale(atomic, decimals)
    {
        return quantity(d);
    }
    atomic.to_string()
}

/// [`atomic`] of an atomic amount written as text (as JSON carries it);
/// text that is no integer is given back unchanged.
pub fn atomic_text(text: &str, decimals: u32) -> String {
    match text.parse::<i128>() {
        Ok(a) => atomic(a, decimals),
        Err(_) => text.to_owned(),
    }
}

/// A moment for people: `2 Dec 2026, 14:05 UTC`.
pub fn date_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%-d %b %Y, %H:%M UTC").to_string())
        .unwrap_or_default()
}

/// A day for people: `2 Dec 2026`.
pub fn date(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%-d %b %Y").to_string())
        .unwrap_or_default()
}

/// [`date_time`] of an RFC 3339 text; text that is no time is given back
/// unchanged.
pub fn date_time_text(text: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| date_time(t.timestamp_millis()))
        .unwrap_or_else(|_| text.to_owned())
}

/// A long address as people glance at it: its first and last four
/// characters (`EPjF…Dt1v`); short text is kept whole.
pub fn short_address(address: &str) -> String {
    let chars: Vec<char> = address.chars().collect();
    if chars.len() <= 12 {
        return address.to_owned();
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// A mint as people read it: `SOL` for native SOL, its symbol when the
/// token list has one (`known`), else the address shortened.
pub fn mint_name(mint: &str, known: Option<&str>) -> String {
    if mint == "sol" {
        return "SOL".to_owned();
    }
    match known {
        Some(symbol) if !symbol.is_empty() && symbol != mint => symbol.to_owned(),
        _ => short_address(mint),
    }
}

/// A count of things with its noun, grouped (`1 leg`, `2,034 legs`).
pub fn count(n: u64, one: &str, many: &str) -> String {
    let noun = if n == 1 { one } else { many };
    format!("{} {noun}", group(&n.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    #[test]
    fn fiat_has_two_decimals_separators_and_a_minus_sign() {
        assert_eq!(fiat(d("86088.34"), "USD"), "86,088.34 USD");
        assert_eq!(fiat(d("109218.417977"), "USD"), "109,218.42 USD");
        assert_eq!(fiat(d("32096.24237297"), "USD"), "32,096.24 USD");
        assert_eq!(fiat(d("81724.9"), "USD"), "81,724.90 USD");
        assert_eq!(fiat(d("-81521.9"), "USD"), "−81,521.90 USD");
        assert_eq!(fiat(d("0"), "USD"), "0.00 USD");
        assert_eq!(fiat(d("-0.001"), "USD"), "0.00 USD", "no minus on a zero");
        assert_eq!(fiat(d("0.005"), "USD"), "0.01 USD", "half away from zero");
        assert_eq!(fiat(d("999.999"), "USD"), "1,000.00 USD");
        assert_eq!(fiat(d("1234567.5"), "USD"), "1,234,567.50 USD");
    }

    #[test]
    fn changes_and_percentages_are_signed() {
        assert_eq!(signed_fiat(d("86088.34"), "USD"), "+86,088.34 USD");
        assert_eq!(signed_fiat(d("-81521.9"), "USD"), "−81,521.90 USD");
        assert_eq!(signed_fiat(d("0"), "USD"), "+0.00 USD");
        assert_eq!(signed_pct(d("-95.34")), "−95.3%");
        assert_eq!(signed_pct(d("4.25")), "+4.3%");
    }

    #[test]
    fn quantities_keep_their_meaningful_digits_exactly() {
        assert_eq!(atomic(1_739_460_000, 6), "1,739.46");
        assert_eq!(atomic(9_400_000_000, 9), "9.4");
        assert_eq!(atomic(5_000, 9), "0.000005");
        assert_eq!(atomic(-2_500_000, 6), "−2.5");
        assert_eq!(atomic(0, 6), "0");
        assert_eq!(atomic(123, 0), "123");
        // 2^100 atomic units is past a decimal's 96 bits: its digits.
        assert_eq!(atomic(1 << 100, 6), (1i128 << 100).to_string());
        assert_eq!(atomic_text("81724900000", 6), "81,724.9");
        assert_eq!(atomic_text("n/a", 6), "n/a");
    }

    #[test]
    fn times_read_as_a_day_month_year_and_utc_minutes() {
        // 2026-12-02T14:05:00Z.
        let ms = 1_796_220_300_000;
        assert_eq!(date_time(ms), "2 Dec 2026, 14:05 UTC");
        assert_eq!(date(ms), "2 Dec 2026");
        assert_eq!(
            date_time_text("2026-12-02T14:05:59Z"),
            "2 Dec 2026, 14:05 UTC"
        );
        assert_eq!(date_time_text("yesterday"), "yesterday");
    }

    #[test]
    fn mints_read_as_symbols_or_shortened_addresses() {
        let usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
        assert_eq!(mint_name("sol", None), "SOL");
        assert_eq!(mint_name(usdc, Some("USDC")), "USDC");
        assert_eq!(mint_name(usdc, None), "EPjF…Dt1v");
        assert_eq!(mint_name(usdc, Some(usdc)), "EPjF…Dt1v");
        assert_eq!(count(2034, "leg", "legs"), "2,034 legs");
        assert_eq!(count(1, "leg", "legs"), "1 leg");
    }
}
