//! Command-line parsing, by hand and Go-style: `-flag value`, `-flag=value`,
//! and the same with two dashes, because the contract (docs/x402pay.md, the
//! MCP page's examples) spells the flags that way and agents copy them. The
//! environment is passed in as a lookup so the tests never read the real one.
//!
//! Every mistake here is a usage error (exit 2); a well-formed command whose
//! challenge or keyfile turns out wrong is refused later (exit 1).

use serde_json::{Map, Value};

use crate::payment::{ComputeBudget, DEFAULT_CU_LIMIT, DEFAULT_CU_PRICE, PaymentOptions};

pub const USAGE: &str = "\
usage:
  x402pay mcp-payment -keyfile K -challenge JSON [-rpc URL] [payment flags]
      print the x402 payment value (base64) for the challenge, one line
  x402pay mcp-call -url U -tool T [-args JSON] [-keyfile K] [-bearer B]
                   [-H 'Name: value']... [-rpc URL] [payment flags]
      initialize an MCP session, call the tool, pay a payment_required
      challenge once (with -keyfile), print the outcome

flags (one or two dashes; -flag value or -flag=value):
  -keyfile K         solana-keygen keypair file (JSON array of 64 bytes); env X402PAY_KEYFILE
  -challenge JSON    the x402 challenge body (structuredContent.x402)
  -rpc URL           Solana JSON-RPC; env X402PAY_RPC_URL; default from the network
                     (mainnet-beta and devnet only)
  -url U             the server's MCP endpoint (…/mcp)
  -tool T            the tool to call
  -args JSON         the tool's arguments, a JSON object (default {})
  -bearer B          Authorization: Bearer B; env X402PAY_BEARER
  -H 'Name: value'   an extra header on every POST (repeatable)
payment flags:
  -cu-limit N        compute unit limit (default 40000)
  -cu-price N        compute unit price in micro-lamports (default 1)
  -no-compute-budget omit both compute budget instructions
  -legacy            build a legacy message instead of v0

exit status: 0 ok; 1 refused, tool error, unpaid challenge or transport failure; 2 usage

install (from a clone of Ledger's repository; Rust 1.95 or newer, a few minutes):
  cargo install --locked --path server/x402pay";

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Help,
    Payment(PaymentArgs),
    Call(CallArgs),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PaymentArgs {
    pub keyfile: String,
    pub challenge: Value,
    /// `-rpc`, else `X402PAY_RPC_URL`; `None` derives it from the network.
    pub rpc: Option<String>,
    pub options: PaymentOptions,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CallArgs {
    pub keyfile: Option<String>,
    pub url: String,
    pub tool: String,
    pub args: Map<String, Value>,
    pub bearer: Option<String>,
    pub headers: Vec<(String, String)>,
    pub rpc: Option<String>,
    pub options: PaymentOptions,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct UsageError(pub String);

fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

const VALUE_FLAGS: [&str; 10] = [
    "keyfile",
    "challenge",
    "rpc",
    "url",
    "tool",
    "args",
    "bearer",
    "H",
    "cu-limit",
    "cu-price",
];
const BOOL_FLAGS: [&str; 4] = ["no-compute-budget", "legacy", "h", "help"];

/// Flags as given, last one wins (as Go's `flag` does), `-H` accumulates.
#[derive(Default)]
struct Flags {
    values: Vec<(String, String)>,
    bools: Vec<String>,
}

impl Flags {
    fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn all(&self, name: &str) -> impl Iterator<Item = &str> {
        self.values
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn has(&self, name: &str) -> bool {
        self.bools.iter().any(|b| b == name)
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.values
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(self.bools.iter().map(String::as_str))
    }
}

fn is_help(arg: &str) -> bool {
    matches!(arg, "-h" | "-help" | "--help" | "--h" | "help")
}

fn scan_flags(args: &[String]) -> Result<Flags, UsageError> {
    let mut flags = Flags::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let Some(body) = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .filter(|b| !b.is_empty() && !b.starts_with('-'))
        else {
            return Err(usage(format!("unexpected argument {arg:?}")));
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (body, None),
        };
        if BOOL_FLAGS.contains(&name) {
            match inline.as_deref() {
                None | Some("true") => flags.bools.push(name.to_owned()),
                Some("false") => flags.bools.retain(|b| b != name),
                Some(other) => {
                    return Err(usage(format!(
                        "-{name} takes no value (or =true/=false), got {other:?}"
                    )));
                }
            }
        } else if VALUE_FLAGS.contains(&name) {
            let value = match inline {
                Some(v) => v,
                None => rest
                    .next()
                    .cloned()
                    .ok_or_else(|| usage(format!("-{name} needs a value")))?,
            };
            flags.values.push((name.to_owned(), value));
        } else {
            return Err(usage(format!("unknown flag -{name}")));
        }
    }
    Ok(flags)
}

fn only(flags: &Flags, command: &str, allowed: &[&str]) -> Result<(), UsageError> {
    match flags.names().find(|n| !allowed.contains(n)) {
        Some(name) => Err(usage(format!("-{name} is not a flag of {command}"))),
        None => Ok(()),
    }
}

fn required<'a>(flags: &'a Flags, name: &str, command: &str) -> Result<&'a str, UsageError> {
    flags
        .get(name)
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| usage(format!("{command} needs -{name}")))
}

