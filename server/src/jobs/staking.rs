//! The staking half of a scan (SPEC S6). Inflation rewards land in a stake
//! account without a transaction, so no signature list shows them: a scan
//! finds the wallet's stake accounts (current ones by `getProgramAccounts`
//! on its staker and withdrawer authorities, closed or handed-over ones
//! from the Stake instructions of its own history), lists their histories
//! like any other source, then reads every epoch's reward with one
//! `getInflationReward` per epoch for all of them at once. Each reward is a
//! `staking_reward` leg under its own synthetic signature
//! ([`reward_signature`]), at the reward's effective slot and the time of
//! the block there (or the first block after it). What was asked is
//! remembered per account, so an incremental scan asks only newer epochs;
//! an epoch the provider will not serve is remembered too, asked again next
//! time, and named in the job's outcome meanwhile: never a silent gap.
//!
//! Every lamport flow of each stake account the scan sees is kept (a
//! transaction's, from its own balances of the account; an epoch's reward)
//! and at the scan's end [`reconcile`] checks each account to the lamport:
//! deposits + rewards − withdrawals must equal its balance now (one
//! `getMultipleAccounts` for all of them), 0 once closed, or what it held
//! right after its handover. An account that does not reconcile ends the
//! scan `partial`, named with its difference.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::context::{ScanContext, ScanError, record};
use crate::{
    ledger::{
        Leg, TxView,
        protocols::stake::{self, Flow, Standing},
        stake_accounts,
    },
    payments::Scope,
    solana::{InflationReward, RpcCost, RpcError, StakeAuthority},
    store::{
        JobProgress, JobRecord, StakeAccountRow, StakeAccountSeen, StakeFlowRow, TransactionLegs,
    },
};

/// The synthetic signature of one epoch's reward to one stake account
/// (`reward:<epoch>:<stake account>`, written by the core's decoder). A `:`
/// never occurs in a base58 signature, so it cannot collide with a
/// transaction, and the store leaves such rows out of what an incremental
/// scan stops at.
pub use crate::ledger::protocols::stake::reward_signature;

/// The current stake accounts whose staker or withdraw authority is the
/// wallet (two `getProgramAccounts` calls), noted in the store. Returns
/// their addresses. A provider that refuses the listing is remembered for
/// the wallet ([`listing_refused`]) and said in the job's outcome.
pub async fn current_accounts(
    ctx: &ScanContext<'_>,
    wallet: &str,
    cost: &RpcCost,
) -> Result<Vec<String>, ScanError> {
    let mut found = Vec::new();
    let mut refused = false;
    for authority in [StakeAuthority::Staker, StakeAuthority::Withdrawer] {
        let accounts = match ctx.rpc.stake_accounts(wallet, authority, cost).await {
            Ok(accounts) => accounts,
            // Some providers do not serve getProgramAccounts on the Stake
            // program: the wallet's history still names every stake
            // account it created or authorized, but not one someone else
            // created for it, so the scan says what it could not see.
            Err(RpcError::Rpc { code, message }) => {
                tracing::warn!(code, %message, "stake accounts not listed by the provider");
                refused = true;
                continue;
            }
            Err(error) => return Err(error.into()),
        };
        for account in accounts {
            ctx.store
                .note_stake_account(
                    wallet,
                    &StakeAccountSeen {
                        account: &account.address,
                        activation_epoch: account.activation_epoch,
                        ..StakeAccountSeen::default()
                    },
                )
                .await?;
            if !found.contains(&account.address) {
                found.push(account.address);
            }
        }
    }
    ctx.store
        .set_stake_listing_refused(wallet, refused, (ctx.now)())
        .await?;
    Ok(found)
}

/// Whether the provider refused to list the wallet's current stake
/// accounts at this scan (kept in the store, so a resumed job says it too).
pub async fn listing_refused(ctx: &ScanContext<'_>, wallet: &str) -> Result<bool, ScanError> {
    Ok(ctx.store.stake_listing_refused(wallet).await?)
}

/// What a partial scan says when the provider would not list the wallet's
/// current stake accounts.
pub const LISTING_REFUSED_NOTE: &str = "the RPC provider would not list the wallet's current \
    stake accounts (getProgramAccounts), so a stake account someone else created for it and \
    its history never names may be missing";

