//! [`FleetFrontier`]: the [`Frontier`] on a Redis-protocol server.
//!
//! Each call is one script on one partition (a few calls that span
//! partitions, `stats` and `busiest`, pipeline one read per partition). The
//! politeness arithmetic is `mannerly-polite`'s controller, run by the
//! worker on the host's state as the store last recorded it; the scripts
//! keep what a claim must decide atomically (`check`, `start`, the queues,
//! the robots.txt gate, leases).

use std::collections::HashMap;
use std::time::Duration;

use mannerly_polite::controller::{
    HostState, Outcome, Politeness, RobotsPacing, Started, UnixMillis, Wait,
};
use mannerly_polite::frontier::{
    admit, origin_of, Admission, Batch, Begin, Frontier, FrontierConfig, FrontierError, KeyLoad,
    Kind, Next, Offer, Released, Skipped, Stats,
};
use mannerly_polite::key::Keyer;
use redis::Value;

#[cfg(doc)]
use crate::client::RobotsStore;
use crate::client::{across, run_on, FleetConnection, Outbox};
use crate::layout::Layout;
use crate::lua::Scripts;
use crate::seen::{Held, SeenCache};

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

/// How often a probe asks every partition, not only those the board says
/// changed: a change whose post was lost (its worker's connection failed
/// between the two) is seen within this.
const PROBE_FULL_EVERY: u64 = 10_000;

/// The progress line's stats read a fifth of the partitions each time (in
/// turn), and sum them with what the others said at their last read: each
/// count is at most five reads (10 s by default) old, and a worker's reads
/// for it are a fifth of one per partition every 2 s (with 1,024
/// partitions, 512 reads a second per worker were most of a slow or
/// polite fleet's load).
const STATS_SLICES: u32 = 5;

/// How long skipped URLs may wait when the stats are not read (they say
/// which partitions have some): then every partition's list is read.
const SKIPPED_FULL_EVERY: u64 = 10_000;

/// Skipped URLs taken from a partition at a time (the rest wait for the
/// next collection).
const SKIPPED_TAKE: usize = 1_000;

/// Partitions one `NEXT` call asks on a standalone server (a release is
/// some twenty commands), for the same reason.
const NEXT_CHUNK: usize = 16;

/// Completions held back to go with the next call: past this many they go
/// at once.
const PENDING_MAX: usize = 64;

/// A claim's finished URLs held back to be told to the store together: past
/// this many they go at once. Until they go, a lapse of the claim's lease
/// (its worker killed) gives them back to be fetched again, as it gives
/// back the claim's first URLs; a flush (every 2 s while the progress line
/// runs, and at `sync`) sends them. One entry per claimed page had been the
/// most frequent step the server ran.
const ACKS_MAX: usize = 16;

/// The layout of what a crawl keeps in the store (keys, and the records
/// the scripts read and write), recorded in the crawl's settings by the
/// worker that creates it. A worker joins only a crawl of its own format,
/// so workers that would read each other's records differently never
/// share one; a change to what the scripts store takes the next number.
pub const STORE_FORMAT: u32 = 1;

/// URLs per enqueue script call (a call blocks the server while it runs).
const ENQUEUE_CHUNK: usize = 256;

/// A flight id is its partition in the high bits and the partition's
/// sequence number below, so ids are unique across the crawl; with one
/// partition it is the sequence number, as in the embedded frontier.
const ID_BITS: u32 = 40;

/// Settings of a fleet frontier beyond the embedded frontier's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetConfig {
    /// How long a release is its worker's: longer than the fetch timeout
    /// plus a margin (2 min). When it lapses, the URL goes back to the
    /// queue for any worker, and a late completion is ignored.
    pub lease: Duration,
    /// Whose clock times are read on ([`TimeSource::Server`] for a fleet).
    pub time: TimeSource,
    /// URLs a page's release takes from its host's queue at once (1: one
    /// per release, answering exactly as the embedded frontier does). Above
    /// 1 the release is a claim on the host: the worker releases the rest
    /// itself, one at a time, paced by its own controller, and settles them
    /// all in one step when they are done, when a request is retried or
    /// given back, when the host is skipped, or when the host's next turn
    /// is more than an eighth of the lease away. Meanwhile the host is this
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
}

impl Default for FleetConfig {
    fn default() -> Self {
        FleetConfig {
            lease: Duration::from_secs(120),
            time: TimeSource::Server,
            claim: 1,
            seen_cache: 1 << 20,
            stats_every: Duration::from_secs(2),
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
    /// When it was released, on the caller's clock and on this process's
    /// own (which keeps running while the process is stopped).
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

/// One entry of a `SETTLE` call (see the script): the flight, how it
/// ends (or `ack`), the retry's tag, the host's state, `chk` and skip
/// reason to write, the fencing token, and the claim's URLs (score,
/// member) that go back to the queue (for `ack`, those it is done with).
struct SettleOp<'a> {
    id: u64,
    how: &'a str,
    /// A retry's tag; for a robots.txt flight, until when robots.txt is
    /// known (0: it is not).
    tag: u64,
    written: (String, String, String),
    token: u64,
    back: Vec<(String, String)>,
}

/// The `SETTLE` entry that tells the store a claim's URLs `members` are
/// done with (of flight `id`, fencing `token`).
fn ack_op(id: u64, token: u64, members: Vec<String>) -> SettleOp<'static> {
    SettleOp {
        id,
        how: "ack",
        tag: 0,
        written: Default::default(),
        token,
        back: members.into_iter().map(|m| (String::new(), m)).collect(),
    }
}

/// A claim of this worker's that a host's new URL may join.
#[derive(Clone, Copy)]
struct Join {
    lease: u64,
    token: u64,
    /// URLs it may still take.
    left: usize,
}

/// What a partition's probe found.
enum Probed {
    /// `NEXT` has something to do there (a lease lapsed, a host ready or
    /// due).
    Due,
    /// Its first host waits until then.
    Wait(UnixMillis),
    /// No host is ready or waiting: it is empty or busy (its counts say).
    Idle,
}

/// A count as the server answers it (nil: 0); `None` for another shape.
fn int_or_nil(v: &Value) -> Option<u64> {
    match v {
        Value::Nil => Some(0),
        v => redis::from_redis_value::<i64>(v.clone())
            .ok()
            .map(|n| n.max(0) as u64),
    }
}

/// The score of a sorted set's first member as `ZRANGE key 0 0
/// WITHSCORES` answers it (`[member, score]` in RESP2, `[[member, score]]`
/// in RESP3): `Some(None)` for an empty set, `None` for another shape.
fn head_score(v: &Value) -> Option<Option<f64>> {
    let Value::Array(items) = v else {
        return None;
    };
    let score = match items.as_slice() {
        [] => return Some(None),
        [_, score] => score,
        [Value::Array(pair)] => pair.get(1)?,
        _ => return None,
    };
    match score {
        Value::Double(d) => Some(Some(*d)),
        other => redis::from_redis_value::<String>(other.clone())
            .ok()?
            .parse()
            .ok()
            .map(Some),
    }
}

/// The priority a queue score carries (see the scripts' key table).
fn priority_of(score: &str) -> u8 {
    let s: f64 = score.parse().unwrap_or(0.0);
    let p = 255.0 - (s / 1_099_511_627_776.0).floor();
    p.clamp(0.0, 255.0) as u8
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
}

/// Two partitions' answers as one: the earliest wait, else busy if either
/// is, else empty.
fn merge(a: Next, b: Next) -> Next {
    match (a, b) {
        (Next::Wait { until: x }, Next::Wait { until: y }) => Next::Wait { until: x.min(y) },
        (w @ Next::Wait { .. }, _) | (_, w @ Next::Wait { .. }) => w,
        (Next::Busy, _) | (_, Next::Busy) => Next::Busy,
        _ => Next::Empty,
    }
}

/// While a partition is busy (requests in flight, often another worker's,
/// or a dead one's whose lease has yet to lapse, may bring URLs back at
/// any moment), a wait is answered as at most this long, so a caller that
/// gives up on a long wait asks again instead.
const BUSY_WAIT_MAX: u64 = 1_000;

/// `hostname:pid`, how a worker is listed in `--status`.
fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".into());
    format!("{host}:{}", std::process::id())
}

fn store_err(url: &str, e: redis::RedisError) -> FrontierError {
    FrontierError::Store {
        store: url.to_owned(),
        source: Box::new(e),
    }
}

