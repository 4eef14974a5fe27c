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
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::Path;

use super::summary;
use super::{
    Admission, Begin, Frontier, FrontierConfig, FrontierError, Hold, HostCensus, KeyLoad, Kind,
    Next, Offer, Released, Settle, Skipped, Stats,
};
use crate::controller::{
    HostState, Outcome, Pacing, Politeness, RobotsPacing, Started, UnixMillis, Wait,
};
use crate::key::{KeyError, Keyer};
use crate::store::{sort_key, sort_priority, sort_seq, Entry, Sort, Store};

mod calls;
mod host_bytes;
mod open;
mod recovery;
mod rest;
mod seen_filter;
#[cfg(test)]
mod tests;
mod trait_impl;
mod window;

/// A queued URL with the caller's tag.
#[derive(Debug, Clone)]
struct Queued {
    tag: u32,
    url: Box<str>,
}

#[derive(Default)]
struct KeyQueue {
    /// The key's first URLs (all of them in memory mode).
    window: window::Window,
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
    /// The entry this key sits in the parked heap with (priority, order),
    /// while it waits for an open slot (see [`open`]).
    parked: Option<(u8, u64)>,
    /// When the politeness state last written for this key holds it to
    /// once restored (see [`Politeness::restored_next`]).
    stored_next: UnixMillis,
    /// The state in memory has changed since, but not its pacing, and it
    /// may start no later than `stored_next` (see
    /// [`LocalFrontier::save_if_paced`]): written before the key's next
    /// release, its drain, at every sync and at a clean close.
    unsaved: bool,
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

    /// Where the queue's head sorts. A queue restored from a summary has
    /// its head on disk only, and `rest_low` is then exactly that head.
    fn head(&self) -> Option<&Sort> {
        self.window.first_key().or(self.rest_low.as_ref())
    }

    fn head_priority(&self) -> u8 {
        self.head().map(sort_priority).unwrap_or(0)
    }
}

/// Gives back most of a heap's room once it holds under a quarter of it:
/// a crawl seeded with 100,000 hosts passes them all through its heaps at
/// the start (some 7 MiB of room), and would otherwise keep that room for
/// the whole crawl. Room for [`HEAP_KEPT`] entries always stays, so a heap
/// that fills and drains every turn is not reallocated every turn.
fn trim<T: Ord>(heap: &mut BinaryHeap<T>) {
    if heap.capacity() > 4 * HEAP_KEPT && heap.len() < heap.capacity() / 4 {
        heap.shrink_to((heap.len() * 2).max(HEAP_KEPT));
    }
}

/// The room a heap keeps however little it holds (128 KiB at most).
const HEAP_KEPT: usize = 4096;

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
    Disk(Option<seen_filter::SeenFilter>),
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
    /// (hashbrown's, for `entry_ref`: a URL queued for a known key copies
    /// no name; its hasher is [`crate::Hasher`].) A
    /// queue sits behind a pointer: the table keeps the room it grew to
    /// for every host seeded at once, 24 bytes a slot rather than 136.
    queues: hashbrown::HashMap<Box<str>, Box<KeyQueue>, crate::Hasher>,
    /// Keys by the time they may next be tried (stale entries skipped).
    time: BinaryHeap<Reverse<(UnixMillis, Box<str>)>>,
    /// Keys that may be tried now, best head priority first, then earliest.
    ready: BinaryHeap<(u8, Reverse<UnixMillis>, Box<str>)>,
    flight: HashMap<u64, Flight, crate::Hasher>,
    /// Keys released and not yet done (see [`open`]).
    open: HashSet<Box<str>, crate::Hasher>,
    /// Keys waiting for an open slot, best head priority first, then the
    /// earliest parked (stale entries skipped).
    parked: BinaryHeap<(u8, Reverse<u64>, Box<str>)>,
    park_seq: u64,
    robots: HashMap<String, RobotsGate, crate::Hasher>,
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
    /// The marks of keys whose state is only in the store (see [`rest`]).
    resting: HashSet<u64>,
    /// The marks of origins whose robots.txt gate is only in the store.
    resting_robots: HashSet<u64>,
    /// Keys closed since the last commit, with the origin each last used,
    /// to rest after it.
    to_rest: Vec<(Box<str>, Option<Box<str>>)>,
}

/// What [`LocalFrontier::pop_head`] does with the head's entry on disk.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Leave {
    /// Deletes it: the URL leaves the queue for good.
    Delete,
    /// Leaves it: a page in flight, whose entry goes when it settles.
    Queued,
}

/// Whether the queue entry at `sort` is a page in flight (a page's lease
/// is its sequence number).
fn is_flying(flight: &HashMap<u64, Flight, crate::Hasher>, sort: &Sort) -> bool {
    matches!(flight.get(&sort_seq(sort)), Some(Flight::Page { sort: s, .. }) if s == sort)
}

