//! The frontier's durable state on fjall (an LSM tree; the crate's design
//! notes say why fjall over redb and SQLite).
//!
//! Three keyspaces, grouped by how they are written, each entry's key led
//! by its table's byte where a keyspace holds more than one table:
//! - `work`, what churns:
//!   - 1, queue: `[key length u16][key][255 - priority][seq u64]` →
//!     `[tag u32][URL]`. The big-endian tail sorts a key's URLs by
//!     priority, then arrival, so a key's head is the first entry under
//!     its prefix. The tag is the caller's (a crawler keeps depth and
//!     retry counts in it).
//!   - 2, flight: `[lease u64]` → `[255 - priority][key length u16][key]
//!     [tag u32][URL]`: released, not yet completed, as earlier releases
//!     kept them; reopening puts any found back in the queue. A page in
//!     flight now keeps its queue entry until it settles (two entries a
//!     page fewer), so a kill leaves it queued with nothing to undo.
//! - `seen`, what only grows: `[fingerprint u128]` → empty, the
//!   deduplication set.
//! - `meta`, what is overwritten in place:
//!   - 4, hosts: `[key]` → the key's politeness state (postcard behind a
//!     layout mark; JSON before format 5).
//!   - 5, robots: `[origin]` → until when its robots.txt is known (u64).
//!   - the store's own, under keys in ASCII letters (after every table):
//!     `key-mode` → the key mode the store was created with; `format` →
//!     the layout version (u32, big-endian), [`FORMAT`]; `gen` → batches
//!     committed, then the releases in flight at that commit (two u64s:
//!     what a reopen counts as re-issued, since a host's state is not
//!     always rewritten when one of its requests ends).
//!
//! `meta` is the keyspace older releases read `format` from (format 2 on):
//! such a release refuses this store instead of taking it for a new one.
//! A fourth keyspace, `pad`, made the first time it is needed, takes the
//! filler of [`Store::rotate_journal`]. `work` and `pad` also hold one
//! marker, the one-byte key `[0]` (before every table), rewritten before
//! every flush: see [`Store::flush_memtables`].
//!
//! Three keyspaces, not one per table: fjall writes a table, a version
//! file and some fifteen fsyncs to create a keyspace, and creating seven
//! was 9 ms of a crawl's CPU, some 5 % at 300 hosts. Not fewer: in one
//! tree, the queue's churn had fjall's compactions rewrite the seen-set
//! and the hosts' states over and over (at 100,000 hosts its worker took
//! 12.6 CPU s with the seen-set alone and everything else together, 9.3
//! with these three, 7.6 with a keyspace per table).
//!
//! Format history: 1 recorded no version (the first release); 2 recorded
//! it, with 1's layout; 3 added the tag before each queued and in-flight
//! URL; 4 added the marker; 5 keeps politeness states in postcard, not
//! JSON; 6 groups the tables in three keyspaces (formats 1 to 5 had one
//! each); 7 records the releases in flight with the generation (6 had
//! the generation alone). Opening an older store copies its queue and
//! in-flight entries into `work` and its hosts and robots.txt entries into
//! `meta` (see [`upgrade`]). A store from a newer format is refused, never
//! guessed at.
//!
//! Every frontier operation is one write batch, so it lands whole or not
//! at all (a URL is never "seen" without being queued). A committed batch
//! is in the OS's buffers, which survive the process being killed; `sync`
//! adds an fsync for power loss.

mod upgrade;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fjall::{
    AbstractTree, Database, Keyspace, KeyspaceCreateOptions, OwnedWriteBatch, PersistMode,
};

use crate::controller::UnixMillis;
use crate::frontier::FrontierError;

/// The layout version this code writes, and the newest it reads.
pub(crate) const FORMAT: u32 = 7;

/// A queue entry's position within its key: `[255 - priority][seq]`.
pub(crate) type Sort = [u8; 9];

pub(crate) fn sort_key(priority: u8, seq: u64) -> Sort {
    let mut s = [0u8; 9];
    s[0] = 255 - priority;
    s[1..].copy_from_slice(&seq.to_be_bytes());
    s
}

pub(crate) fn sort_priority(s: &Sort) -> u8 {
    255 - s[0]
}

pub(crate) fn sort_seq(s: &Sort) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&s[1..]);
    u64::from_be_bytes(b)
}

/// The marker kept in `work` and `pad` (see the module docs);
/// every entry's key is longer, so scans start at [`AFTER_MARKER`].
const MARKER: &[u8] = &[0];

/// The smallest key after [`MARKER`].
const AFTER_MARKER: &[u8] = &[0, 0];

/// fjall rotates its journal at a flush that finds it past this many bytes.
const JOURNAL_ROTATES_PAST: u64 = 64_000_000;

