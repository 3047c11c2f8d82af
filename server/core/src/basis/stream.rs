//! `ledger basis` over a large file in little memory: the taxpayer's CSV
//! read row by row into compact rows (assets and wallets interned as small
//! integer ids, one fixed-size row per input row), replayed through the same
//! [`Engine`] the books use, and each realized row written as soon as the
//! engine makes it.
//!
//! Why a second driver beside [`books::replay_with`]: that one takes the
//! service's [`WalletEvent`]s (a `String` wallet and asset, a transfer with
//! its signature, per event) and returns every row at once, which is what
//! the reports need and costs about 600 bytes per CSV row; here a row costs
//! 80 bytes and the output is never held. The CSV has no transfers but its
//! `move` rows, each a send and a receive paired by their own line, so the
//! books' pairing ([`books`]' plan) is known row by row and the driver is
//! the books' loop without it. The output is the same byte for byte as
//! [`csv_io::write_assessment`] after [`super::jurisdiction::assess_in`] on [`csv_io::read_books`]'s
//! events: the tests replay generated files both ways, and docs/benchmarks.md
//! measures both.
//!
//! Event numbers: the books number events by their index in the expanded
//! input (a move and a staking reward are two events). Here an event's
//! number is `2 × line + k` (`k` = 0, or 1 for a row's second event): the
//! same order, so every tie-break that uses it (FIFO's equal times, HIFO's
//! equal costs, the open lots' order) is the same, and the line is the
//! number halved. The UK's share matching and Canada's adjusted cost base
//! need each asset's whole history (the 30-day rules look ahead), so they
//! run on events made from the compact rows (moves dropped: one pool holds
//! every wallet's units), and their rows are written from there.

use std::{
    collections::HashMap,
    io::{self, Write},
};

use chrono::NaiveDate;

use rust_decimal::Decimal;

use super::{
    Event, EventKind, Method,
    books::{self, Allocation, Balance, EXCHANGE, PoolScope, UNIVERSAL, Unallocated},
    csv_io::{self, BOOKS_OUTPUT_COLUMNS, BooksInput, InputError, RowKind},
    engine::{Engine, PoolId},
    jurisdiction::{
        Jurisdiction, Matching, MethodRefused, TaxYear, Taxpayer, Zone, au, ca, de, uk, us,
    },
};

/// Names seen in the input, each with a small id (its index).
#[derive(Default)]
struct Names {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Names {
    fn id(&mut self, name: &str) -> Result<u32, InputError> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        let id = u32::try_from(self.names.len())
            .map_err(|_| InputError::Read("more than 2^32 assets or wallets".to_owned()))?;
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        Ok(id)
    }
}

/// One input row, 80 bytes: its event's figures and interned names.
#[derive(Clone, Copy)]
struct Row {
    time: i64,
    line: u64,
    quantity: Decimal,
    /// Meaningful when `priced`.
    value: Decimal,
    fee: Decimal,
    asset: u32,
    wallet: u32,
    /// A move's receiving wallet.
    to_wallet: u32,
    kind: EventKind,
    row: RowKind,
    priced: bool,
}

/// The taxpayer's input in compact form ([`read`]).
pub struct CompactBooks {
    assets: Names,
    wallets: Names,
    rows: Vec<Row>,
    /// True when values came in `usd_value`/`fee_usd` (USD), false when in
    /// `value`/`fee` (the jurisdiction's currency), as [`BooksInput::in_usd`].
    pub in_usd: bool,
}

/// Read the taxpayer's CSV as [`csv_io::read_books`] does (the same checks
/// and refusals, line for line), keeping each row in compact form.
pub fn read(input: impl io::Read) -> Result<CompactBooks, InputError> {
    let (mut assets, mut wallets, mut rows) = (Names::default(), Names::default(), Vec::new());
    let in_usd = csv_io::read_books_rows(input, |r| {
        let to_wallet = match r.kind {
            RowKind::Move => wallets.id(r.to_wallet)?,
            _ => 0,
        };
        rows.push(Row {
            time: r.fields.time,
            line: r.line,
            quantity: r.fields.quantity,
            value: r.fields.usd_value.unwrap_or_default(),
            fee: r.fields.fee_usd,
            asset: assets.id(r.fields.asset)?,
            wallet: wallets.id(r.wallet)?,
            to_wallet,
            kind: r.fields.kind,
            row: r.kind,
            priced: r.fields.usd_value.is_some(),
        });
        Ok(())
    })?;
    Ok(CompactBooks {
        assets,
        wallets,
        rows,
        in_usd,
    })
}

/// What the CLI says after the rows: the totals of the complete rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Realized rows written.
    pub rows: u64,
    /// Sums over the rows whose proceeds, basis and gain are known and
    /// that are covered.
    pub proceeds: Decimal,
    pub basis: Decimal,
    pub gain: Decimal,
    /// Rows left out of those sums (unpriced or uncovered).
    pub incomplete: u64,
    /// Moves between own wallets.
    pub moves: u64,
    /// Lots left in the universal pool at the change to per-wallet pools.
    pub unallocated: Vec<Unallocated>,
}

