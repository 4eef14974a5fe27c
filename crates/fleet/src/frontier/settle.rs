//! Settling flights and the outbox: completions, retries, give-backs and a claim's
//! acknowledgements held in the worker and sent in front of its next call.

use super::*;

/// How a flight's last request ends, as the `SETTLE` script reads it (its
/// `how` argument); [`Settle`] less the outcome, which pacing has already
/// learnt from, plus `Ack` for a claim's finished URLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Done with: nothing goes back.
    Done,
    /// Tried again: the URL goes back with this tag.
    Retry(u32),
    /// Not sent: the URL goes back as it was.
    Cancel,
    /// Not sent and never will be.
    Drop,
    /// A claim's finished URLs, forgotten by the store.
    Ack,
}

impl Step {
    fn of(how: &Settle<'_>) -> Step {
        match *how {
            Settle::Retry(_, tag) => Step::Retry(tag),
            Settle::Cancel => Step::Cancel,
            Settle::Drop => Step::Drop,
            // `Settle` is open to new endings; any other is done with.
            _ => Step::Done,
        }
    }

    /// The script's word for it.
    fn word(self) -> &'static str {
        match self {
            Step::Done => "done",
            Step::Retry(_) => "retry",
            Step::Cancel => "cancel",
            Step::Drop => "drop",
            Step::Ack => "ack",
        }
    }
}

/// One entry of a `SETTLE` call (see the script): the flight, how it
/// ends (or `ack`), the retry's tag, the host's state, `chk` and skip
/// reason to write, the fencing token, and the claim's URLs (score,
/// member) that go back to the queue (for `ack`, those it is done with).
struct SettleOp {
    id: u64,
    how: Step,
    /// A retry's tag; for a robots.txt flight, until when robots.txt is
    /// known (0: it is not).
    tag: u64,
    written: (String, String, String),
    token: u64,
    back: Vec<(String, String)>,
}

/// The `SETTLE` entry that tells the store a claim's URLs `members` are
/// done with (of flight `id`, fencing `token`).
fn ack_op(id: u64, token: u64, members: Vec<String>) -> SettleOp {
    SettleOp {
        id,
        how: Step::Ack,
        tag: 0,
        written: Default::default(),
        token,
        back: members.into_iter().map(|m| (String::new(), m)).collect(),
    }
}

/// What in a host's state holds its requests back past its delay: a
/// skip, a pause, a Retry-After.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct HoldsBack {
    skip: bool,
    paused_until: Option<UnixMillis>,
    retry_after_until: Option<UnixMillis>,
}

fn holds_back(h: &HostState) -> HoldsBack {
    HoldsBack {
        skip: h.skip.is_some(),
        paused_until: h.paused_until,
        retry_after_until: h.retry_after_until,
    }
}

/// Completions held back to go with the next call: past this many they go
/// at once.
const PENDING_MAX: usize = 64;

/// A claim's finished URLs held back to be told to the store together: past
/// this many they go at once. They go with the worker's next call, and
/// `keep_alive` (every turn of the crawl loop) makes one when they wait:
/// until then a lapse of the claim's lease (its worker killed) gives them
/// back to be fetched again. One entry per claimed page, each in a round
/// trip of its own, had been the most frequent step the server ran.
const ACKS_MAX: usize = 16;

impl<C: FleetConnection> FleetFrontier<C> {
    /// Where a [`RobotsStore::behind`] this frontier keeps the states it
    /// saves until the frontier's next call takes them to the server.
    pub fn outbox(&self) -> Outbox {
        self.outbox.clone()
    }

    /// The completions waiting to go, as `SETTLE` calls: one on a
    /// standalone server, one per partition (in order) on a Cluster.
    pub(super) fn settle_cmds(&mut self) -> Vec<(u32, redis::Cmd)> {
        let pending = std::mem::take(&mut self.pending);
        let one_slot = self.con.one_slot_per_pipeline();
        let mut cmds: Vec<(u32, redis::Cmd)> = Vec::new();
        let mut call_of: HashMap<u32, usize> = HashMap::new();
        for (p, args) in pending {
            let at = if one_slot {
                call_of.get(&p).copied()
            } else {
                cmds.len().checked_sub(1)
            };
            let at = match at {
                Some(at) => at,
                None => {
                    cmds.push((p, self.script_cmd(|s| &s.settle, p, "fl")));
                    call_of.insert(p, cmds.len() - 1);
                    cmds.len() - 1
                }
            };
            if let Some((_, c)) = cmds.get_mut(at) {
                c.arg(&args);
            }
        }
        cmds
    }

