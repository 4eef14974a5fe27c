//! The linter: the parser's diagnostics plus checks that need the whole file.

use std::collections::{HashMap, HashSet};

/// Rules per crawler name up to which the pairwise shadow check runs.
const MAX_SHADOW_CHECK: usize = 2_000;

use crate::diagnostic::{codes, Diagnostic, Severity};
use crate::lexer::Lines;
use crate::robots::{ParseOptions, Robots, Rule, RuleKind};

/// Lints a robots.txt body with the default options. See [`lint_with`].
pub fn lint(body: &[u8]) -> Vec<Diagnostic> {
    lint_with(body, ParseOptions::default())
}

/// Every diagnostic for a body, sorted by line then column: what the parser
/// could not use, encoding and line-ending problems, rules that can never
/// win, duplicates, disputed values.
pub fn lint_with(body: &[u8], options: ParseOptions) -> Vec<Diagnostic> {
    lint_parsed(&Robots::parse_with(body, options), body)
}

/// [`lint_with`] for a body already parsed: `robots` must be `body` as
/// parsed (with whatever options), so a caller that keeps the parse does
/// not make a second one.
pub fn lint_parsed(robots: &Robots, body: &[u8]) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = robots.diagnostics().to_vec();
    encoding(body, &mut out);
    if out.iter().any(|d| d.code == codes::UTF16) {
        // Every other byte of UTF-16 text is NUL: one error says it all.
        out.retain(|d| d.code != codes::NUL_BYTE);
    }
    line_endings(body, &mut out);
    user_agents(robots, &mut out);
    patterns(robots, &mut out);
    rule_sets(robots, &mut out);
    crawl_delays(robots, &mut out);
    google_ignores_delay(robots, &mut out);
    duplicates_of_singletons(robots, &mut out);
    empty_last_group(robots, &mut out);
    out.sort_by_key(|d| (d.line, d.column));
    out.dedup();
    out
}

fn line_of(body: &[u8], offset: usize) -> (u32, u32) {
    let mut last = (1, 1);
    for l in Lines::new(body) {
        if l.start > offset {
            break;
        }
        last = (l.number, (offset - l.start + 1) as u32);
    }
    last
}

fn encoding(body: &[u8], out: &mut Vec<Diagnostic>) {
    if body.starts_with(&[0xFF, 0xFE]) || body.starts_with(&[0xFE, 0xFF]) || {
        let head = &body[..body.len().min(200)];
        head.len() >= 8 && head.iter().filter(|&&b| b == 0).count() * 3 >= head.len()
    } {
        out.push(
            Diagnostic::new(
                1,
                1,
                Severity::Error,
                codes::UTF16,
                "the file is UTF-16; crawlers read robots.txt as UTF-8 and find no rules in it",
            )
            .suggest("save the file as UTF-8 (plain ASCII is best)"),
        );
        return;
    }
    // A BOM anywhere but the very start. Each report costs a line lookup,
    // so at most MAX_BOM_REPORTS are placed; the rest are counted.
    const MAX_BOM_REPORTS: usize = 10;
    let mut from = 1;
    let mut found = 0usize;
    while let Some(i) = body
        .get(from..)
        .and_then(|s| memchr::memmem::find(s, b"\xEF\xBB\xBF"))
    {
        let at = from + i;
        from = at + 3;
        found += 1;
        if found > MAX_BOM_REPORTS {
            continue;
        }
        let (line, col) = line_of(body, at);
        out.push(
            Diagnostic::new(
                line,
                col,
                Severity::Error,
                codes::BOM_MID_FILE,
                "a byte order mark (U+FEFF) in the middle of the file is part of the line, so the directive on it is not recognised",
            )
            .suggest("delete the invisible U+FEFF character (often left by concatenating files)"),
        );
    }
    if found > MAX_BOM_REPORTS {
        out.push(Diagnostic::new(
            0,
            0,
            Severity::Error,
            codes::BOM_MID_FILE,
            format!("{} more byte order marks in the middle of the file (only the first {MAX_BOM_REPORTS} are listed)", found - MAX_BOM_REPORTS),
        ));
    }
    if let Err(e) = std::str::from_utf8(body) {
        let at = e.valid_up_to();
        let (line, col) = line_of(body, at);
        out.push(
            Diagnostic::new(
                line,
                col,
                Severity::Warning,
                codes::NON_UTF8,
                "the file is not valid UTF-8 (probably Latin-1 or Windows-1252); non-ASCII bytes in paths are percent-encoded as they are, so they will not match the UTF-8 URLs browsers send",
            )
            .suggest("save the file as UTF-8, or percent-encode non-ASCII paths (`/caf%C3%A9`)"),
        );
    }
}

