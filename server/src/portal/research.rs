//! The portal's follow-the-money pages: `/credits` (balance, prices,
//! movements, how to top up) and `/wallets/{address}/graph`, whose form
//! POST expands one node through the same `graph::expand_for` the MCP tool
//! and REST route call, charged to the session's account. The graph is an
//! ECharts option built with charming; `graph.js` merges each expansion
//! into the chart when JavaScript runs (it posts the same form, asking for
//! JSON), and without it the form answers the page with the hop's tables.

use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use charming::{
    Chart,
    component::Legend,
    element::{Label, LabelPosition, Tooltip},
    series::{
        Graph, GraphCategory, GraphData, GraphLayout, GraphLayoutForce, GraphLink, GraphNode,
    },
};
use serde::Deserialize;
use serde_json::json;
use tower_sessions::Session;

use super::{
    Parts,
    form::{CheckedForm, PortalForm},
    pages::{account_page, when},
    render,
};
use crate::{
    accounts::AccountId,
    credits::usd_text,
    error::AppError,
    graph::{ExpandGraphArgs, GraphDirection, GraphExpansion, Source},
    solana::WalletAddress,
    state::AppState,
};
use app::{
    frame::{Portal, PortalPage},
    views::{CreditsPage, EdgeRow, GraphPage, MovementRow, NodeRow},
};

/// `GET /credits`.
pub async fn credits(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let view = match state.credits().view(&account).await {
        Ok(view) => view,
        Err(err) => return err.into_response(),
    };
    let p = &view.prices;
    let page = CreditsPage {
        balance_usd: view.balance_usd,
        balance_atomic: view.balance_atomic,
        follow_the_money: view.follow_the_money,
        prices: vec![
            (
                "expand_graph from the ledger".to_owned(),
                p.expand_graph_ledger.clone(),
            ),
            ("expand_graph live".to_owned(), p.expand_graph_live.clone()),
            (
                "expand_graph live, cached".to_owned(),
                p.expand_graph_cached_live.clone(),
            ),
            ("find_first_funder".to_owned(), p.find_first_funder.clone()),
            (
                "find_first_funder, cached".to_owned(),
                p.find_first_funder_cached.clone(),
            ),
        ],
        topup_usd: view.topup_usd,
        movements: view
            .movements
            .into_iter()
            .map(|m| MovementRow {
                date: chrono::DateTime::parse_from_rfc3339(&m.at)
                    .map(|t| when(t.timestamp_millis()))
                    .unwrap_or(m.at),
                kind: m.kind,
                amount: m.amount_usd,
                balance_after: usd_text(m.balance_after_atomic.parse().unwrap_or(0)),
                action_id: m.action_id.unwrap_or_default(),
                note: m.note,
            })
            .collect(),
    };
    let portal = Portal {
        viewer,
        page: PortalPage::Credits(page),
    };
    render(&state, "/credits", StatusCode::OK, portal).await
}

