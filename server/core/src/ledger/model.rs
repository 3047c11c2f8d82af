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
}

impl OperationType {
    pub const ALL: [OperationType; 12] = [
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
}

impl Leg {
    pub fn direction(&self) -> Direction {
        if self.amount >= 0 {
            Direction::In
        } else {
            Direction::Out
        }
    }
}
