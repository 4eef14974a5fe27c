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
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
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
    out
}

/// `sha1:BASE32` of some bytes.
pub fn sha1_digest(parts: &[&[u8]]) -> String {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    format!("sha1:{}", base32(&h.finalize()))
}

/// `2026-11-22T21:00:00.123Z`: WARC 1.1 dates, to the millisecond.
pub fn warc_date(t: UnixMillis) -> String {
    t.to_rfc3339_millis()
}

/// A new record id.
pub fn record_id() -> String {
    format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
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

/// Writes records to rotating `.warc.gz` files in a directory.
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
}

impl WarcWriter {
    /// A writer into `dir`, files named `PREFIX-NNNNN.warc.gz`, a new one
    /// after `max_size` bytes. Existing files are kept: numbering goes on
    /// after the highest, and the last one is checked first (see
    /// [`repair`]). `user_agent` goes in each file's warcinfo record.
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
        let id = self.info_id.clone();
        let headers = vec![
            ("WARC-Type", "warcinfo".to_owned()),
            ("WARC-Record-ID", id),
            ("WARC-Date", warc_date(now)),
            ("WARC-Filename", name),
            ("Content-Type", "application/warc-fields".to_owned()),
        ];
        self.write_record(&headers, &[fields.as_bytes()])
    }

    fn write_record(
        &mut self,
        headers: &[(&str, String)],
        block: &[&[u8]],
    ) -> Result<(), WarcError> {
        let member = self.member(headers, block);
        self.write_members(member, 1)
    }

    /// One record as a gzip member.
    fn member(&mut self, headers: &[(&str, String)], block: &[&[u8]]) -> io::Result<Vec<u8>> {
        let len: usize = block.iter().map(|b| b.len()).sum();
        let head = record_head(headers.iter().map(|(k, v)| (*k, v.as_str())), len);
        let mut parts = Vec::with_capacity(block.len() + 2);
        parts.push(head.as_bytes());
        parts.extend_from_slice(block);
        parts.push(b"\r\n\r\n");
        gzip_member(&mut self.deflate, &parts, len / 2 + 256)
    }

    /// Writes whole members (`records` of them) in one write: a kill
    /// leaves at most one cut member at the end, which `repair` removes.
    fn write_members(&mut self, bytes: io::Result<Vec<u8>>, records: u64) -> Result<(), WarcError> {
        let Some((file, path, size)) = self.file.as_mut() else {
            return Ok(());
        };
        let path = path.clone();
        let err = |source| WarcError::Io {
            path: path.clone(),
            source,
        };
        let bytes = bytes.map_err(err)?;
        file.write_all(&bytes).map_err(err)?;
        *size += bytes.len() as u64;
        self.written += bytes.len() as u64;
        self.records += records;
        Ok(())
    }

    /// Archives one HTTP exchange: a `response` record and its `request`,
    /// written together.
    pub fn exchange(&mut self, x: &Exchange<'_>) -> Result<Archived, WarcError> {
        self.ensure_file(x.date)?;
        let response_id = record_id();
        let payload_digest = sha1_digest(&[x.body]);
        let mut headers = vec![
            ("WARC-Type", "response".to_owned()),
            ("WARC-Record-ID", response_id.clone()),
            ("WARC-Warcinfo-ID", self.info_id.clone()),
            ("WARC-Date", warc_date(x.date)),
            ("WARC-Target-URI", x.url.to_owned()),
        ];
        if let Some(ip) = x.ip {
            headers.push(("WARC-IP-Address", ip.to_string()));
        }
        headers.push(("WARC-Block-Digest", sha1_digest(&[x.response_head, x.body])));
        headers.push(("WARC-Payload-Digest", payload_digest.clone()));
        if x.truncated {
            headers.push(("WARC-Truncated", "length".to_owned()));
        }
        headers.push((
            "Content-Type",
            "application/http;msgtype=response".to_owned(),
        ));
        let response = self.member(&headers, &[x.response_head, x.body]);
        let archived = Archived {
            record_id: response_id,
            date: warc_date(x.date),
            payload_digest,
        };
        self.write_request(x, response, &archived.record_id)?;
        Ok(archived)
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
        let id = record_id();
        let mut headers = vec![
            ("WARC-Type", "revisit".to_owned()),
            ("WARC-Record-ID", id.clone()),
            ("WARC-Warcinfo-ID", self.info_id.clone()),
            ("WARC-Date", warc_date(x.date)),
            ("WARC-Target-URI", x.url.to_owned()),
            ("WARC-Profile", profile.uri().to_owned()),
            ("WARC-Refers-To", refers_to.id.to_owned()),
            ("WARC-Refers-To-Target-URI", refers_to.uri.to_owned()),
            ("WARC-Refers-To-Date", refers_to.date.to_owned()),
            ("WARC-Payload-Digest", refers_to.payload_digest.to_owned()),
        ];
        if let Some(ip) = x.ip {
            headers.push(("WARC-IP-Address", ip.to_string()));
        }
        headers.push(("WARC-Block-Digest", sha1_digest(&[x.response_head])));
        if profile == Profile::IdenticalPayloadDigest {
            headers.push(("WARC-Truncated", "length".to_owned()));
        }
        headers.push((
            "Content-Type",
            "application/http;msgtype=response".to_owned(),
        ));
        let revisit = self.member(&headers, &[x.response_head]);
        self.write_request(x, revisit, &id)?;
        // The payload stays where it was: a later revisit names it too.
        Ok(Archived {
            record_id: refers_to.id.to_owned(),
            date: refers_to.date.to_owned(),
            payload_digest: refers_to.payload_digest.to_owned(),
        })
    }

    /// Writes `first` (a response or revisit record) and the exchange's
    /// `request` record, concurrent to `concurrent_to`, in one write.
    fn write_request(
        &mut self,
        x: &Exchange<'_>,
        first: std::io::Result<Vec<u8>>,
        concurrent_to: &str,
    ) -> Result<(), WarcError> {
        let response = first;
        let request_id = record_id();
        let mut headers = vec![
            ("WARC-Type", "request".to_owned()),
            ("WARC-Record-ID", request_id.clone()),
            ("WARC-Warcinfo-ID", self.info_id.clone()),
            ("WARC-Date", warc_date(x.date)),
            ("WARC-Target-URI", x.url.to_owned()),
            ("WARC-Concurrent-To", concurrent_to.to_owned()),
        ];
        if let Some(ip) = x.ip {
            headers.push(("WARC-IP-Address", ip.to_string()));
        }
        headers.push(("WARC-Block-Digest", sha1_digest(&[x.request_head])));
        headers.push((
            "Content-Type",
            "application/http;msgtype=request".to_owned(),
        ));
        // The records in one write: one system call per exchange.
        let mut records = 2;
        let all = response.and_then(|mut r| {
            r.extend_from_slice(&self.member(&headers, &[x.request_head])?);
            if let Some(evidence) = x.evidence {
                self.evidence.push(evidence, request_id, x.date);
                if self.evidence.is_due(x.date) {
                    if let Some(member) = self.evidence_member() {
                        r.extend_from_slice(&member?);
                        records += 1;
                    }
                }
            }
            Ok(r)
        });
        self.write_members(all, records)
    }

    /// One `metadata` record holding the batch of evidence records, one a
    /// line, with a `WARC-Concurrent-To` for each in the same order; the
    /// batch is emptied (its buffer kept). `None` when it is empty.
    fn evidence_member(&mut self) -> Option<io::Result<Vec<u8>>> {
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
        let member = gzip_member(&mut self.deflate, &parts, due.lines.len() / 4 + 256);
        self.evidence.clear();
        Some(member)
    }

    /// Writes the evidence records still waiting for their `metadata`
    /// record.
    pub fn flush_evidence(&mut self) -> Result<(), WarcError> {
        match self.evidence_member() {
            Some(member) => self.write_members(member, 1),
            None => Ok(()),
        }
    }

    /// Writes the evidence waiting, then flushes and fsyncs the current
    /// file.
    pub fn sync(&mut self) -> Result<(), WarcError> {
        self.flush_evidence()?;
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
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    head.push_str(&format!("Content-Length: {len}\r\n\r\n"));
    head
}

