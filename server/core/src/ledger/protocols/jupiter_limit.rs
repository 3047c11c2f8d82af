//! Jupiter Limit Order, v1 (`jupoNjAx…`) and v2 (`j1o2qRpj…`): an order
//! escrows the maker's input in a token account the order account owns;
//! keepers fill it with a flash fill (the escrow lends the input to the
//! keeper, who swaps it and pays the maker the output in the same
//! transaction); a cancel returns what is left and closes the order.
//!
//! Instructions are told apart by their Anchor discriminators; the account
//! positions were read from recorded mainnet transactions (the tests name
//! them). v1's cancel is not among them and so is not decoded: it keeps the
//! conservative reading.

use super::{Discriminator, EscrowAction, JUPITER_LIMIT_ORDER_V1, Layout, Step, lookup, read_with};
use crate::ledger::tx::Invocation;

/// `sha256("global:initialize_order")[..8]`
const INITIALIZE_ORDER: Discriminator = [133, 110, 74, 175, 112, 159, 245, 159];
/// `sha256("global:flash_fill_order")[..8]`
const FLASH_FILL_ORDER: Discriminator = [252, 104, 18, 134, 164, 78, 18, 140];
/// `sha256("global:cancel_order")[..8]`
const CANCEL_ORDER: Discriminator = [95, 129, 237, 240, 8, 49, 223, 132];

/// v1: `initialize_order [base, maker, order, reserve, …]`,
/// `flash_fill_order [order, reserve, maker, taker, maker_output, taker's
/// account, fee authority, program fee account (7), …]` (5iPvQ1Th…,
/// 4xqxLBqu…: the fee account, owned by the fee authority at 6, is the one
/// credited 0.1% of the output).
const V1: &[Layout] = &[
    Layout {
        name: "initialize_order",
        tag: INITIALIZE_ORDER,
        step: Step::Open,
        position: 2,
        owner: 1,
        fee_account: None,
    },
    Layout {
        name: "flash_fill_order",
        tag: FLASH_FILL_ORDER,
        step: Step::Fill,
        position: 0,
        owner: 2,
        fee_account: Some(7),
    },
];

/// v2: `initialize_order [payer, maker, order, input_mint_reserve, …]`,
/// `cancel_order [signer, maker, order, input_mint_reserve, …]`,
/// `flash_fill_order [taker, maker, order, input_mint_reserve,
/// maker_output, taker's output, fee account (6), …]`
/// (4aBP4353…, L6rJy9mo…, 4iZxoW1D…, k2eGRDNq…: the fee account is
/// credited 0.1% of the output, 1,000,000,000 of 1,000,000,000,000).
const V2: &[Layout] = &[
    Layout {
        name: "initialize_order",
        tag: INITIALIZE_ORDER,
        step: Step::Open,
        position: 2,
        owner: 1,
        fee_account: None,
    },
    Layout {
        name: "cancel_order",
        tag: CANCEL_ORDER,
        step: Step::Close,
        position: 2,
        owner: 1,
        fee_account: None,
    },
    Layout {
        name: "flash_fill_order",
        tag: FLASH_FILL_ORDER,
        step: Step::Fill,
        position: 2,
        owner: 1,
        fee_account: Some(6),
    },
];

/// What a limit-order instruction did, if it is one this module reads.
pub fn read(invocation: &Invocation) -> Option<EscrowAction> {
    let program = lookup(&invocation.program)?;
    let layouts = if program.id == JUPITER_LIMIT_ORDER_V1 {
        V1
    } else {
        V2
    };
    read_with(layouts, program, invocation)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::discriminator;
    use super::*;

    #[test]
    fn discriminators_are_anchors_hash_of_the_instruction_names() {
        for layout in V1.iter().chain(V2) {
            assert_eq!(layout.tag, discriminator(layout.name), "{}", layout.name);
        }
    }
}
