//! The ledger's vocabulary: a leg is one signed movement of one asset for
//! one wallet in one transaction. docs/ledger.md is the taxonomy.

use serde::{Deserialize, Serialize};

/// How native SOL is named where a mint would be.
pub const SOL: &str = "sol";
pub const SOL_DECIMALS: u8 = 9;

/// What a leg is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationType {
    TransferIn,
    TransferOut,
    Swap,
    NetworkFee,
    RentDeposit,
    RentRefund,
    Airdrop,
    AirdropSpam,
    /// SOL from the wallet into a stake account it controls: still the
    /// wallet's (SPEC S6), so neither a disposal nor an acquisition.
    StakeDeposit,
    /// SOL from a stake account the wallet controls back into the wallet.
    StakeWithdraw,
    /// An epoch's inflation reward credited to a stake account the wallet
    /// controls (`getInflationReward`): income at fair value at receipt.
    StakingReward,
    /// A claimed MEV tip (Jito tip distribution): income at fair value.
    MevReward,
    /// An asset from the wallet into an account a program holds for it
    /// (an order escrow, a DCA account, a lending obligation, a vault): still
    /// the wallet's, so neither a disposal nor an acquisition; `position`
    /// names the account (SPEC S7).
    PositionDeposit,
    /// An asset from such a position back into the wallet.
    PositionWithdraw,
    /// Yield that came out of a position beyond what went in, when
    /// withdrawn: income at fair value.
    Interest,
    /// A loan received: moves no lots (a loan is not income).
    Borrow,
    /// A loan paid back: moves no lots.
    Repay,
    /// A fee a program or front end took from the transaction, beside the
    /// network fee: a cost of the transaction.
    PlatformFee,
    /// A tip to a block builder or validator (e.g. Jito): a cost of the
    /// transaction.
    Tip,
    /// Creator royalties an NFT marketplace paid out of the wallet's side
    /// of a trade: a cost of the trade, like a platform fee.
    Royalty,
    /// An NFT marketplace's own fee (its treasury or fee vault, and the
    /// brokers it pays): a cost of the trade.
    MarketplaceFee,
}

impl OperationType {
    pub const ALL: [OperationType; 21] = [
        OperationType::TransferIn,
        OperationType::TransferOut,
        OperationType::Swap,
        OperationType::NetworkFee,
        OperationType::RentDeposit,
        OperationType::RentRefund,
        OperationType::Airdrop,
        OperationType::AirdropSpam,
        OperationType::StakeDeposit,
        OperationType::StakeWithdraw,
        OperationType::StakingReward,
        OperationType::MevReward,
        OperationType::PositionDeposit,
        OperationType::PositionWithdraw,
        OperationType::Interest,
        OperationType::Borrow,
        OperationType::Repay,
        OperationType::PlatformFee,
        OperationType::Tip,
        OperationType::Royalty,
        OperationType::MarketplaceFee,
    ];

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|op| op.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OperationType::TransferIn => "transfer_in",
            OperationType::TransferOut => "transfer_out",
            OperationType::Swap => "swap",
            OperationType::NetworkFee => "network_fee",
            OperationType::RentDeposit => "rent_deposit",
            OperationType::RentRefund => "rent_refund",
            OperationType::Airdrop => "airdrop",
            OperationType::AirdropSpam => "airdrop_spam",
            OperationType::StakeDeposit => "stake_deposit",
            OperationType::StakeWithdraw => "stake_withdraw",
            OperationType::StakingReward => "staking_reward",
            OperationType::MevReward => "mev_reward",
            OperationType::PositionDeposit => "position_deposit",
            OperationType::PositionWithdraw => "position_withdraw",
            OperationType::Interest => "interest",
            OperationType::Borrow => "borrow",
            OperationType::Repay => "repay",
            OperationType::PlatformFee => "platform_fee",
            OperationType::Tip => "tip",
            OperationType::Royalty => "royalty",
            OperationType::MarketplaceFee => "marketplace_fee",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    In,
    Out,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CounterpartyKind {
    Wallet,
    Program,
    TokenAccount,
}

/// Who paid the wallet, or was paid by it, in a leg.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Counterparty {
    pub address: String,
    pub direction: Direction,
    pub kind: CounterpartyKind,
}

/// One movement of one asset for the wallet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leg {
    pub signature: String,
    pub slot: u64,
    pub block_time: Option<i64>,
    /// Position of the leg within its transaction (0-based).
    pub index: u32,
    pub operation_type: OperationType,
    /// A mint address, or [`SOL`] for native SOL.
    pub mint: String,
    /// Signed, in atomic units: positive into the wallet, negative out.
    pub amount: i128,
    pub decimals: u8,
    pub counterparties: Vec<Counterparty>,
    /// The program account that holds the asset for the wallet (an order
    /// escrow's order, a DCA account…), when the leg moves into, out of or
    /// from within a position. See [`Leg::moves_wallet`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// Where a swap or fill traded: the registry's venue names of the
    /// pools and order books it went through, comma-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub venue: Option<String>,
    /// The aggregator or order program that routed it, by registry name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<String>,
}

impl Leg {
    /// Whether the amount moved the wallet's own balances. A leg with a
    /// `position` moves the position's balance instead (a fill's sent side
    /// leaves the order escrow), except deposits and withdrawals, which
    /// are the wallet's side of a move between the wallet and its position,
    /// and a loan borrowed against or repaid into a position, which the
    /// wallet receives or pays itself, and the interest a position paid out
    /// with a withdrawal (`ledger::interest`), which the wallet receives.
    pub fn moves_wallet(&self) -> bool {
        self.position.is_none()
            || self.is_position_transfer()
            || matches!(
                self.operation_type,
                OperationType::Borrow | OperationType::Repay | OperationType::Interest
            )
    }

    /// A deposit into or withdrawal from a position: the same asset
    /// changes hands between the wallet and its position, so the two
    /// together do not change what the wallet owns.
    pub fn is_position_transfer(&self) -> bool {
        matches!(
            self.operation_type,
            OperationType::PositionDeposit | OperationType::PositionWithdraw
        )
    }

    pub fn direction(&self) -> Direction {
        if self.amount >= 0 {
            Direction::In
        } else {
            Direction::Out
        }
    }
}
