//! The stored transaction view: what the decoder reads of a
//! `getTransaction` result, kept in a compact, versioned binary form so a
//! wallet's legs can be derived again by a newer decoder
//! ([`super::DECODER_VERSION`]) without asking the RPC provider again.
//!
//! What is kept is the transaction as the chain gave it, not the decoder's
//! reading of it: the signature, slot, block time, fee and error; every
//! account key (static, then the lookup tables' writable and readonly) and
//! which signed; lamports and token balances before and after (account,
//! mint, owner, amount, decimals); and every instruction, top level and
//! inner, in execution order, with its program, its accounts and all of
//! its data. An instruction the provider served parsed (`jsonParsed`) has
//! no raw data: its `type` and `info` are kept as the provider wrote them.
//! Log messages, return data, compute units and rewards are left out: no
//! reading uses them. So a decoder that later reads more of an instruction
//! (an amount in its data, an account it names) finds it here.
//!
//! Layout (all integers unsigned LEB128 unless said; a string is its byte
//! length then its UTF-8 bytes; an address is an index into the table):
//!
//! ```text
//! format (1 byte, FORMAT)
//! addresses: count, then each as a string (account keys first)
//! key count; signer count, then each signer's key index
//! signature (string); slot; block time (0 absent, 1 then zigzag i64); fee
//! error (0 none, 1 then its JSON text)
//! pre lamports, post lamports: one per key
//! pre token balances, post token balances: count, then each
//!     account, mint, owner (0 none, else index + 1), amount (u128), decimals (1 byte)
//! top-level instruction count, then each instruction followed by its
//!     inner instruction count and those instructions
//! instruction: kind (1 byte: 0 raw, 1 parsed), program, then
//!     raw: account count, accounts, data length, data
//!     parsed: type (string), info (JSON text)
//! ```
//!
//! Addresses are kept as base58 text, each once per transaction: the
//! decoder works on text, and turning 32 bytes back into base58 costs more
//! per key than the rest of a transaction's reading (docs/benchmarks.md).
//! [`FORMAT`] changes whenever this layout does; a view of another format
//! is refused, never misread.

use std::collections::HashMap;

use serde_json::Value;

use super::tx::{Invocation, Op, TokenBalance, TxError, TxView, account_keys};

/// The layout's version, the first byte of every stored view.
pub const FORMAT: u8 = 1;

fn shape(what: &str) -> TxError {
    TxError::Shape(format!("stored view: {what}"))
}

fn put_uint(out: &mut Vec<u8>, mut v: u128) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_uint(out, s.len() as u128);
    out.extend_from_slice(s.as_bytes());
}

/// The address table being built: each address once, keys first.
struct Table<'a> {
    list: Vec<&'a str>,
    index: HashMap<&'a str, usize>,
}

impl<'a> Table<'a> {
    fn of(&mut self, address: &'a str) -> usize {
        if let Some(i) = self.index.get(address) {
            return *i;
        }
        self.list.push(address);
        self.index.insert(address, self.list.len() - 1);
        self.list.len() - 1
    }
}

