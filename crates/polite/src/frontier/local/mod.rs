//! [`LocalFrontier`]: the frontier in one process, in memory or on disk.
//!
//! In memory every queued URL is held in its key's queue. On disk (see
//! [`crate::store`]) the store holds every queued URL and memory holds, per
//! key, a window of its first [`FrontierConfig::window`] URLs, its count and
//! its scheduling state, so memory grows with the number of hosts, not of
//! URLs. The seen-set is a hash set in memory, or on disk behind a Bloom
//! filter.
//!
//! Costs: `enqueue` and a release are O(log keys + log window) in memory,
//! plus one write batch on disk; a key's window is refilled from disk with
//! one range read every `window` releases.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::path::Path;

use super::summary;
use super::{
    Admission, Begin, Frontier, FrontierConfig, FrontierError, KeyLoad, Kind, Next, Released,
    Settle, Skipped, Stats,
};
use crate::controller::{HostState, Outcome, Politeness, RobotsPacing, Started, UnixMillis, Wait};
use crate::key::{KeyError, Keyer};
use crate::store::{sort_key, sort_priority, sort_seq, Entry, Sort, Store};

mod recovery;

/// A queued URL with the caller's tag.
#[derive(Debug, Clone)]
struct Queued {
    tag: u32,
    url: Box<str>,
}

#[derive(Default)]
struct KeyQueue {
    /// The key's first URLs (all of them in memory mode).
    window: BTreeMap<Sort, Queued>,
    /// URLs queued for this key, in the window or only on disk.
    count: u64,
    /// A lower bound of the entries that are on disk only.
    rest_low: Option<Sort>,
    /// The time this key sits in the time heap for.
    scheduled: Option<UnixMillis>,
    /// The entry this key sits in the ready heap with (priority, time).
    /// A heap entry that is not this one is stale: comparing the time too
    /// keeps an old entry of the same priority from standing in for it.
    ready: Option<(u8, UnixMillis)>,
}

impl KeyQueue {
    /// Puts URLs read from disk (in order) into the empty window; what is
    /// left only on disk then sorts after the last of them. A key that
    /// counts URLs but has none on disk is a corrupt store.
    fn fill(&mut self, loaded: Vec<Entry>, key: &str, store: &Store) -> Result<(), FrontierError> {
        let last = loaded.last().map(|e| e.sort);
        for e in loaded {
            self.window.insert(
                e.sort,
                Queued {
                    tag: e.tag,
                    url: e.url.into_boxed_str(),
                },
            );
        }
        self.rest_low = match last {
            Some(l) if self.window.len() as u64 != self.count => Some(after(l)),
            _ => None,
        };
        if self.window.is_empty() {
            return Err(FrontierError::Corrupt {
                store: store.path().display().to_string(),
                what: format!(
                    "{key} should have {} queued URLs on disk, found none",
                    self.count
                ),
            });
        }
        Ok(())
    }

    fn head_priority(&self) -> u8 {
        // A queue restored from a summary has its head on disk only, and
        // `rest_low` is then exactly that head.
        self.window
            .keys()
            .next()
            .or(self.rest_low.as_ref())
            .map(sort_priority)
            .unwrap_or(0)
    }
}

/// A release in flight. Both kinds hold the key's slot; `started` is what
/// `start` changed, so `cancel` can undo it.
enum Flight {
    /// A page, with its place in the queue (a cancel puts it back there).
    Page {
        key: Box<str>,
        sort: Sort,
        queued: Queued,
        started: Started,
    },
    /// An origin's robots.txt (not in any queue).
    Robots {
        key: Box<str>,
        origin: String,
        started: Started,
    },
}

impl Flight {
    fn key(&self) -> &str {
        match self {
            Flight::Page { key, .. } | Flight::Robots { key, .. } => key,
        }
    }

    fn started(&self) -> &Started {
        match self {
            Flight::Page { started, .. } | Flight::Robots { started, .. } => started,
        }
    }
}

/// What the gate knows of an origin's robots.txt. An origin with no entry
/// has never had it fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RobotsGate {
    /// Being fetched; pages wait. `known_until` is set when the caller
    /// reports the rules before the fetch completes.
    Fetching { known_until: Option<UnixMillis> },
    /// Known until this instant; then fetched again.
    Known { until: UnixMillis },
    /// Could not be had (5xx, 429, network): pages wait until `until`, then
    /// robots.txt is fetched again.
    Unavailable { until: UnixMillis, reason: Box<str> },
}

impl RobotsGate {
    /// The state once the fetch is over (completed or cancelled): `None`
    /// when no rules were reported (the next release fetches again).
    fn settle(self) -> Option<RobotsGate> {
        match self {
            RobotsGate::Fetching {
                known_until: Some(until),
            } => Some(RobotsGate::Known { until }),
            RobotsGate::Fetching { known_until: None } => None,
            other => Some(other),
        }
    }
}

enum Seen {
    Memory(HashSet<u128>),
    Disk(Option<fastbloom::BloomFilter>),
}

/// The frontier in one process, in memory or on disk (see the
/// [`frontier`](crate::frontier) docs).
pub struct LocalFrontier {
    /// The per-key controller (its settings and every key's state).
    pub politeness: Politeness,
    /// Maps URLs to politeness keys (and holds resolved addresses in IP mode).
    pub keyer: Keyer,
    config: FrontierConfig,
    seen: Seen,
    queues: HashMap<Box<str>, KeyQueue>,
    /// Keys by the time they may next be tried (stale entries skipped).
    time: BinaryHeap<Reverse<(UnixMillis, Box<str>)>>,
    /// Keys that may be tried now, best head priority first, then earliest.
    ready: BinaryHeap<(u8, Reverse<UnixMillis>, Box<str>)>,
    flight: HashMap<u64, Flight>,
    robots: HashMap<String, RobotsGate>,
    /// `robots_unavailable` reported while the origin's fetch was in
    /// flight: the gate's state once that fetch settles.
    unavailable_after_fetch: HashMap<String, RobotsGate>,
    seq: u64,
    total: u64,
    skipped: Vec<Skipped>,
    skipped_total: u64,
    reissued: u64,
    store: Option<Store>,
    from_summary: bool,
    /// The store generation the summary on disk describes, when known: a
    /// `sync` followed by a clean close writes it once, not twice.
    summary_generation: Option<u64>,
}

