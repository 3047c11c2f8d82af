//! The `tax` section of `get_report` and `get_positions`: the taxpayer's
//! books (ledger-core `basis::books`) over the wallets asked for, under one
//! jurisdiction's rules (`basis::jurisdiction`), in one currency, by tax
//! year. docs/reports.md is the long form.
//!
//! Everything the core needs and the core cannot read is gathered here:
//! - **who the taxpayer is**: the wallets of the call, plus, for a signed-in
//!   account, its watched wallets and the addresses it labels `own_wallet`.
//!   A transfer whose counterparty is one of them is between own wallets;
//!   both sides carry the same signature, which the books pair exactly into
//!   a move (no gain, the lots keep their dates and bases). An address the
//!   account labels `exchange` or `merchant` makes a transfer to or from an
//!   exchange (out of and into the books at basis) or a payment (a
//!   disposal). Any other transfer is unlabelled: at market value, the
//!   default `basis::books::UnlabelledTransfers` documents, and listed with
//!   its totals so it can be labelled; labels are read on every call, so a
//!   new label changes the next report.
//! - **the currency**: values are USD at the legs' times; any other
//!   currency goes through the ECB's daily reference rates
//!   ([`crate::prices::ecb`]), each event at its civil date in the
//!   jurisdiction's zone. A rate the ECB cannot give fails the call with
//!   `unavailable`, never a zero or a guessed rate.
//!
//! Nothing here knows of HTTP or MCP: both surfaces hand in the parsed
//! [`TaxChoice`].

use std::collections::HashSet;

use chrono::NaiveDate;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    accounts::{AccountId, labels::AddressCategory, tax_settings::TaxSettings},
    analytics::Leg,
    basis::{
        self, EventKind, LegInput, Method,
        books::{Counterparty, Holder, Transfer, UnlabelledTransfers, WalletEvent},
        jurisdiction::{self, Assessment, Jurisdiction, Matching, TaxYear, Taxpayer},
    },
    error::AppError,
    ledger::OperationType,
    params::TaxYearArg,
    prices::Prices,
    store::Store,
    values::{fx::Currency, rfc3339},
};

/// The jurisdiction, currency and tax year a call asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaxChoice {
    pub jurisdiction: Jurisdiction,
    pub currency: Currency,
    /// Only this tax year's summary and rows; `None`: every year.
    pub tax_year: Option<TaxYear>,
    /// The method the call named; `None`: the jurisdiction's own.
    pub method: Option<Method>,
    /// How a transfer with an unlabelled address is read: the account's
    /// setting, else the core's default (at market value).
    pub unlabelled: UnlabelledTransfers,
}