    pub(super) async fn settle(
        &mut self,
        released: &Released,
        how: Settle<'_>,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let at = self.store_now(now);
        let Some(fl) = self
            .flights
            .get_mut(&released.lease)
            .filter(|f| f.out && f.key == released.key)
        else {
            return Err(FrontierError::UnknownLease {
                lease: released.lease,
                url: released.url.clone(),
            });
        };
        fl.out = false;
        if fl.orphan {
            // Its lease lapsed and the host is another release's now.
            self.flights.remove(&released.lease);
            return Ok(());
        }
        let before = self.politeness.get(&fl.key).map(holds_back);
        match how.outcome() {
            Some(o) => self.politeness.finish(&fl.key, at, o),
            None => self.politeness.unstart(&fl.key, &fl.started),
        }
        // A wait the answer imposed (Retry-After, a pause, a skip) goes to
        // the store now, not with the next call: a worker killed before
        // that call would take it along, and the host's next holder would
        // wait only its delay.
        let after = self.politeness.get(&fl.key).map(holds_back);
        let urgent = after != before && after.is_some_and(|h| h != HoldsBack::default());
        // A claim goes on here while it holds URLs, the request ended for
        // good, and the host is still to be fetched.
        let skipped = self
            .politeness
            .get(&fl.key)
            .is_some_and(|h| h.skip.is_some());
        // A robots.txt release's claim goes on once the robots.txt is known.
        let known = fl.robots.as_ref().is_none_or(|(_, until)| until.is_some());
        let step = Step::of(&how);
        if !fl.rest.is_empty() && matches!(step, Step::Done | Step::Drop) && !skipped && known {
            // A URL of the claim is done: the store forgets it with the
            // next call (the crawl makes one every turn), so a lapse does
            // not give it back. '' stands for the page the flight was
            // released for; a robots.txt flight's robots.txt is told
            // known instead.
            let member = match (&fl.current, &fl.robots) {
                (Some((_, member)), _) => Some(member.clone()),
                (None, None) => Some(String::new()),
                (None, Some((origin, Some(until)))) => {
                    let known = (fl.partition, origin.clone(), *until);
                    let holder = (fl.id, fl.token, fl.key.clone());
                    self.tell_known(known, holder, now).await?;
                    None
                }
                (None, Some(_)) => None,
            };
            let Some(fl) = self.flights.get_mut(&released.lease) else {
                return Ok(());
            };
            if let (true, Some(member)) = (fl.held, member) {
                fl.acks.push(member);
                if fl.acks.len() >= ACKS_MAX || urgent {
                    let ack = (fl.partition, fl.id, fl.token, std::mem::take(&mut fl.acks));
                    let key = fl.key.clone();
                    self.ack(ack, now, urgent.then_some(key.as_str())).await?;
                }
            } else if urgent {
                let ack = (fl.partition, fl.id, fl.token, Vec::new());
                let key = fl.key.clone();
                self.ack(ack, now, Some(&key)).await?;
            }
            if urgent {
                self.flush().await?;
            }
            return Ok(());
        }
        if let Some(fl) = self.flights.remove(&released.lease) {
            self.settle_flight(fl, step, now).await?;
            if urgent {
                self.flush().await?;
            }
        }
        Ok(())
    }

    /// Ends flight `id` in the store: the host's state as this worker's
    /// controller has it, how its last request ended (`how`), and the
    /// claim's URLs that go back to the queue.
    pub(super) async fn settle_flight(
        &mut self,
        fl: Flight,
        how: Step,
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let (state, chk, why) = self.written(&fl.key);
        let p = fl.partition;
        // A robots.txt flight's settle carries until when its robots.txt is
        // known; a page's, the tag it is retried with (a claim's later page
        // goes back with it, below).
        let op_tag = match (&fl.robots, &fl.current, how) {
            (Some((_, until)), _, _) => until.unwrap_or(0),
            (None, None, Step::Retry(tag)) => u64::from(tag),
            (None, _, _) => 0,
        };
        // The URLs done, and the one out last, leave the claim's gathered
        // record first (an empty score says so): done, they must not go
        // back with what the claim did not release; retried or given
        // back, the last goes back once, below.
        let mut back: Vec<(String, String)> = Vec::new();
        if fl.held {
            back.extend(fl.acks.into_iter().map(|m| (String::new(), m)));
            if let Some((_, member)) = &fl.current {
                back.push((String::new(), member.clone()));
            }
        }
        // The script knows the claim's first URL; a later one that goes
        // back is sent with the rest.
        let how = match (fl.current, how) {
            (Some((score, member)), Step::Retry(tag)) => {
                let rest = member.split_once('\t').map_or("", |(_, r)| r);
                back.push((score, format!("{tag}\t{rest}")));
                Step::Done
            }
            (Some(sm), Step::Cancel) => {
                back.push(sm);
                Step::Done
            }
            (_, how) => how,
        };
        back.extend(fl.rest);
        // It goes with the next call (a release, most often), in the same
        // round trip: until then the host counts as in flight, which only
        // holds it back.
        self.changed(p);
        let op = SettleOp {
            id: fl.id,
            how,
            tag: op_tag,
            written: (state, chk, why),
            token: fl.token,
            back,
        };
        self.pend(p, op, now).await
    }

