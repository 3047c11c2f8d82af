//! The x402 wire: the challenge body (`accepts[]`), the payment value a
//! client sends back (base64 JSON wrapping a base64 transaction), and the
//! settlement response header. Shapes follow the x402 exact scheme on
//! Solana, version 1 as our client guide shows it, with the version 2
//! headers (`PAYMENT-REQUIRED`, `PAYMENT-SIGNATURE`, `PAYMENT-RESPONSE`) read
//! and written alongside (docs/payments.md, "Standard clients").

use base64::{Engine, engine::general_purpose};
use serde::Serialize;
use serde_json::{Value, json};

use super::verify::Refusal;

pub use crate::solana::{MAINNET, USDC_MAINNET};

/// One priced thing a challenge asks for.
#[derive(Clone, Debug)]
pub struct Requirement {
    pub network: String,
    pub asset: String,
    pub decimals: u8,
    pub amount: u64,
    pub pay_to: String,
    pub fee_payer: String,
    pub max_timeout_secs: u64,
    pub resource: String,
    pub description: String,
    pub quote_id: String,
}

impl Requirement {
    /// `accepts[0]` of the challenge.
    pub fn accepts_entry(&self) -> Value {
        json!({
            "scheme": "exact",
            "network": self.network,
            "asset": self.asset,
            "amount": self.amount.to_string(),
            "payTo": self.pay_to,
            "maxTimeoutSeconds": self.max_timeout_secs,
            "resource": self.resource,
            "description": self.description,
            "mimeType": "application/json",
            "extra": {
                "quoteId": self.quote_id,
                "decimals": self.decimals.to_string(),
                "feePayer": self.fee_payer,
                "memo": self.quote_id,
            }
        })
    }

    /// The version 1 body: what REST answers with HTTP 402 and MCP puts
    /// under `structuredContent.x402`.
    pub fn body(&self, error: Option<&str>) -> Value {
        let mut body = json!({"x402Version": 1, "accepts": [self.accepts_entry()]});
        if let Some(error) = error {
            body["error"] = json!(error);
        }
        body
    }

    /// The version 2 `PAYMENT-REQUIRED` header value (base64 JSON).
    pub fn v2_header(&self, public_url: &str, error: Option<&str>) -> String {
        let mut accepted = self.accepts_entry();
        if let Some(map) = accepted.as_object_mut() {
            map.remove("resource");
            map.remove("description");
            map.remove("mimeType");
        }
        let mut body = json!({
            "x402Version": 2,
            "resource": {
                "url": format!("{public_url}{}", self.resource),
                "description": self.description,
                "mimeType": "application/json",
            },
            "accepts": [accepted],
        });
        if let Some(error) = error {
            body["error"] = json!(error);
        }
        general_purpose::STANDARD.encode(body.to_string())
    }
}

/// A payment value as presented: the transaction bytes and which x402
/// version wrapped them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaymentValue {
    pub version: u8,
    pub transaction: Vec<u8>,
}

fn decode_b64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    general_purpose::STANDARD
        .decode(text)
        .or_else(|_| general_purpose::URL_SAFE.decode(text))
        .or_else(|_| general_purpose::URL_SAFE_NO_PAD.decode(text))
        .or_else(|_| general_purpose::STANDARD_NO_PAD.decode(text))
        .ok()
}

/// The largest payment value we read (a Solana transaction is at most
/// 1232 bytes; base64 twice over and JSON leave room to spare).
const MAX_VALUE_LEN: usize = 8 * 1024;

/// Parse a payment value (`payment` argument, `X-PAYMENT` or
/// `PAYMENT-SIGNATURE` header) and check it is for `network`.
pub fn parse_payment(value: &str, network: &str) -> Result<PaymentValue, Refusal> {
    let malformed = |why: &str| Refusal::Malformed(why.to_owned());
    if value.len() > MAX_VALUE_LEN {
        return Err(malformed("the payment value is too long"));
    }
    let json_bytes = decode_b64(value).ok_or_else(|| malformed("the value is not base64"))?;
    let payload: Value = serde_json::from_slice(&json_bytes)
        .map_err(|_| malformed("the value is not base64 of JSON"))?;
    let version = payload
        .get("x402Version")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed("x402Version is missing"))?;
    let (scheme, got_network) = match version {
        1 => (
            payload.get("scheme").and_then(Value::as_str),
            payload.get("network").and_then(Value::as_str),
        ),
        2 => {
            let accepted = payload.get("accepted");
            (
                accepted
                    .and_then(|a| a.get("scheme"))
                    .and_then(Value::as_str),
                accepted
                    .and_then(|a| a.get("network"))
                    .and_then(Value::as_str),
            )
        }
        _ => return Err(malformed("x402Version must be 1 or 2")),
    };
    if scheme != Some("exact") {
        return Err(Refusal::UnsupportedScheme);
    }
    let got_network = got_network.ok_or_else(|| malformed("network is missing"))?;
    if got_network != network {
        return Err(Refusal::WrongNetwork {
            got: got_network.chars().take(80).collect(),
            want: network.to_owned(),
        });
    }
    let transaction = payload
        .get("payload")
        .and_then(|p| p.get("transaction"))
        .and_then(Value::as_str)
        .and_then(decode_b64)
        .ok_or_else(|| malformed("payload.transaction is missing or not base64"))?;
    Ok(PaymentValue {
        version: u8::try_from(version).unwrap_or(1),
        transaction,
    })
}

