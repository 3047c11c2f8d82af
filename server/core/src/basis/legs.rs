//! From ledger legs to cost-basis events: where the tax treatment of each
//! operation type lives, apart from the replay so both can be tested alone.
//!
//! A transaction's legs are read together because its fee and a swap's
//! value belong to the whole transaction: a swap's sent legs are disposed
//! of at the fair value of what was received, and the network fee both
//! disposes of SOL and is a cost of the transaction's first disposal (or,
//! when it has none, its first acquisition). docs/cost-basis.md gives the
//! sources.

use std::collections::HashMap;

use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};

use super::{Event, EventKind, engine::USD_DP};
use crate::ledger::model::{OperationType, SOL};
use crate::ledger::tx::NATIVE_MINT;

/// One ledger leg with its USD value, as [`events_from_legs`] reads it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegInput {
    pub signature: String,
    /// Position of the leg within its transaction.
    pub index: u32,
    /// Unix seconds.
    pub block_time: i64,
    pub operation_type: OperationType,
    /// A mint, or `sol`.
    pub mint: String,
    /// Signed atomic units: positive into the wallet, negative out.
    pub amount: i128,
    pub decimals: u8,
    /// Absolute USD value of the leg at block time; `None` when unpriced.
    pub usd_value: Option<Decimal>,
    /// The position the leg moves into, out of or from within
    /// (`ledger::Leg::position`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
}

/// Turn legs into events for [`super::replay`].
///
/// Pass the legs oldest first (slot order): transactions keep their input
/// order, which is what breaks ties between equal `block_time`s; within a
/// transaction legs go by `index`. Events are numbered `seq` 0, 1, 2… in
/// the order returned, so `events[d.disposal_seq as usize]` is a realized
/// row's disposal.
///
/// - `transfer_in`, `airdrop`: acquisition at the leg's fair value;
///   `transfer_out`: disposal at fair value (the direction is the sign of
///   `amount`, whatever the type says).
/// - `swap`: every sent leg is a disposal at the fair value of what was
///   received (split across several sent legs by their own values), and
///   every received leg an acquisition at its fair value; a received side
///   that is unpriced falls back to the sent side's value.
/// - `network_fee`: a disposal of the fee's SOL at its fair value, and that
///   value is also a cost of the transaction: it reduces the proceeds of
///   the first disposal, or, with none, adds to the basis of the first
///   acquisition; with neither it is only the SOL disposal.
/// - `rent_deposit` / `rent_refund`: [`EventKind::RentLock`] /
///   [`EventKind::RentRelease`], never disposals.
/// - `stake_deposit` / `stake_withdraw`: [`EventKind::StakeLock`] /
///   [`EventKind::StakeRelease`]: the SOL stays the wallet's, its lots
///   keep their dates and bases.
/// - `staking_reward`, `mev_reward`: [`EventKind::Income`] at the leg's
///   fair value (US Rev. Rul. 2023-14); a staking reward is then staked
///   ([`EventKind::StakeLock`]), since it lands in the stake account.
/// - `airdrop_spam`: left out when `exclude_spam`, else as `airdrop`.
/// - `position_deposit` / `position_withdraw`: [`EventKind::PositionLock`] /
///   [`EventKind::PositionRelease`]: moving an asset into an account a
///   program holds for the wallet and back is not a disposal (the wallet
///   keeps beneficial ownership), so lots keep their dates and bases.
///   A swap leg sent from a position (a limit order's or DCA's fill) is a
///   disposal like any swap, plus [`EventKind::PositionSpend`].
/// - `interest`: income, an acquisition at fair value when withdrawn.
/// - `borrow` / `repay`: no event (a loan is neither income nor a
///   disposal; repaying it returns it).
/// - `platform_fee`, `tip`: as `network_fee`, a disposal of what was paid
///   and a cost of the transaction.
///
/// A leg with a zero amount, or one whose amount cannot be a [`Decimal`]
/// (|amount| ≥ 2^96 or more than 28 decimals; no real token), is skipped.
pub fn events_from_legs(legs: &[LegInput], exclude_spam: bool) -> Vec<Event> {
    events_from_legs_traced(legs, exclude_spam)
        .into_iter()
        .map(|(event, _)| event)
        .collect()
}

