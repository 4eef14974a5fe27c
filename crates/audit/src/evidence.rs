//! A crawler's evidence (`mannerly-evidence` bundles) against the site's
//! own log: each logged request of the bot matched to a record with the
//! same method and target, sent within the log's precision plus a skew.
//! What is left over on the log's side was made in the crawler's name by
//! someone else; what is left on the records' side never reached the
//! log. A record's robots.txt digest is checked against the version in
//! force when it was fetched, and its claimed gap against the log's.

use std::collections::HashMap;

use mannerly_evidence::{verify, Bundle, DelaySource, Record};
use serde::Serialize;

use crate::book::RobotsBook;

/// SHA-256 of no bytes.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Examples kept per kind of finding.
pub const MAX_EVIDENCE_EXAMPLES: usize = 10;

/// How the bundles of one bot stood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BundleState {
    /// Every bundle verified, every checkpoint signed.
    Signed,
    /// Every bundle verified; some checkpoints unsigned.
    Unsigned,
    /// A bundle was refused: its records cannot be trusted.
    Invalid,
}

/// What an evidence example shows; its word (`snake_case`) is the JSON's
/// and the report's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EvidenceFinding {
    /// A request in the crawler's name it has no record of.
    LoggedNotInEvidence,
    /// A record of a request the log does not show.
    EvidenceNotInLog,
    /// A robots.txt the crawler used that is not the one the site served.
    RobotsMismatch,
    /// A claimed gap the log contradicts.
    GapMismatch,
    /// A request sooner than the Retry-After the crawler was given.
    RetryAfter,
    /// A request in the crawler's name outside its bundles' time.
    OutsideEvidence,
}

impl EvidenceFinding {
    /// Its word.
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceFinding::LoggedNotInEvidence => "logged_not_in_evidence",
            EvidenceFinding::EvidenceNotInLog => "evidence_not_in_log",
            EvidenceFinding::RobotsMismatch => "robots_mismatch",
            EvidenceFinding::GapMismatch => "gap_mismatch",
            EvidenceFinding::RetryAfter => "retry_after",
            EvidenceFinding::OutsideEvidence => "outside_evidence",
        }
    }
}

impl std::fmt::Display for EvidenceFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding, described.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvidenceExample {
    /// What it shows.
    pub kind: EvidenceFinding,
    /// When (RFC 3339).
    pub time: String,
    /// The host.
    pub host: String,
    /// Method and target.
    pub request: String,
    /// What was found.
    pub detail: String,
}

/// A bot's evidence, checked against the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvidenceReport {
    /// How its bundles stood.
    pub bundle: BundleState,
    /// Bundles given.
    pub bundles: u64,
    /// Why bundles were refused.
    pub refused: Vec<String>,
    /// The hosts the bundles are of.
    pub hosts: Vec<String>,
    /// Records in them.
    pub records: u64,
    /// Logged requests matched to a record.
    pub matched: u64,
    /// Logged requests in its name with no record: someone else's.
    pub logged_not_in_evidence: u64,
    /// Logged requests in its name outside the time its bundles cover:
    /// not checked either way.
    pub outside_evidence: u64,
    /// Records of requests the log does not show (within its span).
    pub evidence_not_in_log: u64,
    /// Records whose robots.txt digest is not the version in force then.
    pub robots_mismatch: u64,
    /// Records claiming a gap the log contradicts.
    pub gap_mismatch: u64,
    /// Records that waited out a Retry-After the log does not record:
    /// the crawler's value beside the audit's assumption.
    pub retry_after_noted: u64,
    /// Some findings, up to ten of each kind.
    pub examples: Vec<EvidenceExample>,
}

impl EvidenceReport {
    /// Whether it shows nothing wrong.
    pub fn is_clean(&self) -> bool {
        self.bundle != BundleState::Invalid
            && self.logged_not_in_evidence
                + self.evidence_not_in_log
                + self.robots_mismatch
                + self.gap_mismatch
                == 0
    }
}

