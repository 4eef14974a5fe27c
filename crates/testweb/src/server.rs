//! The server: accepting connections on every port, picking each
//! request's reply, recording it, and producing its body (slow, endless,
//! gzip-bombed, cut or hung as scripted).

use std::collections::HashMap;
use std::io::{self, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::Frame;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::config::*;
use crate::state::{Asked, RequestRecord, State};

pub(crate) async fn accept_loop(
    listener: TcpListener,
    port: u16,
    state: Arc<State>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        // As real servers do: without it, a response written in two parts
        // (head, then body) on a reused connection waits for the client's
        // delayed ACK, 40 ms on Linux, and the simulated web is slow for no
        // reason of its hosts'.
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req| handle(state.clone(), port, req));
            // A client that goes away (killed) does not cancel its request:
            // as a real server, testweb learns only when it writes the
            // answer, so a request stays in flight until then.
            let mut http = hyper::server::conn::http1::Builder::new();
            http.half_close(true);
            match tls {
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        let _ = http.serve_connection(TokioIo::new(stream), svc).await;
                    }
                }
                None => {
                    let _ = http.serve_connection(TokioIo::new(stream), svc).await;
                }
            }
        });
    }
}

/// Decrements the host's in-flight count and records the end time when the
/// response body is done (or dropped).
struct Guard {
    state: Arc<State>,
    counter: Arc<AtomicUsize>,
    record: usize,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::SeqCst);
        let now = self.state.start.elapsed();
        if let Some(r) = self.state.records.lock().get_mut(self.record) {
            r.finished = Some(now);
        }
    }
}

/// Records what a request was answered.
fn note_reply(state: &State, record: usize, reply: &Reply) {
    if let Some(r) = state.records.lock().get_mut(record) {
        r.status = (!reply.reset).then_some(reply.status);
        r.retry_after = reply
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
            .map(|(_, v)| v.clone());
        r.bytes = match &reply.body {
            Body::Text { text } => Some(text.len() as u64),
            _ => None,
        };
    }
}

/// A body fed by a task through a channel.
struct ChannelBody {
    rx: mpsc::Receiver<Result<Bytes, io::Error>>,
    _guard: Option<Guard>,
}

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(b))) => Poll::Ready(Some(Ok(Frame::data(b)))),
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            Poll::Ready(None) => {
                self._guard = None;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let _ = enc.write_all(data);
    enc.finish().unwrap_or_default()
}

static BOMBS: std::sync::LazyLock<Mutex<HashMap<u64, Bytes>>> =
    std::sync::LazyLock::new(|| Mutex::new(HashMap::new()));

/// How many distinct gzip bombs this process has compressed (each size is
/// compressed once, then shared).
pub fn gzip_bombs_made() -> usize {
    BOMBS.lock().len()
}

/// A gzip bomb of `decoded` bytes, compressed once per size (on a blocking
/// thread) and shared by every request for it after that.
async fn cached_gzip_bomb(decoded: u64) -> Bytes {
    if let Some(b) = BOMBS.lock().get(&decoded) {
        return b.clone();
    }
    let z = tokio::task::spawn_blocking(move || Bytes::from(gzip_bomb(decoded)))
        .await
        .unwrap_or_default();
    BOMBS.lock().entry(decoded).or_insert(z).clone()
}

fn gzip_bomb(decoded: u64) -> Vec<u8> {
    // The default level: a run of one byte shrinks about 1000:1 (the
    // fastest level of zlib-rs keeps only about 100:1). Each size is
    // compressed once (`cached_gzip_bomb`).
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let chunk = vec![b'a'; 64 * 1024];
    let mut left = decoded;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        let _ = enc.write_all(&chunk[..n]);
        left -= n as u64;
    }
    enc.finish().unwrap_or_default()
}

