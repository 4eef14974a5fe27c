//! A simulated multi-host web on 127.0.0.1, for tests, benchmarks and demos.
//!
//! One server listens on several ports and serves any number of virtual
//! hosts by their `Host` header. Each host is scripted per path: a route is a
//! sequence of [`Reply`]s (the n-th request gets the n-th reply, the last
//! repeats), so "503 three times, then 200" is one line. Replies can be slow,
//! endless, gzip-bombed, truncated, reset or hung. Hosts that are not
//! scripted can be generated on the fly (`h17.gen.test`) with linked pages,
//! for crawls over tens of thousands of hosts.
//!
//! Every request is recorded (host, port, path, start and end time, and how
//! many requests to that host were in flight), so tests can assert
//! politeness.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mannerly_testweb::{HostSpec, Reply, TestWeb, WebConfig};
//! let mut config = WebConfig::default();
//! config.hosts.insert("a.test".into(), HostSpec::default().route("/robots.txt", vec![
//!     Reply::status(503).header("Retry-After", "120"),
//!     Reply::text("User-agent: *\nDisallow: /private/\n"),
//! ]));
//! let web = TestWeb::start(config).await?;
//! let url = web.url("a.test", "/robots.txt");   // http://a.test:PORT/robots.txt
//! let client = reqwest::Client::builder().dns_resolver(web.resolver()).build()?;
//! let robots = client.get(url).send().await?;   // 503, then 200 from then on
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body::Frame;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use mannerly_time::UnixMillis;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

mod revisit;
mod tls;

pub use revisit::{SitemapLastmod, Validators};

/// Errors starting the simulated web or reading its configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestWebError {
    /// A port could not be bound.
    #[error("cannot bind 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port.
        port: u16,
        /// The operating system's error.
        source: io::Error,
    },
    /// The config file could not be read.
    #[error("cannot read config {path}: {source}")]
    ReadConfig {
        /// The file.
        path: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The config file is not valid TOML for a [`WebConfig`].
    #[error("config {path} is not valid: {message}")]
    BadConfig {
        /// The file.
        path: String,
        /// What the TOML reader said.
        message: String,
    },
    /// The test CA could not be made.
    #[error("cannot make the test TLS certificate authority: {0}")]
    Tls(String),
}

/// What a response body is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Body {
    /// Exactly this text.
    Text {
        /// The text.
        text: String,
    },
    /// Exactly these bytes (for replaying captured responses).
    Binary {
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// This text, gzip-compressed, sent with `Content-Encoding: gzip`.
    Gzip {
        /// The text before compression.
        text: String,
    },
    /// `decoded_bytes` of `a`, gzip-compressed (a few KB on the wire).
    GzipBomb {
        /// Bytes after decompression.
        decoded_bytes: u64,
    },
    /// `line` repeated until the client hangs up.
    Endless {
        /// The repeated line.
        line: String,
    },
    /// `line` repeated up to `bytes` bytes.
    Huge {
        /// Total size.
        bytes: u64,
        /// The repeated line.
        line: String,
    },
    /// `text` in chunks of `chunk_bytes`, `delay_ms` apart.
    Slow {
        /// The text.
        text: String,
        /// Bytes per chunk.
        chunk_bytes: usize,
        /// Wait between chunks, milliseconds.
        delay_ms: u64,
    },
    /// Declares `Content-Length: declared` but sends only `text`, then closes.
    Truncated {
        /// What is sent.
        text: String,
        /// The Content-Length claimed.
        declared: u64,
    },
    /// Sends `text`, then resets the connection.
    ResetAfter {
        /// What is sent first.
        text: String,
    },
}

impl Default for Body {
    fn default() -> Self {
        Body::Text {
            text: String::new(),
        }
    }
}

/// One scripted response.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Header fields.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
    /// Wait this long before answering.
    pub latency_ms: u64,
    /// Close the connection without any response.
    pub reset: bool,
    /// Never answer (until the client gives up).
    pub hang: bool,
}

