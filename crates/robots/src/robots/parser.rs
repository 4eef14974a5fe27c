//! Building a [`Robots`] from bytes, line by line, as Google's reference
//! library groups them; the diagnostics of what cannot be used.

use super::*;

/// Per-line state of the group builder, mirroring the reference's
/// `seen_separator_` logic.
pub(super) struct Parser {
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
    pub(super) fn new(mut options: ParseOptions) -> Self {
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
                unnamed_view: Default::default(),
                named_views: Default::default(),
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

    pub(super) fn run(mut self, full: &[u8]) -> Robots {
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
        // Room for a rule every 32 bytes (real files average one every 38),
        // so most rules are written in place instead of copied at each
        // doubling of their list; what is left over goes back.
        self.robots.rules.reserve(body.len() / 32);
        for raw in Lines::new(body) {
            last_line = raw.number;
            self.line(body, raw);
        }
        self.robots.lines = last_line;
        self.robots.rules.shrink_to_fit();
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

    /// One line: what lexing found wrong with it, then its key read (as
    /// Google reads misspelt and colon-less keys, unless strict), then the
    /// directive of that key.
    fn line(&mut self, body: &[u8], raw: lexer::RawLine) {
        let lexed = lexer::lex_line(body, raw);
        self.lexing_problems(raw, &lexed);
        let Some(d) = lexed.directive else {
            self.not_a_directive_line(body, raw, &lexed);
            return;
        };
        let key = &body[d.key.0..d.key.1];
        let value = &body[d.value.0..d.value.1];
        let col = |pos: usize| (pos - raw.start + 1) as u32;
        let Some(kind) = self.key_kind(raw.number, &d, key, value, col(d.key.1)) else {
            return;
        };
        if d.kind != KeyKind::Other && (d.typo || d.key_is_prefix) {
            self.misread_key(raw.number, &d, key, value, col(d.key.0));
        }
        let n = raw.number;
        match kind {
            KeyKind::UserAgent => self.user_agent(n, value, col(d.value.0)),
            KeyKind::Allow => self.rule(n, RuleKind::Allow, value, col(d.value.0)),
            KeyKind::Disallow => self.rule(n, RuleKind::Disallow, value, col(d.value.0)),
            KeyKind::Sitemap => self.sitemap(n, value, col(d.value.0)),
            KeyKind::Other => self.other(n, key, value, col(d.key.0), col(d.value.0)),
        }
    }

    /// A line cut at the length limit, or holding a NUL byte.
    fn lexing_problems(&mut self, raw: lexer::RawLine, lexed: &lexer::LexedLine) {
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
    }

    /// A line with no directive: blank or a comment, or text that is not
    /// `key: value`.
    fn not_a_directive_line(&mut self, body: &[u8], raw: lexer::RawLine, lexed: &lexer::LexedLine) {
        let content_end = lexed.comment.unwrap_or(raw.end);
        let content = &body[raw.start..content_end];
        if content.iter().any(|&b| !lexer::is_space(b) && b != 0) && !lexed.has_nul {
            self.diag(Diagnostic::new(
                raw.number,
                1,
                Severity::Error,
                codes::NOT_A_DIRECTIVE,
                "this line is not a `key: value` directive and is ignored",
            ));
        }
    }

    /// The key a line is read as (strict mode reads a misspelt, prefixed or
    /// colon-less key as no directive of its own), or `None` when the line
    /// is not read at all. `colon_col` is where the missing colon belongs.
    fn key_kind(
        &mut self,
        n: u32,
        d: &lexer::Directive,
        key: &[u8],
        value: &[u8],
        colon_col: u32,
    ) -> Option<KeyKind> {
        let mut kind = d.kind;
        if self.strict() && (d.typo || d.key_is_prefix || d.missing_colon) {
            kind = KeyKind::Other;
        }
        if !d.missing_colon {
            return Some(kind);
        }
        if key.eq_ignore_ascii_case(b"content-usage") {
            // AIPREF's grammar requires the colon, and Google has no
            // behaviour of its own to copy here: the line is not read.
            self.diag(
                Diagnostic::new(
                    n,
                    colon_col,
                    Severity::Error,
                    codes::CONTENT_USAGE_NO_COLON,
                    "the colon after Content-Usage is missing; AIPREF (draft-ietf-aipref-attach-05) requires it, so this line is not read",
                )
                .suggest(format!("Content-Usage: {}", String::from_utf8_lossy(value))),
            );
            return None;
        }
        let key_s = String::from_utf8_lossy(key);
        let value_s = String::from_utf8_lossy(value);
        let (sev, msg) = if self.strict() {
            (
                Severity::Error,
                "the colon after the key is missing; RFC 9309 requires it, so this line is ignored",
            )
        } else {
            (Severity::Warning, "the colon after the key is missing; Google accepts this, but other crawlers ignore the line")
        };
        self.diag(
            Diagnostic::new(n, colon_col, sev, codes::MISSING_COLON, msg)
                .suggest(format!("{key_s}: {value_s}")),
        );
        (!self.strict()).then_some(kind)
    }

    /// A key Google reads as another: misspelt (`Dissallow`) or longer
    /// than the one it starts with (`Disallowed`).
    fn misread_key(&mut self, n: u32, d: &lexer::Directive, key: &[u8], value: &[u8], col: u32) {
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
            Diagnostic::new(n, col, sev, code, msg)
                .suggest(format!("{proper}: {}", String::from_utf8_lossy(value))),
        );
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
        // Most values are plain ASCII with nothing to escape: matched as
        // written, with no copy and no UTF-8 check.
        let plain = value.is_ascii()
            && crate::find::byte(value, b'%').is_none()
            && (self.options.mode == Mode::Google || !rfc_escapes(value));
        let effective: Cow<'_, [u8]> = match (plain, self.options.mode) {
            (true, _) => Cow::Borrowed(value),
            (false, Mode::Google) => escape_pattern(value),
            (false, Mode::Rfc9309) => rfc_normalize_pattern(value),
        };
        // The value as written, when matching uses another form.
        let written = match &effective {
            Cow::Borrowed(_) => None,
            Cow::Owned(_) => Some(String::from_utf8_lossy(value)),
        };
        let written = written.as_deref();
        let group = g as u32;
        let rule = Rule::new(kind, line, col, written, &effective, group, false);
        self.robots.rules.push(rule);
        if kind == RuleKind::Allow && self.options.mode == Mode::Google {
            if let Some(d) = index_htm_pattern(&effective) {
                // The derived rule shows the line it came from.
                let as_written =
                    written.map_or_else(|| String::from_utf8_lossy(value), Cow::Borrowed);
                let rule = Rule::new(kind, line, col, Some(&as_written), &d, group, true);
                self.robots.rules.push(rule);
            }
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
        for (severity, why) in extensions::usage_unread(&rule.preference) {
            self.diag(Diagnostic::new(
                line,
                col,
                severity,
                codes::CONTENT_USAGE_UNREAD,
                why,
            ));
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
/// Whether RFC 9309's normalisation may change `value` beyond what
/// Google's escaping would (a `$` before the end, or a general delimiter
/// in the query, are written percent-encoded).
fn rfc_escapes(value: &[u8]) -> bool {
    let last = value.len().saturating_sub(1);
    value[..last].contains(&b'$') || value.contains(&b'?')
}

fn index_htm_pattern(effective: &[u8]) -> Option<Vec<u8>> {
    let slash = effective.iter().rposition(|&b| b == b'/')?;
    if effective[slash..].starts_with(b"/index.htm") {
        let mut d = effective[..=slash].to_vec();
        d.push(b'$');
        Some(d)
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