impl Outcome {
    fn count(&mut self, row: &super::Disposal) {
        self.rows += 1;
        match (row.proceeds, row.basis, row.gain) {
            (Some(p), Some(b), Some(g)) if !row.uncovered => {
                self.proceeds += p;
                self.basis += b;
                self.gain += g;
            }
            _ => self.incomplete += 1,
        }
    }
}

/// Why [`CompactBooks::assess_to`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error(transparent)]
    Refused(#[from] MethodRefused),
    #[error("{0}")]
    Write(#[from] csv::Error),
}

impl CompactBooks {
    /// Replay under `jurisdiction` and write [`csv_io::write_assessment`]'s
    /// CSV to `output` (dates in `taxpayer.zone`), rows as they are made.
    pub fn assess_to(
        self,
        output: impl io::Write,
        jurisdiction: Jurisdiction,
        taxpayer: &Taxpayer,
        method: Option<Method>,
    ) -> Result<Outcome, StreamError> {
        match jurisdiction.matching(method)? {
            Matching::Lots(method) => Ok(self.lots(output, jurisdiction, taxpayer, method)?),
            matching @ (Matching::ShareMatching | Matching::AdjustedCostBase) => {
                Ok(self.pooled(output, jurisdiction, taxpayer.zone, matching)?)
            }
        }
    }

    /// The books' events, as [`csv_io::read_books`] makes them (for a
    /// caller that wants the reports' path, `jurisdiction::assess_in`).
    pub fn into_books_input(self) -> BooksInput {
        let mut out = BooksInput {
            in_usd: self.in_usd,
            ..BooksInput::default()
        };
        for r in self.rows {
            let seq = out.events.len() as u64;
            let event = Event {
                time: r.time,
                seq,
                asset: self.assets.names[r.asset as usize].clone(),
                kind: r.kind,
                quantity: r.quantity,
                usd_value: r.priced.then_some(r.value),
                fee_usd: r.fee,
            };
            let wallet = &self.wallets.names[r.wallet as usize];
            match r.row {
                RowKind::Move => {
                    let transfer = books::Transfer {
                        signature: format!("move at line {}", r.line),
                        counterparty: books::Counterparty::OwnWallet,
                    };
                    let receive = Event {
                        kind: EventKind::Acquire,
                        seq: seq + 1,
                        ..event.clone()
                    };
                    out.events.push(books::WalletEvent {
                        wallet: wallet.clone(),
                        event,
                        transfer: Some(transfer.clone()),
                    });
                    out.events.push(books::WalletEvent {
                        wallet: self.wallets.names[r.to_wallet as usize].clone(),
                        event: receive,
                        transfer: Some(transfer),
                    });
                    out.lines.extend([r.line, r.line]);
                }
                RowKind::StakingReward => {
                    let staked = Event {
                        kind: EventKind::StakeLock,
                        seq: seq + 1,
                        usd_value: None,
                        fee_usd: Decimal::ZERO,
                        ..event.clone()
                    };
                    for event in [event, staked] {
                        out.events.push(books::WalletEvent {
                            wallet: wallet.clone(),
                            event,
                            transfer: None,
                        });
                        out.lines.push(r.line);
                    }
                }
                RowKind::Plain => {
                    out.events.push(books::WalletEvent {
                        wallet: wallet.clone(),
                        event,
                        transfer: None,
                    });
                    out.lines.push(r.line);
                }
            }
        }
        out
    }

    /// The UK's share matching and Canada's adjusted cost base: one pool
    /// per asset for all wallets, so a move changes nothing and every
    /// other row is an event (the books' `universal_events`); each asset's
    /// whole history is matched at once (the 30-day rules look ahead), and
    /// the rows are written from there.
    fn pooled(
        self,
        output: impl io::Write,
        jurisdiction: Jurisdiction,
        zone: Zone,
        matching: Matching,
    ) -> Result<Outcome, csv::Error> {
        let CompactBooks {
            assets,
            wallets,
            rows,
            ..
        } = self;
        let mut outcome = Outcome::default();
        let mut events = Vec::with_capacity(rows.len());
        // The wallet of each disposal, by event number (increasing).
        let mut wallet_of: Vec<(u64, u32)> = Vec::new();
        for r in &rows {
            if r.row == RowKind::Move {
                outcome.moves += 1;
                continue;
            }
            let seq = 2 * r.line;
            let event = Event {
                time: r.time,
                seq,
                asset: assets.names[r.asset as usize].clone(),
                kind: r.kind,
                quantity: r.quantity,
                usd_value: r.priced.then_some(r.value),
                fee_usd: r.fee,
            };
            if r.kind == EventKind::Dispose {
                wallet_of.push((seq, r.wallet));
            }
            let staked = (r.row == RowKind::StakingReward).then(|| Event {
                seq: seq + 1,
                kind: EventKind::StakeLock,
                usd_value: None,
                fee_usd: Decimal::ZERO,
                ..event.clone()
            });
            events.push(event);
            events.extend(staked);
        }
        drop(rows);
        let (realized, pools) = if matching == Matching::ShareMatching {
            uk::replay(&events, zone)
        } else {
            ca::replay(&events, zone)
        };
        drop(events);
        let mut out = Out::new(output, &assets.names, &wallets.names, zone)?;
        for (d, _sale_costs) in &realized {
            outcome.count(d);
            let year = jurisdiction.tax_year_of(out.dates.date(d.disposed));
            let wallet = wallet_of
                .binary_search_by_key(&d.disposal_seq, |(seq, _)| *seq)
                .ok()
                .and_then(|at| wallet_of.get(at))
                .map_or(Holder::None, |(_, w)| Holder::Wallet(*w));
            let asset = assets.ids.get(d.asset.as_str()).copied().unwrap_or(0);
            out.disposal(d, asset, wallet, year)?;
        }
        for h in &pools {
            let asset = assets.ids.get(h.asset.as_str()).copied().unwrap_or(0);
            out.open(
                asset,
                h.quantity,
                h.acquired,
                h.cost,
                h.seq,
                Holder::AllWallets,
            )?;
        }
        out.flush()?;
        Ok(outcome)
    }

    /// The lot methods (US, Germany, Australia): the books' loop
    /// ([`books::replay_with`]) over compact rows, writing as it goes.
    fn lots(
        self,
        output: impl io::Write,
        jurisdiction: Jurisdiction,
        taxpayer: &Taxpayer,
        method: Method,
    ) -> Result<Outcome, csv::Error> {
        let zone = taxpayer.zone;
        let choices = taxpayer.choices;
        let CompactBooks {
            assets,
            wallets,
            mut rows,
            ..
        } = self;
        // Time order, equal times in input order, as the books take them
        // (lines are unique, so no stable sort and its buffer are needed).
        if !rows.is_sorted_by_key(|r| r.time) {
            rows.sort_unstable_by_key(|r| (r.time, r.line));
        }
        let asset_names: Vec<&str> = assets.names.iter().map(String::as_str).collect();
        let mut sorted: Vec<&str> = wallets.names.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        // Pools as the books number them: universal, exchange, then the
        // wallets by name.
        let wallet_pool: HashMap<&str, PoolId> = sorted
            .iter()
            .enumerate()
            .map(|(i, w)| (*w, i as PoolId + 2))
            .collect();
        let pool_by_id: Vec<PoolId> = wallets
            .names
            .iter()
            .map(|w| wallet_pool.get(w.as_str()).copied().unwrap_or(UNIVERSAL))
            .collect();
        let scope = |time: i64| match jurisdiction {
            Jurisdiction::Us => us::pool_scope(time, zone),
            Jurisdiction::De => de::POOL_SCOPE,
            _ => au::POOL_SCOPE,
        };
        let pending_method = choices.method_from.filter(|_| method != Method::Average);
        let mut engine = Engine::new(if pending_method.is_some() {
            Method::Fifo
        } else {
            method
        })
        .without_totals();
        // Each wallet's balances matter only where pools can change from
        // universal to per wallet (the US, 1 January 2025).
        let track_balances = jurisdiction == Jurisdiction::Us;
        let n_assets = asset_names.len();
        let mut balances: Vec<Balance> = vec![Balance::default(); n_assets * wallets.names.len()];
        let mut current: Option<PoolScope> = None;
        let mut outcome = Outcome::default();

        let mut out = Out::new(output, &assets.names, &wallets.names, zone)?;
        for r in &rows {
            if pending_method.is_some_and(|from| r.time >= from) {
                engine.set_method(method);
            }
            let scope_now = scope(r.time);
            if current == Some(PoolScope::Universal) && scope_now == PoolScope::PerWallet {
                let mut by_name: HashMap<(&str, &str), Balance> = HashMap::new();
                for (i, b) in balances.iter().enumerate() {
                    let (w, a) = (i / n_assets, i % n_assets);
                    by_name.insert((wallets.names[w].as_str(), asset_names[a]), b.clone());
                }
                let to = Allocation {
                    balances: &by_name,
                    wallets: &sorted,
                    wallet_pool: &wallet_pool,
                    rule: choices.allocation,
                };
                outcome
                    .unallocated
                    .extend(books::allocate(&mut engine, &to, r.time));
            }
            current = Some(scope_now);
            let pool_of = |wallet: u32| match scope_now {
                PoolScope::Universal => UNIVERSAL,
                PoolScope::PerWallet => pool_by_id[wallet as usize],
            };
            let asset = asset_names[r.asset as usize];
            let (wallet, a) = (r.wallet as usize, r.asset as usize);
            let seq = 2 * r.line;
            if r.row == RowKind::Move {
                engine.move_lots(
                    pool_of(r.wallet),
                    pool_of(r.to_wallet),
                    asset,
                    r.quantity,
                    r.time,
                    seq,
                );
                balances[wallet * n_assets + a].held -= r.quantity;
                balances[r.to_wallet as usize * n_assets + a].held += r.quantity;
                outcome.moves += 1;
                continue;
            }
            let event = Event {
                time: r.time,
                seq,
                asset: String::new(),
                kind: r.kind,
                quantity: r.quantity,
                usd_value: r.priced.then_some(r.value),
                fee_usd: r.fee,
            };
            let pool = pool_of(r.wallet);
            engine.apply_as(pool, asset, &event);
            if track_balances {
                balances[wallet * n_assets + a].apply(&event);
            }
            if r.row == RowKind::StakingReward {
                let staked = Event {
                    seq: seq + 1,
                    kind: EventKind::StakeLock,
                    usd_value: None,
                    fee_usd: Decimal::ZERO,
                    ..event
                };
                engine.apply_as(pool, asset, &staked);
                if track_balances {
                    balances[wallet * n_assets + a].apply(&staked);
                }
            }
            for mut d in engine.drain_disposals() {
                let held_over = d
                    .acquired
                    .is_some_and(|acquired| out.dates.held_over_a_year(acquired, d.disposed));
                match jurisdiction {
                    Jurisdiction::De => d.rule = de::rule_held(held_over),
                    Jurisdiction::Au => d.rule = au::rule_held(&d, held_over),
                    // 26 USC §1222 in the taxpayer's dates (Rev. Rul. 66-7),
                    // as jurisdiction::assess_in does.
                    Jurisdiction::Us if d.acquired.is_some() => {
                        d.term = Some(if held_over {
                            super::Term::Long
                        } else {
                            super::Term::Short
                        });
                    }
                    _ => {}
                }
                outcome.count(&d);
                let year = jurisdiction.tax_year_of(out.dates.date(d.disposed));
                out.disposal(&d, r.asset, Holder::Wallet(r.wallet), year)?;
            }
        }
        let (replay, pools) = engine.finish();
        let asset_ids: HashMap<&str, u32> = asset_names
            .iter()
            .enumerate()
            .map(|(i, a)| (*a, i as u32))
            .collect();
        for (lot, pool) in replay.open_lots.iter().zip(pools) {
            let wallet = match pool {
                UNIVERSAL => Holder::AllWallets,
                EXCHANGE => Holder::Exchange,
                p => sorted
                    .get((p - 2) as usize)
                    .and_then(|w| wallets.ids.get(*w))
                    .map_or(Holder::AllWallets, |&id| Holder::Wallet(id)),
            };
            let asset = asset_ids.get(lot.asset.as_str()).copied().unwrap_or(0);
            out.open(
                asset,
                lot.quantity,
                Some(lot.acquired),
                lot.basis,
                Some(lot.seq),
                wallet,
            )?;
        }
        out.flush()?;
        Ok(outcome)
    }
}

/// Whose a row is: a wallet (by id), all wallets (a pool), an exchange.
#[derive(Clone, Copy)]
enum Holder {
    AllWallets,
    Exchange,
    Wallet(u32),
    /// A row of no input event (never made): an empty wallet column.
    None,
}

/// The output, written as [`csv_io::write_assessment`] writes it (the csv
/// crate's quoting, `\n` line ends) but formatted here without an
/// allocation per field: names are quoted once, numbers and dates written
/// straight into the line.
struct Out<W: io::Write> {
    output: io::BufWriter<W>,
    line: Vec<u8>,
    /// Each asset's and wallet's name as a CSV field.
    assets: Vec<Vec<u8>>,
    wallets: Vec<Vec<u8>>,
    dates: Dates,
    /// The last tax year written and its text.
    year: Option<(TaxYear, String)>,
}

impl<W: io::Write> Out<W> {
    fn new(
        output: W,
        assets: &[String],
        wallets: &[String],
        zone: Zone,
    ) -> Result<Self, csv::Error> {
        let mut out = Out {
            output: io::BufWriter::with_capacity(1 << 16, output),
            line: Vec::with_capacity(256),
            assets: assets.iter().map(|n| field(n)).collect::<Result<_, _>>()?,
            wallets: wallets.iter().map(|n| field(n)).collect::<Result<_, _>>()?,
            dates: Dates::new(zone),
            year: None,
        };
        let header = BOOKS_OUTPUT_COLUMNS.join(",");
        out.output.write_all(header.as_bytes())?;
        out.output.write_all(b"\n")?;
        Ok(out)
    }

    fn disposal(
        &mut self,
        d: &super::Disposal,
        asset: u32,
        wallet: Holder,
        year: TaxYear,
    ) -> Result<(), csv::Error> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.extend_from_slice(b"disposal,");
        line.extend_from_slice(&self.assets[asset as usize]);
        line.push(b',');
        push_number(&mut line, Some(d.quantity));
        line.push(b',');
        match (d.acquired, d.rule) {
            (Some(t), _) => self.dates.push(&mut line, t),
            (None, super::Rule::Section104) => line.extend_from_slice(b"pool"),
            (None, _) => {}
        }
        line.push(b',');
        self.dates.push(&mut line, d.disposed);
        line.push(b',');
        push_number(&mut line, d.proceeds);
        line.push(b',');
        push_number(&mut line, d.basis);
        line.push(b',');
        push_number(&mut line, d.gain);
        line.push(b',');
        line.extend_from_slice(d.term.map(|t| t.as_str()).unwrap_or_default().as_bytes());
        line.push(b',');
        if let Some(seq) = d.lot_seq {
            push_line_of(&mut line, seq);
        }
        line.push(b',');
        push_line_of(&mut line, d.disposal_seq);
        line.push(b',');
        let note = if d.uncovered {
            "uncovered"
        } else if d.proceeds.is_none() || d.basis.is_none() {
            "unpriced"
        } else {
            ""
        };
        line.extend_from_slice(note.as_bytes());
        line.push(b',');
        if self.year.as_ref().is_none_or(|(y, _)| *y != year) {
            self.year = Some((year, year.to_string()));
        }
        if let Some((_, text)) = &self.year {
            line.extend_from_slice(text.as_bytes());
        }
        line.push(b',');
        line.extend_from_slice(d.rule.as_str().as_bytes());
        line.push(b',');
        self.holder(&mut line, wallet);
        line.push(b'\n');
        self.output.write_all(&line)?;
        self.line = line;
        Ok(())
    }

    /// An `open` row: a lot (`acquired` and `seq` known) or a pool.
    fn open(
        &mut self,
        asset: u32,
        quantity: Decimal,
        acquired: Option<i64>,
        cost: Option<Decimal>,
        seq: Option<u64>,
        holder: Holder,
    ) -> Result<(), csv::Error> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.extend_from_slice(b"open,");
        line.extend_from_slice(&self.assets[asset as usize]);
        line.push(b',');
        push_number(&mut line, Some(quantity));
        line.push(b',');
        match acquired {
            Some(t) => self.dates.push(&mut line, t),
            None => line.extend_from_slice(b"pool"),
        }
        line.extend_from_slice(b",,,");
        push_number(&mut line, cost);
        line.extend_from_slice(b",,,");
        if let Some(seq) = seq {
            push_line_of(&mut line, seq);
        }
        line.extend_from_slice(b",,");
        if cost.is_none() {
            line.extend_from_slice(b"unpriced");
        }
        line.extend_from_slice(b",,,");
        self.holder(&mut line, holder);
        line.push(b'\n');
        self.output.write_all(&line)?;
        self.line = line;
        Ok(())
    }

    /// The `wallet` column.
    fn holder(&self, line: &mut Vec<u8>, holder: Holder) {
        match holder {
            Holder::AllWallets | Holder::None => {}
            Holder::Exchange => line.extend_from_slice(b"exchange"),
            Holder::Wallet(id) => line.extend_from_slice(&self.wallets[id as usize]),
        }
    }

    fn flush(&mut self) -> Result<(), csv::Error> {
        self.output.flush()?;
        Ok(())
    }
}

