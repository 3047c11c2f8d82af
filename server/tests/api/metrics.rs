//! What an operator sees: the Prometheus metrics on their own listener
//! (off by default), with route labels that are templates, never paths; and
//! the probes: `/readyz` fails while the database is unreachable, `/healthz`
//! (liveness) does not.

use std::{net::SocketAddr, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};
use server::config::Config;

use crate::{
    helpers::{Options, TestApp, relaxed_limits, sample, spawn_app, spawn_with},
    scans::{WALLET, quote, shared, wait_done},
};

fn metrics_on(c: &mut Config) {
    relaxed_limits(c);
    c.metrics.listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
}

async fn spawn_metrics() -> TestApp {
    spawn_with(Options {
        configure: Box::new(metrics_on),
        ..Options::default()
    })
    .await
}

/// A counter's value, 0 when the series is absent.
fn count(scrape: &str, series: &str) -> f64 {
    sample(scrape, series).unwrap_or(0.0)
}

#[tokio::test]
async fn the_metrics_endpoint_is_off_by_default() {
    assert_eq!(Config::default().metrics.listen, None);
    let app = spawn_app().await;
    assert_eq!(app.metrics_base, None, "no metrics listener is bound");
    // Nor are they served on the API's own address.
    let response = app.client.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert!(
        !response
            .text()
            .await
            .unwrap()
            .contains("ledger_http_requests_total")
    );
    app.stop().await;
}

