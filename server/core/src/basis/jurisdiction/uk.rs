//! United Kingdom: share matching for cryptoassets. A disposal is matched
//! first with acquisitions on the same day, then with acquisitions in the
//! 30 days after it ("bed and breakfast"), then with the Section 104 pool
//! at its average cost.
//!
//! Sources: TCGA 1992 s.104 (the pool), s.105(1) (same-day acquisitions
//! and disposals are each treated as one), s.106A(5)–(6) (the 30 days
//! after, earlier acquisitions first); HMRC Cryptoassets Manual
//! CRYPTO22200–CRYPTO22210 (pooling, same day, 30 days) and the worked
//! examples CRYPTO22250–CRYPTO22257; Capital Gains Manual CG51560 onwards.
//! Days are civil days in Europe/London. Proceeds are gross and the
//! disposal's costs are allowable costs, as on SA108. All of a person's
//! wallets form one pool per token (CRYPTO22200: pooling is per person).

use std::collections::BTreeMap;

use chrono::{Days, NaiveDate};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{Holding, TaxRow, TaxYear, UnlabelledTotal, YearSummary, Zone, by_year};
use crate::basis::{Disposal, Event, EventKind, Method, Rule, books::Holder, engine::share};

pub fn refusal(method: Method) -> Option<&'static str> {
    Some(match method {
        Method::Average => {
            "UK disposals are matched by the share-matching rules (same day, 30 days, then the \
             Section 104 pool's average: TCGA 1992 s.104-106A, HMRC CRYPTO22200); the pool \
             average alone ignores the same-day and 30-day rules"
        }
        _ => {
            "UK disposals are matched by the share-matching rules (same day, 30 days, Section \
             104 pool: TCGA 1992 s.104-106A, HMRC CRYPTO22200); no lot order can be chosen"
        }
    })
}

/// One day's acquisitions or disposals of one token, treated as one.
struct Side<'e> {
    events: Vec<&'e Event>,
    quantity: Decimal,
    /// Acquisitions: cost with fees; `None` when any is unpriced.
    cost: Option<Decimal>,
    /// What the earlier rules have not matched yet.
    left: Decimal,
    cost_left: Option<Decimal>,
}

impl<'e> Side<'e> {
    fn new() -> Self {
        Side {
            events: Vec::new(),
            quantity: Decimal::ZERO,
            cost: Some(Decimal::ZERO),
            left: Decimal::ZERO,
            cost_left: Some(Decimal::ZERO),
        }
    }

    fn push(&mut self, event: &'e Event) {
        self.quantity += event.quantity;
        self.cost = self
            .cost
            .zip(event.usd_value)
            .map(|(c, v)| c + v + event.fee_usd);
        self.left = self.quantity;
        self.cost_left = self.cost;
        self.events.push(event);
    }

    /// Take `quantity` of what is left, with its share of the cost.
    fn take(&mut self, quantity: Decimal) -> Option<Decimal> {
        let part = self.cost_left.map(|c| share(c, quantity, self.left));
        if let (Some(c), Some(p)) = (self.cost_left.as_mut(), part) {
            *c -= p;
        }
        self.left -= quantity;
        part
    }
}

struct Day<'e> {
    date: NaiveDate,
    acquired: Side<'e>,
    disposed: Side<'e>,
    matches: Vec<Match>,
}

/// Part of a day's disposals matched by one rule.
struct Match {
    rule: Rule,
    quantity: Decimal,
    cost: Option<Decimal>,
    /// The matched acquisition (time, seq); `None` for the pool.
    acquisition: Option<(i64, u64)>,
    uncovered: bool,
}

#[derive(Default)]
struct Pool {
    quantity: Decimal,
    cost: Decimal,
    unpriced: bool,
}

/// Replay under share matching: rows with their sale costs, and the
/// Section 104 pools left.
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
        let mut days = days_of(&list, zone);
        match_days(&mut days);
        let pool = pool_days(&mut days);
        for day in &days {
            rows_of(asset, day, &mut rows);
        }
        if pool.quantity > Decimal::ZERO {
            holdings.push(Holding {
                asset: asset.to_owned(),
                holder: Holder::AllWallets,
                quantity: pool.quantity,
                cost: (!pool.unpriced).then_some(pool.cost),
                acquired: None,
                seq: None,
            });
        }
    }
    rows.sort_by_key(|(r, _): &(Disposal, Decimal)| (r.disposed, r.disposal_seq));
    (rows, holdings)
}

