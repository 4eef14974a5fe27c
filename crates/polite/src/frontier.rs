//! The frontier: which URL to fetch next, never faster than each host
//! allows.
//!
//! Mercator's shape: URLs wait in one back queue per politeness key
//! (ordered by the caller's priority, then arrival); a min-heap orders keys
//! by the time they may next be fetched; a URL is released only when the
//! [`Politeness`] controller says its key may start. Admission deduplicates
//! and pushes back (with a reason) when a host's backlog or the whole
//! frontier is over its bound; callers are told, never blocked.
//!
//! This is the in-memory backend behind the [`Frontier`] trait; a persistent
//! backend (and a distributed one, one owner per host) implement the same
//! trait.

use std::cmp::Reverse;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use crate::controller::{Millis, Outcome, Politeness, Wait};

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
    /// Never: the host is skipped, or the URL has no host.
    Skipped {
        reason: String,
    },
}

/// A URL released for fetching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    pub url: String,
    pub key: String,
    pub priority: u8,
}

/// What the crawler should do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    Fetch(Released),
    /// Nothing may start before this time.
    Wait {
        until: Millis,
    },
    /// Nothing is queued (in-flight requests may still complete).
    Empty,
}

/// The interface every frontier backend implements. Times are the same
/// milliseconds the controller uses.
pub trait Frontier {
    fn enqueue(&mut self, url: &str, priority: u8, now: Millis) -> Admission;
    fn next(&mut self, now: Millis) -> Next;
    /// Reports how a released URL's request ended.
    fn complete(&mut self, released: &Released, outcome: &Outcome, now: Millis, now_unix: u64);
    /// URLs waiting.
    fn queued(&self) -> usize;
    /// URLs dropped because their host was skipped, with the reason.
    fn take_skipped(&mut self) -> Vec<(String, String)>;
}

/// How URLs map to politeness keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyMode {
    /// One key per host name (the default).
    #[default]
    Host,
    /// One key per host and port.
    HostPort,
}

/// Bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierConfig {
    pub key_mode: KeyMode,
    /// URLs queued per key before admission pushes back (10,000).
    pub max_per_key: usize,
    /// URLs queued in all (1,000,000).
    pub max_total: usize,
}

impl Default for FrontierConfig {
    fn default() -> Self {
        FrontierConfig {
            key_mode: KeyMode::Host,
            max_per_key: 10_000,
            max_total: 1_000_000,
        }
    }
}

/// The in-memory frontier.
pub struct MemoryFrontier {
    pub politeness: Politeness,
    config: FrontierConfig,
    seen: HashSet<u64>,
    queues: HashMap<String, BinaryHeap<(u8, Reverse<u64>, String)>>,
    /// Keys by the time they may next be tried; stale entries are skipped.
    ready: BinaryHeap<Reverse<(Millis, String)>>,
    scheduled: HashMap<String, Millis>,
    seq: u64,
    total: usize,
    skipped: Vec<(String, String)>,
}

fn fingerprint(url: &str) -> u64 {
    let mut h = DefaultHasher::new();
    url.hash(&mut h);
    h.finish()
}

impl MemoryFrontier {
    pub fn new(politeness: Politeness, config: FrontierConfig) -> MemoryFrontier {
        MemoryFrontier {
            politeness,
            config,
            seen: HashSet::new(),
            queues: HashMap::new(),
            ready: BinaryHeap::new(),
            scheduled: HashMap::new(),
            seq: 0,
            total: 0,
            skipped: Vec::new(),
        }
    }

    /// The politeness key of a URL.
    pub fn key_of(&self, url: &str) -> Option<String> {
        let u = url::Url::parse(url).ok()?;
        let host = u.host_str()?.to_ascii_lowercase();
        Some(match self.config.key_mode {
            KeyMode::Host => host,
            KeyMode::HostPort => format!("{host}:{}", u.port_or_known_default().unwrap_or(0)),
        })
    }

    fn schedule(&mut self, key: &str, at: Millis) {
        let cur = self.scheduled.get(key).copied();
        if cur.is_none_or(|c| at < c) {
            self.scheduled.insert(key.to_owned(), at);
            self.ready.push(Reverse((at, key.to_owned())));
        }
    }
}

impl Frontier for MemoryFrontier {
    fn enqueue(&mut self, url: &str, priority: u8, now: Millis) -> Admission {
        let Some(key) = self.key_of(url) else {
            return Admission::Skipped {
                reason: format!("`{url}` has no host"),
            };
        };
        if let Err(Wait::Skipped { reason }) = self.politeness.check(&key, now) {
            return Admission::Skipped { reason };
        }
        let fp = fingerprint(url);
        if self.seen.contains(&fp) {
            return Admission::Duplicate;
        }
        if self.total >= self.config.max_total {
            return Admission::Backpressure {
                reason: format!(
                    "the frontier holds {} URLs, its bound",
                    self.config.max_total
                ),
            };
        }
        let q = self.queues.entry(key.clone()).or_default();
        if q.len() >= self.config.max_per_key {
            return Admission::Backpressure {
                reason: format!(
                    "{key} has {} URLs waiting, its bound",
                    self.config.max_per_key
                ),
            };
        }
        self.seen.insert(fp);
        self.seq += 1;
        q.push((priority, Reverse(self.seq), url.to_owned()));
        self.total += 1;
        self.schedule(&key, now);
        Admission::Queued
    }

