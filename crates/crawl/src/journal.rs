//! What a crawl records as it goes: `log.jsonl` (one JSON line per URL
//! handled) and `pages.jsonl` through [`Log`], the [`Summary`] counted
//! beside them ([`Journal`]), and what goes into `status.json`
//! ([`Status`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mannerly_polite::frontier::{Frontier, Hold};
use mannerly_time::UnixMillis;

use crate::backend::CrawlFrontier;
use crate::dir::{BusyHost, Status};
use crate::error::CrawlError;
use crate::skip::NotFetched;
use crate::summary::{Progress, Summary};

/// The log and the summary together: every helper that turns a URL away
/// does both.
pub(crate) struct Journal {
    pub(crate) log: Log,
    pub(crate) summary: Summary,
    /// `pages.jsonl`: what a later crawl needs to revisit each page.
    pub(crate) pages: Option<Log>,
    /// The crawl's metrics, which count every URL turned away.
    pub(crate) metrics: Option<std::sync::Arc<crate::metrics::CrawlMetrics>>,
    /// The path prefixes a login stopped.
    pub(crate) walls: crate::login::Walls,
}

impl Journal {
    /// Opens (or appends to) `log.jsonl`, first cutting a line a kill left
    /// half written.
    pub(crate) fn open(path: PathBuf) -> Result<Journal, CrawlError> {
        Ok(Journal {
            log: Log::append(path)?,
            summary: Summary::new(),
            pages: None,
            metrics: None,
            walls: crate::login::Walls::default(),
        })
    }

    /// A login wall at `url`: its path prefix is not crawled further, and
    /// the log says so, for a resumed crawl to know.
    pub(crate) fn login_wall(&mut self, url: &str, why: &str) -> Result<(), CrawlError> {
        let Some(prefix) = self.walls.add(url, why) else {
            return Ok(());
        };
        let found = self.walls.found.get(&prefix).cloned().unwrap_or_default();
        self.summary.login_walls.insert(prefix, found);
        self.log.line(&LogLine {
            time: UnixMillis::now().to_rfc3339_millis(),
            kind: LineKind::LoginWall,
            url,
            reason: Some(why),
            ..LogLine::default()
        })
    }

    /// Writes one line.
    pub(crate) fn line(&mut self, line: &LogLine<'_>) -> Result<(), CrawlError> {
        self.log.line(line)
    }

    /// A URL not fetched: counted under `what` and logged with why.
    pub(crate) fn skip(
        &mut self,
        url: &str,
        what: NotFetched,
        why: &str,
    ) -> Result<(), CrawlError> {
        *self
            .summary
            .skipped
            .entry(what.word().to_owned())
            .or_default() += 1;
        if let Some(m) = &self.metrics {
            m.not_fetched(what);
        }
        self.log.line(&LogLine {
            time: UnixMillis::now().to_rfc3339_millis(),
            kind: LineKind::Skipped,
            url,
            reason: Some(&format!("{what}: {why}")),
            ..LogLine::default()
        })
    }

    /// Logs the URLs the frontier dropped with their host (a Crawl-delay
    /// over the maximum delay) since it was last asked.
    pub(crate) async fn take_skipped<F: CrawlFrontier>(
        &mut self,
        frontier: &mut F,
    ) -> Result<(), CrawlError> {
        for dropped in Frontier::take_skipped(frontier).await? {
            self.skip(&dropped.url, NotFetched::HostSkipped, &dropped.reason)?;
        }
        Ok(())
    }

    /// The progress snapshot of now.
    pub(crate) fn progress(&self, in_flight: usize, queued: u64, seconds: f64) -> Progress {
        let s = &self.summary;
        Progress {
            pages: s.pages_by_status.values().sum(),
            bytes: s.bytes,
            in_flight,
            queued,
            errors: s.page_errors,
            seconds,
            hosts_blocked: s.unavailable.len(),
            first_blocked: (s.unavailable.iter().next()).map(|(o, why)| (o.clone(), why.clone())),
        }
    }