impl Default for Reply {
    fn default() -> Self {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: Body::default(),
            latency_ms: 0,
            reset: false,
            hang: false,
        }
    }
}

impl Reply {
    /// 200 with a text body.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            body: Body::Text { text: text.into() },
            ..Reply::default()
        }
    }

    /// An empty reply with this status.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            ..Reply::default()
        }
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: impl Into<String>) -> Reply {
        Reply::status(status).header("Location", location)
    }

    /// A reply with this body.
    pub fn body(body: Body) -> Reply {
        Reply {
            body,
            ..Reply::default()
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Answers after `ms` milliseconds.
    pub fn latency(mut self, ms: u64) -> Reply {
        self.latency_ms = ms;
        self
    }

    /// Another status.
    pub fn with_status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }

    /// Close the connection without answering.
    pub fn reset() -> Reply {
        Reply {
            reset: true,
            ..Reply::default()
        }
    }

    /// Never answer.
    pub fn hang() -> Reply {
        Reply {
            hang: true,
            ..Reply::default()
        }
    }
}

/// A scripted host.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostSpec {
    /// Path (with query) to the replies for it, in order; the last repeats.
    /// A request whose path and query match no route is served the route of
    /// its path alone, if there is one.
    pub routes: HashMap<String, Vec<Reply>>,
    /// Paths not in `routes` get a generated page with this many links to
    /// other pages of the host (0: a 404 instead).
    pub generated_links: u32,
    /// Generated pages are numbered below this.
    pub generated_pages: u32,
    /// Latency added to every reply of this host.
    pub latency_ms: u64,
    /// How generated pages answer conditional requests.
    pub validators: Validators,
    /// Whether `/sitemap.xml` lists the generated pages, and how honest
    /// its lastmod is.
    pub sitemap: SitemapLastmod,
    /// Every generated page changes this often (0: only when a test says,
    /// with [`TestWeb::change`]).
    pub change_every_ms: u64,
}

impl HostSpec {
    /// Scripts the replies to a path: one per request, the last repeated.
    pub fn route(mut self, path: impl Into<String>, replies: Vec<Reply>) -> HostSpec {
        self.routes.insert(path.into(), replies);
        self
    }

    /// Serve `robots` at `/robots.txt`.
    pub fn robots(self, robots: impl Into<String>) -> HostSpec {
        self.route("/robots.txt", vec![Reply::text(robots)])
    }

    /// The robots.txt this host serves at its first request (following
    /// redirects within the host), or `None` when it answers no file
    /// (an error status, a redirect out, a loop).
    pub fn served_robots(&self) -> Option<String> {
        let mut path = "/robots.txt".to_owned();
        for _ in 0..5 {
            let reply = self.routes.get(&path)?.first()?;
            match (reply.status, &reply.body) {
                (200, Body::Text { text }) => return Some(text.clone()),
                (301 | 302 | 303 | 307 | 308, _) => {
                    let (_, to) = reply
                        .headers
                        .iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case("location"))?;
                    path = to.strip_prefix('/').map(|p| format!("/{p}"))?;
                }
                _ => return None,
            }
        }
        None
    }

    /// Generated HTML pages: `pages` of them, each linking to `links` others.
    pub fn pages(mut self, pages: u32, links: u32) -> HostSpec {
        self.generated_pages = pages;
        self.generated_links = links;
        self
    }
}

/// Hosts made up on demand: `<prefix><n><suffix>` for n below `count`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Generated {
    /// Host names start with this.
    pub prefix: String,
    /// Host names end with this.
    pub suffix: String,
    /// How many hosts.
    pub count: u32,
    /// robots.txt of every generated host (`{host}` in it stands for the
    /// host's name: `Sitemap: http://{host}/sitemap.xml`).
    pub robots: String,
    /// HTML pages per host.
    pub pages_per_host: u32,
    /// Links per page.
    pub links_per_page: u32,
    /// Links that go to other generated hosts, out of `links_per_page`.
    pub cross_host_links: u32,
    /// How generated pages answer conditional requests.
    pub validators: Validators,
    /// Whether each host's `/sitemap.xml` lists its pages, and how honest
    /// its lastmod is.
    pub sitemap: SitemapLastmod,
}

