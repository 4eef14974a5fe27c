//! The `/metrics` endpoint: Prometheus text unless the scraper's `Accept`
//! asks for OpenMetrics. Any other path is 404.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use crate::{Format, Registry};

/// Binds `addr` and serves `registry` there until the task is dropped;
/// the bound address is returned once listening.
pub async fn bind(
    addr: &str,
    registry: Arc<Registry>,
) -> std::io::Result<(std::net::SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    Ok((local, tokio::spawn(serve(listener, registry))))
}

/// Serves `registry` on `listener`.
pub async fn serve(listener: tokio::net::TcpListener, registry: Arc<Registry>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            continue;
        };
        let registry = registry.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req: Request<Incoming>| {
                let registry = registry.clone();
                async move { Ok::<_, Infallible>(answer(&registry, &req)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

fn answer(registry: &Registry, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    if req.uri().path() != "/metrics" {
        let mut r = Response::new(Full::new(Bytes::from_static(
            b"not found: scrape /metrics\n",
        )));
        *r.status_mut() = StatusCode::NOT_FOUND;
        return r;
    }
    let accept = req
        .headers()
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let format = Format::from_accept(accept);
    let mut r = Response::new(Full::new(Bytes::from(registry.encode(format))));
    if let Ok(v) = format.content_type().parse() {
        r.headers_mut().insert("content-type", v);
    }
    r
}
