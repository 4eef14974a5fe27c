//! robots.txt over time and per-host pacing, for crawlers written in Python.
//!
//! `RobotsState` is `mannerly-fetch`'s sans-IO `OriginState`: the caller
//! fetches robots.txt however it likes (Scrapy's downloader, requests,
//! httpx) and hands over what happened; the state says what the origin
//! allows and until when, with RFC 9309's and Google's handling of 4xx,
//! 5xx, 429 and network failures (12 hours of complete disallow, then the
//! last good copy, then after 30 days allow-all if the site answers).
//!
//! `Politeness` is `mannerly-polite`'s controller: one request in flight per
//! key, start-to-start delays, Crawl-delay by engine profile, Retry-After,
//! multiplicative backoff and pauses. Time is passed in (seconds since
//! 1970, `time.time()` when omitted), so tests drive days in microseconds.

use std::sync::Arc;
use std::time::Duration;

use mannerly_fetch::policy::{
    Access, Decision, FetchOutcome, Hop, HttpResponse, NetworkError, OriginState,
};
use mannerly_fetch::{AccessKind, Origin, PolicyConfig, Profile};
use mannerly_polite::controller::{
    Config, CrawlDelayProfile, Outcome, OverMax, Politeness as Controller, RobotsPacing, Wait,
};
use mannerly_robots::{ParseOptions, Robots as Parsed};
use mannerly_time::UnixMillis;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::options::Options;
use crate::{check_agent, Robots};

/// Now, or `now` seconds since 1970.
fn at(now: Option<f64>) -> PyResult<UnixMillis> {
    match now {
        None => Ok(UnixMillis::now()),
        Some(t) if t.is_finite() && t >= 0.0 => Ok(UnixMillis((t * 1000.0) as u64)),
        Some(t) => Err(PyValueError::new_err(format!(
            "now={t} is not a time: pass seconds since 1970 (time.time())"
        ))),
    }
}

fn secs(t: UnixMillis) -> f64 {
    t.as_millis() as f64 / 1000.0
}

/// A non-negative, finite number of seconds named `what`.
fn duration(what: &str, v: f64) -> PyResult<Duration> {
    if (0.0..1e12).contains(&v) {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(PyValueError::new_err(format!(
            "{what}={v} is not a number of seconds (0 or more)"
        )))
    }
}

fn millis(what: &str, v: f64) -> PyResult<u64> {
    Ok(duration(what, v)?.as_millis() as u64)
}

/// What an origin's robots.txt allows now, and until when.
#[pyclass(module = "mannerly", frozen)]
struct RobotsDecision {
    access: AccessKind,
    robots: Option<Arc<Parsed>>,
    /// When this decision stops holding (seconds since 1970); after it,
    /// robots.txt is fetched again.
    #[pyo3(get)]
    expires_at: f64,
    /// Why, in words, such as '503 since ...: complete disallow for 12 h'.
    #[pyo3(get)]
    reason: String,
}

impl RobotsDecision {
    fn of(d: &Decision) -> RobotsDecision {
        RobotsDecision {
            access: d.access.kind(),
            robots: match &d.access {
                Access::Rules(r) => Some(r.clone()),
                _ => None,
            },
            expires_at: secs(d.expires_at),
            reason: d.reason.clone(),
        }
    }
}

#[pymethods]
impl RobotsDecision {
    /// 'rules' (the file's rules apply), 'allow-all' (no usable file: 4xx,
    /// too many redirects) or 'disallow-all' (unreachable: 5xx, 429, network).
    #[getter]
    fn access(&self) -> &'static str {
        self.access.as_str()
    }

    /// The parsed file when `access` is 'rules', else None.
    #[getter]
    fn robots(&self) -> Option<Robots> {
        self.robots.clone().map(|parsed| Robots { parsed })
    }

    /// Whether `agent` may fetch `url` under this decision.
    fn is_allowed(&self, agent: &str, url: &str) -> PyResult<bool> {
        check_agent(agent)?;
        Ok(match (&self.robots, self.access) {
            (Some(r), _) => r.is_allowed(agent, url),
            (None, kind) => kind == AccessKind::AllowAll,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "RobotsDecision(access={:?}, reason={:?})",
            self.access.as_str(),
            self.reason
        )
    }
}

fn network_kind(kind: &str) -> PyResult<NetworkError> {
    kind.parse()
        .map_err(|e: String| PyValueError::new_err(format!("kind={e}")))
}

/// robots.txt over time for one origin (`scheme://host[:port]`).
///
/// Hand it each fetch of `/robots.txt` (`apply_response`,
/// `apply_network_error`, `apply_too_many_redirects`) and ask `decision()`
/// before each URL: None means a (re)fetch is due. Caching is at most 24
/// hours; 4xx allows everything; 5xx, 429 and network failures disallow
/// everything for 12 hours (Google) while retrying with backoff, then use
/// the last good copy, and after 30 days allow everything if the site
/// answers other requests (`note_host_answered`). `profile='rfc9309'`
/// keeps disallowing instead.
#[pyclass(module = "mannerly")]
struct RobotsState {
    state: OriginState,
    config: PolicyConfig,
}

