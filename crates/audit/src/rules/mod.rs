//! Rules a server enforces, written from what an audit proved, and only
//! against its author:
//!
//! - a **spoofer** (requests naming a verifiable crawler's token from
//!   outside its operator's published ranges) is refused by token *and*
//!   address outside those ranges, so the real crawler passes;
//! - a **crawler that broke robots.txt** is refused by its product token,
//!   matched as a token ([`mannerly_robots::names_token`]), and only when
//!   nothing says the requests could be someone else's;
//! - an **anonymous client** or HTTP tool is refused by its address, and
//!   only when asked ([`Include::Anonymous`]).
//!
//! No rule names `-`, an empty User-Agent, a client library, a browser or
//! a generic word; none refuses `/robots.txt` (a crawler refused it would
//! read a 4xx as leave to crawl everything, RFC 9309 §2.3.1.3). What was
//! passed over is said, with why, and a rule that would refuse a verified
//! crawler's own requests is not written ([`Rules::warnings`]).
//!
//! Plain text out, for nginx, Apache, Caddy, HAProxy and Cloudflare; each
//! file says which client address it judges and how to make it the
//! client's own behind a proxy, and lists every rule with its evidence.

mod apache;
mod caddy;
mod cloudflare;
mod guard;
mod haproxy;
mod header;
mod nginx;
mod select;

use std::net::IpAddr;
use std::str::FromStr;

pub use cloudflare::MAX_EXPRESSION;
pub use header::by_reason as passed_over_by_reason;
pub use select::rules_of;

/// The servers rules are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Server {
    /// nginx.
    Nginx,
    /// Apache httpd 2.4.
    Apache,
    /// Caddy 2.
    Caddy,
    /// HAProxy.
    Haproxy,
    /// Cloudflare WAF custom rules.
    Cloudflare,
}

impl Server {
    /// Its name, as `--rules` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Server::Nginx => "nginx",
            Server::Apache => "apache",
            Server::Caddy => "caddy",
            Server::Haproxy => "haproxy",
            Server::Cloudflare => "cloudflare",
        }
    }
}

/// A server name `--rules` does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no rules for `{0}` (nginx, apache, caddy, haproxy, cloudflare)")]
pub struct UnknownServer(pub String);

impl FromStr for Server {
    type Err = UnknownServer;

    fn from_str(s: &str) -> Result<Server, UnknownServer> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "nginx" => Server::Nginx,
            "apache" | "httpd" => Server::Apache,
            "caddy" => Server::Caddy,
            "haproxy" => Server::Haproxy,
            "cloudflare" => Server::Cloudflare,
            _ => return Err(UnknownServer(s.to_owned())),
        })
    }
}

/// What rules are written for only when asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Include {
    /// Anonymous clients and HTTP tools, refused by address.
    Anonymous,
    /// User-triggered fetchers, by token.
    UserTriggered,
    /// Feed readers, by token.
    FeedReader,
    /// Link previews, by token.
    LinkPreview,
    /// Monitors, by token.
    Monitor,
    /// Crawlers charged only for a directive their operator documents they
    /// do not read (Google and Crawl-delay).
    Ignored,
}

impl Include {
    /// Every choice, as `--rules-include` names them.
    pub const ALL: [Include; 6] = [
        Include::Anonymous,
        Include::UserTriggered,
        Include::FeedReader,
        Include::LinkPreview,
        Include::Monitor,
        Include::Ignored,
    ];

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Include::Anonymous => "anonymous",
            Include::UserTriggered => "user-triggered",
            Include::FeedReader => "feed-reader",
            Include::LinkPreview => "link-preview",
            Include::Monitor => "monitor",
            Include::Ignored => "ignored",
        }
    }

    /// The kinds an audit must judge for this choice to find anything.
    pub fn kinds(self) -> &'static [crate::BotKind] {
        use crate::BotKind as K;
        match self {
            Include::Anonymous => &[K::Anonymous, K::ClientLibrary],
            Include::UserTriggered => &[K::UserTriggered],
            Include::FeedReader => &[K::FeedReader],
            Include::LinkPreview => &[K::LinkPreview],
            Include::Monitor => &[K::Monitor],
            Include::Ignored => &[],
        }
    }
}

/// A `--rules-include` value it does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not something rules can include (anonymous, user-triggered, feed-reader, link-preview, monitor, ignored)")]
pub struct UnknownInclude(pub String);

impl FromStr for Include {
    type Err = UnknownInclude;

    fn from_str(s: &str) -> Result<Include, UnknownInclude> {
        let lower = s.trim().to_ascii_lowercase();
        Include::ALL
            .into_iter()
            .find(|i| i.as_str() == lower)
            .ok_or_else(|| UnknownInclude(s.to_owned()))
    }
}