impl TaxChoice {
    /// `None` when the call named none of `jurisdiction`, `currency` and
    /// `tax_year`: its answer is then exactly what it was before these
    /// arguments existed. Otherwise the jurisdiction (default `us`), the
    /// currency (default the jurisdiction's own) and the year checked
    /// against the jurisdiction, and the method against its rules: a method
    /// the jurisdiction does not accept is refused with its reason.
    ///
    /// `settings` are the signed-in account's defaults (docs/accounts.md,
    /// "Tax defaults"): with none of the three arguments they alone ask for
    /// the section, in their jurisdiction and currency, and a method their
    /// jurisdiction does not accept (the report's `fifo` in the UK) gives
    /// way to the jurisdiction's own instead of failing a call that named
    /// no tax argument; with arguments, they fill the jurisdiction the call
    /// left out, and the currency and method when the jurisdiction is
    /// theirs. Their unlabelled-transfer treatment holds either way. No settings: exactly
    /// as before.
    pub fn from_args(
        jurisdiction: Option<Jurisdiction>,
        currency: Option<Currency>,
        tax_year: Option<TaxYearArg>,
        method: Option<Method>,
        settings: Option<TaxSettings>,
    ) -> Result<Option<Self>, AppError> {
        let unlabelled = settings.and_then(|s| s.unlabelled).unwrap_or_default();
        if jurisdiction.is_none() && currency.is_none() && tax_year.is_none() {
            let Some(settings) = settings else {
                return Ok(None);
            };
            let jurisdiction = settings.jurisdiction;
            let method = method.or(settings.method);
            return Ok(Some(Self {
                jurisdiction,
                currency: settings.currency.unwrap_or(jurisdiction.currency()),
                tax_year: None,
                method: method.filter(|_| jurisdiction.matching(method).is_ok()),
                unlabelled,
            }));
        }
        let jurisdiction = jurisdiction
            .or(settings.map(|s| s.jurisdiction))
            .unwrap_or_default();
        let stored_currency = settings
            .filter(|s| s.jurisdiction == jurisdiction)
            .and_then(|s| s.currency);
        // The stored method goes with the stored jurisdiction (it was
        // checked against it when saved).
        let method = method.or(settings
            .filter(|s| s.jurisdiction == jurisdiction)
            .and_then(|s| s.method));
        let tax_year = tax_year
            .map(|y| y.for_jurisdiction(jurisdiction))
            .transpose()
            .map_err(AppError::invalid_params)?;
        jurisdiction
            .matching(method)
            .map_err(|refused| AppError::invalid_params(format!("method: {refused}")))?;
        let currency = currency
            .or(stored_currency)
            .unwrap_or(jurisdiction.currency());
        // Germany's Freigrenze (EStG §23 Abs. 3 S. 5: 1,000 EUR from 2024)
        // is compared with the year's gain in euros; a gain converted to
        // another currency would be compared with 1,000 of that currency,
        // so `de` is assessed in EUR only. (The other jurisdictions' summaries
        // hold no fixed amount: no UK annual exempt amount is applied.)
        if jurisdiction == Jurisdiction::De && currency != Currency::Eur {
            return Err(AppError::invalid_params(format!(
                "currency: de is assessed in EUR only, not {}: the Freigrenze of EStG §23 \
                 Abs. 3 S. 5 (1,000 EUR from 2024) is in euros",
                currency.code()
            )));
        }
        Ok(Some(Self {
            jurisdiction,
            currency,
            tax_year,
            method,
            unlabelled,
        }))
    }
}

/// The tax arguments of `get_report` and `get_positions`. None given: the
/// answer is as without them; any given: the json report, the PDF (and
/// `get_positions`) gain a `tax` section; the CSV formats refuse them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct TaxArgs {
    /// us | uk | ca | de | au: whose rules, currency and tax year the tax
    /// section follows; default us when currency or tax_year is given.
    #[serde(default, deserialize_with = "crate::params::optional_jurisdiction")]
    #[schemars(with = "Option<crate::params::JurisdictionName>")]
    pub jurisdiction: Option<Jurisdiction>,
    /// USD | GBP | EUR | CAD | AUD: the tax section's currency; default the
    /// jurisdiction's own. Converted at the ECB's daily reference rates.
    #[serde(default, deserialize_with = "crate::params::optional_currency")]
    #[schemars(with = "Option<crate::params::CurrencyName>")]
    pub currency: Option<Currency>,
    /// Only this tax year: 2024 (us, ca, de) or 2024-25 (uk from 6 April,
    /// au from 1 July); default every year.
    #[serde(default, deserialize_with = "crate::params::optional_tax_year")]
    #[schemars(with = "Option<crate::params::TaxYearName>")]
    pub tax_year: Option<TaxYearArg>,
}

impl TaxArgs {
    /// The checked choice (`None`: no tax argument), `method` being the
    /// one the call named.
    pub fn choice(
        &self,
        method: Option<Method>,
        settings: Option<TaxSettings>,
    ) -> Result<Option<TaxChoice>, AppError> {
        TaxChoice::from_args(
            self.jurisdiction,
            self.currency,
            self.tax_year,
            method,
            settings,
        )
    }

    /// Whether the call named none of the three.
    pub fn is_empty(&self) -> bool {
        self.jurisdiction.is_none() && self.currency.is_none() && self.tax_year.is_none()
    }
}

/// The signed-in account's tax defaults; an anonymous caller has none.
pub async fn settings_of(
    store: &Store,
    account: Option<&AccountId>,
) -> Result<Option<TaxSettings>, AppError> {
    match account {
        Some(account) => Ok(crate::accounts::tax_settings::of(store, account).await?),
        None => Ok(None),
    }
}

/// One wallet's legs as a report or `get_positions` read them, with each
/// leg's USD value at its time (absolute; `None` when unpriced).
pub struct WalletLegs<'a> {
    pub wallet: &'a str,
    pub legs: &'a [Leg],
    pub values: &'a [Option<Decimal>],
}

