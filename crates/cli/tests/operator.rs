//! `mannerly operator`: the kit written from one description, served by a
//! test server and checked by `operator check`; and a broken kit (stale
//! `creationTime`, a wrong media type, a missing link, bad prefixes), each
//! problem reported.

mod common;

use mannerly_testweb::{HostSpec, Reply, TestWeb, WebConfig};
use serde_json::Value;

const DESCRIPTION: &str = r#"
token = "OpBot"
version = "2.1"
operator = "Op Ltd"
page = "https://op.test/bot"
ranges_url = "https://op.test/bot/ranges.json"
purpose = "indexes recipes for Op Search."
data_use = "Search results only; never to train AI models."
contact = "mailto:bot@op.test"
ranges = ["8.8.4.0/24", "2001:4860:4860::/48"]
key_directory = "https://op.test/.well-known/http-message-signatures-directory"
"#;

/// What the kit wrote, with its https URLs made http (the test server
/// speaks http through its proxy).
struct Kit {
    page: String,
    ranges: String,
    link: String,
}

/// `mannerly operator kit DESC --out OUT`.
fn kit(desc: &std::path::Path, out: &std::path::Path) -> std::process::Output {
    let (desc, out) = (desc.to_str().expect("utf-8"), out.to_str().expect("utf-8"));
    common::mannerly(&["operator", "kit", desc, "--out", out], b"")
}

fn write_kit(dir: &std::path::Path) -> Kit {
    let desc = dir.join("crawler.toml");
    std::fs::write(&desc, DESCRIPTION).expect("description");
    let out = dir.join("site");
    let o = kit(&desc, &out);
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        said.contains("--user-agent 'Mozilla/5.0 (compatible; OpBot/2.1; +https://op.test/bot)'"),
        "{said}"
    );
    assert!(
        said.contains("Content-Type: application/jafar+json; version=1.0"),
        "{said}"
    );
    let read = |name: &str| {
        std::fs::read_to_string(out.join(name))
            .expect("kit file")
            .replace("https://op.test", "http://op.test")
    };
    Kit {
        page: read("index.html"),
        ranges: read("ranges.json"),
        link: "<http://op.test/bot/ranges.json>; rel=\"client-ranges\"".into(),
    }
}

fn serve(kit: &Kit, ranges_type: &str) -> TestWeb {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let spec = HostSpec::default()
        .route(
            "/bot",
            vec![Reply::text(kit.page.clone())
                .header("Content-Type", "text/html; charset=utf-8")
                .header("Link", kit.link.clone())],
        )
        .route(
            "/bot/ranges.json",
            vec![Reply::text(kit.ranges.clone()).header("Content-Type", ranges_type)],
        )
        .route(
            "/.well-known/http-message-signatures-directory",
            vec![Reply::text("{\"keys\":[]}").header(
                "Content-Type",
                "application/http-message-signatures-directory+json",
            )],
        );
    let mut config = WebConfig::default();
    config.hosts.insert("op.test".into(), spec);
    let web = rt.block_on(TestWeb::start(config)).expect("testweb");
    std::mem::forget(rt);
    web
}

fn check(web: &TestWeb, subject: &str, cache: &std::path::Path) -> (Option<i32>, Value) {
    let proxy = format!("http://127.0.0.1:{}", web.port());
    let o = common::mannerly(
        &[
            "operator",
            "check",
            subject,
            "--allow-http",
            "--proxy",
            &proxy,
            "--cache",
            cache.to_str().expect("utf-8"),
            "--json",
        ],
        b"",
    );
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code(), v)
}

