//! United States: lot methods, short and long term, and the change from a
//! universal pool to one pool per wallet on 1 January 2025.
//!
//! Sources: 26 USC §1222 (long term: held more than one year; IRS Pub. 544
//! counts from the day after acquisition); Treas. Reg. §1.1012-1(c) (FIFO
//! unless units are specifically identified), §1.1012-1(j) (digital assets,
//! from 2025: identification wallet by wallet); Rev. Proc. 2024-28 (the
//! transition: before 2025 one universal pool was allowed, from 1 January
//! 2025 each wallet or account is its own pool, and the universal pool's
//! remaining basis is allocated to the wallets under a safe harbor; the
//! standing rule used here is in [`crate::basis::books`]). Dates are the
//! taxpayer's civil dates (America/New_York unless set).

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{TaxRow, TaxYear, UnlabelledTotal, YearSummary, Zone, by_year};
use crate::basis::{Method, Term, books::PoolScope};

/// Per-wallet pools from 1 January 2025 in the taxpayer's civil date
/// (Treas. Reg. §1.1012-1(j), TD 10000, applies to transactions from 1
/// January 2025): local midnight, not UTC's.
pub fn pool_scope(time: i64, zone: Zone) -> PoolScope {
    if zone.date(time) < NaiveDate::from_ymd_opt(2025, 1, 1) {
        PoolScope::Universal
    } else {
        PoolScope::PerWallet
    }
}

/// Why a method is not accepted for US filings, if it is not.
pub fn refusal(method: Method) -> Option<&'static str> {
    match method {
        Method::Average => Some(
            "Treas. Reg. §1.1012-1(e) allows average basis only for regulated investment company \
             shares; digital assets are identified by lot (§1.1012-1(c), (j))",
        ),
        Method::Fifo | Method::Lifo | Method::Hifo | Method::Lofo => None,
    }
}

/// One tax year as Form 8949 / Schedule D total it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub tax_year: String,
    pub proceeds: Decimal,
    pub basis: Decimal,
    pub short_term_gain: Decimal,
    pub long_term_gain: Decimal,
    /// Rows left out of the sums (unpriced or uncovered).
    pub incomplete_rows: u64,
    /// A warning: the year's transfers with no label, by asset and
    /// direction (see [`super::UNLABELLED_WARNING`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unlabelled: Vec<UnlabelledTotal>,
}

pub fn summaries(rows: &[TaxRow]) -> Vec<YearSummary> {
    by_year(rows)
        .into_iter()
        .map(|(year, rows)| YearSummary::Us(summary(year, &rows)))
        .collect()
}

fn summary(year: TaxYear, rows: &[&TaxRow]) -> Summary {
    let mut s = Summary {
        tax_year: year.to_string(),
        ..Summary::default()
    };
    for r in rows {
        let (Some(proceeds), Some(basis), Some(gain)) = (r.row.proceeds, r.row.basis, r.row.gain)
        else {
            s.incomplete_rows += 1;
            continue;
        };
        s.proceeds += proceeds;
        s.basis += basis;
        match r.row.term {
            Some(Term::Long) => s.long_term_gain += gain,
            _ => s.short_term_gain += gain,
        }
    }
    s
}
