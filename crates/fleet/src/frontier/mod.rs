//! [`FleetFrontier`]: the [`Frontier`] on a Redis-protocol server.
//!
//! Each call is one script on one partition (a few calls that span
//! partitions, `stats` and `busiest`, pipeline one read per partition). The
//! politeness arithmetic is `mannerly-polite`'s controller, run by the
//! worker on the host's state as the store last recorded it; the scripts
//! keep what a claim must decide atomically (`check`, `start`, the queues,
//! the robots.txt gate, leases).
//!
//! The worker's side is split by job, each an `impl` block of its own:
//! `join` (joining a crawl), `lease` (the heartbeat, confirming before a
//! send), `release` (release and claims), `settle`
//! (settling flights and the outbox), `probe` (probing and the board),
//! `enqueue`, `stats`, and `calls` (running scripts on the store). The
//! [`Frontier`] impl here is a thin layer over them.

use std::collections::HashMap;
use std::time::Duration;

use mannerly_polite::controller::{
    HostState, Outcome, Politeness, RobotsPacing, Started, UnixMillis, Wait,
};
use mannerly_polite::frontier::{
    admit_offer, origin_of, Admission, Batch, Begin, Frontier, FrontierConfig, FrontierError, Hold,
    KeyLoad, Kind, Next, Offer, Released, Settle, Skipped, Stats,
};
use mannerly_polite::key::Keyer;
use redis::Value;

#[cfg(doc)]
use crate::client::RobotsStore;
use crate::client::{across, run_on, store_err, FleetConnection, Outbox};
use crate::layout::Layout;
use crate::lua::Scripts;
use crate::seen::{Held, SeenCache};

mod calls;
mod clock;
mod enqueue;
mod gate;
mod join;
mod lastmod;
mod lease;
mod probe;
mod release;
mod settle;
mod stats;

pub use release::HOLD_AHEAD;

use clock::ClockOffset;
use probe::merge;
use settle::Step;

/// Whose clock the store's times are read against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSource {
    /// The server's (`TIME`, read inside each script), so every worker
    /// agrees on leases and due times whatever its own clock says: the
    /// fleet's choice.
    Server,
    /// The `now` each call passes: deterministic, for tests and for one
    /// worker on a fake clock.
    Caller,
}

/// How long an idle probe's answer stands at first: other workers'
/// changes (URLs they queued, leases that lapsed) are seen within this.
/// (At 200 ms, four busy workers spent a tenth of the server's time on
/// probes.)
const PROBE_EVERY: u64 = 500;

/// How long it stands at most: each probe that finds nothing to do that
/// this worker did not know of doubles the time to the next, up to this;
/// one that finds something brings it back to [`PROBE_EVERY`]. A probe
/// asks every partition (some 13 ms of the server's time at 1,024), and
/// a worker waiting for its hosts' delays would otherwise probe several
/// times a second.
const PROBE_MAX: u64 = 1_600;

/// The layout of what a crawl keeps in the store (keys, and the records
/// the scripts read and write), recorded in the crawl's settings by the
/// worker that creates it. A worker joins only a crawl of its own format,
/// so workers that would read each other's records differently never
/// share one; a change to what the scripts store takes the next number.
pub const STORE_FORMAT: u32 = 2;

/// Settings of a fleet frontier beyond the embedded frontier's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetConfig {
    /// How long a release is its worker's unless renewed (40 s): the
    /// worker's heartbeat renews every flight it holds three times in each
    /// send window (the lease less `longest_request`), so a live worker
    /// keeps its hosts and a killed one's pass to the others within a
    /// lease of its death. When it lapses, the URL goes back to the queue
    /// for any worker, and a late completion is ignored.
    pub lease: Duration,
    /// The longest a request lasts once sent (the HTTP client's whole
    /// timeout, 30 s): a request leaves only while at least this much of
    /// its lease is left, so none is still running when the lease lapses.
    /// Keep it below the lease: the send window is at least a quarter of
    /// the lease whatever this says.
    pub longest_request: Duration,
    /// Whose clock times are read on ([`TimeSource::Server`] for a fleet).
    pub time: TimeSource,
    /// URLs a page's release takes from its host's queue at once (1: one
    /// per release, answering exactly as the embedded frontier does). Above
    /// 1 the release is a claim on the host: the worker releases the rest
    /// itself, one at a time, paced by its own controller, and settles them
    /// all in one step when they are done, when a request is retried or
    /// given back, when the host is skipped, or when the host's next turn
    /// is more than [`HOLD_AHEAD`] away. Meanwhile the host is this
    /// worker's alone, under the one lease; if it lapses, every URL of the
    /// claim goes back to the queue. Fewer steps per page for the server;
    /// the price is that a URL queued behind a claim waits for it, whatever
    /// its priority. While it has room, a claim also takes the new URLs of
    /// its host that this worker finds (see the crate documentation).
    pub claim: usize,
    /// How many URLs the worker remembers the store answered for (about 20
    /// bytes each; 0: none), so a link it meets again is answered "duplicate"
    /// without a call: most of a page's links are. Kept only while the
    /// connection can show the store did not lose them (see the crate's
    /// `seen` module); a Cluster connection cannot, and gets none. Where
    /// the store would answer that the host was skipped, a remembered URL
    /// is "duplicate" here: it was queued once already (past a bound, the
    /// store answers "duplicate" too).
    pub seen_cache: usize,
    /// How long stats stand when nothing here changed, and how long
    /// [`FleetFrontier::recent_stats`] (the progress line's, asked twice a
    /// second) lets them stand anyway (2 s): an exact read is three reads
    /// of every partition, and a busy worker changes something every turn.
    pub stats_every: Duration,
    /// Hosts this worker holds at once (flights of distinct hosts): at the
    /// bound it takes no new host from the store until one of its own is
    /// done, so a worker that starts first leaves hosts for the others
    /// (0: no bound).
    pub max_hosts: usize,
}

