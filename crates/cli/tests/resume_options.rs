//! A resumed crawl keeps its word: started with its own User-Agent, a
//! 2 s delay, a per-host limit and a proxy, stopped with Ctrl-C, and
//! resumed with `--resume DIR` alone, it sends as it began (the same
//! User-Agent, no two requests to a host sooner than 2 s, no host past
//! its limit, through the same proxy). An option given again with
//! another value is refused, naming both, unless `--change`.

use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{ctrl_c, generated_web, pages};

const UA: &str = "OpBot/1.0 (+http://op.example/bot)";
const BIN: &str = env!("CARGO_BIN_EXE_mannerly");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_sends_as_it_began() {
    let web = generated_web(4, 8).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let proxy = format!("http://127.0.0.1:{}", web.port());
    let child = Command::new(BIN)
        .args([
            "crawl",
            "http://h0.test/",
            "http://h1.test/",
            "http://h2.test/",
            "http://h3.test/",
        ])
        .arg("--out")
        .arg(&out)
        .args([
            "--user-agent",
            UA,
            "--min-delay",
            "2",
            "--max-pages-per-host",
            "3",
        ])
        .args(["--proxy", &proxy, "--give-up-after", "5", "--timeout", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    while pages(&web).is_empty() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stopped = ctrl_c(child).await;
    assert_eq!(stopped.status.code(), Some(130));
    let summary = String::from_utf8_lossy(&stopped.stdout);
    assert!(
        summary.contains(&format!(
            "to go on: mannerly crawl --resume {}",
            out.display()
        )),
        "the stop names the command that goes on: {summary}"
    );
    let said = String::from_utf8_lossy(&stopped.stderr);
    assert!(
        said.contains(&format!(
            "crawling as {UA:?}, obeying the robots.txt group for `OpBot`"
        )),
        "{said}"
    );
    let settings: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("crawl.json")).expect("crawl.json"))
            .expect("JSON");
    assert_eq!(settings["options"]["user_agent"][0], UA, "{settings}");
    assert_eq!(settings["options"]["min_delay"][0], "2", "{settings}");
    assert_eq!(
        settings["options"]["proxy"][0],
        proxy.as_str(),
        "{settings}"
    );

    // Another delay is refused, naming both values; nothing is sent.
    let before = web.requests().len();
    let refused = Command::new(BIN)
        .args(["crawl", "--resume"])
        .arg(&out)
        .args(["--min-delay", "1"])
        .output()
        .expect("runs");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(said.contains("--min-delay 1 (the crawl's: 2)"), "{said}");
    assert!(said.contains("--change"), "{said}");
    assert_eq!(web.requests().len(), before);

    // `--resume DIR` alone: the crawl's identity, pace, limit and proxy.
    let resumed = tokio::task::spawn_blocking({
        let out = out.clone();
        move || {
            Command::new(BIN)
                .args(["crawl", "--resume"])
                .arg(&out)
                .output()
        }
    })
    .await
    .expect("join")
    .expect("runs");
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let all = web.requests();
    assert!(all.len() > before, "the resume went on");
    // The status counts the whole crawl, both runs.
    let status: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("status.json")).expect("status.json"))
            .expect("JSON");
    let fetched = all.iter().filter(|r| r.path != "/robots.txt").count() as u64;
    assert_eq!(status["pages"].as_u64(), Some(fetched), "{status}");
    assert!(
        status["pages_this_run"].as_u64() < Some(fetched),
        "{status}"
    );
    for r in &all {
        assert_eq!(r.user_agent.as_deref(), Some(UA), "{} {}", r.host, r.path);
    }
    for host in ["h0.test", "h1.test", "h2.test", "h3.test"] {
        let mut times: Vec<Duration> = all
            .iter()
            .filter(|r| r.host == host)
            .map(|r| r.started)
            .collect();
        times.sort();
        for w in times.windows(2) {
            // A small allowance for the clock of the recording.
            assert!(
                w[1] - w[0] >= Duration::from_millis(1_950),
                "{host}: {:?} apart",
                w[1] - w[0]
            );
        }
        let pages = all
            .iter()
            .filter(|r| r.host == host && r.path != "/robots.txt")
            .count();
        assert!(
            pages <= 3,
            "{host}: {pages} pages, past --max-pages-per-host 3"
        );
    }

    // `--change` takes the new value, says so, and records it.
    let changed = Command::new(BIN)
        .args(["crawl", "--resume"])
        .arg(&out)
        .args(["--change", "--min-delay", "1"])
        .output()
        .expect("runs");
    let said = String::from_utf8_lossy(&changed.stderr);
    assert!(changed.status.success(), "{said}");
    assert!(
        said.contains("changed: --min-delay 1 (the crawl's: 2)"),
        "{said}"
    );
    let settings: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("crawl.json")).expect("crawl.json"))
            .expect("JSON");
    assert_eq!(settings["options"]["min_delay"][0], "1", "{settings}");
    assert_eq!(settings["options"]["user_agent"][0], UA, "{settings}");
}
