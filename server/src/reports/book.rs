//! One wallet's books for a report: its legs, read and valued exactly as
//! `get_positions` reads and values them, and the `basis` replay of every
//! leg up to the end of the range. Every format reads a [`Book`] and
//! nothing else, so the numbers of two formats (and of `get_positions`
//! over the same legs) are the same numbers.
//!
//! The range works as a tax year does: the replay runs over everything up
//! to its end (a lot bought before the range still carries its basis),
//! and only what happened inside it is reported: legs, income, fees and
//! the realized rows of disposals inside `[from, to]`. Open positions and
//! the closing value are as of the end; the opening value as of the start.
//! A mint whose price at either is unavailable (its source down) counts at
//! its last known close and is named as stale, never valued at zero.

use std::collections::BTreeMap;

use rust_decimal::Decimal;

use crate::{
    analytics::{Leg, positions::inputs, scanned_legs, value_history::StaleMint},
    basis::{self, Disposal, Event, Method, Replay, Totals},
    error::AppError,
    ledger::{OperationType, SOL, protocols::stake},
    prices::valuation::Valuer,
    reads::Reads,
    solana::WalletAddress,
    values::rfc3339,
};

/// Inclusive bounds in unix seconds; none is unbounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Range {
    pub from: Option<i64>,
    pub to: Option<i64>,
}

impl Range {
    pub fn contains(&self, t: i64) -> bool {
        self.from.is_none_or(|f| t >= f) && self.to.is_none_or(|to| t <= to)
    }
}

/// A wallet's books.
pub struct Book {
    pub address: String,
    pub method: Method,
    pub exclude_spam: bool,
    pub range: Range,
    /// When the range ends: `to`, or now (unix seconds).
    pub end: i64,
    /// Every leg up to the end, oldest first (spam left out when asked).
    pub legs: Vec<Leg>,
    /// Each leg's USD value at its block time (absolute), as the replay saw it.
    pub values: Vec<Option<Decimal>>,
    pub valuer: Valuer,
    /// Prices at the start and end of the range (the legs' valuer knows
    /// only the legs' span; a range usually ends after the last leg), and
    /// over the whole range for the PDF's chart. Each falls back to
    /// `valuer`.
    pub at_start: Valuer,
    pub at_end: Valuer,
    pub over_range: Option<Valuer>,
    /// The replay's events and result over `legs`.
    pub events: Vec<Event>,
    pub replay: Replay,
}

/// A leg's time as the replay reads it (a leg without one at 0).
pub fn time_of(leg: &Leg) -> i64 {
    leg.block_time.unwrap_or(0)
}

/// `amount` atomic units as whole tokens, exact.
pub fn whole(amount: i128, decimals: u32) -> Decimal {
    Decimal::try_from_i128_with_scale(amount, decimals.min(28)).unwrap_or_default()
}

/// Add `leg` to the balances it moves (a mint's first leg names its decimals).
/// Holdings include staked SOL, so moves into and out of the wallet's own
/// stake accounts change nothing.
fn add(balances: &mut BTreeMap<String, (i128, u32)>, leg: &Leg) {
    if OperationType::parse(&leg.operation_type).is_some_and(stake::within_holdings) {
        return;
    }
    match balances.get_mut(&leg.mint) {
        Some((amount, _)) => *amount += leg.amount,
        None => {
            balances.insert(leg.mint.clone(), (leg.amount, leg.decimals));
        }
    }
}

/// A decimal as reports write money and quantities: no trailing zeros.
pub fn text(d: Decimal) -> String {
    d.normalize().to_string()
}

/// USD to the cent, as forms and import templates want it.
pub fn cents(d: Decimal) -> String {
    d.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
        .to_string()
}

impl Book {
    /// Read, value and replay `wallet` for a report over `range`.
    pub async fn read(
        reads: &Reads<'_>,
        wallet: &WalletAddress,
        method: Method,
        exclude_spam: bool,
        range: Range,
        now_s: i64,
    ) -> Result<Self, AppError> {
        let all = scanned_legs(reads, wallet).await?;
        // The valuer is made as get_positions makes it (over every leg's
        // span and mints), so each leg is valued alike by both.
        let times = all.iter().filter_map(|l| l.block_time);
        let span = times.clone().min().zip(times.max());
        let mut mints: Vec<String> = all.iter().map(|l| l.mint.clone()).collect();
        mints.sort();
        mints.dedup();
        let valuer = reads.valuer(mints.clone(), span).await?;
        let mut book = Self::new(
            wallet.as_str(),
            &all,
            valuer,
            method,
            exclude_spam,
            range,
            now_s,
        );
        if span.is_some() {
            book.at_end = reads
                .valuer(mints.clone(), Some((book.end, book.end)))
                .await?;
            if let Some(from) = range.from {
                book.at_start = reads.valuer(mints, Some((from, from))).await?;
            }
        }
        Ok(book)
    }

