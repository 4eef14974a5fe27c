//! The crawl's Prometheus families ([`CrawlMetrics`]): fed by the loop as
//! it goes, read by whoever serves the registry (`mannerly crawl
//! --metrics`) and written to `metrics.prom` at the end. Every label value
//! is one of a few fixed words, so a crawl of any number of hosts exposes
//! the same bounded set of series.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mannerly_evidence::Kind;
use mannerly_fetch::Access;
use mannerly_metrics::{status_class, Counter, Family, Gauge, Histogram, Registry, SECONDS};
use mannerly_polite::controller::Pace;
use mannerly_polite::frontier::HostCensus;
use mannerly_time::UnixMillis;

use crate::skip::NotFetched;
use crate::summary::Progress;

/// Slack of a start-to-start gap over the delay required, in seconds; the
/// buckets under zero are requests sooner than their delay (never, by the
/// frontier's construction: they are there to show it).
const SLACK: &[f64] = &[
    -1.0, -0.1, -0.001, 0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// The crawl's families.
pub struct CrawlMetrics {
    registry: Arc<Registry>,
    requests: Arc<Family<Counter>>,
    duration: Arc<Family<Histogram>>,
    response_bytes: Arc<Counter>,
    warc_bytes: Arc<Counter>,
    warc_seen: AtomicU64,
    slack: Arc<Histogram>,
    hosts: Arc<Family<Gauge>>,
    frontier: Arc<Family<Gauge>>,
    robots: Arc<Family<Counter>>,
    not_fetched: Arc<Family<Counter>>,
    retry_after: Arc<Counter>,
}

impl std::fmt::Debug for CrawlMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrawlMetrics").finish_non_exhaustive()
    }
}

impl CrawlMetrics {
    /// The families, registered in `registry` (with the process ones when
    /// the registry has them).
    pub fn new(registry: Arc<Registry>) -> Arc<CrawlMetrics> {
        let r = &registry;
        let requests = r.counter(
            "mannerly_requests_total",
            "Requests sent, each counted under what it fetches (a robots.txt redirect hop is robots; a page's redirect or retry is page), by status class.",
            &["kind", "code"],
        );
        let duration = r.histogram(
            "mannerly_request_duration_seconds",
            "From sending a request to its response head (or its failure).",
            &["kind"],
            SECONDS,
        );
        let one = |name, help| r.counter(name, help, &[]).with(&[]);
        let m = CrawlMetrics {
            response_bytes: one("mannerly_response_bytes_total", "Body bytes received for pages and sitemaps."),
            warc_bytes: one("mannerly_warc_bytes_total", "Bytes written to WARC files."),
            slack: r
                .histogram(
                    "mannerly_delay_slack_seconds",
                    "For each request after a host's first: the start-to-start gap minus the delay required then.",
                    &[],
                    SLACK,
                )
                .with(&[]),
            hosts: r.gauge("mannerly_hosts", "Hosts by state.", &["state"]),
            frontier: r.gauge("mannerly_frontier_urls", "URLs by state.", &["state"]),
            robots: r.counter(
                "mannerly_robots_fetches_total",
                "robots.txt fetches by what they decided: rules, allow_all (4xx) or unavailable (5xx, 429, network).",
                &["outcome"],
            ),
            not_fetched: r.counter("mannerly_not_fetched_total", "URLs not fetched, by reason.", &["reason"]),
            retry_after: one("mannerly_retry_after_total", "Responses that carried Retry-After."),
            warc_seen: AtomicU64::new(0),
            requests,
            duration,
            registry: registry.clone(),
        };
        for (kind, code) in [("robots", "2xx"), ("page", "2xx")] {
            m.requests.with(&[kind, code]);
        }
        Arc::new(m)
    }

    /// Requests counted so far, over every kind and code.
    pub fn requests_sent(&self) -> u64 {
        self.requests.sum()
    }

    /// The registry the families are in.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// One request answered (`status`) or not (`None`) after `took`.
    pub fn request(&self, kind: Kind, status: Option<u16>, took: Duration, retry_after: bool) {
        let kind = kind.as_str();
        self.requests.with(&[kind, status_class(status)]).inc();
        self.duration.with(&[kind]).observe(took.as_secs_f64());
        if retry_after {
            self.retry_after.inc();
        }
    }

    /// Body bytes received.
    pub fn body(&self, bytes: u64) {
        self.response_bytes.add(bytes);
    }

    /// The WARC writer's total so far (only what is new is added).
    pub fn warc_total(&self, total: u64) {
        let before = self.warc_seen.fetch_max(total, Ordering::Relaxed);
        self.warc_bytes.add(total.saturating_sub(before));
    }

    /// A host's request released at `now`, held to `pace`.
    pub fn released(&self, pace: &Pace, now: UnixMillis) {
        if let Some(prev) = pace.previous_start {
            let gap = now.0.saturating_sub(prev.0) as f64 / 1000.0;
            self.slack.observe(gap - pace.required_ms as f64 / 1000.0);
        }
    }

    /// A robots.txt decision made by a fetch.
    pub fn robots(&self, access: &Access) {
        let outcome = match access {
            Access::Rules(_) => "rules",
            Access::AllowAll => "allow_all",
            _ => "unavailable",
        };
        self.robots.with(&[outcome]).inc();
    }

    /// A URL not fetched, and why.
    pub fn not_fetched(&self, why: NotFetched) {
        self.not_fetched.with(&[why.label()]).inc();
    }

    /// The hosts by state, when the frontier can tell.
    pub fn census(&self, c: &HostCensus) {
        for (state, n) in c.states() {
            self.hosts.with(&[state]).set(n as i64);
        }
    }

    /// URLs by state: queued, in flight, done, and deferred (left queued
    /// when the crawl gave up).
    pub fn urls(&self, queued: u64, in_flight: u64, done: u64, deferred: u64) {
        for (state, n) in [
            ("queued", queued),
            ("in_flight", in_flight),
            ("done", done),
            ("deferred", deferred),
        ] {
            self.frontier.with(&[state]).set(n as i64);
        }
    }
}

/// The gauges of one snapshot: hosts by state (when the frontier can
/// tell), URLs by state, and the WARC total.
pub(crate) fn gauges(
    m: &CrawlMetrics,
    s: &Progress,
    census: Option<HostCensus>,
    deferred: u64,
    warc: u64,
) {
    if let Some(c) = census {
        m.census(&c);
    }
    m.urls(
        s.queued.saturating_sub(deferred),
        s.in_flight as u64,
        s.pages,
        deferred,
    );
    m.warc_total(warc);
}

/// robots.txt requests (each redirect hop) as the fetcher answers them.
impl mannerly_fetch::SendHook for CrawlMetrics {
    fn sending(&self, _url: &url::Url) -> Result<(), mannerly_fetch::NotSent> {
        Ok(())
    }

    fn answered(&self, _url: &url::Url, status: Option<u16>, took: Duration, retry_after: bool) {
        self.request(Kind::Robots, status, took, retry_after);
    }
}