fn problems(v: &Value) -> String {
    v["items"]
        .as_array()
        .expect("items")
        .iter()
        .flat_map(|i| i["problems"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_kit_as_served_passes_the_check() {
    let dir = tempfile::tempdir().expect("tmp");
    let kit = write_kit(dir.path());
    let web = serve(&kit, "application/jafar+json; version=1.0");
    let cache = dir.path().join("cache");
    let ua = "Mozilla/5.0 (compatible; OpBot/2.1; +http://op.test/bot)";
    let (code, v) = check(&web, ua, &cache);
    assert_eq!(code, Some(0), "{v:#}");
    let practices: Vec<&str> = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["practice"].as_str())
        .collect();
    assert_eq!(
        practices,
        [
            "identifiable user agent",
            "crawler page",
            "published ranges",
            "signed (Web Bot Auth)"
        ]
    );
    assert!(
        v["items"][2]["found"]
            .as_str()
            .is_some_and(|f| f.contains("2 prefixes")),
        "{v:#}"
    );
    // Asked again within the hour: the answers are the cache's.
    let before = web.requests().len();
    let (code, _) = check(&web, ua, &cache);
    assert_eq!(
        (code, web.requests().len()),
        (Some(0), before),
        "no URL asked twice in an hour"
    );
}

#[test]
fn a_broken_kit_is_told_each_problem() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut kit = write_kit(dir.path());
    let stale = mannerly_time::UnixMillis::now().0 - 3 * 86_400_000;
    let stale = mannerly_time::UnixMillis(stale / 1000 * 1000)
        .to_rfc3339_millis()
        .replace(".000Z", "Z");
    let v: Value = serde_json::from_str(&kit.ranges).expect("JAFAR");
    kit.ranges = serde_json::json!({
        "creationTime": stale,
        "prefixes": [v["prefixes"][0], {"ipv4Prefix": "10.0.0.0/8"}, {"ipv4Prefix": "8.8.8.0/24", "ipv6Prefix": "2001:db8::/32"}],
    })
    .to_string();
    // The header gone; the page's own link still leads to the file.
    kit.link = "</other>; rel=\"next\"".into();
    let web = serve(&kit, "application/json");
    let (code, v) = check(&web, "http://op.test/bot", &dir.path().join("cache"));
    assert_eq!(code, Some(1), "{v:#}");
    let said = problems(&v);
    for expected in [
        "no product token known to look for",
        "not application/jafar+json; version=1.0",
        "is 72 h old",
        "overlaps private space (10.0.0.0/8)",
        "prefixes[2] has both or neither",
    ] {
        assert!(said.contains(expected), "{expected}:\n{said}");
    }
    // A page that links no ranges at all.
    kit.page = kit.page.replace("rel=\"client-ranges\"", "rel=\"x\"");
    let web = serve(&kit, "application/jafar+json");
    let (code, v) = check(
        &web,
        "Mozilla/5.0 (compatible; OpBot/2.1; +http://op.test/bot)",
        &dir.path().join("c2"),
    );
    assert_eq!(code, Some(1), "{v:#}");
    assert!(
        problems(&v).contains("the page links no IP ranges"),
        "{v:#}"
    );
    // A page that cannot be had: not checked, exit 2.
    let (code, v) = check(
        &web,
        "Mozilla/5.0 (compatible; OpBot/2.1; +http://gone.test/bot)",
        &dir.path().join("c3"),
    );
    assert_eq!(code, Some(2), "{v:#}");
    // https only, unless allowed.
    let o = common::mannerly(
        &[
            "operator",
            "check",
            "http://op.test/bot",
            "--json",
            "--cache",
            dir.path().join("c4").to_str().expect("utf-8"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stdout).contains("https only"));
}

/// A description the kit refuses: exit 2, each problem said, nothing
/// written.
fn refused_description(text: &str, says: &[&str]) {
    let dir = tempfile::tempdir().expect("tmp");
    let desc = dir.path().join("bad.toml");
    std::fs::write(&desc, text).expect("description");
    let out = dir.path().join("site");
    let o = kit(&desc, &out);
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{said}");
    for says in says {
        assert!(said.contains(says), "{says}: {said}");
    }
    assert!(!out.exists(), "nothing written");
}

#[test]
fn a_description_with_gaps_writes_nothing() {
    refused_description(
        &DESCRIPTION
            .replace("https://op.test/bot\"", "http://op.test/bot\"")
            .replace("8.8.4.0/24", "192.168.1.0/24"),
        &[
            "page \"http://op.test/bot\": an https URL is needed",
            "ranges: 192.168.1.0/24 overlaps private space",
        ],
    );
}

#[test]
fn a_description_whose_urls_would_break_what_is_published_writes_nothing() {
    // The page goes as written into the User-Agent's comment, the HTML and
    // the Link header: a quote, a space or a ')' there forges or cuts them.
    refused_description(
        &DESCRIPTION
            .replace("\"2.1\"", "\"2.1; evil\"")
            .replace("https://op.test/bot\"", "https://op.test/bot(1)\"")
            .replace("bot/ranges.json", "bot/ranges \\\"x\\\">.json")
            .replace("https://op.test/.well-known", "op.test/.well-known"),
        &[
            "version \"2.1; evil\": letters, digits",
            "page \"https://op.test/bot(1)\": percent-encode '(', ')' and ';'",
            "ranges_url \"https://op.test/bot/ranges \\\"x\\\">.json\": percent-encode",
            "key_directory \"op.test/.well-known/http-message-signatures-directory\": an https URL",
        ],
    );
}

#[test]
fn an_http_librarys_name_is_no_crawlers_own_token() {
    let dir = tempfile::tempdir().expect("tmp");
    let kit = write_kit(dir.path());
    let web = serve(&kit, "application/jafar+json; version=1.0");
    let ua = "python-requests/2.31.0 (+http://op.test/bot)";
    let (code, v) = check(&web, ua, &dir.path().join("cache"));
    assert_eq!(code, Some(1), "{v:#}");
    assert_eq!(v["items"][0]["status"], "problem", "{v:#}");
    assert!(
        problems(&v).contains("`python-requests` names an HTTP library or tool"),
        "{v:#}"
    );
}