/// Note the stake accounts the wallet's transactions show to be its own.
pub async fn note_history(
    ctx: &ScanContext<'_>,
    wallet: &str,
    fetched: &[(&Value, &TxView)],
) -> Result<(), ScanError> {
    for (tx, view) in fetched {
        for touch in stake_accounts::stake_touches(tx, &view.keys, wallet) {
            ctx.store
                .note_stake_account(
                    wallet,
                    &StakeAccountSeen {
                        account: &touch.account,
                        first_slot: Some(view.slot),
                        activation_epoch: None,
                        handover_slot: touch.handed_over.then_some(view.slot),
                        acquired_slot: touch.acquired.then_some(view.slot),
                    },
                )
                .await?;
        }
    }
    Ok(())
}

/// Keep the lamport flow of each of the wallet's stake accounts (`known`)
/// that the fetched transactions name, from their own balances: of the
/// transactions while it was the wallet's, of the one that gave it to the
/// wallet (its opening balance) and of the one that handed it over (its
/// closing balance, [`stake::reconcile_account`]); another owner's
/// transactions are not the wallet's flows.
pub async fn note_flows(
    ctx: &ScanContext<'_>,
    wallet: &str,
    views: &[TxView],
    known: &[StakeAccountRow],
) -> Result<(), ScanError> {
    if known.is_empty() {
        return Ok(());
    }
    let rows: Vec<StakeFlowRow> = views
        .iter()
        .flat_map(|view| {
            let accounts: BTreeSet<String> = known
                .iter()
                .filter(|k| {
                    k.owned_at(view.slot)
                        || k.acquired_slot == Some(view.slot)
                        || k.handover_slot == Some(view.slot)
                })
                .map(|k| k.account.clone())
                .collect();
            stake::balance_flows(view, &accounts)
                .into_iter()
                .map(|f| StakeFlowRow {
                    account: f.stake_account,
                    signature: view.signature.clone(),
                    slot: view.slot,
                    flow: f.flow,
                    lamports_after: Some(f.lamports_after),
                })
        })
        .collect();
    ctx.store.write_stake_flows(wallet, &rows).await?;
    Ok(())
}

/// A stake account that does not reconcile: its address and its balance
/// minus deposits + rewards − withdrawals, in lamports (None: the provider
/// served no balance for it, so it could not be checked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreconciled {
    pub account: String,
    pub difference: Option<i128>,
}

/// Reconcile each of the wallet's stake accounts against its balance (one
/// `getMultipleAccounts` per 100 accounts still the wallet's; a handed-over
/// account is checked against its balance right after the handover),
/// record what each showed, and return those that do not add up.
pub async fn reconcile(
    ctx: &ScanContext<'_>,
    wallet: &str,
    cost: &RpcCost,
) -> Result<Vec<Unreconciled>, ScanError> {
    let accounts = ctx.store.stake_accounts(wallet).await?;
    if accounts.is_empty() {
        return Ok(Vec::new());
    }
    // A receipt noted late (in a later chunk, from a stake account's own
    // history, or from a stored view by the rescan) leaves no flow or
    // reward of the former owner's counted.
    ctx.store.purge_before_receipts(wallet, &accounts).await?;
    let mut unreconciled = Vec::new();
    let held: Vec<String> = accounts
        .iter()
        .filter(|a| !a.handed_over_now())
        .map(|a| a.account.clone())
        .collect();
    let balances: HashMap<String, Option<u64>> = if held.is_empty() {
        HashMap::new()
    } else {
        match ctx.rpc.balances(&held, cost).await {
            Ok(balances) => held.iter().cloned().zip(balances).collect(),
            // The provider answered with an error: the accounts it would not
            // give a balance for cannot be checked. Said in the outcome,
            // never taken as closed.
            Err(RpcError::Rpc { code, message }) => {
                tracing::warn!(code, %message, "stake account balances not served");
                for account in &held {
                    unreconciled.push(Unreconciled {
                        account: account.clone(),
                        difference: None,
                    });
                }
                HashMap::new()
            }
            Err(error) => return Err(error.into()),
        }
    };
    let mut flows: BTreeMap<String, Vec<(u64, Flow, Option<u64>)>> = BTreeMap::new();
    for row in ctx.store.stake_flows(wallet).await? {
        flows
            .entry(row.account)
            .or_default()
            .push((row.slot, row.flow, row.lamports_after));
    }
    for account in &accounts {
        let handed_over = account.handover_slot.filter(|_| account.handed_over_now());
        let standing = match (handed_over, balances.get(&account.account)) {
            (Some(slot), _) => Standing::HandedOver { slot },
            (None, Some(Some(lamports))) => Standing::Open(*lamports),
            (None, Some(None)) => Standing::Closed,
            // No balance was served for it (said above).
            (None, None) => continue,
        };
        let history = flows.remove(&account.account).unwrap_or_default();
        let result = stake::reconcile_account(&history, standing, account.acquired_slot);
        let difference = i64::try_from(result.difference).unwrap_or(i64::MAX);
        ctx.store
            .set_stake_reconciliation(wallet, &account.account, result.balance, difference)
            .await?;
        if result.difference != 0 {
            tracing::warn!(
                stake_account = %account.account,
                difference = %result.difference,
                "stake account does not reconcile"
            );
            unreconciled.push(Unreconciled {
                account: account.account.clone(),
                difference: Some(result.difference),
            });
        }
    }
    Ok(unreconciled)
}

