//! Canada: the adjusted cost base (ACB), one average over all of a
//! person's identical properties, and the superficial-loss rule.
//!
//! Sources: ITA s.47(1) (identical properties: the cost of each is the
//! average of them all); s.54 "superficial loss" (a loss where the same or
//! identical property was acquired in the period from 30 days before to 30
//! days after the disposition and is still owned at its end), s.40(2)(g)(i)
//! (that loss is nil), s.53(1)(f) (it is added to the ACB of the
//! substituted property); s.38(a) (the taxable capital gain is one half);
//! CRA "Guide for cryptocurrency users and tax professionals" (crypto is
//! property; the ACB and superficial-loss rules apply as for shares).
//! When fewer units were bought in the period, or are held at its end, than
//! were sold, only that share of the loss is denied: the loss times the
//! least of units sold, units acquired in the period and units held at its
//! end, over units sold. That proration is the CRA's administrative
//! practice, not statute (the Act states no formula); it is applied to each
//! disposition on its own, as s.54 reads. The denied loss goes to the
//! substituted property: units bought in the window after the sale take
//! their share when they are acquired, never a disposition in between.
//! Days are the taxpayer's civil days (America/Toronto unless set).

use std::collections::BTreeMap;

use chrono::{Days, NaiveDate};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{Holding, TaxRow, TaxYear, UnlabelledTotal, YearSummary, Zone, by_year};
use crate::basis::{Disposal, Event, EventKind, Method, Rule, books::Holder, engine::share};

pub fn refusal(method: Method) -> Option<&'static str> {
    match method {
        Method::Average => None,
        _ => Some(
            "identical properties have one adjusted cost base, their average (ITA s.47(1)); no \
             lot can be chosen",
        ),
    }
}

#[derive(Default)]
struct Acb {
    quantity: Decimal,
    cost: Decimal,
    unpriced: bool,
    /// Denied losses waiting for their substituted property, bought after
    /// the sale (s.53(1)(f): the loss goes to that property, from its
    /// acquisition on; disposals before it never see the amount).
    pending: Vec<Pending>,
}

/// A denied loss still to be added to the ACB: `amount` over the next
/// `units` acquired up to the event index `end` (the window's end).
struct Pending {
    amount: Decimal,
    units: Decimal,
    end: usize,
}

impl Acb {
    fn pending_total(&self) -> Decimal {
        self.pending.iter().map(|p| p.amount).sum()
    }

    /// The pending losses' shares for `quantity` units acquired at event
    /// `index`: each loss goes to the units of its own window, pro rata.
    fn take_pending(&mut self, index: usize, quantity: Decimal) -> Decimal {
        let mut added = Decimal::ZERO;
        for p in self.pending.iter_mut().filter(|p| index < p.end) {
            let take = quantity.min(p.units);
            let amount = share(p.amount, take, p.units);
            p.amount -= amount;
            p.units -= take;
            added += amount;
        }
        self.pending.retain(|p| p.units > Decimal::ZERO);
        added
    }
}

/// Replay under the ACB: rows with their outlays, and the ACB left.
pub fn replay(events: &[Event], zone: Zone) -> (Vec<(Disposal, Decimal)>, Vec<Holding>) {
    let mut by_asset: BTreeMap<&str, Vec<&Event>> = BTreeMap::new();
    for e in events {
        if e.quantity > Decimal::ZERO
            && matches!(
                e.kind,
                EventKind::Acquire | EventKind::Income | EventKind::Dispose
            )
        {
            by_asset.entry(e.asset.as_str()).or_default().push(e);
        }
    }
    let mut rows = Vec::new();
    let mut holdings = Vec::new();
    for (asset, mut list) in by_asset {
        list.sort_by_key(|e| (e.time, e.seq));
        let acb = replay_asset(asset, &list, zone, &mut rows);
        if acb.quantity > Decimal::ZERO {
            holdings.push(Holding {
                asset: asset.to_owned(),
                holder: Holder::AllWallets,
                quantity: acb.quantity,
                cost: (!acb.unpriced).then_some(acb.cost + acb.pending_total()),
                acquired: None,
                seq: None,
            });
        }
    }
    rows.sort_by_key(|(r, _): &(Disposal, Decimal)| (r.disposed, r.disposal_seq));
    (rows, holdings)
}

