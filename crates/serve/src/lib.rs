//! `mannerly serve`: a robots.txt tester web page for site owners and a
//! robots decision API for crawler fleets, on the exact engine of
//! `mannerly-robots`.
//!
//! - The page (`/`) and its assets are compiled into the binary: no CDN, no
//!   framework, works offline.
//! - The API (`/api/check`, `/api/lint`, `/api/diff`, `/api/batch`,
//!   `/api/fetch`) is described by the OpenAPI document at
//!   `/api/openapi.json`. Its answers are plain functions in [`api`], so
//!   what the API says is what the library says.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! mannerly_serve::serve(listener, mannerly_serve::ServeConfig::default()).await?;
//! # Ok(()) }
//! ```
//!
//! # Design notes
//!
//! - **Bounded.** Request bodies are capped ([`ServeConfig::max_body`],
//!   413 past it); URL and agent counts are capped ([`api::MAX_URLS`]);
//!   each client (by IP) gets a token bucket ([`ServeConfig::rate_limit`],
//!   429 with `Retry-After` past it); every request has a deadline
//!   ([`ServeConfig::timeout`], 504). A robots.txt over 500 KiB is cut
//!   where the parser cuts it, and `/api/lint` says so.
//! - **Never a 500 for bad input.** Malformed JSON is a 400 naming the
//!   line and column, unknown fields are refused by name, and every error
//!   is `{"error": "..."}`.
//! - **Fetching for strangers (SSRF).** `/api/fetch` and `/api/batch` fetch
//!   robots.txt through `mannerly-fetch`'s `RobotsCache` (24 h, the 5xx
//!   phases, single flight), with a fetcher that refuses loopback,
//!   private, link-local and reserved addresses on every redirect hop,
//!   unless [`ServeConfig::allow_private`]. An origin whose host is such an
//!   address (a literal, or a name resolving to one) is refused with a 403
//!   before anything is sent.
//! - CPU-bound answers (a 10,000-URL check, a diff) run on tokio's
//!   blocking pool, so they never stall the accept loop.

#![deny(missing_docs)]

pub mod api;
pub mod metrics;
pub mod whatif;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Query, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use mannerly_fetch::{
    Access, AccessKind, CacheConfig, FetchConfig, HttpFetcher, MemoryStore, Origin, RobotsCache,
    SystemClock,
};
use serde::Serialize;

/// The page, its script and style, and the OpenAPI document.
const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");
/// The OpenAPI 3.1 document served at `/api/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("../assets/openapi.json");

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Fetch robots.txt from loopback, private and link-local addresses too
    /// (off: a public server must not be a way into its own network).
    pub allow_private: bool,
    /// Largest request body (2 MiB: a 500 KiB file, JSON-escaped, twice
    /// for a diff, with room for URLs).
    pub max_body: usize,
    /// Requests per second each client IP may make (100), with a burst of
    /// twice that.
    pub rate_limit: u32,
    /// Deadline of each request (30 s).
    pub timeout: Duration,
    /// How robots.txt is fetched for `/api/fetch` and `/api/batch` (10 s
    /// per hop, 20 s in all, 500 KiB, 5 redirects).
    pub fetch: FetchConfig,
    /// Count requests per endpoint into these families (`None`: no
    /// metrics).
    pub metrics: Option<Arc<metrics::ServeMetrics>>,
    /// The identity checks `/api/whatif` makes (`None`: none, every
    /// client unverified).
    pub identify: Option<whatif::SharedIdentify>,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            allow_private: false,
            max_body: 2 << 20,
            rate_limit: 100,
            timeout: Duration::from_secs(30),
            fetch: FetchConfig {
                timeout: Duration::from_secs(10),
                total_timeout: Duration::from_secs(20),
                ..FetchConfig::default()
            },
            metrics: None,
            identify: None,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The HTTP client for robots.txt fetches could not be built.
    #[error("building the robots.txt fetcher: {0}")]
    Fetcher(#[from] mannerly_fetch::FetchError),
    /// The listener failed.
    #[error("serving: {0}")]
    Io(#[from] std::io::Error),
}

struct AppState {
    config: ServeConfig,
    fetcher: HttpFetcher,
    cache: RobotsCache<HttpFetcher>,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Most clients tracked by the rate limiter before idle ones are dropped.
const MAX_TRACKED_CLIENTS: usize = 65_536;

/// The router (for embedding in another axum app, or for tests with
/// `into_make_service_with_connect_info::<SocketAddr>()`).
pub fn router(config: ServeConfig) -> Result<Router, ServeError> {
    let fetcher = if config.allow_private {
        HttpFetcher::new(config.fetch.clone())?
    } else {
        HttpFetcher::public_only(config.fetch.clone())?
    };
    Ok(router_with(config, fetcher))
}

/// The router over a fetcher you built (tests resolve names their own
/// way). Start from [`HttpFetcher::public_only`] unless
/// [`ServeConfig::allow_private`] is meant.
pub fn router_with(config: ServeConfig, fetcher: HttpFetcher) -> Router {
    let cache = RobotsCache::new(
        fetcher.clone(),
        Arc::new(SystemClock),
        Arc::new(MemoryStore::default()),
        CacheConfig::default(),
    );
    let max_body = config.max_body;
    let metrics = config.metrics.clone();
    let state = Arc::new(AppState {
        config,
        fetcher,
        cache,
        buckets: Mutex::new(HashMap::new()),
    });
    let app = Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
        .route(
            "/api/openapi.json",
            get(|| async { asset("application/json", OPENAPI_JSON) }),
        )
        .route("/api/check", post(check))
        .route("/api/lint", post(lint))
        .route("/api/diff", post(diff))
        .route("/api/batch", post(batch))
        .route("/api/fetch", get(fetch))
        .route(
            "/api/whatif",
            post(whatif).layer(DefaultBodyLimit::max(whatif::MAX_LOG_BYTES + (1 << 20))),
        )
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "no such page or endpoint; the API is described at /api/openapi.json",
            )
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "this endpoint does not take that method: /api/fetch is GET, the other endpoints POST (see /api/openapi.json)",
            )
        })
        .layer(middleware::from_fn_with_state(state.clone(), limits))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state);
    match metrics {
        Some(m) => app.layer(middleware::from_fn_with_state(m, metrics::count)),
        None => app,
    }
}

