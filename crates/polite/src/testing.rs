//! The contract every [`Frontier`] backend must keep, as code any backend
//! can run (feature `testing`).
//!
//! [`check_contract`] plays a sequence of operations ([`Op`]: enqueues
//! with duplicates and priorities, releases, completions with 200, 404,
//! 429 and 503, cancellations, clock steps, and reopens) against the
//! backend under test and against the in-memory [`LocalFrontier`], the
//! reference, and fails on the first answer that differs. After a reopen
//! (only for backends that persist, and only with nothing in flight) the
//! order among hosts may legitimately change, so from then on both are
//! drained and must release the same pages, each once. [`ops`] generates
//! sequences for `proptest`.
//!
//! ```
//! use mannerly_polite::frontier::LocalFrontier;
//! use mannerly_polite::testing::{block_on, check_contract, contract_politeness, Op};
//!
//! let ops = [
//!     Op::Enqueue { host: 0, page: 1, priority: 2 },
//!     Op::Next,
//!     Op::Complete { which: 0, status: 200 },
//!     Op::Advance { ms: 1_500 },
//!     Op::Next,
//! ];
//! let result = block_on(check_contract(&ops, false, |config| async move {
//!     Ok(LocalFrontier::in_memory(contract_politeness(), config))
//! }));
//! assert_eq!(result, Ok(()));
//! ```

use std::future::Future;

use proptest::prelude::*;

use crate::controller::{Config, Outcome, Politeness, RobotsPacing, UnixMillis};
use crate::frontier::{
    Begin, Frontier, FrontierConfig, FrontierError, KeyLoad, Kind, LocalFrontier, Next, Offer,
    Released,
};

pub use crate::frontier::block_on;

/// One step of a contract run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Enqueue `https://h{host}.test/p{page}` (so duplicates recur).
    Enqueue {
        /// Host number.
        host: u8,
        /// Page number.
        page: u8,
        /// Priority.
        priority: u8,
    },
    /// Offer several URLs at once ([`Frontier::enqueue_many`]).
    EnqueueMany {
        /// Host and page numbers, with a priority each.
        urls: Vec<(u8, u8, u8)>,
    },
    /// Ask for the next release.
    Next,
    /// Ask for up to `max` releases at once ([`Frontier::next_batch`]).
    NextBatch {
        /// How many.
        max: u8,
    },
    /// Complete one of the releases in flight (`which` modulo their
    /// number) with this status.
    Complete {
        /// Which release.
        which: u8,
        /// The HTTP status (429 comes with `Retry-After: 2`).
        status: u16,
    },
    /// Cancel one of the releases in flight.
    Cancel {
        /// Which release.
        which: u8,
    },
    /// Requeue one of the releases in flight (a retry) with this status
    /// and a new tag.
    Requeue {
        /// Which release.
        which: u8,
        /// The HTTP status of the failed attempt.
        status: u16,
    },
    /// Discard one of the releases in flight (no request, never fetched).
    Discard {
        /// Which release.
        which: u8,
    },
    /// Report `https://h{host}.test`'s robots.txt unavailable for `ms`.
    Unavailable {
        /// Host number.
        host: u8,
        /// For how long.
        ms: u16,
    },
    /// Begin a request to `https://h{host}.test` the frontier did not
    /// release (a robots.txt redirect from another host).
    BeginRequest {
        /// Host number.
        host: u8,
    },
    /// End one of the requests begun (`which` modulo their number).
    EndRequest {
        /// Which request.
        which: u8,
    },
    /// Ask which keys hold the most URLs.
    Busiest,
    /// Ask why a URL waits.
    WhyNotNow {
        /// Host number.
        host: u8,
        /// Page number.
        page: u8,
    },
    /// Move the clock forward.
    Advance {
        /// Milliseconds.
        ms: u16,
    },
    /// Close and reopen the backend (skipped for backends that do not
    /// persist, and while anything is in flight).
    Reopen,
}

