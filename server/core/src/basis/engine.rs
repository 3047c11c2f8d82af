//! The replay: events in time order through one book per pool and asset,
//! each book holding its open lots in the order the method consumes them.
//!
//! FIFO keeps a queue, LIFO a stack, HIFO and LOFO a `BTreeMap` keyed by
//! unit cost (so taking the next lot is O(log n), never a scan), and
//! average cost the FIFO queue for dates plus a pool of quantity and basis.
//! Basis and proceeds split across rows proportionally to quantity, rounded
//! to [`USD_DP`] decimal places, and the last piece of a lot or disposal
//! takes the remainder: a lot's basis and a disposal's proceeds are never
//! created or lost by rounding, and each row's gain is `proceeds - basis`
//! exactly.
//!
//! A plain [`replay`] has one pool. The taxpayer's books ([`super::books`])
//! drive an [`Engine`] with one pool per wallet (and one for lots parked at
//! an exchange), moving lots between pools with their dates and bases.

use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    hash::{BuildHasherDefault, Hasher},
};

use chrono::{DateTime, Months, NaiveDate};
use rust_decimal::{Decimal, RoundingStrategy};

use super::{AssetSummary, Disposal, Event, EventKind, Lot, Method, Replay, Rule, Term, Totals};

/// Decimal places USD shares are rounded to when a lot or disposal is split.
pub const USD_DP: u32 = 8;

/// Replay `events` under `method`.
///
/// Events are taken in `(time, seq)` order whatever their order in the
/// slice. Events with a zero or negative quantity are ignored. Never
/// panics on unpriced values or on disposing more than was acquired: see
/// [`Disposal::uncovered`] and [`Disposal::is_complete`].
pub fn replay(events: &[Event], method: Method) -> Replay {
    let mut order: Vec<&Event> = events.iter().collect();
    if !order.is_sorted_by_key(|e| (e.time, e.seq)) {
        order.sort_by_key(|e| (e.time, e.seq));
    }
    let mut engine = Engine::new(method);
    for event in order {
        engine.apply(0, event);
    }
    engine.finish().0
}

/// The engine's book lookup, once per event: the Fx hash (rustc's own),
/// several times faster than the default SipHash on a pool id and a short
/// asset name. Nothing depends on the map's order: every walk over it
/// sorts its keys first, or touches each book alone.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// Names a pool of lots: a wallet, the universal pool, an exchange.
pub type PoolId = u32;

/// The replay as a machine the caller feeds in time order: events into a
/// pool, and moves of lots from one pool to another.
pub struct Engine<'a> {
    method: Method,
    books: HashMap<(PoolId, &'a str), Book, BuildHasherDefault<FxHasher>>,
    disposals: Vec<Disposal>,
    /// Whether books sum their rows into [`Totals`] (the summaries of
    /// [`Engine::finish`]).
    totals: bool,
}

impl<'a> Engine<'a> {
    pub fn new(method: Method) -> Self {
        Engine {
            method,
            books: HashMap::default(),
            disposals: Vec::new(),
            totals: true,
        }
    }

    /// Leave the rows out of the summaries' [`Totals`] (they stay zero in
    /// [`Engine::finish`]'s [`Replay`]): for a caller that sums the rows it
    /// takes itself ([`super::stream`] writes them as they come).
    pub fn without_totals(mut self) -> Self {
        self.totals = false;
        self
    }

    fn book(&mut self, pool: PoolId, asset: &'a str) -> &mut Book {
        let (method, totals) = (self.method, self.totals);
        self.books.entry((pool, asset)).or_insert_with(|| {
            let mut book = Book::new(method);
            book.keep_totals = totals;
            book
        })
    }

    /// Apply one event to `pool`. Callers feed events in `(time, seq)`
    /// order; a non-positive quantity is ignored.
    pub fn apply(&mut self, pool: PoolId, event: &'a Event) {
        self.apply_as(pool, event.asset.as_str(), event);
    }

    /// [`Engine::apply`] with the asset named apart from the event, so a
    /// caller that interns assets ([`super::stream`]) can feed events that
    /// live only for the call: the book is `asset`'s, and the event's own
    /// `asset` is only copied into its realized rows (empty there).
    pub fn apply_as(&mut self, pool: PoolId, asset: &'a str, event: &Event) {
        if event.quantity <= Decimal::ZERO {
            return;
        }
        let mut rows = std::mem::take(&mut self.disposals);
        let book = self.book(pool, asset);
        match event.kind {
            EventKind::Acquire => book.acquire(
                event.quantity,
                event.usd_value.map(|v| v + event.fee_usd),
                event.time,
                event.seq,
            ),
            EventKind::Income => {
                book.income_quantity += event.quantity;
                match event.usd_value {
                    Some(v) => book.income_usd += v,
                    None => book.income_unpriced += event.quantity,
                }
                book.acquire(
                    event.quantity,
                    event.usd_value.map(|v| v + event.fee_usd),
                    event.time,
                    event.seq,
                );
            }
            EventKind::Dispose => book.dispose(event, &mut rows),
            EventKind::RentLock => book.rent_locked += event.quantity,
            EventKind::StakeLock => book.staked += event.quantity,
            EventKind::RentRelease => {
                let released = event.quantity.min(book.rent_locked);
                book.rent_locked -= released;
                book.release_excess(event, released);
            }
            EventKind::StakeRelease => {
                // Unstaking returns the wallet's own SOL: its lots never
                // left, so nothing is acquired (nor counted twice) unless
                // more comes back than the replay saw staked.
                let released = event.quantity.min(book.staked);
                book.staked -= released;
                book.release_excess(event, released);
            }
            EventKind::PositionLock => book.in_positions += event.quantity,
            EventKind::PositionRelease => {
                let released = event.quantity.min(book.in_positions);
                book.in_positions -= released;
                book.release_excess(event, released);
            }
            EventKind::PositionSpend => {
                book.in_positions -= event.quantity.min(book.in_positions);
            }
        }
        self.disposals = rows;
    }

