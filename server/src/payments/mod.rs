//! Payments: what things cost (quotes, prices in USD micro-units), the
//! paywall every paid tool passes, x402 challenges, verification,
//! settlement and receipts. Nothing here knows of HTTP: the surfaces hand
//! in what the caller presented ([`Presented`]) and render what comes back
//! (a [`PaymentBlock`] on success, a `payment_required` [`AppError`]
//! carrying the challenge otherwise). docs/payments.md tells the whole story.

pub mod quote;
pub mod receipt;
pub mod refusal;
pub mod settle;
pub mod verify;
pub mod view;
pub mod x402;

pub use crate::values::Usd;
pub use quote::Entitlement;
pub use quote::{Quote, Scope};
pub use receipt::Receipt;
pub use refusal::{Refusal, WrongQuote};
pub use settle::{PaymentStatus, Runtime};
pub use view::{PaymentsModeView, PaymentsView};
pub use x402::PaymentBlock;

use serde_json::json;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    access::Access,
    accounts::Principal,
    clock::Clock,
    config::{PaymentsMode, PricingConfig, X402Config},
    error::{AppError, Code},
    solana::{RpcClient, WalletAddress},
    store::{JobRecord, JobStatus, PaymentRecord, QuoteRecord, Store},
};

/// What pricing, challenging and settling need, and nothing more: the
/// store, the Solana RPC client, our fee payer and treasury, the payments
/// settings, the public URL the challenge names, and the clock. The
/// surface hands one to each call (`AppState::paywall`).
#[derive(Clone, Copy)]
pub struct Paywall<'a> {
    pub store: &'a Store,
    pub rpc: &'a RpcClient,
    pub runtime: &'a Runtime,
    pub mode: PaymentsMode,
    pub x402: &'a X402Config,
    pub pricing: &'a PricingConfig,
    pub public_url: &'a str,
    pub clock: &'a dyn Clock,
    /// Counts settled payments.
    pub metrics: &'a crate::telemetry::Metrics,
}

impl Paywall<'_> {
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Who may read what, as this paywall's store and settings decide it.
    pub fn access(&self) -> Access<'_> {
        Access {
            store: self.store,
            payments_off: self.mode == PaymentsMode::Off,
            now_ms: self.now_ms(),
        }
    }
}

/// The arguments of `quote_wallet` and the body of `POST /v1/quotes`.
#[derive(Debug, Deserialize, JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteWalletArgs {
    /// The wallet's base58 public key.
    #[schema(value_type = String)]
    pub address: WalletAddress,
    /// preview | full | incremental | refresh | read; default full.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    #[schemars(extend("default" = "full"))]
    pub scope: Option<Scope>,
}

/// A stored word this server never writes (a quote's scope, a payment's
/// entitlement or status): an internal error, never read as a default.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{column} holds {text:?}, which this server never writes")]
pub struct UnknownText {
    pub column: &'static str,
    pub text: String,
}

impl UnknownText {
    pub fn new(column: &'static str, text: &str) -> Self {
        Self {
            column,
            text: text.to_owned(),
        }
    }
}

impl From<UnknownText> for AppError {
    fn from(err: UnknownText) -> Self {
        AppError::internal("stored payment text", err)
    }
}

impl From<quote::QuoteError> for AppError {
    fn from(err: quote::QuoteError) -> Self {
        match err {
            quote::QuoteError::Rpc(e) => {
                tracing::warn!(error = %e, "quote: RPC failed");
                AppError::new(
                    Code::Unavailable,
                    "the Solana RPC endpoint did not answer while sizing the wallet; try again shortly",
                )
            }
            quote::QuoteError::Store(e) => AppError::internal("quote store", e),
            quote::QuoteError::NotPriced(scope) => {
                AppError::invalid_params(format!("scope: quote_wallet prices no {scope} quote"))
            }
        }
    }
}

/// `quote_wallet` for the MCP tool and the REST route alike.
pub async fn quote(pw: &Paywall<'_>, args: QuoteWalletArgs) -> Result<Quote, AppError> {
    let address = args.address;
    let quoting = quote::Quoting {
        rpc: pw.rpc,
        store: pw.store,
        pricing: pw.pricing,
        now_ms: pw.now_ms(),
    };
    Ok(quote::quote_wallet(quoting, address, args.scope.unwrap_or_default()).await?)
}