/// What a partial scan says of the stake accounts that did not reconcile.
pub fn unreconciled_note(unreconciled: &[Unreconciled]) -> String {
    let each: Vec<String> = unreconciled
        .iter()
        .map(|u| match u.difference {
            Some(d) => {
                let (more, by) = if d > 0 { ("more", d) } else { ("less", -d) };
                format!(
                    "{} holds {by} lamports {more} than its deposits, rewards and withdrawals give",
                    u.account
                )
            }
            None => format!(
                "{}: its balance was not served by the RPC provider (getMultipleAccounts)",
                u.account
            ),
        })
        .collect();
    format!("stake accounts do not reconcile: {}", each.join("; "))
}

/// A staking reward as a leg of the wallet, in the core's one shape, under
/// the epoch that was asked (an answer's own `epoch` is checked against it,
/// [`answer_fits`], never trusted for the leg's identity).
fn reward_leg(account: &str, epoch: u64, reward: &InflationReward, block_time: i64) -> Leg {
    crate::ledger::protocols::stake::staking_reward_leg(
        account,
        epoch,
        reward.amount,
        reward.effective_slot,
        Some(block_time),
    )
}

/// Whether a `getInflationReward` answer can be the reward of `epoch`
/// (Solana's RPC documentation: `epoch` is the epoch the reward is for,
/// `effectiveSlot` the slot it was credited in, which is in the next
/// epoch, and `postBalance` the account's balance after it, so at least
/// the amount). An answer that does not fit is the provider's error: its
/// epoch counts as not served, never written as income.
fn answer_fits(
    reward: &InflationReward,
    epoch: u64,
    schedule: &crate::solana::EpochSchedule,
) -> bool {
    reward.epoch == epoch
        && schedule.epoch_of(reward.effective_slot) == epoch + 1
        && reward.amount <= reward.post_balance
}

/// Which epochs to ask, and for which accounts.
struct Plan {
    /// Per epoch, the accounts to ask about, in order.
    epochs: Vec<(u64, Vec<String>)>,
}

fn plan(
    accounts: &[StakeAccountRow],
    schedule: &crate::solana::EpochSchedule,
    last: u64,
    incremental: bool,
    retry: &BTreeSet<u64>,
) -> Plan {
    // An account earns from the epoch it was first delegated (read from the
    // account) or first seen in the wallet's history, whichever is earlier,
    // until the epoch its withdraw authority left the wallet. One the
    // wallet received is asked from the epoch before its receipt (whose
    // reward may be credited just after it); which rewards are the
    // wallet's is then decided by their effective slot
    // (`StakeAccountRow::owned_at`).
    let spans: Vec<(&StakeAccountRow, u64, u64)> = accounts
        .iter()
        .filter_map(|a| {
            let seen = a.first_slot.map(|s| schedule.epoch_of(s));
            let mut start = match (a.activation_epoch, seen) {
                (Some(x), Some(y)) => x.min(y),
                (x, y) => x.or(y)?,
            };
            // Received with no handover before it: nothing earlier was the
            // wallet's. Handed over and received back: the earlier window
            // was, so the start stays.
            if let Some(received) = a.acquired_slot
                && a.handover_slot.is_none_or(|h| h > received)
            {
                start = start.max(schedule.epoch_of(received).saturating_sub(1));
            }
            let end = match a.handover_slot {
                Some(h) if a.handed_over_now() => schedule.epoch_of(h).min(last),
                _ => last,
            };
            Some((a, start, end))
        })
        .collect();
    let Some(first) = spans.iter().map(|(_, start, _)| *start).min() else {
        return Plan { epochs: Vec::new() };
    };
    let mut epochs = Vec::new();
    for epoch in first..=last {
        let ask: Vec<String> = spans
            .iter()
            .filter(|(a, start, end)| {
                (*start..=*end).contains(&epoch)
                    && (!incremental
                        || a.rewards_read_through.is_none_or(|r| epoch > r)
                        || retry.contains(&epoch))
            })
            .map(|(a, _, _)| a.account.clone())
            .collect();
        if !ask.is_empty() {
            epochs.push((epoch, ask));
        }
    }
    Plan { epochs }
}