/// The reply for a request, from the host's script, the generated hosts,
/// or a 404.
fn pick_reply(state: &State, host: &str, port: u16, path: &str, asked: &Asked) -> Reply {
    let config = state.config.lock();
    let spec = config
        .hosts
        .get(&format!("{host}:{port}"))
        .or_else(|| config.hosts.get(host))
        .cloned();
    let g = &config.generated;
    let spec = spec.or_else(|| {
        let n: u32 = host
            .strip_prefix(&g.prefix)?
            .strip_suffix(&g.suffix)?
            .parse()
            .ok()?;
        (n < g.count).then(|| HostSpec {
            validators: g.validators,
            sitemap: g.sitemap,
            latency_ms: g.latency_ms,
            ..HostSpec::default()
                .robots(g.robots.replace("{host}", host))
                .pages(g.pages_per_host, g.links_per_page)
        })
    });
    let Some(spec) = spec else {
        return Reply::status(404).header("Content-Type", "text/plain");
    };
    // A path with a query falls back to the route of its path alone.
    let route = spec
        .routes
        .get_key_value(path)
        .or_else(|| {
            path.split_once('?')
                .and_then(|(p, _)| spec.routes.get_key_value(p))
        })
        .filter(|(_, r)| !r.is_empty());
    let mut reply = if let Some((key, replies)) = route {
        let mut counters = state.counters.lock();
        let n = counters
            .entry((host.to_owned(), port, key.clone()))
            .or_insert(0);
        let reply = replies[(*n).min(replies.len() - 1)].clone();
        *n += 1;
        reply
    } else {
        crate::generated::generated(state, &spec, g, host, path, asked)
    };
    reply.latency_ms += spec.latency_ms;
    reply
}