/// Each keyspace's memtable is written out to a table past this size.
/// fjall's default (64 MiB) let the keyspaces hold some 100 MiB at 10,000
/// hosts; at 1 MiB a crawl's CPU time did not change measurably.
///
/// The store rotates its memtables itself, after each commit
/// ([`Store::rotate_full`]); fjall's own threshold ([`FJALL_BACKSTOP`]) is
/// a backstop it never reaches. Past its threshold fjall (3.1.13) asks its
/// worker to rotate after every write batch, one request per batch and
/// keyspace, into a queue of 1,000 that the worker itself also writes to:
/// with one worker, a burst of batches while it flushed filled the queue,
/// the worker then waited on it, and the store hung (a CI run caught
/// `frontier_sim` there; the fix is still open upstream).
const MEMTABLE_BYTES: u64 = 1 << 20;

/// fjall's own memtable threshold: see [`MEMTABLE_BYTES`].
const FJALL_BACKSTOP: u64 = 64 << 20;

/// The smallest memtable [`Store::flush_large_memtables`] writes out. A
/// flush costs about 2 ms whatever it holds (its table, a new version
/// file, four fsyncs); not writing out a memtable costs the next open
/// about 10 ms per MiB of it to replay. Flushing all seven at a 300-host
/// crawl's close was 8 % of its CPU, each of them under 64 KiB.
const FLUSH_WORTH: u64 = 256 << 10;

/// How long a flush of the memtables may take before the store gives up
/// on it (a full disk, a dead worker).
const FLUSH_WAIT: Duration = Duration::from_secs(30);

/// Waits until `done` holds, for at most `limit`.
fn wait_flushed(limit: Duration, done: impl Fn() -> bool) -> Result<(), std::io::Error> {
    let until = Instant::now() + limit;
    while !done() {
        if Instant::now() >= until {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "its memtables were not written out within {} s (is the disk full?)",
                    limit.as_secs()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// The most fingerprints [`Store`] keeps of what it committed (some 280
/// KiB at most): a 300-host crawl's whole seen-set, a bigger crawl's
/// new links of its last two thousand pages or so.
const RECENT_SEEN: usize = 8192;

/// One filler value: under fjall's journal compression threshold (4 KiB).
const PAD_VALUE: usize = 4000;

/// Filler held in memory before it is flushed: the memtable (a skip list)
/// costs about twice what it holds, and at 16 MB this was the crawl's
/// peak RSS, reached at exit.
const PAD_FLUSH_EVERY: u64 = 2 << 20;

/// The active journal of the fjall database in `dir` (fjall names its
/// journals `N.jnl` and writes to the highest N) and an upper bound on the
/// bytes it holds: fjall preallocates a new journal (64 MiB, sparse) and
/// truncates a reopened one to what it holds, so the smaller of the file's
/// length and its allocated blocks. `None` when there is none to read.
fn active_journal(dir: &Path) -> Option<(u64, u64)> {
    let mut best: Option<(u64, std::fs::Metadata)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let name = e.file_name();
        let Some(n) = name
            .to_str()
            .and_then(|s| s.strip_suffix(".jnl"))
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(b, _)| n > *b) {
            best = Some((n, e.metadata().ok()?));
        }
    }
    let (n, meta) = best?;
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::fs::MetadataExt;
        meta.len().min(meta.blocks().saturating_mul(512))
    };
    #[cfg(not(unix))]
    let bytes = meta.len();
    Some((n, bytes))
}

/// The tables' leading bytes (see the module docs): under every ASCII
/// letter, so none takes in the store's own entries.
const QUEUE: u8 = 1;
const FLIGHT: u8 = 2;
const HOSTS: u8 = 4;
const ROBOTS: u8 = 5;

/// The name of the keyspace holding the hosts' and robots.txt tables.
const TABLES: &str = "meta";

/// The name of the keyspace holding the queue and the requests in flight.
const WORK: &str = "work";

/// `table`'s key for `rest`.
fn table_key(table: u8, rest: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + rest.len());
    v.push(table);
    v.extend_from_slice(rest);
    v
}

/// `[key length u16][key]`: how a politeness key sits in an in-flight
/// entry.
#[cfg(test)]
fn key_prefix(key: &str) -> Vec<u8> {
    let len = u16::try_from(key.len()).unwrap_or(u16::MAX);
    let mut v = Vec::with_capacity(2 + key.len() + 9);
    v.extend_from_slice(&len.to_be_bytes());
    v.extend_from_slice(&key.as_bytes()[..usize::from(len)]);
    v
}

/// A queue entry's key in the keyspace: `[1][key length][key][sort]`.
fn queue_key(key: &str, sort: &Sort) -> Vec<u8> {
    let len = u16::try_from(key.len()).unwrap_or(u16::MAX);
    let mut v = Vec::with_capacity(1 + 2 + key.len() + 9);
    v.push(QUEUE);
    v.extend_from_slice(&len.to_be_bytes());
    v.extend_from_slice(&key.as_bytes()[..usize::from(len)]);
    v.extend_from_slice(sort);
    v
}

