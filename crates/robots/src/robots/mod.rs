//! The parsed file: its model ([`Robots`], its groups and rules) and how
//! it is read. The rooms: `parser` builds a [`Robots`] from bytes, line by
//! line; `query` answers what the file says of an agent and a URL;
//! `agent_rules` is one agent's view, indexed for checking many URLs
//! (`key_index` finds a path's rules by its first bytes).

mod agent_rules;
mod key_index;
mod parser;
mod pattern_bytes;
mod query;

pub(crate) use agent_rules::byte_mask;
pub use agent_rules::AgentRules;
use parser::Parser;
use pattern_bytes::PatternBytes;
pub use query::{AgentMatch, MatchedRule, Verdict};

use std::borrow::Cow;
use std::ops::Range;

use crate::diagnostic::{codes, Diagnostic, Severity};
use crate::extensions::{
    self, CleanParam, ContentUsage, ContentUsageRule, CrawlDelay, HostDirective, RequestRate,
    Sitemap, VisitTime,
};
use crate::fold;
use crate::lexer::{self, KeyKind, Lines};
use crate::pattern::{
    self, escape_pattern, path_params_query, rfc_normalize_path, rfc_normalize_pattern,
};

/// The smallest size limit a crawler may apply (RFC 9309 §2.5): 500 KiB.
pub const DEFAULT_MAX_BYTES: usize = 500 * 1024;

/// Which rules of interpretation to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Exactly what Google's reference library decides (the default).
    #[default]
    Google,
    /// RFC 9309 as written, without Google's leniencies, and with the URL
    /// percent-normalised as §2.2.2 asks. See the crate documentation for
    /// the full list of differences.
    Rfc9309,
}

/// How to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// Google's behaviour or strict RFC 9309.
    pub mode: Mode,
    /// Bytes of the body to read; content past the last complete line
    /// within the limit is ignored, with a diagnostic. Values below
    /// [`DEFAULT_MAX_BYTES`] are raised to it: RFC 9309 requires parsing at
    /// least 500 KiB. `usize::MAX` reads everything.
    pub max_bytes: usize,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            mode: Mode::Google,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl ParseOptions {
    /// The default size limit, in strict RFC 9309 mode when `rfc` (else
    /// Google's behaviour): what a caller's `--rfc` flag asks for.
    pub fn strict(rfc: bool) -> Self {
        if rfc {
            Self::rfc9309()
        } else {
            Self::default()
        }
    }

    /// The strict RFC 9309 mode with the default size limit.
    pub fn rfc9309() -> Self {
        ParseOptions {
            mode: Mode::Rfc9309,
            ..Self::default()
        }
    }
}

/// Allow or Disallow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// `Allow`.
    Allow,
    /// `Disallow`.
    Disallow,
}

impl RuleKind {
    /// `Allow` or `Disallow`, as a directive name.
    pub fn directive(self) -> &'static str {
        match self {
            RuleKind::Allow => "Allow",
            RuleKind::Disallow => "Disallow",
        }
    }
}

/// One Allow or Disallow line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Allow or Disallow.
    pub kind: RuleKind,
    /// 1-based line number.
    pub line: u32,
    /// 1-based byte column where the value starts.
    pub column: u32,
    /// The value as written, when it differs from `effective`.
    written: Option<Box<str>>,
    /// The pattern that is matched: percent-normalised, or for Google's
    /// `index.htm` rule the derived `.../$` form.
    pub(crate) effective: PatternBytes,
    /// Position of the first `*` in `effective` (`u32::MAX` if none), so
    /// matching needs no scan for the common wildcard-free pattern.
    pub(crate) first_star: u32,
    /// [`byte_mask`] of the literal bytes (0 for a pattern without `*` of
    /// at most eight bytes): a path lacking any of them cannot match,
    /// whatever the stars absorb.
    pub(crate) required: u64,
    pub(crate) group: u32,
    /// Derived by Google's rule that `Allow: /x/index.htm*` also allows `/x/`.
    pub(crate) derived: bool,
}

impl Rule {
    /// A rule matching `effective`; `written` is the value as the file has
    /// it, when that differs.
    fn new(
        kind: RuleKind,
        line: u32,
        column: u32,
        written: Option<&str>,
        effective: &[u8],
        group: u32,
        derived: bool,
    ) -> Rule {
        // Over the bytes before a final `$` (an anchor): where the first
        // `*` is, and which bytes occur.
        let literal = effective.strip_suffix(b"$").unwrap_or(effective);
        let first_star = crate::find::byte(literal, b'*');
        // A pattern without `*` that a view's head holds whole needs none.
        let required = match first_star {
            None if literal.len() <= 8 => 0,
            _ => byte_mask(literal) & !byte_mask(b"*"),
        };
        let first_star = first_star.map_or(u32::MAX, |i| i as u32);
        Rule {
            required,
            kind,
            line,
            column,
            written: written
                .filter(|w| w.as_bytes() != effective)
                .map(Into::into),
            effective: PatternBytes::new(effective),
            first_star,
            group,
            derived,
        }
    }

