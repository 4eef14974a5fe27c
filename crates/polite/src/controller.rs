//! The per-host politeness controller: sans-IO, time passed in.
//!
//! For each politeness key it tracks connections in flight, the earliest
//! next start, the current delay, Retry-After deadlines, consecutive
//! failures, a pause, and an EWMA of response time. Delays are measured
//! start-to-start: the next request may start `delay` after the previous
//! one started, whatever it took, so a slow host is not hit faster because
//! its responses are slow. A request's start is its release, or, when
//! [`Politeness::finish`] learns from `now - latency` that it went out
//! later, that later instant (and `latency_factor` can additionally slow down
//! for slow hosts).

use crate::hold::fmt_secs;
pub use crate::hold::{Hold, HostHold};

pub use mannerly_time::UnixMillis;

/// A duration in milliseconds (delays, latencies). Instants are
/// [`UnixMillis`].
pub type Millis = u64;

/// How engines read Crawl-delay; the crawler picks one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrawlDelayProfile {
    /// Google: Crawl-delay is ignored.
    Ignore,
    /// Bing: one fetch per N-second window, N clamped to 1..=30.
    Window,
    /// Wait N seconds between request starts.
    Literal,
    /// The largest of the minimum delay, the literal Crawl-delay, and the
    /// Request-rate interval (the default).
    #[default]
    Conservative,
}

impl std::str::FromStr for CrawlDelayProfile {
    type Err = String;

    /// `conservative`, `literal`, `window` (or `bing`), `ignore` (or
    /// `google`); the error says what was given and the choices.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "ignore" | "google" => CrawlDelayProfile::Ignore,
            "window" | "bing" => CrawlDelayProfile::Window,
            "literal" => CrawlDelayProfile::Literal,
            "conservative" => CrawlDelayProfile::Conservative,
            _ => {
                return Err(format!(
                    "{s:?} is not a Crawl-delay profile: use 'conservative', 'literal', 'window' (Bing) or 'ignore' (Google)"
                ))
            }
        })
    }
}

/// What to do when a Crawl-delay is above the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OverMax {
    /// Skip the host, with a reason.
    Skip,
    /// Use the maximum instead.
    Cap,
}

/// Tunables.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Requests in flight per key (1).
    pub max_in_flight: u32,
    /// Smallest delay between starts (1 s).
    pub min_delay: Millis,
    /// Random-looking (deterministic) extra delay, as a fraction of the
    /// delay (0.0 = none).
    pub jitter: f64,
    /// How Crawl-delay is read (conservative).
    pub profile: CrawlDelayProfile,
    /// Crawl-delay above this is skipped or capped (30 s).
    pub max_crawl_delay: Millis,
    /// What a Crawl-delay above `max_crawl_delay` does (skip the host).
    pub over_max: OverMax,
    /// Longest Retry-After honoured (1 h); longer values are capped.
    pub retry_after_cap: Millis,
    /// Delay multiplier on 429/503/500/502/504/timeouts (2.0).
    pub backoff_factor: f64,
    /// Largest delay backoff can reach (5 min).
    pub max_delay: Millis,
    /// On success the delay moves this fraction of the way back to the
    /// base (0.1: slowly).
    pub recovery: f64,
    /// Keep the delay at least this many times the EWMA latency (0 = off;
    /// Heritrix uses 5).
    pub latency_factor: f64,
    /// Consecutive failures that pause the host (10), and for how long (10 min).
    pub pause_after: u32,
    /// How long a pause lasts (10 min).
    pub pause_for: Millis,
    /// How long a request may still be running at the server after its
    /// start when the process that sent it died (30 s: the crawler sets
    /// its total request timeout). A host whose saved state says a request
    /// was in flight gets none after a restart before that request's start
    /// plus this bound, and its delay counts from then (see
    /// [`Politeness::restore`]).
    pub in_flight_bound: Millis,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_in_flight: 1,
            min_delay: 1_000,
            jitter: 0.0,
            profile: CrawlDelayProfile::Conservative,
            max_crawl_delay: 30_000,
            over_max: OverMax::Skip,
            retry_after_cap: 3_600_000,
            backoff_factor: 2.0,
            max_delay: 300_000,
            recovery: 0.1,
            latency_factor: 0.0,
            pause_after: 10,
            pause_for: 600_000,
            in_flight_bound: 30_000,
        }
    }
}

/// What robots.txt says about pacing, for one key.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RobotsPacing {
    /// Crawl-delay in seconds (the agent's group, or for the window
    /// profile the `*` group when the agent has none).
    pub crawl_delay: Option<f64>,
    /// Request-rate as (requests, period seconds).
    pub request_rate: Option<(u32, u64)>,
}

