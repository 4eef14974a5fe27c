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
//!   │ Fetch(page) ─► admit ─► HTTP GET ──────────┤  complete / requeue (retry) / discard,
//!   │                                            │  WARC, log, links ─► enqueue
//!   │ Wait { until } ─► sleep until then, or until a fetch reports back
//!   │ Busy ─► wait for a fetch to report back
//!   └ Empty ─► done when nothing is in flight
//! ```
//!
//! A page's path reads top to bottom: [`Crawl::start`] (released) →
//! [`Crawl::admit`](crate::admit) (admitted) → `fetch_page` (fetched) →
//! [`Crawl::handle`] (recorded) → [`Links`](crate::outlinks::Links) and the [`Turn`]'s end (its
//! links offered, then the page completed).
//!
//! Invariants: the engine never sleeps for pacing of its own and has no
//! rate limiter: every delay is the frontier's `Wait`. Every release is
//! completed, requeued, discarded or cancelled exactly once.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mannerly_fetch::{FetchConfig, HttpFetcher, RobotsCache, SystemClock};
use mannerly_polite::controller::{Config as PoliteConfig, Politeness};
use mannerly_polite::frontier::{Frontier, Kind, Next, Offer, Released};
use mannerly_time::UnixMillis;
use tokio::sync::{mpsc, watch};

use crate::backend::{Backend, CrawlFrontier, Local};
use crate::config::{robots_cache, CrawlConfig};
use crate::dir::CrawlDir;
use crate::error::CrawlError;
use crate::journal::{read_logged, status_of, Journal, Log};
use crate::normalize::Scope;
use crate::page::{http_client, PageOutcome};
use crate::robots_fetch::{gate, LoopGate, Made, RecordingFetcher};
use crate::settings::settle_settings;
use crate::state::{Crawl, Done, Reports};
use crate::summary::{Ending, Progress, Summary};
use crate::tag::Tag;
use crate::turn::Turn;
use crate::warc::WarcWriter;
use crate::witness::Witness;

/// Runs a crawl from `seeds` with everything under `out`: the frontier
/// store (`out/frontier`), WARC files (`out/warc`) and `out/log.jsonl`.
/// A directory that holds a crawl already is resumed: its queue, its
/// hosts' politeness state and its WARC numbering go on. Seeds given by
/// value are dropped once queued (a borrowed list is copied): a list of
/// millions is not held for the whole crawl.
pub async fn crawl(
    config: CrawlConfig,
    seeds: impl Into<Vec<String>>,
    out: &Path,
    stop: watch::Receiver<bool>,
    progress: impl FnMut(&Progress),
) -> Result<Summary, CrawlError> {
    crawl_on(Local, config, seeds, out, stop, progress).await
}

/// [`crawl`] on another [`Backend`] (a fleet's shared frontier): the WARC
/// files, the log and `status.json` stay this worker's, under `out`.
pub async fn crawl_on<B: Backend>(
    backend: B,
    config: CrawlConfig,
    seeds: impl Into<Vec<String>>,
    out: &Path,
    stop: watch::Receiver<bool>,
    progress: impl FnMut(&Progress),
) -> Result<Summary, CrawlError> {
    let started = Instant::now();
    let dir = CrawlDir::new(out);
    let seeds = seeds.into();
    let (scope, seed_urls, recrawl) = settle_settings(&backend, &config, seeds, &dir).await?;
    let config = crate::recrawl::join(config, recrawl)?;
    let (mut crawl, reports) = Crawl::open(backend, config, scope, dir).await?;
    crawl.enqueue_seeds(seed_urls).await?;
    crawl.run(reports, stop, progress, started).await?;
    crawl.finish(started).await
}

/// The frontier priority of a page a recrawl revisits.
const REVISIT_PRIORITY: u8 = 128;

/// What the loop does after asking the frontier for work.
enum Step {
    /// Ask again at once.
    Again,
    /// Wait for a report, or until this instant (if any).
    Wait(Option<UnixMillis>),
    /// The crawl is over.
    End,
}

