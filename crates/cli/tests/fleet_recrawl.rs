//! A fleet's recrawl: two workers' directories of an earlier crawl of five
//! hosts, then `mannerly recrawl W0 W1 --frontier ...` and a worker that
//! `--join`s it revisit them. Every page either earlier worker fetched is
//! asked for with its validators, whichever worker asks now, and each 304
//! becomes a revisit record. And sitemap lastmod trust across a fleet: a
//! crawl and two recrawls, each by two workers, on an honest host and one
//! whose lastmod lies. Needs `redis-server` (installed by `.ci/run`;
//! elsewhere the test says SKIPPED without it).

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};

use mannerly_testsupport::RedisServer;
use mannerly_testweb::{HostSpec, TestWeb, Validators, WebConfig};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");

fn worker(port: u16, redis: &str, name: &str, args: &[&str]) -> Child {
    let mut c = mannerly(port, args);
    c.args(["--frontier", redis, "--crawl-name", name, "--claim", "1"]);
    c.spawn().expect("mannerly runs")
}

fn mannerly(port: u16, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .args(["--proxy", &format!("http://127.0.0.1:{port}")])
        // Slow enough for the joining worker to find work left.
        .args(["--min-delay", "0.2", "--give-up-after", "5", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn summary(child: Child) -> Value {
    let o = child.wait_with_output().expect("the worker ends");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

/// A worker that joins the crawl `name` once another worker has started
/// it; its summary.
fn joined(port: u16, redis: &str, name: &str, out: &str) -> Value {
    for _ in 0..50 {
        let o = worker(port, redis, name, &["crawl", "--join", "--out", out])
            .wait_with_output()
            .expect("the worker ends");
        let err = String::from_utf8_lossy(&o.stderr);
        if err.contains("to join") {
            std::thread::sleep(std::time::Duration::from_millis(100));
            continue;
        }
        assert_eq!(o.status.code(), Some(0), "{err}");
        return serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    }
    panic!("{name} never started")
}

/// Lines in a crawl's `pages.jsonl`.
fn pages(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("pages.jsonl"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_joining_a_recrawl_know_every_page_any_earlier_worker_fetched() {
    let Some(redis) = RedisServer::start(&[]) else {
        eprintln!("SKIPPED: redis-server is not installed");
        return;
    };
    let mut config = WebConfig::default();
    let hosts: Vec<String> = (0..5).map(|i| format!("h{i}.test")).collect();
    for h in &hosts {
        let spec = HostSpec {
            validators: Validators::ETag,
            ..HostSpec::default().robots("User-agent: *\n").pages(5, 4)
        };
        config.hosts.insert(h.clone(), spec);
    }
    let web = TestWeb::start(config).await.expect("testweb");
    let port = web.port();
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().to_owned();
    let d = move |name: &str| root.join(name).display().to_string();
    let seeds: Vec<String> = hosts.iter().map(|h| format!("http://{h}/")).collect();
    let url = redis.url();
    // The earlier crawl's two workers: each kept the pages it fetched in
    // its own directory (here each crawled its own hosts, so both hold
    // some).
    let first = tokio::task::spawn_blocking({
        let d = d.clone();
        move || {
            let (w0, w1) = (d("w0"), d("w1"));
            let mut a0 = vec!["crawl", "--out", w0.as_str()];
            a0.extend(seeds[..3].iter().map(String::as_str));
            let mut a1 = vec!["crawl", "--out", w1.as_str()];
            a1.extend(seeds[3..].iter().map(String::as_str));
            let c0 = mannerly(port, &a0).spawn().expect("mannerly runs");
            let c1 = mannerly(port, &a1).spawn().expect("mannerly runs");
            (summary(c0), summary(c1))
        }
    })
    .await
    .expect("joins");
    let (p0, p1) = (pages(&dir.path().join("w0")), pages(&dir.path().join("w1")));
    assert!(p0 > 0 && p1 > 0, "both workers fetched pages: {first:?}");
    let fetched = p0 + p1;
    web.clear_records();
    let second = tokio::task::spawn_blocking({
        let (url, d) = (url.clone(), d.clone());
        move || {
            let (w0, w1, r0, r1) = (d("w0"), d("w1"), d("r0"), d("r1"));
            // The first worker stops after 10 pages: the one that joins
            // revisits the rest.
            let c0 = worker(
                port,
                &url,
                "second",
                &["recrawl", &w0, &w1, "--out", &r0, "--max-pages", "10"],
            );
            let c1 = joined(port, &url, "second", &r1);
            (summary(c0), c1)
        }
    })
    .await
    .expect("joins");
    let log = web.requests();
    let asked: Vec<_> = log.iter().filter(|r| r.path != "/robots.txt").collect();
    let unconditional: Vec<String> = asked
        .iter()
        .filter(|r| !r.conditional)
        .map(|r| format!("{}{}", r.host, r.path))
        .collect();
    assert!(
        unconditional.is_empty(),
        "asked without validators: {unconditional:?}\n{second:?}"
    );
    assert_eq!(asked.len(), fetched, "every page once: {second:?}");
    let n = |v: &Value| v["not_modified"].as_u64().unwrap_or(0) as usize;
    assert_eq!(n(&second.0) + n(&second.1), fetched, "{second:?}");
    assert!(
        n(&second.1) > 0,
        "the joining worker revisited pages too: {second:?}"
    );
}

/// The pages of `host` asked for since the records were last cleared.
fn asked_of(web: &TestWeb, host: &str) -> Vec<String> {
    web.requests()
        .into_iter()
        .filter(|q| q.host == host && q.path.starts_with("/p"))
        .map(|q| q.path)
        .collect()
}

/// How many of each directory's pages were kept with their sitemap
/// lastmod (for the failure message).
fn lastmods(dirs: &[&str]) -> String {
    let mut out = String::new();
    for d in dirs {
        let text = std::fs::read_to_string(Path::new(d).join("pages.jsonl")).unwrap_or_default();
        let (mut n, mut with) = (0, 0);
        for l in text.lines() {
            let v: Value = serde_json::from_str(l).expect("json");
            n += 1;
            if v["lastmod"].is_string() {
                with += 1;
            }
        }
        out += &format!("{d}: {with} of {n} with lastmod; ");
    }
    out
}

/// Every host either worker of a fleet crawl named as untrusted.
fn untrusted(a: &Value, b: &Value) -> Vec<String> {
    let mut all: Vec<String> = [a, b]
        .iter()
        .flat_map(|v| {
            v["lastmod_untrusted_hosts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|h| h.as_str().map(str::to_owned))
        .collect();
    all.sort();
    all.dedup();
    all
}

/// A fleet crawl of two workers: the first runs `args` (ending in its
/// `--out`), the second joins the crawl `name` into `join_out`.
async fn fleet_of_two(
    port: u16,
    redis: &str,
    name: &str,
    args: Vec<String>,
    join_out: String,
) -> (Value, Value) {
    let (redis, name) = (redis.to_owned(), name.to_owned());
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let c0 = worker(port, &redis, &name, &args);
        let c1 = joined(port, &redis, &name, &join_out);
        (summary(c0), c1)
    })
    .await
    .expect("joins")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_recrawl_earns_lastmod_trust_as_a_lone_crawler_does() {
    let Some(redis) = RedisServer::start(&[]) else {
        eprintln!("SKIPPED: redis-server is not installed");
        return;
    };
    let web = common::honest_and_liar().await;
    let port = web.port();
    let dir = tempfile::tempdir().expect("tmp");
    let d = |name: &str| dir.path().join(name).display().to_string();
    let url = redis.url();
    let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>();
    // The first crawl, by a fleet of two.
    let (w0, w1) = (d("w0"), d("w1"));
    let args = own(&[
        "crawl",
        "http://honest.test/p0.html",
        "http://liar.test/p0.html",
        "--out",
        &w0,
    ]);
    fleet_of_two(port, &url, "first", args, w1.clone()).await;
    // Two recrawls, each by a fleet of two, each from the directories of
    // the one before; one honest page changes before each.
    let mut from = (w0, w1);
    for (round, name) in ["second", "third"].into_iter().enumerate() {
        let changed = format!("/p{}.html", 3 + round);
        web.change("honest.test", &changed);
        web.clear_records();
        let (r0, r1) = (d(&format!("{name}0")), d(&format!("{name}1")));
        // The first worker stops after the sitemaps and a few pages: the
        // one that joins revisits the rest, by what the first one read.
        let args = own(&[
            "recrawl",
            &from.0,
            &from.1,
            "--out",
            &r0,
            "--max-pages",
            "6",
        ]);
        let (s0, s1) = fleet_of_two(port, &url, name, args, r1.clone()).await;
        let honest = asked_of(&web, "honest.test");
        let both = format!("{name}: {s0}\n{s1}\n{}", lastmods(&[&from.0, &from.1]));
        // The honest host: its changed page is fetched, and of its 15
        // unchanged pages only the few sampled to keep its lastmod checked.
        assert!(honest.contains(&changed), "{honest:?}\n{both}");
        assert!(
            honest.len() <= 5,
            "unchanged honest pages asked for again: {honest:?}\n{both}"
        );
        // The liar is named, and every one of its pages asked for.
        assert_eq!(untrusted(&s0, &s1), ["liar.test"], "{both}");
        assert_eq!(asked_of(&web, "liar.test").len(), 16, "{both}");
        from = (r0, r1);
    }
}
