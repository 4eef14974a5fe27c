//! A crawler stopped (SIGSTOP) while a request is out, until past that
//! request's deadline, then continued: its timer fires seconds late, and
//! the crawler does not blame the site for its own stall. The site
//! answered in time. A stalled robots.txt request is asked again a second
//! later and the host's pages are fetched, where a timeout would have held
//! them back for the failure's backoff (complete disallow, phase 1); a
//! stalled page is retried, and the host's pacing counts no failure.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mannerly_testweb::TestWeb;

mod common;
use common::need;

/// `kill -SIG pid`.
fn signal(sig: &str, pid: u32) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} {pid}");
}

/// Crawls slow.test (600 ms an answer) with a 1 s timeout, stopping the
/// crawler as soon as the request for `path` reaches the server and
/// continuing it 2.5 s later (1.5 s past the request's deadline). Returns
/// the server and the crawl's log.
async fn stopped_at(path: &str) -> (TestWeb, String) {
    let web = common::slow_host(600, 2, 1).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, "http://slow.test/\n").expect("seeds");
    let out = dir.path().join("out");
    let mut crawl = Command::new(env!("CARGO_BIN_EXE_mannerly"))
        .arg("crawl")
        .arg("--seeds")
        .arg(&seeds)
        .arg("--out")
        .arg(&out)
        .args(["--proxy", &format!("http://127.0.0.1:{}", web.port())])
        .args(["--min-delay", "0.2", "--give-up-after", "5"])
        .args(["--timeout", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mannerly crawl runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while web.count("slow.test", path) == 0 {
        assert!(Instant::now() < deadline, "no request for {path}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    signal("-STOP", crawl.id());
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    signal("-CONT", crawl.id());
    let status = tokio::task::spawn_blocking(move || crawl.wait())
        .await
        .expect("join")
        .expect("crawl ends");
    assert!(status.success(), "{status:?}");
    let log = std::fs::read_to_string(out.join("log.jsonl")).expect("log");
    (web, log)
}

/// Asserts that the log's first line of `kind` for `url` is the crawler's
/// stall, not counted against `whom`, and its second a 200.
fn stalled_then_answered(log: &str, kind: &str, url: &str, whom: &str) {
    let (kind, url) = (format!("\"kind\":\"{kind}\""), format!("\"url\":\"{url}\""));
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&kind) && l.contains(&url))
        .collect();
    let blame = format!("not counted against the {whom}");
    assert!(
        lines
            .first()
            .is_some_and(|l| l.contains("stalled") && l.contains(&blame)),
        "the first answer is the crawler's stall: {log}"
    );
    assert!(
        lines.get(1).is_some_and(|l| l.contains("\"status\":200")),
        "asked again, it answers: {log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawler_stopped_mid_request_does_not_blame_the_site() {
    if !need("kill") {
        return;
    }
    let (web, log) = stopped_at("/robots.txt").await;
    stalled_then_answered(&log, "robots", "http://slow.test/robots.txt", "site");
    assert_eq!(web.count("slow.test", "/robots.txt"), 2, "{log}");
    assert_eq!(web.count("slow.test", "/"), 1, "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_stalled_in_the_crawler_is_retried_without_blaming_the_host() {
    if !need("kill") {
        return;
    }
    let (web, log) = stopped_at("/").await;
    stalled_then_answered(&log, "page", "http://slow.test/", "host");
    assert_eq!(web.count("slow.test", "/"), 2, "{log}");
}