#[pymethods]
impl RobotsState {
    #[new]
    #[pyo3(signature = (origin, profile = "google", **options))]
    fn new(
        origin: &str,
        profile: &str,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<RobotsState> {
        let known = [
            "rfc",
            "max_ttl",
            "min_ttl",
            "backoff_base",
            "backoff_max",
            "retry_after_cap",
        ];
        let o = Options::new("RobotsState", options, &known)?;
        let rfc = o.get("rfc", false)?;
        let seconds = |name: &str, default: f64| duration(name, o.get(name, default)?);
        let origin = Origin::of(origin).map_err(|e| {
            PyValueError::new_err(format!("origin={origin:?} is not an http(s) origin: {e}"))
        })?;
        let profile = match profile {
            "google" => Profile::Google,
            "rfc9309" => Profile::Rfc9309,
            p => {
                return Err(PyValueError::new_err(format!(
                    "profile={p:?} is not a profile: use 'google' or 'rfc9309'"
                )))
            }
        };
        let parse = ParseOptions::strict(rfc);
        let config = PolicyConfig {
            profile,
            max_ttl: seconds("max_ttl", 86400.0)?,
            min_ttl: seconds("min_ttl", 60.0)?,
            backoff_base: seconds("backoff_base", 60.0)?,
            backoff_max: seconds("backoff_max", 3600.0)?,
            retry_after_cap: seconds("retry_after_cap", 86400.0)?,
            parse,
            ..PolicyConfig::default()
        };
        Ok(RobotsState {
            state: OriginState::new(origin),
            config,
        })
    }

    /// The origin, such as 'https://example.com'.
    #[getter]
    fn origin(&self) -> String {
        self.state.origin.to_string()
    }

    /// The robots.txt URL to fetch.
    #[getter]
    fn robots_url(&self) -> String {
        self.state.origin.robots_url()
    }

    /// While unreachable: no refetch before this time (backoff or
    /// Retry-After), else None.
    #[getter]
    fn retry_at(&self) -> Option<f64> {
        self.state.retry_at.map(secs)
    }

    /// When the current run of failures began, or None.
    #[getter]
    fn failing_since(&self) -> Option<f64> {
        self.state.failure.as_ref().map(|f| secs(f.since))
    }

    /// The decision in force at `now`, or None when robots.txt must be
    /// fetched (never fetched, or the decision expired and no backoff is
    /// running).
    #[pyo3(signature = (now = None))]
    fn decision(&mut self, now: Option<f64>) -> PyResult<Option<RobotsDecision>> {
        let now = at(now)?;
        if let Some(d) = self.state.decision(now) {
            return Ok(Some(RobotsDecision::of(d)));
        }
        Ok(self
            .state
            .reevaluate(now, &self.config)
            .map(RobotsDecision::of))
    }

    /// One answer to the robots.txt request: its status, body and headers
    /// (a mapping or (name, value) pairs), the URL it came from after any
    /// redirects, and the redirects followed as (url, status) pairs.
    #[pyo3(signature = (status, body = b"".as_slice(), headers = None, url = None, redirects = Vec::new(), now = None))]
    fn apply_response(
        &mut self,
        status: u16,
        body: &[u8],
        headers: Option<&Bound<'_, PyAny>>,
        url: Option<String>,
        redirects: Vec<(String, u16)>,
        now: Option<f64>,
    ) -> PyResult<RobotsDecision> {
        if !(100..=599).contains(&status) {
            return Err(PyValueError::new_err(format!(
                "status={status} is not an HTTP status (100 to 599)"
            )));
        }
        let now = at(now)?;
        let headers = header_pairs(headers)?
            .into_iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect();
        let limit = self.config.parse.max_bytes;
        let outcome = FetchOutcome::Response {
            response: HttpResponse {
                status,
                headers,
                body: body[..body.len().min(limit + 1)].to_vec(),
                body_cut: body.len() > limit,
                url: url.unwrap_or_else(|| self.state.origin.robots_url()),
            },
            redirects: hops(redirects),
        };
        Ok(RobotsDecision::of(self.state.apply(
            &outcome,
            now,
            &self.config,
        )))
    }

    /// The robots.txt request failed below HTTP. `kind` is one of 'dns',
    /// 'connect', 'tls', 'timeout', 'reset', 'truncated-body', 'other', or
    /// 'stalled' (the crawler itself was not running when the request's
    /// deadline passed: nothing is counted against the site).
    #[pyo3(signature = (kind = "other", detail = "", now = None))]
    fn apply_network_error(
        &mut self,
        kind: &str,
        detail: &str,
        now: Option<f64>,
    ) -> PyResult<RobotsDecision> {
        let outcome = FetchOutcome::Network {
            error: network_kind(kind)?,
            detail: detail.to_owned(),
            redirects: Vec::new(),
        };
        let now = at(now)?;
        Ok(RobotsDecision::of(self.state.apply(
            &outcome,
            now,
            &self.config,
        )))
    }

    /// More than five redirects, or a loop: robots.txt counts as
    /// unavailable (allow-all), as RFC 9309 §2.3.1.2 and Google say.
    #[pyo3(signature = (redirects = Vec::new(), is_loop = false, now = None))]
    fn apply_too_many_redirects(
        &mut self,
        redirects: Vec<(String, u16)>,
        is_loop: bool,
        now: Option<f64>,
    ) -> PyResult<RobotsDecision> {
        let outcome = FetchOutcome::TooManyRedirects {
            redirects: hops(redirects),
            is_loop,
        };
        let now = at(now)?;
        Ok(RobotsDecision::of(self.state.apply(
            &outcome,
            now,
            &self.config,
        )))
    }

    /// The site answered another request (any status but 5xx and 429):
    /// what lets the 30-day rule allow crawling again.
    #[pyo3(signature = (now = None))]
    fn note_host_answered(&mut self, now: Option<f64>) -> PyResult<()> {
        self.state.note_host_answered(at(now)?);
        Ok(())
    }

    /// The latest fetches as (time, outcome, decision), oldest first.
    fn history(&self) -> Vec<(f64, String, String)> {
        self.state
            .history
            .iter()
            .map(|h| (secs(h.at), h.outcome.clone(), h.decision.clone()))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("RobotsState({:?})", self.state.origin.to_string())
    }
}

/// Headers as a mapping or as (name, value) pairs.
fn header_pairs(headers: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(h) = headers else {
        return Ok(Vec::new());
    };
    let items = if h.hasattr("items")? {
        h.call_method0("items")?
    } else {
        h.clone()
    };
    let mut out = Vec::new();
    for pair in items.try_iter()? {
        let pair = pair?;
        let kv: (String, String) = pair.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "headers: expected a mapping or (name, value) pairs of str, got {}",
                pair.repr().map_or_else(|_| "?".into(), |r| r.to_string())
            ))
        })?;
        out.push(kv);
    }
    Ok(out)
}

