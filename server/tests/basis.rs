//! The cost-basis engine from outside: properties that must hold for any
//! sequence of events (quantities and basis conserve, methods agree on a
//! single lot, gains add up), and `ledger basis` run as the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::{process::Command, str::FromStr};

use proptest::prelude::*;
use rust_decimal::Decimal;
use server::{
    basis::{Event, EventKind, LegInput, Method, Replay, events_from_legs, replay},
    ledger::model::OperationType,
};

const ASSETS: [&str; 3] = ["sol", "usdc", "bonk"];

fn decimal(mantissa: i64, scale: u32) -> Decimal {
    Decimal::new(mantissa, scale)
}

/// An event on one of `assets`, at one of a few times (so ties happen),
/// priced or not, with or without a fee.
fn event(assets: usize) -> impl Strategy<Value = Event> {
    (
        0..assets,
        0i64..40,
        any::<bool>(),
        (1i64..2_000_000, 0u32..7),
        prop::option::weighted(0.85, (0i64..10_000_000, 0u32..4)),
        prop::option::of(0i64..500),
    )
        .prop_map(|(asset, day, acquire, (q, qs), usd, fee)| Event {
            time: 1_600_000_000 + day * 86_400 * 20,
            seq: 0,
            asset: ASSETS[asset].to_owned(),
            kind: if acquire {
                EventKind::Acquire
            } else {
                EventKind::Dispose
            },
            quantity: decimal(q, qs),
            usd_value: usd.map(|(v, s)| decimal(v, s)),
            fee_usd: fee.map_or(Decimal::ZERO, |f| decimal(f, 2)),
        })
}

fn numbered(mut events: Vec<Event>) -> Vec<Event> {
    for (i, e) in events.iter_mut().enumerate() {
        e.seq = i as u64;
    }
    events
}

fn events(assets: usize, max: usize) -> impl Strategy<Value = Vec<Event>> {
    prop::collection::vec(event(assets), 0..max).prop_map(numbered)
}

fn sum(values: impl Iterator<Item = Decimal>) -> Decimal {
    values.sum()
}

fn check_conservation(events: &[Event], r: &Replay) -> Result<(), TestCaseError> {
    for asset in &r.assets {
        let of = |kind| {
            sum(events
                .iter()
                .filter(|e| e.asset == asset.asset && e.kind == kind)
                .map(|e| e.quantity))
        };
        let acquired = of(EventKind::Acquire)
            + of(EventKind::Income)
            + released_beyond_locked(events, &asset.asset);
        let disposed = of(EventKind::Dispose);
        let rows = r.disposals.iter().filter(|d| d.asset == asset.asset);
        let covered = sum(rows.clone().filter(|d| !d.uncovered).map(|d| d.quantity));
        let uncovered = sum(rows.filter(|d| d.uncovered).map(|d| d.quantity));
        let open = sum(r
            .open_lots
            .iter()
            .filter(|l| l.asset == asset.asset)
            .map(|l| l.quantity));
        prop_assert_eq!(acquired, asset.acquired_quantity);
        prop_assert_eq!(disposed, asset.disposed_quantity);
        prop_assert_eq!(open, asset.open_quantity);
        prop_assert_eq!(uncovered, asset.uncovered_quantity);
        prop_assert_eq!(acquired, covered + open);
        prop_assert_eq!(disposed, covered + uncovered);
        prop_assert_eq!(acquired, disposed + open - uncovered);
    }
    prop_assert!(r.open_lots.iter().all(|l| l.quantity > Decimal::ZERO));
    prop_assert!(r.disposals.iter().all(|d| d.quantity > Decimal::ZERO));
    Ok(())
}

