//! Jobs: scans requested by `scan_wallet`, and price backfills queued by a
//! read that found a large gap in a price series (`prices::series`), stored
//! in the database and run by workers (in-process under `ledger serve`, or
//! `ledger worker` processes sharing one PostgreSQL). Claiming with leases
//! is `store`'s; running a scan is [`scan`]; this module starts jobs, shows
//! them, and drives the claim-run-finish loop, dispatching on the job's kind.

mod context;
mod rescan;
pub mod scan;
pub mod staking;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    accounts::{AccountId, Principal},
    config::PaymentsMode,
    credits::{ActionId, ActionState, Charge, Credits, ScanDebit, args_hash},
    error::{AppError, Code},
    ids,
    payments::{self, Paywall, Presented, Resource, Scope},
    solana::WalletAddress,
    store::{ActionRow, Created, JobRecord, NewScanJob},
    values::{Usd, rfc3339},
};

/// The arguments of `scan_wallet` and the body of `POST /v1/scans`.
#[derive(Debug, Deserialize, JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanWalletArgs {
    /// The quote_id from quote_wallet (fixes the wallet and scope).
    pub quote_id: String,
    /// Base64 X-PAYMENT built for this quote's payment_required challenge (x402 exact scheme).
    #[serde(default)]
    pub payment: Option<String>,
    /// Receipt token of an earlier payment whose entitlement covers this scan.
    #[serde(default)]
    pub receipt: Option<String>,
}

