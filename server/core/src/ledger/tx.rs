//! A `getTransaction` result, read into one shape whichever encoding the RPC
//! provider used (`json` or `jsonParsed`, legacy or version 0 with address
//! lookup tables). Only what the ledger needs is kept: the full account
//! list, balances before and after, token balances, and the instructions
//! (top level and inner) reduced to the few operations that move value.

use serde_json::Value;

use super::stake_ix::{self, STAKE_PROGRAM, StakeOp};

pub const SYSTEM_PROGRAM: &str = "11111111111111111111111111111111";
pub const TOKEN_PROGRAM: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
pub const TOKEN_2022_PROGRAM: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
pub const ATA_PROGRAM: &str = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
pub const COMPUTE_BUDGET_PROGRAM: &str = "ComputeBudget111111111111111111111111111111";
pub const MEMO_PROGRAMS: [&str; 2] = [
    "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
    "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
];
/// The wrapped-SOL mint.
pub const NATIVE_MINT: &str = "So11111111111111111111111111111111111111112";

/// Why a transaction could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TxError {
    #[error("transaction JSON: {0}")]
    Shape(String),
}

fn shape(what: &str) -> TxError {
    TxError::Shape(what.to_owned())
}

/// One token account's balance at one side of the transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBalance {
    pub account: String,
    pub mint: String,
    pub owner: Option<String>,
    pub amount: u128,
    pub decimals: u8,
}

/// An instruction reduced to what moves value. Addresses, not indexes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// System transfer (also `transferWithSeed`).
    SolTransfer {
        from: String,
        to: String,
        lamports: u64,
    },
    /// System `createAccount` (also `createAccountWithSeed`).
    CreateAccount {
        funder: String,
        account: String,
        /// What the funder paid in.
        lamports: u64,
    },
    /// Associated-token-account creation.
    CreateTokenAccount { funder: String, account: String },
    /// SPL Token / Token-2022 transfer or transferChecked, and Token-2022's
    /// `transferCheckedWithFee`.
    TokenTransfer {
        source: String,
        destination: String,
        /// What left the source (the gross amount).
        amount: u64,
        /// Of `amount`, what the mint's transfer fee withheld in the
        /// destination account (Token-2022 `TransferFeeConfig`): the
        /// destination is credited `amount - withheld`. Zero for a plain
        /// transfer.
        withheld: u64,
    },
    /// SPL Token / Token-2022 closeAccount.
    CloseAccount {
        account: String,
        destination: String,
    },
    /// A Stake program instruction ([`stake_ix`]).
    Stake(StakeOp),
    /// Anything else: which program ran.
    Other { program: String },
}

/// A program instruction that moves no value by itself and that the
/// token and system parsers do not read: its program, accounts and the
/// first bytes of its data (an Anchor program's 8-byte instruction
/// discriminator), so protocol decoders can tell what it did
/// (`ledger::protocols`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    pub program: String,
    pub accounts: Vec<String>,
    /// Up to the first 8 bytes of the instruction data.
    pub tag: Vec<u8>,
    /// Invoked by the transaction itself, not by another program.
    pub top_level: bool,
}

/// A transaction as the ledger reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxView {
    pub signature: String,
    pub slot: u64,
    pub block_time: Option<i64>,
    pub failed: bool,
    pub fee: u64,
    /// Every account: static keys, then lookup-table writable, then readonly.
    pub keys: Vec<String>,
    /// Which of `keys` signed.
    pub signers: Vec<bool>,
    pub pre_lamports: Vec<u64>,
    pub post_lamports: Vec<u64>,
    pub pre_tokens: Vec<TokenBalance>,
    pub post_tokens: Vec<TokenBalance>,
    /// Top-level then inner instructions, in execution order.
    pub ops: Vec<Op>,
    /// Programs the top-level instructions invoked, in order.
    pub programs: Vec<String>,
    /// Raw (unparsed) instructions of programs other than the system and
    /// token programs, top level and inner, in execution order.
    pub invocations: Vec<Invocation>,
}

