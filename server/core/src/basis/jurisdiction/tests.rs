//! Each jurisdiction's rules against its authority's worked examples
//! (quoted with their manual references) or, where the authority gives
//! none, first principles stated beside the figures; and hand-built
//! taxpayer books (moves, exchanges, merchants, unlabelled transfers).

use chrono::{DateTime, NaiveDate};
use rust_decimal::{Decimal, RoundingStrategy};

use super::*;
use crate::basis::{
    Event, EventKind, Rule, Term,
    books::{Counterparty, Holder, Transfer, Treatment, UnlabelledTransfers, WalletEvent},
};

fn dec(text: &str) -> Decimal {
    text.parse().unwrap()
}

/// `YYYY-MM-DD` at 12:00 UTC, or an RFC 3339 time.
fn at(text: &str) -> i64 {
    if text.len() == 10 {
        NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp()
    } else {
        DateTime::parse_from_rfc3339(text).unwrap().timestamp()
    }
}

fn event(wallet: &str, time: &str, kind: EventKind, qty: &str, value: &str) -> WalletEvent {
    WalletEvent {
        wallet: wallet.into(),
        event: Event {
            time: at(time),
            seq: 0,
            asset: "tok".into(),
            kind,
            quantity: dec(qty),
            usd_value: Some(dec(value)),
            fee_usd: Decimal::ZERO,
        },
        transfer: None,
    }
}

fn buy(wallet: &str, time: &str, qty: &str, value: &str) -> WalletEvent {
    event(wallet, time, EventKind::Acquire, qty, value)
}

fn sell(wallet: &str, time: &str, qty: &str, value: &str) -> WalletEvent {
    event(wallet, time, EventKind::Dispose, qty, value)
}

fn with(mut e: WalletEvent, signature: &str, counterparty: Counterparty) -> WalletEvent {
    e.transfer = Some(Transfer {
        signature: signature.into(),
        counterparty,
    });
    e
}

fn run(j: Jurisdiction, events: &[WalletEvent]) -> Assessment {
    assess(j, events, None, UnlabelledTransfers::default()).unwrap()
}

fn pounds(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(0, RoundingStrategy::MidpointNearestEven)
}

/// (rule, quantity, basis, gain) of every row.
fn rows(a: &Assessment) -> Vec<(Rule, Decimal, Option<Decimal>, Option<Decimal>)> {
    a.rows
        .iter()
        .map(|r| (r.row.rule, r.row.quantity, r.row.basis, r.row.gain))
        .collect()
}

fn gain_of(a: &Assessment, time: &str) -> Decimal {
    a.rows
        .iter()
        .filter(|r| r.row.disposed == at(time))
        .map(|r| r.row.gain.unwrap())
        .sum()
}

// ---- Jurisdiction basics ---------------------------------------------------

#[test]
fn jurisdictions_parse_and_carry_currency_and_default_matching() {
    for j in Jurisdiction::ALL {
        assert_eq!(j.as_str().parse::<Jurisdiction>(), Ok(j));
    }
    assert!("fr".parse::<Jurisdiction>().is_err());
    let currencies: Vec<&str> = Jurisdiction::ALL
        .iter()
        .map(|j| j.currency().code())
        .collect();
    assert_eq!(currencies, ["USD", "GBP", "CAD", "EUR", "AUD"]);
    assert_eq!(
        Jurisdiction::Us.default_matching(),
        Matching::Lots(Method::Fifo)
    );
    assert_eq!(
        Jurisdiction::De.default_matching(),
        Matching::Lots(Method::Fifo)
    );
    assert_eq!(
        Jurisdiction::Au.default_matching(),
        Matching::Lots(Method::Fifo)
    );
    assert_eq!(Jurisdiction::Uk.default_matching(), Matching::ShareMatching);
    assert_eq!(
        Jurisdiction::Ca.default_matching(),
        Matching::AdjustedCostBase
    );
}

#[test]
fn each_jurisdiction_refuses_the_methods_it_does_not_accept_with_the_reason() {
    let allowed = |j: Jurisdiction| -> Vec<&str> {
        Method::ALL
            .into_iter()
            .filter(|m| j.matching(Some(*m)).is_ok())
            .map(Method::as_str)
            .collect()
    };
    assert_eq!(allowed(Jurisdiction::Us), ["fifo", "lifo", "hifo", "lofo"]);
    assert_eq!(allowed(Jurisdiction::Uk), Vec::<&str>::new());
    assert_eq!(allowed(Jurisdiction::Ca), ["average"]);
    assert_eq!(allowed(Jurisdiction::De), ["fifo", "average"]);
    assert_eq!(allowed(Jurisdiction::Au), ["fifo", "lifo", "hifo", "lofo"]);
    let refused = Jurisdiction::Us
        .matching(Some(Method::Average))
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("average is not accepted in us: Treas. Reg. §1.1012-1(e)")
    );
    let refused = Jurisdiction::De.matching(Some(Method::Lifo)).unwrap_err();
    assert!(refused.reason.contains("Rz. 61"));
    assert!(
        Jurisdiction::Uk
            .matching(Some(Method::Fifo))
            .unwrap_err()
            .reason
            .contains("CRYPTO22200")
    );
    assert!(
        Jurisdiction::Ca
            .matching(Some(Method::Fifo))
            .unwrap_err()
            .reason
            .contains("s.47(1)")
    );
    assert!(
        Jurisdiction::Au
            .matching(Some(Method::Average))
            .unwrap_err()
            .reason
            .contains("s.110-25")
    );
    let events = [buy("a", "2024-01-01", "1", "1")];
    assert!(
        assess(
            Jurisdiction::Ca,
            &events,
            Some(Method::Hifo),
            Default::default()
        )
        .is_err()
    );
}

