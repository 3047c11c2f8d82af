//! The tax part of the report view (`GET /wallets/{address}` with
//! `jurisdiction`, `method`, `currency`, `tax_year`); its label form
//! (`POST /wallets/{address}/label`) is the view's own (`super::report`).
//!
//! The figures are the json report's own `tax` section: the choices go
//! through `analytics::tax::TaxChoice::from_args` with the account's
//! settings (so a refused method or currency reads as `get_report`
//! refuses it) and the report through `reports::render`, the function the
//! tool, the REST route and the downloads use. This module only writes
//! them for people: each year in the jurisdiction's own terms (SA108 for
//! the UK, Schedule 3 for Canada, Anlage SO for Germany, the return's
//! item 18 for Australia, Form 8949's terms for the US), amounts in the
//! reader's locale, each disposal with its rule in words.
//!
//! Every unlabelled transfer is listed by its counterparty's address with
//! its totals and a label form; the form calls `accounts::labels`'
//! `set_address_label` (as `set_address_label` the tool does) and answers a
//! 303 back to the same view, where the next read sees the label.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::Deserialize;

use super::settings::{currencies, jurisdiction_name, jurisdictions, methods, own_matching, rules};
use crate::{
    accounts::{AccountId, labels::AddressCategory},
    analytics::tax::{TaxChoice, TaxSection},
    basis::{
        Method,
        jurisdiction::{Jurisdiction, YearSummary},
    },
    error::AppError,
    params::TaxYearArg,
    reports::{self, Format, ReportBody, Spec},
    solana::WalletAddress,
    state::AppState,
    values::{
        format::{self, Locale},
        fx::Currency,
    },
};
use app::views::{Choice, TaxRowLine, TaxView, TaxYearView, UnlabelledLine};

/// The view's tax choices as the query carries them (all optional text;
/// empty means "the default").
#[derive(Debug, Default, Deserialize)]
pub struct TaxQuery {
    #[serde(default)]
    pub jurisdiction: String,
    #[serde(default)]
    pub method: String,
    #[serde(default)]
    pub currency: String,
    #[serde(default)]
    pub tax_year: String,
}

impl TaxQuery {
    /// The query string of these choices (for the label form's way back).
    pub(super) fn query(&self) -> String {
        let mut out = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("jurisdiction", &self.jurisdiction),
            ("method", &self.method),
            ("currency", &self.currency),
            ("tax_year", &self.tax_year),
        ] {
            if !v.trim().is_empty() {
                out.append_pair(k, v.trim());
            }
        }
        out.finish()
    }
}

/// A rule as people read it, with its source.
fn rule_words(rule: &str) -> &'static str {
    match rule {
        "same_day" => "same day (TCGA 1992 s.105(1), CRYPTO22250)",
        "bed_and_breakfast" => "30 days (TCGA 1992 s.106A, CRYPTO22255)",
        "section_104" => "Section 104 pool (TCGA 1992 s.104, CRYPTO22256)",
        "acb" => "adjusted cost base (ITA s.47(1))",
        "superficial_loss" => "superficial loss, denied (ITA s.54, s.40(2)(g)(i))",
        "held_over_1y" => "held over a year (EStG §23 Abs. 1 Nr. 2)",
        "held_1y_or_less" => "held a year or less (EStG §23 Abs. 1 Nr. 2)",
        "discount" => "held 12 months or more: discount (ITAA 1997 s.115-25)",
        "no_discount" => "held under 12 months: no discount (ITAA 1997 s.115-25)",
        "fifo" => "FIFO",
        "lifo" => "LIFO",
        "hifo" => "HIFO",
        "lofo" => "LOFO",
        "average" => "average cost",
        _ => "other",
    }
}

