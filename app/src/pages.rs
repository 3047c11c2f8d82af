//! The pages. Each fetches what it shows through a server function, so the
//! server renders it in full (routes use `SsrMode::Async`: the HTML is sent
//! once every resource resolved, which keeps pages whole with JavaScript off)
//! and hydration finds the same data serialized in the page.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use crate::{
    backend::{SiteInfo, ToolSummary},
    snippets,
};

/// Facts about this deployment (public URL, version).
#[server]
pub async fn get_site_info() -> Result<SiteInfo, ServerFnError> {
    Ok(crate::backend::backend()?.0.site_info())
}

/// The MCP tool registry, summarised for the tools page.
#[server]
pub async fn list_tools() -> Result<Vec<ToolSummary>, ServerFnError> {
    Ok(crate::backend::backend()?.0.tools())
}

/// A code block with a copy button. The button exists only once the page is
/// hydrated (an effect, which runs in the browser only, reveals it), so
/// nobody without JavaScript sees a button that cannot work.
#[component]
fn Snippet(#[prop(into)] label: String, #[prop(into)] code: String) -> impl IntoView {
    let (hydrated, set_hydrated) = signal(false);
    let (copied, set_copied) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));
    let text = code.clone();
    let copy = move |_| {
        #[cfg(feature = "hydrate")]
        {
            let _promise = window().navigator().clipboard().write_text(&text);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &text;
        set_copied.set(true);
    };
    view! {
        <figure class="snippet">
            <figcaption>
                <span>{label}</span>
                <Show when=move || hydrated.get()>
                    <button type="button" class="copy" on:click=copy.clone()>
                        {move || if copied.get() { "Copied" } else { "Copy" }}
                    </button>
                </Show>
            </figcaption>
            <pre><code>{code}</code></pre>
        </figure>
    }
    .into_any()
}

