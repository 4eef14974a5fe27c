//! What an audit found, as plain data (serialised as `--json` gives it).

use std::collections::BTreeMap;

use serde::Serialize;

/// Examples kept per bot and per rule, at most.
pub const MAX_EXAMPLES: usize = 5;

pub use crate::identity::Identity;

/// The rules a request can break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Violation {
    /// A path the robots.txt then in force disallowed for the token.
    Disallowed,
    /// Sooner after the previous request than the Crawl-delay.
    TooSoon,
    /// Inside the Retry-After window of a 429 or 503.
    IgnoredRetryAfter,
    /// A page without a robots.txt read in the 24 hours before.
    BeforeRobots,
    /// A page while the host's robots.txt answered 5xx or 429.
    WhileRobotsUnavailable,
    /// Not a rule of robots.txt: a request in a crawler's name that
    /// failed its operator's check, streamed once per spoofer as it is
    /// first seen (never counted among the violations).
    Spoofed,
}

impl Violation {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Violation::Disallowed => "disallowed",
            Violation::TooSoon => "too_soon",
            Violation::IgnoredRetryAfter => "ignored_retry_after",
            Violation::BeforeRobots => "before_robots",
            Violation::WhileRobotsUnavailable => "while_robots_unavailable",
            Violation::Spoofed => "spoofed",
        }
    }

    /// The rule in words, for people.
    pub fn words(self) -> &'static str {
        match self {
            Violation::Disallowed => "a disallowed path",
            Violation::TooSoon => "sooner than Crawl-delay",
            Violation::IgnoredRetryAfter => "inside Retry-After",
            Violation::BeforeRobots => "before reading robots.txt",
            Violation::WhileRobotsUnavailable => "while robots.txt was unavailable",
            Violation::Spoofed => "claimed a crawler and failed its operator's check",
        }
    }
}

/// One request that broke a rule, described.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Example {
    /// The rule broken.
    pub rule: Violation,
    /// When (RFC 3339).
    pub time: String,
    /// The host.
    pub host: String,
    /// Path and query.
    pub path: String,
    /// The status sent.
    pub status: Option<u16>,
    /// The client's address.
    pub client: Option<String>,
    /// What makes it a violation: the deciding robots.txt line, or the gap
    /// against the delay.
    pub detail: String,
}

/// One rule broken, as a live follow reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The bot's product token.
    pub token: String,
    /// Its identity.
    pub identity: Identity,
    /// The client address, for an HTTP library or tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Whether robots.txt governs it.
    pub kind: crate::kinds::BotKind,
    /// What it did.
    #[serde(flatten)]
    pub example: Example,
}

/// Counts of the rules broken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Requests in all, robots.txt included.
    pub requests: u64,
    /// Requests other than robots.txt.
    pub pages: u64,
    /// Bytes sent to it.
    pub bytes: u64,
    /// robots.txt requests.
    pub robots_fetches: u64,
    /// Requests to disallowed paths.
    pub disallowed: u64,
    /// Requests sooner than the Crawl-delay after the previous one.
    pub too_soon: u64,
    /// Requests inside a Retry-After window.
    pub ignored_retry_after: u64,
    /// Of those, requests inside a window the audit assumed (the log
    /// records no Retry-After, and no evidence did): `--retry-after`.
    pub ignored_retry_after_assumed: u64,
    /// Pages requested without a robots.txt read in the 24 hours before
    /// (RFC 9309's longest cache), including by bots that never read it.
    pub before_robots: u64,
    /// Pages requested while robots.txt answered 5xx or 429.
    pub while_robots_unavailable: u64,
    /// Requests sooner than a Crawl-delay the bot's operator documents it
    /// does not read: told, never a broken rule (unless judged strictly).
    pub under_ignored_delay: u64,
    /// Requests that broke at least one rule (a request may break several:
    /// a disallowed path before robots.txt was read counts in both).
    pub requests_breaking_rules: u64,
}

