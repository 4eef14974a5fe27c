//! The audit of access logs, on logs written here: robots.txt history,
//! Retry-After windows, bots that never read robots.txt, suspects, and a
//! log split into files read in any order.

use std::io::Write;

use mannerly_audit::{
    audit_logs, Auditor, Catalogue, LogSource, Options, Report, RobotsBook, Unchecked, Violation,
};
use mannerly_logs::{Format, Parser};
use proptest::prelude::*;

/// 2026-03-01T10:00:00Z.
const T0: i64 = 1_772_359_200;

fn clf_time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let s = secs.rem_euclid(86_400);
    // 2026-03-01 is day 20513 since the epoch.
    let day = 1 + (days - 20_513);
    format!(
        "{day:02}/Mar/2026:{:02}:{:02}:{:02} +0000",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// A combined log line, `at` seconds after T0.
fn line(at: i64, ip: &str, path: &str, status: u16, ua: &str) -> String {
    format!(
        "{ip} - - [{}] \"GET {path} HTTP/1.1\" {status} 100 \"-\" \"{ua}\"\n",
        clf_time(T0 + at)
    )
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    let mut f = std::fs::File::create(&path).expect("creates");
    f.write_all(text.as_bytes()).expect("writes");
    path.to_string_lossy().into_owned()
}

fn audit(files: &[String], book: &RobotsBook, options: Options) -> Report {
    let sources: Vec<LogSource> = files
        .iter()
        .map(|p| LogSource {
            path: p.clone(),
            format: None,
            layout: None,
        })
        .collect();
    audit_logs(
        &sources,
        book,
        Catalogue::builtin(),
        options,
        &mut Unchecked,
    )
    .expect("audits")
}

fn from_start() -> Options {
    Options {
        from_start: true,
        ..Options::default()
    }
}

const BOT: &str = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://bot.example/)";

#[test]
fn a_disallow_added_mid_log_flags_only_later_requests() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut log = line(0, "192.0.2.1", "/robots.txt", 200, BOT);
    for i in 1..=10 {
        log += &line(i * 60, "192.0.2.1", &format!("/private/{i}"), 200, BOT);
    }
    let path = write(&dir, "access.log", &log);
    let mut book = RobotsBook::new();
    book.add(
        None,
        Some((T0 - 3600) * 1000),
        "v1".into(),
        b"User-agent: *\nAllow: /\n",
    );
    // In force from the 5th minute on: requests 5..=10 are flagged.
    book.add(
        None,
        Some((T0 + 300) * 1000),
        "v2".into(),
        b"User-agent: *\nDisallow: /private\n",
    );
    let report = audit(&[path], &book, from_start());
    let bot = &report.bots[0];
    assert_eq!(bot.token, "ExampleBot");
    assert_eq!(bot.counts.disallowed, 6);
    assert_eq!(bot.counts.violations(), 6);
    assert_eq!(bot.examples[0].path, "/private/5");
    assert_eq!(bot.examples[0].detail, "line 2: Disallow: /private");
}

#[test]
fn crawl_delay_retry_after_and_robots_read_first() {
    let dir = tempfile::tempdir().expect("tmp");
    let rude = "RudeBot/2.0";
    let mut log = String::new();
    // Never reads robots.txt; a page a second against a Crawl-delay of 5.
    for i in 0..10 {
        log += &line(
            i,
            "192.0.2.9",
            &format!("/p{i}"),
            if i == 3 { 429 } else { 200 },
            rude,
        );
    }
    // A polite bot: robots.txt first, then 5 s apart.
    log += &line(0, "192.0.2.2", "/robots.txt", 200, BOT);
    for i in 1..5 {
        log += &line(i * 5, "192.0.2.2", &format!("/q{i}"), 200, BOT);
    }
    let path = write(&dir, "access.log", &log);
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nCrawl-delay: 5\n",
    );
    let report = audit(&[path], &book, from_start());
    let rude = report
        .bots
        .iter()
        .find(|b| b.token == "RudeBot")
        .expect("rude");
    assert_eq!(rude.counts.before_robots, 10);
    // Logged one second apart with one-second precision: under 2 s, short.
    assert_eq!(rude.counts.too_soon, 9);
    // After the 429 at 3 s, the 60 s default window covers 4..=9 s; the
    // finding says the wait was assumed, and times are in whole seconds,
    // as the log knows them.
    assert_eq!(rude.counts.ignored_retry_after, 6);
    assert_eq!(rude.counts.ignored_retry_after_assumed, 6);
    let text = mannerly_audit::render::text(&report);
    assert!(
        text.contains("6 inside Retry-After (the wait assumed)"),
        "{text}"
    );
    assert!(
        text.contains("6 request(s) before the wait a 429 or 503 asked for had passed; the log records no Retry-After, so the wait was assumed (--retry-after)"),
        "{text}"
    );
    let said = |rule: Violation| {
        let e = rude.examples.iter().find(|e| e.rule == rule);
        e.expect("an example").detail.clone()
    };
    assert_eq!(
        said(Violation::IgnoredRetryAfter),
        "1 s after a 429; the log does not record Retry-After, so a wait of 60 s is assumed (--retry-after)"
    );
    assert_eq!(
        said(Violation::TooSoon),
        "1 s after the previous request; the delay is 5 s"
    );
    assert_eq!(rude.counts.robots_fetches, 0);
    let polite = report
        .bots
        .iter()
        .find(|b| b.token == "ExampleBot")
        .expect("polite");
    assert_eq!(polite.counts.violations(), 0, "{:?}", polite.examples);
    assert_eq!(polite.hosts[0].crawl_delay, Some(5.0));
    assert_eq!(report.violations(), 25);
}

