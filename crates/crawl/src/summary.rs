//! What a crawl tells of itself: how it ended ([`Ending`]), what it did
//! ([`Summary`], with a recrawl's [`RevisitCounts`]) and a snapshot for a
//! progress display ([`Progress`]). Plain data.

use std::collections::BTreeMap;

/// How a crawl ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Nothing was left to fetch.
    Done,
    /// Every URL left waits longer than `give_up_after`.
    GaveUp,
    /// `max_pages` was reached.
    MaxPages,
    /// Stopped from outside (Ctrl-C).
    Stopped,
}

impl Ending {
    /// Its word, as in JSON: `done`, `gave-up`, `max-pages`, `stopped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Done => "done",
            Ending::GaveUp => "gave-up",
            Ending::MaxPages => "max-pages",
            Ending::Stopped => "stopped",
        }
    }
}

/// What a crawl did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    /// How it ended.
    pub ending: Ending,
    /// Page responses by status.
    pub pages_by_status: BTreeMap<u16, u64>,
    /// Page fetches that got no response.
    pub page_errors: u64,
    /// robots.txt requests made.
    pub robots_requests: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// URLs not fetched, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Retries scheduled.
    pub retries: u64,
    /// URLs still queued at the end (deferred: they stay in the store).
    pub deferred: u64,
    /// Deferred URLs by what holds them back (when the crawl gave up on
    /// them; each is in the log with its host's full reason).
    pub deferred_by_reason: BTreeMap<String, u64>,
    /// Origins whose robots.txt was unavailable at the end, with why.
    pub unavailable: BTreeMap<String, String>,
    /// Hosts that answered.
    pub hosts: u64,
    /// Entries read from sitemaps.
    pub sitemap_entries: u64,
    /// WARC records written.
    pub warc_records: u64,
    /// Seconds the crawl ran.
    pub seconds: f64,
    /// The crawl's evidence (`null` when it kept none).
    pub evidence: Option<EvidenceCounts>,
    /// Path prefixes not crawled past a login (a 401, a 403 with
    /// `WWW-Authenticate`, a login form), with why and where it was seen.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub login_walls: BTreeMap<String, String>,
    /// Pages against an earlier crawl's (a recrawl), at the top level of
    /// the summary's JSON.
    #[serde(flatten)]
    pub revisits: RevisitCounts,
}

/// What the crawl's evidence holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct EvidenceCounts {
    /// Records written, in this run and before.
    pub records: u64,
    /// The key checkpoints are signed with (its `keyid`), `null` when
    /// they are unsigned.
    pub keyid: Option<String>,
}

/// Pages of a recrawl against the earlier crawl's.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RevisitCounts {
    /// Answered 304 to a conditional request.
    pub not_modified: u64,
    /// Answered 200 with the payload stored before.
    pub unchanged: u64,
    /// Answered 200 with another payload.
    pub changed: u64,
    /// Not in the earlier crawl.
    pub new: u64,
    /// Not requested: its sitemap lastmod had not moved, on a host whose
    /// lastmod is believed.
    pub skipped_by_lastmod: u64,
    /// Not requested: still fresh by its own `Cache-Control` or `Expires`.
    #[serde(default)]
    pub fresh_in_cache: u64,
    /// Hosts whose sitemap lastmod is no longer believed.
    pub lastmod_untrusted_hosts: Vec<String>,
}

/// A snapshot for a progress display.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Pages fetched.
    pub pages: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Requests in flight.
    pub in_flight: usize,
    /// URLs queued.
    pub queued: u64,
    /// Fetch errors.
    pub errors: u64,
    /// Seconds since the start.
    pub seconds: f64,
    /// Origins whose robots.txt is unavailable (their pages wait).
    pub hosts_blocked: usize,
    /// The first of those origins (in order), with why its robots.txt is
    /// unavailable and when it is tried again: what a display says when
    /// the crawl has nothing in flight and only waits.
    pub first_blocked: Option<(String, String)>,
}

impl Summary {
    pub(crate) fn new() -> Summary {
        Summary {
            ending: Ending::Done,
            pages_by_status: BTreeMap::new(),
            page_errors: 0,
            robots_requests: 0,
            bytes: 0,
            skipped: BTreeMap::new(),
            retries: 0,
            deferred: 0,
            deferred_by_reason: BTreeMap::new(),
            unavailable: BTreeMap::new(),
            hosts: 0,
            sitemap_entries: 0,
            warc_records: 0,
            seconds: 0.0,
            evidence: None,
            login_walls: BTreeMap::new(),
            revisits: RevisitCounts::default(),
        }
    }
}
