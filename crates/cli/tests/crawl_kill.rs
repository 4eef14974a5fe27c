//! kill -9 at random moments during a crawl of 200 simulated hosts, then
//! `--resume`, at least 20 times: at the end the pages fetched are the
//! same set as an uninterrupted crawl's, a URL is fetched twice only when
//! a kill landed while it was in flight, robots.txt is not fetched again
//! after a restart (its state is on disk), every WARC file reads back,
//! and every log line is one JSON document. A slow host (2.5 s per answer)
//! is often killed mid-request: the resumed crawl sends it nothing while
//! that request may still be running at the server, so no host ever has two
//! requests in flight. The crawler runs as its own process through
//! `--proxy` (the simulated web), so hosts keep plain names.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mannerly_testweb::{Generated, HostSpec, TestWeb, WebConfig};

const HOSTS: u32 = 200;
const KILLS: usize = 20;

mod common;
use common::{check_outputs, crawl_cmd, pages};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_and_resume_lose_nothing_and_repeat_only_what_was_in_flight() {
    let mut hosts = HashMap::new();
    hosts.insert(
        "slow.test".to_owned(),
        HostSpec {
            latency_ms: 2_500,
            ..HostSpec::default().robots("User-agent: *\n").pages(3, 2)
        },
    );
    let web = TestWeb::start(WebConfig {
        hosts,
        generated: Generated {
            prefix: "h".into(),
            suffix: ".test".into(),
            count: HOSTS,
            robots: "User-agent: *\nDisallow: /p5.html\n".into(),
            pages_per_host: 10,
            links_per_page: 3,
            cross_host_links: 1,
            ..Generated::default()
        },
        ..WebConfig::default()
    })
    .await
    .expect("testweb");
    let web_start = Instant::now();
    let port = web.port();
    let dir = tempfile::tempdir().expect("tempdir");
    let seeds = dir.path().join("seeds.txt");
    let mut list: String = (0..HOSTS).map(|i| format!("http://h{i}.test/\n")).collect();
    list.push_str("http://slow.test/\n");
    std::fs::write(&seeds, list).expect("seeds");

    // The reference: one crawl, never interrupted.
    let reference_out = dir.path().join("reference");
    let status = tokio::task::spawn_blocking({
        let mut c = crawl_cmd(port, &seeds, &reference_out, false);
        move || c.status()
    })
    .await
    .expect("join")
    .expect("run");
    assert!(status.success(), "reference crawl: {status:?}");
    let reference: HashSet<(String, String)> = pages(&web).into_keys().collect();
    assert!(reference.len() > 1_000, "{} pages", reference.len());
    web.clear_records();

    // The same crawl, killed at random moments.
    let out = dir.path().join("killed");
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut kills = Vec::new();
    let mut resume = false;
    let mut finished = false;
    while kills.len() < KILLS {
        // `--resume` once a store exists (a kill can land before the first
        // run made one); `--out` with the seeds before that.
        resume = resume || out.join("frontier").exists();
        let mut child = crawl_cmd(port, &seeds, &out, resume)
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let wait = Duration::from_millis(200 + (rng >> 33) % 300);
        tokio::time::sleep(wait).await;
        if let Some(status) = child.try_wait().expect("poll") {
            let mut said = String::new();
            if let Some(mut o) = child.stdout.take() {
                let _ = o.read_to_string(&mut said);
            }
            eprintln!("a run ended by itself: {said}");
            assert!(status.success(), "a crawl run failed: {status:?}");
            finished = true;
            break;
        }
        child.kill().expect("SIGKILL");
        kills.push(web_start.elapsed());
        child.wait().expect("reap");
    }
    assert!(
        !finished && kills.len() >= KILLS,
        "the crawl ended after {} kills ({} reference pages, {} fetched so far)",
        kills.len(),
        reference.len(),
        pages(&web).len()
    );
    let last = tokio::task::spawn_blocking({
        let mut c = crawl_cmd(port, &seeds, &out, true);
        c.stdout(Stdio::piped());
        move || c.output()
    })
    .await
    .expect("join")
    .expect("run");
    let said = String::from_utf8_lossy(&last.stdout).into_owned();
    assert!(
        last.status.success(),
        "final resume: {:?}\n{said}",
        last.status
    );

    let got = pages(&web);
    let got_set: HashSet<(String, String)> = got.keys().cloned().collect();
    let missing: Vec<_> = reference.difference(&got_set).take(5).collect();
    let extra: Vec<_> = got_set.difference(&reference).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?}; the last run said:\n{said}"
    );
    // A page fetched twice: only when a kill landed while it was in flight.
    let records = web.requests();
    let mut first_seen: HashMap<(String, String), &mannerly_testweb::RequestRecord> =
        HashMap::new();
    let mut repeats = 0;
    for r in &records {
        let k = (r.host.clone(), r.path.clone());
        match first_seen.get(&k) {
            None => {
                first_seen.insert(k, r);
            }
            Some(first) => {
                repeats += 1;
                // The earlier fetch started before some kill, and that kill
                // came before the crawler could record it done (allowing
                // for the response's trip and the write). testweb stamps a
                // request when it handles it, which can be a little after
                // the crawler sent it: a request sent just before the kill
                // may carry a stamp just after the kill's.
                let slack = Duration::from_millis(250);
                let in_flight_at_kill = kills.iter().any(|k| {
                    first.started <= *k + slack && *k <= first.started + Duration::from_secs(3)
                });
                assert!(
                    in_flight_at_kill,
                    "{} {} fetched again though no kill followed its first fetch ({:?}; kills at {:?})",
                    r.host, r.path, first.started, kills
                );
            }
        }
    }
    assert!(repeats <= KILLS * 32, "{repeats} repeats for {KILLS} kills");
    let robots: usize = records.iter().filter(|r| r.path == "/robots.txt").count();
    assert!(
        robots <= HOSTS as usize + kills.len() * 32,
        "robots.txt fetched {robots} times for {HOSTS} hosts"
    );
    // The server's own count: never two requests in flight to one host,
    // kills and resumes included.
    let mut hosts: Vec<String> = records.iter().map(|r| r.host.clone()).collect();
    hosts.sort();
    hosts.dedup();
    for host in &hosts {
        assert!(
            web.max_in_flight(host) <= 1,
            "{host} had {} requests in flight at once",
            web.max_in_flight(host)
        );
    }
    assert!(
        records.iter().any(|r| r.host == "slow.test"),
        "the slow host was crawled"
    );
    check_outputs(&out);
    log_holds_every_page(&out, &got_set);
    evidence_covers_every_request(&out, &records);
    eprintln!(
        "{} kills: {} pages as the reference, {repeats} fetched again after a kill, {robots} robots.txt requests",
        kills.len(),
        got_set.len()
    );
}

