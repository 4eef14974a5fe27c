//! Running a crawl: on this machine or a fleet's shared frontier, with
//! Ctrl-C and SIGTERM handling and a progress line.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use mannerly_crawl::metrics::CrawlMetrics;
use mannerly_crawl::{crawl_on, Backend, CrawlConfig, Ending, Local, Progress, Summary};
use mannerly_fleet::Fleet;
use mannerly_metrics::Registry;

use super::Args;

/// Runs the crawl on the backend the flags choose (a fleet's frontier with
/// `--frontier`, else this machine's); the summary, and whether it was
/// stopped.
pub(super) fn on_backend(
    args: &Args,
    mut config: CrawlConfig,
    seeds: Vec<String>,
    out: &Path,
) -> Result<(Summary, bool)> {
    let runtime = runtime(args.threads).context("cannot start the async runtime")?;
    let metrics = match &args.metrics {
        Some(addr) => Some(runtime.block_on(metrics(Some(addr), &mut config))?),
        None => None,
    };
    let result = runtime.block_on(on_runtime(args, config, seeds, out));
    if let Some(m) = metrics {
        let file = out.join("metrics.prom");
        m.registry()
            .write_textfile(&file)
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    result
}

/// The crawl's metrics, counted into `config`, and served at `addr` while
/// it runs when given.
pub(crate) async fn metrics(
    addr: Option<&str>,
    config: &mut CrawlConfig,
) -> Result<Arc<CrawlMetrics>> {
    let metrics = CrawlMetrics::new(Registry::new(true));
    config.metrics = Some(metrics.clone());
    if let Some(addr) = addr {
        crate::metrics::listen(addr, metrics.registry().clone()).await?;
    }
    Ok(metrics)
}

/// The crawl's runtime: on this thread alone for one (a profile of the
/// demo crawl put a fifth of its CPU in handing work between threads), a
/// pool for more.
fn runtime(threads: u16) -> std::io::Result<tokio::runtime::Runtime> {
    match threads {
        0 | 1 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::from(n))
            .enable_all()
            .build(),
    }
}

/// A fleet worker's lease beyond its request timeout, by default: three
/// heartbeats' worth of send window.
const LEASE_MARGIN: Duration = Duration::from_secs(10);

async fn on_runtime(
    args: &Args,
    mut config: CrawlConfig,
    seeds: Vec<String>,
    out: &Path,
) -> Result<(Summary, bool)> {
    let Some(url) = &args.frontier else {
        return run_crawl(config, seeds, out).await;
    };
    // The heartbeat renews a live worker's leases, so a lease need only
    // outlast a request by a little: a killed worker's hosts pass to the
    // others within the timeout plus 10 s of its last heartbeat. A lease
    // given is kept, the timeout cut to half of it at most. A request
    // leaves only while its lease has the timeout left (`send_by`).
    let lease = match args.lease {
        Some(s) => {
            let lease = Duration::from_secs(s.max(1));
            config.timeout = config.timeout.min(lease / 2);
            lease
        }
        None => config.timeout + LEASE_MARGIN,
    };
    config.first_byte_timeout = config.first_byte_timeout.min(config.timeout);
    // A worker holds only so many hosts, so the fleet shares: by default
    // half its request slots (two workers on 200 hosts of 6 pages, the
    // second 2 s late, split the pages 52/48; at one per slot 64/36).
    let max_hosts = args
        .open_hosts
        .unwrap_or((config.concurrency as u64 / 2).max(1));
    config.open_hosts = Some(max_hosts);
    let fleet = Fleet {
        url: url.clone(),
        crawl: args.crawl_name.clone(),
        partitions: args.partitions,
        lease,
        longest_request: config.timeout,
        join: args.join,
        claim: args.claim as usize,
        max_hosts: usize::try_from(max_hosts).unwrap_or(usize::MAX),
    };
    run_crawl_on(fleet, config, seeds, out).await
}