impl Default for Generated {
    fn default() -> Self {
        Generated {
            prefix: "h".into(),
            suffix: ".gen.test".into(),
            count: 0,
            robots: "User-agent: *\nDisallow: /private/\n".into(),
            pages_per_host: 20,
            links_per_page: 5,
            cross_host_links: 1,
            validators: Validators::None,
            sitemap: SitemapLastmod::None,
        }
    }
}

/// The whole simulated web.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebConfig {
    /// Fixed ports to listen on; empty: `port_count` free ports.
    pub ports: Vec<u16>,
    /// Free ports to listen on when `ports` is empty (2).
    pub port_count: usize,
    /// Ports that speak https (TLS with a test CA, see
    /// [`TestWeb::ca_der`]); fixed, or `tls_port_count` free ones.
    pub tls_ports: Vec<u16>,
    /// Free https ports when `tls_ports` is empty (1).
    pub tls_port_count: usize,
    /// Hosts by name (`a.test`), or by name and port (`a.test:8080`) for a
    /// spec that applies to one port only.
    pub hosts: HashMap<String, HostSpec>,
    /// Names the resolver fails to resolve (DNS errors).
    pub dns_failures: HashSet<String>,
    /// Hosts generated by the thousand.
    pub generated: Generated,
    /// Print one line per request to stderr.
    pub log: bool,
    /// Keep a [`RequestRecord`] per request (on by default; turn off for
    /// long load runs, where per-host in-flight maxima are still kept).
    pub record: bool,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            ports: Vec::new(),
            port_count: 2,
            tls_ports: Vec::new(),
            tls_port_count: 1,
            hosts: HashMap::new(),
            dns_failures: HashSet::new(),
            generated: Generated::default(),
            log: false,
            record: true,
        }
    }
}

