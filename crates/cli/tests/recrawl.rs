//! `mannerly recrawl`: a crawl, a change of the simulated web, then a
//! recrawl that asks for every page with its validators; 304s and
//! unchanged payloads become WARC revisit records naming the earlier
//! crawl's records, changed pages are responses.

mod common;

use std::collections::HashMap;
use std::process::{Command, Stdio};

use mannerly_testweb::{HostSpec, TestWeb, Validators, WebConfig};
use serde_json::Value;

const HOSTS: [(&str, Validators); 4] = [
    ("etag.test", Validators::ETag),
    ("lm.test", Validators::LastModified),
    ("ignore.test", Validators::Ignored),
    ("plain.test", Validators::None),
];

fn crawl(port: u16, args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_mannerly"))
        .args(args)
        .args([
            "--proxy",
            &format!("http://127.0.0.1:{port}"),
            "--min-delay",
            "0.05",
            "--give-up-after",
            "2",
            "--json",
        ])
        .stderr(Stdio::piped())
        .output()
        .expect("mannerly runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("one JSON summary")
}

/// Pages per host in a crawl's `pages.jsonl` (its last line per URL).
fn pages_per_host(dir: &std::path::Path) -> HashMap<String, usize> {
    let text = std::fs::read_to_string(dir.join("pages.jsonl")).expect("pages.jsonl");
    let mut last: HashMap<String, Value> = HashMap::new();
    for l in text.lines() {
        let v: Value = serde_json::from_str(l).expect("a JSON line");
        last.insert(v["url"].as_str().expect("url").to_owned(), v);
    }
    let mut n = HashMap::new();
    for url in last.keys() {
        let host = url.split('/').nth(2).unwrap_or("").to_owned();
        *n.entry(host).or_default() += 1;
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recrawl_fetches_only_what_changed() {
    let mut config = WebConfig::default();
    for (host, validators) in HOSTS {
        let spec = HostSpec {
            validators,
            ..HostSpec::default().robots("User-agent: *\n").pages(5, 4)
        };
        config.hosts.insert(host.into(), spec);
    }
    let web = TestWeb::start(config).await.expect("testweb");
    let dir = tempfile::tempdir().expect("tmp");
    let seeds = dir.path().join("seeds.txt");
    let list: Vec<String> = HOSTS.iter().map(|(h, _)| format!("http://{h}/")).collect();
    std::fs::write(&seeds, list.join("\n")).expect("seeds");
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    let port = web.port();
    let first = tokio::task::spawn_blocking({
        let (seeds, old) = (seeds.clone(), old.clone());
        move || {
            crawl(
                port,
                &[
                    "crawl",
                    "--seeds",
                    seeds.to_str().expect("utf-8"),
                    "--out",
                    old.to_str().expect("utf-8"),
                ],
            )
        }
    })
    .await
    .expect("joins");
    assert_eq!(
        first["new"].as_u64(),
        Some(pages_per_host(&old).values().sum::<usize>() as u64)
    );
    // One page of each host changes.
    for (host, _) in HOSTS {
        web.change(host, "/p1.html");
    }
    web.clear_records();
    let second = tokio::task::spawn_blocking({
        let (old, new) = (old.clone(), new.clone());
        move || {
            crawl(
                port,
                &[
                    "recrawl",
                    old.to_str().expect("utf-8"),
                    "--out",
                    new.to_str().expect("utf-8"),
                ],
            )
        }
    })
    .await
    .expect("joins");
    let before = pages_per_host(&old);
    let r = &second;
    // etag.test and lm.test answer 304 but for their changed page; the
    // others send everything, the same payload but for the changed page.
    let n = |h: &str| before.get(h).copied().unwrap_or(0) as u64;
    assert_eq!(
        r["not_modified"].as_u64(),
        Some(n("etag.test") + n("lm.test") - 2),
        "{second}"
    );
    assert_eq!(
        r["unchanged"].as_u64(),
        Some(n("ignore.test") + n("plain.test") - 2),
        "{second}"
    );
    assert_eq!(r["changed"].as_u64(), Some(4), "{second}");
    // What it downloaded, beside what the first crawl did.
    assert_eq!(second["earlier_bytes"], first["bytes"], "{second}");
    assert!(
        second["bytes"].as_u64() < first["bytes"].as_u64(),
        "{second}"
    );
    // Every page known before went out with its validators (plain.test
    // sends none to give back).
    for rec in web.requests().iter().filter(|r| r.path != "/robots.txt") {
        let has_validators = rec.host != "plain.test";
        assert_eq!(rec.conditional, has_validators, "{} {}", rec.host, rec.path);
    }
    check_revisits(&old, &new);
}

/// With warcio (`MANNERLY_PYTHON`, as `.ci/run` provides): every record of
/// NEW reads; each revisit has the right profile and names a record of
/// OLD that holds the payload it stands for.
fn check_revisits(old: &std::path::Path, new: &std::path::Path) {
    let Some(python) = std::env::var_os("MANNERLY_PYTHON") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must check the WARC files with warcio (MANNERLY_PYTHON)"
        );
        eprintln!(
            "SKIPPED: the WARC revisit records were not read with warcio (set MANNERLY_PYTHON)"
        );
        return;
    };
    let script = r#"
import glob, sys
from warcio.archiveiterator import ArchiveIterator
def records(d):
    for path in sorted(glob.glob(d + "/warc/*.warc.gz")):
        with open(path, "rb") as f:
            for r in ArchiveIterator(f):
                yield r, (r.content_stream().read() if r.rec_type in ("response", "revisit") else b"")
old = {r.rec_headers.get_header("WARC-Record-ID"): r.rec_headers.get_header("WARC-Payload-Digest")
       for r, _ in records(sys.argv[1]) if r.rec_type == "response"}
counts = {}
for r, payload in records(sys.argv[2]):
    h = r.rec_headers
    if r.rec_type == "response" and h.get_header("WARC-Target-URI").endswith("/p1.html"):
        counts["changed-response"] = counts.get("changed-response", 0) + 1
    if r.rec_type != "revisit":
        continue
    assert not h.get_header("WARC-Target-URI").endswith("/p1.html"), "a changed page as a revisit"
    profile = h.get_header("WARC-Profile").rsplit("/", 1)[-1]
    counts[profile] = counts.get(profile, 0) + 1
    ref = h.get_header("WARC-Refers-To")
    assert ref in old, ("names no record of the earlier crawl", ref)
    assert old[ref] == h.get_header("WARC-Payload-Digest"), ("another payload", ref)
    assert h.get_header("WARC-Refers-To-Target-URI") == h.get_header("WARC-Target-URI")
    assert h.get_header("WARC-Refers-To-Date")
    assert r.http_headers is not None and payload == b""
print(counts.get("server-not-modified", 0), counts.get("identical-payload-digest", 0), counts.get("changed-response", 0))
"#;
    let o = Command::new(python)
        .args(["-c", script])
        .arg(old)
        .arg(new)
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let counts = String::from_utf8_lossy(&o.stdout);
    let n: Vec<u64> = counts
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // Both profiles, and the changed page of each host as a response.
    assert!(
        n.len() == 3 && n[0] > 0 && n[1] > 0 && n[2] == 4,
        "{counts}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemap_lastmod_is_believed_only_while_honest() {
    let web = common::honest_and_liar().await;
    let dir = tempfile::tempdir().expect("tmp");
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(
        &seeds,
        "http://honest.test/p0.html\nhttp://liar.test/p0.html\n",
    )
    .expect("seeds");
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    let port = web.port();
    tokio::task::spawn_blocking({
        let (seeds, old) = (seeds.clone(), old.clone());
        move || {
            crawl(
                port,
                &[
                    "crawl",
                    "--seeds",
                    seeds.to_str().expect("utf-8"),
                    "--out",
                    old.to_str().expect("utf-8"),
                ],
            )
        }
    })
    .await
    .expect("joins");
    web.change("honest.test", "/p3.html");
    web.clear_records();
    let second = tokio::task::spawn_blocking({
        let (old, new) = (old.clone(), new.clone());
        move || {
            crawl(
                port,
                &[
                    "recrawl",
                    old.to_str().expect("utf-8"),
                    "--out",
                    new.to_str().expect("utf-8"),
                ],
            )
        }
    })
    .await
    .expect("joins");
    let r = &second;
    let asked: Vec<(String, String)> = web
        .requests()
        .into_iter()
        .filter(|q| q.path.starts_with("/p"))
        .map(|q| (q.host, q.path))
        .collect();
    // The honest host: its changed page is fetched; its unchanged pages
    // are not, but for the few sampled to keep its lastmod checked.
    let honest: Vec<&String> = asked
        .iter()
        .filter(|(h, _)| h == "honest.test")
        .map(|(_, p)| p)
        .collect();
    assert!(honest.iter().any(|p| *p == "/p3.html"), "{honest:?}");
    assert!(
        honest.len() <= 5,
        "unchanged pages of the honest host were asked for: {honest:?}"
    );
    assert!(
        r["skipped_by_lastmod"].as_u64().is_some_and(|n| n >= 11),
        "{second}"
    );
    // The liar's lastmod always moves; its pages come back 304: caught,
    // named, and its pages all asked for.
    assert_eq!(
        r["lastmod_untrusted_hosts"],
        serde_json::json!(["liar.test"]),
        "{second}"
    );
    assert_eq!(
        asked.iter().filter(|(h, _)| h == "liar.test").count(),
        16,
        "{asked:?}"
    );
    // What the honest host showed is remembered for the next recrawl.
    let trust = caught_lying(&new);
    assert_eq!(trust["hosts"]["honest.test"]["lies"], 0, "{trust}");
    // With the record it started from, so a fleet's workers add up.
    assert!(trust["start"].is_object(), "{trust}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_recrawl_remembers_what_its_sitemaps_said() {
    let web = common::honest_and_liar().await;
    let dir = tempfile::tempdir().expect("tmp");
    let d = |n: &str| dir.path().join(n).display().to_string();
    let (old, new) = (d("old"), d("new"));
    let port = web.port();
    let seeds = ["http://honest.test/p0.html", "http://liar.test/p0.html"];
    let first = [&["crawl", "--out", old.as_str()][..], &seeds[..]].concat();
    let first: Vec<String> = first.iter().map(|s| (*s).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        crawl(port, &first.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .expect("joins");
    web.clear_records();
    // The recrawl stops once its sitemaps are read, then goes on: what
    // they said is not forgotten.
    let (o, n) = (old.clone(), new.clone());
    let resumed = tokio::task::spawn_blocking(move || {
        let stopped = crawl(port, &["recrawl", &o, "--out", &n, "--max-pages", "4"]);
        assert_eq!(stopped["ending"], "max-pages", "{stopped}");
        crawl(port, &["crawl", "--resume", &n, "--max-pages", "1000"])
    })
    .await
    .expect("joins");
    let honest = web
        .requests()
        .into_iter()
        .filter(|q| q.host == "honest.test" && q.path.starts_with("/p"))
        .count();
    assert!(
        honest <= 4,
        "unchanged honest pages asked for again: {honest}\n{resumed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn due_revisits_only_the_pages_likely_to_have_changed() {
    let mut config = WebConfig::default();
    let spec = HostSpec {
        validators: Validators::ETag,
        ..HostSpec::default().robots("User-agent: *\n").pages(6, 3)
    };
    config.hosts.insert("site.test".into(), spec);
    let web = TestWeb::start(config).await.expect("testweb");
    let dir = tempfile::tempdir().expect("tmp");
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, "http://site.test/\n").expect("seeds");
    let d = |n: &str| dir.path().join(n).to_str().expect("utf-8").to_owned();
    let port = web.port();
    let run = |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            crawl(port, &refs)
        })
    };
    let s = seeds.to_str().expect("utf-8").to_owned();
    run(vec![
        "crawl".into(),
        "--seeds".into(),
        s,
        "--out".into(),
        d("v1"),
    ])
    .await
    .expect("joins");
    web.change("site.test", "/p1.html");
    run(vec!["recrawl".into(), d("v1"), "--out".into(), d("v2")])
        .await
        .expect("joins");
    web.change("site.test", "/p1.html");
    web.clear_records();
    let third = run(vec![
        "recrawl".into(),
        d("v2"),
        "--out".into(),
        d("v3"),
        "--due".into(),
        "--due-threshold".into(),
        "0.2".into(),
    ])
    .await
    .expect("joins");
    // Only the page that changed between the last two visits is due.
    let pages: Vec<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .map(|r| r.path)
        .collect();
    assert_eq!(pages, vec!["/p1.html".to_owned()], "{third}");
    assert_eq!(third["changed"], 1, "{third}");
    // The others are carried over: the next recrawl still knows them all.
    let v2 = pages_per_host(std::path::Path::new(&d("v2")));
    let v3 = pages_per_host(std::path::Path::new(&d("v3")));
    assert_eq!(v2, v3);
}

#[test]
fn the_demo_shows_a_recrawl() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("demo");
    let o = Command::new(env!("CARGO_BIN_EXE_mannerly"))
        .args([
            "demo",
            "--hosts",
            "6",
            "--min-delay",
            "0.1",
            "--recrawl",
            "--out",
        ])
        .arg(&out)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("recrawl of the same web")
            && text.contains("not requested (sitemap lastmod unchanged)"),
        "{text}"
    );
    assert_eq!(text.matches("violations: 0").count(), 2, "{text}");
    assert!(out.join("recrawl").join("pages.jsonl").exists());
}

