//! WARC 1.1 output: one gzip member per record, files rotated at a size,
//! each opened by a `warcinfo` record, and a cut record found and removed
//! when a crawl resumes after a kill. A record of 1 KiB or more is
//! compressed (the fastest level); a shorter one is stored in its member.
//!
//! Records carry `WARC-Record-ID` (a random UUID URN), `WARC-Date` (UTC,
//! milliseconds), `WARC-Target-URI`, `WARC-IP-Address` when known,
//! `WARC-Block-Digest` and, for responses, `WARC-Payload-Digest` (both
//! SHA-1 in base32, the form web archives use), `WARC-Truncated: length`
//! when the body was cut at the crawl's cap, and `WARC-Concurrent-To` on a
//! request, naming its response. Evidence records go in `metadata`
//! records, in batches of up to 64, one record a line.
//!
//! The HTTP block of a response is its status line and header fields as
//! received (`Transfer-Encoding` removed: the body is stored de-chunked),
//! then the body exactly as sent (still compressed when the server
//! compressed it), so the payload digest is over the bytes on the wire.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use flate2::{Compress, Compression, Crc, FlushCompress, Status};
use sha1::{Digest, Sha1};

use mannerly_time::UnixMillis;

mod batch;

/// Why writing WARC failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WarcError {
    /// A file could not be created, written or read.
    #[error("WARC file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// RFC 4648 base32 (upper case, padded), as WARC digests are written.
pub fn base32(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    push_base32(bytes, &mut out);
    out
}

/// [`base32`], appended to `out`.
fn push_base32(bytes: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    out.reserve(bytes.len().div_ceil(5) * 8);
    for chunk in bytes.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let v = buf.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                let idx = ((v >> (35 - i * 5)) & 31) as usize;
                out.push(ALPHABET[idx] as char);
            } else {
                out.push('=');
            }
        }
    }
}

/// `sha1:BASE32` of some bytes.
pub fn sha1_digest(parts: &[&[u8]]) -> String {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    let mut out = String::with_capacity(37);
    out.push_str("sha1:");
    push_base32(&h.finalize(), &mut out);
    out
}

/// `2026-11-22T21:00:00.123Z`: WARC 1.1 dates, to the millisecond.
pub fn warc_date(t: UnixMillis) -> String {
    t.to_rfc3339_millis()
}

/// A new record id.
pub fn record_id() -> String {
    let mut buf = uuid::Uuid::encode_buffer();
    let uuid = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut buf);
    let mut id = String::with_capacity(47);
    id.push_str("<urn:uuid:");
    id.push_str(uuid);
    id.push('>');
    id
}

/// A `WARC-IP-Address` value. The standard library's `Display` for an
/// address weighs about as much as the rest of a record's head, and two
/// records of an exchange name it.
fn ip_text(ip: std::net::IpAddr) -> String {
    let std::net::IpAddr::V4(v4) = ip else {
        return ip.to_string();
    };
    let mut out = String::with_capacity(15);
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(itoa::Buffer::new().format(octet));
    }
    out
}

/// One exchange to archive.
#[derive(Debug, Clone)]
pub struct Exchange<'a> {
    /// The URL fetched.
    pub url: &'a str,
    /// When the request was sent.
    pub date: UnixMillis,
    /// The server's address, when known.
    pub ip: Option<std::net::IpAddr>,
    /// The request as sent: request line and header fields, ending with the
    /// empty line.
    pub request_head: &'a [u8],
    /// The response's status line and header fields, ending with the empty
    /// line.
    pub response_head: &'a [u8],
    /// The body as received (possibly cut).
    pub body: &'a [u8],
    /// The body was cut at the size cap.
    pub truncated: bool,
    /// The request's evidence record (one JSON object), archived as a
    /// `metadata` record concurrent to the `request` record.
    pub evidence: Option<&'a [u8]>,
}

/// What was archived of a response: the record holding its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archived {
    /// The `WARC-Record-ID` of the `response` (or `revisit`) record.
    pub record_id: String,
    /// Its `WARC-Date`.
    pub date: String,
    /// The payload's `WARC-Payload-Digest`.
    pub payload_digest: String,
}

