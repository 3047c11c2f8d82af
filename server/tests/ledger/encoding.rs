//! The `json` encoding reads like `jsonParsed`: each recorded transaction,
//! re-encoded as `json`, must give the same transaction view and legs.

use server::ledger::{self, TxView};

use crate::{encoding_support::to_json_encoding, fixtures, wallets};

#[test]
fn both_encodings_give_the_same_legs() {
    for (name, parsed) in fixtures() {
        let from_parsed = TxView::parse(&parsed).unwrap();
        let from_json = TxView::parse(&to_json_encoding(&parsed))
            .unwrap_or_else(|e| panic!("{name} (json encoding): {e}"));
        assert_eq!(from_json.keys, from_parsed.keys, "{name}");
        assert_eq!(from_json.signers, from_parsed.signers, "{name}");
        for wallet in wallets(&from_parsed) {
            assert_eq!(
                ledger::legs(&from_json, &wallet),
                ledger::legs(&from_parsed, &wallet),
                "{name} for {wallet}"
            );
        }
    }
}
