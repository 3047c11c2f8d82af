//! `find_first_funder` (SPEC G2): the first inbound SOL transfer into a
//! wallet within a bounded walk back through its history.
//!
//! The walk pages `getSignaturesForAddress` back, 1000 at a time, at most
//! `graph.funder_max_pages` pages. A page shorter than 1000 is the wallet's
//! beginning; only then are its oldest transactions read forward (at most
//! `graph.funder_max_transactions`, a few per request) until one carries
//! SOL into the wallet from a wallet. Without the beginning, or with the
//! budget spent, or with a transaction the node cannot serve on the way,
//! the answer is `not_found_within_window`: the oldest transfer we saw is
//! not claimed to be the first. Failed transactions move no SOL but their
//! fee, so they are skipped without being read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Graph, GraphNode, Signals, admit, caller, entities, refunded, replayed, rpc_failed};
use crate::{
    accounts::Principal,
    analytics::flows,
    credits::{ActionId, Charge, Started, args_hash},
    error::AppError,
    ledger::{CounterpartyKind, Direction, OperationType, SOL},
    solana::{RpcCost, SignatureInfo, WalletAddress},
    values::rfc3339,
};

/// Signatures per page, the RPC's maximum.
pub const PAGE: usize = 1000;
/// Transactions read per request while walking forward.
const FORWARD_CHUNK: usize = 5;

/// What a node carries as its finding.
pub const LABEL: &str = "first inbound transfer within the scanned window";

/// The arguments of `find_first_funder` and the body of `POST /v1/graph/funder`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindFirstFunderArgs {
    /// The wallet to look up, a base58 public key.
    pub address: WalletAddress,
    /// An idempotency key you choose for this lookup; retrying the same key is not charged twice.
    pub action_id: ActionId,
}

/// The first inbound SOL transfer found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FirstInbound {
    pub sender: String,
    pub signature: String,
    pub slot: u64,
    /// RFC 3339; null when the node does not know it.
    pub block_time: Option<String>,
    /// Lamports received, as a string.
    pub lamports: String,
}

/// A lookup's finding, as cached per wallet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Finding {
    first_inbound: Option<FirstInbound>,
    signatures_scanned: u64,
    pages_read: u32,
    transactions_read: u32,
    complete: bool,
    /// Why nothing was found, when nothing was.
    reason: Option<String>,
}

/// `find_first_funder`'s answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FirstFunder {
    pub address: String,
    /// found or not_found_within_window.
    pub status: String,
    pub first_inbound: Option<FirstInbound>,
    /// The sender as a node: your label, a registry entity with its citation.
    pub node: Option<GraphNode>,
    /// What the finding is, and only that: "first inbound transfer within
    /// the scanned window" (evidence, never a verdict).
    pub label: Option<String>,
    /// Why nothing was found: the page cap, the transaction budget, a
    /// transaction the node could not serve, or no inbound SOL transfer.
    pub reason: Option<String>,
    /// Signatures the walk listed.
    pub signatures_scanned: u64,
    /// Signature pages read (1000 each).
    pub pages_read: u32,
    /// Transactions fetched forward from the oldest (a few per request, so
    /// up to four past the one found).
    pub transactions_read: u32,
    /// True when the walk reached the wallet's beginning and read every
    /// transaction it needed.
    pub complete: bool,
    /// Served from the per-wallet cache (the cached price).
    pub cached: bool,
    /// JSON-RPC requests this call made.
    pub rpc_calls: u64,
    pub action_id: String,
    /// What this call took from your credits (0 on a retry), atomic USDC.
    pub cost_atomic: String,
    /// Your balance after it, atomic USDC.
    pub balance_atomic: String,
    /// True when this answers an earlier call under the same action_id.
    pub replayed: bool,
}

fn key(address: &WalletAddress) -> String {
    format!("funder:{}", address.as_str())
}