fn line_endings(body: &[u8], out: &mut Vec<Diagnostic>) {
    let bare_cr = body
        .iter()
        .enumerate()
        .find(|&(i, &b)| b == b'\r' && body.get(i + 1) != Some(&b'\n'));
    if let Some((i, _)) = bare_cr {
        if i + 1 < body.len() {
            let (line, _) = line_of(body, i);
            out.push(
                Diagnostic::new(
                    line,
                    0,
                    Severity::Warning,
                    codes::CR_LINE_ENDINGS,
                    "lines end with a bare carriage return (old Mac style); Google and RFC 9309 accept it, but many crawlers see the whole file as one line",
                )
                .suggest("use LF or CRLF line endings"),
            );
        }
    }
}

fn user_agents(robots: &Robots, out: &mut Vec<Diagnostic>) {
    for group in robots.groups() {
        for a in &group.agents {
            if a.global {
                if a.value != "*" {
                    out.push(
                        Diagnostic::new(
                            a.line,
                            a.column,
                            Severity::Warning,
                            codes::INVALID_USER_AGENT,
                            format!(
                                "`{}` is read as `*` (every crawler); the text after it is ignored",
                                a.value
                            ),
                        )
                        .suggest("User-agent: *"),
                    );
                }
                continue;
            }
            if a.value.is_empty() {
                out.push(Diagnostic::new(
                    a.line,
                    a.column,
                    Severity::Error,
                    codes::USER_AGENT_MATCHES_NOTHING,
                    "the User-agent line is empty, so it names no crawler",
                ));
            } else if a.token.is_empty() && is_name(&a.value) {
                // `008`, `360Spider`: Google's parser cuts the name at its
                // first digit, so it names no Google crawler; a crawler
                // matching its own full name still obeys the group. No
                // rename is offered: any would change who obeys it.
                out.push(Diagnostic::new(
                    a.line,
                    a.column,
                    Severity::Warning,
                    codes::INVALID_USER_AGENT,
                    format!(
                        "Google's parser reads `{}` as an empty name (it stops at the first character outside letters, `-` and `_`), so no Google crawler obeys this group; a crawler that matches its own full name, `{}`, does",
                        a.value, a.value
                    ),
                ));
            } else if a.token.is_empty() {
                out.push(
                    Diagnostic::new(
                        a.line,
                        a.column,
                        Severity::Error,
                        codes::USER_AGENT_MATCHES_NOTHING,
                        format!(
                            "`{}` matches no crawler: a product token is letters, `-` and `_` only, and wildcards such as `*bot` are not supported",
                            a.value
                        ),
                    )
                    .suggest("name each crawler on its own User-agent line, or use `User-agent: *`"),
                );
            } else if a.token.len() != a.value.len() {
                let rest = &a.value[a.token.len()..];
                if rest.starts_with('/') {
                    // `Googlebot/2.1`: a version after the name. Google
                    // reads the name; so does the suggested line, for
                    // everyone. (After a space, the rest may be part of a
                    // name, as in `Offline Explorer`: no rename then.)
                    out.push(
                        Diagnostic::new(
                            a.line,
                            a.column,
                            Severity::Warning,
                            codes::INVALID_USER_AGENT,
                            format!(
                                "`{}` is a product token with a version after it; crawlers compare the name alone, `{}`",
                                a.value, a.token
                            ),
                        )
                        .suggest(format!("User-agent: {}", a.token)),
                    );
                } else {
                    // `MJ12bot`: Google's parser reads `MJ`; Majestic's
                    // crawler matches its own full name, digits included.
                    // Renaming either way would change who obeys the group.
                    out.push(Diagnostic::new(
                        a.line,
                        a.column,
                        Severity::Warning,
                        codes::INVALID_USER_AGENT,
                        format!(
                            "Google's parser reads `{}` as `{}` (it stops at the first character outside letters, `-` and `_`), so under Google's rules this group is for crawlers named `{}`; a crawler that matches its own full name, `{}`, obeys it too",
                            a.value, a.token, a.token, a.value
                        ),
                    ));
                }
            }
        }
    }
}