fn replay_asset(
    asset: &str,
    list: &[&Event],
    zone: Zone,
    rows: &mut Vec<(Disposal, Decimal)>,
) -> Acb {
    let dates: Vec<NaiveDate> = list
        .iter()
        .map(|e| zone.date(e.time).unwrap_or_default())
        .collect();
    // Units held after each event, and acquired up to it.
    let mut held_after = Vec::with_capacity(list.len());
    let mut acquired_to = Vec::with_capacity(list.len());
    let (mut held, mut acquired) = (Decimal::ZERO, Decimal::ZERO);
    for e in list {
        match e.kind {
            EventKind::Acquire | EventKind::Income => {
                held += e.quantity;
                acquired += e.quantity;
            }
            _ => held = (held - e.quantity).max(Decimal::ZERO),
        }
        held_after.push(held);
        acquired_to.push(acquired);
    }
    // Index of the first event after `date`.
    let after = |date: NaiveDate| dates.partition_point(|d| *d <= date);

    let mut acb = Acb::default();
    for (i, e) in list.iter().enumerate() {
        if matches!(e.kind, EventKind::Acquire | EventKind::Income) {
            acb.quantity += e.quantity;
            let denied = acb.take_pending(i, e.quantity);
            match e.usd_value {
                Some(v) => acb.cost += v + e.fee_usd + denied,
                None => acb.unpriced = true,
            }
            continue;
        }
        let covered = e.quantity.min(acb.quantity);
        let cost = share(acb.cost, covered, acb.quantity);
        let known = !acb.unpriced;
        acb.cost -= cost;
        acb.quantity -= covered;
        if acb.quantity.is_zero() {
            acb = Acb {
                pending: std::mem::take(&mut acb.pending),
                ..Acb::default()
            };
        }
        let proceeds = e.usd_value.map(|v| share(v, covered, e.quantity));
        let outlays = share(e.fee_usd, covered, e.quantity);
        let gain = proceeds.filter(|_| known).map(|p| p - outlays - cost);

        // The superficial-loss test (s.54): units bought from 30 days
        // before to 30 days after, and units held at the end of that.
        let mut denied_units = Decimal::ZERO;
        // Units acquired after this sale up to the window's end.
        let (mut after_units, mut window_end) = (Decimal::ZERO, i + 1);
        if let Some(g) = gain
            && g < Decimal::ZERO
            && covered > Decimal::ZERO
        {
            let from = dates[i].checked_sub_days(Days::new(30)).unwrap_or(dates[i]);
            let to = dates[i].checked_add_days(Days::new(30)).unwrap_or(dates[i]);
            let (start, end) = (dates.partition_point(|d| *d < from), after(to));
            let bought = if end == 0 {
                Decimal::ZERO
            } else {
                acquired_to[end - 1]
                    - if start == 0 {
                        Decimal::ZERO
                    } else {
                        acquired_to[start - 1]
                    }
            };
            let held_at_end = if end == 0 {
                Decimal::ZERO
            } else {
                held_after[end - 1]
            };
            denied_units = covered.min(bought).min(held_at_end);
            window_end = end.max(i + 1);
            after_units = acquired_to[window_end - 1] - acquired_to[i];
        }
        let basis = known.then_some(cost + outlays);
        let mut push = |quantity: Decimal,
                        rule: Rule,
                        proceeds: Option<Decimal>,
                        basis: Option<Decimal>,
                        gain: Option<Decimal>,
                        outlays: Decimal,
                        uncovered: bool| {
            rows.push((
                Disposal {
                    asset: asset.to_owned(),
                    quantity,
                    acquired: None,
                    disposed: e.time,
                    proceeds,
                    basis,
                    gain,
                    term: None,
                    uncovered,
                    disposal_seq: e.seq,
                    lot_seq: None,
                    rule,
                },
                outlays,
            ));
        };
        if denied_units > Decimal::ZERO {
            // The denied part's row shows its real ACB and outlays but a
            // nil loss (s.40(2)(g)(i)); the loss goes to the ACB.
            let p = proceeds.map(|p| share(p, denied_units, covered));
            let o = share(outlays, denied_units, covered);
            let b = basis.map(|b| share(b, denied_units, covered));
            let denied = -(p.zip(b).map_or(Decimal::ZERO, |(p, b)| p - b));
            // s.53(1)(f): the loss goes to the substituted property. The
            // share for units bought after the sale waits for them; the
            // rest belongs to window units bought before it and still held.
            let later = if acb.quantity.is_zero() {
                denied_units
            } else {
                denied_units.min(after_units)
            };
            let deferred = share(denied, later, denied_units);
            acb.cost += denied - deferred;
            if later > Decimal::ZERO {
                acb.pending.push(Pending {
                    amount: deferred,
                    units: later,
                    end: window_end,
                });
            }
            push(
                denied_units,
                Rule::SuperficialLoss,
                p,
                b,
                Some(Decimal::ZERO),
                o,
                false,
            );
            let rest = covered - denied_units;
            if rest > Decimal::ZERO {
                let p2 = proceeds.zip(p).map(|(a, b)| a - b);
                let b2 = basis.zip(b).map(|(a, b)| a - b);
                push(
                    rest,
                    Rule::Acb,
                    p2,
                    b2,
                    p2.zip(b2).map(|(p, b)| p - b),
                    outlays - o,
                    false,
                );
            }
        } else if covered > Decimal::ZERO {
            push(
                covered,
                Rule::Acb,
                proceeds,
                basis,
                proceeds.zip(basis).map(|(p, b)| p - b),
                outlays,
                false,
            );
        }
        let uncovered = e.quantity - covered;
        if uncovered > Decimal::ZERO {
            let p = e.usd_value.zip(proceeds).map(|(v, p)| v - p);
            push(
                uncovered,
                Rule::Acb,
                p,
                None,
                None,
                e.fee_usd - outlays,
                true,
            );
        }
    }
    acb
}