/// The `Host` header without its port, lower-cased ("" without one).
fn host_of(req: &Request<Incoming>) -> String {
    req.headers()
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(|h| {
            h.rsplit_once(':').map_or(h, |(name, p)| {
                if p.bytes().all(|b| b.is_ascii_digit()) {
                    name
                } else {
                    h
                }
            })
        })
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// A request comes in: counted in flight for its host (the most at once
/// kept), and recorded. The guard counts it out when its answer is done.
fn begin(state: &Arc<State>, host: &str, port: u16, req: &Request<Incoming>, path: &str) -> Guard {
    let counter = state
        .in_flight
        .lock()
        .entry(host.to_owned())
        .or_default()
        .clone();
    let in_flight = counter.fetch_add(1, Ordering::SeqCst) + 1;
    {
        let mut max = state.max_in_flight.lock();
        let m = max.entry(host.to_owned()).or_insert(0);
        *m = (*m).max(in_flight);
    }
    let record = if !state.config.lock().record {
        usize::MAX
    } else {
        let mut records = state.records.lock();
        records.push(RequestRecord {
            host: host.to_owned(),
            port,
            method: req.method().to_string(),
            path: path.to_owned(),
            user_agent: req
                .headers()
                .get(hyper::header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            signature_headers: ["signature-agent", "signature-input", "signature"]
                .iter()
                .flat_map(|name| {
                    req.headers()
                        .get_all(*name)
                        .iter()
                        .filter_map(|v| Some(((*name).to_owned(), v.to_str().ok()?.to_owned())))
                })
                .collect(),
            credentials: req.headers().contains_key(hyper::header::AUTHORIZATION)
                || req.headers().contains_key(hyper::header::COOKIE),
            conditional: req.headers().contains_key(hyper::header::IF_NONE_MATCH)
                || req.headers().contains_key(hyper::header::IF_MODIFIED_SINCE),
            started: state.start.elapsed(),
            finished: None,
            in_flight_at_start: in_flight,
            status: None,
            retry_after: None,
            bytes: None,
        });
        records.len() - 1
    };
    Guard {
        state: state.clone(),
        counter,
        record,
    }
}

async fn handle(
    state: Arc<State>,
    port: u16,
    req: Request<Incoming>,
) -> Result<Response<ChannelBody>, io::Error> {
    let host = host_of(&req);
    let path = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let guard = begin(&state, &host, port, &req, &path);
    let asked = Asked::of(&req);
    let reply = pick_reply(&state, &host, port, &path, &asked);
    note_reply(&state, guard.record, &reply);
    if state.config.lock().log {
        let how = if reply.reset {
            " (reset)"
        } else if reply.hang {
            " (hang)"
        } else {
            ""
        };
        let at = state.start.elapsed().as_secs_f64();
        let (method, status) = (req.method(), reply.status);
        eprintln!("{at:>10.3}s {host}:{port} {method} {path} -> {status}{how}");
    }
    if reply.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(reply.latency_ms)).await;
    }
    if reply.hang {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    if reply.reset {
        drop(guard);
        return Err(io::Error::new(
            io::ErrorKind::ConnectionReset,
            "testweb: scripted reset",
        ));
    }
    let (tx, rx) = mpsc::channel::<Result<Bytes, io::Error>>(4);
    let (producer, content_length, gzipped) = produce(reply.body, tx).await;
    tokio::spawn(producer);
    let mut builder = Response::builder().status(reply.status);
    if gzipped {
        builder = builder.header("Content-Encoding", "gzip");
    }
    for (k, v) in &reply.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    if let Some(len) = content_length {
        if !reply
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        {
            builder = builder.header("Content-Length", len);
        }
    }
    builder
        .body(ChannelBody {
            rx,
            _guard: Some(guard),
        })
        .map_err(|e| io::Error::other(e.to_string()))
}

/// A task that sends a body's chunks down `tx` as the body says, its
/// length when it declares one, and whether it is gzipped.
async fn produce(
    body: Body,
    tx: mpsc::Sender<Result<Bytes, io::Error>>,
) -> (Producer, Option<u64>, bool) {
    let mut content_length: Option<u64> = None;
    let mut gzipped = false;
    let producer: Producer = match body {
        Body::Text { text } => {
            content_length = Some(text.len() as u64);
            Box::pin(async move {
                let _ = tx.send(Ok(Bytes::from(text))).await;
            })
        }
        Body::Binary { bytes } => {
            content_length = Some(bytes.len() as u64);
            Box::pin(async move {
                let _ = tx.send(Ok(Bytes::from(bytes))).await;
            })
        }
        Body::Gzip { text } => {
            let z = gzip(text.as_bytes());
            content_length = Some(z.len() as u64);
            gzipped = true;
            Box::pin(async move {
                let _ = tx.send(Ok(Bytes::from(z))).await;
            })
        }
        Body::GzipBomb { decoded_bytes } => {
            let z = cached_gzip_bomb(decoded_bytes).await;
            content_length = Some(z.len() as u64);
            gzipped = true;
            Box::pin(async move {
                let _ = tx.send(Ok(z)).await;
            })
        }
        Body::Endless { line } => {
            // An empty line would make empty chunks forever (a busy loop
            // that sends nothing): it stands for blank lines.
            let line = if line.is_empty() {
                "\n".to_owned()
            } else {
                line
            };
            let chunk = Bytes::from(line.repeat((16 * 1024 / line.len()).max(1)));
            Box::pin(async move { while tx.send(Ok(chunk.clone())).await.is_ok() {} })
        }
        Body::Huge { bytes, line } => {
            content_length = Some(bytes);
            let chunk = Bytes::from(line.repeat((64 * 1024 / line.len().max(1)).max(1)));
            Box::pin(async move {
                let mut left = bytes;
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    if tx.send(Ok(chunk.slice(..n))).await.is_err() {
                        return;
                    }
                    left -= n as u64;
                }
            })
        }
        Body::Slow {
            text,
            chunk_bytes,
            delay_ms,
        } => {
            content_length = Some(text.len() as u64);
            Box::pin(async move {
                let bytes = Bytes::from(text);
                let step = chunk_bytes.max(1);
                let mut at = 0;
                while at < bytes.len() {
                    let end = (at + step).min(bytes.len());
                    if tx.send(Ok(bytes.slice(at..end))).await.is_err() {
                        return;
                    }
                    at = end;
                    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                }
            })
        }
        Body::Truncated { text, declared } => {
            content_length = Some(declared);
            Box::pin(async move {
                let _ = tx.send(Ok(Bytes::from(text))).await;
                let _ = tx
                    .send(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "testweb: truncated",
                    )))
                    .await;
            })
        }
        Body::ResetAfter { text } => Box::pin(async move {
            let _ = tx.send(Ok(Bytes::from(text))).await;
            let _ = tx
                .send(Err(io::Error::new(
                    io::ErrorKind::ConnectionReset,
                    "testweb: reset mid-body",
                )))
                .await;
        }),
    };
    (producer, content_length, gzipped)
}

/// A body's sending task.
type Producer = Pin<Box<dyn std::future::Future<Output = ()> + Send>>;