    /// Queues `op` on partition `p` to go in front of the next call (see
    /// `SETTLE`); past [`PENDING_MAX`] waiting, they all go at once.
    async fn pend(&mut self, p: u32, op: SettleOp, now: UnixMillis) -> Result<(), FrontierError> {
        let args = self.settle_args(p, op, now);
        self.push_pending(p, args).await
    }

    /// A `SETTLE` entry's arguments.
    fn settle_args(&self, p: u32, op: SettleOp, now: UnixMillis) -> Vec<String> {
        let (state, chk, why) = op.written;
        let mut args = vec![
            self.layout.tag(p).to_string(),
            self.now_arg(now).to_string(),
            self.max_in().to_string(),
            op.id.to_string(),
            op.how.word().to_owned(),
            op.tag.to_string(),
            state,
            chk,
            why,
            op.token.to_string(),
            op.back.len().to_string(),
        ];
        for (score, member) in op.back {
            args.push(score);
            args.push(member);
        }
        args
    }

    /// Queues a `SETTLE` entry's arguments; past [`PENDING_MAX`] waiting,
    /// they all go at once.
    pub(super) async fn push_pending(
        &mut self,
        p: u32,
        args: Vec<String>,
    ) -> Result<(), FrontierError> {
        self.pending.push((p, args));
        if self.pending.len() >= PENDING_MAX {
            self.flush().await?;
        }
        Ok(())
    }

    /// Tells the store that URLs a claim gathered (`members`, of the
    /// flight `id` with `token` on partition `p`) are done with, in front
    /// of the next call like a completion, with host `key`'s state when
    /// given. It changes nothing another release waits for, so the
    /// partition is not asked again for it.
    async fn ack(
        &mut self,
        (p, id, token, members): (u32, u64, u64, Vec<String>),
        now: UnixMillis,
        key: Option<&str>,
    ) -> Result<(), FrontierError> {
        let op = SettleOp {
            written: key.map(|k| self.written(k)).unwrap_or_default(),
            ..ack_op(id, token, members)
        };
        self.pend(p, op, now).await
    }

    /// Tells the store, with the next call, that an origin's robots.txt
    /// is known until `until` while the robots.txt flight's claim goes on:
    /// its lapse then leaves the origin known instead of fetching
    /// robots.txt again. The host's state goes too, with the pacing the
    /// robots.txt set (its Crawl-delay), fenced by the flight's token
    /// (`holder`: id, token, host): a worker that takes the host over after
    /// a lapse keeps that pacing instead of the state from before it.
    async fn tell_known(
        &mut self,
        (p, origin, until): (u32, String, u64),
        (id, token, key): (u64, u64, String),
        now: UnixMillis,
    ) -> Result<(), FrontierError> {
        let args = self.known_args(p, (origin, until), Default::default(), String::new(), now);
        self.push_pending(p, args).await?;
        let op = SettleOp {
            written: self.written(&key),
            ..ack_op(id, token, Vec::new())
        };
        self.pend(p, op, now).await
    }

    /// A `SETTLE` `known` entry's arguments: `origin`'s robots.txt is
    /// known until `until`; with a host `key` (not ''), its state written.
    pub(super) fn known_args(
        &self,
        p: u32,
        (origin, until): (String, u64),
        (state, chk, why): (String, String, String),
        key: String,
        now: UnixMillis,
    ) -> Vec<String> {
        vec![
            self.layout.tag(p).to_string(),
            self.now_arg(now).to_string(),
            self.max_in().to_string(),
            origin,
            "known".to_owned(),
            until.to_string(),
            state,
            chk,
            why,
            key,
            "0".to_owned(),
        ]
    }

    /// Every claim's finished URLs held back, to go with the next call.
    pub(super) fn pend_acks(&mut self) {
        let mut ids: Vec<u64> = self
            .flights
            .iter()
            .filter(|(_, f)| !f.acks.is_empty() && !f.orphan)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            if let Some(fl) = self.flights.get_mut(&id) {
                let op = ack_op(fl.id, fl.token, std::mem::take(&mut fl.acks));
                let p = fl.partition;
                let args = self.settle_args(p, op, self.last_now);
                self.pending.push((p, args));
            }
        }
    }
}