impl Counts {
    /// The same counts with every violation taken away (for an agent that
    /// breaks no rule: a user-triggered fetcher).
    pub(crate) fn without_violations(&self) -> Counts {
        Counts {
            disallowed: 0,
            too_soon: 0,
            ignored_retry_after: 0,
            before_robots: 0,
            while_robots_unavailable: 0,
            requests_breaking_rules: 0,
            ignored_retry_after_assumed: 0,
            ..self.clone()
        }
    }

    /// Every violation counted.
    pub fn violations(&self) -> u64 {
        self.disallowed
            + self.too_soon
            + self.ignored_retry_after
            + self.before_robots
            + self.while_robots_unavailable
    }

    pub(crate) fn add(&mut self, o: &Counts) {
        self.requests += o.requests;
        self.pages += o.pages;
        self.bytes += o.bytes;
        self.robots_fetches += o.robots_fetches;
        self.disallowed += o.disallowed;
        self.too_soon += o.too_soon;
        self.ignored_retry_after += o.ignored_retry_after;
        self.before_robots += o.before_robots;
        self.while_robots_unavailable += o.while_robots_unavailable;
        self.under_ignored_delay += o.under_ignored_delay;
        self.requests_breaking_rules += o.requests_breaking_rules;
        self.ignored_retry_after_assumed += o.ignored_retry_after_assumed;
    }

    pub(crate) fn count(&mut self, rule: Violation) {
        match rule {
            Violation::Disallowed => self.disallowed += 1,
            Violation::TooSoon => self.too_soon += 1,
            Violation::IgnoredRetryAfter => self.ignored_retry_after += 1,
            Violation::BeforeRobots => self.before_robots += 1,
            Violation::WhileRobotsUnavailable => self.while_robots_unavailable += 1,
            Violation::Spoofed => {}
        }
    }
}

/// One bot's requests to one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostReport {
    /// The host (`-` when the log names none).
    pub host: String,
    /// What it did there.
    #[serde(flatten)]
    pub counts: Counts,
    /// The Crawl-delay that applied to it, in seconds (the last in force).
    pub crawl_delay: Option<f64>,
    /// The most requests it made in one minute.
    pub peak_per_minute: u64,
    /// The median start-to-start gap, in seconds.
    pub median_gap: Option<f64>,
}

/// One bot (a product token with one identity; for an HTTP library or
/// tool, from one address).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BotReport {
    /// Its product token.
    pub token: String,
    /// Whether robots.txt governs it, and how it is judged.
    pub kind: crate::kinds::BotKind,
    /// Where its operator states that robots.txt does not govern it (a
    /// user-triggered fetcher).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind_source: Option<String>,
    /// The client address, for an HTTP library or tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Its identity.
    pub identity: Identity,
    /// Its operator, when the catalogue knows it.
    pub operator: Option<String>,
    /// What it is for, when the catalogue knows it.
    pub category: Option<crate::kinds::Category>,
    /// Its first and last request (RFC 3339).
    pub seen: Option<(String, String)>,
    /// What it did, over all hosts.
    #[serde(flatten)]
    pub counts: Counts,
    /// Statuses answered, by code.
    pub statuses: BTreeMap<u16, u64>,
    /// Client addresses seen.
    pub clients: u64,
    /// Its first User-Agents (at most [`crate::MAX_AGENTS`]).
    pub user_agents: Vec<String>,
    /// Its addresses, when its identity is verified: what a server rule
    /// must never refuse.
    #[serde(skip)]
    pub(crate) verified_addresses: Vec<std::net::IpAddr>,
    /// The most requests it made to one host in one minute.
    pub peak_per_minute: u64,
    /// Some of its violations, described.
    pub examples: Vec<Example>,
    /// Per host.
    pub hosts: Vec<HostReport>,
    /// Requests and violations over time.
    pub timeline: Timeline,
    /// Its evidence checked against the log, when bundles were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<crate::evidence::EvidenceReport>,
    /// What `mannerly gate` answered its requests, when the log records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateCounts>,
    /// robots.txt directives its operator documents it does not read,
    /// each with where it says so (e.g. Google and `crawl-delay`): gaps
    /// under such a directive are counted in `under_ignored_delay`, and
    /// charged only by a strict audit.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub ignores: BTreeMap<String, String>,
    /// Whether its operator publishes a way to check its requests (ranges,
    /// reverse DNS, keys): an `unverified` verdict then means the check
    /// could not be made, and the requests may be anyone's.
    pub verifiable: bool,
    /// The Crawler Best Practices, each graded as the log shows it.
    pub practices: Vec<Practice>,
}