/// One tax year as on Schedule 3.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub tax_year: String,
    /// Gross.
    pub proceeds: Decimal,
    pub adjusted_cost_base: Decimal,
    /// Outlays and expenses of the dispositions.
    pub outlays: Decimal,
    /// Net gain (negative: a net loss), superficial losses counted as nil.
    pub gain: Decimal,
    /// Losses denied as superficial and added to the ACB.
    pub superficial_losses: Decimal,
    /// One half of `gain` (s.38(a)). Negative in a net-loss year: the
    /// allowable capital loss, which is not deductible against other income
    /// (s.3(b)) but carried over as a net capital loss (s.111(1)(b)).
    pub taxable_capital_gain: Decimal,
    pub incomplete_rows: u64,
    /// A warning: the year's transfers with no label, by asset and
    /// direction (see [`super::UNLABELLED_WARNING`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unlabelled: Vec<UnlabelledTotal>,
}

pub fn summaries(rows: &[TaxRow]) -> Vec<YearSummary> {
    by_year(rows)
        .into_iter()
        .map(|(year, rows)| YearSummary::Ca(summary(year, &rows)))
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
        s.outlays += r.sale_costs;
        s.adjusted_cost_base += basis - r.sale_costs;
        s.gain += gain;
        if r.row.rule == Rule::SuperficialLoss {
            s.superficial_losses += basis - proceeds;
        }
    }
    s.taxable_capital_gain = s.gain / Decimal::TWO;
    s
}
