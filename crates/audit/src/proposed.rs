//! What-if: the same requests judged against a proposed robots.txt too.
//! Each bot is judged under its own group in each file; a request the
//! proposal would refuse that the file in force allowed is newly
//! disallowed, and the other way newly allowed.

use mannerly_logs::Entry;
use mannerly_robots::AgentRules;
use serde::Serialize;

use crate::book::{RobotsBook, VersionId};
use crate::identity::Identity;
use crate::kinds::BotKind;

type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// Examples kept per bot.
pub const MAX_PROPOSED_EXAMPLES: usize = 5;

/// One request whose verdict the proposal changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposedExample {
    /// When (RFC 3339).
    pub time: String,
    /// The host.
    pub host: String,
    /// Path and query.
    pub path: String,
    /// The client's address, when the log records it.
    pub client: Option<String>,
    /// The line of the file in force that decided it (or that none did).
    pub before: String,
    /// `newly_disallowed` or `newly_allowed`, with the proposal's deciding
    /// line.
    pub detail: String,
}

/// One bot under the proposal: the requests in one crawler's name with
/// one identity (a spoofer's are not the crawler's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposedBot {
    /// Its product token.
    pub token: String,
    /// Whether the requests were its operator's.
    pub identity: Identity,
    /// What sort of client.
    pub kind: BotKind,
    /// Its requests the proposal would refuse that were allowed.
    pub newly_disallowed: u64,
    /// Its requests the proposal would allow that were refused.
    pub newly_allowed: u64,
    /// Some of them.
    pub examples: Vec<ProposedExample>,
}

/// What a proposed robots.txt would change for the bots that came.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposedReport {
    /// Requests newly disallowed, over all bots.
    pub newly_disallowed: u64,
    /// Requests newly allowed, over all bots.
    pub newly_allowed: u64,
    /// Per bot, most changed first.
    pub bots: Vec<ProposedBot>,
}

#[derive(Default)]
struct Tally {
    newly_disallowed: u64,
    newly_allowed: u64,
    examples: Vec<ProposedExample>,
}

/// The proposal being judged against, as requests come.
pub(crate) struct WhatIf<'r> {
    book: &'r RobotsBook,
    compiled: FxMap<(VersionId, u32), AgentRules<'r>>,
    tallies: FxMap<(u32, Identity), Tally>,
}

/// A request judged under the proposal: whose, with which identity, and
/// what the file in force said of it.
pub(crate) struct Judged<'a> {
    /// The token's number and name.
    pub token: (u32, &'a str),
    pub identity: Identity,
    /// The file in force, and whether it refused the request.
    pub now: &'a RobotsBook,
    pub disallowed_now: bool,
}

/// A rule as a report says it: its line, directive and pattern.
fn line_text(rule: Option<&mannerly_robots::Rule>) -> String {
    match rule {
        Some(r) => format!("line {}: {}: {}", r.line, r.kind.directive(), r.pattern()),
        None => "no rule".to_owned(),
    }
}

impl<'r> WhatIf<'r> {
    pub(crate) fn new(book: &'r RobotsBook) -> WhatIf<'r> {
        WhatIf {
            book,
            compiled: FxMap::default(),
            tallies: FxMap::default(),
        }
    }

    /// Judges a bot's page request under the proposal.
    pub(crate) fn judge(&mut self, j: &Judged<'_>, host: &str, entry: &Entry<'_>) {
        let Some((vid, version)) = self.book.at(host, entry.stamp.millis) else {
            return;
        };
        let rules = self
            .compiled
            .entry((vid, j.token.0))
            .or_insert_with(|| version.robots.for_agent(j.token.1));
        let (allowed, rule) = rules.lookup(&entry.target);
        if allowed != j.disallowed_now {
            return;
        }
        let t = self.tallies.entry((j.token.0, j.identity)).or_default();
        let what = if allowed {
            t.newly_allowed += 1;
            "newly allowed"
        } else {
            t.newly_disallowed += 1;
            "newly disallowed"
        };
        if t.examples.len() < MAX_PROPOSED_EXAMPLES {
            // The file in force is looked up again only for an example.
            let before = j
                .now
                .at(host, entry.stamp.millis)
                .map(|(_, v)| line_text(v.robots.for_agent(j.token.1).lookup(&entry.target).1))
                .unwrap_or_else(|| "no robots.txt".to_owned());
            t.examples.push(ProposedExample {
                time: crate::stamp::rfc3339(entry.stamp.millis),
                host: host.to_owned(),
                path: entry.target.as_ref().to_owned(),
                client: entry.client.map(|ip| ip.to_string()),
                before,
                detail: format!("{what} by {}", line_text(rule)),
            });
        }
    }

    /// The report, with each token's name.
    pub(crate) fn report(self, name: &dyn Fn(u32) -> (String, BotKind)) -> ProposedReport {
        let mut bots: Vec<ProposedBot> = self
            .tallies
            .into_iter()
            .map(|((t, identity), tally)| {
                let (token, kind) = name(t);
                ProposedBot {
                    token,
                    identity,
                    kind,
                    newly_disallowed: tally.newly_disallowed,
                    newly_allowed: tally.newly_allowed,
                    examples: tally.examples,
                }
            })
            .collect();
        bots.sort_by(|a, b| {
            (b.newly_disallowed + b.newly_allowed, &a.token)
                .cmp(&(a.newly_disallowed + a.newly_allowed, &b.token))
        });
        ProposedReport {
            newly_disallowed: bots.iter().map(|b| b.newly_disallowed).sum(),
            newly_allowed: bots.iter().map(|b| b.newly_allowed).sum(),
            bots,
        }
    }
}
