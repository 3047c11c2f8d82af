//! Prometheus metrics (docs/operations.md lists each one): one registry per
//! server, served on its own listen address (`metrics.listen`) and off by
//! default, in which case every recording call is a branch on `None`.
//!
//! A registry per server rather than the process-global recorder of the
//! `metrics` facade: tests run many servers in one process, and each must
//! see its own counts. Label values are bounded by type, never taken from a
//! request: a route is the [`MatchedPath`] template the router matched (or
//! `unmatched`), a tool or RPC method a `&'static str` of our code, an HTTP
//! method one of the standard ones (or `other`). No path, address, token or
//! IP ever becomes a label.
//!
//! Instrumentation sits at a few central points: the HTTP layer
//! (`startup`), the error rendering (a refusal's code rides on the response
//! as [`crate::error::Refused`]), the MCP tool dispatch, the RPC client, the
//! accept loop, settlement; job and cache gauges are read when scraped.

use std::{
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use axum::extract::MatchedPath;
use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

/// The `Content-Type` of a scrape (the Prometheus text format 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Latency buckets (seconds): Prometheus's defaults, with two finer ones
/// for the answers served from memory, and 30 s for the slowest reads.
const LATENCY_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Hits and misses of one cache, counted by the cache itself and read at
/// each scrape.
#[derive(Debug, Default)]
pub struct CacheStats {
    hits: AtomicU64,
    misses: AtomicU64,
}

impl CacheStats {
    /// An answer served from the cache.
    pub fn hit(&self) {
        self.hits.fetch_add(1, Ordering::Relaxed);
    }

    /// An answer that had to be made (and was then kept, if it fit).
    pub fn miss(&self) {
        self.misses.fetch_add(1, Ordering::Relaxed);
    }

    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
}

/// Reads one cache's [`CacheStats`] at scrape time.
pub type CacheProbe = Box<dyn Fn() -> (u64, u64) + Send + Sync>;

/// Which surface answered a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    Rest,
    Mcp,
    /// An MCP tool result with `isError` (HTTP 200).
    McpTool,
    OAuth,
    WellKnown,
    /// Everything else: the portal, share pages, `/healthz`.
    Other,
}

impl Surface {
    fn label(self) -> &'static str {
        match self {
            Surface::Rest => "rest",
            Surface::Mcp => "mcp",
            Surface::McpTool => "mcp_tool",
            Surface::OAuth => "oauth",
            Surface::WellKnown => "well_known",
            Surface::Other => "other",
        }
    }
}

/// How a tool call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolOutcome {
    Ok,
    /// Arguments the input schema refused.
    InvalidArguments,
    /// The tool refused or failed with this wire code.
    Refused(&'static str),
}

/// Why a connection was refused or closed by the accept loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// Refused: `connections.max_open` connections were open.
    RefusedMaxOpen,
    /// Refused: the address already had `connections.max_open_per_ip`.
    RefusedPerIp,
    /// Closed: no complete request head within `connections.header_timeout_ms`.
    HeaderTimeout,
    /// Closed: idle between requests for `connections.idle_timeout_ms`.
    IdleTimeout,
    /// `accept` failed for want of file descriptors (EMFILE, ENFILE) or memory.
    AcceptExhausted,
    /// `accept` failed otherwise.
    AcceptFailed,
}