/// The seen-set fingerprint of a parsed URL (its fragment ignored).
pub(crate) fn fingerprint(u: &url::Url) -> u128 {
    xxhash_rust::xxh3::xxh3_128(u[..url::Position::AfterQuery].as_bytes())
}

/// The smallest sort key after `s`.
fn after(mut s: Sort) -> Sort {
    for b in s.iter_mut().rev() {
        let (v, carry) = b.overflowing_add(1);
        *b = v;
        if !carry {
            break;
        }
    }
    s
}

/// `scheme://host[:port]` of a normalised URL string, without parsing it
/// again when it has no user info.
fn origin_str(url: &str) -> Cow<'_, str> {
    if let Some(i) = url.find("://") {
        let rest = &url[i + 3..];
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if !rest[..end].contains('@') {
            return Cow::Borrowed(&url[..i + 3 + end]);
        }
    }
    match url::Url::parse(url) {
        Ok(u) => Cow::Owned(super::origin_of(&u)),
        Err(_) => Cow::Borrowed(url),
    }
}

impl LocalFrontier {
    /// A frontier held in memory (lost when the process ends).
    pub fn in_memory(politeness: Politeness, config: FrontierConfig) -> LocalFrontier {
        LocalFrontier {
            politeness,
            keyer: Keyer::new(config.key_mode),
            seen: Seen::Memory(HashSet::new()),
            config,
            queues: HashMap::new(),
            time: BinaryHeap::new(),
            ready: BinaryHeap::new(),
            flight: HashMap::new(),
            robots: HashMap::new(),
            unavailable_after_fetch: HashMap::new(),
            seq: 0,
            total: 0,
            skipped: Vec::new(),
            skipped_total: 0,
            reissued: 0,
            store: None,
            from_summary: false,
            summary_generation: None,
        }
    }

    /// Every queued URL with its key, in key order then queue order (on
    /// disk this reads the whole store; meant for inspection and export).
    pub fn queued_urls(&mut self) -> Result<Vec<(String, String)>, FrontierError> {
        let mut out = Vec::new();
        match self.store.as_mut() {
            Some(store) => {
                store.commit()?;
                store.scan_queue(|e| {
                    out.push((e.key, e.url));
                    Ok(())
                })?;
            }
            None => {
                let mut keys: Vec<&Box<str>> = self.queues.keys().collect();
                keys.sort();
                for k in keys {
                    for q in self.queues[k].window.values() {
                        out.push((k.to_string(), q.url.to_string()));
                    }
                }
            }
        }
        Ok(out)
    }

    /// The politeness key of a URL.
    pub fn key_of(&self, url: &str) -> Result<String, KeyError> {
        self.keyer.key(url)
    }

    fn schedule(&mut self, key: &str, at: UnixMillis) {
        let Some(q) = self.queues.get_mut(key) else {
            return;
        };
        if q.ready.is_some() {
            return; // already waiting in the ready heap
        }
        if q.scheduled.is_none_or(|c| at < c) {
            q.scheduled = Some(at);
            self.time.push(Reverse((at, key.into())));
        }
    }

    fn seen_contains(&mut self, fp: u128) -> Result<bool, FrontierError> {
        match &mut self.seen {
            Seen::Memory(set) => Ok(set.contains(&fp)),
            Seen::Disk(bloom) => {
                if bloom.as_ref().is_some_and(|b| !b.contains(&fp)) {
                    return Ok(false);
                }
                match self.store.as_mut() {
                    Some(store) => Ok(store.seen(fp)?),
                    None => Ok(false),
                }
            }
        }
    }

    /// Remembers `fp` (just found not seen).
    fn seen_add(&mut self, fp: u128) {
        match &mut self.seen {
            Seen::Memory(set) => {
                set.insert(fp);
            }
            Seen::Disk(bloom) => {
                if let Some(b) = bloom.as_mut() {
                    b.insert(&fp);
                }
                if let Some(store) = self.store.as_mut() {
                    store.put_seen(fp);
                }
            }
        }
    }

    fn save_host(&mut self, key: &str) {
        if let (Some(store), Some(h)) = (self.store.as_mut(), self.politeness.get(key)) {
            if let Ok(json) = serde_json::to_vec(h) {
                store.put_host(key, &json);
            }
        }
    }

    fn end_op(&mut self) -> Result<(), FrontierError> {
        match self.store.as_mut() {
            Some(s) => s.end_op(),
            None => Ok(()),
        }
    }

    /// Puts an entry into its key's queue (window or disk).
    fn insert(&mut self, key: &str, sort: Sort, tag: u32, url: &str) {
        let disk = self.store.is_some();
        let window = self.config.window.max(1);
        let q = self.queues.entry(key.into()).or_default();
        q.count += 1;
        self.total += 1;
        if let Some(store) = self.store.as_mut() {
            store.put_queue(key, &sort, tag, url);
        }
        let all_in_window = q.window.len() as u64 + 1 == q.count;
        let before_last = q.window.keys().next_back().is_some_and(|last| sort < *last);
        if !disk || all_in_window || before_last {
            q.window.insert(
                sort,
                Queued {
                    tag,
                    url: url.into(),
                },
            );
            if disk && q.window.len() > window {
                if let Some((last, _)) = q.window.pop_last() {
                    q.rest_low = Some(q.rest_low.map_or(last, |r| r.min(last)));
                }
            }
        } else {
            q.rest_low = Some(q.rest_low.map_or(sort, |r| r.min(sort)));
        }
        // A better head may move the key up the ready heap.
        if let Some((p, _)) = q.ready {
            let head = q.head_priority();
            if head > p {
                q.ready = Some((head, UnixMillis::EPOCH));
                self.ready
                    .push((head, Reverse(UnixMillis::EPOCH), key.into()));
            }
        }
    }

    /// Takes the head entry of a key's queue, refilling the window from disk.
    ///
    /// A refill reads the store, which first commits the pending batch; it
    /// happens before this operation writes anything, so only whole
    /// operations are ever committed.
    fn pop_head(&mut self, key: &str) -> Result<Option<(Sort, Queued)>, FrontierError> {
        self.ensure_window(key)?;
        let window = self.config.window.max(1);
        let Some(q) = self.queues.get_mut(key) else {
            return Ok(None);
        };
        let Some(&head) = q.window.keys().next() else {
            return Ok(None);
        };
        let mut refill = None;
        if let Some(store) = self.store.as_mut() {
            if q.window.len() == 1 && q.count > 1 {
                let from = q.rest_low.unwrap_or([0; 9]);
                refill = Some(store.load(key, &from, window + 1)?);
            }
        }
        let Some(url) = q.window.remove(&head) else {
            return Ok(None);
        };
        q.count -= 1;
        self.total -= 1;
        if let Some(store) = self.store.as_mut() {
            store.del_queue(key, &head);
            if let Some(loaded) = refill {
                // Everything else on disk sorts after the head just taken.
                let loaded = loaded
                    .into_iter()
                    .filter(|e| e.sort > head)
                    .take(window)
                    .collect();
                q.fill(loaded, key, store)?;
            }
        }
        Ok(Some((head, url)))
    }

