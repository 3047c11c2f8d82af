//! The account tools and their REST twins: `list_wallets`, `add_wallet`,
//! `set_address_label` (and `DELETE /v1/wallets/{address}`, which has no
//! tool). Each needs an account: an anonymous caller or the admin key is
//! `unauthenticated`. The MCP tools in `mcp::tools` and the routes in `v1`
//! are adapters over these functions; the watchlist and label rules
//! themselves are in [`super::watchlist`] and [`super::labels`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Action, AddressCategory, Principal, WatchedWallet, labels, tax_settings, watchlist};
use crate::{error::AppError, solana::WalletAddress, store::Store, values::rfc3339};

/// `list_wallets` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListWalletsArgs {}

/// The arguments of `add_wallet` and the body of `POST /v1/wallets`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddWalletArgs {
    /// The wallet's base58 public key.
    pub address: WalletAddress,
    /// A short label, at most 128 characters.
    #[serde(default)]
    #[schemars(length(max = 128))]
    pub label: Option<String>,
}

/// The arguments of `set_address_label` and the body of `POST /v1/labels`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAddressLabelArgs {
    /// The address to name: a base58 public key.
    pub address: WalletAddress,
    /// What to call it, at most 64 characters; empty removes the label.
    #[schemars(length(max = 64))]
    pub label: String,
    /// One of the address categories (exchange, own_wallet, external, ...); default external.
    #[serde(default, deserialize_with = "optional_category")]
    #[schemars(with = "Option<CategoryName>", extend("default" = "external"))]
    pub category: Option<AddressCategory>,
}

/// The category names, as the schema states them.
struct CategoryName;

impl JsonSchema for CategoryName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AddressCategory".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "enum": AddressCategory::ALL.map(AddressCategory::as_str),
        })
    }
}

fn optional_category<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<AddressCategory>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => AddressCategory::parse(&text)
            .map(Some)
            .map_err(|e| serde::de::Error::custom(e.to_string())),
    }
}

/// A scan, as a watched wallet shows its newest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LastScanView {
    /// The job, when your account started it (get_job reads it); another
    /// caller's job id is not shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// running, completed, partial, failed or cancelled.
    pub status: String,
    /// RFC 3339; absent while it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

/// One watched wallet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WalletView {
    pub address: String,
    /// Empty when none was given.
    pub label: String,
    /// RFC 3339.
    pub added_at: String,
    /// The wallet's newest scan; null when it was never scanned.
    pub last_scan: Option<LastScanView>,
    /// Legs in the wallet's ledger.
    pub ledger_legs: u64,
}

/// `w` as `account` sees it: the job id of its newest scan only when the
/// account started that scan.
fn view(account: &super::AccountId, w: WatchedWallet) -> WalletView {
    WalletView {
        address: w.address.to_string(),
        label: w.label,
        added_at: rfc3339(w.added_at),
        last_scan: w.last_scan.map(|s| {
            let own = s.account_id.as_deref() == Some(account.as_str());
            LastScanView {
                job_id: own.then_some(s.job_id),
                status: s.status,
                finished_at: s.finished_at.map(rfc3339),
            }
        }),
        ledger_legs: w.ledger_legs,
    }
}

/// The watchlist.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Wallets {
    /// Oldest first.
    pub wallets: Vec<WalletView>,
}

/// An address's name, as `set_address_label` left it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AddressLabel {
    pub address: String,
    /// Empty when the label was removed.
    pub label: String,
    pub category: String,
    /// True when an empty label removed the name.
    pub removed: bool,
}

/// `list_wallets`.
pub async fn list_wallets(store: &Store, principal: &Principal) -> Result<Wallets, AppError> {
    let account = principal.require_account("list_wallets")?;
    principal.permit(Action::ReadAccount)?;
    let wallets = watchlist::list_wallets(store, &account.account_id).await?;
    Ok(Wallets {
        wallets: wallets
            .into_iter()
            .map(|w| view(&account.account_id, w))
            .collect(),
    })
}