impl RobotsPacing {
    /// What a parsed robots.txt says about pacing for `agent`, read the
    /// way `profile` reads it: the agent's own Crawl-delay and Request-rate;
    /// for [`CrawlDelayProfile::Window`] (Bing), the `*` group's Crawl-delay
    /// when the agent's group has none.
    pub fn from_robots(
        robots: &mannerly_robots::Robots,
        agent: &str,
        profile: CrawlDelayProfile,
    ) -> RobotsPacing {
        let mut crawl = robots.crawl_delay(agent);
        if crawl.is_none() && profile == CrawlDelayProfile::Window {
            crawl = robots.global_crawl_delay();
        }
        RobotsPacing {
            crawl_delay: crawl.map(|d| d.delay.as_secs_f64()),
            request_rate: robots
                .request_rate(agent)
                .map(|r| (r.requests, r.period.as_secs())),
        }
    }
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// An HTTP response (a robots.txt fetch counts too).
    Status {
        /// The HTTP status.
        status: u16,
        /// How long the request took.
        latency: Millis,
        /// The raw Retry-After value, if any.
        retry_after: Option<String>,
    },
    /// A timeout or connection failure.
    Failed {
        /// How long until it failed.
        latency: Millis,
    },
    /// No answer read in time because this process was not running when
    /// the deadline passed (stopped, suspended, starved): nothing is known
    /// of the host. The request counts as made (the delay runs from it),
    /// but not as the host's failure: no backoff, no failure counted, no
    /// recovery either, and its latency (the stall's) is not learnt.
    Stalled {
        /// How long until the timer fired.
        latency: Millis,
    },
}

/// The state of one key.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct HostState {
    /// Requests in flight now.
    pub in_flight: u32,
    /// The earliest the next request may start.
    pub next_allowed: UnixMillis,
    /// The base delay from configuration and robots.txt.
    pub base_delay: Millis,
    /// The current delay (base, raised by backoff).
    pub delay: Millis,
    /// Until when the server asked us to wait (Retry-After).
    pub retry_after_until: Option<UnixMillis>,
    /// Consecutive failures (429, 5xx, timeouts).
    pub failures: u32,
    /// Until when the host is paused after repeated failures.
    pub paused_until: Option<UnixMillis>,
    /// Why it is paused.
    pub pause_reason: Option<String>,
    /// Skipped for good (e.g. Crawl-delay above the maximum).
    pub skip: Option<String>,
    /// Moving average of response time, milliseconds.
    pub ewma_latency: Option<f64>,
    /// Window profile: window length (ms), 0 when not in use.
    pub window: Millis,
    /// Requests started, for deterministic jitter.
    pub started: u64,
    /// When the last request started.
    #[serde(default)]
    pub last_start: Option<UnixMillis>,
    /// When the request before it started (what a crawler's evidence
    /// measures the gap it kept from).
    #[serde(default)]
    pub previous_start: Option<UnixMillis>,
}

/// Everything in a key's state that paces it, but when its next request
/// may start, when its last one did, its requests in flight and its
/// latency average (see [`HostState::pacing`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pacing {
    previous_start: Option<UnixMillis>,
    started: u64,
    base_delay: Millis,
    delay: Millis,
    retry_after_until: Option<UnixMillis>,
    failures: u32,
    paused_until: Option<UnixMillis>,
    skipped: bool,
    window: Millis,
}

impl HostState {
    /// This state's pacing. A request that ends well, on a host at its
    /// base delay, changes none of it: only its count in flight, the
    /// latency average, and when it started (moved to when it really
    /// went out). A frontier on disk need not write that while the state
    /// it wrote at the release holds the host at least as long after a
    /// restart (see [`Politeness::restored_next`]).
    pub(crate) fn pacing(&self) -> Pacing {
        Pacing {
            previous_start: self.previous_start,
            started: self.started,
            base_delay: self.base_delay,
            delay: self.delay,
            retry_after_until: self.retry_after_until,
            failures: self.failures,
            paused_until: self.paused_until,
            skipped: self.skip.is_some(),
            window: self.window,
        }
    }
}

/// Where the delay in force for a key comes from: the one set, which a
/// crawler's evidence records as it is.
pub use mannerly_evidence::DelaySource;

/// The delay a key's latest request kept, and why: what a crawler's
/// evidence records beside the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// The gap required before the latest request, milliseconds.
    pub required_ms: Millis,
    /// Where it came from.
    pub source: DelaySource,
    /// When the request before the latest started.
    pub previous_start: Option<UnixMillis>,
}