    /// Loads a key's window from disk when it is empty but URLs are queued
    /// (a queue restored from a summary). Reads only: it runs before the
    /// operation writes anything.
    fn ensure_window(&mut self, key: &str) -> Result<(), FrontierError> {
        let window = self.config.window.max(1);
        let (Some(q), Some(store)) = (self.queues.get_mut(key), self.store.as_mut()) else {
            return Ok(());
        };
        if !q.window.is_empty() || q.count == 0 {
            return Ok(());
        }
        let from = q.rest_low.unwrap_or([0; 9]);
        let loaded = store.load(key, &from, window)?;
        q.fill(loaded, key, store)
    }

    /// Drops every URL of a skipped key, reporting each.
    fn drain(&mut self, key: &str, reason: &str) -> Result<(), FrontierError> {
        while let Some((_, q)) = self.pop_head(key)? {
            self.skipped_total += 1;
            self.skipped.push(Skipped {
                url: q.url.into(),
                reason: reason.to_owned(),
            });
        }
        self.queues.remove(key);
        self.end_op()
    }

    fn release(&mut self, key: &str, now: UnixMillis) -> Result<Option<Released>, FrontierError> {
        self.ensure_window(key)?;
        let Some(q) = self.queues.get(key) else {
            return Ok(None);
        };
        let Some((sort, head)) = q.window.iter().next() else {
            return Ok(None);
        };
        let priority = sort_priority(sort);
        if self.config.robots_gate {
            // Borrowed: a release whose rules are known allocates nothing here.
            let origin = origin_str(&head.url);
            let fetch = match self.robots.get(origin.as_ref()) {
                // Its robots.txt is being fetched; `complete` reschedules.
                Some(RobotsGate::Fetching { .. }) => return Ok(None),
                Some(RobotsGate::Known { until }) => *until <= now,
                Some(RobotsGate::Unavailable { until, .. }) if now < *until => {
                    let until = *until;
                    self.schedule(key, until);
                    return Ok(None);
                }
                Some(RobotsGate::Unavailable { .. }) | None => true,
            };
            if fetch {
                let origin = origin.into_owned();
                self.robots
                    .insert(origin.clone(), RobotsGate::Fetching { known_until: None });
                self.seq += 1;
                let lease = self.seq;
                let started = self.politeness.start(key, now);
                self.flight.insert(
                    lease,
                    Flight::Robots {
                        key: key.into(),
                        origin: origin.clone(),
                        started,
                    },
                );
                self.save_host(key);
                self.end_op()?;
                return Ok(Some(Released {
                    url: format!("{origin}/robots.txt"),
                    key: key.to_owned(),
                    priority,
                    kind: Kind::Robots,
                    tag: 0,
                    lease,
                }));
            }
        }
        let Some((sort, queued)) = self.pop_head(key)? else {
            return Ok(None);
        };
        let lease = sort_seq(&sort);
        let started = self.politeness.start(key, now);
        if let Some(store) = self.store.as_mut() {
            store.put_flight(lease, key, &sort, queued.tag, &queued.url);
        }
        self.save_host(key);
        self.end_op()?;
        let released = Released {
            url: queued.url.to_string(),
            key: key.to_owned(),
            priority,
            kind: Kind::Page,
            tag: queued.tag,
            lease,
        };
        self.flight.insert(
            lease,
            Flight::Page {
                key: key.into(),
                sort,
                queued,
                started,
            },
        );
        Ok(Some(released))
    }

    /// After a release or completion: when may this key go again?
    fn reschedule(&mut self, key: &str, now: UnixMillis) -> Result<(), FrontierError> {
        if self.queues.get(key).is_none_or(|q| q.count == 0) {
            return Ok(());
        }
        match self.politeness.check(key, now) {
            Ok(()) => self.schedule(key, now),
            Err(Wait::Until { at, .. }) => {
                let limited = self
                    .politeness
                    .get(key)
                    .is_some_and(|h| h.in_flight >= self.politeness.config.max_in_flight);
                if !limited {
                    self.schedule(key, at);
                }
            }
            Err(Wait::Skipped { reason }) => self.drain(key, &reason)?,
        }
        Ok(())
    }
}

/// The frontier calls as plain synchronous methods: what the [`Frontier`]
/// implementation runs, for callers that hold a `LocalFrontier` directly.
impl LocalFrontier {
    /// Why a URL waits (see [`Frontier::why_not_now`]).
    pub fn why_not_now(&self, url: &str, now: UnixMillis) -> Option<String> {
        let key = match self.keyer.key(url) {
            Ok(k) => k,
            Err(e) => return Some(e.to_string()),
        };
        if self.config.robots_gate {
            let origin = origin_str(url);
            match self.robots.get(origin.as_ref()) {
                Some(RobotsGate::Fetching { .. }) => {
                    return Some(format!("{origin}/robots.txt is being fetched"));
                }
                Some(RobotsGate::Unavailable { until, reason }) if now < *until => {
                    return Some(format!(
                        "{origin}/robots.txt: {reason}; fetched again at +{} s",
                        until.millis_since(now).div_ceil(1000)
                    ));
                }
                _ => {}
            }
        }
        self.politeness.why_not_now(&key, now)
    }

    /// On disk, hands every operation so far to the operating system in one
    /// write: they then survive the process being killed (not a power
    /// loss: that is [`sync`](Self::sync)). With
    /// [`commit_every`](FrontierConfig::commit_every) 1 there is never
    /// anything left to hand on; above 1, a caller that makes many
    /// operations in a row (the crawler's loop) commits them together.
    pub fn commit(&mut self) -> Result<(), FrontierError> {
        match self.store.as_mut() {
            Some(s) => s.commit(),
            None => Ok(()),
        }
    }

