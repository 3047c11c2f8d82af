//! Who is calling. Every `/mcp` and `/v1` request resolves to a [`Principal`]
//! before anything else runs: no `Authorization` header is the anonymous
//! principal (a first-class mode, not a fallback); a bearer must resolve to
//! an account, or the request is refused with 401 and a `WWW-Authenticate`
//! challenge naming the protected-resource metadata. A bearer is never
//! silently downgraded to anonymous.
//!
//! Accounts, MCP tokens (`lm_…`) and API keys (`lk_…`) arrive with the
//! accounts work; until then no bearer can resolve, so every bearer is
//! refused. [`resolve_bearer`] is the one seam where token lookup plugs in.

pub mod oidc;
pub mod signin;
pub mod siws;

use serde::Serialize;

use crate::error::{AppError, Code};

/// The caller of a request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Principal {
    /// No credential: may quote, pay per call and reuse receipts.
    Anonymous,
}

impl Principal {
    /// A stable key for binding state (sessions) to the principal.
    pub fn key(&self) -> String {
        match self {
            Principal::Anonymous => "anonymous".to_owned(),
        }
    }

    pub fn is_anonymous(&self) -> bool {
        matches!(self, Principal::Anonymous)
    }
}

/// Resolve the `Authorization` header value, if any.
pub fn resolve(authorization: Option<&str>) -> Result<Principal, AppError> {
    match authorization {
        None => Ok(Principal::Anonymous),
        Some(value) => {
            let token = value
                .strip_prefix("Bearer ")
                .or_else(|| value.strip_prefix("bearer "))
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .ok_or_else(|| {
                    AppError::new(
                        Code::Unauthenticated,
                        "the Authorization header must be `Bearer <token>`",
                    )
                })?;
            resolve_bearer(token)
        }
    }
}

/// Look a bearer token up. No token kinds exist yet, so none resolves.
fn resolve_bearer(token: &str) -> Result<Principal, AppError> {
    let kind = if token.starts_with("lm_") {
        "MCP token"
    } else if token.starts_with("lk_") {
        "API key"
    } else {
        "bearer token"
    };
    tracing::info!(kind, "refused an unknown bearer");
    Err(AppError::new(
        Code::Unauthenticated,
        format!("unknown or revoked {kind}; connect without a token to be anonymous"),
    ))
}

/// The result of `ping`, shared by the MCP tool and `GET /v1/ping`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct PingResult {
    /// Always true.
    pub ok: bool,
    /// Who this credential resolves to.
    pub principal: Principal,
    /// How this server takes payment for paid tools.
    pub payments: PaymentsView,
}

/// How paid tools are paid for on this server, as `ping`, `llms.txt` and
/// the MCP instructions tell it (built by `discovery::payments_view`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct PaymentsView {
    pub mode: PaymentsModeView,
    /// The CAIP-2 network payments settle on (x402 modes only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
}

/// off (paid tools answer without charge), x402 (they answer with an x402 challenge) or payments_not_configured (no treasury or fee payer: nothing can be paid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaymentsModeView {
    Off,
    X402,
    PaymentsNotConfigured,
}

impl PaymentsView {
    /// The network as people name it.
    pub fn network_name(&self) -> String {
        match self.network.as_deref() {
            Some(crate::payments::x402::MAINNET) => "Solana mainnet".to_owned(),
            // CAIP-2 names a cluster by its genesis hash, cut to 32 characters.
            Some("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1") => "Solana devnet".to_owned(),
            Some(other) => other.to_owned(),
            None => "Solana".to_owned(),
        }
    }

    /// One clause saying what a paid tool does here.
    pub fn sentence(&self) -> String {
        match self.mode {
            PaymentsModeView::Off => {
                "payments are off on this server: paid tools answer without charge".to_owned()
            }
            PaymentsModeView::X402 => format!(
                "paid tools answer with an x402 challenge (USDC on {})",
                self.network_name()
            ),
            PaymentsModeView::PaymentsNotConfigured => {
                "payments are on but not configured on this server (no treasury or fee payer): \
                 paid tools answer payment_required with status payments_not_configured"
                    .to_owned()
            }
        }
    }
}

/// `ping`: answers ok, the principal and the payment mode.
pub fn ping(principal: &Principal, payments: PaymentsView) -> PingResult {
    PingResult {
        ok: true,
        principal: principal.clone(),
        payments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payments_name_the_network_people_know() {
        let x402 = |network: &str| PaymentsView {
            mode: PaymentsModeView::X402,
            network: Some(network.to_owned()),
        };
        assert_eq!(
            x402(crate::payments::x402::MAINNET).sentence(),
            "paid tools answer with an x402 challenge (USDC on Solana mainnet)"
        );
        assert!(
            x402("solana:other")
                .sentence()
                .ends_with("(USDC on solana:other)")
        );
    }

    #[test]
    fn no_header_is_anonymous() {
        assert_eq!(resolve(None), Ok(Principal::Anonymous));
    }

    #[test]
    fn unknown_mcp_token_is_refused_not_downgraded() {
        let err = resolve(Some("Bearer lm_0123456789")).err();
        assert_eq!(err.map(|e| e.code()), Some(Code::Unauthenticated));
    }

    #[test]
    fn malformed_authorization_is_refused() {
        for value in ["Basic dXNlcjpwYXNz", "Bearer ", "lm_abc"] {
            assert_eq!(
                resolve(Some(value)).err().map(|e| e.code()),
                Some(Code::Unauthenticated),
                "{value}"
            );
        }
    }
}
