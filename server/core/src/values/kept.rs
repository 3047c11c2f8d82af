//! An answer serialised once and served many times ([`KeptJson`]): the
//! JSON bytes, and their gzip made on the first request that accepts it.
//! The read caches (ledger pages, positions) keep these, so a repeated
//! read neither serialises nor compresses again.

use std::{io::Write, sync::OnceLock};

use bytes::Bytes;

/// Below this size an answer is sent as it is: gzip would save little.
const GZIP_FROM_BYTES: usize = 1024;

/// A serialised JSON answer, and its gzip once asked for.
#[derive(Debug)]
pub struct KeptJson {
    json: Bytes,
    gzip: OnceLock<Option<Bytes>>,
}

impl KeptJson {
    pub fn new(json: Bytes) -> Self {
        Self {
            json,
            gzip: OnceLock::new(),
        }
    }

    /// An answer made for one call (a paid call's, with its payment
    /// block): sent as it is, never compressed, since nothing reuses it.
    pub fn once(json: Bytes) -> Self {
        let gzip = OnceLock::new();
        let _ = gzip.set(None);
        Self { json, gzip }
    }

    /// The JSON bytes.
    pub fn json(&self) -> &Bytes {
        &self.json
    }

    /// The same gzip-compressed (RFC 1952), made once; `None` when the
    /// answer is too small to gain from it.
    pub fn gzip(&self) -> Option<&Bytes> {
        self.gzip
            .get_or_init(|| {
                if self.json.len() < GZIP_FROM_BYTES {
                    return None;
                }
                // Level 1: a tenth of level 6's time for a few percent
                // more bytes; the answer is compressed once per version.
                let mut encoder = flate2::write::GzEncoder::new(
                    Vec::with_capacity(self.json.len() / 4),
                    flate2::Compression::fast(),
                );
                encoder.write_all(&self.json).ok()?;
                let gzip = encoder.finish().ok()?;
                (gzip.len() < self.json.len()).then(|| Bytes::from(gzip))
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn the_gzip_decompresses_to_the_json_and_is_made_once() {
        let json = Bytes::from(format!("[{}0]", "{\"lot\":\"12345\"},".repeat(500)));
        let kept = KeptJson::new(json.clone());
        let gzip = kept.gzip().unwrap().clone();
        assert!(
            gzip.len() * 10 < json.len(),
            "{} of {}",
            gzip.len(),
            json.len()
        );
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&gzip[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, json);
        assert_eq!(
            kept.gzip().unwrap().as_ptr(),
            gzip.as_ptr(),
            "the same bytes"
        );
    }

    #[test]
    fn an_answer_for_one_call_is_not_compressed() {
        let json = Bytes::from("[1,2,3]".repeat(1000));
        assert!(KeptJson::once(json.clone()).gzip().is_none());
        assert!(KeptJson::new(json).gzip().is_some());
    }

    #[test]
    fn a_small_answer_is_not_compressed() {
        assert!(
            KeptJson::new(Bytes::from_static(b"{\"a\":1}"))
                .gzip()
                .is_none()
        );
    }
}