impl Drop for WarcWriter {
    /// A writer dropped without [`WarcWriter::sync`] (a crawl ending on an
    /// error) still archives the evidence waiting; an error here has no one
    /// to go to, and `records.jsonl` holds the records anyway.
    fn drop(&mut self) {
        let _ = self.flush_evidence();
    }
}

/// One gzip member (RFC 1952) holding `parts` in order, compressed with
/// `deflate` (raw, reset first), or stored when shorter than
/// [`STORE_BELOW`]. The header carries no name and no time, so equal
/// records compress to equal bytes.
fn gzip_member(deflate: &mut Compress, parts: &[&[u8]], hint: usize) -> io::Result<Vec<u8>> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if let Ok(short) = u16::try_from(len) {
        if usize::from(short) < STORE_BELOW {
            return Ok(stored_member(parts, short));
        }
    }
    deflate.reset();
    let mut crc = Crc::new();
    let mut out = Vec::with_capacity(hint + 18);
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
                .compress_vec(input, &mut out, flush)
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
    end_member(&mut out, &crc);
    Ok(out)
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
/// deflate block (RFC 1951, 3.2.4): no compression, no compressor.
fn stored_member(parts: &[&[u8]], len: u16) -> Vec<u8> {
    let mut crc = Crc::new();
    let mut out = Vec::with_capacity(usize::from(len) + 23);
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
    end_member(&mut out, &crc);
    out
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
mod tests {
    use super::*;
    use flate2::write::GzEncoder;

    #[test]
    fn base32_matches_rfc_4648() {
        assert_eq!(base32(b""), "");
        assert_eq!(base32(b"f"), "MY======");
        assert_eq!(base32(b"fo"), "MZXQ====");
        assert_eq!(base32(b"foo"), "MZXW6===");
        assert_eq!(base32(b"foob"), "MZXW6YQ=");
        assert_eq!(base32(b"fooba"), "MZXW6YTB");
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI======");
        // The SHA-1 of nothing, as web archives write it.
        assert_eq!(sha1_digest(&[b""]), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }

    #[test]
    fn dates_have_milliseconds() {
        assert_eq!(
            warc_date(UnixMillis(1_795_168_800_123)),
            "2026-11-20T10:00:00.123Z"
        );
        assert_eq!(
            warc_date(UnixMillis(1_795_168_861_005)),
            "2026-11-20T10:01:01.005Z"
        );
    }

    fn exchange(url: &str) -> Exchange<'_> {
        Exchange {
            url,
            date: UnixMillis(1_795_168_800_000),
            ip: Some("127.0.0.1".parse().expect("ip")),
            request_head: b"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n",
            response_head: b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
            body: b"<a href=/x>x</a>",
            truncated: false,
            evidence: None,
        }
    }

    #[test]
    fn members_of_any_size_decode_to_their_parts() {
        let mut d = Compress::new(Compression::fast(), false);
        // Incompressible bytes, so the output outgrows every reservation.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let big: Vec<u8> = (0..3_000_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let short = &big[..STORE_BELOW - 7];
        for parts in [
            vec![&b""[..]],
            // Stored: the largest a stored member holds, and one byte past.
            vec![&b"ab"[..], short, b"\r\n\r\n"],
            vec![&b"abc"[..], short, b"\r\n\r\n"],
            vec![&b"head\r\n"[..], &big[..], b"\r\n\r\n"],
        ] {
            let member = gzip_member(&mut d, &parts, 16).expect("deflate");
            let len: usize = parts.iter().map(|p| p.len()).sum();
            // XFL: 0 stored, 4 compressed (fastest).
            let xfl = if len < STORE_BELOW { 0 } else { 4 };
            assert_eq!(member[8], xfl, "{len} bytes");
            let mut back = Vec::new();
            let mut one = flate2::read::GzDecoder::new(&member[..]);
            one.read_to_end(&mut back)
                .expect("a valid gzip member (CRC and length checked)");
            assert_eq!(back, parts.concat());
            assert_eq!(
                one.header().map(|h| (h.mtime(), h.filename())),
                Some((0, None)),
                "no time, no name: equal records compress to equal bytes"
            );
        }
    }

    #[test]
    fn a_batch_of_evidence_takes_a_fraction_of_its_records_bytes() {
        // Records as a crawl writes them: each with its own chain hash.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let lines: Vec<String> = (0..batch::MAX_RECORDS)
            .map(|i| {
                let prev: String = (0..4)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        format!("{x:016x}")
                    })
                    .collect();
                format!(
                    r#"{{"chain":"9adc9a7cfcd5c65a","decision":{{"allowed":true,"line":null,"rule":null}},"delay":{{"required_s":1,"since_previous_s":1.002,"source":"default"}},"host":"site{i}.test","kind":"page","method":"GET","prev":"{prev}","seq":1,"url":"http://site{i}.test/p1.html","user_agent":"mannerly/0.1.0","v":1}}"#
                )
            })
            .collect();
        let written = |evidence: bool| {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("open");
            for (i, line) in lines.iter().enumerate() {
                let url = format!("http://site{i}.test/p1.html");
                w.exchange(&Exchange {
                    evidence: evidence.then_some(line.as_bytes()),
                    ..exchange(&url)
                })
                .expect("write");
            }
            w.sync().expect("sync");
            w.bytes_written()
        };
        let per_record = (written(true) - written(false)) / lines.len() as u64;
        let raw = lines.iter().map(String::len).sum::<usize>() / lines.len();
        // Alone in its member a record kept some 580 of its 940 bytes.
        assert!(
            per_record * 2 < raw as u64,
            "{per_record} bytes a record of {raw}"
        );
    }

    /// The records of a file, as (header fields, block) pairs.
    fn records_of(path: &Path) -> Vec<(Vec<(String, String)>, String)> {
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(File::open(path).expect("file"))
            .read_to_string(&mut text)
            .expect("gzip");
        let mut out = Vec::new();
        let mut rest = text.as_str();
        while let Some(r) = rest.strip_prefix("WARC/1.1\r\n") {
            let (head, after) = r.split_once("\r\n\r\n").expect("head");
            let fields: Vec<(String, String)> = head
                .split("\r\n")
                .filter_map(|l| l.split_once(": "))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            let len: usize = fields
                .iter()
                .find(|(k, _)| k == "Content-Length")
                .and_then(|(_, v)| v.parse().ok())
                .expect("length");
            out.push((fields, after[..len].to_owned()));
            rest = &after[len + 4..];
        }
        assert!(rest.is_empty(), "whole records only");
        out
    }

    #[test]
    fn evidence_goes_in_batches_each_line_beside_its_request() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("open");
        let n = batch::MAX_RECORDS + 3;
        let lines: Vec<String> = (0..n).map(|i| format!("{{\"seq\":{i}}}")).collect();
        for (i, line) in lines.iter().enumerate() {
            let url = format!("https://a.example/{i}");
            w.exchange(&Exchange {
                evidence: Some(line.as_bytes()),
                ..exchange(&url)
            })
            .expect("write");
        }
        w.sync().expect("sync: the last, part-full batch too");
        let records = records_of(&w.files()[0]);
        let field = |r: &(Vec<(String, String)>, String), name: &str| -> Vec<String> {
            r.0.iter()
                .filter(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .collect()
        };
        let kind = |r: &(Vec<(String, String)>, String)| field(r, "WARC-Type").concat();
        // Each request record's id and the line its exchange carried.
        let requests: Vec<(String, String)> = records
            .iter()
            .filter(|r| kind(r) == "request")
            .map(|r| {
                (
                    field(r, "WARC-Record-ID").concat(),
                    field(r, "WARC-Target-URI").concat(),
                )
            })
            .collect();
        let batches: Vec<_> = records.iter().filter(|r| kind(r) == "metadata").collect();
        assert_eq!(batches.len(), 2, "a full batch and the rest");
        let mut seen = 0;
        for b in &batches {
            assert_eq!(field(b, "Content-Type"), ["application/x-ndjson"]);
            let named = field(b, "WARC-Concurrent-To");
            assert_eq!(named.len(), b.1.lines().count());
            for (line, id) in b.1.lines().zip(&named) {
                let (_, url) = requests.iter().find(|(r, _)| r == id).expect("a request");
                assert_eq!(url, &format!("https://a.example/{seen}"));
                assert_eq!(line, lines[seen]);
                seen += 1;
            }
        }
        assert_eq!(seen, n, "every record, once, in order");
        let before = w.bytes_written();
        w.sync().expect("sync");
        assert_eq!(w.bytes_written(), before, "nothing left to write");
    }

    #[test]
    fn a_dropped_writer_archives_the_evidence_waiting() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("open");
        w.exchange(&Exchange {
            evidence: Some(b"{\"seq\":0}\n"),
            ..exchange("https://a.example/")
        })
        .expect("write");
        let file = w.files()[0].clone();
        drop(w);
        let records = records_of(&file);
        let last = records.last().expect("records");
        assert_eq!(last.1, "{\"seq\":0}\n", "one line, its newline kept single");
    }

    #[test]
    fn files_rotate_and_each_opens_with_warcinfo() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = WarcWriter::open(dir.path(), "t", 600, "mannerly-test").expect("open");
        for i in 0..4 {
            w.exchange(&exchange(&format!("https://a.example/{i}")))
                .expect("write");
        }
        let files = w.files();
        assert!(files.len() >= 2, "{files:?}");
        for f in &files {
            let mut text = String::new();
            flate2::read::MultiGzDecoder::new(File::open(f).expect("file"))
                .read_to_string(&mut text)
                .expect("gzip");
            assert!(
                text.starts_with("WARC/1.1\r\nWARC-Type: warcinfo\r\n"),
                "{text}"
            );
            assert!(text.contains("WARC-Type: response") && text.contains("WARC-Type: request"));
        }
    }

    #[test]
    fn a_cut_record_is_removed_and_writing_goes_on_in_a_new_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("open");
        w.exchange(&exchange("https://a.example/1")).expect("write");
        drop(w);
        let file = dir.path().join("t-00000.warc.gz");
        let whole = std::fs::metadata(&file).expect("meta").len();
        // A kill in the middle of a write: half a member at the end.
        let mut f = OpenOptions::new().append(true).open(&file).expect("append");
        let mut half = GzEncoder::new(Vec::new(), Compression::fast());
        half.write_all(&[b'x'; 4096]).expect("gz");
        let half = half.finish().expect("gz");
        f.write_all(&half[..half.len() / 2]).expect("write");
        drop(f);
        let mut w = WarcWriter::open(dir.path(), "t", 1 << 30, "mannerly-test").expect("reopen");
        assert_eq!(std::fs::metadata(&file).expect("meta").len(), whole);
        w.exchange(&exchange("https://a.example/2")).expect("write");
        assert_eq!(w.files().len(), 2, "a new file after a resume");
    }
}
