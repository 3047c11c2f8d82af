//! The signed-in side of the portal: the sign-in page, Keys, Wallets,
//! Payments and the OAuth consent page.
//!
//! These pages are per request: who is signed in, their CSRF token, and
//! what a form just did (a token minted once, an error next to a field).
//! The server computes all of it as one plain value, `frame::Portal`, and
//! each page reads it through `frame::with_portal`; what a page shows is
//! plain data in `views`. Nothing here fetches on its own, and every
//! form is a plain HTML form that POSTs to the server and is answered with
//! a redirect or this page again, so the pages work with JavaScript off.
//! Links to these pages are `rel="external"`: they are full page loads,
//! never a client-side navigation (which would have no per-request value).

use leptos::prelude::*;
use leptos_meta::Title;

use crate::{
    frame::{PortalPage, csrf_field, refused, with_portal},
    snippets,
    views::{
        ConfirmView, ConsentView, Destination, FieldError, KeysView, MintedToken, OAuthActivityRow,
        OAuthClientRow, WalletsView,
    },
};

fn field_error(error: &Option<FieldError>, field: &str) -> Option<AnyView> {
    error.as_ref().filter(|e| e.field == field).map(|e| {
        view! { <p class="field-error" role="alert" id=format!("{field}-error")>{e.message.clone()}</p> }
            .into_any()
    })
}

/// A code block with a copy button that `/portal.js` wires up (hidden
/// until it does, so nobody without JavaScript sees a dead button).
#[component]
fn CopyBlock(#[prop(into)] label: String, #[prop(into)] code: String) -> impl IntoView {
    view! {
        <figure class="snippet">
            <figcaption>
                <span>{label}</span>
                <button type="button" class="copy" data-copy="" hidden>"Copy"</button>
            </figcaption>
            <pre><code>{code}</code></pre>
        </figure>
    }
}

#[component]
pub fn SignInPage() -> impl IntoView {
    with_portal(|portal| {
        let (error, next) = match &portal.page {
            PortalPage::SignIn(view) => (view.error.clone(), view.next.clone()),
            PortalPage::Refused(message) => return refused(message.clone()),
            _ => (None, None),
        };
        let google_href = match &next {
            Some(next) => format!("/auth/google/start?next={}", encode_component(next)),
            None => "/auth/google/start".to_owned(),
        };
        let signed_in = portal.viewer.account.clone();
        view! {
            <Title text="Ledger: sign in"/>
            <h1>"Sign in"</h1>
            {match signed_in {
                None => view! {
                    <p class="lede">"Sign in to mint MCP tokens and API keys, keep a watchlist of wallets and see your payments."</p>
                }.into_any(),
                Some(account) => view! {
                    <p class="lede">
                        "You are signed in as " <strong>{account.label.clone()}</strong>
                        ". Signing in with another method links it to this account."
                    </p>
                    <ul class="identities">
                        {account.identities.into_iter().map(|i| view! { <li>{i}</li> }).collect_view()}
                    </ul>
                }.into_any(),
            }}
            {error.map(|e| view! { <p class="error" role="alert" id="signin-error">{e}</p> })}
            <div class="signin-methods">
                <article class="card">
                    <h2>"Sign in with a Solana wallet"</h2>
                    <p>"Your wallet signs a one-time message (Sign-In With Solana); nothing is sent on chain. Needs JavaScript and a wallet extension."</p>
                    <button type="button" id="siws-button" class="primary" disabled data-next=next.clone().unwrap_or_default()>"Sign in with a Solana wallet"</button>
                    <p class="error" id="siws-status" role="status" aria-live="polite"></p>
                    <noscript><p>"Turn on JavaScript to sign in with a wallet."</p></noscript>
                </article>
                {portal.viewer.google.then(|| view! {
                    <article class="card">
                        <h2>"Sign in with Google"</h2>
                        <p>"Google tells us your account's id and email; nothing else."</p>
                        <a class="button primary" href=google_href.clone() rel="external" id="google-signin">"Sign in with Google"</a>
                    </article>
                })}
            </div>
            <script src="/portal.js" defer></script>
        }
        .into_any()
    })
}

