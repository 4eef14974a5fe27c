//! A release whose lease lapsed before its request went out (the worker
//! was stopped, say with SIGSTOP, between the release and the send) must
//! not be sent: another worker of the fleet may hold the host by then, and
//! sending would put two requests on the host too close together. This
//! holds for robots.txt as for pages.
//!
//! The frontier here is the embedded one behind a wrapper whose
//! `send_by` says every first release of a URL has lapsed already: the
//! engine must give each back (cancel) and send it only when it is
//! released again.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mannerly_crawl::engine::{
    crawl_on, Backend, CrawlConfig, CrawlError, CrawlFrontier, CrawlSettings, Local,
};
use mannerly_fetch::Store;
use mannerly_polite::controller::{Outcome, Politeness, RobotsPacing, UnixMillis};
use mannerly_polite::frontier::{
    Admission, Batch, Begin, Frontier, FrontierError, KeyLoad, LocalFrontier, Next, Offer,
    Released, Skipped, Stats,
};
use mannerly_polite::key::KeyError;
use mannerly_testweb::{HostSpec, Reply, TestWeb, WebConfig};

/// What the wrapper saw: per URL, how many releases it declared lapsed
/// and how many cancels came back.
#[derive(Default)]
struct Seen {
    lapsed: HashMap<String, u32>,
    cancelled: HashMap<String, u32>,
}

struct Lapsing {
    inner: LocalFrontier,
    seen: Arc<Mutex<Seen>>,
}

