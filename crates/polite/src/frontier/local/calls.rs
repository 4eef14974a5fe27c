//! The frontier calls as plain synchronous methods on a [`LocalFrontier`],
//! and the one place a release ends (`settle`).

use super::*;

/// The frontier calls as plain synchronous methods: what the [`Frontier`]
/// implementation runs, for callers that hold a `LocalFrontier` directly.
impl LocalFrontier {
    /// One offer, as [`Frontier::enqueue_tagged`] answers it; a URL
    /// offered parsed is not parsed again.
    pub(super) fn offer(
        &mut self,
        o: &Offer<'_>,
        now: UnixMillis,
    ) -> Result<Admission, FrontierError> {
        let (parsed, key) = match crate::frontier::admit_offer(&self.keyer, o) {
            Ok(k) => k,
            Err(answer) => return Ok(answer),
        };
        let (priority, tag) = (o.priority, o.tag);
        // A resting key is never a skipped one (see `rest`): it is woken
        // only for a URL it queues.
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
        self.wake(&key)?;
        self.seen_add(fp);
        self.seq += 1;
        let sort = sort_key(priority, self.seq);
        let normal = &parsed[..url::Position::AfterQuery];
        self.insert(&key, sort, tag, normal);
        self.end_op()?;
        self.schedule(&key, now);
        Ok(Admission::Queued)
    }

    /// Why a URL waits (see [`Frontier::why_not_now`]).
    pub fn why_not_now(&self, url: &str, now: UnixMillis) -> Option<Hold> {
        let key = match self.keyer.key(url) {
            Ok(k) => k,
            Err(e) => return Some(Hold::BadUrl(e.to_string())),
        };
        if self
            .queues
            .get(key.as_str())
            .is_some_and(|q| q.parked.is_some())
        {
            return Some(Hold::Parked {
                open: self.open.len(),
            });
        }
        if self.config.robots_gate {
            let origin = origin_str(url);
            match self.robots.get(origin.as_ref()) {
                Some(RobotsGate::Fetching { .. }) => {
                    return Some(Hold::RobotsFetching {
                        origin: origin.into_owned(),
                    });
                }
                Some(RobotsGate::Unavailable { until, reason }) if now < *until => {
                    return Some(Hold::RobotsUnavailable {
                        origin: origin.into_owned(),
                        reason: reason.to_string(),
                        next_in: until.millis_since(now),
                    });
                }
                _ => {}
            }
        }
        match self.resting_hold(&key, now) {
            Some(hold) => hold,
            None => self.politeness.why_not_now(&key, now),
        }
    }

