//! Tool schemas in the portable subset of JSON Schema, and the one check that
//! holds arguments to them.
//!
//! schemars writes what serde accepts: an optional field becomes
//! `"type": ["integer", "null"]` with `"default": null`, an integer carries
//! its Rust width as a `format` (`uint32`, `int64`), a documented enum a
//! `oneOf` of `const`s. The MCP SDKs' validators and the Inspector warn about
//! all three. So a schema is rewritten once, here: an optional argument is
//! one that is simply not `required`, an integer has a `minimum` and a
//! `maximum` instead of a width, an enum is `"enum": [..]` of strings, and a
//! value that can be null in a result says so with `anyOf`.
//!
//! [`check`] then validates arguments against the rewritten schema before
//! they are read into the typed struct, so what the schema admits and what
//! the server accepts cannot drift, and a refusal names the argument and the
//! rule ("limit: must be an integer from 1 to 1000"), never a Rust type.
//! The REST twins run their query parameters through the same check.

use std::{
    collections::HashMap,
    sync::{LazyLock, RwLock},
};

use regex::Regex;
use serde_json::{Map, Value, json};

/// Compiled `pattern`s. The patterns are the schemas' own (a handful, fixed
/// at start), and compiling one cost more than the rest of a ledger page's
/// argument check, so each is compiled once.
static PATTERNS: LazyLock<RwLock<HashMap<String, Option<Regex>>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// Whether `text` matches the schema `pattern` (an invalid pattern matches
/// nothing).
fn matches_pattern(pattern: &str, text: &str) -> bool {
    if let Ok(compiled) = PATTERNS.read()
        && let Some(re) = compiled.get(pattern)
    {
        return re.as_ref().is_some_and(|re| re.is_match(text));
    }
    let re = Regex::new(pattern).ok();
    let matched = re.as_ref().is_some_and(|re| re.is_match(text));
    if let Ok(mut compiled) = PATTERNS.write() {
        compiled.insert(pattern.to_owned(), re);
    }
    matched
}

/// Whether a schema describes what a client sends or what it receives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Input,
    Output,
}

/// Rewrite a generated schema into the portable subset, in place.
pub fn make_portable(schema: &mut Value, direction: Direction) {
    if let Value::Object(obj) = schema {
        walk(obj, direction);
    }
}

fn walk(obj: &mut Map<String, Value>, direction: Direction) {
    // A tuple (`[unix seconds, "usd"]`): draft-07 writes `items: [A, B]`,
    // 2020-12 `prefixItems`, and validators (and OpenAPI tools) read one or
    // the other, so a tuple is said the way both read: its length, and
    // each item one of the member types.
    let tuple = match obj.get("prefixItems").or_else(|| obj.get("items")) {
        Some(Value::Array(tuple)) => Some(tuple.clone()),
        _ => None,
    };
    if let Some(tuple) = tuple {
        obj.remove("prefixItems");
        let mut members: Vec<Value> = Vec::new();
        for member in tuple {
            if !members.contains(&member) {
                members.push(member);
            }
        }
        obj.insert("minItems".to_owned(), json!(members.len().max(1)));
        obj.insert("maxItems".to_owned(), json!(members.len().max(1)));
        let items = match <[Value; 1]>::try_from(members) {
            Ok([one]) => one,
            Err(many) => json!({"anyOf": many}),
        };
        obj.insert("items".to_owned(), items);
    }
    for key in ["items", "additionalProperties", "not", "contains"] {
        if let Some(Value::Object(sub)) = obj.get_mut(key) {
            walk(sub, direction);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(list)) = obj.get_mut(key) {
            for sub in list.iter_mut() {
                if let Value::Object(sub) = sub {
                    walk(sub, direction);
                }
            }
        }
    }
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for sub in props.values_mut() {
            if let Value::Object(sub) = sub {
                walk(sub, direction);
            }
        }
    }
    simplify(obj, direction);
}

