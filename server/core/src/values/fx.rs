//! Currency conversion through the European Central Bank's euro foreign
//! exchange reference rates: a pure function over a table of daily rates.
//!
//! The ECB publishes, around 16:00 CET on every TARGET working day, how
//! many units of each currency one euro buys ("Euro foreign exchange
//! reference rates", ecb.europa.eu, Statistics > Exchange rates; history
//! as `eurofxref-hist.csv`). It publishes all five reporting currencies
//! (USD, GBP, CAD, AUD against EUR), so one source serves every
//! jurisdiction, and a cross rate goes through the euro: USD to GBP is
//! `amount / USD-per-EUR * GBP-per-EUR`. A day without a rate (weekends,
//! TARGET holidays such as 1 January, Good Friday, Easter Monday, 1 May,
//! 25-26 December) takes the last rate published before it, at most
//! [`MAX_GAP_DAYS`] back, so a gap in the table is an error rather than a
//! silently stale value. Decimal only: the amount is multiplied by the
//! target rate before dividing by the source rate, and the result is
//! rounded half away from zero to [`FX_DP`] decimal places.

use std::collections::BTreeMap;

use chrono::{Days, NaiveDate};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};

/// Decimal places of a converted amount.
pub const FX_DP: u32 = 8;

/// Longest run of days without a rate that still uses the last one: the
/// ECB's longest closure (Easter: Good Friday to Easter Monday, with the
/// weekend) is four days.
pub const MAX_GAP_DAYS: u64 = 7;

/// A reporting currency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Currency {
    Usd,
    Gbp,
    Eur,
    Cad,
    Aud,
}

impl Currency {
    pub const ALL: [Currency; 5] = [
        Currency::Usd,
        Currency::Gbp,
        Currency::Eur,
        Currency::Cad,
        Currency::Aud,
    ];

    /// The ISO 4217 code.
    pub fn code(self) -> &'static str {
        match self {
            Currency::Usd => "USD",
            Currency::Gbp => "GBP",
            Currency::Eur => "EUR",
            Currency::Cad => "CAD",
            Currency::Aud => "AUD",
        }
    }

    /// An ISO 4217 code, any case.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|c| c.code().eq_ignore_ascii_case(text))
    }
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FxError {
    #[error("no {currency} reference rate on or within {MAX_GAP_DAYS} days before {date}")]
    NoRate { currency: Currency, date: NaiveDate },
    #[error("reference rate table: {0}")]
    Table(String),
}

/// Daily reference rates: units of a currency per one euro.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RateTable {
    rates: BTreeMap<Currency, BTreeMap<NaiveDate, Decimal>>,
}

