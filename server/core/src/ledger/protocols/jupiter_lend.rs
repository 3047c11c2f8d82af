//! Jupiter Lend (built with Fluid): two user-facing programs over one
//! liquidity layer (https://dev.jup.ag/docs/lend/architecture).
//!
//! - Borrow (`jupr81Yt…`, the vaults program): a position, minted as an NFT
//!   by `init_position`, holds one collateral asset and one debt asset of
//!   its vault. Every change goes through `operate(new_col, new_debt, …)`:
//!   collateral in is a `position_deposit` into the position, collateral out
//!   a `position_withdraw`, debt out to the wallet a `borrow`, debt paid back
//!   a `repay`. Which of the wallet's balance changes is which comes from
//!   the instruction's accounts: the vault's supply (collateral) mint is at
//!   8, its borrow mint at 9, the position at 11 and the signer at 0
//!   (`jup-ag/jupiter-lend` `docs/borrow/cpi.md`, the `vaults` IDL's
//!   account order). So a collateral deposit of SOL is no swap of SOL for
//!   the position NFT, and repaying SOL while taking JupSOL back is no swap
//!   SOL -> JupSOL.
//! - Earn (`jup3YeL8…`, the lending program): a deposit mints jlTokens whose
//!   exchange rate grows with the interest. The share is a holding like any
//!   token (issue 22's rule for receipts whose value grows, as for LSTs), so
//!   minting or redeeming it stays a `swap`, named at the venue "Jupiter Lend
//!   Earn" by the registry; no instruction decoding is needed for that.

use super::{AssetAt, Discriminator, LendLayout, LendingAction, Role, lookup, read_lending};
use crate::ledger::tx::Invocation;

/// `sha256("global:operate")[..8]`
const OPERATE: Discriminator = [217, 106, 208, 99, 116, 151, 42, 135];

pub(crate) const LAYOUTS: &[LendLayout] = &[LendLayout {
    name: "operate",
    tag: OPERATE,
    position: 11,
    owner: 0,
    moves: &[
        (Role::Collateral, AssetAt::Mint(8)),
        (Role::Debt, AssetAt::Mint(9)),
    ],
}];

/// What a Jupiter Lend Borrow instruction did, if it is one this module reads.
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