/// Rent released beyond what was locked, stake withdrawn beyond what was
/// staked, and a position's return beyond what went in, open lots;
/// replayed here apart.
fn released_beyond_locked(events: &[Event], asset: &str) -> Decimal {
    let mut ordered: Vec<&Event> = events.iter().filter(|e| e.asset == asset).collect();
    ordered.sort_by_key(|e| (e.time, e.seq));
    let (mut locked, mut staked, mut excess) = (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO);
    let mut in_positions = Decimal::ZERO;
    for e in ordered {
        match e.kind {
            EventKind::RentLock => locked += e.quantity,
            EventKind::RentRelease => {
                let released = e.quantity.min(locked);
                locked -= released;
                excess += e.quantity - released;
            }
            EventKind::StakeLock => staked += e.quantity,
            EventKind::StakeRelease => {
                let released = e.quantity.min(staked);
                staked -= released;
                excess += e.quantity - released;
            }
            EventKind::PositionLock => in_positions += e.quantity,
            EventKind::PositionRelease => {
                let released = e.quantity.min(in_positions);
                in_positions -= released;
                excess += e.quantity - released;
            }
            EventKind::PositionSpend => in_positions -= e.quantity.min(in_positions),
            _ => {}
        }
    }
    excess
}

fn check_gains(r: &Replay) -> Result<(), TestCaseError> {
    let complete: Vec<_> = r.disposals.iter().filter(|d| d.is_complete()).collect();
    let proceeds = sum(complete.iter().filter_map(|d| d.proceeds));
    let basis = sum(complete.iter().filter_map(|d| d.basis));
    let gain = sum(complete.iter().filter_map(|d| d.gain));
    prop_assert_eq!(gain, proceeds - basis);
    prop_assert_eq!(r.total.proceeds, proceeds);
    prop_assert_eq!(r.total.basis, basis);
    prop_assert_eq!(r.total.gain, r.total.proceeds - r.total.basis);
    prop_assert_eq!(
        r.total.gain,
        r.total.short_term_gain + r.total.long_term_gain
    );
    prop_assert_eq!(r.total.rows as usize, complete.len());
    prop_assert_eq!(
        (r.total.rows + r.total.incomplete_rows) as usize,
        r.disposals.len()
    );
    for row in &r.disposals {
        if let (Some(p), Some(b)) = (row.proceeds, row.basis) {
            prop_assert_eq!(row.gain, Some(p - b));
        }
    }
    for asset in &r.assets {
        let t = &asset.totals;
        prop_assert_eq!(t.gain, t.proceeds - t.basis);
    }
    Ok(())
}

