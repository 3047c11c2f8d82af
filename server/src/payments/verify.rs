//! Checking an x402 exact-scheme payment transaction before any signature
//! of ours goes near it. Pure: bytes and expectations in, a verdict out; the
//! chain-facing checks (fresh blockhash, simulation) happen in `settle`.
//!
//! The accepted layout is the x402 SVM exact scheme's, tied to one quote:
//!
//! * at most one `SetComputeUnitLimit` and one `SetComputeUnitPrice`, within
//!   the configured caps (our fee payer pays for them);
//! * exactly one `TransferChecked` (SPL Token or Token-2022) of exactly the
//!   quoted amount of the configured asset, with its decimals, into the
//!   payee's associated token account, signed by the payer;
//! * exactly one Memo (no accounts) whose data is exactly the quote id;
//! * nothing else, no address lookup tables, and our fee payer first among
//!   the signers and in no instruction's accounts, so a payment can never
//!   spend from or sign for us.
//!
//! The payer's signature is checked over the message bytes exactly as they
//! arrived; the message is also required to re-encode to those bytes, so the
//! bytes we sign are the bytes we checked.

use sha2::{Digest, Sha256};
use solana_message::VersionedMessage;
use solana_pubkey::Pubkey;
use solana_transaction::versioned::VersionedTransaction;

pub const TOKEN_PROGRAM: Pubkey =
    Pubkey::from_str_const("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
pub const TOKEN_2022_PROGRAM: Pubkey =
    Pubkey::from_str_const("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
pub const MEMO_PROGRAM: Pubkey =
    Pubkey::from_str_const("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
pub const COMPUTE_BUDGET_PROGRAM: Pubkey =
    Pubkey::from_str_const("ComputeBudget111111111111111111111111111111");

/// `TransferChecked`'s tag in both token programs.
const TRANSFER_CHECKED: u8 = 12;
const SET_COMPUTE_UNIT_LIMIT: u8 = 2;
const SET_COMPUTE_UNIT_PRICE: u8 = 3;

/// What a payment for one quote must look like.
#[derive(Clone, Debug)]
pub struct Expected<'a> {
    pub fee_payer: Pubkey,
    pub asset: Pubkey,
    pub decimals: u8,
    pub pay_to: Pubkey,
    pub amount: u64,
    pub quote_id: &'a str,
    pub max_compute_unit_limit: u32,
    pub max_compute_unit_price: u64,
}

/// Why a payment was refused. `code()` is the `error` a client reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the payment is not a readable x402 payment: {0}")]
    Malformed(String),
    #[error("only the exact scheme is accepted")]
    UnsupportedScheme,
    #[error("the payment names network {got}; this server settles on {want}")]
    WrongNetwork { got: String, want: String },
    #[error("the transaction's fee payer must be this server's fee payer {0}")]
    WrongFeePayer(String),
    #[error("the transaction uses address lookup tables; list every account in the message")]
    LookupTables,
    #[error("{0}")]
    UnexpectedInstruction(String),
    #[error("the server's fee payer appears in an instruction's accounts")]
    FeePayerInInstruction,
    #[error("the compute unit limit {got} is above the cap {cap}")]
    ComputeLimitTooHigh { got: u32, cap: u32 },
    #[error("the compute unit price {got} micro-lamports is above the cap {cap}")]
    ComputePriceTooHigh { got: u64, cap: u64 },
    #[error(
        "the transfer is of mint {got_mint} with {got_decimals} decimals; the challenge asks for {want_mint} with {want_decimals}"
    )]
    WrongAsset {
        got_mint: String,
        got_decimals: u8,
        want_mint: String,
        want_decimals: u8,
    },
    #[error("the transfer is {got} atomic units; the challenge asks for exactly {want}")]
    WrongAmount { got: u64, want: u64 },
    #[error(
        "the transfer goes to {got}; it must go to the payee's associated token account {want}"
    )]
    WrongRecipient { got: String, want: String },
    #[error("{0}")]
    WrongQuote(String),
    #[error("the payer's signature does not verify")]
    InvalidSignature,
    #[error("the transaction's blockhash is no longer valid; build the payment again")]
    StaleBlockhash,
    #[error("the transaction fails in simulation: {0}")]
    SimulationFailed(String),
    #[error("the transaction did not settle: {0}")]
    SettlementFailed(String),
    #[error(
        "this payment settled earlier and its quote has expired; its receipt was in the answer that settled it"
    )]
    AlreadySettled,
}

