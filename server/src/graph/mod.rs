//! Follow the money (SPEC G1, G2): `expand_graph`, one hop of a wallet's
//! counterparties as nodes and edges, from its scanned ledger or live from
//! its most recent signatures; and `find_first_funder` ([`funder`]), the
//! first inbound SOL transfer within a bounded walk back through its
//! history.
//!
//! Both are research actions paid from the account's credits
//! ([`crate::credits`]): checked, then charged, then fetched, so too little
//! credit fetches nothing; a failure after the charge is refunded; a retry
//! under the same `action_id` answers the stored result for nothing.
//!
//! Nodes carry evidence, never a verdict: a cited registry entity
//! ([`entities`]) when a public source names the address, and signals that
//! are counts and times measured from the legs (counterparty count, first
//! and last seen, share of volume, fan-in and fan-out, program or token
//! account). Nothing here labels an address as good or bad.
//!
//! The aggregation is `analytics::flows::compute` (one graph code path for
//! `get_flows` and this); ranking, caps and signals are added on top.

pub mod entities;
pub mod funder;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    accounts::{AccountId, Principal},
    analytics::{
        Leg,
        flows::{self, Edge},
        registry::Namer,
    },
    config::GraphConfig,
    credits::{ActionId, Charge, Credits, Started, args_hash},
    error::{AppError, Code},
    ledger::Direction,
    params::MinUsd,
    reads::Reads,
    solana::{RpcClient, RpcCost, WalletAddress},
    values::{Usd, rfc3339},
};

/// What the research tools are given.
pub struct Graph<'a> {
    pub reads: Reads<'a>,
    pub rpc: &'a RpcClient,
    pub config: &'a GraphConfig,
}

impl<'a> Graph<'a> {
    pub fn credits(&self) -> Credits<'a> {
        Credits {
            store: self.reads.store(),
            config: self.config,
            now_ms: self.reads.now_ms(),
        }
    }

    fn now_ms(&self) -> i64 {
        self.reads.now_ms()
    }
}

/// Which way value moved, as the tool takes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GraphDirection {
    /// Who paid the wallet.
    In,
    /// Who the wallet paid.
    Out,
    /// Both.
    #[default]
    Both,
}

impl GraphDirection {
    fn as_str(self) -> &'static str {
        match self {
            Self::In => "in",
            Self::Out => "out",
            Self::Both => "both",
        }
    }

    fn keeps(self, d: Direction) -> bool {
        matches!(
            (self, d),
            (Self::Both, _) | (Self::In, Direction::In) | (Self::Out, Direction::Out)
        )
    }
}

/// Where an expansion reads from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A scanned wallet's ledger.
    #[default]
    Ledger,
    /// The wallet's most recent transactions, read now.
    Live,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ledger => "ledger",
            Self::Live => "live",
        }
    }
}

/// The arguments of `expand_graph` and the body of `POST /v1/graph/expand`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpandGraphArgs {
    /// The wallet to expand, a base58 public key.
    pub address: WalletAddress,
    /// An idempotency key you choose for this expansion; retrying the same key is not charged twice.
    pub action_id: ActionId,
    /// Only 1 is supported.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1), extend("default" = 1))]
    pub depth: Option<u32>,
    /// In, out or both (default both).
    #[serde(default)]
    #[schemars(extend("default" = "both"))]
    pub direction: Option<GraphDirection>,
    /// Raise a hub's cap to the server's hub maximum, never beyond.
    #[serde(default)]
    pub force: Option<bool>,
    /// Most counterparties to return, 1-100, ranked by volume.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// Drop edges priced below this many USD; unpriced edges are kept.
    #[serde(default)]
    pub min_usd: Option<MinUsd>,
    /// Ledger (a scanned wallet, default) or live (the wallet's recent transactions).
    #[serde(default)]
    #[schemars(extend("default" = "ledger"))]
    pub source: Option<Source>,
    /// For source live, how many recent signatures to read, 1-100.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub window_sigs: Option<u32>,
}