/// Whether the proxy takes connections: a crawl through a proxy that
/// refuses them would find every site down and end as if it had crawled.
pub(super) fn proxy_answers(proxy: &str) -> Result<()> {
    let url = url::Url::parse(proxy).with_context(|| format!("--proxy {proxy}: not a URL"))?;
    let host = url
        .host_str()
        .with_context(|| format!("--proxy {proxy}: names no host"))?;
    let port = url.port_or_known_default().unwrap_or(8080);
    let addrs: Vec<std::net::SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .with_context(|| format!("--proxy {proxy}: cannot resolve {host}"))?
        .collect();
    let mut last = None;
    for a in addrs {
        match std::net::TcpStream::connect_timeout(&a, Duration::from_secs(5)) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    match last {
        Some(e) => Err(e).with_context(|| format!("--proxy {proxy}: the proxy does not answer")),
        None => anyhow::bail!("--proxy {proxy}: {host} has no address"),
    }
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

/// Runs the crawl with Ctrl-C and SIGTERM handling: the first stops
/// gracefully, a second exits at once.
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
    let bar = progress_bar();
    let said = bar.clone();
    tokio::spawn(async move {
        if let Ok(first) = crate::signals::stop_signal().await {
            let msg = format!(
                "mannerly: stopping on {} (in-flight requests get 5 s; Ctrl-C or SIGTERM again to quit now)",
                first.name()
            );
            // Above the progress line, which would otherwise draw over it.
            match &said {
                Some(b) => b.println(msg),
                None => eprintln!("\n{msg}"),
            }
            let _ = stop_tx.send(true);
            if let Ok(again) = crate::signals::stop_signal().await {
                std::process::exit(i32::from(again.status()));
            }
        }
    });
    let mut last = std::time::Instant::now();
    let summary = crawl_on(backend, config, seeds, out, stop.clone(), |p: &Progress| {
        let line = progress_line(p);
        match &bar {
            Some(b) => b.set_message(line),
            None => {
                if last.elapsed() >= Duration::from_secs(5) {
                    last = std::time::Instant::now();
                    eprintln!("{line}");
                }
            }
        }
    })
    .await?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let stopped = summary.ending == Ending::Stopped;
    Ok((summary, stopped))
}

/// The progress line. A crawl with nothing in flight whose pages wait
/// for a robots.txt says which and why (a mistyped or unreachable seed
/// host waits through its retries, and would otherwise show only counts).
fn progress_line(p: &Progress) -> String {
    let mut line = format!(
        "{} pages, {:.1} pages/s, {} KiB, {} in flight, {} queued, robots.txt unavailable: {}, {} errors",
        p.pages,
        p.pages as f64 / p.seconds.max(0.001),
        p.bytes / 1024,
        p.in_flight,
        p.queued,
        p.hosts_blocked,
        p.errors
    );
    if let (0, Some((origin, why))) = (p.in_flight, &p.first_blocked) {
        line.push_str(&format!("; {origin}/robots.txt: {why}"));
    }
    line
}

/// A spinner with the progress line on a terminal, cut to its width (a
/// wrapped line's redraw would erase the lines above it); none elsewhere
/// (a line every 5 s is printed instead).
fn progress_bar() -> Option<indicatif::ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {elapsed_precise} {wide_msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_crawl_says_which_robots_txt_it_waits_for() {
        let why = "connection failed since 2026-12-03T18:50:43Z, phase 1 of 3: complete disallow \
                   (next attempt at 2026-12-03T18:51:37Z)";
        let mut p = Progress {
            queued: 1,
            seconds: 5.0,
            hosts_blocked: 1,
            first_blocked: Some(("http://127.0.0.1:1".into(), why.into())),
            ..Progress::default()
        };
        assert_eq!(
            progress_line(&p),
            format!(
                "0 pages, 0.0 pages/s, 0 KiB, 0 in flight, 1 queued, robots.txt unavailable: 1, \
                 0 errors; http://127.0.0.1:1/robots.txt: {why}"
            )
        );
        // Busy, the line keeps to its counts.
        p.in_flight = 3;
        assert!(
            !progress_line(&p).contains("127.0.0.1"),
            "{}",
            progress_line(&p)
        );
    }
}
