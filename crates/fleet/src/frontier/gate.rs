//! The robots.txt gate in the store, and requests outside the queues (a
//! robots.txt redirect's hop to another host) that take a host's slot.

use super::*;

impl<C: FleetConnection> FleetFrontier<C> {
    /// Tells the store robots.txt of `origin` is unavailable until `until`.
    pub(super) async fn gate_unavailable(
        &mut self,
        origin: &str,
        until: UnixMillis,
        reason: &str,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let (origin, key) = self.origin_and_key(origin);
        let p = self.layout.partition_of(key.as_deref().unwrap_or(&origin));
        let mut c = self.step(|s| &s.robots_unavailable, p, "rb", now);
        c.arg(&origin)
            .arg(key.unwrap_or_default())
            .arg(until.as_millis())
            .arg(reason);
        let _: String = self.call(p, c, "robots_unavailable").await?;
        self.changed(p);
        Ok(())
    }

    /// Tells the store robots.txt of `origin` is known: through this
    /// worker's robots.txt flight when it has one, in front of the next
    /// call otherwise.
    pub(super) async fn gate_known(
        &mut self,
        origin: &str,
        pacing: RobotsPacing,
        valid_until: UnixMillis,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let (origin, key) = self.origin_and_key(origin);
        let (state, chk, why) = match &key {
            Some(k) => {
                self.load(k).await?;
                self.politeness.set_robots(k, pacing);
                self.written(k)
            }
            None => Default::default(),
        };
        // This worker's robots.txt flight for the origin tells the store
        // when it settles (it writes the host's state then too).
        let mine = self
            .flights
            .values_mut()
            .find(|f| !f.orphan && f.out && f.robots.as_ref().is_some_and(|(o, _)| *o == origin));
        if let Some((_, known)) = mine.and_then(|f| f.robots.as_mut()) {
            *known = Some(valid_until.as_millis());
            return Ok(());
        }
        let p = self.layout.partition_of(key.as_deref().unwrap_or(&origin));
        // It goes in front of the next call, as a completion does: until
        // then the origin's gate says its fetch is under way, which only
        // holds its URLs back.
        let written = (state, chk, why);
        let known = (origin, valid_until.as_millis());
        let args = self.known_args(p, known, written, key.unwrap_or_default(), now);
        self.changed(p);
        self.push_pending(p, args).await
    }

    /// A request outside the queues (a robots.txt redirect's hop) asks for
    /// its host's slot in the store.
    pub(super) async fn begin_outside(
        &mut self,
        url: &str,
        now: UnixMillis,
    ) -> Result<Begin, FrontierError> {
        let key = match self.keyer.key(url) {
            Ok(k) => k,
            Err(e) => {
                return Ok(Begin::Refused {
                    reason: e.to_string(),
                })
            }
        };
        let p = self.layout.partition_of(&key);
        let mut c = self.step(|s| &s.begin, p, "chk", now);
        c.arg(&key).arg(self.politeness.config.min_delay);
        let sent = UnixMillis::now();
        let v: Vec<String> = self.call(p, c, "begin").await?;
        let at = |i: usize| v.get(i).and_then(|s| s.parse().ok()).map(UnixMillis);
        match v.first().map(String::as_str) {
            Some("started") => {
                if !self.holds(&key) {
                    let state = v.get(2).cloned().unwrap_or_default();
                    self.adopt(&key, &state);
                }
                let now = at(1).unwrap_or(now);
                self.saw_server_time(now, sent);
                self.politeness.start(&key, now);
                *self.begun.entry(key).or_default() += 1;
                self.changed(p);
                Ok(Begin::Started)
            }
            Some("wait") => Ok(Begin::Wait {
                until: at(2).ok_or_else(|| self.corrupt(format!("begin: {v:?}")))?,
            }),
            Some("refused") => Ok(Begin::Refused {
                reason: v.get(2).cloned().unwrap_or_default(),
            }),
            _ => Err(self.corrupt(format!("begin: {v:?}"))),
        }
    }

    /// A request outside the queues ended: the host's state written.
    pub(super) async fn end_outside(
        &mut self,
        url: &str,
        outcome: &Outcome,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let Ok(key) = self.keyer.key(url) else {
            return Ok(());
        };
        self.load(&key).await?;
        if let Some(n) = self.begun.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.begun.remove(&key);
            }
        }
        let at = self.store_now(now);
        self.politeness.finish(&key, at, outcome);
        let (state, chk, why) = self.written(&key);
        let p = self.layout.partition_of(&key);
        let mut c = self.step(|s| &s.end, p, "chk", now);
        c.arg(&key).arg(state).arg(chk).arg(why);
        let _: String = self.call(p, c, "end").await?;
        self.changed(p);
        Ok(())
    }
}
