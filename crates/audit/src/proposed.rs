//! What-if: the same requests judged against a proposed robots.txt too.
//! Each bot is judged under its own group in each file; a request the
//! proposal would refuse that the file in force allowed is newly
//! disallowed, and the other way newly allowed.

use mannerly_logs::Entry;
use mannerly_robots::AgentRules;
use serde::Serialize;

use crate::book::{RobotsBook, VersionId};

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
    /// `newly_disallowed` or `newly_allowed`, with the deciding line.
    pub detail: String,
}

/// One bot under the proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposedBot {
    /// Its product token.
    pub token: String,
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
    tallies: FxMap<u32, Tally>,
}

impl<'r> WhatIf<'r> {
    pub(crate) fn new(book: &'r RobotsBook) -> WhatIf<'r> {
        WhatIf {
            book,
            compiled: FxMap::default(),
            tallies: FxMap::default(),
        }
    }

    /// Judges a bot's page request under the proposal; `disallowed_now`:
    /// whether the file in force refused it.
    pub(crate) fn judge(
        &mut self,
        token: (u32, &str),
        host: &str,
        entry: &Entry<'_>,
        disallowed_now: bool,
    ) {
        let Some((vid, version)) = self.book.at(host, entry.stamp.millis) else {
            return;
        };
        let rules = self
            .compiled
            .entry((vid, token.0))
            .or_insert_with(|| version.robots.for_agent(token.1));
        let (allowed, rule) = rules.lookup(&entry.target);
        if allowed != disallowed_now {
            return;
        }
        let t = self.tallies.entry(token.0).or_default();
        let (what, line) = match (allowed, rule) {
            (false, Some(r)) => (
                "newly disallowed",
                format!(
                    " by line {}: {}: {}",
                    r.line,
                    r.kind.directive(),
                    r.pattern()
                ),
            ),
            (false, None) => ("newly disallowed", String::new()),
            (true, Some(r)) => (
                "newly allowed",
                format!(
                    " by line {}: {}: {}",
                    r.line,
                    r.kind.directive(),
                    r.pattern()
                ),
            ),
            (true, None) => ("newly allowed", String::new()),
        };
        if allowed {
            t.newly_allowed += 1;
        } else {
            t.newly_disallowed += 1;
        }
        if t.examples.len() < MAX_PROPOSED_EXAMPLES {
            t.examples.push(ProposedExample {
                time: crate::stamp::rfc3339(entry.stamp.millis),
                host: host.to_owned(),
                path: entry.target.as_ref().to_owned(),
                detail: format!("{what}{line}"),
            });
        }
    }

    /// The report, with each token's name.
    pub(crate) fn report(self, name: &dyn Fn(u32) -> String) -> ProposedReport {
        let mut bots: Vec<ProposedBot> = self
            .tallies
            .into_iter()
            .map(|(t, tally)| ProposedBot {
                token: name(t),
                newly_disallowed: tally.newly_disallowed,
                newly_allowed: tally.newly_allowed,
                examples: tally.examples,
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