    /// Prepare prices over the whole range (the PDF's value chart).
    pub async fn value_over_range(&mut self, reads: &Reads<'_>) -> Result<(), AppError> {
        let first = self.legs.first().map(time_of);
        let start = self.range.from.or(first);
        if let Some(start) = start.filter(|s| *s < self.end) {
            let mut mints: Vec<String> = self.legs.iter().map(|l| l.mint.clone()).collect();
            mints.sort();
            mints.dedup();
            self.over_range = Some(reads.valuer(mints, Some((start, self.end))).await?);
        }
        Ok(())
    }

    /// The books of `legs` (oldest first) under `valuer`: the pure core,
    /// for tests and the benchmark.
    pub fn new(
        address: &str,
        all: &[Leg],
        valuer: Valuer,
        method: Method,
        exclude_spam: bool,
        range: Range,
        now_s: i64,
    ) -> Self {
        let end = range.to.unwrap_or(now_s);
        let legs: Vec<Leg> = all
            .iter()
            .filter(|l| range.to.is_none_or(|to| time_of(l) <= to))
            .filter(|l| !(exclude_spam && l.operation_type == OperationType::AirdropSpam.as_str()))
            .cloned()
            .collect();
        let (inputs, _) = inputs(&legs, &valuer);
        let values = legs
            .iter()
            .map(|l| {
                valuer
                    .value(&l.mint, l.amount, l.decimals, l.block_time)
                    .map(|v| v.abs())
            })
            .collect();
        let events = basis::events_from_legs(&inputs, exclude_spam);
        let replay = basis::replay(&events, method);
        Self {
            address: address.to_owned(),
            method,
            exclude_spam,
            range,
            end,
            legs,
            values,
            valuer,
            at_start: Valuer::default(),
            at_end: Valuer::default(),
            over_range: None,
            events,
            replay,
        }
    }

    /// The legs inside the range with their USD values, oldest first.
    pub fn legs_in_range(&self) -> impl Iterator<Item = (&Leg, Option<Decimal>)> {
        self.legs
            .iter()
            .zip(self.values.iter().copied())
            .filter(|(l, _)| self.range.contains(time_of(l)))
    }

    /// The realized rows of disposals inside the range, in replay order.
    pub fn disposals_in_range(&self) -> impl Iterator<Item = &Disposal> {
        self.replay
            .disposals
            .iter()
            .filter(|d| self.range.contains(d.disposed))
    }

    /// Realized totals over the range: with no range, exactly the
    /// replay's own totals (those of `get_positions`).
    pub fn realized(&self) -> Totals {
        let mut totals = Totals::default();
        for d in self.disposals_in_range() {
            totals.add(d);
        }
        totals
    }

    /// Balances (atomic units, with decimals) of every mint after every leg
    /// at or before `t` (`before` excludes `t` itself).
    pub fn balances_at(&self, t: i64, before: bool) -> BTreeMap<String, (i128, u32)> {
        let mut out = BTreeMap::new();
        // Slot order is not strictly time order (a leg without a time
        // replays at 0), so every leg is looked at.
        for l in &self.legs {
            let lt = time_of(l);
            if lt < t || (!before && lt == t) {
                add(&mut out, l);
            }
        }
        out.retain(|_, (a, _)| *a != 0);
        out
    }

    /// [`Book::balances_at`] each of `times` (after the legs at each), in
    /// one pass over the legs sorted by time rather than one pass a time.
    pub fn balances_at_each(&self, times: &[i64]) -> Vec<BTreeMap<String, (i128, u32)>> {
        let mut order: Vec<&Leg> = self.legs.iter().collect();
        order.sort_by_key(|l| time_of(l));
        let mut sorted_times: Vec<(usize, i64)> = times.iter().copied().enumerate().collect();
        sorted_times.sort_by_key(|(_, t)| *t);
        let mut running = BTreeMap::new();
        let mut next = order.iter().peekable();
        let mut out = vec![BTreeMap::new(); times.len()];
        for (slot, t) in sorted_times {
            while let Some(l) = next.next_if(|l| time_of(l) <= t) {
                add(&mut running, l);
            }
            let mut held = running.clone();
            held.retain(|_, (a, _)| *a != 0);
            out[slot] = held;
        }
        out
    }

