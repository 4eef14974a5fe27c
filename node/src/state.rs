//! `RobotsState`: robots.txt over time for one origin, sans-IO. You fetch,
//! it decides.

use std::sync::Arc;

use mannerly_fetch::policy::{
    Access, Decision, FetchOutcome, Hop, HttpResponse, NetworkError, OriginState, PolicyConfig,
    Profile,
};
use mannerly_fetch::{AccessKind, Origin};
use mannerly_robots::{ParseOptions, Robots as Parsed};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::robots::Robots;
use crate::{at, check_agent, invalid, seconds};

/// What an origin's robots.txt allows now, and until when.
#[napi]
pub struct RobotsDecision {
    access: AccessKind,
    robots: Option<Arc<Parsed>>,
    expires_at: f64,
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
            expires_at: d.expires_at.as_millis() as f64,
            reason: d.reason.clone(),
        }
    }
}

#[napi]
impl RobotsDecision {
    /// `rules` (the file's rules apply), `allow-all` (no usable file: 4xx,
    /// too many redirects) or `disallow-all` (unreachable: 5xx, 429,
    /// network failure).
    #[napi(getter)]
    pub fn access(&self) -> String {
        self.access.as_str().into()
    }

    /// The parsed file when `access` is `rules`, else null.
    #[napi(getter)]
    pub fn robots(&self) -> Option<Robots> {
        self.robots.clone().map(|parsed| Robots { parsed })
    }

    /// When this decision stops holding (ms since 1970); then robots.txt is
    /// fetched again.
    #[napi(getter)]
    pub fn expires_at(&self) -> f64 {
        self.expires_at
    }

    /// Why, in words, such as `503 since ...: complete disallow for 12 h`.
    #[napi(getter)]
    pub fn reason(&self) -> String {
        self.reason.clone()
    }

    /// Whether `agent` may fetch `url` under this decision.
    #[napi]
    pub fn is_allowed(&self, agent: String, url: String) -> Result<bool> {
        check_agent(&agent)?;
        Ok(match (&self.robots, self.access) {
            (Some(r), _) => r.is_allowed(&agent, &mannerly_robots::as_requested(&url)),
            (None, kind) => kind == AccessKind::AllowAll,
        })
    }
}

/// How a `RobotsState` behaves.
#[napi(object)]
pub struct RobotsStateOptions {
    /// `google` (the default: 12 h disallow, then the last good copy, then
    /// after 30 days allow-all if the site answers) or `rfc9309`.
    pub profile: Option<String>,
    /// Read files as RFC 9309 says, strictly.
    pub rfc: Option<bool>,
    /// Longest a file is cached (86,400).
    pub max_ttl_secs: Option<f64>,
    /// Shortest a decision holds (60).
    pub min_ttl_secs: Option<f64>,
    /// First retry after a failure (60), doubling...
    pub backoff_base_secs: Option<f64>,
    /// ...up to this (3,600).
    pub backoff_max_secs: Option<f64>,
    /// Longest Retry-After honoured (86,400).
    pub retry_after_cap_secs: Option<f64>,
}

/// One answer to the robots.txt request.
#[napi(object)]
pub struct RobotsResponse {
    /// The HTTP status.
    pub status: u32,
    /// The body (Buffer or string); empty when absent.
    pub body: Option<Either<Buffer, String>>,
    /// Header fields, names in any case.
    pub headers: Option<std::collections::HashMap<String, String>>,
    /// The URL the body came from, after any redirects.
    pub url: Option<String>,
    /// The redirects followed, in order.
    pub redirects: Option<Vec<Redirect>>,
}

/// One redirect followed.
#[napi(object)]
pub struct Redirect {
    /// The URL that answered with the redirect.
    pub url: String,
    /// Its status (301, 302, 303, 307 or 308).
    pub status: u32,
}

/// One fetch of robots.txt, as `history()` lists it.
#[napi(object)]
pub struct HistoryEntry {
    /// When (ms since 1970).
    pub at: f64,
    /// What the fetch gave.
    pub outcome: String,
    /// What was decided.
    pub decision: String,
}

/// robots.txt over time for one origin (`scheme://host[:port]`).
#[napi]
pub struct RobotsState {
    state: OriginState,
    config: PolicyConfig,
}

fn hops(redirects: Option<Vec<Redirect>>) -> Vec<Hop> {
    redirects
        .unwrap_or_default()
        .into_iter()
        .map(|r| Hop {
            url: r.url,
            status: u16::try_from(r.status).unwrap_or(0),
            headers: Vec::new(),
        })
        .collect()
}

fn network_kind(kind: &str) -> Result<NetworkError> {
    kind.parse()
        .map_err(|e: String| invalid(format!("kind {e}")))
}

fn config_of(o: RobotsStateOptions) -> Result<PolicyConfig> {
    let profile = match o.profile.as_deref().unwrap_or("google") {
        "google" => Profile::Google,
        "rfc9309" => Profile::Rfc9309,
        p => {
            return Err(invalid(format!(
                "profile {p:?} is not a profile: use 'google' or 'rfc9309'"
            )))
        }
    };
    Ok(PolicyConfig {
        profile,
        max_ttl: seconds("maxTtlSecs", o.max_ttl_secs, 86_400.0)?,
        min_ttl: seconds("minTtlSecs", o.min_ttl_secs, 60.0)?,
        backoff_base: seconds("backoffBaseSecs", o.backoff_base_secs, 60.0)?,
        backoff_max: seconds("backoffMaxSecs", o.backoff_max_secs, 3_600.0)?,
        retry_after_cap: seconds("retryAfterCapSecs", o.retry_after_cap_secs, 86_400.0)?,
        parse: ParseOptions::strict(o.rfc.unwrap_or(false)),
        ..PolicyConfig::default()
    })
}

