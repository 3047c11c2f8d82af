//! JSON-RPC 2.0 messages: parsing what arrived, classifying it, and
//! building replies.
//!
//! A request's `id` is echoed byte for byte: it is kept as the raw JSON text
//! the client wrote ([`Id`]), never as a parsed number, because serde_json
//! reads an integer beyond 64 bits (or any `1.0`, `1e3`) as an `f64` and
//! would answer `1e+29` for `100000000000000000000000000001`. That is why a
//! reply is a [`Response`] (serialized with the raw id) rather than a
//! `serde_json::Value`.

use serde::{Deserialize, Serialize, ser::SerializeMap};
use serde_json::{Map, Value, json, value::RawValue};

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

/// A request id exactly as the client wrote it: a JSON string or number.
#[derive(Clone, Debug)]
pub struct Id(Box<RawValue>);

impl Id {
    /// An id from a parsed value (a message built in code).
    pub fn from_value(value: &Value) -> Option<Self> {
        serde_json::value::to_raw_value(value).ok().map(Id)
    }

    /// The raw JSON text of the id.
    pub fn as_json(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Self) -> bool {
        self.as_json() == other.as_json()
    }
}

/// One message as it arrived: the parsed value and the raw text of its id.
#[derive(Debug)]
pub struct Message {
    pub value: Value,
    raw_id: Option<Box<RawValue>>,
}

impl Message {
    /// A message built in code (tests): its id is read from the value.
    pub fn from_value(value: Value) -> Self {
        let raw_id = value
            .get("id")
            .and_then(|id| serde_json::value::to_raw_value(id).ok());
        Self { value, raw_id }
    }

    /// The id a response to this message would carry, when it is readable
    /// as [`classify`] reads it (a string or a number, named once): what an
    /// error refusing the message before it is classified (a stale session,
    /// an unsupported protocol version header) echoes.
    pub fn readable_id(&self) -> Option<Id> {
        if !matches!(
            self.value.get("id"),
            Some(Value::String(_) | Value::Number(_))
        ) {
            return None;
        }
        self.raw_id
            .as_ref()
            .filter(|raw| is_string_or_number(raw))
            .map(|raw| Id(raw.clone()))
    }
}

/// Whether raw id text is a JSON string or number (not a second `id` of
/// another type that the parsed value does not show).
fn is_string_or_number(raw: &RawValue) -> bool {
    matches!(
        raw.get().as_bytes().first(),
        Some(b'"' | b'-' | b'0'..=b'9')
    )
}

/// A POST body: one message or a batch.
#[derive(Debug)]
pub enum Body {
    Single(Message),
    Batch(Vec<Message>),
}

/// Parse a POST body; `None` when it is not JSON.
pub fn parse(bytes: &[u8]) -> Option<Body> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    Some(match value {
        Value::Array(items) => {
            // The same text again, element by element, for the raw ids.
            let raws: Vec<&RawValue> = serde_json::from_slice(bytes).unwrap_or_default();
            let mut raws = raws.into_iter();
            Body::Batch(
                items
                    .into_iter()
                    .map(|value| Message {
                        raw_id: raws.next().and_then(|raw| raw_id(raw.get().as_bytes())),
                        value,
                    })
                    .collect(),
            )
        }
        value => Body::Single(Message {
            value,
            raw_id: raw_id(bytes),
        }),
    })
}

/// The raw text of a message's `id`. `None` when the message is no object,
/// has no id, or names `id` twice ([`classify`] refuses that message).
fn raw_id(text: &[u8]) -> Option<Box<RawValue>> {
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
    }
    serde_json::from_slice::<Probe>(text)
        .ok()?
        .id
        .map(ToOwned::to_owned)
}

/// One message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: it gets a response with the same id.
    Request {
        id: Id,
        method: String,
        params: Option<Value>,
    },
    /// A notification: no id, no response.
    Notification { method: String },
    /// A response to a request of ours: acknowledged, nothing else.
    Response,
}

/// Classify a message. An invalid message yields the error response to
/// send (with the id when one could be read).
pub fn classify(message: Message) -> Result<Incoming, Response> {
    let Message { value, raw_id } = message;
    let Value::Object(mut obj) = value else {
        return Err(error(
            None,
            INVALID_REQUEST,
            "Invalid Request: a message must be a JSON object",
            None,
        ));
    };
    let id = match obj.remove("id") {
        None => None,
        Some(Value::String(_) | Value::Number(_)) => {
            // Only the raw text is echoed: a message whose `id` has none
            // names `id` twice, and which of the two it meant is unknowable.
            match raw_id.filter(|raw| is_string_or_number(raw)) {
                Some(raw) => Some(Id(raw)),
                None => {
                    return Err(error(
                        None,
                        INVALID_REQUEST,
                        "Invalid Request: a message names id more than once",
                        None,
                    ));
                }
            }
        }
        Some(_) => {
            return Err(error(
                None,
                INVALID_REQUEST,
                "Invalid Request: id must be a string or a number",
                None,
            ));
        }
    };
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(error(
            id,
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
            id,
            INVALID_REQUEST,
            "Invalid Request: method must be a string",
            None,
        )),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            Ok(Incoming::Response)
        }
        None => Err(error(
            id,
            INVALID_REQUEST,
            "Invalid Request: no method",
            None,
        )),
    }
}

/// A response to send: a result or an error, for an id (`None` when the
/// request's id could not be read).
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    id: Option<Id>,
    /// 2026-07-28 leaves an unknown id out instead of writing `null`.
    omit_null_id: bool,
    outcome: Outcome,
}

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Result(Value),
    Error(Map<String, Value>),
}

