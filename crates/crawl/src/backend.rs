//! Where a crawl keeps its frontier and its robots.txt states: the
//! [`Backend`] trait, the embedded [`Local`] backend (fjall files under the
//! crawl's directory), and [`CrawlFrontier`], what the loop needs of a
//! frontier beyond `mannerly-polite`'s [`Frontier`] calls. A fleet's
//! backend (`mannerly-fleet`) implements the same traits from above, so
//! this crate carries no Redis client.

use std::future::Future;
use std::sync::Arc;

use mannerly_fetch::Store;
use mannerly_polite::controller::{Pace, Politeness};
use mannerly_polite::frontier::{
    Frontier, FrontierConfig, FrontierError, Hold, HostCensus, LocalFrontier, Stats,
};
use mannerly_polite::key::KeyError;
use mannerly_time::UnixMillis;

use crate::config::CrawlSettings;
use crate::dir::{read_json, write_json, BusyHost, CrawlDir};
use crate::error::CrawlError;
use crate::robots_store::FjallStore;

/// Where a crawl keeps its frontier and its robots.txt state.
pub trait Backend {
    /// The frontier it opens.
    type Frontier: CrawlFrontier;
    /// Whether a crawl is there to go on with when no seed is given.
    fn resumable(&self, dir: &CrawlDir) -> bool;
    /// The crawl's settings: those stored, with `seeds` added, or `fresh`
    /// (with `seeds`) for a new crawl; stored again before returning.
    fn settings(
        &self,
        dir: &CrawlDir,
        fresh: CrawlSettings,
        seeds: &[String],
    ) -> impl Future<Output = Result<CrawlSettings, CrawlError>> + Send;
    /// Opens (or creates) the frontier, paced by `politeness`, and the
    /// store of robots.txt states.
    fn open(
        self,
        dir: &CrawlDir,
        politeness: Politeness,
    ) -> impl Future<Output = Result<(Self::Frontier, Arc<dyn Store>), CrawlError>> + Send;
}

/// A crawl on this machine: the frontier and the robots.txt states in
/// the crawl's directory (fjall stores), its settings in `crawl.json`.
pub struct Local;

impl Backend for Local {
    type Frontier = LocalFrontier;

    fn resumable(&self, dir: &CrawlDir) -> bool {
        dir.has_frontier()
    }

    async fn settings(
        &self,
        dir: &CrawlDir,
        fresh: CrawlSettings,
        seeds: &[String],
    ) -> Result<CrawlSettings, CrawlError> {
        let path = dir.settings();
        let (options, agent) = (fresh.options.clone(), fresh.agent.clone());
        let mut settings = read_json::<CrawlSettings>(&path)?.unwrap_or(fresh);
        if !options.is_empty() {
            // The command merged the recorded options with today's.
            settings.options = options;
        }
        settings.agent = agent;
        settings.add_seeds(seeds);
        write_json(&path, &settings)?;
        Ok(settings)
    }

    async fn open(
        self,
        dir: &CrawlDir,
        politeness: Politeness,
    ) -> Result<(LocalFrontier, Arc<dyn Store>), CrawlError> {
        // The loop commits its operations together (`CrawlFrontier::commit`),
        // once per turn; the bound only caps a turn that does very many.
        let frontier = LocalFrontier::open(
            &dir.frontier(),
            politeness,
            FrontierConfig {
                commit_every: 256,
                ..FrontierConfig::on_disk()
            },
        )?;
        let store = FjallStore::open(&dir.robots()).map_err(|e| CrawlError::Io {
            path: dir.robots(),
            source: std::io::Error::other(e),
        })?;
        Ok((frontier, Arc::new(store)))
    }
}