/// Measured facts about a node, from the legs the expansion read. Evidence
/// for a person to weigh, never a verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Signals {
    /// For the expanded wallet: distinct counterparties in what was read
    /// (before limit and hub caps).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterparty_count: Option<u32>,
    /// For the expanded wallet: distinct counterparties that paid it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fan_in: Option<u32>,
    /// For the expanded wallet: distinct counterparties it paid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fan_out: Option<u32>,
    /// Legs between the expanded wallet and this node.
    pub legs: u32,
    /// RFC 3339 of the oldest such leg; null when no block time is known.
    pub first_seen: Option<String>,
    /// RFC 3339 of the newest such leg.
    pub last_seen: Option<String>,
    /// For a counterparty: its share of the expanded wallet's priced
    /// volume in what was read, in percent (a decimal string); null when
    /// nothing it moved was priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_of_volume_pct: Option<String>,
    /// The address is a program (it appears as a program in the legs).
    pub program: bool,
    /// The address is a token account rather than a wallet.
    pub token_account: bool,
}

/// A node of the expansion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GraphNode {
    /// The address.
    pub id: String,
    /// wallet (the expanded wallet), program, token_account or counterparty.
    pub kind: String,
    /// Your label, else the registry entity's or program's name.
    pub name: Option<String>,
    /// self, your label's category, the registry's category, or external.
    pub category: String,
    /// The registry entry naming this address, with its citation.
    pub entity: Option<entities::Entity>,
    pub signals: Signals,
}

/// Why only some counterparties were returned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HubWarning {
    /// What makes the wallet a hub: exchange, bridge or program (the
    /// registry), or counterparty_count (more than the server's threshold).
    pub reason: String,
    /// Counterparties returned at most: the hub cap, or with force the
    /// hub maximum.
    pub cap: u32,
    /// The most force can raise the cap to.
    pub hub_max: u32,
    pub message: String,
}

/// One hop of a wallet's counterparties.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GraphExpansion {
    pub address: String,
    /// ledger or live.
    pub source: String,
    /// in, out or both.
    pub direction: String,
    /// The expanded wallet first, then the counterparties kept, by volume.
    pub nodes: Vec<GraphNode>,
    /// Value moved between the wallet and a kept counterparty, per mint.
    pub edges: Vec<Edge>,
    /// Counterparties in what was read, before min_usd, limit and caps.
    pub counterparties_total: u32,
    /// Counterparties left out by limit or a hub cap.
    pub counterparties_omitted: u32,
    /// Set when the wallet is a hub and the cap applied.
    pub hub: Option<HubWarning>,
    /// For live: the signatures read (null for ledger).
    pub signatures_read: Option<u32>,
    /// False when a live read missed some transactions (a partial result,
    /// still charged).
    pub complete: bool,
    /// For live: served from the live cache (the cached live price).
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

/// The argument set an action_id is bound to, defaults filled in.
fn normalised(args: &ExpandGraphArgs, limit: u32, window: u32) -> Value {
    json!({
        "address": args.address.as_str(),
        "depth": 1,
        "direction": args.direction.unwrap_or_default().as_str(),
        "force": args.force.unwrap_or(false),
        "limit": limit,
        "min_usd": args.min_usd.map(|m| m.to_string()),
        "source": args.source.unwrap_or_default().as_str(),
        "window_sigs": (args.source == Some(Source::Live)).then_some(window),
    })
}

/// A live read, as cached.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct LiveRead {
    legs: Vec<crate::ledger::Leg>,
    signatures_read: u32,
    missing: u32,
}

fn live_key(address: &WalletAddress, window: u32) -> String {
    format!("live:{}:{window}", address.as_str())
}

fn to_analytics(leg: crate::ledger::Leg) -> Leg {
    Leg {
        signature: leg.signature,
        index: leg.index,
        block_time: leg.block_time,
        operation_type: leg.operation_type.as_str().to_owned(),
        mint: leg.mint,
        amount: leg.amount,
        decimals: u32::from(leg.decimals),
        counterparties: leg.counterparties,
        position: leg.position,
        router: leg.router,
    }
}

