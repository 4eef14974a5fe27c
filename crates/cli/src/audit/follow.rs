//! `mannerly audit --follow`: the logs read to their end, then read as
//! lines are appended, across rotation (the file renamed and a new one
//! made, or copied and truncated); each finding printed as it is judged,
//! within a poll and the reordering window of its line; Ctrl-C prints the
//! report so far. Memory stays that of the audit's bounded state: lines
//! are read in place, judged and dropped.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use mannerly_audit::metrics::FollowMetrics;
use mannerly_audit::{Auditor, Finding, Identify, Layout};
use mannerly_logs::{Format, Parser, MAX_LINE};
use mannerly_metrics::Registry;

/// How often the files are looked at.
const POLL: Duration = Duration::from_millis(250);
/// The most read from one file in one poll.
const CHUNK: u64 = 8 << 20;
/// The first bytes kept to tell a file truncated and written again.
const HEAD: usize = 256;

/// One followed file.
struct Followed {
    path: String,
    file: File,
    inode: u64,
    pos: u64,
    /// The start of a line whose end has not been written yet.
    partial: Vec<u8>,
    /// Lines read, and those no request could be read from.
    lines: u64,
    unread: u64,
    /// The file's first bytes as read: a file truncated and written again
    /// to the same length (copy-truncate) no longer starts with them.
    head: Vec<u8>,
    parser: Option<Parser>,
}

impl Followed {
    fn open(path: &str, parser: Option<Parser>) -> Result<Followed> {
        let file = File::open(path).with_context(|| format!("cannot open '{path}'"))?;
        let inode = file.metadata().map(|m| m.ino()).unwrap_or(0);
        Ok(Followed {
            path: path.to_owned(),
            file,
            inode,
            pos: 0,
            partial: Vec::new(),
            head: Vec::new(),
            lines: 0,
            unread: 0,
            parser,
        })
    }

    /// The complete lines written since the last call, across a rotation.
    fn new_lines(&mut self) -> Vec<String> {
        // Copied and truncated: from its start again. Checked before
        // reading on, which would otherwise take the end of the new text
        // past the old length for a line of its own.
        let truncated = self.file.metadata().is_ok_and(|m| m.len() < self.pos);
        if truncated || !self.starts_as_before() {
            let _ = self.file.seek(SeekFrom::Start(0));
            self.pos = 0;
            self.partial.clear();
            self.head.clear();
        }
        let mut lines = self.read_on();
        // Renamed away and made anew: the old file's rest, then the new.
        if let Ok(m) = std::fs::metadata(&self.path) {
            if m.ino() != self.inode {
                if let Ok(f) = File::open(&self.path) {
                    self.file = f;
                    self.inode = m.ino();
                    self.pos = 0;
                    self.partial.clear();
                    self.head.clear();
                    lines.extend(self.read_on());
                }
            }
        }
        lines
    }

    /// Whether the file still begins with the bytes first read from it.
    fn starts_as_before(&self) -> bool {
        use std::os::unix::fs::FileExt;
        if self.head.is_empty() {
            return true;
        }
        let mut now = vec![0; self.head.len()];
        match self.file.read_at(&mut now, 0) {
            Ok(n) => now[..n] == self.head[..n.min(self.head.len())] && n == self.head.len(),
            Err(_) => true,
        }
    }

    fn read_on(&mut self) -> Vec<String> {
        let mut buf = Vec::new();
        // A long backlog is read a chunk a poll, never whole.
        let _ = (&mut self.file).take(CHUNK).read_to_end(&mut buf);
        if self.head.len() < HEAD && self.pos < HEAD as u64 {
            let take = (HEAD - self.head.len()).min(buf.len());
            self.head.extend_from_slice(&buf[..take]);
        }
        self.pos += buf.len() as u64;
        self.partial.extend_from_slice(&buf);
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else {
            // A line past the cap is dropped whole, never held.
            if self.partial.len() > MAX_LINE {
                self.partial.clear();
            }
            return Vec::new();
        };
        let rest = self.partial.split_off(end + 1);
        let done = std::mem::replace(&mut self.partial, rest);
        String::from_utf8_lossy(&done)
            .lines()
            .filter(|l| l.len() <= MAX_LINE)
            .map(str::to_owned)
            .collect()
    }
}

/// The parser a followed file is read with: given, or found from its
/// first lines.
fn parser_for(format: Option<Format>, layout: Option<&Layout>, lines: &[String]) -> Option<Parser> {
    if let Some(l) = layout {
        return Parser::layout(l).ok();
    }
    if let Some(f) = format {
        return Parser::new(f).ok();
    }
    let head: Vec<&str> = lines.iter().take(200).map(String::as_str).collect();
    mannerly_logs::detect(&head).ok()
}

