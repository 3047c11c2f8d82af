//! NFT trades and mints on hand-built `jsonParsed` transactions: Magic
//! Eden M2 and Tensor marketplace sales (royalties and marketplace fees as
//! their own legs) and a Metaplex Candy Machine v3 mint (a purchase at the
//! candy machine, its new accounts' rent still rent). No recorded NFT
//! transaction is among the fixtures, so each transaction is laid out as
//! the program's source orders its accounts (the decoder modules cite it)
//! with balances chosen by hand; expected legs are worked from those
//! balances in the comments, never from what the decoder printed. Every
//! transaction is checked for conservation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ledger_core::ledger::{
    self, Leg, OperationType, SOL, TxView,
    protocols::{
        CANDY_GUARD, CANDY_MACHINE_V3, MAGIC_EDEN_M2, METAPLEX_TOKEN_METADATA, TENSOR_MARKETPLACE,
    },
};
use serde_json::{Value, json};

mod support;
use support::{Build, FEE};

const W: &str = "Wa11et1111111111111111111111111111111111111";
const SELLER: &str = "Se11er1111111111111111111111111111111111111";
const BUYER: &str = "Buyer11111111111111111111111111111111111111";
const TREASURY: &str = "Treasury111111111111111111111111111111111111";
const CREATOR_A: &str = "CreatorA111111111111111111111111111111111111";
const CREATOR_B: &str = "CreatorB111111111111111111111111111111111111";
const ESCROW: &str = "Escrow1111111111111111111111111111111111111";
const BID_STATE: &str = "BidState111111111111111111111111111111111111";
const NFT: &str = "NftMint111111111111111111111111111111111111";
const SELLER_NFT_ATA: &str = "Se11erAta11111111111111111111111111111111111";
const BUYER_NFT_ATA: &str = "BuyerAta111111111111111111111111111111111111";
const METADATA: &str = "Metadata111111111111111111111111111111111111";
const EDITION: &str = "Edition1111111111111111111111111111111111111";
const DESTINATION: &str = "Destination11111111111111111111111111111111";
const SYSTEM: &str = "11111111111111111111111111111111";
const TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const ATA: &str = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
const TOKEN_RENT: u64 = 2_039_280;
const MINT_RENT: u64 = 1_461_600;
const METADATA_RENT: u64 = 5_616_720;
const EDITION_RENT: u64 = 2_853_600;
const SOL_1: u64 = 1_000_000_000;

fn sol_transfer(from: &str, to: &str, lamports: u64) -> Value {
    json!({"program": "system", "programId": SYSTEM, "parsed": {"type": "transfer",
        "info": {"source": from, "destination": to, "lamports": lamports}}})
}

fn create_account(funder: &str, account: &str, lamports: u64, owner: &str) -> Value {
    json!({"program": "system", "programId": SYSTEM, "parsed": {"type": "createAccount",
        "info": {"source": funder, "newAccount": account, "lamports": lamports, "space": 165,
                 "owner": owner}}})
}

fn create_ata(funder: &str, account: &str, wallet: &str) -> Value {
    json!({"program": "spl-associated-token-account", "programId": ATA, "parsed": {"type": "create",
        "info": {"source": funder, "account": account, "wallet": wallet, "mint": NFT}}})
}

fn token_transfer(source: &str, destination: &str, authority: &str) -> Value {
    json!({"program": "spl-token", "programId": TOKEN, "parsed": {"type": "transfer",
        "info": {"source": source, "destination": destination, "authority": authority,
                 "amount": "1"}}})
}

fn mint_to(account: &str) -> Value {
    json!({"program": "spl-token", "programId": TOKEN, "parsed": {"type": "mintTo",
        "info": {"mint": NFT, "account": account, "mintAuthority": W, "amount": "1"}}})
}

fn sha_tag(name: &str) -> [u8; 8] {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("global:{name}").as_bytes());
    let mut out = [0u8; 8];
    out.copy_from_slice(&digest[..8]);
    out
}

