//! A Solana account address: base58 of exactly 32 bytes. Parsed once at the
//! edge; everything inward takes a [`WalletAddress`].

use std::{borrow::Cow, fmt};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize};

/// Base58 characters: every Solana public key is 32 to 44 of them.
pub const BASE58_KEY: &str = "[1-9A-HJ-NP-Za-km-z]{32,44}";

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct WalletAddress(String);

impl WalletAddress {
    /// Parse a base58 public key. The error says what is wrong.
    pub fn parse(input: &str) -> Result<Self, String> {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err("address is empty".to_owned());
        }
        if trimmed.len() > 44 {
            return Err("address is too long for a base58 public key".to_owned());
        }
        let bytes = bs58::decode(trimmed)
            .into_vec()
            .map_err(|_| "address is not base58".to_owned())?;
        if bytes.len() != 32 {
            return Err(format!(
                "address decodes to {} bytes; a Solana public key is 32",
                bytes.len()
            ));
        }
        Ok(Self(trimmed.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `7xKX…gAsU`, as texts for people and models abbreviate it.
    pub fn short(&self) -> String {
        let s = &self.0;
        format!(
            "{}…{}",
            &s[..4.min(s.len())],
            &s[s.len().saturating_sub(4)..]
        )
    }
}

/// Read as a string and parsed: a key that is not 32 bytes of base58 is
/// refused when the arguments are read, with the reason.
impl<'de> Deserialize<'de> for WalletAddress {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for WalletAddress {
    fn schema_name() -> Cow<'static, str> {
        "Address".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "title": "a base58 public key",
            "pattern": format!("^{BASE58_KEY}$"),
        })
    }
}

impl fmt::Display for WalletAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_addresses_parse() {
        let a = WalletAddress::parse("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU").unwrap();
        assert_eq!(a.short(), "7xKX…gAsU");
        assert!(WalletAddress::parse("11111111111111111111111111111111").is_ok());
    }

    #[test]
    fn bad_addresses_are_refused_with_a_reason() {
        for (input, why) in [
            ("", "empty"),
            ("0OIl", "base58"),
            ("abc", "bytes"),
            (
                "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU7xKX",
                "too long",
            ),
        ] {
            let err = WalletAddress::parse(input).unwrap_err();
            assert!(err.contains(why), "{input}: {err}");
        }
    }
}