/// An in-flight entry's key: `[2][lease]`.
fn flight_key(lease: u64) -> [u8; 9] {
    let mut k = [FLIGHT; 9];
    k[1..].copy_from_slice(&lease.to_be_bytes());
    k
}

/// `[tag u32][rest]` split.
fn split_tag(v: &[u8]) -> Option<(u32, &[u8])> {
    let (tag, rest) = v.split_first_chunk::<4>()?;
    Some((u32::from_be_bytes(*tag), rest))
}

/// One queued URL read back.
pub(crate) struct Entry {
    pub key: String,
    pub sort: Sort,
    pub tag: u32,
    pub url: String,
}

/// One in-flight URL read back.
pub(crate) struct FlightEntry {
    pub lease: u64,
    pub entry: Entry,
}

pub(crate) struct Store {
    path: PathBuf,
    db: Database,
    /// The hosts' and robots.txt tables and the store's own entries
    /// (`meta`).
    tables: Keyspace,
    /// The queue and the requests in flight (`work`).
    work: Keyspace,
    /// The seen-set.
    seen: Keyspace,
    /// The filler's keyspace, once there is one.
    pad: Option<Keyspace>,
    batch: Option<OwnedWriteBatch>,
    ops: usize,
    /// Fingerprints put in the pending batch: [`seen`](Self::seen) answers
    /// from them, so a lookup needs no commit (a batch is not readable).
    /// The seen-set only grows, so this, `recent_seen` and the keyspace
    /// together are the whole answer.
    pending_seen: std::collections::HashSet<u128, crate::Hasher>,
    /// Fingerprints of batches committed in this process, up to
    /// `recent_cap` (emptied when full): a page's links mostly repeat
    /// those of the pages before it (menus, footers), and a repeat
    /// answered here spares a lookup in the keyspace (some 1 µs, 4,952 of
    /// them in the 300-host demo). Only what the keyspace holds, so it
    /// never answers for a fingerprint that is not there.
    recent_seen: std::collections::HashSet<u128, crate::Hasher>,
    recent_cap: usize,
    commit_every: usize,
    /// Committed batches so far (recorded in `meta` with each batch): a
    /// summary written at generation `g` describes the store only while
    /// this is still `g`.
    gen: u64,
    /// Releases in flight now, as the frontier last said (see
    /// [`Store::set_flying`]), recorded with the generation.
    flying: u64,
    /// What the last commit before this store was opened recorded.
    flying_at_open: Option<u64>,
}

impl Store {
    fn err(&self, e: fjall::Error) -> FrontierError {
        FrontierError::Store {
            store: self.path.display().to_string(),
            source: Box::new(e),
        }
    }

    fn corrupt(&self, what: impl Into<String>) -> FrontierError {
        FrontierError::Corrupt {
            store: self.path.display().to_string(),
            what: what.into(),
        }
    }

    /// Opens or creates the store, checking (and recording) its format; a
    /// store of an older layout is copied into this one first.
    pub fn open(path: &Path, commit_every: usize) -> Result<Store, FrontierError> {
        let err = |e: fjall::Error| FrontierError::Store {
            store: path.display().to_string(),
            source: Box::new(e),
        };
        // One background worker: with more, fjall 3.1 hands each compaction
        // request from worker to worker (worker 0 puts it back), a spin a
        // profile of a 300-host crawl put at a tenth of its CPU. One does
        // the flushes and compactions of a store this small. A 4 MiB block
        // cache: at 16 it filled by 100,000 hosts (some 18 MiB of the
        // crawler's heap) and the crawl's CPU did not tell the two apart.
        let db = Database::builder(path)
            .cache_size(4 << 20)
            .worker_threads(1)
            .open()
            .map_err(err)?;
        let ks = |name: &str| {
            db.keyspace(name, || {
                KeyspaceCreateOptions::default().max_memtable_size(FJALL_BACKSTOP)
            })
            .map_err(err)
        };
        let (tables, work, seen) = (ks(TABLES)?, ks(WORK)?, ks("seen")?);
        let pad = if db.keyspace_exists("pad") {
            Some(open_pad(&db).map_err(err)?)
        } else {
            None
        };
        let mut store = Store {
            path: path.to_owned(),
            tables,
            work,
            seen,
            pad,
            db,
            batch: None,
            ops: 0,
            pending_seen: std::collections::HashSet::default(),
            recent_seen: std::collections::HashSet::default(),
            recent_cap: RECENT_SEEN,
            commit_every: commit_every.max(1),
            gen: 0,
            flying: 0,
            flying_at_open: None,
        };
        (store.gen, store.flying_at_open) = store.recorded_generation()?;
        upgrade::from_older_layout(&mut store)?;
        store.check_format()?;
        // Filler a kill left behind (a close killed while padding): the
        // next flush would otherwise write it out to tables.
        if let Some(pad) = &store.pad {
            if pad.range(AFTER_MARKER..).next().is_some() {
                pad.clear().map_err(|e| store.err(e))?;
            }
        }
        Ok(store)
    }

