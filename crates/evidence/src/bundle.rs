//! A bundle: one host's evidence, from one writer or several (a fleet's
//! workers), for a site owner to verify and to check against their log.
//! It holds the host's records in the window asked for, the checkpoints
//! that cover them with the audit paths tying each chain to each root, the
//! digests of the host's records between the window's end and the
//! covering checkpoint, and each writer's key. Of other hosts it shows
//! nothing but hashes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::chain::{hex, record_digest, ChainHead, Hash};
use crate::checkpoint::{Checkpoint, PublicKey};
use crate::error::EvidenceError;
use crate::log::{for_each_record, read_checkpoints, read_writer, Files, Writer};
use crate::merkle;
use crate::record::Record;

/// The bundle format this crate writes.
pub const BUNDLE_VERSION: u32 = 1;

/// One host's evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// The format version, [`BUNDLE_VERSION`].
    pub v: u32,
    /// The host (and port) the records are of.
    pub host: String,
    /// The window asked for: every record of the host sent in it is here.
    pub window: Span,
    /// The records, in the order sent (by time, then chain and `seq`),
    /// as JSON: a record is verified as it stands.
    pub records: Vec<serde_json::Value>,
    /// The checkpoints covering them.
    pub checkpoints: Vec<Checkpoint>,
    /// How the host's chain reaches each checkpoint.
    pub proofs: Vec<Proof>,
    /// Per chain, the record just before the first given, when the
    /// window cut the chain there: it shows none was left out.
    pub before: BTreeMap<String, serde_json::Value>,
    /// Per chain, the record just after the last given, when the window
    /// cut the chain there.
    pub after: BTreeMap<String, serde_json::Value>,
    /// Per chain, the digests of the host's records after those, up to
    /// the last proof's.
    pub tails: BTreeMap<String, Vec<String>>,
    /// Who wrote each chain.
    pub writers: Vec<Writer>,
}

/// The host's chain in one checkpoint's tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proof {
    /// The checkpoint's place in [`Bundle::checkpoints`].
    pub checkpoint: usize,
    /// Records in the host's chain at the checkpoint.
    pub n: u64,
    /// The chain's head then, hex.
    pub head: String,
    /// The leaf's place in the tree.
    pub index: u64,
    /// The audit path, from the leaf up, hex.
    pub path: Vec<String>,
}

/// A bundle's window, as RFC 3339 times (`null`: open).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Span {
    /// From.
    pub since: Option<String>,
    /// Until.
    pub until: Option<String>,
}

impl Span {
    /// As milliseconds; `None` when a time is not RFC 3339.
    pub fn window(&self) -> Option<Window> {
        let read = |t: &Option<String>| match t {
            None => Some(None),
            Some(s) => mannerly_time::UnixMillis::parse_rfc3339_millis(s).map(|t| Some(t.0)),
        };
        Some(Window {
            since: read(&self.since)?,
            until: read(&self.until)?,
        })
    }
}

/// Which of a host's records an export takes, by the time they were sent
/// (Unix milliseconds, both ends included).
#[derive(Debug, Clone, Copy, Default)]
pub struct Window {
    /// From.
    pub since: Option<u64>,
    /// Until.
    pub until: Option<u64>,
}

impl Window {
    /// Whether an instant is in it.
    pub fn holds(&self, ms: Option<u64>) -> bool {
        let Some(ms) = ms else { return false };
        self.since.is_none_or(|s| ms >= s) && self.until.is_none_or(|u| ms <= u)
    }
}

/// One writer's part of a host's bundle, as the records are read.
#[derive(Default)]
struct Part {
    records: Vec<(Option<u64>, serde_json::Value)>,
    before: Option<serde_json::Value>,
    after: Option<serde_json::Value>,
    checkpoints: Vec<(Checkpoint, u64, Hash, u64, Vec<Hash>)>,
    tail: Vec<String>,
    /// The host's last record before the window (the `before` to be).
    last: Option<serde_json::Value>,
    /// The seq of the first record taken, and the chain length after the
    /// last taken.
    first_taken: Option<u64>,
    taken_to: Option<u64>,
}