impl<F: CrawlFrontier> Crawl<F> {
    /// Opens the crawl's WARC files, log, HTTP client, frontier and
    /// robots.txt cache.
    async fn open<B: Backend<Frontier = F>>(
        backend: B,
        config: CrawlConfig,
        scope: Scope,
        dir: CrawlDir,
    ) -> Result<(Crawl<F>, Reports), CrawlError> {
        let config = Arc::new(config);
        let give_up_from = give_up_from(&dir, config.timeout);
        let warc = Arc::new(Mutex::new(WarcWriter::open(
            &dir.warc(),
            "mannerly",
            config.warc_max_size,
            &config.user_agent,
        )?));
        let mut record = Journal::open(dir.log())?;
        record.metrics = config.metrics.clone();
        record.pages = Some(Log::append(dir.pages())?);
        let client = http_client(&config)?;
        let made = Made::default();
        let (gate_tx, gate_rx) = mpsc::unbounded_channel();
        let politeness = Politeness::new(PoliteConfig {
            min_delay: config.min_delay.as_millis() as u64,
            profile: config.profile,
            // A request cut off by a kill may run at the server until a
            // live crawler's request would have timed out.
            in_flight_bound: u64::try_from(config.timeout.as_millis()).unwrap_or(u64::MAX),
            ..PoliteConfig::default()
        });
        let (mut frontier, robots_store) = backend.open(&dir, politeness).await?;
        frontier.bound_open_hosts(config.open_hosts());
        let fetch_config = FetchConfig {
            user_agent: config.user_agent.clone(),
            timeout: config.timeout,
            connect_timeout: config.connect_timeout,
            // Hops of a robots.txt redirect to the same host are spaced by
            // the minimum delay (a Crawl-delay is not known before the file).
            redirect_gap: config.min_delay,
            ..FetchConfig::default()
        };
        let hop_gate = Arc::new(LoopGate {
            tx: gate_tx,
            patience: config.timeout,
        });
        let witness = Witness::open(&dir, &config)?;
        let mut inner = HttpFetcher::with_client(client.clone(), fetch_config).with_gate(hop_gate);
        if let Some(w) = &witness {
            inner = inner.with_hook(w.clone());
        }
        if let Some(m) = &config.metrics {
            inner = inner.with_hook(m.clone());
        }
        if let Some((key, agent)) = &config.signing {
            let signer = crate::page::Signer {
                key: key.clone(),
                agent: agent.clone(),
            };
            inner = inner.with_signer(Arc::new(signer));
        }
        let sent = Arc::new(crate::robots_fetch::SentFields::default());
        inner = inner.with_hook(sent.clone());
        let fetcher = RecordingFetcher {
            inner,
            sent,
            witness: witness.clone(),
            user_agent: config.user_agent.clone(),
            made: made.clone(),
            warc: warc.clone(),
        };
        let clock = Arc::new(SystemClock);
        let cache = RobotsCache::new(fetcher, clock, robots_store, robots_cache(&config));
        // A resumed crawl's page counts come from its log, the record of
        // what it fetched. Pages per host are kept only for a limit on
        // them: a map entry a host, for the whole crawl, otherwise.
        let limited = config.max_pages_per_host.is_some();
        let logged = read_logged(&record.log.path, limited);
        let (pages_started, per_host) = (logged.pages, logged.per_host);
        // A login wall found before a restart stops its prefix still.
        record.walls = logged.walls;
        let (tx, done_rx) = mpsc::unbounded_channel();
        // A resumed recrawl goes on from its own record; a new one from
        // the earlier crawl's.
        let config_trust = match &config.prior {
            Some(p) if !dir.lastmod().exists() => p.trust().start_of_a_crawl(),
            _ => crate::lastmod::Trust::load(&dir),
        };
        // A resumed crawl knows again what its sitemaps said.
        let lastmods = crate::lastmod::Lastmods::logged(&dir.log());
        let crawl = Crawl {
            config,
            dir,
            scope,
            frontier,
            cache: Arc::new(cache),
            made,
            warc,
            witness,
            client,
            journal: record,
            hosts_answered: crate::tally::HostTally::default(),
            tx,
            in_flight: 0,
            held: Vec::new(),
            pages_started,
            pages_before: pages_started,
            per_host,
            lastmods,
            trust: config_trust,
            trust_unsaved: false,
            give_up_from,
        };
        let reports = Reports {
            done: done_rx,
            gate: gate_rx,
        };
        Ok((crawl, reports))
    }

