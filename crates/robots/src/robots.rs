//! The parsed file and the matcher.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use crate::diagnostic::{codes, Diagnostic, Severity};
use crate::extensions::{
    self, CleanParam, ContentUsage, ContentUsageRule, CrawlDelay, HostDirective, RequestRate,
    Sitemap, VisitTime,
};
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
    pub(crate) effective: Box<str>,
    /// Position of the first `*` in `effective` (`u32::MAX` if none), so
    /// matching needs no scan for the common wildcard-free pattern.
    pub(crate) first_star: u32,
    /// [`byte_mask`] of the literal bytes of a wildcard pattern: a path
    /// lacking any of them cannot match, whatever the stars absorb.
    pub(crate) required: u64,
    pub(crate) group: u32,
    /// Derived by Google's rule that `Allow: /x/index.htm*` also allows `/x/`.
    pub(crate) derived: bool,
}

impl Rule {
    fn new(
        kind: RuleKind,
        line: u32,
        column: u32,
        written: &str,
        effective: String,
        group: u32,
        derived: bool,
    ) -> Rule {
        let first_star = effective.find('*').map_or(u32::MAX, |i| i as u32);
        let literal = effective.strip_suffix('$').unwrap_or(&effective);
        let required = byte_mask(literal.as_bytes()) & !byte_mask(b"*");
        Rule {
            required,
            kind,
            line,
            column,
            written: (written != effective).then(|| written.into()),
            effective: effective.into_boxed_str(),
            first_star,
            group,
            derived,
        }
    }

    /// The value as written in the file (invalid UTF-8 shown as U+FFFD).
    pub fn pattern(&self) -> &str {
        self.written.as_deref().unwrap_or(&self.effective)
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
        let p = self.effective.as_bytes();
        if self.first_star == u32::MAX {
            match p.split_last() {
                Some((b'$', body)) => path == body,
                _ => path.starts_with(p),
            }
        } else {
            pattern::matches(p, path)
        }
    }

    /// The pattern as it is matched (percent-normalised).
    pub fn effective_pattern(&self) -> &str {
        &self.effective
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
        self.agents
            .iter()
            .any(|a| !a.global && a.token.eq_ignore_ascii_case(agent))
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
}

/// How the crawler's name selected groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentMatch {
    /// At least one group names the crawler; only those groups apply.
    Specific,
    /// No group names the crawler; the `*` groups apply.
    Global,
    /// No group applies: everything is allowed.
    None,
}

impl AgentMatch {
    /// `specific`, `global` or `none`, as the JSON output writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentMatch::Specific => "specific",
            AgentMatch::Global => "global",
            AgentMatch::None => "none",
        }
    }
}

/// The rule that decided a verdict.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MatchedRule {
    /// 1-based line of the rule in the file.
    pub line: u32,
    /// Allow or Disallow.
    pub kind: RuleKind,
    /// The pattern as written in the file.
    pub pattern: String,
    /// The pattern as matched (percent-normalised; `/x/$` for a rule derived
    /// from `Allow: /x/index.htm`).
    pub effective_pattern: String,
    /// The rule's priority (byte length of the effective pattern).
    pub priority: usize,
}

impl std::fmt::Display for MatchedRule {
    /// The rule as written: `Disallow: /x`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.directive(), self.pattern)
    }
}

/// The answer to "may this agent fetch this URL?", with the reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    /// Whether the URL may be fetched.
    pub allowed: bool,
    /// The deciding rule: the line the reference reports as matching. `None`
    /// when no rule matched. (An empty `Disallow:` that matched is reported,
    /// as the reference does, although it blocks nothing.)
    pub rule: Option<MatchedRule>,
    /// How groups were chosen for the agent.
    pub agent_match: AgentMatch,
    /// Lines of the first user-agent line of every group that applied.
    pub groups: Vec<u32>,
}

#[derive(Clone, Copy)]
struct Best {
    priority: isize,
    rule: Option<usize>,
}

impl Best {
    const NONE: Best = Best {
        priority: -1,
        rule: None,
    };
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

    /// Whether `user_agent` may fetch `url` (a full URL or a path).
    ///
    /// `user_agent` is the crawler's product token, compared whole and
    /// case-insensitively with each group's (cut) user-agent value: pass
    /// `Googlebot`, not a full User-Agent header.
    ///
    /// As in Google's library, `url` is taken as the crawler will request
    /// it, percent-encoded: `/wiki/Käyttäjä:` as typed does not match a
    /// rule for that path. Pass what people or pages give through
    /// [`as_requested`](crate::as_requested) first.
    pub fn is_allowed(&self, user_agent: &str, url: &str) -> bool {
        self.explain_inner(&self.groups, user_agent, url, false)
            .allowed
    }

    /// Like [`is_allowed`](Robots::is_allowed), and says why.
    pub fn explain(&self, user_agent: &str, url: &str) -> Verdict {
        self.explain_inner(&self.groups, user_agent, url, true)
    }