impl<C: FleetConnection> FleetFrontier<C> {
    /// Joins (or creates) the crawl `layout` names, over `con` (`url`
    /// names the server in errors).
    pub async fn open(
        mut con: C,
        url: &str,
        layout: Layout,
        politeness: Politeness,
        config: FrontierConfig,
        fleet: FleetConfig,
    ) -> Result<FleetFrontier<C>, FrontierError> {
        let meta = layout.meta_key();
        let wanted = serde_json::to_string(&config.key_mode)
            .unwrap_or_default()
            .trim_matches('"')
            .to_owned();
        let mut pipe = redis::pipe();
        pipe.cmd("HSETNX")
            .arg(&meta)
            .arg("partitions")
            .arg(layout.partitions())
            .ignore();
        pipe.cmd("HSETNX")
            .arg(&meta)
            .arg("key_mode")
            .arg(&wanted)
            .ignore();
        // A crawl created before formats were numbered is in the first.
        pipe.cmd("HSETNX")
            .arg(&meta)
            .arg("format")
            .arg(STORE_FORMAT)
            .ignore();
        pipe.cmd("HMGET")
            .arg(&meta)
            .arg("partitions")
            .arg("key_mode")
            .arg("format");
        let (stored, mode, format): (u32, String, String) = pipe
            .query_async::<Vec<(u32, String, String)>>(&mut con)
            .await
            .map_err(|e| store_err(url, e))?
            .into_iter()
            .next()
            .ok_or_else(|| FrontierError::Corrupt {
                store: url.to_owned(),
                what: "no answer to HMGET".into(),
            })?;
        if format != STORE_FORMAT.to_string() {
            return Err(FrontierError::Corrupt {
                store: url.to_owned(),
                what: format!(
                    "crawl {} keeps its frontier in store format {format:?}; this worker reads and \
                     writes format {STORE_FORMAT}: join it with a mannerly of that format",
                    layout.crawl(),
                ),
            });
        }
        if stored != layout.partitions() {
            return Err(FrontierError::Corrupt {
                store: url.to_owned(),
                what: format!(
                    "crawl {} was created with {stored} partitions, not {}: join it with that many",
                    layout.crawl(),
                    layout.partitions()
                ),
            });
        }
        if mode != wanted {
            return Err(FrontierError::KeyMode {
                store: url.to_owned(),
                stored: mode,
                wanted,
            });
        }
        let partitions = layout.partitions();
        let seen = SeenCache::new(fleet.seen_cache, con.incarnation());
        Ok(FleetFrontier {
            seen,
            con,
            url: url.to_owned(),
            keyer: Keyer::new(config.key_mode),
            layout,
            config,
            fleet,
            politeness,
            scripts: Scripts::new(),
            flights: HashMap::new(),
            begun: HashMap::new(),
            stale: 0,
            probes: 0,
            probed: 0,
            cursor: 0,
            due: std::collections::VecDeque::new(),
            idle: Next::Empty,
            answers: vec![Next::Empty; partitions as usize],
            idle_stale: false,
            probe_at: None,
            probe_every: PROBE_EVERY,
            stats_cache: None,
            stats_stale: false,
            skipped_at: None,
            skipped_counts: vec![0; partitions as usize],
            part_counts: Vec::new(),
            stats_cursor: 0,
            posts: Default::default(),
            board_seen: None,
            board_full_at: None,
            board_incarnation: None,
            lapse_at: vec![0; partitions as usize],
            skipped_owed: Default::default(),
            skipped_full: false,
            worker: worker_name(),
            offset: ClockOffset::default(),
            last_now: UnixMillis::EPOCH,
            spare_ids: 0,
            pending: Vec::new(),
            outbox: Outbox::default(),
            touched: std::collections::BTreeSet::new(),
        })
    }

    /// The crawl's counts for a progress line: read at most every 2 s, even
    /// when this worker changed something since (then [`Frontier::stats`]
    /// reads them afresh), and only the queued, skipped and reissued
    /// counts of a fifth of the partitions in turn (the others' as last
    /// read, at most five reads ago): requests in flight and hosts with
    /// URLs queued are as the last `stats` read them.
    pub async fn recent_stats(&mut self) -> Result<Stats, FrontierError> {
        self.read_stats(false).await
    }

    /// The crawl's counts: those read within 2 s unless `exact` and this
    /// worker changed something since; every count when `exact`, else the
    /// progress line's.
    async fn read_stats(&mut self, exact: bool) -> Result<Stats, FrontierError> {
        let now = UnixMillis::now();
        let held = self.claimed();
        if let Some((mut s, full, read)) = self.stats_cache {
            let stands = if exact {
                full && !self.stats_stale
            } else {
                true
            };
            let every = u64::try_from(self.fleet.stats_every.as_millis()).unwrap_or(u64::MAX);
            if now < read.add_millis(every) && stands {
                s.queued += held;
                return Ok(s);
            }
        }
        let before = self.stats_cache.map(|(s, _, _)| s).unwrap_or_default();
        self.stats_stale = false;
        self.flush().await?;
        // The crawler asks for stats twice a second: that is this worker's
        // heartbeat in the fleet's list.
        redis::cmd("HSET")
            .arg(self.layout.workers_key())
            .arg(&self.worker)
            .arg(UnixMillis::now().as_millis())
            .exec_async(&mut self.con)
            .await
            .map_err(|e| self.err(e))?;
        let n = self.layout.partitions();
        let parts: Vec<u32> = if exact || self.part_counts.len() != n as usize {
            (0..n).collect()
        } else {
            // A slice, in turn; the others' counts as last read.
            let slice = n.div_ceil(STATS_SLICES);
            let first = self.stats_cursor % n;
            self.stats_cursor = (first + slice) % n;
            (0..slice).map(|i| (first + i) % n).collect()
        };
        let layout = &self.layout;
        let replies = across(&mut self.con, &parts, |pipe, p| {
            pipe.cmd("HMGET")
                .arg(layout.key(p, "meta"))
                .arg("queued")
                .arg("skipped")
                .arg("reissued");
            if exact {
                pipe.cmd("HLEN").arg(layout.key(p, "fl"));
                pipe.cmd("ZCARD").arg(layout.key(p, "cnt"));
            }
        })
        .await
        .map_err(|e| store_err(&self.url, e))?;
        let mut s = Stats::default();
        if !exact {
            s.in_flight = before.in_flight;
            s.keys = before.keys;
        }
        if self.part_counts.len() != n as usize {
            self.part_counts = vec![[0; 3]; n as usize];
        }
        if replies.len() != parts.len() {
            return Err(self.corrupt(format!(
                "stats: {} answers for {} partitions",
                replies.len(),
                parts.len()
            )));
        }
        for (&p, reply) in parts.iter().zip(replies) {
            let p = p as usize;
            let mut reply = reply.into_iter();
            let meta: Vec<Option<i64>> = reply
                .next()
                .map(redis::from_redis_value)
                .transpose()
                .map_err(|e| self.corrupt(format!("stats: {e}")))?
                .unwrap_or_default();
            // The exact read's two counts; none in the progress line's.
            let counts: Vec<u64> = reply
                .map(redis::from_redis_value)
                .collect::<Result<_, _>>()
                .map_err(|e| self.corrupt(format!("stats: {e}")))?;
            let get = |i: usize| meta.get(i).copied().flatten().unwrap_or(0).max(0) as u64;
            if let Some(c) = self.part_counts.get_mut(p) {
                *c = [get(0), get(1), get(2)];
            }
            if let Some(seen) = self.skipped_counts.get_mut(p) {
                if get(1) > *seen {
                    *seen = get(1);
                    self.skipped_owed.insert(p as u32);
                }
            }
            if let [fl, cnt] = counts[..] {
                s.in_flight += fl;
                s.keys += cnt;
            }
        }
        for c in &self.part_counts {
            s.queued += c[0];
            s.skipped += c[1];
            s.reissued += c[2];
        }
        self.stats_cache = Some((s, exact, now));
        // What this worker's claims hold is queued, not yet released.
        s.queued += held;
        Ok(s)
    }

    /// Where a [`RobotsStore::behind`] this frontier keeps the states it
    /// saves until the frontier's next call takes them to the server.
    pub fn outbox(&self) -> Outbox {
        self.outbox.clone()
    }