/// `name` as one field of a CSV record, quoted by the csv crate's rule.
fn field(name: &str) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    // Two fields: a lone empty field would be written `""`.
    writer.write_record([name, ""])?;
    let mut bytes = writer
        .into_inner()
        .map_err(|err| csv::Error::from(io::Error::other(err.to_string())))?;
    bytes.truncate(bytes.len().saturating_sub(2));
    Ok(bytes)
}

/// An event's input line from its number (`2 × line + k`); nothing for
/// the allocation's lots (numbered `u64::MAX`), as the books write them.
fn push_line_of(line: &mut Vec<u8>, seq: u64) {
    if seq != u64::MAX {
        push_u128(line, u128::from(seq / 2));
    }
}

fn push_u128(line: &mut Vec<u8>, n: u128) {
    match u64::try_from(n) {
        Ok(n) => push_u64(line, n),
        Err(_) => line.extend_from_slice(n.to_string().as_bytes()),
    }
}

fn push_u64(line: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let at = write_digits(&mut digits, n);
    line.extend_from_slice(&digits[at..]);
}

/// `n` in decimal at the end of `digits`, two digits a division; where it
/// starts.
fn write_digits(digits: &mut [u8; 20], mut n: u64) -> usize {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
                                2021222324252627282930313233343536373839\
                                4041424344454647484950515253545556575859\
                                6061626364656667686970717273747576777879\
                                8081828384858687888990919293949596979899";
    let mut at = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    at
}