    /// On disk, hands every operation so far to the operating system in one
    /// write: they then survive the process being killed (not a power
    /// loss: that is [`sync`](Self::sync)). With
    /// [`commit_every`](FrontierConfig::commit_every) 1 there is never
    /// anything left to hand on; above 1, a caller that makes many
    /// operations in a row (the crawler's loop) commits them together.
    pub fn commit(&mut self) -> Result<(), FrontierError> {
        if let Some(s) = self.store.as_mut() {
            s.commit()?;
            self.rest_closed();
        }
        Ok(())
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
    pub(super) fn settle(
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
        self.tell_flying();
        let before = self.politeness.get(fl.key()).map(HostState::pacing);
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
                // Its entry is still queued on disk: rewritten with the
                // new tag for a retry, deleted when the page is done.
                match back {
                    Some(tag) => self.insert(key, *sort, tag, &queued.url),
                    None => {
                        if let Some(store) = self.store.as_mut() {
                            store.del_queue(key, sort);
                        }
                    }
                }
            }
        }
        self.save_if_paced(fl.key(), before);
        self.end_op()?;
        self.reschedule(fl.key(), now)?;
        self.close_if_idle(fl.key(), Some(&origin_str(&released.url)));
        Ok(())
    }

    /// Writes a key's state after one of its requests ended, unless that
    /// changed nothing of its pacing (`before`, as it was) and the state
    /// the store holds would keep the host waiting at least as long after
    /// a restart, while the key still has URLs queued: its next release
    /// writes the state. The store's state then shows the request still
    /// in flight, which holds the host longer after a crash, never
    /// shorter (see [`Politeness::restore`]). One write a request instead
    /// of two.
    fn save_if_paced(&mut self, key: &str, before: Option<Pacing>) {
        let state = self.politeness.get(key);
        let paced = state.map(HostState::pacing);
        let next = state.map_or(UnixMillis::EPOCH, |h| h.next_allowed);
        let same = self.store.is_some() && before.is_some() && paced == before;
        let covered = |q: &&mut Box<KeyQueue>| same && q.count > 0 && next <= q.stored_next;
        match self.queues.get_mut(key).filter(covered) {
            Some(q) => q.unsaved = true,
            None => self.save_host(key),
        }
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
        if let Err(e) = self.wake(&key) {
            return Begin::Refused {
                reason: format!("its politeness state could not be read: {e}"),
            };
        }
        match self.politeness.check(&key, now) {
            Ok(()) => {
                self.politeness.start(&key, now);
                // Committed with the next operation: a state written
                // since shows the request (see `save_if_paced`).
                self.save_host(&key);
                Begin::Started
            }
            Err(Wait::Until { at, .. }) => Begin::Wait { until: at },
            Err(Wait::Skipped { reason }) => Begin::Refused { reason },
        }
    }

    /// The `n` keys holding the most queued URLs, most first (ties by key),
    /// each with its count and the URL at its head (see
    /// [`Frontier::busiest`]).
    ///
    /// One pass keeping the best `n` in a heap whose top is the worst kept:
    /// a crawl asks twice a second, and sorting every key (100,000 hosts)
    /// each time took a tenth of its CPU.
    pub fn busiest(&self, n: usize) -> Vec<KeyLoad> {
        if n == 0 {
            return Vec::new();
        }
        // Smaller is busier: more URLs, then the lower key.
        let mut top: BinaryHeap<(Reverse<u64>, &str)> = BinaryHeap::with_capacity(n);
        for (k, q) in self.queues.iter().filter(|(_, q)| q.count > 0) {
            let rank = (Reverse(q.count), &**k);
            if top.len() < n {
                top.push(rank);
            } else if let Some(mut worst) = top.peek_mut().filter(|w| rank < **w) {
                *worst = rank;
            }
        }
        top.into_sorted_vec()
            .into_iter()
            .filter_map(|(Reverse(queued), k)| {
                let q = self.queues.get(k)?;
                Some(KeyLoad {
                    key: k.to_owned(),
                    queued,
                    head: q.window.first().map(|(_, e)| e.url.to_string()),
                })
            })
            .collect()
    }

    /// Every host's state now (see [`HostCensus`]): one pass over the
    /// hosts, for a crawl's metrics.
    pub fn census(&self, now: UnixMillis) -> HostCensus {
        let mut c = HostCensus::default();
        let queued = |key: &str| self.queues.get(key).map_or(0, |q| q.count);
        let unavailable = |key: &str| {
            let Some(head) = self
                .queues
                .get(key)
                .and_then(|q| q.window.first().map(|(_, q)| q))
            else {
                return false;
            };
            matches!(self.robots.get(origin_str(&head.url).as_ref()),
                Some(RobotsGate::Unavailable { until, .. }) if now < *until)
        };
        let parked = |key: &str| self.queues.get(key).is_some_and(|q| q.parked.is_some());
        let mut seen = 0u64;
        for (key, h) in self.politeness.keys() {
            seen += 1;
            let held = |t: Option<UnixMillis>| t.is_some_and(|t| now < t);
            let slot = if h.skip.is_some() {
                &mut c.skipped
            } else if h.in_flight > 0 {
                &mut c.in_flight
            } else if queued(key) == 0 {
                &mut c.done
            } else if unavailable(key) {
                &mut c.robots_unavailable
            } else if held(h.retry_after_until)
                || held(h.paused_until)
                || (h.failures > 0 && now < h.next_allowed)
            {
                &mut c.backoff
            } else if parked(key) {
                &mut c.parked
            } else if now < h.next_allowed {
                &mut c.waiting
            } else {
                &mut c.ready
            };
            *slot += 1;
        }
        // Keys queued but never started have no politeness state yet.
        for (key, q) in &self.queues {
            if q.count > 0 && self.politeness.get(key).is_none() {
                match (unavailable(key), q.parked.is_some()) {
                    (true, _) => c.robots_unavailable += 1,
                    (false, true) => c.parked += 1,
                    (false, false) => c.ready += 1,
                }
                seen += 1;
            }
        }
        // Resting keys are done: their state is in the store only.
        c.done += self.resting.len() as u64;
        seen += self.resting.len() as u64;
        debug_assert!(seen >= c.states().iter().map(|s| s.1).sum::<u64>());
        c
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
            Some(store) => store.scan_queue_raw(|key, sort, _, url| match this.is_flying(sort) {
                true => Ok(()),
                false => f(this, key, url),
            }),
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

    pub(super) fn settle_robots(&mut self, origin: &str) {
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
