//! The European Central Bank's euro foreign exchange reference rates: the
//! one official source that publishes all five reporting currencies (USD,
//! GBP, CAD, AUD, each per one euro), fetched when a report asks for a
//! currency other than USD and stored like a price series.
//!
//! The document is the ECB's own XML time series (`eurofxref-hist.xml`
//! since 1999, or `eurofxref-hist-90d.xml` for the last 90 days; the ECB's
//! page "Euro foreign exchange reference rates", Statistics > Exchange
//! rates), at `prices.ecb_url`. Its shape, as the ECB publishes it:
//!
//! ```xml
//! <gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"
//!                  xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
//!   <gesmes:subject>Reference rates</gesmes:subject>
//!   <gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
//!   <Cube>
//!     <Cube time="2024-03-28">
//!       <Cube currency="USD" rate="1.0811"/>
//!       …
//! ```
//!
//! One `Cube` with a `time` per TARGET working day, newest first, and in it
//! one `Cube` per currency with how many units one euro buys. It is read
//! with `roxmltree` (a read-only DOM over the text, no unsafe code, no
//! network or entity expansion: docs/prices.md says why it was chosen).
//!
//! Stored as daily series `ecb:USD`, `ecb:GBP`, `ecb:CAD`, `ecb:AUD` (the
//! bucket is the UTC day of the rate's date, the close the rate). A fetch
//! records every day from the document's first date (or the first day a
//! report asked for, if earlier: the document has nothing for it and
//! asking again would not change that) to the day before the fetch as
//! asked, so a day is fetched once and a day without a rate (a weekend, a
//! TARGET holiday) is known to have none. Today is never recorded: its
//! rate appears around 16:00 CET. An unreachable or malformed document is
//! an error the report names; never a zero or made-up rate.

use chrono::{NaiveDate, NaiveTime};
use rust_decimal::Decimal;

use super::{Granularity, PriceError, Prices, json};
use crate::{
    clock::UnixMillis,
    store::Store,
    values::fx::{Currency, RateTable},
};

/// The `source` column of stored rates.
pub const SOURCE: &str = "ecb";

/// The currencies the ECB quotes against the euro that reports use.
pub const QUOTED: [Currency; 4] = [Currency::Usd, Currency::Gbp, Currency::Cad, Currency::Aud];

/// The stored series of `currency` per euro: `ecb:USD`.
pub fn series(currency: Currency) -> String {
    format!("ecb:{}", currency.code())
}

/// The largest document read: the full history since 1999 is a few MiB
/// (about 7,000 days of some 30 currencies); anything far larger is not the
/// ECB's document and is refused before it is held in memory.
pub const MAX_DOCUMENT_BYTES: usize = 32 << 20;

/// The most XML nodes parsed (the full history has well under a million).
const MAX_NODES: u32 = 4_000_000;

/// The ECB document's client.
pub struct Ecb {
    pub http: reqwest::Client,
    pub url: String,
    /// One fetch at a time: callers that find the same days missing wait
    /// for the first fetch and then find them stored, so a burst of calls
    /// downloads the document once.
    pub fetching: tokio::sync::Mutex<()>,
    /// Like every price source, behind a breaker: while the ECB fails,
    /// calls are refused at once for the cool-down instead of each waiting
    /// out the timeout and downloading again.
    pub breaker: super::breaker::Breaker,
    /// When the document was last read whole: within [`REFETCH_AFTER_MS`]
    /// it is not fetched again, whatever days are still missing (the days
    /// after its newest date have no rate yet, which the next publication
    /// settles; meanwhile conversion takes the last published rate).
    fetched_at: std::sync::Mutex<Option<UnixMillis>>,
}

/// How long a fetched document is taken as the latest (10 minutes).
pub const REFETCH_AFTER_MS: i64 = 10 * 60 * 1000;

impl Ecb {
    pub fn new(http: reqwest::Client, url: String, breaker: super::breaker::Breaker) -> Self {
        Self {
            http,
            url,
            fetching: tokio::sync::Mutex::new(()),
            breaker,
            fetched_at: std::sync::Mutex::new(None),
        }
    }

