//! A crawler's evidence against a site's log: every request matched both
//! ways; a spoofer's request in the crawler's name found; a robots.txt
//! version the crawler never saw found; a gap the log contradicts found.

use std::time::Duration;

use mannerly_audit::{
    group_bundles, Auditor, BundleState, Catalogue, EvidenceFinding, EvidenceReport, Options,
    Report, RobotsBook, Unchecked,
};
use mannerly_evidence::{
    export, Decision, Delay, DelaySource, EvidenceLog, Kind, Record, RobotsState, RobotsUsed,
    Window,
};
use mannerly_time::UnixMillis;
use sha2::Digest;

/// 2026-03-01T10:00:00Z.
const T0: u64 = 1_772_359_200_000;
const UA: &str = "ExampleBot/1.0 (+https://bot.example/)";
const ROBOTS: &str = "User-agent: *\nDisallow: /private\n";

fn record(path: &str, at_s: u64, since: Option<f64>) -> Record {
    let robots = (path != "/robots.txt").then(|| RobotsUsed {
        url: "https://a.test/robots.txt".into(),
        sha256: Some(mannerly_evidence::chain::hex(&sha2::Sha256::digest(ROBOTS))),
        fetched: Some(UnixMillis(T0).to_rfc3339_millis()),
        status: Some(200),
        state: RobotsState::Parsed,
        why: None,
    });
    Record {
        time: UnixMillis(T0 + at_s * 1000).to_rfc3339_millis(),
        url: format!("https://a.test{path}"),
        host: "a.test".into(),
        kind: if path == "/robots.txt" {
            Kind::Robots
        } else {
            Kind::Page
        },
        user_agent: UA.into(),
        decision: robots.as_ref().map(|_| Decision {
            allowed: true,
            line: None,
            rule: None,
        }),
        robots,
        delay: Delay {
            required_s: 2.0,
            source: DelaySource::CrawlDelay,
            since_previous_s: since,
        },
        ..Record::blank()
    }
}

/// The crawler's bundle: robots.txt, then /a, /b, /c two seconds apart;
/// /c claims nine.
fn bundle(dir: &std::path::Path) -> mannerly_evidence::Bundle {
    let mut log = EvidenceLog::open(dir, None, None).expect("opens");
    log.append(record("/robots.txt", 0, None)).expect("append");
    log.append(record("/a", 1, Some(1.0))).expect("append");
    log.append(record("/b", 3, Some(2.0))).expect("append");
    log.append(record("/c", 5, Some(9.0))).expect("append");
    log.checkpoint(UnixMillis(T0 + 6_000), true)
        .expect("checkpoint");
    export(&[dir.to_path_buf()], "a.test", Window::default()).expect("export")
}

fn clf(at_s: u64, path: &str, ip: &str) -> String {
    format!("{ip} - - [01/Mar/2026:10:00:{at_s:02} +0000] \"GET {path} HTTP/1.1\" 200 100 \"-\" \"{UA}\"")
}

fn audit(book: &RobotsBook, lines: &[String], bundle: mannerly_evidence::Bundle) -> EvidenceReport {
    report(book, lines, bundle)
        .bots
        .into_iter()
        .find_map(|b| b.evidence)
        .expect("the bot's evidence")
}

fn report(book: &RobotsBook, lines: &[String], bundle: mannerly_evidence::Bundle) -> Report {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut parser = mannerly_logs::detect(&refs).expect("combined");
    let options = Options {
        from_start: true,
        ..Options::default()
    };
    let mut auditor = Auditor::new(book, Catalogue::builtin(), options, 1)
        .with_evidence(group_bundles(vec![bundle]), Duration::from_secs(2));
    for l in lines {
        let entry = parser.parse(l).expect("reads").expect("a request");
        auditor.feed(0, &entry, &Unchecked);
    }
    auditor.finish()
}

fn crawler_lines() -> Vec<String> {
    vec![
        clf(0, "/robots.txt", "192.0.2.7"),
        clf(1, "/a", "192.0.2.7"),
        clf(3, "/b", "192.0.2.7"),
        clf(5, "/c", "192.0.2.7"),
    ]
}

