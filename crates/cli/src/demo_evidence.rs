//! The demo's evidence check: the crawl's evidence exported, one bundle
//! per host (into `out/bundles/`), and checked against the simulated
//! web's access log with the code of `mannerly audit --evidence`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use mannerly_audit::{
    audit_logs_with, group_bundles, Auditor, Catalogue, EvidenceReport, LogSource, Options,
    RobotsBook, Unchecked,
};
use mannerly_crawl::CrawlDir;
use mannerly_evidence::{export_hosts, Window};
use mannerly_testweb::ACCESS_LOG_FORMAT;

/// What the demo's evidence showed.
pub struct DemoEvidence {
    /// Bundles exported (one per host).
    pub bundles: usize,
    /// Where they are.
    pub dir: std::path::PathBuf,
    /// Checked against the log.
    pub report: EvidenceReport,
}

impl DemoEvidence {
    /// Findings that should not be there.
    pub fn problems(&self) -> u64 {
        let r = &self.report;
        r.logged_not_in_evidence
            + r.evidence_not_in_log
            + r.robots_mismatch
            + r.gap_mismatch
            + u64::from(r.bundle == mannerly_audit::BundleState::Invalid)
    }
}

/// Exports every host's bundle from the crawl in `out` and checks them
/// against `out/access.log` (written by the demo's audit).
pub fn check(out: &Path, book: &RobotsBook) -> Result<Option<DemoEvidence>> {
    let evidence = CrawlDir::new(out).evidence();
    if !evidence.exists() {
        return Ok(None);
    }
    let bundles = export_hosts(&[evidence], None, Window::default())?;
    let dir = out.join("bundles");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for b in &bundles {
        let path = dir.join(format!("{}.json", b.host));
        let body = serde_json::to_vec(b)?;
        std::fs::write(&path, body).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let count = bundles.len();
    let options = Options {
        retry_after: Duration::ZERO,
        from_start: true,
        ..Options::default()
    };
    let source = LogSource {
        path: out.join("access.log").display().to_string(),
        format: None,
        layout: Some(mannerly_logs::Layout::Nginx(ACCESS_LOG_FORMAT.into())),
    };
    let auditor = Auditor::new(book, Catalogue::builtin(), options, 1)
        .with_evidence(group_bundles(bundles), Duration::from_secs(2));
    let report = audit_logs_with(&[source], auditor, &mut Unchecked)?;
    let found = report.bots.into_iter().find_map(|b| b.evidence);
    Ok(found.map(|report| DemoEvidence {
        bundles: count,
        dir,
        report,
    }))
}

/// The evidence's lines of the demo's report.
pub fn print(e: Option<&DemoEvidence>) {
    let Some(e) = e else {
        println!("evidence: the crawler gave none (only mannerly's own crawl writes it here)");
        return;
    };
    let r = &e.report;
    println!(
        "evidence (the crawl's own records, {} bundles in {}, checked against the server's log):",
        e.bundles,
        e.dir.display()
    );
    let lines = [
        ("records", r.records),
        ("logged requests matched to a record", r.matched),
        ("logged requests with no record", r.logged_not_in_evidence),
        (
            "records of requests the log does not show",
            r.evidence_not_in_log,
        ),
        (
            "records judged by a robots.txt the site did not serve",
            r.robots_mismatch,
        ),
        ("claimed gaps the log contradicts", r.gap_mismatch),
    ];
    for (what, n) in lines {
        println!("  {what}: {n}");
    }
    let how = match r.bundle {
        mannerly_audit::BundleState::Signed => "signed",
        mannerly_audit::BundleState::Unsigned => "unsigned (the demo crawls without --sign-key)",
        mannerly_audit::BundleState::Invalid => "REFUSED",
    };
    println!(
        "  bundles: {how}{}",
        if e.problems() == 0 {
            "; every request matched both ways"
        } else {
            ""
        }
    );
}

/// The evidence's part of the demo's JSON report.
pub fn json(e: Option<&DemoEvidence>) -> serde_json::Value {
    match e {
        Some(e) => serde_json::json!({
            "bundles": e.bundles,
            "dir": e.dir.display().to_string(),
            "report": e.report,
        }),
        None => serde_json::Value::Null,
    }
}
