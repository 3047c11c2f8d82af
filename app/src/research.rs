//! Follow the money in the portal: the Credits page (balance, prices,
//! the movements that explain the balance, how to top up) and a watched
//! wallet's graph page (an ECharts graph from a charming option, expanded
//! one hop at a time; each expansion is a CSRF-protected form POST that
//! also works without JavaScript, showing the cost before and the balance
//! after). Every hop paid for on the page is kept and drawn again on each
//! load; `/graph.js` shows the busy state (`aria-busy`, "Expanding…") and
//! a refusal as an error (`p.error[role=alert]`).

use leptos::prelude::*;
use leptos_meta::Title;

use crate::{
    frame::{PortalPage, csrf_field, refused, with_portal},
    views::{CreditsPage, GraphPage},
};

#[component]
pub fn CreditsView() -> impl IntoView {
    with_portal(|portal| {
        let page = match portal.page {
            PortalPage::Credits(page) => page,
            PortalPage::Refused(message) => return refused(message),
            _ => CreditsPage::default(),
        };
        let public_url = portal.viewer.public_url.clone();
        let account = portal
            .viewer
            .account
            .as_ref()
            .map(|a| a.id.clone())
            .unwrap_or_default();
        view! {
            <Title text="Ledger: research credits"/>
            <h1>"Research credits"</h1>
            <p class="lede">"A prepaid balance for the follow-the-money tools (expand_graph, find_first_funder) and for scans started from this portal. Every charge and refund is a line below, and the balance is their sum."</p>
            <section class="card" aria-labelledby="balance-heading">
                <h2 id="balance-heading">"Balance"</h2>
                <p class="balance"><strong id="credit-balance">{page.balance_usd.clone()}" USD"</strong>" ("{page.balance_atomic.clone()}" atomic USDC)"</p>
                <p>{if page.follow_the_money {
                    "Follow the money is on for your account."
                } else {
                    "Follow the money is not switched on for your account yet; the operator switches it on."
                }}</p>
                <table class="prices">
                    <thead><tr><th>"Call"</th><th>"Price (USD)"</th></tr></thead>
                    <tbody>
                        {page.prices.into_iter().map(|(what, usd)| view! { <tr><td>{what}</td><td>{usd}</td></tr> }).collect_view()}
                    </tbody>
                </table>
            </section>
            <section class="card" aria-labelledby="topup-heading">
                <h2 id="topup-heading">"Top up"</h2>
                <p>"Top-ups are x402 payments in USDC on Solana, of "{page.topup_usd.join(", ")}" USD. "
                   <code>"POST /v1/credits"</code>" with "<code>"{\"amount_usd\": \"5\"}"</code>" and your API key answers HTTP 402 with the challenge; pay it (any x402 client, or "<code>"x402pay mcp-payment"</code>") and post again with "<code>"payment"</code>" and "<code>"quote_id"</code>". The balance is credited once the payment settles, exactly once."</p>
                <pre><code>{format!("curl -sS {public_url}/v1/credits -H \"Authorization: Bearer lk_…\" \\\n  -H 'Content-Type: application/json' -d '{{\"amount_usd\":\"5\"}}'")}</code></pre>
                <p>"An operator can also grant credits: "<code>{format!("ledger credits grant --account {account} --usd 5")}</code>"."</p>
            </section>
            <section aria-labelledby="movements-heading">
                <h2 id="movements-heading">"Movements"</h2>
                {if page.movements.is_empty() {
                    view! { <p class="empty">"No movements yet."</p> }.into_any()
                } else {
                    view! {
                        <div class="table-wrap">
                            <table class="movements">
                                <thead><tr><th>"Date"</th><th>"Kind"</th><th>"Amount (USD)"</th><th>"Balance after"</th><th>"Note"</th></tr></thead>
                                <tbody>
                                    {page.movements.into_iter().map(|m| { let class = format!("movement {}", m.kind); view! {
                                        <tr class=class>
                                            <td>{m.date}</td><td>{m.kind}</td><td>{m.amount}</td><td>{m.balance_after}</td>
                                            <td>{m.note}</td>
                                        </tr>
                                    }}).collect_view()}
                                </tbody>
                            </table>
                        </div>
                    }.into_any()
                }}
            </section>
        }
        .into_any()
    })
}

