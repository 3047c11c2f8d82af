//! How large a tool result may be inside a JSON-RPC answer (SPEC T9).
//!
//! A result over [`INLINE_LIMIT`] bytes of JSON is not sent inline: the
//! call answers a small `structuredContent` naming the REST route that
//! returns the same JSON, plus a `resource_link` content item for clients
//! that read links. Without it a 4 KB batch of twenty calls could ask for
//! twenty copies of a multi-megabyte body, twice over for clients that read
//! the text copy, all held in memory at once. The REST route stays the one
//! place a large body is served, streamed from its bytes.
//!
//! The size is measured on the serialized bytes, never on a
//! `serde_json::Value` tree (several times larger in memory), and a large
//! result is never turned into one.

use serde::{Deserialize, de::IgnoredAny};
use serde_json::{Value, json};

/// The REST route that answers the same as a tool: where a linked result
/// is read in full.
pub use crate::routes::RestRoute;

/// Results up to 256 KiB of JSON are inline; larger ones are linked.
pub const INLINE_LIMIT: usize = 256 * 1024;

/// Arguments that pay for one call only: a link must not carry them (the
/// payment is spent; its receipt, when there is one, goes instead).
const ONE_SHOT: [&str; 2] = ["payment", "quote_id"];

/// A result too large to inline: what the call answers instead.
pub struct Linked {
    /// The `structuredContent`: code, message, the URI and size, and the
    /// call's payment block when it settled one (its receipt reads the link).
    pub structured: Value,
    /// The `resource_link` content item.
    pub content: Value,
    /// A sentence for the model's one-line summary.
    pub sentence: String,
}

/// Only the `payment` member of a serialized result, every other member
/// skipped without being built.
#[derive(Deserialize)]
struct PaymentOnly {
    #[serde(default)]
    payment: Option<Value>,
    #[serde(flatten)]
    _rest: std::collections::HashMap<String, IgnoredAny>,
}

/// The link answering a result of `bytes` for `tool` called with `args`,
/// or `None` when the result fits inline or the tool has no GET twin.
pub fn link(
    public_url: &str,
    tool: &str,
    rest: Option<RestRoute>,
    args: &Value,
    bytes: &[u8],
) -> Option<Linked> {
    if bytes.len() <= INLINE_LIMIT {
        return None;
    }
    let rest = rest.filter(|r| r.method == "GET")?;
    let payment = serde_json::from_slice::<PaymentOnly>(bytes)
        .ok()
        .and_then(|p| p.payment);
    let receipt = payment
        .as_ref()
        .and_then(|p| p.get("receipt"))
        .and_then(Value::as_str)
        .or_else(|| args.get("receipt").and_then(Value::as_str));
    let uri = rest_uri(public_url, rest.path, args, receipt)?;
    let size = bytes.len();
    let message = format!(
        "The result is {} of JSON, over the {} KiB a tool result carries inline; \
         GET {uri} answers the same JSON as this tool's result.",
        human_bytes(size),
        INLINE_LIMIT / 1024,
    );
    let mut structured = json!({
        "code": "result_linked",
        "message": message,
        "uri": uri,
        "mime_type": "application/json",
        "bytes": size,
    });
    if let Some(payment) = payment {
        structured["payment"] = payment;
    }
    let content = json!({
        "type": "resource_link",
        "uri": uri,
        "name": format!("{tool} result"),
        "mimeType": "application/json",
        "size": size,
        "description": format!("The full {tool} result ({})", human_bytes(size)),
    });
    Some(Linked {
        structured,
        content,
        sentence: message,
    })
}

