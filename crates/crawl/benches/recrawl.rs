//! What a recrawl saves: a site of 10,000 pages (100 hosts of 100, with
//! ETags and honest sitemaps) is crawled, 10 % of its pages change, and it
//! is recrawled twice (the second time each host's lastmod is established)
//! and crawled again in full, in one run. Requests and body bytes of each,
//! and the recrawls' against the full re-crawl's.
//!
//! `cargo bench -p mannerly-crawl --bench recrawl`
//! (`MANNERLY_BENCH_HOSTS`, `MANNERLY_BENCH_PAGES` to change the site)

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mannerly_crawl::{crawl, CrawlConfig, Prior, Summary};
use mannerly_testweb::{Generated, SitemapLastmod, TestWeb, Validators, WebConfig};

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Requests (robots.txt and sitemaps aside), body bytes, and requests
/// for pages the sitemap lists that had not changed, since the records
/// were cleared.
fn counted(web: &TestWeb, changed: &dyn Fn(&str, &str) -> bool) -> (usize, u64, usize) {
    let pages: Vec<_> = web
        .requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt" && r.path != "/sitemap.xml")
        .collect();
    let bytes = pages.iter().filter_map(|r| r.bytes).sum();
    let unchanged = pages
        .iter()
        .filter(|r| r.path != "/" && !changed(&r.host, &r.path))
        .count();
    (pages.len(), bytes, unchanged)
}

async fn run(web: &TestWeb, seeds: &[String], out: &Path, prior: Option<&Path>) -> Summary {
    let config = CrawlConfig {
        min_delay: Duration::ZERO,
        concurrency: 64,
        give_up_after: Duration::from_secs(2),
        proxy: Some(format!("http://127.0.0.1:{}", web.port())),
        prior: prior.map(|p| {
            Arc::new(Prior::load(&mannerly_crawl::CrawlDir::new(p)).expect("an earlier crawl"))
        }),
        ..CrawlConfig::default()
    };
    let mut seeds = seeds.to_vec();
    if let Some(p) = &config.prior {
        let mut urls: Vec<String> = p.pages().map(|s| s.url.clone()).collect();
        urls.sort_unstable();
        seeds.extend(urls);
    }
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    crawl(config, seeds, out, stop, |_| {})
        .await
        .expect("crawl")
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let hosts = env("MANNERLY_BENCH_HOSTS", 100);
    let pages = env("MANNERLY_BENCH_PAGES", 100);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let web = TestWeb::start(WebConfig {
            generated: Generated {
                prefix: "h".into(),
                suffix: ".test".into(),
                count: hosts,
                robots: "User-agent: *\nSitemap: http://{host}/sitemap.xml\n".into(),
                pages_per_host: pages,
                links_per_page: 3,
                cross_host_links: 0,
                validators: Validators::ETag,
                sitemap: SitemapLastmod::Honest,
                ..Generated::default()
            },
            ..WebConfig::default()
        })
        .await
        .expect("testweb");
        let dir = tempfile::tempdir().expect("tmp");
        let seeds: Vec<String> = (0..hosts).map(|i| format!("http://h{i}.test/")).collect();
        let tenth = (pages / 10).max(1);
        let change = |round: u32| {
            for h in 0..hosts {
                for p in 0..tenth {
                    web.change(&format!("h{h}.test"), &format!("/p{}.html", p + round * tenth));
                }
            }
        };
        let changed_in = |round: u32| {
            move |_: &str, path: &str| {
                path.strip_prefix("/p")
                    .and_then(|p| p.strip_suffix(".html"))
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(|n| n / tenth == round)
            }
        };
        let d = |n: &str| dir.path().join(n);
        web.clear_records();
        run(&web, &seeds, &d("first"), None).await;
        let first = counted(&web, &|_, _| true);
        change(0);
        web.clear_records();
        let s2 = run(&web, &[], &d("second"), Some(&d("first"))).await;
        let second = counted(&web, &changed_in(0));
        change(1);
        web.clear_records();
        let s3 = run(&web, &[], &d("third"), Some(&d("second"))).await;
        let third = counted(&web, &changed_in(1));
        web.clear_records();
        run(&web, &seeds, &d("full"), None).await;
        let full = counted(&web, &|_, _| true);
        println!("recrawl: {hosts} hosts of {pages} pages (ETag, honest sitemaps), {} % of the pages changed before each recrawl", 100 * tenth / pages);
        println!("{:<34} {:>9} {:>12} {:>26}", "", "requests", "body bytes", "unchanged listed pages asked");
        for (name, (n, b, u)) in [
            ("first crawl", first),
            ("recrawl 1 (lastmod being checked)", second),
            ("recrawl 2 (lastmod established)", third),
            ("full re-crawl", full),
        ] {
            println!("{name:<34} {n:>9} {b:>12} {u:>26}");
        }
        println!(
            "bytes against a full re-crawl's: recrawl 1 {:.1} %, recrawl 2 {:.1} % (goal: at most 15 %)",
            100.0 * second.1 as f64 / full.1.max(1) as f64,
            100.0 * third.1 as f64 / full.1.max(1) as f64
        );
        for (name, s) in [("recrawl 1", &s2), ("recrawl 2", &s3)] {
            let r = &s.revisits;
            println!(
                "{name}: {} not requested (lastmod), {} not modified, {} unchanged, {} changed, {} new",
                r.skipped_by_lastmod, r.not_modified, r.unchanged, r.changed, r.new
            );
        }
    });
}