/// Rounding never creates or loses USD: when every acquisition is priced,
/// basis in equals basis realized plus basis still open; proceeds in equal
/// proceeds out.
fn check_money(events: &[Event], r: &Replay) -> Result<(), TestCaseError> {
    let proceeds_in = sum(events
        .iter()
        .filter(|e| e.kind == EventKind::Dispose)
        .filter_map(|e| e.usd_value.map(|v| v - e.fee_usd)));
    let proceeds_out = sum(r.disposals.iter().filter_map(|d| d.proceeds));
    prop_assert_eq!(proceeds_in, proceeds_out);
    let all_priced = events
        .iter()
        .all(|e| e.kind != EventKind::Acquire || e.usd_value.is_some());
    if all_priced {
        let basis_in = sum(events
            .iter()
            .filter(|e| e.kind == EventKind::Acquire)
            .filter_map(|e| e.usd_value.map(|v| v + e.fee_usd)));
        let realized = sum(r.disposals.iter().filter_map(|d| d.basis));
        let open = sum(r.open_lots.iter().filter_map(|l| l.basis));
        prop_assert_eq!(basis_in, realized + open);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn quantities_conserve_for_any_sequence(events in events(3, 60)) {
        for method in Method::ALL {
            let r = replay(&events, method);
            check_conservation(&events, &r)?;
        }
    }

    #[test]
    fn gains_sum_to_proceeds_minus_basis(events in events(3, 60)) {
        for method in Method::ALL {
            check_gains(&replay(&events, method))?;
        }
    }

    #[test]
    fn rounding_neither_creates_nor_loses_usd(events in events(2, 40)) {
        for method in Method::ALL {
            check_money(&events, &replay(&events, method))?;
        }
    }

    #[test]
    fn every_method_agrees_when_a_mint_has_one_lot(
        lot in event(1),
        rest in prop::collection::vec(event(1), 0..30),
    ) {
        let mut lot = lot;
        lot.kind = EventKind::Acquire;
        lot.time = 1_500_000_000;
        let mut events = vec![lot];
        events.extend(rest.into_iter().map(|mut e| {
            e.kind = EventKind::Dispose;
            e
        }));
        let events = numbered(events);
        let fifo = replay(&events, Method::Fifo);
        for method in [Method::Lifo, Method::Hifo, Method::Lofo, Method::Average] {
            let mut other = replay(&events, method);
            other.method = Method::Fifo;
            // Each row names its own method as its rule; all else agrees.
            for row in &mut other.disposals {
                row.rule = server::basis::Rule::Fifo;
            }
            prop_assert_eq!(&other, &fifo, "{} differs from fifo", method);
        }
    }

    #[test]
    fn any_legs_replay_without_panicking_and_conserve(
        legs in prop::collection::vec(leg(), 0..40),
        exclude_spam in any::<bool>(),
    ) {
        let events = events_from_legs(&legs, exclude_spam);
        for (i, e) in events.iter().enumerate() {
            prop_assert_eq!(e.seq, i as u64);
        }
        for method in Method::ALL {
            let r = replay(&events, method);
            check_conservation(&events, &r)?;
            check_gains(&r)?;
        }
    }
}

fn leg() -> impl Strategy<Value = LegInput> {
    (
        0u8..6,
        0u32..4,
        prop::sample::select(OperationType::ALL.to_vec()),
        0usize..3,
        -5_000_000_000i128..5_000_000_000,
        prop::option::weighted(0.8, 0i64..100_000),
        0i64..5,
    )
        .prop_map(|(sig, index, op, asset, amount, usd, day)| LegInput {
            signature: format!("sig{sig}"),
            index,
            block_time: 1_700_000_000 + day * 86_400,
            operation_type: op,
            mint: ASSETS[asset].to_owned(),
            amount,
            decimals: if asset == 0 { 9 } else { 6 },
            usd_value: usd.map(|v| Decimal::new(v, 2)),
            position: None,
        })
}

// `ledger basis`, the real binary.

const BIN: &str = env!("CARGO_BIN_EXE_ledger");

/// Exercises purchase and sale fees, a disposal over several lots, the
/// one-year boundary, a HIFO tie, an unpriced acquisition and a disposal
/// beyond holdings.
const SAMPLE: &str = "\
date,type,asset,quantity,usd_value,fee_usd
2023-01-15,acquire,SOL,10,200,1.50
2023-03-01T14:30:00Z,acquire,SOL,5,150,
2023-06-01,acquire,SOL,5,150,0
2024-01-15,dispose,SOL,4,400,2
2024-01-16,dispose,SOL,12,1320,0
2024-02-01,acquire,BONK,1000000,,
2024-03-01,dispose,BONK,400000,12,0.25
2024-04-01,dispose,USDC,50,50,0
";

fn run(method: &str, csv: &str) -> std::process::Output {
    run_args(&["--method", method], csv)
}

/// `ledger basis ARGS --input FILE` on `csv`, with no environment.
fn run_args(args: &[&str], csv: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.csv");
    std::fs::write(&input, csv).unwrap();
    Command::new(BIN)
        .current_dir(dir.path())
        .env_clear()
        .arg("basis")
        .args(args)
        .arg("--input")
        .arg(&input)
        .output()
        .unwrap()
}

#[test]
fn ledger_basis_prints_disposals_and_open_lots_for_each_method() {
    for method in Method::ALL {
        let out = run(method.as_str(), SAMPLE);
        let stderr = String::from_utf8(out.stderr).unwrap();
        if method == Method::Average {
            // US rules refuse average cost for digital assets.
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(out.stdout.is_empty());
            assert!(stderr.contains("§1.1012-1(e)"), "{stderr}");
            continue;
        }
        assert!(out.status.success(), "{stderr}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        insta::assert_snapshot!(format!("cli_{method}"), stdout);
    }
}

#[test]
fn ledger_basis_output_reconciles_with_the_library() {
    let out = run("fifo", SAMPLE);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let gain: Decimal = reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| &r[0] == "disposal" && !r[7].is_empty())
        .map(|r| Decimal::from_str(&r[7]).unwrap())
        .sum();
    let events = server::basis::csv_io::read_events(SAMPLE.as_bytes()).unwrap();
    assert_eq!(gain, replay(&events, Method::Fifo).total.gain);
}

#[test]
fn ledger_basis_refuses_a_bad_row_naming_its_line() {
    let out = run(
        "fifo",
        "date,type,asset,quantity,usd_value,fee_usd\n2024-01-01,acquire,SOL,1,10,0\n2024-01-02,sell,SOL,1,12,0\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("line 3: type `sell` is not acquire or dispose"),
        "{stderr}"
    );
}

#[test]
fn ledger_basis_refuses_an_unknown_method() {
    let out = run("specific", SAMPLE);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("unknown cost-basis method `specific`"),
        "{stderr}"
    );
}