/// What the account says about addresses, for the books.
#[derive(Clone, Debug, Default)]
pub struct Labels {
    own: HashSet<String>,
    exchange: HashSet<String>,
    merchant: HashSet<String>,
}

impl Labels {
    /// The account's watched wallets and `own_wallet` labels as its own,
    /// its `exchange` and `merchant` labels; an anonymous caller has none.
    /// A label wins over the watchlist, as it does on the graph.
    pub async fn of(store: &Store, account: Option<&AccountId>) -> Result<Self, AppError> {
        let mut labels = Labels::default();
        let Some(account) = account else {
            return Ok(labels);
        };
        for (address, _) in crate::accounts::watchlist::watched(store, account).await? {
            labels.own.insert(address);
        }
        for (address, (_, category)) in crate::accounts::address_labels(store, account).await? {
            labels.own.remove(&address);
            match category {
                AddressCategory::OwnWallet => labels.own.insert(address),
                AddressCategory::Exchange => labels.exchange.insert(address),
                AddressCategory::Merchant => labels.merchant.insert(address),
                // Other categories say what a program or a stranger is,
                // nothing about whose the units become: unlabelled.
                AddressCategory::Dex
                | AddressCategory::Aggregator
                | AddressCategory::Staking
                | AddressCategory::Nft
                | AddressCategory::External => false,
            };
        }
        Ok(labels)
    }

    /// The taxpayer's addresses the account names: its watched wallets and
    /// its `own_wallet` labels.
    pub fn own(&self) -> impl Iterator<Item = &str> {
        self.own.iter().map(String::as_str)
    }

    /// What the other side of `leg` is, with the call's own wallets as the
    /// taxpayer's.
    fn counterparty(&self, leg: &Leg, wallets: &HashSet<&str>) -> Counterparty {
        let addresses = || leg.counterparties.iter().map(|c| c.address.as_str());
        if addresses().any(|a| wallets.contains(a) || self.own.contains(a)) {
            Counterparty::OwnWallet
        } else if addresses().any(|a| self.exchange.contains(a)) {
            Counterparty::Exchange
        } else if addresses().any(|a| self.merchant.contains(a)) {
            Counterparty::Merchant
        } else {
            Counterparty::Unlabelled
        }
    }
}