    async fn enqueue_seeds(&mut self, seeds: Vec<String>) -> Result<(), CrawlError> {
        for chunk in seeds.chunks(256) {
            let offers: Vec<Offer<'_>> = chunk
                .iter()
                .map(|u| {
                    // A recrawl's pages come after the sitemaps robots.txt
                    // names (255), whose lastmod may spare their requests,
                    // and after new links.
                    let priority = match &self.config.prior {
                        Some(p) if p.get(u).is_some() => REVISIT_PRIORITY,
                        _ => 255,
                    };
                    Offer::new(u, priority, Tag::default().pack())
                })
                .collect();
            Frontier::enqueue_many(&mut self.frontier, &offers, UnixMillis::now()).await?;
        }
        Ok(())
    }

    /// The loop: handle every report waiting, offer the turn's links, ask
    /// the frontier for work, then wait for a report or the frontier's
    /// next instant.
    async fn run(
        &mut self,
        mut reports: Reports,
        mut stop: watch::Receiver<bool>,
        mut progress: impl FnMut(&Progress),
        started: Instant,
    ) -> Result<(), CrawlError> {
        let mut last_progress = Instant::now();
        let mut grace_deadline: Option<Instant> = None;
        // A report the loop waited for, handled at the top with the rest.
        let mut received: Option<Done> = None;
        loop {
            // What the last turn did survives a kill from here on.
            self.frontier.commit()?;
            if let Some(w) = &self.witness {
                w.checkpoint(false)?;
            }
            // Hops of robots.txt fetches to other hosts ask for those
            // hosts' slots; then reports: they free slots and may unblock
            // hosts.
            while let Ok(m) = reports.gate.try_recv() {
                gate(&mut self.frontier, self.witness.as_deref(), m).await?;
            }
            // Every report waiting is handled in this turn, and their links
            // offered together at its end (see `Turn`).
            let mut turn = Turn::default();
            while let Some(done) = received.take().or_else(|| reports.done.try_recv().ok()) {
                self.in_flight -= 1;
                self.handle(done, &mut turn).await?;
            }
            // What the turn's sitemaps said goes to the crawl's other
            // workers before their URLs are queued.
            self.frontier.tell_lastmods(&self.lastmods.take_untold());
            turn.finish(&mut self.frontier, &mut self.journal, &self.warc)
                .await?;
            if last_progress.elapsed() >= Duration::from_millis(500) {
                last_progress = Instant::now();
                self.report(&mut progress, started).await?;
            }
            if *stop.borrow() && grace_deadline.is_none() {
                self.journal.summary.ending = Ending::Stopped;
                grace_deadline = Some(Instant::now() + Duration::from_secs(5));
            }
            if let Some(deadline) = grace_deadline {
                if self.in_flight == 0 || Instant::now() >= deadline {
                    return Ok(());
                }
                self.frontier.keep_alive(UnixMillis::now()).await?;
                let next = tokio::time::timeout(Duration::from_millis(100), reports.done.recv());
                received = next.await.ok().flatten();
                continue;
            }
            let wait = match self.step().await? {
                Step::Again => continue,
                Step::End => return Ok(()),
                Step::Wait(wait) => wait,
            };
            let sleep_for = wait.map_or(Duration::from_millis(500), |u| {
                u.duration_since(UnixMillis::now())
                    .clamp(Duration::from_millis(1), Duration::from_millis(500))
            });
            self.frontier.commit()?;
            // Leases renewed, finished work told, before the wait.
            self.frontier.keep_alive(UnixMillis::now()).await?;
            tokio::select! {
                done = reports.done.recv() => received = done,
                Some(m) = reports.gate.recv() => gate(&mut self.frontier, self.witness.as_deref(), m).await?,
                _ = tokio::time::sleep(sleep_for) => {}
                _ = stop.changed() => {}
            }
        }
    }

