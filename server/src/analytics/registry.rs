//! The program registry shipped in the repo (`programs.json`): well-known
//! Solana programs and their names, so a flow to the Token program or
//! Jupiter reads as such. An account's own labels and watchlist come with
//! accounts; [`Namer`] is the seam they plug into (they win over the
//! registry).

use std::{collections::HashMap, sync::OnceLock};

use serde::Deserialize;

/// One registry entry.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Program {
    pub address: String,
    pub name: String,
    /// system, token, dex, aggregator, …
    pub category: String,
    /// Where the address was checked.
    pub source: String,
}

const PROGRAMS: &str = include_str!("programs.json");

/// The registry, by address.
pub fn programs() -> &'static HashMap<String, Program> {
    static REGISTRY: OnceLock<HashMap<String, Program>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let list: Vec<Program> = serde_json::from_str(PROGRAMS).unwrap_or_else(|e| {
            tracing::error!(error = %e, "programs.json does not parse; flows name no program");
            Vec::new()
        });
        list.into_iter().map(|p| (p.address.clone(), p)).collect()
    })
}

/// A node's name and category.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub name: Option<String>,
    pub category: String,
}

/// Names counterparties: the account's labels (none yet), then the
/// program registry, else external.
#[derive(Clone, Debug, Default)]
pub struct Namer {
    /// address → (label, category), from the account (empty until accounts).
    pub labels: HashMap<String, (String, String)>,
}

impl Namer {
    pub fn name(&self, address: &str) -> Named {
        if let Some((label, category)) = self.labels.get(address) {
            return Named {
                name: Some(label.clone()),
                category: category.clone(),
            };
        }
        match programs().get(address) {
            Some(p) => Named {
                name: Some(p.name.clone()),
                category: p.category.clone(),
            },
            // Programs the ledger's decoders know (ledger::protocols) that
            // this list does not name yet.
            None => match crate::ledger::protocols::lookup(address) {
                Some(p) => Named {
                    name: Some(p.name.to_owned()),
                    category: p.kind.as_str().to_owned(),
                },
                None => Named {
                    name: None,
                    category: "external".to_owned(),
                },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_parses_and_is_a_public_key() {
        let list: Vec<Program> = serde_json::from_str(PROGRAMS).unwrap();
        assert!(list.len() >= 15);
        assert_eq!(programs().len(), list.len(), "no address twice");
        for p in &list {
            let bytes = bs58::decode(&p.address).into_vec().unwrap();
            assert_eq!(bytes.len(), 32, "{}", p.address);
            assert!(!p.name.is_empty() && !p.category.is_empty() && !p.source.is_empty());
        }
        let namer = Namer::default();
        assert_eq!(
            namer
                .name("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
                .name
                .as_deref(),
            Some("Token Program")
        );
        assert_eq!(
            namer
                .name("71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6")
                .category,
            "external"
        );
    }
}
