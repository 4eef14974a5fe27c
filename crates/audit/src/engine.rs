//! The audit of access-log entries: each request classified (browser or
//! bot, which token, which identity) and judged against the robots.txt in
//! force at its time as it arrives; then, in time order, each bot's pace
//! per host (see `pace`) and each browser client's behaviour (see
//! `suspects`).
//!
//! Logs are only nearly in time order (a server writes a line when a
//! request ends; several servers' logs interleave), so requests wait in a
//! heap until every file being read has moved `window` past them.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use mannerly_logs::Entry;
use mannerly_robots::AgentRules;

use crate::agents::{Agent, Catalogue, Known};
use crate::book::{RobotsBook, VersionId};
use crate::coverage::Holes;
use crate::evidence::{BotEvidence, BotEvidenceInput, Logged, Tolerance};
use crate::kinds::BotKind;
use crate::order::{Reorder, Timed};
use crate::pace::{LogState, Pace, Step, WindowSource};
use crate::proposed::WhatIf;
use crate::report::GateAction;
use crate::report::{Counts, Example, Finding, Identity, Timeline, Violation, MAX_EXAMPLES};
use crate::stamp::rfc3339;
use crate::suspects::{is_robots_txt, Clients};

mod people;

/// How an audit judges.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The Retry-After a 429 or 503 meant when the log's layout cannot
    /// show the header (default 60 s); a layout that logs it and shows
    /// none sent opens no wait.
    pub retry_after: Duration,
    /// A gap every bot must keep even without a Crawl-delay (default none:
    /// gaps are judged only against Crawl-delay).
    pub min_gap: Option<Duration>,
    /// Allowance on every gap and window, beyond the log's own precision
    /// (default none).
    pub slack: Duration,
    /// How far out of order a log may be (default 5 minutes).
    pub window: Duration,
    /// Whether the logs begin when the site began serving, so no
    /// robots.txt read can have come before them. When not, pages in the
    /// logs' first 24 hours are not blamed for a read the logs may have
    /// missed.
    pub from_start: bool,
    /// Judges every client as a crawler, by every directive as written:
    /// feed readers, link previews, monitors, HTTP tools and anonymous
    /// clients too, and a Crawl-delay its operator documents a crawler
    /// ignores (default off: only crawlers, by what they are known to read).
    pub strict: bool,
    /// Kinds judged besides crawlers (what `--rules-include` asks rules
    /// for): their requests are held to robots.txt too.
    pub judge_also: Vec<BotKind>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            retry_after: Duration::from_secs(60),
            min_gap: None,
            slack: Duration::ZERO,
            window: Duration::from_secs(300),
            from_start: false,
            strict: false,
            judge_also: Vec::new(),
        }
    }
}

/// Tells whether a bot's request is really its operator's.
pub trait Identify {
    /// The identity of `entry`, which claims to be `bot` (`None`: a bot
    /// the catalogue does not know, asked only when the request is signed).
    fn identify(&self, bot: Option<&Known>, entry: &Entry<'_>) -> Identity;

    /// Told, before a batch is fed, which known bots (catalogue index)
    /// came from which addresses in it, and which key directories its
    /// signed requests name, so lookups can be made together.
    fn prepare(&mut self, _wanted: &[(usize, IpAddr)], _agents: &[String]) {}

    /// Told, before a batch is fed, the crawler pages that unlisted bots'
    /// User-Agents name (`(token, page)`), so the ranges those pages link
    /// can be loaded: then `identify(None, entry)` can check them.
    fn prepare_pages(&mut self, _pages: &[(String, String)]) {}

    /// Online: whether each of these crawler pages (named by User-Agents)
    /// answers, in order: the status it ends with, or why it could not be
    /// asked; `None` where it was not asked (offline, or past a bound).
    fn pages_answer(&mut self, pages: &[String]) -> Vec<Option<Result<u16, String>>> {
        vec![None; pages.len()]
    }
}

/// What checking one entry's identity needs: a known bot's (catalogue
/// entry, address), or an unlisted bot's (token, page).
pub(crate) type EntryWants = (Option<(usize, IpAddr)>, Option<(String, String)>);

/// No checks: every request is unverified.
pub struct Unchecked;

impl Identify for Unchecked {
    fn identify(&self, _: Option<&Known>, _: &Entry<'_>) -> Identity {
        Identity::Unverified
    }
}

/// User-Agents kept per bot, at most: what a server rule is checked
/// against.
pub const MAX_AGENTS: usize = 4;

/// Browser clients tracked for suspects, at most (a live follow runs for
/// days; past this, new clients are counted but not tracked).
const MAX_CLIENTS: usize = 1_000_000;
/// The id of a browser client not tracked.
const UNTRACKED: u32 = u32::MAX;
/// Bot groups, at most, before an HTTP tool's new addresses share one.
const MAX_GROUPS: usize = 100_000;

/// What a User-Agent was classified as.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Browser,
    Bot(u32),
}

