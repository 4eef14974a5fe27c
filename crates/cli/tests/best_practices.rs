//! The crawler meets the Crawler Best Practices by default: never past a
//! login (a 401, a 403 with `WWW-Authenticate` or a login form stops
//! that path prefix; no credentials are ever sent), and a default bound
//! on depth.

mod common;

use mannerly_testweb::{HostSpec, Reply, TestWeb, WebConfig};
use serde_json::Value;

fn html(body: &str) -> Reply {
    Reply::text(format!("<html><body>{body}</body></html>")).header("Content-Type", "text/html")
}

/// `mannerly crawl SEEDS --out OUT EXTRA` through `web`; its stdout, once
/// it ended well.
fn crawl(web: &TestWeb, seeds: &[&str], out: &std::path::Path, extra: &[&str]) -> Vec<u8> {
    let proxy = format!("http://127.0.0.1:{}", web.port());
    let mut args = vec![
        "crawl",
        "--out",
        out.to_str().expect("utf-8"),
        "--proxy",
        &proxy,
    ];
    args.extend(seeds);
    args.extend(extra);
    let o = common::mannerly(&args, b"");
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{said}");
    o.stdout
}

fn links(paths: &[&str]) -> Reply {
    let a: String = paths
        .iter()
        .map(|p| format!("<a href=\"{p}\">{p}</a>"))
        .collect();
    html(&a)
}

#[test]
fn a_crawl_never_goes_past_a_login() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let spec = HostSpec::default()
        .robots("User-agent: *\n")
        .route(
            "/",
            vec![links(&[
                "/members/a",
                "/public",
                "/login",
                "/admin/x",
                "http://user:secret@site.test/with-credentials",
            ])],
        )
        .route(
            "/members/a",
            vec![Reply::status(401).header("WWW-Authenticate", "Basic realm=\"members\"")],
        )
        .route("/public", vec![links(&["/members/b", "/members/deep/c", "/admin/y"])])
        .route(
            "/login",
            vec![html(
                "<form method=post><input name=user><input type=\"Password\" name=pw></form><a href=\"/login?next=/x\">again</a>",
            )],
        )
        .route(
            "/admin/x",
            vec![Reply::status(403).header("WWW-Authenticate", "Bearer")],
        );
    let mut config = WebConfig::default();
    config.hosts.insert("site.test".into(), spec);
    let web = rt.block_on(TestWeb::start(config)).expect("testweb");
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("out");
    let stdout = crawl(
        &web,
        &["http://site.test/"],
        &out,
        &["--min-delay", "0.05", "--json"],
    );
    let summary: Value = serde_json::from_slice(&stdout).expect("JSON");
    let asked: Vec<String> = web.requests().iter().map(|r| r.path.clone()).collect();
    // Each wall was met once; nothing behind it was asked for.
    for met in [
        "/members/a",
        "/login",
        "/admin/x",
        "/public",
        "/with-credentials",
    ] {
        assert_eq!(
            asked.iter().filter(|p| *p == met).count(),
            1,
            "{met}: {asked:?}"
        );
    }
    for behind in [
        "/members/b",
        "/members/deep/c",
        "/admin/y",
        "/login?next=/x",
    ] {
        assert!(!asked.iter().any(|p| p == behind), "{behind}: {asked:?}");
    }
    assert!(
        web.requests().iter().all(|r| !r.credentials),
        "no credentials, ever"
    );
    let walls = summary["login_walls"].as_object().expect("login_walls");
    let prefixes: Vec<&str> = walls.keys().map(String::as_str).collect();
    assert_eq!(
        prefixes,
        [
            "http://site.test/admin/",
            "http://site.test/login",
            "http://site.test/members/"
        ],
        "{summary}"
    );
    assert!(walls["http://site.test/login"]
        .as_str()
        .is_some_and(|w| w.contains("login form")));
    assert_eq!(
        summary["skipped"]["login-required"].as_u64(),
        Some(4),
        "{summary}"
    );
    let log = std::fs::read_to_string(out.join("log.jsonl")).expect("log");
    assert!(
        log.contains("behind the login that stopped http://site.test/members/"),
        "{log}"
    );
    // Taken up again with a seed behind a wall: the wall still stands.
    web.clear_records();
    let extra = ["--min-delay", "0.05", "--json"];
    let again = crawl(&web, &["http://site.test/members/c"], &out, &extra);
    let again: Value = serde_json::from_slice(&again).expect("JSON");
    let asked: Vec<String> = web.requests().iter().map(|r| r.path.clone()).collect();
    assert!(!asked.iter().any(|p| p == "/members/c"), "{asked:?}");
    assert_eq!(
        again["skipped"]["login-required"].as_u64(),
        Some(1),
        "{again}"
    );
}

/// A link chain 30 deep: the crawl follows it 20 links from the seed, the
/// default `--max-depth`; a page that keeps failing gets 1 + 2 requests.
#[test]
fn depth_and_requests_per_url_are_bounded_by_default() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut spec = HostSpec::default()
        .robots("User-agent: *\n")
        .route("/", vec![links(&["/d/1"])]);
    for i in 1..30 {
        spec = spec.route(format!("/d/{i}"), vec![links(&[&format!("/d/{}", i + 1)])]);
    }
    let mut config = WebConfig::default();
    config.hosts.insert("deep.test".into(), spec);
    config.hosts.insert(
        "down.test".into(),
        HostSpec::default()
            .robots("User-agent: *\n")
            .route("/", vec![Reply::status(503)]),
    );
    let web = rt.block_on(TestWeb::start(config)).expect("testweb");
    let dir = tempfile::tempdir().expect("tmp");
    let seeds = ["http://deep.test/", "http://down.test/"];
    crawl(
        &web,
        &seeds,
        &dir.path().join("out"),
        &["--min-delay", "0.02"],
    );
    let asked: Vec<String> = web
        .requests()
        .iter()
        .filter(|r| r.host == "deep.test")
        .map(|r| r.path.clone())
        .collect();
    assert!(asked.contains(&"/d/20".to_owned()), "{asked:?}");
    assert!(
        !asked.contains(&"/d/21".to_owned()),
        "past the default depth: {asked:?}"
    );
    assert_eq!(
        web.count("down.test", "/"),
        3,
        "a failing page: 1 + 2 requests"
    );
    let help = common::mannerly(&["crawl", "--help"], b"");
    let help = String::from_utf8_lossy(&help.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("[default: 20]"),
        "--max-depth in --help: {help}"
    );
    assert!(
        help.contains("at most 1 + N requests"),
        "--retries in --help: {help}"
    );
}
