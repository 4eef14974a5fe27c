//! Ctrl-C stops a crawl gracefully (exit 130, the summary printed), the
//! crawl resumes, and nothing is fetched twice; SIGTERM (systemd's and
//! `docker stop`'s) stops it as gracefully, with 143. Its own test binary, so it
//! never runs beside the kill test (whose timing windows load would skew).

use std::process::Stdio;
use std::time::Duration;

mod common;
use common::{check_outputs, crawl_cmd, ctrl_c, generated_web, pages, seeds_file, signal};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_gracefully_with_130_and_the_crawl_resumes() {
    let web = generated_web(50, 10).await;
    let port = web.port();
    let dir = tempfile::tempdir().expect("tempdir");
    let seeds = seeds_file(dir.path(), 50);
    let out = dir.path().join("out");
    let child = crawl_cmd(port, &seeds, &out, false)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Mid-crawl: once the first pages are fetched (a fixed wait of 1.5 s
    // once fell before any, on a loaded machine), with some 9 s of each
    // host's 10 pages at 1 s apart still to go.
    until_a_page_is_fetched(&web).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stopped = ctrl_c(child).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_as_gracefully_with_143() {
    let web = generated_web(20, 10).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let seeds = seeds_file(dir.path(), 20);
    let out = dir.path().join("out");
    let child = crawl_cmd(web.port(), &seeds, &out, false)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    until_a_page_is_fetched(&web).await;
    let stopped = signal(child, "TERM").await;
    let said = String::from_utf8_lossy(&stopped.stdout);
    let err = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(143), "{said}{err}");
    assert!(said.starts_with("crawl stopped:"), "{said}");
    assert!(err.contains("stopping on SIGTERM"), "{err}");
    check_outputs(&out);
}

/// Waits until the crawl has fetched its first page (a fixed wait once fell
/// before any, on a loaded machine).
async fn until_a_page_is_fetched(web: &mannerly_testweb::TestWeb) {
    let mut waited = Duration::ZERO;
    while pages(web).is_empty() {
        assert!(waited < Duration::from_secs(60), "no page fetched in 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += Duration::from_millis(50);
    }
}
