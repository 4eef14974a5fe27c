//! `mannerly audit --follow`: the logs read to their end, then read as
//! lines are appended, across rotation ([`Tail`]); each finding printed as
//! it is judged,
//! within a poll and the reordering window of its line; Ctrl-C prints the
//! report so far. Memory stays that of the audit's bounded state: lines
//! are read in place, judged and dropped.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use mannerly_audit::metrics::FollowMetrics;
use mannerly_audit::{Auditor, Finding, Identify, Layout};
use mannerly_logs::tail::{Tail, CHUNK};
use mannerly_logs::{Format, Parser};
use mannerly_metrics::Registry;

/// How often the files are looked at.
const POLL: Duration = Duration::from_millis(250);

/// One followed file, with what was read of it.
struct Followed {
    tail: Tail,
    /// Lines read, those no request could be read from, and requests.
    lines: u64,
    unread: u64,
    requests: u64,
    parser: Option<Parser>,
}

impl Followed {
    fn open(path: &str) -> Result<Followed> {
        let tail = Tail::open(Path::new(path)).with_context(|| format!("cannot open '{path}'"))?;
        Ok(Followed {
            tail,
            lines: 0,
            unread: 0,
            requests: 0,
            parser: None,
        })
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
            if rt.block_on(crate::signals::stop_signal()).is_ok() {
                flag.store(true, Ordering::SeqCst);
            }
        }
    });
    let mut files: Vec<Followed> = how
        .paths
        .iter()
        .map(|p| Followed::open(p))
        .collect::<Result<_>>()?;
    let metrics = how.metrics.map(serve_metrics).transpose()?;
    let mut out = std::io::stdout().lock();
    while !stop.load(Ordering::SeqCst) {
        let mut busy = false;
        for (i, f) in files.iter_mut().enumerate() {
            let before = f.tail.pos();
            let lines = f.tail.new_lines();
            busy |= f.tail.pos().saturating_sub(before) >= CHUNK;
            if f.parser.is_none() && !lines.is_empty() {
                f.parser = parser_for(how.format, how.layout, &lines);
            }
            f.lines += lines.len() as u64;
            let (unread, requests) = match &mut f.parser {
                Some(parser) => feed(&mut auditor, identify, parser, i, &lines),
                None => (lines.len() as u64, 0),
            };
            f.unread += unread;
            f.requests += requests;
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
            path: f.tail.path().display().to_string(),
            format: f
                .parser
                .as_ref()
                .map_or_else(|| "none found".into(), |p| p.format().to_string()),
            lines: f.lines,
            unparsed: f.unread,
            unparsed_examples: Vec::new(),
            requests: f.requests,
        })
        .collect();
    Ok(report)
}

/// Feeds a poll's lines, identity checks prepared together; returns how
/// many could not be read, and how many requests were.
fn feed(
    auditor: &mut Auditor<'_>,
    identify: &mut dyn Identify,
    parser: &mut Parser,
    file: usize,
    lines: &[String],
) -> (u64, u64) {
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
    // The key directories signed requests name are gathered too.
    mannerly_audit::Wants::of(auditor, &entries).prepare(identify);
    for e in &entries {
        auditor.feed(file, e, identify);
    }
    (unread, entries.len() as u64)
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
        let host = if e.host == "-" {
            String::new()
        } else {
            format!("{} ", e.host)
        };
        writeln!(
            out,
            "{} {}{from} ({}) {host}{}: {}; {}",
            e.time,
            f.token,
            f.identity.as_str(),
            e.path,
            e.rule.words(),
            e.detail
        )?;
    }
    Ok(())
}
