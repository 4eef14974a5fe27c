//! The policy file: rules tried in order, the first whose `who` matches
//! decides; no rule matching means allow. Every mistake is refused when
//! the file is read, with the line it is on.
//!
//! ```toml
//! robots = "robots.txt"   # optional: a crawler asking for a path it disallows to it is refused
//! robots_include = ["monitor"]  # optional: hold these kinds to it too (the audit's kinds)
//! [[rule]]
//! who = "spoofer"         # verified | spoofer | bot | browser | token:NAME
//! do = "deny"             # allow | deny | slow
//! [[rule]]
//! who = "token:GreedyBot"
//! do = "slow"
//! rate = 2.0              # requests per second, one a day (0.0000116) to 1e6 (per token; per token and address when not verified)
//! burst = 4               # optional: how many may come at once (default: the rate, at least 1)
//! ```

use std::path::{Path, PathBuf};

use mannerly_audit::BotKind;
use mannerly_robots::Robots;
use serde::Deserialize;
use toml::Spanned;

use crate::class::{Class, Visitor};

/// The slowest `rate` a slow rule takes: one request a day (a slower one
/// would send a Retry-After of years).
const MIN_RATE: f64 = 1.0 / 86_400.0;

/// The fastest `rate`, and the largest `burst`: a million a second.
const MAX_RATE: f64 = 1e6;

/// A number as the file may have written it: `1e-300`, not 300 digits.
fn short(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() > 12 {
        format!("{v:e}")
    } else {
        plain
    }
}

/// Who a rule is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Who {
    /// Any request of this class.
    Class(Class),
    /// Any request whose User-Agent names this token as a token
    /// ([`mannerly_robots::names_token`], as `mannerly audit --rules`
    /// writes it for servers), or whose product token it is; in either
    /// case.
    Token(String),
}

impl Who {
    /// Whether `identity`, sending `user_agent`, is one of these.
    pub fn matches(&self, identity: &Visitor, user_agent: &str) -> bool {
        match self {
            Who::Class(c) => identity.class == *c,
            Who::Token(t) => {
                identity
                    .token
                    .as_deref()
                    .is_some_and(|own| own.eq_ignore_ascii_case(t))
                    || mannerly_robots::names_token(user_agent, t)
            }
        }
    }
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Who::Class(c) => f.write_str(c.as_str()),
            Who::Token(t) => write!(f, "token:{t}"),
        }
    }
}

/// What a rule does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Let it through.
    Allow,
    /// Refuse it.
    Deny,
    /// Let through at most `rate` requests a second, `burst` at once.
    Slow {
        /// Requests per second.
        rate: f64,
        /// Requests at once.
        burst: f64,
    },
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Allow => f.write_str("allow"),
            Action::Deny => f.write_str("deny"),
            Action::Slow { rate, burst } => write!(f, "slow (rate {rate}/s, burst {burst})"),
        }
    }
}

/// One rule of the policy.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyRule {
    /// Who it is for.
    pub who: Who,
    /// What it does.
    pub action: Action,
    /// Its line in the file (1-based; 0 for a built-in rule).
    pub line: usize,
}

/// A whole policy.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// The rules, in order.
    pub rules: Vec<PolicyRule>,
    /// The robots.txt whose disallowed paths are refused to crawlers, with
    /// the file it came from (read by [`Policy::read`]).
    pub robots: Option<(PathBuf, Robots)>,
    /// Kinds of client held to `robots` besides crawlers (monitors, feed
    /// readers, ...): robots.txt governs crawlers only, and a health check
    /// refused a disallowed path takes the site out of its load balancer.
    pub robots_include: Vec<BotKind>,
    /// The robots.txt file the policy names, relative to the policy's
    /// directory made whole, and the line naming it: what the I/O layer
    /// reads into `robots`.
    pub robots_file: Option<(PathBuf, usize)>,
}

/// What is wrong with a policy file, and where.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
#[non_exhaustive]
pub struct PolicyError {
    /// The policy file.
    pub file: String,
    /// The line (1-based; 0 when the file could not be read).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    robots: Option<Spanned<String>>,
    #[serde(default)]
    robots_include: Vec<BotKind>,
    #[serde(default, rename = "rule")]
    rules: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    who: Spanned<String>,
    #[serde(rename = "do")]
    action: Spanned<String>,
    rate: Option<Spanned<f64>>,
    burst: Option<Spanned<f64>>,
}

impl Policy {
    /// The policy when none is given: spoofers refused, everything else
    /// allowed.
    pub fn sensible() -> Policy {
        Policy {
            rules: vec![PolicyRule {
                who: Who::Class(Class::Spoofer),
                action: Action::Deny,
                line: 0,
            }],
            robots: None,
            robots_include: Vec::new(),
            robots_file: None,
        }
    }