    /// The document's text, at most [`MAX_DOCUMENT_BYTES`]. Errors name the
    /// ECB but never the configured URL (it may carry credentials).
    pub async fn fetch(&self) -> Result<String, PriceError> {
        let unreachable = |e: reqwest::Error| {
            PriceError::Http(format!("ECB reference rates: {}", e.without_url()))
        };
        let mut response = self
            .http
            .get(&self.url)
            .header("accept", "application/xml, text/xml")
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status();
        if !status.is_success() {
            return Err(PriceError::Status {
                status: status.as_u16(),
                url: "the ECB's reference-rate document".to_owned(),
            });
        }
        let too_large = || {
            PriceError::Shape(format!(
                "ECB reference rates: the document is larger than {} MiB",
                MAX_DOCUMENT_BYTES >> 20
            ))
        };
        if response
            .content_length()
            .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        String::from_utf8(body)
            .map_err(|_| PriceError::Shape("ECB reference rates: not UTF-8 text".to_owned()))
    }

    /// Whether the document was read within [`REFETCH_AFTER_MS`] of `now`.
    fn fresh(&self, now: UnixMillis) -> bool {
        self.fetched_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|at| now.saturating_sub(at) < REFETCH_AFTER_MS)
    }

    /// Fetch and parse through the breaker.
    async fn published(&self, now: UnixMillis) -> Result<Vec<Published>, PriceError> {
        if !self.breaker.admit(now) {
            return Err(PriceError::Open("ECB reference rates"));
        }
        let result = match self.fetch().await {
            Ok(text) => parse(&text),
            Err(e) => Err(e),
        };
        match &result {
            Ok(_) => {
                self.breaker.succeeded();
                *self
                    .fetched_at
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(now);
            }
            Err(e) if e.is_outage() => {
                if self.breaker.failed(now) {
                    tracing::warn!(
                        error = %e,
                        cool_down_secs = self.breaker.cool_down_ms() / 1000,
                        "ECB reference rates failing; not asked until the cool-down ends"
                    );
                }
            }
            Err(_) => {}
        }
        result
    }
}

/// One published rate: on `date`, one euro bought `per_euro` of `currency`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Published {
    pub date: NaiveDate,
    pub currency: Currency,
    pub per_euro: Decimal,
}

/// Read the ECB's XML: every `Cube time=…` and, inside it, the `Cube
/// currency=… rate=…` of the currencies reports use (others skipped). A
/// document with no dated cube, a bad date or a bad rate of a used
/// currency is refused as a whole.
pub fn parse(xml: &str) -> Result<Vec<Published>, PriceError> {
    let shape = |why: String| PriceError::Shape(format!("ECB reference rates: {why}"));
    let options = roxmltree::ParsingOptions {
        nodes_limit: MAX_NODES,
        ..roxmltree::ParsingOptions::default()
    };
    let doc =
        roxmltree::Document::parse_with_options(xml, options).map_err(|e| shape(e.to_string()))?;
    let mut out = Vec::new();
    let mut days = 0usize;
    for day in doc
        .descendants()
        .filter(|n| n.has_tag_name("Cube") && n.attribute("time").is_some())
    {
        let time = day.attribute("time").unwrap_or_default();
        let date = NaiveDate::parse_from_str(time, "%Y-%m-%d")
            .map_err(|_| shape(format!("bad date {time:?}")))?;
        days += 1;
        for rate in day.children().filter(|n| n.has_tag_name("Cube")) {
            let Some(currency) = rate.attribute("currency").and_then(Currency::parse) else {
                continue;
            };
            let text = rate.attribute("rate").unwrap_or_default();
            let per_euro = json::decimal(text)
                .filter(|r| *r > Decimal::ZERO)
                .ok_or_else(|| shape(format!("bad {currency} rate {text:?} on {date}")))?;
            out.push(Published {
                date,
                currency,
                per_euro,
            });
        }
    }
    if days == 0 {
        return Err(shape("no dated Cube element".to_owned()));
    }
    Ok(out)
}

/// Unix seconds of a date's UTC midnight: the bucket a rate is stored at.
pub fn day_start(date: NaiveDate) -> i64 {
    date.and_time(NaiveTime::MIN).and_utc().timestamp()
}

