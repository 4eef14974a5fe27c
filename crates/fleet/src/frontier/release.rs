//! Release and claims: which URLs the store gives this worker, the flights it keeps for
//! them, and a claim's further URLs released here, paced by the worker's controller.

use super::*;

/// How far off a claimed host's next turn may be for its claim to hold it
/// (the heartbeat keeps the lease meanwhile); further, the claim goes back
/// and the host is the fleet's again.
pub const HOLD_AHEAD: Duration = Duration::from_secs(15);

/// Partitions one `NEXT` call asks on a standalone server (a release is
/// some twenty commands), for the same reason.
const NEXT_CHUNK: usize = 16;

/// A flight id is its partition in the high bits and the partition's
/// sequence number below, so ids are unique across the crawl; with one
/// partition it is the sequence number, as in the embedded frontier.
const ID_BITS: u32 = 40;

/// The priority a queue score carries (see the scripts' key table).
fn priority_of(score: &str) -> u8 {
    let s: f64 = score.parse().unwrap_or(0.0);
    let p = 255.0 - (s / 1_099_511_627_776.0).floor();
    p.clamp(0.0, 255.0) as u8
}

/// One URL of a partition's `NEXT` reply (see the script).
struct NextItem {
    seq: u64,
    /// A robots.txt release (`R`), not a page's.
    robots: bool,
    key: String,
    priority: u64,
    url: String,
    tag: u64,
    /// The host's state as the store holds it (JSON).
    state: String,
    token: u64,
    /// A claim's other URLs: (score, member), in queue order.
    rest: std::collections::VecDeque<(String, String)>,
}

impl NextItem {
    /// `None` for a reply of another shape.
    fn read(item: &[Value]) -> Option<NextItem> {
        let text =
            |i: usize| -> Option<String> { redis::from_redis_value(item.get(i)?.clone()).ok() };
        let int = |i: usize| -> Option<u64> { text(i)?.parse().ok() };
        // A claim's other URLs: member, score, member, score...
        let extra: Vec<String> = match item.get(8) {
            Some(list) => redis::from_redis_value(list.clone()).ok()?,
            None => Vec::new(),
        };
        if !extra.len().is_multiple_of(2) {
            return None;
        }
        let rest = extra
            .chunks_exact(2)
            .map(|pair| (pair[1].clone(), pair[0].clone()))
            .collect();
        Some(NextItem {
            seq: int(0)?,
            robots: text(1)? == "R",
            key: text(2)?,
            priority: int(3)?,
            url: text(4)?,
            tag: int(5)?,
            state: text(6)?,
            token: int(7)?,
            rest,
        })
    }
}

impl<C: FleetConnection> FleetFrontier<C> {
    pub(super) fn max_in(&self) -> u32 {
        self.politeness.config.max_in_flight
    }

    /// Replaces the cached state of `key` with what the store holds (none,
    /// or one that does not parse: the key starts afresh).
    pub(super) fn adopt(&mut self, key: &str, json: &str) {
        match serde_json::from_str::<HostState>(json) {
            Ok(s) => self.politeness.adopt(key, s),
            Err(_) => self.politeness.forget(key),
        }
    }

    /// Whether this worker has a request of its own in flight to `key`
    /// (then its copy of the state is the newest there is).
    pub(super) fn holds(&self, key: &str) -> bool {
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
    pub(super) async fn load(&mut self, key: &str) -> Result<(), FrontierError> {
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
    pub(super) fn written(&self, key: &str) -> (String, String, String) {
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

    pub(super) fn origin_and_key(&self, origin: &str) -> (String, Option<String>) {
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
            let item = NextItem::read(&item).ok_or_else(|| bad(&v))?;
            released.push(self.take_release(p, item, at, now));
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

    /// Makes one released URL this worker's flight: its lease id (a spare
    /// one when an orphan of this worker's holds the id), the host's state
    /// (the store's unless a request of this worker's is out there), and
    /// the start of the host's delay.
    fn take_release(
        &mut self,
        p: u32,
        item: NextItem,
        at: UnixMillis,
        now: UnixMillis,
    ) -> Released {
        let NextItem {
            seq,
            robots,
            key,
            priority,
            url,
            tag,
            state,
            token,
            rest,
        } = item;
        let mut lease = (u64::from(p) << ID_BITS) | seq;
        if self.flights.contains_key(&lease) {
            // An orphan of this worker's has the id (the same URL, given
            // out again after its lease lapsed).
            self.spare_ids += 1;
            lease = (1 << 63) | self.spare_ids;
        }
        // A release only takes work: not for the board.
        self.changed_here(p);
        self.lapsed_on(&key);
        // The store's state is the truth unless this worker has a request
        // of its own in flight to the host.
        if !self.holds(&key) {
            self.adopt(&key, &state);
        }
        let started = self.politeness.start(&key, at);
        let flight = Flight {
            partition: p,
            id: seq,
            orphan: false,
            key: key.clone(),
            token,
            started,
            at: (now, self.asked_at),
            out: true,
            rest,
            current: None,
            held: self.fleet.claim > 1,
            acks: Vec::new(),
            robots: robots.then(|| {
                let origin = url.strip_suffix("/robots.txt").unwrap_or(&url);
                (origin.to_owned(), None)
            }),
        };
        self.flights.insert(lease, flight);
        Released {
            url,
            key,
            priority: u8::try_from(priority).unwrap_or(0),
            kind: if robots { Kind::Robots } else { Kind::Page },
            tag: u32::try_from(tag).unwrap_or(0),
            lease,
        }
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
    pub(super) fn flatten(
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

    /// Releases what this worker's claims hold and may go now, up to
    /// `max`; gives back claims whose host's next turn is far off (more
    /// than [`HOLD_AHEAD`]), or that was skipped. Returns the
    /// releases and, if a claim waits, the earliest time one may go.
    pub(super) async fn release_claimed(
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
        let far = u64::try_from(HOLD_AHEAD.as_millis()).unwrap_or(u64::MAX);
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
    pub(super) async fn give_back_claims(&mut self, now: UnixMillis) -> Result<(), FrontierError> {
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
            Some(fl) => self.settle_flight(fl, Step::Done, now).await,
            None => Ok(()),
        }
    }

    /// URLs this worker's claims hold, not yet released.
    pub(super) fn claimed(&self) -> u64 {
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
    pub(super) async fn next_from_store(
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
}
