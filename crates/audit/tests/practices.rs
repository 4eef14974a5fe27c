//! Every crawler graded against the Crawler Best Practices on a scripted
//! log: what the log shows is met or not met, what it cannot show is "not
//! observable here", never a pass or a fail; in text, JSON and HTML.

use mannerly_audit::practices::Grade;
use mannerly_audit::{
    render, Auditor, BotReport, Catalogue, Options, Report, RobotsBook, Unchecked,
};

const GOOD: &str = "GoodBot/1.0 (+https://good.example/bot)";
const RUDE: &str = "RudeBot/2.0";

/// A combined line `at` seconds after 2026-03-01T10:00:00Z.
fn line(at: i64, ip: &str, path: &str, status: u16, ua: &str) -> String {
    format!(
        "{ip} - - [01/Mar/2026:{:02}:{:02}:{:02} +0000] \"GET {path} HTTP/1.1\" {status} 100 \"-\" \"{ua}\"",
        10 + at / 3600,
        at % 3600 / 60,
        at % 60
    )
}

fn audit(lines: &[String]) -> Report {
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nDisallow: /private\n",
    );
    audit_under(&book, lines)
}

fn audit_under(book: &RobotsBook, lines: &[String]) -> Report {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut parser = mannerly_logs::detect(&refs).expect("combined");
    let options = Options {
        from_start: true,
        ..Options::default()
    };
    let mut auditor = Auditor::new(book, Catalogue::builtin(), options, 1);
    for l in lines {
        let entry = parser.parse(l).expect("reads").expect("a request");
        auditor.feed(0, &entry, &Unchecked);
    }
    auditor.finish()
}

fn grades(b: &BotReport) -> Vec<(&'static str, Grade)> {
    b.practices.iter().map(|p| (p.practice, p.grade)).collect()
}

/// Without robots.txt the audit cannot see a disallowed request: a crawler
/// that read robots.txt is not said to have obeyed it.
#[test]
fn obeying_robots_txt_is_not_observable_without_it() {
    let g = "192.0.2.1";
    let lines = vec![
        line(0, g, "/robots.txt", 200, GOOD),
        line(10, g, "/private/a", 200, GOOD),
    ];
    let report = audit_under(&RobotsBook::new(), &lines);
    let bot = &report.bots[0];
    assert_eq!(grades(bot)[0], ("rep", Grade::NotObservable));
    assert!(
        bot.practices[0].shown.contains("no robots.txt given"),
        "{:?}",
        bot.practices[0]
    );
    // The report's first line says so, not only "No crawler broke a rule".
    let html = render::html(&report);
    assert!(
        html.contains("No <span class=\"w\">robots.txt</span> was given: disallowed paths and <span class=\"w\">Crawl-delay</span> were not judged."),
        "{html}"
    );
    // A page before robots.txt shows without it.
    let lines = vec![
        line(0, g, "/a", 200, GOOD),
        line(10, g, "/robots.txt", 200, GOOD),
    ];
    let report = audit_under(&RobotsBook::new(), &lines);
    assert_eq!(grades(&report.bots[0])[0], ("rep", Grade::NotMet));
}

/// A User-Agent that names its site without `https://`, or a contact
/// address, identifies its crawler: real crawlers do both (Twingly, Naver)
/// and are not accused; a version or a platform names nothing.
#[test]
fn a_site_or_a_contact_in_the_user_agent_identifies_the_crawler() {
    let (a, b, c) = ("192.0.2.1", "192.0.2.2", "192.0.2.3");
    let twingly = "Mozilla/5.0 (compatible; Twingly Recon; twingly.com)";
    let naver = "Mozilla/5.0 (compatible; NaverBot/1.0; nhnbot@naver.com)";
    let plain = "Jersey/2.25.1 (HttpUrlConnection 1.8.0_141)";
    let lines = vec![
        line(0, a, "/robots.txt", 200, twingly),
        line(0, b, "/robots.txt", 200, naver),
        line(0, c, "/robots.txt", 200, plain),
    ];
    let report = audit(&lines);
    let shown = |who: &str| {
        let bot = report
            .bots
            .iter()
            .find(|x| x.user_agents.iter().any(|u| u == who))
            .expect("graded");
        let p = bot.practices.iter().find(|p| p.practice == "identifiable");
        let p = p.expect("identifiable");
        (p.grade, p.shown.clone())
    };
    let (grade, text) = shown(twingly);
    assert_eq!(grade, Grade::Met, "{text}");
    assert!(
        text.contains("its site twingly.com, without http(s)://"),
        "{text}"
    );
    let (grade, text) = shown(naver);
    assert_eq!(grade, Grade::Met, "{text}");
    assert!(
        text.contains("a contact address nhnbot@naver.com, though no page"),
        "{text}"
    );
    let (grade, text) = shown(plain);
    assert_eq!(grade, Grade::NotMet, "{text}");
}

