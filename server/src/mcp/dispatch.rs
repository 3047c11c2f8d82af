//! The JSON-RPC methods, for both eras of the protocol.
//!
//! *Legacy* requests (2024-11-05 … 2025-11-25) negotiate with `initialize`,
//! may carry an `Mcp-Session-Id`, and in 2024-11-05/2025-03-26 may come in
//! batches. *Stateless* requests (2026-07-28) carry their version and the
//! client's capabilities in `params._meta`, are checked against the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers, and know
//! `server/discover` instead of `initialize`. A request is stateless when its
//! `_meta` names a protocol version, when its header says 2026-07-28, or
//! when it is `server/discover`; everything else is legacy.
//!
//! Tool calls are the same in both eras and go through [`call_tool`].

use base64::Engine as _;
use http::StatusCode;
use serde_json::{Map, Value, json};

use super::{
    instructions,
    jsonrpc::{self, INVALID_PARAMS, INVALID_REQUEST, Id, METHOD_NOT_FOUND, Outgoing, Response},
    registry::{CallError, ToolContext},
    server_info, version,
};
use crate::telemetry::metrics::ToolOutcome;

/// How long clients may cache `tools/list` and `server/discover` (2026-07-28).
const LIST_TTL_MS: u64 = 300_000;
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The MCP headers of the POST that carried a message.
#[derive(Clone, Debug, Default)]
pub struct McpHeaders {
    pub protocol_version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
}

/// What to answer for one message.
#[derive(Debug, PartialEq)]
pub struct Reply {
    pub status: StatusCode,
    /// `None` for notifications and responses (HTTP 202, no body).
    pub body: Option<Outgoing>,
}

impl Reply {
    pub fn ok(body: Response) -> Self {
        Self::status(StatusCode::OK, body)
    }

    pub fn status(status: StatusCode, body: Response) -> Self {
        Self {
            status,
            body: Some(Outgoing::One(body)),
        }
    }

    pub fn accepted() -> Self {
        Self {
            status: StatusCode::ACCEPTED,
            body: None,
        }
    }
}

/// Whether a single message follows the stateless (2026-07-28) rules.
pub fn is_stateless(message: &Value, headers: &McpHeaders) -> bool {
    message["method"] == "server/discover"
        || message["params"]["_meta"]
            .get(META_PROTOCOL_VERSION)
            .is_some()
        || headers.protocol_version.as_deref().map(str::trim) == Some(version::STATELESS)
}

/// What `initialize` asks for: the negotiated version and the client.
#[derive(Debug, Clone, PartialEq)]
pub struct Initialize {
    pub version: &'static str,
    pub client_name: String,
    pub client_version: String,
}

/// Read `initialize` params. `Err` is the JSON-RPC error to answer.
pub fn parse_initialize(id: &Id, params: Option<&Value>) -> Result<Initialize, Response> {
    let requested = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            jsonrpc::error(
                Some(id.clone()),
                INVALID_PARAMS,
                "Invalid params: initialize needs params.protocolVersion",
                None,
            )
        })?;
    let client = params.and_then(|p| p.get("clientInfo"));
    let text = |key: &str| {
        client
            .and_then(|c| c.get(key))
            .and_then(Value::as_str)
            .map(|s| s.chars().take(128).collect::<String>())
            .unwrap_or_default()
    };
    Ok(Initialize {
        version: version::negotiate(requested),
        client_name: text("name"),
        client_version: text("version"),
    })
}

/// The `initialize` result for a negotiated version.
pub fn initialize_result(negotiated: &str, state: &crate::state::AppState) -> Value {
    json!({
        "protocolVersion": negotiated,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": server_info(),
        "instructions": instructions(&state.payments_view()),
    })
}

/// A legacy request other than `initialize` (the transport handles that,
/// since it opens a session). `version` is the one the request speaks.
pub async fn legacy_request(
    ctx: ToolContext,
    id: Id,
    method: &str,
    params: Option<Value>,
    version: &str,
) -> Response {
    match method {
        "ping" => jsonrpc::result(id, json!({})),
        "tools/list" => jsonrpc::result(id, crate::mcp::tools::registry().list()),
        "tools/call" => match call_tool(ctx, &id, params, version).await {
            Ok(result) => jsonrpc::result(id, result),
            Err(error) => error,
        },
        "initialize" => jsonrpc::error(
            Some(id),
            INVALID_REQUEST,
            "Invalid Request: initialize must be sent alone, not in a batch",
            None,
        ),
        _ => method_not_found(id, method),
    }
}

