//! Stats for the progress line and `--status`: counts read from every partition (or a
//! slice of them), cached while nothing here changed.

use super::*;

/// The progress line's stats read a fifth of the partitions each time (in
/// turn), and sum them with what the others said at their last read: each
/// count is at most five reads (10 s by default) old, and a worker's reads
/// for it are a fifth of one per partition every 2 s (with 1,024
/// partitions, 512 reads a second per worker were most of a slow or
/// polite fleet's load).
const STATS_SLICES: u32 = 5;

/// How long skipped URLs may wait when the stats are not read (they say
/// which partitions have some): then every partition's list is read.
const SKIPPED_FULL_EVERY: u64 = 10_000;

/// Skipped URLs taken from a partition at a time (the rest wait for the
/// next collection).
const SKIPPED_TAKE: usize = 1_000;

impl<C: FleetConnection> FleetFrontier<C> {
    /// The crawl's counts for a progress line: read at most every 2 s, even
    /// when this worker changed something since (then [`Frontier::stats`]
    /// reads them afresh), and only the queued, skipped and reissued
    /// counts of a fifth of the partitions in turn (the others' as last
    /// read, at most five reads ago): requests in flight and hosts with
    /// URLs queued are as the last `stats` read them.
    pub async fn recent_stats(&mut self) -> Result<Stats, FrontierError> {
        self.read_stats(false).await
    }

    /// The crawl's counts: those read within 2 s unless `exact` and this
    /// worker changed something since; every count when `exact`, else the
    /// progress line's.
    pub(super) async fn read_stats(&mut self, exact: bool) -> Result<Stats, FrontierError> {
        let now = UnixMillis::now();
        let held = self.claimed();
        if let Some((mut s, full, read)) = self.stats_cache {
            let stands = if exact {
                full && !self.stats_stale
            } else {
                true
            };
            let every = u64::try_from(self.fleet.stats_every.as_millis()).unwrap_or(u64::MAX);
            if now < read.add_millis(every) && stands {
                s.queued += held;
                return Ok(s);
            }
        }
        let before = self.stats_cache.map(|(s, _, _)| s).unwrap_or_default();
        self.stats_stale = false;
        self.flush().await?;
        // The crawler asks for stats twice a second: that is this worker's
        // heartbeat in the fleet's list.
        redis::cmd("HSET")
            .arg(self.layout.workers_key())
            .arg(&self.worker)
            .arg(UnixMillis::now().as_millis())
            .exec_async(&mut self.con)
            .await
            .map_err(|e| self.err(e))?;
        let n = self.layout.partitions();
        let parts: Vec<u32> = if exact || self.part_counts.len() != n as usize {
            (0..n).collect()
        } else {
            // A slice, in turn; the others' counts as last read.
            let slice = n.div_ceil(STATS_SLICES);
            let first = self.stats_cursor % n;
            self.stats_cursor = (first + slice) % n;
            (0..slice).map(|i| (first + i) % n).collect()
        };
        let layout = &self.layout;
        let replies = across(&mut self.con, &parts, |pipe, p| {
            pipe.cmd("HMGET")
                .arg(layout.key(p, "meta"))
                .arg("queued")
                .arg("skipped")
                .arg("reissued");
            if exact {
                pipe.cmd("HLEN").arg(layout.key(p, "fl"));
                pipe.cmd("ZCARD").arg(layout.key(p, "cnt"));
            }
        })
        .await
        .map_err(|e| store_err(&self.url, e))?;
        let mut s = Stats::default();
        if !exact {
            s.in_flight = before.in_flight;
            s.keys = before.keys;
        }
        if self.part_counts.len() != n as usize {
            self.part_counts = vec![[0; 3]; n as usize];
        }
        if replies.len() != parts.len() {
            return Err(self.corrupt(format!(
                "stats: {} answers for {} partitions",
                replies.len(),
                parts.len()
            )));
        }
        for (&p, reply) in parts.iter().zip(replies) {
            let p = p as usize;
            let mut reply = reply.into_iter();
            let meta: Vec<Option<i64>> = reply
                .next()
                .map(redis::from_redis_value)
                .transpose()
                .map_err(|e| self.corrupt(format!("stats: {e}")))?
                .unwrap_or_default();
            // The exact read's two counts; none in the progress line's.
            let counts: Vec<u64> = reply
                .map(redis::from_redis_value)
                .collect::<Result<_, _>>()
                .map_err(|e| self.corrupt(format!("stats: {e}")))?;
            let get = |i: usize| meta.get(i).copied().flatten().unwrap_or(0).max(0) as u64;
            if let Some(c) = self.part_counts.get_mut(p) {
                *c = [get(0), get(1), get(2)];
            }
            if let Some(seen) = self.skipped_counts.get_mut(p) {
                if get(1) > *seen {
                    *seen = get(1);
                    self.skipped_owed.insert(p as u32);
                }
            }
            if let [fl, cnt] = counts[..] {
                s.in_flight += fl;
                s.keys += cnt;
            }
        }
        for c in &self.part_counts {
            s.queued += c[0];
            s.skipped += c[1];
            s.reissued += c[2];
        }
        self.stats_cache = Some((s, exact, now));
        // What this worker's claims hold is queued, not yet released.
        s.queued += held;
        Ok(s)
    }

