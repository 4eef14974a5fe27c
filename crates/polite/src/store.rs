//! The frontier's durable state on fjall (an LSM tree; the crate's design
//! notes say why fjall over redb and SQLite).
//!
//! Keyspaces:
//! - `queue`: `[key length u16][key][255 - priority][seq u64]` →
//!   `[tag u32][URL]`. The big-endian tail sorts a key's URLs by priority,
//!   then arrival, so a key's head is the first entry under its prefix. The
//!   tag is the caller's (a crawler keeps depth and retry counts in it).
//! - `flight`: `[lease u64]` → `[255 - priority][key length u16][key][tag
//!   u32][URL]`: released, not yet completed. Reopening puts these back in
//!   `queue`.
//! - `seen`: `[fingerprint u128]` → empty: the deduplication set.
//! - `hosts`: `[key]` → the key's politeness state as JSON.
//! - `robots`: `[origin]` → until when its robots.txt is known (u64).
//! - `meta`: `key-mode` → the key mode the store was created with;
//!   `format` → the layout version (u32, big-endian), [`FORMAT`].
//!
//! Format history: 1 recorded no version (the first release); 2 recorded
//! it, with 1's layout; 3 added the tag before each queued and in-flight
//! URL. Opening a format-1 or format-2 store rewrites its queue and flight
//! entries with tag 0, in one batch, and records 3. A store from a newer
//! format is refused, never guessed at.
//!
//! Every frontier operation is one write batch, so it lands whole or not
//! at all (a URL is never "seen" without being queued). A committed batch
//! is in the OS's buffers, which survive the process being killed; `sync`
//! adds an fsync for power loss.

use std::path::{Path, PathBuf};

use fjall::{Database, Keyspace, KeyspaceCreateOptions, OwnedWriteBatch, PersistMode};

use crate::controller::UnixMillis;
use crate::frontier::FrontierError;

/// The layout version this code writes, and the newest it reads.
pub(crate) const FORMAT: u32 = 3;

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

fn key_prefix(key: &str) -> Vec<u8> {
    let len = u16::try_from(key.len()).unwrap_or(u16::MAX);
    let mut v = Vec::with_capacity(2 + key.len() + 9);
    v.extend_from_slice(&len.to_be_bytes());
    v.extend_from_slice(&key.as_bytes()[..usize::from(len)]);
    v
}

