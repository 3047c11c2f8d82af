//! `get_positions`: a scanned wallet's positions under a cost-basis method
//! (SPEC N3): open lots per mint, the realized PnL and income summary,
//! rent-locked SOL, staked SOL apart from liquid, and each stake account
//! with its reconciliation (SPEC S6). The replay is the `basis` engine's (docs/cost-basis.md has every
//! rule); this module values the legs at their block times
//! (`prices::valuation`), hands them over and shapes the answer.
//!
//! A replay reads and values every leg of the wallet, so its answer is
//! kept ([`ReplayCache`], one per store) per wallet, method and spam
//! choice, with the ledger version it was made from (bumped in the same
//! transaction as any leg written) and the fingerprint of the prices it
//! used. A call whose wallet is at the same version and whose valuer, made
//! as every call makes it, has the same fingerprint gets the kept answer:
//! exactly what the replay would give again.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex, PoisonError},
};

use bytes::Bytes;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Leg, scanned_legs};
use crate::{
    accounts::Principal,
    basis::{self, LegInput, Method, Replay, Totals},
    error::AppError,
    ledger::OperationType,
    payments::{PaymentBlock, Presented},
    prices::valuation::Valuer,
    reads::{ReadKind, Reads},
    solana::WalletAddress,
    telemetry::CacheStats,
    values::{KeptJson, rfc3339},
};

/// The arguments of `get_positions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetPositionsArgs {
    /// The wallet's base58 public key.
    pub address: WalletAddress,
    /// Leave airdrop_spam legs out of the replay; default true.
    #[serde(default)]
    #[schemars(extend("default" = true))]
    pub exclude_spam: Option<bool>,
    /// fifo | lifo | hifo | average; default fifo.
    #[serde(default, deserialize_with = "crate::params::optional_method")]
    #[schemars(with = "Option<crate::params::CostMethod>", extend("default" = "fifo"))]
    pub method: Option<Method>,
    #[serde(flatten)]
    pub pay: crate::payments::PayArgs,
    #[serde(flatten)]
    pub tax: super::tax::TaxArgs,
}

/// Realized figures in USD (decimal strings) over the complete rows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RealizedView {
    pub proceeds: String,
    pub basis: String,
    pub gain: String,
    pub short_term_gain: String,
    pub long_term_gain: String,
    /// Realized rows (one per lot consumed) in the sums.
    pub rows: u64,
    /// Rows left out of the sums: unpriced, or disposed beyond holdings.
    pub incomplete_rows: u64,
    /// Known proceeds of those rows.
    pub incomplete_proceeds: String,
}

impl From<&Totals> for RealizedView {
    fn from(t: &Totals) -> Self {
        let s = |d: Decimal| d.normalize().to_string();
        Self {
            proceeds: s(t.proceeds),
            basis: s(t.basis),
            gain: s(t.gain),
            short_term_gain: s(t.short_term_gain),
            long_term_gain: s(t.long_term_gain),
            rows: t.rows,
            incomplete_rows: t.incomplete_rows,
            incomplete_proceeds: s(t.incomplete_proceeds),
        }
    }
}

/// What is left of one acquisition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LotView {
    /// Remaining quantity in whole tokens, a decimal string.
    pub quantity: String,
    /// Remaining cost basis in USD; null when unknown (unpriced).
    pub basis_usd: Option<String>,
    /// USD per whole token; null when unknown.
    pub unit_cost_usd: Option<String>,
    /// When it was acquired (RFC 3339).
    pub acquired: String,
}

/// One mint's position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PositionView {
    /// A mint, or "sol".
    pub mint: String,
    /// Held now, whole tokens (rent-locked SOL included).
    pub open_quantity: String,
    /// Disposed beyond what the ledger shows acquired (history before the scan).
    pub uncovered_quantity: String,
    /// Held in rent deposits (SOL only).
    pub rent_locked: String,
    /// Held in the wallet's stake accounts (SOL only; part of open_quantity).
    pub staked: String,
    /// Received as income (staking rewards, MEV tips), whole tokens.
    pub income_quantity: String,
    /// Fair value at receipt of the priced income, USD.
    pub income_usd: String,
    /// Open lots in the method's order of acquisition.
    pub lots: Vec<LotView>,
    pub realized: RealizedView,
}

