//! Why the paywall did not take what a caller presented (a payment, a
//! receipt, a quote id): one enum for reads, scans and top-ups, each
//! variant with the `error` code a fresh challenge carries and the reason
//! in words. The words say what was wrong, never what to do: the challenge
//! adds that once ([`super::challenge`]). Codes and words are the wire's,
//! byte for byte (docs/payments.md lists them).

use std::borrow::Cow;

use super::{quote::Entitlement, verify};
use crate::access;

/// Why a presented payment, receipt or quote was not taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The receipt or share link does not cover the read.
    Access(access::Refusal),
    /// Verification or settlement refused the payment.
    Payment(verify::Refusal),
    /// The quote id names no quote.
    QuoteNotFound,
    /// The quote is real, but for something else.
    WrongQuote(WrongQuote),
    QuoteExpired,
    /// Another payment for the quote is settled or being settled.
    QuoteAlreadyPaid,
    /// Another payment of the same payer is still being settled; what the
    /// payment was to buy decides what the words suggest.
    PayerBusy(Entitlement),
    /// The receipt's payment bought no scan of this wallet and scope.
    ReceiptNotForScan,
}

/// What a `wrong_quote` quote was not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrongQuote {
    /// A read's quote must be a read of the wallet read.
    NotAReadOfThisWallet,
    /// A scan's payment must name the scan's own quote.
    NotTheScansQuote,
    /// A top-up's quote must be the challenge of this account and amount.
    NotThisTopUp,
}

impl Refusal {
    /// The `error` code of the challenge that answers it.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Access(r) => r.code(),
            Refusal::Payment(r) => r.code(),
            Refusal::QuoteNotFound => "quote_not_found",
            Refusal::WrongQuote(_) => "wrong_quote",
            Refusal::QuoteExpired => "quote_expired",
            Refusal::QuoteAlreadyPaid => "quote_already_paid",
            Refusal::PayerBusy(_) => "payer_has_pending_payment",
            Refusal::ReceiptNotForScan => "receipt_not_for_scan",
        }
    }

    /// The reason in words.
    pub fn why(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Refusal::Access(r) => r.why(),
            Refusal::Payment(r) => return Cow::Owned(r.to_string()),
            Refusal::QuoteNotFound => "no such quote",
            Refusal::WrongQuote(WrongQuote::NotAReadOfThisWallet) => {
                "the quote is not a read of this wallet"
            }
            Refusal::WrongQuote(WrongQuote::NotTheScansQuote) => {
                "quote_id names another quote than the scan's"
            }
            Refusal::WrongQuote(WrongQuote::NotThisTopUp) => {
                "quote_id must name the top-up challenge this route answered for this account and amount"
            }
            Refusal::QuoteExpired => "the quote expired",
            Refusal::QuoteAlreadyPaid => {
                "another payment for this quote is settled or being settled; a quote is paid once"
            }
            // A top-up's answer is a credit, not a receipt to come back for.
            Refusal::PayerBusy(Entitlement::TopUp) => {
                "another payment from this payer is still being settled"
            }
            Refusal::PayerBusy(Entitlement::Read | Entitlement::Scan) => {
                "another payment from this payer is still being settled; present that payment \
                 again for its receipt, or pay once it has finished"
            }
            Refusal::ReceiptNotForScan => {
                "the receipt does not cover a scan of this wallet and scope"
            }
        })
    }
}

impl From<access::Refusal> for Refusal {
    fn from(r: access::Refusal) -> Self {
        Refusal::Access(r)
    }
}

impl From<verify::Refusal> for Refusal {
    fn from(r: verify::Refusal) -> Self {
        Refusal::Payment(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(r: Refusal) -> (&'static str, String) {
        (r.code(), r.why().into_owned())
    }

    #[test]
    fn an_unknown_quote_is_quote_not_found() {
        assert_eq!(
            said(Refusal::QuoteNotFound),
            ("quote_not_found", "no such quote".to_owned())
        );
    }

    #[test]
    fn a_quote_for_something_else_is_wrong_quote_saying_what_it_is_not() {
        let wrong = |w| said(Refusal::WrongQuote(w));
        assert_eq!(
            wrong(WrongQuote::NotAReadOfThisWallet),
            (
                "wrong_quote",
                "the quote is not a read of this wallet".to_owned()
            )
        );
        assert_eq!(
            wrong(WrongQuote::NotTheScansQuote),
            (
                "wrong_quote",
                "quote_id names another quote than the scan's".to_owned()
            )
        );
        assert_eq!(
            wrong(WrongQuote::NotThisTopUp),
            (
                "wrong_quote",
                "quote_id must name the top-up challenge this route answered for this account \
                 and amount"
                    .to_owned()
            )
        );
    }

    #[test]
    fn an_expired_quote_is_quote_expired() {
        assert_eq!(
            said(Refusal::QuoteExpired),
            ("quote_expired", "the quote expired".to_owned())
        );
    }

    #[test]
    fn a_second_payment_for_a_quote_is_quote_already_paid() {
        assert_eq!(
            said(Refusal::QuoteAlreadyPaid),
            (
                "quote_already_paid",
                "another payment for this quote is settled or being settled; a quote is paid once"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_busy_payer_is_told_to_come_back_for_a_receipt_unless_topping_up() {
        let long = "another payment from this payer is still being settled; present that \
                    payment again for its receipt, or pay once it has finished";
        for bought in [Entitlement::Read, Entitlement::Scan] {
            assert_eq!(
                said(Refusal::PayerBusy(bought)),
                ("payer_has_pending_payment", long.to_owned())
            );
        }
        assert_eq!(
            said(Refusal::PayerBusy(Entitlement::TopUp)),
            (
                "payer_has_pending_payment",
                "another payment from this payer is still being settled".to_owned()
            )
        );
    }

    #[test]
    fn a_receipt_for_something_else_than_the_scan_is_receipt_not_for_scan() {
        assert_eq!(
            said(Refusal::ReceiptNotForScan),
            (
                "receipt_not_for_scan",
                "the receipt does not cover a scan of this wallet and scope".to_owned()
            )
        );
    }

    #[test]
    fn access_and_verification_refusals_keep_their_own_codes_and_words() {
        assert_eq!(
            said(access::Refusal::InvalidReceipt.into()),
            (
                "invalid_receipt",
                "the receipt is unknown or expired".to_owned()
            )
        );
        assert_eq!(
            said(access::Refusal::ReceiptNotForWallet.into()),
            (
                "receipt_not_for_wallet",
                "the receipt covers another wallet".to_owned()
            )
        );
        assert_eq!(
            said(access::Refusal::LinkNotForWallet.into()),
            (
                "link_not_for_wallet",
                "the share link shows another wallet".to_owned()
            )
        );
        assert_eq!(
            said(verify::Refusal::StaleBlockhash.into()),
            (
                "stale_blockhash",
                "the transaction's blockhash is no longer valid; build the payment again"
                    .to_owned()
            )
        );
    }
}
