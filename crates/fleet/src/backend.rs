//! Crawling as one worker of a fleet: [`Fleet`] is a `mannerly-crawl`
//! [`Backend`] whose frontier and robots.txt states are shared on a
//! Redis-protocol server; the WARC files, the log and `status.json` stay
//! this worker's, under its own `out`. It plugs into the crawl engine from
//! here, so the embedded crawler carries no Redis client.

use std::sync::Arc;
use std::time::Duration;

use mannerly_crawl::{Backend, BusyHost, CrawlDir, CrawlError, CrawlFrontier, CrawlSettings};
use mannerly_fetch::Store;
use mannerly_polite::controller::{Politeness, UnixMillis};
use mannerly_polite::frontier::{FrontierConfig, FrontierError, Stats};
use mannerly_polite::key::KeyError;

use crate::client::{connect, crawl_value, set_crawl_value, Connection, RobotsStore};
use crate::frontier::{FleetConfig, FleetFrontier, TimeSource};
use crate::layout::{Layout, LayoutError};

/// Why a worker cannot take part in a fleet's crawl as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JoinError {
    /// The crawl's name or partitions cannot be used.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// `--join` was asked, and the server holds no such crawl.
    #[error("there is no crawl {crawl} on {url} to join: start it with seeds and without --join")]
    NoCrawl {
        /// The crawl's name.
        crawl: String,
        /// The server.
        url: String,
    },
    /// The crawl's stored settings are not what this worker can read.
    #[error("crawl {crawl} on {url}: its settings do not parse: {source}")]
    Settings {
        /// The crawl's name.
        crawl: String,
        /// The server.
        url: String,
        /// What the JSON reader said.
        #[source]
        source: serde_json::Error,
    },
    /// The settings could not be written as JSON.
    #[error("the crawl's settings cannot be written as JSON: {0}")]
    Encode(#[source] serde_json::Error),
}

impl From<JoinError> for CrawlError {
    fn from(e: JoinError) -> CrawlError {
        CrawlError::Backend(Box::new(e))
    }
}

/// A crawl whose frontier is shared by a fleet of workers.
#[derive(Debug, Clone)]
pub struct Fleet {
    /// The server: `redis://HOST:PORT/`.
    pub url: String,
    /// The crawl's name: several crawls can share a server.
    pub crawl: String,
    /// Partitions, fixed when the crawl is created (1024).
    pub partitions: u32,
    /// How long a release is a worker's unless its heartbeat renews it
    /// ([`FleetConfig::lease`]).
    pub lease: Duration,
    /// The longest a request lasts once sent: the crawl's whole timeout
    /// ([`FleetConfig::longest_request`]; below the lease).
    pub longest_request: Duration,
    /// Join a crawl another worker started (no seeds needed).
    pub join: bool,
    /// URLs a page's release takes from its host's queue at once
    /// (`FleetConfig::claim`; 1: one at a time).
    pub claim: usize,
    /// Hosts the worker holds at once ([`FleetConfig::max_hosts`]; 0: no
    /// bound).
    pub max_hosts: usize,
}

impl Fleet {
    fn layout(&self) -> Result<Layout, CrawlError> {
        Ok(Layout::new(&self.crawl, self.partitions).map_err(JoinError::from)?)
    }
}

impl Backend for Fleet {
    type Frontier = FleetFrontier<Connection>;

    fn resumable(&self, _dir: &CrawlDir) -> bool {
        self.join
    }