    /// The progress line and `status.json`.
    async fn report(
        &mut self,
        progress: &mut impl FnMut(&Progress),
        started: Instant,
    ) -> Result<(), CrawlError> {
        let queued = self.frontier.progress_stats().await?.queued;
        let seconds = started.elapsed().as_secs_f64();
        let snapshot = self.journal.progress(self.in_flight, queued, seconds);
        progress(&snapshot);
        self.write_status(&snapshot, false);
        // What the hosts' lastmod showed, with the status: a recrawl killed
        // and resumed goes on distrusting the hosts it caught lying. Best
        // effort, as the status: a failed write is tried again.
        if self.trust_unsaved {
            self.trust_unsaved = self.trust.save(&self.dir).is_err();
        }
        self.gauges(&snapshot, 0);
        Ok(())
    }

    /// `status.json`, best effort: a failed write is retried at the next
    /// snapshot, and a crawl does not stop for it.
    fn write_status(&self, snapshot: &Progress, ended: bool) {
        let busiest = self.frontier.busiest_hosts(UnixMillis::now());
        let mut status = status_of(snapshot, &self.journal.summary, busiest, ended);
        // The whole crawl's pages, not only this run's.
        status.pages_this_run = status.pages;
        status.pages += self.pages_before;
        let _ = self.dir.write_status(&status);
    }

    /// The metrics' gauges (and the WARC total), with the status.
    fn gauges(&self, snapshot: &Progress, deferred: u64) {
        if let Some(m) = &self.config.metrics {
            let warc = self.warc.lock().map(|w| w.bytes_written()).unwrap_or(0);
            let census = self.frontier.census(UnixMillis::now());
            crate::metrics::gauges(m, snapshot, census, deferred, warc);
        }
    }

    /// Asks the frontier for as many releases as there are free slots (and
    /// pages left), in one call (a networked frontier answers in one round
    /// trip), starts them, and says what the loop does next.
    async fn step(&mut self) -> Result<Step, CrawlError> {
        let max_reached = (self.config.max_pages).is_some_and(|m| self.pages_started >= m);
        let concurrency = self.config.concurrency.max(1);
        let mut wait: Option<UnixMillis> = None;
        if self.in_flight < concurrency && !max_reached {
            let mut room = concurrency - self.in_flight;
            if let Some(m) = self.config.max_pages {
                let left = usize::try_from(m.saturating_sub(self.pages_started));
                room = room.min(left.unwrap_or(usize::MAX));
            }
            let now = UnixMillis::now();
            let batch = Frontier::next_batch(&mut self.frontier, room.max(1), now).await?;
            self.learn_lastmods(&batch.released).await?;
            // The releases survive a kill before any of their requests goes
            // out: a resumed crawl then knows them in flight, and holds
            // their hosts while they may still be running.
            self.frontier.commit()?;
            self.journal.take_skipped(&mut self.frontier).await?;
            let released_any = !batch.released.is_empty();
            let mut started = Ok(());
            for r in batch.released {
                started = self.start(r).await;
                if started.is_err() {
                    break;
                }
            }
            // The pages started before an error still go: their records
            // are in the chain.
            self.send_held()?;
            started?;
            match batch.then {
                _ if released_any => return Ok(Step::Again),
                None => return Ok(Step::Again),
                Some(Next::Wait { until }) => wait = Some(until),
                Some(Next::Busy | Next::Fetch(_)) => {}
                Some(Next::Empty) if self.in_flight == 0 => return Ok(Step::End),
                Some(Next::Empty) => {}
            }
        }
        if max_reached && self.in_flight == 0 {
            self.journal.summary.ending = Ending::MaxPages;
            return Ok(Step::End);
        }
        if let (Some(until), 0) = (wait, self.in_flight) {
            let from = UnixMillis::now().max(self.give_up_from);
            if until.duration_since(from) > self.config.give_up_after {
                self.journal.summary.ending = Ending::GaveUp;
                return Ok(Step::End);
            }
        }
        Ok(Step::Wait(wait))
    }

