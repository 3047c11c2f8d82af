//! Civil dates in the five jurisdictions' time zones, without a time-zone
//! database: tax years and holding periods are counted in local dates, and
//! the daylight-saving rules of these zones are short statutes.
//!
//! The rules are today's, applied to every year: the EU and UK since 1996
//! (Directive 2000/84/EC art. 2–3; Summer Time Order 2002), Ontario since
//! 2007 (Time Act, R.S.O. 1990 c. T.9 as amended), New South Wales since
//! 2008 (Standard Time Act 1987 (NSW) s.4–5). Earlier years can be an hour
//! off near a change, which moves a date only for events within an hour of
//! midnight on a changeover weekend.

use chrono::{DateTime, Datelike, NaiveDate, Weekday};

/// The taxpayer's time zone: one of the jurisdictions' zones, New York,
/// or a fixed offset from UTC (a zone without summer time, e.g. +08:00 for
/// Perth, -06:00 for Regina). A taxpayer living elsewhere than the
/// jurisdiction's default zone must set theirs: tax years and holding
/// periods are counted in the taxpayer's own civil dates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Zone {
    Utc,
    /// A fixed offset east of UTC, in seconds.
    Fixed(i32),
    /// Europe/London: GMT, BST (+1) from the last Sunday of March to the
    /// last Sunday of October, changing at 01:00 UTC.
    London,
    /// Europe/Berlin: CET (+1), CEST (+2) on the same EU dates and hour.
    Berlin,
    /// America/Toronto: EST (-5), EDT (-4) from the second Sunday of March
    /// 02:00 local to the first Sunday of November 02:00 local.
    Toronto,
    /// America/New_York: the same rule as Toronto (15 USC §260a, the
    /// Energy Policy Act 2005 dates).
    NewYork,
    /// Australia/Sydney: AEST (+10), AEDT (+11) from the first Sunday of
    /// October 02:00 local to the first Sunday of April 03:00 local.
    Sydney,
}

const HOUR: i64 = 3_600;

impl Zone {
    /// Offset from UTC in seconds at `unix`.
    pub fn offset(self, unix: i64) -> i64 {
        let Some(year) = DateTime::from_timestamp(unix, 0).map(|t| t.year()) else {
            return 0;
        };
        match self {
            Zone::Utc => 0,
            Zone::Fixed(seconds) => i64::from(seconds),
            Zone::London => eu_summer(year, unix) as i64 * HOUR,
            Zone::Berlin => HOUR + eu_summer(year, unix) as i64 * HOUR,
            Zone::Toronto | Zone::NewYork => {
                // 02:00 EST = 07:00 UTC; 02:00 EDT = 06:00 UTC.
                let start = at(nth_sunday(year, 3, 2), 7);
                let end = at(nth_sunday(year, 11, 1), 6);
                let summer = (start..end).contains(&unix);
                -5 * HOUR + summer as i64 * HOUR
            }
            Zone::Sydney => {
                // 02:00 AEST and 03:00 AEDT are both 16:00 UTC the day before.
                let end = at(nth_sunday(year, 4, 1), 16) - 24 * HOUR;
                let start = at(nth_sunday(year, 10, 1), 16) - 24 * HOUR;
                let summer = unix < end || unix >= start;
                10 * HOUR + summer as i64 * HOUR
            }
        }
    }

    /// `UTC`, `Europe/London`, `Europe/Berlin`, `America/Toronto`,
    /// `America/New_York`, `Australia/Sydney`, or a fixed offset `+HH:MM` /
    /// `-HH:MM`.
    pub fn parse(text: &str) -> Option<Zone> {
        Some(match text {
            "UTC" | "Etc/UTC" => Zone::Utc,
            "Europe/London" => Zone::London,
            "Europe/Berlin" => Zone::Berlin,
            "America/Toronto" => Zone::Toronto,
            "America/New_York" => Zone::NewYork,
            "Australia/Sydney" => Zone::Sydney,
            _ => {
                let sign = match text.get(..1)? {
                    "+" => 1,
                    "-" => -1,
                    _ => return None,
                };
                let (h, m) = text.get(1..)?.split_once(':')?;
                let (h, m): (i32, i32) = (h.parse().ok()?, m.parse().ok()?);
                if !(0..=14).contains(&h) || !(0..60).contains(&m) {
                    return None;
                }
                Zone::Fixed(sign * (h * 3_600 + m * 60))
            }
        })
    }

    /// The civil date at `unix` in this zone.
    pub fn date(self, unix: i64) -> Option<NaiveDate> {
        DateTime::from_timestamp(unix.checked_add(self.offset(unix))?, 0).map(|t| t.date_naive())
    }
}

