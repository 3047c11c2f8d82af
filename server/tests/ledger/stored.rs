//! The stored transaction view (`ledger::stored`) reads back into the very
//! view the JSON gave, in both encodings, so legs derived again from it are
//! the legs a scan wrote; and it is a fraction of the JSON's size.

use server::ledger::{self, TxView, stored};

use crate::{encoding_support::to_json_encoding, fixtures, wallets};

#[test]
fn a_stored_view_reads_back_as_the_view_of_its_json_in_both_encodings() {
    let mut sizes = Vec::new();
    for (name, parsed) in fixtures() {
        for (encoding, json) in [
            ("jsonParsed", parsed.clone()),
            ("json", to_json_encoding(&parsed)),
        ] {
            let view = TxView::parse(&json).unwrap();
            let bytes =
                stored::encode(&json).unwrap_or_else(|e| panic!("{name} ({encoding}): {e}"));
            let back =
                stored::decode(&bytes).unwrap_or_else(|e| panic!("{name} ({encoding}): {e}"));
            assert_eq!(back, view, "{name} ({encoding})");
            for wallet in wallets(&view) {
                assert_eq!(
                    ledger::legs(&back, &wallet),
                    ledger::legs(&view, &wallet),
                    "{name} for {wallet}"
                );
            }
            let text = serde_json::to_string(&json).unwrap().len();
            sizes.push((encoding, bytes.len(), text));
        }
    }
    for encoding in ["jsonParsed", "json"] {
        let of: Vec<_> = sizes.iter().filter(|s| s.0 == encoding).collect();
        let view: usize = of.iter().map(|s| s.1).sum();
        let text: usize = of.iter().map(|s| s.2).sum();
        println!(
            "{encoding}: {} transactions, stored view {} bytes on average, JSON text {} bytes ({:.1}%)",
            of.len(),
            view / of.len(),
            text / of.len(),
            100.0 * view as f64 / text as f64
        );
        assert!(view < text, "the view is smaller than the JSON it keeps");
    }
}

#[test]
fn a_cut_or_altered_view_is_refused_not_misread() {
    let (_, json) = fixtures().remove(0);
    let bytes = stored::encode(&json).unwrap();
    for cut in [1, bytes.len() / 2, bytes.len() - 1] {
        assert!(stored::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(stored::decode(&longer).is_err(), "trailing byte");
    let mut other = bytes;
    other[0] = stored::FORMAT + 1;
    assert!(stored::decode(&other).is_err(), "another format");
}
