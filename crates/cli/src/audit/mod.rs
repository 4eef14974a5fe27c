//! `mannerly audit`: from a site's access logs, which bots broke its
//! robots.txt, how hard they hit, and whether they were who they claimed.

use mannerly_identity::Checks;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use mannerly_audit::{
    audit_logs_with, group_bundles, Auditor, Catalogue, LogSource, Options, RobotsBook,
};
use mannerly_logs::Layout;

mod follow;

#[derive(clap::Args)]
pub struct Args {
    /// Access logs (`-` for stdin); gzip and zstd are read as they are.
    #[arg(required = true, value_name = "LOG")]
    logs: Vec<String>,
    /// robots.txt to judge against: FILE for every host, or HOST=FILE for
    /// one virtual host (repeat for several).
    #[arg(long, value_name = "FILE|HOST=FILE")]
    robots: Vec<String>,
    /// A directory of robots.txt versions, each named by the instant it
    /// came into force (`2026-03-01T01:00:00Z.txt`), for every host, or in
    /// a subdirectory named after one host.
    #[arg(long, value_name = "DIR")]
    robots_history: Option<String>,
    /// A proposed robots.txt (FILE for every host, or HOST=FILE): the same
    /// requests are judged against it too, and the report says which bots'
    /// requests it would newly disallow or allow.
    #[arg(long, value_name = "FILE|HOST=FILE")]
    robots_proposed: Vec<String>,
    /// robots.txt versions from a git repository: every commit that
    /// changed the file is a version, in force from the commit's time
    /// (REPO, or REPO:PATH for a file other than robots.txt at its root).
    #[arg(long, value_name = "REPO[:PATH]")]
    robots_git: Option<String>,
    /// The logs' format, instead of finding it from their lines.
    #[arg(long, value_name = "NAME")]
    format: Option<String>,
    /// An nginx `log_format` string, for a custom layout.
    #[arg(long, value_name = "FORMAT")]
    log_format: Option<String>,
    /// An Apache `LogFormat` string, for a custom layout (as in
    /// httpd.conf: `%h %l %u %t \"%r\" %>s %b ...`).
    #[arg(long, value_name = "FORMAT", conflicts_with = "log_format")]
    apache_format: Option<String>,
    /// JSON lines whose keys are not a known server's: the key (or
    /// `/json/pointer`) of each fact, `ip=client,time=ts,uri=req.path,...`
    /// (facts: ip, time, host, method, uri, query, request, status, bytes,
    /// user_agent, user, retry_after, signature, signature_input).
    #[arg(long, value_name = "FACT=KEY,...", conflicts_with_all = ["log_format", "apache_format"])]
    json_fields: Option<String>,
    /// Seconds a 429 or 503 asked bots to wait when the log's layout
    /// cannot show its Retry-After header (one that logs it and shows
    /// none sent opens no wait).
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = crate::crawl::delay_seconds, allow_hyphen_values = true)]
    retry_after: f64,
    /// A gap, in seconds, every bot must keep even where robots.txt sets
    /// no Crawl-delay.
    #[arg(long, value_name = "SECS", value_parser = crate::crawl::delay_seconds, allow_hyphen_values = true)]
    min_gap: Option<f64>,
    /// Allowance on gaps and windows beyond the log's own precision, in
    /// seconds.
    #[arg(long, value_name = "SECS", default_value_t = 0.0, value_parser = crate::crawl::delay_seconds, allow_hyphen_values = true)]
    slack: f64,
    /// How far out of time order a log may be, in seconds (300; 1 with
    /// --follow, so findings come as their lines do).
    #[arg(long, value_name = "SECS", value_parser = crate::crawl::delay_seconds, allow_hyphen_values = true)]
    window: Option<f64>,
    /// Keep reading the logs as lines are appended (across rotation:
    /// renamed and made anew, or copied and truncated), printing each
    /// finding as it is judged; Ctrl-C (or SIGTERM) prints the report so
    /// far.
    #[arg(long)]
    follow: bool,
    /// With --follow: serve Prometheus metrics (lines read and unread,
    /// findings by rule and bot kind, the process) at http://ADDR/metrics.
    #[arg(long, value_name = "ADDR:PORT", requires = "follow")]
    metrics: Option<String>,
    /// With --follow: each finding as one JSON object a line.
    #[arg(long, requires = "follow")]
    json_lines: bool,
    /// The logs begin when the site began serving: a page before any
    /// robots.txt read is blamed even in the logs' first 24 hours.
    #[arg(long)]
    from_start: bool,
    /// Judge every client as a crawler, by every directive as written:
    /// feed readers, link previews, monitors, HTTP tools, clients
    /// without a User-Agent and the site's own signed-in users too, and a
    /// Crawl-delay a crawler's operator documents it ignores (Google's).
    /// By default only crawlers are judged, by what they are known to
    /// read, and never a request with credentials the server accepted.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    identity: crate::identity_args::IdentityArgs,
    /// A crawler's evidence bundle (`mannerly evidence export`, or any
    /// crawler's to the same format), checked against the logs: each
    /// logged request of the bot it names matched to a record; repeat for
    /// several crawlers or hosts.
    #[arg(long, value_name = "FILE")]
    evidence: Vec<std::path::PathBuf>,
    /// Seconds a record and its logged request may be apart, beyond the
    /// log's precision (clock skew and the time a request takes).
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = crate::crawl::delay_seconds, allow_hyphen_values = true)]
    evidence_skew: f64,
    /// Write deny rules for this server from what the audit proved:
    /// spoofers refused outside their operator's ranges, crawlers that
    /// broke robots.txt refused by token; never /robots.txt (nginx,
    /// apache, caddy, haproxy, cloudflare).
    #[arg(long, value_name = "SERVER", requires = "rules_out")]
    rules: Option<mannerly_audit::rules::Server>,
    /// Where to write the rules.
    #[arg(long, value_name = "FILE", requires = "rules")]
    rules_out: Option<std::path::PathBuf>,
    /// Rules also for these, judged as crawlers (comma-separated):
    /// anonymous (anonymous clients and HTTP tools, refused by address),
    /// user-triggered, feed-reader, link-preview, monitor (by token),
    /// ignored (a crawler charged only under a directive its operator
    /// documents it does not read).
    #[arg(long, value_name = "WHAT", value_delimiter = ',', requires = "rules")]
    rules_include: Vec<mannerly_audit::rules::Include>,
    /// One JSON document instead of the report.
    #[arg(long)]
    json: bool,
    /// Also write a self-contained HTML report with charts.
    #[arg(long, value_name = "FILE")]
    html: Option<String>,
}