/// The chart of every hop kept on the page of `center`: nodes merged by
/// address (labelled with the name the expansion gave, else the address
/// shortened; the page's own wallet as `center_name`), sized by the USD
/// that flowed through their edges, and one link per pair of addresses.
pub fn chart(center: &str, center_name: &str, expansions: &[GraphExpansion]) -> Chart {
    const CATEGORIES: [&str; 7] = [
        "self",
        "external",
        "own_wallet",
        "exchange",
        "bridge",
        "program",
        "other",
    ];
    let category = |c: &str| {
        CATEGORIES
            .iter()
            .position(|x| *x == c)
            .or_else(|| CATEGORIES.iter().position(|x| *x == "other"))
            .unwrap_or(0) as u64
    };
    // Each edge once (a node expanded twice repeats its edges), its USD
    // counted for both ends and for the pair's link.
    let mut seen_edges = std::collections::HashSet::new();
    let mut usd_by_node: std::collections::HashMap<String, f64> = Default::default();
    let mut links: Vec<GraphLink> = Vec::new();
    let mut link_at: std::collections::HashMap<(String, String), usize> = Default::default();
    for e in expansions.iter().flat_map(|g| &g.edges) {
        if !seen_edges.insert((e.source.clone(), e.target.clone(), e.mint.clone())) {
            continue;
        }
        let usd = e
            .usd
            .as_deref()
            .and_then(|u| u.parse::<f64>().ok())
            .unwrap_or(0.0);
        for id in [&e.source, &e.target] {
            *usd_by_node.entry(id.clone()).or_default() += usd;
        }
        let key = (e.source.clone(), e.target.clone());
        match link_at.get(&key) {
            Some(&i) => {
                if let Some(link) = links.get_mut(i) {
                    link.value = Some(link.value.unwrap_or(0.0) + usd);
                }
            }
            None => {
                link_at.insert(key, links.len());
                links.push(GraphLink {
                    source: e.source.clone(),
                    target: e.target.clone(),
                    value: Some(usd),
                });
            }
        }
    }
    let mut nodes = vec![GraphNode {
        id: center.to_owned(),
        name: center_name.to_owned(),
        x: 0.0,
        y: 0.0,
        value: usd_by_node.get(center).copied().unwrap_or(0.0),
        category: 0,
        symbol_size: crate::share::charts::node_size(0.0, true),
        label: None,
    }];
    let mut placed: std::collections::HashSet<String> = [center.to_owned()].into();
    let others: Vec<&crate::graph::GraphNode> = expansions
        .iter()
        .flat_map(|g| &g.nodes)
        .filter(|n| placed.insert(n.id.clone()))
        .collect();
    // Counterparties start on a circle around the page's wallet: a force
    // layout started with every node at one point divides by a zero
    // distance and throws them out of view.
    let around = others.len().max(1);
    for (k, n) in others.into_iter().enumerate() {
        let angle = std::f64::consts::TAU * k as f64 / around as f64;
        let cat = if n.kind == "program" {
            "program"
        } else {
            n.category.as_str()
        };
        let usd = usd_by_node.get(&n.id).copied().unwrap_or(0.0);
        nodes.push(GraphNode {
            id: n.id.clone(),
            name: n.name.clone().unwrap_or_else(|| short(&n.id)),
            x: 200.0 * angle.cos(),
            y: 200.0 * angle.sin(),
            value: usd,
            category: category(cat),
            symbol_size: crate::share::charts::node_size(usd, false),
            label: None,
        });
    }
    Chart::new()
        .tooltip(Tooltip::new())
        .legend(Legend::new().data(CATEGORIES.to_vec()).bottom("0"))
        .series(
            Graph::new()
                .layout(GraphLayout::Force)
                .force(GraphLayoutForce::new().edge_length(140.0).gravity(0.08))
                .roam(true)
                .label(Label::new().show(true).position(LabelPosition::Right))
                .edge_symbol(Some(("none".to_owned(), "arrow".to_owned())))
                .data(GraphData {
                    nodes,
                    links,
                    categories: CATEGORIES
                        .iter()
                        .map(|c| GraphCategory {
                            name: (*c).to_owned(),
                        })
                        .collect(),
                }),
        )
}

fn short(address: &str) -> String {
    WalletAddress::parse(address).map_or_else(|_| address.to_owned(), |a| a.short())
}

/// The option as the page embeds it: JSON safe in a script element, its
/// tooltip drawn on the canvas (`share::charts::script_json`).
fn option_json(chart: &Chart) -> String {
    crate::share::charts::script_json(chart)
}

