//! The taxpayer's books: several wallets of one person replayed together.
//!
//! A tax return covers a person, not a wallet. Their wallets' events come
//! in together, each saying which wallet it belongs to and, for a transfer,
//! what the account says the other side is ([`Counterparty`]):
//! - **own wallet**: the send in one wallet and the receive in the other
//!   carry the same signature, so they are paired exactly (no time window,
//!   no amount tolerance) into a **move**: the lots the sending pool's
//!   method picks go to the receiving pool with their acquisition dates and
//!   bases; nothing is realized. The network fee is its own event.
//! - **exchange**: the units go to (or come back from) the person's account
//!   at the exchange, which the books cannot see: the lots leave with their
//!   basis into an `exchange` pool and come back from it; what comes back
//!   beyond what went there arrives at unknown basis (its history is in the
//!   exchange's records). Nothing is realized either way.
//! - **merchant**: a payment, so a disposal at market value (and a refund
//!   an acquisition).
//! - **unlabelled**: follows [`UnlabelledTransfers`]; by default a send is a
//!   disposal and a receive an acquisition at market value, as Koinly and
//!   CoinTracker treat a withdrawal or deposit they cannot match.
//!
//! Whether lots sit in one universal pool per asset or one pool per wallet
//! is the jurisdiction's choice and may change with the date ([`PoolScope`]);
//! at a change from universal to per-wallet the universal pool's lots are
//! allocated to the wallets (see [`allocate`]). Pure: events in, [`Books`]
//! out.

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{
    Event, EventKind, Lot, Method, Replay,
    engine::{Engine, PoolId},
};

/// What the account says is on the other side of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counterparty {
    /// Another wallet of the same taxpayer (watched, or labelled `own_wallet`).
    OwnWallet,
    Exchange,
    Merchant,
    Unlabelled,
}

/// How a transfer to or from an address with no label is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnlabelledTransfers {
    /// A send is a disposal and a receive an acquisition, at market value.
    /// The default: it is what Koinly ("a withdrawal is equivalent to sold
    /// at market price", support article "Transfers between my own wallets
    /// are showing gains or losses") and CoinTracker ("an outflow without a
    /// corresponding inflow ... is treated as a disposal", support article
    /// "How Transfers marked as Sales impact capital gains") do, it never
    /// understates a gain, and it is what Ledger did before labels counted.
    #[default]
    AtMarketValue,
    /// Like an exchange: the lots leave and come back at basis.
    OutOfBooks,
}

/// One pool per asset for all of a person's wallets, or one per wallet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolScope {
    Universal,
    PerWallet,
}

/// The other side of a transfer, matched by signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transfer {
    pub signature: String,
    pub counterparty: Counterparty,
}

/// One event of one wallet. An `Acquire` with a transfer is a receive, a
/// `Dispose` with a transfer a send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalletEvent {
    pub wallet: String,
    pub event: Event,
    pub transfer: Option<Transfer>,
}

/// Where an open lot is held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Holder {
    /// The universal pool (no wallet is named while pools are universal).
    AllWallets,
    Wallet(String),
    /// Sent to an exchange (or an own wallet outside the books) and not back.
    Exchange,
}

/// A move between two own wallets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    pub time: i64,
    pub signature: String,
    pub asset: String,
    pub quantity: Decimal,
    pub from: String,
    pub to: String,
}

/// How the books read a transfer that is not a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Treatment {
    Disposal,
    Acquisition,
    /// Lots left for the exchange (or an own account outside the books).
    OutOfBooks,
    /// Lots came back from there.
    IntoBooks,
}

/// A transfer to or from someone else, listed so it can be matched with
/// the exchange's records or labelled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferRecord {
    pub time: i64,
    pub wallet: String,
    pub signature: String,
    pub asset: String,
    pub quantity: Decimal,
    /// Market value in the books' currency; `None` when unpriced.
    pub value: Option<Decimal>,
    pub counterparty: Counterparty,
    pub treatment: Treatment,
}