/// `find_first_funder` for the MCP tool and the REST route alike.
pub async fn find_first_funder(
    graph: &Graph<'_>,
    principal: &Principal,
    args: FindFirstFunderArgs,
) -> Result<FirstFunder, AppError> {
    let account = caller(principal, "find_first_funder")?;
    admit(graph, account).await?;
    let store = graph.reads.store();
    let credits = graph.credits();
    let fresh_since = graph.now_ms() - super::secs_ms(graph.config.funder_cache_secs);
    let cached: Option<Finding> = match store
        .graph_cache_get(&key(&args.address), fresh_since)
        .await?
    {
        Some(text) => serde_json::from_str(&text).ok(),
        None => None,
    };
    let cost = if cached.is_some() {
        graph.config.cached_funder_usd
    } else {
        graph.config.funder_usd
    };
    let action_id = args.action_id.clone();
    let charge = Charge {
        account,
        action_id: &action_id,
        tool: "find_first_funder",
        args_hash: args_hash(&json!({"address": args.address.as_str()})),
        cost,
        note: format!(
            "find_first_funder{} of {}",
            if cached.is_some() { " (cached)" } else { "" },
            args.address.short()
        ),
    };
    let balance = match credits.begin(&charge).await? {
        Started::Replay { result } => {
            let balance = credits.balance(account).await?;
            return serde_json::from_value(replayed(result, balance))
                .map_err(|e| AppError::internal("a stored funder lookup", e));
        }
        Started::Charged { balance_atomic } => balance_atomic,
    };
    let rpc_cost = RpcCost::default();
    let outcome = async {
        let was_cached = cached.is_some();
        let finding = match cached {
            Some(f) => f,
            None => {
                let f = walk(graph, &args.address, &rpc_cost).await?;
                let text = serde_json::to_string(&f)
                    .map_err(|e| AppError::internal("caching a funder lookup", e))?;
                store
                    .graph_cache_put(&key(&args.address), &text, graph.now_ms())
                    .await?;
                f
            }
        };
        let node = match &finding.first_inbound {
            Some(first) => {
                let namer = flows::namer_for(store, Some(account)).await?;
                let named = namer.name(&first.sender);
                let entity = entities::entity(&first.sender);
                Some(GraphNode {
                    id: first.sender.clone(),
                    kind: "counterparty".to_owned(),
                    name: named.name.or_else(|| entity.map(|e| e.name.clone())),
                    category: match (named.category.as_str(), entity) {
                        ("external", Some(e)) => e.category.clone(),
                        (c, _) => c.to_owned(),
                    },
                    entity: entity.cloned(),
                    signals: Signals {
                        legs: 1,
                        first_seen: first.block_time.clone(),
                        last_seen: first.block_time.clone(),
                        ..Signals::default()
                    },
                })
            }
            None => None,
        };
        Ok::<_, AppError>(FirstFunder {
            address: args.address.to_string(),
            status: if finding.first_inbound.is_some() {
                "found"
            } else {
                "not_found_within_window"
            }
            .to_owned(),
            label: finding.first_inbound.as_ref().map(|_| LABEL.to_owned()),
            first_inbound: finding.first_inbound,
            node,
            reason: finding.reason,
            signatures_scanned: finding.signatures_scanned,
            pages_read: finding.pages_read,
            transactions_read: finding.transactions_read,
            complete: finding.complete,
            cached: was_cached,
            rpc_calls: rpc_cost.credits(),
            action_id: action_id.as_str().to_owned(),
            cost_atomic: cost.usdc_atomic().to_string(),
            balance_atomic: balance.to_string(),
            replayed: false,
        })
    }
    .await;
    match outcome {
        Ok(out) => {
            let value = serde_json::to_value(&out)
                .map_err(|e| AppError::internal("a funder lookup's result", e))?;
            credits.finish(account, &action_id, &value).await?;
            Ok(out)
        }
        Err(err) => {
            credits.refund(account, &action_id).await;
            Err(refunded(err))
        }
    }
}

