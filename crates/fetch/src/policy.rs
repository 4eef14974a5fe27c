//! The sans-IO policy: what a robots.txt fetch outcome means for an origin,
//! and for how long.
//!
//! [`OriginState::apply`] takes the outcome of one fetch (status, headers,
//! body, redirect chain, or a network error) and the current time, and
//! yields a [`Decision`]: the rules, allow-all or disallow-all, with an
//! expiry and a reason a person can read. Nothing here does I/O or reads a
//! clock; tests drive 12 hours and 30 days by passing later times.
//!
//! # The rules (RFC 9309 §2.3–2.4 and Google's documented handling)
//!
//! | outcome | decision |
//! |---|---|
//! | 2xx | the body's rules (even with a wrong Content-Type; an HTML page parses to nothing and is flagged) |
//! | 3xx | followed by the HTTP layer for up to 5 hops; the rules apply to the origin asked. More hops or a loop: unavailable |
//! | 4xx except 429 | unavailable: allow-all |
//! | 429, 5xx, network failure | unreachable; see the phases below |
//! | the crawler stalled mid-request ([`NetworkError::Stalled`]) | nothing counted against the site: asked again in a second, complete disallow meanwhile (or the failure run's phase) |
//!
//! Unreachable, `google` profile: complete disallow for the first 12 hours
//! of the failure run (retrying with backoff); then, up to 30 days after the
//! first failure, the last good copy if there is one (else still disallow);
//! after 30 days, allow-all if the site otherwise answers (the crawler
//! reports that with [`OriginState::note_host_answered`]), else disallow.
//!
//! Unreachable, `rfc9309` profile: complete disallow (§2.3.1.4); after 30
//! days the cached copy if there is one, else still disallow.
//!
//! Caching: at most 24 hours (configurable); `Cache-Control: max-age` or
//! `Expires` may shorten it; `no-store` keeps the copy out of persistent
//! storage and limits its use to [`PolicyConfig::min_ttl`]. A cached copy
//! outlives its expiry only while the origin is unreachable. Retries back
//! off exponentially with deterministic jitter and honour `Retry-After`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use mannerly_time::UnixMillis;

use mannerly_robots::{ParseOptions, Robots};
use sha2::Digest;

pub use crate::good_copy::{body_json, GoodCopy};
use crate::origin::Origin;
pub use crate::outcome::{FetchOutcome, Hop, HttpResponse, NetworkError};
use mannerly_time::parse_http_date;

/// How soon robots.txt is asked again after the crawler stalled mid-request.
const STALL_RETRY: Duration = Duration::from_secs(1);

/// Which rulebook to follow when robots.txt is unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Google's documented handling (the default).
    #[default]
    Google,
    /// RFC 9309 as written.
    Rfc9309,
}

/// Tunables of the policy. The defaults are the standards' numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyConfig {
    /// How the failure phases are read: Google's (12 hours, then 30 days) or RFC 9309's.
    pub profile: Profile,
    /// Longest a fetched robots.txt is used before refetching (24 h).
    pub max_ttl: Duration,
    /// Shortest: even `no-store` or `max-age=0` rules are used this long,
    /// so a crawler does not refetch robots.txt for every URL (60 s).
    pub min_ttl: Duration,
    /// Google: complete disallow this long into a failure run (12 h).
    pub disallow_phase: Duration,
    /// After this long unreachable, the fallbacks change (30 days).
    pub unreachable_horizon: Duration,
    /// First retry delay after a failure (1 min); doubles per attempt.
    pub backoff_base: Duration,
    /// Longest retry delay (1 h).
    pub backoff_max: Duration,
    /// Longest `Retry-After` honoured (24 h); longer values are capped.
    pub retry_after_cap: Duration,
    /// How recently the site must have answered another request for the
    /// 30-day fallback to allow (24 h).
    pub host_answer_window: Duration,
    /// How the body is parsed (mode and size limit).
    pub parse: ParseOptions,
    /// Fetch-history entries kept per origin (20).
    pub history_len: usize,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            profile: Profile::Google,
            max_ttl: Duration::from_secs(24 * 3600),
            min_ttl: Duration::from_secs(60),
            disallow_phase: Duration::from_secs(12 * 3600),
            unreachable_horizon: Duration::from_secs(30 * 24 * 3600),
            backoff_base: Duration::from_secs(60),
            backoff_max: Duration::from_secs(3600),
            retry_after_cap: Duration::from_secs(24 * 3600),
            host_answer_window: Duration::from_secs(24 * 3600),
            parse: ParseOptions::default(),
            history_len: 20,
        }
    }
}

