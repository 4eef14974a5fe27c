//! The API's answers as plain functions over plain data: no I/O, so the
//! property tests compare them with the library directly and the HTTP
//! layer only decodes, calls and encodes.

use mannerly_polite::controller::{
    Config as PoliteConfig, CrawlDelayProfile, Politeness, RobotsPacing,
};
use mannerly_robots::{
    as_requested, lint_with, AgentMatch, ParseOptions, Preference, Robots, Verdict,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Most URLs one request may ask about.
pub const MAX_URLS: usize = 10_000;
/// Most agents a diff may compare.
pub const MAX_AGENTS: usize = 100;
/// Longest user-agent token accepted.
pub const MAX_AGENT_BYTES: usize = 512;
/// Longest URL accepted.
pub const MAX_URL_BYTES: usize = 8_192;

/// A request the API refuses, with what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);

/// `POST /api/check`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The robots.txt text.
    pub robots: String,
    /// The crawler's product token (`Googlebot`).
    pub agent: String,
    /// Paths (`/a`) or full URLs.
    pub urls: Vec<String>,
    /// Strict RFC 9309 mode instead of Google's behaviour.
    #[serde(default)]
    pub rfc: bool,
}

/// One verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// Whether the URL may be fetched.
    pub allowed: bool,
    /// The deciding rule's line, if a rule decided.
    pub line: Option<u32>,
    /// The deciding rule as written (`Disallow: /x`).
    pub rule: Option<String>,
}

impl Answer {
    fn of(v: &Verdict) -> Answer {
        Answer {
            allowed: v.allowed,
            line: v.rule.as_ref().map(|r| r.line),
            rule: v.rule.as_ref().map(ToString::to_string),
        }
    }
}

/// AIPREF preferences for one URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// `y`, `n` or `unknown`: training generative AI models.
    pub train_ai: &'static str,
    /// `y`, `n` or `unknown`: input to generative AI models (vocab-08).
    pub ai_use: &'static str,
    /// `y`, `n` or `unknown`: search, which overrides the others for a use
    /// under it.
    pub search: &'static str,
    /// Lines of the deciding Content-Usage rules.
    pub lines: Vec<u32>,
}

/// The answer for one URL of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UrlResult {
    /// The URL as asked.
    pub url: String,
    /// The URL as a crawler requests it (percent-encoded), when that
    /// differs from `url`: what was judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// Whether it may be fetched.
    pub allowed: bool,
    /// The deciding rule's line.
    pub line: Option<u32>,
    /// The deciding rule as written.
    pub rule: Option<String>,
    /// Where the other mode (strict RFC 9309 for a Google check, Google for
    /// a strict one) answers differently: its answer.
    pub other_mode: Option<Answer>,
    /// AIPREF usage preferences (`None` when not crawlable).
    pub content_usage: Option<Usage>,
}

/// Crawl-delay and how each engine reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrawlDelayReading {
    /// The value in seconds.
    pub seconds: f64,
    /// As written.
    pub raw: String,
    /// Its line.
    pub line: u32,
}

/// One engine profile's reading of the pacing lines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileReading {
    /// `google`, `bing`, `literal` or `conservative`.
    pub profile: &'static str,
    /// What that engine does, in words.
    pub reading: String,
}

/// What the file says beyond Allow/Disallow, for the agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Extras {
    /// The agent's Crawl-delay, if any (else the `*` group's, which Bing
    /// falls back to).
    pub crawl_delay: Option<CrawlDelayReading>,
    /// How each engine profile paces this agent (Crawl-delay and
    /// Request-rate together).
    pub pacing: Vec<ProfileReading>,
    /// The agent's Request-rate, as written, with its line.
    pub request_rate: Option<(String, u32)>,
    /// Sitemap URLs with their lines.
    pub sitemaps: Vec<(String, u32)>,
    /// The Host directive, with its line.
    pub host: Option<(String, u32)>,
    /// Clean-param directives as written, with their lines.
    pub clean_params: Vec<(String, u32)>,
}