/// Serves until the listener fails.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: ServeConfig,
) -> Result<(), ServeError> {
    let app = router(config)?;
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .await?;
    Ok(())
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:"),
            ),
            (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        ],
        body,
    )
        .into_response()
}

/// An error answer: `{"error": "..."}` with a 4xx (or 504) status.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    message: String,
    retry_after: Option<u64>,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            retry_after: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response();
        if let Some(s) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&s.to_string()) {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        r
    }
}

impl From<api::BadRequest> for ApiError {
    fn from(e: api::BadRequest) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, e.0)
    }
}

/// The per-client rate limit and the request deadline.
async fn limits(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let connect = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    if let Some(addr) = connect {
        if let Err(wait) = take_token(&state, addr.ip()) {
            let mut e = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "more than {} requests per second from {}; retry after {wait} s",
                    state.config.rate_limit,
                    addr.ip()
                ),
            );
            e.retry_after = Some(wait);
            return e.into_response();
        }
    }
    match tokio::time::timeout(state.config.timeout, next.run(req)).await {
        Ok(r) => r,
        Err(_) => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            format!("no answer within {} s", state.config.timeout.as_secs()),
        )
        .into_response(),
    }
}

/// Takes one token from the client's bucket; `Err(seconds)` to wait.
fn take_token(state: &AppState, ip: IpAddr) -> Result<(), u64> {
    let rate = f64::from(state.config.rate_limit.max(1));
    let burst = rate * 2.0;
    let now = Instant::now();
    let mut buckets = state.buckets.lock().unwrap_or_else(|p| p.into_inner());
    if buckets.len() >= MAX_TRACKED_CLIENTS && !buckets.contains_key(&ip) {
        // Full buckets carry no state worth keeping.
        buckets.retain(|_, b| (b.tokens + now.duration_since(b.at).as_secs_f64() * rate) < burst);
    }
    let b = buckets.entry(ip).or_insert(Bucket {
        tokens: burst,
        at: now,
    });
    b.tokens = (b.tokens + now.duration_since(b.at).as_secs_f64() * rate).min(burst);
    b.at = now;
    if b.tokens >= 1.0 {
        b.tokens -= 1.0;
        Ok(())
    } else {
        Err(((1.0 - b.tokens) / rate).ceil().max(1.0) as u64)
    }
}

