//! `get_flows`: a wallet's transfers aggregated by counterparty and mint as
//! a graph (SPEC N5).
//!
//! A leg counts when it has a counterparty in its own direction (who paid
//! the wallet for a leg in, who was paid for a leg out); it is attributed
//! to the first such counterparty. Fees and rent have none and never
//! count. Counterparties are ranked per direction by USD volume, then by
//! legs, then by address; the top N per direction are kept and the rest
//! collapse into one `other` node per graph.

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Leg, mint_filter, registry::Namer, scanned_legs};
use crate::{
    accounts::{AddressCategory, Principal},
    error::AppError,
    ledger::{CounterpartyKind, Direction},
    payments::Presented,
    prices::valuation::Valuer,
    reads::{ReadKind, Reads},
    solana::WalletAddress,
    values::TimeBound,
};

pub const DEFAULT_TOP: u32 = 10;
/// The id of the node the ranked-out counterparties collapse into.
pub const OTHER: &str = "other";

/// The arguments of `get_flows`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetFlowsArgs {
    /// The wallet's base58 public key.
    pub address: WalletAddress,
    /// Inclusive lower bound on block time: RFC 3339 or YYYY-MM-DD.
    #[serde(default, deserialize_with = "crate::values::time::optional_bound")]
    pub from: Option<TimeBound>,
    /// Keep only transfers of this mint (sol for native SOL).
    #[serde(default)]
    #[schemars(with = "Option<crate::params::Mint>")]
    pub mint: Option<String>,
    #[serde(flatten)]
    pub pay: crate::payments::PayArgs,
    /// Inclusive upper bound on block time: RFC 3339 or YYYY-MM-DD.
    #[serde(default, deserialize_with = "crate::values::time::optional_bound")]
    pub to: Option<TimeBound>,
    /// Counterparties kept per direction before the rest collapse into
    /// other; default 10, 0 keeps all.
    #[serde(default)]
    #[schemars(extend("default" = 10))]
    pub top: Option<u32>,
}

/// A node of the graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Node {
    /// The address, or "other".
    pub id: String,
    /// wallet (the wallet itself), program, token_account, counterparty
    /// (a wallet that is not this one), or other.
    pub kind: String,
    /// From the program registry (or, with accounts, your labels).
    pub name: Option<String>,
    /// self, external, other, or a registry category (system, token, dex, …).
    pub category: String,
    /// For the other node: how many counterparties it stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collapsed: Option<u32>,
}

/// Value moved from `source` to `target` in one mint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Edge {
    pub source: String,
    pub target: String,
    /// A mint, or "sol".
    pub mint: String,
    /// Atomic units moved, as a string (always positive).
    pub amount: String,
    pub decimals: u32,
    /// USD at each leg's block time, summed over the priced legs; null when
    /// none was priced.
    pub usd: Option<String>,
    /// Legs aggregated into this edge.
    pub legs: u32,
}

/// The flow graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Flows {
    pub address: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// The payment this call settled (or replayed), with its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<crate::payments::PaymentBlock>,
}

#[derive(Default)]
struct Agg {
    amount: i128,
    decimals: u32,
    usd: Option<Decimal>,
    legs: u32,
}

impl Agg {
    fn add(&mut self, amount: i128, decimals: u32, usd: Option<Decimal>, legs: u32) {
        self.amount += amount;
        self.decimals = decimals;
        self.legs += legs;
        if let Some(u) = usd {
            self.usd = Some(self.usd.unwrap_or_default() + u);
        }
    }
}

