//! kill -9 at random moments during a crawl of 200 simulated hosts, then
//! `--resume`, at least 20 times: at the end the pages fetched are the
//! same set as an uninterrupted crawl's, a URL is fetched twice only when
//! a kill landed while it was in flight, robots.txt is not fetched again
//! after a restart (its state is on disk), every WARC file reads back,
//! and every log line is one JSON document. The crawler runs as its own
//! process through `--proxy` (the simulated web), so hosts keep plain
//! names.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mannerly_testweb::{Generated, TestWeb, WebConfig};

const HOSTS: u32 = 200;
const KILLS: usize = 20;

fn crawl_cmd(port: u16, seeds: &Path, out: &Path, resume: bool) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mannerly"));
    c.arg("crawl");
    if resume {
        c.arg("--resume").arg(out);
    } else {
        c.arg("--seeds").arg(seeds).arg("--out").arg(out);
    }
    c.args([
        "--proxy",
        &format!("http://127.0.0.1:{port}"),
        "--min-delay",
        "1",
        "--concurrency",
        "32",
        "--give-up-after",
        "5",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    c
}

/// Page requests (not robots.txt) as (host, path), with their counts.
fn pages(web: &TestWeb) -> HashMap<(String, String), usize> {
    let mut m = HashMap::new();
    for r in web.requests() {
        if r.path != "/robots.txt" {
            *m.entry((r.host.clone(), r.path.clone())).or_default() += 1;
        }
    }
    m
}

fn check_outputs(out: &Path) {
    for e in std::fs::read_dir(out.join("warc")).expect("warc dir") {
        let path = e.expect("entry").path();
        let mut all = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).expect("open"))
            .read_to_end(&mut all)
            .unwrap_or_else(|e| panic!("{} does not read back: {e}", path.display()));
        let text = String::from_utf8_lossy(&all);
        assert!(
            text.starts_with("WARC/1.1\r\nWARC-Type: warcinfo"),
            "{}",
            path.display()
        );
    }
    let log = std::fs::read_to_string(out.join("log.jsonl")).expect("log");
    for (i, line) in log.lines().enumerate() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("log line {}: {e}: {line}", i + 1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_and_resume_lose_nothing_and_repeat_only_what_was_in_flight() {
    let web = TestWeb::start(WebConfig {
        generated: Generated {
            prefix: "h".into(),
            suffix: ".test".into(),
            count: HOSTS,
            robots: "User-agent: *\nDisallow: /p5.html\n".into(),
            pages_per_host: 10,
            links_per_page: 3,
            cross_host_links: 1,
        },
        ..WebConfig::default()
    })
    .await
    .expect("testweb");
    let web_start = Instant::now();
    let port = web.port();
    let dir = tempfile::tempdir().expect("tempdir");
    let seeds = dir.path().join("seeds.txt");
    let list: String = (0..HOSTS).map(|i| format!("http://h{i}.test/\n")).collect();
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
                // for the response's trip and the write).
                let in_flight_at_kill = kills
                    .iter()
                    .any(|k| first.started <= *k && *k <= first.started + Duration::from_secs(2));
                assert!(
                    in_flight_at_kill,
                    "{} {} fetched again though no kill followed its first fetch ({:?})",
                    r.host, r.path, first.started
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
    check_outputs(&out);
    eprintln!(
        "{} kills: {} pages as the reference, {repeats} fetched again after a kill, {robots} robots.txt requests",
        kills.len(),
        got_set.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_gracefully_with_130_and_the_crawl_resumes() {
    let web = TestWeb::start(WebConfig {
        generated: Generated {
            prefix: "h".into(),
            suffix: ".test".into(),
            count: 50,
            robots: "User-agent: *\n".into(),
            pages_per_host: 10,
            links_per_page: 3,
            cross_host_links: 0,
        },
        ..WebConfig::default()
    })
    .await
    .expect("testweb");
    let port = web.port();
    let dir = tempfile::tempdir().expect("tempdir");
    let seeds = dir.path().join("seeds.txt");
    let list: String = (0..50).map(|i| format!("http://h{i}.test/\n")).collect();
    std::fs::write(&seeds, list).expect("seeds");
    let out = dir.path().join("out");
    let child = crawl_cmd(port, &seeds, &out, false)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let sent = Command::new("kill")
        .args(["-s", "INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(sent.success());
    let stopped = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .expect("join")
        .expect("wait");
    let said = String::from_utf8_lossy(&stopped.stdout);
    assert_eq!(stopped.status.code(), Some(130), "{said}");
    assert!(said.starts_with("crawl stopped:"), "{said}");
    let before = pages(&web).len();
    assert!(before > 0);
    let resumed = tokio::task::spawn_blocking({
        let mut c = crawl_cmd(port, &seeds, &out, true);
        move || c.status()
    })
    .await
    .expect("join")
    .expect("run");
    assert!(resumed.success(), "{resumed:?}");
    let after = pages(&web);
    assert!(after.len() > before, "the resume went on");
    // A graceful stop waits for what is in flight: nothing is fetched twice.
    let twice: Vec<_> = after.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "fetched twice after Ctrl-C: {twice:?}");
    check_outputs(&out);
}