/// The books' input: every wallet's events, a transfer's counterparty
/// attached (values in USD).
pub fn wallet_events(
    wallets: &[WalletLegs<'_>],
    labels: &Labels,
    exclude_spam: bool,
) -> Vec<WalletEvent> {
    let own: HashSet<&str> = wallets.iter().map(|w| w.wallet).collect();
    let mut out = Vec::new();
    for w in wallets {
        let mut inputs = Vec::with_capacity(w.legs.len());
        let mut origin = Vec::with_capacity(w.legs.len());
        for (leg, value) in w.legs.iter().zip(w.values) {
            let Some(operation_type) = OperationType::parse(&leg.operation_type) else {
                continue;
            };
            // A leg with no block time has no date for a tax year, a
            // holding period or a rate: left out, listed in `undated`.
            let Some(block_time) = leg.block_time else {
                continue;
            };
            inputs.push(LegInput {
                signature: leg.signature.clone(),
                index: leg.index,
                block_time,
                operation_type,
                mint: leg.mint.clone(),
                amount: leg.amount,
                decimals: u8::try_from(leg.decimals).unwrap_or(u8::MAX),
                usd_value: *value,
                position: leg.position.clone(),
            });
            origin.push((leg, operation_type));
        }
        for (event, at) in basis::events_from_legs_traced(&inputs, exclude_spam) {
            let (leg, operation_type) = origin[at];
            let is_transfer = matches!(
                operation_type,
                OperationType::TransferIn | OperationType::TransferOut
            ) && matches!(event.kind, EventKind::Acquire | EventKind::Dispose);
            let transfer = is_transfer.then(|| Transfer {
                signature: leg.signature.clone(),
                counterparty: labels.counterparty(leg, &own),
            });
            out.push(WalletEvent {
                wallet: w.wallet.to_owned(),
                event,
                transfer,
            });
        }
    }
    out
}

/// The civil dates `events` fall on in `zone`, first and last
/// ([`crate::prices::ecb::rates`] reaches back a week before the first,
/// so a weekend or holiday finds the last rate published).
fn date_span(events: &[WalletEvent], zone: jurisdiction::Zone) -> Option<(NaiveDate, NaiveDate)> {
    let dates = events.iter().filter_map(|e| zone.date(e.event.time));
    let first = dates.clone().min()?;
    let last = dates.max()?;
    Some((first, last))
}

/// Assess `events` (USD) for `choice`: convert when the currency is not
/// USD, run the jurisdiction, and shape the section.
pub async fn section(
    store: &Store,
    prices: &Prices,
    now_ms: i64,
    events: &[WalletEvent],
    choice: &TaxChoice,
) -> Result<TaxSection, AppError> {
    let (assessment, income) = assessment(store, prices, now_ms, events, choice).await?;
    let mut section = TaxSection::new(choice, &assessment);
    section.income = income;
    Ok(section)
}

/// One wallet's part of the taxpayer's books (`get_positions`): `events`
/// are every own wallet's, so a transfer between `wallet` and another of
/// them pairs into a move and the lots it brings keep their dates and
/// bases; the section then shows what is `wallet`'s: its rows, its moves
/// and transfers, the lots it holds (and the person's universal pools and
/// what is at an exchange, which its disposals draw on), and the year
/// figures of its rows alone. `others` are the other wallets read.
pub async fn wallet_section(
    store: &Store,
    prices: &Prices,
    now_ms: i64,
    events: &[WalletEvent],
    choice: &TaxChoice,
    wallet: &str,
    others: Vec<String>,
) -> Result<TaxSection, AppError> {
    let (assessment, mut income) = assessment(store, prices, now_ms, events, choice).await?;
    let part = wallet_part(assessment, wallet, choice.jurisdiction.zone());
    let mut section = TaxSection::new(choice, &part);
    income.retain(|i| i.wallet == wallet);
    section.income = income;
    section.other_wallets = others;
    Ok(section)
}

/// `a` restricted to what is `wallet`'s, the years summed again over its
/// rows (a per-person threshold, Germany's exemption limit, is then
/// compared with this wallet's figures alone: the person's are in a report
/// naming every wallet).
fn wallet_part(mut a: Assessment, wallet: &str, zone: jurisdiction::Zone) -> Assessment {
    a.rows.retain(|r| r.wallet == wallet);
    a.moves.retain(|m| m.from == wallet || m.to == wallet);
    a.transfers.retain(|t| t.wallet == wallet);
    a.holdings.retain(|h| match &h.holder {
        Holder::Wallet(w) => w == wallet,
        Holder::AllWallets | Holder::Exchange => true,
    });
    a.years = jurisdiction::summaries(a.jurisdiction, zone, &a.rows, &a.transfers);
    a
}

/// Run the books of `events` (USD) for `choice`, converted into its
/// currency; with them the income the events hold, by wallet, tax year and
/// asset, in that currency ([`income_by_year`]).
async fn assessment(
    store: &Store,
    prices: &Prices,
    now_ms: i64,
    events: &[WalletEvent],
    choice: &TaxChoice,
) -> Result<(Assessment, Vec<IncomeYearView>), AppError> {
    let taxpayer = Taxpayer::of(choice.jurisdiction);
    let converted;
    let input = if choice.currency == Currency::Usd {
        events
    } else {
        let rates = match date_span(events, taxpayer.zone) {
            Some(span) => crate::prices::ecb::rates(store, prices, span, now_ms)
                .await
                .map_err(rates_failed)?,
            None => Default::default(),
        };
        converted = jurisdiction::convert_to(
            taxpayer.zone,
            events,
            Currency::Usd,
            choice.currency,
            &rates,
        )
        .map_err(|e| rates_unavailable(&e.to_string()))?;
        &converted
    };
    let assessment = jurisdiction::assess_in(
        choice.jurisdiction,
        &taxpayer,
        input,
        choice.method,
        choice.unlabelled,
    )
    .map_err(|refused| AppError::invalid_params(format!("method: {refused}")))?;
    let income = income_by_year(input, choice);
    Ok((assessment, income))
}

/// The income among `events` (already in the section's currency): every
/// `income` event (a staking reward, MEV tip or lending interest,
/// `basis::EventKind::Income`)
/// summed by wallet, tax year (in the jurisdiction's own year and civil
/// time) and asset, its value the fair value at receipt converted at that
/// day's rate like every other value of the section. Each jurisdiction
/// taxes it as income in the year received (docs/cost-basis.md, "Staking
/// rewards and MEV tips are income": Rev. Rul. 2023-14, HMRC CRYPTO21200,
/// CRA 2024-1031821I7, § 22 Nr. 3 EStG, the ATO), so the year is that of
/// receipt. Only `choice.tax_year`'s when one was asked.
fn income_by_year(events: &[WalletEvent], choice: &TaxChoice) -> Vec<IncomeYearView> {
    #[derive(Default)]
    struct Sum {
        quantity: Decimal,
        value: Decimal,
        unpriced: u64,
    }
    let zone = choice.jurisdiction.zone();
    let wanted = choice.tax_year.map(|y| y.to_string());
    let mut sums: std::collections::BTreeMap<(String, String, String), Sum> =
        std::collections::BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e.event.kind == basis::EventKind::Income)
    {
        let year = choice
            .jurisdiction
            .tax_year_in(zone, e.event.time)
            .to_string();
        if wanted.as_deref().is_some_and(|w| w != year) {
            continue;
        }
        let sum = sums
            .entry((year, e.wallet.clone(), e.event.asset.clone()))
            .or_default();
        sum.quantity += e.event.quantity;
        match e.event.usd_value {
            Some(v) => sum.value += v,
            None => sum.unpriced += 1,
        }
    }
    sums.into_iter()
        .map(|((tax_year, wallet, asset), sum)| IncomeYearView {
            wallet,
            tax_year,
            asset,
            quantity: s(sum.quantity),
            value: s(sum.value),
            unpriced: sum.unpriced,
        })
        .collect()
}

