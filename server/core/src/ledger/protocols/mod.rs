//! Which program is which: a registry from program id to protocol, venue
//! name and kind, each entry citing where its id is published, and the
//! small pure decoders, one module per protocol, that say what a known
//! program's instruction did for a wallet (SPEC S7).
//!
//! The ledger's decoder (`ledger::decode`) starts from balance changes;
//! this module only explains them. A swap leg is named by the venues
//! (pools, order books) and router (aggregator, order program) the
//! registry knows among the transaction's instructions; an order program's
//! decoder turns its escrow moves into position deposits, fills and
//! withdrawals. A program that is not here keeps the conservative reading
//! and is reported by [`unknown_programs`], never guessed.

pub mod jito_tips;
pub mod jupiter_dca;
pub mod jupiter_lend;
pub mod jupiter_limit;
pub mod kamino_lend;
pub mod liquidity;
pub mod marginfi;
pub mod stake;

use super::stake_ix::STAKE_PROGRAM;
use super::tx::{
    ATA_PROGRAM, COMPUTE_BUDGET_PROGRAM, Invocation, MEMO_PROGRAMS, SYSTEM_PROGRAM,
    TOKEN_2022_PROGRAM, TOKEN_PROGRAM, TxView,
};

/// The runtime's own programs (system, token, associated token, compute
/// budget, memo, stake): they move balances for every protocol, so they
/// name no venue and are never an unknown program.
pub(crate) fn is_infrastructure(program: &str) -> bool {
    matches!(
        program,
        SYSTEM_PROGRAM
            | TOKEN_PROGRAM
            | TOKEN_2022_PROGRAM
            | ATA_PROGRAM
            | COMPUTE_BUDGET_PROGRAM
            | STAKE_PROGRAM
    ) || MEMO_PROGRAMS.contains(&program)
}

/// What a program does, as far as the ledger's reading is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Routes a swap through other programs' pools.
    Aggregator,
    /// An automated market maker: pools priced by a curve.
    Amm,
    /// A central limit order book.
    Orderbook,
    /// Orders that fill later from an escrow the program holds.
    LimitOrder,
    /// Dollar-cost averaging: an escrow sold in slices over time.
    Dca,
    Lending,
    Vault,
    StakePool,
    NftMarketplace,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Aggregator => "aggregator",
            Kind::Amm => "amm",
            Kind::Orderbook => "orderbook",
            Kind::LimitOrder => "limit_order",
            Kind::Dca => "dca",
            Kind::Lending => "lending",
            Kind::Vault => "vault",
            Kind::StakePool => "stake_pool",
            Kind::NftMarketplace => "nft_marketplace",
        }
    }

    /// Programs where a swap trades (named as a leg's `venue`): pools and
    /// order books, and the vaults and stake pools that mint a receipt
    /// token for what goes in (an Earn share, an LST), which is a holding
    /// like any token, so minting or redeeming it is a swap at that venue.
    pub fn is_venue(self) -> bool {
        matches!(
            self,
            Kind::Amm | Kind::Orderbook | Kind::Vault | Kind::StakePool
        )
    }

    /// Programs that route a swap or an order (named as its `router`).
    pub fn is_router(self) -> bool {
        matches!(self, Kind::Aggregator | Kind::LimitOrder | Kind::Dca)
    }
}

/// One known program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    pub id: &'static str,
    pub protocol: &'static str,
    /// The name shown for it (a leg's venue or router, a flow's node).
    pub name: &'static str,
    pub kind: Kind,
    /// Where the program id is published.
    pub source: &'static str,
}

const fn program(
    id: &'static str,
    protocol: &'static str,
    name: &'static str,
    kind: Kind,
    source: &'static str,
) -> Program {
    Program {
        id,
        protocol,
        name,
        kind,
        source,
    }
}