    /// Parses a policy's text, without I/O; `path` names it in errors and
    /// anchors `robots`, which is named in `robots_file` for the caller to
    /// read ([`Policy::read`] does both).
    pub fn parse(text: &str, path: &Path) -> Result<Policy, PolicyError> {
        let fail = |at: Option<std::ops::Range<usize>>, message: String| PolicyError {
            file: path.display().to_string(),
            line: at.map_or(1, |r| line_of(text, r.start)),
            message,
        };
        let raw: RawPolicy = toml::from_str(text).map_err(|e| {
            let message = e.message().to_owned();
            fail(e.span(), message)
        })?;
        let rules = raw
            .rules
            .into_iter()
            .map(|r| rule(r, text).map_err(|(span, msg)| fail(Some(span), msg)))
            .collect::<Result<Vec<_>, _>>()?;
        let robots_file = raw.robots.map(|file| {
            let line = line_of(text, file.span().start);
            let full = path
                .parent()
                .unwrap_or(Path::new("."))
                .join(file.into_inner());
            (full, line)
        });
        Ok(Policy {
            rules,
            robots: None,
            robots_include: raw.robots_include,
            robots_file,
        })
    }

    /// Whether `robots` governs a client of this kind: crawlers, and the
    /// kinds the policy includes.
    pub fn robots_governs(&self, kind: BotKind) -> bool {
        kind.judged() || self.robots_include.contains(&kind)
    }

    /// What an operator should know before the policy runs, each with its
    /// rule's line: a rule refusing or slowing `bot` reaches health checks,
    /// monitors and feed readers too, unless a rule above allows them; one
    /// refusing or slowing `browser` reaches every person, and one for
    /// `verified` every search engine's crawler.
    pub fn notes(&self) -> Vec<(usize, String)> {
        let allows_a_token =
            |r: &PolicyRule| matches!(r.who, Who::Token(_)) && r.action == Action::Allow;
        let mut notes = Vec::new();
        for (i, r) in self.rules.iter().enumerate() {
            if r.action == Action::Allow {
                continue;
            }
            let lets_one_through = self.rules[..i].iter().any(allows_a_token);
            let whom = match &r.who {
                Who::Class(Class::Bot) if !lets_one_through => {
                    "every automated client that is not verified, health checks (kube-probe, \
                     ELB-HealthChecker, GoogleHC), monitors and feed readers included; a rule \
                     above it with who = \"token:NAME\", do = \"allow\" lets one through"
                }
                Who::Class(Class::Browser) => {
                    "every person's browser: the site is closed to people (and a bot that says \
                     it is a browser cannot be told from one by its User-Agent)"
                }
                Who::Class(Class::Verified) => {
                    "every crawler that proved who it is (Googlebot, Bingbot from their own \
                     ranges or with a signature): the site leaves their search results"
                }
                _ => continue,
            };
            let note = format!("who = \"{}\", do {}: {whom}", r.who, r.action);
            notes.push((r.line, note));
        }
        notes
    }

    /// The robots.txt `robots_file` names, from its bytes.
    pub fn set_robots(&mut self, body: &[u8]) {
        if let Some((full, _)) = &self.robots_file {
            self.robots = Some((full.clone(), Robots::parse(body)));
        }
    }
}

fn rule(r: RawRule, text: &str) -> Result<PolicyRule, (std::ops::Range<usize>, String)> {
    let line = line_of(text, r.who.span().start);
    let who = parse_who(r.who.get_ref()).map_err(|m| (r.who.span(), m))?;
    let action = match r.action.get_ref().as_str() {
        "allow" | "deny" if r.rate.is_some() || r.burst.is_some() => {
            let span = r
                .rate
                .as_ref()
                .or(r.burst.as_ref())
                .map_or(r.action.span(), Spanned::span);
            return Err((span, "rate and burst belong to do = \"slow\" only".into()));
        }
        "allow" => Action::Allow,
        "deny" => Action::Deny,
        "slow" => {
            let rate = r.rate.as_ref().ok_or_else(|| {
                (
                    r.action.span(),
                    "do = \"slow\" needs a rate (requests per second)".to_owned(),
                )
            })?;
            let value = *rate.get_ref();
            if !(value.is_finite() && value > 0.0) {
                return Err((
                    rate.span(),
                    format!("rate must be a number of requests per second above 0, not {value}"),
                ));
            }
            if !(MIN_RATE..=MAX_RATE).contains(&value) {
                return Err((
                    rate.span(),
                    format!("rate {} is out of range: from {MIN_RATE:.8} (one request a day) to {MAX_RATE} requests per second", short(value)),
                ));
            }
            let burst = match &r.burst {
                None => value.max(1.0),
                Some(b) if (1.0..=MAX_RATE).contains(b.get_ref()) => *b.get_ref(),
                Some(b) => {
                    return Err((
                        b.span(),
                        format!(
                            "burst must be from 1 to {MAX_RATE}, not {}",
                            short(*b.get_ref())
                        ),
                    ))
                }
            };
            Action::Slow { rate: value, burst }
        }
        other => {
            return Err((
                r.action.span(),
                format!("do = \"{other}\": expected allow, deny or slow"),
            ));
        }
    };
    Ok(PolicyRule { who, action, line })
}