/// HTTP caching on a recrawl (RFC 9111): a page still fresh by its own
/// `Cache-Control: max-age` or `Expires` is not requested, and is carried
/// into the new crawl as it was; `no-cache`, `must-revalidate` and stale
/// pages are asked for with their validators; a `no-store` page is asked
/// for again without them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recrawl_leaves_alone_what_http_caching_says_is_fresh() {
    let in_an_hour =
        mannerly_time::fmt_http_date(mannerly_time::UnixMillis::now().add_millis(3_600_000));
    let pages: [(&str, Option<(&str, String)>); 7] = [
        ("/fresh", Some(("Cache-Control", "max-age=3600".into()))),
        ("/expires", Some(("Expires", in_an_hour))),
        (
            "/nocache",
            Some(("Cache-Control", "max-age=3600, no-cache".into())),
        ),
        (
            "/mustrev",
            Some(("Cache-Control", "max-age=3600, must-revalidate".into())),
        ),
        ("/nostore", Some(("Cache-Control", "no-store".into()))),
        ("/stale", Some(("Cache-Control", "max-age=0".into()))),
        ("/plain", None),
    ];
    let links: String = pages
        .iter()
        .map(|(p, _)| format!("<a href=\"{p}\">{p}</a>"))
        .collect();
    let html = |body: String| {
        mannerly_testweb::Reply::text(format!("<html><body>{body}</body></html>"))
            .header("Content-Type", "text/html")
            .header("ETag", "\"v1\"")
    };
    let mut spec = HostSpec::default()
        .robots("User-agent: *\n")
        .route("/", vec![html(links)]);
    for (path, header) in &pages {
        let mut reply = html(format!("page {path}"));
        if let Some((name, value)) = header {
            reply = reply.header(*name, value.clone());
        }
        spec = spec.route(*path, vec![reply]);
    }
    let mut config = WebConfig::default();
    config.hosts.insert("cache.test".into(), spec);
    let web = TestWeb::start(config).await.expect("testweb");
    let dir = tempfile::tempdir().expect("tmp");
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    let port = web.port();
    let run = |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            crawl(port, &args)
        })
    };
    let s = |p: &std::path::Path| p.to_str().expect("utf-8").to_owned();
    run(vec![
        "crawl".into(),
        "http://cache.test/".into(),
        "--out".into(),
        s(&old),
    ])
    .await
    .expect("joins");
    web.clear_records();
    let second = run(vec!["recrawl".into(), s(&old), "--out".into(), s(&new)])
        .await
        .expect("joins");
    assert_eq!(second["fresh_in_cache"].as_u64(), Some(2), "{second}");
    let asked: HashMap<String, bool> = web
        .requests()
        .iter()
        .filter(|r| r.path != "/robots.txt")
        .map(|r| (r.path.clone(), r.conditional))
        .collect();
    for fresh in ["/fresh", "/expires"] {
        assert!(!asked.contains_key(fresh), "{fresh} was fresh: {asked:?}");
    }
    for revalidated in ["/", "/nocache", "/mustrev", "/stale", "/plain"] {
        assert_eq!(
            asked.get(revalidated),
            Some(&true),
            "{revalidated}: {asked:?}"
        );
    }
    assert_eq!(
        asked.get("/nostore"),
        Some(&false),
        "no validators: {asked:?}"
    );
    // Every page is in the new crawl's record, the fresh ones as they were.
    assert_eq!(pages_per_host(&new).get("cache.test"), Some(&8));
    let log = std::fs::read_to_string(new.join("log.jsonl")).expect("log");
    assert_eq!(log.matches("fresh-in-cache").count(), 2, "{log}");
}