/// Encode a `getTransaction` result (the JSON-RPC `result` member, or the
/// whole response), in either encoding, into its stored view.
pub fn encode(value: &Value) -> Result<Vec<u8>, TxError> {
    let result = value.get("result").unwrap_or(value);
    let tx = &result["transaction"];
    let meta = &result["meta"];
    if !meta.is_object() {
        return Err(shape("no meta"));
    }
    let signature = tx["signatures"][0]
        .as_str()
        .ok_or_else(|| shape("no signature"))?;
    let message = &tx["message"];
    let (keys, signers) = account_keys(message, meta)?;
    let mut table = Table {
        list: Vec::with_capacity(keys.len() + 4),
        index: HashMap::with_capacity(keys.len() + 4),
    };
    for key in &keys {
        table.list.push(key.as_str());
        table
            .index
            .entry(key.as_str())
            .or_insert(table.list.len() - 1);
    }
    let mut body = Vec::with_capacity(1024);
    put_uint(&mut body, keys.len() as u128);
    let signer_list: Vec<usize> = (0..signers.len()).filter(|i| signers[*i]).collect();
    put_uint(&mut body, signer_list.len() as u128);
    for i in signer_list {
        put_uint(&mut body, i as u128);
    }
    put_str(&mut body, signature);
    put_uint(
        &mut body,
        u128::from(result["slot"].as_u64().ok_or_else(|| shape("no slot"))?),
    );
    match result["blockTime"].as_i64() {
        Some(t) => {
            body.push(1);
            put_uint(&mut body, u128::from(((t << 1) ^ (t >> 63)) as u64));
        }
        None => body.push(0),
    }
    put_uint(
        &mut body,
        u128::from(meta["fee"].as_u64().ok_or_else(|| shape("no fee"))?),
    );
    if meta["err"].is_null() {
        body.push(0);
    } else {
        body.push(1);
        put_str(&mut body, &meta["err"].to_string());
    }
    for side in ["preBalances", "postBalances"] {
        let list = meta[side]
            .as_array()
            .ok_or_else(|| shape("balances missing"))?;
        if list.len() != keys.len() {
            return Err(shape("balances do not match the account list"));
        }
        for v in list {
            put_uint(
                &mut body,
                u128::from(v.as_u64().ok_or_else(|| shape("balance not an integer"))?),
            );
        }
    }
    for side in ["preTokenBalances", "postTokenBalances"] {
        let list = meta[side].as_array().map(Vec::as_slice).unwrap_or_default();
        put_uint(&mut body, list.len() as u128);
        for b in list {
            let index = b["accountIndex"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .filter(|i| *i < keys.len())
                .ok_or_else(|| shape("token balance accountIndex"))?;
            put_uint(&mut body, index as u128);
            let mint = b["mint"]
                .as_str()
                .ok_or_else(|| shape("token balance mint"))?;
            put_uint(&mut body, table.of(mint) as u128);
            match b["owner"].as_str() {
                Some(owner) => put_uint(&mut body, table.of(owner) as u128 + 1),
                None => body.push(0),
            }
            let amount = b["uiTokenAmount"]["amount"]
                .as_str()
                .and_then(|a| a.parse::<u128>().ok())
                .ok_or_else(|| shape("token balance amount"))?;
            put_uint(&mut body, amount);
            body.push(
                b["uiTokenAmount"]["decimals"]
                    .as_u64()
                    .and_then(|d| u8::try_from(d).ok())
                    .ok_or_else(|| shape("token balance decimals"))?,
            );
        }
    }
    let top = message["instructions"]
        .as_array()
        .ok_or_else(|| shape("no instructions"))?;
    let sets: Vec<(u64, &Vec<Value>)> = meta["innerInstructions"]
        .as_array()
        .map(|sets| {
            sets.iter()
                .filter_map(|s| Some((s["index"].as_u64()?, s["instructions"].as_array()?)))
                .collect()
        })
        .unwrap_or_default();
    put_uint(&mut body, top.len() as u128);
    for (i, ix) in top.iter().enumerate() {
        put_instruction(&mut body, ix, &keys, &mut table)?;
        let inner: Vec<&Value> = sets
            .iter()
            .filter(|(index, _)| *index == i as u64)
            .flat_map(|(_, list)| list.iter())
            .collect();
        put_uint(&mut body, inner.len() as u128);
        for ix in inner {
            put_instruction(&mut body, ix, &keys, &mut table)?;
        }
    }
    let mut out = Vec::with_capacity(body.len() + table.list.len() * 45 + 8);
    out.push(FORMAT);
    put_uint(&mut out, table.list.len() as u128);
    for address in &table.list {
        put_str(&mut out, address);
    }
    out.extend_from_slice(&body);
    Ok(out)
}

fn put_instruction<'a>(
    out: &mut Vec<u8>,
    ix: &'a Value,
    keys: &[String],
    table: &mut Table<'a>,
) -> Result<(), TxError> {
    let program = match ix["programId"].as_str() {
        Some(id) => table.of(id),
        None => ix["programIdIndex"]
            .as_u64()
            .and_then(|i| usize::try_from(i).ok())
            .filter(|i| *i < keys.len())
            .ok_or_else(|| shape("instruction without program"))?,
    };
    if let Some(parsed) = ix.get("parsed").filter(|p| p.is_object()) {
        out.push(1);
        put_uint(out, program as u128);
        put_str(out, parsed["type"].as_str().unwrap_or_default());
        put_str(out, &parsed["info"].to_string());
        return Ok(());
    }
    out.push(0);
    put_uint(out, program as u128);
    let accounts = ix["accounts"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    put_uint(out, accounts.len() as u128);
    for a in accounts {
        let index = match a {
            Value::String(s) => table.of(s.as_str()),
            Value::Number(n) => n
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .filter(|i| *i < keys.len())
                .ok_or_else(|| shape("account index out of range"))?,
            _ => return Err(shape("instruction account")),
        };
        put_uint(out, index as u128);
    }
    let data = ix["data"]
        .as_str()
        .map(|d| {
            bs58::decode(d)
                .into_vec()
                .map_err(|_| shape("instruction data is not base58"))
        })
        .transpose()?
        .unwrap_or_default();
    put_uint(out, data.len() as u128);
    out.extend_from_slice(&data);
    Ok(())
}

/// A cursor over a stored view.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, TxError> {
        let b = *self.bytes.get(self.at).ok_or_else(|| shape("truncated"))?;
        self.at += 1;
        Ok(b)
    }

    fn uint(&mut self) -> Result<u128, TxError> {
        let mut v: u128 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.byte()?;
            if shift >= 128 {
                return Err(shape("integer too long"));
            }
            v |= u128::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    /// [`Self::uint`] for what fits 64 bits (lamports, slots, fees): the
    /// same bytes, read in 64-bit arithmetic, the common case of a view.
    fn u64(&mut self) -> Result<u64, TxError> {
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.byte()?;
            if shift >= 64 || (shift == 63 && b > 1) {
                return Err(shape("integer out of range"));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    fn usize(&mut self) -> Result<usize, TxError> {
        // Indexes, counts and lengths are nearly always below 128: one
        // byte, read without the general loop.
        if let Some(&b) = self.bytes.get(self.at)
            && b < 0x80
        {
            self.at += 1;
            return Ok(usize::from(b));
        }
        usize::try_from(self.uint()?).map_err(|_| shape("integer out of range"))
    }

    fn bytes(&mut self) -> Result<&'a [u8], TxError> {
        let len = self.usize()?;
        let end = self
            .at
            .checked_add(len)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| shape("truncated"))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn str(&mut self) -> Result<&'a str, TxError> {
        std::str::from_utf8(self.bytes()?).map_err(|_| shape("text is not UTF-8"))
    }
}