    /// The key layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn err(&self, e: redis::RedisError) -> FrontierError {
        store_err(&self.url, e)
    }

    fn corrupt(&self, what: impl Into<String>) -> FrontierError {
        FrontierError::Corrupt {
            store: self.url.clone(),
            what: what.into(),
        }
    }

    fn now_arg(&self, now: UnixMillis) -> i64 {
        match self.fleet.time {
            TimeSource::Server => -1,
            TimeSource::Caller => i64::try_from(now.as_millis()).unwrap_or(i64::MAX),
        }
    }

    fn max_in(&self) -> u32 {
        self.politeness.config.max_in_flight
    }

    /// Replaces the cached state of `key` with what the store holds (none,
    /// or one that does not parse: the key starts afresh).
    fn adopt(&mut self, key: &str, json: &str) {
        match serde_json::from_str::<HostState>(json) {
            Ok(s) => self.politeness.restore(key, s),
            Err(_) => self.politeness.forget(key),
        }
    }

    /// What a partition's `wait`, `busy` or `empty` reply (its third field,
    /// if any: the time to wait for, or the flights) means; `None` for a
    /// reply that is none of those or lacks its time.
    fn idle_answer(&self, p: u32, kind: &str, third: Option<u64>) -> Option<Next> {
        match kind {
            "wait" => third.map(|t| Next::Wait {
                until: UnixMillis(t),
            }),
            "busy" => Some(Next::Busy),
            "empty" => Some(self.empty_or_busy(p, third.unwrap_or(0))),
            _ => None,
        }
    }

    /// Nothing is queued in partition `p`, which holds `flights` flights:
    /// empty only if they are all this worker's. Another's (or one whose
    /// release answer was lost, which its lease will give back) may still
    /// bring URLs, so then the answer is busy: ask again.
    fn empty_or_busy(&self, p: u32, flights: u64) -> Next {
        let own = self
            .flights
            .values()
            .filter(|f| f.partition == p && !f.orphan)
            .count() as u64;
        if flights > own {
            Next::Busy
        } else {
            Next::Empty
        }
    }

    /// `now` on the store's clock.
    fn store_now(&self, now: UnixMillis) -> UnixMillis {
        match self.fleet.time {
            TimeSource::Caller => now,
            TimeSource::Server => {
                let t = i64::try_from(now.as_millis()).unwrap_or(i64::MAX);
                UnixMillis(u64::try_from(t.saturating_add(self.offset.get())).unwrap_or(0))
            }
        }
    }

    /// Learns the server's clock from a reply stamped `at` to a call sent
    /// at `sent` on this process's clock (see [`ClockOffset`]).
    fn saw_server_time(&mut self, at: UnixMillis, sent: UnixMillis) {
        if self.fleet.time == TimeSource::Server {
            self.offset.saw(at, sent);
        }
    }

    /// Records partition `p`'s idle answer, and the merge of them all.
    fn answer(&mut self, p: u32, answer: Next) {
        if let Some(a) = self.answers.get_mut(p as usize) {
            if *a != answer {
                *a = answer;
                self.idle_stale = true;
            }
        }
    }

    /// The merge of every partition's idle answer.
    fn idle(&mut self) -> Next {
        if self.idle_stale {
            self.idle = self.answers.iter().cloned().fold(Next::Empty, merge);
            self.idle_stale = false;
        }
        self.idle.clone()
    }

    /// `idle` (the merge of every partition's answer) as answered at
    /// `now`: a wait cut to [`BUSY_WAIT_MAX`] while any partition is busy.
    fn capped(&self, idle: Next, now: UnixMillis) -> Next {
        let cap = now.add_millis(BUSY_WAIT_MAX);
        match idle {
            Next::Wait { until } if until > cap && self.answers.contains(&Next::Busy) => {
                Next::Wait { until: cap }
            }
            other => other,
        }
    }

    /// This worker changed partition `p`: the cached stats no longer
    /// stand, and `p` is asked again by the next release.
    fn changed(&mut self, p: u32) {
        self.changed_here(p);
        self.posts.insert(p);
    }

    /// As [`changed`](Self::changed), where the change needs no post on
    /// the board (it gives other workers nothing new to do, or was posted
    /// already).
    fn changed_here(&mut self, p: u32) {
        self.touched.insert(p);
        self.stats_stale = true;
    }

    /// A script call on partition `p` (its key `key`, then its tag), as a
    /// command to pipeline.
    fn script_cmd(&self, pick: fn(&Scripts) -> &redis::Script, p: u32, key: &str) -> redis::Cmd {
        let mut c = redis::cmd("EVALSHA");
        c.arg(pick(&self.scripts).get_hash())
            .arg(1)
            .arg(self.layout.key(p, key))
            .arg(self.layout.tag(p));
        c
    }

    /// Loads every script (after the server lost them: a restart).
    async fn load_scripts(&mut self) -> Result<(), FrontierError> {
        for script in self.scripts.all() {
            script
                .prepare_invoke()
                .load_async(&mut self.con)
                .await
                .map_err(|e| store_err(&self.url, e))?;
        }
        Ok(())
    }

    /// Runs `cmds` (each on its partition) behind the completions waiting
    /// to go, in one round trip on a standalone server (see [`run_on`]),
    /// and returns the replies to `cmds`. Scripts the server lost are
    /// loaded and the lot sent again: every step is safe to repeat (a
    /// completion sent twice is stale the second time).
    async fn exec(&mut self, cmds: Vec<(u32, redis::Cmd)>) -> Result<Vec<Value>, FrontierError> {
        // robots.txt states saved, then completions, then `cmds`: a
        // robots.txt flight settles after its state is saved.
        let mut all = self.outbox.take();
        let saves = all.len();
        let settles = self.settle_cmds();
        let n = settles.len();
        all.extend(settles);
        let asked = cmds.len();
        all.extend(cmds);
        // The board, after the changes it tells of (standalone only).
        let posted = !self.posts.is_empty() && !self.con.one_slot_per_pipeline();
        if posted {
            let mut c = redis::cmd("EVALSHA");
            c.arg(self.scripts.board.get_hash())
                .arg(2)
                .arg(self.layout.board_key())
                .arg(self.layout.board_seq_key())
                .arg(self.layout.board_key());
            for p in std::mem::take(&mut self.posts) {
                c.arg(p);
            }
            all.push((0, c));
        }
        let replies = match run_on(&mut self.con, &all).await {
            Ok(v) => v,
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                self.load_scripts().await?;
                run_on(&mut self.con, &all)
                    .await
                    .map_err(|e| store_err(&self.url, e))?
            }
            Err(e) => return Err(store_err(&self.url, e)),
        };
        self.seen.round_trip(self.con.incarnation());
        if replies.len() != all.len() {
            return Err(self.corrupt(format!(
                "{} replies to {} commands",
                replies.len(),
                all.len()
            )));
        }
        let mut replies = replies.into_iter().skip(saves);
        for v in replies.by_ref().take(n) {
            // A completion whose lease lapsed, the URL back in the queue:
            // whoever holds the host now owns its state.
            let answers: Vec<String> = redis::from_redis_value(v.clone())
                .map_err(|_| self.corrupt(format!("settle: {v:?}")))?;
            self.stale += answers.iter().filter(|a| *a == "stale").count() as u64;
        }
        Ok(replies.take(asked).collect())
    }

    /// The completions waiting to go, as `SETTLE` calls: one on a
    /// standalone server, one per partition (in order) on a Cluster.
    fn settle_cmds(&mut self) -> Vec<(u32, redis::Cmd)> {
        let pending = std::mem::take(&mut self.pending);
        let one_slot = self.con.one_slot_per_pipeline();
        let mut cmds: Vec<(u32, redis::Cmd)> = Vec::new();
        let mut call_of: HashMap<u32, usize> = HashMap::new();
        for (p, args) in pending {
            let at = if one_slot {
                call_of.get(&p).copied()
            } else {
                cmds.len().checked_sub(1)
            };
            let at = match at {
                Some(at) => at,
                None => {
                    cmds.push((p, self.script_cmd(|s| &s.settle, p, "fl")));
                    call_of.insert(p, cmds.len() - 1);
                    cmds.len() - 1
                }
            };
            if let Some((_, c)) = cmds.get_mut(at) {
                c.arg(&args);
            }
        }
        cmds
    }

    /// A script call on partition `p` with the arguments every step starts
    /// with: the partition's prefix, the time, and the in-flight limit.
    fn step(
        &self,
        pick: fn(&Scripts) -> &redis::Script,
        p: u32,
        key: &str,
        now: UnixMillis,
    ) -> redis::Cmd {
        let mut c = self.script_cmd(pick, p, key);
        c.arg(self.now_arg(now)).arg(self.max_in());
        c
    }

    /// Runs one command on partition `p` behind the completions waiting to
    /// go (see [`exec`](Self::exec)), and reads its reply as `T`.
    async fn call<T: redis::FromRedisValue>(
        &mut self,
        p: u32,
        cmd: redis::Cmd,
        what: &str,
    ) -> Result<T, FrontierError> {
        let v = self
            .exec(vec![(p, cmd)])
            .await?
            .pop()
            .ok_or_else(|| self.corrupt(format!("{what}: no answer")))?;
        redis::from_redis_value(v.clone()).map_err(|_| self.corrupt(format!("{what}: {v:?}")))
    }

    /// Sends the completions (and robots.txt states) waiting to go, if any.
    pub async fn flush(&mut self) -> Result<(), FrontierError> {
        self.pend_acks();
        if !self.pending.is_empty() || !self.outbox.is_empty() {
            self.exec(Vec::new()).await?;
        }
        Ok(())
    }

    /// Whether this worker has a request of its own in flight to `key`
    /// (then its copy of the state is the newest there is).
    fn holds(&self, key: &str) -> bool {
        self.begun.contains_key(key) || self.flights.values().any(|f| f.key == key && !f.orphan)
    }

    /// The store just gave `key` out to this worker. With one request per
    /// host at a time, that proves every earlier flight of this worker's
    /// on it lapsed (a stop, a lost reply): those with nothing out go,
    /// those out become orphans, and the host's state is the store's.
    fn lapsed_on(&mut self, key: &str) {
        if self.max_in() != 1 {
            return;
        }
        let mut gone = 0;
        self.flights.retain(|_, f| {
            if f.key != key || f.orphan {
                return true;
            }
            gone += 1;
            if f.out {
                // Its claim's URLs went back to the queue with the lapse.
                f.orphan = true;
                f.rest.clear();
            }
            f.out
        });
        self.stale += gone;
    }

    /// Loads `key`'s state from the store (with the requests other workers
    /// have in flight to it) unless this worker holds it.
    async fn load(&mut self, key: &str) -> Result<(), FrontierError> {
        if self.holds(key) {
            return Ok(());
        }
        let p = self.layout.partition_of(key);
        let read = |what: &str| {
            let mut c = redis::cmd("HGET");
            c.arg(self.layout.key(p, what)).arg(key);
            (p, c)
        };
        let cmds = vec![read("state"), read("inf")];
        let v = self.exec(cmds).await?;
        let (json, inf): (Option<String>, Option<u32>) =
            redis::from_redis_value(Value::Array(v.clone()))
                .map_err(|_| self.corrupt(format!("load: {v:?}")))?;
        self.adopt(key, json.as_deref().unwrap_or(""));
        if let Some(n) = inf.filter(|n| *n > 0) {
            self.politeness.host(key).in_flight = n;
        }
        Ok(())
    }

    /// The state, the `check` summary and the skip reason to write for `key`.
    fn written(&self, key: &str) -> (String, String, String) {
        match self.politeness.get(key) {
            Some(h) => (
                serde_json::to_string(h).unwrap_or_default(),
                format!(
                    "{} {} {} {} {} {}",
                    u8::from(h.skip.is_some()),
                    h.paused_until.map_or(0, |t| t.as_millis()),
                    h.retry_after_until.map_or(0, |t| t.as_millis()),
                    h.next_allowed.as_millis(),
                    h.delay,
                    h.window
                ),
                h.skip
                    .clone()
                    .or_else(|| h.pause_reason.clone())
                    .unwrap_or_default(),
            ),
            None => (
                String::new(),
                format!("0 0 0 0 {} 0", self.politeness.config.min_delay),
                String::new(),
            ),
        }
    }

    fn origin_and_key(&self, origin: &str) -> (String, Option<String>) {
        let origin = match url::Url::parse(origin) {
            Ok(u) => origin_of(&u),
            Err(_) => origin.to_owned(),
        };
        let key = self.keyer.key(&origin).ok();
        (origin, key)
    }

    /// Runs `NEXT` on each partition of `asks`, asking it for that many
    /// releases, in one round trip; for each, what it released and, unless
    /// it released as many as asked (it may hold more), its idle answer.
    async fn next_on(
        &mut self,
        asks: &[(u32, usize)],
        now: UnixMillis,
    ) -> Result<Vec<(Vec<Released>, Option<Next>)>, FrontierError> {
        let lease = u64::try_from(self.fleet.lease.as_millis()).unwrap_or(u64::MAX);
        let cmds = asks
            .chunks(self.per_call(NEXT_CHUNK))
            .map(|chunk| {
                let p = chunk[0].0;
                let mut c = self.step(|s| &s.next, p, "time", now);
                c.arg(lease)
                    .arg(self.politeness.config.min_delay)
                    .arg(u8::from(self.config.robots_gate))
                    .arg(self.fleet.claim.max(1));
                for &(q, want) in chunk {
                    c.arg(self.layout.tag(q)).arg(want);
                }
                (p, c)
            })
            .collect();
        let sent = UnixMillis::now();
        let replies = self.exec(cmds).await?;
        let answers = self.flatten(replies, asks.len(), "next")?;
        let mut out = Vec::with_capacity(asks.len());
        for (&(p, _), v) in asks.iter().zip(answers) {
            out.push(self.released_from(p, v, now, sent)?);
        }
        Ok(out)
    }

    /// Reads one partition's `NEXT` reply (see the script).
    fn released_from(
        &mut self,
        p: u32,
        v: Value,
        now: UnixMillis,
        sent: UnixMillis,
    ) -> Result<(Vec<Released>, Option<Next>), FrontierError> {
        // Not `self.corrupt`: `self` changes below, while `bad` lives.
        let store = self.url.clone();
        let bad = |v: &Value| FrontierError::Corrupt {
            store: store.clone(),
            what: format!("next: {v:?}"),
        };
        let Value::Array(parts) = &v else {
            return Err(bad(&v));
        };
        let text =
            |i: usize| -> Option<String> { redis::from_redis_value(parts.get(i)?.clone()).ok() };
        let int = |i: usize| -> Option<u64> { text(i)?.parse().ok() };
        let (Some(kind), Some(at)) = (text(0), int(1).map(UnixMillis)) else {
            return Err(bad(&v));
        };
        let items: Vec<Vec<Value>> = match parts.get(3) {
            Some(list) => redis::from_redis_value(list.clone()).map_err(|_| bad(&v))?,
            None => return Err(bad(&v)),
        };
        let third = int(2);
        if !items.is_empty() {
            self.saw_server_time(at, sent);
        }
        let mut released = Vec::with_capacity(items.len());
        for item in items {
            let text =
                |i: usize| -> Option<String> { redis::from_redis_value(item.get(i)?.clone()).ok() };
            let int = |i: usize| -> Option<u64> { text(i)?.parse().ok() };
            let (
                Some(seq),
                Some(kind),
                Some(key),
                Some(prio),
                Some(url),
                Some(tag),
                Some(state),
                Some(token),
            ) = (
                int(0),
                text(1),
                text(2),
                int(3),
                text(4),
                int(5),
                text(6),
                int(7),
            )
            else {
                return Err(bad(&v));
            };
            // A claim's other URLs: member, score, member, score...
            let extra: Vec<String> = match item.get(8) {
                Some(list) => redis::from_redis_value(list.clone()).map_err(|_| bad(&v))?,
                None => Vec::new(),
            };
            if !extra.len().is_multiple_of(2) {
                return Err(bad(&v));
            }
            let rest = extra
                .chunks_exact(2)
                .map(|pair| (pair[1].clone(), pair[0].clone()))
                .collect();
            let mut lease = (u64::from(p) << ID_BITS) | seq;
            if self.flights.contains_key(&lease) {
                // An orphan of this worker's has the id (the same URL,
                // given out again after its lease lapsed).
                self.spare_ids += 1;
                lease = (1 << 63) | self.spare_ids;
            }
            // A release only takes work: not for the board.
            self.changed_here(p);
            self.lapsed_on(&key);
            // The store's state is the truth unless this worker has a
            // request of its own in flight to the host.
            if !self.holds(&key) {
                self.adopt(&key, &state);
            }
            let started = self.politeness.start(&key, at);
            self.flights.insert(
                lease,
                Flight {
                    partition: p,
                    id: seq,
                    orphan: false,
                    key: key.clone(),
                    token,
                    started,
                    at: (now, std::time::Instant::now()),
                    out: true,
                    rest,
                    current: None,
                    held: self.fleet.claim > 1,
                    acks: Vec::new(),
                    robots: (kind == "R").then(|| {
                        let origin = url.strip_suffix("/robots.txt").unwrap_or(&url);
                        (origin.to_owned(), None)
                    }),
                },
            );
            released.push(Released {
                url,
                key,
                priority: u8::try_from(prio).unwrap_or(0),
                kind: if kind == "R" {
                    Kind::Robots
                } else {
                    Kind::Page
                },
                tag: u32::try_from(tag).unwrap_or(0),
                lease,
            });
        }
        // After the releases are this worker's flights: an "empty" counts
        // the flights in the partition, these included, and only others'
        // make it busy.
        let idle = match kind.as_str() {
            "more" => None,
            k => Some(self.idle_answer(p, k, third).ok_or_else(|| bad(&v))?),
        };
        Ok((released, idle))
    }

    /// Partitions one call of a script that takes many may hold: `chunk`
    /// on a standalone server, one on a Cluster (a call touches one slot).
    fn per_call(&self, chunk: usize) -> usize {
        if self.con.one_slot_per_pipeline() {
            1
        } else {
            chunk
        }
    }

    /// The replies of calls that each answer a list (one item per
    /// partition asked, in order), as one list of `n` items.
    fn flatten(
        &self,
        replies: Vec<Value>,
        n: usize,
        what: &str,
    ) -> Result<Vec<Value>, FrontierError> {
        let mut items = Vec::with_capacity(n);
        for v in replies {
            match v {
                Value::Array(each) => items.extend(each),
                v => return Err(self.corrupt(format!("{what}: {v:?}"))),
            }
        }
        if items.len() != n {
            return Err(self.corrupt(format!(
                "{what}: {} answers for {n} partitions",
                items.len()
            )));
        }
        Ok(items)
    }

    /// The partitions to probe instead of all: those any worker changed
    /// since this one last read the board, and those where a lease lapses
    /// by `at` (the store's clock). `None` when every partition is to be
    /// probed: on a Cluster (no board), at first, every
    /// [`PROBE_FULL_EVERY`], and after the connection failed (the server
    /// may have lost the board).
    async fn board_changes(
        &mut self,
        now: UnixMillis,
        at: u64,
    ) -> Result<Option<Vec<u32>>, FrontierError> {
        if self.con.one_slot_per_pipeline() {
            return Ok(None);
        }
        let incarnation = self.con.incarnation();
        let full = self.board_seen.is_none()
            || self.board_full_at.is_none_or(|t| now >= t)
            || incarnation != self.board_incarnation;
        if full {
            // What the board holds now: changes after it are read next.
            let seq: Option<u64> = redis::cmd("GET")
                .arg(self.layout.board_seq_key())
                .query_async(&mut self.con)
                .await
                .map_err(|e| self.err(e))?;
            self.board_seen = Some(seq.unwrap_or(0));
            self.board_full_at = Some(now.add_millis(PROBE_FULL_EVERY));
            self.board_incarnation = incarnation;
            return Ok(None);
        }
        let seen = self.board_seen.unwrap_or(0);
        let changed: Vec<(String, f64)> = redis::cmd("ZRANGEBYSCORE")
            .arg(self.layout.board_key())
            .arg(format!("({seen}"))
            .arg("+inf")
            .arg("WITHSCORES")
            .query_async(&mut self.con)
            .await
            .map_err(|e| self.err(e))?;
        let mut parts = std::collections::BTreeSet::new();
        for (p, seq) in changed {
            let p: u32 = p
                .parse()
                .ok()
                .filter(|p| *p < self.layout.partitions())
                .ok_or_else(|| self.corrupt(format!("board: partition {p:?}")))?;
            parts.insert(p);
            self.board_seen = self.board_seen.max(Some(seq as u64));
        }
        for (p, &t) in self.lapse_at.iter().enumerate() {
            if t != 0 && t <= at {
                parts.insert(p as u32);
            }
        }
        Ok(Some(parts.into_iter().collect()))
    }

    /// Asks partitions whether they have anything to release: every one
    /// (in turn from the cursor), or on a standalone server between such
    /// full probes only those the board says changed and those where a
    /// lease lapses; fills `due` and the others' answers. Plain reads,
    /// pipelined (one pipeline on a standalone server, one per partition on
    /// a Cluster): three per partition, and two more where no host is ready
    /// or waiting, which cost the server a third of what a script doing the
    /// same did.
    async fn probe(&mut self, now: UnixMillis) -> Result<(), FrontierError> {
        self.probes += 1;
        self.touched.clear();
        let n = self.layout.partitions();
        let at = self.store_now(now).as_millis();
        let order: Vec<u32> = match self.board_changes(now, at).await? {
            Some(changed) => changed,
            None => {
                for a in &mut self.answers {
                    *a = Next::Empty;
                }
                let order = (0..n).map(|i| (self.cursor + i) % n).collect();
                self.cursor = (self.cursor + 1) % n;
                order
            }
        };
        if order.is_empty() {
            return Ok(());
        }
        self.probed += order.len() as u64;
        let layout = &self.layout;
        let replies = across(&mut self.con, &order, |pipe, p| {
            let head = |pipe: &mut redis::Pipeline, what: &str| {
                pipe.cmd("ZRANGE")
                    .arg(layout.key(p, what))
                    .arg(0)
                    .arg(0)
                    .arg("WITHSCORES");
            };
            head(pipe, "lease");
            pipe.cmd("ZCARD").arg(layout.key(p, "ready"));
            head(pipe, "time");
        })
        .await
        .map_err(|e| store_err(&self.url, e))?;
        if replies.len() != order.len() {
            return Err(self.corrupt(format!(
                "probe: {} answers for {} partitions",
                replies.len(),
                order.len()
            )));
        }
        // Partitions with no host ready or waiting: whether they are empty
        // or busy is read in a second round trip, for them alone.
        let mut idle = Vec::new();
        for (&p, reply) in order.iter().zip(replies) {
            let answer = self
                .probed(p, &reply, at)
                .ok_or_else(|| self.corrupt(format!("probe: {reply:?}")))?;
            match answer {
                Probed::Due => self.due.push_back(p),
                Probed::Wait(until) => self.answer(p, Next::Wait { until }),
                Probed::Idle => idle.push(p),
            }
        }
        if !idle.is_empty() {
            let layout = &self.layout;
            let replies = across(&mut self.con, &idle, |pipe, p| {
                pipe.cmd("HGET").arg(layout.key(p, "meta")).arg("queued");
                pipe.cmd("HLEN").arg(layout.key(p, "fl"));
            })
            .await
            .map_err(|e| store_err(&self.url, e))?;
            for (&p, reply) in idle.iter().zip(replies) {
                let counts = match reply.as_slice() {
                    [queued, flights] => int_or_nil(queued).zip(int_or_nil(flights)),
                    _ => None,
                };
                let Some((queued, flights)) = counts else {
                    return Err(self.corrupt(format!("probe: {reply:?}")));
                };
                let answer = if queued == 0 {
                    self.empty_or_busy(p, flights)
                } else {
                    Next::Busy
                };
                self.answer(p, answer);
            }
        }
        self.idle_stale = true;
        Ok(())
    }

    /// What a partition's probe reads (`lease` head, `ready` size, `time`
    /// head) say at `at` (the store's clock); `None` for a reply of the
    /// wrong shape.
    fn probed(&mut self, p: u32, reply: &[Value], at: u64) -> Option<Probed> {
        let [lease, ready, time] = reply else {
            return None;
        };
        let due = |v: &Value| -> Option<Option<u64>> {
            let score = head_score(v)?;
            Some(score.map(|s| s.max(0.0) as u64))
        };
        let lapse = due(lease)?;
        // When its first lease lapses: a probe of changed partitions asks it
        // again then.
        if let Some(slot) = self.lapse_at.get_mut(p as usize) {
            *slot = lapse.unwrap_or(0);
        }
        if lapse.is_some_and(|t| t <= at) || int_or_nil(ready)? > 0 {
            return Some(Probed::Due);
        }
        Some(match due(time)? {
            Some(t) if t <= at => Probed::Due,
            Some(t) => Probed::Wait(UnixMillis(t)),
            None => Probed::Idle,
        })
    }

    async fn settle(
        &mut self,
        released: &Released,
        how: &str,
        outcome: Option<&Outcome>,
        tag: u32,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let at = self.store_now(now);
        let Some(fl) = self
            .flights
            .get_mut(&released.lease)
            .filter(|f| f.out && f.key == released.key)
        else {
            return Err(FrontierError::UnknownLease {
                lease: released.lease,
                url: released.url.clone(),
            });
        };
        fl.out = false;
        if fl.orphan {
            // Its lease lapsed and the host is another release's now.
            self.flights.remove(&released.lease);
            return Ok(());
        }
        match outcome {
            Some(o) => self.politeness.finish(&fl.key, at, o),
            None => self.politeness.unstart(&fl.key, &fl.started),
        }
        // A claim goes on here while it holds URLs, the request ended for
        // good, and the host is still to be fetched.
        let skipped = self
            .politeness
            .get(&fl.key)
            .is_some_and(|h| h.skip.is_some());
        // A robots.txt release's claim goes on once the robots.txt is known.
        let known = fl.robots.as_ref().is_none_or(|(_, until)| until.is_some());
        if !fl.rest.is_empty() && matches!(how, "done" | "drop") && !skipped && known {
            // A URL the claim gathered is done: the store forgets it (with
            // others, later), so a lapse does not give it back.
            if let (true, Some((_, member))) = (fl.held, &fl.current) {
                fl.acks.push(member.clone());
                if fl.acks.len() >= ACKS_MAX {
                    let ack = (fl.partition, fl.id, fl.token, std::mem::take(&mut fl.acks));
                    self.ack(ack, now).await?;
                }
            }
            return Ok(());
        }
        if let Some(fl) = self.flights.remove(&released.lease) {
            self.settle_flight(fl, how, tag, now).await?;
        }
        Ok(())
    }

    /// Ends flight `id` in the store: the host's state as this worker's
    /// controller has it, how its last request ended (`how`, with `tag`
    /// for a retry), and the claim's URLs that go back to the queue.
    async fn settle_flight(
        &mut self,
        fl: Flight,
        how: &str,
        tag: u32,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let (state, chk, why) = self.written(&fl.key);
        let p = fl.partition;
        // A robots.txt flight's settle carries until when its robots.txt is
        // known; a page's, the tag it is retried with (a claim's later page
        // goes back with it, below).
        let op_tag = match (&fl.robots, &fl.current) {
            (Some((_, until)), _) => until.unwrap_or(0),
            (None, Some(_)) => 0,
            (None, None) => u64::from(tag),
        };
        // The URLs done, and the one out last, leave the claim's gathered
        // record first (an empty score says so): done, they must not go
        // back with what the claim did not release; retried or given
        // back, the last goes back once, below.
        let mut back: Vec<(String, String)> = Vec::new();
        if fl.held {
            back.extend(fl.acks.into_iter().map(|m| (String::new(), m)));
            if let Some((_, member)) = &fl.current {
                back.push((String::new(), member.clone()));
            }
        }
        // The script knows the claim's first URL; a later one that goes
        // back is sent with the rest.
        let how = match (fl.current, how) {
            (Some((score, member)), "retry") => {
                let rest = member.split_once('\t').map_or("", |(_, r)| r);
                back.push((score, format!("{tag}\t{rest}")));
                "done"
            }
            (Some(sm), "cancel") => {
                back.push(sm);
                "done"
            }
            (_, how) => how,
        };
        back.extend(fl.rest);
        // It goes with the next call (a release, most often), in the same
        // round trip: until then the host counts as in flight, which only
        // holds it back.
        self.changed(p);
        let op = SettleOp {
            id: fl.id,
            how,
            tag: op_tag,
            written: (state, chk, why),
            token: fl.token,
            back,
        };
        self.pend(p, op, now).await
    }

    /// Queues `op` on partition `p` to go in front of the next call (see
    /// `SETTLE`); past [`PENDING_MAX`] waiting, they all go at once.
    async fn pend(
        &mut self,
        p: u32,
        op: SettleOp<'_>,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let args = self.settle_args(p, op, now);
        self.push_pending(p, args).await
    }

    /// A `SETTLE` entry's arguments.
    fn settle_args(&self, p: u32, op: SettleOp<'_>, now: UnixMillis) -> Vec<String> {
        let (state, chk, why) = op.written;
        let mut args = vec![
            self.layout.tag(p).to_string(),
            self.now_arg(now).to_string(),
            self.max_in().to_string(),
            op.id.to_string(),
            op.how.to_owned(),
            op.tag.to_string(),
            state,
            chk,
            why,
            op.token.to_string(),
            op.back.len().to_string(),
        ];
        for (score, member) in op.back {
            args.push(score);
            args.push(member);
        }
        args
    }

    /// Queues a `SETTLE` entry's arguments; past [`PENDING_MAX`] waiting,
    /// they all go at once.
    async fn push_pending(&mut self, p: u32, args: Vec<String>) -> Result<(), FrontierError> {
        self.pending.push((p, args));
        if self.pending.len() >= PENDING_MAX {
            self.flush().await?;
        }
        Ok(())
    }

    /// Tells the store that URLs a claim gathered (`members`, of the
    /// flight `id` with `token` on partition `p`) are done with, in front
    /// of the next call like a completion. It changes nothing another
    /// release waits for, so the partition is not asked again for it.
    async fn ack(
        &mut self,
        (p, id, token, members): (u32, u64, u64, Vec<String>),
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        self.pend(p, ack_op(id, token, members), now).await
    }

    /// Every claim's finished URLs held back, to go with the next call.
    fn pend_acks(&mut self) {
        let mut ids: Vec<u64> = self
            .flights
            .iter()
            .filter(|(_, f)| !f.acks.is_empty() && !f.orphan)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            if let Some(fl) = self.flights.get_mut(&id) {
                let op = ack_op(fl.id, fl.token, std::mem::take(&mut fl.acks));
                let p = fl.partition;
                let args = self.settle_args(p, op, self.last_now);
                self.pending.push((p, args));
            }
        }
    }

    /// Releases what this worker's claims hold and may go now, up to
    /// `max`; gives back claims whose host's next turn is far off (more
    /// than an eighth of the lease), or that was skipped. Returns the
    /// releases and, if a claim waits, the earliest time one may go.
    async fn release_claimed(
        &mut self,
        max: usize,
        now: UnixMillis,
    ) -> Result<(Vec<Released>, Option<UnixMillis>), FrontierError> {
        let mut released = Vec::new();
        let mut wait: Option<UnixMillis> = None;
        let mut ids: Vec<u64> = self
            .flights
            .iter()
            .filter(|(_, f)| !f.out && !f.orphan && !f.rest.is_empty())
            .map(|(id, _)| *id)
            .collect();
        if ids.is_empty() {
            return Ok((released, wait));
        }
        ids.sort_unstable();
        let at = self.store_now(now);
        let far = u64::try_from(self.fleet.lease.as_millis() / 8).unwrap_or(u64::MAX);
        for id in ids {
            let Some(fl) = self.flights.get_mut(&id) else {
                continue;
            };
            let give_back = match self.politeness.check(&fl.key, at) {
                Ok(()) if released.len() < max => {
                    let Some((score, member)) = fl.rest.pop_front() else {
                        continue;
                    };
                    let mut parts = member.splitn(3, '\t');
                    let (Some(tag), Some(_origin), Some(url)) =
                        (parts.next(), parts.next(), parts.next())
                    else {
                        return Err(FrontierError::Corrupt {
                            store: self.url.clone(),
                            what: format!("a claimed URL: {member:?}"),
                        });
                    };
                    let r = Released {
                        url: url.to_owned(),
                        key: fl.key.clone(),
                        priority: priority_of(&score),
                        kind: Kind::Page,
                        tag: tag.parse().unwrap_or(0),
                        lease: id,
                    };
                    fl.started = self.politeness.start(&fl.key, at);
                    fl.out = true;
                    fl.current = Some((score, member));
                    released.push(r);
                    false
                }
                Ok(()) => {
                    wait = Some(wait.map_or(now, |w| w.min(now)));
                    false
                }
                Err(Wait::Until { at: until, .. }) if until.millis_since(at) <= far => {
                    wait = Some(wait.map_or(until, |w| w.min(until)));
                    false
                }
                Err(_) => true,
            };
            if give_back {
                self.give_back(id, now).await?;
            }
        }
        Ok((released, wait))
    }

    /// Gives back every claim with nothing out: its URLs go back to the
    /// queue for any worker.
    async fn give_back_claims(&mut self, now: UnixMillis) -> Result<(), FrontierError> {
        let mut ids: Vec<u64> = self
            .flights
            .iter()
            .filter(|(_, f)| !f.out && !f.orphan)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            self.give_back(id, now).await?;
        }
        Ok(())
    }

    /// Ends flight `id`, which has nothing out: its last request is done,
    /// and what its claim still holds goes back to the queue.
    async fn give_back(&mut self, id: u64, now: UnixMillis) -> Result<(), FrontierError> {
        match self.flights.remove(&id) {
            Some(fl) => self.settle_flight(fl, "done", 0, now).await,
            None => Ok(()),
        }
    }

    /// URLs this worker's claims hold, not yet released.
    fn claimed(&self) -> u64 {
        self.flights.values().map(|f| f.rest.len() as u64).sum()
    }

    /// Puts in `due` the partitions whose answer was a wait that is over
    /// at `now`.
    fn waited_out(&mut self, now: UnixMillis) {
        if !matches!(self.idle(), Next::Wait { until } if until <= now) {
            return;
        }
        let over: Vec<u32> = self
            .answers
            .iter()
            .enumerate()
            .filter(|(_, a)| matches!(a, Next::Wait { until } if *until <= now))
            .filter_map(|(p, _)| u32::try_from(p).ok())
            .collect();
        for p in over {
            self.answer(p, Next::Empty);
            self.due.push_back(p);
        }
    }

    /// Releases up to `max` from the store (see [`Frontier::next_batch`]).
    async fn next_from_store(
        &mut self,
        max: usize,
        now: UnixMillis,
    ) -> Result<Batch, FrontierError> {
        let mut released = Vec::new();
        if self.due.is_empty() {
            // What this worker changed, and where the wait a partition
            // answered is over, are asked again: no probe needed.
            for p in std::mem::take(&mut self.touched) {
                self.answer(p, Next::Empty);
                self.due.push_back(p);
            }
            self.waited_out(now);
        }
        if self.due.is_empty() {
            if self.probe_at.is_some_and(|t| now < t) {
                let idle = self.idle();
                return Ok(Batch {
                    released,
                    then: Some(self.capped(idle, now)),
                });
            }
            self.probe(now).await?;
            // Backs off while nothing is due. (A partition busy with
            // another worker's flight is that worker's to go on with: it
            // asks again what it changed.)
            self.probe_every = if self.due.is_empty() {
                (self.probe_every * 2).min(PROBE_MAX)
            } else {
                PROBE_EVERY
            };
            self.probe_at = Some(now.add_millis(self.probe_every));
        }
        // The first partitions waiting, one release each and the rest of
        // the budget to the first: never more than `max` in all, in one
        // round trip.
        while released.is_empty() && !self.due.is_empty() {
            let m = self.due.len().min(max);
            let asks: Vec<(u32, usize)> = self
                .due
                .iter()
                .take(m)
                .enumerate()
                .map(|(i, &p)| (p, if i == 0 { max + 1 - m } else { 1 }))
                .collect();
            let answers = self.next_on(&asks, now).await?;
            let mut more = Vec::new();
            for (&(p, _), (got, idle)) in asks.iter().zip(answers) {
                // Its answer is fresh (given after its releases).
                self.touched.remove(&p);
                self.due.pop_front();
                released.extend(got);
                match idle {
                    // It may hold more: it stays first.
                    None => more.push(p),
                    Some(answer) => self.answer(p, answer),
                }
            }
            for p in more.into_iter().rev() {
                self.due.push_front(p);
            }
        }
        let then = if self.due.is_empty() {
            let idle = self.idle();
            Some(self.capped(idle, now))
        } else {
            None
        };
        Ok(Batch { released, then })
    }

    /// Offers URLs to the store, those the worker's memory answers aside
    /// (when `cached`), and remembers those the store answered for.
    async fn offer(
        &mut self,
        offers: &[Offer<'_>],
        cached: bool,
        now: UnixMillis,
    ) -> Result<Vec<Admission>, FrontierError> {
        let mut out: Vec<Option<Admission>> = vec![None; offers.len()];
        // Per partition, in the order first seen: its offers (their place,
        // key, fingerprint, origin, URL, and the claim they may join).
        type Item = (usize, String, u128, String, String, Option<Join>);
        let mut parts: Vec<(u32, Vec<Item>)> = Vec::new();
        // This worker's claims, by host, with the room each has left: a
        // host's new URL is offered to the claim that holds it.
        let mut room: HashMap<String, Join> = HashMap::new();
        if self.fleet.claim > 1 {
            for (&lease, f) in &self.flights {
                if f.held && !f.orphan {
                    let left = self.fleet.claim.saturating_sub(f.rest.len() + 1);
                    room.insert(
                        f.key.clone(),
                        Join {
                            lease,
                            token: f.token,
                            left,
                        },
                    );
                }
            }
        }
        let mut part_of: HashMap<u32, usize> = HashMap::new();
        for (i, o) in offers.iter().enumerate() {
            let (parsed, key) = match admit(&self.keyer, o.url) {
                Ok(k) => k,
                Err(answer) => {
                    out[i] = Some(answer);
                    continue;
                }
            };
            let p = self.layout.partition_of(&key);
            let normal = parsed[..url::Position::AfterQuery].to_owned();
            let fp = xxhash_rust::xxh3::xxh3_128(normal.as_bytes());
            let held = || Held {
                url: o.url.to_owned(),
                priority: o.priority,
                tag: o.tag,
            };
            if cached && self.seen.answers(fp, held) {
                out[i] = Some(Admission::Duplicate);
                continue;
            }
            let join = room.get_mut(&key).filter(|j| j.left > 0).map(|j| {
                j.left -= 1;
                *j
            });
            let item = (i, key, fp, origin_of(&parsed), normal, join);
            let at = *part_of.entry(p).or_insert_with(|| {
                parts.push((p, Vec::new()));
                parts.len() - 1
            });
            parts[at].1.push(item);
        }
        // Calls of at most ENQUEUE_CHUNK URLs: on a Cluster each holds one
        // partition's; on a standalone server, as many partitions' as fit.
        let one_slot = self.con.one_slot_per_pipeline();
        let mut cmds: Vec<(u32, redis::Cmd)> = Vec::new();
        type Place = (usize, String, u128, Option<(Join, String)>);
        let mut places: Vec<Vec<Place>> = Vec::new();
        for (p, items) in parts {
            for chunk in items.chunks(ENQUEUE_CHUNK) {
                let fits = places
                    .last()
                    .is_some_and(|l| !one_slot && l.len() + chunk.len() <= ENQUEUE_CHUNK);
                if !fits {
                    let mut c = self.script_cmd(|s| &s.enqueue, p, "seen");
                    c.arg(self.now_arg(now))
                        .arg(self.config.max_per_key)
                        .arg(self.config.max_total)
                        .arg(self.config.max_keys);
                    cmds.push((p, c));
                    places.push(Vec::new());
                }
                let (Some((_, c)), Some(held)) = (cmds.last_mut(), places.last_mut()) else {
                    return Err(self.corrupt("enqueue: no call to add to"));
                };
                c.arg(self.layout.tag(p)).arg(chunk.len());
                for (i, key, fp, origin, normal, join) in chunk {
                    let o = &offers[*i];
                    // The member a queue (or a claim) holds the URL as.
                    let member = format!("{}\t{origin}\t{normal}", o.tag);
                    c.arg(key)
                        .arg(&fp.to_be_bytes()[..])
                        .arg(o.priority)
                        .arg(&member);
                    match join {
                        Some(j) => c.arg(j.token),
                        None => c.arg(""),
                    };
                    held.push((*i, key.clone(), *fp, join.map(|j| (j, member))));
                }
            }
        }
        // Partitions a URL may be queued in: for the board (a URL that
        // joins a claim gives no other worker anything to do).
        for (_, key, _, member) in places.iter().flatten() {
            if member.is_none() {
                self.posts.insert(self.layout.partition_of(key));
            }
        }
        // No call when every offer was answered here (remembered, or
        // refused).
        let replies = if cmds.is_empty() {
            Vec::new()
        } else {
            self.exec(cmds).await?
        };
        for (items, v) in places.into_iter().zip(replies) {
            let answers: Vec<String> = redis::from_redis_value(v.clone())
                .map_err(|_| self.corrupt(format!("enqueue: {v:?}")))?;
            if answers.len() != items.len() {
                return Err(self.corrupt(format!("enqueue: {v:?}")));
            }
            for ((i, key, fp, member), a) in items.into_iter().zip(answers) {
                if let Some(score) = a.strip_prefix("claimed\t") {
                    let Some((join, member)) = member else {
                        return Err(self.corrupt(format!("enqueue: {a:?} for no claim")));
                    };
                    self.gathered(join.lease, score, member);
                    self.seen.remember(fp);
                    out[i] = Some(Admission::Queued);
                    continue;
                }
                let answer = self
                    .admission(&key, &a)
                    .ok_or_else(|| self.corrupt(format!("enqueue: {a:?}")))?;
                if matches!(answer, Admission::Queued | Admission::Duplicate) {
                    self.seen.remember(fp);
                }
                if answer == Admission::Queued {
                    // Its host may be due now: the partition is asked
                    // again. (Nothing else an offer can do changes what
                    // a partition may release.)
                    self.changed_here(self.layout.partition_of(&key));
                }
                out[i] = Some(answer);
            }
        }
        out.into_iter()
            .map(|a| a.ok_or_else(|| self.corrupt("enqueue: an offer got no answer")))
            .collect()
    }

    /// A URL joined the claim `lease` in the store: it takes its place in
    /// the claim's queue order (by score, as the host's queue would hold
    /// it). A claim that ended meanwhile here has handed it back already
    /// (its settle gives back what it gathered).
    fn gathered(&mut self, lease: u64, score: &str, member: String) {
        let Some(fl) = self.flights.get_mut(&lease).filter(|f| !f.orphan) else {
            return;
        };
        let s: f64 = score.parse().unwrap_or(f64::MAX);
        let at = fl
            .rest
            .iter()
            .position(|(other, _)| other.parse::<f64>().unwrap_or(f64::MAX) > s)
            .unwrap_or(fl.rest.len());
        fl.rest.insert(at, (score.to_owned(), member));
    }

    /// Sends again the offers the worker's memory answered while the store
    /// may have been losing them (see the crate's `seen` module). Their
    /// answers were given already: what the store says now only refills
    /// the memory.
    async fn replay(&mut self, now: UnixMillis) -> Result<(), FrontierError> {
        loop {
            let held = self.seen.take_replay();
            if held.is_empty() {
                return Ok(());
            }
            let offers: Vec<Offer<'_>> = held
                .iter()
                .map(|h| Offer {
                    url: &h.url,
                    priority: h.priority,
                    tag: h.tag,
                })
                .collect();
            // The replay may itself find a new incarnation, and hand back
            // what was answered here since: hence the loop.
            self.offer(&offers, false, now).await?;
        }
    }

    /// What an `ENQUEUE` answer means for a URL of `key`.
    fn admission(&self, key: &str, answer: &str) -> Option<Admission> {
        Some(match answer {
            "queued" => Admission::Queued,
            "duplicate" => Admission::Duplicate,
            "total" => Admission::Backpressure {
                reason: format!(
                    "the frontier holds {} URLs, its bound",
                    self.config.max_total
                ),
            },
            "key" => Admission::Backpressure {
                reason: format!(
                    "{key} has {} URLs waiting, its bound",
                    self.config.max_per_key
                ),
            },
            "keys" => Admission::Backpressure {
                reason: format!(
                    "{} hosts have URLs waiting, the bound",
                    self.config.max_keys
                ),
            },
            a => Admission::Skipped {
                reason: a.strip_prefix("skip\t")?.to_owned(),
            },
        })
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
        let offer = Offer { url, priority, tag };
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
            return Ok(Batch {
                released,
                then: None,
            });
        }
        let mut batch = self.next_from_store(max - released.len(), now).await?;
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
        self.settle(released, "done", Some(outcome), 0, now).await
    }

    async fn requeue(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        tag: u32,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        released.require_page()?;
        self.settle(released, "retry", Some(outcome), tag, now)
            .await
    }

    async fn discard(&mut self, released: &Released, now: UnixMillis) -> Result<(), FrontierError> {
        self.settle(released, "drop", None, 0, now).await
    }

    async fn confirm(
        &mut self,
        released: &Released,
        now: UnixMillis,
    ) -> Result<bool, FrontierError> {
        let Some(fl) = self.flights.get(&released.lease) else {
            return Err(FrontierError::UnknownLease {
                lease: released.lease,
                url: released.url.clone(),
            });
        };
        if fl.orphan {
            // The store gave the host out again: this lease lapsed.
            self.flights.remove(&released.lease);
            return Ok(false);
        }
        // A release well inside its lease needs no round trip: the lease
        // cannot have lapsed. Past a quarter of it (the worker waited for
        // robots.txt, or was stopped), the store is asked.
        let quarter = self.fleet.lease / 4;
        let young = now.millis_since(fl.at.0)
            < u64::try_from(quarter.as_millis()).unwrap_or(u64::MAX)
            && fl.at.1.elapsed() < quarter;
        if young {
            return Ok(true);
        }
        let (p, token, id) = (fl.partition, fl.token, fl.id);
        let mut c = self.script_cmd(|s| &s.renew, p, "fl");
        c.arg(self.now_arg(now))
            .arg(id)
            .arg(token)
            .arg(u64::try_from(self.fleet.lease.as_millis()).unwrap_or(u64::MAX));
        let ok: i64 = self.call(p, c, "renew").await?;
        if ok == 1 {
            if let Some(fl) = self.flights.get_mut(&released.lease) {
                fl.at = (now, std::time::Instant::now());
            }
            return Ok(true);
        }
        // The URL went back to the queue: the release is over here, and
        // the host's state is whoever holds it now's.
        if let Some(fl) = self.flights.remove(&released.lease) {
            self.politeness.unstart(&fl.key, &fl.started);
        }
        self.stale += 1;
        self.changed(p);
        Ok(false)
    }

    fn send_by(&self, released: &Released) -> Option<std::time::Instant> {
        // Half the lease from when it was released or last renewed, as this
        // process saw it: the server started the lease before the reply
        // arrived, so the full lease would overshoot by the round trip.
        let fl = self.flights.get(&released.lease)?;
        Some(fl.at.1 + self.fleet.lease / 2)
    }

    async fn cancel(&mut self, released: &Released, now: UnixMillis) -> Result<(), FrontierError> {
        self.settle(released, "cancel", None, 0, now).await
    }

    async fn robots_unavailable(
        &mut self,
        origin: &str,
        until: UnixMillis,
        reason: &str,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let (origin, key) = self.origin_and_key(origin);
        let p = self.layout.partition_of(key.as_deref().unwrap_or(&origin));
        let mut c = self.step(|s| &s.robots_unavailable, p, "rb", now);
        c.arg(&origin)
            .arg(key.unwrap_or_default())
            .arg(until.as_millis())
            .arg(reason);
        let _: String = self.call(p, c, "robots_unavailable").await?;
        self.changed(p);
        Ok(())
    }

    async fn robots_known(
        &mut self,
        origin: &str,
        pacing: RobotsPacing,
        valid_until: UnixMillis,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let (origin, key) = self.origin_and_key(origin);
        let (state, chk, why) = match &key {
            Some(k) => {
                self.load(k).await?;
                self.politeness.set_robots(k, pacing);
                self.written(k)
            }
            None => Default::default(),
        };
        // This worker's robots.txt flight for the origin tells the store
        // when it settles (it writes the host's state then too).
        let mine = self
            .flights
            .values_mut()
            .find(|f| !f.orphan && f.out && f.robots.as_ref().is_some_and(|(o, _)| *o == origin));
        if let Some((_, known)) = mine.and_then(|f| f.robots.as_mut()) {
            *known = Some(valid_until.as_millis());
            return Ok(());
        }
        let p = self.layout.partition_of(key.as_deref().unwrap_or(&origin));
        // It goes in front of the next call, as a completion does: until
        // then the origin's gate says its fetch is under way, which only
        // holds its URLs back.
        let args = vec![
            self.layout.tag(p).to_string(),
            self.now_arg(now).to_string(),
            self.max_in().to_string(),
            origin,
            "known".to_owned(),
            valid_until.as_millis().to_string(),
            state,
            chk,
            why,
            key.unwrap_or_default(),
            "0".to_owned(),
        ];
        self.changed(p);
        self.push_pending(p, args).await
    }

    async fn begin_request(&mut self, url: &str, now: UnixMillis) -> Result<Begin, FrontierError> {
        let key = match self.keyer.key(url) {
            Ok(k) => k,
            Err(e) => {
                return Ok(Begin::Refused {
                    reason: e.to_string(),
                })
            }
        };
        let p = self.layout.partition_of(&key);
        let mut c = self.step(|s| &s.begin, p, "chk", now);
        c.arg(&key).arg(self.politeness.config.min_delay);
        let sent = UnixMillis::now();
        let v: Vec<String> = self.call(p, c, "begin").await?;
        let at = |i: usize| v.get(i).and_then(|s| s.parse().ok()).map(UnixMillis);
        match v.first().map(String::as_str) {
            Some("started") => {
                if !self.holds(&key) {
                    let state = v.get(2).cloned().unwrap_or_default();
                    self.adopt(&key, &state);
                }
                let now = at(1).unwrap_or(now);
                self.saw_server_time(now, sent);
                self.politeness.start(&key, now);
                *self.begun.entry(key).or_default() += 1;
                self.changed(p);
                Ok(Begin::Started)
            }
            Some("wait") => Ok(Begin::Wait {
                until: at(2).ok_or_else(|| self.corrupt(format!("begin: {v:?}")))?,
            }),
            Some("refused") => Ok(Begin::Refused {
                reason: v.get(2).cloned().unwrap_or_default(),
            }),
            _ => Err(self.corrupt(format!("begin: {v:?}"))),
        }
    }

    async fn end_request(
        &mut self,
        url: &str,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let Ok(key) = self.keyer.key(url) else {
            return Ok(());
        };
        self.load(&key).await?;
        if let Some(n) = self.begun.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.begun.remove(&key);
            }
        }
        let at = self.store_now(now);
        self.politeness.finish(&key, at, outcome);
        let (state, chk, why) = self.written(&key);
        let p = self.layout.partition_of(&key);
        let mut c = self.step(|s| &s.end, p, "chk", now);
        c.arg(&key).arg(state).arg(chk).arg(why);
        let _: String = self.call(p, c, "end").await?;
        self.changed(p);
        Ok(())
    }

    async fn busiest(&mut self, n: usize) -> Result<Vec<KeyLoad>, FrontierError> {
        self.flush().await?;
        let parts: Vec<u32> = (0..self.layout.partitions()).collect();
        let layout = &self.layout;
        let replies = across(&mut self.con, &parts, |pipe, p| {
            pipe.cmd("ZRANGE")
                .arg(layout.key(p, "cnt"))
                .arg(0)
                .arg(n.saturating_sub(1))
                .arg("WITHSCORES");
        })
        .await
        .map_err(|e| store_err(&self.url, e))?;
        let per = replies
            .into_iter()
            .flatten()
            .map(redis::from_redis_value::<Vec<(String, f64)>>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.corrupt(format!("busiest: {e}")))?;
        let mut all: Vec<(String, u64)> = per
            .into_iter()
            .flatten()
            .map(|(k, s)| (k, (-s).max(0.0) as u64))
            .filter(|(_, c)| *c > 0)
            .collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(all
            .into_iter()
            .take(n)
            .map(|(key, queued)| KeyLoad {
                key,
                queued,
                head: None,
            })
            .collect())
    }

    async fn why_not_now(
        &mut self,
        url: &str,
        now: UnixMillis,
    ) -> Result<Option<String>, FrontierError> {
        let key = match self.keyer.key(url) {
            Ok(k) => k,
            Err(e) => return Ok(Some(e.to_string())),
        };
        if self.config.robots_gate {
            let (origin, _) = self.origin_and_key(url);
            let p = self.layout.partition_of(&key);
            let mut c = redis::cmd("HGET");
            c.arg(self.layout.key(p, "rb")).arg(&origin);
            let gate: Option<String> = self.call(p, c, "why_not_now").await?;
            if let Some(g) = gate {
                if g.starts_with('F') {
                    return Ok(Some(format!("{origin}/robots.txt is being fetched")));
                }
                if let Some(rest) = g.strip_prefix('U') {
                    let (until, reason) = rest.split_once('\t').unwrap_or((rest, ""));
                    let until = UnixMillis(until.parse().unwrap_or(0));
                    if now < until {
                        return Ok(Some(format!(
                            "{origin}/robots.txt: {reason}; fetched again at +{} s",
                            until.millis_since(now).div_ceil(1000)
                        )));
                    }
                }
            }
        }
        self.load(&key).await?;
        let at = self.store_now(now);
        Ok(self.politeness.why_not_now(&key, at))
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
        // The crawler asks after every release; reading every partition
        // that often would be most of the server's work. The stats (read
        // every 2 s for the progress line) count each partition's skipped
        // URLs, and only those where the count grew are read; every one is
        // read when neither they nor the stats were for 10 s, and after
        // `sync`.
        // Whichever worker asks first takes them, so each is reported once.
        let now = UnixMillis::now();
        let every =
            |t: Option<UnixMillis>| t.is_none_or(|t| now >= t.add_millis(SKIPPED_FULL_EVERY));
        let full = std::mem::take(&mut self.skipped_full)
            || (every(self.stats_cache.map(|(_, _, read)| read)) && every(self.skipped_at));
        let parts: Vec<u32> = if full {
            self.skipped_at = Some(now);
            self.skipped_owed.clear();
            (0..self.layout.partitions()).collect()
        } else {
            std::mem::take(&mut self.skipped_owed).into_iter().collect()
        };
        if parts.is_empty() {
            return Ok(Vec::new());
        }
        // A plain `LPOP` with a count per partition (atomic, so each entry
        // goes to one worker): a script call would cost the server ten
        // times as much, every second, for each worker.
        let layout = &self.layout;
        let replies = across(&mut self.con, &parts, |pipe, p| {
            pipe.cmd("LPOP").arg(layout.key(p, "sk")).arg(SKIPPED_TAKE);
        })
        .await
        .map_err(|e| store_err(&self.url, e))?;
        let mut out = Vec::new();
        for (&p, reply) in parts.iter().zip(replies) {
            let Some(reply) = reply.into_iter().next() else {
                continue;
            };
            let items: Vec<String> = redis::from_redis_value::<Option<Vec<String>>>(reply)
                .map_err(|e| self.corrupt(format!("skipped: {e}")))?
                .unwrap_or_default();
            if items.len() >= SKIPPED_TAKE {
                // More wait there.
                self.skipped_owed.insert(p);
            }
            for item in items {
                let (url, reason): (String, String) = serde_json::from_str(&item)
                    .map_err(|_| self.corrupt(format!("a skipped entry: {item}")))?;
                out.push(Skipped { url, reason });
            }
        }
        Ok(out)
    }
}

