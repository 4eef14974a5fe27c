//! `mannerly demo`: a simulated web of a few hundred hosts on 127.0.0.1,
//! crawled (by this crawler, or by another with `--external`), then audited
//! from the server's own access log by `mannerly audit`'s code.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::demo_audit::DemoAudit as Report;
use anyhow::{bail, Context, Result};
use mannerly_crawl::{CrawlConfig, CrawlDir};
use mannerly_testweb::{
    Generated, HostSpec, Reply, SitemapLastmod, TestWeb, Validators, WebConfig,
};

use crate::crawl::{report, run_crawl};

#[derive(clap::Args)]
pub struct DemoArgs {
    /// Generated hosts.
    #[arg(long, default_value_t = 300)]
    hosts: u32,
    /// Pages of each generated host (linked four to a page; one of them,
    /// /p7.html, disallowed by its robots.txt).
    #[arg(long, value_name = "N", default_value_t = 9, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pages: u32,
    /// Where the demo crawl's output goes [default: a temporary directory].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Seconds between requests to a host.
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = crate::crawl::delay_seconds, allow_hyphen_values = true)]
    min_delay: f64,
    /// Requests in flight across all hosts.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    concurrency: usize,
    /// Print the audit as one JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// Also serve the crawl's Prometheus metrics here while it runs
    /// (they are written to OUT/metrics.prom at the end in any case).
    #[arg(long, value_name = "ADDR:PORT")]
    metrics: Option<String>,
    /// Then change one page in nine, recrawl the web into OUT/recrawl
    /// (validators, sitemap lastmod, WARC revisit records) and audit that
    /// too.
    #[arg(long, conflicts_with = "external")]
    recrawl: bool,
    /// After `--`: audit another crawler instead. The command runs against
    /// the simulated web and is judged from the server's log. It gets
    /// MANNERLY_DEMO_PROXY (the HTTP proxy to use), MANNERLY_DEMO_SEEDS (a
    /// file of seed URLs), MANNERLY_DEMO_DELAY (seconds), and
    /// MANNERLY_DEMO_CONCURRENCY; its CPU time and peak RSS are measured
    /// (Linux, sampled from /proc every 20 ms).
    #[arg(value_name = "CMD", num_args = 1.., last = true)]
    external: Vec<String>,
}

/// `mannerly demo`: a simulated web on 127.0.0.1, crawled politely, then
/// audited from the server's own log.
pub fn demo(args: DemoArgs) -> Result<u8> {
    let out = out_dir(&args)?;
    crate::crawl::raise_open_file_limit();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let scripted = scripted_hosts();
        let web = start_web(&args, &scripted).await?;
        let port = web.port();
        // testweb is also the crawl's HTTP proxy, so every host keeps its
        // plain name (`http://site3.test/`), as on the real web.
        let mut seeds: Vec<String> = (0..args.hosts)
            .map(|i| format!("http://site{i}.test/"))
            .collect();
        seeds.extend(scripted.iter().map(|(n, _, _)| format!("http://{n}/")));
        let (stopped, usage) = if args.external.is_empty() {
            (crawl_ours(&args, &web, seeds, &out, None).await?, None)
        } else {
            (false, Some(crawl_theirs(&args, port, &seeds, &out).await?))
        };
        let hosts: Vec<(&str, HostSpec)> = scripted
            .iter()
            .map(|(n, spec, _)| (*n, spec.clone()))
            .collect();
        let names: Vec<String> = (0..args.hosts).map(|i| format!("site{i}.test")).collect();
        let book = crate::demo_audit::robots_book(&generated_robots(&args), &names, &hosts, &out)?;
        let audit = crate::demo_audit::audit(&web, &book, args.min_delay, &out)?;
        let evidence = match args.external.is_empty() {
            true => crate::demo_evidence::check(&out, &book)?,
            false => None,
        };
        let problems = evidence.as_ref().map_or(0, |e| e.problems());
        // A crawler that failed made only some of its requests: a clean
        // audit of them is not a clean crawl.
        let failed = usage.as_ref().is_some_and(|u| u.exit != Some(0));
        if args.json {
            let mut v = json_report(&audit, usage.as_ref());
            v["evidence"] = crate::demo_evidence::json(evidence.as_ref());
            println!("{v}");
            return anyhow::Ok(u8::from(audit.violations() + problems > 0 || failed));
        }
        print_report(&args, &audit, usage.as_ref());
        crate::demo_evidence::print(evidence.as_ref());
        if failed {
            eprintln!("mannerly: the crawler did not end well, so the audit judged only the requests it made before");
        }
        let mut violations = audit.violations() + problems + u64::from(failed);
        if args.recrawl && !stopped {
            violations += recrawl(&args, &web, &book, &out).await?;
        }
        anyhow::Ok(if violations > 0 {
            1
        } else if stopped {
            130
        } else {
            0
        })
    })
}

