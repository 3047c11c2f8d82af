//! The report's ledger as a person reads it: one row per transaction
//! ("9.4 SOL → 1,739.46 USDC via Raydium CLMM"), not one per leg. The legs
//! of one page of `get_ledger` are grouped by signature in the page's
//! order (newest first); a transaction whose legs straddle two pages shows
//! on each with the legs that page holds.
//!
//! What a row says is decided on the parsed operation type
//! (`OperationType`), never on its text: the swap's legs read as what
//! left → what came in, with the venue (else the router) the decoder
//! named; costs (the network fee, a platform fee, a tip) and rent are said
//! apart, so a transfer row is not read as "sent 1.000005 SOL".

use std::collections::BTreeMap;

use rust_decimal::Decimal;

use super::report::mint_label;
use crate::{ledger::model::OperationType, reads::ledger_page::Entry, values::format};

/// One transaction of the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxRow {
    pub signature: String,
    /// RFC 3339, when known.
    pub block_time: Option<String>,
    /// What it did, in words: "9.4 SOL → 1,739.46 USDC via Orca Whirlpool".
    pub what: String,
    /// Its costs in words ("fee 0.000005 SOL"), empty when none.
    pub costs: String,
    /// USD of what it did: for a swap what came in, else the signed sum of
    /// its priced legs other than costs; `None` when none is priced.
    pub usd: Option<Decimal>,
    /// Legs it has on this page.
    pub legs: usize,
}

/// How a leg counts in its transaction's row.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Swap,
    Cost,
    Rent,
    Other(OperationType),
}

fn part(entry: &Entry) -> Part {
    match OperationType::parse(&entry.operation_type) {
        Some(OperationType::Swap) => Part::Swap,
        Some(
            OperationType::NetworkFee
            | OperationType::PlatformFee
            | OperationType::Tip
            | OperationType::Royalty
            | OperationType::MarketplaceFee,
        ) => Part::Cost,
        Some(OperationType::RentDeposit | OperationType::RentRefund) => Part::Rent,
        Some(op) => Part::Other(op),
        // An operation this build does not know reads as a transfer by its
        // sign (conservative: it is still shown, amount and all).
        None => Part::Other(if entry.amount.starts_with('-') {
            OperationType::TransferOut
        } else {
            OperationType::TransferIn
        }),
    }
}

/// Words for an operation other than a swap, cost or rent.
fn verb(op: OperationType) -> &'static str {
    match op {
        OperationType::TransferIn => "Received",
        OperationType::TransferOut => "Sent",
        OperationType::Airdrop => "Airdrop",
        OperationType::AirdropSpam => "Unsolicited airdrop",
        OperationType::StakeDeposit => "Staked",
        OperationType::StakeWithdraw => "Unstaked",
        OperationType::StakingReward => "Staking reward",
        OperationType::MevReward => "MEV reward",
        OperationType::PositionDeposit => "Deposited into a position",
        OperationType::PositionWithdraw => "Withdrawn from a position",
        OperationType::Interest => "Interest",
        OperationType::Borrow => "Borrowed",
        OperationType::Repay => "Repaid",
        OperationType::Swap => "Swapped",
        OperationType::NetworkFee => "Network fee",
        OperationType::PlatformFee => "Platform fee",
        OperationType::Tip => "Tip",
        OperationType::Royalty => "Royalty",
        OperationType::MarketplaceFee => "Marketplace fee",
        OperationType::RentDeposit => "Rent deposit",
        OperationType::RentRefund => "Rent refund",
    }
}

/// Atomic amounts summed per mint, in first-seen order.
#[derive(Default)]
struct Sums {
    order: Vec<String>,
    by_mint: BTreeMap<String, (i128, u32)>,
}

impl Sums {
    fn add(&mut self, e: &Entry) {
        let Ok(amount) = e.amount.parse::<i128>() else {
            return;
        };
        let slot = self.by_mint.entry(e.mint.clone()).or_insert_with(|| {
            self.order.push(e.mint.clone());
            (0, u32::from(e.decimals))
        });
        slot.0 = slot.0.saturating_add(amount);
    }

