//! Per-host politeness, sans-IO: time is passed in as milliseconds on the
//! caller's clock, so simulations and tests never sleep.
//!
//! Built so far: the [`controller`] (delays start-to-start, Crawl-delay by
//! engine profile, Request-rate, Retry-After, multiplicative backoff with
//! slow recovery, pauses, `why_not_now`) and an in-memory [`frontier`]
//! (per-key back queues, a min-heap of keys by next-allowed time,
//! deduplication, backpressure, skip reporting) behind the `Frontier`
//! trait. Persistence, the bounded on-disk seen-set and the registered-
//! domain and IP keys come next (issue 6 is not finished).
//!
//! ```
//! use mannerly_polite::controller::{Config, Outcome, Politeness, RobotsPacing};
//! let mut p = Politeness::new(Config::default());
//! p.set_robots("example.com", RobotsPacing { crawl_delay: Some(5.0), request_rate: None });
//! assert!(p.check("example.com", 0).is_ok());
//! p.start("example.com", 0);
//! p.finish("example.com", 800, &Outcome::Status { status: 200, latency: 800, retry_after: None }, 0);
//! assert_eq!(p.why_not_now("example.com", 1_000).unwrap(),
//!            "example.com: delay of 5 s between requests (start to start); next at +4 s");
//! ```

pub mod controller;
pub mod frontier;
pub mod key;
mod store;
