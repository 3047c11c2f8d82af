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

/// The ECB document's client.
pub struct Ecb {
    pub http: reqwest::Client,
    pub url: String,
}

impl Ecb {
    /// The document's text.
    pub async fn fetch(&self) -> Result<String, PriceError> {
        let response = self
            .http
            .get(&self.url)
            .header("accept", "application/xml, text/xml")
            .send()
            .await
            .map_err(|e| PriceError::Http(format!("ECB reference rates: {e}")))?;
        let status = response.status();
        if !status.is_success() {
            return Err(PriceError::Status {
                status: status.as_u16(),
                url: self.url.clone(),
            });
        }
        response
            .text()
            .await
            .map_err(|e| PriceError::Http(format!("ECB reference rates: {e}")))
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
    let doc = roxmltree::Document::parse(xml).map_err(|e| shape(e.to_string()))?;
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
    let probe = series(Currency::Usd);
    if from < to {
        let covered = store.price_ranges(&probe, step, from, to).await?;
        if !super::series::gaps(from, to, &covered).is_empty() {
            let ecb = prices.ecb().ok_or_else(|| {
                PriceError::Http("ECB reference rates: no prices.ecb_url configured".to_owned())
            })?;
            let published = parse(&ecb.fetch().await?)?;
            let earliest = published
                .iter()
                .map(|p| day_start(p.date))
                .min()
                .unwrap_or(from);
            let range = (earliest.min(from), today);
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
    let mut table = RateTable::new();
    for currency in QUOTED {
        for row in store
            .price_points(&series(currency), step, from, day_start(last) + step)
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
