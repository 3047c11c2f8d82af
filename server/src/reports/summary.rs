//! The report object (`format: json`, and the figures the PDF prints):
//! meta (when, how, over what range, the SOL price then), then per wallet
//! and in total the realized gains by term, income (staking rewards, MEV
//! tips, airdrops) by kind, network fees, open positions and the value at
//! the start and end of the range. Money and quantities are decimal
//! strings, never floats.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::Serialize;

use super::{
    book::{Book, text, whole},
    tokens,
};
use crate::{
    analytics::{positions::RealizedView, value_history::StaleMint},
    basis::{Method, Totals},
    ledger::OperationType,
    payments::PaymentBlock,
    values::rfc3339,
};

/// What a report is generated with, beside the books.
#[derive(Clone, Debug)]
pub struct Context {
    pub generated_ms: i64,
    pub method: Method,
    pub exclude_spam: bool,
    pub from: Option<String>,
    pub to: Option<String>,
    pub sol_usd: Option<Decimal>,
}

/// The range as asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RangeView {
    /// Inclusive lower bound as given; null from the first leg.
    pub from: Option<String>,
    /// Inclusive upper bound as given; null up to the time of generation.
    pub to: Option<String>,
}

/// How and when the report was made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Meta {
    /// RFC 3339.
    pub generated_at: String,
    /// fifo, lifo, hifo or average.
    pub method: String,
    /// False for average cost: not accepted for US filings of digital assets.
    pub accepted_for_us_filings: bool,
    pub exclude_spam: bool,
    pub range: RangeView,
    /// The SOL price in USD when the report was made (get_prices); null
    /// when no source answered.
    pub sol_usd_at_generation: Option<String>,
    /// The wallets, as asked.
    pub wallets: Vec<String>,
}

/// Income in the range, valued at block time: staking rewards, MEV tips,
/// airdrops (and airdrop_spam when it is not excluded), lending interest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncomeView {
    /// USD over the priced legs.
    pub usd: String,
    pub legs: u64,
    /// Legs with no USD value (left out of usd).
    pub unpriced_legs: u64,
    /// The same by kind, always the four kinds in this order:
    /// staking_rewards, mev, airdrops, other.
    pub by_kind: Vec<IncomeKindView>,
}

/// What income is, for the report's `income.by_kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IncomeKind {
    /// `staking_reward` legs: each epoch's inflation reward.
    StakingRewards,
    /// `mev_reward` legs: claimed Jito tips.
    Mev,
    /// `airdrop` (and `airdrop_spam` when kept).
    Airdrops,
    /// Income of no kind above: `interest` legs, the yield a lending
    /// position paid out beyond what went in (ledger::interest).
    Other,
}

impl IncomeKind {
    pub const ALL: [IncomeKind; 4] = [
        IncomeKind::StakingRewards,
        IncomeKind::Mev,
        IncomeKind::Airdrops,
        IncomeKind::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            IncomeKind::StakingRewards => "staking_rewards",
            IncomeKind::Mev => "mev",
            IncomeKind::Airdrops => "airdrops",
            IncomeKind::Other => "other",
        }
    }

    /// The kind of income an inbound leg of `op` is, if it is income.
    pub fn of(op: OperationType) -> Option<Self> {
        match op {
            OperationType::StakingReward => Some(IncomeKind::StakingRewards),
            OperationType::MevReward => Some(IncomeKind::Mev),
            OperationType::Airdrop | OperationType::AirdropSpam => Some(IncomeKind::Airdrops),
            OperationType::Interest => Some(IncomeKind::Other),
            _ => None,
        }
    }
}

/// One kind of income.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncomeKindView {
    /// staking_rewards, mev, airdrops or other.
    pub kind: String,
    /// USD at receipt over the priced legs.
    pub usd: String,
    pub legs: u64,
    /// Legs with no USD value (left out of usd).
    pub unpriced_legs: u64,
    /// Quantity received per mint.
    pub assets: Vec<IncomeAsset>,
}

/// The quantity of one mint received as one kind of income.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncomeAsset {
    /// A mint, or "sol".
    pub mint: String,
    pub symbol: String,
    /// Whole tokens.
    pub quantity: String,
    /// USD at receipt over the priced legs of this mint.
    pub usd: String,
}