/// Where the demo's crawl goes: `--out`, unless it holds an earlier crawl
/// (the demo would take it up where it stopped, and find nothing left to
/// fetch), or a new temporary directory.
fn out_dir(args: &DemoArgs) -> Result<PathBuf> {
    match &args.out {
        Some(o)
            if args.external.is_empty()
                && (CrawlDir::new(o).settings().exists() || CrawlDir::new(o).has_frontier()) =>
        {
            bail!(
                "--out {}: the directory holds an earlier crawl; the demo crawls into a new \
                 one (or `mannerly crawl --resume {}` takes that one up)",
                o.display(),
                o.display()
            )
        }
        Some(o) => Ok(o.clone()),
        // A new directory each time, kept for the WARC and the log: one
        // named after the process id alone was sometimes an earlier run's
        // (ids are reused), and the demo then fetched nothing.
        None => Ok(tempfile::Builder::new()
            .prefix("mannerly-demo-")
            .tempdir()
            .context("cannot create a temporary directory for the demo's crawl")?
            .keep()),
    }
}

/// The robots.txt of every generated host.
const GENERATED_ROBOTS: &str = "User-agent: *\nDisallow: /p7.html\n";

/// The generated hosts' robots.txt as served (`{host}` stands for each
/// host's name): for a recrawl, the same rules and a sitemap whose lastmod
/// the recrawl goes by.
fn generated_robots(args: &DemoArgs) -> String {
    match args.recrawl {
        true => format!("{GENERATED_ROBOTS}Sitemap: http://{{host}}/sitemap.xml\n"),
        false => GENERATED_ROBOTS.into(),
    }
}

/// The hosts with quirks: name, what it serves, and what to say of it.
fn scripted_hosts() -> Vec<(&'static str, HostSpec, &'static str)> {
    vec![
        (
            "down.test",
            HostSpec::default().route("/robots.txt", vec![Reply::status(503)]),
            "robots.txt answers 503",
        ),
        (
            "busy.test",
            HostSpec::default().route(
                "/robots.txt",
                vec![Reply::status(429).header("Retry-After", "3600")],
            ),
            "robots.txt answers 429",
        ),
        (
            "gone.test",
            HostSpec::default()
                .route("/robots.txt", vec![Reply::status(404)])
                .pages(4, 2),
            "no robots.txt (404)",
        ),
        (
            "slowpoke.test",
            HostSpec::default()
                .robots("User-agent: *\nCrawl-delay: 2\n")
                .pages(4, 2),
            "Crawl-delay: 2",
        ),
        (
            "glacial.test",
            HostSpec::default()
                .robots("User-agent: *\nCrawl-delay: 120\n")
                .pages(4, 2),
            "Crawl-delay: 120 (over the 30 s maximum: skipped, its URLs logged)",
        ),
        (
            "storm.test",
            HostSpec::default()
                .robots("User-agent: *\nAllow: /\n")
                .route(
                    "/",
                    vec![
                        Reply::status(429).header("Retry-After", "2"),
                        Reply::status(429).header("Retry-After", "1"),
                        Reply::text("<a href=/p1.html>p1</a>").header("Content-Type", "text/html"),
                    ],
                )
                .pages(3, 2),
            "429 storm with Retry-After",
        ),
        (
            "loop.test",
            HostSpec::default()
                .robots("User-agent: *\n")
                .route("/", vec![Reply::redirect(302, "/a")])
                .route("/a", vec![Reply::redirect(302, "/b")])
                .route("/b", vec![Reply::redirect(302, "/a")]),
            "redirect loop",
        ),
        (
            "hop.test",
            HostSpec::default()
                .route(
                    "/robots.txt",
                    vec![Reply::redirect(301, "/real-robots.txt")],
                )
                .route(
                    "/real-robots.txt",
                    vec![Reply::text("User-agent: *\nDisallow: /p2.html\n")],
                )
                .pages(4, 3),
            "robots.txt redirects",
        ),
        (
            "nofollow.test",
            HostSpec::default()
                .robots("User-agent: *\n")
                .route(
                    "/",
                    vec![Reply::text(
                        "<a href=/stop.html>stop</a> <a rel=nofollow href=/sponsored.html>ad</a>",
                    )
                    .header("Content-Type", "text/html")],
                )
                .route(
                    "/stop.html",
                    vec![Reply::text(
                        "<meta name=robots content=nofollow><a href=/never.html>never</a>",
                    )
                    .header("Content-Type", "text/html")],
                ),
            "nofollow page and rel=nofollow link",
        ),
        (
            "slow.test",
            HostSpec {
                latency_ms: 800,
                ..HostSpec::default().robots("User-agent: *\n").pages(3, 2)
            },
            "slow host (800 ms)",
        ),
    ]
}

