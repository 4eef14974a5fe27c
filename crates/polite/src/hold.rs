//! Why a URL waits ([`Hold`]): one closed set, answered by the controller
//! and the frontiers, whose `Display` is the text the crawl's log and
//! status show.

/// What holds a URL back now.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Hold {
    /// No politeness key can be made from the URL.
    BadUrl(String),
    /// Its host waits for a slot among the hosts in progress.
    Parked {
        /// Hosts in progress, the bound.
        open: usize,
    },
    /// Its origin's robots.txt is being fetched.
    RobotsFetching {
        /// The origin (`https://a.test`).
        origin: String,
    },
    /// Its origin's robots.txt could not be had: no page goes until it is.
    RobotsUnavailable {
        /// The origin.
        origin: String,
        /// What the fetch met (`503`, a network error, ...).
        reason: String,
        /// Until it is fetched again.
        next_in: u64,
    },
    /// Its host was given up.
    Skipped {
        /// The host's key.
        key: String,
        /// Why.
        reason: String,
    },
    /// Its host is paused after consecutive failures.
    Paused {
        /// The host's key.
        key: String,
        /// How many failures, and for how long.
        reason: String,
        /// Until the pause ends.
        next_in: u64,
    },
    /// The server asked to retry after a while.
    RetryAfter {
        /// The host's key.
        key: String,
        /// Until then.
        next_in: u64,
    },
    /// As many requests in flight as the host allows.
    InFlight {
        /// The host's key.
        key: String,
        /// In flight now.
        in_flight: u32,
        /// The most allowed.
        limit: u32,
        /// Until it is asked again.
        next_in: u64,
    },
    /// The delay between requests (the minimum, a Crawl-delay, a
    /// Request-rate, or raised by backoff).
    Delay {
        /// The host's key.
        key: String,
        /// The delay in force, start to start.
        delay: u64,
        /// Until the next start.
        next_in: u64,
    },
}

/// Which of a host's own rules holds it back: what
/// [`Politeness::check`](crate::controller::Politeness::check) answers, a
/// plain value made without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostHold {
    /// Paused after consecutive failures.
    Paused,
    /// The server's Retry-After.
    RetryAfter,
    /// As many requests in flight as allowed.
    InFlight {
        /// In flight now.
        in_flight: u32,
        /// The most allowed.
        limit: u32,
    },
    /// The delay between requests, start to start.
    Delay {
        /// The delay in force.
        delay: u64,
    },
}

impl Hold {
    /// The [`Hold`] of a host's own rule, for `key`, `next_in` from now;
    /// `pause` says why a paused host is paused.
    pub fn of_host(key: &str, hold: HostHold, next_in: u64, pause: Option<&str>) -> Hold {
        let key = key.to_owned();
        match hold {
            HostHold::Paused => Hold::Paused {
                key,
                reason: pause.unwrap_or("paused").to_owned(),
                next_in,
            },
            HostHold::RetryAfter => Hold::RetryAfter { key, next_in },
            HostHold::InFlight { in_flight, limit } => Hold::InFlight {
                key,
                in_flight,
                limit,
                next_in,
            },
            HostHold::Delay { delay } => Hold::Delay {
                key,
                delay,
                next_in,
            },
        }
    }
}

/// `5 s`, `1.5 s`.
pub(crate) fn fmt_secs(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

impl std::fmt::Display for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Hold::BadUrl(why) => f.write_str(why),
            Hold::Parked { open } => {
                write!(
                    f,
                    "waits for a slot: {open} hosts are in progress, the bound"
                )
            }
            Hold::RobotsFetching { origin } => write!(f, "{origin}/robots.txt is being fetched"),
            Hold::RobotsUnavailable {
                origin,
                reason,
                next_in,
            } => write!(
                f,
                "{origin}/robots.txt: {reason}; fetched again at +{} s",
                next_in.div_ceil(1000)
            ),
            Hold::Skipped { key, reason } => write!(f, "{key}: {reason}"),
            Hold::Paused {
                key,
                reason,
                next_in,
            } => write!(f, "{key}: {reason}; next at +{}", fmt_secs(*next_in)),
            Hold::RetryAfter { key, next_in } => write!(
                f,
                "{key}: the server asked to retry after {0}; next at +{0}",
                fmt_secs(*next_in)
            ),
            Hold::InFlight {
                key,
                in_flight,
                limit,
                next_in,
            } => write!(
                f,
                "{key}: {in_flight} request(s) already in flight (limit {limit}); next at +{}",
                fmt_secs(*next_in)
            ),
            Hold::Delay {
                key,
                delay,
                next_in,
            } => write!(
                f,
                "{key}: delay of {} between requests (start to start); next at +{}",
                fmt_secs(*delay),
                fmt_secs(*next_in)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hold_says_what_and_until_when() {
        let delay = Hold::of_host("a.test", HostHold::Delay { delay: 5_000 }, 4_000, None);
        assert_eq!(
            delay.to_string(),
            "a.test: delay of 5 s between requests (start to start); next at +4 s"
        );
        let retry = Hold::of_host("a.test", HostHold::RetryAfter, 1_500, None);
        assert_eq!(
            retry.to_string(),
            "a.test: the server asked to retry after 1.5 s; next at +1.5 s"
        );
        let pause = Hold::of_host("a.test", HostHold::Paused, 600_000, Some("3 failures"));
        assert_eq!(pause.to_string(), "a.test: 3 failures; next at +600 s");
        let robots = Hold::RobotsUnavailable {
            origin: "https://a.test".into(),
            reason: "503".into(),
            next_in: 1_200,
        };
        assert_eq!(
            robots.to_string(),
            "https://a.test/robots.txt: 503; fetched again at +2 s"
        );
    }
}
