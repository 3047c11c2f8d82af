//! The tools, each a thin adapter over a domain function. A tool's
//! `structuredContent` is exactly what its REST twin returns.

use schemars::JsonSchema;
use serde::Deserialize;

use super::registry::{Annotations, Registry, RestRoute, Tier, ToolDef, ToolMeta};
use crate::{
    auth::{self, PingResult},
    payments::{self, Quote, QuoteWalletArgs},
};

/// Every tool this server offers.
pub fn registry() -> Registry {
    Registry::new([ping(), quote_wallet()])
}

fn quote_wallet() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "quote_wallet",
            title: "Quote a wallet scan",
            description: "Price a scan of a Solana wallet. Free. Returns the quote (quote_id, tier, \
                price_usd, amount_atomic, expires_at) and the tier table. scope is \"full\" (whole \
                history, default), \"preview\" (the most recent signatures only), \"incremental\" \
                (only what is new since the last scan: the cheap way to keep an already-scanned \
                wallet current, and near-free for a wallet that has not moved), \"refresh\" \
                (re-lists the whole history and fetches only what is missing) or \"read\" (what a \
                cached read of an already-scanned wallet costs). A quote fixes the wallet, the \
                scope and the price for fifteen minutes; scan_wallet needs a live one.",
            tier: Tier::Free,
            annotations: Annotations {
                read_only: false,
                destructive: false,
                idempotent: false,
                open_world: true,
            },
            rest: Some(RestRoute {
                method: "POST",
                path: "/v1/quotes",
            }),
        },
        |q: &Quote| {
            let size = q
                .signatures
                .map(|s| {
                    format!(
                        ", {}{} signatures counted",
                        s.counted,
                        if s.complete { "" } else { "+" }
                    )
                })
                .unwrap_or_default();
            format!(
                "Quote {} for a {} scan of {}: tier {}, {} USD ({} atomic USDC){}; expires {}. \
                 Start it with scan_wallet quote_id={}.",
                q.quote_id,
                q.scope.as_str(),
                q.address.short(),
                q.tier,
                q.price_usd,
                q.amount_atomic,
                size,
                q.expires_at,
                q.quote_id
            )
        },
        |ctx, args: QuoteWalletArgs| async move { payments::quote(&ctx.state, args).await },
    )
}

/// `ping` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PingArgs {}

fn ping() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "ping",
            title: "Ping",
            description: "Answers ok with the principal this session's credential resolves to: \
                anonymous when no Authorization header was sent, otherwise the account and scopes \
                of the MCP token or API key. The quickest way to check a connection or what a \
                token does. Free.",
            tier: Tier::Free,
            annotations: Annotations {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
            rest: Some(RestRoute {
                method: "GET",
                path: "/v1/ping",
            }),
        },
        |out: &PingResult| {
            match &out.principal {
            auth::Principal::Anonymous => {
                "ok: connected anonymously (no bearer token); paid tools answer with an x402 challenge."
                    .to_owned()
            }
        }
        },
        |ctx, _args: PingArgs| async move { Ok(auth::ping(&ctx.principal)) },
    )
}
