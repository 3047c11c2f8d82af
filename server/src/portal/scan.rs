//! The scan flow of a watched wallet, as thin adapters over the tools'
//! own functions: the offer (`GET /wallets/{address}/scan`) prices the scan
//! with `payments::quote` (the function behind `quote_wallet`), the form
//! (`POST /wallets/{address}/scan`) starts it with
//! `jobs::start_portal_scan` and answers a 303 to the progress view
//! (post/redirect/get: a reload shows the progress, never a second scan),
//! and the progress view (`GET /scans/{job_id}`) and its JSON twin
//! (`GET /scans/{job_id}/progress`, which `public/scan.js` polls) read
//! the job with `jobs::job_of_account`, the account's own jobs only.
//!
//! The portal takes no x402 payment (a browser form cannot sign one): with
//! payments off every scan is free and starts; with payments on a scan is
//! paid from the account's research credits when they cover the price
//! ("Scan now (uses 0.25 USD of credits)", debited once per quote by
//! `jobs::start_portal_scan` through `credits`, in the transaction that
//! queues the job), and otherwise the offer says the price, how to buy
//! credits, and how to pay with `scan_wallet`. The offer records the
//! account it priced the quote for; `jobs::start_portal_scan` itself
//! refuses a quote of another account or wallet.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use serde::Deserialize;
use tower_sessions::Session;

use super::{
    Parts,
    form::{CheckedForm, PortalForm},
    pages::account_page,
    render,
    sessions::SignedIn,
};
use crate::{
    accounts::{self, AccountId, watchlist::WatchedWallet},
    config::PaymentsMode,
    error::{AppError, Code},
    jobs::{self, JobView},
    payments::{self, QuoteWalletArgs, Scope},
    solana::WalletAddress,
    state::AppState,
    store::JobStatus,
    values::format,
};
use app::{
    frame::{Portal, PortalPage, Viewer},
    scan::{ScanOffer, ScanProgress, ScanState},
};

/// The watched wallet at `address`, or `not_found` in words.
async fn watched(
    state: &AppState,
    account: &AccountId,
    address: &str,
) -> Result<WatchedWallet, AppError> {
    let not_found = || AppError::not_found("your account does not watch this wallet");
    let wallet = WalletAddress::parse(address).map_err(|_| not_found())?;
    accounts::list_wallets(state.store(), account)
        .await?
        .into_iter()
        .find(|w| w.address == wallet)
        .ok_or_else(not_found)
}

/// The wallet as people name it: its label, or its address shortened.
fn name_of(label: &str, address: &str) -> String {
    if label.is_empty() {
        format::short_address(address)
    } else {
        label.to_owned()
    }
}

/// A wallet whose last scan completed is scanned for what is new since;
/// any other (never scanned, failed, partial) is scanned in full.
fn scope_for(wallet: &WatchedWallet) -> Scope {
    let completed = wallet
        .last_scan
        .as_ref()
        .is_some_and(|scan| JobStatus::parse(&scan.status) == Some(JobStatus::Completed));
    if completed {
        Scope::Incremental
    } else {
        Scope::Full
    }
}