    /// A view of the file for one crawler, precompiled for checking many
    /// URLs. It gives the same answers as [`is_allowed`](Robots::is_allowed)
    /// and [`explain`](Robots::explain).
    pub fn for_agent(&self, user_agent: &str) -> AgentRules<'_> {
        let (agent_match, groups) = select_groups(&self.groups, user_agent);
        let mut order: Vec<usize> = groups
            .iter()
            .flat_map(|&g| self.groups[g].rules.clone())
            .collect();
        order.sort_by(|&a, &b| {
            let (ra, rb) = (&self.rules[a], &self.rules[b]);
            rb.priority()
                .cmp(&ra.priority())
                .then_with(|| (ra.kind == RuleKind::Disallow).cmp(&(rb.kind == RuleKind::Disallow)))
                .then_with(|| a.cmp(&b))
        });
        AgentRules::new(self, agent_match, groups, order)
    }

    pub(crate) fn normalized_path<'u>(&self, url: &'u str) -> Cow<'u, [u8]> {
        let path = path_params_query(url);
        match (self.mode, path) {
            (Mode::Google, Cow::Borrowed(p)) => Cow::Borrowed(p.as_bytes()),
            (Mode::Google, Cow::Owned(p)) => Cow::Owned(p.into_bytes()),
            (Mode::Rfc9309, Cow::Borrowed(p)) => rfc_normalize_path(p.as_bytes()),
            (Mode::Rfc9309, Cow::Owned(p)) => {
                Cow::Owned(rfc_normalize_path(p.as_bytes()).into_owned())
            }
        }
    }

    /// The verdict under one grouping of the file (`self.groups`, or the
    /// AIPREF grouping).
    fn explain_inner(&self, grouping: &[Group], agent: &str, url: &str, full: bool) -> Verdict {
        let (agent_match, groups) = select_groups(grouping, agent);
        let path = self.normalized_path(url);
        let mut allow = Best::NONE;
        let mut disallow = Best::NONE;
        let mask = byte_mask(&path);
        for &g in &groups {
            for i in grouping[g].rules.clone() {
                let rule = &self.rules[i];
                let best = match rule.kind {
                    RuleKind::Allow => &mut allow,
                    RuleKind::Disallow => &mut disallow,
                };
                let priority = rule.effective.len() as isize;
                if priority > best.priority && rule.matches_masked(&path, mask) {
                    *best = Best {
                        priority,
                        rule: Some(i),
                    };
                }
            }
        }
        let allowed = if allow.priority > 0 || disallow.priority > 0 {
            disallow.priority <= allow.priority
        } else {
            true
        };
        let deciding = if disallow.priority > allow.priority {
            disallow.rule
        } else {
            allow.rule
        };
        self.verdict(grouping, allowed, deciding, agent_match, &groups, full)
    }

    fn verdict(
        &self,
        grouping: &[Group],
        allowed: bool,
        rule: Option<usize>,
        agent_match: AgentMatch,
        groups: &[usize],
        full: bool,
    ) -> Verdict {
        let rule = rule.map(|i| {
            let r = &self.rules[i];
            MatchedRule {
                line: r.line,
                kind: r.kind,
                pattern: if full {
                    r.pattern().to_owned()
                } else {
                    String::new()
                },
                effective_pattern: if full {
                    r.effective.to_string()
                } else {
                    String::new()
                },
                priority: r.priority(),
            }
        });
        Verdict {
            allowed,
            rule,
            agent_match,
            groups: if full {
                groups.iter().map(|&g| grouping[g].line()).collect()
            } else {
                Vec::new()
            },
        }
    }

    /// Groups (by index) whose extensions apply to `agent`.
    fn agent_groups(&self, agent: &str) -> impl Iterator<Item = &Group> {
        select_groups(&self.groups, agent)
            .1
            .into_iter()
            .map(|g| &self.groups[g])
    }

    /// The first valid `Crawl-delay` of the groups that apply to the agent.
    /// Google ignores Crawl-delay; what a crawler does with it is a policy
    /// choice (see the `polite` crate).
    pub fn crawl_delay(&self, user_agent: &str) -> Option<CrawlDelay> {
        self.agent_groups(user_agent)
            .flat_map(|g| g.crawl_delays.iter())
            .min_by_key(|d| d.line)
            .cloned()
    }

    /// The first valid `Crawl-delay` of the `*` groups, whatever the agent
    /// (Bing falls back to it when its own group has none).
    pub fn global_crawl_delay(&self) -> Option<CrawlDelay> {
        self.groups
            .iter()
            .filter(|g| g.global)
            .flat_map(|g| g.crawl_delays.iter())
            .min_by_key(|d| d.line)
            .cloned()
    }

    /// The first valid `Request-rate` of the groups that apply to the agent.
    pub fn request_rate(&self, user_agent: &str) -> Option<RequestRate> {
        self.agent_groups(user_agent)
            .flat_map(|g| g.request_rates.iter())
            .min_by_key(|d| d.line)
            .cloned()
    }

    /// The first valid `Visit-time` of the groups that apply to the agent.
    pub fn visit_time(&self, user_agent: &str) -> Option<VisitTime> {
        self.agent_groups(user_agent)
            .flat_map(|g| g.visit_times.iter())
            .min_by_key(|d| d.line)
            .cloned()
    }

    /// AIPREF usage preferences (draft-ietf-aipref-attach-05 §3 with the
    /// vocabulary of draft-ietf-aipref-vocab-08) for a URL, or `None` when
    /// the URL may not be crawled at all (preferences apply only to
    /// crawlable resources).
    ///
    /// The file is read with the draft's grouping
    /// ([`aipref_groups`](Robots::aipref_groups)), in every mode: which
    /// groups apply, and whether the URL is crawlable, are decided there,
    /// whatever Google's grouping says. Among the `Content-Usage` rules of
    /// the groups that apply, those whose path matches the URL and have the
    /// longest path win (a rule without a path matches everything with the
    /// lowest priority); preferences of rules tied on length combine, the
    /// most restrictive winning per category (`n` over `y` over unknown).
    pub fn content_usage(&self, user_agent: &str, url: &str) -> Option<ContentUsage> {
        let grouping = self.aipref_groups();
        if !self.explain_inner(grouping, user_agent, url, false).allowed {
            return None;
        }
        let path = self.normalized_path(url);
        let mut best: isize = -1;
        let mut winners: Vec<&ContentUsageRule> = Vec::new();
        let (_, groups) = select_groups(grouping, user_agent);
        for rule in groups
            .iter()
            .flat_map(|&g| grouping[g].content_usage.iter())
        {
            let pat = rule.effective_path.as_deref().unwrap_or("");
            if !pattern::matches(pat.as_bytes(), &path) {
                continue;
            }
            let p = pat.len() as isize;
            if p > best {
                best = p;
                winners.clear();
            }
            if p == best {
                winners.push(rule);
            }
        }
        Some(extensions::combine_usage(&winners))
    }

    /// The usage preferences for a response: the robots.txt rule for its URL
    /// ([`content_usage`](Robots::content_usage)) combined with the
    /// response's `Content-Usage` header field, the most restrictive
    /// statement winning per category (vocab-08 §5.1). `header_lines` are
    /// the field's lines in the order received; they are joined with `, `
    /// into one value and parsed as one dictionary, as RFC 9651 §4.2 says
    /// (so a key repeated on a later line overrides an earlier one, and a
    /// value that does not parse makes the header's statement unknown).
    ///
    /// `None` when robots.txt does not let the agent crawl the URL: a
    /// resource that may not be crawled carries no preferences.
    ///
    /// ```
    /// use mannerly_robots::{Preference, Robots};
    ///
    /// let robots = Robots::parse(b"User-agent: *\nContent-Usage: search=y\n");
    /// let usage = robots
    ///     .content_usage_with_header("bot", "/page", [&b"train-ai=y"[..], b"train-ai=n"])
    ///     .unwrap();
    /// assert_eq!(usage.train_ai, Preference::Disallowed); // the later line wins
    /// assert_eq!(usage.search, Preference::Allowed); // from robots.txt
    /// assert!(usage.from_header);
    /// ```
    pub fn content_usage_with_header<'h>(
        &self,
        user_agent: &str,
        url: &str,
        header_lines: impl IntoIterator<Item = &'h [u8]>,
    ) -> Option<ContentUsage> {
        let mut usage = self.content_usage(user_agent, url)?;
        let mut joined: Vec<u8> = Vec::new();
        let mut any = false;
        for line in header_lines {
            if any {
                joined.extend_from_slice(b", ");
            }
            joined.extend_from_slice(line);
            any = true;
        }
        if any {
            let (header, _) = extensions::UsagePreferences::parse(&joined);
            usage.train_ai = usage.train_ai.combine(header.train_ai);
            usage.ai_use = usage.ai_use.combine(header.ai_use);
            usage.search = usage.search.combine(header.search);
            usage.from_header = true;
        }
        Some(usage)
    }
}

