//! The accept loop of the service's listeners: HTTP/1 connections served
//! by hyper's connection builder, with what `axum::serve` leaves out.
//!
//! * A header timeout: a request's head must arrive complete within
//!   `connections.header_timeout_ms`, counted from the opening for the
//!   first request and from the first byte for each later one, so a
//!   socket that sends nothing, or half a head, is closed. The first byte
//!   of a pipelined request (sent before the answer to the one before it,
//!   once that one's body was read whole) starts its header timer when
//!   that answer ends: the server is reading its head from then on.
//! * A body deadline: a request's body must arrive whole within
//!   `connections.body_timeout_ms` of the end of its head, however it
//!   trickles in ([`Deadline`]: a total, not a timer restarted by each
//!   frame, which one byte every few seconds would hold open for weeks).
//!   Reading past it fails with [`crate::http::BodyTimedOut`], answered
//!   408; the connection then closes, its body unread.
//! * An idle timeout: a connection with no request in flight is closed
//!   `connections.idle_timeout_ms` after its last request ended (or after
//!   its last byte was written, for a slow reader still taking the answer).
//!   While a request is in flight (its handler runs, its answer or event
//!   stream is sent) neither the header nor the idle timer runs: a long
//!   call is never cut by them, and its body is bounded by its deadline.
//! * Caps: `connections.max_open` open at once, `connections.max_open_per_ip`
//!   from one address (IPv6: one /64). A connection over a cap is closed as
//!   soon as it is accepted, so it holds no descriptor.
//! * Running out of descriptors (EMFILE, ENFILE) or memory: accept backs
//!   off (10 ms doubling to 1 s) and tries again, while the open connections
//!   go on being served and time out; logged once per burst.
//!
//! Go's `net/http` server has the same timeouts (`ReadHeaderTimeout`,
//! `IdleTimeout`, and `ReadTimeout` as a body's total); hyper's own header
//! timer restarts as soon as a response ends, so it cannot tell an idle
//! keep-alive connection from a slow head, and is left off. One case the
//! pipelining rule cannot see: bytes of the next head that came in the
//! same read as the end of the body before it are taken for the body's;
//! that head waits under the idle timeout until its next byte arrives,
//! which then starts its header timer. Shutting down: the listener closes
//! at once, idle connections are closed, busy ones finish their request
//! (hyper's graceful shutdown), all within the caller's grace period.

use std::{
    collections::HashMap,
    future::Future,
    io,
    net::{IpAddr, SocketAddr},
    pin::Pin,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use axum::{Router, extract::ConnectInfo};
use bytes::Bytes;
use hyper::{
    body::{Frame, Incoming, SizeHint},
    server::conn::http1,
};
use hyper_util::rt::TokioIo;
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::{Notify, watch},
    task::JoinSet,
    time::Instant,
};
use tower::ServiceExt;

use crate::{
    config::Config,
    http::BodyTimedOut,
    telemetry::{Metrics, metrics::ConnectionEvent},
};

/// Descriptors kept for the rest of the process when `max_open` is derived
/// from the open-file limit: outgoing clients, logs, the runtime...
const RESERVED_FDS: u64 = 64;
/// ... and per database pool connection (SQLite holds the database, its
/// WAL and its shared-memory file open).
const FDS_PER_DB_CONNECTION: u64 = 3;
/// `max_open` when the open-file limit cannot be read.
const FALLBACK_MAX_OPEN: usize = 1024;
/// Never fewer connections than this, whatever the limit.
const MIN_MAX_OPEN: usize = 16;
const MIN_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Refusals over a cap are logged at most this often.
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(60);

/// The timeouts and caps one listener applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    /// A request body's deadline, from the end of its head.
    pub body_timeout: Duration,
    pub max_open: usize,
    /// `None`: no per-address cap.
    pub max_open_per_ip: Option<usize>,
}

impl Limits {
    /// The limits `config` asks for, `max_open` 0 resolved against the
    /// process's open-file limit.
    pub fn from_config(config: &Config) -> Self {
        let c = &config.connections;
        let max_open = match c.max_open {
            0 => auto_max_open(open_file_limit(), config.database.max_connections),
            n => usize::try_from(n).unwrap_or(usize::MAX),
        };
        // Behind a proxy every connection is the proxy's: a per-address
        // cap would cap the proxy.
        let per_ip = (c.max_open_per_ip > 0 && !config.trust_forwarded_for)
            .then(|| usize::try_from(c.max_open_per_ip).unwrap_or(usize::MAX));
        Self {
            header_timeout: Duration::from_millis(c.header_timeout_ms),
            idle_timeout: Duration::from_millis(c.idle_timeout_ms),
            body_timeout: Duration::from_millis(c.body_timeout_ms),
            max_open,
            max_open_per_ip: per_ip,
        }
    }
}

