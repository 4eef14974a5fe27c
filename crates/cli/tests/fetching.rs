//! `mannerly fetch`, `check` and `lint` on http URLs, and `mannerly
//! testweb`, against the simulated web on 127.0.0.1.

use std::process::{Command, Stdio};
use std::time::Duration;

use mannerly_testweb::{HostSpec, Reply, TestWeb};

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");

async fn web(spec: HostSpec) -> TestWeb {
    TestWeb::with_hosts([("127.0.0.1", spec)])
        .await
        .expect("testweb")
}

/// Runs the binary off the async runtime so the server keeps serving.
async fn run(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        Command::new(BIN)
            .args(&args)
            .output()
            .expect("run mannerly")
    })
    .await
    .expect("join")
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_prints_state_reason_expiry_and_history() {
    let w = web(HostSpec::default()
        .robots("User-agent: *\nDisallow: /private/\nSitemap: http://127.0.0.1/s.xml\n"))
    .await;
    let base = format!("http://127.0.0.1:{}/", w.port());
    let o = run(s(&["fetch", &base])).await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains(&format!("origin:   http://127.0.0.1:{}", w.port())),
        "{out}"
    );
    assert!(
        out.contains("state:    rules (1 group(s), 1 rule(s))"),
        "{out}"
    );
    assert!(out.contains("reason:   200 at "), "{out}");
    assert!(out.contains("sitemap:  http://127.0.0.1/s.xml"), "{out}");
    assert!(out.contains("history:\n  "), "{out}");

    let o = run(s(&["fetch", "--json", &base])).await;
    // One JSON document on one line, like every other --json (it was
    // pretty-printed over many).
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        1,
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["access"], "rules");
    assert_eq!(v["history"].as_array().map(Vec::len), Some(1));
    assert!(w.requests().iter().all(|r| r
        .user_agent
        .as_deref()
        .is_some_and(|ua| ua.starts_with("mannerly/"))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_fetches_when_given_a_url() {
    let w = web(HostSpec::default().robots("User-agent: *\nDisallow: /private/\n")).await;
    let robots = format!("http://127.0.0.1:{}/robots.txt", w.port());
    let o = run(s(&[
        "check",
        &robots,
        "--agent",
        "bot",
        "/private/a",
        "/ok",
    ]))
    .await;
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "disallowed\t/private/a\tline 2: Disallow: /private/\nallowed\t/ok\tno rule matched\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_with_a_robots_url_keeps_to_its_origin_and_its_max_bytes() {
    // A rule past the 500 KiB default, inside --max-bytes 600000.
    let mut body = String::from("User-agent: *\n");
    while body.len() < 520_000 {
        body.push_str("# padding padding padding padding padding padding padding\n");
    }
    body.push_str("Disallow: /late\n");
    let w = web(HostSpec::default().robots(body)).await;
    let robots = format!("http://127.0.0.1:{}/robots.txt", w.port());
    let o = run(s(&["check", &robots, "--agent", "bot", "/late"])).await;
    assert_eq!(o.status.code(), Some(0), "cut at 500 KiB by default");
    let o = run(s(&[
        "check",
        &robots,
        "--agent",
        "bot",
        "--max-bytes",
        "600000",
        "/late",
    ]))
    .await;
    assert_eq!(
        o.status.code(),
        Some(1),
        "--max-bytes reaches the fetch too (it was ignored): {}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A URL of another origin is not judged by this origin's robots.txt
    // (before: checked against it without a word).
    let other = "http://elsewhere.example/late";
    let o = run(s(&["check", &robots, "--agent", "bot", other, "/ok"])).await;
    assert_eq!(o.status.code(), Some(2));
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(out, "allowed\t/ok\tno rule matched\n");
    assert!(
        err.contains("http://elsewhere.example/late: not checked: it is not on http://127.0.0.1:"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_reports_unreachable_and_unavailable_robots() {
    let w = web(HostSpec::default().route("/robots.txt", vec![Reply::status(503)])).await;
    let robots = format!("http://127.0.0.1:{}/robots.txt", w.port());
    let o = run(s(&["check", &robots, "--agent", "bot", "/ok"])).await;
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("disallowed\t/ok\trobots.txt: 503 since "),
        "{out}"
    );
    assert!(out.contains("phase 1 of 3: complete disallow"), "{out}");

    let w = web(HostSpec::default().route("/robots.txt", vec![Reply::status(404)])).await;
    let robots = format!("http://127.0.0.1:{}/robots.txt", w.port());
    let o = run(s(&["check", &robots, "--agent", "bot", "--json", "/x"])).await;
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["access"], "allow-all");
    assert!(v["reason"]
        .as_str()
        .is_some_and(|r| r.starts_with("404 at ")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lint_fetches_when_given_a_url() {
    let w = web(HostSpec::default().robots("User-agent: *\nDisalow: /x\n")).await;
    let o = run(s(&["lint", &format!("http://127.0.0.1:{}/", w.port())])).await;
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("/robots.txt:2:1: warning[typo-accepted]"));
    let w = web(HostSpec::default().route("/robots.txt", vec![Reply::status(500)])).await;
    let o = run(s(&["lint", &format!("http://127.0.0.1:{}/", w.port())])).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no robots.txt to lint: 500 since"));
}

#[test]
fn fetch_rejects_bad_urls() {
    let o = Command::new(BIN)
        .args(["fetch", "ftp://x/"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("only http and https URLs have a robots.txt")
    );
}

#[test]
fn testweb_serves_a_config_file() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/testweb.toml");
    let mut child = Command::new(BIN)
        .args([
            "testweb",
            "--config",
            config,
            "--port",
            &port.to_string(),
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start testweb");
    let base = format!("http://127.0.0.1:{port}/");
    let mut out = None;
    for _ in 0..100 {
        let o = Command::new(BIN)
            .args(["fetch", &base])
            .output()
            .expect("fetch");
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        if text.contains("state:    rules") {
            out = Some(text);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    let out = out.expect("testweb answered with rules");
    assert!(out.contains("rules (1 group(s), 1 rule(s))"), "{out}");

    let bad =
        std::env::temp_dir().join(format!("mannerly-bad-testweb-{}.toml", std::process::id()));
    std::fs::write(&bad, "[hosts.x]\nnonsense = 1\n").expect("write");
    let o = Command::new(BIN)
        .args(["testweb", "--config", bad.to_str().expect("path")])
        .output()
        .expect("run");
    let _ = std::fs::remove_file(&bad);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("is not valid"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemap_discover_walks_what_robots_names() {
    let w = web(HostSpec::default()).await;
    let base = format!("http://127.0.0.1:{}", w.port());
    let index =
        format!("<sitemapindex><sitemap><loc>{base}/pages.xml</loc></sitemap></sitemapindex>");
    let pages = format!("<urlset><url><loc>{base}/a</loc><priority>0.9</priority></url><url><loc>http://elsewhere.test/b</loc></url></urlset>");
    w.set_host(
        "127.0.0.1",
        HostSpec::default()
            .robots(format!(
                "User-agent: *\nDisallow:\nSitemap: {base}/index.xml\n"
            ))
            .route("/index.xml", vec![Reply::text(index)])
            .route("/pages.xml", vec![Reply::text(pages)]),
    );
    let o = run(s(&["sitemap", "--discover", &format!("{base}/")])).await;
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(out, format!("{base}/a\t-\t-\t0.9\t{base}/pages.xml\n"));
    assert!(err.contains("(1 sitemap(s) named)"), "{err}");
    assert!(
        err.contains(
            "/pages.xml (depth 1): urlset: 1 entry, 1 dropped (1 outside the sitemap's location"
        ),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(1), "an entry was dropped");

    let o = run(s(&["sitemap", "--json", &format!("{base}/pages.xml")])).await;
    let v: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .expect("line"),
    )
    .expect("json");
    assert_eq!(v["loc"], format!("{base}/a"));
    assert_eq!(v["source"], format!("{base}/pages.xml"));
}

#[test]
fn sitemap_file_with_and_without_base() {
    let dir = std::env::temp_dir();
    let path = dir.join(format!("mannerly-sm-{}.xml", std::process::id()));
    std::fs::write(&path, "<urlset><url><loc>https://e.com/x/1</loc></url><url><loc>https://e.com/y/2</loc></url></urlset>").expect("write");
    let p = path.to_str().expect("path");
    let o = Command::new(BIN)
        .args(["sitemap", p])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 2);
    let o = Command::new(BIN)
        .args(["sitemap", p, "--base", "https://e.com/x/sitemap.xml"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("1 dropped (1 outside the sitemap's location")
    );
    let _ = std::fs::remove_file(&path);
    let o = Command::new(BIN)
        .args(["sitemap", "/no/such/sitemap.xml"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    // Usage errors say which flag and why, exit 2, before anything is read.
    let dir_s = dir.to_str().expect("path");
    for (args, says) in [
        (vec!["sitemap", dir_s], "it is a directory"),
        (vec!["sitemap", "--max-entries", "0", p], "0 is too few"),
        (vec!["sitemap", "--probe-known-paths", p], "--discover"),
        (
            vec!["sitemap", "--base", "https://e.com/", "https://e.com/s.xml"],
            "--base https://e.com/ is for a file",
        ),
    ] {
        let o = Command::new(BIN).args(&args).output().expect("run");
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {said}");
        assert!(said.contains(says), "{args:?}: {said}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemap_discover_fails_when_robots_cannot_be_read() {
    // Which sitemaps an unreachable or failing robots.txt names is not
    // known: the walk says so and exits 1, not 0 with nothing found.
    let w = web(HostSpec::default().route("/robots.txt", vec![Reply::status(503)])).await;
    let failing = format!("http://127.0.0.1:{}/", w.port());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let refused = format!("http://{}/", closed.local_addr().expect("addr"));
    drop(closed);
    for site in [failing, refused] {
        let o = run(s(&["sitemap", "--discover", &site])).await;
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{site}: {said}");
        assert!(said.contains("complete disallow"), "{site}: {said}");
    }
    // A 404 is read: the site names no sitemap, and nothing is lost.
    let w = web(HostSpec::default().route("/robots.txt", vec![Reply::status(404)])).await;
    let site = format!("http://127.0.0.1:{}/", w.port());
    let o = run(s(&["sitemap", "--discover", &site])).await;
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

#[test]
fn text_from_a_file_cannot_forge_lines_or_reach_the_terminal() {
    // Before: the raw <loc> text was printed after the parsed URL was
    // validated, so `&#10;` started a second, fake line (a URL outside the
    // sitemap's location, with a fake lastmod) and ESC reached the terminal.
    let dir = std::env::temp_dir();
    let path = dir.join(format!("mannerly-sm-inject-{}.xml", std::process::id()));
    std::fs::write(
        &path,
        "<urlset><url><loc>https://e.com/x/a&#10;https://evil.example/\t2026-01-01</loc>\
         <lastmod>2026-11-01&#27;[31m&#10;fake</lastmod></url></urlset>",
    )
    .expect("write");
    let o = Command::new(BIN)
        .args([
            "sitemap",
            path.to_str().expect("path"),
            "--base",
            "https://e.com/x/sitemap.xml",
        ])
        .output()
        .expect("run");
    let _ = std::fs::remove_file(&path);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(!out.contains('\u{1b}'), "{out}");
    let fields: Vec<&str> = out.trim_end().split('\t').collect();
    assert_eq!(fields.len(), 5, "{out}");
    assert!(fields[0].starts_with("https://e.com/x/a"), "{out}");
    assert!(
        fields[1].contains("\\u{1b}") && fields[1].contains("\\n"),
        "{out}"
    );
    // A robots.txt's bytes in lint's text output are escaped too.
    let robots = dir.join(format!("mannerly-lint-inject-{}.txt", std::process::id()));
    std::fs::write(&robots, "User-agent: *\nDisalow: /\u{1b}[2J\n").expect("write");
    let o = Command::new(BIN)
        .args(["lint", robots.to_str().expect("path")])
        .output()
        .expect("run");
    let _ = std::fs::remove_file(&robots);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains('\u{1b}') && out.contains("\\u{1b}"), "{out}");
}