impl Default for FleetConfig {
    fn default() -> Self {
        FleetConfig {
            lease: Duration::from_secs(40),
            longest_request: Duration::from_secs(30),
            time: TimeSource::Server,
            claim: 1,
            seen_cache: 1 << 20,
            stats_every: Duration::from_secs(2),
            max_hosts: 0,
        }
    }
}

struct Flight {
    partition: u32,
    /// Its id in the store (the partition's flight id, below [`ID_BITS`]).
    id: u64,
    /// The store gave the host out again while this flight was out: its
    /// lease lapsed, and what it reports is ignored here.
    orphan: bool,
    key: String,
    /// The fencing token of this release: a completion carrying an older
    /// one (the lease lapsed and the URL was released again) is ignored.
    token: u64,
    /// What the release's `start` changed, for `cancel`.
    started: Started,
    /// When it was released or its lease last renewed, on the caller's
    /// clock and on this process's own (which keeps running while the
    /// process is stopped): the instant the call left, so the send window
    /// never counts from after the server started the lease.
    at: (UnixMillis, std::time::Instant),
    /// Whether a request of this flight is out (released, not yet ended).
    out: bool,
    /// A claim's URLs not yet released, in queue order: score and member
    /// (`tag\torigin\turl`), as the queue held them.
    rest: std::collections::VecDeque<(String, String)>,
    /// The claim's URL out now, or last out, when it is not the first (the
    /// script knows the first): what goes back if it is retried or given
    /// back.
    current: Option<(String, String)>,
    /// A claim (a page's release with [`FleetConfig::claim`] above 1): the
    /// host's new URLs this worker offers join it while it has room.
    held: bool,
    /// URLs of the claim done and not yet told to the store (members): they
    /// go together, with the claim's settle, at a flush, or past
    /// [`ACKS_MAX`]. Until then a lapse gives them back too.
    acks: Vec<String>,
    /// A robots.txt release: its origin (as the store has it), and until
    /// when robots.txt is known once it was (`robots_known`), which its
    /// settle then tells the store in the same step.
    robots: Option<(String, Option<u64>)>,
}