/// A strategy for one [`Op`], weighted as the original differential test.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, 0u8..40, 0u8..4).prop_map(|(host, page, priority)| Op::Enqueue { host, page, priority }),
        4 => Just(Op::Next),
        1 => proptest::collection::vec((0u8..6, 0u8..40, 0u8..4), 0..8)
            .prop_map(|urls| Op::EnqueueMany { urls }),
        2 => (0u8..6).prop_map(|max| Op::NextBatch { max }),
        3 => (any::<u8>(), prop_oneof![Just(200u16), Just(404), Just(429), Just(503)])
            .prop_map(|(which, status)| Op::Complete { which, status }),
        1 => any::<u8>().prop_map(|which| Op::Cancel { which }),
        1 => (any::<u8>(), prop_oneof![Just(429u16), Just(503), Just(500)])
            .prop_map(|(which, status)| Op::Requeue { which, status }),
        1 => any::<u8>().prop_map(|which| Op::Discard { which }),
        1 => (0u8..6, 0u16..5_000).prop_map(|(host, ms)| Op::Unavailable { host, ms }),
        1 => (0u8..6, 0u8..40).prop_map(|(host, page)| Op::WhyNotNow { host, page }),
        1 => (0u8..6).prop_map(|host| Op::BeginRequest { host }),
        1 => any::<u8>().prop_map(|which| Op::EndRequest { which }),
        1 => Just(Op::Busiest),
        2 => (0u16..3_000).prop_map(|ms| Op::Advance { ms }),
        1 => Just(Op::Reopen),
    ]
}

/// Sequences of 1 to 250 operations.
pub fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(op(), 1..250)
}

/// The configuration the contract runs under. A backend may change its
/// own tuning (e.g. the on-disk window) but not these bounds.
pub fn contract_config() -> FrontierConfig {
    FrontierConfig {
        max_per_key: 25,
        ..FrontierConfig::on_disk()
    }
}

/// The politeness settings the contract runs under.
pub fn contract_politeness() -> Politeness {
    Politeness::new(Config::default())
}

/// When contract runs start (2026-11-20T10:00Z).
pub const START: UnixMillis = UnixMillis::from_secs(1_795_168_800);

/// Reports a release's outcome the way every contract run does: for a
/// robots.txt, the rules first (a Crawl-delay of 0 to 2 s, known for
/// 20 s); then the completion. Returns the completion's answer as text.
async fn finish<F: Frontier>(f: &mut F, r: &Released, status: u16, now: UnixMillis) -> String {
    if r.kind == Kind::Robots {
        let origin = r.url.trim_end_matches("/robots.txt");
        let pacing = RobotsPacing {
            crawl_delay: Some(f64::from(u8::try_from(r.key.len() % 3).unwrap_or(0))),
            request_rate: None,
        };
        if let Err(e) = f
            .robots_known(origin, pacing, now.add_millis(20_000), now)
            .await
        {
            return format!("robots_known failed: {e}");
        }
    }
    let outcome = Outcome::Status {
        status,
        latency: 30,
        retry_after: (status == 429).then(|| "2".to_owned()),
    };
    format!(
        "{:?}",
        f.complete(r, &outcome, now)
            .await
            .map_err(|e| e.to_string())
    )
}

/// Releases and completes everything; the pages released, sorted.
async fn drain_pages<F: Frontier>(f: &mut F, mut now: UnixMillis) -> Result<Vec<String>, String> {
    let mut pages = Vec::new();
    loop {
        match f.next(now).await.map_err(|e| e.to_string())? {
            Next::Fetch(r) => {
                if r.kind == Kind::Page {
                    pages.push(r.url.clone());
                }
                finish(f, &r, 200, now).await;
            }
            Next::Wait { until } => now = until,
            Next::Empty => break,
            Next::Busy => return Err("busy with nothing in flight".into()),
        }
    }
    pages.sort();
    Ok(pages)
}

macro_rules! same {
    ($a:expr, $b:expr, $($what:tt)+) => {{
        let (a, b) = (&$a, &$b);
        if a != b {
            return Err(format!("{}: the reference answered {:?}, the backend {:?}", format!($($what)+), a, b));
        }
    }};
}