pub const JUPITER_AGGREGATOR_V6: &str = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4";
pub const JUPITER_LIMIT_ORDER_V1: &str = "jupoNjAxXgZ4rjzxzPMP4oxduvQsQtZzyknqvzYNrNu";
pub const JUPITER_LIMIT_ORDER_V2: &str = "j1o2qRpjcyUwEvwtcfhEQefh773ZgjxcVRry7LDqg5X";
pub const JUPITER_DCA: &str = "DCA265Vj8a9CEuX1eb1LWRnDT7uK6q1xMipnNyatn23M";
pub const JUPITER_LEND_EARN: &str = "jup3YeL8QhtSx1e253b2FDvsMNC87fDrgQZivbrndc9";
pub const JUPITER_LEND_VAULTS: &str = "jupr81YtYssSyPt8jbnGuiWon5f6x9TcDEFxYe3Bdzi";
pub const JUPITER_LEND_LIQUIDITY: &str = "jupeiUmn818Jg1ekPURTpr4mFo29p46vygyykFJ3wZC";
pub const KAMINO_LEND: &str = "KLend2g3cP87fffoy8q1mQqGKjrxjC8boSyAYavgmjD";
pub const MARGINFI_V2: &str = "MFv2hWf31Z9kbCa1snEPYctwafyhdvnV7FZnsebVacA";
pub const SPL_STAKE_POOL: &str = "SPoo1Ku8WFXoNDMHPsrGSTSG1Y47rzgn41SLUNakuHy";
pub const MARINADE: &str = "MarBmsSgKXdrN1egZf5sqe1TMai9K1rChYNDJgjq7aD";
pub const PUMP_FUN: &str = "6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P";
// AMMs whose liquidity instructions `liquidity` reads.
pub const RAYDIUM_AMM_V4: &str = "675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8";
pub const RAYDIUM_CLMM: &str = "CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK";
pub const RAYDIUM_CPMM: &str = "CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C";
pub const ORCA_WHIRLPOOLS: &str = "whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc";
pub const METEORA_DLMM: &str = "LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo";
pub const METEORA_DAMM_V1: &str = "Eo7WjKq67rjJQSZxS6z3YkapzY3eMj6Xy8X5EQVn5UaB";
pub const METEORA_DAMM_V2: &str = "cpamdpZCGKUy5JxQXB4dcpGPiikHawvSWAd6mEn1sGG";

