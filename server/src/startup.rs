//! Building and running the server: open the store, bind, wire every route
//! (in [`router`], the one place routes are wired; the REST routes come
//! declared with their OpenAPI operations from `v1::router`), serve until a
//! shutdown signal, then let in-flight requests finish. Connections are
//! accepted, timed and capped by [`connections`]; the metrics, when on,
//! are served on their own listener by [`metrics_router`].

mod connections;

pub use connections::Limits;

use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

use axum::{
    Router,
    extract::{MatchedPath, Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use leptos_axum::LeptosRoutes;
use tokio::{net::TcpListener, sync::watch};
use tower_http::{catch_panic::CatchPanicLayer, trace::TraceLayer};

use crate::{
    caches::Caches,
    clock::Clock,
    config::Config,
    discovery,
    error::{AppError, Refused},
    http::Surface,
    mcp, oauth_http, portal,
    site::{self, backend_context, shell_fn},
    state::{AppState, Parts, Services},
    store::{Store, StoreError},
    telemetry::{Metrics, metrics},
    v1, worker,
};

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("binding {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("serving: {0}")]
    Serve(std::io::Error),
    #[error("Solana RPC client: {0}")]
    Rpc(#[from] crate::solana::RpcError),
    #[error("payments: {0}")]
    Payments(String),
    #[error("price sources' HTTP client: {0}")]
    Prices(#[from] reqwest::Error),
}

/// A bound, ready server.
pub struct Application {
    listener: TcpListener,
    /// Where the metrics are served, when they are on.
    metrics_listener: Option<TcpListener>,
    limits: Limits,
    state: AppState,
}

/// Bind `addr`, naming it in the error.
async fn bind(addr: SocketAddr) -> Result<TcpListener, StartupError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| StartupError::Bind { addr, source })
}

/// The metrics `config` asks for: off without `metrics.listen`; else with
/// the kept-answer `caches` read at each scrape.
pub fn metrics_for(config: &Config, caches: &Caches) -> Metrics {
    if config.metrics.listen.is_none() {
        return Metrics::off();
    }
    let pages = caches.pages.clone();
    let positions = caches.positions.clone();
    let cards = caches.cards.clone();
    Metrics::builder()
        .cache(
            "ledger_pages",
            Box::new(move || (pages.stats().hits(), pages.stats().misses())),
        )
        .cache(
            "positions",
            Box::new(move || (positions.stats().hits(), positions.stats().misses())),
        )
        .cache(
            "share_cards",
            Box::new(move || (cards.stats().hits(), cards.stats().misses())),
        )
        .build()
}

/// Bind `metrics.listen`, when set.
pub async fn bind_metrics(config: &Config) -> Result<Option<TcpListener>, StartupError> {
    match config.metrics.listen {
        Some(addr) => Ok(Some(bind(addr).await?)),
        None => Ok(None),
    }
}

/// Serve the metrics of `services` on `listener` until `stop` turns true.
pub async fn serve_metrics(listener: TcpListener, services: Services, stop: watch::Receiver<bool>) {
    let limits = Limits::from_config(services.config());
    // The listener's own connections are not counted: a scrape would
    // count itself.
    connections::serve(
        listener,
        metrics_router(services),
        limits,
        Metrics::off(),
        stop,
    )
    .await;
}

/// The metrics listener's one route.
pub fn metrics_router(services: Services) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .with_state(services)
}

/// `GET /metrics`: the job counts read now, then every metric.
async fn scrape(State(services): State<Services>) -> Response {
    let jobs = match crate::jobs::counts(services.store(), services.now_ms()).await {
        Ok(jobs) => Some(jobs),
        Err(err) => {
            tracing::warn!(error = %err, "metrics: job counts unreadable");
            None
        }
    };
    match services.metrics().render(jobs.as_deref()) {
        Some(text) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(metrics::CONTENT_TYPE),
            )],
            text,
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

impl Application {
    /// Open (and migrate) the store, bind the listener, build the state.
    pub async fn build(config: Config, clock: Arc<dyn Clock>) -> Result<Self, StartupError> {
        // Leptos resources spawn onto this executor while rendering.
        let _ = any_spawner::Executor::init_tokio();
        let payments =
            crate::payments::Runtime::load(&config.x402).map_err(StartupError::Payments)?;
        let store = Store::open(&config.database_url, &config.database).await?;
        let migrations = store.applied_migrations().await?;
        // The sample report's wallet, from data in the repository; a
        // failure leaves the home page without a sample, never the server
        // without a start.
        if config.sample.enabled
            && let Err(error) = crate::sample::seed(&store, clock.now_ms()).await
        {
            tracing::warn!(%error, "could not seed the sample wallet");
        }
        let listener = bind(config.listen).await?;
        let metrics_listener = bind_metrics(&config).await?;
        let limits = Limits::from_config(&config);
        let caches = Arc::new(Caches::default());
        let metrics = metrics_for(&config, &caches);
        let local = listener.local_addr().map_err(|source| StartupError::Bind {
            addr: config.listen,
            source,
        })?;
        let public_url = match &config.public_url {
            Some(_) => config.public_url(),
            None => format!("http://{local}"),
        };
        let hydrate = site::hydration_available(config.site_root.as_ref());
        let rpc =
            crate::solana::RpcClient::instrumented(config.solana.rpc_settings(), metrics.clone())?;
        let prices = crate::prices::Prices::new(&config.prices)?;
        let services = Services::new(Parts {
            payments,
            rpc,
            prices,
            public_url,
            store,
            clock,
            config,
            caches,
            metrics,
            migrations,
        });
        let state = AppState::new(services, site::leptos_options(local), hydrate);
        Ok(Self {
            listener,
            metrics_listener,
            limits,
            state,
        })
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Where the metrics are served, when they are on.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serve until `shutdown` resolves; then stop accepting, give in-flight
    /// requests `shutdown_grace_secs` to finish and stop the workers at their
    /// next safe point.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), StartupError> {
        let state = self.state.clone();
        let grace = Duration::from_secs(state.config().shutdown_grace_secs);
        let (stop_tx, stop_rx) = watch::channel(false);

        let workers = state
            .config()
            .worker
            .in_process
            .then(|| tokio::spawn(worker::run(state.services().clone(), stop_rx.clone())));

        tracing::info!(
            addr = ?self.local_addr(),
            metrics = ?self.metrics_addr(),
            public_url = state.public_url(),
            database = ?state.store().dialect(),
            hydrate = state.hydrate(),
            max_open = self.limits.max_open,
            max_open_per_ip = ?self.limits.max_open_per_ip,
            "serving"
        );
        let metrics_server = self.metrics_listener.map(|listener| {
            tokio::spawn(serve_metrics(
                listener,
                state.services().clone(),
                stop_rx.clone(),
            ))
        });
        let mut server = tokio::spawn(connections::serve(
            self.listener,
            router(state.clone()),
            self.limits,
            state.metrics().clone(),
            stop_rx.clone(),
        ));

        tokio::select! {
            () = shutdown => {
                tracing::info!("shutting down: finishing in-flight requests");
                let _ = stop_tx.send(true);
            }
            finished = &mut server => {
                let _ = stop_tx.send(true);
                return finished.map_err(|join| StartupError::Serve(std::io::Error::other(join)));
            }
        }
        let result = match tokio::time::timeout(grace, &mut server).await {
            Ok(finished) => {
                finished.map_err(|join| StartupError::Serve(std::io::Error::other(join)))
            }
            Err(_) => {
                tracing::warn!(?grace, "in-flight requests outlived the grace period");
                // Dropping the accept loop closes every connection left.
                server.abort();
                Ok(())
            }
        };
        if let Some(metrics_server) = metrics_server
            && tokio::time::timeout(grace, metrics_server).await.is_err()
        {
            tracing::warn!("the metrics listener outlived the grace period");
        }
        if let Some(workers) = workers {
            let _ = tokio::time::timeout(grace, workers).await;
        }
        // Closing waits for every connection to come back; one held by a
        // request that outlived the grace period must not hold the exit.
        if tokio::time::timeout(grace, state.store().close())
            .await
            .is_err()
        {
            tracing::warn!(
                ?grace,
                "database connections still in use at exit; closing anyway"
            );
        }
        tracing::info!("stopped");
        result
    }
}

/// The Leptos routes, listed once per process. Listing them renders the
/// app with resource loading suppressed through a process-global flag, so
/// a second listing while another router's page renders can leave that
/// render waiting forever (leptos issue 4773; our tests start many servers
/// in one process and hung on it now and then).
fn portal_route_list() -> &'static [leptos_axum::AxumRouteListing] {
    static ROUTES: std::sync::OnceLock<Vec<leptos_axum::AxumRouteListing>> =
        std::sync::OnceLock::new();
    ROUTES.get_or_init(|| {
        leptos_axum::generate_route_list(app::App)
            .into_iter()
            .filter(|route| !app::ACCOUNT_PATHS.contains(&route.path()))
            .collect()
    })
}