/// Unlabelled transfers of one asset in one direction, added up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnlabelledTotal {
    pub asset: String,
    /// `true` for sends.
    pub outgoing: bool,
    pub count: u64,
    pub quantity: Decimal,
    /// Sum of the priced transfers' values.
    pub value: Decimal,
}

/// The taxpayer's books after the replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Books {
    /// Its event `seq`s are indexes into the input slice, so
    /// `input[row.disposal_seq].wallet` is the wallet a row was realized in.
    pub replay: Replay,
    /// For each of `replay.open_lots`, where it is held.
    pub holders: Vec<Holder>,
    pub moves: Vec<MoveRecord>,
    pub transfers: Vec<TransferRecord>,
    /// What the universal pool kept at the change to per-wallet pools.
    pub unallocated: Vec<Unallocated>,
}

impl Books {
    /// Unlabelled transfers by asset and direction, so a person can label them.
    pub fn unlabelled_totals(&self) -> Vec<UnlabelledTotal> {
        unlabelled_totals(&self.transfers)
    }
}

/// The unlabelled ones among `transfers`, by asset and direction.
pub fn unlabelled_totals<'t>(
    transfers: impl IntoIterator<Item = &'t TransferRecord>,
) -> Vec<UnlabelledTotal> {
    let mut totals: BTreeMap<(&str, bool), UnlabelledTotal> = BTreeMap::new();
    for t in transfers
        .into_iter()
        .filter(|t| t.counterparty == Counterparty::Unlabelled)
    {
        let outgoing = matches!(t.treatment, Treatment::Disposal | Treatment::OutOfBooks);
        let total = totals
            .entry((t.asset.as_str(), outgoing))
            .or_insert_with(|| UnlabelledTotal {
                asset: t.asset.clone(),
                outgoing,
                count: 0,
                quantity: Decimal::ZERO,
                value: Decimal::ZERO,
            });
        total.count += 1;
        total.quantity += t.quantity;
        total.value += t.value.unwrap_or_default();
    }
    totals.into_values().collect()
}

/// The universal pool.
pub(crate) const UNIVERSAL: PoolId = 0;
/// Lots at an exchange or an own account outside the books.
pub(crate) const EXCHANGE: PoolId = 1;

/// What the replay does with one input event, decided before it runs.
enum Step {
    Apply,
    /// Moves `quantity` to the wallet of the paired receive (its index).
    MoveTo(usize),
    ToExchange,
    FromExchange,
    /// The receive side of a move, done by its send.
    Skip,
}

/// How the universal pool's unused basis goes to the wallets when pools
/// become per wallet (US, 1 January 2025). Rev. Proc. 2024-28 §5.02–5.03
/// lets the taxpayer allocate by specific units or by a *standing rule*
/// they adopt and record (by 1 January 2025, or for the global allocation
/// before the first 2025 sale); it cannot be changed afterwards, and each
/// wallet receives exactly the units it holds. This is the taxpayer's
/// choice, not Ledger's: the rule is an input, shown in the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllocationRule {
    /// The documented default: wallets in the order of their names each
    /// take their balance of lots, the lots chosen by the method in use
    /// (oldest first under FIFO).
    #[default]
    WalletsByName,
    /// Wallets in the order of their balance, largest first (ties by name),
    /// each taking lots by the method in use.
    LargestWalletFirst,
}

/// What the taxpayer has chosen beyond the method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choices {
    /// When the method (a standing order to identify units) took effect:
    /// disposals before it are FIFO, the rule when no units are identified
    /// (Treas. Reg. §1.1012-1(c)(1), (j)); identification must exist by the
    /// time of the sale. `None`: the method holds for the whole history
    /// (the taxpayer states the order existed before the first sale).
    pub method_from: Option<i64>,
    pub allocation: AllocationRule,
}