/// An account a program holds for the wallet (a limit order's or DCA's
/// escrow; docs/ledger.md "Positions"): what went in and what came out, per
/// mint, in atomic units as strings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ProgramPositionView {
    /// The program account: the order or DCA account.
    pub id: String,
    /// The program's name in the ledger's registry, e.g. "Jupiter Limit Order v2".
    pub program: Option<String>,
    pub protocol: Option<String>,
    /// Deposited into the position (position_deposit legs).
    pub deposited: BTreeMap<String, String>,
    /// Came back to the wallet (position_withdraw legs).
    pub withdrawn: BTreeMap<String, String>,
    /// Left it as the sent side of fills (swap legs with this position).
    pub filled: BTreeMap<String, String>,
    /// Paid out beyond what went in, as income (interest legs: a lending
    /// position's yield, docs/ledger.md "Lending interest").
    pub interest: BTreeMap<String, String>,
    /// Deposited less withdrawn and filled: what the ledger shows it holds.
    pub held: BTreeMap<String, String>,
}

/// The wallet's program positions from its legs, by first appearance.
pub fn program_positions(legs: &[Leg]) -> Vec<ProgramPositionView> {
    type Sums = BTreeMap<String, i128>;
    let mut order: Vec<&str> = Vec::new();
    let mut sums: HashMap<&str, (Option<&str>, Sums, Sums, Sums, Sums)> = HashMap::new();
    for leg in legs {
        let Some(id) = leg.position.as_deref() else {
            continue;
        };
        let entry = sums.entry(id).or_insert_with(|| {
            order.push(id);
            (None, Sums::new(), Sums::new(), Sums::new(), Sums::new())
        });
        let add = |m: &mut Sums, v: i128| *m.entry(leg.mint.clone()).or_insert(0) += v;
        match OperationType::parse(&leg.operation_type) {
            // A receipt (LP token, position NFT) moving the other way is the
            // position's key, not what it holds.
            Some(OperationType::PositionDeposit) if leg.amount < 0 => {
                add(&mut entry.1, -leg.amount)
            }
            Some(OperationType::PositionWithdraw) if leg.amount > 0 => {
                add(&mut entry.2, leg.amount)
            }
            Some(OperationType::Swap) if leg.amount < 0 => add(&mut entry.3, -leg.amount),
            Some(OperationType::Interest) => add(&mut entry.4, leg.amount),
            _ => {}
        }
        // Deposits and withdrawals name the order program alone; a fill's
        // router starts with it.
        if entry.0.is_none() {
            entry.0 = leg.router.as_deref().and_then(|r| r.split(", ").next());
        }
    }
    let text = |m: &Sums| m.iter().map(|(k, v)| (k.clone(), v.to_string())).collect();
    order
        .into_iter()
        .filter_map(|id| {
            let (router, deposited, withdrawn, filled, interest) = sums.remove(id)?;
            let mut held = deposited.clone();
            for (mint, v) in withdrawn.iter().chain(&filled) {
                *held.entry(mint.clone()).or_insert(0) -= v;
            }
            held.retain(|_, v| *v != 0);
            let registered = router.and_then(crate::ledger::protocols::by_name);
            Some(ProgramPositionView {
                id: id.to_owned(),
                program: router.map(str::to_owned),
                protocol: registered.map(|p| p.protocol.to_owned()),
                deposited: text(&deposited),
                withdrawn: text(&withdrawn),
                filled: text(&filled),
                interest: text(&interest),
                held: text(&held),
            })
        })
        .collect()
}

/// Where one of the wallet's stake accounts stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StakeAccountStatus {
    /// It exists, controlled by the wallet.
    Open,
    /// Withdrawn or merged away: it no longer exists.
    Closed,
    /// Its withdraw authority moved to someone else.
    HandedOver,
}