/// Groups of `groups` that apply to `agent`: those naming it, else the `*`
/// groups.
fn select_groups(groups: &[Group], agent: &str) -> (AgentMatch, Vec<usize>) {
    let specific: Vec<usize> = (0..groups.len())
        .filter(|&g| groups[g].names(agent))
        .collect();
    if !specific.is_empty() {
        return (AgentMatch::Specific, specific);
    }
    let global: Vec<usize> = (0..groups.len()).filter(|&g| groups[g].global).collect();
    if global.is_empty() {
        (AgentMatch::None, global)
    } else {
        (AgentMatch::Global, global)
    }
}

/// One crawler's view of a robots.txt file, for checking many URLs fast.
///
/// Rules are sorted once into decision order (priority, then Allow before
/// Disallow, then file order), so the first matching rule decides; answers
/// are identical to [`Robots::explain`]. A rule can only match a path that
/// starts with the rule's literal prefix (the bytes before its first `*`),
/// so rules are also indexed by the first bytes of that prefix and a check
/// only tries the rules of the path's bucket plus the few rules whose
/// prefix is too short to index.
#[derive(Debug, Clone)]
pub struct AgentRules<'r> {
    robots: &'r Robots,
    agent_match: AgentMatch,
    groups: Vec<usize>,
    /// Rule indexes in decision order.
    order: Vec<usize>,
    /// Positions in `order` of rules whose literal prefix is shorter than
    /// [`KEY_LEN`]: tried for every path.
    short: Vec<u32>,
    /// Positions in `order` of the other rules, by the first [`KEY_LEN`]
    /// bytes of their literal prefix, each list ascending.
    by_key: HashMap<[u8; KEY_LEN], Vec<u32>, BuildHasherDefault<KeyHasher>>,
}

/// Bytes of the literal prefix used as the index key.
const KEY_LEN: usize = 3;

/// Below this many rules the index costs more than it saves.
const INDEX_MIN_RULES: usize = 12;

/// A multiplicative hash for the three-byte keys (SipHash would cost more
/// than the lookup saves; the keys come from one file, so flooding is moot:
/// at worst every rule shares a bucket, which is the unindexed scan).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
}

/// A 64-bit summary of which bytes occur in `bytes` (byte value mod 64).
/// If a pattern's mask has a bit the path's lacks, some literal byte of the
/// pattern is absent from the path and it cannot match.
pub(crate) fn byte_mask(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |m, &b| m | 1 << (b & 63))
}

