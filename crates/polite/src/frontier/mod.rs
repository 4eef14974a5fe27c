//! The frontier: which URL to fetch next, never faster than each host
//! allows.
//!
//! Mercator's shape. Front: the caller's priority (depth, sitemap
//! priority, freshness) orders URLs within a politeness key and, among
//! keys that may be fetched now, decides which goes first. Back: one queue
//! per politeness key, and a min-heap of keys by the time they may next be
//! fetched; a URL is released only when the
//! [`Politeness`](crate::controller::Politeness) controller says its key
//! may start.
//!
//! The [`Frontier`] trait is what a crawler drives. It assumes nothing
//! about where the state lives: every call can fail with a
//! [`FrontierError`], a released URL carries an opaque `lease` that
//! completes it (so a remote backend can hand leases across processes),
//! counts in [`Stats`] may be approximate, and durability is an explicit
//! [`Frontier::sync`]. [`LocalFrontier`] implements it in one process, in
//! memory or on disk; a distributed backend (one owner per host) can
//! implement the same trait.
//!
//! ## The robots.txt gate
//!
//! With [`FrontierConfig::robots_gate`] (the default), the frontier
//! releases a [`Kind::Robots`] fetch for an origin before any of its pages,
//! and again when the rules the caller reported expire. That fetch goes
//! through the same politeness slot as a page, so it counts as a request to
//! the host. The caller reports the rules with [`Frontier::robots_known`];
//! when its cache answered without a request it calls [`Frontier::cancel`],
//! which hands the slot back.
//!
//! ## Example: on disk, start to finish
//!
//! [`LocalFrontier`] never waits, so code that is not async calls it
//! through [`block_on`], which returns at once.
//!
//! ```
//! use mannerly_polite::controller::{Config, Outcome, Politeness, RobotsPacing, UnixMillis};
//! use mannerly_polite::frontier::{block_on, Admission, Frontier, FrontierConfig, Kind, LocalFrontier, Next};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let t0 = UnixMillis::from_secs(1_795_168_800); // 2026-11-20T10:00Z
//! let mut f = LocalFrontier::open(dir.path(), Politeness::new(Config::default()), FrontierConfig::on_disk())?;
//! assert_eq!(block_on(f.enqueue("https://example.com/a", 5, t0))?, Admission::Queued);
//! assert_eq!(block_on(f.enqueue("https://example.com/a#top", 5, t0))?, Admission::Duplicate);
//! // robots.txt first: it goes through the host's politeness slot.
//! let Next::Fetch(robots) = block_on(f.next(t0))? else { unreachable!() };
//! assert_eq!((robots.kind, robots.url.as_str()), (Kind::Robots, "https://example.com/robots.txt"));
//! let pacing = RobotsPacing { crawl_delay: Some(2.0), request_rate: None };
//! block_on(f.robots_known("https://example.com", pacing, t0.add_millis(86_400_000), t0.add_millis(100)))?;
//! block_on(f.complete(&robots, &Outcome::Status { status: 200, latency: 100, retry_after: None }, t0.add_millis(100)))?;
//! // The page waits for the Crawl-delay, counted from the robots.txt fetch.
//! assert_eq!(block_on(f.next(t0.add_millis(100)))?, Next::Wait { until: t0.add_millis(2_000) });
//! assert_eq!(f.why_not_now("https://example.com/a", t0.add_millis(100)).map(|h| h.to_string()).as_deref(),
//!            Some("example.com: delay of 2 s between requests (start to start); next at +1.9 s"));
//! let Next::Fetch(page) = block_on(f.next(t0.add_millis(2_000)))? else { unreachable!() };
//! assert_eq!(page.url, "https://example.com/a");
//! # Ok(()) }
//! ```
//!
//! The same calls through the trait, as generic code (a crawler) makes
//! them, with any backend:
//!
//! ```
//! use mannerly_polite::controller::UnixMillis;
//! use mannerly_polite::frontier::{Admission, Frontier, FrontierError};
//!
//! async fn seed<F: Frontier>(f: &mut F, urls: &[&str], now: UnixMillis) -> Result<usize, FrontierError> {
//!     let mut queued = 0;
//!     for url in urls {
//!         if f.enqueue(url, 0, now).await? == Admission::Queued {
//!             queued += 1;
//!         }
//!     }
//!     Ok(queued)
//! }
//! ```