/// [`events_from_legs`], each event with the index in `legs` of the leg it
/// came from: the taxpayer's books ([`super::books`]) need a transfer's
/// signature and counterparty, which the event does not carry.
pub fn events_from_legs_traced(legs: &[LegInput], exclude_spam: bool) -> Vec<(Event, usize)> {
    let mut position: HashMap<&str, usize> = HashMap::new();
    let mut transactions: Vec<Vec<(usize, &LegInput)>> = Vec::new();
    for (i, leg) in legs.iter().enumerate() {
        let at = *position.entry(leg.signature.as_str()).or_insert_with(|| {
            transactions.push(Vec::new());
            transactions.len() - 1
        });
        transactions[at].push((i, leg));
    }
    let mut events = Vec::with_capacity(legs.len());
    let mut origins = Vec::with_capacity(legs.len());
    for mut tx in transactions {
        tx.sort_by_key(|(_, l)| l.index);
        let (at, tx): (Vec<usize>, Vec<&LegInput>) = tx.into_iter().unzip();
        let first = events.len();
        transaction_events(&tx, exclude_spam, &mut events, &mut origins);
        debug_assert_eq!(origins.len(), events.len());
        for origin in &mut origins[first..] {
            *origin = at[*origin];
        }
    }
    for (seq, event) in events.iter_mut().enumerate() {
        event.seq = seq as u64;
    }
    events.into_iter().zip(origins).collect()
}

/// A transaction's events, appended to `out` in leg order.
/// `origins` gets, for each event pushed, the position in `tx` of its leg.
fn transaction_events(
    tx: &[&LegInput],
    exclude_spam: bool,
    out: &mut Vec<Event>,
    origins: &mut Vec<usize>,
) {
    let swap_values = swap_values(tx);
    let first = out.len();
    let mut fee = Decimal::ZERO;
    let mut fee_events = Vec::new();
    for (at, (leg, swap_value)) in tx.iter().zip(swap_values).enumerate() {
        let Some(quantity) = quantity(leg.amount, leg.decimals) else {
            continue;
        };
        let incoming = leg.amount > 0;
        let own_value = leg.usd_value.map(|v| v.abs());
        let (kind, usd_value) = match leg.operation_type {
            OperationType::AirdropSpam if exclude_spam => continue,
            OperationType::TransferIn
            | OperationType::TransferOut
            | OperationType::Airdrop
            | OperationType::AirdropSpam => (acquire_or_dispose(incoming), own_value),
            OperationType::StakingReward | OperationType::MevReward | OperationType::Interest
                if incoming =>
            {
                (EventKind::Income, own_value)
            }
            OperationType::StakingReward | OperationType::MevReward | OperationType::Interest => {
                (EventKind::Dispose, own_value)
            }
            OperationType::Swap => (acquire_or_dispose(incoming), swap_value),
            OperationType::Borrow | OperationType::Repay => continue,
            // A position's receipt (the LP token or position NFT a pool
            // mints for a deposit, handed back on withdrawal) is the
            // position's key, not a holding: its lots are the pooled
            // tokens' (ledger::protocols::liquidity).
            OperationType::PositionDeposit if incoming => continue,
            OperationType::PositionWithdraw if !incoming => continue,
            OperationType::PositionDeposit | OperationType::PositionWithdraw => {
                let kind = if incoming {
                    EventKind::PositionRelease
                } else {
                    EventKind::PositionLock
                };
                (kind, own_value)
            }
            OperationType::NetworkFee | OperationType::PlatformFee | OperationType::Tip => {
                fee += own_value.unwrap_or_default();
                fee_events.push(out.len());
                (acquire_or_dispose(incoming), own_value)
            }
            OperationType::RentDeposit | OperationType::RentRefund => {
                let kind = if incoming {
                    EventKind::RentRelease
                } else {
                    EventKind::RentLock
                };
                (kind, own_value)
            }
            OperationType::StakeDeposit | OperationType::StakeWithdraw => {
                let kind = if incoming {
                    EventKind::StakeRelease
                } else {
                    EventKind::StakeLock
                };
                (kind, own_value)
            }
        };
        let spent_from_position = leg.position.is_some() && kind == EventKind::Dispose;
        origins.push(at);
        out.push(Event {
            time: leg.block_time,
            seq: 0,
            asset: cost_basis_asset(&leg.mint),
            kind,
            quantity,
            usd_value,
            fee_usd: Decimal::ZERO,
        });
        // A reward lands in the stake account: income that is staked from
        // the start, so a later withdrawal of it is no new acquisition.
        let staked_reward =
            kind == EventKind::Income && leg.operation_type == OperationType::StakingReward;
        let follow = if spent_from_position {
            Some(EventKind::PositionSpend)
        } else if staked_reward {
            Some(EventKind::StakeLock)
        } else {
            None
        };
        if let Some(follow) = follow {
            origins.push(at);
            out.push(Event {
                time: leg.block_time,
                seq: 0,
                asset: cost_basis_asset(&leg.mint),
                kind: follow,
                quantity,
                usd_value: None,
                fee_usd: Decimal::ZERO,
            });
        }
    }
    if fee.is_zero() {
        return;
    }
    let others = || (first..out.len()).filter(|i| !fee_events.contains(i));
    let bearer = others()
        .find(|&i| out[i].kind == EventKind::Dispose)
        .or_else(|| others().find(|&i| out[i].kind == EventKind::Acquire));
    if let Some(i) = bearer {
        out[i].fee_usd += fee;
    }
}

