//! Discovery and walking: the sitemaps a robots.txt names (and, optionally,
//! the well-known paths), fetched through mannerly's HTTP layer, indexes
//! followed with a depth limit, cycles detected by final URL after
//! redirects.
//!
//! Bodies stream: the HTTP body feeds the parser through a bounded channel,
//! so a 50 MiB sitemap is never held whole; entries go out through a
//! channel as they are parsed. Sitemaps are fetched one at a time.

use std::collections::{HashSet, VecDeque};
use std::io::{self, Read};
use std::sync::Arc;

use mannerly_fetch::policy::{OriginState, PolicyConfig};
use mannerly_fetch::{Access, Fetcher, GetOutcome, HttpFetcher, Origin, Validators};
use tokio::sync::mpsc;
use url::Url;

use crate::{Entry, Kind, LocationRule, Options, SitemapParser, Summary, UrlEntry};

/// How far to walk.
#[derive(Debug, Clone)]
pub struct WalkConfig {
    /// Parser limits for each sitemap.
    pub options: Options,
    /// Sitemaps named by robots.txt (or given) are depth 0; an index's
    /// children are one deeper. Deeper than this is not fetched (5).
    pub max_depth: usize,
    /// Sitemaps fetched at most per walk (1,000).
    pub max_sitemaps: usize,
    /// Also try well-known paths (`/sitemap.xml`, `/sitemap_index.xml`, …)
    /// that robots.txt does not name. Off by default: it costs a dozen
    /// requests per host.
    pub probe_known_paths: bool,
    /// The whole walk's time limit (300 s): what is left then is skipped,
    /// and a fetch or parse under way is cut. Each fetch also has its own
    /// total deadline (`FetchConfig::total_timeout`).
    pub deadline: std::time::Duration,
}

impl Default for WalkConfig {
    fn default() -> Self {
        WalkConfig {
            options: Options::default(),
            max_depth: 5,
            max_sitemaps: 1_000,
            probe_known_paths: false,
            deadline: std::time::Duration::from_secs(300),
        }
    }
}

/// Where a walk starts.
#[derive(Debug, Clone)]
pub enum Start {
    /// The robots.txt of the origin of this URL.
    Robots(Url),
    /// These sitemaps.
    Sitemaps(Vec<Url>),
}

/// How a sitemap was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// Given by the caller.
    Given,
    /// Named by a Sitemap line in robots.txt.
    Robots,
    /// Listed in a sitemap index.
    Index,
    /// Tried at a well-known path (`/sitemap.xml`).
    KnownPath,
}

/// What happened to one sitemap.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum VisitResult {
    /// Fetched and parsed.
    Parsed {
        /// What the parse saw.
        summary: Summary,
    },
    /// Not fetched.
    Skipped {
        /// Why.
        reason: String,
    },
    /// Fetched, but it failed.
    Failed {
        /// Why.
        reason: String,
    },
}

/// One sitemap of the walk.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Visited {
    /// The URL as listed.
    pub url: String,
    /// The URL that answered, after redirects.
    pub final_url: Option<String>,
    /// How many index levels down (0 for a root).
    pub depth: usize,
    /// The robots.txt or index that listed it.
    pub parent: Option<String>,
    /// How it was found.
    pub via: Via,
    #[serde(flatten)]
    /// What became of it.
    pub result: VisitResult,
}

/// The robots.txt the walk started from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RobotsNote {
    /// The robots.txt URL.
    pub url: String,
    /// The robots state's reason (e.g. `404 at …: robots.txt is unavailable…`).
    pub reason: String,
    /// Its Sitemap lines.
    pub sitemaps: Vec<String>,
    /// robots.txt could not be read (unreachable, 429 or 5xx, the walk's
    /// deadline), so which sitemaps it names is unknown. A 4xx is read: it
    /// names none.
    pub unreadable: bool,
}