/// The payment arguments every paid tool takes, flattened into its
/// arguments: a payment built for a challenge (with the quote it names),
/// or the receipt of an earlier one. On REST a GET carries only the
/// receipt (a payment travels in the `X-PAYMENT` header).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct PayArgs {
    /// Base64 X-PAYMENT built for the payment_required challenge (x402
    /// exact scheme); name its quote in quote_id.
    #[serde(default)]
    pub payment: Option<String>,
    /// The quoteId of the challenge the payment was built for
    /// (structuredContent.x402.accepts[0].extra.quoteId).
    #[serde(default)]
    pub quote_id: Option<String>,
    /// Receipt token of the payment that covers reads of this wallet.
    #[serde(default)]
    pub receipt: Option<String>,
}

impl PayArgs {
    /// What the call presents: these arguments, falling back to what the
    /// request's headers carried.
    pub fn presented(&self, headers: &Presented) -> Presented {
        Presented::merge(
            self.payment.as_deref(),
            self.quote_id.as_deref(),
            self.receipt.as_deref(),
            headers,
        )
    }
}

/// What a caller presented to pay for a call: the tool's `payment`,
/// `quote_id` and `receipt` arguments, or the `X-PAYMENT` /
/// `PAYMENT-SIGNATURE` and `X-Receipt` headers of the one request that
/// carried the call. Arguments win over headers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Presented {
    pub payment: Option<String>,
    pub quote_id: Option<String>,
    pub receipt: Option<String>,
}

impl Presented {
    /// The tool's arguments, falling back to what the request's headers
    /// carried. Blank values count as absent.
    pub fn merge(
        payment: Option<&str>,
        quote_id: Option<&str>,
        receipt: Option<&str>,
        headers: &Presented,
    ) -> Self {
        let pick = |arg: Option<&str>, header: &Option<String>| {
            arg.or(header.as_deref())
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        Self {
            payment: pick(payment, &headers.payment),
            quote_id: pick(quote_id, &headers.quote_id),
            receipt: pick(receipt, &headers.receipt),
        }
    }
}

/// The challenge when payments are switched on but cannot be taken.
pub fn not_configured() -> AppError {
    let message = "payments are not configured on this server (no treasury or fee payer); nothing can be paid";
    AppError::new(Code::PaymentRequired, message)
        .with("status", json!("payments_not_configured"))
        .with("error", json!("payments_not_configured"))
        .with(
            "x402",
            json!({"x402Version": 1, "error": "payments_not_configured", "accepts": []}),
        )
        .with_text(format!("payment_required: {message}."))
}

/// Where a challenge is for: the REST route a raw x402 client pays and the
/// MCP tool the text names.
#[derive(Clone, Copy, Debug)]
pub struct Resource<'a> {
    pub path: &'a str,
    pub tool: &'a str,
}

/// What paying `quote` takes; `None` when payments cannot be taken.
fn requirement(
    pw: &Paywall<'_>,
    quote: &QuoteRecord,
    resource: &Resource<'_>,
) -> Result<Option<x402::Requirement>, UnknownText> {
    let Some((fee_payer, treasury)) = pw.runtime.ready() else {
        return Ok(None);
    };
    use solana_signer::Signer;
    let config = pw.x402;
    let scope = Scope::of_column(&quote.scope)?;
    let what = match scope.entitlement() {
        // A research-credit top-up names the account it credits, not a wallet.
        Entitlement::TopUp => None,
        Entitlement::Read => Some("read".to_owned()),
        Entitlement::Scan => Some(format!("{scope} scan")),
    };
    let description = match what {
        None => format!(
            "Research credits: a top-up of {} USD for account {}. Credited once the payment settles; no refunds.",
            Usd::from_micros(u64::try_from(quote.price_micros).unwrap_or(0)),
            x402::short(&quote.address)
        ),
        Some(what) => format!(
            "Wallet reporting: {what} of {}. No refunds; a scan that fails on our side re-runs free with its receipt.",
            x402::short(&quote.address)
        ),
    };
    Ok(Some(x402::Requirement {
        network: config.network.clone(),
        asset: config.asset.clone(),
        decimals: config.asset_decimals,
        amount: settle::atomic_amount(quote.price_micros, config.asset_decimals),
        pay_to: treasury.to_string(),
        fee_payer: fee_payer.pubkey().to_string(),
        max_timeout_secs: config.max_timeout_secs,
        resource: resource.path.to_owned(),
        description,
        quote_id: quote.id.clone(),
    }))
}