fn queue_key(key: &str, sort: &Sort) -> Vec<u8> {
    let mut v = key_prefix(key);
    v.extend_from_slice(sort);
    v
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
    queue: Keyspace,
    flight: Keyspace,
    seen: Keyspace,
    hosts: Keyspace,
    robots: Keyspace,
    meta: Keyspace,
    batch: Option<OwnedWriteBatch>,
    ops: usize,
    commit_every: usize,
    /// Committed batches so far (recorded in `meta` with each batch): a
    /// summary written at generation `g` describes the store only while
    /// this is still `g`.
    gen: u64,
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

    /// Opens or creates the store, checking (and recording) its format.
    pub fn open(path: &Path, commit_every: usize) -> Result<Store, FrontierError> {
        let err = |e: fjall::Error| FrontierError::Store {
            store: path.display().to_string(),
            source: Box::new(e),
        };
        let db = Database::builder(path)
            .cache_size(32 << 20)
            .open()
            .map_err(err)?;
        let ks = |name: &str| {
            db.keyspace(name, KeyspaceCreateOptions::default)
                .map_err(err)
        };
        let mut store = Store {
            path: path.to_owned(),
            queue: ks("queue")?,
            flight: ks("flight")?,
            seen: ks("seen")?,
            hosts: ks("hosts")?,
            robots: ks("robots")?,
            meta: ks("meta")?,
            db,
            batch: None,
            ops: 0,
            commit_every: commit_every.max(1),
            gen: 0,
        };
        store.gen = match store.meta.get(b"gen").map_err(|e| store.err(e))? {
            Some(v) => u64::from_be_bytes(
                v.as_ref()
                    .try_into()
                    .map_err(|_| store.corrupt("the recorded generation is not 8 bytes"))?,
            ),
            None => 0,
        };
        store.check_format()?;
        Ok(store)
    }

    /// The store's recorded format: refuses a newer one, upgrades older
    /// ones, records [`FORMAT`] in a new store.
    fn check_format(&mut self) -> Result<(), FrontierError> {
        let found = match self.meta.get(b"format").map_err(|e| self.err(e))? {
            Some(v) => {
                let b: [u8; 4] = v
                    .as_ref()
                    .try_into()
                    .map_err(|_| self.corrupt("the recorded format is not 4 bytes"))?;
                Some(u32::from_be_bytes(b))
            }
            // Format 1 recorded a key mode and no format.
            None if self
                .meta
                .get(b"key-mode")
                .map_err(|e| self.err(e))?
                .is_some() =>
            {
                Some(1)
            }
            None => None,
        };
        match found {
            Some(f) if f > FORMAT => Err(FrontierError::NewerFormat {
                store: self.path.display().to_string(),
                found: f,
                supported: FORMAT,
            }),
            Some(FORMAT) => Ok(()),
            None => {
                let ks = self.meta.clone();
                self.batch().insert(&ks, b"format", FORMAT.to_be_bytes());
                self.commit()
            }
            // Formats 1 and 2 stored bare URLs: add tag 0 to each entry.
            Some(_) => {
                let mut rewrites: Vec<(Keyspace, Vec<u8>, Vec<u8>)> = Vec::new();
                for item in self.queue.iter() {
                    let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
                    let mut nv = 0u32.to_be_bytes().to_vec();
                    nv.extend_from_slice(&v);
                    rewrites.push((self.queue.clone(), k.to_vec(), nv));
                }
                for item in self.flight.iter() {
                    let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
                    let bad = || self.corrupt("an in-flight entry is malformed");
                    let len = usize::from(u16::from_be_bytes([
                        *v.get(1).ok_or_else(bad)?,
                        *v.get(2).ok_or_else(bad)?,
                    ]));
                    let split = 3 + len;
                    let head = v.get(..split).ok_or_else(bad)?;
                    let mut nv = head.to_vec();
                    nv.extend_from_slice(&0u32.to_be_bytes());
                    nv.extend_from_slice(&v[split..]);
                    rewrites.push((self.flight.clone(), k.to_vec(), nv));
                }
                for (ks, k, v) in rewrites {
                    self.batch().insert(&ks, k, v);
                }
                let ks = self.meta.clone();
                self.batch().insert(&ks, b"format", FORMAT.to_be_bytes());
                self.commit()
            }
        }
    }

    fn batch(&mut self) -> &mut OwnedWriteBatch {
        let db = &self.db;
        self.batch.get_or_insert_with(|| db.batch())
    }

    pub fn put_queue(&mut self, key: &str, sort: &Sort, tag: u32, url: &str) {
        let k = queue_key(key, sort);
        let mut v = Vec::with_capacity(4 + url.len());
        v.extend_from_slice(&tag.to_be_bytes());
        v.extend_from_slice(url.as_bytes());
        let ks = self.queue.clone();
        self.batch().insert(&ks, k, v);
    }

    pub fn del_queue(&mut self, key: &str, sort: &Sort) {
        let k = queue_key(key, sort);
        let ks = self.queue.clone();
        self.batch().remove(&ks, k);
    }

    pub fn put_flight(&mut self, lease: u64, key: &str, sort: &Sort, tag: u32, url: &str) {
        let mut v = vec![sort[0]];
        v.extend_from_slice(&key_prefix(key));
        v.extend_from_slice(&tag.to_be_bytes());
        v.extend_from_slice(url.as_bytes());
        let ks = self.flight.clone();
        self.batch().insert(&ks, lease.to_be_bytes(), v);
    }

    pub fn del_flight(&mut self, lease: u64) {
        let ks = self.flight.clone();
        self.batch().remove(&ks, lease.to_be_bytes());
    }

    pub fn put_seen(&mut self, fp: u128) {
        let ks = self.seen.clone();
        self.batch().insert(&ks, fp.to_be_bytes(), b"");
    }

    pub fn put_host(&mut self, key: &str, state: &[u8]) {
        let ks = self.hosts.clone();
        self.batch().insert(&ks, key.as_bytes(), state);
    }

    pub fn put_robots(&mut self, origin: &str, valid_until: UnixMillis) {
        let ks = self.robots.clone();
        self.batch().insert(
            &ks,
            origin.as_bytes(),
            valid_until.as_millis().to_be_bytes(),
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
            b.insert(&self.meta, b"gen", self.gen.to_be_bytes());
            b.commit().map_err(|e| self.err(e))?;
            self.db
                .persist(PersistMode::Buffer)
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Commits and fsyncs (survives power loss).
    pub fn sync(&mut self) -> Result<(), FrontierError> {
        self.commit()?;
        self.db
            .persist(PersistMode::SyncAll)
            .map_err(|e| self.err(e))
    }

    /// Is the fingerprint in the seen-set? Commits first, so the pending
    /// batch is visible.
    pub fn seen(&mut self, fp: u128) -> Result<bool, FrontierError> {
        if self.batch.is_some() {
            self.commit()?;
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
        let prefix = key_prefix(key);
        let start = queue_key(key, from);
        let mut end = prefix.clone();
        end.extend_from_slice(&[0xff; 10]);
        let mut out = Vec::new();
        for item in self.queue.range(start..end).take(n) {
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
    /// store's bytes.
    fn split_queue<'a>(
        &self,
        k: &'a [u8],
        v: &'a [u8],
    ) -> Result<(&'a str, Sort, u32, &'a str), FrontierError> {
        let bad = || self.corrupt("a queue entry's key is malformed");
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
        for item in self.queue.iter() {
            let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
            let (key, sort, tag, url) = self.split_queue(&k, &v)?;
            f(key, &sort, tag, url)?;
        }
        Ok(())
    }

    /// Every in-flight entry (for reopening).
    pub fn scan_flight(&self) -> Result<Vec<FlightEntry>, FrontierError> {
        let mut out = Vec::new();
        for item in self.flight.iter() {
            let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
            let bad = || self.corrupt("an in-flight entry is malformed");
            let lease = u64::from_be_bytes(k.as_ref().try_into().map_err(|_| bad())?);
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
            out.push(FlightEntry {
                lease,
                entry: Entry {
                    key: std::str::from_utf8(key).map_err(|_| bad())?.to_owned(),
                    sort,
                    tag,
                    url: std::str::from_utf8(url).map_err(|_| bad())?.to_owned(),
                },
            });
        }
        Ok(out)
    }

    /// Every fingerprint in the seen-set (for refilling the Bloom filter).
    pub fn scan_seen(&self, mut f: impl FnMut(u128)) -> Result<(), FrontierError> {
        for item in self.seen.iter() {
            let k = item.key().map_err(|e| self.err(e))?;
            let b: [u8; 16] = k
                .as_ref()
                .try_into()
                .map_err(|_| self.corrupt("a seen-set entry is not 16 bytes"))?;
            f(u128::from_be_bytes(b));
        }
        Ok(())
    }

    /// Every key's politeness state.
    pub fn scan_hosts(&self) -> Result<Vec<(String, Vec<u8>)>, FrontierError> {
        let mut out = Vec::new();
        for item in self.hosts.iter() {
            let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
            let key =
                std::str::from_utf8(&k).map_err(|_| self.corrupt("a host key is not UTF-8"))?;
            out.push((key.to_owned(), v.to_vec()));
        }
        Ok(out)
    }

    /// The key mode recorded in the store, recording `mode` if there is none.
    pub fn key_mode(&mut self, mode: &str) -> Result<String, FrontierError> {
        if let Some(v) = self.meta.get(b"key-mode").map_err(|e| self.err(e))? {
            return String::from_utf8(v.to_vec())
                .map_err(|_| self.corrupt("the recorded key mode is not UTF-8"));
        }
        let ks = self.meta.clone();
        self.batch().insert(&ks, b"key-mode", mode.as_bytes());
        self.commit()?;
        Ok(mode.to_owned())
    }

    /// Every origin whose robots.txt is known, with until when.
    pub fn scan_robots(&self) -> Result<Vec<(String, UnixMillis)>, FrontierError> {
        let mut out = Vec::new();
        for item in self.robots.iter() {
            let (k, v) = item.into_inner().map_err(|e| self.err(e))?;
            let bad = || self.corrupt("a robots.txt entry is malformed");
            let origin = std::str::from_utf8(&k).map_err(|_| bad())?;
            let until: [u8; 8] = v.as_ref().try_into().map_err(|_| bad())?;
            out.push((origin.to_owned(), UnixMillis(u64::from_be_bytes(until))));
        }
        Ok(out)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes every keyspace's memtable out to tables, so that the next
    /// open only reads the journal instead of re-inserting it (2.6 s → 0.5 s
    /// after enqueueing 1 M URLs). fjall still reads its active journal (it
    /// rotates it at 64 MB) at every open. Costs a flush; meant for `sync`
    /// and a clean close.
    pub fn flush_memtables(&self) -> Result<(), FrontierError> {
        for ks in [
            &self.queue,
            &self.flight,
            &self.seen,
            &self.hosts,
            &self.robots,
            &self.meta,
        ] {
            ks.rotate_memtable_and_wait().map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Batches committed so far (see [`Store::commit`]).
    pub fn generation(&self) -> u64 {
        self.gen
    }

    /// Up to `n` fingerprints of the seen-set, to test a persisted Bloom
    /// filter against before trusting it.
    pub fn sample_seen(&self, n: usize) -> Result<Vec<u128>, FrontierError> {
        let mut out = Vec::with_capacity(n);
        for item in self.seen.iter().take(n) {
            let k = item.key().map_err(|e| self.err(e))?;
            let b: [u8; 16] = k
                .as_ref()
                .try_into()
                .map_err(|_| self.corrupt("a seen-set entry is not 16 bytes"))?;
            out.push(u128::from_be_bytes(b));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_keys_order_by_priority_then_arrival() {
        let a = sort_key(9, 5);
        let b = sort_key(9, 6);
        let c = sort_key(1, 1);
        assert!(a < b && b < c);
        assert_eq!((sort_priority(&a), sort_seq(&a)), (9, 5));
    }
}
