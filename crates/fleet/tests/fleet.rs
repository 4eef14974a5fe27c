//! Several workers on one store, against a real `redis-server` on
//! 127.0.0.1 (installed by `.ci/run`; elsewhere these tests say SKIPPED
//! without it): one owner per host, leases that lapse, late completions,
//! the server's clock, and a server killed and restarted.

use std::time::Duration;

use mannerly_fleet::{FleetConfig, FleetFrontier, Layout, TimeSource};
use mannerly_polite::controller::{Config, Politeness, UnixMillis};
use mannerly_polite::frontier::{
    Admission, Frontier, FrontierConfig, FrontierError, Next, Released,
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
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            partitions: 1,
            min_delay: 1_000,
            lease: Duration::from_secs(5),
            time: TimeSource::Caller,
        }
    }
}

async fn worker(
    server: &RedisServer,
    crawl: &str,
    o: &Opts,
) -> Result<FleetFrontier<MultiplexedConnection>, FrontierError> {
    let con = redis::Client::open(server.url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("connection");
    FleetFrontier::open(
        con,
        &server.url(),
        Layout::new(crawl, o.partitions).expect("layout"),
        Politeness::new(Config {
            min_delay: o.min_delay,
            ..Config::default()
        }),
        FrontierConfig {
            robots_gate: false,
            ..FrontierConfig::default()
        },
        FleetConfig {
            lease: o.lease,
            time: o.time,
        },
    )
    .await
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
    // A stalls past its 5 s lease: the URL goes back, but the host still
    // waits the 8 s delay after A's request, which may have gone out.
    assert_eq!(
        b.next(T0.add_millis(5_001)).await.ok(),
        Some(Next::Wait {
            until: T0.add_millis(8_000)
        })
    );
    let mine = fetch(b.next(T0.add_millis(8_000)).await.expect("next"));
    assert_eq!(mine.url, "https://h.example/0", "the URL was not lost");
    assert_eq!(b.stats().await.expect("stats").reissued, 1);
    // A wakes up: just before sending it checks its lease, which lapsed.
    assert_eq!(
        a.confirm(&late, T0.add_millis(8_001)).await.ok(),
        Some(false)
    );
    assert_eq!(a.stale, 1);
    // The release is over for A: nothing more to report.
    assert!(a
        .complete(&late, &ok(), T0.add_millis(8_001))
        .await
        .is_err());
    // B's release is young: confirmed without asking the server.
    assert_eq!(
        b.confirm(&mine, T0.add_millis(8_002)).await.ok(),
        Some(true)
    );
    assert_eq!(a.stats().await.expect("stats").queued, 1);
    b.complete(&mine, &ok(), T0.add_millis(8_010))
        .await
        .expect("complete");
    // B's completion is held until its next call to the server: until
    // then the host is still in flight for everyone else.
    assert_eq!(a.next(T0.add_millis(8_500)).await.ok(), Some(Next::Busy));
    b.sync().await.expect("sync");
    assert_eq!(
        a.next(T0.add_millis(9_000)).await.ok(),
        Some(Next::Wait {
            until: T0.add_millis(16_000)
        })
    );
    let last = fetch(a.next(T0.add_millis(16_000)).await.expect("next"));
    assert_eq!(last.url, "https://h.example/1");
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
    let again = fetch(b.next(T0.add_millis(6_000)).await.expect("next"));
    assert_eq!(again.url, late.url);
    a.complete(&late, &ok(), T0.add_millis(6_001))
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
    b.complete(&again, &ok(), T0.add_millis(6_010))
        .await
        .expect("complete");
    assert_eq!(b.stats().await.expect("stats").queued, 0);
}

#[tokio::test]
async fn many_workers_never_hold_one_host_at_once_and_fetch_everything_once() {
    let Some(server) = server() else { return };
    let o = Opts {
        partitions: 4,
        min_delay: 0,
        lease: Duration::from_secs(60),
        ..Opts::default()
    };
    let (hosts, per_host) = (16, 6);
    {
        let mut w = worker(&server, "many", &o).await.expect("seed");
        for h in 0..hosts {
            for i in 0..per_host {
                let url = format!("https://h{h}.test/{i}");
                assert_eq!(w.enqueue(&url, 0, T0).await.ok(), Some(Admission::Queued));
            }
        }
    }
    let mut workers = Vec::new();
    for _ in 0..8 {
        workers.push(worker(&server, "many", &o).await.expect("worker"));
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
    let con = redis::Client::open(server.url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("connection");
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
