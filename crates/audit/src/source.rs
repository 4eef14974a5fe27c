//! Reading log files into an audit: each file's format found (or given),
//! batches parsed on every core, files read in step by time so that
//! requests from several servers interleave as they happened.

use std::io::Read;

use mannerly_logs::{detect, open, Entry, Format, LineError, Lines, Parser};
use rayon::prelude::*;

use crate::engine::{Auditor, Identify, Options};
use crate::report::{FileReport, Report};
use crate::{Catalogue, RobotsBook};

/// Unreadable lines described per file, at most.
const UNPARSED_EXAMPLES: usize = 5;

/// Bytes read per batch.
const BATCH: usize = 4 << 20;

/// Bytes of a piece of a batch parsed on one core.
const CHUNK_BYTES: usize = 256 << 10;

/// One log to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSource {
    /// A path, or `-` for stdin.
    pub path: String,
    /// Its format, when not to be found from its lines.
    pub format: Option<Format>,
    /// An nginx `log_format` string, for custom layouts.
    pub log_format: Option<String>,
}

/// A log could not be read at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// Opening or reading failed.
    #[error(transparent)]
    Open(#[from] mannerly_logs::OpenError),
    /// Reading failed part way.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The `log_format` string cannot be used.
    #[error("--log-format: {0}")]
    LogFormat(#[from] mannerly_logs::LogFormatError),
}

struct File {
    path: String,
    lines: Lines<Box<dyn Read + Send>>,
    parser: Option<Parser>,
    forced: Option<Parser>,
    report: FileReport,
    latest: i64,
    done: bool,
}

/// Audits the logs: every line read, every request judged.
pub fn audit_logs(
    sources: &[LogSource],
    book: &RobotsBook,
    catalogue: &Catalogue,
    options: Options,
    identify: &mut dyn Identify,
) -> Result<Report, SourceError> {
    let mut files = Vec::new();
    for s in sources {
        let forced = match (&s.log_format, s.format) {
            (Some(f), _) => Some(Parser::log_format(f)?),
            (None, Some(f)) => Parser::new(f).ok(),
            (None, None) => None,
        };
        files.push(File {
            path: s.path.clone(),
            lines: Lines::new(open(&s.path)?),
            parser: None,
            forced,
            report: FileReport {
                path: s.path.clone(),
                format: String::new(),
                lines: 0,
                unparsed: 0,
                unparsed_examples: Vec::new(),
            },
            latest: i64::MIN,
            done: false,
        });
    }
    let mut auditor = Auditor::new(book, catalogue, options, files.len());
    // Read the file that is furthest behind in time, a batch at a time.
    while let Some(i) = (0..files.len())
        .filter(|&i| !files[i].done)
        .min_by_key(|&i| (files[i].latest, i))
    {
        read_batch(&mut files[i], i, &mut auditor, identify)?;
        if files[i].done {
            auditor.end_file(i);
        }
    }
    let mut report = auditor.finish();
    report.files = files.into_iter().map(|f| f.report).collect();
    report.lines = report.files.iter().map(|f| f.lines).sum();
    report.unparsed = report.files.iter().map(|f| f.unparsed).sum();
    Ok(report)
}

/// A line's outcome: its number and entry, or why it was not read.
type Parsed<'a> = Vec<(u64, Result<Option<Entry<'a>>, LineError>)>;

