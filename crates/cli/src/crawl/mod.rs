//! `mannerly crawl` (and `recrawl`, which adds its plan): the flags, then
//! thin over `mannerly-crawl`. `settings` makes the flags a configuration,
//! `run` runs the crawl, `report` prints its summary, `status` shows a
//! running or ended crawl.

use std::path::PathBuf;

use anyhow::{bail, Result};
use mannerly_crawl::{CrawlConfig, CrawlDir, Recrawl, RecrawlPlan};
use mannerly_fetch::UnixMillis;

mod options;
mod report;
mod run;
mod settings;
mod status;

pub(crate) use report::report;
pub(crate) use run::{metrics, raise_open_file_limit, run_crawl};
use settings::media_range;
pub(crate) use settings::{delay_seconds, proxy_value, user_agent_value};

#[derive(clap::Args)]
pub struct Args {
    /// Seed URLs.
    #[arg(value_name = "URL")]
    pub(crate) urls: Vec<String>,
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
    /// The User-Agent header: it must name the crawler with a product
    /// token of its own and an http(s) URL of a page about it, e.g.
    /// `ExampleBot/1.0 (+https://example.com/bot)`. Without it the crawl
    /// goes out as `mannerly/VERSION (+https://example.invalid/mannerly)`,
    /// shared by every such crawl and naming no page, with a warning.
    #[arg(long, value_name = "STRING", value_parser = settings::user_agent_value)]
    user_agent: Option<String>,
    /// Crawl with a User-Agent that lacks a product token or an http(s)
    /// URL: site owners then cannot tell who crawled them, or reach you.
    #[arg(long)]
    anonymous_ok: bool,
    /// The product token matched against robots.txt [default: from the User-Agent].
    #[arg(long, value_name = "TOKEN", value_parser = settings::agent_value)]
    agent: Option<String>,
    /// Seconds between two requests to one host, start to start;
    /// Crawl-delay and backoff only raise it.
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = settings::delay_seconds, allow_hyphen_values = true)]
    min_delay: f64,
    /// Requests in flight across all hosts.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    concurrency: usize,
    /// Hosts in progress at once (default 4 × --concurrency; in a fleet,
    /// half --concurrency, so that workers share the hosts); the rest wait on
    /// disk (or in the fleet's store), so memory follows this, not the
    /// crawl's size.
    #[arg(long, value_name = "N", value_parser = crate::counts::at_least_one::<u64>)]
    open_hosts: Option<u64>,
    /// Threads the crawl runs on. One keeps a polite crawl's work (which
    /// waits on delays, not on the CPU) off other threads' wake-ups; more
    /// help when parsing pages is what limits the crawl.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::counts::at_least_one::<u16>)]
    threads: u16,
    /// Body bytes kept per response; longer ones are cut and marked truncated.
    #[arg(long, value_name = "BYTES", default_value_t = 8 << 20, value_parser = crate::counts::at_least_one::<usize>)]
    max_bytes: usize,
    /// Stop after this many pages.
    #[arg(long, value_name = "N", value_parser = crate::counts::at_least_one::<u64>)]
    max_pages: Option<u64>,
    /// Stop fetching a host after this many pages.
    #[arg(long, value_name = "N", value_parser = crate::counts::at_least_one::<u64>)]
    max_pages_per_host: Option<u64>,
    /// Links followed from a seed: a bound on loops and endless link
    /// spaces (calendars, session URLs).
    #[arg(long, value_name = "N", default_value_t = 20)]
    max_depth: u32,
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
    /// Retries of a 429, 5xx or timeout: with the frontier queueing a
    /// URL once, a URL gets at most 1 + N requests in a crawl.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=10))]
    retries: u8,
    /// End when every URL left waits longer than this (seconds). A
    /// resumed crawl counts it from --timeout after it starts, once the
    /// hosts it holds for requests a kill cut off are free again.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    give_up_after: u64,
    /// Longest a request may take, response body included (seconds). A
    /// crawl resumed after a kill holds a host whose request was cut off
    /// this long from that request's start, since the server may still be
    /// answering it.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
    /// Rotate WARC files after this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30, value_parser = crate::counts::at_least_one::<u64>)]
    warc_max_size: u64,
    /// Send every request through this proxy (otherwise HTTP_PROXY,
    /// HTTPS_PROXY and NO_PROXY are read).
    #[arg(long, value_name = "URL", value_parser = settings::proxy_value)]
    proxy: Option<String>,
    /// Do not queue the sitemaps robots.txt names.
    #[arg(long)]
    no_sitemaps: bool,
    /// Keep no evidence: by default every request's record (the robots.txt
    /// judged by, the deciding line, the delay kept) goes into `evidence/`
    /// and the WARC, chained and checkpointed (signed with --sign-key), for
    /// `mannerly evidence export`.
    #[arg(long)]
    no_evidence: bool,
    /// Serve Prometheus metrics at http://ADDR/metrics while the crawl
    /// runs (OpenMetrics when the scraper asks), and write their last
    /// values to metrics.prom in the output directory at the end.
    #[arg(long, value_name = "ADDR:PORT")]
    metrics: Option<String>,
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
    #[arg(long, value_name = "URL", value_parser = settings::frontier_value)]
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
    /// With --frontier: seconds a release stays a worker's unless its
    /// heartbeat renews it, which a live worker's does every few seconds
    /// (default: the fetch timeout plus 10 s). A killed worker's hosts pass
    /// to the others that long after its last heartbeat. Given, the fetch
    /// timeout is at most half of it, so no request outlives its lease.
    #[arg(long, value_name = "SECS", requires = "frontier")]
    lease: Option<u64>,
    /// With --frontier: URLs a worker takes from a host's queue at once.
    /// Above 1, a release is a claim on the host: the worker paces those
    /// URLs itself, adds the host's new links it finds, and reports them
    /// done as it goes, which cuts the server's work per page by 40 to 60 %;
    /// a URL queued behind a claim waits for it whatever its priority. A
    /// worker that dies holding one leaves only the URLs it had not
    /// fetched, and the one whose request was out, to be fetched again
    /// after the lease. 1: one URL per release, in exactly the embedded
    /// frontier's order.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000), requires = "frontier")]
    claim: u32,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Where a crawl is already (--resume DIR, or --out DIR): take the
    /// options given now over those it was started with. Without it, an
    /// option that changes what is sent or how (User-Agent, delays,
    /// limits, scope, proxy, signing, the fleet) given with another value
    /// is refused.
    #[arg(long)]
    change: bool,
    /// The options the crawl records (set from the command line and the
    /// crawl's `crawl.json`, not a flag).
    #[arg(skip)]
    options: std::collections::BTreeMap<String, Vec<String>>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Scope {
    Host,
    Domain,
    Any,
}

