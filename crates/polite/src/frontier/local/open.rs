//! The bound on open keys ([`FrontierConfig::max_open_keys`]).
//!
//! A key is *open* from its first release until its queue is empty and
//! nothing of it is in flight. A key that comes up ready while the bound is
//! reached is *parked*: it leaves the heaps, and the next key to close lets
//! the best parked one in (highest head priority, then the earliest parked).
//! So a crawl of many hosts works through them a batch at a time, and what
//! a host in progress costs (a kept connection, its caches) is paid for at
//! most `max_open_keys` hosts at once, whatever the crawl's size. Parked
//! keys hold only their queue's window, as every queued key does. A key
//! whose next try is far off gives its slot up meanwhile.

use super::*;

/// How far off a key's next try must be for it to give its slot up.
pub(super) const YIELD_AFTER_MS: u64 = 10_000;

impl LocalFrontier {
    /// Whether `key` may be released now: it is open, or it opens now.
    /// Otherwise it is parked until a key closes.
    pub(super) fn admit_open(&mut self, key: &str) -> bool {
        if self.open.contains(key) {
            return true;
        }
        if (self.open.len() as u64) < self.config.max_open_keys {
            self.open.insert(key.into());
            return true;
        }
        if let Some(q) = self.queues.get_mut(key) {
            self.park_seq += 1;
            let entry = (q.head_priority(), self.park_seq);
            q.parked = Some(entry);
            self.parked.push((entry.0, Reverse(entry.1), key.into()));
        }
        false
    }

    /// Closes `key` when it has nothing queued and nothing in flight (its
    /// state and the robots.txt gate of `origin`, the one it last used,
    /// rest at the next commit: see `rest`), and lets parked keys into the
    /// slots free.
    pub(super) fn close_if_idle(&mut self, key: &str, origin: Option<&str>) {
        if !self.open.contains(key) {
            return;
        }
        let queued = self.queues.get(key).is_some_and(|q| q.count > 0);
        let flying = self.politeness.get(key).is_some_and(|h| h.in_flight > 0);
        if !queued && !flying {
            self.open.remove(key);
            self.close_to_rest(key, origin);
            self.unpark();
        }
    }

    /// An open key with nothing in flight whose next try is more than
    /// [`YIELD_AFTER_MS`] away gives its slot up (it is admitted again when
    /// its time comes): a host held back by a Retry-After, a robots.txt
    /// that cannot be had or a long Crawl-delay does not keep parked hosts
    /// waiting, nor a crawl from ending while they wait.
    pub(super) fn yield_if_far(&mut self, key: &str, at: UnixMillis, now: UnixMillis) {
        if at.millis_since(now) <= YIELD_AFTER_MS || !self.open.contains(key) {
            return;
        }
        if self.politeness.get(key).is_some_and(|h| h.in_flight > 0) {
            return;
        }
        self.open.remove(key);
        self.unpark();
    }

    /// Opens parked keys while the bound allows, each ready at once.
    pub(super) fn unpark(&mut self) {
        while (self.open.len() as u64) < self.config.max_open_keys {
            let Some((p, Reverse(seq), key)) = self.parked.pop() else {
                break;
            };
            let Some(q) = self.queues.get_mut(&key) else {
                continue; // drained or emptied since
            };
            if q.parked != Some((p, seq)) {
                continue; // stale
            }
            q.parked = None;
            self.open.insert(key.clone());
            self.schedule(&key, UnixMillis::EPOCH);
        }
        trim(&mut self.parked);
    }

    /// A parked key whose queue gained a better head moves up.
    pub(super) fn repark(&mut self, key: &str) {
        let Some(q) = self.queues.get_mut(key) else {
            return;
        };
        let Some((p, seq)) = q.parked else {
            return;
        };
        let head = q.head_priority();
        if head > p {
            q.parked = Some((head, seq));
            self.parked.push((head, Reverse(seq), key.into()));
        }
    }

    /// Changes the bound (see [`FrontierConfig::max_open_keys`]): keys
    /// open beyond a lowered bound finish first.
    pub fn set_max_open_keys(&mut self, n: u64) {
        self.config.max_open_keys = n.max(1);
        self.unpark();
    }

    /// Open keys now.
    pub fn open_keys(&self) -> usize {
        self.open.len()
    }
}