/// A contract run's reference frontier and what is out on both.
struct Run {
    /// The reference: the embedded frontier in memory.
    mem: LocalFrontier,
    flying: Vec<Released>,
    begun: Vec<String>,
    now: UnixMillis,
}

fn err(e: FrontierError) -> String {
    e.to_string()
}

impl Run {
    /// Plays an operation on the reference and on the backend `d`, and
    /// says how they first differ.
    async fn play<F: Frontier + Send>(
        &mut self,
        i: usize,
        op: &Op,
        d: &mut F,
    ) -> Result<(), String> {
        match op {
            Op::Enqueue {
                host,
                page,
                priority,
            } => {
                let url = format!("https://h{host}.test/p{page}");
                let tag = u32::from(*host) * 1_000 + u32::from(*page);
                let a = self
                    .mem
                    .enqueue_tagged(&url, *priority, tag, self.now)
                    .await
                    .map_err(err)?;
                let b = d
                    .enqueue_tagged(&url, *priority, tag, self.now)
                    .await
                    .map_err(err)?;
                same!(a, b, "op {i}: enqueue {url}");
            }
            Op::EnqueueMany { urls } => {
                let urls: Vec<(String, u8, u32)> = urls
                    .iter()
                    .map(|&(host, page, priority)| {
                        let tag = u32::from(host) * 1_000 + u32::from(page);
                        (format!("https://h{host}.test/p{page}"), priority, tag)
                    })
                    .collect();
                let offers: Vec<Offer<'_>> = urls
                    .iter()
                    .map(|(url, priority, tag)| Offer::new(url, *priority, *tag))
                    .collect();
                let a = Frontier::enqueue_many(&mut self.mem, &offers, self.now)
                    .await
                    .map_err(err)?;
                let b = d.enqueue_many(&offers, self.now).await.map_err(err)?;
                same!(a, b, "op {i}: enqueue_many {urls:?}");
            }
            Op::NextBatch { max } => {
                let a = Frontier::next_batch(&mut self.mem, usize::from(*max), self.now)
                    .await
                    .map_err(err)?;
                let b = d
                    .next_batch(usize::from(*max), self.now)
                    .await
                    .map_err(err)?;
                // What a further call would answer is the backend's to know
                // or not (`None`: ask again); when both know, they agree.
                same!(a.released, b.released, "op {i}: next_batch {max}");
                if let (Some(x), Some(y)) = (&a.then, &b.then) {
                    same!(x, y, "op {i}: next_batch {max}: then");
                }
                if b.released.is_empty() && b.then.is_none() {
                    return Err(format!(
                        "op {i}: next_batch released nothing and said ask again"
                    ));
                }
                self.flying.extend(a.released);
            }
            Op::Next => {
                let a = self.mem.next(self.now).await.map_err(err)?;
                let b = d.next(self.now).await.map_err(err)?;
                same!(a, b, "op {i}: next");
                if let Next::Fetch(r) = a {
                    self.flying.push(r);
                }
            }
            Op::Busiest => {
                // The counts must agree; the head URL is the backend's to
                // give or not.
                let counts =
                    |v: Vec<KeyLoad>| v.into_iter().map(|l| (l.key, l.queued)).collect::<Vec<_>>();
                let a = counts(self.mem.busiest(3));
                let b = counts(d.busiest(3).await.map_err(err)?);
                same!(a, b, "op {i}: busiest");
            }
            Op::WhyNotNow { host, page } => {
                let url = format!("https://h{host}.test/p{page}");
                let a = self.mem.why_not_now(&url, self.now);
                let b = d.why_not_now(&url, self.now).await.map_err(err)?;
                same!(a, b, "op {i}: why_not_now {url}");
            }
            Op::Advance { ms } => self.now = self.now.add_millis(u64::from(*ms)),
            Op::Reopen => {}
            op => return self.play_flight(i, op, d).await,
        }
        Ok(())
    }

