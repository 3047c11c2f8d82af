//! The guide is the contract, word for word (docs/contract/guide.txt, a
//! verbatim copy): every tool `tools/list` answers is a row of the guide's
//! tool table, its description begins with the guide's text whole (what
//! Ledger adds follows it), its arguments are the guide's with the guide's
//! descriptions, and its tier is the guide's cost. And no refusal a tool
//! answers carries a stray run of spaces (a string literal broken over two
//! lines without its `\`).

use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};

const GUIDE: &str = include_str!("../../../docs/contract/guide.txt");
const WALLET: &str = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";

/// One row of the guide's tool table.
#[derive(Debug)]
struct Row {
    name: String,
    /// (name, optional, description), in the guide's order.
    arguments: Vec<(String, bool, String)>,
    cost: String,
    description: String,
}

/// The guide's costs, longest first (so "paid cached read" is not read as
/// "paid").
const COSTS: [&str; 4] = ["free, account only", "paid cached read", "paid", "free"];

/// The rows of the table under "Tool Arguments Cost What it does": the
/// name, the arguments (`name (description)` or `name? (description)`,
/// separated by ", ", descriptions holding balanced parentheses; `—` for
/// none), the cost, then the description to the end of the line.
fn guide_rows() -> Vec<Row> {
    let mut lines = GUIDE.lines();
    lines
        .by_ref()
        .find(|l| *l == "Tool Arguments Cost What it does")
        .expect("the guide's tool table");
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(parse_row)
        .collect()
}

fn parse_row(line: &str) -> Row {
    let (name, mut rest) = line.split_once(' ').unwrap();
    let mut arguments = Vec::new();
    if let Some(after) = rest.strip_prefix("— ") {
        rest = after;
    } else {
        loop {
            let open = rest.find(" (").unwrap();
            let (arg, optional) = match rest[..open].strip_suffix('?') {
                Some(arg) => (arg, true),
                None => (&rest[..open], false),
            };
            let body = &rest[open + 2..];
            let mut depth = 1;
            let end = body
                .char_indices()
                .find(|(_, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map(|(i, _)| i)
                .unwrap();
            arguments.push((arg.to_owned(), optional, body[..end].to_owned()));
            rest = &body[end + 1..];
            match rest.strip_prefix(", ") {
                Some(next) => rest = next,
                None => {
                    rest = rest.strip_prefix(' ').unwrap();
                    break;
                }
            }
        }
    }
    let cost = COSTS
        .into_iter()
        .find(|c| rest.starts_with(&format!("{c} ")))
        .unwrap_or_else(|| panic!("no cost in the row of {name}: {rest:.60}"));
    Row {
        name: name.to_owned(),
        arguments,
        cost: cost.to_owned(),
        description: rest[cost.len() + 1..].to_owned(),
    }
}

async fn tools(app: &TestApp) -> Vec<Value> {
    let body = app
        .rpc(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}), &[])
        .await;
    body["result"]["tools"].as_array().unwrap().clone()
}

#[test]
fn the_guide_table_is_read_whole() {
    let rows = guide_rows();
    assert_eq!(rows.len(), 18, "{rows:#?}");
    let ledger = rows.iter().find(|r| r.name == "get_ledger").unwrap();
    assert_eq!(ledger.cost, "paid cached read");
    assert_eq!(ledger.arguments.len(), 13);
    assert_eq!(
        ledger.arguments[0],
        (
            "address".to_owned(),
            false,
            "the wallet's base58 public key".to_owned()
        )
    );
    // A description with parentheses inside parentheses, read to its end.
    assert!(
        ledger
            .arguments
            .iter()
            .any(|(name, optional, text)| name == "quote_id"
                && *optional
                && text.ends_with("(structuredContent.x402.accepts[0].extra.quoteId)"))
    );
    let ping = rows.iter().find(|r| r.name == "ping").unwrap();
    assert!(ping.arguments.is_empty());
    assert_eq!(ping.cost, "free");
    assert_eq!(
        ping.description,
        "Answers ok with the principal this session's credential resolves to. Free."
    );
}