/// The arguments of `get_job`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetJobArgs {
    /// The job id scan_wallet returned.
    pub job_id: String,
    /// Receipt of the payment the job was started on; without it only the
    /// job's own account (or an admin) can read it.
    #[serde(default)]
    pub receipt: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct JobProgressView {
    /// queued, scanning or done.
    pub phase: String,
    pub signatures_listed: i64,
    pub transactions_fetched: i64,
    /// Transactions the RPC node did not return or that could not be read.
    pub transactions_missing: i64,
    pub legs_written: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RpcCostView {
    /// HTTP round trips to the Solana RPC endpoint.
    pub calls: i64,
    /// JSON-RPC requests (what providers bill), batched or not.
    pub credits: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct JobQuoteView {
    pub quote_id: String,
    pub tier: String,
    pub price_usd: Usd,
}

/// A program a scan met that the ledger's registry does not know (and
/// that is not the runtime's own): the transactions that ran it were read
/// the conservative way, from balance changes only (docs/ledger.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnknownProgramView {
    pub program: String,
    /// How many of the transactions the job wrote ran it.
    pub transactions: i64,
}

/// A job as `get_job`, `scan_wallet` and their REST twins show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct JobView {
    pub job_id: String,
    /// running, completed, partial, failed or cancelled.
    pub status: String,
    pub address: String,
    pub scope: String,
    pub progress: JobProgressView,
    pub rpc_cost: RpcCostView,
    /// The quote the scan was bought against.
    pub quote: JobQuoteView,
    pub created_at: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Programs the scan met that the ledger does not decode (their
    /// transactions were read from balance changes only), most
    /// transactions first; empty when there were none.
    pub unknown_programs: Vec<UnknownProgramView>,
    /// The payment this call settled (or replayed), with its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<crate::payments::PaymentBlock>,
}

async fn view(pw: &Paywall<'_>, job: JobRecord) -> Result<JobView, AppError> {
    let quote = pw.store.quote(&job.quote_id).await?;
    let (tier, price) = quote
        .map(|q| {
            (
                q.tier,
                Usd::from_micros(u64::try_from(q.price_micros).unwrap_or(0)),
            )
        })
        .unwrap_or_default();
    let unknown_programs = pw
        .store
        .unknown_programs(&job.id)
        .await?
        .into_iter()
        .map(|(program, transactions)| UnknownProgramView {
            program,
            transactions,
        })
        .collect();
    Ok(JobView {
        job_id: job.id,
        status: job.status,
        address: job.address,
        scope: job.scope,
        progress: JobProgressView {
            phase: job.phase,
            signatures_listed: job.signatures_listed,
            transactions_fetched: job.transactions_fetched,
            transactions_missing: job.transactions_missing,
            legs_written: job.legs_written,
        },
        rpc_cost: RpcCostView {
            calls: job.rpc_calls,
            credits: job.rpc_credits,
        },
        quote: JobQuoteView {
            quote_id: job.quote_id,
            tier,
            price_usd: price,
        },
        created_at: rfc3339(job.created_at),
        updated_at: rfc3339(job.updated_at),
        finished_at: job.finished_at.map(rfc3339),
        error: job.error,
        unknown_programs,
        payment: None,
    })
}

/// `scan_wallet`: start the scan a live quote priced.
pub async fn start_scan(
    pw: &Paywall<'_>,
    principal: &Principal,
    args: ScanWalletArgs,
    presented: &Presented,
) -> Result<JobView, AppError> {
    principal.permit(crate::accounts::Action::StartScan)?;
    let quote = pw.store.quote(args.quote_id.trim()).await?.ok_or_else(|| {
        AppError::new(
            Code::QuoteNotFound,
            "no such quote; get one with quote_wallet",
        )
    })?;
    let now = pw.now_ms();
    let presented = Presented::merge(
        args.payment.as_deref(),
        None,
        args.receipt.as_deref(),
        presented,
    );
    // A payment taken before answers as a replay (the job it started),
    // whatever the quote's age or the wallet's running scan.
    let replay = match &presented.payment {
        Some(payment) if pw.mode != PaymentsMode::Off => {
            payments::settle::is_known(pw, payment).await?
        }
        _ => false,
    };
    // A quote the portal's offer page made for an account is paid from
    // that account's research credits there (`start_portal_scan`), never
    // here: one quote, one way to pay it, so it cannot buy two scans.
    if !replay && pw.store.quote_account(&quote.id).await?.is_some() {
        return Err(AppError::new(
            Code::WrongQuote,
            "this quote was made for a portal scan paid with research credits; quote the wallet \
             with quote_wallet and pass that quote_id",
        ));
    }
    if quote.expires_at <= now && !replay {
        return Err(AppError::new(
            Code::QuoteExpired,
            "the quote expired; quote the wallet again (a quote lives fifteen minutes)",
        ));
    }
    // A quote of anything but a scan (a read, a credit top-up, whose
    // scope is no scan scope at all) is the guide's `wrong_quote`: the
    // caller passed a real quote for another purpose.
    let scope = match Scope::parse(&quote.scope) {
        Some(scope) if scope.is_scan() => scope,
        _ => {
            return Err(AppError::new(
                Code::WrongQuote,
                "this quote prices no scan (a read or a credit top-up); quote the wallet with a \
                 scan scope (full, preview, incremental, refresh) and pass that quote_id",
            ));
        }
    };
    // Refuse what cannot start before anything is charged.
    if !replay && let Some(job) = pw.store.running_job_for(&quote.address).await? {
        return Err(already_running(&job));
    }
    let grant = payments::authorize_scan(
        pw,
        principal,
        &quote,
        &presented,
        Resource {
            path: crate::routes::SCANS.path,
            tool: "scan_wallet",
        },
    )
    .await?;
    if let Some(job_id) = &grant.existing_job {
        return answer_existing(pw, job_id, grant.payment).await;
    }
    let stop_at = match scope {
        Scope::Incremental => pw.store.newest_known_signature(&quote.address).await?,
        _ => None,
    };
    let id = ids::new_id("job_", now);
    if let Some((payment_id, previous)) = &grant.entitlement
        && !pw
            .store
            .consume_entitlement(payment_id, previous.as_deref(), &id)
            .await?
    {
        // A concurrent presentation of the same payment spent it first:
        // answer the job it started.
        let spent = pw.store.payment(payment_id).await?;
        return match (spent.and_then(|p| p.consumed_job_id), grant.payment) {
            (Some(job_id), Some(block)) => answer_existing(pw, &job_id, Some(block)).await,
            _ => Err(AppError::new(
                Code::EntitlementConsumed,
                "this receipt's scan already ran; the receipt still reads the wallet",
            )),
        };
    }
    match pw
        .store
        .create_scan_job(&NewScanJob {
            id: &id,
            address: &quote.address,
            scope: &quote.scope,
            quote_id: &quote.id,
            stop_at: stop_at.as_deref(),
            account_id: principal.account().map(AccountId::as_str),
            now,
        })
        .await?
    {
        Created::Job(job) => {
            tracing::info!(job = %job.id, address = %job.address, scope = %job.scope, "scan queued");
            let mut view = view(pw, job).await?;
            view.payment = grant.payment;
            Ok(view)
        }
        Created::AlreadyRunning(job) => {
            // The entitlement stays unspent: its receipt starts the scan later.
            if let Some((payment_id, _)) = &grant.entitlement {
                pw.store.release_entitlement(payment_id, &id).await?;
            }
            let mut err = already_running(&job);
            if let Some(block) = grant.payment {
                err = err.with("payment", serde_json::json!(block));
            }
            Err(err)
        }
    }
}

/// What a portal scan's debit of research credits is recorded under: the
/// movement's tool, and the action id made of the quote's
/// (`scan:q_…`), so one quote is debited once however often its form is
/// sent.
pub const CREDITS_TOOL: &str = "scan_wallet";

/// How old a `pending` portal scan debit must be before a maintenance
/// pass settles it (`credits::settle_stale_scan_debits`): ten minutes,
/// far longer than the earlier version took between its debit and its
/// job, so a debit still being worked on by an older instance (a rolling
/// deploy) is left alone.
pub const STALE_SCAN_DEBIT_MS: i64 = 10 * 60 * 1000;

/// The scan a signed-in account starts from the portal (`Scan now` on
/// `/wallets`), on a quote [`payments::quote`] made for the page. The
/// portal takes no x402 payment (a browser form cannot sign one). With
/// payments off every scan is free. With payments on the scan is paid
/// from the account's research credits through [`crate::credits`] (no
/// other money path).
///
/// The checks, in order, each refusing before any money moves:
/// 1. the quote exists (`quote_not_found`) and prices `wallet`
///    (`wrong_quote`): this function checks it, not its caller;
/// 2. this account already paid this quote (its action `scan:{quote}`,
///    keyed by the account): that scan, answered whatever the quote's age
///    (as `start_scan` answers a known x402 payment before the expiry
///    check), so a reload after expiry never charges again; a quote whose
///    debit was refunded, or is still being settled, is `action_conflict`
///    in words of its own;
/// 3. the quote was made for `account` by its offer page (`wrong_quote`;
///    a quote bound to no account, as `quote_wallet` makes them, too);
/// 4. the quote is live (`quote_expired`) and prices a scan
///    (`wrong_quote`); no scan of the wallet runs (`job_already_running`).
///
/// Then [`Credits::pay_scan`] records the action `scan:{quote}`, takes the
/// quote's price (a `charge` movement, never below zero,
/// `insufficient_credit` when the balance does not cover it) and creates
/// the job in ONE database transaction: a crash or error anywhere in it
/// keeps no money and starts no scan, and a scan that cannot start (one
/// of the wallet began meanwhile) rolls the charge back. The job carries
/// the account, so [`job_of_account`] reads it back for the progress page.
pub async fn start_portal_scan(
    pw: &Paywall<'_>,
    credits: &Credits<'_>,
    account: &AccountId,
    wallet: &WalletAddress,
    quote_id: &str,
) -> Result<JobView, AppError> {
    let quote = pw.store.quote(quote_id.trim()).await?.ok_or_else(|| {
        AppError::new(
            Code::QuoteNotFound,
            "this price is no longer known; here is a new one",
        )
    })?;
    let not_ours = || {
        tracing::warn!(account = account.as_str(), quote = %quote.id, wallet = %wallet, "a portal scan form named a quote not made for this wallet and account");
        AppError::new(
            Code::WrongQuote,
            "this price was not made for this wallet on your account; here is a new one",
        )
    };
    if quote.address != wallet.as_str() {
        return Err(not_ours());
    }
    // This account's own action on the quote proves it paid it (the key
    // holds the account): answered before the binding check, so a debit
    // an earlier version took on a quote it never bound is still answered.
    let action_id = ActionId::parse(&format!("scan:{}", quote.id))
        .map_err(|why| AppError::internal("a scan's credit action id", why))?;
    if let Some(row) = pw
        .store
        .action(account.as_str(), action_id.as_str())
        .await?
    {
        return answer_paid(pw, account, row).await;
    }
    let made_for = pw.store.quote_account(&quote.id).await?;
    if made_for.as_deref() != Some(account.as_str()) {
        return Err(not_ours());
    }
    let now = pw.now_ms();
    if quote.expires_at <= now {
        return Err(AppError::new(
            Code::QuoteExpired,
            "the price shown expired (a price holds fifteen minutes); here is a new one",
        ));
    }
    let scope = match Scope::parse(&quote.scope) {
        Some(scope) if scope.is_scan() => scope,
        _ => {
            return Err(AppError::new(
                Code::WrongQuote,
                "this price is not a scan's; here is a new one",
            ));
        }
    };
    if let Some(job) = pw.store.running_job_for(&quote.address).await? {
        return Err(already_running(&job));
    }
    let stop_at = match scope {
        Scope::Incremental => pw.store.newest_known_signature(&quote.address).await?,
        _ => None,
    };
    let id = ids::new_id("job_", now);
    let new_job = NewScanJob {
        id: &id,
        address: &quote.address,
        scope: &quote.scope,
        quote_id: &quote.id,
        stop_at: stop_at.as_deref(),
        account_id: Some(account.as_str()),
        now,
    };
    if pw.mode == PaymentsMode::Off {
        return match pw.store.create_scan_job(&new_job).await? {
            Created::Job(job) => {
                tracing::info!(job = %job.id, address = %job.address, scope = %job.scope, paid = false, "portal scan queued");
                view(pw, job).await
            }
            Created::AlreadyRunning(job) => Err(already_running(&job)),
        };
    }
    // A stored price below zero is no price: never a free scan.
    let micros = u64::try_from(quote.price_micros)
        .map_err(|_| AppError::internal("a quote's price", "below zero"))?;
    let cost = Usd::from_micros(micros);
    let charge = Charge {
        account,
        action_id: &action_id,
        tool: CREDITS_TOOL,
        args_hash: args_hash(&serde_json::json!({ "quote_id": quote.id })),
        cost,
        note: format!(
            "scan of {} ({} USD, quote {})",
            crate::values::format::short_address(&quote.address),
            cost,
            quote.id
        ),
    };
    match credits.pay_scan(&charge, new_job).await? {
        ScanDebit::Started(job) => {
            tracing::info!(job = %job.id, address = %job.address, scope = %job.scope, paid = true, "portal scan queued");
            view(pw, job).await
        }
        // The same form sent twice at once: the other one paid first.
        ScanDebit::Exists(row) => answer_paid(pw, account, row).await,
        ScanDebit::AlreadyRunning(job) => Err(already_running(&job)),
    }
}

/// A quote this account's credits were debited for before: the scan it
/// paid, or why there is none, in words.
async fn answer_paid(
    pw: &Paywall<'_>,
    account: &AccountId,
    row: ActionRow,
) -> Result<JobView, AppError> {
    if row.tool != CREDITS_TOOL {
        return Err(AppError::new(
            Code::ActionConflict,
            "this price cannot start a scan on your account; here is a new one",
        ));
    }
    match ActionState::parse(&row.state) {
        Some(ActionState::Done) => {
            let job_id = row
                .result
                .as_deref()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
                .and_then(|result| {
                    result
                        .get("job_id")
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned)
                })
                .ok_or_else(|| AppError::internal("a paid scan's result", "no job_id"))?;
            job_of_account(pw, account, &job_id).await
        }
        Some(ActionState::Refunded) => Err(AppError::new(
            Code::ActionConflict,
            "the scan this price paid for did not run to its end, and its cost went back to your \
             credits; here is a new price",
        )),
        Some(ActionState::Pending) => Err(AppError::new(
            Code::ActionConflict,
            "the scan this price paid for is still being set up; reload this page in a few \
             minutes to see it, or its cost back in your credits",
        )),
        None => Err(AppError::internal("a paid scan's state", row.state)),
    }
}