impl WebConfig {
    /// Reads a TOML config file (see `examples/testweb.toml`).
    pub fn from_toml_file(path: &str) -> Result<WebConfig, TestWebError> {
        let text = std::fs::read_to_string(path).map_err(|source| TestWebError::ReadConfig {
            path: path.to_owned(),
            source,
        })?;
        toml::from_str(&text).map_err(|e| TestWebError::BadConfig {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }
}

/// One request the server saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// Host header without the port, lower-cased.
    pub host: String,
    /// The port it came in on.
    pub port: u16,
    /// The method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The User-Agent header, if any.
    pub user_agent: Option<String>,
    /// The Web Bot Auth headers sent (Signature-Agent, Signature-Input,
    /// Signature), as sent.
    pub signature_headers: Vec<(String, String)>,
    /// The request carried If-None-Match or If-Modified-Since.
    pub conditional: bool,
    /// Since the server started.
    pub started: Duration,
    /// When the response (including its body) was done, if it was.
    pub finished: Option<Duration>,
    /// Requests to this host in flight when this one started, itself
    /// included.
    pub in_flight_at_start: usize,
    /// The status answered (`None` for a reset connection).
    pub status: Option<u16>,
    /// The Retry-After header sent, if any.
    pub retry_after: Option<String>,
    /// The body's length, when it declared one.
    pub bytes: Option<u64>,
}

/// The layout of [`TestWeb::access_log`], as an nginx `log_format`: the
/// combined format with the virtual host in front, times to the
/// millisecond (as Apache's `%{msec_frac}t` writes them), and the
/// Retry-After sent as a last field.
pub const ACCESS_LOG_FORMAT: &str = r#"$host $remote_addr - - [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$sent_http_retry_after""#;

struct State {
    config: Mutex<WebConfig>,
    /// Changes made to generated pages, per (host, path).
    versions: Mutex<HashMap<(String, String), u32>>,
    start: Instant,
    /// The wall clock when `start` was taken.
    wall_start: std::time::SystemTime,
    records: Mutex<Vec<RequestRecord>>,
    counters: Mutex<HashMap<(String, u16, String), usize>>,
    in_flight: Mutex<HashMap<String, Arc<AtomicUsize>>>,
    max_in_flight: Mutex<HashMap<String, usize>>,
}

/// A running simulated web. Dropping it stops the server.
pub struct TestWeb {
    state: Arc<State>,
    ports: Vec<u16>,
    tls_ports: Vec<u16>,
    ca_der: Vec<u8>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for TestWeb {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl TestWeb {
    /// Starts a web of the given scripted hosts (and the default
    /// settings otherwise): the builder most tests need.
    pub async fn with_hosts<'a>(
        hosts: impl IntoIterator<Item = (&'a str, HostSpec)>,
    ) -> Result<TestWeb, TestWebError> {
        let mut config = WebConfig::default();
        for (name, spec) in hosts {
            config.hosts.insert(name.to_owned(), spec);
        }
        TestWeb::start(config).await
    }

    /// Binds the ports on 127.0.0.1 and starts serving.
    pub async fn start(config: WebConfig) -> Result<TestWeb, TestWebError> {
        let mut listeners = Vec::new();
        let wanted: Vec<u16> = if config.ports.is_empty() {
            vec![0; config.port_count.max(1)]
        } else {
            config.ports.clone()
        };
        let wanted_tls: Vec<u16> = if config.tls_ports.is_empty() {
            vec![0; config.tls_port_count]
        } else {
            config.tls_ports.clone()
        };
        for (port, is_tls) in wanted
            .into_iter()
            .map(|p| (p, false))
            .chain(wanted_tls.into_iter().map(|p| (p, true)))
        {
            let l = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))
                .await
                .map_err(|source| TestWebError::Bind { port, source })?;
            listeners.push((l, is_tls));
        }
        let minter = Arc::new(tls::Minter::new().map_err(|e| TestWebError::Tls(e.to_string()))?);
        let tls_config = tls::server_config(minter.clone());
        let state = Arc::new(State {
            config: Mutex::new(config),
            start: Instant::now(),
            wall_start: std::time::SystemTime::now(),
            records: Mutex::new(Vec::new()),
            versions: Mutex::new(HashMap::new()),
            counters: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            max_in_flight: Mutex::new(HashMap::new()),
        });
        let mut ports = Vec::new();
        let mut tls_ports = Vec::new();
        let mut tasks = Vec::new();
        for (l, is_tls) in listeners {
            let port = l
                .local_addr()
                .map_err(|source| TestWebError::Bind { port: 0, source })?
                .port();
            let state = state.clone();
            if is_tls {
                tls_ports.push(port);
                let acceptor = tokio_rustls::TlsAcceptor::from(tls_config.clone());
                tasks.push(tokio::spawn(accept_loop(l, port, state, Some(acceptor))));
            } else {
                ports.push(port);
                tasks.push(tokio::spawn(accept_loop(l, port, state, None)));
            }
        }
        Ok(TestWeb {
            state,
            ports,
            tls_ports,
            ca_der: minter.ca_der(),
            tasks,
        })
    }

    /// The first port.
    pub fn port(&self) -> u16 {
        self.ports[0]
    }

    /// The ports listened on (http first, then https).
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    /// `http://<host>:<first port><path>`.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port())
    }

    /// The https ports.
    pub fn tls_ports(&self) -> &[u16] {
        &self.tls_ports
    }

    /// `https://<host>:<first TLS port><path>` (`None` without TLS ports).
    pub fn https_url(&self, host: &str, path: &str) -> Option<String> {
        self.tls_ports
            .first()
            .map(|p| format!("https://{host}:{p}{path}"))
    }