/// What [`Politeness::start`] changed, so [`Politeness::unstart`] can undo it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started {
    next_allowed: UnixMillis,
    last_start: Option<UnixMillis>,
    after: UnixMillis,
}

/// Why a key may not start a request now, and until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wait {
    /// Try again at this time.
    Until {
        /// The instant to try again.
        at: UnixMillis,
        /// Which rule holds the key back.
        reason: HostHold,
    },
    /// Never (the host is skipped).
    Skipped {
        /// Why.
        reason: String,
    },
}

/// The controller over every key.
#[derive(Debug, Clone, Default)]
pub struct Politeness {
    /// The settings every key is paced by.
    pub config: Config,
    /// Each key's state, boxed: a hash table's slots are some twice the
    /// keys it holds, and a slot the size of a state (some 180 bytes) cost
    /// about 440 bytes a host at 30,000 hosts; a pointer's slot, 50.
    hosts: hashbrown::HashMap<Box<str>, Box<HostState>, crate::Hasher>,
}

impl Politeness {
    /// A controller with no key known yet.
    pub fn new(config: Config) -> Politeness {
        Politeness {
            config,
            hosts: hashbrown::HashMap::default(),
        }
    }

    /// The state of a key (created on first use).
    pub fn host(&mut self, key: &str) -> &mut HostState {
        let min = self.config.min_delay;
        // The name is copied only for a key not seen before.
        self.hosts.entry_ref(key).or_insert_with(|| {
            Box::new(HostState {
                base_delay: min,
                delay: min,
                ..HostState::default()
            })
        })
    }

    /// The state of a key, if it was ever used.
    pub fn get(&self, key: &str) -> Option<&HostState> {
        self.hosts.get(key).map(|h| &**h)
    }

    /// Restores a key's persisted state (delays never reset to zero).
    ///
    /// A request the state shows in flight was cut off by the process's
    /// death, but the server cannot know until it writes its answer: the
    /// host gets no request before that one's start plus
    /// [`Config::in_flight_bound`] (when a request of a live process would
    /// have timed out), and its delay counts from then.
    pub fn restore(&mut self, key: &str, state: HostState) {
        let mut s = state;
        s.next_allowed = self.restored_next(&s);
        self.adopt(key, s);
    }

    /// When a key whose state is `s` may next start once
    /// [`restore`](Self::restore)d.
    pub(crate) fn restored_next(&self, s: &HostState) -> UnixMillis {
        match (s.in_flight > 0, s.last_start) {
            (true, Some(start)) => s.next_allowed.max(
                start
                    .add_millis(self.config.in_flight_bound)
                    .add_millis(s.delay),
            ),
            _ => s.next_allowed,
        }
    }

    /// Takes a key's state as another owner left it (a fleet's store, when
    /// the host comes to this worker): requests it shows in flight are that
    /// owner's, over by the time the host was given out (a lease outlasts
    /// a request), so they hold nothing here.
    pub fn adopt(&mut self, key: &str, state: HostState) {
        let mut s = state;
        s.in_flight = 0;
        self.hosts.insert(key.into(), Box::new(s));
    }

    /// Drops a key's state: it is as if never used (its next use starts
    /// from the configured delays).
    pub fn forget(&mut self, key: &str) {
        self.hosts.remove(key);
    }

    /// Every key with its state.
    pub fn keys(&self) -> impl Iterator<Item = (&str, &HostState)> {
        self.hosts.iter().map(|(k, h)| (&**k, &**h))
    }

