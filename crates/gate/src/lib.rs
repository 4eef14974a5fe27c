//! `mannerly gate`: decisions at the server's door. nginx (`auth_request`),
//! Caddy (`forward_auth`) and Traefik (`ForwardAuth`) ask the gate about
//! each request before serving it; the gate tells who the client is and
//! answers allow (`200`), deny (`403`) or slow (`429` with `Retry-After`;
//! `403` with `X-Mannerly-Action: slow` for nginx), with
//! `X-Mannerly-Identity` and `X-Mannerly-Action` for the server's log.
//!
//! - [`policy`]: the TOML policy, rules tried in order, line-numbered
//!   errors.
//! - [`class`]: the four classes (verified, spoofer, bot, browser), by the
//!   audit's own rule ([`mannerly_audit::Checked`]).
//! - [`decide`]: the decision as plain code over plain data, time passed in.
//! - [`forwarded`]: the original request from the forward-auth headers.
//! - [`server`]: the endpoint; [`keys`], [`ranges`], [`rdns`]: the checks'
//!   caches, filled so that no request waits for them more than once.
//!
//! # Design notes
//!
//! - **One identity rule.** A request's class comes from the same
//!   [`Checked::identity`](mannerly_audit::Checked::identity) the audit
//!   uses, over the same checks: a Web Bot Auth signature, the operator's
//!   ranges, forward-confirmed reverse DNS. A log audited tomorrow says of
//!   a request what the gate said of it today.
//! - **Nothing slow on the path.** Ranges load in the background at start
//!   (a crawler is judged without them until then); reverse DNS is looked
//!   up in the background for the requests after the first; a key
//!   directory is fetched once for all requests waiting on it, then served
//!   from memory and refreshed behind. Only signature checking and the
//!   policy run per request.
//! - **Bounded.** Buckets, reverse-DNS answers and directories live in
//!   [`recent::Recent`] maps of fixed size: a million distinct addresses
//!   and tokens cost what the cap costs. Forgetting a bucket gives that
//!   client a full one, what an idle spell would have given it.
//! - **Forwarded headers are believed only from trusted peers**
//!   (loopback unless told otherwise); the client is the rightmost
//!   `X-Forwarded-For` address that is not a trusted proxy.
//! - **robots.txt first.** With `robots` in the policy, a bot (any class
//!   but browser) asking for a path it disallows to its token is refused
//!   before any rule is tried.

#![deny(missing_docs)]

pub mod bucket;
pub mod class;
pub mod decide;
pub mod forwarded;
pub mod keys;
pub mod policy;
mod policy_file;
pub mod ranges;
pub mod rdns;
pub mod recent;
pub mod server;
pub mod tally;

pub use class::{Class, Visitor};
pub use decide::{Asked, Basis, Decision, Gate, Verdict};
pub use policy::{Action, Policy, PolicyError, PolicyRule, Who};
pub use server::{serve, Door, Settings};
pub use tally::Tally;
