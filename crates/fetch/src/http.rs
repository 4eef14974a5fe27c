//! One robots.txt fetch over HTTP(S), with reqwest on rustls.

use std::collections::HashSet;
use std::error::Error as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mannerly_robots::DEFAULT_MAX_BYTES;

use crate::policy::{FetchOutcome, Hop, HttpResponse, NetworkError};
use crate::{FetchError, Origin};

/// Conditional-request validators from the cached copy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// The stored copy's ETag (sent as `If-None-Match`).
    pub etag: Option<String>,
    /// The stored copy's Last-Modified (sent as `If-Modified-Since`).
    pub last_modified: Option<String>,
}

/// Something that fetches an origin's robots.txt. [`HttpFetcher`] is the
/// real one; tests may script their own.
pub trait Fetcher: Send + Sync + 'static {
    /// Fetches an origin's robots.txt, conditionally when validators are given. Never fails: failures are outcomes.
    fn fetch(
        &self,
        origin: &Origin,
        validators: &Validators,
    ) -> impl Future<Output = FetchOutcome> + Send;
}

/// How to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchConfig {
    /// Sent as the User-Agent header.
    pub user_agent: String,
    /// Whole-request limit, body included (30 s), for each request of a
    /// redirect chain.
    pub timeout: Duration,
    /// The whole fetch's limit, every redirect hop and the body included
    /// (60 s): without it, six hops of 30 s each could hold one robots.txt
    /// fetch for three minutes.
    pub total_timeout: Duration,
    /// Connection set-up limit (10 s).
    pub connect_timeout: Duration,
    /// Bytes of (decoded) body to read; one more is read to learn that the
    /// body was longer, then the connection is dropped (500 KiB).
    pub max_bytes: usize,
    /// Redirect hops to follow (5, as RFC 9309 §2.3.1.2 asks at least).
    pub max_redirects: usize,
    /// Wait between a redirect and the next request when both go to the
    /// same host (zero by default). A crawler sets its per-host delay here,
    /// so the hops of one robots.txt fetch are spaced like any requests.
    pub redirect_gap: Duration,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            user_agent: concat!("mannerly/", env!("CARGO_PKG_VERSION")).to_owned(),
            timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            max_bytes: DEFAULT_MAX_BYTES,
            max_redirects: 5,
            redirect_gap: Duration::ZERO,
        }
    }
}

/// Paces the redirect hops of a fetch that leave the host it started on
/// (`a.example/robots.txt` redirected to `b.example/robots.txt`): such a
/// hop is a request to another host, so a crawler holds it to that host's
/// politeness like any request. Hops within the starting host are spaced
/// by [`FetchConfig::redirect_gap`] instead.
pub trait HopGate: Send + Sync {
    /// Resolves to `true` once a request to `to` (reached from the fetch
    /// that started at `from`) may go out, the gate having taken its
    /// host's slot; `false` when it must not be sent (the fetch then fails
    /// as a network error would, which fails closed).
    fn enter<'a>(
        &'a self,
        from: &'a url::Url,
        to: &'a url::Url,
    ) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>>;
    /// The request `enter` let through ended: its status, or `None` when no
    /// answer came, `latency` after it was sent. Called once per `true`.
    fn leave(&self, from: &url::Url, to: &url::Url, status: Option<u16>, latency: Duration);
}

/// Why a hook stopped a request from going out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not sent: {0}")]
pub struct NotSent(pub String);

/// Told of every request just before it is sent (robots.txt and each of
/// its redirect hops): what a crawler keeping a record of its requests
/// (its evidence) writes them down by. Called only for requests that then
/// go out, gates passed; a hook that answers `Err` stops the request (a
/// crawler whose record of a request cannot be written does not send
/// it), which then fails as a network error would.
pub trait SendHook: Send + Sync {
    /// `url` is about to be requested: `Err` keeps it from going.
    fn sending(&self, url: &url::Url) -> Result<(), NotSent>;

    /// The request to `url` was answered (`status`; `None`: no answer)
    /// after `took`; `retry_after` says whether the answer asked for a
    /// wait. Called once per request `sending` was told of.
    fn answered(&self, _url: &url::Url, _status: Option<u16>, _took: Duration, _retry_after: bool) {
    }

