//! Helpers for the binary's tests: running `mannerly`, the `mannerly
//! crawl` command line, page counts from testweb's log, and the output
//! checks. Not every test binary uses every helper.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mannerly_testweb::TestWeb;

/// Runs the `mannerly` binary with `args`, `stdin` written to it.
pub fn mannerly(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mannerly"));
    cmd.args(args);
    piped(cmd, stdin)
}

/// Runs `cmd` with `stdin` written to it, its output captured.
fn piped(mut cmd: Command, stdin: &[u8]) -> Output {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {program}: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

pub fn crawl_cmd(port: u16, seeds: &Path, out: &Path, resume: bool) -> Command {
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
        // A killed crawl's request may run this long at the server: a
        // resumed crawl holds its host that long.
        "--timeout",
        "3",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    c
}

/// Page requests (not robots.txt) as (host, path), with their counts.
pub fn pages(web: &TestWeb) -> HashMap<(String, String), usize> {
    let mut m = HashMap::new();
    for r in web.requests() {
        if r.path != "/robots.txt" {
            *m.entry((r.host.clone(), r.path.clone())).or_default() += 1;
        }
    }
    m
}

/// Each WARC file's size and how many bytes a repair would cut from it
/// (checked on a copy): where an unreadable file went wrong.
fn warc_dir_report(dir: &Path) -> String {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("warc dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let scratch = tempfile::tempdir().expect("tempdir");
    let mut report = String::new();
    for f in files {
        let copy = scratch.path().join("copy.warc.gz");
        std::fs::copy(&f, &copy).expect("copy");
        let len = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
        let cut = mannerly_crawl::warc::repair(&copy);
        report.push_str(&format!(
            "{}: {len} bytes, a repair cuts {cut:?}\n",
            f.display()
        ));
    }
    report
}

pub fn check_outputs(out: &Path) {
    for e in std::fs::read_dir(out.join("warc")).expect("warc dir") {
        let path = e.expect("entry").path();
        let mut all = Vec::new();
        if let Err(e) = flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).expect("open"))
            .read_to_end(&mut all)
        {
            panic!(
                "{} does not read back: {e}\n{}",
                path.display(),
                warc_dir_report(&out.join("warc"))
            );
        }
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

/// Whether `cmd` is installed; in CI (`CI` set) a missing one fails the
/// test, elsewhere it says SKIPPED.
pub fn need(cmd: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{cmd} is not installed, and CI must run this test"
        );
        eprintln!("SKIPPED: {cmd} is not installed");
    }
    found
}

/// A port free on 127.0.0.1 now, and never handed out before in this
/// test binary: two tests starting servers at once cannot be given the
/// same port (the loser's server would fail to bind, and its test would
/// talk to the winner's).
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a port");
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// A GET of `/metrics` on 127.0.0.1 with this `Accept`: the body, or `None`
/// when nothing listens (yet). Any answer but a 200 fails the test.
pub fn scrape(port: u16, accept: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .ok()?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    Some(body.to_owned())
}

/// `promtool check metrics` accepts `text` (the caller checks that
/// promtool is installed).
pub fn promtool_accepts(text: &str) {
    let mut cmd = Command::new("promtool");
    cmd.args(["check", "metrics"]);
    let o = piped(cmd, text.as_bytes());
    assert!(
        o.status.success(),
        "promtool refused the scrape:\n{}{}\n{text}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A child process killed when dropped (a test that fails midway leaves
/// no server or follower behind).
pub struct Proc(pub std::process::Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Sends Ctrl-C (SIGINT) to a running `mannerly`, and waits for its
/// output.
pub async fn ctrl_c(child: std::process::Child) -> Output {
    signal(child, "INT").await
}

/// Sends `child` the signal `name` (`INT`, `TERM`) and waits for it.
pub async fn signal(child: std::process::Child, name: &str) -> Output {
    let sent = Command::new("kill")
        .args(["-s", name, &child.id().to_string()])
        .status()
        .expect("kill -s");
    assert!(sent.success());
    tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .expect("join")
        .expect("wait")
}

/// A simulated web of `count` hosts `h0.test` … with `pages` pages each
/// (and `/`), robots.txt allowing all, no links between hosts.
pub async fn generated_web(count: u32, pages: u32) -> TestWeb {
    slow_web(count, pages, 0).await
}

/// As [`generated_web`], every reply `latency_ms` late.
pub async fn slow_web(count: u32, pages: u32, latency_ms: u64) -> TestWeb {
    TestWeb::start(mannerly_testweb::WebConfig {
        generated: mannerly_testweb::Generated {
            prefix: "h".into(),
            suffix: ".test".into(),
            count,
            robots: "User-agent: *\n".into(),
            pages_per_host: pages,
            links_per_page: 3,
            cross_host_links: 0,
            latency_ms,
            ..mannerly_testweb::Generated::default()
        },
        ..mannerly_testweb::WebConfig::default()
    })
    .await
    .expect("testweb")
}

/// One host, `slow.test`, robots.txt allowing all, `pages` pages (and
/// `/`) of `links` links each, every reply `latency_ms` late.
pub async fn slow_host(latency_ms: u64, pages: u32, links: u32) -> TestWeb {
    let mut hosts = HashMap::new();
    hosts.insert(
        "slow.test".to_owned(),
        mannerly_testweb::HostSpec {
            latency_ms,
            ..mannerly_testweb::HostSpec::default()
                .robots("User-agent: *\n")
                .pages(pages, links)
        },
    );
    TestWeb::start(mannerly_testweb::WebConfig {
        hosts,
        ..mannerly_testweb::WebConfig::default()
    })
    .await
    .expect("testweb")
}

/// A seed file in `dir` naming the first `count` hosts' `/`.
pub fn seeds_file(dir: &Path, count: u32) -> std::path::PathBuf {
    let seeds = dir.join("seeds.txt");
    let list: String = (0..count).map(|i| format!("http://h{i}.test/\n")).collect();
    std::fs::write(&seeds, list).expect("seeds");
    seeds
}

/// A web of two hosts of 16 pages with sitemaps: one whose lastmod is
/// honest, one whose lastmod always moves.
pub async fn honest_and_liar() -> TestWeb {
    use mannerly_testweb::{HostSpec, SitemapLastmod, Validators, WebConfig};
    let mut config = WebConfig::default();
    for (host, lastmod) in [
        ("honest.test", SitemapLastmod::Honest),
        ("liar.test", SitemapLastmod::Moving),
    ] {
        let spec = HostSpec {
            validators: Validators::ETag,
            sitemap: lastmod,
            ..HostSpec::default()
                .robots(format!(
                    "User-agent: *\nSitemap: http://{host}/sitemap.xml\n"
                ))
                .pages(16, 2)
        };
        config.hosts.insert(host.into(), spec);
    }
    TestWeb::start(config).await.expect("testweb")
}

/// Waits until the server on `port` answers `GET path` as `ours` says
/// only that server would: listening is not enough (another process may
/// hold the port, or the server may still be starting).
pub fn wait_ready(port: u16, path: &str, what: &str, ours: fn(&str) -> bool) {
    let start = Instant::now();
    let mut last = String::new();
    loop {
        if let Some(answer) = ask(port, path, &[]) {
            if ours(&answer) {
                return;
            }
            last = answer;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "{what} never answered on {port}; last answer {last:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The whole answer to a GET of `path` on a.test, or `None` when nothing
/// listens.
pub fn ask(port: u16, path: &str, headers: &[(String, String)]) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n");
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    Some(answer)
}
