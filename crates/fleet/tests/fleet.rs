//! Several workers on one store, against a real `redis-server` on
//! 127.0.0.1 (installed by `.ci/run`; elsewhere these tests say SKIPPED
//! without it): one owner per host, leases that lapse, late completions,
//! the server's clock, and a server killed and restarted.

use std::time::Duration;

use mannerly_fleet::client::FleetConnection;
use mannerly_fleet::{FleetConfig, FleetFrontier, Layout, TimeSource, HOLD_AHEAD, STORE_FORMAT};
use mannerly_polite::controller::{Config, Outcome, Politeness, UnixMillis};
use mannerly_polite::frontier::{
    Admission, Frontier, FrontierConfig, FrontierError, Kind, Next, Released,
};
use mannerly_polite::key::KeyMode;
use mannerly_testsupport::RedisServer;
use redis::aio::MultiplexedConnection;

mod common;
use common::{ok, T0};

fn server() -> Option<RedisServer> {
    let s = RedisServer::start(&[]);
    if s.is_none() {
        eprintln!("SKIPPED: redis-server is not installed");
    }
    s
}

struct Opts {
    partitions: u32,
    min_delay: u64,
    lease: Duration,
    time: TimeSource,
    claim: usize,
    max_per_key: u64,
    seen_cache: usize,
    robots_gate: bool,
    stats_every: Duration,
    max_hosts: usize,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            partitions: 1,
            min_delay: 1_000,
            lease: Duration::from_secs(5),
            time: TimeSource::Caller,
            claim: 1,
            max_per_key: FrontierConfig::default().max_per_key,
            seen_cache: FleetConfig::default().seen_cache,
            robots_gate: false,
            stats_every: FleetConfig::default().stats_every,
            max_hosts: 0,
        }
    }
}

async fn worker(
    server: &RedisServer,
    crawl: &str,
    o: &Opts,
) -> Result<FleetFrontier<MultiplexedConnection>, FrontierError> {
    let con = connection(server).await;
    worker_on(con, server, crawl, o).await
}

