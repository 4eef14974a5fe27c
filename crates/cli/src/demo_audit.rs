//! The demo's politeness audit. The rules every crawler is held to (paths
//! disallowed, gaps against the delay, Retry-After windows, robots.txt
//! read first and available) are judged by `mannerly audit`'s own code
//! from the access log testweb writes, so the demo and the audit of a
//! site's logs cannot disagree. What only the server knows and no log
//! records (requests in flight at once, nofollow links followed, pages
//! asked twice) comes from its records.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use mannerly_audit::{
    audit_logs, judge, Catalogue, Counts, Expect, LogSource, Options, Report, RobotsBook, Seen,
    ServerReport, Unchecked, MAX_SERVER_EXAMPLES,
};
use mannerly_testweb::{HostSpec, TestWeb, ACCESS_LOG_FORMAT};

/// Server-side jitter allowed on a gap (the request's trip, scheduling).
const JITTER: Duration = Duration::from_millis(15);

/// The robots.txt every host of the demo's web serves: the generated
/// hosts' file for all (for each of `names` when it names its host with
/// `{host}`), and each scripted host's own; each is also written to
/// `out/audit-robots/` (`all-hosts.txt`, `HOST.txt`), so `mannerly audit`
/// can be run on the demo's log by hand.
pub fn robots_book(
    generated: &str,
    names: &[String],
    scripted: &[(&str, HostSpec)],
    out: &Path,
) -> Result<RobotsBook> {
    let dir = out.join("audit-robots");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut book = RobotsBook::new();
    let mut add = |host: Option<&str>, body: &str| -> Result<()> {
        let file = dir.join(format!("{}.txt", host.unwrap_or("all-hosts")));
        std::fs::write(&file, body).with_context(|| format!("cannot write {}", file.display()))?;
        book.add(host, None, file.display().to_string(), body.as_bytes());
        Ok(())
    };
    if generated.contains("{host}") {
        for name in names {
            add(Some(name), &generated.replace("{host}", name))?;
        }
    } else {
        add(None, generated)?;
    }
    for (host, spec) in scripted {
        // A host that answers no file allows everything (4xx) or holds
        // its pages (5xx): the log shows which, and the audit judges it.
        add(Some(host), &spec.served_robots().unwrap_or_default())?;
    }
    Ok(book)
}

/// The demo's audit: the log's counts and the server's.
pub struct DemoAudit {
    /// What only the server knows.
    pub server: ServerReport,
    /// Requests sooner than the delay after the previous one.
    pub too_soon: u64,
    /// Of those, the ones more than 100 ms short.
    pub too_soon_far: u64,
    /// Requests inside a Retry-After window.
    pub retry_after: u64,
    /// Requests to disallowed paths.
    pub disallowed: u64,
    /// Hosts with a page before robots.txt was read.
    pub robots_not_first: u64,
    /// Pages while robots.txt answered 5xx or 429.
    pub unavailable_pages: u64,
    /// Some violations, described.
    pub examples: Vec<String>,
}

impl DemoAudit {
    /// Every violation counted.
    pub fn violations(&self) -> u64 {
        self.server.violations() as u64
            + self.too_soon
            + self.retry_after
            + self.disallowed
            + self.robots_not_first
            + self.unavailable_pages
    }
}

/// Audits the crawl: writes testweb's access log to `out/access.log`,
/// judges it, and adds what the server knows.
pub fn audit(web: &TestWeb, book: &RobotsBook, min_delay: f64, out: &Path) -> Result<DemoAudit> {
    let log = out.join("access.log");
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    std::fs::write(&log, web.access_log())
        .with_context(|| format!("cannot write {}", log.display()))?;
    let judged = |slack: Duration| -> Result<Report> {
        let options = Options {
            // testweb logs every Retry-After it sends; nothing else asks
            // for a wait.
            retry_after: Duration::ZERO,
            min_gap: Some(Duration::from_secs_f64(min_delay)),
            slack,
            from_start: true,
            // The client under test is judged as a crawler whatever its
            // User-Agent says (an HTTP library's, a feed reader's).
            strict: true,
            ..Options::default()
        };
        let source = LogSource {
            path: log.display().to_string(),
            format: None,
            layout: Some(mannerly_logs::Layout::Nginx(ACCESS_LOG_FORMAT.into())),
        };
        Ok(audit_logs(
            &[source],
            book,
            Catalogue::builtin(),
            options,
            &mut Unchecked,
        )?)
    };
    let near = judged(JITTER)?;
    let far = judged(Duration::from_millis(100))?;
    let total =
        |r: &Report, f: fn(&Counts) -> u64| -> u64 { r.bots.iter().map(|b| f(&b.counts)).sum() };
    let server = server_facts(web);
    let mut examples: Vec<String> = near
        .bots
        .iter()
        .flat_map(|b| &b.examples)
        .map(|e| {
            let status = e.status.map(|s| format!(" {s}")).unwrap_or_default();
            format!(
                "{} {}{status} [{}]: {}",
                e.host,
                e.path,
                e.rule.as_str(),
                e.detail
            )
        })
        .collect();
    examples.extend(server.examples.iter().cloned());
    examples.truncate(MAX_SERVER_EXAMPLES);
    Ok(DemoAudit {
        too_soon: total(&near, |c| c.too_soon),
        too_soon_far: total(&far, |c| c.too_soon),
        retry_after: total(&near, |c| c.ignored_retry_after),
        disallowed: total(&near, |c| c.disallowed),
        unavailable_pages: total(&near, |c| c.while_robots_unavailable),
        robots_not_first: near
            .bots
            .iter()
            .flat_map(|b| &b.hosts)
            .filter(|h| h.counts.before_robots > 0)
            .count() as u64,
        examples,
        server,
    })
}

/// What only the server's records tell: requests in flight at once,
/// nofollow links followed, pages asked more than once.
fn server_facts(web: &TestWeb) -> ServerReport {
    let seen: Vec<Seen> = web
        .requests()
        .into_iter()
        .map(|r| Seen {
            host: r.host,
            path: r.path,
            started: r.started,
        })
        .collect();
    let nofollow = |host: &str| Expect {
        nofollow: match host {
            "nofollow.test" => vec!["/never.html".into(), "/sponsored.html".into()],
            _ => Vec::new(),
        },
        // hop.test's robots.txt redirects there: not a page.
        robots_hops: match host {
            "hop.test" => vec!["/real-robots.txt".into()],
            _ => Vec::new(),
        },
    };
    judge(&seen, nofollow, |h| web.max_in_flight(h))
}