/// Basis the universal pool still held after the allocation to wallets:
/// units the books could not place in any wallet. Reported, never used by
/// a later disposal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unallocated {
    pub time: i64,
    pub asset: String,
    pub quantity: Decimal,
    /// `None` when any lot's basis is unknown.
    pub basis: Option<Decimal>,
}

/// Replay a taxpayer's wallets under `method`, pools chosen by `scope` for
/// each event's time. `seq`s of the input are replaced by input indexes;
/// events are taken in `(time, index)` order.
pub fn replay(
    input: &[WalletEvent],
    method: Method,
    unlabelled: UnlabelledTransfers,
    scope: impl Fn(i64) -> PoolScope,
) -> Books {
    replay_with(input, method, unlabelled, scope, Choices::default())
}

/// [`replay`] with the taxpayer's [`Choices`].
pub fn replay_with(
    input: &[WalletEvent],
    method: Method,
    unlabelled: UnlabelledTransfers,
    scope: impl Fn(i64) -> PoolScope,
    choices: Choices,
) -> Books {
    // The engine names events by `seq`, which must be the input index. An
    // input already numbered so (`csv_io::read_books`) is used as it is;
    // otherwise a renumbered copy is made.
    let renumbered: Option<Vec<Event>> = (!input
        .iter()
        .enumerate()
        .all(|(i, e)| e.event.seq == i as u64))
    .then(|| {
        input
            .iter()
            .enumerate()
            .map(|(i, e)| Event {
                seq: i as u64,
                ..e.event.clone()
            })
            .collect()
    });
    let event_at = |i: usize| -> &Event {
        renumbered
            .as_ref()
            .map_or(&input[i].event, |events| &events[i])
    };
    let mut order: Vec<usize> = (0..input.len()).collect();
    if !order.is_sorted_by_key(|&i| input[i].event.time) {
        order.sort_by_key(|&i| (input[i].event.time, i));
    }
    let steps = plan(input, unlabelled);

    let mut wallets: Vec<&str> = input.iter().map(|e| e.wallet.as_str()).collect();
    wallets.sort_unstable();
    wallets.dedup();
    let wallet_pool: HashMap<&str, PoolId> = wallets
        .iter()
        .enumerate()
        .map(|(i, w)| (*w, i as PoolId + 2))
        .collect();

    // Before the standing order's date no units were identified: FIFO.
    let pending_method = choices.method_from.filter(|_| method != Method::Average);
    let mut engine = Engine::new(if pending_method.is_some() {
        Method::Fifo
    } else {
        method
    });
    let mut unallocated = Vec::new();
    let mut balances: HashMap<(&str, &str), Balance> = HashMap::new();
    let mut current: Option<PoolScope> = None;
    let mut moves = Vec::new();
    let mut transfers = Vec::new();
    for i in order {
        let (source, event) = (&input[i], event_at(i));
        if pending_method.is_some_and(|from| event.time >= from) {
            engine.set_method(method);
        }
        let scope_now = scope(event.time);
        if current == Some(PoolScope::Universal) && scope_now == PoolScope::PerWallet {
            let to = Allocation {
                balances: &balances,
                wallets: &wallets,
                wallet_pool: &wallet_pool,
                rule: choices.allocation,
            };
            unallocated.extend(allocate(&mut engine, &to, event.time));
        }
        current = Some(scope_now);
        let pool_of = |wallet: &str| match scope_now {
            PoolScope::Universal => UNIVERSAL,
            PoolScope::PerWallet => wallet_pool.get(wallet).copied().unwrap_or(UNIVERSAL),
        };
        let wallet = source.wallet.as_str();
        let asset = event.asset.as_str();
        match steps[i] {
            Step::Skip => {}
            Step::Apply => {
                engine.apply(pool_of(wallet), event);
                balances.entry((wallet, asset)).or_default().apply(event);
            }
            Step::MoveTo(j) => {
                let to = input[j].wallet.as_str();
                engine.move_lots(
                    pool_of(wallet),
                    pool_of(to),
                    asset,
                    event.quantity,
                    event.time,
                    event.seq,
                );
                balances.entry((wallet, asset)).or_default().held -= event.quantity;
                balances.entry((to, asset)).or_default().held += event.quantity;
                moves.push(move_record(source, to));
            }
            Step::ToExchange | Step::FromExchange => {
                let out = matches!(steps[i], Step::ToExchange);
                let (from, to) = if out {
                    (pool_of(wallet), EXCHANGE)
                } else {
                    (EXCHANGE, pool_of(wallet))
                };
                engine.move_lots(from, to, asset, event.quantity, event.time, event.seq);
                let held = &mut balances.entry((wallet, asset)).or_default().held;
                *held += if out { -event.quantity } else { event.quantity };
            }
        }
        transfers.extend(transfer_record(source, &steps[i]));
    }
    let (replay, pools) = engine.finish();
    let holders = pools
        .into_iter()
        .map(|p| match p {
            UNIVERSAL => Holder::AllWallets,
            EXCHANGE => Holder::Exchange,
            p => Holder::Wallet(wallets[(p - 2) as usize].to_owned()),
        })
        .collect();
    Books {
        replay,
        holders,
        moves,
        transfers,
        unallocated,
    }
}