impl TxView {
    /// Read a `getTransaction` result (the JSON-RPC `result` member, or the
    /// whole response).
    pub fn parse(value: &Value) -> Result<Self, TxError> {
        let result = value.get("result").unwrap_or(value);
        let tx = &result["transaction"];
        let meta = &result["meta"];
        if !meta.is_object() {
            return Err(shape("no meta"));
        }
        let signature = tx["signatures"][0]
            .as_str()
            .ok_or_else(|| shape("no signature"))?
            .to_owned();
        let message = &tx["message"];
        let (keys, signers) = account_keys(message, meta)?;
        let pre_lamports = u64_list(&meta["preBalances"])?;
        let post_lamports = u64_list(&meta["postBalances"])?;
        if pre_lamports.len() != keys.len() || post_lamports.len() != keys.len() {
            return Err(shape("balances do not match the account list"));
        }
        let pre_tokens = token_balances(&meta["preTokenBalances"], &keys)?;
        let post_tokens = token_balances(&meta["postTokenBalances"], &keys)?;

        let top = message["instructions"]
            .as_array()
            .ok_or_else(|| shape("no instructions"))?;
        let mut inner: Vec<(u64, &Vec<Value>)> = meta["innerInstructions"]
            .as_array()
            .map(|sets| {
                sets.iter()
                    .filter_map(|s| Some((s["index"].as_u64()?, s["instructions"].as_array()?)))
                    .collect()
            })
            .unwrap_or_default();
        inner.sort_by_key(|(i, _)| *i);
        let mut ops = Vec::new();
        let mut programs = Vec::new();
        let mut invocations = Vec::new();
        for (i, ix) in top.iter().enumerate() {
            let op = instruction(ix, &keys, true, &mut invocations)?;
            programs.push(program_of(ix, &keys)?);
            ops.push(op);
            for (_, list) in inner.iter().filter(|(index, _)| *index == i as u64) {
                for ix in list.iter() {
                    ops.push(instruction(ix, &keys, false, &mut invocations)?);
                }
            }
        }
        Ok(Self {
            signature,
            slot: result["slot"].as_u64().ok_or_else(|| shape("no slot"))?,
            block_time: result["blockTime"].as_i64(),
            failed: !meta["err"].is_null(),
            fee: meta["fee"].as_u64().ok_or_else(|| shape("no fee"))?,
            keys,
            signers,
            pre_lamports,
            post_lamports,
            pre_tokens,
            post_tokens,
            ops,
            programs,
            invocations,
        })
    }

    pub fn index_of(&self, address: &str) -> Option<usize> {
        self.keys.iter().position(|k| k == address)
    }

    /// The fee payer: the first account.
    pub fn fee_payer(&self) -> Option<&str> {
        self.keys.first().map(String::as_str)
    }
}

fn u64_list(value: &Value) -> Result<Vec<u64>, TxError> {
    value
        .as_array()
        .ok_or_else(|| shape("balances missing"))?
        .iter()
        .map(|v| v.as_u64().ok_or_else(|| shape("balance not an integer")))
        .collect()
}

/// Keys and signer flags, for both encodings. `jsonParsed` lists every
/// account as `{pubkey, signer, …}` (lookup-table accounts included);
/// `json` lists static keys as strings, the signer count in the header and
/// the lookup-table accounts in `meta.loadedAddresses`.
pub(super) fn account_keys(
    message: &Value,
    meta: &Value,
) -> Result<(Vec<String>, Vec<bool>), TxError> {
    let list = message["accountKeys"]
        .as_array()
        .ok_or_else(|| shape("no accountKeys"))?;
    let mut keys = Vec::with_capacity(list.len());
    let mut signers = Vec::with_capacity(list.len());
    if list.first().is_some_and(Value::is_object) {
        for key in list {
            keys.push(
                key["pubkey"]
                    .as_str()
                    .ok_or_else(|| shape("accountKeys entry without pubkey"))?
                    .to_owned(),
            );
            signers.push(key["signer"].as_bool().unwrap_or(false));
        }
        return Ok((keys, signers));
    }
    let required = message["header"]["numRequiredSignatures"]
        .as_u64()
        .ok_or_else(|| shape("no header.numRequiredSignatures"))? as usize;
    for (i, key) in list.iter().enumerate() {
        keys.push(
            key.as_str()
                .ok_or_else(|| shape("accountKeys entry"))?
                .to_owned(),
        );
        signers.push(i < required);
    }
    for table in ["writable", "readonly"] {
        if let Some(loaded) = meta["loadedAddresses"][table].as_array() {
            for key in loaded {
                keys.push(
                    key.as_str()
                        .ok_or_else(|| shape("loadedAddresses entry"))?
                        .to_owned(),
                );
                signers.push(false);
            }
        }
    }
    Ok((keys, signers))
}

