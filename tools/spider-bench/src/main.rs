//! spider-rs crawling the demo's web as its documentation advises for a
//! polite crawl: robots.txt respected, a delay between requests, the
//! demo's proxy. One `Website` per seed host (spider crawls one site per
//! `Website`), at most `MANNERLY_DEMO_CONCURRENCY` sites at once.
//!
//! Run by `tools/spider-bench/run.sh` through `mannerly demo -- ...`,
//! which sets the `MANNERLY_DEMO_*` variables.

use std::sync::Arc;
use std::time::Duration;

use spider::website::Website;
use tokio::sync::Semaphore;

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is not set (run me under `mannerly demo --`)"))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let proxy = env("MANNERLY_DEMO_PROXY")?;
    let seeds_file = env("MANNERLY_DEMO_SEEDS")?;
    let delay: f64 = env("MANNERLY_DEMO_DELAY")?
        .parse()
        .map_err(|e| format!("MANNERLY_DEMO_DELAY: {e}"))?;
    let concurrency: usize = env("MANNERLY_DEMO_CONCURRENCY")?
        .parse()
        .map_err(|e| format!("MANNERLY_DEMO_CONCURRENCY: {e}"))?;
    let seeds = std::fs::read_to_string(&seeds_file).map_err(|e| format!("{seeds_file}: {e}"))?;
    let delay_ms = Duration::from_secs_f64(delay).as_millis() as u64;
    let slots = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut tasks = Vec::new();
    for seed in seeds.lines().map(str::trim).filter(|s| !s.is_empty()) {
        let (seed, proxy, slots) = (seed.to_owned(), proxy.clone(), slots.clone());
        tasks.push(tokio::spawn(async move {
            let _slot = slots.acquire().await.ok()?;
            let mut site = Website::new(&seed)
                .with_respect_robots_txt(true)
                .with_delay(delay_ms)
                .with_proxies(Some(vec![proxy]))
                .with_user_agent(Some("spider-bench"))
                .build()
                .ok()?;
            site.crawl().await;
            Some(site.get_links().len())
        }));
    }
    let mut pages = 0;
    for t in tasks {
        pages += t.await.ok().flatten().unwrap_or(0);
    }
    eprintln!("spider-bench: {pages} links seen");
    Ok(())
}