fn method_not_found(id: Id, method: &str) -> Response {
    jsonrpc::error(
        Some(id),
        METHOD_NOT_FOUND,
        &format!("Method not found: {method}"),
        None,
    )
}

/// A stateless (2026-07-28) request, checked and answered.
pub async fn stateless_request(
    ctx: ToolContext,
    id: Id,
    method: &str,
    params: Option<Value>,
    headers: &McpHeaders,
) -> Reply {
    if let Err(reply) = check_stateless(&id, method, params.as_ref(), headers) {
        return reply;
    }
    let response = match method {
        "server/discover" => jsonrpc::result(
            id,
            complete(json!({
                "supportedVersions": version::STATELESS_SUPPORTED,
                "capabilities": { "tools": { "listChanged": false } },
                "serverInfo": server_info(),
                "instructions": instructions(&ctx.state.payments_view()),
                "ttlMs": LIST_TTL_MS,
                "cacheScope": "public",
            })),
        ),
        "tools/list" => {
            let mut list = crate::mcp::tools::registry().list();
            if let Some(obj) = list.as_object_mut() {
                obj.insert("ttlMs".to_owned(), json!(LIST_TTL_MS));
                obj.insert("cacheScope".to_owned(), json!("public"));
            }
            jsonrpc::result(id, complete(list))
        }
        "tools/call" => match call_tool(ctx, &id, params, version::STATELESS).await {
            Ok(result) => jsonrpc::result(id, complete(result)),
            Err(error) => error,
        },
        // Removed in 2026-07-28 (initialize, ping, logging/setLevel, …) or
        // never offered: 404 with -32601, as the transport requires.
        _ => return Reply::status(StatusCode::NOT_FOUND, method_not_found(id, method)),
    };
    Reply::ok(response)
}

/// Add what every 2026-07-28 result carries.
fn complete(mut result: Value) -> Value {
    if let Some(obj) = result.as_object_mut() {
        obj.insert("resultType".to_owned(), json!("complete"));
        let meta = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(META_SERVER_INFO.to_owned(), server_info());
        }
    }
    result
}

/// The per-request checks of 2026-07-28, in the order the spec gives them.
fn check_stateless(
    id: &Id,
    method: &str,
    params: Option<&Value>,
    headers: &McpHeaders,
) -> Result<(), Reply> {
    let bad = |code: i64, message: &str, data: Option<Value>| {
        Reply::status(
            StatusCode::BAD_REQUEST,
            jsonrpc::error(Some(id.clone()), code, message, data),
        )
    };
    let meta = params.and_then(|p| p.get("_meta"));
    let requested = meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let capabilities = meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES));
    let Some(requested) = requested else {
        return Err(bad(
            INVALID_PARAMS,
            "Invalid params: params._meta must name io.modelcontextprotocol/protocolVersion",
            None,
        ));
    };
    if !capabilities.is_some_and(Value::is_object) {
        return Err(bad(
            INVALID_PARAMS,
            "Invalid params: params._meta must carry io.modelcontextprotocol/clientCapabilities",
            None,
        ));
    }
    if headers.protocol_version.as_deref().map(str::trim) != Some(requested) {
        return Err(bad(
            jsonrpc::HEADER_MISMATCH,
            "Header mismatch: MCP-Protocol-Version must equal params._meta's protocol version",
            None,
        ));
    }
    if !version::STATELESS_SUPPORTED.contains(&requested) {
        return Err(bad(
            jsonrpc::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            Some(json!({
                "supported": version::STATELESS_SUPPORTED,
                "requested": requested,
            })),
        ));
    }
    if headers.method.as_deref().map(str::trim) != Some(method) {
        return Err(bad(
            jsonrpc::HEADER_MISMATCH,
            "Header mismatch: Mcp-Method must equal the request's method",
            None,
        ));
    }
    let named = match method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
        "resources/read" => params.and_then(|p| p.get("uri")),
        _ => None,
    };
    if let Some(named) = named {
        let header = headers.name.as_deref().map(decode_header_value);
        if header.as_deref() != named.as_str() {
            return Err(bad(
                jsonrpc::HEADER_MISMATCH,
                "Header mismatch: Mcp-Name must equal the request's name or uri",
                None,
            ));
        }
    }
    Ok(())
}

/// Header values may be wrapped as `=?base64?…?=` (UTF-8 inside);
/// surrounding whitespace is not part of the value.
fn decode_header_value(raw: &str) -> String {
    let trimmed = raw.trim();
    trimmed
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| trimmed.to_owned())
}