    /// Counts (exact here).
    pub fn stats(&self) -> Stats {
        Stats {
            queued: self.total,
            in_flight: self.flight.len() as u64,
            keys: self.queues.len() as u64,
            skipped: self.skipped_total,
            reissued: self.reissued,
        }
    }

    /// URLs dropped with their host, since the last call.
    pub fn take_skipped(&mut self) -> Vec<Skipped> {
        std::mem::take(&mut self.skipped)
    }

    /// Ends a release, one way or another: the one place a lease leaves
    /// flight, so every ending updates pacing, the robots.txt gate, the
    /// queue and the store alike, in one write batch.
    fn settle(
        &mut self,
        released: &Released,
        now: UnixMillis,
        how: Settle<'_>,
    ) -> Result<(), FrontierError> {
        let Some(fl) = self.flight.remove(&released.lease) else {
            return Err(FrontierError::UnknownLease {
                lease: released.lease,
                url: released.url.clone(),
            });
        };
        match how {
            Settle::Done(outcome) | Settle::Retry(outcome, _) => {
                self.politeness.finish(fl.key(), now, outcome)
            }
            Settle::Cancel | Settle::Drop => self.politeness.unstart(fl.key(), fl.started()),
        }
        match &fl {
            Flight::Robots { origin, .. } => self.settle_robots(origin),
            Flight::Page {
                key, sort, queued, ..
            } => {
                let back = match how {
                    Settle::Retry(_, tag) => Some(tag),
                    Settle::Cancel => Some(queued.tag),
                    Settle::Done(_) | Settle::Drop => None,
                };
                if let Some(tag) = back {
                    self.insert(key, *sort, tag, &queued.url);
                }
                if let Some(store) = self.store.as_mut() {
                    store.del_flight(released.lease);
                }
            }
        }
        self.save_host(fl.key());
        self.end_op()?;
        self.reschedule(fl.key(), now)
    }

    /// Takes a host's slot for a request this frontier did not release
    /// (see [`Frontier::begin_request`]).
    pub fn begin_request(&mut self, url: &str, now: UnixMillis) -> Begin {
        let key = match self.keyer.key(url) {
            Ok(k) => k,
            Err(e) => {
                return Begin::Refused {
                    reason: e.to_string(),
                }
            }
        };
        match self.politeness.check(&key, now) {
            Ok(()) => {
                self.politeness.start(&key, now);
                Begin::Started
            }
            Err(Wait::Until { at, .. }) => Begin::Wait { until: at },
            Err(Wait::Skipped { reason }) => Begin::Refused { reason },
        }
    }

    /// The `n` keys holding the most queued URLs, most first (ties by key),
    /// each with its count and the URL at its head (see
    /// [`Frontier::busiest`]).
    pub fn busiest(&self, n: usize) -> Vec<KeyLoad> {
        let mut all: Vec<(&Box<str>, &KeyQueue)> =
            self.queues.iter().filter(|(_, q)| q.count > 0).collect();
        all.sort_by(|a, b| b.1.count.cmp(&a.1.count).then_with(|| a.0.cmp(b.0)));
        all.into_iter()
            .take(n)
            .map(|(k, q)| KeyLoad {
                key: k.to_string(),
                queued: q.count,
                head: q.window.values().next().map(|e| e.url.to_string()),
            })
            .collect()
    }

    /// Calls `f` with the frontier (to ask [`why_not_now`](Self::why_not_now))
    /// and every queued URL with its key, in key order then queue order,
    /// without holding them all in memory (on disk this reads the whole
    /// store; meant for reports at the end of a crawl).
    pub fn for_each_queued(
        &mut self,
        mut f: impl FnMut(&LocalFrontier, &str, &str) -> Result<(), FrontierError>,
    ) -> Result<(), FrontierError> {
        if let Some(store) = self.store.as_mut() {
            store.commit()?;
        }
        let this = &*self;
        match this.store.as_ref() {
            Some(store) => store.scan_queue_raw(|key, _, _, url| f(this, key, url)),
            None => {
                let mut keys: Vec<&Box<str>> = this.queues.keys().collect();
                keys.sort();
                for k in keys {
                    for q in this.queues[k].window.values() {
                        f(this, k, &q.url)?;
                    }
                }
                Ok(())
            }
        }
    }

    fn settle_robots(&mut self, origin: &str) {
        if let Some(gate) = self.unavailable_after_fetch.remove(origin) {
            self.robots.insert(origin.to_owned(), gate);
            return;
        }
        if let Some(gate) = self.robots.get(origin).cloned() {
            match gate.settle() {
                Some(g) => self.robots.insert(origin.to_owned(), g),
                None => self.robots.remove(origin),
            };
        }
    }
}

impl Frontier for LocalFrontier {
    /// Offers a URL with a tag the frontier keeps and hands back in
    /// [`Released::tag`] (see [`Frontier::enqueue_tagged`]).
    async fn enqueue_tagged(
        &mut self,
        url: &str,
        priority: u8,
        tag: u32,
        now: UnixMillis,
    ) -> Result<Admission, FrontierError> {
        let (parsed, key) = match super::admit(&self.keyer, url) {
            Ok(k) => k,
            Err(answer) => return Ok(answer),
        };
        if let Err(Wait::Skipped { reason }) = self.politeness.check(&key, now) {
            return Ok(Admission::Skipped { reason });
        }
        let fp = fingerprint(&parsed);
        // A URL queued once is a duplicate whatever the bounds say now (and
        // is not handed back to be offered again); the bounds come before
        // it is remembered, so a URL pushed back is not remembered as seen.
        if self.seen_contains(fp)? {
            return Ok(Admission::Duplicate);
        }
        if self.total >= self.config.max_total {
            return Ok(Admission::Backpressure {
                reason: format!(
                    "the frontier holds {} URLs, its bound",
                    self.config.max_total
                ),
            });
        }
        let q = self.queues.get(key.as_str());
        if q.is_some_and(|q| q.count >= self.config.max_per_key) {
            return Ok(Admission::Backpressure {
                reason: format!(
                    "{key} has {} URLs waiting, its bound",
                    self.config.max_per_key
                ),
            });
        }
        if q.is_none() && self.queues.len() as u64 >= self.config.max_keys {
            return Ok(Admission::Backpressure {
                reason: format!(
                    "{} hosts have URLs waiting, the bound",
                    self.config.max_keys
                ),
            });
        }
        self.seen_add(fp);
        self.seq += 1;
        let sort = sort_key(priority, self.seq);
        let normal = &parsed[..url::Position::AfterQuery];
        self.insert(&key, sort, tag, normal);
        self.end_op()?;
        self.schedule(&key, now);
        Ok(Admission::Queued)
    }