    /// Move `quantity` of `asset` from pool `from` to pool `to`: the lots
    /// the method picks leave `from` and arrive in `to` with their
    /// acquisition dates, seqs and bases, and nothing is realized. What
    /// `from` does not hold arrives as a lot of unknown basis acquired at
    /// `time` (its history is outside the books). Returns that shortfall.
    pub fn move_lots(
        &mut self,
        from: PoolId,
        to: PoolId,
        asset: &'a str,
        quantity: Decimal,
        time: i64,
        seq: u64,
    ) -> Decimal {
        if quantity <= Decimal::ZERO || from == to {
            return Decimal::ZERO;
        }
        let (lots, shortfall) = self.book(from, asset).withdraw(quantity);
        let target = self.book(to, asset);
        for lot in lots {
            target.deposit(lot);
        }
        if shortfall > Decimal::ZERO {
            target.acquire(shortfall, None, time, seq);
        }
        shortfall
    }

    /// Move up to the given rent-locked, staked and in-position quantities
    /// of `asset` (each capped by what `from` counts) from pool `from` to
    /// pool `to`. These units are still the owner's and their lots are held
    /// (and moved by [`Engine::move_lots`]) like any other: only the counts
    /// move, so that a later release in `to` unlocks them instead of
    /// opening a new lot at market value.
    pub fn move_locks(
        &mut self,
        from: PoolId,
        to: PoolId,
        asset: &'a str,
        [rent, staked, positions]: [Decimal; 3],
    ) {
        if from == to {
            return;
        }
        let source = self.book(from, asset);
        let rent = rent.min(source.rent_locked).max(Decimal::ZERO);
        let staked = staked.min(source.staked).max(Decimal::ZERO);
        let positions = positions.min(source.in_positions).max(Decimal::ZERO);
        source.rent_locked -= rent;
        source.staked -= staked;
        source.in_positions -= positions;
        let target = self.book(to, asset);
        target.rent_locked += rent;
        target.staked += staked;
        target.in_positions += positions;
    }

    /// The realized rows made since the last call, in replay order: a
    /// caller that writes rows as they are made ([`super::stream`]) takes
    /// them after each event, so they are never all held at once.
    pub fn drain_disposals(&mut self) -> std::vec::Drain<'_, Disposal> {
        self.disposals.drain(..)
    }

    /// Quantity of `asset` open in `pool` (rent deposits included).
    pub fn held(&self, pool: PoolId, asset: &str) -> Decimal {
        self.books
            .get(&(pool, asset))
            .map_or(Decimal::ZERO, Book::open_quantity)
    }

    /// The pools that hold `asset`.
    pub fn pools_of(&self, asset: &str) -> Vec<PoolId> {
        let mut pools: Vec<PoolId> = self
            .books
            .keys()
            .filter(|(_, a)| *a == asset)
            .map(|(p, _)| *p)
            .collect();
        pools.sort_unstable();
        pools
    }

    /// From now on, dispose by `method`: every book's open lots are
    /// re-ordered for it, keeping their dates and bases (a US standing order
    /// takes effect at its date, Treas. Reg. §1.1012-1(c)(8), (j)). A change
    /// to or from average cost is not made: an average is a different cost,
    /// not an order, so that method must hold from the start.
    pub fn set_method(&mut self, method: Method) {
        if method == self.method || method == Method::Average || self.method == Method::Average {
            return;
        }
        self.method = method;
        for book in self.books.values_mut() {
            let old = std::mem::replace(&mut book.lots, Lots::for_method(method));
            for lot in old.into_vec() {
                book.lots.push(lot);
            }
            book.method = method;
        }
    }

    /// Quantity and basis (`None` when any is unknown) of the open lots of
    /// `asset` in `pool`.
    pub fn open_in(&self, pool: PoolId, asset: &str) -> (Decimal, Option<Decimal>) {
        let Some(book) = self.books.get(&(pool, asset)) else {
            return (Decimal::ZERO, Some(Decimal::ZERO));
        };
        let mut quantity = Decimal::ZERO;
        let mut basis = Some(Decimal::ZERO);
        for lot in book.lots.iter() {
            quantity += lot.quantity;
            basis = basis.zip(lot.basis).map(|(a, b)| a + b);
        }
        (quantity, basis)
    }

    /// The assets any pool has seen, by name.
    pub fn assets(&self) -> Vec<&'a str> {
        let mut names: Vec<&'a str> = self.books.keys().map(|(_, a)| *a).collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The replay, and for each of its open lots the pool holding it.
    /// Summaries and totals add up every pool of an asset.
    pub fn finish(self) -> (Replay, Vec<PoolId>) {
        let method = self.method;
        let mut keys: Vec<(PoolId, &str)> = self.books.keys().copied().collect();
        keys.sort_unstable_by_key(|(pool, asset)| (*asset, *pool));
        let mut books = self.books;
        let mut open: Vec<(Lot, PoolId)> = Vec::new();
        let mut assets: Vec<AssetSummary> = Vec::new();
        let mut total = Totals::default();
        for key in keys {
            let Some(book) = books.remove(&key) else {
                continue;
            };
            let (summary, lots) = book.finish(key.1);
            total.merge(&summary.totals);
            open.extend(lots.into_iter().map(|l| (l, key.0)));
            match assets.last_mut() {
                Some(last) if last.asset == summary.asset => last.merge(&summary),
                _ => assets.push(summary),
            }
        }
        open.sort_by(|a, b| {
            (a.0.asset.as_str(), a.0.acquired, a.0.seq, a.1).cmp(&(
                b.0.asset.as_str(),
                b.0.acquired,
                b.0.seq,
                b.1,
            ))
        });
        let (open_lots, pools) = open.into_iter().unzip();
        (
            Replay {
                method,
                disposals: self.disposals,
                open_lots,
                assets,
                total,
            },
            pools,
        )
    }
}