/// Why a response is archived as a revisit (WARC 1.1 §6.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// The server answered 304 to a conditional request.
    ServerNotModified,
    /// The payload is the one an earlier record holds.
    IdenticalPayloadDigest,
}

impl Profile {
    /// The `WARC-Profile` URI.
    pub fn uri(self) -> &'static str {
        match self {
            Profile::ServerNotModified => {
                "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
            }
            Profile::IdenticalPayloadDigest => {
                "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
            }
        }
    }
}

/// The earlier record a revisit names.
#[derive(Debug, Clone, Copy)]
pub struct RefersTo<'a> {
    /// Its `WARC-Record-ID`.
    pub id: &'a str,
    /// Its `WARC-Date`.
    pub date: &'a str,
    /// Its `WARC-Target-URI`.
    pub uri: &'a str,
    /// Its payload's digest.
    pub payload_digest: &'a str,
}

/// Writes records to rotating `.warc.gz` files in a directory. Records
/// wait in memory for [`flush`](WarcWriter::flush) (or `sync`, or the
/// writer's drop), up to 256 KiB: a crawl hands a turn's records to the
/// file in one write.
pub struct WarcWriter {
    dir: PathBuf,
    prefix: String,
    max_size: u64,
    /// The crawler's User-Agent, for the warcinfo record.
    user_agent: String,
    file: Option<(File, PathBuf, u64)>,
    serial: u32,
    info_id: String,
    records: u64,
    /// Bytes this writer has written, over all its files.
    written: u64,
    /// One deflate state, reset for every record: making a new one per
    /// record (and zeroing its tables) cost more than compressing a small
    /// page.
    deflate: Compress,
    /// Evidence records waiting for their `metadata` record.
    evidence: batch::Batch,
    /// Whole members not yet handed to the file: a turn's records go in
    /// one write ([`WarcWriter::flush`]).
    pending: Vec<u8>,
}

/// Past this many bytes waiting, members are written at once, whatever the
/// turn: a turn of large pages holds no more than this in memory.
const WRITE_PAST: usize = 256 << 10;

impl WarcWriter {
    /// A writer into `dir`, files named `PREFIX-NNNNN.warc.gz`, a new one
    /// after `max_size` bytes. Existing files are kept: numbering goes on
    /// after the highest, and the last one is checked first (see
    /// [`repair`]; one left empty is removed). `user_agent` goes in each
    /// file's warcinfo record.
    pub fn open(
        dir: &Path,
        prefix: &str,
        max_size: u64,
        user_agent: &str,
    ) -> Result<WarcWriter, WarcError> {
        let io = |source| WarcError::Io {
            path: dir.to_owned(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut serial = 0;
        let mut last: Option<PathBuf> = None;
        for e in std::fs::read_dir(dir).map_err(io)? {
            let e = e.map_err(io)?;
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(n) = name
                .strip_prefix(&format!("{prefix}-"))
                .and_then(|r| r.strip_suffix(".warc.gz"))
                .and_then(|n| n.parse::<u32>().ok())
            {
                if n >= serial {
                    serial = n + 1;
                    last = Some(e.path());
                }
            }
        }
        if let Some(path) = last {
            repair(&path)?;
            // A kill between a file's creation and its first write leaves
            // it empty (or repaired to nothing): not a WARC file, so it goes,
            // and its number is used again.
            if std::fs::metadata(&path).map_err(io)?.len() == 0 {
                std::fs::remove_file(&path).map_err(io)?;
                serial -= 1;
            }
        }
        Ok(WarcWriter {
            dir: dir.to_owned(),
            prefix: prefix.to_owned(),
            max_size: max_size.max(1),
            user_agent: user_agent.to_owned(),
            file: None,
            serial,
            info_id: String::new(),
            records: 0,
            written: 0,
            deflate: Compress::new(Compression::fast(), false),
            evidence: batch::Batch::default(),
            pending: Vec::new(),
        })
    }

    /// Records written by this writer.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Bytes written by this writer, over all its files.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// The files in the directory, in order.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
            .collect();
        v.sort();
        v
    }

    fn io(&self, path: &Path) -> impl Fn(io::Error) -> WarcError + '_ {
        let path = path.to_owned();
        move |source| WarcError::Io {
            path: path.clone(),
            source,
        }
    }

