//! The import templates of two tax tools, filled from the ledger: Koinly's
//! universal CSV and CoinTracker's CSV. Both want one row per transaction
//! (a swap is one row with what was sent and what was received; the
//! network fee goes in the fee columns), UTC times in their own format and
//! token symbols (from the shipped list; an unknown mint is its address).
//! docs/reports.md lists each column's source and how to import.
//!
//! Rent deposits and refunds are left out: the SOL in a rent deposit is
//! still the wallet's (the cost-basis replay does not dispose of it), and
//! both tools would read a deposit as a sale. Stake deposits and
//! withdrawals are left out for the same reason. Staking rewards and MEV
//! tips are income rows: Koinly's `reward` tag ("Reward", an income tag for
//! staking rewards, support.koinly.io "What are tags") and CoinTracker's
//! `staking` tag (its "Staking reward" category, support.cointracker.io
//! "Transaction category definitions"). A transaction of several
//! legs that is not a one-for-one swap is written one row per leg, the fee
//! on its first row, since a row holds one sent and one received currency.

use std::{collections::HashMap, io};

use chrono::DateTime;
use rust_decimal::Decimal;

use super::{
    book::{Book, text, time_of, whole},
    csv_formats::{finish, writer},
    tokens,
};
use crate::{
    analytics::Leg,
    ledger::{OperationType, SOL},
};

/// Koinly's universal template, in its order.
pub const KOINLY_COLUMNS: [&str; 12] = [
    "Date",
    "Sent Amount",
    "Sent Currency",
    "Received Amount",
    "Received Currency",
    "Fee Amount",
    "Fee Currency",
    "Net Worth Amount",
    "Net Worth Currency",
    "Label",
    "Description",
    "TxHash",
];

/// CoinTracker's template, in its order.
pub const COINTRACKER_COLUMNS: [&str; 8] = [
    "Date",
    "Received Quantity",
    "Received Currency",
    "Sent Quantity",
    "Sent Currency",
    "Fee Amount",
    "Fee Currency",
    "Tag",
];

/// A side of a row: whole tokens and the symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Side {
    pub quantity: Decimal,
    pub currency: String,
}

/// What a row is, for the tools' labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Tokens received in an airdrop: income.
    Airdrop,
    /// A staking reward or a MEV tip: income.
    Reward,
    /// A transaction that only paid its network fee (a failed one, say).
    FeeOnly,
    Other,
}

/// One row of either template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub time: i64,
    pub signature: String,
    pub sent: Option<Side>,
    pub received: Option<Side>,
    /// The network fee in SOL.
    pub fee: Option<Decimal>,
    /// USD value of the row at block time: what was received, else what was sent.
    pub net_worth: Option<Decimal>,
    pub kind: Kind,
    pub description: String,
}

fn side(leg: &Leg) -> Side {
    Side {
        quantity: whole(leg.amount, leg.decimals).abs(),
        currency: tokens::symbol(&leg.mint).to_owned(),
    }
}

/// The rows of a book's transactions in the range, oldest first.
pub fn rows(book: &Book) -> Vec<Row> {
    let mut order: Vec<&str> = Vec::new();
    let mut txs: HashMap<&str, Vec<(&Leg, Option<Decimal>)>> = HashMap::new();
    for (leg, usd) in book.legs_in_range() {
        txs.entry(leg.signature.as_str())
            .or_insert_with(|| {
                order.push(leg.signature.as_str());
                Vec::new()
            })
            .push((leg, usd));
    }
    let mut out = Vec::new();
    for signature in order {
        let Some(legs) = txs.get(signature) else {
            continue;
        };
        transaction_rows(book, signature, legs, &mut out);
    }
    out
}