#[test]
fn the_crawlers_own_requests_match_both_ways() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut book = RobotsBook::new();
    book.add(Some("a.test"), None, "robots.txt".into(), ROBOTS.as_bytes());
    let e = audit(&book, &crawler_lines(), bundle(dir.path()));
    assert_eq!(e.bundle, BundleState::Unsigned);
    assert_eq!((e.records, e.matched), (4, 4), "{e:?}");
    assert_eq!(
        (
            e.logged_not_in_evidence,
            e.evidence_not_in_log,
            e.robots_mismatch
        ),
        (0, 0, 0)
    );
    // /c claims 9 s after /b; the log shows 2.
    assert_eq!(e.gap_mismatch, 1, "{e:?}");
    assert!(e.summary().contains("1 claimed gap the log contradicts"));
}

#[test]
fn a_spoofer_in_the_log_is_found() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lines = crawler_lines();
    // Someone else, in the crawler's name, between its requests.
    lines.insert(3, clf(4, "/private/export", "203.0.113.9"));
    let e = audit(&RobotsBook::new(), &lines, bundle(dir.path()));
    assert_eq!((e.matched, e.logged_not_in_evidence), (4, 1), "{e:?}");
    let x = e
        .examples
        .iter()
        .find(|x| x.kind == EvidenceFinding::LoggedNotInEvidence)
        .expect("an example");
    assert_eq!(x.request, "GET /private/export");
}

#[test]
fn a_robots_txt_the_crawler_never_saw_is_found() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut book = RobotsBook::new();
    // The site says this was in force from before the crawl.
    book.add(
        Some("a.test"),
        Some(T0 as i64 - 60_000),
        "v2.txt".into(),
        b"User-agent: *\nDisallow: /\n",
    );
    let e = audit(&book, &crawler_lines(), bundle(dir.path()));
    assert_eq!(
        e.robots_mismatch, 3,
        "the three pages were judged by another file: {e:?}"
    );
    assert!(e
        .examples
        .iter()
        .any(|x| x.kind == EvidenceFinding::RobotsMismatch && x.detail.contains("v2.txt")));
}

#[test]
fn a_tampered_bundle_is_reported_invalid() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut b = bundle(dir.path());
    b.records.remove(1);
    let e = audit(&RobotsBook::new(), &crawler_lines(), b);
    assert_eq!(e.bundle, BundleState::Invalid);
    assert!(!e.refused.is_empty() && !e.is_clean());
}

#[test]
fn the_text_and_html_reports_say_it_in_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lines = crawler_lines();
    lines.push(clf(7, "/elsewhere", "203.0.113.9"));
    let r = report(&RobotsBook::new(), &lines, bundle(dir.path()));
    let text = mannerly_audit::render::text(&r);
    assert!(
        text.contains("Crawlers' evidence, checked against this log"),
        "{text}"
    );
    assert!(
        text.contains("logged request in its name it never recorded"),
        "{text}"
    );
    assert!(text.contains("UNSIGNED"), "{text}");
    let html = mannerly_audit::render::html(&r);
    assert!(
        html.contains("Crawlers&#39; evidence") || html.contains("Crawlers' evidence"),
        "{html}"
    );
    assert!(
        html.contains("GET <span class=\"w\">/elsewhere</span>"),
        "{html}"
    );
    let json = serde_json::to_value(&r).expect("json");
    let e = &json["bots"][0]["evidence"];
    assert_eq!(e["bundle"], "unsigned");
    assert_eq!(e["logged_not_in_evidence"], 1);
}

