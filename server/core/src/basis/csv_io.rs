//! The offline CSV formats of `ledger basis`: dated acquisitions and
//! disposals in, realized rows and open lots out, so an accountant can
//! rerun a figure outside the service and set it beside another tool's.
//!
//! Input is parsed strictly at this edge (every refusal names its line)
//! and becomes plain [`Event`]s whose `seq` is the input line number; the
//! output is one CSV with one header and a `record` column (`disposal` or
//! `open`), because one table filters and pivots in any spreadsheet where
//! several would not. docs/cost-basis.md documents both formats.

use std::io;

use chrono::{DateTime, NaiveDate};
use rust_decimal::Decimal;

use super::{
    Disposal, Event, EventKind, Replay, Rule,
    books::{Counterparty, Holder, Transfer, WalletEvent},
    jurisdiction::{Assessment, TaxYear, Zone},
};

/// Columns of the input; `fee_usd` may be left out.
pub const INPUT_COLUMNS: [&str; 6] = ["date", "type", "asset", "quantity", "usd_value", "fee_usd"];

/// Columns of the output.
pub const OUTPUT_COLUMNS: [&str; 12] = [
    "record",
    "asset",
    "quantity",
    "acquired",
    "disposed",
    "proceeds",
    "basis",
    "gain",
    "term",
    "lot_line",
    "disposal_line",
    "note",
];

/// Largest accepted quantity and USD amount: far above any real figure,
/// and low enough that no sum over millions of rows can overflow.
const MAX_QUANTITY: Decimal = Decimal::from_parts(0xA764_0000, 0x0DE0_B6B3, 0, false, 0); // 1e18
const MAX_USD: Decimal = Decimal::from_parts(0xA4C6_8000, 0x0003_8D7E, 0, false, 0); // 1e15

/// Why an input file was refused.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("line {line}: {message}")]
    Invalid { line: u64, message: String },
    #[error("{0}")]
    Read(String),
}

fn invalid(line: u64, message: impl Into<String>) -> InputError {
    InputError::Invalid {
        line,
        message: message.into(),
    }
}

/// The refusal of a file that is not UTF-8, whatever else is wrong in it
/// (the file was once read whole into a string first: this keeps that
/// answer while reading row by row).
fn not_utf8() -> InputError {
    InputError::Read("the file is not valid UTF-8".to_owned())
}

/// The input read row by row through the csv crate. The reader notes
/// where the line ends (`\n` and `\r`) are among the bytes read and not
/// yet passed (the csv crate reads ahead by its buffer, 8 KiB), so that
/// records' line numbers can be counted from their byte offsets without
/// the whole file in memory, and checks that every byte read is UTF-8.
struct Tracked<R> {
    inner: R,
    /// Offsets of the `\n` and `\r` bytes read at or after `offset`.
    ends: std::collections::VecDeque<(u64, u8)>,
    /// Bytes read so far.
    read: u64,
    /// Offset and 1-based line of the last record asked for.
    offset: u64,
    line: u64,
    utf8: Utf8Check,
    /// Reading the rest only to check it is UTF-8: nothing is noted.
    draining: bool,
}

impl<R: io::Read> io::Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let bytes = &buf[..n];
        self.utf8.feed(bytes);
        if !self.draining {
            for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
                self.ends.push_back((self.read + i as u64, bytes[i]));
            }
        }
        self.read += n as u64;
        Ok(n)
    }
}

impl<R: io::Read> Tracked<R> {
    fn new(inner: R) -> Self {
        Tracked {
            inner,
            ends: std::collections::VecDeque::new(),
            read: 0,
            offset: 0,
            line: 1,
            utf8: Utf8Check::default(),
            draining: false,
        }
    }

    /// The 1-based line of the record the csv crate says starts at `byte`,
    /// asked for in increasing order. The csv crate's offset is where it
    /// started reading, before any blank lines it skipped (it does not count
    /// them in its own line numbers), so those are stepped over first.
    fn line_at(&mut self, byte: u64) -> u64 {
        let mut byte = byte.clamp(self.offset, self.read);
        while let Some(&(at, b)) = self.ends.front() {
            if at < byte {
                self.line += u64::from(b == b'\n');
            } else if at == byte {
                // A line end where the record starts: a blank line.
                self.line += u64::from(b == b'\n');
                byte += 1;
            } else {
                break;
            }
            self.ends.pop_front();
        }
        self.offset = byte;
        self.line
    }

    /// Whether the whole input is UTF-8: reads what is left unread.
    fn rest_is_utf8(&mut self) -> bool {
        self.draining = true;
        let _ = io::copy(self, &mut io::sink());
        self.utf8.finish()
    }
}