/// Price the scan and describe it for the offer page: free with payments
/// off; with payments on, paid from the account's research credits when
/// the balance covers the price, else the price and how to buy credits.
async fn offer(
    state: &AppState,
    account: &AccountId,
    wallet: &WatchedWallet,
) -> Result<ScanOffer, AppError> {
    let scope = scope_for(wallet);
    let pw = state.paywall();
    let quote = payments::quote(
        &pw,
        QuoteWalletArgs {
            address: wallet.address.clone(),
            scope: Some(scope),
        },
    )
    .await?;
    // The form starts a scan only on a quote made for this account
    // (`jobs::start_portal_scan` checks it).
    state
        .store()
        .bind_quote_to_account(&quote.quote_id, account.as_str())
        .await?;
    let free = pw.mode == PaymentsMode::Off;
    let size = quote.signatures.map(|s| {
        let n = format::count(s.counted, "transaction", "transactions");
        if s.complete {
            format!("about {n}")
        } else {
            format!("more than {n}")
        }
    });
    let kind = match scope {
        Scope::Incremental => "The transactions since the last scan",
        _ => "A full scan of the wallet's history",
    };
    let what = match size {
        Some(size) => format!("{kind}: {size} (tier {}).", quote.tier),
        None => format!("{kind}."),
    };
    let price = format::decimal(
        rust_decimal::Decimal::new(
            i64::try_from(quote.price_usd.micros()).unwrap_or(i64::MAX),
            6,
        ),
        2,
    );
    let name = name_of(&wallet.label, wallet.address.as_str());
    if free {
        return Ok(ScanOffer {
            address: wallet.address.to_string(),
            name,
            quote_id: Some(quote.quote_id.clone()),
            price: "Free: payments are off on this service.".to_owned(),
            what,
            button: "Start the scan".to_owned(),
            ..ScanOffer::default()
        });
    }
    let balance = state.credits().balance(account).await?;
    let cost = i64::try_from(quote.price_usd.usdc_atomic()).unwrap_or(i64::MAX);
    let balance_text = format::decimal(rust_decimal::Decimal::new(balance, 6), 2);
    if balance >= cost {
        let after = format::decimal(rust_decimal::Decimal::new(balance - cost, 6), 2);
        return Ok(ScanOffer {
            address: wallet.address.to_string(),
            name,
            quote_id: Some(quote.quote_id.clone()),
            price: format!("{price} USD"),
            what,
            paid_note: Some(format!(
                "Paid from your research credits: {price} USD of your {balance_text} USD; \
                 {after} USD left after this scan."
            )),
            button: format!("Scan now (uses {price} USD of credits)"),
            ..ScanOffer::default()
        });
    }
    Ok(ScanOffer {
        address: wallet.address.to_string(),
        name,
        quote_id: None,
        price: format!("{price} USD"),
        what,
        paid_note: Some(format!(
            "Your research credits ({balance_text} USD) do not cover this scan. Buy credits on \
             the Credits page (top-ups in USDC with x402) and come back, or start it with the \
             scan_wallet tool (quote {}, valid fifteen minutes) from an MCP client, or \
             POST /v1/scans, paying {price} USDC with x402.",
            quote.quote_id
        )),
        buy_credits: true,
        ..ScanOffer::default()
    })
}

async fn offer_response(
    state: &AppState,
    viewer: Viewer,
    account: &AccountId,
    wallet: &WatchedWallet,
    status: StatusCode,
    error: Option<String>,
) -> Response {
    let mut view = match offer(state, account, wallet).await {
        Ok(view) => view,
        Err(err) => return err.into_response(),
    };
    view.error = error;
    let portal = Portal {
        viewer,
        page: PortalPage::ScanOffer(view),
    };
    let path = format!("/wallets/{}/scan", wallet.address);
    render(state, &path, status, portal).await
}

/// `GET /wallets/{address}/scan`: what a scan costs, and the form that
/// starts it; a scan already running is shown instead.
pub async fn offer_page(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
    Path(address): Path<String>,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let wallet = match watched(&state, &account, &address).await {
        Ok(wallet) => wallet,
        Err(err) => return crate::site::share::problem(&err),
    };
    if let Some(scan) = &wallet.last_scan
        && JobStatus::parse(&scan.status) == Some(JobStatus::Running)
        && scan.account_id.as_deref() == Some(account.as_str())
    {
        return Redirect::to(&format!("/scans/{}", scan.job_id)).into_response();
    }
    offer_response(&state, viewer, &account, &wallet, StatusCode::OK, None).await
}

