//! The Stake program (`Stake11111111111111111111111111111111111111`): SOL a
//! wallet moves into stake accounts it controls is still the wallet's
//! (SPEC S6), so moving it there and back is neither a disposal nor an
//! acquisition, and splits and merges between its own stake accounts are
//! no leg at all. Only a stake account leaving the wallet's control (its
//! withdraw authority moved to someone else, or a withdrawal paid to
//! someone else) disposes of SOL.
//!
//! A stake account is the wallet's when the wallet is its staker or its
//! withdraw authority: read from the stake instructions of the transaction
//! (`initialize`, `initializeChecked`, and every instruction the wallet
//! signs as an authority; a split or merge carries control to the other
//! account), or passed in by the scanner, which also finds the current
//! ones with `getProgramAccounts` ([`Reading::read`]'s `known`). The
//! instructions arrive already parsed into [`StakeOp`]s by
//! [`crate::ledger::stake_ix`] (the leaf the transaction reader shares), so
//! this module reads ops, never instruction bytes.
//!
//! Rewards never arrive by transaction: the scanner reads them with
//! `getInflationReward` and makes one [`staking_reward_leg`] per epoch and
//! stake account. Jito tip-distribution claims (program
//! `4R3gSG8BpU4t19KYj8CfnbtRpnT8gtk4dvTHxVRwc2r7`, the `declare_id!` of
//! jito-foundation/jito-programs `tip-distribution`) are MEV income.
//! [`reconcile`] checks one stake account's history to the lamport:
//! deposits + rewards − withdrawals equal its balance. docs/ledger.md
//! ("Staking") is the prose.

use std::collections::{BTreeMap, BTreeSet};

use crate::ledger::{
    model::{Counterparty, CounterpartyKind, Direction, Leg, OperationType, SOL, SOL_DECIMALS},
    tx::{Op, TxView},
};

pub use crate::ledger::stake_ix::{Role, STAKE_PROGRAM, StakeOp, parsed, raw};

/// Jito's tip-distribution program: its `claim` pays MEV tips out.
pub const JITO_TIP_DISTRIBUTION_PROGRAM: &str = "4R3gSG8BpU4t19KYj8CfnbtRpnT8gtk4dvTHxVRwc2r7";

/// Whether the transaction ran Jito's tip-distribution program (a claim
/// pays MEV tips to its claimant).
pub fn is_mev_claim(tx: &TxView) -> bool {
    tx.programs
        .iter()
        .any(|p| p == JITO_TIP_DISTRIBUTION_PROGRAM)
        || tx.ops.iter().any(
            |op| matches!(op, Op::Other { program } if program == JITO_TIP_DISTRIBUTION_PROGRAM),
        )
}

/// One leg the stake reading explains, before the decoder numbers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StakeLeg {
    pub operation_type: OperationType,
    /// Signed lamports, positive into the wallet.
    pub amount: i128,
    pub counterparty: Counterparty,
}

/// A stake account of the wallet's seen in one transaction, for the
/// scanner: which stake accounts to follow, and from which slot one stops
/// being the wallet's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StakeAccountSeen {
    pub stake_account: String,
    pub signature: String,
    pub slot: u64,
    pub block_time: Option<i64>,
    /// Whether the wallet controls it after this transaction.
    pub controlled_after: bool,
    /// The withdraw authority this transaction moved it to, when it did.
    pub new_withdraw_authority: Option<String>,
    /// Its lamports after the transaction (0: closed).
    pub lamports_after: u64,
}

/// What the stake instructions of one transaction mean for one wallet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Every stake account the transaction names, and the known ones.
    stake_accounts: BTreeSet<String>,
    /// The legs, in instruction order.
    pub legs: Vec<StakeLeg>,
    /// The wallet's stake accounts this transaction touched.
    pub seen: Vec<StakeAccountSeen>,
}

fn lamports(tx: &TxView, account: &str) -> (u64, u64) {
    tx.index_of(account)
        .map(|i| (tx.pre_lamports[i], tx.post_lamports[i]))
        .unwrap_or((0, 0))
}

fn party(address: &str, direction: Direction) -> Counterparty {
    // A stake account is no program and no token account; the kinds the
    // guide names leave `wallet` for it.
    Counterparty {
        address: address.to_owned(),
        direction,
        kind: CounterpartyKind::Wallet,
    }
}

