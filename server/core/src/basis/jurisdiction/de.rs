//! Germany: private sales of crypto units (EStG §23), FIFO or the average
//! method, wallet by wallet; the one-year period and the Freigrenze.
//!
//! Sources: EStG §22 Nr. 2 with §23 Abs. 1 S. 1 Nr. 2 (a sale within one
//! year of acquisition is a private sale; after more than a year it is not
//! taxable); §23 Abs. 3 S. 5 (gains are tax-free if the year's total from
//! private sales is *less than* the Freigrenze: 600 EUR up to 2023, 1,000
//! EUR from 2024 as amended by the Wachstumschancengesetz of 27 March 2024;
//! a Freigrenze, not a Freibetrag: at or above it the whole gain is
//! taxable). BMF letter of 10 May 2022 (IV C 1 - S 2256/19/10003 :001),
//! revised 6 March 2025, Rz. 61: units are identified individually where
//! possible, otherwise FIFO (a simplification) or the average method, with
//! FIFO for the holding period; the order is applied wallet by wallet
//! ("walletbezogene Betrachtung") and kept until the wallet's units of that
//! kind are sold. Rz. 61 (2022) allows the average method for the cost
//! with FIFO for the holding period, which is what the engine does
//! (`Method::Average` keeps a FIFO queue of dates and averages the basis);
//! the exact wording of the 2025 text is to be quoted here once checked.
//! Staking or lending does not extend the period to ten years (§23 Abs. 1
//! S. 1 Nr. 2 S. 4 EStG is not applied to virtual currencies: BMF 10 May
//! 2022 Rz. 63; the 6 March 2025 letter, which replaces it, keeps this, its
//! paragraph number not yet checked); this rests on the BMF's reading, not
//! on an amendment of the statute. Dates are counted in Europe/Berlin
//! unless the taxpayer sets a zone (BGB §187(1), §188(2): sold on the
//! anniversary is still within the year).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{TaxRow, TaxYear, UnlabelledTotal, YearSummary, Zone, by_year, held_over_a_year};
use crate::basis::{Disposal, Method, Rule, books::PoolScope};

/// Wallet by wallet (BMF 10 May 2022, Rz. 61).
pub const POOL_SCOPE: PoolScope = PoolScope::PerWallet;

pub fn refusal(method: Method) -> Option<&'static str> {
    match method {
        Method::Fifo | Method::Average => None,
        Method::Lifo | Method::Hifo | Method::Lofo => Some(
            "BMF letter of 10 May 2022, Rz. 61: units are identified individually, otherwise \
             FIFO or the average method; a LIFO, HIFO or LOFO order is neither",
        ),
    }
}

/// `held_over_1y` (not a private sale) or `held_1y_or_less`.
pub fn rule(row: &Disposal, zone: Zone) -> Rule {
    rule_held(
        row.acquired
            .is_some_and(|acquired| held_over_a_year(acquired, row.disposed, zone)),
    )
}

/// [`rule`] once whether the row's lot was held over a year is known (a
/// caller that has the dates at hand, as [`crate::basis::stream`]).
pub(crate) fn rule_held(held_over_a_year: bool) -> Rule {
    if held_over_a_year {
        Rule::HeldOver1y
    } else {
        Rule::Held1yOrLess
    }
}

/// The Freigrenze for a calendar year (EStG §23 Abs. 3 S. 5).
pub fn exemption_limit(year: i32) -> Decimal {
    if year >= 2024 {
        Decimal::from(1_000)
    } else {
        Decimal::from(600)
    }
}

/// One calendar year for Anlage SO.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub tax_year: String,
    /// Net gain of sales within one year (private sales, §23).
    pub gain_within_one_year: Decimal,
    /// Net gain of sales after more than a year: not taxable.
    pub gain_after_one_year: Decimal,
    pub exemption_limit: Decimal,
    /// `gain_within_one_year` if it reaches the limit, else 0 (a loss is
    /// 0 here and carried under §23 Abs. 3 S. 7–8), assuming no other §23
    /// private sales this year: the Freigrenze counts them all, per person.
    pub taxable_gain: Decimal,
    pub incomplete_rows: u64,
    /// A warning: the year's transfers with no label, by asset and
    /// direction (see [`super::UNLABELLED_WARNING`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unlabelled: Vec<UnlabelledTotal>,
}

pub fn summaries(rows: &[TaxRow]) -> Vec<YearSummary> {
    by_year(rows)
        .into_iter()
        .map(|(year, rows)| YearSummary::De(summary(year, &rows)))
        .collect()
}

fn summary(year: TaxYear, rows: &[&TaxRow]) -> Summary {
    let limit = exemption_limit(year.start);
    let mut s = Summary {
        tax_year: year.to_string(),
        exemption_limit: limit,
        ..Summary::default()
    };
    for r in rows {
        let Some(gain) = r.row.gain else {
            s.incomplete_rows += 1;
            continue;
        };
        match r.row.rule {
            Rule::HeldOver1y => s.gain_after_one_year += gain,
            _ => s.gain_within_one_year += gain,
        }
    }
    // A Freigrenze: under the limit nothing is taxable, at it everything.
    s.taxable_gain = if s.gain_within_one_year >= limit {
        s.gain_within_one_year
    } else {
        Decimal::ZERO
    };
    s
}