/// A job as its own account reads it in the portal: `not_found` for any
/// other job (an id alone reads nothing there, payments off or not).
pub async fn job_of_account(
    pw: &Paywall<'_>,
    account: &AccountId,
    job_id: &str,
) -> Result<JobView, AppError> {
    let not_found = || AppError::not_found("no such scan");
    if !ids::is_id("job_", job_id.trim()) {
        return Err(not_found());
    }
    let job = pw.store.job(job_id.trim()).await?.ok_or_else(not_found)?;
    if job.account_id.as_deref() != Some(account.as_str()) {
        return Err(not_found());
    }
    view(pw, job).await
}

fn already_running(job: &JobRecord) -> AppError {
    AppError::new(
        Code::JobAlreadyRunning,
        format!(
            "a scan of this wallet is already running: poll get_job job_id={}",
            job.id
        ),
    )
    .with("job", serde_json::json!(job.id))
}

async fn answer_existing(
    pw: &Paywall<'_>,
    job_id: &str,
    payment: Option<crate::payments::PaymentBlock>,
) -> Result<JobView, AppError> {
    let job = pw
        .store
        .job(job_id)
        .await?
        .ok_or_else(|| AppError::internal("paid job", job_id))?;
    let mut view = view(pw, job).await?;
    view.payment = payment;
    Ok(view)
}