    fn ensure_file(&mut self, now: UnixMillis) -> Result<(), WarcError> {
        if self
            .file
            .as_ref()
            .is_some_and(|(_, _, size)| *size < self.max_size)
        {
            return Ok(());
        }
        // What is waiting belongs to the file that is full.
        self.flush()?;
        let name = format!("{}-{:05}.warc.gz", self.prefix, self.serial);
        self.serial += 1;
        let path = self.dir.join(&name);
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(&path)
            .map_err(self.io(&path))?;
        self.file = Some((file, path, 0));
        self.info_id = record_id();
        // `software` names the program; the crawler's User-Agent has a
        // field of its own (WARC 1.1 annex: `http-header-user-agent`).
        let fields = format!(
            "software: mannerly/{}\r\nhttp-header-user-agent: {}\r\nformat: WARC File Format 1.1\r\nconformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n",
            env!("CARGO_PKG_VERSION"),
            self.user_agent
        );
        let date = warc_date(now);
        let headers = [
            ("WARC-Type", "warcinfo"),
            ("WARC-Record-ID", &self.info_id),
            ("WARC-Date", &date),
            ("WARC-Filename", &name),
            ("Content-Type", "application/warc-fields"),
        ];
        let from = self.pending.len();
        let made = member(
            &mut self.deflate,
            &mut self.pending,
            &headers,
            &[fields.as_bytes()],
        );
        self.members_done(from, made, 1)
    }

    /// Counts the members made since `from` in the waiting bytes
    /// (`records` of them), or drops them all when one could not be made:
    /// the waiting bytes only ever hold whole members.
    fn members_done(
        &mut self,
        from: usize,
        made: io::Result<()>,
        records: u64,
    ) -> Result<(), WarcError> {
        let Some((_, path, size)) = self.file.as_mut() else {
            self.pending.truncate(from);
            return Ok(());
        };
        if let Err(source) = made {
            self.pending.truncate(from);
            let path = path.clone();
            return Err(WarcError::Io { path, source });
        }
        let bytes = (self.pending.len() - from) as u64;
        *size += bytes;
        self.written += bytes;
        self.records += records;
        if self.pending.len() >= WRITE_PAST {
            self.flush()?;
        }
        Ok(())
    }

    /// Hands the members waiting to the file, in one write: a kill leaves
    /// at most one cut member at the end, which `repair` removes. A crawl
    /// calls this before its frontier records the pages done.
    pub fn flush(&mut self) -> Result<(), WarcError> {
        let Some((file, path, _)) = self.file.as_mut() else {
            self.pending.clear();
            return Ok(());
        };
        if self.pending.is_empty() {
            return Ok(());
        }
        file.write_all(&self.pending)
            .map_err(|source| WarcError::Io {
                path: path.clone(),
                source,
            })?;
        self.pending.clear();
        // A turn of large pages does not keep its buffer for good.
        if self.pending.capacity() > WRITE_PAST * 2 {
            self.pending.shrink_to(WRITE_PAST);
        }
        Ok(())
    }

    /// Archives one HTTP exchange: a `response` record and its `request`,
    /// written together.
    pub fn exchange(&mut self, x: &Exchange<'_>) -> Result<Archived, WarcError> {
        self.exchange_digested(x, sha1_digest(&[x.body]))
    }

