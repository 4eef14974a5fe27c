//! robots.txt parsing, matching and linting, with no I/O.
//!
//! By default every decision is the one Google's open-source reference
//! library (`google/robotstxt`) makes, byte for byte, including the line it
//! reports as deciding. On top of that this crate reads the common
//! extensions, explains its verdicts, lints files for their owners, and has
//! an opt-in strict RFC 9309 mode.
//!
//! ```
//! use mannerly_robots::Robots;
//!
//! let robots = Robots::parse(b"\
//! User-agent: *
//! Disallow: /private/
//! Allow: /private/press/
//!
//! User-agent: ExampleBot
//! Disallow: /
//! Crawl-delay: 5
//!
//! Sitemap: https://example.com/sitemap.xml
//! ");
//! assert!(!robots.is_allowed("OtherBot", "https://example.com/private/x"));
//! assert!(robots.is_allowed("OtherBot", "https://example.com/private/press/1"));
//! assert!(!robots.is_allowed("examplebot", "/anything"));
//!
//! let why = robots.explain("OtherBot", "/private/x");
//! let rule = why.rule.unwrap();
//! assert_eq!((rule.line, rule.pattern.as_str()), (2, "/private/"));
//!
//! assert_eq!(robots.crawl_delay("ExampleBot").unwrap().delay.as_secs(), 5);
//! assert_eq!(robots.sitemaps()[0].url, "https://example.com/sitemap.xml");
//! ```
//!
//! Checking many URLs for one crawler: [`Robots::for_agent`] sorts the
//! applicable rules once so the first match decides.
//!
//! ```
//! # use mannerly_robots::Robots;
//! let robots = Robots::parse(b"User-agent: *\nDisallow: /*.pdf$\n");
//! let bot = robots.for_agent("MyBot");
//! let urls = ["/a.pdf", "/a.pdf?x", "/b.html"];
//! let allowed: Vec<bool> = urls.iter().map(|u| bot.is_allowed(u)).collect();
//! assert_eq!(allowed, [false, true, true]);
//! ```
//!
//! Linting, for site owners:
//!
//! ```
//! let diags = mannerly_robots::lint(b"User-agent: *\nDisalow: /tmp\n");
//! assert_eq!(diags[0].code, "typo-accepted");
//! assert_eq!(diags[0].line, 2);
//! assert_eq!(diags[0].suggestion.as_deref(), Some("Disallow: /tmp"));
//! ```
//!
//! AIPREF usage preferences (draft-ietf-aipref-attach-05):
//!
//! ```
//! use mannerly_robots::{Preference, Robots};
//! let robots = Robots::parse(b"\
//! User-Agent: *
//! Allow: /
//! Disallow: /never/
//! Content-Usage: train-ai=n
//! Content-Usage: /ai-ok/ train-ai=y
//! ");
//! assert_eq!(robots.content_usage("bot", "/test").unwrap().train_ai, Preference::Disallowed);
//! assert_eq!(robots.content_usage("bot", "/ai-ok/test").unwrap().train_ai, Preference::Allowed);
//! assert_eq!(robots.content_usage("bot", "/never/test"), None);
//! ```
//!
//! `Content-Usage` is a rule in the draft, so it ends a group: a
//! `User-agent` line after it starts a new group. Google's parser ends
//! groups only after Allow/Disallow; the default mode keeps Google's
//! grouping for crawlability, while `content_usage` always reads the
//! draft's ([`Robots::aipref_groups`]), and the linter flags files where
//! the two differ (`content-usage-grouping`). Strict RFC mode follows the
//! draft for everything. [`Robots::content_usage_with_header`] combines the
//! robots.txt rule with a response's `Content-Usage` header field.
//!
//! # The reference's behaviour, reproduced
//!
//! - Lines end at `\n`, `\r` or `\r\n`; a (prefix of a) UTF-8 BOM at the
//!   start is skipped; a NUL byte ends a line's content; each line keeps at
//!   most 16,663 bytes; `#` starts a comment anywhere.
//! - Keys match by case-insensitive prefix (`Disallowed:` is Disallow), and
//!   the misspellings `useragent`, `user agent`, `disalow`, `dissallow`,
//!   `dissalow`, `diasllow`, `disallaw` and `site-map` are accepted. A line
//!   without a colon is accepted when it has exactly two tokens.
//! - A group's user-agent value is cut at the first byte outside
//!   `[a-zA-Z_-]` and compared whole, case-insensitively, with the crawler's
//!   name; `*` (optionally followed by whitespace and text) is the global
//!   group. If any group names the crawler, the global groups are ignored;
//!   groups naming the same crawler merge.
//! - Rules before any user-agent line are ignored; Sitemap and unknown lines
//!   do not end a group.
//! - The longest matching pattern (in bytes, after escaping, `*` and `$`
//!   included) wins; Allow wins ties; an empty pattern blocks nothing.
//! - Patterns (not URLs) are percent-normalised: bytes ≥ 0x80 become `%XX`
//!   and `%xx` becomes `%XX`.
//! - `Allow: /dir/index.htm…` also allows `/dir/` exactly.
//!
//! # Strict RFC 9309 mode
//!
//! [`ParseOptions::rfc9309`] follows RFC 9309 as written. Every difference
//! from the default mode:
//!
//! | | Google (default) | RFC 9309 |
//! |---|---|---|
//! | URL path | compared as given | normalised as §2.2.2 asks: `%XX` of unreserved characters decoded, other escapes upper-cased, bytes ≥ 0x80 encoded; `/%7Efoo` and `/~foo` are the same |
//! | patterns | non-ASCII encoded, hex upper-cased | normalised like the URL |
//! | misspelt keys (`disalow`) | accepted | ignored (diagnostic) |
//! | keys by prefix (`Disallowed`) | accepted | ignored (diagnostic) |
//! | missing colon (`Disallow /x`) | accepted | ignored (diagnostic) |
//! | `Allow: /x/index.html` | also allows `/x/` | allows only what it matches |
//!
//! Identical in both: groups, the cut of user-agent values, longest match
//! with Allow on ties, `*` and `$`, the 500 KiB default limit.
//!
//! # Worst-case bounds
//!
//! Parsing is linear in the size of the body (which is capped, 500 KiB by
//! default). Matching one URL against one pattern is linear in their
//! lengths (see [`pattern::matches`]); a URL is checked against each
//! applicable rule at most once, so one check is `O(total pattern bytes +
//! rules × URL length)` in the worst case, with no backtracking and no
//! regular expressions.
//!
//! # Size limit
//!
//! Only the first [`DEFAULT_MAX_BYTES`] (500 KiB, RFC 9309 §2.5) are read,
//! cut after the last complete line within them; a diagnostic says so. The
//! limit is configurable through [`ParseOptions`] but never below 500 KiB.
//! (The reference library itself has no limit.)
//!
//! # Design notes
//!
//! - **Faithful lexing.** `lexer.rs` reproduces the reference parser's byte
//!   handling: `\n`, `\r` or `\r\n` end a line; a BOM prefix is skipped; lines are
//!   cut at 16,663 bytes; NUL ends the content; key prefix and typo acceptance;
//!   missing-colon lines. Everything afterwards works on this output. The
//!   body is searched for NULs and `#` once per occurrence, not per line,
//!   and a line's end and colon, like a checked URL's authority and `#`,
//!   sixteen bytes at a time with `wide`'s vectors (eight for a shorter
//!   slice; `find.rs`): `memchr`'s setup costs more than a short line.
//! - **Groups as data.** The reference decides inside a streaming callback
//!   (`seen_separator_`, `ever_seen_specific_agent_`). Here the same state
//!   machine builds `Group`s once, and matching selects groups per agent. The
//!   differential property test in `tests/properties.rs` keeps the two models
//!   equal.
//! - **Decision and deciding line.** The best Allow and the best Disallow
//!   (longest effective pattern, earliest line on ties) decide, with Allow
//!   winning ties. This includes the reference's quirk of reporting a matched
//!   empty `Disallow:` line as the deciding line.
//! - **Linear matching.** The reference keeps a set of reachable positions,
//!   which costs O(pattern × path). Here `pattern::matches` places the literal
//!   pieces between stars leftmost, which is exact when `*` is the only
//!   wildcard, so it is O(pattern + path). `AgentRules` sorts the rules once
//!   into decision order, so the first match decides. It buckets rules by the
//!   first three bytes of their literal prefix; each bucket entry carries the
//!   rule's first eight literal bytes and the bytes it requires (a 64-bit byte
//!   mask), so a check scans its bucket in order and reads a rule's pattern
//!   only when the path's head and bytes admit it. Every crawler no group
//!   names gets the same view, built on the first `for_agent` and kept with
//!   the parsed file; each named crawler gets its own, kept too, and found
//!   again by its name (by binary search when the file names many).
//! - **Size limit.** Parsing reads at most 500 KiB by default, cut after the
//!   last complete line. The limit is configurable but never lower. The
//!   reference has no limit, so the corpus test raises it for the four corpus
//!   files above 500 KiB.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod diagnostic;
mod extensions;
mod find;
mod fold;
mod lexer;
mod libraries;
mod lint;
pub mod pattern;
mod requested;
mod robots;
mod token;

