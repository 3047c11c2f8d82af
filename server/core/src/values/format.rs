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
//!
//! Numbers follow a [`Locale`]: the functions without a locale write
//! en-US (`1,234.56`), exactly as before locales existed, so a page that
//! passes none reads as it always did; the `_in` variants take the
//! reader's locale (`1.234,56` in de-DE, `1 234,56` in fr-FR with a narrow
//! no-break space). The locale comes from the account's setting, else the
//! request's `Accept-Language` ([`Locale::negotiate`]). Dates stay in the
//! one unambiguous form (`2 Dec 2026`) in every locale.

use rust_decimal::{Decimal, RoundingStrategy};

/// The minus sign people read (U+2212), not a hyphen.
pub const MINUS: char = '−';

/// The locales numbers are written in: a small set negotiated from
/// `Accept-Language` or set on the account. Each differs from the others
/// in its separators only where CLDR's number symbols say so (en: `,` and
/// `.`; de: `.` and `,`; fr: a narrow no-break space and `,`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Locale {
    /// `1,234.56`: what every page wrote before locales existed.
    #[default]
    EnUs,
    EnGb,
    EnCa,
    EnAu,
    /// `1.234,56`.
    DeDe,
    /// `1 234,56` (U+202F between groups).
    FrFr,
}

impl Locale {
    pub const ALL: [Locale; 6] = [
        Locale::EnUs,
        Locale::EnGb,
        Locale::EnCa,
        Locale::EnAu,
        Locale::DeDe,
        Locale::FrFr,
    ];

    /// The BCP 47 tag (`en-US`), as the setting stores it.
    pub fn tag(self) -> &'static str {
        match self {
            Locale::EnUs => "en-US",
            Locale::EnGb => "en-GB",
            Locale::EnCa => "en-CA",
            Locale::EnAu => "en-AU",
            Locale::DeDe => "de-DE",
            Locale::FrFr => "fr-FR",
        }
    }

    /// The locale of a tag, its case ignored (`de-de`, `en_GB`); `None`
    /// for a tag not in the set.
    pub fn parse(tag: &str) -> Option<Self> {
        let tag = tag.trim().replace('_', "-");
        Self::ALL
            .into_iter()
            .find(|l| l.tag().eq_ignore_ascii_case(&tag))
    }

    /// What a person picks it by, with an example of its numbers.
    pub fn name(self) -> &'static str {
        match self {
            Locale::EnUs => "English (United States): 1,234.56",
            Locale::EnGb => "English (United Kingdom): 1,234.56",
            Locale::EnCa => "English (Canada): 1,234.56",
            Locale::EnAu => "English (Australia): 1,234.56",
            Locale::DeDe => "Deutsch (Deutschland): 1.234,56",
            Locale::FrFr => "Français (France): 1 234,56",
        }
    }

    /// The best of the set for an `Accept-Language` header (RFC 9110
    /// §12.5.4): ranges by their `q` weight (1 when absent, 0 never), the
    /// first listed winning a tie; a range matches a locale by its whole
    /// tag, else by its language alone (`de-AT` and `de` read as de-DE,
    /// `en` as en-US, `fr-CA` as fr-FR). Nothing matches: en-US.
    pub fn negotiate(accept_language: &str) -> Self {
        let mut ranges: Vec<(u32, usize, &str)> = accept_language
            .split(',')
            .enumerate()
            .filter_map(|(i, part)| {
                let mut pieces = part.split(';');
                let range = pieces.next()?.trim();
                let mut q = 1000u32;
                for p in pieces {
                    if let Some(v) = p.trim().strip_prefix("q=") {
                        q = parse_q(v.trim())?;
                    }
                }
                (q > 0 && !range.is_empty()).then_some((q, i, range))
            })
            .collect();
        ranges.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, _, range) in ranges {
            if let Some(exact) = Self::parse(range) {
                return exact;
            }
            let language = range.split(['-', '_']).next().unwrap_or_default();
            let by_language = match language.to_ascii_lowercase().as_str() {
                "en" => Some(Locale::EnUs),
                "de" => Some(Locale::DeDe),
                "fr" => Some(Locale::FrFr),
                _ => None,
            };
            if let Some(found) = by_language {
                return found;
            }
        }
        Locale::EnUs
    }

    fn group_separator(self) -> &'static str {
        match self {
            Locale::DeDe => ".",
            Locale::FrFr => "\u{202F}",
            _ => ",",
        }
    }

    fn decimal_separator(self) -> char {
        match self {
            Locale::DeDe | Locale::FrFr => ',',
            _ => '.',
        }
    }

    /// Between a number and `%`: none in English, a no-break space in
    /// German and French (CLDR percent patterns `#,##0 %`).
    fn percent_gap(self) -> &'static str {
        match self {
            Locale::DeDe => "\u{A0}",
            Locale::FrFr => "\u{202F}",
            _ => "",
        }
    }
}

