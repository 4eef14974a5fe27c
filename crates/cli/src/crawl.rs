//! `mannerly crawl` and `mannerly demo`: thin over `mannerly-crawl`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use mannerly_crawl::normalize::ScopeMode;
use mannerly_crawl::{crawl_on, Backend, CrawlConfig, Ending, Local, Progress, Summary};
use mannerly_fleet::Fleet;

#[derive(clap::Args)]
pub struct Args {
    /// Seed URLs.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
    /// Read seed URLs from a file, one per line (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    seeds: Option<String>,
    /// Where the crawl keeps everything: the frontier store, WARC files,
    /// log.jsonl. An existing crawl there is resumed.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Go on with the crawl in DIR (after Ctrl-C or a crash).
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    resume: Option<PathBuf>,
    /// Show the state of the crawl in DIR (readable while it runs), or
    /// with --frontier and no DIR, of the fleet's crawl.
    #[arg(long, value_name = "DIR", num_args = 0..=1, conflicts_with_all = ["out", "resume"])]
    status: Option<Option<PathBuf>>,
    /// The User-Agent header (should carry a contact URL).
    #[arg(long, value_name = "STRING")]
    user_agent: Option<String>,
    /// The product token matched against robots.txt [default: from the User-Agent].
    #[arg(long, value_name = "TOKEN")]
    agent: Option<String>,
    /// Seconds between two requests to one host, start to start;
    /// Crawl-delay and backoff only raise it.
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    min_delay: f64,
    /// Requests in flight across all hosts.
    #[arg(long, value_name = "N", default_value_t = 64)]
    concurrency: usize,
    /// Body bytes kept per response; longer ones are cut and marked truncated.
    #[arg(long, value_name = "BYTES", default_value_t = 8 << 20)]
    max_bytes: usize,
    /// Stop after this many pages.
    #[arg(long, value_name = "N")]
    max_pages: Option<u64>,
    /// Stop fetching a host after this many pages.
    #[arg(long, value_name = "N")]
    max_pages_per_host: Option<u64>,
    /// Links followed from a seed.
    #[arg(long, value_name = "N")]
    max_depth: Option<u32>,
    /// Which hosts to enter: the seeds' hosts, their registered domains, or any.
    #[arg(long, value_enum, default_value = "host")]
    scope: Scope,
    /// Only URLs matching this regex (repeatable).
    #[arg(long, value_name = "REGEX")]
    include: Vec<String>,
    /// No URL matching this regex (repeatable).
    #[arg(long, value_name = "REGEX")]
    exclude: Vec<String>,
    /// Follow links marked rel=nofollow.
    #[arg(long)]
    follow_rel_nofollow: bool,
    /// Keep only pages of these media types (comma-separated; `type/*`
    /// for a whole type, e.g. `text/html,application/pdf,image/*`); other
    /// pages are not downloaded past their head [default: every type].
    #[arg(long, value_name = "TYPES", value_delimiter = ',', value_parser = media_range)]
    content_types: Vec<String>,
    /// Retries of a 429, 5xx or timeout.
    #[arg(long, value_name = "N", default_value_t = 2)]
    retries: u8,
    /// End when every URL left waits longer than this (seconds).
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    give_up_after: u64,
    /// Longest a request may take, response body included (seconds). A
    /// crawl resumed after a kill holds a host whose request was cut off
    /// this long from that request's start, since the server may still be
    /// answering it.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
    /// Rotate WARC files after this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    warc_max_size: u64,
    /// Send every request through this proxy (otherwise HTTP_PROXY,
    /// HTTPS_PROXY and NO_PROXY are read).
    #[arg(long, value_name = "URL")]
    proxy: Option<String>,
    /// Do not queue the sitemaps robots.txt names.
    #[arg(long)]
    no_sitemaps: bool,
    /// Sign every request with Web Bot Auth using this private key
    /// (PKCS#8 PEM, as `mannerly keys generate` writes).
    #[arg(long, value_name = "PEM")]
    sign_key: Option<PathBuf>,
    /// The URL of the crawler's key directory (its JWK Set, fetched as it
    /// is), sent as Signature-Agent.
    #[arg(long, value_name = "URL", requires = "sign_key")]
    signature_agent: Option<String>,
    /// The crawler's Signature Agent Card: the User-Agent, the robots.txt
    /// product token and the Signature-Agent (its jwks_uri) come from it
    /// unless given.
    #[arg(long, value_name = "FILE")]
    card: Option<PathBuf>,
    /// Share the frontier with a fleet of workers on a Redis-protocol
    /// server (`redis://HOST:PORT/`; for a Redis Cluster, one node's URL or
    /// several, comma-separated): each host is fetched by one worker at a
    /// time, whichever machine it runs on. With --status, show the fleet.
    #[arg(long, value_name = "URL")]
    frontier: Option<String>,
    /// With --frontier: the crawl's name on the server.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "mannerly",
        requires = "frontier"
    )]
    crawl_name: String,
    /// With --frontier: partitions of a new crawl (fixed once created).
    #[arg(long, value_name = "N", default_value_t = mannerly_fleet::DEFAULT_PARTITIONS, requires = "frontier")]
    partitions: u32,
    /// With --frontier: join a crawl another worker started (no seeds).
    #[arg(long, requires = "frontier")]
    join: bool,
    /// With --frontier: seconds a release stays a worker's before another
    /// may take the URL over (default: twice the fetch timeout plus 60 s).
    /// A request's total timeout is at most half the lease, so no request
    /// is still running when its lease lapses.
    #[arg(long, value_name = "SECS", requires = "frontier")]
    lease: Option<u64>,
    /// With --frontier: URLs a worker takes from a host's queue at once.
    /// Above 1, a release is a claim on the host: the worker paces those
    /// URLs itself, adds the host's new links it finds, and reports them
    /// done as it goes, which cuts the server's work per page by 40 to 60 %;
    /// a URL queued behind a claim waits for it whatever its priority, and
    /// a worker that dies holding one leaves the URLs it had not reported
    /// to be fetched again after the lease. 1: one URL per release, in
    /// exactly the embedded frontier's order.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000), requires = "frontier")]
    claim: u32,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Scope {
    Host,
    Domain,
    Any,
}