    /// The value as written in the file (invalid UTF-8 shown as U+FFFD).
    pub fn pattern(&self) -> &str {
        self.written.as_deref().unwrap_or(self.effective.as_str())
    }

    /// Whether `path`, whose [`byte_mask`] is `path_mask`, matches.
    pub(crate) fn matches_masked(&self, path: &[u8], path_mask: u64) -> bool {
        if self.first_star != u32::MAX && self.required & !path_mask != 0 {
            return false;
        }
        self.matches(path)
    }

    /// Whether `path` matches this rule's pattern.
    pub(crate) fn matches(&self, path: &[u8]) -> bool {
        pattern_matches(self.effective.as_bytes(), self.first_star, path)
    }

    /// The pattern as it is matched (percent-normalised).
    pub fn effective_pattern(&self) -> &str {
        self.effective.as_str()
    }

    /// The rule's specificity: the byte length of the effective pattern,
    /// `*` and `$` included. Longer wins; on a tie Allow wins.
    pub fn priority(&self) -> usize {
        self.effective.len()
    }

    /// Whether this rule was derived from an `Allow: .../index.htm...` line
    /// (Google allows the directory itself too).
    pub fn is_derived(&self) -> bool {
        self.derived
    }
}

/// Whether `path` matches `pattern`, whose first `*` is at `first_star`
/// (`u32::MAX`: none, the common case, a prefix or an exact path).
pub(crate) fn pattern_matches(pattern: &[u8], first_star: u32, path: &[u8]) -> bool {
    if first_star == u32::MAX {
        match pattern.split_last() {
            Some((b'$', body)) => path == body,
            _ => path.starts_with(pattern),
        }
    } else {
        pattern::matches(pattern, path)
    }
}

/// One user-agent line of a group.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AgentLine {
    /// The line (1-based).
    pub line: u32,
    /// 1-based byte column where the value starts.
    pub column: u32,
    /// The value as written.
    pub value: String,
    /// The product token that is compared: the value cut at the first byte
    /// outside `[a-zA-Z_-]`.
    pub token: String,
    /// `*` (or `*` followed by whitespace and anything).
    pub global: bool,
}

/// A group: one or more user-agent lines and the lines that follow them up
/// to the next user-agent line that comes after a rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The `User-agent` lines that open the group.
    pub agents: Vec<AgentLine>,
    pub(crate) rules: Range<usize>,
    pub(crate) global: bool,
    /// `Crawl-delay` lines in the group.
    pub crawl_delays: Vec<CrawlDelay>,
    /// `Request-rate` lines in the group.
    pub request_rates: Vec<RequestRate>,
    /// `Visit-time` lines in the group.
    pub visit_times: Vec<VisitTime>,
    /// `Content-Usage` lines in the group.
    pub content_usage: Vec<ContentUsageRule>,
}

impl Group {
    /// Line of the group's first user-agent line.
    pub fn line(&self) -> u32 {
        self.agents.first().map_or(0, |a| a.line)
    }

    /// Whether the group is for every crawler (`User-agent: *`).
    pub fn is_global(&self) -> bool {
        self.global
    }

    fn names(&self, agent: &str) -> bool {
        self.agents.iter().any(|a| a.names(agent))
    }
}

impl AgentLine {
    /// Whether the line names `agent`: its token, compared whole and
    /// case-insensitively (`*` names no one: it is the fallback).
    fn names(&self, agent: &str) -> bool {
        !self.global && fold::eq_ignore_case(&self.token, agent)
    }
}

/// A parsed robots.txt file.
///
/// Parsing never fails: whatever cannot be used is recorded in
/// [`diagnostics`](Robots::diagnostics).
#[derive(Debug, Clone, PartialEq)]
pub struct Robots {
    mode: Mode,
    groups: Vec<Group>,
    /// The AIPREF grouping where it differs from `groups` (empty when the
    /// two agree, always in strict mode).
    aipref_groups: Vec<Group>,
    rules: Vec<Rule>,
    sitemaps: Vec<Sitemap>,
    hosts: Vec<HostDirective>,
    clean_params: Vec<CleanParam>,
    diagnostics: Vec<Diagnostic>,
    lines: u32,
    read_bytes: usize,
    total_bytes: usize,
    /// What [`for_agent`](Robots::for_agent) gives crawlers no group names.
    unnamed_view: agent_rules::SharedView,
    /// Views [`for_agent`](Robots::for_agent) built for named crawlers.
    named_views: agent_rules::NamedViews,
}

impl Robots {
    /// Parses a robots.txt body with the default options (Google semantics,
    /// 500 KiB limit). Never fails and never panics.
    pub fn parse(body: &[u8]) -> Robots {
        Self::parse_with(body, ParseOptions::default())
    }

    /// Parses with explicit options.
    pub fn parse_with(body: &[u8], options: ParseOptions) -> Robots {
        Parser::new(options).run(body)
    }

