//! The follow-the-money tools (`expand_graph`, `find_first_funder`): thin
//! adapters over `crate::graph`, paid from research credits. Their
//! descriptions are the client guide's, word for word.

use super::registry::{Annotations, Tier, ToolDef, ToolMeta};
use crate::graph::{
    ExpandGraphArgs, GraphExpansion,
    funder::{FindFirstFunderArgs, FirstFunder},
};
use crate::routes;

/// Charges credits (so not read-only), reads the chain when live, and is
/// idempotent under its action_id.
const RESEARCH: Annotations = Annotations {
    read_only: false,
    destructive: false,
    idempotent: true,
    open_world: true,
};

pub const EXPAND_GRAPH_DESCRIPTION: &str = "Follow the money: one hop of a wallet's counterparties as graph nodes and edges, for \"what \
    funded this wallet and where did its tokens go\". source \"ledger\" (default) reads a scanned \
    wallet; \"live\" fetches its most recent window_sigs signatures on the spot, for a wallet \
    nobody has scanned. direction in|out|both (default both); limit 1-100 counterparties by \
    volume (default from the server); min_usd drops priced edges below it. action_id is \
    required: an idempotency key you choose per expansion, so a retry is not charged twice. Hubs \
    (exchanges, programs, wallets with very many counterparties) return only the top \
    counterparties with a hub warning; force raises that cap to the server's hub maximum and no \
    further. Nodes carry cited registry entities and behavioural signals, which are evidence, \
    never a verdict. Rate limited per account (rate_limited, too_many_expansions; retry later). \
    Costs prepaid research credits, taken before the fetch: a live read that makes RPC calls is \
    priced higher than a cached live read or a ledger read; a failed expansion is refunded, a \
    partial live result is charged. Retrying the same action_id with the same arguments is not \
    charged again (cost_atomic 0); the same action_id with different arguments, or after a \
    refunded failure, is action_conflict. Too little credit is insufficient_credit (nothing is \
    fetched or charged). The result carries cost_atomic and balance_atomic. Needs an account. \
    Until the follow_the_money feature is on for you the call fails with not_found.";

pub const FIND_FIRST_FUNDER_DESCRIPTION: &str = "Find the first inbound SOL transfer into a wallet, for \"what funded this wallet\". Pages the \
    wallet's signatures back toward its oldest transaction, at most the server's page cap \
    (graph.funder_max_pages pages of 1000), and reads the oldest transactions forward. status \
    found returns first_inbound (sender, signature, slot, block_time, lamports), a node for the \
    sender with any registry entity or your own label, and the label \"first inbound transfer \
    within the scanned window\": evidence, never a verdict that the sender is a funder (it may be \
    dust, a custodian or a program). status not_found_within_window means the cap or the RPC \
    budget was reached before the wallet's beginning (complete false) or the whole history has \
    no inbound SOL transfer; it never guesses. signatures_scanned and complete say how far the \
    window went. action_id is required: an idempotency key you choose per lookup. Rate limited \
    per account like expand_graph. Costs prepaid research credits, taken before any RPC: a \
    lookup that makes RPC calls is charged the funder price whether or not it finds anything, a \
    repeat served from cache the cached price; a failed lookup is refunded. Retrying the same \
    action_id with the same address is not charged again (cost_atomic 0); the same action_id \
    with a different address, or after a refunded failure, is action_conflict. Too little credit \
    is insufficient_credit (nothing is fetched). Needs an account. Until the follow_the_money \
    feature is on for you the call fails with not_found.";

fn money(cost: &str, balance: &str) -> String {
    let usd = |t: &str| crate::credits::usd_text(t.parse().unwrap_or(0));
    format!(
        "cost {} USD ({cost} atomic), balance {} USD ({balance} atomic)",
        usd(cost),
        usd(balance)
    )
}

pub fn expand_graph() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "expand_graph",
            title: "Follow the money one hop",
            description: EXPAND_GRAPH_DESCRIPTION,
            tier: Tier::PaidCredits,
            annotations: RESEARCH,
            rest: Some(routes::GRAPH_EXPAND),
        },
        |g: &GraphExpansion| {
            let hub = g
                .hub
                .as_ref()
                .map(|h| format!(" Hub: {}.", h.message))
                .unwrap_or_default();
            format!(
                "One hop of {} ({}, {}): {} counterparties of {} returned, {} edges{}; {}{}.{hub} \
                 Signals are measured facts, evidence and never a verdict.",
                g.address,
                g.source,
                g.direction,
                g.nodes.len().saturating_sub(1),
                g.counterparties_total,
                g.edges.len(),
                if g.complete {
                    ""
                } else {
                    "; partial: some transactions could not be read"
                },
                money(&g.cost_atomic, &g.balance_atomic),
                if g.replayed {
                    " (a retry of this action_id: not charged again)"
                } else {
                    ""
                },
            )
        },
        |ctx, args: ExpandGraphArgs| async move {
            crate::graph::expand_graph(&ctx.state.graph(), &ctx.principal, args).await
        },
    )
}

pub fn find_first_funder() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "find_first_funder",
            title: "Find a wallet's first inbound SOL transfer",
            description: FIND_FIRST_FUNDER_DESCRIPTION,
            tier: Tier::PaidCredits,
            annotations: RESEARCH,
            rest: Some(routes::GRAPH_FUNDER),
        },
        |f: &FirstFunder| {
            let found = match &f.first_inbound {
                Some(first) => format!(
                    "{}: {} lamports from {} in {} (slot {})",
                    crate::graph::funder::LABEL,
                    first.lamports,
                    first.sender,
                    first.signature,
                    first.slot
                ),
                None => format!(
                    "not_found_within_window: {}",
                    f.reason.as_deref().unwrap_or("nothing found")
                ),
            };
            format!(
                "{} for {}; {} signatures scanned, complete {}; {}{}. Evidence, never a verdict \
                 that the sender is a funder.",
                found,
                f.address,
                f.signatures_scanned,
                f.complete,
                money(&f.cost_atomic, &f.balance_atomic),
                if f.replayed {
                    " (a retry of this action_id: not charged again)"
                } else {
                    ""
                },
            )
        },
        |ctx, args: FindFirstFunderArgs| async move {
            crate::graph::funder::find_first_funder(&ctx.state.graph(), &ctx.principal, args).await
        },
    )
}