/// One bot's bundles, read and verified, waiting for its logged requests.
pub(crate) struct BotEvidence {
    /// The product token the records' User-Agent carries, lower-case.
    pub(crate) token: String,
    records: Vec<Record>,
    bundles: u64,
    refused: Vec<String>,
    signed: bool,
    hosts: Vec<String>,
    pub(crate) logged: Vec<Logged>,
    /// The records' times by (method, target), sorted, and the time they
    /// span: built when the audit starts, to tell a request the evidence
    /// disproves as it is fed.
    index: HashMap<(String, String), Vec<i64>>,
    span: Option<(i64, i64)>,
    /// Per host, the records' times and, for a request that waited out a
    /// Retry-After, the wait in milliseconds; sorted by time.
    waits: HashMap<String, Vec<(i64, Option<i64>)>>,
}

impl BotEvidence {
    /// Builds the index of the records' requests.
    pub(crate) fn index(&mut self) {
        for r in &self.records {
            let Some(t) = r.millis().and_then(|m| i64::try_from(m).ok()) else {
                continue;
            };
            self.span = Some(self.span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
            self.index
                .entry((r.method.clone(), r.target().to_owned()))
                .or_default()
                .push(t);
            let wait = (r.delay.source == DelaySource::RetryAfter)
                .then_some((r.delay.required_s * 1000.0) as i64);
            self.waits.entry(key(&r.host)).or_default().push((t, wait));
        }
        self.index.values_mut().for_each(|v| v.sort_unstable());
        self.waits.values_mut().for_each(|v| v.sort_unstable());
    }

    /// The Retry-After the crawler recorded being given by a 429 or 503
    /// logged at `millis` on `host`: the wait its next request there kept,
    /// when that request says it waited out a Retry-After.
    pub(crate) fn recorded_retry_after(
        &self,
        host: Option<&str>,
        millis: i64,
        window: i64,
    ) -> Option<i64> {
        let list = self.waits.get(&key(host?))?;
        // The request's own record: the nearest in time within the window;
        // the one after it is the crawler's next request to the host.
        let from = list.partition_point(|(t, _)| *t < millis - window);
        let to = list.partition_point(|(t, _)| *t <= millis + window);
        let own = (from..to).min_by_key(|i| (list[*i].0 - millis).abs())?;
        list.get(own + 1).and_then(|(_, wait)| *wait)
    }

    /// Whether the evidence disproves a logged request in the crawler's
    /// name: inside the time its records cover, no record of that request
    /// within `window` of it. Such a request is someone else's.
    pub(crate) fn disproves(&self, method: &str, target: &str, millis: i64, window: i64) -> bool {
        if !self.signed_and_whole() {
            return false;
        }
        let Some((a, b)) = self.span else {
            return false;
        };
        if millis < a - window || millis > b + window {
            return false;
        }
        let method = if method.is_empty() { "GET" } else { method };
        let Some(times) = self.index.get(&(method.to_owned(), target.to_owned())) else {
            return true;
        };
        let from = times.partition_point(|t| *t < millis - window);
        times.get(from).is_none_or(|t| *t > millis + window)
    }

    /// Whether its bundles are signed and verified: only such evidence
    /// may take a request from the crawler's name.
    fn signed_and_whole(&self) -> bool {
        self.signed && self.refused.is_empty()
    }
}

/// A logged request of a bot with evidence.
#[derive(Debug, Clone)]
pub(crate) struct Logged {
    pub(crate) millis: i64,
    pub(crate) precision_ms: u32,
    pub(crate) method: Box<str>,
    pub(crate) target: Box<str>,
    pub(crate) host: Option<Box<str>>,
    pub(crate) status: Option<u16>,
    pub(crate) retry_after_logged: bool,
}

/// Bundles by bot: each bundle verified and its records grouped under
/// the product token of their User-Agent.
pub fn group_bundles(bundles: Vec<Bundle>) -> Vec<BotEvidenceInput> {
    let mut by_token: Vec<BotEvidenceInput> = Vec::new();
    for b in bundles {
        let verdict = verify(&b, None);
        let records = b.parsed().unwrap_or_default();
        let token = records
            .first()
            .map(|r| crate::agents::product_token(&r.user_agent).to_ascii_lowercase())
            .unwrap_or_default();
        let i = match by_token.iter().position(|e| e.0.token == token) {
            Some(i) => i,
            None => {
                by_token.push(BotEvidenceInput(BotEvidence {
                    token,
                    records: Vec::new(),
                    bundles: 0,
                    refused: Vec::new(),
                    signed: true,
                    hosts: Vec::new(),
                    logged: Vec::new(),
                    index: HashMap::new(),
                    span: None,
                    waits: HashMap::new(),
                }));
                by_token.len() - 1
            }
        };
        let e = &mut by_token[i].0;
        e.bundles += 1;
        match verdict {
            Ok(v) => e.signed &= v.signed,
            Err(why) => e.refused.push(format!("{}: {why}", b.host)),
        }
        if !e.hosts.contains(&b.host) {
            e.hosts.push(b.host.clone());
        }
        e.records.extend(records);
    }
    by_token
}

/// One bot's evidence, as [`group_bundles`] gives it to an audit.
pub struct BotEvidenceInput(pub(crate) BotEvidence);

impl BotEvidenceInput {
    /// The product token the bundles' User-Agent carries.
    pub fn token(&self) -> &str {
        &self.0.token
    }
}

/// How far apart in time a record and a logged line may be.
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    /// The clocks' skew and the time a request takes (2 s by default).
    pub skew_ms: i64,
    /// What the audit assumes a Retry-After was, when the log lacks it.
    pub assumed_retry_after_ms: i64,
}

