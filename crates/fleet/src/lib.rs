//! The crawl frontier shared by a fleet of workers on a Redis-protocol
//! server (Redis 7 or Valkey, standalone or Cluster): a host is fetched by
//! one worker at a time, its politeness state outlives any worker, and a
//! worker may die, pause or be cut off at any moment without a URL being
//! lost or a host getting two requests at once.
//!
//! [`FleetFrontier`] implements `mannerly-polite`'s `Frontier` trait, so
//! the crawler drives it as it drives the embedded frontier; with one
//! worker and one partition it answers exactly as the embedded frontier
//! does (the contract suite, `tests/contract.rs`, checks every answer).
//!
//! The crawler uses it through `mannerly crawl --frontier redis://...`
//! ([`client::RobotsStore`] shares robots.txt states across the fleet;
//! [`client::fleet_status`] is `--status`).
//!
//! **Standalone or Cluster.** [`connect`] takes one URL, or several
//! comma-separated for a Cluster's nodes (a single URL whose server is a
//! Cluster node works too). Every step touches one slot; the reads that
//! span partitions (the idle probe, `stats`, `busiest`, skipped URLs, the
//! status) are one pipeline on a standalone server and one pipeline per
//! partition on a Cluster ([`client::FleetConnection`]). Tests run both
//! against real servers, a Cluster of three nodes with one killed and
//! restarted mid-crawl included (`tests/cluster.rs`).
//!
//! # The protocol
//!
//! - **Partitions.** A host belongs to partition `xxh3(host) % P` (P fixed
//!   when the crawl is created, and checked by every worker that joins, as
//!   are the key mode and the store format, [`STORE_FORMAT`], so workers
//!   that would read each other's records differently never share a
//!   crawl). Every key of a partition carries its hash tag
//!   `{crawl:p}`, so each script touches one Cluster slot and runs
//!   atomically on one node ([`layout`]).
//! - **Release** (`next_batch`: the partitions asked, each for at most what
//!   the caller has room for, so no release waits in the worker, in one
//!   script call on a standalone server and one per partition on a
//!   Cluster; `next` is a batch of one): flights whose
//!   lease expired give their URL back to its queue; hosts whose time has
//!   come become ready; the best ready host that the politeness check
//!   allows (requests in flight, delay, Retry-After, pause, skip) gives its
//!   head URL, or first its origin's robots.txt, exactly as the embedded
//!   frontier chooses, as many times as asked. The release records a
//!   flight with a lease and a fencing token, and starts the host's delay
//!   at once, in the store. Between probes, only the partitions a worker
//!   changed and those whose answered wait is over are asked again. A
//!   probe is three plain reads per partition, pipelined (no script), and
//!   two more where no host is ready or waiting; probes come 500 ms apart
//!   while they find something this worker did not know of, and back off
//!   to 1.6 s while they find nothing.
//! - **The board** (standalone server): a crawl-wide sorted set, partition
//!   → number of the last change posted there. A worker that changed
//!   partitions in a way that gives others something to do (queued URLs,
//!   settled or gave back a flight, told of a robots.txt) posts them in the
//!   same round trip, after the change. An idle worker's probe then reads
//!   the board past the number it last saw and asks only those partitions,
//!   and those where a lease it saw lapses by now; every 10 s (and at
//!   first, and after a failed call) it asks every partition, so a post
//!   lost with its worker's connection delays nothing longer. A full probe
//!   of 1,024 partitions is some 5 ms of the server's time; a worker
//!   waiting out its hosts' delays now makes one every 10 s. On a Cluster
//!   (the board would be a round trip of its own) every probe is full.
//! - **Completion** (`complete`, `requeue`, `cancel`, `discard`: held in
//!   the worker and sent in front of its next call, in the same round
//!   trip, or by `sync`, those waiting in one script call (one per
//!   partition on a Cluster); at most 64 wait): refused as stale
//!   when the flight's token is not the one
//!   released to this worker (its lease lapsed and the URL went back);
//!   otherwise the host's politeness state, computed by the worker with
//!   `mannerly-polite`'s controller, is written, and the host rescheduled.
//! - **Enqueue** (`enqueue_many`: a page's links in one round trip, any
//!   worker; one script call for them all on a standalone server, one per
//!   partition on a Cluster): the partition's seen-set
//!   makes it idempotent, so outlinks can be enqueued before the completion
//!   of their page, and a page fetched twice adds nothing twice.
//! - **The worker's memory of seen URLs** ([`FleetConfig::seen_cache`]):
//!   a URL the store already answered for (queued, or seen before) is
//!   answered "duplicate" by the worker itself the next time it meets it,
//!   with no call: most of a page's links are a site's menu, met on every
//!   page. It is kept only while the connection shows it reaches the same
//!   server incarnation (any failed call may mean a restarted server that
//!   lost its last writes: the memory is then emptied, and what it answered
//!   meanwhile is offered to the store again), so the store forgets no
//!   URL it would have kept without it. A Cluster connection follows a
//!   failover without a failed call, so on a Cluster there is no memory.
//!
//! - **Claims** ([`FleetConfig::claim`] above 1, off by default here; the
//!   CLI's `--claim N`, 16 by default): a page's release takes up to N URLs of its host's
//!   queue into one flight, under one lease; the worker releases the rest
//!   itself, paced by its own controller, and settles them all in one step
//!   (when they are done, when one is retried or given back, when the host
//!   is skipped, or when its next turn is more than [`HOLD_AHEAD`]
//!   away; `sync` gives back what is left). Each URL of a claim that is
//!   done is told to the store with the worker's next call (the crawl
//!   makes one every turn of its loop), so a lapsed lease gives back only
//!   the claim's URLs not yet fetched and the one whose request was out;
//!   a URL queued behind a claim waits for it whatever its priority.
//!
//!   A claim also **gathers its host's new links**: a URL of a claimed host
//!   that the claim's own worker offers (most of a page's links to its own
//!   site are found by the worker fetching that site) joins the claim
//!   instead of the host's queue, while the claim has room: the script
//!   keeps it in the claim's record (`fx:<token>`, which a lapse gives
//!   back, as it gives back the rest of the claim) and the worker releases
//!   it with no further step on the server. The URLs it finished are
//!   acknowledged together: with the claim's settle, at a flush (the
//!   progress line's, every 2 s), or past 16 (a lapse later does not give
//!   them back; until then it does, as it gives back the claim's first
//!   URLs). A URL another worker finds goes to the queue as before.
//!
//!   With the robots.txt gate, a host's **first release is its robots.txt,
//!   and it is a claim too**: it takes the host's first URLs along, and
//!   once its worker knows the robots.txt (`robots_known`) the claim goes
//!   on with them; the settle at its end tells the store the robots.txt is
//!   known. Unknown (unavailable, failed) or lapsed, the claim goes back
//!   at once and the gate holds the URLs as before. A host then costs the
//!   server one release and one settle, not two of each (on the bench of
//!   9-page sites, a quarter less server CPU per page). A claim
//!   then holds its host for as long as the host's own pages feed it, and
//!   a page costs the server its links' seen-set check and little else. On
//!   the fleet bench (`CLAIM=16`) the server's CPU per page falls by about
//!   a quarter against claims that do not gather, and by more than half
//!   against no claims. The chaos tests on a standalone server and on a
//!   Cluster run with claims, the server-restart one without.
//! - **Lapses seen by their own worker.** With one request per host at a
//!   time, the store giving a host to a worker proves every earlier flight
//!   of that worker on it lapsed: those with nothing out are dropped,
//!   those out become orphans (`confirm` says no, and their completion is
//!   not applied), and the host's state is read from the store. A release
//!   whose flight id is still held here by an orphan (the same URL, given
//!   out again) gets a spare id, so two releases never share one.
//!
//! **Leases kept alive.** A worker's heartbeat (`keep_alive`, which the
//! crawl loop calls every turn, and any call that reaches the server once
//! it is due) renews every flight it holds, three times in each send
//! window (the lease less [`FleetConfig::longest_request`]). So the lease
//! can be short: the CLI's is the request timeout plus 10 s, and a killed
//! worker's hosts pass to the others within that lease of its last
//! heartbeat, plus the time to see it (a probe, at most a second or two).
//! A renewal that finds its lease lapsed makes the flight an orphan.
//!
//! **Sending.** Just before sending, the worker re-checks its lease
//! (`confirm`: free while the release or renewal is under half the send
//! window old, a round trip after), and the fetch task refuses to send
//! once the send window has passed since the call that released or
//! renewed it left (`send_by`): a request sent in time ends (its timeout)
//! before its lease can lapse, even if its worker is stopped then. What is
//! left is the stretch inside the HTTP client after that check
//! (connecting, writing the request) and, for robots.txt, the hops of a
//! redirect chain after the first: a worker stopped there for longer than
//! the rest of its lease sends those requests when it resumes, possibly
//! after another worker fetched the same URL. That is the bound: per
//! paused worker, the requests it had in that stretch (none or a few: a
//! release batch's requests are checked together and then written as the
//! runtime gets to them; at most its concurrency), and only for a pause
//! longer than what was left of its lease (at least the longest request).
//! robots.txt is checked after the origin's stored state is read, so that
//! round trip is not part of the stretch. An answer that reaches a worker
//! while it is stopped or being killed stays with it: a 429's Retry-After
//! it carried is unknown to the worker that takes the host over after the
//! lapse, which may ask again inside it (once per such answer).
//!
//! Fetching is at least once: a URL is in its queue or in a flight record
//! until a completion with the right token ends it, so a worker that dies
//! mid-fetch, or with completions not yet sent, leaves those URLs for the
//! next, after their lease. The host then waits its delay from the
//! lapse (the lapsed worker's last request may have left as late as its
//! lease let it), with the pacing its holder last told the store: a
//! robots.txt claim tells it as it goes on, so a Crawl-delay read just
//! before a lapse outlives it, and a completion that made the host wait
//! (a Retry-After, a backoff pause, a skip) is sent at once, so that wait
//! outlives a worker killed before its next call; so is a robots.txt
//! state that keeps its origin waiting (failing, or a Retry-After), which
//! [`RobotsStore::behind`] otherwise holds for the next call. Only the
//! token holder writes a host's state after a release, so the state never
//! goes back.
//!
//! # Time
//!
//! [`TimeSource::Server`] reads the server's clock (`TIME`) inside each
//! script, so workers with skewed clocks still agree on leases and due
//! times; [`TimeSource::Caller`] uses the `now` passed in, for tests on a
//! fake clock. A worker's own arithmetic (a claim's pacing, backoff) runs on
//! its estimate of the server's clock: its own plus the least `at - sent`
//! of the replies of the last 30 to 60 s: never behind the server's clock,
//! ahead of it by the shortest transit seen, not by each call's.
//!
//! # Durability
//!
//! What survives a server crash is what the server made durable. With
//! `appendonly yes` and `appendfsync always`, every call that returned.
//! With `appendfsync everysec`, up to the last second of calls may be
//! lost: a lost release or completion only means a URL is fetched again
//! (its flight record or its queue entry is back as it was), but a lost
//! enqueue forgets a discovered link unless its page is fetched again. So
//! a fleet that must never forget a URL runs with `appendfsync always`. A
//! Cluster failover can lose what the old primary had not replicated, with
//! the same consequences. A completion counts once it is sent (the next
//! call, or `sync`), not when `complete` returns.
//!
//! # Round trips
//!
//! A crawler's page costs two at most: its links' enqueue (none when the
//! worker already had every link answered), and the release that carries
//! its completion (under load one release round trip carries several
//! completions and releases several fetches). In practice far fewer: the
//! crawler offers the links of every page one turn of its loop handled in
//! one call, and what needs no answer rides in front of the next call in
//! the same round trip: completions, a claim's acknowledgements, an
//! origin's robots.txt known (inside its robots.txt flight's settle), and
//! the robots.txt states the worker saved ([`client::Outbox`]: saved before
//! the flight that fetched them settles, so the fleet never sees the
//! settle without the state). On the no-delay bench of 2,000 small sites a
//! worker makes about one round trip per eight pages.
//!
//! # Waiting
//!
//! While any partition answers busy (requests in flight: often another
//! worker's, or a dead one's whose lease has yet to lapse), a wait is
//! answered as at most a second, so a crawler that gives up on a long
//! wait asks again instead of leaving URLs a lapsing lease will bring
//! back.

#![deny(missing_docs)]

pub mod backend;
pub mod client;
pub mod frontier;
pub mod layout;
mod lua;
mod seen;

pub use backend::{Fleet, JoinError};
pub use client::{connect, Connection, Outbox, Retrying, RobotsStore};
pub use frontier::{FleetConfig, FleetFrontier, TimeSource, HOLD_AHEAD, STORE_FORMAT};
pub use layout::{Layout, LayoutError, DEFAULT_PARTITIONS};
