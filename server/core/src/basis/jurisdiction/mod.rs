//! Five jurisdictions' rules over the one replay: the US, the UK, Canada,
//! Germany and Australia, one module each with its sources cited at the
//! rule (docs/cost-basis.md repeats them).
//!
//! A jurisdiction decides the reporting currency, the tax year and the
//! civil time zone it is counted in, which lot methods it accepts (and why
//! not the others), whether pools are universal or per wallet, and how a
//! disposal is matched to its cost: by a lot method (US, Germany,
//! Australia, whose modules then say which rule each row falls under), by
//! share matching (UK) or by the adjusted cost base (Canada), each with its
//! own small engine. [`assess`] runs a taxpayer's books ([`super::books`])
//! under one of them and adds each tax year's summary in that country's
//! terms. Values must already be in the jurisdiction's currency
//! ([`crate::values::fx`] converts them): the engines are currency-blind,
//! and the `usd_value`/`fee_usd` fields then hold that currency.

pub mod au;
pub mod ca;
pub mod civil;
pub mod de;
pub mod uk;
pub mod us;

use std::{fmt, str::FromStr};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{
    Disposal, Method,
    books::{
        self, AllocationRule, Books, Choices, Holder, MoveRecord, TransferRecord, Unallocated,
        UnlabelledTotal, UnlabelledTransfers, WalletEvent,
    },
};
use crate::values::fx::{Currency, FxError, RateTable};
pub use civil::Zone;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Jurisdiction {
    #[default]
    Us,
    Uk,
    Ca,
    De,
    Au,
}

impl Jurisdiction {
    pub const ALL: [Jurisdiction; 5] = [
        Jurisdiction::Us,
        Jurisdiction::Uk,
        Jurisdiction::Ca,
        Jurisdiction::De,
        Jurisdiction::Au,
    ];