    /// A meta entry of exactly `N` bytes (a big-endian number), if there
    /// is one.
    fn meta_bytes<const N: usize>(&self, name: &[u8]) -> Result<Option<[u8; N]>, FrontierError> {
        let Some(v) = self.get_meta(name)? else {
            return Ok(None);
        };
        let b: [u8; N] = v.as_slice().try_into().map_err(|_| {
            self.corrupt(format!(
                "the recorded {} is not {N} bytes",
                String::from_utf8_lossy(name)
            ))
        })?;
        Ok(Some(b))
    }

    fn get_meta(&self, name: &[u8]) -> Result<Option<Vec<u8>>, FrontierError> {
        let v = self.tables.get(name).map_err(|e| self.err(e))?;
        Ok(v.map(|v| v.to_vec()))
    }

    fn put_meta(&mut self, name: &[u8], value: &[u8]) {
        let ks = self.tables.clone();
        self.batch().insert(&ks, name, value);
    }

    /// The generation recorded, and the releases in flight it recorded
    /// (a store of format 6 recorded none).
    fn recorded_generation(&self) -> Result<(u64, Option<u64>), FrontierError> {
        let Some(v) = self.get_meta(b"gen")? else {
            return Ok((0, None));
        };
        let number = |b: &[u8]| b.try_into().map(u64::from_be_bytes);
        match v.len() {
            8 => Ok((number(&v).unwrap_or(0), None)),
            16 => Ok((number(&v[..8]).unwrap_or(0), number(&v[8..]).ok())),
            n => Err(self.corrupt(format!("the recorded gen is {n} bytes, not 8 or 16"))),
        }
    }

    /// The format recorded, if any.
    fn recorded_format(&self) -> Result<Option<u32>, FrontierError> {
        Ok(self.meta_bytes(b"format")?.map(u32::from_be_bytes))
    }

    /// Refuses a newer format; records [`FORMAT`] in a new store (and in
    /// an older one, copied by then: see [`upgrade`]).
    fn check_format(&mut self) -> Result<(), FrontierError> {
        match self.recorded_format()? {
            Some(FORMAT) => Ok(()),
            Some(found) if found > FORMAT => Err(FrontierError::NewerFormat {
                store: self.path.display().to_string(),
                found,
                supported: FORMAT,
            }),
            _ => {
                self.put_meta(b"format", &FORMAT.to_be_bytes());
                self.commit()
            }
        }
    }

    fn batch(&mut self) -> &mut OwnedWriteBatch {
        let db = &self.db;
        self.batch.get_or_insert_with(|| db.batch())
    }

    /// Puts a raw entry of `table` (for [`upgrade`]).
    fn put_raw(&mut self, table: u8, key: &[u8], value: &[u8]) {
        let ks = match table {
            QUEUE | FLIGHT => self.work.clone(),
            _ => self.tables.clone(),
        };
        self.batch().insert(&ks, table_key(table, key), value);
    }

    pub fn put_queue(&mut self, key: &str, sort: &Sort, tag: u32, url: &str) {
        let k = queue_key(key, sort);
        let mut v = Vec::with_capacity(4 + url.len());
        v.extend_from_slice(&tag.to_be_bytes());
        v.extend_from_slice(url.as_bytes());
        let ks = self.work.clone();
        self.batch().insert(&ks, k, v);
    }

    pub fn del_queue(&mut self, key: &str, sort: &Sort) {
        let k = queue_key(key, sort);
        let ks = self.work.clone();
        self.batch().remove(&ks, k);
    }

    /// An in-flight entry as earlier releases wrote them (for tests of
    /// reopening their stores).
    #[cfg(test)]
    pub fn put_flight(&mut self, lease: u64, key: &str, sort: &Sort, tag: u32, url: &str) {
        let mut v = vec![sort[0]];
        v.extend_from_slice(&key_prefix(key));
        v.extend_from_slice(&tag.to_be_bytes());
        v.extend_from_slice(url.as_bytes());
        let ks = self.work.clone();
        self.batch().insert(&ks, flight_key(lease), v);
    }

    pub fn del_flight(&mut self, lease: u64) {
        let ks = self.work.clone();
        self.batch().remove(&ks, flight_key(lease));
    }

    pub fn put_seen(&mut self, fp: u128) {
        let ks = self.seen.clone();
        self.batch().insert(&ks, fp.to_be_bytes(), b"");
        self.pending_seen.insert(fp);
    }