/// Every route of the service.
pub fn router(state: AppState) -> Router {
    // The account pages are rendered by `portal::pages` (their forms POST
    // to the same paths); Leptos serves the others.
    let portal_routes = portal_route_list().to_vec();
    let server_fns = {
        let state = state.clone();
        move |request: axum::extract::Request| {
            let context = backend_context(state.clone());
            async move { leptos_axum::handle_server_fns_with_context(context, request).await }
        }
    };
    let routes = Router::new()
        .route(
            "/mcp",
            post(mcp::transport::post)
                .get(mcp::transport::get)
                .delete(mcp::transport::delete),
        )
        .route(
            "/mcp/account",
            post(mcp::transport::post_account)
                .get(mcp::transport::get_account)
                .delete(mcp::transport::delete_account),
        )
        .merge(oauth_public_router())
        // The REST API, each route registered with its OpenAPI operation.
        .merge(v1::router())
        .route("/s/{token}", get(site::share::page))
        .route("/s/{token}/card.png", get(site::share::card))
        .route("/s/{token}/report.json", get(site::share::data))
        .route("/sample", get(site::share::sample))
        .route("/llms.txt", get(discovery::llms_txt))
        .route(
            "/.well-known/mcp/server-card.json",
            get(discovery::server_card),
        )
        .route("/api/{*fn_name}", get(server_fns.clone()).post(server_fns))
        .merge(portal_router(&state, portal_routes))
        .fallback(site::fallback)
        // After routing (it sees the matched route) and around the
        // fallback: the JSON surfaces' guard and error bodies.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::http::api_edge,
        ))
        .layer(CatchPanicLayer::custom(
            |_panic: Box<dyn std::any::Any + Send>| {
                AppError::internal("handler", "a request handler panicked").into_response()
            },
        ))
        // Spans name the path only: query strings may carry receipts.
        .layer(
            TraceLayer::new_for_http().make_span_with(|request: &axum::http::Request<_>| {
                tracing::debug_span!(
                    "request",
                    method = %request.method(),
                    path = %request.uri().path(),
                )
            }),
        )
        // Outermost of the routed layers: it sees the matched route and
        // times everything under it.
        .layer(axum::middleware::from_fn_with_state(
            state.metrics().clone(),
            observe,
        ))
        .with_state(state.clone());
    // Around the whole router, so no layer above (a session layer
    // included) ever sees a cookie on /v1 or /mcp, and every answer, the
    // fallback's included, carries the security headers. (A body's read
    // deadline is the accept loop's: `startup::connections`.)
    Router::new()
        .fallback_service(routes)
        .layer(axum::middleware::from_fn(crate::http::strip_cookies))
        .layer(axum::middleware::from_fn_with_state(
            state,
            site::headers::guard,
        ))
}