#[test]
fn each_crawler_is_graded_by_what_the_log_shows() {
    let (g, r) = ("192.0.2.1", "198.51.100.9");
    let lines = vec![
        line(0, g, "/robots.txt", 200, GOOD),
        line(10, g, "/a", 200, GOOD),
        line(20, g, "/b", 304, GOOD),
        line(30, g, "/c", 503, GOOD),
        line(400, g, "/c", 200, GOOD),
        line(0, r, "/x", 200, RUDE),
        line(5, r, "/private/y", 429, RUDE),
        line(6, r, "/private/y", 200, RUDE),
    ];
    let report = audit(&lines);
    let bot = |t: &str| report.bots.iter().find(|b| b.token == t).expect("graded");
    use Grade::{Met, NotMet, NotObservable};
    assert_eq!(
        grades(bot("GoodBot")),
        [
            ("rep", Met),
            ("identifiable", Met),
            ("back-off", Met),
            ("caching", Met),
            ("published-ranges", NotObservable),
            ("signed", NotObservable),
        ]
    );
    assert_eq!(
        grades(bot("RudeBot")),
        [
            ("rep", NotMet),
            ("identifiable", NotMet),
            ("back-off", NotMet),
            ("caching", NotObservable),
            ("published-ranges", NotObservable),
            ("signed", NotObservable),
        ]
    );
    let text = render::text(&report);
    assert!(
        text.contains("Crawler Best Practices, as this log shows them"),
        "{text}"
    );
    assert!(
        text.contains(
            "identifiable not met: no URL, site or contact address in its User-Agent: RudeBot/2.0"
        ),
        "{text}"
    );
    assert!(text.contains("signed not observable here"), "{text}");
    let html = render::html(&report);
    assert!(!html.contains("was given: disallowed paths"), "{html}");
    // RudeBot's three requests broke six rules (two disallowed paths, one
    // inside a Retry-After, three before robots.txt): three requests broke
    // rules, not six.
    let rude = bot("RudeBot");
    assert_eq!(
        (
            rude.counts.violations(),
            rude.counts.requests_breaking_rules
        ),
        (6, 3)
    );
    assert!(
        html.contains("1 crawler broke rules (3 of their requests)"),
        "{html}"
    );
    assert!(html.contains("3 requests broke rules"), "{html}");
    assert!(html.contains("3 of its 3 requests broke rules."), "{html}");
    assert!(
        html.contains(
            "<td class=\"bad\">not met<br><small>no URL, site or contact address in its <span class=\"w\">User-Agent:</span> <span class=\"w\">RudeBot/2.0</span></small></td>"
        ),
        "{html}"
    );
    let json = serde_json::to_value(&report).expect("JSON");
    let good = json["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .find(|b| b["token"] == "GoodBot")
        .expect("GoodBot");
    assert_eq!(good["practices"][3]["grade"], "met");
    assert_eq!(good["practices"][5]["grade"], "not-observable");
}

/// A crawler whose operator has its name is named once: `Hatena`, not
/// `Hatena (Hatena)`; another operator's name is still said.
#[test]
fn an_operator_named_as_its_crawler_is_not_said_twice() {
    let lines = vec![
        line(0, "192.0.2.1", "/robots.txt", 200, "Hatena Antenna/0.3"),
        line(
            0,
            "192.0.2.2",
            "/robots.txt",
            200,
            "Mozilla/5.0 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
        ),
    ];
    let text = render::text(&audit(&lines));
    assert!(text.contains("  Hatena: 1 request"), "{text}");
    assert!(!text.contains("Hatena (Hatena)"), "{text}");
    assert!(text.contains("PetalBot (Huawei)"), "{text}");
}

/// A security scanner is said to be one where it is named.
#[test]
fn a_security_scanner_is_named_as_one() {
    let nikto = "Mozilla/5.00 (Nikto/2.1.6) (Evasions:None) (Test:000003)";
    let lines = vec![line(0, "192.0.2.5", "/private/x", 404, nikto)];
    let text = render::text(&audit(&lines));
    assert!(
        text.contains("Nikto from 192.0.2.5 (security scanner): 1 request"),
        "{text}"
    );
}