fn days_of<'e>(list: &[&'e Event], zone: Zone) -> Vec<Day<'e>> {
    let mut days: Vec<Day<'e>> = Vec::new();
    for e in list {
        let date = zone.date(e.time).unwrap_or_default();
        if days.last().is_none_or(|d| d.date != date) {
            days.push(Day {
                date,
                acquired: Side::new(),
                disposed: Side::new(),
                matches: Vec::new(),
            });
        }
        if let Some(day) = days.last_mut() {
            match e.kind {
                EventKind::Acquire | EventKind::Income => day.acquired.push(e),
                _ => day.disposed.push(e),
            }
        }
    }
    days
}

/// The same-day rule on every day, then the 30-day rule for each day's
/// disposals in date order, each taking the earliest acquisitions first.
fn match_days(days: &mut [Day<'_>]) {
    // TCGA 1992 s.105(1); CRYPTO22202 (same day).
    for day in days.iter_mut() {
        let quantity = day.acquired.left.min(day.disposed.left);
        if quantity > Decimal::ZERO {
            let first = day.acquired.events[0];
            let cost = day.acquired.take(quantity);
            day.disposed.left -= quantity;
            day.matches.push(Match {
                rule: Rule::SameDay,
                quantity,
                cost,
                acquisition: Some((first.time, first.seq)),
                uncovered: false,
            });
        }
    }
    // TCGA 1992 s.106A(5); CRYPTO22203 (30 days after the disposal).
    for d in 0..days.len() {
        let Some(last) = days[d].date.checked_add_days(Days::new(30)) else {
            continue;
        };
        let mut e = d + 1;
        while days[d].disposed.left > Decimal::ZERO && e < days.len() && days[e].date <= last {
            let quantity = days[d].disposed.left.min(days[e].acquired.left);
            if quantity > Decimal::ZERO {
                let first = days[e].acquired.events[0];
                let cost = days[e].acquired.take(quantity);
                days[d].disposed.left -= quantity;
                days[d].matches.push(Match {
                    rule: Rule::BedAndBreakfast,
                    quantity,
                    cost,
                    acquisition: Some((first.time, first.seq)),
                    uncovered: false,
                });
            }
            e += 1;
        }
    }
}

/// The Section 104 pool (TCGA 1992 s.104; CRYPTO22204): what is left of
/// each day's disposals comes out at the pool's average cost, then what is
/// left of its acquisitions goes in.
fn pool_days(days: &mut [Day<'_>]) -> Pool {
    let mut pool = Pool::default();
    for day in days.iter_mut() {
        let wanted = day.disposed.left;
        if wanted > Decimal::ZERO {
            let quantity = wanted.min(pool.quantity);
            if quantity > Decimal::ZERO {
                let cost = share(pool.cost, quantity, pool.quantity);
                let known = !pool.unpriced;
                pool.cost -= cost;
                pool.quantity -= quantity;
                if pool.quantity.is_zero() {
                    pool = Pool::default();
                }
                day.matches.push(Match {
                    rule: Rule::Section104,
                    quantity,
                    cost: known.then_some(cost),
                    acquisition: None,
                    uncovered: false,
                });
            }
            if wanted > quantity {
                day.matches.push(Match {
                    rule: Rule::Section104,
                    quantity: wanted - quantity,
                    cost: None,
                    acquisition: None,
                    uncovered: true,
                });
            }
            day.disposed.left = Decimal::ZERO;
        }
        let left = day.acquired.left;
        if left > Decimal::ZERO {
            let cost = day.acquired.take(left);
            pool.quantity += left;
            match cost {
                Some(c) => pool.cost += c,
                None => pool.unpriced = true,
            }
        }
    }
    pool
}

/// Spread a day's matches over its disposals in time order.
fn rows_of(asset: &str, day: &Day<'_>, rows: &mut Vec<(Disposal, Decimal)>) {
    let mut matches = day.matches.iter();
    let mut current = matches.next();
    let (mut m_left, mut m_cost) = current.map_or((Decimal::ZERO, None), |m| (m.quantity, m.cost));
    for event in &day.disposed.events {
        let mut need = event.quantity;
        let mut proceeds_left = event.usd_value;
        let mut fee_left = event.fee_usd;
        while need > Decimal::ZERO {
            let Some(m) = current else { break };
            let quantity = need.min(m_left);
            let cost = m_cost.map(|c| share(c, quantity, m_left));
            if let (Some(c), Some(p)) = (m_cost.as_mut(), cost) {
                *c -= p;
            }
            let proceeds = proceeds_left.map(|p| share(p, quantity, need));
            if let (Some(p), Some(part)) = (proceeds_left.as_mut(), proceeds) {
                *p -= part;
            }
            let fee = share(fee_left, quantity, need);
            fee_left -= fee;
            let basis = cost.map(|c| c + fee);
            rows.push((
                Disposal {
                    asset: asset.to_owned(),
                    quantity,
                    acquired: m.acquisition.map(|(t, _)| t),
                    disposed: event.time,
                    proceeds,
                    basis,
                    gain: proceeds.zip(basis).map(|(p, b)| p - b),
                    term: None,
                    uncovered: m.uncovered,
                    disposal_seq: event.seq,
                    lot_seq: m.acquisition.map(|(_, s)| s),
                    rule: m.rule,
                },
                fee,
            ));
            need -= quantity;
            m_left -= quantity;
            if m_left <= Decimal::ZERO {
                current = matches.next();
                (m_left, m_cost) = current.map_or((Decimal::ZERO, None), |m| (m.quantity, m.cost));
            }
        }
    }
}

/// One tax year as on SA108 (cryptoassets boxes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub tax_year: String,
    /// Same-day disposals of a token count as one (TCGA 1992 s.105(1)).
    pub disposals: u64,
    /// Gross.
    pub proceeds: Decimal,
    /// Acquisition costs matched, plus the disposals' own costs.
    pub allowable_costs: Decimal,
    /// Sum of the disposals that made a gain.
    pub gains: Decimal,
    /// Sum of the disposals that made a loss, as a positive amount.
    pub losses: Decimal,
    /// 2024-25 only: the gains and losses of disposals on or after 30
    /// October 2024, when the main rates rose from 10%/20% to 18%/24%
    /// (Autumn Budget 2024). The 2024-25 SA108 keeps one set of boxes; the
    /// "adjustment to Capital Gains Tax" (box 51) is worked out from these
    /// (SA108 Notes 2025; gov.uk "Work out your Capital Gains Tax adjustment
    /// for the 2024 to 2025 tax year").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gains_from_2024_10_30: Option<Decimal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub losses_from_2024_10_30: Option<Decimal>,
    pub incomplete_rows: u64,
    /// A warning: the year's transfers with no label, by asset and
    /// direction (see [`super::UNLABELLED_WARNING`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unlabelled: Vec<UnlabelledTotal>,
}

/// The first day of the 2024 Autumn Budget's rates.
fn budget_2024() -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(2024, 10, 30)
}