/// `POST /api/check`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResponse {
    /// The agent asked about.
    pub agent: String,
    /// `google` or `rfc9309`.
    pub mode: &'static str,
    /// `specific`, `global` or `none`.
    pub agent_match: AgentMatch,
    /// Why the agent may match no group meant for it: it is not a product
    /// token (`Googlebot/2.1`, a whole User-Agent), and the token to ask
    /// for instead.
    pub agent_note: Option<String>,
    /// First lines of the groups that applied.
    pub groups: Vec<u32>,
    /// One per URL, in order.
    pub results: Vec<UrlResult>,
    /// Crawl-delay, Request-rate, Sitemaps, Host, Clean-param.
    pub extras: Extras,
    /// Whether the file was over 500 KiB and cut (see `/api/lint`).
    pub truncated: bool,
}

fn mode_name(rfc: bool) -> &'static str {
    if rfc {
        "rfc9309"
    } else {
        "google"
    }
}

fn check_agent(agent: &str) -> Result<(), BadRequest> {
    if agent.trim().is_empty() {
        return Err(BadRequest(
            "`agent` is empty: name a crawler's product token, e.g. `Googlebot`".into(),
        ));
    }
    if agent.len() > MAX_AGENT_BYTES {
        return Err(BadRequest(format!(
            "`agent` is {} bytes; at most {MAX_AGENT_BYTES} are accepted",
            agent.len()
        )));
    }
    Ok(())
}

fn check_urls(field: &str, urls: &[String]) -> Result<(), BadRequest> {
    if urls.len() > MAX_URLS {
        return Err(BadRequest(format!(
            "`{field}` has {} URLs; at most {MAX_URLS} are accepted per request",
            urls.len()
        )));
    }
    if let Some((i, u)) = urls
        .iter()
        .enumerate()
        .find(|(_, u)| u.len() > MAX_URL_BYTES)
    {
        return Err(BadRequest(format!(
            "`{field}[{i}]` is {} bytes; at most {MAX_URL_BYTES} are accepted",
            u.len()
        )));
    }
    Ok(())
}

fn word(p: Preference) -> &'static str {
    match p {
        Preference::Allowed => "y",
        Preference::Disallowed => "n",
        _ => "unknown",
    }
}

/// Answers a check.
pub fn check(req: &CheckRequest) -> Result<CheckResponse, BadRequest> {
    check_agent(&req.agent)?;
    check_urls("urls", &req.urls)?;
    let robots = Robots::parse_with(req.robots.as_bytes(), ParseOptions::strict(req.rfc));
    let other = Robots::parse_with(req.robots.as_bytes(), ParseOptions::strict(!req.rfc));
    let view = robots.for_agent(&req.agent);
    let other_view = other.for_agent(&req.agent);
    let mut groups = Vec::new();
    let results = req
        .urls
        .iter()
        .map(|url| {
            let judged = as_requested(url);
            let v = view.explain(&judged);
            if groups.is_empty() {
                groups.clone_from(&v.groups);
            }
            let a = Answer::of(&v);
            let o = Answer::of(&other_view.explain(&judged));
            let other_mode = (o.allowed != a.allowed).then_some(o);
            UrlResult {
                url: url.clone(),
                requested: requested(url, &judged),
                allowed: a.allowed,
                line: a.line,
                rule: a.rule,
                other_mode,
                content_usage: robots.content_usage(&req.agent, &judged).map(|u| Usage {
                    train_ai: word(u.train_ai),
                    ai_use: word(u.ai_use),
                    search: word(u.search),
                    lines: u.lines,
                }),
            }
        })
        .collect();
    if groups.is_empty() {
        groups = view.explain("/").groups;
    }
    Ok(CheckResponse {
        agent: req.agent.clone(),
        mode: mode_name(req.rfc),
        agent_match: view.agent_match(),
        agent_note: mannerly_robots::agent_note(&req.agent),
        groups,
        results,
        extras: extras(&robots, &req.agent),
        truncated: robots.truncated(),
    })
}