/// Everything a walk did.
///
/// # Memory bound
///
/// Whatever the sites serve, a walk holds at most `max_sitemaps` queued or
/// fetched sitemaps (each URL under 2,048 characters, twice over with the
/// URL it redirected to), one [`Visited`] per fetched sitemap, at most
/// [`MAX_SKIPS_LISTED`] skipped ones (every skip is counted in
/// [`skipped`](Self::skipped)), and one sitemap being parsed (the parser's
/// own bound). With the defaults that is a few megabytes, however many
/// children the indexes list: children are deduplicated and dropped at the
/// limit as they are read, never queued past it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct WalkReport {
    /// The robots.txt read for discovery, if any.
    pub robots: Option<RobotsNote>,
    /// Every sitemap fetched, and the first [`MAX_SKIPS_LISTED`] skipped.
    pub sitemaps: Vec<Visited>,
    /// Sitemaps not fetched, counted by why.
    pub skipped: std::collections::BTreeMap<String, u64>,
}

/// Skipped sitemaps listed one by one in a [`WalkReport`]; the rest are
/// only counted.
pub const MAX_SKIPS_LISTED: usize = 100;

impl WalkReport {
    /// Counts a skip, and lists it while fewer than [`MAX_SKIPS_LISTED`]
    /// are.
    fn skip(&mut self, mut visit: Visited, kind: &str, reason: String) {
        *self.skipped.entry(kind.to_owned()).or_default() += 1;
        let listed = self
            .sitemaps
            .iter()
            .filter(|v| matches!(v.result, VisitResult::Skipped { .. }))
            .count();
        if listed < MAX_SKIPS_LISTED {
            visit.result = VisitResult::Skipped { reason };
            self.sitemaps.push(visit);
        }
    }
}

/// A page found in a sitemap.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The final URL of the sitemap that listed it.
    pub sitemap: String,
    /// The page entry.
    pub entry: UrlEntry,
}

/// Well-known sitemap locations sites use without naming them.
pub const KNOWN_PATHS: &[&str] = &[
    "/sitemap.xml",
    "/sitemap.xml.gz",
    "/sitemap_index.xml",
    "/sitemap-index.xml",
    "/sitemap_index.xml.gz",
    "/sitemap-index.xml.gz",
    "/.sitemap.xml",
    "/sitemap",
    "/sitemap/sitemap.xml",
    "/sitemap/index.xml",
];

/// Feeds HTTP body chunks to the synchronous parser.
struct ChannelReader {
    rx: mpsc::Receiver<bytes::Bytes>,
    cur: bytes::Bytes,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.cur.is_empty() {
            match self.rx.blocking_recv() {
                Some(b) => self.cur = b,
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.cur.len());
        buf[..n].copy_from_slice(&self.cur[..n]);
        self.cur = self.cur.slice(n..);
        Ok(n)
    }
}

/// A walk under way.
#[derive(Default)]
struct WalkState {
    report: WalkReport,
    queue: VecDeque<Job>,
    /// Sitemaps queued or fetched (as listed and as redirected to).
    known: HashSet<String>,
    fetched: usize,
}

impl WalkState {
    /// A visit that failed, reported (unless it was a probe of a known
    /// path: those are silent).
    fn fail(&mut self, mut visit: Visited, probe: bool, reason: String) {
        if !probe {
            visit.result = VisitResult::Failed { reason };
            self.report.sitemaps.push(visit);
        }
    }

    /// A visit redirected to a sitemap already visited.
    fn duplicate(&mut self, visit: Visited, probe: bool, to: &str) {
        if !probe {
            let reason = format!("redirected to {to}, already visited: a cycle or a duplicate");
            self.report.skip(visit, "duplicate", reason);
        }
    }
}

impl Job {
    /// A job at depth 0 (or set later), found `via` from `parent`.
    fn given(url: Url, via: Via, parent: Option<String>, cross: Vec<Url>) -> Job {
        Job {
            url,
            depth: 0,
            parent,
            via,
            cross,
        }
    }

    /// Its entry in the report, before anything is known of it.
    fn visit(&self) -> Visited {
        Visited {
            url: self.url.to_string(),
            final_url: None,
            depth: self.depth,
            parent: self.parent.clone(),
            via: self.via,
            result: VisitResult::Skipped {
                reason: String::new(),
            },
        }
    }
}