    /// The next fetch, or how long to wait (see [`Frontier::next`]).
    async fn next(&mut self, now: UnixMillis) -> Result<Next, FrontierError> {
        // Keys whose time has come move to the ready heap.
        while let Some(Reverse((at, key))) = self.time.peek().cloned() {
            if at > now {
                break;
            }
            self.time.pop();
            let Some(q) = self.queues.get_mut(&key) else {
                continue;
            };
            if q.scheduled != Some(at) {
                continue; // stale
            }
            q.scheduled = None;
            if q.count == 0 {
                continue;
            }
            let p = q.head_priority();
            q.ready = Some((p, at));
            self.ready.push((p, Reverse(at), key));
        }
        while let Some((p, Reverse(at), key)) = self.ready.pop() {
            let Some(q) = self.queues.get_mut(&key) else {
                continue;
            };
            if q.ready != Some((p, at)) {
                continue; // stale
            }
            q.ready = None;
            if q.count == 0 {
                continue;
            }
            match self.politeness.check(&key, now) {
                Ok(()) => {
                    if let Some(r) = self.release(&key, now)? {
                        if self.queues.get(&key).is_some_and(|q| q.count == 0) {
                            // Keys without URLs take no memory here (the
                            // politeness state stays with the controller).
                            self.queues.remove(&key);
                        } else {
                            self.reschedule(&key, now)?;
                        }
                        return Ok(Next::Fetch(r));
                    }
                }
                Err(Wait::Until { .. }) => self.reschedule(&key, now)?,
                Err(Wait::Skipped { reason }) => self.drain(&key, &reason)?,
            }
        }
        // Drop stale heads so the wait time is real.
        while let Some(Reverse((at, key))) = self.time.peek() {
            if self
                .queues
                .get(key)
                .is_some_and(|q| q.scheduled == Some(*at))
            {
                return Ok(Next::Wait { until: *at });
            }
            self.time.pop();
        }
        Ok(if self.total == 0 {
            Next::Empty
        } else {
            Next::Busy
        })
    }

    /// Reports a fetch that will be tried again: the host's pacing adapts
    /// to `outcome` as in [`complete`](Self::complete), and the page goes
    /// back to the head of its queue with `tag` (see [`Frontier::requeue`]).
    async fn requeue(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        tag: u32,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        released.require_page()?;
        self.settle(released, now, Settle::Retry(outcome, tag))
    }

    /// Gives back a release that made no request and will not be made
    /// (see [`Frontier::discard`]).
    async fn discard(&mut self, released: &Released, now: UnixMillis) -> Result<(), FrontierError> {
        self.settle(released, now, Settle::Drop)
    }

    /// An origin's robots.txt could not be had (see
    /// [`Frontier::robots_unavailable`]).
    async fn robots_unavailable(
        &mut self,
        origin: &str,
        until: UnixMillis,
        reason: &str,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let origin = match url::Url::parse(origin) {
            Ok(u) => super::origin_of(&u),
            Err(_) => origin.to_owned(),
        };
        let key = self.keyer.key(&origin).ok();
        let gate = RobotsGate::Unavailable {
            until,
            reason: reason.into(),
        };
        // While its fetch is in flight the gate stays `Fetching`; the
        // outcome takes over when the fetch settles.
        match self.robots.get_mut(&origin) {
            Some(RobotsGate::Fetching { .. }) => {
                self.unavailable_after_fetch.insert(origin, gate);
            }
            _ => {
                self.robots.insert(origin, gate);
            }
        }
        match key {
            Some(key) => self.reschedule(&key, now),
            None => Ok(()),
        }
    }

    /// Reports how a release ended (see [`Frontier::complete`]).
    async fn complete(
        &mut self,
        released: &Released,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        self.settle(released, now, Settle::Done(outcome))
    }

    /// Gives back a release that made no request (see [`Frontier::cancel`]).
    async fn cancel(&mut self, released: &Released, now: UnixMillis) -> Result<(), FrontierError> {
        self.settle(released, now, Settle::Cancel)
    }

    /// An origin's robots.txt is known (see [`Frontier::robots_known`]).
    async fn robots_known(
        &mut self,
        origin: &str,
        pacing: RobotsPacing,
        valid_until: UnixMillis,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let origin = match url::Url::parse(origin) {
            Ok(u) => super::origin_of(&u),
            Err(_) => origin.to_owned(),
        };
        let key = self.keyer.key(&origin).ok();
        if let Some(store) = self.store.as_mut() {
            store.put_robots(&origin, valid_until);
        }
        let known = match self.robots.get(&origin) {
            Some(RobotsGate::Fetching { .. }) => RobotsGate::Fetching {
                known_until: Some(valid_until),
            },
            _ => RobotsGate::Known { until: valid_until },
        };
        self.robots.insert(origin, known);
        if let Some(key) = &key {
            self.politeness.set_robots(key, pacing);
            self.save_host(key);
        }
        self.end_op()?;
        match key {
            Some(key) => self.reschedule(&key, now),
            None => Ok(()),
        }
    }

    async fn begin_request(&mut self, url: &str, now: UnixMillis) -> Result<Begin, FrontierError> {
        Ok(LocalFrontier::begin_request(self, url, now))
    }

    /// Ends a request [`begin_request`](Self::begin_request) started (see
    /// [`Frontier::end_request`]).
    async fn end_request(
        &mut self,
        url: &str,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let Ok(key) = self.keyer.key(url) else {
            return Ok(());
        };
        self.politeness.finish(&key, now, outcome);
        self.save_host(&key);
        self.end_op()?;
        self.reschedule(&key, now)
    }

    async fn busiest(&mut self, n: usize) -> Result<Vec<KeyLoad>, FrontierError> {
        Ok(LocalFrontier::busiest(self, n))
    }

    async fn why_not_now(
        &mut self,
        url: &str,
        now: UnixMillis,
    ) -> Result<Option<String>, FrontierError> {
        Ok(LocalFrontier::why_not_now(self, url, now))
    }

    /// Makes everything durable (see [`Frontier::sync`]), and writes the
    /// summary that lets the next [`open`](Self::open) skip reading every
    /// queued URL (a failure to write it only costs that reopen time).
    async fn sync(&mut self) -> Result<(), FrontierError> {
        match self.store.as_mut() {
            Some(s) => s.sync()?,
            None => return Ok(()),
        }
        self.write_summary();
        Ok(())
    }

