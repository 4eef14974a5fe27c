//! `POST /api/whatif`: a log excerpt judged against the robots.txt in
//! force and against a draft, with `mannerly audit`'s own code: which
//! bots that really came, and how many of their requests, the draft would
//! newly refuse or allow. Each bot is judged under its own group in each
//! file, and each request's identity is checked as the audit checks it
//! when the server was given checks ([`SharedIdentify`]). A plain
//! function, as the rest of [`api`](crate::api).

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use mannerly_audit::{
    Auditor, Catalogue, Identify, Identity, Known, Options, ProposedReport, RobotsBook, Unchecked,
    Wants,
};
use mannerly_logs::Entry;
use serde::{Deserialize, Serialize};

use crate::api::BadRequest;

/// The largest log excerpt read, in bytes (10 MiB).
pub const MAX_LOG_BYTES: usize = 10 << 20;

/// Addresses one what-if request may have checked by reverse DNS, at
/// most (the answers are kept between requests, so a file's later pieces
/// check more). A bot's request from an address past this bound is never
/// called spoofed: unverified. Requests take turns with the checks, so
/// this also bounds how long one holds them: 256 lookups, 32 at a time,
/// each given 4 s, is 32 s with a resolver that never answers.
pub const MAX_CHECKED_ADDRESSES: usize = 256;

/// The identity checks a server's what-if answers use (the CLI gives the
/// audit's: the operators' published ranges, forward-confirmed reverse
/// DNS, Web Bot Auth keys). Requests take turns with them.
#[derive(Clone)]
pub struct SharedIdentify(Arc<Mutex<Box<dyn Identify + Send>>>);

impl SharedIdentify {
    /// Checks to share among requests.
    pub fn new(checks: Box<dyn Identify + Send>) -> SharedIdentify {
        SharedIdentify(Arc::new(Mutex::new(checks)))
    }
}

impl std::fmt::Debug for SharedIdentify {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedIdentify(..)")
    }
}

/// `POST /api/whatif`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhatIfRequest {
    /// The robots.txt in force.
    pub robots: String,
    /// The draft.
    pub after: String,
    /// Access-log lines, in any format `mannerly audit` reads.
    pub log: String,
}

/// Its answer.
#[derive(Debug, Clone, Serialize)]
pub struct WhatIfResponse {
    /// The log's format, as found.
    pub format: String,
    /// Lines read.
    pub lines: u64,
    /// Lines that are not requests in that format.
    pub unread: u64,
    /// Requests by bots.
    pub bot_requests: u64,
    /// Whether identities were checked (else every client is unverified).
    pub identity_checked: bool,
    /// Bot addresses past [`MAX_CHECKED_ADDRESSES`], left unverified
    /// rather than judged without their reverse-DNS check.
    pub addresses_not_checked: u64,
    /// What the draft would change.
    #[serde(flatten)]
    pub proposed: ProposedReport,
}

/// Judges the excerpt under both files, with `identify`'s checks if any.
pub fn whatif(
    req: &WhatIfRequest,
    identify: Option<&SharedIdentify>,
) -> Result<WhatIfResponse, BadRequest> {
    if req.log.len() > MAX_LOG_BYTES {
        return Err(BadRequest(format!(
            "`log` is {} bytes; at most {MAX_LOG_BYTES} are read",
            req.log.len()
        )));
    }
    let lines: Vec<&str> = req.log.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return Err(BadRequest(
            "`log` is empty: paste some access-log lines".into(),
        ));
    }
    let head: Vec<&str> = lines.iter().take(200).copied().collect();
    let mut parser = mannerly_logs::detect(&head).map_err(|e| BadRequest(format!("`log`: {e}")))?;
    let mut entries = Vec::new();
    let mut unread = 0;
    for line in &lines {
        match parser.parse(line) {
            Ok(Some(entry)) => entries.push(entry),
            Ok(None) => {}
            Err(_) => unread += 1,
        }
    }
    let (mut now, mut draft) = (RobotsBook::new(), RobotsBook::new());
    now.add(None, None, "in force".into(), req.robots.as_bytes());
    draft.add(None, None, "draft".into(), req.after.as_bytes());
    let options = Options {
        from_start: true,
        ..Options::default()
    };
    let mut auditor = Auditor::new(&now, Catalogue::builtin(), options, 1).with_proposed(&draft);
    let not_checked = match identify {
        Some(shared) => {
            // A poisoned lock held checks that are still whole: use them.
            let mut checks = shared.0.lock().unwrap_or_else(|p| p.into_inner());
            judge(&mut auditor, &entries, &mut **checks)
        }
        None => {
            for entry in &entries {
                auditor.feed(0, entry, &Unchecked);
            }
            0
        }
    };
    let report = auditor.finish();
    Ok(WhatIfResponse {
        format: parser.format().to_string(),
        lines: lines.len() as u64,
        unread,
        bot_requests: report.bots.iter().map(|b| b.counts.requests).sum(),
        identity_checked: identify.is_some(),
        addresses_not_checked: not_checked,
        proposed: report.proposed.unwrap_or(ProposedReport {
            newly_disallowed: 0,
            newly_allowed: 0,
            bots: Vec::new(),
        }),
    })
}

/// Feeds `entries` after `checks` gathered what they need (at most
/// [`MAX_CHECKED_ADDRESSES`] addresses); returns how many addresses were
/// past that bound.
fn judge(auditor: &mut Auditor<'_>, entries: &[Entry<'_>], checks: &mut dyn Identify) -> u64 {
    let mut wants = Wants::of(auditor, entries);
    let past: HashSet<IpAddr> = wants
        .addresses
        .iter()
        .skip(MAX_CHECKED_ADDRESSES)
        .map(|(_, ip)| *ip)
        .collect();
    wants.addresses.truncate(MAX_CHECKED_ADDRESSES);
    wants.prepare(checks);
    let bounded = Bounded {
        checks,
        past: &past,
    };
    for entry in entries {
        auditor.feed(0, entry, &bounded);
    }
    past.len() as u64
}

/// The checks, except that an address past the bound is never spoofed
/// (its reverse DNS, which could have confirmed it, was not asked).
struct Bounded<'a> {
    checks: &'a dyn Identify,
    past: &'a HashSet<IpAddr>,
}

impl Identify for Bounded<'_> {
    fn identify(&self, bot: Option<&Known>, entry: &Entry<'_>) -> Identity {
        let identity = self.checks.identify(bot, entry);
        let unasked = entry.client.is_some_and(|ip| self.past.contains(&ip));
        if identity == Identity::Spoofed && unasked && entry.signature.is_none() {
            Identity::Unverified
        } else {
            identity
        }
    }
}
