//! Server rules that cannot lock out a person or a good crawler, chosen
//! from scripted logs: a rule only for what a verdict proves and only
//! against its author; never by `-`, a library or a generic word; a
//! verifiable crawler refused by token only for its own addresses'
//! deeds, its spoofers by token and address; nothing a crawler's operator
//! documents it ignores, and no feed reader, unless asked; and no rule
//! that would refuse a verified request.

mod common;

use common::{GoogleRanges, GOOGLEBOT};
use mannerly_audit::rules::{
    render, rules_of, Deny, Include, RuleOptions, Rules, Server, MAX_EXPRESSION,
};
use mannerly_audit::{
    Auditor, BotKind, Catalogue, Identify, Identity, Options, Report, RobotsBook, Unchecked,
};

const BADBOT: &str = "Mozilla/5.0 (compatible; BadBot/1.0; +https://bad.example/)";
const FEEDLY: &str = "Feedly/1.0 (+http://www.feedly.com/fetcher.html; 3 subscribers)";
const ANDROID: &str = "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36";

fn line(at: i64, ip: &str, path: &str, ua: &str) -> String {
    format!(
        "{ip} - - [01/Mar/2026:10:{:02}:{:02} +0000] \"GET {path} HTTP/1.1\" 200 100 \"-\" \"{ua}\"",
        at / 60,
        at % 60
    )
}

fn audit(lines: &[String], options: Options, identify: &dyn Identify) -> Report {
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nDisallow: /private\nCrawl-delay: 10\n",
    );
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut parser = mannerly_logs::detect(&refs).expect("combined");
    let options = Options {
        from_start: true,
        ..options
    };
    let mut auditor = Auditor::new(&book, Catalogue::builtin(), options, 1);
    for l in lines {
        let entry = parser.parse(l).expect("reads").expect("a request");
        auditor.feed(0, &entry, identify);
    }
    auditor.finish()
}

fn google_ranges(token: &str) -> Option<Vec<String>> {
    token
        .to_ascii_lowercase()
        .starts_with("googlebot")
        .then(|| vec!["66.249.64.0/19".to_owned()])
}

fn no_ranges(_: &str) -> Option<Vec<String>> {
    None
}

fn sorts(r: &Rules) -> Vec<&'static str> {
    r.rules.iter().map(|r| r.deny.sort()).collect()
}

/// A log holding everything a careless rule writer would refuse.
fn the_log() -> Vec<String> {
    let mut l = Vec::new();
    for i in 0..20 {
        // Anonymous clients and curl, each hammering a disallowed path.
        l.push(line(i, &format!("198.51.100.{i}"), "/private/x", "-"));
        l.push(line(
            i,
            &format!("198.51.100.{}", 100 + i),
            "/private/x",
            "curl/8.5.0",
        ));
        // The real Googlebot, every second under a Crawl-delay of 10.
        l.push(line(
            i,
            "66.249.66.1",
            if i == 0 { "/robots.txt" } else { "/a" },
            GOOGLEBOT,
        ));
    }
    // Spoofers in Googlebot's name; BadBot; a feed reader; a browser.
    l.push(line(30, "203.0.113.9", "/private/y", GOOGLEBOT));
    l.push(line(31, "192.0.2.7", "/robots.txt", BADBOT));
    l.push(line(32, "192.0.2.7", "/private/z", BADBOT));
    l.push(line(33, "192.0.2.8", "/private/f", FEEDLY));
    l.push(line(34, "192.0.2.9", "/private/b", ANDROID));
    l.sort_by_key(|x| x[x.find('[').unwrap_or(0)..].to_owned());
    l
}