    async fn stats(&mut self) -> Result<Stats, FrontierError> {
        Ok(LocalFrontier::stats(self))
    }

    async fn take_skipped(&mut self) -> Result<Vec<Skipped>, FrontierError> {
        Ok(LocalFrontier::take_skipped(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::Config;
    use crate::frontier::block_on;

    const T0: UnixMillis = UnixMillis::EPOCH;

    fn ok() -> Outcome {
        Outcome::Status {
            status: 200,
            latency: 10,
            retry_after: None,
        }
    }

    fn no_gate() -> FrontierConfig {
        FrontierConfig {
            robots_gate: false,
            ..FrontierConfig::default()
        }
    }

    #[test]
    fn a_request_in_flight_at_a_crash_holds_its_host_until_it_cannot_be_running() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = Config {
            min_delay: 1_000,
            in_flight_bound: 30_000,
            ..Config::default()
        };
        let on_disk = FrontierConfig {
            robots_gate: false,
            ..FrontierConfig::on_disk()
        };
        let t = T0.add_millis(100_000);
        let open = || {
            LocalFrontier::open(dir.path(), Politeness::new(config.clone()), on_disk.clone())
                .expect("open")
        };
        let mut f = open();
        for url in ["https://slow.test/a", "https://idle.test/a"] {
            block_on(f.enqueue(url, 1, t)).expect("enqueue");
        }
        // slow.test's page goes out at t; idle.test's is left queued.
        let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
            panic!("a release")
        };
        let (slow, idle) = if r.url.contains("slow") {
            (r.url.clone(), "https://idle.test/a")
        } else {
            (r.url.clone(), "https://slow.test/a")
        };
        f.commit().expect("commit");
        // The process ends 2 s later, the request still out (what a kill
        // leaves on disk: the flight and the host's state), and restarts.
        drop(f);
        let mut g = open();
        let later = t.add_millis(2_000);
        // The other host goes at once; the one with a request in flight
        // waits for that request's start plus the bound, then its delay.
        let Next::Fetch(first) = block_on(g.next(later)).expect("next") else {
            panic!("the other host is not held up")
        };
        assert_eq!(first.url, idle);
        block_on(g.complete(&first, &ok(), later)).expect("complete");
        assert_eq!(
            block_on(g.next(later)).expect("next"),
            Next::Wait {
                until: t.add_millis(30_000 + 1_000)
            }
        );
        let Next::Fetch(again) = block_on(g.next(t.add_millis(31_000))).expect("next") else {
            panic!("released after the bound")
        };
        assert_eq!(again.url, slow, "the page in flight is fetched again");
    }

    #[test]
    fn a_request_made_elsewhere_takes_the_host_slot_and_delay() {
        let mut f = LocalFrontier::in_memory(
            Politeness::new(Config {
                min_delay: 1_000,
                ..Config::default()
            }),
            no_gate(),
        );
        let t = T0.add_millis(10_000);
        block_on(f.enqueue("https://b.test/page", 1, t)).expect("enqueue");
        // A robots.txt fetch of a.test is redirected to b.test.
        assert_eq!(
            f.begin_request("https://b.test/robots.txt", t),
            Begin::Started
        );
        assert_eq!(
            block_on(f.next(t)).expect("next"),
            Next::Busy,
            "b.test's slot is taken while the redirected request is out"
        );
        assert!(matches!(
            f.begin_request("https://b.test/other", t),
            Begin::Wait { .. }
        ));
        let answered = Outcome::Status {
            status: 200,
            latency: 50,
            retry_after: None,
        };
        block_on(f.end_request("https://b.test/robots.txt", &answered, t.add_millis(50)))
            .expect("end");
        assert_eq!(
            block_on(f.next(t.add_millis(50))).expect("next"),
            Next::Wait {
                until: t.add_millis(1_000)
            },
            "b.test's next request waits its delay from the redirected one"
        );
        assert!(matches!(
            block_on(f.next(t.add_millis(1_000))).expect("next"),
            Next::Fetch(_)
        ));
        assert!(matches!(
            f.begin_request("not a url", t),
            Begin::Refused { .. }
        ));
    }

    #[test]
    fn busiest_lists_keys_by_queued_urls() {
        let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
        for (host, n) in [("a", 1), ("b", 3), ("c", 2)] {
            for i in 0..n {
                block_on(f.enqueue(&format!("https://{host}.test/{i}"), 1, T0)).expect("enqueue");
            }
        }
        let load = f.busiest(2);
        let got: Vec<(&str, u64)> = load.iter().map(|l| (l.key.as_str(), l.queued)).collect();
        assert_eq!(got, [("b.test", 3), ("c.test", 2)]);
        assert_eq!(load[0].head.as_deref(), Some("https://b.test/0"));
        let mut all = Vec::new();
        f.for_each_queued(|_, k, u| {
            all.push(format!("{k} {u}"));
            Ok(())
        })
        .expect("scan");
        assert_eq!(all.len(), 6);
        assert_eq!(all[0], "a.test https://a.test/0");
    }

    /// Drives the frontier: each request takes 10 ms.
    fn drain(f: &mut LocalFrontier) -> Vec<(u64, String)> {
        let (mut order, mut now) = (Vec::new(), UnixMillis::EPOCH);
        loop {
            match block_on(f.next(now)).expect("next") {
                Next::Fetch(r) => {
                    order.push((now.as_millis(), r.url.clone()));
                    if r.kind == Kind::Robots {
                        let origin = r.url.trim_end_matches("/robots.txt").to_owned();
                        block_on(f.robots_known(
                            &origin,
                            RobotsPacing::default(),
                            UnixMillis(86_400_000),
                            now.add_millis(10),
                        ))
                        .expect("robots");
                    }
                    block_on(f.complete(&r, &ok(), now.add_millis(10))).expect("complete");
                }
                Next::Wait { until } => now = until,
                Next::Empty => return order,
                Next::Busy => panic!("busy with nothing in flight"),
            }
        }
    }

    #[test]
    fn priorities_within_a_host_and_hosts_interleave() {
        let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
        let q = |f: &mut LocalFrontier, u: &str, p| block_on(f.enqueue(u, p, T0)).expect("enqueue");
        assert_eq!(q(&mut f, "https://a.test/low", 1), Admission::Queued);
        assert_eq!(q(&mut f, "https://a.test/high", 9), Admission::Queued);
        assert_eq!(q(&mut f, "https://b.test/x", 1), Admission::Queued);
        assert_eq!(
            q(&mut f, "https://a.test/high#frag", 9),
            Admission::Duplicate
        );
        let order = drain(&mut f);
        let want: Vec<(u64, String)> = vec![
            (0, "https://a.test/high".into()),
            (0, "https://b.test/x".into()),
            (1_000, "https://a.test/low".into()),
        ];
        assert_eq!(order, want);
    }

    #[test]
    fn ready_hosts_go_in_priority_order() {
        let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
        for (u, p) in [
            ("https://a.test/", 1),
            ("https://b.test/", 5),
            ("https://c.test/", 3),
        ] {
            block_on(f.enqueue(u, p, T0)).expect("enqueue");
        }
        let order: Vec<String> = drain(&mut f).into_iter().map(|(_, u)| u).collect();
        assert_eq!(
            order,
            ["https://b.test/", "https://c.test/", "https://a.test/"]
        );
    }

    #[test]
    fn robots_txt_is_fetched_first_and_counts_as_a_request() {
        let mut f = LocalFrontier::in_memory(
            Politeness::new(Config::default()),
            FrontierConfig::default(),
        );
        block_on(f.enqueue("https://a.test/page", 0, T0)).expect("enqueue");
        block_on(f.enqueue("http://a.test/other", 0, T0)).expect("enqueue");
        let order = drain(&mut f);
        let want: Vec<(u64, String)> = vec![
            (0, "https://a.test/robots.txt".into()),
            (1_000, "https://a.test/page".into()),
            (2_000, "http://a.test/robots.txt".into()),
            (3_000, "http://a.test/other".into()),
        ];
        assert_eq!(order, want);
    }

    #[test]
    fn cancel_hands_the_slot_back() {
        let mut f = LocalFrontier::in_memory(
            Politeness::new(Config::default()),
            FrontierConfig::default(),
        );
        block_on(f.enqueue("https://a.test/page", 0, T0)).expect("enqueue");
        let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
            panic!("robots first")
        };
        assert_eq!(r.kind, Kind::Robots);
        // The caller's cache knew the rules: no request was made.
        block_on(f.robots_known(
            "https://a.test",
            RobotsPacing::default(),
            UnixMillis(60_000),
            T0,
        ))
        .expect("known");
        block_on(f.cancel(&r, T0)).expect("cancel");
        let Next::Fetch(p) = block_on(f.next(T0)).expect("next") else {
            panic!("page now")
        };
        assert_eq!(p.url, "https://a.test/page");
        // A page cancelled goes back to the head of its queue.
        block_on(f.cancel(&p, T0)).expect("cancel");
        assert_eq!(f.stats().queued, 1);
        assert!(matches!(block_on(f.next(T0)).expect("next"), Next::Fetch(r) if r.url == p.url));
        assert!(matches!(
            block_on(f.complete(&r, &ok(), UnixMillis(5))),
            Err(FrontierError::UnknownLease { .. })
        ));
    }