fn payment_options(flags: &Flags) -> Result<PaymentOptions, UsageError> {
    let limit = flags
        .get("cu-limit")
        .map(|v| {
            v.parse::<u32>().map_err(|_| {
                usage(format!(
                    "-cu-limit must be an integer 0..=4294967295, got {v:?}"
                ))
            })
        })
        .transpose()?;
    let price = flags
        .get("cu-price")
        .map(|v| {
            v.parse::<u64>().map_err(|_| {
                usage(format!(
                    "-cu-price must be a non-negative integer, got {v:?}"
                ))
            })
        })
        .transpose()?;
    let compute_budget = if flags.has("no-compute-budget") {
        if limit.is_some() || price.is_some() {
            return Err(usage(
                "-no-compute-budget omits the compute budget; it cannot go with -cu-limit or -cu-price",
            ));
        }
        None
    } else {
        Some(ComputeBudget {
            unit_limit: limit.unwrap_or(DEFAULT_CU_LIMIT),
            unit_price_micro_lamports: price.unwrap_or(DEFAULT_CU_PRICE),
        })
    };
    Ok(PaymentOptions {
        compute_budget,
        legacy: flags.has("legacy"),
    })
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// Parse `argv` (without the program name). `env` looks up X402PAY_*.
pub fn parse(argv: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Command, UsageError> {
    let Some((command, rest)) = argv.split_first() else {
        return Err(usage("no command: mcp-payment or mcp-call"));
    };
    if is_help(command) {
        return Ok(Command::Help);
    }
    let flags = scan_flags(rest)?;
    if flags.has("h") || flags.has("help") {
        return Ok(Command::Help);
    }
    const PAYMENT_FLAGS: [&str; 4] = ["cu-limit", "cu-price", "no-compute-budget", "legacy"];
    let rpc = non_empty(flags.get("rpc").map(str::to_owned))
        .or_else(|| non_empty(env("X402PAY_RPC_URL")));
    let keyfile = non_empty(flags.get("keyfile").map(str::to_owned))
        .or_else(|| non_empty(env("X402PAY_KEYFILE")));
    match command.as_str() {
        "mcp-payment" => {
            let allowed = [&["keyfile", "challenge", "rpc"][..], &PAYMENT_FLAGS].concat();
            only(&flags, command, &allowed)?;
            let keyfile =
                keyfile.ok_or_else(|| usage("mcp-payment needs -keyfile (or X402PAY_KEYFILE)"))?;
            let raw = required(&flags, "challenge", command)?;
            let challenge: Value = serde_json::from_str(raw)
                .map_err(|e| usage(format!("-challenge is not JSON: {e}")))?;
            if !challenge.is_object() {
                return Err(usage("-challenge must be a JSON object (the x402 body)"));
            }
            Ok(Command::Payment(PaymentArgs {
                keyfile,
                challenge,
                rpc,
                options: payment_options(&flags)?,
            }))
        }
        "mcp-call" => {
            let allowed = [
                &["keyfile", "rpc", "url", "tool", "args", "bearer", "H"][..],
                &PAYMENT_FLAGS,
            ]
            .concat();
            only(&flags, command, &allowed)?;
            let url = required(&flags, "url", command)?.trim().to_owned();
            let scheme_ok = url::Url::parse(&url)
                .map(|u| matches!(u.scheme(), "http" | "https"))
                .unwrap_or(false);
            if !scheme_ok {
                return Err(usage(format!("-url must be an http(s) URL, got {url:?}")));
            }
            let tool = required(&flags, "tool", command)?.trim().to_owned();
            let args = match flags.get("args") {
                None => Map::new(),
                Some(raw) => match serde_json::from_str::<Value>(raw) {
                    Ok(Value::Object(map)) => map,
                    Ok(_) => return Err(usage("-args must be a JSON object")),
                    Err(e) => return Err(usage(format!("-args is not JSON: {e}"))),
                },
            };
            let headers = flags
                .all("H")
                .map(|h| {
                    let (name, value) = h
                        .split_once(':')
                        .ok_or_else(|| usage(format!("-H wants 'Name: value', got {h:?}")))?;
                    let name = name.trim();
                    let valid = !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
                    if !valid {
                        return Err(usage(format!("-H: {name:?} is not a header name")));
                    }
                    Ok((name.to_owned(), value.trim().to_owned()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let bearer = non_empty(flags.get("bearer").map(str::to_owned))
                .or_else(|| non_empty(env("X402PAY_BEARER")));
            Ok(Command::Call(CallArgs {
                keyfile,
                url,
                tool,
                args,
                bearer,
                headers,
                rpc,
                options: payment_options(&flags)?,
            }))
        }
        other => Err(usage(format!(
            "unknown command {other:?}: mcp-payment or mcp-call"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const CHALLENGE: &str = r#"{"x402Version":1,"accepts":[]}"#;

    fn argv(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    fn parse_with(args: &[&str], env: &[(&str, &str)]) -> Result<Command, UsageError> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let lookup = move |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        parse(&argv(args), &lookup)
    }

    fn parse_clean(args: &[&str]) -> Result<Command, UsageError> {
        parse_with(args, &[])
    }

    fn error(args: &[&str]) -> String {
        parse_clean(args).unwrap_err().0
    }

    fn call(args: &[&str]) -> CallArgs {
        match parse_clean(args).unwrap() {
            Command::Call(call) => call,
            other => panic!("not mcp-call: {other:?}"),
        }
    }

    #[test]
    fn mcp_payment_takes_one_or_two_dashes_and_inline_values() {
        let expected = Command::Payment(PaymentArgs {
            keyfile: "k.json".into(),
            challenge: json!({"x402Version": 1, "accepts": []}),
            rpc: Some("http://127.0.0.1:8899".into()),
            options: PaymentOptions::default(),
        });
        for args in [
            [
                "mcp-payment",
                "-keyfile",
                "k.json",
                "-challenge",
                CHALLENGE,
                "-rpc",
                "http://127.0.0.1:8899",
            ]
            .as_slice(),
            &[
                "mcp-payment",
                "--keyfile",
                "k.json",
                "--challenge",
                CHALLENGE,
                "--rpc",
                "http://127.0.0.1:8899",
            ],
            &[
                "mcp-payment",
                "-keyfile=k.json",
                &format!("--challenge={CHALLENGE}"),
                "-rpc=http://127.0.0.1:8899",
            ],
        ] {
            assert_eq!(parse_clean(args).unwrap(), expected, "{args:?}");
        }
    }

    #[test]
    fn payment_flags_set_the_compute_budget_and_message_version() {
        let Command::Payment(p) = parse_clean(&[
            "mcp-payment",
            "-keyfile",
            "k",
            "-challenge",
            CHALLENGE,
            "-cu-limit",
            "60000",
            "-cu-price",
            "5",
            "-legacy",
        ])
        .unwrap() else {
            panic!("not mcp-payment")
        };
        assert_eq!(
            p.options,
            PaymentOptions {
                compute_budget: Some(ComputeBudget {
                    unit_limit: 60_000,
                    unit_price_micro_lamports: 5
                }),
                legacy: true,
            }
        );
        let Command::Payment(p) = parse_clean(&[
            "mcp-payment",
            "-keyfile",
            "k",
            "-challenge",
            CHALLENGE,
            "-no-compute-budget",
        ])
        .unwrap() else {
            panic!("not mcp-payment")
        };
        assert_eq!(
            p.options,
            PaymentOptions {
                compute_budget: None,
                legacy: false
            }
        );
        assert!(
            error(&[
                "mcp-payment",
                "-keyfile",
                "k",
                "-challenge",
                CHALLENGE,
                "-no-compute-budget",
                "-cu-price",
                "2"
            ])
            .contains("-no-compute-budget")
        );
        assert!(
            error(&[
                "mcp-payment",
                "-keyfile",
                "k",
                "-challenge",
                CHALLENGE,
                "-cu-limit",
                "lots"
            ])
            .contains("-cu-limit")
        );
        assert!(
            error(&[
                "mcp-payment",
                "-keyfile",
                "k",
                "-challenge",
                CHALLENGE,
                "-legacy=maybe"
            ])
            .contains("-legacy")
        );
    }

    #[test]
    fn the_environment_fills_keyfile_rpc_and_bearer_and_flags_win() {
        let env = [
            ("X402PAY_KEYFILE", "env.json"),
            ("X402PAY_RPC_URL", "http://env-rpc"),
            ("X402PAY_BEARER", "lm_env"),
        ];
        let Command::Payment(p) =
            parse_with(&["mcp-payment", "-challenge", CHALLENGE], &env).unwrap()
        else {
            panic!("not mcp-payment")
        };
        assert_eq!(
            (p.keyfile.as_str(), p.rpc.as_deref()),
            ("env.json", Some("http://env-rpc"))
        );
        let Command::Call(c) = parse_with(
            &[
                "mcp-call",
                "-url",
                "http://h/mcp",
                "-tool",
                "ping",
                "-keyfile",
                "flag.json",
                "-bearer",
                "lm_flag",
                "-rpc",
                "http://flag-rpc",
            ],
            &env,
        )
        .unwrap() else {
            panic!("not mcp-call")
        };
        assert_eq!(c.keyfile.as_deref(), Some("flag.json"));
        assert_eq!(c.bearer.as_deref(), Some("lm_flag"));
        assert_eq!(c.rpc.as_deref(), Some("http://flag-rpc"));
        let Command::Call(c) =
            parse_with(&["mcp-call", "-url", "http://h/mcp", "-tool", "ping"], &env).unwrap()
        else {
            panic!("not mcp-call")
        };
        assert_eq!(c.bearer.as_deref(), Some("lm_env"));
        assert_eq!(c.keyfile.as_deref(), Some("env.json"));
    }

    #[test]
    fn mcp_call_collects_headers_and_arguments() {
        let c = call(&[
            "mcp-call",
            "-url",
            "https://ledger.example/mcp",
            "-tool",
            "get_ledger",
            "-args",
            r#"{"address":"7xKX","limit":50}"#,
            "-H",
            "X-Receipt: Qm9v",
            "--H",
            "X-Trace:abc",
        ]);
        assert_eq!(c.url, "https://ledger.example/mcp");
        assert_eq!(c.tool, "get_ledger");
        assert_eq!(
            Value::Object(c.args),
            json!({"address": "7xKX", "limit": 50})
        );
        assert_eq!(
            c.headers,
            vec![
                ("X-Receipt".to_owned(), "Qm9v".to_owned()),
                ("X-Trace".to_owned(), "abc".to_owned())
            ]
        );
        assert_eq!((c.keyfile, c.bearer, c.rpc), (None, None, None));
        let c = call(&["mcp-call", "-url", "http://h/mcp", "-tool", "ping"]);
        assert!(c.args.is_empty(), "-args defaults to {{}}");
    }

    #[test]
    fn usage_errors_say_what_is_wrong() {
        let url = ["-url", "http://h/mcp"];
        let cases: Vec<(Vec<&str>, &str)> = vec![
            (vec![], "no command"),
            (vec!["pay"], "unknown command"),
            (vec!["mcp-payment", "-challenge", CHALLENGE], "-keyfile"),
            (vec!["mcp-payment", "-keyfile", "k"], "-challenge"),
            (
                vec!["mcp-payment", "-keyfile", "k", "-challenge", "{nope"],
                "-challenge is not JSON",
            ),
            (
                vec!["mcp-payment", "-keyfile", "k", "-challenge", "[1]"],
                "JSON object",
            ),
            (
                vec![
                    "mcp-payment",
                    "-keyfile",
                    "k",
                    "-challenge",
                    CHALLENGE,
                    "-url",
                    "http://h",
                ],
                "-url is not a flag of mcp-payment",
            ),
            (
                vec![
                    "mcp-payment",
                    "-keyfile",
                    "k",
                    "-challenge",
                    CHALLENGE,
                    "-frobnicate",
                ],
                "unknown flag -frobnicate",
            ),
            (
                vec!["mcp-payment", "-keyfile", "k", "stray"],
                "unexpected argument",
            ),
            (vec!["mcp-call", "-tool", "ping"], "needs -url"),
            (
                vec!["mcp-call", "-url", "ftp://h", "-tool", "ping"],
                "http(s)",
            ),
            ([&["mcp-call"][..], &url].concat(), "needs -tool"),
            (
                [&["mcp-call"][..], &url, &["-tool"]].concat(),
                "-tool needs a value",
            ),
            (
                [&["mcp-call"][..], &url, &["-tool", "t", "-args", "[]"]].concat(),
                "-args must be a JSON object",
            ),
            (
                [&["mcp-call"][..], &url, &["-tool", "t", "-args", "{"]].concat(),
                "-args is not JSON",
            ),
            (
                [&["mcp-call"][..], &url, &["-tool", "t", "-H", "no colon"]].concat(),
                "-H wants",
            ),
            (
                [
                    &["mcp-call"][..],
                    &url,
                    &["-tool", "t", "-H", "bad name: v"],
                ]
                .concat(),
                "not a header name",
            ),
            (
                [
                    &["mcp-call"][..],
                    &url,
                    &["-tool", "t", "-challenge", CHALLENGE],
                ]
                .concat(),
                "-challenge is not a flag of mcp-call",
            ),
        ];
        for (args, expected) in cases {
            let message = error(&args);
            assert!(
                message.contains(expected),
                "{args:?}: {message:?} should say {expected:?}"
            );
        }
    }

    #[test]
    fn help_is_not_an_error_and_a_tool_named_help_is_not_help() {
        assert_eq!(parse_clean(&["-h"]).unwrap(), Command::Help);
        assert_eq!(parse_clean(&["--help"]).unwrap(), Command::Help);
        assert_eq!(parse_clean(&["mcp-call", "-help"]).unwrap(), Command::Help);
        assert_eq!(
            call(&["mcp-call", "-url", "http://h/mcp", "-tool", "help"]).tool,
            "help"
        );
    }
}