/// Every page the server answered has its line in the crawl's log, kills
/// or not: a page recorded done was logged first, and one a kill caught in
/// flight was fetched again and logged then. A resumed crawl counts what
/// it fetched by these lines (`--max-pages`, the per-host bound).
fn log_holds_every_page(out: &std::path::Path, served: &HashSet<(String, String)>) {
    let log = std::fs::read_to_string(out.join("log.jsonl")).expect("log");
    let logged: HashSet<(String, String)> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "page" && v["status"].is_number())
        .filter_map(|v| {
            let rest = v["url"].as_str()?.strip_prefix("http://")?.to_owned();
            let (host, path) = rest.split_at(rest.find('/')?);
            Some((host.to_owned(), path.to_owned()))
        })
        .collect();
    let unlogged: Vec<_> = served.difference(&logged).take(5).collect();
    assert!(
        unlogged.is_empty(),
        "{} of {} pages served have no line in log.jsonl, e.g. {unlogged:?}",
        served.difference(&logged).count(),
        served.len()
    );
}

/// Every request the server saw has a record in the crawl's evidence
/// (written before it was sent, kills or not), and every host's chain,
/// across all the runs, verifies up to a checkpoint.
fn evidence_covers_every_request(out: &std::path::Path, seen: &[mannerly_testweb::RequestRecord]) {
    let dir = out.join("evidence");
    let bundles =
        mannerly_evidence::export_hosts(&[dir], None, mannerly_evidence::Window::default())
            .expect("export");
    let mut recorded: HashMap<(String, String), usize> = HashMap::new();
    for b in &bundles {
        mannerly_evidence::verify(b, None)
            .unwrap_or_else(|why| panic!("{}: the evidence does not verify: {why}", b.host));
        for r in b.parsed().expect("records") {
            *recorded
                .entry((r.host.clone(), r.target().to_owned()))
                .or_default() += 1;
        }
    }
    let mut sent: HashMap<(String, String), usize> = HashMap::new();
    for r in seen {
        *sent.entry((r.host.clone(), r.path.clone())).or_default() += 1;
    }
    let unrecorded: Vec<_> = sent
        .iter()
        .filter(|(k, n)| recorded.get(*k).copied().unwrap_or(0) < **n)
        .take(5)
        .collect();
    assert!(
        unrecorded.is_empty(),
        "requests the server saw more often than the evidence records them: {unrecorded:?}"
    );
}

/// A crawl killed while its one host had a request out, resumed with a
/// `--give-up-after` shorter than `--timeout`: the host is held for that
/// request (it may still be running at the server), and the resume waits
/// the hold out and crawls the rest instead of ending as if the host's
/// pace were too slow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_waits_out_the_hold_of_a_cut_off_request_before_giving_up() {
    let web = common::slow_host(800, 4, 3).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("crawl");
    let port = web.port();
    let run = move |first: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_mannerly"));
        c.arg("crawl");
        match first {
            true => c.args(["http://slow.test/", "--out"]).arg(&out),
            false => c.arg("--resume").arg(&out).arg("--json"),
        };
        c.args(["--proxy", &format!("http://127.0.0.1:{port}")])
            .args([
                "--min-delay",
                "0.2",
                "--give-up-after",
                "1",
                "--timeout",
                "3",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        c
    };
    let mut child = run(true).spawn().expect("spawn");
    // Killed once the server has the front page's request, 800 ms before
    // it answers.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !web.requests().iter().any(|r| r.path == "/") {
        assert!(Instant::now() < deadline, "the crawl never asked for /");
        assert!(child.try_wait().expect("poll").is_none(), "the crawl ended");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    let mut resume = run(false);
    let last = tokio::task::spawn_blocking(move || resume.output())
        .await
        .expect("join")
        .expect("run");
    let said = String::from_utf8_lossy(&last.stdout).into_owned();
    assert!(last.status.success(), "{said}");
    let summary: serde_json::Value = serde_json::from_str(&said).expect("JSON summary");
    assert_eq!(summary["ending"], "done", "{said}");
    let asked: HashSet<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .map(|r| r.path)
        .collect();
    assert_eq!(asked.len(), 5, "every page asked for: {asked:?}");
}
