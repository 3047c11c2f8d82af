//! The scan flow of a watched wallet: the offer (`/wallets/{address}/scan`:
//! what a scan costs, from the same quote the tools use, and a "Start the
//! scan" form) and the progress view (`/scans/{job_id}`: a bar from the
//! job's own counters, the failure's reason in words, a retry).
//!
//! The progress page works without JavaScript: while the job runs it
//! carries a `<meta http-equiv=refresh>` inside `<noscript>`, so only a
//! browser without scripts reloads it. With scripts, `public/scan.js`
//! (a file, as the page's CSP allows no inline script) reads
//! `/scans/{job_id}/progress` (this same [`ScanProgress`] as JSON) every
//! two seconds and moves the bar; when the job ends it reloads the page
//! once to show the outcome.

use crate::frame::{PortalPage, csrf_field, refused, with_portal};
use leptos::prelude::*;
use leptos_meta::Title;
// The page data lives with the other views (the frame's `PortalPage`
// carries it), so the frame does not import this page.
pub use crate::views::{ScanOffer, ScanProgress, ScanState};

#[component]
pub fn ScanOfferPage() -> impl IntoView {
    with_portal(|portal| {
        let offer = match portal.page {
            PortalPage::ScanOffer(offer) => offer,
            PortalPage::Refused(message) => return refused(message),
            _ => ScanOffer::default(),
        };
        let viewer = portal.viewer;
        let action = format!("/wallets/{}/scan", offer.address);
        view! {
            <Title text="Ledger: scan a wallet"/>
            <h1>{format!("Scan {}", offer.name)}</h1>
            <section class="card" aria-labelledby="scan-price-heading">
                <h2 id="scan-price-heading">"Price"</h2>
                <p id="scan-price"><strong>{offer.price.clone()}</strong></p>
                <p id="scan-what">{offer.what.clone()}</p>
                {offer.error.map(|e| view! { <p class="error" role="alert" id="scan-error">{e}</p> })}
                {offer.paid_note.map(|n| view! { <p id="scan-paid-note">{n}</p> })}
                {offer.buy_credits.then(|| view! {
                    <p><a href="/credits" rel="external" class="button" id="scan-buy-credits">"Buy credits"</a></p>
                })}
                {offer.quote_id.map(|quote_id| view! {
                    <form method="post" action=action.clone() class="stack" id="scan-form">
                        {csrf_field(&viewer)}
                        <input type="hidden" name="quote_id" value=quote_id/>
                        <button type="submit" class="primary" id="scan-start">{offer.button.clone()}</button>
                    </form>
                })}
                <p><a href="/wallets" rel="external">"Back to your wallets"</a></p>
            </section>
        }
        .into_any()
    })
}

#[component]
pub fn ScanProgressPage() -> impl IntoView {
    with_portal(|portal| {
        let progress = match portal.page {
            PortalPage::ScanProgress(progress) => progress,
            PortalPage::Refused(message) => return refused(message),
            _ => ScanProgress::default(),
        };
        let running = progress.state == ScanState::Running;
        let report = format!("/wallets/{}", progress.address);
        let retry = format!("/wallets/{}/scan", progress.address);
        let heading = match progress.state {
            ScanState::Running => format!("Scanning {}", progress.name),
            ScanState::Done => format!("Scanned {}", progress.name),
            ScanState::Failed => format!("The scan of {} failed", progress.name),
        };
        view! {
            <Title text="Ledger: scan progress"/>
            <h1 id="scan-heading">{heading}</h1>
            <section class="card" aria-labelledby="scan-heading" id="scan-progress"
                data-job=progress.job_id.clone() data-state=if running { "running" } else { "ended" }>
                <progress id="scan-bar" max=progress.total.max(1).to_string()
                    value=if progress.state == ScanState::Done { progress.total.max(1) } else { progress.done }.to_string()
                    aria-describedby="scan-summary"></progress>
                <p id="scan-summary" role="status" aria-live="polite">{progress.summary.clone()}</p>
                {progress.error.map(|e| view! { <p class="error" role="alert" id="scan-reason">{e}</p> })}
                {match progress.state {
                    ScanState::Running => view! {
                        <noscript><meta http-equiv="refresh" content="5"/></noscript>
                        <p class="empty">"This page follows the scan; you can leave it and come back from your wallets."</p>
                    }.into_any(),
                    ScanState::Done => view! {
                        <p><a href=report rel="external" class="button primary" id="scan-report">"Open the report"</a></p>
                    }.into_any(),
                    ScanState::Failed => view! {
                        <form method="get" action=retry id="scan-retry">
                            <button type="submit" class="primary">"Retry"</button>
                        </form>
                    }.into_any(),
                }}
                <p><a href="/wallets" rel="external">"Back to your wallets"</a></p>
            </section>
            {running.then(|| view! { <script src="/scan.js" defer></script> })}
        }
        .into_any()
    })
}