fn seconds(what: &str, s: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("--{what} {s}: not a number of seconds"))
}

/// Exit status: 0 when no bot broke a rule, 1 when one did, 2 on errors.
pub fn run(args: Args) -> Result<u8> {
    let book = robots_book(&args)?;
    let format = match &args.format {
        Some(f) => Some(f.parse().map_err(|e| anyhow::anyhow!("--format: {e}"))?),
        None => None,
    };
    let layout = match (&args.log_format, &args.apache_format, &args.json_fields) {
        (Some(f), _, _) => Some(Layout::Nginx(f.clone())),
        (_, Some(f), _) => Some(Layout::Apache(f.clone())),
        (_, _, Some(f)) => Some(Layout::JsonFields(f.clone())),
        _ => None,
    };
    let sources: Vec<LogSource> = args
        .logs
        .iter()
        .map(|path| LogSource {
            path: path.clone(),
            format,
            layout: layout.clone(),
        })
        .collect();
    let options = Options {
        retry_after: seconds("retry-after", args.retry_after)?,
        min_gap: args.min_gap.map(|s| seconds("min-gap", s)).transpose()?,
        slack: seconds("slack", args.slack)?,
        window: seconds(
            "window",
            args.window.unwrap_or(if args.follow { 1.0 } else { 300.0 }),
        )?,
        from_start: args.from_start,
        strict: args.strict,
        judge_also: args
            .rules_include
            .iter()
            .flat_map(|i| i.kinds().iter().copied())
            .collect(),
    };
    let catalogue = Catalogue::builtin();
    let mut checks = Checks::new(args.identity.config()?, catalogue)?;
    let bundles = args
        .evidence
        .iter()
        .map(|p| crate::evidence::read_bundle(p))
        .collect::<Result<Vec<_>>>()?;
    let skew = seconds("evidence-skew", args.evidence_skew)?;
    let proposed = files_book("--robots-proposed", &args.robots_proposed)?;
    let mut auditor = Auditor::new(&book, catalogue, options, sources.len())
        .with_evidence(group_bundles(bundles), skew);
    if !args.robots_proposed.is_empty() {
        auditor = auditor.with_proposed(&proposed);
    }
    let mut report = if args.follow {
        let how = follow::Follow {
            paths: &args.logs,
            format,
            layout: layout.as_ref(),
            json_lines: args.json_lines,
            metrics: args.metrics.as_deref(),
        };
        follow::follow(&how, auditor.stream_findings(), &mut checks)?
    } else {
        audit_logs_with(&sources, auditor, &mut checks)?
    };
    mannerly_audit::practices::check_pages(&mut report, &mut checks);
    report.identity_notes = checks.notes();
    report.identity_online = !args.identity.offline;
    report.rules = write_rules(&args, &report, &checks)?;
    if let Some(path) = &args.html {
        std::fs::write(path, mannerly_audit::render::html(&report))
            .with_context(|| format!("cannot write '{path}'"))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", mannerly_audit::render::text(&report));
    }
    // A file none of whose lines could be read judged no one in it: "no
    // bot broke a rule" would be said without reading.
    let unread: Vec<&str> = report
        .files
        .iter()
        .filter(|f| f.unparsed > 0 && f.requests == 0)
        .map(|f| f.path.as_str())
        .collect();
    if !unread.is_empty() {
        eprintln!(
            "mannerly audit: no line of {} could be read as an access log, so no one in it was judged: give its layout (--log-format, --apache-format or --json-fields)",
            unread.join(", ")
        );
        return Ok(2);
    }
    Ok(u8::from(report.violations() > 0))
}

