//! `mannerly serve --metrics`: requests and their time per endpoint. The
//! endpoint label is one of the routes this server has (any other path is
//! `other`), so strangers' paths never become series.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use mannerly_metrics::{status_class, Counter, Family, Histogram, Registry, SECONDS};

/// Every route, as its label.
const ENDPOINTS: &[&str] = &[
    "/",
    "/app.js",
    "/style.css",
    "/api/openapi.json",
    "/api/check",
    "/api/lint",
    "/api/diff",
    "/api/batch",
    "/api/fetch",
    "/api/whatif",
];

/// The server's families.
#[derive(Debug)]
pub struct ServeMetrics {
    requests: Arc<Family<Counter>>,
    duration: Arc<Family<Histogram>>,
}

impl ServeMetrics {
    /// The families, registered in `registry`.
    pub fn new(registry: &Registry) -> Arc<ServeMetrics> {
        Arc::new(ServeMetrics {
            requests: registry.counter(
                "mannerly_serve_requests_total",
                "Requests answered, by endpoint and status class.",
                &["endpoint", "code"],
            ),
            duration: registry.histogram(
                "mannerly_serve_request_duration_seconds",
                "From a request's arrival to its answer, by endpoint.",
                &["endpoint"],
                SECONDS,
            ),
        })
    }
}

/// The middleware that counts every answer.
pub(crate) async fn count(
    State(m): State<Arc<ServeMetrics>>,
    req: Request,
    next: Next,
) -> Response {
    let start = Instant::now();
    let endpoint = ENDPOINTS
        .iter()
        .find(|e| **e == req.uri().path())
        .copied()
        .unwrap_or("other");
    let resp = next.run(req).await;
    let code = status_class(Some(resp.status().as_u16()));
    m.requests.with(&[endpoint, code]).inc();
    m.duration
        .with(&[endpoint])
        .observe(start.elapsed().as_secs_f64());
    resp
}