    /// Applies robots.txt pacing for a key according to the profile.
    pub fn set_robots(&mut self, key: &str, pacing: RobotsPacing) {
        let c = self.config.clone();
        let h = self.host(key);
        h.window = 0;
        h.skip = None;
        let crawl = pacing
            .crawl_delay
            .filter(|d| d.is_finite() && *d >= 0.0)
            .map(|d| (d * 1000.0) as Millis);
        let rate = pacing
            .request_rate
            .filter(|(n, _)| *n > 0)
            .map(|(n, period)| period.saturating_mul(1000) / u64::from(n));
        let mut base = c.min_delay;
        match c.profile {
            CrawlDelayProfile::Ignore => {}
            CrawlDelayProfile::Window => {
                if let Some(d) = crawl {
                    h.window = d.clamp(1_000, 30_000);
                }
            }
            CrawlDelayProfile::Literal => {
                // The file's value, but never below the crawler's own
                // minimum: `Crawl-delay: 0` must not undo `min_delay`.
                if let Some(d) = crawl {
                    base = d.max(c.min_delay);
                }
            }
            CrawlDelayProfile::Conservative => {
                base = base.max(crawl.unwrap_or(0)).max(rate.unwrap_or(0));
            }
        }
        if c.profile != CrawlDelayProfile::Ignore && c.profile != CrawlDelayProfile::Window {
            if let Some(r) = rate {
                base = base.max(r);
            }
        }
        if base > c.max_crawl_delay {
            match c.over_max {
                OverMax::Skip => {
                    h.skip = Some(format!(
                        "robots.txt asks for {} between requests, more than the {} maximum: host skipped",
                        fmt_secs(base),
                        fmt_secs(c.max_crawl_delay)
                    ));
                }
                OverMax::Cap => base = c.max_crawl_delay,
            }
        }
        h.base_delay = base;
        h.delay = h.delay.max(base);
        // A delay learnt after a request started (typically from the
        // robots.txt that request fetched) applies to that request too.
        if let Some(last) = h.last_start {
            let mut next = last.add_millis(h.delay);
            if let Some(k) = last.as_millis().checked_div(h.window) {
                next = next.max(UnixMillis((k + 1).saturating_mul(h.window)));
            }
            h.next_allowed = h.next_allowed.max(next);
        }
    }

    /// May `key` start a request at `now`? `Ok(())` or why not.
    pub fn check(&self, key: &str, now: UnixMillis) -> Result<(), Wait> {
        let Some(h) = self.hosts.get(key) else {
            return Ok(());
        };
        if let Some(reason) = &h.skip {
            return Err(Wait::Skipped {
                reason: reason.clone(),
            });
        }
        if let Some(p) = h.paused_until.filter(|p| now < *p) {
            return Err(Wait::Until {
                at: p,
                reason: HostHold::Paused,
            });
        }
        if let Some(r) = h.retry_after_until.filter(|r| now < *r) {
            return Err(Wait::Until {
                at: r,
                reason: HostHold::RetryAfter,
            });
        }
        if h.in_flight >= self.config.max_in_flight {
            return Err(Wait::Until {
                at: now.add_millis(1),
                reason: HostHold::InFlight {
                    in_flight: h.in_flight,
                    limit: self.config.max_in_flight,
                },
            });
        }
        if now < h.next_allowed {
            return Err(Wait::Until {
                at: h.next_allowed,
                reason: HostHold::Delay {
                    delay: h.delay.max(h.window),
                },
            });
        }
        Ok(())
    }

    /// The delay the key's latest request (just started) was held to, and
    /// why: a Retry-After or a pause that ended after the request before
    /// it, else the delay in force (raised by backoff or by response
    /// times, or set by robots.txt, or the crawler's minimum).
    pub fn pace(&self, key: &str) -> Pace {
        let Some(h) = self.hosts.get(key) else {
            return Pace {
                required_ms: self.config.min_delay,
                source: DelaySource::Default,
                previous_start: None,
            };
        };
        let prev = h.previous_start;
        let mut required = h.delay.max(h.window);
        let held = |until: Option<UnixMillis>| {
            until
                .zip(prev)
                .map(|(u, p)| u.millis_since(p))
                .filter(|gap| *gap > required)
        };
        let source = if let Some(gap) = held(h.retry_after_until) {
            required = gap;
            DelaySource::RetryAfter
        } else if let Some(gap) = held(h.paused_until) {
            required = gap;
            DelaySource::Backoff
        } else if h.delay > h.base_delay {
            let by_latency = h
                .ewma_latency
                .map(|e| (e * self.config.latency_factor) as Millis);
            if by_latency.is_some_and(|l| l >= h.delay) {
                DelaySource::Adaptive
            } else {
                DelaySource::Backoff
            }
        } else if h.base_delay > self.config.min_delay || h.window > 0 {
            DelaySource::CrawlDelay
        } else {
            DelaySource::Default
        };
        Pace {
            required_ms: required,
            source,
            previous_start: prev,
        }
    }

    /// What holds a key back now, or `None` (its `Display` is the text
    /// the crawl's log shows).
    pub fn why_not_now(&self, key: &str, now: UnixMillis) -> Option<Hold> {
        match self.check(key, now) {
            Ok(()) => None,
            Err(Wait::Until { at, reason }) => {
                let pause = self.hosts.get(key).and_then(|h| h.pause_reason.as_deref());
                Some(Hold::of_host(key, reason, at.millis_since(now), pause))
            }
            Err(Wait::Skipped { reason }) => Some(Hold::Skipped {
                key: key.to_owned(),
                reason,
            }),
        }
    }

