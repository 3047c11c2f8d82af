//! `mcp-call`: the whole paid exchange in one command — initialize, call the
//! tool, answer a `payment_required` challenge once, and print the outcome.
//!
//! The printed lines are a contract (the MCP page, "Doing it in one
//! command"): scripts capture `payer:` and `receipt:`. They are written only
//! once the exchange is over, to an `impl Write`, so a transport failure
//! leaves stdout empty rather than half a report, and tests read the exact
//! bytes.

use std::io::{self, Write};

use serde_json::{Map, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;

use crate::{
    args::CallArgs,
    mcp::{McpClient, McpError},
    payment::{self, PaymentError},
};

/// How the exchange ended, short of a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The final result was not an error: exit 0.
    Ok,
    /// The final result was `isError`: exit 1.
    ToolError,
    /// A challenge and no keyfile: the challenge was printed; exit 1.
    Unpaid,
}

#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error(transparent)]
    Mcp(#[from] McpError),
    #[error("paying the challenge: {0}")]
    Payment(#[from] PaymentError),
    #[error("writing the output: {0}")]
    Output(#[from] io::Error),
}

const PAID: &str = "paid: challenge answered with the payment argument";
const NOT_PAID: &str = "paid: no payment needed";

/// Run the exchange and write the report to `out`.
pub async fn run(
    args: &CallArgs,
    keypair: Option<&Keypair>,
    out: &mut impl Write,
) -> Result<Outcome, CallError> {
    let mut client = McpClient::new(&args.url, args.bearer.as_deref(), &args.headers)?;
    client.initialize().await?;
    let first = client.call_tool(&args.tool, &args.args).await?;

    let Some(challenge) = payment_challenge(&first) else {
        write_report(out, keypair, &args.tool, NOT_PAID, &first)?;
        return Ok(outcome_of(&first));
    };
    let Some(keypair) = keypair else {
        let pretty = serde_json::to_string_pretty(challenge).unwrap_or_default();
        writeln!(out, "{pretty}")?;
        return Ok(Outcome::Unpaid);
    };

    let requirements = payment::select_requirements(challenge)?;
    let rpc = payment::resolve_rpc(args.rpc.as_deref(), None, &requirements.network)?;
    let value = payment::build_payment(challenge, keypair, &rpc, &args.options).await?;
    let mut paid_args: Map<String, Value> = args.args.clone();
    paid_args.insert("payment".to_owned(), Value::String(value));
    paid_args.insert(
        "quote_id".to_owned(),
        Value::String(requirements.quote_id.clone()),
    );
    let second = client.call_tool(&args.tool, &paid_args).await?;
    write_report(out, Some(keypair), &args.tool, PAID, &second)?;
    Ok(outcome_of(&second))
}

/// `structuredContent.x402` of a `payment_required` tool error.
fn payment_challenge(result: &Value) -> Option<&Value> {
    if result.get("isError").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let structured = result.get("structuredContent")?;
    if structured.get("code").and_then(Value::as_str) != Some("payment_required") {
        return None;
    }
    structured.get("x402").filter(|c| c.is_object())
}

fn outcome_of(result: &Value) -> Outcome {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        Outcome::ToolError
    } else {
        Outcome::Ok
    }
}

/// The report, line by line, in the contract's order.
pub fn write_report(
    out: &mut impl Write,
    keypair: Option<&Keypair>,
    tool: &str,
    paid: &str,
    result: &Value,
) -> io::Result<()> {
    let structured = result.get("structuredContent");
    if let Some(keypair) = keypair {
        writeln!(out, "payer: {}", keypair.pubkey())?;
    }
    writeln!(out, "tool: {tool}")?;
    writeln!(out, "{paid}")?;
    if let Some(block) = structured
        .and_then(|s| s.get("payment"))
        .filter(|p| p.is_object())
    {
        let flag = |name: &str| block.get(name).and_then(Value::as_bool).unwrap_or(false);
        let text = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or("-");
        writeln!(
            out,
            "payment: settled={} replayed={} network={} payer={}",
            flag("settled"),
            flag("replayed"),
            text("network"),
            text("payer")
        )?;
        writeln!(out, "transaction: {}", text("transaction"))?;
        writeln!(out, "receipt: {}", text("receipt"))?;
    }
    if outcome_of(result) == Outcome::Ok {
        writeln!(out, "status: ok")?;
    } else {
        let code = structured
            .and_then(|s| s.get("code"))
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        writeln!(out, "status: error {code}")?;
    }
    let text = result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or("");
    writeln!(out)?;
    writeln!(out, "{text}")?;
    writeln!(out)?;
    let json = structured
        .map(Value::to_string)
        .unwrap_or_else(|| "null".to_owned());
    writeln!(out, "{json}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::{
        sync::{Arc, Mutex},
        time::{Duration, Instant},
    };

    use axum::{
        Json, Router,
        extract::State,
        http::{HeaderMap, StatusCode, header},
        response::{IntoResponse, Response},
        routing::post,
    };
    use serde_json::json;

    use super::*;
    use crate::payment::{
        PaymentOptions, TOKEN_PROGRAM,
        tests::{LOCAL_NETWORK, QUOTE, challenge, decode, spawn_rpc},
    };

    const SESSION: &str = "sess-7c1b";
    const RECEIPT: &str = "Qm9vdC1yZWNlaXB0";
    const SETTLEMENT: &str = "5Ux2settlementSignature";

    /// What the stand-in does with each tools/call.
    #[derive(Clone, Copy)]
    enum Answer {
        Challenge,
        Paid,
        Free,
    }

    #[derive(Default)]
    struct Script {
        /// How many POSTs are answered 429 before any is served.
        rate_limited: u32,
        retry_after: Option<&'static str>,
        answers: Vec<Answer>,
    }

    #[derive(Clone)]
    struct StandIn {
        script: Arc<Mutex<Script>>,
        seen: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
    }

    fn challenge_result() -> Value {
        json!({
            "isError": true,
            "content": [{"type": "text", "text": format!("payment_required: … this is quote_id {QUOTE}.")}],
            "structuredContent": {
                "code": "payment_required",
                "message": "payment required",
                "x402": challenge(LOCAL_NETWORK)
            }
        })
    }

    /// A paid result as the server shapes it; the payer is read back from
    /// the payment's signer list, so the line proves what was sent.
    fn paid_result(arguments: &Value) -> Value {
        let (_, tx) = decode(arguments["payment"].as_str().unwrap());
        let payer = tx.message.static_account_keys()[1].to_string();
        json!({
            "content": [{"type": "text", "text": "50 ledger entries for 7xKX…gAsU. Payment settled."}],
            "structuredContent": {
                "entries": [],
                "next_cursor": null,
                "payment": {
                    "settled": true,
                    "transaction": SETTLEMENT,
                    "receipt": RECEIPT,
                    "network": LOCAL_NETWORK,
                    "payer": payer
                }
            }
        })
    }

    async fn mcp(
        State(stand_in): State<StandIn>,
        headers: HeaderMap,
        Json(body): Json<Value>,
    ) -> Response {
        stand_in.seen.lock().unwrap().push((headers, body.clone()));
        let answer = {
            let mut script = stand_in.script.lock().unwrap();
            if script.rate_limited > 0 {
                script.rate_limited -= 1;
                let mut response = (
                    StatusCode::TOO_MANY_REQUESTS,
                    Json(json!({"code": "rate_limited", "message": "slow down"})),
                )
                    .into_response();
                if let Some(wait) = script.retry_after {
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, wait.parse().unwrap());
                }
                return response;
            }
            if body["method"] == "tools/call" {
                Some(script.answers.remove(0))
            } else {
                None
            }
        };
        let id = body["id"].clone();
        match body["method"].as_str().unwrap() {
            "initialize" => (
                [("mcp-session-id", SESSION)],
                Json(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "ledger", "version": "0.1.0"}
                }})),
            )
                .into_response(),
            "notifications/initialized" => StatusCode::ACCEPTED.into_response(),
            "tools/call" => {
                let arguments = &body["params"]["arguments"];
                let result = match answer {
                    Some(Answer::Challenge) => challenge_result(),
                    Some(Answer::Paid) => paid_result(arguments),
                    _ => json!({
                        "content": [{"type": "text", "text": "pong"}],
                        "structuredContent": {"ok": true, "principal": {"kind": "anonymous"}}
                    }),
                };
                let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
                // The paid answer comes as an event stream, the rest as JSON,
                // so one exchange reads both framings.
                if arguments.get("payment").is_some() {
                    (
                        [(header::CONTENT_TYPE, "text/event-stream")],
                        format!("event: message\ndata: {message}\n\n"),
                    )
                        .into_response()
                } else {
                    Json(message).into_response()
                }
            }
            other => panic!("unexpected method {other}"),
        }
    }

    async fn spawn_mcp(script: Script) -> (String, StandIn) {
        let stand_in = StandIn {
            script: Arc::new(Mutex::new(script)),
            seen: Arc::default(),
        };
        let app = Router::new()
            .route("/mcp", post(mcp))
            .with_state(stand_in.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (format!("http://{address}/mcp"), stand_in)
    }

    fn call_args(url: &str, rpc: Option<String>) -> CallArgs {
        CallArgs {
            keyfile: None,
            url: url.to_owned(),
            tool: "get_ledger".to_owned(),
            args: json!({"address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", "limit": 50})
                .as_object()
                .unwrap()
                .clone(),
            bearer: Some("lm_test".to_owned()),
            headers: vec![("X-Receipt".to_owned(), "r_header".to_owned())],
            rpc,
            options: PaymentOptions::default(),
        }
    }

    fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
        headers.get(name).map(|v| v.to_str().unwrap())
    }

    #[tokio::test]
    async fn pays_the_challenge_once_and_prints_the_contract_lines() {
        let (url, stand_in) = spawn_mcp(Script {
            rate_limited: 1,
            retry_after: Some("1"),
            answers: vec![Answer::Challenge, Answer::Paid],
        })
        .await;
        let rpc = spawn_rpc(TOKEN_PROGRAM).await;
        let args = call_args(&url, Some(rpc));
        let payer = Keypair::new();
        let mut out = Vec::new();
        let started = Instant::now();
        let outcome = run(&args, Some(&payer), &mut out).await.unwrap();
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After: 1 was waited out"
        );
        assert_eq!(outcome, Outcome::Ok);
        let expected = format!(
            "payer: {payer}\n\
             tool: get_ledger\n\
             paid: challenge answered with the payment argument\n\
             payment: settled=true replayed=false network={LOCAL_NETWORK} payer={payer}\n\
             transaction: {SETTLEMENT}\n\
             receipt: {RECEIPT}\n\
             status: ok\n\
             \n\
             50 ledger entries for 7xKX…gAsU. Payment settled.\n\
             \n\
             {{\"entries\":[],\"next_cursor\":null,\"payment\":{{\"network\":\"{LOCAL_NETWORK}\",\"payer\":\"{payer}\",\"receipt\":\"{RECEIPT}\",\"settled\":true,\"transaction\":\"{SETTLEMENT}\"}}}}\n",
            payer = payer.pubkey()
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);

        let seen = stand_in.seen.lock().unwrap();
        let methods: Vec<&str> = seen
            .iter()
            .map(|(_, b)| b["method"].as_str().unwrap())
            .collect();
        assert_eq!(
            methods,
            [
                "initialize",
                "initialize",
                "notifications/initialized",
                "tools/call",
                "tools/call"
            ],
            "the rate-limited POST is sent again as it was"
        );
        assert_eq!(seen[0].1, seen[1].1);
        for (i, (headers, _)) in seen.iter().enumerate() {
            assert_eq!(header(headers, "authorization"), Some("Bearer lm_test"));
            assert_eq!(header(headers, "x-receipt"), Some("r_header"));
            assert_eq!(
                header(headers, "accept"),
                Some("application/json, text/event-stream")
            );
            assert_eq!(header(headers, "content-type"), Some("application/json"));
            let after_initialize = i >= 2;
            assert_eq!(
                header(headers, "mcp-session-id"),
                after_initialize.then_some(SESSION),
                "POST {i}"
            );
            assert_eq!(
                header(headers, "mcp-protocol-version"),
                after_initialize.then_some("2025-06-18"),
                "POST {i}"
            );
        }
        assert_eq!(seen[0].1["params"]["protocolVersion"], "2025-06-18");
        assert_eq!(seen[0].1["params"]["clientInfo"]["name"], "x402pay");
        let first = &seen[3].1["params"];
        let paid = &seen[4].1["params"];
        assert_eq!(first["name"], "get_ledger");
        assert_eq!(paid["name"], "get_ledger");
        assert_eq!(
            first["arguments"],
            json!({"address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", "limit": 50})
        );
        let mut expected_arguments = first["arguments"].clone();
        expected_arguments["quote_id"] = json!(QUOTE);
        expected_arguments["payment"] = paid["arguments"]["payment"].clone();
        assert_eq!(paid["arguments"], expected_arguments);
        let (payment, tx) = decode(paid["arguments"]["payment"].as_str().unwrap());
        assert_eq!(payment["network"], LOCAL_NETWORK);
        assert_eq!(tx.message.static_account_keys()[1], payer.pubkey());
    }

    #[tokio::test]
    async fn without_a_keyfile_the_challenge_is_printed_and_not_paid() {
        let (url, stand_in) = spawn_mcp(Script {
            answers: vec![Answer::Challenge],
            ..Script::default()
        })
        .await;
        let mut out = Vec::new();
        let outcome = run(&call_args(&url, None), None, &mut out).await.unwrap();
        assert_eq!(outcome, Outcome::Unpaid);
        let printed: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(printed, challenge(LOCAL_NETWORK));
        let calls = stand_in
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, b)| b["method"] == "tools/call")
            .count();
        assert_eq!(calls, 1, "nothing is retried without a keyfile");
    }

    #[tokio::test]
    async fn a_free_call_prints_no_payment_lines() {
        let (url, _) = spawn_mcp(Script {
            answers: vec![Answer::Free],
            ..Script::default()
        })
        .await;
        let mut args = call_args(&url, None);
        args.tool = "ping".to_owned();
        let mut out = Vec::new();
        let outcome = run(&args, None, &mut out).await.unwrap();
        assert_eq!(outcome, Outcome::Ok);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "tool: ping\n\
             paid: no payment needed\n\
             status: ok\n\
             \n\
             pong\n\
             \n\
             {\"ok\":true,\"principal\":{\"kind\":\"anonymous\"}}\n"
        );
    }

    #[tokio::test]
    async fn a_refused_payment_is_a_tool_error_and_not_retried_again() {
        let (url, stand_in) = spawn_mcp(Script {
            answers: vec![Answer::Challenge, Answer::Challenge],
            ..Script::default()
        })
        .await;
        let rpc = spawn_rpc(TOKEN_PROGRAM).await;
        let payer = Keypair::new();
        let mut out = Vec::new();
        let outcome = run(&call_args(&url, Some(rpc)), Some(&payer), &mut out)
            .await
            .unwrap();
        assert_eq!(outcome, Outcome::ToolError);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..5],
            [
                format!("payer: {}", payer.pubkey()).as_str(),
                "tool: get_ledger",
                "paid: challenge answered with the payment argument",
                "status: error payment_required",
                "",
            ]
        );
        let calls = stand_in
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, b)| b["method"] == "tools/call")
            .count();
        assert_eq!(calls, 2, "one paid retry only");
    }

    #[tokio::test]
    async fn gives_up_after_five_rate_limited_retries() {
        let (url, stand_in) = spawn_mcp(Script {
            rate_limited: 100,
            retry_after: Some("0"),
            answers: vec![],
        })
        .await;
        let mut out = Vec::new();
        let err = run(&call_args(&url, None), None, &mut out)
            .await
            .unwrap_err();
        assert!(
            matches!(err, CallError::Mcp(McpError::RateLimited { .. })),
            "{err}"
        );
        assert!(err.to_string().contains("429"), "{err}");
        assert_eq!(
            stand_in.seen.lock().unwrap().len(),
            6,
            "one try and five retries"
        );
        assert!(
            out.is_empty(),
            "nothing on stdout after a transport failure"
        );
    }

    #[tokio::test]
    async fn a_challenge_on_an_unknown_network_without_rpc_names_the_flag() {
        let (url, _) = spawn_mcp(Script {
            answers: vec![Answer::Challenge],
            ..Script::default()
        })
        .await;
        let mut out = Vec::new();
        let err = run(&call_args(&url, None), Some(&Keypair::new()), &mut out)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("-rpc"), "{err}");
    }

    #[tokio::test]
    async fn an_http_failure_is_an_error_with_the_status() {
        let mut out = Vec::new();
        let (url, _) = spawn_mcp(Script::default()).await;
        let wrong = url.replace("/mcp", "/nope");
        let err = run(&call_args(&wrong, None), None, &mut out)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("404"), "{err}");
    }
}