/// The graph over `legs` (already filtered by time and mint).
pub fn compute<'a>(
    address: &str,
    legs: impl IntoIterator<Item = &'a Leg>,
    valuer: &Valuer,
    namer: &Namer,
    top: u32,
) -> Flows {
    // (direction, counterparty) → mint → aggregate
    let mut by: HashMap<(Direction, String), BTreeMap<String, Agg>> = HashMap::new();
    let mut kinds: HashMap<String, CounterpartyKind> = HashMap::new();
    for leg in legs {
        if leg.amount == 0 {
            continue;
        }
        let direction = if leg.amount > 0 {
            Direction::In
        } else {
            Direction::Out
        };
        let Some(cp) = leg
            .counterparties
            .iter()
            .find(|c| c.direction == direction && c.address != address)
        else {
            continue;
        };
        kinds.entry(cp.address.clone()).or_insert(cp.kind);
        let usd = valuer
            .value(&leg.mint, leg.amount, leg.decimals, leg.block_time)
            .map(|u| u.abs());
        by.entry((direction, cp.address.clone()))
            .or_default()
            .entry(leg.mint.clone())
            .or_default()
            .add(leg.amount.abs(), leg.decimals, usd, 1);
    }

    let mut nodes = vec![Node {
        id: address.to_owned(),
        kind: "wallet".to_owned(),
        name: None,
        category: "self".to_owned(),
        collapsed: None,
    }];
    let mut edges = Vec::new();
    let mut kept_nodes: BTreeMap<String, Node> = BTreeMap::new();
    // (out?, mint): in-edges first.
    let mut other: BTreeMap<(bool, String), Agg> = BTreeMap::new();
    let mut collapsed: std::collections::BTreeSet<String> = Default::default();
    for direction in [Direction::In, Direction::Out] {
        let mut ranked: Vec<(&String, Decimal, u32)> = by
            .iter()
            .filter(|((d, _), _)| *d == direction)
            .map(|((_, cp), mints)| {
                let usd: Decimal = mints.values().filter_map(|a| a.usd).sum();
                let legs: u32 = mints.values().map(|a| a.legs).sum();
                (cp, usd, legs)
            })
            .collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(b.0)));
        for (rank, (cp, _, _)) in ranked.into_iter().enumerate() {
            let mints = &by[&(direction, cp.clone())];
            if top == 0 || rank < top as usize {
                let named = namer.name(cp);
                let kind = match kinds.get(cp) {
                    Some(CounterpartyKind::Program) => "program",
                    Some(CounterpartyKind::TokenAccount) => "token_account",
                    _ => "counterparty",
                };
                kept_nodes.entry(cp.clone()).or_insert_with(|| Node {
                    id: cp.clone(),
                    kind: kind.to_owned(),
                    name: named.name,
                    category: named.category,
                    collapsed: None,
                });
                for (mint, agg) in mints {
                    edges.push(edge(address, cp, direction, mint, agg));
                }
            } else {
                collapsed.insert(cp.clone());
                for (mint, agg) in mints {
                    other
                        .entry((direction == Direction::Out, mint.clone()))
                        .or_default()
                        .add(agg.amount, agg.decimals, agg.usd, agg.legs);
                }
            }
        }
    }
    nodes.extend(kept_nodes.into_values());
    if !collapsed.is_empty() {
        nodes.push(Node {
            id: OTHER.to_owned(),
            kind: OTHER.to_owned(),
            name: Some("other".to_owned()),
            category: OTHER.to_owned(),
            collapsed: Some(u32::try_from(collapsed.len()).unwrap_or(u32::MAX)),
        });
        for ((out, mint), agg) in &other {
            let direction = if *out { Direction::Out } else { Direction::In };
            edges.push(edge(address, OTHER, direction, mint, agg));
        }
    }
    Flows {
        address: address.to_owned(),
        nodes,
        edges,
        payment: None,
    }
}

fn edge(address: &str, cp: &str, direction: Direction, mint: &str, agg: &Agg) -> Edge {
    let (source, target) = match direction {
        Direction::In => (cp, address),
        Direction::Out => (address, cp),
    };
    Edge {
        source: source.to_owned(),
        target: target.to_owned(),
        mint: mint.to_owned(),
        amount: agg.amount.to_string(),
        decimals: agg.decimals,
        usd: agg.usd.map(|u| u.round_dp(6).normalize().to_string()),
        legs: agg.legs,
    }
}

/// `get_flows` for the MCP tool and the REST route alike.
pub async fn get_flows(
    reads: &Reads<'_>,
    principal: &Principal,
    args: GetFlowsArgs,
    presented: &Presented,
) -> Result<Flows, AppError> {
    let address = args.address;
    let (from, to) = crate::values::time::range(args.from.as_ref(), args.to.as_ref())
        .map_err(AppError::invalid_params)?;
    let mint = mint_filter(args.mint.as_deref())?;
    let top = args.top.unwrap_or(DEFAULT_TOP);
    // Every argument is checked; only now may the call be paid for.
    let kind = ReadKind {
        route: crate::routes::FLOWS,
        tool: "get_flows",
    };
    let payment = reads
        .authorize(principal, &address, &args.pay, presented, kind)
        .await?;
    let all = scanned_legs(reads, &address).await?;
    let legs: Vec<&Leg> = all
        .iter()
        .filter(|l| {
            let t = l.block_time.unwrap_or(0);
            from.is_none_or(|f| t >= f)
                && to.is_none_or(|x| t <= x)
                && mint.as_ref().is_none_or(|m| &l.mint == m)
        })
        .collect();
    let times = legs.iter().filter_map(|l| l.block_time);
    let mut mints: Vec<String> = legs.iter().map(|l| l.mint.clone()).collect();
    mints.sort();
    mints.dedup();
    let valuer = reads
        .valuer(mints, times.clone().min().zip(times.max()))
        .await?;
    let namer = namer(reads.store(), principal).await?;
    let mut flows = compute(address.as_str(), legs, &valuer, &namer, top);
    flows.payment = payment;
    Ok(flows)
}

