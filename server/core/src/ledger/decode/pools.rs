//! The wallet's pool positions in one transaction (`protocols::liquidity`):
//! liquidity added and removed, the receipt the pool mints or burns for it,
//! fees and rewards claimed, a zap's swap told apart from its deposit, and
//! the rent of a closed position account coming back. A child of
//! `ledger::decode`, whose context and drafts it uses, kept apart so that
//! the decoder's entry point only calls it.

use std::collections::BTreeSet;

use super::{Context, Draft, lamports};
use crate::ledger::{
    model::{Direction, OperationType, SOL, SOL_DECIMALS},
    protocols::{self, liquidity::Direction as Liq},
    tx::Op,
};

/// What AMM liquidity instructions did with the wallet's pool positions.
/// Adding: every asset that left the wallet is a `position_deposit` into
/// the position, and a token that came in (the LP token or position NFT
/// the pool mints for it) is the position's receipt, a `position_deposit`
/// with a positive amount. Removing: what came back is a
/// `position_withdraw`, a token that left (the LP token burned, the NFT
/// closed) the receipt handed back, a `position_withdraw` with a negative
/// amount. A transaction that both adds and removes reads every outflow as
/// a deposit and every inflow as a withdrawal; a fee or reward claim alone
/// reads every inflow as `interest`. A zap (part of one token swapped for
/// the other in the same transaction) is split by [`zap`]; the rent of a
/// position account the removal closed is a `rent_refund`.
pub(super) fn liquidity(
    ctx: &Context<'_>,
    remaining: &mut Vec<(String, i128, u8)>,
    out: &mut Vec<Draft>,
) {
    let actions: Vec<protocols::liquidity::LiquidityAction> = protocols::liquidity::actions(ctx.tx)
        .into_iter()
        .filter(|a| a.owned_by(ctx.wallet))
        .collect();
    let Some(first) = actions.first() else {
        return;
    };
    let adds = actions.iter().any(|a| a.direction == Liq::Add);
    let removes = actions.iter().any(|a| a.direction == Liq::Remove);
    let position = first.position.clone();
    let router = first.program.name;
    let leg = |operation: OperationType, mint: &str, amount: i128, decimals: u8| {
        let direction = if amount > 0 {
            Direction::In
        } else {
            Direction::Out
        };
        let mut draft = Draft::new(
            operation,
            mint.to_owned(),
            amount,
            decimals,
            vec![ctx.account_party(&position, direction)],
        );
        draft.position = Some(position.clone());
        draft.router = Some(router.to_owned());
        draft
    };
    if removes {
        closed_position_rent(ctx, &actions, remaining, out);
    }
    let temporary = temporary_accounts(ctx);
    let moved = protocols::liquidity::moved(ctx.tx, ctx.wallet, |account| {
        if ctx.owned_accounts.contains(account) {
            ctx.mint_of(account).map(str::to_owned)
        } else if temporary.contains(account) {
            Some(SOL.to_owned())
        } else {
            None
        }
    });
    // Fees and rewards a claim paid (its own transfers into the wallet):
    // the position's yield, income when received, also when the same
    // transaction removes liquidity (Orca's close: decrease, collect
    // fees, collect rewards, close) or adds what was claimed back in.
    for (asset, amount) in &moved.claimed {
        let decimals = decimals_of(ctx, asset);
        out.push(leg(OperationType::Interest, asset, *amount, decimals));
        match remaining.iter_mut().find(|(m, _, _)| m == asset) {
            Some(entry) => entry.1 -= amount,
            None => remaining.push((asset.clone(), -amount, decimals)),
        }
    }
    if adds != removes && zap(ctx, adds, &moved, remaining, out, &leg) {
        return;
    }
    // A claim alone (fees, rewards) whose transfers the transaction does
    // not show: what came in is the position's yield. Beside an add or
    // remove it cannot be told apart from the liquidity in the balances
    // and joins that move.
    let claim_only = !adds && !removes;
    for (mint, delta, decimals) in remaining.iter_mut() {
        if *delta == 0 {
            continue;
        }
        let incoming = *delta > 0;
        let token = mint != SOL;
        let operation = match (adds, removes, incoming) {
            _ if claim_only && incoming => OperationType::Interest,
            _ if claim_only => continue,
            (true, true, false) | (true, false, false) => OperationType::PositionDeposit,
            (true, true, true) | (false, true, true) => OperationType::PositionWithdraw,
            // The receipt: minted to the wallet on the way in, handed back
            // on the way out. SOL is never one (a pool's receipt is a token).
            (true, false, true) if token => OperationType::PositionDeposit,
            (false, true, false) if token => OperationType::PositionWithdraw,
            _ => continue,
        };
        out.push(leg(operation, mint, *delta, *decimals));
        *delta = 0;
    }
}