/// UTF-8 validation of a byte stream read in chunks.
#[derive(Default)]
struct Utf8Check {
    invalid: bool,
    /// The start of a character cut by the end of the last chunk.
    tail: Vec<u8>,
}

impl Utf8Check {
    fn feed(&mut self, mut bytes: &[u8]) {
        if self.invalid {
            return;
        }
        while !self.tail.is_empty() {
            let Some((&b, rest)) = bytes.split_first() else {
                return;
            };
            bytes = rest;
            self.tail.push(b);
            match std::str::from_utf8(&self.tail) {
                Ok(_) => self.tail.clear(),
                Err(e) if e.error_len().is_some() || self.tail.len() >= 4 => {
                    self.invalid = true;
                    return;
                }
                Err(_) => {}
            }
        }
        if let Err(e) = std::str::from_utf8(bytes) {
            match e.error_len() {
                Some(_) => self.invalid = true,
                None => self.tail = bytes[e.valid_up_to()..].to_vec(),
            }
        }
    }

    /// True when everything fed was UTF-8 (no character left cut).
    fn finish(&self) -> bool {
        !self.invalid && self.tail.is_empty()
    }
}

type Records<R> = csv::Reader<Tracked<R>>;

/// Run `body` over the input's records; whatever it answers, a file that is
/// not UTF-8 is refused as such.
fn with_records<R: io::Read, T>(
    input: R,
    body: impl FnOnce(&mut Records<R>) -> Result<T, InputError>,
) -> Result<T, InputError> {
    // Fields are trimmed where they are read ([`field_of`]), not by the
    // reader: the same text (the reader's trim is `str::trim` too) without
    // trimming the fields no one reads.
    let mut reader = csv::ReaderBuilder::new().from_reader(Tracked::new(input));
    let result = body(&mut reader);
    let utf8 = match &result {
        Err(InputError::Read(_)) => true,
        _ => reader.get_mut().rest_is_utf8(),
    };
    if utf8 { result } else { Err(not_utf8()) }
}

/// The header record and the line it is on.
fn header<R: io::Read>(reader: &mut Records<R>) -> Result<(csv::StringRecord, u64), InputError> {
    let mut headers = match reader.headers() {
        Ok(headers) => headers.clone(),
        Err(err) => return Err(csv_error(err, reader)),
    };
    let header_line = match headers.position() {
        Some(p) => reader.get_mut().line_at(p.byte()),
        None => 1,
    };
    headers.trim();
    Ok((headers, header_line))
}

/// Field `at` of `record`, trimmed (`str::trim`, as the csv crate's
/// `Trim::All` trims); empty when the column is absent.
fn field_of(record: &csv::StringRecord, at: Option<usize>) -> &str {
    at.and_then(|i| record.get(i)).map_or("", trim)
}

/// `str::trim`, skipped when the field starts and ends with a printable
/// ASCII byte: every whitespace character `str::trim` removes is either
/// ASCII at or below the space, or not ASCII at all.
fn trim(field: &str) -> &str {
    let printable = |b: Option<&u8>| b.is_some_and(|b| (b'!'..=b'~').contains(b));
    let bytes = field.as_bytes();
    if printable(bytes.first()) && printable(bytes.last()) {
        field
    } else {
        field.trim()
    }
}

/// Read the next record into `record`; its line, or `None` at the end.
fn next_record<R: io::Read>(
    reader: &mut Records<R>,
    record: &mut csv::StringRecord,
) -> Result<Option<u64>, InputError> {
    match reader.read_record(record) {
        Ok(true) => Ok(Some(
            record
                .position()
                .map_or(0, |p| reader.get_mut().line_at(p.byte())),
        )),
        Ok(false) => Ok(None),
        Err(err) => Err(csv_error(err, reader)),
    }
}

/// Where each of `names` stands in the header (`None`: absent); a column
/// not among them, or one named twice, is refused at the header's line.
fn map_columns<const N: usize>(
    headers: &csv::StringRecord,
    names: &[&str; N],
    header_line: u64,
) -> Result<[Option<usize>; N], InputError> {
    let mut column = [None; N];
    for (i, name) in headers.iter().enumerate() {
        let Some(at) = names.iter().position(|c| *c == name) else {
            return Err(invalid(
                header_line,
                format!("unknown column `{name}` (expected {})", names.join(", ")),
            ));
        };
        if column[at].replace(i).is_some() {
            return Err(invalid(
                header_line,
                format!("column `{name}` appears twice"),
            ));
        }
    }
    Ok(column)
}