/// `--rules`: the server rules the report calls for.
/// Also returned, for the HTML report: the server and the file's text.
fn write_rules(
    args: &Args,
    report: &mannerly_audit::Report,
    checks: &Checks,
) -> Result<Option<(String, String)>> {
    let (Some(server), Some(path)) = (args.rules, &args.rules_out) else {
        return Ok(None);
    };
    let options = mannerly_audit::rules::RuleOptions {
        include: args.rules_include.clone(),
        strict: args.strict,
    };
    let rules = mannerly_audit::rules::rules_of(report, &|t| checks.ranges_of(t), &options);
    let text = mannerly_audit::rules::render(&rules, server);
    std::fs::write(path, &text).with_context(|| format!("cannot write '{}'", path.display()))?;
    let name = server.as_str().to_owned();
    eprint!("{}", rules_summary(&rules, &name, path));
    Ok(Some((name, text)))
}

/// What `--rules` wrote: the rules by sort, what was passed over and
/// why, and a warning for every rule the guard kept out.
fn rules_summary(
    rules: &mannerly_audit::rules::Rules,
    server: &str,
    path: &std::path::Path,
) -> String {
    let sorts: Vec<String> = rules
        .counts()
        .iter()
        .map(|(sort, n)| format!("{n} by {sort}"))
        .collect();
    let mut out = format!(
        "{} rule(s) for {server} written to {} ({})\n",
        rules.rules.len(),
        path.display(),
        sorts.join(", ")
    );
    for (reason, who) in mannerly_audit::rules::passed_over_by_reason(&rules.passed_over) {
        out.push_str(&format!(
            "  not refused: {} client(s): {reason}\n",
            who.len()
        ));
    }
    for w in &rules.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// A book of files given as FILE (every host) or HOST=FILE.
fn files_book(flag: &str, specs: &[String]) -> Result<RobotsBook> {
    let mut book = RobotsBook::new();
    for r in specs {
        let (host, file) = match r.split_once('=') {
            Some((h, f)) if !h.contains('/') && !h.is_empty() => (Some(h), f),
            _ => (None, r.as_str()),
        };
        let body = std::fs::read(file).with_context(|| {
            // `https://example.com=FILE`: a URL where a host name goes.
            let named = r.split_once('=').and_then(|(h, _)| url::Url::parse(h).ok());
            let hint = named
                .and_then(|u| {
                    u.host_str()
                        .map(|h| format!(" (for one host, give its name alone: {h}=FILE)"))
                })
                .unwrap_or_default();
            format!("{flag}: cannot read '{file}'{hint}")
        })?;
        book.add(host, None, file.to_owned(), &body);
    }
    Ok(book)
}

fn robots_book(args: &Args) -> Result<RobotsBook> {
    let mut book = files_book("--robots", &args.robots)?;
    if let Some(spec) = &args.robots_git {
        git_history(&mut book, spec)?;
    }
    if let Some(dir) = &args.robots_history {
        let skipped = book
            .add_history_dir(Path::new(dir))
            .with_context(|| format!("--robots-history {dir}"))?;
        for path in skipped {
            eprintln!(
                "mannerly audit: skipped {}: its name is not an instant (2026-03-01T01:00:00Z.txt)",
                path.display()
            );
        }
        if book.is_empty() {
            bail!("--robots-history {dir}: no file named by an instant (such as 2026-03-01T01:00:00Z.txt)");
        }
    }
    Ok(book)
}

/// Adds the versions of a file kept in git: one per commit that changed
/// it, in force from the commit's time (a deleting commit is skipped).
fn git_history(book: &mut RobotsBook, spec: &str) -> Result<()> {
    let (repo, path) = match spec.rsplit_once(':') {
        Some((r, p)) if !p.is_empty() && !r.is_empty() => (r, p),
        _ => (spec, "robots.txt"),
    };
    let git = |args: &[&str]| -> Result<Vec<u8>> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(args)
            .output()
            .with_context(|| format!("--robots-git {spec}: cannot run git"))?;
        if !out.status.success() {
            bail!(
                "--robots-git {spec}: git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(out.stdout)
    };
    let log = git(&["log", "--format=%H %cI", "--", path])?;
    let mut added = 0;
    for line in String::from_utf8_lossy(&log).lines() {
        let Some((commit, when)) = line.split_once(' ') else {
            continue;
        };
        let Some(since) = mannerly_logs::parse_rfc3339(when) else {
            continue;
        };
        let Ok(body) = git(&["show", &format!("{commit}:{path}")]) else {
            continue;
        };
        book.add(
            None,
            Some(since.millis),
            format!("{path} at {}", &commit[..12.min(commit.len())]),
            &body,
        );
        added += 1;
    }
    if added == 0 {
        bail!("--robots-git {spec}: no commit of {repo} holds {path}");
    }
    Ok(())
}
