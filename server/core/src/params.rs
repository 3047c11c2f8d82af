//! The values tools and their REST twins take, as their schemas state them.
//!
//! Most arguments are read as plain strings and parsed by the domain (a
//! wallet address, a time bound, a cost-basis method); the types here give
//! each the schema that says exactly what that parse accepts, so a field
//! reads `#[schemars(with = "params::Address")]` and the schema, the check
//! that holds calls to it and the domain agree. [`MinUsd`] is a real value:
//! a USD floor, a JSON number of at least 0.

use std::{borrow::Cow, fmt, str::FromStr};

use rust_decimal::Decimal;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, de};

use crate::{
    basis::{
        Method,
        jurisdiction::{Jurisdiction, TaxYear},
    },
    ledger::OperationType,
    values::fx::Currency,
};

pub use crate::solana::address::BASE58_KEY;

macro_rules! schema_type {
    ($(#[$doc:meta])* $name:ident, $schema:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                $schema
            }
        }
    };
}

/// A wallet's base58 public key.
pub type Address = crate::solana::WalletAddress;

schema_type!(
    /// A mint filter: "sol" for native SOL, else a token mint.
    Mint,
    json_schema!({
        "anyOf": [
            {"type": "string", "title": "sol", "pattern": "^[sS][oO][lL]$"},
            {"type": "string", "title": "a base58 mint", "pattern": format!("^{BASE58_KEY}$")},
        ],
    })
);

schema_type!(
    /// A priced mint: "sol" or empty for native SOL, else a token mint.
    MintOrSol,
    json_schema!({
        "anyOf": [
            {"type": "string", "title": "sol or empty", "pattern": "^([sS][oO][lL])?$"},
            {"type": "string", "title": "a base58 mint", "pattern": format!("^{BASE58_KEY}$")},
        ],
    })
);

/// A time bound: an RFC 3339 time or a date (a whole UTC day).
pub type TimeBound = crate::values::TimeBound;

schema_type!(
    /// A cost-basis method.
    CostMethod,
    json_schema!({
        "type": "string",
        "enum": Method::SERVED.map(Method::as_str),
    })
);

schema_type!(
    /// A leg's operation type.
    Operation,
    json_schema!({
        "type": "string",
        "enum": OperationType::ALL.map(OperationType::as_str),
    })
);

schema_type!(
    /// A series' bucket width.
    GranularityName,
    json_schema!({"type": "string", "enum": ["1d", "1h"]})
);

schema_type!(
    /// The currency value history is denominated in.
    Denomination,
    json_schema!({"type": "string", "enum": ["usd", "sol"]})
);

schema_type!(
    /// A tax jurisdiction: its rules, currency and tax year.
    JurisdictionName,
    json_schema!({"type": "string", "enum": Jurisdiction::ALL.map(Jurisdiction::as_str)})
);

schema_type!(
    /// A reporting currency (ISO 4217).
    CurrencyName,
    json_schema!({"type": "string", "enum": Currency::ALL.map(Currency::code)})
);

schema_type!(
    /// A locale numbers are written in (BCP 47): `1,234.56` in English,
    /// `1.234,56` in de-DE, `1 234,56` in fr-FR.
    LocaleName,
    json_schema!({"type": "string", "enum": crate::values::format::Locale::ALL.map(crate::values::format::Locale::tag)})
);

schema_type!(
    /// A tax year: `2024` (US, Canada, Germany: the calendar year) or
    /// `2024-25` (UK from 6 April 2024, Australia from 1 July 2024). No
    /// pattern here: a wrong one is refused naming both forms.
    TaxYearName,
    json_schema!({"type": "string", "minLength": 4, "maxLength": 7})
);

/// An optional jurisdiction read from its name, refused naming the allowed ones.
pub fn optional_jurisdiction<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Jurisdiction>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => Jurisdiction::parse(text.trim().to_ascii_lowercase().as_str())
            .map(Some)
            .ok_or_else(|| de::Error::custom(format!("{text:?} is none of us, uk, ca, de, au"))),
    }
}

/// An optional reporting currency read from its code, refused naming the
/// allowed ones.
pub fn optional_currency<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Currency>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => Currency::parse(text.trim()).map(Some).ok_or_else(|| {
            de::Error::custom(format!("{text:?} is none of USD, GBP, EUR, CAD, AUD"))
        }),
    }
}

/// An optional locale read from its tag, refused naming the supported ones.
pub fn optional_locale<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<crate::values::format::Locale>, D::Error> {
    use crate::values::format::Locale;
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => Locale::parse(&text).map(Some).ok_or_else(|| {
            de::Error::custom(format!(
                "{text:?} is none of {}",
                Locale::ALL.map(Locale::tag).join(", ")
            ))
        }),
    }
}

/// A tax year as asked: `2024`, or `2024-25` for a year that spans two.
/// Which one a jurisdiction takes is checked against it
/// ([`TaxYearArg::for_jurisdiction`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaxYearArg {
    pub start: i32,
    pub split: bool,
}

