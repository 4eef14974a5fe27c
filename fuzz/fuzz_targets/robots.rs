//! Feeds arbitrary bytes to parse, explain, for_agent and lint, and checks
//! that the two matching paths agree and that nothing panics; the URL as a
//! crawler requests it (`as_requested`) is judged too, and encoding it
//! again changes nothing.
//!
//! The input is split at the first 0xFF byte: before it, the robots.txt
//! body; after it, the URL and agent (split at the next 0xFF). The agent
//! is read as a User-Agent header too (`product_token`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mannerly_robots::{as_requested, lint, ParseOptions, Robots};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let body = parts.next().unwrap_or_default();
    let url = String::from_utf8_lossy(parts.next().unwrap_or(b"/"));
    let agent = String::from_utf8_lossy(parts.next().unwrap_or(b"FooBot"));
    let requested = as_requested(&url);
    assert_eq!(
        as_requested(&requested),
        requested,
        "as_requested is idempotent"
    );
    for options in [ParseOptions::default(), ParseOptions::rfc9309()] {
        let robots = Robots::parse_with(body, options);
        let r = robots.explain(&agent, &requested);
        assert_eq!(robots.for_agent(&agent).is_allowed(&requested), r.allowed);
        let a = robots.explain(&agent, &url);
        let b = robots.for_agent(&agent).explain(&url);
        assert_eq!(a.allowed, b.allowed, "explain and for_agent disagree");
        assert_eq!(a.rule.map(|r| r.line), b.rule.map(|r| r.line));
        assert_eq!(robots.is_allowed(&agent, &url), a.allowed);
        let usage = robots.content_usage(&agent, &url);
        let header = [url.as_bytes(), agent.as_bytes()];
        let combined = robots.content_usage_with_header(&agent, &url, header);
        assert_eq!(
            usage.is_some(),
            combined.is_some(),
            "the header changed crawlability"
        );
        // Every AIPREF group is a run of the file's own groups' lines.
        let agents =
            |gs: &[mannerly_robots::Group]| gs.iter().map(|g| g.agents.len()).sum::<usize>();
        assert_eq!(agents(robots.aipref_groups()), agents(robots.groups()));
        for g in robots.aipref_groups() {
            let _ = robots.group_rules(g);
        }
        let _ = (
            robots.crawl_delay(&agent),
            robots.request_rate(&agent),
            robots.visit_time(&agent),
        );
        let _ = (robots.sitemaps(), robots.host(), robots.clean_params());
    }
    let _ = lint(body);
    // The agent as a whole User-Agent header: its token is a run of token
    // characters the header holds.
    if let Some(token) = mannerly_robots::product_token(&agent) {
        assert!(!token.is_empty() && token.len() <= 64 && agent.contains(&token));
    }
});