    /// Logs every URL left queued when the crawl gave up on them, with
    /// what holds it back, and counts them by kind of reason.
    pub(crate) fn log_deferred<F: CrawlFrontier>(
        &mut self,
        frontier: &mut F,
        now: UnixMillis,
    ) -> Result<(), CrawlError> {
        let Journal { log, summary, .. } = self;
        let mut failed = None;
        let time = now.to_rfc3339_millis();
        frontier.for_each_deferred(now, &mut |url, hold| {
            *summary
                .deferred_by_reason
                .entry(hold_kind(hold).to_owned())
                .or_default() += 1;
            let why = hold.map_or_else(|| "nothing: it may be fetched now".into(), Hold::to_string);
            if let Err(e) = log.line(&LogLine {
                time: time.clone(),
                kind: LineKind::Deferred,
                url,
                reason: Some(&why),
                ..LogLine::default()
            }) {
                failed = Some(e);
            }
        })?;
        failed.map_or(Ok(()), Err)
    }
}

/// What a line of `log.jsonl` is about.
#[derive(serde::Serialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum LineKind {
    /// A page's request (or its failure).
    #[default]
    Page,
    /// A robots.txt request.
    Robots,
    /// A URL a sitemap listed.
    SitemapEntry,
    /// A URL not fetched (`reason` says why).
    Skipped,
    /// A URL left queued when the crawl gave up.
    Deferred,
    /// A login wall found at `url` (`reason` says why): the path prefix
    /// it stops, for the rest of the crawl, resumes included.
    LoginWall,
}

/// One JSON line of `log.jsonl`.
#[derive(serde::Serialize, Default)]
pub(crate) struct LogLine<'a> {
    pub(crate) time: String,
    pub(crate) kind: LineKind,
    pub(crate) url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) retry: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<&'a str>,
    /// The page's `Content-Usage` header (AIPREF), as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) content_usage: Option<&'a str>,
    /// The robots.txt `Content-Usage` rule that applies to the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) content_usage_rule: Option<&'a str>,
    /// A sitemap entry's `<lastmod>`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) lastmod: Option<&'a str>,
    /// Where a URL was found (the sitemap of a sitemap entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) from: Option<&'a str>,
}

/// `log.jsonl`, buffered.
pub(crate) struct Log {
    pub(crate) out: std::io::BufWriter<std::fs::File>,
    pub(crate) path: PathBuf,
}

impl Log {
    /// A JSON-lines file, appended to (a line a kill left half written is
    /// cut first, so each new line starts on its own).
    pub(crate) fn append(path: PathBuf) -> Result<Log, CrawlError> {
        let io = |source| CrawlError::Io {
            path: path.clone(),
            source,
        };
        cut_partial_line(&path).map_err(io)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        Ok(Log {
            out: std::io::BufWriter::new(file),
            path,
        })
    }

    /// Writes one JSON line.
    pub(crate) fn line(&mut self, line: &impl serde::Serialize) -> Result<(), CrawlError> {
        use std::io::Write;
        let io = |source| CrawlError::Io {
            path: self.path.clone(),
            source,
        };
        serde_json::to_writer(&mut self.out, line).map_err(|e| io(e.into()))?;
        self.out.write_all(b"\n").map_err(io)
    }

    pub(crate) fn flush(&mut self) -> Result<(), CrawlError> {
        use std::io::Write;
        self.out.flush().map_err(|source| CrawlError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// What a resumed crawl takes up from its log: the pages it fetched, in
/// all and per host when `by_host` (only a limit on them needs those),
/// and the login walls it found.
pub(crate) struct Logged {
    pub(crate) pages: u64,
    pub(crate) per_host: HashMap<String, u64>,
    pub(crate) walls: crate::login::Walls,
}

/// Reads a crawl's log (none: a new crawl) for what a resumed crawl goes
/// on from.
pub(crate) fn read_logged(log: &Path, by_host: bool) -> Logged {
    let mut logged = Logged {
        pages: 0,
        per_host: HashMap::new(),
        walls: crate::login::Walls::default(),
    };
    let Ok(text) = std::fs::read_to_string(log) else {
        return logged;
    };
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let (true, Some(url), Some(why)) = (
            v["kind"] == "login-wall",
            v["url"].as_str(),
            v["reason"].as_str(),
        ) {
            logged.walls.add(url, why);
        }
        if v["kind"] != "page" || !v["status"].is_number() {
            continue;
        }
        logged.pages += 1;
        let host = match v["url"].as_str() {
            Some(url) if by_host => crate::normalize::host_of(url),
            _ => continue,
        };
        if !host.is_empty() {
            *logged.per_host.entry(host).or_default() += 1;
        }
    }
    logged
}

/// A kill can leave the log's last line half written: cut it, so every
/// line stays one JSON document.
fn cut_partial_line(path: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            let keep = start + i as u64 + 1;
            if keep < len {
                f.set_len(keep)?;
            }
            return Ok(());
        }
        end = start;
    }
    f.set_len(0)
}