impl AssetSummary {
    fn merge(&mut self, other: &AssetSummary) {
        self.acquired_quantity += other.acquired_quantity;
        self.disposed_quantity += other.disposed_quantity;
        self.open_quantity += other.open_quantity;
        self.uncovered_quantity += other.uncovered_quantity;
        self.rent_locked += other.rent_locked;
        self.totals.merge(&other.totals);
    }
}

/// Whether a disposal on `disposed` of a lot acquired on `acquired` (unix
/// seconds, dates taken in UTC) is long term: the holding period starts the
/// day after acquisition and must exceed one year, so the disposal date
/// must be after the same calendar date one year on. Acquired on the last
/// day of a month (Feb 29 included), long term starts on the first day of
/// the 13th month after (Rev. Rul. 66-7).
pub fn term(acquired: i64, disposed: i64) -> Term {
    // Twelve months after a date are 365 or 366 days after it, so only a
    // gap of 366 days needs the calendar (a row per lot consumed asks).
    // Within ±250,000 years, where every time has a date.
    const DATED: std::ops::RangeInclusive<i64> = -7_900_000_000_000..=7_900_000_000_000;
    if DATED.contains(&acquired) && DATED.contains(&disposed) {
        match disposed.div_euclid(86_400) - acquired.div_euclid(86_400) {
            ..=365 => return Term::Short,
            367.. => return Term::Long,
            _ => {}
        }
    }
    let (Some(a), Some(d)) = (date(acquired), date(disposed)) else {
        return Term::Short;
    };
    match a.checked_add_months(Months::new(12)) {
        Some(anniversary) if d > anniversary => Term::Long,
        _ => Term::Short,
    }
}

fn date(unix: i64) -> Option<NaiveDate> {
    DateTime::from_timestamp(unix, 0).map(|t| t.date_naive())
}

/// `total * part / whole`, rounded; all of `total` when `part == whole`.
pub(crate) fn share(total: Decimal, part: Decimal, whole: Decimal) -> Decimal {
    if part >= whole {
        return total;
    }
    // part / whole is in (0, 1), so neither step can overflow.
    let ratio = part.checked_div(whole).unwrap_or(Decimal::ONE);
    total
        .checked_mul(ratio)
        .unwrap_or(total)
        .round_dp_with_strategy(USD_DP, RoundingStrategy::MidpointAwayFromZero)
}

struct OpenLot {
    quantity: Decimal,
    basis: Option<Decimal>,
    acquired: i64,
    seq: u64,
}

impl OpenLot {
    /// Take `quantity` (at most all) out of the lot; its share of basis.
    fn take(&mut self, quantity: Decimal) -> Option<Decimal> {
        let part = self.basis.map(|b| share(b, quantity, self.quantity));
        if let (Some(basis), Some(part)) = (self.basis.as_mut(), part) {
            *basis -= part;
        }
        self.quantity -= quantity;
        part
    }
}

/// HIFO and LOFO order: known unit costs, highest (HIFO) or lowest (LOFO)
/// first; then lots of unknown cost. Equal unit costs: oldest first (time,
/// then seq). `pushed` keeps keys unique even if a caller repeats a seq, so
/// no lot is ever overwritten.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct RankKey {
    unknown: bool,
    rank: Decimal,
    acquired: i64,
    seq: u64,
    pushed: u64,
}

impl RankKey {
    fn of(lot: &OpenLot, pushed: u64, highest_first: bool) -> Self {
        let unit_cost = lot
            .basis
            .map(|b| b.checked_div(lot.quantity).unwrap_or(Decimal::MAX));
        let cost = unit_cost.unwrap_or_default();
        RankKey {
            unknown: unit_cost.is_none(),
            rank: if highest_first { -cost } else { cost },
            acquired: lot.acquired,
            seq: lot.seq,
            pushed,
        }
    }
}

/// Open lots in the order a method consumes them.
enum Lots {
    Queue(VecDeque<OpenLot>),
    Stack(Vec<OpenLot>),
    /// HIFO (`true`) or LOFO (`false`), and the count of lots pushed.
    Ranked(BTreeMap<RankKey, OpenLot>, u64, bool),
}

impl Lots {
    fn for_method(method: Method) -> Self {
        match method {
            Method::Fifo | Method::Average => Lots::Queue(VecDeque::new()),
            Method::Lifo => Lots::Stack(Vec::new()),
            Method::Hifo => Lots::Ranked(BTreeMap::new(), 0, true),
            Method::Lofo => Lots::Ranked(BTreeMap::new(), 0, false),
        }
    }

    fn iter(&self) -> Box<dyn Iterator<Item = &OpenLot> + '_> {
        match self {
            Lots::Queue(q) => Box::new(q.iter()),
            Lots::Stack(s) => Box::new(s.iter()),
            Lots::Ranked(m, _, _) => Box::new(m.values()),
        }
    }

    fn push(&mut self, lot: OpenLot) {
        match self {
            Lots::Queue(q) => q.push_back(lot),
            Lots::Stack(s) => s.push(lot),
            Lots::Ranked(m, pushed, highest_first) => {
                *pushed += 1;
                m.insert(RankKey::of(&lot, *pushed, *highest_first), lot);
            }
        }
    }

    fn next_mut(&mut self) -> Option<&mut OpenLot> {
        match self {
            Lots::Queue(q) => q.front_mut(),
            Lots::Stack(s) => s.last_mut(),
            Lots::Ranked(m, _, _) => m.values_mut().next(),
        }
    }

    fn pop_next(&mut self) {
        match self {
            Lots::Queue(q) => {
                q.pop_front();
            }
            Lots::Stack(s) => {
                s.pop();
            }
            Lots::Ranked(m, _, _) => {
                m.pop_first();
            }
        }
    }

    fn into_vec(self) -> Vec<OpenLot> {
        let mut lots: Vec<OpenLot> = match self {
            Lots::Queue(q) => q.into(),
            Lots::Stack(s) => s,
            Lots::Ranked(m, _, _) => m.into_values().collect(),
        };
        lots.sort_by_key(|l| (l.acquired, l.seq));
        lots
    }
}

