//! Reading log files into an audit. Each file is read and parsed a batch
//! at a time on its own thread (pieces of a batch on the other cores too,
//! when there are more than two), while the audit judges the batch
//! before; files are taken in step by time, so requests from several
//! servers interleave as they happened.

use std::sync::mpsc;

use mannerly_logs::Format;

use crate::engine::{Auditor, Identify, Options};
use crate::report::{FileReport, Report};
use crate::{Catalogue, RobotsBook, Wants};

mod batch;

use batch::{ParsedBatch, Reader};

/// Unreadable lines described per file, at most.
const UNPARSED_EXAMPLES: usize = 5;

/// Bytes read per batch.
const BATCH: usize = 1 << 20;

/// Past this many files, they are read one batch at a time in turn
/// rather than each ahead on its own thread (memory stays bounded).
const MAX_AHEAD: usize = 16;

/// One log to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSource {
    /// A path, or `-` for stdin.
    pub path: String,
    /// Its format, when not to be found from its lines.
    pub format: Option<Format>,
    /// A layout the user gives (an nginx `log_format`, an Apache
    /// `LogFormat`, JSON keys), for logs no built-in format reads.
    pub layout: Option<mannerly_logs::Layout>,
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
    /// The layout given cannot be used.
    #[error(transparent)]
    Layout(#[from] mannerly_logs::LayoutError),
}

/// What is known of one file while it is read.
struct File {
    report: FileReport,
    latest: i64,
    done: bool,
}

/// Where a file's next batch comes from.
enum Next {
    /// A thread reading ahead, and the way used batches' text goes back
    /// to it.
    Ahead(
        mpsc::Receiver<Result<ParsedBatch, SourceError>>,
        mpsc::Sender<(Vec<u8>, batch::Spare)>,
    ),
    /// Read when asked.
    Here(Box<Reader>),
}

impl Next {
    fn take(&mut self) -> Result<Option<ParsedBatch>, SourceError> {
        match self {
            Next::Ahead(rx, _) => rx.recv().ok().transpose(),
            Next::Here(r) => r.next(),
        }
    }

    /// Returns a judged batch's memory to its reader (a reader that has
    /// stopped has no use for it).
    fn give_back(&mut self, batch: ParsedBatch) {
        match self {
            Next::Ahead(_, back) => {
                let _ = back.send(batch.into_parts());
            }
            Next::Here(r) => r.give_back(batch.into_parts()),
        }
    }
}

/// Audits the logs: every line read, every request judged.
pub fn audit_logs(
    sources: &[LogSource],
    book: &RobotsBook,
    catalogue: &Catalogue,
    options: Options,
    identify: &mut dyn Identify,
) -> Result<Report, SourceError> {
    let auditor = Auditor::new(book, catalogue, options, sources.len());
    audit_logs_with(sources, auditor, identify)
}

/// [`audit_logs`] with an auditor set up by the caller (with crawlers'
/// evidence, say: [`Auditor::with_evidence`]), made for `sources.len()`
/// files.
pub fn audit_logs_with(
    sources: &[LogSource],
    mut auditor: Auditor<'_>,
    identify: &mut dyn Identify,
) -> Result<Report, SourceError> {
    let mut readers = Vec::new();
    for s in sources {
        readers.push(Reader::open(s, BATCH)?);
    }
    let mut files: Vec<File> = sources
        .iter()
        .map(|s| File {
            report: FileReport {
                path: s.path.clone(),
                format: String::new(),
                lines: 0,
                unparsed: 0,
                unparsed_examples: Vec::new(),
                requests: 0,
            },
            latest: i64::MIN,
            done: false,
        })
        .collect();
    if readers.len() > MAX_AHEAD {
        let mut next: Vec<Next> = readers
            .into_iter()
            .map(|r| Next::Here(Box::new(r)))
            .collect();
        judge_all(&mut files, &mut next, &mut auditor, identify)?;
    } else {
        std::thread::scope(|scope| {
            let mut next: Vec<Next> = readers
                .into_iter()
                .map(|mut r| {
                    let (tx, rx) = mpsc::sync_channel(1);
                    let (back, returned) = mpsc::channel();
                    scope.spawn(move || loop {
                        if let Ok(parts) = returned.try_recv() {
                            r.give_back(parts);
                        }
                        let Some(batch) = r.next().transpose() else {
                            break;
                        };
                        let failed = batch.is_err();
                        if tx.send(batch).is_err() || failed {
                            break;
                        }
                    });
                    Next::Ahead(rx, back)
                })
                .collect();
            // Returning drops the receivers, so readers still ahead stop.
            judge_all(&mut files, &mut next, &mut auditor, identify)
        })?;
    }
    let mut report = auditor.finish();
    report.files = files.into_iter().map(|f| f.report).collect();
    report.lines = report.files.iter().map(|f| f.lines).sum();
    report.unparsed = report.files.iter().map(|f| f.unparsed).sum();
    Ok(report)
}

/// Judges every batch of every file, taking next the file furthest
/// behind in time.
fn judge_all(
    files: &mut [File],
    next: &mut [Next],
    auditor: &mut Auditor<'_>,
    identify: &mut dyn Identify,
) -> Result<(), SourceError> {
    while let Some(i) = (0..files.len())
        .filter(|&i| !files[i].done)
        .min_by_key(|&i| (files[i].latest, i))
    {
        match next[i].take()? {
            Some(batch) => {
                judge_batch(&mut files[i], i, &batch, auditor, identify);
                next[i].give_back(batch);
            }
            None => {
                files[i].done = true;
                auditor.end_file(i);
            }
        }
    }
    Ok(())
}

fn judge_batch(
    f: &mut File,
    index: usize,
    batch: &ParsedBatch,
    auditor: &mut Auditor<'_>,
    identify: &mut dyn Identify,
) {
    let facts = batch.facts();
    f.report.format = facts
        .format
        .map_or("unknown".into(), |p: Format| p.to_string());
    for n in &facts.too_long {
        count_unparsed(
            &mut f.report,
            *n,
            &mannerly_logs::LineError::TooLong.to_string(),
        );
    }
    let entries = batch.lines().filter_map(|(_, r)| match r {
        Ok(Some(e)) => Some(e),
        _ => None,
    });
    let (wants, kinds) = Wants::classified(auditor, entries);
    wants.prepare(identify);
    let mut kinds = kinds.into_iter();
    for (n, r) in batch.lines() {
        f.report.lines = f.report.lines.max(*n);
        match r {
            Ok(Some(e)) => {
                f.report.requests += 1;
                f.latest = f.latest.max(e.stamp.millis);
                match kinds.next() {
                    Some(kind) => auditor.feed_classified(index, e, kind, identify),
                    None => auditor.feed(index, e, identify),
                }
            }
            Ok(None) => {}
            Err(e) => count_unparsed(&mut f.report, *n, &e.to_string()),
        }
    }
}

fn count_unparsed(report: &mut FileReport, line: u64, why: &str) {
    report.unparsed += 1;
    report.lines = report.lines.max(line);
    if report.unparsed_examples.len() < UNPARSED_EXAMPLES {
        report.unparsed_examples.push((line, why.to_owned()));
    }
}
