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
//! ```
//! use mannerly_polite::controller::{Config, Outcome, Politeness, RobotsPacing};
//! use mannerly_polite::frontier::{Admission, Frontier, FrontierConfig, Kind, LocalFrontier, Next};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let mut f = LocalFrontier::open(dir.path(), Politeness::new(Config::default()), FrontierConfig::on_disk())?;
//! assert_eq!(f.enqueue("https://example.com/a", 5, 0)?, Admission::Queued);
//! assert_eq!(f.enqueue("https://example.com/a#top", 5, 0)?, Admission::Duplicate);
//! // robots.txt first: it goes through the host's politeness slot.
//! let Next::Fetch(robots) = f.next(0)? else { unreachable!() };
//! assert_eq!((robots.kind, robots.url.as_str()), (Kind::Robots, "https://example.com/robots.txt"));
//! f.robots_known("https://example.com", RobotsPacing { crawl_delay: Some(2.0), request_rate: None }, 86_400_000, 100)?;
//! f.complete(&robots, &Outcome::Status { status: 200, latency: 100, retry_after: None }, 100, 0)?;
//! // The page waits for the Crawl-delay, counted from the robots.txt fetch.
//! assert_eq!(f.next(100)?, Next::Wait { until: 2_000 });
//! assert_eq!(f.why_not_now("https://example.com/a", 100).as_deref(),
//!            Some("example.com: delay of 2 s between requests (start to start); next at +1.9 s"));
//! let Next::Fetch(page) = f.next(2_000)? else { unreachable!() };
//! assert_eq!(page.url, "https://example.com/a");
//! # Ok(()) }
//! ```

mod local;

pub use local::LocalFrontier;

use std::path::PathBuf;

use crate::controller::{Millis, Outcome, RobotsPacing};
use crate::key::KeyMode;

/// What became of an enqueued URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    Queued,
    /// Seen before (queued, in flight or done).
    Duplicate,
    /// Not queued now: try later (the reason says which bound).
    Backpressure {
        reason: String,
    },
    /// Never: the host is skipped, or the URL is unusable.
    Skipped {
        reason: String,
    },
    /// IP keys: resolve this host, tell the keyer, and enqueue again.
    Unresolved {
        host: String,
    },
}

/// What a released fetch is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Page,
    /// The origin's robots.txt, released before its pages.
    Robots,
}

/// A URL released for fetching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    pub url: String,
    pub key: String,
    pub priority: u8,
    pub kind: Kind,
    /// Identifies this release to `complete` and `cancel`.
    pub lease: u64,
}

/// What the crawler should do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    Fetch(Released),
    /// Nothing may start before this time (or before an in-flight request
    /// completes, if that is sooner).
    Wait {
        until: Millis,
    },
    /// Every host with queued URLs has as many requests in flight as it
    /// may: call again after a completion.
    Busy,
    /// Nothing is queued (in-flight requests may still complete).
    Empty,
}

/// A URL dropped with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub url: String,
    pub reason: String,
}

/// Counts (a distributed backend may give estimates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub queued: u64,
    pub in_flight: u64,
    pub keys: u64,
    pub skipped: u64,
    /// In-flight URLs put back in the queue when the store was reopened.
    pub reissued: u64,
}

/// Why a frontier call failed.
#[derive(Debug, thiserror::Error)]
pub enum FrontierError {
    #[error("frontier store {}: {message}", path.display())]
    Store { path: PathBuf, message: String },
    #[error("frontier store {}: {what}", path.display())]
    Corrupt { path: PathBuf, what: String },
    #[error("frontier store {}: it keys URLs by {stored}, not {wanted}; reopen it with key mode {stored}, or start a new store", path.display())]
    KeyMode {
        path: PathBuf,
        stored: String,
        wanted: String,
    },
    #[error("lease {lease} ({url}) is not in flight: completed or cancelled twice?")]
    UnknownLease { lease: u64, url: String },
}

/// The interface every frontier backend implements. Times are the
/// milliseconds the politeness controller uses; across restarts they must
/// come from a clock that keeps going (e.g. Unix milliseconds).
pub trait Frontier {
    /// Offers a URL. Never blocks: a full frontier says so.
    fn enqueue(&mut self, url: &str, priority: u8, now: Millis)
        -> Result<Admission, FrontierError>;
    /// The next fetch whose host may be fetched now, or how long to wait.
    fn next(&mut self, now: Millis) -> Result<Next, FrontierError>;
    /// Reports how a released fetch ended; adapts the host's pacing.
    fn complete(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        now: Millis,
        now_unix: u64,
    ) -> Result<(), FrontierError>;
    /// Gives back a release that made no request: a page goes back to the
    /// head of its queue, and the host's slot and delay are as before.
    fn cancel(&mut self, released: &Released, now: Millis) -> Result<(), FrontierError>;
    /// An origin's robots.txt is known until `valid_until`, with this pacing.
    fn robots_known(
        &mut self,
        origin: &str,
        pacing: RobotsPacing,
        valid_until: Millis,
        now: Millis,
    ) -> Result<(), FrontierError>;
    /// Which rule holds this URL back, and until when; `None` if nothing.
    fn why_not_now(&self, url: &str, now: Millis) -> Option<String>;
    /// Makes everything so far durable (a no-op in memory).
    fn sync(&mut self) -> Result<(), FrontierError>;
    fn stats(&self) -> Stats;
    /// URLs dropped because their host was skipped, with the reason.
    fn take_skipped(&mut self) -> Vec<Skipped>;
}

/// Bounds and choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierConfig {
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
    /// survives the process being killed as soon as it returns).
    pub commit_every: usize,
    /// On disk: a Bloom filter in front of the seen-set (true), sized for
    /// `expected_urls` at 1% false positives.
    pub bloom: bool,
    pub expected_urls: u64,
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

/// The origin (`scheme://host[:port]`) of a URL.
pub fn origin_of(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}
