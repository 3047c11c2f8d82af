//! Time as the surfaces write it and the domain computes with it: RFC 3339
//! or a bare date in, unix seconds inside, RFC 3339 UTC to the second out.
//! Every layer reads and writes times the same way, so the parsing lives
//! here, below all of them.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};

/// RFC 3339 or YYYY-MM-DD as unix seconds; a bare date is the start of
/// that day (UTC), or its last second when `end_of_day`.
pub fn parse_time(text: &str, end_of_day: bool) -> Result<i64, String> {
    let text = text.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(t.timestamp());
    }
    let date = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|_| format!("{text:?} is neither RFC 3339 nor YYYY-MM-DD"))?;
    let time = if end_of_day {
        chrono::NaiveTime::from_hms_opt(23, 59, 59)
    } else {
        chrono::NaiveTime::from_hms_opt(0, 0, 0)
    }
    .ok_or("time of day")?;
    Ok(date.and_time(time).and_utc().timestamp())
}

/// Milliseconds since the epoch as RFC 3339 UTC, to the second.
pub fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// A time bound as a caller wrote it (RFC 3339 or YYYY-MM-DD), checked
/// when it is read. Whether a bare date means the start or the end of its
/// day depends on which bound it is, so the seconds are asked for with
/// [`TimeBound::start`] or [`TimeBound::end`]. An empty text is no bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeBound(String);

impl JsonSchema for TimeBound {
    fn schema_name() -> Cow<'static, str> {
        "TimeBound".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                {"type": "string", "format": "date-time"},
                {"type": "string", "format": "date"},
            ],
        })
    }
}

impl TimeBound {
    pub fn parse(text: &str) -> Result<Option<Self>, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        parse_time(text, false)?;
        Ok(Some(Self(text.to_owned())))
    }

    /// The bound as the first second it admits.
    pub fn start(&self) -> i64 {
        parse_time(&self.0, false).unwrap_or(i64::MIN)
    }

    /// The bound as the last second it admits.
    pub fn end(&self) -> i64 {
        parse_time(&self.0, true).unwrap_or(i64::MAX)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An optional bound from its text: absent or empty is none; anything else
/// must parse.
pub fn optional_bound<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TimeBound>, D::Error> {
    let text: Option<String> = Option::deserialize(d)?;
    match text {
        None => Ok(None),
        Some(text) => TimeBound::parse(&text).map_err(serde::de::Error::custom),
    }
}

/// Optional inclusive bounds in unix seconds, `from` no later than `to`.
pub fn range(
    from: Option<&TimeBound>,
    to: Option<&TimeBound>,
) -> Result<(Option<i64>, Option<i64>), String> {
    let (from, to) = (from.map(TimeBound::start), to.map(TimeBound::end));
    if let (Some(f), Some(t)) = (from, to)
        && f > t
    {
        return Err("from is after to".to_owned());
    }
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_rfc3339_or_dates() {
        assert_eq!(parse_time("2026-09-01T10:00:00Z", false), Ok(1_788_256_800));
        assert_eq!(parse_time("2026-09-01", false), Ok(1_788_220_800));
        assert_eq!(parse_time("2026-09-01", true), Ok(1_788_307_199));
        assert!(parse_time("yesterday", false).is_err());
        assert!(parse_time("2026-13-01", false).is_err());
    }

    #[test]
    fn a_bare_date_bound_covers_its_whole_day() {
        let day = TimeBound::parse("2026-09-01").unwrap().unwrap();
        assert_eq!(day.start(), 1_788_220_800);
        assert_eq!(day.end(), 1_788_307_199);
        assert_eq!(TimeBound::parse("  ").unwrap(), None);
        assert!(TimeBound::parse("soon").is_err());
    }

    #[test]
    fn a_range_refuses_from_after_to() {
        let a = TimeBound::parse("2026-09-02").unwrap();
        let b = TimeBound::parse("2026-09-01").unwrap();
        assert_eq!(
            range(a.as_ref(), b.as_ref()),
            Err("from is after to".to_owned())
        );
        assert!(range(b.as_ref(), a.as_ref()).is_ok());
    }
}