    #[test]
    fn backpressure_and_skips_are_reported() {
        let mut f = LocalFrontier::in_memory(
            Politeness::new(Config::default()),
            FrontierConfig {
                max_per_key: 2,
                max_total: 3,
                ..no_gate()
            },
        );
        let mut q = |u: &str| block_on(f.enqueue(u, 0, T0)).expect("enqueue");
        assert_eq!(q("https://a.test/1"), Admission::Queued);
        assert_eq!(q("https://a.test/2"), Admission::Queued);
        assert!(
            matches!(q("https://a.test/3"), Admission::Backpressure { reason } if reason.contains("a.test has 2 URLs waiting"))
        );
        assert_eq!(q("https://b.test/1"), Admission::Queued);
        assert!(
            matches!(q("https://c.test/1"), Admission::Backpressure { reason } if reason.contains("holds 3 URLs"))
        );
        // A URL queued once is a duplicate, whatever the bounds say now.
        assert_eq!(q("https://a.test/1"), Admission::Duplicate);
        assert_eq!(q("https://b.test/1"), Admission::Duplicate);
        // Pushed back, not remembered: offered again later, it is queued.
        assert!(
            matches!(q("not a url"), Admission::Skipped { reason } if reason.contains("not an absolute URL"))
        );
        f.politeness.set_robots(
            "b.test",
            RobotsPacing {
                crawl_delay: Some(3600.0),
                request_rate: None,
            },
        );
        assert!(matches!(
            block_on(f.enqueue("https://b.test/2", 0, T0)).expect("enqueue"),
            Admission::Skipped { .. }
        ));
        // The queued b.test URL is reported when its turn comes.
        let _ = drain(&mut f);
        let skipped = f.take_skipped();
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].url, "https://b.test/1");
        assert!(skipped[0].reason.contains("3600 s"));
        assert_eq!(
            block_on(f.enqueue("https://c.test/1", 0, T0)).expect("enqueue"),
            Admission::Queued
        );
    }

    #[test]
    fn shared_servers_share_one_budget() {
        use crate::key::KeyMode;
        let mut f = LocalFrontier::in_memory(
            Politeness::new(Config::default()),
            FrontierConfig {
                key_mode: KeyMode::Ip,
                ..no_gate()
            },
        );
        assert_eq!(
            block_on(f.enqueue("https://a.test/", 0, T0)).expect("enqueue"),
            Admission::Unresolved {
                host: "a.test".into()
            }
        );
        let ip = "192.0.2.1".parse().expect("ip");
        f.keyer.set_address("a.test", ip);
        f.keyer.set_address("b.test", ip);
        for u in ["https://a.test/", "https://b.test/"] {
            assert_eq!(
                block_on(f.enqueue(u, 0, T0)).expect("enqueue"),
                Admission::Queued
            );
        }
        let times: Vec<u64> = drain(&mut f).into_iter().map(|(t, _)| t).collect();
        assert_eq!(times, [0, 1_000], "one server, one request per second");

        let mut f = LocalFrontier::in_memory(
            Politeness::new(Config::default()),
            FrontierConfig {
                key_mode: KeyMode::RegisteredDomain,
                ..no_gate()
            },
        );
        for u in [
            "https://a.example.com/",
            "https://b.example.com/",
            "https://example.org/",
        ] {
            assert_eq!(
                block_on(f.enqueue(u, 0, T0)).expect("enqueue"),
                Admission::Queued
            );
        }
        let order = drain(&mut f);
        assert_eq!(
            order.iter().filter(|(t, _)| *t == 0).count(),
            2,
            "{order:?}"
        );
        assert_eq!(order.last().map(|(t, _)| *t), Some(1_000), "{order:?}");
    }

    #[test]
    fn key_bound_counts_only_keys_with_urls() {
        let mut f = LocalFrontier::in_memory(
            Politeness::new(Config::default()),
            FrontierConfig {
                max_keys: 1,
                ..no_gate()
            },
        );
        assert_eq!(
            block_on(f.enqueue("https://a.test/", 0, T0)).expect("enqueue"),
            Admission::Queued
        );
        assert!(matches!(
            block_on(f.enqueue("https://b.test/", 0, T0)).expect("enqueue"),
            Admission::Backpressure { reason } if reason.contains("1 hosts have URLs waiting")
        ));
        drain(&mut f);
        assert_eq!(f.stats().keys, 0);
        assert_eq!(
            block_on(f.enqueue("https://b.test/", 0, T0)).expect("enqueue"),
            Admission::Queued
        );
    }

    #[test]
    fn a_store_keeps_its_key_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let open = |mode| {
            LocalFrontier::open(
                dir.path(),
                Politeness::new(Config::default()),
                FrontierConfig {
                    key_mode: mode,
                    ..FrontierConfig::on_disk()
                },
            )
        };
        drop(open(crate::key::KeyMode::Host).expect("create"));
        let err = open(crate::key::KeyMode::RegisteredDomain)
            .err()
            .expect("refused");
        assert!(
            err.to_string()
                .contains("it keys URLs by host, not registered-domain"),
            "{err}"
        );
        assert!(open(crate::key::KeyMode::Host).is_ok());
    }

    #[test]
    fn tags_round_trip_through_disk_and_requeue() {
        let dir = tempfile::tempdir().expect("tempdir");
        let open = || {
            LocalFrontier::open(
                dir.path(),
                Politeness::new(Config::default()),
                FrontierConfig {
                    window: 1,
                    ..no_gate()
                },
            )
            .expect("open")
        };
        let mut f = open();
        for (i, u) in ["https://a.test/1", "https://a.test/2"].iter().enumerate() {
            block_on(f.enqueue_tagged(u, 0, 40 + i as u32, T0)).expect("enqueue");
        }
        let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
            panic!("a page")
        };
        assert_eq!((r.url.as_str(), r.tag), ("https://a.test/1", 40));
        // A 503: the page goes back to the head with a new tag, and the
        // host backs off (the delay doubles from 1 s).
        let failed = Outcome::Status {
            status: 503,
            latency: 10,
            retry_after: None,
        };
        block_on(f.requeue(&r, &failed, 41, T0.add_millis(10))).expect("requeue");
        assert_eq!(f.stats().queued, 2);
        assert_eq!(f.politeness.get("a.test").map(|h| h.delay), Some(2_000));
        drop(f);
        let mut f = open();
        assert_eq!(
            block_on(f.next(T0.add_millis(10))).expect("next"),
            Next::Wait {
                until: T0.add_millis(2_010)
            }
        );
        let Next::Fetch(r) = block_on(f.next(T0.add_millis(2_010))).expect("next") else {
            panic!("the retry")
        };
        assert_eq!((r.url.as_str(), r.tag), ("https://a.test/1", 41));
        assert!(matches!(
            block_on(f.requeue(&r, &failed, 0, T0)).and(block_on(f.requeue(&r, &failed, 0, T0))),
            Err(FrontierError::UnknownLease { .. })
        ));
    }

    #[test]
    fn discard_drops_the_page_and_hands_the_slot_back() {
        let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
        block_on(f.enqueue("https://a.test/1", 0, T0)).expect("enqueue");
        block_on(f.enqueue("https://a.test/2", 0, T0)).expect("enqueue");
        let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
            panic!("a page")
        };
        block_on(f.discard(&r, T0)).expect("discard");
        // No request was made: the next page may go at once.
        let Next::Fetch(n) = block_on(f.next(T0)).expect("next") else {
            panic!("the next page at once")
        };
        assert_eq!(n.url, "https://a.test/2");
        assert_eq!(f.stats().queued, 0);
        assert_eq!(
            block_on(f.enqueue("https://a.test/1", 0, T0)).expect("enqueue"),
            Admission::Duplicate,
            "a discarded URL stays seen"
        );
    }

    #[test]
    fn an_unavailable_robots_txt_holds_its_pages_then_is_fetched_again() {
        let mut f = LocalFrontier::in_memory(
            Politeness::new(Config::default()),
            FrontierConfig::default(),
        );
        block_on(f.enqueue("https://a.test/page", 0, T0)).expect("enqueue");
        let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
            panic!("robots first")
        };
        assert_eq!(r.kind, Kind::Robots);
        let hold = T0.add_millis(3_600_000);
        block_on(f.robots_unavailable(
            "https://a.test",
            hold,
            "503 since 10:00, complete disallow",
            T0,
        ))
        .expect("unavailable");
        block_on(f.complete(
            &r,
            &Outcome::Status {
                status: 503,
                latency: 10,
                retry_after: None,
            },
            T0.add_millis(10),
        ))
        .expect("complete");
        // The page waits for the hold, not just the host's delay.
        assert_eq!(
            block_on(f.next(T0.add_millis(60_000))).expect("next"),
            Next::Wait { until: hold }
        );
        let why = f
            .why_not_now("https://a.test/page", T0.add_millis(60_000))
            .expect("held");
        assert!(
            why.contains("503 since 10:00") && why.contains("+3540 s"),
            "{why}"
        );
        let Next::Fetch(again) = block_on(f.next(hold)).expect("next") else {
            panic!("robots.txt again")
        };
        assert_eq!(
            (again.kind, again.url.as_str()),
            (Kind::Robots, "https://a.test/robots.txt")
        );
        assert!(matches!(
            block_on(f.requeue(&again, &ok(), 0, hold)),
            Err(FrontierError::NotAPage { .. })
        ));
    }

    #[test]
    fn origin_without_reparsing() {
        assert_eq!(origin_str("https://a.test/x?y"), "https://a.test");
        assert_eq!(origin_str("http://a.test:8080"), "http://a.test:8080");
        assert_eq!(origin_str("https://u:p@a.test/x"), "https://a.test");
    }
}
