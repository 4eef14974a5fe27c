//! A crawl frontier shared by a fleet of workers on a Redis-protocol server
//! (Redis 7 or Valkey, standalone or Cluster): exactly one worker owns a
//! host at a time, politeness state outlives any worker, and a worker may
//! die, pause or be cut off at any moment without a URL being lost or a
//! host being fetched by two workers at once.
//!
//! **State of this crate (issue #14):** the store and its protocol
//! ([`store`]: enqueue, claim, renew, commit, with fencing) and the key
//! layout ([`layout`]) are here and tested against a real server. The
//! `Frontier` implementation over them, the crawler's `--frontier redis://`
//! mode, Cluster tests and the fleet benchmark are not yet.
//!
//! # The protocol
//!
//! - **Partitions.** A host belongs to partition `xxh3(host) % P` (P fixed
//!   when the crawl is created and checked by every worker that joins).
//!   Every key of a partition carries its hash tag `{crawl:p}`, so each
//!   script touches one Cluster slot and runs atomically on one node.
//! - **Claim** (one script): leases that expired go back to `due`; the
//!   earliest due host is taken; a fencing token is issued (`INCR`) and the
//!   lease recorded; the host's floor ("not before") becomes now + its
//!   delay. The claimed URL stays queued.
//! - **Renew** just before sending: a worker whose lease has lapsed (it was
//!   paused, or the network was) learns it and does not send.
//! - **Commit** (one script): refused when the token is not the owner's;
//!   otherwise the URL leaves the queue (or goes back, for a retry), the
//!   host's politeness state is written, and the host is due again at the
//!   time the worker computed, never earlier than the floor.
//! - **Enqueue** (one script per URL, any worker): the partition's seen-set
//!   makes it idempotent, so outlinks are enqueued before the commit that
//!   ends their page and a retried page re-enqueues nothing twice.
//!
//! Fetching is at least once: a URL leaves the queue only at a commit, so
//! a worker that dies mid-fetch leaves it for the next owner, after its
//! lease, and the floor keeps that next request a full delay after the
//! lost one. Host state only moves forward: only the token holder writes
//! it, and the floor only rises.
//!
//! # Time
//!
//! [`store::TimeSource::Server`] reads the server's clock (`TIME`) inside
//! each script, so workers with skewed clocks still agree on leases and
//! due times; [`store::TimeSource::Caller`] uses the `now` passed in, for
//! tests on a fake clock.

pub mod layout;
pub mod store;

pub use layout::{Layout, LayoutError, DEFAULT_PARTITIONS};
pub use store::{Claim, Claimed, Commit, Enqueued, FleetError, FleetStore, Settle, TimeSource};