/// Parse the input CSV (header required; columns in any order; fields are
/// trimmed; blank lines skipped).
pub fn read_events(input: impl io::Read) -> Result<Vec<Event>, InputError> {
    with_records(input, |reader| {
        let (headers, header_line) = header(reader)?;
        let column = map_columns(&headers, &INPUT_COLUMNS, header_line)?;
        for (at, name) in INPUT_COLUMNS.iter().enumerate().take(5) {
            if column[at].is_none() {
                return Err(invalid(header_line, format!("missing column `{name}`")));
            }
        }
        let mut events = Vec::new();
        let mut record = csv::StringRecord::new();
        while let Some(line) = next_record(reader, &mut record)? {
            let field = |at: usize| field_of(&record, column[at]);
            let event = parse_row(line, field)?;
            // A staking reward lands in the stake account, as the ledger's
            // `staking_reward` leg does: income, then staked.
            let staked = (field(1) == "staking_reward").then(|| Event {
                kind: EventKind::StakeLock,
                usd_value: None,
                fee_usd: Decimal::ZERO,
                ..event.clone()
            });
            events.push(event);
            events.extend(staked);
        }
        Ok(events)
    })
}

/// Columns of the taxpayer's input (`ledger basis --jurisdiction`): the
/// plain columns, or `value` and `fee` in the jurisdiction's currency
/// instead of `usd_value` and `fee_usd`, and `wallet` and `to_wallet` for
/// per-wallet pools and moves.
pub const BOOKS_COLUMNS: [&str; 10] = [
    "date",
    "type",
    "asset",
    "quantity",
    "usd_value",
    "fee_usd",
    "value",
    "fee",
    "wallet",
    "to_wallet",
];

/// The taxpayer's input: events of several wallets, and for each the input
/// line it came from (the books number events by index).
#[derive(Clone, Debug, Default)]
pub struct BooksInput {
    pub events: Vec<WalletEvent>,
    /// `lines[i]` is the input line of `events[i]`.
    pub lines: Vec<u64>,
    /// True when values came in `usd_value`/`fee_usd` (USD), false when in
    /// `value`/`fee` (the jurisdiction's currency).
    pub in_usd: bool,
}

