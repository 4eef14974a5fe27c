//! Verdicts a site owner can trust, on scripted logs: each client judged
//! as what it is (anonymous clients per address; feed readers, link
//! previews and monitors listed, not judged), by what it is known to read
//! (Google and Crawl-delay), for what the log can show (a verified
//! crawler's robots.txt read counts for its operator's others), and
//! spoofers' deeds kept the spoofers'; a request with credentials the
//! server accepted is the site's own user, never judged. `--strict`
//! judges them all.

mod common;

use common::{GoogleRanges, GOOGLEBOT};
use mannerly_audit::{
    render, Auditor, BotKind, Catalogue, Identify, Identity, Options, Report, RobotsBook, Unchecked,
};

const GOOGLEBOT_IMAGE: &str = "Googlebot-Image/1.0";

/// A combined line `at` seconds after 2026-03-01T10:00:00Z.
fn line(at: i64, ip: &str, path: &str, ua: &str) -> String {
    let s = at.rem_euclid(86_400);
    format!(
        "{ip} - - [01/Mar/2026:{:02}:{:02}:{:02} +0000] \"GET {path} HTTP/1.1\" 200 100 \"-\" \"{ua}\"",
        10 + s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

fn book() -> RobotsBook {
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nDisallow: /private\nCrawl-delay: 10\n",
    );
    book
}

fn audit(lines: &[String], strict: bool, identify: &dyn Identify) -> Report {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let parser = mannerly_logs::detect(&refs).expect("combined");
    audit_read(parser, lines, strict, identify, &book())
}

/// [`audit`], the lines read by `parser`, judged against `book`.
fn audit_read(
    mut parser: mannerly_logs::Parser,
    lines: &[String],
    strict: bool,
    identify: &dyn Identify,
    book: &RobotsBook,
) -> Report {
    let options = Options {
        from_start: true,
        strict,
        ..Options::default()
    };
    let mut auditor = Auditor::new(book, Catalogue::builtin(), options, 1);
    for l in lines {
        let entry = parser.parse(l).expect("reads").expect("a request");
        auditor.feed(0, &entry, identify);
    }
    auditor.finish()
}

#[test]
fn anonymous_clients_are_judged_each_on_its_own() {
    // Fifty addresses with no User-Agent, each one request, in one second.
    let lines: Vec<String> = (0..50)
        .map(|i| line(0, &format!("198.51.100.{i}"), "/", "-"))
        .collect();
    let r = audit(&lines, false, &Unchecked);
    assert_eq!(r.bots.len(), 50, "one client per address");
    assert!(r
        .bots
        .iter()
        .all(|b| b.kind == BotKind::Anonymous && b.clients == 1));
    assert_eq!(r.violations(), 0);
    // Judged strictly, none is too soon: no gap between two addresses.
    let r = audit(&lines, true, &Unchecked);
    assert_eq!(r.bots.iter().map(|b| b.counts.too_soon).sum::<u64>(), 0);
    let text = render::text(&r);
    assert!(text.contains("no User-Agent from 198.51.100.7"), "{text}");
}

/// Without a robots.txt the report does not say a crawler kept the rules
/// it was never judged by.
#[test]
fn crawlers_are_not_vouched_for_without_a_robots_txt() {
    let lines: Vec<String> = (0..3)
        .map(|s| {
            line(
                s * 60,
                "192.0.2.9",
                "/private/x",
                "ExampleBot/1.0 (+https://example.org/bot)",
            )
        })
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let parser = mannerly_logs::detect(&refs).expect("combined");
    let r = audit_read(parser, &lines, false, &Unchecked, &RobotsBook::new());
    let text = render::text(&r);
    assert!(!text.contains("kept the rules"), "{text}");
    assert!(
        text.contains("Crawlers with nothing against them (no robots.txt given"),
        "{text}"
    );
    assert!(text.contains("ExampleBot"), "{text}");
    // With one, read first, the same crawler kept it.
    let ua = "ExampleBot/1.0 (+https://example.org/bot)";
    let kept = [
        line(0, "192.0.2.9", "/robots.txt", ua),
        line(30, "192.0.2.9", "/", ua),
    ];
    let text = render::text(&audit(&kept, false, &Unchecked));
    assert!(
        text.contains("Crawlers that kept the rules:\n  ExampleBot"),
        "{text}"
    );
}

#[test]
fn feed_readers_previews_and_monitors_are_listed_not_judged() {
    let agents = [
        "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
        "Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
        "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
    ];
    let mut lines = Vec::new();
    for (i, ua) in agents.iter().enumerate() {
        for s in 0..3 {
            lines.push(line(s, &format!("192.0.2.{i}"), "/private/feed.xml", ua));
        }
    }
    let r = audit(&lines, false, &Unchecked);
    assert_eq!(r.violations(), 0, "{}", render::text(&r));
    assert_eq!(r.rule_breakers().count(), 0);
    let kinds: Vec<BotKind> = r.bots.iter().map(|b| b.kind).collect();
    for k in [BotKind::Monitor, BotKind::FeedReader, BotKind::LinkPreview] {
        assert!(kinds.contains(&k), "{kinds:?}");
    }
    let text = render::text(&r);
    assert!(
        text.contains("Feed readers (fetch the feeds people subscribed to):"),
        "{text}"
    );
    assert!(text.contains("Monitors ("), "{text}");
    assert!(
        !text.contains("FeedFetcher-Google"),
        "Feedly is not Google's: {text}"
    );
    // Asked to judge strictly, they are held to robots.txt like crawlers.
    let strict = audit(&lines, true, &Unchecked);
    assert!(strict.violations() >= 12, "{}", render::text(&strict));
}

#[test]
fn googlebot_is_not_charged_for_a_crawl_delay_google_documents_it_ignores() {
    let mut lines = vec![line(0, "66.249.66.1", "/robots.txt", GOOGLEBOT)];
    for s in 1..6 {
        lines.push(line(s, "66.249.66.1", &format!("/p{s}"), GOOGLEBOT));
    }
    let r = audit(&lines, false, &GoogleRanges);
    let g = &r.bots[0];
    assert_eq!(
        (g.token.as_str(), g.identity),
        ("Googlebot", Identity::Verified)
    );
    assert_eq!(g.counts.too_soon, 0);
    assert_eq!(g.counts.under_ignored_delay, 4);
    assert!(g.ignores.contains_key("crawl-delay"));
    let text = render::text(&r);
    assert!(
        text.contains("ignores Crawl-delay, as its operator documents"),
        "{text}"
    );
    assert!(render::html(&r)
        .contains("ignores <span class=\"w\">Crawl-delay,</span> as its operator documents"));
    let strict = audit(&lines, true, &GoogleRanges);
    assert_eq!(strict.bots[0].counts.too_soon, 4);
}

#[test]
fn a_verified_crawlers_robots_read_counts_for_its_operators_others() {
    let lines = vec![
        line(0, "66.249.66.1", "/robots.txt", GOOGLEBOT),
        line(20, "66.249.66.2", "/img/a.png", GOOGLEBOT_IMAGE),
        // The same name from elsewhere: a spoofer, who read nothing.
        line(40, "203.0.113.9", "/img/b.png", GOOGLEBOT_IMAGE),
    ];
    let r = audit(&lines, false, &GoogleRanges);
    let image = r
        .bots
        .iter()
        .find(|b| b.token == "Googlebot-Image" && b.identity == Identity::Verified)
        .expect("verified Googlebot-Image");
    assert_eq!(
        image.counts.before_robots, 0,
        "Googlebot read it for Google"
    );
    let spoofer = r.spoofers().next().expect("the spoofer");
    assert_eq!(spoofer.counts.before_robots, 1);
}

#[test]
fn an_unchecked_crawler_is_not_blamed_for_a_read_another_of_its_addresses_made() {
    // Google reads robots.txt from one address and fetches pages from
    // others. Unchecked (offline, no ranges), each address answers for
    // its own requests, but the read counts for every address using the
    // name: the real Googlebot is never blamed for not reading it.
    let lines = vec![
        line(0, "66.249.66.1", "/robots.txt", GOOGLEBOT),
        line(20, "66.249.66.2", "/a", GOOGLEBOT),
        line(40, "66.249.66.3", "/b", GOOGLEBOT_IMAGE),
    ];
    let r = audit(&lines, false, &Unchecked);
    assert_eq!(r.violations(), 0, "{}", render::text(&r));
    assert_eq!(r.bots.len(), 3, "each address on its own");
    // Checked, the same log: verified, the read is the operator's.
    assert_eq!(audit(&lines, false, &GoogleRanges).violations(), 0);
    // With no read by anyone using the name, the pages are still blamed.
    let r = audit(&lines[1..], false, &Unchecked);
    assert_eq!(
        r.bots.iter().map(|b| b.counts.before_robots).sum::<u64>(),
        2
    );
    // A spoofer's read counts only for itself; checked, the spoofer's
    // pages after the real crawler's read are still blamed.
    let spoofed = vec![
        line(0, "66.249.66.1", "/robots.txt", GOOGLEBOT),
        line(20, "203.0.113.9", "/c", GOOGLEBOT),
        line(30, "203.0.113.8", "/robots.txt", GOOGLEBOT),
        line(40, "66.249.66.2", "/d", GOOGLEBOT),
    ];
    let r = audit(&spoofed, false, &GoogleRanges);
    let blamed: Vec<(&str, u64)> = r
        .bots
        .iter()
        .filter(|b| b.counts.before_robots > 0)
        .map(|b| (b.address.as_deref().unwrap_or("-"), b.counts.before_robots))
        .collect();
    assert_eq!(blamed, [("203.0.113.9", 1)]);
}

#[test]
fn a_spoofers_deeds_are_the_spoofers_and_an_unchecked_name_says_so() {
    let lines = vec![
        line(0, "66.249.66.1", "/robots.txt", GOOGLEBOT),
        line(20, "66.249.66.1", "/a", GOOGLEBOT),
        line(30, "203.0.113.9", "/robots.txt", GOOGLEBOT),
        line(31, "203.0.113.9", "/private/x", GOOGLEBOT),
    ];
    let r = audit(&lines, false, &GoogleRanges);
    assert_eq!(
        r.rule_breakers().count(),
        0,
        "the real Googlebot broke nothing"
    );
    let spoofers: Vec<_> = r.spoofers().collect();
    assert_eq!(spoofers.len(), 1);
    assert_eq!(spoofers[0].counts.disallowed, 1);
    let text = render::text(&r);
    let section = text
        .split("Spoofers (claimed a crawler, failed its operator's check):")
        .nth(1)
        .expect("a spoofers section");
    assert!(
        section.contains("Googlebot from 203.0.113.9 (spoofed, Google)"),
        "{text}"
    );
    assert!(section.contains("/private/x"), "{text}");
    let html = render::html(&r);
    assert!(
        html.contains("<h2 id=\"spoofers\">Spoofers") && html.contains("203.0.113.9"),
        "{html}"
    );
    let json = serde_json::to_value(&r).expect("json");
    assert!(json["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .any(|b| b["identity"] == "spoofed" && b["disallowed"] == 1));
    // With no way to check, the same log names the rule-breaker as
    // Googlebot, and says its identity was not checked; each address
    // answers for its own requests, as the check would have parted them,
    // so the real Googlebot's address is not charged with the other's.
    let r = audit(&lines, false, &Unchecked);
    let text = render::text(&r);
    assert!(
        text.contains("identity not checked (no ranges, keys or DNS answer)"),
        "{text}"
    );
    let breakers: Vec<_> = r.rule_breakers().collect();
    assert_eq!(breakers.len(), 1, "{text}");
    assert_eq!(breakers[0].address.as_deref(), Some("203.0.113.9"));
    assert_eq!(breakers[0].identity, Identity::Unverified);
    let real = r
        .bots
        .iter()
        .find(|b| b.address.as_deref() == Some("66.249.66.1"))
        .expect("the other address, on its own");
    assert_eq!(real.counts.violations(), 0, "{text}");
}

#[test]
fn a_request_the_server_authenticated_is_the_sites_own_user() {
    let with_user = |at: i64, user: &str, status: u16| {
        line(at, "192.0.2.80", "/private/report", "ExampleBot/1.0")
            .replacen(" - - [", &format!(" - {user} ["), 1)
            .replacen("\" 200 100 ", &format!("\" {status} 100 "), 1)
    };
    // The same crawler's User-Agent fetching a disallowed path, one second
    // apart: signed in, it is the site's own (a monitor given a password,
    // the owner's script), so neither the path nor the pace is judged.
    let signed: Vec<String> = (0..3).map(|i| with_user(i, "alice", 200)).collect();
    let r = audit(&signed, false, &Unchecked);
    assert_eq!((r.bots.len(), r.signed_in_requests), (0, 3));
    assert_eq!(r.violations(), 0);
    // Listed by User-Agent: a client that invents a name to pass (nginx
    // logs a Basic name as sent, checked or not) is seen.
    let by_agent: Vec<(&str, u64)> = r
        .signed_in
        .iter()
        .map(|s| (s.user_agent.as_str(), s.requests))
        .collect();
    assert_eq!(by_agent, [("ExampleBot/1.0", 3)]);
    let text = render::text(&r);
    assert!(
        text.contains("signed in: 3 requests") && text.contains("    ExampleBot/1.0: 3 requests"),
        "{text}"
    );
    let html = render::html(&r);
    assert!(
        html.contains("by User-Agent, <span class=\"w\">ExampleBot/1.0</span>: 3"),
        "{html}"
    );
    // A name the server refused (401) is anyone's claim: judged.
    let refused: Vec<String> = (0..3).map(|i| with_user(i, "alice", 401)).collect();
    let r = audit(&refused, false, &Unchecked);
    assert_eq!(r.signed_in_requests, 0);
    assert!(r.violations() > 0, "the refused requests were not judged");
    // Without a user the same lines are a crawler's, and break the rules.
    let anonymous: Vec<String> = (0..3)
        .map(|i| line(i, "192.0.2.80", "/private/report", "ExampleBot/1.0"))
        .collect();
    assert!(audit(&anonymous, false, &Unchecked).violations() > 0);
    // Strict judges the signed-in ones too.
    let r = audit(&signed, true, &Unchecked);
    assert_eq!(r.signed_in_requests, 0);
    assert!(r.violations() > 0);
}

#[test]
fn a_log_that_shows_no_retry_after_was_sent_opens_no_window() {
    // A 503, then the same crawler again 10 s later.
    let layout = |ra: bool| {
        let tail = if ra {
            r#" "$sent_http_retry_after""#
        } else {
            ""
        };
        mannerly_logs::Layout::Nginx(format!(
            r#"$remote_addr - - [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"{tail}"#
        ))
    };
    let lines = |ra: &str| {
        [(0, "/robots.txt", 200), (5, "/a", 503), (15, "/b", 200)].map(|(at, path, status)| {
            line(at, "192.0.2.50", path, "ExampleBot/1.0").replacen(
                " 200 100 ",
                &format!(" {status} 100 "),
                1,
            ) + ra
        })
    };
    let audit_with = |layout: mannerly_logs::Layout, lines: &[String]| {
        let parser = mannerly_logs::Parser::layout(&layout).expect("a layout");
        audit_read(parser, lines, false, &Unchecked, &book())
    };
    let ignored = |r: &Report| {
        r.bots
            .iter()
            .map(|b| b.counts.ignored_retry_after)
            .sum::<u64>()
    };
    // The layout logs Retry-After, and the server sent none: no wait was
    // asked for, so none was ignored.
    let r = audit_with(layout(true), &lines(r#" "-""#));
    assert_eq!(ignored(&r), 0, "{}", render::text(&r));
    // It sent 60: the return after 10 s ignored it.
    assert_eq!(ignored(&audit_with(layout(true), &lines(r#" "60""#))), 1);
    // A layout that cannot tell: the wait is assumed (--retry-after), and
    // the report says so.
    let r = audit_with(layout(false), &lines(""));
    assert_eq!(ignored(&r), 1);
    assert!(render::text(&r).contains("the wait assumed"));
}
