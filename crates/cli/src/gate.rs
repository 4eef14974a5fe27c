//! `mannerly gate`: the forward-auth endpoint nginx, Caddy and Traefik ask
//! before serving each request.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use mannerly_audit::Catalogue;
use mannerly_botauth::client::{DirectoryClient, DirectoryConfig};
use mannerly_botauth::fcrdns::{HickoryDns, IpRanges};
use mannerly_gate::keys::Keys;
use mannerly_gate::ranges::Ranges;
use mannerly_gate::rdns::ReverseDns;
use mannerly_gate::{Door, Gate, Policy, Settings, Tally};
use mannerly_metrics::Registry;

use mannerly_identity::{default_cache, read_given_ranges};

#[derive(clap::Args)]
pub struct Args {
    /// Address and port to listen on.
    #[arg(long, default_value = "127.0.0.1:9181", value_name = "ADDR:PORT")]
    listen: String,
    /// The policy (TOML): rules tried in order, the first matching
    /// decides, none matching allows.
    #[arg(long, value_name = "FILE", conflicts_with = "default_policy")]
    policy: Option<PathBuf>,
    /// The built-in policy: spoofers refused, everything else allowed
    /// (also what runs without --policy).
    #[arg(long)]
    default_policy: bool,
    /// Check a policy file, print its rules or its mistakes with line
    /// numbers, and exit (0 valid, 2 not).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["policy", "default_policy"])]
    check: Option<PathBuf>,
    /// Peers whose X-Forwarded-* headers are believed (repeatable).
    #[arg(long, value_name = "CIDR", default_values_t = ["127.0.0.0/8".to_owned(), "::1/128".to_owned()])]
    trust_forwarded: Vec<String>,
    /// Web Bot Auth keys (a JWKS or one JWK) to verify with, instead of
    /// the key directories signed requests name.
    #[arg(long, value_name = "FILE")]
    keys: Option<String>,
    /// IP ranges from a file or an https URL instead of the operator's
    /// site: NAME=FILE|URL, where NAME is an operator (Google: every
    /// crawler the catalogue lists for it) or a product token, and the
    /// file is JAFAR (Google's `prefixes` format; a prefix's `services`
    /// name its tokens, the most specific prefix wins) or ipverse's
    /// crawlers.json. A URL's file is kept a day in the cache.
    #[arg(long, value_name = "NAME=FILE|URL")]
    ip_ranges: Vec<String>,
    /// No network: no DNS, no downloads (given files and the cache only).
    #[arg(long)]
    offline: bool,
    /// Verify signatures on plain-http requests (replayable by anyone on
    /// the path: for tests and trusted networks).
    #[arg(long)]
    allow_http: bool,
    /// Answer slow-downs 403 with `X-Mannerly-Action: slow` and
    /// Retry-After, for nginx's auth_request (see the README's snippet).
    #[arg(long)]
    nginx: bool,
    /// The DNS server for reverse-DNS checks (default: the system's).
    #[arg(long, value_name = "ADDR:PORT")]
    dns: Option<std::net::SocketAddr>,
    /// Where downloaded IP ranges are kept.
    #[arg(long, value_name = "DIR")]
    cache: Option<String>,
    /// Serve Prometheus metrics (decisions by class and action, their
    /// time, the process) at http://ADDR/metrics.
    #[arg(long, value_name = "ADDR:PORT")]
    metrics: Option<String>,
}

pub fn run(args: Args) -> Result<u8> {
    if let Some(file) = &args.check {
        return Ok(check(file));
    }
    let policy = match &args.policy {
        Some(file) => Policy::read(file)?,
        None => Policy::sensible(),
    };
    let file = args
        .policy
        .as_deref()
        .unwrap_or(std::path::Path::new("policy"))
        .display();
    for (line, note) in policy.notes() {
        eprintln!("mannerly gate: {file}:{line}: note: {note}");
    }
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr().context("reading the bound address")?;
        let rules = policy.rules.len();
        let registry = Registry::new(true);
        if let Some(m) = &args.metrics {
            crate::metrics::listen(m, registry.clone()).await?;
        }
        let door = door(&args, policy, registry)?;
        let s = if rules == 1 { "" } else { "s" };
        eprintln!("mannerly gate: deciding at http://{addr}/ ({rules} rule{s})");
        tokio::select! {
            r = mannerly_gate::serve(listener, door) => r.context("serving")?,
            r = crate::signals::stop_signal() => drop(r.context("waiting for Ctrl-C or SIGTERM")?),
        }
        anyhow::Ok(0)
    })
}

/// Everything a decision reads; starts the background loaders (call
/// inside the runtime).
fn door(args: &Args, policy: Policy, registry: Arc<Registry>) -> Result<Arc<Door>> {
    let catalogue = Catalogue::builtin();
    let cidrs: Vec<&str> = args.trust_forwarded.iter().map(String::as_str).collect();
    let trusted =
        IpRanges::from_cidrs(&cidrs).map_err(|e| anyhow::anyhow!("--trust-forwarded: {e}"))?;
    let fixed = args
        .keys
        .as_deref()
        .map(|p| crate::input::key_file("--keys", p))
        .transpose()?;
    let client = match args.offline {
        true => None,
        false => Some(DirectoryClient::new(DirectoryConfig {
            timeout: Duration::from_secs(3),
            ..DirectoryConfig::default()
        })?),
    };
    // Unlisted crawlers naming their page are judged by the ranges it
    // links, once loaded (never offline).
    let pages = (!args.offline).then(|| mannerly_botauth::identity_check::CheckOptions {
        cache: Some(mannerly_identity::identity_cache()),
        timeout: Duration::from_secs(5),
        ..Default::default()
    });
    let ranges = Ranges::following_pages(
        read_given_ranges(&args.ip_ranges, mannerly_audit::Catalogue::builtin())?,
        pages,
    );
    let cache = args
        .cache
        .as_ref()
        .map_or_else(default_cache, PathBuf::from);
    ranges.load_in_background(catalogue, cache, args.offline);
    let rdns = match (args.offline, args.dns) {
        (true, _) => None,
        (false, Some(addr)) => Some(ReverseDns::start(HickoryDns::with_server(addr))),
        (false, None) => HickoryDns::system().ok().map(ReverseDns::start),
    };
    Ok(Arc::new(Door {
        catalogue,
        gate: Mutex::new(Gate::new(policy)),
        keys: Keys::new(fixed, client),
        ranges,
        rdns,
        settings: Settings {
            trusted,
            allow_http: args.allow_http,
            nginx: args.nginx,
        },
        tally: Tally::new(registry),
    }))
}

/// `--check FILE`: the rules as read, or the mistake.
fn check(file: &std::path::Path) -> u8 {
    match Policy::read(file) {
        Ok(p) => {
            if let Some((robots, _)) = &p.robots {
                let held: Vec<&str> = std::iter::once("crawlers")
                    .chain(p.robots_include.iter().map(|k| k.as_str()))
                    .collect();
                println!(
                    "robots: {} (the paths it disallows are refused to {}; other kinds pass unless robots_include names them)",
                    robots.display(),
                    held.join(", ")
                );
            }
            for r in &p.rules {
                println!(
                    "{}:{}: who = \"{}\", do {}",
                    file.display(),
                    r.line,
                    r.who,
                    r.action
                );
            }
            for (line, note) in p.notes() {
                println!("{}:{line}: note: {note}", file.display());
            }
            let n = p.rules.len();
            println!(
                "{}: valid, {n} rule{}; a request no rule matches is allowed",
                file.display(),
                if n == 1 { "" } else { "s" }
            );
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}