/// A raw Anchor instruction of `program` named `name`, over `slots`
/// accounts where `at` places the ones the decoder reads (the rest are
/// fillers it does not).
fn anchor_ix(program: &str, name: &str, slots: usize, at: &[(usize, &str)]) -> Value {
    let mut accounts: Vec<String> = (0..slots)
        .map(|i| format!("F{}{i}", "1".repeat(42 - i.to_string().len())))
        .collect();
    for (i, account) in at {
        if *i >= accounts.len() {
            accounts.resize(*i + 1, String::new());
        }
        accounts[*i] = (*account).to_owned();
    }
    let mut data = sha_tag(name).to_vec();
    data.extend_from_slice(&[0u8; 16]);
    json!({"programId": program, "accounts": accounts, "data": bs58::encode(data).into_string()})
}

fn conserves(tx: &TxView, wallet: &str) -> Vec<Leg> {
    let legs = ledger::legs(tx, wallet);
    assert_eq!(
        ledger::sum_by_asset(&legs),
        ledger::balance_changes(tx, wallet),
        "{legs:#?}"
    );
    legs
}

fn shape(legs: &[Leg]) -> Vec<(OperationType, &str, i128)> {
    legs.iter()
        .map(|l| (l.operation_type, l.mint.as_str(), l.amount))
        .collect()
}

/// A Magic Eden pNFT sale (`mip1_execute_sale_v2`): price 10 SOL, taker
/// fee 2.5% (250,000,000) to the treasury, royalty 5% (500,000,000) to two
/// creators 60/40 (300,000,000 and 200,000,000). `seller_pays` makes the
/// seller the instruction's payer: it then pays the platform fee from its
/// own wallet (m2 `mip1_execute_sale_v2.rs`), else the buyer's escrow does.
fn magic_eden_sale(wallet_is_buyer: bool, seller_pays: bool) -> TxView {
    let price = 10 * SOL_1;
    let fee = 250_000_000u64;
    let (royalty_a, royalty_b) = (300_000_000u64, 200_000_000u64);
    let from_escrow = price + royalty_a + royalty_b + if seller_pays { 0 } else { fee };
    let (buyer, seller) = if wallet_is_buyer {
        (W, SELLER)
    } else {
        (BUYER, W)
    };
    let payer = if seller_pays { seller } else { buyer };
    let buyer_pre = 20 * SOL_1;
    // The buyer deposits into its escrow and the escrow pays out in the
    // same transaction; the buyer's NFT account is created by the payer.
    let buyer_post = buyer_pre - from_escrow - if payer == buyer { FEE + TOKEN_RENT } else { 0 };
    let seller_pre = SOL_1;
    let seller_post = seller_pre + price
        - if seller_pays {
            fee + FEE + TOKEN_RENT
        } else {
            0
        };
    let mut accounts = vec![
        (0, payer),
        (1, buyer),
        (2, seller),
        (5, SELLER_NFT_ATA),
        (6, BUYER_NFT_ATA),
        (7, NFT),
        (8, METADATA),
        (10, TREASURY),
        (13, ESCROW),
        (16, METAPLEX_TOKEN_METADATA),
        (27, CREATOR_A),
        (28, CREATOR_B),
    ];
    accounts.sort();
    let mut inner = vec![
        create_ata(payer, BUYER_NFT_ATA, buyer),
        token_transfer(SELLER_NFT_ATA, BUYER_NFT_ATA, seller),
        sol_transfer(ESCROW, CREATOR_A, royalty_a),
        sol_transfer(ESCROW, CREATOR_B, royalty_b),
        sol_transfer(ESCROW, seller, price),
    ];
    inner.push(if seller_pays {
        sol_transfer(seller, TREASURY, fee)
    } else {
        sol_transfer(ESCROW, TREASURY, fee)
    });
    let (w_pre, w_post, other, other_pre, other_post) = if wallet_is_buyer {
        (buyer_pre, buyer_post, SELLER, seller_pre, seller_post)
    } else {
        (seller_pre, seller_post, BUYER, buyer_pre, buyer_post)
    };
    // The instruction's payer signs first and pays the network fee.
    let wallet_pays = payer == W;
    let build = if wallet_pays {
        Build::default()
            .account(W, true, w_pre, w_post)
            .account(other, false, other_pre, other_post)
    } else {
        Build::default()
            .account(other, true, other_pre, other_post)
            .account(W, false, w_pre, w_post)
    };
    build
        .account(TREASURY, false, 5 * SOL_1, 5 * SOL_1 + fee)
        .account(CREATOR_A, false, SOL_1, SOL_1 + royalty_a)
        .account(CREATOR_B, false, SOL_1, SOL_1 + royalty_b)
        .account(ESCROW, false, 0, 0)
        .account(SELLER_NFT_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(BUYER_NFT_ATA, false, 0, TOKEN_RENT)
        .token(SELLER_NFT_ATA, NFT, seller, 0, Some(1), Some(0))
        .token(BUYER_NFT_ATA, NFT, buyer, 0, None, Some(1))
        .ix(sol_transfer(buyer, ESCROW, from_escrow), vec![])
        .ix(
            anchor_ix(MAGIC_EDEN_M2, "mip1_execute_sale_v2", 29, &accounts),
            inner,
        )
        .build()
}

#[test]
fn a_magic_eden_buy_is_a_swap_at_the_price_with_royalties_and_fee_as_their_own_legs() {
    // The buyer paid 10,750,000,000 into its escrow (price 10 SOL + 250M
    // taker fee + 500M royalty), plus 5,000 fee and 2,039,280 for its new
    // NFT account. The escrow paid the seller the price, the treasury the
    // fee and the creators the royalty.
    let tx = magic_eden_sale(true, false);
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::RentDeposit, SOL, -2_039_280),
            (OperationType::MarketplaceFee, SOL, -250_000_000),
            (OperationType::Royalty, SOL, -300_000_000),
            (OperationType::Royalty, SOL, -200_000_000),
            (OperationType::Swap, SOL, -10_000_000_000),
            (OperationType::Swap, NFT, 1),
        ],
        "{legs:#?}"
    );
    assert_eq!(legs[3].counterparties[0].address, CREATOR_A);
    assert_eq!(legs[2].counterparties[0].address, TREASURY);
    for leg in &legs[2..] {
        assert_eq!(leg.venue.as_deref(), Some("Magic Eden M2"), "{leg:#?}");
    }
}