/// What the crawler needs of a frontier besides the [`Frontier`] calls.
pub trait CrawlFrontier: Frontier + Send {
    /// The politeness key of a URL.
    fn key_of(&self, url: &str) -> Result<String, KeyError>;
    /// Calls `f` with every URL still queued and what holds it back
    /// (`None`: nothing, it may be fetched now), for the log of a crawl
    /// that gave up. A frontier that other workers go on draining has
    /// nothing to report here.
    fn for_each_deferred(
        &mut self,
        now: UnixMillis,
        f: &mut dyn FnMut(&str, Option<&Hold>),
    ) -> Result<(), FrontierError>;
    /// The delay a key's latest request (just released) was held to, and
    /// why: for the crawl's evidence.
    fn pace(&self, key: &str) -> Pace;
    /// The hosts holding the most queued URLs, with why each waits, for
    /// `status.json` (written twice a second: it must be cheap).
    fn busiest_hosts(&self, now: UnixMillis) -> Vec<BusyHost>;
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
    /// Every host's state, for the metrics (asked twice a second, when
    /// they are on); `None` where the frontier cannot tell cheaply.
    fn census(&self, _now: UnixMillis) -> Option<HostCensus> {
        None
    }
    /// Keeps what this worker holds its own and tells the frontier what it
    /// holds back, where that costs a call (a fleet's heartbeat renewing
    /// its leases, a claim's finished URLs): the loop calls it every turn,
    /// before it waits. Nothing to do for the embedded frontier.
    fn keep_alive(
        &mut self,
        _now: UnixMillis,
    ) -> impl Future<Output = Result<(), FrontierError>> + Send {
        async { Ok(()) }
    }
    /// Tells the crawl's other workers what a sitemap said of these URLs
    /// (URL, lastmod), in front of the next call, where the frontier is
    /// shared. Nothing to do for the embedded frontier: its one worker
    /// knows what it read.
    fn tell_lastmods(&mut self, _entries: &[(String, String)]) {}
    /// What the crawl's other workers' sitemaps said of these URLs, in
    /// order (`None`: nothing known; always so for the embedded frontier).
    fn ask_lastmods(
        &mut self,
        urls: &[&str],
    ) -> impl Future<Output = Result<Vec<Option<String>>, FrontierError>> + Send {
        let none = vec![None; urls.len()];
        async move { Ok(none) }
    }
    /// Bounds the hosts in progress at once (see
    /// [`CrawlConfig::open_hosts`](crate::CrawlConfig::open_hosts)), where
    /// the frontier can; a fleet's hosts are spread over its workers.
    fn bound_open_hosts(&mut self, _n: u64) {}
}

impl CrawlFrontier for LocalFrontier {
    fn commit(&mut self) -> Result<(), FrontierError> {
        LocalFrontier::commit(self)
    }

    fn census(&self, now: UnixMillis) -> Option<HostCensus> {
        Some(LocalFrontier::census(self, now))
    }

    fn bound_open_hosts(&mut self, n: u64) {
        self.set_max_open_keys(n);
    }

    fn key_of(&self, url: &str) -> Result<String, KeyError> {
        LocalFrontier::key_of(self, url)
    }

    fn for_each_deferred(
        &mut self,
        now: UnixMillis,
        f: &mut dyn FnMut(&str, Option<&Hold>),
    ) -> Result<(), FrontierError> {
        self.for_each_queued(|fr, _, url| {
            f(url, LocalFrontier::why_not_now(fr, url, now).as_ref());
            Ok(())
        })
    }

    fn pace(&self, key: &str) -> Pace {
        self.politeness.pace(key)
    }

    fn busiest_hosts(&self, now: UnixMillis) -> Vec<BusyHost> {
        LocalFrontier::busiest(self, 10)
            .into_iter()
            .map(|l| {
                let why = l
                    .head
                    .as_deref()
                    .and_then(|u| LocalFrontier::why_not_now(self, u, now))
                    .or_else(|| self.politeness.why_not_now(&l.key, now));
                BusyHost {
                    host: l.key,
                    queued: l.queued,
                    waiting: why.map(|h| h.to_string()),
                }
            })
            .collect()
    }
}