#[tokio::test]
async fn every_tool_is_the_guide_s_row_its_description_first_and_whole() {
    let app = spawn_app().await;
    let tools = tools(&app).await;
    let rows = guide_rows();
    let mut listed: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut guided: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    listed.sort_unstable();
    guided.sort_unstable();
    assert_eq!(
        listed, guided,
        "tools/list and the guide name the same tools"
    );
    for row in &rows {
        let tool = tools
            .iter()
            .find(|t| t["name"] == row.name.as_str())
            .unwrap();
        let description = tool["description"].as_str().unwrap();
        assert!(
            description.starts_with(&row.description),
            "{}: the guide's description must come first and whole.\n guide: {}\n  code: {}",
            row.name,
            row.description,
            description
        );
        assert_eq!(
            tool["_meta"]["ledger/tier"],
            row.cost.as_str(),
            "{}",
            row.name
        );
        let schema = &tool["inputSchema"];
        let properties = schema["properties"].as_object().unwrap();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
        let mut guide_names: Vec<&str> = row.arguments.iter().map(|(n, _, _)| n.as_str()).collect();
        names.sort_unstable();
        guide_names.sort_unstable();
        // Arguments added after the guide was written (issue 24's tax
        // arguments) are allowed beside its own, optional and named here;
        // the guide's text itself stays word for word.
        let added: &[&str] = EXTENDED
            .iter()
            .find(|(tool, _)| *tool == row.name)
            .map_or(&[], |(_, extra)| extra);
        for extra in added {
            assert!(
                !required.contains(extra),
                "{}.{extra}: an added argument is optional",
                row.name
            );
        }
        names.retain(|n| !added.contains(n));
        assert_eq!(names, guide_names, "{}: the guide's arguments", row.name);
        for (name, optional, text) in &row.arguments {
            assert_eq!(
                !required.contains(&name.as_str()),
                *optional,
                "{}.{name}: optional in the guide is optional here",
                row.name
            );
            let described = properties[name]["description"].as_str().unwrap_or_default();
            assert!(
                starts_with_sentence(described, text),
                "{}.{name}: the guide's argument text must come first and whole.\n guide: {text}\n  code: {described}",
                row.name,
            );
        }
    }
    app.stop().await;
}

/// Optional arguments tools take beyond the guide's table: the tax section
/// (issue 24) and Form 8949's dust threshold (issue 23; docs/reports.md).
const EXTENDED: &[(&str, &[&str])] = &[
    (
        "get_report",
        &["jurisdiction", "currency", "tax_year", "dust_threshold"],
    ),
    ("get_positions", &["jurisdiction", "currency", "tax_year"]),
];

/// `text` starts with the guide's `guide`, its first letter allowed to be
/// a capital (an argument's description is a doc comment, a sentence; the
/// guide's table writes it lower case).
fn starts_with_sentence(text: &str, guide: &str) -> bool {
    let mut chars = guide.chars();
    let Some(first) = chars.next() else {
        return true;
    };
    let rest = chars.as_str();
    [first.to_string(), first.to_uppercase().to_string()]
        .iter()
        .any(|head| {
            text.strip_prefix(head.as_str())
                .is_some_and(|tail| tail.starts_with(rest))
        })
}

#[test]
fn a_capital_is_the_only_liberty_an_argument_text_takes() {
    assert!(starts_with_sentence(
        "The wallet's base58 public key.",
        "the wallet's base58 public key"
    ));
    assert!(starts_with_sentence("the key; more", "the key"));
    assert!(!starts_with_sentence(
        "The wallets key.",
        "the wallet's key"
    ));
    assert!(!starts_with_sentence("A the key", "the key"));
}

/// Arguments the input schema admits, built from it: a base58 key for a
/// string with the key pattern, a word for other strings, the minimum for
/// an integer, the first value of an enum.
fn valid_arguments(schema: &Value) -> Value {
    let mut args = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap();
        let rule = &schema["properties"][name];
        let value = if let Some(first) = rule["enum"].get(0) {
            first.clone()
        } else {
            match rule["type"].as_str() {
                Some("array") => json!([WALLET]),
                Some("integer") => rule["minimum"].clone(),
                Some("number") => json!(1),
                Some("boolean") => json!(false),
                _ if rule.get("pattern").is_some() => json!(WALLET),
                _ => json!("a1"),
            }
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

#[tokio::test]
async fn no_refusal_text_of_any_tool_holds_a_run_of_spaces() {
    let app = spawn_app().await;
    let mut refusals = 0;
    for tool in tools(&app).await {
        let name = tool["name"].as_str().unwrap();
        // Anonymous with arguments the schema admits (account-only tools
        // refuse with unauthenticated), then with none (what a tool with
        // required arguments refuses as invalid arguments).
        for arguments in [valid_arguments(&tool["inputSchema"]), json!({})] {
            let body = app
                .rpc(
                    &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":name,"arguments":arguments}}),
                    &[("mcp-protocol-version", "2025-11-25")],
                )
                .await;
            let result = &body["result"];
            if result["isError"] != true {
                continue;
            }
            refusals += 1;
            let message = result["structuredContent"]["message"].as_str().unwrap();
            let text = result["content"][0]["text"].as_str().unwrap();
            for said in [message, text] {
                assert!(!said.contains("  "), "{name} {arguments}: {said:?}");
                assert_eq!(said, said.trim(), "{name} {arguments}: {said:?}");
            }
        }
    }
    // Every account-only tool refused the anonymous call, and every tool
    // with a required argument refused `{}`.
    assert!(refusals >= 20, "{refusals} refusals seen");
    app.stop().await;
}

#[tokio::test]
async fn an_account_only_tool_tells_an_anonymous_caller_how_to_present_a_token_in_one_sentence() {
    let app = spawn_app().await;
    let result = app.call_tool("list_wallets", json!({})).await;
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["code"], "unauthenticated");
    assert_eq!(
        result["structuredContent"]["message"],
        "list_wallets needs an account: present an MCP token (lm_…) or an API key (lk_…) as \
         Authorization: Bearer"
    );
    app.stop().await;
}