/// A plain connection to `server` (it never reconnects).
async fn connection(server: &RedisServer) -> MultiplexedConnection {
    redis::Client::open(server.url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("connection")
}

/// A worker as [`worker`] makes it, over `con`.
async fn worker_on<C: FleetConnection>(
    con: C,
    server: &RedisServer,
    crawl: &str,
    o: &Opts,
) -> Result<FleetFrontier<C>, FrontierError> {
    FleetFrontier::open(
        con,
        &server.url(),
        Layout::new(crawl, o.partitions).expect("layout"),
        Politeness::new(Config {
            min_delay: o.min_delay,
            ..Config::default()
        }),
        FrontierConfig {
            robots_gate: o.robots_gate,
            max_per_key: o.max_per_key,
            ..FrontierConfig::default()
        },
        FleetConfig {
            lease: o.lease,
            longest_request: o.lease / 2,
            time: o.time,
            claim: o.claim,
            seen_cache: o.seen_cache,
            stats_every: o.stats_every,
            max_hosts: o.max_hosts,
        },
    )
    .await
}

/// A worker over the connection the crawler uses, which retries what
/// failed and sees each reconnection.
async fn crawler_worker(
    server: &RedisServer,
    crawl: &str,
    o: &Opts,
) -> FleetFrontier<mannerly_fleet::Connection> {
    let con = mannerly_fleet::connect(&server.url())
        .await
        .expect("connect");
    worker_on(con, server, crawl, o).await.expect("open")
}

/// What `w` releases when asked at `until`, once asked at `at` it said to
/// wait until then (asserted).
async fn after_wait<C: FleetConnection>(
    w: &mut FleetFrontier<C>,
    at: UnixMillis,
    until: UnixMillis,
) -> Released {
    assert_eq!(w.next(at).await.ok(), Some(Next::Wait { until }));
    fetch(w.next(until).await.expect("next"))
}

fn fetch(n: Next) -> Released {
    match n {
        Next::Fetch(r) => r,
        other => panic!("expected a release, got {other:?}"),
    }
}

#[tokio::test]
async fn a_lapsed_lease_gives_the_url_to_another_worker_after_the_delay() {
    let Some(server) = server() else { return };
    let o = Opts {
        min_delay: 8_000,
        ..Opts::default()
    };
    let mut a = worker(&server, "lapse", &o).await.expect("a");
    let mut b = worker(&server, "lapse", &o).await.expect("b");
    for i in 0..2 {
        let url = format!("https://h.example/{i}");
        assert_eq!(a.enqueue(&url, 0, T0).await.ok(), Some(Admission::Queued));
    }
    let late = fetch(a.next(T0).await.expect("next"));
    assert_eq!(late.url, "https://h.example/0");
    // While A's lease lives, B may not touch the host.
    assert_eq!(b.next(T0.add_millis(1_000)).await.ok(), Some(Next::Busy));
    // A stalls past its 5 s lease: the URL goes back, but the host waits
    // the 8 s delay from the lapse: A's request may have gone out as late
    // as its lease let it.
    let mine = after_wait(&mut b, T0.add_millis(5_001), T0.add_millis(13_001)).await;
    assert_eq!(mine.url, "https://h.example/0", "the URL was not lost");
    assert_eq!(b.stats().await.expect("stats").reissued, 1);
    // A wakes up: just before sending it checks its lease, which lapsed.
    assert_eq!(
        a.confirm(&late, T0.add_millis(13_002)).await.ok(),
        Some(false)
    );
    assert_eq!(a.stale, 1);
    // The release is over for A: nothing more to report.
    assert!(a
        .complete(&late, &ok(), T0.add_millis(13_002))
        .await
        .is_err());
    // B's release is young: confirmed without asking the server.
    assert_eq!(
        b.confirm(&mine, T0.add_millis(13_003)).await.ok(),
        Some(true)
    );
    assert_eq!(a.stats().await.expect("stats").queued, 1);
    b.complete(&mine, &ok(), T0.add_millis(13_010))
        .await
        .expect("complete");
    // B's completion is held until its next call to the server: until
    // then the host is still in flight for everyone else.
    assert_eq!(a.next(T0.add_millis(13_500)).await.ok(), Some(Next::Busy));
    b.sync().await.expect("sync");
    let last = after_wait(&mut a, T0.add_millis(14_000), T0.add_millis(21_001)).await;
    assert_eq!(last.url, "https://h.example/1");
}

#[tokio::test]
async fn a_live_workers_heartbeat_keeps_its_host_and_a_dead_ones_lapses_a_lease_later() {
    let Some(server) = server() else { return };
    let o = Opts::default();
    let mut a = worker(&server, "beat", &o).await.expect("a");
    let mut b = worker(&server, "beat", &o).await.expect("b");
    queue_n(&mut a, 1).await;
    let r0 = fetch(a.next(T0).await.expect("next"));
    // A lives well past its 5 s lease, its heartbeat renewing it: the
    // host stays A's, and its request may still leave.
    for s in 1..=4 {
        a.keep_alive(T0.add_millis(2_000 * s)).await.expect("beat");
    }
    assert_eq!(b.next(T0.add_millis(9_000)).await.ok(), Some(Next::Busy));
    assert_eq!(a.confirm(&r0, T0.add_millis(9_000)).await.ok(), Some(true));
    // A dies after its beat at 8 s: B takes the host a lease later, and
    // sends a delay after that.
    let again = after_wait(&mut b, T0.add_millis(13_001), T0.add_millis(14_001)).await;
    assert_eq!(again.url, r0.url);
}

#[tokio::test]
async fn a_worker_at_its_host_bound_leaves_the_other_hosts_to_the_fleet() {
    let Some(server) = server() else { return };
    let bounded = Opts {
        max_hosts: 2,
        ..Opts::default()
    };
    let mut a = worker(&server, "bound", &bounded).await.expect("a");
    let mut b = worker(&server, "bound", &Opts::default()).await.expect("b");
    for i in 0..5 {
        let url = format!("https://h{i}.example/");
        assert_eq!(a.enqueue(&url, 0, T0).await.ok(), Some(Admission::Queued));
    }
    // Asked for 5, it takes 2 hosts: its bound.
    let batch = a.next_batch(5, T0).await.expect("batch");
    assert_eq!(batch.released.len(), 2, "{:?}", batch.released);
    assert_eq!(a.hosts_held(), 2);
    assert_eq!(a.next(T0).await.ok(), Some(Next::Busy), "no third host");
    // The other worker takes the rest.
    let rest = b.next_batch(5, T0).await.expect("batch");
    assert_eq!(rest.released.len(), 3);
    // One of its hosts done, it may take another.
    a.complete(&batch.released[0], &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    assert_eq!(a.hosts_held(), 1);
}

#[tokio::test]
async fn a_completion_after_the_lease_lapsed_is_ignored() {
    let Some(server) = server() else { return };
    let o = Opts::default();
    let mut a = worker(&server, "late", &o).await.expect("a");
    let mut b = worker(&server, "late", &o).await.expect("b");
    a.enqueue("https://l.example/x", 0, T0)
        .await
        .expect("enqueue");
    let late = fetch(a.next(T0).await.expect("next"));
    // Past A's lease, the host waits a delay from the lapse.
    let again = after_wait(&mut b, T0.add_millis(6_000), T0.add_millis(7_000)).await;
    assert_eq!(again.url, late.url);
    a.complete(&late, &ok(), T0.add_millis(7_001))
        .await
        .expect("late");
    // The completion goes with A's next call to the server.
    assert_eq!(a.stale, 0);
    a.sync().await.expect("sync");
    assert_eq!(a.stale, 1);
    assert_eq!(
        b.stats().await.expect("stats").in_flight,
        1,
        "B's flight stands"
    );
    b.complete(&again, &ok(), T0.add_millis(7_010))
        .await
        .expect("complete");
    assert_eq!(b.stats().await.expect("stats").queued, 0);
}

#[tokio::test]
async fn many_workers_never_hold_one_host_at_once_and_fetch_everything_once() {
    race_on_a_grid("many", 1).await;
}

/// Eight workers (claiming `claim` URLs at a time) race over 16 hosts of
/// 6 URLs each: no host held by two at once, every URL fetched once.
async fn race_on_a_grid(crawl: &str, claim: usize) {
    let Some(server) = server() else { return };
    let o = Opts {
        partitions: 4,
        min_delay: 0,
        lease: Duration::from_secs(60),
        claim,
        ..Opts::default()
    };
    let (hosts, per_host) = (16, 6);
    {
        let mut w = worker(&server, crawl, &o).await.expect("seed");
        for h in 0..hosts {
            for i in 0..per_host {
                let url = format!("https://h{h}.test/{i}");
                assert_eq!(w.enqueue(&url, 0, T0).await.ok(), Some(Admission::Queued));
            }
        }
    }
    let mut workers = Vec::new();
    for _ in 0..8 {
        workers.push(worker(&server, crawl, &o).await.expect("worker"));
    }
    let (got, want) = (common::race(workers).await, common::grid(hosts, per_host));
    assert_eq!(got, want, "every URL exactly once");
}

#[tokio::test]
async fn the_servers_clock_rules_and_a_crawl_keeps_its_shape() {
    let Some(server) = server() else { return };
    let o = Opts {
        partitions: 8,
        min_delay: 2_000,
        time: TimeSource::Server,
        ..Opts::default()
    };
    let mut w = worker(&server, "clocked", &o).await.expect("open");
    // The caller's clock says 1970; the server's is what counts.
    w.enqueue("https://t.example/a", 0, UnixMillis::EPOCH)
        .await
        .expect("enqueue");
    w.enqueue("https://t.example/b", 0, UnixMillis::EPOCH)
        .await
        .expect("enqueue");
    let r = fetch(w.next(UnixMillis::EPOCH).await.expect("next"));
    w.complete(&r, &ok(), UnixMillis::EPOCH)
        .await
        .expect("complete");
    match w.next(UnixMillis::EPOCH).await.expect("next") {
        Next::Wait { until } => {
            let gap = until
                .as_millis()
                .abs_diff(UnixMillis::now().as_millis() + 2_000);
            assert!(gap < 5_000, "waits on the server's clock: {until:?}");
        }
        other => panic!("expected a wait, got {other:?}"),
    }
    let other = Opts {
        partitions: 16,
        ..o
    };
    match worker(&server, "clocked", &other).await {
        Err(e @ FrontierError::Corrupt { .. }) => assert!(
            e.to_string()
                .contains("crawl clocked was created with 8 partitions, not 16"),
            "{e}"
        ),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a different partition count was accepted"),
    }
    let con = connection(&server).await;
    let by_domain = FleetFrontier::open(
        con,
        &server.url(),
        Layout::new("clocked", 8).expect("layout"),
        Politeness::new(Config::default()),
        FrontierConfig {
            key_mode: KeyMode::RegisteredDomain,
            ..FrontierConfig::default()
        },
        FleetConfig::default(),
    )
    .await;
    assert!(matches!(by_domain, Err(FrontierError::KeyMode { .. })));
}

#[tokio::test]
async fn a_worker_joins_only_a_crawl_of_its_store_format() {
    let Some(server) = server() else { return };
    let o = Opts {
        partitions: 4,
        ..Opts::default()
    };
    let mut con = connection(&server).await;
    let meta = Layout::new("formats", 4).expect("layout").meta_key();
    // A crawl created before formats were numbered: the first format,
    // which the worker records.
    let _: () = redis::cmd("HSET")
        .arg(&meta)
        .arg("partitions")
        .arg(4)
        .arg("key_mode")
        .arg("host")
        .query_async(&mut con)
        .await
        .expect("hset");
    worker(&server, "formats", &o).await.expect("open");
    let format: String = redis::cmd("HGET")
        .arg(&meta)
        .arg("format")
        .query_async(&mut con)
        .await
        .expect("hget");
    assert_eq!(format, STORE_FORMAT.to_string());
    // One written by a later format: this worker stays out.
    let _: () = redis::cmd("HSET")
        .arg(&meta)
        .arg("format")
        .arg(STORE_FORMAT + 1)
        .query_async(&mut con)
        .await
        .expect("hset");
    match worker(&server, "formats", &o).await {
        Err(e @ FrontierError::Corrupt { .. }) => assert!(
            e.to_string().contains(&format!(
                "crawl formats keeps its frontier in store format \"{}\"",
                STORE_FORMAT + 1
            )),
            "{e}"
        ),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a crawl of another store format was joined"),
    }
}

#[tokio::test]
async fn what_is_queued_survives_a_server_killed_with_appendonly() {
    let Some(mut server) = server() else { return };
    let aof = ["--appendonly", "yes", "--appendfsync", "always"];
    server.restart(&aof);
    let o = Opts::default();
    {
        let mut w = worker(&server, "durable", &o).await.expect("open");
        for i in 0..20 {
            w.enqueue(&format!("https://k.example/{i}"), 0, T0)
                .await
                .expect("enqueue");
        }
        let r = fetch(w.next(T0).await.expect("next"));
        w.complete(&r, &ok(), T0).await.expect("complete");
        // A completion counts once it is sent: with the next call, or here.
        w.sync().await.expect("sync");
    }
    server.restart(&aof);
    let mut w = worker(&server, "durable", &o).await.expect("reopen");
    assert_eq!(w.stats().await.expect("stats").queued, 19);
    assert_eq!(
        w.enqueue("https://k.example/0", 0, T0).await.ok(),
        Some(Admission::Duplicate),
        "the seen-set survived too"
    );
    // And the host's pacing: the next request waits the delay.
    assert_eq!(
        w.next(T0.add_millis(10)).await.ok(),
        Some(Next::Wait {
            until: T0.add_millis(1_000)
        })
    );
}

type Worker = FleetFrontier<MultiplexedConnection>;

/// A worker claiming 3 at a time (5 s lease, 1 s delay) on crawl `crawl`
/// with three URLs queued: its claim takes them all, and it fetches /0
/// and reports it (held in the worker). Returns it and /0's release.
async fn first_of_a_claim(server: &RedisServer, crawl: &str) -> (Worker, Released) {
    let o = Opts {
        claim: 3,
        ..Opts::default()
    };
    let mut a = worker(server, crawl, &o).await.expect("a");
    queue_n(&mut a, 3).await;
    let r0 = fetch(a.next(T0).await.expect("next"));
    a.complete(&r0, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    (a, r0)
}

/// As [`first_of_a_claim`], then /1 goes out; with B (one at a time) on
/// the same crawl. Returns A, B and /1's release.
async fn second_of_a_claim(server: &RedisServer, crawl: &str) -> (Worker, Worker, Released) {
    let (mut a, _) = first_of_a_claim(server, crawl).await;
    let b = worker(server, crawl, &Opts::default()).await.expect("b");
    let r1 = fetch(a.next(T0.add_millis(1_000)).await.expect("next"));
    (a, b, r1)
}

/// Releases and completes `n` URLs through `w` from `t` on, waiting as
/// it is told: their URLs and tags, and the time it got to.
async fn take_n(w: &mut Worker, mut t: UnixMillis, n: usize) -> (Vec<(String, u32)>, UnixMillis) {
    let mut got = Vec::new();
    while got.len() < n {
        match w.next(t).await.expect("next") {
            Next::Fetch(r) => {
                got.push((r.url.clone(), r.tag));
                w.complete(&r, &ok(), t).await.expect("complete");
            }
            Next::Wait { until } => t = until,
            other => panic!("expected more URLs, got {other:?} after {got:?}"),
        }
    }
    (got, t)
}

/// Releases and completes through `w` from `t` on exactly the URLs
/// `want` (path and tag, in that order), and then nothing more is queued.
async fn takes_only(w: &mut Worker, t: UnixMillis, want: &[(&str, u32)]) {
    let (got, t) = take_n(w, t, want.len()).await;
    let want: Vec<(String, u32)> = want
        .iter()
        .map(|(path, tag)| (format!("https://h.example{path}"), *tag))
        .collect();
    assert_eq!(got, want);
    assert_eq!(w.next(t.add_millis(5_000)).await.ok(), Some(Next::Empty));
}

/// Queues `https://h.example/0` to `/{n-1}` through `w`.
async fn queue_n(w: &mut Worker, n: usize) {
    for i in 0..n {
        let url = format!("https://h.example/{i}");
        assert_eq!(w.enqueue(&url, 0, T0).await.ok(), Some(Admission::Queued));
    }
}

#[tokio::test]
async fn a_claim_paces_its_hosts_urls_itself_and_settles_them_in_one_step() {
    let Some(server) = server() else { return };
    // A lease long enough that the 1 s delay is not "far off" (an eighth
    // of it), which would give the claim back.
    let o = Opts {
        claim: 3,
        lease: Duration::from_secs(60),
        ..Opts::default()
    };
    let mut a = worker(&server, "claim", &o).await.expect("a");
    let mut b = worker(&server, "claim", &o).await.expect("b");
    queue_n(&mut a, 4).await;
    let r0 = fetch(a.next(T0).await.expect("next"));
    assert_eq!(r0.url, "https://h.example/0");
    // The claim took /0, /1 and /2: A holds two, the store one.
    assert_eq!(b.stats().await.expect("stats").queued, 1);
    assert_eq!(a.stats().await.expect("stats").queued, 3);
    assert_eq!(b.next(T0.add_millis(100)).await.ok(), Some(Next::Busy));
    a.complete(&r0, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    // A paces the claim itself: the next URL waits for the host's delay.
    let r1 = after_wait(&mut a, T0.add_millis(20), T0.add_millis(1_000)).await;
    assert_eq!(r1.url, "https://h.example/1");
    assert_eq!(r1.lease, r0.lease, "one flight, one lease");
    assert_eq!(a.confirm(&r1, T0.add_millis(1_001)).await.ok(), Some(true));
    // Nothing of that reached the store: for B the host is still busy.
    assert_eq!(b.next(T0.add_millis(1_500)).await.ok(), Some(Next::Busy));
    // A completion is reported once.
    a.complete(&r1, &ok(), T0.add_millis(1_010))
        .await
        .expect("complete");
    assert!(a.complete(&r1, &ok(), T0.add_millis(1_011)).await.is_err());
    let r2 = fetch(a.next(T0.add_millis(2_000)).await.expect("next"));
    assert_eq!(r2.url, "https://h.example/2");
    a.complete(&r2, &ok(), T0.add_millis(2_010))
        .await
        .expect("complete");
    a.sync().await.expect("sync");
    // The host is the store's again, its delay counted from A's last
    // request (as a worker that has not probed yet sees it: B's last
    // probe stands a while).
    let mut c = worker(&server, "claim", &o).await.expect("c");
    assert_eq!(
        c.next(T0.add_millis(2_500)).await.ok(),
        Some(Next::Wait {
            until: T0.add_millis(3_000)
        })
    );
    let r3 = fetch(b.next(T0.add_millis(3_100)).await.expect("next"));
    assert_eq!(r3.url, "https://h.example/3");
    b.complete(&r3, &ok(), T0.add_millis(3_110))
        .await
        .expect("complete");
    b.sync().await.expect("sync");
    let s = a.stats().await.expect("stats");
    assert_eq!((s.queued, s.in_flight), (0, 0), "{s:?}");
}

#[tokio::test]
async fn a_lapsed_claim_gives_back_only_what_was_not_done() {
    let Some(server) = server() else { return };
    let (mut a, mut b, r1) = second_of_a_claim(&server, "lapsed-claim").await;
    // A stalls past its 5 s lease: the claim goes back, but not /0, done
    // and told with A's next call; /1 was out (fetching is at least once).
    let (mut got, t) = take_n(&mut b, T0.add_millis(6_001), 2).await;
    got.sort();
    let urls: Vec<&str> = got.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(urls, ["https://h.example/1", "https://h.example/2"]);
    assert_eq!(
        b.next(t).await.ok(),
        Some(Next::Empty),
        "/0 is not fetched again"
    );
    assert_eq!(b.stats().await.expect("stats").reissued, 1);
    // A wakes up: its lease lapsed, and the claim is over for it.
    assert_eq!(a.confirm(&r1, t).await.ok(), Some(false));
    assert!(a.complete(&r1, &ok(), t).await.is_err());
    assert_eq!(a.stats().await.expect("stats").queued, 0);
}

#[tokio::test]
async fn a_claimed_url_retried_goes_back_with_the_rest_of_the_claim() {
    let Some(server) = server() else { return };
    let (mut a, mut b, r1) = second_of_a_claim(&server, "retried-claim").await;
    a.requeue(&r1, &ok(), 7, T0.add_millis(1_010))
        .await
        .expect("requeue");
    a.sync().await.expect("sync");
    // /1 comes first again, with its new tag, then /2; /0 was done.
    takes_only(&mut b, T0.add_millis(1_010), &[("/1", 7), ("/2", 0)]).await;
}

#[tokio::test]
async fn a_claim_given_back_at_sync_is_anyone_s() {
    let Some(server) = server() else { return };
    let (mut a, _) = first_of_a_claim(&server, "synced-claim").await;
    let mut b = worker(&server, "synced-claim", &Opts::default())
        .await
        .expect("b");
    a.sync().await.expect("sync");
    assert_eq!(a.stats().await.expect("stats").queued, 2);
    let r1 = fetch(b.next(T0.add_millis(1_000)).await.expect("next"));
    assert_eq!(r1.url, "https://h.example/1");
}

/// A worker claiming 3 at a time (lease `lease`) with /0 alone queued:
/// its claim holds the host with nothing more, and the links /1 and /2 it
/// then finds there join the claim. Returns it and /0's release.
async fn a_claim_that_gathered(
    server: &RedisServer,
    crawl: &str,
    lease: Duration,
) -> (Worker, Released) {
    let o = Opts {
        claim: 3,
        lease,
        ..Opts::default()
    };
    let mut a = worker(server, crawl, &o).await.expect("a");
    queue_n(&mut a, 1).await;
    let r0 = fetch(a.next(T0).await.expect("next"));
    assert_eq!(r0.url, "https://h.example/0");
    for i in 1..3 {
        let url = format!("https://h.example/{i}");
        assert_eq!(
            a.enqueue(&url, 0, T0.add_millis(5)).await.ok(),
            Some(Admission::Queued)
        );
    }
    (a, r0)
}

/// As [`a_claim_that_gathered`], then /0 is reported and /1, the first
/// URL the claim gathered, goes out. Returns the worker and /1's release.
async fn a_gathered_url_out(
    server: &RedisServer,
    crawl: &str,
    lease: Duration,
) -> (Worker, Released) {
    let (mut a, r0) = a_claim_that_gathered(server, crawl, lease).await;
    a.complete(&r0, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    let r1 = fetch(a.next(T0.add_millis(1_000)).await.expect("next"));
    assert_eq!(r1.url, "https://h.example/1");
    (a, r1)
}

#[tokio::test]
async fn a_claim_takes_the_links_its_worker_finds_on_its_host_without_the_queue() {
    let Some(server) = server() else { return };
    let (mut a, r0) = a_claim_that_gathered(&server, "gather", Duration::from_secs(60)).await;
    let mut b = worker(&server, "gather", &Opts::default())
        .await
        .expect("b");
    // The store's queue holds none of them: they are the claim's.
    assert_eq!(b.stats().await.expect("stats").queued, 0);
    assert_eq!(a.stats().await.expect("stats").queued, 2);
    // The same link again is a duplicate; one found by another worker
    // goes to the queue (the claim is A's alone).
    assert_eq!(
        a.enqueue("https://h.example/1", 0, T0.add_millis(6))
            .await
            .ok(),
        Some(Admission::Duplicate)
    );
    assert_eq!(
        b.enqueue("https://h.example/9", 0, T0.add_millis(6))
            .await
            .ok(),
        Some(Admission::Queued)
    );
    assert_eq!(b.stats().await.expect("stats").queued, 1);
    a.complete(&r0, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    assert_eq!(b.next(T0.add_millis(100)).await.ok(), Some(Next::Busy));
    // A releases them itself, paced, under the claim's one lease.
    let r1 = fetch(a.next(T0.add_millis(1_000)).await.expect("next"));
    assert_eq!(
        (r1.url.as_str(), r1.lease),
        ("https://h.example/1", r0.lease)
    );
    a.complete(&r1, &ok(), T0.add_millis(1_010))
        .await
        .expect("complete");
    let r2 = fetch(a.next(T0.add_millis(2_000)).await.expect("next"));
    assert_eq!(r2.url, "https://h.example/2");
    a.complete(&r2, &ok(), T0.add_millis(2_010))
        .await
        .expect("complete");
    a.sync().await.expect("sync");
    // Then the host is the store's: only /9 is left.
    takes_only(&mut b, T0.add_millis(3_000), &[("/9", 0)]).await;
    let s = b.stats().await.expect("stats");
    assert_eq!((s.queued, s.in_flight), (0, 0), "{s:?}");
}

#[tokio::test]
async fn a_link_to_a_held_host_that_was_skipped_meanwhile_is_skipped() {
    let Some(server) = server() else { return };
    let o = Opts {
        claim: 4,
        ..Opts::default()
    };
    let mut a = worker(&server, "skipheld", &o).await.expect("a");
    queue_n(&mut a, 1).await;
    let r0 = fetch(a.next(T0).await.expect("next"));
    assert_eq!(r0.url, "https://h.example/0");
    // The claim takes A's links to its host while it holds it.
    assert_eq!(
        a.enqueue("https://h.example/1", 0, T0.add_millis(5))
            .await
            .ok(),
        Some(Admission::Queued)
    );
    assert_eq!(a.stats().await.expect("stats").queued, 1);
    // Another worker learns that the host is to be skipped (its
    // Crawl-delay is over the maximum) while A's claim holds it.
    let mut b = worker(&server, "skipheld", &Opts::default())
        .await
        .expect("b");
    learn_host_is_skipped(&mut b, "h.example").await;
    // A's next link to it is answered as any worker's would be: skipped,
    // not taken into the claim.
    match a.enqueue("https://h.example/5", 0, T0.add_millis(20)).await {
        Ok(Admission::Skipped { .. }) => {}
        other => panic!("expected skipped, got {other:?}"),
    }
    assert_eq!(a.stats().await.expect("stats").queued, 1);
}

#[tokio::test]
async fn a_lapsed_claim_gives_back_what_it_gathered_but_not_what_it_finished() {
    let Some(server) = server() else { return };
    let (mut a, r1) = a_gathered_url_out(&server, "gather-lapse", Duration::from_secs(5)).await;
    a.complete(&r1, &ok(), T0.add_millis(1_010))
        .await
        .expect("complete");
    a.flush().await.expect("flush");
    // A stalls past its lease. /2, which A never released, goes back; /0
    // (the claim's first) and /1, done and told, do not.
    let mut b = worker(&server, "gather-lapse", &Opts::default())
        .await
        .expect("b");
    takes_only(&mut b, T0.add_millis(6_011), &[("/2", 0)]).await;
}

/// A worker claiming 20 at a time (60 s lease) with /0 alone queued,
/// which gathers /1 to /18, reports /0 and then fetches and reports `done`
/// of them, one a second, with no flush but its own calls; then takes the next out, queues
/// `https://k.example/` and stalls. Returns what another worker takes once
/// the lease lapsed, in order (paths for h.example's).
async fn a_claim_stalled_after(server: &RedisServer, crawl: &str, done: usize) -> Vec<String> {
    let o = Opts {
        claim: 20,
        lease: Duration::from_secs(60),
        ..Opts::default()
    };
    let mut a = worker(server, crawl, &o).await.expect("a");
    queue_n(&mut a, 1).await;
    let r0 = fetch(a.next(T0).await.expect("next"));
    for i in 1..19 {
        let url = format!("https://h.example/{i}");
        assert_eq!(
            a.enqueue(&url, 0, T0.add_millis(5)).await.ok(),
            Some(Admission::Queued)
        );
    }
    a.complete(&r0, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    let mut t = T0;
    for i in 1..=done {
        t = T0.add_millis(1_000 * i as u64);
        let r = fetch(a.next(t).await.expect("next"));
        assert_eq!(r.url, format!("https://h.example/{i}"));
        a.complete(&r, &ok(), t.add_millis(10))
            .await
            .expect("complete");
    }
    // The next URL goes out (from the claim: no call to the store), and
    // then a call reaches the store.
    let r = fetch(a.next(t.add_millis(1_000)).await.expect("next"));
    assert_eq!(r.url, format!("https://h.example/{}", done + 1));
    assert_eq!(
        a.enqueue("https://k.example/", 0, t.add_millis(1_001))
            .await
            .ok(),
        Some(Admission::Queued)
    );
    let mut b = worker(server, crawl, &Opts::default()).await.expect("b");
    // Past the lease from A's last call, which renewed it.
    let mut t = t.add_millis(1_001 + 60_001);
    let mut got = Vec::new();
    loop {
        match b.next(t).await.expect("next") {
            Next::Fetch(r) => {
                got.push(r.url.replace("https://h.example", ""));
                b.complete(&r, &ok(), t).await.expect("complete");
            }
            Next::Wait { until } => t = until,
            Next::Empty => return got,
            other => panic!("expected more URLs, got {other:?} after {got:?}"),
        }
    }
}

#[tokio::test]
async fn a_claims_finished_urls_are_told_to_the_store_with_the_next_call() {
    let Some(server) = server() else { return };
    // Whether 3 or 17 were done, the lapse gives back only the one out and
    // those not yet fetched: each done was told with A's next call, /0
    // (the claim's first) included.
    for done in [3, 17] {
        let mut want = vec!["https://k.example/".to_owned()];
        want.extend((done + 1..19).map(|i| format!("/{i}")));
        let got = a_claim_stalled_after(&server, &format!("acks-{done}"), done).await;
        assert_eq!(got, want, "{done} done");
    }
}

#[tokio::test]
async fn a_gathered_url_retried_goes_back_once_with_its_new_tag() {
    let Some(server) = server() else { return };
    let (mut a, r1) = a_gathered_url_out(&server, "gather-retry", Duration::from_secs(60)).await;
    a.requeue(&r1, &ok(), 7, T0.add_millis(1_010))
        .await
        .expect("requeue");
    a.sync().await.expect("sync");
    let mut b = worker(&server, "gather-retry", &Opts::default())
        .await
        .expect("b");
    // Once: not also with its old tag from the claim's gathered record.
    takes_only(&mut b, T0.add_millis(2_010), &[("/1", 7), ("/2", 0)]).await;
}

#[tokio::test]
async fn many_workers_with_claims_never_hold_one_host_at_once_and_fetch_everything_once() {
    race_on_a_grid("many-claims", 4).await;
}

#[tokio::test]
async fn a_claim_whose_next_turn_is_far_off_goes_back_to_the_store() {
    let Some(server) = server() else { return };
    // A 20 s delay: the host's next turn is more than `HOLD_AHEAD` away.
    let o = Opts {
        claim: 3,
        min_delay: 20_000,
        ..Opts::default()
    };
    assert!(HOLD_AHEAD < Duration::from_secs(20));
    let mut a = worker(&server, "far-claim", &o).await.expect("a");
    queue_n(&mut a, 3).await;
    let r0 = fetch(a.next(T0).await.expect("next"));
    a.complete(&r0, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    let mut b = worker(&server, "far-claim", &o).await.expect("b");
    // A gives the claim back rather than sit on the host, and answers as
    // the store does.
    assert_eq!(
        a.next(T0.add_millis(20)).await.ok(),
        Some(Next::Wait {
            until: T0.add_millis(20_000)
        })
    );
    assert_eq!(a.stats().await.expect("stats").queued, 2);
    let r1 = fetch(b.next(T0.add_millis(20_000)).await.expect("next"));
    assert_eq!(r1.url, "https://h.example/1");
    assert_ne!(r1.lease, r0.lease);
}

#[tokio::test]
async fn a_worker_given_its_own_lapsed_claim_again_trusts_the_store() {
    let Some(server) = server() else { return };
    let (mut a, _) = first_of_a_claim(&server, "own-lapse").await;
    // A stalls past its lease; another worker's call finds it lapsed, and
    // the host waits a delay from then.
    let mut b = worker(&server, "own-lapse", &Opts::default())
        .await
        .expect("b");
    assert_eq!(
        b.next(T0.add_millis(6_000)).await.ok(),
        Some(Next::Wait {
            until: T0.add_millis(7_000)
        })
    );
    // Then A asks for two: its old claim still offers /1, and the store
    // gives the host out again, to A, from /0 (the same URL, so the same
    // flight id in the store).
    let t = T0.add_millis(7_000);
    let batch = a.next_batch(2, t).await.expect("next");
    let urls: Vec<&str> = batch.released.iter().map(|r| r.url.as_str()).collect();
    assert_eq!(urls, ["https://h.example/1", "https://h.example/0"]);
    let (old, new) = (&batch.released[0], &batch.released[1]);
    assert_ne!(old.lease, new.lease, "two releases, two ids");
    // The old claim lapsed: the store gave its host out again.
    assert_eq!(a.confirm(old, t).await.ok(), Some(false));
    assert_eq!(a.confirm(new, t).await.ok(), Some(true));
    a.complete(new, &ok(), t).await.expect("complete");
    let (got, _) = take_n(&mut a, t, 2).await;
    let urls: Vec<&str> = got.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(urls, ["https://h.example/1", "https://h.example/2"]);
    a.sync().await.expect("sync");
    let s = a.stats().await.expect("stats");
    assert_eq!((s.queued, s.in_flight), (0, 0), "{s:?}");
}

#[tokio::test]
async fn links_a_claim_gathers_and_others_in_one_call_answer_in_order() {
    let Some(server) = server() else { return };
    let o = Opts {
        claim: 3,
        lease: Duration::from_secs(60),
        seen_cache: 0,
        ..Opts::default()
    };
    let mut a = worker(&server, "mixed-claim", &o).await.expect("a");
    queue_n(&mut a, 1).await;
    let r0 = fetch(a.next(T0).await.expect("next"));
    assert_eq!(r0.url, "https://h.example/0");
    // The claim's host's new links, another host's, and a repeat, in one
    // call: one answer each, in order.
    let urls = [
        "https://h.example/1",
        "https://other.test/x",
        "https://h.example/2",
        "https://h.example/1",
        "https://other.test/x",
    ];
    let offers = offers_of(&urls);
    let got = a
        .enqueue_many(&offers, T0.add_millis(5))
        .await
        .expect("enqueue");
    use Admission::{Duplicate, Queued};
    assert_eq!(got, vec![Queued, Queued, Queued, Duplicate, Duplicate]);
    // Three wait (two with the claim); the claim's go out in their order.
    assert_eq!(a.stats().await.expect("stats").queued, 3);
    a.complete(&r0, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    let mut out = Vec::new();
    let mut now = T0.add_millis(10);
    while out.len() < 3 && now < T0.add_millis(10_000) {
        for r in a.next_batch(8, now).await.expect("next").released {
            a.complete(&r, &ok(), now).await.expect("complete");
            out.push(r.url);
        }
        now = now.add_millis(500);
    }
    out.sort_by_key(|u| u.contains("other"));
    assert_eq!(
        out,
        [
            "https://h.example/1",
            "https://h.example/2",
            "https://other.test/x"
        ]
    );
}

#[tokio::test]
async fn thousands_of_hosts_due_at_once_in_one_partition_are_released() {
    let Some(server) = server() else { return };
    let mut w = worker(&server, "many-due", &Opts::default())
        .await
        .expect("open");
    let urls: Vec<String> = (0..6_000).map(|i| format!("https://m{i}.test/")).collect();
    w.enqueue_many(&offers_of(&urls), T0)
        .await
        .expect("enqueue");
    // All 6,000 are due at once: one step moves them to the ready set.
    let r = w.next_batch(8, T0).await.expect("next");
    assert_eq!(r.released.len(), 8);
}

#[tokio::test]
async fn a_url_queued_once_is_a_duplicate_even_past_a_bound() {
    let Some(server) = server() else { return };
    let o = Opts {
        partitions: 4,
        max_per_key: 1,
        seen_cache: 0,
        ..Opts::default()
    };
    let mut w = worker(&server, "dup-bound", &o).await.expect("open");
    let mut q = async |u: &str| {
        w.enqueue_many(&offers_of(&[u]), T0)
            .await
            .expect("enqueue")
            .pop()
            .expect("an answer")
    };
    assert_eq!(q("https://a.test/1").await, Admission::Queued);
    // The host is at its bound: the same URL again is a duplicate (as the
    // embedded frontier answers), one step in the store.
    assert_eq!(q("https://a.test/1").await, Admission::Duplicate);
    // A new URL is pushed back, and not remembered: pushed back again.
    for _ in 0..2 {
        assert!(matches!(
            q("https://a.test/2").await,
            Admission::Backpressure { reason } if reason.contains("a.test")
        ));
    }
}

#[tokio::test]
async fn one_enqueue_call_across_partitions_answers_as_one_url_at_a_time() {
    let Some(server) = server() else { return };
    // 702 offers (more than one call holds) over 90 hosts in 16
    // partitions: repeats within the batch, hosts over their bound of 3,
    // and a URL that is not one.
    let mut urls: Vec<String> = (0..700)
        .map(|i| format!("https://h{}.test/{}", (i * 7) % 90, (i / 90) % 5))
        .collect();
    urls.insert(350, "not a url".to_owned());
    // A repeat while its host is under its bound.
    urls.insert(1, urls[0].clone());
    let offers: Vec<mannerly_polite::frontier::Offer<'_>> = urls
        .iter()
        .enumerate()
        .map(|(i, u)| mannerly_polite::frontier::Offer::new(u, u8::try_from(i % 3).unwrap_or(0), 0))
        .collect();
    // The store's answers, each time: the worker's memory aside.
    let o = Opts {
        partitions: 16,
        max_per_key: 3,
        seen_cache: 0,
        ..Opts::default()
    };
    let mut batch = worker(&server, "batched", &o).await.expect("open");
    let together = batch.enqueue_many(&offers, T0).await.expect("enqueue");
    let mut single = worker(&server, "single", &o).await.expect("open");
    let mut alone = Vec::new();
    for o in &offers {
        let mut a = single
            .enqueue_many(std::slice::from_ref(o), T0)
            .await
            .expect("enqueue");
        alone.push(a.pop().expect("an answer"));
    }
    assert_eq!(together, alone);
    let queued = |a: &Vec<Admission>| a.iter().filter(|x| **x == Admission::Queued).count();
    assert_eq!(queued(&together), 90 * 3, "each host up to its bound");
    assert!(together.contains(&Admission::Duplicate));
    assert_eq!(
        batch.stats().await.expect("stats").queued,
        single.stats().await.expect("stats").queued
    );
    // Both release the same URLs, in the same order.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (w, got) in [(&mut batch, &mut a), (&mut single, &mut b)] {
        loop {
            let r = w.next_batch(64, T0).await.expect("next");
            if r.released.is_empty() {
                break;
            }
            for x in r.released {
                w.complete(&x, &ok(), T0).await.expect("complete");
                got.push((x.url, x.priority));
            }
        }
    }
    assert_eq!(a.len(), 90);
    assert_eq!(a, b);
}

#[tokio::test]
async fn a_server_still_loading_its_data_after_a_restart_is_waited_for() {
    let Some(mut server) = server() else { return };
    let o = Opts {
        partitions: 4,
        ..Opts::default()
    };
    let mut w = crawler_worker(&server, "loading", &o).await;
    for i in 0..4 {
        w.enqueue(&format!("https://h{i}.test/"), 0, T0)
            .await
            .expect("enqueue");
    }
    // Enough keys that loading them at 1 ms each takes a few seconds,
    // during which the server refuses every command with LOADING.
    let mut raw = connection(&server).await;
    let mut fill = redis::pipe();
    for i in 0..2_500 {
        fill.cmd("SET").arg(format!("filler:{i}")).arg(i).ignore();
    }
    fill.cmd("SAVE").ignore();
    fill.query_async::<()>(&mut raw)
        .await
        .expect("fill and save");
    server.restart_loading(&[
        "--key-load-delay",
        "1000",
        "--loading-process-events-interval-bytes",
        "1024",
    ]);
    let mut probe = connection(&server).await;
    let loading = redis::cmd("GET")
        .arg("filler:0")
        .query_async::<Option<String>>(&mut probe)
        .await;
    assert!(
        loading.as_ref().is_err_and(
            |e| e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::BusyLoading)
        ),
        "the server is loading: {loading:?}"
    );
    // Every step waits for it (a pipeline is refused command by command,
    // and was taken for a failure) and then goes on as before.
    let mut got: Vec<String> = Vec::new();
    for _ in 0..10 {
        let b = w.next_batch(8, T0).await.expect("next while loading");
        got.extend(b.released.into_iter().map(|r| r.url));
    }
    got.sort();
    assert_eq!(
        got,
        (0..4)
            .map(|i| format!("https://h{i}.test/"))
            .collect::<Vec<_>>()
    );
}

/// Offers of `urls` at priority 0, tag 0.
fn offers_of<S: AsRef<str>>(urls: &[S]) -> Vec<mannerly_polite::frontier::Offer<'_>> {
    urls.iter()
        .map(|u| mannerly_polite::frontier::Offer::new(u.as_ref(), 0, 0))
        .collect()
}

/// Script calls the server has run so far.
async fn script_calls(server: &RedisServer) -> u64 {
    // Less the board's posts (each numbered: the counters sum them), which
    // ride in the same round trip as the changes they tell of.
    let mut raw = connection(server).await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*:boardseq")
        .query_async(&mut raw)
        .await
        .expect("KEYS");
    let mut posts = 0;
    for k in keys {
        let n: u64 = redis::cmd("GET")
            .arg(k)
            .query_async(&mut raw)
            .await
            .expect("GET");
        posts += n;
    }
    command_calls(server, "evalsha").await - posts
}

/// How many `command` calls the server ran, scripts' own included.
async fn command_calls(server: &RedisServer, command: &str) -> u64 {
    let mut raw = connection(server).await;
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut raw)
        .await
        .expect("INFO");
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|l| l.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_link_met_again_costs_the_server_nothing() {
    let Some(server) = server() else { return };
    let o = Opts {
        partitions: 4,
        ..Opts::default()
    };
    let mut w = worker(&server, "memory", &o).await.expect("open");
    let (a, b, c) = (
        "https://a.test/x",
        "https://b.test/y#top",
        "https://c.test/z",
    );
    let first = w
        .enqueue_many(&offers_of(&[a, b]), T0)
        .await
        .expect("enqueue");
    assert_eq!(first, [Admission::Queued, Admission::Queued]);
    let before = script_calls(&server).await;
    // The same links again (one spelt differently but the same URL).
    let again = w
        .enqueue_many(&offers_of(&[a, "https://b.test/y"]), T0)
        .await
        .expect("enqueue");
    assert_eq!(again, [Admission::Duplicate, Admission::Duplicate]);
    assert_eq!(script_calls(&server).await, before, "no call for them");
    let mixed = w
        .enqueue_many(&offers_of(&[a, c]), T0)
        .await
        .expect("enqueue");
    assert_eq!(mixed, [Admission::Duplicate, Admission::Queued]);
    assert_eq!(script_calls(&server).await, before + 1, "one call, for c");
    // Another worker has no memory of them: the store answers.
    let mut other = worker(&server, "memory", &o).await.expect("open");
    let theirs = other
        .enqueue_many(&offers_of(&[a, b, c]), T0)
        .await
        .expect("enqueue");
    assert_eq!(theirs, vec![Admission::Duplicate; 3]);
    assert_eq!(w.stats().await.expect("stats").queued, 3);
}

#[tokio::test]
async fn a_server_that_lost_its_data_gets_back_what_the_worker_remembered() {
    let Some(mut server) = server() else { return };
    // No persistence here: a restart loses everything.
    let o = Opts {
        partitions: 4,
        min_delay: 0,
        ..Opts::default()
    };
    let mut w = crawler_worker(&server, "lost", &o).await;
    let (x, y) = ("https://x.test/", "https://y.test/");
    assert_eq!(
        w.enqueue(x, 0, T0).await.expect("enqueue"),
        Admission::Queued
    );
    server.restart(&[]);
    // Met again before any call shows the worker the restart: answered
    // from its memory, which is now wrong...
    assert_eq!(
        w.enqueue(x, 0, T0).await.expect("enqueue"),
        Admission::Duplicate
    );
    // ...until the next call finds a new server, and the worker offers
    // the store again what it answered for it meanwhile.
    let mut got: Vec<String> = Vec::new();
    for _ in 0..5 {
        let b = w.next_batch(8, T0).await.expect("next");
        for r in b.released {
            w.complete(&r, &ok(), T0).await.expect("complete");
            got.push(r.url);
        }
    }
    assert_eq!(got, [x]);
    // Its memory starts again from what the new server answers.
    assert_eq!(
        w.enqueue(y, 0, T0).await.expect("enqueue"),
        Admission::Queued
    );
    let calls = script_calls(&server).await;
    assert_eq!(
        w.enqueue(y, 0, T0).await.expect("enqueue"),
        Admission::Duplicate
    );
    assert_eq!(script_calls(&server).await, calls);
}

/// A worker with no delay over `partitions`, with `https://h{h}.test/`
/// queued for each of `hosts` hosts by another (so this one knows of none
/// of them, and probes).
async fn one_url_per_host(
    server: &RedisServer,
    crawl: &str,
    partitions: u32,
    hosts: u32,
) -> FleetFrontier<MultiplexedConnection> {
    let o = Opts {
        partitions,
        min_delay: 0,
        ..Opts::default()
    };
    let mut seeder = worker(server, crawl, &o).await.expect("open");
    for h in 0..hosts {
        seeder
            .enqueue(&format!("https://h{h}.test/"), 0, T0)
            .await
            .expect("enqueue");
    }
    worker(server, crawl, &o).await.expect("open")
}

#[tokio::test]
async fn releases_probes_and_completions_over_many_partitions_go_in_one_call_each() {
    let Some(server) = server() else { return };
    let mut w = one_url_per_host(&server, "settles", 4, 6).await;
    // The first asks every partition whether it has anything (plain
    // reads, no script), then those that have: one call, whatever the
    // partitions.
    let before = script_calls(&server).await;
    let mut out = w.next_batch(6, T0).await.expect("next").released;
    assert!(out.len() > 1, "{out:?}");
    assert_eq!(script_calls(&server).await, before + 1, "one release call");
    for _ in 0..10 {
        out.extend(w.next_batch(6, T0).await.expect("next").released);
    }
    assert_eq!(out.len(), 6);
    for r in &out {
        w.complete(r, &ok(), T0).await.expect("complete");
    }
    let before = script_calls(&server).await;
    w.flush().await.expect("flush");
    assert_eq!(
        script_calls(&server).await,
        before + 1,
        "six completions, one call"
    );
    let s = w.stats().await.expect("stats");
    assert_eq!((s.queued, s.in_flight), (0, 0), "{s:?}");
    assert_eq!(w.stale, 0);
}

#[tokio::test]
async fn a_call_holds_a_bounded_share_of_the_partitions() {
    let Some(server) = server() else { return };
    // 40 hosts in more than 16 of 200 partitions: two release calls of
    // 16 partitions for 32 releases.
    let mut w = one_url_per_host(&server, "chunks", 200, 40).await;
    let before = script_calls(&server).await;
    let got = w.next_batch(32, T0).await.expect("next").released;
    assert_eq!(got.len(), 32);
    assert_eq!(script_calls(&server).await, before + 2);
}

#[tokio::test]
async fn a_wait_that_is_over_asks_its_partition_not_every_partition() {
    let Some(server) = server() else { return };
    // 200 partitions: a probe of them all is two calls.
    let o = Opts {
        partitions: 200,
        ..Opts::default()
    };
    let mut w = worker(&server, "waited-out", &o).await.expect("open");
    for h in 0..2 {
        w.enqueue(&format!("https://h{h}.test/"), 0, T0)
            .await
            .expect("enqueue");
    }
    let first = w.next_batch(2, T0).await.expect("next").released;
    assert_eq!(first.len(), 2);
    for r in &first {
        w.complete(r, &ok(), T0.add_millis(10))
            .await
            .expect("complete");
        w.enqueue(&format!("{}next", r.url), 0, T0.add_millis(10))
            .await
            .expect("enqueue");
    }
    // Both hosts wait out their delay (1 s).
    let batch = w.next_batch(2, T0.add_millis(20)).await.expect("next");
    assert!(batch.released.is_empty());
    assert_eq!(
        batch.then,
        Some(Next::Wait {
            until: T0.add_millis(1_000)
        })
    );
    // When the wait is over, only the two partitions are asked: one call.
    let before = script_calls(&server).await;
    let again = w
        .next_batch(2, T0.add_millis(1_000))
        .await
        .expect("next")
        .released;
    assert_eq!(again.len(), 2, "{again:?}");
    assert_eq!(script_calls(&server).await, before + 1);
}

#[tokio::test]
async fn a_worker_with_nothing_to_do_probes_less_and_less_until_there_is_something() {
    let Some(server) = server() else { return };
    let o = Opts::default();
    let mut w = worker(&server, "backoff", &o).await.expect("open");
    let mut other = worker(&server, "backoff", &o).await.expect("other");
    // Whether a call at `t` probed every partition.
    async fn probed(_: &RedisServer, w: &mut Worker, t: UnixMillis) -> bool {
        let before = w.probes;
        w.next_batch(1, t).await.expect("next");
        w.probes > before
    }
    // Each probe that finds nothing doubles the time to the next, from
    // 500 ms (so 1,000 after the first), up to 1,600.
    let mut t = T0;
    assert!(probed(&server, &mut w, t).await);
    for gap in [1_000, 1_600, 1_600] {
        assert!(
            !probed(&server, &mut w, t.add_millis(gap - 1)).await,
            "{gap}"
        );
        t = t.add_millis(gap);
        assert!(probed(&server, &mut w, t).await, "{gap}");
    }
    // Another worker queues a URL: this one sees it at its next probe,
    // not before.
    other
        .enqueue("https://h.example/", 0, t)
        .await
        .expect("enqueue");
    let early = w.next_batch(1, t.add_millis(1_599)).await.expect("next");
    assert!(early.released.is_empty());
    let r = w.next_batch(1, t.add_millis(1_600)).await.expect("next");
    assert_eq!(r.released.len(), 1);
    // Having found something, the next probe is 500 ms on.
    t = t.add_millis(1_600);
    w.complete(&r.released[0], &ok(), t)
        .await
        .expect("complete");
    w.next_batch(1, t).await.expect("next");
    assert!(!probed(&server, &mut w, t.add_millis(499)).await);
    assert!(probed(&server, &mut w, t.add_millis(500)).await);
}

/// What the server holds for `field` in partition `p`'s hash `what`.
async fn hget(
    server: &RedisServer,
    layout: &Layout,
    host: &str,
    what: &str,
    field: &str,
) -> Option<String> {
    let mut con = connection(server).await;
    redis::cmd("HGET")
        .arg(layout.key(layout.partition_of(host), what))
        .arg(field)
        .query_async(&mut con)
        .await
        .expect("hget")
}

#[tokio::test]
async fn robots_txt_known_and_its_state_go_with_the_next_call_saved_first() {
    use mannerly_fetch::{Origin, OriginState, Store};
    let Some(server) = server() else { return };
    let o = Opts {
        robots_gate: true,
        ..Opts::default()
    };
    let mut a = crawler_worker(&server, "rk", &o).await;
    let layout = a.layout().clone();
    let con = mannerly_fleet::connect(&server.url())
        .await
        .expect("connect");
    let store = mannerly_fleet::RobotsStore::behind(con, layout.clone(), a.outbox());
    a.enqueue("https://h.test/1", 0, T0).await.expect("enqueue");
    let robots = fetch(a.next(T0).await.expect("next"));
    assert_eq!(robots.url, "https://h.test/robots.txt");
    let origin = Origin::of("https://h.test/").expect("origin");
    let state = OriginState::new(origin.clone()).to_stored();
    store.save(&state).await.expect("save");
    // Saved here, not yet on the server; this worker sees it.
    let field = origin.to_string();
    assert_eq!(
        hget(&server, &layout, "h.test", "robots", &field).await,
        None
    );
    assert_eq!(
        store.load(&origin).await.expect("load"),
        Some(state.clone())
    );
    a.robots_known(
        "https://h.test",
        Default::default(),
        T0.add_millis(86_400_000),
        T0,
    )
    .await
    .expect("known");
    a.complete(&robots, &ok(), T0).await.expect("complete");
    // Neither the gate nor the state moved: the fetch is still under way
    // as far as the fleet knows.
    assert_eq!(
        hget(&server, &layout, "h.test", "rb", "https://h.test")
            .await
            .as_deref(),
        Some("F")
    );
    assert_eq!(
        hget(&server, &layout, "h.test", "robots", &field).await,
        None
    );
    // The next call takes them all, and releases the page.
    let page = fetch(a.next(T0.add_millis(1_000)).await.expect("next"));
    assert_eq!(page.url, "https://h.test/1");
    let json = hget(&server, &layout, "h.test", "robots", &field)
        .await
        .expect("saved");
    assert_eq!(
        serde_json::from_str::<mannerly_fetch::policy::StoredState>(&json).expect("json"),
        state
    );
    let gate = hget(&server, &layout, "h.test", "rb", "https://h.test")
        .await
        .expect("gate");
    assert_eq!(gate, format!("K{}", T0.add_millis(86_400_000).as_millis()));
    // A worker that did not fetch it loads it from the server.
    let other = mannerly_fleet::RobotsStore::new(
        mannerly_fleet::connect(&server.url())
            .await
            .expect("connect"),
        layout,
    );
    assert_eq!(other.load(&origin).await.expect("load"), Some(state));
}

/// Answers every robots.txt with 429 and `Retry-After: 3600`, counting.
struct TooMany(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl mannerly_fetch::Fetcher for TooMany {
    fn fetch(
        &self,
        origin: &mannerly_fetch::Origin,
        _: &mannerly_fetch::Validators,
    ) -> impl std::future::Future<Output = mannerly_fetch::FetchOutcome> + Send {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::future::ready(mannerly_fetch::FetchOutcome::Response {
            response: mannerly_fetch::policy::HttpResponse {
                status: 429,
                headers: vec![("retry-after".into(), "3600".into())],
                body: Vec::new(),
                body_cut: false,
                url: format!("{origin}/robots.txt"),
            },
            redirects: Vec::new(),
        })
    }
}

#[tokio::test]
async fn a_robots_txt_that_made_its_origin_wait_outlives_a_worker_killed_before_its_next_call() {
    use mannerly_fetch::policy::Access;
    use mannerly_fetch::{CacheConfig, FakeClock, Origin, RobotsCache};
    use std::sync::atomic::Ordering::SeqCst;
    use std::sync::Arc;
    let Some(server) = server() else { return };
    let a = crawler_worker(&server, "rw", &Opts::default()).await;
    let layout = a.layout().clone();
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let cache = |store: mannerly_fleet::RobotsStore| {
        let clock = Arc::new(FakeClock::new(T0));
        let fetcher = TooMany(asked.clone());
        RobotsCache::new(fetcher, clock, Arc::new(store), CacheConfig::default())
    };
    let url = server.url();
    let con = || mannerly_fleet::connect(&url);
    let store = mannerly_fleet::RobotsStore::behind(
        con().await.expect("connect"),
        layout.clone(),
        a.outbox(),
    );
    let at_a = cache(store);
    let origin = Origin::of("https://busy.test/").expect("origin");
    let d = at_a.decision(&origin).await;
    assert!(matches!(d.access, Access::DisallowAll), "{d:?}");
    assert_eq!(asked.load(SeqCst), 1);
    // A is killed here, before its frontier's next call.
    drop((at_a, a));
    // The next worker knows robots.txt answered 429 for an hour, and does
    // not ask again.
    let at_b = cache(mannerly_fleet::RobotsStore::new(
        con().await.expect("connect"),
        layout,
    ));
    let d = at_b.decision(&origin).await;
    assert!(matches!(d.access, Access::DisallowAll), "{d:?}");
    assert_eq!(
        asked.load(SeqCst),
        1,
        "robots.txt asked again inside its Retry-After"
    );
}

#[tokio::test]
async fn robots_txt_states_saved_with_no_call_to_take_them_go_by_themselves_past_a_bound() {
    use mannerly_fetch::{Origin, OriginState, Store};
    let Some(server) = server() else { return };
    let a = crawler_worker(&server, "ob", &Opts::default()).await;
    let layout = a.layout().clone();
    let con = mannerly_fleet::connect(&server.url())
        .await
        .expect("connect");
    let store = mannerly_fleet::RobotsStore::behind(con, layout.clone(), a.outbox());
    let origin = |i: u32| Origin::of(&format!("https://h{i}.test/")).expect("origin");
    for i in 0..255 {
        store
            .save(&OriginState::new(origin(i)).to_stored())
            .await
            .expect("save");
    }
    // A second save of one origin replaces the first.
    store
        .save(&OriginState::new(origin(0)).to_stored())
        .await
        .expect("save");
    assert_eq!(
        hget(
            &server,
            &layout,
            "h254.test",
            "robots",
            &origin(254).to_string()
        )
        .await,
        None
    );
    assert!(!a.outbox().is_empty());
    store
        .save(&OriginState::new(origin(255)).to_stored())
        .await
        .expect("save");
    assert!(a.outbox().is_empty());
    for i in [0, 254, 255] {
        assert!(
            hget(
                &server,
                &layout,
                &format!("h{i}.test"),
                "robots",
                &origin(i).to_string()
            )
            .await
            .is_some(),
            "{i}"
        );
    }
}

#[tokio::test]
async fn the_progress_lines_stats_may_stand_while_the_frontiers_are_exact() {
    let Some(server) = server() else { return };
    let mut a = worker(&server, "st", &Opts::default()).await.expect("open");
    a.enqueue("https://a.test/1", 0, T0).await.expect("enqueue");
    assert_eq!(a.stats().await.expect("stats").queued, 1);
    a.enqueue("https://b.test/1", 0, T0).await.expect("enqueue");
    // Read a moment ago: it stands, though this worker changed something.
    assert_eq!(a.recent_stats().await.expect("stats").queued, 1);
    assert_eq!(a.stats().await.expect("stats").queued, 2);
}

#[tokio::test]
async fn the_progress_lines_stats_read_a_fifth_of_the_partitions_in_turn() {
    let Some(server) = server() else { return };
    let o = Opts {
        partitions: 10,
        stats_every: Duration::ZERO,
        ..Opts::default()
    };
    let mut a = worker(&server, "slices", &o).await.expect("a");
    let mut b = worker(&server, "slices", &o).await.expect("b");
    let hosts: Vec<String> = (0..40).map(|i| format!("https://s{i}.test/")).collect();
    for u in &hosts[..20] {
        a.enqueue(u, 0, T0).await.expect("enqueue");
    }
    // The first read asks every partition.
    assert_eq!(b.recent_stats().await.expect("stats").queued, 20);
    for u in &hosts[20..] {
        a.enqueue(u, 0, T0).await.expect("enqueue");
    }
    // Each later read asks two of the ten partitions: the count grows as
    // they come round, and is whole after five reads.
    let mut seen = Vec::new();
    for _ in 0..5 {
        let before = command_calls(&server, "hmget").await;
        seen.push(b.recent_stats().await.expect("stats").queued);
        assert_eq!(command_calls(&server, "hmget").await - before, 2);
    }
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert!(seen[0] < 40, "{seen:?}");
    assert_eq!(seen[4], 40, "{seen:?}");
    // The exact read asks every partition.
    assert_eq!(b.stats().await.expect("stats").queued, 40);
}

/// A worker claiming 3 at a time behind the robots.txt gate, with /0 and
/// /1 queued on h.example: its first release is the robots.txt, and the
/// claim takes both URLs with it. Returns it and that release.
async fn a_robots_txt_claim(server: &RedisServer, crawl: &str) -> (Worker, Released) {
    let o = Opts {
        claim: 3,
        robots_gate: true,
        ..Opts::default()
    };
    let mut a = worker(server, crawl, &o).await.expect("a");
    queue_n(&mut a, 2).await;
    let robots = fetch(a.next(T0).await.expect("next"));
    assert_eq!(robots.url, "https://h.example/robots.txt");
    (a, robots)
}

#[tokio::test]
async fn a_robots_txt_release_claims_its_hosts_urls_for_once_it_is_known() {
    let Some(server) = server() else { return };
    let (mut a, robots) = a_robots_txt_claim(&server, "robots-claim").await;
    let gate = Opts {
        robots_gate: true,
        ..Opts::default()
    };
    let mut b = worker(&server, "robots-claim", &gate).await.expect("b");
    // The store's queue holds none of them: they are A's.
    assert_eq!(b.stats().await.expect("stats").queued, 0);
    assert_eq!(b.next(T0.add_millis(10)).await.ok(), Some(Next::Busy));
    a.robots_known(
        "https://h.example",
        Default::default(),
        T0.add_millis(86_400_000),
        T0.add_millis(10),
    )
    .await
    .expect("known");
    a.complete(&robots, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    // A releases them itself, the delay after the robots.txt.
    let r0 = after_wait(&mut a, T0.add_millis(30), T0.add_millis(1_000)).await;
    assert_eq!(
        (r0.url.as_str(), r0.kind),
        ("https://h.example/0", Kind::Page)
    );
    a.complete(&r0, &ok(), T0.add_millis(1_010))
        .await
        .expect("complete");
    let r1 = fetch(a.next(T0.add_millis(2_000)).await.expect("next"));
    assert_eq!(r1.url, "https://h.example/1");
    a.complete(&r1, &ok(), T0.add_millis(2_010))
        .await
        .expect("complete");
    a.sync().await.expect("sync");
    // Settled: the robots.txt is known to the fleet, and a new URL of the
    // host goes out with no robots.txt first.
    assert_eq!(
        hget(&server, a.layout(), "h.example", "rb", "https://h.example").await,
        Some(format!("K{}", T0.add_millis(86_400_000).as_millis()))
    );
    assert_eq!(
        b.enqueue("https://h.example/9", 0, T0.add_millis(2_020))
            .await
            .ok(),
        Some(Admission::Queued)
    );
    let r9 = fetch(b.next(T0.add_millis(3_000)).await.expect("next"));
    assert_eq!(
        (r9.url.as_str(), r9.kind),
        ("https://h.example/9", Kind::Page)
    );
    b.complete(&r9, &ok(), T0.add_millis(3_010))
        .await
        .expect("complete");
    assert_eq!(b.next(T0.add_millis(9_000)).await.ok(), Some(Next::Empty));
}

/// A robots.txt claim goes on once its robots.txt is known, with the
/// pacing that robots.txt set; if it then lapses (its worker stopped),
/// the worker that takes the host over keeps that Crawl-delay, from the
/// lapse and between its own requests, instead of the minimum delay the
/// host had before its robots.txt was read.
#[tokio::test]
async fn a_robots_txt_claims_crawl_delay_outlives_its_lapse() {
    let Some(server) = server() else { return };
    let (mut a, robots) = a_robots_txt_claim(&server, "robots-claim-delay").await;
    let pacing = mannerly_polite::controller::RobotsPacing {
        crawl_delay: Some(4.0),
        request_rate: None,
    };
    let until = T0.add_millis(86_400_000);
    a.robots_known("https://h.example", pacing, until, T0.add_millis(10))
        .await
        .expect("known");
    a.complete(&robots, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    a.flush().await.expect("flush");
    assert_eq!(
        a.stats().await.expect("stats").in_flight,
        1,
        "the claim goes on"
    );
    // A stalls with /0 and /1 claimed. Past its lease, B takes the host.
    let gate = Opts {
        robots_gate: true,
        ..Opts::default()
    };
    let mut b = worker(&server, "robots-claim-delay", &gate)
        .await
        .expect("b");
    let r0 = after_wait(&mut b, T0.add_millis(5_001), T0.add_millis(9_001)).await;
    assert_eq!(r0.url, "https://h.example/0");
    b.complete(&r0, &ok(), T0.add_millis(9_010))
        .await
        .expect("complete");
    b.sync().await.expect("sync");
    assert_eq!(
        b.next(T0.add_millis(10_001)).await.ok(),
        Some(Next::Wait {
            until: T0.add_millis(13_001)
        })
    );
}

/// A 429's Retry-After reaches the store when it is reported, not with
/// the worker's next call: a worker killed right after it (its next call
/// never made) leaves the host waiting the Retry-After, not only its
/// delay from the lapse. With a claim as without.
#[tokio::test]
async fn a_retry_after_outlives_a_worker_killed_before_its_next_call() {
    let Some(server) = server() else { return };
    let too_many = Outcome::Status {
        status: 429,
        latency: 10,
        retry_after: Some("600".into()),
    };
    for claim in [1, 3] {
        let crawl = format!("retry-after-kill-{claim}");
        let o = Opts {
            claim,
            ..Opts::default()
        };
        let mut a = worker(&server, &crawl, &o).await.expect("a");
        queue_n(&mut a, 3).await;
        let r0 = fetch(a.next(T0).await.expect("next"));
        assert_eq!(r0.url, "https://h.example/0");
        // Retried (the flight settles), or given up on (a claim goes on).
        if claim == 1 {
            a.requeue(&r0, &too_many, 1, T0.add_millis(10))
                .await
                .expect("requeue");
        } else {
            a.complete(&r0, &too_many, T0.add_millis(10))
                .await
                .expect("complete");
        }
        // A is killed: dropped with no further call.
        drop(a);
        let mut b = worker(&server, &crawl, &o).await.expect("b");
        let until = T0.add_millis(10 + 600_000);
        match b.next(T0.add_millis(5_001)).await.expect("next") {
            Next::Wait { until: u } => assert!(u >= until, "claim {claim}: waits until {u:?}"),
            other => panic!("claim {claim}: the host went on before its Retry-After: {other:?}"),
        }
        let r = fetch(b.next(until).await.expect("next"));
        assert!(r.url.starts_with("https://h.example/"), "{}", r.url);
    }
}

#[tokio::test]
async fn a_robots_txt_claim_that_lapses_or_is_not_known_gives_its_urls_back() {
    let Some(server) = server() else { return };
    let gate = Opts {
        robots_gate: true,
        ..Opts::default()
    };
    // A stalls with the robots.txt out: past the lease, B fetches it
    // again, then the URLs.
    let (_a, _) = a_robots_txt_claim(&server, "robots-claim-lapse").await;
    let mut b = worker(&server, "robots-claim-lapse", &gate)
        .await
        .expect("b");
    let again = after_wait(&mut b, T0.add_millis(5_001), T0.add_millis(6_001)).await;
    assert_eq!(again.url, "https://h.example/robots.txt");
    b.robots_known(
        "https://h.example",
        Default::default(),
        T0.add_millis(86_400_000),
        T0.add_millis(6_010),
    )
    .await
    .expect("known");
    b.complete(&again, &ok(), T0.add_millis(6_010))
        .await
        .expect("complete");
    takes_only(&mut b, T0.add_millis(7_010), &[("/0", 0), ("/1", 0)]).await;

    // The robots.txt is unavailable: the claim goes back at once, and the
    // URLs wait for the gate.
    let (mut a, robots) = a_robots_txt_claim(&server, "robots-claim-503").await;
    a.robots_unavailable(
        "https://h.example",
        T0.add_millis(60_000),
        "503",
        T0.add_millis(10),
    )
    .await
    .expect("unavailable");
    a.complete(&robots, &ok(), T0.add_millis(10))
        .await
        .expect("complete");
    a.flush().await.expect("flush");
    let mut b = worker(&server, "robots-claim-503", &gate).await.expect("b");
    assert_eq!(b.stats().await.expect("stats").queued, 2);
    let again = after_wait(&mut b, T0.add_millis(1_000), T0.add_millis(60_000)).await;
    assert_eq!(again.url, "https://h.example/robots.txt");
}

/// Queues three URLs of `host` through `w`, then skips the host (a
/// Crawl-delay past the maximum), and sends it all.
async fn skip_host(w: &mut Worker, host: &str) {
    for i in 0..3 {
        let url = format!("https://{host}/{i}");
        assert_eq!(w.enqueue(&url, 0, T0).await.ok(), Some(Admission::Queued));
    }
    learn_host_is_skipped(w, host).await;
}

/// `w` learns that `host`'s robots.txt asks for a Crawl-delay over the
/// maximum, so the host is to be skipped, and tells the store.
async fn learn_host_is_skipped(w: &mut Worker, host: &str) {
    let far = mannerly_polite::controller::RobotsPacing {
        crawl_delay: Some(100_000.0),
        request_rate: None,
    };
    w.robots_known(
        &format!("https://{host}"),
        far,
        T0.add_millis(86_400_000),
        T0,
    )
    .await
    .expect("known");
    w.flush().await.expect("flush");
}

#[tokio::test]
async fn urls_dropped_with_their_host_are_taken_once_where_the_stats_say_they_are() {
    let Some(server) = server() else { return };
    let o = Opts {
        partitions: 8,
        ..Opts::default()
    };
    let mut a = worker(&server, "skipped", &o).await.expect("a");
    let mut b = worker(&server, "skipped", &o).await.expect("b");
    // The first takes read every partition: nothing yet.
    assert!(a.take_skipped().await.expect("take").is_empty());
    assert!(b.take_skipped().await.expect("take").is_empty());
    skip_host(&mut a, "h.example").await;
    // Until a read of the stats says where they are, a take reads nothing.
    assert!(a.take_skipped().await.expect("take").is_empty());
    assert_eq!(b.stats().await.expect("stats").skipped, 3);
    let mut urls: Vec<String> = b
        .take_skipped()
        .await
        .expect("take")
        .into_iter()
        .map(|s| s.url)
        .collect();
    urls.sort();
    assert_eq!(
        urls,
        [
            "https://h.example/0",
            "https://h.example/1",
            "https://h.example/2"
        ]
    );
    // Once: A, told the same, finds them taken.
    assert_eq!(a.stats().await.expect("stats").skipped, 3);
    assert!(a.take_skipped().await.expect("take").is_empty());
    // After `sync`, a take reads every partition, stats or not.
    skip_host(&mut b, "k.example").await;
    a.sync().await.expect("sync");
    assert_eq!(a.take_skipped().await.expect("take").len(), 3);
}

#[tokio::test]
async fn an_idle_worker_asks_only_the_partitions_others_changed_and_where_a_lease_lapses() {
    let Some(server) = server() else { return };
    let o = Opts {
        partitions: 64,
        ..Opts::default()
    };
    let mut a = worker(&server, "board", &o).await.expect("a");
    let mut b = worker(&server, "board", &o).await.expect("b");
    // The first probe asks every partition.
    assert_eq!(b.next(T0).await.ok(), Some(Next::Empty));
    assert_eq!(b.probed, 64);
    // A queues a URL: B's next probe asks that partition alone, and finds
    // it.
    a.enqueue("https://h.example/0", 0, T0)
        .await
        .expect("enqueue");
    let r = fetch(b.next(T0.add_millis(1_000)).await.expect("next"));
    assert_eq!(r.url, "https://h.example/0");
    assert_eq!(b.probed, 65);
    b.complete(&r, &ok(), T0.add_millis(1_000))
        .await
        .expect("complete");
    b.flush().await.expect("flush");
    // A takes a URL of another host and stalls with it: B, asking what
    // changed, sees the flight and when its lease lapses, and then asks
    // that partition again and gets the URL back.
    a.enqueue("https://k.example/0", 0, T0.add_millis(1_100))
        .await
        .expect("enqueue");
    let k = fetch(a.next(T0.add_millis(1_200)).await.expect("next"));
    assert_eq!(k.url, "https://k.example/0");
    // (B first asks again the partition it changed itself.)
    assert_eq!(b.next(T0.add_millis(2_000)).await.ok(), Some(Next::Empty));
    assert_eq!(b.next(T0.add_millis(2_600)).await.ok(), Some(Next::Busy));
    let probed = b.probed;
    // Past the lease, the host waits a delay from the lapse.
    let again = after_wait(&mut b, T0.add_millis(6_300), T0.add_millis(7_300)).await;
    assert_eq!(again.url, "https://k.example/0");
    assert!(
        b.probed - probed <= 4,
        "{} partitions asked",
        b.probed - probed
    );
}