/// Up to `n` of `key`'s entries on disk from `from`, in order, without
/// its pages in flight: their entries stay queued until they settle, and
/// URLs queued since at a higher priority sort before them. It reads as
/// many more as the key has requests in flight.
fn load_waiting(
    store: &mut Store,
    flight: &HashMap<u64, Flight, crate::Hasher>,
    politeness: &Politeness,
    key: &str,
    from: &Sort,
    n: usize,
) -> Result<Vec<Entry>, FrontierError> {
    let in_flight = politeness.get(key).map_or(0, |h| h.in_flight as usize);
    let mut loaded = store.load(key, from, n + in_flight)?;
    if in_flight > 0 {
        loaded.retain(|e| !is_flying(flight, &e.sort));
        loaded.truncate(n);
    }
    Ok(loaded)
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
            queues: hashbrown::HashMap::default(),
            time: BinaryHeap::new(),
            ready: BinaryHeap::new(),
            flight: HashMap::default(),
            open: HashSet::default(),
            parked: BinaryHeap::new(),
            park_seq: 0,
            robots: HashMap::default(),
            unavailable_after_fetch: HashMap::new(),
            seq: 0,
            total: 0,
            skipped: Vec::new(),
            skipped_total: 0,
            reissued: 0,
            store: None,
            from_summary: false,
            summary_generation: None,
            resting: HashSet::new(),
            resting_robots: HashSet::new(),
            to_rest: Vec::new(),
        }
    }

    /// Every queued URL with its key, in key order then queue order (on
    /// disk this reads the whole store; meant for inspection and export).
    pub fn queued_urls(&mut self) -> Result<Vec<(String, String)>, FrontierError> {
        let mut out = Vec::new();
        match self.store.as_mut() {
            Some(store) => {
                store.commit()?;
                let flight = &self.flight;
                store.scan_queue(|e| {
                    if !is_flying(flight, &e.sort) {
                        out.push((e.key, e.url));
                    }
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

    /// Whether the queue entry at `sort` is a page in flight.
    fn is_flying(&self, sort: &Sort) -> bool {
        is_flying(&self.flight, sort)
    }

    /// The politeness key of a URL.
    pub fn key_of(&self, url: &str) -> Result<String, KeyError> {
        self.keyer.key(url)
    }

    fn schedule(&mut self, key: &str, at: UnixMillis) {
        let Some(q) = self.queues.get_mut(key) else {
            return;
        };
        if q.ready.is_some() || q.parked.is_some() {
            return; // already in the ready heap, or waiting for a slot
        }
        if q.scheduled.is_none_or(|c| at < c) {
            q.scheduled = Some(at);
            self.time.push(Reverse((at, key.into())));
        }
    }

    fn seen_contains(&mut self, fp: u128) -> Result<bool, FrontierError> {
        match &mut self.seen {
            Seen::Memory(set) => Ok(set.contains(&fp)),
            Seen::Disk(filter) => {
                if filter.as_ref().is_some_and(|f| !f.contains(&fp)) {
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
            Seen::Disk(filter) => {
                let full = filter.as_mut().is_some_and(|f| f.insert(&fp));
                if let Some(store) = self.store.as_mut() {
                    store.put_seen(fp);
                }
                if full {
                    self.grow_seen_filter();
                }
            }
        }
    }

    /// Replaces a full seen filter with one four times larger, filled
    /// from the store (what is committed and what is pending). One that
    /// cannot be filled is dropped: lookups then all ask the store.
    fn grow_seen_filter(&mut self) {
        let (Seen::Disk(Some(old)), Some(store)) = (&self.seen, self.store.as_ref()) else {
            return;
        };
        self.seen = Seen::Disk(old.larger().filled_from(store).ok());
    }

    fn save_host(&mut self, key: &str) {
        if let (Some(store), Some(h)) = (self.store.as_mut(), self.politeness.get(key)) {
            let mut buf = [0; host_bytes::INLINE];
            if let Some(bytes) = host_bytes::encode(h, &mut buf) {
                store.put_host(key, &bytes);
            }
            if let Some(q) = self.queues.get_mut(key) {
                q.stored_next = self.politeness.restored_next(h);
                q.unsaved = false;
            }
        }
    }

    /// Tells the store how many releases are in flight, for its next
    /// commit to record: called wherever `flight` changes.
    fn tell_flying(&mut self) {
        if let Some(store) = self.store.as_mut() {
            store.set_flying(self.flight.len() as u64);
        }
    }

    /// Writes every state whose write a request's end put off (see
    /// [`KeyQueue::unsaved`]).
    fn save_unsaved(&mut self) {
        if self.store.is_none() {
            return;
        }
        let unsaved: Vec<Box<str>> = (self.queues.iter())
            .filter(|(_, q)| q.unsaved)
            .map(|(k, _)| k.clone())
            .collect();
        for key in unsaved {
            self.save_host(&key);
        }
    }

    fn end_op(&mut self) -> Result<(), FrontierError> {
        let Some(s) = self.store.as_mut() else {
            return Ok(());
        };
        let generation = s.generation();
        s.end_op()?;
        // A store that commits every few operations (a caller that never
        // calls `commit`) rests its closed keys as it commits.
        if s.generation() != generation {
            self.rest_closed();
        }
        Ok(())
    }

    /// Puts an entry into its key's queue (window or disk).
    fn insert(&mut self, key: &str, sort: Sort, tag: u32, url: &str) {
        let disk = self.store.is_some();
        let window = self.config.window.max(1);
        let q = self.queues.entry_ref(key).or_default();
        q.count += 1;
        self.total += 1;
        if let Some(store) = self.store.as_mut() {
            store.put_queue(key, &sort, tag, url);
        }
        let all_in_window = q.window.len() as u64 + 1 == q.count;
        let before_last = q.window.last_key().is_some_and(|last| sort < *last);
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
        self.repark(key);
    }

    /// Takes the head entry of a key's queue, refilling the window from disk.
    /// Its entry on disk is deleted, or left for a page released now
    /// (`release`): a page's entry stays queued on disk until it settles,
    /// so a kill puts it back in the queue with no write to say so. URLs
    /// queued since at a higher priority sort before such a page, so a
    /// refill reads past the key's pages in flight and leaves them out.
    ///
    /// A refill reads the store, which first commits the pending batch; it
    /// happens before this operation writes anything, so only whole
    /// operations are ever committed.
    fn pop_head(
        &mut self,
        key: &str,
        on_disk: Leave,
    ) -> Result<Option<(Sort, Queued)>, FrontierError> {
        self.ensure_window(key)?;
        let window = self.config.window.max(1);
        let Some(q) = self.queues.get_mut(key) else {
            return Ok(None);
        };
        let Some(&head) = q.window.first_key() else {
            return Ok(None);
        };
        let mut refill = None;
        if let Some(store) = self.store.as_mut() {
            if q.window.len() == 1 && q.count > 1 {
                let from = q.rest_low.unwrap_or([0; 9]);
                let waiting = load_waiting(
                    store,
                    &self.flight,
                    &self.politeness,
                    key,
                    &from,
                    window + 1,
                );
                refill = Some(waiting?);
            }
        }
        let Some((_, url)) = q.window.pop_first() else {
            return Ok(None);
        };
        q.count -= 1;
        self.total -= 1;
        if let Some(store) = self.store.as_mut() {
            if on_disk == Leave::Delete {
                store.del_queue(key, &head);
            }
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
        let loaded = load_waiting(store, &self.flight, &self.politeness, key, &from, window)?;
        q.fill(loaded, key, store)
    }

    /// Drops every URL of a skipped key, reporting each.
    fn drain(&mut self, key: &str, reason: &str) -> Result<(), FrontierError> {
        if self.queues.get(key).is_some_and(|q| q.unsaved) {
            self.save_host(key);
        }
        while let Some((_, q)) = self.pop_head(key, Leave::Delete)? {
            self.skipped_total += 1;
            self.skipped.push(Skipped {
                url: q.url.into(),
                reason: reason.to_owned(),
            });
        }
        self.queues.remove(key);
        self.close_if_idle(key, None);
        self.end_op()
    }

    fn release(&mut self, key: &str, now: UnixMillis) -> Result<Option<Released>, FrontierError> {
        self.ensure_window(key)?;
        let Some(q) = self.queues.get(key) else {
            return Ok(None);
        };
        let Some((sort, head)) = q.window.first() else {
            return Ok(None);
        };
        let priority = sort_priority(sort);
        if self.config.robots_gate {
            // Borrowed: a release whose rules are known allocates nothing here.
            let origin = origin_str(&head.url);
            if self.gate_rests(&origin) {
                let origin = origin.into_owned();
                self.wake_robots(&origin)?;
                return self.release(key, now);
            }
            let fetch = match self.robots.get(origin.as_ref()) {
                // Its robots.txt is being fetched; `complete` reschedules.
                Some(RobotsGate::Fetching { .. }) => return Ok(None),
                Some(RobotsGate::Known { until }) => *until <= now,
                Some(RobotsGate::Unavailable { until, .. }) if now < *until => {
                    let until = *until;
                    self.schedule(key, until);
                    self.yield_if_far(key, until, now);
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
                self.tell_flying();
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
        let Some((sort, queued)) = self.pop_head(key, Leave::Queued)? else {
            return Ok(None);
        };
        let lease = sort_seq(&sort);
        let started = self.politeness.start(key, now);
        let released = Released {
            url: queued.url.to_string(),
            key: key.to_owned(),
            priority,
            kind: Kind::Page,
            tag: queued.tag,
            lease,
        };
        let twice = self.flight.insert(
            lease,
            Flight::Page {
                key: key.into(),
                sort,
                queued,
                started,
            },
        );
        debug_assert!(twice.is_none(), "{} released while in flight", released.url);
        self.tell_flying();
        self.save_host(key);
        self.end_op()?;
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
                    self.yield_if_far(key, at, now);
                }
            }
            Err(Wait::Skipped { reason }) => self.drain(key, &reason)?,
        }
        Ok(())
    }
}