#[component]
pub fn GraphView() -> impl IntoView {
    with_portal(|portal| {
        let page = match portal.page {
            PortalPage::Graph(page) => page,
            PortalPage::Refused(message) => return refused(message),
            _ => GraphPage::default(),
        };
        let viewer = portal.viewer;
        let action = format!("/wallets/{}/graph", page.address);
        let node_options = {
            let mut ids: Vec<String> = vec![page.address.clone()];
            ids.extend(page.nodes.iter().map(|n| n.address.clone()));
            ids.dedup();
            ids
        };
        view! {
            <Title text="Ledger: follow the money"/>
            <h1>"Follow the money"</h1>
            <p class="lede">"One hop of counterparties at a time, from "<code>{page.address.clone()}</code>". Nodes carry measured facts and cited registry entries: evidence, never a verdict."</p>
            <p class="balance">"Balance: "<strong id="graph-balance">{page.balance_usd.clone()}" USD"</strong>" · "<a href="/credits" rel="external">"Credits"</a></p>
            {page.error.clone().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            {page.outcome.clone().map(|o| view! { <p class="notice" role="status" id="graph-outcome">{o}</p> })}
            {page.hub.clone().map(|h| view! { <p class="notice" role="status">{h}</p> })}
            <section class="card" aria-labelledby="expand-heading">
                <h2 id="expand-heading">"Expand a node"</h2>
                {if page.follow_the_money {
                    view! {
                        <form method="post" action=action.clone() class="stack" id="expand-form">
                            {csrf_field(&viewer)}
                            <input type="hidden" name="action_id" value=page.action_id.clone()/>
                            <label for="expand-node">"Node"</label>
                            <select id="expand-node" name="node">
                                {node_options.into_iter().map(|id| view! { <option value=id.clone()>{id.clone()}</option> }).collect_view()}
                            </select>
                            <label for="expand-source">"Source"</label>
                            <select id="expand-source" name="source">
                                <option value="ledger">{format!("ledger (a scanned wallet): {} USD", page.ledger_price_usd)}</option>
                                <option value="live">{format!("live (recent transactions): {} USD, {} USD when cached", page.live_price_usd, page.cached_live_price_usd)}</option>
                            </select>
                            <label for="expand-direction">"Direction"</label>
                            <select id="expand-direction" name="direction">
                                <option value="both">"both"</option>
                                <option value="in">"in"</option>
                                <option value="out">"out"</option>
                            </select>
                            <p class="cost" id="expand-cost">{format!("This expansion costs {} USD from the ledger or {} USD live; a failed one is refunded.", page.ledger_price_usd, page.live_price_usd)}</p>
                            <button type="submit" class="primary" id="expand-button">"Expand"</button>
                        </form>
                    }.into_any()
                } else {
                    view! { <p>"Follow the money is not switched on for your account yet."</p> }.into_any()
                }}
            </section>
            <div id="graph" class="graph" style="width:100%;height:480px" data-endpoint=action></div>
            <script type="application/json" id="graph-option">{page.option_json.clone()}</script>
            <section aria-labelledby="nodes-heading">
                <h2 id="nodes-heading">"Nodes"</h2>
                <div class="table-wrap">
                    <table class="nodes">
                        <thead><tr><th>"Address"</th><th>"Kind"</th><th>"Name"</th><th>"Category"</th><th>"Signals"</th><th>"Source"</th></tr></thead>
                        <tbody>
                            {page.nodes.into_iter().map(|n| view! {
                                <tr>
                                    <td><code>{n.address}</code></td><td>{n.kind}</td><td>{n.name}</td><td>{n.category}</td><td>{n.signals}</td>
                                    <td>{n.citation.map(|(url, checked)| view! { <a href=url.clone() rel="external nofollow">{url.clone()}</a>" (checked "{checked}")" })}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            </section>
            <section aria-labelledby="edges-heading">
                <h2 id="edges-heading">"Edges"</h2>
                <div class="table-wrap">
                    <table class="edges">
                        <thead><tr><th>"From"</th><th>"To"</th><th>"Mint"</th><th>"Amount (atomic)"</th><th>"USD"</th><th>"Legs"</th></tr></thead>
                        <tbody>
                            {page.edges.into_iter().map(|e| view! {
                                <tr><td><code>{e.source}</code></td><td><code>{e.target}</code></td><td><code>{e.mint}</code></td><td>{e.amount}</td><td>{e.usd}</td><td>{e.legs}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            </section>
            <script src="/vendor/echarts.min.js" defer></script>
            <script src="/graph.js" defer></script>
        }
        .into_any()
    })
}
