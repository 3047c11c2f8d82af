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