/// The events a universal pool sees, for engines that pool every wallet by
/// law (the UK's and Canada's): moves between own wallets and transfers
/// to and from an exchange change no pool there (the units are still the
/// person's), so they drop out; merchant and, by default, unlabelled
/// transfers stay as disposals and acquisitions. Returns the events (their
/// `seq` the input index) with the moves and transfers listed as in
/// [`replay`].
pub fn universal_events(
    input: &[WalletEvent],
    unlabelled: UnlabelledTransfers,
) -> (Vec<Event>, Vec<MoveRecord>, Vec<TransferRecord>) {
    let steps = plan(input, unlabelled);
    // The moves and transfers as `replay` lists them, in `(time, index)`
    // order, without replaying any lots.
    let mut order: Vec<usize> = (0..input.len()).collect();
    if !order.is_sorted_by_key(|&i| input[i].event.time) {
        order.sort_by_key(|&i| (input[i].event.time, i));
    }
    let (mut moves, mut transfers) = (Vec::new(), Vec::new());
    for &i in &order {
        if let Step::MoveTo(j) = steps[i] {
            moves.push(move_record(&input[i], &input[j].wallet));
        }
        transfers.extend(transfer_record(&input[i], &steps[i]));
    }
    let events = input
        .iter()
        .enumerate()
        .filter(|(i, _)| matches!(steps[*i], Step::Apply))
        .map(|(i, e)| Event {
            seq: i as u64,
            ..e.event.clone()
        })
        .collect();
    (events, moves, transfers)
}

/// The move a send with step `MoveTo` makes, to wallet `to`.
fn move_record(source: &WalletEvent, to: &str) -> MoveRecord {
    MoveRecord {
        time: source.event.time,
        signature: signature(source),
        asset: source.event.asset.clone(),
        quantity: source.event.quantity,
        from: source.wallet.clone(),
        to: to.to_owned(),
    }
}

/// How a transfer that is not a move was read, to be listed; `None` for
/// events that are not transfers and for the two sides of a move.
fn transfer_record(source: &WalletEvent, step: &Step) -> Option<TransferRecord> {
    let transfer = source.transfer.as_ref()?;
    if matches!(step, Step::MoveTo(_) | Step::Skip) {
        return None;
    }
    let event = &source.event;
    let treatment = match (step, event.kind) {
        (Step::ToExchange, _) => Treatment::OutOfBooks,
        (Step::FromExchange, _) => Treatment::IntoBooks,
        (_, EventKind::Dispose) => Treatment::Disposal,
        _ => Treatment::Acquisition,
    };
    Some(TransferRecord {
        time: event.time,
        wallet: source.wallet.clone(),
        signature: transfer.signature.clone(),
        asset: event.asset.clone(),
        quantity: event.quantity,
        value: event.usd_value,
        counterparty: transfer.counterparty,
        treatment,
    })
}