/// A `--content-types` entry: `type/subtype` or `type/*`.
fn media_range(s: &str) -> Result<String, String> {
    let t = s.trim().to_ascii_lowercase();
    let token = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    match t.split_once('/') {
        Some((top, sub)) if token(top) && (sub == "*" || token(sub)) => Ok(t),
        _ => Err(format!(
            "'{s}' is not a media type (type/subtype, or type/* for a whole type)"
        )),
    }
}

/// Who the crawler says it is: from the flags, else its card.
struct Identity {
    user_agent: Option<String>,
    agent: Option<String>,
    signature_agent: Option<String>,
}

impl Identity {
    fn of(args: &Args) -> Result<Identity> {
        let mut id = Identity {
            user_agent: args.user_agent.clone(),
            agent: args.agent.clone(),
            signature_agent: args.signature_agent.clone(),
        };
        let Some(path) = &args.card else {
            return Ok(id);
        };
        let text = std::fs::read(path)
            .with_context(|| format!("cannot read --card '{}'", path.display()))?;
        let card: mannerly_botauth::card::Card =
            serde_json::from_slice(&text).with_context(|| {
                format!("--card '{}' is not a Signature Agent Card", path.display())
            })?;
        let expected = card
            .web_bot_auth
            .as_ref()
            .map(|w| w.expected_user_agent.clone())
            .unwrap_or_default();
        match &id.user_agent {
            Some(ua) if !expected.is_empty() && !card.matches_user_agent(ua) => bail!(
                "--user-agent {ua:?} is not one the card expects ({expected:?}): verifiers that check the card would flag every request"
            ),
            Some(_) => {}
            None => match expected.first() {
                Some(ua) if ua.contains('*') => bail!(
                    "the card's expected-user-agent {ua:?} is a pattern: give --user-agent"
                ),
                Some(ua) => id.user_agent = Some(ua.clone()),
                None => {}
            },
        }
        if id.agent.is_none() {
            id.agent = card.product_token().map(str::to_owned);
        }
        if id.signature_agent.is_none() {
            id.signature_agent = card.jwks_uri.clone();
        }
        Ok(id)
    }
}

/// The product token of a User-Agent: its first word, up to `/`.
fn token_of(user_agent: &str) -> String {
    user_agent
        .split(['/', ' ', '('])
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

fn read_seeds(args: &Args) -> Result<Vec<String>> {
    let mut seeds = args.urls.clone();
    if let Some(f) = &args.seeds {
        let text = if f == "-" {
            std::io::read_to_string(std::io::stdin()).context("cannot read seeds from stdin")?
        } else {
            std::fs::read_to_string(f).with_context(|| format!("cannot read seeds from '{f}'"))?
        };
        seeds.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned),
        );
    }
    Ok(seeds)
}