/// One of the wallet's stake accounts, as the last scan reconciled it:
/// deposits + rewards − withdrawals against its balance (docs/ledger.md,
/// "Staking").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StakeAccountView {
    /// The stake account's address.
    pub address: String,
    /// open, closed or handed_over.
    pub status: StakeAccountStatus,
    /// The balance it was checked against: now when open, 0 when closed,
    /// right after the handover when handed over; in SOL.
    pub balance_sol: String,
    /// The same in lamports (a string).
    pub balance_lamports: String,
    /// Whether its history adds up to that balance to the lamport.
    pub reconciled: bool,
    /// The balance minus deposits + rewards − withdrawals, in lamports (a
    /// string; "0" when reconciled).
    pub difference_lamports: String,
}

/// The wallet's reconciled stake accounts, by address (an account no scan
/// has reconciled yet is left out).
pub fn stake_account_views(rows: &[crate::store::StakeAccountRow]) -> Vec<StakeAccountView> {
    rows.iter()
        .filter_map(|row| {
            let balance = row.balance_lamports?;
            let difference = row.difference_lamports.unwrap_or(0);
            Some(StakeAccountView {
                address: row.account.clone(),
                status: if row.handed_over_now() {
                    StakeAccountStatus::HandedOver
                } else if balance == 0 {
                    StakeAccountStatus::Closed
                } else {
                    StakeAccountStatus::Open
                },
                balance_sol: Decimal::from_i128_with_scale(i128::from(balance), 9)
                    .normalize()
                    .to_string(),
                balance_lamports: balance.to_string(),
                reconciled: difference == 0,
                difference_lamports: difference.to_string(),
            })
        })
        .collect()
}

/// A wallet's positions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Positions {
    pub address: String,
    /// fifo, lifo, hifo or average.
    pub method: String,
    /// False for average cost: not accepted for US filings of digital assets.
    pub accepted_for_us_filings: bool,
    pub exclude_spam: bool,
    pub positions: Vec<PositionView>,
    /// Every mint together.
    pub realized: RealizedView,
    /// SOL held in rent deposits now, in SOL and in lamports (a string).
    pub rent_locked_sol: String,
    pub rent_locked_lamports: String,
    /// SOL in the wallet's stake accounts now (deposits and rewards not yet
    /// withdrawn), in SOL and in lamports (a string).
    pub staked_sol: String,
    pub staked_lamports: String,
    /// SOL neither staked nor rent-locked: open SOL less both, in SOL and
    /// lamports.
    pub liquid_sol: String,
    pub liquid_lamports: String,
    /// Income received (staking rewards, MEV tips) at fair value at
    /// receipt, every mint together, USD over the priced part.
    pub income_usd: String,
    /// Legs the replay had no USD value for (their rows are incomplete).
    pub unpriced_legs: u64,
    /// Accounts programs hold for the wallet (limit orders, DCA), beside
    /// the holdings above, whose lots include what they hold; absent when
    /// there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub program_positions: Vec<ProgramPositionView>,
    /// The wallet's stake accounts, each with its reconciliation; absent
    /// when it has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stake_accounts: Vec<StakeAccountView>,
    /// The wallet's books under a jurisdiction, in its currency, by tax
    /// year (holdings by holder, realized rows with their rules): present
    /// only when the call named `jurisdiction`, `currency` or `tax_year`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tax: Option<super::tax::TaxSection>,
    /// The payment this call settled (or replayed), with its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<PaymentBlock>,
}

/// The legs as the engine reads them; legs without a block time replay at 0.
pub fn inputs(legs: &[Leg], valuer: &Valuer) -> (Vec<LegInput>, u64) {
    let mut unpriced = 0u64;
    let inputs = legs
        .iter()
        .filter_map(|l| {
            let operation_type = OperationType::parse(&l.operation_type)?;
            let usd_value = valuer
                .value(&l.mint, l.amount, l.decimals, l.block_time)
                .map(|u| u.abs());
            if usd_value.is_none() {
                unpriced += 1;
            }
            Some(LegInput {
                signature: l.signature.clone(),
                index: l.index,
                block_time: l.block_time.unwrap_or(0),
                operation_type,
                mint: l.mint.clone(),
                amount: l.amount,
                decimals: u8::try_from(l.decimals).unwrap_or(u8::MAX),
                usd_value,
                position: l.position.clone(),
            })
        })
        .collect();
    (inputs, unpriced)
}