    async fn settings(
        &self,
        dir: &CrawlDir,
        fresh: CrawlSettings,
        seeds: &[String],
    ) -> Result<CrawlSettings, CrawlError> {
        let (options, agent) = (fresh.options.clone(), fresh.agent.clone());
        let layout = self.layout()?;
        let mut con = connect(&self.url).await?;
        let stored = crawl_value(&mut con, &self.url, &layout, "settings").await?;
        let mut settings = match stored {
            Some(json) => serde_json::from_str::<CrawlSettings>(&json).map_err(|source| {
                JoinError::Settings {
                    crawl: self.crawl.clone(),
                    url: self.url.clone(),
                    source,
                }
            })?,
            None if self.join => {
                return Err(JoinError::NoCrawl {
                    crawl: self.crawl.clone(),
                    url: self.url.clone(),
                }
                .into())
            }
            None => fresh,
        };
        settings.add_seeds(seeds);
        let json = serde_json::to_string(&settings).map_err(JoinError::Encode)?;
        set_crawl_value(&mut con, &self.url, &layout, "settings", &json).await?;
        if !options.is_empty() {
            // This worker's own options, for `crawl --resume` of its
            // directory: the fleet's store keeps the crawl's, not each
            // worker's.
            dir.create()?;
            mannerly_crawl::write_settings(
                dir,
                &CrawlSettings {
                    options,
                    agent,
                    ..settings.clone()
                },
            )?;
        }
        Ok(settings)
    }

    async fn open(
        self,
        _dir: &CrawlDir,
        politeness: Politeness,
    ) -> Result<(Self::Frontier, Arc<dyn Store>), CrawlError> {
        let layout = self.layout()?;
        let con = connect(&self.url).await?;
        let frontier = FleetFrontier::open(
            con.clone(),
            &self.url,
            layout.clone(),
            politeness,
            FrontierConfig::on_disk(),
            FleetConfig {
                lease: self.lease,
                longest_request: self.longest_request,
                time: TimeSource::Server,
                claim: self.claim,
                max_hosts: self.max_hosts,
                ..FleetConfig::default()
            },
        )
        .await?;
        // robots.txt states go to the server with the frontier's calls.
        let robots = RobotsStore::behind(con, layout, frontier.outbox());
        Ok((frontier, Arc::new(robots)))
    }
}

impl CrawlFrontier for FleetFrontier<Connection> {
    fn key_of(&self, url: &str) -> Result<String, KeyError> {
        self.keyer.key(url)
    }

    fn for_each_deferred(
        &mut self,
        _now: UnixMillis,
        _f: &mut dyn FnMut(&str, Option<&mannerly_polite::frontier::Hold>),
    ) -> Result<(), FrontierError> {
        // The rest of the fleet goes on with what is queued.
        Ok(())
    }

    fn pace(&self, key: &str) -> mannerly_polite::controller::Pace {
        self.politeness.pace(key)
    }

    fn busiest_hosts(&self, _now: UnixMillis) -> Vec<BusyHost> {
        Vec::new()
    }

    async fn keep_alive(&mut self, now: UnixMillis) -> Result<(), FrontierError> {
        FleetFrontier::keep_alive(self, now).await
    }

    fn tell_lastmods(&mut self, entries: &[(String, String)]) {
        FleetFrontier::tell_lastmods(self, entries);
    }

    async fn ask_lastmods(&mut self, urls: &[&str]) -> Result<Vec<Option<String>>, FrontierError> {
        FleetFrontier::ask_lastmods(self, urls).await
    }

    /// The hosts this worker has touched, by what its own controller
    /// knows of them: skipped, in flight, backing off, waiting out the
    /// delay, else ready (queues and robots.txt are the fleet's, not
    /// counted here).
    fn census(&self, now: UnixMillis) -> Option<mannerly_polite::frontier::HostCensus> {
        let mut c = mannerly_polite::frontier::HostCensus::default();
        for (_, h) in self.politeness.keys() {
            let held = |t: Option<UnixMillis>| t.is_some_and(|t| now < t);
            let slot = if h.skip.is_some() {
                &mut c.skipped
            } else if h.in_flight > 0 {
                &mut c.in_flight
            } else if held(h.retry_after_until) || held(h.paused_until) {
                &mut c.backoff
            } else if now < h.next_allowed {
                &mut c.waiting
            } else {
                &mut c.ready
            };
            *slot += 1;
        }
        Some(c)
    }

    fn commit(&mut self) -> Result<(), FrontierError> {
        // Every operation but a completion (or a robots.txt known) reaches
        // the server before it returns; those ride in front of the next
        // call, as the fleet's crate docs say.
        Ok(())
    }

    async fn progress_stats(&mut self) -> Result<Stats, FrontierError> {
        self.recent_stats().await
    }
}
