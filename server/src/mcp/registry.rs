//! The tool registry: every MCP tool, declared once with its title, a
//! description written for a model, an input schema that rejects unknown
//! fields, an output schema that admits both the success shape and the error
//! (or payment challenge) shape, its annotations, its tier and its REST twin.
//!
//! `tools/list`, the server card, `/llms.txt` and the portal's tools page are
//! all generated from this registry, so none of them can drift from what
//! `tools/call` does.
//!
//! Schemas come from `schemars` on the typed arguments and results, rewritten
//! once by [`schema::make_portable`]: a tool's arguments are a
//! `#[serde(deny_unknown_fields)]` struct, so the schema says
//! `additionalProperties: false`, and the call path holds every call to the
//! schema ([`schema::check`]) before serde reads it.

use std::{collections::BTreeMap, future::Future, pin::Pin, sync::Arc};

use schemars::JsonSchema;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};

use super::schema::{self, Direction};
use crate::{accounts::Principal, error::AppError, state::AppState};

/// What a tool costs, as the contract names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    Free,
    FreeAccountOnly,
    Paid,
    PaidCachedRead,
    /// Paid from the account's prepaid research credits (follow the money).
    PaidCredits,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Free => "free",
            Tier::FreeAccountOnly => "free, account only",
            Tier::Paid | Tier::PaidCredits => "paid",
            Tier::PaidCachedRead => "paid cached read",
        }
    }

    pub fn is_paid(self) -> bool {
        matches!(self, Tier::Paid | Tier::PaidCachedRead | Tier::PaidCredits)
    }
}

/// MCP tool annotations (hints for clients; never trusted by us).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Annotations {
    /// Reads what the server holds; safe to repeat.
    pub const READ: Self = Self {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    /// Reads, and may ask a source on the internet (prices).
    pub const READ_OPEN_WORLD: Self = Self {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: true,
    };
    /// Changes the caller's own records (a watchlist entry, a label);
    /// repeating it leaves the same state.
    pub const WRITE_OWN: Self = Self {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    /// Creates something (a quote, a job) and reaches the chain to do it.
    pub const CREATE_FROM_CHAIN: Self = Self {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: true,
    };
}

pub use super::inline::RestRoute;

/// What a tool's handler gets besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    pub state: AppState,
    pub principal: Principal,
    /// What the POST carrying the call presented in its headers
    /// (`X-PAYMENT`, `X-Receipt`); a tool's own arguments win.
    pub presented: crate::payments::Presented,
}

/// A successful tool call: the REST body and the one-line summary for a model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    pub structured: Value,
    pub summary: String,
    /// A `resource_link` content item, when the result was too large to
    /// inline and `structured` names its REST route instead ([`super::inline`]).
    pub link: Option<Value>,
    /// A text content item after the summary: a report's CSV, which is
    /// text for the model to read, not JSON.
    pub text: Option<String>,
}