#[test]
fn a_logged_retry_after_wins() {
    let dir = tempfile::tempdir().expect("tmp");
    let format = r#"$remote_addr [$time_local] "$request" $status "$http_user_agent" $sent_http_retry_after"#;
    let mut log = String::new();
    for (at, status, ra) in [
        (0, 200, "-"),
        (10, 503, "5"),
        (12, 200, "-"),
        (16, 200, "-"),
    ] {
        log += &format!(
            "192.0.2.3 [{}] \"GET /x HTTP/1.1\" {status} \"{BOT}\" {ra}\n",
            clf_time(T0 + at)
        );
    }
    let path = write(&dir, "custom.log", &log);
    let sources = [LogSource {
        path,
        format: None,
        layout: Some(mannerly_logs::Layout::Nginx(format.into())),
    }];
    let book = RobotsBook::new();
    let report = audit_logs(
        &sources,
        &book,
        Catalogue::builtin(),
        from_start(),
        &mut Unchecked,
    )
    .expect("audits");
    assert_eq!(report.files[0].format, "log-format");
    // 12 s is inside the 5 s window from 10 s; 16 s is not.
    assert_eq!(report.bots[0].counts.ignored_retry_after, 1);
    assert_eq!(report.bots[0].counts.ignored_retry_after_assumed, 0);
    let inside = report.bots[0]
        .examples
        .iter()
        .find(|e| e.rule == Violation::IgnoredRetryAfter)
        .expect("an example");
    assert_eq!(
        inside.detail,
        "2 s after a 503 whose Retry-After asked for 5 s"
    );
}

#[test]
fn a_browser_that_crawls_is_a_suspect() {
    let dir = tempfile::tempdir().expect("tmp");
    let chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
    let mut log = String::new();
    for i in 0..40 {
        log += &line(i * 3, "198.51.100.7", &format!("/article/{i}"), 200, chrome);
    }
    // A person: a page, its assets, irregular pauses.
    for (i, at) in [0, 7, 45, 46, 200].iter().enumerate() {
        log += &line(*at, "203.0.113.5", &format!("/read/{i}"), 200, chrome);
        log += &line(*at, "203.0.113.5", "/site.css", 200, chrome);
    }
    let path = write(&dir, "access.log", &log);
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nDisallow: /article/3\n",
    );
    let report = audit(&[path], &book, from_start());
    assert!(report.bots.is_empty());
    assert_eq!(report.suspects.len(), 1);
    let s = &report.suspects[0];
    // `Disallow: /article/3` also covers /article/30 to /article/39.
    assert_eq!(
        (s.client.as_str(), s.pages, s.assets, s.disallowed),
        ("198.51.100.7", 40, 0, 11)
    );
    assert!(s.gap_variation.is_some_and(|v| v < 0.01));
}