/// How rules are chosen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleOptions {
    /// What to write rules for beyond the default.
    pub include: Vec<Include>,
    /// Whether the audit was strict (it then charged directives an
    /// operator documents its crawler ignores, which make no rule unless
    /// [`Include::Ignored`] is asked).
    pub strict: bool,
}

/// What a rule refuses (never `/robots.txt`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Deny {
    /// Every request whose User-Agent names the token.
    Token {
        /// The product token.
        token: String,
        /// [`mannerly_robots::token_pattern`] of it.
        pattern: String,
    },
    /// Requests whose User-Agent names the token, from outside `inside`.
    Spoofer {
        /// The crawler's product token.
        token: String,
        /// [`mannerly_robots::token_pattern`] of it.
        pattern: String,
        /// Its operator's published ranges, and addresses the audit
        /// verified it at otherwise.
        inside: Vec<ipnet::IpNet>,
    },
    /// Every request from the address.
    Address(IpAddr),
}

/// The sorts of rule, as the summary counts them.
impl Deny {
    /// `token`, `spoofer` or `address`.
    pub fn sort(&self) -> &'static str {
        match self {
            Deny::Token { .. } => "token",
            Deny::Spoofer { .. } => "spoofer",
            Deny::Address(_) => "address",
        }
    }

    /// Whether the rule refuses a request for `path` from `client` with
    /// this User-Agent: the decision every server's text must make.
    pub fn refuses(&self, user_agent: &str, client: Option<IpAddr>, path: &str) -> bool {
        if crate::suspects::is_robots_txt(path) {
            return false;
        }
        match self {
            Deny::Token { token, .. } => mannerly_robots::names_token(user_agent, token),
            Deny::Spoofer { token, inside, .. } => {
                mannerly_robots::names_token(user_agent, token)
                    && client.is_some_and(|ip| !inside.iter().any(|n| n.contains(&ip)))
            }
            Deny::Address(a) => client == Some(*a),
        }
    }
}

/// One rule and why it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenyRule {
    /// What it refuses.
    pub deny: Deny,
    /// Why, with counts and first and last times.
    pub why: String,
}

/// Something the audit found that no rule refuses, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    /// The client (token, or `token at address`).
    pub who: String,
    /// Why no rule: one sentence.
    pub reason: &'static str,
}

/// The rules an audit calls for, and what it chose not to refuse.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// The rules, in the report's order.
    pub rules: Vec<DenyRule>,
    /// What broke a rule or was spoofed but is not refused.
    pub passed_over: Vec<PassedOver>,
    /// Rules not written (or narrowed) because they would have refused a
    /// verified crawler's own requests: each names the token.
    pub warnings: Vec<String>,
}

impl Rules {
    /// How many rules of each sort (`token`, `spoofer`, `address`).
    pub fn counts(&self) -> [(&'static str, usize); 3] {
        ["token", "spoofer", "address"]
            .map(|s| (s, self.rules.iter().filter(|r| r.deny.sort() == s).count()))
    }

    /// Whether any rule refuses the request.
    pub fn refuses(&self, user_agent: &str, client: Option<IpAddr>, path: &str) -> bool {
        self.rules
            .iter()
            .any(|r| r.deny.refuses(user_agent, client, path))
    }
}

/// The rules as `server` reads them: a header saying what each refuses
/// and why, then the server's own text.
pub fn render(rules: &Rules, server: Server) -> String {
    let mut out = header::header(rules, server);
    match server {
        Server::Nginx => nginx::write(&mut out, &rules.rules),
        Server::Apache => apache::write(&mut out, &rules.rules),
        Server::Caddy => caddy::write(&mut out, &rules.rules),
        Server::Haproxy => haproxy::write(&mut out, &rules.rules),
        Server::Cloudflare => cloudflare::write(&mut out, &rules.rules),
    }
    out
}

/// The rules that match a User-Agent, numbered from 1 as the header
/// lists them: (number, rule, pattern, the ranges a spoofer rule spares).
fn by_agent(
    rules: &[DenyRule],
) -> impl Iterator<Item = (usize, &DenyRule, &str, Option<&[ipnet::IpNet]>)> {
    rules.iter().enumerate().filter_map(|(i, r)| match &r.deny {
        Deny::Token { pattern, .. } => Some((i + 1, r, pattern.as_str(), None)),
        Deny::Spoofer {
            pattern, inside, ..
        } => Some((i + 1, r, pattern.as_str(), Some(inside.as_slice()))),
        Deny::Address(_) => None,
    })
}

/// The addresses of the address rules.
fn addresses(rules: &[DenyRule]) -> Vec<IpAddr> {
    rules
        .iter()
        .filter_map(|r| match r.deny {
            Deny::Address(a) => Some(a),
            _ => None,
        })
        .collect()
}
