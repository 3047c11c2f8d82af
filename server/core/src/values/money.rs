//! Money without floats. Prices are USD held as whole micro-dollars, which
//! is also USDC's atomic unit (6 decimals), so a price converts to the
//! amount a payment must carry without rounding.

use std::fmt;

use serde::{Deserialize, Serialize};

/// US dollars, in millionths. Serialised as a decimal string (`"0.25"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Usd(u64);

/// USDC atomic units per dollar.
pub const USDC_DECIMALS: u32 = 6;
const SCALE: u64 = 1_000_000;

impl Usd {
    pub const fn from_micros(micros: u64) -> Self {
        Self(micros)
    }

    pub fn micros(self) -> u64 {
        self.0
    }

    /// The amount in USDC atomic units.
    pub fn usdc_atomic(self) -> u64 {
        self.0
    }

    /// Parse `"12"`, `"0.25"`, `"0.000001"`: at most 6 decimals, no sign,
    /// no exponent.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || (!frac.is_empty() && !digits(frac)) || text.ends_with('.') {
            return Err(format!("{text:?} is not a USD amount like 0.25"));
        }
        if frac.len() > 6 {
            return Err(format!("{text:?} has more than 6 decimals"));
        }
        let whole: u64 = whole
            .parse()
            .map_err(|_| format!("{text:?} is too large"))?;
        let frac_micros: u64 = format!("{frac:0<6}")
            .parse()
            .map_err(|_| format!("{text:?} is not a USD amount"))?;
        whole
            .checked_mul(SCALE)
            .and_then(|w| w.checked_add(frac_micros))
            .map(Self)
            .ok_or_else(|| format!("{text:?} is too large"))
    }
}

impl fmt::Display for Usd {
    /// At least two decimals, more only when needed: `0.25`, `1.00`, `0.000001`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.0 / SCALE;
        let frac = format!("{:06}", self.0 % SCALE);
        let trimmed = frac.trim_end_matches('0');
        let shown = if trimmed.len() < 2 {
            &frac[..2]
        } else {
            trimmed
        };
        write!(f, "{whole}.{shown}")
    }
}

impl Serialize for Usd {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Usd {
    /// A decimal string; a number is accepted too (an environment variable
    /// such as `LEDGER_PRICING__CACHED_READ_USD=0.03` arrives as one) and
    /// read through its shortest decimal form, so `0.03` is 30000 micros.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Whole(u64),
            Number(f64),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Text(text) => text,
            Raw::Whole(n) => n.to_string(),
            Raw::Number(n) => n.to_string(),
        };
        Usd::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Usd {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Usd".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[0-9]+\\.[0-9]{2,6}$",
            "description": "US dollars as a decimal string",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_without_floats() {
        for (text, micros, shown) in [
            ("0.02", 20_000, "0.02"),
            ("1", 1_000_000, "1.00"),
            ("0.25", 250_000, "0.25"),
            ("0.000001", 1, "0.000001"),
            ("12.5", 12_500_000, "12.50"),
        ] {
            let usd = Usd::parse(text).unwrap();
            assert_eq!(usd.micros(), micros, "{text}");
            assert_eq!(usd.to_string(), shown, "{text}");
            assert_eq!(usd.usdc_atomic(), micros);
        }
    }

    #[test]
    fn configuration_numbers_read_as_their_decimal_form() {
        let usd: Usd = serde_json::from_value(serde_json::json!(0.03)).unwrap();
        assert_eq!(usd.micros(), 30_000);
        let usd: Usd = serde_json::from_value(serde_json::json!(2)).unwrap();
        assert_eq!(usd.micros(), 2_000_000);
        assert!(serde_json::from_value::<Usd>(serde_json::json!(-1)).is_err());
    }

    #[test]
    fn refuses_what_is_not_an_amount() {
        for text in [
            "",
            "-1",
            "1e3",
            "0.1234567",
            "1.",
            ".5",
            "abc",
            "99999999999999999999",
        ] {
            assert!(Usd::parse(text).is_err(), "{text}");
        }
    }
}