/// How each engine profile paces `agent` on this file, computed by the
/// crawler's own controller (`mannerly-polite`), with no minimum delay.
fn pacing(robots: &Robots, agent: &str) -> Vec<ProfileReading> {
    let profiles = [
        ("google", CrawlDelayProfile::Ignore),
        ("bing", CrawlDelayProfile::Window),
        ("literal", CrawlDelayProfile::Literal),
        ("conservative", CrawlDelayProfile::Conservative),
    ];
    profiles
        .iter()
        .map(|&(name, profile)| {
            let mut p = Politeness::new(PoliteConfig {
                min_delay: 0,
                profile,
                max_crawl_delay: u64::MAX,
                ..PoliteConfig::default()
            });
            p.set_robots("host", RobotsPacing::from_robots(robots, agent, profile));
            let h = p.host("host");
            let secs = |ms: u64| {
                if ms.is_multiple_of(1000) {
                    format!("{} s", ms / 1000)
                } else {
                    format!("{:.3} s", ms as f64 / 1000.0)
                }
            };
            let reading = match profile {
                CrawlDelayProfile::Ignore => "ignores Crawl-delay and Request-rate".to_owned(),
                CrawlDelayProfile::Window if h.window > 0 => format!(
                    "at most one request per {} window (Crawl-delay clamped to 1–30 s)",
                    secs(h.window)
                ),
                _ if h.base_delay > 0 => {
                    format!("waits {} between request starts", secs(h.base_delay))
                }
                _ => "no delay from this file".to_owned(),
            };
            ProfileReading {
                profile: name,
                reading,
            }
        })
        .collect()
}

fn extras(robots: &Robots, agent: &str) -> Extras {
    let delay = robots
        .crawl_delay(agent)
        .or_else(|| robots.global_crawl_delay());
    let pacing = pacing(robots, agent);
    Extras {
        crawl_delay: delay.map(|d| CrawlDelayReading {
            seconds: d.delay.as_secs_f64(),
            raw: d.raw.clone(),
            line: d.line,
        }),
        pacing,
        request_rate: robots.request_rate(agent).map(|r| (r.raw.clone(), r.line)),
        sitemaps: robots
            .sitemaps()
            .iter()
            .map(|s| (s.url.clone(), s.line))
            .collect(),
        host: robots.host().map(|h| (h.host.clone(), h.line)),
        clean_params: robots
            .clean_params()
            .iter()
            .map(|c| {
                let text = match &c.path_prefix {
                    Some(p) => format!("{} {p}", c.params.join("&")),
                    None => c.params.join("&"),
                };
                (text, c.line)
            })
            .collect(),
    }
}

/// `POST /api/lint`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LintRequest {
    /// The robots.txt text.
    pub robots: String,
    /// Strict RFC 9309 mode.
    #[serde(default)]
    pub rfc: bool,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// 1-based line (0: the whole file).
    pub line: u32,
    /// 1-based column (0: the whole line).
    pub column: u32,
    /// `error`, `warning` or `info`.
    pub severity: String,
    /// A stable code.
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
    /// The fix, where there is one.
    pub suggestion: Option<String>,
}

/// `POST /api/lint`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LintResponse {
    /// `google` or `rfc9309`.
    pub mode: &'static str,
    /// Findings in line order.
    pub diagnostics: Vec<Finding>,
}

/// Lints a file.
pub fn lint(req: &LintRequest) -> LintResponse {
    LintResponse {
        mode: mode_name(req.rfc),
        diagnostics: lint_with(req.robots.as_bytes(), ParseOptions::strict(req.rfc))
            .into_iter()
            .map(|d| Finding {
                line: d.line,
                column: d.column,
                severity: d.severity.to_string(),
                code: d.code,
                message: d.message,
                suggestion: d.suggestion,
            })
            .collect(),
    }
}

/// `POST /api/diff`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffRequest {
    /// The file as it is.
    pub before: String,
    /// The file as it would be.
    pub after: String,
    /// Product tokens to compare for.
    pub agents: Vec<String>,
    /// Paths or URLs.
    #[serde(default)]
    pub urls: Vec<String>,
    /// A sitemap (or sitemap index) URL whose pages are compared too; the
    /// server fetches it (`/api/diff` over HTTP only).
    #[serde(default)]
    pub sitemap: Option<String>,
    /// Strict RFC 9309 mode.
    #[serde(default)]
    pub rfc: bool,
}

