//! Links to a block explorer for signatures and addresses: the one place
//! that knows the explorer's URL shapes, used by the portal pages and by
//! the server's share page and report section, so every page links alike.
//!
//! The explorer is Solana Explorer, the Solana Foundation's own
//! (<https://explorer.solana.com>): `/tx/{signature}` and
//! `/address/{address}` (a mint's address opens its token page there).
//! A link is made only for text that is base58 of a plausible length, so
//! nothing a label or a stored string carries can shape the URL.

/// The explorer's origin.
pub const EXPLORER: &str = "https://explorer.solana.com";

/// Base58 (Bitcoin alphabet: no `0`, `O`, `I`, `l`) of `min..=max` characters.
fn base58(text: &str, min: usize, max: usize) -> bool {
    (min..=max).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() && !matches!(b, b'0' | b'O' | b'I' | b'l'))
}

/// The explorer page of a transaction; `None` for text that is no
/// signature (64 bytes are 87 or 88 base58 characters).
pub fn tx_url(signature: &str) -> Option<String> {
    base58(signature, 64, 88).then(|| format!("{EXPLORER}/tx/{signature}"))
}

/// The explorer page of an account (a wallet, a program, a mint); `None`
/// for text that is no address (32 bytes are 32 to 44 base58
/// characters), such as the ledger's `sol` for native SOL.
pub fn address_url(address: &str) -> Option<String> {
    base58(address, 32, 44).then(|| format!("{EXPLORER}/address/{address}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_and_addresses_link_to_their_explorer_pages() {
        let usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
        assert_eq!(
            address_url(usdc).as_deref(),
            Some(
                "https://explorer.solana.com/address/EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
            )
        );
        let sig = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";
        assert_eq!(
            tx_url(sig).as_deref(),
            Some(format!("https://explorer.solana.com/tx/{sig}").as_str())
        );
    }

    #[test]
    fn text_that_is_no_base58_key_gets_no_link() {
        for bad in [
            "sol",
            "",
            "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v/../x",
            "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1\"",
            "0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
            "javascript:alert(1)aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert_eq!(address_url(bad), None, "{bad}");
            assert_eq!(tx_url(bad), None, "{bad}");
        }
    }
}