fn rows(g: &GraphExpansion) -> (Vec<NodeRow>, Vec<EdgeRow>) {
    let nodes = g
        .nodes
        .iter()
        .map(|n| {
            let s = &n.signals;
            let mut facts = vec![format!("{} legs", s.legs)];
            if let Some(count) = s.counterparty_count {
                facts.push(format!(
                    "{count} counterparties (fan-in {}, fan-out {})",
                    s.fan_in.unwrap_or(0),
                    s.fan_out.unwrap_or(0)
                ));
            }
            if let Some(pct) = &s.share_of_volume_pct {
                facts.push(format!("{pct}% of priced volume"));
            }
            if let Some(first) = &s.first_seen {
                facts.push(format!("first {first}"));
            }
            if let Some(last) = &s.last_seen {
                facts.push(format!("last {last}"));
            }
            NodeRow {
                address: n.id.clone(),
                kind: n.kind.clone(),
                name: n.name.clone().unwrap_or_default(),
                category: n.category.clone(),
                citation: n
                    .entity
                    .as_ref()
                    .map(|e| (e.source_url.clone(), e.checked.clone())),
                signals: facts.join(", "),
            }
        })
        .collect();
    let edges = g
        .edges
        .iter()
        .map(|e| EdgeRow {
            source: e.source.clone(),
            target: e.target.clone(),
            mint: e.mint.clone(),
            amount: e.amount.clone(),
            usd: e.usd.clone().unwrap_or_else(|| "unpriced".to_owned()),
            legs: e.legs,
        })
        .collect();
    (nodes, edges)
}

/// What the page's own wallet is called on its chart: the account's
/// label for it, else "This wallet".
async fn center_name(
    state: &AppState,
    account: &AccountId,
    address: &WalletAddress,
) -> Result<String, AppError> {
    let label = crate::accounts::list_wallets(state.store(), account)
        .await?
        .into_iter()
        .find(|w| &w.address == address)
        .map(|w| w.label)
        .unwrap_or_default();
    Ok(if label.is_empty() {
        "This wallet".to_owned()
    } else {
        label
    })
}

/// The hops kept on `address`'s page for `account`, oldest first. A
/// stored result that no longer reads as an expansion is skipped (and
/// logged), never a broken page.
async fn kept(
    state: &AppState,
    account: &AccountId,
    address: &WalletAddress,
) -> Result<Vec<GraphExpansion>, AppError> {
    let stored = state
        .store()
        .kept_graph_expansions(account.as_str(), address.as_str())
        .await?;
    Ok(stored
        .into_iter()
        .filter_map(|text| match serde_json::from_str(&text) {
            Ok(g) => Some(g),
            Err(error) => {
                tracing::warn!(%error, "a kept graph expansion does not read back");
                None
            }
        })
        .collect())
}

/// Every kept hop's rows, each node and edge once, in the order kept.
fn all_rows(expansions: &[GraphExpansion]) -> (Vec<NodeRow>, Vec<EdgeRow>) {
    let mut nodes: Vec<NodeRow> = Vec::new();
    let mut edges: Vec<EdgeRow> = Vec::new();
    let mut seen_nodes = std::collections::HashSet::new();
    let mut seen_edges = std::collections::HashSet::new();
    for g in expansions {
        let (n, e) = rows(g);
        nodes.extend(
            n.into_iter()
                .filter(|n| seen_nodes.insert(n.address.clone())),
        );
        edges.extend(
            e.into_iter().filter(|e| {
                seen_edges.insert((e.source.clone(), e.target.clone(), e.mint.clone()))
            }),
        );
    }
    (nodes, edges)
}

/// The graph page around `address` for `account`, with every hop the
/// account paid for on it.
async fn page(
    state: &AppState,
    account: &AccountId,
    address: &WalletAddress,
) -> Result<GraphPage, AppError> {
    let view = state.credits().view(account).await?;
    let config = &state.config().graph;
    let expansions = kept(state, account, address).await?;
    let name = center_name(state, account, address).await?;
    let (nodes, edges) = all_rows(&expansions);
    Ok(GraphPage {
        address: address.to_string(),
        follow_the_money: view.follow_the_money,
        balance_usd: view.balance_usd,
        ledger_price_usd: config.ledger_usd.to_string(),
        live_price_usd: config.live_usd.to_string(),
        cached_live_price_usd: config.cached_live_usd.to_string(),
        action_id: crate::ids::new_id("portal_", state.now_ms()),
        option_json: option_json(&chart(address.as_str(), &name, &expansions)),
        nodes,
        edges,
        ..GraphPage::default()
    })
}

fn parse(address: &str) -> Result<WalletAddress, AppError> {
    WalletAddress::parse(address).map_err(|why| AppError::invalid_params(format!("address: {why}")))
}

