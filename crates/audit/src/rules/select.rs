//! Which verdicts become rules: only what a verdict proves, and only
//! against its author.

use std::collections::BTreeMap;

use mannerly_robots::token_pattern;

use super::{guard, Deny, DenyRule, Include, PassedOver, RuleOptions, Rules};
use crate::kinds::BotKind;
use crate::report::{BotReport, Counts, Identity, Report};

const NO_NAME: &str = "its User-Agent names no client a rule can safely match (`-`, empty, a generic or platform word): no rule by User-Agent";
const BY_ADDRESS: &str = "anonymous or an HTTP tool, anyone's: refused only by address, and only with --rules-include anonymous";
const NOT_JUDGED: &str = "not held to robots.txt by default (anonymous, HTTP tool, user-triggered, feed reader, link preview or monitor), so not judged: --rules-include names the kinds to judge and refuse";
const NOT_ASKED: &str = "not a crawler (user-triggered, feed reader, link preview or monitor): no rule unless --rules-include names its kind";
const ONLY_IGNORED: &str = "charged only under a Crawl-delay its operator documents it ignores: no rule unless --rules-include ignored";
const ONLY_ASSUMED: &str = "charged only inside Retry-After waits the audit assumed (the log records no Retry-After): no rule on an assumption";
const UNCHECKED: &str = "its operator publishes a way to check it that this audit could not use: a rule by token could refuse the real crawler (give --ip-ranges NAME=FILE)";
const NO_RANGES: &str = "spoofed, but no published address ranges were given that a server could check it against (give --ip-ranges NAME=FILE, or refuse spoofers with `mannerly gate`)";

/// The rules a report calls for. `ranges` gives the CIDR ranges the
/// audit checked a token against (`None` when it checked none: no
/// server rule can then tell its spoofers from it).
pub fn rules_of(
    report: &Report,
    ranges: &dyn Fn(&str) -> Option<Vec<String>>,
    options: &RuleOptions,
) -> Rules {
    let mut out = Rules::default();
    let mut tokens: BTreeMap<String, Merged> = BTreeMap::new();
    let mut spoofers: BTreeMap<String, Merged> = BTreeMap::new();
    for b in &report.bots {
        let pass = |reason| PassedOver {
            who: who(b),
            reason,
        };
        if b.spoofed() {
            let cidrs = ranges(&b.token).unwrap_or_default();
            match (token_pattern(&b.token), cidrs.is_empty()) {
                (Some(_), false) => spoofers
                    .entry(b.token.to_ascii_lowercase())
                    .or_default()
                    .add(b),
                (None, _) => out.passed_over.push(pass(NO_NAME)),
                (Some(_), true) => out.passed_over.push(pass(NO_RANGES)),
            }
            continue;
        }
        if !judged(b.kind, options) {
            out.passed_over.push(pass(NOT_JUDGED));
            continue;
        }
        let broke = charged(&b.counts, options, !b.ignores.is_empty());
        if broke == 0 {
            if charged(&b.counts, options, false) > 0 {
                out.passed_over.push(pass(ONLY_IGNORED));
            } else if b.counts.ignored_retry_after_assumed > 0 {
                out.passed_over.push(pass(ONLY_ASSUMED));
            }
            continue;
        }
        match reason_to_pass(b, options) {
            Some(Pass::Address) => {
                if let Some(ip) = b.address.as_deref().and_then(|a| a.parse().ok()) {
                    let why = format!("{}: {}", who(b), evidence(b));
                    // One rule an address, whoever broke the rules from it.
                    match out.rules.iter_mut().find(|r| r.deny == Deny::Address(ip)) {
                        Some(r) => r.why = format!("{}; {why}", r.why),
                        None => out.rules.push(DenyRule {
                            deny: Deny::Address(ip),
                            why,
                        }),
                    }
                }
            }
            Some(Pass::Over(reason)) => out.passed_over.push(pass(reason)),
            None => tokens
                .entry(b.token.to_ascii_lowercase())
                .or_default()
                .add(b),
        }
    }
    for m in tokens.values() {
        if let Some(pattern) = token_pattern(&m.token) {
            let why = format!("broke robots.txt: {}", m.evidence());
            let deny = Deny::Token {
                token: m.token.clone(),
                pattern,
            };
            out.rules.push(DenyRule { deny, why });
        }
    }
    for m in spoofers.values() {
        let (Some(pattern), Some(cidrs)) = (token_pattern(&m.token), ranges(&m.token)) else {
            continue;
        };
        let inside = cidrs.iter().filter_map(|c| parse_net(c)).collect();
        let why = format!(
            "spoofer: requests as {} from outside its operator's published ranges: {}",
            m.token,
            m.evidence()
        );
        let deny = Deny::Spoofer {
            token: m.token.clone(),
            pattern,
            inside,
        };
        out.rules.push(DenyRule { deny, why });
    }
    guard::keep_verified_out(report, &mut out);
    out
}