#[tokio::test]
async fn a_scrape_counts_routes_by_template_and_tools_by_name() {
    let app = spawn_metrics().await;
    let job = "job_metricslabelprobe";
    let response = app
        .client
        .get(app.url(&format!("/v1/jobs/{job}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let stray = app
        .client
        .get(app.url("/no/such/place/7Xq9"))
        .send()
        .await
        .unwrap();
    assert_eq!(stray.status(), StatusCode::NOT_FOUND);
    let ping = app.call_tool("ping", json!({})).await;
    assert_eq!(ping["isError"], false, "{ping}");
    let refused = app
        .call_tool("get_job", json!({"job_id": "job_nosuchjobatall"}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");

    let scrape = app.scrape().await;
    for (series, value) in [
        (
            r#"ledger_http_requests_total{method="GET",route="/v1/jobs/{job_id}",status="404"}"#,
            1.0,
        ),
        (
            r#"ledger_http_request_duration_seconds_count{method="GET",route="/v1/jobs/{job_id}"}"#,
            1.0,
        ),
        (
            r#"ledger_refusals_total{surface="rest",code="not_found"}"#,
            1.0,
        ),
        (
            r#"ledger_http_requests_total{method="POST",route="/mcp",status="200"}"#,
            2.0,
        ),
        (
            r#"ledger_mcp_tool_calls_total{tool="ping",outcome="ok"}"#,
            1.0,
        ),
        (
            r#"ledger_mcp_tool_calls_total{tool="get_job",outcome="not_found"}"#,
            1.0,
        ),
        (
            r#"ledger_refusals_total{surface="mcp_tool",code="not_found"}"#,
            1.0,
        ),
        (
            r#"ledger_mcp_tool_duration_seconds_count{tool="ping"}"#,
            1.0,
        ),
    ] {
        assert_eq!(sample(&scrape, series), Some(value), "{series}\n{scrape}");
    }
    // A path the router did not match is one series, whatever the path.
    assert!(
        count(
            &scrape,
            r#"ledger_http_requests_total{method="GET",route="unmatched",status="404"}"#
        ) >= 1.0,
        "{scrape}"
    );
    // Raw paths, ids and addresses never become labels.
    for raw in [job, "/no/such/place", "7Xq9", "job_nosuchjobatall"] {
        assert!(!scrape.contains(raw), "{raw} leaked into a label");
    }
    app.stop().await;
}

#[tokio::test]
async fn rate_limited_answers_are_counted_by_route_and_code() {
    let app = spawn_with(Options {
        configure: Box::new(|c| {
            metrics_on(c);
            c.rate_limit.anon_rps = 0.001;
            c.rate_limit.anon_burst = Some(1);
        }),
        ..Options::default()
    })
    .await;
    let mut limited = 0;
    for _ in 0..3 {
        let response = app.client.get(app.url("/v1/ping")).send().await.unwrap();
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            limited += 1;
        }
    }
    assert_eq!(limited, 2, "a burst of one lets one through");
    let scrape = app.scrape().await;
    assert_eq!(
        sample(&scrape, r#"ledger_rate_limit_hits_total{route="/v1/ping"}"#),
        Some(2.0),
        "{scrape}"
    );
    assert_eq!(
        sample(
            &scrape,
            r#"ledger_refusals_total{surface="rest",code="rate_limited"}"#
        ),
        Some(2.0),
        "{scrape}"
    );
    app.stop().await;
}

#[tokio::test]
async fn scans_count_rpc_calls_and_credits_per_method_jobs_and_cache_hits() {
    let stand_in = crate::standin::start(shared(0, Duration::ZERO)).await;
    let url = stand_in.url.clone();
    let app = spawn_with(Options {
        configure: Box::new(move |c| {
            metrics_on(c);
            c.solana.rpc_url = url;
            c.solana.retry_base_ms = 1;
            c.solana.batch_size = 4;
            // No worker: the scan stays queued until one is started.
            c.worker.in_process = false;
        }),
        ..Options::default()
    })
    .await;
    let before = app.scrape().await;
    assert_eq!(
        sample(&before, r#"ledger_jobs{kind="scan",state="queued"}"#),
        Some(0.0),
        "{before}"
    );
    let started = app
        .call_tool(
            "scan_wallet",
            json!({"quote_id": quote(&app, "full").await}),
        )
        .await;
    assert_eq!(started["isError"], false, "{started}");
    let queued = app.scrape().await;
    assert_eq!(
        sample(&queued, r#"ledger_jobs{kind="scan",state="queued"}"#),
        Some(1.0),
        "{queued}"
    );
    assert_eq!(
        sample(&queued, r#"ledger_jobs{kind="scan",state="running"}"#),
        Some(0.0)
    );
    // Run the queue with this server's own services (and its metrics).
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let worker = tokio::spawn(server::worker::run(app.state.services().clone(), stopped));
    let job_id = started["structuredContent"]["job_id"].as_str().unwrap();
    let job = wait_done(&app, job_id).await;
    let _ = stop.send(true);
    let _ = worker.await;
    assert_eq!(job["status"], "completed", "{job}");

    let page = |app: &TestApp| {
        let url = app.url(&format!("/v1/wallets/{WALLET}/ledger?limit=5"));
        let client = app.client.clone();
        async move {
            let response = client.get(url).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            response.json::<Value>().await.unwrap()
        }
    };
    let first = page(&app).await;
    let again = page(&app).await;
    assert_eq!(first, again);

    let scrape = app.scrape().await;
    // What the job recorded it spent is what the metrics counted.
    let calls: f64 = ["getSignaturesForAddress", "getTransaction"]
        .iter()
        .map(|m| {
            count(
                &scrape,
                &format!(r#"ledger_rpc_calls_total{{method="{m}"}}"#),
            )
        })
        .sum();
    let credits: f64 = ["getSignaturesForAddress", "getTransaction"]
        .iter()
        .map(|m| {
            count(
                &scrape,
                &format!(r#"ledger_rpc_credits_total{{method="{m}"}}"#),
            )
        })
        .sum();
    let quote_calls = count(
        &scrape,
        r#"ledger_rpc_calls_total{method="getSignaturesForAddress"}"#,
    );
    assert!(quote_calls >= 1.0, "{scrape}");
    assert!(
        credits > calls,
        "batches of 4 carry several credits per call: {scrape}"
    );
    assert!(
        count(
            &scrape,
            r#"ledger_rpc_credits_total{method="getTransaction"}"#
        ) >= job["progress"]["transactions_fetched"].as_f64().unwrap(),
        "{scrape}"
    );
    for (series, value) in [
        (r#"ledger_jobs{kind="scan",state="queued"}"#, 0.0),
        (r#"ledger_jobs{kind="scan",state="running"}"#, 0.0),
        (r#"ledger_cache_misses_total{cache="ledger_pages"}"#, 1.0),
        (r#"ledger_cache_hits_total{cache="ledger_pages"}"#, 1.0),
    ] {
        assert_eq!(sample(&scrape, series), Some(value), "{series}\n{scrape}");
    }
    assert!(!scrape.contains(WALLET), "an address leaked into a label");
    app.stop().await;
    drop(stand_in);
}

#[tokio::test]
async fn liveness_holds_and_readiness_fails_while_the_database_is_unreachable() {
    let app = spawn_app().await;
    let ready = app.client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    assert_eq!(ready.json::<Value>().await.unwrap()["status"], "ready");
    let live: Value = app
        .client
        .get(app.url("/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // The pool closed: no query reaches the database any more.
    app.state.store().close().await;
    let unready = app.client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(unready.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = unready.json().await.unwrap();
    assert_eq!(body["code"], "unavailable", "{body}");
    // Liveness asks the database nothing: the process still serves, so an
    // orchestrator must not restart it; its body is what it was.
    let alive = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(alive.status(), StatusCode::OK);
    assert_eq!(alive.json::<Value>().await.unwrap(), live);
    app.stop().await;
}
