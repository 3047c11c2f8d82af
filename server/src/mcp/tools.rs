//! The tools, each a thin adapter over a domain function. A tool's
//! `structuredContent` is exactly what its REST twin returns.

use schemars::JsonSchema;
use serde::Deserialize;

use super::registry::{Annotations, Registry, RestRoute, Tier, ToolDef, ToolMeta};
use crate::auth::{self, PingResult};

/// Every tool this server offers.
pub fn registry() -> Registry {
    Registry::new([ping()])
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