/// Average cost: the pool every lot of the asset belongs to.
#[derive(Default)]
struct Pool {
    quantity: Decimal,
    /// Basis of the priced quantity.
    basis: Decimal,
    /// Quantity acquired unpriced and not yet emptied out: while positive,
    /// the average is unknown.
    unpriced: Decimal,
}

impl Pool {
    fn take(&mut self, quantity: Decimal) -> Option<Decimal> {
        let part = share(self.basis, quantity, self.quantity);
        self.basis -= part;
        self.quantity -= quantity;
        let known = self.unpriced.is_zero();
        if self.quantity <= Decimal::ZERO {
            *self = Pool::default();
        }
        known.then_some(part)
    }
}

struct Book {
    method: Method,
    lots: Lots,
    pool: Pool,
    acquired: Decimal,
    disposed: Decimal,
    uncovered: Decimal,
    /// Lots moved in from, and out to, other pools: not acquisitions or
    /// disposals, so the summary's quantities still balance per pool.
    moved_in: Decimal,
    moved_out: Decimal,
    rent_locked: Decimal,
    in_positions: Decimal,
    staked: Decimal,
    income_quantity: Decimal,
    income_usd: Decimal,
    income_unpriced: Decimal,
    totals: Totals,
    /// False when the engine was made [`Engine::without_totals`].
    keep_totals: bool,
}

impl Book {
    fn new(method: Method) -> Self {
        let lots = Lots::for_method(method);
        Book {
            method,
            lots,
            pool: Pool::default(),
            acquired: Decimal::ZERO,
            disposed: Decimal::ZERO,
            uncovered: Decimal::ZERO,
            moved_in: Decimal::ZERO,
            moved_out: Decimal::ZERO,
            rent_locked: Decimal::ZERO,
            in_positions: Decimal::ZERO,
            staked: Decimal::ZERO,
            income_quantity: Decimal::ZERO,
            income_usd: Decimal::ZERO,
            income_unpriced: Decimal::ZERO,
            totals: Totals::default(),
            keep_totals: true,
        }
    }

    /// What a rent or stake release brought back beyond the `released`
    /// part the replay had seen go out opens a lot at its share of the
    /// event's value.
    fn release_excess(&mut self, event: &Event, released: Decimal) {
        let excess = event.quantity - released;
        if excess > Decimal::ZERO {
            let value = event
                .usd_value
                .map(|v| share(v, excess, event.quantity) + event.fee_usd);
            self.acquire(excess, value, event.time, event.seq);
        }
    }

    fn acquire(&mut self, quantity: Decimal, basis: Option<Decimal>, time: i64, seq: u64) {
        self.acquired += quantity;
        if self.method == Method::Average {
            self.pool.quantity += quantity;
            match basis {
                Some(b) => self.pool.basis += b,
                None => self.pool.unpriced += quantity,
            }
        }
        self.lots.push(OpenLot {
            quantity,
            basis,
            acquired: time,
            seq,
        });
    }

    fn open_quantity(&self) -> Decimal {
        self.acquired + self.moved_in - (self.disposed - self.uncovered) - self.moved_out
    }

    /// Take `quantity` out as whole or split lots in the method's order,
    /// each with its share of basis (the pool's average for average cost);
    /// and the part no lot covered.
    fn withdraw(&mut self, quantity: Decimal) -> (Vec<OpenLot>, Decimal) {
        let mut left = quantity;
        let mut taken = Vec::new();
        while left > Decimal::ZERO {
            let Some(lot) = self.lots.next_mut() else {
                break;
            };
            let part = lot.quantity.min(left);
            let lot_basis = lot.take(part);
            let (acquired, seq, emptied) = (lot.acquired, lot.seq, lot.quantity.is_zero());
            if emptied {
                self.lots.pop_next();
            }
            let basis = match self.method {
                Method::Average => self.pool.take(part),
                _ => lot_basis,
            };
            left -= part;
            taken.push(OpenLot {
                quantity: part,
                basis,
                acquired,
                seq,
            });
        }
        self.moved_out += quantity - left;
        (taken, left)
    }

    /// Take in a lot moved from another pool, keeping its date and basis.
    fn deposit(&mut self, lot: OpenLot) {
        self.moved_in += lot.quantity;
        self.acquired -= lot.quantity;
        self.acquire(lot.quantity, lot.basis, lot.acquired, lot.seq);
    }