/// Every program the ledger knows by name. docs/ledger.md lists the same
/// entries with their sources.
pub const REGISTRY: &[Program] = &[
    program(
        JUPITER_AGGREGATOR_V6,
        "Jupiter",
        "Jupiter Aggregator v6",
        Kind::Aggregator,
        "https://github.com/pinax-network/substreams-solana-idls (packages/jupiter: Jupiter Aggregator V6)",
    ),
    program(
        JUPITER_LIMIT_ORDER_V1,
        "Jupiter",
        "Jupiter Limit Order v1",
        Kind::LimitOrder,
        "https://github.com/jup-ag/space-station (docs/3-limit-order/2-limit-order-with-sdk.md: Program Address)",
    ),
    program(
        JUPITER_LIMIT_ORDER_V2,
        "Jupiter",
        "Jupiter Limit Order v2",
        Kind::LimitOrder,
        "https://dev.jup.ag/docs/old/limit-order/limit-order (LO v2 Program, mainnet-beta)",
    ),
    program(
        JUPITER_DCA,
        "Jupiter",
        "Jupiter DCA",
        Kind::Dca,
        "https://github.com/pinax-network/substreams-solana-idls (packages/jupiter: Jupiter DCA)",
    ),
    program(
        "675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8",
        "Raydium",
        "Raydium AMM v4",
        Kind::Amm,
        "https://github.com/raydium-io/raydium-amm (README: Mainnet program)",
    ),
    program(
        "CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK",
        "Raydium",
        "Raydium CLMM",
        Kind::Amm,
        "https://github.com/raydium-io/raydium-clmm; @raydium-io/raydium-sdk-v2 src/common/programId.ts CLMM_PROGRAM_ID",
    ),
    program(
        "CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C",
        "Raydium",
        "Raydium CPMM",
        Kind::Amm,
        "@raydium-io/raydium-sdk-v2 src/common/programId.ts (CPMM program)",
    ),
    program(
        "whirLbMiicVdio4qvUfM5KAg6Ct8VwpYzGff3uctyCc",
        "Orca",
        "Orca Whirlpools",
        Kind::Amm,
        "@orca-so/whirlpool-sdk dist/constants/programs.js getWhirlpoolProgramId (mainnet)",
    ),
    program(
        "LBUZKhRxPF3XUpBCjp4YzTKgLccjZhTSDM9YuVaPwxo",
        "Meteora",
        "Meteora DLMM",
        Kind::Amm,
        "https://github.com/pinax-network/substreams-solana-idls (packages/meteora/src/dllm: Meteora DLMM Program)",
    ),
    program(
        "PhoeNiXZ8ByJGLkxNfZRnkUfjvmuYqLR89jjFHGqdXY",
        "Phoenix",
        "Phoenix",
        Kind::Orderbook,
        "https://github.com/sevenlabs-hq/carbon (decoders/phoenix-v1-decoder: PROGRAM_ID)",
    ),
    program(
        "srmqPvymJeFKQ4zGQed1GFppgkRHL9kaELCbyksJtPX",
        "OpenBook",
        "OpenBook",
        Kind::Orderbook,
        "@raydium-io/raydium-sdk-v2 src/common/programId.ts (OPEN_BOOK_PROGRAM)",
    ),
    program(
        JUPITER_LEND_EARN,
        "Jupiter Lend",
        "Jupiter Lend Earn",
        Kind::Vault,
        "https://dev.jup.ag/docs/lend/architecture (Lending (Earn) program ID); @jup-ag/lend IDL address",
    ),
    program(
        JUPITER_LEND_VAULTS,
        "Jupiter Lend",
        "Jupiter Lend Borrow",
        Kind::Lending,
        "https://github.com/jup-ag/jupiter-lend (docs/borrow/cpi.md: VAULTS_PROGRAM, mainnet)",
    ),
    program(
        JUPITER_LEND_LIQUIDITY,
        "Jupiter Lend",
        "Jupiter Lend Liquidity",
        Kind::Lending,
        "https://dev.jup.ag/docs/lend/architecture (Liquidity program ID)",
    ),
    program(
        KAMINO_LEND,
        "Kamino",
        "Kamino Lend",
        Kind::Lending,
        "@kamino-finance/klend-sdk src/@codegen/klend/programId.ts (PROGRAM_ID)",
    ),
    program(
        MARGINFI_V2,
        "marginfi",
        "marginfi v2",
        Kind::Lending,
        "@mrgnlabs/marginfi-client-v2 src/configs.json (production, mainnet program)",
    ),
    program(
        SPL_STAKE_POOL,
        "SPL Stake Pool",
        "SPL Stake Pool",
        Kind::StakePool,
        "https://solana-program.com/docs/stake-pool/cli (the stake pool program cloned from mainnet); docs.rs spl_stake_pool::ID",
    ),
    program(
        MARINADE,
        "Marinade",
        "Marinade",
        Kind::StakePool,
        "@marinade.finance/marinade-ts-sdk src/config/marinade-config (marinadeFinanceProgramId)",
    ),
    program(
        PUMP_FUN,
        "pump.fun",
        "pump.fun",
        Kind::Amm,
        "https://github.com/pump-fun/pump-public-docs (docs/PUMP_PROGRAM_README.md: deployed at, Mainnet)",
    ),
    // Pools and liquidity positions (issue 22 items 1 and 2): Meteora's
    // constant-product pools beside DLMM.
    program(
        METEORA_DAMM_V1,
        "Meteora",
        "Meteora Pools",
        Kind::Amm,
        "Meteora dynamic AMM SDK (ts-client src/amm/constants.ts: PROGRAM_ID); https://docs.meteora.ag (Dynamic AMM Overview)",
    ),
    program(
        METEORA_DAMM_V2,
        "Meteora",
        "Meteora DAMM v2",
        Kind::Amm,
        "https://github.com/MeteoraAg/damm-v2 (CP-AMM program, mainnet); Meteora's DAMM v2 Go bindings gen/damm_v2/program-id.go (ProgramID)",
    ),
];