    /// The header fields the request to `url` carries beyond the
    /// client's own (validators, a signature), as it goes: what an
    /// archive of the request must hold. Called after `sending` allowed
    /// it.
    fn fields(&self, _url: &url::Url, _fields: &[(String, String)]) {}
}

/// Signs each request just before it goes (a crawler's Web Bot Auth key),
/// so robots.txt and its redirect hops are signed as pages are.
pub trait RequestSigner: Send + Sync {
    /// Adds the signature's header fields to `request`; `Err` keeps it
    /// from going.
    fn sign(&self, request: &mut reqwest::Request) -> Result<(), NotSent>;
}

/// Fetches robots.txt with reqwest.
#[derive(Clone)]
pub struct HttpFetcher {
    client: reqwest::Client,
    config: FetchConfig,
    gate: Option<Arc<dyn HopGate>>,
    hooks: Vec<Arc<dyn SendHook>>,
    signer: Option<Arc<dyn RequestSigner>>,
    /// Refuse IP-literal hosts that [`crate::guard::is_forbidden`] names
    /// (names are checked by the client's resolver).
    public_only: bool,
}

impl std::fmt::Debug for HttpFetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpFetcher")
            .field("config", &self.config)
            .field("gate", &self.gate.is_some())
            .finish_non_exhaustive()
    }
}

impl HttpFetcher {
    /// A fetcher with its own client.
    pub fn new(config: FetchConfig) -> Result<Self, FetchError> {
        check_user_agent(&config.user_agent)?;
        let client = Self::client_builder(&config)
            .build()
            .map_err(FetchError::Client)?;
        Ok(HttpFetcher::with_client(client, config))
    }

    /// A fetcher for a server that fetches on strangers' behalf: it never
    /// connects to a loopback, private, link-local or reserved address, on
    /// any hop of a redirect chain (names resolve through
    /// [`crate::guard::PublicResolver`]; IP literals are checked before
    /// each request). A refused hop fails as a connection failure would.
    pub fn public_only(config: FetchConfig) -> Result<Self, FetchError> {
        check_user_agent(&config.user_agent)?;
        let client = Self::client_builder(&config)
            .dns_resolver(Arc::new(crate::guard::PublicResolver))
            .build()
            .map_err(FetchError::Client)?;
        Ok(Self::with_client(client, config).refuse_private_literals())
    }

    /// Refuses every hop whose host is a loopback, private, link-local or
    /// reserved IP literal (a literal never reaches the resolver; names are
    /// the client's resolver's job, see [`public_only`](Self::public_only)).
    pub fn refuse_private_literals(mut self) -> Self {
        self.public_only = true;
        self
    }

    /// The client settings this crate relies on (no automatic redirects or
    /// re-sends, decompression on, timeouts, User-Agent). A client without
    /// decompression works too: this crate then decodes `gzip` and
    /// `deflate` bodies itself. Add a resolver or root
    /// certificates, then pass the client to [`with_client`](Self::with_client).
    pub fn client_builder(config: &FetchConfig) -> reqwest::ClientBuilder {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(config.user_agent.clone())
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .gzip(true)
            .brotli(true)
            .deflate(true)
            // No quiet re-sends of HTTP/2-refused requests: each fetch is
            // one request, and a failure is the caller's to pace.
            .retry(reqwest::retry::never())
    }

    /// A fetcher over a client built from [`client_builder`](Self::client_builder).
    pub fn with_client(client: reqwest::Client, config: FetchConfig) -> Self {
        HttpFetcher {
            client,
            config,
            gate: None,
            hooks: Vec::new(),
            signer: None,
            public_only: false,
        }
    }

    /// Signs every request with `signer` before it goes.
    pub fn with_signer(mut self, signer: Arc<dyn RequestSigner>) -> Self {
        self.signer = Some(signer);
        self
    }