/// Shape a replay.
pub fn view(address: &str, replay: &Replay, exclude_spam: bool, unpriced_legs: u64) -> Positions {
    let s = |d: Decimal| d.normalize().to_string();
    let mut lots: BTreeMap<&str, Vec<LotView>> = BTreeMap::new();
    for lot in &replay.open_lots {
        lots.entry(lot.asset.as_str()).or_default().push(LotView {
            quantity: s(lot.quantity),
            basis_usd: lot.basis.map(|b| s(b.round_dp(8))),
            unit_cost_usd: lot
                .basis
                .filter(|_| !lot.quantity.is_zero())
                .map(|b| s((b / lot.quantity).round_dp(8))),
            acquired: rfc3339(lot.acquired.saturating_mul(1000)),
        });
    }
    let lamports = replay.rent_locked_lamports();
    let staked = replay.staked_lamports();
    let sol_open = replay
        .assets
        .iter()
        .find(|a| a.asset == crate::ledger::SOL)
        .map_or(Decimal::ZERO, |a| a.open_quantity);
    let liquid = (sol_open * Decimal::from(1_000_000_000u64))
        .trunc()
        .try_into()
        .map_or(0i128, |open: i128| open - lamports - staked);
    let sol =
        |lamports: i128| s(Decimal::try_from_i128_with_scale(lamports, 9).unwrap_or_default());
    Positions {
        address: address.to_owned(),
        method: replay.method.as_str().to_owned(),
        accepted_for_us_filings: replay.method.accepted_for_us_filings(),
        exclude_spam,
        positions: replay
            .assets
            .iter()
            .map(|a| PositionView {
                mint: a.asset.clone(),
                open_quantity: s(a.open_quantity),
                uncovered_quantity: s(a.uncovered_quantity),
                rent_locked: s(a.rent_locked),
                staked: s(a.staked),
                income_quantity: s(a.income_quantity),
                income_usd: s(a.income_usd),
                lots: lots.remove(a.asset.as_str()).unwrap_or_default(),
                realized: RealizedView::from(&a.totals),
            })
            .collect(),
        realized: RealizedView::from(&replay.total),
        rent_locked_sol: s(Decimal::try_from_i128_with_scale(lamports, 9).unwrap_or_default()),
        payment: None,
        rent_locked_lamports: lamports.to_string(),
        staked_sol: sol(staked),
        staked_lamports: staked.to_string(),
        liquid_sol: sol(liquid),
        liquid_lamports: liquid.to_string(),
        income_usd: s(replay.assets.iter().map(|a| a.income_usd).sum()),
        unpriced_legs,
        program_positions: Vec::new(),
        stake_accounts: Vec::new(),
        tax: None,
    }
}

/// `get_positions` for the MCP tool.
pub async fn get_positions(
    reads: &Reads<'_>,
    kept: &ReplayCache,
    principal: &Principal,
    args: GetPositionsArgs,
    presented: &Presented,
) -> Result<Positions, AppError> {
    let settings = super::tax::settings_of(reads.store(), principal.account()).await?;
    let tax = args.tax.choice(args.method, settings)?;
    let exclude_spam = args.exclude_spam.unwrap_or(true);
    let address = args.address.clone();
    let (kept, payment) = replayed(reads, kept, principal, args, presented).await?;
    let mut positions = kept.positions.clone();
    if let Some(choice) = tax {
        positions.tax = Some(tax_of(reads, principal, &address, exclude_spam, &choice).await?);
    }
    positions.payment = payment;
    Ok(positions)
}