/// A bot's requests by what `mannerly gate` answered, as logged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GateCounts {
    /// Let through.
    pub allowed: u64,
    /// Refused.
    pub denied: u64,
    /// Told to slow down (429 with Retry-After).
    pub slowed: u64,
}

/// What `mannerly gate` answered, as its `X-Mannerly-Action` header says
/// and a log records it: the word the gate writes and the audit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GateAction {
    /// Let through.
    Allow,
    /// Refused.
    Deny,
    /// Told to slow down (429 with Retry-After).
    Slow,
}

impl GateAction {
    /// The header's value.
    pub fn as_str(self) -> &'static str {
        match self {
            GateAction::Allow => "allow",
            GateAction::Deny => "deny",
            GateAction::Slow => "slow",
        }
    }

    /// A logged value read back (`None` for anything else, such as `-`).
    pub fn parse(value: &str) -> Option<GateAction> {
        [GateAction::Allow, GateAction::Deny, GateAction::Slow]
            .into_iter()
            .find(|a| a.as_str() == value)
    }
}

impl GateCounts {
    /// Counts one answer.
    pub fn count(&mut self, action: GateAction) {
        match action {
            GateAction::Allow => self.allowed += 1,
            GateAction::Deny => self.denied += 1,
            GateAction::Slow => self.slowed += 1,
        }
    }
}

/// The most User-Agents a report lists among signed-in requests.
pub const MAX_SIGNED_IN_AGENTS: usize = 20;

/// Signed-in requests of one User-Agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignedIn {
    /// The User-Agent as logged.
    pub user_agent: String,
    /// Its requests with credentials the server accepted.
    pub requests: u64,
}

/// A client with a browser's User-Agent that behaved like a crawler.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suspect {
    /// Its address.
    pub client: String,
    /// The User-Agent it sent.
    pub user_agent: String,
    /// Its requests.
    pub requests: u64,
    /// Pages (not assets) among them.
    pub pages: u64,
    /// Assets (scripts, styles, images, fonts) among them.
    pub assets: u64,
    /// Requests to paths robots.txt disallows for every crawler.
    pub disallowed: u64,
    /// Whether it read robots.txt, which browsers do not.
    pub read_robots: bool,
    /// How regular its pace was: the spread of its gaps over their mean
    /// (people are irregular, near 1 or more; schedulers near 0).
    pub gap_variation: Option<f64>,
    /// Why it is listed, in words.
    pub evidence: Vec<String>,
}

/// Counts over time, in buckets of equal width.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Timeline {
    /// The first bucket's start, in Unix milliseconds.
    pub start: i64,
    /// A bucket's width, in milliseconds.
    pub width: i64,
    /// Requests per bucket.
    pub requests: Vec<u64>,
    /// Violations per bucket.
    pub violations: Vec<u64>,
}

/// One log file read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    /// The path given.
    pub path: String,
    /// The format found (or given).
    pub format: String,
    /// Lines in the file.
    pub lines: u64,
    /// Lines that could not be read.
    pub unparsed: u64,
    /// Some of them: line number and why.
    pub unparsed_examples: Vec<(u64, String)>,
    /// Requests read from it (blank lines and unread ones are none).
    pub requests: u64,
}

