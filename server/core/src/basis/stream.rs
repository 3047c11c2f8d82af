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
//! [`csv_io::write_assessment`] after [`assess_in`] on [`csv_io::read_books`]'s
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
//! run on the books' events made from the compact rows.

use std::{
    collections::HashMap,
    io::{self, Write},
};

use chrono::NaiveDate;

use rust_decimal::Decimal;

use super::{
    Event, EventKind, Method,
    books::{
        self, Allocation, Balance, EXCHANGE, PoolScope, UNIVERSAL, Unallocated,
        UnlabelledTransfers,
    },
    csv_io::{self, BOOKS_OUTPUT_COLUMNS, BooksInput, InputError, RowKind},
    engine::{Engine, PoolId},
    jurisdiction::{
        Jurisdiction, Matching, MethodRefused, TaxYear, Taxpayer, Zone, assess_in, au, de, us,
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
            Matching::ShareMatching | Matching::AdjustedCostBase => {
                let zone = taxpayer.zone;
                let books = self.into_books_input();
                let assessment = assess_in(
                    jurisdiction,
                    taxpayer,
                    &books.events,
                    method,
                    UnlabelledTransfers::default(),
                )?;
                csv_io::write_assessment(output, &assessment, &books.lines, zone)?;
                let mut outcome = Outcome {
                    moves: assessment.moves.len() as u64,
                    unallocated: assessment.unallocated,
                    ..Outcome::default()
                };
                for r in &assessment.rows {
                    outcome.count(&r.row);
                }
                Ok(outcome)
            }
        }
    }

    /// The books' events, as [`csv_io::read_books`] makes them.
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
        // Time order, equal times in input order, as the books take them.
        if !rows.is_sorted_by_key(|r| r.time) {
            rows.sort_by_key(|r| r.time);
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
        });
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
            balances[wallet * n_assets + a].apply(&event);
            if r.row == RowKind::StakingReward {
                let staked = Event {
                    seq: seq + 1,
                    kind: EventKind::StakeLock,
                    usd_value: None,
                    fee_usd: Decimal::ZERO,
                    ..event
                };
                engine.apply_as(pool, asset, &staked);
                balances[wallet * n_assets + a].apply(&staked);
            }
            for mut d in engine.drain_disposals() {
                let held_over = d.acquired.is_some_and(|acquired| {
                    over_a_year(out.dates.date(acquired), out.dates.date(d.disposed))
                });
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
                out.disposal(&d, r.asset, r.wallet, year)?;
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
            out.open(lot, asset, wallet)?;
        }
        out.flush()?;
        Ok(outcome)
    }
}

/// Who holds an open lot, by wallet id.
enum Holder {
    AllWallets,
    Exchange,
    Wallet(u32),
}

/// Whether a lot acquired on `acquired` and disposed of on `disposed`
/// (civil dates) was held over a year: `jurisdiction::held_over_a_year` on dates
/// already at hand.
fn over_a_year(acquired: Option<NaiveDate>, disposed: Option<NaiveDate>) -> bool {
    let (Some(a), Some(d)) = (acquired, disposed) else {
        return false;
    };
    a.checked_add_months(chrono::Months::new(12))
        .is_some_and(|anniversary| d > anniversary)
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
    fn new(output: W, assets: &[String], wallets: &[String], zone: Zone) -> Result<Self, csv::Error> {
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
        wallet: u32,
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
        line.extend_from_slice(&self.wallets[wallet as usize]);
        line.push(b'\n');
        self.output.write_all(&line)?;
        self.line = line;
        Ok(())
    }

    fn open(&mut self, lot: &super::Lot, asset: u32, holder: Holder) -> Result<(), csv::Error> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.extend_from_slice(b"open,");
        line.extend_from_slice(&self.assets[asset as usize]);
        line.push(b',');
        push_number(&mut line, Some(lot.quantity));
        line.push(b',');
        self.dates.push(&mut line, lot.acquired);
        line.extend_from_slice(b",,,");
        push_number(&mut line, lot.basis);
        line.extend_from_slice(b",,,");
        push_line_of(&mut line, lot.seq);
        line.extend_from_slice(b",,");
        if lot.basis.is_none() {
            line.extend_from_slice(b"unpriced");
        }
        line.extend_from_slice(b",,,");
        match holder {
            Holder::AllWallets => {}
            Holder::Exchange => line.extend_from_slice(b"exchange"),
            Holder::Wallet(id) => line.extend_from_slice(&self.wallets[id as usize]),
        }
        line.push(b'\n');
        self.output.write_all(&line)?;
        self.line = line;
        Ok(())
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

fn push_u128(line: &mut Vec<u8>, mut n: u128) {
    let mut digits = [0u8; 40];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    line.extend_from_slice(&digits[at..]);
}

/// `value.normalize().to_string()` (csv_io's `number`) without the
/// allocation: digits of the mantissa, trailing zeros of the fraction
/// dropped, no sign on zero; nothing when unknown.
fn push_number(line: &mut Vec<u8>, value: Option<Decimal>) {
    let Some(value) = value else { return };
    let mut mantissa = value.mantissa();
    let mut scale = value.scale();
    if mantissa == 0 {
        line.push(b'0');
        return;
    }
    while scale > 0 && mantissa % 10 == 0 {
        mantissa /= 10;
        scale -= 1;
    }
    if mantissa < 0 {
        line.push(b'-');
    }
    let magnitude = mantissa.unsigned_abs();
    let mut digits = Vec::with_capacity(0);
    let start = line.len();
    push_u128(line, magnitude);
    let len = line.len() - start;
    let scale = scale as usize;
    if scale > 0 {
        if len <= scale {
            // 0.000ddd: the integer part and leading zeros of the fraction.
            digits.extend_from_slice(&line[start..]);
            line.truncate(start);
            line.extend_from_slice(b"0.");
            line.resize(line.len() + scale - len, b'0');
            line.extend_from_slice(&digits);
        } else {
            line.insert(line.len() - scale, b'.');
        }
    }
}

/// Civil dates in `zone`, remembered by UTC hour: every zone but a fixed
/// offset changes date and offset only on whole UTC hours (civil.rs), so
/// one hour has one date.
struct Dates {
    zone: Zone,
    cache: Vec<(i64, Option<NaiveDate>)>,
}

const DATE_SLOTS: usize = 4096;

impl Dates {
    fn new(zone: Zone) -> Self {
        Dates {
            zone,
            cache: vec![(i64::MIN, None); DATE_SLOTS],
        }
    }

    fn date(&mut self, unix: i64) -> Option<NaiveDate> {
        if matches!(self.zone, Zone::Fixed(_)) {
            return self.zone.date(unix);
        }
        let hour = unix.div_euclid(3_600);
        let slot = (hour as usize) % DATE_SLOTS;
        if let Some((h, date)) = self.cache.get(slot)
            && *h == hour
        {
            return *date;
        }
        let date = self.zone.date(unix);
        if let Some(entry) = self.cache.get_mut(slot) {
            *entry = (hour, date);
        }
        date
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
