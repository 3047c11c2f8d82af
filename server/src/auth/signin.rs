//! What can go wrong while someone signs in, shared by both methods
//! (`siws`, `oidc`). A refused proof is a [`Refusal`] naming exactly which
//! check failed, so tests can prove every branch and logs say why; the
//! caller reads a short sentence that says what to do and nothing about how
//! the server checks. Malformed input is the caller's to fix
//! (`invalid_params`); a store failure or a provider outage is ours.

use crate::error::{AppError, Code};
use crate::store::StoreError;

/// Why a sign-in proof was refused (answered `unauthenticated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    // Sign-In With Solana.
    /// The message names another domain.
    OtherDomain,
    /// The message names another URI.
    OtherUri,
    /// The message names another chain.
    OtherChain,
    /// The message's Expiration Time has passed, or its nonce has expired.
    Expired,
    /// The message's Issued At is ahead of the server's clock.
    IssuedInFuture,
    /// The nonce was never issued (or expired and was forgotten).
    UnknownNonce,
    /// The nonce was consumed by an earlier sign-in.
    NonceUsed,
    /// The nonce was issued to another address.
    NonceForOtherAddress,
    /// The signature is not the message's address signing these bytes.
    BadSignature,
    // Google (OpenID Connect).
    /// No pending flow has this state (never begun, or already finished).
    UnknownState,
    /// The flow was begun too long ago.
    StateExpired,
    /// The provider refused to exchange the code.
    CodeRejected,
    /// The token response carried no ID token.
    NoIdToken,
    /// The ID token is for another client.
    WrongAudience,
    /// The ID token was issued by someone else.
    WrongIssuer,
    /// The ID token has expired.
    TokenExpired,
    /// The ID token's signature does not verify against the provider's keys.
    TokenSignature,
    /// The ID token's nonce is not the one this flow sent.
    NonceMismatch,
    /// The ID token failed another check (malformed, unsupported algorithm).
    TokenInvalid,
}

impl Refusal {
    /// A stable name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::OtherDomain => "other_domain",
            Refusal::OtherUri => "other_uri",
            Refusal::OtherChain => "other_chain",
            Refusal::Expired => "expired",
            Refusal::IssuedInFuture => "issued_in_future",
            Refusal::UnknownNonce => "unknown_nonce",
            Refusal::NonceUsed => "nonce_used",
            Refusal::NonceForOtherAddress => "nonce_for_other_address",
            Refusal::BadSignature => "bad_signature",
            Refusal::UnknownState => "unknown_state",
            Refusal::StateExpired => "state_expired",
            Refusal::CodeRejected => "code_rejected",
            Refusal::NoIdToken => "no_id_token",
            Refusal::WrongAudience => "wrong_audience",
            Refusal::WrongIssuer => "wrong_issuer",
            Refusal::TokenExpired => "token_expired",
            Refusal::TokenSignature => "token_signature",
            Refusal::NonceMismatch => "nonce_mismatch",
            Refusal::TokenInvalid => "token_invalid",
        }
    }

    /// What the caller reads. Nonce and ID-token failures share one
    /// sentence each: which check failed is for the log, not for a caller
    /// probing the server.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::OtherDomain | Refusal::OtherUri | Refusal::OtherChain => {
                "the sign-in message was written for another site or network; request a new challenge"
            }
            Refusal::Expired => "the sign-in message has expired; request a new challenge",
            Refusal::IssuedInFuture => {
                "the sign-in message is dated in the future; check the device clock and request a new challenge"
            }
            Refusal::UnknownNonce | Refusal::NonceUsed | Refusal::NonceForOtherAddress => {
                "the sign-in nonce is unknown, expired or already used; request a new challenge"
            }
            Refusal::BadSignature => "the signature is not this wallet's signature of this message",
            Refusal::UnknownState | Refusal::StateExpired => {
                "this Google sign-in is unknown, expired or already finished; sign in again"
            }
            Refusal::CodeRejected
            | Refusal::NoIdToken
            | Refusal::WrongAudience
            | Refusal::WrongIssuer
            | Refusal::TokenExpired
            | Refusal::TokenSignature
            | Refusal::NonceMismatch
            | Refusal::TokenInvalid => "Google sign-in could not be verified; sign in again",
        }
    }
}

/// A failed sign-in.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// The address is not a Solana public key (the text says why).
    #[error("address: {0}")]
    InvalidAddress(String),
    /// The message is not a Sign-In With Solana message in our layout.
    #[error("the sign-in message is malformed: {0}")]
    MalformedMessage(&'static str),
    /// The signature is not base58 of 64 bytes.
    #[error("signature: {0}")]
    MalformedSignature(&'static str),
    /// The proof was checked and refused.
    #[error("{}", .0.message())]
    Refused(Refusal),
    /// The identity provider could not be reached or answered nonsense
    /// (the detail is logged where it happens).
    #[error("Google sign-in is unavailable right now; try again later")]
    ProviderUnavailable,
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

impl SignInError {
    /// The refusal, if the proof was refused.
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            SignInError::Refused(r) => Some(*r),
            _ => None,
        }
    }
}

/// Log a refusal with its reason and return it.
pub(crate) fn refuse(method: &'static str, reason: Refusal) -> SignInError {
    tracing::info!(method, reason = reason.as_str(), "sign-in refused");
    SignInError::Refused(reason)
}

impl From<SignInError> for AppError {
    fn from(err: SignInError) -> Self {
        match err {
            SignInError::InvalidAddress(_)
            | SignInError::MalformedMessage(_)
            | SignInError::MalformedSignature(_) => AppError::invalid_params(err.to_string()),
            SignInError::Refused(reason) => AppError::new(Code::Unauthenticated, reason.message()),
            SignInError::ProviderUnavailable => AppError::new(Code::Unavailable, err.to_string()),
            SignInError::Store(e) => AppError::internal("sign-in store", e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_unauthenticated_and_say_nothing_internal() {
        let err: AppError = SignInError::Refused(Refusal::NonceForOtherAddress).into();
        assert_eq!(err.code(), Code::Unauthenticated);
        assert!(!err.message().contains("address"), "{}", err.message());
        let err: AppError = SignInError::Refused(Refusal::WrongAudience).into();
        assert!(!err.message().contains("audience"), "{}", err.message());
    }

    #[test]
    fn malformed_input_is_invalid_params() {
        let err: AppError = SignInError::MalformedSignature("not base58").into();
        assert_eq!(err.code(), Code::InvalidParams);
        assert_eq!(err.message(), "signature: not base58");
    }

    #[test]
    fn store_failures_are_internal_and_hidden() {
        let err: AppError = SignInError::Store(StoreError::Url("/secret/db".to_owned())).into();
        assert_eq!(err.code(), Code::Internal);
        assert!(!err.message().contains("secret"));
    }
}