    /// The USD value of balances at `t` under `first` (else the legs'
    /// valuer), the mints held that have no price then (left out of the
    /// value), and those whose price then is unavailable (a source down):
    /// valued at their last known close, never at zero, and named with
    /// that close's time and age.
    pub fn value_of(
        &self,
        balances: &BTreeMap<String, (i128, u32)>,
        t: i64,
        first: Option<&Valuer>,
    ) -> (Decimal, Vec<String>, Vec<StaleMint>) {
        let mut total = Decimal::ZERO;
        let mut unpriced = Vec::new();
        let mut stale = Vec::new();
        for (mint, (amount, decimals)) in balances {
            let price = first
                .and_then(|v| v.price_at(mint, t))
                .or_else(|| self.valuer.price_at(mint, t))
                .or_else(|| {
                    let last = first
                        .and_then(|v| v.last_close_before(mint, t))
                        .into_iter()
                        .chain(self.valuer.last_close_before(mint, t))
                        .max_by_key(|(closed, _)| *closed);
                    let (closed, price) = last?;
                    stale.push(StaleMint {
                        mint: mint.clone(),
                        close_at: rfc3339(closed.saturating_mul(1000)),
                        age_secs: t - closed,
                    });
                    Some(price)
                });
            match price.map(|p| crate::prices::valuation::usd(*amount, *decimals, p)) {
                Some(v) => total += v,
                None => unpriced.push(mint.clone()),
            }
        }
        (total, unpriced, stale)
    }

    /// The value at the start of the range (nothing is held before the
    /// first leg) and at its end.
    pub fn value_start(&self) -> (Decimal, Vec<String>, Vec<StaleMint>) {
        match self.range.from {
            Some(from) => self.value_of(&self.balances_at(from, true), from, Some(&self.at_start)),
            None => (Decimal::ZERO, Vec::new(), Vec::new()),
        }
    }

    pub fn value_end(&self) -> (Decimal, Vec<String>, Vec<StaleMint>) {
        self.value_of(
            &self.balances_at(self.end, false),
            self.end,
            Some(&self.at_end),
        )
    }

    /// USD per whole token of `mint` at the end of the range.
    pub fn price_at_end(&self, mint: &str) -> Option<Decimal> {
        self.at_end
            .price_at(mint, self.end)
            .or_else(|| self.valuer.price_at(mint, self.end))
    }

    /// The decimals a mint's legs carry (9 for SOL).
    pub fn decimals_of(&self, mint: &str) -> u32 {
        self.legs
            .iter()
            .find(|l| l.mint == mint)
            .map(|l| l.decimals)
            .unwrap_or(if mint == SOL { 9 } else { 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leg(sig: &str, t: i64, op: OperationType, mint: &str, amount: i128) -> Leg {
        Leg {
            signature: sig.into(),
            index: 0,
            block_time: Some(t),
            operation_type: op.as_str().into(),
            mint: mint.into(),
            amount,
            decimals: 9,
            counterparties: Vec::new(),
            position: None,
            router: None,
        }
    }

    #[test]
    fn a_range_keeps_the_basis_of_earlier_lots_and_reports_only_its_own_disposals() {
        let legs = vec![
            leg("a", 100, OperationType::TransferIn, SOL, 2_000_000_000),
            leg("b", 200, OperationType::TransferOut, SOL, -500_000_000),
            leg("c", 300, OperationType::TransferOut, SOL, -500_000_000),
            leg("d", 400, OperationType::TransferIn, SOL, 1_000_000_000),
        ];
        let range = Range {
            from: Some(250),
            to: Some(350),
        };
        let book = Book::new(
            "w",
            &legs,
            Valuer::default(),
            Method::Fifo,
            false,
            range,
            1000,
        );
        assert_eq!(book.legs.len(), 3, "legs after the end are not replayed");
        assert_eq!(book.legs_in_range().count(), 1);
        let rows: Vec<&Disposal> = book.disposals_in_range().collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].disposed, 300);
        assert_eq!(rows[0].acquired, Some(100), "the lot from before the range");
        let start = book.balances_at(250, true);
        assert_eq!(start[SOL].0, 1_500_000_000);
        let end = book.balances_at(book.end, false);
        assert_eq!(end[SOL].0, 1_000_000_000);
    }

    #[test]
    fn balances_at_each_time_agree_with_one_time_at_a_time() {
        // Out of time order on purpose, with a leg without a time, two
        // mints and a balance that returns to zero.
        let mut legs = vec![
            leg("a", 300, OperationType::TransferIn, SOL, 5),
            leg("b", 100, OperationType::TransferIn, SOL, 2),
            leg("c", 200, OperationType::TransferIn, "USDC", 7),
            leg("d", 200, OperationType::TransferOut, "USDC", -7),
            leg("e", 400, OperationType::TransferOut, SOL, -1),
        ];
        legs[1].block_time = None;
        let book = Book::new(
            "w",
            &legs,
            Valuer::default(),
            Method::Fifo,
            false,
            Range::default(),
            1000,
        );
        let times = [400, -5, 0, 150, 200, 299, 300, 1000];
        let each = book.balances_at_each(&times);
        for (t, got) in times.iter().zip(&each) {
            assert_eq!(got, &book.balances_at(*t, false), "at {t}");
        }
        assert_eq!(each[0][SOL].0, 6);
        assert!(
            !each[4].contains_key("USDC"),
            "a balance back at zero is left out"
        );
    }
}
