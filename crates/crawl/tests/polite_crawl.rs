//! A crawl of a small simulated web on 127.0.0.1, judged from the server's
//! own request log: robots.txt first on every origin, nothing disallowed
//! requested, nothing but robots.txt from a host whose robots.txt answers
//! 503, one request in flight per host, start-to-start gaps of at least
//! the host's delay, Retry-After honoured, redirects followed, nofollow
//! obeyed, and every response in the WARC files.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use mannerly_audit::{
    audit_logs, judge, Catalogue, Expect, LogSource, Options, RobotsBook, Seen, Unchecked,
};
use mannerly_crawl::{crawl, CrawlConfig, Ending};
use mannerly_testweb::{HostSpec, Reply, TestWeb, WebConfig, ACCESS_LOG_FORMAT};

fn html(body: &str) -> Reply {
    Reply::text(body).header("Content-Type", "text/html")
}

/// Server-side clock jitter allowed on a start-to-start gap.
const JITTER: Duration = Duration::from_millis(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_polite_crawl_of_a_small_web() {
    let mut config = WebConfig::default();
    config.hosts.insert(
        "b.test".into(),
        HostSpec::default().route("/robots.txt", vec![Reply::status(503)]),
    );
    config.hosts.insert(
        "c.test".into(),
        HostSpec::default()
            .robots("User-agent: *\nAllow: /\n")
            .route(
                "/",
                vec![
                    Reply::status(429).header("Retry-After", "1"),
                    html(r#"<a href="/x">x</a>"#),
                ],
            )
            .route("/x", vec![html("x")]),
    );
    let web = TestWeb::start(config).await.expect("testweb");
    let port = web.port();
    // d.test's robots.txt redirects to c.test's: a request to c.test,
    // held to c.test's slot and delay like any other.
    web.set_host(
        "d.test",
        HostSpec::default().route(
            "/robots.txt",
            vec![Reply::redirect(301, web.url("c.test", "/robots.txt"))],
        ),
    );
    // a.test's links name the port the web listens on.
    web.set_host(
        "a.test",
        HostSpec::default()
            .robots(format!(
                "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.3\nContent-Usage: train-ai=n\nSitemap: http://a.test:{port}/sitemap.xml\n"
            ))
            .route(
                "/sitemap.xml",
                vec![Reply::text(format!(
                    "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://a.test:{port}/from-sitemap</loc><lastmod>2026-11-01</lastmod></url></urlset>"
                ))
                .header("Content-Type", "application/xml")],
            )
            .route("/from-sitemap", vec![html("<p>listed</p>")])
            .route(
                "/big",
                vec![Reply::body(mannerly_testweb::Body::Huge {
                    bytes: 200_000,
                    line: "0123456789abcdef\n".into(),
                })
                .header("Content-Type", "text/plain")],
            )
            .route(
                "/",
                vec![html(&format!(
                    r#"<a href="/one">1</a> <a href="/private/secret">no</a>
                       <a href="/nofollow">nf</a> <a href="/moved">r</a>
                       <a href="/loop1">loop</a> <a rel="nofollow" href="/relnf">rel</a> <a href="/big">big</a>
                       <a href="/picture">not a wanted type</a>
                       <a href="http://c.test:{port}/">c</a> <a href="http://b.test:{port}/">b</a>
                       <a href="http://elsewhere.test:{port}/">out of scope</a>"#
                ))],
            )
            .route(
                "/one",
                vec![html("<p>one</p>").header("Content-Usage", "train-ai=n, search=y")],
            )
            .route(
                "/nofollow",
                vec![html(
                    r#"<meta name="robots" content="nofollow"><a href="/never">never</a>"#,
                )],
            )
            .route("/moved", vec![Reply::redirect(301, "/one?from=moved")])
            .route("/one?from=moved", vec![html("<p>moved here</p>")])
            .route(
                "/picture",
                vec![Reply::text("not really a PNG").header("Content-Type", "image/png")],
            )
            .route("/loop1", vec![Reply::redirect(302, "/loop2")])
            .route("/loop2", vec![Reply::redirect(302, "/loop1")]),
    );
    let resolver = web.resolver();
    let ca = reqwest::Certificate::from_der(&web.ca_der()).expect("CA");
    let out = tempfile::tempdir().expect("tempdir");
    let crawl_config = CrawlConfig {
        min_delay: Duration::from_millis(100),
        give_up_after: Duration::from_secs(5),
        concurrency: 8,
        max_bytes: 10_000,
        content_types: vec!["text/html".into(), "text/*".into()],
        client_hook: Some(Arc::new(move |b: reqwest::ClientBuilder| {
            b.dns_resolver(resolver.clone())
                .add_root_certificate(ca.clone())
        })),
        ..CrawlConfig::default()
    };
    let seeds = vec![
        web.url("a.test", "/"),
        web.url("b.test", "/"),
        web.url("c.test", "/"),
        web.url("d.test", "/"),
    ];
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let summary = tokio::time::timeout(
        Duration::from_secs(60),
        crawl(crawl_config, seeds, out.path(), stop, |_| {}),
    )
    .await
    .expect("the crawl ends")
    .expect("crawl");
    eprintln!("{summary:?}");
    let requests = web.requests();
    let mut by_host: HashMap<String, Vec<_>> = HashMap::new();
    for r in &requests {
        by_host.entry(r.host.clone()).or_default().push(r.clone());
    }
    // Politeness, judged as `mannerly demo` judges: the rules a log shows
    // by `mannerly audit`'s code from the server's access log (a.test's
    // Crawl-delay, 100 ms for the others, Retry-After as sent), and what
    // only the server knows from its records.
    let log = out.path().join("access.log");
    std::fs::write(&log, web.access_log()).expect("access log");
    let mut book = RobotsBook::new();
    for (host, spec) in [
        ("a.test", web.host("a.test")),
        ("c.test", web.host("c.test")),
    ] {
        let robots = spec.and_then(|s| s.served_robots()).unwrap_or_default();
        book.add(Some(host), None, host.into(), robots.as_bytes());
    }
    let options = Options {
        retry_after: Duration::ZERO,
        min_gap: Some(Duration::from_millis(100)),
        slack: JITTER,
        from_start: true,
        ..Options::default()
    };
    let source = LogSource {
        path: log.display().to_string(),
        format: None,
        layout: Some(mannerly_audit::Layout::Nginx(ACCESS_LOG_FORMAT.into())),
    };
    let audit = audit_logs(
        &[source],
        &book,
        Catalogue::builtin(),
        options,
        &mut Unchecked,
    )
    .expect("the audit reads the log");
    assert_eq!(audit.violations(), 0, "{:#?}", audit.bots);
    assert_eq!(audit.unparsed, 0);
    let a_test = audit.bots[0]
        .hosts
        .iter()
        .find(|h| h.host == "a.test")
        .expect("a.test");
    assert_eq!(
        a_test.crawl_delay,
        Some(0.3),
        "a.test's Crawl-delay is judged"
    );
    let seen: Vec<Seen> = requests
        .iter()
        .map(|r| Seen {
            host: r.host.clone(),
            path: r.path.clone(),
            started: r.started,
        })
        .collect();
    let expect = |host: &str| Expect {
        nofollow: match host {
            "a.test" => vec!["/never".into(), "/relnf".into()],
            _ => Vec::new(),
        },
        ..Expect::default()
    };
    let server = judge(&seen, expect, |h| web.max_in_flight(h));
    assert_eq!(server.violations(), 0, "{server:?}");
    let paths = |h: &str| -> Vec<String> {
        by_host
            .get(h)
            .map(|v| v.iter().map(|r| r.path.clone()).collect())
            .unwrap_or_default()
    };
    let a = paths("a.test");
    assert!(
        a.contains(&"/one?from=moved".to_owned()),
        "the redirect was followed: {a:?}"
    );
    assert!(
        a.contains(&"/loop2".to_owned()) && a.iter().filter(|p| *p == "/loop1").count() == 1,
        "the loop ends: {a:?}"
    );
    assert!(
        !by_host.contains_key("elsewhere.test"),
        "out of scope was fetched"
    );
    // robots.txt's Sitemap line: the sitemap is fetched, its page too.
    assert!(
        a.contains(&"/sitemap.xml".to_owned()) && a.contains(&"/from-sitemap".to_owned()),
        "{a:?}"
    );
    assert_eq!(summary.sitemap_entries, 1);
    assert_eq!(
        paths("b.test"),
        ["/robots.txt"],
        "b.test's robots.txt is unavailable: nothing else"
    );
    // c.test: one retry of the 429 (its Retry-After is judged above).
    let c: Vec<_> = by_host["c.test"].iter().filter(|r| r.path == "/").collect();
    assert_eq!(c.len(), 2, "one retry of the 429");
    assert!(paths("c.test").contains(&"/x".to_owned()));
    assert_eq!(
        summary.ending,
        Ending::GaveUp,
        "b.test's page waits for its robots.txt: {summary:?}"
    );
    assert!(summary.deferred >= 1);
    assert!(
        summary.unavailable.keys().any(|o| o.contains("b.test")),
        "{summary:?}"
    );
    // Every request's response is in the WARC files (read once, decoded).
    let mut warc_text = String::new();
    for e in std::fs::read_dir(out.path().join("warc")).expect("warc dir") {
        let mut bytes = Vec::new();
        flate2::read::MultiGzDecoder::new(
            std::fs::File::open(e.expect("entry").path()).expect("file"),
        )
        .read_to_end(&mut bytes)
        .expect("gzip");
        warc_text.push_str(&String::from_utf8_lossy(&bytes));
    }
    let responses = warc_text.matches("WARC-Type: response").count();
    // b.test's robots.txt 503 is archived too; nothing unanswered was
    // sent; only /picture (image/png, not among the content types) is
    // not stored.
    assert!(a.contains(&"/picture".to_owned()));
    assert_eq!(responses, requests.len() - 1, "{summary:?}");
    assert!(!warc_text.contains("not really a PNG"));
    assert_eq!(summary.skipped.get("content-type"), Some(&1), "{summary:?}");
    // c.test's robots.txt was asked for twice: once as its own, once at
    // the end of d.test's redirect (the gap check above held for both).
    assert_eq!(web.count("c.test", "/robots.txt"), 2);
    // The body over the cap is cut, stored, and marked truncated.
    let truncated = warc_text.matches("WARC-Truncated: length").count();
    assert_eq!(
        truncated, 1,
        "the 200,000-byte body over the 10,000-byte cap"
    );
    // The crawl's WARC files read back with warcio, digests verified
    // (`.ci/run` provides MANNERLY_PYTHON; elsewhere this part is skipped).
    mannerly_testsupport::warcio_check(&out.path().join("warc"));
    let log = std::fs::read_to_string(out.path().join("log.jsonl")).expect("log");
    // AIPREF: the header and the robots.txt rule are recorded per page.
    let one = log
        .lines()
        .find(|l| l.contains("\"url\":\"http://a.test") && l.contains("/one\""))
        .expect("/one logged");
    assert!(
        one.contains("\"content_usage\":\"train-ai=n, search=y\""),
        "{one}"
    );
    assert!(
        one.contains(
            "\"content_usage_rule\":\"train-ai=n, ai-use=unknown, search=unknown (line 4)\""
        ),
        "{one}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("\"disallowed: robots.txt line 2")),
        "{log}"
    );
    for line in log.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("one JSON document per line");
    }
    // The sitemap entry's lastmod is kept.
    assert!(
        log.lines().any(|l| l.contains("\"kind\":\"sitemap-entry\"")
            && l.contains("/from-sitemap\"")
            && l.contains("\"lastmod\":\"2026-11-01\"")),
        "{log}"
    );
    // The URL the crawl gave up on is logged with what holds it back.
    let deferred = log
        .lines()
        .find(|l| l.contains("\"kind\":\"deferred\""))
        .expect("a deferred line");
    assert!(
        deferred.contains("b.test") && deferred.contains("robots.txt"),
        "{deferred}"
    );
    assert_eq!(
        summary.deferred_by_reason.get("robots.txt unavailable"),
        Some(&summary.deferred),
        "{summary:?}"
    );
    assert!(
        log.contains("image/png is not among --content-types"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_bounds_hold_and_survive_a_resume() {
    let mut config = WebConfig::default();
    config.hosts.insert(
        "many.test".into(),
        HostSpec::default().robots("User-agent: *\n").pages(20, 5),
    );
    let web = TestWeb::start(config).await.expect("testweb");
    let resolver = web.resolver();
    let out = tempfile::tempdir().expect("tempdir");
    let run = |max: u64| {
        let resolver = resolver.clone();
        CrawlConfig {
            min_delay: Duration::from_millis(20),
            max_pages_per_host: Some(max),
            client_hook: Some(Arc::new(move |b: reqwest::ClientBuilder| {
                b.dns_resolver(resolver.clone())
            })),
            ..CrawlConfig::default()
        }
    };
    let seeds = vec![web.url("many.test", "/")];
    let (_tx, stop) = tokio::sync::watch::channel(false);
    let first = crawl(run(3), seeds, out.path(), stop.clone(), |_| {})
        .await
        .expect("crawl");
    let pages = |web: &TestWeb| {
        web.requests()
            .iter()
            .filter(|r| r.path != "/robots.txt")
            .count()
    };
    assert_eq!(pages(&web), 3, "{first:?}");
    assert!(first
        .skipped
        .get("max-pages-per-host")
        .is_some_and(|n| *n > 0));
    // Pages over the bound are done, not queued. A resume counts what the
    // log says was fetched: a new URL of the host stays over a bound of 3,
    // and goes under a bound of 4.
    let _ = crawl(
        run(3),
        &[web.url("many.test", "/extra")],
        out.path(),
        stop.clone(),
        |_| {},
    )
    .await
    .expect("resume");
    assert_eq!(pages(&web), 3);
    let _ = crawl(
        run(4),
        &[web.url("many.test", "/extra2")],
        out.path(),
        stop,
        |_| {},
    )
    .await
    .expect("resume");
    assert_eq!(pages(&web), 4);
    assert!(web.requests().iter().any(|r| r.path == "/extra2"));
}

/// With `open_hosts: 2`, the server never sees a third host begin before
/// one of two in progress has had its last request answered; every page is
/// still fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_keeps_at_most_its_bound_of_hosts_in_progress() {
    let mut config = WebConfig::default();
    let hosts: Vec<String> = (0..6).map(|i| format!("h{i}.test")).collect();
    for h in &hosts {
        config.hosts.insert(
            h.clone(),
            HostSpec::default().robots("User-agent: *\n").pages(3, 2),
        );
    }
    let web = TestWeb::start(config).await.expect("testweb");
    let resolver = web.resolver();
    let out = tempfile::tempdir().expect("tempdir");
    let config = CrawlConfig {
        min_delay: Duration::from_millis(20),
        open_hosts: Some(2),
        client_hook: Some(Arc::new(move |b: reqwest::ClientBuilder| {
            b.dns_resolver(resolver.clone())
        })),
        ..CrawlConfig::default()
    };
    let seeds: Vec<String> = hosts.iter().map(|h| web.url(h, "/")).collect();
    let (_tx, stop) = tokio::sync::watch::channel(false);
    let summary = crawl(config, seeds, out.path(), stop, |_| {})
        .await
        .expect("crawl");
    let log = web.requests();
    // Each host's span: its first request's start to its last answer.
    let mut span: HashMap<&str, (Duration, Duration)> = HashMap::new();
    for r in &log {
        let end = r.finished.unwrap_or(r.started);
        let e = span.entry(r.host.as_str()).or_insert((r.started, end));
        e.0 = e.0.min(r.started);
        e.1 = e.1.max(end);
    }
    assert_eq!(span.len(), 6, "every host was crawled: {summary:?}");
    for r in &log {
        let open = span
            .values()
            .filter(|(a, b)| *a <= r.started && r.started <= *b)
            .count();
        assert!(
            open <= 2,
            "{open} hosts in progress when {} {} began",
            r.host,
            r.path
        );
    }
    let pages = log.iter().filter(|r| r.path != "/robots.txt").count();
    // The root and its three generated pages on each host.
    assert_eq!(pages, 6 * 4, "{summary:?}");
}

/// A crawl refused before it starts (a pattern that does not compile, no
/// usable seed) leaves its directory without a record of itself: a crawl
/// started there next, with other options, is a fresh one, not a resume
/// held to the refused options.
#[tokio::test]
async fn a_crawl_refused_at_its_start_leaves_no_record() {
    let out = tempfile::tempdir().expect("tempdir");
    let dir = out.path().join("crawl");
    let (_tx, stop) = tokio::sync::watch::channel(false);
    let refused = [
        (
            CrawlConfig {
                include: vec!["([".into()],
                ..CrawlConfig::default()
            },
            "http://a.test/",
        ),
        (CrawlConfig::default(), "ftp://a.test/"),
    ];
    for (config, seed) in refused {
        let err = crawl(config, [seed.to_owned()], &dir, stop.clone(), |_| {})
            .await
            .expect_err("refused");
        let text = err.to_string();
        assert!(
            text.contains("--include or --exclude") || text.contains("no usable seed"),
            "{text}"
        );
        assert!(!dir.join("crawl.json").exists(), "{seed}: {text}");
    }
}
