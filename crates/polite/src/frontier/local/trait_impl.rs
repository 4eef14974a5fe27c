//! [`Frontier`] for [`LocalFrontier`]: each call runs the synchronous
//! method of the same name.

use super::*;

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
        self.offer(&Offer::new(url, priority, tag), now)
    }

    /// One call per URL, as the trait's default, but a URL offered parsed
    /// is not parsed again.
    async fn enqueue_many(
        &mut self,
        offers: &[Offer<'_>],
        now: UnixMillis,
    ) -> Result<Vec<Admission>, FrontierError> {
        offers.iter().map(|o| self.offer(o, now)).collect()
    }

    /// The next fetch, or how long to wait (see [`Frontier::next`]).
    async fn next(&mut self, now: UnixMillis) -> Result<Next, FrontierError> {
        self.unpark();
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
            if q.count == 0 || !self.admit_open(&key) {
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
        trim(&mut self.ready);
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
        trim(&mut self.time);
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
            Ok(u) => crate::frontier::origin_of(&u),
            Err(_) => origin.to_owned(),
        };
        self.unmark_gate(&origin);
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
            Ok(u) => crate::frontier::origin_of(&u),
            Err(_) => origin.to_owned(),
        };
        self.unmark_gate(&origin);
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
            self.wake(key)?;
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
        self.wake(&key)?;
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
    ) -> Result<Option<Hold>, FrontierError> {
        Ok(LocalFrontier::why_not_now(self, url, now))
    }

    /// Makes everything durable (see [`Frontier::sync`]), and writes the
    /// summary that lets the next [`open`](Self::open) skip reading every
    /// queued URL (a failure to write it only costs that reopen time).
    async fn sync(&mut self) -> Result<(), FrontierError> {
        self.save_unsaved();
        match self.store.as_mut() {
            Some(s) => s.sync()?,
            None => return Ok(()),
        }
        // Best effort: a summary only spares reading the store at reopen.
        let _ = self.write_summary();
        Ok(())
    }

    async fn stats(&mut self) -> Result<Stats, FrontierError> {
        Ok(LocalFrontier::stats(self))
    }

    async fn take_skipped(&mut self) -> Result<Vec<Skipped>, FrontierError> {
        Ok(LocalFrontier::take_skipped(self))
    }
}