/// Why a call did not reach the tool body, or how it failed.
#[derive(Debug, PartialEq)]
pub enum CallError {
    /// Arguments of the wrong shape for the input schema (a missing or
    /// unknown argument, a wrong JSON type, a value the argument types
    /// cannot read): what the revisions before 2025-11-25 call invalid
    /// arguments, a JSON-RPC -32602; from 2025-11-25 on an input
    /// validation error, the tool's `invalid_params` result
    /// ([`super::version::validation_errors_are_results`]).
    InvalidArguments(String),
    /// The tool ran and refused or failed: an `isError` result.
    Tool(AppError),
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Handler = dyn Fn(ToolContext, Value) -> BoxFuture<Result<ToolOutput, CallError>> + Send + Sync;

/// One tool: its static facts, its schemas and its body.
pub struct ToolDef {
    pub meta: ToolMeta,
    pub input_schema: Value,
    /// The arguments as the REST twin takes them: a GET route takes the
    /// X-PAYMENT header rather than the payment and quote_id arguments.
    /// Built once: the REST edge checks every request against it.
    pub rest_schema: Value,
    pub output_schema: Value,
    handler: Box<Handler>,
}

/// Static facts about a tool, given to [`ToolDef::new`].
pub struct ToolMeta {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub tier: Tier,
    pub annotations: Annotations,
    pub rest: Option<RestRoute>,
}

impl ToolDef {
    /// Declare a tool from its typed arguments `I`, typed result `O` and body.
    /// `summary` writes the one-line text a model reads for a result.
    pub fn new<I, O, F, Fut>(meta: ToolMeta, summary: fn(&O) -> String, body: F) -> Self
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + Send + 'static,
        F: Fn(ToolContext, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, AppError>> + Send + 'static,
    {
        let body = Arc::new(body);
        let input_schema = input_schema::<I>();
        let schema = Arc::new(input_schema.clone());
        let (name, rest) = (meta.name, meta.rest);
        let handler = move |ctx: ToolContext,
                            args: Value|
              -> BoxFuture<Result<ToolOutput, CallError>> {
            let body = Arc::clone(&body);
            let schema = Arc::clone(&schema);
            Box::pin(async move {
                // The arguments as sent name the REST twin of a linked result.
                let input: I = read_arguments(&schema, args.clone(), name)?;
                let public_url = ctx.state.public_url().to_owned();
                let output = body(ctx, input).await.map_err(CallError::Tool)?;
                // Measured as bytes: a large result never becomes a Value tree.
                let bytes = serde_json::to_vec(&output)
                    .map_err(|e| CallError::Tool(AppError::internal("tool output", e)))?;
                let mut summary = summary(&output);
                drop(output);
                let (structured, link) =
                    match super::inline::link(&public_url, name, rest, &args, &bytes) {
                        Some(linked) => {
                            summary.push(' ');
                            summary.push_str(&linked.sentence);
                            (linked.structured, Some(linked.content))
                        }
                        None => (
                            serde_json::from_slice(&bytes).map_err(|e| {
                                CallError::Tool(AppError::internal("tool output", e))
                            })?,
                            None,
                        ),
                    };
                drop(bytes);
                if let Some(payment) = structured.get("payment")
                    && payment["settled"] == true
                {
                    summary.push_str(&format!(
                            " Payment settled (transaction {}). Receipt {} can be reused: pass it as the receipt argument of later tools instead of paying again.",
                            payment["transaction"].as_str().unwrap_or_default(),
                            payment["receipt"].as_str().unwrap_or_default(),
                        ));
                }
                Ok(ToolOutput {
                    summary,
                    structured,
                    link,
                    text: None,
                })
            })
        };
        let mut rest_schema = input_schema.clone();
        if meta.rest.is_some_and(|r| r.method == "GET")
            && let Some(props) = rest_schema["properties"].as_object_mut()
        {
            props.remove("payment");
            props.remove("quote_id");
        }
        Self {
            meta,
            input_schema,
            rest_schema,
            output_schema: output_schema::<O>(),
            handler: Box::new(handler),
        }
    }

    /// Declare a tool whose body shapes its own result (`get_report`: the
    /// report object, a CSV as text, or a link to a file), from its typed
    /// arguments `I`; `O` states the output schema. The body gets the
    /// arguments as sent too, to name the REST twin of a linked result.
    pub fn custom<I, O, F, Fut>(meta: ToolMeta, body: F) -> Self
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: JsonSchema,
        F: Fn(ToolContext, I, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, AppError>> + Send + 'static,
    {
        let body = Arc::new(body);
        let input_schema = input_schema::<I>();
        let schema = Arc::new(input_schema.clone());
        let name = meta.name;
        let handler =
            move |ctx: ToolContext, args: Value| -> BoxFuture<Result<ToolOutput, CallError>> {
                let body = Arc::clone(&body);
                let schema = Arc::clone(&schema);
                Box::pin(async move {
                    let input: I = read_arguments(&schema, args.clone(), name)?;
                    body(ctx, input, args).await.map_err(CallError::Tool)
                })
            };
        let mut rest_schema = input_schema.clone();
        if meta.rest.is_some_and(|r| r.method == "GET")
            && let Some(props) = rest_schema["properties"].as_object_mut()
        {
            props.remove("payment");
            props.remove("quote_id");
        }
        Self {
            meta,
            input_schema,
            rest_schema,
            output_schema: output_schema::<O>(),
            handler: Box::new(handler),
        }
    }

    /// Run the tool. `args` is the `arguments` member of `tools/call` (an
    /// object, as `CallToolRequest` requires: the caller refuses anything
    /// else as a malformed request; empty when absent).
    pub async fn call(
        &self,
        ctx: ToolContext,
        args: Map<String, Value>,
    ) -> Result<ToolOutput, CallError> {
        (self.handler)(ctx, Value::Object(args)).await
    }

    /// The tool as `tools/list` describes it.
    pub fn listing(&self) -> Value {
        json!({
            "name": self.meta.name,
            "title": self.meta.title,
            "description": self.meta.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": {
                "title": self.meta.title,
                "readOnlyHint": self.meta.annotations.read_only,
                "destructiveHint": self.meta.annotations.destructive,
                "idempotentHint": self.meta.annotations.idempotent,
                "openWorldHint": self.meta.annotations.open_world,
            },
            "_meta": { "ledger/tier": self.meta.tier.as_str() },
        })
    }
}

/// Hold `args` to the input schema, then read them into `I`. What the
/// schema refuses never reaches the tool: arguments of the wrong shape (a
/// string for a number, an object for an enum, a missing or unknown
/// argument) or that the typed struct cannot read (an unknown scope) are
/// [`CallError::InvalidArguments`]; a value of the right type that breaks
/// a rule (a limit of 0, an unknown operation type) is the tool's
/// `invalid_params`. Either way the message is the schema's rule for that
/// argument, never a Rust type.
///
/// A refused argument is the caller's mistake, answered to the caller: it
/// is logged at DEBUG only. What the schema admitted but the type cannot
/// read is ours (the schema and the type disagree), logged at ERROR.
fn read_arguments<I: DeserializeOwned>(
    schema: &Value,
    mut args: Value,
    tool: &str,
) -> Result<I, CallError> {
    let refusal = match schema::refusal(schema, &mut args, tool) {
        Ok(()) => return read_checked_value(args, tool),
        Err(refusal) => refusal,
    };
    tracing::debug!(tool, refusal = %refusal.message, "tool arguments refused");
    if refusal.shape {
        return Err(CallError::InvalidArguments(refusal.message));
    }
    // A value of the right JSON type that breaks its rule: one the types
    // cannot read at all (an unknown enum value) is of the wrong shape,
    // one a newtype refused is the tool's refusal.
    match read_value::<I>(args) {
        Err(ArgumentError::Shape(_)) => Err(CallError::InvalidArguments(refusal.message)),
        Ok(_) | Err(ArgumentError::Value(_)) => {
            Err(CallError::Tool(AppError::invalid_params(refusal.message)))
        }
    }
}

/// Why arguments were not read into their type.
#[derive(Debug)]
pub enum ArgumentError {
    /// A value its type refused (a key that is not 32 bytes, a date that
    /// does not exist): the argument and the reason, for the caller.
    Value(String),
    /// What the type cannot read at all, in serde's words (which name Rust
    /// types, so they are logged, never shown).
    Shape(String),
}

/// Read arguments into their type. The newtypes parsed at the edge
/// (`WalletAddress`, `TimeBound`, …) refuse with a reason of their own; the
/// argument is named from the path the error was raised at. A refusal in
/// serde's own words would name a Rust type: it is [`ArgumentError::Shape`].
/// Nothing is logged here: whether a failure is the caller's mistake or
/// ours depends on whether the schema admitted the arguments.
pub fn read_value<I: DeserializeOwned>(args: Value) -> Result<I, ArgumentError> {
    serde_path_to_error::deserialize::<_, I>(args).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner().to_string();
        let serde_words = [
            "invalid type",
            "expected",
            "unknown field",
            "missing field",
            "variant",
        ];
        if serde_words.iter().any(|w| inner.contains(w)) {
            ArgumentError::Shape(format!("{path}: {inner}"))
        } else {
            ArgumentError::Value(format!("{path}: {inner}"))
        }
    })
}