/// `get_job`: read a job. Scoped: today anyone holding the job id (an
/// unguessable capability) reads it; with accounts and receipts, only the
/// job's account, an admin, or the scan's receipt.
pub async fn get_job(
    pw: &Paywall<'_>,
    principal: &Principal,
    args: GetJobArgs,
    presented: &Presented,
) -> Result<JobView, AppError> {
    let not_found = || AppError::not_found("no such job");
    if !ids::is_id("job_", args.job_id.trim()) {
        return Err(not_found());
    }
    let job = pw
        .store
        .job(args.job_id.trim())
        .await?
        .ok_or_else(not_found)?;
    let receipt = args.receipt.as_deref().or(presented.receipt.as_deref());
    if !pw.access().job_read(principal, &job, receipt).await? {
        return Err(not_found());
    }
    view(pw, job).await
}

/// What running jobs takes: the store, the RPC client a scan reads the
/// chain with, the price sources a backfill asks, the clock, and the
/// worker and Solana settings.
#[derive(Clone, Copy)]
pub struct Runner<'a> {
    pub store: &'a crate::store::Store,
    pub rpc: &'a crate::solana::RpcClient,
    pub prices: &'a crate::prices::Prices,
    pub clock: &'a dyn crate::clock::Clock,
    pub worker: &'a crate::config::WorkerConfig,
    pub solana: &'a crate::config::SolanaConfig,
    pub preview_signatures: usize,
}