fn simplify(obj: &mut Map<String, Value>, direction: Direction) {
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
    if let Some(Value::String(description)) = obj.get_mut("description") {
        *description = unwrap_lines(description);
    }

    if let Some(Value::String(format)) = obj.get("format").cloned()
        && let Some(bounds) = width_bounds(&format)
    {
        obj.remove("format");
        if direction == Direction::Input
            && let Some((min, max)) = bounds
        {
            obj.entry("minimum").or_insert(min);
            obj.entry("maximum").or_insert(max);
        }
    }
    // A documented enum: oneOf [{const, type: string, description}, ..].
    if let Some(Value::Array(variants)) = obj.get("oneOf")
        && !variants.is_empty()
        && variants
            .iter()
            .all(|v| v.get("const").is_some_and(Value::is_string))
    {
        let values: Vec<Value> = variants.iter().map(|v| v["const"].clone()).collect();
        obj.remove("oneOf");
        obj.insert("type".to_owned(), json!("string"));
        obj.insert("enum".to_owned(), Value::Array(values));
    }
    // Nullable: `type: [T, "null"]`.
    if let Some(Value::Array(types)) = obj.get("type").cloned() {
        let rest: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
        let single = match rest.as_slice() {
            [one] => one.clone(),
            _ => Value::Array(rest),
        };
        match direction {
            Direction::Input => {
                obj.insert("type".to_owned(), single);
                if let Some(Value::Array(values)) = obj.get_mut("enum") {
                    values.retain(|v| !v.is_null());
                }
            }
            Direction::Output => {
                obj.insert("type".to_owned(), single);
                if let Some(Value::Array(values)) = obj.get_mut("enum") {
                    values.retain(|v| !v.is_null());
                }
                let description = obj.remove("description");
                let inner = std::mem::take(obj);
                obj.insert(
                    "anyOf".to_owned(),
                    json!([Value::Object(inner), {"type": "null"}]),
                );
                if let Some(d) = description {
                    obj.insert("description".to_owned(), d);
                }
            }
        }
    }
    // An optional argument of a schema'd type: anyOf [X, {type: null}].
    if direction == Direction::Input
        && let Some(Value::Array(branches)) = obj.get("anyOf").cloned()
    {
        let rest: Vec<Value> = branches
            .into_iter()
            .filter(|b| b != &json!({"type": "null"}))
            .collect();
        if let [Value::Object(only)] = rest.as_slice() {
            obj.remove("anyOf");
            for (k, v) in only {
                obj.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
}

/// `Some(bounds)` for a Rust width format (bounds for integers), `None`
/// for a format that means something to a client (`date-time`, …).
fn width_bounds(format: &str) -> Option<Option<(Value, Value)>> {
    Some(Some(match format {
        "uint8" => (json!(0), json!(u8::MAX)),
        "uint16" => (json!(0), json!(u16::MAX)),
        "uint32" | "uint" => (json!(0), json!(u32::MAX)),
        "uint64" | "uint128" => (json!(0), json!(u64::MAX)),
        "int8" => (json!(i8::MIN), json!(i8::MAX)),
        "int16" => (json!(i16::MIN), json!(i16::MAX)),
        "int32" | "int" => (json!(i32::MIN), json!(i32::MAX)),
        "int64" | "int128" => (json!(i64::MIN), json!(i64::MAX)),
        "float" | "double" => return Some(None),
        _ => return None,
    }))
}

/// Why arguments were refused: the rule, in words, and whether the refusal
/// is of their shape (a wrong JSON type, a missing or unknown argument)
/// rather than of a value of the right type.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub shape: bool,
}

/// Check a tool's arguments (a JSON object) against its input schema.
/// Integral numbers such as `10.0` given for an integer are rewritten as
/// integers, as JSON Schema counts them integers too. The error names the
/// argument and the rule.
pub fn check(schema: &Value, args: &mut Value, tool: &str) -> Result<(), String> {
    refusal(schema, args, tool).map_err(|r| r.message)
}

/// [`check`], telling a shape refusal from a value refusal.
pub fn refusal(schema: &Value, args: &mut Value, tool: &str) -> Result<(), Refusal> {
    let shape = |message: String| Refusal {
        message,
        shape: true,
    };
    let Value::Object(given) = args else {
        return Err(shape("arguments must be a JSON object".to_owned()));
    };
    let no_properties = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&no_properties);
    let mut names: Vec<&String> = given.keys().collect();
    names.sort();
    for name in names {
        if !properties.contains_key(name) {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            return Err(shape(if known.is_empty() {
                format!("unknown field `{name}`: {tool} takes no arguments")
            } else {
                format!(
                    "unknown field `{name}`: the arguments of {tool} are {}",
                    known.join(", ")
                )
            }));
        }
    }
    if let Some(required) = schema["required"].as_array() {
        for name in required.iter().filter_map(Value::as_str) {
            if !given.contains_key(name) {
                return Err(shape(format!(
                    "{name}: required, must be {}",
                    describe(&properties[name])
                )));
            }
        }
    }
    for (name, value) in given.iter_mut() {
        let rule = &properties[name];
        if !admits(rule, value) {
            return Err(Refusal {
                message: format!("{name}: must be {}", describe(rule)),
                shape: !typed(rule, value),
            });
        }
    }
    Ok(())
}

/// A doc comment's text as one line per paragraph: schemars keeps the
/// comment's line breaks, so a description wrapped at 100 columns would
/// read `(x402\nexact scheme)` where the guide reads `(x402 exact scheme)`.
fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| {
            paragraph
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Whether `value` satisfies `schema` (the subset our schemas use).
pub fn admits(schema: &Value, value: &mut Value) -> bool {
    if let Some(branches) = schema["anyOf"].as_array() {
        return branches.iter().any(|b| admits(b, &mut value.clone()));
    }
    if let Some(values) = schema["enum"].as_array()
        && !values.contains(value)
    {
        return false;
    }
    let typed = match schema["type"].as_str() {
        None => true,
        Some("string") => value.is_string(),
        Some("boolean") => value.is_boolean(),
        Some("number") => value.is_number(),
        Some("integer") => {
            if let Some(f) = value.as_f64().filter(|_| value.is_f64())
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                // 10.0 is the integer 10 to JSON Schema.
                *value = json!(f as i64);
            }
            value.is_i64() || value.is_u64()
        }
        Some("array") => value.is_array(),
        Some("object") => value.is_object(),
        Some("null") => value.is_null(),
        Some(_) => false,
    };
    if !typed {
        return false;
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema["minimum"].as_f64()
            && !at_least(value, &schema["minimum"], n, min)
        {
            return false;
        }
        if let Some(max) = schema["maximum"].as_f64()
            && !at_most(value, &schema["maximum"], n, max)
        {
            return false;
        }
    }
    if let Some(text) = value.as_str() {
        let chars = text.chars().count() as u64;
        if schema["minLength"].as_u64().is_some_and(|m| chars < m)
            || schema["maxLength"].as_u64().is_some_and(|m| chars > m)
        {
            return false;
        }
        if let Some(pattern) = schema["pattern"].as_str()
            && !matches_pattern(pattern, text)
        {
            return false;
        }
        match schema["format"].as_str() {
            Some("date-time") if chrono::DateTime::parse_from_rfc3339(text).is_err() => {
                return false;
            }
            Some("date")
                if text.len() != 10
                    || chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_err() =>
            {
                return false;
            }
            _ => {}
        }
    }
    if let Some(items) = value.as_array_mut() {
        if schema["maxItems"]
            .as_u64()
            .is_some_and(|m| items.len() as u64 > m)
        {
            return false;
        }
        if let Some(item) = schema.get("items") {
            return items.iter_mut().all(|v| admits(item, v));
        }
    }
    true
}

/// Whether `value` is of the JSON type `schema` names (any branch of an
/// `anyOf`, each item of an array), whatever the other rules say.
fn typed(schema: &Value, value: &Value) -> bool {
    if let Some(branches) = schema["anyOf"].as_array() {
        return branches.iter().any(|b| typed(b, value));
    }
    let items_typed = || {
        schema.get("items").is_none_or(|item| {
            value
                .as_array()
                .is_some_and(|v| v.iter().all(|x| typed(item, x)))
        })
    };
    match schema["type"].as_str() {
        Some("string") => value.is_string(),
        Some("boolean") => value.is_boolean(),
        Some("number") => value.is_number(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("array") => value.is_array() && items_typed(),
        Some("object") => value.is_object(),
        Some("null") => value.is_null(),
        _ => true,
    }
}

/// Compare exactly when both sides are integers (u64::MAX is not an f64).
fn at_least(value: &Value, bound: &Value, n: f64, min: f64) -> bool {
    match (as_i128(value), as_i128(bound)) {
        (Some(v), Some(b)) => v >= b,
        _ => n >= min,
    }
}

fn at_most(value: &Value, bound: &Value, n: f64, max: f64) -> bool {
    match (as_i128(value), as_i128(bound)) {
        (Some(v), Some(b)) => v <= b,
        _ => n <= max,
    }
}

fn as_i128(value: &Value) -> Option<i128> {
    value
        .as_i64()
        .map(i128::from)
        .or_else(|| value.as_u64().map(i128::from))
}

/// The rule a schema states, in words: "an integer from 1 to 1000".
pub fn describe(schema: &Value) -> String {
    if let Some(title) = schema["title"].as_str() {
        return title.to_owned();
    }
    if let Some(branches) = schema["anyOf"].as_array() {
        return branches
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if let Some(values) = schema["enum"].as_array() {
        let words: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        return format!("one of {}", words.join(", "));
    }
    let bounds = |noun: &str| {
        let (min, max) = (&schema["minimum"], &schema["maximum"]);
        match (min.is_number(), max.is_number()) {
            (true, true) => format!("{noun} from {min} to {max}"),
            (true, false) => format!("{noun} of at least {min}"),
            (false, true) => format!("{noun} of at most {max}"),
            (false, false) => noun.to_owned(),
        }
    };
    match schema["type"].as_str() {
        Some("integer") => bounds("an integer"),
        Some("number") => bounds("a number"),
        Some("boolean") => "true or false".to_owned(),
        Some("array") => {
            // A list's length is part of its rule ("at most 20 wallets").
            let list = match (schema["minItems"].as_u64(), schema["maxItems"].as_u64()) {
                (Some(min), Some(max)) if min > 0 => format!("a list of {min} to {max} items"),
                (_, Some(max)) => format!("a list of at most {max} items"),
                _ => "a list".to_owned(),
            };
            match schema.get("items") {
                Some(items) => format!("{list}, each item {}", describe(items)),
                None => list,
            }
        }
        Some("object") => "an object".to_owned(),
        Some("string") => match schema["format"].as_str() {
            Some("date-time") => "an RFC 3339 time (2026-01-31T12:00:00Z)".to_owned(),
            Some("date") => "a date as YYYY-MM-DD".to_owned(),
            _ => match schema["pattern"].as_str() {
                Some(pattern) => format!("a string matching {pattern}"),
                None => {
                    let (min, max) = (&schema["minLength"], &schema["maxLength"]);
                    match (min.as_u64(), max.as_u64()) {
                        (Some(min), Some(max)) => {
                            format!("a string of {min} to {max} characters")
                        }
                        (Some(min), None) => format!("a string of at least {min} characters"),
                        (None, Some(max)) => format!("a string of at most {max} characters"),
                        (None, None) => "a string".to_owned(),
                    }
                }
            },
        },
        _ => "a JSON value".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_lose_the_doc_comment_line_breaks_but_keep_paragraphs() {
        assert_eq!(
            unwrap_lines("Base64 X-PAYMENT built for the challenge (x402\nexact scheme)."),
            "Base64 X-PAYMENT built for the challenge (x402 exact scheme)."
        );
        assert_eq!(unwrap_lines("One.\n\nTwo\n  lines."), "One.\n\nTwo lines.");
        let mut schema = json!({"type": "object", "properties": {
            "payment": {"type": "string", "description": "a\nb"}}});
        make_portable(&mut schema, Direction::Input);
        assert_eq!(schema["properties"]["payment"]["description"], "a b");
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "required": ["address"],
            "properties": {
                "address": {"type": "string", "title": "a base58 public key", "pattern": "^[1-9A-HJ-NP-Za-km-z]{32,44}$"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
                "min_usd_value": {"type": "number", "minimum": 0},
                "scope": {"type": "string", "enum": ["full", "read"]},
                "exclude": {"type": "array", "items": {"type": "string", "enum": ["swap"]}},
                "from": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}]}
            },
            "additionalProperties": false
        })
    }

    fn refusal(args: Value) -> String {
        let mut args = args;
        check(&schema(), &mut args, "get_ledger").unwrap_err()
    }

    #[test]
    fn a_length_rule_is_said_in_characters() {
        assert_eq!(
            describe(&json!({"type": "string", "maxLength": 64})),
            "a string of at most 64 characters"
        );
        assert_eq!(
            describe(&json!({"type": "string", "minLength": 1, "maxLength": 8})),
            "a string of 1 to 8 characters"
        );
    }

    #[test]
    fn refusals_name_the_argument_and_the_rule() {
        let address = "11111111111111111111111111111111";
        for (args, message) in [
            (
                json!({"address": address, "limit": 0}),
                "limit: must be an integer from 1 to 1000",
            ),
            (
                json!({"address": address, "limit": "5"}),
                "limit: must be an integer from 1 to 1000",
            ),
            (
                json!({"address": address, "min_usd_value": "1"}),
                "min_usd_value: must be a number of at least 0",
            ),
            (
                json!({"address": address, "min_usd_value": -1}),
                "min_usd_value: must be a number of at least 0",
            ),
            (
                json!({"address": address, "min_usd_value": true}),
                "min_usd_value: must be a number of at least 0",
            ),
            (
                json!({"address": address, "scope": {"read": null}}),
                "scope: must be one of full, read",
            ),
            (
                json!({"address": address, "exclude": ["theft"]}),
                "exclude: must be a list, each item one of swap",
            ),
            (
                json!({"address": address, "from": "2026-13-01"}),
                "from: must be an RFC 3339 time (2026-01-31T12:00:00Z) or a date as YYYY-MM-DD",
            ),
            (
                json!({"address": " x"}),
                "address: must be a base58 public key",
            ),
            (json!({}), "address: required, must be a base58 public key"),
            (
                json!({"address": address, "verbose": true}),
                "unknown field `verbose`: the arguments of get_ledger are address, exclude, from, limit, min_usd_value, scope",
            ),
        ] {
            assert_eq!(refusal(args.clone()), message, "{args}");
        }
    }

    #[test]
    fn admitted_values_pass_and_integral_numbers_become_integers() {
        let mut args = json!({
            "address": "11111111111111111111111111111111",
            "limit": 10.0,
            "min_usd_value": 0.25,
            "exclude": ["swap"],
            "from": "2026-01-31",
        });
        check(&schema(), &mut args, "get_ledger").unwrap();
        assert_eq!(args["limit"], json!(10));
        assert!(args["limit"].is_u64());
    }

    #[test]
    fn optional_arguments_lose_null_and_widths_become_bounds() {
        let mut s = json!({
            "type": "object",
            "properties": {
                "top": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "default": null},
                "scope": {"anyOf": [{"oneOf": [{"const": "a", "type": "string", "description": "A"}, {"const": "b", "type": "string"}]}, {"type": "null"}], "description": "which"}
            }
        });
        make_portable(&mut s, Direction::Input);
        assert_eq!(
            s["properties"]["top"],
            json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
        );
        assert_eq!(
            s["properties"]["scope"],
            json!({"type": "string", "enum": ["a", "b"], "description": "which"})
        );
        let mut out = json!({"type": ["string", "null"], "description": "d"});
        make_portable(&mut out, Direction::Output);
        assert_eq!(
            out,
            json!({"anyOf": [{"type": "string"}, {"type": "null"}], "description": "d"})
        );
    }
}