#[test]
fn rules_refuse_the_spoofer_and_the_rule_breaker_and_no_one_else() {
    let report = audit(&the_log(), Options::default(), &GoogleRanges);
    let rules = rules_of(&report, &google_ranges, &RuleOptions::default());
    assert_eq!(sorts(&rules), ["token", "spoofer"], "{rules:#?}");
    let refused = |ua: &str, ip: &str, path: &str| rules.refuses(ua, ip.parse().ok(), path);
    assert!(refused(BADBOT, "192.0.2.200", "/"));
    assert!(refused("badbot", "192.0.2.200", "/"));
    assert!(!refused(BADBOT, "192.0.2.200", "/robots.txt"));
    assert!(!refused("NotBadBot/1.0", "192.0.2.200", "/"));
    assert!(refused(GOOGLEBOT, "203.0.113.50", "/"));
    assert!(!refused(GOOGLEBOT, "203.0.113.50", "/robots.txt"));
    assert!(
        !refused(GOOGLEBOT, "66.249.66.1", "/"),
        "the real Googlebot"
    );
    for ua in [ANDROID, "-", "", "curl/8.5.0", FEEDLY, "git/2.43.0"] {
        assert!(!refused(ua, "198.51.100.1", "/private/x"), "{ua}");
    }
    assert!(rules.warnings.is_empty(), "{:?}", rules.warnings);
    // Judged strictly, what each of the others broke is said, not refused.
    let strict = Options {
        strict: true,
        ..Options::default()
    };
    let report = audit(&the_log(), strict, &GoogleRanges);
    let options = RuleOptions {
        strict: true,
        ..RuleOptions::default()
    };
    let rules = rules_of(&report, &google_ranges, &options);
    assert_eq!(sorts(&rules), ["token", "spoofer"], "{rules:#?}");
    let why: Vec<_> = rules
        .passed_over
        .iter()
        .map(|p| (p.who.as_str(), p.reason))
        .collect();
    assert!(
        why.iter()
            .any(|(w, r)| w.starts_with("- at ") && r.contains("--rules-include anonymous")),
        "{why:#?}"
    );
    assert!(
        why.iter().any(|(w, _)| w.starts_with("curl at ")),
        "{why:#?}"
    );
    assert!(
        why.iter()
            .any(|(w, r)| w.starts_with("Feedly") && r.contains("not a crawler")),
        "{why:#?}"
    );
    assert!(rules.warnings.is_empty(), "{:?}", rules.warnings);
}

#[test]
fn a_crawl_delay_its_operator_ignores_makes_no_rule_even_strictly_unless_asked() {
    let strict = Options {
        strict: true,
        ..Options::default()
    };
    let report = audit(&the_log(), strict, &GoogleRanges);
    let google = report
        .bots
        .iter()
        .find(|b| b.token == "Googlebot" && b.identity == Identity::Verified)
        .expect("verified Googlebot");
    assert!(google.counts.too_soon > 0, "strict charges it");
    let options = RuleOptions {
        strict: true,
        ..RuleOptions::default()
    };
    let rules = rules_of(&report, &google_ranges, &options);
    assert!(
        !rules
            .rules
            .iter()
            .any(|r| matches!(&r.deny, Deny::Token { token, .. } if token == "Googlebot")),
        "{rules:#?}"
    );
    assert!(rules
        .passed_over
        .iter()
        .any(|p| p.who.starts_with("Googlebot") && p.reason.contains("--rules-include ignored")));
    let asked = RuleOptions {
        strict: true,
        include: vec![Include::Ignored],
    };
    let rules = rules_of(&report, &google_ranges, &asked);
    assert!(rules
        .rules
        .iter()
        .any(|r| matches!(&r.deny, Deny::Token { token, .. } if token == "Googlebot")));
}

#[test]
fn without_ranges_a_verifiable_crawler_gets_no_rule_by_token() {
    // No check made: Googlebot's deeds may be anyone's.
    let mut lines = the_log();
    lines.push(line(40, "66.249.66.1", "/private/g", GOOGLEBOT));
    let report = audit(&lines, Options::default(), &Unchecked);
    let rules = rules_of(&report, &no_ranges, &RuleOptions::default());
    assert_eq!(sorts(&rules), ["token"], "BadBot only: {rules:#?}");
    assert!(!rules.refuses(GOOGLEBOT, "66.249.66.1".parse().ok(), "/"));
    assert!(rules
        .passed_over
        .iter()
        .any(|p| p.who.starts_with("Googlebot") && p.reason.contains("--ip-ranges")));
    // Spoofed, but no ranges for a server to check: no rule either.
    let report = audit(&the_log(), Options::default(), &GoogleRanges);
    let rules = rules_of(&report, &no_ranges, &RuleOptions::default());
    assert_eq!(sorts(&rules), ["token"]);
    assert!(rules
        .passed_over
        .iter()
        .any(|p| p.reason.contains("no published address ranges")));
}

