//! A minimal MCP client over Streamable HTTP: enough to initialize a session
//! and call tools, nothing more (no tools/list, no server-sent requests).
//!
//! It speaks 2025-06-18 with a session, as the MCP page's curl walk-through
//! does: `initialize`, keep the `Mcp-Session-Id` the server assigns, send
//! `notifications/initialized`, then `tools/call`, each POST carrying the
//! session, the negotiated `MCP-Protocol-Version`, the bearer and every `-H`
//! header. A reply is read whether it comes as `application/json` or as a
//! `text/event-stream` holding the message in a `data:` line. An HTTP 429 is
//! waited out (`Retry-After` whole seconds, 1 when absent) and the same POST
//! sent again, up to [`MAX_RATE_LIMIT_RETRIES`] times.

use std::time::Duration;

use reqwest::{StatusCode, header::HeaderMap};
use serde_json::{Map, Value, json};

/// The protocol version this client asks for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";
/// Versions with the initialize handshake whose `tools/call` we can read.
const SESSION_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// How many 429s in a row are waited out before giving up.
pub const MAX_RATE_LIMIT_RETRIES: u32 = 5;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("POST {url}: {reason}")]
    Transport { url: String, reason: String },
    #[error("POST {url}: HTTP {status}: {body}")]
    Http {
        url: String,
        status: StatusCode,
        body: String,
    },
    #[error(
        "POST {url}: still rate limited (HTTP 429) after {MAX_RATE_LIMIT_RETRIES} retries; present a bearer (-bearer) for an account's larger budget"
    )]
    RateLimited { url: String },
    #[error("{method}: JSON-RPC error {code}: {message}")]
    JsonRpc {
        method: String,
        code: i64,
        message: String,
    },
    #[error("{0}")]
    Protocol(String),
}

pub struct McpClient {
    http: reqwest::Client,
    url: String,
    /// Authorization and `-H` headers, sent on every POST.
    headers: Vec<(String, String)>,
    session: Option<String>,
    protocol_version: Option<String>,
    next_id: u64,
}

struct Reply {
    session: Option<String>,
    message: Option<Value>,
}

impl McpClient {
    pub fn new(
        url: &str,
        bearer: Option<&str>,
        extra_headers: &[(String, String)],
    ) -> Result<Self, McpError> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .user_agent(concat!("x402pay/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| McpError::Transport {
                url: url.to_owned(),
                reason: e.to_string(),
            })?;
        let mut headers = Vec::with_capacity(extra_headers.len() + 1);
        if let Some(token) = bearer {
            headers.push(("Authorization".to_owned(), format!("Bearer {token}")));
        }
        headers.extend(extra_headers.iter().cloned());
        Ok(Self {
            http,
            url: url.to_owned(),
            headers,
            session: None,
            protocol_version: None,
            next_id: 1,
        })
    }

    /// `initialize` then `notifications/initialized`.
    pub async fn initialize(&mut self) -> Result<(), McpError> {
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "x402pay", "version": env!("CARGO_PKG_VERSION")}
        });
        let (result, session) = self.request("initialize", params).await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(PROTOCOL_VERSION);
        if !SESSION_VERSIONS.contains(&version) {
            return Err(McpError::Protocol(format!(
                "initialize: the server answered protocol version {version:?}; x402pay speaks {}",
                SESSION_VERSIONS.join(", ")
            )));
        }
        self.protocol_version = Some(version.to_owned());
        self.session = session;
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.post(&notification).await?;
        Ok(())
    }

    /// `tools/call`; returns the JSON-RPC `result` (a tool error is a result).
    pub async fn call_tool(
        &mut self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<Value, McpError> {
        let params = json!({"name": name, "arguments": arguments});
        Ok(self.request("tools/call", params).await?.0)
    }

    async fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<(Value, Option<String>), McpError> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let reply = self.post(&body).await?;
        let mut message = reply.message.ok_or_else(|| {
            McpError::Protocol(format!("{method}: the server answered with no message"))
        })?;
        if let Some(error) = message.get("error") {
            return Err(McpError::JsonRpc {
                method: method.to_owned(),
                code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)")
                    .to_owned(),
            });
        }
        let result = message
            .get_mut("result")
            .map(Value::take)
            .ok_or_else(|| McpError::Protocol(format!("{method}: reply has no result")))?;
        Ok((result, reply.session))
    }

    async fn post(&self, body: &Value) -> Result<Reply, McpError> {
        let transport = |e: reqwest::Error| McpError::Transport {
            url: self.url.clone(),
            reason: e.to_string(),
        };
        let mut retries = 0;
        loop {
            let mut request = self
                .http
                .post(&self.url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream");
            if let Some(session) = &self.session {
                request = request.header(SESSION_HEADER, session);
            }
            if let Some(version) = &self.protocol_version {
                request = request.header(VERSION_HEADER, version);
            }
            for (name, value) in &self.headers {
                request = request.header(name, value);
            }
            let response = request.json(body).send().await.map_err(transport)?;
            let status = response.status();
            if status == StatusCode::TOO_MANY_REQUESTS {
                if retries >= MAX_RATE_LIMIT_RETRIES {
                    return Err(McpError::RateLimited {
                        url: self.url.clone(),
                    });
                }
                retries += 1;
                let wait = retry_after(response.headers());
                eprintln!(
                    "x402pay: rate limited (HTTP 429); waiting {wait}s, retry {retries} of {MAX_RATE_LIMIT_RETRIES}"
                );
                tokio::time::sleep(Duration::from_secs(wait)).await;
                continue;
            }
            let session = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let is_sse = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
            let text = response.text().await.map_err(transport)?;
            if !status.is_success() {
                return Err(McpError::Http {
                    url: self.url.clone(),
                    status,
                    body: snippet(&text),
                });
            }
            if status == StatusCode::ACCEPTED || text.trim().is_empty() {
                return Ok(Reply {
                    session,
                    message: None,
                });
            }
            let message = if is_sse {
                sse_message(&text, body.get("id"))
            } else {
                serde_json::from_str(&text).ok()
            }
            .ok_or_else(|| {
                McpError::Protocol(format!(
                    "POST {}: the reply is not a JSON-RPC message: {}",
                    self.url,
                    snippet(&text)
                ))
            })?;
            return Ok(Reply {
                session,
                message: Some(message),
            });
        }
    }
}