/// The kind of hold, for the summary's counts (the log keeps the text).
fn hold_kind(hold: Option<&Hold>) -> &'static str {
    match hold {
        None => "nothing (may be fetched now)",
        Some(Hold::RobotsFetching { .. } | Hold::RobotsUnavailable { .. }) => {
            "robots.txt unavailable"
        }
        Some(Hold::RetryAfter { .. }) => "Retry-After",
        Some(Hold::InFlight { .. }) => "requests in flight",
        Some(Hold::Delay { .. }) => "host delay (Crawl-delay or backoff)",
        Some(Hold::Paused { .. }) => "paused after failures",
        Some(Hold::Skipped { .. }) => "host skipped",
        Some(Hold::Parked { .. }) => "waiting for a host slot",
        Some(Hold::BadUrl(_)) => "unusable URL",
        Some(_) => "other",
    }
}

/// The [`Status`] of now, for `status.json`.
pub(crate) fn status_of(
    p: &Progress,
    summary: &Summary,
    busiest: Vec<BusyHost>,
    ended: bool,
) -> Status {
    Status {
        pid: std::process::id(),
        updated: UnixMillis::now().to_rfc3339_millis(),
        running: !ended,
        ending: ended.then_some(summary.ending),
        pages: p.pages,
        pages_this_run: p.pages,
        bytes: p.bytes,
        in_flight: p.in_flight,
        queued: p.queued,
        errors: p.errors,
        retries: summary.retries,
        seconds: p.seconds,
        pages_by_status: summary.pages_by_status.clone(),
        skipped: summary.skipped.clone(),
        robots_unavailable: summary.unavailable.clone(),
        deferred_by_reason: summary.deferred_by_reason.clone(),
        busiest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mannerly_polite::controller::{Config as PoliteConfig, Outcome, Politeness, RobotsPacing};
    use mannerly_polite::frontier::{block_on, Frontier, FrontierConfig, LocalFrontier, Next};

    #[test]
    fn holds_are_counted_by_kind() {
        let mut f = LocalFrontier::in_memory(
            Politeness::new(PoliteConfig {
                min_delay: 5_000,
                ..PoliteConfig::default()
            }),
            FrontierConfig::default(),
        );
        let t = UnixMillis::from_secs(1_000);
        block_on(f.enqueue("https://a.test/1", 1, t)).expect("enqueue");
        block_on(f.enqueue("https://b.test/1", 1, t)).expect("enqueue");
        block_on(f.robots_unavailable("https://b.test", t.add_millis(60_000), "503", t))
            .expect("unavailable");
        let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
            panic!("a.test's robots.txt first")
        };
        block_on(f.robots_known(
            "https://a.test",
            RobotsPacing::default(),
            t.add_millis(1 << 30),
            t,
        ))
        .expect("known");
        let ok = Outcome::Status {
            status: 200,
            latency: 0,
            retry_after: None,
        };
        block_on(f.complete(&r, &ok, t)).expect("complete");
        let a = f.why_not_now("https://a.test/1", t).expect("a.test waits");
        let b = f.why_not_now("https://b.test/1", t).expect("b.test waits");
        assert_eq!(
            hold_kind(Some(&a)),
            "host delay (Crawl-delay or backoff)",
            "{a}"
        );
        assert_eq!(hold_kind(Some(&b)), "robots.txt unavailable", "{b}");
    }
}