/// A User-Agent's kind and number, found once for a request and handed
/// on, so one that is gathered for and then fed is looked up once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Classified(Kind, u32);

/// Paths whose verdict for browsers is kept, at most, per robots.txt
/// version (past it, a new path is judged each time).
const MAX_BROWSER_PATHS: usize = 16_384;

/// Browser-looking clients' paths: (disallowed to every crawler, an
/// asset).
type BrowserPaths = FxMap<Box<str>, (bool, bool)>;

/// A browser client: its address and User-Agent.
pub(crate) type ClientKey = (Option<IpAddr>, u32);

type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// A token's robots.txt group in one version, compiled once.
struct Compiled<'r> {
    rules: AgentRules<'r>,
    delay_ms: u64,
    /// Each deciding rule already written out (its number in
    /// `Auditor::deciding_lines`), by the rule's address in its file (a
    /// line number is not enough: Google's `index.htm` rule adds a second
    /// rule on the same line).
    lines: FxMap<usize, u32>,
}

/// The facts kept per bot group (token, identity).
pub(crate) struct Group {
    pub token: u32,
    pub identity: Identity,
    /// The client address, for an HTTP library or tool.
    pub address: Option<IpAddr>,
    /// Its first and last request (Unix milliseconds).
    pub seen: Option<(i64, i64)>,
    pub statuses: BTreeMap<u16, u64>,
    pub bytes: u64,
    pub clients: rustc_hash::FxHashSet<IpAddr>,
    /// Its first User-Agents (numbers into `Auditor::user_agents`).
    pub agents: Vec<u32>,
    pub examples: Vec<Example>,
    pub hosts: FxMap<u32, Pace>,
    pub timeline: Timeline,
    pub gate: Option<crate::report::GateCounts>,
    /// Requests that carried a Web Bot Auth signature, as logged.
    pub signed: u64,
}

/// Whose name a robots.txt read counts for: an operator's crawlers, or
/// one token's when its operator is not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Claimant {
    Operator(u32),
    Token(u32),
}

/// Who made a waiting request.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Who {
    Bot {
        group: u32,
        host: u32,
    },
    /// A browser-looking client's request, with what its path is (its
    /// counters change when it is processed, with its pace: one look at
    /// the client's record a request, not two).
    Browser {
        client: u32,
        asset: bool,
        disallowed: bool,
    },
    /// The site's own user: credentials the server accepted.
    SignedIn,
}

/// A request waiting for its turn in time order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    step: Step,
    tiebreak: u64,
    who: Who,
    bytes: u64,
    target: Box<str>,
    client: Option<IpAddr>,
    /// The deciding robots.txt line (its number in
    /// `Auditor::deciding_lines`), when the path was disallowed: a number,
    /// not the text, keeps a request waiting in 128 bytes, which are moved
    /// without a call to `memcpy` (the move was 7 % of an audit's time).
    disallowed: Option<u32>,
}

impl Ord for Pending {
    fn cmp(&self, o: &Self) -> Ordering {
        (
            self.step.millis,
            !self.step.robots,
            self.tiebreak,
            &self.who,
            &self.target,
        )
            .cmp(&(o.step.millis, !o.step.robots, o.tiebreak, &o.who, &o.target))
    }
}

impl Timed for Pending {
    fn millis(&self) -> i64 {
        self.step.millis
    }
}

impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// An audit in progress: feed it entries, then [`finish`](Auditor::finish).
pub struct Auditor<'r> {
    pub(crate) book: &'r RobotsBook,
    pub(crate) catalogue: &'r Catalogue,
    pub(crate) options: Options,
    /// User-Agents seen: what each is, and its number.
    kinds: FxMap<Box<str>, (Kind, u32)>,
    pub(crate) user_agents: Vec<Box<str>>,
    /// Tokens: (as found, catalogue entry).
    pub(crate) tokens: Vec<(String, Option<usize>)>,
    token_ids: FxMap<String, u32>,
    pub(crate) groups: Vec<Group>,
    group_ids: FxMap<(u32, Identity, Option<IpAddr>), u32>,
    /// Each token's kind, by token number.
    pub(crate) token_kinds: Vec<BotKind>,
    /// Each token's operator (by operator number), when known.
    token_operators: Vec<Option<u32>>,
    operator_ids: FxMap<String, u32>,
    /// The latest robots.txt read of a host by a verified crawler of an
    /// operator: (operator, host) -> when.
    operator_reads: FxMap<(u32, u32), i64>,
    /// The latest robots.txt read of a host by anyone claiming a name and
    /// not caught spoofing it (its operator's, or the token's when no
    /// operator is known): (claimant, host) -> when.
    claimed_reads: FxMap<(Claimant, u32), i64>,
    /// The log's holes, found as its requests are taken in time order.
    pub(crate) holes: Option<Holes>,
    pub(crate) hosts: Vec<String>,
    host_ids: FxMap<String, u32>,
    compiled: FxMap<(VersionId, u32), Compiled<'r>>,
    /// Deciding robots.txt lines written out, each once.
    deciding_lines: Vec<Box<str>>,
    /// Per version: the rules a browser-looking client is checked
    /// against, and what `browser_path` found of each path asked
    /// (browsers' paths repeat: a site's pages and assets).
    browser_rules: FxMap<VersionId, (AgentRules<'r>, BrowserPaths)>,
    /// Browser-looking clients' records (each counted in for every request
    /// of theirs, in time order, a run at a time: 48 bytes, their keys kept
    /// apart), their keys, and their numbers.
    pub(crate) clients: Clients,
    pub(crate) client_keys: Vec<ClientKey>,
    client_ids: FxMap<ClientKey, u32>,
    waiting: Reorder<Pending>,
    latest: Vec<i64>,
    done: Vec<bool>,
    processed_to: i64,
    pub(crate) late: u64,
    pub(crate) browser_requests: u64,
    /// Requests with credentials the server accepted: the site's own
    /// users, never judged (unless the audit is strict).
    pub(crate) signed_in_requests: u64,
    /// Those requests by User-Agent (its number).
    pub(crate) signed_in_agents: FxMap<u32, u64>,
    /// Whether the log records Web Bot Auth headers at all (any request
    /// carried them).
    pub(crate) signatures_logged: bool,
    pub(crate) span: Option<(i64, i64)>,
    /// Crawlers' evidence, with their logged requests gathered.
    pub(crate) evidence: Vec<BotEvidence>,
    /// Which evidence a token's requests go to (by token number).
    evidence_slots: FxMap<u32, Option<usize>>,
    pub(crate) tolerance: Tolerance,
    /// A proposed robots.txt the same requests are judged against too.
    pub(crate) proposed: Option<WhatIf<'r>>,
    /// Every finding, when they are streamed.
    findings: Option<Vec<Finding>>,
    /// Lines fed from each file, and the order key of the one being fed.
    fed: Vec<u64>,
    tiebreak: u64,
}

