//! How paid tools are paid for on this server, as `ping`, `llms.txt`, the
//! server card and the MCP instructions tell it: one view built from the
//! payments mode and whether the fee payer and treasury are loaded, so no
//! surface can claim a mode the paywall does not apply.

use serde::Serialize;

use super::settle::Runtime;
use crate::config::PaymentsMode;

/// How paid tools are paid for on this server, as `ping`, `llms.txt` and
/// the MCP instructions tell it.
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
            Some(crate::solana::MAINNET) => "Solana mainnet".to_owned(),
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

/// The view of `mode` with `runtime`'s keys on `network`: x402 without the
/// treasury and fee payer it needs answers `payments_not_configured`.
pub fn view(mode: PaymentsMode, runtime: &Runtime, network: &str) -> PaymentsView {
    let mode = match mode {
        PaymentsMode::Off => PaymentsModeView::Off,
        PaymentsMode::X402 if runtime.ready().is_some() => PaymentsModeView::X402,
        PaymentsMode::X402 => PaymentsModeView::PaymentsNotConfigured,
    };
    PaymentsView {
        mode,
        network: (mode != PaymentsModeView::Off).then(|| network.to_owned()),
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
            x402(crate::solana::MAINNET).sentence(),
            "paid tools answer with an x402 challenge (USDC on Solana mainnet)"
        );
        assert!(
            x402("solana:other")
                .sentence()
                .ends_with("(USDC on solana:other)")
        );
    }
}
