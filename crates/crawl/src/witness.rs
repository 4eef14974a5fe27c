//! The crawl's evidence of its own conduct (see `mannerly-evidence`):
//! a record of every request, appended before the request is sent, with
//! the robots.txt judged by, the deciding line and the delay kept; and a
//! checkpoint at least once a minute, when the crawl opens, and at its
//! end, signed with the crawl's Web Bot Auth key when it has one.
//!
//! Pages are recorded by the loop as it releases them ([`Witness::page`]),
//! and a batch's records are written together ([`Witness::flush`]) before
//! any of its pages is sent.
//! robots.txt and its redirect hops are sent from inside the robots.txt
//! cache's fetch, so the fetcher calls [`Witness`] (as a
//! [`mannerly_fetch::SendHook`]) just before each one; the loop tells it
//! beforehand the delay each robots.txt request was held to
//! ([`Witness::expect`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mannerly_evidence::{
    seconds, Decision as Decided, Delay, DelaySource, EvidenceLog, Kind, PublicKey, Record,
    RobotsState, RobotsUsed, Signer,
};
use mannerly_fetch::policy::{Access, Decision};
use mannerly_fetch::CheckResult;
use mannerly_polite::controller::Pace;
use mannerly_time::UnixMillis;

use crate::config::CrawlConfig;
use crate::dir::CrawlDir;
use crate::error::CrawlError;

/// robots.txt lines waiting for their WARC record, at most.
const MAX_PENDING_LINES: usize = 4096;

/// The crawl's Web Bot Auth key, signing checkpoints.
struct Key(mannerly_botauth::KeyPair);

impl Signer for Key {
    fn public_key(&self) -> PublicKey {
        let jwk = self.0.public_jwk();
        PublicKey {
            kty: jwk.kty,
            crv: jwk.crv,
            x: jwk.x,
        }
    }

    fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign_bytes(message)
    }
}

/// What the loop knew of a page when it let it go: for its record.
pub(crate) struct Judged {
    /// The robots.txt used.
    pub(crate) robots: RobotsUsed,
    /// What it decided.
    pub(crate) decision: Decided,
    /// The AIPREF Content-Usage rule, as text, when one applies.
    pub(crate) usage: Option<String>,
}

impl Judged {
    /// From the robots.txt cache's answer for a page.
    pub(crate) fn of(check: &CheckResult, decision: &Decision, usage: Option<String>) -> Judged {
        let (state, why) = match &decision.access {
            Access::Rules(_) => (RobotsState::Parsed, None),
            Access::AllowAll => (RobotsState::AllowAll, Some(decision.reason.clone())),
            Access::DisallowAll => (RobotsState::DisallowAll, Some(decision.reason.clone())),
        };
        let basis = &decision.basis;
        Judged {
            robots: RobotsUsed {
                url: [check.origin.as_str(), "/robots.txt"].concat(),
                sha256: basis.sha256.map(|h| mannerly_evidence::chain::hex(&h)),
                fetched: basis.fetched.map(UnixMillis::to_rfc3339_millis),
                status: basis.status,
                state,
                why,
            },
            decision: Decided {
                allowed: check.allowed,
                line: check.rule.as_ref().map(|r| r.line),
                rule: check
                    .rule
                    .as_ref()
                    .map(|r| [r.kind.directive(), ": ", &r.pattern].concat()),
            },
            usage,
        }
    }
}

/// The crawl's evidence log, shared by the loop and the robots.txt
/// fetcher.
pub(crate) struct Witness {
    log: Mutex<EvidenceLog>,
    user_agent: String,
    keyid: Option<String>,
    /// The delay each robots.txt request about to go out was held to, by
    /// URL (told by the loop before the request can leave).
    expected: Mutex<HashMap<String, Delay>>,
    /// Lines written for robots.txt requests, by URL, for their WARC
    /// records.
    lines: Mutex<HashMap<String, Vec<u8>>>,
    /// The gap a redirect hop within one host keeps.
    hop_gap_ms: u64,
}

impl Witness {
    /// Opens the crawl's evidence (`None` when the crawl keeps none),
    /// writing a checkpoint over what an earlier run of it left.
    pub(crate) fn open(
        dir: &CrawlDir,
        config: &CrawlConfig,
    ) -> Result<Option<Arc<Witness>>, CrawlError> {
        if !config.evidence {
            return Ok(None);
        }
        let signer = config
            .signing
            .as_ref()
            .map(|(k, _)| Arc::new(Key(k.clone())) as Arc<dyn Signer>);
        let agent = config.signing.as_ref().map(|(_, a)| a.clone());
        let keyid = config.signing.as_ref().map(|(k, _)| k.keyid());
        let mut log = EvidenceLog::open(&dir.evidence(), signer, agent)?;
        log.checkpoint(UnixMillis::now(), true)?;
        Ok(Some(Arc::new(Witness {
            log: Mutex::new(log),
            user_agent: config.user_agent.clone(),
            keyid,
            expected: Mutex::new(HashMap::new()),
            lines: Mutex::new(HashMap::new()),
            hop_gap_ms: config.min_delay.as_millis() as u64,
        })))
    }

    fn append(&self, record: Record) -> Result<Vec<u8>, CrawlError> {
        let mut log = self.log.lock().map_err(|_| CrawlError::EvidencePoisoned)?;
        Ok(log.append(record)?)
    }