/// Parse the taxpayer's input: [`read_events`]'s format plus `value`/`fee`
/// (instead of `usd_value`/`fee_usd`), `wallet` (empty or absent: one
/// unnamed wallet) and the `move` type, which moves `quantity` from
/// `wallet` to `to_wallet` (another wallet of the same person) and carries
/// no value: its network fee is its own `dispose` row. A move becomes a
/// send and a receive paired by a signature made from its line.
pub fn read_books(input: impl io::Read) -> Result<BooksInput, InputError> {
    let mut out = BooksInput::default();
    out.in_usd = read_books_rows(input, |row| {
        let BooksRow {
            line,
            wallet,
            to_wallet,
            fields,
            kind,
        } = row;
        let mut event = fields.into_event(line);
        // Numbered by index, as the books number events (`lines` keeps the
        // line), so the books need not copy them.
        event.seq = out.events.len() as u64;
        match kind {
            RowKind::Move => {
                let transfer = Transfer {
                    signature: format!("move at line {line}"),
                    counterparty: Counterparty::OwnWallet,
                };
                let receive = Event {
                    kind: EventKind::Acquire,
                    seq: event.seq + 1,
                    ..event.clone()
                };
                out.events.push(WalletEvent {
                    wallet: wallet.to_owned(),
                    event,
                    transfer: Some(transfer.clone()),
                });
                out.events.push(WalletEvent {
                    wallet: to_wallet.to_owned(),
                    event: receive,
                    transfer: Some(transfer),
                });
                out.lines.extend([line, line]);
            }
            RowKind::StakingReward => {
                let staked = Event {
                    kind: EventKind::StakeLock,
                    seq: event.seq + 1,
                    usd_value: None,
                    fee_usd: Decimal::ZERO,
                    ..event.clone()
                };
                for event in [event, staked] {
                    out.events.push(WalletEvent {
                        wallet: wallet.to_owned(),
                        event,
                        transfer: None,
                    });
                    out.lines.push(line);
                }
            }
            RowKind::Plain => {
                out.events.push(WalletEvent {
                    wallet: wallet.to_owned(),
                    event,
                    transfer: None,
                });
                out.lines.push(line);
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// What a row of the taxpayer's input makes besides its own event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowKind {
    /// One event.
    Plain,
    /// A `move`: `fields` are its send (a dispose of no value) from
    /// `wallet`; its receive in `to_wallet` is the same units.
    Move,
    /// A `staking_reward`: income, then staked (a stake lock of no value).
    StakingReward,
}

/// One row of the taxpayer's input, checked; borrowed from the reader.
pub(crate) struct BooksRow<'r> {
    pub(crate) line: u64,
    pub(crate) wallet: &'r str,
    pub(crate) to_wallet: &'r str,
    pub(crate) fields: Fields<'r>,
    pub(crate) kind: RowKind,
}

/// [`read_books`] row by row: checks the header and each row as it does
/// and hands each row to `each` as it is read, so a caller can keep rows
/// in its own compact form ([`super::stream`]). Returns `in_usd`.
pub(crate) fn read_books_rows(
    input: impl io::Read,
    mut each: impl FnMut(BooksRow<'_>) -> Result<(), InputError>,
) -> Result<bool, InputError> {
    with_records(input, |reader| {
        let (headers, header_line) = header(reader)?;
        let column = map_columns(&headers, &BOOKS_COLUMNS, header_line)?;
        for (at, name) in BOOKS_COLUMNS.iter().enumerate().take(4) {
            if column[at].is_none() {
                return Err(invalid(header_line, format!("missing column `{name}`")));
            }
        }
        // Values in USD or in the jurisdiction's currency, never both.
        let in_usd = match (column[4], column[6]) {
            (Some(_), None) => {
                if column[7].is_some() {
                    return Err(invalid(
                        header_line,
                        "column `fee` goes with `value`, not `usd_value`",
                    ));
                }
                true
            }
            (None, Some(_)) => {
                if column[5].is_some() {
                    return Err(invalid(
                        header_line,
                        "column `fee_usd` goes with `usd_value`, not `value`",
                    ));
                }
                false
            }
            (Some(_), Some(_)) => {
                return Err(invalid(
                    header_line,
                    "give `usd_value` or `value`, not both",
                ));
            }
            (None, None) => {
                return Err(invalid(
                    header_line,
                    "missing column `usd_value` (or `value`)",
                ));
            }
        };
        let (value_at, fee_at) = if in_usd { (4, 5) } else { (6, 7) };

        let mut record = csv::StringRecord::new();
        while let Some(line) = next_record(reader, &mut record)? {
            // Each field trimmed once.
            let fields: [&str; 10] = std::array::from_fn(|at| field_of(&record, column[at]));
            let raw = |at: usize| fields[at];
            let is_move = raw(1) == "move";
            let wallet = raw(8);
            let to_wallet = raw(9);
            if is_move {
                if to_wallet.is_empty() {
                    return Err(invalid(line, "a move needs `to_wallet`"));
                }
                if to_wallet == wallet {
                    return Err(invalid(line, "a move's `to_wallet` is its own `wallet`"));
                }
                if !raw(value_at).is_empty() || !raw(fee_at).is_empty() {
                    return Err(invalid(
                        line,
                        "a move carries no value (its network fee is its own dispose row)",
                    ));
                }
            } else if !to_wallet.is_empty() {
                return Err(invalid(line, "`to_wallet` is only for type `move`"));
            }
            // The plain row's fields, with the value columns in use.
            let field = |at: usize| match at {
                1 if is_move => "dispose",
                4 => raw(value_at),
                5 => raw(fee_at),
                at => raw(at),
            };
            let fields = parse_fields(line, field)?;
            let kind = if is_move {
                RowKind::Move
            } else if field(1) == "staking_reward" {
                RowKind::StakingReward
            } else {
                RowKind::Plain
            };
            each(BooksRow {
                line,
                wallet,
                to_wallet,
                fields,
                kind,
            })?;
        }
        Ok(in_usd)
    })
}

fn parse_row<'a>(line: u64, field: impl Fn(usize) -> &'a str) -> Result<Event, InputError> {
    parse_fields(line, field).map(|f| f.into_event(line))
}

/// A row's checked fields, the asset borrowed from the row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fields<'a> {
    pub(crate) time: i64,
    pub(crate) kind: EventKind,
    pub(crate) asset: &'a str,
    pub(crate) quantity: Decimal,
    pub(crate) usd_value: Option<Decimal>,
    pub(crate) fee_usd: Decimal,
}

impl Fields<'_> {
    /// The event, numbered by its line.
    fn into_event(self, line: u64) -> Event {
        Event {
            time: self.time,
            seq: line,
            asset: self.asset.to_owned(),
            kind: self.kind,
            quantity: self.quantity,
            usd_value: self.usd_value,
            fee_usd: self.fee_usd,
        }
    }
}

fn parse_fields<'a>(line: u64, field: impl Fn(usize) -> &'a str) -> Result<Fields<'a>, InputError> {
    let time = parse_date(field(0)).ok_or_else(|| {
        invalid(
            line,
            format!("date `{}` is neither RFC 3339 nor YYYY-MM-DD", field(0)),
        )
    })?;
    let kind = match field(1) {
        "acquire" => EventKind::Acquire,
        "dispose" => EventKind::Dispose,
        // The ledger's leg types for income and staking (docs/cost-basis.md);
        // `staking_reward` is also staked (read_events).
        "income" | "staking_reward" | "mev_reward" => EventKind::Income,
        "stake_deposit" => EventKind::StakeLock,
        "stake_withdraw" => EventKind::StakeRelease,
        other => {
            return Err(invalid(
                line,
                format!(
                    "type `{other}` is not acquire or dispose (nor income, staking_reward, \
                     mev_reward, stake_deposit or stake_withdraw)"
                ),
            ));
        }
    };
    let asset = field(2);
    if asset.is_empty() {
        return Err(invalid(line, "asset is empty"));
    }
    let quantity = amount(line, "quantity", field(3), MAX_QUANTITY)?
        .ok_or_else(|| invalid(line, "quantity is empty"))?;
    if quantity.is_zero() {
        return Err(invalid(line, "quantity must be more than zero"));
    }
    let usd_value = amount(line, "usd_value", field(4), MAX_USD)?;
    let fee_usd = amount(line, "fee_usd", field(5), MAX_USD)?.unwrap_or_default();
    Ok(Fields {
        time,
        kind,
        asset,
        quantity,
        usd_value,
        fee_usd,
    })
}