fn signature(event: &WalletEvent) -> String {
    event
        .transfer
        .as_ref()
        .map(|t| t.signature.clone())
        .unwrap_or_default()
}

/// Pair own-wallet sends with their receives by (signature, asset), and
/// decide every event's step.
fn plan(input: &[WalletEvent], unlabelled: UnlabelledTransfers) -> Vec<Step> {
    let mut receives: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, e) in input.iter().enumerate() {
        if let Some(t) = &e.transfer
            && t.counterparty == Counterparty::OwnWallet
            && e.event.kind == EventKind::Acquire
        {
            receives
                .entry((t.signature.as_str(), e.event.asset.as_str()))
                .or_default()
                .push(i);
        }
    }
    let mut steps: Vec<Step> = input.iter().map(|_| Step::Apply).collect();
    for (i, e) in input.iter().enumerate() {
        let Some(t) = &e.transfer else { continue };
        let out = match e.event.kind {
            EventKind::Dispose => true,
            EventKind::Acquire => false,
            // Rent and positions stay the wallet's: never a transfer.
            EventKind::RentLock
            | EventKind::RentRelease
            | EventKind::Income
            | EventKind::StakeLock
            | EventKind::StakeRelease
            | EventKind::PositionLock
            | EventKind::PositionRelease
            | EventKind::PositionSpend => continue,
        };
        steps[i] = match t.counterparty {
            Counterparty::OwnWallet if out => {
                let pair = receives
                    .get_mut(&(t.signature.as_str(), e.event.asset.as_str()))
                    .and_then(|list| {
                        let at = list.iter().position(|&j| input[j].wallet != e.wallet)?;
                        Some(list.remove(at))
                    });
                match pair {
                    Some(j) => {
                        steps[j] = Step::Skip;
                        Step::MoveTo(j)
                    }
                    // The other wallet is the person's but not in the books.
                    None => Step::ToExchange,
                }
            }
            Counterparty::OwnWallet => match steps[i] {
                Step::Skip => Step::Skip,
                _ => Step::FromExchange,
            },
            Counterparty::Exchange if out => Step::ToExchange,
            Counterparty::Exchange => Step::FromExchange,
            Counterparty::Merchant => Step::Apply,
            Counterparty::Unlabelled => match (unlabelled, out) {
                (UnlabelledTransfers::AtMarketValue, _) => Step::Apply,
                (UnlabelledTransfers::OutOfBooks, true) => Step::ToExchange,
                (UnlabelledTransfers::OutOfBooks, false) => Step::FromExchange,
            },
        };
    }
    // A receive seen before its send was set to FromExchange above and
    // then paired: the pairing wins.
    for i in 0..steps.len() {
        if let Step::MoveTo(j) = steps[i] {
            steps[j] = Step::Skip;
        }
    }
    steps
}

/// What a wallet holds of an asset, replayed beside the engine so that a
/// change to per-wallet pools knows each wallet's balance.
#[derive(Clone, Default)]
pub(crate) struct Balance {
    pub(crate) held: Decimal,
    pub(crate) locked: Decimal,
    pub(crate) staked: Decimal,
    pub(crate) in_positions: Decimal,
}

