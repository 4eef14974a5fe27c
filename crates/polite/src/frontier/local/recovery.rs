//! Recovery: opening a frontier on disk after a clean close or a crash.
//! The queues come back from the summary the last `sync` or clean close
//! wrote when it describes this very generation of the store, else from
//! reading every queued URL and seen fingerprint; pages that were in flight
//! are in their place in the queue (their entries stay queued until they
//! settle; an older store's in-flight entries are put back); hosts'
//! politeness states and robots.txt gates are restored. The summary is
//! written here too.

use super::seen_filter::SeenFilter;
use super::*;
use crate::store::FlightEntry;

/// Keys from another mode would split a host's budget in two: a store
/// keeps the mode it was made with.
fn check_key_mode(
    store: &mut Store,
    path: &Path,
    config: &FrontierConfig,
) -> Result<(), FrontierError> {
    let wanted = serde_json::to_string(&config.key_mode).unwrap_or_default();
    let wanted = wanted.trim_matches('"');
    let stored = store.key_mode(wanted)?;
    if stored != wanted {
        return Err(FrontierError::KeyMode {
            store: path.display().to_string(),
            stored,
            wanted: wanted.to_owned(),
        });
    }
    Ok(())
}

impl LocalFrontier {
    /// Whether [`open`](Self::open) restored the queues and the Bloom
    /// filter from the summary the last [`sync`](Self::sync) or clean close
    /// wrote (reading state proportional to the keys), rather than by
    /// reading every queued URL and seen fingerprint (the summary was
    /// missing, damaged, or older than the store).
    pub fn opened_from_summary(&self) -> bool {
        self.from_summary
    }

    /// Opens (or creates) a frontier stored in the directory `path`.
    ///
    /// Reopening after a crash restores every queued URL, puts the URLs
    /// that were in flight back at their place in the queue (at-least-once;
    /// counted in [`Stats::reissued`]), and restores each host's politeness
    /// state, so no delay or backoff starts again from zero.
    pub fn open(
        path: &Path,
        politeness: Politeness,
        config: FrontierConfig,
    ) -> Result<LocalFrontier, FrontierError> {
        let mut store = Store::open(path, config.commit_every)?;
        check_key_mode(&mut store, path, &config)?;
        let mut f = LocalFrontier::in_memory(politeness, config);
        let mut in_flight = 0;
        for (key, bytes) in store.scan_hosts()? {
            let state = super::host_bytes::decode_stored(&store, &key, &bytes)?;
            in_flight += u64::from(state.in_flight);
            f.politeness.restore(&key, state);
        }
        for (origin, until) in store.scan_robots()? {
            f.robots.insert(origin, RobotsGate::Known { until });
        }
        // A summary of exactly this generation of the store spares reading
        // every queued URL and seen fingerprint (see `summary`).
        let summary = summary::read(path)
            .filter(|s| s.generation == store.generation())
            .filter(|s| f.config.bloom == s.bloom.is_some());
        // Sequence numbers only need to be unique among live entries.
        let (flights, max_seq) = f.reissue(&mut store)?;
        // The releases in flight at the last commit; a store from before
        // that was recorded wrote every host's state when a request ended,
        // so the states count them (an older store's in-flight entries
        // did too).
        let flying = store.flying_at_open().unwrap_or(in_flight);
        f.reissued = flying.max(flights.len() as u64);
        if let Some(s) = summary {
            let max = f.config.expected_urls;
            if let Some(bloom) = restore_bloom(&store, s.bloom.as_ref(), max)? {
                f.restore_from_summary(s, flights, max_seq, bloom);
                f.store = Some(store);
                f.rest_idle_keys();
                return Ok(f);
            }
        }
        f.restore_by_scan(&store, max_seq)?;
        f.store = Some(store);
        f.rest_idle_keys();
        Ok(f)
    }

    /// Puts the URLs an older store kept in flight back in their queues
    /// (at-least-once), returning them and the next free sequence number.
    fn reissue(&mut self, store: &mut Store) -> Result<(Vec<FlightEntry>, u64), FrontierError> {
        let mut max_seq = 0;
        let flights = store.scan_flight()?;
        for fl in &flights {
            store.put_queue(&fl.entry.key, &fl.entry.sort, fl.entry.tag, &fl.entry.url);
            store.del_flight(fl.lease);
            max_seq = max_seq.max(fl.lease + 1);
        }
        store.commit()?;
        Ok((flights, max_seq))
    }

    /// The queues' counts and heads from the summary (their windows fill
    /// from the store as they are released), and the Bloom filter it
    /// carries.
    fn restore_from_summary(
        &mut self,
        s: summary::Summary,
        flights: Vec<FlightEntry>,
        max_seq: u64,
        bloom: Option<SeenFilter>,
    ) {
        self.summary_generation = Some(s.generation);
        for k in s.keys {
            let q = Box::new(KeyQueue {
                count: k.count,
                rest_low: Some(k.head),
                ..KeyQueue::default()
            });
            self.queues.insert(k.key, q);
        }
        // The in-flight URLs just put back are not in the summary.
        for fl in flights {
            let q = self
                .queues
                .entry(fl.entry.key.into_boxed_str())
                .or_default();
            q.count += 1;
            q.rest_low = Some(q.rest_low.map_or(fl.entry.sort, |r| r.min(fl.entry.sort)));
        }
        self.seq = s.next_seq.max(max_seq);
        self.schedule_all();
        self.seen = Seen::Disk(bloom);
        self.from_summary = true;
    }