#[component]
pub fn HomePage() -> impl IntoView {
    let info = Resource::new(|| (), |_| get_site_info());
    view! {
        <Title text="Ledger: Solana wallet reports for people and agents"/>
        <Meta name="description" content="Scan a Solana wallet into a ledger, positions, value history, flows and tax reports, over MCP and REST."/>
        <section class="hero">
            <h1>"Every lamport, accounted for."</h1>
            <p class="lede">
                "Ledger scans a Solana wallet into a ledger that conserves every lamport, and turns it into "
                "positions, value history, flows and tax reports. Agents use it over MCP and REST and pay "
                "per call in USDC through x402; people sign in, mint tokens and share reports."
            </p>
            <WayIn/>
        </section>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match info.await {
                    Ok(info) => {
                        let sample = info.sample_report;
                        view! {
                            {sample.then(|| view! { <Sample/> })}
                            <Developers info/>
                        }.into_any()
                    }
                    Err(_) => view! { <p class="error">"The server could not describe itself."</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The way in for a person: sign in (then the wallets), or, signed in
/// already, straight to the wallets.
#[component]
fn WayIn() -> impl IntoView {
    if crate::frame::is_signed_in() {
        view! {
            <p class="way-in" id="way-in">
                <a class="button primary" href="/wallets" rel="external">"Your wallets and reports"</a>
            </p>
        }
        .into_any()
    } else {
        view! {
            <p class="way-in" id="way-in">
                <a class="button primary" href="/signin" rel="external" id="home-signin">"Sign in"</a>
                " with a Solana wallet or Google to watch wallets, read their reports and share them."
            </p>
        }
        .into_any()
    }
}

/// The sample report: what a report looks like before signing in.
#[component]
fn Sample() -> impl IntoView {
    view! {
        <section class="card sample" id="sample" aria-labelledby="sample-heading">
            <h2 id="sample-heading">"See a sample report"</h2>
            <p>
                "A made-up wallet, read only: its value over time, what it holds, every transaction "
                "and who it traded with, as a report of your own wallet reads. No sign-in, nothing to pay."
            </p>
            <p><a class="button" href="/sample" rel="external" id="home-sample">"Open the sample report"</a></p>
        </section>
    }
}

/// Everything for developers and agents, below what a person needs: the
/// machine-readable documents and the MCP connection snippets.
#[component]
fn Developers(info: SiteInfo) -> impl IntoView {
    let mcp_url = snippets::mcp_url(&info.public_url);
    view! {
        <section class="developers" id="developers" aria-labelledby="developers-heading">
            <h2 id="developers-heading">"For developers and agents"</h2>
            <ul class="dev-links">
                <li>"MCP endpoint: " <code class="endpoint">{mcp_url}</code></li>
                <li><a href="/tools">"Tools"</a>" the MCP endpoint and REST API offer, with their prices"</li>
                <li><a href="/llms.txt">"llms.txt"</a>": the service described for language models"</li>
                <li><a href="/v1/openapi.json">"OpenAPI"</a>": the REST API's document"</li>
                <li><a href="/.well-known/mcp/server-card.json">"Server card"</a>": the MCP server's card"</li>
            </ul>
            <Connect info/>
        </section>
    }
}

#[component]
fn Connect(info: SiteInfo) -> impl IntoView {
    let mcp_url = snippets::mcp_url(&info.public_url);
    let clients = snippets::token_snippets(&mcp_url, snippets::TOKEN_PLACEHOLDER);
    // Claude Code's two forms share a section; the rest have one each.
    let (code, others): (Vec<_>, Vec<_>) = clients
        .into_iter()
        .partition(|s| matches!(s.id, "claude-code" | "mcp-json"));
    view! {
        <section class="connect">
            <h3>"Connect an agent"</h3>
            <p>
                "The MCP endpoint is " <code class="endpoint">{mcp_url.clone()}</code>
                ". Every host that sends a bearer wants an MCP token from the Keys page; leave the "
                "Authorization header out to connect anonymously (anonymous agents pay per call). "
                "See the " <a href="/tools">"tools"</a> " it offers."
            </p>
            <p class="which-url" id="which-url">{snippets::which_url(&info.public_url)}</p>
            <div class="clients">
                <article id="claude-code">
                    <h3>"Claude Code"</h3>
                    {code.into_iter().map(|s| view! {
                        <p>{s.intro}</p>
                        <Snippet label=s.label code=s.code/>
                    }).collect_view()}
                </article>
                {others.into_iter().map(|s| view! {
                    <article id=s.id>
                        <h3>{s.title}</h3>
                        <p>{s.intro}</p>
                        <Snippet label=s.label code=s.code/>
                    </article>
                }).collect_view()}
                <article id="curl">
                    <h3>"curl"</h3>
                    <p>"One anonymous call, no session:"</p>
                    <Snippet label="shell" code=snippets::curl_ping(&mcp_url)/>
                    <p>"What every host above does under the hood: initialize, the initialized notification, list the tools, call one."</p>
                    <Snippet label="shell" code=snippets::curl_session(&mcp_url, snippets::TOKEN_PLACEHOLDER)/>
                </article>
            </div>
        </section>
    }
}

#[component]
pub fn ToolsPage() -> impl IntoView {
    let tools = Resource::new(|| (), |_| list_tools());
    view! {
        <Title text="Ledger: MCP tools"/>
        <h1>"MCP tools"</h1>
        <p class="lede">
            "Generated from the server's tool registry: what " <code>"tools/list"</code>
            " answers, in a form people can read."
        </p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match tools.await {
                    Ok(tools) => grouped(tools)
                        .into_iter()
                        .map(|(group, heading, intro, tools)| view! {
                            <section class="tool-group" id=format!("group-{group}")>
                                <h2>{heading}</h2>
                                <p class="group-intro">{intro}</p>
                                <div class="tools">
                                    {tools.into_iter().map(|tool| view! { <ToolCard tool/> }).collect_view()}
                                </div>
                            </section>
                        })
                        .collect_view()
                        .into_any(),
                    Err(_) => view! { <p class="error">"The tool list is unavailable."</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The order a user meets the tools in: who am I, what would a scan cost,
/// scan, poll, read. A tool not named here follows, in registry order.
const JOURNEY: [&str; 11] = [
    "ping",
    "quote_wallet",
    "get_job",
    "get_prices",
    "get_price_history",
    "scan_wallet",
    "get_ledger",
    "get_positions",
    "get_value_history",
    "get_flows",
    "get_report",
];

type Group = (&'static str, &'static str, &'static str, Vec<ToolSummary>);

/// The tools in the groups a user meets them in (free, paid, account), each
/// group in journey order; empty groups are left out.
fn grouped(mut tools: Vec<ToolSummary>) -> Vec<Group> {
    let step = |name: &str| {
        JOURNEY
            .iter()
            .position(|n| *n == name)
            .unwrap_or(JOURNEY.len())
    };
    tools.sort_by_key(|t| step(&t.name));
    [
        ("free", "Free tools", "No payment and no account: check the connection, price a scan, follow a job, read prices."),
        ("paid", "Paid tools", "Paid per call in USDC through x402, at the price shown; a scan's receipt then covers reads of that wallet."),
        ("account", "Account tools", "Free for a signed-in account (an MCP token or API key from the portal)."),
    ]
    .into_iter()
    .map(|(group, heading, intro)| {
        let (mine, rest): (Vec<_>, Vec<_>) = tools.drain(..).partition(|t| t.group == group);
        tools = rest;
        (group, heading, intro, mine)
    })
    .filter(|(_, _, _, tools)| !tools.is_empty())
    .collect()
}

#[component]
fn ToolCard(tool: ToolSummary) -> impl IntoView {
    let id = format!("tool-{}", tool.name);
    let no_args = tool.arguments.is_empty();
    view! {
        <article class="tool" id=id>
            <header>
                <h3><code>{tool.name.clone()}</code></h3>
                <span class="title">{tool.title}</span>
                <span class="tier">{tool.tier}</span>
                {tool.read_only.then(|| view! { <span class="hint">"read-only"</span> })}
            </header>
            <p class="price"><strong>"Price: "</strong>{tool.price}</p>
            <p>{tool.description}</p>
            {if no_args {
                view! { <p class="no-args">"No arguments."</p> }.into_any()
            } else {
                view! {
                    <table class="arguments">
                        <thead><tr><th>"Argument"</th><th>"Type"</th><th>"Description"</th></tr></thead>
                        <tbody>
                            {tool.arguments.into_iter().map(|arg| view! {
                                <tr>
                                    <td><code>{arg.name}</code>{(!arg.required).then_some("?")}</td>
                                    <td>{arg.kind}</td>
                                    <td>{arg.description}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </article>
    }
}

/// Any path no route claims. Sets HTTP 404 on the server.
#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Ledger: not found"/>
        <h1>"Not found"</h1>
        <p>"Nothing lives at this address. " <a href="/">"Back to the start"</a>"."</p>
    }
}
