//! `mannerly crawl --metrics`: scraped while a crawl of testweb runs, every
//! scrape is accepted by `promtool check metrics` and no counter goes
//! down; OpenMetrics is served when asked for; at the end `metrics.prom`
//! counts exactly the requests testweb's own log holds. And the demo at
//! its default size exposes at most 300 series. In CI promtool must be
//! installed; elsewhere its checks say SKIPPED.

mod common;

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use mannerly_testweb::{HostSpec, Reply, TestWeb};

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");

/// Every sample of a counter or a histogram's count and buckets: what
/// must never go down.
fn monotonic(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .filter(|(name, _)| {
            name.contains("_total") || name.contains("_bucket") || name.contains("_count")
        })
        .filter_map(|(name, v)| Some((name.to_owned(), v.parse().ok()?)))
        .collect()
}

/// The sum of a family's samples in a scrape, optionally only those whose
/// labels contain `with`.
fn total(text: &str, family: &str, with: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(family) && l.contains(with))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

#[test]
fn a_crawl_scraped_while_it_runs_counts_what_the_server_saw() {
    let promtool = common::need("promtool");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let hosts: Vec<(String, HostSpec)> = (0..4)
        .map(|i| {
            let mut spec = HostSpec::default()
                .robots("User-agent: *\nDisallow: /p3.html\n")
                .pages(8, 3);
            if i == 0 {
                spec = spec.route(
                    "/p1.html",
                    vec![
                        Reply::status(503).header("Retry-After", "1"),
                        Reply::text("ok"),
                    ],
                );
            }
            (format!("m{i}.test"), spec)
        })
        .collect();
    let web = rt
        .block_on(TestWeb::with_hosts(
            hosts.iter().map(|(n, s)| (n.as_str(), s.clone())),
        ))
        .expect("testweb");
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("crawl");
    let port = common::free_port();
    let mut args: Vec<String> = (0..4).map(|i| format!("http://m{i}.test/")).collect();
    args.extend(
        [
            "--out",
            out.to_str().expect("out"),
            "--proxy",
            &format!("http://127.0.0.1:{}", web.port()),
            "--min-delay",
            "0.3",
            "--metrics",
            &format!("127.0.0.1:{port}"),
        ]
        .map(String::from),
    );
    let mut crawl = Command::new(BIN)
        .arg("crawl")
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("crawl starts");
    let mut last: HashMap<String, f64> = HashMap::new();
    let mut scrapes = 0;
    while crawl.try_wait().expect("wait").is_none() {
        if let Some(text) = common::scrape(port, "text/plain") {
            scrapes += 1;
            if promtool {
                common::promtool_accepts(&text);
            }
            let now = monotonic(&text);
            for (name, before) in &last {
                let after = now.get(name).copied().unwrap_or(0.0);
                assert!(after >= *before, "{name} went down: {before} then {after}");
            }
            last = now;
            if scrapes == 1 {
                let om = common::scrape(port, "application/openmetrics-text; version=1.0.0")
                    .expect("om");
                assert!(om.ends_with("# EOF\n"), "{om}");
                assert!(om.contains("# TYPE mannerly_requests counter"), "{om}");
            }
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    let o = crawl.wait_with_output().expect("crawl ends");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(scrapes >= 3, "scraped {scrapes} times while it ran");

    let prom = std::fs::read_to_string(out.join("metrics.prom")).expect("metrics.prom");
    if promtool {
        common::promtool_accepts(&prom);
    }
    let seen = web.requests();
    let robots = seen.iter().filter(|r| r.path == "/robots.txt").count();
    assert_eq!(
        total(&prom, "mannerly_requests_total", ""),
        seen.len() as f64,
        "{prom}"
    );
    assert_eq!(
        total(&prom, "mannerly_requests_total", "kind=\"robots\""),
        robots as f64
    );
    assert_eq!(
        total(&prom, "mannerly_requests_total", "code=\"5xx\""),
        1.0,
        "{prom}"
    );
    assert_eq!(
        total(&prom, "mannerly_retry_after_total", ""),
        1.0,
        "{prom}"
    );
    assert_eq!(
        total(&prom, "mannerly_not_fetched_total", "disallowed"),
        4.0,
        "{prom}"
    );
    assert_eq!(total(&prom, "mannerly_hosts", "done"), 4.0, "{prom}");
    let slack_min = prom
        .lines()
        .find(|l| l.starts_with("mannerly_delay_slack_seconds_bucket{le=\"-0.001\"}"))
        .and_then(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok());
    assert_eq!(
        slack_min,
        Some(0.0),
        "no request sooner than its delay: {prom}"
    );
    for (name, before) in &last {
        let after = monotonic(&prom).get(name).copied().unwrap_or(0.0);
        assert!(after >= *before, "{name} went down at the end");
    }
}

#[test]
fn the_demo_at_its_size_exposes_at_most_300_series() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("demo");
    let o = common::mannerly(
        &[
            "demo",
            "--hosts",
            "300",
            "--pages",
            "2",
            "--min-delay",
            "0.05",
            "--json",
            "--out",
            out.to_str().expect("out"),
        ],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let prom = std::fs::read_to_string(out.join("metrics.prom")).expect("metrics.prom");
    let series = prom.lines().filter(|l| !l.starts_with('#')).count();
    assert!(series <= 300, "{series} series:\n{prom}");
    assert_eq!(
        total(&prom, "mannerly_requests_total", "") as u64,
        report["requests"].as_u64().expect("requests"),
        "every request the server saw, counted"
    );
    if common::need("promtool") {
        common::promtool_accepts(&prom);
    }
}
