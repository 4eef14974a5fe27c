//! The crawl loop: one task owns the frontier and makes every decision;
//! fetches run concurrently and report back over a channel.
//!
//! ```text
//!   seeds ─► frontier.enqueue ─┐
//!                              ▼
//!   ┌──────────── frontier.next(now) ────────────┐
//!   │ Fetch(robots.txt) ─► RobotsCache::decision │  robots_known / robots_unavailable,
//!   │                                            │  then complete (a request was made)
//!   │                                            │  or cancel (the cache answered)
//!   │ Fetch(page) ─► robots check ─► HTTP GET ───┤  complete / requeue (retry) / discard,
//!   │                                            │  WARC, log, links ─► enqueue
//!   │ Wait { until } ─► sleep until then, or until a fetch reports back
//!   │ Busy ─► wait for a fetch to report back
//!   └ Empty ─► done when nothing is in flight
//! ```
//!
//! Invariants: the engine never sleeps for pacing of its own and has no
//! rate limiter: every delay is the frontier's `Wait`. Every release is
//! completed, requeued, discarded or cancelled exactly once.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mannerly_fetch::policy::{Access, Decision, FetchOutcome};
use mannerly_fetch::{
    CacheConfig, Clock, FetchConfig, Fetcher, HopGate, HttpFetcher, Origin, RobotsCache, Store,
    SystemClock, Validators,
};
use mannerly_polite::controller::{
    Config as PoliteConfig, CrawlDelayProfile, Outcome, Politeness, RobotsPacing,
};
use mannerly_polite::frontier::{
    Admission, Begin, Frontier, FrontierConfig, FrontierError, Kind, LocalFrontier, Next, Offer,
    Released, Stats,
};
use mannerly_polite::key::KeyError;
use mannerly_time::UnixMillis;
use tokio::sync::mpsc;

use crate::links;
use crate::normalize::{CrawlUrl, Scope, ScopeMode};
use crate::robots_store::FjallStore;
use crate::tag::Tag;
use crate::warc::{Exchange, WarcError, WarcWriter};

/// Adjusts the HTTP clients (tests add a resolver and a test CA).
pub type ClientHook = Arc<dyn Fn(reqwest::ClientBuilder) -> reqwest::ClientBuilder + Send + Sync>;

/// What a crawl does, and its bounds.
#[derive(Clone)]
pub struct CrawlConfig {
    /// The User-Agent header.
    pub user_agent: String,
    /// The product token matched against robots.txt.
    pub agent: String,
    /// Requests in flight across all hosts (64).
    pub concurrency: usize,
    /// Smallest delay between two requests to a host, start to start (1 s).
    pub min_delay: Duration,
    /// How Crawl-delay is read.
    pub profile: CrawlDelayProfile,
    /// Body bytes kept per response (8 MiB); a longer body is cut and
    /// marked truncated.
    pub max_bytes: usize,
    /// Retries of a 429, 5xx or timeout (2).
    pub retries: u8,
    /// Redirect hops followed per chain (5).
    pub max_redirects: u8,
    /// The crawl ends when every URL left waits longer than this (600 s).
    pub give_up_after: Duration,
    /// Which hosts to enter.
    pub scope: ScopeMode,
    /// Only URLs matching one of these (regex crate syntax).
    pub include: Vec<String>,
    /// No URL matching one of these.
    pub exclude: Vec<String>,
    /// Links followed from a seed.
    pub max_depth: Option<u32>,
    /// Pages fetched in all (a resumed crawl counts what it fetched before).
    pub max_pages: Option<u64>,
    /// Pages fetched per host.
    pub max_pages_per_host: Option<u64>,
    /// Follow `rel=nofollow` links.
    pub follow_rel_nofollow: bool,
    /// Media types kept (`text/html`, `image/*`); empty keeps every type.
    /// A 2xx page of another type is not downloaded past its head, not
    /// stored, and logged as such (robots.txt and sitemaps are always
    /// kept).
    pub content_types: Vec<String>,
    /// Rotate WARC files after this many bytes (1 GiB).
    pub warc_max_size: u64,
    /// Whole-request limit (30 s).
    pub timeout: Duration,
    /// Connection set-up limit (10 s).
    pub connect_timeout: Duration,
    /// Until the response head arrives (15 s).
    pub first_byte_timeout: Duration,
    /// A proxy for every request (`HTTP_PROXY` and friends are read
    /// otherwise).
    pub proxy: Option<String>,
    /// Adjusts the HTTP clients.
    pub client_hook: Option<ClientHook>,
    /// Queue the sitemaps robots.txt names (true).
    pub sitemaps: bool,
    /// Sign every request with Web Bot Auth: the key and the URL of the
    /// crawler's key directory (`Signature-Agent`).
    pub signing: Option<(mannerly_botauth::KeyPair, String)>,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            user_agent: format!(
                "mannerly/{} (+https://example.invalid/mannerly)",
                env!("CARGO_PKG_VERSION")
            ),
            agent: "mannerly".into(),
            concurrency: 64,
            min_delay: Duration::from_secs(1),
            profile: CrawlDelayProfile::default(),
            max_bytes: 8 << 20,
            retries: 2,
            max_redirects: 5,
            give_up_after: Duration::from_secs(600),
            scope: ScopeMode::Host,
            include: Vec::new(),
            exclude: Vec::new(),
            max_depth: None,
            max_pages: None,
            max_pages_per_host: None,
            follow_rel_nofollow: false,
            content_types: Vec::new(),
            warc_max_size: 1 << 30,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(15),
            proxy: None,
            client_hook: None,
            sitemaps: true,
            signing: None,
        }
    }
}

/// Why a crawl could not run or go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrawlError {
    /// No seed is a crawlable URL.
    #[error("no usable seed: {0}")]
    NoSeeds(String),
    /// An `--include` or `--exclude` pattern does not compile.
    #[error("bad pattern: {0}")]
    Pattern(#[from] regex::Error),
    /// The frontier failed.
    #[error(transparent)]
    Frontier(#[from] FrontierError),
    /// Writing WARC failed.
    #[error(transparent)]
    Warc(#[from] WarcError),
    /// The output directory or the log.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An HTTP client could not be built (proxy URL, TLS).
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// The fleet's shared crawl cannot be used as asked.
    #[error("{0}")]
    Fleet(String),
}

/// The settings that make a crawl what it is (its seeds and scope), kept
/// where its frontier is (`out/crawl.json`, or the fleet's store), so a
/// resumed crawl or a worker that joins goes on with the same scope.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CrawlSettings {
    /// Every seed given so far.
    pub seeds: Vec<String>,
    /// Which hosts the crawl may enter.
    pub scope: ScopeMode,
    /// Only URLs matching one of these.
    pub include: Vec<String>,
    /// No URL matching one of these.
    pub exclude: Vec<String>,
    /// Links followed from a seed.
    pub max_depth: Option<u32>,
}

impl CrawlSettings {
    /// Adds `seeds` not already there (a set, not a scan per seed: a seed
    /// file can hold millions).
    pub fn add_seeds(&mut self, seeds: &[String]) {
        let mut known: std::collections::HashSet<&str> =
            self.seeds.iter().map(String::as_str).collect();
        let added: Vec<String> = seeds
            .iter()
            .filter(|u| known.insert(u.as_str()))
            .cloned()
            .collect();
        drop(known);
        self.seeds.extend(added);
    }
}

/// How a crawl ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Nothing was left to fetch.
    Done,
    /// Every URL left waits longer than `give_up_after`.
    GaveUp,
    /// `max_pages` was reached.
    MaxPages,
    /// Stopped from outside (Ctrl-C).
    Stopped,
}

/// What a crawl did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    /// How it ended.
    pub ending: Ending,
    /// Page responses by status.
    pub pages_by_status: BTreeMap<u16, u64>,
    /// Page fetches that got no response.
    pub page_errors: u64,
    /// robots.txt requests made.
    pub robots_requests: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// URLs not fetched, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Retries scheduled.
    pub retries: u64,
    /// URLs still queued at the end (deferred: they stay in the store).
    pub deferred: u64,
    /// Deferred URLs by what holds them back (when the crawl gave up on
    /// them; each is in the log with its host's full reason).
    pub deferred_by_reason: BTreeMap<String, u64>,
    /// Origins whose robots.txt was unavailable at the end, with why.
    pub unavailable: BTreeMap<String, String>,
    /// Hosts that answered.
    pub hosts: u64,
    /// Entries read from sitemaps.
    pub sitemap_entries: u64,
    /// WARC records written.
    pub warc_records: u64,
    /// Seconds the crawl ran.
    pub seconds: f64,
}

/// A snapshot for a progress display.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Pages fetched.
    pub pages: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Requests in flight.
    pub in_flight: usize,
    /// URLs queued.
    pub queued: u64,
    /// Fetch errors.
    pub errors: u64,
    /// Seconds since the start.
    pub seconds: f64,
    /// Origins whose robots.txt is unavailable (their pages wait).
    pub hosts_blocked: usize,
}