    /// The operations on what is in flight: releases settled, robots.txt
    /// reported, requests begun and ended outside the queues.
    async fn play_flight<F: Frontier + Send>(
        &mut self,
        i: usize,
        op: &Op,
        d: &mut F,
    ) -> Result<(), String> {
        match op {
            Op::Complete { which, status } if !self.flying.is_empty() => {
                let r = self.flying.remove(usize::from(*which) % self.flying.len());
                let a = finish(&mut self.mem, &r, *status, self.now).await;
                let b = finish(d, &r, *status, self.now).await;
                same!(a, b, "op {i}: complete");
            }
            Op::Cancel { which } if !self.flying.is_empty() => {
                let r = self.flying.remove(usize::from(*which) % self.flying.len());
                let a = self.mem.cancel(&r, self.now).await.map_err(err);
                let b = d.cancel(&r, self.now).await.map_err(err);
                same!(a, b, "op {i}: cancel");
            }
            Op::Requeue { which, status } if !self.flying.is_empty() => {
                let r = self.flying.remove(usize::from(*which) % self.flying.len());
                let outcome = Outcome::Status {
                    status: *status,
                    latency: 30,
                    retry_after: (*status == 429).then(|| "1".to_owned()),
                };
                let tag = r.tag.wrapping_add(1_000_000);
                let a = self
                    .mem
                    .requeue(&r, &outcome, tag, self.now)
                    .await
                    .map_err(err);
                let b = d.requeue(&r, &outcome, tag, self.now).await.map_err(err);
                same!(a, b, "op {i}: requeue");
                if a.is_err() {
                    // A robots.txt release: it is still in flight.
                    self.flying.push(r);
                }
            }
            Op::Discard { which } if !self.flying.is_empty() => {
                let r = self.flying.remove(usize::from(*which) % self.flying.len());
                let a = self.mem.discard(&r, self.now).await.map_err(err);
                let b = d.discard(&r, self.now).await.map_err(err);
                same!(a, b, "op {i}: discard");
            }
            Op::Unavailable { host, ms } => {
                let origin = format!("https://h{host}.test");
                let until = self.now.add_millis(u64::from(*ms));
                let a = self
                    .mem
                    .robots_unavailable(&origin, until, "503 since now", self.now)
                    .await
                    .map_err(err);
                let b = d
                    .robots_unavailable(&origin, until, "503 since now", self.now)
                    .await
                    .map_err(err);
                same!(a, b, "op {i}: robots_unavailable");
            }
            Op::BeginRequest { host } => {
                let url = format!("https://h{host}.test/robots.txt");
                let a = self.mem.begin_request(&url, self.now);
                let b = d.begin_request(&url, self.now).await.map_err(err)?;
                same!(a, b, "op {i}: begin_request {url}");
                if a == Begin::Started {
                    self.begun.push(url);
                }
            }
            Op::EndRequest { which } if !self.begun.is_empty() => {
                let url = self.begun.remove(usize::from(*which) % self.begun.len());
                let outcome = Outcome::Status {
                    status: 200,
                    latency: 30,
                    retry_after: None,
                };
                let a = self
                    .mem
                    .end_request(&url, &outcome, self.now)
                    .await
                    .map_err(err);
                let b = d.end_request(&url, &outcome, self.now).await.map_err(err);
                same!(a, b, "op {i}: end_request {url}");
            }
            _ => {}
        }
        Ok(())
    }

    /// Settles everything still out, on both.
    async fn settle_all<F: Frontier + Send>(&mut self, d: &mut F) -> Result<(), String> {
        let now = self.now;
        for r in self.flying.drain(..) {
            finish(&mut self.mem, &r, 200, now).await;
            finish(d, &r, 200, now).await;
        }
        let ok = Outcome::Status {
            status: 200,
            latency: 30,
            retry_after: None,
        };
        for url in self.begun.drain(..) {
            let a = self.mem.end_request(&url, &ok, now).await.map_err(err);
            let b = d.end_request(&url, &ok, now).await.map_err(err);
            same!(a, b, "end_request {url}");
        }
        Ok(())
    }