    /// Starts a released request: robots.txt through the cache, a page
    /// once admitted.
    async fn start(&mut self, r: Released) -> Result<(), CrawlError> {
        match r.kind {
            Kind::Robots => self.start_robots(r).await,
            Kind::Page => self.start_page(r).await,
        }
    }

    /// Handles one report.
    async fn handle(&mut self, done: Done, turn: &mut Turn) -> Result<(), CrawlError> {
        match done {
            Done::Robots {
                released,
                origin,
                decision: Some(decision),
            } => self.robots_done(released, origin, *decision, turn).await,
            Done::Robots { released, .. } => self.lapsed(&released).await,
            Done::Page(p) => {
                p.count(self.config.metrics.as_deref());
                match &p.outcome {
                    PageOutcome::Unsent => self.lapsed(&p.released).await,
                    PageOutcome::Answered(resp) if resp.unwanted.is_some() => {
                        self.page_unwanted(&p, resp).await
                    }
                    PageOutcome::Answered(resp) => self.page_fetched(&p, resp, turn).await,
                    _ => self.page_failed(&p).await,
                }
            }
        }
    }

    /// The summary, once the loop is over: what is left queued (and, when
    /// the crawl gave up, why each waits), everything synced.
    async fn finish(mut self, started: Instant) -> Result<Summary, CrawlError> {
        let now = UnixMillis::now();
        let stats = Frontier::stats(&mut self.frontier).await?;
        self.journal.summary.deferred = stats.queued;
        if self.journal.summary.ending == Ending::GaveUp {
            self.journal.log_deferred(&mut self.frontier, now)?;
        }
        self.journal.summary.hosts = self.hosts_answered.len() as u64;
        Frontier::sync(&mut self.frontier).await?;
        // The last (a networked frontier hands them over at intervals, and
        // all that are left after `sync`).
        self.journal.take_skipped(&mut self.frontier).await?;
        self.journal.log.flush()?;
        if let Some(p) = &mut self.journal.pages {
            p.flush()?;
        }
        if self.config.prior.is_some() {
            self.trust.save(&self.dir)?;
            self.journal.summary.revisits.lastmod_untrusted_hosts = self.trust.untrusted();
        }
        if let Ok(mut w) = self.warc.lock() {
            w.sync()?;
            self.journal.summary.warc_records = w.records();
        }
        if let Some(w) = &self.witness {
            self.journal.summary.evidence = Some(w.close()?);
        }
        let seconds = started.elapsed().as_secs_f64();
        self.journal.summary.seconds = seconds;
        let last = self.journal.progress(0, stats.queued, seconds);
        self.write_status(&last, true);
        self.gauges(&last, stats.queued);
        Ok(self.journal.summary)
    }
}

/// When a crawl opening in `dir` starts counting `give_up_after`. A
/// resumed crawl may hold hosts for requests the kill cut off, up to a
/// request's `timeout` from now: waiting for them is not waiting too long.
fn give_up_from(dir: &CrawlDir, timeout: Duration) -> UnixMillis {
    match dir.has_frontier() {
        true => UnixMillis::now()
            .checked_add(timeout)
            .unwrap_or(UnixMillis::MAX),
        false => UnixMillis::EPOCH,
    }
}
