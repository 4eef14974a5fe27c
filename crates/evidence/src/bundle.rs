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

/// One writer's part of a bundle.
struct Part {
    records: Vec<(Option<u64>, serde_json::Value)>,
    before: Option<serde_json::Value>,
    after: Option<serde_json::Value>,
    checkpoints: Vec<(Checkpoint, u64, Hash, u64, Vec<Hash>)>,
    tail: Vec<String>,
}

/// Exports `host`'s evidence from evidence directories (one per crawl or
/// fleet worker). Directories holding no record of the host add nothing;
/// none holding one is an error.
pub fn export(dirs: &[PathBuf], host: &str, window: Window) -> Result<Bundle, EvidenceError> {
    let host = host.to_ascii_lowercase();
    let mut bundle = Bundle {
        v: BUNDLE_VERSION,
        host: host.clone(),
        window: Span {
            since: window
                .since
                .map(|t| mannerly_time::UnixMillis(t).to_rfc3339_millis()),
            until: window
                .until
                .map(|t| mannerly_time::UnixMillis(t).to_rfc3339_millis()),
        },
        records: Vec::new(),
        before: BTreeMap::new(),
        after: BTreeMap::new(),
        checkpoints: Vec::new(),
        proofs: Vec::new(),
        tails: BTreeMap::new(),
        writers: Vec::new(),
    };
    let mut timed = Vec::new();
    for dir in dirs {
        let Some(writer) = read_writer(dir)? else {
            return Err(EvidenceError::Nothing(format!(
                "{}: no evidence here (no {})",
                dir.display(),
                Files::WRITER
            )));
        };
        let Some(part) = part(dir, &host, window)? else {
            continue;
        };
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
        bundle.writers.push(writer);
    }
    if timed.is_empty() {
        return Err(EvidenceError::Nothing(format!(
            "no record of {host}{} in {} director{}",
            if window.since.is_some() || window.until.is_some() {
                " in that window"
            } else {
                ""
            },
            dirs.len(),
            if dirs.len() == 1 { "y" } else { "ies" }
        )));
    }
    timed.sort_by(|a, b| {
        let key = |(ms, v): &(Option<u64>, serde_json::Value)| {
            (
                *ms,
                v["chain"].as_str().map(str::to_owned),
                v["seq"].as_u64(),
            )
        };
        key(a).cmp(&key(b))
    });
    bundle.records = timed.into_iter().map(|(_, v)| v).collect();
    Ok(bundle)
}

/// One directory's records of `host` in the window, the checkpoints
/// covering them with their proofs, and the tail; `None` when it holds
/// no record of the host in the window.
fn part(dir: &Path, host: &str, window: Window) -> Result<Option<Part>, EvidenceError> {
    let checkpoints = read_checkpoints(&dir.join(Files::CHECKPOINTS))?;
    let mut heads: BTreeMap<String, ChainHead> = BTreeMap::new();
    let mut out = Part {
        records: Vec::new(),
        before: None,
        after: None,
        checkpoints: Vec::new(),
        tail: Vec::new(),
    };
    let mut last_value: Option<serde_json::Value> = None;
    let mut next = 0;
    // The host's chain length after the last record taken, and at the
    // last checkpoint taken.
    let mut taken_to: Option<u64> = None;
    let mut first_taken: Option<u64> = None;
    let mut digests: Vec<String> = Vec::new();
    for_each_record(&dir.join(Files::RECORDS), |line, value, record, _| {
        while next < checkpoints.len() && checkpoints[next].records < line {
            take_checkpoint(&checkpoints[next], &heads, host, first_taken, &mut out);
            next += 1;
        }
        let digest = record_digest(value);
        heads
            .entry(record.host.clone())
            .or_default()
            .push(&digest, record.millis());
        if record.host == host {
            if window.holds(record.millis()) && taken_to.is_none_or(|t| t == record.seq) {
                out.records.push((record.millis(), value.clone()));
                if first_taken.is_none() {
                    first_taken = Some(record.seq);
                    out.before = last_value.take();
                }
                taken_to = Some(record.seq + 1);
                out.after = None;
                digests.clear();
            } else if taken_to.is_some() {
                if out.after.is_none() {
                    out.after = Some(value.clone());
                } else {
                    digests.push(hex(&digest));
                }
            } else {
                last_value = Some(value.clone());
            }
        }
        Ok(())
    })?;
    while next < checkpoints.len() {
        take_checkpoint(&checkpoints[next], &heads, host, first_taken, &mut out);
        next += 1;
    }
    let Some(end) = taken_to else { return Ok(None) };
    // The tail reaches the first checkpoint at or past the last record
    // taken; checkpoints further on are not needed.
    let cover = out.checkpoints.iter().position(|c| c.1 >= end);
    if let Some(i) = cover {
        out.checkpoints.truncate(i + 1);
        let n = out.checkpoints[i].1;
        if n == end {
            out.after = None;
            digests.clear();
        }
        digests.truncate(n.saturating_sub(end + 1) as usize);
        out.tail = digests;
    }
    Ok(Some(out))
}

/// Keeps a checkpoint when the host's chain grew into it since the first
/// record taken, with the host's leaf and path.
fn take_checkpoint(
    c: &Checkpoint,
    heads: &BTreeMap<String, ChainHead>,
    host: &str,
    first_taken: Option<u64>,
    out: &mut Part,
) {
    let (Some(first), Some(h)) = (first_taken, heads.get(host)) else {
        return;
    };
    if h.n <= first || out.checkpoints.last().is_some_and(|l| l.1 == h.n) {
        return;
    }
    let leaves: Vec<Hash> = heads
        .iter()
        .map(|(k, h)| merkle::leaf(k, h.n, &h.head))
        .collect();
    let Some(index) = heads.keys().position(|k| k == host) else {
        return;
    };
    let path = merkle::path(&leaves, index);
    out.checkpoints
        .push((c.clone(), h.n, h.head, index as u64, path));
}

impl Bundle {
    /// The records as [`Record`]s, with their place; the first that is
    /// not one is an error naming it.
    pub fn parsed(&self) -> Result<Vec<Record>, EvidenceError> {
        self.records
            .iter()
            .enumerate()
            .map(|(i, v)| {
                serde_json::from_value(v.clone())
                    .map_err(|e| EvidenceError::Bundle(format!("records[{i}]: {e}")))
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