/// The frontier of one worker of a fleet.
pub struct FleetFrontier<C> {
    con: C,
    url: String,
    layout: Layout,
    config: FrontierConfig,
    fleet: FleetConfig,
    /// The controller: its settings, and the states of the hosts this
    /// worker has touched (reloaded from the store whenever it claims).
    pub politeness: Politeness,
    /// Maps URLs to politeness keys.
    pub keyer: Keyer,
    scripts: Scripts,
    flights: HashMap<u64, Flight>,
    /// Requests begun with `begin_request` and not yet ended, per key.
    begun: HashMap<String, u32>,
    /// Completions that came after their lease had lapsed (ignored).
    pub stale: u64,
    /// Probes made (of every partition, or of those the board says
    /// changed).
    pub probes: u64,
    /// Partitions those probes asked, in all.
    pub probed: u64,
    cursor: u32,
    /// Partitions a probe found something to do in, not yet asked.
    due: std::collections::VecDeque<u32>,
    /// What the probe said of the others (the answer if `due` runs dry).
    idle: Next,
    /// What each partition last answered when it had nothing to release
    /// (`Empty` while it is in `due`): `idle` is their merge.
    answers: Vec<Next>,
    /// Whether `answers` changed since `idle` was merged.
    idle_stale: bool,
    /// When every partition is next probed (`None`: at the next call that
    /// has nothing else to ask). Until then, the partitions this worker
    /// changed (`touched`) and those whose known wait is over are asked
    /// again; other workers' changes are seen at the next probe.
    probe_at: Option<UnixMillis>,
    /// The time from one probe to the next, [`PROBE_EVERY`] to
    /// [`PROBE_MAX`].
    probe_every: u64,
    /// The last stats, and until when they may be given again.
    /// The last stats read, whether every count was read then (`stats`;
    /// the progress line's read only the queue's and skipped counts), and
    /// when (they stand [`FleetConfig::stats_every`] from then).
    stats_cache: Option<(Stats, bool, UnixMillis)>,
    /// This worker changed something since the cached stats were read.
    stats_stale: bool,
    /// Each partition's queued, skipped and reissued counts as last read
    /// (empty until a read of every partition).
    part_counts: Vec<[u64; 3]>,
    /// The first partition the progress line's next read asks.
    stats_cursor: u32,
    /// When skipped URLs were last taken from every partition.
    skipped_at: Option<UnixMillis>,
    /// Each partition's count of skipped URLs at the last read of the
    /// stats: one that grew there has URLs to take.
    skipped_counts: Vec<u64>,
    /// Partitions with skipped URLs to take (their count grew, or a take
    /// left some).
    skipped_owed: std::collections::BTreeSet<u32>,
    /// The next take reads every partition's list (after `sync`).
    skipped_full: bool,
    /// This worker's name in the fleet's list (host name and process id).
    worker: String,
    /// Completions not yet sent (each one's partition, and its arguments
    /// to `SETTLE`): they go in front of the next call that reaches the
    /// server, in the same round trip, as one script call (on a Cluster,
    /// one per partition).
    pending: Vec<(u32, Vec<String>)>,
    /// robots.txt states saved through a [`RobotsStore::behind`] this
    /// frontier: they go in front of the completions.
    outbox: Outbox,
    /// Partitions this worker changed since it last probed them all: while
    /// the probe's answer stands, only these are asked again.
    touched: std::collections::BTreeSet<u32>,
    /// The server's clock minus this process's, in ms, learnt from the
    /// replies that carried the server's time ([`TimeSource::Server`]):
    /// the worker's own arithmetic (a completion's backoff, Retry-After, a
    /// claim's pacing) is done on the server's clock, as the scripts' is.
    offset: ClockOffset,
    /// The latest `now` a caller passed: the time of what `sync` sends.
    last_now: UnixMillis,
    /// Lease ids handed out when a release's own id was still taken here
    /// (by a flight of this worker's whose lease lapsed).
    spare_ids: u64,
    /// The URLs the store answered for, while it is known to have them.
    seen: SeenCache,
    /// Partitions this worker changed that the board does not say so yet:
    /// the next call posts them (a standalone server only).
    posts: std::collections::BTreeSet<u32>,
    /// The board's sequence number this worker has read up to (`None`:
    /// the next probe asks every partition).
    board_seen: Option<u64>,
    /// When the next probe asks every partition.
    board_full_at: Option<UnixMillis>,
    /// The connection's incarnation at the last full probe.
    board_incarnation: Option<u64>,
    /// Per partition, when its first lease lapses as the last probe of it
    /// read (0: none).
    lapse_at: Vec<u64>,
    /// When the last heartbeat left, on the caller's clock.
    beat_at: Option<UnixMillis>,
    /// When the last round trip left, on this process's clock: a release
    /// it brought counts its send window from then.
    asked_at: std::time::Instant,
    /// Sitemap lastmods to tell the store, in front of the next call.
    lastmods_out: Vec<(u32, redis::Cmd)>,
}

impl<C: FleetConnection> FleetFrontier<C> {
    /// The key layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The hosts this worker holds now: its flights' distinct keys.
    pub fn hosts_held(&self) -> usize {
        self.flights
            .values()
            .filter(|f| !f.orphan)
            .map(|f| f.key.as_str())
            .collect::<std::collections::HashSet<_>>()
            .len()
    }
}

impl<C: FleetConnection> Frontier for FleetFrontier<C> {
    async fn enqueue_tagged(
        &mut self,
        url: &str,
        priority: u8,
        tag: u32,
        now: UnixMillis,
    ) -> Result<Admission, FrontierError> {
        let offer = Offer::new(url, priority, tag);
        let mut v = self.enqueue_many(&[offer], now).await?;
        v.pop().ok_or_else(|| self.corrupt("enqueue: no answer"))
    }