    /// Fingerprints put in the seen-set and not committed yet.
    pub fn pending_seen(&self) -> impl Iterator<Item = &u128> {
        self.pending_seen.iter()
    }

    pub fn put_host(&mut self, key: &str, state: &[u8]) {
        self.put_raw(HOSTS, key.as_bytes(), state);
    }

    pub fn put_robots(&mut self, origin: &str, valid_until: UnixMillis) {
        self.put_raw(
            ROBOTS,
            origin.as_bytes(),
            &valid_until.as_millis().to_be_bytes(),
        );
    }

    /// Ends one frontier operation: commits every `commit_every` operations.
    pub fn end_op(&mut self) -> Result<(), FrontierError> {
        self.ops += 1;
        if self.ops >= self.commit_every {
            self.commit()?;
        }
        Ok(())
    }

    /// Commits pending operations (they then survive the process dying).
    /// fjall keeps its journal in a userspace buffer until that fills, so a
    /// committed batch is also handed to the OS here (a write, not an
    /// fsync): without it a kill -9 lost the last operations, and a crawl
    /// fetched pages again that it had recorded done seconds before.
    pub fn commit(&mut self) -> Result<(), FrontierError> {
        self.ops = 0;
        if let Some(mut b) = self.batch.take() {
            // The generation moves with every batch, in the batch: a
            // summary of an older generation is then never trusted.
            self.gen += 1;
            let mut gen = [0; 16];
            gen[..8].copy_from_slice(&self.gen.to_be_bytes());
            gen[8..].copy_from_slice(&self.flying.to_be_bytes());
            b.insert(&self.tables, b"gen", gen);
            let committed = b
                .commit()
                .and_then(|()| self.db.persist(PersistMode::Buffer));
            if let Err(e) = committed {
                // Not known to be in the keyspace: never answered from.
                self.pending_seen.clear();
                return Err(self.err(e));
            }
            self.remember_committed();
            self.rotate_full()?;
        }
        Ok(())
    }

    /// Moves the fingerprints of the batch just committed to the recent
    /// ones, emptying those first when they would pass their bound.
    fn remember_committed(&mut self) {
        if self.recent_seen.len() + self.pending_seen.len() > self.recent_cap {
            self.recent_seen.clear();
        }
        if self.pending_seen.len() <= self.recent_cap {
            self.recent_seen.extend(self.pending_seen.drain());
        } else {
            self.pending_seen.clear();
        }
    }

    /// Seals each memtable past [`MEMTABLE_BYTES`], for fjall's worker to
    /// write out: one request per full memtable, from this thread.
    fn rotate_full(&self) -> Result<(), FrontierError> {
        for ks in self.keyspaces() {
            if ks.tree.active_memtable().size() > MEMTABLE_BYTES {
                ks.rotate_memtable().map_err(|e| self.err(e))?;
            }
        }
        Ok(())
    }

    fn keyspaces(&self) -> impl Iterator<Item = &Keyspace> {
        [&self.tables, &self.work, &self.seen]
            .into_iter()
            .chain(self.pad.as_ref())
    }

    /// Says how many releases are in flight now: the next commit records
    /// it.
    pub fn set_flying(&mut self, n: u64) {
        self.flying = n;
    }

    /// The releases in flight at the last commit before this store was
    /// opened, as recorded; `None` for a store written before this was
    /// recorded (its hosts' states then count them exactly).
    pub fn flying_at_open(&self) -> Option<u64> {
        self.flying_at_open
    }

    /// Commits and fsyncs (survives power loss).
    pub fn sync(&mut self) -> Result<(), FrontierError> {
        self.commit()?;
        self.db
            .persist(PersistMode::SyncAll)
            .map_err(|e| self.err(e))
    }

    /// Is the fingerprint in the seen-set (committed, or in the pending
    /// batch)? Commits nothing: with
    /// [`commit_every`](crate::frontier::FrontierConfig::commit_every)
    /// above 1, the caller decides when operations are handed on.
    pub fn seen(&mut self, fp: u128) -> Result<bool, FrontierError> {
        if self.pending_seen.contains(&fp) || self.recent_seen.contains(&fp) {
            return Ok(true);
        }
        self.seen
            .contains_key(fp.to_be_bytes())
            .map_err(|e| self.err(e))
    }

    /// Up to `n` entries of `key` from `from` (inclusive), in order.
    pub fn load(&mut self, key: &str, from: &Sort, n: usize) -> Result<Vec<Entry>, FrontierError> {
        if self.batch.is_some() {
            self.commit()?;
        }
        let start = queue_key(key, from);
        let mut end = queue_key(key, &[0xff; 9]);
        end.push(0xff);
        let mut out = Vec::new();
        for item in self.work.range(start..end).take(n) {
            let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
            out.push(self.decode_queue(&k, &v)?);
        }
        Ok(out)
    }