/// How long a [`ClockOffset`] window lasts.
const OFFSET_WINDOW: u64 = 30_000;

/// The server's clock minus this process's, in ms.
///
/// The server reads its clock after a call left, so a reply stamped `at`
/// to a call sent at `sent` gives `at - sent`: the true offset plus the
/// call's way there (at least 0), which varies from call to call. Taking
/// each reply's as it came made the worker's clock jump by that variation:
/// a host's next request, counted from a start read on one reply's offset
/// and checked on a later, larger one's, could leave early by the
/// difference (tens of ms with a loaded server). So the offset is the
/// least `at - sent` of the last 30 to 60 s: the closest to the true one,
/// still never below it (times err late, so a completion's time, and the
/// host's next request counted from it, is never put too early by a slow
/// reply), and it moves only when a better reply comes or a window ends.
/// A server clock set back is followed at its first reply; one set
/// forward (or a failover to a server whose clock is ahead) within a
/// minute, the worker's times erring early by the step until then, as
/// they would until its next reply before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ClockOffset {
    /// The least `at - sent` in the current window, and in the one before.
    current: Option<i64>,
    previous: Option<i64>,
    /// When the current window began, on this process's clock.
    since: u64,
}

impl ClockOffset {
    fn saw(&mut self, at: UnixMillis, sent: UnixMillis) {
        let local = sent.as_millis();
        let sample = i64::try_from(at.as_millis())
            .unwrap_or(i64::MAX)
            .saturating_sub(i64::try_from(local).unwrap_or(i64::MAX));
        if self.current.is_none() || local.saturating_sub(self.since) >= OFFSET_WINDOW {
            self.previous = self.current;
            self.current = None;
            self.since = local;
        }
        self.current = Some(self.current.map_or(sample, |c| c.min(sample)));
    }