/// `--status --frontier URL`: the fleet's shared state.
fn fleet_status(url: &str, args: &Args) -> Result<u8> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let s = runtime
        .block_on(mannerly_fleet::client::fleet_status(
            url,
            &args.crawl_name,
            args.partitions,
        ))
        .with_context(|| format!("--frontier {url}"))?;
    if args.json {
        println!("{}", serde_json::to_string(&s)?);
        return Ok(0);
    }
    println!(
        "crawl {} on {url}: {} partitions",
        args.crawl_name, s.partitions
    );
    println!(
        "  workers seen in the last 10 s: {} ({})",
        s.workers.len(),
        s.workers.join(", ")
    );
    println!(
        "  {} queued over {} hosts, {} in flight ({} hosts owned), {} skipped, {} re-issued after a lapsed lease",
        s.queued, s.hosts, s.in_flight, s.hosts_owned, s.skipped, s.reissued
    );
    Ok(0)
}

/// `--status DIR`: what the crawl there last wrote of itself.
fn status(dir: &Path, json: bool) -> Result<u8> {
    let path = dir.join("status.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("--status {}: no crawl status there", dir.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a crawl status", path.display()))?;
    if json {
        println!("{v}");
        return Ok(0);
    }
    let pid = v["pid"].as_u64().unwrap_or(0);
    let alive = v["running"].as_bool() == Some(true) && Path::new(&format!("/proc/{pid}")).exists();
    println!(
        "crawl in {}: {} (as of {})",
        dir.display(),
        if alive {
            format!("running, pid {pid}")
        } else if v["running"].as_bool() == Some(true) {
            "not running (it stopped without finishing: --resume it)".to_owned()
        } else {
            format!("ended: {}", v["ending"].as_str().unwrap_or("?"))
        },
        v["updated"].as_str().unwrap_or("?")
    );
    println!(
        "  {} pages, {} KiB, {} in flight, {} queued, {} errors, {} retries, {:.0} s",
        v["pages"],
        v["bytes"].as_u64().unwrap_or(0) / 1024,
        v["in_flight"],
        v["queued"],
        v["errors"],
        v["retries"],
        v["seconds"].as_f64().unwrap_or(0.0)
    );
    if let Some(m) = v["skipped"].as_object().filter(|m| !m.is_empty()) {
        let s: Vec<String> = m.iter().map(|(k, n)| format!("{k}: {n}")).collect();
        println!("  not fetched: {}", s.join(", "));
    }
    if let Some(m) = v["robots_unavailable"].as_object() {
        for (origin, why) in m {
            println!(
                "  waiting: {origin}/robots.txt unavailable: {}",
                why.as_str().unwrap_or("")
            );
        }
    }
    if let Some(hosts) = v["busiest"].as_array().filter(|h| !h.is_empty()) {
        println!("  hosts holding the most URLs:");
        for h in hosts {
            println!(
                "    {:>8} queued  {}: {}",
                h["queued"],
                h["host"].as_str().unwrap_or("?"),
                h["waiting"].as_str().map_or("may be fetched now", |w| {
                    w.strip_prefix(h["host"].as_str().unwrap_or(""))
                        .and_then(|w| w.strip_prefix(": "))
                        .unwrap_or(w)
                })
            );
        }
    }
    Ok(0)
}

pub fn run(args: Args) -> Result<u8> {
    run_with(args, None)
}

