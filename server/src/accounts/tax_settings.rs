//! An account's defaults for the tax section of `get_report` and
//! `get_positions` (issue 24, item 5: "defaults from the account's
//! settings, else `us`, `USD`"): the jurisdiction, the reporting currency
//! and how a transfer to or from an unlabelled address is read. One row per
//! account; a call's own arguments always win over it. Read on every call,
//! like labels, so a change shows on the next read. An account that never
//! set them reads exactly as before (no row, no tax section unless asked).

use super::{AccountId, AccountsError};
use crate::{
    basis::{books::UnlabelledTransfers, jurisdiction::Jurisdiction},
    store::Store,
    values::fx::Currency,
};

/// What an account stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaxSettings {
    pub jurisdiction: Jurisdiction,
    /// `None`: the jurisdiction's own currency.
    pub currency: Option<Currency>,
    /// `None`: the core's default ([`UnlabelledTransfers::AtMarketValue`]).
    pub unlabelled: Option<UnlabelledTransfers>,
}

/// The names `unlabelled` takes, as the schema and the store write them.
pub fn unlabelled_name(u: UnlabelledTransfers) -> &'static str {
    match u {
        UnlabelledTransfers::AtMarketValue => "at_market_value",
        UnlabelledTransfers::OutOfBooks => "out_of_books",
    }
}

/// The treatment named `text`, `None` when it names none.
pub fn parse_unlabelled(text: &str) -> Option<UnlabelledTransfers> {
    [
        UnlabelledTransfers::AtMarketValue,
        UnlabelledTransfers::OutOfBooks,
    ]
    .into_iter()
    .find(|u| unlabelled_name(*u) == text.trim())
}

/// The account's defaults; `None` when it has set none.
pub async fn of(store: &Store, account: &AccountId) -> Result<Option<TaxSettings>, AccountsError> {
    let Some((jurisdiction, currency, unlabelled)) =
        store.tax_settings_of(account.as_str()).await?
    else {
        return Ok(None);
    };
    let corrupt = |what: &str| AccountsError::Corrupt(format!("tax setting {what}"));
    Ok(Some(TaxSettings {
        jurisdiction: Jurisdiction::parse(&jurisdiction)
            .ok_or_else(|| corrupt(&format!("jurisdiction {jurisdiction:?}")))?,
        currency: currency
            .map(|c| Currency::parse(&c).ok_or_else(|| corrupt(&format!("currency {c:?}"))))
            .transpose()?,
        unlabelled: unlabelled
            .map(|u| parse_unlabelled(&u).ok_or_else(|| corrupt(&format!("unlabelled {u:?}"))))
            .transpose()?,
    }))
}

/// Store `settings` for `account`, or forget them (`None`).
pub async fn set(
    store: &Store,
    now_ms: i64,
    account: &AccountId,
    settings: Option<TaxSettings>,
) -> Result<(), AccountsError> {
    match settings {
        Some(s) => {
            store
                .set_tax_settings(
                    account.as_str(),
                    s.jurisdiction.as_str(),
                    s.currency.map(Currency::code),
                    s.unlabelled.map(unlabelled_name),
                    now_ms,
                )
                .await?
        }
        None => {
            store.delete_tax_settings(account.as_str()).await?;
        }
    }
    Ok(())
}