struct Job {
    url: Url,
    depth: usize,
    parent: Option<String>,
    via: Via,
    /// Robots.txt URLs whose origins cross-submitted this sitemap (or its index).
    cross: Vec<Url>,
}

/// Walks sitemaps over HTTP.
pub struct Walker {
    fetcher: Arc<HttpFetcher>,
    config: WalkConfig,
}

impl Walker {
    /// A walker fetching through `fetcher`.
    pub fn new(fetcher: HttpFetcher, config: WalkConfig) -> Walker {
        Walker {
            fetcher: Arc::new(fetcher),
            config,
        }
    }

    /// Walks from `start`, sending every page found to `found` as it is
    /// parsed (the walk slows down if the receiver does; it stops sending if
    /// the receiver is dropped).
    pub async fn walk(&self, start: Start, found: mpsc::Sender<Found>) -> WalkReport {
        let deadline = tokio::time::Instant::now() + self.config.deadline;
        let mut w = WalkState::default();
        match start {
            Start::Sitemaps(urls) => {
                for url in urls {
                    self.offer(&mut w, Job::given(url, Via::Given, None, Vec::new()));
                }
            }
            Start::Robots(site) => self.start_from_robots(&mut w, site, deadline).await,
        }
        while let Some(job) = w.queue.pop_front() {
            let mut visit = job.visit();
            if tokio::time::Instant::now() >= deadline {
                let secs = self.config.deadline.as_secs();
                let reason = format!("the walk's deadline of {secs} s passed");
                w.report.skip(visit, "deadline", reason);
                continue;
            }
            w.fetched += 1;
            let Some((final_url, response)) = self.fetch(&mut w, &job, &mut visit, deadline).await
            else {
                continue;
            };
            let fetched = (final_url, response);
            self.read(&mut w, (job, visit), fetched, deadline, &found)
                .await;
        }
        w.report
    }

    /// The sitemaps robots.txt of `site` lists (and the known paths, when
    /// probed) are queued.
    async fn start_from_robots(
        &self,
        w: &mut WalkState,
        site: Url,
        deadline: tokio::time::Instant,
    ) {
        let discovered = tokio::time::timeout_at(deadline, self.discover(&site)).await;
        let (note, listed) = discovered.unwrap_or_else(|_| {
            let note = RobotsNote {
                url: site.to_string(),
                reason: "the walk's deadline passed while robots.txt was fetched".into(),
                sitemaps: Vec::new(),
                unreadable: true,
            };
            (note, Vec::new())
        });
        let robots_url = Url::parse(&note.url).ok();
        for url in listed {
            let cross = robots_url.iter().cloned().collect();
            self.offer(
                w,
                Job::given(url, Via::Robots, Some(note.url.clone()), cross),
            );
        }
        if self.config.probe_known_paths {
            for path in KNOWN_PATHS {
                if let Ok(url) = site.join(path) {
                    self.offer(w, Job::given(url, Via::KnownPath, None, Vec::new()));
                }
            }
        }
        w.report.robots = Some(note);
    }

