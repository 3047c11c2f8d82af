//! The hand-built transaction shared by the core's protocol tests
//! (lending, pools and fees, NFT trades): accounts with their lamports
//! before and after, token balances, instructions, parsed as the RPC's
//! `jsonParsed` answer is.
#![allow(dead_code, clippy::unwrap_used)]

use ledger_core::ledger::TxView;
use serde_json::{Value, json};

/// The network fee every built transaction pays.
pub const FEE: u64 = 5_000;

/// A transaction under construction: accounts with their lamports before
/// and after, token balances, top-level instructions and their inner ones.
#[derive(Default)]
pub struct Build {
    keys: Vec<(String, bool)>,
    pre: Vec<u64>,
    post: Vec<u64>,
    pre_tokens: Vec<Value>,
    post_tokens: Vec<Value>,
    ixs: Vec<Value>,
    inner: Vec<Value>,
}

impl Build {
    pub fn account(mut self, key: &str, signer: bool, pre: u64, post: u64) -> Self {
        self.keys.push((key.to_owned(), signer));
        self.pre.push(pre);
        self.post.push(post);
        self
    }

    pub fn index(&self, key: &str) -> usize {
        self.keys.iter().position(|(k, _)| k == key).unwrap()
    }

    /// A token account's balance on each side (`None`: absent there).
    pub fn token(
        mut self,
        account: &str,
        mint: &str,
        owner: &str,
        decimals: u8,
        pre: Option<u64>,
        post: Option<u64>,
    ) -> Self {
        let i = self.index(account);
        let balance = |amount: u64| {
            json!({"accountIndex": i, "mint": mint, "owner": owner,
                   "uiTokenAmount": {"amount": amount.to_string(), "decimals": decimals}})
        };
        if let Some(a) = pre {
            self.pre_tokens.push(balance(a));
        }
        if let Some(a) = post {
            self.post_tokens.push(balance(a));
        }
        self
    }

    /// A top-level instruction and the inner instructions it ran.
    pub fn ix(mut self, ix: Value, inner: Vec<Value>) -> Self {
        if !inner.is_empty() {
            self.inner
                .push(json!({"index": self.ixs.len(), "instructions": inner}));
        }
        self.ixs.push(ix);
        self
    }

    pub fn build(self) -> TxView {
        let keys: Vec<Value> = self
            .keys
            .iter()
            .map(|(k, s)| json!({"pubkey": k, "signer": s, "writable": true, "source": "transaction"}))
            .collect();
        TxView::parse(&json!({
            "slot": 300_000_000, "blockTime": 1_760_000_000,
            "transaction": {"signatures": ["sig"], "message": {"accountKeys": keys, "instructions": self.ixs}},
            "meta": {"err": null, "fee": FEE, "preBalances": self.pre, "postBalances": self.post,
                     "preTokenBalances": self.pre_tokens, "postTokenBalances": self.post_tokens,
                     "innerInstructions": self.inner}
        }))
        .unwrap()
    }
}