fn read_batch(
    f: &mut File,
    index: usize,
    auditor: &mut Auditor<'_>,
    identify: &mut dyn Identify,
) -> Result<(), SourceError> {
    let read_err = |source| SourceError::Read {
        path: f.path.clone(),
        source,
    };
    let Some(batch) = f.lines.next_batch(BATCH).map_err(read_err)? else {
        f.done = true;
        return Ok(());
    };
    let parser = match (&f.parser, &f.forced) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => p.clone(),
        (None, None) => {
            let text = String::from_utf8_lossy(&batch.text);
            let first: Vec<&str> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(50)
                .collect();
            match detect(&first) {
                Ok(p) => p,
                Err(e) => return unknown_format(f, &batch, &text, &e.to_string()),
            }
        }
    };
    f.report.format = parser.format().to_string();
    let chunks = chunks(&batch.text, parser.format() == Format::W3c);
    let texts = texts(&chunks);
    let parsed = parse_parallel(&parser, &texts, batch.first_line);
    f.parser = Some(advance(parser, &texts));
    for n in &batch.too_long {
        count_unparsed(&mut f.report, *n, &LineError::TooLong.to_string());
    }
    let mut wanted = Vec::new();
    let mut agents: Vec<String> = Vec::new();
    for (_, r) in &parsed {
        if let Ok(Some(e)) = r {
            auditor.wanted(e, &mut wanted);
            if let Some(a) = e.signature.as_ref().and_then(|s| s.agent.as_deref()) {
                if !agents.iter().any(|x| x == a) {
                    agents.push(a.to_owned());
                }
            }
        }
    }
    identify.prepare(&wanted, &agents);
    for chunk in parsed {
        let (n, r) = chunk;
        f.report.lines = f.report.lines.max(n);
        match r {
            Ok(Some(e)) => {
                f.latest = f.latest.max(e.stamp.millis);
                auditor.feed(index, &e, identify);
            }
            Ok(None) => {}
            Err(e) => count_unparsed(&mut f.report, n, &e.to_string()),
        }
    }
    Ok(())
}

/// A batch cut into pieces of whole lines to parse in parallel (one
/// piece for W3C, whose `#Fields` lines change how later lines read).
fn chunks(bytes: &[u8], whole: bool) -> Vec<&[u8]> {
    if whole {
        return vec![bytes];
    }
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let target = (start + CHUNK_BYTES).min(bytes.len());
        let end = match memchr::memchr(b'\n', &bytes[target..]) {
            Some(i) if target < bytes.len() => target + i + 1,
            _ => bytes.len(),
        };
        out.push(&bytes[start..end]);
        start = end;
    }
    out
}

/// Each piece as text, checked on every core (invalid UTF-8 is replaced,
/// so a line with a stray byte is still read).
fn texts<'a>(chunks: &[&'a [u8]]) -> Vec<std::borrow::Cow<'a, str>> {
    chunks
        .par_iter()
        .map(|c| match std::str::from_utf8(c) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(c),
        })
        .collect()
}

/// Parses the pieces on every core, keeping their order and numbering
/// their lines from `first_line`.
fn parse_parallel<'a>(
    parser: &Parser,
    texts: &'a [std::borrow::Cow<'a, str>],
    first_line: u64,
) -> Parsed<'a> {
    let pieces: Vec<(u64, Parsed<'a>)> = texts
        .par_iter()
        .map(|text| {
            let mut p = parser.clone();
            let mut parsed = Parsed::new();
            let (mut start, mut i) = (0, 0);
            let b = text.as_bytes();
            for end in memchr::memchr_iter(b'\n', b)
                .chain((b.last() != Some(&b'\n') && !b.is_empty()).then_some(b.len()))
            {
                parsed.push((i, p.parse(&text[start..end])));
                start = end + 1;
                i += 1;
            }
            (i, parsed)
        })
        .collect();
    let mut out = Vec::with_capacity(pieces.iter().map(|(_, p)| p.len()).sum());
    let mut base = first_line;
    for (lines, parsed) in pieces {
        out.extend(parsed.into_iter().map(|(i, r)| (base + i, r)));
        base += lines;
    }
    out
}

/// The parser's state after a batch (a W3C `#Fields` line changes it).
fn advance(mut parser: Parser, texts: &[std::borrow::Cow<'_, str>]) -> Parser {
    if parser.format() == Format::W3c {
        for l in texts
            .iter()
            .flat_map(|t| t.lines())
            .filter(|l| l.starts_with('#'))
        {
            let _ = parser.parse(l);
        }
    }
    parser
}

fn unknown_format(
    f: &mut File,
    batch: &mannerly_logs::Batch,
    text: &str,
    why: &str,
) -> Result<(), SourceError> {
    f.report.format = "unknown".into();
    for (i, l) in text.split_terminator('\n').enumerate() {
        let n = batch.first_line + i as u64;
        f.report.lines = f.report.lines.max(n);
        if !l.trim().is_empty() {
            count_unparsed(&mut f.report, n, why);
        }
    }
    Ok(())
}

fn count_unparsed(report: &mut FileReport, line: u64, why: &str) {
    report.unparsed += 1;
    report.lines = report.lines.max(line);
    if report.unparsed_examples.len() < UNPARSED_EXAMPLES {
        report.unparsed_examples.push((line, why.to_owned()));
    }
}