/// The registry's entry for `id`.
pub fn lookup(id: &str) -> Option<&'static Program> {
    REGISTRY.iter().find(|p| p.id == id)
}

/// The registry's entry named `name` (a leg's `router` or `venue` part).
pub fn by_name(name: &str) -> Option<&'static Program> {
    REGISTRY.iter().find(|p| p.name == name)
}

/// The registry's entries among `tx`'s instructions, in first-seen order.
fn known_programs(tx: &TxView) -> Vec<&'static Program> {
    let mut out: Vec<&'static Program> = Vec::new();
    for program in tx
        .invocations
        .iter()
        .map(|i| i.program.as_str())
        .chain(tx.programs.iter().map(String::as_str))
    {
        if let Some(p) = lookup(program)
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

/// Venue and router names for a swap in `tx`: the registry names of the
/// pools and order books it went through, and of the aggregator or order
/// program that routed it (each comma-separated in first-seen order).
pub fn route(tx: &TxView) -> (Option<String>, Option<String>) {
    let known = known_programs(tx);
    let join = |keep: fn(Kind) -> bool| {
        let names: Vec<&str> = known
            .iter()
            .filter(|p| keep(p.kind))
            .map(|p| p.name)
            .collect();
        (!names.is_empty()).then(|| names.join(", "))
    };
    (join(Kind::is_venue), join(Kind::is_router))
}

/// Programs `tx` ran that are neither the runtime's own (system, token,
/// associated token, compute budget, memo) nor in the registry: the
/// transaction was read the conservative way, and a scan lists them.
pub fn unknown_programs(tx: &TxView) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for program in tx
        .programs
        .iter()
        .chain(tx.invocations.iter().map(|i| &i.program))
    {
        if lookup(program).is_none() && !is_infrastructure(program) && !out.contains(program) {
            out.push(program.clone());
        }
    }
    out
}

/// What an order program's instruction did to an order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// The owner moved funds into the order's escrow.
    Open,
    /// A keeper filled (part of) the order: the escrow paid the input, the
    /// owner received the output.
    Fill,
    /// What was left came back to the owner and the order closed.
    Close,
    /// The program took its fee out of a fill's output. The instruction
    /// names the order but not its owner, so it is keyed by the order
    /// alone and never makes an order anyone's position by itself.
    Fee,
}

/// One order instruction, read: which order (the position) of whom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EscrowAction {
    /// The instruction's name in the program's IDL.
    pub instruction: &'static str,
    pub step: Step,
    pub program: &'static Program,
    /// The order or DCA account: it owns the escrow token accounts.
    pub position: String,
    /// The wallet the order belongs to.
    pub owner: String,
    /// The token account a fill pays the program's platform fee into,
    /// when the instruction names one.
    pub fee_account: Option<String>,
}

/// An Anchor program's instruction discriminator: the first 8 bytes of
/// `sha256("global:<instruction name>")` (Anchor's `#[program]` encoding).
pub type Discriminator = [u8; 8];

/// A decoder's table row: an instruction by discriminator, what it does
/// and where its order and owner accounts are.
pub(crate) struct Layout {
    pub name: &'static str,
    pub tag: Discriminator,
    pub step: Step,
    pub position: usize,
    pub owner: usize,
    /// Where a fill names the program's fee token account.
    pub fee_account: Option<usize>,
}

pub(crate) fn read_with(
    layouts: &[Layout],
    program: &'static Program,
    invocation: &Invocation,
) -> Option<EscrowAction> {
    let layout = layouts.iter().find(|l| invocation.tag == l.tag)?;
    Some(EscrowAction {
        instruction: layout.name,
        step: layout.step,
        program,
        position: invocation.accounts.get(layout.position)?.clone(),
        owner: invocation.accounts.get(layout.owner)?.clone(),
        fee_account: layout
            .fee_account
            .and_then(|i| invocation.accounts.get(i).cloned()),
    })
}

