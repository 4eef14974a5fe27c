//! What `mannerly crawl` prints when a crawl ends: its [`Summary`] as
//! text, or as one JSON line.

use std::io::Write;

use anyhow::Result;
use mannerly_crawl::recrawl::earlier_bytes;
use mannerly_crawl::{CrawlDir, Ending, Summary};

/// Prints the summary of the crawl in `dir`.
pub(crate) fn report(
    summary: &Summary,
    dir: &CrawlDir,
    json: bool,
    rejected: &[super::settings::RejectedSeed],
) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    if json {
        let mut v = serde_json::to_value(summary)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("rejected_seeds".into(), serde_json::to_value(rejected)?);
        }
        // A recrawl: the bytes the earlier crawl downloaded, to set its own
        // against.
        if let (Some(before), Some(o)) = (earlier_bytes(dir), v.as_object_mut()) {
            o.insert("earlier_bytes".into(), before.into());
        }
        serde_json::to_writer(&mut stdout, &v)?;
        writeln!(stdout)?;
        return Ok(());
    }
    recrawl_lines(&mut stdout, summary, dir)?;
    summary_lines(&mut stdout, summary, dir)?;
    if !rejected.is_empty() {
        writeln!(
            stdout,
            "  {} seed(s) rejected (named above): {}",
            rejected.len(),
            rejected
                .iter()
                .map(|r| r.at.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    Ok(())
}

/// A recrawl's counts against the earlier crawl, when it revisited any.
fn recrawl_lines(out: &mut impl Write, summary: &Summary, dir: &CrawlDir) -> Result<()> {
    let r = &summary.revisits;
    if r.not_modified + r.unchanged + r.changed + r.skipped_by_lastmod + r.fresh_in_cache == 0 {
        return Ok(());
    }
    writeln!(
        out,
        "recrawl: {} not requested (still fresh by Cache-Control or Expires), {} not requested (sitemap lastmod unchanged), {} not modified (304), {} unchanged (same payload), {} changed, {} new",
        r.fresh_in_cache, r.skipped_by_lastmod, r.not_modified, r.unchanged, r.changed, r.new
    )?;
    if let Some(before) = earlier_bytes(dir) {
        writeln!(
            out,
            "  {} KiB downloaded, against {} KiB by the earlier crawl ({:.1} %)",
            summary.bytes / 1024,
            before / 1024,
            100.0 * summary.bytes as f64 / before.max(1) as f64
        )?;
    }
    if !r.lastmod_untrusted_hosts.is_empty() {
        writeln!(
            out,
            "  sitemap lastmod ignored (caught lying): {}",
            r.lastmod_untrusted_hosts.join(", ")
        )?;
    }
    Ok(())
}

/// The crawl's counts, what it left, and where its records are.
fn summary_lines(out: &mut impl Write, summary: &Summary, dir: &CrawlDir) -> Result<()> {
    let pages: u64 = summary.pages_by_status.values().sum();
    writeln!(
        out,
        "crawl {}: {pages} pages in {:.1} s, {} hosts, {} robots.txt requests, {} KiB",
        match summary.ending {
            Ending::Done => "done",
            Ending::GaveUp => "ended (what is left waits too long)",
            Ending::MaxPages => "ended at --max-pages",
            Ending::Stopped => "stopped",
        },
        summary.seconds,
        summary.hosts,
        summary.robots_requests,
        summary.bytes / 1024
    )?;
    if pages > 0 {
        writeln!(
            out,
            "  pages by status: {}",
            counts(&summary.pages_by_status)
        )?;
    }
    if summary.page_errors > 0 || summary.retries > 0 {
        writeln!(
            out,
            "  fetch errors: {}, retries: {}",
            summary.page_errors, summary.retries
        )?;
    }
    if !summary.skipped.is_empty() {
        writeln!(out, "  not fetched: {}", counts(&summary.skipped))?;
    }
    if matches!(summary.ending, Ending::Stopped) || summary.deferred > 0 {
        writeln!(
            out,
            "  to go on: mannerly crawl --resume {}",
            shell_word(&dir.root().display().to_string())
        )?;
    }
    if summary.deferred > 0 {
        writeln!(
            out,
            "  deferred (still queued, resume later): {}",
            summary.deferred
        )?;
        for (why, n) in &summary.deferred_by_reason {
            writeln!(out, "    {n} waiting on {why} (each in the log)")?;
        }
    }
    for (prefix, why) in &summary.login_walls {
        writeln!(out, "  not crawled past a login: {prefix}* ({why})")?;
    }
    for (origin, why) in &summary.unavailable {
        writeln!(out, "  {origin}/robots.txt unavailable: {why}")?;
    }
    writeln!(
        out,
        "  WARC: {} records in {}; log: {}",
        summary.warc_records,
        dir.warc().display(),
        dir.log().display()
    )?;
    if let Some(e) = &summary.evidence {
        let how = match &e.keyid {
            Some(k) => format!("checkpoints signed with key {k}"),
            None => "checkpoints UNSIGNED (give --sign-key to sign them)".into(),
        };
        writeln!(
            out,
            "  evidence: {} request records in {}, {how}; `mannerly evidence export` gives a host its bundle",
            e.records,
            dir.evidence().display()
        )?;
    }
    Ok(())
}

/// Counts by key, as `key: n, key: n` in the map's order.
pub(super) fn counts<K: std::fmt::Display>(map: &std::collections::BTreeMap<K, u64>) -> String {
    let parts: Vec<String> = map.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    parts.join(", ")
}

/// A path as one shell word: as it is when it needs no quoting, else in
/// single quotes.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
