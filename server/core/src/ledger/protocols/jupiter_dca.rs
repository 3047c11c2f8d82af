//! Jupiter DCA (`DCA265Vj…`): the owner's input waits in a token account
//! the DCA account owns and is sold in slices; each fill is a keeper's
//! flash fill whose `transfer` instruction pays the output to the owner;
//! `withdraw`, `close_dca` and `end_and_close` return what is left.
//!
//! The fill's layout (`transfer [keeper, dca, user, …]`) was read from the
//! recorded fills 2GMpqA7d… and S3z6oPjo…; the opening and closing layouts
//! (`open_dca[_v2] [dca, user, …]`, `deposit`/`withdraw`/`close_dca
//! [user, dca, …]`, `end_and_close [keeper, dca, …, user (6), …]`) follow the
//! program's published IDL account order as decoded by
//! https://github.com/0xjeffro/tx-parser (solana/programs/jupiterDCA) and are
//! tested on hand-built transactions only.

use super::{Discriminator, EscrowAction, Layout, Step, lookup, read_with};
use crate::ledger::tx::Invocation;

const fn layout(
    name: &'static str,
    tag: Discriminator,
    step: Step,
    position: usize,
    owner: usize,
) -> Layout {
    Layout {
        name,
        tag,
        step,
        position,
        owner,
        fee_account: None,
    }
}

const LAYOUTS: &[Layout] = &[
    // sha256("global:open_dca")[..8]
    layout(
        "open_dca",
        [36, 65, 185, 54, 1, 210, 100, 163],
        Step::Open,
        0,
        1,
    ),
    // sha256("global:open_dca_v2")[..8]
    layout(
        "open_dca_v2",
        [142, 119, 43, 109, 162, 52, 11, 177],
        Step::Open,
        0,
        1,
    ),
    // sha256("global:deposit")[..8]
    layout(
        "deposit",
        [242, 35, 198, 137, 82, 225, 242, 182],
        Step::Open,
        1,
        0,
    ),
    // sha256("global:transfer")[..8]
    layout(
        "transfer",
        [163, 52, 200, 231, 140, 3, 69, 186],
        Step::Fill,
        1,
        2,
    ),
    // sha256("global:fulfill_flash_fill")[..8]: [keeper, dca, input mint,
    // output mint, …, fee authority (7), fee token account (8), …], read
    // from the recorded fills 2GMpqA7d… and S3z6oPjo…, whose fee accounts
    // are credited 0.1% of the output. The owner is not among its
    // accounts: the DCA account stands in, which is never a wallet.
    Layout {
        name: "fulfill_flash_fill",
        tag: [115, 64, 226, 78, 33, 211, 105, 162],
        step: Step::Fee,
        position: 1,
        owner: 1,
        fee_account: Some(8),
    },
    // sha256("global:withdraw")[..8]
    layout(
        "withdraw",
        [183, 18, 70, 156, 148, 109, 161, 34],
        Step::Close,
        1,
        0,
    ),
    // sha256("global:close_dca")[..8]
    layout(
        "close_dca",
        [22, 7, 33, 98, 168, 183, 34, 243],
        Step::Close,
        1,
        0,
    ),
    // sha256("global:end_and_close")[..8]
    layout(
        "end_and_close",
        [83, 125, 166, 69, 247, 252, 103, 133],
        Step::Close,
        1,
        6,
    ),
];

/// What a DCA instruction did, if it is one this module reads.
pub fn read(invocation: &Invocation) -> Option<EscrowAction> {
    read_with(LAYOUTS, lookup(&invocation.program)?, invocation)
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