/// A robots.txt fetch the cache made, as the recording fetcher saw it.
struct RobotsFetch {
    /// Its latency counts to the end of the fetch (see `paced`).
    outcome: Outcome,
    done_at: Instant,
    /// The network error, when there was no response.
    error: Option<String>,
}

/// Wraps the robots.txt fetcher: archives every fetch and tells the engine
/// whether the cache made a request.
struct RecordingFetcher {
    inner: HttpFetcher,
    user_agent: String,
    made: Arc<Mutex<HashMap<Origin, RobotsFetch>>>,
    warc: Arc<Mutex<WarcWriter>>,
}

impl Fetcher for RecordingFetcher {
    async fn fetch(&self, origin: &Origin, validators: &Validators) -> FetchOutcome {
        let start = Instant::now();
        let date = UnixMillis::now();
        let outcome = self.inner.fetch(origin, validators).await;
        let latency = start.elapsed().as_millis() as u64;
        let polite = match &outcome {
            FetchOutcome::Response { response, .. } => Outcome::Status {
                status: response.status,
                latency,
                retry_after: response.header("retry-after").map(str::to_owned),
            },
            FetchOutcome::TooManyRedirects { redirects, .. } => Outcome::Status {
                status: redirects.last().map_or(310, |h| h.status),
                latency,
                retry_after: None,
            },
            FetchOutcome::Network { .. } => Outcome::Failed { latency },
        };
        let hops = match &outcome {
            FetchOutcome::Response { redirects, .. }
            | FetchOutcome::TooManyRedirects { redirects, .. }
            | FetchOutcome::Network { redirects, .. } => redirects.as_slice(),
        };
        for hop in hops {
            // A redirect's body is not read: the head is what there is.
            let mut head = format!("HTTP/1.1 {} {}\r\n", hop.status, reason(hop.status));
            for (k, v) in &hop.headers {
                if k != "transfer-encoding" {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
            }
            head.push_str("\r\n");
            let has_body = hop.headers.iter().any(|(k, v)| {
                k == "transfer-encoding" || (k == "content-length" && v.trim() != "0")
            });
            let request = request_head(&hop.url, &self.user_agent);
            if let Ok(mut w) = self.warc.lock() {
                let _ = w.exchange(&Exchange {
                    url: &hop.url,
                    date,
                    ip: None,
                    request_head: request.as_bytes(),
                    response_head: head.as_bytes(),
                    body: &[],
                    truncated: has_body,
                });
            }
        }
        if let FetchOutcome::Response { response, .. } = &outcome {
            // The body is stored decoded: the head says so by dropping
            // Content-Encoding and giving the stored length.
            let mut head = format!(
                "HTTP/1.1 {} {}\r\n",
                response.status,
                reason(response.status)
            );
            for (k, v) in &response.headers {
                if k == "content-encoding" || k == "content-length" || k == "transfer-encoding" {
                    continue;
                }
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str(&format!("content-length: {}\r\n\r\n", response.body.len()));
            let request = request_head(&response.url, &self.user_agent);
            if let Ok(mut w) = self.warc.lock() {
                // A failed write is reported when the engine next writes.
                let _ = w.exchange(&Exchange {
                    url: &response.url,
                    date,
                    ip: None,
                    request_head: request.as_bytes(),
                    response_head: head.as_bytes(),
                    body: &response.body,
                    truncated: response.body_cut,
                });
            }
        }
        if let Ok(mut m) = self.made.lock() {
            let error = match &outcome {
                FetchOutcome::Network { error, detail, .. } => {
                    Some(format!("{}: {detail}", error.describe()))
                }
                _ => None,
            };
            m.insert(
                origin.clone(),
                RobotsFetch {
                    outcome: polite,
                    done_at: Instant::now(),
                    error,
                },
            );
        }
        outcome
    }
}

fn reason(status: u16) -> &'static str {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("")
}

fn request_head(url: &str, user_agent: &str) -> String {
    let (host, target) = match url::Url::parse(url) {
        Ok(u) => (
            u[url::Position::BeforeHost..url::Position::AfterPort].to_owned(),
            u[url::Position::BeforePath..url::Position::AfterQuery].to_owned(),
        ),
        Err(_) => (String::new(), url.to_owned()),
    };
    format!(
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {user_agent}\r\nAccept: */*\r\n\r\n"
    )
}

/// The outcome as the frontier paces by it: `latency` becomes the time
/// since `since`, so the frontier takes the request as sent then (a
/// response head's arrival is the latest moment a request can have
/// reached the server, so the host's delay counts from there at the
/// earliest, whatever connection set-up or queueing came before). The
/// clock is read at the same moment, and the outcome must be reported with
/// that time: a `now` read earlier (before a round trip to a networked
/// frontier, say) would put the request earlier than it was, and the
/// host's next request too soon.
fn paced(outcome: &Outcome, since: Instant) -> (Outcome, UnixMillis) {
    let now = UnixMillis::now();
    let latency = since.elapsed().as_millis() as u64;
    let outcome = match outcome {
        Outcome::Status {
            status,
            retry_after,
            ..
        } => Outcome::Status {
            status: *status,
            latency,
            retry_after: retry_after.clone(),
        },
        Outcome::Failed { .. } => Outcome::Failed { latency },
    };
    (outcome, now)
}

/// A robots.txt fetch's hop to another host, asking the loop (which owns
/// the frontier) for that host's slot, or giving it back.
enum GateMsg {
    Enter {
        from: String,
        to: String,
        reply: tokio::sync::oneshot::Sender<Begin>,
    },
    Leave {
        from: String,
        to: String,
        outcome: Outcome,
    },
}

/// Holds a robots.txt redirect to another host to that host's pacing, as
/// the frontier keeps it: a hop goes out only when the frontier says the
/// host may be fetched, and takes the host's slot while it is out. A hop
/// that cannot go out within `patience` is not sent (the robots.txt fetch
/// then fails closed, and is tried again later).
struct LoopGate {
    tx: mpsc::UnboundedSender<GateMsg>,
    patience: Duration,
}

impl HopGate for LoopGate {
    fn enter<'a>(
        &'a self,
        from: &'a url::Url,
        to: &'a url::Url,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        Box::pin(async move {
            let deadline = Instant::now() + self.patience;
            loop {
                let (reply, answer) = tokio::sync::oneshot::channel();
                let asked = GateMsg::Enter {
                    from: from.to_string(),
                    to: to.to_string(),
                    reply,
                };
                if self.tx.send(asked).is_err() {
                    return false;
                }
                match answer.await {
                    Ok(Begin::Started) => return true,
                    Ok(Begin::Wait { until }) => {
                        // The frontier's own wait, not a delay of ours.
                        let wait = until
                            .duration_since(UnixMillis::now())
                            .max(Duration::from_millis(5));
                        if Instant::now() + wait > deadline {
                            return false;
                        }
                        tokio::time::sleep(wait).await;
                    }
                    Ok(Begin::Refused { .. }) | Err(_) => return false,
                }
            }
        })
    }

    fn leave(&self, from: &url::Url, to: &url::Url, status: Option<u16>, latency: Duration) {
        let latency = latency.as_millis() as u64;
        let outcome = match status {
            Some(status) => Outcome::Status {
                status,
                latency,
                retry_after: None,
            },
            None => Outcome::Failed { latency },
        };
        let _ = self.tx.send(GateMsg::Leave {
            from: from.to_string(),
            to: to.to_string(),
            outcome,
        });
    }
}

/// Answers a robots.txt fetch's hop to another host (see [`LoopGate`]).
/// A hop that stays within the politeness key of the robots.txt being
/// fetched (another host of one registered domain, in domain mode) is
/// already covered by that release's slot.
async fn gate<F: CrawlFrontier>(frontier: &mut F, msg: GateMsg) -> Result<(), CrawlError> {
    let now = UnixMillis::now();
    let same_key = |f: &F, from: &str, to: &str| matches!((f.key_of(from), f.key_of(to)), (Ok(a), Ok(b)) if a == b);
    match msg {
        GateMsg::Enter { from, to, reply } => {
            let answer = if same_key(frontier, &from, &to) {
                Begin::Started
            } else {
                Frontier::begin_request(frontier, &to, now).await?
            };
            let _ = reply.send(answer);
        }
        GateMsg::Leave { from, to, outcome } => {
            if !same_key(frontier, &from, &to) {
                Frontier::end_request(frontier, &to, &outcome, now).await?;
            }
        }
    }
    Ok(())
}

/// What one page fetch gave.
struct PageDone {
    released: Released,
    date: UnixMillis,
    latency: u64,
    /// When the response head arrived (or the fetch failed): the latest the
    /// request can have reached the server.
    head_at: Instant,
    /// The robots.txt Content-Usage rule for the URL (AIPREF), as text.
    content_usage_rule: String,
    result: Result<PageResponse, String>,
    timed_out: bool,
    /// Not sent: the moment the frontier gave for sending it had passed
    /// (this worker was stopped or starved between `confirm` and the send).
    unsent: bool,
}

struct PageResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    truncated: bool,
    ip: Option<std::net::IpAddr>,
    /// The media type, when `content_types` does not want it (the body
    /// was not read).
    unwanted: Option<String>,
}

impl PageResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

async fn fetch_page(
    client: reqwest::Client,
    released: Released,
    config: Arc<CrawlConfig>,
    send_by: Option<Instant>,
) -> PageDone {
    let start = Instant::now();
    let date = UnixMillis::now();
    let mut head_at = None;
    let done = |result, timed_out, head_at: Option<Instant>| PageDone {
        content_usage_rule: String::new(),
        head_at: head_at.unwrap_or_else(Instant::now),
        latency: start.elapsed().as_millis() as u64,
        released: released.clone(),
        date,
        result,
        timed_out,
        unsent: false,
    };
    let mut request = match client.get(&released.url).build() {
        Ok(r) => r,
        Err(e) => return done(Err(e.to_string()), false, None),
    };
    if let Some((key, agent)) = &config.signing {
        let sign = mannerly_botauth::SignConfig::new(
            UnixMillis::now(),
            mannerly_botauth::AgentForm::dictionary(agent),
        );
        if let Err(e) = mannerly_botauth::sign_reqwest(key, &mut request, &sign) {
            return done(Err(format!("cannot sign the request: {e}")), false, None);
        }
    }
    if send_by.is_some_and(|t| Instant::now() > t) {
        return PageDone {
            unsent: true,
            ..done(
                Err("its lease lapsed before it was sent".into()),
                false,
                None,
            )
        };
    }
    let send = client.execute(request);
    let mut resp = match tokio::time::timeout(config.first_byte_timeout, send).await {
        Err(_) => {
            return done(
                Err("no response head within the first-byte timeout".into()),
                true,
                None,
            )
        }
        Ok(Err(e)) => return done(Err(e.to_string()), e.is_timeout(), None),
        Ok(Ok(r)) => r,
    };
    head_at = head_at.or(Some(Instant::now()));
    let status = resp.status().as_u16();
    let ip = resp.remote_addr().map(|a| a.ip());
    let headers: Vec<(String, String)> = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let media = media_type(
        headers
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.as_str()),
    );
    let tag = Tag::unpack(released.tag);
    if (200..300).contains(&status)
        && !tag.sitemap
        && !content_type_wanted(&config.content_types, &media)
    {
        // Not downloaded past the head: the connection is dropped.
        return done(
            Ok(PageResponse {
                status,
                headers,
                body: Vec::new(),
                truncated: false,
                ip,
                unwanted: Some(media),
            }),
            false,
            head_at,
        );
    }
    let mut body = Vec::new();
    let mut truncated = false;
    loop {
        match resp.chunk().await {
            Ok(Some(c)) => {
                let room = config.max_bytes.saturating_sub(body.len());
                if c.len() > room {
                    body.extend_from_slice(&c[..room]);
                    truncated = true;
                    break;
                }
                body.extend_from_slice(&c);
            }
            Ok(None) => break,
            Err(e) => {
                // A body cut by the server (reset, short): kept, marked cut.
                if body.is_empty() {
                    return done(Err(format!("body: {e}")), e.is_timeout(), head_at);
                }
                truncated = true;
                break;
            }
        }
    }
    done(
        Ok(PageResponse {
            status,
            headers,
            body,
            truncated,
            ip,
            unwanted: None,
        }),
        false,
        head_at,
    )
}

/// The media type of a `Content-Type` value, lower-cased, without
/// parameters; `application/octet-stream` when there is none (RFC 9110
/// §8.3).
fn media_type(header: Option<&str>) -> String {
    let t = header
        .and_then(|v| v.split(';').next())
        .map(str::trim)
        .unwrap_or("");
    if t.is_empty() {
        "application/octet-stream".into()
    } else {
        t.to_ascii_lowercase()
    }
}

/// Whether `--content-types` keeps a media type: an empty list keeps all;
/// `type/*` keeps a whole type.
fn content_type_wanted(wanted: &[String], media: &str) -> bool {
    wanted.is_empty()
        || wanted.iter().any(|w| {
            let w = w.trim().to_ascii_lowercase();
            match w.strip_suffix("/*") {
                Some(top) => media.split('/').next() == Some(top),
                None => w == media,
            }
        })
}

enum Done {
    Robots {
        released: Released,
        origin: Origin,
        /// `None` when the release's lease lapsed before the task ran (the
        /// worker was stopped): nothing was asked or sent, and another
        /// worker may hold the host now.
        decision: Option<mannerly_fetch::Decision>,
    },
    Page(Box<PageDone>),
}

/// One JSON line of `log.jsonl`.
#[derive(serde::Serialize, Default)]
struct LogLine<'a> {
    time: String,
    kind: &'a str,
    url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    /// The page's `Content-Usage` header (AIPREF), as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    content_usage: Option<&'a str>,
    /// The robots.txt `Content-Usage` rule that applies to the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    content_usage_rule: Option<&'a str>,
    /// A sitemap entry's `<lastmod>`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    lastmod: Option<&'a str>,
    /// Where a URL was found (the sitemap of a sitemap entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<&'a str>,
}

struct Log {
    out: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
}

impl Log {
    fn line(&mut self, line: &LogLine<'_>) -> Result<(), CrawlError> {
        use std::io::Write;
        let io = |source| CrawlError::Io {
            path: self.path.clone(),
            source,
        };
        serde_json::to_writer(&mut self.out, line).map_err(|e| io(e.into()))?;
        self.out.write_all(b"\n").map_err(io)
    }

    fn flush(&mut self) -> Result<(), CrawlError> {
        use std::io::Write;
        self.out.flush().map_err(|source| CrawlError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// Pages a crawl fetched before (from its log): in all, and per host.
fn count_pages(log: &Path) -> (u64, HashMap<String, u64>) {
    let mut per_host: HashMap<String, u64> = HashMap::new();
    let mut total = 0;
    let Ok(text) = std::fs::read_to_string(log) else {
        return (0, per_host);
    };
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["kind"] != "page" || !v["status"].is_number() {
            continue;
        }
        total += 1;
        if let Some(host) = v["url"]
            .as_str()
            .and_then(|u| url::Url::parse(u).ok())
            .and_then(|u| u.host_str().map(str::to_owned))
        {
            *per_host.entry(host).or_default() += 1;
        }
    }
    (total, per_host)
}

/// A kill can leave the log's last line half written: cut it, so every
/// line stays one JSON document.
fn cut_partial_line(path: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            let keep = start + i as u64 + 1;
            if keep < len {
                f.set_len(keep)?;
            }
            return Ok(());
        }
        end = start;
    }
    f.set_len(0)
}

fn http_client(
    config: &CrawlConfig,
    builder: reqwest::ClientBuilder,
) -> Result<reqwest::Client, CrawlError> {
    let mut b = builder;
    if let Some(p) = &config.proxy {
        b = b.proxy(
            reqwest::Proxy::all(p).map_err(|e| CrawlError::Client(format!("--proxy {p}: {e}")))?,
        );
    }
    if let Some(hook) = &config.client_hook {
        b = hook(b);
    }
    b.build().map_err(|e| CrawlError::Client(e.to_string()))
}

/// Runs a crawl from `seeds` with everything under `out`: the frontier
/// store (`out/frontier`), WARC files (`out/warc`) and `out/log.jsonl`.
/// A directory that holds a crawl already is resumed: its queue, its
/// hosts' politeness state and its WARC numbering go on.
pub async fn crawl(
    config: CrawlConfig,
    seeds: &[String],
    out: &Path,
    stop: tokio::sync::watch::Receiver<bool>,
    progress: impl FnMut(&Progress),
) -> Result<Summary, CrawlError> {
    crawl_on(Local, config, seeds, out, stop, progress).await
}

/// Where a crawl keeps its frontier and its robots.txt state.
pub trait Backend {
    /// The frontier it opens.
    type Frontier: CrawlFrontier;
    /// Whether a crawl is there to go on with when no seed is given.
    fn resumable(&self, out: &Path) -> bool;
    /// The crawl's settings: those stored, with `seeds` added, or `fresh`
    /// (with `seeds`) for a new crawl; stored again before returning.
    fn settings(
        &self,
        out: &Path,
        fresh: CrawlSettings,
        seeds: &[String],
    ) -> impl Future<Output = Result<CrawlSettings, CrawlError>> + Send;
    /// Opens (or creates) the frontier, paced by `politeness`, and the
    /// store of robots.txt states.
    fn open(
        self,
        out: &Path,
        politeness: Politeness,
    ) -> impl Future<Output = Result<(Self::Frontier, Arc<dyn Store>), CrawlError>> + Send;
}

/// A crawl on this machine: the frontier in `out/frontier` (fjall), the
/// robots.txt states in `out/robots`.
pub struct Local;

impl Backend for Local {
    type Frontier = LocalFrontier;

    fn resumable(&self, out: &Path) -> bool {
        out.join("frontier").exists()
    }

    async fn settings(
        &self,
        out: &Path,
        fresh: CrawlSettings,
        seeds: &[String],
    ) -> Result<CrawlSettings, CrawlError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| CrawlError::Io { path, source }
        };
        let path = out.join("crawl.json");
        let mut settings = match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice::<CrawlSettings>(&bytes).map_err(|e| CrawlError::Io {
                    path: path.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                })?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => fresh,
            Err(e) => return Err(io(&path)(e)),
        };
        settings.add_seeds(seeds);
        let tmp = out.join("crawl.json.tmp");
        {
            use std::io::Write;
            let file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
            let mut w = std::io::BufWriter::new(file);
            serde_json::to_writer_pretty(&mut w, &settings).map_err(|e| io(&tmp)(e.into()))?;
            w.flush().map_err(io(&tmp))?;
        }
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        Ok(settings)
    }

    async fn open(
        self,
        out: &Path,
        politeness: Politeness,
    ) -> Result<(LocalFrontier, Arc<dyn Store>), CrawlError> {
        // The loop commits its operations together (`CrawlFrontier::commit`),
        // once per turn; the bound only caps a turn that does very many.
        let frontier = LocalFrontier::open(
            &out.join("frontier"),
            politeness,
            FrontierConfig {
                commit_every: 256,
                ..FrontierConfig::on_disk()
            },
        )?;
        let store = FjallStore::open(&out.join("robots")).map_err(|e| CrawlError::Io {
            path: out.join("robots"),
            source: std::io::Error::other(e),
        })?;
        Ok((frontier, Arc::new(store)))
    }
}

/// [`crawl`] on another [`Backend`] (a fleet's shared frontier): the WARC
/// files, the log and `status.json` stay this worker's, under `out`.
pub async fn crawl_on<B: Backend>(
    backend: B,
    config: CrawlConfig,
    seeds: &[String],
    out: &Path,
    mut stop: tokio::sync::watch::Receiver<bool>,
    mut progress: impl FnMut(&Progress),
) -> Result<Summary, CrawlError> {
    let started = Instant::now();
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| CrawlError::Io { path, source }
    };
    let mut given = Vec::new();
    let mut bad = Vec::new();
    for s in seeds {
        match CrawlUrl::parse(s) {
            // Kept as text: a seed list can hold millions.
            Ok(u) => given.push(String::from(u.as_str())),
            Err(e) => bad.push(e.to_string()),
        }
    }
    if given.is_empty() && !backend.resumable(out) {
        return Err(CrawlError::NoSeeds(if bad.is_empty() {
            "none given".into()
        } else {
            bad.join("; ")
        }));
    }
    std::fs::create_dir_all(out).map_err(io(out))?;
    let mut settings = backend
        .settings(
            out,
            CrawlSettings {
                seeds: Vec::new(),
                scope: config.scope,
                include: config.include.clone(),
                exclude: config.exclude.clone(),
                max_depth: config.max_depth,
            },
            &given,
        )
        .await?;
    drop(given);
    // The scope needs one seed per host.
    let mut scope_hosts = std::collections::HashSet::new();
    let scope_seeds: Vec<CrawlUrl> = settings
        .seeds
        .iter()
        .filter_map(|s| CrawlUrl::parse(s).ok())
        .filter(|u| scope_hosts.insert(u.host().to_owned()))
        .collect();
    drop(scope_hosts);
    let scope = Scope::new(
        settings.scope,
        &scope_seeds,
        &settings.include,
        &settings.exclude,
        settings.max_depth,
    )?;
    drop(scope_seeds);
    // Every seed of the crawl is offered, not only those given now: the
    // worker that started a fleet's crawl (or a crawl killed while it was
    // queueing its seeds) may have died before queueing them all, and the
    // seen-set makes the rest a no-op.
    let seed_urls = std::mem::take(&mut settings.seeds);
    drop(settings);
    let config = Arc::new(config);
    let warc = Arc::new(Mutex::new(WarcWriter::open(
        &out.join("warc"),
        "mannerly",
        config.warc_max_size,
        &config.user_agent,
    )?));
    let log_path = out.join("log.jsonl");
    cut_partial_line(&log_path).map_err(io(&log_path))?;
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(io(&log_path))?;
    let mut log = Log {
        out: std::io::BufWriter::new(log_file),
        path: log_path,
    };
    let fetch_config = FetchConfig {
        user_agent: config.user_agent.clone(),
        timeout: config.timeout,
        connect_timeout: config.connect_timeout,
        // Hops of a robots.txt redirect to the same host are spaced by the
        // minimum delay (a Crawl-delay is not known before the file is).
        redirect_gap: config.min_delay,
        ..FetchConfig::default()
    };
    // Sockets are bounded: a connection is kept (one per host) only while
    // the host's next request may come. A crawl of many thousand hosts
    // otherwise holds a socket per host it has seen, and runs out of file
    // descriptors. robots.txt goes through the same client, so the host's
    // first page reuses its connection (the client keeps bodies as sent,
    // for the WARC; `mannerly-fetch` decodes a compressed robots.txt).
    let keep_alive = (config.min_delay * 2 + Duration::from_secs(2)).min(Duration::from_secs(90));
    let page_client = http_client(
        &config,
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_gzip()
            .no_brotli()
            .no_deflate()
            .user_agent(&config.user_agent)
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .pool_max_idle_per_host(1)
            .pool_idle_timeout(keep_alive),
    )?;
    let robots_client = page_client.clone();
    let made = Arc::new(Mutex::new(HashMap::new()));
    let (gate_tx, mut gate_rx) = mpsc::unbounded_channel::<GateMsg>();
    let hop_gate = Arc::new(LoopGate {
        tx: gate_tx,
        patience: config.timeout,
    });
    let politeness = Politeness::new(PoliteConfig {
        min_delay: config.min_delay.as_millis() as u64,
        profile: config.profile,
        ..PoliteConfig::default()
    });
    let (mut frontier, robots_store) = backend.open(out, politeness).await?;
    let cache = Arc::new(RobotsCache::new(
        RecordingFetcher {
            inner: HttpFetcher::with_client(robots_client, fetch_config).with_gate(hop_gate),
            user_agent: config.user_agent.clone(),
            made: made.clone(),
            warc: warc.clone(),
        },
        Arc::new(SystemClock),
        robots_store,
        CacheConfig::default(),
    ));
    let clock = SystemClock;
    for chunk in seed_urls.chunks(256) {
        let offers: Vec<Offer<'_>> = chunk
            .iter()
            .map(|u| Offer {
                url: u,
                priority: 255,
                tag: Tag::default().pack(),
            })
            .collect();
        Frontier::enqueue_many(&mut frontier, &offers, clock.now()).await?;
    }
    drop(seed_urls);
    let mut summary = Summary {
        ending: Ending::Done,
        pages_by_status: BTreeMap::new(),
        page_errors: 0,
        robots_requests: 0,
        bytes: 0,
        skipped: BTreeMap::new(),
        retries: 0,
        deferred: 0,
        deferred_by_reason: BTreeMap::new(),
        unavailable: BTreeMap::new(),
        hosts: 0,
        sitemap_entries: 0,
        warc_records: 0,
        seconds: 0.0,
    };
    let mut hosts_answered = std::collections::HashSet::new();
    let (tx, mut rx) = mpsc::unbounded_channel::<Done>();
    let mut in_flight = 0usize;
    // A resumed crawl's page counts come from its log, the record of what
    // it fetched.
    let (mut pages_started, mut per_host) = count_pages(&log.path);
    let mut last_progress = Instant::now();
    let mut stopping = false;
    let mut grace_deadline: Option<Instant> = None;
    // A report the loop waited for, handled at the top with the rest.
    let mut received: Option<Done> = None;
    loop {
        // What the last turn did survives a kill from here on.
        frontier.commit()?;
        // Hops of robots.txt fetches to other hosts ask for those hosts'
        // slots; then reports: they free slots and may unblock hosts.
        while let Ok(m) = gate_rx.try_recv() {
            gate(&mut frontier, m).await?;
        }
        // Every report waiting is handled in this turn, and their links
        // offered together at its end (see `Turn`).
        let mut turn = Turn::default();
        while let Some(done) = received.take().or_else(|| rx.try_recv().ok()) {
            in_flight -= 1;
            let shared = Shared {
                config: &config,
                scope: &scope,
                cache: &cache,
                made: &made,
                warc: &warc,
            };
            handle(
                done,
                shared,
                &mut turn,
                &mut frontier,
                &mut log,
                &mut summary,
                &mut hosts_answered,
            )
            .await?;
        }
        turn.finish(&mut frontier, &mut log, &mut summary).await?;
        if last_progress.elapsed() >= Duration::from_millis(500) {
            last_progress = Instant::now();
            let snapshot = Progress {
                pages: summary.pages_by_status.values().sum(),
                bytes: summary.bytes,
                in_flight,
                queued: frontier.progress_stats().await?.queued,
                errors: summary.page_errors,
                seconds: started.elapsed().as_secs_f64(),
                hosts_blocked: summary.unavailable.len(),
            };
            progress(&snapshot);
            let busiest = frontier.busiest_hosts(clock.now());
            write_status(out, &snapshot, &summary, &busiest, false);
        }
        if *stop.borrow() && !stopping {
            stopping = true;
            summary.ending = Ending::Stopped;
            grace_deadline = Some(Instant::now() + Duration::from_secs(5));
        }
        if stopping {
            if in_flight == 0 || grace_deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            received = tokio::time::timeout(Duration::from_millis(100), rx.recv())
                .await
                .ok()
                .flatten();
            continue;
        }
        let max_reached = config.max_pages.is_some_and(|m| pages_started >= m);
        let mut wait: Option<UnixMillis> = None;
        if in_flight < config.concurrency.max(1) && !max_reached {
            let now = clock.now();
            // As many releases as there are free slots (and pages left),
            // in one call: a networked frontier answers in one round trip.
            let mut room = config.concurrency.max(1) - in_flight;
            if let Some(m) = config.max_pages {
                room = room
                    .min(usize::try_from(m.saturating_sub(pages_started)).unwrap_or(usize::MAX));
            }
            let batch = Frontier::next_batch(&mut frontier, room.max(1), now).await?;
            log_skipped(&mut frontier, &mut log, &mut summary).await?;
            let released_any = !batch.released.is_empty();
            for r in batch.released {
                match r.kind {
                    Kind::Robots => {
                        let origin = match Origin::of(&r.url) {
                            Ok(o) => o,
                            Err(_) => {
                                Frontier::discard(&mut frontier, &r, now).await?;
                                continue;
                            }
                        };
                        // A fleet's release may have lapsed while this
                        // worker was stopped: then it is another's.
                        if !Frontier::confirm(&mut frontier, &r, clock.now()).await? {
                            continue;
                        }
                        let cache = cache.clone();
                        let tx = tx.clone();
                        in_flight += 1;
                        let send_by = Frontier::send_by(&frontier, &r);
                        tokio::spawn(async move {
                            // Checked as a page's is: a worker stopped
                            // between the release and this task must not
                            // send robots.txt on a lease that is gone.
                            let decision = if send_by.is_some_and(|t| Instant::now() > t) {
                                None
                            } else {
                                Some(cache.decision(&origin).await)
                            };
                            let _ = tx.send(Done::Robots {
                                released: r,
                                origin,
                                decision,
                            });
                        });
                    }
                    Kind::Page => {
                        let host = url::Url::parse(&r.url)
                            .ok()
                            .and_then(|u| u.host_str().map(str::to_owned))
                            .unwrap_or_default();
                        if let Some(max) = config.max_pages_per_host {
                            if per_host.get(&host).is_some_and(|n| *n >= max) {
                                skip(
                                    &mut log,
                                    &mut summary,
                                    &r.url,
                                    "max-pages-per-host",
                                    &format!("{host} has had its {max} pages"),
                                )?;
                                Frontier::discard(&mut frontier, &r, clock.now()).await?;
                                continue;
                            }
                        }
                        if let Some(usage) =
                            admit_page(&config, &mut frontier, &cache, &mut log, &mut summary, &r)
                                .await?
                        {
                            // Admitting may have waited (for robots.txt):
                            // a fleet's lease is checked just before
                            // sending.
                            if !Frontier::confirm(&mut frontier, &r, clock.now()).await? {
                                skip(
                                    &mut log,
                                    &mut summary,
                                    &r.url,
                                    "lease-lapsed",
                                    "its lease lapsed before it was sent: another worker has it",
                                )?;
                                continue;
                            }
                            pages_started += 1;
                            *per_host.entry(host).or_default() += 1;
                            in_flight += 1;
                            let client = page_client.clone();
                            let tx = tx.clone();
                            let config = config.clone();
                            let send_by = Frontier::send_by(&frontier, &r);
                            tokio::spawn(async move {
                                let mut done = fetch_page(client, r, config, send_by).await;
                                done.content_usage_rule = usage;
                                let _ = tx.send(Done::Page(Box::new(done)));
                            });
                        }
                    }
                }
            }
            match batch.then {
                _ if released_any => continue,
                None => continue,
                Some(Next::Wait { until }) => wait = Some(until),
                Some(Next::Busy | Next::Fetch(_)) => {}
                Some(Next::Empty) => {
                    if in_flight == 0 {
                        break;
                    }
                }
            }
        }
        if max_reached && in_flight == 0 {
            summary.ending = Ending::MaxPages;
            break;
        }
        if let (Some(until), 0) = (wait, in_flight) {
            if until.duration_since(clock.now()) > config.give_up_after {
                summary.ending = Ending::GaveUp;
                break;
            }
        }
        let sleep_for = wait.map_or(Duration::from_millis(500), |u| {
            u.duration_since(clock.now())
                .clamp(Duration::from_millis(1), Duration::from_millis(500))
        });
        frontier.commit()?;
        tokio::select! {
            done = rx.recv() => received = done,
            Some(m) = gate_rx.recv() => gate(&mut frontier, m).await?,
            _ = tokio::time::sleep(sleep_for) => {}
            _ = stop.changed() => {}
        }
    }
    let stats = Frontier::stats(&mut frontier).await?;
    summary.deferred = stats.queued;
    if summary.ending == Ending::GaveUp {
        log_deferred(&mut frontier, &mut log, &mut summary, clock.now())?;
    }
    summary.hosts = hosts_answered.len() as u64;
    Frontier::sync(&mut frontier).await?;
    // The last (a networked frontier hands them over at intervals, and
    // all that are left after `sync`).
    log_skipped(&mut frontier, &mut log, &mut summary).await?;
    log.flush()?;
    if let Ok(mut w) = warc.lock() {
        w.sync()?;
        summary.warc_records = w.records();
    }
    summary.seconds = started.elapsed().as_secs_f64();
    let last = Progress {
        pages: summary.pages_by_status.values().sum(),
        bytes: summary.bytes,
        in_flight: 0,
        queued: summary.deferred,
        errors: summary.page_errors,
        seconds: summary.seconds,
        hosts_blocked: summary.unavailable.len(),
    };
    let busiest = frontier.busiest_hosts(clock.now());
    write_status(out, &last, &summary, &busiest, true);
    Ok(summary)
}

/// Logs every URL left queued when the crawl gave up on them, with what
/// holds it back, and counts them by kind of reason.
fn log_deferred<F: CrawlFrontier>(
    frontier: &mut F,
    log: &mut Log,
    summary: &mut Summary,
    now: UnixMillis,
) -> Result<(), CrawlError> {
    let mut failed = None;
    let time = now.to_rfc3339_millis();
    frontier.for_each_deferred(now, &mut |url, why| {
        *summary
            .deferred_by_reason
            .entry(hold_kind(why).to_owned())
            .or_default() += 1;
        if let Err(e) = log.line(&LogLine {
            time: time.clone(),
            kind: "deferred",
            url,
            reason: Some(why),
            ..LogLine::default()
        }) {
            failed = Some(e);
        }
    })?;
    failed.map_or(Ok(()), Err)
}

/// The kind of hold a `why_not_now` answer describes, for the summary's
/// counts (the log keeps the full text).
fn hold_kind(why: &str) -> &'static str {
    if why.contains("/robots.txt") {
        "robots.txt unavailable"
    } else if why.contains("retry after") {
        "Retry-After"
    } else if why.contains("in flight") {
        "requests in flight"
    } else if why.contains("delay of") {
        "host delay (Crawl-delay or backoff)"
    } else {
        "other"
    }
}

/// What the crawler needs of a frontier besides the [`Frontier`] calls.
pub trait CrawlFrontier: Frontier + Send {
    /// The politeness key of a URL.
    fn key_of(&self, url: &str) -> Result<String, KeyError>;
    /// Calls `f` with every URL still queued and what holds it back, for
    /// the log of a crawl that gave up. A frontier that other workers go on
    /// draining has nothing to report here.
    fn for_each_deferred(
        &mut self,
        now: UnixMillis,
        f: &mut dyn FnMut(&str, &str),
    ) -> Result<(), FrontierError>;
    /// The hosts holding the most queued URLs, with why each waits, for
    /// `status.json` (written twice a second: it must be cheap).
    fn busiest_hosts(&self, now: UnixMillis) -> Vec<serde_json::Value>;
    /// Hands the operations of the loop's last turn on together, so they
    /// survive a kill: the loop calls it at the top of every turn and
    /// before it waits. (A page's links are queued before it is recorded
    /// done, and operations are handed on in order, so a kill never keeps
    /// the one without the other.)
    fn commit(&mut self) -> Result<(), FrontierError>;
    /// The counts for the progress line, asked twice a second:
    /// [`Frontier::stats`], or a recent copy where reading them costs a
    /// shared server something.
    fn progress_stats(&mut self) -> impl Future<Output = Result<Stats, FrontierError>> + Send {
        Frontier::stats(self)
    }
}

impl CrawlFrontier for LocalFrontier {
    fn commit(&mut self) -> Result<(), FrontierError> {
        LocalFrontier::commit(self)
    }

    fn key_of(&self, url: &str) -> Result<String, KeyError> {
        LocalFrontier::key_of(self, url)
    }

    fn for_each_deferred(
        &mut self,
        now: UnixMillis,
        f: &mut dyn FnMut(&str, &str),
    ) -> Result<(), FrontierError> {
        self.for_each_queued(|fr, _, url| {
            let why = LocalFrontier::why_not_now(fr, url, now)
                .unwrap_or_else(|| "nothing: it may be fetched now".into());
            f(url, &why);
            Ok(())
        })
    }

    fn busiest_hosts(&self, now: UnixMillis) -> Vec<serde_json::Value> {
        LocalFrontier::busiest(self, 10)
            .into_iter()
            .map(|l| {
                let why = l
                    .head
                    .as_deref()
                    .and_then(|u| LocalFrontier::why_not_now(self, u, now))
                    .or_else(|| self.politeness.why_not_now(&l.key, now));
                serde_json::json!({"host": l.key, "queued": l.queued, "waiting": why})
            })
            .collect()
    }
}

/// `out/status.json`, for `mannerly crawl --status` while a crawl runs
/// (the frontier store is the running crawl's alone). Best effort: a
/// failed write is retried at the next snapshot.
fn write_status(
    out: &Path,
    p: &Progress,
    summary: &Summary,
    busiest: &[serde_json::Value],
    ended: bool,
) {
    let status = serde_json::json!({
        "pid": std::process::id(),
        "updated": UnixMillis::now().to_rfc3339_millis(),
        "running": !ended,
        "ending": if ended { Some(summary.ending) } else { None },
        "pages": p.pages,
        "bytes": p.bytes,
        "in_flight": p.in_flight,
        "queued": p.queued,
        "errors": p.errors,
        "retries": summary.retries,
        "seconds": p.seconds,
        "pages_by_status": summary.pages_by_status,
        "skipped": summary.skipped,
        "robots_unavailable": summary.unavailable,
        "deferred_by_reason": summary.deferred_by_reason,
        "busiest": busiest,
    });
    let tmp = out.join("status.json.tmp");
    if std::fs::write(&tmp, status.to_string()).is_ok() {
        let _ = std::fs::rename(&tmp, out.join("status.json"));
    }
}

/// Until when an origin whose robots.txt is unavailable holds its pages:
/// the cache's next attempt (backoff or Retry-After), within the
/// decision's life, and at least 1 s on.
async fn hold_until(
    cache: &RobotsCache<RecordingFetcher>,
    origin: &Origin,
    expires: &UnixMillis,
    now: UnixMillis,
) -> UnixMillis {
    let state = cache.state(origin).await;
    state
        .retry_at
        .map_or(*expires, |r| r.min(*expires))
        .max(now.add_millis(1_000))
}

/// The robots.txt `Content-Usage` rule (AIPREF) that applies to a URL, as
/// text: `train-ai=n, search=y (line 4)`, or `none`.
fn content_usage_rule(decision: &Decision, agent: &str, url: &str) -> String {
    let Access::Rules(robots) = &decision.access else {
        return "none".into();
    };
    let word = |p: mannerly_robots::Preference| match p {
        mannerly_robots::Preference::Allowed => "y",
        mannerly_robots::Preference::Disallowed => "n",
        _ => "unknown",
    };
    match robots.content_usage(agent, url) {
        Some(u) if !u.lines.is_empty() => format!(
            "train-ai={}, search={} (line {})",
            word(u.train_ai),
            word(u.search),
            u.lines
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => "none".into(),
    }
}

/// Checks a released page against robots.txt before any request; returns
/// whether to fetch it.
async fn admit_page<F: CrawlFrontier>(
    config: &CrawlConfig,
    frontier: &mut F,
    cache: &RobotsCache<RecordingFetcher>,
    log: &mut Log,
    summary: &mut Summary,
    r: &Released,
) -> Result<Option<String>, CrawlError> {
    let now = UnixMillis::now();
    // One lookup: whether robots.txt is decided, what it says of the page,
    // and the rules the Content-Usage record is read from.
    let (check, decision) = match cache.check_decided(&r.url, &config.agent).await {
        Ok(Some(known)) => known,
        Ok(None) => {
            // No valid robots.txt state here or in the store (it expired,
            // or in a fleet the worker that fetched it could not save it):
            // checking would fetch robots.txt on this page's turn and the
            // page would follow at once. robots.txt goes back through the
            // frontier instead, as a request of its own, and the page waits.
            if let Ok(origin) = Origin::of(&r.url) {
                Frontier::robots_unavailable(
                    frontier,
                    &origin.to_string(),
                    now,
                    "robots.txt is fetched again: no valid state for it here",
                    now,
                )
                .await?;
                Frontier::cancel(frontier, r, now).await?;
                return Ok(None);
            }
            // A URL the cache could read has an origin: not reached.
            skip(log, summary, &r.url, "unusable-url", "it has no origin")?;
            Frontier::discard(frontier, r, now).await?;
            return Ok(None);
        }
        Err(e) => {
            skip(log, summary, &r.url, "unusable-url", &e.to_string())?;
            Frontier::discard(frontier, r, now).await?;
            return Ok(None);
        }
    };
    if check.allowed {
        return Ok(Some(content_usage_rule(&decision, &config.agent, &r.url)));
    }
    if check.access == "disallow-all" {
        // robots.txt unavailable: the page waits, it is not dropped.
        let expires = check.expires_at.unwrap_or(now.add_millis(60_000));
        let until = match Origin::of(&check.origin) {
            Ok(origin) => hold_until(cache, &origin, &expires, now).await,
            Err(_) => expires,
        };
        Frontier::robots_unavailable(frontier, &check.origin, until, &check.reason, now).await?;
        Frontier::cancel(frontier, r, now).await?;
        return Ok(None);
    }
    let why = match &check.rule {
        Some(rule) => format!("robots.txt line {}: {}", rule.line, rule.pattern),
        None => check.reason.clone(),
    };
    skip(log, summary, &r.url, "disallowed", &why)?;
    Frontier::discard(frontier, r, now).await?;
    Ok(None)
}

fn skip(
    log: &mut Log,
    summary: &mut Summary,
    url: &str,
    what: &str,
    why: &str,
) -> Result<(), CrawlError> {
    *summary.skipped.entry(what.to_owned()).or_default() += 1;
    log.line(&LogLine {
        time: UnixMillis::now().to_rfc3339_millis(),
        kind: "skipped",
        url,
        status: None,
        bytes: None,
        ms: None,
        retry: None,
        error: None,
        reason: Some(&format!("{what}: {why}")),
        content_usage: None,
        content_usage_rule: None,
        ..LogLine::default()
    })
}

/// A release whose lease lapsed before its request was sent (the worker
/// was stopped in between): nothing reached the host, so it is logged and
/// goes back (or, if another worker holds it now, the cancel is stale).
async fn lapsed<F: CrawlFrontier>(
    frontier: &mut F,
    log: &mut Log,
    summary: &mut Summary,
    released: &Released,
    now: UnixMillis,
) -> Result<(), CrawlError> {
    skip(
        log,
        summary,
        &released.url,
        "lease-lapsed",
        "its lease lapsed before it was sent: another worker has it",
    )?;
    Frontier::cancel(frontier, released, now).await?;
    Ok(())
}

/// What the reports handled in one turn of the loop queue, and the
/// completions that must wait for it: every page's links go to the
/// frontier in one offer (one round trip on a networked frontier, however
/// many pages the turn handled), then the pages are recorded done, in
/// order. A kill in between fetches those pages again (at least once) and
/// never loses their links.
#[derive(Default)]
struct Turn {
    candidates: Vec<Candidate>,
    completions: Vec<(Released, Outcome, UnixMillis)>,
}

impl Turn {
    /// Offers what the turn found, then records its pages done.
    async fn finish<F: CrawlFrontier>(
        &mut self,
        frontier: &mut F,
        log: &mut Log,
        summary: &mut Summary,
    ) -> Result<(), CrawlError> {
        let candidates = std::mem::take(&mut self.candidates);
        offer_all(frontier, log, summary, &candidates).await?;
        for (released, outcome, at) in std::mem::take(&mut self.completions) {
            Frontier::complete(frontier, &released, &outcome, at).await?;
        }
        Ok(())
    }
}

/// What handling a report reads beside the frontier: the crawl's settings
/// and the parts the loop shares with the fetch tasks.
#[derive(Clone, Copy)]
struct Shared<'a> {
    config: &'a CrawlConfig,
    scope: &'a Scope,
    cache: &'a RobotsCache<RecordingFetcher>,
    made: &'a Mutex<HashMap<Origin, RobotsFetch>>,
    warc: &'a Mutex<WarcWriter>,
}

/// Logs the URLs the frontier dropped with their host (a Crawl-delay over
/// the maximum delay) since it was last asked.
async fn log_skipped<F: CrawlFrontier>(
    frontier: &mut F,
    log: &mut Log,
    summary: &mut Summary,
) -> Result<(), CrawlError> {
    for dropped in Frontier::take_skipped(frontier).await? {
        skip(log, summary, &dropped.url, "host-skipped", &dropped.reason)?;
    }
    Ok(())
}

async fn handle<F: CrawlFrontier>(
    done: Done,
    shared: Shared<'_>,
    turn: &mut Turn,
    frontier: &mut F,
    log: &mut Log,
    summary: &mut Summary,
    hosts_answered: &mut std::collections::HashSet<String>,
) -> Result<(), CrawlError> {
    let Shared {
        config,
        scope,
        cache,
        made,
        warc,
    } = shared;
    let now = UnixMillis::now();
    match done {
        Done::Robots {
            released,
            origin,
            decision,
        } => {
            let Some(decision) = decision else {
                return lapsed(frontier, log, summary, &released, now).await;
            };
            let o = origin.to_string();
            match &decision.access {
                Access::DisallowAll => {
                    summary
                        .unavailable
                        .insert(o.clone(), decision.reason.clone());
                    // Held until the fetch policy's next attempt (backoff or
                    // Retry-After), not the phase's end: then robots.txt is
                    // released again and the cache decides whether to fetch.
                    let until = hold_until(cache, &origin, &decision.expires_at, now).await;
                    Frontier::robots_unavailable(frontier, &o, until, &decision.reason, now)
                        .await?;
                }
                access => {
                    summary.unavailable.remove(&o);
                    if let (Access::Rules(robots), true) = (access, config.sitemaps) {
                        for sm in robots.sitemaps() {
                            let tag = Tag {
                                sitemap: true,
                                ..Tag::default()
                            };
                            let from = url::Url::parse(&released.url).ok();
                            if let Some(page) = from {
                                follow(turn, scope, log, summary, &page, &sm.url, tag, 0)?;
                            }
                        }
                    }
                    let pacing = match access {
                        Access::Rules(robots) => {
                            RobotsPacing::from_robots(robots, &config.agent, config.profile)
                        }
                        _ => RobotsPacing::default(),
                    };
                    Frontier::robots_known(frontier, &o, pacing, decision.expires_at, now).await?;
                }
            }
            let fetched = made.lock().ok().and_then(|mut m| m.remove(&origin));
            match fetched {
                Some(f) => {
                    summary.robots_requests += 1;
                    log.line(&LogLine {
                        time: now.to_rfc3339_millis(),
                        kind: "robots",
                        url: &released.url,
                        status: match &f.outcome {
                            Outcome::Status { status, .. } => Some(*status),
                            Outcome::Failed { .. } => None,
                        },
                        bytes: None,
                        ms: match &f.outcome {
                            Outcome::Status { latency, .. } | Outcome::Failed { latency } => {
                                Some(*latency)
                            }
                        },
                        retry: None,
                        error: f.error.as_deref(),
                        reason: Some(&decision.reason),
                        content_usage: None,
                        content_usage_rule: None,
                        ..LogLine::default()
                    })?;
                    // After the sitemaps it lists are offered.
                    let (outcome, at) = paced(&f.outcome, f.done_at);
                    turn.completions.push((released, outcome, at));
                }
                None => Frontier::cancel(frontier, &released, now).await?,
            }
        }
        Done::Page(p) => {
            let PageDone {
                released,
                date,
                latency,
                head_at,
                result,
                timed_out,
                content_usage_rule,
                unsent,
            } = *p;
            if unsent {
                return lapsed(frontier, log, summary, &released, now).await;
            }
            let tag = Tag::unpack(released.tag);
            match result {
                Err(error) => {
                    summary.page_errors += 1;
                    let (outcome, at) = paced(&Outcome::Failed { latency }, head_at);
                    let retry = tag.retries < config.retries;
                    log.line(&LogLine {
                        time: now.to_rfc3339_millis(),
                        kind: "page",
                        url: &released.url,
                        status: None,
                        bytes: None,
                        ms: Some(latency),
                        retry: Some(tag.retries),
                        error: Some(&error),
                        reason: timed_out.then_some("timeout"),
                        content_usage: None,
                        content_usage_rule: None,
                        ..LogLine::default()
                    })?;
                    if retry {
                        summary.retries += 1;
                        let next = Tag {
                            retries: tag.retries + 1,
                            ..tag
                        };
                        Frontier::requeue(frontier, &released, &outcome, next.pack(), at).await?;
                    } else {
                        Frontier::complete(frontier, &released, &outcome, at).await?;
                    }
                }
                Ok(resp) => {
                    if let Ok(origin) = Origin::of(&released.url) {
                        cache.note_host_answered(&origin).await;
                        hosts_answered.insert(origin.host.clone());
                    }
                    if let Some(media) = &resp.unwanted {
                        *summary.pages_by_status.entry(resp.status).or_default() += 1;
                        *summary.skipped.entry("content-type".into()).or_default() += 1;
                        log.line(&LogLine {
                            time: now.to_rfc3339_millis(),
                            kind: "page",
                            url: &released.url,
                            status: Some(resp.status),
                            bytes: Some(0),
                            ms: Some(latency),
                            retry: Some(tag.retries),
                            reason: Some(&format!(
                                "content-type: {media} is not among --content-types; not downloaded"
                            )),
                            ..LogLine::default()
                        })?;
                        let (outcome, at) = paced(
                            &Outcome::Status {
                                status: resp.status,
                                latency,
                                retry_after: None,
                            },
                            head_at,
                        );
                        Frontier::complete(frontier, &released, &outcome, at).await?;
                        return Ok(());
                    }
                    let mut head = format!("HTTP/1.1 {} {}\r\n", resp.status, reason(resp.status));
                    for (k, v) in &resp.headers {
                        if k.eq_ignore_ascii_case("transfer-encoding") {
                            continue;
                        }
                        head.push_str(&format!("{k}: {v}\r\n"));
                    }
                    head.push_str("\r\n");
                    let request = request_head(&released.url, &config.user_agent);
                    warc.lock()
                        .map_err(|_| CrawlError::Client("the WARC writer was poisoned".into()))?
                        .exchange(&Exchange {
                            url: &released.url,
                            date,
                            ip: resp.ip,
                            request_head: request.as_bytes(),
                            response_head: head.as_bytes(),
                            body: &resp.body,
                            truncated: resp.truncated,
                        })?;
                    *summary.pages_by_status.entry(resp.status).or_default() += 1;
                    summary.bytes += resp.body.len() as u64;
                    let (outcome, at) = paced(
                        &Outcome::Status {
                            status: resp.status,
                            latency,
                            retry_after: resp.header("retry-after").map(str::to_owned),
                        },
                        head_at,
                    );
                    log.line(&LogLine {
                        time: now.to_rfc3339_millis(),
                        kind: "page",
                        url: &released.url,
                        status: Some(resp.status),
                        bytes: Some(resp.body.len() as u64),
                        ms: Some(latency),
                        retry: Some(tag.retries),
                        error: None,
                        reason: resp.truncated.then_some("truncated"),
                        content_usage: resp.header("content-usage"),
                        content_usage_rule: Some(&content_usage_rule),
                        ..LogLine::default()
                    })?;
                    let retryable = matches!(resp.status, 429 | 500 | 502 | 503 | 504);
                    if retryable && tag.retries < config.retries {
                        summary.retries += 1;
                        let next = Tag {
                            retries: tag.retries + 1,
                            ..tag
                        };
                        Frontier::requeue(frontier, &released, &outcome, next.pack(), at).await?;
                        return Ok(());
                    }
                    // Outlinks are queued before the page is recorded done
                    // (at the turn's end): a kill in between fetches the page
                    // again (at least once), never loses its links.
                    outlinks(config, scope, turn, log, summary, &released, tag, &resp)?;
                    turn.completions.push((released, outcome, at));
                }
            }
        }
    }
    Ok(())
}

/// Queues what a page leads to: its redirect's target, or its links
/// (scope, nofollow and rel=nofollow applied).
#[allow(clippy::too_many_arguments)]
fn outlinks(
    config: &CrawlConfig,
    scope: &Scope,
    turn: &mut Turn,
    log: &mut Log,
    summary: &mut Summary,
    released: &Released,
    tag: Tag,
    resp: &PageResponse,
) -> Result<(), CrawlError> {
    if tag.sitemap && (200..300).contains(&resp.status) {
        return sitemap_entries(scope, turn, log, summary, released, tag, resp);
    }
    let page = match url::Url::parse(&released.url) {
        Ok(u) => u,
        Err(_) => return Ok(()),
    };
    if (300..400).contains(&resp.status) {
        if let Some(loc) = resp.header("location") {
            if tag.hops >= config.max_redirects {
                skip(
                    log,
                    summary,
                    loc,
                    "redirect-limit",
                    &format!("more than {} redirects", config.max_redirects),
                )?;
            } else {
                let next = Tag {
                    hops: tag.hops + 1,
                    retries: 0,
                    ..tag
                };
                follow(
                    turn,
                    scope,
                    log,
                    summary,
                    &page,
                    loc,
                    next,
                    u32::from(tag.depth),
                )?;
            }
        }
        return Ok(());
    }
    let html = resp
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().contains("html"));
    let encoded = resp
        .header("content-encoding")
        .is_some_and(|e| !e.eq_ignore_ascii_case("identity"));
    if !(200..300).contains(&resp.status) || !html || encoded {
        return Ok(());
    }
    let x_robots = links::x_robots_tag(
        resp.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("x-robots-tag"))
            .map(|(_, v)| v.as_str()),
        &config.agent,
    );
    let found = links::extract(&resp.body, &page, &config.agent, config.follow_rel_nofollow);
    for l in &found.rel_nofollow {
        skip(
            log,
            summary,
            l.as_str(),
            "rel-nofollow",
            "the link has rel=nofollow",
        )?;
    }
    if found.directives.nofollow || x_robots.nofollow {
        for l in &found.links {
            skip(
                log,
                summary,
                l.as_str(),
                "nofollow",
                &format!("{} says nofollow", released.url),
            )?;
        }
        return Ok(());
    }
    let depth = u32::from(tag.depth) + 1;
    let next = Tag {
        depth: u16::try_from(depth).unwrap_or(u16::MAX),
        ..Tag::default()
    };
    for l in found.links {
        if let Some(c) = candidate(scope, log, summary, &page, l.as_str(), next, depth)? {
            turn.candidates.push(c);
        }
    }
    Ok(())
}

/// Queues a fetched sitemap's entries: pages, and the sitemaps an index
/// lists (bounded by `mannerly-sitemap`'s limits; the location rule
/// applies).
fn sitemap_entries(
    scope: &Scope,
    turn: &mut Turn,
    log: &mut Log,
    summary: &mut Summary,
    released: &Released,
    tag: Tag,
    resp: &PageResponse,
) -> Result<(), CrawlError> {
    let Ok(base) = url::Url::parse(&released.url) else {
        return Ok(());
    };
    let rule = mannerly_sitemap::LocationRule::new(&base);
    let parser = mannerly_sitemap::SitemapParser::from_bytes(
        &resp.body,
        mannerly_sitemap::Options::default(),
        Some(rule),
    );
    let depth = u32::from(tag.depth) + 1;
    for entry in parser {
        let (loc, sitemap, lastmod) = match &entry {
            mannerly_sitemap::Entry::Url(u) => (&u.loc, false, &u.lastmod),
            mannerly_sitemap::Entry::Sitemap(s) => (&s.loc, true, &s.lastmod),
        };
        // The entry as the sitemap gave it, its lastmod kept in the log.
        log.line(&LogLine {
            time: UnixMillis::now().to_rfc3339_millis(),
            kind: "sitemap-entry",
            url: loc,
            lastmod: lastmod.as_ref().map(|l| l.raw.as_str()),
            from: Some(&released.url),
            reason: sitemap.then_some("a sitemap listed by an index"),
            ..LogLine::default()
        })?;
        let next = Tag {
            depth: u16::try_from(depth).unwrap_or(u16::MAX),
            sitemap,
            ..Tag::default()
        };
        if let Some(c) = candidate(scope, log, summary, &base, loc, next, depth)? {
            turn.candidates.push(c);
        }
        summary.sitemap_entries += 1;
    }
    Ok(())
}

/// A link that is in scope, to be offered to the frontier.
struct Candidate {
    url: String,
    priority: u8,
    tag: u32,
}

/// Resolves `link` against `page` and checks its scope: the URL to offer,
/// or `None` when it was logged as skipped.
fn candidate(
    scope: &Scope,
    log: &mut Log,
    summary: &mut Summary,
    page: &url::Url,
    link: &str,
    tag: Tag,
    depth: u32,
) -> Result<Option<Candidate>, CrawlError> {
    let url = match CrawlUrl::join(Some(page), link) {
        Ok(u) => u,
        Err(e) => {
            skip(log, summary, link, "unusable-url", &e.to_string())?;
            return Ok(None);
        }
    };
    if let Err(why) = scope.check(&url, depth) {
        skip(log, summary, url.as_str(), "out-of-scope", &why.to_string())?;
        return Ok(None);
    }
    Ok(Some(Candidate {
        url: url.as_str().to_owned(),
        priority: 255u8.saturating_sub(u8::try_from(depth).unwrap_or(255)),
        tag: tag.pack(),
    }))
}

/// Offers candidates to the frontier, a few hundred per call (one round
/// trip each on a networked frontier), and logs those it turned away.
async fn offer_all<F: CrawlFrontier>(
    frontier: &mut F,
    log: &mut Log,
    summary: &mut Summary,
    candidates: &[Candidate],
) -> Result<(), CrawlError> {
    for chunk in candidates.chunks(256) {
        let offers: Vec<Offer<'_>> = chunk
            .iter()
            .map(|c| Offer {
                url: &c.url,
                priority: c.priority,
                tag: c.tag,
            })
            .collect();
        let answers = Frontier::enqueue_many(frontier, &offers, UnixMillis::now()).await?;
        for (c, a) in chunk.iter().zip(answers) {
            let url = c.url.as_str();
            match a {
                Admission::Queued | Admission::Duplicate => {}
                Admission::Backpressure { reason } => {
                    skip(log, summary, url, "backpressure", &reason)?
                }
                Admission::Skipped { reason } => skip(log, summary, url, "host-skipped", &reason)?,
                Admission::Unresolved { host } => skip(log, summary, url, "unresolved", &host)?,
            }
        }
    }
    Ok(())
}

/// Resolves and scopes one link, to be offered at the turn's end.
#[allow(clippy::too_many_arguments)]
fn follow(
    turn: &mut Turn,
    scope: &Scope,
    log: &mut Log,
    summary: &mut Summary,
    page: &url::Url,
    link: &str,
    tag: Tag,
    depth: u32,
) -> Result<(), CrawlError> {
    match candidate(scope, log, summary, page, link, tag, depth)? {
        Some(c) => {
            turn.candidates.push(c);
            Ok(())
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_are_read_and_matched_as_ranges() {
        assert_eq!(media_type(Some("Text/HTML; charset=utf-8")), "text/html");
        assert_eq!(media_type(None), "application/octet-stream");
        assert_eq!(media_type(Some(" ; x=1")), "application/octet-stream");
        let wanted = vec!["text/html".to_owned(), "image/*".to_owned()];
        assert!(content_type_wanted(&wanted, "text/html"));
        assert!(content_type_wanted(&wanted, "image/png"));
        assert!(!content_type_wanted(&wanted, "text/plain"));
        assert!(!content_type_wanted(&wanted, "imagex/png"));
        assert!(content_type_wanted(&[], "anything/at-all"));
    }

    #[test]
    fn holds_are_counted_by_kind() {
        let mut f = LocalFrontier::in_memory(
            Politeness::new(PoliteConfig {
                min_delay: 5_000,
                ..PoliteConfig::default()
            }),
            FrontierConfig::default(),
        );
        let t = UnixMillis::from_secs(1_000);
        f.enqueue("https://a.test/1", 1, t).expect("enqueue");
        f.enqueue("https://b.test/1", 1, t).expect("enqueue");
        f.robots_unavailable("https://b.test", t.add_millis(60_000), "503", t)
            .expect("unavailable");
        let Next::Fetch(r) = f.next(t).expect("next") else {
            panic!("a.test's robots.txt first")
        };
        f.robots_known(
            "https://a.test",
            RobotsPacing::default(),
            t.add_millis(1 << 30),
            t,
        )
        .expect("known");
        f.complete(
            &r,
            &Outcome::Status {
                status: 200,
                latency: 0,
                retry_after: None,
            },
            t,
        )
        .expect("complete");
        let a = f.why_not_now("https://a.test/1", t).expect("a.test waits");
        let b = f.why_not_now("https://b.test/1", t).expect("b.test waits");
        assert_eq!(hold_kind(&a), "host delay (Crawl-delay or backoff)", "{a}");
        assert_eq!(hold_kind(&b), "robots.txt unavailable", "{b}");
    }
}