/// A failure to get the rates: the store's own errors are internal (their
/// text never reaches the caller); the ECB's are `unavailable` with a fixed
/// message, the detail (which may name the configured URL) only logged.
fn rates_failed(e: crate::prices::PriceError) -> AppError {
    match e {
        crate::prices::PriceError::Store(e) => AppError::from(e),
        other => {
            tracing::warn!(error = %other, "ECB reference rates unavailable");
            AppError::new(
                crate::error::Code::Unavailable,
                "the reporting currency needs the ECB's reference rates, which are not \
                 available now; try again later, or ask for USD",
            )
        }
    }
}

fn rates_unavailable(why: &str) -> AppError {
    tracing::warn!(error = why, "reference rates unavailable");
    AppError::new(
        crate::error::Code::Unavailable,
        format!(
            "the reporting currency needs the ECB's reference rates, which are not available: \
             {why}; try again later, or ask for USD"
        ),
    )
}

/// A decimal as reports write money and quantities.
fn s(d: Decimal) -> String {
    d.normalize().to_string()
}

/// The report's `tax` section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TaxSection {
    /// us | uk | ca | de | au.
    pub jurisdiction: String,
    /// USD | GBP | EUR | CAD | AUD: every amount of this section.
    pub currency: String,
    /// Where values not in USD were converted: "ecb" (the European Central
    /// Bank's daily reference rates, through the euro), or "none".
    pub rates: String,
    /// The tax year asked for (`2024`, or `2024-25` in the UK and
    /// Australia); null: every year.
    pub tax_year: Option<String>,
    /// How disposals are matched: a lot method (fifo, lifo, hifo, lofo,
    /// average), share_matching (UK) or adjusted_cost_base (Canada).
    pub matching: String,
    /// Each tax year's figures in the jurisdiction's own terms, tagged by
    /// `jurisdiction` (docs/reports.md lists the fields of each): us
    /// short/long term; uk disposals, proceeds, allowable costs, gains and
    /// losses as on SA108; ca proceeds, ACB, outlays, gain and the taxable
    /// half; de gains within and after one year and the exemption limit; au
    /// gains with and without the discount. Amounts are decimal strings.
    pub years: Vec<serde_json::Value>,
    /// Realized rows, each with the rule that matched it.
    pub rows: Vec<TaxRowView>,
    /// Income received (staking rewards, MEV tips, lending interest: the
    /// books' income events; airdrops are acquisitions there) by tax year,
    /// wallet and asset, at its fair value at receipt in `currency`: taxed
    /// as income in the year received, not as a disposal (docs/reports.md).
    pub income: Vec<IncomeYearView>,
    /// Moves between the taxpayer's own wallets: no disposal.
    pub moves: Vec<MoveView>,
    /// Transfers to and from others (exchange, merchant, unlabelled).
    pub transfers: Vec<TransferView>,
    /// Unlabelled transfers by asset and direction, to be labelled.
    pub unlabelled: Vec<UnlabelledView>,
    /// What is held at the end, by holder.
    pub holdings: Vec<HoldingView>,
    /// Legs with no block time, left out of this section (no date for a
    /// tax year, a holding period or a rate).
    pub undated: UndatedView,
    /// `get_positions` for a signed-in account: the account's other wallets
    /// (watched, or labelled own_wallet, and scanned) read into these books,
    /// so a transfer with one of them is a move. The rows, holdings and
    /// years are then this wallet's part; absent when none was read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_wallets: Vec<String>,
    /// `years` as the core typed them, for the pages that write them in
    /// the reader's locale (the portal's report view); never serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub summaries: Vec<jurisdiction::YearSummary>,
}