/// `Retry-After` in whole seconds; 1 when absent or not an integer.
pub fn retry_after(headers: &HeaderMap) -> u64 {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1)
}

/// The JSON-RPC response in an event stream: each event's `data:` lines
/// joined; the first event answering `id` (or, failing that, the first
/// response of any id) wins.
pub fn sse_message(text: &str, id: Option<&Value>) -> Option<Value> {
    let mut messages = Vec::new();
    let mut data = String::new();
    let normalized = text.replace("\r\n", "\n");
    for line in normalized.split('\n').chain(std::iter::once("")) {
        if line.is_empty() {
            if !data.is_empty()
                && let Ok(value) = serde_json::from_str::<Value>(&data)
            {
                messages.push(value);
            }
            data.clear();
        } else if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    let is_response = |m: &Value| m.get("result").is_some() || m.get("error").is_some();
    let position = messages
        .iter()
        .position(|m| is_response(m) && id.is_some() && m.get("id") == id)
        .or_else(|| messages.iter().position(is_response))?;
    Some(messages.swap_remove(position))
}

fn snippet(text: &str) -> String {
    let t: String = text.chars().take(300).collect();
    t.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderValue, RETRY_AFTER};

    use super::*;

    #[test]
    fn retry_after_is_whole_seconds_defaulting_to_one() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), 1);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&headers), 3);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("0"));
        assert_eq!(retry_after(&headers), 0);
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2026 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), 1);
    }

    #[test]
    fn reads_the_response_out_of_an_event_stream() {
        let one = "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"ok\":true}}\r\n\r\n";
        assert_eq!(
            sse_message(one, Some(&json!(3))),
            Some(json!({"jsonrpc": "2.0", "id": 3, "result": {"ok": true}}))
        );
        // A notification first, then ours split over two data lines.
        let two = ": comment\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n\
                   data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":4,\"result\":{}}\n";
        assert_eq!(
            sse_message(two, Some(&json!(4))),
            Some(json!({"jsonrpc": "2.0", "id": 4, "result": {}}))
        );
        assert_eq!(sse_message("event: ping\n\n", Some(&json!(1))), None);
    }
}