/// Each year's figures in `j`'s own terms, written in `locale`.
fn year_lines(y: &YearSummary, currency: &str, locale: Locale) -> Vec<(String, String)> {
    let m = |d: Decimal| format::fiat_in(d, currency, locale);
    let line = |term: &str, value: String| (term.to_owned(), value);
    let mut out = match y {
        // Form 8949 / Schedule D: short and long term (26 USC §1222).
        YearSummary::Us(s) => vec![
            line("Proceeds", m(s.proceeds)),
            line("Cost basis", m(s.basis)),
            line(
                "Short-term gain or loss (held one year or less)",
                m(s.short_term_gain),
            ),
            line(
                "Long-term gain or loss (held more than one year)",
                m(s.long_term_gain),
            ),
        ],
        // SA108, the cryptoassets boxes.
        YearSummary::Uk(s) => {
            let mut v = vec![
                line(
                    "Number of disposals",
                    format::count_in(s.disposals, "disposal", "disposals", locale),
                ),
                line("Disposal proceeds", m(s.proceeds)),
                line(
                    "Allowable costs (including purchase price)",
                    m(s.allowable_costs),
                ),
                line("Gains in the year, before losses", m(s.gains)),
                line("Losses in the year", m(s.losses)),
            ];
            if let (Some(g), Some(l)) = (s.gains_from_2024_10_30, s.losses_from_2024_10_30) {
                v.push(line("Gains on or after 30 October 2024", m(g)));
                v.push(line("Losses on or after 30 October 2024", m(l)));
            }
            v
        }
        // Schedule 3 (T1), ITA s.38-40.
        YearSummary::Ca(s) => vec![
            line("Proceeds of disposition", m(s.proceeds)),
            line("Adjusted cost base", m(s.adjusted_cost_base)),
            line("Outlays and expenses", m(s.outlays)),
            line("Gain (or loss)", m(s.gain)),
            line(
                "Superficial losses denied (added to the ACB)",
                m(s.superficial_losses),
            ),
            line("Taxable capital gain (one half)", m(s.taxable_capital_gain)),
        ],
        // Anlage SO, EStG §23.
        YearSummary::De(s) => vec![
            line(
                "Gains within the one-year period (§23 EStG)",
                m(s.gain_within_one_year),
            ),
            line(
                "Gains after one year (not taxable)",
                m(s.gain_after_one_year),
            ),
            line("Exemption limit (Freigrenze)", m(s.exemption_limit)),
            line("Taxable gain", m(s.taxable_gain)),
        ],
        // The return's item 18, ITAA 1997 Div 115.
        YearSummary::Au(s) => vec![
            line(
                "Gains with the discount (held 12 months or more), before it",
                m(s.discountable_gains),
            ),
            line("Gains without the discount", m(s.other_gains)),
            line("Capital losses", m(s.losses)),
            line("Net capital gain", m(s.net_capital_gain)),
            line("Net capital loss carried forward", m(s.net_capital_loss)),
        ],
    };
    let incomplete = match y {
        YearSummary::Us(s) => s.incomplete_rows,
        YearSummary::Uk(s) => s.incomplete_rows,
        YearSummary::Ca(s) => s.incomplete_rows,
        YearSummary::De(s) => s.incomplete_rows,
        YearSummary::Au(s) => s.incomplete_rows,
    };
    if incomplete > 0 {
        out.push(line(
            "Disposals left out (no price or no cost known)",
            format::count_in(incomplete, "disposal", "disposals", locale),
        ));
    }
    out
}

fn dec(text: &str) -> Option<Decimal> {
    text.parse().ok()
}