/// How many jobs of one kind wait and run (read from the database).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobCount {
    /// `scan` or `price_backfill`.
    pub kind: &'static str,
    /// Not claimed by a worker (or its worker's lease ran out).
    pub queued: i64,
    /// Claimed by a worker whose lease is live.
    pub running: i64,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteOnly {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusalLabels {
    surface: &'static str,
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolOnly {
    tool: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabel {
    method: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EntitlementLabel {
    entitlement: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    kind: &'static str,
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabel {
    cache: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

struct Inner {
    registry: Registry,
    http_requests: Family<RequestLabels, Counter>,
    http_duration: HistogramFamily<RouteLabels>,
    refusals: Family<RefusalLabels, Counter>,
    rate_limit_hits: Family<RouteOnly, Counter>,
    tool_calls: Family<ToolLabels, Counter>,
    tool_duration: HistogramFamily<ToolOnly>,
    rpc_calls: Family<MethodLabel, Counter>,
    rpc_credits: Family<MethodLabel, Counter>,
    payments_settled: Family<EntitlementLabel, Counter>,
    connections_open: Gauge,
    connections_refused: Family<ReasonLabel, Counter>,
    connections_timed_out: Family<ReasonLabel, Counter>,
    accept_errors: Family<ReasonLabel, Counter>,
    jobs: Family<JobLabels, Gauge>,
    cache_hits: Family<CacheLabel, Counter>,
    cache_misses: Family<CacheLabel, Counter>,
    caches: Vec<(&'static str, CacheProbe)>,
    /// Held while a scrape brings the cache counters up to date, so two
    /// scrapes at once cannot add the same hits twice.
    scrape: Mutex<()>,
}

/// The metrics of one server; cheap to clone. [`Metrics::off`] records
/// nothing.
#[derive(Clone, Default)]
pub struct Metrics(Option<Arc<Inner>>);

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Metrics").field(&self.0.is_some()).finish()
    }
}

/// Builds a [`Metrics`]: the caches to read at each scrape are added first.
#[derive(Default)]
pub struct MetricsBuilder {
    caches: Vec<(&'static str, CacheProbe)>,
}

impl MetricsBuilder {
    /// Read `probe` (hits, misses) as cache `name` at each scrape.
    pub fn cache(mut self, name: &'static str, probe: CacheProbe) -> Self {
        self.caches.push((name, probe));
        self
    }

    pub fn build(self) -> Metrics {
        let mut registry = Registry::with_prefix("ledger");
        let http_requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, matched route and status",
            http_requests.clone(),
        );
        let http_duration: HistogramFamily<RouteLabels> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "http_request_duration_seconds",
            "Time from a request's head to its response's head, by method and matched route",
            http_duration.clone(),
        );
        let refusals = Family::<RefusalLabels, Counter>::default();
        registry.register(
            "refusals",
            "Requests and tool calls refused or failed, by surface and wire code",
            refusals.clone(),
        );
        let rate_limit_hits = Family::<RouteOnly, Counter>::default();
        registry.register(
            "rate_limit_hits",
            "HTTP 429 answers, by matched route",
            rate_limit_hits.clone(),
        );
        let tool_calls = Family::<ToolLabels, Counter>::default();
        registry.register(
            "mcp_tool_calls",
            "MCP tools/call, by tool and outcome (ok, invalid_arguments or the refusal's code)",
            tool_calls.clone(),
        );
        let tool_duration: HistogramFamily<ToolOnly> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "mcp_tool_duration_seconds",
            "Time an MCP tool took, by tool",
            tool_duration.clone(),
        );
        let rpc_calls = Family::<MethodLabel, Counter>::default();
        registry.register(
            "rpc_calls",
            "HTTP round trips to the Solana RPC endpoint (retries included), by JSON-RPC method",
            rpc_calls.clone(),
        );
        let rpc_credits = Family::<MethodLabel, Counter>::default();
        registry.register(
            "rpc_credits",
            "JSON-RPC requests sent to the Solana RPC endpoint (what providers bill; a batch counts each), by method",
            rpc_credits.clone(),
        );
        let payments_settled = Family::<EntitlementLabel, Counter>::default();
        registry.register(
            "payments_settled",
            "x402 payments settled on chain, by what they bought (scan or read)",
            payments_settled.clone(),
        );
        let connections_open = Gauge::default();
        registry.register(
            "http_connections_open",
            "HTTP connections open now",
            connections_open.clone(),
        );
        let connections_refused = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "http_connections_refused",
            "Connections closed as soon as accepted, by the cap reached (max_open, max_open_per_ip)",
            connections_refused.clone(),
        );
        let connections_timed_out = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "http_connections_timed_out",
            "Connections closed by a timeout (header, idle)",
            connections_timed_out.clone(),
        );
        let accept_errors = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "http_accept_errors",
            "Failed accepts (fd_exhausted: EMFILE, ENFILE, ENOBUFS, ENOMEM; other)",
            accept_errors.clone(),
        );
        let jobs = Family::<JobLabels, Gauge>::default();
        registry.register(
            "jobs",
            "Jobs not finished, by kind (scan, price_backfill) and state (queued, running), read from the database at each scrape",
            jobs.clone(),
        );
        let cache_hits = Family::<CacheLabel, Counter>::default();
        registry.register(
            "cache_hits",
            "Answers served from a kept-answer cache, by cache",
            cache_hits.clone(),
        );
        let cache_misses = Family::<CacheLabel, Counter>::default();
        registry.register(
            "cache_misses",
            "Answers a kept-answer cache could not serve, by cache",
            cache_misses.clone(),
        );
        Metrics(Some(Arc::new(Inner {
            registry,
            http_requests,
            http_duration,
            refusals,
            rate_limit_hits,
            tool_calls,
            tool_duration,
            rpc_calls,
            rpc_credits,
            payments_settled,
            connections_open,
            connections_refused,
            connections_timed_out,
            accept_errors,
            jobs,
            cache_hits,
            cache_misses,
            caches: self.caches,
            scrape: Mutex::new(()),
        })))
    }
}

