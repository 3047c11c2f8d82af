//! Cost basis: replaying a wallet's dated acquisitions and disposals into
//! realized gains (one row per lot consumed, as Form 8949 lists them) and
//! the lots still open, under FIFO, LIFO, HIFO, LOFO or average cost, and
//! the taxpayer's books over several wallets under five jurisdictions.
//!
//! The engine is pure: it takes [`Event`]s and returns a [`Replay`], with no
//! clock, database or HTTP. Ledger legs become events in [`legs`]
//! ([`events_from_legs`]: swaps, fees, rent, spam); the offline CSV format
//! of `ledger basis` lives in [`csv_io`]; the replay itself in [`engine`];
//! several wallets of one taxpayer, with moves between them and labelled
//! transfers, in [`books`]; each country's rules in [`jurisdiction`].
//! Quantities are [`Decimal`] token units (the leg's atomic amount scaled by
//! its decimals, so exact: addition and subtraction of quantities never
//! round), USD is [`Decimal`]; nothing is a float. docs/cost-basis.md states
//! every rule, tie-break and source.

pub mod books;
pub mod csv_io;
pub mod engine;
pub mod jurisdiction;
pub mod legs;
pub mod stream;

use std::{fmt, str::FromStr};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

pub use engine::replay;
pub use legs::{LegInput, events_from_legs, events_from_legs_traced};

/// Which lots a disposal consumes.
///
/// FIFO is the US default (Treas. Reg. §1.1012-1(c)(1), and §1.1012-1(j)
/// for digital assets); LIFO and HIFO are specific identification
/// (§1.1012-1(c)(2)) and need the taxpayer's adequate identification.
/// Average cost is permitted in the US only for regulated investment
/// company shares (§1.1012-1(e)): it is **not accepted for US filings** of
/// digital assets and is offered for other jurisdictions and comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Oldest lot first; equal times by input order.
    #[default]
    Fifo,
    /// Newest lot first; equal times: the later in input order first.
    Lifo,
    /// Highest unit cost first; equal unit costs: oldest first; lots of
    /// unknown cost last.
    Hifo,
    /// Pooled average unit cost; lots still consumed oldest first for dates
    /// and holding period. Not accepted for US filings.
    Average,
    /// Lowest unit cost first (fees included in the cost); equal unit
    /// costs: oldest first; lots of unknown cost last. Specific
    /// identification like HIFO (§1.1012-1(c)(2), §1.1012-1(j)(3)).
    Lofo,
}

impl Method {
    pub const ALL: [Method; 5] = [
        Method::Fifo,
        Method::Lifo,
        Method::Hifo,
        Method::Average,
        Method::Lofo,
    ];

    /// The methods the service's tools and REST routes accept and document
    /// (docs/contract/guide.txt lists these four); LOFO is offered offline
    /// and by the jurisdiction rules until the surfaces take it.
    pub const SERVED: [Method; 4] = [Method::Fifo, Method::Lifo, Method::Hifo, Method::Average];

    /// `fifo`, `lifo`, `hifo`, `average` or `lofo`.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Fifo => "fifo",
            Method::Lifo => "lifo",
            Method::Hifo => "hifo",
            Method::Average => "average",
            Method::Lofo => "lofo",
        }
    }

    /// False for average cost, which US rules allow only for fund shares.
    pub fn accepted_for_us_filings(self) -> bool {
        !matches!(self, Method::Average)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Method {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text).ok_or_else(|| {
            format!(
                "unknown cost-basis method `{text}` (expected fifo, lifo, hifo, lofo or average)"
            )
        })
    }
}

/// Holding period of a realized row. Long means held more than one year,
/// counted from the day after acquisition (26 USC §1222; IRS Pub. 544).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Term {
    Short,
    Long,
}

impl Term {
    pub fn as_str(self) -> &'static str {
        match self {
            Term::Short => "short",
            Term::Long => "long",
        }
    }
}

