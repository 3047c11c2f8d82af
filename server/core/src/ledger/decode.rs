//! Transactions into legs, for one wallet.
//!
//! The decoder starts from balance changes, not from instructions: for each
//! asset, the wallet's change is read from `preBalances`/`postBalances`
//! (native SOL of the wallet's own account) and `pre`/`postTokenBalances`
//! (every token account the wallet owns, per mint). Instructions only
//! explain that change: the network fee, rent paid into accounts the wallet
//! created and rent returned from accounts it closed are split off first;
//! what remains per asset is a swap (when some asset came in and another
//! went out), a transfer, or an airdrop. Every lamport and every atomic
//! token unit of the change is therefore in exactly one leg (SPEC S4), and
//! [`balance_changes`] is the independent reading tests compare against.
//!
//! Swaps through any program are recognised the same way, from balance
//! changes; wrapped-SOL accounts the transaction creates and closes never
//! appear in the wallet's balances at both ends, so they net out.
//!
//! Protocols whose movements a balance change alone would misname have
//! their own module in [`super::protocols`]: SOL into or out of the
//! wallet's own stake accounts is split off after rent
//! ([`super::protocols::stake`]), and SOL a Jito tip-distribution claim
//! pays the wallet is a `mev_reward`, not a transfer.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    model::{Counterparty, CounterpartyKind, Direction, Leg, OperationType, SOL, SOL_DECIMALS},
    protocols::stake::{self, STAKE_PROGRAM},
    tx::{
        ATA_PROGRAM, COMPUTE_BUDGET_PROGRAM, MEMO_PROGRAMS, NATIVE_MINT, Op, SYSTEM_PROGRAM,
        TOKEN_2022_PROGRAM, TOKEN_PROGRAM, TxView,
    },
};

/// An inbound token the wallet did not sign for is `airdrop_spam` when the
/// same transaction credits that mint to at least this many owners.
pub const SPAM_MIN_RECIPIENTS: usize = 3;

/// The wallet's balance change per asset ([`SOL`] or a mint), read straight
/// from the transaction's balances. Zero changes are left out.
pub fn balance_changes(tx: &TxView, wallet: &str) -> BTreeMap<String, i128> {
    let mut changes = BTreeMap::new();
    if let Some(w) = tx.index_of(wallet) {
        let delta = i128::from(tx.post_lamports[w]) - i128::from(tx.pre_lamports[w]);
        changes.insert(SOL.to_owned(), delta);
    }
    for (mint, (delta, _)) in token_changes(tx, wallet) {
        changes.insert(mint, delta);
    }
    changes.retain(|_, d| *d != 0);
    changes
}

/// Per mint: the change over the token accounts `wallet` owns, and decimals.
fn token_changes(tx: &TxView, wallet: &str) -> BTreeMap<String, (i128, u8)> {
    let mut out: BTreeMap<String, (i128, u8)> = BTreeMap::new();
    let owned = |b: &&super::tx::TokenBalance| b.owner.as_deref() == Some(wallet);
    for b in tx.post_tokens.iter().filter(owned) {
        let entry = out.entry(b.mint.clone()).or_insert((0, b.decimals));
        entry.0 += b.amount as i128;
    }
    for b in tx.pre_tokens.iter().filter(owned) {
        let entry = out.entry(b.mint.clone()).or_insert((0, b.decimals));
        entry.0 -= b.amount as i128;
    }
    out
}

fn lamports(tx: &TxView, account: &str) -> (u64, u64) {
    tx.index_of(account)
        .map(|i| (tx.pre_lamports[i], tx.post_lamports[i]))
        .unwrap_or((0, 0))
}