    /// The test CA's certificate (DER), for clients to trust:
    /// `reqwest::Certificate::from_der(&web.ca_der())`.
    pub fn ca_der(&self) -> Vec<u8> {
        self.ca_der.clone()
    }

    /// Changes a generated page: its body, ETag and Last-Modified move on
    /// (and an honest sitemap's lastmod with them).
    pub fn change(&self, host: &str, path: &str) {
        *self
            .state
            .versions
            .lock()
            .entry((host.to_owned(), path.to_owned()))
            .or_insert(0) += 1;
    }

    /// A host's script, as it is now (`None` for a generated host).
    pub fn host(&self, name: &str) -> Option<HostSpec> {
        self.state.config.lock().hosts.get(name).cloned()
    }

    /// Replaces (or adds) a host's script while running; its counters reset.
    pub fn set_host(&self, name: &str, spec: HostSpec) {
        self.state.config.lock().hosts.insert(name.to_owned(), spec);
        self.state.counters.lock().retain(|(h, _, _), _| h != name);
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.state.records.lock().clone()
    }

    /// Requests for one host and path.
    pub fn count(&self, host: &str, path: &str) -> usize {
        self.state
            .records
            .lock()
            .iter()
            .filter(|r| r.host == host && r.path == path)
            .count()
    }

    /// Every request recorded, as an access log in the layout of
    /// [`ACCESS_LOG_FORMAT`], in the order they started.
    pub fn access_log(&self) -> String {
        let dash = |s: Option<String>| s.unwrap_or_else(|| "-".into());
        let quote = |s: &str| s.replace('\\', "\\\\").replace('"', "\\x22");
        let mut out = String::new();
        for r in self.requests() {
            let at = self.state.wall_start + r.started;
            out.push_str(&format!(
                "{} 127.0.0.1 - - [{}] \"{} {} HTTP/1.1\" {} {} \"-\" \"{}\" \"{}\"\n",
                if r.host.is_empty() { "-" } else { &r.host },
                clf_time(at),
                r.method,
                quote(&r.path),
                dash(r.status.map(|s| s.to_string())),
                dash(r.bytes.map(|b| b.to_string())),
                quote(r.user_agent.as_deref().unwrap_or("-")),
                dash(r.retry_after),
            ));
        }
        out
    }

    /// Most requests to `host` that were ever in flight at once.
    pub fn max_in_flight(&self, host: &str) -> usize {
        self.state
            .max_in_flight
            .lock()
            .get(host)
            .copied()
            .unwrap_or(0)
    }

    /// Forgets the requests recorded so far.
    pub fn clear_records(&self) {
        self.state.records.lock().clear();
        self.state.max_in_flight.lock().clear();
    }

    /// A DNS resolver for reqwest that sends every name to 127.0.0.1, except
    /// the configured `dns_failures`, which fail.
    pub fn resolver(&self) -> Arc<Resolver> {
        Arc::new(Resolver {
            state: self.state.clone(),
        })
    }
}

/// See [`TestWeb::resolver`].
pub struct Resolver {
    state: Arc<State>,
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let fail = self.state.config.lock().dns_failures.contains(&host);
        Box::pin(async move {
            if fail {
                let e: Box<dyn std::error::Error + Send + Sync> = Box::new(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("testweb: no such host {host}"),
                ));
                return Err(e);
            }
            let addrs: reqwest::dns::Addrs =
                Box::new(std::iter::once(SocketAddr::from(([127, 0, 0, 1], 0))));
            Ok(addrs)
        })
    }
}

