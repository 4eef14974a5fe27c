//! `mannerly audit` end to end: the demo web crawled by mannerly and by a
//! rude client, audited from testweb's access log (the counts equal the
//! demo's); identities by published ranges and by reverse DNS against a
//! DNS server on 127.0.0.1; the HTML report; exit statuses.

mod common;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;

use common::mannerly;
use serde_json::Value;

/// testweb's access-log layout (`mannerly_testweb::ACCESS_LOG_FORMAT`).
const FORMAT: &str = mannerly_testweb::ACCESS_LOG_FORMAT;

/// `mannerly audit` of a demo's `out` directory, judged as the demo
/// judges: its min-delay, every Retry-After logged, the log from the start.
fn audit_demo(out: &Path, min_delay: &str) -> (Option<i32>, Value) {
    let dir = out.join("audit-robots");
    let mut args: Vec<String> = vec![
        "audit".into(),
        out.join("access.log").display().to_string(),
        "--log-format".into(),
        FORMAT.into(),
        "--min-gap".into(),
        min_delay.into(),
        "--retry-after".into(),
        "0".into(),
        "--slack".into(),
        "0.015".into(),
        "--from-start".into(),
        "--offline".into(),
        "--json".into(),
    ];
    for f in std::fs::read_dir(&dir).expect("the demo wrote its robots.txt files") {
        let path = f.expect("entry").path();
        let host = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("name")
            .to_owned();
        args.push("--robots".into());
        args.push(if host == "all-hosts" {
            path.display().to_string()
        } else {
            format!("{host}={}", path.display())
        });
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mannerly(&refs, b"");
    let text = String::from_utf8_lossy(&o.stdout);
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), v)
}

/// `mannerly audit` of a demo's log as a site owner would run it: the
/// format found by itself, the default Retry-After assumption, the demo's
/// robots.txt files and the crawler's bundles.
fn audit_with_bundles(out: &Path, log: &Path) -> (Option<i32>, Value) {
    let mut args: Vec<String> = vec![
        "audit".into(),
        log.display().to_string(),
        "--from-start".into(),
        "--offline".into(),
        "--json".into(),
    ];
    for f in std::fs::read_dir(out.join("audit-robots")).expect("robots files") {
        let path = f.expect("entry").path();
        let host = path.file_stem().and_then(|s| s.to_str()).expect("name");
        args.push("--robots".into());
        args.push(if host == "all-hosts" {
            path.display().to_string()
        } else {
            format!("{host}={}", path.display())
        });
    }
    for f in std::fs::read_dir(out.join("bundles")).expect("bundles") {
        args.push("--evidence".into());
        args.push(f.expect("entry").path().display().to_string());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = mannerly(&refs, b"");
    let text = String::from_utf8_lossy(&o.stdout);
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), v)
}

fn sum(v: &Value, key: &str) -> u64 {
    v["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .map(|b| b[key].as_u64().expect("a count"))
        .sum()
}

fn demo(out: &Path, extra: &[&str]) -> Value {
    let _ = std::fs::remove_dir_all(out);
    let mut args = vec!["demo", "--hosts", "12", "--min-delay", "0.2", "--json"];
    args.extend(["--out", out.to_str().expect("utf-8")]);
    args.extend(extra);
    let o = mannerly(&args, b"");
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&o.stderr)))
}

