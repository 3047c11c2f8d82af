//! Properties of the analytics and price series that must hold for any
//! ledger: flows conserve what the legs moved however many counterparties
//! collapse into `other`; every value-history point holds exactly the legs
//! before its close and its value is the sum of its priced holdings; gap
//! finding never fetches a covered bucket nor misses an uncovered one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;
use rust_decimal::Decimal;
use server::{
    analytics::{
        Leg,
        flows::{self, OTHER},
        registry::Namer,
        value_history::{self, Params},
    },
    ledger::{Counterparty, CounterpartyKind, Direction},
    prices::{Granularity, series::gaps, valuation::Valuer},
};

const WALLET: &str = "W";
const MINTS: [&str; 3] = ["sol", "USDC", "BONK"];
const DAY: i64 = 86_400;

fn leg() -> impl Strategy<Value = Leg> {
    (
        0i64..10 * DAY,
        0usize..3,
        prop_oneof![(-5_000_000_000i128..-1), (1i128..5_000_000_000)],
        prop::option::of(0usize..6),
    )
        .prop_map(|(t, m, amount, cp)| Leg {
            signature: format!("s{t}"),
            index: 0,
            block_time: Some(t),
            operation_type: if amount > 0 {
                "transfer_in"
            } else {
                "transfer_out"
            }
            .into(),
            mint: MINTS[m].into(),
            amount,
            decimals: if m == 0 { 9 } else { 6 },
            counterparties: cp
                .map(|c| Counterparty {
                    address: format!("cp{c}"),
                    direction: if amount > 0 {
                        Direction::In
                    } else {
                        Direction::Out
                    },
                    kind: CounterpartyKind::Wallet,
                })
                .into_iter()
                .collect(),
            position: None,
            router: None,
        })
}

fn valuer() -> Valuer {
    let daily: BTreeMap<i64, Decimal> = (0..12)
        .map(|d| (d * DAY, Decimal::new(100 + d * 7, 0)))
        .collect();
    Valuer::from_series(
        HashMap::new(),
        HashMap::from([("sol".to_owned(), daily)]),
        ["USDC".to_owned()].into(),
    )
}

/// (direction is in, mint) → (atomic amount, legs)
fn totals(f: &flows::Flows) -> BTreeMap<(bool, String), (i128, u32)> {
    let mut out = BTreeMap::new();
    for e in &f.edges {
        let t = out
            .entry((e.target == WALLET, e.mint.clone()))
            .or_insert((0, 0));
        t.0 += e.amount.parse::<i128>().unwrap();
        t.1 += e.legs;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn flows_conserve_what_the_legs_moved(legs in prop::collection::vec(leg(), 0..60), top in 0u32..5) {
        let v = valuer();
        let all = flows::compute(WALLET, &legs, &v, &Namer::default(), 0);
        let some = flows::compute(WALLET, &legs, &v, &Namer::default(), top);
        // What the counted legs moved, per direction and mint.
        let mut expected: BTreeMap<(bool, String), (i128, u32)> = BTreeMap::new();
        for l in legs.iter().filter(|l| !l.counterparties.is_empty()) {
            let t = expected.entry((l.amount > 0, l.mint.clone())).or_insert((0, 0));
            t.0 += l.amount.abs();
            t.1 += 1;
        }
        prop_assert_eq!(totals(&all), expected.clone());
        prop_assert_eq!(totals(&some), expected);
        prop_assert!(all.nodes.iter().all(|n| n.id != OTHER));
        if top > 0 {
            for inflow in [true, false] {
                let kept: std::collections::BTreeSet<&str> = some
                    .edges
                    .iter()
                    .filter(|e| (e.target == WALLET) == inflow)
                    .map(|e| if inflow { e.source.as_str() } else { e.target.as_str() })
                    .filter(|id| *id != OTHER)
                    .collect();
                prop_assert!(kept.len() <= top as usize);
            }
        }
        // Every edge touches the wallet; every edge's ends are nodes.
        let ids: std::collections::BTreeSet<&str> = some.nodes.iter().map(|n| n.id.as_str()).collect();
        for e in &some.edges {
            prop_assert!(e.source == WALLET || e.target == WALLET);
            prop_assert!(ids.contains(e.source.as_str()) && ids.contains(e.target.as_str()));
        }
    }

    #[test]
    fn each_point_holds_the_legs_before_its_close(mut legs in prop::collection::vec(leg(), 0..60)) {
        legs.sort_by_key(|l| l.block_time);
        let v = valuer();
        let params = Params {
            granularity: Granularity::Day,
            from: 0,
            to: 10 * DAY - 1,
            now_secs: 20 * DAY,
            spot: HashMap::new(),
        };
        let (points, unpriced, _) = value_history::compute(&legs, &v, &params).unwrap();
        prop_assert_eq!(points.len(), 10);
        for p in &points {
            let mut held: BTreeMap<&str, i128> = BTreeMap::new();
            for l in legs.iter().filter(|l| l.block_time.unwrap() < p.t) {
                *held.entry(l.mint.as_str()).or_default() += l.amount;
            }
            held.retain(|_, a| *a != 0);
            let shown: BTreeMap<&str, i128> = p
                .holdings
                .iter()
                .map(|h| (h.mint.as_str(), h.amount.parse().unwrap()))
                .collect();
            prop_assert_eq!(&shown, &held);
            let sum: Decimal = p
                .holdings
                .iter()
                .filter_map(|h| h.usd.as_deref())
                .map(|u| u.parse::<Decimal>().unwrap())
                .sum();
            prop_assert_eq!(p.usd.parse::<Decimal>().unwrap(), sum.round_dp(2));
            prop_assert!(!p.estimated);
        }
        prop_assert!(unpriced.iter().all(|m| m == "BONK"));
    }

    #[test]
    fn gaps_cover_exactly_what_is_not_covered(
        mut covered in prop::collection::vec((0i64..100, 1i64..20), 0..8),
        from in 0i64..60,
        len in 0i64..80,
    ) {
        let to = from + len;
        let mut ranges: Vec<(i64, i64)> = covered.drain(..).map(|(s, l)| (s, s + l)).collect();
        ranges.sort();
        let found = gaps(from, to, &ranges);
        for t in from..to {
            let is_covered = ranges.iter().any(|(s, e)| (*s..*e).contains(&t));
            let in_gap = found.iter().any(|(s, e)| (*s..*e).contains(&t));
            prop_assert_eq!(is_covered, !in_gap, "t={}", t);
        }
        prop_assert!(found.iter().all(|(s, e)| s < e && *s >= from && *e <= to));
    }
}