/// A long address as people glance at it: `7xKX…gAsU`.
fn short(address: &str) -> String {
    let chars: Vec<char> = address.chars().collect();
    if chars.len() <= 12 {
        return address.to_owned();
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// Percent-encode a query component (everything but unreserved characters).
pub(crate) fn encode_component(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[component]
fn Minted(minted: MintedToken, public_url: String) -> impl IntoView {
    let mcp_url = snippets::mcp_url(&public_url);
    let token = minted.plaintext.clone();
    let is_mcp = minted.kind == "mcp";
    view! {
        <section class="minted" id="minted" aria-labelledby="minted-heading">
            <h2 id="minted-heading">"Your new " {if is_mcp { "MCP token" } else { "API key" }}</h2>
            <p class="warning">
                <strong>"Copy it now: it is shown this once."</strong>
                " Ledger keeps only its hash; if you lose it, revoke it and mint another."
            </p>
            <CopyBlock label="token" code=token.clone()/>
            {if is_mcp {
                view! {
                    <div class="connect">
                        <h3>"Connect an agent"</h3>
                        <p class="which-url">{snippets::which_url(&public_url)}</p>
                        <div class="clients">
                            {snippets::token_snippets(&mcp_url, &token).into_iter().map(|s| view! {
                                <article id=format!("minted-{}", s.id)>
                                    <h4>{s.title}</h4>
                                    <p>{s.intro}</p>
                                    <CopyBlock label=s.label code=s.code/>
                                </article>
                            }).collect_view()}
                        </div>
                    </div>
                }.into_any()
            } else {
                view! {
                    <div class="connect">
                        <h3>"Call the REST API"</h3>
                        <CopyBlock label="shell" code=snippets::curl_api(&public_url, &token)/>
                    </div>
                }.into_any()
            }}
        </section>
    }
}

#[component]
pub fn KeysPage() -> impl IntoView {
    with_portal(|portal| {
        let keys = match portal.page {
            PortalPage::Keys(keys) => keys,
            PortalPage::Refused(message) => return refused(message),
            _ => KeysView::default(),
        };
        let viewer = portal.viewer;
        let form = keys.form.clone();
        let error = keys.error.clone();
        let empty = keys.tokens.is_empty();
        view! {
            <Title text="Ledger: keys"/>
            <h1>"Keys"</h1>
            <p class="lede">"MCP tokens (" <code>"lm_…"</code> ") connect agents to " <code>"/mcp"</code>
                "; API keys (" <code>"lk_…"</code> ") call the REST API under " <code>"/v1"</code> "."</p>
            {keys.notice.clone().map(|n| view! { <p class="notice" role="status" id="notice">{n}</p> })}
            {field_error(&error, "token_id")}
            {field_error(&error, "client_id")}
            {keys.minted.map(|minted| view! { <Minted minted public_url=viewer.public_url.clone()/> })}
            <section class="card" aria-labelledby="mint-heading">
                <h2 id="mint-heading">"Mint a token"</h2>
                <form method="post" action="/keys" class="stack" id="mint-form">
                    {csrf_field(&viewer)}
                    <fieldset>
                        <legend>"Kind"</legend>
                        <label><input type="radio" name="kind" value="mcp" checked=form.kind != "api"/>" MCP token (agents)"</label>
                        <label><input type="radio" name="kind" value="api" checked=form.kind == "api"/>" API key (REST)"</label>
                        {field_error(&error, "kind")}
                    </fieldset>
                    <fieldset>
                        <legend>"Scopes"</legend>
                        <label><input type="checkbox" name="scope_read" value="on" checked=form.read/>{format!(" read: {}", crate::scopes::READ)}</label>
                        <label><input type="checkbox" name="scope_scan" value="on" checked=form.scan/>{format!(" scan: {}", crate::scopes::SCAN)}</label>
                        {field_error(&error, "scopes")}
                    </fieldset>
                    <label for="mint-label">"Label"</label>
                    <input type="text" id="mint-label" name="label" maxlength="64" value=form.label.clone() placeholder="laptop, CI, my agent"/>
                    {field_error(&error, "label")}
                    <button type="submit" class="primary">"Mint"</button>
                </form>
            </section>
            <section aria-labelledby="tokens-heading">
                <h2 id="tokens-heading">"Live tokens"</h2>
                {if empty {
                    view! { <p class="empty">"No live tokens yet."</p> }.into_any()
                } else {
                    view! {
                        <div class="table-wrap">
                            <table class="tokens">
                                <thead><tr><th>"Label"</th><th>"Kind"</th><th>"Scopes"</th><th>"Prefix"</th><th>"Created"</th><th>"Last used"</th><th></th></tr></thead>
                                <tbody>
                                    {keys.tokens.into_iter().map(|t| {
                                        let name = if t.label.is_empty() { format!("{}…", t.prefix) } else { t.label.clone() };
                                        view! {
                                            <tr id=format!("token-{}", t.id)>
                                                <td data-label="Label" class="token-label">{if t.label.is_empty() { "(no label)".to_owned() } else { t.label.clone() }}</td>
                                                <td data-label="Kind">{t.kind}</td>
                                                <td data-label="Scopes">{t.scopes}</td>
                                                <td data-label="Prefix"><code>{t.prefix}"…"</code></td>
                                                <td data-label="Created">{t.created}</td>
                                                <td data-label="Last used">{t.last_used.unwrap_or_else(|| "never".to_owned())}</td>
                                                <td class="token-actions">
                                                    <a class="button danger" rel="external" href=format!("/keys/revoke?token_id={}", encode_component(&t.id))>{format!("Revoke {name}")}</a>
                                                </td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                        </div>
                    }.into_any()
                }}
            </section>
            <OAuthSection
                clients=keys.oauth_clients
                activity=keys.oauth_activity
                public_url=viewer.public_url.clone()
            />
            <script src="/portal.js" defer></script>
        }
        .into_any()
    })
}

#[component]
fn OAuthSection(
    clients: Vec<OAuthClientRow>,
    activity: Vec<OAuthActivityRow>,
    public_url: String,
) -> impl IntoView {
    let no_clients = clients.is_empty();
    let no_activity = activity.is_empty();
    view! {
        <section class="oauth-clients" aria-labelledby="oauth-heading" id="oauth-clients">
            <h2 id="oauth-heading">"OAuth clients"</h2>
            <p>"Connect with OAuth instead of pasting a token: give your MCP client this URL and pick Connect. It sends you here to sign in and approve; the client gets the same account and scopes as an MCP token, never admin."</p>
            <p class="which-url">{snippets::which_url(&public_url)}</p>
            <div class="clients">
                {snippets::oauth_snippets(&public_url).into_iter().map(|s| view! {
                    <article id=s.id>
                        <h4>{s.title}</h4>
                        <p>{s.intro}</p>
                        <CopyBlock label=s.label code=s.code/>
                    </article>
                }).collect_view()}
            </div>
            <h3>"Connected clients"</h3>
            {if no_clients {
                view! { <p class="empty" id="oauth-no-clients">"No client is connected through OAuth."</p> }.into_any()
            } else {
                view! {
                    <div class="table-wrap">
                        <table class="tokens" id="oauth-client-table">
                            <thead><tr><th>"Client"</th><th>"From"</th><th>"Scopes"</th><th>"Connected"</th><th>"Last used"</th><th></th></tr></thead>
                            <tbody>
                                {clients.into_iter().map(|c| {
                                    view! {
                                        <tr class="oauth-client">
                                            <td data-label="Client">{c.name.clone()}</td>
                                            <td data-label="From">{c.from}</td>
                                            <td data-label="Scopes">{c.scopes}</td>
                                            <td data-label="Connected">{c.connected}</td>
                                            <td data-label="Last used">{c.last_used.unwrap_or_else(|| "never".to_owned())}</td>
                                            <td class="token-actions">
                                                <a class="button danger" rel="external" href=format!("/keys/oauth/disconnect?client_id={}", encode_component(&c.client_id))>{format!("Disconnect {}", c.name)}</a>
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                }.into_any()
            }}
            <h3>"Recent activity"</h3>
            {if no_activity {
                view! { <p class="empty">"Nothing yet."</p> }.into_any()
            } else {
                view! {
                    <ul class="oauth-activity" id="oauth-activity">
                        {activity.into_iter().map(|a| view! {
                            <li><span class="when">{a.at}</span>" " <strong>{a.client}</strong>" " {a.what}</li>
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
    }
}

/// `/authorize`: the consent page (or why the request cannot be answered).
#[component]
pub fn ConsentPage() -> impl IntoView {
    with_portal(|portal| {
        let view = match portal.page {
            PortalPage::Consent(view) => view,
            PortalPage::Refused(message) => return refused(message),
            PortalPage::OAuthError(error) => {
                let back = error.return_to.clone().map(|href| {
                    let words = format!(
                        "Return to {}",
                        error.destination.clone().unwrap_or_default().words()
                    );
                    view! {
                        <p><a id="oauth-return" href=href rel="noreferrer">{words}</a></p>
                    }
                });
                return view! {
                    <Title text="Ledger: authorization refused"/>
                    <h1>"This authorization request cannot be answered"</h1>
                    <p class="error" role="alert" id="oauth-error">{error.message.clone()}</p>
                    <p>"Nothing was shared and you were not sent anywhere. Go back to the app that sent you here and connect again."</p>
                    {back}
                }
                .into_any();
            }
            _ => ConsentView::default(),
        };
        let csrf = portal.viewer.csrf.clone();
        view! {
            <Title text="Ledger: connect an app"/>
            <h1>{format!(
                "Connect {}{} to your account?",
                view.client_name,
                if view.client_from.is_none() { " (unverified)" } else { "" }
            )}</h1>
            <section class="card consent" id="oauth-consent">
                <p id="oauth-client">
                    <strong>{view.client_name.clone()}</strong>
                    {match view.client_from.clone() {
                        Some(host) => view! { " (its description is published by " <strong>{host}</strong> ")" }.into_any(),
                        None => view! { " (it registered itself with this name; Ledger has not verified it)" }.into_any(),
                    }}
                    " asks to act for you."
                </p>
                <p id="oauth-identity">"It will act as " <strong>{view.identity.clone()}</strong>
                    {(!view.identities.is_empty()).then(|| view! { " (" {view.identities.join(", ")} ")" })}
                    "."
                </p>
                <p>"It will be able to:"</p>
                <ul id="oauth-abilities">
                    {view.abilities.iter().map(|a| view! { <li>{a.clone()}</li> }).collect_view()}
                </ul>
                <p id="oauth-never">{crate::scopes::NEVER}</p>
                <p id="oauth-redirect">"Once you answer, you are sent back to "
                    {match view.destination.clone() {
                        Destination::Site(host) => view! { <strong>{host}</strong> }.into_any(),
                        Destination::App(scheme) => view! {
                            <strong>"an app on this device"</strong>
                            " (whichever app opens " <code>{format!("{scheme}:")}</code>
                            " links; not a web site)"
                        }.into_any(),
                    }}
                    " at " <code>{view.redirect_uri.clone()}</code> "."</p>
                <form method="post" action="/authorize" class="consent-actions">
                    <input type="hidden" name="csrf" value=csrf/>
                    <input type="hidden" name="request_id" value=view.request_id.clone()/>
                    <button type="submit" id="oauth-approve" name="decision" value="approve" class="primary">"Approve"</button>
                    <button type="submit" id="oauth-deny" name="decision" value="deny">"Deny"</button>
                </form>
            </section>
        }
        .into_any()
    })
}

#[component]
pub fn WalletsPage() -> impl IntoView {
    with_portal(|portal| {
        let wallets = match portal.page {
            PortalPage::Wallets(wallets) => wallets,
            PortalPage::Refused(message) => return refused(message),
            _ => WalletsView::default(),
        };
        let viewer = portal.viewer;
        let error = wallets.error.clone();
        let empty = wallets.wallets.is_empty();
        view! {
            <Title text="Ledger: wallets"/>
            <h1>"Wallets"</h1>
            <p class="lede">"The wallets your account watches. Reads of a watched wallet are free for your tokens; scans are paid."</p>
            {wallets.notice.map(|n| view! { <p class="notice" role="status">{n}</p> })}
            <section class="card" aria-labelledby="add-heading">
                <h2 id="add-heading">"Add a wallet"</h2>
                <form method="post" action="/wallets" class="stack" id="add-wallet-form">
                    {csrf_field(&viewer)}
                    <label for="wallet-address">"Address"</label>
                    <input type="text" id="wallet-address" name="address" required value=wallets.address.clone()
                        autocomplete="off" spellcheck="false" placeholder="a Solana address (base58)"/>
                    {field_error(&error, "address")}
                    <label for="wallet-label">"Label"</label>
                    <input type="text" id="wallet-label" name="label" maxlength="128" value=wallets.label.clone() placeholder="cold storage, trading"/>
                    {field_error(&error, "label")}
                    <button type="submit" class="primary">"Add"</button>
                </form>
            </section>
            <section aria-labelledby="watched-heading">
                <h2 id="watched-heading">"Watched wallets"</h2>
                {if empty {
                    view! { <p class="empty">"No wallets yet."</p> }.into_any()
                } else {
                    view! {
                        <div class="wallets">
                            {wallets.wallets.into_iter().map(|w| {
                                let csrf = viewer.csrf.clone();
                                let relabel_error = error.as_ref()
                                    .filter(|e| e.field == format!("relabel-{}", w.address))
                                    .map(|e| view! { <p class="field-error" role="alert">{e.message.clone()}</p> });
                                let name = if w.label.is_empty() { short(&w.address) } else { w.label.clone() };
                                view! {
                                    <article class="card wallet" id=format!("wallet-{}", w.address)>
                                        <h3>{if w.label.is_empty() { "(no label)".to_owned() } else { w.label.clone() }}</h3>
                                        <p class="address"><code>{w.address.clone()}</code></p>
                                        <dl class="facts">
                                            <dt>"Last scan"</dt><dd>{w.last_scan.clone()}</dd>
                                            <dt>"Ledger"</dt><dd>{w.ledger_legs}" legs"</dd>
                                            <dt>"Added"</dt><dd>{w.added.clone()}</dd>
                                        </dl>
                                        <p class="scan"><a href=format!("/wallets/{}/scan", w.address) rel="external" class="button primary scan-now">{format!("Scan {name} now")}</a>
                                            " (see its price first)"</p>
                                        <p class="reads"><a href=format!("/wallets/{}", w.address) rel="external" class="report-link">"Report, downloads and share links"</a></p>
                                        <p class="reads">"Read it: "
                                            <a href=format!("/v1/wallets/{}/ledger", w.address)>"ledger"</a>" · "
                                            <a href=format!("/v1/wallets/{}/positions", w.address)>"positions"</a>" · "
                                            <a href=format!("/v1/wallets/{}/value-history", w.address)>"value history"</a>" · "
                                            <a href=format!("/v1/wallets/{}/flows", w.address)>"flows"</a>
                                            " (REST, with an API key), or the MCP tools "
                                            <code>"get_ledger"</code>", "<code>"get_positions"</code>", "<code>"get_flows"</code>"."
                                        </p>
                                        <p class="follow"><a href=format!("/wallets/{}/graph", w.address) rel="external">"Follow the money"</a>" (one hop at a time, paid from your research credits)"</p>
                                        <div class="wallet-forms">
                                            <form method="post" action="/wallets/relabel" class="inline">
                                                <input type="hidden" name="csrf" value=csrf/>
                                                <input type="hidden" name="address" value=w.address.clone()/>
                                                <label class="visually-hidden" for=format!("relabel-{}", w.address)>"New label"</label>
                                                <input type="text" name="label" id=format!("relabel-{}", w.address) maxlength="128" value=w.label.clone()/>
                                                <button type="submit">"Relabel"</button>
                                            </form>
                                            <a class="button danger" rel="external" href=format!("/wallets/remove?address={}", encode_component(&w.address))>{format!("Remove {name}")}</a>
                                        </div>
                                        {relabel_error}
                                    </article>
                                }
                            }).collect_view()}
                        </div>
                    }.into_any()
                }}
            </section>
        }
        .into_any()
    })
}

/// The question before a destructive action: what it acts on, a button
/// that says what it does, and a way back. A plain form: no JavaScript.
#[component]
pub fn ConfirmPage() -> impl IntoView {
    with_portal(|portal| {
        let confirm = match portal.page {
            PortalPage::Confirm(confirm) => confirm,
            PortalPage::Refused(message) => return refused(message),
            _ => ConfirmView::default(),
        };
        let viewer = portal.viewer;
        view! {
            // Never the question: it names things others chose (an app's
            // name, a wallet's label), and `<title>` is written unescaped.
            <Title text=confirm.title.clone()/>
            <h1 id="confirm-question">{confirm.question.clone()}</h1>
            <section class="card confirm">
                <p id="confirm-consequence">{confirm.consequence.clone()}</p>
                <form method="post" action=confirm.action.clone() class="confirm-actions" id="confirm-form">
                    {csrf_field(&viewer)}
                    {confirm.fields.iter().map(|(name, value)| view! {
                        <input type="hidden" name=name.clone() value=value.clone()/>
                    }).collect_view()}
                    <button type="submit" class="danger" id="confirm-button">{confirm.button.clone()}</button>
                    " "
                    <a href=confirm.cancel.clone() rel="external" id="confirm-cancel">"Cancel"</a>
                </form>
            </section>
        }
        .into_any()
    })
}

#[component]
pub fn PaymentsPage() -> impl IntoView {
    with_portal(|portal| {
        let payments = match portal.page {
            PortalPage::Payments(payments) => payments,
            PortalPage::Refused(message) => return refused(message),
            _ => Vec::new(),
        };
        view! {
            <Title text="Ledger: payments"/>
            <h1>"Payments"</h1>
            <p class="lede">"x402 payments made for this account, newest first."</p>
            {if payments.is_empty() {
                view! { <p class="empty">"No payments yet."</p> }.into_any()
            } else {
                view! {
                    <div class="table-wrap">
                        <table class="payments">
                            <thead><tr><th>"Date"</th><th>"Quote"</th><th>"Entitlement"</th><th>"Wallet"</th><th>"Amount"</th><th>"Status"</th><th>"Transaction"</th></tr></thead>
                            <tbody>
                                {payments.into_iter().map(|p| view! {
                                    <tr id=format!("payment-{}", p.payment_id)>
                                        <td>{p.date}</td>
                                        <td><code>{p.quote_id}</code></td>
                                        <td>{p.entitlement}</td>
                                        <td><code class="short">{p.wallet}</code></td>
                                        <td>{p.amount}</td>
                                        <td>{p.status}</td>
                                        <td><code class="short">{p.transaction}</code></td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                }.into_any()
            }}
        }
        .into_any()
    })
}