    fn dispose(&mut self, event: &Event, out: &mut Vec<Disposal>) {
        self.disposed += event.quantity;
        let mut left = event.quantity;
        let mut proceeds_left = event.usd_value.map(|v| v - event.fee_usd);
        while left > Decimal::ZERO {
            let Some(lot) = self.lots.next_mut() else {
                break;
            };
            let quantity = lot.quantity.min(left);
            let lot_basis = lot.take(quantity);
            let (acquired, lot_seq, emptied) = (lot.acquired, lot.seq, lot.quantity.is_zero());
            if emptied {
                self.lots.pop_next();
            }
            let basis = match self.method {
                Method::Average => self.pool.take(quantity),
                _ => lot_basis,
            };
            let proceeds = proceeds_left.as_mut().map(|p| {
                let part = share(*p, quantity, left);
                *p -= part;
                part
            });
            left -= quantity;
            self.record(
                out,
                Disposal {
                    asset: event.asset.clone(),
                    quantity,
                    acquired: Some(acquired),
                    disposed: event.time,
                    gain: proceeds.zip(basis).map(|(p, b)| p - b),
                    proceeds,
                    basis,
                    term: Some(term(acquired, event.time)),
                    uncovered: false,
                    disposal_seq: event.seq,
                    lot_seq: Some(lot_seq),
                    rule: Rule::from(self.method),
                },
            );
        }
        if left > Decimal::ZERO {
            self.uncovered += left;
            self.record(
                out,
                Disposal {
                    asset: event.asset.clone(),
                    quantity: left,
                    acquired: None,
                    disposed: event.time,
                    proceeds: proceeds_left,
                    basis: None,
                    gain: None,
                    term: None,
                    uncovered: true,
                    disposal_seq: event.seq,
                    lot_seq: None,
                    rule: Rule::from(self.method),
                },
            );
        }
    }

    fn record(&mut self, out: &mut Vec<Disposal>, row: Disposal) {
        if self.keep_totals {
            self.totals.add(&row);
        }
        out.push(row);
    }

    fn finish(self, asset: &str) -> (AssetSummary, Vec<Lot>) {
        let mut lots = self.lots.into_vec();
        if self.method == Method::Average {
            // Every open lot carries the pool's average; the last the remainder.
            let mut basis_left = self.pool.basis;
            let mut quantity_left = self.pool.quantity;
            let known = self.pool.unpriced.is_zero();
            for lot in &mut lots {
                let part = share(basis_left, lot.quantity, quantity_left);
                basis_left -= part;
                quantity_left -= lot.quantity;
                lot.basis = known.then_some(part);
            }
        }
        let open_quantity = lots.iter().map(|l| l.quantity).sum();
        let lots = lots
            .into_iter()
            .map(|l| Lot {
                asset: asset.to_owned(),
                quantity: l.quantity,
                basis: l.basis,
                acquired: l.acquired,
                seq: l.seq,
            })
            .collect();
        let summary = AssetSummary {
            asset: asset.to_owned(),
            acquired_quantity: self.acquired,
            disposed_quantity: self.disposed,
            open_quantity,
            uncovered_quantity: self.uncovered,
            rent_locked: self.rent_locked,
            in_positions: self.in_positions,
            staked: self.staked,
            income_quantity: self.income_quantity,
            income_usd: self.income_usd,
            income_unpriced_quantity: self.income_unpriced,
            totals: self.totals,
        };
        (summary, lots)
    }
}

impl Totals {
    /// Count one realized row: in the sums when complete, apart otherwise.
    pub fn add(&mut self, row: &Disposal) {
        match (row.proceeds, row.basis, row.gain) {
            (Some(proceeds), Some(basis), Some(gain)) => {
                self.rows += 1;
                self.proceeds += proceeds;
                self.basis += basis;
                self.gain += gain;
                match row.term {
                    Some(Term::Long) => self.long_term_gain += gain,
                    _ => self.short_term_gain += gain,
                }
            }
            (proceeds, _, _) => {
                self.incomplete_rows += 1;
                self.incomplete_proceeds += proceeds.unwrap_or_default();
            }
        }
    }