/// `mannerly crawl`, its command line in `m` (for which options were
/// given, and the options a crawl recorded put back on a resume).
pub fn run(args: Args, m: &clap::ArgMatches) -> Result<u8> {
    let args = options::with_recorded(args, m)?;
    run_with(args, None)
}

/// Runs a crawl; with `plan`, a recrawl of an earlier crawl (its pages are
/// seeds and are asked for conditionally). A resumed crawl that was a
/// recrawl finds its plan in its own directory.
pub(crate) fn run_with(args: Args, plan: Option<RecrawlPlan>) -> Result<u8> {
    if let Some(dir) = &args.status {
        return status::show(dir.as_deref(), &args);
    }
    let (mut seeds, rejected) = settings::read_seeds(&args)?;
    let (dir, resuming) = where_to(&args)?;
    let mut config = settings::config(&args)?;
    let due = plan.as_ref().and_then(|p| p.due);
    if let Some((recrawl, pages)) = Recrawl::open(&dir, plan, resuming, UnixMillis::now())? {
        if let (Some(threshold), false) = (due, resuming) {
            eprintln!(
                "recrawl: {} of {} pages are due (a chance of change of {threshold} or more); the others are carried over",
                pages.len(),
                recrawl.prior.pages().count()
            );
        }
        seeds.extend(pages);
        recrawl.configure(&mut config);
    }
    if seeds.is_empty() && !resuming && !args.join {
        if !rejected.is_empty() {
            bail!(
                "no seed URL the crawl can fetch: all {} rejected",
                rejected.len()
            );
        }
        bail!("no seed URL: give URLs, or --seeds FILE (or --join a fleet's crawl)");
    }
    eprintln!(
        "mannerly: crawling as {:?}, obeying the robots.txt group for `{}`",
        config.user_agent, config.agent
    );
    if let Some(note) = mannerly_robots::agent_note(&config.agent) {
        eprintln!("mannerly: note: {note}");
    }
    if config.user_agent == CrawlConfig::default().user_agent {
        eprintln!(
            "mannerly: warning: that is the default User-Agent, shared by every crawl without --user-agent: its page does not exist, so site owners cannot tell who you are or reach you, and one that refuses `mannerly` refuses them all. Give --user-agent \"YourBot/1.0 (+https://you.example/bot)\""
        );
    }
    if let Some(proxy) = &args.proxy {
        run::proxy_answers(proxy)?;
    }
    raise_open_file_limit();
    let existed = dir.root().exists();
    let (summary, stopped) = match run::on_backend(&args, config, seeds, dir.root()) {
        Ok(ended) => ended,
        Err(e) => {
            // A crawl that could not start leaves nothing behind.
            if !existed {
                let _ = remove_empty(dir.root());
            }
            return Err(e);
        }
    };
    report(&summary, &dir, args.json, &rejected)?;
    Ok(if stopped {
        crate::signals::stopped_by()
    } else {
        0
    })
}

/// Removes `dir` when it holds nothing but empty directories.
fn remove_empty(dir: &std::path::Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let path = e?.path();
        if !path.is_dir() {
            return Ok(());
        }
        remove_empty(&path)?;
    }
    std::fs::remove_dir(dir)
}

/// The crawl's directory, and whether the crawl there is resumed.
fn where_to(args: &Args) -> Result<(CrawlDir, bool)> {
    match (&args.out, &args.resume) {
        (Some(o), None) => Ok((CrawlDir::new(o), false)),
        (None, Some(r)) => {
            let dir = CrawlDir::new(r);
            // A fleet worker's frontier is the fleet's: its recorded
            // --frontier says where.
            if !dir.has_frontier() && args.frontier.is_none() {
                bail!(
                    "--resume {}: no crawl there (no frontier store)",
                    r.display()
                );
            }
            Ok((dir, true))
        }
        _ => bail!("say where the crawl goes: --out DIR (or --resume DIR)"),
    }
}
