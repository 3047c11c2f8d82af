//! Tensor's marketplace program (`TCMPhJdw…`, tensor-foundation/marketplace):
//! buying a listing and taking a bid. TensorSwap (`TSWAPaqy…`, the pool
//! AMM) is in the registry, so its trades are swaps named by their venue,
//! but its fees are not split off yet (docs/ledger.md, known limits).
//!
//! Who pays what is the program's own code:
//! - `buy_legacy` (`program/src/instructions/legacy/buy.rs`): the payer
//!   pays the protocol fee to the fee vault, the maker and taker brokers
//!   their shares (to the fee vault when there is none) and the creators
//!   their royalty, then "the full listing amount since taker pays above
//!   fees + royalties" to the seller (`owner`).
//! - `take_bid_legacy` (`program/src/instructions/legacy/take_bid.rs` and
//!   `take_bid_common.rs`): the bid's amount is "split into fees /
//!   royalties (seller pays)"; the seller receives what is left.
//!
//! Remaining accounts are the creators ("1. creators (1-5)"). An optional
//! account left out is passed as the program id, so positions are fixed:
//! the `#[derive(Accounts)]` order of those files, with `ProgNftShared`
//! flattened to its three accounts.

use super::{Discriminator, NftSale, SaleLayout, Side, lookup, read_sale};
use crate::ledger::tx::Invocation;

const LAYOUTS: &[SaleLayout] = &[
    // fee vault 0, buyer 1, list state 4, owner (seller) 6, payer 7, taker
    // broker 8, maker broker 9, rent destination 10, … cosigner 23;
    // creators from 24.
    SaleLayout {
        name: "buy_legacy",
        tag: BUY_LEGACY,
        buyer: &[1, 7],
        seller: &[6],
        payer: Side::Buyer,
        fees: &[0, 8, 9],
        others: &[4, 10],
        creators_from: 24,
    },
    // fee vault 0, seller 1, bid state 2, owner (buyer) 3, taker broker 4,
    // maker broker 5, margin 6, … mint proof 27, rent destination 28;
    // creators from 29.
    SaleLayout {
        name: "take_bid_legacy",
        tag: TAKE_BID_LEGACY,
        buyer: &[3],
        seller: &[1],
        payer: Side::Seller,
        fees: &[0, 4, 5],
        others: &[2, 6, 28],
        creators_from: 29,
    },
];

const BUY_LEGACY: Discriminator = [68, 127, 43, 8, 212, 31, 249, 114];
const TAKE_BID_LEGACY: Discriminator = [188, 35, 116, 108, 0, 233, 237, 201];

/// What a Tensor marketplace sale instruction did, if this module reads it.
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
