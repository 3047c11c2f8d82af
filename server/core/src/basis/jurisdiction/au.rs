//! Australia: each unit a CGT asset, identified by lot (FIFO, LIFO, HIFO,
//! LOFO), the 50% discount, the income year from 1 July.
//!
//! Sources: ITAA 1997 s.115-25 (the discount needs the asset acquired at
//! least 12 months before the CGT event; the ATO excludes the days of
//! acquisition and of the event, so the sale must come after the
//! anniversary date), s.115-100 (50% for individuals), s.102-5 (net
//! capital gain: capital losses reduce gains first, in the order the
//! taxpayer chooses, then the discount applies to what is left of
//! discountable gains); ATO "Crypto asset investments" and "Keeping crypto
//! records": where units can be identified (a wallet's records do) the
//! taxpayer chooses which are sold, otherwise FIFO; there is no averaging
//! for crypto. One pool per asset across wallets (identification does not
//! depend on the wallet). Dates in Australia/Sydney.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{TaxRow, TaxYear, UnlabelledTotal, YearSummary, Zone, by_year, held_over_a_year};
use crate::basis::{Disposal, Method, Rule, books::PoolScope};

pub const POOL_SCOPE: PoolScope = PoolScope::Universal;

pub fn refusal(method: Method) -> Option<&'static str> {
    match method {
        Method::Fifo | Method::Lifo | Method::Hifo | Method::Lofo => None,
        Method::Average => Some(
            "the ATO treats each crypto asset as a separate CGT asset with its own cost base \
             (ITAA 1997 s.110-25); averaging is not accepted, identify the units sold",
        ),
    }
}

/// `discount` for a gain on a lot held at least 12 months, else
/// `no_discount` (losses are never discounted).
pub fn rule(row: &Disposal, zone: Zone) -> Rule {
    rule_held(
        row,
        row.acquired
            .is_some_and(|acquired| held_over_a_year(acquired, row.disposed, zone)),
    )
}

/// [`rule`] once whether the row's lot was held over a year is known (a
/// caller that has the dates at hand, as [`crate::basis::stream`]).
pub(crate) fn rule_held(row: &Disposal, held_over_a_year: bool) -> Rule {
    match row.gain {
        Some(gain) if gain > Decimal::ZERO && row.acquired.is_some() && held_over_a_year => {
            Rule::Discount
        }
        _ => Rule::NoDiscount,
    }
}

/// One income year's capital gains as on the return's item 18.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub tax_year: String,
    /// Gains on lots held at least 12 months, before the discount.
    pub discountable_gains: Decimal,
    pub other_gains: Decimal,
    /// This year's capital losses, as a positive amount.
    pub losses: Decimal,
    /// Losses applied to the other gains first, then to discountable
    /// gains; then half of what is left of those (s.102-5, s.115-100).
    pub net_capital_gain: Decimal,
    /// Losses beyond the gains, carried forward.
    pub net_capital_loss: Decimal,
    pub incomplete_rows: u64,
    /// A warning: the year's transfers with no label, by asset and
    /// direction (see [`super::UNLABELLED_WARNING`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unlabelled: Vec<UnlabelledTotal>,
}

pub fn summaries(rows: &[TaxRow]) -> Vec<YearSummary> {
    by_year(rows)
        .into_iter()
        .map(|(year, rows)| YearSummary::Au(summary(year, &rows)))
        .collect()
}

fn summary(year: TaxYear, rows: &[&TaxRow]) -> Summary {
    let mut s = Summary {
        tax_year: year.to_string(),
        ..Summary::default()
    };
    for r in rows {
        let Some(gain) = r.row.gain else {
            s.incomplete_rows += 1;
            continue;
        };
        if gain < Decimal::ZERO {
            s.losses -= gain;
        } else if r.row.rule == Rule::Discount {
            s.discountable_gains += gain;
        } else {
            s.other_gains += gain;
        }
    }
    let on_other = s.losses.min(s.other_gains);
    let on_discountable = (s.losses - on_other).min(s.discountable_gains);
    s.net_capital_loss = s.losses - on_other - on_discountable;
    s.net_capital_gain =
        (s.other_gains - on_other) + (s.discountable_gains - on_discountable) / Decimal::TWO;
    s
}