fn token_balances(value: &Value, keys: &[String]) -> Result<Vec<TokenBalance>, TxError> {
    let Some(list) = value.as_array() else {
        return Ok(Vec::new());
    };
    list.iter()
        .map(|b| {
            let index = b["accountIndex"]
                .as_u64()
                .ok_or_else(|| shape("token balance without accountIndex"))?
                as usize;
            let amount = b["uiTokenAmount"]["amount"]
                .as_str()
                .and_then(|a| a.parse::<u128>().ok())
                .ok_or_else(|| shape("token balance amount"))?;
            Ok(TokenBalance {
                account: keys
                    .get(index)
                    .ok_or_else(|| shape("token balance index out of range"))?
                    .clone(),
                mint: b["mint"]
                    .as_str()
                    .ok_or_else(|| shape("token balance mint"))?
                    .to_owned(),
                owner: b["owner"].as_str().map(str::to_owned),
                amount,
                decimals: b["uiTokenAmount"]["decimals"]
                    .as_u64()
                    .and_then(|d| u8::try_from(d).ok())
                    .ok_or_else(|| shape("token balance decimals"))?,
            })
        })
        .collect()
}

fn program_of(ix: &Value, keys: &[String]) -> Result<String, TxError> {
    if let Some(id) = ix["programId"].as_str() {
        return Ok(id.to_owned());
    }
    let index = ix["programIdIndex"]
        .as_u64()
        .ok_or_else(|| shape("instruction without program"))? as usize;
    keys.get(index)
        .cloned()
        .ok_or_else(|| shape("programIdIndex out of range"))
}

/// Read one instruction, parsed (`jsonParsed`) or raw (`json`, or a
/// program `jsonParsed` does not parse); a raw instruction that is not a
/// value move is also kept in `invocations` for the protocol decoders.
fn instruction(
    ix: &Value,
    keys: &[String],
    top_level: bool,
    invocations: &mut Vec<Invocation>,
) -> Result<Op, TxError> {
    let program = program_of(ix, keys)?;
    if let Some(parsed) = ix.get("parsed").filter(|p| p.is_object()) {
        return Ok(parsed_op(&program, parsed));
    }
    let accounts: Vec<String> = match ix["accounts"].as_array() {
        Some(list) => list
            .iter()
            .map(|a| match a {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => n
                    .as_u64()
                    .and_then(|i| keys.get(i as usize).cloned())
                    .ok_or_else(|| shape("account index out of range")),
                _ => Err(shape("instruction account")),
            })
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let data = ix["data"]
        .as_str()
        .map(|d| {
            bs58::decode(d)
                .into_vec()
                .map_err(|_| shape("instruction data is not base58"))
        })
        .transpose()?
        .unwrap_or_default();
    let op = raw_op(&program, &accounts, &data);
    if matches!(op, Op::Other { .. }) {
        invocations.push(Invocation {
            program,
            tag: data.iter().take(8).copied().collect(),
            accounts,
            top_level,
        });
    }
    Ok(op)
}

fn s(info: &Value, key: &str) -> Option<String> {
    info[key].as_str().map(str::to_owned)
}

fn parsed_op(program: &str, parsed: &Value) -> Op {
    parsed_kind_op(
        program,
        parsed["type"].as_str().unwrap_or_default(),
        &parsed["info"],
    )
}

/// A `jsonParsed` instruction, from its `type` and `info`, as [`Op`]: the
/// stored view ([`super::stored`]) keeps the two and reads them here.
pub(super) fn parsed_kind_op(program: &str, kind: &str, info: &Value) -> Op {
    let other = || Op::Other {
        program: program.to_owned(),
    };
    let op = match (program, kind) {
        (SYSTEM_PROGRAM, "transfer" | "transferWithSeed") => (|| {
            Some(Op::SolTransfer {
                from: s(info, "source")?,
                to: s(info, "destination")?,
                lamports: info["lamports"].as_u64()?,
            })
        })(),
        (SYSTEM_PROGRAM, "createAccount" | "createAccountWithSeed") => (|| {
            Some(Op::CreateAccount {
                funder: s(info, "source")?,
                account: s(info, "newAccount")?,
                lamports: info["lamports"].as_u64()?,
            })
        })(),
        (TOKEN_PROGRAM | TOKEN_2022_PROGRAM, "transfer" | "transferChecked") => (|| {
            let amount = info["amount"]
                .as_str()
                .or_else(|| info["tokenAmount"]["amount"].as_str())?
                .parse()
                .ok()?;
            Some(Op::TokenTransfer {
                source: s(info, "source")?,
                destination: s(info, "destination")?,
                amount,
                withheld: 0,
            })
        })(),
        // Token-2022 TransferFeeExtension / TransferCheckedWithFee: the
        // parser shows the gross `tokenAmount` and the withheld `feeAmount`
        // (https://spl.solana.com/token-2022/extensions#transfer-fees).
        (TOKEN_2022_PROGRAM, "transferCheckedWithFee") => (|| {
            let amount = |key: &str| info[key]["amount"].as_str()?.parse().ok();
            Some(Op::TokenTransfer {
                source: s(info, "source")?,
                destination: s(info, "destination")?,
                amount: amount("tokenAmount")?,
                withheld: amount("feeAmount")?,
            })
        })(),
        (TOKEN_PROGRAM | TOKEN_2022_PROGRAM, "closeAccount") => (|| {
            Some(Op::CloseAccount {
                account: s(info, "account")?,
                destination: s(info, "destination")?,
            })
        })(),
        (ATA_PROGRAM, "create" | "createIdempotent") => (|| {
            Some(Op::CreateTokenAccount {
                funder: s(info, "source")?,
                account: s(info, "account")?,
            })
        })(),
        (STAKE_PROGRAM, kind) => stake_ix::parsed(kind, info).map(Op::Stake),
        _ => None,
    };
    op.unwrap_or_else(other)
}

fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    data.get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
}

