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
//! instruction shapes are Solana's `jsonParsed` stake parser
//! (`transaction-status/src/parse_stake.rs`) and, for the `json` encoding,
//! the bincode `StakeInstruction` enum (a little-endian `u32` tag, then the
//! arguments).
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

use serde_json::Value;

use crate::ledger::{
    model::{Counterparty, CounterpartyKind, Direction, Leg, OperationType, SOL, SOL_DECIMALS},
    tx::{Op, TxView},
};

/// The native Stake program.
pub const STAKE_PROGRAM: &str = "Stake11111111111111111111111111111111111111";

/// Jito's tip-distribution program: its `claim` pays MEV tips out.
pub const JITO_TIP_DISTRIBUTION_PROGRAM: &str = "4R3gSG8BpU4t19KYj8CfnbtRpnT8gtk4dvTHxVRwc2r7";

/// Which of a stake account's two authorities an `authorize` moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// May delegate, deactivate, split and merge.
    Staker,
    /// May withdraw and change either authority: the owner in substance.
    Withdrawer,
}

/// A stake instruction, reduced to the accounts and lamports that say
/// whose SOL moved where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StakeOp {
    Initialize {
        stake: String,
        staker: String,
        withdrawer: String,
    },
    Authorize {
        stake: String,
        /// The authority that signed (for the `…WithSeed` forms, the base).
        authority: String,
        new_authority: String,
        role: Role,
    },
    Delegate {
        stake: String,
        authority: String,
    },
    Deactivate {
        stake: String,
        authority: String,
    },
    Split {
        stake: String,
        into: String,
        authority: String,
        lamports: u64,
    },
    Merge {
        from: String,
        into: String,
        authority: String,
    },
    Withdraw {
        stake: String,
        to: String,
        authority: String,
        lamports: u64,
    },
    /// `moveStake` / `moveLamports`: between two stake accounts of the
    /// same authorities.
    Move {
        from: String,
        into: String,
        authority: String,
        lamports: u64,
    },
    /// `setLockup`, `deactivateDelinquent` and the like: nothing moves.
    Other {
        stake: String,
    },
}

impl StakeOp {
    /// The stake accounts the instruction names.
    pub fn stake_accounts(&self) -> Vec<&str> {
        match self {
            StakeOp::Initialize { stake, .. }
            | StakeOp::Authorize { stake, .. }
            | StakeOp::Delegate { stake, .. }
            | StakeOp::Deactivate { stake, .. }
            | StakeOp::Withdraw { stake, .. }
            | StakeOp::Other { stake } => vec![stake],
            StakeOp::Split { stake, into, .. } => vec![stake, into],
            StakeOp::Merge { from, into, .. } | StakeOp::Move { from, into, .. } => {
                vec![from, into]
            }
        }
    }

    /// The authority that signed it, if the instruction names one.
    pub fn authority(&self) -> Option<&str> {
        match self {
            StakeOp::Authorize { authority, .. }
            | StakeOp::Delegate { authority, .. }
            | StakeOp::Deactivate { authority, .. }
            | StakeOp::Split { authority, .. }
            | StakeOp::Merge { authority, .. }
            | StakeOp::Withdraw { authority, .. }
            | StakeOp::Move { authority, .. } => Some(authority),
            StakeOp::Initialize { .. } | StakeOp::Other { .. } => None,
        }
    }
}

fn text(info: &Value, key: &str) -> Option<String> {
    info[key].as_str().map(str::to_owned)
}

fn role(value: &Value) -> Option<Role> {
    match value.as_str()? {
        "Staker" => Some(Role::Staker),
        "Withdrawer" => Some(Role::Withdrawer),
        _ => None,
    }
}

/// A `jsonParsed` stake instruction (`parsed.type`, `parsed.info`);
/// `None` for a shape this reading does not know.
pub fn parsed(kind: &str, info: &Value) -> Option<StakeOp> {
    let stake = || text(info, "stakeAccount");
    Some(match kind {
        "initialize" => StakeOp::Initialize {
            stake: stake()?,
            staker: text(&info["authorized"], "staker")?,
            withdrawer: text(&info["authorized"], "withdrawer")?,
        },
        "initializeChecked" => StakeOp::Initialize {
            stake: stake()?,
            staker: text(info, "staker")?,
            withdrawer: text(info, "withdrawer")?,
        },
        "authorize" | "authorizeChecked" => StakeOp::Authorize {
            stake: stake()?,
            authority: text(info, "authority")?,
            new_authority: text(info, "newAuthority")?,
            role: role(&info["authorityType"])?,
        },
        "authorizeWithSeed" | "authorizeCheckedWithSeed" => StakeOp::Authorize {
            stake: stake()?,
            authority: text(info, "authorityBase")?,
            new_authority: text(info, "newAuthorized")?,
            role: role(&info["authorityType"])?,
        },
        "delegate" => StakeOp::Delegate {
            stake: stake()?,
            authority: text(info, "stakeAuthority")?,
        },
        "deactivate" => StakeOp::Deactivate {
            stake: stake()?,
            authority: text(info, "stakeAuthority")?,
        },
        "split" => StakeOp::Split {
            stake: stake()?,
            into: text(info, "newSplitAccount")?,
            authority: text(info, "stakeAuthority")?,
            lamports: info["lamports"].as_u64()?,
        },
        "merge" => StakeOp::Merge {
            from: text(info, "source")?,
            into: text(info, "destination")?,
            authority: text(info, "stakeAuthority")?,
        },
        "withdraw" => StakeOp::Withdraw {
            stake: stake()?,
            to: text(info, "destination")?,
            authority: text(info, "withdrawAuthority")?,
            lamports: info["lamports"].as_u64()?,
        },
        "moveStake" | "moveLamports" => StakeOp::Move {
            from: text(info, "source")?,
            into: text(info, "destination")?,
            authority: text(info, "stakeAuthority")?,
            lamports: info["lamports"].as_u64()?,
        },
        _ => StakeOp::Other { stake: stake()? },
    })
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    data.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
}

fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    data.get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
}

fn key_at(data: &[u8], at: usize) -> Option<String> {
    data.get(at..at + 32).map(|b| bs58::encode(b).into_string())
}

fn role_at(data: &[u8], at: usize) -> Option<Role> {
    match u32_at(data, at)? {
        0 => Some(Role::Staker),
        1 => Some(Role::Withdrawer),
        _ => None,
    }
}

/// A raw (`json` encoding) stake instruction: the bincode
/// `StakeInstruction` tag and arguments, and its accounts in order.
pub fn raw(accounts: &[String], data: &[u8]) -> Option<StakeOp> {
    let account = |i: usize| accounts.get(i).cloned();
    Some(match u32_at(data, 0)? {
        // Initialize(Authorized { staker, withdrawer }, Lockup): [stake, rent]
        0 => StakeOp::Initialize {
            stake: account(0)?,
            staker: key_at(data, 4)?,
            withdrawer: key_at(data, 36)?,
        },
        // Authorize(Pubkey, StakeAuthorize): [stake, clock, authority, custodian?]
        1 => StakeOp::Authorize {
            stake: account(0)?,
            authority: account(2)?,
            new_authority: key_at(data, 4)?,
            role: role_at(data, 36)?,
        },
        // DelegateStake: [stake, vote, clock, history, config, authority]
        2 => StakeOp::Delegate {
            stake: account(0)?,
            authority: account(5)?,
        },
        // Split(u64): [stake, split stake, authority]
        3 => StakeOp::Split {
            stake: account(0)?,
            into: account(1)?,
            authority: account(2)?,
            lamports: u64_at(data, 4)?,
        },
        // Withdraw(u64): [stake, recipient, clock, history, withdraw authority, custodian?]
        4 => StakeOp::Withdraw {
            stake: account(0)?,
            to: account(1)?,
            authority: account(4)?,
            lamports: u64_at(data, 4)?,
        },
        // Deactivate: [stake, clock, authority]
        5 => StakeOp::Deactivate {
            stake: account(0)?,
            authority: account(2)?,
        },
        // Merge: [destination, source, clock, history, authority]
        7 => StakeOp::Merge {
            into: account(0)?,
            from: account(1)?,
            authority: account(4)?,
        },
        // AuthorizeWithSeed(new pubkey, StakeAuthorize, seed, owner): [stake, base, …]
        8 => StakeOp::Authorize {
            stake: account(0)?,
            authority: account(1)?,
            new_authority: key_at(data, 4)?,
            role: role_at(data, 36)?,
        },
        // InitializeChecked: [stake, rent, staker, withdrawer]
        9 => StakeOp::Initialize {
            stake: account(0)?,
            staker: account(2)?,
            withdrawer: account(3)?,
        },
        // AuthorizeChecked(StakeAuthorize): [stake, clock, authority, new authority, custodian?]
        10 => StakeOp::Authorize {
            stake: account(0)?,
            authority: account(2)?,
            new_authority: account(3)?,
            role: role_at(data, 4)?,
        },
        // AuthorizeCheckedWithSeed(StakeAuthorize, seed, owner): [stake, base, clock, new authority, …]
        11 => StakeOp::Authorize {
            stake: account(0)?,
            authority: account(1)?,
            new_authority: account(3)?,
            role: role_at(data, 4)?,
        },
        // MoveStake(u64) / MoveLamports(u64): [source, destination, authority]
        16 | 17 => StakeOp::Move {
            from: account(0)?,
            into: account(1)?,
            authority: account(2)?,
            lamports: u64_at(data, 4)?,
        },
        // SetLockup, GetMinimumDelegation, DeactivateDelinquent, …
        _ => StakeOp::Other { stake: account(0)? },
    })
}

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