impl Refusal {
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Malformed(_) => "malformed_payment",
            Refusal::UnsupportedScheme => "unsupported_scheme",
            Refusal::WrongNetwork { .. } => "wrong_network",
            Refusal::WrongFeePayer(_) => "wrong_fee_payer",
            Refusal::LookupTables => "address_lookup_tables",
            Refusal::UnexpectedInstruction(_) => "unexpected_instruction",
            Refusal::FeePayerInInstruction => "fee_payer_in_instruction",
            Refusal::ComputeLimitTooHigh { .. } => "compute_limit_too_high",
            Refusal::ComputePriceTooHigh { .. } => "compute_price_too_high",
            Refusal::WrongAsset { .. } => "wrong_asset",
            Refusal::WrongAmount { .. } => "wrong_amount",
            Refusal::WrongRecipient { .. } => "wrong_recipient",
            Refusal::WrongQuote(_) => "wrong_quote",
            Refusal::InvalidSignature => "invalid_signature",
            Refusal::StaleBlockhash => "stale_blockhash",
            Refusal::SimulationFailed(_) => "simulation_failed",
            Refusal::SettlementFailed(_) => "settlement_failed",
            Refusal::AlreadySettled => "payment_already_settled",
        }
    }
}

/// A payment that passed every check we can make offline.
#[derive(Clone, Debug)]
pub struct Verified {
    /// The wire transaction as received.
    pub wire: Vec<u8>,
    /// Where the message starts in `wire` (after the signatures).
    pub message_offset: usize,
    /// Where the fee payer's signature slot starts in `wire`.
    pub fee_payer_slot: usize,
    /// SHA-256 of the message bytes: the payment's identity.
    pub message_hash: [u8; 32],
    pub payer: Pubkey,
    pub recent_blockhash: String,
    pub token_program: Pubkey,
}

impl Verified {
    pub fn message(&self) -> &[u8] {
        &self.wire[self.message_offset..]
    }