/// What a settled payment reports: `structuredContent.payment` and, base64
/// JSON, the `X-PAYMENT-RESPONSE` header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, utoipa::ToSchema)]
pub struct PaymentBlock {
    /// Always true: a block is only attached once the payment settled.
    pub settled: bool,
    /// The settlement transaction's signature.
    pub transaction: String,
    /// The token that covers later reads (and, for a scan, the scan).
    pub receipt: String,
    /// CAIP-2 network the payment settled on.
    pub network: String,
    /// The paying wallet.
    pub payer: String,
    /// True when this presentation repeated an already settled payment.
    pub replayed: bool,
}

/// A kept answer as a call returns it: the kept bytes themselves, or, when
/// the call settled `payment`, a copy with the block appended.
pub fn kept_answer(
    kept: &std::sync::Arc<crate::values::KeptJson>,
    payment: Option<&PaymentBlock>,
) -> Result<std::sync::Arc<crate::values::KeptJson>, crate::error::AppError> {
    Ok(match payment {
        None => kept.clone(),
        Some(block) => std::sync::Arc::new(crate::values::KeptJson::once(
            block.appended_to(kept.json())?,
        )),
    })
}

impl PaymentBlock {
    /// A kept answer (a serialised JSON object) with this block added as its
    /// last member, `"payment"`: what the answer made afresh would carry.
    fn appended_to(&self, json: &[u8]) -> Result<bytes::Bytes, crate::error::AppError> {
        use crate::error::AppError;
        let block = serde_json::to_vec(self)
            .map_err(|e| AppError::internal("serialising a payment block", e))?;
        // A kept answer is an object with members: it ends with its brace.
        let Some((b'}', head)) = json.split_last() else {
            return Err(AppError::internal(
                "appending a payment block",
                "a kept answer is not a JSON object",
            ));
        };
        let mut out = Vec::with_capacity(json.len() + block.len() + 12);
        out.extend_from_slice(head);
        out.extend_from_slice(b",\"payment\":");
        out.extend_from_slice(&block);
        out.push(b'}');
        Ok(bytes::Bytes::from(out))
    }
}

impl PaymentBlock {
    /// The settlement response header value (x402 `X-PAYMENT-RESPONSE` /
    /// `PAYMENT-RESPONSE`): base64 of `{success, transaction, network,
    /// payer, receipt, replayed}`.
    pub fn response_header(&self) -> String {
        let body = json!({
            "success": self.settled,
            "transaction": self.transaction,
            "network": self.network,
            "payer": self.payer,
            "receipt": self.receipt,
            "replayed": self.replayed,
        });
        general_purpose::STANDARD.encode(body.to_string())
    }
}