impl RateTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Record that one euro bought `per_euro` of `currency` on `date`.
    /// Non-positive rates are ignored; EUR needs none.
    pub fn insert(&mut self, date: NaiveDate, currency: Currency, per_euro: Decimal) {
        if currency != Currency::Eur && per_euro > Decimal::ZERO {
            self.rates
                .entry(currency)
                .or_default()
                .insert(date, per_euro);
        }
    }

    /// The rate in force on `date`: that day's, else the last before it.
    pub fn per_euro(&self, currency: Currency, date: NaiveDate) -> Result<Decimal, FxError> {
        if currency == Currency::Eur {
            return Ok(Decimal::ONE);
        }
        let missing = FxError::NoRate { currency, date };
        let earliest = date
            .checked_sub_days(Days::new(MAX_GAP_DAYS))
            .unwrap_or(date);
        self.rates
            .get(&currency)
            .and_then(|days| days.range(earliest..=date).next_back())
            .map(|(_, rate)| *rate)
            .ok_or(missing)
    }

    /// `amount` in `from` on `date`, in `to`.
    pub fn convert(
        &self,
        amount: Decimal,
        from: Currency,
        to: Currency,
        date: NaiveDate,
    ) -> Result<Decimal, FxError> {
        if from == to {
            return Ok(amount);
        }
        let (source, target) = (self.per_euro(from, date)?, self.per_euro(to, date)?);
        let overflow = || FxError::Table(format!("{amount} {from} does not convert to {to}"));
        amount
            .checked_mul(target)
            .and_then(|a| a.checked_div(source))
            .map(|a| a.round_dp_with_strategy(FX_DP, RoundingStrategy::MidpointAwayFromZero))
            .ok_or_else(overflow)
    }

    /// Read the ECB's history file (`eurofxref-hist.csv`, or the daily
    /// `eurofxref.csv`): a `Date` column then one column per currency code,
    /// `N/A` where there is no rate. Columns of other currencies are skipped.
    pub fn from_ecb_csv(text: &str) -> Result<Self, FxError> {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header: Vec<Option<Currency>> = lines
            .next()
            .ok_or_else(|| FxError::Table("empty".into()))?
            .split(',')
            .map(|c| Currency::parse(c.trim()))
            .collect();
        let mut table = RateTable::new();
        for line in lines {
            let mut cells = line.split(',');
            let date_text = cells.next().unwrap_or_default().trim();
            let date = NaiveDate::parse_from_str(date_text, "%Y-%m-%d")
                .or_else(|_| NaiveDate::parse_from_str(date_text, "%d %B %Y"))
                .map_err(|_| FxError::Table(format!("bad date {date_text:?}")))?;
            for (cell, currency) in cells.zip(header.iter().skip(1)) {
                if let (Some(currency), Ok(rate)) = (currency, cell.trim().parse::<Decimal>()) {
                    table.insert(date, *currency, rate);
                }
            }
        }
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    fn dec(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    /// Three days in the layout of the ECB's `eurofxref-hist.csv` (newest
    /// first, a trailing comma, `N/A`); the figures are illustrative, the
    /// expected values are the arithmetic of the rule.
    const ECB: &str = "Date,USD,JPY,GBP,CAD,AUD,\n\
        2024-03-28,1.0811,163.45,0.85510,1.4672,1.6553,\n\
        2024-03-27,1.0826,164.06,0.85768,1.4717,1.6594,\n\
        2024-01-02,1.0956,155.09,0.86790,1.4565,1.6125,N/A\n";

    #[test]
    fn a_cross_rate_goes_through_the_euro() {
        let table = RateTable::from_ecb_csv(ECB).unwrap();
        // 1,000 USD on 28 March 2024: 1000 / 1.0811 EUR, times 0.85510 GBP.
        // 1000 * 0.85510 / 1.0811 = 790.95365831...
        assert_eq!(
            table.convert(dec("1000"), Currency::Usd, Currency::Gbp, d(2024, 3, 28)),
            Ok(dec("790.95365831"))
        );
        // To EUR: 1000 / 1.0811 = 924.98381278...
        assert_eq!(
            table.convert(dec("1000"), Currency::Usd, Currency::Eur, d(2024, 3, 28)),
            Ok(dec("924.98381278"))
        );
        // From EUR: 100 EUR = 165.53 AUD.
        assert_eq!(
            table.convert(dec("100"), Currency::Eur, Currency::Aud, d(2024, 3, 28)),
            Ok(dec("165.53"))
        );
        assert_eq!(
            table.convert(dec("5"), Currency::Cad, Currency::Cad, d(1999, 1, 1)),
            Ok(dec("5"))
        );
    }

    #[test]
    fn a_day_without_a_rate_takes_the_last_published_before_it() {
        let table = RateTable::from_ecb_csv(ECB).unwrap();
        // Good Friday 29 March to Easter Monday 1 April 2024 are TARGET
        // holidays: Thursday 28 March's rate applies.
        for day in [29, 30, 31] {
            assert_eq!(
                table.per_euro(Currency::Usd, d(2024, 3, day)),
                Ok(dec("1.0811"))
            );
        }
        assert_eq!(
            table.per_euro(Currency::Usd, d(2024, 4, 1)),
            Ok(dec("1.0811"))
        );
        // 1 January is a TARGET holiday; 31 December 2023 is not in the table
        // and nothing within seven days before is: an error, not a guess.
        assert_eq!(
            table.per_euro(Currency::Usd, d(2024, 1, 1)),
            Err(FxError::NoRate {
                currency: Currency::Usd,
                date: d(2024, 1, 1)
            })
        );
        assert_eq!(
            table.per_euro(Currency::Gbp, d(2024, 1, 9)),
            Ok(dec("0.86790"))
        );
        assert!(table.per_euro(Currency::Gbp, d(2024, 1, 10)).is_err());
    }

    #[test]
    fn currencies_parse_by_code() {
        assert_eq!(Currency::parse("gbp"), Some(Currency::Gbp));
        assert_eq!(Currency::parse("JPY"), None);
        assert_eq!(serde_json::to_string(&Currency::Aud).unwrap(), "\"AUD\"");
    }
}