/// [`read_value`] for arguments the input schema admitted: a value refused
/// by its newtype is the tool's `invalid_params`; what the type cannot read
/// although the schema admitted it is a schema bug, logged at ERROR, and
/// answered as arguments that do not match the schema.
fn read_checked_value<I: DeserializeOwned>(args: Value, tool: &str) -> Result<I, CallError> {
    read_value(args).map_err(|err| match err {
        ArgumentError::Value(message) => CallError::Tool(AppError::invalid_params(message)),
        ArgumentError::Shape(detail) => {
            schema_disagrees(tool, &detail);
            CallError::InvalidArguments("arguments do not match the input schema".to_owned())
        }
    })
}

/// The input schema admitted what the argument type cannot read: the two
/// disagree, which is ours to fix, so it is logged at ERROR.
pub fn schema_disagrees(tool: &str, detail: &str) {
    tracing::error!(
        tool,
        error = detail,
        "arguments admitted by the schema failed to parse"
    );
}

/// The registry: tools by name, listed in name order.
pub struct Registry {
    tools: BTreeMap<&'static str, ToolDef>,
}

impl Registry {
    pub fn new(tools: impl IntoIterator<Item = ToolDef>) -> Self {
        Self {
            tools: tools.into_iter().map(|t| (t.meta.name, t)).collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&ToolDef> {
        self.tools.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ToolDef> {
        self.tools.values()
    }

    /// The `tools/list` result body.
    pub fn list(&self) -> Value {
        json!({ "tools": self.iter().map(ToolDef::listing).collect::<Vec<_>>() })
    }

    /// The registry summarised for the portal's tools page, each tool with
    /// its price under the configured pricing and research prices.
    pub fn summaries(&self, config: &crate::config::Config) -> Vec<app::ToolSummary> {
        self.iter()
            .map(|tool| app::ToolSummary {
                name: tool.meta.name.to_owned(),
                title: tool.meta.title.to_owned(),
                tier: tool.meta.tier.as_str().to_owned(),
                description: tool.meta.description.to_owned(),
                arguments: arguments(&tool.input_schema),
                read_only: tool.meta.annotations.read_only,
                group: match tool.meta.tier {
                    Tier::Free => "free",
                    Tier::Paid | Tier::PaidCachedRead | Tier::PaidCredits => "paid",
                    Tier::FreeAccountOnly => "account",
                }
                .to_owned(),
                price: price(tool.meta.name, tool.meta.tier, config),
            })
            .collect()
    }
}

/// 100000 as 100,000.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A tier's price in words.
fn price(tool: &str, tier: Tier, config: &crate::config::Config) -> String {
    let pricing = &config.pricing;
    let graph = &config.graph;
    match tier {
        Tier::Free => "Free".to_owned(),
        Tier::FreeAccountOnly => "Free, with an account".to_owned(),
        Tier::PaidCredits if tool == "find_first_funder" => format!(
            "${} a lookup, ${} when served from cache, from your account's prepaid research credits",
            graph.funder_usd, graph.cached_funder_usd
        ),
        Tier::PaidCredits => format!(
            "${} from a scanned ledger, ${} live, ${} when served from cache, from your account's prepaid research credits",
            graph.ledger_usd, graph.live_usd, graph.cached_live_usd
        ),
        Tier::PaidCachedRead => format!(
            "${} per wallet (a cached read; a scan's receipt covers it)",
            pricing.cached_read_usd
        ),
        Tier::Paid => {
            let sizes: Vec<String> = pricing
                .tiers
                .iter()
                .map(|t| match t.max_signatures {
                    Some(max) => format!(
                        "{} ${} up to {} signatures",
                        t.name,
                        t.price_usd,
                        thousands(max)
                    ),
                    None => format!("{} ${} above", t.name, t.price_usd),
                })
                .collect();
            format!(
                "As quoted by quote_wallet: preview ${}, incremental from ${}, full or refresh by \
                 size: {}",
                pricing.preview_usd,
                pricing.incremental_min_usd,
                sizes.join(", ")
            )
        }
    }
}

/// The arguments of an input schema, in declaration order.
fn arguments(schema: &Value) -> Vec<app::ArgumentSummary> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, prop)| app::ArgumentSummary {
            name: name.clone(),
            required: required.contains(&name.as_str()),
            kind: schema_kind(prop),
            description: prop["description"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

fn schema_kind(prop: &Value) -> String {
    match &prop["type"] {
        Value::String(t) => t.clone(),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" | "),
        _ if prop.get("enum").is_some() || prop.get("const").is_some() => "string".to_owned(),
        _ => {
            // anyOf/oneOf alternatives (an optional enum, say): their kinds.
            let mut kinds: Vec<String> = ["anyOf", "oneOf"]
                .iter()
                .filter_map(|k| prop[*k].as_array())
                .flatten()
                .map(schema_kind)
                .filter(|k| k != "null" && k != "any")
                .collect();
            kinds.dedup();
            if kinds.is_empty() {
                "any".to_owned()
            } else {
                kinds.join(" | ")
            }
        }
    }
}

fn generator() -> schemars::SchemaGenerator {
    // Inline subschemas: MCP clients validate with draft-07 validators that
    // handle `$defs` references poorly, and our shapes are small.
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
}

fn strip_meta(mut schema: Value) -> Value {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    schema
}

/// The input schema of `I`: an object that admits no unknown fields, in
/// the portable subset (optional means not required; no widths, no null).
pub fn input_schema<I: JsonSchema>() -> Value {
    let mut schema = strip_meta(generator().into_root_schema_for::<I>().to_value());
    schema::make_portable(&mut schema, Direction::Input);
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("type".to_owned(), json!("object"));
        obj.entry("properties").or_insert_with(|| json!({}));
        obj.insert("additionalProperties".to_owned(), json!(false));
    }
    schema
}

/// The shape every refusal takes in `structuredContent`: the REST error body.
/// `x402` carries a payment challenge, `error` why a payment was refused.
pub fn error_schema() -> Value {
    json!({
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": { "type": "string", "description": "Stable error code, e.g. payment_required, not_found." },
            "message": { "type": "string", "description": "What went wrong, for a person or a model." },
            "error": { "type": "string", "description": "Why a presented payment was refused." },
            "x402": { "type": "object", "description": "The x402 payment challenge (payment_required)." }
        },
        "additionalProperties": true
    })
}

/// The output schema of `O`, widened to admit the error shape too: clients
/// validate `structuredContent` even when `isError` is true.
pub fn output_schema<O: JsonSchema>() -> Value {
    let mut success = strip_meta(generator().into_root_schema_for::<O>().to_value());
    schema::make_portable(&mut success, Direction::Output);
    json!({
        "type": "object",
        "anyOf": [success, error_schema()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{payments::QuoteWalletArgs, telemetry::logs_of};

    #[test]
    fn a_caller_s_bad_arguments_are_logged_at_debug_never_error() {
        let schema = input_schema::<QuoteWalletArgs>();
        for args in [
            json!({}),
            json!({"address": 7}),
            json!({"address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", "scope": "all"}),
            json!({"address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", "x": 1}),
        ] {
            let (read, logs) = logs_of(|| {
                read_arguments::<QuoteWalletArgs>(&schema, args.clone(), "quote_wallet")
            });
            assert!(
                matches!(read, Err(CallError::InvalidArguments(_))),
                "{args}: {read:?}"
            );
            assert!(logs.contains("DEBUG"), "{args}: {logs}");
            assert!(logs.contains("tool arguments refused"), "{args}: {logs}");
            for level in ["ERROR", "WARN", "INFO"] {
                assert!(!logs.contains(level), "{args} logged at {level}: {logs}");
            }
        }
    }

    #[test]
    fn arguments_the_schema_admits_but_the_type_cannot_read_are_ours_logged_at_error() {
        // A schema that admits any address: the type still wants a string.
        let schema = json!({
            "type": "object",
            "properties": {"address": {}},
            "additionalProperties": false
        });
        let (read, logs) = logs_of(|| {
            read_arguments::<QuoteWalletArgs>(&schema, json!({"address": 7}), "quote_wallet")
        });
        assert_eq!(
            read.unwrap_err(),
            CallError::InvalidArguments("arguments do not match the input schema".to_owned())
        );
        assert!(logs.contains("ERROR"), "{logs}");
        assert!(
            logs.contains("arguments admitted by the schema failed to parse"),
            "{logs}"
        );
    }

    #[test]
    fn argument_kinds_read_through_optional_enums() {
        let schema = json!({
            "type": "object",
            "required": ["address"],
            "properties": {
                "address": {"type": "string", "description": "key"},
                "scope": {"anyOf": [{"oneOf": [{"const": "a", "type": "string"}]}, {"type": "null"}]},
                "limit": {"type": ["integer", "null"]}
            }
        });
        let args = arguments(&schema);
        let kinds: Vec<(&str, &str, bool)> = args
            .iter()
            .map(|a| (a.name.as_str(), a.kind.as_str(), a.required))
            .collect();
        assert!(kinds.contains(&("address", "string", true)));
        assert!(kinds.contains(&("scope", "string", false)));
        assert!(kinds.contains(&("limit", "integer", false)));
    }
}