/// The REST route's URL for these arguments: `{name}` segments from the
/// arguments, the rest as query parameters (arrays comma-separated, as the
/// routes read them), one-shot payment arguments left out.
pub(crate) fn rest_uri(
    public_url: &str,
    path: &str,
    args: &Value,
    receipt: Option<&str>,
) -> Option<String> {
    let args = args.as_object();
    let mut in_path = Vec::new();
    let mut filled = String::new();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        filled.push('/');
        match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) => {
                let value = args?.get(name)?.as_str()?;
                in_path.push(name);
                filled.extend(url::form_urlencoded::byte_serialize(value.as_bytes()));
            }
            None => filled.push_str(segment),
        }
    }
    let mut url = url::Url::parse(public_url).ok()?.join(&filled).ok()?;
    {
        let mut query = url.query_pairs_mut();
        for (key, value) in args.into_iter().flatten() {
            if in_path.contains(&key.as_str())
                || ONE_SHOT.contains(&key.as_str())
                || key == "receipt"
            {
                continue;
            }
            let text = match value {
                Value::Null => continue,
                Value::String(s) => s.clone(),
                Value::Array(items) => items
                    .iter()
                    .map(|i| match i {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                other => other.to_string(),
            };
            query.append_pair(key, &text);
        }
        if let Some(receipt) = receipt {
            query.append_pair("receipt", receipt);
        }
    }
    if url.query() == Some("") {
        url.set_query(None);
    }
    Some(url.into())
}

pub(crate) fn human_bytes(n: usize) -> String {
    if n >= 1024 * 1024 {
        format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KiB", n.div_ceil(1024))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUTE: RestRoute = RestRoute {
        method: "GET",
        path: "/v1/wallets/{address}/value-history",
    };

    fn big(payment: Option<Value>) -> Vec<u8> {
        let mut body = json!({ "points": "x".repeat(INLINE_LIMIT) });
        if let Some(p) = payment {
            body["payment"] = p;
        }
        serde_json::to_vec(&body).unwrap()
    }

    #[test]
    fn a_result_within_the_limit_stays_inline() {
        let body = serde_json::to_vec(&json!({"points": "x".repeat(1000)})).unwrap();
        assert!(link("http://h", "t", Some(ROUTE), &json!({}), &body).is_none());
    }

    #[test]
    fn a_large_result_links_its_rest_route_with_the_same_arguments() {
        let args = json!({
            "address": "So11111111111111111111111111111111111111112",
            "from": "2020-01-01",
            "granularity": "1h",
            "payment": "spent",
            "quote_id": "q_1",
            "receipt": "r-from-args",
            "exclude": ["airdrop_spam", "fee"],
            "top": 0,
        });
        let linked = link(
            "https://ledger.example",
            "get_value_history",
            Some(ROUTE),
            &args,
            &big(None),
        )
        .unwrap();
        let uri = linked.structured["uri"].as_str().unwrap();
        assert_eq!(
            uri,
            "https://ledger.example/v1/wallets/So11111111111111111111111111111111111111112/value-history\
             ?exclude=airdrop_spam%2Cfee&from=2020-01-01&granularity=1h&top=0&receipt=r-from-args"
        );
        assert_eq!(linked.content["type"], "resource_link");
        assert_eq!(linked.content["uri"], uri);
        assert_eq!(linked.structured["code"], "result_linked");
        assert!(linked.structured["bytes"].as_u64().unwrap() > INLINE_LIMIT as u64);
    }

    #[test]
    fn a_settled_payment_travels_with_the_link_and_its_receipt_reads_it() {
        let payment = json!({"settled": true, "receipt": "r-settled", "transaction": "t"});
        let args = json!({"address": "So11111111111111111111111111111111111111112"});
        let linked = link(
            "http://127.0.0.1:1",
            "get_value_history",
            Some(ROUTE),
            &args,
            &big(Some(payment.clone())),
        )
        .unwrap();
        assert_eq!(linked.structured["payment"], payment);
        assert!(
            linked.structured["uri"]
                .as_str()
                .unwrap()
                .ends_with("/value-history?receipt=r-settled")
        );
    }

    #[test]
    fn a_tool_without_a_get_twin_answers_inline() {
        let post = RestRoute {
            method: "POST",
            path: "/v1/quotes",
        };
        assert!(link("http://h", "t", Some(post), &json!({}), &big(None)).is_none());
        assert!(link("http://h", "t", None, &json!({}), &big(None)).is_none());
    }
}
