//! The evidence a writer keeps on disk, in its directory:
//!
//! | file | holds |
//! |---|---|
//! | `writer.json` | the chain's name, the public key, the Signature-Agent |
//! | `records.jsonl` | every record, one canonical JSON object a line, in the order written |
//! | `checkpoints.jsonl` | every checkpoint, one a line |
//!
//! A record is on disk before its request is sent, so a process killed
//! at any moment leaves a record of every request that left: either
//! appended at once ([`EvidenceLog::append`], one `write` of the line),
//! or held with others and written together ([`EvidenceLog::hold`], then
//! [`EvidenceLog::flush`], one `write` for all) before any of their
//! requests may leave. A line cut by the kill is dropped when the log is
//! opened again, and the heads are read back from the records.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mannerly_time::UnixMillis;
use serde::{Deserialize, Serialize};

use sha2::Digest;

use crate::chain::{hex, record_digest, ChainHead, Hash};
use crate::checkpoint::{Checkpoint, PublicKey, Signer};
use crate::error::EvidenceError;
use crate::merkle;
use crate::record::{Record, VERSION};

/// How often, at least, a running writer checkpoints.
pub const CHECKPOINT_EVERY_MS: u64 = 60_000;

/// Who writes a directory's evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writer {
    /// The chain's name, in every record and checkpoint.
    pub chain: String,
    /// The key checkpoints are signed with (`null`: unsigned).
    pub key: Option<PublicKey>,
    /// Where the key is published (a Web Bot Auth Signature-Agent).
    pub signature_agent: Option<String>,
}

/// The file names of an evidence directory.
pub struct Files;

impl Files {
    /// The writer's description.
    pub const WRITER: &'static str = "writer.json";
    /// The records.
    pub const RECORDS: &'static str = "records.jsonl";
    /// The checkpoints.
    pub const CHECKPOINTS: &'static str = "checkpoints.jsonl";
}

/// An open evidence log.
pub struct EvidenceLog {
    dir: PathBuf,
    writer: Writer,
    signer: Option<Arc<dyn Signer>>,
    records: File,
    /// Lines held for the next [`flush`](EvidenceLog::flush).
    held: Vec<u8>,
    checkpoints: File,
    /// Each host's chain head (sorted by host only for a checkpoint).
    heads: HashMap<String, ChainHead>,
    written: u64,
    checkpointed: u64,
    last_checkpoint: Option<UnixMillis>,
}