/// `payment_required` with the challenge for `quote`; `refused` names why
/// a presented payment or receipt was not accepted.
pub fn challenge(
    pw: &Paywall<'_>,
    quote: &QuoteRecord,
    resource: &Resource<'_>,
    refused: Option<&Refusal>,
) -> AppError {
    let req = match requirement(pw, quote, resource) {
        Ok(req) => req,
        Err(unknown) => return unknown.into(),
    };
    let Some(req) = req else {
        let mut err = not_configured();
        if let Some(refusal) = refused {
            err = err.with("refused", json!(refusal.code()));
        }
        return err;
    };
    let price = Usd::from_micros(u64::try_from(quote.price_micros).unwrap_or(0));
    let error = refused.map(Refusal::code);
    let message = match refused {
        Some(refusal) => {
            let (code, why) = (refusal.code(), refusal.why());
            // `why` says what was wrong, never what to do: this sentence
            // says that once (nothing charged, pay the fresh challenge).
            format!(
                "payment refused ({code}): {why}; nothing was charged. Pay the fresh challenge."
            )
        }
        None => "payment required".to_owned(),
    };
    let mut text = x402::challenge_text(&req, resource.tool, &price.to_string());
    if let Some(refusal) = refused {
        text = format!(
            "payment_required: the payment was refused ({}: {}); nothing was charged. {}",
            refusal.code(),
            refusal.why(),
            text.trim_start_matches("payment_required: ")
        );
    }
    let mut err = AppError::new(Code::PaymentRequired, message)
        .with("x402", req.body(error))
        .with_text(text)
        .with_header("PAYMENT-REQUIRED", req.v2_header(pw.public_url, error));
    if let Some(error) = error {
        err = err.with("error", json!(error));
    }
    err
}

async fn fresh_read_quote(
    pw: &Paywall<'_>,
    wallet: &WalletAddress,
) -> Result<QuoteRecord, AppError> {
    let q = quote(
        pw,
        QuoteWalletArgs {
            address: wallet.clone(),
            scope: Some(Scope::Read),
        },
    )
    .await?;
    pw.store
        .quote(&q.quote_id)
        .await?
        .ok_or_else(|| AppError::internal("fresh quote", "vanished"))
}

/// Settle `payment` for `quote`, whatever it buys (a read, a scan, a
/// top-up): the settled payment, or why it was refused (answered with a
/// fresh challenge), or a failure that is nobody's fault (answered as it
/// is). The one place a settlement's outcome becomes a refusal.
pub async fn settle_or_refuse(
    pw: &Paywall<'_>,
    payment: &str,
    quote: &QuoteRecord,
) -> Result<Result<settle::Settled, Refusal>, AppError> {
    match settle::settle(pw, payment, quote).await {
        Ok(settled) => Ok(Ok(settled)),
        Err(settle::SettleError::Refused(r)) => Ok(Err(r.into())),
        Err(settle::SettleError::QuoteAlreadyPaid) => Ok(Err(Refusal::QuoteAlreadyPaid)),
        Err(settle::SettleError::PayerBusy(bought)) => Ok(Err(Refusal::PayerBusy(bought))),
        Err(settle::SettleError::App(err)) => Err(err),
    }
}

/// The live payment a presented receipt names, if `covers` accepts it;
/// otherwise why not (`mismatch` when it names a payment for something
/// else).
async fn check_receipt(
    pw: &Paywall<'_>,
    receipt: &str,
    covers: impl Fn(&PaymentRecord) -> Result<bool, UnknownText>,
    mismatch: Refusal,
) -> Result<Result<PaymentRecord, Refusal>, AppError> {
    Ok(match pw.access().live_receipt(receipt).await? {
        Some(p) if covers(&p)? => Ok(p),
        Some(_) => Err(mismatch),
        None => Err(crate::access::Refusal::InvalidReceipt.into()),
    })
}

/// Answer with a fresh challenge for `quote`, logging why an offered
/// credential was refused.
pub fn refuse(
    pw: &Paywall<'_>,
    quote: &QuoteRecord,
    resource: &Resource<'_>,
    why: Option<&Refusal>,
) -> AppError {
    if let Some(refusal) = why {
        tracing::info!(quote = %quote.id, wallet = %quote.address, code = refusal.code(), reason = %refusal.why(), "payment refused");
    }
    challenge(pw, quote, resource, why)
}