fn parse_who(s: &str) -> Result<Who, String> {
    Ok(Who::Class(match s {
        "verified" => Class::Verified,
        "spoofer" => Class::Spoofer,
        "bot" => Class::Bot,
        "browser" => Class::Browser,
        _ => match s.strip_prefix("token:") {
            Some(t) if mannerly_robots::names_a_client(t.trim()) => {
                return Ok(Who::Token(t.trim().to_owned()))
            }
            Some(t) if !t.trim().is_empty() => {
                return Err(format!(
                    "who = \"{s}\": `{}` names no one client (a platform or generic word every browser may carry)",
                    t.trim()
                ))
            }
            _ => {
                return Err(format!(
                    "who = \"{s}\": expected verified, spoofer, bot, browser or token:NAME"
                ))
            }
        },
    }))
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_refusing_every_bot_is_noted_unless_a_token_is_let_through_first() {
        let notes = |text: &str| {
            Policy::parse(text, Path::new("p.toml"))
                .expect("policy")
                .notes()
        };
        let n = notes("[[rule]]\nwho = \"spoofer\"\ndo = \"deny\"\n\n[[rule]]\nwho = \"bot\"\ndo = \"deny\"\n");
        assert_eq!(n.len(), 1, "{n:?}");
        assert_eq!(n[0].0, 6, "the line of its who");
        assert!(n[0].1.contains("kube-probe"), "{n:?}");
        assert!(notes("[[rule]]\nwho = \"bot\"\ndo = \"slow\"\nrate = 1.0\n").len() == 1);
        let kept = "[[rule]]\nwho = \"token:kube-probe\"\ndo = \"allow\"\n[[rule]]\nwho = \"bot\"\ndo = \"deny\"\n";
        assert!(notes(kept).is_empty());
        assert!(notes("[[rule]]\nwho = \"bot\"\ndo = \"allow\"\n").is_empty());
        // Refusing or slowing every person, or every verified crawler, is
        // said; allowing them is not.
        let people = notes("[[rule]]\nwho = \"browser\"\ndo = \"deny\"\n");
        assert!(people[0].1.contains("closed to people"), "{people:?}");
        let engines = notes("[[rule]]\nwho = \"verified\"\ndo = \"slow\"\nrate = 1.0\n");
        assert!(engines[0].1.contains("search results"), "{engines:?}");
        assert!(notes("[[rule]]\nwho = \"browser\"\ndo = \"allow\"\n").is_empty());
    }

    fn err(text: &str) -> String {
        Policy::parse(text, Path::new("p.toml"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn the_issue_example_reads_in_order() {
        let p = Policy::parse(
            "[[rule]]\nwho = \"verified\"\ndo = \"allow\"\n[[rule]]\nwho = \"token:GreedyBot\"\ndo = \"slow\"\nrate = 2.0\n",
            Path::new("p.toml"),
        )
        .expect("valid");
        assert_eq!(p.rules.len(), 2);
        assert_eq!(p.rules[0].who, Who::Class(Class::Verified));
        assert_eq!(p.rules[1].who, Who::Token("GreedyBot".into()));
        assert_eq!(
            p.rules[1].action,
            Action::Slow {
                rate: 2.0,
                burst: 2.0
            }
        );
        assert_eq!(p.rules[1].line, 5);
    }

    #[test]
    fn each_mistake_names_its_line() {
        assert_eq!(
            err("[[rule]]\nwho = \"verified\"\ndo = \"allow\"\n[[rule]]\nwho = \"robot\"\ndo = \"deny\"\n"),
            "p.toml:5: who = \"robot\": expected verified, spoofer, bot, browser or token:NAME"
        );
        assert_eq!(
            err("[[rule]]\nwho = \"bot\"\ndo = \"slow\"\n"),
            "p.toml:3: do = \"slow\" needs a rate (requests per second)"
        );
        assert_eq!(
            err("[[rule]]\nwho = \"bot\"\ndo = \"slow\"\nrate = -1.0\n"),
            "p.toml:4: rate must be a number of requests per second above 0, not -1"
        );
        assert_eq!(
            err("[[rule]]\nwho = \"bot\"\ndo = \"slow\"\nrate = 1e-300\n"),
            "p.toml:4: rate 1e-300 is out of range: from 0.00001157 (one request a day) to 1000000 requests per second"
        );
        assert_eq!(
            err("[[rule]]\nwho = \"bot\"\ndo = \"slow\"\nrate = 1.0\nburst = 1e300\n"),
            "p.toml:5: burst must be from 1 to 1000000, not 1e300"
        );
        assert_eq!(
            err("[[rule]]\nwho = \"bot\"\ndo = \"block\"\n"),
            "p.toml:3: do = \"block\": expected allow, deny or slow"
        );
        assert_eq!(
            err("[[rule]]\nwho = \"bot\"\ndo = \"deny\"\nrate = 1.0\n"),
            "p.toml:4: rate and burst belong to do = \"slow\" only"
        );
        assert!(err("[[rule]]\nwho = \"bot\"\ndo = \"deny\"\nwhen = 1\n")
            .starts_with("p.toml:4: unknown field `when`"));
        assert!(err("[[rule]]\nwho = \"bot\"\n").starts_with("p.toml:1: missing field `do`"));
        assert!(err("[[rule]\n").starts_with("p.toml:1: "));
    }
}