    /// The queues from every queued URL in the store, and the Bloom filter
    /// from every seen fingerprint.
    fn restore_by_scan(&mut self, store: &Store, mut max_seq: u64) -> Result<(), FrontierError> {
        let window = self.config.window.max(1);
        // Entries arrive grouped by key: build each key's queue whole.
        let mut cur: Option<(Box<str>, Box<KeyQueue>)> = None;
        let queues = &mut self.queues;
        store.scan_queue_raw(|key, sort, tag, url| {
            max_seq = max_seq.max(sort_seq(sort) + 1);
            if cur.as_ref().is_none_or(|(k, _)| &**k != key) {
                if let Some((k, q)) = cur.take() {
                    queues.insert(k, q);
                }
                cur = Some((key.into(), Box::default()));
            }
            if let Some((_, q)) = cur.as_mut() {
                q.count += 1;
                if q.window.len() < window {
                    let url = url.into();
                    q.window.insert(*sort, Queued { tag, url });
                } else if q.rest_low.is_none() {
                    q.rest_low = Some(*sort);
                }
            }
            Ok(())
        })?;
        if let Some((k, q)) = cur.take() {
            self.queues.insert(k, q);
        }
        self.seq = max_seq;
        self.schedule_all();
        self.seen = Seen::Disk(if self.config.bloom {
            // Sized for twice what the store has seen.
            let capacity = store.seen_estimate().saturating_mul(2);
            Some(SeenFilter::new(capacity, self.config.expected_urls).filled_from(store)?)
        } else {
            None
        });
        Ok(())
    }

    /// Counts the queued URLs and schedules every key at once.
    fn schedule_all(&mut self) {
        self.total = self.queues.values().map(|q| q.count).sum();
        let keys: Vec<Box<str>> = self.queues.keys().cloned().collect();
        for k in keys {
            self.schedule(&k, UnixMillis::EPOCH);
        }
    }

    /// Writes the summary of the store as it is now committed. `false`
    /// when the store could not commit or flush.
    pub(super) fn write_summary(&mut self) -> bool {
        self.save_unsaved();
        let Some(store) = self.store.as_mut() else {
            return true;
        };
        if store.commit().is_err() {
            return false;
        }
        if self.summary_generation == Some(store.generation()) {
            return true; // the summary on disk already describes this state
        }
        if store.flush_large_memtables().is_err() {
            return false;
        }
        // Pages in flight are still queued on disk: a reopen counts them.
        let mut flying: HashMap<&str, (u64, Sort)> = HashMap::new();
        for fl in self.flight.values() {
            if let Flight::Page { key, sort, .. } = fl {
                let e = flying.entry(&**key).or_insert((0, *sort));
                *e = (e.0 + 1, e.1.min(*sort));
            }
        }
        let mut keys = Vec::with_capacity(self.queues.len());
        for (k, q) in &self.queues {
            let (n, low) = flying.remove(&**k).map_or((0, None), |(n, s)| (n, Some(s)));
            let queued = match q.count {
                0 => None,
                _ => match q.head() {
                    Some(h) => Some(*h),
                    None => return true, // not a state a summary can describe
                },
            };
            let Some(head) = queued.into_iter().chain(low).min() else {
                continue;
            };
            keys.push(summary::KeySummary {
                key: k.clone(),
                count: q.count + n,
                head,
            });
        }
        for (k, (count, head)) in flying {
            keys.push(summary::KeySummary {
                key: k.into(),
                count,
                head,
            });
        }
        let bloom = match &self.seen {
            Seen::Disk(Some(f)) => Some(f.saved()),
            _ => None,
        };
        let s = summary::Summary {
            generation: store.generation(),
            next_seq: self.seq,
            keys,
            bloom,
        };
        if summary::write(store.path(), &s).is_ok() {
            self.summary_generation = Some(s.generation);
        }
        true
    }
}

/// The Bloom filter a summary carries, if it holds every fingerprint of a
/// sample of the seen-set; `Some(None)` when the frontier keeps none.
/// `None` when it cannot be trusted (rebuild instead).
fn restore_bloom(
    store: &Store,
    saved: Option<&(u32, Vec<u64>)>,
    max: u64,
) -> Result<Option<Option<SeenFilter>>, FrontierError> {
    let Some((hashes, words)) = saved else {
        return Ok(Some(None));
    };
    if words.is_empty() || *hashes == 0 {
        return Ok(None);
    }
    let filter = SeenFilter::restored(*hashes, words.clone(), max);
    let sample = store.sample_seen(256)?;
    if sample.iter().all(|fp| filter.contains(fp)) {
        Ok(Some(Some(filter)))
    } else {
        Ok(None)
    }
}

impl Drop for LocalFrontier {
    /// Commits what is pending, writes the summary and starts fjall on an
    /// empty journal, so a clean exit reopens fast (best effort: a failure
    /// here only costs reopen time).
    fn drop(&mut self) {
        if self.store.is_some() && !self.write_summary() {
            return; // a store that cannot flush (a full disk) is left as it is
        }
        let keep = self.config.rotate_journal_above;
        if let Some(store) = self.store.as_mut() {
            let _ = store.rotate_journal(keep);
        }
    }
}
