//! JSON-RPC 2.0 messages: classifying what arrived and building replies.

use serde_json::{Map, Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// An `Mcp-Session-Id` we do not know (sent with HTTP 404).
pub const SESSION_NOT_FOUND: i64 = -32001;
/// 2026-07-28: a header disagrees with the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability it did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the requested protocol version is not supported.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// One message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: it gets a response with the same id.
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    /// A notification: no id, no response.
    Notification { method: String },
    /// A response to a request of ours: acknowledged, nothing else.
    Response,
}

/// Classify a parsed JSON value. An invalid message yields the error
/// response to send (with the id when one could be read).
pub fn classify(message: Value) -> Result<Incoming, Value> {
    let Value::Object(mut obj) = message else {
        return Err(error(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a message must be a JSON object",
            None,
        ));
    };
    let id = match obj.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
        Some(_) => {
            return Err(error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: id must be a string or a number",
                None,
            ));
        }
    };
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "Invalid Request: jsonrpc must be \"2.0\"",
            None,
        ));
    }
    match obj.remove("method") {
        Some(Value::String(method)) => {
            let params = obj.remove("params");
            match id {
                Some(id) => Ok(Incoming::Request { id, method, params }),
                None => Ok(Incoming::Notification { method }),
            }
        }
        Some(_) => Err(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "Invalid Request: method must be a string",
            None,
        )),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            Ok(Incoming::Response)
        }
        None => Err(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "Invalid Request: no method",
            None,
        )),
    }
}

/// A success response.
pub fn result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response.
pub fn error(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut err = Map::new();
    err.insert("code".to_owned(), json!(code));
    err.insert("message".to_owned(), json!(message));
    if let Some(data) = data {
        err.insert("data".to_owned(), data);
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": err })
}

/// 2026-07-28 types an error's `id` as a string or integer and leaves it
/// out when the request's id is unknown; JSON-RPC 2.0 (and so every
/// earlier MCP version) writes `null`. Drop a `null` id for the former.
pub fn without_null_id(mut response: Value) -> Value {
    if let Some(obj) = response.as_object_mut()
        && obj.get("id") == Some(&Value::Null)
    {
        obj.remove("id");
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_notification_and_response() {
        assert_eq!(
            classify(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})),
            Ok(Incoming::Request {
                id: json!(1),
                method: "tools/list".into(),
                params: None
            })
        );
        assert_eq!(
            classify(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
            Ok(Incoming::Notification {
                method: "notifications/initialized".into()
            })
        );
        assert_eq!(
            classify(json!({"jsonrpc":"2.0","id":"a","result":{}})),
            Ok(Incoming::Response)
        );
    }

    #[test]
    fn invalid_messages_are_invalid_requests() {
        for bad in [
            json!(7),
            json!({"id":1,"method":"x"}),
            json!({"jsonrpc":"1.0","id":1,"method":"x"}),
            json!({"jsonrpc":"2.0","id":1,"method":5}),
            json!({"jsonrpc":"2.0","id":{"a":1},"method":"x"}),
            json!({"jsonrpc":"2.0","id":null,"method":"x"}),
            json!({"jsonrpc":"2.0","id":1}),
        ] {
            let err = classify(bad.clone()).err();
            assert_eq!(
                err.as_ref().map(|e| e["error"]["code"].clone()),
                Some(json!(INVALID_REQUEST)),
                "{bad}"
            );
        }
    }

    #[test]
    fn invalid_request_keeps_a_readable_id() {
        let err = classify(json!({"jsonrpc":"2.0","id":9,"method":[]})).err();
        assert_eq!(err.map(|e| e["id"].clone()), Some(json!(9)));
    }
}