    pub fn message_hash_hex(&self) -> String {
        self.message_hash
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// Read Solana's compact-u16 length prefix; returns (value, bytes used).
fn compact_u16(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut value = 0usize;
    for i in 0..3 {
        let byte = *bytes.get(i)?;
        value |= usize::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// The identity (SHA-256 of the message bytes, hex) of a wire
/// transaction, without judging it.
pub fn message_hash_of(wire: &[u8]) -> Option<String> {
    let (count, prefix) = compact_u16(wire)?;
    let message = wire.get(prefix + 64 * count..).filter(|m| !m.is_empty())?;
    Some(
        Sha256::digest(message)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// Check `wire` (a serialized transaction) against `expected`.
pub fn verify(wire: &[u8], expected: &Expected<'_>) -> Result<Verified, Refusal> {
    let malformed = |why: &str| Refusal::Malformed(why.to_owned());
    let tx: VersionedTransaction =
        wincode::deserialize(wire).map_err(|_| malformed("the transaction does not decode"))?;
    let (count, prefix) = compact_u16(wire).ok_or_else(|| malformed("bad signature count"))?;
    let message_offset = prefix + 64 * count;
    if count != tx.signatures.len() || wire.len() <= message_offset {
        return Err(malformed("bad signature section"));
    }
    let message_bytes = &wire[message_offset..];
    if tx.message.serialize() != message_bytes {
        return Err(malformed("the message is not canonically encoded"));
    }
    tx.message
        .sanitize()
        .map_err(|_| malformed("the message does not sanitize"))?;
    let message = match &tx.message {
        VersionedMessage::Legacy(_) | VersionedMessage::V0(_) => &tx.message,
        VersionedMessage::V1(_) => {
            return Err(malformed("only legacy and v0 messages are accepted"));
        }
    };
    if message
        .address_table_lookups()
        .is_some_and(|lookups| !lookups.is_empty())
    {
        return Err(Refusal::LookupTables);
    }
    let keys = message.static_account_keys();
    let header = message.header();
    if header.num_required_signatures != 2 || tx.signatures.len() != 2 {
        return Err(Refusal::UnexpectedInstruction(
            "the transaction must carry exactly two signers: the server's fee payer, then the payer"
                .to_owned(),
        ));
    }
    if keys.first() != Some(&expected.fee_payer) {
        return Err(Refusal::WrongFeePayer(expected.fee_payer.to_string()));
    }
    let payer = *keys.get(1).ok_or_else(|| malformed("no payer"))?;
    if payer == expected.fee_payer {
        return Err(Refusal::FeePayerInInstruction);
    }

    let mut limit_seen = false;
    let mut price_seen = false;
    let mut transfer: Option<(Pubkey, u64, u8, Pubkey, Pubkey, Pubkey)> = None;
    let mut memo: Option<&[u8]> = None;
    for ix in message.instructions() {
        let program = *keys
            .get(usize::from(ix.program_id_index))
            .ok_or_else(|| malformed("bad program index"))?;
        let accounts: Vec<Pubkey> = ix
            .accounts
            .iter()
            .map(|&i| keys.get(usize::from(i)).copied())
            .collect::<Option<_>>()
            .ok_or_else(|| malformed("bad account index"))?;
        if ix.program_id_index == 0 || accounts.contains(&expected.fee_payer) {
            return Err(Refusal::FeePayerInInstruction);
        }
        let data = ix.data.as_slice();
        if program == COMPUTE_BUDGET_PROGRAM {
            if !accounts.is_empty() {
                return Err(Refusal::UnexpectedInstruction(
                    "a compute-budget instruction with accounts".to_owned(),
                ));
            }
            match (data.first(), data.len()) {
                (Some(&SET_COMPUTE_UNIT_LIMIT), 5) if !limit_seen => {
                    limit_seen = true;
                    let units = u32::from_le_bytes([data[1], data[2], data[3], data[4]]);
                    if units > expected.max_compute_unit_limit {
                        return Err(Refusal::ComputeLimitTooHigh {
                            got: units,
                            cap: expected.max_compute_unit_limit,
                        });
                    }
                }
                (Some(&SET_COMPUTE_UNIT_PRICE), 9) if !price_seen => {
                    price_seen = true;
                    let mut raw = [0u8; 8];
                    raw.copy_from_slice(&data[1..9]);
                    let price = u64::from_le_bytes(raw);
                    if price > expected.max_compute_unit_price {
                        return Err(Refusal::ComputePriceTooHigh {
                            got: price,
                            cap: expected.max_compute_unit_price,
                        });
                    }
                }
                _ => {
                    return Err(Refusal::UnexpectedInstruction(
                        "only one SetComputeUnitLimit and one SetComputeUnitPrice are accepted"
                            .to_owned(),
                    ));
                }
            }
        } else if program == TOKEN_PROGRAM || program == TOKEN_2022_PROGRAM {
            if transfer.is_some() || data.len() != 10 || data[0] != TRANSFER_CHECKED {
                return Err(Refusal::UnexpectedInstruction(
                    "the only token instruction accepted is one TransferChecked".to_owned(),
                ));
            }
            let [source, mint, destination, authority] = accounts[..] else {
                return Err(Refusal::UnexpectedInstruction(
                    "TransferChecked must name source, mint, destination and authority only"
                        .to_owned(),
                ));
            };
            let mut raw = [0u8; 8];
            raw.copy_from_slice(&data[1..9]);
            transfer = Some((
                program,
                u64::from_le_bytes(raw),
                data[9],
                mint,
                destination,
                authority,
            ));
            let _ = source;
        } else if program == MEMO_PROGRAM {
            if memo.is_some() || !accounts.is_empty() {
                return Err(Refusal::UnexpectedInstruction(
                    "exactly one Memo, without accounts, is accepted".to_owned(),
                ));
            }
            memo = Some(data);
        } else {
            return Err(Refusal::UnexpectedInstruction(format!(
                "program {program} is not part of an x402 exact payment"
            )));
        }
    }

    // Without a limit the runtime grants 200,000 units per instruction, so a
    // price alone would let the priority fee exceed what the caps promise.
    if price_seen && !limit_seen {
        return Err(Refusal::UnexpectedInstruction(
            "SetComputeUnitPrice needs a SetComputeUnitLimit beside it".to_owned(),
        ));
    }
    let Some((token_program, amount, decimals, mint, destination, authority)) = transfer else {
        return Err(Refusal::UnexpectedInstruction(
            "the transaction has no TransferChecked".to_owned(),
        ));
    };
    if mint != expected.asset || decimals != expected.decimals {
        return Err(Refusal::WrongAsset {
            got_mint: mint.to_string(),
            got_decimals: decimals,
            want_mint: expected.asset.to_string(),
            want_decimals: expected.decimals,
        });
    }
    if amount != expected.amount {
        return Err(Refusal::WrongAmount {
            got: amount,
            want: expected.amount,
        });
    }
    let ata = spl_associated_token_account_interface::address::get_associated_token_address_with_program_id(
        &expected.pay_to,
        &expected.asset,
        &token_program,
    );
    if destination != ata {
        return Err(Refusal::WrongRecipient {
            got: destination.to_string(),
            want: ata.to_string(),
        });
    }
    if authority != payer {
        return Err(Refusal::UnexpectedInstruction(
            "the transfer's authority must be the transaction's second signer".to_owned(),
        ));
    }
    match memo {
        None => {
            return Err(Refusal::WrongQuote(format!(
                "the payment carries no memo; it must carry a Memo whose data is exactly the quote id {}",
                expected.quote_id
            )));
        }
        Some(data) if data != expected.quote_id.as_bytes() => {
            return Err(Refusal::WrongQuote(format!(
                "the payment's memo names another quote; it must be exactly {}",
                expected.quote_id
            )));
        }
        Some(_) => {}
    }
    if !tx.signatures[1].verify(payer.as_ref(), message_bytes) {
        return Err(Refusal::InvalidSignature);
    }
    let mut message_hash = [0u8; 32];
    message_hash.copy_from_slice(&Sha256::digest(message_bytes));
    Ok(Verified {
        wire: wire.to_vec(),
        message_offset,
        fee_payer_slot: prefix,
        message_hash,
        payer,
        recent_blockhash: message.recent_blockhash().to_string(),
        token_program,
    })
}