/// `tools/call`: run a tool and shape its result. `Err` is a JSON-RPC
/// error: an unknown tool, or a request that is not a `CallToolRequest`
/// (no params, no tool name, `arguments` that are not an object), on every
/// revision; arguments the input schema refuses only before 2025-11-25.
/// From 2025-11-25 on those are input validation errors, reported like a
/// tool's own refusal: a result with `isError: true` and the
/// `invalid_params` body, so that a model reads why and corrects itself
/// ([`version::validation_errors_are_results`]).
pub async fn call_tool(
    ctx: ToolContext,
    id: &Id,
    params: Option<Value>,
    version: &str,
) -> Result<Value, Response> {
    let invalid =
        |message: String| jsonrpc::error(Some(id.clone()), INVALID_PARAMS, &message, None);
    let Some(Value::Object(mut params)) = params else {
        return Err(invalid(
            "Invalid params: tools/call needs params {name, arguments}".to_owned(),
        ));
    };
    let name = match params.remove("name") {
        Some(Value::String(name)) => name,
        _ => {
            return Err(invalid(
                "Invalid params: params.name must name a tool".to_owned(),
            ));
        }
    };
    let Some(tool) = crate::mcp::tools::registry().get(&name) else {
        return Err(invalid(format!("Unknown tool: {name}")));
    };
    let args = match params.remove("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args,
        Some(_) => {
            return Err(invalid(format!(
                "Invalid params: arguments for {name} must be a JSON object"
            )));
        }
    };
    let structured_ok = version::has_structured_content(version);
    let metrics = ctx.state.metrics().clone();
    let started = std::time::Instant::now();
    let outcome = tool.call(ctx, args).await;
    metrics.tool_call(
        tool.meta.name,
        match &outcome {
            Ok(_) => ToolOutcome::Ok,
            Err(CallError::InvalidArguments(_)) => ToolOutcome::InvalidArguments,
            Err(CallError::Tool(err)) => ToolOutcome::Refused(err.code().as_str()),
        },
        started.elapsed(),
    );
    match outcome {
        Ok(out) => {
            let mut result = tool_result(&out.summary, out.structured, false, structured_ok);
            if let Some(text) = out.text
                && let Some(content) = result["content"].as_array_mut()
            {
                content.insert(1, json!({ "type": "text", "text": text }));
            }
            // resource_link content exists from 2025-06-18, with structuredContent.
            if let (Some(link), true) = (out.link, structured_ok)
                && let Some(content) = result["content"].as_array_mut()
            {
                content.push(link);
            }
            Ok(result)
        }
        Err(CallError::InvalidArguments(message))
            if version::validation_errors_are_results(version) =>
        {
            let err = crate::error::AppError::invalid_params(message);
            Ok(tool_result(
                &err.summary(),
                err.rest_body(),
                true,
                structured_ok,
            ))
        }
        Err(CallError::InvalidArguments(message)) => Err(invalid(format!(
            "Invalid params: arguments for {name}: {message}"
        ))),
        Err(CallError::Tool(err)) => Ok(tool_result(
            &err.summary(),
            err.rest_body(),
            true,
            structured_ok,
        )),
    }
}

/// A `CallToolResult`: the one-line summary first; clients older than
/// 2025-06-18 cannot read `structuredContent`, so they also get it as text.
fn tool_result(summary: &str, structured: Value, is_error: bool, structured_ok: bool) -> Value {
    let mut content = vec![json!({ "type": "text", "text": summary })];
    if !structured_ok {
        content.push(json!({ "type": "text", "text": structured.to_string() }));
    }
    json!({
        "content": content,
        "structuredContent": structured,
        "isError": is_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_wrapped_header_values_decode() {
        assert_eq!(decode_header_value("  ping  "), "ping");
        assert_eq!(decode_header_value("=?base64?cGluZw==?="), "ping");
        assert_eq!(
            decode_header_value("=?base64?not base64?="),
            "=?base64?not base64?="
        );
    }

    #[test]
    fn stateless_detection() {
        let h = McpHeaders::default();
        assert!(is_stateless(&json!({"method":"server/discover"}), &h));
        assert!(is_stateless(
            &json!({"method":"tools/list","params":{"_meta":{META_PROTOCOL_VERSION:"2026-07-28"}}}),
            &h
        ));
        assert!(!is_stateless(&json!({"method":"tools/list"}), &h));
        let h = McpHeaders {
            protocol_version: Some("2026-07-28".into()),
            ..McpHeaders::default()
        };
        assert!(is_stateless(&json!({"method":"tools/list"}), &h));
    }
}
