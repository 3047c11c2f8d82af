//! An account's payments. A payment is made by a payer key, not an
//! account; when the caller had an account it is assigned to it (once, and
//! never moved to another), so the account can list what it paid for. The
//! view is the one `GET /v1/payments` answers with ([`PaymentView`]),
//! receipts included: a settled payment's receipt is re-derived from the
//! server's receipt secret and the payment's message hash (the database
//! holds neither the receipt nor anything that reads without the secret).

use super::{AccountId, AccountsError};
use crate::{
    ids,
    payments::{PaymentStatus, receipt::Receipt},
    store::{PaymentRecord, Store},
    values::rfc3339,
};

/// One payment as its account lists it (`GET /v1/payments`, the Payments
/// page).
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct PaymentView {
    pub payment_id: String,
    pub quote_id: String,
    /// pending, settled or failed.
    pub status: String,
    /// scan or read.
    pub entitlement: String,
    pub wallet: String,
    pub amount_atomic: String,
    pub network: String,
    pub transaction: String,
    /// The receipt to present for what it bought; settled payments only.
    pub receipt: Option<String>,
    pub created_at: String,
}

/// At most this many payments are listed, newest first.
pub const PAYMENTS_LISTED: i64 = 500;

/// Give payment `payment_id` to `account`. Assigning it again to the same
/// account is a no-op; a payment of another account is refused.
pub async fn assign_payment(
    store: &Store,
    payment_id: &str,
    account: &AccountId,
) -> Result<(), AccountsError> {
    if !ids::is_id("pay_", payment_id) {
        return Err(AccountsError::NoPayment(payment_id.to_owned()));
    }
    if store
        .assign_payment_account(payment_id, account.as_str())
        .await?
    {
        return Ok(());
    }
    match store.payment(payment_id).await? {
        None => Err(AccountsError::NoPayment(payment_id.to_owned())),
        Some(_) => Err(AccountsError::PaymentTaken(payment_id.to_owned())),
    }
}

/// The account's payments, newest first (at most [`PAYMENTS_LISTED`]).
pub async fn list_payments(
    store: &Store,
    account: &AccountId,
) -> Result<Vec<PaymentView>, AccountsError> {
    let secret = store.server_secret("receipts").await?;
    store
        .payments_for_account(account.as_str(), PAYMENTS_LISTED)
        .await?
        .into_iter()
        .map(|p| view(secret.as_bytes(), p))
        .collect()
}

fn view(secret: &[u8], p: PaymentRecord) -> Result<PaymentView, AccountsError> {
    let status =
        PaymentStatus::of_record(&p).map_err(|err| AccountsError::Corrupt(err.to_string()))?;
    let receipt = (status == PaymentStatus::Settled)
        .then(|| Receipt::of_message_hex(secret, &p.message_hash))
        .flatten()
        .map(|r| r.as_str().to_owned());
    Ok(PaymentView {
        receipt,
        payment_id: p.id,
        quote_id: p.quote_id,
        status: p.status,
        entitlement: p.entitlement,
        wallet: p.wallet,
        amount_atomic: p.amount_atomic.to_string(),
        network: p.network,
        transaction: p.signature,
        created_at: rfc3339(p.created_at),
    })
}