/// A verdict that changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The crawler.
    pub agent: String,
    /// The URL.
    pub url: String,
    /// The URL as a crawler requests it, when that differs from `url`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// Under the current file.
    pub before: Answer,
    /// Under the edited file.
    pub after: Answer,
}

/// `POST /api/diff`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffResponse {
    /// (agent, URL) pairs compared.
    pub compared: usize,
    /// Pages taken from the sitemap, when one was given.
    pub sitemap_urls: Option<usize>,
    /// Those whose verdict changes, agent by agent, URLs in order.
    pub changes: Vec<Change>,
    /// A note for each agent that is not a product token (see
    /// [`CheckResponse::agent_note`]).
    pub agent_notes: Vec<String>,
}

/// Compares two files' verdicts.
pub fn diff(req: &DiffRequest) -> Result<DiffResponse, BadRequest> {
    if req.agents.is_empty() {
        return Err(BadRequest(
            "`agents` is empty: name at least one crawler".into(),
        ));
    }
    if req.agents.len() > MAX_AGENTS {
        return Err(BadRequest(format!(
            "`agents` has {} entries; at most {MAX_AGENTS} are accepted",
            req.agents.len()
        )));
    }
    for a in &req.agents {
        check_agent(a)?;
    }
    check_urls("urls", &req.urls)?;
    let before = Robots::parse_with(req.before.as_bytes(), ParseOptions::strict(req.rfc));
    let after = Robots::parse_with(req.after.as_bytes(), ParseOptions::strict(req.rfc));
    let mut changes = Vec::new();
    for agent in &req.agents {
        let (b, a) = (before.for_agent(agent), after.for_agent(agent));
        for url in &req.urls {
            let judged = as_requested(url);
            let (vb, va) = (b.explain(&judged), a.explain(&judged));
            if vb.allowed != va.allowed {
                changes.push(Change {
                    agent: agent.clone(),
                    url: url.clone(),
                    requested: requested(url, &judged),
                    before: Answer::of(&vb),
                    after: Answer::of(&va),
                });
            }
        }
    }
    Ok(DiffResponse {
        compared: req.agents.len() * req.urls.len(),
        sitemap_urls: None,
        changes,
        agent_notes: req
            .agents
            .iter()
            .filter_map(|a| mannerly_robots::agent_note(a))
            .collect(),
    })
}

/// `POST /api/batch`: checks against an origin's robots.txt as the crawler
/// would fetch and cache it. Borrows from the request body: a fleet's
/// batches are large, and copying every URL would cost more than checking
/// it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchRequest<'a> {
    /// `https://example.com` (a path, if any, is ignored).
    #[serde(borrow)]
    pub origin: Cow<'a, str>,
    /// The crawler's product token.
    #[serde(borrow)]
    pub agent: Cow<'a, str>,
    /// Paths, or full URLs on that origin.
    #[serde(borrow)]
    pub urls: Vec<Cow<'a, str>>,
}

impl BatchRequest<'_> {
    /// Checks the fields that need no network.
    pub fn validate(&self) -> Result<(), BadRequest> {
        check_agent(&self.agent)?;
        if self.urls.len() > MAX_URLS {
            return Err(BadRequest(format!(
                "`urls` has {} URLs; at most {MAX_URLS} are accepted per request",
                self.urls.len()
            )));
        }
        if let Some((i, u)) = self
            .urls
            .iter()
            .enumerate()
            .find(|(_, u)| u.len() > MAX_URL_BYTES)
        {
            return Err(BadRequest(format!(
                "`urls[{i}]` is {} bytes; at most {MAX_URL_BYTES} are accepted",
                u.len()
            )));
        }
        Ok(())
    }
}

/// The form a crawler requests, when it differs from what was asked.
fn requested(asked: &str, judged: &str) -> Option<String> {
    (asked != judged).then(|| judged.to_owned())
}

/// A rule written as `Disallow: /x`, serialized without building the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleText<'r>(pub &'r mannerly_robots::Rule);

impl Serialize for RuleText<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!(
            "{}: {}",
            self.0.kind.directive(),
            self.0.pattern()
        ))
    }
}

