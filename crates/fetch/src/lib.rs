//! Fetching robots.txt correctly over time.
//!
//! Four parts, each usable alone:
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
//! - [`guard`]: refusing addresses a server must not be made to contact
//!   for a stranger (SSRF): `mannerly serve`'s robots.txt fetches and the
//!   Web Bot Auth verifier's key-directory fetches resolve names through
//!   it.
//!
//! `policy` does no I/O and reads no clock; `http` and `guard` touch the
//! network (`http` also times its deadlines with tokio's timer); `cache`
//! awaits its fetcher and its `Store`.
//!
//! Time always comes from a [`Clock`]; tests use [`FakeClock`] and drive
//! 12 hours and 30 days in microseconds.
//!
//! ```
//! use std::time::Duration;
//! use mannerly_fetch::policy::{AccessKind, FetchOutcome, HttpResponse, OriginState, PolicyConfig};
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
//! assert_eq!(d.access.kind(), AccessKind::DisallowAll);
//! assert!(d.reason.starts_with("503 since 2026-11-20T10:00:00Z, phase 1 of 3: complete disallow"));
//! // Thirteen hours later, still failing, and no good copy to fall back on:
//! let d = state.apply(&status(503), t0 + Duration::from_secs(13 * 3600), &config);
//! assert!(d.reason.contains("phase 2 of 3: no good copy"));
//! ```
//!
//! # Design notes
//!
//! - **Decision vs. retry.** A failure decision expires at the next phase
//!   boundary (12 h, 30 days) so the switch happens on time. The next fetch is
//!   tracked separately (`retry_at`, from backoff or Retry-After). The cache
//!   re-evaluates the phase without fetching until `retry_at`, so a
//!   Retry-After that reaches past a boundary is still honoured.
//! - **The redirect chain is ours.** reqwest's automatic redirects are off.
//!   `http.rs` follows up to 5 hops across hosts and schemes, detects loops,
//!   and returns the chain. The cache files the result under the origin that
//!   was asked, never under the target's origin.
//! - **Reading less.** The body is read to the limit plus one byte, then the
//!   response is dropped, which closes the connection. Decompression happens in
//!   the stream, so a gzip bomb costs 500 KiB of decoded bytes.
//! - **Deterministic jitter.** Backoff jitter comes from a hash of the origin
//!   and the attempt number. Retries spread out across origins, and tests stay
//!   exact.
//! - **no-store.** A body sent with `Cache-Control: no-store` is used from
//!   memory for `min_ttl` (60 s), so the crawler does not refetch robots.txt
//!   for every URL, and it is never handed to the `Store`.

#![deny(missing_docs)]

pub mod cache;
pub mod freshness;
mod good_copy;
pub mod guard;
pub mod http;
mod origin;
mod outcome;
pub mod policy;

pub use cache::{CacheConfig, CheckResult, MemoryStore, NoStore, RobotsCache, Store, StoreFuture};
pub use http::{
    FetchConfig, Fetcher, GetOutcome, HopGate, HttpFetcher, NotSent, RequestSigner, SendHook,
    Validators,
};
pub use mannerly_time as time;
pub use mannerly_time::{Clock, FakeClock, SystemClock, UnixMillis};
pub use origin::Origin;
pub use policy::{
    Access, AccessKind, Basis, Decision, FetchOutcome, OriginState, PolicyConfig, Profile,
};

/// Errors of this crate. Match on the variant: each says what was wrong
/// with which input, and carries the underlying error as its source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The text is not a URL at all.
    #[error("'{url}' is not a URL: {source}")]
    UnparsableUrl {
        /// The text given.
        url: String,
        /// What the URL parser said.
        #[source]
        source: url::ParseError,
    },
    /// A URL, but not one with a robots.txt (RFC 9309 §2.3).
    #[error("'{url}' is not a usable URL: {problem}")]
    BadUrl {
        /// The URL given.
        url: String,
        /// Which requirement it fails.
        problem: UrlProblem,
    },
    /// The HTTP client could not be built (TLS roots, proxy settings).
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The configured User-Agent cannot go in a header: it holds a
    /// control character (other than tab).
    #[error("the User-Agent {agent:?} cannot be sent as a header: it holds a control character")]
    UserAgent {
        /// The User-Agent configured.
        agent: String,
    },
}

/// Why a URL cannot name a robots.txt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlProblem {
    /// Not `http` or `https`.
    #[error("only http and https URLs have a robots.txt")]
    Scheme,
    /// No host (e.g. `http:/path`).
    #[error("the URL has no host")]
    NoHost,
    /// No port, explicit or known for the scheme.
    #[error("the URL has no port")]
    NoPort,
}

/// A [`Store`] failed to load or save an origin's state.
#[derive(Debug, thiserror::Error)]
#[error("robots.txt state store, {op} {origin}: {source}")]
pub struct StoreError {
    /// `load` or `save`.
    pub op: &'static str,
    /// The origin concerned.
    pub origin: String,
    /// What the store's backend said.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl StoreError {
    /// The error of operation `op` (`load` or `save`) on `origin`.
    pub fn new(
        op: &'static str,
        origin: &Origin,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError {
            op,
            origin: origin.to_string(),
            source: Box::new(source),
        }
    }
}
