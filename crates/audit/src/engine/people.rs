//! Requests of people rather than bots: a browser's (watched for a
//! crawler's behaviour, see `suspects`) and the site's own signed-in
//! users' (never judged).

use mannerly_logs::Entry;

use super::{Auditor, FxMap, Pending, Who, MAX_BROWSER_PATHS, MAX_CLIENTS, UNTRACKED};
use crate::pace::Step;
use crate::suspects::{is_asset, is_robots_txt};

impl Auditor<'_> {
    /// Whether a request is spared judgment: it came with credentials the
    /// server accepted, so it is the site's own user, whatever its
    /// User-Agent (the S3 console, a monitor given a password, a
    /// signed-in person's browser). A strict audit judges it too.
    pub(super) fn spares(&self, entry: &Entry<'_>) -> bool {
        !self.options.strict && entry.signed_in()
    }

    /// A signed-in user's request: counted by its User-Agent, so a
    /// client that invents a name to pass (nginx logs the name a client
    /// sends, checked or not) is seen by it.
    pub(super) fn signed_in(&mut self, entry: &Entry<'_>, ua: u32) -> Pending {
        self.signed_in_requests += 1;
        *self.signed_in_agents.entry(ua).or_default() += 1;
        self.unjudged(entry, false, Who::SignedIn)
    }

    /// A person's request, waiting its turn in time order only for the
    /// log's coverage (and a browser's pace): nothing of it is judged.
    fn unjudged(&self, entry: &Entry<'_>, robots: bool, who: Who) -> Pending {
        Pending {
            step: Step {
                millis: entry.stamp.millis,
                precision_ms: entry.stamp.precision_ms,
                robots,
                status: None,
                retry_until: None,
                delay_ms: 0,
                ignored_delay_ms: 0,
            },
            tiebreak: self.tiebreak,
            who,
            bytes: 0,
            target: Box::from(""),
            client: None,
            disallowed: None,
        }
    }

    pub(super) fn browser(&mut self, entry: &Entry<'_>, ua: u32) -> Pending {
        self.browser_requests += 1;
        let key = (entry.client, ua);
        let id = match self.client_ids.get(&key) {
            Some(id) => *id,
            // Past the bound, a new client is not tracked for suspects.
            None if self.clients.len() >= MAX_CLIENTS => UNTRACKED,
            None => {
                let id = self.clients.len() as u32;
                self.client_ids.insert(key, id);
                self.client_keys.push(key);
                self.clients.add();
                id
            }
        };
        let robots = is_robots_txt(&entry.target);
        let (disallowed, asset) = match robots {
            true => (false, false),
            false => self.browser_path(entry),
        };
        let who = Who::Browser {
            client: id,
            asset,
            disallowed,
        };
        self.unjudged(entry, robots, who)
    }

    /// Of a browser-looking client's path: whether robots.txt disallows
    /// it to every crawler (its `*` group), and whether it is an asset.
    fn browser_path(&mut self, entry: &Entry<'_>) -> (bool, bool) {
        let host = entry.host.as_deref().unwrap_or("-");
        let book = self.book;
        let Some((vid, version)) = book.at(host, entry.stamp.millis) else {
            return (false, is_asset(&entry.target));
        };
        let (rules, seen) = self.browser_rules.entry(vid).or_insert_with(|| {
            let rules = version.robots.for_agent("mannerly-any-crawler");
            (rules, FxMap::default())
        });
        if let Some(facts) = seen.get(entry.target.as_ref()) {
            return *facts;
        }
        let facts = (!rules.lookup(&entry.target).0, is_asset(&entry.target));
        if seen.len() < MAX_BROWSER_PATHS {
            seen.insert(entry.target.as_ref().into(), facts);
        }
        facts
    }
}