    async fn enqueue_many(
        &mut self,
        offers: &[Offer<'_>],
        now: UnixMillis,
    ) -> Result<Vec<Admission>, FrontierError> {
        self.replay(now).await?;
        self.offer(offers, true, now).await
    }

    async fn next(&mut self, now: UnixMillis) -> Result<Next, FrontierError> {
        let mut batch = self.next_batch(1, now).await?;
        Ok(match batch.released.pop() {
            Some(r) => Next::Fetch(r),
            None => batch.then.unwrap_or(Next::Busy),
        })
    }

    async fn next_batch(&mut self, max: usize, now: UnixMillis) -> Result<Batch, FrontierError> {
        let max = max.max(1);
        self.last_now = self.last_now.max(now);
        self.replay(now).await?;
        // This worker's claims first: no round trip.
        let (mut released, claims_wait) = self.release_claimed(max, now).await?;
        if released.len() >= max {
            // No call to the store otherwise: what is held back goes now.
            self.keep_alive(now).await?;
            return Ok(Batch {
                released,
                then: None,
            });
        }
        if self.fleet.max_hosts > 0 && self.hosts_held() >= self.fleet.max_hosts {
            // At its bound: its own hosts first, the store's for the others.
            let then = claims_wait.map_or(Next::Busy, |until| Next::Wait { until });
            self.keep_alive(now).await?;
            return Ok(Batch {
                released,
                then: Some(then),
            });
        }
        // Each release from the store may be a new host: no more than the
        // bound leaves room for.
        let room = match self.fleet.max_hosts {
            0 => usize::MAX,
            bound => bound - self.hosts_held(),
        };
        let mut batch = self
            .next_from_store((max - released.len()).min(room), now)
            .await?;
        released.append(&mut batch.released);
        let then = match (batch.then, claims_wait) {
            (Some(t), Some(until)) => Some(merge(t, Next::Wait { until })),
            (t, _) => t,
        };
        Ok(Batch { released, then })
    }

    async fn complete(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        self.settle(released, Settle::Done(outcome), now).await
    }

    async fn requeue(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        tag: u32,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        released.require_page()?;
        self.settle(released, Settle::Retry(outcome, tag), now)
            .await
    }

    async fn discard(&mut self, released: &Released, now: UnixMillis) -> Result<(), FrontierError> {
        self.settle(released, Settle::Drop, now).await
    }

    async fn confirm(
        &mut self,
        released: &Released,
        now: UnixMillis,
    ) -> Result<bool, FrontierError> {
        self.renew(released, now).await
    }

    fn send_by(&self, released: &Released) -> Option<std::time::Instant> {
        // The send window from when the call that released or last
        // renewed it left: the request then ends before the lease lapses.
        let fl = self.flights.get(&released.lease)?;
        Some(fl.at.1 + self.send_window())
    }

    async fn cancel(&mut self, released: &Released, now: UnixMillis) -> Result<(), FrontierError> {
        self.settle(released, Settle::Cancel, now).await
    }

    async fn robots_unavailable(
        &mut self,
        origin: &str,
        until: UnixMillis,
        reason: &str,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        self.gate_unavailable(origin, until, reason, now).await
    }

    async fn robots_known(
        &mut self,
        origin: &str,
        pacing: RobotsPacing,
        valid_until: UnixMillis,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        self.gate_known(origin, pacing, valid_until, now).await
    }

    async fn begin_request(&mut self, url: &str, now: UnixMillis) -> Result<Begin, FrontierError> {
        self.begin_outside(url, now).await
    }

    async fn end_request(
        &mut self,
        url: &str,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        self.end_outside(url, outcome, now).await
    }

    async fn busiest(&mut self, n: usize) -> Result<Vec<KeyLoad>, FrontierError> {
        self.read_busiest(n).await
    }

    async fn why_not_now(
        &mut self,
        url: &str,
        now: UnixMillis,
    ) -> Result<Option<Hold>, FrontierError> {
        self.read_why_not_now(url, now).await
    }

    async fn sync(&mut self) -> Result<(), FrontierError> {
        // Claims with nothing out go back, and completions held back go
        // now; durability is then the server's (appendonly, appendfsync):
        // see the crate documentation.
        self.give_back_claims(self.last_now).await?;
        self.replay(self.last_now).await?;
        // The next take of skipped URLs reads every partition.
        self.skipped_full = true;
        self.flush().await
    }

    async fn stats(&mut self) -> Result<Stats, FrontierError> {
        self.read_stats(true).await
    }
    async fn take_skipped(&mut self) -> Result<Vec<Skipped>, FrontierError> {
        self.take_skipped_urls().await
    }
}