#[test]
fn a_recrawl_never_writes_inside_the_crawl_it_revisits() {
    // OLD stays as it is: NEW may be neither OLD nor a directory in it,
    // however the path is spelt, and nothing is made there on refusal.
    let dir = tempfile::tempdir().expect("tmp");
    let old = dir.path().join("old");
    std::fs::create_dir(&old).expect("old");
    let o = old.to_str().expect("utf-8");
    let ua = "KtBot/1.0 (+https://kt.example/bot)";
    for new in [
        o.to_owned(),
        format!("{o}/new"),
        format!("{o}/../old/./deeper/new"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mannerly"))
            .args(["recrawl", o, "--out", &new, "--user-agent", ua])
            .output()
            .expect("run");
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{new}: {said}");
        assert!(
            said.contains("NEW must be a directory outside OLD"),
            "{new}: {said}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&old).expect("read").collect();
    assert!(left.is_empty(), "OLD is as it was: {left:?}");
}

/// A recrawl killed (kill -9) after catching a host's lastmod lying keeps
/// what it caught: `lastmod.json` is written as the crawl goes, and the
/// resumed recrawl spares none of that host's pages by their lastmod.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_recrawl_keeps_the_liars_it_caught() {
    let web = common::honest_and_liar().await;
    let dir = tempfile::tempdir().expect("tmp");
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, "http://liar.test/p0.html\n").expect("seeds");
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    let port = web.port();
    let path = |p: &std::path::Path| p.to_str().expect("utf-8").to_owned();
    let (s, o) = (path(&seeds), path(&old));
    tokio::task::spawn_blocking(move || crawl(port, &["crawl", "--seeds", &s, "--out", &o]))
        .await
        .expect("joins");
    web.clear_records();
    // Pages, not requests: one a kill caught in flight is asked again.
    let liar_pages = |web: &TestWeb| {
        web.requests()
            .into_iter()
            .filter(|q| q.host == "liar.test" && q.path.starts_with("/p"))
            .map(|q| q.path)
            .collect::<std::collections::HashSet<_>>()
            .len()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_mannerly"))
        .args(["recrawl", &path(&old), "--out", &path(&new)])
        .args(["--proxy", &format!("http://127.0.0.1:{port}")])
        .args(["--min-delay", "0.4", "--give-up-after", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let start = std::time::Instant::now();
    while liar_pages(&web) < 6 {
        assert!(start.elapsed().as_secs() < 60, "the recrawl did not go on");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Past the status's next write (twice a second), then killed.
    tokio::time::sleep(std::time::Duration::from_millis(1_200)).await;
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    let before = liar_pages(&web);
    assert!(before < 16, "the recrawl ended before it was killed");
    caught_lying(&new);
    let n = path(&new);
    let resumed = tokio::task::spawn_blocking(move || crawl(port, &["crawl", "--resume", &n]))
        .await
        .expect("joins");
    assert_eq!(
        resumed["lastmod_untrusted_hosts"],
        serde_json::json!(["liar.test"]),
        "{resumed}"
    );
    // None of its pages is spared by a lastmod it no longer believes (how
    // many the resumed run reaches depends on whether the kill caught a
    // request in flight, which holds the host for its timeout).
    assert_eq!(resumed["skipped_by_lastmod"], 0, "{resumed}");
}

/// A crawl's `lastmod.json`, which must count at least two lies of
/// liar.test.
fn caught_lying(crawl: &std::path::Path) -> Value {
    let trust: Value = serde_json::from_str(
        &std::fs::read_to_string(crawl.join("lastmod.json")).expect("lastmod.json"),
    )
    .expect("json");
    assert!(
        trust["hosts"]["liar.test"]["lies"]
            .as_u64()
            .is_some_and(|n| n >= 2),
        "{trust}"
    );
    trust
}
