//! kill -9 at random moments during a recrawl, then `--resume`: the
//! recrawl ends as an uninterrupted one would (every page of the earlier
//! crawl revisited, known in the new `pages.jsonl`), a page is asked for
//! twice only when a kill landed while it was in flight, and every WARC
//! file reads back.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use mannerly_testweb::{Generated, TestWeb, Validators, WebConfig};

mod common;
use common::check_outputs;

const HOSTS: u32 = 40;
const KILLS: usize = 6;

fn mannerly(port: u16, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mannerly"));
    c.args(args).args([
        "--proxy",
        &format!("http://127.0.0.1:{port}"),
        "--min-delay",
        "0.5",
        "--concurrency",
        "16",
        "--give-up-after",
        "3",
        "--timeout",
        "3",
    ]);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_recrawl_then_resume() {
    let web = TestWeb::start(WebConfig {
        generated: Generated {
            prefix: "h".into(),
            suffix: ".test".into(),
            count: HOSTS,
            robots: "User-agent: *\n".into(),
            pages_per_host: 8,
            links_per_page: 3,
            cross_host_links: 0,
            validators: Validators::ETag,
            ..Generated::default()
        },
        ..WebConfig::default()
    })
    .await
    .expect("testweb");
    let web_start = std::time::Instant::now();
    let port = web.port();
    let dir = tempfile::tempdir().expect("tmp");
    let seeds = dir.path().join("seeds.txt");
    let list: String = (0..HOSTS).map(|i| format!("http://h{i}.test/\n")).collect();
    std::fs::write(&seeds, list).expect("seeds");
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    let (s, o, n) = (
        seeds.to_str().expect("utf-8").to_owned(),
        old.to_str().expect("utf-8").to_owned(),
        new.to_str().expect("utf-8").to_owned(),
    );
    let status = tokio::task::spawn_blocking({
        let mut c = mannerly(port, &["crawl", "--seeds", &s, "--out", &o]);
        move || c.status()
    })
    .await
    .expect("join")
    .expect("run");
    assert!(status.success());
    let old_pages = std::fs::read_to_string(old.join("pages.jsonl"))
        .expect("pages")
        .lines()
        .count();
    for i in (0..HOSTS).step_by(4) {
        web.change(&format!("h{i}.test"), "/p2.html");
    }
    web.clear_records();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut kills = Vec::new();
    for k in 0..KILLS {
        let mut child = if k == 0 {
            mannerly(port, &["recrawl", &o, "--out", &n]).spawn()
        } else {
            mannerly(port, &["crawl", "--resume", &n]).spawn()
        }
        .expect("spawn");
        rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        tokio::time::sleep(Duration::from_millis(300 + (rng >> 33) % 400)).await;
        if child.try_wait().expect("poll").is_some() {
            break;
        }
        child.kill().expect("SIGKILL");
        kills.push(web_start.elapsed());
        child.wait().expect("reap");
    }
    assert!(
        kills.len() >= 3,
        "the recrawl ended after {} kills",
        kills.len()
    );
    let last = tokio::task::spawn_blocking({
        let mut c = mannerly(port, &["crawl", "--resume", &n, "--json"]);
        c.stdout(Stdio::piped());
        move || c.output()
    })
    .await
    .expect("join")
    .expect("run");
    assert!(
        last.status.success(),
        "{}",
        String::from_utf8_lossy(&last.stdout)
    );
    // Every page of the earlier crawl is known to the new one.
    let text = std::fs::read_to_string(new.join("pages.jsonl")).expect("pages");
    let urls: std::collections::HashSet<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["url"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(urls.len(), old_pages, "pages known after the recrawl");
    // A page asked twice only when a kill landed while its first request
    // was in flight (testweb stamps a request a little after it is sent).
    let records = web.requests();
    let mut first: HashMap<(String, String), Duration> = HashMap::new();
    let slack = Duration::from_millis(250);
    for r in records.iter().filter(|r| r.path != "/robots.txt") {
        let key = (r.host.clone(), r.path.clone());
        match first.get(&key) {
            None => {
                first.insert(key, r.started);
            }
            Some(started) => assert!(
                kills
                    .iter()
                    .any(|k| *started <= *k + slack && *k <= *started + Duration::from_secs(3)),
                "{} {} asked again though no kill caught it ({started:?}; kills at {kills:?})",
                r.host,
                r.path
            ),
        }
    }
    check_outputs(&new);
    mannerly_testsupport::warcio_check(&new.join("warc"));
}