/// Runs a crawl; with `old`, a recrawl of that earlier crawl (its pages are
/// seeds and are asked for conditionally). A resumed crawl that was a
/// recrawl finds its earlier crawl in `recrawl.json`.
pub(crate) fn run_with(args: Args, old: Option<(PathBuf, Duration, Option<f64>)>) -> Result<u8> {
    if let Some(dir) = &args.status {
        return match (dir, &args.frontier) {
            (_, Some(url)) => fleet_status(url, &args),
            (Some(dir), None) => status(dir, args.json),
            (None, None) => {
                bail!("--status needs a crawl directory (or --frontier URL, for a fleet)")
            }
        };
    }
    let seeds = read_seeds(&args)?;
    let (out, resuming) = match (&args.out, &args.resume) {
        (Some(o), None) => (o.clone(), false),
        (None, Some(r)) => {
            if !r.join("frontier").exists() {
                bail!(
                    "--resume {}: no crawl there (no frontier store)",
                    r.display()
                );
            }
            (r.clone(), true)
        }
        _ => bail!("say where the crawl goes: --out DIR (or --resume DIR)"),
    };
    let (seeds, revisiting) = crate::recrawl::prior_and_seeds(seeds, old, &out, resuming)?;
    if seeds.is_empty() && !resuming && !args.join {
        bail!("no seed URL: give URLs, or --seeds FILE (or --join a fleet's crawl)");
    }
    if !(args.min_delay.is_finite() && args.min_delay >= 0.0) {
        bail!("--min-delay {} is not a number of seconds", args.min_delay);
    }
    let mut config = CrawlConfig::default();
    let identity = Identity::of(&args)?;
    if let Some(ua) = &identity.user_agent {
        if !ua.contains("http://") && !ua.contains("https://") && !ua.contains('@') {
            eprintln!(
                "mannerly: warning: --user-agent has no contact URL; site owners cannot reach you"
            );
        }
        config.user_agent = ua.clone();
        config.agent = token_of(ua);
    }
    if let Some(a) = &identity.agent {
        config.agent = a.clone();
    }
    if config.agent.is_empty() {
        bail!("--agent: no product token (give --agent TOKEN)");
    }
    config.min_delay = Duration::from_secs_f64(args.min_delay);
    config.concurrency = args.concurrency.max(1);
    config.max_bytes = args.max_bytes;
    config.max_pages = args.max_pages;
    config.max_pages_per_host = args.max_pages_per_host;
    config.max_depth = args.max_depth;
    config.scope = match args.scope {
        Scope::Host => ScopeMode::Host,
        Scope::Domain => ScopeMode::Domain,
        Scope::Any => ScopeMode::Any,
    };
    config.include = args.include.clone();
    config.exclude = args.exclude.clone();
    config.follow_rel_nofollow = args.follow_rel_nofollow;
    config.content_types = args.content_types.clone();
    config.retries = args.retries;
    config.give_up_after = Duration::from_secs(args.give_up_after);
    config.timeout = Duration::from_secs(args.timeout);
    config.first_byte_timeout = config.first_byte_timeout.min(config.timeout);
    config.connect_timeout = config.connect_timeout.min(config.timeout);
    config.warc_max_size = args.warc_max_size;
    config.proxy = args.proxy.clone();
    config.sitemaps = !args.no_sitemaps;
    if args.sign_key.is_some() && identity.signature_agent.is_none() {
        bail!("--sign-key needs --signature-agent URL (or a --card with a jwks_uri)");
    }
    if let (Some(key), Some(agent)) = (&args.sign_key, &identity.signature_agent) {
        let pem = std::fs::read_to_string(key)
            .with_context(|| format!("cannot read --sign-key '{}'", key.display()))?;
        let pair = mannerly_botauth::KeyPair::from_pkcs8_pem(&pem)
            .with_context(|| format!("--sign-key '{}'", key.display()))?;
        if !agent.starts_with("https://") {
            bail!("--signature-agent {agent}: key directories are served over https");
        }
        config.signing = Some((pair, agent.clone()));
    }
    if let Some(r) = revisiting {
        config.prior = Some(r.prior);
        config.max_age = r.max_age;
    }
    raise_open_file_limit();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let (summary, stopped) = match &args.frontier {
        Some(url) => {
            let lease = Duration::from_secs(
                args.lease
                    .unwrap_or(2 * config.timeout.as_secs() + 60)
                    .max(1),
            );
            // A request is over before its lease can lapse: it goes out
            // within half the lease (`send_by`) and lasts at most the rest.
            config.timeout = config.timeout.min(lease / 2);
            config.first_byte_timeout = config.first_byte_timeout.min(config.timeout);
            let fleet = Fleet {
                url: url.clone(),
                crawl: args.crawl_name.clone(),
                partitions: args.partitions,
                lease,
                join: args.join,
                claim: args.claim as usize,
            };
            runtime.block_on(run_crawl_on(fleet, config, seeds, &out))?
        }
        None => runtime.block_on(run_crawl(config, seeds, &out))?,
    };
    report(&summary, &out, args.json)?;
    Ok(if stopped { 130 } else { 0 })
}

/// A crawl keeps a connection per recently fetched host: with thousands
/// of hosts the usual soft limit of 1,024 open files is too low, so it is
/// raised to the hard limit (as Go's runtime does for every program). A
/// failure leaves the limit as it was.
pub(crate) fn raise_open_file_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            },
        );
    }
}