/// What the crawler may do on the origin.
#[derive(Debug, Clone)]
pub enum Access {
    /// The parsed rules apply.
    Rules(Arc<Robots>),
    /// No usable robots.txt (4xx): everything is allowed.
    AllowAll,
    /// The site could not be asked (5xx, 429, network): nothing is allowed.
    DisallowAll,
}

impl Access {
    /// Which of the three it is, without the rules.
    pub fn kind(&self) -> AccessKind {
        match self {
            Access::Rules(_) => AccessKind::Rules,
            Access::AllowAll => AccessKind::AllowAll,
            Access::DisallowAll => AccessKind::DisallowAll,
        }
    }
}

/// What decides a URL, named: an [`Access`] without its rules, or the
/// robots.txt URL itself. Serialized (and displayed) as `rules`,
/// `allow-all`, `disallow-all` or `robots-txt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum AccessKind {
    /// The parsed rules apply.
    Rules,
    /// No usable robots.txt: everything is allowed.
    AllowAll,
    /// robots.txt is unavailable: nothing but robots.txt is allowed.
    DisallowAll,
    /// The URL is robots.txt itself, always allowed.
    RobotsTxt,
}

impl AccessKind {
    /// The word for it: `rules`, `allow-all`, `disallow-all`, `robots-txt`.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessKind::Rules => "rules",
            AccessKind::AllowAll => "allow-all",
            AccessKind::DisallowAll => "disallow-all",
            AccessKind::RobotsTxt => "robots-txt",
        }
    }
}

impl std::fmt::Display for AccessKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The origin's robots state at a point in time.
#[derive(Debug, Clone)]
pub struct Decision {
    /// What applies to the origin's URLs.
    pub access: Access,
    /// Until when this decision holds; after it the crawler refetches.
    pub expires_at: UnixMillis,
    /// Why, in words: e.g. `503 since 2026-11-20T10:00:00Z, phase 1 of 3:
    /// complete disallow`.
    pub reason: String,
    /// What it rests on: the file judged and its fetch.
    pub basis: Basis,
}

/// What a [`Decision`] rests on, for a crawler's record of it: the
/// robots.txt bytes its rules came from, when and with what status they
/// were fetched; for allow-all and disallow-all, the fetch that led there
/// (no bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Basis {
    /// SHA-256 of the robots.txt bytes judged (rules only).
    pub sha256: Option<[u8; 32]>,
    /// When they (or the fetch that failed) were fetched.
    pub fetched: Option<UnixMillis>,
    /// The status they came with (`None`: a network error, or not known).
    pub status: Option<u16>,
}

/// The current run of consecutive failures.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FailureRun {
    /// When the first failure of the run happened.
    pub since: UnixMillis,
    /// Attempts in this run so far.
    pub attempts: u32,
    /// The last failure, in words (`503`, `timed out`).
    pub last: String,
}

/// One line of an origin's fetch history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HistoryEntry {
    /// When.
    pub at: UnixMillis,
    /// What the fetch gave, for people.
    pub outcome: String,
    /// What was decided, for people.
    pub decision: String,
}

/// Everything remembered about one origin, and the state machine over it.
#[derive(Debug, Clone)]
pub struct OriginState {
    /// The origin.
    pub origin: Origin,
    /// The last good copy, kept for the failure phases that may use it.
    pub good: Option<GoodCopy>,
    /// The ongoing failure run, if the last fetch failed.
    pub failure: Option<FailureRun>,
    /// When the site last answered any request (for the 30-day rule).
    pub host_answered_at: Option<UnixMillis>,
    /// While unreachable: no refetch before this (backoff or Retry-After).
    pub retry_at: Option<UnixMillis>,
    /// The latest fetches, newest last (bounded).
    pub history: VecDeque<HistoryEntry>,
    /// The parsed good copy, kept so fallbacks need not re-parse.
    parsed: Option<Arc<Robots>>,
    decision: Option<Decision>,
    /// The `host_answered_at` the store holds, as far as this state knows
    /// (what it was restored with, or last saved with).
    answer_stored: Option<UnixMillis>,
}