pub use diagnostic::{codes, Diagnostic, Severity};
pub use extensions::{
    Category, CleanParam, ContentUsage, ContentUsageRule, CrawlDelay, HostDirective, Preference,
    RequestRate, Sitemap, TimeWindow, UsagePreferences, VisitTime,
};
pub use libraries::{is_client_library, CLIENT_LIBRARIES};
pub use lint::{lint, lint_parsed, lint_with};
pub use pattern::path_params_query;
pub use requested::as_requested;
pub use robots::{
    AgentLine, AgentMatch, AgentRules, Group, MatchedRule, Mode, ParseOptions, Robots, Rule,
    RuleKind, Verdict, DEFAULT_MAX_BYTES,
};
pub use token::{
    names_a_client, names_token, page_named, page_without_scheme, product_token, token_pattern,
    unsendable_char,
};

/// Whether `user_agent` is a product token a crawler can be matched by:
/// non-empty, and only letters, `-` and `_` (the reference's
/// `IsValidUserAgentToObey`).
///
/// ```
/// assert!(mannerly_robots::is_valid_user_agent("Googlebot-Image"));
/// assert!(!mannerly_robots::is_valid_user_agent("Googlebot/2.1"));
/// ```
pub fn is_valid_user_agent(user_agent: &str) -> bool {
    !user_agent.is_empty()
        && user_agent
            .bytes()
            .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_')
}