/// Names for the caller: an account's own labels, and its watched wallets
/// as `own_wallet` (named by their watch label, else their short form)
/// where it has not labelled them otherwise. Anonymous callers get the
/// program registry's names only.
pub(crate) async fn namer(
    store: &crate::store::Store,
    principal: &Principal,
) -> Result<Namer, AppError> {
    namer_for(store, principal.account()).await
}

/// [`namer`] for an account (none: the registry's names only).
pub(crate) async fn namer_for(
    store: &crate::store::Store,
    account: Option<&crate::accounts::AccountId>,
) -> Result<Namer, AppError> {
    let Some(account) = account else {
        return Ok(Namer::default());
    };
    let mut labels: HashMap<String, (String, String)> = HashMap::new();
    for (address, label) in crate::accounts::watchlist::watched(store, account).await? {
        let name = if label.is_empty() {
            crate::solana::WalletAddress::parse(&address)
                .map_or_else(|_| address.clone(), |a| a.short())
        } else {
            label
        };
        labels.insert(
            address,
            (name, AddressCategory::OwnWallet.as_str().to_owned()),
        );
    }
    for (address, (label, category)) in crate::accounts::address_labels(store, account).await? {
        labels.insert(address, (label, category.as_str().to_owned()));
    }
    Ok(Namer { labels })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{Counterparty, SOL};

    fn leg(cp: &str, kind: CounterpartyKind, amount: i128) -> Leg {
        Leg {
            signature: "s".into(),
            index: 0,
            block_time: Some(100),
            operation_type: "transfer_in".into(),
            mint: SOL.into(),
            amount,
            decimals: 9,
            counterparties: vec![Counterparty {
                address: cp.into(),
                direction: if amount > 0 {
                    Direction::In
                } else {
                    Direction::Out
                },
                kind,
            }],
            position: None,
            router: None,
        }
    }

    #[test]
    fn the_top_counterparties_are_kept_and_the_rest_collapse_into_other() {
        let daily = HashMap::from([(SOL.to_owned(), BTreeMap::from([(0, Decimal::from(100))]))]);
        let valuer = Valuer::from_series(HashMap::new(), daily, Default::default());
        let w = "W";
        let legs = vec![
            leg("A", CounterpartyKind::Wallet, 3_000_000_000),
            leg("B", CounterpartyKind::Wallet, 2_000_000_000),
            leg("C", CounterpartyKind::Wallet, 1_000_000_000),
            leg("C", CounterpartyKind::Wallet, 1_000_000_000),
            leg(
                "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4",
                CounterpartyKind::Program,
                -5_000_000_000,
            ),
            leg("D", CounterpartyKind::Wallet, -1_000_000_000),
        ];
        let flows = compute(w, &legs, &valuer, &Namer::default(), 2);
        let ids: Vec<&str> = flows.nodes.iter().map(|n| n.id.as_str()).collect();
        // In: A (300 USD) and C (200, two legs) beat B (200, one leg);
        // out: both kept.
        assert_eq!(
            ids,
            vec![
                w,
                "A",
                "C",
                "D",
                "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4",
                OTHER
            ]
        );
        let jup = &flows.nodes[4];
        assert_eq!(jup.name.as_deref(), Some("Jupiter Aggregator v6"));
        assert_eq!(
            (jup.kind.as_str(), jup.category.as_str()),
            ("program", "aggregator")
        );
        assert_eq!(flows.nodes[1].category, "external");
        let other = flows.edges.iter().find(|e| e.source == OTHER).unwrap();
        assert_eq!((other.amount.as_str(), other.legs), ("2000000000", 1));
        assert_eq!(other.usd.as_deref(), Some("200"));
        let c = flows.edges.iter().find(|e| e.source == "C").unwrap();
        assert_eq!(
            (c.target.as_str(), c.legs, c.amount.as_str()),
            (w, 2, "2000000000")
        );
        let out = flows.edges.iter().find(|e| e.target == "D").unwrap();
        assert_eq!(out.source, w);
        // 0 keeps everyone.
        let all = compute(w, &legs, &valuer, &Namer::default(), 0);
        assert!(all.nodes.iter().all(|n| n.id != OTHER));
        assert_eq!(all.nodes.len(), 6);
    }
}