    /// `us`, `uk`, `ca`, `de` or `au`.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|j| j.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Jurisdiction::Us => "us",
            Jurisdiction::Uk => "uk",
            Jurisdiction::Ca => "ca",
            Jurisdiction::De => "de",
            Jurisdiction::Au => "au",
        }
    }

    /// The currency its returns are made in.
    pub fn currency(self) -> Currency {
        match self {
            Jurisdiction::Us => Currency::Usd,
            Jurisdiction::Uk => Currency::Gbp,
            Jurisdiction::Ca => Currency::Cad,
            Jurisdiction::De => Currency::Eur,
            Jurisdiction::Au => Currency::Aud,
        }
    }

    /// The zone its dates are counted in unless the taxpayer sets theirs
    /// ([`assess_in`]): the US has several, so New York unless set; a
    /// taxpayer in another zone (Vancouver, Perth, Chicago) must set it.
    pub fn zone(self) -> Zone {
        match self {
            Jurisdiction::Us => Zone::NewYork,
            Jurisdiction::Uk => Zone::London,
            Jurisdiction::Ca => Zone::Toronto,
            Jurisdiction::De => Zone::Berlin,
            Jurisdiction::Au => Zone::Sydney,
        }
    }

    /// The tax year an event at `unix` falls in, in the default zone.
    pub fn tax_year(self, unix: i64) -> TaxYear {
        self.tax_year_in(self.zone(), unix)
    }

    /// The tax year an event at `unix` falls in, counted in the taxpayer's
    /// civil date in `zone`: the calendar year in the US (26 USC §441(b)(1)
    /// for individuals), Canada (ITA s.249(1)(c), "in any other case, a
    /// calendar year") and
    /// Germany (EStG §25 Abs. 1, Veranlagungszeitraum); 6 April to 5 April
    /// in the UK (Income Tax Act 2007 s.4); 1 July to 30 June in Australia
    /// (the income year, ITAA 1997 s.995-1).
    pub fn tax_year_in(self, zone: Zone, unix: i64) -> TaxYear {
        self.tax_year_of(zone.date(unix))
    }

    /// [`Jurisdiction::tax_year_in`] of a civil date already known (the
    /// 1970 calendar year when there is none).
    pub(crate) fn tax_year_of(self, date: Option<chrono::NaiveDate>) -> TaxYear {
        let Some(date) = date else {
            return TaxYear::calendar(1970);
        };
        use chrono::Datelike;
        let (year, month, day) = (date.year(), date.month(), date.day());
        match self {
            Jurisdiction::Uk => TaxYear::split(if (month, day) >= (4, 6) {
                year
            } else {
                year - 1
            }),
            Jurisdiction::Au => TaxYear::split(if month >= 7 { year } else { year - 1 }),
            _ => TaxYear::calendar(year),
        }
    }

    /// The last civil day of tax year `year` (the sources as at
    /// [`Self::tax_year_in`]): 31 December, 5 April in the UK, 30 June in
    /// Australia. A replay for one tax year runs 30 days past it, for the
    /// UK's bed-and-breakfast rule (TCGA 1992 s.106A(5), CG51560,
    /// CRYPTO22255) and Canada's superficial loss (ITA s.54, 30 days after).
    pub fn last_day(self, year: TaxYear) -> Option<chrono::NaiveDate> {
        let (y, m, d) = match self {
            Jurisdiction::Uk if year.split => (year.start + 1, 4, 5),
            Jurisdiction::Au if year.split => (year.start + 1, 6, 30),
            _ => (year.start, 12, 31),
        };
        chrono::NaiveDate::from_ymd_opt(y, m, d)
    }

    /// The method used when none is chosen.
    pub fn default_matching(self) -> Matching {
        match self {
            Jurisdiction::Us | Jurisdiction::De | Jurisdiction::Au => Matching::Lots(Method::Fifo),
            Jurisdiction::Uk => Matching::ShareMatching,
            Jurisdiction::Ca => Matching::AdjustedCostBase,
        }
    }

    /// How disposals are matched under `method` (`None`: the default), or
    /// why this jurisdiction does not accept that method.
    pub fn matching(self, method: Option<Method>) -> Result<Matching, MethodRefused> {
        let Some(method) = method else {
            return Ok(self.default_matching());
        };
        let refusal = match self {
            Jurisdiction::Us => us::refusal(method),
            Jurisdiction::Uk => uk::refusal(method),
            Jurisdiction::Ca => ca::refusal(method),
            Jurisdiction::De => de::refusal(method),
            Jurisdiction::Au => au::refusal(method),
        };
        match refusal {
            Some(reason) => Err(MethodRefused {
                jurisdiction: self,
                method,
                reason,
            }),
            None => Ok(match self {
                Jurisdiction::Uk => Matching::ShareMatching,
                Jurisdiction::Ca => Matching::AdjustedCostBase,
                _ => Matching::Lots(method),
            }),
        }
    }
}

impl fmt::Display for Jurisdiction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Jurisdiction {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
            .ok_or_else(|| format!("unknown jurisdiction `{text}` (expected us, uk, ca, de or au)"))
    }
}

/// A tax year: the calendar year `start`, or (`split`) the year from a day
/// in `start` to the day before it in `start + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TaxYear {
    pub start: i32,
    pub split: bool,
}

impl TaxYear {
    pub fn calendar(year: i32) -> Self {
        TaxYear {
            start: year,
            split: false,
        }
    }

    pub fn split(start: i32) -> Self {
        TaxYear { start, split: true }
    }
}

/// `2024`, or `2024-25` for a year that spans two.
impl fmt::Display for TaxYear {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.split {
            write!(f, "{}-{:02}", self.start, (self.start + 1).rem_euclid(100))
        } else {
            write!(f, "{}", self.start)
        }
    }
}

/// How a jurisdiction matches a disposal to its cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Matching {
    Lots(Method),
    /// Same day, then 30 days, then the Section 104 pool (UK).
    ShareMatching,
    /// The adjusted cost base with the superficial-loss rule (Canada).
    AdjustedCostBase,
}

/// A method the jurisdiction does not accept, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{method} is not accepted in {jurisdiction}: {reason}")]
pub struct MethodRefused {
    pub jurisdiction: Jurisdiction,
    pub method: Method,
    pub reason: &'static str,
}

/// One realized row as a jurisdiction reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxRow {
    pub wallet: String,
    pub tax_year: TaxYear,
    /// `row.rule` is the jurisdiction's rule. Under share matching and the
    /// ACB, `row.proceeds` are gross and `row.basis` holds the allowable
    /// costs including `sale_costs`; elsewhere proceeds are net of the sale
    /// costs (and `sale_costs` is 0), as Form 8949 allows.
    pub row: Disposal,
    pub sale_costs: Decimal,
}