/// The parts of an [`OriginState`] worth persisting (bodies served with
/// `no-store` are left out).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredState {
    /// The origin.
    pub origin: Origin,
    /// The last good copy (absent when it may not be stored: `no-store`).
    pub good: Option<GoodCopy>,
    /// The ongoing failure run.
    pub failure: Option<FailureRun>,
    /// When the site last answered any request.
    pub host_answered_at: Option<UnixMillis>,
    #[serde(default)]
    /// No refetch before this (backoff or Retry-After).
    pub retry_at: Option<UnixMillis>,
    /// The latest fetches.
    pub history: Vec<HistoryEntry>,
    /// When the stored decision expires.
    pub expires_at: Option<UnixMillis>,
}

impl OriginState {
    /// The state of an origin never fetched.
    pub fn new(origin: Origin) -> Self {
        OriginState {
            origin,
            good: None,
            failure: None,
            host_answered_at: None,
            retry_at: None,
            history: VecDeque::new(),
            parsed: None,
            decision: None,
            answer_stored: None,
        }
    }

    /// Restores a persisted state. The decision is recomputed on the next
    /// [`decision`](Self::decision) call, so a restored origin never acts on
    /// stale rules past their expiry.
    pub fn restore(stored: StoredState, config: &PolicyConfig) -> Self {
        let parsed = stored
            .good
            .as_ref()
            .map(|g| Arc::new(Robots::parse_with(&g.body, config.parse)));
        let mut s = OriginState {
            origin: stored.origin,
            good: stored.good,
            failure: stored.failure,
            host_answered_at: stored.host_answered_at,
            retry_at: stored.retry_at,
            history: stored.history.into(),
            parsed,
            decision: None,
            answer_stored: stored.host_answered_at,
        };
        if let Some(exp) = stored.expires_at {
            let last = s.history.back().map_or(exp, |h| h.at);
            let until = s.retry_at.unwrap_or(exp);
            let mut d = s.recompute(last, until, config);
            d.basis = s.basis(&d.access, s.history.back().map(|h| h.at), None);
            s.decision = Some(d);
        }
        s
    }

    /// What a decision giving `access` rests on: the good copy for rules,
    /// else the last fetch, made at `fetched` with `status`.
    fn basis(&self, access: &Access, fetched: Option<UnixMillis>, status: Option<u16>) -> Basis {
        match (access, &self.good) {
            (Access::Rules(_), Some(g)) => Basis {
                sha256: Some(sha2::Sha256::digest(&g.body).into()),
                fetched: Some(g.fetched_at),
                status: Some(g.status),
            },
            _ => Basis {
                sha256: None,
                fetched,
                status,
            },
        }
    }

    /// What to persist. A `no-store` copy is left out, and then so is the
    /// decision it made: restored without its body, the entry would read as
    /// "robots.txt was unavailable" (allow all) where the file may say
    /// `Disallow: /`. Such an origin is fetched again instead.
    pub fn to_stored(&self) -> StoredState {
        let unstored = self.good.as_ref().is_some_and(|g| g.no_store);
        StoredState {
            origin: self.origin.clone(),
            good: self.good.clone().filter(|g| !g.no_store),
            failure: self.failure.clone(),
            host_answered_at: self.host_answered_at,
            retry_at: self.retry_at,
            history: self.history.iter().cloned().collect(),
            expires_at: if unstored && self.failure.is_none() {
                None
            } else {
                self.decision.as_ref().map(|d| d.expires_at)
            },
        }
    }

    /// The current decision if it has not expired at `now`.
    pub fn decision(&self, now: UnixMillis) -> Option<&Decision> {
        self.decision.as_ref().filter(|d| now < d.expires_at)
    }

    /// When the current decision expired but a refetch is not yet due
    /// (the failure run's backoff or Retry-After is still running), the
    /// decision for `now`'s phase, without fetching. `None` when a fetch
    /// is due.
    pub fn reevaluate(&mut self, now: UnixMillis, config: &PolicyConfig) -> Option<&Decision> {
        let retry_at = self.retry_at.filter(|r| now < *r)?;
        self.failure.as_ref()?;
        let mut d = self.recompute(now, retry_at, config);
        let last = self
            .decision
            .as_ref()
            .map(|d| (d.basis.fetched, d.basis.status));
        d.basis = self.basis(&d.access, last.and_then(|l| l.0), last.and_then(|l| l.1));
        Some(self.decision.insert(d))
    }