/// What a follow is asked to do.
pub(super) struct Follow<'a> {
    pub paths: &'a [String],
    pub format: Option<Format>,
    pub layout: Option<&'a Layout>,
    pub json_lines: bool,
    /// Where to serve the follow's metrics.
    pub metrics: Option<&'a str>,
}

/// A follow's families, served at `addr` from a thread of their own.
fn serve_metrics(addr: &str) -> Result<FollowMetrics> {
    let registry = Registry::new(true);
    let m = FollowMetrics::new(&registry);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the metrics runtime")?;
    let task = rt.block_on(crate::metrics::listen(addr, registry))?;
    std::thread::spawn(move || {
        let _ = rt.block_on(task);
    });
    Ok(m)
}

/// Follows the logs until Ctrl-C, printing findings; returns the report
/// so far.
pub(super) fn follow(
    how: &Follow<'_>,
    mut auditor: Auditor<'_>,
    identify: &mut dyn Identify,
) -> Result<mannerly_audit::Report> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            if rt.block_on(tokio::signal::ctrl_c()).is_ok() {
                flag.store(true, Ordering::SeqCst);
            }
        }
    });
    let mut files: Vec<Followed> = how
        .paths
        .iter()
        .map(|p| Followed::open(p, None))
        .collect::<Result<_>>()?;
    let metrics = how.metrics.map(serve_metrics).transpose()?;
    let mut out = std::io::stdout().lock();
    while !stop.load(Ordering::SeqCst) {
        let mut busy = false;
        for (i, f) in files.iter_mut().enumerate() {
            let before = f.pos;
            let lines = f.new_lines();
            busy |= f.pos.saturating_sub(before) >= CHUNK;
            if f.parser.is_none() && !lines.is_empty() {
                f.parser = parser_for(how.format, how.layout, &lines);
            }
            f.lines += lines.len() as u64;
            let unread = match &mut f.parser {
                Some(parser) => feed(&mut auditor, identify, parser, i, &lines),
                None => lines.len() as u64,
            };
            f.unread += unread;
            if let Some(m) = &metrics {
                m.read(lines.len() as u64, unread);
            }
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        auditor.advance(now);
        for finding in auditor.take_findings() {
            if let Some(m) = &metrics {
                m.finding(&finding);
            }
            print_finding(&mut out, &finding, how.json_lines)?;
        }
        out.flush()?;
        if !busy {
            std::thread::sleep(POLL);
        }
    }
    let mut report = auditor.finish();
    report.lines = files.iter().map(|f| f.lines).sum();
    report.unparsed = files.iter().map(|f| f.unread).sum();
    report.files = files
        .iter()
        .map(|f| mannerly_audit::FileReport {
            path: f.path.clone(),
            format: f
                .parser
                .as_ref()
                .map_or_else(|| "none found".into(), |p| p.format().to_string()),
            lines: f.lines,
            unparsed: f.unread,
            unparsed_examples: Vec::new(),
        })
        .collect();
    Ok(report)
}

/// Feeds a poll's lines, identity checks prepared together; returns how
/// many could not be read.
fn feed(
    auditor: &mut Auditor<'_>,
    identify: &mut dyn Identify,
    parser: &mut Parser,
    file: usize,
    lines: &[String],
) -> u64 {
    let mut unread = 0;
    let entries: Vec<_> = lines
        .iter()
        .filter_map(|l| {
            parser.parse(l).unwrap_or_else(|_| {
                unread += 1;
                None
            })
        })
        .collect();
    let mut wanted = Vec::new();
    for e in &entries {
        auditor.wanted(e, &mut wanted);
    }
    if !wanted.is_empty() {
        identify.prepare(&wanted, &[]);
    }
    for e in &entries {
        auditor.feed(file, e, identify);
    }
    unread
}

fn print_finding(out: &mut impl Write, f: &Finding, json: bool) -> Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string(f)?)?;
    } else {
        let e = &f.example;
        let from = f
            .address
            .as_deref()
            .map(|a| format!(" from {a}"))
            .unwrap_or_default();
        writeln!(
            out,
            "{} {}{from} ({}) {} {} [{}] {}",
            e.time,
            f.token,
            f.identity.as_str(),
            e.host,
            e.path,
            e.rule.as_str(),
            e.detail
        )?;
    }
    Ok(())
}