/// Starts the simulated web: the generated hosts and the scripted ones.
async fn start_web(
    args: &DemoArgs,
    scripted: &[(&'static str, HostSpec, &'static str)],
) -> Result<TestWeb> {
    let mut web_config = WebConfig {
        generated: Generated {
            prefix: "site".into(),
            suffix: ".test".into(),
            count: args.hosts,
            robots: generated_robots(args),
            pages_per_host: args.pages,
            links_per_page: 4,
            cross_host_links: 1,
            validators: Validators::ETag,
            sitemap: match args.recrawl {
                true => SitemapLastmod::Honest,
                false => SitemapLastmod::None,
            },
            ..Generated::default()
        },
        ..WebConfig::default()
    };
    for (name, spec, _) in scripted {
        web_config.hosts.insert((*name).to_owned(), spec.clone());
    }
    let web = TestWeb::start(web_config).await?;
    eprintln!(
        "demo: a simulated web on 127.0.0.1:{}: {} generated hosts and {} with quirks:",
        web.port(),
        args.hosts,
        scripted.len()
    );
    for (n, _, what) in scripted {
        eprintln!("  {n}: {what}");
    }
    Ok(web)
}

/// Changes one page in nine of every generated host, recrawls the web
/// into `out/recrawl` and audits it; its violations.
async fn recrawl(
    args: &DemoArgs,
    web: &TestWeb,
    book: &mannerly_audit::RobotsBook,
    out: &std::path::Path,
) -> Result<u64> {
    for i in 0..args.hosts {
        for p in (1..args.pages).step_by(9) {
            web.change(&format!("site{i}.test"), &format!("/p{p}.html"));
        }
    }
    web.clear_records();
    let prior = Arc::new(mannerly_crawl::Prior::load(
        &mannerly_crawl::CrawlDir::new(out),
    )?);
    let mut seeds: Vec<String> = prior.pages().map(|p| p.url.clone()).collect();
    seeds.sort_unstable();
    let again = out.join("recrawl");
    println!(
        "\nrecrawl of the same web, one page in nine changed ({}):",
        again.display()
    );
    crawl_ours(args, web, seeds, &again, Some(prior)).await?;
    let audit = crate::demo_audit::audit(web, book, args.min_delay, &again)?;
    print_report(args, &audit, None);
    Ok(audit.violations())
}

/// Crawls the simulated web with mannerly (revisiting an earlier crawl's
/// pages when given them); whether it was stopped.
async fn crawl_ours(
    args: &DemoArgs,
    web: &TestWeb,
    seeds: Vec<String>,
    out: &std::path::Path,
    prior: Option<Arc<mannerly_crawl::Prior>>,
) -> Result<bool> {
    let ca = reqwest::Certificate::from_der(&web.ca_der()).context("the test CA")?;
    let mut config = CrawlConfig {
        min_delay: Duration::from_secs_f64(args.min_delay),
        concurrency: args.concurrency,
        give_up_after: Duration::from_secs(20),
        proxy: Some(format!("http://127.0.0.1:{}", web.port())),
        client_hook: Some(Arc::new(move |b: reqwest::ClientBuilder| {
            b.add_root_certificate(ca.clone())
        })),
        prior,
        ..CrawlConfig::default()
    };
    let metrics = crate::crawl::metrics(args.metrics.as_deref(), &mut config).await?;
    let (summary, stopped) = run_crawl(config, seeds, out).await?;
    if !args.json {
        report(&summary, &CrawlDir::new(out), false, &[])?;
    }
    let file = out.join("metrics.prom");
    metrics
        .registry()
        .write_textfile(&file)
        .with_context(|| format!("cannot write {}", file.display()))?;
    if !args.json {
        println!(
            "metrics: {} ({} series, {} requests counted)",
            file.display(),
            metrics.registry().series(),
            metrics.requests_sent()
        );
    }
    Ok(stopped)
}

/// Runs the command given after `--` against the simulated web.
async fn crawl_theirs(
    args: &DemoArgs,
    port: u16,
    seeds: &[String],
    out: &std::path::Path,
) -> Result<Usage> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let seeds_file = out.join("seeds.txt");
    std::fs::write(&seeds_file, seeds.join("\n") + "\n")
        .with_context(|| format!("cannot write {}", seeds_file.display()))?;
    let env = [
        ("MANNERLY_DEMO_PROXY", format!("http://127.0.0.1:{port}")),
        ("MANNERLY_DEMO_SEEDS", seeds_file.display().to_string()),
        ("MANNERLY_DEMO_DELAY", args.min_delay.to_string()),
        ("MANNERLY_DEMO_CONCURRENCY", args.concurrency.to_string()),
    ];
    run_external(&args.external, &env).await
}

