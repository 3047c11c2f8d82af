//! Opaque page cursors that cannot be forged. A cursor names the last leg
//! of a page and a digest of the query it belongs to (wallet and filters),
//! signed with HMAC-SHA256 under a server secret. A cursor altered, made
//! up, or presented with another wallet or other filters fails the check
//! (compared in constant time) and is refused.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// Where the next page starts: after this leg.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    #[serde(rename = "s")]
    pub slot: i64,
    #[serde(rename = "g")]
    pub signature: String,
    #[serde(rename = "i")]
    pub index: i32,
}

#[derive(Serialize, Deserialize)]
struct Payload {
    #[serde(rename = "p")]
    position: Position,
    /// Digest of the query the cursor belongs to.
    #[serde(rename = "q")]
    query: String,
}

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The digest binding a cursor to its query: `parts` in order.
pub fn query_digest(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    B64.encode(&hasher.finalize()[..16])
}

fn mac(secret: &[u8], payload: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length; this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
    mac.update(payload);
    mac
}

/// Make a cursor for `position` within the query `digest`.
pub fn encode(secret: &[u8], digest: &str, position: Position) -> String {
    let payload = serde_json::to_vec(&Payload {
        position,
        query: digest.to_owned(),
    })
    .unwrap_or_default();
    let tag = mac(secret, &payload).finalize().into_bytes();
    format!("{}.{}", B64.encode(&payload), B64.encode(tag))
}

/// Read a cursor back; `None` when it is malformed, forged or belongs to
/// another query.
pub fn decode(secret: &[u8], digest: &str, cursor: &str) -> Option<Position> {
    let (payload_b64, tag_b64) = cursor.trim().split_once('.')?;
    let payload = B64.decode(payload_b64).ok()?;
    let tag = B64.decode(tag_b64).ok()?;
    mac(secret, &payload).verify_slice(&tag).ok()?;
    let payload: Payload = serde_json::from_slice(&payload).ok()?;
    (payload.query == digest).then_some(payload.position)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn position() -> Position {
        Position {
            slot: 42,
            signature: "sig".into(),
            index: 1,
        }
    }

    #[test]
    fn a_cursor_round_trips_within_its_query() {
        let digest = query_digest(&["wallet", "", "sol"]);
        let cursor = encode(SECRET, &digest, position());
        assert_eq!(decode(SECRET, &digest, &cursor), Some(position()));
    }

    #[test]
    fn a_cursor_does_not_open_another_query() {
        let cursor = encode(SECRET, &query_digest(&["wallet-a"]), position());
        assert_eq!(decode(SECRET, &query_digest(&["wallet-b"]), &cursor), None);
    }

    #[test]
    fn tampered_or_forged_cursors_are_refused() {
        let digest = query_digest(&["wallet"]);
        let cursor = encode(SECRET, &digest, position());
        let (payload, tag) = cursor.split_once('.').unwrap();
        let forged_payload = B64.encode(
            serde_json::to_vec(&Payload {
                position: Position {
                    slot: 1,
                    ..position()
                },
                query: digest.clone(),
            })
            .unwrap(),
        );
        for bad in [
            format!("{forged_payload}.{tag}"),
            format!("{payload}.{}", B64.encode([0u8; 32])),
            format!("{payload}."),
            "not a cursor".to_owned(),
            String::new(),
        ] {
            assert_eq!(decode(SECRET, &digest, &bad), None, "{bad}");
        }
        assert_eq!(decode(b"another secret", &digest, &cursor), None);
        // Parts are length-prefixed: moving a boundary changes the digest.
        assert_ne!(query_digest(&["ab", "c"]), query_digest(&["a", "bc"]));
    }
}
