//! Property tests. They stand alone (no `../shared`).
//!
//! The strongest one is differential: an independent, line-by-line
//! re-implementation of the reference's matcher state machine
//! (`seen_separator_`, `ever_seen_specific_agent_`, quadratic position-set
//! matching) is run on random files and must agree with `Robots` on the
//! verdict and on the deciding line.

use mannerly_robots::pattern::{escape_pattern, matches, matches_reference_quadratic};
use mannerly_robots::report::{self, KeyKind};
use mannerly_robots::{lint, path_params_query, ParseOptions, Robots};
use proptest::prelude::*;

/// The reference's `RobotsMatcher`, written from its documented behaviour.
fn oracle(body: &[u8], agent: &str, url: &str) -> (bool, u32) {
    let path = path_params_query(url);
    let path = path.as_bytes();
    #[derive(Clone, Copy)]
    struct M {
        prio: i64,
        line: u32,
    }
    let none = M { prio: -1, line: 0 };
    let (mut allow_s, mut dis_s, mut allow_g, mut dis_g) = (none, none, none, none);
    let (mut global, mut specific, mut ever, mut sep) = (false, false, false, false);
    for l in report::lines(body) {
        let Some(kind) = l.kind else { continue };
        let v = &l.value;
        match kind {
            KeyKind::UserAgent => {
                if sep {
                    global = false;
                    specific = false;
                    sep = false;
                }
                if v.first() == Some(&b'*')
                    && (v.len() == 1 || matches!(v[1], b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r'))
                {
                    global = true;
                } else {
                    let n = v
                        .iter()
                        .take_while(|b| b.is_ascii_alphabetic() || **b == b'-' || **b == b'_')
                        .count();
                    if v[..n].eq_ignore_ascii_case(agent.as_bytes()) {
                        specific = true;
                        ever = true;
                    }
                }
            }
            KeyKind::Allow | KeyKind::Disallow => {
                if !global && !specific {
                    continue;
                }
                sep = true;
                let pat = escape_pattern(v).into_owned();
                let mut candidates = vec![pat.clone()];
                if kind == KeyKind::Allow && !matches_reference_quadratic(&pat, path) {
                    if let Some(slash) = pat.iter().rposition(|&b| b == b'/') {
                        if pat[slash..].starts_with(b"/index.htm") {
                            let mut d = pat[..=slash].to_vec();
                            d.push(b'$');
                            candidates = vec![d];
                        }
                    }
                }
                for c in candidates {
                    if !matches_reference_quadratic(&c, path) {
                        continue;
                    }
                    let m = M {
                        prio: c.len() as i64,
                        line: l.line,
                    };
                    let slot = match (kind == KeyKind::Allow, specific) {
                        (true, true) => &mut allow_s,
                        (true, false) => &mut allow_g,
                        (false, true) => &mut dis_s,
                        (false, false) => &mut dis_g,
                    };
                    if slot.prio < m.prio {
                        *slot = m;
                    }
                }
            }
            _ => {}
        }
    }
    let disallowed = if allow_s.prio > 0 || dis_s.prio > 0 {
        dis_s.prio > allow_s.prio
    } else if ever {
        false
    } else if allow_g.prio > 0 || dis_g.prio > 0 {
        dis_g.prio > allow_g.prio
    } else {
        false
    };
    let line = if ever {
        if dis_s.prio > allow_s.prio {
            dis_s.line
        } else {
            allow_s.line
        }
    } else if dis_g.prio > allow_g.prio {
        dis_g.line
    } else {
        allow_g.line
    };
    (!disallowed, line)
}

fn key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "User-agent",
        "user-agent",
        "USER-AGENT",
        "useragent",
        "user agent",
        "Allow",
        "allow",
        "Disallow",
        "disallow",
        "disalow",
        "Disallowed",
        "Sitemap",
        "Crawl-delay",
        "Noindex",
        "foo",
    ])
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "*", "FooBot", "foobot", "BarBot", "Foo2bot", "* x", "*bot", "", "Foo Bar", "foo_bar"
        ])
        .prop_map(str::to_owned),
        "[/abj*$%éA?=]{0,7}",
        "/[ab]{0,3}/index\\.html?",
    ]
}

fn line() -> impl Strategy<Value = String> {
    (
        key(),
        prop::sample::select(vec![": ", ":", " : ", " ", ":\t"]),
        value(),
        prop::sample::select(vec!["", " # c", "#x"]),
    )
        .prop_map(|(k, s, v, c)| format!("{k}{s}{v}{c}"))
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    body_of(0..14)
}

/// Files large enough that the per-agent view indexes its rules.
fn big_body() -> impl Strategy<Value = Vec<u8>> {
    body_of(20..80)
}

fn body_of(lines: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(
            (line(), prop::sample::select(vec!["\n", "\r\n", "\r"])),
            lines,
        ),
        any::<bool>(),
    )
        .prop_map(|(lines, bom)| {
            let mut b = Vec::new();
            if bom {
                b.extend_from_slice(b"\xEF\xBB\xBF");
            }
            for (l, eol) in lines {
                b.extend_from_slice(l.as_bytes());
                b.extend_from_slice(eol.as_bytes());
            }
            b
        })
}