    /// Records a request start (call only after `check` said yes).
    pub fn start(&mut self, key: &str, now: UnixMillis) -> Started {
        let jitter = self.config.jitter;
        let h = self.host(key);
        let token = Started {
            next_allowed: h.next_allowed,
            last_start: h.last_start,
            after: UnixMillis::EPOCH,
        };
        h.in_flight += 1;
        h.started += 1;
        h.previous_start = h.last_start;
        h.last_start = Some(now);
        let mut gap = h.delay;
        if jitter > 0.0 {
            let mut x = h.started.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key.len() as u64;
            x ^= x >> 29;
            gap += ((x % 1000) as f64 / 1000.0 * jitter * gap as f64) as Millis;
        }
        let mut next = now.add_millis(gap);
        // One fetch per window: the next window after this one.
        if let Some(k) = now.as_millis().checked_div(h.window) {
            next = next.max(UnixMillis((k + 1).saturating_mul(h.window)));
        }
        h.next_allowed = h.next_allowed.max(next);
        Started {
            after: h.next_allowed,
            ..token
        }
    }

    /// Undoes [`start`](Self::start) for a request that was never sent.
    /// The next-allowed time goes back only if nothing has moved it since.
    pub fn unstart(&mut self, key: &str, started: &Started) {
        let h = self.host(key);
        h.in_flight = h.in_flight.saturating_sub(1);
        h.started = h.started.saturating_sub(1);
        if h.next_allowed == started.after {
            h.next_allowed = started.next_allowed;
            h.last_start = started.last_start;
        }
    }

    /// Records how a request ended and adapts the key's pacing.
    pub fn finish(&mut self, key: &str, now: UnixMillis, outcome: &Outcome) {
        let c = self.config.clone();
        let h = self.host(key);
        h.in_flight = h.in_flight.saturating_sub(1);
        let latency = match outcome {
            Outcome::Status { latency, .. } | Outcome::Failed { latency } => *latency,
            Outcome::Stalled { .. } => return,
        };
        h.ewma_latency = Some(match h.ewma_latency {
            Some(e) => 0.8 * e + 0.2 * latency as f64,
            None => latency as f64,
        });
        // The request went out `latency` before `now`. When that is later
        // than the start recorded at release (the caller's queue held it
        // back), the delay counts from when it really went out.
        let sent = now.sub_millis(latency);
        if h.last_start.is_some_and(|s| sent > s) {
            h.last_start = Some(sent);
            h.next_allowed = h.next_allowed.max(sent.add_millis(h.delay));
        }
        let (bad, retry) = match outcome {
            Outcome::Status {
                status,
                retry_after,
                ..
            } => {
                let bad = matches!(status, 429 | 500 | 502 | 503 | 504);
                let retry = if matches!(status, 429 | 503) {
                    retry_after
                        .as_deref()
                        .and_then(|v| mannerly_time::parse_retry_after(v, now))
                        .map(|at| at.millis_since(now))
                } else {
                    None
                };
                (bad, retry)
            }
            Outcome::Failed { .. } | Outcome::Stalled { .. } => (true, None),
        };
        if let Some(wait) = retry {
            let until = now.add_millis(wait.min(c.retry_after_cap));
            h.retry_after_until = Some(h.retry_after_until.unwrap_or_default().max(until));
            h.next_allowed = h.next_allowed.max(until);
        }
        if bad {
            h.failures += 1;
            h.delay = ((h.delay as f64 * c.backoff_factor) as Millis)
                .clamp(h.base_delay, c.max_delay.max(h.base_delay));
            if h.failures >= c.pause_after {
                h.paused_until = Some(now.add_millis(c.pause_for));
                h.pause_reason = Some(format!(
                    "{} consecutive failures: paused for {}",
                    h.failures,
                    fmt_secs(c.pause_for)
                ));
                h.failures = 0;
            }
        } else {
            h.failures = 0;
            let d = h.delay as f64 - (h.delay as f64 - h.base_delay as f64) * c.recovery;
            h.delay = (d.round() as Millis).max(h.base_delay);
        }
        if c.latency_factor > 0.0 {
            if let Some(e) = h.ewma_latency {
                h.delay = h
                    .delay
                    .max((e * c.latency_factor) as Millis)
                    .min(c.max_delay.max(h.base_delay));
            }
        }
        // A request that ended badly pushes the next start out by the new delay.
        if bad {
            h.next_allowed = h.next_allowed.max(now.add_millis(h.delay));
        }
    }
}

#[cfg(test)]
mod tests;