fn transaction_rows(
    book: &Book,
    signature: &str,
    legs: &[(&Leg, Option<Decimal>)],
    out: &mut Vec<Row>,
) {
    let time = legs.first().map_or(0, |(l, _)| time_of(l));
    let mut fee_lamports: i128 = 0;
    let mut moves: Vec<(&Leg, Option<Decimal>, OperationType)> = Vec::new();
    for (leg, usd) in legs {
        match OperationType::parse(&leg.operation_type) {
            Some(OperationType::NetworkFee) => fee_lamports += leg.amount.abs(),
            Some(
                OperationType::RentDeposit
                | OperationType::RentRefund
                | OperationType::StakeDeposit
                | OperationType::StakeWithdraw,
            )
            | None => {}
            Some(op) if leg.amount != 0 => moves.push((leg, *usd, op)),
            Some(_) => {}
        }
    }
    let fee = (fee_lamports != 0).then(|| whole(fee_lamports, 9));
    let fee_value = legs
        .iter()
        .filter(|(l, _)| l.operation_type == OperationType::NetworkFee.as_str())
        .map(|(_, v)| *v)
        .sum::<Option<Decimal>>();
    let describe = |ops: &[OperationType]| {
        let mut names: Vec<&str> = ops.iter().map(|o| o.as_str()).collect();
        names.dedup();
        format!("{} · wallet {}", names.join(" + "), book.address)
    };
    let sent: Vec<_> = moves.iter().filter(|m| m.0.amount < 0).collect();
    let received: Vec<_> = moves.iter().filter(|m| m.0.amount > 0).collect();
    if moves.is_empty() {
        if let Some(fee) = fee {
            out.push(Row {
                time,
                signature: signature.to_owned(),
                sent: Some(Side {
                    quantity: fee,
                    currency: tokens::symbol(SOL).to_owned(),
                }),
                received: None,
                fee: None,
                net_worth: fee_value,
                kind: Kind::FeeOnly,
                description: describe(&[OperationType::NetworkFee]),
            });
        }
        return;
    }
    if sent.len() <= 1 && received.len() <= 1 {
        let ops: Vec<OperationType> = moves.iter().map(|m| m.2).collect();
        let kind = if sent.is_empty() {
            received.first().map_or(Kind::Other, |m| income_kind(m.2))
        } else {
            Kind::Other
        };
        out.push(Row {
            time,
            signature: signature.to_owned(),
            sent: sent.first().map(|m| side(m.0)),
            received: received.first().map(|m| side(m.0)),
            fee,
            net_worth: received
                .first()
                .and_then(|m| m.1)
                .or_else(|| sent.first().and_then(|m| m.1)),
            kind,
            description: describe(&ops),
        });
        return;
    }
    for (i, (leg, usd, op)) in moves.iter().enumerate() {
        let incoming = leg.amount > 0;
        out.push(Row {
            time,
            signature: signature.to_owned(),
            sent: (!incoming).then(|| side(leg)),
            received: incoming.then(|| side(leg)),
            fee: if i == 0 { fee } else { None },
            net_worth: *usd,
            kind: if incoming {
                income_kind(*op)
            } else {
                Kind::Other
            },
            description: describe(&[*op]),
        });
    }
}

/// The kind of row an inbound leg of `op` makes.
fn income_kind(op: OperationType) -> Kind {
    match op {
        OperationType::Airdrop | OperationType::AirdropSpam => Kind::Airdrop,
        // Lending interest is income like a reward (Koinly's `reward` label
        // is income at fair value when received).
        OperationType::StakingReward | OperationType::MevReward | OperationType::Interest => {
            Kind::Reward
        }
        _ => Kind::Other,
    }
}

fn io_err(e: csv::Error) -> io::Error {
    io::Error::other(e.to_string())
}

fn qty(side: &Option<Side>) -> (String, String) {
    match side {
        Some(s) => (text(s.quantity), s.currency.clone()),
        None => (String::new(), String::new()),
    }
}