/// The bounded walk.
async fn walk(
    graph: &Graph<'_>,
    address: &WalletAddress,
    cost: &RpcCost,
) -> Result<Finding, AppError> {
    let max_pages = graph.config.funder_max_pages;
    let mut all: Vec<SignatureInfo> = Vec::new();
    let mut before: Option<String> = None;
    let mut pages = 0u32;
    let mut reached_start = false;
    while pages < max_pages {
        let page = graph
            .rpc
            .signatures(address.as_str(), before.as_deref(), None, PAGE, cost)
            .await
            .map_err(|e| rpc_failed("funder lookup: signatures", &e))?;
        pages += 1;
        let full = page.len() >= PAGE;
        before = page.last().map(|s| s.signature.clone());
        all.extend(page);
        if !full || before.is_none() {
            reached_start = true;
            break;
        }
    }
    let scanned = all.len() as u64;
    if !reached_start {
        return Ok(Finding {
            first_inbound: None,
            signatures_scanned: scanned,
            pages_read: pages,
            transactions_read: 0,
            complete: false,
            reason: Some(format!(
                "the walk reached the page cap ({max_pages} pages of {PAGE}) before the wallet's \
                 first transaction"
            )),
        });
    }
    // Oldest first; failed transactions moved no SOL in.
    let forward: Vec<&SignatureInfo> = all.iter().rev().filter(|s| !s.err).collect();
    let budget = graph.config.funder_max_transactions as usize;
    let mut read = 0u32;
    for chunk in forward.chunks(FORWARD_CHUNK) {
        if read as usize >= budget {
            return Ok(Finding {
                first_inbound: None,
                signatures_scanned: scanned,
                pages_read: pages,
                transactions_read: read,
                complete: false,
                reason: Some(format!(
                    "the transaction budget ({budget} of the oldest) ran out before an inbound \
                     SOL transfer"
                )),
            });
        }
        let take = chunk.len().min(budget - read as usize);
        let chunk = &chunk[..take];
        let list: Vec<String> = chunk.iter().map(|s| s.signature.clone()).collect();
        let txs = graph
            .rpc
            .transactions(&list, cost)
            .await
            .map_err(|e| rpc_failed("funder lookup: transactions", &e))?;
        // Every transaction fetched counts, found or not: the count is
        // the RPC cost of the forward walk.
        read += u32::try_from(chunk.len()).unwrap_or(u32::MAX);
        for (info, tx) in chunk.iter().zip(txs) {
            let view = match tx.as_ref().map(crate::ledger::TxView::parse) {
                Some(Ok(view)) => view,
                _ => {
                    return Ok(Finding {
                        first_inbound: None,
                        signatures_scanned: scanned,
                        pages_read: pages,
                        transactions_read: read,
                        complete: false,
                        reason: Some(format!(
                            "transaction {} could not be read, so what follows it cannot be \
                             called the first",
                            info.signature
                        )),
                    });
                }
            };
            if let Some(first) = inbound_sol(&view, address.as_str(), info) {
                return Ok(Finding {
                    first_inbound: Some(first),
                    signatures_scanned: scanned,
                    pages_read: pages,
                    transactions_read: read,
                    complete: true,
                    reason: None,
                });
            }
        }
    }
    Ok(Finding {
        first_inbound: None,
        signatures_scanned: scanned,
        pages_read: pages,
        transactions_read: read,
        complete: true,
        reason: Some(
            "the wallet's whole history has no inbound SOL transfer from a wallet".to_owned(),
        ),
    })
}

/// The SOL a wallet sent into `wallet` in `tx`, if any.
fn inbound_sol(
    tx: &crate::ledger::TxView,
    wallet: &str,
    info: &SignatureInfo,
) -> Option<FirstInbound> {
    crate::ledger::legs(tx, wallet).into_iter().find_map(|leg| {
        let inbound = leg.mint == SOL
            && leg.amount > 0
            && matches!(
                leg.operation_type,
                OperationType::TransferIn | OperationType::Airdrop | OperationType::AirdropSpam
            );
        let sender = leg.counterparties.iter().find(|c| {
            c.direction == Direction::In
                && c.kind == CounterpartyKind::Wallet
                && c.address != wallet
        })?;
        inbound.then(|| FirstInbound {
            sender: sender.address.clone(),
            signature: leg.signature.clone(),
            slot: info.slot,
            block_time: leg
                .block_time
                .or(info.block_time)
                .map(|t| rfc3339(t * 1000)),
            lamports: leg.amount.to_string(),
        })
    })
}
