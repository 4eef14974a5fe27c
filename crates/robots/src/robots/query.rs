//! What a parsed file says of an agent and a URL: verdicts with the rule
//! that decided ([`Verdict`], [`MatchedRule`]), how the agent selected its
//! groups ([`AgentMatch`]), and the extensions' answers (Crawl-delay,
//! Request-rate, Visit-time, Content-Usage).

use super::*;

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
    ///
    /// The crawler's view ([`for_agent`](Robots::for_agent)) is built on
    /// the first call and kept by the file for the next ones (one for each
    /// crawler a group names, one shared by the rest), so one call per URL
    /// costs what a kept view does, and finding the view.
    pub fn is_allowed(&self, user_agent: &str, url: &str) -> bool {
        self.for_agent(user_agent).is_allowed(url)
    }

    /// Like [`is_allowed`](Robots::is_allowed), and says why.
    pub fn explain(&self, user_agent: &str, url: &str) -> Verdict {
        self.explain_inner(&self.groups, user_agent, url, true)
    }

    /// A view of the file for one crawler, precompiled for checking many
    /// URLs. It gives the same answers as [`is_allowed`](Robots::is_allowed)
    /// and [`explain`](Robots::explain).
    pub fn for_agent(&self, user_agent: &str) -> AgentRules<'_> {
        AgentRules::of(self, user_agent)
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

    pub(super) fn verdict(
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
                    r.effective.as_str().to_owned()
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
pub(super) fn select_groups(groups: &[Group], agent: &str) -> (AgentMatch, Vec<usize>) {
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
