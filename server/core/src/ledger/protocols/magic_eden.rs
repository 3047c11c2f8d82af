//! Magic Eden's M2 marketplace (`M2mx93ek…`): a sale executes a listing
//! against a bid, moving the NFT from the seller to the buyer and SOL from
//! the buyer's escrow to the seller, the marketplace's treasury and the
//! NFT's creators.
//!
//! Who pays what is the program's own code, me-foundation/m2
//! `programs/m2/src/m2_ins/execute_sale_v2.rs` and
//! `programs/m2/src/mip1_ins/mip1_execute_sale_v2.rs` (pNFTs): the buyer
//! pays the royalty "ON TOP of the price" out of its escrow, the platform
//! fee (maker plus taker) goes to the auction house treasury from the
//! buyer's escrow, unless the seller signs as payer, in which case the
//! seller pays it from its own wallet by a system transfer (the reading
//! counts a fee the wallet paid directly whichever side it is on).
//! The remaining accounts are the creators (`pay_creator_fees` walks
//! `ctx.remaining_accounts`). Account positions are the `#[derive(Accounts)]`
//! order of those files.

use super::{Discriminator, NftSale, SaleLayout, Side, lookup, read_sale};
use crate::ledger::tx::Invocation;

const LAYOUTS: &[SaleLayout] = &[
    // sha256("global:execute_sale_v2")[..8]: buyer 0, seller 1, escrow
    // payment 6, treasury 10, buyer trade state 11, buyer referral 12,
    // seller trade state 13, seller referral 14, rent 19; creators from 20.
    SaleLayout {
        name: "execute_sale_v2",
        tag: EXECUTE_SALE_V2,
        buyer: &[0],
        seller: &[1],
        payer: Side::Buyer,
        fees: &[10],
        others: &[6, 11, 12, 13, 14],
        creators_from: 20,
    },
    // sha256("global:mip1_execute_sale_v2")[..8]: payer 0 (buyer or
    // seller), buyer 1, seller 2, treasury 10, seller trade state 11, buyer
    // trade state 12, buyer escrow 13, referrals 14 and 15, rent 26;
    // creators from 27.
    SaleLayout {
        name: "mip1_execute_sale_v2",
        tag: MIP1_EXECUTE_SALE_V2,
        buyer: &[1],
        seller: &[2],
        payer: Side::Buyer,
        fees: &[10],
        others: &[11, 12, 13, 14, 15],
        creators_from: 27,
    },
];

const EXECUTE_SALE_V2: Discriminator = [91, 220, 49, 223, 204, 129, 53, 193];
const MIP1_EXECUTE_SALE_V2: Discriminator = [236, 163, 204, 173, 71, 144, 235, 118];

/// What an M2 sale instruction did, if it is one this module reads.
pub fn read(invocation: &Invocation) -> Option<NftSale> {
    read_sale(LAYOUTS, lookup(&invocation.program)?, invocation)
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