/// Network fees paid in the range.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FeesView {
    pub sol: String,
    /// The same in lamports, a string.
    pub lamports: String,
    /// USD at each fee's block time, over the priced fees.
    pub usd: String,
    pub legs: u64,
    pub unpriced_legs: u64,
}

/// One mint held at the end of the range.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OpenPosition {
    /// A mint, or "sol".
    pub mint: String,
    /// From the shipped token list; the mint itself when unknown.
    pub symbol: String,
    /// Open quantity in whole tokens (rent-locked SOL included).
    pub quantity: String,
    /// Open lots.
    pub lots: u64,
    /// Remaining cost basis in USD; null when any lot's is unknown.
    pub basis_usd: Option<String>,
    /// USD per whole token at the end of the range; null when unpriced.
    pub price_usd: Option<String>,
    /// quantity × price; null when unpriced.
    pub value_usd: Option<String>,
}

/// The figures of one wallet, or of all together.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Figures {
    /// Realized gains of disposals in the range (one row per lot consumed).
    pub realized: RealizedView,
    pub income: IncomeView,
    pub fees: FeesView,
    pub open_positions: Vec<OpenPosition>,
    /// Value of the holdings at the start of the range (0 without from).
    pub value_start_usd: String,
    /// Value of the holdings at the end of the range (at spot without to).
    pub value_end_usd: String,
    /// Mints held at the start or end with no price then (left out of the values).
    pub unpriced_mints: Vec<String>,
    /// Mints held at the start or end whose price then is unavailable (a
    /// price source down): counted in the value at their last known close,
    /// named here with that close's time and age. Compare values without
    /// them. Absent when every price is current.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_mints: Vec<StaleMint>,
    /// Ledger legs in the range.
    pub legs: u64,
}

/// One wallet's part of the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WalletReport {
    pub address: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// The report object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Report {
    pub meta: Meta,
    pub wallets: Vec<WalletReport>,
    /// Every wallet together (each wallet is its own cost-basis pool).
    pub total: Figures,
    /// The taxpayer's books under a jurisdiction, in its currency, by tax
    /// year: present only when the call named `jurisdiction`, `currency`
    /// or `tax_year` (docs/reports.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tax: Option<crate::analytics::tax::TaxSection>,
    /// The payment this call settled (or replayed), with its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<PaymentBlock>,
}

/// One kind of income, summed.
#[derive(Default)]
struct IncomeSums {
    usd: Decimal,
    legs: u64,
    unpriced: u64,
    assets: BTreeMap<String, (Decimal, Decimal)>,
}

impl IncomeSums {
    fn merge(&mut self, o: IncomeSums) {
        self.usd += o.usd;
        self.legs += o.legs;
        self.unpriced += o.unpriced;
        for (mint, (q, v)) in o.assets {
            let entry = self.assets.entry(mint).or_default();
            entry.0 += q;
            entry.1 += v;
        }
    }
}

/// Sums kept exact until they are written.
#[derive(Default)]
struct Sums {
    realized: Totals,
    income_usd: Decimal,
    income_legs: u64,
    income_unpriced: u64,
    /// kind → (usd, legs, unpriced legs, mint → (quantity, usd))
    income_by_kind: BTreeMap<IncomeKind, IncomeSums>,
    fee_lamports: i128,
    fee_usd: Decimal,
    fee_legs: u64,
    fee_unpriced: u64,
    /// mint → (quantity, lots, basis if all known, price)
    open: BTreeMap<String, (Decimal, u64, Option<Decimal>, Option<Decimal>)>,
    value_start: Decimal,
    value_end: Decimal,
    unpriced: Vec<String>,
    stale: Vec<StaleMint>,
    legs: u64,
}