/// Runs the crawl with Ctrl-C handling: the first stops gracefully, a
/// second exits at once.
pub(crate) async fn run_crawl(
    config: CrawlConfig,
    seeds: Vec<String>,
    out: &Path,
) -> Result<(Summary, bool)> {
    run_crawl_on(Local, config, seeds, out).await
}

/// [`run_crawl`] on another backend (a fleet's shared frontier).
pub(crate) async fn run_crawl_on<B: Backend>(
    backend: B,
    config: CrawlConfig,
    seeds: Vec<String>,
    out: &Path,
) -> Result<(Summary, bool)> {
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!(
                "\nmannerly: stopping (in-flight requests get 5 s; Ctrl-C again to quit now)"
            );
            let _ = stop_tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
    let tty = std::io::stderr().is_terminal();
    let bar = tty.then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    });
    let mut last = std::time::Instant::now();
    let summary = crawl_on(
        backend,
        config,
        &seeds,
        out,
        stop.clone(),
        |p: &Progress| {
            let line = format!(
            "{} pages, {:.1} pages/s, {} KiB, {} in flight, {} queued, {} hosts blocked, {} errors",
            p.pages,
            p.pages as f64 / p.seconds.max(0.001),
            p.bytes / 1024,
            p.in_flight,
            p.queued,
            p.hosts_blocked,
            p.errors
        );
            match &bar {
                Some(b) => b.set_message(line),
                None => {
                    if last.elapsed() >= Duration::from_secs(5) {
                        last = std::time::Instant::now();
                        eprintln!("{line}");
                    }
                }
            }
        },
    )
    .await?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let stopped = summary.ending == Ending::Stopped;
    Ok((summary, stopped))
}

pub(crate) fn report(summary: &Summary, out: &Path, json: bool) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    if json {
        let mut v = serde_json::to_value(summary)?;
        // A recrawl: the bytes the earlier crawl downloaded, to set its own
        // against.
        if let (Some(before), Some(o)) = (crate::recrawl::earlier_bytes(out), v.as_object_mut()) {
            o.insert("earlier_bytes".into(), before.into());
        }
        serde_json::to_writer(&mut stdout, &v)?;
        writeln!(stdout)?;
        return Ok(());
    }
    let pages: u64 = summary.pages_by_status.values().sum();
    let r = &summary.revisits;
    if r.not_modified + r.unchanged + r.changed + r.skipped_by_lastmod > 0 {
        writeln!(
            stdout,
            "recrawl: {} not requested (sitemap lastmod unchanged), {} not modified (304), {} unchanged (same payload), {} changed, {} new",
            r.skipped_by_lastmod, r.not_modified, r.unchanged, r.changed, r.new
        )?;
        if let Some(before) = crate::recrawl::earlier_bytes(out) {
            writeln!(
                stdout,
                "  {} KiB downloaded, against {} KiB by the earlier crawl ({:.1} %)",
                summary.bytes / 1024,
                before / 1024,
                100.0 * summary.bytes as f64 / before.max(1) as f64
            )?;
        }
        if !r.lastmod_untrusted_hosts.is_empty() {
            writeln!(
                stdout,
                "  sitemap lastmod ignored (caught lying): {}",
                r.lastmod_untrusted_hosts.join(", ")
            )?;
        }
    }
    writeln!(
        stdout,
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
    let by_status: Vec<String> = summary
        .pages_by_status
        .iter()
        .map(|(s, n)| format!("{s}: {n}"))
        .collect();
    writeln!(stdout, "  pages by status: {}", by_status.join(", "))?;
    if summary.page_errors > 0 || summary.retries > 0 {
        writeln!(
            stdout,
            "  fetch errors: {}, retries: {}",
            summary.page_errors, summary.retries
        )?;
    }
    if !summary.skipped.is_empty() {
        let s: Vec<String> = summary
            .skipped
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        writeln!(stdout, "  not fetched: {}", s.join(", "))?;
    }
    if summary.deferred > 0 {
        writeln!(
            stdout,
            "  deferred (still queued, resume later): {}",
            summary.deferred
        )?;
        for (why, n) in &summary.deferred_by_reason {
            writeln!(stdout, "    {n} waiting on {why} (each in the log)")?;
        }
    }
    for (origin, why) in &summary.unavailable {
        writeln!(stdout, "  {origin}/robots.txt unavailable: {why}")?;
    }
    writeln!(
        stdout,
        "  WARC: {} records in {}; log: {}",
        summary.warc_records,
        out.join("warc").display(),
        out.join("log.jsonl").display()
    )?;
    Ok(())
}
