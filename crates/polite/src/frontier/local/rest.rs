//! Resting keys: a key done (closed, nothing queued, nothing in flight)
//! keeps its politeness state, and the robots.txt gate of the origin it
//! last used, only in the store, once a commit has put them there. A
//! crawl of 100,000 hosts otherwise held every finished host's state and
//! gate in memory (some 280 bytes) for as long as it ran; a resting key
//! costs two 8-byte hashes in sets.
//!
//! A state comes back, exactly as it was stored, before the key is used
//! again: a URL queued for it (not one refused as a duplicate), its
//! robots.txt answered, a request begun or ended for it. A skipped key
//! does not rest: enqueue refuses its URLs before it would wake it. A gate
//! comes back when a page of its origin is next released; a gate lost
//! would only mean its robots.txt asked for again.
//!
//! A mark is the 64-bit hash of a key or an origin, so one never seen
//! costs no store read. A mark stands for one key only: a key whose hash
//! is already a resting key's mark stays in memory, and a key that shares
//! a mark but has nothing in the store leaves the mark in place.

use super::*;

/// The hash a resting key or origin is marked by.
fn mark(name: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(name.as_bytes())
}

impl LocalFrontier {
    /// A key just closed, `origin` the one it last used: both rest at the
    /// next commit, if the key is still done then. Only a frontier on disk
    /// has anywhere to keep them.
    pub(super) fn close_to_rest(&mut self, key: &str, origin: Option<&str>) {
        if self.store.is_some() {
            self.to_rest.push((key.into(), origin.map(Into::into)));
        }
    }

    /// On opening: every key with nothing queued rests at the first
    /// commit (a resumed crawl does not hold every finished host's state
    /// again).
    pub(super) fn rest_idle_keys(&mut self) {
        let queues = &self.queues;
        let idle = self
            .politeness
            .keys()
            .filter(|(k, _)| queues.get(*k).is_none_or(|q| q.count == 0))
            .map(|(k, _)| (Box::from(k), None));
        self.to_rest.extend(idle);
    }

    /// After a commit: the keys closed since, still done, leave memory
    /// (their state as committed is what the store holds).
    pub(super) fn rest_closed(&mut self) {
        for (key, origin) in std::mem::take(&mut self.to_rest) {
            if self.rest_key(&key) {
                if let Some(origin) = origin {
                    self.rest_gate(&origin);
                }
            }
        }
        if self.to_rest.capacity() > 4096 {
            self.to_rest.shrink_to(1024);
        }
    }

    /// Whether `key` rests now.
    fn rest_key(&mut self, key: &str) -> bool {
        let busy = self.open.contains(key) || self.queues.get(key).is_some_and(|q| q.count > 0);
        let Some(h) = self.politeness.get(key) else {
            return false;
        };
        let m = mark(key);
        // A state the store could not take stays in memory.
        let mut buf = [0; host_bytes::INLINE];
        if busy
            || h.in_flight > 0
            || h.skip.is_some()
            || self.resting.contains(&m)
            || host_bytes::encode(h, &mut buf).is_none()
        {
            return false;
        }
        self.politeness.forget(key);
        self.resting.insert(m);
        true
    }

    /// An origin's robots.txt gate rests when its rules are known (the
    /// store holds until when); one being fetched or unavailable stays.
    fn rest_gate(&mut self, origin: &str) {
        let m = mark(origin);
        if matches!(self.robots.get(origin), Some(RobotsGate::Known { .. }))
            && !self.resting_robots.contains(&m)
        {
            self.robots.remove(origin);
            self.resting_robots.insert(m);
        }
    }

    /// Brings a resting key's state back from the store before it is used.
    pub(super) fn wake(&mut self, key: &str) -> Result<(), FrontierError> {
        if self.resting.is_empty() || self.politeness.get(key).is_some() {
            return Ok(());
        }
        let m = mark(key);
        let Some(store) = self.store.as_ref().filter(|_| self.resting.contains(&m)) else {
            return Ok(());
        };
        let Some(bytes) = store.get_host(key)? else {
            return Ok(()); // another key's mark
        };
        let state = host_bytes::decode_stored(store, key, &bytes)?;
        self.politeness.restore(key, state);
        self.resting.remove(&m);
        Ok(())
    }

    /// Whether an origin's robots.txt gate may be resting (it is not in
    /// memory, and its mark is set).
    pub(super) fn gate_rests(&self, origin: &str) -> bool {
        !self.resting_robots.is_empty()
            && !self.robots.contains_key(origin)
            && self.resting_robots.contains(&mark(origin))
    }

    /// Brings a resting origin's robots.txt gate back from the store; the
    /// mark goes either way (nothing stored: the robots.txt is asked for).
    pub(super) fn wake_robots(&mut self, origin: &str) -> Result<(), FrontierError> {
        let Some(store) = self.store.as_ref() else {
            return Ok(());
        };
        if let Some(until) = store.get_robots(origin)? {
            self.robots
                .insert(origin.to_owned(), RobotsGate::Known { until });
        }
        self.resting_robots.remove(&mark(origin));
        Ok(())
    }

    /// An origin's gate is set anew in memory: a mark left for it no
    /// longer stands for what the store holds.
    pub(super) fn unmark_gate(&mut self, origin: &str) {
        if !self.resting_robots.is_empty() {
            self.resting_robots.remove(&mark(origin));
        }
    }

    /// What a resting key's stored state says holds it back at `now`
    /// (`why_not_now` asks without waking it); `None` when the key is not
    /// resting, or its state cannot be read (then nothing is known of it).
    pub(super) fn resting_hold(&self, key: &str, now: UnixMillis) -> Option<Option<Hold>> {
        if self.resting.is_empty()
            || self.politeness.get(key).is_some()
            || !self.resting.contains(&mark(key))
        {
            return None;
        }
        let bytes = self.store.as_ref()?.get_host(key).ok()??;
        let state = host_bytes::decode(&bytes).ok()?;
        let mut alone = Politeness::new(self.politeness.config.clone());
        alone.restore(key, state);
        Some(alone.why_not_now(key, now))
    }

    /// Keys resting now.
    pub fn resting_keys(&self) -> usize {
        self.resting.len()
    }
}