/// A `q` value in thousandths (`0.8` is 800); `None` when malformed.
fn parse_q(text: &str) -> Option<u32> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole = match int {
        "0" => 0,
        "1" => 1000,
        _ => return None,
    };
    let mut thousandths = 0;
    for (i, b) in frac.bytes().enumerate() {
        thousandths += u32::from(b - b'0') * [100, 10, 1][i];
    }
    (whole + thousandths <= 1000).then_some(whole + thousandths)
}

/// Group the integer digits of a plain decimal text in threes.
fn group(int: &str, locale: Locale) -> String {
    let sep = locale.group_separator();
    let mut out = String::with_capacity(int.len() + int.len() / 3 * sep.len());
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push_str(sep);
        }
        out.push(c);
    }
    out
}

/// A plain non-negative decimal text written in `locale`, after the sign.
fn written(negative: bool, text: &str, locale: Locale) -> String {
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text, None),
    };
    let mut out = String::new();
    if negative {
        out.push(MINUS);
    }
    out.push_str(&group(int, locale));
    if let Some(f) = frac {
        out.push(locale.decimal_separator());
        out.push_str(f);
    }
    out
}

/// `d` with `places` decimals exactly (padded), grouped, with a real minus
/// sign; half away from zero, as people round money.
pub fn decimal(d: Decimal, places: u32) -> String {
    decimal_in(d, places, Locale::EnUs)
}

/// [`decimal`] in `locale`.
pub fn decimal_in(d: Decimal, places: u32, locale: Locale) -> String {
    let mut rounded = d.round_dp_with_strategy(places, RoundingStrategy::MidpointAwayFromZero);
    rounded.rescale(places);
    let negative = rounded.is_sign_negative() && !rounded.is_zero();
    written(negative, &rounded.abs().to_string(), locale)
}

/// Fiat money: two decimals and the currency (`86,088.34 USD`).
pub fn fiat(d: Decimal, currency: &str) -> String {
    fiat_in(d, currency, Locale::EnUs)
}

/// [`fiat`] in `locale` (`86.088,34 EUR` in de-DE).
pub fn fiat_in(d: Decimal, currency: &str, locale: Locale) -> String {
    format!("{} {currency}", decimal_in(d, 2, locale))
}

/// A change in fiat: always signed (`+1,200.00 USD`, `−81,521.90 USD`).
pub fn signed_fiat(d: Decimal, currency: &str) -> String {
    signed_fiat_in(d, currency, Locale::EnUs)
}

/// [`signed_fiat`] in `locale`.
pub fn signed_fiat_in(d: Decimal, currency: &str, locale: Locale) -> String {
    let text = fiat_in(d, currency, locale);
    if text.starts_with(MINUS) {
        text
    } else {
        format!("+{text}")
    }
}

/// A figure always signed, `places` decimals (`+1,200.00`, `−81,521.90`);
/// a figure that is zero at those places has no direction and no sign.
pub fn signed_in(d: Decimal, places: u32, locale: Locale) -> String {
    let text = decimal_in(d, places, locale);
    if text.starts_with(MINUS) || d.round_dp(places).is_zero() {
        text
    } else {
        format!("+{text}")
    }
}

/// A percentage with one decimal, signed (`+4.2%`, `−95.3%`).
pub fn signed_pct(d: Decimal) -> String {
    signed_pct_in(d, Locale::EnUs)
}

/// [`signed_pct`] in `locale` (`+4,2 %` in de-DE).
pub fn signed_pct_in(d: Decimal, locale: Locale) -> String {
    let text = decimal_in(d, 1, locale);
    let gap = locale.percent_gap();
    if text.starts_with(MINUS) {
        format!("{text}{gap}%")
    } else {
        format!("+{text}{gap}%")
    }
}

/// A decimal quantity to its meaningful digits: exact, trailing zeros
/// trimmed, thousands grouped, real minus sign (`1,739.46`, `0.000005`).
pub fn quantity(d: Decimal) -> String {
    quantity_in(d, Locale::EnUs)
}

/// [`quantity`] in `locale`.
pub fn quantity_in(d: Decimal, locale: Locale) -> String {
    let d = d.normalize();
    let negative = d.is_sign_negative() && !d.is_zero();
    written(negative, &d.abs().to_string(), locale)
}