/// An HTTP method as a label: the standard ones, else `other` (a client
/// may send any token as a method).
fn method_label(method: &http::Method) -> &'static str {
    const KNOWN: [(http::Method, &str); 9] = [
        (http::Method::GET, "GET"),
        (http::Method::HEAD, "HEAD"),
        (http::Method::POST, "POST"),
        (http::Method::PUT, "PUT"),
        (http::Method::DELETE, "DELETE"),
        (http::Method::PATCH, "PATCH"),
        (http::Method::OPTIONS, "OPTIONS"),
        (http::Method::CONNECT, "CONNECT"),
        (http::Method::TRACE, "TRACE"),
    ];
    KNOWN
        .iter()
        .find(|(known, _)| known == method)
        .map_or("other", |(_, label)| label)
}

/// The route label: the template the router matched, never the path.
fn route_label(route: Option<&MatchedPath>) -> String {
    route.map_or_else(|| "unmatched".to_owned(), |r| r.as_str().to_owned())
}

impl Metrics {
    /// Metrics that record nothing.
    pub fn off() -> Self {
        Self(None)
    }

    pub fn builder() -> MetricsBuilder {
        MetricsBuilder::default()
    }

    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// One HTTP request answered.
    pub fn http_request(
        &self,
        method: &http::Method,
        route: Option<&MatchedPath>,
        status: http::StatusCode,
        elapsed: Duration,
    ) {
        let Some(m) = &self.0 else { return };
        let method = method_label(method);
        let route = route_label(route);
        m.http_duration
            .get_or_create(&RouteLabels {
                method,
                route: route.clone(),
            })
            .observe(elapsed.as_secs_f64());
        if status == http::StatusCode::TOO_MANY_REQUESTS {
            m.rate_limit_hits
                .get_or_create(&RouteOnly {
                    route: route.clone(),
                })
                .inc();
        }
        m.http_requests
            .get_or_create(&RequestLabels {
                method,
                route,
                status: status.as_u16(),
            })
            .inc();
    }

    /// A refusal rendered with wire code `code`.
    pub fn refusal(&self, surface: Surface, code: &'static str) {
        let Some(m) = &self.0 else { return };
        m.refusals
            .get_or_create(&RefusalLabels {
                surface: surface.label(),
                code,
            })
            .inc();
    }

    /// One MCP `tools/call` of `tool`.
    pub fn tool_call(&self, tool: &'static str, outcome: ToolOutcome, elapsed: Duration) {
        let Some(m) = &self.0 else { return };
        let outcome = match outcome {
            ToolOutcome::Ok => "ok",
            ToolOutcome::InvalidArguments => "invalid_arguments",
            ToolOutcome::Refused(code) => {
                self.refusal(Surface::McpTool, code);
                code
            }
        };
        m.tool_calls
            .get_or_create(&ToolLabels { tool, outcome })
            .inc();
        m.tool_duration
            .get_or_create(&ToolOnly { tool })
            .observe(elapsed.as_secs_f64());
    }

    /// One HTTP round trip to the RPC endpoint carrying `requests`
    /// JSON-RPC requests of `method`.
    pub fn rpc_call(&self, method: &'static str, requests: u64) {
        let Some(m) = &self.0 else { return };
        let label = MethodLabel { method };
        m.rpc_calls.get_or_create(&label).inc();
        m.rpc_credits.get_or_create(&label).inc_by(requests);
    }

    /// A payment settled on chain, bought `entitlement` (`scan` or `read`).
    pub fn payment_settled(&self, entitlement: &'static str) {
        let Some(m) = &self.0 else { return };
        m.payments_settled
            .get_or_create(&EntitlementLabel { entitlement })
            .inc();
    }

    /// How many connections are open now.
    pub fn connections_open(&self, open: usize) {
        let Some(m) = &self.0 else { return };
        m.connections_open
            .set(i64::try_from(open).unwrap_or(i64::MAX));
    }

