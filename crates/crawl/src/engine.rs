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
//! [`Crawl::handle`] (recorded) → [`Links`] and the [`Turn`]'s end (its
//! links offered, then the page completed).
//!
//! Invariants: the engine never sleeps for pacing of its own and has no
//! rate limiter: every delay is the frontier's `Wait`. Every release is
//! completed, requeued, discarded or cancelled exactly once.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mannerly_fetch::policy::Access;
use mannerly_fetch::{FetchConfig, HttpFetcher, Origin, RobotsCache, SystemClock};
use mannerly_polite::controller::{Config as PoliteConfig, Outcome, Politeness, RobotsPacing};
use mannerly_polite::frontier::{Frontier, Kind, Next, Offer, Released};
use mannerly_time::UnixMillis;
use tokio::sync::{mpsc, watch};

use crate::backend::{Backend, CrawlFrontier, Local};
use crate::config::{robots_cache, CrawlConfig, CrawlSettings, RecrawlOf};
use crate::dir::CrawlDir;
use crate::error::CrawlError;
use crate::normalize::{host_of, CrawlUrl, Scope};
use crate::outlinks::{offer_all, Candidate, Links};
use crate::page::{
    http_client, paced, request_head, response_head, status_outcome, PageDone, PageOutcome,
    PageResponse,
};
use crate::record::{count_pages, status_of, LineKind, Log, LogLine, Record};
use crate::revisit::{PageState, Revisit, StoredRecord};
use crate::robots_fetch::{gate, hold_until, LoopGate, Made, RecordingFetcher};
use crate::skip::NotFetched;
use crate::state::{Crawl, Done, Reports};
use crate::summary::{Ending, Progress, Summary};
use crate::tag::Tag;
use crate::warc::{Archived, Exchange, Profile, RefersTo, WarcWriter};
use crate::witness::Witness;

/// Runs a crawl from `seeds` with everything under `out`: the frontier
/// store (`out/frontier`), WARC files (`out/warc`) and `out/log.jsonl`.
/// A directory that holds a crawl already is resumed: its queue, its
/// hosts' politeness state and its WARC numbering go on.
pub async fn crawl(
    config: CrawlConfig,
    seeds: &[String],
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
    seeds: &[String],
    out: &Path,
    stop: watch::Receiver<bool>,
    progress: impl FnMut(&Progress),
) -> Result<Summary, CrawlError> {
    let started = Instant::now();
    let dir = CrawlDir::new(out);
    let (scope, seed_urls, recrawl) = settle_settings(&backend, &config, seeds, &dir).await?;
    let config = crate::recrawl::join(config, recrawl)?;
    let (mut crawl, reports) = Crawl::open(backend, config, scope, dir).await?;
    crawl.enqueue_seeds(seed_urls).await?;
    crawl.run(reports, stop, progress, started).await?;
    crawl.finish(started).await
}