mod local;
mod summary;

pub use local::LocalFrontier;

use std::borrow::Cow;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

use crate::controller::{Outcome, RobotsPacing, UnixMillis};
pub use crate::hold::Hold;
use crate::key::{KeyError, KeyMode, Keyer};

/// What became of an enqueued URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Queued.
    Queued,
    /// Seen before (queued, in flight or done), whatever the bounds say
    /// now.
    Duplicate,
    /// Not queued now: try later (the reason says which bound). A URL
    /// pushed back is not remembered as seen.
    Backpressure {
        /// Which bound.
        reason: String,
    },
    /// Never: the host is skipped, or the URL is unusable.
    Skipped {
        /// Why.
        reason: String,
    },
    /// IP keys: resolve this host, tell the keyer, and enqueue again.
    Unresolved {
        /// The host to resolve.
        host: String,
    },
}

/// What a released fetch is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A page.
    Page,
    /// The origin's robots.txt, released before its pages.
    Robots,
}

/// A URL released for fetching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    /// The URL to fetch.
    pub url: String,
    /// Its politeness key.
    pub key: String,
    /// Its priority (a robots.txt takes the priority of the page that needed it).
    pub priority: u8,
    /// Page or robots.txt.
    pub kind: Kind,
    /// The tag given at enqueue (or requeue); 0 for a robots.txt.
    pub tag: u32,
    /// Identifies this release to `complete` and `cancel`.
    pub lease: u64,
}

impl Released {
    /// `Ok` for a page; [`FrontierError::NotAPage`] for a robots.txt
    /// release, which only the robots.txt cache retries (what `requeue`
    /// checks in every backend).
    pub fn require_page(&self) -> Result<(), FrontierError> {
        match self.kind {
            Kind::Page => Ok(()),
            Kind::Robots => Err(FrontierError::NotAPage {
                lease: self.lease,
                url: self.url.clone(),
            }),
        }
    }
}

/// How a release ends: the four calls that end one ([`Frontier::complete`],
/// [`Frontier::requeue`], [`Frontier::cancel`], [`Frontier::discard`]) as
/// one value, for a backend that settles them in one place.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Settle<'a> {
    /// A request was made: pacing learns from it; a page is done.
    Done(&'a Outcome),
    /// A request was made and will be tried again: a page goes back to
    /// the head of its queue with a new tag.
    Retry(&'a Outcome, u32),
    /// No request was made: a page goes back as it was.
    Cancel,
    /// No request was made and none will be: a page is done.
    Drop,
}

impl Settle<'_> {
    /// The outcome pacing learns from, when a request was made.
    pub fn outcome(&self) -> Option<&Outcome> {
        match self {
            Settle::Done(o) | Settle::Retry(o, _) => Some(o),
            Settle::Cancel | Settle::Drop => None,
        }
    }
}

/// What the crawler should do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Fetch this now.
    Fetch(Released),
    /// Nothing may start before this time (or before an in-flight request
    /// completes, if that is sooner).
    Wait {
        /// The instant.
        until: UnixMillis,
    },
    /// Every host with queued URLs has as many requests in flight as it
    /// may: call again after a completion.
    Busy,
    /// Nothing is queued (in-flight requests may still complete).
    Empty,
}