/// The bytes every path matching `pattern` must start with.
fn literal_prefix(pattern: &[u8]) -> &[u8] {
    match memchr::memchr(b'*', pattern) {
        Some(i) => &pattern[..i],
        None => pattern.strip_suffix(b"$").unwrap_or(pattern),
    }
}

impl<'r> AgentRules<'r> {
    fn new(
        robots: &'r Robots,
        agent_match: AgentMatch,
        groups: Vec<usize>,
        order: Vec<usize>,
    ) -> Self {
        let mut short = Vec::new();
        let mut by_key: HashMap<[u8; KEY_LEN], Vec<u32>, BuildHasherDefault<KeyHasher>> =
            HashMap::default();
        if order.len() >= INDEX_MIN_RULES {
            for (rank, &i) in order.iter().enumerate() {
                let prefix = literal_prefix(robots.rules[i].effective.as_bytes());
                match prefix
                    .get(..KEY_LEN)
                    .and_then(|k| <[u8; KEY_LEN]>::try_from(k).ok())
                {
                    Some(key) => by_key.entry(key).or_default().push(rank as u32),
                    None => short.push(rank as u32),
                }
            }
        }
        AgentRules {
            robots,
            agent_match,
            groups,
            order,
            short,
            by_key,
        }
    }

    /// How the agent selected groups.
    pub fn agent_match(&self) -> AgentMatch {
        self.agent_match
    }

    /// Whether the agent may fetch `url`.
    pub fn is_allowed(&self, url: &str) -> bool {
        let path = self.robots.normalized_path(url);
        self.decide(&path).0
    }

    /// Whether the agent may fetch `url`, and the deciding rule (borrowed
    /// from the file): what [`explain`](Self::explain) says, without
    /// building a [`Verdict`] (no allocation), for servers that answer
    /// many URLs.
    pub fn lookup(&self, url: &str) -> (bool, Option<&'r Rule>) {
        let path = self.robots.normalized_path(url);
        let (allowed, rule) = self.decide(&path);
        (allowed, rule.and_then(|i| self.robots.rules.get(i)))
    }

    /// Whether the agent may fetch `url`, and why.
    pub fn explain(&self, url: &str) -> Verdict {
        let path = self.robots.normalized_path(url);
        let (allowed, rule) = self.decide(&path);
        self.robots.verdict(
            &self.robots.groups,
            allowed,
            rule,
            self.agent_match,
            &self.groups,
            true,
        )
    }

    fn try_rule(&self, i: usize, path: &[u8], mask: u64) -> Option<(bool, Option<usize>)> {
        let rule = &self.robots.rules[i];
        rule.matches_masked(path, mask).then(|| {
            (
                rule.kind == RuleKind::Allow || rule.effective.is_empty(),
                Some(i),
            )
        })
    }

    /// The decision for an already extracted (and, in RFC mode, normalised)
    /// path: (allowed, deciding rule index).
    fn decide(&self, path: &[u8]) -> (bool, Option<usize>) {
        let mask = byte_mask(path);
        if self.order.len() < INDEX_MIN_RULES {
            return self
                .order
                .iter()
                .find_map(|&i| self.try_rule(i, path, mask))
                .unwrap_or((true, None));
        }
        let bucket: &[u32] = path
            .get(..KEY_LEN)
            .and_then(|k| <[u8; KEY_LEN]>::try_from(k).ok())
            .and_then(|k| self.by_key.get(&k))
            .map_or(&[], Vec::as_slice);
        // Merge the two ascending rank lists; the first match decides.
        let (mut a, mut b) = (0, 0);
        loop {
            let rank = match (self.short.get(a), bucket.get(b)) {
                (Some(&x), Some(&y)) if x < y => {
                    a += 1;
                    x
                }
                (_, Some(&y)) => {
                    b += 1;
                    y
                }
                (Some(&x), None) => {
                    a += 1;
                    x
                }
                (None, None) => return (true, None),
            };
            if let Some(d) = self.try_rule(self.order[rank as usize], path, mask) {
                return d;
            }
        }
    }
}

/// Per-line state of the group builder, mirroring the reference's
/// `seen_separator_` logic.
struct Parser {
    options: ParseOptions,
    robots: Robots,
    /// Index of the group user-agent lines are currently added to.
    current: Option<usize>,
    /// A rule was seen since the last user-agent line.
    seen_rule: bool,
    /// Google mode: the line of the first `Content-Usage` rule read since
    /// the current group's last user-agent line. A user-agent line that
    /// comes while this is set starts a new group for AIPREF only.
    usage_since_agents: Option<u32>,
    /// Where the AIPREF grouping splits a group: (group, index of the
    /// user-agent line that starts the AIPREF group).
    aipref_splits: Vec<(usize, usize)>,
}

const UNSUPPORTED: &[&str] = &[
    "noindex",
    "nofollow",
    "noarchive",
    "nosnippet",
    "noimageindex",
    "revisit-after",
    "domain",
    "content-signal",
];

const KNOWN_KEYS: &[&str] = &[
    "user-agent",
    "allow",
    "disallow",
    "sitemap",
    "crawl-delay",
    "request-rate",
    "visit-time",
    "host",
    "clean-param",
    "content-usage",
];

impl Parser {
    fn new(mut options: ParseOptions) -> Self {
        options.max_bytes = options.max_bytes.max(DEFAULT_MAX_BYTES);
        Parser {
            options,
            robots: Robots {
                mode: options.mode,
                groups: Vec::new(),
                aipref_groups: Vec::new(),
                rules: Vec::new(),
                sitemaps: Vec::new(),
                hosts: Vec::new(),
                clean_params: Vec::new(),
                diagnostics: Vec::new(),
                lines: 0,
                read_bytes: 0,
                total_bytes: 0,
            },
            current: None,
            seen_rule: false,
            usage_since_agents: None,
            aipref_splits: Vec::new(),
        }
    }

