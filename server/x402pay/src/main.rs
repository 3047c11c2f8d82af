//! `x402pay`: the command-line x402 client for Ledger's MCP tools, for agents
//! whose host has no x402 support and can shell out instead.
//!
//! `mcp-payment` turns a challenge and a keypair into the payment value;
//! `mcp-call` does the whole exchange against an MCP endpoint. It is a client
//! and a package of its own, apart from the server (none of its modules,
//! none of its heavy dependencies), so that `cargo install --locked --path
//! server/x402pay` builds it alone in a few minutes: `payment` builds the
//! x402 `exact` transaction, `mcp` speaks Streamable HTTP, `call` runs and
//! prints the exchange, `args` parses the Go-style flags. Exit status: 0 ok,
//! 1 refused or failed, 2 bad usage (docs/x402pay.md).

mod args;
mod call;
mod mcp;
mod payment;

use std::{io::Write, process::ExitCode};

use args::{CallArgs, Command, PaymentArgs, USAGE};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let env = |name: &str| std::env::var(name).ok();
    let command = match args::parse(&argv, &env) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("x402pay: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match command {
        Command::Help => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Command::Payment(args) => block_on(mcp_payment(&args)),
        Command::Call(args) => block_on(mcp_call(&args)),
    };
    result.unwrap_or_else(|message| {
        eprintln!("x402pay: {message}");
        ExitCode::from(1)
    })
}

/// One command, one current-thread runtime: nothing here runs in parallel.
fn block_on(command: impl Future<Output = Result<ExitCode, String>>) -> Result<ExitCode, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?
        .block_on(command)
}

async fn mcp_payment(args: &PaymentArgs) -> Result<ExitCode, String> {
    let keypair = payment::read_keyfile(&args.keyfile).map_err(|e| e.to_string())?;
    let requirements = payment::select_requirements(&args.challenge).map_err(|e| e.to_string())?;
    let rpc = payment::resolve_rpc(args.rpc.as_deref(), None, &requirements.network)
        .map_err(|e| e.to_string())?;
    let value = payment::build_payment(&args.challenge, &keypair, &rpc, &args.options)
        .await
        .map_err(|e| e.to_string())?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{value}").map_err(|e| format!("writing the output: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

async fn mcp_call(args: &CallArgs) -> Result<ExitCode, String> {
    let keypair = args
        .keyfile
        .as_deref()
        .map(payment::read_keyfile)
        .transpose()
        .map_err(|e| e.to_string())?;
    let mut report = Vec::new();
    let outcome = call::run(args, keypair.as_ref(), &mut report)
        .await
        .map_err(|e| e.to_string())?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&report)
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("writing the output: {e}"))?;
    Ok(match outcome {
        call::Outcome::Ok => ExitCode::SUCCESS,
        call::Outcome::ToolError => ExitCode::from(1),
        call::Outcome::Unpaid => {
            eprintln!(
                "x402pay: {} answered payment_required; the challenge is on stdout. Pass -keyfile (or X402PAY_KEYFILE) to pay it.",
                args.tool
            );
            ExitCode::from(1)
        }
    })
}