/// Generic over the accounts' string type so the stored view
/// ([`super::stored`]) can pass addresses borrowed from its table and own
/// only those an `Op` keeps.
pub(super) fn raw_op<S: AsRef<str>>(program: &str, accounts: &[S], data: &[u8]) -> Op {
    let account = |i: usize| accounts.get(i).map(|a| a.as_ref().to_owned());
    let op = match program {
        SYSTEM_PROGRAM => {
            let tag = data
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes);
            match tag {
                // CreateAccount { lamports, space, owner }: [funder, new]
                Some(0) => (|| {
                    Some(Op::CreateAccount {
                        funder: account(0)?,
                        account: account(1)?,
                        lamports: u64_at(data, 4)?,
                    })
                })(),
                // CreateAccountWithSeed { base, seed, lamports, space, owner }:
                // the seed is a u64 length then its bytes.
                Some(3) => (|| {
                    let seed_len = usize::try_from(u64_at(data, 36)?).ok()?;
                    Some(Op::CreateAccount {
                        funder: account(0)?,
                        account: account(1)?,
                        lamports: u64_at(data, 44usize.checked_add(seed_len)?)?,
                    })
                })(),
                // Transfer
                Some(2) => (|| {
                    Some(Op::SolTransfer {
                        from: account(0)?,
                        to: account(1)?,
                        lamports: u64_at(data, 4)?,
                    })
                })(),
                // TransferWithSeed: [from, base, to]
                Some(11) => (|| {
                    Some(Op::SolTransfer {
                        from: account(0)?,
                        to: account(2)?,
                        lamports: u64_at(data, 4)?,
                    })
                })(),
                _ => None,
            }
        }
        TOKEN_PROGRAM | TOKEN_2022_PROGRAM => match data.first() {
            // Transfer: [source, destination, authority]
            Some(3) => (|| {
                Some(Op::TokenTransfer {
                    source: account(0)?,
                    destination: account(1)?,
                    amount: u64_at(data, 1)?,
                    withheld: 0,
                })
            })(),
            // TransferChecked: [source, mint, destination, authority]
            Some(12) => (|| {
                Some(Op::TokenTransfer {
                    source: account(0)?,
                    destination: account(2)?,
                    amount: u64_at(data, 1)?,
                    withheld: 0,
                })
            })(),
            // Token-2022 TransferFeeExtension (26) / TransferCheckedWithFee
            // (1) { amount: u64, decimals: u8, fee: u64 }:
            // [source, mint, destination, authority] (spl-token-2022
            // `extension::transfer_fee::instruction`).
            Some(26) if program == TOKEN_2022_PROGRAM && data.get(1) == Some(&1) => (|| {
                Some(Op::TokenTransfer {
                    source: account(0)?,
                    destination: account(2)?,
                    amount: u64_at(data, 2)?,
                    withheld: u64_at(data, 11)?,
                })
            })(
            ),
            // CloseAccount: [account, destination, owner]
            Some(9) => (|| {
                Some(Op::CloseAccount {
                    account: account(0)?,
                    destination: account(1)?,
                })
            })(),
            _ => None,
        },
        STAKE_PROGRAM => stake_ix::raw(accounts, data).map(Op::Stake),
        // Create (empty data or 0) and CreateIdempotent (1): [funder, ata, wallet, mint, …]
        ATA_PROGRAM if matches!(data.first(), None | Some(0) | Some(1)) => (|| {
            Some(Op::CreateTokenAccount {
                funder: account(0)?,
                account: account(1)?,
            })
        })(),
        _ => None,
    };
    op.unwrap_or_else(|| Op::Other {
        program: program.to_owned(),
    })
}