/// Decodes a JSON body, or says what is wrong with it.
fn decode<T: serde::de::DeserializeOwned>(
    state: &AppState,
    body: Result<Bytes, BytesRejection>,
) -> Result<T, ApiError> {
    parse_json(&read_body(state, body)?)
}

/// The body, or why it could not be had (413 past the limit).
fn read_body(state: &AppState, body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    body.map_err(|r| {
        let status = r.status();
        let msg = if status == StatusCode::PAYLOAD_TOO_LARGE {
            format!(
                "the request body is over the server's limit of {} bytes",
                state.config.max_body
            )
        } else {
            format!("the request body could not be read: {}", r.body_text())
        };
        ApiError::new(status, msg)
    })
}

/// JSON to a request type, or a 400 saying what is wrong and where.
fn parse_json<'a, T: serde::Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Data => "the JSON does not fit the request",
            serde_json::error::Category::Eof => "the JSON ends early",
            _ => "malformed JSON",
        };
        ApiError::new(StatusCode::BAD_REQUEST, format!("{what}: {e}"))
    })
}

/// Runs CPU-bound work on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the request was cancelled"))
}

async fn check(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<api::CheckResponse>, ApiError> {
    let req: api::CheckRequest = decode(&state, body)?;
    Ok(Json(blocking(move || api::check(&req)).await??))
}

async fn lint(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<api::LintResponse>, ApiError> {
    let req: api::LintRequest = decode(&state, body)?;
    Ok(Json(blocking(move || api::lint(&req)).await?))
}

async fn whatif(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<whatif::WhatIfResponse>, ApiError> {
    let req: whatif::WhatIfRequest = decode(&state, body)?;
    let identify = state.config.identify.clone();
    Ok(Json(
        blocking(move || whatif::whatif(&req, identify.as_ref())).await??,
    ))
}

async fn diff(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<api::DiffResponse>, ApiError> {
    let mut req: api::DiffRequest = decode(&state, body)?;
    let from_sitemap = match req.sitemap.clone() {
        Some(sitemap) => Some(sitemap_pages(&state, &sitemap, &mut req.urls).await?),
        None => None,
    };
    let mut answer = blocking(move || api::diff(&req)).await??;
    answer.sitemap_urls = from_sitemap;
    Ok(Json(answer))
}

/// Sitemaps one diff may fetch (an index and its children).
const DIFF_MAX_SITEMAPS: usize = 20;

/// Appends the pages of a sitemap (following an index) to `urls`, up to
/// [`api::MAX_URLS`] in all; returns how many it added.
async fn sitemap_pages(
    state: &AppState,
    sitemap: &str,
    urls: &mut Vec<String>,
) -> Result<usize, ApiError> {
    let url = url::Url::parse(sitemap).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("`sitemap` {sitemap:?} is not a URL: {e}"),
        )
    })?;
    public_origin(state, sitemap).await?;
    let walker = mannerly_sitemap::walk::Walker::new(
        state.fetcher.clone(),
        mannerly_sitemap::walk::WalkConfig {
            max_depth: 1,
            max_sitemaps: DIFF_MAX_SITEMAPS,
            deadline: state.config.timeout.mul_f64(0.8),
            ..Default::default()
        },
    );
    let (tx, mut rx) = tokio::sync::mpsc::channel::<mannerly_sitemap::walk::Found>(1024);
    let before = urls.len();
    let collect = async {
        while let Some(found) = rx.recv().await {
            if urls.len() >= api::MAX_URLS {
                break;
            }
            urls.push(found.entry.loc);
        }
        // Dropping the receiver ends the walk.
        drop(rx);
    };
    let (report, ()) = tokio::join!(
        walker.walk(mannerly_sitemap::walk::Start::Sitemaps(vec![url]), tx),
        collect
    );
    let added = urls.len() - before;
    if added == 0 {
        let why = report
            .sitemaps
            .first()
            .map(|v| match &v.result {
                mannerly_sitemap::walk::VisitResult::Parsed { summary } => summary.describe(),
                mannerly_sitemap::walk::VisitResult::Skipped { reason }
                | mannerly_sitemap::walk::VisitResult::Failed { reason } => reason.clone(),
            })
            .unwrap_or_else(|| "nothing was fetched".into());
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the sitemap {sitemap} listed no pages ({why})"),
        ));
    }
    Ok(added)
}