    /// Tells `hook` of every request just before it is sent, and of its
    /// answer (hooks add up: each is told).
    pub fn with_hook(mut self, hook: Arc<dyn SendHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Holds every hop to another host to `gate` (see [`HopGate`]).
    pub fn with_gate(mut self, gate: Arc<dyn HopGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// One robots.txt fetch: redirects followed by hand (conditional
    /// headers on every hop), the body read up to the limit.
    async fn run(&self, origin: &Origin, validators: &Validators) -> FetchOutcome {
        let total = self.config.total_timeout;
        let began = Instant::now();
        let outcome = match tokio::time::timeout(total, self.run_inner(origin, validators)).await {
            Ok(outcome) => outcome,
            Err(_) => FetchOutcome::Network {
                error: NetworkError::Timeout,
                detail: deadline_detail(total),
                redirects: Vec::new(),
            },
        };
        stall_checked(outcome, began.elapsed(), &self.config)
    }

    async fn run_inner(&self, origin: &Origin, validators: &Validators) -> FetchOutcome {
        let Ok(url) = url::Url::parse(&origin.robots_url()) else {
            return FetchOutcome::Network {
                error: NetworkError::Other,
                detail: format!("cannot build a URL for {origin}"),
                redirects: Vec::new(),
            };
        };
        match self.follow(&url, Some(validators), |_| false).await {
            GetOutcome::Response {
                final_url,
                redirects,
                response,
            } => {
                let status = response.status().as_u16();
                let headers = header_pairs(response.headers());
                match read_capped(response, self.config.max_bytes).await {
                    Ok((body, body_cut)) => FetchOutcome::Response {
                        response: HttpResponse {
                            status,
                            headers,
                            body,
                            body_cut,
                            url: final_url.to_string(),
                        },
                        redirects,
                    },
                    Err(BodyError::Http(e)) => FetchOutcome::Network {
                        error: classify(&e),
                        detail: chain(&e),
                        redirects,
                    },
                    Err(BodyError::Coding(detail)) => FetchOutcome::Network {
                        error: NetworkError::Other,
                        detail,
                        redirects,
                    },
                }
            }
            GetOutcome::TooManyRedirects { redirects, is_loop } => {
                FetchOutcome::TooManyRedirects { redirects, is_loop }
            }
            GetOutcome::Network {
                error,
                detail,
                redirects,
            } => FetchOutcome::Network {
                error,
                detail,
                redirects,
            },
            GetOutcome::Stopped { redirects, .. } => FetchOutcome::Network {
                error: NetworkError::Other,
                detail: "redirect not followed".into(),
                redirects,
            },
        }
    }
}

/// The result of [`HttpFetcher::get`]: a response ready to stream, or why
/// there is none.
#[derive(Debug)]
pub enum GetOutcome {
    /// A response, its body not read yet.
    Response {
        /// The URL that answered, after redirects.
        final_url: url::Url,
        /// The redirects followed.
        redirects: Vec<Hop>,
        /// The response, to stream.
        response: reqwest::Response,
    },
    /// More than the redirect limit, or a loop.
    TooManyRedirects {
        /// The redirects followed.
        redirects: Vec<Hop>,
        /// Whether a URL came back.
        is_loop: bool,
    },
    /// A redirect pointed at a URL the caller asked not to fetch.
    Stopped {
        /// The URL not fetched.
        at: url::Url,
        /// The redirects followed before it.
        redirects: Vec<Hop>,
    },
    /// No answer: the network failed.
    Network {
        /// Which kind of failure.
        error: NetworkError,
        /// The underlying error, for people.
        detail: String,
        /// The redirects followed before the failure.
        redirects: Vec<Hop>,
    },
}

impl HttpFetcher {
    /// GETs any URL, following up to `max_redirects` hops by hand (so the
    /// chain and the final URL are known), and hands back the response
    /// unread, for the caller to stream with its own limits.
    pub async fn get(&self, url: &url::Url) -> GetOutcome {
        self.get_unless(url, |_| false).await
    }

    /// Like [`get`](Self::get), but a redirect to a URL for which `stop`
    /// is true is not followed ([`GetOutcome::Stopped`]): a walker that
    /// already visited the target saves the request.
    /// The redirect chain is held to [`FetchConfig::total_timeout`]; the
    /// body, read by the caller, to the last request's `timeout`.
    pub async fn get_unless(&self, url: &url::Url, stop: impl Fn(&url::Url) -> bool) -> GetOutcome {
        let total = self.config.total_timeout;
        match tokio::time::timeout(total, self.follow(url, None, stop)).await {
            Ok(outcome) => outcome,
            Err(_) => GetOutcome::Network {
                error: NetworkError::Timeout,
                detail: deadline_detail(total),
                redirects: Vec::new(),
            },
        }
    }

    /// The redirect loop both kinds of fetch share: up to `max_redirects`
    /// hops by hand, loops detected, `stop` consulted before each hop.
    async fn follow(
        &self,
        url: &url::Url,
        validators: Option<&Validators>,
        stop: impl Fn(&url::Url) -> bool,
    ) -> GetOutcome {
        let start = url.clone();
        let mut url = url.clone();
        let mut redirects = Vec::new();
        let mut seen = HashSet::new();
        seen.insert(url.clone());
        loop {
            let resp = match self.send_one(&start, &url, validators).await {
                Ok(r) => r,
                Err((error, detail)) => {
                    return GetOutcome::Network {
                        error,
                        detail,
                        redirects,
                    }
                }
            };
            let Some(next) = redirect_target(&resp, &url) else {
                return GetOutcome::Response {
                    final_url: url,
                    redirects,
                    response: resp,
                };
            };
            redirects.push(Hop {
                url: url.to_string(),
                status: resp.status().as_u16(),
                headers: header_pairs(resp.headers()),
            });
            let is_loop = !seen.insert(next.clone());
            if is_loop || redirects.len() > self.config.max_redirects {
                return GetOutcome::TooManyRedirects { redirects, is_loop };
            }
            if stop(&next) {
                return GetOutcome::Stopped {
                    at: next,
                    redirects,
                };
            }
            if !self.config.redirect_gap.is_zero() && next.host_str() == url.host_str() {
                tokio::time::sleep(self.config.redirect_gap).await;
            }
            url = next;
        }
    }

    /// One request of a chain that started at `start`: refused before it
    /// is sent when it names a private address (unless allowed), or when
    /// a hop to another host cannot pass that host's gate.
    async fn send_one(
        &self,
        start: &url::Url,
        url: &url::Url,
        validators: Option<&Validators>,
    ) -> Result<reqwest::Response, (NetworkError, String)> {
        if let Some(refused) = crate::guard::forbidden_literal(url).filter(|_| self.public_only) {
            return Err((NetworkError::Connect, refused.to_string()));
        }
        let gate = self
            .gate
            .as_ref()
            .filter(|_| url.host_str() != start.host_str());
        if let Some(g) = gate {
            if !g.enter(start, url).await {
                let why = format!(
                    "the redirect to {url} was not sent: its host could not be fetched politely"
                );
                return Err((NetworkError::Other, why));
            }
        }
        let sent = Instant::now();
        let mut req = self.client.get(url.clone());
        if let Some(v) = validators {
            if let Some(etag) = &v.etag {
                req = req.header(reqwest::header::IF_NONE_MATCH, etag);
            }
            if let Some(lm) = &v.last_modified {
                req = req.header(reqwest::header::IF_MODIFIED_SINCE, lm);
            }
        }
        let refused = |why: String| {
            if let Some(g) = gate {
                g.leave(start, url, None, sent.elapsed());
            }
            Err((NetworkError::Other, why))
        };
        let mut request = match req.build() {
            Ok(r) => r,
            Err(e) => return refused(chain(&e)),
        };
        if let Some(s) = &self.signer {
            if let Err(e) = s.sign(&mut request) {
                return refused(e.to_string());
            }
        }
        for h in &self.hooks {
            if let Err(e) = h.sending(url) {
                return refused(e.to_string());
            }
        }
        let fields = header_pairs(request.headers());
        for h in &self.hooks {
            h.fields(url, &fields);
        }
        let answer = self.client.execute(request).await;
        for h in &self.hooks {
            let status = answer.as_ref().ok().map(|r| r.status().as_u16());
            let retry_after = answer
                .as_ref()
                .is_ok_and(|r| r.headers().contains_key(reqwest::header::RETRY_AFTER));
            h.answered(url, status, sent.elapsed(), retry_after);
        }
        if let Some(g) = gate {
            let status = answer.as_ref().ok().map(|r| r.status().as_u16());
            g.leave(start, url, status, sent.elapsed());
        }
        answer.map_err(|e| (classify(&e), chain(&e)))
    }
}

/// Where a redirect response sends the request next: an http or https
/// `Location`, resolved against `url`; `None` for any other response (a
/// 304 is not a redirect).
fn redirect_target(resp: &reqwest::Response, url: &url::Url) -> Option<url::Url> {
    let status = resp.status().as_u16();
    if !(300..400).contains(&status) || status == 304 {
        return None;
    }
    resp.headers()
        .get(reqwest::header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .and_then(|l| url.join(l).ok())
        .filter(|u| u.scheme() == "http" || u.scheme() == "https")
}

impl Fetcher for HttpFetcher {
    fn fetch(
        &self,
        origin: &Origin,
        validators: &Validators,
    ) -> impl Future<Output = FetchOutcome> + Send {
        self.run(origin, validators)
    }
}

/// A deadline this far behind when its timer fired was missed because
/// this process was not running, not because the site was slow: a timer
/// runs late by milliseconds, not seconds, in a process that runs.
pub const STALL_SLACK: Duration = Duration::from_secs(1);

/// Whether a timeout that fired `elapsed` after the start of a request
/// with this `deadline` fired over [`STALL_SLACK`] late: the process was
/// stopped (SIGSTOP, a suspended VM, starvation) while the request was
/// out, and whether the site answered in time is unknown. The one test of
/// a stall, for robots.txt here and for a crawler's pages.
pub fn stalled(elapsed: Duration, deadline: Duration) -> bool {
    elapsed.saturating_sub(deadline) > STALL_SLACK
}

/// A robots.txt timeout that [`stalled`] becomes [`NetworkError::Stalled`].
/// The deadline: the request's `timeout` with no redirect, else the
/// fetch's `total_timeout` (a hop may wait its turn at another host's
/// gate, which no per-request budget bounds).
pub(crate) fn stall_checked(
    mut outcome: FetchOutcome,
    elapsed: Duration,
    config: &FetchConfig,
) -> FetchOutcome {
    if let FetchOutcome::Network {
        error,
        detail,
        redirects,
    } = &mut outcome
    {
        let deadline = if redirects.is_empty() {
            config.timeout.min(config.total_timeout)
        } else {
            config.total_timeout
        };
        if *error == NetworkError::Timeout && stalled(elapsed, deadline) {
            *error = NetworkError::Stalled;
            *detail = format!(
                "its {:.1} s deadline passed {:.1} s before this process ran again ({detail})",
                deadline.as_secs_f64(),
                elapsed.saturating_sub(deadline).as_secs_f64()
            );
        }
    }
    outcome
}

fn deadline_detail(total: Duration) -> String {
    format!(
        "no complete answer within the fetch's total deadline of {} s (redirects included)",
        total.as_secs_f64()
    )
}

/// Header names (lower-case) and values, as text (a value that is not
/// UTF-8 is read lossily).
pub fn header_pairs(headers: &reqwest::header::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// Reads at most `max + 1` decoded bytes; then stops (dropping the
/// response closes the connection, so the rest is never downloaded).
///
/// A client that decodes (see [`HttpFetcher::client_builder`]) removes
/// `Content-Encoding`; one that does not (the crawler shares its page
/// client, which keeps bodies as sent, so robots.txt rides the connection
/// its host's pages use) leaves it, and the body is decoded here: `gzip`
/// and `deflate`, the codings a server may send unasked in practice.
async fn read_capped(
    mut resp: reqwest::Response,
    max: usize,
) -> Result<(Vec<u8>, bool), BodyError> {
    let limit = max.saturating_add(1);
    let success = resp.status().is_success();
    let coding = resp
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .map(|v| {
            String::from_utf8_lossy(v.as_bytes())
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|c| !c.is_empty() && c != "identity");
    let mut body = Vec::new();
    let mut cut = false;
    while let Some(chunk) = resp.chunk().await.map_err(BodyError::Http)? {
        let room = limit - body.len();
        if chunk.len() >= room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    match coding {
        None => Ok((body, cut)),
        // An empty body is empty in any coding (servers send the header on
        // empty error pages).
        Some(_) if body.is_empty() => Ok((body, cut)),
        Some(coding) => match decode_capped(&coding, &body, cut, limit) {
            // Only a success's body is read as rules; another status
            // decides alone, so a body it cannot decode is left out rather
            // than turning, say, a 404 into a failure.
            Err(BodyError::Coding(_)) if !success => Ok((Vec::new(), false)),
            other => other,
        },
    }
}

/// A body that could not be read.
#[derive(Debug)]
enum BodyError {
    /// The transfer failed.
    Http(reqwest::Error),
    /// The body is in a coding this crate does not read, or is not valid
    /// in the coding it names.
    Coding(String),
}

/// Decodes a `Content-Encoding` body into at most `limit` bytes (so a
/// small body that inflates without end costs no more than the limit).
/// `cut`: the encoded bytes stopped at the limit, so the stream may end
/// early; what decoded is kept and marked cut.
fn decode_capped(
    coding: &str,
    encoded: &[u8],
    cut: bool,
    limit: usize,
) -> Result<(Vec<u8>, bool), BodyError> {
    use std::io::Read;
    let read = |mut r: Box<dyn Read + '_>| {
        let mut out = Vec::new();
        let res = (&mut r).take(limit as u64).read_to_end(&mut out);
        (out, res)
    };
    let (out, res) = match coding {
        "gzip" | "x-gzip" => read(Box::new(flate2::read::MultiGzDecoder::new(encoded))),
        // RFC 9110 says zlib; some servers send raw deflate. A zlib stream
        // that decoded something before it broke off is a cut one.
        "deflate" => match read(Box::new(flate2::read::ZlibDecoder::new(encoded))) {
            (out, Ok(n)) => (out, Ok(n)),
            (out, Err(e)) if cut && !out.is_empty() => (out, Err(e)),
            _ => read(Box::new(flate2::read::DeflateDecoder::new(encoded))),
        },
        other => {
            return Err(BodyError::Coding(format!(
            "the body is in Content-Encoding {other:?}, which was not asked for and cannot be read"
        )))
        }
    };
    let over = out.len() >= limit;
    match res {
        Ok(_) => Ok((out, cut || over)),
        // The encoded bytes were cut at the limit: what decoded is kept.
        Err(_) if cut => Ok((out, true)),
        Err(e) => Err(BodyError::Coding(format!(
            "the body is not valid {coding}: {e}"
        ))),
    }
}

/// A reqwest error with its causes, each once (TLS and connection errors
/// keep the useful part in the source chain): `error sending request: ...:
/// connection refused`.
pub fn chain(e: &reqwest::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        src = s.source();
    }
    parts.join(": ")
}

/// Whether an io::Error wraps (possibly through more io::Errors, which
/// `source()` skips) a rustls error.
fn wraps_rustls(io: &std::io::Error) -> bool {
    match io.get_ref() {
        Some(inner) => {
            inner.is::<rustls::Error>()
                || inner
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(wraps_rustls)
        }
        None => false,
    }
}

/// Maps a reqwest error to the kind of network failure.
pub fn classify(e: &reqwest::Error) -> NetworkError {
    if e.is_timeout() {
        return NetworkError::Timeout;
    }
    let text = chain(e).to_ascii_lowercase();
    let mut src: Option<&(dyn std::error::Error + 'static)> = e.source();
    while let Some(s) = src {
        if s.downcast_ref::<rustls::Error>().is_some() {
            return NetworkError::Tls;
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if wraps_rustls(io) {
                return NetworkError::Tls;
            }
            match io.kind() {
                std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::ConnectionAborted
                | std::io::ErrorKind::BrokenPipe => return NetworkError::Reset,
                std::io::ErrorKind::UnexpectedEof => return NetworkError::TruncatedBody,
                std::io::ErrorKind::TimedOut => return NetworkError::Timeout,
                _ => {}
            }
        }
        src = s.source();
    }
    if text.contains("dns error")
        || text.contains("failed to lookup")
        || text.contains("no such host")
    {
        NetworkError::Dns
    } else if text.contains("tls") || text.contains("certificate") || text.contains("handshake") {
        NetworkError::Tls
    } else if e.is_connect() {
        NetworkError::Connect
    } else if e.is_body() || e.is_decode() {
        NetworkError::TruncatedBody
    } else if text.contains("connection closed before message completed")
        || text.contains("connection reset")
    {
        NetworkError::Reset
    } else {
        NetworkError::Other
    }
}

/// Refuses a User-Agent no header can hold (a control character other
/// than tab), before the client builder fails on it with a vaguer error.
fn check_user_agent(agent: &str) -> Result<(), FetchError> {
    if mannerly_robots::unsendable_char(agent).is_some() {
        return Err(FetchError::UserAgent {
            agent: agent.to_owned(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{decode_capped, stall_checked, BodyError, FetchConfig, STALL_SLACK};
    use crate::policy::{FetchOutcome, Hop, NetworkError};
    use std::io::Write;
    use std::time::Duration;

    #[test]
    fn a_user_agent_no_header_can_hold_is_refused_by_name() {
        for bad in ["Bot/1.0\nX-Evil: 1", "Bot/1.0\r", "Bot\u{7f}", "\0"] {
            let config = FetchConfig {
                user_agent: bad.into(),
                ..FetchConfig::default()
            };
            let err = super::HttpFetcher::new(config.clone())
                .err()
                .map(|e| e.to_string());
            let said = err.unwrap_or_default();
            assert!(said.contains(&format!("{bad:?}")), "{bad:?}: {said}");
            assert!(super::HttpFetcher::public_only(config).is_err());
        }
        let tab = FetchConfig {
            user_agent: "Bot/1.0\t(+https://example.com/bot) caf\u{e9}".into(),
            ..FetchConfig::default()
        };
        assert!(super::HttpFetcher::new(tab).is_ok());
    }

    fn failed(error: NetworkError, hops: usize) -> FetchOutcome {
        let hop = Hop {
            url: "http://a.test/robots.txt".into(),
            status: 301,
            headers: Vec::new(),
        };
        FetchOutcome::Network {
            error,
            detail: "operation timed out".into(),
            redirects: vec![hop; hops],
        }
    }

    fn kind(o: &FetchOutcome) -> Option<NetworkError> {
        match o {
            FetchOutcome::Network { error, .. } => Some(*error),
            _ => None,
        }
    }

    #[test]
    fn a_timeout_that_fired_seconds_late_is_the_crawlers_stall() {
        let config = FetchConfig {
            timeout: Duration::from_millis(1_500),
            total_timeout: Duration::from_secs(60),
            ..FetchConfig::default()
        };
        let just_late = config.timeout + STALL_SLACK;
        let stopped = Duration::from_millis(4_369);
        let cases = [
            // A timer a little late (a busy machine) is the site's timeout.
            (
                failed(NetworkError::Timeout, 0),
                just_late,
                NetworkError::Timeout,
            ),
            // Seconds past the deadline: the process was not running.
            (
                failed(NetworkError::Timeout, 0),
                stopped,
                NetworkError::Stalled,
            ),
            // After redirects, only the whole fetch's deadline bounds it.
            (
                failed(NetworkError::Timeout, 1),
                stopped,
                NetworkError::Timeout,
            ),
            (
                failed(NetworkError::Timeout, 1),
                config.total_timeout + 2 * STALL_SLACK,
                NetworkError::Stalled,
            ),
            // Only timeouts: a reset is the site's whenever it came.
            (failed(NetworkError::Reset, 0), stopped, NetworkError::Reset),
        ];
        for (outcome, elapsed, want) in cases {
            let got = stall_checked(outcome, elapsed, &config);
            assert_eq!(kind(&got), Some(want), "{elapsed:?}: {got:?}");
            if want == NetworkError::Stalled {
                let FetchOutcome::Network { detail, .. } = &got else {
                    unreachable!()
                };
                assert!(detail.contains("before this process ran again"), "{detail}");
            }
        }
    }

    fn zlib(text: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(text).expect("zlib");
        z.finish().expect("zlib")
    }

    #[test]
    fn a_cut_zlib_body_keeps_what_decoded() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("Disallow: /{i}\n").into_bytes())
            .collect();
        let z = zlib(&text);
        let (out, cut) = decode_capped("deflate", &z[..z.len() / 2], true, 1 << 20).expect("kept");
        assert!(cut);
        assert!(
            !out.is_empty() && text.starts_with(&out),
            "a prefix of the text"
        );
    }

    #[test]
    fn a_whole_body_decodes_and_the_limit_cuts_it() {
        let text = b"User-agent: *\nDisallow: /private/\n".repeat(100);
        let (out, cut) = decode_capped("deflate", &zlib(&text), false, 1 << 20).expect("zlib");
        assert_eq!((out.as_slice(), cut), (text.as_slice(), false));
        let (out, cut) = decode_capped("deflate", &zlib(&text), false, 100).expect("zlib");
        assert_eq!((out.as_slice(), cut), (&text[..100], true));
    }

    #[test]
    fn a_corrupt_or_unknown_body_is_an_error_naming_the_coding() {
        for (coding, says) in [("gzip", "not valid gzip"), ("zstd", "\"zstd\"")] {
            match decode_capped(coding, b"not compressed", false, 1 << 20) {
                Err(BodyError::Coding(detail)) => assert!(detail.contains(says), "{detail}"),
                other => panic!("{coding}: {other:?}"),
            }
        }
    }
}