    fn next(&mut self, now: Millis) -> Next {
        while let Some(Reverse((at, key))) = self.ready.peek().cloned() {
            if self.scheduled.get(&key) != Some(&at) {
                self.ready.pop(); // stale
                continue;
            }
            if at > now {
                return Next::Wait { until: at };
            }
            self.ready.pop();
            self.scheduled.remove(&key);
            if self.queues.get(&key).is_none_or(|q| q.is_empty()) {
                continue;
            }
            match self.politeness.check(&key, now) {
                Ok(()) => {
                    let Some((priority, _, url)) = self.queues.get_mut(&key).and_then(|q| q.pop())
                    else {
                        continue;
                    };
                    self.total -= 1;
                    self.politeness.start(&key, now);
                    // In-flight keys are rescheduled when their request completes.
                    return Next::Fetch(Released { url, key, priority });
                }
                Err(Wait::Until { at, .. }) => {
                    // In flight: wait for `complete`; otherwise wake at `at`.
                    let in_flight = self
                        .politeness
                        .get(&key)
                        .is_some_and(|h| h.in_flight >= self.politeness.config.max_in_flight);
                    if !in_flight {
                        self.schedule(&key, at);
                    }
                }
                Err(Wait::Skipped { reason }) => {
                    if let Some(q) = self.queues.remove(&key) {
                        self.total -= q.len();
                        self.skipped
                            .extend(q.into_iter().map(|(_, _, u)| (u, reason.clone())));
                    }
                }
            }
        }
        if self.total == 0 {
            Next::Empty
        } else {
            Next::Wait { until: now + 1 }
        }
    }

    fn complete(&mut self, released: &Released, outcome: &Outcome, now: Millis, now_unix: u64) {
        self.politeness
            .finish(&released.key, now, outcome, now_unix);
        if self
            .queues
            .get(&released.key)
            .is_some_and(|q| !q.is_empty())
        {
            let at = match self.politeness.check(&released.key, now) {
                Err(Wait::Until { at, .. }) => at,
                _ => now,
            };
            self.schedule(&released.key, at);
        }
    }

    fn queued(&self) -> usize {
        self.total
    }

    fn take_skipped(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.skipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::{Config, RobotsPacing};

    fn ok() -> Outcome {
        Outcome::Status {
            status: 200,
            latency: 10,
            retry_after: None,
        }
    }

    /// Drives the frontier: each request takes 10 ms.
    fn drain(f: &mut MemoryFrontier) -> Vec<(Millis, String)> {
        let (mut order, mut now) = (Vec::new(), 0);
        loop {
            match f.next(now) {
                Next::Fetch(r) => {
                    order.push((now, r.url.clone()));
                    f.complete(&r, &ok(), now + 10, 0);
                }
                Next::Wait { until } => now = until,
                Next::Empty => return order,
            }
        }
    }

    #[test]
    fn priorities_within_a_host_and_hosts_interleave() {
        let mut f = MemoryFrontier::new(
            Politeness::new(Config::default()),
            FrontierConfig::default(),
        );
        assert_eq!(f.enqueue("https://a.test/low", 1, 0), Admission::Queued);
        assert_eq!(f.enqueue("https://a.test/high", 9, 0), Admission::Queued);
        assert_eq!(f.enqueue("https://b.test/x", 1, 0), Admission::Queued);
        assert_eq!(f.enqueue("https://a.test/high", 9, 0), Admission::Duplicate);
        let order = drain(&mut f);
        let want: Vec<(Millis, String)> = vec![
            (0, "https://a.test/high".into()),
            (0, "https://b.test/x".into()),
            (1_000, "https://a.test/low".into()),
        ];
        assert_eq!(order, want);
    }

    #[test]
    fn backpressure_and_skips_are_reported() {
        let mut f = MemoryFrontier::new(
            Politeness::new(Config::default()),
            FrontierConfig {
                max_per_key: 2,
                max_total: 3,
                ..FrontierConfig::default()
            },
        );
        assert_eq!(f.enqueue("https://a.test/1", 0, 0), Admission::Queued);
        assert_eq!(f.enqueue("https://a.test/2", 0, 0), Admission::Queued);
        assert!(
            matches!(f.enqueue("https://a.test/3", 0, 0), Admission::Backpressure { reason } if reason.contains("a.test has 2 URLs waiting"))
        );
        assert_eq!(f.enqueue("https://b.test/1", 0, 0), Admission::Queued);
        assert!(
            matches!(f.enqueue("https://c.test/1", 0, 0), Admission::Backpressure { reason } if reason.contains("holds 3 URLs"))
        );
        f.politeness.set_robots(
            "b.test",
            RobotsPacing {
                crawl_delay: Some(3600.0),
                request_rate: None,
            },
        );
        assert!(matches!(
            f.enqueue("https://b.test/2", 0, 0),
            Admission::Skipped { .. }
        ));
        assert!(matches!(
            f.enqueue("not a url", 0, 0),
            Admission::Skipped { .. }
        ));
    }
}