    /// The last decision, expired or not.
    pub fn last_decision(&self) -> Option<&Decision> {
        self.decision.as_ref()
    }

    /// Validators for a conditional refresh (ETag, Last-Modified).
    pub fn validators(&self) -> Option<(Option<&str>, Option<&str>)> {
        self.good
            .as_ref()
            .map(|g| (g.etag.as_deref(), g.last_modified.as_deref()))
    }

    /// The crawler saw the site answer another request (any HTTP response
    /// other than 5xx or 429). Used by the 30-day fallback.
    pub fn note_host_answered(&mut self, now: UnixMillis) {
        self.host_answered_at = Some(now);
    }

    /// Whether the store's `host_answered_at` is worth bringing up to
    /// date at `now`: only a failure run reads it (the 30-day rule, which
    /// counts in days), so only while one is under way, and at most once a
    /// minute. While robots.txt answers, the time rides with the next save
    /// (the one of the fetch that starts a failure run included).
    pub fn answer_worth_saving(&self, now: UnixMillis) -> bool {
        self.failure.is_some()
            && self.host_answered_at != self.answer_stored
            && self
                .answer_stored
                .is_none_or(|t| now.millis_since(t) >= 60_000)
    }

    /// Records that the store now holds this state (its answer time
    /// included).
    pub fn saved(&mut self) {
        self.answer_stored = self.host_answered_at;
    }

    /// Applies one fetch outcome at `now` and returns the new decision.
    pub fn apply(
        &mut self,
        outcome: &FetchOutcome,
        now: UnixMillis,
        config: &PolicyConfig,
    ) -> &Decision {
        let (summary, mut decision) = self.decide(outcome, now, config);
        let status = match outcome {
            FetchOutcome::Response { response, .. } => Some(response.status),
            FetchOutcome::TooManyRedirects { redirects, .. } => redirects.last().map(|h| h.status),
            FetchOutcome::Network { .. } => None,
        };
        decision.basis = self.basis(&decision.access, Some(now), status);
        self.history.push_back(HistoryEntry {
            at: now,
            outcome: summary,
            decision: decision.reason.clone(),
        });
        while self.history.len() > config.history_len.max(1) {
            self.history.pop_front();
        }
        self.decision.insert(decision)
    }

    /// What an outcome makes of the origin: a response by its status, too
    /// many redirects (allow-all, as for a 404), or a network failure
    /// (unreachable). Returns the history's summary of the outcome too.
    fn decide(
        &mut self,
        outcome: &FetchOutcome,
        now: UnixMillis,
        config: &PolicyConfig,
    ) -> (String, Decision) {
        // Only an unreachable outcome sets it again.
        self.retry_at = None;
        match outcome {
            FetchOutcome::Response {
                response,
                redirects,
            } => {
                let summary = format!("{}{}", response.status, via(redirects));
                (summary, self.on_status(response, redirects, now, config))
            }
            FetchOutcome::TooManyRedirects { redirects, is_loop } => {
                let what = if *is_loop {
                    format!("redirect loop after {} hops", redirects.len())
                } else {
                    format!("more than {} redirects", redirects.len().saturating_sub(1))
                };
                (what.clone(), self.too_many_redirects(&what, now, config))
            }
            FetchOutcome::Network {
                error: NetworkError::Stalled,
                detail,
                ..
            } => {
                let what = NetworkError::Stalled.describe();
                (format!("{what}: {detail}"), self.stalled(what, now, config))
            }
            FetchOutcome::Network { error, detail, .. } => {
                let what = error.describe().to_owned();
                let summary = if detail.is_empty() {
                    what.clone()
                } else {
                    format!("{what}: {detail}")
                };
                (summary, self.unreachable(what, None, now, config))
            }
        }
    }

