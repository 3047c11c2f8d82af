//! Lending interest, read across a wallet's whole history (issue 22,
//! item 1). The decoder reads one transaction at a time: a lending
//! withdrawal is a `position_withdraw` of everything the wallet received
//! of that asset, because what went in is in earlier transactions. Across
//! the history the rule is narrower: per lending position (the obligation,
//! margin account or vault position) and mint, what comes out beyond what
//! went in is the yield the position earned, income when withdrawn. This
//! module splits such a withdrawal into the `position_withdraw` of what
//! was left in the position and an `interest` leg of the excess, instead
//! of letting the replay open a lot at fair value for the excess through
//! the withdrawal (basis::engine `release_excess`), which would count no
//! income at all.
//!
//! Sources and peers: interest from lending crypto is ordinary income at
//! fair market value when received (US: IRS Notice 2014-21 treats crypto
//! as property, income in property at its fair market value; Koinly,
//! https://koinly.io/blog/crypto-interest-tax/ and
//! https://koinly.io/nl/blog/defi-loaning-and-borrowing-how-is-it-taxed/;
//! CoinTracker reads illiquid lending deposits and withdrawals as sends
//! and receives of the same asset, with the yield as income,
//! https://support.cointracker.io/hc/en-us/articles/20897621733521). Where
//! jurisdictions differ: HMRC (Cryptoassets Manual CRYPTO61000s, DeFi
//! lending and staking) says a lender's return may be revenue or capital
//! depending on its nature, and Germany's BMF letter of 10 May 2022 (its
//! lending section) treats lending returns as other income (§ 22 Nr. 3
//! EStG); this reading gives the amount and date, each jurisdiction its tax.
//!
//! Only lending positions (the registry's `Kind::Lending` programs, named
//! as the legs' router) are read: an order escrow never pays out more
//! than went in. A position none of whose deposits are in the history
//! (a scan that starts after it opened) is left alone: its withdrawals
//! keep today's reading rather than all counting as interest. Receipt
//! tokens whose value grows (Earn shares, LSTs) are holdings, swapped in
//! and out, and never come here.

use std::collections::BTreeMap;

use super::{
    model::OperationType,
    protocols::{self, Kind},
};

/// What the interest rule needs of one stored leg, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionLeg<'a> {
    pub operation: OperationType,
    pub position: Option<&'a str>,
    pub router: Option<&'a str>,
    pub mint: &'a str,
    /// Signed atomic units, as stored.
    pub amount: i128,
}

/// A withdrawal to split: the leg at `index` becomes a `position_withdraw`
/// of `principal`, and an `interest` leg of `interest` is added beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub index: usize,
    pub principal: i128,
    pub interest: i128,
}

fn is_lending(router: Option<&str>) -> bool {
    router
        .and_then(protocols::by_name)
        .is_some_and(|p| p.kind == Kind::Lending)
}

/// The withdrawals of `legs` (one wallet's history, oldest first) that
/// took more out of a lending position than the history put in.
pub fn split(legs: &[PositionLeg<'_>]) -> Vec<Split> {
    // Per (position, mint): what the position holds, by the history.
    let mut held: BTreeMap<(&str, &str), i128> = BTreeMap::new();
    let mut out = Vec::new();
    for (index, leg) in legs.iter().enumerate() {
        let Some(position) = leg.position else {
            continue;
        };
        if !is_lending(leg.router) {
            continue;
        }
        let key = (position, leg.mint);
        match leg.operation {
            OperationType::PositionDeposit if leg.amount < 0 => {
                *held.entry(key).or_insert(0) += -leg.amount;
            }
            OperationType::PositionWithdraw if leg.amount > 0 => {
                let Some(balance) = held.get_mut(&key) else {
                    continue;
                };
                if leg.amount > *balance {
                    out.push(Split {
                        index,
                        principal: *balance,
                        interest: leg.amount - *balance,
                    });
                    *balance = 0;
                } else {
                    *balance -= leg.amount;
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KAMINO: Option<&str> = Some("Kamino Lend");
    const OBLIGATION: Option<&str> = Some("ob1igation");

    fn leg(operation: OperationType, amount: i128) -> PositionLeg<'static> {
        PositionLeg {
            operation,
            position: OBLIGATION,
            router: KAMINO,
            mint: "usdc",
            amount,
        }
    }

    #[test]
    fn what_comes_out_beyond_what_went_in_is_interest() {
        // 1,000 USDC in twice, 2,050 out: 2,000 principal, 50 interest.
        let legs = [
            leg(OperationType::PositionDeposit, -1_000_000_000),
            leg(OperationType::PositionDeposit, -1_000_000_000),
            leg(OperationType::PositionWithdraw, 2_050_000_000),
        ];
        assert_eq!(
            split(&legs),
            [Split {
                index: 2,
                principal: 2_000_000_000,
                interest: 50_000_000
            }]
        );
    }

    #[test]
    fn partial_withdrawals_count_interest_only_once_the_principal_is_out() {
        // 1,000 in; 600 out (principal); 410 out: 400 principal, 10 interest.
        let legs = [
            leg(OperationType::PositionDeposit, -1_000),
            leg(OperationType::PositionWithdraw, 600),
            leg(OperationType::PositionWithdraw, 410),
        ];
        assert_eq!(
            split(&legs),
            [Split {
                index: 2,
                principal: 400,
                interest: 10
            }]
        );
    }

    #[test]
    fn once_split_the_history_splits_no_more() {
        // The stored result of the first test: the rule is idempotent.
        let legs = [
            leg(OperationType::PositionDeposit, -1_000),
            leg(OperationType::PositionWithdraw, 1_000),
            leg(OperationType::Interest, 25),
        ];
        assert!(split(&legs).is_empty());
    }

    #[test]
    fn positions_without_a_deposit_in_history_and_order_escrows_are_left_alone() {
        let mut unseen = leg(OperationType::PositionWithdraw, 500);
        unseen.position = Some("opened-before-the-history");
        let mut order = [
            leg(OperationType::PositionDeposit, -100),
            leg(OperationType::PositionWithdraw, 150),
        ];
        for l in &mut order {
            l.router = Some("Jupiter Limit Order v2");
        }
        assert!(split(&[unseen]).is_empty());
        assert!(split(&order).is_empty());
        // Other mints and positions keep their own balances.
        let mut other_mint = leg(OperationType::PositionWithdraw, 100);
        other_mint.mint = "sol";
        assert!(split(&[leg(OperationType::PositionDeposit, -100), other_mint]).is_empty());
    }
}