    /// [`WarcWriter::exchange`] with the payload's digest,
    /// `sha1_digest(&[x.body])`, already computed by the caller (the crawl
    /// needs it first, to tell a revisit), so the body is not hashed again.
    pub(crate) fn exchange_digested(
        &mut self,
        x: &Exchange<'_>,
        payload_digest: String,
    ) -> Result<Archived, WarcError> {
        self.ensure_file(x.date)?;
        let (date, ip) = (warc_date(x.date), x.ip.map(ip_text));
        let response_id = record_id();
        let block_digest = sha1_digest(&[x.response_head, x.body]);
        let mut headers = Vec::with_capacity(10);
        headers.extend([
            ("WARC-Type", "response"),
            ("WARC-Record-ID", &response_id),
            ("WARC-Warcinfo-ID", &self.info_id),
            ("WARC-Date", &date),
            ("WARC-Target-URI", x.url),
        ]);
        if let Some(ip) = &ip {
            headers.push(("WARC-IP-Address", ip));
        }
        headers.push(("WARC-Block-Digest", &block_digest));
        headers.push(("WARC-Payload-Digest", &payload_digest));
        if x.truncated {
            headers.push(("WARC-Truncated", "length"));
        }
        headers.push(("Content-Type", "application/http;msgtype=response"));
        let from = self.pending.len();
        let block = [x.response_head, x.body];
        let response = member(&mut self.deflate, &mut self.pending, &headers, &block);
        self.write_request(x, (&date, ip.as_deref()), from, response, &response_id)?;
        Ok(Archived {
            record_id: response_id,
            date,
            payload_digest,
        })
    }

    /// Archives a response whose payload an earlier record holds: a
    /// `revisit` record (the response's head, no payload) naming that
    /// record, and the `request`.
    pub fn revisit(
        &mut self,
        x: &Exchange<'_>,
        profile: Profile,
        refers_to: &RefersTo<'_>,
    ) -> Result<Archived, WarcError> {
        self.ensure_file(x.date)?;
        let (date, ip) = (warc_date(x.date), x.ip.map(ip_text));
        let id = record_id();
        let block_digest = sha1_digest(&[x.response_head]);
        let mut headers = Vec::with_capacity(14);
        headers.extend([
            ("WARC-Type", "revisit"),
            ("WARC-Record-ID", &id),
            ("WARC-Warcinfo-ID", &self.info_id),
            ("WARC-Date", &date),
            ("WARC-Target-URI", x.url),
            ("WARC-Profile", profile.uri()),
            ("WARC-Refers-To", refers_to.id),
            ("WARC-Refers-To-Target-URI", refers_to.uri),
            ("WARC-Refers-To-Date", refers_to.date),
            ("WARC-Payload-Digest", refers_to.payload_digest),
        ]);
        if let Some(ip) = &ip {
            headers.push(("WARC-IP-Address", ip));
        }
        headers.push(("WARC-Block-Digest", &block_digest));
        if profile == Profile::IdenticalPayloadDigest {
            headers.push(("WARC-Truncated", "length"));
        }
        headers.push(("Content-Type", "application/http;msgtype=response"));
        let from = self.pending.len();
        let block = [x.response_head];
        let revisit = member(&mut self.deflate, &mut self.pending, &headers, &block);
        self.write_request(x, (&date, ip.as_deref()), from, revisit, &id)?;
        // The payload stays where it was: a later revisit names it too.
        Ok(Archived {
            record_id: refers_to.id.to_owned(),
            date: refers_to.date.to_owned(),
            payload_digest: refers_to.payload_digest.to_owned(),
        })
    }

    /// After `first` (a response or revisit record, made from `from` in
    /// the waiting bytes), the exchange's `request` record, concurrent to
    /// `concurrent_to`, with the first's date and IP address (as written
    /// there): the records of an exchange are written together.
    fn write_request(
        &mut self,
        x: &Exchange<'_>,
        (date, ip): (&str, Option<&str>),
        from: usize,
        first: io::Result<()>,
        concurrent_to: &str,
    ) -> Result<(), WarcError> {
        let request_id = record_id();
        let block_digest = sha1_digest(&[x.request_head]);
        let mut headers = Vec::with_capacity(9);
        headers.extend([
            ("WARC-Type", "request"),
            ("WARC-Record-ID", request_id.as_str()),
            ("WARC-Warcinfo-ID", &self.info_id),
            ("WARC-Date", date),
            ("WARC-Target-URI", x.url),
            ("WARC-Concurrent-To", concurrent_to),
        ]);
        if let Some(ip) = ip {
            headers.push(("WARC-IP-Address", ip));
        }
        headers.push(("WARC-Block-Digest", &block_digest));
        headers.push(("Content-Type", "application/http;msgtype=request"));
        let mut records = 2;
        let block = [x.request_head];
        let made =
            first.and_then(|()| member(&mut self.deflate, &mut self.pending, &headers, &block));
        drop(headers);
        let all = made.and_then(|()| {
            if let Some(evidence) = x.evidence {
                self.evidence.push(evidence, request_id, x.date);
                if self.evidence.is_due(x.date) {
                    if let Some(member) = self.evidence_member() {
                        member?;
                        records += 1;
                    }
                }
            }
            Ok(())
        });
        self.members_done(from, all, records)
    }