async fn accept_loop(
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

/// `[26/Nov/2026:03:59:31.123 +0000]`'s inside, from RFC 3339.
fn clf_time(at: std::time::SystemTime) -> String {
    let millis = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let iso = mannerly_time::UnixMillis(millis).to_rfc3339_millis();
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = iso[5..7].parse::<usize>().unwrap_or(1).clamp(1, 12);
    format!(
        "{}/{}/{}:{} +0000",
        &iso[8..10],
        MONTHS[month - 1],
        &iso[0..4],
        &iso[11..23]
    )
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

fn generated_page(
    host: &str,
    path: &str,
    spec_pages: u32,
    links: u32,
    g: &Generated,
) -> Option<String> {
    let n: u32 = path
        .strip_prefix("/p")?
        .strip_suffix(".html")?
        .parse()
        .ok()?;
    if n >= spec_pages.max(1) && path != "/" {
        return None;
    }
    let mut html =
        format!("<!DOCTYPE html><html><head><title>{host} page {n}</title></head><body>\n");
    let mut h: u64 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ host.len() as u64;
    for i in 0..links {
        h = h
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let target = (h >> 33) as u32 % spec_pages.max(1);
        if i < g.cross_host_links && g.count > 0 && host.ends_with(&g.suffix) {
            let other = (h >> 13) as u32 % g.count;
            html.push_str(&format!(
                "<a href=\"http://{}{}{}/p{target}.html\">x</a>\n",
                g.prefix, other, g.suffix
            ));
        } else {
            html.push_str(&format!("<a href=\"/p{target}.html\">p{target}</a>\n"));
        }
    }
    html.push_str("</body></html>\n");
    Some(html)
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
        generated(state, &spec, g, host, path, asked)
    };
    reply.latency_ms += spec.latency_ms;
    reply
}

/// What a request asked besides its path: its validators, and the
/// authority it named.
struct Asked {
    if_none_match: Option<String>,
    if_modified_since: Option<String>,
    authority: String,
}

impl Asked {
    fn of(req: &Request<Incoming>) -> Asked {
        let header = |name: hyper::header::HeaderName| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        Asked {
            if_none_match: header(hyper::header::IF_NONE_MATCH),
            if_modified_since: header(hyper::header::IF_MODIFIED_SINCE),
            authority: header(hyper::header::HOST).unwrap_or_default(),
        }
    }
}

/// A generated page (with its validators, 304 when they match), the
/// host's sitemap, or a 404.
fn generated(
    state: &State,
    spec: &HostSpec,
    g: &Generated,
    host: &str,
    path: &str,
    asked: &Asked,
) -> Reply {
    let version = |p: &str| version_of(state, host, p, spec.change_every_ms);
    if path == "/sitemap.xml" && spec.sitemap != SitemapLastmod::None {
        let origin = format!("http://{}", asked.authority);
        let now = UnixMillis::now();
        let xml = revisit::sitemap(spec.sitemap, &origin, spec.generated_pages, version, now);
        return Reply::text(xml).header("Content-Type", "application/xml");
    }
    let page = if path == "/" { "/p0.html" } else { path };
    let Some(html) = generated_page(host, page, spec.generated_pages, spec.generated_links, g)
        .filter(|_| spec.generated_links > 0 || spec.generated_pages > 0)
    else {
        return Reply::status(404).header("Content-Type", "text/plain");
    };
    let v = version(page);
    let validators = revisit::headers(spec.validators, host, page, v);
    let unchanged = revisit::not_modified(
        spec.validators,
        host,
        page,
        v,
        asked.if_none_match.as_deref(),
        asked.if_modified_since.as_deref(),
    );
    let mut reply = if unchanged {
        Reply::status(304)
    } else {
        Reply::text(format!("{html}<!-- version {v} -->\n")).header("Content-Type", "text/html")
    };
    reply.headers.extend(validators);
    reply
}

/// A generated page's version: the changes a test made, and those of its
/// schedule.
fn version_of(state: &State, host: &str, path: &str, every_ms: u64) -> u32 {
    let made = state
        .versions
        .lock()
        .get(&(host.to_owned(), path.to_owned()))
        .copied()
        .unwrap_or(0);
    let elapsed = u64::try_from(state.start.elapsed().as_millis()).unwrap_or(u64::MAX);
    made.saturating_add(revisit::scheduled(elapsed, every_ms))
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