/// A log read in batches (parsed on threads, classified a batch at a
/// time, browsers' requests counted into their clients' records a run
/// at a time) gives the report feeding each line alone gives: over
/// enough lines for several batches, with signed-in users and a bot
/// among the browsers.
#[test]
fn a_log_read_in_batches_gives_the_report_of_lines_fed_one_by_one() {
    let dir = tempfile::tempdir().expect("tmp");
    let chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    let mut log = String::new();
    for i in 0..15_000i64 {
        let ip = format!("198.51.100.{}", (i * 7) % 61);
        let ua = if i % 3 == 0 { firefox } else { chrome };
        let path = format!("/article/{}", i % 50);
        log += &match i % 11 {
            0 => line(i / 4, &ip, &path, 200, ua).replacen(" - - ", " - alice ", 1),
            5 => line(i / 4, "192.0.2.9", &path, 200, BOT),
            _ => line(i / 4, &ip, &path, 200, ua),
        };
    }
    assert!(log.len() > 2 << 20, "three batches of 1 MiB or more");
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nDisallow: /article/1\n",
    );
    let batched = audit(&[write(&dir, "access.log", &log)], &book, from_start());

    let mut auditor = Auditor::new(&book, Catalogue::builtin(), from_start(), 1);
    let mut parser = Parser::new(Format::Combined).expect("combined");
    for l in log.lines() {
        if let Ok(Some(entry)) = parser.parse(l) {
            auditor.feed(0, &entry, &Unchecked);
        }
    }
    auditor.end_file(0);
    let alone = auditor.finish();

    assert!(batched.suspects.len() > 10, "{}", batched.suspects.len());
    assert_eq!(batched.suspects, alone.suspects);
    assert_eq!(batched.browser_requests, alone.browser_requests);
    assert_eq!(batched.signed_in_requests, alone.signed_in_requests);
    assert_eq!(batched.bots, alone.bots);
}

#[test]
fn first_day_of_a_log_is_not_blamed_for_an_unseen_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut log = line(0, "192.0.2.1", "/a", 200, BOT);
    // People read the site every half hour, so the log has no hole.
    let chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
    for i in 1..50 {
        log += &line(i * 1800, "198.51.100.1", "/", 200, chrome);
    }
    log += &line(90_000, "192.0.2.1", "/b", 200, BOT);
    let path = write(&dir, "access.log", &log);
    let report = audit(&[path], &RobotsBook::new(), Options::default());
    // /a may have followed a read before the log began; /b, a day later, not.
    assert_eq!(report.bots[0].counts.before_robots, 1);
    assert_eq!(report.coverage.map(|c| c.holes), Some(0));
}

#[test]
fn a_sampled_log_withholds_what_its_holes_could_hide() {
    let dir = tempfile::tempdir().expect("tmp");
    // One minute an hour for two days: the bot reads robots.txt in the
    // first minute, then pages every hour; its reads may be in the holes.
    let mut log = line(0, "192.0.2.1", "/robots.txt", 200, BOT);
    for hour in 0..48 {
        for s in 1..60 {
            log += &line(
                hour * 3600 + s,
                "198.51.100.1",
                "/",
                200,
                "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0",
            );
        }
        log += &line(hour * 3600 + 30, "192.0.2.1", "/page", 200, BOT);
        log += &line(hour * 3600 + 31, "192.0.2.1", "/page2", 200, BOT);
    }
    let path = write(&dir, "access.log", &log);
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nCrawl-delay: 10\n",
    );
    let report = audit(&[path], &book, from_start());
    let bot = &report.bots[0];
    assert_eq!(bot.counts.before_robots, 0, "a hole could hold the read");
    // Pages a second apart inside one minute are proven too soon.
    assert_eq!(bot.counts.too_soon, 48);
    let c = report.coverage.expect("coverage");
    assert_eq!(c.holes, 47);
    assert!(c.covered() < 0.05, "{c:?}");
    let text = mannerly_audit::render::text(&report);
    assert!(
        text.contains("the log covers 1.6% of its span (47 holes"),
        "{text}"
    );
}

/// Lines far older than the rest, come after them (files joined out of
/// order), lie outside the span whose holes are measured: the report does
/// not call a log whole over months it holds two lines of.
#[test]
fn coverage_is_measured_over_the_lines_taken_in_time_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut log = String::new();
    for s in 0..600i64 {
        log += &line(30 * 86_400 + s, "192.0.2.1", "/a", 200, BOT);
    }
    for s in 0..600i64 {
        log += &line(30 * 86_400 + 7_800 + s, "192.0.2.1", "/b", 200, BOT);
    }
    log += &line(0, "192.0.2.9", "/old", 200, BOT);
    log += &line(1, "192.0.2.9", "/old", 200, BOT);
    let path = write(&dir, "access.log", &log);
    let report = audit(&[path], &RobotsBook::new(), from_start());
    assert_eq!(report.late, 2);
    let c = report.coverage.expect("coverage");
    assert_eq!((c.holes, c.span_seconds), (1, 8_399.0), "{c:?}");
    let text = mannerly_audit::render::text(&report);
    assert!(
        text.contains("the log covers 14.3% of its span (1 hole, the longest 2.0 h)"),
        "{text}"
    );
}