#[napi]
impl RobotsState {
    /// A state for `origin`, such as `https://example.com`.
    #[napi(constructor)]
    pub fn new(origin: String, options: Option<RobotsStateOptions>) -> Result<RobotsState> {
        let config = config_of(options.unwrap_or(RobotsStateOptions {
            profile: None,
            rfc: None,
            max_ttl_secs: None,
            min_ttl_secs: None,
            backoff_base_secs: None,
            backoff_max_secs: None,
            retry_after_cap_secs: None,
        }))?;
        let origin = Origin::of(&origin)
            .map_err(|e| invalid(format!("origin {origin:?} is not an http(s) origin: {e}")))?;
        Ok(RobotsState {
            state: OriginState::new(origin),
            config,
        })
    }

    /// The origin.
    #[napi(getter)]
    pub fn origin(&self) -> String {
        self.state.origin.to_string()
    }

    /// The robots.txt URL to fetch.
    #[napi(getter)]
    pub fn robots_url(&self) -> String {
        self.state.origin.robots_url()
    }

    /// While unreachable: no refetch before this (ms since 1970), else null.
    #[napi(getter)]
    pub fn retry_at(&self) -> Option<f64> {
        self.state.retry_at.map(|t| t.as_millis() as f64)
    }

    /// The decision in force at `now` (ms since 1970; default now), or null
    /// when robots.txt must be fetched.
    #[napi]
    pub fn decision(&mut self, now: Option<f64>) -> Result<Option<RobotsDecision>> {
        let now = at(now)?;
        if let Some(d) = self.state.decision(now) {
            return Ok(Some(RobotsDecision::of(d)));
        }
        Ok(self
            .state
            .reevaluate(now, &self.config)
            .map(RobotsDecision::of))
    }

    /// One answer to the robots.txt request.
    #[napi]
    pub fn apply_response(
        &mut self,
        response: RobotsResponse,
        now: Option<f64>,
    ) -> Result<RobotsDecision> {
        let status = u16::try_from(response.status)
            .ok()
            .filter(|s| (100..=599).contains(s))
            .ok_or_else(|| {
                invalid(format!(
                    "RangeError: status {} is not an HTTP status (100 to 599)",
                    response.status
                ))
            })?;
        let body: Vec<u8> = match response.body {
            Some(Either::A(b)) => b.to_vec(),
            Some(Either::B(s)) => s.into_bytes(),
            None => Vec::new(),
        };
        let limit = self.config.parse.max_bytes;
        let headers = response
            .headers
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect();
        let outcome = FetchOutcome::Response {
            response: HttpResponse {
                status,
                headers,
                body_cut: body.len() > limit,
                body: body[..body.len().min(limit + 1)].to_vec(),
                url: response
                    .url
                    .unwrap_or_else(|| self.state.origin.robots_url()),
            },
            redirects: hops(response.redirects),
        };
        Ok(RobotsDecision::of(self.state.apply(
            &outcome,
            at(now)?,
            &self.config,
        )))
    }

    /// The robots.txt request failed below HTTP: `kind` is `dns`,
    /// `connect`, `tls`, `timeout`, `reset`, `truncated-body`, `other`, or
    /// `stalled` (the crawler itself was not running when the request's
    /// deadline passed: nothing is counted against the site).
    #[napi]
    pub fn apply_network_error(
        &mut self,
        kind: String,
        detail: Option<String>,
        now: Option<f64>,
    ) -> Result<RobotsDecision> {
        let outcome = FetchOutcome::Network {
            error: network_kind(&kind)?,
            detail: detail.unwrap_or_default(),
            redirects: Vec::new(),
        };
        Ok(RobotsDecision::of(self.state.apply(
            &outcome,
            at(now)?,
            &self.config,
        )))
    }

    /// More than five redirects, or a loop: robots.txt counts as
    /// unavailable (allow-all), as RFC 9309 and Google say.
    #[napi]
    pub fn apply_too_many_redirects(
        &mut self,
        redirects: Option<Vec<Redirect>>,
        is_loop: Option<bool>,
        now: Option<f64>,
    ) -> Result<RobotsDecision> {
        let outcome = FetchOutcome::TooManyRedirects {
            redirects: hops(redirects),
            is_loop: is_loop.unwrap_or(false),
        };
        Ok(RobotsDecision::of(self.state.apply(
            &outcome,
            at(now)?,
            &self.config,
        )))
    }

    /// The site answered another request (any status but 5xx and 429):
    /// what lets the 30-day rule allow crawling again.
    #[napi]
    pub fn note_host_answered(&mut self, now: Option<f64>) -> Result<()> {
        self.state.note_host_answered(at(now)?);
        Ok(())
    }

    /// The latest fetches, oldest first.
    #[napi]
    pub fn history(&self) -> Vec<HistoryEntry> {
        self.state
            .history
            .iter()
            .map(|h| HistoryEntry {
                at: h.at.as_millis() as f64,
                outcome: h.outcome.clone(),
                decision: h.decision.clone(),
            })
            .collect()
    }
}