/// A non-negative decimal no larger than `max`; `None` when empty.
fn amount(line: u64, name: &str, text: &str, max: Decimal) -> Result<Option<Decimal>, InputError> {
    if text.is_empty() {
        return Ok(None);
    }
    let value: Decimal = text
        .parse()
        .map_err(|_| invalid(line, format!("{name} `{text}` is not a decimal number")))?;
    if value.is_sign_negative() && !value.is_zero() {
        return Err(invalid(line, format!("{name} `{text}` is negative")));
    }
    // A mantissa no larger than `max` is a value no larger (the scale only
    // divides): the comparison of decimals is left for the rest.
    let small = max.scale() == 0 && value.mantissa() <= max.mantissa();
    if !small && value > max {
        return Err(invalid(
            line,
            format!("{name} `{text}` is larger than {max}"),
        ));
    }
    Ok(Some(value))
}

/// RFC 3339, or a date (midnight UTC).
fn parse_date(text: &str) -> Option<i64> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.timestamp());
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp())
}

fn csv_error<R: io::Read>(err: csv::Error, reader: &mut Records<R>) -> InputError {
    if matches!(err.kind(), csv::ErrorKind::Utf8 { .. }) {
        return not_utf8();
    }
    match err.position() {
        Some(p) => invalid(reader.get_mut().line_at(p.byte()), strip_position(&err)),
        None => InputError::Read(err.to_string()),
    }
}

/// The csv crate's message without its own position prefix.
fn strip_position(err: &csv::Error) -> String {
    match err.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields where the header has {expected_len}"),
        _ => err.to_string(),
    }
}

/// Write the replay as one CSV: disposals in replay order, then open lots.
pub fn write_report(output: impl io::Write, replay: &Replay) -> Result<(), csv::Error> {
    let mut writer = csv::Writer::from_writer(output);
    writer.write_record(OUTPUT_COLUMNS)?;
    for d in &replay.disposals {
        let note = if d.uncovered {
            "uncovered"
        } else if d.proceeds.is_none() || d.basis.is_none() {
            "unpriced"
        } else {
            ""
        };
        writer.write_record([
            "disposal",
            &d.asset,
            &number(Some(d.quantity)),
            &d.acquired.map(day).unwrap_or_default(),
            &day(d.disposed),
            &number(d.proceeds),
            &number(d.basis),
            &number(d.gain),
            d.term.map(|t| t.as_str()).unwrap_or_default(),
            &d.lot_seq.map(|s| s.to_string()).unwrap_or_default(),
            &d.disposal_seq.to_string(),
            note,
        ])?;
    }
    for lot in &replay.open_lots {
        writer.write_record([
            "open",
            &lot.asset,
            &number(Some(lot.quantity)),
            &day(lot.acquired),
            "",
            "",
            &number(lot.basis),
            "",
            "",
            &lot.seq.to_string(),
            "",
            if lot.basis.is_none() { "unpriced" } else { "" },
        ])?;
    }
    writer.flush()?;
    Ok(())
}

/// Columns of the taxpayer's output: [`OUTPUT_COLUMNS`], then the tax
/// year, the rule that matched the row, and the wallet.
pub const BOOKS_OUTPUT_COLUMNS: [&str; 15] = [
    "record",
    "asset",
    "quantity",
    "acquired",
    "disposed",
    "proceeds",
    "basis",
    "gain",
    "term",
    "lot_line",
    "disposal_line",
    "note",
    "tax_year",
    "rule",
    "wallet",
];