#[test]
fn a_polite_crawl_and_a_rude_one_audited_from_the_access_log() {
    let base = std::env::temp_dir().join(format!("mannerly-audit-demo-{}", std::process::id()));
    // mannerly's own crawl: no violation, by the demo and by the audit.
    let ours = base.join("ours");
    let d = demo(&ours, &[]);
    assert_eq!(d["violations"], 0, "{d}");
    let (code, a) = audit_demo(&ours, "0.2");
    assert_eq!(code, Some(0), "{a}");
    assert_eq!(a["bots"][0]["token"], "mannerly", "{a}");
    assert!(
        a["bots"][0]["requests"].as_u64().is_some_and(|n| n > 50),
        "{a}"
    );
    assert_eq!(a["unparsed"], 0, "{a}");
    // Audited as a site owner would, from the log and the bundles: the
    // Retry-After logged after each line is read, and where the log does
    // not have it, the one the crawler recorded is judged.
    let log = ours.join("access.log");
    let (code, a) = audit_with_bundles(&ours, &log);
    assert_eq!(code, Some(0), "{a}");
    assert_eq!(a["bots"][0]["token"], "mannerly", "{a}");
    assert_eq!(sum(&a, "ignored_retry_after"), 0, "{a}");
    let evidence = &a["bots"][0]["evidence"];
    assert_eq!(evidence["logged_not_in_evidence"], 0, "{a}");
    assert_eq!(evidence["outside_evidence"], 0, "{a}");
    let bare = ours.join("bare.log");
    let text = std::fs::read_to_string(&log).expect("log");
    let stripped: String = text
        .lines()
        .map(|l| format!("{}\n", l.rsplit_once(" \"").map_or(l, |(head, _)| head)))
        .collect();
    std::fs::write(&bare, stripped).expect("write");
    let (code, a) = audit_with_bundles(&ours, &bare);
    assert_eq!(code, Some(0), "{a}");
    assert_eq!(sum(&a, "ignored_retry_after"), 0, "{a}");
    // A rude client: every violation counted, and the same counts.
    let rude_out = base.join("rude");
    let rude = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/rude.py");
    let d = demo(&rude_out, &["--", "python3", rude.to_str().expect("utf-8")]);
    let (code, a) = audit_demo(&rude_out, "0.2");
    assert_eq!(code, Some(1), "{a}");
    let rude_bot = &a["bots"][0];
    assert_eq!(rude_bot["token"], "RudeBot", "{a}");
    assert_eq!(rude_bot["robots_fetches"], 0, "{a}");
    for (demo_key, audit_key) in [
        ("disallowed", "disallowed"),
        ("too_soon", "too_soon"),
        ("retry_after_ignored", "ignored_retry_after"),
        ("pages_while_robots_unavailable", "while_robots_unavailable"),
    ] {
        assert_eq!(
            d[demo_key].as_u64(),
            Some(sum(&a, audit_key)),
            "{demo_key}: {d}\n{a}"
        );
    }
    // /p7.html on every generated host, and hop.test's /p2.html.
    assert_eq!(sum(&a, "disallowed"), 13, "{a}");
    // Never read robots.txt: every page, on every host.
    assert_eq!(sum(&a, "before_robots"), sum(&a, "pages"), "{a}");
    let hosts_without = rude_bot["hosts"].as_array().expect("hosts").len() as u64;
    assert_eq!(d["robots_not_first"].as_u64(), Some(hosts_without), "{d}");
    // storm.test answers 429 twice with Retry-After; the client asks again at once.
    assert!(sum(&a, "ignored_retry_after") >= 2, "{a}");
    let _ = std::fs::remove_dir_all(&base);
}

/// A combined log line at second `at` of 2026-03-01T10:00:00Z.
fn line(at: u32, ip: &str, path: &str, ua: &str) -> String {
    format!(
        "{ip} - - [01/Mar/2026:10:{:02}:{:02} +0000] \"GET {path} HTTP/1.1\" 200 10 \"-\" \"{ua}\"\n",
        at / 60,
        at % 60
    )
}

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BINGBOT: &str = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";