/// The reference rates of every day in `[first, last]`, from the stored
/// series, fetching the ECB's document once when a day before today is not
/// yet recorded. A rate the document does not have stays absent, and
/// converting on that day then fails with [`crate::values::fx::FxError`]
/// naming the day.
pub async fn rates(
    store: &Store,
    prices: &Prices,
    (first, last): (NaiveDate, NaiveDate),
    now: UnixMillis,
) -> Result<RateTable, PriceError> {
    let step = Granularity::Day.secs();
    let today = Granularity::Day.floor(now.div_euclid(1000));
    // Days without a rate reach back up to fx::MAX_GAP_DAYS: the week
    // before the first day is needed too (an event today, or on a Monday,
    // takes an earlier day's rate).
    let back = i64::try_from(crate::values::fx::MAX_GAP_DAYS).unwrap_or(7) * step;
    let from = day_start(first) - back;
    let to = (day_start(last) + step).min(today);
    // The series written last by a fetch (they are stored one after
    // another): once its range is recorded, every other one's is too, so a
    // caller never reads a half-stored fetch.
    let probe = series(QUOTED[QUOTED.len() - 1]);
    if from < to {
        let covered = store.price_ranges(&probe, step, from, to).await?;
        if !super::series::gaps(from, to, &covered).is_empty() {
            let ecb = prices.ecb().ok_or_else(|| {
                PriceError::Http("ECB reference rates: no prices.ecb_url configured".to_owned())
            })?;
            // Single flight: wait for a fetch already under way, then look
            // again; it may have stored what this call needs.
            let _fetching = ecb.fetching.lock().await;
            let covered = store.price_ranges(&probe, step, from, to).await?;
            if super::series::gaps(from, to, &covered).is_empty() || ecb.fresh(now) {
                return read_table(store, from, day_start(last) + step).await;
            }
            let published = ecb.published(now).await?;
            let earliest = published
                .iter()
                .map(|p| day_start(p.date))
                .min()
                .unwrap_or(from);
            // Recorded as asked up to the day after the newest published
            // date, not up to today: a stale copy of the document (a cache
            // in front of the URL) must not mark later days as having no
            // rate, which a later, current document could not repair.
            let newest = published
                .iter()
                .map(|p| day_start(p.date) + step)
                .max()
                .unwrap_or(from);
            let range = (earliest.min(from), newest.min(today));
            for currency in QUOTED {
                let points: Vec<(i64, String)> = published
                    .iter()
                    .filter(|p| p.currency == currency)
                    .map(|p| (day_start(p.date), p.per_euro.normalize().to_string()))
                    .collect();
                store
                    .store_price_range(&series(currency), step, range, &points, SOURCE)
                    .await?;
            }
        }
    }
    read_table(store, from, day_start(last) + step).await
}

/// The stored rates of `[from, to)` (bucket starts, Unix seconds).
async fn read_table(store: &Store, from: i64, to: i64) -> Result<RateTable, PriceError> {
    let step = Granularity::Day.secs();
    let mut table = RateTable::new();
    for currency in QUOTED {
        for row in store
            .price_points(&series(currency), step, from, to)
            .await?
        {
            let (Some(date), Some(rate)) = (
                chrono::DateTime::from_timestamp(row.bucket_start, 0).map(|d| d.date_naive()),
                json::decimal(&row.close),
            ) else {
                continue;
            };
            table.insert(date, currency, rate);
        }
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ECB's documented shape (two days of the 90-day file, trimmed to
    /// a few currencies; figures illustrative).
    const DOC: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender>
		<gesmes:name>European Central Bank</gesmes:name>
	</gesmes:Sender>
	<Cube>
		<Cube time="2024-03-28">
			<Cube currency="USD" rate="1.0811"/>
			<Cube currency="JPY" rate="163.45"/>
			<Cube currency="GBP" rate="0.85510"/>
		</Cube>
		<Cube time="2024-03-27">
			<Cube currency="USD" rate="1.0826"/>
			<Cube currency="GBP" rate="0.85768"/>
		</Cube>
	</Cube>
</gesmes:Envelope>"#;

    #[test]
    fn the_documented_shape_reads_into_rates_per_euro() {
        let rates = parse(DOC).unwrap();
        let d = |day| NaiveDate::from_ymd_opt(2024, 3, day).unwrap();
        assert_eq!(
            rates,
            vec![
                Published {
                    date: d(28),
                    currency: Currency::Usd,
                    per_euro: "1.0811".parse().unwrap()
                },
                Published {
                    date: d(28),
                    currency: Currency::Gbp,
                    per_euro: "0.85510".parse().unwrap()
                },
                Published {
                    date: d(27),
                    currency: Currency::Usd,
                    per_euro: "1.0826".parse().unwrap()
                },
                Published {
                    date: d(27),
                    currency: Currency::Gbp,
                    per_euro: "0.85768".parse().unwrap()
                },
            ]
        );
    }

    #[test]
    fn a_document_that_is_not_the_ecbs_is_refused_not_read_as_no_rates() {
        assert!(parse("<html><body>maintenance</body></html>").is_err());
        assert!(parse("not xml").is_err());
        let zero = DOC.replace("1.0811", "0");
        assert!(parse(&zero).is_err(), "a zero rate is never taken");
    }
}