/// The part a lending instruction's asset plays in the position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Collateral or supply: into the position on the way in
    /// (`position_deposit`), back out on the way out (`position_withdraw`).
    Collateral,
    /// A loan: out of the protocol into the wallet (`borrow`), back in
    /// (`repay`).
    Debt,
}

/// Where a lending instruction names the asset it moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AssetAt {
    /// The account at this index is the mint.
    Mint(usize),
    /// The account at this index is the wallet's token account; its mint
    /// is read from the transaction's token balances.
    TokenAccount(usize),
}

/// The asset of a lending move, as the instruction names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Asset {
    Mint(String),
    /// A token account of the wallet's: a wrapped-SOL account the
    /// transaction creates and closes shows in no token balance, so an
    /// account whose mint the transaction does not show is read as
    /// wrapped SOL.
    TokenAccount(String),
}

/// A lending decoder's table row.
pub(crate) struct LendLayout {
    pub name: &'static str,
    pub tag: Discriminator,
    pub position: usize,
    pub owner: usize,
    pub moves: &'static [(Role, AssetAt)],
}

/// One lending instruction, read: whose position, and which assets it
/// moved in which role. The direction of each move is the wallet's
/// balance change of that asset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LendingAction {
    pub instruction: &'static str,
    pub program: &'static Program,
    /// The obligation, margin account or vault position.
    pub position: String,
    pub owner: String,
    pub moves: Vec<(Role, Asset)>,
}

pub(crate) fn read_lending(
    layouts: &[LendLayout],
    program: &'static Program,
    invocation: &Invocation,
) -> Option<LendingAction> {
    let layout = layouts.iter().find(|l| invocation.tag == l.tag)?;
    let account = |i: usize| invocation.accounts.get(i).cloned();
    let moves = layout
        .moves
        .iter()
        .map(|(role, at)| {
            Some((
                *role,
                match *at {
                    AssetAt::Mint(i) => Asset::Mint(account(i)?),
                    AssetAt::TokenAccount(i) => Asset::TokenAccount(account(i)?),
                },
            ))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(LendingAction {
        instruction: layout.name,
        program,
        position: account(layout.position)?,
        owner: account(layout.owner)?,
        moves,
    })
}

/// Every lending instruction in `tx` a decoder reads, in execution order.
pub fn lending_actions(tx: &TxView) -> Vec<LendingAction> {
    tx.invocations
        .iter()
        .filter_map(|inv| match inv.program.as_str() {
            KAMINO_LEND => kamino_lend::read(inv),
            MARGINFI_V2 => marginfi::read(inv),
            JUPITER_LEND_VAULTS => jupiter_lend::read(inv),
            _ => None,
        })
        .collect()
}

/// Every order instruction in `tx` a decoder reads, in execution order.
pub fn escrow_actions(tx: &TxView) -> Vec<EscrowAction> {
    tx.invocations
        .iter()
        .filter_map(|inv| match inv.program.as_str() {
            JUPITER_LIMIT_ORDER_V1 | JUPITER_LIMIT_ORDER_V2 => jupiter_limit::read(inv),
            JUPITER_DCA => jupiter_dca::read(inv),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod test_support {
    use sha2::{Digest, Sha256};

    /// Anchor's discriminator for an instruction name, computed.
    pub fn discriminator(name: &str) -> [u8; 8] {
        let digest = Sha256::digest(format!("global:{name}").as_bytes());
        let mut out = [0u8; 8];
        out.copy_from_slice(&digest[..8]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_id_is_base58_of_32_bytes_and_listed_once() {
        for (i, p) in REGISTRY.iter().enumerate() {
            let bytes = bs58::decode(p.id).into_vec().unwrap_or_default();
            assert_eq!(bytes.len(), 32, "{}", p.id);
            assert!(!p.source.is_empty(), "{}", p.id);
            assert!(
                REGISTRY[i + 1..].iter().all(|q| q.id != p.id),
                "{} twice",
                p.id
            );
        }
    }
}