#[test]
fn asked_for_anonymous_clients_are_refused_by_address_and_feed_readers_by_token() {
    let include = vec![Include::Anonymous, Include::FeedReader];
    let options = Options {
        judge_also: include
            .iter()
            .flat_map(|i| i.kinds().iter().copied())
            .collect(),
        ..Options::default()
    };
    let report = audit(&the_log(), options, &GoogleRanges);
    let rules = rules_of(
        &report,
        &google_ranges,
        &RuleOptions {
            include,
            strict: false,
        },
    );
    let addresses = rules
        .rules
        .iter()
        .filter(|r| r.deny.sort() == "address")
        .count();
    assert_eq!(addresses, 40, "20 anonymous and 20 curl addresses");
    assert!(rules.refuses("-", "198.51.100.3".parse().ok(), "/"));
    assert!(!rules.refuses("-", "198.51.100.3".parse().ok(), "/robots.txt"));
    assert!(!rules.refuses("-", "198.51.100.250".parse().ok(), "/"));
    assert!(rules.refuses(FEEDLY, "192.0.2.100".parse().ok(), "/"));
    // An address two clients broke the rules from is one rule.
    let mut shared = the_log();
    shared.push(line(50, "198.51.100.3", "/private/q", "curl/8.5.0"));
    let options = Options {
        judge_also: Include::Anonymous.kinds().to_vec(),
        ..Options::default()
    };
    let report = audit(&shared, options, &GoogleRanges);
    let asked = RuleOptions {
        include: vec![Include::Anonymous],
        strict: false,
    };
    let rules = rules_of(&report, &google_ranges, &asked);
    let at = |ip: &str| {
        rules
            .rules
            .iter()
            .filter(|r| r.deny == Deny::Address(ip.parse().expect("ip")))
            .count()
    };
    assert_eq!(at("198.51.100.3"), 1, "{rules:#?}");
    assert!(!rules.refuses(ANDROID, "192.0.2.100".parse().ok(), "/"));
    assert!(report
        .bots
        .iter()
        .any(|b| b.kind == BotKind::Anonymous && b.counts.violations() > 0));
}

#[test]
fn a_rule_that_would_refuse_a_verified_crawler_is_not_written() {
    // ShopBot broke robots.txt; the real Googlebot's User-Agent also
    // names ShopBot. Refusing ShopBot by token would refuse Googlebot.
    let both = "Mozilla/5.0 (compatible; Googlebot/2.1; ShopBot)";
    let lines = vec![
        line(0, "66.249.66.1", "/robots.txt", both),
        line(1, "66.249.66.1", "/a", both),
        line(2, "192.0.2.50", "/robots.txt", "ShopBot/2.0"),
        line(3, "192.0.2.50", "/private/s", "ShopBot/2.0"),
    ];
    let report = audit(&lines, Options::default(), &GoogleRanges);
    let rules = rules_of(&report, &google_ranges, &RuleOptions::default());
    assert!(rules.rules.is_empty(), "{rules:#?}");
    assert_eq!(rules.warnings.len(), 1, "{:?}", rules.warnings);
    assert!(rules.warnings[0].contains("ShopBot") && rules.warnings[0].contains("Googlebot"));
    let text = render(&rules, Server::Nginx);
    assert!(text.contains("# WARNING: not written"), "{text}");
}

/// Google's crawlers' real published ranges are hundreds of entries.
fn long_ranges(token: &str) -> Option<Vec<String>> {
    google_ranges(token)?;
    let mut v: Vec<String> = (0..200)
        .map(|i| format!("66.249.{}.{}/27", 64 + i / 8, i % 8 * 32))
        .collect();
    v.extend((0..120).map(|i| format!("2001:4860:4801:{i:x}::/64")));
    Some(v)
}

#[test]
fn long_range_lists_fit_every_server() {
    let report = audit(&the_log(), Options::default(), &GoogleRanges);
    let rules = rules_of(&report, &long_ranges, &RuleOptions::default());
    let haproxy = render(&rules, Server::Haproxy);
    for l in haproxy.lines().filter(|l| !l.starts_with('#')) {
        assert!(l.split_whitespace().count() <= 64, "{l}");
    }
    let cloudflare = render(&rules, Server::Cloudflare);
    let expressions: Vec<&str> = cloudflare
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert!(!expressions.is_empty());
    for e in &expressions {
        assert!(e.len() <= MAX_EXPRESSION, "{} characters", e.len());
        assert!(
            e.starts_with("(http.request.uri.path ne \"/robots.txt\") and ("),
            "{e}"
        );
    }
    assert!(cloudflare.contains("$mannerly_googlebot"), "{cloudflare}");
    assert!(
        cloudflare.contains("# IP list `mannerly_googlebot` (320 entries)"),
        "{cloudflare}"
    );
    let apache = render(&rules, Server::Apache);
    assert!(apache.lines().all(|l| l.len() < 4096));
    for server in [
        Server::Nginx,
        Server::Apache,
        Server::Caddy,
        Server::Haproxy,
        Server::Cloudflare,
    ] {
        let text = render(&rules, server);
        assert!(text.contains("robots.txt"), "{server:?} spares robots.txt");
        assert!(
            text.contains("Client address:"),
            "{server:?} says whose address"
        );
        assert!(
            text.contains("first 2026-03-01T10:00:3"),
            "{server:?} says when"
        );
    }
}

