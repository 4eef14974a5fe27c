//! What reopening an on-disk frontier would otherwise rebuild by reading
//! every queued URL and every seen fingerprint: each key's count and head,
//! the next sequence number, and the Bloom filter's bits. Written by
//! [`LocalFrontier::sync`](super::LocalFrontier::sync) and when the frontier
//! is dropped; read by [`LocalFrontier::open`](super::LocalFrontier::open),
//! which then reads state proportional to the number of keys.
//!
//! Never trusted blindly. The file names the store generation it describes
//! (the store records a new generation in every committed batch), so after
//! any later operation, a kill -9 included, it no longer matches and the
//! frontier is rebuilt from the store. It is written to a temporary file,
//! fsynced and renamed, so a kill while writing leaves the old file or
//! none; a torn or altered file fails its checksum; and the Bloom bits are
//! tested against a sample of the seen-set before use (a hasher that
//! changed between versions would fail there).
//!
//! Layout (little-endian): magic `MNLYSUM1`, generation, next sequence,
//! key count, then per key its length (u32), bytes, URL count (u64) and
//! head sort key (9 bytes); then 0, or 1 with the Bloom filter's hash count
//! (u32), word count (u64) and words; then an xxh3-64 of everything before.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::store::Sort;

const MAGIC: &[u8; 8] = b"MNLYSUM1";
const FILE: &str = "summary.bin";

/// The Bloom filter's seed: fixed, so persisted bits mean the same in the
/// next process.
pub(crate) const BLOOM_SEED: u128 = 0x6d61_6e6e_6572_6c79_2d73_6565_6e2d_7631;

/// One key's queue, as reopening needs it.
pub(crate) struct KeySummary {
    pub key: Box<str>,
    pub count: u64,
    pub head: Sort,
}

/// The whole summary.
pub(crate) struct Summary {
    pub generation: u64,
    pub next_seq: u64,
    pub keys: Vec<KeySummary>,
    /// (hash count, words).
    pub bloom: Option<(u32, Vec<u64>)>,
}

fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// Writes the summary beside the store: to a temporary file, fsynced,
/// then renamed over the old one.
pub(crate) fn write(dir: &Path, s: &Summary) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(
        64 + s.keys.len() * 40 + s.bloom.as_ref().map_or(0, |(_, w)| w.len() * 8),
    );
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&s.generation.to_le_bytes());
    buf.extend_from_slice(&s.next_seq.to_le_bytes());
    buf.extend_from_slice(&(s.keys.len() as u64).to_le_bytes());
    for k in &s.keys {
        buf.extend_from_slice(&(k.key.len() as u32).to_le_bytes());
        buf.extend_from_slice(k.key.as_bytes());
        buf.extend_from_slice(&k.count.to_le_bytes());
        buf.extend_from_slice(&k.head);
    }
    match &s.bloom {
        None => buf.push(0),
        Some((hashes, words)) => {
            buf.push(1);
            buf.extend_from_slice(&hashes.to_le_bytes());
            buf.extend_from_slice(&(words.len() as u64).to_le_bytes());
            for w in words {
                buf.extend_from_slice(&w.to_le_bytes());
            }
        }
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&buf);
    buf.extend_from_slice(&sum.to_le_bytes());
    let tmp = dir.join(format!("{FILE}.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&buf)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path(dir))?;
    // The rename itself reaches the disk with the directory.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A reader over the file's bytes that fails (returns `None`) past the end.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

/// The summary in `dir`, if there is one that is whole (magic, lengths and
/// checksum); whether it matches the store is the caller's check.
pub(crate) fn read(dir: &Path) -> Option<Summary> {
    let bytes = std::fs::read(path(dir)).ok()?;
    let (body, sum) = bytes.split_at(bytes.len().checked_sub(8)?);
    if xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() != sum {
        return None;
    }
    let mut c = Cursor(body);
    if c.take(8)? != MAGIC {
        return None;
    }
    let generation = c.u64()?;
    let next_seq = c.u64()?;
    let n = usize::try_from(c.u64()?).ok()?;
    // Each key takes at least 21 bytes: a count larger than the file is a lie.
    if n > body.len() / 21 {
        return None;
    }
    let mut keys = Vec::with_capacity(n);
    for _ in 0..n {
        let len = usize::try_from(c.u32()?).ok()?;
        let key = std::str::from_utf8(c.take(len)?).ok()?.into();
        let count = c.u64()?;
        let head: Sort = c.take(9)?.try_into().ok()?;
        keys.push(KeySummary { key, count, head });
    }
    let bloom = match c.take(1)?[0] {
        0 => None,
        1 => {
            let hashes = c.u32()?;
            let words = usize::try_from(c.u64()?).ok()?;
            let raw = c.take(words.checked_mul(8)?)?;
            let words = raw
                .chunks_exact(8)
                .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
                .collect();
            Some((hashes, words))
        }
        _ => return None,
    };
    if !c.0.is_empty() {
        return None;
    }
    Some(Summary {
        generation,
        next_seq,
        keys,
        bloom,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Summary {
        Summary {
            generation: 7,
            next_seq: 42,
            keys: vec![KeySummary {
                key: "a.example".into(),
                count: 3,
                head: [1, 2, 3, 4, 5, 6, 7, 8, 9],
            }],
            bloom: Some((3, vec![1, 2, u64::MAX])),
        }
    }

    #[test]
    fn round_trips_and_refuses_any_damage() {
        let dir = tempfile::tempdir().expect("dir");
        write(dir.path(), &sample()).expect("write");
        let s = read(dir.path()).expect("read");
        assert_eq!((s.generation, s.next_seq), (7, 42));
        assert_eq!(&*s.keys[0].key, "a.example");
        assert_eq!(s.bloom, Some((3, vec![1, 2, u64::MAX])));
        let good = std::fs::read(path(dir.path())).expect("bytes");
        // Every truncation and every single-byte change is refused.
        for cut in 0..good.len() {
            std::fs::write(path(dir.path()), &good[..cut]).expect("write");
            assert!(read(dir.path()).is_none(), "cut at {cut}");
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x40;
            std::fs::write(path(dir.path()), &bad).expect("write");
            assert!(read(dir.path()).is_none(), "byte {i} flipped");
        }
    }
}