/// Read a stored view back into the [`TxView`] the decoder reads: the same
/// view [`TxView::parse`] gives for the result it was encoded from.
///
/// Addresses are borrowed from the view's table while reading and owned
/// only where the `TxView` keeps them (keys, token balances, the accounts
/// an `Op` or an [`Invocation`] holds): an instruction's account list is
/// read into one reused list of borrowed addresses, so a system or token
/// instruction costs no allocation beyond the two addresses its `Op`
/// keeps (docs/benchmarks.md, "Decode and legs").
pub fn decode(bytes: &[u8]) -> Result<TxView, TxError> {
    let mut r = Reader { bytes, at: 0 };
    let format = r.byte()?;
    if format != FORMAT {
        return Err(shape("unknown format"));
    }
    let count = r.usize()?;
    let mut addresses: Vec<&str> = Vec::with_capacity(count.min(bytes.len()));
    for _ in 0..count {
        addresses.push(r.str()?);
    }
    let address = |i: usize| {
        addresses
            .get(i)
            .map(|a| (*a).to_owned())
            .ok_or_else(|| shape("address index out of range"))
    };
    let n_keys = r.usize()?;
    if n_keys > addresses.len() {
        return Err(shape("more keys than addresses"));
    }
    let keys: Vec<String> = addresses[..n_keys]
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
    let mut signers = vec![false; n_keys];
    for _ in 0..r.usize()? {
        let i = r.usize()?;
        *signers.get_mut(i).ok_or_else(|| shape("signer index"))? = true;
    }
    let signature = r.str()?.to_owned();
    let slot = r.u64()?;
    let block_time = match r.byte()? {
        0 => None,
        _ => {
            let z = r.u64()?;
            Some(((z >> 1) as i64) ^ -((z & 1) as i64))
        }
    };
    let fee = r.u64()?;
    let failed = match r.byte()? {
        0 => false,
        _ => {
            r.str()?;
            true
        }
    };
    let mut pre_lamports = Vec::with_capacity(n_keys);
    for _ in 0..n_keys {
        pre_lamports.push(r.u64()?);
    }
    let mut post_lamports = Vec::with_capacity(n_keys);
    for _ in 0..n_keys {
        post_lamports.push(r.u64()?);
    }
    let tokens = |r: &mut Reader<'_>| -> Result<Vec<TokenBalance>, TxError> {
        let n = r.usize()?;
        let mut out = Vec::with_capacity(n.min(bytes.len()));
        for _ in 0..n {
            let account = r.usize()?;
            if account >= n_keys {
                return Err(shape("token balance index out of range"));
            }
            let account = address(account)?;
            let mint = address(r.usize()?)?;
            let owner = match r.usize()? {
                0 => None,
                i => Some(address(i - 1)?),
            };
            let amount = r.uint()?;
            let decimals = r.byte()?;
            out.push(TokenBalance {
                account,
                mint,
                owner,
                amount,
                decimals,
            });
        }
        Ok(out)
    };
    let pre_tokens = tokens(&mut r)?;
    let post_tokens = tokens(&mut r)?;
    let n_top = r.usize()?;
    let mut ops = Vec::with_capacity(n_top * 2);
    let mut programs = Vec::with_capacity(n_top);
    let mut invocations = Vec::new();
    let mut scratch: Vec<&str> = Vec::new();
    for _ in 0..n_top {
        let (program, op) = instruction(&mut r, &addresses, true, &mut scratch, &mut invocations)?;
        programs.push(program.to_owned());
        ops.push(op);
        for _ in 0..r.usize()? {
            let (_, op) = instruction(&mut r, &addresses, false, &mut scratch, &mut invocations)?;
            ops.push(op);
        }
    }
    if r.at != bytes.len() {
        return Err(shape("trailing bytes"));
    }
    Ok(TxView {
        signature,
        slot,
        block_time,
        failed,
        fee,
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

/// One instruction: its program (borrowed; the caller owns it only for a
/// top-level one) and its `Op`. `scratch` is the caller's list, reused
/// from one instruction to the next, that the accounts are read into.
fn instruction<'a>(
    r: &mut Reader<'a>,
    addresses: &[&'a str],
    top_level: bool,
    scratch: &mut Vec<&'a str>,
    invocations: &mut Vec<Invocation>,
) -> Result<(&'a str, Op), TxError> {
    let kind = r.byte()?;
    let program: &'a str = addresses
        .get(r.usize()?)
        .copied()
        .ok_or_else(|| shape("program index out of range"))?;
    if kind == 1 {
        let parsed_type = r.str()?;
        let info: Value =
            serde_json::from_str(r.str()?).map_err(|_| shape("parsed instruction info"))?;
        let op = super::tx::parsed_kind_op(program, parsed_type, &info);
        return Ok((program, op));
    }
    let n = r.usize()?;
    scratch.clear();
    scratch.reserve(n.min(addresses.len().max(1) * 4));
    for _ in 0..n {
        scratch.push(
            addresses
                .get(r.usize()?)
                .copied()
                .ok_or_else(|| shape("account index out of range"))?,
        );
    }
    let data = r.bytes()?;
    let op = super::tx::raw_op(program, scratch, data);
    if matches!(op, Op::Other { .. }) {
        invocations.push(Invocation {
            program: program.to_owned(),
            accounts: scratch.iter().map(|a| (*a).to_owned()).collect(),
            tag: data.iter().take(8).copied().collect(),
            top_level,
        });
    }
    Ok((program, op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_at_their_edges() {
        for v in [0u128, 1, 127, 128, 300, u128::from(u64::MAX), u128::MAX] {
            let mut out = Vec::new();
            put_uint(&mut out, v);
            let mut r = Reader { bytes: &out, at: 0 };
            assert_eq!(r.uint().ok(), Some(v));
            assert_eq!(r.at, out.len());
        }
    }

    #[test]
    fn a_64_bit_integer_reads_as_the_general_reading_does() {
        for v in [0u128, 1, 127, 128, 300, u128::from(u64::MAX)] {
            let mut out = Vec::new();
            put_uint(&mut out, v);
            let mut r = Reader { bytes: &out, at: 0 };
            assert_eq!(r.u64().ok().map(u128::from), Some(v));
            assert_eq!(r.at, out.len());
        }
        for v in [u128::from(u64::MAX) + 1, u128::MAX] {
            let mut out = Vec::new();
            put_uint(&mut out, v);
            assert!(Reader { bytes: &out, at: 0 }.u64().is_err(), "{v}");
        }
    }

    #[test]
    fn a_view_of_another_format_or_cut_short_is_refused() {
        assert!(decode(&[FORMAT + 1]).is_err());
        assert!(decode(&[]).is_err());
        assert!(decode(&[FORMAT, 5]).is_err());
    }
}