/// `add_wallet`: watch a wallet (again: relabel it). Answers the wallet as
/// the list shows it.
pub async fn add_wallet(
    store: &Store,
    now_ms: i64,
    principal: &Principal,
    args: AddWalletArgs,
) -> Result<WalletView, AppError> {
    let account = principal.require_account("add_wallet")?;
    principal.permit(Action::KeepWatchlist)?;
    let label = args.label.unwrap_or_default();
    watchlist::add_wallet(
        store,
        now_ms,
        &account.account_id,
        args.address.clone(),
        &label,
    )
    .await?;
    let added = watchlist::list_wallets(store, &account.account_id)
        .await?
        .into_iter()
        .find(|w| w.address == args.address)
        .ok_or_else(|| AppError::internal("add_wallet", "the wallet vanished from the list"))?;
    Ok(view(&account.account_id, added))
}

/// Stop watching a wallet (`DELETE /v1/wallets/{address}`); not watching
/// it is `not_found`.
pub async fn remove_wallet(
    store: &Store,
    principal: &Principal,
    address: &WalletAddress,
) -> Result<(), AppError> {
    let account = principal.require_account("removing a watched wallet")?;
    principal.permit(Action::KeepWatchlist)?;
    if watchlist::remove_wallet(store, &account.account_id, address).await? {
        Ok(())
    } else {
        Err(AppError::not_found(
            "your account does not watch this wallet",
        ))
    }
}

/// `set_address_label`, within the account's `max_labels`
/// (`quota.labels_per_account`).
pub async fn set_address_label(
    store: &Store,
    now_ms: i64,
    principal: &Principal,
    args: SetAddressLabelArgs,
    max_labels: u32,
) -> Result<AddressLabel, AppError> {
    let account = principal.require_account("set_address_label")?;
    principal.permit(Action::KeepWatchlist)?;
    let category = args.category.unwrap_or_default();
    labels::set_address_label(
        store,
        now_ms,
        &account.account_id,
        args.address.clone(),
        &args.label,
        category,
        max_labels,
    )
    .await?;
    let label = args.label.trim().to_owned();
    Ok(AddressLabel {
        address: args.address.to_string(),
        removed: label.is_empty(),
        label,
        category: category.as_str().to_owned(),
    })
}

/// The body of `POST /v1/settings/tax` (no MCP tool: the tool list is the
/// contract's).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetTaxDefaultsArgs {
    /// us | uk | ca | de | au: the jurisdiction get_report (json) and
    /// get_positions use when a call names none; absent: remove the
    /// account's defaults (calls then read as without them).
    #[serde(default, deserialize_with = "crate::params::optional_jurisdiction")]
    #[schemars(with = "Option<crate::params::JurisdictionName>")]
    pub jurisdiction: Option<crate::basis::jurisdiction::Jurisdiction>,
    /// USD | GBP | EUR | CAD | AUD; default the jurisdiction's own.
    #[serde(default, deserialize_with = "crate::params::optional_currency")]
    #[schemars(with = "Option<crate::params::CurrencyName>")]
    pub currency: Option<crate::values::fx::Currency>,
    /// at_market_value | out_of_books: how a transfer to or from an address
    /// with no own_wallet, exchange or merchant label is read; default
    /// at_market_value (a send is a disposal, a receive an acquisition).
    #[serde(default, deserialize_with = "optional_unlabelled")]
    #[schemars(with = "Option<UnlabelledName>", extend("default" = "at_market_value"))]
    pub unlabelled: Option<crate::basis::books::UnlabelledTransfers>,
    /// fifo | lifo | hifo | average: the method the tax section uses when a
    /// call names none; default the jurisdiction's own. A method the
    /// jurisdiction does not accept is refused with its reason.
    #[serde(default, deserialize_with = "crate::params::optional_method")]
    #[schemars(with = "Option<crate::params::CostMethod>")]
    pub method: Option<crate::basis::Method>,
    /// en-US | en-GB | en-CA | en-AU | de-DE | fr-FR: the locale the portal
    /// writes numbers in (1,234.56 or 1.234,56); default the browser's
    /// Accept-Language.
    #[serde(default, deserialize_with = "crate::params::optional_locale")]
    #[schemars(with = "Option<crate::params::LocaleName>")]
    pub locale: Option<crate::values::format::Locale>,
}

/// The unlabelled-transfer treatments, as the schema states them.
struct UnlabelledName;

impl JsonSchema for UnlabelledName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "UnlabelledTransfers".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "enum": ["at_market_value", "out_of_books"],
        })
    }
}