impl std::fmt::Debug for EvidenceLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvidenceLog")
            .field("dir", &self.dir)
            .field("chain", &self.writer.chain)
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl EvidenceLog {
    /// Opens (or starts) the log in `dir`. A log started unsigned stays
    /// unsigned, and one started with a key keeps it: `signer` must then
    /// be that key.
    ///
    /// Opening re-reads the whole of `records.jsonl` once (to recover each
    /// host's chain head: time linear in the records written, memory one
    /// head of about 80 bytes per host) and `checkpoints.jsonl` whole.
    pub fn open(
        dir: &Path,
        signer: Option<Arc<dyn Signer>>,
        signature_agent: Option<String>,
    ) -> Result<EvidenceLog, EvidenceError> {
        std::fs::create_dir_all(dir).map_err(EvidenceError::io(dir))?;
        let writer = settle_writer(dir, signer.as_deref(), signature_agent)?;
        let records_path = dir.join(Files::RECORDS);
        let (heads, written) = recover(&records_path)?;
        let checkpoints_path = dir.join(Files::CHECKPOINTS);
        cut_partial_line(&checkpoints_path)?;
        let last = read_checkpoints(&checkpoints_path)?.pop();
        let open = |p: &Path| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(EvidenceError::io(p))
        };
        Ok(EvidenceLog {
            records: open(&records_path)?,
            held: Vec::new(),
            checkpoints: open(&checkpoints_path)?,
            dir: dir.to_path_buf(),
            writer,
            signer,
            heads,
            written,
            checkpointed: last.as_ref().map_or(0, |c| c.records),
            last_checkpoint: last.and_then(|c| UnixMillis::parse_rfc3339_millis(&c.time)),
        })
    }

    /// The writer's description.
    pub fn writer(&self) -> &Writer {
        &self.writer
    }

    /// Records written, over every host.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// When `host`'s previous request was sent, if it has one here.
    pub fn previous(&self, host: &str) -> Option<u64> {
        self.heads.get(host).and_then(|h| h.last_ms)
    }

    /// Appends a record, written at once (with any held before it): its
    /// `chain`, `seq` and `prev` are filled in here. Returns the line as
    /// written (without its newline).
    pub fn append(&mut self, record: Record) -> Result<Vec<u8>, EvidenceError> {
        let line = self.hold(record)?;
        self.flush()?;
        Ok(line)
    }

    /// Writes the records held, in one `write`. Their requests may leave
    /// once it returns `Ok`.
    pub fn flush(&mut self) -> Result<(), EvidenceError> {
        if self.held.is_empty() {
            return Ok(());
        }
        let written = self.records.write_all(&self.held);
        self.held.clear();
        written.map_err(EvidenceError::io(&self.dir.join(Files::RECORDS)))
    }

    /// Takes a record into the chain and holds its line for the next
    /// [`flush`](EvidenceLog::flush) (a checkpoint flushes too). Returns
    /// the line (without its newline). Held lines are not written when
    /// the log is dropped: their requests never left.
    pub fn hold(&mut self, mut record: Record) -> Result<Vec<u8>, EvidenceError> {
        let head = match self.heads.get_mut(&record.host) {
            Some(head) => head,
            None => self.heads.entry(record.host.clone()).or_default(),
        };
        record.v = VERSION;
        record.chain.clone_from(&self.writer.chain);
        record.seq = head.n;
        record.prev = hex(&head.head);
        // The structs serialise straight to canonical bytes (tested
        // against the general canonicaliser).
        let line = record.canonical_bytes()?;
        let digest: Hash = sha2::Sha256::digest(&line).into();
        head.push(&digest, record.millis());
        self.held.extend_from_slice(&line);
        self.held.push(b'\n');
        self.written += 1;
        Ok(line)
    }

    /// Writes a checkpoint when records came since the last and `now` is
    /// a minute past it (or `force`, at exit and on opening).
    pub fn checkpoint(
        &mut self,
        now: UnixMillis,
        force: bool,
    ) -> Result<Option<Checkpoint>, EvidenceError> {
        let due = self
            .last_checkpoint
            .is_none_or(|t| now.millis_since(t) >= CHECKPOINT_EVERY_MS);
        if self.written == self.checkpointed || !(force || due) {
            return Ok(None);
        }
        // A checkpoint covers only records on disk.
        self.flush()?;
        let mut hosts: Vec<_> = self.heads.iter().collect();
        hosts.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let leaves: Vec<_> = hosts
            .into_iter()
            .map(|(host, h)| merkle::leaf(host, h.n, &h.head))
            .collect();
        let mut c = Checkpoint {
            v: VERSION,
            chain: self.writer.chain.clone(),
            time: now.to_rfc3339_millis(),
            records: self.written,
            hosts: leaves.len() as u64,
            root: hex(&merkle::root(&leaves)),
            keyid: None,
            sig: None,
        };
        if let Some(s) = &self.signer {
            c.sign(s.as_ref());
        }
        let mut line = serde_json::to_vec(&c).map_err(|source| EvidenceError::Serialize {
            what: "a checkpoint",
            source,
        })?;
        line.push(b'\n');
        let path = self.dir.join(Files::CHECKPOINTS);
        self.checkpoints
            .write_all(&line)
            .map_err(EvidenceError::io(&path))?;
        self.checkpointed = self.written;
        self.last_checkpoint = Some(now);
        Ok(Some(c))
    }
}

