//! AIPREF grouping (draft-ietf-aipref-attach-05 §3): `Content-Usage` is a
//! rule, so a `User-agent` line after it starts a new group. Google's
//! grouping (only Allow/Disallow end a group) still decides crawlability in
//! the default mode; `content_usage` always reads the draft's grouping;
//! strict mode follows the draft for everything.

use mannerly_robots::{lint, Mode, ParseOptions, Preference, Robots};
use proptest::prelude::*;

fn strict(body: &[u8]) -> Robots {
    Robots::parse_with(
        body,
        ParseOptions {
            mode: Mode::Rfc9309,
            ..ParseOptions::default()
        },
    )
}

const SPLIT: &[u8] = b"User-agent: *\nContent-Usage: train-ai=n\n\nUser-agent: ExampleBot\nContent-Usage: train-ai=y\n";

#[test]
fn a_user_agent_line_after_content_usage_starts_a_new_group_for_aipref() {
    for robots in [Robots::parse(SPLIT), strict(SPLIT)] {
        let mode = robots.mode();
        let bot = robots
            .content_usage("ExampleBot", "/page")
            .expect("crawlable");
        assert_eq!(bot.train_ai, Preference::Allowed, "{mode:?}");
        assert_eq!(bot.lines, vec![5], "{mode:?}");
        let other = robots
            .content_usage("OtherBot", "/page")
            .expect("crawlable");
        assert_eq!(other.train_ai, Preference::Disallowed, "{mode:?}");
        assert_eq!(other.lines, vec![2], "{mode:?}");
        assert_eq!(robots.aipref_groups().len(), 2, "{mode:?}");
    }
    // Google's grouping is unchanged: one group naming both.
    let google = Robots::parse(SPLIT);
    assert_eq!(google.groups().len(), 1);
    assert_eq!(google.groups()[0].agents.len(), 2);
    assert_eq!(strict(SPLIT).groups().len(), 2);
}

#[test]
fn a_rule_for_one_crawler_does_not_reach_the_next() {
    let body = b"User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /private\nContent-Usage: search=y\n";
    let google = Robots::parse(body);
    // Google: one group {a, b}; both are kept out of /private.
    assert!(!google.is_allowed("a", "/private"));
    assert!(!google.is_allowed("b", "/private"));
    // AIPREF: a's group has only its Content-Usage line; b's rules are b's.
    let a = google.content_usage("a", "/private").expect("crawlable");
    assert_eq!(
        (a.train_ai, a.search),
        (Preference::Disallowed, Preference::Unknown)
    );
    assert_eq!(google.content_usage("b", "/private"), None);
    let b = google.content_usage("b", "/open").expect("crawlable");
    assert_eq!(
        (b.train_ai, b.search),
        (Preference::Unknown, Preference::Allowed)
    );
    // Strict mode reads the file as the drafts do, crawlability included.
    let rfc = strict(body);
    assert!(rfc.is_allowed("a", "/private"));
    assert!(!rfc.is_allowed("b", "/private"));
    assert_eq!(rfc.content_usage("a", "/private"), Some(a));
}

