//! Reading prices out of JSON without ever holding them as `f64`.
//!
//! Coinbase's candles and Jupiter's `usdPrice` are JSON numbers. serde_json
//! (without its `arbitrary_precision` feature, which would change every
//! number in the workspace) turns a number into a float before anyone sees
//! it. So the body is first rewritten with every bare number quoted, then
//! deserialized: a `Decimal` is parsed from the number's own digits.

/// `text` with every JSON number outside a string wrapped in quotes.
pub fn quote_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut in_string = false;
    let mut escaped = false;
    let mut in_number = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        let numeric = c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E');
        if in_number && !numeric {
            out.push('"');
            in_number = false;
        }
        if !in_number && (c.is_ascii_digit() || c == '-') {
            out.push('"');
            in_number = true;
        }
        if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    if in_number {
        out.push('"');
    }
    out
}

/// A decimal from a number's text, exponent notation included.
pub fn decimal(text: &str) -> Option<rust_decimal::Decimal> {
    use std::str::FromStr;
    rust_decimal::Decimal::from_str(text)
        .or_else(|_| rust_decimal::Decimal::from_scientific(text))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_quoted_and_strings_left_alone() {
        assert_eq!(
            quote_numbers(r#"[[1700000000, 0.1, -2.5e3], {"a":"x-1 \" 2","b":147.48}]"#),
            r#"[["1700000000", "0.1", "-2.5e3"], {"a":"x-1 \" 2","b":"147.48"}]"#
        );
        assert_eq!(quote_numbers("12"), "\"12\"");
        assert_eq!(
            decimal("147.48").map(|d| d.to_string()),
            Some("147.48".into())
        );
        assert_eq!(
            decimal("1.5e2").map(|d| d.normalize().to_string()),
            Some("150".into())
        );
    }
}
