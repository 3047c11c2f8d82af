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
    protocols::{self, Step, stake},
    tx::{NATIVE_MINT, Op, TxView},
};

mod pools;

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
            .filter(|p| !protocols::is_infrastructure(p) && seen.insert(p.as_str()))
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

/// A leg before it is numbered.
struct Draft {
    operation: OperationType,
    mint: String,
    amount: i128,
    decimals: u8,
    parties: Vec<Counterparty>,
    position: Option<String>,
    venue: Option<String>,
    router: Option<String>,
}

impl Draft {
    fn new(
        operation: OperationType,
        mint: String,
        amount: i128,
        decimals: u8,
        parties: Vec<Counterparty>,
    ) -> Self {
        Draft {
            operation,
            mint,
            amount,
            decimals,
            parties,
            position: None,
            venue: None,
            router: None,
        }
    }
}

/// The legs of `tx` for `wallet`, in a fixed order: fee, rent deposits, rent
/// refunds, stake movements, then what known order programs did with the
/// wallet's positions (deposits, withdrawals, the escrow's side of fills),
/// then one leg per remaining asset (SOL first, then mints in order). Empty
/// when the transaction changed neither the wallet's balances nor its
/// positions'.
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
    let mut out: Vec<Draft> = Vec::new();

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
        out.push(Draft::new(
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
                        out.push(Draft::new(
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
                        out.push(Draft::new(
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

    // Tips to Jito's tip accounts: a cost of the transaction, apart from
    // whatever else the SOL change was (protocols::jito_tips).
    for (account, lamports) in protocols::jito_tips::tips(tx, wallet) {
        let lamports = i128::from(lamports);
        explained -= lamports;
        out.push(Draft::new(
            OperationType::Tip,
            SOL.to_owned(),
            -lamports,
            SOL_DECIMALS,
            vec![ctx.account_party(&account, Direction::Out)],
        ));
    }

    // Token-2022 transfer fees the wallet's transfers paid: withheld from
    // the gross amount in the recipient's account for the mint's fee
    // authority, a cost of the transfer and a leg of its own, so the
    // transfer leg is what the recipient got and the two add up to what
    // left the wallet (https://spl.solana.com/token-2022/extensions#transfer-fees).
    let mut withheld: BTreeMap<String, i128> = BTreeMap::new();
    if !tx.failed {
        for op in &tx.ops {
            let Op::TokenTransfer {
                source,
                destination,
                withheld: fee,
                ..
            } = op
            else {
                continue;
            };
            if *fee == 0
                || !ctx.owned_accounts.contains(source.as_str())
                || ctx.owned_accounts.contains(destination.as_str())
            {
                continue;
            }
            let Some(mint) = ctx.mint_of(source).or_else(|| ctx.mint_of(destination)) else {
                continue;
            };
            let decimals = tx
                .pre_tokens
                .iter()
                .chain(&tx.post_tokens)
                .find(|b| b.mint == mint)
                .map_or(0, |b| b.decimals);
            *withheld.entry(mint.to_owned()).or_insert(0) += i128::from(*fee);
            out.push(Draft::new(
                OperationType::PlatformFee,
                mint.to_owned(),
                -i128::from(*fee),
                decimals,
                vec![ctx.token_party(destination, Direction::Out)],
            ));
        }
    }

    for leg in staking.legs {
        explained += leg.amount;
        out.push(Draft::new(
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
        let delta = delta + withheld.get(&mint).copied().unwrap_or(0);
        if delta != 0 {
            remaining.push((mint, delta, decimals));
        }
    }

    let (venue, router) = protocols::route(tx);
    let filled = if tx.failed {
        None
    } else {
        let filled = positions(&ctx, &mut remaining, &mut out);
        lending(&ctx, &mut remaining, &mut out);
        pools::liquidity(&ctx, &mut remaining, &mut out);
        nft_trade_fees(&ctx, &mut remaining, &mut out);
        filled
    };
    if !tx.failed {
        wraps(&ctx, &mut remaining, &mut out);
        // An order program's fill is read by `positions` (the keeper's
        // surplus is no round trip of the keeper's own: docs/ledger.md).
        if (venue.is_some() || router.is_some()) && protocols::escrow_actions(tx).is_empty() {
            round_trips(&ctx, &mut remaining, &mut out, &venue, &router);
        }
    }
    remaining.retain(|(_, d, _)| *d != 0);

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
        let fill = filled.is_some() && delta > 0;
        let (operation, parties) = if (any_in && any_out) || fill {
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
        let mut draft = Draft::new(operation, mint, delta, decimals, parties);
        if operation == OperationType::Swap {
            draft.venue = venue.clone();
            draft.router = router.clone();
        }
        out.push(draft);
    }
    // A fill's sent side (the escrow's) is a swap of the same trade.
    for draft in out.iter_mut().filter(|d| {
        d.operation == OperationType::Swap && d.position.is_some() && d.router.is_none()
    }) {
        draft.venue = venue.clone();
        draft.router = router.clone();
    }

    out.into_iter()
        .enumerate()
        .map(|(index, d)| Leg {
            signature: tx.signature.clone(),
            slot: tx.slot,
            block_time: tx.block_time,
            index: u32::try_from(index).unwrap_or(u32::MAX),
            operation_type: d.operation,
            mint: d.mint,
            amount: d.amount,
            decimals: d.decimals,
            counterparties: d.parties,
            position: d.position,
            venue: d.venue,
            router: d.router,
        })
        .collect()
}

/// The wallet's side of an asset that a position holds as `mint`: the
/// same mint, or native SOL for wrapped SOL the wallet does not hold as a
/// token (SOL and wSOL are one asset to the wallet).
fn wallet_entry(remaining: &[(String, i128, u8)], mint: &str) -> Option<usize> {
    remaining
        .iter()
        .position(|(m, _, _)| m == mint)
        .or_else(|| {
            (mint == NATIVE_MINT)
                .then(|| remaining.iter().position(|(m, _, _)| m == SOL))
                .flatten()
        })
}

/// One token account's mint and balance change in `tx` (absent on a side
/// counts as zero there).
fn token_account_change(tx: &TxView, account: &str) -> Option<(String, i128)> {
    let find = |balances: &[super::tx::TokenBalance]| {
        balances
            .iter()
            .find(|b| b.account == account)
            .map(|b| (b.mint.clone(), b.amount as i128))
    };
    match (find(&tx.pre_tokens), find(&tx.post_tokens)) {
        (Some((mint, pre)), Some((_, post))) => Some((mint, post - pre)),
        (None, Some((mint, post))) => Some((mint, post)),
        (Some((mint, pre)), None) => Some((mint, -pre)),
        (None, None) => None,
    }
}

/// What order programs did with the wallet's positions in this
/// transaction (`protocols::escrow_actions`): deposits into an order's
/// escrow, withdrawals from it, the escrow's side of fills, and the rent of
/// a closed order account coming back. Takes what it explains out of
/// `remaining`; returns the filled position, if any, so that what the
/// wallet received is read as the fill's bought side.
fn positions(
    ctx: &Context<'_>,
    remaining: &mut [(String, i128, u8)],
    out: &mut Vec<Draft>,
) -> Option<String> {
    let actions: Vec<protocols::EscrowAction> = protocols::escrow_actions(ctx.tx)
        .into_iter()
        .filter(|a| a.owner == ctx.wallet)
        .collect();
    let mut filled = None;
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for action in &actions {
        let position = action.position.as_str();
        if !seen.insert(position) {
            continue;
        }
        let steps: BTreeSet<_> = actions
            .iter()
            .filter(|a| a.position == position)
            .map(|a| a.step)
            .collect();
        let mut escrow: Vec<(String, i128, u8)> = token_changes(ctx.tx, position)
            .into_iter()
            .map(|(mint, (delta, decimals))| (mint, delta, decimals))
            .filter(|(_, delta, _)| *delta != 0)
            .collect();
        let party = |direction| ctx.account_party(position, direction);
        let program = action.program.name;
        let mut with_position = |mut draft: Draft| {
            draft.position = Some(position.to_owned());
            if draft.operation != OperationType::Swap {
                draft.router = Some(program.to_owned());
            }
            out.push(draft);
        };
        // Into the escrow from the wallet.
        if steps.contains(&Step::Open) {
            for (mint, held, _) in escrow.iter_mut().filter(|(_, d, _)| *d > 0) {
                let Some(i) = wallet_entry(remaining, mint) else {
                    continue;
                };
                let moved = (*held).min(-remaining[i].1);
                if moved > 0 {
                    *held -= moved;
                    remaining[i].1 += moved;
                    with_position(Draft::new(
                        OperationType::PositionDeposit,
                        remaining[i].0.clone(),
                        -moved,
                        remaining[i].2,
                        vec![party(Direction::Out)],
                    ));
                }
            }
        }
        // Back to the wallet from the escrow.
        if steps.contains(&Step::Close) || steps.contains(&Step::Fill) {
            for (mint, held, _) in escrow.iter_mut().filter(|(_, d, _)| *d < 0) {
                let Some(i) = wallet_entry(remaining, mint) else {
                    continue;
                };
                let moved = (-*held).min(remaining[i].1);
                if moved > 0 {
                    *held += moved;
                    remaining[i].1 -= moved;
                    with_position(Draft::new(
                        OperationType::PositionWithdraw,
                        remaining[i].0.clone(),
                        moved,
                        remaining[i].2,
                        vec![party(Direction::In)],
                    ));
                }
            }
        }
        // The escrow paid a keeper the input of a fill: the sent side of
        // the wallet's swap, from the position.
        if steps.contains(&Step::Fill) {
            for (mint, held, decimals) in escrow.iter_mut().filter(|(_, d, _)| *d < 0) {
                let (mint, decimals) = if mint == NATIVE_MINT {
                    (SOL.to_owned(), SOL_DECIMALS)
                } else {
                    (mint.clone(), *decimals)
                };
                with_position(Draft::new(
                    OperationType::Swap,
                    mint,
                    *held,
                    decimals,
                    ctx.swap_programs(Direction::Out),
                ));
                *held = 0;
                filled = Some(position.to_owned());
            }
            // The program's platform fee, taken out of the output before
            // the wallet received it: the bought side is the gross amount
            // and the fee a leg of its own, so gross and net both add up.
            // Any instruction on this order may name it (a DCA's
            // `fulfill_flash_fill` names no owner), so every one counts.
            let fee_accounts: BTreeSet<String> = protocols::escrow_actions(ctx.tx)
                .into_iter()
                .filter(|a| a.position == position)
                .filter_map(|a| a.fee_account)
                .collect();
            for account in &fee_accounts {
                let Some((mint, fee)) = token_account_change(ctx.tx, account) else {
                    continue;
                };
                let Some(i) = wallet_entry(remaining, &mint) else {
                    continue;
                };
                if fee <= 0 || remaining[i].1 <= 0 {
                    continue;
                }
                remaining[i].1 += fee;
                let mut draft = Draft::new(
                    OperationType::PlatformFee,
                    remaining[i].0.clone(),
                    -fee,
                    remaining[i].2,
                    vec![ctx.token_party(account, Direction::Out)],
                );
                draft.router = Some(program.to_owned());
                out.push(draft);
            }
        }
        // The order account itself closed, its rent back to the wallet,
        // which paid it when the order opened.
        let (pre, post) = lamports(ctx.tx, position);
        if let Some(i) = wallet_entry(remaining, SOL)
            && pre > 0
            && post == 0
            && remaining[i].1 >= i128::from(pre)
        {
            remaining[i].1 -= i128::from(pre);
            out.push(Draft::new(
                OperationType::RentRefund,
                SOL.to_owned(),
                i128::from(pre),
                SOL_DECIMALS,
                vec![party(Direction::In)],
            ));
        }
    }
    filled
}

/// What lending programs did with the wallet's positions in this
/// transaction (`protocols::lending_actions`): for each asset an
/// instruction names, the wallet's remaining change of that asset is the
/// move. Collateral going out is a `position_deposit` into the obligation,
/// coming back a `position_withdraw`; a loan coming in is a `borrow`, going
/// out a `repay`. The whole remaining change of the asset is taken: the
/// instruction's own amount is in its data, which the view does not keep,
/// and a transaction that also trades the same asset elsewhere would be
/// misread (docs/ledger.md, known limits).
fn lending(ctx: &Context<'_>, remaining: &mut [(String, i128, u8)], out: &mut Vec<Draft>) {
    for action in protocols::lending_actions(ctx.tx)
        .into_iter()
        .filter(|a| a.owner == ctx.wallet)
    {
        for (role, asset) in &action.moves {
            let mint = match asset {
                protocols::Asset::Mint(mint) => mint.as_str(),
                protocols::Asset::TokenAccount(account) => {
                    ctx.mint_of(account).unwrap_or(NATIVE_MINT)
                }
            };
            let Some(i) = wallet_entry(remaining, mint) else {
                continue;
            };
            let delta = remaining[i].1;
            if delta == 0 {
                continue;
            }
            let incoming = delta > 0;
            let operation = match (role, incoming) {
                (protocols::Role::Collateral, false) => OperationType::PositionDeposit,
                (protocols::Role::Collateral, true) => OperationType::PositionWithdraw,
                (protocols::Role::Debt, true) => OperationType::Borrow,
                (protocols::Role::Debt, false) => OperationType::Repay,
            };
            let direction = if incoming {
                Direction::In
            } else {
                Direction::Out
            };
            remaining[i].1 = 0;
            let mut draft = Draft::new(
                operation,
                remaining[i].0.clone(),
                delta,
                remaining[i].2,
                vec![ctx.account_party(&action.position, direction)],
            );
            draft.position = Some(action.position.clone());
            draft.router = Some(action.program.name.to_owned());
            out.push(draft);
        }
    }
}

/// An arbitrage route that sells an asset and buys it back in the same
/// transaction (SOL -> USDC -> SOL) leaves only the net of the two in the
/// wallet's balances, which would read as a one-way transfer of the
/// profit. When what remains moves one way only and the transaction went
/// through a known venue or router, the token transfers show the gross:
/// for an asset whose transfers out of the wallet's accounts and back in
/// net to exactly its remaining change, the sale and the purchase are two
/// `swap` legs of their gross amounts, and an intermediate the wallet's own
/// accounts received and passed on in full is a `swap` each way too. The
/// wallet's accounts are its token accounts and the accounts it created in
/// this transaction that no token balance shows (temporary wrapped-SOL
/// accounts, whose flows are SOL's). Anything that does not net exactly
/// keeps the usual reading.
fn round_trips(
    ctx: &Context<'_>,
    remaining: &mut [(String, i128, u8)],
    out: &mut Vec<Draft>,
    venue: &Option<String>,
    router: &Option<String>,
) {
    let live = remaining.iter().filter(|(_, d, _)| *d != 0);
    let any_in = live.clone().any(|(_, d, _)| *d > 0);
    let any_out = live.clone().any(|(_, d, _)| *d < 0);
    if any_in && any_out {
        return;
    }
    let shown = |account: &str| ctx.mint_of(account).is_some();
    let temporary: BTreeSet<&str> = ctx
        .tx
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::CreateAccount {
                funder, account, ..
            }
            | Op::CreateTokenAccount { funder, account }
                if funder == ctx.wallet && !shown(account) =>
            {
                Some(account.as_str())
            }
            _ => None,
        })
        .collect();
    let asset_of = |account: &str| -> Option<String> {
        if ctx.owned_accounts.contains(account) {
            ctx.mint_of(account).map(str::to_owned)
        } else if temporary.contains(account) {
            Some(SOL.to_owned())
        } else {
            None
        }
    };
    // Per asset: gross out of and into the wallet's accounts.
    let mut gross: BTreeMap<String, (i128, i128)> = BTreeMap::new();
    for op in &ctx.tx.ops {
        let Op::TokenTransfer {
            source,
            destination,
            amount,
            withheld,
        } = op
        else {
            continue;
        };
        match (asset_of(source), asset_of(destination)) {
            (Some(asset), None) => gross.entry(asset).or_default().0 += i128::from(*amount),
            (None, Some(asset)) => {
                gross.entry(asset).or_default().1 += i128::from(*amount - *withheld)
            }
            _ => {}
        }
    }
    let decimals_of = |mint: &str| {
        ctx.tx
            .pre_tokens
            .iter()
            .chain(&ctx.tx.post_tokens)
            .find(|b| b.mint == mint)
            .map_or(0, |b| b.decimals)
    };
    let mut swap = |mint: &str, amount: i128, decimals: u8| {
        let direction = if amount > 0 {
            Direction::In
        } else {
            Direction::Out
        };
        let mut draft = Draft::new(
            OperationType::Swap,
            mint.to_owned(),
            amount,
            decimals,
            ctx.swap_programs(direction),
        );
        draft.venue = venue.clone();
        draft.router = router.clone();
        out.push(draft);
    };
    let mut found = false;
    for (mint, delta, decimals) in remaining.iter_mut() {
        let Some(&(sold, bought)) = gross.get(mint.as_str()) else {
            continue;
        };
        if *delta == 0 || sold == 0 || bought == 0 || bought - sold != *delta {
            continue;
        }
        swap(mint, -sold, *decimals);
        swap(mint, bought, *decimals);
        *delta = 0;
        found = true;
    }
    if !found {
        return;
    }
    // Intermediates that passed through the wallet's accounts in full.
    for (mint, (sold, bought)) in &gross {
        if *sold > 0 && sold == bought && remaining.iter().all(|(m, _, _)| m != mint) {
            let decimals = if mint == SOL {
                SOL_DECIMALS
            } else {
                decimals_of(mint)
            };
            swap(mint, *bought, decimals);
            swap(mint, -sold, decimals);
        }
    }
}

/// Royalties and marketplace fees of an NFT sale the wallet is a party to
/// (`protocols::nft_sales`), split off the wallet's SOL so the trade's
/// SOL leg is the price and each fee a leg of its own (`royalty`,
/// `marketplace_fee`): gross and net both add up. What an account was paid
/// is its lamport change in the transaction; it is the wallet's cost when
/// the wallet's side pays the fees by the program's rule (less what the
/// other party paid it directly), or else only what the wallet paid it by
/// its own system transfer. The NFT must move the other way from the SOL,
/// and a buyer's fees never exceed what it paid; else nothing is split.
fn nft_trade_fees(ctx: &Context<'_>, remaining: &mut [(String, i128, u8)], out: &mut Vec<Draft>) {
    for sale in protocols::nft_sales(ctx.tx) {
        let Some(side) = sale.side_of(ctx.wallet) else {
            continue;
        };
        let Some(i) = remaining.iter().position(|(m, _, _)| m == SOL) else {
            continue;
        };
        let sol = remaining[i].1;
        let buying = side == protocols::Side::Buyer;
        let nft_moved = remaining
            .iter()
            .any(|(m, d, _)| m != SOL && *d != 0 && (*d > 0) == buying);
        if sol == 0 || (sol < 0) != buying || !nft_moved {
            continue;
        }
        let other_side = if buying { &sale.seller } else { &sale.buyer };
        let transferred = |from: &str, to: &str| -> i128 {
            ctx.tx
                .ops
                .iter()
                .filter_map(|op| match op {
                    Op::SolTransfer {
                        from: f,
                        to: t,
                        lamports,
                    } if f == from && t == to => Some(i128::from(*lamports)),
                    _ => None,
                })
                .sum()
        };
        let borne = |account: &str| -> i128 {
            let paid = if side == sale.payer {
                let (pre, post) = lamports(ctx.tx, account);
                let received = i128::from(post) - i128::from(pre);
                received
                    - other_side
                        .iter()
                        .map(|party| transferred(party.as_str(), account))
                        .sum::<i128>()
            } else {
                transferred(ctx.wallet, account)
            };
            paid.max(0)
        };
        let parties: BTreeSet<&str> = sale
            .buyer
            .iter()
            .chain(&sale.seller)
            .chain(&sale.others)
            .map(String::as_str)
            .chain([ctx.wallet, sale.program.id])
            .collect();
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut fees: Vec<(OperationType, &str, i128)> = Vec::new();
        for account in sale.fee_accounts.iter().map(String::as_str) {
            if parties.contains(account) || !seen.insert(account) {
                continue;
            }
            fees.push((OperationType::MarketplaceFee, account, borne(account)));
        }
        for account in sale.creators.iter().map(String::as_str) {
            // A creator is a wallet that existed before the sale and is no
            // token account or program.
            let (pre, _) = lamports(ctx.tx, account);
            if parties.contains(account)
                || pre == 0
                || ctx.kind(account) != CounterpartyKind::Wallet
                || !seen.insert(account)
            {
                continue;
            }
            fees.push((OperationType::Royalty, account, borne(account)));
        }
        fees.retain(|(_, _, amount)| *amount > 0);
        let total: i128 = fees.iter().map(|(_, _, a)| a).sum();
        if total == 0 || (buying && total >= -sol) {
            continue;
        }
        remaining[i].1 += total;
        for (operation, account, amount) in fees {
            let mut draft = Draft::new(
                operation,
                SOL.to_owned(),
                -amount,
                SOL_DECIMALS,
                vec![ctx.account_party(account, Direction::Out)],
            );
            draft.venue = Some(sale.program.name.to_owned());
            out.push(draft);
        }
    }
}

/// Wrapping and unwrapping SOL: native SOL that went out while the
/// wallet's wrapped-SOL balance went up by as much (or the reverse) moved
/// between the wallet's SOL and its own wSOL token account, which the
/// token program redeems one for one (`SyncNative`, `CloseAccount`:
/// https://spl.solana.com/token#wrapping-sol). That is no trade: the
/// overlap leaves `remaining` as a `position_deposit` of what went in and a
/// `position_withdraw` of what came out, with no `position` (the wSOL
/// account is the wallet's own), so cost basis, which counts SOL and wSOL
/// as one asset, moves no lots. Whatever is left of either side (SOL that
/// paid for a token as well) is read as usual.
fn wraps(ctx: &Context<'_>, remaining: &mut [(String, i128, u8)], out: &mut Vec<Draft>) {
    let Some(sol) = remaining.iter().position(|(m, _, _)| m == SOL) else {
        return;
    };
    let Some(wsol) = remaining.iter().position(|(m, _, _)| m == NATIVE_MINT) else {
        return;
    };
    let (a, b) = (remaining[sol].1, remaining[wsol].1);
    if a.signum() * b.signum() >= 0 {
        return;
    }
    let moved = a.abs().min(b.abs());
    let account = ctx
        .owned_accounts
        .iter()
        .find(|acc| ctx.mint_of(acc) == Some(NATIVE_MINT))
        .map(|acc| (*acc).to_owned());
    // Wrapping: SOL out of the wallet into its wSOL account; unwrapping:
    // the reverse.
    let (from, to) = if a < 0 { (sol, wsol) } else { (wsol, sol) };
    let party = |direction| {
        account
            .iter()
            .map(|acc| ctx.account_party(acc, direction))
            .collect::<Vec<_>>()
    };
    remaining[from].1 += moved;
    remaining[to].1 -= moved;
    out.push(Draft::new(
        OperationType::PositionDeposit,
        remaining[from].0.clone(),
        -moved,
        remaining[from].2,
        party(Direction::Out),
    ));
    out.push(Draft::new(
        OperationType::PositionWithdraw,
        remaining[to].0.clone(),
        moved,
        remaining[to].2,
        party(Direction::In),
    ));
}

/// Sum legs per asset, leaving out zeros: equal to [`balance_changes`]
/// for every transaction and wallet (SPEC S4). Legs that move a position's
/// balance rather than the wallet's (a fill's escrow side) are left out;
/// [`sum_with_positions`] counts them.
pub fn sum_by_asset(legs: &[Leg]) -> BTreeMap<String, i128> {
    let mut sums = BTreeMap::new();
    for leg in legs.iter().filter(|l| l.moves_wallet()) {
        *sums.entry(leg.mint.clone()).or_insert(0) += leg.amount;
    }
    sums.retain(|_, s| *s != 0);
    sums
}

/// The balance change of the wallet together with the positions its legs
/// name (the token accounts each position account owns), per asset, with
/// wrapped SOL counted as SOL: what [`sum_with_positions`] must equal.
pub fn balance_changes_with_positions(
    tx: &TxView,
    wallet: &str,
    legs: &[Leg],
) -> BTreeMap<String, i128> {
    let mut changes: BTreeMap<String, i128> = BTreeMap::new();
    let mut add = |mint: &str, delta: i128| {
        let key = if mint == NATIVE_MINT { SOL } else { mint };
        *changes.entry(key.to_owned()).or_insert(0) += delta;
    };
    for (mint, delta) in balance_changes(tx, wallet) {
        add(&mint, delta);
    }
    let positions: BTreeSet<&str> = legs.iter().filter_map(|l| l.position.as_deref()).collect();
    for position in positions {
        for (mint, (delta, _)) in token_changes(tx, position) {
            add(&mint, delta);
        }
    }
    changes.retain(|_, d| *d != 0);
    changes
}

/// Sum legs per asset for the wallet together with its positions: a
/// deposit or withdrawal moves an asset between the two, so it is left
/// out; everything else counts, wrapped SOL as SOL.
pub fn sum_with_positions(legs: &[Leg]) -> BTreeMap<String, i128> {
    let mut sums = BTreeMap::new();
    for leg in legs.iter().filter(|l| !l.is_position_transfer()) {
        let key = if leg.mint == NATIVE_MINT {
            SOL
        } else {
            leg.mint.as_str()
        };
        *sums.entry(key.to_owned()).or_insert(0) += leg.amount;
    }
    sums.retain(|_, s| *s != 0);
    sums
}