impl Response {
    /// The error code, when this is an error response.
    pub fn error_code(&self) -> Option<i64> {
        match &self.outcome {
            Outcome::Error(err) => err.get("code").and_then(Value::as_i64),
            Outcome::Result(_) => None,
        }
    }

    /// The response as a JSON value (ids beyond 64 bits lose precision:
    /// for tests and inspection, never for the wire).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Response {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        match &self.id {
            Some(id) => map.serialize_entry("id", &id.0)?,
            None if self.omit_null_id => {}
            None => map.serialize_entry("id", &Value::Null)?,
        }
        match &self.outcome {
            Outcome::Result(result) => map.serialize_entry("result", result)?,
            Outcome::Error(err) => map.serialize_entry("error", err)?,
        }
        map.end()
    }
}

/// What a POST answers: one response, or a batch's array of them.
#[derive(Clone, Debug, PartialEq)]
pub enum Outgoing {
    One(Response),
    Batch(Vec<Response>),
}

impl Serialize for Outgoing {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Outgoing::One(response) => response.serialize(serializer),
            Outgoing::Batch(responses) => responses.serialize(serializer),
        }
    }
}

/// A success response.
pub fn result(id: Id, result: Value) -> Response {
    Response {
        id: Some(id),
        omit_null_id: false,
        outcome: Outcome::Result(result),
    }
}

/// An error response.
pub fn error(id: Option<Id>, code: i64, message: &str, data: Option<Value>) -> Response {
    let mut err = Map::new();
    err.insert("code".to_owned(), json!(code));
    err.insert("message".to_owned(), json!(message));
    if let Some(data) = data {
        err.insert("data".to_owned(), data);
    }
    Response {
        id,
        omit_null_id: false,
        outcome: Outcome::Error(err),
    }
}

/// 2026-07-28 types an error's `id` as a string or integer and leaves it
/// out when the request's id is unknown; JSON-RPC 2.0 (and so every
/// earlier MCP version) writes `null`. Drop a `null` id for the former.
pub fn without_null_id(mut response: Response) -> Response {
    response.omit_null_id = true;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify_value(value: Value) -> Result<Incoming, Response> {
        classify(Message::from_value(value))
    }

    fn id(value: Value) -> Id {
        Id::from_value(&value).unwrap()
    }

    #[test]
    fn request_notification_and_response() {
        assert_eq!(
            classify_value(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})),
            Ok(Incoming::Request {
                id: id(json!(1)),
                method: "tools/list".into(),
                params: None
            })
        );
        assert_eq!(
            classify_value(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
            Ok(Incoming::Notification {
                method: "notifications/initialized".into()
            })
        );
        assert_eq!(
            classify_value(json!({"jsonrpc":"2.0","id":"a","result":{}})),
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
            let err = classify_value(bad.clone()).err();
            assert_eq!(
                err.as_ref().and_then(Response::error_code),
                Some(INVALID_REQUEST),
                "{bad}"
            );
        }
    }

    #[test]
    fn invalid_request_keeps_a_readable_id() {
        let err = classify_value(json!({"jsonrpc":"2.0","id":9,"method":[]})).err();
        assert_eq!(err.map(|e| e.to_value()["id"].clone()), Some(json!(9)));
    }

    fn echoed(body: &str) -> String {
        let Some(Body::Single(message)) = parse(body.as_bytes()) else {
            panic!("one message: {body}");
        };
        let Ok(Incoming::Request { id, .. }) = classify(message) else {
            panic!("a request: {body}");
        };
        serde_json::to_string(&result(id, json!({}))).unwrap()
    }

    #[test]
    fn ids_are_echoed_as_written() {
        for raw in [
            "100000000000000000000000000001",
            "-9223372036854775809",
            "18446744073709551616",
            "1.0",
            "1e3",
            "-0",
            r#""a\u0041""#,
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            assert_eq!(
                echoed(&body),
                format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
            );
        }
    }

    #[test]
    fn a_message_naming_id_twice_is_an_invalid_request() {
        let Some(Body::Single(message)) =
            parse(br#"{"jsonrpc":"2.0","id":100000000000000000000000000001,"id":100000000000000000000000000001,"method":"ping"}"#)
        else {
            panic!("one message");
        };
        let refused = classify(message).unwrap_err();
        let text = serde_json::to_string(&refused).unwrap();
        assert!(text.contains("-32600"), "{text}");
        assert!(text.contains(r#""id":null"#), "{text}");
    }

    #[test]
    fn batch_elements_keep_their_own_raw_ids() {
        let Some(Body::Batch(messages)) = parse(
            br#"[{"jsonrpc":"2.0","id":100000000000000000000000000001,"method":"ping"}, 7,
                {"jsonrpc":"2.0","id":"x","method":"ping"}]"#,
        ) else {
            panic!("a batch");
        };
        let ids: Vec<String> = messages
            .into_iter()
            .map(|m| match classify(m) {
                Ok(Incoming::Request { id, .. }) => id.as_json().to_owned(),
                Ok(other) => panic!("{other:?}"),
                Err(error) => error.to_value()["id"].to_string(),
            })
            .collect();
        assert_eq!(ids, ["100000000000000000000000000001", "null", r#""x""#]);
    }

    #[test]
    fn stateless_errors_leave_an_unknown_id_out() {
        let error = without_null_id(error(None, PARSE_ERROR, "Parse error", None));
        assert_eq!(
            serde_json::to_string(&error).unwrap(),
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#
        );
    }
}