/// The writer of `dir`: as stored, or new.
fn settle_writer(
    dir: &Path,
    signer: Option<&dyn Signer>,
    signature_agent: Option<String>,
) -> Result<Writer, EvidenceError> {
    let path = dir.join(Files::WRITER);
    let key = signer.map(Signer::public_key);
    if let Some(w) = read_writer(dir)? {
        if w.key != key {
            return Err(EvidenceError::KeyChanged {
                path,
                had: w.key.as_ref().map(PublicKey::thumbprint),
            });
        }
        return Ok(w);
    }
    let w = Writer {
        chain: new_chain_name(),
        key,
        signature_agent,
    };
    let body = serde_json::to_vec_pretty(&w).map_err(|source| EvidenceError::Serialize {
        what: "the writer",
        source,
    })?;
    std::fs::write(&path, body).map_err(EvidenceError::io(&path))?;
    Ok(w)
}

/// The writer description in `dir`, if there is one.
pub fn read_writer(dir: &Path) -> Result<Option<Writer>, EvidenceError> {
    let path = dir.join(Files::WRITER);
    match std::fs::read(&path) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| EvidenceError::Damaged {
                path: path.clone(),
                line: e.line() as u64,
                why: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(EvidenceError::io(&path)(e)),
    }
}

/// A name no other writer takes: 64 random bits.
fn new_chain_name() -> String {
    use rand_core::RngCore;
    let mut bytes = [0u8; 8];
    rand_core::OsRng.fill_bytes(&mut bytes);
    hex(&bytes)
}

/// Cuts a last line without its newline (a write cut by a kill) off a
/// file, so the next line starts clean.
fn cut_partial_line(path: &Path) -> Result<(), EvidenceError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(EvidenceError::io(path)(e)),
    };
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if whole < bytes.len() {
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(EvidenceError::io(path))?;
        f.set_len(whole as u64).map_err(EvidenceError::io(path))?;
    }
    Ok(())
}

/// Reads the records back: every host's head, and how many there are. A
/// last line without its newline (cut by a kill) is cut off the file.
fn recover(path: &Path) -> Result<(HashMap<String, ChainHead>, u64), EvidenceError> {
    let mut heads: HashMap<String, ChainHead> = HashMap::new();
    let mut written = 0;
    let mut whole_bytes = 0u64;
    for_each_record(path, |line_no, value, record, len| {
        let head = heads.entry(record.host.clone()).or_default();
        if record.seq != head.n {
            return Err(format!(
                "{} record {} follows {} records",
                record.host, record.seq, head.n
            ));
        }
        head.push(&record_digest(value), record.millis());
        written = line_no;
        whole_bytes += len;
        Ok(())
    })?;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.len() > whole_bytes {
            let f = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(EvidenceError::io(path))?;
            f.set_len(whole_bytes).map_err(EvidenceError::io(path))?;
        }
    }
    Ok((heads, written))
}

/// Calls `f` with every whole line of a records file: its number, the
/// record as JSON and as a [`Record`], and the line's length with its
/// newline. A missing file has none.
pub fn for_each_record(
    path: &Path,
    mut f: impl FnMut(u64, &serde_json::Value, &Record, u64) -> Result<(), String>,
) -> Result<(), EvidenceError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(EvidenceError::io(path)(e)),
    };
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(EvidenceError::io(path))?;
        if n == 0 || buf.last() != Some(&b'\n') {
            return Ok(());
        }
        line_no += 1;
        let damaged = |why: String| EvidenceError::Damaged {
            path: path.to_path_buf(),
            line: line_no,
            why,
        };
        let value: serde_json::Value =
            serde_json::from_slice(&buf[..n - 1]).map_err(|e| damaged(e.to_string()))?;
        let record: Record =
            serde_json::from_value(value.clone()).map_err(|e| damaged(e.to_string()))?;
        f(line_no, &value, &record, n as u64).map_err(damaged)?;
    }
}

/// Every checkpoint in a checkpoints file, in order.
pub fn read_checkpoints(path: &Path) -> Result<Vec<Checkpoint>, EvidenceError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(EvidenceError::io(path)(e)),
    };
    let mut out = Vec::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        // A last line cut by a kill is not a checkpoint.
        let Some(line) = line.strip_suffix('\n') else {
            break;
        };
        let c = serde_json::from_str(line).map_err(|e| EvidenceError::Damaged {
            path: path.to_path_buf(),
            line: i as u64 + 1,
            why: e.to_string(),
        })?;
        out.push(c);
    }
    Ok(out)
}
