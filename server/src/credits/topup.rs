//! Top-ups: `POST /v1/credits` buys research credits with an x402 payment,
//! through the same quote, verify and settle path as every paid call.
//!
//! Without a payment the route prices the amount as a quote of scope
//! [`Scope::TopUp`] whose address is the account (so the challenge, and the
//! payment that answers it, can only credit that account) and answers the
//! 402 challenge. With the payment and that quote,
//! `payments::settle_or_refuse` (the path reads and scans take too)
//! verifies and settles it exactly once; the credit is a movement whose
//! reference is the payment's id, so presenting the payment again (a
//! replay answers the first settlement) never credits twice. A payment
//! that confirmed only after the call gave up (recovery settles it later)
//! is credited the next time the account's credits are read or topped up
//! ([`sweep`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Credits, usd_text};
use crate::{
    accounts::{AccountId, Principal},
    config::PaymentsMode,
    error::{AppError, Code},
    payments::{self, PaymentBlock, Paywall, Presented, Refusal, Resource, Scope, WrongQuote},
    store::QuoteRecord,
    values::Usd,
};

const RESOURCE: Resource<'static> = Resource {
    path: crate::routes::CREDITS_TOPUP.path,
    tool: "POST /v1/credits",
};

/// The body of `POST /v1/credits`.
#[derive(Debug, Deserialize, JsonSchema, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TopUpArgs {
    /// The amount in USD, one of the server's top-up amounts (GET /v1/credits lists them).
    pub amount_usd: String,
    /// Base64 X-PAYMENT built for the challenge this route answered (or the X-PAYMENT header).
    #[serde(default)]
    pub payment: Option<String>,
    /// The challenge's quoteId (accepts[0].extra.quoteId).
    #[serde(default)]
    pub quote_id: Option<String>,
}

/// A settled top-up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema, utoipa::ToSchema)]
pub struct TopUp {
    /// Atomic USDC credited by this call (0 when this payment was
    /// credited before: a replay).
    pub credited_atomic: String,
    pub balance_atomic: String,
    pub balance_usd: String,
    #[schema(value_type = Object)]
    pub payment: PaymentBlock,
}

/// Credit every settled top-up payment of the account not yet credited.
pub async fn sweep(credits: &Credits<'_>, account: &AccountId) -> Result<(), AppError> {
    for (payment_id, micros) in credits.store.settled_topups(account.as_str()).await? {
        let amount = Usd::from_micros(u64::try_from(micros).unwrap_or(0));
        if credits
            .top_up(account, amount, &payment_id)
            .await?
            .is_some()
        {
            tracing::info!(payment = %payment_id, account = account.as_str(), "credited a top-up settled by recovery");
        }
    }
    Ok(())
}

/// `POST /v1/credits`.
pub async fn top_up(
    pw: &Paywall<'_>,
    credits: &Credits<'_>,
    principal: &Principal,
    args: TopUpArgs,
    headers: &Presented,
) -> Result<TopUp, AppError> {
    let account = &principal
        .require_account("topping up research credits")?
        .account_id;
    principal.permit(crate::accounts::Action::BuyCredits)?;
    let amount = Usd::parse(&args.amount_usd)
        .ok()
        .filter(|a| credits.config.topup_usd.contains(a))
        .ok_or_else(|| {
            AppError::invalid_params(format!(
                "amount_usd: must be one of {}",
                credits
                    .config
                    .topup_usd
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    if pw.mode == PaymentsMode::Off {
        return Err(AppError::new(
            Code::Unavailable,
            "top-ups are x402 payments and this server takes no payments; an operator grants \
             credits with ledger credits grant",
        ));
    }
    // Before the challenge and before a payment is settled: a top-up the
    // balance cannot take is refused while nothing has been paid.
    credits.check_top_up(account, amount).await?;
    let presented = Presented::merge(
        args.payment.as_deref(),
        args.quote_id.as_deref(),
        None,
        headers,
    );
    let Some(payment) = presented.payment else {
        let quote = new_quote(pw, account, amount).await?;
        return Err(payments::challenge(pw, &quote, &RESOURCE, None));
    };
    let quote = match presented.quote_id {
        Some(id) => pw.store.quote(&id).await?,
        None => None,
    };
    // The caller names the quote: anything but this account's top-up of
    // this amount is refused, never taken.
    let checked = match quote {
        Some(q)
            if Scope::parse(&q.scope) == Some(Scope::TopUp)
                && q.address == account.as_str()
                && u64::try_from(q.price_micros).ok() == Some(amount.micros()) =>
        {
            // As for reads: a payment already taken (settled or in flight)
            // answers as a replay even once its quote has expired, so an
            // agent retrying after an `unavailable` is never told "nothing
            // was charged" and led to pay twice. The memo binds the payment
            // to this quote and a top-up credits once per payment id.
            if q.expires_at <= pw.now_ms() && !payments::settle::is_known(pw, &payment).await? {
                Err(Refusal::QuoteExpired)
            } else {
                Ok(q)
            }
        }
        _ => Err(Refusal::WrongQuote(WrongQuote::NotThisTopUp)),
    };
    let settled = match checked {
        Ok(q) => payments::settle_or_refuse(pw, &payment, &q).await?,
        Err(refusal) => Err(refusal),
    };
    let settled = match settled {
        Ok(settled) => settled,
        Err(refusal) => {
            let quote = new_quote(pw, account, amount).await?;
            return Err(payments::refuse(pw, &quote, &RESOURCE, Some(&refusal)));
        }
    };
    let credited = credits.top_up(account, amount, &settled.record.id).await?;
    let balance = credits.balance(account).await?;
    Ok(TopUp {
        credited_atomic: if credited.is_some() {
            amount.usdc_atomic().to_string()
        } else {
            "0".to_owned()
        },
        balance_atomic: balance.to_string(),
        balance_usd: usd_text(balance),
        payment: settled.block,
    })
}

async fn new_quote(
    pw: &Paywall<'_>,
    account: &AccountId,
    amount: Usd,
) -> Result<QuoteRecord, AppError> {
    let now = pw.now_ms();
    let ttl = i64::try_from(pw.pricing.quote_ttl_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
    let quote = QuoteRecord {
        id: crate::ids::new_id("q_", now),
        address: account.as_str().to_owned(),
        scope: Scope::TopUp.as_str().to_owned(),
        tier: Scope::TopUp.as_str().to_owned(),
        price_micros: i64::try_from(amount.micros()).unwrap_or(i64::MAX),
        signatures: None,
        created_at: now,
        expires_at: now.saturating_add(ttl),
    };
    pw.store.insert_quote(&quote).await?;
    Ok(quote)
}
