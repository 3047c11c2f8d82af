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
    frame::{PortalPage, csrf_field, refused, with_portal},
    views::ReportView,
};

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
                            <p class="meta">"Pick the dates of the tax year (1 Jan to 31 Dec in the US, 6 Apr to 5 Apr in the UK) or any range; leave both empty for the whole history. Form 8949 covers one calendar year."</p>
                            <label for="tax-from">"From"</label>
                            <input type="date" id="tax-from" name="from"/>
                            <label for="tax-to">"To (inclusive)"</label>
                            <input type="date" id="tax-to" name="to"/>
                            <label for="tax-method">"Cost-basis method"</label>
                            <select id="tax-method" name="method">
                                {METHODS.iter().map(|(method, name)| view! {
                                    <option value=*method selected={*method == "fifo"}>{*name}</option>
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