    /// Fetches a job's sitemap: its final URL and a 2xx response, or
    /// `None` once the visit is reported (failed, or skipped as a
    /// duplicate; a known path that is not there is not reported).
    async fn fetch(
        &self,
        w: &mut WalkState,
        job: &Job,
        visit: &mut Visited,
        deadline: tokio::time::Instant,
    ) -> Option<(Url, reqwest::Response)> {
        let known = &w.known;
        let got = tokio::time::timeout_at(
            deadline,
            self.fetcher
                .get_unless(&job.url, |next| known.contains(next.as_str())),
        )
        .await;
        let probe = job.via == Via::KnownPath;
        let Ok(outcome) = got else {
            w.fail(
                visit.clone(),
                false,
                "the walk's deadline passed during the fetch".into(),
            );
            return None;
        };
        let (final_url, response) = match outcome {
            GetOutcome::Stopped { at, .. } => {
                visit.final_url = Some(at.to_string());
                w.duplicate(visit.clone(), probe, at.as_ref());
                return None;
            }
            GetOutcome::Response {
                final_url,
                response,
                ..
            } => (final_url, response),
            GetOutcome::TooManyRedirects { redirects, is_loop } => {
                let reason = if is_loop {
                    format!("redirect loop after {} hops", redirects.len())
                } else {
                    format!("more than {} redirects", redirects.len().saturating_sub(1))
                };
                w.fail(visit.clone(), probe, reason);
                return None;
            }
            GetOutcome::Network { error, detail, .. } => {
                w.fail(
                    visit.clone(),
                    probe,
                    format!("{}: {detail}", error.describe()),
                );
                return None;
            }
        };
        let final_s = final_url.to_string();
        visit.final_url = Some(final_s.clone());
        if final_s != visit.url && !w.known.insert(final_s.clone()) {
            w.duplicate(visit.clone(), probe, &final_s);
            return None;
        }
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            w.fail(visit.clone(), probe, format!("HTTP {status}"));
            return None;
        }
        Some((final_url, response))
    }

    /// Reads a fetched sitemap: its pages to `found`, its report entry,
    /// and an index's children queued.
    async fn read(
        &self,
        w: &mut WalkState,
        (job, mut visit): (Job, Visited),
        (final_url, response): (Url, reqwest::Response),
        deadline: tokio::time::Instant,
        found: &mpsc::Sender<Found>,
    ) {
        let mut rule = LocationRule::new(&final_url);
        for r in &job.cross {
            rule = rule.cross_submitted_by(r);
        }
        let final_s = final_url.to_string();
        // Children are kept only while the walk has room for them.
        let room = self
            .config
            .max_sitemaps
            .saturating_sub(w.fetched + w.queue.len());
        let parse = self.parse_streaming(response, rule, final_s.clone(), found.clone(), room);
        let Ok((summary, children, over)) = tokio::time::timeout_at(deadline, parse).await else {
            let reason = "the walk's deadline passed while the sitemap was read".into();
            w.fail(visit, false, reason);
            return;
        };
        if job.via == Via::KnownPath && summary.kind.is_none() {
            return;
        }
        let is_index = summary.kind == Some(Kind::Index);
        visit.result = VisitResult::Parsed { summary };
        w.report.sitemaps.push(visit);
        if !is_index {
            return;
        }
        if over > 0 {
            *w.report.skipped.entry("limit".into()).or_default() += over as u64;
        }
        for child in children {
            if let Ok(url) = Url::parse(&child) {
                let mut next =
                    Job::given(url, Via::Index, Some(final_s.clone()), job.cross.clone());
                next.depth = job.depth + 1;
                self.offer(w, next);
            }
        }
    }

    /// Queues a sitemap unless it is a duplicate, too deep, robots.txt, or
    /// past the walk's limit (then it is counted as skipped).
    fn offer(&self, w: &mut WalkState, job: Job) {
        let listed = job.url.to_string();
        if w.known.contains(&listed) {
            if job.via != Via::KnownPath {
                let reason = "already visited: a cycle or a duplicate listing".to_owned();
                w.report.skip(job.visit(), "duplicate", reason);
            }
            return;
        }
        if job.url.path() == "/robots.txt" && job.via == Via::Index {
            let reason =
                "robots.txt is not a sitemap (an index pointing back at robots.txt)".to_owned();
            w.report.skip(job.visit(), "robots.txt", reason);
            return;
        }
        if job.depth > self.config.max_depth {
            let reason = format!("index nesting deeper than {}", self.config.max_depth);
            w.report.skip(job.visit(), "depth", reason);
            return;
        }
        if w.fetched + w.queue.len() >= self.config.max_sitemaps {
            let reason = format!(
                "the walk's limit of {} sitemaps was reached",
                self.config.max_sitemaps
            );
            w.report.skip(job.visit(), "limit", reason);
            return;
        }
        w.known.insert(listed);
        w.queue.push_back(job);
    }

    /// Walks and collects every page (for tests and small sites).
    pub async fn walk_collect(&self, start: Start) -> (WalkReport, Vec<Found>) {
        let (tx, mut rx) = mpsc::channel(1024);
        let collect = tokio::spawn(async move {
            let mut all = Vec::new();
            while let Some(f) = rx.recv().await {
                all.push(f);
            }
            all
        });
        let report = self.walk(start, tx).await;
        let pages = collect.await.unwrap_or_default();
        (report, pages)
    }

    /// Fetches the robots.txt of `site`'s origin the way crawlers do and
    /// returns the sitemaps it names.
    async fn discover(&self, site: &Url) -> (RobotsNote, Vec<Url>) {
        let Ok(origin) = Origin::of_url(site) else {
            return (
                RobotsNote {
                    url: site.to_string(),
                    reason: "not an http(s) URL".into(),
                    sitemaps: Vec::new(),
                    unreadable: true,
                },
                Vec::new(),
            );
        };
        let outcome = self.fetcher.fetch(&origin, &Validators::default()).await;
        let mut state = OriginState::new(origin.clone());
        let decision = state
            .apply(
                &outcome,
                mannerly_fetch::UnixMillis::now(),
                &PolicyConfig::default(),
            )
            .clone();
        let robots_url = origin.robots_url();
        let base = Url::parse(&robots_url).ok();
        let mut listed = Vec::new();
        if let Access::Rules(robots) = &decision.access {
            for s in robots.sitemaps() {
                // Relative Sitemap values are resolved against robots.txt.
                let url = Url::parse(&s.url)
                    .ok()
                    .or_else(|| base.as_ref().and_then(|b| b.join(&s.url).ok()));
                if let Some(u) = url {
                    if !listed.contains(&u) {
                        listed.push(u);
                    }
                }
            }
        }
        (
            RobotsNote {
                url: robots_url,
                unreadable: matches!(decision.access, Access::DisallowAll),
                reason: decision.reason,
                sitemaps: listed.iter().map(Url::to_string).collect(),
            },
            listed,
        )
    }

    /// Streams a response body through the parser on a blocking thread.
    async fn parse_streaming(
        &self,
        mut response: reqwest::Response,
        rule: LocationRule,
        sitemap: String,
        found: mpsc::Sender<Found>,
        room: usize,
    ) -> (Summary, Vec<String>, usize) {
        let (tx, rx) = mpsc::channel::<bytes::Bytes>(16);
        let options = self.config.options.clone();
        let parse = tokio::task::spawn_blocking(move || {
            let reader = ChannelReader {
                rx,
                cur: bytes::Bytes::new(),
            };
            let mut parser = SitemapParser::new(reader, options, Some(rule));
            let mut children = Vec::new();
            let mut listed = HashSet::new();
            let mut over = 0usize;
            let mut receiver_gone = false;
            for entry in parser.by_ref() {
                match entry {
                    Entry::Url(u) => {
                        if !receiver_gone {
                            let f = Found {
                                sitemap: sitemap.clone(),
                                entry: u,
                            };
                            receiver_gone = found.blocking_send(f).is_err();
                        }
                    }
                    // Kept only while the walk has room (a child listed
                    // twice once); the rest counted.
                    Entry::Sitemap(s) if listed.contains(&s.loc) => {}
                    Entry::Sitemap(s) if children.len() < room => {
                        listed.insert(s.loc.clone());
                        children.push(s.loc);
                    }
                    Entry::Sitemap(_) => over += 1,
                }
            }
            (parser.finish(), children, over)
        });
        let mut network_error = None;
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if tx.send(chunk).await.is_err() {
                        break; // the parser stopped reading (a limit)
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    network_error = Some(format!("the body was cut: {e}"));
                    break;
                }
            }
        }
        drop(tx);
        let (mut summary, children, over) = parse.await.unwrap_or_else(|e| {
            let s = Summary {
                stop: Some(crate::Stop::Error(format!("parser task failed: {e}"))),
                ..Summary::default()
            };
            (s, Vec::new(), 0)
        });
        if let Some(e) = network_error {
            summary.truncated = true;
            summary.error = Some(e);
        }
        (summary, children, over)
    }
}
