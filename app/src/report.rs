//! The portal's report view of one watched wallet (`/wallets/{address}`),
//! in the order a person reads it: the same report section the public
//! share page shows (value and change, the chart, allocation, positions,
//! transactions; rendered by the server, handed over as HTML), then the
//! downloads in one menu, then a form to mint a share link and the
//! account's live links with a revoke link each. Every form is a plain POST carrying the session's
//! CSRF token, so the page works with JavaScript off; with it on,
//! `/report.js` draws the charts.

use leptos::prelude::*;
use leptos_meta::{Stylesheet, Title};

use crate::{
    frame::{PortalPage, Viewer, csrf_field, refused, with_portal},
    settings::options,
    views::{ReportView, TaxView},
};

/// The tax summary: the choices (a GET form, so a choice is a link that
/// works with JavaScript off), each tax year's figures in the
/// jurisdiction's terms, the disposals with the rule that matched each, and
/// the unlabelled transfers with a label form each.
fn tax_part(address: &str, tax: TaxView, viewer: &Viewer) -> impl IntoView + use<> {
    let action = format!("/wallets/{address}");
    let label_action = format!("/wallets/{address}/label");
    let query = tax.query.clone();
    let categories = tax.label_categories.clone();
    view! {
        <section id="tax" aria-labelledby="tax-heading">
            <h2 id="tax-heading">"Tax summary"</h2>
            <form method="get" action=action class="stack tax-choices" id="tax-choices">
                <label for="tax-jurisdiction">"Jurisdiction"</label>
                <select id="tax-jurisdiction" name="jurisdiction">{options(&tax.jurisdictions, &tax.jurisdiction)}</select>
                <label for="tax-choice-method">"Method"</label>
                <select id="tax-choice-method" name="method">{options(&tax.methods, &tax.method)}</select>
                <label for="tax-currency">"Currency"</label>
                <select id="tax-currency" name="currency">{options(&tax.currencies, &tax.currency)}</select>
                <label for="tax-year">"Tax year"</label>
                <select id="tax-year" name="tax_year">{options(&tax.tax_years, &tax.tax_year)}</select>
                <button type="submit">"Show"</button>
            </form>
            <ul class="meta rules" id="tax-rules">
                {tax.rules.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}
            </ul>
            {match tax.error.clone() {
                Some(e) => view! { <p class="error" role="alert" id="tax-error">{e}</p> }.into_any(),
                None => view! {
                    <p class="meta" id="tax-heading-line">{tax.heading.clone()}" (" {tax.source.clone()} ")"</p>
                    {if tax.years.is_empty() {
                        view! { <p class="empty" id="tax-no-years">"No disposals or transfers in this choice of years."</p> }.into_any()
                    } else {
                        tax.years.iter().map(|y| view! {
                            <div class="table-scroll">
                                <table class="data tax-year" id=format!("tax-year-{}", y.tax_year)>
                                    <caption>{format!("Tax year {}", y.tax_year)}</caption>
                                    <tbody>
                                        {y.lines.iter().map(|(term, amount)| view! {
                                            <tr><th scope="row">{term.clone()}</th><td class="num">{amount.clone()}</td></tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                            </div>
                            {y.warning.clone().map(|w| view! { <p class="stale" role="status">{w}</p> })}
                        }).collect_view().into_any()
                    }}
                    {(!tax.rows.is_empty()).then(|| view! {
                        <details id="tax-rows">
                            <summary>{format!("Disposals and the rule of each ({})", tax.rows.len())}</summary>
                            <div class="table-scroll">
                                <table class="data">
                                    <thead><tr>
                                        <th scope="col">"Year"</th><th scope="col">"Asset"</th><th scope="col" class="num">"Quantity"</th>
                                        <th scope="col">"Acquired"</th><th scope="col">"Disposed"</th>
                                        <th scope="col" class="num">"Proceeds"</th><th scope="col" class="num">"Cost"</th>
                                        <th scope="col" class="num">"Gain"</th><th scope="col">"Rule"</th>
                                    </tr></thead>
                                    <tbody>
                                        {tax.rows.iter().map(|r| view! {
                                            <tr>
                                                <td>{r.tax_year.clone()}</td><td>{r.asset.clone()}</td><td class="num">{r.quantity.clone()}</td>
                                                <td>{r.acquired.clone()}</td><td>{r.disposed.clone()}</td>
                                                <td class="num">{r.proceeds.clone()}</td><td class="num">{r.cost.clone()}</td>
                                                <td class="num">{r.gain.clone()}</td><td class="rule">{r.rule.clone()}</td>
                                            </tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                            </div>
                        </details>
                    })}
                    <h3 id="unlabelled-heading">"Unlabelled transfers"</h3>
                    {if tax.unlabelled.is_empty() {
                        view! { <p class="meta" id="no-unlabelled">"Every transfer's other side is labelled or one of your wallets."</p> }.into_any()
                    } else {
                        view! {
                            <p class="meta">"Say whose each address is: your own wallet (a move: no gain, dates kept), an exchange (out of and into your books at cost) or a merchant (a payment: a disposal). Until then they follow your setting for unlabelled transfers."</p>
                            <ul class="unlabelled" id="unlabelled">
                                {tax.unlabelled.iter().map(|u| {
                                    let id = format!("label-{}", u.address);
                                    view! {
                                        <li>
                                            <p><code class="address">{u.address.clone()}</code>": "{u.totals.clone()}</p>
                                            <form method="post" action=label_action.clone() class="label-form" id=id.clone()>
                                                {csrf_field(viewer)}
                                                <input type="hidden" name="address" value=u.address.clone()/>
                                                <input type="hidden" name="back" value=query.clone()/>
                                                <label for=format!("{id}-name")>"Label"</label>
                                                <input type="text" id=format!("{id}-name") name="label" required maxlength="64" placeholder="e.g. my Kraken account"/>
                                                <label for=format!("{id}-category")>"Whose"</label>
                                                <select id=format!("{id}-category") name="category">{options(&categories, "own_wallet")}</select>
                                                <button type="submit">"Label"</button>
                                            </form>
                                        </li>
                                    }
                                }).collect_view()}
                            </ul>
                        }.into_any()
                    }}
                }.into_any(),
            }}
        </section>
    }
}

/// The report formats the download links offer (`?format=`).
pub const FORMATS: [(&str, &str); 7] = [
    ("json", "JSON"),
    ("csv", "Ledger CSV"),
    ("positions_csv", "Positions CSV"),
    ("8949", "IRS Form 8949"),
    ("koinly", "Koinly CSV"),
    ("cointracker", "CoinTracker CSV"),
    ("pdf", "PDF"),
];

/// The cost-basis methods the download form offers (`?method=`), the
/// ones `get_report` serves.
pub const METHODS: [(&str, &str); 4] = [
    ("fifo", "FIFO (first in, first out)"),
    ("lifo", "LIFO (last in, first out)"),
    ("hifo", "HIFO (highest cost first out)"),
    ("average", "Average cost"),
];

#[component]
pub fn WalletReportPage() -> impl IntoView {
    with_portal(|portal| {
        let report = match portal.page {
            PortalPage::Report(report) => report,
            PortalPage::Refused(message) => return refused(message),
            _ => ReportView::default(),
        };
        let viewer = portal.viewer;
        let address = report.address.clone();
        let tax = report.tax.clone();
        let tax_hidden = tax
            .clone()
            .map(|t| (t.jurisdiction, t.currency, t.tax_year, t.method));
        // A fixed title: leptos_meta writes `<title>` unescaped, and a
        // wallet's label is anyone's text (agents set it too).
        let title = "Ledger: wallet report";
        let share_action = format!("/wallets/{address}/share");
        let revoke_action = format!("/wallets/{address}/share/revoke");
        view! {
            <Title text=title/>
            <Stylesheet id="report" href="/style/report.css"/>
            <script src="/vendor/echarts.min.js" defer></script>
            <script src="/report.js" defer></script>
            <p class="meta"><a href="/wallets" rel="external">"← Wallets"</a></p>
            <h1>{if report.label.is_empty() { "Wallet report".to_owned() } else { report.label.clone() }}</h1>
            {report.notice.clone().map(|n| view! { <p class="notice" role="status">{n}</p> })}
            {report.error.clone().map(|e| view! { <p class="error" role="alert" id="share-error">{e}</p> })}
            <div class="report">
                <div inner_html=report.section_html.clone()></div>
                {tax.map(|t| tax_part(&address, *t, &viewer))}
                {report.scanned.then(|| view! {
                    <section id="downloads" aria-labelledby="downloads-heading">
                        <h2 id="downloads-heading">"Download"</h2>
                        <details class="menu">
                            <summary>"Download this report"</summary>
                            <ul class="menu-items" aria-label="Report formats">
                                {FORMATS.iter().map(|(format, name)| view! {
                                    <li><a href=format!("/wallets/{address}/report?format={format}") rel="external" download="">{*name}</a></li>
                                }).collect_view()}
                            </ul>
                        </details>
                        // The tax-ready download: a tax year (or any range)
                        // and the cost-basis method feed the same endpoint
                        // as the links above; a plain GET form, so it works
                        // with JavaScript off.
                        <form method="get" action=format!("/wallets/{address}/report") class="stack" id="tax-download">
                            <h3>"For a tax year"</h3>
                            <p class="meta">"Pick the dates of the tax year (1 Jan to 31 Dec in the US, 6 Apr to 5 Apr in the UK) or any range; leave both empty for the whole history. Form 8949 covers one calendar year. The JSON report carries the tax summary chosen above (jurisdiction, currency, tax year); the other formats follow the method and, with no dates, the tax year's dates."</p>
                            {tax_hidden.clone().map(|(j, c, y, _)| view! {
                                <input type="hidden" name="jurisdiction" value=j/>
                                <input type="hidden" name="currency" value=c/>
                                {(!y.is_empty()).then(|| view! { <input type="hidden" name="tax_year" value=y/> })}
                            })}
                            <label for="tax-from">"From"</label>
                            <input type="date" id="tax-from" name="from"/>
                            <label for="tax-to">"To (inclusive)"</label>
                            <input type="date" id="tax-to" name="to"/>
                            <label for="tax-method">"Cost-basis method"</label>
                            <select id="tax-method" name="method">
                                {METHODS.iter().map(|(method, name)| {
                                    let chosen = tax_hidden.as_ref().map(|t| t.3.as_str()).filter(|m| !m.is_empty()).unwrap_or("fifo");
                                    view! { <option value=*method selected={*method == chosen}>{*name}</option> }
                                }).collect_view()}
                            </select>
                            <label for="tax-format">"Format"</label>
                            <select id="tax-format" name="format">
                                {FORMATS.iter().map(|(format, name)| view! {
                                    <option value=*format selected={*format == "pdf"}>{*name}</option>
                                }).collect_view()}
                            </select>
                            <label for="tax-dust">"Form 8949: combine disposals under (USD)"</label>
                            <input type="number" id="tax-dust" name="dust_threshold" min="0" step="0.01" value="1.00" inputmode="decimal" aria-describedby="tax-dust-help"/>
                            <p class="meta" id="tax-dust-help">"Disposals with proceeds under this amount (network fees, slivers of tokens) go on one row per asset and term, with each listed on the attached statement; 0 lists every disposal."</p>
                            <button type="submit" class="primary">"Download"</button>
                        </form>
                    </section>
                })}
                <section id="share-links" aria-labelledby="share-heading">
                    <h2 id="share-heading">"Share links"</h2>
                    <p class="meta">"A share link is a public, read-only page of this report. Anyone with the link sees it until it expires or you revoke it. Your account holds up to "{report.limit}" live links."</p>
                    {report.new_link.clone().map(|url| view! {
                        <p class="notice" role="status">"New share link (shown once, copy it now): "
                            <a href=url.clone() id="new-share-link">{url.clone()}</a></p>
                    })}
                    <form method="post" action=share_action class="share-form" id="share-form">
                        {csrf_field(&viewer)}
                        <label for="share-range">"Range"</label>
                        <select id="share-range" name="range">
                            <option value="30d">"30 days"</option>
                            <option value="90d" selected>"90 days"</option>
                            <option value="1y">"1 year"</option>
                            <option value="all">"All time"</option>
                        </select>
                        <label for="share-denominate">"Currency"</label>
                        <select id="share-denominate" name="denominate">
                            <option value="usd" selected>"USD"</option>
                            <option value="sol">"SOL"</option>
                        </select>
                        <button type="submit" class="primary">"Create a share link"</button>
                    </form>
                    {if report.links.is_empty() {
                        view! { <p class="empty">"No live share links to this wallet."</p> }.into_any()
                    } else {
                        view! {
                            <table class="data" id="share-links-table">
                                <thead><tr><th scope="col">"Link"</th><th scope="col">"View"</th><th scope="col">"Created"</th><th scope="col">"Expires"</th><th scope="col"></th></tr></thead>
                                <tbody>
                                    {report.links.into_iter().map(|l| {
                                        let confirm = format!("{revoke_action}?id={}", l.id);
                                        view! {
                                            <tr id=format!("link-{}", l.id)>
                                                <td><code>{format!("/s/{}…", l.hint)}</code></td>
                                                <td>{format!("{}, {}", l.range, l.denominate)}</td>
                                                <td>{l.created.clone()}</td>
                                                <td>{l.expires.clone()}</td>
                                                <td>
                                                    <a class="button danger" rel="external" href=confirm>{format!("Revoke link {}…", l.hint)}</a>
                                                </td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                </section>
            </div>
        }
        .into_any()
    })
}
