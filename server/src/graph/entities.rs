//! The entity registry shipped in the repository (`entities.json`):
//! exchanges, bridges and programs whose addresses a public source names,
//! each with the URL of that source and the date it was checked, so a node
//! that names an entity also says who says so. An entry is a citation, not
//! a finding of ours; docs/follow-the-money.md says how to add one.

use std::{collections::HashMap, sync::OnceLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One registry entry, as a node carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Entity {
    pub address: String,
    pub name: String,
    /// exchange, bridge or program.
    pub category: String,
    /// Where the address is named as this entity.
    pub source_url: String,
    /// The date (YYYY-MM-DD) the source was last checked.
    pub checked: String,
}

/// The categories an entry may have.
pub const CATEGORIES: [&str; 3] = ["exchange", "bridge", "program"];

const ENTITIES: &str = include_str!("entities.json");

/// The registry, by address.
pub fn entities() -> &'static HashMap<String, Entity> {
    static REGISTRY: OnceLock<HashMap<String, Entity>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let list: Vec<Entity> = serde_json::from_str(ENTITIES).unwrap_or_else(|e| {
            tracing::error!(error = %e, "entities.json does not parse; nodes name no entity");
            Vec::new()
        });
        list.into_iter().map(|e| (e.address.clone(), e)).collect()
    })
}

pub fn entity(address: &str) -> Option<&'static Entity> {
    entities().get(address)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_a_public_key_with_a_citation_and_a_date() {
        let list: Vec<Entity> = serde_json::from_str(ENTITIES).unwrap();
        assert!(!list.is_empty());
        assert_eq!(entities().len(), list.len(), "no address twice");
        for e in &list {
            let bytes = bs58::decode(&e.address).into_vec().unwrap();
            assert_eq!(bytes.len(), 32, "{}", e.address);
            assert!(CATEGORIES.contains(&e.category.as_str()), "{}", e.category);
            assert!(e.source_url.starts_with("https://"), "{}", e.source_url);
            assert!(
                chrono::NaiveDate::parse_from_str(&e.checked, "%Y-%m-%d").is_ok(),
                "{}",
                e.checked
            );
            assert!(!e.name.is_empty());
        }
    }
}
