//! Identifiers we mint: a prefix naming the kind (`q_`, `job_`) and a ULID
//! (48 bits of milliseconds, 80 random bits, Crockford base32): sortable by
//! creation time, unguessable, and safe in URLs.

use rand::RngCore;

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A new id `prefix` + ULID at `now_ms`.
pub fn new_id(prefix: &str, now_ms: i64) -> String {
    let mut random = [0u8; 10];
    rand::rngs::OsRng.fill_bytes(&mut random);
    let time = u128::from(u64::try_from(now_ms).unwrap_or(0) & 0xFFFF_FFFF_FFFF);
    let value = (time << 80)
        | random
            .iter()
            .fold(0u128, |acc, b| (acc << 8) | u128::from(*b));
    let mut out = String::with_capacity(prefix.len() + 26);
    out.push_str(prefix);
    for i in (0..26).rev() {
        let index = ((value >> (i * 5)) & 0x1F) as usize;
        out.push(char::from(ALPHABET[index]));
    }
    out
}

/// Whether `id` is `prefix` followed by a well-formed ULID.
pub fn is_id(prefix: &str, id: &str) -> bool {
    id.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == 26
            && rest.bytes().all(|b| ALPHABET.contains(&b))
            && rest.as_bytes()[0] <= b'7'
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_prefixed_sortable_and_distinct() {
        let a = new_id("q_", 1_700_000_000_000);
        let b = new_id("q_", 1_700_000_000_001);
        assert!(is_id("q_", &a), "{a}");
        assert!(a < b);
        assert_ne!(new_id("q_", 5), new_id("q_", 5));
        assert!(!is_id("job_", &a));
        assert!(!is_id("q_", "q_01J9X4A7M3"));
        assert!(!is_id("q_", "q_ZZZZZZZZZZZZZZZZZZZZZZZZZZ"));
    }
}
