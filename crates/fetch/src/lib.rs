//! Fetching robots.txt correctly over time.
//!
//! Three layers, each usable alone:
//!
//! - [`policy`]: the sans-IO state machine. Given the outcome of a fetch and
//!   the time, it decides the origin's robots state (rules, allow-all or
//!   disallow-all), how long it holds, and why. No I/O, no clock of its own.
//! - [`http`]: a thin reqwest (rustls) layer that performs one fetch: its
//!   own User-Agent, timeouts, up to 5 redirects followed by hand, reading
//!   at most the size limit (the rest is never downloaded), and
//!   Content-Encoding decoded under the same cap.
//! - [`cache`]: [`RobotsCache`], which crawlers call with a URL. It is
//!   bounded in entries and bytes, single-flight (a thousand concurrent
//!   lookups for one origin cause one fetch), refreshes conditionally
//!   (ETag / Last-Modified, 304), and persists through a [`Store`].
//!
//! Time always comes from a [`Clock`]; tests use [`FakeClock`] and drive
//! 12 hours and 30 days in microseconds.
//!
//! ```
//! use std::time::Duration;
//! use mannerly_fetch::policy::{FetchOutcome, HttpResponse, OriginState, PolicyConfig};
//! use mannerly_fetch::{time::test_epoch, Origin};
//!
//! let config = PolicyConfig::default();
//! let mut state = OriginState::new(Origin::of("https://example.com/").unwrap());
//! let t0 = test_epoch();
//! let status = |code: u16| FetchOutcome::Response {
//!     response: HttpResponse { status: code, headers: vec![], body: vec![], body_cut: false,
//!                              url: "https://example.com/robots.txt".into() },
//!     redirects: vec![],
//! };
//! let d = state.apply(&status(503), t0, &config);
//! assert_eq!(d.access.kind(), "disallow-all");
//! assert!(d.reason.starts_with("503 since 2026-11-20T10:00Z, phase 1 of 3: complete disallow"));
//! // Thirteen hours later, still failing, and no good copy to fall back on:
//! let d = state.apply(&status(503), t0 + Duration::from_secs(13 * 3600), &config);
//! assert!(d.reason.contains("phase 2 of 3: no good copy"));
//! ```

pub mod cache;
pub mod clock;
pub mod http;
mod origin;
pub mod policy;
pub mod time;

pub use cache::{CacheConfig, CheckResult, MemoryStore, NoStore, RobotsCache, Store};
pub use clock::{Clock, FakeClock, SystemClock};
pub use http::{FetchConfig, Fetcher, GetOutcome, HttpFetcher, Validators};
pub use origin::Origin;
pub use policy::{Access, Decision, FetchOutcome, OriginState, PolicyConfig, Profile};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("'{url}' is not a usable URL: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}