/// The calling account, refused before anything else unless it is one
/// whose token may spend research credits (read and scan).
fn caller<'p>(principal: &'p Principal, tool: &str) -> Result<&'p AccountId, AppError> {
    let caller = principal.require_account(tool)?;
    principal.permit(crate::accounts::Action::SpendCredits)?;
    Ok(&caller.account_id)
}

/// Refuse before anything is charged: the feature must be on for the
/// account and the call within its limits.
async fn admit(graph: &Graph<'_>, account: &AccountId) -> Result<(), AppError> {
    let credits = graph.credits();
    credits.require_feature(account).await?;
    credits.check_limits(account).await
}

/// A stored result answered again: nothing charged, the balance now.
pub(crate) fn replayed(mut result: Value, balance: i64) -> Value {
    result["cost_atomic"] = json!("0");
    result["balance_atomic"] = json!(balance.to_string());
    result["replayed"] = json!(true);
    result
}

/// `expand_graph` for the MCP tool and the REST route alike.
pub async fn expand_graph(
    graph: &Graph<'_>,
    principal: &Principal,
    args: ExpandGraphArgs,
) -> Result<GraphExpansion, AppError> {
    let account = caller(principal, "expand_graph")?;
    expand_for(graph, account, args).await
}

/// `expand_graph` for an account (a token's, or a portal session's).
pub async fn expand_for(
    graph: &Graph<'_>,
    account: &AccountId,
    args: ExpandGraphArgs,
) -> Result<GraphExpansion, AppError> {
    admit(graph, account).await?;
    if args.depth.is_some_and(|d| d != 1) {
        return Err(AppError::invalid_params("depth: only 1 is supported"));
    }
    let limit = args.limit.unwrap_or(graph.config.default_limit);
    if !(1..=100).contains(&limit) {
        return Err(AppError::invalid_params(
            "limit: must be an integer from 1 to 100",
        ));
    }
    let window = args.window_sigs.unwrap_or(graph.config.default_window_sigs);
    if !(1..=100).contains(&window) {
        return Err(AppError::invalid_params(
            "window_sigs: must be an integer from 1 to 100",
        ));
    }
    if args.window_sigs.is_some() && args.source != Some(Source::Live) {
        return Err(AppError::invalid_params(
            "window_sigs: only for source live",
        ));
    }
    let source = args.source.unwrap_or_default();
    let store = graph.reads.store();
    let credits = graph.credits();

    // Decide the price from what is known before anything is fetched.
    let (cost, cached): (Usd, Option<LiveRead>) = match source {
        Source::Ledger => {
            if !store.wallet_scanned(args.address.as_str()).await? {
                return Err(AppError::not_found(
                    "this wallet has never been scanned: scan it first (quote_wallet, \
                     scan_wallet), or expand it with source live",
                ));
            }
            (graph.config.ledger_usd, None)
        }
        Source::Live => {
            let fresh_since = graph.now_ms() - secs_ms(graph.config.live_cache_secs);
            let cached = match store
                .graph_cache_get(&live_key(&args.address, window), fresh_since)
                .await?
            {
                Some(text) => serde_json::from_str::<LiveRead>(&text).ok(),
                None => None,
            };
            match cached {
                Some(read) => (graph.config.cached_live_usd, Some(read)),
                None => (graph.config.live_usd, None),
            }
        }
    };
    let action_id = args.action_id.clone();
    let charge = Charge {
        account,
        action_id: &action_id,
        tool: "expand_graph",
        args_hash: args_hash(&normalised(&args, limit, window)),
        cost,
        note: format!(
            "expand_graph {}{} of {}",
            source.as_str(),
            if cached.is_some() { " (cached)" } else { "" },
            args.address.short()
        ),
    };
    let balance = match credits.begin(&charge).await? {
        Started::Replay { result } => {
            let balance = credits.balance(account).await?;
            return serde_json::from_value(replayed(result, balance))
                .map_err(|e| AppError::internal("a stored expansion", e));
        }
        Started::Charged { balance_atomic } => balance_atomic,
    };

    let outcome = async {
        let cost_rpc = RpcCost::default();
        let (legs, signatures_read, complete, was_cached) = match (source, cached) {
            (Source::Ledger, _) => {
                let legs = store
                    .wallet_legs(args.address.as_str())
                    .await?
                    .into_iter()
                    .filter_map(crate::analytics::leg_from_row)
                    .collect::<Vec<_>>();
                (legs, None, true, false)
            }
            (Source::Live, Some(read)) => (
                read.legs.into_iter().map(to_analytics).collect(),
                Some(read.signatures_read),
                read.missing == 0,
                true,
            ),
            (Source::Live, None) => {
                let read = live_read(graph, &args.address, window, &cost_rpc).await?;
                let text = serde_json::to_string(&read)
                    .map_err(|e| AppError::internal("caching a live read", e))?;
                store
                    .graph_cache_put(&live_key(&args.address, window), &text, graph.now_ms())
                    .await?;
                (
                    read.legs.into_iter().map(to_analytics).collect(),
                    Some(read.signatures_read),
                    read.missing == 0,
                    false,
                )
            }
        };
        let namer = flows::namer_for(store, Some(account)).await?;
        let mut out = expand(graph, &args, &legs, &namer, limit).await?;
        out.source = source.as_str().to_owned();
        out.signatures_read = signatures_read;
        out.complete = complete;
        out.cached = was_cached;
        out.rpc_calls = cost_rpc.credits();
        Ok::<_, AppError>(out)
    }
    .await;
    match outcome {
        Ok(mut out) => {
            out.action_id = action_id.as_str().to_owned();
            out.cost_atomic = cost.usdc_atomic().to_string();
            out.balance_atomic = balance.to_string();
            let value = serde_json::to_value(&out)
                .map_err(|e| AppError::internal("an expansion's result", e))?;
            credits.finish(account, &action_id, &value).await?;
            Ok(out)
        }
        Err(err) => {
            credits.refund(account, &action_id).await;
            Err(refunded(err))
        }
    }
}