impl Part {
    /// Takes one of the host's records, in chain order.
    fn take(&mut self, value: &serde_json::Value, record: &Record, digest: &Hash, window: Window) {
        if window.holds(record.millis()) && self.taken_to.is_none_or(|t| t == record.seq) {
            self.records.push((record.millis(), value.clone()));
            if self.first_taken.is_none() {
                self.first_taken = Some(record.seq);
                self.before = self.last.take();
            }
            self.taken_to = Some(record.seq + 1);
            self.after = None;
            self.tail.clear();
        } else if self.taken_to.is_some() {
            match self.after {
                None => self.after = Some(value.clone()),
                Some(_) => self.tail.push(hex(digest)),
            }
        } else {
            self.last = Some(value.clone());
        }
    }

    /// Keeps only the first checkpoint at or past the last record taken
    /// (and those before it), the tail reaching just that far.
    fn settle(&mut self) {
        let Some(end) = self.taken_to else { return };
        if let Some(i) = self.checkpoints.iter().position(|c| c.1 >= end) {
            self.checkpoints.truncate(i + 1);
            let n = self.checkpoints[i].1;
            if n == end {
                self.after = None;
                self.tail.clear();
            }
            self.tail.truncate(n.saturating_sub(end + 1) as usize);
        }
    }
}

/// Exports `host`'s evidence from evidence directories (one per crawl or
/// fleet worker). Directories holding no record of the host add nothing;
/// none holding one is an error.
pub fn export(dirs: &[PathBuf], host: &str, window: Window) -> Result<Bundle, EvidenceError> {
    let host = host.to_ascii_lowercase();
    let mut bundles = export_hosts(dirs, Some(std::slice::from_ref(&host)), window)?;
    match bundles.pop() {
        Some(b) => Ok(b),
        None => Err(EvidenceError::NoRecords {
            host,
            windowed: window.since.is_some() || window.until.is_some(),
            dirs: dirs.len(),
        }),
    }
}

/// The bundles of `hosts` (every host with records, when `None`), in one
/// pass over each directory's records; a host with no record in the
/// window has none.
///
/// Every bundle is built in memory before any is returned: with `None`,
/// that is every record in the window, of every host, as JSON values (a
/// record takes about 1.5 KiB so); ask for hosts a few at a time to bound
/// it.
pub fn export_hosts(
    dirs: &[PathBuf],
    hosts: Option<&[String]>,
    window: Window,
) -> Result<Vec<Bundle>, EvidenceError> {
    let mut bundles: BTreeMap<String, (Bundle, Timed)> = BTreeMap::new();
    for dir in dirs {
        let Some(writer) = read_writer(dir)? else {
            return Err(EvidenceError::NoEvidence {
                dir: dir.clone(),
                file: Files::WRITER,
            });
        };
        for (host, part) in parts(dir, hosts, window)? {
            let (bundle, timed) = bundles
                .entry(host.clone())
                .or_insert_with(|| (empty(&host, window), Vec::new()));
            add_part(bundle, timed, &writer, part);
        }
    }
    let chain_order = |(ms, v): &(Option<u64>, serde_json::Value)| {
        (
            *ms,
            v["chain"].as_str().map(str::to_owned),
            v["seq"].as_u64(),
        )
    };
    Ok(bundles
        .into_values()
        .map(|(mut b, mut timed)| {
            timed.sort_by_key(chain_order);
            b.records = timed.into_iter().map(|(_, v)| v).collect();
            b
        })
        .collect())
}

/// Records with the instant each was sent.
type Timed = Vec<(Option<u64>, serde_json::Value)>;

fn empty(host: &str, window: Window) -> Bundle {
    let at = |t: Option<u64>| t.map(|t| mannerly_time::UnixMillis(t).to_rfc3339_millis());
    Bundle {
        v: BUNDLE_VERSION,
        host: host.to_owned(),
        window: Span {
            since: at(window.since),
            until: at(window.until),
        },
        records: Vec::new(),
        before: BTreeMap::new(),
        after: BTreeMap::new(),
        checkpoints: Vec::new(),
        proofs: Vec::new(),
        tails: BTreeMap::new(),
        writers: Vec::new(),
    }
}