/// What to tell someone who asks about `agent` when it is not a product
/// token (`Googlebot/2.1`, a whole User-Agent): it is matched whole, so
/// only a group naming exactly that applies, which is seldom what was
/// meant. Names the token to ask with instead when `agent` holds a
/// product with a version. `None` for a product token.
///
/// ```
/// let ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
/// assert!(mannerly_robots::agent_note(ua).unwrap().ends_with("ask for Googlebot"));
/// assert!(mannerly_robots::agent_note("TwengaBot-2.0").unwrap().ends_with("ask for TwengaBot"));
/// assert!(mannerly_robots::agent_note("Googlebot").is_none());
/// ```
pub fn agent_note(agent: &str) -> Option<String> {
    if is_valid_user_agent(agent) {
        return None;
    }
    // A name with digits (`MJ12bot`) or words (`Offline Explorer`) and no
    // version is a crawler's own name: no other is offered.
    let versioned =
        |t: &str| agent.contains('/') || token::without_joined_version(agent) == Some(t);
    let instead = product_token(agent)
        .filter(|t| t != agent && versioned(t))
        .map(|t| format!("; ask for {t}"))
        .unwrap_or_default();
    Some(format!(
        "'{agent}' is not a product token (letters, '-' and '_'): it is compared whole, so only a group naming exactly that applies{instead}"
    ))
}

/// Line-level parse facts, as the reference's parsing reporter gives them.
/// For tools and conformance tests.
pub mod report {
    pub use crate::lexer::KeyKind;
    use crate::lexer::{lex_line, Lines};

    /// What the reference reports about one line.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct LineReport {
        /// The line (1-based).
        pub line: u32,
        /// The directive, for lines that have one.
        pub kind: Option<KeyKind>,
        /// The key as written.
        pub key: String,
        /// The value as written (after trimming).
        pub value: Vec<u8>,
        /// The key was accepted as a typo of a known one (`disalow`).
        pub is_typo: bool,
        /// The line is empty.
        pub is_empty: bool,
        /// The line has a comment.
        pub has_comment: bool,
        /// The line is only a comment.
        pub is_comment: bool,
        /// The line holds a key and value.
        pub has_directive: bool,
        /// The line was longer than the reference reads and was cut.
        pub is_line_too_long: bool,
        /// The key and value are separated by white space, not a colon.
        pub is_missing_colon_separator: bool,
    }

    /// Reports every line of a body (no size limit applied).
    pub fn lines(body: &[u8]) -> Vec<LineReport> {
        Lines::new(body)
            .map(|raw| {
                let l = lex_line(body, raw);
                let content_end = l.comment.unwrap_or(raw.end);
                let blank = body[raw.start..content_end.min(raw.end)]
                    .iter()
                    .take_while(|&&b| b != 0)
                    .all(|&b| crate::lexer::is_space(b));
                let has_comment = l.comment.is_some();
                let d = l.directive;
                LineReport {
                    line: raw.number,
                    kind: d.map(|d| d.kind),
                    key: d
                        .map(|d| String::from_utf8_lossy(&body[d.key.0..d.key.1]).into_owned())
                        .unwrap_or_default(),
                    value: d
                        .map(|d| body[d.value.0..d.value.1].to_vec())
                        .unwrap_or_default(),
                    is_typo: d.is_some_and(|d| d.typo),
                    is_empty: blank && !has_comment,
                    has_comment,
                    is_comment: blank && has_comment,
                    has_directive: d.is_some(),
                    is_line_too_long: raw.too_long,
                    is_missing_colon_separator: d.is_some_and(|d| d.missing_colon),
                }
            })
            .collect()
    }
}