/// A failure after the charge: the caller was refunded, and is told so.
pub(crate) fn refunded(err: AppError) -> AppError {
    err.with_detail("the charge for this call was refunded")
}

fn secs_ms(secs: u64) -> i64 {
    i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX)
}

/// The chain failed us: `unavailable`, generic for the caller.
pub(crate) fn rpc_failed(context: &str, error: &crate::solana::RpcError) -> AppError {
    tracing::warn!(context, %error, "a research read failed at the RPC");
    AppError::new(
        Code::Unavailable,
        "the Solana RPC did not answer this read; try again later",
    )
}

/// The most recent `window` signatures and their transactions, decoded.
async fn live_read(
    graph: &Graph<'_>,
    address: &WalletAddress,
    window: u32,
    cost: &RpcCost,
) -> Result<LiveRead, AppError> {
    let sigs = graph
        .rpc
        .signatures(address.as_str(), None, None, window as usize, cost)
        .await
        .map_err(|e| rpc_failed("live expansion: signatures", &e))?;
    let list: Vec<String> = sigs.iter().map(|s| s.signature.clone()).collect();
    let txs = graph
        .rpc
        .transactions(&list, cost)
        .await
        .map_err(|e| rpc_failed("live expansion: transactions", &e))?;
    let mut legs = Vec::new();
    let mut missing = 0u32;
    for tx in txs {
        match tx.as_ref().map(crate::ledger::TxView::parse) {
            Some(Ok(view)) => legs.extend(crate::ledger::legs(&view, address.as_str())),
            Some(Err(error)) => {
                tracing::warn!(%error, "a live expansion could not decode a transaction");
                missing += 1;
            }
            None => missing += 1,
        }
    }
    Ok(LiveRead {
        legs,
        signatures_read: u32::try_from(list.len()).unwrap_or(u32::MAX),
        missing,
    })
}

/// Per counterparty, what the legs say.
#[derive(Default)]
struct Seen {
    legs: u32,
    first: Option<i64>,
    last: Option<i64>,
    usd: Decimal,
    priced: bool,
    directions: BTreeSet<bool>,
}