impl Runner<'_> {
    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}

/// The worker's side: claim the next job and run it to its end. Returns
/// whether a job was found.
pub async fn run_next(
    run: &Runner<'_>,
    owner: &str,
    should_stop: &(dyn Fn() -> bool + Send + Sync),
) -> Result<bool, crate::store::StoreError> {
    let settings = scan::ScanSettings {
        lease_ms: i64::try_from(run.worker.lease_secs * 1000).unwrap_or(60_000),
        page_size: run.solana.signatures_page_size,
        fetch_batch: run.solana.batch_size,
        preview_signatures: run.preview_signatures,
    };
    let Some(job) = run
        .store
        .claim_job(owner, run.now_ms(), settings.lease_ms)
        .await?
    else {
        return Ok(false);
    };
    if job.kind == crate::store::BACKFILL_KIND {
        return run_backfill(run, owner, &job, settings.lease_ms).await;
    }
    tracing::info!(job = %job.id, attempt = job.attempts, "scan claimed");
    let now = || run.now_ms();
    let ctx = scan::ScanContext {
        store: run.store,
        rpc: run.rpc,
        settings: &settings,
        owner,
        now: &now,
        should_stop,
    };
    let (status, error) = match scan::run(&ctx, &job).await {
        Ok(scan::Outcome::Completed) => ("completed", None),
        Ok(scan::Outcome::Partial {
            missing,
            missing_epochs,
            unreconciled,
            stake_listing_refused,
        }) => (
            "partial",
            Some(partial_summary(
                missing,
                &missing_epochs,
                &unreconciled,
                stake_listing_refused,
            )),
        ),
        Err(scan::ScanError::Stopped) => {
            // A safe point: hand the job back for the next worker.
            run.store.release_job(&job.id, owner).await?;
            tracing::info!(job = %job.id, "scan paused for shutdown");
            return Ok(true);
        }
        Err(scan::ScanError::LeaseLost) => {
            tracing::warn!(job = %job.id, "lease lost; another worker continues");
            return Ok(true);
        }
        Err(scan::ScanError::Rpc(e)) => {
            tracing::warn!(job = %job.id, error = %e, "scan failed on RPC");
            (
                "failed",
                Some("the Solana RPC endpoint failed; the scan can be run again".to_owned()),
            )
        }
        Err(scan::ScanError::Store(e)) => return Err(e),
        Err(e @ scan::ScanError::BadScope(_)) => ("failed", Some(e.to_string())),
    };
    let finished = run
        .store
        .finish_job(&job.id, owner, status, error.as_deref(), run.now_ms())
        .await?;
    tracing::info!(job = %job.id, status, "scan ended");
    // A failed scan delivered nothing: a portal scan paid from credits
    // gets them back (once; the maintenance pass catches a stop between
    // these two steps).
    if finished
        && status == "failed"
        && let Some(account) = &job.account_id
    {
        crate::credits::refund_failed_scan(
            run.store,
            CREDITS_TOOL,
            account,
            &job.quote_id,
            &job.id,
            run.now_ms(),
        )
        .await?;
    }
    Ok(true)
}

