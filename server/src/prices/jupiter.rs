//! Jupiter's Price API v3: current USD prices of SPL tokens.
//!
//! `GET {jupiter_url}/price/v3?ids=MINT1,MINT2` (at most 50 ids) →
//! `{"MINT":{"usdPrice":147.48,"blockId":348004023,"decimals":9,
//! "priceChange24h":1.29,"createdAt":"…","liquidity":…}, …}`; a mint
//! Jupiter cannot price reliably is left out of the object. `api.jup.ag`
//! wants an `x-api-key` header (`prices.jupiter_api_key`).

use std::collections::HashMap;

use rust_decimal::Decimal;
use serde::Deserialize;

use super::{PriceError, Source, Spot, http_get, json};

/// Most ids per request.
pub const MAX_IDS: usize = 50;

#[derive(Clone)]
pub struct Jupiter {
    pub(super) http: reqwest::Client,
    pub(super) base: String,
    /// Sent as `x-api-key` (api.jup.ag needs one; lite-api.jup.ag does not).
    pub(super) api_key: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    usd_price: Option<Decimal>,
    price_change_24h: Option<Decimal>,
}

impl Jupiter {
    /// Prices of the mints Jupiter knows; the rest are absent.
    pub async fn spot(&self, mints: &[String]) -> Result<HashMap<String, Spot>, PriceError> {
        let mut out = HashMap::new();
        for chunk in mints.chunks(MAX_IDS) {
            let url = format!("{}/price/v3?ids={}", self.base, chunk.join(","));
            let text = http_get(&self.http, &url, self.api_key.as_deref()).await?;
            let body: HashMap<String, Option<Entry>> =
                serde_json::from_str(&json::quote_numbers(&text))
                    .map_err(|e| PriceError::Shape(format!("jupiter price: {e}")))?;
            for (mint, entry) in body {
                let Some(Entry {
                    usd_price: Some(usd),
                    price_change_24h,
                }) = entry
                else {
                    continue;
                };
                out.insert(
                    mint,
                    Spot {
                        usd,
                        change_24h_pct: price_change_24h.map(|c| c.round_dp(2)),
                        source: Source::Jupiter,
                    },
                );
            }
        }
        Ok(out)
    }
}