fn optional_unlabelled<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<crate::basis::books::UnlabelledTransfers>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => tax_settings::parse_unlabelled(&text)
            .map(Some)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "{text:?} is none of at_market_value, out_of_books"
                ))
            }),
    }
}

/// The account's tax defaults as they stand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema, utoipa::ToSchema)]
pub struct TaxDefaults {
    /// Null when the account has none (removed).
    pub jurisdiction: Option<String>,
    /// The currency in effect with that jurisdiction; null with none.
    pub currency: Option<String>,
    /// at_market_value or out_of_books.
    pub unlabelled: String,
    /// The method stored; null: the jurisdiction's own.
    pub method: Option<String>,
    /// The locale stored (en-US, de-DE, ...); null: the browser's.
    pub locale: Option<String>,
}

/// `POST /v1/settings/tax`: store (or, with no jurisdiction, remove) the
/// account's defaults for the tax section.
pub async fn set_tax_defaults(
    store: &Store,
    now_ms: i64,
    principal: &Principal,
    args: SetTaxDefaultsArgs,
) -> Result<TaxDefaults, AppError> {
    let account = principal.require_account("setting tax defaults")?;
    principal.permit(Action::KeepWatchlist)?;
    save_tax_defaults(store, now_ms, &account.account_id, args).await
}

/// Check `args` and store them as `account`'s defaults: what
/// `POST /v1/settings/tax` does once the principal may, and what the
/// portal's settings page does for its signed-in account.
pub async fn save_tax_defaults(
    store: &Store,
    now_ms: i64,
    account: &crate::accounts::AccountId,
    args: SetTaxDefaultsArgs,
) -> Result<TaxDefaults, AppError> {
    let settings = match args.jurisdiction {
        Some(jurisdiction) => {
            if let Some(method) = args.method {
                jurisdiction
                    .matching(Some(method))
                    .map_err(|refused| AppError::invalid_params(format!("method: {refused}")))?;
            }
            // Germany's exemption limit is in euros (EStG §23 Abs. 3 S. 5),
            // so `de` is assessed in EUR only, as a call would be refused.
            if let Some(currency) = args.currency
                && jurisdiction == crate::basis::jurisdiction::Jurisdiction::De
                && currency != crate::values::fx::Currency::Eur
            {
                return Err(AppError::invalid_params(format!(
                    "currency: de is assessed in EUR only, not {}: the Freigrenze of EStG \
                     §23 Abs. 3 S. 5 (1,000 EUR from 2024) is in euros",
                    currency.code()
                )));
            }
            Some(tax_settings::TaxSettings {
                jurisdiction,
                currency: args.currency,
                unlabelled: args.unlabelled,
                method: args.method,
                locale: args.locale,
            })
        }
        None if args.currency.is_some()
            || args.unlabelled.is_some()
            || args.method.is_some()
            || args.locale.is_some() =>
        {
            return Err(AppError::invalid_params(
                "jurisdiction: name one (us, uk, ca, de, au) with currency, unlabelled, method \
                 or locale; no jurisdiction at all removes the defaults",
            ));
        }
        None => None,
    };
    tax_settings::set(store, now_ms, account, settings).await?;
    Ok(TaxDefaults::of(settings))
}

/// The account's tax defaults as they stand.
pub async fn tax_defaults(store: &Store, principal: &Principal) -> Result<TaxDefaults, AppError> {
    let account = principal.require_account("reading tax defaults")?;
    principal.permit(Action::ReadAccount)?;
    Ok(TaxDefaults::of(
        tax_settings::of(store, &account.account_id).await?,
    ))
}

impl TaxDefaults {
    fn of(settings: Option<tax_settings::TaxSettings>) -> Self {
        TaxDefaults {
            jurisdiction: settings.map(|s| s.jurisdiction.as_str().to_owned()),
            currency: settings.map(|s| {
                s.currency
                    .unwrap_or(s.jurisdiction.currency())
                    .code()
                    .to_owned()
            }),
            unlabelled: tax_settings::unlabelled_name(
                settings.and_then(|s| s.unlabelled).unwrap_or_default(),
            )
            .to_owned(),
            method: settings
                .and_then(|s| s.method)
                .map(|m| m.as_str().to_owned()),
            locale: settings.and_then(|s| s.locale).map(|l| l.tag().to_owned()),
        }
    }
}
