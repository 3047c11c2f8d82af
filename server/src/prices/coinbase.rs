//! Coinbase: SOL/USD spot from the retail API, candles and 24-hour stats
//! from Coinbase Exchange's public market data. Shapes (docs/prices.md):
//!
//! - `GET {coinbase_url}/v2/prices/SOL-USD/spot` →
//!   `{"data":{"amount":"142.37","base":"SOL","currency":"USD"}}`
//! - `GET {exchange_url}/products/SOL-USD/candles?granularity=3600&start=…&end=…` →
//!   `[[time, low, high, open, close, volume], …]`, newest first, at most
//!   300 a request; buckets without trades are absent.
//! - `GET {exchange_url}/products/SOL-USD/stats` →
//!   `{"open":"…","high":"…","low":"…","last":"…","volume":"…","volume_30day":"…"}`

use rust_decimal::Decimal;
use serde::Deserialize;

use super::{Candle, Granularity, PriceError, Source, Spot, http_get, json};

/// Most candles Coinbase Exchange answers per request.
pub const MAX_CANDLES: i64 = 300;

#[derive(Clone)]
pub struct Coinbase {
    pub(super) http: reqwest::Client,
    pub(super) retail: String,
    pub(super) exchange: String,
}

#[derive(Deserialize)]
struct SpotBody {
    data: SpotData,
}

#[derive(Deserialize)]
struct SpotData {
    amount: Decimal,
}

#[derive(Deserialize)]
struct Stats {
    open: Option<Decimal>,
    last: Option<Decimal>,
}

fn rfc3339(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

impl Coinbase {
    /// SOL/USD now, with the 24-hour change when the stats answer.
    pub async fn sol_spot(&self) -> Result<Spot, PriceError> {
        let url = format!("{}/v2/prices/SOL-USD/spot", self.retail);
        let body: SpotBody = serde_json::from_str(&http_get(&self.http, &url, None).await?)
            .map_err(|e| PriceError::Shape(format!("coinbase spot: {e}")))?;
        let change_24h_pct = match self.stats().await {
            Ok(Stats {
                open: Some(open),
                last: Some(last),
            }) if !open.is_zero() => {
                Some(((last - open) / open * Decimal::ONE_HUNDRED).round_dp(2))
            }
            Ok(_) => None,
            Err(err) => {
                tracing::debug!(error = %err, "coinbase stats unavailable; no 24h change");
                None
            }
        };
        Ok(Spot {
            usd: body.data.amount,
            change_24h_pct,
            source: Source::Coinbase,
        })
    }

    async fn stats(&self) -> Result<Stats, PriceError> {
        let url = format!("{}/products/SOL-USD/stats", self.exchange);
        serde_json::from_str(&json::quote_numbers(
            &http_get(&self.http, &url, None).await?,
        ))
        .map_err(|e| PriceError::Shape(format!("coinbase stats: {e}")))
    }

    /// SOL/USD closes of the buckets starting in `[from, to)`, oldest first,
    /// in requests of at most 300 candles.
    pub async fn sol_candles(
        &self,
        granularity: Granularity,
        from: i64,
        to: i64,
    ) -> Result<Vec<Candle>, PriceError> {
        let step = granularity.secs();
        let mut out = Vec::new();
        let mut start = from;
        while start < to {
            let end = (start + MAX_CANDLES * step).min(to);
            let url = format!(
                "{}/products/SOL-USD/candles?granularity={step}&start={}&end={}",
                self.exchange,
                rfc3339(start),
                rfc3339(end - step)
            );
            let text = http_get(&self.http, &url, None).await?;
            let rows: Vec<Vec<String>> = serde_json::from_str(&json::quote_numbers(&text))
                .map_err(|e| PriceError::Shape(format!("coinbase candles: {e}")))?;
            for row in rows {
                let (Some(time), Some(close)) = (row.first(), row.get(4)) else {
                    return Err(PriceError::Shape(
                        "coinbase candle with fewer than 5 fields".into(),
                    ));
                };
                let time: i64 = time
                    .parse()
                    .map_err(|_| PriceError::Shape(format!("coinbase candle time {time:?}")))?;
                let close = json::decimal(close)
                    .ok_or_else(|| PriceError::Shape(format!("coinbase close {close:?}")))?;
                if (start..end).contains(&time) && time % step == 0 {
                    out.push(Candle { start: time, close });
                }
            }
            start = end;
        }
        out.sort_by_key(|c| c.start);
        out.dedup_by_key(|c| c.start);
        Ok(out)
    }
}