#[test]
fn tax_years_follow_each_jurisdiction_in_its_civil_time() {
    let year = |j: Jurisdiction, t: &str| j.tax_year(at(t)).to_string();
    // UK: 6 April to 5 April, Europe/London (BST from 31 March 2024).
    assert_eq!(year(Jurisdiction::Uk, "2024-04-05T22:59:59Z"), "2023-24");
    assert_eq!(year(Jurisdiction::Uk, "2024-04-05T23:00:00Z"), "2024-25");
    // Australia: 1 July to 30 June, Australia/Sydney (AEST, +10).
    assert_eq!(year(Jurisdiction::Au, "2024-06-30T13:59:59Z"), "2023-24");
    assert_eq!(year(Jurisdiction::Au, "2024-06-30T14:00:00Z"), "2024-25");
    // Calendar years: Germany in Berlin (+1 in winter), Canada in Toronto
    // (-5), the US in UTC.
    assert_eq!(year(Jurisdiction::De, "2024-12-31T23:00:00Z"), "2025");
    assert_eq!(year(Jurisdiction::Ca, "2025-01-01T04:59:59Z"), "2024");
    assert_eq!(year(Jurisdiction::Us, "2024-12-31T23:59:59Z"), "2024");
    assert_eq!(TaxYear::split(1999).to_string(), "1999-00");
    // The last day of each year: the UK's 2024-25 ends on 5 April 2025
    // (ITA 2007 s.4), Australia's on 30 June 2025, the calendar years on
    // 31 December.
    let last = |j: Jurisdiction, y: TaxYear| j.last_day(y).unwrap().to_string();
    assert_eq!(last(Jurisdiction::Uk, TaxYear::split(2024)), "2025-04-05");
    assert_eq!(last(Jurisdiction::Au, TaxYear::split(2024)), "2025-06-30");
    assert_eq!(
        last(Jurisdiction::Ca, TaxYear::calendar(2024)),
        "2024-12-31"
    );
}

// ---- UK: HMRC Cryptoassets Manual pooling examples ------------------------