    fn strict(&self) -> bool {
        self.options.mode == Mode::Rfc9309
    }

    fn diag(&mut self, d: Diagnostic) {
        self.robots.diagnostics.push(d);
    }

    fn run(mut self, full: &[u8]) -> Robots {
        let body = cut_to_limit(full, self.options.max_bytes);
        self.robots.total_bytes = full.len();
        self.robots.read_bytes = body.len();
        if body.len() < full.len() {
            let mut d = Diagnostic::new(
                0,
                0,
                Severity::Error,
                codes::FILE_TOO_LARGE,
                format!(
                    "the file is {} bytes; only the first {} bytes (up to the last complete line within the {}-byte limit) were read, and every rule after that is ignored",
                    full.len(),
                    body.len(),
                    self.options.max_bytes
                ),
            );
            d = d.suggest("keep robots.txt under 500 KiB: merge rules with wildcards and drop rules for paths that no longer exist");
            self.diag(d);
        }
        if looks_like_html(body) {
            self.diag(
                Diagnostic::new(
                    1,
                    1,
                    Severity::Error,
                    codes::HTML_DOCUMENT,
                    "this is an HTML page, not a robots.txt file: crawlers find no rules in it (a site that serves its home or error page at /robots.txt allows everything)",
                )
                .suggest("serve a plain-text robots.txt, or a 404 if the site has no rules"),
            );
        }
        let mut last_line = 0;
        for raw in Lines::new(body) {
            last_line = raw.number;
            self.line(body, raw);
        }
        self.robots.lines = last_line;
        self.build_aipref_groups();
        self.robots.diagnostics.sort_by_key(|d| d.line);
        self.robots
    }

    /// Cuts the groups where AIPREF's grouping starts a new one. Groups are
    /// runs of lines, so each piece takes the lines (rules, extensions)
    /// from its first user-agent line up to the next piece's.
    fn build_aipref_groups(&mut self) {
        if self.aipref_splits.is_empty() {
            return;
        }
        let splits = std::mem::take(&mut self.aipref_splits);
        let mut out = Vec::with_capacity(self.robots.groups.len() + splits.len());
        for (g, group) in self.robots.groups.iter().enumerate() {
            let mut starts = vec![0];
            starts.extend(splits.iter().filter(|s| s.0 == g).map(|s| s.1));
            for (k, &first) in starts.iter().enumerate() {
                let last = starts.get(k + 1).copied().unwrap_or(group.agents.len());
                let from = group.agents.get(first).map_or(0, |a| a.line);
                let to = starts
                    .get(k + 1)
                    .and_then(|&i| group.agents.get(i))
                    .map_or(u32::MAX, |a| a.line);
                let within = |line: u32| from <= line && line < to;
                let rules = group.rules.clone();
                let lo = rules.start
                    + self.robots.rules[rules.clone()]
                        .iter()
                        .take_while(|r| r.line < from)
                        .count();
                let hi = lo
                    + self.robots.rules[lo..rules.end]
                        .iter()
                        .take_while(|r| r.line < to)
                        .count();
                let agents = group.agents.get(first..last).unwrap_or_default().to_vec();
                out.push(Group {
                    global: agents.iter().any(|a| a.global),
                    agents,
                    rules: lo..hi,
                    crawl_delays: keep(&group.crawl_delays, |d| within(d.line)),
                    request_rates: keep(&group.request_rates, |d| within(d.line)),
                    visit_times: keep(&group.visit_times, |d| within(d.line)),
                    content_usage: keep(&group.content_usage, |d| within(d.line)),
                });
            }
        }
        self.robots.aipref_groups = out;
    }

