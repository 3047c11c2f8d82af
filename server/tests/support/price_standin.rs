//! A local stand-in for the price sources on the internet: Coinbase (retail
//! spot), Coinbase Exchange (candles, 24h stats) and Jupiter's Price API
//! v3, answering in the real APIs' shapes (docs/prices.md) with data made
//! up deterministically: the same bucket always has the same close.
//! Numbers are JSON numbers where the real APIs send numbers (candles,
//! usdPrice) and strings where they send strings (spot, stats).

// Shared by several test crates; each uses part of it.
#![allow(dead_code)]

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use axum::{
    Router,
    extract::{Query, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::get,
};

/// Jupiter's token, priced by the Jupiter stand-in.
pub const JUP: &str = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";
pub const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
pub const WSOL: &str = "So11111111111111111111111111111111111111112";
pub const SPOT: &str = "142.37";
pub const OPEN_24H: &str = "140.00";

#[derive(Default)]
pub struct Counters {
    pub spot: AtomicUsize,
    pub stats: AtomicUsize,
    pub candles: AtomicUsize,
    pub jupiter: AtomicUsize,
    /// The x-api-key header of every Jupiter request.
    pub jupiter_keys: Mutex<Vec<Option<String>>>,
    /// (granularity, start, end) of every candles request.
    pub candle_requests: Mutex<Vec<(i64, i64, i64)>>,
    /// When set, every API answers HTTP 503 (after counting the request),
    /// as Coinbase and Jupiter do during an outage.
    pub failing: AtomicBool,
}

impl Counters {
    /// Requests received by every API together.
    pub fn total(&self) -> usize {
        self.spot.load(Ordering::SeqCst)
            + self.stats.load(Ordering::SeqCst)
            + self.candles.load(Ordering::SeqCst)
            + self.jupiter.load(Ordering::SeqCst)
    }
}

fn outage() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        json(r#"{"message":"service unavailable"}"#.to_owned()),
    )
        .into_response()
}

pub struct PriceStandIn {
    /// Base URL serving all three APIs (their paths do not overlap).
    pub url: String,
    pub counters: Arc<Counters>,
}

/// The close the stand-in serves for the bucket starting at `t`: exact
/// decimal text, between 100 and 150 USD.
pub fn close_at(t: i64) -> String {
    let n = (t / 3600).rem_euclid(200);
    format!("{}.{:02}", 100 + n / 4, (n % 4) * 25)
}

pub async fn start() -> PriceStandIn {
    let counters = Arc::new(Counters::default());
    let app = Router::new()
        .route("/v2/prices/SOL-USD/spot", get(spot))
        .route("/products/SOL-USD/stats", get(stats))
        .route("/products/SOL-USD/candles", get(candles))
        .route("/price/v3", get(jupiter))
        .with_state(counters.clone());
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    PriceStandIn { url, counters }
}

/// Point a server configuration at the stand-in.
pub fn configure(config: &mut server::config::Config, url: &str) {
    config.prices.coinbase_url = url.to_owned();
    config.prices.coinbase_exchange_url = url.to_owned();
    config.prices.jupiter_url = url.to_owned();
}

fn json(body: String) -> Response {
    ([("content-type", "application/json")], body).into_response()
}

async fn spot(State(c): State<Arc<Counters>>) -> Response {
    c.spot.fetch_add(1, Ordering::SeqCst);
    if c.failing.load(Ordering::SeqCst) {
        return outage();
    }
    json(format!(
        r#"{{"data":{{"amount":"{SPOT}","base":"SOL","currency":"USD"}}}}"#
    ))
}

async fn stats(State(c): State<Arc<Counters>>) -> Response {
    c.stats.fetch_add(1, Ordering::SeqCst);
    if c.failing.load(Ordering::SeqCst) {
        return outage();
    }
    json(format!(
        r#"{{"open":"{OPEN_24H}","high":"145.10","low":"138.92","last":"{SPOT}","volume":"1830221.47","volume_30day":"61203311.02"}}"#
    ))
}

fn parse_time(text: &str) -> Option<i64> {
    text.parse::<i64>().ok().or_else(|| {
        chrono::DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.timestamp())
    })
}

async fn candles(
    State(c): State<Arc<Counters>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    c.candles.fetch_add(1, Ordering::SeqCst);
    if c.failing.load(Ordering::SeqCst) {
        return outage();
    }
    let step: i64 = q
        .get("granularity")
        .and_then(|g| g.parse().ok())
        .unwrap_or(0);
    if ![60, 300, 900, 3600, 21600, 86400].contains(&step) {
        return (
            StatusCode::BAD_REQUEST,
            json(r#"{"message":"Unsupported granularity"}"#.to_owned()),
        )
            .into_response();
    }
    let (Some(start), Some(end)) = (
        q.get("start").and_then(|s| parse_time(s)),
        q.get("end").and_then(|s| parse_time(s)),
    ) else {
        return (
            StatusCode::BAD_REQUEST,
            json(r#"{"message":"start and end required"}"#.to_owned()),
        )
            .into_response();
    };
    c.candle_requests.lock().unwrap().push((step, start, end));
    if (end - start) / step + 1 > 300 {
        return (
            StatusCode::BAD_REQUEST,
            json(r#"{"message":"granularity too small for the requested time range. Count of aggregations requested exceeds 300"}"#.to_owned()),
        )
            .into_response();
    }
    let first = start.div_euclid(step) * step;
    let mut rows = Vec::new();
    let mut t = first;
    while t <= end {
        let close = close_at(t);
        rows.push(format!(
            "[{t},{low},{high},{open},{close},{volume}]",
            low = "99.5",
            high = "151.25",
            open = close_at(t - step),
            volume = "12345.678"
        ));
        t += step;
    }
    rows.reverse(); // newest first, as Coinbase answers
    json(format!("[{}]", rows.join(",")))
}

async fn jupiter(
    State(c): State<Arc<Counters>>,
    headers: axum::http::HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    c.jupiter.fetch_add(1, Ordering::SeqCst);
    c.jupiter_keys.lock().unwrap().push(
        headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    );
    if c.failing.load(Ordering::SeqCst) {
        return outage();
    }
    let ids = q.get("ids").cloned().unwrap_or_default();
    let mut entries = Vec::new();
    for id in ids.split(',') {
        let (price, decimals, change) = match id {
            JUP => ("0.5123", 6, "-2.4187"),
            USDC => ("0.9999", 6, "-0.003"),
            WSOL => ("141.9", 9, "1.5"),
            _ => continue,
        };
        entries.push(format!(
            r#""{id}":{{"createdAt":"2024-06-05T08:55:25.527Z","liquidity":621679197.67,"usdPrice":{price},"blockId":348004023,"decimals":{decimals},"priceChange24h":{change}}}"#
        ));
    }
    json(format!("{{{}}}", entries.join(",")))
}
