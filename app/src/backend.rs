//! What the portal needs from the backend, and the plain data it gets back.
//!
//! The server implements [`Backend`] and provides it as Leptos context (see
//! `leptos_routes_with_context` in the server's startup); server functions
//! read it there. The data types are serde-plain so they cross into the
//! browser during hydration unchanged.

use serde::{Deserialize, Serialize};

/// Facts about this deployment that pages show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteInfo {
    /// The URL users and agents see, without a trailing slash.
    pub public_url: String,
    /// The server's version.
    pub version: String,
    /// The sample report (`/sample`) is served.
    #[serde(default)]
    pub sample_report: bool,
}

impl SiteInfo {
    /// The MCP endpoint under the public URL.
    pub fn mcp_url(&self) -> String {
        crate::snippets::mcp_url(&self.public_url)
    }
}

/// One MCP tool as the tools page lists it, derived from the tool registry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSummary {
    pub name: String,
    pub title: String,
    /// `free`, `paid`, `paid cached read`, `free, account only`, ...
    pub tier: String,
    pub description: String,
    pub arguments: Vec<ArgumentSummary>,
    pub read_only: bool,
    /// Where a user meets it: `free`, `paid` or `account`.
    pub group: String,
    /// What a call costs, in words, from the tier table quotes use.
    pub price: String,
}

/// One argument of a tool, read from its input schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgumentSummary {
    pub name: String,
    pub required: bool,
    /// The JSON type, as the schema names it (`string`, `integer`, ...).
    pub kind: String,
    pub description: String,
}

/// The backend as the portal sees it. Implemented by the server.
#[cfg(feature = "ssr")]
pub trait Backend: Send + Sync + 'static {
    fn site_info(&self) -> SiteInfo;
    fn tools(&self) -> Vec<ToolSummary>;
}

/// The context value server functions look up.
#[cfg(feature = "ssr")]
#[derive(Clone)]
pub struct BackendHandle(pub std::sync::Arc<dyn Backend>);

#[cfg(feature = "ssr")]
pub(crate) fn backend() -> Result<BackendHandle, leptos::prelude::ServerFnError> {
    leptos::prelude::use_context::<BackendHandle>()
        .ok_or_else(|| leptos::prelude::ServerFnError::new("backend unavailable"))
}