/// The tax section of one wallet's books (with the caller's labels). For a
/// signed-in account the books also read its other own wallets (watched,
/// or labelled `own_wallet`) that have been scanned, so a send to one of
/// them pairs with its receive into a move (no gain, the lots keep their
/// dates and bases) rather than leaving the books, and a receive from one
/// brings the sender's lots; the section is this wallet's part of them.
async fn tax_of(
    reads: &Reads<'_>,
    principal: &Principal,
    address: &WalletAddress,
    exclude_spam: bool,
    choice: &super::tax::TaxChoice,
) -> Result<super::tax::TaxSection, AppError> {
    let store = reads.store();
    let labels = super::tax::Labels::of(store, principal.account()).await?;
    let mut others: Vec<WalletAddress> = Vec::new();
    for own in labels.own() {
        if own == address.as_str() {
            continue;
        }
        // An own address never scanned has no legs to read: a transfer
        // with it stays out of the books at basis, as before.
        let Ok(wallet) = WalletAddress::parse(own) else {
            continue;
        };
        if store.wallet_scanned(wallet.as_str()).await? {
            others.push(wallet);
        }
    }
    others.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    let mut read = Vec::with_capacity(others.len() + 1);
    for wallet in std::iter::once(address).chain(&others) {
        let legs = scanned_legs(reads, wallet).await?;
        let values = leg_values(reads, &legs).await?;
        read.push((wallet, legs, values));
    }
    let wallets: Vec<super::tax::WalletLegs<'_>> = read
        .iter()
        .map(|(wallet, legs, values)| super::tax::WalletLegs {
            wallet: wallet.as_str(),
            legs,
            values,
        })
        .collect();
    let events = super::tax::wallet_events(&wallets, &labels, exclude_spam);
    let mut section = super::tax::wallet_section(
        store,
        reads.prices,
        reads.now_ms(),
        &events,
        choice,
        address.as_str(),
        others.iter().map(|w| w.as_str().to_owned()).collect(),
    )
    .await?;
    // This wallet's own legs with no time (the others' are theirs).
    section.undated = super::tax::UndatedView::of(&wallets[..1]);
    Ok(section)
}

/// Each leg's USD value at its time (absolute; `None` when unpriced).
async fn leg_values(reads: &Reads<'_>, legs: &[Leg]) -> Result<Vec<Option<Decimal>>, AppError> {
    let times = legs.iter().filter_map(|l| l.block_time);
    let span = times.clone().min().zip(times.max());
    let mut mints: Vec<String> = legs.iter().map(|l| l.mint.clone()).collect();
    mints.sort();
    mints.dedup();
    let valuer = reads.valuer(mints, span).await?;
    Ok(legs
        .iter()
        .map(|l| {
            valuer
                .value(&l.mint, l.amount, l.decimals, l.block_time)
                .map(|v| v.abs())
        })
        .collect())
}

/// `get_positions` for the REST route: the same answer as JSON bytes. A kept
/// answer is serialised once, when it is kept, so a wallet with thousands of
/// open lots is not cloned and serialised again on every request; a payment
/// block, when there is one, is appended to the kept object.
pub async fn get_positions_json(
    reads: &Reads<'_>,
    kept: &ReplayCache,
    principal: &Principal,
    args: GetPositionsArgs,
    presented: &Presented,
) -> Result<(Arc<KeptJson>, Option<PaymentBlock>), AppError> {
    let settings = super::tax::settings_of(reads.store(), principal.account()).await?;
    let tax = args.tax.choice(args.method, settings)?;
    let exclude_spam = args.exclude_spam.unwrap_or(true);
    let address = args.address.clone();
    let (kept, payment) = replayed(reads, kept, principal, args, presented).await?;
    if let Some(choice) = tax {
        // A tax section is made per call (labels change it): serialised here.
        let mut positions = kept.positions.clone();
        positions.tax = Some(tax_of(reads, principal, &address, exclude_spam, &choice).await?);
        positions.payment = payment.clone();
        let body = Arc::new(KeptJson::new(Bytes::from(
            serde_json::to_vec(&positions)
                .map_err(|e| AppError::internal("serialising positions", e))?,
        )));
        return Ok((body, payment));
    }
    let body = crate::payments::x402::kept_answer(&kept.json, payment.as_ref())?;
    Ok((body, payment))
}