/// `7xKXtg2C…gAsU`: a wallet shortened for a sentence.
pub fn short(address: &str) -> String {
    let chars: Vec<char> = address.chars().collect();
    if chars.len() <= 12 {
        return address.to_owned();
    }
    let head: String = chars[..8].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// The text a model reads with a challenge: the price and both ways to pay.
pub fn challenge_text(req: &Requirement, tool: &str, price: &str) -> String {
    format!(
        "payment_required: {description} The price is {price} (amount {amount} atomic units of asset {asset}) on network {network}, paid to {pay_to} under the x402 exact scheme with fee payer {fee_payer}; this is quote_id {quote}. The full challenge is structuredContent.x402. Two ways to pay: (1) retry this tool with payment=<base64 X-PAYMENT built for the challenge in x402> and quote_id={quote} — an x402 client builds that value from structuredContent.x402 (an X-PAYMENT header on the MCP POST is accepted too); (2) without an x402 client, shell out: x402pay mcp-payment -keyfile <solana keypair> -challenge '<structuredContent.x402 as JSON>' prints the payment value; or x402pay mcp-call -keyfile <solana keypair> -url <this server's /mcp> -tool {tool} -args '<the same arguments as JSON>' does the whole exchange (call, pay, retry) and prints the result. A receipt from an earlier payment for this wallet can be passed as the receipt argument instead of paying again.",
        description = req.description,
        amount = req.amount,
        asset = req.asset,
        network = req.network,
        pay_to = req.pay_to,
        fee_payer = req.fee_payer,
        quote = req.quote_id,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_payment_reads_v1_and_v2_and_checks_the_network() {
        let tx = general_purpose::STANDARD.encode([1u8, 2, 3]);
        let v1 = json!({"x402Version":1,"scheme":"exact","network":MAINNET,"payload":{"transaction":tx}});
        let value = general_purpose::STANDARD.encode(v1.to_string());
        assert_eq!(
            parse_payment(&value, MAINNET).unwrap().transaction,
            vec![1, 2, 3]
        );
        let v2 = json!({"x402Version":2,"accepted":{"scheme":"exact","network":MAINNET},"payload":{"transaction":tx}});
        let value = general_purpose::STANDARD.encode(v2.to_string());
        assert_eq!(parse_payment(&value, MAINNET).unwrap().version, 2);
        assert_eq!(
            parse_payment(&value, "solana:other").unwrap_err().code(),
            "wrong_network"
        );
        let upto =
            json!({"x402Version":1,"scheme":"upto","network":MAINNET,"payload":{"transaction":tx}});
        let value = general_purpose::STANDARD.encode(upto.to_string());
        assert_eq!(
            parse_payment(&value, MAINNET).unwrap_err().code(),
            "unsupported_scheme"
        );
        assert_eq!(
            parse_payment("not base64!", MAINNET).unwrap_err().code(),
            "malformed_payment"
        );
        assert_eq!(
            parse_payment(&"A".repeat(MAX_VALUE_LEN + 1), MAINNET)
                .unwrap_err()
                .code(),
            "malformed_payment"
        );
    }

    /// The guide's worked example (docs/contract/guide.txt, "A full
    /// exchange"): the challenge for a read of 7xKXtg2C…gAsU at $0.02.
    fn guide_requirement() -> Requirement {
        Requirement {
            network: MAINNET.to_owned(),
            asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".to_owned(),
            decimals: 6,
            amount: 20_000,
            pay_to: "3qkZ…treasury".to_owned(),
            fee_payer: "49YR…payer".to_owned(),
            max_timeout_secs: 60,
            resource: "/v1/wallets/7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU/ledger".to_owned(),
            description: format!(
                "Wallet reporting: read of {}. No refunds; a scan that fails on our side re-runs \
                 free with its receipt.",
                short("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU")
            ),
            quote_id: "q_01J9X4A7M3".to_owned(),
        }
    }

    /// The guide's challenge result: `{"isError":…,"content":…,"structuredContent":…}`.
    fn guide_challenge() -> Value {
        let guide = include_str!("../../../docs/contract/guide.txt");
        let start = guide
            .find("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{")
            .unwrap();
        let end = start + guide[start..].find("}}}}").unwrap() + 4;
        let message: Value = serde_json::from_str(&guide[start..end]).unwrap();
        message["result"].clone()
    }

    #[test]
    fn the_challenge_text_is_the_guide_s_word_for_word() {
        let guide = guide_challenge();
        let price = crate::values::Usd::from_micros(20_000).to_string();
        assert_eq!(price, "0.02");
        assert_eq!(
            challenge_text(&guide_requirement(), "get_ledger", &price),
            guide["content"][0]["text"].as_str().unwrap()
        );
    }

    /// Every member the guide shows is ours with the guide's value; Ledger
    /// adds `mimeType` and `extra.memo` beside them.
    fn holds(ours: &Value, guide: &Value, path: &str) {
        match guide {
            Value::Object(members) => {
                for (key, value) in members {
                    holds(&ours[key], value, &format!("{path}.{key}"));
                }
            }
            Value::Array(items) => {
                assert_eq!(ours.as_array().map(Vec::len), Some(items.len()), "{path}");
                for (i, item) in items.iter().enumerate() {
                    holds(&ours[i], item, &format!("{path}[{i}]"));
                }
            }
            _ => assert_eq!(ours, guide, "{path}"),
        }
    }

    #[test]
    fn the_challenge_body_holds_the_guide_s() {
        let guide = guide_challenge();
        holds(
            &guide_requirement().body(None),
            &guide["structuredContent"]["x402"],
            "x402",
        );
    }

    #[test]
    fn short_keeps_head_and_tail() {
        assert_eq!(
            short("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"),
            "7xKXtg2C…gAsU"
        );
    }
}