fn url() -> impl Strategy<Value = String> {
    (
        "[/abj$%*?=]{0,8}",
        prop::sample::select(vec![
            "",
            "http://e.com",
            "https://e.com:8080",
            "//e.com",
            "e.com",
        ]),
    )
        .prop_map(|(p, pre)| format!("{pre}/{p}"))
}

fn agent() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "FooBot", "foobot", "BarBot", "Foo", "", "baz", "foo_bar",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, .. ProptestConfig::default() })]

    #[test]
    fn linear_matcher_equals_reference(pat in "[ab/*$]{0,10}", path in "[ab/$*]{0,12}") {
        prop_assert_eq!(matches(pat.as_bytes(), path.as_bytes()), matches_reference_quadratic(pat.as_bytes(), path.as_bytes()));
    }

    #[test]
    fn robots_agrees_with_the_reference_state_machine(body in body(), agent in agent(), url in url()) {
        let robots = Robots::parse(&body);
        let (want_allowed, want_line) = oracle(&body, agent, &url);
        let v = robots.explain(agent, &url);
        prop_assert_eq!(v.allowed, want_allowed);
        prop_assert_eq!(v.rule.as_ref().map_or(0, |r| r.line), want_line);
        prop_assert_eq!(robots.is_allowed(agent, &url), want_allowed);
        let view = robots.for_agent(agent);
        let w = view.explain(&url);
        prop_assert_eq!(w.allowed, want_allowed);
        prop_assert_eq!(w.rule.map_or(0, |r| r.line), want_line);
    }

    /// The view of crawlers no group names is built once per file and
    /// shared: crawlers asking in turn, named or not, each get their own
    /// answers, and a file that has built it still equals a fresh parse.
    #[test]
    fn crawlers_asking_one_file_in_turn_each_get_their_answers(body in big_body(), agents in prop::collection::vec(agent(), 2..6), urls in prop::collection::vec(url(), 1..10)) {
        let robots = Robots::parse(&body);
        for agent in &agents {
            let view = robots.for_agent(agent);
            for url in &urls {
                let (want_allowed, want_line) = oracle(&body, agent, url);
                let (allowed, rule) = view.lookup(url);
                prop_assert_eq!(allowed, want_allowed, "agent {} url {}", agent, url);
                prop_assert_eq!(rule.map_or(0, |r| r.line), want_line, "agent {} url {}", agent, url);
            }
        }
        prop_assert_eq!(&robots, &Robots::parse(&body));
    }

    #[test]
    fn indexed_view_agrees_with_the_reference_on_big_files(body in big_body(), agent in agent(), urls in prop::collection::vec(url(), 1..20)) {
        let robots = Robots::parse(&body);
        let view = robots.for_agent(agent);
        for url in &urls {
            let (want_allowed, want_line) = oracle(&body, agent, url);
            let w = view.explain(url);
            prop_assert_eq!(w.allowed, want_allowed, "url {}", url);
            let (allowed, rule) = view.lookup(url);
            prop_assert_eq!(allowed, want_allowed);
            prop_assert_eq!(rule.map(|r| (r.line, r.kind, r.pattern())), w.rule.as_ref().map(|r| (r.line, r.kind, r.pattern.as_str())));
            prop_assert_eq!(w.rule.map_or(0, |r| r.line), want_line, "url {}", url);
            prop_assert_eq!(robots.is_allowed(agent, url), want_allowed);
        }
    }

    #[test]
    fn escaping_is_idempotent(s in prop::collection::vec(any::<u8>(), 0..40)) {
        let once = escape_pattern(&s).into_owned();
        let twice = escape_pattern(&once).into_owned();
        prop_assert_eq!(once, twice);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600), url in ".{0,40}") {
        for opts in [ParseOptions::default(), ParseOptions::rfc9309()] {
            let r = Robots::parse_with(&bytes, opts);
            let _ = r.explain("FooBot", &url);
            let _ = r.for_agent("*").explain(&url);
            let _ = r.content_usage("FooBot", &url);
            let _ = r.crawl_delay("FooBot");
            let _ = lint(&bytes);
        }
    }

    #[test]
    fn strict_mode_treats_escaped_unreserved_as_equal(seg in "[a-z~._-]{1,6}") {
        let encoded: String = seg.bytes().map(|b| format!("%{b:02x}")).collect();
        let body = format!("User-agent: *\nDisallow: /{seg}\n");
        let r = Robots::parse_with(body.as_bytes(), ParseOptions::rfc9309());
        let url = format!("/{encoded}");
        prop_assert!(!r.is_allowed("x", &url));
        let body = format!("User-agent: *\nDisallow: /{encoded}\n");
        let r = Robots::parse_with(body.as_bytes(), ParseOptions::rfc9309());
        let url = format!("/{seg}");
        prop_assert!(!r.is_allowed("x", &url));
    }
}

#[test]
fn pathological_inputs_stay_linear() {
    // 10,000 stars against a 100 KiB path: the reference's algorithm does
    // ~10^9 steps here. This is a correctness check (it must answer), the
    // timing lives in the worst_case benchmark.
    let pattern = "*".repeat(10_000) + "x$";
    let path = "/".to_owned() + &"a".repeat(100 * 1024);
    assert!(!matches(pattern.as_bytes(), path.as_bytes()));
    let pattern = "/".to_owned() + &"a*".repeat(5_000) + "b";
    assert!(!matches(pattern.as_bytes(), path.as_bytes()));
}