    fn decode_queue(&self, k: &[u8], v: &[u8]) -> Result<Entry, FrontierError> {
        let (key, sort, tag, url) = self.split_queue(k, v)?;
        Ok(Entry {
            key: key.to_owned(),
            sort,
            tag,
            url: url.to_owned(),
        })
    }

    /// A queue entry's key, position, tag and URL, borrowed from the
    /// store's bytes (`k` with its table byte).
    fn split_queue<'a>(
        &self,
        k: &'a [u8],
        v: &'a [u8],
    ) -> Result<(&'a str, Sort, u32, &'a str), FrontierError> {
        let bad = || self.corrupt("a queue entry's key is malformed");
        let k = k.get(1..).ok_or_else(bad)?;
        let len = usize::from(u16::from_be_bytes([
            *k.first().ok_or_else(bad)?,
            *k.get(1).ok_or_else(bad)?,
        ]));
        if k.len() != 2 + len + 9 {
            return Err(bad());
        }
        let key = std::str::from_utf8(&k[2..2 + len]).map_err(|_| bad())?;
        let mut sort = [0u8; 9];
        sort.copy_from_slice(&k[2 + len..]);
        let (tag, url) = split_tag(v).ok_or_else(|| self.corrupt("a queue entry has no tag"))?;
        let url =
            std::str::from_utf8(url).map_err(|_| self.corrupt("a queued URL is not UTF-8"))?;
        Ok((key, sort, tag, url))
    }

    /// Every queued entry, in key order (for reopening and export).
    pub fn scan_queue(
        &self,
        mut f: impl FnMut(Entry) -> Result<(), FrontierError>,
    ) -> Result<(), FrontierError> {
        self.scan_queue_raw(|key, sort, tag, url| {
            f(Entry {
                key: key.to_owned(),
                sort: *sort,
                tag,
                url: url.to_owned(),
            })
        })
    }

    /// Every queued entry, borrowed (no allocation per entry).
    pub fn scan_queue_raw(
        &self,
        mut f: impl FnMut(&str, &Sort, u32, &str) -> Result<(), FrontierError>,
    ) -> Result<(), FrontierError> {
        for item in self.work.prefix([QUEUE]) {
            let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
            let (key, sort, tag, url) = self.split_queue(&k, &v)?;
            f(key, &sort, tag, url)?;
        }
        Ok(())
    }

    /// Every in-flight entry (for reopening).
    pub fn scan_flight(&self) -> Result<Vec<FlightEntry>, FrontierError> {
        let mut out = Vec::new();
        for item in self.work.prefix([FLIGHT]) {
            let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
            out.push(self.decode_flight(&k[1..], &v)?);
        }
        Ok(out)
    }

    /// One in-flight entry from its lease (`k`, without its table byte)
    /// and value.
    fn decode_flight(&self, k: &[u8], v: &[u8]) -> Result<FlightEntry, FrontierError> {
        let bad = || self.corrupt("an in-flight entry is malformed");
        let lease = u64::from_be_bytes(k.try_into().map_err(|_| bad())?);
        let (&inv, rest) = v.split_first().ok_or_else(bad)?;
        let len = usize::from(u16::from_be_bytes([
            *rest.first().ok_or_else(bad)?,
            *rest.get(1).ok_or_else(bad)?,
        ]));
        let key = rest.get(2..2 + len).ok_or_else(bad)?;
        let (tag, url) = rest.get(2 + len..).and_then(split_tag).ok_or_else(bad)?;
        let mut sort = [0u8; 9];
        sort[0] = inv;
        sort[1..].copy_from_slice(&lease.to_be_bytes());
        Ok(FlightEntry {
            lease,
            entry: Entry {
                key: std::str::from_utf8(key).map_err(|_| bad())?.to_owned(),
                sort,
                tag,
                url: std::str::from_utf8(url).map_err(|_| bad())?.to_owned(),
            },
        })
    }

    /// Every fingerprint in the seen-set (for refilling the Bloom filter).
    pub fn scan_seen(&self, f: impl FnMut(u128)) -> Result<(), FrontierError> {
        self.seen_keys(usize::MAX, f)
    }

    /// The first `n` fingerprints of the seen-set, in order, to `f`.
    fn seen_keys(&self, n: usize, mut f: impl FnMut(u128)) -> Result<(), FrontierError> {
        for item in self.seen.iter().take(n) {
            let k = item.key().map_err(|e| self.err(e))?;
            let b: [u8; 16] = k[..]
                .try_into()
                .map_err(|_| self.corrupt("a seen-set entry is not 16 bytes"))?;
            f(u128::from_be_bytes(b));
        }
        Ok(())
    }

    /// One key's politeness state as last committed.
    pub fn get_host(&self, key: &str) -> Result<Option<Vec<u8>>, FrontierError> {
        let v = self
            .tables
            .get(table_key(HOSTS, key.as_bytes()))
            .map_err(|e| self.err(e))?;
        Ok(v.map(|v| v.to_vec()))
    }

    /// Every key's politeness state.
    pub fn scan_hosts(&self) -> Result<Vec<(String, Vec<u8>)>, FrontierError> {
        let mut out = Vec::new();
        for item in self.tables.prefix([HOSTS]) {
            let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
            let key = std::str::from_utf8(&k[1..])
                .map_err(|_| self.corrupt("a host key is not UTF-8"))?;
            out.push((key.to_owned(), v.to_vec()));
        }
        Ok(out)
    }

    /// The key mode recorded in the store, recording `mode` if there is none.
    pub fn key_mode(&mut self, mode: &str) -> Result<String, FrontierError> {
        if let Some(v) = self.get_meta(b"key-mode")? {
            return String::from_utf8(v)
                .map_err(|_| self.corrupt("the recorded key mode is not UTF-8"));
        }
        self.put_meta(b"key-mode", mode.as_bytes());
        self.commit()?;
        Ok(mode.to_owned())
    }

    /// Until when an origin's robots.txt is known, as last committed.
    pub fn get_robots(&self, origin: &str) -> Result<Option<UnixMillis>, FrontierError> {
        let v = self
            .tables
            .get(table_key(ROBOTS, origin.as_bytes()))
            .map_err(|e| self.err(e))?;
        v.map(|v| self.robots_until(&v)).transpose()
    }

    /// Every origin whose robots.txt is known, with until when.
    pub fn scan_robots(&self) -> Result<Vec<(String, UnixMillis)>, FrontierError> {
        let mut out = Vec::new();
        for item in self.tables.prefix([ROBOTS]) {
            let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
            let origin = std::str::from_utf8(&k[1..])
                .map_err(|_| self.corrupt("a robots.txt entry's origin is not UTF-8"))?;
            out.push((origin.to_owned(), self.robots_until(&v)?));
        }
        Ok(out)
    }

    /// A robots.txt entry's value: its expiry, 8 bytes big-endian.
    fn robots_until(&self, v: &[u8]) -> Result<UnixMillis, FrontierError> {
        let until: [u8; 8] = v
            .try_into()
            .map_err(|_| self.corrupt("a robots.txt entry's expiry is not 8 bytes"))?;
        Ok(UnixMillis(u64::from_be_bytes(until)))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes every keyspace's memtable out to tables, so that the next
    /// open only reads the journal instead of re-inserting it (2.6 s → 0.5 s
    /// after enqueueing 1 M URLs). Costs a flush; meant for rotating the
    /// journal. [`flush_large_memtables`](Self::flush_large_memtables) is
    /// the one for `sync` and a clean close.
    ///
    /// First it rewrites the marker in `work` and `pad`. fjall deletes an old
    /// journal only once every keyspace that had entries in it has tables
    /// at least as new; a keyspace whose entries were all deleted (a
    /// finished crawl's tables, the cleared filler) is compacted down to no
    /// tables, and then the old journals stay on disk for good, and are
    /// replayed at every open (2.7 s after releasing 1 M URLs). The marker
    /// keeps a table in each, as new as this flush.
    pub fn flush_memtables(&self) -> Result<(), FrontierError> {
        self.flush_memtables_from(0)
    }

    /// [`flush_memtables`](Self::flush_memtables) for the memtables of at
    /// least [`FLUSH_WORTH`] bytes only: a smaller one is cheaper to replay
    /// at the next open than to write out now.
    pub fn flush_large_memtables(&self) -> Result<(), FrontierError> {
        self.flush_memtables_from(FLUSH_WORTH)
    }

    fn flush_memtables_from(&self, bytes: u64) -> Result<(), FrontierError> {
        let mut b = self.db.batch();
        let gen = self.gen.to_be_bytes();
        // Only where entries are deleted: the seen-set only grows, and
        // `meta` always holds the format.
        for ks in std::iter::once(&self.work).chain(self.pad.as_ref()) {
            b.insert(ks, MARKER, gen);
        }
        b.commit().map_err(|e| self.err(e))?;
        for ks in self.keyspaces() {
            if ks.tree.active_memtable().size() >= bytes {
                ks.rotate_memtable().map_err(|e| self.err(e))?;
            }
        }
        // fjall's own wait (`rotate_memtable_and_wait`) has no end: with
        // the disk full its worker cannot write the tables, and a crawl
        // that stopped for that error hung at exit instead of saying so.
        wait_flushed(FLUSH_WAIT, || {
            self.keyspaces()
                .all(|ks| ks.tree.sealed_memtable_count() == 0)
        })
        .map_err(|e| FrontierError::Store {
            store: self.path.display().to_string(),
            source: Box::new(e),
        })
    }

    /// Makes fjall start a new, empty journal when its active one holds
    /// more than `keep` bytes, so the next open has next to
    /// nothing to replay. Meant for a clean close (it flushes the memtables
    /// first). Returns whether the journal was rotated.
    ///
    /// Why: fjall reads its whole active journal at every open, at about
    /// 1 µs per entry (a lookup of the entry's keyspace in its own tree per
    /// entry), even when every entry is already in tables; and it starts a
    /// new journal only at a flush that finds the active one past 64 MB,
    /// with no public call to do it sooner. Replaying a journal near that
    /// size took 1.3 s at reopen, whatever the store held. So this writes
    /// filler to a keyspace of its own (`pad`) until the journal is past
    /// that point, flushes (the flush rotates the journal, and the old one,
    /// fully flushed, is deleted), and clears `pad`.
    ///
    /// Costs up to 64 MB of sequential writes (the filler; its tables are
    /// compressed and cleared at once), about 0.1–0.3 s. Only speed depends
    /// on it: if fjall changes how it rotates, or the journal's size cannot
    /// be estimated, the journal is just not rotated (reported by the
    /// return value), and the filler never reaches the frontier's data. A
    /// kill while padding leaves filler in the journal for one slow open.
    pub fn rotate_journal(&mut self, keep: u64) -> Result<bool, FrontierError> {
        let Some((active, bytes)) = active_journal(&self.path) else {
            return Ok(false);
        };
        if bytes <= keep {
            return Ok(false);
        }
        if self.pad.is_none() {
            self.pad = Some(open_pad(&self.db).map_err(|e| self.err(e))?);
        }
        // The old journal is deleted only once nothing in it is unflushed.
        self.flush_memtables()?;
        self.pad_journal(bytes)?;
        // The cleared filler's keyspace has no tables now, which would pin
        // the next journals (see `flush_memtables`): its marker again.
        self.flush_memtables()?;
        Ok(active_journal(&self.path).is_some_and(|(now, _)| now != active))
    }

    /// Writes filler until a journal holding at most `bytes` is past
    /// fjall's rotation point, flushes it (the flush rotates), and clears it.
    fn pad_journal(&self, bytes: u64) -> Result<(), FrontierError> {
        let Some(pad) = &self.pad else {
            return Ok(());
        };
        // The estimate is an upper bound on what the journal holds, so pad
        // past the threshold with a margin; values stay under fjall's
        // journal compression threshold (4 KiB), or they would shrink.
        let mut need = JOURNAL_ROTATES_PAST.saturating_sub(bytes) + (1 << 20);
        let filler = vec![0u8; PAD_VALUE];
        let mut n: u32 = 0;
        let mut since_flush = 0u64;
        while need > 0 {
            let mut b = self.db.batch();
            for _ in 0..256 {
                b.insert(pad, n.to_be_bytes(), filler.as_slice());
                n = n.wrapping_add(1);
            }
            b.commit().map_err(|e| self.err(e))?;
            let wrote = 256 * PAD_VALUE as u64;
            need = need.saturating_sub(wrote);
            since_flush += wrote;
            // Flushing as it goes keeps the filler's memory small.
            if since_flush >= PAD_FLUSH_EVERY && need > 0 {
                pad.rotate_memtable_and_wait().map_err(|e| self.err(e))?;
                since_flush = 0;
            }
        }
        self.db
            .persist(PersistMode::Buffer)
            .map_err(|e| self.err(e))?;
        // This flush finds the journal past the threshold and rotates it.
        pad.rotate_memtable_and_wait().map_err(|e| self.err(e))?;
        pad.clear().map_err(|e| self.err(e))?;
        self.db
            .persist(PersistMode::SyncAll)
            .map_err(|e| self.err(e))
    }

    /// Batches committed so far (see [`Store::commit`]).
    pub fn generation(&self) -> u64 {
        self.gen
    }

    /// About how many fingerprints the seen-set holds (fjall's estimate,
    /// without a scan), to size a filter for it.
    pub fn seen_estimate(&self) -> u64 {
        self.seen.approximate_len() as u64
    }

    /// Up to `n` fingerprints of the seen-set, to test a persisted Bloom
    /// filter against before trusting it.
    pub fn sample_seen(&self, n: usize) -> Result<Vec<u128>, FrontierError> {
        let mut out = Vec::with_capacity(n.min(1024));
        self.seen_keys(n, |fp| out.push(fp))?;
        Ok(out)
    }
}

/// Opens (or makes) the filler's keyspace. Its tables are compressed: the
/// filler is zeros.
fn open_pad(db: &Database) -> Result<Keyspace, fjall::Error> {
    db.keyspace("pad", || {
        KeyspaceCreateOptions::default().data_block_compression_policy(
            fjall::config::CompressionPolicy::all(fjall::CompressionType::Lz4),
        )
    })
}

#[cfg(test)]
mod tests;