    /// One `metadata` record holding the batch of evidence records, one a
    /// line, with a `WARC-Concurrent-To` for each in the same order; the
    /// batch is emptied (its buffer kept). `None` when it is empty.
    fn evidence_member(&mut self) -> Option<io::Result<()>> {
        let due = self.evidence.due()?;
        let (id, date) = (record_id(), warc_date(due.date));
        let fields = [
            ("WARC-Type", "metadata"),
            ("WARC-Record-ID", &id),
            ("WARC-Date", &date),
        ]
        .into_iter()
        .chain(
            due.requests
                .iter()
                .map(|r| ("WARC-Concurrent-To", r.as_str())),
        )
        .chain([("Content-Type", "application/x-ndjson")]);
        let head = record_head(fields, due.lines.len());
        let parts = [head.as_bytes(), due.lines, b"\r\n\r\n"];
        let member = gzip_member(&mut self.deflate, &parts, &mut self.pending);
        self.evidence.clear();
        Some(member)
    }

    /// Writes the evidence records still waiting for their `metadata`
    /// record.
    pub fn flush_evidence(&mut self) -> Result<(), WarcError> {
        let from = self.pending.len();
        match self.evidence_member() {
            Some(member) => self.members_done(from, member, 1),
            None => Ok(()),
        }
    }

    /// Writes the evidence waiting, then flushes and fsyncs the current
    /// file.
    pub fn sync(&mut self) -> Result<(), WarcError> {
        self.flush_evidence()?;
        self.flush()?;
        if let Some((file, path, _)) = self.file.as_mut() {
            let path = path.clone();
            file.sync_data()
                .map_err(|source| WarcError::Io { path, source })?;
        }
        Ok(())
    }
}

/// A record's version line and header fields, `Content-Length: len` last,
/// and the empty line.
fn record_head<'a>(headers: impl IntoIterator<Item = (&'a str, &'a str)>, len: usize) -> String {
    let mut head = String::with_capacity(512);
    head.push_str("WARC/1.1\r\n");
    for (k, v) in headers {
        push_header(&mut head, k, v);
    }
    head.push_str("Content-Length: ");
    head.push_str(itoa::Buffer::new().format(len));
    head.push_str("\r\n\r\n");
    head
}

/// One record as a gzip member, after the members waiting in `pending`.
fn member(
    deflate: &mut Compress,
    pending: &mut Vec<u8>,
    headers: &[(&str, &str)],
    block: &[&[u8]],
) -> io::Result<()> {
    let len: usize = block.iter().map(|b| b.len()).sum();
    let head = record_head(headers.iter().copied(), len);
    let mut parts = Vec::with_capacity(block.len() + 2);
    parts.push(head.as_bytes());
    parts.extend_from_slice(block);
    parts.push(b"\r\n\r\n");
    gzip_member(deflate, &parts, pending)
}

/// `name: value` and its CRLF, written straight into `head` (a WARC
/// record's head, or the HTTP heads it stores).
pub(crate) fn push_header(head: &mut String, name: &str, value: &str) {
    head.reserve(name.len() + value.len() + 4);
    head.push_str(name);
    head.push_str(": ");
    head.push_str(value);
    head.push_str("\r\n");
}

impl Drop for WarcWriter {
    /// A writer dropped without [`WarcWriter::sync`] (a crawl ending on an
    /// error) still archives the evidence waiting; an error here has no one
    /// to go to, and `records.jsonl` holds the records anyway.
    fn drop(&mut self) {
        let _ = self.flush_evidence();
        let _ = self.flush();
    }
}