/// The crawl's settings as stored with `seeds` added (one record for a
/// resume or a fleet), its scope, and every seed to offer: all the crawl's,
/// not only those given now, since the worker that started a crawl (or a
/// crawl killed while queueing its seeds) may have died before queueing
/// them all, and the seen-set makes the rest a no-op.
async fn settle_settings<B: Backend>(
    backend: &B,
    config: &CrawlConfig,
    seeds: &[String],
    dir: &CrawlDir,
) -> Result<(Scope, Vec<String>, Option<RecrawlOf>), CrawlError> {
    let mut given = Vec::new();
    let mut bad = Vec::new();
    for s in seeds {
        match CrawlUrl::parse(s) {
            // Kept as text: a seed list can hold millions.
            Ok(u) => given.push(String::from(u.as_str())),
            Err(e) => bad.push(e.to_string()),
        }
    }
    if given.is_empty() && !backend.resumable(dir) {
        let why = if bad.is_empty() {
            "none given".into()
        } else {
            bad.join("; ")
        };
        return Err(CrawlError::NoSeeds(why));
    }
    dir.create()?;
    let fresh = CrawlSettings {
        seeds: Vec::new(),
        scope: config.scope,
        include: config.include.clone(),
        exclude: config.exclude.clone(),
        max_depth: config.max_depth,
        recrawl: (config.prior.is_some() && !config.prior_dirs.is_empty()).then(|| RecrawlOf {
            dirs: config.prior_dirs.clone(),
            max_age_secs: config.max_age.as_secs(),
        }),
    };
    let settings = backend.settings(dir, fresh, &given).await?;
    drop(given);
    // The scope needs one seed per host.
    let mut scope_hosts = HashSet::new();
    let scope_seeds: Vec<CrawlUrl> = settings
        .seeds
        .iter()
        .filter_map(|s| CrawlUrl::parse(s).ok())
        .filter(|u| scope_hosts.insert(u.host().to_owned()))
        .collect();
    let scope = Scope::new(
        settings.scope,
        &scope_seeds,
        &settings.include,
        &settings.exclude,
        settings.max_depth,
    )?;
    Ok((scope, settings.seeds, settings.recrawl))
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
        let warc = Arc::new(Mutex::new(WarcWriter::open(
            &dir.warc(),
            "mannerly",
            config.warc_max_size,
            &config.user_agent,
        )?));
        let mut record = Record::open(dir.log())?;
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
        let fetcher = RecordingFetcher {
            inner,
            witness: witness.clone(),
            user_agent: config.user_agent.clone(),
            made: made.clone(),
            warc: warc.clone(),
        };
        let clock = Arc::new(SystemClock);
        let cache = RobotsCache::new(fetcher, clock, robots_store, robots_cache(&config));
        // A resumed crawl's page counts come from its log, the record of
        // what it fetched.
        let (pages_started, per_host) = count_pages(&record.log.path);
        let (tx, done_rx) = mpsc::unbounded_channel();
        // A resumed recrawl goes on from its own record; a new one from
        // the earlier crawl's.
        let config_trust = match &config.prior {
            Some(p) if !dir.lastmod().exists() => p.trust().clone(),
            _ => crate::lastmod::Trust::load(&dir),
        };
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
            record,
            hosts_answered: HashSet::new(),
            tx,
            in_flight: 0,
            held: Vec::new(),
            pages_started,
            per_host,
            lastmods: HashMap::new(),
            trust: config_trust,
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
                .map(|u| Offer {
                    url: u,
                    // A recrawl's pages come after the sitemaps robots.txt
                    // names (255), whose lastmod may spare their requests,
                    // and after new links.
                    priority: match &self.config.prior {
                        Some(p) if p.get(u).is_some() => REVISIT_PRIORITY,
                        _ => 255,
                    },
                    tag: Tag::default().pack(),
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
            turn.finish(&mut self.frontier, &mut self.record).await?;
            if last_progress.elapsed() >= Duration::from_millis(500) {
                last_progress = Instant::now();
                self.report(&mut progress, started).await?;
            }
            if *stop.borrow() && grace_deadline.is_none() {
                self.record.summary.ending = Ending::Stopped;
                grace_deadline = Some(Instant::now() + Duration::from_secs(5));
            }
            if let Some(deadline) = grace_deadline {
                if self.in_flight == 0 || Instant::now() >= deadline {
                    return Ok(());
                }
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
        let snapshot = self.record.progress(self.in_flight, queued, seconds);
        progress(&snapshot);
        self.write_status(&snapshot, false);
        self.gauges(&snapshot, 0);
        Ok(())
    }

    /// `status.json`, best effort: a failed write is retried at the next
    /// snapshot, and a crawl does not stop for it.
    fn write_status(&self, snapshot: &Progress, ended: bool) {
        let busiest = self.frontier.busiest_hosts(UnixMillis::now());
        let status = status_of(snapshot, &self.record.summary, busiest, ended);
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
            // The releases survive a kill before any of their requests goes
            // out: a resumed crawl then knows them in flight, and holds
            // their hosts while they may still be running.
            self.frontier.commit()?;
            self.record.take_skipped(&mut self.frontier).await?;
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
            self.record.summary.ending = Ending::MaxPages;
            return Ok(Step::End);
        }
        if let (Some(until), 0) = (wait, self.in_flight) {
            if until.duration_since(UnixMillis::now()) > self.config.give_up_after {
                self.record.summary.ending = Ending::GaveUp;
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

    async fn start_robots(&mut self, r: Released) -> Result<(), CrawlError> {
        let Ok(origin) = Origin::of(&r.url) else {
            return Ok(Frontier::discard(&mut self.frontier, &r, UnixMillis::now()).await?);
        };
        // A fleet's release may have lapsed while this worker was stopped:
        // then it is another's.
        if !Frontier::confirm(&mut self.frontier, &r, UnixMillis::now()).await? {
            return Ok(());
        }
        if let Some(w) = &self.witness {
            w.expect(&origin.robots_url(), self.frontier.pace(&r.key));
        }
        let cache = self.cache.clone();
        let tx = self.tx.clone();
        self.in_flight += 1;
        let send_by = Frontier::send_by(&self.frontier, &r);
        tokio::spawn(async move {
            // Checked as a page's is: a worker stopped between the release
            // and this task must not send robots.txt on a lease that is gone.
            // The origin's stored state is read first (a round trip to a
            // fleet's store), so the check comes after it, just before the
            // request.
            cache.decided(&origin).await;
            let decision = if send_by.is_some_and(|t| Instant::now() > t) {
                None
            } else {
                Some(Box::new(cache.decision(&origin).await))
            };
            let _ = tx.send(Done::Robots {
                released: r,
                origin,
                decision,
            });
        });
        Ok(())
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

    /// robots.txt decided: the origin's pages wait or go, paced by it; its
    /// sitemaps are followed; the request, if one was made, is logged.
    async fn robots_done(
        &mut self,
        released: Released,
        origin: Origin,
        decision: mannerly_fetch::Decision,
        turn: &mut Turn,
    ) -> Result<(), CrawlError> {
        let now = UnixMillis::now();
        let o = origin.to_string();
        let summary = &mut self.record.summary;
        if let Access::DisallowAll = &decision.access {
            summary
                .unavailable
                .insert(o.clone(), decision.reason.clone());
            // Held until the fetch policy's next attempt (backoff or
            // Retry-After), not the phase's end: then robots.txt is
            // released again and the cache decides whether to fetch.
            let until = hold_until(&self.cache, &origin, &decision.expires_at, now).await;
            let f = &mut self.frontier;
            Frontier::robots_unavailable(f, &o, until, &decision.reason, now).await?;
        } else {
            summary.unavailable.remove(&o);
            let mut pacing = RobotsPacing::default();
            if let Access::Rules(robots) = &decision.access {
                let config = &self.config;
                pacing = RobotsPacing::from_robots(robots, &config.agent, config.profile);
                if let (true, Ok(page)) = (config.sitemaps, url::Url::parse(&released.url)) {
                    let mut links = Links {
                        config,
                        scope: &self.scope,
                        record: &mut self.record,
                        found: &mut turn.candidates,
                        lastmods: &mut self.lastmods,
                    };
                    let tag = Tag {
                        sitemap: true,
                        ..Tag::default()
                    };
                    for sm in robots.sitemaps() {
                        links.follow(&page, &sm.url, tag, 0)?;
                    }
                }
            }
            let f = &mut self.frontier;
            Frontier::robots_known(f, &o, pacing, decision.expires_at, now).await?;
        }
        let fetched = self.made.lock().ok().and_then(|mut m| m.remove(&origin));
        if let Some(w) = &self.witness {
            w.forget(&origin.robots_url());
        }
        if let (Some(m), true) = (&self.config.metrics, fetched.is_some()) {
            m.robots(&decision.access);
        }
        let Some(f) = fetched else {
            // The cache answered without a request.
            return Ok(Frontier::cancel(&mut self.frontier, &released, now).await?);
        };
        self.record.summary.robots_requests += 1;
        let (status, latency) = match &f.outcome {
            Outcome::Status {
                status, latency, ..
            } => (Some(*status), *latency),
            Outcome::Failed { latency } | Outcome::Stalled { latency } => (None, *latency),
        };
        self.record.line(&LogLine {
            time: now.to_rfc3339_millis(),
            kind: LineKind::Robots,
            url: &released.url,
            status,
            ms: Some(latency),
            error: f.error.as_deref(),
            reason: Some(&decision.reason),
            ..LogLine::default()
        })?;
        // After the sitemaps it lists are offered.
        let (outcome, at) = paced(&f.outcome, f.done_at);
        turn.completions.push((released, outcome, at));
        Ok(())
    }

    /// A page fetch that got no response: retried while retries are left.
    async fn page_failed(&mut self, p: &PageDone) -> Result<(), CrawlError> {
        let tag = Tag::unpack(p.released.tag);
        self.record.summary.page_errors += 1;
        self.record.line(&LogLine {
            time: UnixMillis::now().to_rfc3339_millis(),
            kind: LineKind::Page,
            url: &p.released.url,
            ms: Some(p.latency),
            retry: Some(tag.retries),
            error: p.outcome.error(),
            reason: match p.outcome {
                PageOutcome::Stalled(_) => Some("stalled: this crawler was not running when the deadline passed; not counted against the host"),
                PageOutcome::TimedOut(_) => Some("timeout"),
                _ => None,
            },
            ..LogLine::default()
        })?;
        let failed = match p.outcome {
            PageOutcome::Stalled(_) => Outcome::Stalled { latency: p.latency },
            _ => Outcome::Failed { latency: p.latency },
        };
        let (outcome, at) = paced(&failed, p.head_at);
        if tag.retries < self.config.retries {
            return self.retry(&p.released, tag, &outcome, at).await;
        }
        Ok(Frontier::complete(&mut self.frontier, &p.released, &outcome, at).await?)
    }

    /// A page of a media type `--content-types` does not want: counted and
    /// logged, its body never read.
    async fn page_unwanted(&mut self, p: &PageDone, resp: &PageResponse) -> Result<(), CrawlError> {
        self.answered(&p.released).await;
        let media = resp.unwanted.as_deref().unwrap_or_default();
        let summary = &mut self.record.summary;
        *summary.pages_by_status.entry(resp.status).or_default() += 1;
        *summary
            .skipped
            .entry(NotFetched::ContentType.word().into())
            .or_default() += 1;
        let why = format!("content-type: {media} is not among --content-types; not downloaded");
        self.record.line(&LogLine {
            time: UnixMillis::now().to_rfc3339_millis(),
            kind: LineKind::Page,
            url: &p.released.url,
            status: Some(resp.status),
            bytes: Some(0),
            ms: Some(p.latency),
            retry: Some(Tag::unpack(p.released.tag).retries),
            reason: Some(&why),
            ..LogLine::default()
        })?;
        let (outcome, at) = paced(&status_outcome(resp, p.latency, None), p.head_at);
        Ok(Frontier::complete(&mut self.frontier, &p.released, &outcome, at).await?)
    }

    /// A page with a response: archived, counted, logged; retried (429,
    /// 5xx) or its links found and the page completed at the turn's end.
    async fn page_fetched(
        &mut self,
        p: &PageDone,
        resp: &PageResponse,
        turn: &mut Turn,
    ) -> Result<(), CrawlError> {
        self.answered(&p.released).await;
        self.archive(p, resp)?;
        let summary = &mut self.record.summary;
        *summary.pages_by_status.entry(resp.status).or_default() += 1;
        summary.bytes += resp.body.len() as u64;
        let retry_after = resp.header("retry-after").map(str::to_owned);
        let (outcome, at) = paced(&status_outcome(resp, p.latency, retry_after), p.head_at);
        let tag = Tag::unpack(p.released.tag);
        self.record.line(&LogLine {
            time: UnixMillis::now().to_rfc3339_millis(),
            kind: LineKind::Page,
            url: &p.released.url,
            status: Some(resp.status),
            bytes: Some(resp.body.len() as u64),
            ms: Some(p.latency),
            retry: Some(tag.retries),
            reason: resp.truncated.then_some("truncated"),
            content_usage: resp.header("content-usage"),
            content_usage_rule: Some(p.content_usage_rule.as_deref().unwrap_or("none")),
            ..LogLine::default()
        })?;
        let retryable = matches!(resp.status, 429 | 500 | 502 | 503 | 504);
        if retryable && tag.retries < self.config.retries {
            return self.retry(&p.released, tag, &outcome, at).await;
        }
        // Outlinks are queued before the page is recorded done (at the
        // turn's end): a kill in between fetches the page again (at least
        // once), never loses its links.
        let mut links = Links {
            config: &self.config,
            scope: &self.scope,
            record: &mut self.record,
            found: &mut turn.candidates,
            lastmods: &mut self.lastmods,
        };
        links.of_page(&p.released, tag, resp)?;
        turn.completions.push((p.released.clone(), outcome, at));
        Ok(())
    }

    /// The page's exchange as WARC `request` and `response` records; or,
    /// when an earlier crawl holds its payload (a 304, or the same
    /// payload), a `revisit` record naming that crawl's record. A page
    /// with a payload is kept in `pages.jsonl` for the next recrawl.
    fn archive(&mut self, p: &PageDone, resp: &PageResponse) -> Result<(), CrawlError> {
        let head = response_head(resp.status, &resp.headers, &["transfer-encoding"], "");
        let prior = self.config.prior.clone();
        let prior = prior.as_deref().and_then(|pr| pr.get(&p.released.url));
        let validators = prior.map(crate::revisit::conditional).unwrap_or_default();
        let request = request_head(&p.released.url, &self.config.user_agent, &validators);
        let x = Exchange {
            url: &p.released.url,
            date: p.date,
            ip: resp.ip,
            request_head: request.as_bytes(),
            response_head: head.as_bytes(),
            body: &resp.body,
            truncated: resp.truncated,
            evidence: p.evidence.as_deref(),
        };
        let digest = crate::warc::sha1_digest(&[&resp.body]);
        // A sitemap is read afresh every time (its lastmod entries are
        // what a recrawl goes by), so it is not kept for revisits.
        let kind = match (resp.unwanted.is_some(), Tag::unpack(p.released.tag).sitemap) {
            (false, false) => Revisit::of(prior, resp.status, &digest),
            _ => None,
        };
        let stored = prior.and_then(|p| p.record.as_ref().zip(p.digest.as_deref()));
        let profile = match kind {
            Some(Revisit::NotModified) => Some(Profile::ServerNotModified),
            Some(Revisit::Unchanged) => Some(Profile::IdenticalPayloadDigest),
            _ => None,
        };
        let mut warc = self.warc.lock().map_err(|_| CrawlError::WarcPoisoned)?;
        let archived = match (profile, stored) {
            (Some(profile), Some((rec, digest))) => {
                let refers_to = RefersTo {
                    id: &rec.id,
                    date: &rec.date,
                    uri: &rec.uri,
                    payload_digest: digest,
                };
                warc.revisit(&x, profile, &refers_to)?
            }
            _ => warc.exchange(&x)?,
        };
        drop(warc);
        if let Some(kind) = kind {
            let uri = match (profile, stored) {
                (Some(_), Some((rec, _))) => rec.uri.clone(),
                _ => p.released.url.clone(),
            };
            self.keep_page(p, resp, prior, kind, archived, uri)?;
        }
        Ok(())
    }

    /// Counts a page against the earlier crawl's, and keeps its state.
    fn keep_page(
        &mut self,
        p: &PageDone,
        resp: &PageResponse,
        prior: Option<&PageState>,
        kind: Revisit,
        archived: Archived,
        uri: String,
    ) -> Result<(), CrawlError> {
        let counts = &mut self.record.summary.revisits;
        match kind {
            Revisit::NotModified => counts.not_modified += 1,
            Revisit::Unchanged => counts.unchanged += 1,
            Revisit::Changed => counts.changed += 1,
            Revisit::New => counts.new += 1,
        }
        // A 304 may leave out the validators; the earlier ones still hold.
        let header = |name: &str, before: Option<&String>| {
            resp.header(name)
                .map(str::to_owned)
                .or_else(|| before.cloned())
        };
        let lastmod = self.lastmods.get(&p.released.url).cloned();
        if let (Some(before), Some(now), false) = (
            prior.and_then(|p| p.lastmod.as_deref()),
            lastmod.as_deref(),
            kind == Revisit::New,
        ) {
            let changed = kind == Revisit::Changed;
            let host = host_of(&p.released.url);
            self.trust.host_mut(&host).observe(before != now, changed);
        }
        let mut visits = prior.map(|p| p.visits.clone()).unwrap_or_default();
        visits.push((p.date.0, matches!(kind, Revisit::Changed | Revisit::New)));
        let state = PageState {
            url: p.released.url.clone(),
            fetched: p.date.0,
            status: resp.status,
            etag: header("etag", prior.and_then(|p| p.etag.as_ref())),
            last_modified: header(
                "last-modified",
                prior.and_then(|p| p.last_modified.as_ref()),
            ),
            digest: Some(archived.payload_digest),
            record: Some(StoredRecord {
                id: archived.record_id,
                date: archived.date,
                uri,
            }),
            lastmod,
            visits,
        };
        match &mut self.record.pages {
            Some(pages) => pages.line(&state),
            None => Ok(()),
        }
    }

    /// A host answered: it counts among the crawl's hosts, and its
    /// robots.txt cache entry hears so (the 30-day rule's clock).
    async fn answered(&mut self, released: &Released) {
        if let Ok(origin) = Origin::of(&released.url) {
            self.cache.note_host_answered(&origin).await;
            self.hosts_answered.insert(origin.host.clone());
        }
    }

    async fn retry(
        &mut self,
        released: &Released,
        tag: Tag,
        outcome: &Outcome,
        at: UnixMillis,
    ) -> Result<(), CrawlError> {
        self.record.summary.retries += 1;
        let next = Tag {
            retries: tag.retries + 1,
            ..tag
        };
        let f = &mut self.frontier;
        Ok(Frontier::requeue(f, released, outcome, next.pack(), at).await?)
    }

    /// A release whose lease lapsed before its request was sent (the
    /// worker was stopped in between): nothing reached the host, so it is
    /// logged and goes back (or, if another worker holds it now, the
    /// cancel is stale).
    async fn lapsed(&mut self, released: &Released) -> Result<(), CrawlError> {
        let why = "its lease lapsed before it was sent: another worker has it";
        self.record
            .skip(&released.url, NotFetched::LeaseLapsed, why)?;
        let now = UnixMillis::now();
        Ok(Frontier::cancel(&mut self.frontier, released, now).await?)
    }

    /// The summary, once the loop is over: what is left queued (and, when
    /// the crawl gave up, why each waits), everything synced.
    async fn finish(mut self, started: Instant) -> Result<Summary, CrawlError> {
        let now = UnixMillis::now();
        let stats = Frontier::stats(&mut self.frontier).await?;
        self.record.summary.deferred = stats.queued;
        if self.record.summary.ending == Ending::GaveUp {
            self.record.log_deferred(&mut self.frontier, now)?;
        }
        self.record.summary.hosts = self.hosts_answered.len() as u64;
        Frontier::sync(&mut self.frontier).await?;
        // The last (a networked frontier hands them over at intervals, and
        // all that are left after `sync`).
        self.record.take_skipped(&mut self.frontier).await?;
        self.record.log.flush()?;
        if let Some(p) = &mut self.record.pages {
            p.flush()?;
        }
        if self.config.prior.is_some() {
            self.trust.save(&self.dir)?;
            self.record.summary.revisits.lastmod_untrusted_hosts = self.trust.untrusted();
        }
        if let Ok(mut w) = self.warc.lock() {
            w.sync()?;
            self.record.summary.warc_records = w.records();
        }
        if let Some(w) = &self.witness {
            self.record.summary.evidence = Some(w.close()?);
        }
        let seconds = started.elapsed().as_secs_f64();
        self.record.summary.seconds = seconds;
        let last = self.record.progress(0, stats.queued, seconds);
        self.write_status(&last, true);
        self.gauges(&last, stats.queued);
        Ok(self.record.summary)
    }
}

/// What the reports handled in one turn of the loop queue, and the
/// completions that must wait for it: every page's links go to the
/// frontier in one offer (one round trip on a networked frontier, however
/// many pages the turn handled), then the pages are recorded done, in
/// order. A kill in between fetches those pages again (at least once) and
/// never loses their links.
#[derive(Default)]
pub(crate) struct Turn {
    candidates: Vec<Candidate>,
    completions: Vec<(Released, Outcome, UnixMillis)>,
}

impl Turn {
    /// Offers what the turn found, then records its pages done.
    async fn finish<F: CrawlFrontier>(
        &mut self,
        frontier: &mut F,
        record: &mut Record,
    ) -> Result<(), CrawlError> {
        let candidates = std::mem::take(&mut self.candidates);
        offer_all(frontier, record, &candidates).await?;
        // A page's state is on disk before the page is recorded done: a
        // kill in between fetches it again, never loses what a recrawl
        // needs of it.
        if let Some(pages) = &mut record.pages {
            pages.flush()?;
        }
        for (released, outcome, at) in std::mem::take(&mut self.completions) {
            Frontier::complete(frontier, &released, &outcome, at).await?;
        }
        Ok(())
    }
}