impl<'r> Auditor<'r> {
    /// An audit of `files` log files (entries of each come nearly in time
    /// order) against `book`.
    pub fn new(
        book: &'r RobotsBook,
        catalogue: &'r Catalogue,
        options: Options,
        files: usize,
    ) -> Auditor<'r> {
        Auditor {
            book,
            catalogue,
            options,
            kinds: FxMap::default(),
            user_agents: Vec::new(),
            tokens: Vec::new(),
            token_ids: FxMap::default(),
            groups: Vec::new(),
            group_ids: FxMap::default(),
            token_kinds: Vec::new(),
            token_operators: Vec::new(),
            operator_ids: FxMap::default(),
            operator_reads: FxMap::default(),
            claimed_reads: FxMap::default(),
            holes: None,
            hosts: Vec::new(),
            host_ids: FxMap::default(),
            compiled: FxMap::default(),
            deciding_lines: Vec::new(),
            browser_rules: FxMap::default(),
            clients: Clients::default(),
            client_keys: Vec::new(),
            client_ids: FxMap::default(),
            waiting: Reorder::new(),
            latest: vec![i64::MIN; files.max(1)],
            done: vec![false; files.max(1)],
            processed_to: i64::MIN,
            late: 0,
            browser_requests: 0,
            signed_in_requests: 0,
            signed_in_agents: FxMap::default(),
            signatures_logged: false,
            span: None,
            evidence: Vec::new(),
            evidence_slots: FxMap::default(),
            tolerance: Tolerance {
                skew_ms: 2_000,
                assumed_retry_after_ms: 60_000,
            },
            proposed: None,
            findings: None,
            fed: vec![0; files.max(1)],
            tiebreak: 0,
        }
    }

    /// Judges every bot's page requests against `proposed` too: the
    /// report's `proposed` says which it would newly disallow or allow.
    pub fn with_proposed(mut self, proposed: &'r RobotsBook) -> Self {
        self.proposed = Some(WhatIf::new(proposed));
        self
    }

    /// Checks crawlers' evidence (see [`group_bundles`](crate::group_bundles))
    /// against their logged requests: a logged request matches a record
    /// sent within the log's precision plus `skew`.
    pub fn with_evidence(mut self, evidence: Vec<BotEvidenceInput>, skew: Duration) -> Self {
        self.evidence = evidence.into_iter().map(|e| e.0).collect();
        self.evidence.iter_mut().for_each(BotEvidence::index);
        self.tolerance = Tolerance {
            skew_ms: skew.as_millis() as i64,
            assumed_retry_after_ms: self.options.retry_after.as_millis() as i64,
        };
        self
    }

    /// Which evidence a token's requests go to, if any.
    fn evidence_slot(&mut self, token: u32) -> Option<usize> {
        if self.evidence.is_empty() {
            return None;
        }
        *self.evidence_slots.entry(token).or_insert_with(|| {
            let name = self.tokens[token as usize].0.to_ascii_lowercase();
            self.evidence.iter().position(|e| e.token == name)
        })
    }

    /// Keeps a bot's logged request when it has evidence to check.
    fn note_evidence(&mut self, token: u32, entry: &Entry<'_>) {
        let slot = self.evidence_slot(token);
        if let Some(e) = slot.and_then(|i| self.evidence.get_mut(i)) {
            e.logged.push(Logged {
                millis: entry.stamp.millis,
                precision_ms: entry.stamp.precision_ms,
                method: entry.method.as_ref().into(),
                target: entry.target.as_ref().into(),
                host: entry.host.as_deref().map(Into::into),
                status: entry.status,
                retry_after_logged: entry.retry_after.is_some(),
            });
        }
    }

    /// Takes one entry of file `file`; `identify` tells a known bot's
    /// identity.
    pub fn feed(&mut self, file: usize, entry: &Entry<'_>, identify: &dyn Identify) {
        let kind = self.classify(&entry.user_agent);
        self.feed_classified(file, entry, kind, identify);
    }

    /// [`feed`](Auditor::feed), its User-Agent already classified.
    pub(crate) fn feed_classified(
        &mut self,
        file: usize,
        entry: &Entry<'_>,
        Classified(kind, ua): Classified,
        identify: &dyn Identify,
    ) {
        let millis = entry.stamp.millis;
        self.span = Some(match self.span {
            None => (millis, millis),
            Some((a, b)) => (a.min(millis), b.max(millis)),
        });
        if let Some(l) = self.latest.get_mut(file) {
            *l = (*l).max(millis);
        }
        if let Some(n) = self.fed.get_mut(file) {
            *n += 1;
            self.tiebreak = tiebreak(file, *n);
        }
        let pending = match kind {
            _ if self.spares(entry) => self.signed_in(entry, ua),
            Kind::Browser => self.browser(entry, ua),
            Kind::Bot(token) => self.bot(token, ua, entry, identify),
        };
        if millis < self.processed_to {
            self.late += 1;
            self.process(pending);
        } else {
            self.waiting.push(pending);
        }
        self.drain(false);
    }

    /// Says that file `file` has ended.
    pub fn end_file(&mut self, file: usize) {
        if let Some(d) = self.done.get_mut(file) {
            *d = true;
        }
        self.drain(false);
    }

    /// What checking an entry's identity needs, with one look at its
    /// User-Agent: the (catalogue entry, address) of a known, verifiable
    /// bot; or the (token, page) an unlisted bot's User-Agent names.
    pub(crate) fn wants(&self, entry: &Entry<'_>, kind: Classified) -> EntryWants {
        let Classified(Kind::Bot(token), _) = kind else {
            return (None, None);
        };
        if self.spares(entry) {
            return (None, None);
        }
        match &self.tokens[token as usize] {
            (_, Some(k)) => {
                let verifiable = self.catalogue.get(*k).is_some_and(Known::verifiable);
                (entry.client.filter(|_| verifiable).map(|ip| (*k, ip)), None)
            }
            (name, None) => {
                let page = mannerly_robots::page_named(&entry.user_agent);
                (None, page.map(|p| (name.clone(), p.to_owned())))
            }
        }
    }

    /// What a User-Agent is, and its number.
    pub(crate) fn classify(&mut self, user_agent: &str) -> Classified {
        let (kind, id) = self.kind(user_agent);
        Classified(kind, id)
    }

    fn kind(&mut self, user_agent: &str) -> (Kind, u32) {
        if let Some(k) = self.kinds.get(user_agent) {
            return *k;
        }
        let kind = match self.catalogue.classify(user_agent) {
            Agent::Browser => Kind::Browser,
            Agent::Bot { token, known, kind } => Kind::Bot(self.token_id(token, known, kind)),
        };
        let id = self.user_agents.len() as u32;
        self.user_agents.push(user_agent.into());
        self.kinds.insert(user_agent.into(), (kind, id));
        (kind, id)
    }

    fn token_id(&mut self, token: String, known: Option<usize>, kind: BotKind) -> u32 {
        let key = token.to_ascii_lowercase();
        if let Some(id) = self.token_ids.get(&key) {
            return *id;
        }
        let id = self.tokens.len() as u32;
        let operator = known
            .and_then(|k| self.catalogue.get(k))
            .and_then(|k| k.operator.clone())
            .map(|o| {
                let next = self.operator_ids.len() as u32;
                *self.operator_ids.entry(o).or_insert(next)
            });
        self.token_operators.push(operator);
        self.token_kinds.push(kind);
        self.tokens.push((token, known));
        self.token_ids.insert(key, id);
        id
    }

    fn host_id(&mut self, entry: &Entry<'_>) -> u32 {
        let host = entry.host.as_deref().unwrap_or("-");
        if let Some(id) = self.host_ids.get(host) {
            return *id;
        }
        let id = self.hosts.len() as u32;
        self.hosts.push(host.to_owned());
        self.host_ids.insert(host.to_owned(), id);
        id
    }

    /// The group of a token's requests with one identity (and, for a
    /// name that is not one crawler's, from one address).
    fn group_id(&mut self, token: u32, identity: Identity, address: Option<IpAddr>) -> u32 {
        if let Some(id) = self.group_ids.get(&(token, identity, address)) {
            return *id;
        }
        let id = self.groups.len() as u32;
        self.groups.push(Group {
            token,
            identity,
            address,
            seen: None,
            statuses: BTreeMap::new(),
            bytes: 0,
            clients: rustc_hash::FxHashSet::default(),
            agents: Vec::new(),
            examples: Vec::new(),
            hosts: FxMap::default(),
            timeline: Timeline::default(),
            signed: 0,
            gate: None,
        });
        self.group_ids.insert((token, identity, address), id);
        id
    }

    /// Whether a name's requests are judged per address: anonymous
    /// clients and HTTP tools (anyone's); clients the catalogue does not
    /// know, and crawling software and scanners anyone runs (nothing says
    /// two addresses are one crawler); requests that failed their
    /// crawler's check (each spoofer is its own), or whose check could
    /// not be made (offline, say: the check would part the crawler's
    /// addresses from a spoofer's, so none answers for another). A
    /// crawler that keeps evidence is one, whatever its addresses: its
    /// records say which requests are its.
    fn per_address(&self, token: u32, known: Option<&Known>, identity: Identity) -> bool {
        self.token_kinds[token as usize].per_address()
            || identity == Identity::Spoofed
            || (identity == Identity::Unverified && known.is_some_and(Known::verifiable))
            || known.is_none_or(|k| {
                use crate::kinds::Category;
                matches!(
                    k.category,
                    Some(Category::CrawlerSoftware | Category::SecurityScanner)
                )
            })
    }

    /// Whether a kind's requests are judged (crawlers, or all when strict).
    pub(crate) fn judges(&self, kind: BotKind) -> bool {
        self.options.strict || kind.judged() || self.options.judge_also.contains(&kind)
    }

    /// The Retry-After window a 429 or 503 opened, as an instant: as
    /// logged, else as the crawler's evidence recorded it, else assumed;
    /// none when the log records that the server sent no Retry-After.
    fn retry_until(&self, slot: Option<usize>, entry: &Entry<'_>) -> Option<(i64, WindowSource)> {
        if !matches!(entry.status, Some(429 | 503)) {
            return None;
        }
        let at = entry.stamp.millis;
        let recorded = || {
            let window = i64::from(entry.stamp.precision_ms) + self.tolerance.skew_ms;
            let e = self.evidence.get(slot?)?;
            Some(at + e.recorded_retry_after(entry.host.as_deref(), at, window)?)
        };
        let logged = entry.retry_after.as_deref().and_then(|v| {
            let now = mannerly_time::UnixMillis(u64::try_from(at).ok()?);
            let until = mannerly_time::parse_retry_after(v, now)?;
            i64::try_from(until.0).ok()
        });
        let assumed = at + self.options.retry_after.as_millis() as i64;
        Some(match (logged, recorded()) {
            (Some(until), _) => (until, WindowSource::Logged),
            (None, Some(until)) => (until, WindowSource::Evidence),
            // The log shows that the server asked for no wait.
            (None, None) if entry.retry_after_logged => return None,
            (None, None) => (assumed, WindowSource::Assumed),
        })
    }

    fn bot(&mut self, token: u32, ua: u32, entry: &Entry<'_>, identify: &dyn Identify) -> Pending {
        let known = self.tokens[token as usize]
            .1
            .and_then(|k| self.catalogue.get(k));
        let identity = if known.is_some() || entry.signature.is_some() || names_a_page(entry) {
            identify.identify(known, entry)
        } else {
            Identity::Unverified
        };
        let slot = self.evidence_slot(token);
        let window = i64::from(entry.stamp.precision_ms) + self.tolerance.skew_ms;
        // A request its signed evidence disproves is someone else's.
        let disproved = slot.is_some_and(|i| {
            self.evidence[i].disproves(&entry.method, &entry.target, entry.stamp.millis, window)
        });
        let identity = if disproved {
            Identity::Spoofed
        } else {
            identity
        };
        let one_crawler = slot.is_some() && !disproved;
        let address = if !one_crawler && self.per_address(token, known, identity) {
            entry.client.filter(|ip| {
                // Past the bound, a name's other addresses share one group.
                self.group_ids.contains_key(&(token, identity, Some(*ip)))
                    || self.groups.len() < MAX_GROUPS
            })
        } else {
            None
        };
        let group = self.group_id(token, identity, address);
        let at = entry.stamp.millis;
        if entry.signature.is_some() {
            self.signatures_logged = true;
        }
        let g = &mut self.groups[group as usize];
        g.signed += u64::from(entry.signature.is_some());
        g.seen = Some(g.seen.map_or((at, at), |(a, b)| (a.min(at), b.max(at))));
        if g.agents.len() < MAX_AGENTS && !g.agents.contains(&ua) {
            g.agents.push(ua);
        }
        if let Some(action) = entry.gate.as_deref().and_then(GateAction::parse) {
            g.gate.get_or_insert_with(Default::default).count(action);
        }
        let host = self.host_id(entry);
        self.note_evidence(token, entry);
        let robots = is_robots_txt(&entry.target);
        let (delay, disallowed) = self.judge_path(token, host, entry, robots);
        let page =
            !robots && (entry.method.is_empty() || entry.method == "GET" || entry.method == "HEAD");
        if let (Some(w), true) = (&mut self.proposed, page) {
            let judged = crate::proposed::Judged {
                token: (token, self.tokens[token as usize].0.as_str()),
                identity,
                now: self.book,
                disallowed_now: disallowed.is_some(),
            };
            w.judge(&judged, &self.hosts[host as usize], entry);
        }
        Pending {
            step: Step {
                millis: entry.stamp.millis,
                precision_ms: entry.stamp.precision_ms,
                robots,
                status: entry.status,
                retry_until: self.retry_until(slot, entry),
                delay_ms: delay.0,
                ignored_delay_ms: delay.1,
            },
            tiebreak: self.tiebreak,
            who: Who::Bot { group, host },
            bytes: entry.bytes.unwrap_or(0),
            target: entry.target.as_ref().into(),
            client: entry.client,
            disallowed,
        }
    }

    /// The Crawl-delay in force for the token (judged, and one its
    /// operator documents it ignores), and the deciding line when the
    /// path is disallowed.
    fn judge_path(
        &mut self,
        token: u32,
        host: u32,
        entry: &Entry<'_>,
        robots: bool,
    ) -> ((u64, u64), Option<u32>) {
        let floor = self.options.min_gap.map_or(0, |d| d.as_millis() as u64);
        let ignores_delay = self.tokens[token as usize]
            .1
            .and_then(|k| self.catalogue.get(k))
            .is_some_and(|k| k.ignores.contains_key("crawl-delay"));
        let book = self.book;
        let Some((vid, version)) = book.at(&self.hosts[host as usize], entry.stamp.millis) else {
            return ((floor, 0), None);
        };
        let name = &self.tokens[token as usize].0;
        let compiled = self
            .compiled
            .entry((vid, token))
            .or_insert_with(|| Compiled {
                lines: FxMap::default(),
                rules: version.robots.for_agent(name),
                delay_ms: version
                    .robots
                    .crawl_delay(name)
                    .map_or(0, |d| d.delay.as_millis() as u64),
            });
        // A delay its operator documents it ignores is counted apart; a
        // strict audit charges it too.
        let delay = match (ignores_delay, self.options.strict) {
            (true, false) => (floor, compiled.delay_ms),
            (true, true) => (compiled.delay_ms.max(floor), compiled.delay_ms),
            (false, _) => (compiled.delay_ms.max(floor), 0),
        };
        if robots || !entry.method.is_empty() && entry.method != "GET" && entry.method != "HEAD" {
            return (delay, None);
        }
        match compiled.rules.lookup(&entry.target) {
            (false, Some(rule)) => {
                let key = std::ptr::from_ref(rule) as usize;
                let lines = &mut self.deciding_lines;
                let number = *compiled.lines.entry(key).or_insert_with(|| {
                    let line = format!(
                        "line {}: {}: {}",
                        rule.line,
                        rule.kind.directive(),
                        rule.pattern()
                    );
                    lines.push(line.into());
                    (lines.len() - 1) as u32
                });
                (delay, Some(number))
            }
            _ => (delay, None),
        }
    }

    /// Takes, in time order, the requests every file has moved past.
    pub(crate) fn drain(&mut self, all: bool) {
        let watermark = if all {
            i64::MAX
        } else {
            let open = self
                .latest
                .iter()
                .zip(&self.done)
                .filter(|(_, d)| !**d)
                .map(|(l, _)| *l)
                .min();
            match open {
                None => i64::MAX,
                Some(i64::MIN) => return,
                Some(l) => l.saturating_sub(self.options.window.as_millis() as i64),
            }
        };
        // Out of `self` while it is drained, so each request is processed
        // as it is taken (an empty queue allocates nothing).
        let mut waiting = std::mem::replace(&mut self.waiting, Reorder::new());
        waiting.take_until(watermark, |p| {
            self.processed_to = self.processed_to.max(p.step.millis);
            self.process(p);
        });
        self.waiting = waiting;
    }

    fn process(&mut self, p: Pending) {
        let slack = self.options.slack.as_millis() as i64;
        let from_start = self.options.from_start;
        let holes = self
            .holes
            .get_or_insert_with(|| Holes::new(if from_start { i64::MIN } else { p.step.millis }));
        holes.step(p.step.millis);
        let whole_since = holes.whole_since;
        let (group, host) = match p.who {
            Who::Browser {
                client,
                asset,
                disallowed,
            } => {
                let (robots, millis) = (p.step.robots, p.step.millis);
                return self.clients.take(client, robots, asset, disallowed, millis);
            }
            Who::SignedIn => return,
            Who::Bot { group, host } => (group, host),
        };
        let log = LogState {
            slack_ms: slack,
            whole_since,
            shared_read: self.shared_read(group, host, p.step.robots.then_some(p.step.millis)),
        };
        let g = &mut self.groups[group as usize];
        let first = g.hosts.is_empty();
        let pace = g.hosts.entry(host).or_default();
        let mut judged = pace.step(&p.step, &log);
        if p.disallowed.is_some() {
            pace.counts.requests_breaking_rules += u64::from(judged.broke.is_empty());
            judged.broke.insert(0, Violation::Disallowed);
            pace.counts.count(Violation::Disallowed);
        }
        g.bytes += p.bytes;
        if let Some(s) = p.step.status {
            *g.statuses.entry(s).or_default() += 1;
        }
        if let Some(ip) = p.client {
            g.clients.insert(ip);
        }
        g.timeline.add(p.step.millis, judged.broke.len() as u64);
        if first && g.identity == Identity::Spoofed {
            // A spoofer is told live as it is first seen, whatever it did.
            judged.broke.insert(0, Violation::Spoofed);
        }
        self.tell(group, host, &p, judged);
    }

    /// The latest robots.txt read of `host` that counts for `group`
    /// besides its own, before this request (`read`: when it is a read
    /// itself, kept for the others). A verified crawler's counts for its
    /// operator's verified others. An unchecked name may be anyone's, the
    /// real crawler's too: a read by anyone claiming it (not caught
    /// spoofing) counts, so the real one, whose robots.txt and pages come
    /// from different addresses, is never blamed for not reading it. A
    /// spoofer's own reads count only for itself.
    fn shared_read(&mut self, group: u32, host: u32, read: Option<i64>) -> Option<i64> {
        let g = &self.groups[group as usize];
        let operator = self.token_operators[g.token as usize];
        let claimant = operator.map_or(Claimant::Token(g.token), Claimant::Operator);
        let verified = operator.filter(|_| g.identity == Identity::Verified);
        let shared = match g.identity {
            Identity::Verified => verified.and_then(|o| self.operator_reads.get(&(o, host))),
            Identity::Unverified => self.claimed_reads.get(&(claimant, host)),
            Identity::Spoofed => None,
        }
        .copied();
        if let (Some(at), false) = (read, g.identity == Identity::Spoofed) {
            self.claimed_reads.insert((claimant, host), at);
            if let Some(o) = verified {
                self.operator_reads.insert((o, host), at);
            }
        }
        shared
    }

    /// Keeps examples of the rules a request broke, and streams them as
    /// findings when asked to.
    fn tell(&mut self, group: u32, host: u32, p: &Pending, judged: crate::pace::Judged) {
        let kind = self.token_kinds[self.groups[group as usize].token as usize];
        let streaming = self.findings.is_some() && self.judges(kind);
        let g = &mut self.groups[group as usize];
        for rule in judged.broke {
            if rule == Violation::Spoofed && self.findings.is_none() {
                continue;
            }
            let kept = g.examples.iter().filter(|e| e.rule == rule).count();
            if kept >= MAX_EXAMPLES && !streaming {
                continue;
            }
            let detail = match rule {
                Violation::Disallowed => p
                    .disallowed
                    .and_then(|i| self.deciding_lines.get(i as usize))
                    .map_or_else(String::new, |line| line.to_string()),
                Violation::TooSoon => format!(
                    "{} after the previous request; the delay is {}",
                    crate::words::seconds(judged.gap_ms.unwrap_or(0), p.step.precision_ms),
                    crate::words::exact_seconds(p.step.delay_ms as i64)
                ),
                Violation::IgnoredRetryAfter => match &judged.window {
                    Some(w) => w.detail(p.step.millis),
                    None => "inside the Retry-After window of a 429 or 503".into(),
                },
                Violation::BeforeRobots => "no robots.txt read in the 24 h before".into(),
                Violation::WhileRobotsUnavailable => "while robots.txt answered 5xx or 429".into(),
                Violation::Spoofed => {
                    "failed its operator's check: not the crawler it names".into()
                }
            };
            let example = Example {
                rule,
                time: rfc3339(p.step.millis),
                host: self.hosts[host as usize].clone(),
                path: p.target.to_string(),
                status: p.step.status,
                client: p.client.map(|c| c.to_string()),
                detail,
            };
            if let (Some(f), true) = (&mut self.findings, streaming || rule == Violation::Spoofed) {
                f.push(Finding {
                    token: self.tokens[g.token as usize].0.clone(),
                    identity: g.identity,
                    address: g.address.map(|a| a.to_string()),
                    kind: self.token_kinds[g.token as usize],
                    example: example.clone(),
                });
            }
            if kept < MAX_EXAMPLES && rule != Violation::Spoofed {
                g.examples.push(example);
            }
        }
    }

    /// Keeps every finding from now on, for [`take_findings`](Self::take_findings)
    /// (a live follow prints each as it is judged).
    pub fn stream_findings(mut self) -> Self {
        self.findings = Some(Vec::new());
        self
    }

    /// The findings judged since the last call.
    pub fn take_findings(&mut self) -> Vec<Finding> {
        self.findings
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Tells the audit that every file has reached `now` (a live log's
    /// clock): requests older than the reordering window are judged
    /// without waiting for later lines.
    pub fn advance(&mut self, now: i64) {
        for (l, d) in self.latest.iter_mut().zip(&self.done) {
            if !*d {
                *l = (*l).max(now);
            }
        }
        self.drain(false);
    }

    /// Totals over a group's hosts.
    pub(crate) fn totals(g: &Group) -> Counts {
        let mut c = Counts::default();
        for pace in g.hosts.values() {
            c.add(&pace.counts);
        }
        c.bytes = g.bytes;
        c
    }
}

/// A stable order for requests logged at the same instant: by file,
/// then by line, whatever order the files were read in.
fn tiebreak(file: usize, line: u64) -> u64 {
    ((file as u64) << 40) | (line & ((1 << 40) - 1))
}

/// Whether a request's User-Agent names a page (an unlisted crawler's
/// published identity may then be checked).
fn names_a_page(entry: &Entry<'_>) -> bool {
    mannerly_robots::page_named(&entry.user_agent).is_some()
}

#[cfg(test)]
mod tests {
    /// A waiting request is moved through the time-order queue several
    /// times; up to 128 bytes the compiler moves it inline.
    #[test]
    fn a_waiting_request_fits_in_128_bytes() {
        assert!(std::mem::size_of::<super::Pending>() <= 128);
    }

    /// A browser client's record is read for every browser request, among
    /// millions: it stays within 48 bytes.
    #[test]
    fn a_browser_clients_record_fits_in_48_bytes() {
        assert!(std::mem::size_of::<crate::suspects::Client>() <= 48);
    }
}