/// A day of mixed traffic, in time order.
fn traffic() -> Vec<String> {
    let agents = [
        BOT,
        "RudeBot/2.0",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    ];
    let mut lines = Vec::new();
    for i in 0..400i64 {
        let ua = agents[(i % 4) as usize];
        let path = match i % 7 {
            0 => "/robots.txt".to_owned(),
            1 => format!("/private/{i}"),
            _ => format!("/page/{i}"),
        };
        let status = if i % 37 == 0 { 429 } else { 200 };
        lines.push(line(
            i / 3,
            &format!("192.0.2.{}", i % 5),
            &path,
            status,
            ua,
        ));
    }
    lines
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A log split into N files, each keeping its lines' order, given in
    /// any order, gives the report the whole log gives.
    #[test]
    fn split_logs_give_the_same_report(seed in any::<u64>(), n in 1usize..5) {
        let dir = tempfile::tempdir().expect("tmp");
        let lines = traffic();
        let mut book = RobotsBook::new();
        book.add(None, None, "robots.txt".into(), b"User-agent: *\nDisallow: /private\nCrawl-delay: 1\n");
        let whole = audit(&[write(&dir, "whole.log", &lines.concat())], &book, from_start());
        let mut parts = vec![String::new(); n];
        let mut x = seed;
        for l in &lines {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            parts[(x >> 33) as usize % n].push_str(l);
        }
        let mut files: Vec<String> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| write(&dir, &format!("part{i}.log"), p))
            .collect();
        files.rotate_left((seed % n as u64) as usize);
        let split = audit(&files, &book, from_start());
        prop_assert_eq!(&split.bots, &whole.bots);
        prop_assert_eq!(&split.suspects, &whole.suspects);
        prop_assert_eq!(split.browser_requests, whole.browser_requests);
        prop_assert_eq!(split.lines, whole.lines);
    }
}

#[test]
fn many_files_are_read_in_turn() {
    // Past 16 files, they are read in turn rather than each on a thread.
    let dir = tempfile::tempdir().expect("tmp");
    let lines = traffic();
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nDisallow: /private\nCrawl-delay: 1\n",
    );
    let whole = audit(
        &[write(&dir, "whole.log", &lines.concat())],
        &book,
        from_start(),
    );
    let mut parts = vec![String::new(); 20];
    for (i, l) in lines.iter().enumerate() {
        parts[i % 20].push_str(l);
    }
    let files: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| write(&dir, &format!("part{i}.log"), p))
        .collect();
    let split = audit(&files, &book, from_start());
    assert_eq!(split.bots, whole.bots);
    assert_eq!(split.files.len(), 20);
}