/// One gzip member (RFC 1952) holding `parts` in order, after `out`'s
/// bytes, compressed with `deflate` (raw, reset first), or stored when
/// shorter than [`STORE_BELOW`]. The header carries no name and no time, so equal
/// records compress to equal bytes.
fn gzip_member(deflate: &mut Compress, parts: &[&[u8]], out: &mut Vec<u8>) -> io::Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if let Ok(short) = u16::try_from(len) {
        if usize::from(short) < STORE_BELOW {
            stored_member(parts, short, out);
            return Ok(());
        }
    }
    deflate.reset();
    let mut crc = Crc::new();
    out.reserve(len / 2 + 256);
    // XFL 4: the fastest level.
    out.extend_from_slice(&member_header(4));
    for (i, part) in parts.iter().enumerate() {
        crc.update(part);
        let last = i + 1 == parts.len();
        let flush = if last {
            FlushCompress::Finish
        } else {
            FlushCompress::None
        };
        let mut input: &[u8] = part;
        loop {
            if out.capacity() - out.len() < 1024 {
                out.reserve(input.len() / 2 + 4096);
            }
            let before = deflate.total_in();
            let status = deflate
                .compress_vec(input, out, flush)
                .map_err(io::Error::other)?;
            let used = usize::try_from(deflate.total_in() - before).unwrap_or(input.len());
            input = &input[used.min(input.len())..];
            let done = if last {
                status == Status::StreamEnd
            } else {
                input.is_empty()
            };
            if done {
                break;
            }
        }
    }
    end_member(out, &crc);
    Ok(())
}

/// A gzip member's header: ID1 ID2, CM = deflate, no flags, MTIME 0,
/// `xfl`, OS 255 (unknown).
fn member_header(xfl: u8) -> [u8; 10] {
    [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 0xff]
}

/// Ends a member: the CRC-32 and length of what it holds.
fn end_member(out: &mut Vec<u8>, crc: &Crc) {
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&crc.amount().to_le_bytes());
}

/// Records shorter than this go into their member stored, not compressed:
/// resetting the compressor clears a 128 KiB table, which cost more than
/// compressing a request record (some 600 bytes, 420 compressed) saves; in
/// a 300-host crawl the resets were a fiftieth of the CPU.
const STORE_BELOW: usize = 1024;

/// One gzip member holding `parts` (`len` bytes in all) in one stored
/// deflate block (RFC 1951, 3.2.4), after `out`'s bytes: no compression,
/// no compressor.
fn stored_member(parts: &[&[u8]], len: u16, out: &mut Vec<u8>) {
    let mut crc = Crc::new();
    out.reserve(usize::from(len) + 23);
    // XFL 0: nothing was compressed.
    out.extend_from_slice(&member_header(0));
    // BFINAL 1, BTYPE 00 (stored), then LEN and its complement.
    out.push(1);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    for part in parts {
        crc.update(part);
        out.extend_from_slice(part);
    }
    end_member(out, &crc);
}

/// Checks a `.warc.gz` file member by member and cuts it after the last
/// whole member, so a record cut by a kill leaves no unreadable tail.
/// Returns the bytes removed.
pub fn repair(path: &Path) -> Result<u64, WarcError> {
    let io = |source| WarcError::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let total = file.metadata().map_err(io)?.len();
    let mut reader = CountingReader {
        inner: BufReader::new(file),
        pos: 0,
    };
    let mut good = 0u64;
    loop {
        if reader.pos >= total {
            break;
        }
        // A member: decode it whole; its end is where the decoder stopped.
        let mut dec = flate2::bufread::GzDecoder::new(&mut reader);
        let ok = io::copy(&mut dec, &mut io::sink()).is_ok();
        drop(dec);
        if !ok {
            break;
        }
        good = reader.pos;
    }
    let cut = total - good;
    if cut > 0 {
        let f = OpenOptions::new().write(true).open(path).map_err(io)?;
        f.set_len(good).map_err(io)?;
        f.sync_all().map_err(io)?;
    }
    Ok(cut)
}

/// Counts the bytes consumed through `BufRead`, so a gzip member's end is
/// known exactly.
struct CountingReader<R> {
    inner: R,
    pos: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: io::BufRead> io::BufRead for CountingReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.pos += amt as u64;
        self.inner.consume(amt);
    }
}

#[cfg(test)]
mod tests;