/// Counts a request by method, matched route (never its path) and status,
/// times it to its response head, and counts the refusal it carried.
async fn observe(State(metrics): State<Metrics>, request: Request, next: Next) -> Response {
    if !metrics.is_on() {
        return next.run(request).await;
    }
    let started = tokio::time::Instant::now();
    let method = request.method().clone();
    let route = request.extensions().get::<MatchedPath>().cloned();
    let surface = match Surface::of(request.uri().path()) {
        Some(Surface::Rest) => metrics::Surface::Rest,
        Some(Surface::Mcp) => metrics::Surface::Mcp,
        Some(Surface::OAuth) => metrics::Surface::OAuth,
        Some(Surface::WellKnown) => metrics::Surface::WellKnown,
        None => metrics::Surface::Other,
    };
    let response = next.run(request).await;
    metrics.http_request(
        &method,
        route.as_ref(),
        response.status(),
        started.elapsed(),
    );
    if let Some(Refused(code)) = response.extensions().get::<Refused>() {
        metrics.refusal(surface, code);
    }
    response
}

/// The OAuth endpoints a browser-based MCP client (the MCP Inspector's
/// UI) calls from another origin: discovery, registration, token and
/// revocation. They read no cookie, so they answer any origin
/// (`Access-Control-Allow-Origin: *`, no credentials). `/authorize` and
/// the portal are not here: they are pages, never fetched cross-origin.
fn oauth_public_router() -> Router<AppState> {
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(discovery::protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(oauth_http::protected_resource_mcp),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp/account",
            get(oauth_http::protected_resource_account),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(oauth_http::authorization_server),
        )
        .route("/register", post(oauth_http::register))
        .route("/token", post(oauth_http::token))
        .route("/revoke", post(oauth_http::revoke))
        .layer(axum::middleware::from_fn(oauth_http::public_cors))
}

