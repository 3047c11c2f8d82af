//! Kamino Lend (`KLend2g3…`): an obligation account holds the owner's
//! collateral and debt in a lending market. Supplying collateral
//! (`deposit_reserve_liquidity_and_obligation_collateral`, v1 and v2) moves
//! the wallet's tokens into the reserve and credits the obligation: a
//! `position_deposit` into the obligation. Withdrawing it
//! (`withdraw_obligation_collateral_and_redeem_reserve_collateral`) is a
//! `position_withdraw`; `borrow_obligation_liquidity` and
//! `repay_obligation_liquidity` are `borrow` and `repay`.
//!
//! Account positions are the program's IDL as published in
//! `@kamino-finance/klend-sdk` (`src/idl/klend.json`): owner 0, obligation 1,
//! the reserve's liquidity mint at 5 (4 for repay); the v2 instructions
//! keep the same first accounts and add farm accounts after them.

use super::{AssetAt, LendLayout, LendingAction, Role, lookup, read_lending};
use crate::ledger::tx::Invocation;

const fn layout(
    name: &'static str,
    tag: super::Discriminator,
    moves: &'static [(Role, AssetAt)],
) -> LendLayout {
    LendLayout {
        name,
        tag,
        position: 1,
        owner: 0,
        moves,
    }
}

const COLLATERAL: &[(Role, AssetAt)] = &[(Role::Collateral, AssetAt::Mint(5))];
const BORROW: &[(Role, AssetAt)] = &[(Role::Debt, AssetAt::Mint(5))];
const REPAY: &[(Role, AssetAt)] = &[(Role::Debt, AssetAt::Mint(4))];

pub(crate) const LAYOUTS: &[LendLayout] = &[
    layout(
        "deposit_reserve_liquidity_and_obligation_collateral",
        [129, 199, 4, 2, 222, 39, 26, 46],
        COLLATERAL,
    ),
    layout(
        "deposit_reserve_liquidity_and_obligation_collateral_v2",
        [216, 224, 191, 27, 204, 151, 102, 175],
        COLLATERAL,
    ),
    layout(
        "withdraw_obligation_collateral_and_redeem_reserve_collateral",
        [75, 93, 93, 220, 34, 150, 218, 196],
        COLLATERAL,
    ),
    layout(
        "withdraw_obligation_collateral_and_redeem_reserve_collateral_v2",
        [235, 52, 119, 152, 149, 197, 20, 7],
        COLLATERAL,
    ),
    layout(
        "borrow_obligation_liquidity",
        [121, 127, 18, 204, 73, 245, 225, 65],
        BORROW,
    ),
    layout(
        "borrow_obligation_liquidity_v2",
        [161, 128, 143, 245, 171, 199, 194, 6],
        BORROW,
    ),
    layout(
        "repay_obligation_liquidity",
        [145, 178, 13, 225, 76, 240, 147, 72],
        REPAY,
    ),
    layout(
        "repay_obligation_liquidity_v2",
        [116, 174, 213, 76, 180, 53, 210, 144],
        REPAY,
    ),
];

/// What a Kamino Lend instruction did, if it is one this module reads.
pub fn read(invocation: &Invocation) -> Option<LendingAction> {
    read_lending(LAYOUTS, lookup(&invocation.program)?, invocation)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::discriminator;
    use super::*;

    #[test]
    fn discriminators_are_anchors_hash_of_the_instruction_names() {
        for layout in LAYOUTS {
            assert_eq!(layout.tag, discriminator(layout.name), "{}", layout.name);
        }
    }
}