/// A host as the log's lines name it ([`mannerly_logs::host_key`]): a
/// record's `[::1]:8080` and a line's `::1` are one host.
fn key(h: &str) -> String {
    mannerly_logs::host_key(h).map_or_else(String::new, std::borrow::Cow::into_owned)
}

fn same_host(logged: Option<&str>, record: &str) -> bool {
    logged.is_none_or(|l| key(l) == key(record))
}

/// Checks a bot's records against its logged requests.
pub(crate) fn compare(e: BotEvidence, book: &RobotsBook, tol: Tolerance) -> EvidenceReport {
    let mut out = EvidenceReport {
        bundle: match (e.refused.is_empty(), e.signed) {
            (false, _) => BundleState::Invalid,
            (true, true) => BundleState::Signed,
            (true, false) => BundleState::Unsigned,
        },
        bundles: e.bundles,
        refused: e.refused,
        hosts: e.hosts,
        records: e.records.len() as u64,
        matched: 0,
        logged_not_in_evidence: 0,
        outside_evidence: 0,
        evidence_not_in_log: 0,
        robots_mismatch: 0,
        gap_mismatch: 0,
        retry_after_noted: 0,
        examples: Vec::new(),
    };
    let records: Vec<(i64, &Record)> = e
        .records
        .iter()
        .filter_map(|r| Some((i64::try_from(r.millis()?).ok()?, r)))
        .collect();
    let mut logged = e.logged;
    logged.sort_by_key(|l| l.millis);
    let matched = match_both(&records, &logged, tol, &mut out);
    check_robots(&records, book, &mut out);
    check_gaps(&records, &logged, &matched, tol, &mut out);
    out
}

fn example(
    out: &mut EvidenceReport,
    kind: EvidenceFinding,
    time: i64,
    host: &str,
    request: String,
    detail: String,
) {
    if out.examples.iter().filter(|x| x.kind == kind).count() < MAX_EVIDENCE_EXAMPLES {
        out.examples.push(EvidenceExample {
            kind,
            time: mannerly_time::UnixMillis(u64::try_from(time).unwrap_or(0)).to_rfc3339_millis(),
            host: host.to_owned(),
            request,
            detail,
        });
    }
}

