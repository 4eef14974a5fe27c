//! Calls to the store: scripts run on their partition, the pending settles sent in front
//! of a call, errors named after the server, and the worker's view of the server's clock.

use super::*;

impl<C: FleetConnection> FleetFrontier<C> {
    pub(super) fn err(&self, e: redis::RedisError) -> FrontierError {
        store_err(&self.url, e)
    }

    pub(super) fn corrupt(&self, what: impl Into<String>) -> FrontierError {
        FrontierError::Corrupt {
            store: self.url.clone(),
            what: what.into(),
        }
    }

    pub(super) fn now_arg(&self, now: UnixMillis) -> i64 {
        match self.fleet.time {
            TimeSource::Server => -1,
            TimeSource::Caller => i64::try_from(now.as_millis()).unwrap_or(i64::MAX),
        }
    }

    /// `now` on the store's clock.
    pub(super) fn store_now(&self, now: UnixMillis) -> UnixMillis {
        match self.fleet.time {
            TimeSource::Caller => now,
            TimeSource::Server => {
                let t = i64::try_from(now.as_millis()).unwrap_or(i64::MAX);
                UnixMillis(u64::try_from(t.saturating_add(self.offset.get())).unwrap_or(0))
            }
        }
    }

    /// Learns the server's clock from a reply stamped `at` to a call sent
    /// at `sent` on this process's clock (see [`ClockOffset`]).
    pub(super) fn saw_server_time(&mut self, at: UnixMillis, sent: UnixMillis) {
        if self.fleet.time == TimeSource::Server {
            self.offset.saw(at, sent);
        }
    }

    /// A script call on partition `p` (its key `key`, then its tag), as a
    /// command to pipeline.
    pub(super) fn script_cmd(
        &self,
        pick: fn(&Scripts) -> &redis::Script,
        p: u32,
        key: &str,
    ) -> redis::Cmd {
        let mut c = redis::cmd("EVALSHA");
        c.arg(pick(&self.scripts).get_hash())
            .arg(1)
            .arg(self.layout.key(p, key))
            .arg(self.layout.tag(p));
        c
    }

    /// Runs `cmds` (each on its partition) behind the completions waiting
    /// to go, in one round trip on a standalone server (see [`run_on`]),
    /// and returns the replies to `cmds`. Scripts the server lost are
    /// loaded and the lot sent again: every step is safe to repeat (a
    /// completion sent twice is stale the second time).
    pub(super) async fn exec(
        &mut self,
        cmds: Vec<(u32, redis::Cmd)>,
    ) -> Result<Vec<Value>, FrontierError> {
        // robots.txt states saved and sitemap lastmods told, then
        // completions, then `cmds`: a robots.txt flight settles after its
        // state is saved, and a sitemap's URLs are queued after what it
        // said of them is told.
        let mut all = self.outbox.take();
        all.append(&mut self.lastmods_out);
        let saves = all.len();
        let settles = self.settle_cmds();
        let n = settles.len();
        all.extend(settles);
        // The heartbeat, when due, rides with whatever call this is.
        let (beat, beats) = self.beat_cmds(self.last_now);
        let renewals = beats.len();
        all.extend(beats);
        let asked = cmds.len();
        all.extend(cmds);
        // The board, after the changes it tells of (standalone only).
        let posted = !self.posts.is_empty() && !self.con.one_slot_per_pipeline();
        if posted {
            let mut c = redis::cmd("EVALSHA");
            c.arg(self.scripts.board.get_hash())
                .arg(2)
                .arg(self.layout.board_key())
                .arg(self.layout.board_seq_key())
                .arg(self.layout.board_key());
            for p in std::mem::take(&mut self.posts) {
                c.arg(p);
            }
            all.push((0, c));
        }
        let sent = std::time::Instant::now();
        self.asked_at = sent;
        let replies = match run_on(&mut self.con, &all).await {
            Ok(v) => v,
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                self.load_scripts().await?;
                run_on(&mut self.con, &all)
                    .await
                    .map_err(|e| store_err(&self.url, e))?
            }
            Err(e) => return Err(store_err(&self.url, e)),
        };
        self.seen.round_trip(self.con.incarnation());
        if replies.len() != all.len() {
            return Err(self.corrupt(format!(
                "{} replies to {} commands",
                replies.len(),
                all.len()
            )));
        }
        let mut replies = replies.into_iter().skip(saves);
        for v in replies.by_ref().take(n) {
            // A completion whose lease lapsed, the URL back in the queue:
            // whoever holds the host now owns its state.
            let answers: Vec<String> = redis::from_redis_value(v.clone())
                .map_err(|_| self.corrupt(format!("settle: {v:?}")))?;
            self.stale += answers.iter().filter(|a| *a == "stale").count() as u64;
        }
        let renewed: Vec<Value> = replies.by_ref().take(renewals).collect();
        self.beat_answers(beat, renewed, self.last_now, sent)?;
        Ok(replies.take(asked).collect())
    }

    /// A script call on partition `p` with the arguments every step starts
    /// with: the partition's prefix, the time, and the in-flight limit.
    pub(super) fn step(
        &self,
        pick: fn(&Scripts) -> &redis::Script,
        p: u32,
        key: &str,
        now: UnixMillis,
    ) -> redis::Cmd {
        let mut c = self.script_cmd(pick, p, key);
        c.arg(self.now_arg(now)).arg(self.max_in());
        c
    }

    /// Runs one command on partition `p` behind the completions waiting to
    /// go (see [`exec`](Self::exec)), and reads its reply as `T`.
    pub(super) async fn call<T: redis::FromRedisValue>(
        &mut self,
        p: u32,
        cmd: redis::Cmd,
        what: &str,
    ) -> Result<T, FrontierError> {
        let v = self
            .exec(vec![(p, cmd)])
            .await?
            .pop()
            .ok_or_else(|| self.corrupt(format!("{what}: no answer")))?;
        redis::from_redis_value(v.clone()).map_err(|_| self.corrupt(format!("{what}: {v:?}")))
    }

    /// Sends the completions (and robots.txt states) waiting to go, if any.
    pub async fn flush(&mut self) -> Result<(), FrontierError> {
        self.pend_acks();
        if !self.pending.is_empty() || !self.outbox.is_empty() || !self.lastmods_out.is_empty() {
            self.exec(Vec::new()).await?;
        }
        Ok(())
    }
}
