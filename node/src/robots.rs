//! `Robots`: a parsed robots.txt, parsed once and asked many times.

use std::sync::Arc;

use mannerly_polite::controller::{
    Config, CrawlDelayProfile, Politeness as Controller, RobotsPacing,
};
use mannerly_robots::{
    as_requested, Diagnostic, Mode, ParseOptions, Preference, Robots as Parsed,
    Verdict as RustVerdict,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::{check_agent, invalid};

/// A parsed robots.txt file. Never throws on content: what cannot be used
/// is reported by `lint()`.
#[napi]
pub struct Robots {
    pub(crate) parsed: Arc<Parsed>,
}

/// How `Robots.parse` reads a file.
#[napi(object, js_name = "ParseOptions")]
pub struct ParseOptionsJs {
    /// Read the file as RFC 9309 says, strictly (Google's behaviour by
    /// default).
    pub rfc: Option<bool>,
    /// Bytes kept (500 KiB, and never less): a longer body is cut after its
    /// last whole line within the limit.
    pub max_bytes: Option<f64>,
}

/// Why a URL is allowed or not.
#[napi(object)]
pub struct Verdict {
    /// Whether the URL may be fetched.
    pub allowed: bool,
    /// 1-based line of the deciding rule, or null when no rule matched.
    pub line: Option<u32>,
    /// The deciding rule as written, such as `Disallow: /private/`.
    pub rule: Option<String>,
    /// First lines of the groups that applied.
    pub groups: Vec<u32>,
    /// `specific`, `global` or `none`: how the agent selected groups.
    pub agent_match: String,
    /// The URL as a crawler requests it (percent-encoded as a browser
    /// does), when it differs from the URL given: what was judged.
    pub requested: Option<String>,
}

impl Verdict {
    pub(crate) fn of(v: RustVerdict, asked: &str, judged: &str) -> Verdict {
        Verdict {
            requested: (asked != judged).then(|| judged.to_owned()),
            allowed: v.allowed,
            line: v.rule.as_ref().map(|r| r.line),
            rule: v.rule.as_ref().map(ToString::to_string),
            groups: v.groups,
            agent_match: v.agent_match.as_str().into(),
        }
    }
}

/// A Request-rate: `requests` per `seconds`.
#[napi(object)]
pub struct RequestRate {
    /// Requests allowed...
    pub requests: u32,
    /// ...per this many seconds.
    pub seconds: f64,
}

/// What an engine profile makes of a file's Crawl-delay and Request-rate.
#[napi(object)]
pub struct Pacing {
    /// Seconds between request starts this file asks of the agent, as the
    /// profile reads it (0: none).
    pub delay_secs: f64,
    /// With the `window` profile, the window one request may fall in.
    pub window_secs: f64,
    /// The profile: `conservative`, `literal`, `window` (Bing) or `ignore`
    /// (Google).
    pub profile: String,
}

/// AIPREF usage preferences for a URL (vocabulary -08): `y`, `n` or
/// `unknown` for each category.
#[napi(object)]
pub struct ContentUsage {
    /// Training generative AI models.
    pub train_ai: String,
    /// Input to generative AI models (vocab-08).
    pub ai_use: String,
    /// Search; it overrides the others for a use that falls under it.
    pub search: String,
    /// Lines of the deciding Content-Usage rules.
    pub lines: Vec<u32>,
}

/// One finding of the linter.
#[napi(object)]
pub struct Finding {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// `error`, `warning` or `info`.
    pub severity: String,
    /// A stable code.
    pub code: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when known.
    pub suggestion: Option<String>,
}

pub(crate) fn finding(d: &Diagnostic) -> Finding {
    Finding {
        line: d.line,
        column: d.column,
        severity: d.severity.to_string(),
        code: d.code.to_owned(),
        message: d.message.clone(),
        suggestion: d.suggestion.clone(),
    }
}

fn word(p: Preference) -> String {
    match p {
        Preference::Allowed => "y",
        Preference::Disallowed => "n",
        _ => "unknown",
    }
    .into()
}

pub(crate) fn profile_of(p: &str) -> Result<CrawlDelayProfile> {
    p.parse()
        .map_err(|e: String| invalid(format!("profile {e}")))
}

#[napi]
impl Robots {
    /// Parses a body (the engine's entry; `Robots.parse` in JavaScript
    /// checks its arguments and calls it).
    #[napi(factory, js_name = "_parse")]
    pub fn parse(body: Either<Buffer, String>, options: Option<ParseOptionsJs>) -> Result<Robots> {
        let rfc = options.as_ref().and_then(|o| o.rfc).unwrap_or(false);
        let mut o = ParseOptions::strict(rfc);
        if let Some(m) = options.and_then(|o| o.max_bytes) {
            if !(m.is_finite() && m >= 0.0) {
                return Err(invalid(format!(
                    "RangeError: maxBytes {m} is not a number of bytes"
                )));
            }
            o.max_bytes = m as usize;
        }
        let parsed = match &body {
            Either::A(b) => Parsed::parse_with(b, o),
            Either::B(s) => Parsed::parse_with(s.as_bytes(), o),
        };
        Ok(Robots {
            parsed: Arc::new(parsed),
        })
    }

    /// `google` or `rfc9309`.
    #[napi(getter)]
    pub fn mode(&self) -> String {
        match self.parsed.mode() {
            Mode::Rfc9309 => "rfc9309",
            _ => "google",
        }
        .into()
    }

    /// Whether the file was over the size limit and cut.
    #[napi(getter)]
    pub fn truncated(&self) -> bool {
        self.parsed.truncated()
    }

    /// Whether `agent` (a product token such as `Googlebot`) may fetch
    /// `url` (a full URL or a path).
    #[napi]
    pub fn is_allowed(&self, agent: String, url: String) -> Result<bool> {
        check_agent(&agent)?;
        Ok(self.parsed.is_allowed(&agent, &as_requested(&url)))
    }

    /// Whether `agent` may fetch `url` judged exactly as given, as Google's
    /// reference library judges it (its contract: the caller has
    /// percent-encoded the URL; any agent string, even empty, is taken).
    /// `isAllowed` judges the URL as a crawler requests it.
    #[napi]
    pub fn is_allowed_as_given(&self, agent: String, url: String) -> bool {
        self.parsed.is_allowed(&agent, &url)
    }

    /// The verdict with its reason: the deciding line and rule.
    #[napi]
    pub fn explain(&self, agent: String, url: String) -> Result<Verdict> {
        check_agent(&agent)?;
        let judged = as_requested(&url);
        Ok(Verdict::of(
            self.parsed.explain(&agent, &judged),
            &url,
            &judged,
        ))
    }

    /// The file as one crawler reads it, for checking many URLs.
    #[napi]
    pub fn for_agent(&self, agent: String) -> Result<AgentRules> {
        check_agent(&agent)?;
        Ok(AgentRules {
            parsed: self.parsed.clone(),
            agent,
        })
    }

    /// The agent's Crawl-delay in seconds, or null.
    #[napi]
    pub fn crawl_delay(&self, agent: String) -> Result<Option<f64>> {
        check_agent(&agent)?;
        Ok(self
            .parsed
            .crawl_delay(&agent)
            .map(|d| d.delay.as_secs_f64()))
    }

    /// The agent's Request-rate, or null.
    #[napi]
    pub fn request_rate(&self, agent: String) -> Result<Option<RequestRate>> {
        check_agent(&agent)?;
        Ok(self.parsed.request_rate(&agent).map(|r| RequestRate {
            requests: r.requests,
            seconds: r.period.as_secs_f64(),
        }))
    }

    /// Crawl-delay and Request-rate as an engine profile reads them.
    #[napi]
    pub fn pacing(&self, agent: String, profile: Option<String>) -> Result<Pacing> {
        check_agent(&agent)?;
        let name = profile.unwrap_or_else(|| "conservative".into());
        let profile = profile_of(&name)?;
        // What the politeness controller itself would make of the file.
        let mut c = Controller::new(Config {
            min_delay: 0,
            profile,
            ..Config::default()
        });
        c.set_robots("", RobotsPacing::from_robots(&self.parsed, &agent, profile));
        let (delay, window) = c.get("").map_or((0, 0), |h| (h.base_delay, h.window));
        Ok(Pacing {
            delay_secs: delay as f64 / 1000.0,
            window_secs: window as f64 / 1000.0,
            profile: name,
        })
    }

    /// The Sitemap URLs, in file order.
    #[napi]
    pub fn sitemaps(&self) -> Vec<String> {
        self.parsed
            .sitemaps()
            .iter()
            .map(|s| s.url.clone())
            .collect()
    }

    /// AIPREF usage preferences for a URL, or null when the URL may not be
    /// crawled. `header` is the response's Content-Usage field (lines),
    /// combined as the drafts say.
    #[napi]
    pub fn content_usage(
        &self,
        agent: String,
        url: String,
        header: Option<Either<String, Vec<String>>>,
    ) -> Result<Option<ContentUsage>> {
        check_agent(&agent)?;
        let url = as_requested(&url);
        let usage = match header {
            Some(Either::A(line)) => {
                self.parsed
                    .content_usage_with_header(&agent, &url, [line.as_bytes()])
            }
            Some(Either::B(lines)) => self.parsed.content_usage_with_header(
                &agent,
                &url,
                lines.iter().map(|l| l.as_bytes()),
            ),
            None => self.parsed.content_usage(&agent, &url),
        };
        Ok(usage.map(|u| ContentUsage {
            train_ai: word(u.train_ai),
            ai_use: word(u.ai_use),
            search: word(u.search),
            lines: u.lines,
        }))
    }

    /// The parser's findings (`lint(body)` adds the cross-line checks).
    #[napi]
    pub fn lint(&self) -> Vec<Finding> {
        self.parsed.diagnostics().iter().map(finding).collect()
    }
}

/// One crawler's view of a file (from `Robots.forAgent`).
#[napi]
pub struct AgentRules {
    parsed: Arc<Parsed>,
    agent: String,
}

#[napi]
impl AgentRules {
    /// The agent this view is for.
    #[napi(getter)]
    pub fn agent(&self) -> String {
        self.agent.clone()
    }

    /// Whether this agent may fetch `url`.
    #[napi]
    pub fn is_allowed(&self, url: String) -> bool {
        self.parsed
            .for_agent(&self.agent)
            .is_allowed(&as_requested(&url))
    }

    /// Verdicts for many URLs at once (the rules are indexed once).
    #[napi]
    pub fn is_allowed_many(&self, urls: Vec<String>) -> Vec<bool> {
        let view = self.parsed.for_agent(&self.agent);
        urls.iter()
            .map(|u| view.is_allowed(&as_requested(u)))
            .collect()
    }

    /// Verdicts for many URLs judged exactly as given (see
    /// `Robots.isAllowedAsGiven`).
    #[napi]
    pub fn is_allowed_many_as_given(&self, urls: Vec<String>) -> Vec<bool> {
        let view = self.parsed.for_agent(&self.agent);
        urls.iter().map(|u| view.is_allowed(u)).collect()
    }

    /// The verdict with its reason.
    #[napi]
    pub fn explain(&self, url: String) -> Verdict {
        let judged = as_requested(&url);
        Verdict::of(
            self.parsed.for_agent(&self.agent).explain(&judged),
            &url,
            &judged,
        )
    }
}