    /// "9.4 SOL + 2 USDC", amounts without their sign.
    fn words(&self) -> String {
        self.order
            .iter()
            .filter_map(|mint| {
                let (amount, decimals) = self.by_mint.get(mint)?;
                (*amount != 0).then(|| {
                    format!(
                        "{} {}",
                        format::atomic(amount.saturating_abs(), *decimals),
                        mint_label(mint)
                    )
                })
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

fn usd(e: &Entry) -> Option<Decimal> {
    e.usd_value.as_deref()?.parse().ok()
}

fn sum_usd<'a>(legs: impl Iterator<Item = &'a Entry>) -> Option<Decimal> {
    legs.filter_map(usd)
        .fold(None, |acc, u| Some(acc.unwrap_or_default() + u))
}

fn row(signature: String, legs: &[&Entry]) -> TxRow {
    let of = |want: fn(Part) -> bool| legs.iter().copied().filter(move |e| want(part(e)));
    let swaps: Vec<&Entry> = of(|p| p == Part::Swap).collect();
    let mut what = Vec::new();
    let mut value = None;
    if !swaps.is_empty() {
        let (mut out, mut inn) = (Sums::default(), Sums::default());
        for e in &swaps {
            if e.amount.starts_with('-') {
                out.add(e);
            } else {
                inn.add(e);
            }
        }
        let via = swaps
            .iter()
            .find_map(|e| e.venue.clone())
            .or_else(|| swaps.iter().find_map(|e| e.router.clone()));
        let mut text = format!("{} → {}", out.words(), inn.words());
        if let Some(via) = via {
            text.push_str(&format!(" via {via}"));
        }
        what.push(text);
        value = sum_usd(swaps.iter().copied().filter(|e| !e.amount.starts_with('-')));
    }
    // The other operations, each with its own sums, in first-seen order.
    let mut others: Vec<(OperationType, Sums)> = Vec::new();
    for e in legs {
        if let Part::Other(op) = part(e) {
            match others.iter_mut().find(|(o, _)| *o == op) {
                Some((_, sums)) => sums.add(e),
                None => {
                    let mut sums = Sums::default();
                    sums.add(e);
                    others.push((op, sums));
                }
            }
        }
    }
    for (op, sums) in &others {
        let amounts = sums.words();
        if !amounts.is_empty() {
            what.push(format!("{} {amounts}", verb(*op)));
        }
    }
    if !others.is_empty() {
        let other_usd = sum_usd(of(|p| matches!(p, Part::Other(_))));
        value = match (value, other_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
    let mut costs = Sums::default();
    of(|p| p == Part::Cost).for_each(|e| costs.add(e));
    let mut rent = Sums::default();
    of(|p| p == Part::Rent).for_each(|e| rent.add(e));
    let mut cost_words = Vec::new();
    if !costs.words().is_empty() {
        cost_words.push(format!("fee {}", costs.words()));
    }
    if !rent.words().is_empty() {
        let net: i128 = rent.by_mint.values().map(|(a, _)| *a).sum();
        let kind = if net < 0 {
            "rent deposit"
        } else {
            "rent refund"
        };
        cost_words.push(format!("{kind} {}", rent.words()));
    }
    if what.is_empty() {
        // Only costs or rent: those are what it did.
        what.push(match cost_words.first() {
            Some(first) => {
                let mut w = first.clone();
                if let Some(c) = w.get_mut(..1) {
                    c.make_ascii_uppercase();
                }
                w
            }
            None => "No movement".to_owned(),
        });
        if !cost_words.is_empty() {
            cost_words.remove(0);
        }
    }
    TxRow {
        signature,
        block_time: legs.first().and_then(|e| e.block_time.clone()),
        what: what.join("; "),
        costs: cost_words.join(", "),
        usd: value,
        legs: legs.len(),
    }
}

/// The page's legs as one row per transaction, in the page's order.
pub fn rows(entries: &[Entry]) -> Vec<TxRow> {
    let mut groups: Vec<(String, Vec<&Entry>)> = Vec::new();
    for e in entries {
        match groups.iter_mut().find(|(sig, _)| *sig == e.signature) {
            Some((_, legs)) => legs.push(e),
            None => groups.push((e.signature.clone(), vec![e])),
        }
    }
    groups
        .into_iter()
        .map(|(sig, legs)| row(sig, &legs))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

    fn leg(
        sig: &str,
        op: &str,
        mint: &str,
        amount: &str,
        decimals: u8,
        usd: Option<&str>,
    ) -> Entry {
        Entry {
            signature: sig.to_owned(),
            slot: 1,
            block_time: Some("2026-12-01T12:00:00Z".to_owned()),
            index: 0,
            operation_type: op.to_owned(),
            mint: mint.to_owned(),
            amount: amount.to_owned(),
            decimals,
            usd_value: usd.map(str::to_owned),
            priced: usd.is_some(),
            counterparties: None,
            position: None,
            venue: None,
            router: None,
        }
    }

    #[test]
    fn a_swap_reads_as_what_left_and_what_came_in_with_its_venue_and_fee() {
        // 9.4 SOL = 9_400_000_000 lamports out; 1,739.46 USDC = 1_739_460_000
        // atomic (6 decimals) in; the 5,000-lamport network fee apart.
        let mut out = leg("a", "swap", "sol", "-9400000000", 9, Some("-1739.50"));
        out.venue = Some("Orca Whirlpool".to_owned());
        let inn = leg("a", "swap", USDC, "1739460000", 6, Some("1739.46"));
        let fee = leg("a", "network_fee", "sol", "-5000", 9, Some("-0.00092"));
        let rows = rows(&[out, inn, fee]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].what, "9.4 SOL → 1,739.46 USDC via Orca Whirlpool");
        assert_eq!(rows[0].costs, "fee 0.000005 SOL");
        assert_eq!(rows[0].usd, Some("1739.46".parse().unwrap()));
        assert_eq!(rows[0].legs, 3);
    }

    #[test]
    fn legs_group_by_signature_in_page_order() {
        let rows = rows(&[
            leg("b", "transfer_in", USDC, "5000000", 6, Some("5")),
            leg("a", "transfer_out", "sol", "-1000000000", 9, None),
            leg("a", "network_fee", "sol", "-5000", 9, None),
        ]);
        let whats: Vec<_> = rows
            .iter()
            .map(|r| (r.signature.as_str(), r.what.as_str()))
            .collect();
        assert_eq!(whats, [("b", "Received 5 USDC"), ("a", "Sent 1 SOL")]);
        assert_eq!(rows[1].usd, None);
    }

    #[test]
    fn a_transaction_of_only_a_fee_says_so() {
        let rows = rows(&[leg("c", "network_fee", "sol", "-5000", 9, None)]);
        assert_eq!(rows[0].what, "Fee 0.000005 SOL");
        assert_eq!(rows[0].costs, "");
    }
}