/// The paywall, then the kept replay of this wallet, method and spam choice
/// when it is still exact, else a new replay (kept for the next call).
async fn replayed(
    reads: &Reads<'_>,
    cache: &ReplayCache,
    principal: &Principal,
    args: GetPositionsArgs,
    presented: &Presented,
) -> Result<(Arc<Kept>, Option<PaymentBlock>), AppError> {
    let address = args.address;
    let method = args.method.unwrap_or_default();
    let exclude_spam = args.exclude_spam.unwrap_or(true);
    // Every argument is checked; only now may the call be paid for.
    let kind = ReadKind {
        route: crate::routes::POSITIONS,
        tool: "get_positions",
    };
    let payment = reads
        .authorize(principal, &address, &args.pay, presented, kind)
        .await?;
    let store = reads.store();
    // Read before the legs: legs written after this bump it, so a replay
    // kept under it has every leg of that version (or more).
    let version = store.ledger_version(address.as_str()).await?;
    let key = (address.as_str().to_owned(), method, exclude_spam);
    if let Some(kept) = cache.get(&key).filter(|k| k.version == version) {
        let valuer = reads.valuer(kept.mints.clone(), kept.span).await?;
        if valuer.fingerprint() == kept.fingerprint {
            cache.stats().hit();
            return Ok((kept, payment));
        }
    }
    cache.stats().miss();
    let legs = scanned_legs(reads, &address).await?;
    let times = legs.iter().filter_map(|l| l.block_time);
    let span = times.clone().min().zip(times.max());
    let mut mints: Vec<String> = legs.iter().map(|l| l.mint.clone()).collect();
    mints.sort();
    mints.dedup();
    let valuer = reads.valuer(mints.clone(), span).await?;
    let (inputs, unpriced) = inputs(&legs, &valuer);
    let events = basis::events_from_legs(&inputs, exclude_spam);
    let replay = basis::replay(&events, method);
    let mut positions = view(address.as_str(), &replay, exclude_spam, unpriced);
    positions.program_positions = program_positions(&legs);
    positions.stake_accounts = stake_account_views(&store.stake_accounts(address.as_str()).await?);
    let json = Arc::new(KeptJson::new(Bytes::from(
        serde_json::to_vec(&positions)
            .map_err(|e| AppError::internal("serialising positions", e))?,
    )));
    let kept = Arc::new(Kept {
        version,
        span,
        mints,
        fingerprint: valuer.fingerprint(),
        positions,
        json,
    });
    cache.keep(key, kept.clone());
    Ok((kept, payment))
}

/// A replay's answer and what it was made from.
struct Kept {
    version: i64,
    /// The legs' block-time span and mints, to make the valuer again.
    span: Option<(i64, i64)>,
    mints: Vec<String>,
    fingerprint: u64,
    /// The answer without a payment block, and the same serialised.
    positions: Positions,
    json: Arc<KeptJson>,
}

/// The most answers kept; past it the cache starts over.
const MAX_KEPT: usize = 256;
/// The most bytes of answers kept (each charged three times its JSON);
/// past it the cache starts over. An answer larger than this is not kept.
const MAX_KEPT_BYTES: usize = 128 << 20;

/// The answers of replays made, per (wallet, method, exclude_spam).
#[derive(Default)]
pub struct ReplayCache(
    Mutex<HashMap<(String, Method, bool), Arc<Kept>>>,
    CacheStats,
);

impl ReplayCache {
    /// Answers served from here, and replays made.
    pub fn stats(&self) -> &CacheStats {
        &self.1
    }