#[test]
fn groupings_agree_when_content_usage_follows_the_agents() {
    for body in [
        &b"User-agent: a\nUser-agent: b\nContent-Usage: train-ai=n\nDisallow: /x\n"[..],
        b"User-agent: a\nDisallow: /x\nContent-Usage: train-ai=n\nUser-agent: b\nAllow: /\n",
        b"User-agent: a\nAllow: /\n",
    ] {
        let r = Robots::parse(body);
        assert_eq!(r.aipref_groups(), r.groups());
        assert!(
            !lint(body)
                .iter()
                .any(|d| d.code == "content-usage-grouping"),
            "{}",
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn the_linter_flags_files_whose_groupings_differ() {
    let found: Vec<_> = lint(SPLIT)
        .into_iter()
        .filter(|d| d.code == "content-usage-grouping")
        .collect();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].line, 4);
    assert!(found[0].message.contains("line 2"), "{}", found[0].message);
    assert!(found[0].suggestion.is_some());
}

#[test]
fn content_usage_without_its_colon_is_not_read() {
    let body = b"User-agent: *\nContent-Usage train-ai=n\n";
    for robots in [Robots::parse(body), strict(body)] {
        let usage = robots.content_usage("bot", "/").expect("crawlable");
        assert_eq!(usage.train_ai, Preference::Unknown, "{:?}", robots.mode());
        assert!(usage.lines.is_empty());
        let d = robots
            .diagnostics()
            .iter()
            .find(|d| d.code == "content-usage-no-colon")
            .expect("a diagnostic");
        assert_eq!(d.line, 2);
        assert_eq!(d.suggestion.as_deref(), Some("Content-Usage: train-ai=n"));
    }
}

#[test]
fn the_header_combines_with_the_robots_rule() {
    let robots = Robots::parse(
        b"User-agent: *\nDisallow: /never/\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y, search=y\n",
    );
    let lines = |v: &[&'static str]| v.iter().map(|s| s.as_bytes()).collect::<Vec<_>>();
    // The most restrictive statement wins per category.
    let u = robots
        .content_usage_with_header("bot", "/open/a", lines(&["train-ai=n"]))
        .expect("crawlable");
    assert_eq!(
        (u.train_ai, u.search),
        (Preference::Disallowed, Preference::Allowed)
    );
    assert!(u.from_header);
    assert_eq!(u.lines, vec![4]);
    // Field lines join into one dictionary: the later key wins.
    let u = robots
        .content_usage_with_header("bot", "/x", lines(&["search=n", "search=y, train-ai=y"]))
        .expect("crawlable");
    assert_eq!(
        (u.train_ai, u.search),
        (Preference::Disallowed, Preference::Allowed)
    );
    // A header that does not parse states nothing.
    let u = robots
        .content_usage_with_header("bot", "/open/a", lines(&["Train-AI=n"]))
        .expect("crawlable");
    assert_eq!(
        (u.train_ai, u.search),
        (Preference::Allowed, Preference::Allowed)
    );
    // No header lines: the robots.txt answer alone.
    let u = robots
        .content_usage_with_header("bot", "/open/a", lines(&[]))
        .expect("crawlable");
    assert!(!u.from_header);
    assert_eq!(Some(u), robots.content_usage("bot", "/open/a"));
    // Not crawlable: no preferences at all.
    assert_eq!(
        robots.content_usage_with_header("bot", "/never/x", lines(&["train-ai=y"])),
        None
    );
}

fn key() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("User-agent"),
        Just("Allow"),
        Just("Disallow"),
        Just("Content-Usage"),
        Just("Crawl-delay"),
    ]
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (key(), "[ab*/]{0,4}").prop_map(|(k, v)| {
            let v = if k == "Content-Usage" { format!("{v} train-ai=n") } else { v };
            format!("{k}: {v}")
        }),
        1 => Just(String::new()),
    ]
}

proptest! {
    /// For well-formed files (exact keys, colons), the AIPREF grouping of a
    /// default-mode parse is the grouping of a strict parse.
    #[test]
    fn default_mode_aipref_grouping_is_the_strict_grouping(lines in prop::collection::vec(line(), 0..16)) {
        let body = lines.join("\n");
        let google = Robots::parse(body.as_bytes());
        let rfc = strict(body.as_bytes());
        let shape = |r: &Robots, groups: &[mannerly_robots::Group]| -> Vec<(Vec<u32>, Vec<u32>, Vec<u32>)> {
            groups
                .iter()
                .map(|g| (
                    g.agents.iter().map(|a| a.line).collect(),
                    r.group_rules(g).iter().map(|x| x.line).collect(),
                    g.content_usage.iter().map(|c| c.line).collect(),
                ))
                .collect()
        };
        prop_assert_eq!(shape(&google, google.aipref_groups()), shape(&rfc, rfc.groups()));
        prop_assert_eq!(rfc.aipref_groups(), rfc.groups());
        for agent in ["a", "b", "zzz"] {
            for url in ["/", "/a", "/b*"] {
                prop_assert_eq!(google.content_usage(agent, url), rfc.content_usage(agent, url));
            }
        }
    }
}
