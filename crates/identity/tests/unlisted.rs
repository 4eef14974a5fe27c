//! A crawler no catalogue lists, whose User-Agent names its page, is
//! checked against the ranges that page links (its JAFAR file): its
//! requests from inside them are verified, a request from outside in its
//! name is a spoofer's. The page and the file are served by a test web.

use mannerly_audit::practices::Grade;
use mannerly_audit::{Auditor, Catalogue, Identity, Options, RobotsBook, Wants};
use mannerly_botauth::identity_check::CheckOptions;
use mannerly_identity::{Checks, ChecksConfig};
use mannerly_testweb::{HostSpec, Reply, TestWeb, WebConfig};

const UA: &str = "NewBot/1.0 (+http://op.test/bot)";

fn line(at: u32, ip: &str, path: &str) -> String {
    format!(
        "{ip} - - [01/Mar/2026:10:00:{at:02} +0000] \"GET {path} HTTP/1.1\" 200 100 \"-\" \"{UA}\""
    )
}

#[test]
fn an_unlisted_crawler_is_checked_against_the_ranges_its_page_links() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let now = mannerly_botauth::UnixMillis::now();
    let ranges = format!(
        r#"{{"creationTime":"{}","prefixes":[{{"ipv4Prefix":"203.0.113.0/24","services":["NewBot"]}},{{"ipv4Prefix":"192.0.2.0/24","services":["OtherBot"]}}]}}"#,
        now.to_rfc3339_millis()
    );
    let spec = HostSpec::default()
        .route(
            "/bot",
            vec![Reply::text("<html><head><link rel=\"client-ranges\" href=\"/ranges.json\"></head><body>NewBot</body></html>")
                .header("Content-Type", "text/html")],
        )
        .route(
            "/ranges.json",
            vec![Reply::text(ranges).header("Content-Type", "application/jafar+json; version=1.0")],
        );
    let mut config = WebConfig::default();
    config.hosts.insert("op.test".into(), spec);
    let web = rt.block_on(TestWeb::start(config)).expect("testweb");
    let cache = tempfile::tempdir().expect("tmp");
    let mut config = ChecksConfig::new(cache.path().to_owned());
    config.pages = Some(CheckOptions {
        allow_http: true,
        proxy: Some(format!("http://127.0.0.1:{}", web.port())),
        cache: Some(cache.path().join("identity")),
        ..CheckOptions::default()
    });
    let mut checks = Checks::new(config, Catalogue::builtin()).expect("checks");
    let lines = [
        line(0, "203.0.113.5", "/robots.txt"),
        line(5, "203.0.113.5", "/a"),
        line(9, "192.0.2.9", "/b"),
        line(12, "198.51.100.7", "/c"),
    ];
    let book = RobotsBook::new();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut parser = mannerly_logs::detect(&refs).expect("combined");
    let entries: Vec<_> = lines
        .iter()
        .map(|l| parser.parse(l).expect("reads").expect("a request"))
        .collect();
    let options = Options {
        from_start: true,
        ..Options::default()
    };
    let mut auditor = Auditor::new(&book, Catalogue::builtin(), options, 1);
    let wants = Wants::of(&mut auditor, &entries);
    assert_eq!(
        wants.pages,
        [("NewBot".to_owned(), "http://op.test/bot".to_owned())]
    );
    wants.prepare(&mut checks);
    for e in &entries {
        auditor.feed(0, e, &checks);
    }
    let report = auditor.finish();
    let of = |identity: Identity| -> u64 {
        report
            .bots
            .iter()
            .filter(|b| b.token == "NewBot" && b.identity == identity)
            .map(|b| b.counts.requests)
            .sum()
    };
    assert_eq!(of(Identity::Verified), 2, "{:?}", report.bots);
    // Another service's prefix and an unrelated address: not NewBot's
    // (each spoofer address a report of its own).
    assert_eq!(of(Identity::Spoofed), 2, "{:?}", report.bots);
    let verified = report
        .bots
        .iter()
        .find(|b| b.identity == Identity::Verified)
        .expect("verified");
    let grade = verified
        .practices
        .iter()
        .find(|p| p.practice == "published-ranges");
    assert_eq!(grade.map(|p| p.grade), Some(Grade::Met));
    assert!(
        checks
            .notes()
            .iter()
            .any(|n| n.contains("NewBot: 1 IP ranges linked from http://op.test/bot")),
        "said where the ranges came from"
    );
}

/// Online, `identifiable` says whether the page a crawler's User-Agent
/// names answers: a page that answers keeps it met, a 404 makes it not
/// met, and a page that cannot be reached from here accuses no one.
#[test]
fn identifiable_says_whether_the_crawlers_page_answers() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let page = |body: &str| vec![Reply::text(body).header("Content-Type", "text/html")];
    let mut config = WebConfig::default();
    config.hosts.insert(
        "good.test".into(),
        HostSpec::default().route("/bot", page("<html>GoodBot</html>")),
    );
    config.hosts.insert(
        "gone.test".into(),
        HostSpec::default().route("/bot", vec![Reply::status(404)]),
    );
    let web = rt.block_on(TestWeb::start(config)).expect("testweb");
    let cache = tempfile::tempdir().expect("tmp");
    let mut config = ChecksConfig::new(cache.path().to_owned());
    config.pages = Some(CheckOptions {
        proxy: Some(format!("http://127.0.0.1:{}", web.port())),
        cache: Some(cache.path().join("identity")),
        timeout: std::time::Duration::from_secs(2),
        ..CheckOptions::default()
    });
    let mut checks = Checks::new(config, Catalogue::builtin()).expect("checks");
    let agents = [
        ("GoodBot", "GoodBot/1.0 (+http://good.test/bot)"),
        ("GoneBot", "GoneBot/1.0 (+http://gone.test/bot)"),
        // The test web does not serve this host: the proxy fails it.
        ("FarBot", "FarBot/1.0 (+https://far.invalid/bot)"),
    ];
    let lines: Vec<String> = agents
        .iter()
        .map(|(_, ua)| {
            format!("203.0.113.5 - - [01/Mar/2026:10:00:00 +0000] \"GET /a HTTP/1.1\" 200 100 \"-\" \"{ua}\"")
        })
        .collect();
    let book = RobotsBook::new();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut parser = mannerly_logs::detect(&refs).expect("combined");
    let mut auditor = Auditor::new(&book, Catalogue::builtin(), Options::default(), 1);
    for l in &lines {
        let e = parser.parse(l).expect("reads").expect("a request");
        auditor.feed(0, &e, &checks);
    }
    let mut report = auditor.finish();
    mannerly_audit::practices::check_pages(&mut report, &mut checks);
    let grade = |token: &str| {
        let b = report.bots.iter().find(|b| b.token == token).expect(token);
        let p = b.practices.iter().find(|p| p.practice == "identifiable");
        p.map(|p| (p.grade, p.shown.clone())).expect("graded")
    };
    let (g, shown) = grade("GoodBot");
    assert_eq!(g, Grade::Met, "{shown}");
    assert!(shown.contains("its page answered 200"), "{shown}");
    let (g, shown) = grade("GoneBot");
    assert_eq!(g, Grade::NotMet, "{shown}");
    assert!(shown.contains("answered 404"), "{shown}");
    let (g, shown) = grade("FarBot");
    assert_eq!(g, Grade::Met, "{shown}");
    assert!(shown.contains("could not be asked from here"), "{shown}");
}
