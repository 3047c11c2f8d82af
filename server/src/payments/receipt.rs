//! Receipts: the bearer token a settled payment answers with. 32 bytes,
//! URL-safe base64 without padding, stored only as a SHA-256 hash.
//!
//! The bytes are HMAC-SHA256 of the payment's identity (its message hash)
//! under a server secret: unguessable without the secret, like random
//! bytes, and re-derivable only by someone presenting that very payment
//! again. That is what lets a replayed payment answer its first receipt
//! while the database holds nothing but the receipt's hash.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// A receipt as presented: well-formed (32 bytes of URL-safe base64), not
/// yet known to be valid.
#[derive(Clone, PartialEq, Eq)]
pub struct Receipt(String);

impl std::fmt::Debug for Receipt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Receipt(…)")
    }
}

impl Receipt {
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        (bytes.len() == 32).then(|| Self(text.to_owned()))
    }

    /// The receipt of the payment whose message hashes to `message_hash`.
    pub fn derive(secret: &[u8], message_hash: &[u8; 32]) -> Self {
        // HMAC takes a key of any length.
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
        mac.update(b"ledger receipt v1\0");
        mac.update(message_hash);
        Self(URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
    }

    /// The receipt of a payment row: its message hash is stored as hex.
    pub fn of_message_hex(secret: &[u8], message_hash_hex: &str) -> Option<Self> {
        if message_hash_hex.len() != 64 {
            return None;
        }
        let mut hash = [0u8; 32];
        for (i, chunk) in message_hash_hex.as_bytes().chunks(2).enumerate() {
            let text = std::str::from_utf8(chunk).ok()?;
            hash[i] = u8::from_str_radix(text, 16).ok()?;
        }
        Some(Self::derive(secret, &hash))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What the database stores: SHA-256, hex. Lookups go by this hash, so
    /// the stored value never reveals a usable token.
    pub fn hash(&self) -> String {
        Sha256::digest(self.0.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_are_32_bytes_and_stable_per_payment() {
        let a = Receipt::derive(b"secret", &[7; 32]);
        assert_eq!(a.as_str().len(), 43);
        assert_eq!(a, Receipt::derive(b"secret", &[7; 32]));
        assert_ne!(a, Receipt::derive(b"secret", &[8; 32]));
        assert_ne!(a, Receipt::derive(b"other", &[7; 32]));
        assert_eq!(Receipt::parse(a.as_str()), Some(a.clone()));
        assert_ne!(a.hash(), a.as_str());
    }

    #[test]
    fn malformed_receipts_do_not_parse() {
        assert!(Receipt::parse("").is_none());
        assert!(Receipt::parse("short").is_none());
        assert!(Receipt::parse(&"A".repeat(44)).is_none());
        assert!(Receipt::parse("!!!!").is_none());
    }
}