    /// The interpretation mode this file was parsed with.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Everything the parser could not use, in line order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The groups, in file order.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The groups as AIPREF (draft-ietf-aipref-attach-05 §3) reads the
    /// file, which [`content_usage`](Robots::content_usage) uses.
    ///
    /// The draft makes `Content-Usage` a rule, and RFC 9309 ends a group at
    /// the first user-agent line after a rule. Google's parser ends a group
    /// only after Allow or Disallow, so in a file parsed in
    /// [`Mode::Google`] a `User-agent` line right after a `Content-Usage`
    /// line continues the group for Google and starts a new one for
    /// AIPREF. Where that happens the two groupings differ (the linter says
    /// so, code `content-usage-grouping`); otherwise, and always in
    /// [`Mode::Rfc9309`], this is [`groups`](Robots::groups).
    pub fn aipref_groups(&self) -> &[Group] {
        if self.aipref_groups.is_empty() {
            &self.groups
        } else {
            &self.aipref_groups
        }
    }

    /// Every Allow and Disallow rule inside a group, in file order
    /// (including rules derived from Google's `index.htm` rule).
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rules of one group.
    pub fn group_rules(&self, group: &Group) -> &[Rule] {
        &self.rules[group.rules.clone()]
    }

    /// Number of lines in the part of the file that was read.
    pub fn line_count(&self) -> u32 {
        self.lines
    }

    /// Whether the body was longer than the size limit and cut.
    pub fn truncated(&self) -> bool {
        self.read_bytes < self.total_bytes
    }

    /// `Sitemap:` URLs, wherever they stand in the file.
    pub fn sitemaps(&self) -> &[Sitemap] {
        &self.sitemaps
    }

    /// The first valid `Host:` directive (Yandex's preferred mirror).
    pub fn host(&self) -> Option<&HostDirective> {
        self.hosts.first()
    }

    /// Every `Clean-param:` directive (Yandex), in file order.
    pub fn clean_params(&self) -> &[CleanParam] {
        &self.clean_params
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_merge_and_global_is_ignored_when_named() {
        let r = Robots::parse(b"User-agent: *\nDisallow: /\n\nUser-agent: foo\nDisallow: /a\nUser-agent: FOO\nAllow: /a/b\n");
        assert!(r.is_allowed("foo", "/x"));
        assert!(!r.is_allowed("foo", "/a/c"));
        assert!(r.is_allowed("foo", "/a/b"));
        assert!(!r.is_allowed("bar", "/x"));
        let v = r.explain("foo", "http://e.com/a/b/c");
        assert_eq!(v.agent_match, AgentMatch::Specific);
        assert_eq!(v.groups, vec![4, 6]);
        assert_eq!(v.rule.as_ref().map(|r| r.line), Some(7));
    }

    #[test]
    fn index_htm() {
        let r = Robots::parse(b"User-agent: *\nDisallow: /x/\nAllow: /x/index.html\n");
        let v = r.explain("a", "/x/");
        assert!(v.allowed);
        let rule = v.rule.expect("rule");
        assert_eq!(rule.effective_pattern, "/x/$");
        assert_eq!(rule.pattern, "/x/index.html");
        assert!(!r.is_allowed("a", "/x/y"));
    }

    #[test]
    fn size_limit_cuts_at_line() {
        let mut body = b"User-agent: *\n".to_vec();
        while body.len() < DEFAULT_MAX_BYTES - 5 {
            body.extend_from_slice(b"Allow: /aaaaaaaa\n");
        }
        body.extend_from_slice(b"Disallow: /\n");
        let r = Robots::parse(&body);
        assert!(r.truncated());
        assert!(r.is_allowed("x", "/b"));
        assert_eq!(r.diagnostics()[0].code, codes::FILE_TOO_LARGE);
        let all = Robots::parse_with(
            &body,
            ParseOptions {
                max_bytes: usize::MAX,
                ..Default::default()
            },
        );
        assert!(!all.is_allowed("x", "/b"));
        // Below the minimum is raised to the minimum.
        let small = Robots::parse_with(
            &body,
            ParseOptions {
                max_bytes: 10,
                ..Default::default()
            },
        );
        assert_eq!(small.rules().len(), r.rules().len());
    }

    #[test]
    fn strict_mode_differences() {
        let body = b"User-agent: *\nDisallow: /%7Ea\nDisalow: /typo\nDisallow /nocolon\nAllow: /d/index.html\nDisallow: /d/\n";
        let g = Robots::parse(body);
        let s = Robots::parse_with(body, ParseOptions::rfc9309());
        assert!(g.is_allowed("a", "/~a"));
        assert!(!s.is_allowed("a", "/~a"));
        assert!(!s.is_allowed("a", "/%7ea"));
        assert!(!g.is_allowed("a", "/typo"));
        assert!(s.is_allowed("a", "/typo"));
        assert!(!g.is_allowed("a", "/nocolon"));
        assert!(s.is_allowed("a", "/nocolon"));
        assert!(g.is_allowed("a", "/d/"));
        assert!(!s.is_allowed("a", "/d/"));
    }
}