    /// Releases and completes everything on both, answer by answer.
    async fn drain_both<F: Frontier + Send>(&mut self, d: &mut F) -> Result<(), String> {
        let mut n = 0;
        loop {
            let a = self.mem.next(self.now).await.map_err(err)?;
            let b = d.next(self.now).await.map_err(err)?;
            same!(a, b, "drain {n}");
            match a {
                Next::Fetch(r) => {
                    finish(&mut self.mem, &r, 200, self.now).await;
                    finish(d, &r, 200, self.now).await;
                }
                Next::Wait { until } => self.now = until,
                Next::Empty => break,
                Next::Busy => return Err("busy with nothing in flight".into()),
            }
            n += 1;
        }
        let skipped = d.take_skipped().await.map_err(err)?;
        same!(self.mem.take_skipped(), skipped, "skipped URLs");
        Ok(())
    }
}

/// Plays `ops` against the backend that `open` opens and against the
/// reference, and says where they first differ. `open` is called once at
/// the start and again for every reopen (when `persistent`), with the
/// contract's configuration; a persistent backend must then come back with
/// what it held.
pub async fn check_contract<F, O, Fut>(ops: &[Op], persistent: bool, open: O) -> Result<(), String>
where
    F: Frontier + Send,
    O: FnMut(FrontierConfig) -> Fut,
    Fut: Future<Output = Result<F, FrontierError>>,
{
    check_contract_with(ops, persistent, contract_config(), open).await
}

/// [`check_contract`] under another configuration (the reference runs
/// under it too): for a backend's own options, such as
/// [`FrontierConfig::max_open_keys`].
pub async fn check_contract_with<F, O, Fut>(
    ops: &[Op],
    persistent: bool,
    config: FrontierConfig,
    open: O,
) -> Result<(), String>
where
    F: Frontier + Send,
    O: FnMut(FrontierConfig) -> Fut,
    Fut: Future<Output = Result<F, FrontierError>>,
{
    let politeness = contract_politeness().config;
    check_contract_under(ops, persistent, config, politeness, open).await
}

/// [`check_contract_with`] under other politeness settings too (the
/// reference takes `politeness`; `open` must give the backend the same),
/// such as more than one request in flight a host.
pub async fn check_contract_under<F, O, Fut>(
    ops: &[Op],
    persistent: bool,
    config: FrontierConfig,
    politeness: Config,
    mut open: O,
) -> Result<(), String>
where
    F: Frontier + Send,
    O: FnMut(FrontierConfig) -> Fut,
    Fut: Future<Output = Result<F, FrontierError>>,
{
    let mut run = Run {
        mem: LocalFrontier::in_memory(Politeness::new(politeness), config.clone()),
        flying: Vec::new(),
        begun: Vec::new(),
        now: START,
    };
    let mut d = open(config.clone()).await.map_err(err)?;
    let mut reopened = false;
    for (i, op) in ops.iter().enumerate() {
        // Only with nothing in flight: reopening re-issues in-flight URLs,
        // which memory cannot mirror. Keys are rescheduled on reopen, so
        // the order among hosts may differ from here on; what must hold is
        // checked below.
        if matches!(op, Op::Reopen) && persistent && run.flying.is_empty() && run.begun.is_empty() {
            d.sync().await.map_err(err)?;
            drop(d);
            d = open(config.clone()).await.map_err(err)?;
            reopened = true;
            break;
        }
        run.play(i, op, &mut d).await?;
        let queued = d.stats().await.map_err(err)?.queued;
        same!(run.mem.stats().queued, queued, "op {i}: queued");
    }
    run.settle_all(&mut d).await?;
    if reopened {
        // After a reopen: the same pages, each released once.
        let a = drain_pages(&mut run.mem, run.now).await?;
        let b = drain_pages(&mut d, run.now).await?;
        same!(a, b, "pages drained after a reopen");
        return Ok(());
    }
    run.drain_both(&mut d).await
}