/// What an [`Event`] does to the books.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// Opens a lot: basis = `usd_value + fee_usd`.
    Acquire,
    /// Consumes lots: proceeds = `usd_value - fee_usd`.
    Dispose,
    /// SOL moved into a rent deposit: still the wallet's, so no lot moves;
    /// it is counted as locked.
    RentLock,
    /// A rent deposit came back: unlocks up to what is locked; any excess
    /// (rent someone else paid, or a deposit before the history starts)
    /// opens a lot at `usd_value` for that excess.
    RentRelease,
    /// An asset moved into a position a program holds for the wallet (an
    /// order escrow, a vault, a lending obligation): still the wallet's, so
    /// its lots keep their dates and bases; it is counted as in positions.
    PositionLock,
    /// An asset came back from a position: unlocks up to what is in
    /// positions; any excess (deposited before the history starts) opens a
    /// lot at `usd_value` for that excess, as a rent release does.
    PositionRelease,
    /// A position paid out of what it held (a fill's sent side, disposed of
    /// by its own `Dispose` event): lowers what is in positions, no lots.
    PositionSpend,
    /// Opens a lot like [`EventKind::Acquire`], and the acquisition is
    /// income (a staking reward, a MEV tip): its fair value at receipt is
    /// both the income and the lot's basis (US Rev. Rul. 2023-14).
    Income,
    /// SOL moved into a stake account the wallet controls: still the
    /// wallet's, so no lot moves and the lots keep their dates and bases;
    /// it is counted as staked.
    StakeLock,
    /// SOL came back from the wallet's stake account: unstakes up to what
    /// is staked; any excess (stake deposited before the history starts)
    /// opens a lot at `usd_value` for that excess, as [`EventKind::RentRelease`].
    StakeRelease,
}

/// One dated movement of one asset, the engine's only input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Unix seconds (UTC).
    pub time: i64,
    /// Orders events with equal `time` (lower first) and names the event in
    /// the result. [`events_from_legs`] numbers events 0, 1, 2… in the order
    /// it returns them, so `seq` is also the index into that `Vec`.
    pub seq: u64,
    /// A mint, or `sol`; any stable name for CSV input.
    pub asset: String,
    pub kind: EventKind,
    /// Positive, in token units (not atomic units).
    pub quantity: Decimal,
    /// Fair value in USD of the whole quantity; `None` when unpriced.
    pub usd_value: Option<Decimal>,
    /// Costs in USD: added to basis on acquisition, subtracted from
    /// proceeds on disposal. Zero when none or unknown.
    pub fee_usd: Decimal,
}

/// One realized row: part of one disposal matched to one lot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disposal {
    pub asset: String,
    pub quantity: Decimal,
    /// When the consumed lot was acquired; `None` when uncovered.
    pub acquired: Option<i64>,
    pub disposed: i64,
    /// `None` when the disposal was unpriced.
    pub proceeds: Option<Decimal>,
    /// `None` when the lot was unpriced, or the row is uncovered.
    pub basis: Option<Decimal>,
    /// `proceeds - basis`, `None` when either is unknown.
    pub gain: Option<Decimal>,
    /// `None` when uncovered (no acquisition date).
    pub term: Option<Term>,
    /// More was disposed of than the replay had seen acquired: this row is
    /// the quantity no lot covered. Its basis is unknown, not zero.
    pub uncovered: bool,
    /// The disposal event's `seq`.
    pub disposal_seq: u64,
    /// The acquisition event's `seq` of the consumed lot.
    pub lot_seq: Option<u64>,
    /// The rule that matched this row: the lot method for a plain replay,
    /// a jurisdiction's own rule once [`jurisdiction`] has applied it.
    pub rule: Rule,
}

/// Which rule matched a realized row to its cost. The names are the
/// `rule` column of `ledger basis` and of the reports (issue 24 settles
/// them so that independent engines can be set beside this one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    Fifo,
    Lifo,
    Hifo,
    Lofo,
    Average,
    /// UK: acquisitions on the same day as the disposal (TCGA 1992
    /// s.105(1); HMRC CRYPTO22200, CG51560).
    SameDay,
    /// UK: acquisitions in the 30 days after the disposal, the "bed and
    /// breakfast" rule (TCGA 1992 s.106A(5); CRYPTO22200, CG51560).
    BedAndBreakfast,
    /// UK: the Section 104 pool (TCGA 1992 s.104; CRYPTO22200).
    Section104,
    /// Canada: adjusted cost base, averaged over identical properties
    /// (ITA s.47).
    Acb,
    /// Canada: a loss denied as superficial (ITA s.54, s.40(2)(g)(i)); the
    /// denied part is added to the substituted property's cost (s.53(1)(f)).
    SuperficialLoss,
    /// Germany: held more than one year, not a private sale (EStG §23
    /// Abs. 1 S. 1 Nr. 2).
    HeldOver1y,
    /// Germany: held one year or less, a taxable private sale.
    Held1yOrLess,
    /// Australia: the 50% CGT discount applies (ITAA 1997 s.115-25).
    Discount,
    /// Australia: no discount (held less than 12 months, or a loss).
    NoDiscount,
}

