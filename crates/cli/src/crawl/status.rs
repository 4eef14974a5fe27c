//! `mannerly crawl --status`: what a crawl in a directory last wrote of
//! itself, or a fleet's shared state.

use std::path::Path;

use anyhow::{bail, Context, Result};
use mannerly_crawl::{CrawlDir, Status};

use super::Args;

/// `--status [DIR]`, with `--frontier URL` for a fleet.
pub(super) fn show(dir: Option<&Path>, args: &Args) -> Result<u8> {
    match (dir, &args.frontier) {
        (_, Some(url)) => fleet(url, args),
        (Some(dir), None) => local(&CrawlDir::new(dir), args.json),
        (None, None) => bail!("--status needs a crawl directory (or --frontier URL, for a fleet)"),
    }
}

/// `--status --frontier URL`: the fleet's shared state.
fn fleet(url: &str, args: &Args) -> Result<u8> {
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
fn local(dir: &CrawlDir, json: bool) -> Result<u8> {
    let Some(s) = dir.read_status()? else {
        bail!(
            "--status {}: no crawl status there (no {})",
            dir.root().display(),
            dir.status().display()
        );
    };
    if json {
        println!("{}", serde_json::to_string(&s)?);
        return Ok(0);
    }
    println!(
        "crawl in {}: {} (as of {})",
        dir.root().display(),
        state(&s),
        s.updated
    );
    println!(
        "  {} pages, {} KiB, {} in flight, {} queued, {} errors, {} retries, {:.0} s",
        s.pages,
        s.bytes / 1024,
        s.in_flight,
        s.queued,
        s.errors,
        s.retries,
        s.seconds
    );
    if !s.skipped.is_empty() {
        println!("  not fetched: {}", super::report::counts(&s.skipped));
    }
    for (origin, why) in &s.robots_unavailable {
        println!("  waiting: {origin}/robots.txt unavailable: {why}");
    }
    if !s.busiest.is_empty() {
        println!("  hosts holding the most URLs:");
    }
    for h in &s.busiest {
        let waiting = h.waiting.as_deref().map_or("may be fetched now", |w| {
            w.strip_prefix(h.host.as_str())
                .and_then(|w| w.strip_prefix(": "))
                .unwrap_or(w)
        });
        println!("    {:>8} queued  {}: {waiting}", h.queued, h.host);
    }
    Ok(0)
}

/// Running (its process is alive), stopped without finishing, or ended.
fn state(s: &Status) -> String {
    let alive = s.running && Path::new(&format!("/proc/{}", s.pid)).exists();
    if alive {
        format!("running, pid {}", s.pid)
    } else if s.running {
        "not running (it stopped without finishing: --resume it)".to_owned()
    } else {
        match s.ending {
            Some(e) => format!("ended: {}", e.as_str()),
            None => "ended".to_owned(),
        }
    }
}