/// Matches logged requests to records; returns, per record, the logged
/// line it matched.
fn match_both(
    records: &[(i64, &Record)],
    logged: &[Logged],
    tol: Tolerance,
    out: &mut EvidenceReport,
) -> Vec<Option<usize>> {
    let mut by_request: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, (_, r)) in records.iter().enumerate() {
        by_request
            .entry((r.method.as_str(), r.target()))
            .or_default()
            .push(i);
    }
    for list in by_request.values_mut() {
        list.sort_by_key(|i| records[*i].0);
    }
    // The time the records cover, per host and over all.
    let mut spans: HashMap<String, (i64, i64)> = HashMap::new();
    for (t, r) in records {
        let s = spans.entry(key(&r.host)).or_insert((*t, *t));
        *s = (s.0.min(*t), s.1.max(*t));
    }
    let all = spans.values().fold(None, |acc: Option<(i64, i64)>, s| {
        Some(acc.map_or(*s, |a| (a.0.min(s.0), a.1.max(s.1))))
    });
    let span = |host: Option<&str>| match host {
        None => all,
        Some(h) => spans.get(&key(h)).copied(),
    };
    let mut matched: Vec<Option<usize>> = vec![None; records.len()];
    for (li, l) in logged.iter().enumerate() {
        let window = i64::from(l.precision_ms) + tol.skew_ms;
        // The earliest unmatched record in the window (the lists are in
        // time order, so the search starts at the window's start).
        let found = by_request.get(&(&*l.method, &*l.target)).and_then(|list| {
            let from = list.partition_point(|i| records[*i].0 < l.millis - window);
            list[from..]
                .iter()
                .copied()
                .take_while(|i| records[*i].0 <= l.millis + window)
                .find(|i| {
                    matched[*i].is_none() && same_host(l.host.as_deref(), &records[*i].1.host)
                })
        });
        match found {
            Some(i) => {
                matched[i] = Some(li);
                out.matched += 1;
            }
            None => {
                // Only within the time the bundles cover.
                let covered = span(l.host.as_deref())
                    .is_some_and(|(a, b)| l.millis >= a - window && l.millis <= b + window);
                let (finding, detail) = if covered {
                    out.logged_not_in_evidence += 1;
                    let detail = format!("no record of it within {:.1} s: a request in the crawler's name it did not make", window as f64 / 1000.0);
                    (EvidenceFinding::LoggedNotInEvidence, detail)
                } else {
                    out.outside_evidence += 1;
                    let detail = "outside the time its bundles cover: not checked".to_owned();
                    (EvidenceFinding::OutsideEvidence, detail)
                };
                example(
                    out,
                    finding,
                    l.millis,
                    l.host.as_deref().unwrap_or("-"),
                    format!("{} {}", l.method, l.target),
                    detail,
                );
            }
        }
    }
    let log_span = logged
        .first()
        .map(|f| f.millis)
        .zip(logged.last().map(|l| l.millis));
    for (i, (t, r)) in records.iter().enumerate() {
        let inside = log_span.is_some_and(|(a, b)| *t >= a - tol.skew_ms && *t <= b + tol.skew_ms);
        if matched[i].is_none() && inside {
            out.evidence_not_in_log += 1;
            let detail = format!(
                "record {} seq {}: the log has no such request",
                r.chain, r.seq
            );
            example(
                out,
                EvidenceFinding::EvidenceNotInLog,
                *t,
                &r.host,
                format!("{} {}", r.method, r.target()),
                detail,
            );
        }
    }
    matched
}

/// Each record's robots.txt digest against the version in force when it
/// was fetched (when the audit was given versions).
fn check_robots(records: &[(i64, &Record)], book: &RobotsBook, out: &mut EvidenceReport) {
    if book.is_empty() {
        return;
    }
    for (t, r) in records {
        let Some(used) = &r.robots else { continue };
        let Some(fetched) = used
            .fetched
            .as_deref()
            .and_then(mannerly_time::UnixMillis::parse_rfc3339_millis)
        else {
            continue;
        };
        let Some((_, version)) = book.at(&key(&r.host), fetched.0 as i64) else {
            continue;
        };
        // A version of no bytes stands for no file (as the audit's
        // `--robots HOST=FILE` gives an empty file for a host with none).
        let same = match used.sha256.as_deref() {
            Some(d) => d == version.sha256,
            None => version.sha256 == EMPTY_SHA256,
        };
        if same {
            continue;
        }
        out.robots_mismatch += 1;
        let detail = format!(
            "judged by a robots.txt with sha256 {} fetched {}; the version in force then ({}) has {}",
            used.sha256.as_deref().unwrap_or("none (no file)"),
            used.fetched.as_deref().unwrap_or("-"),
            version.source,
            version.sha256
        );
        example(
            out,
            EvidenceFinding::RobotsMismatch,
            *t,
            &r.host,
            format!("{} {}", r.method, r.target()),
            detail,
        );
    }
}