fn hops(redirects: Vec<(String, u16)>) -> Vec<Hop> {
    redirects
        .into_iter()
        .map(|(url, status)| Hop {
            url,
            status,
            headers: Vec::new(),
        })
        .collect()
}

/// Per-key request pacing (a key is usually a host name).
///
/// Ask `wait(key)` before a request: 0.0 means it may start now, a number
/// is the seconds until it may, `math.inf` means never (the host is
/// skipped, e.g. its Crawl-delay is over `max_crawl_delay`). Then call
/// `start` when it goes out and `finish` when it ends. Delays count start
/// to start; Crawl-delay and backoff only ever raise `min_delay`.
#[pyclass(module = "mannerly")]
struct Politeness {
    inner: Controller,
}

fn profile_of(p: &str) -> PyResult<CrawlDelayProfile> {
    p.parse()
        .map_err(|e: String| PyValueError::new_err(format!("profile={e}")))
}

#[pymethods]
impl Politeness {
    #[new]
    #[pyo3(signature = (min_delay = 1.0, profile = "conservative", **options))]
    fn new(
        min_delay: f64,
        profile: &str,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Politeness> {
        let known = [
            "max_in_flight",
            "max_crawl_delay",
            "over_max",
            "retry_after_cap",
            "backoff_factor",
            "max_delay",
            "pause_after",
            "pause_for",
        ];
        let o = Options::new("Politeness", options, &known)?;
        let max_in_flight: u32 = o.get("max_in_flight", 1)?;
        let max_crawl_delay: f64 = o.get("max_crawl_delay", 30.0)?;
        let over_max: String = o.get("over_max", "skip".to_owned())?;
        let over_max = over_max.as_str();
        let retry_after_cap: f64 = o.get("retry_after_cap", 3600.0)?;
        let backoff_factor: f64 = o.get("backoff_factor", 2.0)?;
        let max_delay: f64 = o.get("max_delay", 300.0)?;
        let pause_after: u32 = o.get("pause_after", 10)?;
        let pause_for: f64 = o.get("pause_for", 600.0)?;
        if max_in_flight == 0 {
            return Err(PyValueError::new_err(
                "max_in_flight=0 would never send a request: use 1 or more",
            ));
        }
        if !(backoff_factor.is_finite() && backoff_factor >= 1.0) {
            return Err(PyValueError::new_err(format!(
                "backoff_factor={backoff_factor} must be a number of at least 1.0"
            )));
        }
        let over_max = match over_max {
            "skip" => OverMax::Skip,
            "cap" => OverMax::Cap,
            o => {
                return Err(PyValueError::new_err(format!(
                    "over_max={o:?} is not a choice: use 'skip' or 'cap'"
                )))
            }
        };
        Ok(Politeness {
            inner: Controller::new(Config {
                max_in_flight,
                min_delay: millis("min_delay", min_delay)?,
                profile: profile_of(profile)?,
                max_crawl_delay: millis("max_crawl_delay", max_crawl_delay)?,
                over_max,
                retry_after_cap: millis("retry_after_cap", retry_after_cap)?,
                backoff_factor,
                max_delay: millis("max_delay", max_delay)?,
                pause_after: pause_after.max(1),
                pause_for: millis("pause_for", pause_for)?,
                ..Config::default()
            }),
        })
    }

    /// Reads `key`'s Crawl-delay and Request-rate for `agent` from a parsed
    /// robots.txt, as this controller's profile reads them (None clears them).
    #[pyo3(signature = (key, robots, agent))]
    fn set_robots(
        &mut self,
        key: &str,
        robots: Option<PyRef<'_, Robots>>,
        agent: &str,
    ) -> PyResult<()> {
        check_agent(agent)?;
        let pacing = robots.map_or_else(RobotsPacing::default, |r| {
            RobotsPacing::from_robots(&r.parsed, agent, self.inner.config.profile)
        });
        self.inner.set_robots(key, pacing);
        Ok(())
    }

    /// Seconds until `key` may start a request (0.0: now; inf: never).
    #[pyo3(signature = (key, now = None))]
    fn wait(&self, key: &str, now: Option<f64>) -> PyResult<f64> {
        let now = at(now)?;
        Ok(match self.inner.check(key, now) {
            Ok(()) => 0.0,
            Err(Wait::Until { at, .. }) => at.millis_since(now) as f64 / 1000.0,
            Err(Wait::Skipped { .. }) => f64::INFINITY,
        })
    }

    /// Why `key` may not start a request at `now`, or None.
    #[pyo3(signature = (key, now = None))]
    fn why_not_now(&self, key: &str, now: Option<f64>) -> PyResult<Option<String>> {
        Ok(self.inner.why_not_now(key, at(now)?).map(|h| h.to_string()))
    }

    /// Records that a request to `key` went out at `now`.
    #[pyo3(signature = (key, now = None))]
    fn start(&mut self, key: &str, now: Option<f64>) -> PyResult<()> {
        self.inner.start(key, at(now)?);
        Ok(())
    }

    /// Records how a request ended at `now`: its HTTP `status`, or None
    /// for a timeout or connection failure; `latency` in seconds; the raw
    /// `Retry-After` value if the response had one (honoured on 429 and 503).
    #[pyo3(signature = (key, status = None, latency = 0.0, retry_after = None, now = None))]
    fn finish(
        &mut self,
        key: &str,
        status: Option<u16>,
        latency: f64,
        retry_after: Option<String>,
        now: Option<f64>,
    ) -> PyResult<()> {
        let now = at(now)?;
        let latency = millis("latency", latency)?;
        let outcome = match status {
            Some(status) => Outcome::Status {
                status,
                latency,
                retry_after,
            },
            None => Outcome::Failed { latency },
        };
        self.inner.finish(key, now, &outcome);
        Ok(())
    }

    /// The delay between request starts for `key` now, in seconds
    /// (minimum, Crawl-delay, Request-rate and backoff together).
    fn delay(&self, key: &str) -> f64 {
        let min = self.inner.config.min_delay;
        self.inner.get(key).map_or(min, |h| h.delay.max(h.window)) as f64 / 1000.0
    }

    /// The earliest time `key` may start its next request (seconds since
    /// 1970), taking Retry-After and pauses into account; None for a key
    /// never seen.
    fn next_allowed(&self, key: &str) -> Option<f64> {
        self.inner.get(key).map(|h| {
            let mut t = h.next_allowed;
            if let Some(r) = h.retry_after_until {
                t = t.max(r);
            }
            if let Some(p) = h.paused_until {
                t = t.max(p);
            }
            secs(t)
        })
    }

    /// Why `key` is skipped for good, or None.
    fn skipped(&self, key: &str) -> Option<String> {
        self.inner.get(key).and_then(|h| h.skip.clone())
    }

    fn __repr__(&self) -> String {
        format!(
            "Politeness(min_delay={}, keys={})",
            self.inner.config.min_delay as f64 / 1000.0,
            self.inner.keys().count()
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RobotsState>()?;
    m.add_class::<RobotsDecision>()?;
    m.add_class::<Politeness>()?;
    Ok(())
}