/// Summer time in the EU and UK: last Sunday of March 01:00 UTC to last
/// Sunday of October 01:00 UTC.
fn eu_summer(year: i32, unix: i64) -> bool {
    let start = at(last_sunday(year, 3), 1);
    let end = at(last_sunday(year, 10), 1);
    (start..end).contains(&unix)
}

fn at(date: Option<NaiveDate>, hour_utc: u32) -> i64 {
    date.and_then(|d| d.and_hms_opt(hour_utc, 0, 0))
        .map_or(0, |t| t.and_utc().timestamp())
}

fn nth_sunday(year: i32, month: u32, n: u8) -> Option<NaiveDate> {
    NaiveDate::from_weekday_of_month_opt(year, month, Weekday::Sun, n)
}

fn last_sunday(year: i32, month: u32) -> Option<NaiveDate> {
    nth_sunday(year, month, 5).or_else(|| nth_sunday(year, month, 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_parse_by_name_or_offset() {
        assert_eq!(Zone::parse("America/New_York"), Some(Zone::NewYork));
        assert_eq!(Zone::parse("+08:00"), Some(Zone::Fixed(8 * 3_600)));
        assert_eq!(
            Zone::parse("-03:30"),
            Some(Zone::Fixed(-(3 * 3_600 + 1_800)))
        );
        assert_eq!(Zone::parse("Mars/Olympus"), None);
        assert_eq!(Zone::parse("+25:00"), None);
        // Perth (+08:00): 31 December 2024 17:00 UTC is 1 January 2025.
        let perth = Zone::parse("+08:00").unwrap();
        assert_eq!(perth.date(utc("2024-12-31T17:00:00Z")), date(2025, 1, 1));
    }

    fn utc(text: &str) -> i64 {
        DateTime::parse_from_rfc3339(text).unwrap().timestamp()
    }

    fn date(y: i32, m: u32, d: u32) -> Option<NaiveDate> {
        NaiveDate::from_ymd_opt(y, m, d)
    }

    #[test]
    fn london_is_an_hour_ahead_of_utc_in_summer_only() {
        // BST 2024: 31 March 01:00 UTC to 27 October 01:00 UTC.
        assert_eq!(Zone::London.offset(utc("2024-03-31T00:59:59Z")), 0);
        assert_eq!(Zone::London.offset(utc("2024-03-31T01:00:00Z")), HOUR);
        assert_eq!(Zone::London.offset(utc("2024-10-27T00:59:59Z")), HOUR);
        assert_eq!(Zone::London.offset(utc("2024-10-27T01:00:00Z")), 0);
        // 5 April 2024 23:30 UTC is already 6 April in London (BST).
        assert_eq!(
            Zone::London.date(utc("2024-04-05T23:30:00Z")),
            date(2024, 4, 6)
        );
    }

    #[test]
    fn berlin_toronto_and_sydney_follow_their_statutes() {
        assert_eq!(Zone::Berlin.offset(utc("2024-01-15T12:00:00Z")), HOUR);
        assert_eq!(Zone::Berlin.offset(utc("2024-07-15T12:00:00Z")), 2 * HOUR);
        // Toronto 2024: EDT from 10 March 07:00 UTC to 3 November 06:00 UTC.
        assert_eq!(Zone::Toronto.offset(utc("2024-03-10T06:59:59Z")), -5 * HOUR);
        assert_eq!(Zone::Toronto.offset(utc("2024-03-10T07:00:00Z")), -4 * HOUR);
        assert_eq!(Zone::Toronto.offset(utc("2024-11-03T05:59:59Z")), -4 * HOUR);
        assert_eq!(Zone::Toronto.offset(utc("2024-11-03T06:00:00Z")), -5 * HOUR);
        assert_eq!(Zone::NewYork.offset(utc("2024-03-10T07:00:00Z")), -4 * HOUR);
        // Sydney: AEDT until 7 April 2024 03:00 local (6 April 16:00 UTC),
        // again from 6 October 2024 02:00 local (5 October 16:00 UTC).
        assert_eq!(Zone::Sydney.offset(utc("2024-04-06T15:59:59Z")), 11 * HOUR);
        assert_eq!(Zone::Sydney.offset(utc("2024-04-06T16:00:00Z")), 10 * HOUR);
        assert_eq!(Zone::Sydney.offset(utc("2024-10-05T15:59:59Z")), 10 * HOUR);
        assert_eq!(Zone::Sydney.offset(utc("2024-10-05T16:00:00Z")), 11 * HOUR);
        // 30 June 2024 14:30 UTC is 1 July 00:30 in Sydney (AEST).
        assert_eq!(
            Zone::Sydney.date(utc("2024-06-30T14:30:00Z")),
            date(2024, 7, 1)
        );
    }
}