/// `value.normalize().to_string()` (csv_io's `number`) without the
/// allocation: digits of the mantissa, trailing zeros of the fraction
/// dropped, no sign on zero; nothing when unknown.
fn push_number(line: &mut Vec<u8>, value: Option<Decimal>) {
    let Some(value) = value else { return };
    let mantissa = value.mantissa();
    let Ok(mut magnitude) = u64::try_from(mantissa.unsigned_abs()) else {
        line.extend_from_slice(value.normalize().to_string().as_bytes());
        return;
    };
    if magnitude == 0 {
        line.push(b'0');
        return;
    }
    let mut scale = value.scale() as usize;
    while scale > 0 && magnitude % 10 == 0 {
        magnitude /= 10;
        scale -= 1;
    }
    if mantissa < 0 {
        line.push(b'-');
    }
    let mut digits = [0u8; 20];
    let at = write_digits(&mut digits, magnitude);
    let digits = &digits[at..];
    if scale == 0 {
        line.extend_from_slice(digits);
    } else if digits.len() <= scale {
        // 0.000ddd
        line.extend_from_slice(b"0.");
        line.resize(line.len() + scale - digits.len(), b'0');
        line.extend_from_slice(digits);
    } else {
        let point = digits.len() - scale;
        line.extend_from_slice(&digits[..point]);
        line.push(b'.');
        line.extend_from_slice(&digits[point..]);
    }
}