    fn get(&self, key: &(String, Method, bool)) -> Option<Arc<Kept>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    fn keep(&self, key: (String, Method, bool), kept: Arc<Kept>) {
        // Charged as the page cache charges: the JSON, the answer it was
        // serialised from, room for its gzip.
        let charge = |k: &Kept| k.json.json().len().saturating_mul(3);
        if charge(&kept) > MAX_KEPT_BYTES {
            return;
        }
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let held: usize = all
            .iter()
            .filter(|(k, _)| **k != key)
            .map(|(_, v)| charge(v))
            .sum();
        if (all.len() >= MAX_KEPT && !all.contains_key(&key))
            || held + charge(&kept) > MAX_KEPT_BYTES
        {
            all.clear();
        }
        // A slower call that read an older version must not replace a
        // newer answer.
        if all.get(&key).is_none_or(|k| k.version <= kept.version) {
            all.insert(key, kept);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leg(op: OperationType, mint: &str, amount: i128, router: &str) -> Leg {
        Leg {
            signature: format!("s{amount}"),
            index: 0,
            block_time: Some(0),
            operation_type: op.as_str().to_owned(),
            mint: mint.to_owned(),
            amount,
            decimals: 6,
            counterparties: Vec::new(),
            position: Some("order".to_owned()),
            router: Some(router.to_owned()),
        }
    }

    #[test]
    fn a_program_position_sums_what_went_in_and_came_out() {
        // 2,390 USDC in; a fill spends 1,000; the cancel returns 1,390.
        let legs = [
            leg(
                OperationType::PositionDeposit,
                "usdc",
                -2_390_000_000,
                "Jupiter Limit Order v2",
            ),
            leg(
                OperationType::Swap,
                "usdc",
                -1_000_000_000,
                "Jupiter Limit Order v2, Jupiter Aggregator v6",
            ),
            leg(
                OperationType::PositionWithdraw,
                "usdc",
                1_390_000_000,
                "Jupiter Limit Order v2",
            ),
        ];
        let view = program_positions(&legs);
        assert_eq!(view.len(), 1);
        let p = &view[0];
        assert_eq!(p.id, "order");
        assert_eq!(p.program.as_deref(), Some("Jupiter Limit Order v2"));
        assert_eq!(p.protocol.as_deref(), Some("Jupiter"));
        assert_eq!(p.deposited["usdc"], "2390000000");
        assert_eq!(p.filled["usdc"], "1000000000");
        assert_eq!(p.withdrawn["usdc"], "1390000000");
        assert!(p.held.is_empty(), "2,390 - 1,000 - 1,390 = 0");
        assert!(p.interest.is_empty());
    }

    #[test]
    fn a_lending_position_shows_its_interest_apart_from_what_came_back() {
        // 1,000 USDC in; 1,000 back as principal and 25.5 as interest (the
        // history-wide split): nothing held, the interest shown apart.
        let router = "Kamino Lend";
        let legs = [
            leg(
                OperationType::PositionDeposit,
                "usdc",
                -1_000_000_000,
                router,
            ),
            leg(
                OperationType::PositionWithdraw,
                "usdc",
                1_000_000_000,
                router,
            ),
            leg(OperationType::Interest, "usdc", 25_500_000, router),
        ];
        let view = program_positions(&legs);
        assert_eq!(view.len(), 1);
        assert_eq!(view[0].protocol.as_deref(), Some("Kamino"));
        assert_eq!(view[0].interest["usdc"], "25500000");
        assert!(view[0].held.is_empty());
    }

    #[test]
    fn a_clmm_pool_position_holds_what_went_in_less_what_came_back_not_its_nft() {
        // The legs `ledger::decode` gives a Raydium CLMM position
        // (server/core/tests/pool_positions.rs): 80 RAY and 200 USDC in with
        // the position NFT minted; later 262 USDC and 101 RAY back with the
        // NFT burned, and 2.5 USDC of fees claimed on the way. The NFT is
        // the position's key, never held; what came back beyond what went in
        // is shown as withdrawn, the claim as interest.
        let router = "Raydium CLMM";
        let legs = [
            leg(OperationType::PositionDeposit, "ray", -80_000_000, router),
            leg(OperationType::PositionDeposit, "usdc", -200_000_000, router),
            leg(OperationType::PositionDeposit, "nft", 1, router),
            leg(OperationType::Interest, "usdc", 2_500_000, router),
            leg(OperationType::PositionWithdraw, "ray", 101_000_000, router),
            leg(OperationType::PositionWithdraw, "usdc", 262_000_000, router),
            leg(OperationType::PositionWithdraw, "nft", -1, router),
        ];
        let view = program_positions(&legs);
        assert_eq!(view.len(), 1);
        let p = &view[0];
        assert_eq!(p.program.as_deref(), Some("Raydium CLMM"));
        assert_eq!(p.protocol.as_deref(), Some("Raydium"));
        assert_eq!(p.deposited.get("nft"), None);
        assert_eq!(p.withdrawn.get("nft"), None);
        assert_eq!(p.deposited["ray"], "80000000");
        assert_eq!(p.withdrawn["usdc"], "262000000");
        assert_eq!(p.interest["usdc"], "2500000");
        // 80 - 101 RAY and 200 - 262 USDC: more came back than went in.
        assert_eq!(p.held["ray"], "-21000000");
        assert_eq!(p.held["usdc"], "-62000000");
    }
}