/// Wrapped SOL held in a token account (counted in its lamports, but not rent).
fn wrapped(balances: &[super::tx::TokenBalance], account: &str) -> u64 {
    balances
        .iter()
        .find(|b| b.account == account && b.mint == NATIVE_MINT)
        .map(|b| u64::try_from(b.amount).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn is_infrastructure(program: &str) -> bool {
    matches!(
        program,
        SYSTEM_PROGRAM
            | TOKEN_PROGRAM
            | TOKEN_2022_PROGRAM
            | ATA_PROGRAM
            | COMPUTE_BUDGET_PROGRAM
            | STAKE_PROGRAM
    ) || MEMO_PROGRAMS.contains(&program)
}

struct Context<'a> {
    tx: &'a TxView,
    wallet: &'a str,
    owned_accounts: BTreeSet<&'a str>,
    programs: BTreeSet<&'a str>,
}

impl Context<'_> {
    fn kind(&self, address: &str) -> CounterpartyKind {
        if self.programs.contains(address) {
            CounterpartyKind::Program
        } else if self
            .tx
            .pre_tokens
            .iter()
            .chain(&self.tx.post_tokens)
            .any(|b| b.account == address)
        {
            CounterpartyKind::TokenAccount
        } else {
            CounterpartyKind::Wallet
        }
    }

    fn owner_of(&self, token_account: &str) -> Option<&str> {
        self.tx
            .pre_tokens
            .iter()
            .chain(&self.tx.post_tokens)
            .find(|b| b.account == token_account)
            .and_then(|b| b.owner.as_deref())
    }

    fn mint_of(&self, token_account: &str) -> Option<&str> {
        self.tx
            .pre_tokens
            .iter()
            .chain(&self.tx.post_tokens)
            .find(|b| b.account == token_account)
            .map(|b| b.mint.as_str())
    }

    /// The other side of a token transfer: its owner when known.
    fn token_party(&self, token_account: &str, direction: Direction) -> Counterparty {
        match self.owner_of(token_account) {
            Some(owner) => Counterparty {
                address: owner.to_owned(),
                direction,
                kind: self.kind(owner),
            },
            None => Counterparty {
                address: token_account.to_owned(),
                direction,
                kind: CounterpartyKind::TokenAccount,
            },
        }
    }

    fn is_mine(&self, address: &str) -> bool {
        address == self.wallet || self.owned_accounts.contains(address)
    }

    /// Who moved `mint` to or from the wallet in this transaction.
    fn transfer_parties(&self, mint: &str) -> Vec<Counterparty> {
        let mut out: Vec<Counterparty> = Vec::new();
        let mut push = |c: Counterparty| {
            if !out.contains(&c) {
                out.push(c);
            }
        };
        for op in &self.tx.ops {
            match op {
                Op::SolTransfer { from, to, .. } if mint == SOL => {
                    if from == self.wallet && !self.is_mine(to) {
                        push(Counterparty {
                            address: to.clone(),
                            direction: Direction::Out,
                            kind: self.kind(to),
                        });
                    } else if to == self.wallet && !self.is_mine(from) {
                        push(Counterparty {
                            address: from.clone(),
                            direction: Direction::In,
                            kind: self.kind(from),
                        });
                    }
                }
                Op::TokenTransfer {
                    source,
                    destination,
                    ..
                } if mint != SOL => {
                    let source_mine = self.owned_accounts.contains(source.as_str());
                    let dest_mine = self.owned_accounts.contains(destination.as_str());
                    let of_mint = self.mint_of(source) == Some(mint)
                        || self.mint_of(destination) == Some(mint);
                    if !of_mint || source_mine == dest_mine {
                        continue;
                    }
                    if source_mine {
                        push(self.token_party(destination, Direction::Out));
                    } else {
                        push(self.token_party(source, Direction::In));
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn swap_programs(&self, direction: Direction) -> Vec<Counterparty> {
        let mut seen = BTreeSet::new();
        self.tx
            .programs
            .iter()
            .filter(|p| !is_infrastructure(p) && seen.insert(p.as_str()))
            .map(|p| Counterparty {
                address: p.clone(),
                direction,
                kind: CounterpartyKind::Program,
            })
            .collect()
    }

    fn account_party(&self, account: &str, direction: Direction) -> Counterparty {
        Counterparty {
            address: account.to_owned(),
            direction,
            kind: self.kind(account),
        }
    }

    /// Whether a token transfer instruction moved `mint` into the wallet.
    fn transferred_in(&self, mint: &str) -> bool {
        self.tx.ops.iter().any(|op| {
            matches!(op, Op::TokenTransfer { destination, source, .. }
                if self.owned_accounts.contains(destination.as_str())
                    && !self.owned_accounts.contains(source.as_str())
                    && (self.mint_of(destination) == Some(mint) || self.mint_of(source) == Some(mint)))
        })
    }

    /// Whether an inbound `mint` looks like a mass distribution.
    fn looks_like_spam(&self, mint: &str) -> bool {
        let mut credited: BTreeSet<&str> = BTreeSet::new();
        for post in self.tx.post_tokens.iter().filter(|b| b.mint == mint) {
            let before = self
                .tx
                .pre_tokens
                .iter()
                .find(|b| b.account == post.account)
                .map_or(0, |b| b.amount);
            if post.amount > before
                && let Some(owner) = post.owner.as_deref()
            {
                credited.insert(owner);
            }
        }
        credited.len() >= SPAM_MIN_RECIPIENTS
    }
}

/// The legs of `tx` for `wallet`, in a fixed order: fee, rent deposits, rent
/// refunds, stake movements, then one leg per remaining asset (SOL first,
/// then mints in order). Empty when the transaction did not change the
/// wallet's balances.
pub fn legs(tx: &TxView, wallet: &str) -> Vec<Leg> {
    legs_with_stake_accounts(tx, wallet, &BTreeSet::new())
}

/// [`legs`], knowing `stake_accounts` to be the wallet's already (found by
/// the scanner): SOL sent to one of them is a `stake_deposit` even when
/// the transaction has no stake instruction that says so.
pub fn legs_with_stake_accounts(
    tx: &TxView,
    wallet: &str,
    stake_accounts: &BTreeSet<String>,
) -> Vec<Leg> {
    let owned_accounts: BTreeSet<&str> = tx
        .pre_tokens
        .iter()
        .chain(&tx.post_tokens)
        .filter(|b| b.owner.as_deref() == Some(wallet))
        .map(|b| b.account.as_str())
        .collect();
    let programs: BTreeSet<&str> = tx
        .programs
        .iter()
        .map(String::as_str)
        .chain(tx.ops.iter().filter_map(|op| match op {
            Op::Other { program } => Some(program.as_str()),
            _ => None,
        }))
        .collect();
    let ctx = Context {
        tx,
        wallet,
        owned_accounts,
        programs,
    };
    let mut out: Vec<(OperationType, String, i128, u8, Vec<Counterparty>)> = Vec::new();

    let sol_delta = tx
        .index_of(wallet)
        .map(|w| i128::from(tx.post_lamports[w]) - i128::from(tx.pre_lamports[w]))
        .unwrap_or(0);
    let fee = if tx.fee_payer() == Some(wallet) {
        i128::from(tx.fee)
    } else {
        0
    };
    if fee > 0 {
        out.push((
            OperationType::NetworkFee,
            SOL.to_owned(),
            -fee,
            SOL_DECIMALS,
            Vec::new(),
        ));
    }

    // Rent: accounts the wallet funded that exist at the end, and accounts
    // closed into the wallet that existed at the start.
    let mut explained = -fee;
    let mut deposited = BTreeSet::new();
    let mut refunded = BTreeSet::new();
    let staking = stake::Reading::read(tx, wallet, stake_accounts);
    if !tx.failed {
        for op in &tx.ops {
            match op {
                // Funding a stake account is no rent: the stake reading
                // below says whose SOL it stays.
                Op::CreateAccount { account, .. } if staking.is_stake_account(account) => {}
                Op::CreateAccount {
                    funder, account, ..
                }
                | Op::CreateTokenAccount { funder, account }
                    if funder == wallet && deposited.insert(account.as_str()) =>
                {
                    let (pre, post) = lamports(tx, account);
                    let rent = post.saturating_sub(wrapped(&tx.post_tokens, account));
                    if pre == 0 && rent > 0 {
                        let rent = i128::from(rent);
                        explained -= rent;
                        out.push((
                            OperationType::RentDeposit,
                            SOL.to_owned(),
                            -rent,
                            SOL_DECIMALS,
                            vec![ctx.account_party(account, Direction::Out)],
                        ));
                    }
                }
                Op::CloseAccount {
                    account,
                    destination,
                } if destination == wallet && refunded.insert(account.as_str()) => {
                    let (pre, post) = lamports(tx, account);
                    let rent = pre.saturating_sub(wrapped(&tx.pre_tokens, account));
                    if post == 0 && rent > 0 {
                        let rent = i128::from(rent);
                        explained += rent;
                        out.push((
                            OperationType::RentRefund,
                            SOL.to_owned(),
                            rent,
                            SOL_DECIMALS,
                            vec![ctx.account_party(account, Direction::In)],
                        ));
                    }
                }
                _ => {}
            }
        }
    }

    for leg in staking.legs {
        explained += leg.amount;
        out.push((
            leg.operation_type,
            SOL.to_owned(),
            leg.amount,
            SOL_DECIMALS,
            vec![leg.counterparty],
        ));
    }

    // What is left per asset.
    let mut remaining: Vec<(String, i128, u8)> = Vec::new();
    let sol_rest = sol_delta - explained;
    if sol_rest != 0 {
        remaining.push((SOL.to_owned(), sol_rest, SOL_DECIMALS));
    }
    for (mint, (delta, decimals)) in token_changes(tx, wallet) {
        if delta != 0 {
            remaining.push((mint, delta, decimals));
        }
    }
    let any_in = remaining.iter().any(|(_, d, _)| *d > 0);
    let any_out = remaining.iter().any(|(_, d, _)| *d < 0);
    let signed = tx
        .index_of(wallet)
        .is_some_and(|w| tx.signers.get(w).copied().unwrap_or(false));
    for (mint, delta, decimals) in remaining {
        let direction = if delta > 0 {
            Direction::In
        } else {
            Direction::Out
        };
        let (operation, parties) = if any_in && any_out {
            let mut parties = ctx.swap_programs(direction);
            if parties.is_empty() {
                parties = ctx.transfer_parties(&mint);
            }
            (OperationType::Swap, parties)
        } else if delta > 0 && mint != SOL && !signed && ctx.looks_like_spam(&mint) {
            (OperationType::AirdropSpam, ctx.transfer_parties(&mint))
        } else if delta > 0 && mint != SOL && !signed && !ctx.transferred_in(&mint) {
            // Tokens that arrived unasked and not by a transfer: minted
            // (or otherwise created) straight into the wallet.
            (OperationType::Airdrop, ctx.transfer_parties(&mint))
        } else if delta > 0 && mint == SOL && stake::is_mev_claim(tx) {
            // Jito tip distribution paid the wallet its MEV tips.
            (OperationType::MevReward, ctx.swap_programs(direction))
        } else if delta > 0 {
            (OperationType::TransferIn, ctx.transfer_parties(&mint))
        } else {
            (OperationType::TransferOut, ctx.transfer_parties(&mint))
        };
        let parties = parties
            .into_iter()
            .filter(|p| p.direction == direction)
            .collect();
        out.push((operation, mint, delta, decimals, parties));
    }

    out.into_iter()
        .enumerate()
        .map(
            |(index, (operation_type, mint, amount, decimals, counterparties))| Leg {
                signature: tx.signature.clone(),
                slot: tx.slot,
                block_time: tx.block_time,
                index: u32::try_from(index).unwrap_or(u32::MAX),
                operation_type,
                mint,
                amount,
                decimals,
                counterparties,
            },
        )
        .collect()
}

/// Sum legs per asset, leaving out zeros: equal to [`balance_changes`]
/// for every transaction and wallet (SPEC S4).
pub fn sum_by_asset(legs: &[Leg]) -> BTreeMap<String, i128> {
    let mut sums = BTreeMap::new();
    for leg in legs {
        *sums.entry(leg.mint.clone()).or_insert(0) += leg.amount;
    }
    sums.retain(|_, s| *s != 0);
    sums
}
