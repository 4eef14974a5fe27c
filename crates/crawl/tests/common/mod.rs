//! A frontier for the engine's tests: the embedded one, wrapped so that
//! a test is told what the engine does to it (and can say that a release
//! has lapsed).

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mannerly_crawl::{
    crawl_on, Backend, CrawlConfig, CrawlDir, CrawlError, CrawlFrontier, CrawlSettings, Local,
    Summary,
};
use mannerly_fetch::Store;
use mannerly_polite::controller::{Outcome, Politeness, RobotsPacing, UnixMillis};
use mannerly_polite::frontier::{
    Admission, Batch, Begin, Frontier, FrontierError, KeyLoad, LocalFrontier, Next, Offer,
    Released, Skipped, Stats,
};
use mannerly_polite::key::KeyError;
use mannerly_testweb::{Reply, TestWeb};

/// An HTML page.
pub fn html(body: &str) -> Reply {
    Reply::text(body).header("Content-Type", "text/html")
}

/// Crawls `web` (its names resolved to it) from `seeds` at `min_delay`
/// on a frontier that tells `hooks`, giving up after 5 s of nothing to do;
/// the crawl must end within a minute.
pub async fn crawl<H: Hooks>(
    hooks: Arc<H>,
    web: &TestWeb,
    min_delay: Duration,
    seeds: &[String],
    out: &Path,
) -> Summary {
    let resolver = web.resolver();
    let config = CrawlConfig {
        min_delay,
        give_up_after: Duration::from_secs(5),
        client_hook: Some(Arc::new(move |b: reqwest::ClientBuilder| {
            b.dns_resolver(resolver.clone())
        })),
        ..CrawlConfig::default()
    };
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    tokio::time::timeout(
        Duration::from_secs(60),
        crawl_on(WatchedBackend(hooks), config, seeds, out, stop, |_| {}),
    )
    .await
    .expect("the crawl ends")
    .expect("crawl")
}

/// What a test hears of the engine's calls (each before the call goes on
/// to the embedded frontier).
pub trait Hooks: Send + Sync + 'static {
    /// The frontier's answer to `send_by` (the embedded one has none).
    fn send_by(&self, _released: &Released) -> Option<Instant> {
        None
    }
    /// A release given back.
    fn cancelled(&self, _released: &Released) {}
    /// URLs offered in one call.
    fn offered(&self, _offers: &[Offer<'_>]) {}
    /// A release recorded done.
    fn completed(&self, _released: &Released) {}
}

/// The embedded frontier, with `H` told of what the engine does to it.
pub struct Watched<H> {
    inner: LocalFrontier,
    hooks: Arc<H>,
}

impl<H: Hooks> Frontier for Watched<H> {
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
        self.hooks.offered(offers);
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
        self.hooks.completed(released);
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
        self.hooks.send_by(released)
    }
    async fn cancel(&mut self, released: &Released, now: UnixMillis) -> Result<(), FrontierError> {
        self.hooks.cancelled(released);
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
    ) -> Result<Option<mannerly_polite::frontier::Hold>, FrontierError> {
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

impl<H: Hooks> CrawlFrontier for Watched<H> {
    fn key_of(&self, url: &str) -> Result<String, KeyError> {
        CrawlFrontier::key_of(&self.inner, url)
    }
    fn for_each_deferred(
        &mut self,
        now: UnixMillis,
        f: &mut dyn FnMut(&str, Option<&mannerly_polite::frontier::Hold>),
    ) -> Result<(), FrontierError> {
        CrawlFrontier::for_each_deferred(&mut self.inner, now, f)
    }
    fn busiest_hosts(&self, now: UnixMillis) -> Vec<mannerly_crawl::BusyHost> {
        CrawlFrontier::busiest_hosts(&self.inner, now)
    }
    fn pace(&self, key: &str) -> mannerly_polite::controller::Pace {
        CrawlFrontier::pace(&self.inner, key)
    }
    fn commit(&mut self) -> Result<(), FrontierError> {
        CrawlFrontier::commit(&mut self.inner)
    }
}

/// Crawls on a [`Watched`] frontier (over the embedded one on disk).
pub struct WatchedBackend<H>(pub Arc<H>);

impl<H: Hooks> Backend for WatchedBackend<H> {
    type Frontier = Watched<H>;
    fn resumable(&self, dir: &CrawlDir) -> bool {
        Local.resumable(dir)
    }
    async fn settings(
        &self,
        dir: &CrawlDir,
        fresh: CrawlSettings,
        seeds: &[String],
    ) -> Result<CrawlSettings, CrawlError> {
        Local.settings(dir, fresh, seeds).await
    }
    async fn open(
        self,
        dir: &CrawlDir,
        politeness: Politeness,
    ) -> Result<(Watched<H>, Arc<dyn Store>), CrawlError> {
        let (inner, store) = Local.open(dir, politeness).await?;
        Ok((
            Watched {
                inner,
                hooks: self.0,
            },
            store,
        ))
    }
}