/// The asset a leg's lots belong to: wrapped SOL is native SOL held in a
/// token account, one asset for cost basis (SOL and wSOL are redeemable
/// one for one by the token program's `SyncNative` and `CloseAccount`,
/// https://spl.solana.com/token#wrapping-sol), so its lots are SOL's and
/// wrapping or unwrapping moves none (the decoder reads it as a
/// `position_deposit`/`position_withdraw` pair, docs/ledger.md).
fn cost_basis_asset(mint: &str) -> String {
    if mint == NATIVE_MINT {
        SOL.to_owned()
    } else {
        mint.to_owned()
    }
}

fn acquire_or_dispose(incoming: bool) -> EventKind {
    if incoming {
        EventKind::Acquire
    } else {
        EventKind::Dispose
    }
}

/// Token units from signed atomic units: exact, or `None` when zero or not
/// representable.
fn quantity(amount: i128, decimals: u8) -> Option<Decimal> {
    let atomic = amount.checked_abs().filter(|a| *a != 0)?;
    Decimal::try_from_i128_with_scale(atomic, u32::from(decimals)).ok()
}

/// The USD value of each leg of `tx` that is a swap leg (`None` elsewhere,
/// or when unknown): sent legs at what was received, received legs at
/// their own value, or at what was sent when one unpriced leg came in.
fn swap_values(tx: &[&LegInput]) -> Vec<Option<Decimal>> {
    let is_swap = |l: &&&LegInput| l.operation_type == OperationType::Swap && l.amount != 0;
    let own = |l: &&LegInput| l.usd_value.map(|v| v.abs());
    let sent: Vec<&&LegInput> = tx.iter().filter(is_swap).filter(|l| l.amount < 0).collect();
    let received: Vec<&&LegInput> = tx.iter().filter(is_swap).filter(|l| l.amount > 0).collect();
    let total = |side: &[&&LegInput]| -> Option<Decimal> {
        if side.is_empty() {
            None
        } else {
            side.iter().map(|l| own(l)).sum()
        }
    };
    let sent_total = total(&sent);
    let value = total(&received).or(sent_total);

    let sent_values: Vec<Option<Decimal>> = match (sent.len(), value, sent_total) {
        (1, value, _) => vec![value],
        (_, Some(value), Some(weight)) if weight > Decimal::ZERO => {
            let weights: Vec<Decimal> = sent.iter().filter_map(|l| own(l)).collect();
            allocate(value, &weights, weight)
                .into_iter()
                .map(Some)
                .collect()
        }
        _ => sent.iter().map(|l| own(l)).collect(),
    };
    let mut sent_values = sent_values.into_iter();
    tx.iter()
        .map(|leg| {
            if leg.operation_type != OperationType::Swap || leg.amount == 0 {
                None
            } else if leg.amount < 0 {
                sent_values.next().flatten()
            } else if received.len() == 1 {
                value
            } else {
                own(leg)
            }
        })
        .collect()
}

