//! Probing and the board: what an idle worker asks of the partitions, and the crawl-wide
//! board that says which partitions other workers changed.

use super::*;

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

/// While a partition is busy (requests in flight, often another worker's,
/// or a dead one's whose lease has yet to lapse, may bring URLs back at
/// any moment), a wait is answered as at most this long, so a caller that
/// gives up on a long wait asks again instead.
const BUSY_WAIT_MAX: u64 = 1_000;

/// How often a probe asks every partition, not only those the board says
/// changed: a change whose post was lost (its worker's connection failed
/// between the two) is seen within this.
const PROBE_FULL_EVERY: u64 = 10_000;

/// Two partitions' answers as one: the earliest wait, else busy if either
/// is, else empty.
pub(super) fn merge(a: Next, b: Next) -> Next {
    match (a, b) {
        (Next::Wait { until: x }, Next::Wait { until: y }) => Next::Wait { until: x.min(y) },
        (w @ Next::Wait { .. }, _) | (_, w @ Next::Wait { .. }) => w,
        (Next::Busy, _) | (_, Next::Busy) => Next::Busy,
        _ => Next::Empty,
    }
}

impl<C: FleetConnection> FleetFrontier<C> {
    /// What a partition's `wait`, `busy` or `empty` reply (its third field,
    /// if any: the time to wait for, or the flights) means; `None` for a
    /// reply that is none of those or lacks its time.
    pub(super) fn idle_answer(&self, p: u32, kind: &str, third: Option<u64>) -> Option<Next> {
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

    /// Records partition `p`'s idle answer, and the merge of them all.
    pub(super) fn answer(&mut self, p: u32, answer: Next) {
        if let Some(a) = self.answers.get_mut(p as usize) {
            if *a != answer {
                *a = answer;
                self.idle_stale = true;
            }
        }
    }

    /// The merge of every partition's idle answer.
    pub(super) fn idle(&mut self) -> Next {
        if self.idle_stale {
            self.idle = self.answers.iter().cloned().fold(Next::Empty, merge);
            self.idle_stale = false;
        }
        self.idle.clone()
    }

    /// `idle` (the merge of every partition's answer) as answered at
    /// `now`: a wait cut to [`BUSY_WAIT_MAX`] while any partition is busy.
    pub(super) fn capped(&self, idle: Next, now: UnixMillis) -> Next {
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
    pub(super) fn changed(&mut self, p: u32) {
        self.changed_here(p);
        self.posts.insert(p);
    }

    /// As [`changed`](Self::changed), where the change needs no post on
    /// the board (it gives other workers nothing new to do, or was posted
    /// already).
    pub(super) fn changed_here(&mut self, p: u32) {
        self.touched.insert(p);
        self.stats_stale = true;
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
    pub(super) async fn probe(&mut self, now: UnixMillis) -> Result<(), FrontierError> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
