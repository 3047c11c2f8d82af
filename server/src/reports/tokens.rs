//! Token symbols for the reports people import elsewhere (Koinly,
//! CoinTracker, Form 8949's description, the PDF): a short list of
//! well-known Solana mints shipped in the repository (`tokens.json`, its
//! source stated in the file and in docs/reports.md). The ledger never
//! guesses a symbol: a mint not on the list is written as its address,
//! which every importer accepts as a custom asset.

use std::{collections::HashMap, sync::LazyLock};

use serde::Deserialize;

use crate::ledger::SOL;

#[derive(Deserialize)]
struct TokenList {
    tokens: Vec<Token>,
}

#[derive(Deserialize)]
struct Token {
    mint: String,
    symbol: String,
}

static SYMBOLS: LazyLock<HashMap<String, String>> = LazyLock::new(|| {
    serde_json::from_str::<TokenList>(include_str!("tokens.json"))
        .map(|list| {
            list.tokens
                .into_iter()
                .map(|t| (t.mint, t.symbol))
                .collect()
        })
        .unwrap_or_else(|err| {
            tracing::error!(error = %err, "the shipped token list does not parse");
            HashMap::new()
        })
});

/// The symbol of `mint` ("sol" is SOL); an unknown mint is its address.
pub fn symbol(mint: &str) -> &str {
    if mint == SOL {
        return "SOL";
    }
    SYMBOLS.get(mint).map_or(mint, String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_mints_have_their_symbol_and_unknown_ones_their_address() {
        assert_eq!(symbol("sol"), "SOL");
        assert_eq!(
            symbol("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
            "USDC"
        );
        assert_eq!(
            symbol("DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263"),
            "BONK"
        );
        let unknown = "4kLALtynrmd6pU2LkGXZCmUaMDfsnVixs7SkLjPKNJQG";
        assert_eq!(symbol(unknown), unknown);
        assert!(SYMBOLS.len() >= 16, "the whole list parsed");
    }
}
