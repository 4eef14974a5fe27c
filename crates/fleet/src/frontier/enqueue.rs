//! Enqueueing: links offered to the partitions' seen-sets (or a claim of this worker's),
//! and the worker's memory of URLs the store answered for.

use super::*;

/// URLs per enqueue script call (a call blocks the server while it runs).
const ENQUEUE_CHUNK: usize = 256;

/// A claim of this worker's that a host's new URL may join.
#[derive(Clone, Copy)]
struct Join {
    lease: u64,
    token: u64,
    /// URLs it may still take.
    left: usize,
}

/// An offer the store is to answer: its place among the offers, key,
/// fingerprint, origin, URL, and the claim it may join.
type Item = (usize, String, u128, String, String, Option<Join>);

/// Where an enqueue call's answer goes: the offer's place, key,
/// fingerprint, and the claim it may join with its member.
type Place = (usize, String, u128, Option<(Join, String)>);

/// Enqueue calls, each with the places of its answers.
type Calls = (Vec<(u32, redis::Cmd)>, Vec<Vec<Place>>);

impl<C: FleetConnection> FleetFrontier<C> {
    /// Offers URLs to the store, those the worker's memory answers aside
    /// (when `cached`), and remembers those the store answered for.
    pub(super) async fn offer(
        &mut self,
        offers: &[Offer<'_>],
        cached: bool,
        now: UnixMillis,
    ) -> Result<Vec<Admission>, FrontierError> {
        let mut out: Vec<Option<Admission>> = vec![None; offers.len()];
        let parts = self.by_partition(offers, cached, &mut out);
        let (cmds, places) = self.enqueue_cmds(parts, offers, now)?;
        // Partitions a URL may be queued in: for the board (a URL that
        // joins a claim gives no other worker anything to do).
        for (_, key, _, member) in places.iter().flatten() {
            if member.is_none() {
                self.posts.insert(self.layout.partition_of(key));
            }
        }
        // No call when every offer was answered here (remembered, or
        // refused).
        let replies = if cmds.is_empty() {
            Vec::new()
        } else {
            self.exec(cmds).await?
        };
        for (items, v) in places.into_iter().zip(replies) {
            self.take_answers(items, &v, &mut out)?;
        }
        out.into_iter()
            .map(|a| a.ok_or_else(|| self.corrupt("enqueue: an offer got no answer")))
            .collect()
    }

    /// This worker's claims, by host, with the room each has left: a
    /// host's new URL is offered to the claim that holds it.
    fn claim_room(&self) -> HashMap<String, Join> {
        let mut room = HashMap::new();
        if self.fleet.claim <= 1 {
            return room;
        }
        for (&lease, f) in &self.flights {
            if f.held && !f.orphan {
                let left = self.fleet.claim.saturating_sub(f.rest.len() + 1);
                let token = f.token;
                room.insert(f.key.clone(), Join { lease, token, left });
            }
        }
        room
    }

    /// The offers the store is to answer, per partition in the order first
    /// seen; those answered here (refused, or remembered when `cached`)
    /// get their answer in `out`.
    fn by_partition(
        &mut self,
        offers: &[Offer<'_>],
        cached: bool,
        out: &mut [Option<Admission>],
    ) -> Vec<(u32, Vec<Item>)> {
        let mut room = self.claim_room();
        let mut parts: Vec<(u32, Vec<Item>)> = Vec::new();
        let mut part_of: HashMap<u32, usize> = HashMap::new();
        for (i, o) in offers.iter().enumerate() {
            let (parsed, key) = match admit_offer(&self.keyer, o) {
                Ok(k) => k,
                Err(answer) => {
                    out[i] = Some(answer);
                    continue;
                }
            };
            let p = self.layout.partition_of(&key);
            let normal = parsed[..url::Position::AfterQuery].to_owned();
            let fp = xxhash_rust::xxh3::xxh3_128(normal.as_bytes());
            let held = || Held {
                url: o.url.to_owned(),
                priority: o.priority,
                tag: o.tag,
            };
            if cached && self.seen.answers(fp, held) {
                out[i] = Some(Admission::Duplicate);
                continue;
            }
            let join = room.get_mut(&key).filter(|j| j.left > 0).map(|j| {
                j.left -= 1;
                *j
            });
            let item = (i, key, fp, origin_of(&parsed), normal, join);
            let at = *part_of.entry(p).or_insert_with(|| {
                parts.push((p, Vec::new()));
                parts.len() - 1
            });
            parts[at].1.push(item);
        }
        parts
    }

    /// The enqueue calls, of at most [`ENQUEUE_CHUNK`] URLs each: on a
    /// Cluster each holds one partition's; on a standalone server, as many
    /// partitions' as fit. With each, the places its answers go to.
    fn enqueue_cmds(
        &self,
        parts: Vec<(u32, Vec<Item>)>,
        offers: &[Offer<'_>],
        now: UnixMillis,
    ) -> Result<Calls, FrontierError> {
        let one_slot = self.con.one_slot_per_pipeline();
        let mut cmds: Vec<(u32, redis::Cmd)> = Vec::new();
        let mut places: Vec<Vec<Place>> = Vec::new();
        for (p, items) in parts {
            for chunk in items.chunks(ENQUEUE_CHUNK) {
                let fits = places
                    .last()
                    .is_some_and(|l| !one_slot && l.len() + chunk.len() <= ENQUEUE_CHUNK);
                if !fits {
                    let mut c = self.script_cmd(|s| &s.enqueue, p, "seen");
                    c.arg(self.now_arg(now))
                        .arg(self.config.max_per_key)
                        .arg(self.config.max_total)
                        .arg(self.config.max_keys);
                    cmds.push((p, c));
                    places.push(Vec::new());
                }
                let (Some((_, c)), Some(held)) = (cmds.last_mut(), places.last_mut()) else {
                    return Err(self.corrupt("enqueue: no call to add to"));
                };
                c.arg(self.layout.tag(p)).arg(chunk.len());
                for (i, key, fp, origin, normal, join) in chunk {
                    let o = &offers[*i];
                    // The member a queue (or a claim) holds the URL as.
                    let member = format!("{}\t{origin}\t{normal}", o.tag);
                    c.arg(key)
                        .arg(&fp.to_be_bytes()[..])
                        .arg(o.priority)
                        .arg(&member);
                    match join {
                        Some(j) => c.arg(j.token),
                        None => c.arg(""),
                    };
                    held.push((*i, key.clone(), *fp, join.map(|j| (j, member))));
                }
            }
        }
        Ok((cmds, places))
    }

    /// One enqueue call's answers, into `out`: a URL that joined a claim
    /// takes its place there; those the store holds are remembered.
    fn take_answers(
        &mut self,
        items: Vec<Place>,
        v: &Value,
        out: &mut [Option<Admission>],
    ) -> Result<(), FrontierError> {
        let answers: Vec<String> = redis::from_redis_value(v.clone())
            .map_err(|_| self.corrupt(format!("enqueue: {v:?}")))?;
        if answers.len() != items.len() {
            return Err(self.corrupt(format!("enqueue: {v:?}")));
        }
        for ((i, key, fp, member), a) in items.into_iter().zip(answers) {
            if let Some(score) = a.strip_prefix("claimed\t") {
                let Some((join, member)) = member else {
                    return Err(self.corrupt(format!("enqueue: {a:?} for no claim")));
                };
                self.gathered(join.lease, score, member);
                self.seen.remember(fp);
                out[i] = Some(Admission::Queued);
                continue;
            }
            let answer = self
                .admission(&key, &a)
                .ok_or_else(|| self.corrupt(format!("enqueue: {a:?}")))?;
            if matches!(answer, Admission::Queued | Admission::Duplicate) {
                self.seen.remember(fp);
            }
            if answer == Admission::Queued {
                // Its host may be due now: the partition is asked again.
                // (Nothing else an offer can do changes what a partition
                // may release.)
                self.changed_here(self.layout.partition_of(&key));
            }
            out[i] = Some(answer);
        }
        Ok(())
    }

    /// A URL joined the claim `lease` in the store: it takes its place in
    /// the claim's queue order (by score, as the host's queue would hold
    /// it). A claim that ended meanwhile here has handed it back already
    /// (its settle gives back what it gathered).
    pub(super) fn gathered(&mut self, lease: u64, score: &str, member: String) {
        let Some(fl) = self.flights.get_mut(&lease).filter(|f| !f.orphan) else {
            return;
        };
        let s: f64 = score.parse().unwrap_or(f64::MAX);
        let at = fl
            .rest
            .iter()
            .position(|(other, _)| other.parse::<f64>().unwrap_or(f64::MAX) > s)
            .unwrap_or(fl.rest.len());
        fl.rest.insert(at, (score.to_owned(), member));
    }

    /// Sends again the offers the worker's memory answered while the store
    /// may have been losing them (see the crate's `seen` module). Their
    /// answers were given already: what the store says now only refills
    /// the memory.
    pub(super) async fn replay(&mut self, now: UnixMillis) -> Result<(), FrontierError> {
        loop {
            let held = self.seen.take_replay();
            if held.is_empty() {
                return Ok(());
            }
            let offers: Vec<Offer<'_>> = held
                .iter()
                .map(|h| Offer::new(&h.url, h.priority, h.tag))
                .collect();
            // The replay may itself find a new incarnation, and hand back
            // what was answered here since: hence the loop.
            self.offer(&offers, false, now).await?;
        }
    }

    /// What an `ENQUEUE` answer means for a URL of `key`.
    fn admission(&self, key: &str, answer: &str) -> Option<Admission> {
        Some(match answer {
            "queued" => Admission::Queued,
            "duplicate" => Admission::Duplicate,
            "total" => Admission::Backpressure {
                reason: format!(
                    "the frontier holds {} URLs, its bound",
                    self.config.max_total
                ),
            },
            "key" => Admission::Backpressure {
                reason: format!(
                    "{key} has {} URLs waiting, its bound",
                    self.config.max_per_key
                ),
            },
            "keys" => Admission::Backpressure {
                reason: format!(
                    "{} hosts have URLs waiting, the bound",
                    self.config.max_keys
                ),
            },
            a => Admission::Skipped {
                reason: a.strip_prefix("skip\t")?.to_owned(),
            },
        })
    }
}