#[derive(Deserialize)]
pub struct ScanRequest {
    #[serde(default)]
    quote_id: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for ScanRequest {
    fn page(address: Option<&str>) -> Result<String, AppError> {
        let address = address
            .and_then(|a| WalletAddress::parse(a).ok())
            .ok_or_else(|| AppError::not_found("your account does not watch this wallet"))?;
        Ok(format!("/wallets/{address}/scan"))
    }
}

/// `POST /wallets/{address}/scan`: start the scan the offer priced, then
/// 303 to its progress view. A scan of the wallet already running is
/// followed instead of refused; anything else that stops it is said on
/// the offer page again, with a fresh price.
pub async fn start(
    State(state): State<AppState>,
    Path(address): Path<String>,
    CheckedForm {
        viewer,
        account,
        form,
        ..
    }: CheckedForm<ScanRequest>,
) -> Response {
    let wallet = match watched(&state, &account, &address).await {
        Ok(wallet) => wallet,
        Err(err) => return crate::site::share::problem(&err),
    };
    let pw = state.paywall();
    let credits = state.credits();
    match jobs::start_portal_scan(&pw, &credits, &account, &wallet.address, &form.quote_id).await {
        Ok(job) => Redirect::to(&format!("/scans/{}", job.job_id)).into_response(),
        // A scan of the wallet is running: this account's own (another
        // form of it started first) is followed; one started elsewhere is
        // said, and nothing was debited for this form.
        Err(err) if err.code() == Code::JobAlreadyRunning => {
            match state.store().running_job_for(wallet.address.as_str()).await {
                Ok(Some(job)) if job.account_id.as_deref() == Some(account.as_str()) => {
                    Redirect::to(&format!("/scans/{}", job.id)).into_response()
                }
                Ok(_) => {
                    let why = "a scan of this wallet started elsewhere is running; its \
                               report shows here once it ends"
                        .to_owned();
                    offer_response(
                        &state,
                        viewer,
                        &account,
                        &wallet,
                        StatusCode::CONFLICT,
                        Some(why),
                    )
                    .await
                }
                Err(err) => AppError::from(err).into_response(),
            }
        }
        Err(err) if err.status().is_client_error() => {
            let why = err.message().to_owned();
            offer_response(&state, viewer, &account, &wallet, err.status(), Some(why)).await
        }
        Err(err) => err.into_response(),
    }
}

/// The progress of `job` as people read it: the bar from the job's own
/// counters (transactions read of those listed), the phase in words, and
/// the failure's reason.
pub fn progress_of(job: &JobView, name: String) -> ScanProgress {
    let p = &job.progress;
    let done = p.transactions_fetched + p.transactions_missing;
    let total = p.signatures_listed.max(done);
    let read = |n: i64| format::decimal(rust_decimal::Decimal::from(n), 0);
    let status = JobStatus::parse(&job.status);
    let state = match status {
        Some(JobStatus::Running) => ScanState::Running,
        Some(JobStatus::Completed | JobStatus::Partial) => ScanState::Done,
        Some(JobStatus::Failed | JobStatus::Cancelled) | None => ScanState::Failed,
    };
    let legs = format::count(
        u64::try_from(p.legs_written).unwrap_or(0),
        "ledger entry",
        "ledger entries",
    );
    let summary = match (state, p.phase.as_str()) {
        (ScanState::Running, "queued") => "Waiting for a worker to start the scan.".to_owned(),
        (ScanState::Running, _) if total == 0 => "Listing the wallet's transactions.".to_owned(),
        (ScanState::Running, _) => format!(
            "Reading transactions: {} of {} listed so far.",
            read(done),
            read(total)
        ),
        (ScanState::Done, _) if p.transactions_missing > 0 => format!(
            "Done, with gaps: {} transactions read, {} the Solana node did not return; {legs}.",
            read(p.transactions_fetched),
            read(p.transactions_missing)
        ),
        (ScanState::Done, _) => format!(
            "Done: {} transactions read; {legs}.",
            read(p.transactions_fetched)
        ),
        (ScanState::Failed, _) => format!(
            "Stopped after reading {} of {} transactions.",
            read(done),
            read(total)
        ),
    };
    let error = match state {
        ScanState::Failed => Some(match (&job.error, status) {
            (Some(reason), _) => format!("Why: {reason}."),
            (None, Some(JobStatus::Cancelled)) => "Why: the scan was cancelled.".to_owned(),
            (None, _) => "Why: the scan stopped without saying why.".to_owned(),
        }),
        _ => None,
    };
    ScanProgress {
        job_id: job.job_id.clone(),
        address: job.address.clone(),
        name,
        state,
        done,
        total,
        summary,
        error,
    }
}

async fn progress(
    state: &AppState,
    account: &AccountId,
    job_id: &str,
) -> Result<ScanProgress, AppError> {
    let job = jobs::job_of_account(&state.paywall(), account, job_id).await?;
    let label = accounts::list_wallets(state.store(), account)
        .await?
        .into_iter()
        .find(|w| w.address.as_str() == job.address)
        .map(|w| w.label)
        .unwrap_or_default();
    let name = name_of(&label, &job.address);
    let mut view = progress_of(&job, name);
    // A failed scan paid from credits had them given back
    // (credits::refund_failed_scan): the page says so.
    if view.state == ScanState::Failed
        && let Some(action) = state
            .store()
            .action(account.as_str(), &format!("scan:{}", job.quote.quote_id))
            .await?
        && crate::credits::ActionState::parse(&action.state)
            == Some(crate::credits::ActionState::Refunded)
    {
        let note = "The credits it used went back to your balance.";
        view.error = Some(match view.error.take() {
            Some(why) => format!("{why} {note}"),
            None => note.to_owned(),
        });
    }
    Ok(view)
}

/// `GET /scans/{job_id}`: the progress view of one of the account's scans.
pub async fn progress_page(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
    Path(job_id): Path<String>,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let view = match progress(&state, &account, &job_id).await {
        Ok(view) => view,
        Err(err) => return crate::site::share::problem(&err),
    };
    let portal = Portal {
        viewer,
        page: PortalPage::ScanProgress(view),
    };
    render(&state, &format!("/scans/{job_id}"), StatusCode::OK, portal).await
}

/// `GET /scans/{job_id}/progress`: the same progress as JSON, for
/// `public/scan.js`. A signed-out caller gets 401 (a script cannot
/// follow a sign-in redirect usefully).
pub async fn progress_json(
    State(state): State<AppState>,
    session: Session,
    Path(job_id): Path<String>,
) -> Response {
    let signed: Option<SignedIn> = match super::sessions::signed_in(&session).await {
        Ok(signed) => signed,
        Err(err) => return err.into_response(),
    };
    let Some(signed) = signed else {
        return AppError::new(Code::Unauthenticated, "sign in to follow this scan").into_response();
    };
    let account = match signed.account() {
        Ok(account) => account,
        Err(err) => return err.into_response(),
    };
    match progress(&state, &account, &job_id).await {
        Ok(view) => {
            let mut response = Json(view).into_response();
            response.headers_mut().insert(
                axum::http::header::CACHE_CONTROL,
                axum::http::HeaderValue::from_static("no-store"),
            );
            response
        }
        Err(err) => err.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::{JobProgressView, JobQuoteView, RpcCostView};

    fn job(status: &str, phase: &str, listed: i64, fetched: i64, error: Option<&str>) -> JobView {
        JobView {
            job_id: "job_01".to_owned(),
            status: status.to_owned(),
            address: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU".to_owned(),
            scope: "full".to_owned(),
            progress: JobProgressView {
                phase: phase.to_owned(),
                signatures_listed: listed,
                transactions_fetched: fetched,
                transactions_missing: 0,
                legs_written: 0,
            },
            rpc_cost: RpcCostView {
                calls: 0,
                credits: 0,
            },
            quote: JobQuoteView {
                quote_id: "q_01".to_owned(),
                tier: "small".to_owned(),
                price_usd: crate::values::Usd::default(),
            },
            created_at: String::new(),
            updated_at: String::new(),
            finished_at: None,
            error: error.map(str::to_owned),
            unknown_programs: Vec::new(),
            payment: None,
        }
    }

    #[test]
    fn a_running_scan_counts_what_it_read_of_what_it_listed() {
        let p = progress_of(&job("running", "scanning", 4200, 1350, None), "main".into());
        assert_eq!(p.state, ScanState::Running);
        assert_eq!((p.done, p.total), (1350, 4200));
        assert_eq!(
            p.summary,
            "Reading transactions: 1,350 of 4,200 listed so far."
        );
    }

    #[test]
    fn a_failed_scan_says_why_in_words() {
        let p = progress_of(
            &job(
                "failed",
                "scanning",
                10,
                3,
                Some("the Solana RPC endpoint failed; the scan can be run again"),
            ),
            "main".into(),
        );
        assert_eq!(p.state, ScanState::Failed);
        assert_eq!(
            p.error.as_deref(),
            Some("Why: the Solana RPC endpoint failed; the scan can be run again.")
        );
    }

    #[test]
    fn a_queued_scan_waits_for_a_worker() {
        let p = progress_of(&job("running", "queued", 0, 0, None), "main".into());
        assert_eq!(p.summary, "Waiting for a worker to start the scan.");
    }
}