/// The paywall of a paid read of `wallet` (get_ledger and every read tool).
/// `Ok(None)`: covered without a payment (payments off, an owner read, a
/// receipt). `Ok(Some(block))`: a payment settled (or replayed) for it.
pub async fn authorize_read(
    pw: &Paywall<'_>,
    principal: &Principal,
    wallet: &WalletAddress,
    presented: &Presented,
    resource: Resource<'_>,
) -> Result<Option<PaymentBlock>, AppError> {
    // A wallet never scanned cannot be read at any price.
    if !pw.store.wallet_scanned(wallet.as_str()).await? {
        return Err(AppError::not_found(
            "this wallet has never been scanned: quote_wallet, scan_wallet, poll get_job, then read",
        ));
    }
    let mut why: Option<Refusal> = match pw
        .access()
        .wallet_read(principal, wallet, presented.receipt.as_deref())
        .await?
    {
        Ok(_) => return Ok(None),
        Err(refusal) => refusal.map(Refusal::Access),
    };
    if let Some(payment) = &presented.payment {
        if pw.runtime.ready().is_none() {
            return Err(not_configured());
        }
        let quote_id = presented
            .quote_id
            .clone()
            .or_else(|| memo_of(payment, &pw.x402.network));
        let quote = match quote_id {
            Some(id) => pw.store.quote(id.trim()).await?,
            None => None,
        };
        // The caller names the quote: one of anything but a read of this
        // wallet (a scan's, a top-up's, the price backfills' sentinel) is
        // refused, never taken.
        let checked = match quote {
            None => Err(Refusal::QuoteNotFound),
            Some(q)
                if Scope::parse(&q.scope) != Some(Scope::Read) || q.address != wallet.as_str() =>
            {
                Err(Refusal::WrongQuote(WrongQuote::NotAReadOfThisWallet))
            }
            // A payment already taken (settled or in flight) answers as a
            // replay even once its quote has expired.
            Some(q) if q.expires_at <= pw.now_ms() => {
                if settle::is_known(pw, payment).await? {
                    Ok(q)
                } else {
                    Err(Refusal::QuoteExpired)
                }
            }
            Some(q) => Ok(q),
        };
        let settled = match checked {
            Ok(q) => settle_or_refuse(pw, payment, &q).await?,
            Err(refusal) => Err(refusal),
        };
        match settled {
            Ok(settled) => {
                belongs_to(pw, principal, &settled.record, settled.block.replayed).await;
                return Ok(Some(settled.block));
            }
            Err(refusal) => why = Some(refusal),
        }
    }
    let fresh = fresh_read_quote(pw, wallet).await?;
    Err(refuse(pw, &fresh, &resource, why.as_ref()))
}

/// The wallet whose read the quote of `payment` prices (`quote_id`, else
/// the quote its memo names): how a report over several wallets knows
/// which one a payment is for. None when no read quote is found.
pub async fn quoted_wallet(
    pw: &Paywall<'_>,
    payment: &str,
    quote_id: Option<&str>,
) -> Result<Option<String>, AppError> {
    let id = quote_id
        .map(str::to_owned)
        .or_else(|| memo_of(payment, &pw.x402.network));
    Ok(match id {
        Some(id) => pw
            .store
            .quote(id.trim())
            .await?
            .filter(|q| Scope::parse(&q.scope) == Some(Scope::Read))
            .map(|q| q.address),
        None => None,
    })
}

/// [`authorize_read`] for the wallet's REST route `route`
/// (`/v1/wallets/{address}/…`) and its MCP tool `tool`, with what the
/// call's arguments and headers presented.
pub async fn authorize_wallet_read(
    pw: &Paywall<'_>,
    principal: &Principal,
    wallet: &WalletAddress,
    presented: &Presented,
    route: crate::routes::RestRoute,
    tool: &str,
) -> Result<Option<PaymentBlock>, AppError> {
    let path = route.for_wallet(wallet.as_str());
    authorize_read(
        pw,
        principal,
        wallet,
        presented,
        Resource { path: &path, tool },
    )
    .await
}

/// A payment made with an account's bearer belongs to the account (P8), so
/// it lists it. The payment is already settled: a failure to record that is
/// logged, never answered (the caller has paid and gets what it paid for).
/// A payment first made anonymously, or by another account, stays where it
/// is.
async fn belongs_to(
    pw: &Paywall<'_>,
    principal: &Principal,
    payment: &PaymentRecord,
    replayed: bool,
) {
    let Some(account) = principal.account() else {
        return;
    };
    // Whoever presents a payment again (anyone can rebuild one from the
    // chain within the replay window) is not its payer: only the call that
    // settled it gives it an account.
    if replayed || payment.account_id.is_some() {
        return;
    }
    if let Err(err) = crate::accounts::assign_payment(pw.store, &payment.id, account).await {
        tracing::warn!(payment = %payment.id, error = %err, "could not give a payment to its account");
    }
}