/// Health checks of the site's own infrastructure, as the public
/// catalogues list them: each polls a disallowed path every second.
const HEALTH_CHECKS: [&str; 8] = [
    "kube-probe/1.15",
    "ELB-HealthChecker/2.0",
    "GoogleHC/1.0",
    "Amazon-Route53-Health-Check-Service (ref b0eb04d5-cb5e-40e7-839b-558e52fc3f0d; report http://amzn.to/1vsZADi)",
    "Consul Health Check",
    "check_http/v2.2.1 (nagios-plugins 2.2.1)",
    "prometheus/2.18.1",
    "NewRelicPinger/1.0 (543245)",
];

#[test]
fn health_checks_are_never_accused_nor_refused() {
    let mut lines = Vec::new();
    for (i, ua) in HEALTH_CHECKS.iter().enumerate() {
        for s in 0..5 {
            lines.push(line(s, &format!("10.0.0.{i}"), "/private/healthz", ua));
        }
    }
    let report = audit(&lines, Options::default(), &Unchecked);
    assert_eq!(report.violations(), 0);
    assert!(report.bots.iter().all(|b| b.kind == BotKind::Monitor));
    let rules = rules_of(&report, &no_ranges, &RuleOptions::default());
    assert!(rules.rules.is_empty(), "{rules:#?}");
    for (i, ua) in HEALTH_CHECKS.iter().enumerate() {
        let ip = format!("10.0.0.{i}").parse().ok();
        assert!(!rules.refuses(ua, ip, "/private/healthz"), "{ua}");
    }
    // Asked for by name, monitors are judged and refused like crawlers.
    let strict = Options {
        strict: true,
        ..Options::default()
    };
    let report = audit(&lines, strict, &Unchecked);
    let options = RuleOptions {
        strict: true,
        include: vec![Include::Monitor],
    };
    let rules = rules_of(&report, &no_ranges, &options);
    assert_eq!(rules.rules.len(), HEALTH_CHECKS.len(), "{rules:#?}");
}

/// A request inside a Retry-After wait the log does not record is shown,
/// with the wait said to be assumed, but no server rule refuses a crawler
/// on that assumption alone; a disallowed path still makes one.
#[test]
fn no_rule_rests_on_an_assumed_retry_after() {
    let patient = "Mozilla/5.0 (compatible; PatientBot/1.0; +https://patient.example/)";
    let mut lines = vec![line(0, "192.0.2.20", "/robots.txt", patient)];
    // A 429 with no Retry-After in the log, then a page 15 s later:
    // inside the assumed 60 s, outside the Crawl-delay of 10.
    lines.push(line(10, "192.0.2.20", "/a", patient).replace("\" 200 100 ", "\" 429 100 "));
    lines.push(line(25, "192.0.2.20", "/b", patient));
    let report = audit(&lines, Options::default(), &Unchecked);
    let bot = &report.bots[0];
    assert_eq!(
        (
            bot.counts.ignored_retry_after,
            bot.counts.ignored_retry_after_assumed
        ),
        (1, 1)
    );
    let rules = rules_of(&report, &no_ranges, &RuleOptions::default());
    assert!(rules.rules.is_empty(), "{rules:#?}");
    let why: Vec<&str> = rules.passed_over.iter().map(|p| p.reason).collect();
    assert!(
        why.iter().any(|w| w.contains("waits the audit assumed")),
        "{why:?}"
    );
    // The same crawler on a disallowed path as well: refused.
    lines.push(line(40, "192.0.2.20", "/private/p", patient));
    let report = audit(&lines, Options::default(), &Unchecked);
    let rules = rules_of(&report, &no_ranges, &RuleOptions::default());
    assert_eq!(sorts(&rules), ["token"], "{rules:#?}");
}