/// Write an assessment as one CSV, like [`write_report`] with `tax_year`,
/// `rule` and `wallet` added: disposals in replay order, then what is still
/// held. Dates are civil dates in `zone`; `lines` maps the books' event
/// indexes to input lines. A Section 104 row's `acquired` is `pool`; an
/// open row's wallet is its wallet, empty for a pool of all wallets,
/// `exchange` for lots at an exchange.
pub fn write_assessment(
    output: impl io::Write,
    assessment: &Assessment,
    lines: &[u64],
    zone: Zone,
) -> Result<(), csv::Error> {
    let line_of = |seq: u64| {
        usize::try_from(seq)
            .ok()
            .and_then(|i| lines.get(i))
            .map(u64::to_string)
            .unwrap_or_default()
    };
    let date = |unix: i64| {
        zone.date(unix)
            .map(|d| d.to_string())
            .unwrap_or_else(|| unix.to_string())
    };
    let mut writer = csv::Writer::from_writer(output);
    writer.write_record(BOOKS_OUTPUT_COLUMNS)?;
    for r in &assessment.rows {
        write_tax_row(&mut writer, &r.row, r.tax_year, &r.wallet, &line_of, &date)?;
    }
    for h in &assessment.holdings {
        let wallet = match &h.holder {
            Holder::AllWallets => "",
            Holder::Wallet(w) => w.as_str(),
            Holder::Exchange => "exchange",
        };
        write_holding(
            &mut writer,
            OpenRow {
                asset: &h.asset,
                quantity: h.quantity,
                acquired: h.acquired,
                cost: h.cost,
                seq: h.seq,
                wallet,
            },
            &line_of,
            &date,
        )?;
    }
    writer.flush()?;
    Ok(())
}

/// One `disposal` row of [`write_assessment`]'s output: `line_of` names
/// an event's input line, `date` a civil date.
pub(crate) fn write_tax_row<W: io::Write>(
    writer: &mut csv::Writer<W>,
    d: &Disposal,
    tax_year: TaxYear,
    wallet: &str,
    mut line_of: impl FnMut(u64) -> String,
    mut date: impl FnMut(i64) -> String,
) -> Result<(), csv::Error> {
    let note = if d.uncovered {
        "uncovered"
    } else if d.proceeds.is_none() || d.basis.is_none() {
        "unpriced"
    } else {
        ""
    };
    let acquired = match (d.acquired, d.rule) {
        (Some(t), _) => date(t),
        (None, Rule::Section104) => "pool".to_owned(),
        (None, _) => String::new(),
    };
    writer.write_record([
        "disposal",
        &d.asset,
        &number(Some(d.quantity)),
        &acquired,
        &date(d.disposed),
        &number(d.proceeds),
        &number(d.basis),
        &number(d.gain),
        d.term.map(|t| t.as_str()).unwrap_or_default(),
        &d.lot_seq.map(&mut line_of).unwrap_or_default(),
        &line_of(d.disposal_seq),
        note,
        &tax_year.to_string(),
        d.rule.as_str(),
        wallet,
    ])
}

/// What an `open` row of [`write_assessment`]'s output says.
pub(crate) struct OpenRow<'r> {
    pub(crate) asset: &'r str,
    pub(crate) quantity: Decimal,
    /// `None`: a pool (`pool` in the `acquired` column).
    pub(crate) acquired: Option<i64>,
    pub(crate) cost: Option<Decimal>,
    pub(crate) seq: Option<u64>,
    /// Empty for a pool of all wallets, `exchange` for lots at an exchange.
    pub(crate) wallet: &'r str,
}

/// One `open` row of [`write_assessment`]'s output.
pub(crate) fn write_holding<W: io::Write>(
    writer: &mut csv::Writer<W>,
    h: OpenRow<'_>,
    mut line_of: impl FnMut(u64) -> String,
    mut date: impl FnMut(i64) -> String,
) -> Result<(), csv::Error> {
    writer.write_record([
        "open",
        h.asset,
        &number(Some(h.quantity)),
        &h.acquired
            .map(&mut date)
            .unwrap_or_else(|| "pool".to_owned()),
        "",
        "",
        &number(h.cost),
        "",
        "",
        &h.seq.map(&mut line_of).unwrap_or_default(),
        "",
        if h.cost.is_none() { "unpriced" } else { "" },
        "",
        "",
        h.wallet,
    ])
}

/// Plain decimal without trailing zeros; empty when unknown.
fn number(value: Option<Decimal>) -> String {
    value.map(|v| v.normalize().to_string()).unwrap_or_default()
}

