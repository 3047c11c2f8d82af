//! An account's defaults for the tax section of `get_report` and
//! `get_positions` (issue 24, item 5: "defaults from the account's
//! settings, else `us`, `USD`"): the jurisdiction, the reporting currency
//! and how a transfer to or from an unlabelled address is read. One row per
//! account; a call's own arguments always win over it. Read on every call,
//! like labels, so a change shows on the next read. An account that never
//! set them reads exactly as before (no row, no tax section unless asked).
//!
//! Beside them, for the portal's settings page (`/settings`): the method
//! the tax section and the report view use when a call names none, and the
//! locale the portal writes numbers in (issue 23, item 2: "with a
//! setting"; without one, the request's `Accept-Language`).

use super::{AccountId, AccountsError};
use crate::{
    basis::{Method, books::UnlabelledTransfers, jurisdiction::Jurisdiction},
    store::{Store, TaxSettingsRow},
    values::{format::Locale, fx::Currency},
};

/// What an account stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaxSettings {
    pub jurisdiction: Jurisdiction,
    /// `None`: the jurisdiction's own currency.
    pub currency: Option<Currency>,
    /// `None`: the core's default ([`UnlabelledTransfers::AtMarketValue`]).
    pub unlabelled: Option<UnlabelledTransfers>,
    /// `None`: the jurisdiction's own. Stored only when the jurisdiction
    /// accepts it (checked where it is set).
    pub method: Option<Method>,
    /// `None`: the request's `Accept-Language`.
    pub locale: Option<Locale>,
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
    let Some(TaxSettingsRow {
        jurisdiction,
        currency,
        unlabelled,
        method,
        locale,
    }) = store.tax_settings_of(account.as_str()).await?
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
        method: method
            .map(|m| Method::parse(&m).ok_or_else(|| corrupt(&format!("method {m:?}"))))
            .transpose()?,
        locale: locale
            .map(|l| Locale::parse(&l).ok_or_else(|| corrupt(&format!("locale {l:?}"))))
            .transpose()?,
    }))
}

/// The locale `account` set, if any (the portal's pages then write numbers
/// in it whatever the browser asks).
pub async fn locale_of(
    store: &Store,
    account: &AccountId,
) -> Result<Option<Locale>, AccountsError> {
    Ok(of(store, account).await?.and_then(|s| s.locale))
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
                    &TaxSettingsRow {
                        jurisdiction: s.jurisdiction.as_str().to_owned(),
                        currency: s.currency.map(|c| c.code().to_owned()),
                        unlabelled: s.unlabelled.map(|u| unlabelled_name(u).to_owned()),
                        method: s.method.map(|m| m.as_str().to_owned()),
                        locale: s.locale.map(|l| l.tag().to_owned()),
                    },
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