    /// The hosts with the most URLs queued, across partitions.
    pub(super) async fn read_busiest(&mut self, n: usize) -> Result<Vec<KeyLoad>, FrontierError> {
        self.flush().await?;
        let parts: Vec<u32> = (0..self.layout.partitions()).collect();
        let layout = &self.layout;
        let replies = across(&mut self.con, &parts, |pipe, p| {
            pipe.cmd("ZRANGE")
                .arg(layout.key(p, "cnt"))
                .arg(0)
                .arg(n.saturating_sub(1))
                .arg("WITHSCORES");
        })
        .await
        .map_err(|e| store_err(&self.url, e))?;
        let per = replies
            .into_iter()
            .flatten()
            .map(redis::from_redis_value::<Vec<(String, f64)>>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.corrupt(format!("busiest: {e}")))?;
        let mut all: Vec<(String, u64)> = per
            .into_iter()
            .flatten()
            .map(|(k, s)| (k, (-s).max(0.0) as u64))
            .filter(|(_, c)| *c > 0)
            .collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(all
            .into_iter()
            .take(n)
            .map(|(key, queued)| KeyLoad {
                key,
                queued,
                head: None,
            })
            .collect())
    }

    /// What holds a URL back: its origin's robots.txt gate, else its host's
    /// politeness state as the store holds it.
    pub(super) async fn read_why_not_now(
        &mut self,
        url: &str,
        now: UnixMillis,
    ) -> Result<Option<Hold>, FrontierError> {
        let key = match self.keyer.key(url) {
            Ok(k) => k,
            Err(e) => return Ok(Some(Hold::BadUrl(e.to_string()))),
        };
        if self.config.robots_gate {
            let (origin, _) = self.origin_and_key(url);
            let p = self.layout.partition_of(&key);
            let mut c = redis::cmd("HGET");
            c.arg(self.layout.key(p, "rb")).arg(&origin);
            let gate: Option<String> = self.call(p, c, "why_not_now").await?;
            if let Some(g) = gate {
                if g.starts_with('F') {
                    return Ok(Some(Hold::RobotsFetching { origin }));
                }
                if let Some(rest) = g.strip_prefix('U') {
                    let (until, reason) = rest.split_once('\t').unwrap_or((rest, ""));
                    let until = UnixMillis(until.parse().unwrap_or(0));
                    if now < until {
                        return Ok(Some(Hold::RobotsUnavailable {
                            origin,
                            reason: reason.to_owned(),
                            next_in: until.millis_since(now),
                        }));
                    }
                }
            }
        }
        self.load(&key).await?;
        let at = self.store_now(now);
        Ok(self.politeness.why_not_now(&key, at))
    }

    /// The URLs dropped with their host since they were last taken, from
    /// the partitions whose counts say there are some.
    pub(super) async fn take_skipped_urls(&mut self) -> Result<Vec<Skipped>, FrontierError> {
        // The crawler asks after every release; reading every partition
        // that often would be most of the server's work. The stats (read
        // every 2 s for the progress line) count each partition's skipped
        // URLs, and only those where the count grew are read; every one is
        // read when neither they nor the stats were for 10 s, and after
        // `sync`.
        // Whichever worker asks first takes them, so each is reported once.
        let now = UnixMillis::now();
        let every =
            |t: Option<UnixMillis>| t.is_none_or(|t| now >= t.add_millis(SKIPPED_FULL_EVERY));
        let full = std::mem::take(&mut self.skipped_full)
            || (every(self.stats_cache.map(|(_, _, read)| read)) && every(self.skipped_at));
        let parts: Vec<u32> = if full {
            self.skipped_at = Some(now);
            self.skipped_owed.clear();
            (0..self.layout.partitions()).collect()
        } else {
            std::mem::take(&mut self.skipped_owed).into_iter().collect()
        };
        if parts.is_empty() {
            return Ok(Vec::new());
        }
        // A plain `LPOP` with a count per partition (atomic, so each entry
        // goes to one worker): a script call would cost the server ten
        // times as much, every second, for each worker.
        let layout = &self.layout;
        let replies = across(&mut self.con, &parts, |pipe, p| {
            pipe.cmd("LPOP").arg(layout.key(p, "sk")).arg(SKIPPED_TAKE);
        })
        .await
        .map_err(|e| store_err(&self.url, e))?;
        let mut out = Vec::new();
        for (&p, reply) in parts.iter().zip(replies) {
            let Some(reply) = reply.into_iter().next() else {
                continue;
            };
            let items: Vec<String> = redis::from_redis_value::<Option<Vec<String>>>(reply)
                .map_err(|e| self.corrupt(format!("skipped: {e}")))?
                .unwrap_or_default();
            if items.len() >= SKIPPED_TAKE {
                // More wait there.
                self.skipped_owed.insert(p);
            }
            for item in items {
                let (url, reason): (String, String) = serde_json::from_str(&item)
                    .map_err(|_| self.corrupt(format!("a skipped entry: {item}")))?;
                out.push(Skipped { url, reason });
            }
        }
        Ok(out)
    }
}