/// What is still held at the end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holding {
    pub asset: String,
    pub holder: Holder,
    pub quantity: Decimal,
    /// Remaining cost; `None` when unknown.
    pub cost: Option<Decimal>,
    /// `None` for a pool (Section 104, ACB), which has no one date.
    pub acquired: Option<i64>,
    /// For a lot, the `seq` of the event that opened it (an input index of
    /// the books); `None` for a pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// Each tax year's figures in the jurisdiction's terms.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "jurisdiction", rename_all = "snake_case")]
pub enum YearSummary {
    Us(us::Summary),
    Uk(uk::Summary),
    Ca(ca::Summary),
    De(de::Summary),
    Au(au::Summary),
}

/// What a summary's `unlabelled` list means. A transfer to one's own
/// wallet is no disposal in any of the five systems, so a year with
/// unlabelled transfers is not ready to file: under the default
/// (`at_market_value`) a send is a disposal, which can realise a loss and,
/// with its receive, restart a holding period (US term, Germany's year,
/// Australia's discount). In Germany and Australia a label is needed.
pub const UNLABELLED_WARNING: &str = "unlabelled transfers are treated by the chosen default      (at market value: a disposal and a new acquisition); label them (own wallet, exchange or      merchant) before filing";

impl YearSummary {
    /// `2024` or `2024-25`.
    pub fn tax_year(&self) -> &str {
        match self {
            YearSummary::Us(s) => &s.tax_year,
            YearSummary::Uk(s) => &s.tax_year,
            YearSummary::Ca(s) => &s.tax_year,
            YearSummary::De(s) => &s.tax_year,
            YearSummary::Au(s) => &s.tax_year,
        }
    }

    /// The year's unlabelled transfers (a warning).
    pub fn unlabelled_mut(&mut self) -> &mut Vec<UnlabelledTotal> {
        match self {
            YearSummary::Us(s) => &mut s.unlabelled,
            YearSummary::Uk(s) => &mut s.unlabelled,
            YearSummary::Ca(s) => &mut s.unlabelled,
            YearSummary::De(s) => &mut s.unlabelled,
            YearSummary::Au(s) => &mut s.unlabelled,
        }
    }
}

/// A taxpayer's books under one jurisdiction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assessment {
    pub jurisdiction: Jurisdiction,
    pub matching: Matching,
    /// In replay order.
    pub rows: Vec<TaxRow>,
    pub holdings: Vec<Holding>,
    pub moves: Vec<MoveRecord>,
    pub transfers: Vec<TransferRecord>,
    /// A warning: basis the US universal pool kept at 1 January 2025,
    /// which no wallet received (Rev. Proc. 2024-28 §5 needs each wallet
    /// to receive exactly its units).
    pub unallocated: Vec<Unallocated>,
    /// The US 2025 allocation rule the figures assume (the taxpayer's).
    pub allocation: Option<AllocationRule>,
    /// When the method took effect; FIFO before it.
    pub method_from: Option<i64>,
    /// By tax year.
    pub years: Vec<YearSummary>,
}

/// Run a taxpayer's books under `jurisdiction` with `method` (`None`: its
/// default). Values in the input are in the jurisdiction's currency.
pub fn assess(
    jurisdiction: Jurisdiction,
    input: &[WalletEvent],
    method: Option<Method>,
    unlabelled: UnlabelledTransfers,
) -> Result<Assessment, MethodRefused> {
    let taxpayer = Taxpayer::of(jurisdiction);
    assess_in(jurisdiction, &taxpayer, input, method, unlabelled)
}

/// What only the taxpayer can say: where they live, since when their method
/// stands, and how they allocated the US universal pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taxpayer {
    /// Tax years, holding periods, the superficial-loss window, same-day
    /// and 30-day matching and the US per-wallet switch (local midnight of
    /// 1 January 2025) are counted in civil dates of this zone.
    pub zone: Zone,
    /// The standing order's date and the 2025 allocation rule.
    pub choices: Choices,
}