impl Reading {
    /// Read `tx` for `wallet`. `known` are stake accounts the caller
    /// already knows to be the wallet's (from `getProgramAccounts`, or
    /// from earlier transactions); the transaction's own instructions add
    /// the rest. A failed transaction moves nothing but names accounts.
    pub fn read(tx: &TxView, wallet: &str, known: &BTreeSet<String>) -> Self {
        let ops: Vec<&StakeOp> = tx
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::Stake(s) => Some(s),
                _ => None,
            })
            .collect();
        let mut stake_accounts: BTreeSet<String> = known.clone();
        for op in &ops {
            stake_accounts.extend(op.stake_accounts().into_iter().map(str::to_owned));
        }

        // Whose accounts: the wallet initialised or signed for them, or a
        // split, merge or move links them to one that is.
        let mut ever: BTreeSet<&str> = known.iter().map(String::as_str).collect();
        let mut gained: BTreeSet<&str> = BTreeSet::new();
        for op in &ops {
            match op {
                StakeOp::Initialize {
                    stake,
                    staker,
                    withdrawer,
                } if staker == wallet || withdrawer == wallet => {
                    ever.insert(stake);
                }
                StakeOp::Authorize {
                    stake,
                    authority,
                    new_authority,
                    role: Role::Withdrawer,
                } if new_authority == wallet && authority != wallet => {
                    gained.insert(stake);
                }
                op if op.authority() == Some(wallet) => {
                    ever.extend(op.stake_accounts());
                }
                _ => {}
            }
        }
        loop {
            let before = ever.len();
            for op in &ops {
                let linked = op.stake_accounts();
                if linked.len() == 2 && linked.iter().any(|a| ever.contains(a)) {
                    ever.extend(linked);
                }
            }
            if ever.len() == before {
                break;
            }
        }
        let mut now: BTreeSet<&str> = ever
            .iter()
            .copied()
            .filter(|a| !gained.contains(a) || known.contains(*a))
            .collect();
        let controlled_before = now.clone();

        let mut legs = Vec::new();
        let mut touched: BTreeSet<&str> = BTreeSet::new();
        let mut moved_to: BTreeMap<&str, &str> = BTreeMap::new();
        if !tx.failed {
            for op in &tx.ops {
                match op {
                    Op::CreateAccount {
                        funder,
                        account,
                        lamports,
                    } if now.contains(account.as_str()) => {
                        touched.insert(account);
                        deposit(&mut legs, wallet, funder, account, *lamports);
                    }
                    Op::SolTransfer { from, to, lamports }
                        if now.contains(to.as_str()) && !now.contains(from.as_str()) =>
                    {
                        touched.insert(to);
                        deposit(&mut legs, wallet, from, to, *lamports);
                    }
                    Op::Stake(op) => {
                        touched.extend(op.stake_accounts());
                        match op {
                            StakeOp::Withdraw {
                                stake,
                                to,
                                lamports,
                                ..
                            } if now.contains(stake.as_str()) && !now.contains(to.as_str()) => {
                                let amount = i128::from(*lamports);
                                legs.push(StakeLeg {
                                    operation_type: OperationType::StakeWithdraw,
                                    amount,
                                    counterparty: party(stake, Direction::In),
                                });
                                if to != wallet {
                                    legs.push(StakeLeg {
                                        operation_type: OperationType::TransferOut,
                                        amount: -amount,
                                        counterparty: party(to, Direction::Out),
                                    });
                                }
                            }
                            StakeOp::Split { stake, into, .. } if now.contains(stake.as_str()) => {
                                now.insert(into);
                            }
                            StakeOp::Authorize {
                                stake,
                                authority,
                                new_authority,
                                role: Role::Withdrawer,
                            } => {
                                let balance = i128::from(lamports(tx, stake).1);
                                if now.contains(stake.as_str()) && new_authority != wallet {
                                    // The stake account is sold or given
                                    // away: its SOL leaves the wallet now.
                                    now.remove(stake.as_str());
                                    moved_to.insert(stake, new_authority);
                                    if balance > 0 {
                                        legs.push(StakeLeg {
                                            operation_type: OperationType::StakeWithdraw,
                                            amount: balance,
                                            counterparty: party(stake, Direction::In),
                                        });
                                        legs.push(StakeLeg {
                                            operation_type: OperationType::TransferOut,
                                            amount: -balance,
                                            counterparty: party(new_authority, Direction::Out),
                                        });
                                    }
                                } else if !now.contains(stake.as_str()) && new_authority == wallet {
                                    now.insert(stake);
                                    moved_to.insert(stake, new_authority);
                                    if balance > 0 {
                                        legs.push(StakeLeg {
                                            operation_type: OperationType::TransferIn,
                                            amount: balance,
                                            counterparty: party(authority, Direction::In),
                                        });
                                        legs.push(StakeLeg {
                                            operation_type: OperationType::StakeDeposit,
                                            amount: -balance,
                                            counterparty: party(stake, Direction::Out),
                                        });
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                    _ => {}
                }
            }
            // A Jito claim paid into the wallet's stake account: income,
            // and it stays staked.
            if is_mev_claim(tx) {
                let untouched: Vec<&str> = now
                    .iter()
                    .copied()
                    .filter(|a| !touched.contains(a))
                    .collect();
                for account in untouched {
                    let (pre, post) = lamports(tx, account);
                    if post > pre {
                        let tip = i128::from(post - pre);
                        legs.push(StakeLeg {
                            operation_type: OperationType::MevReward,
                            amount: tip,
                            counterparty: Counterparty {
                                address: JITO_TIP_DISTRIBUTION_PROGRAM.to_owned(),
                                direction: Direction::In,
                                kind: CounterpartyKind::Program,
                            },
                        });
                        legs.push(StakeLeg {
                            operation_type: OperationType::StakeDeposit,
                            amount: -tip,
                            counterparty: party(account, Direction::Out),
                        });
                        touched.insert(account);
                    }
                }
            }
        }

        let seen = ever
            .iter()
            .chain(&gained)
            .copied()
            .collect::<BTreeSet<&str>>()
            .into_iter()
            .filter(|a| touched.contains(a) || tx.index_of(a).is_some())
            .filter(|a| controlled_before.contains(a) || now.contains(a) || gained.contains(a))
            .map(|a| StakeAccountSeen {
                stake_account: a.to_owned(),
                signature: tx.signature.clone(),
                slot: tx.slot,
                block_time: tx.block_time,
                controlled_after: now.contains(a),
                new_withdraw_authority: moved_to.get(a).map(|s| (*s).to_owned()),
                lamports_after: lamports(tx, a).1,
            })
            .collect();
        Reading {
            stake_accounts,
            legs,
            seen,
        }
    }

    /// Whether `account` is a stake account (named by a stake instruction
    /// of the transaction, or known): funding one is never rent.
    pub fn is_stake_account(&self, account: &str) -> bool {
        self.stake_accounts.contains(account)
    }
}

/// SOL into the wallet's stake account: from the wallet a `stake_deposit`;
/// from anyone else a `transfer_in` that goes straight into stake.
fn deposit(legs: &mut Vec<StakeLeg>, wallet: &str, funder: &str, account: &str, lamports: u64) {
    if lamports == 0 {
        return;
    }
    let amount = i128::from(lamports);
    if funder != wallet {
        legs.push(StakeLeg {
            operation_type: OperationType::TransferIn,
            amount,
            counterparty: party(funder, Direction::In),
        });
    }
    legs.push(StakeLeg {
        operation_type: OperationType::StakeDeposit,
        amount: -amount,
        counterparty: party(account, Direction::Out),
    });
}

/// The wallet's stake accounts this transaction touched (see
/// [`StakeAccountSeen`]): what the scanner follows.
pub fn stake_accounts_seen(
    tx: &TxView,
    wallet: &str,
    known: &BTreeSet<String>,
) -> Vec<StakeAccountSeen> {
    Reading::read(tx, wallet, known).seen
}

/// The stake accounts whose withdraw authority `tx` moved from someone else
/// to `wallet` (an `authorize` of the withdrawer, in any of its four forms
/// and either encoding, top level or inner): the wallet's from this
/// transaction on. Read from the transaction's ops, so a stored view
/// ([`crate::ledger::stored`]) answers it as the transaction's JSON does
/// ([`crate::ledger::stake_accounts::stake_touches`]'s `acquired`). A
/// failed transaction moved nothing.
pub fn received_stake_accounts(tx: &TxView, wallet: &str) -> Vec<String> {
    if tx.failed {
        return Vec::new();
    }
    tx.ops
        .iter()
        .filter_map(|op| match op {
            Op::Stake(StakeOp::Authorize {
                stake,
                authority,
                new_authority,
                role: Role::Withdrawer,
            }) if new_authority == wallet && authority != wallet => Some(stake.clone()),
            _ => None,
        })
        .collect()
}

/// Whether a leg of `op` moves SOL between the wallet and its own stake
/// account: its holdings (liquid plus staked) do not change, so sums of
/// holdings leave such legs out.
pub fn within_holdings(op: OperationType) -> bool {
    matches!(
        op,
        OperationType::StakeDeposit | OperationType::StakeWithdraw
    )
}

/// The synthetic signature of a reward leg: `reward:<epoch>:<stake
/// account>`, where `<epoch>` is the epoch `getInflationReward` was asked
/// about (the reward is paid at the first slot of the next one). No real
/// signature contains `:`, so it never collides with a transaction.
pub fn reward_signature(epoch: u64, stake_account: &str) -> String {
    format!("reward:{epoch}:{stake_account}")
}

/// The `staking_reward` leg for one epoch's inflation reward credited to
/// one of the wallet's stake accounts: `lamports` from
/// `getInflationReward`'s `amount`, at its `effectiveSlot` and that slot's
/// block time (`getBlockTime`). The reward stays in the stake account, so
/// the leg is income that is staked from the start; its counterparty is
/// the stake account.
pub fn staking_reward_leg(
    stake_account: &str,
    epoch: u64,
    lamports: u64,
    effective_slot: u64,
    block_time: Option<i64>,
) -> Leg {
    Leg {
        signature: reward_signature(epoch, stake_account),
        slot: effective_slot,
        block_time,
        index: 0,
        operation_type: OperationType::StakingReward,
        mint: SOL.to_owned(),
        amount: i128::from(lamports),
        decimals: SOL_DECIMALS,
        counterparties: vec![party(stake_account, Direction::In)],
        position: None,
        venue: None,
        router: None,
    }
}

/// One movement of lamports into or out of one stake account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Funded at creation, transferred in, split or merged in.
    Deposit(u64),
    /// An epoch's inflation reward or a claimed MEV tip.
    Reward(u64),
    /// Withdrawn, split or merged out.
    Withdrawal(u64),
}

/// The stake account's balance must equal this: deposits + rewards −
/// withdrawals, in lamports.
pub fn expected_balance(flows: &[Flow]) -> i128 {
    flows
        .iter()
        .map(|f| match *f {
            Flow::Deposit(l) | Flow::Reward(l) => i128::from(l),
            Flow::Withdrawal(l) => -i128::from(l),
        })
        .sum()
}

/// A stake account whose history does not add up to its balance.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("stake account history gives {expected} lamports, its balance is {actual}")]
pub struct Mismatch {
    pub expected: i128,
    pub actual: u64,
}

/// Check one stake account's history against its balance (its closing
/// balance, 0, when closed), to the lamport.
pub fn reconcile(flows: &[Flow], balance: u64) -> Result<(), Mismatch> {
    let expected = expected_balance(flows);
    if expected == i128::from(balance) {
        Ok(())
    } else {
        Err(Mismatch {
            expected,
            actual: balance,
        })
    }
}

impl Flow {
    /// The stored name of the flow's kind (`deposit`, `reward`,
    /// `withdrawal`) and its lamports.
    pub fn parts(self) -> (&'static str, u64) {
        match self {
            Flow::Deposit(l) => ("deposit", l),
            Flow::Reward(l) => ("reward", l),
            Flow::Withdrawal(l) => ("withdrawal", l),
        }
    }

    /// The flow back from its stored kind and lamports; `None` for a kind
    /// this version does not know.
    pub fn from_parts(kind: &str, lamports: u64) -> Option<Flow> {
        match kind {
            "deposit" => Some(Flow::Deposit(lamports)),
            "reward" => Some(Flow::Reward(lamports)),
            "withdrawal" => Some(Flow::Withdrawal(lamports)),
            _ => None,
        }
    }
}

/// One of the wallet's stake accounts in one transaction, read from the
/// transaction's own balances: what the runtime recorded, whichever
/// instruction (create, transfer, split, merge, withdraw, a Jito claim)
/// moved the lamports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BalanceFlow {
    pub stake_account: String,
    /// `postBalances − preBalances`: a deposit when it rose, a withdrawal
    /// when it fell (a deposit of 0 when the account is only named).
    pub flow: Flow,
    /// Its balance after the transaction.
    pub lamports_after: u64,
}

/// The flow of each of `accounts` (the wallet's stake accounts) that `tx`
/// names. Summed over a stake account's whole history with its rewards,
/// these must give its balance ([`reconcile`]): a transaction the scan
/// missed, a reward not read or misread, shows as a difference.
pub fn balance_flows(tx: &TxView, accounts: &BTreeSet<String>) -> Vec<BalanceFlow> {
    accounts
        .iter()
        .filter_map(|account| {
            let i = tx.index_of(account)?;
            let (pre, post) = (tx.pre_lamports[i], tx.post_lamports[i]);
            Some(BalanceFlow {
                stake_account: account.clone(),
                flow: if post >= pre {
                    Flow::Deposit(post - pre)
                } else {
                    Flow::Withdrawal(pre - post)
                },
                lamports_after: post,
            })
        })
        .collect()
}

/// Where a stake account of the wallet stands, for its reconciliation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// It exists now with this balance (`getMultipleAccounts`).
    Open(u64),
    /// It no longer exists (`getMultipleAccounts` answers `null`): its
    /// closing balance is 0.
    Closed,
    /// Its withdraw authority left the wallet at this slot: its history is
    /// the wallet's up to that transaction, and it must hold what it held
    /// right after it.
    HandedOver { slot: u64 },
}