/// The audit as one JSON document.
fn json_report(audit: &Report, usage: Option<&Usage>) -> serde_json::Value {
    let mut v = serde_json::json!({
        "requests": audit.server.requests,
        "pages": audit.server.pages,
        "distinct_pages": audit.server.distinct_pages,
        "hosts_concurrent": audit.server.concurrent,
        "too_soon": audit.too_soon,
        "too_soon_by_over_100ms": audit.too_soon_far,
        "retry_after_ignored": audit.retry_after,
        "disallowed": audit.disallowed,
        "robots_not_first": audit.robots_not_first,
        "pages_while_robots_unavailable": audit.unavailable_pages,
        "nofollow_followed": audit.server.nofollow,
        "refetched": audit.server.refetched,
        "violations": audit.violations(),
        "examples": audit.examples,
    });
    if let Some(u) = usage {
        v["external"] = serde_json::json!({
            "exit": u.exit,
            "seconds": u.seconds,
            "cpu_seconds": u.cpu_seconds,
            "peak_rss_kib": u.peak_rss_kib,
            "pages_per_cpu_second": audit.server.pages as f64 / u.cpu_seconds.max(0.001),
        });
    }
    v
}

/// The audit for people.
fn print_report(args: &DemoArgs, audit: &Report, usage: Option<&Usage>) {
    if let Some(u) = usage {
        println!(
            "external crawler ({}): exit {}, {:.1} s, {:.2} CPU s, peak RSS {} MiB, {} pages ({:.0} pages per CPU second)",
            args.external.join(" "),
            u.exit.map_or("by a signal".to_owned(), |c| c.to_string()),
            u.seconds,
            u.cpu_seconds,
            u.peak_rss_kib / 1024,
            audit.server.pages,
            audit.server.pages as f64 / u.cpu_seconds.max(0.001)
        );
    }
    let lines = [
        (
            "hosts with more than one request in flight",
            audit.server.concurrent.to_string(),
        ),
        (
            "requests sooner than the host's delay after the previous one",
            format!(
                "{} ({} by more than 100 ms)",
                audit.too_soon, audit.too_soon_far
            ),
        ),
        (
            "requests sooner than the server's Retry-After allowed",
            audit.retry_after.to_string(),
        ),
        (
            "requests to paths robots.txt disallows",
            audit.disallowed.to_string(),
        ),
        (
            "hosts whose first request was not robots.txt",
            audit.robots_not_first.to_string(),
        ),
        (
            "page requests to hosts whose robots.txt was unavailable",
            audit.unavailable_pages.to_string(),
        ),
        (
            "requests to links of a nofollow page or rel=nofollow links",
            audit.server.nofollow.to_string(),
        ),
        ("violations", audit.violations().to_string()),
    ];
    println!(
        "politeness audit (from the server's own request log, {} requests):",
        audit.server.requests
    );
    for (what, n) in lines {
        println!("  {what}: {n}");
    }
    for e in &audit.examples {
        println!("    {e}");
    }
}

/// What an external crawler cost.
struct Usage {
    exit: Option<i32>,
    seconds: f64,
    cpu_seconds: f64,
    peak_rss_kib: u64,
}

/// Runs `cmd` with `env` added, sampling the CPU time and resident
/// memory of it and every process it starts (a wrapper script's crawler
/// included) from /proc until it exits; its CPU time then comes from the
/// kernel's own count of it, to the microsecond.
async fn run_external(cmd: &[String], env: &[(&str, String)]) -> Result<Usage> {
    let (program, rest) = cmd.split_first().context("no command after --")?;
    let waited_before = mannerly_metrics::process::waited_children_cpu_seconds();
    let started = std::time::Instant::now();
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .spawn()
        .with_context(|| format!("cannot run '{program}'"))?;
    let pid = child.id().context("the command after -- ended at once")?;
    let (mut cpu, mut rss) = (0.0, 0);
    let status = loop {
        if let Some(u) = mannerly_metrics::process::tree_usage(pid) {
            cpu = f64::max(cpu, u.cpu_seconds);
            rss = rss.max(u.rss_bytes.max(u.peak_rss_bytes) / 1024);
        }
        tokio::select! {
            status = child.wait() => break status.context("waiting for the command after --")?,
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    };
    // Once it is waited for, its CPU time (and that of what it waited
    // for) is known exactly; the samples stay for a child whose own
    // children outlived it unwaited.
    if let (Some(before), Some(after)) = (
        waited_before,
        mannerly_metrics::process::waited_children_cpu_seconds(),
    ) {
        cpu = f64::max(cpu, after - before);
    }
    Ok(Usage {
        exit: status.code(),
        seconds: started.elapsed().as_secs_f64(),
        cpu_seconds: cpu,
        peak_rss_kib: rss,
    })
}