/// Everything an audit found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Lines read, in all files.
    pub lines: u64,
    /// Lines that could not be read.
    pub unparsed: u64,
    /// Per file.
    pub files: Vec<FileReport>,
    /// The robots.txt files judged against: host (`*` for all), in force
    /// since, source.
    pub robots: Vec<RobotsSource>,
    /// The first and last instant seen (RFC 3339).
    pub span: Option<(String, String)>,
    /// How much of its span the log covers: holes (a sampled log, a gap
    /// between rotated files) withhold the verdicts they could change.
    pub coverage: Option<crate::coverage::Coverage>,
    /// Bots, those that broke rules first (most violations first), then
    /// the rest by requests.
    pub bots: Vec<BotReport>,
    /// Clients with a browser's User-Agent that behaved like crawlers.
    pub suspects: Vec<Suspect>,
    /// Requests by browsers.
    pub browser_requests: u64,
    /// Requests with credentials the server accepted (a user logged, the
    /// answer not 401, 403 or 407): the site's own users, whatever their
    /// User-Agent, so not judged (a strict audit judges them as crawlers).
    pub signed_in_requests: u64,
    /// Those requests by User-Agent, the most first (at most
    /// [`MAX_SIGNED_IN_AGENTS`]): a client that sent an invented name to
    /// pass as a user (nginx logs a Basic name as sent) shows here.
    pub signed_in: Vec<SignedIn>,
    /// Requests that arrived later than the reordering window allows
    /// (judged in the order they came).
    pub late: u64,
    /// How identities were checked (ranges used and their age, lookups).
    pub identity_notes: Vec<String>,
    /// Whether identities were checked online (DNS, operators' files,
    /// crawlers' pages), or only against what was given and cached.
    pub identity_online: bool,
    /// What a proposed robots.txt would change, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed: Option<crate::proposed::ProposedReport>,
    /// The server rules written from it, when asked for (`--rules`): the
    /// server, and the file's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<(String, String)>,
}

/// A robots.txt file the audit judged against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RobotsSource {
    /// The host it is for (`*`: every host without its own).
    pub host: String,
    /// In force since (RFC 3339), or always.
    pub since: Option<String>,
    /// Where it came from.
    pub source: String,
}

impl BotReport {
    /// Whether these requests failed their claimed operator's check.
    pub fn spoofed(&self) -> bool {
        self.identity == Identity::Spoofed
    }

    /// Whether it broke a rule (a spoofer's deeds are listed apart).
    pub fn broke_rules(&self) -> bool {
        self.counts.violations() > 0 && !self.spoofed()
    }
}

impl Report {
    /// Violations by every bot.
    pub fn violations(&self) -> u64 {
        self.bots.iter().map(|b| b.counts.violations()).sum()
    }

    /// The bots that broke a rule.
    pub fn rule_breakers(&self) -> impl Iterator<Item = &BotReport> {
        self.bots.iter().filter(|b| b.broke_rules())
    }

    /// Requests in a crawler's name that failed its operator's check,
    /// with whatever they did: the spoofers', never the crawler's.
    pub fn spoofers(&self) -> impl Iterator<Item = &BotReport> {
        self.bots.iter().filter(|b| b.spoofed())
    }

    /// Clients of a kind robots.txt does not govern (not spoofers).
    pub fn of_kind(&self, kind: crate::kinds::BotKind) -> impl Iterator<Item = &BotReport> {
        self.bots
            .iter()
            .filter(move |b| b.kind == kind && !b.spoofed())
    }
}

/// How a crawler fared on one practice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grade {
    /// The log shows it met.
    Met,
    /// The log shows it broken.
    NotMet,
    /// The log cannot show it either way.
    NotObservable,
}

impl Grade {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Met => "met",
            Grade::NotMet => "not met",
            Grade::NotObservable => "not observable here",
        }
    }
}

/// One practice, graded, with what the log showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Practice {
    /// The practice's short name (`rep`, `identifiable`, `back-off`,
    /// `caching`, `published-ranges`, `signed`).
    pub practice: &'static str,
    /// How it fared.
    pub grade: Grade,
    /// What the log showed.
    pub shown: String,
}