/// Civil dates in `zone`, remembered by UTC hour: every zone but a fixed
/// offset changes date and offset only on whole UTC hours (civil.rs), so
/// one hour has one date.
struct Dates {
    zone: Zone,
    /// By hour: the date, and the date a year on (for holding periods).
    cache: Vec<(i64, Option<NaiveDate>, Option<NaiveDate>)>,
}

/// Two years of hours.
const DATE_SLOTS: usize = 1 << 14;

impl Dates {
    fn new(zone: Zone) -> Self {
        Dates {
            zone,
            cache: vec![(i64::MIN, None, None); DATE_SLOTS],
        }
    }

    fn date(&mut self, unix: i64) -> Option<NaiveDate> {
        self.entry(unix).0
    }

    /// The civil date at `unix` and the same date twelve months on.
    fn entry(&mut self, unix: i64) -> (Option<NaiveDate>, Option<NaiveDate>) {
        let compute = |zone: Zone| {
            let date = zone.date(unix);
            let later = date.and_then(|d| d.checked_add_months(chrono::Months::new(12)));
            (date, later)
        };
        if matches!(self.zone, Zone::Fixed(_)) {
            return compute(self.zone);
        }
        let hour = unix.div_euclid(3_600);
        let slot = (hour as usize) % DATE_SLOTS;
        if let Some((h, date, later)) = self.cache.get(slot)
            && *h == hour
        {
            return (*date, *later);
        }
        let (date, later) = compute(self.zone);
        if let Some(entry) = self.cache.get_mut(slot) {
            *entry = (hour, date, later);
        }
        (date, later)
    }