/// A zap: the wallet's add (or remove) instructions moved, by their own
/// token transfers (`protocols::liquidity::moved`), other amounts than the
/// wallet's whole change, because the same transaction also swapped part
/// of one token for the other. What the liquidity instructions moved is
/// the deposit (or withdrawal); a token minted to (or burned from) the
/// wallet and no transfer moved is the receipt; the rest of the change
/// (the token sold, the token bought and deposited) is left for the swap
/// reading, named by its venue. Returns whether it split anything; when
/// the transfers match the whole change (no zap), or show nothing (no
/// inner instructions), the plain reading stands.
fn zap(
    ctx: &Context<'_>,
    adds: bool,
    moved: &protocols::liquidity::Moved,
    remaining: &mut Vec<(String, i128, u8)>,
    out: &mut Vec<Draft>,
    leg: &dyn Fn(OperationType, &str, i128, u8) -> Draft,
) -> bool {
    let (by_pool, sign, operation) = if adds {
        (&moved.into_pool, -1, OperationType::PositionDeposit)
    } else {
        (&moved.out_of_pool, 1, OperationType::PositionWithdraw)
    };
    let change = |asset: &str| {
        remaining
            .iter()
            .find(|(m, _, _)| m == asset)
            .map_or(0, |(_, d, _)| *d)
    };
    if by_pool.is_empty()
        || by_pool
            .iter()
            .all(|(asset, amount)| change(asset) == sign * amount)
    {
        return false;
    }
    for (asset, amount) in by_pool {
        let amount = sign * amount;
        let decimals = decimals_of(ctx, asset);
        out.push(leg(operation, asset, amount, decimals));
        match remaining.iter_mut().find(|(m, _, _)| m == asset) {
            Some(entry) => entry.1 -= amount,
            None => remaining.push((asset.clone(), -amount, decimals)),
        }
    }
    // The receipt: a token the pool minted to the wallet (or burned from
    // it), which no token transfer moved.
    let transferred = |mint: &str| {
        ctx.tx.ops.iter().any(|op| {
            matches!(op, Op::TokenTransfer { source, destination, .. }
                if (ctx.owned_accounts.contains(source.as_str())
                    || ctx.owned_accounts.contains(destination.as_str()))
                    && (ctx.mint_of(source) == Some(mint) || ctx.mint_of(destination) == Some(mint)))
        })
    };
    for (mint, delta, decimals) in remaining.iter_mut() {
        let receipt = mint != SOL
            && *delta != 0
            && (*delta > 0) == adds
            && !by_pool.contains_key(mint.as_str())
            && !transferred(mint);
        if receipt {
            out.push(leg(operation, mint, *delta, *decimals));
            *delta = 0;
        }
    }
    true
}

/// A position account the wallet's removal closed into the wallet (a
/// Raydium CLMM `close_position` closes the personal position to the NFT's
/// owner by the program's own `close`, no token or system instruction):
/// its lamports coming back are rent, a `rent_refund`, not SOL out of the
/// pool. Only what the wallet received of SOL, at most the account's
/// lamports.
fn closed_position_rent(
    ctx: &Context<'_>,
    actions: &[protocols::liquidity::LiquidityAction],
    remaining: &mut [(String, i128, u8)],
    out: &mut Vec<Draft>,
) {
    let mut seen = BTreeSet::new();
    for action in actions.iter().filter(|a| a.direction == Liq::Remove) {
        if !seen.insert(action.position.as_str()) {
            continue;
        }
        let (pre, post) = lamports(ctx.tx, &action.position);
        let Some(sol) = remaining.iter_mut().find(|(m, _, _)| m == SOL) else {
            return;
        };
        if pre == 0 || post != 0 || sol.1 <= 0 {
            continue;
        }
        let rent = i128::from(pre).min(sol.1);
        sol.1 -= rent;
        out.push(Draft::new(
            OperationType::RentRefund,
            SOL.to_owned(),
            rent,
            SOL_DECIMALS,
            vec![ctx.account_party(&action.position, Direction::In)],
        ));
    }
}

/// Accounts the wallet funded in this transaction that no token balance
/// shows: temporary wrapped-SOL accounts, whose flows are SOL's.
fn temporary_accounts<'a>(ctx: &Context<'a>) -> BTreeSet<&'a str> {
    ctx.tx
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::CreateAccount {
                funder, account, ..
            }
            | Op::CreateTokenAccount { funder, account }
                if funder == ctx.wallet && ctx.mint_of(account).is_none() =>
            {
                Some(account.as_str())
            }
            _ => None,
        })
        .collect()
}

fn decimals_of(ctx: &Context<'_>, asset: &str) -> u8 {
    if asset == SOL {
        return SOL_DECIMALS;
    }
    ctx.tx
        .pre_tokens
        .iter()
        .chain(&ctx.tx.post_tokens)
        .find(|b| b.mint == asset)
        .map_or(0, |b| b.decimals)
}