/// A token amount from its atomic units and the mint's decimals, exact
/// (no float between): `quantity` of `atomic / 10^decimals`. An amount
/// beyond what a decimal holds is written as its atomic digits.
pub fn atomic(atomic: i128, decimals: u32) -> String {
    atomic_in(atomic, decimals, Locale::EnUs)
}

/// [`atomic`] in `locale`.
pub fn atomic_in(atomic: i128, decimals: u32, locale: Locale) -> String {
    if decimals <= 28
        && let Ok(d) = Decimal::try_from_i128_with_scale(atomic, decimals)
    {
        return quantity_in(d, locale);
    }
    atomic.to_string()
}

/// [`atomic`] of an atomic amount written as text (as JSON carries it);
/// text that is no integer is given back unchanged.
pub fn atomic_text(text: &str, decimals: u32) -> String {
    atomic_text_in(text, decimals, Locale::EnUs)
}

/// [`atomic_text`] in `locale`.
pub fn atomic_text_in(text: &str, decimals: u32, locale: Locale) -> String {
    match text.parse::<i128>() {
        Ok(a) => atomic_in(a, decimals, locale),
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
    count_in(n, one, many, Locale::EnUs)
}

/// [`count`] in `locale` (`2.034 legs` in de-DE).
pub fn count_in(n: u64, one: &str, many: &str, locale: Locale) -> String {
    let noun = if n == 1 { one } else { many };
    format!("{} {noun}", group(&n.to_string(), locale))
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

    // Separators from CLDR's number symbols: en `,` group `.` decimal;
    // de `.` group `,` decimal; fr U+202F group `,` decimal, and a space
    // before `%` in de (U+00A0) and fr (U+202F).
    #[test]
    fn each_locale_writes_its_own_separators() {
        let n = d("1234567.891");
        assert_eq!(fiat_in(n, "USD", Locale::EnUs), "1,234,567.89 USD");
        assert_eq!(fiat_in(n, "GBP", Locale::EnGb), "1,234,567.89 GBP");
        assert_eq!(fiat_in(n, "EUR", Locale::DeDe), "1.234.567,89 EUR");
        assert_eq!(
            fiat_in(n, "EUR", Locale::FrFr),
            "1\u{202F}234\u{202F}567,89 EUR"
        );
        assert_eq!(
            signed_fiat_in(d("-81521.9"), "EUR", Locale::DeDe),
            "−81.521,90 EUR"
        );
        assert_eq!(signed_pct_in(d("4.25"), Locale::DeDe), "+4,3\u{A0}%");
        assert_eq!(signed_pct_in(d("-95.34"), Locale::EnGb), "−95.3%");
        assert_eq!(atomic_in(1_739_460_000, 6, Locale::DeDe), "1.739,46");
        assert_eq!(quantity_in(d("0.000005"), Locale::FrFr), "0,000005");
        assert_eq!(count_in(2034, "leg", "legs", Locale::DeDe), "2.034 legs");
        assert_eq!(signed_in(d("1200"), 2, Locale::DeDe), "+1.200,00");
        assert_eq!(signed_in(d("-0.001"), 2, Locale::EnUs), "0.00");
        // The functions without a locale are en-US, byte for byte.
        assert_eq!(decimal(n, 2), decimal_in(n, 2, Locale::EnUs));
    }

    #[test]
    fn accept_language_is_negotiated_by_weight_then_by_language() {
        assert_eq!(Locale::negotiate(""), Locale::EnUs);
        assert_eq!(Locale::negotiate("de-DE,de;q=0.9,en;q=0.8"), Locale::DeDe);
        assert_eq!(Locale::negotiate("en-GB,en;q=0.9"), Locale::EnGb);
        assert_eq!(Locale::negotiate("de-AT"), Locale::DeDe);
        assert_eq!(Locale::negotiate("fr-CA, en;q=0.5"), Locale::FrFr);
        assert_eq!(Locale::negotiate("ja, en-AU;q=0.7"), Locale::EnAu);
        assert_eq!(Locale::negotiate("en;q=0.5, de-DE;q=0.9"), Locale::DeDe);
        assert_eq!(Locale::negotiate("de;q=0, en-CA"), Locale::EnCa);
        assert_eq!(Locale::negotiate("*"), Locale::EnUs);
        assert_eq!(Locale::negotiate("de;q=2"), Locale::EnUs, "bad q: skipped");
        assert_eq!(Locale::parse("en_gb"), Some(Locale::EnGb));
        assert_eq!(Locale::parse("es-ES"), None);
        for l in Locale::ALL {
            assert_eq!(Locale::parse(l.tag()), Some(l));
        }
    }
}