/// The origin of `text`, refused when the server may not fetch from it.
async fn public_origin(state: &AppState, text: &str) -> Result<Origin, ApiError> {
    let origin = Origin::of(text).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("`origin` {text:?} is not an http(s) origin: {e}"),
        )
    })?;
    if state.config.allow_private {
        return Ok(origin);
    }
    let host = origin.host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => match tokio::net::lookup_host((host, origin.port)).await {
            Ok(a) => a.map(|s| s.ip()).collect(),
            // Let the fetch fail and be recorded as the crawler would.
            Err(_) => Vec::new(),
        },
    };
    if let Some(ip) = addrs
        .into_iter()
        .find(|ip| mannerly_fetch::guard::is_forbidden(*ip))
    {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("refused: {} resolves to {ip}, a loopback, private, link-local or reserved address (start the server with --allow-private to test such hosts)", origin.host),
        ));
    }
    Ok(origin)
}

#[derive(serde::Deserialize)]
struct FetchQuery {
    origin: Option<String>,
}

/// `GET /api/fetch`'s answer: the cache's state for an origin.
#[derive(Serialize)]
struct FetchState {
    origin: String,
    robots_url: String,
    access: AccessKind,
    reason: String,
    expires_at: String,
    fetched_at: Option<String>,
    status: Option<u16>,
    bytes: Option<usize>,
    body: Option<String>,
    failure: Option<serde_json::Value>,
    history: Vec<serde_json::Value>,
}

async fn fetch(
    State(state): State<Arc<AppState>>,
    query: Result<Query<FetchQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<FetchState>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.body_text()))?;
    let text = q.origin.ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "`origin` is missing: /api/fetch?origin=https://example.com",
        )
    })?;
    let origin = public_origin(&state, &text).await?;
    let decision = state.cache.decision(&origin).await;
    let s = state.cache.state(&origin).await;
    let good = s.good.as_ref();
    Ok(Json(FetchState {
        origin: origin.to_string(),
        robots_url: origin.robots_url(),
        access: decision.access.kind(),
        reason: decision.reason.clone(),
        expires_at: decision.expires_at.to_rfc3339_millis(),
        fetched_at: good.map(|g| g.fetched_at.to_rfc3339_millis()),
        status: good.map(|g| g.status),
        bytes: good.map(|g| g.body.len()),
        body: good.map(|g| String::from_utf8_lossy(&g.body).into_owned()),
        failure: s.failure.as_ref().map(|f| {
            serde_json::json!({"since": f.since.to_rfc3339_millis(), "attempts": f.attempts, "last": f.last})
        }),
        history: s
            .history
            .iter()
            .map(|h| serde_json::json!({"at": h.at.to_rfc3339_millis(), "outcome": h.outcome, "decision": h.decision}))
            .collect(),
    }))
}

/// `POST /api/batch`'s answer.
#[derive(Serialize)]
struct BatchResponse<'a> {
    origin: String,
    access: AccessKind,
    reason: &'a str,
    expires_at: String,
    agent_note: Option<String>,
    results: Vec<api::BatchResult<'a>>,
}

/// Checks against a cached origin. The URLs are borrowed from the body
/// and the answer written straight to bytes: the work is proportional to
/// the URLs and done inline (10,000 checks take a few milliseconds).
async fn batch(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let bytes = read_body(&state, body)?;
    let req: api::BatchRequest<'_> = parse_json(&bytes)?;
    req.validate()?;
    let origin = public_origin(&state, &req.origin).await?;
    for (i, u) in req.urls.iter().enumerate() {
        if !u.starts_with('/') {
            match Origin::of(u) {
                Ok(o) if o == origin => {}
                _ => {
                    return Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        format!("`urls[{i}]` ({u:?}) is neither a path nor a URL on {origin}"),
                    ))
                }
            }
        }
    }
    let decision = state.cache.decision(&origin).await;
    let results = match &decision.access {
        Access::Rules(robots) => api::batch_results(robots, &req.agent, &req.urls),
        access => api::batch_all(&req.urls, matches!(access, Access::AllowAll)),
    };
    let answer = BatchResponse {
        origin: origin.to_string(),
        access: decision.access.kind(),
        reason: &decision.reason,
        expires_at: decision.expires_at.to_rfc3339_millis(),
        agent_note: mannerly_robots::agent_note(&req.agent),
        results,
    };
    let json = serde_json::to_vec(&answer).map_err(|e| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("encoding the answer: {e}"),
        )
    })?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        json,
    )
        .into_response())
}