/// `YYYY-MM-DD` in UTC.
fn day(unix: i64) -> String {
    DateTime::from_timestamp(unix, 0)
        .map(|t| t.date_naive().to_string())
        .unwrap_or_else(|| unix.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basis::{Method, replay};

    fn refusal(text: &str) -> String {
        read_events(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn reads_dates_both_ways_and_numbers_lines_as_seq() {
        let events = read_events(
            "date,type,asset,quantity,usd_value,fee_usd\n\
             2024-01-02,acquire,SOL,1.5,150,1\n\
             \n\
             2024-03-01T12:00:00Z,dispose,SOL,1,,\n"
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!((events[0].time, events[0].seq), (1_704_153_600, 2));
        assert_eq!(events[0].fee_usd, Decimal::ONE);
        assert_eq!((events[1].time, events[1].seq), (1_709_294_400, 4));
        assert_eq!(events[1].usd_value, None);
    }

    #[test]
    fn columns_may_come_in_any_order_and_fee_may_be_absent() {
        let events = read_events(
            "asset,quantity,type,usd_value,date\nX,2,acquire,4,2024-01-01\n".as_bytes(),
        )
        .unwrap();
        assert_eq!(events[0].asset, "X");
        assert_eq!(events[0].fee_usd, Decimal::ZERO);
    }

    /// The ledger's income and staking types: 10 SOL bought, staked, a
    /// 0.5 SOL reward (income $50, and staked) and all 10.5 withdrawn, then
    /// two liquid income rows ($1 and $2): no disposal, four lots (10, 0.5,
    /// 0.01, 0.02 = 10.53 SOL), nothing staked at the end.
    #[test]
    fn income_and_staking_types_are_read() {
        let events = read_events(
            "date,type,asset,quantity,usd_value\n\
             2024-01-01,acquire,SOL,10,1000\n\
             2024-01-02,stake_deposit,SOL,10,1000\n\
             2024-02-01,staking_reward,SOL,0.5,50\n\
             2024-03-01,stake_withdraw,SOL,10.5,1100\n\
             2024-03-02,mev_reward,SOL,0.01,1\n\
             2024-03-03,income,SOL,0.02,2\n"
                .as_bytes(),
        )
        .unwrap();
        let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            vec![
                EventKind::Acquire,
                EventKind::StakeLock,
                EventKind::Income,
                EventKind::StakeLock,
                EventKind::StakeRelease,
                EventKind::Income,
                EventKind::Income,
            ]
        );
        let r = crate::basis::replay(&events, crate::basis::Method::Fifo);
        assert!(r.disposals.is_empty());
        assert_eq!(r.open_lots.len(), 4);
        assert_eq!(r.assets[0].open_quantity, Decimal::new(1053, 2));
        assert_eq!(r.assets[0].income_usd, Decimal::from(53));
        assert_eq!(r.assets[0].staked, Decimal::ZERO);
    }

    #[test]
    fn refusals_name_the_line() {
        let head = "date,type,asset,quantity,usd_value,fee_usd\n";
        assert_eq!(
            refusal(&format!("{head}2024-01-01,buy,X,1,1,0\n")),
            "line 2: type `buy` is not acquire or dispose (nor income, staking_reward, \
             mev_reward, stake_deposit or stake_withdraw)"
        );
        assert_eq!(
            refusal(&format!(
                "{head}2024-01-01,acquire,X,1,1,0\n2024-13-01,acquire,X,1,1,0\n"
            )),
            "line 3: date `2024-13-01` is neither RFC 3339 nor YYYY-MM-DD"
        );
        assert_eq!(
            refusal(&format!("{head}2024-01-01,acquire,X,abc,1,0\n")),
            "line 2: quantity `abc` is not a decimal number"
        );
        assert_eq!(
            refusal(&format!("{head}2024-01-01,acquire,X,0,1,0\n")),
            "line 2: quantity must be more than zero"
        );
        assert_eq!(
            refusal(&format!("{head}2024-01-01,acquire,X,1,-1,0\n")),
            "line 2: usd_value `-1` is negative"
        );
        assert_eq!(
            refusal(&format!("{head}2024-01-01,acquire,X,1\n")),
            "line 2: 4 fields where the header has 6"
        );
        assert_eq!(
            refusal("date,type,asset,quantity,price\n"),
            "line 1: unknown column `price` (expected date, type, asset, quantity, usd_value, fee_usd)"
        );
        assert_eq!(
            refusal("date,type,asset,quantity\n"),
            "line 1: missing column `usd_value`"
        );
        assert_eq!(
            refusal(&format!("{head}2024-01-01,acquire,X,1,1e30,0\n")),
            "line 2: usd_value `1e30` is not a decimal number"
        );
        assert_eq!(
            refusal(&format!(
                "{head}2024-01-01,acquire,X,1,2000000000000000,0\n"
            )),
            "line 2: usd_value `2000000000000000` is larger than 1000000000000000"
        );
    }

    #[test]
    fn writes_disposals_then_open_lots_with_one_header() {
        let events = read_events(
            "date,type,asset,quantity,usd_value,fee_usd\n\
             2023-01-15,acquire,SOL,2,40,0\n\
             2024-01-16,dispose,SOL,3,90,0\n\
             2024-02-01,acquire,BONK,100,,\n"
                .as_bytes(),
        )
        .unwrap();
        let mut out = Vec::new();
        write_report(&mut out, &replay(&events, Method::Fifo)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "record,asset,quantity,acquired,disposed,proceeds,basis,gain,term,lot_line,disposal_line,note\n\
             disposal,SOL,2,2023-01-15,2024-01-16,60,40,20,long,2,3,\n\
             disposal,SOL,1,,2024-01-16,30,,,,,3,uncovered\n\
             open,BONK,100,2024-02-01,,,,,,4,,unpriced\n"
        );
    }

    /// A reader that hands out a few bytes at a time, so that records and
    /// line ends fall across reads.
    struct Trickle<'a>(&'a [u8], usize);

    impl io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// Line numbers are counted while the file streams: blank lines
    /// (`\n`, `\r\n`) and rows before a bad one, far past the csv crate's
    /// buffer, whatever the size of each read.
    #[test]
    fn a_refusal_names_its_line_however_the_file_is_read() {
        let mut text = String::from("date,type,asset,quantity,usd_value,fee_usd\n");
        let mut line = 1;
        for n in 0..5_000 {
            text.push_str("2024-01-02,acquire,SOL,1.5,150,1\n");
            line += 1;
            if n % 7 == 0 {
                text.push_str("\r\n\n");
                line += 2;
            }
        }
        text.push_str("2024-01-02,sell,SOL,1,1,0\n");
        line += 1;
        for chunk in [1, 7, 4096, 1 << 20] {
            let err = read_events(Trickle(text.as_bytes(), chunk)).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "line {line}: type `sell` is not acquire or dispose (nor income, \
                     staking_reward, mev_reward, stake_deposit or stake_withdraw)"
                ),
                "reads of {chunk} bytes"
            );
        }
    }

    /// The file was once read whole as UTF-8 before any row: a file that is
    /// not UTF-8 is still refused as such, even after a bad row or with a
    /// character cut at the end.
    #[test]
    fn a_file_that_is_not_utf8_is_refused_as_such() {
        let head = b"date,type,asset,quantity,usd_value,fee_usd\n".to_vec();
        let bad_row_then_bad_byte = [
            head.clone(),
            b"2024-01-02,sell,SOL,1,1,0\n2024-01-02,acquire,S\xffL,1,1,0\n".to_vec(),
        ]
        .concat();
        let cut_at_the_end =
            [head.clone(), b"2024-01-02,acquire,SOL,1,1,0\n\xc3".to_vec()].concat();
        let in_a_row = [head, b"2024-01-02,acquire,S\xc3L,1,1,0\n".to_vec()].concat();
        for bytes in [bad_row_then_bad_byte, cut_at_the_end, in_a_row] {
            for chunk in [1, 3, 1 << 16] {
                let err = read_events(Trickle(&bytes, chunk)).unwrap_err();
                assert_eq!(err.to_string(), "the file is not valid UTF-8");
            }
        }
        // A character cut across reads is still UTF-8.
        let fine = "date,type,asset,quantity,usd_value,fee_usd\n2024-01-02,acquire,SÖL€,1,1,0\n";
        for chunk in [1, 2, 3] {
            assert_eq!(
                read_events(Trickle(fine.as_bytes(), chunk)).unwrap()[0].asset,
                "SÖL€"
            );
        }
    }

    /// Fields are trimmed as the csv crate's `Trim::All` trims them.
    #[test]
    fn fields_are_trimmed_as_the_csv_crate_trims_them() {
        let text = "a,b,c,d,e,f,g\n x ,\u{a0}y\u{a0},\u{b}z,\u{3000}w\u{85},\t,,q\r\n";
        let mut theirs = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let expected: Vec<String> = theirs
            .records()
            .next()
            .unwrap()
            .unwrap()
            .iter()
            .map(str::to_owned)
            .collect();
        let mut ours = csv::ReaderBuilder::new().from_reader(text.as_bytes());
        let record = ours.records().next().unwrap().unwrap();
        let got: Vec<&str> = (0..record.len())
            .map(|i| field_of(&record, Some(i)))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(got, ["x", "y", "z", "w", "", "", "q"]);
    }

    #[test]
    fn the_bounds_are_what_they_say() {
        assert_eq!(MAX_QUANTITY, Decimal::from(1_000_000_000_000_000_000u64));
        assert_eq!(MAX_USD, Decimal::from(1_000_000_000_000_000u64));
    }
}
