//! Address labels: an account's own names for counterparty addresses, each
//! with a category from one fixed list, which `get_flows` shows on the
//! graph's nodes (they win over the program registry). The list is fixed
//! so a graph's categories stay comparable across accounts and a client
//! can colour them; labels are private to their account.

use std::{collections::HashMap, fmt};

use super::{AccountId, AccountsError, check_label};
use crate::{solana::WalletAddress, store::Store};

/// The longest address label.
pub const ADDRESS_LABEL_MAX: usize = 64;

/// What an address is to the account. `external` is the default, as it is
/// for an unlabelled counterparty in `get_flows`; the other names match the
/// program registry's categories where they overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AddressCategory {
    /// Another wallet of the account holder.
    OwnWallet,
    /// A centralised exchange's deposit or hot wallet.
    Exchange,
    Dex,
    Aggregator,
    Staking,
    Nft,
    /// A business being paid or paying.
    Merchant,
    /// Anyone else.
    #[default]
    External,
}

impl AddressCategory {
    /// Every category, in the order help texts list them.
    pub const ALL: [AddressCategory; 8] = [
        AddressCategory::OwnWallet,
        AddressCategory::Exchange,
        AddressCategory::Dex,
        AddressCategory::Aggregator,
        AddressCategory::Staking,
        AddressCategory::Nft,
        AddressCategory::Merchant,
        AddressCategory::External,
    ];

    pub fn parse(input: &str) -> Result<Self, AccountsError> {
        let input = input.trim();
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == input)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|c| c.as_str()).collect();
                AccountsError::invalid("category", format!("one of {}", names.join(", ")))
            })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AddressCategory::OwnWallet => "own_wallet",
            AddressCategory::Exchange => "exchange",
            AddressCategory::Dex => "dex",
            AddressCategory::Aggregator => "aggregator",
            AddressCategory::Staking => "staking",
            AddressCategory::Nft => "nft",
            AddressCategory::Merchant => "merchant",
            AddressCategory::External => "external",
        }
    }
}

impl fmt::Display for AddressCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Name `address` for `account`: `label` (at most [`ADDRESS_LABEL_MAX`]
/// characters) and `category`. An empty label removes the name. A new
/// address is refused once the account holds `max_labels`
/// (`quota.labels_per_account`); relabelling one it holds never is.
pub async fn set_address_label(
    store: &Store,
    now_ms: i64,
    account: &AccountId,
    address: WalletAddress,
    label: &str,
    category: AddressCategory,
    max_labels: u32,
) -> Result<(), AccountsError> {
    let label = check_label("label", label, ADDRESS_LABEL_MAX)?;
    if label.is_empty() {
        store
            .delete_address_label(account.as_str(), address.as_str())
            .await?;
    } else if !store
        .upsert_address_label(
            account.as_str(),
            address.as_str(),
            &label,
            category.as_str(),
            now_ms,
            max_labels,
        )
        .await?
    {
        return Err(AccountsError::QuotaReached {
            what: "address labels",
            limit: max_labels,
            setting: "quota.labels_per_account",
            remedy: "remove one first (set_address_label with an empty label)",
        });
    }
    Ok(())
}

/// The account's labels: address -> (label, category).
pub async fn address_labels(
    store: &Store,
    account: &AccountId,
) -> Result<HashMap<String, (String, AddressCategory)>, AccountsError> {
    Ok(store
        .address_labels_of(account.as_str())
        .await?
        .into_iter()
        .map(|(address, label, category)| {
            // A category dropped from the list reads as the default rather
            // than failing the whole graph.
            let category = AddressCategory::parse(&category).unwrap_or_default();
            (address, (label, category))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_category_parses_back() {
        for c in AddressCategory::ALL {
            assert_eq!(AddressCategory::parse(c.as_str()).unwrap(), c);
        }
        assert_eq!(AddressCategory::default(), AddressCategory::External);
    }

    #[test]
    fn an_unknown_category_is_refused_with_the_list() {
        let err = AddressCategory::parse("friend").unwrap_err().to_string();
        assert!(
            err.starts_with("category: one of own_wallet, exchange"),
            "{err}"
        );
        // The flow graph's own node categories are not labels.
        assert!(AddressCategory::parse("self").is_err());
        assert!(AddressCategory::parse("other").is_err());
    }
}
