//! Who may read what. One module answers "may this principal read this
//! wallet, this job", from the credentials a call carries: payments
//! switched off, the receipt of a payment that covers it (a scan's or a
//! read's), the account watching the wallet, an admin key. The paywall
//! asks here first and only prices and settles what is not already
//! covered. A share link's holder (`Principal::Link`) reads the one
//! wallet its link shows and nothing else.
//!
//! Nothing here settles, prices or knows of HTTP: a grant or a refusal
//! with its reason comes back, and the caller decides what to answer.

use crate::{
    accounts::{Principal, watchlist::is_watching},
    error::AppError,
    payments::receipt::Receipt,
    solana::WalletAddress,
    store::{JobRecord, PaymentRecord, Store},
};

/// What access is decided from: the store, whether payments are switched
/// on at all, and the time now.
#[derive(Clone, Copy)]
pub struct Access<'a> {
    pub store: &'a Store,
    /// With payments off nothing is paid and no receipt exists: every
    /// scanned wallet is readable and the unguessable job id is the
    /// credential for its job.
    pub payments_off: bool,
    pub now_ms: i64,
}

/// Why a read is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadGrant {
    PaymentsOff,
    /// The operator's admin key reads everything.
    Admin,
    /// The caller's account watches the wallet.
    Owner,
    /// A live receipt covers the wallet.
    Receipt,
    /// A live share link shows this wallet.
    ShareLink,
}

/// Why a presented credential did not cover the read: each the `error`
/// code a challenge carries and the reason in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A share link reads its one wallet only.
    LinkNotForWallet,
    /// The receipt's payment covers another wallet.
    ReceiptNotForWallet,
    /// The receipt is malformed, unknown or expired.
    InvalidReceipt,
}

impl Refusal {
    pub fn code(self) -> &'static str {
        match self {
            Refusal::LinkNotForWallet => "link_not_for_wallet",
            Refusal::ReceiptNotForWallet => "receipt_not_for_wallet",
            Refusal::InvalidReceipt => "invalid_receipt",
        }
    }

    pub fn why(self) -> &'static str {
        match self {
            Refusal::LinkNotForWallet => "the share link shows another wallet",
            Refusal::ReceiptNotForWallet => "the receipt covers another wallet",
            Refusal::InvalidReceipt => "the receipt is unknown or expired",
        }
    }
}

impl Access<'_> {
    /// Whether `principal`, presenting `receipt`, may read `wallet` without
    /// paying. `Ok(Err(None))`: nothing covers it and nothing was refused
    /// (the caller presented no receipt); `Ok(Err(Some(r)))`: the receipt
    /// presented was refused for `r`.
    pub async fn wallet_read(
        &self,
        principal: &Principal,
        wallet: &WalletAddress,
        receipt: Option<&str>,
    ) -> Result<Result<ReadGrant, Option<Refusal>>, AppError> {
        // A share link reads its one wallet, whatever else is switched on
        // or presented, and never another.
        if let Principal::Link(link) = principal {
            return Ok(if &link.wallet == wallet {
                Ok(ReadGrant::ShareLink)
            } else {
                Err(Some(Refusal::LinkNotForWallet))
            });
        }
        if self.payments_off {
            return Ok(Ok(ReadGrant::PaymentsOff));
        }
        if matches!(principal, Principal::Admin) {
            return Ok(Ok(ReadGrant::Admin));
        }
        if self.owner(principal, wallet).await? {
            return Ok(Ok(ReadGrant::Owner));
        }
        let Some(receipt) = receipt else {
            return Ok(Err(None));
        };
        // A receipt's wallet and expiry never change once settled, so the
        // store may answer them from memory; the expiry is checked against
        // the clock on every call.
        let grant = match Receipt::parse(receipt) {
            Some(receipt) => self.store.receipt_read_grant(&receipt.hash()).await?,
            None => None,
        };
        Ok(
            match grant.filter(|(_, expires)| expires.is_none_or(|e| e > self.now_ms)) {
                Some((covered, _)) if covered == wallet.as_str() => Ok(ReadGrant::Receipt),
                Some(_) => Err(Some(Refusal::ReceiptNotForWallet)),
                None => Err(Some(Refusal::InvalidReceipt)),
            },
        )
    }

    /// Whether an account (signed in to the portal, where no bearer and
    /// no receipt is presented) may read `wallet`: payments off, or the
    /// account watches it. The portal's downloads ask this.
    pub async fn account_wallet_read(
        &self,
        account: &crate::accounts::AccountId,
        wallet: &WalletAddress,
    ) -> Result<bool, AppError> {
        if self.payments_off {
            return Ok(true);
        }
        Ok(is_watching(self.store, account, wallet).await?)
    }

    /// Whether `principal`, presenting `receipt`, may read `job`: the
    /// receipt of the payment it was started on, the job's own account, or
    /// the admin key.
    pub async fn job_read(
        &self,
        principal: &Principal,
        job: &JobRecord,
        receipt: Option<&str>,
    ) -> Result<bool, AppError> {
        match principal {
            Principal::Admin => return Ok(true),
            Principal::Account(a) if job.account_id.as_deref() == Some(a.account_id.as_str()) => {
                return Ok(true);
            }
            // A share link reads no job.
            Principal::Link(_) => return Ok(false),
            Principal::Account(_) | Principal::Anonymous => {}
        }
        if self.payments_off {
            return Ok(true);
        }
        match receipt {
            Some(receipt) => Ok(self
                .live_receipt(receipt)
                .await?
                .is_some_and(|p| p.consumed_job_id.as_deref() == Some(job.id.as_str()))),
            None => Ok(false),
        }
    }

    /// A receipt's payment, when it is settled and still live.
    pub async fn live_receipt(&self, receipt: &str) -> Result<Option<PaymentRecord>, AppError> {
        let Some(receipt) = Receipt::parse(receipt) else {
            return Ok(None);
        };
        Ok(self
            .store
            .payment_by_receipt(&receipt.hash())
            .await?
            .filter(|p| p.expires_at.is_none_or(|e| e > self.now_ms)))
    }

    /// An account watching the wallet reads it free.
    async fn owner(&self, principal: &Principal, wallet: &WalletAddress) -> Result<bool, AppError> {
        Ok(match principal {
            Principal::Account(a) => is_watching(self.store, &a.account_id, wallet).await?,
            Principal::Anonymous | Principal::Admin | Principal::Link(_) => false,
        })
    }
}