impl Rule {
    pub const ALL: [Rule; 14] = [
        Rule::SameDay,
        Rule::BedAndBreakfast,
        Rule::Section104,
        Rule::Acb,
        Rule::SuperficialLoss,
        Rule::HeldOver1y,
        Rule::Held1yOrLess,
        Rule::Discount,
        Rule::NoDiscount,
        Rule::Fifo,
        Rule::Lifo,
        Rule::Hifo,
        Rule::Lofo,
        Rule::Average,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Fifo => "fifo",
            Rule::Lifo => "lifo",
            Rule::Hifo => "hifo",
            Rule::Lofo => "lofo",
            Rule::Average => "average",
            Rule::SameDay => "same_day",
            Rule::BedAndBreakfast => "bed_and_breakfast",
            Rule::Section104 => "section_104",
            Rule::Acb => "acb",
            Rule::SuperficialLoss => "superficial_loss",
            Rule::HeldOver1y => "held_over_1y",
            Rule::Held1yOrLess => "held_1y_or_less",
            Rule::Discount => "discount",
            Rule::NoDiscount => "no_discount",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == text)
    }
}

impl From<Method> for Rule {
    fn from(method: Method) -> Self {
        match method {
            Method::Fifo => Rule::Fifo,
            Method::Lifo => Rule::Lifo,
            Method::Hifo => Rule::Hifo,
            Method::Lofo => Rule::Lofo,
            Method::Average => Rule::Average,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Disposal {
    /// Proceeds, basis and gain are all known: the row counts in totals.
    pub fn is_complete(&self) -> bool {
        self.gain.is_some()
    }
}

/// What is left of one acquisition after the replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lot {
    pub asset: String,
    /// Remaining quantity, always positive.
    pub quantity: Decimal,
    /// Remaining basis; `None` when unknown (unpriced acquisition, or for
    /// average cost a pool that holds any unpriced quantity).
    pub basis: Option<Decimal>,
    pub acquired: i64,
    /// The acquisition event's `seq`.
    pub seq: u64,
}

/// USD totals over the complete rows (proceeds, basis and gain known), so
/// `gain == proceeds - basis` exactly. Rows with an unknown figure are
/// counted apart in `incomplete_rows` / `incomplete_proceeds`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub proceeds: Decimal,
    pub basis: Decimal,
    pub gain: Decimal,
    pub short_term_gain: Decimal,
    pub long_term_gain: Decimal,
    pub rows: u64,
    /// Rows left out of the sums above: unpriced or uncovered.
    pub incomplete_rows: u64,
    /// Known proceeds of those rows (unpriced disposals contribute none).
    pub incomplete_proceeds: Decimal,
}

/// One asset's books after the replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssetSummary {
    pub asset: String,
    /// Lots opened: acquisitions and income, plus rent and stake releases
    /// beyond what was locked or staked.
    pub acquired_quantity: Decimal,
    /// All disposals, covered or not.
    pub disposed_quantity: Decimal,
    pub open_quantity: Decimal,
    /// Disposed beyond holdings: `acquired = disposed - uncovered + open`.
    pub uncovered_quantity: Decimal,
    /// Held in rent deposits now (part of `open_quantity`, not spendable).
    pub rent_locked: Decimal,
    /// Held in positions programs hold for the wallet now (part of
    /// `open_quantity`).
    #[serde(default, skip_serializing_if = "Decimal::is_zero")]
    pub in_positions: Decimal,
    /// Held in the wallet's stake accounts now (part of `open_quantity`,
    /// apart from `rent_locked`): deposits and rewards not yet withdrawn.
    pub staked: Decimal,
    /// Received as income ([`EventKind::Income`]): the quantity, and the
    /// fair value of its priced part.
    pub income_quantity: Decimal,
    pub income_usd: Decimal,
    /// Income received with no price: its value is unknown, not zero.
    pub income_unpriced_quantity: Decimal,
    pub totals: Totals,
}

/// The result of [`replay`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    pub method: Method,
    /// In replay order (time, then seq); one row per lot consumed.
    pub disposals: Vec<Disposal>,
    /// By asset, then acquisition time and seq.
    pub open_lots: Vec<Lot>,
    /// By asset name.
    pub assets: Vec<AssetSummary>,
    /// All assets together.
    pub total: Totals,
}

impl Replay {
    /// SOL held in rent deposits at the end, in lamports.
    pub fn rent_locked_lamports(&self) -> i128 {
        self.sol_lamports(|a| a.rent_locked)
    }

    /// SOL held in the wallet's stake accounts at the end, in lamports.
    pub fn staked_lamports(&self) -> i128 {
        self.sol_lamports(|a| a.staked)
    }

    fn sol_lamports(&self, of: impl Fn(&AssetSummary) -> Decimal) -> i128 {
        use rust_decimal::prelude::ToPrimitive;
        self.assets
            .iter()
            .find(|a| a.asset == crate::ledger::model::SOL)
            .and_then(|a| (of(a) * Decimal::from(1_000_000_000u64)).to_i128())
            .unwrap_or(0)
    }
}