#[test]
fn ledger_basis_fails_on_a_missing_file_without_any_configuration() {
    let out = Command::new(BIN)
        .env_clear()
        .args(["basis", "--input", "/nonexistent/ledger-basis.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("ledger-basis.csv")
    );
}

// ---- `ledger basis --jurisdiction`: each rule against its authority -------

/// The output's rows as maps from column name to field.
fn table(out: &std::process::Output) -> Vec<std::collections::HashMap<String, String>> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let mut reader = csv::Reader::from_reader(out.stdout.as_slice());
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, f)| (h.to_owned(), f.to_owned()))
                .collect()
        })
        .collect()
}

/// The given columns of every row, joined by `|`.
fn pick(rows: &[std::collections::HashMap<String, String>], columns: &[&str]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            columns
                .iter()
                .map(|c| r[*c].as_str())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

const COLUMNS: &[&str] = &[
    "record", "wallet", "quantity", "acquired", "basis", "gain", "rule", "tax_year",
];

#[test]
fn ledger_basis_refuses_a_method_the_jurisdiction_does_not_allow() {
    let gbp = "date,type,asset,quantity,value\n2024-01-01,acquire,X,1,10\n";
    for (args, reason) in [
        (&["--method", "average"][..], "§1.1012-1(e)"),
        (
            &["--jurisdiction", "uk", "--method", "fifo"][..],
            "fifo is not accepted in uk",
        ),
        (
            &["--jurisdiction", "ca", "--method", "hifo"][..],
            "hifo is not accepted in ca",
        ),
    ] {
        let out = run_args(args, gbp);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
    // Values in USD are refused where the jurisdiction reports in another
    // currency: the offline replay converts nothing.
    let out = run_args(&["--jurisdiction", "uk"], SAMPLE);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("GBP"));
}

#[test]
fn ledger_basis_uk_crypto22251_section_104_pool() {
    // HMRC CRYPTO22251: 100 token A for £1,000, then 50 for £125,000, then
    // 50 sold for £300,000: pool 150 at £126,000; cost £126,000 x 50/150 =
    // £42,000; gain £258,000; the pool keeps 100 at £84,000.
    let out = run_args(
        &["--jurisdiction", "uk"],
        "date,type,asset,quantity,value,fee\n\
         2020-01-01,acquire,A,100,1000,\n\
         2020-09-18,acquire,A,50,125000,\n\
         2020-12-01,dispose,A,50,300000,\n",
    );
    assert_eq!(
        pick(&table(&out), COLUMNS),
        [
            "disposal||50|pool|42000|258000|section_104|2020-21",
            "open||100|pool|84000|||",
        ]
    );
}

#[test]
fn ledger_basis_uk_crypto22252_same_day() {
    // HMRC CRYPTO22252: 5,000 token B in the pool at £500; on one day sells
    // 1,000 for £800, buys 1,600 for £1,000, sells 500 for £600. One
    // disposal of 1,500 for £1,400 matched with the day's acquisition:
    // cost £1,000 x 1,500/1,600 = £937.50, gain £462.50; the pool becomes
    // 5,100 at £562.50.
    let out = run_args(
        &["--jurisdiction", "uk"],
        "date,type,asset,quantity,value\n\
         2023-05-01,acquire,B,5000,500\n\
         2024-06-23T08:00:00Z,dispose,B,1000,800\n\
         2024-06-23T13:00:00Z,acquire,B,1600,1000\n\
         2024-06-23T19:00:00Z,dispose,B,500,600\n",
    );
    let rows = table(&out);
    let disposals: Vec<_> = rows.iter().filter(|r| r["record"] == "disposal").collect();
    assert!(!disposals.is_empty());
    assert!(
        disposals
            .iter()
            .all(|r| r["rule"] == "same_day" && r["tax_year"] == "2024-25")
    );
    let sum = |c: &str| -> Decimal {
        disposals
            .iter()
            .map(|r| Decimal::from_str(&r[c]).unwrap())
            .sum()
    };
    assert_eq!(
        (sum("proceeds"), sum("basis"), sum("gain")),
        (
            Decimal::from(1400),
            Decimal::from_str("937.5").unwrap(),
            Decimal::from_str("462.5").unwrap()
        )
    );
    assert_eq!(
        pick(&rows, COLUMNS).last().unwrap(),
        "open||5100|pool|562.5|||"
    );
}

#[test]
fn ledger_basis_uk_crypto22255_bed_and_breakfast() {
    // HMRC CRYPTO22255: pool 14,000 token E at £200,000; 30 August sells
    // 4,000 for £160,000; 11 September buys 500 for £17,500. 500 matched by
    // the 30-day rule (£17,500, gain £2,500), 3,500 from the pool
    // (£200,000 x 3,500/14,000 = £50,000, gain £90,000): £92,500; the pool
    // keeps 10,500 at £150,000.
    let out = run_args(
        &["--jurisdiction", "uk"],
        "date,type,asset,quantity,value\n\
         2023-01-10,acquire,E,14000,200000\n\
         2024-08-30,dispose,E,4000,160000\n\
         2024-09-11,acquire,E,500,17500\n",
    );
    assert_eq!(
        pick(&table(&out), COLUMNS),
        [
            "disposal||500|2024-09-11|17500|2500|bed_and_breakfast|2024-25",
            "disposal||3500|pool|50000|90000|section_104|2024-25",
            "open||10500|pool|150000|||",
        ]
    );
}

#[test]
fn ledger_basis_canada_superficial_loss() {
    // ITA s.54 "superficial loss" (CRA: the loss is denied when the same
    // property is bought within 30 days and still held on day 30) and
    // s.53(1)(f) (the denied loss is added to the substituted property's
    // ACB): 100 for 1,000 sold for 600 on 1 March (loss 400), 100 bought
    // back on 20 March for 500: the row's gain is 0, and the new units'
    // ACB is 500 + 400 = 900; selling them for 1,000 gains 100.
    let out = run_args(
        &["--jurisdiction", "ca"],
        "date,type,asset,quantity,value,fee\n\
         2024-01-10,acquire,X,100,1000,\n\
         2024-03-01,dispose,X,100,600,\n\
         2024-03-20,acquire,X,100,500,\n\
         2024-06-01,dispose,X,100,1000,\n",
    );
    assert_eq!(
        pick(&table(&out), COLUMNS),
        [
            "disposal||100||1000|0|superficial_loss|2024",
            "disposal||100||900|100|acb|2024",
        ]
    );
}

#[test]
fn ledger_basis_germany_one_year_in_berlin_time() {
    // EStG §23(1) Nr. 2 and BMF 10 May 2022 Rz. 53: private sales more than
    // one year after acquisition are not taxable. Bought 15 January 2023
    // 23:30 UTC, 16 January in Berlin: a sale on 16 January 2024 is within
    // the year (gain 80 - 50 = 30), one on 17 January is not (90 - 50 = 40).
    let out = run_args(
        &["--jurisdiction", "de"],
        "date,type,asset,quantity,value\n\
         2023-01-15T23:30:00Z,acquire,X,2,100\n\
         2024-01-16T12:00:00Z,dispose,X,1,80\n\
         2024-01-17T12:00:00Z,dispose,X,1,90\n",
    );
    assert_eq!(
        pick(&table(&out), COLUMNS),
        [
            "disposal||1|2023-01-16|50|30|held_1y_or_less|2024",
            "disposal||1|2023-01-16|50|40|held_over_1y|2024",
        ]
    );
}

#[test]
fn ledger_basis_australia_discount() {
    // ITAA 1997 s.115-25 (ATO: held at least 12 months, the days of
    // acquisition and sale not counted) and s.115-100 (50% for
    // individuals): 2 units bought 1 July 2023 (Sydney) for 20,000; one
    // sold on 1 July 2024 for 15,000 is not discounted, one on 2 July 2024
    // is; `gain` is before the discount (5,000 each), tax year 2024-25.
    let out = run_args(
        &["--jurisdiction", "au"],
        "date,type,asset,quantity,value\n\
         2023-07-01T02:00:00Z,acquire,X,2,20000\n\
         2024-07-01T02:00:00Z,dispose,X,1,15000\n\
         2024-07-02T02:00:00Z,dispose,X,1,15000\n",
    );
    assert_eq!(
        pick(&table(&out), COLUMNS),
        [
            "disposal||1|2023-07-01|10000|5000|no_discount|2024-25",
            "disposal||1|2023-07-01|10000|5000|discount|2024-25",
        ]
    );
}

#[test]
fn ledger_basis_moves_between_own_wallets_keep_basis_and_dates() {
    // Wallet a buys 11 SOL for $220 ($20 each) in 2024 and moves 10 to
    // wallet b in 2025 (per-wallet pools, Treas. Reg. §1.1012-1(j)); the
    // move realizes nothing and its network fee is its own row. b sells the
    // 10 for $300: basis $200, acquired 2024-03-01, long term, gain $100,
    // in wallet b; a keeps 0.999 at $19.98 after paying 0.001 as a fee.
    let input = "date,type,asset,quantity,usd_value,wallet,to_wallet\n\
         2024-03-01,acquire,SOL,11,220,a,\n\
         2025-02-01,move,SOL,10,,a,b\n\
         2025-02-01,dispose,SOL,0.001,0.2,a,\n\
         2025-06-01,dispose,SOL,10,300,b,\n";
    let rows = table(&run_args(&[], input));
    assert_eq!(
        pick(
            &rows,
            &[
                "record", "wallet", "quantity", "acquired", "basis", "gain", "term", "rule",
                "tax_year", "lot_line"
            ]
        ),
        [
            "disposal|a|0.001|2024-03-01|0.02|0.18|short|fifo|2025|2",
            "disposal|b|10|2024-03-01|200|100|long|fifo|2025|2",
            "open|a|0.999|2024-03-01|19.98|||||2",
        ]
    );
    // In the UK the move changes nothing: one Section 104 pool of 11 at
    // £220 for all the person's wallets (£20 a unit, still after the fee's
    // 0.001); b's sale of 10 on 1 June 2025 costs £200, tax year 2025-26
    // (it starts on 6 April).
    let uk = input.replace("usd_value", "value");
    let rows = table(&run_args(&["--jurisdiction", "uk"], &uk));
    assert_eq!(
        pick(&rows, COLUMNS)[1],
        "disposal|b|10|pool|200|100|section_104|2025-26"
    );
}

#[test]
fn ledger_basis_pools_are_universal_before_2025_and_per_wallet_after() {
    // US: before 2025 one universal pool (a sale in b takes a's lot); from
    // 1 January 2025 each wallet its own (b's sale finds nothing: uncovered).
    let rows = table(&run_args(
        &[],
        "date,type,asset,quantity,usd_value,wallet\n\
         2024-01-10,acquire,X,2,20,a\n\
         2024-02-10,dispose,X,1,15,b\n\
         2025-02-10,dispose,X,1,15,b\n",
    ));
    assert_eq!(
        pick(&rows, &["wallet", "acquired", "basis", "note"]),
        ["b|2024-01-10|10|", "b|||uncovered", "a|2024-01-10|10|"]
    );
}

#[test]
fn ledger_basis_refuses_a_move_without_its_other_wallet() {
    let out = run_args(
        &[],
        "date,type,asset,quantity,usd_value,wallet,to_wallet\n2024-01-01,move,X,1,,a,\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("line 2: a move needs `to_wallet`")
    );
}