/// One URL of a batch's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchResult<'a> {
    /// The URL as asked.
    pub url: &'a str,
    /// The URL as a crawler requests it, when that differs from `url`:
    /// what was judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// Whether it may be fetched.
    pub allowed: bool,
    /// The deciding rule's line.
    pub line: Option<u32>,
    /// The deciding rule as written.
    pub rule: Option<RuleText<'a>>,
}

/// Verdicts for `urls` under `robots` (its precompiled view for the
/// agent), as a batch answers them.
pub fn batch_results<'a>(
    robots: &'a Robots,
    agent: &str,
    urls: &'a [Cow<'a, str>],
) -> Vec<BatchResult<'a>> {
    let view = robots.for_agent(agent);
    urls.iter()
        .map(|u| {
            let judged = as_requested(u);
            let (allowed, rule) = view.lookup(&judged);
            BatchResult {
                url: u,
                requested: requested(u, &judged),
                allowed,
                line: rule.map(|r| r.line),
                rule: rule.map(RuleText),
            }
        })
        .collect()
}

/// The same answer for every URL (an origin that allows or refuses all).
pub fn batch_all<'a>(urls: &'a [Cow<'a, str>], allowed: bool) -> Vec<BatchResult<'a>> {
    urls.iter()
        .map(|u| BatchResult {
            url: u,
            requested: requested(u, &as_requested(u)),
            allowed,
            line: None,
            rule: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_names_the_deciding_rule_and_the_other_mode() {
        let req = CheckRequest {
            robots: "User-agent: *\nDisallow: /x\nAllow: /x/%61\n".into(),
            agent: "Googlebot".into(),
            urls: vec!["/x/a".into(), "/y".into()],
            rfc: false,
        };
        let r = check(&req).expect("valid");
        assert_eq!(r.results[0].rule.as_deref(), Some("Disallow: /x"));
        assert!(!r.results[0].allowed);
        // Strict mode decodes %61 to `a`, so the Allow matches there.
        let other = r.results[0].other_mode.as_ref().expect("modes differ");
        assert!(other.allowed);
        assert_eq!(r.results[1].rule, None);
        assert_eq!(r.groups, vec![1]);
    }

    #[test]
    fn a_url_as_typed_is_judged_as_a_crawler_requests_it() {
        let req = CheckRequest {
            robots: "User-agent: *\nDisallow: /wiki/Käyttäjä:\n".into(),
            agent: "foo".into(),
            urls: vec![
                "/wiki/Käyttäjä:".into(),
                "/wiki/K%C3%A4ytt%C3%A4j%C3%A4:".into(),
            ],
            rfc: false,
        };
        let r = check(&req).expect("valid");
        for result in &r.results {
            assert!(!result.allowed, "{result:?}");
            assert_eq!(result.other_mode, None, "both modes agree");
        }
        assert_eq!(
            r.results[0].requested.as_deref(),
            Some("/wiki/K%C3%A4ytt%C3%A4j%C3%A4:")
        );
        assert_eq!(r.results[1].requested, None, "already as requested");
        let robots = Robots::parse(req.robots.as_bytes());
        let urls = [Cow::Borrowed("https://site.test/wiki/Käyttäjä:")];
        let batch = batch_results(&robots, "foo", &urls);
        assert!(!batch[0].allowed);
        assert_eq!(
            batch[0].requested.as_deref(),
            Some("https://site.test/wiki/K%C3%A4ytt%C3%A4j%C3%A4:")
        );
    }

    #[test]
    fn pacing_is_read_per_profile() {
        let robots = Robots::parse(b"User-agent: *\nCrawl-delay: 45\nRequest-rate: 1/5s\n");
        let p = pacing(&robots, "bot");
        assert_eq!(p[0].reading, "ignores Crawl-delay and Request-rate");
        assert!(p[1].reading.contains("30 s window"), "{}", p[1].reading);
        assert!(p[2].reading.contains("45 s"), "{}", p[2].reading);
        assert!(p[3].reading.contains("45 s"), "{}", p[3].reading);
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let req = CheckRequest {
            robots: String::new(),
            agent: " ".into(),
            urls: vec![],
            rfc: false,
        };
        let err = check(&req).expect_err("refused");
        assert!(err.0.contains("`agent` is empty"));
    }
}