impl Frontier for Lapsing {
    async fn enqueue_tagged(
        &mut self,
        url: &str,
        priority: u8,
        tag: u32,
        now: UnixMillis,
    ) -> Result<Admission, FrontierError> {
        Frontier::enqueue_tagged(&mut self.inner, url, priority, tag, now).await
    }
    async fn enqueue_many(
        &mut self,
        offers: &[Offer<'_>],
        now: UnixMillis,
    ) -> Result<Vec<Admission>, FrontierError> {
        Frontier::enqueue_many(&mut self.inner, offers, now).await
    }
    async fn next(&mut self, now: UnixMillis) -> Result<Next, FrontierError> {
        Frontier::next(&mut self.inner, now).await
    }
    async fn next_batch(&mut self, max: usize, now: UnixMillis) -> Result<Batch, FrontierError> {
        Frontier::next_batch(&mut self.inner, max, now).await
    }
    async fn complete(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        Frontier::complete(&mut self.inner, released, outcome, now).await
    }
    async fn requeue(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        tag: u32,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        Frontier::requeue(&mut self.inner, released, outcome, tag, now).await
    }
    async fn discard(&mut self, released: &Released, now: UnixMillis) -> Result<(), FrontierError> {
        Frontier::discard(&mut self.inner, released, now).await
    }
    async fn robots_unavailable(
        &mut self,
        origin: &str,
        until: UnixMillis,
        reason: &str,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        Frontier::robots_unavailable(&mut self.inner, origin, until, reason, now).await
    }
    fn send_by(&self, released: &Released) -> Option<Instant> {
        // `send_by` is asked once per release the engine goes on with.
        let mut seen = self.seen.lock().expect("lock");
        let n = seen.lapsed.entry(released.url.clone()).or_default();
        if *n == 0 {
            *n = 1;
            Some(Instant::now() - Duration::from_secs(1))
        } else {
            None
        }
    }
    async fn cancel(&mut self, released: &Released, now: UnixMillis) -> Result<(), FrontierError> {
        *self
            .seen
            .lock()
            .expect("lock")
            .cancelled
            .entry(released.url.clone())
            .or_default() += 1;
        Frontier::cancel(&mut self.inner, released, now).await
    }
    async fn robots_known(
        &mut self,
        origin: &str,
        pacing: RobotsPacing,
        valid_until: UnixMillis,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        Frontier::robots_known(&mut self.inner, origin, pacing, valid_until, now).await
    }
    async fn begin_request(&mut self, url: &str, now: UnixMillis) -> Result<Begin, FrontierError> {
        Frontier::begin_request(&mut self.inner, url, now).await
    }
    async fn end_request(
        &mut self,
        url: &str,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        Frontier::end_request(&mut self.inner, url, outcome, now).await
    }
    async fn busiest(&mut self, n: usize) -> Result<Vec<KeyLoad>, FrontierError> {
        Frontier::busiest(&mut self.inner, n).await
    }
    async fn why_not_now(
        &mut self,
        url: &str,
        now: UnixMillis,
    ) -> Result<Option<String>, FrontierError> {
        Frontier::why_not_now(&mut self.inner, url, now).await
    }
    async fn sync(&mut self) -> Result<(), FrontierError> {
        Frontier::sync(&mut self.inner).await
    }
    async fn stats(&mut self) -> Result<Stats, FrontierError> {
        Frontier::stats(&mut self.inner).await
    }
    async fn take_skipped(&mut self) -> Result<Vec<Skipped>, FrontierError> {
        Frontier::take_skipped(&mut self.inner).await
    }
}

impl CrawlFrontier for Lapsing {
    fn key_of(&self, url: &str) -> Result<String, KeyError> {
        CrawlFrontier::key_of(&self.inner, url)
    }
    fn for_each_deferred(
        &mut self,
        now: UnixMillis,
        f: &mut dyn FnMut(&str, &str),
    ) -> Result<(), FrontierError> {
        CrawlFrontier::for_each_deferred(&mut self.inner, now, f)
    }
    fn busiest_hosts(&self, now: UnixMillis) -> Vec<serde_json::Value> {
        CrawlFrontier::busiest_hosts(&self.inner, now)
    }
    fn commit(&mut self) -> Result<(), FrontierError> {
        CrawlFrontier::commit(&mut self.inner)
    }
}

struct LapsingBackend(Arc<Mutex<Seen>>);

impl Backend for LapsingBackend {
    type Frontier = Lapsing;
    fn resumable(&self, out: &Path) -> bool {
        Local.resumable(out)
    }
    async fn settings(
        &self,
        out: &Path,
        fresh: CrawlSettings,
        seeds: &[String],
    ) -> Result<CrawlSettings, CrawlError> {
        Local.settings(out, fresh, seeds).await
    }
    async fn open(
        self,
        out: &Path,
        politeness: Politeness,
    ) -> Result<(Lapsing, Arc<dyn Store>), CrawlError> {
        let (inner, store) = Local.open(out, politeness).await?;
        Ok((
            Lapsing {
                inner,
                seen: self.0,
            },
            store,
        ))
    }
}

fn html(body: &str) -> Reply {
    Reply::text(body).header("Content-Type", "text/html")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_sent_on_a_lease_that_lapsed_before_the_send() {
    let mut config = WebConfig::default();
    config.hosts.insert(
        "a.test".into(),
        HostSpec::default()
            .robots("User-agent: *\nAllow: /\n")
            .route("/", vec![html(r#"<a href="/next">next</a>"#)])
            .route("/next", vec![html("<p>the end</p>")]),
    );
    let web = TestWeb::start(config).await.expect("testweb");
    let resolver = web.resolver();
    let out = tempfile::tempdir().expect("tempdir");
    let crawl_config = CrawlConfig {
        min_delay: Duration::from_millis(50),
        give_up_after: Duration::from_secs(5),
        client_hook: Some(Arc::new(move |b: reqwest::ClientBuilder| {
            b.dns_resolver(resolver.clone())
        })),
        ..CrawlConfig::default()
    };
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let summary = tokio::time::timeout(
        Duration::from_secs(60),
        crawl_on(
            LapsingBackend(seen.clone()),
            crawl_config,
            &[web.url("a.test", "/")],
            out.path(),
            stop,
            |_| {},
        ),
    )
    .await
    .expect("the crawl ends")
    .expect("crawl");
    let robots = web.url("a.test", "/robots.txt");
    let pages = [web.url("a.test", "/"), web.url("a.test", "/next")];
    let seen = seen.lock().expect("lock");
    // Every release was declared lapsed once, and each was given back.
    for url in std::iter::once(&robots).chain(&pages) {
        assert_eq!(
            seen.cancelled.get(url),
            Some(&1),
            "{url}: its lapsed release is cancelled once"
        );
    }
    // Each was then released again and sent once: nothing on the lapsed
    // lease (robots.txt included), nothing lost.
    assert_eq!(web.count("a.test", "/robots.txt"), 1);
    assert_eq!(web.count("a.test", "/"), 1);
    assert_eq!(web.count("a.test", "/next"), 1);
    assert_eq!(summary.pages_by_status.get(&200), Some(&2), "{summary:?}");
    let log = std::fs::read_to_string(out.path().join("log.jsonl")).expect("log");
    let lapsed: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("\"reason\":\"lease-lapsed:"))
        .collect();
    assert_eq!(lapsed.len(), 3, "{log}");
    assert!(
        lapsed.iter().any(|l| l.contains("/robots.txt\"")),
        "the lapsed robots.txt release is logged: {log}"
    );
}