/// Koinly's date: `YYYY-MM-DD HH:MM UTC`.
fn koinly_date(t: i64) -> String {
    DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

/// CoinTracker's date: `MM/DD/YYYY HH:MM:SS`, UTC.
fn cointracker_date(t: i64) -> String {
    DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%m/%d/%Y %H:%M:%S").to_string())
        .unwrap_or_default()
}

/// Koinly's universal template.
pub fn koinly(books: &[Book]) -> io::Result<(Vec<u8>, u64)> {
    let mut w = writer();
    w.write_record(KOINLY_COLUMNS).map_err(io_err)?;
    let mut n = 0;
    for book in books {
        for row in rows(book) {
            let (sent, sent_cur) = qty(&row.sent);
            let (received, received_cur) = qty(&row.received);
            let (fee, fee_cur) = match row.fee {
                Some(f) => (text(f), "SOL".to_owned()),
                None => (String::new(), String::new()),
            };
            let label = match row.kind {
                Kind::Airdrop => "airdrop",
                Kind::Reward => "reward",
                Kind::FeeOnly => "cost",
                Kind::Other => "",
            };
            let (worth, worth_cur) = match row.net_worth {
                Some(v) => (text(v.round_dp(2)), "USD".to_owned()),
                None => (String::new(), String::new()),
            };
            w.write_record([
                koinly_date(row.time),
                sent,
                sent_cur,
                received,
                received_cur,
                fee,
                fee_cur,
                worth,
                worth_cur,
                label.to_owned(),
                row.description,
                row.signature,
            ])
            .map_err(io_err)?;
            n += 1;
        }
    }
    finish(w, n)
}

/// CoinTracker's template.
pub fn cointracker(books: &[Book]) -> io::Result<(Vec<u8>, u64)> {
    let mut w = writer();
    w.write_record(COINTRACKER_COLUMNS).map_err(io_err)?;
    let mut n = 0;
    for book in books {
        for row in rows(book) {
            let (sent, sent_cur) = qty(&row.sent);
            let (received, received_cur) = qty(&row.received);
            let (fee, fee_cur) = match row.fee {
                Some(f) => (text(f), "SOL".to_owned()),
                None => (String::new(), String::new()),
            };
            let tag = match row.kind {
                Kind::Airdrop => "airdrop",
                Kind::Reward => "staking",
                Kind::FeeOnly | Kind::Other => "",
            };
            w.write_record([
                cointracker_date(row.time),
                received,
                received_cur,
                sent,
                sent_cur,
                fee,
                fee_cur,
                tag.to_owned(),
            ])
            .map_err(io_err)?;
            n += 1;
        }
    }
    finish(w, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{basis::Method, prices::valuation::Valuer, reports::book::Range};

    const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

    fn leg(sig: &str, index: u32, op: OperationType, mint: &str, amount: i128) -> Leg {
        Leg {
            signature: sig.into(),
            index,
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

    fn book(legs: Vec<Leg>) -> Book {
        Book::new(
            "w1",
            &legs,
            Valuer::default(),
            Method::Fifo,
            false,
            Range::default(),
            1_800_000_000,
        )
    }

    #[test]
    fn a_swap_is_one_row_with_both_sides_and_its_fee() {
        let b = book(vec![
            leg("s", 0, OperationType::NetworkFee, SOL, -5000),
            leg("s", 1, OperationType::Swap, SOL, -1_000_000_000),
            leg("s", 2, OperationType::Swap, USDC, 150_000_000),
            leg("s", 3, OperationType::RentDeposit, SOL, -2_039_280),
        ]);
        let rows = rows(&b);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.sent.as_ref().unwrap().currency, "SOL");
        assert_eq!(r.sent.as_ref().unwrap().quantity.to_string(), "1.000000000");
        assert_eq!(r.received.as_ref().unwrap().currency, "USDC");
        assert_eq!(r.fee.unwrap().normalize().to_string(), "0.000005");
        assert_eq!(r.kind, Kind::Other);
    }

    #[test]
    fn an_airdrop_is_labelled_and_a_fee_alone_is_a_cost() {
        let b = book(vec![
            leg("a", 0, OperationType::Airdrop, USDC, 1_000_000),
            leg("f", 0, OperationType::NetworkFee, SOL, -5000),
        ]);
        let rows = rows(&b);
        assert_eq!(rows[0].kind, Kind::Airdrop);
        assert_eq!(rows[1].kind, Kind::FeeOnly);
        let (csv, n) = koinly(&[b]).unwrap();
        assert_eq!(n, 2);
        let csv = String::from_utf8(csv).unwrap();
        assert!(
            csv.contains("2025-01-01 12:00 UTC,,,1,USDC,,,,,airdrop,"),
            "{csv}"
        );
        assert!(csv.contains(",cost,"), "{csv}");
    }

    #[test]
    fn staking_rewards_and_mev_tips_are_income_rows_and_stake_moves_are_left_out() {
        let b = book(vec![
            leg("d", 0, OperationType::NetworkFee, SOL, -5000),
            leg("d", 1, OperationType::StakeDeposit, SOL, -10_002_282_880),
            leg(
                "reward:700:S",
                0,
                OperationType::StakingReward,
                SOL,
                1_234_567,
            ),
            leg("m", 0, OperationType::MevReward, SOL, 2_000),
            leg("w", 0, OperationType::NetworkFee, SOL, -5000),
            leg("w", 1, OperationType::StakeWithdraw, SOL, 10_003_517_447),
        ]);
        let rows = rows(&b);
        let kinds: Vec<Kind> = rows.iter().map(|r| r.kind).collect();
        // The deposit and the withdrawal keep only their fees.
        assert_eq!(
            kinds,
            vec![Kind::FeeOnly, Kind::Reward, Kind::Reward, Kind::FeeOnly]
        );
        let (koinly_csv, _) = koinly(std::slice::from_ref(&b)).unwrap();
        let koinly_csv = String::from_utf8(koinly_csv).unwrap();
        assert!(
            koinly_csv.contains("2025-01-01 12:00 UTC,,,0.001234567,SOL,,,,,reward,"),
            "{koinly_csv}"
        );
        let (ct, _) = cointracker(&[b]).unwrap();
        let ct = String::from_utf8(ct).unwrap();
        assert!(
            ct.contains("01/01/2025 12:00:00,0.001234567,SOL,,,,,staking"),
            "{ct}"
        );
    }
}