/// `GET /wallets/{address}/graph`.
pub async fn graph(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
    Path(address): Path<String>,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(found) => found,
        Err(response) => return response,
    };
    let address = match parse(&address) {
        Ok(a) => a,
        Err(err) => return err.into_response(),
    };
    match page(&state, &account, &address).await {
        Ok(view) => {
            let path = format!("/wallets/{address}/graph");
            let portal = Portal {
                viewer,
                page: PortalPage::Graph(view),
            };
            render(&state, &path, StatusCode::OK, portal).await
        }
        Err(err) => err.into_response(),
    }
}

#[derive(Deserialize)]
pub struct ExpandForm {
    node: String,
    action_id: String,
    #[serde(default)]
    source: String,
    #[serde(default)]
    direction: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for ExpandForm {
    /// The graph page of the path's wallet; an address that is none is
    /// `invalid_params`, before the CSRF check (as the page's GET).
    fn page(address: Option<&str>) -> Result<String, AppError> {
        let address = parse(address.unwrap_or_default())?;
        Ok(format!("/wallets/{address}/graph"))
    }
}

/// `POST /wallets/{address}/graph`: expand one node (CSRF-checked).
pub async fn expand(
    State(state): State<AppState>,
    Path(address): Path<String>,
    headers: HeaderMap,
    CheckedForm {
        viewer,
        account,
        form,
        ..
    }: CheckedForm<ExpandForm>,
) -> Response {
    // `ExpandForm::page` already refused an address that is not one,
    // before the CSRF check; this parse cannot fail.
    let address = match parse(&address) {
        Ok(a) => a,
        Err(err) => return err.into_response(),
    };
    let path = format!("/wallets/{address}/graph");
    let wants_json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"));
    let args = (|| {
        let node = WalletAddress::parse(&form.node)
            .map_err(|why| AppError::invalid_params(format!("node: {why}")))?;
        let action_id = crate::credits::ActionId::parse(&form.action_id)
            .map_err(|why| AppError::invalid_params(format!("action_id: {why}")))?;
        let source = match form.source.as_str() {
            "" | "ledger" => Source::Ledger,
            "live" => Source::Live,
            other => return Err(AppError::invalid_params(format!("source: {other:?}"))),
        };
        let direction = match form.direction.as_str() {
            "" | "both" => GraphDirection::Both,
            "in" => GraphDirection::In,
            "out" => GraphDirection::Out,
            other => return Err(AppError::invalid_params(format!("direction: {other:?}"))),
        };
        Ok(ExpandGraphArgs {
            address: node,
            action_id,
            depth: None,
            direction: Some(direction),
            force: None,
            limit: None,
            min_usd: None,
            source: Some(source),
            window_sigs: None,
        })
    })();
    let outcome = match args {
        Ok(args) => crate::graph::expand_for(&state.graph(), &account, args).await,
        Err(err) => Err(err),
    };
    // Paid for, so kept: the page shows this hop again on every load. A
    // replayed action (the same form sent twice) is kept once.
    let outcome = match outcome {
        Ok(g) => state
            .store()
            .keep_graph_expansion(
                account.as_str(),
                address.as_str(),
                &g.action_id,
                state.now_ms(),
            )
            .await
            .map(|()| g)
            .map_err(AppError::from),
        Err(err) => Err(err),
    };
    if wants_json {
        return match outcome {
            Ok(g) => {
                let (nodes, edges) = rows(&g);
                // The whole kept graph, so sizes and labels are the page's.
                let option = match kept(&state, &account, &address).await {
                    Ok(all) => {
                        let name = center_name(&state, &account, &address)
                            .await
                            .unwrap_or_else(|_| "This wallet".to_owned());
                        chart(address.as_str(), &name, &all)
                    }
                    Err(err) => return err.into_response(),
                };
                Json(json!({
                    "outcome": outcome_text(&g),
                    "balance_usd": usd_text(g.balance_atomic.parse().unwrap_or(0)),
                    "hub": g.hub.as_ref().map(|h| h.message.clone()),
                    "option": crate::share::charts::option_value(&option),
                    // The rows the page's tables gain (graph.js appends them).
                    "nodes": nodes,
                    "edges": edges,
                    "next_action_id": crate::ids::new_id("portal_", state.now_ms()),
                }))
                .into_response()
            }
            Err(err) => err.into_response(),
        };
    }
    let mut view = match page(&state, &account, &address).await {
        Ok(view) => view,
        Err(err) => return err.into_response(),
    };
    let status = match outcome {
        Ok(g) => {
            // The page already holds every kept hop, this one included.
            view.outcome = Some(outcome_text(&g));
            view.hub = g.hub.as_ref().map(|h| h.message.clone());
            view.expanded = Some(g.address.clone());
            StatusCode::OK
        }
        Err(err) => {
            let status = err.status();
            view.error = Some(err.summary());
            status
        }
    };
    let portal = Portal {
        viewer,
        page: PortalPage::Graph(view),
    };
    render(&state, &path, status, portal).await
}

fn outcome_text(g: &GraphExpansion) -> String {
    format!(
        "Expanded {} ({}): {} counterparties of {}; cost {} USD{}, balance {} USD.",
        g.address,
        g.source,
        g.nodes.len().saturating_sub(1),
        g.counterparties_total,
        usd_text(g.cost_atomic.parse().unwrap_or(0)),
        if g.replayed {
            " (this form was already sent: not charged again)"
        } else {
            ""
        },
        usd_text(g.balance_atomic.parse().unwrap_or(0)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytics::flows::Edge;

    fn node(id: &str, kind: &str, name: Option<&str>) -> crate::graph::GraphNode {
        crate::graph::GraphNode {
            id: id.to_owned(),
            kind: kind.to_owned(),
            name: name.map(str::to_owned),
            category: "external".to_owned(),
            entity: None,
            signals: crate::graph::Signals::default(),
        }
    }

    fn edge(source: &str, target: &str, usd: &str) -> Edge {
        Edge {
            source: source.to_owned(),
            target: target.to_owned(),
            mint: "sol".to_owned(),
            amount: "1".to_owned(),
            decimals: 9,
            usd: Some(usd.to_owned()),
            legs: 1,
        }
    }

    const ME: &str = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";
    const BIG: &str = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
    const SMALL: &str = "5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1";

    fn hop(nodes: Vec<crate::graph::GraphNode>, edges: Vec<Edge>) -> GraphExpansion {
        GraphExpansion {
            address: ME.to_owned(),
            source: "ledger".to_owned(),
            direction: "both".to_owned(),
            nodes,
            edges,
            counterparties_total: 2,
            counterparties_omitted: 0,
            hub: None,
            signatures_read: None,
            complete: true,
            cached: false,
            rpc_calls: 0,
            action_id: "a".to_owned(),
            cost_atomic: "0".to_owned(),
            balance_atomic: "0".to_owned(),
            replayed: false,
        }
    }

    #[test]
    fn nodes_are_labelled_and_sized_by_the_value_that_flowed_through_them() {
        let g = hop(
            vec![
                node(ME, "wallet", None),
                node(BIG, "counterparty", Some("Binance")),
                node(SMALL, "counterparty", None),
            ],
            vec![edge(BIG, ME, "25000.00"), edge(ME, SMALL, "3.50")],
        );
        // The same hop kept twice (two expansions of the wallet) counts once.
        let option = crate::share::charts::option_value(&chart(ME, "hot", &[g.clone(), g]));
        let series = &option["series"][0];
        assert_eq!(series["label"]["show"], true);
        let data = series["data"].as_array().unwrap();
        assert_eq!(data.len(), 3);
        let by_id = |id: &str| data.iter().find(|n| n["id"] == id).unwrap();
        assert_eq!(by_id(ME)["name"], "hot");
        assert_eq!(by_id(BIG)["name"], "Binance");
        assert_eq!(by_id(SMALL)["name"], "5Q54…e4j1");
        let size = |id: &str| by_id(id)["symbolSize"].as_f64().unwrap();
        assert!(size(BIG) > size(SMALL), "more value, a bigger node");
        assert!(size(ME) >= size(BIG), "the page's wallet the biggest");
        assert_eq!(series["links"].as_array().unwrap().len(), 2);
        assert_eq!(by_id(BIG)["value"], 25000.0);
    }
}