/// The legs a tax section leaves out for want of a block time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UndatedView {
    pub count: u64,
    /// Their transactions' signatures, each once, in the order read.
    pub signatures: Vec<String>,
}

impl UndatedView {
    /// The legs of `wallets` with no block time.
    pub fn of(wallets: &[WalletLegs<'_>]) -> Self {
        let mut out = Self::default();
        for leg in wallets.iter().flat_map(|w| w.legs) {
            if leg.block_time.is_none() {
                out.count += 1;
                if !out.signatures.contains(&leg.signature) {
                    out.signatures.push(leg.signature.clone());
                }
            }
        }
        out
    }
}

/// Income of one asset received by one wallet in one tax year.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncomeYearView {
    pub wallet: String,
    /// `2024`, or `2024-25` (UK from 6 April, Australia from 1 July).
    pub tax_year: String,
    pub asset: String,
    /// Whole units received.
    pub quantity: String,
    /// Fair value at receipt of the priced part, in the section's currency.
    pub value: String,
    /// How many receipts had no price (their quantity is counted, their
    /// value is not).
    pub unpriced: u64,
}

/// One realized row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TaxRowView {
    pub wallet: String,
    pub tax_year: String,
    pub asset: String,
    pub quantity: String,
    /// RFC 3339, "pool" for a Section 104 or ACB pool, null when uncovered.
    pub acquired: Option<String>,
    pub disposed: String,
    /// Null when unpriced. Gross under share matching and the ACB.
    pub proceeds: Option<String>,
    /// Cost matched (allowable costs, including sale costs, under share
    /// matching and the ACB); null when unknown.
    pub cost: Option<String>,
    /// Sale costs included in `cost` (UK, Canada); "0" elsewhere.
    pub sale_costs: String,
    /// Before any exemption or discount; null when unknown.
    pub gain: Option<String>,
    /// same_day, bed_and_breakfast, section_104, acb, superficial_loss,
    /// held_over_1y, held_1y_or_less, discount, no_discount, fifo, lifo,
    /// hifo, lofo, average.
    pub rule: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MoveView {
    pub time: String,
    pub signature: String,
    pub asset: String,
    pub quantity: String,
    pub from: String,
    pub to: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TransferView {
    pub time: String,
    pub wallet: String,
    pub signature: String,
    pub asset: String,
    pub quantity: String,
    /// Market value; null when unpriced.
    pub value: Option<String>,
    /// exchange | merchant | unlabelled | own_wallet (a wallet of the
    /// taxpayer's outside this report).
    pub counterparty: String,
    /// disposal | acquisition | out_of_books | into_books.
    pub treatment: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnlabelledView {
    pub asset: String,
    /// True for sends.
    pub outgoing: bool,
    pub count: u64,
    pub quantity: String,
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HoldingView {
    pub asset: String,
    /// A wallet, "all_wallets" (a universal pool) or "exchange".
    pub holder: String,
    pub quantity: String,
    /// Null when unknown.
    pub cost: Option<String>,
    /// RFC 3339; null for a pool.
    pub acquired: Option<String>,
}

/// The name serde gives a unit-like enum value (`snake_case`).
fn name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

fn time(unix: i64) -> String {
    rfc3339(unix.saturating_mul(1000))
}

impl TaxSection {
    fn new(choice: &TaxChoice, a: &Assessment) -> Self {
        let year = choice.tax_year.map(|y| y.to_string());
        let wanted = |y: &str| year.as_deref().is_none_or(|w| w == y);
        let pooled = matches!(
            a.matching,
            Matching::ShareMatching | Matching::AdjustedCostBase
        );
        let matching = match a.matching {
            Matching::Lots(method) => method.as_str().to_owned(),
            Matching::ShareMatching => "share_matching".to_owned(),
            Matching::AdjustedCostBase => "adjusted_cost_base".to_owned(),
        };
        let rows = a
            .rows
            .iter()
            .filter(|r| wanted(&r.tax_year.to_string()))
            .map(|r| {
                let d = &r.row;
                let acquired = if pooled
                    && matches!(
                        d.rule,
                        basis::Rule::Section104 | basis::Rule::Acb | basis::Rule::SuperficialLoss
                    ) {
                    Some("pool".to_owned())
                } else {
                    d.acquired.map(time)
                };
                TaxRowView {
                    wallet: r.wallet.clone(),
                    tax_year: r.tax_year.to_string(),
                    asset: d.asset.clone(),
                    quantity: s(d.quantity),
                    acquired,
                    disposed: time(d.disposed),
                    proceeds: d.proceeds.map(s),
                    cost: d.basis.map(s),
                    sale_costs: s(r.sale_costs),
                    gain: d.gain.map(s),
                    rule: d.rule.as_str().to_owned(),
                }
            })
            .collect();
        let in_year = |t: i64| {
            wanted(
                &choice
                    .jurisdiction
                    .tax_year_in(choice.jurisdiction.zone(), t)
                    .to_string(),
            )
        };
        let moves = a
            .moves
            .iter()
            .filter(|m| in_year(m.time))
            .map(|m| MoveView {
                time: time(m.time),
                signature: m.signature.clone(),
                asset: m.asset.clone(),
                quantity: s(m.quantity),
                from: m.from.clone(),
                to: m.to.clone(),
            })
            .collect();
        let listed: Vec<&basis::books::TransferRecord> =
            a.transfers.iter().filter(|t| in_year(t.time)).collect();
        let transfers = listed
            .iter()
            .map(|t| TransferView {
                time: time(t.time),
                wallet: t.wallet.clone(),
                signature: t.signature.clone(),
                asset: t.asset.clone(),
                quantity: s(t.quantity),
                value: t.value.map(s),
                counterparty: name(&t.counterparty),
                treatment: name(&t.treatment),
            })
            .collect();
        let unlabelled = basis::books::unlabelled_totals(listed.iter().copied())
            .into_iter()
            .map(|u| UnlabelledView {
                asset: u.asset,
                outgoing: u.outgoing,
                count: u.count,
                quantity: s(u.quantity),
                value: s(u.value),
            })
            .collect();
        let holdings = a
            .holdings
            .iter()
            .map(|h| HoldingView {
                asset: h.asset.clone(),
                holder: match &h.holder {
                    Holder::AllWallets => "all_wallets".to_owned(),
                    Holder::Wallet(w) => w.clone(),
                    Holder::Exchange => "exchange".to_owned(),
                },
                quantity: s(h.quantity),
                cost: h.cost.map(s),
                acquired: h.acquired.map(time),
            })
            .collect();
        let summaries: Vec<jurisdiction::YearSummary> = a
            .years
            .iter()
            .filter(|y| wanted(y.tax_year()))
            .cloned()
            .collect();
        let years = summaries
            .iter()
            .filter_map(|y| serde_json::to_value(y).ok())
            .collect();
        TaxSection {
            jurisdiction: choice.jurisdiction.as_str().to_owned(),
            currency: choice.currency.code().to_owned(),
            rates: if choice.currency == Currency::Usd {
                "none"
            } else {
                "ecb"
            }
            .to_owned(),
            tax_year: year,
            matching,
            years,
            rows,
            income: Vec::new(),
            moves,
            transfers,
            unlabelled,
            holdings,
            undated: UndatedView::default(),
            other_wallets: Vec::new(),
            summaries,
        }
    }
}

/// The events of every wallet of a call, with the account's labels.
pub async fn events_for(
    store: &Store,
    account: Option<&AccountId>,
    wallets: &[WalletLegs<'_>],
    exclude_spam: bool,
) -> Result<Vec<WalletEvent>, AppError> {
    let labels = Labels::of(store, account).await?;
    Ok(wallet_events(wallets, &labels, exclude_spam))
}