impl Taxpayer {
    /// The jurisdiction's default zone, the method for the whole history,
    /// the default allocation rule.
    pub fn of(jurisdiction: Jurisdiction) -> Self {
        Taxpayer {
            zone: jurisdiction.zone(),
            choices: Choices::default(),
        }
    }
}

/// [`assess`] for a [`Taxpayer`].
pub fn assess_in(
    jurisdiction: Jurisdiction,
    taxpayer: &Taxpayer,
    input: &[WalletEvent],
    method: Option<Method>,
    unlabelled: UnlabelledTransfers,
) -> Result<Assessment, MethodRefused> {
    let zone = taxpayer.zone;
    let matching = jurisdiction.matching(method)?;
    let wallet_of = |row: &Disposal| {
        input
            .get(row.disposal_seq as usize)
            .map(|e| e.wallet.clone())
            .unwrap_or_default()
    };
    let tax_row = |row: Disposal, sale_costs: Decimal| TaxRow {
        wallet: wallet_of(&row),
        tax_year: jurisdiction.tax_year_in(zone, row.disposed),
        row,
        sale_costs,
    };
    let (rows, holdings, moves, transfers, unallocated) = match matching {
        Matching::Lots(method) => {
            let scope = |time: i64| match jurisdiction {
                Jurisdiction::Us => us::pool_scope(time, zone),
                Jurisdiction::De => de::POOL_SCOPE,
                _ => au::POOL_SCOPE,
            };
            let books = books::replay_with(input, method, unlabelled, scope, taxpayer.choices);
            let Books {
                replay,
                holders,
                moves,
                transfers,
                unallocated,
            } = books;
            let rows: Vec<TaxRow> = replay
                .disposals
                .into_iter()
                .map(|mut row| {
                    row.rule = match jurisdiction {
                        Jurisdiction::De => de::rule(&row, zone),
                        Jurisdiction::Au => au::rule(&row, zone),
                        _ => row.rule,
                    };
                    if jurisdiction == Jurisdiction::Us
                        && let Some(acquired) = row.acquired
                    {
                        // 26 USC §1222 in the taxpayer's dates (Rev. Rul. 66-7).
                        row.term = Some(if held_over_a_year(acquired, row.disposed, zone) {
                            super::Term::Long
                        } else {
                            super::Term::Short
                        });
                    }
                    tax_row(row, Decimal::ZERO)
                })
                .collect();
            let holdings = replay
                .open_lots
                .into_iter()
                .zip(holders)
                .map(|(lot, holder)| Holding {
                    asset: lot.asset,
                    holder,
                    quantity: lot.quantity,
                    cost: lot.basis,
                    acquired: Some(lot.acquired),
                    seq: Some(lot.seq),
                })
                .collect();
            (rows, holdings, moves, transfers, unallocated)
        }
        Matching::ShareMatching | Matching::AdjustedCostBase => {
            let (events, moves, transfers) = books::universal_events(input, unlabelled);
            let (rows, pools) = if matching == Matching::ShareMatching {
                uk::replay(&events, zone)
            } else {
                ca::replay(&events, zone)
            };
            let rows: Vec<TaxRow> = rows
                .into_iter()
                .map(|(row, costs)| tax_row(row, costs))
                .collect();
            (rows, pools, moves, transfers, Vec::new())
        }
    };
    let years = summaries(jurisdiction, zone, &rows, &transfers);
    Ok(Assessment {
        jurisdiction,
        matching,
        rows,
        holdings,
        moves,
        transfers,
        unallocated,
        allocation: (jurisdiction == Jurisdiction::Us).then_some(taxpayer.choices.allocation),
        method_from: taxpayer.choices.method_from,
        years,
    })
}

/// Each tax year's figures in `jurisdiction`'s terms over `rows`, with the
/// year's unlabelled `transfers` as its warning. [`assess_in`] gives them
/// over all of a taxpayer's rows; a caller showing one wallet's part of the
/// books (its rows and transfers) gets that part's figures here.
pub fn summaries(
    jurisdiction: Jurisdiction,
    zone: Zone,
    rows: &[TaxRow],
    transfers: &[TransferRecord],
) -> Vec<YearSummary> {
    let mut years = match jurisdiction {
        Jurisdiction::Us => us::summaries(rows),
        Jurisdiction::Uk => uk::summaries(rows, zone),
        Jurisdiction::Ca => ca::summaries(rows),
        Jurisdiction::De => de::summaries(rows),
        Jurisdiction::Au => au::summaries(rows),
    };
    for year in &mut years {
        let name = year.tax_year().to_owned();
        let of_year = transfers
            .iter()
            .filter(|t| jurisdiction.tax_year_in(zone, t.time).to_string() == name);
        *year.unlabelled_mut() = books::unlabelled_totals(of_year);
    }
    years
}

