//! marginfi v2 (`MFv2hWf3…`): a marginfi account holds its authority's
//! lending balances in a group's banks. `lending_account_deposit` moves the
//! wallet's tokens into a bank's liquidity vault and credits the account:
//! a `position_deposit` into the marginfi account; `lending_account_withdraw`
//! is a `position_withdraw`; `lending_account_borrow` and
//! `lending_account_repay` are `borrow` and `repay`.
//!
//! Account positions are the program's IDL as published in
//! `@mrgnlabs/marginfi-client-v2` (`src/idl/marginfi_0.1.7.json`): group 0,
//! marginfi account 1, authority 2, bank 3, the wallet's token account 4.
//! The instruction names no mint: it is the token account's, from the
//! transaction's token balances.

use super::{AssetAt, LendLayout, LendingAction, Role, lookup, read_lending};
use crate::ledger::tx::Invocation;

const fn layout(name: &'static str, tag: super::Discriminator, role: Role) -> LendLayout {
    LendLayout {
        name,
        tag,
        position: 1,
        owner: 2,
        moves: match role {
            Role::Collateral => &[(Role::Collateral, AssetAt::TokenAccount(4))],
            Role::Debt => &[(Role::Debt, AssetAt::TokenAccount(4))],
        },
    }
}

pub(crate) const LAYOUTS: &[LendLayout] = &[
    layout(
        "lending_account_deposit",
        [171, 94, 235, 103, 82, 64, 212, 140],
        Role::Collateral,
    ),
    layout(
        "lending_account_withdraw",
        [36, 72, 74, 19, 210, 210, 192, 192],
        Role::Collateral,
    ),
    layout(
        "lending_account_borrow",
        [4, 126, 116, 53, 48, 5, 212, 31],
        Role::Debt,
    ),
    layout(
        "lending_account_repay",
        [79, 209, 172, 177, 222, 51, 173, 151],
        Role::Debt,
    ),
];

/// What a marginfi instruction did, if it is one this module reads.
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