impl TaxYearArg {
    /// `2024` or `2024-25` (the second part must be the next year).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let (first, second) = match text.split_once('-') {
            Some((a, b)) => (a, Some(b)),
            None => (text, None),
        };
        if first.len() != 4 || !first.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let start: i32 = first.parse().ok()?;
        match second {
            None => Some(Self {
                start,
                split: false,
            }),
            Some(b) if b.len() == 2 && b.bytes().all(|c| c.is_ascii_digit()) => {
                let next: i32 = b.parse().ok()?;
                (next == (start + 1).rem_euclid(100)).then_some(Self { start, split: true })
            }
            Some(_) => None,
        }
    }

    /// The tax year in `jurisdiction`'s terms, or why it is not one of its
    /// years: the UK and Australia write theirs `2024-25`, the others `2024`.
    pub fn for_jurisdiction(self, jurisdiction: Jurisdiction) -> Result<TaxYear, String> {
        let split = matches!(jurisdiction, Jurisdiction::Uk | Jurisdiction::Au);
        match (split, self.split) {
            (true, true) => Ok(TaxYear::split(self.start)),
            (false, false) => Ok(TaxYear::calendar(self.start)),
            (true, false) => Err(format!(
                "tax_year: {jurisdiction} tax years span two calendar years: write {}-{:02}",
                self.start,
                (self.start + 1).rem_euclid(100)
            )),
            (false, true) => Err(format!(
                "tax_year: {jurisdiction} tax years are calendar years: write {}",
                self.start
            )),
        }
    }
}

/// An optional tax year, refused in words when it is neither `2024` nor `2024-25`.
pub fn optional_tax_year<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TaxYearArg>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => TaxYearArg::parse(&text).map(Some).ok_or_else(|| {
            de::Error::custom(format!(
                "{text:?} is not a tax year: write 2024 (us, ca, de) or 2024-25 (uk, au)"
            ))
        }),
    }
}

/// An optional cost-basis method read from its name, refused in words (not
/// serde's "unknown variant", which reads as a shape error).
pub fn optional_method<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Method>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => Method::parse(text.trim())
            .filter(|m| Method::SERVED.contains(m))
            .map(Some)
            .ok_or_else(|| {
                de::Error::custom(format!("{text:?} is none of fifo, lifo, hifo, average"))
            }),
    }
}

/// A USD floor: legs worth less than this are left out. A JSON number of at
/// least 0 (a query parameter's decimal text on REST). A JSON number
/// arrives as a double and is read through its shortest decimal form, so
/// `0.1` is exactly 0.1; a floor beyond what a decimal holds is the largest
/// one, which no leg reaches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinUsd(Decimal);

impl MinUsd {
    pub fn decimal(self) -> Decimal {
        self.0
    }

    fn from_f64(n: f64) -> Option<Self> {
        if !n.is_finite() || n < 0.0 {
            return None;
        }
        let d = Decimal::from_str(&n.to_string())
            .or_else(|_| Decimal::from_scientific(&format!("{n:e}")))
            .unwrap_or(Decimal::MAX);
        Some(Self(d.normalize()))
    }
}

impl fmt::Display for MinUsd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<'de> Deserialize<'de> for MinUsd {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Floor;
        impl de::Visitor<'_> for Floor {
            type Value = MinUsd;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number of at least 0")
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<MinUsd, E> {
                Ok(MinUsd(Decimal::from(n)))
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<MinUsd, E> {
                u64::try_from(n)
                    .map(|n| MinUsd(Decimal::from(n)))
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(n), &self))
            }

            fn visit_f64<E: de::Error>(self, n: f64) -> Result<MinUsd, E> {
                MinUsd::from_f64(n).ok_or_else(|| E::invalid_value(de::Unexpected::Float(n), &self))
            }
        }
        // A query string's deserializer parses the text for deserialize_f64;
        // JSON hands over the number it holds and refuses a string.
        d.deserialize_f64(Floor)
    }
}

impl JsonSchema for MinUsd {
    fn schema_name() -> Cow<'static, str> {
        "MinUsd".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "number", "minimum": 0})
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tax_year_is_written_as_its_jurisdiction_writes_it() {
        let calendar = TaxYearArg::parse("2024").unwrap();
        let split = TaxYearArg::parse("2024-25").unwrap();
        assert_eq!(
            calendar.for_jurisdiction(Jurisdiction::De),
            Ok(TaxYear::calendar(2024))
        );
        assert_eq!(
            split.for_jurisdiction(Jurisdiction::Uk),
            Ok(TaxYear::split(2024))
        );
        assert_eq!(
            TaxYearArg::parse("1999-00").map(|y| y.for_jurisdiction(Jurisdiction::Au)),
            Some(Ok(TaxYear::split(1999)))
        );
        assert!(
            calendar
                .for_jurisdiction(Jurisdiction::Uk)
                .unwrap_err()
                .contains("2024-25")
        );
        assert!(
            split
                .for_jurisdiction(Jurisdiction::Ca)
                .unwrap_err()
                .contains("write 2024")
        );
        for bad in ["2024-26", "24", "2024-2025", "last", "20245", ""] {
            assert_eq!(TaxYearArg::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_floor_is_a_non_negative_number_and_nothing_else() {
        for (value, shown) in [
            (json!(0), "0"),
            (json!(1), "1"),
            (json!(0.1), "0.1"),
            (json!(2.50), "2.5"),
            (json!(1e300), "79228162514264337593543950335"),
        ] {
            let floor: MinUsd = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(floor.to_string(), shown, "{value}");
        }
        for bad in [json!("1"), json!(-1), json!(-0.5), json!(true), json!(null)] {
            let err = serde_json::from_value::<MinUsd>(bad.clone()).unwrap_err();
            assert!(!err.to_string().contains("Raw"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_query_string_floor_is_read_from_its_text() {
        #[derive(Deserialize)]
        struct Q {
            min_usd_value: MinUsd,
        }
        let q: Q = serde_urlencoded::from_str("min_usd_value=0.25").unwrap();
        assert_eq!(q.min_usd_value.to_string(), "0.25");
        assert!(serde_urlencoded::from_str::<Q>("min_usd_value=-1").is_err());
        assert!(serde_urlencoded::from_str::<Q>("min_usd_value=abc").is_err());
        assert!(serde_urlencoded::from_str::<Q>("min_usd_value=NaN").is_err());
    }
}