    /// A response, by its status (RFC 9309 §2.3.1.2 to §2.3.1.4).
    fn on_status(
        &mut self,
        response: &HttpResponse,
        redirects: &[Hop],
        now: UnixMillis,
        config: &PolicyConfig,
    ) -> Decision {
        let status = response.status;
        match status {
            200..=299 => self.success(response, redirects, now, config),
            304 => self.not_modified(response, now, config),
            300..=399 => {
                let what = format!(
                    "{status} redirect without a usable Location{}",
                    via(redirects)
                );
                self.unavailable(what, response, now, config)
            }
            429 | 500..=599 => {
                let retry_after = response
                    .header("retry-after")
                    .and_then(|v| parse_retry_after(v, now));
                self.unreachable(format!("{status}"), retry_after, now, config)
            }
            400..=499 => {
                self.unavailable(format!("{status}{}", via(redirects)), response, now, config)
            }
            _ => self.unreachable(format!("unexpected status {status}"), None, now, config),
        }
    }

    /// A 304 to a conditional request: the good copy still holds, for a new
    /// life; without one, the origin is unreachable.
    fn not_modified(
        &mut self,
        response: &HttpResponse,
        now: UnixMillis,
        config: &PolicyConfig,
    ) -> Decision {
        let (Some(mut good), Some(parsed)) = (self.good.clone(), self.parsed.clone()) else {
            return self.unreachable("304 without a cached copy".into(), None, now, config);
        };
        good.fetched_at = now;
        let ttl = ttl_from_headers(response, now, config);
        self.good = Some(good);
        self.failure = None;
        Decision {
            access: Access::Rules(parsed),
            basis: Basis::default(),
            expires_at: now + ttl,
            reason: format!(
                "304 Not Modified at {}: the cached robots.txt is still current; using it until {}",
                now,
                now + ttl
            ),
        }
    }

    /// Too many redirects (or a loop): robots.txt is unavailable, so
    /// everything is allowed, as for a 404 (RFC 9309 §2.3.1.2).
    fn too_many_redirects(
        &mut self,
        what: &str,
        now: UnixMillis,
        config: &PolicyConfig,
    ) -> Decision {
        self.allow_all(what, " (as if 404)", now, config.max_ttl)
    }

