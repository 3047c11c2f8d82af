//! `ping`: ok, who the credential resolves to, and how this server takes
//! payment. The MCP tool and `GET /v1/ping` both answer this.

use serde::Serialize;

use crate::{
    accounts::{Principal, PrincipalView},
    payments::PaymentsView,
};

/// The result of `ping`, shared by the MCP tool and `GET /v1/ping`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct PingResult {
    /// Always true.
    pub ok: bool,
    /// Who this credential resolves to.
    pub principal: PrincipalView,
    /// How this server takes payment for paid tools.
    pub payments: PaymentsView,
}

/// `ping`: answers ok, the principal and the payment mode.
pub fn ping(principal: &Principal, payments: PaymentsView) -> PingResult {
    PingResult {
        ok: true,
        principal: principal.view(),
        payments,
    }
}