/// One URL offered to [`Frontier::enqueue_many`], made by [`Offer::new`]
/// or, for a URL the caller holds parsed, [`Offer::parsed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer<'a> {
    /// The URL.
    pub url: &'a str,
    /// Its priority (higher first).
    pub priority: u8,
    /// The tag kept beside it (see [`Frontier::enqueue_tagged`]).
    pub tag: u32,
    /// `url` as the caller parsed it: the backend reads it instead of
    /// parsing the text again, as long as the two still agree.
    parsed: Option<&'a url::Url>,
}

impl<'a> Offer<'a> {
    /// An offer of a URL as text, parsed by the backend.
    pub fn new(url: &'a str, priority: u8, tag: u32) -> Offer<'a> {
        Offer {
            url,
            priority,
            tag,
            parsed: None,
        }
    }

    /// An offer of a URL already parsed (a page's link, resolved against
    /// it): the backend does not parse it again.
    pub fn parsed(url: &'a url::Url, priority: u8, tag: u32) -> Offer<'a> {
        Offer {
            url: url.as_str(),
            priority,
            tag,
            parsed: Some(url),
        }
    }
}

/// What [`Frontier::next_batch`] answers: the fetches released, and what
/// a further call would answer if nothing changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Fetches to start now, at most the number asked for.
    pub released: Vec<Released>,
    /// `None`: more may be ready now (the batch was full, or the backend
    /// stopped early); ask again. Otherwise the answer a further call would
    /// give ([`Next::Wait`], [`Next::Busy`] or [`Next::Empty`]); it is never
    /// `None` when nothing was released.
    pub then: Option<Next>,
}

/// A URL dropped with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The URL.
    pub url: String,
    /// Why it was dropped.
    pub reason: String,
}

/// The answer to [`Frontier::begin_request`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// The host's slot is taken: send the request, then call
    /// [`Frontier::end_request`].
    Started,
    /// Not before this instant: ask again then.
    Wait {
        /// The instant.
        until: UnixMillis,
    },
    /// Never: the host is skipped, or the URL names none.
    Refused {
        /// Why.
        reason: String,
    },
}

/// A key and how much it holds (see [`Frontier::busiest`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLoad {
    /// The politeness key.
    pub key: String,
    /// URLs queued for it.
    pub queued: u64,
    /// The URL at the head of its queue, when the backend has it at hand
    /// (ask [`Frontier::why_not_now`] about it).
    pub head: Option<String>,
}

/// Counts (a distributed backend may give estimates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// URLs queued.
    pub queued: u64,
    /// Releases not yet completed or cancelled.
    pub in_flight: u64,
    /// Keys with queued URLs.
    pub keys: u64,
    /// URLs dropped because their host was skipped, in all.
    pub skipped: u64,
    /// Requests in flight when the store was last written (a kill), as
    /// their hosts' states recorded them: their pages are back in the
    /// queue, a robots.txt among them is fetched again.
    pub reissued: u64,
}

/// How many hosts (politeness keys) are in each state, for a crawl's
/// metrics. Each host counts once, in the first state that holds it, in
/// this order: skipped, in flight, robots.txt unavailable, backing off,
/// parked, ready, waiting; a host with nothing queued is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HostCensus {
    /// URLs queued and nothing holds them.
    pub ready: u64,
    /// URLs queued, the host waiting for a place among the hosts in
    /// progress (`open_hosts`): not stalled, but not yet begun.
    pub parked: u64,
    /// URLs queued, waiting out the delay.
    pub waiting: u64,
    /// A request in flight.
    pub in_flight: u64,
    /// Waiting out a Retry-After, a pause or a backoff after failures.
    pub backoff: u64,
    /// Pages held while the origin's robots.txt cannot be had.
    pub robots_unavailable: u64,
    /// Skipped for good (a Crawl-delay over the maximum).
    pub skipped: u64,
    /// Nothing queued.
    pub done: u64,
}

