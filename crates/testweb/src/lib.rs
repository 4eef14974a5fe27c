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

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;

mod config;
mod config_check;
mod error;
mod generated;
mod refusing;
mod revisit;
mod server;
mod state;
mod tls;

pub use config::{Body, Generated, HostSpec, Reply, WebConfig};
pub use config_check::MAX_PORTS;
pub use error::TestWebError;
pub use refusing::RefusingH2;
pub use revisit::{SitemapLastmod, Validators};
use server::accept_loop;
pub use server::gzip_bombs_made;
use state::{clf_time, State};
pub use state::{RequestRecord, ACCESS_LOG_FORMAT};

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

    /// The time since the server started: the clock of
    /// [`RequestRecord::started`] and `finished`.
    pub fn elapsed(&self) -> Duration {
        self.state.start.elapsed()
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