    fn line(&mut self, body: &[u8], raw: lexer::RawLine) {
        let lexed = lexer::lex_line(body, raw);
        let n = raw.number;
        if raw.too_long {
            self.diag(Diagnostic::new(
                n,
                (lexer::MAX_LINE_BYTES + 1) as u32,
                Severity::Error,
                codes::LINE_TOO_LONG,
                format!(
                    "the line is longer than {} bytes; Google ignores everything after that byte",
                    lexer::MAX_LINE_BYTES
                ),
            ));
        }
        if lexed.has_nul {
            self.diag(Diagnostic::new(
                n,
                0,
                Severity::Error,
                codes::NUL_BYTE,
                "the line contains a NUL byte; everything after it on this line is ignored",
            ));
        }
        let Some(d) = lexed.directive else {
            let content_end = lexed.comment.unwrap_or(raw.end);
            let content = &body[raw.start..content_end];
            if content.iter().any(|&b| !lexer::is_space(b) && b != 0) && !lexed.has_nul {
                self.diag(Diagnostic::new(
                    n,
                    1,
                    Severity::Error,
                    codes::NOT_A_DIRECTIVE,
                    "this line is not a `key: value` directive and is ignored",
                ));
            }
            return;
        };
        let key = &body[d.key.0..d.key.1];
        let value = &body[d.value.0..d.value.1];
        let col = |pos: usize| (pos - raw.start + 1) as u32;
        let mut kind = d.kind;
        if self.strict() && (d.typo || d.key_is_prefix || d.missing_colon) {
            kind = KeyKind::Other;
        }
        if d.missing_colon && key.eq_ignore_ascii_case(b"content-usage") {
            // AIPREF's grammar requires the colon, and Google has no
            // behaviour of its own to copy here: the line is not read.
            self.diag(
                Diagnostic::new(
                    n,
                    col(d.key.1),
                    Severity::Error,
                    codes::CONTENT_USAGE_NO_COLON,
                    "the colon after Content-Usage is missing; AIPREF (draft-ietf-aipref-attach-05) requires it, so this line is not read",
                )
                .suggest(format!("Content-Usage: {}", String::from_utf8_lossy(value))),
            );
            return;
        }
        if d.missing_colon {
            let key_s = String::from_utf8_lossy(key);
            let value_s = String::from_utf8_lossy(value);
            let (sev, msg) = if self.strict() {
                (Severity::Error, "the colon after the key is missing; RFC 9309 requires it, so this line is ignored")
            } else {
                (Severity::Warning, "the colon after the key is missing; Google accepts this, but other crawlers ignore the line")
            };
            self.diag(
                Diagnostic::new(n, col(d.key.1), sev, codes::MISSING_COLON, msg)
                    .suggest(format!("{key_s}: {value_s}")),
            );
            if self.strict() {
                return;
            }
        }
        if d.kind != KeyKind::Other && (d.typo || d.key_is_prefix) {
            let proper = match d.kind {
                KeyKind::UserAgent => "User-agent",
                KeyKind::Allow => "Allow",
                KeyKind::Disallow => "Disallow",
                KeyKind::Sitemap => "Sitemap",
                KeyKind::Other => "",
            };
            let key_s = String::from_utf8_lossy(key);
            let (sev, msg) = if self.strict() {
                (
                    Severity::Error,
                    format!("`{key_s}` is not `{proper}`; RFC 9309 does not accept it, so this line is ignored (Google would read it as {proper})"),
                )
            } else if d.typo {
                (
                    Severity::Warning,
                    format!("`{key_s}` is a misspelling of `{proper}`; Google accepts it anyway, other crawlers ignore the line"),
                )
            } else {
                (
                    Severity::Warning,
                    format!("`{key_s}` is read as `{proper}` because it starts with it; Google accepts this, other crawlers ignore the line"),
                )
            };
            let code = if d.typo {
                codes::TYPO_ACCEPTED
            } else {
                codes::KEY_PREFIX
            };
            self.diag(
                Diagnostic::new(n, col(d.key.0), sev, code, msg)
                    .suggest(format!("{proper}: {}", String::from_utf8_lossy(value))),
            );
        }
        match kind {
            KeyKind::UserAgent => self.user_agent(n, value, col(d.value.0)),
            KeyKind::Allow => self.rule(n, RuleKind::Allow, value, col(d.value.0)),
            KeyKind::Disallow => self.rule(n, RuleKind::Disallow, value, col(d.value.0)),
            KeyKind::Sitemap => self.sitemap(n, value, col(d.value.0)),
            KeyKind::Other => self.other(n, key, value, col(d.key.0), col(d.value.0)),
        }
    }

    fn user_agent(&mut self, line: u32, value: &[u8], column: u32) {
        let usage_line = self.usage_since_agents.take();
        if let (Some(g), Some(usage_line), false) = (self.current, usage_line, self.seen_rule) {
            self.aipref_group_split(g, line, usage_line);
        }
        if self.current.is_none() || self.seen_rule {
            self.robots.groups.push(Group {
                agents: Vec::new(),
                rules: self.robots.rules.len()..self.robots.rules.len(),
                global: false,
                crawl_delays: Vec::new(),
                request_rates: Vec::new(),
                visit_times: Vec::new(),
                content_usage: Vec::new(),
            });
            self.current = Some(self.robots.groups.len() - 1);
            self.seen_rule = false;
        }
        let global = value.first() == Some(&b'*')
            && (value.len() == 1
                || value
                    .get(1)
                    .is_some_and(|&b| b.is_ascii_whitespace() || b == 0x0B));
        let token_len = value
            .iter()
            .take_while(|&&b| b.is_ascii_alphabetic() || b == b'-' || b == b'_')
            .count();
        let agent = AgentLine {
            line,
            column,
            value: String::from_utf8_lossy(value).into_owned(),
            // ASCII by construction.
            token: String::from_utf8_lossy(&value[..token_len]).into_owned(),
            global,
        };
        if let Some(g) = self.current.and_then(|g| self.robots.groups.get_mut(g)) {
            g.global |= global;
            g.agents.push(agent);
        }
    }

    /// A user-agent line that continues group `g` for Google but starts a
    /// new group for AIPREF, because of the Content-Usage rule on
    /// `usage_line`.
    fn aipref_group_split(&mut self, g: usize, line: u32, usage_line: u32) {
        let Some(group) = self.robots.groups.get(g) else {
            return;
        };
        self.aipref_splits.push((g, group.agents.len()));
        let opened = group.line();
        self.diag(
            Diagnostic::new(
                line,
                1,
                Severity::Warning,
                codes::CONTENT_USAGE_GROUPING,
                format!(
                    "crawlers disagree on which group this User-agent line opens: Google reads it as part of the group of line {opened}, because only Allow and Disallow end a group for it; AIPREF (draft-ietf-aipref-attach-05) makes the Content-Usage line {usage_line} a rule, so for crawlers that read Content-Usage a new group starts here, and the Allow/Disallow and Content-Usage rules that follow apply only to this line's crawlers"
                ),
            )
            .suggest("if these crawlers share the group, move every User-agent line of the group above its first Content-Usage line; if they need their own rules, put an Allow or Disallow line in the group above, before this User-agent line"),
        );
    }

