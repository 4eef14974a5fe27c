//! Per-host politeness and the frontier. The policy is sans-IO: time is
//! passed in as [`UnixMillis`](controller::UnixMillis), nothing reads a
//! clock or sleeps, so simulations and tests run on a fake clock. The one
//! piece of I/O is the on-disk store behind [`frontier::LocalFrontier::open`]
//! (fjall, local files); [`frontier::LocalFrontier::in_memory`] does none.
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
//! assert_eq!(p.why_not_now("example.com", t0.add_millis(1_000)).unwrap().to_string(),
//!            "example.com: delay of 5 s between requests (start to start); next at +4 s");
//! ```
//!
//! # Design notes
//!
//! - **Why fjall.** The frontier writes far more than it reads: per URL, a
//!   seen-set insert and a queue insert, then a queue delete, an in-flight
//!   insert and delete, and two host-state updates. `tools/storebench` (its own
//!   workspace, `cargo run --release -- 1000000 100000 1000`) runs that pattern
//!   on all three candidates, a commit every 1,000 operations, 1 M URLs over
//!   100,000 hosts. Enqueue / release+complete, in URLs/s:
//!
//!   | store | kill -9 safe | power-loss safe |
//!   |---|---|---|
//!   | fjall 3.1 | 115,619 / 69,205 | 133,177 / 84,278 |
//!   | redb 4.5 | (needs fsync) | 28,654 / 19,851 |
//!   | SQLite 3 (rusqlite 0.41, bundled, WAL) | 29,940 / 49,314 | 23,954 / 44,716 |
//!
//!   fjall is 2–4× faster on this pattern. A fjall batch that has been
//!   committed is in the OS's buffers, so it survives the process dying
//!   without an fsync; redb rolls back every commit that was not fsynced, so
//!   it pays the fsync to get the same guarantee. fjall is pure Rust and builds
//!   in about a minute here; bundled SQLite compiles C. The cost is an LSM
//!   tree's: deletes are tombstones until compaction, so the directory is
//!   larger than the live data (1.5 GB after enqueueing 10 M URLs). The store
//!   groups its tables in three keyspaces by how they are written (fjall
//!   writes a table and fsyncs some fifteen times to create a keyspace:
//!   seven of them were 9 ms of a crawl's CPU), memtables capped at 1 MiB,
//!   so memory stays flat as the crawl grows.
//! - **A bounded number of hosts in progress.** With
//!   `FrontierConfig::max_open_keys` a key is open from its first release
//!   until it has nothing queued or in flight; a key that comes up ready
//!   while the bound is reached is parked (out of the heaps) until one
//!   closes. What a host in progress costs its caller (a kept connection,
//!   its rules in a cache) is then paid for that many hosts, not all of
//!   them. Disk and memory frontiers park alike (`tests/frontier_properties.rs`).
//! - **Two fjall habits worked around.** fjall replays its whole active
//!   journal at every open (about 1 µs an entry, flushed or not), and starts
//!   a new one only past 64 MB: a clean close over 4 MiB of journal writes
//!   filler until fjall rotates, so the next open replays next to nothing
//!   (1.40 s → 0.07 s at 10 M URLs). And fjall keeps an old journal until
//!   every keyspace written in it has tables as new; a keyspace emptied by
//!   deletes and compacted to no tables pinned them for good, so each
//!   flush first rewrites a one-byte marker in the keyspaces that delete.
//!   Only speed and disk space depend on either.
//! - **Whole operations.** Each `enqueue`, release, `complete` and `cancel` is
//!   one write batch, or part of one: with `commit_every` above 1 several
//!   operations share a batch, committed when the owner calls
//!   `LocalFrontier::commit` (the crawler does once per turn of its loop),
//!   and a kill keeps a prefix of the operations, never part of one. The
//!   only read that commits the pending batch first is a window refill, and
//!   it happens before the operation writes anything, so a commit never
//!   splits an operation (the crash test found the version where a refill
//!   did split one); a seen-set probe after a Bloom hit answers from the
//!   pending batch and the store together.
//! - **Reopening reads hosts, not URLs.** `sync` and a clean close write a
//!   summary beside the store (each key's count and head, the next
//!   sequence number, the Bloom filter's bits) tagged with the store's
//!   generation, which every committed batch advances. `open` trusts it
//!   only when the generation matches, the checksum holds and the Bloom
//!   filter contains a sample of the seen-set; then it reads state
//!   proportional to the keys and loads each key's window on first use.
//!   Otherwise (after a kill -9, a torn or stale file) it rebuilds by
//!   reading every queued URL and seen fingerprint, as before.
//! - **Memory grows with hosts, not URLs.** On disk, each key keeps its first
//!   `window` (8) URLs in memory, a count, and a lower bound of what is only on
//!   disk, so a refill is one range read that starts past every tombstone.
//! - **The trait leaks nothing local.** Every call is async and fallible,
//!   a release carries an opaque lease, `Stats` may be estimates, and
//!   durability is an explicit `sync`. A distributed backend (one owner per
//!   host) can hand leases across processes and await its server without
//!   blocking a runtime.
//! - **Why async, and `&mut self`.** A backend on a server (Redis) has a
//!   round trip in every call; a synchronous trait would block the
//!   crawler's runtime thread for each. `async fn` with `Send` futures lets
//!   it await instead, and costs the in-process backend one poll of a
//!   future that is ready at once: the frontier benchmark runs through the
//!   trait. Calls take `&mut self` because a crawl loop makes one decision
//!   at a time (release, then complete); a fleet runs one handle per
//!   worker. The trait is not object-safe; code is generic over
//!   `F: Frontier`, as ripgrep's searcher is generic over its matcher.
//!   `LocalFrontier` has this one API, no synchronous copy of it: code
//!   that is not async calls it through `frontier::block_on`, which
//!   returns at once since its calls never wait.
//! - **One contract for every backend.** `testing::check_contract` (feature
//!   `testing`) plays random operations against a backend and the
//!   in-memory reference and compares every answer; the fjall backend runs
//!   it in this crate's tests, and any new backend runs the same function.
//! - **robots.txt is a request.** The frontier releases an origin's robots.txt
//!   through the host's politeness slot before any page, so it counts against
//!   the delay; a Crawl-delay learnt from it applies to the request that
//!   fetched it, too.
//! - **Clocks across restarts.** Every instant is a
//!   [`UnixMillis`](controller::UnixMillis), so persisted host state (next
//!   allowed start, Retry-After, pauses, robots.txt validity) means the
//!   same after a restart, or in another process of a fleet.
//! - **Versioned store.** The store records its layout version; a newer
//!   one is refused with an error naming both versions, an older one is
//!   upgraded in place (see the `store` module's format history).

#![deny(missing_docs)]

pub mod controller;
pub mod frontier;
pub mod hold;
pub mod key;
mod store;

/// The hasher of the tables keyed by host, origin, lease or URL
/// fingerprint, looked up several times a request. Their keys come from
/// the crawled web, so each table is seeded at random, as std's tables
/// are (foldhash's `RandomState`): no list of names a site chooses
/// collides in every run, and the seed is never written or sent. What
/// foldhash gives up against SipHash is resistance to an attacker who
/// can watch many hashes of one table; the crawl shows none. With std's
/// SipHash these lookups cost the crawl about 3 % more instructions.
pub(crate) type Hasher = foldhash::fast::RandomState;
#[cfg(feature = "testing")]
pub mod testing;
