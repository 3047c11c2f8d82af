//! The history-wide spam rule (issue 22, item 3). The decoder decides
//! `airdrop_spam` one transaction at a time: an inbound token the wallet
//! did not sign for, credited to many owners at once. That is how spam
//! arrives, but also how some real tokens arrive (a distribution of a token
//! the wallet trades). Across the whole history the rule is narrower: a
//! token the wallet bought or sold (`swap`, which includes a fill of its own
//! order), holds or held in a position (`position_deposit`,
//! `position_withdraw`) or borrowed or repaid is one the wallet dealt in,
//! and a mass distribution of it is never spam. Only unsolicited tokens
//! the wallet never dealt in stay `airdrop_spam`.
//!
//! What such a leg is instead is what the decoder would have read without
//! the spam rule: a `transfer_in` when a token transfer brought it (its
//! counterparties name the sender), else an `airdrop` (minted straight into
//! the wallet). A scan applies this over the stored legs when it ends.

use std::collections::BTreeSet;

use super::model::{Direction, OperationType};

/// Whether a leg of this type shows the wallet dealt in its mint itself.
pub fn deals_in(operation: OperationType) -> bool {
    matches!(
        operation,
        OperationType::Swap
            | OperationType::PositionDeposit
            | OperationType::PositionWithdraw
            | OperationType::Borrow
            | OperationType::Repay
    )
}

/// What the spam rule needs of one stored leg.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpamInput<'a> {
    pub operation: OperationType,
    pub mint: &'a str,
    /// Directions of the leg's counterparties.
    pub parties: Vec<Direction>,
}

/// The `airdrop_spam` legs of one wallet's whole history that are not
/// spam, by their index in `legs`, with the type each is instead.
pub fn unmark(legs: &[SpamInput<'_>]) -> Vec<(usize, OperationType)> {
    let dealt: BTreeSet<&str> = legs
        .iter()
        .filter(|l| deals_in(l.operation))
        .map(|l| l.mint)
        .collect();
    legs.iter()
        .enumerate()
        .filter(|(_, l)| l.operation == OperationType::AirdropSpam && dealt.contains(l.mint))
        .map(|(i, l)| {
            let transferred = l.parties.contains(&Direction::In);
            (
                i,
                if transferred {
                    OperationType::TransferIn
                } else {
                    OperationType::Airdrop
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leg(operation: OperationType, mint: &str, parties: &[Direction]) -> SpamInput<'static> {
        SpamInput {
            operation,
            mint: Box::leak(mint.to_owned().into_boxed_str()),
            parties: parties.to_vec(),
        }
    }

    #[test]
    fn a_token_bought_anywhere_in_the_history_is_never_spam() {
        let legs = [
            // A mass distribution of HELP, sent by a transfer.
            leg(OperationType::AirdropSpam, "HELP", &[Direction::In]),
            // ... minted straight in.
            leg(OperationType::AirdropSpam, "HELP", &[]),
            // A token the wallet never dealt in: still spam.
            leg(OperationType::AirdropSpam, "SCAM", &[Direction::In]),
            // The wallet bought HELP later (or earlier: order is irrelevant).
            leg(OperationType::Swap, "HELP", &[Direction::In]),
            leg(OperationType::Swap, "USDC", &[Direction::Out]),
            // Sending SCAM away is no dealing in it.
            leg(OperationType::TransferOut, "SCAM", &[Direction::Out]),
        ];
        assert_eq!(
            unmark(&legs),
            [(0, OperationType::TransferIn), (1, OperationType::Airdrop)]
        );
    }

    #[test]
    fn a_token_held_in_a_position_or_borrowed_is_never_spam() {
        for operation in [
            OperationType::PositionDeposit,
            OperationType::PositionWithdraw,
            OperationType::Borrow,
            OperationType::Repay,
        ] {
            let legs = [
                leg(operation, "JUPSOL", &[]),
                leg(OperationType::AirdropSpam, "JUPSOL", &[Direction::In]),
            ];
            assert_eq!(
                unmark(&legs),
                [(1, OperationType::TransferIn)],
                "{operation:?}"
            );
        }
    }
}