#[test]
fn spoofers_are_told_by_published_ranges() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut log = String::new();
    for i in 0..3 {
        log += &line(i, "66.249.66.1", &format!("/a{i}"), GOOGLEBOT);
        log += &line(i, "192.0.2.66", &format!("/b{i}"), GOOGLEBOT);
    }
    let log_path = dir.path().join("access.log");
    std::fs::write(&log_path, log).expect("log");
    let ranges = dir.path().join("googlebot.json");
    std::fs::write(&ranges, r#"{"prefixes":[{"ipv4Prefix":"66.249.64.0/19"}]}"#).expect("ranges");
    let o = mannerly(
        &[
            "audit",
            log_path.to_str().expect("utf-8"),
            "--ip-ranges",
            &format!("Googlebot={}", ranges.display()),
            "--offline",
            "--json",
        ],
        b"",
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    let identity = |id: &str| {
        v["bots"]
            .as_array()
            .expect("bots")
            .iter()
            .find(|b| b["token"] == "Googlebot" && b["identity"] == id)
            .map(|b| b["requests"].as_u64().unwrap_or(0))
    };
    assert_eq!(identity("verified"), Some(3), "{v}");
    assert_eq!(identity("spoofed"), Some(3), "{v}");
    let text = mannerly(
        &[
            "audit",
            log_path.to_str().expect("utf-8"),
            "--ip-ranges",
            &format!("Googlebot={}", ranges.display()),
            "--offline",
        ],
        b"",
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Spoofers") && text.contains("Googlebot from 192.0.2.66 (spoofed, Google)"),
        "{text}"
    );
}

#[test]
fn spoofers_are_told_by_reverse_dns() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let real: IpAddr = "192.0.2.10".parse().expect("ip");
    let fake: IpAddr = "192.0.2.11".parse().expect("ip");
    let ptr = HashMap::from([
        (real, vec!["msnbot-192-0-2-10.search.msn.com."]),
        (fake, vec!["msnbot-192-0-2-10.search.msn.com."]),
    ]);
    let fwd = HashMap::from([("msnbot-192-0-2-10.search.msn.com", vec![real])]);
    let server = rt.block_on(mannerly_testsupport::dns_server(ptr, fwd));
    let dir = tempfile::tempdir().expect("tmp");
    let mut log = String::new();
    for i in 0..4 {
        log += &line(i * 10, "192.0.2.10", "/", BINGBOT);
        log += &line(i * 10, "192.0.2.11", "/", BINGBOT);
    }
    let log_path = dir.path().join("access.log");
    std::fs::write(&log_path, log).expect("log");
    // No ranges to download here: an empty list, so DNS decides.
    let ranges = dir.path().join("none.json");
    std::fs::write(&ranges, r#"{"prefixes":[]}"#).expect("ranges");
    let o = mannerly(
        &[
            "audit",
            log_path.to_str().expect("utf-8"),
            "--ip-ranges",
            &format!("bingbot={}", ranges.display()),
            "--dns",
            &server.to_string(),
            "--json",
        ],
        b"",
    );
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let ids: Vec<(String, u64)> = v["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .map(|b| {
            (
                b["identity"].as_str().unwrap_or("").to_owned(),
                b["requests"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert!(
        ids.contains(&("verified".into(), 4)) && ids.contains(&("spoofed".into(), 4)),
        "{v}"
    );
    assert!(
        v["identity_notes"]
            .to_string()
            .contains("2 addresses checked"),
        "{v}"
    );
    drop(rt);
}

#[test]
fn the_html_report_stands_alone() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut log = String::new();
    for i in 0..30 {
        log += &line(i, "192.0.2.9", &format!("/private/{i}"), "RudeBot/1.0");
    }
    let log_path = dir.path().join("access.log");
    std::fs::write(&log_path, log).expect("log");
    let robots = dir.path().join("robots.txt");
    std::fs::write(
        &robots,
        "User-agent: *\nDisallow: /private\nCrawl-delay: 10\n",
    )
    .expect("robots");
    let html = dir.path().join("report.html");
    let o = mannerly(
        &[
            "audit",
            log_path.to_str().expect("utf-8"),
            "--robots",
            robots.to_str().expect("utf-8"),
            "--offline",
            "--html",
            html.to_str().expect("utf-8"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(page.contains("<svg") && page.contains("RudeBot"));
    assert!(page.contains("width=device-width"));
    for outside in ["src=", "@import", "url("] {
        assert!(
            !page.contains(outside),
            "the page asks for something outside: {outside}"
        );
    }
    // Its links lead within itself.
    assert!(
        page.split("href=")
            .skip(1)
            .all(|rest| rest.starts_with("\"#")),
        "a link leads outside the page"
    );
}

#[test]
fn bad_input_is_named_and_exits_2() {
    let o = mannerly(&["audit", "/nonexistent/access.log", "--offline"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/access.log"));
    let o = mannerly(&["audit", "-", "--format", "bogus", "--offline"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no format is called `bogus`"));
    // Unreadable lines are counted and shown, and never stop the run; a
    // log of nothing else judged no one, so it exits 2 after its report.
    let o = mannerly(
        &["audit", "-", "--offline", "--json"],
        b"not a log line\nnor this\n",
    );
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (v["lines"].as_u64(), v["unparsed"].as_u64()),
        (Some(2), Some(2)),
        "{v}"
    );
}

#[test]
fn signed_requests_are_verified_as_of_their_time() {
    use mannerly_botauth::KeyPair;
    let dir = tempfile::tempdir().expect("tmp");
    let pair = KeyPair::from_seed([7; 32]);
    let keys = dir.path().join("keys.json");
    let jwks = serde_json::json!({ "keys": [pair.public_jwk()] });
    std::fs::write(&keys, jwks.to_string()).expect("keys");
    let t0: u64 = 1_772_359_200; // 2026-03-01T10:00:00Z
    let mut log = String::new();
    // (logged at, signed at, path signed, path logged)
    for (at, signed, path, logged) in [
        (t0, t0, "/a", "/a"),
        (t0 + 5, t0 + 5, "/b", "/b"),
        // A signature for another path: it fails.
        (t0 + 10, t0 + 10, "/c", "/other"),
        // Replayed two minutes after it expired.
        (t0 + 180, t0, "/a", "/a"),
    ] {
        log += &signed_line(&pair, at, signed, path, logged);
    }
    let log_path = dir.path().join("caddy.jsonl");
    std::fs::write(&log_path, log).expect("log");
    let o = mannerly(
        &[
            "audit",
            log_path.to_str().expect("utf-8"),
            "--wba-keys",
            keys.to_str().expect("utf-8"),
            "--offline",
            "--json",
        ],
        b"",
    );
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(v["files"][0]["format"], "caddy", "{v}");
    let count = |id: &str| signed_bot_requests(&v, id);
    assert_eq!((count("verified"), count("spoofed")), (2, 2), "{v}");
}

#[test]
fn the_audit_reads_the_lines_goaccess_reads() {
    if !Path::new("/usr/bin/goaccess").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test: apt-get install goaccess"
        );
        eprintln!("SKIPPED: /usr/bin/goaccess is missing");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let mut log = String::new();
    for i in 0..3000u32 {
        let ua = [
            GOOGLEBOT,
            BINGBOT,
            "curl/8.5.0",
            "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
        ][(i % 4) as usize];
        log += &line(
            i % 3600,
            &format!("192.0.2.{}", i % 200),
            &format!("/p/{i}"),
            ua,
        );
        if i % 500 == 0 {
            log += "a line that is no request at all\n";
        }
    }
    let path = dir.path().join("access.log");
    std::fs::write(&path, log).expect("log");
    let out = dir.path().join("goaccess.json");
    let ga = std::process::Command::new("goaccess")
        .arg(&path)
        .args(["--log-format=COMBINED", "--no-global-config", "-o"])
        .arg(&out)
        .output()
        .expect("goaccess runs");
    assert!(
        ga.status.success(),
        "{}",
        String::from_utf8_lossy(&ga.stderr)
    );
    let ga: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("json")).expect("json");
    let o = mannerly(
        &[
            "audit",
            path.to_str().expect("utf-8"),
            "--offline",
            "--json",
        ],
        b"",
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    let read = v["lines"].as_u64().expect("lines") - v["unparsed"].as_u64().expect("unparsed");
    assert_eq!(
        Some(read),
        ga["general"]["valid_requests"].as_u64(),
        "{}",
        ga["general"]
    );
    assert_eq!(
        v["unparsed"].as_u64(),
        ga["general"]["failed_requests"].as_u64(),
        "{}",
        ga["general"]
    );
}

#[test]
fn published_ranges_come_from_the_cache_when_offline() {
    let dir = tempfile::tempdir().expect("tmp");
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).expect("cache");
    // The file the audit downloads for Googlebot, as it names it in its cache.
    let url = "https://developers.google.com/static/crawling/ipranges/common-crawlers.json";
    let name: String = url
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    std::fs::write(
        cache.join(name),
        r#"{"prefixes":[{"ipv4Prefix":"66.249.64.0/19"}]}"#,
    )
    .expect("cached");
    let log_path = dir.path().join("access.log");
    std::fs::write(
        &log_path,
        line(0, "66.249.66.1", "/", GOOGLEBOT) + &line(1, "192.0.2.66", "/", GOOGLEBOT),
    )
    .expect("log");
    let o = mannerly(
        &[
            "audit",
            log_path.to_str().expect("utf-8"),
            "--cache",
            cache.to_str().expect("utf-8"),
            "--offline",
            "--json",
        ],
        b"",
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    let ids: Vec<&str> = v["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .filter_map(|b| b["identity"].as_str())
        .collect();
    assert!(ids.contains(&"verified") && ids.contains(&"spoofed"), "{v}");
    let notes = v["identity_notes"].to_string();
    assert!(
        notes.contains("IP ranges from") && notes.contains("1 of them, cached 0 h ago"),
        "{notes}"
    );
}

#[test]
fn robots_txt_versions_come_from_git() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = dir.path().join("site");
    std::fs::create_dir_all(&repo).expect("repo");
    let git = |args: &[&str], date: &str| {
        let o = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .env("GIT_COMMITTER_DATE", date)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_AUTHOR_NAME", "site")
            .env("GIT_AUTHOR_EMAIL", "site@example.invalid")
            .env("GIT_COMMITTER_NAME", "site")
            .env("GIT_COMMITTER_EMAIL", "site@example.invalid")
            .output()
            .expect("git runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    git(&["init", "-q"], "2026-03-01T00:00:00Z");
    std::fs::write(repo.join("robots.txt"), "User-agent: *\nAllow: /\n").expect("v1");
    git(&["add", "robots.txt"], "2026-03-01T00:00:00Z");
    git(&["commit", "-qm", "v1"], "2026-03-01T00:00:00Z");
    std::fs::write(repo.join("robots.txt"), "User-agent: *\nDisallow: /p/\n").expect("v2");
    git(&["commit", "-qam", "v2"], "2026-03-01T10:00:30Z");
    let mut log = String::new();
    for i in 0..60 {
        log += &line(i, "192.0.2.1", &format!("/p/{i}"), "ExampleBot/1.0");
    }
    let log_path = dir.path().join("access.log");
    std::fs::write(&log_path, log).expect("log");
    let o = mannerly(
        &[
            "audit",
            log_path.to_str().expect("utf-8"),
            "--robots-git",
            repo.to_str().expect("utf-8"),
            "--offline",
            "--json",
        ],
        b"",
    );
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    // Only the requests from 10:00:30 on, when the Disallow came in.
    assert_eq!(v["bots"][0]["disallowed"], 30, "{v}");
    assert_eq!(v["robots"].as_array().map(Vec::len), Some(2), "{v}");
}

/// A Caddy access-log line, logged at `at`, of a request for `logged`
/// signed with `pair` at `signed` for `path` (`@path` covered).
fn signed_line(
    pair: &mannerly_botauth::KeyPair,
    at: u64,
    signed: u64,
    path: &str,
    logged: &str,
) -> String {
    use mannerly_botauth::{sign_request, AgentForm, Message, SignConfig, UnixMillis};
    let msg =
        Message::new("GET", &format!("https://site.example{path}")).header("Host", "site.example");
    let mut config = SignConfig::new(
        UnixMillis(signed * 1000),
        AgentForm::dictionary("https://bot.example"),
    );
    config.extra_components = vec!["@path".into()];
    let mut h = serde_json::Map::new();
    h.insert("User-Agent".into(), serde_json::json!(["SignedBot/1.0"]));
    for (k, v) in sign_request(pair, &msg, &config).expect("signs") {
        h.insert(k, serde_json::json!([v]));
    }
    let line = serde_json::json!({
        "level": "info", "ts": at as f64, "logger": "http.log.access", "msg": "handled request",
        "request": {"remote_ip": "192.0.2.5", "client_ip": "192.0.2.5", "proto": "HTTP/2.0",
                    "method": "GET", "host": "site.example", "uri": logged, "headers": h},
        "status": 200, "size": 10, "resp_headers": {}
    });
    format!("{line}\n")
}

/// SignedBot's requests with one identity, in an audit's JSON.
fn signed_bot_requests(v: &Value, identity: &str) -> u64 {
    v["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .find(|b| b["token"] == "SignedBot" && b["identity"] == identity)
        .map_or(0, |b| b["requests"].as_u64().unwrap_or(0))
}

#[test]
fn a_logged_signature_is_checked_with_the_keys_served_at_its_time() {
    use mannerly_botauth::KeyPair;
    let dir = tempfile::tempdir().expect("tmp");
    let (old, new) = (KeyPair::from_seed([1; 32]), KeyPair::from_seed([2; 32]));
    let day = 86_400u64;
    let t0: u64 = 1_772_359_200;
    // Earlier audits saw the old key from t0 - 10 d to t0 + 1 d, then the
    // new one from t0 + 20 d: the old one was rotated out.
    let ms = |s: u64| s * 1000;
    let history = serde_json::json!({"directories": {"https://bot.example": {
    "first_checked": ms(t0 - 10 * day), "last_checked": ms(t0 + 20 * day),
    "keys": [
        {"jwk": old.public_jwk(), "first_seen": ms(t0 - 10 * day), "last_seen": ms(t0 + day)},
        {"jwk": new.public_jwk(), "first_seen": ms(t0 + 20 * day), "last_seen": ms(t0 + 20 * day)}
    ]}}});
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).expect("cache");
    std::fs::write(cache.join("key-history.json"), history.to_string()).expect("history");
    let log = [
        signed_line(&old, t0, t0, "/old-key-then", "/old-key-then"),
        signed_line(&new, t0 + 5, t0 + 5, "/new-key-then", "/new-key-then"),
        signed_line(
            &new,
            t0 + 25 * day,
            t0 + 25 * day,
            "/new-key-now",
            "/new-key-now",
        ),
        signed_line(
            &old,
            t0 + 25 * day + 5,
            t0 + 25 * day + 5,
            "/old-key-now",
            "/old-key-now",
        ),
    ]
    .concat();
    let log_path = dir.path().join("caddy.jsonl");
    std::fs::write(&log_path, log).expect("log");
    let o = mannerly(
        &[
            "audit",
            log_path.to_str().expect("utf-8"),
            "--cache",
            cache.to_str().expect("utf-8"),
            "--offline",
            "--json",
        ],
        b"",
    );
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let count = |id: &str| signed_bot_requests(&v, id);
    // Each key verifies the requests of its own time only; the others'
    // keys were not served then, so they are unverified, not spoofed.
    assert_eq!(
        (count("verified"), count("unverified"), count("spoofed")),
        (2, 2, 0),
        "{v}"
    );
}

/// A log whose lines none could be read as requests (a custom layout not
/// given) judged no one: the audit says so and exits 2, not 0 with "none".
/// An empty log is no error, and a readable one with some bad lines is read.
#[test]
fn a_log_no_line_of_which_is_read_is_an_error_not_a_clean_bill() {
    let dir = tempfile::tempdir().expect("tmp");
    let unread = dir.path().join("custom.log");
    std::fs::write(&unread, "2026-03-01 10:00:00|203.0.113.9|GET /a|200\n\n2026-03-01 10:00:01|203.0.113.9|GET /b|200\n")
        .expect("log");
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "").expect("log");
    let mixed = dir.path().join("mixed.log");
    std::fs::write(
        &mixed,
        "garbage\n203.0.113.9 - - [01/Mar/2026:10:00:00 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"ExampleBot/1.0\"\n",
    )
    .expect("log");
    let path = |p: &Path| p.to_str().expect("utf-8").to_owned();
    let o = mannerly(&["audit", "--offline", &path(&unread)], b"");
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("no line of") && said.contains("--log-format"),
        "{said}"
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("unread"),
        "the report is still printed"
    );
    for fine in [&empty, &mixed] {
        let o = mannerly(&["audit", "--offline", &path(fine)], b"");
        assert_eq!(o.status.code(), Some(0), "{fine:?}: {o:?}");
    }
    let o = mannerly(&["audit", "--offline", "--json", &path(&mixed)], b"");
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (
            v["files"][0]["requests"].as_u64(),
            v["files"][0]["unparsed"].as_u64()
        ),
        (Some(1), Some(1)),
        "{v}"
    );
}
