//! Leases kept alive: a worker's heartbeat renews every flight it holds,
//! so a lease can be short and a killed worker's hosts pass to the others
//! soon after; a request leaves only while its lease has at least the
//! longest request left, so no request outlives its lease.

use super::*;

/// The fewest milliseconds between two heartbeats.
const BEAT_MIN_MS: u64 = 100;

/// The flights one heartbeat renews: per `RENEW` call, its partition and
/// the lease ids it asks for, in order.
pub(super) type Beat = Vec<(u32, Vec<u64>)>;

impl<C: FleetConnection> FleetFrontier<C> {
    /// How long after its release or renewal a request may still leave:
    /// the lease less the longest a request lasts, so a request sent in
    /// time is over before its lease can lapse (at least a quarter of the
    /// lease, should the longest request be set at or past it).
    pub(super) fn send_window(&self) -> Duration {
        let lease = self.fleet.lease;
        lease
            .saturating_sub(self.fleet.longest_request)
            .max(lease / 4)
    }

    /// How often the heartbeat renews: three times in a send window, so a
    /// live worker's flights are always well inside it.
    fn beat_every(&self) -> u64 {
        let w = u64::try_from(self.send_window().as_millis() / 3).unwrap_or(u64::MAX);
        w.max(BEAT_MIN_MS)
    }

    /// Whether the heartbeat is due at `now` (on the caller's clock).
    pub(super) fn beat_due(&self, now: UnixMillis) -> bool {
        let holds = self.flights.values().any(|f| !f.orphan);
        holds
            && self
                .beat_at
                .is_none_or(|at| now.millis_since(at) >= self.beat_every())
    }

    /// The `RENEW` calls of a heartbeat due at `now`: one per partition
    /// where this worker holds flights (none when it is not due).
    pub(super) fn beat_cmds(&mut self, now: UnixMillis) -> (Beat, Vec<(u32, redis::Cmd)>) {
        if !self.beat_due(now) {
            return (Vec::new(), Vec::new());
        }
        self.beat_at = Some(now);
        let mut by_part: std::collections::BTreeMap<u32, Vec<u64>> = Default::default();
        for (&lease, f) in &self.flights {
            if !f.orphan {
                by_part.entry(f.partition).or_default().push(lease);
            }
        }
        let ms = u64::try_from(self.fleet.lease.as_millis()).unwrap_or(u64::MAX);
        let mut beat = Vec::new();
        let mut cmds = Vec::new();
        for (p, mut leases) in by_part {
            leases.sort_unstable();
            let mut c = self.script_cmd(|s| &s.renew, p, "fl");
            c.arg(self.now_arg(now)).arg(ms);
            for lease in &leases {
                if let Some(f) = self.flights.get(lease) {
                    c.arg(f.id).arg(f.token);
                }
            }
            beat.push((p, leases));
            cmds.push((p, c));
        }
        (beat, cmds)
    }

    /// Reads a heartbeat's answers: a renewed flight's lease runs from
    /// when the call left (`sent`, on this process's clock); one whose
    /// lease had lapsed is over here.
    pub(super) fn beat_answers(
        &mut self,
        beat: Beat,
        replies: Vec<Value>,
        now: UnixMillis,
        sent: std::time::Instant,
    ) -> Result<(), FrontierError> {
        for ((p, leases), v) in beat.into_iter().zip(replies) {
            let oks: Vec<i64> = redis::from_redis_value(v.clone())
                .map_err(|_| self.corrupt(format!("renew: {v:?}")))?;
            for (lease, ok) in leases.into_iter().zip(oks) {
                if ok == 1 {
                    if let Some(f) = self.flights.get_mut(&lease) {
                        f.at = (now, sent);
                    }
                } else {
                    self.lapsed_here(p, lease);
                }
            }
        }
        Ok(())
    }

    /// Flight `lease` lapsed in the store (another worker may hold its
    /// host now): a request of it that is out is an orphan, whose end is
    /// not applied; one with nothing out is dropped.
    fn lapsed_here(&mut self, p: u32, lease: u64) {
        let Some(f) = self.flights.get_mut(&lease) else {
            return;
        };
        if f.orphan {
            return;
        }
        self.stale += 1;
        if f.out {
            f.orphan = true;
        } else {
            self.flights.remove(&lease);
        }
        self.changed(p);
    }

    /// Keeps this worker's leases alive and tells the store what it holds
    /// back (completions, a claim's finished URLs): one round trip when
    /// either is due, none otherwise. The crawl loop calls it every turn.
    pub async fn keep_alive(&mut self, now: UnixMillis) -> Result<(), FrontierError> {
        self.last_now = self.last_now.max(now);
        self.pend_acks();
        if self.beat_due(now)
            || !self.pending.is_empty()
            || !self.outbox.is_empty()
            || !self.lastmods_out.is_empty()
        {
            self.exec(Vec::new()).await?;
        }
        Ok(())
    }

    /// `confirm`: whether the release is still this worker's just before
    /// its request leaves, renewing its lease. A release well inside its
    /// send window needs no round trip (the heartbeat keeps a live
    /// worker's there); past half of it (the worker waited for robots.txt,
    /// or was stopped), the store is asked.
    pub(super) async fn renew(
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
        let half = self.send_window() / 2;
        let young = now.millis_since(fl.at.0) < u64::try_from(half.as_millis()).unwrap_or(u64::MAX)
            && fl.at.1.elapsed() < half;
        if young {
            return Ok(true);
        }
        let (p, token, id) = (fl.partition, fl.token, fl.id);
        let mut c = self.script_cmd(|s| &s.renew, p, "fl");
        c.arg(self.now_arg(now))
            .arg(u64::try_from(self.fleet.lease.as_millis()).unwrap_or(u64::MAX))
            .arg(id)
            .arg(token);
        let sent = std::time::Instant::now();
        let ok: Vec<i64> = self.call(p, c, "renew").await?;
        if ok.first() == Some(&1) {
            if let Some(fl) = self.flights.get_mut(&released.lease) {
                fl.at = (now, sent);
            }
            return Ok(true);
        }
        // The URL went back to the queue: the release is over here, and
        // the host's state is whoever holds it now's.
        // (A heartbeat in the same round trip may have found it so.)
        if let Some(fl) = self.flights.remove(&released.lease) {
            self.politeness.unstart(&fl.key, &fl.started);
            if !fl.orphan {
                self.stale += 1;
            }
        }
        self.changed(p);
        Ok(false)
    }
}