/// A crawl of an IPv6-literal host: its records name `[::1]` (as the URL
/// does), the log's absolute-form lines `[::1]:8080`; both are one host,
/// and so is the robots.txt book's `[::1]:8080`.
#[test]
fn an_ipv6_literal_host_matches_its_log_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut log = EvidenceLog::open(dir.path(), None, None).expect("opens");
    for (path, at, since) in [
        ("/robots.txt", 0, None),
        ("/a", 1, Some(1.0)),
        ("/b", 3, Some(2.0)),
    ] {
        let mut r = record(path, at, since);
        r.url = format!("http://[::1]:8080{path}");
        r.host = "[::1]".into();
        if let Some(used) = r.robots.as_mut() {
            used.url = "http://[::1]:8080/robots.txt".into();
        }
        log.append(r).expect("append");
    }
    log.checkpoint(UnixMillis(T0 + 6_000), true)
        .expect("checkpoint");
    let bundle = export(&[dir.path().to_path_buf()], "[::1]", Window::default()).expect("export");
    let mut book = RobotsBook::new();
    book.add(
        Some("[::1]:8080"),
        None,
        "robots.txt".into(),
        ROBOTS.as_bytes(),
    );
    let lines: Vec<String> = [(0, "/robots.txt"), (1, "/a"), (3, "/b")]
        .iter()
        .map(|(at, path)| clf(*at, &format!("http://[::1]:8080{path}"), "::1"))
        .collect();
    let e = audit(&book, &lines, bundle);
    assert_eq!((e.records, e.matched), (3, 3), "{e:?}");
    assert_eq!(
        (
            e.logged_not_in_evidence,
            e.evidence_not_in_log,
            e.robots_mismatch
        ),
        (0, 0, 0),
        "{e:?}"
    );
}

struct Key(ed25519_dalek::SigningKey);

impl mannerly_evidence::Signer for Key {
    fn public_key(&self) -> mannerly_evidence::PublicKey {
        use base64::Engine;
        mannerly_evidence::PublicKey {
            kty: "OKP".into(),
            crv: "Ed25519".into(),
            x: base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(self.0.verifying_key().as_bytes()),
        }
    }
    fn sign(&self, message: &[u8]) -> [u8; 64] {
        use ed25519_dalek::Signer as _;
        self.0.sign(message).to_bytes()
    }
}

/// The crawler's bundle of `bundle`, signed.
fn signed_bundle(dir: &std::path::Path) -> mannerly_evidence::Bundle {
    let key = std::sync::Arc::new(Key(ed25519_dalek::SigningKey::from_bytes(&[7; 32])));
    let mut log = EvidenceLog::open(dir, Some(key), None).expect("opens");
    for (path, at, since) in [
        ("/robots.txt", 0, None),
        ("/a", 1, Some(1.0)),
        ("/b", 3, Some(2.0)),
        ("/c", 5, Some(2.0)),
    ] {
        log.append(record(path, at, since)).expect("append");
    }
    log.checkpoint(UnixMillis(T0 + 6_000), true)
        .expect("checkpoint");
    export(&[dir.to_path_buf()], "a.test", Window::default()).expect("export")
}

/// A request in the crawler's name that its signed evidence disproves is
/// the impostor's: under spoofers with the rule it broke, never among the
/// crawler's; a request outside the bundles' time is counted apart, and
/// "matched both ways" is not said.
#[test]
fn a_request_the_evidence_disproves_is_the_impostors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nDisallow: /private\n",
    );
    let mut lines = crawler_lines();
    lines.push(clf(4, "/private/x", "203.0.113.9"));
    lines.push(clf(50, "/later", "192.0.2.7"));
    let r = report(&book, &lines, signed_bundle(dir.path()));
    let crawler = r
        .bots
        .iter()
        .find(|b| b.evidence.is_some())
        .expect("the crawler");
    assert_eq!(crawler.counts.disallowed, 0, "{crawler:?}");
    let e = crawler.evidence.as_ref().expect("evidence");
    assert_eq!(e.bundle, BundleState::Signed);
    assert_eq!((e.logged_not_in_evidence, e.outside_evidence), (1, 1));
    assert!(e
        .examples
        .iter()
        .any(|x| x.kind == EvidenceFinding::OutsideEvidence && x.request == "GET /later"));
    let spoofers: Vec<_> = r.spoofers().collect();
    assert_eq!(spoofers.len(), 1);
    assert_eq!(spoofers[0].address.as_deref(), Some("203.0.113.9"));
    assert_eq!(spoofers[0].counts.disallowed, 1);
    assert!(r.rule_breakers().all(|b| b.counts.disallowed == 0));
    let text = mannerly_audit::render::text(&r);
    assert!(!text.contains("every request matched both ways"), "{text}");
    assert!(
        text.contains("1 logged request in its name outside"),
        "{text}"
    );
    let html = mannerly_audit::render::html(&r);
    assert!(
        html.contains("203.0.113.9") && html.contains("Spoofers"),
        "{html}"
    );
}