/// Whether the audit judged this kind (the CLI judges what rules are
/// asked to include).
fn judged(kind: BotKind, options: &RuleOptions) -> bool {
    options.strict || kind.judged() || options.include.iter().any(|i| i.kinds().contains(&kind))
}

/// Why a bot that broke a rule gets none by token.
enum Pass {
    /// Refused by address instead (asked for).
    Address,
    /// Not refused.
    Over(&'static str),
}

fn reason_to_pass(b: &BotReport, options: &RuleOptions) -> Option<Pass> {
    let asked = |i| options.include.contains(&i);
    match b.kind {
        BotKind::Anonymous | BotKind::ClientLibrary => Some(if asked(Include::Anonymous) {
            Pass::Address
        } else {
            Pass::Over(BY_ADDRESS)
        }),
        BotKind::UserTriggered if !asked(Include::UserTriggered) => Some(Pass::Over(NOT_ASKED)),
        BotKind::FeedReader if !asked(Include::FeedReader) => Some(Pass::Over(NOT_ASKED)),
        BotKind::LinkPreview if !asked(Include::LinkPreview) => Some(Pass::Over(NOT_ASKED)),
        BotKind::Monitor if !asked(Include::Monitor) => Some(Pass::Over(NOT_ASKED)),
        _ if token_pattern(&b.token).is_none() => Some(Pass::Over(NO_NAME)),
        _ if b.identity == Identity::Unverified && b.verifiable => Some(Pass::Over(UNCHECKED)),
        _ => None,
    }
}

/// The violations a rule may be written for: every one, but gaps under a
/// Crawl-delay the bot's operator documents it ignores only when asked,
/// and never a request inside a Retry-After wait the audit only assumed.
fn charged(c: &Counts, options: &RuleOptions, ignores: bool) -> u64 {
    let asked = options.include.contains(&Include::Ignored);
    let too_soon = match (options.strict && ignores, asked) {
        (true, false) => c.too_soon.saturating_sub(c.under_ignored_delay),
        _ => c.too_soon,
    };
    let ignored = if asked && !options.strict {
        c.under_ignored_delay
    } else {
        0
    };
    c.violations() - c.too_soon + too_soon + ignored - c.ignored_retry_after_assumed
}

fn who(b: &BotReport) -> String {
    match &b.address {
        Some(a) => format!("{} at {a}", b.token),
        None => format!("{} ({})", b.token, b.identity.as_str()),
    }
}

fn evidence(b: &BotReport) -> String {
    let mut m = Merged::default();
    m.add(b);
    m.evidence()
}

/// One token's reports, summed (an unknown crawler is judged per address).
#[derive(Default)]
struct Merged {
    token: String,
    counts: Counts,
    addresses: u64,
    seen: Option<(String, String)>,
}

impl Merged {
    fn add(&mut self, b: &BotReport) {
        if self.token.is_empty() {
            self.token = b.token.clone();
        }
        self.counts.add(&b.counts);
        self.addresses += b.clients;
        if let Some((x, y)) = &b.seen {
            let (a, z) = self.seen.get_or_insert_with(|| (x.clone(), y.clone()));
            if x < a {
                *a = x.clone();
            }
            if y > z {
                *z = y.clone();
            }
        }
    }

    fn evidence(&self) -> String {
        let c = &self.counts;
        let mut parts = vec![format!(
            "{} requests from {} address(es)",
            c.requests, self.addresses
        )];
        let retry = match c.ignored_retry_after_assumed {
            0 => "inside Retry-After",
            a if a == c.ignored_retry_after => "inside Retry-After (the wait assumed)",
            _ => "inside Retry-After (some waits assumed)",
        };
        for (n, what) in [
            (c.disallowed, "disallowed"),
            (c.too_soon, "too soon"),
            (c.ignored_retry_after, retry),
            (c.before_robots, "before reading robots.txt"),
            (
                c.while_robots_unavailable,
                "while robots.txt was unavailable",
            ),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        if let Some((a, z)) = &self.seen {
            parts.push(format!("first {a}, last {z}"));
        }
        parts.join(", ")
    }
}

/// A CIDR range, or one address as its own range.
pub(super) fn parse_net(s: &str) -> Option<ipnet::IpNet> {
    s.parse()
        .ok()
        .or_else(|| s.parse::<std::net::IpAddr>().ok().map(ipnet::IpNet::from))
}