#[test]
fn a_user_triggered_fetcher_is_reported_apart_and_breaks_no_rule() {
    let dir = tempfile::tempdir().expect("tmp");
    let ua = "FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)";
    let mut log = String::new();
    for i in 0..5 {
        log += &line(i, "192.0.2.9", "/private/feed.xml", 200, ua);
    }
    log += &line(10, "192.0.2.7", "/private/x", 200, BOT);
    let path = write(&dir, "access.log", &log);
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nDisallow: /private\nCrawl-delay: 10\n",
    );
    let report = audit(&[path], &book, from_start());
    let feed = report
        .bots
        .iter()
        .find(|b| b.token == "FeedFetcher-Google")
        .expect("reported");
    assert_eq!(feed.kind, mannerly_audit::BotKind::UserTriggered);
    assert!(feed
        .kind_source
        .as_deref()
        .is_some_and(|s| s.starts_with("https://developers.google.com/")));
    assert_eq!((feed.counts.requests, feed.counts.violations()), (5, 0));
    assert!(feed.examples.is_empty());
    // Only the crawler broke a rule.
    let breakers: Vec<&str> = report.rule_breakers().map(|b| b.token.as_str()).collect();
    assert_eq!(breakers, ["ExampleBot"]);
    let text = mannerly_audit::render::text(&report);
    assert!(text.contains("User-triggered fetchers"), "{text}");
    let json = serde_json::to_value(&report).expect("json");
    assert!(json["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .any(|b| b["kind"] == "user-triggered"));
}

#[test]
fn a_client_library_is_judged_per_address() {
    let dir = tempfile::tempdir().expect("tmp");
    let ua = "python-requests/2.32.3";
    let mut log = String::new();
    // Three unrelated clients, each 30 s apart, together every 10 s; and
    // curl from one address every 2 s.
    for i in 0..6 {
        for (k, ip) in ["198.51.100.1", "198.51.100.2", "198.51.100.3"]
            .iter()
            .enumerate()
        {
            log += &line(i * 30 + k as i64 * 10, ip, "/robots.txt", 200, ua);
        }
        log += &line(200 + i * 2, "203.0.113.5", "/page", 200, "curl/8.5.0");
    }
    let path = write(&dir, "access.log", &log);
    let mut book = RobotsBook::new();
    book.add(
        None,
        None,
        "robots.txt".into(),
        b"User-agent: *\nCrawl-delay: 20\n",
    );
    let report = audit(&[path], &book, from_start());
    let requests: Vec<&mannerly_audit::BotReport> = report
        .bots
        .iter()
        .filter(|b| b.token == "python-requests")
        .collect();
    assert_eq!(requests.len(), 3, "one report per address");
    for b in &requests {
        assert_eq!(b.kind, mannerly_audit::BotKind::ClientLibrary);
        assert!(b.address.is_some());
        assert_eq!(b.counts.too_soon, 0, "{:?}: each waited 30 s", b.address);
    }
    let curl = report
        .bots
        .iter()
        .find(|b| b.token == "curl")
        .expect("curl");
    assert_eq!(curl.address.as_deref(), Some("203.0.113.5"));
    assert_eq!(curl.counts.too_soon, 0, "an HTTP tool breaks no rule");
    assert_eq!(report.violations(), 0);
    // Judged strictly, it is held to Crawl-delay like a crawler.
    let strict = Options {
        strict: true,
        ..from_start()
    };
    let path = dir.path().join("access.log").display().to_string();
    let report = audit(&[path], &book, strict);
    let curl = report
        .bots
        .iter()
        .find(|b| b.token == "curl")
        .expect("curl");
    assert_eq!(curl.counts.too_soon, 5, "2 s apart against 20 s");
}

#[test]
fn a_proposed_robots_txt_says_what_it_would_change_bot_by_bot() {
    let dir = tempfile::tempdir().expect("tmp");
    let gpt = "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)";
    let mut log = String::new();
    log += &line(0, "192.0.2.1", "/blog/a", 200, gpt);
    log += &line(1, "192.0.2.1", "/blog/b", 200, gpt);
    log += &line(2, "192.0.2.2", "/blog/a", 200, BOT);
    log += &line(3, "192.0.2.2", "/old/x", 200, BOT);
    let path = write(&dir, "access.log", &log);
    let mut book = RobotsBook::new();
    book.add(None, None, "now".into(), b"User-agent: *\nDisallow: /old\n");
    let mut proposed = RobotsBook::new();
    proposed.add(
        None,
        None,
        "draft".into(),
        b"User-agent: GPTBot\nDisallow: /blog\n\nUser-agent: *\nAllow: /\n",
    );
    let sources = [LogSource {
        path,
        format: None,
        layout: None,
    }];
    let auditor = mannerly_audit::Auditor::new(&book, Catalogue::builtin(), from_start(), 1)
        .with_proposed(&proposed);
    let report =
        mannerly_audit::audit_logs_with(&sources, auditor, &mut Unchecked).expect("audits");
    let p = report.proposed.as_ref().expect("a what-if");
    assert_eq!((p.newly_disallowed, p.newly_allowed), (2, 1));
    let by = |t: &str| p.bots.iter().find(|b| b.token == t).expect(t);
    // GPTBot under its own group; ExampleBot under `*`.
    assert_eq!(
        (by("GPTBot").newly_disallowed, by("GPTBot").newly_allowed),
        (2, 0)
    );
    assert_eq!(
        (
            by("ExampleBot").newly_disallowed,
            by("ExampleBot").newly_allowed
        ),
        (0, 1)
    );
    assert!(by("GPTBot").examples[0]
        .detail
        .contains("line 2: Disallow: /blog"));
    let json = serde_json::to_value(&report).expect("json");
    assert_eq!(json["proposed"]["newly_disallowed"], 2);
}