    fn get(&self) -> i64 {
        match (self.current, self.previous) {
            (Some(c), Some(p)) => c.min(p),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_clock_is_the_closest_reply_of_the_last_window() {
        let mut o = ClockOffset::default();
        assert_eq!(o.get(), 0);
        // The server is 500 ms ahead; calls take 3, 40 and 1 ms to get there.
        let t0 = 1_795_000_000_000;
        for (sent, way) in [(t0, 3), (t0 + 100, 40), (t0 + 200, 1), (t0 + 300, 25)] {
            o.saw(UnixMillis(sent + 500 + way), UnixMillis(sent));
        }
        assert_eq!(o.get(), 501, "the best reply, not the last one");
        // The server's clock is set back 200 ms: its first reply says so.
        let mut t = t0 + 400;
        o.saw(UnixMillis(t + 300 + 2), UnixMillis(t));
        assert_eq!(o.get(), 302);
        // Set forward 600 ms: the older, smaller offset stands (times err
        // early by up to 600 ms) until its window has passed, within a
        // minute; never beyond the truth.
        t += 1_000;
        let forward = t;
        while t < forward + 2 * OFFSET_WINDOW {
            o.saw(UnixMillis(t + 900 + 5), UnixMillis(t));
            assert!((302..=905).contains(&o.get()), "{}", o.get());
            t += 1_000;
        }
        assert_eq!(o.get(), 905);
    }

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn a_sorted_sets_head_score_reads_in_either_protocol() {
        let resp2 = Value::Array(vec![bulk("h.example"), bulk("1795168800123")]);
        assert_eq!(head_score(&resp2), Some(Some(1_795_168_800_123.0)));
        let resp3 = Value::Array(vec![Value::Array(vec![
            bulk("h.example"),
            Value::Double(42.0),
        ])]);
        assert_eq!(head_score(&resp3), Some(Some(42.0)));
        assert_eq!(head_score(&Value::Array(Vec::new())), Some(None));
        // Anything else is refused, not read as "empty".
        assert_eq!(head_score(&Value::Nil), None);
        assert_eq!(head_score(&Value::Array(vec![bulk("only a member")])), None);
        assert_eq!(
            head_score(&Value::Array(vec![bulk("h"), bulk("not a number")])),
            None
        );
    }
}