#[test]
fn a_magic_eden_sale_the_buyer_paid_for_is_a_swap_of_the_price_for_the_seller() {
    // The seller received the price (10 SOL) from the buyer's escrow; the
    // buyer's side paid fee and royalty, so the seller has no fee legs.
    let tx = magic_eden_sale(false, false);
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::Swap, SOL, 10_000_000_000),
            (OperationType::Swap, NFT, -1),
        ],
        "{legs:#?}"
    );
}

#[test]
fn a_magic_eden_seller_who_pays_the_platform_fee_has_it_as_a_leg_and_the_buyer_not() {
    // The seller signed as payer: it paid the 250,000,000 fee to the
    // treasury itself (and the network fee and the buyer's NFT account),
    // and received the 10 SOL price: SOL +10,000,000,000 - 250,000,000 -
    // 5,000 - 2,039,280.
    let tx = magic_eden_sale(false, true);
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::RentDeposit, SOL, -2_039_280),
            (OperationType::MarketplaceFee, SOL, -250_000_000),
            (OperationType::Swap, SOL, 10_000_000_000),
            (OperationType::Swap, NFT, -1),
        ],
        "{legs:#?}"
    );
    // The buyer paid 10.5 SOL (price and royalty): royalties are its legs,
    // the seller's fee is not.
    let tx = magic_eden_sale(true, true);
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::Royalty, SOL, -300_000_000),
            (OperationType::Royalty, SOL, -200_000_000),
            (OperationType::Swap, SOL, -10_000_000_000),
            (OperationType::Swap, NFT, 1),
        ],
        "{legs:#?}"
    );
}