    /// The accept loop refused, closed or failed.
    pub fn connection(&self, event: ConnectionEvent) {
        let Some(m) = &self.0 else { return };
        let (family, reason) = match event {
            ConnectionEvent::RefusedMaxOpen => (&m.connections_refused, "max_open"),
            ConnectionEvent::RefusedPerIp => (&m.connections_refused, "max_open_per_ip"),
            ConnectionEvent::HeaderTimeout => (&m.connections_timed_out, "header"),
            ConnectionEvent::IdleTimeout => (&m.connections_timed_out, "idle"),
            ConnectionEvent::AcceptExhausted => (&m.accept_errors, "fd_exhausted"),
            ConnectionEvent::AcceptFailed => (&m.accept_errors, "other"),
        };
        family.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// The scrape: the job counts just read, the caches' counts, then
    /// every metric in the Prometheus text format. `None` when off.
    pub fn render(&self, jobs: Option<&[JobCount]>) -> Option<String> {
        let m = self.0.as_ref()?;
        let _one_at_a_time = m.scrape.lock().unwrap_or_else(PoisonError::into_inner);
        for (cache, probe) in &m.caches {
            let (hits, misses) = probe();
            let label = CacheLabel { cache };
            catch_up(&m.cache_hits.get_or_create(&label), hits);
            catch_up(&m.cache_misses.get_or_create(&label), misses);
        }
        // Unreadable (the database is down): the gauges keep their last
        // values rather than claim the queue is empty.
        for job in jobs.into_iter().flatten() {
            for (state, value) in [("queued", job.queued), ("running", job.running)] {
                m.jobs
                    .get_or_create(&JobLabels {
                        kind: job.kind,
                        state,
                    })
                    .set(value);
            }
        }
        let mut out = String::new();
        match prometheus_client::encoding::prometheus_text::encode(&mut out, &m.registry) {
            Ok(()) => Some(out),
            Err(err) => {
                tracing::warn!(error = %err, "metrics could not be rendered");
                None
            }
        }
    }
}

/// Move `counter` up to `total` (a count kept elsewhere that only grows).
fn catch_up(counter: &Counter, total: u64) {
    let seen = counter.get();
    if total > seen {
        counter.inc_by(total - seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_records_nothing_and_renders_nothing() {
        let metrics = Metrics::off();
        metrics.rpc_call("getTransaction", 3);
        assert!(metrics.render(None).is_none());
    }

    #[test]
    fn methods_outside_the_standard_ones_are_other() {
        assert_eq!(method_label(&http::Method::GET), "GET");
        let odd = http::Method::from_bytes(b"BREW").unwrap();
        assert_eq!(method_label(&odd), "other");
    }

    #[test]
    fn a_batch_counts_one_call_and_each_request_as_a_credit() {
        let metrics = Metrics::builder().build();
        metrics.rpc_call("getTransaction", 50);
        metrics.rpc_call("getTransaction", 1);
        let text = metrics.render(None).unwrap();
        assert!(
            text.contains("ledger_rpc_calls_total{method=\"getTransaction\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("ledger_rpc_credits_total{method=\"getTransaction\"} 51\n"),
            "{text}"
        );
    }

    #[test]
    fn cache_counters_follow_the_cache_without_counting_twice() {
        let stats = Arc::new(CacheStats::default());
        let probe = {
            let stats = stats.clone();
            Box::new(move || (stats.hits(), stats.misses())) as CacheProbe
        };
        let metrics = Metrics::builder().cache("ledger_pages", probe).build();
        stats.miss();
        stats.hit();
        stats.hit();
        let _ = metrics.render(None);
        let text = metrics.render(None).unwrap();
        assert!(
            text.contains("ledger_cache_hits_total{cache=\"ledger_pages\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("ledger_cache_misses_total{cache=\"ledger_pages\"} 1\n"),
            "{text}"
        );
    }

    #[test]
    fn a_refused_tool_call_is_also_a_refusal() {
        let metrics = Metrics::builder().build();
        metrics.tool_call(
            "expand_graph",
            ToolOutcome::Refused("too_many_expansions"),
            Duration::from_millis(3),
        );
        let text = metrics.render(None).unwrap();
        assert!(text.contains(
            "ledger_mcp_tool_calls_total{tool=\"expand_graph\",outcome=\"too_many_expansions\"} 1\n"
        ), "{text}");
        assert!(
            text.contains(
                "ledger_refusals_total{surface=\"mcp_tool\",code=\"too_many_expansions\"} 1\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn unreadable_job_counts_leave_the_gauges_as_they_were() {
        let metrics = Metrics::builder().build();
        let counts = [JobCount {
            kind: "scan",
            queued: 2,
            running: 1,
        }];
        let _ = metrics.render(Some(&counts));
        let text = metrics.render(None).unwrap();
        assert!(
            text.contains("ledger_jobs{kind=\"scan\",state=\"queued\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("ledger_jobs{kind=\"scan\",state=\"running\"} 1\n"),
            "{text}"
        );
    }
}