/// `total` split in proportion to `weights` (which sum to `sum`), rounded,
/// the last part taking the remainder.
fn allocate(total: Decimal, weights: &[Decimal], sum: Decimal) -> Vec<Decimal> {
    let mut left = total;
    let mut parts = Vec::with_capacity(weights.len());
    for (i, w) in weights.iter().enumerate() {
        let part = if i + 1 == weights.len() {
            left
        } else {
            (total * w.checked_div(sum).unwrap_or_default())
                .round_dp_with_strategy(USD_DP, RoundingStrategy::MidpointAwayFromZero)
        };
        left -= part;
        parts.push(part);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basis::{Method, replay};
    use crate::ledger::model::SOL;

    macro_rules! dec {
        ($l:literal) => {
            <Decimal as std::str::FromStr>::from_str(stringify!($l)).unwrap()
        };
    }

    const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    const BONK: &str = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";

    fn leg(sig: &str, index: u32, op: OperationType, mint: &str, amount: i128) -> LegInput {
        LegInput {
            signature: sig.into(),
            index,
            block_time: 1_700_000_000,
            operation_type: op,
            mint: mint.into(),
            amount,
            decimals: if mint == SOL { 9 } else { 6 },
            usd_value: None,
            position: None,
        }
    }

    #[test]
    fn traced_events_name_the_leg_each_came_from_across_interleaved_transactions() {
        // Legs of two transactions, out of index order within the first;
        // a staking reward gives two events (income, then staked), a zero
        // leg none.
        let legs = vec![
            leg("t1", 1, OperationType::NetworkFee, SOL, -5000),
            leg("t2", 0, OperationType::StakingReward, SOL, 7),
            leg("t1", 0, OperationType::TransferOut, SOL, -4_000_000_000),
            leg("t2", 1, OperationType::TransferIn, "M", 0),
        ];
        let traced = events_from_legs_traced(&legs, false);
        let origins: Vec<usize> = traced.iter().map(|(_, at)| *at).collect();
        // t1 first (first seen), by index: the transfer (leg 2), the fee
        // (leg 0); then t2's reward (leg 1) twice.
        assert_eq!(origins, vec![2, 0, 1, 1]);
        let kinds: Vec<EventKind> = traced.iter().map(|(e, _)| e.kind).collect();
        assert_eq!(
            kinds,
            vec![
                EventKind::Dispose,
                EventKind::Dispose,
                EventKind::Income,
                EventKind::StakeLock
            ]
        );
        let plain = events_from_legs(&legs, false);
        let events: Vec<Event> = traced.into_iter().map(|(e, _)| e).collect();
        assert_eq!(plain, events, "the same events as untraced");
    }

    fn priced(mut l: LegInput, usd: Decimal) -> LegInput {
        l.usd_value = Some(usd);
        l
    }

    fn summary(events: &[Event]) -> Vec<(EventKind, &str, Decimal, Option<Decimal>, Decimal)> {
        events
            .iter()
            .map(|e| (e.kind, e.asset.as_str(), e.quantity, e.usd_value, e.fee_usd))
            .collect()
    }

    #[test]
    fn transfer_in_and_airdrop_are_acquisitions_at_fair_value() {
        let legs = [
            priced(
                leg("a", 0, OperationType::TransferIn, USDC, 5_000_000),
                dec!(5),
            ),
            priced(
                leg("b", 0, OperationType::Airdrop, BONK, 1_000_000),
                dec!(0.3),
            ),
        ];
        let events = events_from_legs(&legs, true);
        assert_eq!(
            summary(&events),
            vec![
                (EventKind::Acquire, USDC, dec!(5), Some(dec!(5)), dec!(0)),
                (EventKind::Acquire, BONK, dec!(1), Some(dec!(0.3)), dec!(0)),
            ]
        );
    }

    #[test]
    fn transfer_out_is_a_disposal_at_fair_value() {
        let legs = [priced(
            leg("a", 0, OperationType::TransferOut, USDC, -2_500_000),
            dec!(-2.5),
        )];
        let events = events_from_legs(&legs, true);
        assert_eq!(
            summary(&events),
            vec![(
                EventKind::Dispose,
                USDC,
                dec!(2.5),
                Some(dec!(2.5)),
                dec!(0)
            )]
        );
    }

    #[test]
    fn atomic_amounts_become_exact_token_quantities() {
        let legs = [leg("a", 0, OperationType::TransferIn, SOL, 1)];
        assert_eq!(events_from_legs(&legs, true)[0].quantity, dec!(0.000000001));
        let zero = [leg("a", 0, OperationType::TransferIn, SOL, 0)];
        assert!(events_from_legs(&zero, true).is_empty());
    }

    #[test]
    fn a_swap_disposes_at_the_value_received_and_acquires_at_that_value() {
        let legs = [
            priced(
                leg("s", 1, OperationType::Swap, SOL, -1_000_000_000),
                dec!(150),
            ),
            priced(
                leg("s", 2, OperationType::Swap, USDC, 149_000_000),
                dec!(149),
            ),
        ];
        let events = events_from_legs(&legs, true);
        assert_eq!(
            summary(&events),
            vec![
                (EventKind::Dispose, SOL, dec!(1), Some(dec!(149)), dec!(0)),
                (
                    EventKind::Acquire,
                    USDC,
                    dec!(149),
                    Some(dec!(149)),
                    dec!(0)
                ),
            ]
        );
    }

    #[test]
    fn an_unpriced_received_side_falls_back_to_the_sent_value() {
        let legs = [
            priced(
                leg("s", 0, OperationType::Swap, USDC, -10_000_000),
                dec!(10),
            ),
            leg("s", 1, OperationType::Swap, BONK, 500_000_000),
        ];
        let events = events_from_legs(&legs, true);
        assert_eq!(events[0].usd_value, Some(dec!(10)));
        assert_eq!(events[1].usd_value, Some(dec!(10)));
    }

    #[test]
    fn several_sent_legs_share_the_value_received_by_their_own_values() {
        let legs = [
            priced(leg("s", 0, OperationType::Swap, USDC, -1_000_000), dec!(1)),
            priced(leg("s", 1, OperationType::Swap, BONK, -2_000_000), dec!(2)),
            priced(leg("s", 2, OperationType::Swap, SOL, 20_000_000), dec!(3.3)),
        ];
        let values: Vec<_> = events_from_legs(&legs, true)
            .iter()
            .map(|e| e.usd_value)
            .collect();
        assert_eq!(
            values,
            vec![Some(dec!(1.1)), Some(dec!(2.2)), Some(dec!(3.3))]
        );
    }

    #[test]
    fn a_network_fee_is_a_sol_disposal_and_a_cost_of_the_transactions_disposal() {
        let legs = [
            priced(
                leg("s", 0, OperationType::NetworkFee, SOL, -5_000),
                dec!(0.00075),
            ),
            priced(
                leg("s", 1, OperationType::Swap, SOL, -1_000_000_000),
                dec!(150),
            ),
            priced(
                leg("s", 2, OperationType::Swap, USDC, 150_000_000),
                dec!(150),
            ),
        ];
        let events = events_from_legs(&legs, true);
        assert_eq!(
            summary(&events),
            vec![
                (
                    EventKind::Dispose,
                    SOL,
                    dec!(0.000005),
                    Some(dec!(0.00075)),
                    dec!(0)
                ),
                (
                    EventKind::Dispose,
                    SOL,
                    dec!(1),
                    Some(dec!(150)),
                    dec!(0.00075)
                ),
                (
                    EventKind::Acquire,
                    USDC,
                    dec!(150),
                    Some(dec!(150)),
                    dec!(0)
                ),
            ]
        );
    }

    #[test]
    fn a_network_fee_without_a_disposal_goes_into_the_acquisitions_basis() {
        let legs = [
            priced(
                leg("c", 0, OperationType::NetworkFee, SOL, -5_000),
                dec!(0.001),
            ),
            priced(
                leg("c", 1, OperationType::TransferIn, USDC, 7_000_000),
                dec!(7),
            ),
        ];
        let events = events_from_legs(&legs, true);
        assert_eq!(events[1].fee_usd, dec!(0.001));
        assert_eq!(events[0].fee_usd, dec!(0));
    }

    #[test]
    fn a_fee_only_transaction_is_only_the_sol_disposal() {
        let legs = [priced(
            leg("f", 0, OperationType::NetworkFee, SOL, -5_000),
            dec!(0.001),
        )];
        let events = events_from_legs(&legs, true);
        assert_eq!(
            summary(&events),
            vec![(
                EventKind::Dispose,
                SOL,
                dec!(0.000005),
                Some(dec!(0.001)),
                dec!(0)
            )]
        );
    }

    #[test]
    fn rent_deposits_and_refunds_lock_and_release_sol_without_a_disposal() {
        let legs = [
            leg("r", 0, OperationType::RentDeposit, SOL, -2_039_280),
            leg("q", 0, OperationType::RentRefund, SOL, 2_039_280),
        ];
        let events = events_from_legs(&legs, true);
        let kinds: Vec<_> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, vec![EventKind::RentLock, EventKind::RentRelease]);

        let mut with_lot = vec![priced(
            leg("b", 0, OperationType::TransferIn, SOL, 10_000_000),
            dec!(1),
        )];
        with_lot.push(legs[0].clone());
        let r = replay(&events_from_legs(&with_lot, true), Method::Fifo);
        assert!(r.disposals.is_empty());
        assert_eq!(r.rent_locked_lamports(), 2_039_280);
    }

    /// Staking moves no lot: 10 SOL bought on day 0 at $100, staked on
    /// day 10, two rewards of 0.1 SOL on days 20 and 30 at $110 and $120
    /// (income $11 and $12), all 10.2 SOL withdrawn on day 40, then 10 SOL
    /// sold on day 400 for $2,000. Nothing is realized until the sale; the
    /// sale consumes the day-0 lot first (FIFO), so its basis is $1,000, its
    /// gain $1,000 and it is long term; the rewards stay open at $11 and
    /// $12 with their own dates.
    #[test]
    fn staking_keeps_the_lots_and_their_dates_and_rewards_are_income() {
        const DAY: i64 = 86_400;
        let at = |mut l: LegInput, day: i64| {
            l.block_time = 1_700_000_000 + day * DAY;
            l
        };
        let legs = [
            at(
                priced(
                    leg("buy", 0, OperationType::TransferIn, SOL, 10_000_000_000),
                    dec!(1000),
                ),
                0,
            ),
            at(
                priced(
                    leg(
                        "stake",
                        0,
                        OperationType::StakeDeposit,
                        SOL,
                        -10_000_000_000,
                    ),
                    dec!(-1050),
                ),
                10,
            ),
            at(
                priced(
                    leg("r1", 0, OperationType::StakingReward, SOL, 100_000_000),
                    dec!(11),
                ),
                20,
            ),
            at(
                priced(
                    leg("r2", 0, OperationType::StakingReward, SOL, 100_000_000),
                    dec!(12),
                ),
                30,
            ),
            at(
                priced(
                    leg(
                        "unstake",
                        0,
                        OperationType::StakeWithdraw,
                        SOL,
                        10_200_000_000,
                    ),
                    dec!(1300),
                ),
                40,
            ),
        ];
        let events = events_from_legs(&legs, true);
        let kinds: Vec<_> = events.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            vec![
                EventKind::Acquire,
                EventKind::StakeLock,
                EventKind::Income,
                EventKind::StakeLock,
                EventKind::Income,
                EventKind::StakeLock,
                EventKind::StakeRelease,
            ]
        );

        // While staked: nothing realized, 10.2 SOL staked, income $23.
        let staked = replay(&events[..6], Method::Fifo);
        assert!(staked.disposals.is_empty());
        assert_eq!(staked.staked_lamports(), 10_200_000_000);
        let sol = &staked.assets[0];
        assert_eq!(sol.income_quantity, dec!(0.2));
        assert_eq!(sol.income_usd, dec!(23));
        assert_eq!(sol.open_quantity, dec!(10.2));

        // Withdrawn: still nothing realized, no new lot, nothing staked.
        let r = replay(&events, Method::Fifo);
        assert!(r.disposals.is_empty());
        assert_eq!(r.staked_lamports(), 0);
        let lots: Vec<_> = r
            .open_lots
            .iter()
            .map(|l| (l.quantity, l.basis, l.acquired))
            .collect();
        assert_eq!(
            lots,
            vec![
                (dec!(10), Some(dec!(1000)), 1_700_000_000),
                (dec!(0.1), Some(dec!(11)), 1_700_000_000 + 20 * DAY),
                (dec!(0.1), Some(dec!(12)), 1_700_000_000 + 30 * DAY),
            ]
        );
        assert_eq!(r.assets[0].acquired_quantity, dec!(10.2));

        let mut with_sale = legs.to_vec();
        with_sale.push(at(
            priced(
                leg("sell", 0, OperationType::TransferOut, SOL, -10_000_000_000),
                dec!(-2000),
            ),
            400,
        ));
        let r = replay(&events_from_legs(&with_sale, true), Method::Fifo);
        assert_eq!(r.disposals.len(), 1);
        let sale = &r.disposals[0];
        assert_eq!(sale.acquired, Some(1_700_000_000));
        assert_eq!(sale.basis, Some(dec!(1000)));
        assert_eq!(sale.gain, Some(dec!(1000)));
        assert_eq!(sale.term, Some(crate::basis::Term::Long));
    }

    /// A withdrawal of stake deposited before the history starts: what the
    /// replay never saw staked opens a lot at fair value, like a rent
    /// refund beyond what was locked. 2 SOL staked in view, 5 SOL come back
    /// worth $500: 3 SOL open a lot at 3/5 of $500 = $300.
    #[test]
    fn a_withdrawal_beyond_what_was_staked_opens_a_lot_for_the_excess() {
        let legs = [
            priced(
                leg("in", 0, OperationType::TransferIn, SOL, 2_000_000_000),
                dec!(200),
            ),
            leg("stake", 0, OperationType::StakeDeposit, SOL, -2_000_000_000),
            priced(
                leg(
                    "unstake",
                    0,
                    OperationType::StakeWithdraw,
                    SOL,
                    5_000_000_000,
                ),
                dec!(500),
            ),
        ];
        let r = replay(&events_from_legs(&legs, true), Method::Fifo);
        assert!(r.disposals.is_empty());
        assert_eq!(r.staked_lamports(), 0);
        let lots: Vec<_> = r.open_lots.iter().map(|l| (l.quantity, l.basis)).collect();
        assert_eq!(
            lots,
            vec![(dec!(2), Some(dec!(200))), (dec!(3), Some(dec!(300)))]
        );
    }

    #[test]
    fn a_mev_tip_is_income_and_stays_liquid() {
        let legs = [priced(
            leg("tip", 0, OperationType::MevReward, SOL, 1_234_567),
            dec!(0.25),
        )];
        let events = events_from_legs(&legs, true);
        assert_eq!(
            summary(&events),
            vec![(
                EventKind::Income,
                SOL,
                dec!(0.001234567),
                Some(dec!(0.25)),
                dec!(0)
            )]
        );
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.staked_lamports(), 0);
        assert_eq!(r.assets[0].income_usd, dec!(0.25));
    }

    #[test]
    fn a_limit_order_keeps_its_lots_until_each_fill_disposes_of_them() {
        // 1,000 USDC bought for $1,000, then placed in a limit order: no
        // disposal. A fill takes 400 USDC from the escrow for BONK worth
        // $500: a gain of 500 - 400 = $100 on the escrowed lots. The cancel
        // returns the other 600 USDC: no event beyond the unlock.
        let mut buy = priced(
            leg("a", 0, OperationType::TransferIn, USDC, 1_000_000_000),
            dec!(1000),
        );
        buy.block_time -= 86_400;
        let mut deposit = leg("o", 0, OperationType::PositionDeposit, USDC, -1_000_000_000);
        deposit.position = Some("order".into());
        let mut sent = priced(
            leg("f", 0, OperationType::Swap, USDC, -400_000_000),
            dec!(400),
        );
        sent.position = Some("order".into());
        let got = priced(leg("f", 1, OperationType::Swap, BONK, 5_000_000), dec!(500));
        let mut back = leg("c", 0, OperationType::PositionWithdraw, USDC, 600_000_000);
        back.position = Some("order".into());

        let events = events_from_legs(&[buy.clone(), deposit.clone()], true);
        let r = replay(&events, Method::Fifo);
        assert!(r.disposals.is_empty(), "a deposit is not a disposal");
        let usdc = r.assets.iter().find(|a| a.asset == USDC).unwrap();
        assert_eq!(
            (usdc.open_quantity, usdc.in_positions),
            (dec!(1000), dec!(1000))
        );

        let events = events_from_legs(&[buy, deposit, sent, got, back], true);
        let r = replay(&events, Method::Fifo);
        assert_eq!(r.disposals.len(), 1);
        assert_eq!(r.disposals[0].gain, Some(dec!(100)));
        let usdc = r.assets.iter().find(|a| a.asset == USDC).unwrap();
        assert_eq!(
            (usdc.open_quantity, usdc.in_positions),
            (dec!(600), dec!(0))
        );
    }

    #[test]
    fn interest_is_income_loans_move_nothing_and_platform_fees_are_costs() {
        let interest = priced(
            leg("i", 0, OperationType::Interest, USDC, 5_000_000),
            dec!(5),
        );
        let borrow = leg("b", 0, OperationType::Borrow, USDC, 100_000_000);
        let repay = leg("r", 0, OperationType::Repay, USDC, -100_000_000);
        let events = events_from_legs(&[interest, borrow, repay], true);
        assert_eq!(
            summary(&events),
            // Interest is income: a lot at fair value, counted as income.
            vec![(EventKind::Income, USDC, dec!(5), Some(dec!(5)), dec!(0))]
        );

        let legs = [
            priced(
                leg("s", 0, OperationType::PlatformFee, USDC, -1_000_000),
                dec!(1),
            ),
            priced(
                leg("s", 1, OperationType::Swap, USDC, -99_000_000),
                dec!(99),
            ),
            priced(leg("s", 2, OperationType::Swap, BONK, 1_000_000), dec!(99)),
        ];
        let events = events_from_legs(&legs, true);
        assert_eq!(events[0].kind, EventKind::Dispose);
        assert_eq!(
            events[1].fee_usd,
            dec!(1),
            "the fee lowers the swap's proceeds"
        );
    }

    #[test]
    fn airdrop_spam_is_left_out_when_exclude_spam_is_true() {
        let legs = [leg("x", 0, OperationType::AirdropSpam, BONK, 1_000)];
        assert!(events_from_legs(&legs, true).is_empty());
        let kept = events_from_legs(&legs, false);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].kind, EventKind::Acquire);
    }

    #[test]
    fn seq_is_the_position_and_legs_follow_their_index_within_a_transaction() {
        let legs = [
            leg("a", 1, OperationType::Swap, USDC, 1),
            leg("b", 0, OperationType::TransferIn, SOL, 1),
            leg("a", 0, OperationType::Swap, SOL, -1),
        ];
        let events = events_from_legs(&legs, true);
        let order: Vec<_> = events.iter().map(|e| (e.seq, e.asset.as_str())).collect();
        assert_eq!(order, vec![(0, SOL), (1, USDC), (2, SOL)]);
    }

    #[test]
    fn a_swap_realizes_the_gain_on_what_was_sent() {
        let mut buy = priced(
            leg("a", 0, OperationType::TransferIn, SOL, 2_000_000_000),
            dec!(200),
        );
        buy.block_time -= 86_400;
        let legs = [
            buy,
            priced(
                leg("s", 0, OperationType::Swap, SOL, -1_000_000_000),
                dec!(150),
            ),
            priced(
                leg("s", 1, OperationType::Swap, USDC, 149_000_000),
                dec!(149),
            ),
        ];
        let r = replay(&events_from_legs(&legs, true), Method::Fifo);
        assert_eq!(r.disposals.len(), 1);
        assert_eq!(r.disposals[0].gain, Some(dec!(49)));
        let usdc = r.open_lots.iter().find(|l| l.asset == USDC).unwrap();
        assert_eq!(usdc.basis, Some(dec!(149)));
    }
}