#[test]
fn taking_a_tensor_bid_is_a_sale_at_the_bid_with_the_fees_the_seller_pays() {
    // A 5 SOL bid taken: the bid state pays the fee vault 75,000,000 (1.5%),
    // the creator 250,000,000 (5%) and the seller the rest, 4,675,000,000
    // ("seller pays", tensor take_bid_common.rs). No brokers: their slots
    // hold the program id. The seller pays the network fee and the rent of
    // the buyer's new NFT account.
    let bid = 5 * SOL_1;
    let (fee, royalty) = (75_000_000u64, 250_000_000u64);
    let net = bid - fee - royalty;
    let pre = SOL_1;
    let accounts = [
        (0, "FeeVau1t11111111111111111111111111111111111"),
        (1, W),
        (2, BID_STATE),
        (3, BUYER),
        (4, TENSOR_MARKETPLACE),
        (5, TENSOR_MARKETPLACE),
        (8, SELLER_NFT_ATA),
        (9, NFT),
        (11, BUYER_NFT_ATA),
        (28, BUYER),
        (29, CREATOR_A),
    ];
    let tx = Build::default()
        .account(W, true, pre, pre - FEE - TOKEN_RENT + net)
        .account(BUYER, false, SOL_1, SOL_1)
        .account(BID_STATE, false, 6 * SOL_1, 6 * SOL_1 - bid)
        .account(
            "FeeVau1t11111111111111111111111111111111111",
            false,
            SOL_1,
            SOL_1 + fee,
        )
        .account(CREATOR_A, false, SOL_1, SOL_1 + royalty)
        .account(SELLER_NFT_ATA, false, TOKEN_RENT, TOKEN_RENT)
        .account(BUYER_NFT_ATA, false, 0, TOKEN_RENT)
        .token(SELLER_NFT_ATA, NFT, W, 0, Some(1), Some(0))
        .token(BUYER_NFT_ATA, NFT, BUYER, 0, None, Some(1))
        .ix(
            anchor_ix(TENSOR_MARKETPLACE, "take_bid_legacy", 30, &accounts),
            vec![
                create_ata(W, BUYER_NFT_ATA, BUYER),
                token_transfer(SELLER_NFT_ATA, BUYER_NFT_ATA, W),
            ],
        )
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::RentDeposit, SOL, -2_039_280),
            (OperationType::MarketplaceFee, SOL, -75_000_000),
            (OperationType::Royalty, SOL, -250_000_000),
            // Gross: the bid; net of the two fee legs, what arrived.
            (OperationType::Swap, SOL, 5_000_000_000),
            (OperationType::Swap, NFT, -1),
        ],
        "{legs:#?}"
    );
    assert_eq!(legs[4].venue.as_deref(), Some("Tensor Marketplace"));
}

#[test]
fn buying_a_tensor_listing_pays_fees_and_royalty_on_top_of_the_price() {
    // A 2 SOL listing: the payer (the wallet, also the buyer) pays the fee
    // vault 30,000,000, the taker broker 6,000,000, the creator
    // 100,000,000 and the seller the full 2 SOL (tensor legacy/buy.rs).
    let price = 2 * SOL_1;
    let (fee, broker, royalty) = (30_000_000u64, 6_000_000u64, 100_000_000u64);
    let pre = 3 * SOL_1;
    let vault = "FeeVau1t11111111111111111111111111111111111";
    let taker_broker = "TakerBroker11111111111111111111111111111111";
    let accounts = [
        (0, vault),
        (1, W),
        (2, BUYER_NFT_ATA),
        (3, SELLER_NFT_ATA),
        (5, NFT),
        (6, SELLER),
        (7, W),
        (8, taker_broker),
        (9, TENSOR_MARKETPLACE),
        (10, SELLER),
        (24, CREATOR_B),
    ];
    let tx = Build::default()
        .account(
            W,
            true,
            pre,
            pre - FEE - TOKEN_RENT - price - fee - broker - royalty,
        )
        .account(SELLER, false, SOL_1, SOL_1 + price + TOKEN_RENT)
        .account(vault, false, SOL_1, SOL_1 + fee)
        .account(taker_broker, false, SOL_1, SOL_1 + broker)
        .account(CREATOR_B, false, SOL_1, SOL_1 + royalty)
        .account(SELLER_NFT_ATA, false, TOKEN_RENT, 0)
        .account(BUYER_NFT_ATA, false, 0, TOKEN_RENT)
        .token(
            SELLER_NFT_ATA,
            NFT,
            "ListState11111111111111111111111111111111111",
            0,
            Some(1),
            None,
        )
        .token(BUYER_NFT_ATA, NFT, W, 0, None, Some(1))
        .ix(
            anchor_ix(TENSOR_MARKETPLACE, "buy_legacy", 25, &accounts),
            vec![
                create_ata(W, BUYER_NFT_ATA, W),
                token_transfer(
                    SELLER_NFT_ATA,
                    BUYER_NFT_ATA,
                    "ListState11111111111111111111111111111111111",
                ),
                sol_transfer(W, vault, fee),
                sol_transfer(W, taker_broker, broker),
                sol_transfer(W, CREATOR_B, royalty),
                sol_transfer(W, SELLER, price),
            ],
        )
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::RentDeposit, SOL, -2_039_280),
            (OperationType::MarketplaceFee, SOL, -30_000_000),
            (OperationType::MarketplaceFee, SOL, -6_000_000),
            (OperationType::Royalty, SOL, -100_000_000),
            (OperationType::Swap, SOL, -2_000_000_000),
            (OperationType::Swap, NFT, 1),
        ],
        "{legs:#?}"
    );
}