    fn success(
        &mut self,
        response: &HttpResponse,
        redirects: &[Hop],
        now: UnixMillis,
        config: &PolicyConfig,
    ) -> Decision {
        let robots = Arc::new(Robots::parse_with(&response.body, config.parse));
        let no_store = cache_directive(response, "no-store");
        let ttl = ttl_from_headers(response, now, config);
        self.good = Some(GoodCopy {
            body: response.body.clone(),
            fetched_at: now,
            status: response.status,
            etag: response.header("etag").map(str::to_owned),
            last_modified: response.header("last-modified").map(str::to_owned),
            no_store,
        });
        self.parsed = Some(robots.clone());
        self.failure = None;
        let mut notes = Vec::new();
        if !redirects.is_empty() {
            notes.push(format!(
                "via {} redirect(s) to {}",
                redirects.len(),
                response.url
            ));
        }
        if robots
            .diagnostics()
            .iter()
            .any(|d| d.code == mannerly_robots::codes::HTML_DOCUMENT)
        {
            notes.push("the body is an HTML page, not robots.txt: no rules found".into());
        }
        if robots.truncated() {
            notes.push(format!("cut at {} bytes", config.parse.max_bytes));
        }
        if no_store {
            notes.push("no-store: kept in memory only".into());
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        Decision {
            access: Access::Rules(robots.clone()),
            basis: Basis::default(),
            expires_at: now + ttl,
            reason: format!(
                "{} at {}: {} group(s), {} rule(s){notes}; valid until {}",
                response.status,
                now,
                robots.groups().len(),
                robots.rules().iter().filter(|r| !r.is_derived()).count(),
                now + ttl
            ),
        }
    }

    /// 4xx and unusable redirects: no robots.txt, so no restrictions.
    fn unavailable(
        &mut self,
        what: String,
        response: &HttpResponse,
        now: UnixMillis,
        config: &PolicyConfig,
    ) -> Decision {
        let ttl = ttl_from_headers(response, now, config);
        self.allow_all(&what, "", now, ttl)
    }

    /// No usable robots.txt: the good copy is forgotten and everything is
    /// allowed for `ttl`; `note` says why, after "allowed".
    fn allow_all(&mut self, what: &str, note: &str, now: UnixMillis, ttl: Duration) -> Decision {
        self.good = None;
        self.parsed = None;
        self.failure = None;
        Decision {
            access: Access::AllowAll,
            basis: Basis::default(),
            expires_at: now + ttl,
            reason: format!(
                "{what} at {now}: robots.txt is unavailable, so everything is allowed{note} until {}",
                now + ttl
            ),
        }
    }

    /// 429, 5xx and network failures.
    fn unreachable(
        &mut self,
        what: String,
        retry_after: Option<UnixMillis>,
        now: UnixMillis,
        config: &PolicyConfig,
    ) -> Decision {
        let run = self.failure.get_or_insert(FailureRun {
            since: now,
            attempts: 0,
            last: String::new(),
        });
        run.attempts = run.attempts.saturating_add(1);
        run.last = what;
        let attempts = run.attempts;
        let backoff = backoff(&self.origin, attempts, config);
        let retry_at = match retry_after {
            Some(t) => t
                .min(now + config.retry_after_cap)
                .max(now + Duration::from_secs(1)),
            None => now + backoff,
        };
        self.retry_at = Some(retry_at);
        self.recompute(now, retry_at, config)
    }

    /// The crawler stalled mid-request ([`NetworkError::Stalled`]): nothing
    /// was learnt of the site, so a failure run goes on as it was (no
    /// attempt counted) and none starts. robots.txt is asked again in a
    /// second; until then the run's phase applies, or, with no run,
    /// nothing may be fetched.
    fn stalled(&mut self, what: &str, now: UnixMillis, config: &PolicyConfig) -> Decision {
        let retry_at = now + STALL_RETRY;
        self.retry_at = Some(retry_at);
        if self.failure.is_some() {
            return self.recompute(now, retry_at, config);
        }
        Decision {
            access: Access::DisallowAll,
            basis: Basis::default(),
            expires_at: retry_at,
            reason: format!(
                "robots.txt not known yet ({what}: not counted against the site); next attempt at {retry_at}"
            ),
        }
    }

    /// The decision at `now` for the current failure run (or the restored
    /// good state), with the next refetch at `retry_at`. A failure decision
    /// expires at the next phase boundary or at `retry_at`, whichever comes
    /// first; at a boundary the cache re-evaluates without fetching.
    fn recompute(&self, now: UnixMillis, retry_at: UnixMillis, config: &PolicyConfig) -> Decision {
        let Some(run) = &self.failure else {
            return match &self.parsed {
                Some(p) => Decision {
                    access: Access::Rules(p.clone()),
                    basis: Basis::default(),
                    expires_at: retry_at,
                    reason: format!(
                        "restored copy fetched at {}",
                        self.good
                            .as_ref()
                            .map_or_else(String::new, |g| g.fetched_at.to_string())
                    ),
                },
                None => Decision {
                    access: Access::AllowAll,
                    basis: Basis::default(),
                    expires_at: retry_at,
                    reason: "restored: robots.txt was unavailable".into(),
                },
            };
        };
        let since = run.since;
        let head = format!("{} since {}", run.last, since);
        // The phase is judged at the time of the attempt being decided.
        let age = now.duration_since(since);
        let next = format!("next attempt at {}", retry_at);
        let copy = self
            .parsed
            .clone()
            .zip(self.good.as_ref().map(|g| g.fetched_at));
        match config.profile {
            Profile::Google => {
                if age < config.disallow_phase {
                    let phase_end = since + config.disallow_phase;
                    Decision {
                        access: Access::DisallowAll,
                        basis: Basis::default(),
                        expires_at: retry_at.min(phase_end),
                        reason: format!("{head}, phase 1 of 3: complete disallow ({next})"),
                    }
                } else if age < config.unreachable_horizon {
                    let phase_end = since + config.unreachable_horizon;
                    match copy {
                        Some((p, at)) => Decision {
                            access: Access::Rules(p),
                            basis: Basis::default(),
                            expires_at: retry_at.min(phase_end),
                            reason: format!("{head}, phase 2 of 3: using the last good copy, fetched at {} ({next})", at),
                        },
                        None => Decision {
                            access: Access::DisallowAll,
                            basis: Basis::default(),
                            expires_at: retry_at.min(phase_end),
                            reason: format!("{head}, phase 2 of 3: no good copy to fall back on, complete disallow ({next})"),
                        },
                    }
                } else {
                    let answered = self
                        .host_answered_at
                        .is_some_and(|t| t + config.host_answer_window >= now);
                    if answered {
                        Decision {
                            access: Access::AllowAll,
                            basis: Basis::default(),
                            expires_at: retry_at,
                            reason: format!("{head}, phase 3 of 3: unreachable for over 30 days while the site answers, so robots.txt is treated as absent: everything allowed ({next})"),
                        }
                    } else {
                        Decision {
                            access: Access::DisallowAll,
                            basis: Basis::default(),
                            expires_at: retry_at,
                            reason: format!("{head}, phase 3 of 3: unreachable for over 30 days and the site does not answer: complete disallow ({next})"),
                        }
                    }
                }
            }
            Profile::Rfc9309 => {
                if age < config.unreachable_horizon {
                    Decision {
                        access: Access::DisallowAll,
                        basis: Basis::default(),
                        expires_at: retry_at.min(since + config.unreachable_horizon),
                        reason: format!("{head}, phase 1 of 2: complete disallow while unreachable (RFC 9309 §2.3.1.4) ({next})"),
                    }
                } else {
                    match copy {
                        Some((p, at)) => Decision {
                            access: Access::Rules(p),
                            basis: Basis::default(),
                            expires_at: retry_at,
                            reason: format!("{head}, phase 2 of 2: unreachable for over 30 days, using the cached copy fetched at {} ({next})", at),
                        },
                        None => Decision {
                            access: Access::DisallowAll,
                            basis: Basis::default(),
                            expires_at: retry_at,
                            reason: format!("{head}, phase 2 of 2: unreachable for over 30 days and no cached copy: complete disallow ({next})"),
                        },
                    }
                }
            }
        }
    }
}

/// `Retry-After`: delta-seconds or an HTTP-date.
pub use mannerly_time::parse_retry_after;

fn cache_directive(response: &HttpResponse, directive: &str) -> bool {
    response.header("cache-control").is_some_and(|cc| {
        cc.split(',').any(|d| {
            d.trim()
                .split('=')
                .next()
                .is_some_and(|k| k.trim().eq_ignore_ascii_case(directive))
        })
    })
}

fn max_age(response: &HttpResponse) -> Option<Duration> {
    let cc = response.header("cache-control")?;
    cc.split(',').find_map(|d| {
        let (k, v) = d.trim().split_once('=')?;
        if k.trim().eq_ignore_ascii_case("max-age") {
            v.trim()
                .trim_matches('"')
                .parse::<u64>()
                .ok()
                .map(Duration::from_secs)
        } else {
            None
        }
    })
}

/// How long a response may be used: the maximum, shortened by
/// `Cache-Control: max-age` (less `Age`) or `Expires`, never below the
/// minimum; `no-store` and `no-cache` give the minimum.
pub fn ttl_from_headers(
    response: &HttpResponse,
    now: UnixMillis,
    config: &PolicyConfig,
) -> Duration {
    if cache_directive(response, "no-store") || cache_directive(response, "no-cache") {
        return config.min_ttl;
    }
    let age = response
        .header("age")
        .and_then(|a| a.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or_default();
    let fresh = match max_age(response) {
        Some(m) => Some(m.saturating_sub(age)),
        None => response.header("expires").map(|e| {
            let base = response
                .header("date")
                .and_then(parse_http_date)
                .unwrap_or(now);
            parse_http_date(e)
                .map(|t| t.duration_since(base))
                .unwrap_or(Duration::ZERO)
        }),
    };
    fresh
        .unwrap_or(config.max_ttl)
        .clamp(config.min_ttl, config.max_ttl.max(config.min_ttl))
}

/// Exponential backoff with deterministic jitter in [0.75, 1.25): the same
/// origin and attempt always wait the same, different origins spread out.
pub fn backoff(origin: &Origin, attempt: u32, config: &PolicyConfig) -> Duration {
    let exp = attempt.saturating_sub(1).min(30);
    let base = config
        .backoff_base
        .saturating_mul(1u32 << exp.min(20))
        .min(config.backoff_max);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in origin.to_string().bytes().chain(attempt.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    let jitter = 0.75 + (h % 1000) as f64 / 2000.0;
    base.mul_f64(jitter)
}

/// ` (after N redirects)`, or nothing without redirects.
fn via(redirects: &[Hop]) -> String {
    match redirects.len() {
        0 => String::new(),
        1 => " (after 1 redirect)".into(),
        n => format!(" (after {n} redirects)"),
    }
}
