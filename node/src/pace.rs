//! `Politeness`: per-key request pacing (a key is usually a host name),
//! sans-IO: ask before a request, report when it went out and how it ended.

use mannerly_polite::controller::{
    Config, Outcome, OverMax, Politeness as Controller, RobotsPacing, Wait,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::robots::{profile_of, Robots};
use crate::{at, check_agent, invalid, millis};

/// How a `Politeness` paces.
#[napi(object)]
pub struct PolitenessOptions {
    /// Seconds between two request starts to one key (1).
    pub min_delay_secs: Option<f64>,
    /// How Crawl-delay is read: `conservative` (the default), `literal`,
    /// `window` (Bing) or `ignore` (Google).
    pub profile: Option<String>,
    /// Requests in flight at once per key (1).
    pub max_in_flight: Option<u32>,
    /// Largest Crawl-delay honoured (30)...
    pub max_crawl_delay_secs: Option<f64>,
    /// ...past it, `skip` the host (the default) or `cap` the delay.
    pub over_max: Option<String>,
    /// Longest Retry-After honoured (3,600).
    pub retry_after_cap_secs: Option<f64>,
    /// Backoff multiplier after 429, 5xx or a failure (2).
    pub backoff_factor: Option<f64>,
    /// Longest delay backoff reaches (300).
    pub max_delay_secs: Option<f64>,
    /// Consecutive failures before a pause (10)...
    pub pause_after: Option<u32>,
    /// ...of this long (600).
    pub pause_for_secs: Option<f64>,
}

/// How a request ended, for `finish`.
#[napi(object)]
pub struct Finished {
    /// The HTTP status, or absent for a timeout or connection failure.
    pub status: Option<u32>,
    /// How long it took, in milliseconds.
    pub latency_ms: Option<f64>,
    /// The raw Retry-After value, if the response had one.
    pub retry_after: Option<String>,
}

/// Per-key request pacing. Ask `waitMs(key)` before a request (0: now;
/// Infinity: never, the host is skipped), call `start` when it goes out and
/// `finish` when it ends. Delays count start to start.
#[napi]
pub struct Politeness {
    inner: Controller,
}

fn config_of(o: PolitenessOptions) -> Result<Config> {
    let max_in_flight = o.max_in_flight.unwrap_or(1);
    if max_in_flight == 0 {
        return Err(invalid(
            "RangeError: maxInFlight 0 would never send a request: use 1 or more",
        ));
    }
    let backoff_factor = o.backoff_factor.unwrap_or(2.0);
    if !(backoff_factor.is_finite() && backoff_factor >= 1.0) {
        return Err(invalid(format!(
            "RangeError: backoffFactor {backoff_factor} must be a number of at least 1"
        )));
    }
    let over_max = match o.over_max.as_deref().unwrap_or("skip") {
        "skip" => OverMax::Skip,
        "cap" => OverMax::Cap,
        other => {
            return Err(invalid(format!(
                "overMax {other:?} is not a choice: use 'skip' or 'cap'"
            )))
        }
    };
    Ok(Config {
        max_in_flight,
        min_delay: millis("minDelaySecs", o.min_delay_secs, 1.0)?,
        profile: profile_of(o.profile.as_deref().unwrap_or("conservative"))?,
        max_crawl_delay: millis("maxCrawlDelaySecs", o.max_crawl_delay_secs, 30.0)?,
        over_max,
        retry_after_cap: millis("retryAfterCapSecs", o.retry_after_cap_secs, 3_600.0)?,
        backoff_factor,
        max_delay: millis("maxDelaySecs", o.max_delay_secs, 300.0)?,
        pause_after: o.pause_after.unwrap_or(10).max(1),
        pause_for: millis("pauseForSecs", o.pause_for_secs, 600.0)?,
        ..Config::default()
    })
}

#[napi]
impl Politeness {
    /// A pacer with these options.
    #[napi(constructor)]
    pub fn new(options: Option<PolitenessOptions>) -> Result<Politeness> {
        let o = options.unwrap_or(PolitenessOptions {
            min_delay_secs: None,
            profile: None,
            max_in_flight: None,
            max_crawl_delay_secs: None,
            over_max: None,
            retry_after_cap_secs: None,
            backoff_factor: None,
            max_delay_secs: None,
            pause_after: None,
            pause_for_secs: None,
        });
        Ok(Politeness {
            inner: Controller::new(config_of(o)?),
        })
    }

    /// Reads `key`'s Crawl-delay and Request-rate for `agent` from a parsed
    /// robots.txt, as this pacer's profile reads them (null clears them).
    #[napi]
    pub fn set_robots(
        &mut self,
        key: String,
        robots: Option<&Robots>,
        agent: String,
    ) -> Result<()> {
        check_agent(&agent)?;
        let pacing = robots.map_or_else(RobotsPacing::default, |r| {
            RobotsPacing::from_robots(&r.parsed, &agent, self.inner.config.profile)
        });
        self.inner.set_robots(&key, pacing);
        Ok(())
    }

    /// Milliseconds until `key` may start a request (0: now; Infinity:
    /// never).
    #[napi]
    pub fn wait_ms(&self, key: String, now: Option<f64>) -> Result<f64> {
        let now = at(now)?;
        Ok(match self.inner.check(&key, now) {
            Ok(()) => 0.0,
            Err(Wait::Until { at, .. }) => at.millis_since(now) as f64,
            Err(Wait::Skipped { .. }) => f64::INFINITY,
        })
    }

    /// Why `key` may not start a request at `now`, or null.
    #[napi]
    pub fn why_not_now(&self, key: String, now: Option<f64>) -> Result<Option<String>> {
        Ok(self.inner.why_not_now(&key, at(now)?).map(|h| h.to_string()))
    }

    /// Records that a request to `key` went out at `now`.
    #[napi]
    pub fn start(&mut self, key: String, now: Option<f64>) -> Result<()> {
        self.inner.start(&key, at(now)?);
        Ok(())
    }

    /// Records how a request to `key` ended at `now`.
    #[napi]
    pub fn finish(&mut self, key: String, how: Finished, now: Option<f64>) -> Result<()> {
        let now = at(now)?;
        let latency = match how.latency_ms {
            Some(ms) if !(ms.is_finite() && ms >= 0.0) => {
                return Err(invalid(format!(
                    "RangeError: latencyMs {ms} is not a number of milliseconds"
                )))
            }
            Some(ms) => ms as u64,
            None => 0,
        };
        let outcome = match how.status {
            Some(status) => Outcome::Status {
                status: u16::try_from(status)
                    .ok()
                    .filter(|s| (100..=599).contains(s))
                    .ok_or_else(|| {
                        invalid(format!(
                            "RangeError: status {status} is not an HTTP status (100 to 599)"
                        ))
                    })?,
                latency,
                retry_after: how.retry_after,
            },
            None => Outcome::Failed { latency },
        };
        self.inner.finish(&key, now, &outcome);
        Ok(())
    }

    /// The delay between request starts for `key` now, in seconds
    /// (minimum, Crawl-delay, Request-rate and backoff together).
    #[napi]
    pub fn delay_secs(&self, key: String) -> f64 {
        let min = self.inner.config.min_delay;
        self.inner.get(&key).map_or(min, |h| h.delay.max(h.window)) as f64 / 1000.0
    }

    /// Requests to `key` in flight now.
    #[napi]
    pub fn in_flight(&self, key: String) -> u32 {
        self.inner.get(&key).map_or(0, |h| h.in_flight)
    }

    /// Why `key` is skipped for good, or null.
    #[napi]
    pub fn skipped(&self, key: String) -> Option<String> {
        self.inner.get(&key).and_then(|h| h.skip.clone())
    }
}