pub fn summaries(rows: &[TaxRow], zone: Zone) -> Vec<YearSummary> {
    by_year(rows)
        .into_iter()
        .map(|(year, rows)| YearSummary::Uk(summary(year, &rows, zone)))
        .collect()
}

fn summary(year: TaxYear, rows: &[&TaxRow], zone: Zone) -> Summary {
    let mut s = Summary {
        tax_year: year.to_string(),
        ..Summary::default()
    };
    let mut disposals: BTreeMap<(&str, Option<NaiveDate>), Option<Decimal>> = BTreeMap::new();
    for r in rows {
        let key = (r.row.asset.as_str(), zone.date(r.row.disposed));
        let entry = disposals.entry(key).or_insert(Some(Decimal::ZERO));
        let (Some(proceeds), Some(basis), Some(gain)) = (r.row.proceeds, r.row.basis, r.row.gain)
        else {
            s.incomplete_rows += 1;
            *entry = None;
            continue;
        };
        s.proceeds += proceeds;
        s.allowable_costs += basis;
        if let Some(total) = entry.as_mut() {
            *total += gain;
        }
    }
    // A day's disposals are one (s.105(1)), so each falls wholly on one
    // side of 30 October 2024.
    let split = year == TaxYear::split(2024);
    if split {
        s.gains_from_2024_10_30 = Some(Decimal::ZERO);
        s.losses_from_2024_10_30 = Some(Decimal::ZERO);
    }
    for ((_, date), gain) in disposals {
        s.disposals += 1;
        let late = split && date >= budget_2024();
        match gain {
            Some(g) if g > Decimal::ZERO => {
                s.gains += g;
                if late && let Some(t) = s.gains_from_2024_10_30.as_mut() {
                    *t += g;
                }
            }
            Some(g) => {
                s.losses -= g;
                if late && let Some(t) = s.losses_from_2024_10_30.as_mut() {
                    *t -= g;
                }
            }
            None => {}
        }
    }
    s
}
