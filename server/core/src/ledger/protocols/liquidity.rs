//! Liquidity positions in AMM pools (issue 22, item 1): adding liquidity
//! moves the wallet's tokens into a position it keeps (a share of a pool,
//! or a concentrated-liquidity position), removing it takes them back.
//! Neither is a sale or a purchase: the pooled tokens are a
//! `position_deposit` into the position and a `position_withdraw` out of it,
//! and the receipt the pool hands over for the position (an LP token, a
//! position NFT) is the position's key, not a new holding (its legs carry
//! the position's sign: a receipt in is part of the deposit, a receipt
//! burned part of the withdrawal, and cost basis moves no lots for either).
//!
//! Peers read it the same way when asked to: Koinly tags these
//! transactions "Liquidity in" / "Liquidity out"
//! (https://support.koinly.io/en/articles/9490054-liquidity-providing-lping-liquidity-in-out);
//! CoinTracker's "Treat liquidity pool transactions as non-taxable"
//! setting carries the outgoing tokens' basis through the pool
//! (https://support.cointracker.io/hc/en-us/articles/20897601327505-Understand-liquidity-pool-transactions).
//! Whether adding liquidity is a disposal is not settled by the IRS, HMRC
//! (CRYPTO61620: depends on whether beneficial ownership passes) or the
//! ATO; docs/ledger.md says so.
//!
//! Instructions are told apart by their Anchor discriminators
//! (`sha256("global:<name>")[..8]`), and each row names where the
//! instruction puts the position and its owner, from the program's own
//! account order:
//! - Orca Whirlpools `increase_liquidity` / `decrease_liquidity`
//!   `[whirlpool, token_program, position_authority (2), position (3), …]`
//!   (orca-so/whirlpools `sdk/src/instructions/increase-liquidity-ix.ts`);
//!   the `_v2` forms add the second token program and the memo program
//!   before the authority: `[whirlpool, token_program_a, token_program_b,
//!   memo_program, position_authority (4), position (5), …]`.
//! - Raydium CPMM `deposit` / `withdraw` `[owner (0), authority,
//!   pool_state (2), owner_lp_token, …]` (raydium-io/raydium-cp-swap
//!   `programs/cp-swap/src/instructions/deposit.rs`): the position is the
//!   wallet's share of the pool, keyed by the pool.
//! - Meteora DLMM `add_liquidity*` / `remove_liquidity*` `[position (0),
//!   lb_pair, bin_array_bitmap_extension, user_token_x, user_token_y,
//!   reserve_x, reserve_y, token_x_mint, token_y_mint, bin_array_lower,
//!   bin_array_upper, sender (11), …]` (the `lb_clmm` IDL's
//!   `ModifyLiquidity` accounts).
//!
//! Raydium AMM v4 and CLMM and Meteora's constant-product pools are
//! registered as venues only: their liquidity instructions keep the
//! conservative reading (docs/ledger.md, known limits).

use super::{Discriminator, METEORA_DLMM, ORCA_WHIRLPOOLS, Program, RAYDIUM_CPMM, lookup};
use crate::ledger::tx::{Invocation, TxView};

/// Which way an instruction moved liquidity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    Add,
    Remove,
}

/// One liquidity instruction, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiquidityAction {
    pub instruction: &'static str,
    pub direction: Direction,
    pub program: &'static Program,
    /// The position account, or the pool for a pool whose shares are a
    /// fungible LP token.
    pub position: String,
    pub owner: String,
}

struct Row {
    name: &'static str,
    tag: Discriminator,
    direction: Direction,
    position: usize,
    owner: usize,
}

const fn row(
    name: &'static str,
    tag: Discriminator,
    direction: Direction,
    position: usize,
    owner: usize,
) -> Row {
    Row {
        name,
        tag,
        direction,
        position,
        owner,
    }
}

const WHIRLPOOLS: &[Row] = &[
    row(
        "increase_liquidity",
        [46, 156, 243, 118, 13, 205, 251, 178],
        Direction::Add,
        3,
        2,
    ),
    row(
        "decrease_liquidity",
        [160, 38, 208, 111, 104, 91, 44, 1],
        Direction::Remove,
        3,
        2,
    ),
    row(
        "increase_liquidity_v2",
        [133, 29, 89, 223, 69, 238, 176, 10],
        Direction::Add,
        5,
        4,
    ),
    row(
        "decrease_liquidity_v2",
        [58, 127, 188, 62, 79, 82, 196, 96],
        Direction::Remove,
        5,
        4,
    ),
];

const CPMM: &[Row] = &[
    row(
        "deposit",
        [242, 35, 198, 137, 82, 225, 242, 182],
        Direction::Add,
        2,
        0,
    ),
    row(
        "withdraw",
        [183, 18, 70, 156, 148, 109, 161, 34],
        Direction::Remove,
        2,
        0,
    ),
];

const DLMM: &[Row] = &[
    row(
        "add_liquidity",
        [181, 157, 89, 67, 143, 182, 52, 72],
        Direction::Add,
        0,
        11,
    ),
    row(
        "add_liquidity_by_strategy",
        [7, 3, 150, 127, 148, 40, 61, 200],
        Direction::Add,
        0,
        11,
    ),
    row(
        "add_liquidity_by_weight",
        [28, 140, 238, 99, 231, 162, 21, 149],
        Direction::Add,
        0,
        11,
    ),
    row(
        "remove_liquidity",
        [80, 85, 209, 72, 24, 206, 177, 108],
        Direction::Remove,
        0,
        11,
    ),
    row(
        "remove_liquidity_by_range",
        [26, 82, 102, 152, 240, 74, 105, 26],
        Direction::Remove,
        0,
        11,
    ),
];

fn rows(program: &str) -> &'static [Row] {
    match program {
        ORCA_WHIRLPOOLS => WHIRLPOOLS,
        RAYDIUM_CPMM => CPMM,
        METEORA_DLMM => DLMM,
        _ => &[],
    }
}

/// What a liquidity instruction did, if it is one this module reads.
pub fn read(invocation: &Invocation) -> Option<LiquidityAction> {
    let row = rows(&invocation.program)
        .iter()
        .find(|r| invocation.tag == r.tag)?;
    Some(LiquidityAction {
        instruction: row.name,
        direction: row.direction,
        program: lookup(&invocation.program)?,
        position: invocation.accounts.get(row.position)?.clone(),
        owner: invocation.accounts.get(row.owner)?.clone(),
    })
}

/// Every liquidity instruction in `tx` this module reads, in execution order.
pub fn actions(tx: &TxView) -> Vec<LiquidityAction> {
    tx.invocations.iter().filter_map(read).collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::discriminator;
    use super::*;

    #[test]
    fn discriminators_are_anchors_hash_of_the_instruction_names() {
        for row in WHIRLPOOLS.iter().chain(CPMM).chain(DLMM) {
            assert_eq!(row.tag, discriminator(row.name), "{}", row.name);
        }
    }
}