    /// Add another set of totals (another asset, or another wallet).
    pub fn merge(&mut self, other: &Totals) {
        self.proceeds += other.proceeds;
        self.basis += other.basis;
        self.gain += other.gain;
        self.short_term_gain += other.short_term_gain;
        self.long_term_gain += other.long_term_gain;
        self.rows += other.rows;
        self.incomplete_rows += other.incomplete_rows;
        self.incomplete_proceeds += other.incomplete_proceeds;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! dec {
        ($l:literal) => {
            <Decimal as std::str::FromStr>::from_str(stringify!($l)).unwrap()
        };
    }

    const DAY: i64 = 86_400;

    /// `term`'s day-count shortcut agrees with the calendar's twelve months
    /// (Rev. Rul. 66-7) across leap years and month ends, at any second.
    #[test]
    fn term_by_day_count_is_term_by_calendar() {
        let calendar = |a: i64, d: i64| {
            let (a, d) = (date(a).unwrap(), date(d).unwrap());
            if d > a.checked_add_months(Months::new(12)).unwrap() {
                Term::Long
            } else {
                Term::Short
            }
        };
        // 2023-01-01 to 2025-01-01, disposals 360 to 372 days later.
        let mut acquired: i64 = 1_672_531_200 + 3_599;
        while acquired < 1_735_689_600 {
            for days in 360..=372 {
                for second in [0, 1, 43_200, DAY - 1] {
                    let disposed = acquired - acquired.rem_euclid(DAY) + days * DAY + second;
                    assert_eq!(term(acquired, disposed), calendar(acquired, disposed));
                }
            }
            acquired += DAY;
        }
    }

    /// 2023-01-15T00:00:00Z
    const T0: i64 = 1_673_740_800;

    fn at(date: &str) -> i64 {
        NaiveDate::parse_from_str(date, "%Y-%m-%d")
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp()
    }

    fn ev(seq: u64, time: i64, kind: EventKind, qty: Decimal, usd: Option<Decimal>) -> Event {
        Event {
            time,
            seq,
            asset: "sol".into(),
            kind,
            quantity: qty,
            usd_value: usd,
            fee_usd: Decimal::ZERO,
        }
    }

    fn buy(seq: u64, time: i64, qty: Decimal, usd: Decimal) -> Event {
        ev(seq, time, EventKind::Acquire, qty, Some(usd))
    }

    fn sell(seq: u64, time: i64, qty: Decimal, usd: Decimal) -> Event {
        ev(seq, time, EventKind::Dispose, qty, Some(usd))
    }

    /// Three lots: 1 @ 10 (oldest), 1 @ 30, 1 @ 20 (newest); sell 1 for 25.
    fn three_lots() -> Vec<Event> {
        vec![
            buy(0, T0, dec!(1), dec!(10)),
            buy(1, T0 + DAY, dec!(1), dec!(30)),
            buy(2, T0 + 2 * DAY, dec!(1), dec!(20)),
            sell(3, T0 + 3 * DAY, dec!(1), dec!(25)),
        ]
    }

    fn consumed(method: Method, events: &[Event]) -> Vec<Option<u64>> {
        replay(events, method)
            .disposals
            .iter()
            .map(|d| d.lot_seq)
            .collect()
    }

    #[test]
    fn method_parses_its_five_names_and_defaults_to_fifo() {
        for m in Method::ALL {
            assert_eq!(m.as_str().parse::<Method>(), Ok(m));
        }
        assert!("FIFO".parse::<Method>().is_err());
        assert_eq!(Method::default(), Method::Fifo);
        assert!(!Method::Average.accepted_for_us_filings());
        assert_eq!(serde_json::to_string(&Method::Hifo).unwrap(), "\"hifo\"");
    }

    #[test]
    fn fifo_consumes_the_oldest_lot_first() {
        assert_eq!(consumed(Method::Fifo, &three_lots()), vec![Some(0)]);
    }

    #[test]
    fn lifo_consumes_the_newest_lot_first() {
        assert_eq!(consumed(Method::Lifo, &three_lots()), vec![Some(2)]);
    }

    #[test]
    fn hifo_consumes_the_highest_unit_cost_first() {
        let r = replay(&three_lots(), Method::Hifo);
        assert_eq!(r.disposals[0].lot_seq, Some(1));
        assert_eq!(r.disposals[0].gain, Some(dec!(-5)));
    }

    #[test]
    fn lofo_consumes_the_lowest_unit_cost_first() {
        // Lots at 10, 30, 20 per unit: LOFO takes the 10 lot, gain 25 - 10.
        let r = replay(&three_lots(), Method::Lofo);
        assert_eq!(r.disposals[0].lot_seq, Some(0));
        assert_eq!(r.disposals[0].gain, Some(dec!(15)));
        assert_eq!(r.disposals[0].rule, Rule::Lofo);
    }

    #[test]
    fn lofo_ranks_by_unit_cost_with_fees_oldest_first_on_ties_unknown_last() {
        // Unit costs with fees: seq 0 (1 + 1) / 1 = 2; seq 1 3 / 2 = 1.5;
        // seq 2 1.5 too but newer; seq 3 unpriced.
        let mut dear = buy(0, T0, dec!(1), dec!(1));
        dear.fee_usd = dec!(1);
        let events = vec![
            dear,
            buy(1, T0 + DAY, dec!(2), dec!(3)),
            buy(2, T0 + 2 * DAY, dec!(2), dec!(3)),
            ev(3, T0 + 3 * DAY, EventKind::Acquire, dec!(1), None),
            sell(4, T0 + 4 * DAY, dec!(6), dec!(60)),
        ];
        assert_eq!(
            consumed(Method::Lofo, &events),
            vec![Some(1), Some(2), Some(0), Some(3)]
        );
    }

    #[test]
    fn moving_lots_between_pools_keeps_their_dates_and_basis_and_realizes_nothing() {
        let events = [
            buy(0, at("2023-01-01"), dec!(2), dec!(20)),
            sell(2, at("2024-06-01"), dec!(1), dec!(50)),
        ];
        let mut engine = Engine::new(Method::Fifo);
        engine.apply(0, &events[0]);
        let shortfall = engine.move_lots(0, 1, "sol", dec!(1.5), at("2023-06-01"), 1);
        assert_eq!(shortfall, Decimal::ZERO);
        assert_eq!(engine.held(0, "sol"), dec!(0.5));
        assert_eq!(engine.held(1, "sol"), dec!(1.5));
        engine.apply(1, &events[1]);
        let (r, pools) = engine.finish();
        let d = &r.disposals[0];
        // The moved lot keeps 2023-01-01 and 10 per unit: long term, 40.
        assert_eq!(
            (d.acquired, d.basis, d.gain, d.term),
            (
                Some(at("2023-01-01")),
                Some(dec!(10)),
                Some(dec!(40)),
                Some(Term::Long)
            )
        );
        assert_eq!(pools, vec![0, 1]);
        assert_eq!(r.open_lots[0].quantity + r.open_lots[1].quantity, dec!(1));
        assert_eq!(r.assets[0].open_quantity, dec!(1));
        assert_eq!(r.assets[0].acquired_quantity, dec!(2));
    }

    #[test]
    fn moving_more_than_a_pool_holds_brings_the_rest_at_unknown_basis() {
        let events = [buy(0, T0, dec!(1), dec!(10))];
        let mut engine = Engine::new(Method::Fifo);
        engine.apply(0, &events[0]);
        assert_eq!(engine.move_lots(0, 1, "sol", dec!(3), T0 + DAY, 1), dec!(2));
        let (r, _) = engine.finish();
        let bases: Vec<_> = r.open_lots.iter().map(|l| l.basis).collect();
        assert_eq!(bases, vec![Some(dec!(10)), None]);
    }

    #[test]
    fn lifo_equal_times_consume_the_later_input_first() {
        let events = vec![
            buy(0, T0, dec!(1), dec!(10)),
            buy(1, T0, dec!(1), dec!(20)),
            sell(2, T0 + DAY, dec!(1), dec!(15)),
        ];
        assert_eq!(consumed(Method::Lifo, &events), vec![Some(1)]);
        assert_eq!(consumed(Method::Fifo, &events), vec![Some(0)]);
    }

    #[test]
    fn hifo_equal_unit_costs_consume_the_oldest_first() {
        let events = vec![
            buy(0, T0 + DAY, dec!(2), dec!(40)),
            buy(1, T0, dec!(1), dec!(20)),
            buy(2, T0, dec!(3), dec!(60)),
            sell(3, T0 + 2 * DAY, dec!(1), dec!(15)),
        ];
        // All at 20 per unit: seq 1 and 2 share the oldest time; seq 1 wins.
        assert_eq!(consumed(Method::Hifo, &events), vec![Some(1)]);
    }

    #[test]
    fn hifo_consumes_unpriced_lots_last() {
        let events = vec![
            ev(0, T0, EventKind::Acquire, dec!(1), None),
            buy(1, T0 + DAY, dec!(1), dec!(0.01)),
            sell(2, T0 + 2 * DAY, dec!(2), dec!(10)),
        ];
        assert_eq!(consumed(Method::Hifo, &events), vec![Some(1), Some(0)]);
    }

    #[test]
    fn events_with_equal_times_replay_in_seq_order_whatever_the_slice_order() {
        let mut events = vec![sell(1, T0, dec!(1), dec!(5)), buy(0, T0, dec!(1), dec!(3))];
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.disposals[0].gain, Some(dec!(2)));
        events.reverse();
        assert_eq!(replay(&events, Method::Fifo), r);
    }