impl HostCensus {
    /// `(state, count)` in the order above, for a metrics gauge.
    pub fn states(&self) -> [(&'static str, u64); 8] {
        [
            ("ready", self.ready),
            ("parked", self.parked),
            ("waiting", self.waiting),
            ("in_flight", self.in_flight),
            ("backoff", self.backoff),
            ("robots_unavailable", self.robots_unavailable),
            ("skipped", self.skipped),
            ("done", self.done),
        ]
    }
}

/// Why a frontier call failed. Match on the variant; the display says
/// which store and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrontierError {
    /// The store's backend failed (disk, server); `source` says how.
    #[error("frontier store {store}: {source}")]
    Store {
        /// The store: a directory, or a server's address.
        store: String,
        /// The backend's own error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The store holds something this code cannot have written.
    #[error("frontier store {store}: {what}")]
    Corrupt {
        /// The store.
        store: String,
        /// What is malformed.
        what: String,
    },
    /// The store was created under another key mode; using it under this
    /// one would split a host's budget in two.
    #[error("frontier store {store}: it keys URLs by {stored}, not {wanted}; reopen it with key mode {stored}, or start a new store")]
    KeyMode {
        /// The store.
        store: String,
        /// The mode it was created under.
        stored: String,
        /// The mode asked for.
        wanted: String,
    },
    /// The store was written by a newer version of this library.
    #[error("frontier store {store}: written in format {found}, but this version of mannerly reads formats up to {supported}; upgrade mannerly or start a new store")]
    NewerFormat {
        /// The store.
        store: String,
        /// The format recorded in the store.
        found: u32,
        /// The newest format this code reads.
        supported: u32,
    },
    /// `requeue` of a robots.txt release (robots.txt is retried by the
    /// robots.txt cache, not the queue).
    #[error("lease {lease} ({url}) is a robots.txt fetch, not a page: it cannot be requeued")]
    NotAPage {
        /// The lease given.
        lease: u64,
        /// Its URL, for the message.
        url: String,
    },
    /// `complete` or `cancel` for a lease that is not in flight.
    #[error("lease {lease} ({url}) is not in flight: completed or cancelled twice?")]
    UnknownLease {
        /// The lease given.
        lease: u64,
        /// Its URL, for the message.
        url: String,
    },
}

/// The interface every frontier backend implements.
///
/// Every call is async and fallible, so a backend may live behind a
/// network (a Redis-protocol server shared by a fleet) without blocking a
/// runtime; the in-process [`LocalFrontier`] answers at once (its futures
/// are ready on the first poll) and also offers each call as a plain
/// synchronous method. Calls that change state take `&mut self`: one
/// driver owns a frontier handle and makes one decision at a time, which
/// is what a crawl loop does; a networked backend pipelines inside a call,
/// and several workers each hold their own handle. The futures are `Send`,
/// so a driver can run on a multi-threaded runtime.
///
/// Times are [`UnixMillis`]: persisted politeness state is read back by
/// later processes (or other workers), so the clock must keep going across
/// them.
pub trait Frontier {
    /// Offers a URL with tag 0. Never blocks: a full frontier says so.
    fn enqueue(
        &mut self,
        url: &str,
        priority: u8,
        now: UnixMillis,
    ) -> impl Future<Output = Result<Admission, FrontierError>> + Send {
        self.enqueue_tagged(url, priority, 0, now)
    }
    /// Offers a URL with a tag the frontier keeps beside it (persisted with
    /// it) and hands back in [`Released::tag`]: a crawler keeps the URL's
    /// depth, redirect hops and retries there.
    fn enqueue_tagged(
        &mut self,
        url: &str,
        priority: u8,
        tag: u32,
        now: UnixMillis,
    ) -> impl Future<Output = Result<Admission, FrontierError>> + Send;
    /// Offers several URLs at once (a page's links), answering for each as
    /// [`enqueue_tagged`](Frontier::enqueue_tagged) would, in order. A
    /// networked backend sends them in one round trip; the default makes
    /// one call per URL.
    fn enqueue_many(
        &mut self,
        offers: &[Offer<'_>],
        now: UnixMillis,
    ) -> impl Future<Output = Result<Vec<Admission>, FrontierError>> + Send
    where
        Self: Send,
    {
        async move {
            let mut out = Vec::with_capacity(offers.len());
            for o in offers {
                out.push(self.enqueue_tagged(o.url, o.priority, o.tag, now).await?);
            }
            Ok(out)
        }
    }
    /// The next fetch whose host may be fetched now, or how long to wait.
    fn next(&mut self, now: UnixMillis)
        -> impl Future<Output = Result<Next, FrontierError>> + Send;
    /// Up to `max` fetches that may start now, as that many calls to
    /// [`next`](Frontier::next) would release them, and then what a
    /// further call would answer. A crawler asks for as many as it has
    /// free slots: a networked backend releases them in one round trip,
    /// and none is held back for later (a release counts as started).
    /// The default calls `next` until it has `max` (at least 1) or an
    /// answer that is not a fetch.
    fn next_batch(
        &mut self,
        max: usize,
        now: UnixMillis,
    ) -> impl Future<Output = Result<Batch, FrontierError>> + Send
    where
        Self: Send,
    {
        async move {
            let max = max.max(1);
            let mut released = Vec::new();
            while released.len() < max {
                match self.next(now).await? {
                    Next::Fetch(r) => released.push(r),
                    other => {
                        return Ok(Batch {
                            released,
                            then: Some(other),
                        })
                    }
                }
            }
            Ok(Batch {
                released,
                then: None,
            })
        }
    }
    /// Reports how a released fetch ended; adapts the host's pacing.
    /// Retry-After dates in `outcome` are read against `now`.
    fn complete(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> impl Future<Output = Result<(), FrontierError>> + Send;
    /// Reports a request that failed and will be tried again (429, 5xx,
    /// a timeout): the host's pacing adapts to `outcome` as in
    /// [`complete`](Frontier::complete), and the page goes back to the head
    /// of its queue with `tag`, so the retry waits its turn like any
    /// request. Only pages: a robots.txt release is an error.
    fn requeue(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        tag: u32,
        now: UnixMillis,
    ) -> impl Future<Output = Result<(), FrontierError>> + Send;
    /// Gives back a release that made no request and never will (the page
    /// turned out disallowed or out of bounds): the host's slot and delay
    /// are as before, and the URL is done.
    fn discard(
        &mut self,
        released: &Released,
        now: UnixMillis,
    ) -> impl Future<Output = Result<(), FrontierError>> + Send;
    /// An origin's robots.txt could not be had (5xx, 429, network: a
    /// complete disallow): its pages wait until `until`, when its
    /// robots.txt is released again; `reason` is what `why_not_now` says.
    fn robots_unavailable(
        &mut self,
        origin: &str,
        until: UnixMillis,
        reason: &str,
        now: UnixMillis,
    ) -> impl Future<Output = Result<(), FrontierError>> + Send;
    /// Just before a released request is sent: whether it is still the
    /// caller's to send. A backend shared by a fleet answers no when the
    /// release's lease lapsed (the caller was paused, or slow, and the URL
    /// may be another worker's now) and otherwise extends the lease; the
    /// embedded frontier always answers yes. After a no the release is
    /// over: do not complete, requeue or cancel it.
    fn confirm(
        &mut self,
        released: &Released,
        now: UnixMillis,
    ) -> impl Future<Output = Result<bool, FrontierError>> + Send {
        let _ = (released, now);
        async { Ok(true) }
    }
    /// After a yes from [`confirm`](Frontier::confirm): the moment, on this
    /// process's monotonic clock, after which the request must not leave
    /// any more (a shared backend's lease may be another worker's by then).
    /// The sender checks it as the last thing before sending, so a process
    /// stopped between `confirm` and the send does not send late. `None`:
    /// no such moment (the embedded frontier).
    fn send_by(&self, released: &Released) -> Option<std::time::Instant> {
        let _ = released;
        None
    }
    /// Gives back a release that made no request: a page goes back to the
    /// head of its queue, and the host's slot and delay are as before.
    fn cancel(
        &mut self,
        released: &Released,
        now: UnixMillis,
    ) -> impl Future<Output = Result<(), FrontierError>> + Send;
    /// An origin's robots.txt is known until `valid_until`, with this pacing.
    fn robots_known(
        &mut self,
        origin: &str,
        pacing: RobotsPacing,
        valid_until: UnixMillis,
        now: UnixMillis,
    ) -> impl Future<Output = Result<(), FrontierError>> + Send;
    /// A request the frontier did not release is about to go to `url`'s
    /// host (a robots.txt redirect that leaves its origin's host): if the
    /// host's pacing allows a request now, its slot is taken
    /// ([`Begin::Started`]) until [`end_request`](Frontier::end_request);
    /// otherwise the answer says until when to wait, or that the host is
    /// not to be fetched at all.
    fn begin_request(
        &mut self,
        url: &str,
        now: UnixMillis,
    ) -> impl Future<Output = Result<Begin, FrontierError>> + Send;
    /// Ends a request [`begin_request`](Frontier::begin_request) started:
    /// the host's pacing learns from `outcome` as from a completion.
    fn end_request(
        &mut self,
        url: &str,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> impl Future<Output = Result<(), FrontierError>> + Send;
    /// The `n` keys holding the most queued URLs, most first (a distributed
    /// backend may answer from estimates).
    fn busiest(
        &mut self,
        n: usize,
    ) -> impl Future<Output = Result<Vec<KeyLoad>, FrontierError>> + Send;
    /// Which rule holds this URL back, and until when; `None` if nothing.
    fn why_not_now(
        &mut self,
        url: &str,
        now: UnixMillis,
    ) -> impl Future<Output = Result<Option<Hold>, FrontierError>> + Send;
    /// Makes everything so far durable (a no-op in memory).
    fn sync(&mut self) -> impl Future<Output = Result<(), FrontierError>> + Send;
    /// Counts (a distributed backend may give estimates).
    fn stats(&mut self) -> impl Future<Output = Result<Stats, FrontierError>> + Send;
    /// URLs dropped because their host was skipped, with the reason, since
    /// the last call.
    fn take_skipped(&mut self) -> impl Future<Output = Result<Vec<Skipped>, FrontierError>> + Send;
}

/// Bounds and choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierConfig {
    /// Which URLs share a politeness budget (host).
    pub key_mode: KeyMode,
    /// URLs queued per key before admission pushes back (100,000).
    pub max_per_key: u64,
    /// URLs queued in all (in memory 1,000,000; on disk 100,000,000).
    pub max_total: u64,
    /// Keys with queued URLs (1,000,000).
    pub max_keys: u64,
    /// On disk: URLs per key kept in memory; the rest stay on disk (8).
    pub window: usize,
    /// Release each origin's robots.txt before its pages (true).
    pub robots_gate: bool,
    /// On disk: commit every this many operations (1: each operation
    /// survives the process being killed as soon as it returns; above 1,
    /// the owner calls [`LocalFrontier::commit`] where operations must
    /// survive, and a kill loses at most those since the last commit).
    pub commit_every: usize,
    /// On disk: a Bloom filter in front of the seen-set (true), at 1%
    /// false positives. It starts sized for 65,536 URLs and grows
    /// fourfold, rebuilt from the store, each time it fills.
    pub bloom: bool,
    /// The most URLs the on-disk Bloom filter grows to be sized for
    /// (10,000,000); past that its false positives rise, and more lookups
    /// fall through to the store.
    pub expected_urls: u64,
    /// On disk: at a clean close, the store's journal is rotated when it
    /// holds more than this many bytes (4 MiB), so the next open need not
    /// replay it (up to 1.3 s near fjall's 64 MB rotation point), at the
    /// cost of up to 64 MB of writes at close. `u64::MAX` never rotates.
    pub rotate_journal_above: u64,
    /// Keys in progress at once (released and not yet done); others wait
    /// their turn, so what a host in progress costs is paid for this many
    /// hosts at most (`u64::MAX`, no bound).
    pub max_open_keys: u64,
}

impl Default for FrontierConfig {
    fn default() -> Self {
        FrontierConfig {
            key_mode: KeyMode::Host,
            max_per_key: 100_000,
            max_total: 1_000_000,
            max_keys: 1_000_000,
            window: 8,
            robots_gate: true,
            commit_every: 1,
            bloom: true,
            expected_urls: 10_000_000,
            rotate_journal_above: 4 << 20,
            max_open_keys: u64::MAX,
        }
    }
}

impl FrontierConfig {
    /// Defaults for an on-disk frontier (a larger total bound).
    pub fn on_disk() -> FrontierConfig {
        FrontierConfig {
            max_total: 100_000_000,
            ..FrontierConfig::default()
        }
    }
}

/// Longest politeness key accepted (host names are at most 253 bytes).
pub const MAX_KEY: usize = 1024;

/// The first checks of an enqueue, the same in every backend: the URL is
/// absolute, has a politeness key, and the key is not absurdly long. The
/// parsed URL and its key, or the answer to give.
pub fn admit(keyer: &Keyer, url: &str) -> Result<(url::Url, String), Admission> {
    let parsed = url::Url::parse(url).map_err(|e| Admission::Skipped {
        reason: format!("`{url}` is not an absolute URL: {e}"),
    })?;
    let key = key_of(keyer, &parsed)?;
    Ok((parsed, key))
}

/// A parsed URL's politeness key, if it has one that is not absurdly long.
fn key_of(keyer: &Keyer, parsed: &url::Url) -> Result<String, Admission> {
    let key = keyer.key_of(parsed).map_err(|e| match e {
        KeyError::Unresolved { host } => Admission::Unresolved { host },
        e => Admission::Skipped {
            reason: e.to_string(),
        },
    })?;
    if key.len() > MAX_KEY {
        return Err(Admission::Skipped {
            reason: format!("`{parsed}`: its politeness key is longer than {MAX_KEY} bytes"),
        });
    }
    Ok(key)
}

/// [`admit`] for an [`Offer`]: the URL it carries parsed is read as it
/// is (when its text was not changed since), any other is parsed.
pub fn admit_offer<'a>(
    keyer: &Keyer,
    offer: &Offer<'a>,
) -> Result<(Cow<'a, url::Url>, String), Admission> {
    match offer.parsed {
        Some(parsed) if parsed.as_str() == offer.url => {
            Ok((Cow::Borrowed(parsed), key_of(keyer, parsed)?))
        }
        _ => admit(keyer, offer.url).map(|(parsed, key)| (Cow::Owned(parsed), key)),
    }
}

/// The origin (`scheme://host[:port]`) of a URL.
pub fn origin_of(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

/// Runs a future to completion on this thread (no runtime needed): the
/// way to call [`LocalFrontier`] from code that is not async (its calls
/// never wait, so this returns at once), and for tests and benchmarks of
/// backends whose futures need no reactor.
///
/// ```
/// use mannerly_polite::controller::{Config, Politeness, UnixMillis};
/// use mannerly_polite::frontier::{block_on, Admission, Frontier, FrontierConfig, LocalFrontier};
///
/// let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), FrontierConfig::default());
/// let t0 = UnixMillis::from_secs(1_795_168_800);
/// assert_eq!(block_on(f.enqueue("https://example.com/", 1, t0)).unwrap(), Admission::Queued);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    thread_local! {
        // One waker per thread, so a call allocates nothing.
        static WAKER: Waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    }
    WAKER.with(|waker| run(future, waker))
}

fn run<F: Future>(future: F, waker: &Waker) -> F::Output {
    let mut cx = Context::from_waker(waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}