/// Adds one writer's part to a host's bundle.
fn add_part(bundle: &mut Bundle, timed: &mut Timed, writer: &Writer, part: Part) {
    for (c, n, head, index, path) in part.checkpoints {
        bundle.proofs.push(Proof {
            checkpoint: bundle.checkpoints.len(),
            n,
            head: hex(&head),
            index,
            path: path.iter().map(|h| hex(h)).collect(),
        });
        bundle.checkpoints.push(c);
    }
    bundle.tails.insert(writer.chain.clone(), part.tail);
    if let Some(b) = part.before {
        bundle.before.insert(writer.chain.clone(), b);
    }
    if let Some(a) = part.after {
        bundle.after.insert(writer.chain.clone(), a);
    }
    timed.extend(part.records);
    bundle.writers.push(writer.clone());
}

/// One directory's parts, by host: each host's records in the window,
/// the checkpoints covering them with their proofs, and the tail.
fn parts(
    dir: &Path,
    hosts: Option<&[String]>,
    window: Window,
) -> Result<BTreeMap<String, Part>, EvidenceError> {
    let checkpoints = read_checkpoints(&dir.join(Files::CHECKPOINTS))?;
    let mut heads: BTreeMap<String, ChainHead> = BTreeMap::new();
    let mut parts: BTreeMap<String, Part> = BTreeMap::new();
    let wanted = |h: &str| hosts.is_none_or(|list| list.iter().any(|x| x == h));
    let mut next = 0;
    for_each_record(&dir.join(Files::RECORDS), |line, value, record, _| {
        while next < checkpoints.len() && checkpoints[next].records < line {
            take_checkpoint(&checkpoints[next], &heads, &mut parts);
            next += 1;
        }
        let digest = record_digest(value);
        heads
            .entry(record.host.clone())
            .or_default()
            .push(&digest, record.millis());
        if wanted(&record.host) {
            let part = parts.entry(record.host.clone()).or_default();
            part.take(value, record, &digest, window);
        }
        Ok(())
    })?;
    while next < checkpoints.len() {
        take_checkpoint(&checkpoints[next], &heads, &mut parts);
        next += 1;
    }
    parts.retain(|_, p| p.taken_to.is_some());
    for p in parts.values_mut() {
        p.settle();
    }
    Ok(parts)
}

/// Keeps a checkpoint for every host whose chain grew into it since the
/// first record taken, with the host's leaf and path; the tree is built
/// once, and only when some host needs it.
fn take_checkpoint(
    c: &Checkpoint,
    heads: &BTreeMap<String, ChainHead>,
    parts: &mut BTreeMap<String, Part>,
) {
    let needs = |host: &str, p: &Part| {
        let (Some(first), Some(h)) = (p.first_taken, heads.get(host)) else {
            return false;
        };
        h.n > first && p.checkpoints.last().is_none_or(|l| l.1 != h.n)
    };
    if !parts.iter().any(|(h, p)| needs(h, p)) {
        return;
    }
    let leaves: Vec<Hash> = heads
        .iter()
        .map(|(k, h)| merkle::leaf(k, h.n, &h.head))
        .collect();
    for (i, (host, h)) in heads.iter().enumerate() {
        let Some(p) = parts.get_mut(host) else {
            continue;
        };
        if needs(host, p) {
            let path = merkle::path(&leaves, i);
            p.checkpoints.push((c.clone(), h.n, h.head, i as u64, path));
        }
    }
}

impl Bundle {
    /// The records as [`Record`]s, with their place; the first that is
    /// not one is an error naming it.
    pub fn parsed(&self) -> Result<Vec<Record>, EvidenceError> {
        self.records
            .iter()
            .enumerate()
            .map(|(i, v)| {
                serde_json::from_value(v.clone()).map_err(|e| EvidenceError::Bundle {
                    index: i,
                    why: e.to_string(),
                })
            })
            .collect()
    }

    /// The key of a chain's writer.
    pub fn key_of(&self, chain: &str) -> Option<&PublicKey> {
        self.writers
            .iter()
            .find(|w| w.chain == chain)
            .and_then(|w| w.key.as_ref())
    }
}