/// Read the rewards of the wallet's stake accounts through the last
/// completed epoch and write them as legs. Returns the epochs the provider
/// would not serve.
pub async fn read_rewards(
    ctx: &ScanContext<'_>,
    job: &JobRecord,
    scope: Scope,
    cost: &RpcCost,
    progress: &mut JobProgress,
) -> Result<Vec<u64>, ScanError> {
    let wallet = job.address.as_str();
    let accounts = ctx.store.stake_accounts(wallet).await?;
    if accounts.is_empty() {
        return Ok(Vec::new());
    }
    let schedule = ctx.rpc.epoch_schedule(cost).await?;
    let info = ctx.rpc.epoch_info(cost).await?;
    check_epoch(&info, &schedule)?;
    // The current epoch's reward is paid at its end: only completed ones.
    let Some(last) = info.epoch.checked_sub(1) else {
        return Ok(Vec::new());
    };
    let retry: BTreeSet<u64> = ctx
        .store
        .missing_reward_epochs(wallet)
        .await?
        .into_iter()
        .collect();
    let rows: HashMap<&str, &StakeAccountRow> =
        accounts.iter().map(|a| (a.account.as_str(), a)).collect();
    let plan = plan(
        &accounts,
        &schedule,
        last,
        scope == Scope::Incremental,
        &retry,
    );
    let mut missing = Vec::new();
    for (epoch, ask) in &plan.epochs {
        if (ctx.should_stop)() {
            return Err(ScanError::Stopped);
        }
        let rewards = match ctx.rpc.inflation_rewards(ask, *epoch, cost).await {
            Ok(rewards) => rewards,
            // The provider answered, with an error: typically an epoch older
            // than it keeps (-32004 and kin). A gap to say, not a failure.
            Err(RpcError::Rpc { code, message }) => {
                tracing::warn!(epoch, code, %message, "inflation rewards not served");
                missing.push(*epoch);
                continue;
            }
            Err(error) => return Err(error.into()),
        };
        let mut times: HashMap<u64, Option<i64>> = HashMap::new();
        let mut legs = Vec::new();
        let mut served = true;
        for (account, reward) in ask.iter().zip(rewards) {
            let Some(reward) = reward.filter(|r| r.amount > 0) else {
                continue;
            };
            if !answer_fits(&reward, *epoch, &schedule) {
                tracing::warn!(epoch, %account, ?reward, "an inflation reward that cannot be this epoch's; the epoch counts as not served");
                served = false;
                continue;
            }
            // Credited while the account was not the wallet's (after its
            // handover, or before the wallet received it): not its income.
            if rows
                .get(account.as_str())
                .is_some_and(|row| !row.owned_at(reward.effective_slot))
            {
                continue;
            }
            let time = match times.get(&reward.effective_slot) {
                Some(time) => *time,
                None => {
                    // The block at the effective slot, or the first after it
                    // when it was skipped: still in the epoch the reward was
                    // credited in, and after genesis, or no time at all.
                    let time = ctx
                        .rpc
                        .block_time_at_or_after(reward.effective_slot, cost)
                        .await?
                        .filter(|(slot, time)| {
                            schedule.epoch_of(*slot) == epoch + 1 && *time > SOLANA_GENESIS
                        })
                        .map(|(_, time)| time);
                    times.insert(reward.effective_slot, time);
                    time
                }
            };
            // Income is valued at the time it was received: without the
            // block's time there is no value to give, so the epoch counts
            // as not served (asked again by the next scan), never dated 1970.
            let Some(time) = time else {
                tracing::warn!(
                    epoch,
                    slot = reward.effective_slot,
                    "no block time for a reward's slot; the epoch counts as not served"
                );
                served = false;
                continue;
            };
            legs.push(reward_leg(account, *epoch, &reward, time));
        }
        if !served {
            missing.push(*epoch);
        }
        let batch: Vec<TransactionLegs<'_>> = legs
            .iter()
            .map(|leg| TransactionLegs {
                signature: &leg.signature,
                slot: leg.slot,
                block_time: leg.block_time,
                failed: false,
                legs: std::slice::from_ref(leg),
            })
            .collect();
        let written = ctx.store.write_legs(wallet, &batch).await?;
        let flows: Vec<StakeFlowRow> = legs
            .iter()
            .filter_map(|leg| {
                Some(StakeFlowRow {
                    account: leg.counterparties.first()?.address.clone(),
                    signature: leg.signature.clone(),
                    slot: leg.slot,
                    flow: Flow::Reward(u64::try_from(leg.amount).ok()?),
                    lamports_after: None,
                })
            })
            .collect();
        ctx.store.write_stake_flows(wallet, &flows).await?;
        progress.legs_written += i64::try_from(written).unwrap_or(i64::MAX);
        record(ctx, job, cost, progress).await?;
    }
    let asked: Vec<String> = accounts.iter().map(|a| a.account.clone()).collect();
    ctx.store
        .set_rewards_read_through(wallet, &asked, last)
        .await?;
    ctx.store
        .set_missing_reward_epochs(wallet, &missing)
        .await?;
    Ok(missing)
}