    fn rule(&mut self, line: u32, kind: RuleKind, value: &[u8], col: u32) {
        let Some(g) = self.current else {
            self.diag(
                Diagnostic::new(
                    line,
                    1,
                    Severity::Error,
                    codes::RULE_OUTSIDE_GROUP,
                    format!(
                        "this {} line comes before any User-agent line, so no crawler obeys it",
                        kind.directive()
                    ),
                )
                .suggest("put `User-agent: *` (or the crawler's name) above it"),
            );
            return;
        };
        self.seen_rule = true;
        let effective: Vec<u8> = match self.options.mode {
            Mode::Google => escape_pattern(value).into_owned(),
            Mode::Rfc9309 => rfc_normalize_pattern(value).into_owned(),
        };
        // Escaping leaves only ASCII, so this never replaces anything.
        let effective = String::from_utf8(effective)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let pattern = std::str::from_utf8(value)
            .map_or_else(|_| String::from_utf8_lossy(value), Cow::Borrowed);
        let derived = if kind == RuleKind::Allow && self.options.mode == Mode::Google {
            index_htm_pattern(&effective)
        } else {
            None
        };
        self.robots.rules.push(Rule::new(
            kind, line, col, &pattern, effective, g as u32, false,
        ));
        if let Some(d) = derived {
            self.robots
                .rules
                .push(Rule::new(kind, line, col, &pattern, d, g as u32, true));
        }
        if let Some(group) = self.robots.groups.get_mut(g) {
            group.rules.end = self.robots.rules.len();
        }
    }

    fn sitemap(&mut self, line: u32, value: &[u8], col: u32) {
        match extensions::parse_sitemap(value) {
            Ok(url) => self.robots.sitemaps.push(Sitemap { url, line }),
            Err(why) => self.diag(Diagnostic::new(
                line,
                col,
                Severity::Error,
                codes::SITEMAP_NOT_ABSOLUTE,
                why,
            )),
        }
    }

    fn other(&mut self, line: u32, key: &[u8], value: &[u8], key_col: u32, col: u32) {
        let lower = String::from_utf8_lossy(key).to_ascii_lowercase();
        let group = self.current;
        match lower.as_str() {
            "crawl-delay" => match (extensions::parse_crawl_delay(value), group) {
                (Ok(v), Some(g)) => self.robots.groups[g]
                    .crawl_delays
                    .push(CrawlDelay { line, ..v }),
                (Ok(_), None) => self.diag(outside(line, key_col, "Crawl-delay")),
                (Err(why), _) => self.diag(
                    Diagnostic::new(line, col, Severity::Error, codes::CRAWL_DELAY_INVALID, why)
                        .suggest("write a whole number of seconds, e.g. `Crawl-delay: 10`"),
                ),
            },
            "request-rate" => match (extensions::parse_request_rate(value), group) {
                (Ok(v), Some(g)) => self.robots.groups[g]
                    .request_rates
                    .push(RequestRate { line, ..v }),
                (Ok(_), None) => self.diag(outside(line, key_col, "Request-rate")),
                (Err(why), _) => self.diag(
                    Diagnostic::new(line, col, Severity::Error, codes::REQUEST_RATE_INVALID, why)
                        .suggest("write requests/period with a unit, e.g. `Request-rate: 1/10s`"),
                ),
            },
            "visit-time" => match (extensions::parse_visit_time(value), group) {
                (Ok(v), Some(g)) => self.robots.groups[g]
                    .visit_times
                    .push(VisitTime { line, ..v }),
                (Ok(_), None) => self.diag(outside(line, key_col, "Visit-time")),
                (Err(why), _) => self.diag(
                    Diagnostic::new(line, col, Severity::Error, codes::VISIT_TIME_INVALID, why)
                        .suggest("write a UTC range, e.g. `Visit-time: 0100-0645`"),
                ),
            },
            "content-usage" => self.content_usage(line, value, key_col, col, group),
            "host" => match extensions::parse_host(value) {
                Ok(h) => self.robots.hosts.push(HostDirective { line, ..h }),
                Err(why) => self.diag(Diagnostic::new(
                    line,
                    col,
                    Severity::Error,
                    codes::HOST_INVALID,
                    why,
                )),
            },
            "clean-param" => match extensions::parse_clean_param(value) {
                Ok(c) => self.robots.clean_params.push(CleanParam { line, ..c }),
                Err(why) => self.diag(
                    Diagnostic::new(line, col, Severity::Error, codes::CLEAN_PARAM_INVALID, why)
                        .suggest("write `Clean-param: ref&sid /path/`"),
                ),
            },
            _ => self.not_a_directive(line, key, value, key_col, &lower),
        }
    }