impl Balance {
    pub(crate) fn apply(&mut self, event: &Event) {
        match event.kind {
            EventKind::Acquire | EventKind::Income => self.held += event.quantity,
            EventKind::Dispose => self.held -= event.quantity,
            EventKind::RentLock => self.locked += event.quantity,
            EventKind::RentRelease => {
                let released = event.quantity.min(self.locked);
                self.locked -= released;
                self.held += event.quantity - released;
            }
            // As the engine books them: lots stay held while staked or in a
            // position.
            EventKind::StakeLock => self.staked += event.quantity,
            EventKind::StakeRelease => {
                let released = event.quantity.min(self.staked);
                self.staked -= released;
                self.held += event.quantity - released;
            }
            EventKind::PositionLock => self.in_positions += event.quantity,
            EventKind::PositionRelease => {
                let released = event.quantity.min(self.in_positions);
                self.in_positions -= released;
                self.held += event.quantity - released;
            }
            EventKind::PositionSpend => {
                self.in_positions -= event.quantity.min(self.in_positions);
            }
        }
    }
}

/// What the allocation needs: each wallet's balance and pool, and the rule.
pub(crate) struct Allocation<'b, 'a> {
    pub(crate) balances: &'b HashMap<(&'a str, &'a str), Balance>,
    pub(crate) wallets: &'b [&'a str],
    pub(crate) wallet_pool: &'b HashMap<&'a str, PoolId>,
    pub(crate) rule: AllocationRule,
}

/// The change from one universal pool to one pool per wallet (US, 1
/// January 2025: Treas. Reg. §1.1012-1(j), TD 10000; Rev. Proc. 2024-28
/// §5.02–5.03 for the allocation of unused basis).
///
/// For each asset, wallets in the order the taxpayer's [`AllocationRule`]
/// gives each take their balance of lots from the universal pool, the lots
/// chosen by the method in use. What is left in the universal pool
/// (balances the books could not see) is returned as unallocated basis, to
/// be reported: no later disposal can reach it.
pub(crate) fn allocate(
    engine: &mut Engine<'_>,
    to: &Allocation<'_, '_>,
    time: i64,
) -> Vec<Unallocated> {
    let mut left = Vec::new();
    for asset in engine.assets() {
        let held = |wallet: &&str| {
            to.balances
                .get(&(*wallet, asset))
                .map_or(Decimal::ZERO, |b| b.held)
        };
        let mut order: Vec<&str> = to.wallets.to_vec();
        if to.rule == AllocationRule::LargestWalletFirst {
            order.sort_by(|a, b| held(b).cmp(&held(a)).then(a.cmp(b)));
        }
        for wallet in &order {
            let available = engine.held(UNIVERSAL, asset);
            let quantity = held(wallet).min(available);
            if quantity > Decimal::ZERO
                && let Some(&pool) = to.wallet_pool.get(wallet)
            {
                engine.move_lots(UNIVERSAL, pool, asset, quantity, time, u64::MAX);
            }
            // Staked SOL, rent deposits and positions are the wallet's own
            // units (their lots were just allocated with `held`): the wallet
            // takes their counts too, so that unstaking in 2025 releases the
            // allocated lots, keeping their dates and bases, rather than
            // opening a new lot at market value. Rev. Proc. 2024-28 §5.02
            // allocates unused basis to the units each wallet holds; staked
            // units are held by the wallet (its stake account's withdraw
            // authority).
            if let (Some(&pool), Some(b)) = (
                to.wallet_pool.get(wallet),
                to.balances.get(&(*wallet, asset)),
            ) {
                engine.move_locks(UNIVERSAL, pool, asset, [b.locked, b.staked, b.in_positions]);
            }
        }
        let (quantity, basis) = engine.open_in(UNIVERSAL, asset);
        if quantity > Decimal::ZERO {
            left.push(Unallocated {
                time,
                asset: asset.to_owned(),
                quantity,
                basis,
            });
        }
    }
    left
}

/// The open lots of `books` held by `wallet`.
pub fn lots_of<'b>(books: &'b Books, wallet: &str) -> Vec<&'b Lot> {
    books
        .replay
        .open_lots
        .iter()
        .zip(&books.holders)
        .filter(|(_, h)| matches!(h, Holder::Wallet(w) if w == wallet))
        .map(|(l, _)| l)
        .collect()
}