/// Claimed gaps against the log's, between consecutive matched records of
/// a host; and Retry-After values the log did not record.
fn check_gaps(
    records: &[(i64, &Record)],
    logged: &[Logged],
    matched: &[Option<usize>],
    tol: Tolerance,
    out: &mut EvidenceReport,
) {
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by(|a, b| {
        (&records[*a].1.host, records[*a].0).cmp(&(&records[*b].1.host, records[*b].0))
    });
    for pair in order.windows(2) {
        let (p, r) = (pair[0], pair[1]);
        let (rec_p, rec) = (records[p].1, records[r].1);
        if rec_p.host != rec.host {
            continue;
        }
        let (Some(lp), Some(lr)) = (
            matched[p].map(|i| &logged[i]),
            matched[r].map(|i| &logged[i]),
        ) else {
            continue;
        };
        let request = format!("{} {}", rec.method, rec.target());
        if let Some(claimed) = rec.delay.since_previous_s {
            let shown = lr.millis - lp.millis;
            let slack = i64::from(lr.precision_ms.max(lp.precision_ms)) + tol.skew_ms;
            if (shown as f64) + (slack as f64) < claimed * 1000.0 {
                out.gap_mismatch += 1;
                let detail = format!(
                    "the record says {claimed:.3} s after the previous request; the log shows {:.3} s",
                    shown as f64 / 1000.0
                );
                example(
                    out,
                    EvidenceFinding::GapMismatch,
                    records[r].0,
                    &rec.host,
                    request.clone(),
                    detail,
                );
            }
        }
        if rec.delay.source == DelaySource::RetryAfter
            && matches!(lp.status, Some(429 | 503))
            && !lp.retry_after_logged
        {
            out.retry_after_noted += 1;
            let detail = format!(
                "the log does not record the Retry-After of the {} before it; the crawler kept {:.3} s, the audit assumed {:.0} s",
                lp.status.unwrap_or(0),
                rec.delay.required_s,
                tol.assumed_retry_after_ms as f64 / 1000.0
            );
            example(
                out,
                EvidenceFinding::RetryAfter,
                records[r].0,
                &rec.host,
                request,
                detail,
            );
        }
    }
}

impl EvidenceReport {
    /// What it found, in words.
    pub fn summary(&self) -> String {
        let how = match self.bundle {
            BundleState::Signed => "signed and intact".to_owned(),
            BundleState::Unsigned => {
                "intact but UNSIGNED (nothing ties them to the crawler)".to_owned()
            }
            BundleState::Invalid => format!("REFUSED ({})", self.refused.join("; ")),
        };
        let mut parts = vec![format!(
            "{} for {}, {how}: {}, {} of the log's requests matched",
            crate::words::plural(self.bundles, "bundle", "bundles"),
            self.hosts.join(", "),
            crate::words::plural(self.records, "record", "records"),
            self.matched
        )];
        // (count, its noun singular and plural, what follows it)
        let found = [
            (
                self.logged_not_in_evidence,
                ("logged request", "logged requests"),
                "in its name it never recorded (someone else's)",
            ),
            (
                self.evidence_not_in_log,
                ("recorded request", "recorded requests"),
                "the log does not show",
            ),
            (
                self.robots_mismatch,
                ("record", "records"),
                "judged by a robots.txt the site did not have in force",
            ),
            (
                self.gap_mismatch,
                ("claimed gap", "claimed gaps"),
                "the log contradicts",
            ),
            (
                self.outside_evidence,
                ("logged request", "logged requests"),
                "in its name outside the time its bundles cover (not checked)",
            ),
            (
                self.retry_after_noted,
                ("Retry-After wait", "Retry-After waits"),
                "the log did not record (the crawler's value shown)",
            ),
        ];
        for (n, (one, many), what) in found {
            if n > 0 {
                parts.push(format!("{} {what}", crate::words::plural(n, one, many)));
            }
        }
        if self.is_clean() && self.outside_evidence == 0 {
            parts.push("every request matched both ways".into());
        } else if self.is_clean() {
            parts.push("every request inside the bundles' time matched both ways".into());
        }
        parts.join("; ")
    }
}