/// One stake account's reconciliation: the balance it is checked against
/// and `balance − (deposits + rewards − withdrawals)` (0: reconciled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reconciled {
    pub balance: u64,
    pub difference: i128,
}

/// Reconcile one stake account: `flows` are its (slot, flow, balance after
/// for a transaction's flow) rows. A handed-over account counts the flows
/// up to its handover slot and is checked against its balance after that
/// transaction (0 if the history holds no such transaction: a gap). An
/// account the wallet received at slot `received` (its withdraw authority
/// moved to the wallet from someone else) opens there with what it held
/// right after that transaction, as if deposited then; what it did before
/// was the former owner's and is not counted.
pub fn reconcile_account(
    flows: &[(u64, Flow, Option<u64>)],
    standing: Standing,
    received: Option<u64>,
) -> Reconciled {
    let owned: Vec<(u64, Flow, Option<u64>)> = match received {
        None => flows.to_vec(),
        Some(at) => {
            let opening = flows
                .iter()
                .filter(|f| f.0 == at)
                .find_map(|f| f.2)
                .unwrap_or(0);
            std::iter::once((at, Flow::Deposit(opening), Some(opening)))
                .chain(flows.iter().filter(|f| f.0 > at).copied())
                .collect()
        }
    };
    let (counted, balance): (Vec<Flow>, u64) = match standing {
        Standing::Open(balance) => (owned.iter().map(|f| f.1).collect(), balance),
        Standing::Closed => (owned.iter().map(|f| f.1).collect(), 0),
        Standing::HandedOver { slot } => (
            owned.iter().filter(|f| f.0 <= slot).map(|f| f.1).collect(),
            owned
                .iter()
                .filter(|f| f.0 == slot)
                .find_map(|f| f.2)
                .unwrap_or(0),
        ),
    };
    Reconciled {
        balance,
        difference: i128::from(balance) - expected_balance(&counted),
    }
}