    /// An AIPREF `Content-Usage` line (attach-05).
    fn content_usage(
        &mut self,
        line: u32,
        value: &[u8],
        key_col: u32,
        col: u32,
        group: Option<usize>,
    ) {
        let escape: fn(&[u8]) -> Cow<'_, [u8]> = match self.options.mode {
            Mode::Google => escape_pattern,
            Mode::Rfc9309 => rfc_normalize_pattern,
        };
        let (rule, err) = extensions::parse_content_usage(value, line, escape);
        if let Some(why) = err {
            self.diag(Diagnostic::new(line, col, Severity::Warning, codes::CONTENT_USAGE_INVALID, why)
                .suggest("write a preference dictionary, e.g. `Content-Usage: train-ai=n` or `Content-Usage: /docs/ train-ai=y, search=y`"));
        }
        match group {
            Some(g) => {
                self.robots.groups[g].content_usage.push(rule);
                // A rule (attach-05 §3): in strict mode it ends the
                // group like Allow/Disallow; in Google mode only the
                // AIPREF grouping ends there.
                if self.strict() {
                    self.seen_rule = true;
                } else if self.usage_since_agents.is_none() {
                    self.usage_since_agents = Some(line);
                }
            }
            None => self.diag(outside(line, key_col, "Content-Usage")),
        }
    }

    /// A line whose key is no directive this parser reads: unsupported, a
    /// bare URL, or unknown (with the closest known name).
    fn not_a_directive(&mut self, line: u32, key: &[u8], value: &[u8], key_col: u32, lower: &str) {
        match lower {
        k if UNSUPPORTED.contains(&k) => self.diag(Diagnostic::new(
            line,
            key_col,
            Severity::Warning,
            codes::UNSUPPORTED_DIRECTIVE,
            format!(
                "`{}` is not a robots.txt directive that Google or RFC 9309 supports; crawlers ignore it",
                String::from_utf8_lossy(key)
            ),
        )
        .suggest(if k.starts_with("no") {
            "use a robots meta tag or an X-Robots-Tag header for indexing controls"
        } else {
            "remove the line"
        })),
        "http" | "https" if value.starts_with(b"//") => {
            let url = format!("{lower}:{}", String::from_utf8_lossy(value));
            self.diag(
                Diagnostic::new(
                    line,
                    key_col,
                    Severity::Warning,
                    codes::UNKNOWN_DIRECTIVE,
                    format!("`{url}` is a bare URL, not a directive; crawlers ignore it (a sitemap needs a `Sitemap:` line)"),
                )
                .suggest(format!("Sitemap: {url}")),
            );
        }
        _ => {
            let key_s = String::from_utf8_lossy(key).into_owned();
            let mut d = Diagnostic::new(
                line,
                key_col,
                Severity::Warning,
                codes::UNKNOWN_DIRECTIVE,
                format!("`{key_s}` is not a directive any crawler knows; the line is ignored"),
            );
            if let Some(s) = closest_known(lower) {
                d.message = format!(
                    "`{key_s}` is not a directive any crawler knows (did you mean `{s}`?); the line is ignored"
                );
                d = d.suggest(format!("{}: {}", canonical_name(s), String::from_utf8_lossy(value)));
            }
            self.diag(d);
        }
        }
    }
}

/// A directive that belongs to a group, before any User-agent line.
fn outside(line: u32, key_col: u32, what: &str) -> Diagnostic {
    Diagnostic::new(
        line,
        key_col,
        Severity::Warning,
        codes::DIRECTIVE_OUTSIDE_GROUP,
        format!("this {what} line comes before any User-agent line, so it applies to no crawler"),
    )
    .suggest("move it into the group of the crawlers it is meant for")
}

/// The items of `items` that `f` keeps.
fn keep<T: Clone>(items: &[T], f: impl Fn(&T) -> bool) -> Vec<T> {
    items.iter().filter(|&t| f(t)).cloned().collect()
}

fn canonical_name(lower: &str) -> &'static str {
    match lower {
        "user-agent" => "User-agent",
        "allow" => "Allow",
        "disallow" => "Disallow",
        "sitemap" => "Sitemap",
        "crawl-delay" => "Crawl-delay",
        "request-rate" => "Request-rate",
        "visit-time" => "Visit-time",
        "host" => "Host",
        "clean-param" => "Clean-param",
        "content-usage" => "Content-Usage",
        _ => "",
    }
}

/// The known directive closest to `key` by edit distance, if close enough
/// to be a typo.
fn closest_known(key: &str) -> Option<&'static str> {
    if key.len() > 40 {
        return None;
    }
    KNOWN_KEYS
        .iter()
        .map(|k| (edit_distance(key, k), *k))
        .filter(|(d, k)| *d > 0 && *d <= 2.max(k.len() / 5))
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Google's rule: a value whose last path segment starts with `index.htm`
/// also allows the directory itself: `Allow: /x/index.html` gives `/x/$`.
fn index_htm_pattern(effective: &str) -> Option<String> {
    let slash = effective.rfind('/')?;
    if effective[slash..].starts_with("/index.htm") {
        Some(format!("{}$", &effective[..=slash]))
    } else {
        None
    }
}

/// The body up to the size limit, cut after the last line terminator
/// within it.
fn cut_to_limit(body: &[u8], max: usize) -> &[u8] {
    if body.len() <= max {
        return body;
    }
    match memchr::memrchr2(b'\n', b'\r', &body[..max]) {
        Some(i) => &body[..=i],
        None => &[],
    }
}

fn looks_like_html(body: &[u8]) -> bool {
    let start = body
        .iter()
        .position(|&b| !lexer::is_space(b) && !matches!(b, 0xEF | 0xBB | 0xBF))
        .unwrap_or(body.len());
    let head = &body[start..body.len().min(start + 64)];
    let lower: Vec<u8> = head.to_ascii_lowercase();
    lower.starts_with(b"<!doctype html")
        || lower.starts_with(b"<html")
        || lower.starts_with(b"<head")
        || lower.starts_with(b"<body")
        || (lower.starts_with(b"<?xml") && memchr::memmem::find(&lower, b"html").is_some())
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
