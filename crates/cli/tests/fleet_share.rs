//! A fleet shares the work by default: two workers with default flags,
//! the second joining 2 s after the first, on 200 hosts of 6 pages each
//! fetch at least 30 % of the pages, and no host ever gets two requests
//! at once or two closer than the delay. Before, the first worker took
//! every host within 2 s and the second fetched 3 pages of 1,218.
//! Needs `redis-server` (installed by `.ci/run`; elsewhere SKIPPED).

use std::process::{Command, Stdio};
use std::time::Duration;

use mannerly_testsupport::RedisServer;

mod common;
use common::{generated_web, seeds_file};

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");
const HOSTS: u32 = 200;

fn worker(
    redis: &str,
    proxy: &str,
    seeds: &std::path::Path,
    out: &std::path::Path,
    join: bool,
) -> std::process::Child {
    let mut c = Command::new(BIN);
    c.args([
        "crawl",
        "--frontier",
        redis,
        "--proxy",
        proxy,
        "--give-up-after",
        "5",
        "--json",
    ])
    .arg("--out")
    .arg(out);
    if join {
        c.arg("--join");
    } else {
        c.arg("--seeds").arg(seeds);
    }
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("a worker starts")
}

fn pages(o: &std::process::Output) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    v["pages_by_status"]
        .as_object()
        .map(|m| m.values().filter_map(serde_json::Value::as_u64).sum())
        .unwrap_or(0)
}

/// A throwaway Redis; `None` (SKIPPED) where redis-server is missing,
/// which CI does not allow.
fn redis() -> Option<RedisServer> {
    let server = RedisServer::start(&[]);
    if server.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the fleet tests"
        );
        eprintln!("SKIPPED: redis-server is not installed");
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_with_default_flags_share_the_hosts() {
    let Some(redis) = redis() else { return };
    let web = generated_web(HOSTS, 6).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let seeds = seeds_file(dir.path(), HOSTS);
    let proxy = format!("http://127.0.0.1:{}", web.port());
    let url = redis.url();
    let first = worker(&url, &proxy, &seeds, &dir.path().join("w0"), false);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let second = worker(&url, &proxy, &seeds, &dir.path().join("w1"), true);
    let (a, b) = tokio::task::spawn_blocking(move || {
        (
            first.wait_with_output().expect("w0"),
            second.wait_with_output().expect("w1"),
        )
    })
    .await
    .expect("join");
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    let (pa, pb) = (pages(&a), pages(&b));
    let all = pa + pb;
    assert!(all >= u64::from(HOSTS) * 6, "{pa} + {pb} pages");
    for (w, p) in [("the first", pa), ("the second", pb)] {
        assert!(p * 10 >= all * 3, "{w} worker fetched {p} of {all} pages");
    }
    eprintln!("pages: {pa} and {pb} of {all}");
    // Politeness, from the server's side: one request at a time per host,
    // starts at least the default 1 s apart.
    let requests = web.requests();
    let mut by_host: std::collections::HashMap<&str, Vec<Duration>> = Default::default();
    for r in &requests {
        assert_eq!(
            r.in_flight_at_start, 1,
            "two requests at once to {}",
            r.host
        );
        by_host.entry(r.host.as_str()).or_default().push(r.started);
    }
    for (host, mut times) in by_host {
        times.sort();
        for w in times.windows(2) {
            assert!(
                w[1] - w[0] >= Duration::from_millis(990),
                "{host}: {:?} apart",
                w[1] - w[0]
            );
        }
    }
}

/// A fleet worker killed with kill -9 resumes as a lone crawl does:
/// `crawl --resume DIR` rejoins its fleet's crawl (its recorded
/// --frontier, crawl name and lease), and the crawl ends whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_resumes_with_its_recorded_fleet() {
    let Some(redis) = redis() else { return };
    let web = generated_web(10, 6).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let seeds = seeds_file(dir.path(), 10);
    let out = dir.path().join("w0");
    let mut w0 = Command::new(BIN)
        .args([
            "crawl",
            "--frontier",
            &redis.url(),
            "--crawl-name",
            "resumed",
            "--lease",
            "4",
        ])
        .args([
            "--proxy",
            &format!("http://127.0.0.1:{}", web.port()),
            "--give-up-after",
            "5",
        ])
        .arg("--seeds")
        .arg(&seeds)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("a worker starts");
    while web
        .requests()
        .iter()
        .filter(|r| r.path != "/robots.txt")
        .count()
        < 10
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    w0.kill().expect("kill -9");
    let _ = w0.wait();
    let resumed = tokio::task::spawn_blocking(move || {
        Command::new(BIN)
            .args(["crawl", "--resume"])
            .arg(&out)
            .output()
    })
    .await
    .expect("join")
    .expect("runs");
    let said = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{said}");
    let fetched: std::collections::HashSet<(String, String)> = web
        .requests()
        .iter()
        .filter(|r| r.path != "/robots.txt")
        .map(|r| (r.host.clone(), r.path.clone()))
        .collect();
    // Each host's `/` and its 6 pages.
    assert_eq!(fetched.len(), 70, "every page of the crawl: {said}");
}
