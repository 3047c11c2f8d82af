//! A local stand-in for the European Central Bank's euro foreign exchange
//! reference rates: `/stats/eurofxref/eurofxref-hist.xml` in the ECB's own
//! XML shape (a `gesmes:Envelope` whose `Cube` holds one `Cube time=…` per
//! TARGET working day, newest first, each with `Cube currency=… rate=…`
//! per currency, units per one euro), serving the days a test gives it.
//! `failing` makes it answer 503, as during an outage.

// Shared by several test crates; each uses part of it.
#![allow(dead_code)]

use std::{
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use axum::{Router, extract::State, http::StatusCode, response::IntoResponse, routing::get};

/// The path of the ECB's history document.
pub const PATH: &str = "/stats/eurofxref/eurofxref-hist.xml";

/// One day: its date (`YYYY-MM-DD`) and (currency, rate per euro).
pub type Day = (String, Vec<(String, String)>);

#[derive(Default)]
pub struct EcbState {
    pub days: Mutex<Vec<Day>>,
    pub requests: AtomicUsize,
    pub failing: AtomicBool,
    /// Serve a body larger than any real document (33 MiB).
    pub oversized: AtomicBool,
}

pub struct EcbStandIn {
    /// The document's full URL, for `prices.ecb_url`.
    pub url: String,
    pub state: Arc<EcbState>,
}

/// The document for `days`, newest first as the ECB writes it.
pub fn document(days: &[Day]) -> String {
    let mut sorted: Vec<&Day> = days.iter().collect();
    sorted.sort_by(|a, b| b.0.cmp(&a.0));
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <gesmes:Envelope xmlns:gesmes=\"http://www.gesmes.org/xml/2002-08-01\" \
         xmlns=\"http://www.ecb.int/vocabulary/2002-08-01/eurofxref\">\n\
         \t<gesmes:subject>Reference rates</gesmes:subject>\n\
         \t<gesmes:Sender>\n\t\t<gesmes:name>European Central Bank</gesmes:name>\n\t</gesmes:Sender>\n\
         \t<Cube>\n",
    );
    for (date, rates) in sorted {
        out.push_str(&format!("\t\t<Cube time=\"{date}\">\n"));
        for (currency, rate) in rates {
            out.push_str(&format!(
                "\t\t\t<Cube currency=\"{currency}\" rate=\"{rate}\"/>\n"
            ));
        }
        out.push_str("\t\t</Cube>\n");
    }
    out.push_str("\t</Cube>\n</gesmes:Envelope>\n");
    out
}

async fn history(State(state): State<Arc<EcbState>>) -> axum::response::Response {
    state.requests.fetch_add(1, Ordering::SeqCst);
    if state.failing.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable").into_response();
    }
    if state.oversized.load(Ordering::SeqCst) {
        let body = format!("<x>{}</x>", " ".repeat(33 << 20));
        return ([("content-type", "text/xml")], body).into_response();
    }
    let body = document(&state.days.lock().unwrap());
    ([("content-type", "text/xml")], body).into_response()
}

pub async fn start(days: Vec<Day>) -> EcbStandIn {
    let state = Arc::new(EcbState {
        days: Mutex::new(days),
        ..EcbState::default()
    });
    let app = Router::new()
        .route(PATH, get(history))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let url = format!("http://{}{PATH}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    EcbStandIn { url, state }
}