/// Solana mainnet-beta's genesis, 16 March 2020 (unix seconds): no block,
/// so no reward, is older.
const SOLANA_GENESIS: i64 = 1_584_368_940;

/// The most epochs a chain can have reached: mainnet's epochs last about
/// two days (432,000 slots), so this is centuries away; an answer beyond it
/// is a broken provider, refused before it can size any loop.
const MAX_EPOCH: u64 = 1_000_000;

/// `getEpochInfo` checked against `getEpochSchedule` before any epoch is
/// planned: its epoch must be the one its own absolute slot falls in, and
/// a real one.
fn check_epoch(
    info: &crate::solana::EpochInfo,
    schedule: &crate::solana::EpochSchedule,
) -> Result<(), ScanError> {
    if info.epoch > MAX_EPOCH
        || schedule.slots_per_epoch == 0
        || schedule.epoch_of(info.absolute_slot) != info.epoch
    {
        return Err(RpcError::Decode(format!(
            "getEpochInfo: epoch {} at slot {} does not fit the epoch schedule",
            info.epoch, info.absolute_slot
        ))
        .into());
    }
    Ok(())
}

/// Epochs as people read them: `3, 7-9, 12`.
pub fn epoch_ranges(epochs: &[u64]) -> String {
    let mut sorted = epochs.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solana::EpochSchedule;

    const SCHEDULE: EpochSchedule = EpochSchedule {
        slots_per_epoch: 100,
        leader_schedule_slot_offset: 100,
        warmup: false,
        first_normal_epoch: 0,
        first_normal_slot: 0,
    };

    fn row(account: &str, first_slot: Option<u64>, read: Option<u64>) -> StakeAccountRow {
        StakeAccountRow {
            account: account.to_owned(),
            first_slot,
            activation_epoch: None,
            handover_slot: None,
            acquired_slot: None,
            rewards_read_through: read,
            balance_lamports: None,
            difference_lamports: None,
        }
    }

    #[test]
    fn one_request_per_epoch_covers_every_account() {
        let accounts = [row("a", Some(250), None), row("b", Some(420), None)];
        let planned = plan(&accounts, &SCHEDULE, 5, false, &BTreeSet::new());
        let epochs: Vec<u64> = planned.epochs.iter().map(|(e, _)| *e).collect();
        assert_eq!(epochs, vec![2, 3, 4, 5]);
        assert_eq!(planned.epochs[0].1, vec!["a".to_owned()]);
        assert_eq!(planned.epochs[2].1, vec!["a".to_owned(), "b".to_owned()]);
    }

    #[test]
    fn an_incremental_plan_asks_only_newer_and_missing_epochs() {
        let accounts = [row("a", Some(0), Some(7))];
        let retry = BTreeSet::from([3]);
        let planned = plan(&accounts, &SCHEDULE, 9, true, &retry);
        let epochs: Vec<u64> = planned.epochs.iter().map(|(e, _)| *e).collect();
        assert_eq!(epochs, vec![3, 8, 9]);
        assert!(
            plan(&accounts, &SCHEDULE, 7, true, &BTreeSet::new())
                .epochs
                .is_empty()
        );
    }

    #[test]
    fn a_handed_over_account_is_asked_until_its_handover_epoch() {
        let mut a = row("a", Some(100), None);
        a.handover_slot = Some(350);
        let planned = plan(&[a], &SCHEDULE, 9, false, &BTreeSet::new());
        let epochs: Vec<u64> = planned.epochs.iter().map(|(e, _)| *e).collect();
        assert_eq!(epochs, vec![1, 2, 3]);
    }

    #[test]
    fn a_received_account_is_asked_from_the_epoch_before_its_receipt() {
        // Delegated in epoch 1 by its former owner, received at slot 550.
        let mut a = row("a", Some(550), None);
        a.activation_epoch = Some(1);
        a.acquired_slot = Some(550);
        let planned = plan(&[a.clone()], &SCHEDULE, 9, false, &BTreeSet::new());
        let epochs: Vec<u64> = planned.epochs.iter().map(|(e, _)| *e).collect();
        assert_eq!(epochs, vec![4, 5, 6, 7, 8, 9]);
        // Received, then handed over at slot 750: asked through epoch 7.
        a.handover_slot = Some(750);
        let planned = plan(&[a.clone()], &SCHEDULE, 9, false, &BTreeSet::new());
        let epochs: Vec<u64> = planned.epochs.iter().map(|(e, _)| *e).collect();
        assert_eq!(epochs, vec![4, 5, 6, 7]);
        // Handed over at slot 350, received back at 550: the window before
        // the handover was the wallet's too, so every epoch from the first
        // is asked (owned_at then keeps the rewards of both windows).
        a.handover_slot = Some(350);
        let planned = plan(&[a], &SCHEDULE, 9, false, &BTreeSet::new());
        let epochs: Vec<u64> = planned.epochs.iter().map(|(e, _)| *e).collect();
        assert_eq!(epochs, (1..=9).collect::<Vec<u64>>());
    }

    #[test]
    fn an_answer_for_another_epoch_or_slot_does_not_fit() {
        let reward = |epoch, effective_slot, amount, post_balance| InflationReward {
            epoch,
            effective_slot,
            amount,
            post_balance,
            commission: Some(7),
        };
        assert!(answer_fits(&reward(4, 500, 10, 1_000), 4, &SCHEDULE));
        assert!(answer_fits(&reward(4, 599, 10, 10), 4, &SCHEDULE));
        assert!(
            !answer_fits(&reward(9, 500, 10, 1_000), 4, &SCHEDULE),
            "another epoch"
        );
        assert!(
            !answer_fits(&reward(4, 400, 10, 1_000), 4, &SCHEDULE),
            "credited in its own epoch"
        );
        assert!(
            !answer_fits(&reward(4, 700, 10, 1_000), 4, &SCHEDULE),
            "two epochs on"
        );
        assert!(
            !answer_fits(&reward(4, 500, 11, 10), 4, &SCHEDULE),
            "more than the balance"
        );
    }

    #[test]
    fn an_epoch_beyond_its_own_slot_or_any_chain_is_refused() {
        let info = |epoch, absolute_slot| crate::solana::EpochInfo {
            epoch,
            absolute_slot,
            slot_index: 7,
            slots_in_epoch: 100,
        };
        assert!(check_epoch(&info(12, 1_207), &SCHEDULE).is_ok());
        assert!(check_epoch(&info(13, 1_207), &SCHEDULE).is_err());
        assert!(check_epoch(&info(1 << 60, 1 << 62), &SCHEDULE).is_err());
        assert!(check_epoch(&info(2_000_000, 200_000_007), &SCHEDULE).is_err());
    }

    #[test]
    fn epochs_are_said_as_ranges() {
        assert_eq!(epoch_ranges(&[12, 3, 7, 8, 9]), "3, 7-9, 12");
        assert_eq!(epoch_ranges(&[]), "");
    }
}