/// `input` with values and fees given in `from` converted into the
/// jurisdiction's currency, each at the reference rate of the event's civil
/// date in the jurisdiction (HMRC, CRA, BMF and ATO all ask for the value
/// in their currency at the time of the transaction; a day's ECB rate is
/// the finest official grain). Unpriced values stay unpriced.
///
/// Canada, a known limit: ITA s.261(1)-(2) names the Bank of Canada's rate
/// for the day ("relevant spot rate") or another rate acceptable to the
/// Minister; an ECB cross rate (CAD-per-EUR over USD-per-EUR at 14:15 CET)
/// differs from it by a few basis points. Next step: the Bank of Canada's
/// daily USD/CAD series (Valet `FXUSDCAD`) behind the same `RateTable`.
/// Australia: the Sydney date's ECB rate is published around 01:00 Sydney
/// time on the next day; consistent, and the ATO accepts a reasonable,
/// consistently used source.
pub fn convert(
    jurisdiction: Jurisdiction,
    input: &[WalletEvent],
    from: Currency,
    rates: &RateTable,
) -> Result<Vec<WalletEvent>, FxError> {
    convert_in(jurisdiction, jurisdiction.zone(), input, from, rates)
}

/// [`convert`] with each event's date taken in the taxpayer's `zone`.
pub fn convert_in(
    jurisdiction: Jurisdiction,
    zone: Zone,
    input: &[WalletEvent],
    from: Currency,
    rates: &RateTable,
) -> Result<Vec<WalletEvent>, FxError> {
    convert_to(zone, input, from, jurisdiction.currency(), rates)
}

/// `input`'s values and fees from `from` into `to`, each at the reference
/// rate of the event's civil date in `zone`. [`convert_in`] converts into
/// the jurisdiction's own currency; a report may ask for another one to
/// read the same figures in (not to file them: docs/reports.md).
pub fn convert_to(
    zone: Zone,
    input: &[WalletEvent],
    from: Currency,
    to: Currency,
    rates: &RateTable,
) -> Result<Vec<WalletEvent>, FxError> {
    input
        .iter()
        .map(|e| {
            let mut e = e.clone();
            let date = zone.date(e.event.time).unwrap_or_default();
            e.event.usd_value = e
                .event
                .usd_value
                .map(|v| rates.convert(v, from, to, date))
                .transpose()?;
            e.event.fee_usd = rates.convert(e.event.fee_usd, from, to, date)?;
            Ok(e)
        })
        .collect()
}

/// Whether a lot acquired at `acquired` and disposed of at `disposed` was
/// held more than a year, dates taken in `zone`: the period starts the day
/// after acquisition, so the disposal date must be after the same date one
/// year on (a 29 February acquisition: after 28 February). The US
/// (26 USC §1222, IRS Pub. 544), Germany (EStG §23 with BGB §187(1),
/// §188(2)) and Australia (ITAA 1997 s.115-25, which excludes the days of
/// acquisition and of the CGT event) all count this way.
pub fn held_over_a_year(acquired: i64, disposed: i64, zone: Zone) -> bool {
    let (Some(a), Some(d)) = (zone.date(acquired), zone.date(disposed)) else {
        return false;
    };
    a.checked_add_months(chrono::Months::new(12))
        .is_some_and(|anniversary| d > anniversary)
}

/// Rows grouped by tax year, in year order.
fn by_year(rows: &[TaxRow]) -> Vec<(TaxYear, Vec<&TaxRow>)> {
    let mut years: std::collections::BTreeMap<TaxYear, Vec<&TaxRow>> = Default::default();
    for row in rows {
        years.entry(row.tax_year).or_default().push(row);
    }
    years.into_iter().collect()
}

#[cfg(test)]
mod tests;