/// The tax part for `wallet` as `account` reads it.
pub async fn tax_view(
    state: &AppState,
    account: &AccountId,
    wallet: &WalletAddress,
    q: &TaxQuery,
    locale: Locale,
) -> Result<TaxView, AppError> {
    let settings = crate::accounts::tax_settings::of(state.store(), account).await?;
    let mut view = TaxView {
        query: q.query(),
        label_categories: [
            AddressCategory::OwnWallet,
            AddressCategory::Exchange,
            AddressCategory::Merchant,
        ]
        .into_iter()
        .map(|c| Choice {
            value: c.as_str().to_owned(),
            label: match c {
                AddressCategory::OwnWallet => "My own wallet",
                AddressCategory::Exchange => "An exchange account of mine",
                _ => "A merchant (a payment)",
            }
            .to_owned(),
        })
        .collect(),
        jurisdictions: jurisdictions(),
        ..TaxView::default()
    };
    let refuse = |mut view: TaxView, j: Jurisdiction, message: String| {
        view.methods = methods(j);
        view.currencies = currencies(j);
        view.rules = rules(j);
        view.tax_years = vec![Choice {
            value: String::new(),
            label: "Every year".to_owned(),
        }];
        view.error = Some(message);
        view
    };
    let named = q.jurisdiction.trim();
    let jurisdiction = match named {
        "" => settings.map(|s| s.jurisdiction).unwrap_or_default(),
        text => match Jurisdiction::parse(&text.to_ascii_lowercase()) {
            Some(j) => j,
            None => {
                return Ok(refuse(
                    view,
                    Jurisdiction::default(),
                    format!("Jurisdiction {text:?} is none of us, uk, ca, de, au."),
                ));
            }
        },
    };
    view.jurisdiction = jurisdiction.as_str().to_owned();
    view.method = q.method.trim().to_owned();
    view.currency = q.currency.trim().to_owned();
    view.tax_year = q.tax_year.trim().to_owned();
    view.source = if named.is_empty() && settings.is_some() {
        "from your settings".to_owned()
    } else if named.is_empty() {
        "the default: change it here or in your settings".to_owned()
    } else {
        "chosen on this page".to_owned()
    };
    let method = match view.method.clone().as_str() {
        "" => None,
        text => match Method::parse(text).filter(|m| Method::SERVED.contains(m)) {
            Some(m) => Some(m),
            None => {
                return Ok(refuse(
                    view,
                    jurisdiction,
                    format!("Method {text:?} is none of fifo, lifo, hifo, average."),
                ));
            }
        },
    };
    let currency = match view.currency.clone().as_str() {
        "" => None,
        text => match Currency::parse(text) {
            Some(c) => Some(c),
            None => {
                return Ok(refuse(
                    view,
                    jurisdiction,
                    format!("Currency {text:?} is none of USD, GBP, EUR, CAD, AUD."),
                ));
            }
        },
    };
    let tax_year = match view.tax_year.clone().as_str() {
        "" => None,
        text => match TaxYearArg::parse(text) {
            Some(y) => Some(y),
            None => {
                return Ok(refuse(
                    view,
                    jurisdiction,
                    format!(
                        "{text:?} is not a tax year: write 2024 (us, ca, de) or 2024-25 (uk, au)."
                    ),
                ));
            }
        },
    };
    let mut choice =
        match TaxChoice::from_args(Some(jurisdiction), currency, tax_year, method, settings) {
            Ok(Some(choice)) => choice,
            Ok(None) => return Err(AppError::internal("tax view", "no tax choice")),
            // A refusal in the words the tool gives (the method's reason, the
            // currency Germany is assessed in, the form of a tax year).
            Err(err) if err.code() == crate::error::Code::InvalidParams => {
                let message = err.message().to_owned();
                return Ok(refuse(view, jurisdiction, format!("Refused: {message}")));
            }
            Err(err) => return Err(err),
        };
    if view.method.is_empty() {
        view.method = choice
            .method
            .map(|m| m.as_str().to_owned())
            .unwrap_or_default();
    }
    view.currency = choice.currency.code().to_owned();
    let wanted_year = choice.tax_year.map(|y| y.to_string());
    // Every year is replayed (the whole history, so a year's 30 days after
    // its end are in); the view then keeps the year asked for.
    choice.tax_year = None;
    let spec = Spec::new(
        vec![wallet.clone()],
        Format::Json,
        choice.method,
        None,
        None,
        None,
    )?
    .with_tax(Some(choice), Some(account.clone()));
    let reads = state.reads();
    let file = reports::render(&reads, &spec).await?;
    let section: TaxSection = match file.body {
        ReportBody::Json(report) => report
            .tax
            .ok_or_else(|| AppError::internal("tax view", "no tax section"))?,
        ReportBody::Bytes(_) => return Err(AppError::internal("tax view", "not json")),
    };
    let currency = section.currency.clone();
    let wanted = |y: &str| wanted_year.as_deref().is_none_or(|w| w == y);
    view.methods = methods(jurisdiction);
    view.currencies = currencies(jurisdiction);
    view.rules = rules(jurisdiction);
    view.tax_years = std::iter::once(Choice {
        value: String::new(),
        label: "Every year".to_owned(),
    })
    .chain(section.summaries.iter().map(|y| Choice {
        value: y.tax_year().to_owned(),
        label: y.tax_year().to_owned(),
    }))
    .collect();
    if let Some(y) = &wanted_year
        && !view.tax_years.iter().any(|c| &c.value == y)
    {
        view.tax_years.push(Choice {
            value: y.clone(),
            label: format!("{y} (nothing in it)"),
        });
    }
    view.heading = format!(
        "{}: {}, in {}{}",
        jurisdiction_name(jurisdiction),
        match choice.method {
            Some(m) => super::settings::method_name(m).to_owned(),
            None => own_matching(jurisdiction).to_owned(),
        },
        currency,
        if section.rates == "ecb" {
            " (converted at the European Central Bank's daily reference rates)"
        } else {
            ""
        }
    );
    view.years = section
        .summaries
        .iter()
        .filter(|y| wanted(y.tax_year()))
        .map(|y| {
            let mut unlabelled = match y {
                YearSummary::Us(s) => s.unlabelled.len(),
                YearSummary::Uk(s) => s.unlabelled.len(),
                YearSummary::Ca(s) => s.unlabelled.len(),
                YearSummary::De(s) => s.unlabelled.len(),
                YearSummary::Au(s) => s.unlabelled.len(),
            };
            unlabelled = unlabelled.min(1);
            TaxYearView {
                tax_year: y.tax_year().to_owned(),
                lines: year_lines(y, &currency, locale),
                warning: (unlabelled > 0).then(|| {
                    "Not ready to file: this year has transfers to or from addresses you have \
                     not labelled (listed below); label them first."
                        .to_owned()
                }),
            }
        })
        .collect();
    let money = |t: &Option<String>| {
        t.as_deref()
            .and_then(dec)
            .map_or_else(|| "—".to_owned(), |d| format::decimal_in(d, 2, locale))
    };
    let day = |t: &str| {
        chrono::DateTime::parse_from_rfc3339(t)
            .map(|t| format::date(t.timestamp_millis()))
            .unwrap_or_else(|_| t.to_owned())
    };
    view.rows = section
        .rows
        .iter()
        .filter(|r| wanted(&r.tax_year))
        .map(|r| TaxRowLine {
            tax_year: r.tax_year.clone(),
            asset: crate::share::report::mint_label(&r.asset),
            quantity: dec(&r.quantity)
                .map_or_else(|| r.quantity.clone(), |d| format::quantity_in(d, locale)),
            acquired: match r.acquired.as_deref() {
                None => "—".to_owned(),
                Some("pool") => "pool".to_owned(),
                Some(t) => day(t),
            },
            disposed: day(&r.disposed),
            proceeds: money(&r.proceeds),
            cost: money(&r.cost),
            gain: money(&r.gain),
            rule: rule_words(&r.rule).to_owned(),
        })
        .collect();
    view.unlabelled =
        unlabelled_lines(state, wallet, &section, &wanted_year, &currency, locale).await?;
    Ok(view)
}

