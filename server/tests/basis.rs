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
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.csv");
    std::fs::write(&input, csv).unwrap();
    Command::new(BIN)
        .current_dir(dir.path())
        .env_clear()
        .args(["basis", "--method", method, "--input"])
        .arg(&input)
        .output()
        .unwrap()
}

#[test]
fn ledger_basis_prints_disposals_and_open_lots_for_each_method() {
    for method in Method::ALL {
        let out = run(method.as_str(), SAMPLE);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{stderr}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        insta::assert_snapshot!(format!("cli_{method}"), stdout);
        assert_eq!(
            stderr.contains("not accepted for US filings"),
            method == Method::Average
        );
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
