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

use std::{collections::HashMap, io};

use rust_decimal::Decimal;

use super::{
    Event, EventKind, Method,
    books::{
        self, Allocation, Balance, EXCHANGE, PoolScope, UNIVERSAL, Unallocated,
        UnlabelledTransfers,
    },
    csv_io::{
        self, BOOKS_OUTPUT_COLUMNS, BooksInput, InputError, OpenRow, RowKind, write_holding,
        write_tax_row,
    },
    engine::{Engine, PoolId},
    jurisdiction::{
        Jurisdiction, Matching, MethodRefused, TaxYear, Taxpayer, Zone, assess_in, au, de,
        held_over_a_year, us,
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

        let mut writer = csv::Writer::from_writer(output);
        writer.write_record(BOOKS_OUTPUT_COLUMNS)?;
        let mut dates = DateMemo::new(zone);
        let mut years = YearMemo::new(jurisdiction, zone);
        let line_of = |seq: u64| {
            if seq == u64::MAX {
                String::new()
            } else {
                (seq / 2).to_string()
            }
        };
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
                d.asset.push_str(asset);
                d.rule = match jurisdiction {
                    Jurisdiction::De => de::rule(&d, zone),
                    Jurisdiction::Au => au::rule(&d, zone),
                    _ => d.rule,
                };
                if jurisdiction == Jurisdiction::Us
                    && let Some(acquired) = d.acquired
                {
                    // 26 USC §1222 in the taxpayer's dates (Rev. Rul. 66-7),
                    // as jurisdiction::assess_in does.
                    d.term = Some(if held_over_a_year(acquired, d.disposed, zone) {
                        super::Term::Long
                    } else {
                        super::Term::Short
                    });
                }
                outcome.count(&d);
                write_tax_row(
                    &mut writer,
                    &d,
                    years.of(d.disposed),
                    &wallets.names[wallet],
                    line_of,
                    |t| dates.text(t),
                )?;
            }
        }
        let (replay, pools) = engine.finish();
        for (lot, pool) in replay.open_lots.iter().zip(pools) {
            let wallet = match pool {
                UNIVERSAL => "",
                EXCHANGE => "exchange",
                p => sorted.get((p - 2) as usize).copied().unwrap_or_default(),
            };
            write_holding(
                &mut writer,
                OpenRow {
                    asset: &lot.asset,
                    quantity: lot.quantity,
                    acquired: Some(lot.acquired),
                    cost: lot.basis,
                    seq: Some(lot.seq),
                    wallet,
                },
                line_of,
                |t| dates.text(t),
            )?;
        }
        writer.flush()?;
        Ok(outcome)
    }
}

/// Civil dates as text, `zone`'s conversion done once per second seen
/// last (a disposal's rows share its time).
struct DateMemo {
    zone: Zone,
    last: Option<(i64, String)>,
}

impl DateMemo {
    fn new(zone: Zone) -> Self {
        DateMemo { zone, last: None }
    }

    fn text(&mut self, unix: i64) -> String {
        if let Some((t, text)) = &self.last
            && *t == unix
        {
            return text.clone();
        }
        let text = self
            .zone
            .date(unix)
            .map(|d| d.to_string())
            .unwrap_or_else(|| unix.to_string());
        self.last = Some((unix, text.clone()));
        text
    }
}

/// The tax year of a time, remembered for the last time asked.
struct YearMemo {
    jurisdiction: Jurisdiction,
    zone: Zone,
    last: Option<(i64, TaxYear)>,
}

impl YearMemo {
    fn new(jurisdiction: Jurisdiction, zone: Zone) -> Self {
        YearMemo {
            jurisdiction,
            zone,
            last: None,
        }
    }

    fn of(&mut self, unix: i64) -> TaxYear {
        match self.last {
            Some((t, year)) if t == unix => year,
            _ => {
                let year = self.jurisdiction.tax_year_in(self.zone, unix);
                self.last = Some((unix, year));
                year
            }
        }
    }
}