impl Sums {
    fn of(book: &Book) -> Self {
        let mut s = Sums {
            realized: book.realized(),
            ..Sums::default()
        };
        for (leg, usd) in book.legs_in_range() {
            s.legs += 1;
            let op = OperationType::parse(&leg.operation_type);
            match op.and_then(IncomeKind::of) {
                Some(kind) if leg.amount > 0 => {
                    s.income_legs += 1;
                    match usd {
                        Some(v) => s.income_usd += v,
                        None => s.income_unpriced += 1,
                    }
                    let sums = s.income_by_kind.entry(kind).or_default();
                    sums.legs += 1;
                    match usd {
                        Some(v) => sums.usd += v,
                        None => sums.unpriced += 1,
                    }
                    let asset = sums.assets.entry(leg.mint.clone()).or_default();
                    asset.0 += whole(leg.amount, leg.decimals);
                    asset.1 += usd.unwrap_or_default();
                    continue;
                }
                _ => {}
            }
            if op == Some(OperationType::NetworkFee) {
                s.fee_legs += 1;
                s.fee_lamports += -leg.amount;
                match usd {
                    Some(v) => s.fee_usd += v,
                    None => s.fee_unpriced += 1,
                }
            }
        }
        for asset in &book.replay.assets {
            if asset.open_quantity <= Decimal::ZERO {
                continue;
            }
            let lots: Vec<_> = book
                .replay
                .open_lots
                .iter()
                .filter(|l| l.asset == asset.asset)
                .collect();
            let basis = lots.iter().map(|l| l.basis).sum::<Option<Decimal>>();
            s.open.insert(
                asset.asset.clone(),
                (
                    asset.open_quantity,
                    lots.len() as u64,
                    basis,
                    book.price_at_end(&asset.asset),
                ),
            );
        }
        let (start, mut unpriced, mut stale) = book.value_start();
        let (end, unpriced_end, stale_end) = book.value_end();
        unpriced.extend(unpriced_end);
        unpriced.sort();
        unpriced.dedup();
        stale.extend(stale_end);
        s.value_start = start;
        s.value_end = end;
        s.unpriced = unpriced;
        s.stale = stale;
        s
    }

    fn merge(&mut self, o: Sums) {
        self.realized.merge(&o.realized);
        self.income_usd += o.income_usd;
        self.income_legs += o.income_legs;
        self.income_unpriced += o.income_unpriced;
        for (kind, sums) in o.income_by_kind {
            self.income_by_kind.entry(kind).or_default().merge(sums);
        }
        self.fee_lamports += o.fee_lamports;
        self.fee_usd += o.fee_usd;
        self.fee_legs += o.fee_legs;
        self.fee_unpriced += o.fee_unpriced;
        for (mint, (q, n, basis, price)) in o.open {
            let entry =
                self.open
                    .entry(mint)
                    .or_insert((Decimal::ZERO, 0, Some(Decimal::ZERO), price));
            entry.0 += q;
            entry.1 += n;
            entry.2 = entry.2.zip(basis).map(|(a, b)| a + b);
            entry.3 = entry.3.or(price);
        }
        self.value_start += o.value_start;
        self.value_end += o.value_end;
        self.unpriced.extend(o.unpriced);
        self.unpriced.sort();
        self.unpriced.dedup();
        self.stale.extend(o.stale);
        self.stale
            .sort_by(|a, b| (&a.mint, &a.close_at).cmp(&(&b.mint, &b.close_at)));
        self.stale.dedup();
        self.legs += o.legs;
    }

    fn view(&self) -> Figures {
        let sol = Decimal::try_from_i128_with_scale(self.fee_lamports, 9).unwrap_or_default();
        Figures {
            realized: RealizedView::from(&self.realized),
            income: IncomeView {
                usd: text(self.income_usd),
                legs: self.income_legs,
                unpriced_legs: self.income_unpriced,
                by_kind: IncomeKind::ALL
                    .iter()
                    .map(|kind| {
                        let empty = IncomeSums::default();
                        let sums = self.income_by_kind.get(kind).unwrap_or(&empty);
                        IncomeKindView {
                            kind: kind.as_str().to_owned(),
                            usd: text(sums.usd),
                            legs: sums.legs,
                            unpriced_legs: sums.unpriced,
                            assets: sums
                                .assets
                                .iter()
                                .map(|(mint, (q, v))| IncomeAsset {
                                    mint: mint.clone(),
                                    symbol: tokens::symbol(mint).to_owned(),
                                    quantity: text(*q),
                                    usd: text(*v),
                                })
                                .collect(),
                        }
                    })
                    .collect(),
            },
            fees: FeesView {
                sol: text(sol),
                lamports: self.fee_lamports.to_string(),
                usd: text(self.fee_usd),
                legs: self.fee_legs,
                unpriced_legs: self.fee_unpriced,
            },
            open_positions: self
                .open
                .iter()
                .map(|(mint, (q, lots, basis, price))| OpenPosition {
                    mint: mint.clone(),
                    symbol: tokens::symbol(mint).to_owned(),
                    quantity: text(*q),
                    lots: *lots,
                    basis_usd: basis.map(|b| text(b.round_dp(8))),
                    price_usd: price.map(text),
                    value_usd: price.map(|p| text((p * q).round_dp(6))),
                })
                .collect(),
            value_start_usd: text(self.value_start.round_dp(6)),
            value_end_usd: text(self.value_end.round_dp(6)),
            unpriced_mints: self.unpriced.clone(),
            stale_mints: self.stale.clone(),
            legs: self.legs,
        }
    }
}

