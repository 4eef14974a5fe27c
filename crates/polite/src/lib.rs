//! Per-host politeness, sans-IO: time is passed in as milliseconds on the
//! caller's clock, so simulations and tests never sleep.
//!
//! - [`controller`]: per key, requests in flight (limit 1), delays
//!   measured start-to-start, Crawl-delay by engine profile, Request-rate,
//!   Retry-After (capped), multiplicative backoff with slow recovery, pauses
//!   after repeated failures, and `why_not_now`.
//! - [`key`]: which URLs share a budget: host, host and port, registered
//!   domain (public suffix list) or server address.
//! - [`frontier`]: Mercator's front (priorities) and back (a queue per key,
//!   a heap of keys by next-allowed time), deduplication, backpressure,
//!   the robots.txt gate, and [`frontier::LocalFrontier`], in memory or on
//!   disk (fjall), surviving kill -9: queued URLs are kept, in-flight ones
//!   re-issued, host state restored.
//!
//! ```
//! use mannerly_polite::controller::{Config, Outcome, Politeness, RobotsPacing, UnixMillis};
//! let t0 = UnixMillis::from_secs(1_795_168_800);
//! let mut p = Politeness::new(Config::default());
//! p.set_robots("example.com", RobotsPacing { crawl_delay: Some(5.0), request_rate: None });
//! assert!(p.check("example.com", t0).is_ok());
//! p.start("example.com", t0);
//! p.finish("example.com", t0.add_millis(800), &Outcome::Status { status: 200, latency: 800, retry_after: None });
//! assert_eq!(p.why_not_now("example.com", t0.add_millis(1_000)).unwrap(),
//!            "example.com: delay of 5 s between requests (start to start); next at +4 s");
//! ```

#![deny(missing_docs)]

pub mod controller;
pub mod frontier;
pub mod key;
mod store;
#[cfg(feature = "testing")]
pub mod testing;