/// `max_open` derived from the soft open-file limit.
fn auto_max_open(limit: Option<u64>, pool: u32) -> usize {
    let Some(limit) = limit else {
        return FALLBACK_MAX_OPEN;
    };
    let reserved = RESERVED_FDS + FDS_PER_DB_CONNECTION * u64::from(pool);
    usize::try_from(limit.saturating_sub(reserved))
        .unwrap_or(usize::MAX)
        .max(MIN_MAX_OPEN)
}

/// The soft open-file limit (`ulimit -n`), where the system says it.
fn open_file_limit() -> Option<u64> {
    parse_open_files(&std::fs::read_to_string("/proc/self/limits").ok()?)
}

/// The soft limit of the `Max open files` line of `/proc/self/limits`
/// (`None` for `unlimited`).
fn parse_open_files(limits: &str) -> Option<u64> {
    limits
        .lines()
        .find_map(|line| line.strip_prefix("Max open files"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Serve `router` on `listener` until `stop` turns true; then stop
/// accepting, close idle connections and let busy ones finish. Returns once
/// every connection is closed (the caller bounds the wait; dropping this
/// future closes whatever is left).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    metrics: Metrics,
    mut stop: watch::Receiver<bool>,
) {
    let slots = Arc::new(Slots {
        limits: limits.clone(),
        metrics: metrics.clone(),
        counts: Mutex::new(Counts::default()),
    });
    let mut connections = JoinSet::new();
    let mut failing = Burst::default();
    let mut refused_total = Throttle::default();
    let mut refused_per_ip = Throttle::default();
    let mut backoff = MIN_BACKOFF;
    loop {
        let accepted = tokio::select! {
            biased;
            _ = stop.wait_for(|stop| *stop) => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) if per_connection(&err) => continue,
            Err(err) => {
                let exhausted = out_of_resources(&err);
                metrics.connection(if exhausted {
                    ConnectionEvent::AcceptExhausted
                } else {
                    ConnectionEvent::AcceptFailed
                });
                failing.failed(&err, exhausted);
                tokio::select! {
                    _ = stop.wait_for(|stop| *stop) => break,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        failing.ended();
        backoff = MIN_BACKOFF;
        match slots.take(peer.ip()) {
            Ok(slot) => {
                connections.spawn(connection(
                    stream,
                    peer,
                    router.clone(),
                    limits.clone(),
                    metrics.clone(),
                    stop.clone(),
                    slot,
                ));
            }
            Err(cap) => {
                drop(stream);
                metrics.connection(cap);
                let (throttle, which) = match cap {
                    ConnectionEvent::RefusedPerIp => {
                        (&mut refused_per_ip, "connections.max_open_per_ip")
                    }
                    _ => (&mut refused_total, "connections.max_open"),
                };
                if let Some(refused) = throttle.note(Instant::now()) {
                    tracing::warn!(
                        refused,
                        cap = which,
                        "refusing connections over a cap (logged at most once a minute)"
                    );
                }
            }
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// An accept error about one connection (it went away before we took it):
/// take the next.
fn per_connection(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

/// Out of descriptors (ours or the system's) or of kernel memory.
fn out_of_resources(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(
            err.raw_os_error(),
            Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
        )
    }
    #[cfg(not(unix))]
    {
        err.kind() == io::ErrorKind::OutOfMemory
    }
}

/// Logs the first failure of a run and, when the run ends, how long it was.
#[derive(Default)]
struct Burst {
    failures: u64,
}

impl Burst {
    fn failed(&mut self, err: &io::Error, exhausted: bool) {
        if self.failures == 0 {
            if exhausted {
                tracing::warn!(
                    error = %err,
                    "accept failed: out of file descriptors or memory; open connections are \
                     still served, accepting again as they close (logged once per burst)"
                );
            } else {
                tracing::warn!(error = %err, "accept failed; retrying (logged once per burst)");
            }
        }
        self.failures += 1;
    }

    fn ended(&mut self) {
        if self.failures > 0 {
            tracing::info!(failed = self.failures, "accepting connections again");
            self.failures = 0;
        }
    }
}

/// Says when to log a repeated event: the first time, then at most once
/// per [`REFUSAL_LOG_EVERY`], with how many happened since.
#[derive(Default)]
struct Throttle {
    last: Option<Instant>,
    since: u64,
}

impl Throttle {
    fn note(&mut self, now: Instant) -> Option<u64> {
        self.since += 1;
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < REFUSAL_LOG_EVERY)
        {
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.since))
    }
}

/// The open connections, in all and per address.
struct Slots {
    limits: Limits,
    metrics: Metrics,
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    open: usize,
    per_ip: HashMap<IpAddr, usize>,
}

/// One open connection's place; given back when dropped.
struct Slot {
    slots: Arc<Slots>,
    ip: Option<IpAddr>,
}

impl Slots {
    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(self: &Arc<Self>, peer: IpAddr) -> Result<Slot, ConnectionEvent> {
        let mut counts = self.lock();
        if counts.open >= self.limits.max_open {
            return Err(ConnectionEvent::RefusedMaxOpen);
        }
        let ip = match self.limits.max_open_per_ip {
            Some(cap) => {
                let key = address_key(peer);
                let held = counts.per_ip.entry(key).or_default();
                if *held >= cap {
                    return Err(ConnectionEvent::RefusedPerIp);
                }
                *held += 1;
                Some(key)
            }
            None => None,
        };
        counts.open += 1;
        self.metrics.connections_open(counts.open);
        Ok(Slot {
            slots: self.clone(),
            ip,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.slots.lock();
        counts.open = counts.open.saturating_sub(1);
        if let Some(ip) = self.ip
            && let Some(held) = counts.per_ip.get_mut(&ip)
        {
            *held = held.saturating_sub(1);
            if *held == 0 {
                counts.per_ip.remove(&ip);
            }
        }
        self.slots.metrics.connections_open(counts.open);
    }
}

/// The address a per-address cap counts: the one keying rule of every
/// per-client limit (IPv4 as is, IPv6 by its /64).
fn address_key(ip: IpAddr) -> IpAddr {
    crate::limits::ClientKey::block(ip)
}

/// Serve one connection until it ends, times out, or shutdown closes it.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    limits: Limits,
    metrics: Metrics,
    mut stop: watch::Receiver<bool>,
    _slot: Slot,
) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        stream,
        activity: activity.clone(),
    });
    let service = {
        let activity = activity.clone();
        let body_timeout = limits.body_timeout;
        hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let in_flight = InFlight::begin(&activity);
            // The head has just been read whole: the body's clock starts.
            let request = request.map(|body| Deadline::new(body, body_timeout, activity.clone()));
            let router = router.clone();
            async move {
                let response = router.oneshot(request).await;
                response.map(|response| {
                    response.map(|body| Tracked {
                        body,
                        _in_flight: in_flight,
                    })
                })
            }
        })
    };
    let conn = http1::Builder::new().serve_connection(io, service);
    tokio::pin!(conn);
    let mut draining = false;
    loop {
        let deadline = activity.deadline(&limits);
        let changed = activity.changed.notified();
        tokio::select! {
            ended = conn.as_mut() => {
                if let Err(err) = ended {
                    tracing::debug!(error = %err, "connection ended with an error");
                }
                return;
            }
            () = until(deadline) => {
                if let Some(timeout) = activity.expired(&limits, Instant::now()) {
                    tracing::debug!(?timeout, "closing a connection");
                    metrics.connection(timeout);
                    return;
                }
            }
            () = changed => {}
            _ = stop.wait_for(|stop| *stop), if !draining => {
                draining = true;
                if activity.quiet() {
                    return;
                }
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Where a connection stands, for its timers.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// No request yet: the first head is due `header_timeout` after opening.
    Opened,
    /// No request in flight since then, and nothing read since.
    Idle(Instant),
    /// The next request's first bytes arrived then.
    Reading(Instant),
    /// A request is in flight.
    Busy,
}

struct Activity {
    opened: Instant,
    state: Mutex<State>,
    /// Set while idle, and while busy once the request's body was read
    /// whole: the next read starts a head (now, or when the request ends).
    watch_reads: AtomicBool,
    /// Milliseconds after `opened` of the last write that sent bytes.
    last_write_ms: AtomicU64,
    /// Woken when the phase changes the deadline.
    changed: Notify,
}

struct State {
    phase: Phase,
    in_flight: usize,
    /// Bytes of a next request arrived while this one was busy, after its
    /// body: its head is being read.
    next_head: bool,
}

impl Activity {
    fn new() -> Self {
        Self {
            opened: Instant::now(),
            state: Mutex::new(State {
                phase: Phase::Opened,
                in_flight: 0,
                next_head: false,
            }),
            watch_reads: AtomicBool::new(false),
            last_write_ms: AtomicU64::new(0),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn read_some(&self) {
        if self.watch_reads.swap(false, Ordering::AcqRel) {
            let mut state = self.lock();
            match state.phase {
                Phase::Idle(_) => state.phase = Phase::Reading(Instant::now()),
                Phase::Busy => state.next_head = true,
                Phase::Opened | Phase::Reading(_) => {}
            }
            drop(state);
            self.changed.notify_one();
        }
    }

    /// The in-flight request's body has been read whole: what is read
    /// from now on is the next request's.
    fn body_read(&self) {
        let state = self.lock();
        if matches!(state.phase, Phase::Busy) && !state.next_head {
            self.watch_reads.store(true, Ordering::Release);
        }
    }

    fn wrote_some(&self) {
        let ms = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_write_ms.store(ms, Ordering::Relaxed);
    }

    fn begin(&self) {
        let mut state = self.lock();
        state.in_flight += 1;
        state.phase = Phase::Busy;
        state.next_head = false;
        self.watch_reads.store(false, Ordering::Release);
    }

    fn end(&self) {
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.in_flight == 0 {
            // A pipelined head that began while busy has had no server
            // reading it until now: its header timer starts here.
            let now = Instant::now();
            if std::mem::take(&mut state.next_head) {
                state.phase = Phase::Reading(now);
                self.watch_reads.store(false, Ordering::Release);
            } else {
                state.phase = Phase::Idle(now);
                self.watch_reads.store(true, Ordering::Release);
            }
        }
        drop(state);
        self.changed.notify_one();
    }

    /// When the connection is to be closed unless something happens first.
    fn deadline(&self, limits: &Limits) -> Option<Instant> {
        let phase = self.lock().phase;
        self.deadline_in(phase, limits)
    }

    fn deadline_in(&self, phase: Phase, limits: &Limits) -> Option<Instant> {
        match phase {
            Phase::Opened => Some(self.opened + limits.header_timeout),
            Phase::Reading(since) => Some(since + limits.header_timeout),
            Phase::Idle(since) => {
                let wrote =
                    self.opened + Duration::from_millis(self.last_write_ms.load(Ordering::Relaxed));
                Some(since.max(wrote) + limits.idle_timeout)
            }
            Phase::Busy => None,
        }
    }

    /// The timeout that has run out at `now`, if one has.
    fn expired(&self, limits: &Limits, now: Instant) -> Option<ConnectionEvent> {
        let phase = self.lock().phase;
        if now < self.deadline_in(phase, limits)? {
            return None;
        }
        Some(match phase {
            Phase::Idle(_) => ConnectionEvent::IdleTimeout,
            _ => ConnectionEvent::HeaderTimeout,
        })
    }

    /// No request in flight nor begun since the last one ended: shutting
    /// down may close the connection at once.
    fn quiet(&self) -> bool {
        matches!(self.lock().phase, Phase::Opened | Phase::Idle(_))
    }
}

/// A request in flight, from its head to the end of its answer.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn begin(activity: &Arc<Activity>) -> Self {
        activity.begin();
        Self(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A response body that keeps its request in flight until hyper is done
/// with it (sent whole, or dropped).
struct Tracked {
    body: axum::body::Body,
    _in_flight: InFlight,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A request body that must arrive whole by a deadline set when its head
/// was read: once the deadline passes, a read that would wait fails with
/// [`BodyTimedOut`] (bytes already here are still handed out). It also
/// tells [`Activity`] when the body has been read whole.
struct Deadline {
    body: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    activity: Arc<Activity>,
    read_whole: bool,
}

impl Deadline {
    fn new(body: Incoming, timeout: Duration, activity: Arc<Activity>) -> Self {
        let mut this = Self {
            deadline: Box::pin(tokio::time::sleep(timeout)),
            read_whole: false,
            body,
            activity,
        };
        if hyper::body::Body::is_end_stream(&this.body) {
            this.ended();
        }
        this
    }

    fn ended(&mut self) {
        if !std::mem::replace(&mut self.read_whole, true) {
            self.activity.body_read();
        }
    }
}

impl hyper::body::Body for Deadline {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Ready(None) => {
                this.ended();
                Poll::Ready(None)
            }
            Poll::Ready(Some(Ok(frame))) => {
                if hyper::body::Body::is_end_stream(&this.body) {
                    this.ended();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(err))) => Poll::Ready(Some(Err(err.into()))),
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(BodyTimedOut.into()))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The socket, telling [`Activity`] when bytes come and go.
struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.read_some();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.activity.wrote_some();
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.activity.wrote_some();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_open_file_limit_is_read_from_proc() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(parse_open_files(limits), Some(1024));
        let unlimited =
            "Max open files            unlimited            unlimited            files\n";
        assert_eq!(parse_open_files(unlimited), None);
        assert_eq!(parse_open_files(""), None);
    }

    #[test]
    fn max_open_leaves_descriptors_for_the_pool_and_clients() {
        // 1024 less 64 and 3 for each of 16 pool connections.
        assert_eq!(auto_max_open(Some(1024), 16), 1024 - 64 - 48);
        assert_eq!(auto_max_open(Some(100), 16), MIN_MAX_OPEN);
        assert_eq!(auto_max_open(None, 16), FALLBACK_MAX_OPEN);
    }

    #[test]
    fn ipv6_addresses_are_capped_by_their_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(address_key(a), address_key(b));
        assert_ne!(address_key(a), address_key(c));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(address_key(mapped), "192.0.2.7".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn a_proxy_is_never_capped_per_address() {
        let mut config = Config::default();
        assert_eq!(Limits::from_config(&config).max_open_per_ip, Some(64));
        config.trust_forwarded_for = true;
        assert_eq!(Limits::from_config(&config).max_open_per_ip, None);
        config.trust_forwarded_for = false;
        config.connections.max_open_per_ip = 0;
        assert_eq!(Limits::from_config(&config).max_open_per_ip, None);
    }

    #[test]
    fn refusals_are_logged_once_then_at_most_once_a_minute() {
        let mut throttle = Throttle::default();
        let start = Instant::now();
        assert_eq!(throttle.note(start), Some(1));
        assert_eq!(throttle.note(start + Duration::from_secs(1)), None);
        assert_eq!(throttle.note(start + Duration::from_secs(2)), None);
        assert_eq!(throttle.note(start + Duration::from_secs(61)), Some(3));
    }

    #[tokio::test]
    async fn an_idle_phase_moves_to_reading_on_the_first_byte_and_back_to_busy() {
        let limits = Limits {
            header_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(30),
            max_open: 1,
            max_open_per_ip: None,
        };
        let activity = Arc::new(Activity::new());
        assert_eq!(
            activity.deadline(&limits),
            Some(activity.opened + limits.header_timeout)
        );
        let request = InFlight::begin(&activity);
        assert_eq!(activity.deadline(&limits), None, "no timer while busy");
        assert!(!activity.quiet());
        drop(request);
        let idle = activity.deadline(&limits).unwrap();
        assert!(idle >= activity.opened + limits.idle_timeout);
        assert!(activity.quiet());
        activity.read_some();
        let reading = activity.deadline(&limits).unwrap();
        assert!(reading < idle, "a started head is due sooner than idleness");
        assert!(!activity.quiet());
        assert_eq!(
            activity.expired(&limits, reading),
            Some(ConnectionEvent::HeaderTimeout)
        );
    }

    #[tokio::test]
    async fn a_head_begun_while_busy_after_the_body_is_timed_as_a_head_when_the_request_ends() {
        let limits = Limits {
            header_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(30),
            max_open: 1,
            max_open_per_ip: None,
        };
        let activity = Arc::new(Activity::new());
        // Bytes read while the body is still arriving are the body's.
        let request = InFlight::begin(&activity);
        activity.read_some();
        drop(request);
        assert!(matches!(activity.lock().phase, Phase::Idle(_)));
        // Bytes read once the body was read whole are the next head's.
        let request = InFlight::begin(&activity);
        activity.body_read();
        activity.read_some();
        assert_eq!(activity.deadline(&limits), None, "no timer while busy");
        drop(request);
        assert!(matches!(activity.lock().phase, Phase::Reading(_)));
        let due = activity.deadline(&limits).unwrap();
        assert!(due <= Instant::now() + limits.header_timeout);
        assert_eq!(
            activity.expired(&limits, due),
            Some(ConnectionEvent::HeaderTimeout),
            "the header timeout, not the idle one"
        );
        // The next request's own body starts over.
        let request = InFlight::begin(&activity);
        activity.read_some();
        drop(request);
        assert!(matches!(activity.lock().phase, Phase::Idle(_)));
    }
}