    fn base(&self, url: &str, kind: Kind, now: UnixMillis, delay: Delay) -> Record {
        Record {
            time: now.to_rfc3339_millis(),
            url: url.to_owned(),
            host: crate::normalize::host_of(url),
            kind,
            user_agent: self.user_agent.clone(),
            keyid: self.keyid.clone(),
            delay,
            ..Record::blank()
        }
    }

    /// Records a page (or sitemap) about to be sent; returns the line.
    /// The record is held: the page may be sent only after [`flush`](Self::flush).
    pub(crate) fn page(
        &self,
        url: &str,
        sitemap: bool,
        judged: Judged,
        pace: Pace,
    ) -> Result<Vec<u8>, CrawlError> {
        let now = UnixMillis::now();
        let kind = if sitemap { Kind::Sitemap } else { Kind::Page };
        let usage = judged.usage;
        let record = Record {
            robots: Some(judged.robots),
            decision: Some(judged.decision),
            content_usage: usage,
            ..self.base(url, kind, now, delay(pace, now))
        };
        let mut log = self.log.lock().map_err(|_| CrawlError::EvidencePoisoned)?;
        Ok(log.hold(record)?)
    }

    /// Writes the records held, in one `write`: their pages may then go.
    pub(crate) fn flush(&self) -> Result<(), CrawlError> {
        let mut log = self.log.lock().map_err(|_| CrawlError::EvidencePoisoned)?;
        Ok(log.flush()?)
    }

    /// The loop is about to let robots.txt request `url` go, held to `pace`.
    pub(crate) fn expect(&self, url: &str, pace: Pace) {
        let now = UnixMillis::now();
        if let Ok(mut m) = self.expected.lock() {
            m.insert(as_sent(url), delay(pace, now));
        }
    }

    /// The line written for a robots.txt request to `url`, for its WARC
    /// record.
    pub(crate) fn take_line(&self, url: &str) -> Option<Vec<u8>> {
        self.lines.lock().ok()?.remove(url)
    }

    /// Writes a checkpoint if one is due (`force`: now).
    pub(crate) fn checkpoint(&self, force: bool) -> Result<(), CrawlError> {
        let mut log = self.log.lock().map_err(|_| CrawlError::EvidencePoisoned)?;
        log.checkpoint(UnixMillis::now(), force)?;
        Ok(())
    }

    /// The last checkpoint, over everything, and what the evidence holds.
    pub(crate) fn close(&self) -> Result<crate::summary::EvidenceCounts, CrawlError> {
        let mut log = self.log.lock().map_err(|_| CrawlError::EvidencePoisoned)?;
        log.checkpoint(UnixMillis::now(), true)?;
        Ok(crate::summary::EvidenceCounts {
            records: log.written(),
            keyid: self.keyid.clone(),
        })
    }

    /// Forgets what the loop told of a robots.txt request the cache then
    /// did not make.
    pub(crate) fn forget(&self, url: &str) {
        let url = as_sent(url);
        if let Ok(mut m) = self.expected.lock() {
            m.remove(&url);
        }
        if let Ok(mut m) = self.lines.lock() {
            m.remove(&url);
        }
    }

    fn robots_request(&self, url: &url::Url) -> Result<(), mannerly_fetch::NotSent> {
        let now = UnixMillis::now();
        let text = url.as_str();
        let told = self.expected.lock().ok().and_then(|mut m| m.remove(text));
        let delay = told.unwrap_or_else(|| {
            // A hop within the robots.txt's own host, spaced by the
            // crawl's minimum delay.
            let host = crate::normalize::host_of(text);
            let previous = self.log.lock().ok().and_then(|l| l.previous(&host));
            Delay {
                required_s: seconds(self.hop_gap_ms),
                source: DelaySource::Default,
                since_previous_s: previous.map(|p| seconds(now.0.saturating_sub(p))),
            }
        });
        // robots.txt is signed as pages are: its record names the key.
        let record = self.base(text, Kind::Robots, now, delay);
        // A request whose record cannot be written is not sent.
        let line = self
            .append(record)
            .map_err(|e| mannerly_fetch::NotSent(format!("its evidence record: {e}")))?;
        if let Ok(mut m) = self.lines.lock() {
            // Lines of hops that got no answer are never archived:
            // bounded, they cannot pile up.
            if m.len() >= MAX_PENDING_LINES {
                m.clear();
            }
            m.insert(text.to_owned(), line);
        }
        Ok(())
    }
}

impl mannerly_fetch::SendHook for Witness {
    fn sending(&self, url: &url::Url) -> Result<(), mannerly_fetch::NotSent> {
        self.robots_request(url)
    }
}

/// A URL as the HTTP client sends it (and the send hook sees it): parsed
/// and serialised, so `http://a.test:80/robots.txt` is `http://a.test/robots.txt`.
fn as_sent(url: &str) -> String {
    url::Url::parse(url).map_or_else(|_| url.to_owned(), String::from)
}

/// A record's delay from the frontier's pace at `now`.
fn delay(pace: Pace, now: UnixMillis) -> Delay {
    let source = pace.source;
    Delay {
        required_s: seconds(pace.required_ms),
        source,
        since_previous_s: pace
            .previous_start
            .map(|p| seconds(now.0.saturating_sub(p.0))),
    }
}