#[test]
fn a_candy_machine_mint_paid_in_sol_is_a_purchase_at_the_candy_machine_and_rent_stays_rent() {
    // Candy Guard `mint_v2` with a Sol Payment guard of 1.5 SOL to the
    // collection's destination, then Candy Machine v3 `mint_v2`, which
    // creates the mint (1,461,600), the wallet's token account (2,039,280),
    // the metadata (5,616,720) and master edition (2,853,600) accounts, all
    // paid by the wallet, and mints the NFT into the wallet's account. SOL:
    // -5,000 fee - the four rents - 1,500,000,000.
    let price = 1_500_000_000u64;
    let pre = 4 * SOL_1;
    let rents = MINT_RENT + TOKEN_RENT + METADATA_RENT + EDITION_RENT;
    let tx = Build::default()
        .account(W, true, pre, pre - FEE - rents - price)
        .account(NFT, true, 0, MINT_RENT)
        .account(BUYER_NFT_ATA, false, 0, TOKEN_RENT)
        .account(METADATA, false, 0, METADATA_RENT)
        .account(EDITION, false, 0, EDITION_RENT)
        .account(DESTINATION, false, SOL_1, SOL_1 + price)
        .token(BUYER_NFT_ATA, NFT, W, 0, None, Some(1))
        .ix(
            anchor_ix(
                CANDY_GUARD,
                "mint_v2",
                20,
                &[(3, W), (4, W), (5, W), (8, NFT)],
            ),
            vec![
                sol_transfer(W, DESTINATION, price),
                anchor_ix(CANDY_MACHINE_V3, "mint_v2", 20, &[(8, NFT)]),
                create_account(W, NFT, MINT_RENT, TOKEN),
                create_ata(W, BUYER_NFT_ATA, W),
                mint_to(BUYER_NFT_ATA),
                anchor_ix(METAPLEX_TOKEN_METADATA, "create", 8, &[]),
                create_account(W, METADATA, METADATA_RENT, METAPLEX_TOKEN_METADATA),
                create_account(W, EDITION, EDITION_RENT, METAPLEX_TOKEN_METADATA),
            ],
        )
        .build();
    let legs = conserves(&tx, W);
    assert_eq!(
        shape(&legs),
        [
            (OperationType::NetworkFee, SOL, -5_000),
            (OperationType::RentDeposit, SOL, -1_461_600),
            (OperationType::RentDeposit, SOL, -2_039_280),
            (OperationType::RentDeposit, SOL, -5_616_720),
            (OperationType::RentDeposit, SOL, -2_853_600),
            (OperationType::Swap, SOL, -1_500_000_000),
            (OperationType::Swap, NFT, 1),
        ],
        "{legs:#?}"
    );
    assert_eq!(
        legs[5].venue.as_deref(),
        Some("Metaplex Candy Guard, Metaplex Candy Machine v3")
    );
    assert!(ledger::protocols::unknown_programs(&tx).is_empty());
}