/// What a partial scan says it lacks: transactions, epochs whose staking
/// rewards the provider would not serve, stake accounts that do not
/// reconcile (each named with its difference), and the current stake
/// accounts the provider would not list.
fn partial_summary(
    missing: i64,
    missing_epochs: &[u64],
    unreconciled: &[staking::Unreconciled],
    stake_listing_refused: bool,
) -> String {
    let mut parts = Vec::new();
    if missing > 0
        || (missing_epochs.is_empty() && unreconciled.is_empty() && !stake_listing_refused)
    {
        parts.push(format!(
            "{missing} transactions could not be fetched or read"
        ));
    }
    if !missing_epochs.is_empty() {
        parts.push(format!(
            "staking rewards of epochs {} were not served by the RPC provider",
            staking::epoch_ranges(missing_epochs)
        ));
    }
    if !unreconciled.is_empty() {
        parts.push(staking::unreconciled_note(unreconciled));
    }
    if stake_listing_refused {
        parts.push(staking::LISTING_REFUSED_NOTE.to_owned());
    }
    parts.join("; ")
}

/// Run a claimed price backfill (see `prices::series`) to its end. A price
/// source that fails ends the job failed; reading the series again starts
/// a fresh one for what is still missing.
async fn run_backfill(
    run: &Runner<'_>,
    owner: &str,
    job: &JobRecord,
    lease_ms: i64,
) -> Result<bool, crate::store::StoreError> {
    use crate::prices::{PriceError, series};
    tracing::info!(job = %job.id, series = %job.address, attempt = job.attempts, "price backfill claimed");
    let now = || run.now_ms();
    let outcome = series::run_backfill(run.store, run.prices, job, owner, &now, lease_ms).await;
    let (status, error) = match outcome {
        Ok(series::BackfillOutcome::Completed) => ("completed", None),
        Ok(series::BackfillOutcome::LeaseLost) => {
            tracing::warn!(job = %job.id, "lease lost; another worker continues");
            return Ok(true);
        }
        Ok(series::BackfillOutcome::BadSpec) => (
            "failed",
            Some("the backfill names no series this server prices".to_owned()),
        ),
        Err(PriceError::Store(e)) => return Err(e),
        Err(e) => {
            tracing::warn!(job = %job.id, error = %e, "price backfill failed");
            (
                "failed",
                Some("the price source failed; read the series again to retry".to_owned()),
            )
        }
    };
    run.store
        .finish_job(&job.id, owner, status, error.as_deref(), run.now_ms())
        .await?;
    tracing::info!(job = %job.id, status, "price backfill ended");
    Ok(true)
}

/// How many jobs of each kind wait for a worker and run now, for the
/// metrics scrape. Both kinds are always answered (zero when none), so a
/// drained queue reads zero rather than its last count.
pub async fn counts(
    store: &crate::store::Store,
    now_ms: i64,
) -> Result<Vec<crate::telemetry::metrics::JobCount>, crate::store::StoreError> {
    let rows = store.job_counts(now_ms).await?;
    let of = |kind: &str| {
        rows.iter()
            .find(|(k, _, _)| k == kind)
            .map_or((0, 0), |(_, queued, running)| (*queued, *running))
    };
    Ok([
        ("scan", "scan"),
        (crate::store::BACKFILL_KIND, "price_backfill"),
    ]
    .into_iter()
    .map(|(stored, label)| {
        let (queued, running) = of(stored);
        crate::telemetry::metrics::JobCount {
            kind: label,
            queued,
            running,
        }
    })
    .collect())
}
