//! One record: what the crawler knew and kept when it sent one request.
//! Every member is always present (absent facts are `null`), so two
//! producers of the same facts give the same canonical bytes.
//!
//! The structs declare their members in canonical (sorted) order and
//! write whole seconds as integers, so serde_json's output of a record is
//! already its RFC 8785 canonical form ([`Record::canonical_bytes`]); the
//! general [`canonical`](crate::jcs::canonical) is for records of other
//! producers.

use serde::{Deserialize, Serialize};

/// The record format this crate writes and reads.
pub const VERSION: u32 = 1;

/// A request's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The chain it belongs to: one writer (a crawl, or a fleet's worker).
    pub chain: String,
    /// The AIPREF `Content-Usage` preference in force for the URL.
    pub content_usage: Option<String>,
    /// What that robots.txt decided (`null` for a robots.txt request).
    pub decision: Option<Decision>,
    /// The delay kept before it.
    pub delay: Delay,
    /// The URL's host (without its port), lower-case: the chain's key.
    pub host: String,
    /// The Web Bot Auth `keyid` the request was signed with.
    pub keyid: Option<String>,
    /// What was asked for.
    pub kind: Kind,
    /// The request method.
    pub method: String,
    /// The host's chain head before it (hex SHA-256; 64 zeros at `seq` 0).
    pub prev: String,
    /// The robots.txt the decision used (`null` for a robots.txt request).
    pub robots: Option<RobotsUsed>,
    /// Its place in the chain of its host, from 0.
    pub seq: u64,
    /// When it was sent: RFC 3339, UTC, milliseconds.
    pub time: String,
    /// The absolute URL requested.
    pub url: String,
    /// The User-Agent sent.
    pub user_agent: String,
    /// The format version, [`VERSION`].
    pub v: u32,
}

/// What a request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Kind {
    /// robots.txt, or a hop of its redirects.
    Robots,
    /// A sitemap.
    Sitemap,
    /// A page.
    Page,
}

impl Kind {
    /// Its word, as records and metric labels spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Robots => "robots",
            Kind::Sitemap => "sitemap",
            Kind::Page => "page",
        }
    }
}

/// The robots.txt a decision used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotsUsed {
    /// When it was fetched (RFC 3339), `null` when never.
    pub fetched: Option<String>,
    /// Hex SHA-256 of the bytes judged (`null` when there were none).
    pub sha256: Option<String>,
    /// How it was read.
    pub state: RobotsState,
    /// The status it was fetched with, `null` on a network error.
    pub status: Option<u16>,
    /// Its URL.
    pub url: String,
    /// Why, for allow-all and disallow-all.
    pub why: Option<String>,
}

/// How a robots.txt was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RobotsState {
    /// Its rules were parsed and applied.
    Parsed,
    /// Everything allowed (a 4xx, say).
    AllowAll,
    /// Nothing allowed (unreachable, 5xx).
    DisallowAll,
}

/// What decided a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// Whether the request was allowed.
    pub allowed: bool,
    /// The deciding line of robots.txt, when a rule decided.
    pub line: Option<u32>,
    /// The deciding rule, `allow: /x` or `disallow: /y`.
    pub rule: Option<String>,
}

/// The delay a request kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Delay {
    /// The delay in force for its host, seconds (milliseconds precision).
    #[serde(serialize_with = "canonical_seconds")]
    pub required_s: f64,
    /// The gap kept since the host's previous request started, seconds;
    /// `null` for the host's first.
    #[serde(serialize_with = "canonical_seconds_opt")]
    pub since_previous_s: Option<f64>,
    /// Where that delay came from.
    pub source: DelaySource,
}

/// Where a delay came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DelaySource {
    /// The crawler's own minimum.
    Default,
    /// robots.txt's Crawl-delay or Request-rate.
    CrawlDelay,
    /// The server's Retry-After.
    RetryAfter,
    /// Backing off after failures.
    Backoff,
    /// Slowed to the server's response times.
    Adaptive,
}

impl DelaySource {
    /// The word records use.
    pub fn as_str(self) -> &'static str {
        match self {
            DelaySource::Default => "default",
            DelaySource::CrawlDelay => "crawl-delay",
            DelaySource::RetryAfter => "retry-after",
            DelaySource::Backoff => "backoff",
            DelaySource::Adaptive => "adaptive",
        }
    }
}

/// Seconds from milliseconds, as records hold them.
pub fn seconds(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

impl Record {
    /// When it was sent, in Unix milliseconds (`None` when `time` is not
    /// the RFC 3339 form records use).
    pub fn millis(&self) -> Option<u64> {
        mannerly_time::UnixMillis::parse_rfc3339_millis(&self.time).map(|t| t.0)
    }

    /// The path and query requested (`/` when the URL has none).
    pub fn target(&self) -> &str {
        let rest = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |(_, r)| r);
        let rest = rest.split('#').next().unwrap_or(rest);
        match rest.find(['/', '?']) {
            Some(i) if rest[i..].starts_with('?') => &rest[i..],
            Some(i) => &rest[i..],
            None => "/",
        }
    }
}

impl Record {
    /// A record with every fact empty, to fill in with `..Record::blank()`.
    pub fn blank() -> Record {
        Record {
            v: VERSION,
            chain: String::new(),
            seq: 0,
            prev: String::new(),
            time: String::new(),
            method: "GET".into(),
            url: String::new(),
            host: String::new(),
            kind: Kind::Page,
            user_agent: String::new(),
            keyid: None,
            robots: None,
            decision: None,
            delay: Delay {
                required_s: 0.0,
                source: DelaySource::Default,
                since_previous_s: None,
            },
            content_usage: None,
        }
    }
}

/// Seconds as RFC 8785 writes them: whole ones as integers (`2`, not
/// `2.0`), others in the shortest form that reads back.
fn canonical_seconds<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        s.serialize_i64(*x as i64)
    } else {
        s.serialize_f64(*x)
    }
}

fn canonical_seconds_opt<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => canonical_seconds(x, s),
        None => s.serialize_none(),
    }
}

impl Record {
    /// Its canonical bytes (RFC 8785), written directly, into a buffer
    /// sized for a typical record (about 650 bytes) and its newline, so
    /// it is not grown four times over. (A record of plain fields always
    /// serialises; the error is there so that nothing empty is ever
    /// chained in its place.)
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, crate::EvidenceError> {
        let mut out = Vec::with_capacity(1024);
        serde_json::to_writer(&mut out, self).map_err(|source| {
            crate::EvidenceError::Serialize {
                what: "a record",
                source,
            }
        })?;
        Ok(out)
    }
}