/// The people side: sign-in, the account pages and the Leptos pages, behind
/// the cookie session (no other route sees it).
fn portal_router(
    state: &AppState,
    leptos_routes: Vec<leptos_axum::AxumRouteListing>,
) -> Router<AppState> {
    let pages = Router::new()
        .leptos_routes_with_context(
            state,
            leptos_routes,
            portal::route_context(state.clone()),
            shell_fn(state),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            portal::with_viewer,
        ));
    Router::new()
        .route(
            "/auth/solana/challenge",
            post(portal::signin::solana_challenge),
        )
        .route("/auth/solana/verify", post(portal::signin::solana_verify))
        .route("/auth/google/start", get(portal::signin::google_start))
        .route(
            "/auth/google/callback",
            get(portal::signin::google_callback),
        )
        .route("/auth/signout", post(portal::signin::sign_out))
        .route("/signin", get(portal::pages::sign_in_page))
        .route("/keys", get(portal::pages::keys).post(portal::pages::mint))
        .route(
            "/keys/revoke",
            get(portal::pages::confirm_revoke).post(portal::pages::revoke),
        )
        .route(
            "/keys/oauth/disconnect",
            get(portal::pages::confirm_disconnect).post(portal::pages::disconnect_oauth_client),
        )
        .route(
            "/authorize",
            get(portal::consent::authorize).post(portal::consent::decide),
        )
        .route(
            "/wallets",
            get(portal::pages::wallets).post(portal::pages::add_wallet),
        )
        .route("/wallets/relabel", post(portal::pages::relabel_wallet))
        .route(
            "/wallets/remove",
            get(portal::pages::confirm_remove_wallet).post(portal::pages::remove_wallet),
        )
        .route(
            "/wallets/{address}/scan",
            get(portal::scan::offer_page).post(portal::scan::start),
        )
        .route("/scans/{job_id}", get(portal::scan::progress_page))
        .route("/scans/{job_id}/progress", get(portal::scan::progress_json))
        .route("/wallets/{address}/report", get(portal::reports::download))
        .route("/wallets/{address}", get(portal::report::page))
        .route("/wallets/{address}/share", post(portal::report::create))
        .route("/wallets/{address}/label", post(portal::report::label))
        .route(
            "/settings",
            get(portal::settings::page).post(portal::settings::save),
        )
        .route(
            "/wallets/{address}/share/revoke",
            get(portal::report::confirm_revoke).post(portal::report::revoke),
        )
        .route("/payments", get(portal::pages::payments))
        .route("/credits", get(portal::research::credits))
        .route(
            "/wallets/{address}/graph",
            get(portal::research::graph).post(portal::research::expand),
        )
        .merge(pages)
        .layer(axum::Extension(portal::PortalParts::new(state)))
        .layer(portal::sessions::layer(state.services()))
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(err) => {
                tracing::warn!(error = %err, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