/// The report object over `books`.
pub fn report(ctx: &Context, books: &[Book]) -> Report {
    let mut total = Sums::default();
    let mut wallets = Vec::with_capacity(books.len());
    for book in books {
        let sums = Sums::of(book);
        wallets.push(WalletReport {
            address: book.address.clone(),
            figures: sums.view(),
        });
        total.merge(sums);
    }
    Report {
        meta: Meta {
            generated_at: rfc3339(ctx.generated_ms),
            method: ctx.method.as_str().to_owned(),
            accepted_for_us_filings: ctx.method.accepted_for_us_filings(),
            exclude_spam: ctx.exclude_spam,
            range: RangeView {
                from: ctx.from.clone(),
                to: ctx.to.clone(),
            },
            sol_usd_at_generation: ctx.sol_usd.map(text),
            wallets: books.iter().map(|b| b.address.clone()).collect(),
        },
        wallets,
        total: total.view(),
        tax: None,
        payment: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        analytics::Leg, basis::Method, ledger::SOL, prices::valuation::Valuer, reports::book::Range,
    };

    fn leg(sig: &str, op: OperationType, mint: &str, amount: i128) -> Leg {
        Leg {
            signature: sig.into(),
            index: 0,
            block_time: Some(1_735_732_800),
            operation_type: op.as_str().into(),
            mint: mint.into(),
            amount,
            decimals: if mint == SOL { 9 } else { 6 },
            counterparties: Vec::new(),
            position: None,
            router: None,
        }
    }

    /// Two rewards of 0.001234567 and 0.001 SOL (0.002234567), a MEV tip
    /// of 0.000002 SOL, an airdrop of 5 tokens and 25.5 USDC of lending
    /// interest: five income legs, by kind (interest is `other`); a stake
    /// deposit is no income. No prices, so every leg is unpriced and the
    /// USD sums are 0.
    #[test]
    fn income_is_summed_by_kind_with_quantities() {
        const BONK: &str = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";
        const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
        let legs = vec![
            leg("d", OperationType::StakeDeposit, SOL, -10_000_000_000),
            leg("reward:1:S", OperationType::StakingReward, SOL, 1_234_567),
            leg("reward:2:S", OperationType::StakingReward, SOL, 1_000_000),
            leg("m", OperationType::MevReward, SOL, 2_000),
            leg("a", OperationType::Airdrop, BONK, 5_000_000),
            leg("i", OperationType::Interest, USDC, 25_500_000),
        ];
        let book = Book::new(
            "w1",
            &legs,
            Valuer::default(),
            Method::Fifo,
            false,
            Range::default(),
            1_800_000_000,
        );
        let ctx = Context {
            generated_ms: 0,
            method: Method::Fifo,
            exclude_spam: false,
            from: None,
            to: None,
            sol_usd: None,
        };
        let r = report(&ctx, &[book]);
        let income = &r.total.income;
        assert_eq!(income.legs, 5);
        assert_eq!(income.unpriced_legs, 5);
        type Kind<'a> = (&'a str, u64, Vec<(&'a str, &'a str)>);
        let kinds: Vec<Kind> = income
            .by_kind
            .iter()
            .map(|k| {
                (
                    k.kind.as_str(),
                    k.legs,
                    k.assets
                        .iter()
                        .map(|a| (a.mint.as_str(), a.quantity.as_str()))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("staking_rewards", 2, vec![(SOL, "0.002234567")]),
                ("mev", 1, vec![(SOL, "0.000002")]),
                ("airdrops", 1, vec![(BONK, "5")]),
                ("other", 1, vec![(USDC, "25.5")]),
            ]
        );
        assert_eq!(r.wallets[0].figures.income, r.total.income);
    }
}
