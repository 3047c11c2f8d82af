//! Stake program instructions (`Stake11111111111111111111111111111111111111`),
//! parsed: the leaf both the transaction reader ([`super::tx`], which turns
//! every instruction into an [`super::tx::Op`]) and the stake decoder
//! ([`super::protocols::stake`], which reads those ops for a wallet) stand
//! on. It knows only the instruction shapes, so neither of them imports the
//! other to parse one: Solana's `jsonParsed` stake parser
//! (`transaction-status/src/parse_stake.rs`) and, for the `json` encoding,
//! the bincode `StakeInstruction` enum of the Stake program
//! (`solana-stake-interface` `instruction.rs`: a little-endian `u32` tag,
//! then the arguments).

use serde_json::Value;

/// The native Stake program.
pub const STAKE_PROGRAM: &str = "Stake11111111111111111111111111111111111111";

/// Which of a stake account's two authorities an `authorize` moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// May delegate, deactivate, split and merge.
    Staker,
    /// May withdraw and change either authority: the owner in substance.
    Withdrawer,
}

/// A stake instruction, reduced to the accounts and lamports that say
/// whose SOL moved where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StakeOp {
    Initialize {
        stake: String,
        staker: String,
        withdrawer: String,
    },
    Authorize {
        stake: String,
        /// The authority that signed (for the `…WithSeed` forms, the base).
        authority: String,
        new_authority: String,
        role: Role,
    },
    Delegate {
        stake: String,
        authority: String,
    },
    Deactivate {
        stake: String,
        authority: String,
    },
    Split {
        stake: String,
        into: String,
        authority: String,
        lamports: u64,
    },
    Merge {
        from: String,
        into: String,
        authority: String,
    },
    Withdraw {
        stake: String,
        to: String,
        authority: String,
        lamports: u64,
    },
    /// `moveStake` / `moveLamports`: between two stake accounts of the
    /// same authorities.
    Move {
        from: String,
        into: String,
        authority: String,
        lamports: u64,
    },
    /// `setLockup`, `deactivateDelinquent` and the like: nothing moves.
    Other {
        stake: String,
    },
}

impl StakeOp {
    /// The stake accounts the instruction names.
    pub fn stake_accounts(&self) -> Vec<&str> {
        match self {
            StakeOp::Initialize { stake, .. }
            | StakeOp::Authorize { stake, .. }
            | StakeOp::Delegate { stake, .. }
            | StakeOp::Deactivate { stake, .. }
            | StakeOp::Withdraw { stake, .. }
            | StakeOp::Other { stake } => vec![stake],
            StakeOp::Split { stake, into, .. } => vec![stake, into],
            StakeOp::Merge { from, into, .. } | StakeOp::Move { from, into, .. } => {
                vec![from, into]
            }
        }
    }

    /// The authority that signed it, if the instruction names one.
    pub fn authority(&self) -> Option<&str> {
        match self {
            StakeOp::Authorize { authority, .. }
            | StakeOp::Delegate { authority, .. }
            | StakeOp::Deactivate { authority, .. }
            | StakeOp::Split { authority, .. }
            | StakeOp::Merge { authority, .. }
            | StakeOp::Withdraw { authority, .. }
            | StakeOp::Move { authority, .. } => Some(authority),
            StakeOp::Initialize { .. } | StakeOp::Other { .. } => None,
        }
    }
}

fn text(info: &Value, key: &str) -> Option<String> {
    info[key].as_str().map(str::to_owned)
}

fn role(value: &Value) -> Option<Role> {
    match value.as_str()? {
        "Staker" => Some(Role::Staker),
        "Withdrawer" => Some(Role::Withdrawer),
        _ => None,
    }
}

/// A `jsonParsed` stake instruction (`parsed.type`, `parsed.info`);
/// `None` for a shape this reading does not know.
pub fn parsed(kind: &str, info: &Value) -> Option<StakeOp> {
    let stake = || text(info, "stakeAccount");
    Some(match kind {
        "initialize" => StakeOp::Initialize {
            stake: stake()?,
            staker: text(&info["authorized"], "staker")?,
            withdrawer: text(&info["authorized"], "withdrawer")?,
        },
        "initializeChecked" => StakeOp::Initialize {
            stake: stake()?,
            staker: text(info, "staker")?,
            withdrawer: text(info, "withdrawer")?,
        },
        "authorize" | "authorizeChecked" => StakeOp::Authorize {
            stake: stake()?,
            authority: text(info, "authority")?,
            new_authority: text(info, "newAuthority")?,
            role: role(&info["authorityType"])?,
        },
        "authorizeWithSeed" | "authorizeCheckedWithSeed" => StakeOp::Authorize {
            stake: stake()?,
            authority: text(info, "authorityBase")?,
            new_authority: text(info, "newAuthorized")?,
            role: role(&info["authorityType"])?,
        },
        "delegate" => StakeOp::Delegate {
            stake: stake()?,
            authority: text(info, "stakeAuthority")?,
        },
        "deactivate" => StakeOp::Deactivate {
            stake: stake()?,
            authority: text(info, "stakeAuthority")?,
        },
        "split" => StakeOp::Split {
            stake: stake()?,
            into: text(info, "newSplitAccount")?,
            authority: text(info, "stakeAuthority")?,
            lamports: info["lamports"].as_u64()?,
        },
        "merge" => StakeOp::Merge {
            from: text(info, "source")?,
            into: text(info, "destination")?,
            authority: text(info, "stakeAuthority")?,
        },
        "withdraw" => StakeOp::Withdraw {
            stake: stake()?,
            to: text(info, "destination")?,
            authority: text(info, "withdrawAuthority")?,
            lamports: info["lamports"].as_u64()?,
        },
        "moveStake" | "moveLamports" => StakeOp::Move {
            from: text(info, "source")?,
            into: text(info, "destination")?,
            authority: text(info, "stakeAuthority")?,
            lamports: info["lamports"].as_u64()?,
        },
        _ => StakeOp::Other { stake: stake()? },
    })
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    data.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
}

fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    data.get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
}

fn key_at(data: &[u8], at: usize) -> Option<String> {
    data.get(at..at + 32).map(|b| bs58::encode(b).into_string())
}

fn role_at(data: &[u8], at: usize) -> Option<Role> {
    match u32_at(data, at)? {
        0 => Some(Role::Staker),
        1 => Some(Role::Withdrawer),
        _ => None,
    }
}

/// A raw (`json` encoding) stake instruction: the bincode
/// `StakeInstruction` tag and arguments, and its accounts in order.
pub fn raw<S: AsRef<str>>(accounts: &[S], data: &[u8]) -> Option<StakeOp> {
    let account = |i: usize| accounts.get(i).map(|a| a.as_ref().to_owned());
    Some(match u32_at(data, 0)? {
        // Initialize(Authorized { staker, withdrawer }, Lockup): [stake, rent]
        0 => StakeOp::Initialize {
            stake: account(0)?,
            staker: key_at(data, 4)?,
            withdrawer: key_at(data, 36)?,
        },
        // Authorize(Pubkey, StakeAuthorize): [stake, clock, authority, custodian?]
        1 => StakeOp::Authorize {
            stake: account(0)?,
            authority: account(2)?,
            new_authority: key_at(data, 4)?,
            role: role_at(data, 36)?,
        },
        // DelegateStake: [stake, vote, clock, history, config, authority]
        2 => StakeOp::Delegate {
            stake: account(0)?,
            authority: account(5)?,
        },
        // Split(u64): [stake, split stake, authority]
        3 => StakeOp::Split {
            stake: account(0)?,
            into: account(1)?,
            authority: account(2)?,
            lamports: u64_at(data, 4)?,
        },
        // Withdraw(u64): [stake, recipient, clock, history, withdraw authority, custodian?]
        4 => StakeOp::Withdraw {
            stake: account(0)?,
            to: account(1)?,
            authority: account(4)?,
            lamports: u64_at(data, 4)?,
        },
        // Deactivate: [stake, clock, authority]
        5 => StakeOp::Deactivate {
            stake: account(0)?,
            authority: account(2)?,
        },
        // Merge: [destination, source, clock, history, authority]
        7 => StakeOp::Merge {
            into: account(0)?,
            from: account(1)?,
            authority: account(4)?,
        },
        // AuthorizeWithSeed(new pubkey, StakeAuthorize, seed, owner): [stake, base, …]
        8 => StakeOp::Authorize {
            stake: account(0)?,
            authority: account(1)?,
            new_authority: key_at(data, 4)?,
            role: role_at(data, 36)?,
        },
        // InitializeChecked: [stake, rent, staker, withdrawer]
        9 => StakeOp::Initialize {
            stake: account(0)?,
            staker: account(2)?,
            withdrawer: account(3)?,
        },
        // AuthorizeChecked(StakeAuthorize): [stake, clock, authority, new authority, custodian?]
        10 => StakeOp::Authorize {
            stake: account(0)?,
            authority: account(2)?,
            new_authority: account(3)?,
            role: role_at(data, 4)?,
        },
        // AuthorizeCheckedWithSeed(StakeAuthorize, seed, owner): [stake, base, clock, new authority, …]
        11 => StakeOp::Authorize {
            stake: account(0)?,
            authority: account(1)?,
            new_authority: account(3)?,
            role: role_at(data, 4)?,
        },
        // MoveStake(u64) / MoveLamports(u64): [source, destination, authority]
        16 | 17 => StakeOp::Move {
            from: account(0)?,
            into: account(1)?,
            authority: account(2)?,
            lamports: u64_at(data, 4)?,
        },
        // SetLockup, GetMinimumDelegation, DeactivateDelinquent, …
        _ => StakeOp::Other { stake: account(0)? },
    })
}
