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
    element::Tooltip,
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

/// The chart: the expanded wallet and its counterparties, edges as links.
pub fn chart(center: &str, expansion: Option<&GraphExpansion>) -> Chart {
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
    let mut nodes = Vec::new();
    let mut links = Vec::new();
    match expansion {
        Some(g) => {
            // Counterparties start on a circle around the expanded node:
            // a force layout started with every node at one point divides
            // by a zero distance and throws them out of view.
            let around = g.nodes.iter().filter(|n| n.id != center).count().max(1);
            let mut k = 0usize;
            for n in &g.nodes {
                let (x, y) = if n.id == center {
                    (0.0, 0.0)
                } else {
                    let angle = std::f64::consts::TAU * k as f64 / around as f64;
                    k += 1;
                    (200.0 * angle.cos(), 200.0 * angle.sin())
                };
                let cat = if n.kind == "program" {
                    "program"
                } else {
                    n.category.as_str()
                };
                nodes.push(GraphNode {
                    id: n.id.clone(),
                    name: n.name.clone().unwrap_or_else(|| short(&n.id)),
                    x,
                    y,
                    value: f64::from(n.signals.legs),
                    category: category(cat),
                    symbol_size: if n.kind == "wallet" { 28.0 } else { 14.0 },
                    label: None,
                });
            }
            for e in &g.edges {
                links.push(GraphLink {
                    source: e.source.clone(),
                    target: e.target.clone(),
                    value: None,
                });
            }
        }
        None => nodes.push(GraphNode {
            id: center.to_owned(),
            name: short(center),
            x: 0.0,
            y: 0.0,
            value: 0.0,
            category: 0,
            symbol_size: 28.0,
            label: None,
        }),
    }
    Chart::new()
        .tooltip(Tooltip::new())
        .legend(Legend::new().data(CATEGORIES.to_vec()))
        .series(
            Graph::new()
                .layout(GraphLayout::Force)
                .force(GraphLayoutForce::new().edge_length(140.0).gravity(0.08))
                .roam(true)
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

/// The option as the page embeds it: JSON, with `<` escaped so it cannot
/// close the script element it sits in.
fn option_json(chart: &Chart) -> String {
    serde_json::to_string(chart)
        .unwrap_or_else(|_| "{}".to_owned())
        .replace('<', "\\u003c")
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

/// The graph page around `address` for `account`.
async fn page(
    state: &AppState,
    account: &AccountId,
    address: &WalletAddress,
) -> Result<GraphPage, AppError> {
    let view = state.credits().view(account).await?;
    let config = &state.config().graph;
    Ok(GraphPage {
        address: address.to_string(),
        follow_the_money: view.follow_the_money,
        balance_usd: view.balance_usd,
        ledger_price_usd: config.ledger_usd.to_string(),
        live_price_usd: config.live_usd.to_string(),
        cached_live_price_usd: config.cached_live_usd.to_string(),
        action_id: crate::ids::new_id("portal_", state.now_ms()),
        option_json: option_json(&chart(address.as_str(), None)),
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
    if wants_json {
        return match outcome {
            Ok(g) => {
                let (nodes, edges) = rows(&g);
                Json(json!({
                    "outcome": outcome_text(&g),
                    "balance_usd": usd_text(g.balance_atomic.parse().unwrap_or(0)),
                    "hub": g.hub.as_ref().map(|h| h.message.clone()),
                    "option": chart(&g.address, Some(&g)),
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
            let (nodes, edges) = rows(&g);
            view.outcome = Some(outcome_text(&g));
            view.hub = g.hub.as_ref().map(|h| h.message.clone());
            view.expanded = Some(g.address.clone());
            view.option_json = option_json(&chart(&g.address, Some(&g)));
            view.nodes = nodes;
            view.edges = edges;
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