    /// Whether a lot acquired at `acquired` and disposed of at `disposed`
    /// was held over a year in this zone's dates: the disposal's date is
    /// after the acquisition's date twelve months on (as
    /// `jurisdiction::held_over_a_year`).
    fn held_over_a_year(&mut self, acquired: i64, disposed: i64) -> bool {
        let (Some(_), Some(anniversary)) = self.entry(acquired) else {
            return false;
        };
        self.date(disposed).is_some_and(|d| d > anniversary)
    }

    /// The date as `write_assessment` writes it: `YYYY-MM-DD`, or the unix
    /// time when it has no date.
    fn push(&mut self, line: &mut Vec<u8>, unix: i64) {
        use chrono::Datelike;
        match self.date(unix) {
            Some(d) if (0..=9999).contains(&d.year()) => {
                let (y, m, day) = (d.year() as u32, d.month(), d.day());
                line.extend_from_slice(&[
                    b'0' + (y / 1000) as u8,
                    b'0' + (y / 100 % 10) as u8,
                    b'0' + (y / 10 % 10) as u8,
                    b'0' + (y % 10) as u8,
                    b'-',
                    b'0' + (m / 10) as u8,
                    b'0' + (m % 10) as u8,
                    b'-',
                    b'0' + (day / 10) as u8,
                    b'0' + (day % 10) as u8,
                ]);
            }
            Some(d) => line.extend_from_slice(d.to_string().as_bytes()),
            None => line.extend_from_slice(unix.to_string().as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basis::{
        books::UnlabelledTransfers,
        csv_io::{read_books, write_assessment},
        jurisdiction::assess_in,
    };

    /// A small deterministic generator (an LCG: no test depends on a
    /// crate's random stream staying the same).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// `rows` rows like server/benches/gen_basis_csv.py's, over the change of US
    /// pools on 1 January 2025 (so the allocation runs), on assets and
    /// wallets whose names need quoting, with staking, income, unpriced
    /// rows, blank lines, dates without a time and, when `shuffled`, rows
    /// out of time order. Values in `value`/`fee` or `usd_value`/`fee_usd`.
    fn generate(rows: usize, in_usd: bool, shuffled: bool, seed: u64) -> String {
        let mut rng = Lcg(seed);
        let assets = ["SOL", "MINT,1", "\"Q\"", "BONK", " pad "];
        let wallets = ["a", "b", "c d", "e,f"];
        let (value, fee) = if in_usd {
            ("usd_value", "fee_usd")
        } else {
            ("value", "fee")
        };
        let mut out = format!("date,type,asset,quantity,{value},{fee},wallet,to_wallet\n");
        let mut held = std::collections::HashMap::<(usize, usize), i64>::new();
        // 2024-12-01T00:00:00Z, rows about 7 minutes apart: ten weeks.
        let start = 1_733_011_200i64;
        for n in 0..rows {
            let mut t = start + 420 * n as i64;
            if shuffled && rng.below(10) == 0 {
                t -= rng.below(86_400 * 20) as i64;
            }
            let date = if rng.below(20) == 0 {
                chrono::DateTime::from_timestamp(t, 0)
                    .map(|d| d.format("%Y-%m-%d").to_string())
                    .unwrap_or_default()
            } else {
                chrono::DateTime::from_timestamp(t, 0)
                    .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
                    .unwrap_or_default()
            };
            let a = rng.below(assets.len() as u64) as usize;
            let w = rng.below(wallets.len() as u64) as usize;
            let asset = csv_field(assets[a]);
            let wallet = csv_field(wallets[w]);
            let h = held.get(&(w, a)).copied().unwrap_or(0);
            // Quantities in millionths.
            let q = 1 + rng.below(5_000_000) as i64;
            let price = 1 + rng.below(20_000);
            let value = |q: i64| {
                if rng_unpriced(n) {
                    String::new()
                } else {
                    decimal(q as i128 * price as i128, 8)
                }
            };
            let fee = decimal(rng.below(10_000) as i128, 4);
            let r = rng.below(100);
            let row = if r < 38 && h > 10 {
                let q = 1 + (h as u64 * (5 + rng.below(60)) / 100) as i64;
                held.insert((w, a), h - q);
                format!(
                    "{date},dispose,{asset},{},{},{fee},{wallet},",
                    decimal(q.into(), 6),
                    value(q)
                )
            } else if r < 40 {
                // Sometimes more than the wallet holds: uncovered rows.
                format!(
                    "{date},dispose,{asset},{},{},{fee},{wallet},",
                    decimal(q.into(), 6),
                    value(q)
                )
            } else if r < 46 && h > 10 {
                let q = 1 + (h as u64 * (10 + rng.below(80)) / 100) as i64;
                let to = (w + 1 + rng.below(wallets.len() as u64 - 1) as usize) % wallets.len();
                held.insert((w, a), h - q);
                *held.entry((to, a)).or_default() += q;
                format!(
                    "{date},move,{asset},{},,,{wallet},{}",
                    decimal(q.into(), 6),
                    csv_field(wallets[to])
                )
            } else if r < 48 {
                let kind = [
                    "stake_deposit",
                    "stake_withdraw",
                    "staking_reward",
                    "income",
                    "mev_reward",
                ][rng.below(5) as usize];
                format!(
                    "{date},{kind},{asset},{},{},,{wallet},",
                    decimal(q.into(), 6),
                    value(q)
                )
            } else {
                held.insert((w, a), h + q);
                format!(
                    "{date},acquire,{asset},{},{},{fee},{wallet},",
                    decimal(q.into(), 6),
                    value(q)
                )
            };
            out.push_str(&row);
            out.push('\n');
            if rng.below(500) == 0 {
                out.push('\n');
            }
        }
        out
    }

    fn rng_unpriced(n: usize) -> bool {
        n % 97 == 13
    }

    fn decimal(mantissa: i128, scale: u32) -> String {
        Decimal::from_i128_with_scale(mantissa, scale).to_string()
    }

    fn csv_field(name: &str) -> String {
        String::from_utf8(field(name).unwrap()).unwrap()
    }

    /// Every jurisdiction with each method it accepts, and its default.
    fn cases() -> Vec<(Jurisdiction, Option<Method>)> {
        let mut cases = Vec::new();
        for j in Jurisdiction::ALL {
            cases.push((j, None));
            for m in Method::ALL {
                if j.matching(Some(m)).is_ok() {
                    cases.push((j, Some(m)));
                }
            }
        }
        cases
    }

    /// The books' replay: what `ledger basis` wrote before it streamed.
    fn books_path(
        csv: &str,
        j: Jurisdiction,
        taxpayer: &Taxpayer,
        m: Option<Method>,
    ) -> (String, Outcome) {
        let books = read_books(csv.as_bytes()).unwrap();
        let assessment = assess_in(
            j,
            taxpayer,
            &books.events,
            m,
            UnlabelledTransfers::default(),
        )
        .unwrap();
        let mut out = Vec::new();
        write_assessment(&mut out, &assessment, &books.lines, taxpayer.zone).unwrap();
        let mut outcome = Outcome {
            moves: assessment.moves.len() as u64,
            unallocated: assessment.unallocated.clone(),
            ..Outcome::default()
        };
        for r in &assessment.rows {
            outcome.count(&r.row);
        }
        (String::from_utf8(out).unwrap(), outcome)
    }

    fn stream_path(
        csv: &str,
        j: Jurisdiction,
        taxpayer: &Taxpayer,
        m: Option<Method>,
    ) -> (String, Outcome) {
        let compact = read(csv.as_bytes()).unwrap();
        let mut out = Vec::new();
        let outcome = compact.assess_to(&mut out, j, taxpayer, m).unwrap();
        (String::from_utf8(out).unwrap(), outcome)
    }

    /// Every jurisdiction and method, in the jurisdiction's zone and in
    /// `other` (UTC, or a fixed offset: dates by the hour do not apply).
    fn check_same(csv: &str, choices: crate::basis::books::Choices, other: Zone) {
        for (j, m) in cases() {
            for zone in [j.zone(), other] {
                let taxpayer = Taxpayer { zone, choices };
                let old = books_path(csv, j, &taxpayer, m);
                let new = stream_path(csv, j, &taxpayer, m);
                assert!(
                    old.0.lines().count() > 100,
                    "{j} {m:?}: too few rows to compare"
                );
                if old.0 != new.0 {
                    let line = old
                        .0
                        .lines()
                        .zip(new.0.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or(0);
                    panic!(
                        "{j} {m:?} {zone:?}: output differs at output line {}: {:?} vs {:?}",
                        line + 1,
                        old.0.lines().nth(line),
                        new.0.lines().nth(line)
                    );
                }
                assert_eq!(old.1, new.1, "{j} {m:?} {zone:?}");
            }
        }
    }

    #[test]
    fn streamed_output_is_the_books_output_byte_for_byte() {
        let csv = generate(10_000, false, false, 24);
        check_same(&csv, Default::default(), Zone::Utc);
    }

    #[test]
    fn streamed_output_is_the_same_when_rows_are_out_of_time_order() {
        let csv = generate(4_000, false, true, 7);
        check_same(&csv, Default::default(), Zone::Utc);
    }

    #[test]
    fn streamed_output_is_the_same_with_a_standing_order_and_largest_wallet_first() {
        let csv = generate(3_000, true, true, 3);
        let choices = crate::basis::books::Choices {
            method_from: Some(1_735_000_000),
            allocation: crate::basis::books::AllocationRule::LargestWalletFirst,
        };
        check_same(&csv, choices, Zone::Fixed(19_800));
    }

    /// What docs/cost-basis.md and docs/benchmarks.md say a row costs.
    #[test]
    fn a_compact_row_is_80_bytes() {
        assert_eq!(std::mem::size_of::<Row>(), 80);
    }

    #[test]
    fn numbers_are_written_as_normalize_writes_them() {
        let mut rng = Lcg(5);
        let mut values = vec![
            Decimal::ZERO,
            Decimal::new(0, 8),
            -Decimal::new(0, 8),
            Decimal::new(-5, 1),
            Decimal::new(1, 28),
            Decimal::new(-120, 10),
            Decimal::MAX,
            Decimal::MIN,
            Decimal::from_i128_with_scale(u64::MAX as i128 + 1, 3),
        ];
        for _ in 0..20_000 {
            let mantissa = (rng.next() as i128) * (rng.next() as i128) - (1i128 << 60);
            values.push(Decimal::from_i128_with_scale(
                mantissa,
                (rng.below(29)) as u32,
            ));
        }
        for v in values {
            let mut line = Vec::new();
            push_number(&mut line, Some(v));
            assert_eq!(
                String::from_utf8(line).unwrap(),
                v.normalize().to_string(),
                "{v:?}"
            );
        }
    }

    #[test]
    fn dates_by_hour_are_the_zones_dates() {
        for zone in [
            Zone::Utc,
            Zone::London,
            Zone::Berlin,
            Zone::Toronto,
            Zone::NewYork,
            Zone::Sydney,
            Zone::Fixed(-34_200),
        ] {
            let mut dates = Dates::new(zone);
            // Two years in 20-minute steps, across every change of time.
            let mut t = 1_704_067_200 - 3 * 3_600;
            while t < 1_767_225_600 {
                assert_eq!(dates.date(t), zone.date(t), "{zone:?} {t}");
                let mut line = Vec::new();
                dates.push(&mut line, t);
                assert_eq!(
                    String::from_utf8(line).unwrap(),
                    zone.date(t).unwrap().to_string()
                );
                t += 1_200;
            }
        }
    }
}