#[test]
fn uk_same_day_rule_crypto22252() {
    // CRYPTO22252 (Martyn): 5,000 token B in the pool at £500. On one day:
    // morning sells 1,000 for £800, afternoon buys 1,600 for £1,000,
    // evening sells 500 for £600. The disposals are one of 1,500 for
    // £1,400, matched with the same day's acquisition: cost £1,000 x
    // 1,500/1,600 = £938 (937.50), gain £462 (462.50). The other 100 and
    // £62 (62.50) join the pool: 5,100 tokens, £562 (562.50).
    let a = run(
        Jurisdiction::Uk,
        &[
            buy("a", "2023-05-01", "5000", "500"),
            sell("a", "2024-06-23T08:00:00Z", "1000", "800"),
            buy("a", "2024-06-23T13:00:00Z", "1600", "1000"),
            sell("a", "2024-06-23T19:00:00Z", "500", "600"),
        ],
    );
    assert!(a.rows.iter().all(|r| r.row.rule == Rule::SameDay));
    let cost: Decimal = a.rows.iter().map(|r| r.row.basis.unwrap()).sum();
    assert_eq!(cost, dec("937.5"));
    assert_eq!(
        a.rows.iter().map(|r| r.row.gain.unwrap()).sum::<Decimal>(),
        dec("462.5")
    );
    assert_eq!(a.holdings.len(), 1);
    assert_eq!(
        (a.holdings[0].quantity, a.holdings[0].cost),
        (dec("5100"), Some(dec("562.5")))
    );
    assert_eq!(a.holdings[0].acquired, None);
    let YearSummary::Uk(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!((s.tax_year.as_str(), s.disposals), ("2024-25", 1));
    assert_eq!(
        (s.proceeds, s.gains, s.losses),
        (dec("1400"), dec("462.5"), Decimal::ZERO)
    );
}

#[test]
fn uk_same_day_rule_with_the_section_104_pool_crypto22254() {
    // CRYPTO22254 (Daniel): pool 8,000 token D at £1,000. On 31 January:
    // sells 5,000 for £500; buys 4,000 for £320, 1,000 for £75, 1,000 for
    // £70; sells 2,000 for £142; buys 500 for £35. One disposal of 7,000
    // for £642 and one acquisition of 6,500 for £500: same day 6,500 at
    // £500, the other 500 from the pool at £1,000 x 500/8,000 = £63
    // (62.50); gain £79 (79.50); pool 7,500 at £937 (937.50).
    let a = run(
        Jurisdiction::Uk,
        &[
            buy("a", "2024-06-01", "8000", "1000"),
            sell("a", "2025-01-31T09:00:00Z", "5000", "500"),
            buy("a", "2025-01-31T10:00:00Z", "4000", "320"),
            buy("a", "2025-01-31T11:00:00Z", "1000", "75"),
            buy("a", "2025-01-31T12:00:00Z", "1000", "70"),
            sell("a", "2025-01-31T13:00:00Z", "2000", "142"),
            buy("a", "2025-01-31T14:00:00Z", "500", "35"),
        ],
    );
    let by_rule = |rule| -> (Decimal, Decimal) {
        a.rows
            .iter()
            .filter(|r| r.row.rule == rule)
            .fold((Decimal::ZERO, Decimal::ZERO), |(q, c), r| {
                (q + r.row.quantity, c + r.row.basis.unwrap())
            })
    };
    assert_eq!(by_rule(Rule::SameDay), (dec("6500"), dec("500")));
    assert_eq!(by_rule(Rule::Section104), (dec("500"), dec("62.5")));
    assert_eq!(pounds(by_rule(Rule::Section104).1), dec("62"));
    let gain: Decimal = a.rows.iter().map(|r| r.row.gain.unwrap()).sum();
    assert_eq!(gain, dec("79.5"));
    assert_eq!(
        (a.holdings[0].quantity, a.holdings[0].cost),
        (dec("7500"), Some(dec("937.5")))
    );
    // The 5,000 sold first take same-day units first, as one disposal.
    assert_eq!(a.rows[0].row.rule, Rule::SameDay);
    assert_eq!(a.rows.last().unwrap().row.rule, Rule::Section104);
}

#[test]
fn uk_thirty_day_rule_with_the_section_104_pool_crypto22255() {
    // CRYPTO22255 (Melanie): pool 14,000 token E at £200,000. 30 August:
    // sells 4,000 for £160,000; 11 September: buys 500 for £17,500. The 500
    // are matched under the 30-day rule (£17,500), 3,500 from the pool
    // (£200,000 x 3,500/14,000 = £50,000); gain £92,500; pool 10,500 at
    // £150,000.
    let a = run(
        Jurisdiction::Uk,
        &[
            buy("a", "2023-01-10", "14000", "200000"),
            sell("a", "2024-08-30", "4000", "160000"),
            buy("a", "2024-09-11", "500", "17500"),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![
            (
                Rule::BedAndBreakfast,
                dec("500"),
                Some(dec("17500")),
                Some(dec("2500"))
            ),
            (
                Rule::Section104,
                dec("3500"),
                Some(dec("50000")),
                Some(dec("90000"))
            ),
        ]
    );
    assert_eq!(gain_of(&a, "2024-08-30"), dec("92500"));
    assert_eq!(a.rows[0].row.acquired, Some(at("2024-09-11")));
    assert_eq!(
        (a.holdings[0].quantity, a.holdings[0].cost),
        (dec("10500"), Some(dec("150000")))
    );
}

#[test]
fn uk_same_day_thirty_day_and_pool_together_crypto22256() {
    // CRYPTO22256 (Gulferaz): pool 100,000 token F at £300,000.
    // 31 July: buys 10,000 for £45,000 and sells 30,000 for £150,000;
    // 5 August: sells 20,000 for £100,000; 6 August: buys 50,000 for
    // £225,000; 7 August: sells 100,000 for £150,000.
    // HMRC: 31 July: same day 10,000 (£45,000) + 30 days 20,000 of 6 August
    // (£225,000 x 20,000/50,000 = £90,000): gain £15,000. 5 August: 30 days
    // 20,000 of 6 August (£90,000): gain £10,000. The other 10,000 of 6
    // August (£45,000) join the pool.
    // 7 August (from the same rules): the pool is 110,000 at £345,000; 100,000
    // cost £345,000 x 100,000/110,000 = £313,636.36; loss £163,636.36; the
    // pool keeps 10,000 at £31,363.64.
    let a = run(
        Jurisdiction::Uk,
        &[
            buy("a", "2023-03-01", "100000", "300000"),
            buy("a", "2024-07-31T09:00:00Z", "10000", "45000"),
            sell("a", "2024-07-31T10:00:00Z", "30000", "150000"),
            sell("a", "2024-08-05", "20000", "100000"),
            buy("a", "2024-08-06", "50000", "225000"),
            sell("a", "2024-08-07", "100000", "150000"),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![
            (
                Rule::SameDay,
                dec("10000"),
                Some(dec("45000")),
                Some(dec("5000"))
            ),
            (
                Rule::BedAndBreakfast,
                dec("20000"),
                Some(dec("90000")),
                Some(dec("10000"))
            ),
            (
                Rule::BedAndBreakfast,
                dec("20000"),
                Some(dec("90000")),
                Some(dec("10000"))
            ),
            (
                Rule::Section104,
                dec("100000"),
                Some(dec("313636.36363636")),
                Some(dec("-163636.36363636"))
            ),
        ]
    );
    assert_eq!(gain_of(&a, "2024-07-31T10:00:00Z"), dec("15000"));
    assert_eq!(gain_of(&a, "2024-08-05"), dec("10000"));
    assert_eq!(pounds(gain_of(&a, "2024-08-07")), dec("-163636"));
    assert_eq!(
        (a.holdings[0].quantity, a.holdings[0].cost),
        (dec("10000"), Some(dec("31363.63636364")))
    );
    let YearSummary::Uk(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!(s.disposals, 3);
    assert_eq!(s.proceeds, dec("400000"));
    assert_eq!(s.gains, dec("25000"));
    assert_eq!(s.losses, dec("163636.36363636"));
}

#[test]
fn uk_thirty_days_means_the_thirty_days_after_the_disposal_only() {
    // An acquisition 31 days after, or before the disposal, is not matched
    // by the 30-day rule (TCGA 1992 s.106A(5)): the pool is used.
    let a = run(
        Jurisdiction::Uk,
        &[
            buy("a", "2024-05-01", "10", "100"),
            sell("a", "2024-06-01", "5", "100"),
            buy("a", "2024-07-01", "5", "200"),
            sell("a", "2024-08-01", "5", "100"),
            buy("a", "2024-09-01", "5", "300"),
        ],
    );
    // 1 June: 1 July is day 30: matched (cost 200). 1 August: 1 September
    // is day 31: the pool (10 at 100, so 5 at 50).
    assert_eq!(
        rows(&a),
        vec![
            (
                Rule::BedAndBreakfast,
                dec("5"),
                Some(dec("200")),
                Some(dec("-100"))
            ),
            (Rule::Section104, dec("5"), Some(dec("50")), Some(dec("50"))),
        ]
    );
}

#[test]
fn uk_proceeds_are_gross_and_sale_costs_are_allowable_costs() {
    let mut sale = sell("a", "2024-06-01", "1", "100");
    sale.event.fee_usd = dec("2");
    let mut purchase = buy("a", "2024-05-01", "1", "50");
    purchase.event.fee_usd = dec("1");
    let a = run(Jurisdiction::Uk, &[purchase, sale]);
    let r = &a.rows[0];
    assert_eq!(
        (r.row.proceeds, r.row.basis, r.sale_costs),
        (Some(dec("100")), Some(dec("53")), dec("2"))
    );
    assert_eq!(r.row.gain, Some(dec("47")));
}

// ---- Canada: ITA s.47, s.54, s.53(1)(f) ------------------------------------

#[test]
fn canada_averages_the_cost_of_identical_properties() {
    // s.47(1): 1 unit at 100 and 1 at 200 have an ACB of 150 each; one
    // sold for 180 gains 30, and the other keeps 150.
    let a = run(
        Jurisdiction::Ca,
        &[
            buy("a", "2024-01-10", "1", "100"),
            buy("b", "2024-02-10", "1", "200"),
            sell("a", "2024-03-10", "1", "180"),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![(Rule::Acb, dec("1"), Some(dec("150")), Some(dec("30")))]
    );
    assert_eq!(a.holdings[0].cost, Some(dec("150")));
    let YearSummary::Ca(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!((s.gain, s.taxable_capital_gain), (dec("30"), dec("15")));
}

#[test]
fn canada_superficial_loss_is_denied_and_added_to_the_replacement_cost() {
    // s.54: 100 bought for 1,000 are sold on 1 March for 600 (a loss of
    // 400); 100 are bought back on 20 March (within 30 days after) and
    // still held on 31 March (day 30): the loss is nil (s.40(2)(g)(i)) and
    // 400 is added to the new units' ACB (s.53(1)(f)): 500 + 400 = 900.
    // Selling those for 1,000 then gains 100.
    let a = run(
        Jurisdiction::Ca,
        &[
            buy("a", "2024-01-10", "100", "1000"),
            sell("a", "2024-03-01", "100", "600"),
            buy("a", "2024-03-20", "100", "500"),
            sell("a", "2024-06-01", "100", "1000"),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![
            (
                Rule::SuperficialLoss,
                dec("100"),
                Some(dec("1000")),
                Some(dec("0"))
            ),
            (Rule::Acb, dec("100"), Some(dec("900")), Some(dec("100"))),
        ]
    );
    let YearSummary::Ca(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!(
        (s.gain, s.superficial_losses, s.taxable_capital_gain),
        (dec("100"), dec("400"), dec("50"))
    );
}

#[test]
fn canada_a_partial_repurchase_denies_that_share_of_the_loss() {
    // 50 of the 100 sold are replaced and held at day 30: the loss of 400 is
    // denied on 50 (200, added to the 50 new units' ACB: 300 + 200 = 500)
    // and allowed on the other 50 (-200).
    let a = run(
        Jurisdiction::Ca,
        &[
            buy("a", "2024-01-10", "100", "1000"),
            sell("a", "2024-03-01", "100", "600"),
            buy("b", "2024-03-15", "50", "300"),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![
            (
                Rule::SuperficialLoss,
                dec("50"),
                Some(dec("500")),
                Some(dec("0"))
            ),
            (Rule::Acb, dec("50"), Some(dec("500")), Some(dec("-200"))),
        ]
    );
    assert_eq!(
        (a.holdings[0].quantity, a.holdings[0].cost),
        (dec("50"), Some(dec("500")))
    );
}

#[test]
fn canada_no_superficial_loss_when_the_repurchase_is_after_day_30_or_sold_again() {
    // Bought back on day 31: the loss stands.
    let late = run(
        Jurisdiction::Ca,
        &[
            buy("a", "2024-01-10", "100", "1000"),
            sell("a", "2024-03-01", "100", "600"),
            buy("a", "2024-04-01", "100", "500"),
        ],
    );
    assert_eq!(
        rows(&late)[0],
        (Rule::Acb, dec("100"), Some(dec("1000")), Some(dec("-400")))
    );
    // Bought back within 30 days but sold again before day 30 ends: not
    // held at the end of the period, so the loss stands too.
    let sold = run(
        Jurisdiction::Ca,
        &[
            buy("a", "2024-01-10", "100", "1000"),
            sell("a", "2024-03-01", "100", "600"),
            buy("a", "2024-03-10", "100", "500"),
            sell("a", "2024-03-20", "100", "550"),
        ],
    );
    assert_eq!(rows(&sold)[0].0, Rule::Acb);
    assert_eq!(rows(&sold)[0].3, Some(dec("-400")));
}

// ---- Germany: EStG §23 ------------------------------------------------------

#[test]
fn germany_exempts_sales_held_over_a_year_counted_in_berlin_time() {
    // Bought 15 January 2023 at 23:30 UTC, which is 16 January in Berlin:
    // the year ends with 16 January 2024 (BGB §188(2)); a sale that day is
    // within it, the next day is not.
    let bought = buy("a", "2023-01-15T23:30:00Z", "2", "100");
    let a = run(
        Jurisdiction::De,
        &[
            bought,
            sell("a", "2024-01-16T12:00:00Z", "1", "80"),
            sell("a", "2024-01-17T12:00:00Z", "1", "90"),
        ],
    );
    let rules: Vec<Rule> = a.rows.iter().map(|r| r.row.rule).collect();
    assert_eq!(rules, [Rule::Held1yOrLess, Rule::HeldOver1y]);
    let YearSummary::De(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!(
        (s.gain_within_one_year, s.gain_after_one_year),
        (dec("30"), dec("40"))
    );
}

#[test]
fn germany_freigrenze_frees_all_below_it_and_taxes_all_at_it() {
    // §23 Abs. 3 S. 5: tax-free if the year's total is *less than* the
    // limit: 1,000 EUR from 2024, 600 EUR before.
    let year = |date: &str, gain: &str| {
        let s = run(
            Jurisdiction::De,
            &[
                buy("a", &format!("{}-01-02", &date[..4]), "1", "1000"),
                sell("a", date, "1", &(dec("1000") + dec(gain)).to_string()),
            ],
        );
        let YearSummary::De(s) = s.years[0].clone() else {
            panic!()
        };
        (s.exemption_limit, s.taxable_gain)
    };
    assert_eq!(year("2024-06-01", "999.99"), (dec("1000"), dec("0")));
    assert_eq!(year("2024-06-01", "1000"), (dec("1000"), dec("1000")));
    assert_eq!(year("2023-06-01", "599.99"), (dec("600"), dec("0")));
    assert_eq!(year("2023-06-01", "600"), (dec("600"), dec("600")));
}

#[test]
fn germany_applies_fifo_wallet_by_wallet() {
    // BMF 10 May 2022, Rz. 61: wallet by wallet. Wallet b's sale takes b's
    // own lot (cost 20), not a's older one (cost 10).
    let a = run(
        Jurisdiction::De,
        &[
            buy("a", "2024-01-10", "1", "10"),
            buy("b", "2024-02-10", "1", "20"),
            sell("b", "2024-03-10", "1", "30"),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![(
            Rule::Held1yOrLess,
            dec("1"),
            Some(dec("20")),
            Some(dec("10"))
        )]
    );
    assert_eq!(a.rows[0].wallet, "b");
}

// ---- Australia: ITAA 1997 Div 115 -------------------------------------------

#[test]
fn australia_discounts_gains_on_assets_held_at_least_twelve_months() {
    // s.115-25: acquired 1 July 2023; the days of acquisition and of the
    // CGT event do not count, so a sale on 1 July 2024 is short of 12
    // months and one on 2 July 2024 qualifies: gain 5,000, discounted to
    // 2,500 (s.115-100).
    let a = run(
        Jurisdiction::Au,
        &[
            buy("a", "2023-07-01T02:00:00Z", "2", "20000"),
            sell("a", "2024-07-01T02:00:00Z", "1", "15000"),
            sell("a", "2024-07-02T02:00:00Z", "1", "15000"),
        ],
    );
    let rules: Vec<Rule> = a.rows.iter().map(|r| r.row.rule).collect();
    assert_eq!(rules, [Rule::NoDiscount, Rule::Discount]);
    let YearSummary::Au(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!(s.tax_year, "2024-25");
    assert_eq!(
        (s.discountable_gains, s.other_gains),
        (dec("5000"), dec("5000"))
    );
    assert_eq!(s.net_capital_gain, dec("7500"));
}

#[test]
fn australia_applies_losses_before_the_discount() {
    // s.102-5 method statement: losses reduce gains first (here the
    // undiscounted ones, which is best for the taxpayer), then the discount
    // halves what is left. Gains: 10,000 on the 2022 unit (discountable),
    // 2,000 on a 2024 unit; loss 3,000 on the other 2024 unit. 2,000 -
    // 2,000 = 0; 10,000 - 1,000 = 9,000, halved: 4,500.
    let a = run(
        Jurisdiction::Au,
        &[
            buy("a", "2022-01-10", "1", "1000"),
            buy("a", "2024-08-01", "2", "10000"),
            sell("a", "2024-09-01", "1", "11000"),
            sell("a", "2024-09-02", "1", "7000"),
            sell("a", "2024-09-03", "1", "2000"),
        ],
    );
    let YearSummary::Au(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!(
        (s.discountable_gains, s.other_gains, s.losses),
        (dec("10000"), dec("2000"), dec("3000"))
    );
    assert_eq!(
        (s.net_capital_gain, s.net_capital_loss),
        (dec("4500"), dec("0"))
    );
}

// ---- United States: pools and the 2025 transition ---------------------------

#[test]
fn us_uses_one_universal_pool_before_2025_and_allocates_it_to_wallets() {
    // 2024: universal pool, FIFO: b's sale takes a's 2023 lot (cost 10).
    // 1 January 2025: the pool's remaining lot (cost 50, 1 January 2024)
    // goes to the wallet that holds a unit, a (Rev. Proc. 2024-28), and
    // a's 2025 sale uses it with its date: long term, gain 50.
    let a = run(
        Jurisdiction::Us,
        &[
            buy("a", "2023-01-01", "1", "10"),
            buy("b", "2024-01-01", "1", "50"),
            sell("b", "2024-06-01", "1", "60"),
            sell("a", "2025-03-01", "1", "100"),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![
            (Rule::Fifo, dec("1"), Some(dec("10")), Some(dec("50"))),
            (Rule::Fifo, dec("1"), Some(dec("50")), Some(dec("50"))),
        ]
    );
    assert_eq!(a.rows[1].row.acquired, Some(at("2024-01-01")));
    assert_eq!(a.rows[1].row.term, Some(Term::Long));
    assert_eq!(
        (a.rows[0].wallet.as_str(), a.rows[1].wallet.as_str()),
        ("b", "a")
    );
    let years: Vec<String> = a
        .years
        .iter()
        .map(|y| match y {
            YearSummary::Us(s) => {
                format!("{} {} {}", s.tax_year, s.short_term_gain, s.long_term_gain)
            }
            _ => panic!(),
        })
        .collect();
    assert_eq!(years, ["2024 0 50", "2025 0 50"]);
}

#[test]
fn us_pools_are_per_wallet_from_2025() {
    let a = run(
        Jurisdiction::Us,
        &[
            buy("a", "2025-01-05", "1", "10"),
            buy("b", "2025-01-06", "1", "50"),
            sell("b", "2025-02-01", "1", "60"),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![(Rule::Fifo, dec("1"), Some(dec("50")), Some(dec("10")))]
    );
    assert_eq!(a.holdings[0].holder, Holder::Wallet("a".into()));
}

// ---- The taxpayer's books --------------------------------------------------

#[test]
fn a_move_between_own_wallets_realizes_nothing_and_keeps_dates_and_basis() {
    let events = [
        buy("a", "2023-01-01", "2", "20"),
        with(
            sell("a", "2025-02-01", "2", "200"),
            "sig1",
            Counterparty::OwnWallet,
        ),
        with(
            buy("b", "2025-02-01", "2", "200"),
            "sig1",
            Counterparty::OwnWallet,
        ),
        sell("b", "2025-03-01", "1", "150"),
    ];
    let a = run(Jurisdiction::Us, &events);
    assert_eq!(
        rows(&a),
        vec![(Rule::Fifo, dec("1"), Some(dec("10")), Some(dec("140")))]
    );
    assert_eq!(a.rows[0].row.acquired, Some(at("2023-01-01")));
    assert_eq!(a.rows[0].row.term, Some(Term::Long));
    assert_eq!(a.moves.len(), 1);
    assert_eq!(
        (a.moves[0].from.as_str(), a.moves[0].to.as_str()),
        ("a", "b")
    );
    assert_eq!(a.holdings[0].holder, Holder::Wallet("b".into()));
    assert!(a.transfers.is_empty());
    // In the UK the move drops out of the one pool.
    let uk = run(Jurisdiction::Uk, &events);
    assert_eq!(
        rows(&uk),
        vec![(
            Rule::Section104,
            dec("1"),
            Some(dec("10")),
            Some(dec("140"))
        )]
    );
}

#[test]
fn an_exchange_transfer_leaves_at_basis_and_comes_back_with_it() {
    let a = run(
        Jurisdiction::Us,
        &[
            buy("a", "2025-01-10", "1", "100"),
            with(
                sell("a", "2025-02-01", "1", "150"),
                "x1",
                Counterparty::Exchange,
            ),
        ],
    );
    assert!(a.rows.is_empty());
    assert_eq!(a.holdings[0].holder, Holder::Exchange);
    assert_eq!(a.holdings[0].cost, Some(dec("100")));
    assert_eq!(a.transfers[0].treatment, Treatment::OutOfBooks);

    let a = run(
        Jurisdiction::Us,
        &[
            buy("a", "2025-01-10", "1", "100"),
            with(
                sell("a", "2025-02-01", "1", "150"),
                "x1",
                Counterparty::Exchange,
            ),
            with(
                buy("a", "2025-03-01", "1.5", "300"),
                "x2",
                Counterparty::Exchange,
            ),
            sell("a", "2025-04-01", "1.5", "450"),
        ],
    );
    // The unit that went comes back with its basis and date; the half unit
    // more arrives at unknown basis (its history is the exchange's).
    assert_eq!(
        rows(&a),
        vec![
            (Rule::Fifo, dec("1"), Some(dec("100")), Some(dec("200"))),
            (Rule::Fifo, dec("0.5"), None, None),
        ]
    );
    assert_eq!(a.rows[0].row.acquired, Some(at("2025-01-10")));
    assert_eq!(a.transfers[1].treatment, Treatment::IntoBooks);
}

#[test]
fn a_merchant_payment_is_a_disposal_at_market_value() {
    let a = run(
        Jurisdiction::Us,
        &[
            buy("a", "2025-01-10", "1", "100"),
            with(
                sell("a", "2025-02-01", "1", "130"),
                "m1",
                Counterparty::Merchant,
            ),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![(Rule::Fifo, dec("1"), Some(dec("100")), Some(dec("30")))]
    );
    assert_eq!(a.transfers[0].treatment, Treatment::Disposal);
}

#[test]
fn unlabelled_transfers_follow_the_setting_are_totalled_and_relabelling_changes_the_books() {
    let events = vec![
        buy("a", "2025-01-10", "2", "200"),
        with(
            sell("a", "2025-02-01", "1", "130"),
            "u1",
            Counterparty::Unlabelled,
        ),
        with(
            sell("a", "2025-02-02", "0.5", "70"),
            "u2",
            Counterparty::Unlabelled,
        ),
    ];
    // Default: disposals at market value.
    let books =
        crate::basis::books::replay(&events, Method::Fifo, UnlabelledTransfers::default(), |t| {
            us::pool_scope(t, Zone::NewYork)
        });
    assert_eq!(books.replay.disposals.len(), 2);
    let totals = books.unlabelled_totals();
    assert_eq!(totals.len(), 1);
    assert_eq!(
        (totals[0].count, totals[0].quantity, totals[0].value),
        (2, dec("1.5"), dec("200"))
    );
    assert!(totals[0].outgoing);
    // Setting: out of the books at basis.
    let a = assess(
        Jurisdiction::Us,
        &events,
        None,
        UnlabelledTransfers::OutOfBooks,
    )
    .unwrap();
    assert!(a.rows.is_empty());
    // Labelling the first as the person's exchange: the next run reads it so.
    let mut relabelled = events.clone();
    relabelled[1].transfer.as_mut().unwrap().counterparty = Counterparty::Exchange;
    let a = run(Jurisdiction::Us, &relabelled);
    assert_eq!(a.rows.len(), 1);
    assert_eq!(a.rows[0].row.disposed, at("2025-02-02"));
}

#[test]
fn values_are_converted_at_the_rate_of_the_civil_date() {
    // Rates per EUR: USD 1.10 and GBP 0.85 on Friday 5 April 2024, USD 1.20
    // and GBP 0.90 on Monday 8 April. A sale at 23:30 UTC on 5 April is 6
    // April in London (BST), a Saturday: Friday's rate still applies
    // (last published before), 110 USD = 110 x 0.85 / 1.10 = 85 GBP; a
    // sale on 8 April uses that day's: 120 USD = 120 x 0.90 / 1.20 = 90.
    use crate::values::fx::{Currency, RateTable};
    let mut rates = RateTable::new();
    let day = |d| NaiveDate::from_ymd_opt(2024, 4, d).unwrap();
    rates.insert(day(5), Currency::Usd, dec("1.10"));
    rates.insert(day(5), Currency::Gbp, dec("0.85"));
    rates.insert(day(8), Currency::Usd, dec("1.20"));
    rates.insert(day(8), Currency::Gbp, dec("0.90"));
    let mut sale = sell("a", "2024-04-05T23:30:00Z", "1", "110");
    sale.event.fee_usd = dec("1.10");
    let events = [sale, sell("a", "2024-04-08", "1", "120")];
    let converted = convert(Jurisdiction::Uk, &events, Currency::Usd, &rates).unwrap();
    let values: Vec<_> = converted
        .iter()
        .map(|e| (e.event.usd_value, e.event.fee_usd))
        .collect();
    assert_eq!(
        values,
        vec![(Some(dec("85")), dec("0.85")), (Some(dec("90")), dec("0"))]
    );
    // In Berlin it is 6 April too; in EUR for Germany: 110 / 1.10 = 100.
    let de = convert(Jurisdiction::De, &events[..1], Currency::Usd, &rates).unwrap();
    assert_eq!(de[0].event.usd_value, Some(dec("100")));
    assert!(
        convert(
            Jurisdiction::Uk,
            &[sell("a", "2024-03-01", "1", "1")],
            Currency::Usd,
            &rates
        )
        .is_err()
    );
}

// ---- Review (branch t24-review): cases from the tax-rule review -----------

#[test]
fn review_uk_crypto22251_basic_section_104_pool() {
    // CRYPTO22251 (Victoria): buys 100 token A for £1,000; on 18 September
    // buys 50 more for £125,000; on 1 December sells 50 for £300,000. Pool
    // 150 at £126,000; cost £126,000 x 50/150 = £42,000; gain £258,000; the
    // pool keeps 100 at £84,000.
    let a = run(
        Jurisdiction::Uk,
        &[
            buy("a", "2020-01-01", "100", "1000"),
            buy("a", "2020-09-18", "50", "125000"),
            sell("a", "2020-12-01", "50", "300000"),
        ],
    );
    assert_eq!(
        rows(&a),
        vec![(
            Rule::Section104,
            dec("50"),
            Some(dec("42000")),
            Some(dec("258000"))
        )]
    );
    assert_eq!(
        (a.holdings[0].quantity, a.holdings[0].cost),
        (dec("100"), Some(dec("84000")))
    );
}

#[test]
fn review_ca_denied_loss_goes_to_the_substituted_property_not_to_units_sold_before_it() {
    // 200 held at an ACB of 2,000. 1 March: 100 sold for 600 (ACB 1,000,
    // loss 400). 2 March: the other 100 sold for 1,500 (ACB 1,000, gain
    // 500). 10 March: 100 bought for 500 and still held on 31 March.
    // s.54: the 1 March loss is superficial, the substituted property being
    // the 10 March units; s.53(1)(f) adds the 400 to the cost of *that*
    // property (500 + 400 = 900). The 2 March disposition is untouched:
    // ACB 1,000, gain 500. The code adds the 400 to the units held on 1
    // March, so the 2 March sale absorbs it (gain 100): a denied loss is
    // deducted after all, in the same year.
    let a = run(
        Jurisdiction::Ca,
        &[
            buy("a", "2024-01-10", "200", "2000"),
            sell("a", "2024-03-01", "100", "600"),
            sell("a", "2024-03-02", "100", "1500"),
            buy("a", "2024-03-10", "100", "500"),
        ],
    );
    assert_eq!(gain_of(&a, "2024-03-02"), dec("500"));
    assert_eq!(
        (a.holdings[0].quantity, a.holdings[0].cost),
        (dec("100"), Some(dec("900")))
    );
    let YearSummary::Ca(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!((s.gain, s.superficial_losses), (dec("500"), dec("400")));
}

#[test]
fn review_ca_two_losses_one_repurchase_superficial_total_is_the_losses() {
    // 200 at 2,000; 1 and 2 March: 100 sold for 600 each (a loss of 400
    // each); 10 March: 100 bought for 500, held on 31 March. Each loss is
    // 400 (ACB 1,000 each); the superficial losses total 800 and the new
    // units' ACB is 500 + 800 = 1,300. The code reports the second
    // disposition's ACB as 1,400 and 1,200 of superficial losses.
    let a = run(
        Jurisdiction::Ca,
        &[
            buy("a", "2024-01-10", "200", "2000"),
            sell("a", "2024-03-01", "100", "600"),
            sell("a", "2024-03-02", "100", "600"),
            buy("a", "2024-03-10", "100", "500"),
        ],
    );
    let YearSummary::Ca(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!(s.adjusted_cost_base, dec("2000"));
    assert_eq!(s.superficial_losses, dec("800"));
    assert_eq!(
        (a.holdings[0].quantity, a.holdings[0].cost),
        (dec("100"), Some(dec("1300")))
    );
}

#[test]
fn review_us_tax_year_and_term_follow_the_taxpayers_civil_date() {
    // A New York taxpayer's sale at 20:00 EST on 31 December 2024 is a
    // 2024 sale (01:00 UTC on 1 January 2025 in the code: tax year 2025).
    let a = run(
        Jurisdiction::Us,
        &[
            buy("a", "2024-03-01", "1", "10"),
            sell("a", "2024-12-31T20:00:00-05:00", "1", "20"),
        ],
    );
    assert_eq!(a.rows[0].tax_year, TaxYear::calendar(2024));
    // Bought 21:00 EDT 15 June 2023, sold 10:00 EDT 16 June 2024: the
    // holding period runs from 16 June 2023, so 16 June 2024 is more than a
    // year (26 USC §1222; Rev. Rul. 66-7). In UTC both dates are 16 June:
    // short term in the code.
    let b = run(
        Jurisdiction::Us,
        &[
            buy("a", "2023-06-15T21:00:00-04:00", "1", "10"),
            sell("a", "2024-06-16T10:00:00-04:00", "1", "20"),
        ],
    );
    assert_eq!(b.rows[0].row.term, Some(Term::Long));
}

#[test]
fn uk_2024_25_splits_gains_from_30_october_2024() {
    // Autumn Budget 2024: main rates 18%/24% for disposals on or after 30
    // October 2024; the 2024-25 adjustment (SA108 box 51) is worked out
    // from those gains. Pool 10 at £1,000 (£100 each), no later buys, so
    // every sale comes out of the pool at £100 a unit:
    // 29 Oct 2 for £300 (gain 100), 30 Oct 2 for £150 (loss 50), 10 Jan
    // 2025 2 for £400 (gain 200); 1 May 2025 (2025-26) 1 for £100 (nil).
    let a = run(
        Jurisdiction::Uk,
        &[
            buy("a", "2024-05-01", "10", "1000"),
            sell("a", "2024-10-29T23:30:00Z", "2", "300"),
            sell("a", "2024-10-30", "2", "150"),
            sell("a", "2025-01-10", "2", "400"),
            sell("a", "2025-05-01", "1", "100"),
        ],
    );
    let YearSummary::Uk(s) = &a.years[0] else {
        panic!()
    };
    assert_eq!((s.gains, s.losses), (dec("300"), dec("50")));
    assert_eq!(
        (s.gains_from_2024_10_30, s.losses_from_2024_10_30),
        (Some(dec("200")), Some(dec("50")))
    );
    let YearSummary::Uk(next) = &a.years[1] else {
        panic!()
    };
    assert_eq!(next.gains_from_2024_10_30, None);
}

#[test]
fn the_taxpayers_zone_decides_the_year_and_the_us_switch() {
    // 15:00 UTC on 30 June 2024 is 01:00 on 1 July in Sydney (2024-25) but
    // 23:00 on 30 June in Perth (+08:00, no summer time): 2023-24 there.
    let events = [
        buy("a", "2024-01-10", "1", "10"),
        sell("a", "2024-06-30T15:00:00Z", "1", "20"),
    ];
    let sydney = run(Jurisdiction::Au, &events);
    assert_eq!(sydney.rows[0].tax_year, TaxYear::split(2024));
    let perth = Zone::parse("+08:00").unwrap();
    let taxpayer = Taxpayer {
        zone: perth,
        ..Taxpayer::of(Jurisdiction::Au)
    };
    let a = assess_in(
        Jurisdiction::Au,
        &taxpayer,
        &events,
        None,
        UnlabelledTransfers::default(),
    )
    .unwrap();
    assert_eq!(a.rows[0].tax_year, TaxYear::split(2023));
    // The US per-wallet pools start at local midnight of 1 January 2025:
    // 04:59 UTC is still 31 December in New York (EST, -5), 05:00 is not.
    use crate::basis::books::PoolScope;
    let ny = Zone::NewYork;
    assert!(matches!(
        us::pool_scope(at("2025-01-01T04:59:00Z"), ny),
        PoolScope::Universal
    ));
    assert!(matches!(
        us::pool_scope(at("2025-01-01T05:00:00Z"), ny),
        PoolScope::PerWallet
    ));
}

#[test]
fn every_summary_warns_of_its_years_unlabelled_transfers() {
    // An unlabelled send in 2024 and none in 2025: the 2024 summary lists
    // it (one, outgoing, 1 unit worth 30), the 2025 one lists nothing.
    for j in Jurisdiction::ALL {
        let a = run(
            j,
            &[
                buy("a", "2024-01-10", "3", "30"),
                with(
                    sell("a", "2024-03-01", "1", "30"),
                    "s1",
                    Counterparty::Unlabelled,
                ),
                sell("a", "2025-03-01", "1", "20"),
            ],
        );
        assert_eq!(a.years.len(), 2, "{j}");
        let warned: Vec<_> = a.years[0]
            .clone()
            .unlabelled_mut()
            .iter()
            .map(|t| (t.outgoing, t.count, t.quantity, t.value))
            .collect();
        assert_eq!(warned, vec![(true, 1, dec("1"), dec("30"))], "{j}");
        assert!(a.years[1].clone().unlabelled_mut().is_empty(), "{j}");
    }
}

#[test]
fn a_us_method_applies_from_its_standing_order_fifo_before() {
    // Treas. Reg. §1.1012-1(c), (j): units not identified by the time of
    // the sale are FIFO. HIFO ordered on 1 June 2024: the March sale takes
    // the oldest lot (basis 10, gain 20), the July one the highest (50,
    // gain 10). HIFO for the whole history would have taken 50 in March.
    let events = [
        buy("a", "2023-01-10", "1", "10"),
        buy("a", "2023-02-10", "1", "50"),
        sell("a", "2024-03-01", "1", "30"),
        buy("a", "2024-04-01", "1", "40"),
        sell("a", "2024-07-01", "1", "60"),
    ];
    let taxpayer = Taxpayer {
        choices: Choices {
            method_from: Some(at("2024-06-01")),
            ..Choices::default()
        },
        ..Taxpayer::of(Jurisdiction::Us)
    };
    let gains = |t: &Taxpayer| {
        let a = assess_in(
            Jurisdiction::Us,
            t,
            &events,
            Some(Method::Hifo),
            UnlabelledTransfers::default(),
        )
        .unwrap();
        a.rows
            .iter()
            .map(|r| (r.row.rule, r.row.basis, r.row.gain))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        gains(&taxpayer),
        vec![
            (Rule::Fifo, Some(dec("10")), Some(dec("20"))),
            (Rule::Hifo, Some(dec("50")), Some(dec("10")))
        ]
    );
    assert_eq!(
        gains(&Taxpayer::of(Jurisdiction::Us))[0],
        (Rule::Hifo, Some(dec("50")), Some(dec("-20")))
    );
}

#[test]
fn the_us_2025_allocation_is_the_taxpayers_rule_and_leftovers_are_reported() {
    // Universal pool on 1 January 2025, FIFO: 1 at 10 (bought in a), then
    // 2 at 40 each (bought in b). By wallet name, a takes the first lot
    // (10) and b the two at 40; largest wallet first, b takes 10 + 40 and
    // a a unit at 40. a's 2025 sale for 100 gains 90 or 60.
    let events = [
        buy("a", "2024-01-01", "1", "10"),
        buy("b", "2024-02-01", "2", "80"),
        sell("a", "2025-02-01", "1", "100"),
    ];
    let gain = |allocation| {
        let taxpayer = Taxpayer {
            choices: Choices {
                allocation,
                ..Choices::default()
            },
            ..Taxpayer::of(Jurisdiction::Us)
        };
        let a = assess_in(
            Jurisdiction::Us,
            &taxpayer,
            &events,
            None,
            UnlabelledTransfers::default(),
        )
        .unwrap();
        assert_eq!(a.allocation, Some(allocation));
        assert!(a.unallocated.is_empty());
        a.rows[0].row.gain
    };
    assert_eq!(gain(AllocationRule::WalletsByName), Some(dec("90")));
    assert_eq!(gain(AllocationRule::LargestWalletFirst), Some(dec("60")));

    // b sells 1 it never had (uncovered), then buys 1 at 10 (balance 0);
    // a buys 1 at 20. The pool holds 2, the wallets 1: a takes the oldest
    // lot (10) and the lot at 20 is left, reported as unallocated.
    let a = run(
        Jurisdiction::Us,
        &[
            sell("b", "2024-01-01", "1", "5"),
            buy("b", "2024-02-01", "1", "10"),
            buy("a", "2024-03-01", "1", "20"),
            sell("a", "2025-02-01", "1", "30"),
        ],
    );
    let left: Vec<_> = a
        .unallocated
        .iter()
        .map(|u| (u.quantity, u.basis))
        .collect();
    assert_eq!(left, vec![(dec("1"), Some(dec("20")))]);
    assert_eq!(a.rows.last().unwrap().row.gain, Some(dec("20")));
}

/// SOL staked in 2024 (universal pool) and withdrawn in 2025 (per-wallet
/// pools) is the wallet's own SOL coming back: the lot bought in 2024 keeps
/// its date and basis across the 1 January 2025 allocation (Rev. Proc.
/// 2024-28 §5.02: the wallet receives the units it holds, staked units
/// included, with their basis). First principles: 10 SOL bought for $200,
/// staked, unstaked and sold for $300 gives one row of basis $200, gain
/// $100, acquired 2024-03-01, and nothing left open, under any lot method.
#[test]
fn us_stake_across_2025_keeps_the_staked_lots() {
    for method in [Method::Fifo, Method::Lifo, Method::Hifo, Method::Lofo] {
        let events = [
            buy("a", "2024-03-01", "10", "200"),
            event("a", "2024-06-01", EventKind::StakeLock, "10", "250"),
            event("a", "2025-02-01", EventKind::StakeRelease, "10", "280"),
            sell("a", "2025-03-01", "10", "300"),
        ];
        let a = assess(
            Jurisdiction::Us,
            &events,
            Some(method),
            UnlabelledTransfers::default(),
        )
        .unwrap();
        let got: Vec<_> = a
            .rows
            .iter()
            .map(|r| (r.row.quantity, r.row.acquired, r.row.basis, r.row.gain))
            .collect();
        assert_eq!(
            got,
            vec![(
                dec("10"),
                Some(at("2024-03-01")),
                Some(dec("200")),
                Some(dec("100"))
            )],
            "{method}"
        );
        // Acquired 1 March 2024, sold 1 March 2025: exactly one year, not
        // more than one year, so short term (26 USC §1222(3); IRS Pub. 544:
        // the period starts the day after acquisition and includes the day
        // of sale, so the sale had to be on 2 March 2025 or later).
        assert_eq!(a.rows[0].row.term, Some(Term::Short), "{method}");
        assert!(a.holdings.is_empty(), "{method}: {:?}", a.holdings);
        assert!(a.unallocated.is_empty(), "{method}");
    }
}