/// The lamport flows a transaction's instructions make into and out of
/// each stake account it names (rewards come apart, from
/// [`staking_reward_leg`]'s source). A merge moves all of the source's
/// lamports: its balance before the transaction.
pub fn flows(tx: &TxView) -> Vec<(String, Flow)> {
    let reading = Reading::read(tx, "", &BTreeSet::new());
    let mut out = Vec::new();
    if tx.failed {
        return out;
    }
    for op in &tx.ops {
        match op {
            Op::CreateAccount {
                account, lamports, ..
            } if reading.is_stake_account(account) => {
                out.push((account.clone(), Flow::Deposit(*lamports)));
            }
            Op::SolTransfer { to, lamports, .. } if reading.is_stake_account(to) => {
                out.push((to.clone(), Flow::Deposit(*lamports)));
            }
            Op::Stake(
                StakeOp::Split {
                    stake: from,
                    into,
                    lamports,
                    ..
                }
                | StakeOp::Move {
                    from,
                    into,
                    lamports,
                    ..
                },
            ) => {
                out.push((from.clone(), Flow::Withdrawal(*lamports)));
                out.push((into.clone(), Flow::Deposit(*lamports)));
            }
            Op::Stake(StakeOp::Merge { from, into, .. }) => {
                let all = lamports(tx, from).0;
                out.push((from.clone(), Flow::Withdrawal(all)));
                out.push((into.clone(), Flow::Deposit(all)));
            }
            Op::Stake(StakeOp::Withdraw {
                stake, lamports, ..
            }) => {
                out.push((stake.clone(), Flow::Withdrawal(*lamports)));
            }
            _ => {}
        }
    }
    out
}