/// One counterparty's transfers: (asset, sent?) to (count, quantity,
/// value).
type Totals = BTreeMap<(String, bool), (u64, Decimal, Decimal)>;

/// The unlabelled transfers of the view, by counterparty address: the
/// section lists them by signature; the wallet's legs name the address.
async fn unlabelled_lines(
    state: &AppState,
    wallet: &WalletAddress,
    section: &TaxSection,
    wanted_year: &Option<String>,
    currency: &str,
    locale: Locale,
) -> Result<Vec<UnlabelledLine>, AppError> {
    let listed: Vec<_> = section
        .transfers
        .iter()
        .filter(|t| t.counterparty == "unlabelled")
        .filter(|t| {
            wanted_year.as_deref().is_none_or(|w| {
                chrono::DateTime::parse_from_rfc3339(&t.time)
                    .is_ok_and(|at| section_year(section, at.timestamp()).as_deref() == Some(w))
            })
        })
        .collect();
    if listed.is_empty() {
        return Ok(Vec::new());
    }
    let legs = crate::analytics::scanned_legs(&state.reads(), wallet).await?;
    // address -> (asset, sent?) -> (count, quantity, value)
    let mut by_address: BTreeMap<String, Totals> = BTreeMap::new();
    for t in listed {
        let outgoing = t.treatment == "disposal" || t.treatment == "out_of_books";
        let address = legs
            .iter()
            .filter(|l| l.signature == t.signature && l.mint == t.asset)
            .flat_map(|l| l.counterparties.iter().map(|c| c.address.clone()))
            .find(|a| a != wallet.as_str());
        let Some(address) = address else { continue };
        let entry = by_address
            .entry(address)
            .or_default()
            .entry((t.asset.clone(), outgoing))
            .or_default();
        entry.0 += 1;
        entry.1 += dec(&t.quantity).unwrap_or_default();
        entry.2 += t.value.as_deref().and_then(dec).unwrap_or_default();
    }
    Ok(by_address
        .into_iter()
        .map(|(address, totals)| UnlabelledLine {
            address,
            totals: totals
                .into_iter()
                .map(|((asset, outgoing), (count, quantity, value))| {
                    format!(
                        "{} {}: {} {} ({})",
                        count,
                        if outgoing { "sent" } else { "received" },
                        format::quantity_in(quantity, locale),
                        crate::share::report::mint_label(&asset),
                        format::fiat_in(value, currency, locale)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        })
        .collect())
}

/// The tax year of `unix` in the section's jurisdiction.
fn section_year(section: &TaxSection, unix: i64) -> Option<String> {
    let j = Jurisdiction::parse(&section.jurisdiction)?;
    Some(j.tax_year_in(j.zone(), unix).to_string())
}