    #[test]
    fn a_disposal_over_several_lots_yields_one_row_per_lot() {
        let events = vec![
            buy(0, T0, dec!(1), dec!(10)),
            buy(1, T0 + DAY, dec!(2), dec!(40)),
            sell(2, T0 + 2 * DAY, dec!(2), dec!(60)),
        ];
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.disposals.len(), 2);
        let rows: Vec<_> = r
            .disposals
            .iter()
            .map(|d| (d.quantity, d.proceeds, d.basis, d.gain))
            .collect();
        assert_eq!(
            rows,
            vec![
                (dec!(1), Some(dec!(30)), Some(dec!(10)), Some(dec!(20))),
                (dec!(1), Some(dec!(30)), Some(dec!(20)), Some(dec!(10))),
            ]
        );
        assert_eq!(r.open_lots.len(), 1);
        assert_eq!(r.open_lots[0].quantity, dec!(1));
        assert_eq!(r.open_lots[0].basis, Some(dec!(20)));
    }

    #[test]
    fn splitting_a_lot_in_thirds_loses_no_basis_to_rounding() {
        let mut events = vec![buy(0, T0, dec!(3), dec!(10))];
        for i in 1..=3 {
            events.push(sell(i, T0 + i as i64, dec!(1), dec!(4)));
        }
        let r = replay(&events, Method::Fifo);
        let basis: Vec<_> = r.disposals.iter().map(|d| d.basis.unwrap()).collect();
        assert_eq!(
            basis,
            vec![dec!(3.33333333), dec!(3.33333334), dec!(3.33333333)]
        );
        assert_eq!(r.total.basis, dec!(10));
        assert!(r.open_lots.is_empty());
    }

    #[test]
    fn purchase_fees_go_into_basis() {
        let mut b = buy(0, T0, dec!(1), dec!(100));
        b.fee_usd = dec!(1.5);
        let r = replay(&[b, sell(1, T0 + DAY, dec!(1), dec!(110))], Method::Fifo);
        assert_eq!(r.disposals[0].basis, Some(dec!(101.5)));
    }

    #[test]
    fn sale_fees_reduce_proceeds() {
        let mut s = sell(1, T0 + DAY, dec!(1), dec!(110));
        s.fee_usd = dec!(2);
        let r = replay(&[buy(0, T0, dec!(1), dec!(100)), s], Method::Fifo);
        assert_eq!(r.disposals[0].proceeds, Some(dec!(108)));
        assert_eq!(r.disposals[0].gain, Some(dec!(8)));
    }

    #[test]
    fn held_exactly_one_year_is_short_term() {
        assert_eq!(term(at("2023-01-15"), at("2024-01-15")), Term::Short);
        // Same date a year on, even late in the day, is still short.
        assert_eq!(
            term(at("2023-01-15") - 43_000, at("2024-01-15") + 40_000),
            Term::Short
        );
    }

    #[test]
    fn held_one_year_and_a_day_is_long_term() {
        assert_eq!(term(at("2023-01-15"), at("2024-01-16")), Term::Long);
    }

    #[test]
    fn acquired_on_a_month_end_turns_long_on_the_first_of_the_thirteenth_month() {
        assert_eq!(term(at("2020-02-29"), at("2021-02-28")), Term::Short);
        assert_eq!(term(at("2020-02-29"), at("2021-03-01")), Term::Long);
        assert_eq!(term(at("2023-01-31"), at("2024-01-31")), Term::Short);
        assert_eq!(term(at("2023-01-31"), at("2024-02-01")), Term::Long);
    }

    #[test]
    fn totals_split_gains_by_term() {
        let events = vec![
            buy(0, at("2022-01-01"), dec!(1), dec!(10)),
            buy(1, at("2023-06-01"), dec!(1), dec!(20)),
            sell(2, at("2023-07-01"), dec!(2), dec!(50)),
        ];
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.total.long_term_gain, dec!(15));
        assert_eq!(r.total.short_term_gain, dec!(5));
        assert_eq!(r.total.gain, dec!(20));
    }

    #[test]
    fn disposing_more_than_held_records_an_uncovered_row_with_unknown_basis() {
        let events = vec![
            buy(0, T0, dec!(1), dec!(10)),
            sell(1, T0 + DAY, dec!(3), dec!(60)),
        ];
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.disposals.len(), 2);
        let last = &r.disposals[1];
        assert!(last.uncovered);
        assert_eq!(
            (last.quantity, last.proceeds, last.basis, last.acquired),
            (dec!(2), Some(dec!(40)), None, None)
        );
        assert_eq!(r.assets[0].uncovered_quantity, dec!(2));
        assert_eq!(r.total.gain, dec!(10));
        assert_eq!(r.total.incomplete_rows, 1);
        assert_eq!(r.total.incomplete_proceeds, dec!(40));
    }

    #[test]
    fn an_unpriced_acquisition_has_unknown_basis_and_stays_out_of_totals() {
        let events = vec![
            ev(0, T0, EventKind::Acquire, dec!(1), None),
            sell(1, T0 + DAY, dec!(1), dec!(5)),
        ];
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.disposals[0].basis, None);
        assert_eq!(r.disposals[0].gain, None);
        assert_eq!(r.total.rows, 0);
        assert_eq!(r.total.incomplete_proceeds, dec!(5));
    }

    #[test]
    fn an_unpriced_disposal_has_unknown_proceeds_and_still_consumes_lots() {
        let events = vec![
            buy(0, T0, dec!(2), dec!(10)),
            ev(1, T0 + DAY, EventKind::Dispose, dec!(1), None),
        ];
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.disposals[0].proceeds, None);
        assert_eq!(r.disposals[0].basis, Some(dec!(5)));
        assert_eq!(r.open_lots[0].quantity, dec!(1));
        assert_eq!(r.total.incomplete_rows, 1);
    }

    #[test]
    fn average_cost_uses_the_pooled_unit_cost_and_fifo_dates() {
        let events = vec![
            buy(0, at("2022-01-01"), dec!(1), dec!(10)),
            buy(1, at("2023-06-01"), dec!(1), dec!(30)),
            sell(2, at("2023-07-01"), dec!(1), dec!(25)),
        ];
        let r = replay(&events, Method::Average);
        let d = &r.disposals[0];
        assert_eq!(
            (d.lot_seq, d.basis, d.term),
            (Some(0), Some(dec!(20)), Some(Term::Long))
        );
        assert_eq!(r.open_lots[0].seq, 1);
        assert_eq!(r.open_lots[0].basis, Some(dec!(20)));
    }

    #[test]
    fn average_cost_is_unknown_while_the_pool_holds_unpriced_quantity() {
        let events = vec![
            buy(0, T0, dec!(1), dec!(10)),
            ev(1, T0 + DAY, EventKind::Acquire, dec!(1), None),
            sell(2, T0 + 2 * DAY, dec!(1), dec!(25)),
            sell(3, T0 + 3 * DAY, dec!(1), dec!(25)),
            buy(4, T0 + 4 * DAY, dec!(1), dec!(7)),
            sell(5, T0 + 5 * DAY, dec!(1), dec!(8)),
        ];
        let r = replay(&events, Method::Average);
        let basis: Vec<_> = r.disposals.iter().map(|d| d.basis).collect();
        // The pool empties after seq 3, so seq 5 is priced again.
        assert_eq!(basis, vec![None, None, Some(dec!(7))]);
    }

    #[test]
    fn rent_lock_moves_no_lot_and_release_unlocks_it() {
        let events = vec![
            buy(0, T0, dec!(1), dec!(100)),
            ev(1, T0 + 1, EventKind::RentLock, dec!(0.002), Some(dec!(0.2))),
        ];
        let r = replay(&events, Method::Fifo);
        assert!(r.disposals.is_empty());
        assert_eq!(r.assets[0].rent_locked, dec!(0.002));
        assert_eq!(r.rent_locked_lamports(), 2_000_000);
        assert_eq!(r.open_lots[0].quantity, dec!(1));

        let mut events = events;
        events.push(ev(
            2,
            T0 + 2,
            EventKind::RentRelease,
            dec!(0.002),
            Some(dec!(0.2)),
        ));
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.rent_locked_lamports(), 0);
        assert_eq!(r.open_lots.len(), 1);
        assert_eq!(r.assets[0].acquired_quantity, dec!(1));
    }

    #[test]
    fn rent_released_beyond_what_was_locked_opens_a_lot_at_fair_value() {
        let events = vec![
            ev(0, T0, EventKind::RentLock, dec!(0.001), Some(dec!(0.1))),
            ev(
                1,
                T0 + 1,
                EventKind::RentRelease,
                dec!(0.003),
                Some(dec!(0.3)),
            ),
        ];
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.open_lots.len(), 1);
        assert_eq!(r.open_lots[0].quantity, dec!(0.002));
        assert_eq!(r.open_lots[0].basis, Some(dec!(0.2)));
        assert_eq!(r.assets[0].rent_locked, Decimal::ZERO);
    }

    #[test]
    fn hifo_keeps_every_lot_even_when_a_caller_repeats_a_seq() {
        let events = vec![
            buy(7, T0, dec!(1), dec!(10)),
            buy(7, T0, dec!(1), dec!(10)),
            sell(8, T0 + DAY, dec!(2), dec!(30)),
        ];
        let r = replay(&events, Method::Hifo);
        assert_eq!(r.assets[0].uncovered_quantity, Decimal::ZERO);
        assert_eq!(r.total.basis, dec!(20));
    }

    #[test]
    fn non_positive_quantities_are_ignored() {
        let events = vec![buy(0, T0, dec!(0), dec!(1)), sell(1, T0, dec!(-1), dec!(1))];
        let r = replay(&events, Method::Fifo);
        assert!(r.disposals.is_empty() && r.open_lots.is_empty());
    }
}