/// The counterparty a leg is attributed to, as `flows::compute` does: the
/// first one in the leg's own direction that is not the wallet.
fn attributed<'l>(
    leg: &'l Leg,
    address: &str,
) -> Option<(Direction, &'l crate::ledger::Counterparty)> {
    if leg.amount == 0 {
        return None;
    }
    let direction = if leg.amount > 0 {
        Direction::In
    } else {
        Direction::Out
    };
    leg.counterparties
        .iter()
        .find(|c| c.direction == direction && c.address != address)
        .map(|c| (direction, c))
}

/// The expansion over `legs`: the flow graph of every counterparty, then
/// direction, min_usd, ranking by volume, limit and hub caps.
async fn expand(
    graph: &Graph<'_>,
    args: &ExpandGraphArgs,
    legs: &[Leg],
    namer: &Namer,
    limit: u32,
) -> Result<GraphExpansion, AppError> {
    let address = args.address.as_str();
    let direction = args.direction.unwrap_or_default();
    let legs: Vec<Leg> = legs
        .iter()
        .filter(|l| attributed(l, address).is_some_and(|(d, _)| direction.keeps(d)))
        .cloned()
        .collect();
    let times = legs.iter().filter_map(|l| l.block_time);
    let mut mints: Vec<String> = legs.iter().map(|l| l.mint.clone()).collect();
    mints.sort();
    mints.dedup();
    let valuer = graph
        .reads
        .valuer(mints, times.clone().min().zip(times.max()))
        .await?;
    let flows = flows::compute(address, &legs, &valuer, namer, 0);

    // Signals, from the same attribution.
    let mut seen: HashMap<String, Seen> = HashMap::new();
    let (mut center_first, mut center_last) = (None::<i64>, None::<i64>);
    for leg in &legs {
        let Some((d, cp)) = attributed(leg, address) else {
            continue;
        };
        let s = seen.entry(cp.address.clone()).or_default();
        s.legs += 1;
        s.directions.insert(d == Direction::Out);
        if let Some(t) = leg.block_time {
            s.first = Some(s.first.map_or(t, |f| f.min(t)));
            s.last = Some(s.last.map_or(t, |f| f.max(t)));
            center_first = Some(center_first.map_or(t, |f| f.min(t)));
            center_last = Some(center_last.map_or(t, |f| f.max(t)));
        }
        if let Some(u) = valuer.value(&leg.mint, leg.amount, leg.decimals, leg.block_time) {
            s.usd += u.abs();
            s.priced = true;
        }
    }
    let total_usd: Decimal = seen.values().map(|s| s.usd).sum();
    let fan_in = seen
        .values()
        .filter(|s| s.directions.contains(&false))
        .count();
    let fan_out = seen
        .values()
        .filter(|s| s.directions.contains(&true))
        .count();
    let counterparties_total = u32::try_from(seen.len()).unwrap_or(u32::MAX);

    // min_usd drops priced edges below it; unpriced edges stay.
    let floor = args.min_usd.map(MinUsd::decimal);
    let edges: Vec<Edge> = flows
        .edges
        .into_iter()
        .filter(|e| match (floor, e.usd.as_deref()) {
            (Some(floor), Some(usd)) => usd.parse::<Decimal>().is_ok_and(|u| u >= floor),
            _ => true,
        })
        .collect();
    let counterparty_of = |e: &Edge| {
        if e.source == address {
            e.target.clone()
        } else {
            e.source.clone()
        }
    };
    // Rank what is left by USD volume, then legs, then address.
    let mut volume: BTreeMap<String, (Decimal, u32)> = BTreeMap::new();
    for e in &edges {
        let v = volume.entry(counterparty_of(e)).or_default();
        v.0 += e
            .usd
            .as_deref()
            .and_then(|u| u.parse::<Decimal>().ok())
            .unwrap_or_default();
        v.1 += e.legs;
    }
    let mut ranked: Vec<(String, Decimal, u32)> =
        volume.into_iter().map(|(a, (u, l))| (a, u, l)).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));

    // Hubs return their top counterparties only.
    let entity = entities::entity(address);
    let hub_reason = match entity {
        Some(e) => Some(e.category.clone()),
        None if crate::analytics::registry::programs().contains_key(address) => {
            Some("program".to_owned())
        }
        None if counterparties_total > graph.config.hub_counterparties => {
            Some("counterparty_count".to_owned())
        }
        None => None,
    };
    let force = args.force.unwrap_or(false);
    let mut keep = limit as usize;
    let hub = hub_reason.map(|reason| {
        let cap = if force {
            graph.config.hub_max
        } else {
            graph.config.hub_cap
        };
        keep = keep.min(cap as usize);
        HubWarning {
            message: format!(
                "{address} is a hub ({}): only its top {cap} counterparties by volume are \
                 returned{}",
                match reason.as_str() {
                    "counterparty_count" => format!(
                        "{counterparties_total} counterparties, more than {}",
                        graph.config.hub_counterparties
                    ),
                    other => format!("a registry {other}"),
                },
                if force {
                    format!(
                        "; force already raised the cap to the server's hub maximum {}",
                        graph.config.hub_max
                    )
                } else {
                    format!(
                        "; force raises this to {}, no further",
                        graph.config.hub_max
                    )
                }
            ),
            reason,
            cap,
            hub_max: graph.config.hub_max,
        }
    });
    let kept: BTreeSet<String> = ranked.iter().take(keep).map(|r| r.0.clone()).collect();
    let omitted = counterparties_total.saturating_sub(u32::try_from(kept.len()).unwrap_or(0));

    let named = namer.name(address);
    let mut nodes = vec![GraphNode {
        id: address.to_owned(),
        kind: "wallet".to_owned(),
        name: named.name.or_else(|| entity.map(|e| e.name.clone())),
        category: "self".to_owned(),
        entity: entity.cloned(),
        signals: Signals {
            counterparty_count: Some(counterparties_total),
            fan_in: Some(u32::try_from(fan_in).unwrap_or(u32::MAX)),
            fan_out: Some(u32::try_from(fan_out).unwrap_or(u32::MAX)),
            legs: u32::try_from(legs.len()).unwrap_or(u32::MAX),
            first_seen: center_first.map(|t| rfc3339(t * 1000)),
            last_seen: center_last.map(|t| rfc3339(t * 1000)),
            share_of_volume_pct: None,
            program: false,
            token_account: false,
        },
    }];
    let flow_nodes: HashMap<String, flows::Node> =
        flows.nodes.into_iter().map(|n| (n.id.clone(), n)).collect();
    for (cp, _, _) in ranked.iter().filter(|r| kept.contains(&r.0)) {
        let Some(node) = flow_nodes.get(cp) else {
            continue;
        };
        let s = seen.get(cp);
        let entity = entities::entity(cp);
        nodes.push(GraphNode {
            id: cp.clone(),
            kind: node.kind.clone(),
            name: node.name.clone().or_else(|| entity.map(|e| e.name.clone())),
            category: match (node.category.as_str(), entity) {
                ("external", Some(e)) => e.category.clone(),
                (c, _) => c.to_owned(),
            },
            entity: entity.cloned(),
            signals: Signals {
                legs: s.map_or(0, |s| s.legs),
                first_seen: s.and_then(|s| s.first).map(|t| rfc3339(t * 1000)),
                last_seen: s.and_then(|s| s.last).map(|t| rfc3339(t * 1000)),
                share_of_volume_pct: s
                    .filter(|s| s.priced && total_usd > Decimal::ZERO)
                    .map(|s| {
                        (s.usd * Decimal::from(100) / total_usd)
                            .round_dp(2)
                            .normalize()
                            .to_string()
                    }),
                program: node.kind == "program",
                token_account: node.kind == "token_account",
                ..Signals::default()
            },
        });
    }
    let edges = edges
        .into_iter()
        .filter(|e| kept.contains(&counterparty_of(e)))
        .collect();
    Ok(GraphExpansion {
        address: address.to_owned(),
        source: String::new(),
        direction: direction.as_str().to_owned(),
        nodes,
        edges,
        counterparties_total,
        counterparties_omitted: omitted,
        hub,
        signatures_read: None,
        complete: true,
        cached: false,
        rpc_calls: 0,
        action_id: String::new(),
        cost_atomic: String::new(),
        balance_atomic: String::new(),
        replayed: false,
    })
}