/// The quote id a payment's memo names, for callers (raw x402 clients)
/// that send only the payment.
fn memo_of(payment: &str, network: &str) -> Option<String> {
    let value = x402::parse_payment(payment, network).ok()?;
    let tx: solana_transaction::versioned::VersionedTransaction =
        wincode::deserialize(&value.transaction).ok()?;
    let keys = tx.message.static_account_keys();
    tx.message.instructions().iter().find_map(|ix| {
        let program = keys.get(usize::from(ix.program_id_index))?;
        (*program == verify::MEMO_PROGRAM)
            .then(|| String::from_utf8(ix.data.clone()).ok())
            .flatten()
            .filter(|m| m.len() <= 64)
    })
}

/// How a scan was paid for.
#[derive(Debug, Default)]
pub struct ScanGrant {
    /// The payment that settled for it, to report.
    pub payment: Option<PaymentBlock>,
    /// A scan entitlement to spend on the job (payment id, the job it was
    /// spent on before, if that job failed on our side).
    pub entitlement: Option<(String, Option<String>)>,
    /// The job this very payment already started (a replay).
    pub existing_job: Option<String>,
}

/// The paywall of `scan_wallet` for `quote`.
pub async fn authorize_scan(
    pw: &Paywall<'_>,
    principal: &Principal,
    quote: &QuoteRecord,
    presented: &Presented,
    resource: Resource<'_>,
) -> Result<ScanGrant, AppError> {
    if pw.mode == PaymentsMode::Off {
        return Ok(ScanGrant::default());
    }
    let mut why: Option<Refusal> = None;
    if let Some(receipt) = &presented.receipt {
        let scope = Scope::of_column(&quote.scope)?;
        let covers = |p: &PaymentRecord| {
            Ok(Entitlement::of_record(p)? == Entitlement::Scan
                && p.wallet == quote.address
                && Scope::of_column(&p.scope)? == scope)
        };
        match check_receipt(pw, receipt, covers, Refusal::ReceiptNotForScan).await? {
            Ok(p) => return spend(pw, p, None).await,
            Err(refusal) => why = Some(refusal),
        }
    }
    if let Some(payment) = &presented.payment {
        if pw.runtime.ready().is_none() {
            return Err(not_configured());
        }
        let settled = if presented
            .quote_id
            .as_deref()
            .is_some_and(|q| q.trim() != quote.id)
        {
            Err(Refusal::WrongQuote(WrongQuote::NotTheScansQuote))
        } else {
            settle_or_refuse(pw, payment, quote).await?
        };
        match settled {
            Ok(settled) => {
                belongs_to(pw, principal, &settled.record, settled.block.replayed).await;
                return spend(pw, settled.record, Some(settled.block)).await;
            }
            Err(refusal) => why = Some(refusal),
        }
    }
    Err(refuse(pw, quote, &resource, why.as_ref()))
}

/// Decide how a scan entitlement is spent: fresh, again after a job that
/// failed on our side, or already spent (a replay of the paying call
/// answers its job; a receipt answers `entitlement_consumed`).
async fn spend(
    pw: &Paywall<'_>,
    p: PaymentRecord,
    block: Option<PaymentBlock>,
) -> Result<ScanGrant, AppError> {
    let Some(job_id) = p.consumed_job_id.clone() else {
        return Ok(ScanGrant {
            payment: block,
            entitlement: Some((p.id, None)),
            existing_job: None,
        });
    };
    let job: Option<JobRecord> = pw.store.job(&job_id).await?;
    let failed = |job: &JobRecord| {
        JobStatus::parse(&job.status)
            .map(|status| status == JobStatus::Failed)
            .ok_or_else(|| UnknownText::new("jobs.status", &job.status))
    };
    match job {
        None => Ok(ScanGrant {
            payment: block,
            entitlement: Some((p.id, Some(job_id))),
            existing_job: None,
        }),
        Some(job) if failed(&job)? => Ok(ScanGrant {
            payment: block,
            entitlement: Some((p.id, Some(job_id))),
            existing_job: None,
        }),
        Some(job) => match block {
            Some(block) if block.replayed => Ok(ScanGrant {
                payment: Some(block),
                entitlement: None,
                existing_job: Some(job.id),
            }),
            _ => Err(AppError::new(
                Code::EntitlementConsumed,
                format!(
                    "this receipt's scan already ran (job {}); the receipt still reads the wallet",
                    job.id
                ),
            )
            .with("job", json!(job.id))),
        },
    }
}