/// A crawler name with digits: letters, digits, `-` and `_` only.
fn is_name(value: &str) -> bool {
    value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn patterns(robots: &Robots, out: &mut Vec<Diagnostic>) {
    for rule in robots.rules().iter().filter(|r| !r.is_derived()) {
        let p = rule.pattern();
        if p.is_empty() {
            continue;
        }
        if !p.starts_with('/') && !p.starts_with('*') {
            let fix = if let Some(rest) = p
                .strip_prefix("http://")
                .or_else(|| p.strip_prefix("https://"))
            {
                format!(
                    "{}: /{}",
                    rule.kind.directive(),
                    rest.split_once('/').map_or("", |(_, path)| path)
                )
            } else {
                format!("{}: /{p}", rule.kind.directive())
            };
            out.push(
                Diagnostic::new(
                    rule.line,
                    rule.column,
                    Severity::Error,
                    codes::PATH_NOT_ABSOLUTE,
                    format!("`{p}` does not start with `/` or `*`, so it can never match a URL path and the rule does nothing"),
                )
                .suggest(fix),
            );
        }
        if p.contains([' ', '\t']) {
            out.push(space_in_path(rule, p));
        }
        if let Some(i) = p.as_bytes()[..p.len() - 1].iter().position(|&b| b == b'$') {
            out.push(
                Diagnostic::new(
                    rule.line,
                    rule.column,
                    Severity::Warning,
                    codes::DOLLAR_MID_PATTERN,
                    format!(
                        "`$` only anchors at the end of a pattern; at position {} of `{p}` it matches a literal `$`",
                        i + 1
                    ),
                ),
            );
        }
    }
}

/// A pattern with a space or tab inside: a URL's path sends it as `%20`,
/// so the rule matches nothing. Two paths on one line are split; one path
/// with a space is written with `%20`.
fn space_in_path(rule: &Rule, p: &str) -> Diagnostic {
    let directive = rule.kind.directive();
    let parts: Vec<&str> = p.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
    let several = parts.len() > 1 && parts.iter().all(|w| w.starts_with(['/', '*']));
    let fix = if several {
        let lines: Vec<String> = parts.iter().map(|w| format!("{directive}: {w}")).collect();
        format!("one path a line: {}", lines.join(" / "))
    } else {
        format!(
            "{directive}: {}",
            p.replace(' ', "%20").replace('\t', "%09")
        )
    };
    Diagnostic::new(
        rule.line,
        rule.column,
        Severity::Warning,
        codes::SPACE_IN_PATH,
        format!("`{p}` holds a space, which a URL's path never does (it is sent as `%20`), so no request a crawler sends matches the rule"),
    )
    .suggest(fix)
}

/// The rule sets each crawler name sees, for duplicate and shadow checks:
/// every name that appears in a user-agent line, and `*`.
fn rule_sets(robots: &Robots, out: &mut Vec<Diagnostic>) {
    let mut sets: HashMap<String, Vec<&Rule>> = HashMap::new();
    let mut seen_in: HashMap<String, HashSet<usize>> = HashMap::new();
    for group in robots.groups() {
        let rules: Vec<&Rule> = robots
            .group_rules(group)
            .iter()
            .filter(|r| !r.is_derived())
            .collect();
        for a in &group.agents {
            let key = if a.global {
                "*".to_owned()
            } else {
                a.token.to_ascii_lowercase()
            };
            if key.is_empty() {
                continue;
            }
            // Groups are distinct, so a rule joins a name's set once per
            // user-agent line naming it; `seen` keeps each rule once.
            let set = sets.entry(key.clone()).or_default();
            let seen = seen_in.entry(key).or_default();
            for r in &rules {
                if seen.insert(std::ptr::from_ref::<Rule>(r) as usize) {
                    set.push(r);
                }
            }
        }
    }
    let mut reported_dup: HashSet<u32> = HashSet::new();
    let mut reported_shadow: HashSet<u32> = HashSet::new();
    let mut names: Vec<_> = sets.keys().cloned().collect();
    names.sort();
    for name in names {
        let rules = &sets[&name];
        // The shadow check compares pairs; past this size it is skipped
        // (and said so) so linting stays fast on huge files.
        let check_shadows = rules.len() <= MAX_SHADOW_CHECK;
        if !check_shadows {
            out.push(Diagnostic::new(
                0,
                0,
                Severity::Info,
                codes::SHADOWED_RULE,
                format!(
                    "`{name}` has {} rules; the check for rules that can never win runs up to {MAX_SHADOW_CHECK} and was skipped",
                    rules.len()
                ),
            ));
        }
        let mut first_of: HashMap<(bool, &str), &Rule> = HashMap::new();
        for r in rules.iter() {
            let dup_key = (r.kind == RuleKind::Allow, r.effective_pattern());
            let first = *first_of.entry(dup_key).or_insert(r);
            if first.line != r.line {
                if reported_dup.insert(r.line) {
                    out.push(
                        Diagnostic::new(
                            r.line,
                            r.column,
                            Severity::Warning,
                            codes::DUPLICATE_RULE,
                            format!(
                                "`{}: {}` repeats line {} for `{name}`; only one of them is needed",
                                r.kind.directive(),
                                r.pattern(),
                                first.line
                            ),
                        )
                        .suggest("delete this line"),
                    );
                }
                continue;
            }
            if !check_shadows || r.pattern().is_empty() || reported_shadow.contains(&r.line) {
                continue;
            }
            if let Some(o) = rules.iter().find(|o| o.kind != r.kind && shadows(o, r)) {
                reported_shadow.insert(r.line);
                let why = if o.priority() == r.priority() {
                    "as long, and Allow wins ties"
                } else {
                    "longer, so it is more specific"
                };
                out.push(
                    Diagnostic::new(
                        r.line,
                        r.column,
                        Severity::Warning,
                        codes::SHADOWED_RULE,
                        format!(
                            "`{}: {}` can never decide for `{name}`: `{}: {}` on line {} matches every URL it matches and is {why}",
                            r.kind.directive(),
                            r.pattern(),
                            o.kind.directive(),
                            o.pattern(),
                            o.line
                        ),
                    )
                    .suggest("delete one of the two rules, or make the one that should win longer"),
                );
            }
        }
    }
}

/// Whether `o` (of the other kind) beats `r` on every path `r` matches:
/// `o` without its trailing `*`s is a literal prefix of `r`'s pattern (so it
/// matches whatever `r` matches), and `o` is longer, or as long and Allow.
fn shadows(o: &Rule, r: &Rule) -> bool {
    let op = o.effective_pattern();
    let rp = r.effective_pattern();
    if op.ends_with('$') {
        return op == rp;
    }
    let core = op.trim_end_matches('*');
    let longer =
        o.priority() > r.priority() || (o.priority() == r.priority() && o.kind == RuleKind::Allow);
    longer && !core.contains('*') && rp.starts_with(core)
}

fn crawl_delays(robots: &Robots, out: &mut Vec<Diagnostic>) {
    for group in robots.groups() {
        for d in &group.crawl_delays {
            let secs = d.delay.as_secs_f64();
            let msg = if secs == 0.0 {
                Some("Crawl-delay 0 means no delay to some engines and is ignored by others; it does not slow anyone down".to_owned())
            } else if d.delay.subsec_nanos() != 0 {
                Some(format!("Crawl-delay `{}` has a fraction; Yandex honours it, Bing and others only read whole seconds (or ignore the line)", d.raw))
            } else if secs > 30.0 {
                Some(format!(
                    "Crawl-delay {} s is above what engines honour (Bing caps at 30 s; at this delay a crawler fetches at most {} pages a day); many crawlers skip the site or ignore the value",
                    d.raw,
                    (86_400.0 / secs).floor()
                ))
            } else {
                None
            };
            if let Some(m) = msg {
                out.push(Diagnostic::new(
                    d.line,
                    0,
                    Severity::Warning,
                    codes::CRAWL_DELAY_DISPUTED,
                    m,
                ));
            }
        }
    }
}

/// A `Crawl-delay` Googlebot would read: Google documents that it ignores
/// the line, so it slows Bing and Yandex but never Google.
fn google_ignores_delay(robots: &Robots, out: &mut Vec<Diagnostic>) {
    let google = |g: &crate::robots::Group| {
        g.agents
            .iter()
            .any(|a| !a.global && a.token.to_ascii_lowercase().starts_with("googlebot"))
    };
    let own_group = robots.groups().iter().any(google);
    for group in robots.groups() {
        let obeyed = google(group) || group.is_global() && !own_group;
        if let (true, Some(d)) = (obeyed, group.crawl_delays.first()) {
            out.push(
                Diagnostic::new(
                    d.line,
                    0,
                    Severity::Info,
                    codes::CRAWL_DELAY_IGNORED_BY_GOOGLE,
                    "Googlebot ignores Crawl-delay (Google documents it); Bing, Yandex and others read it",
                )
                .suggest("to slow Google, answer 429 or 503 while the server is busy"),
            );
        }
    }
}

fn duplicates_of_singletons(robots: &Robots, out: &mut Vec<Diagnostic>) {
    for group in robots.groups() {
        for d in group.crawl_delays.iter().skip(1) {
            out.push(Diagnostic::new(
                d.line,
                0,
                Severity::Warning,
                codes::DUPLICATE_DIRECTIVE,
                format!(
                    "a second Crawl-delay in the group of line {}; only the first (line {}) counts",
                    group.line(),
                    group.crawl_delays[0].line
                ),
            ));
        }
    }
}

fn empty_last_group(robots: &Robots, out: &mut Vec<Diagnostic>) {
    let Some(last) = robots.groups().last() else {
        return;
    };
    if robots.group_rules(last).is_empty() && !last.global {
        let names: Vec<&str> = last.agents.iter().map(|a| a.value.as_str()).collect();
        out.push(Diagnostic::new(
            last.line(),
            0,
            Severity::Warning,
            codes::EMPTY_GROUP,
            format!(
                "the group for {} has no rules, so these crawlers may fetch everything and ignore the `*` group",
                names.join(", ")
            ),
        )
        .suggest("add the rules meant for them, or delete the group"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_agent_advice_never_re_aims_a_group() {
        let one = |v: &str| {
            let d = lint(format!("User-agent: {v}\nDisallow: /x\n").as_bytes());
            d.into_iter()
                .find(|d| d.line == 1)
                .unwrap_or_else(|| panic!("no diagnostic for {v}"))
        };
        // Majestic's crawler matches its own full name: no rename offered.
        let mj = one("MJ12bot");
        assert_eq!(mj.severity, Severity::Warning);
        assert!(mj.suggestion.is_none(), "{mj:?}");
        assert!(
            mj.message.contains("reads `MJ12bot` as `MJ`"),
            "{}",
            mj.message
        );
        // A name that starts with a digit: a warning, not "matches nothing".
        let zero = one("008");
        assert_eq!(zero.severity, Severity::Warning);
        assert!(zero.suggestion.is_none());
        assert!(zero.message.contains("`008`, does"), "{}", zero.message);
        // Words after a space may be part of the name.
        assert!(one("Offline Explorer").suggestion.is_none());
        // A version after the name: the name is the fix, for everyone.
        assert_eq!(
            one("Googlebot/2.1").suggestion.as_deref(),
            Some("User-agent: Googlebot")
        );
        // Still an error: nothing can match a wildcard pattern.
        assert_eq!(one("*bot").severity, Severity::Error);
    }

    fn codes_of(body: &str) -> Vec<(&'static str, u32)> {
        lint(body.as_bytes())
            .iter()
            .map(|d| (d.code, d.line))
            .collect()
    }

    #[test]
    fn a_space_in_a_path_is_called_out_with_its_fix() {
        let d =
            lint(b"User-agent: *\nDisallow: /private /tmp\nDisallow: /my folder/\nDisallow: /ok\n");
        let spaced: Vec<(u32, Option<&str>)> = d
            .iter()
            .filter(|d| d.code == codes::SPACE_IN_PATH)
            .map(|d| (d.line, d.suggestion.as_deref()))
            .collect();
        assert_eq!(
            spaced,
            [
                (
                    2,
                    Some("one path a line: Disallow: /private / Disallow: /tmp")
                ),
                (3, Some("Disallow: /my%20folder/")),
            ]
        );
    }

    #[test]
    fn finds_the_usual_mistakes() {
        let c = codes_of("Disallow: /early\nUser-agent: *\nDisalow: /x\nDisallow: admin\nDisallow: /a$b\nNoindex: /y\nUser-agent: Googlebot/2.1\nUser-agent: *bot\nAllow: /p\nDisallow: /p\nAllow: /p\nCrawl-delay: 10s\nCrawlDelay: 5\n");
        for want in [
            (codes::RULE_OUTSIDE_GROUP, 1),
            (codes::TYPO_ACCEPTED, 3),
            (codes::PATH_NOT_ABSOLUTE, 4),
            (codes::DOLLAR_MID_PATTERN, 5),
            (codes::UNSUPPORTED_DIRECTIVE, 6),
            (codes::INVALID_USER_AGENT, 7),
            (codes::USER_AGENT_MATCHES_NOTHING, 8),
            (codes::SHADOWED_RULE, 10),
            (codes::DUPLICATE_RULE, 11),
            (codes::CRAWL_DELAY_INVALID, 12),
            (codes::UNKNOWN_DIRECTIVE, 13),
        ] {
            assert!(c.contains(&want), "missing {want:?} in {c:?}");
        }
    }

    #[test]
    fn many_boms_are_counted_not_each_located() {
        let body = format!("User-agent: *\n{}", "\u{feff}Disallow: /x\n".repeat(40_000));
        let d = lint(body.as_bytes());
        let boms: Vec<_> = d.iter().filter(|x| x.code == codes::BOM_MID_FILE).collect();
        assert_eq!(boms.len(), 11);
        assert!(boms
            .iter()
            .any(|x| x.message.starts_with("39990 more byte order marks")));
    }

    #[test]
    fn clean_file_is_clean() {
        let d = lint(b"User-agent: *\nDisallow: /private/\nAllow: /private/public$\n\nSitemap: https://example.com/sitemap.xml\n");
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn file_level_problems() {
        assert!(codes_of("<!DOCTYPE html><html></html>").contains(&(codes::HTML_DOCUMENT, 1)));
        assert!(codes_of("User-agent: *\rDisallow: /\r")
            .iter()
            .any(|c| c.0 == codes::CR_LINE_ENDINGS));
        assert!(
            codes_of("User-agent: *\n\u{feff}Disallow: /\n").contains(&(codes::BOM_MID_FILE, 2))
        );
        let latin1 = lint(b"User-agent: *\nDisallow: /caf\xe9\n");
        assert!(latin1
            .iter()
            .any(|d| d.code == codes::NON_UTF8 && d.line == 2));
        assert!(codes_of("Sitemap: /sitemap.xml\n").contains(&(codes::SITEMAP_NOT_ABSOLUTE, 1)));
        assert!(codes_of("User-agent: *\nCrawl-delay: 3600\n")
            .contains(&(codes::CRAWL_DELAY_DISPUTED, 2)));
        let google =
            |text: &str| codes_of(text).contains(&(codes::CRAWL_DELAY_IGNORED_BY_GOOGLE, 2));
        assert!(google("User-agent: *\nCrawl-delay: 5\n"));
        assert!(google("User-agent: Googlebot\nCrawl-delay: 5\n"));
        assert!(!google("User-agent: bingbot\nCrawl-delay: 5\n"));
        assert!(!google(
            "User-agent: Googlebot\nDisallow: /x\n\nUser-agent: *\nCrawl-delay: 5\n"
        ));
        assert!(
            codes_of("User-agent: *\nCrawl-delay: 0\n").contains(&(codes::CRAWL_DELAY_DISPUTED, 2))
        );
        let utf16: Vec<u8> = "User-agent: *\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        let said: Vec<&str> = lint(&utf16).iter().map(|d| d.code).collect();
        assert_eq!(said, [codes::UTF16], "not a NUL-byte error a line as well");
    }
}
