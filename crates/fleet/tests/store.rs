//! The fleet store's protocol against a real `redis-server` on 127.0.0.1
//! (installed by `.ci/run`; elsewhere these tests say SKIPPED without it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mannerly_fleet::{
    Claimed, Commit, Enqueued, FleetError, FleetStore, Layout, Settle, TimeSource,
};
use mannerly_testsupport::RedisServer;
use mannerly_time::UnixMillis;
use redis::aio::MultiplexedConnection;

const T0: UnixMillis = UnixMillis::from_secs(1_795_168_800);

fn server() -> Option<RedisServer> {
    let s = RedisServer::start(&[]);
    if s.is_none() {
        eprintln!("SKIPPED: redis-server is not installed");
    }
    s
}

async fn store(
    server: &RedisServer,
    partitions: u32,
    lease_ms: u64,
) -> FleetStore<MultiplexedConnection> {
    let client = redis::Client::open(server.url()).expect("client");
    let con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connection");
    FleetStore::open(
        con,
        &server.url(),
        Layout::new("test", partitions).expect("layout"),
        Duration::from_millis(lease_ms),
        TimeSource::Caller,
    )
    .await
    .expect("open")
}

fn host(c: &Claimed) -> &mannerly_fleet::Claim {
    match c {
        Claimed::Host(c) => c,
        other => panic!("expected a claim, got {other:?}"),
    }
}

fn done(state: &str, due: UnixMillis) -> Commit<'_> {
    Commit {
        settle: Settle::Done,
        state,
        delay: Duration::from_millis(1_000),
        due,
    }
}

#[tokio::test]
async fn urls_come_out_by_priority_once_and_a_host_waits_its_turn() {
    let Some(server) = server() else { return };
    let mut s = store(&server, 4, 30_000).await;
    let url = |p: u32| format!("https://a.example/p{p}");
    assert_eq!(
        s.enqueue("a.example", &url(1), 1, 11, T0).await.ok(),
        Some(Enqueued::Queued)
    );
    assert_eq!(
        s.enqueue("a.example", &url(2), 9, 12, T0).await.ok(),
        Some(Enqueued::Queued)
    );
    assert_eq!(
        s.enqueue("a.example", &url(1), 5, 13, T0).await.ok(),
        Some(Enqueued::Duplicate)
    );
    assert_eq!(s.queued().await.ok(), Some(2));
    let p = s.layout().partition_of("a.example");
    let c = host(&s.claim_in(p, T0).await.expect("claim")).clone();
    assert_eq!(
        (c.url.as_str(), c.tag, c.priority),
        (url(2).as_str(), 12, 9)
    );
    assert_eq!(c.state, None);
    // Owned: nobody else gets the host while the lease lives.
    assert_eq!(
        s.claim_in(p, T0).await.ok(),
        Some(Claimed::Wait {
            until: c.lease_until
        })
    );
    assert!(s
        .commit(&c, done("{\"n\":1}", T0.add_millis(1_000)))
        .await
        .expect("commit"));
    assert_eq!(s.queued().await.ok(), Some(1));
    // Due again only at the time the commit set.
    assert_eq!(
        s.claim_in(p, T0.add_millis(999)).await.ok(),
        Some(Claimed::Wait {
            until: T0.add_millis(1_000)
        })
    );
    let c = host(&s.claim_in(p, T0.add_millis(1_000)).await.expect("claim")).clone();
    assert_eq!(
        (c.url.as_str(), c.state.as_deref()),
        (url(1).as_str(), Some("{\"n\":1}"))
    );
    assert!(s
        .commit(&c, done("{}", T0.add_millis(2_000)))
        .await
        .expect("commit"));
    assert_eq!(s.queued().await.ok(), Some(0));
    assert_eq!(
        s.claim_in(p, T0.add_millis(5_000)).await.ok(),
        Some(Claimed::Empty)
    );
}

#[tokio::test]
async fn a_late_worker_cannot_commit_and_the_next_owner_keeps_the_delay() {
    let Some(server) = server() else { return };
    let mut a = store(&server, 1, 5_000).await;
    let mut b = store(&server, 1, 5_000).await;
    for i in 0..3 {
        a.enqueue("h.example", &format!("https://h.example/{i}"), 0, 0, T0)
            .await
            .expect("enqueue");
    }
    // A first request sets the host's delay to 8 s.
    let c = host(&a.claim_in(0, T0).await.expect("claim")).clone();
    let commit = Commit {
        settle: Settle::Done,
        state: "{}",
        delay: Duration::from_secs(8),
        due: T0.add_millis(8_000),
    };
    assert!(a.commit(&c, commit).await.expect("commit"));
    // A claims again at 8 s, then stalls past its 5 s lease.
    let mut late = host(&a.claim_in(0, T0.add_millis(8_000)).await.expect("claim")).clone();
    assert_eq!(late.url, "https://h.example/1");
    // At 13 s the lease has lapsed: B may claim, but not before the floor
    // A's claim set (8 s + 8 s delay), since A's request may have gone out.
    assert_eq!(
        b.claim_in(0, T0.add_millis(13_001)).await.ok(),
        Some(Claimed::Wait {
            until: T0.add_millis(16_000)
        })
    );
    let mine = host(&b.claim_in(0, T0.add_millis(16_000)).await.expect("claim")).clone();
    assert_eq!(mine.url, "https://h.example/1", "the URL was not lost");
    assert!(mine.token > late.token);
    // A wakes: its lease check and its commit are refused; nothing changes.
    assert!(!a
        .renew(&mut late, T0.add_millis(16_001))
        .await
        .expect("renew"));
    assert!(!a
        .commit(&late, done("{\"stale\":true}", T0))
        .await
        .expect("commit"));
    assert_eq!(a.queued().await.ok(), Some(2));
    assert!(b
        .commit(&mine, done("{\"b\":1}", T0.add_millis(24_000)))
        .await
        .expect("commit"));
    let next = host(&a.claim_in(0, T0.add_millis(24_000)).await.expect("claim")).clone();
    assert_eq!(
        (next.url.as_str(), next.state.as_deref()),
        ("https://h.example/2", Some("{\"b\":1}"))
    );
}

#[tokio::test]
async fn retry_and_cancel_keep_the_url() {
    let Some(server) = server() else { return };
    let mut s = store(&server, 1, 5_000).await;
    s.enqueue("r.example", "https://r.example/x", 3, 7, T0)
        .await
        .expect("enqueue");
    let c = host(&s.claim_in(0, T0).await.expect("claim")).clone();
    let retry = Commit {
        settle: Settle::Retry { tag: 8 },
        ..done("{}", T0.add_millis(500))
    };
    assert!(s.commit(&c, retry).await.expect("commit"));
    assert_eq!(s.queued().await.ok(), Some(1));
    let c = host(&s.claim_in(0, T0.add_millis(1_000)).await.expect("claim")).clone();
    assert_eq!((c.tag, c.priority), (8, 3));
    let cancel = Commit {
        settle: Settle::Cancel,
        ..done("{}", T0.add_millis(1_000))
    };
    assert!(s.commit(&c, cancel).await.expect("commit"));
    let c = host(&s.claim_in(0, T0.add_millis(2_000)).await.expect("claim")).clone();
    assert_eq!(c.tag, 8);
}

#[tokio::test]
async fn many_workers_never_own_one_host_at_once() {
    let Some(server) = server() else { return };
    let hosts = 12;
    let per_host = 6;
    {
        let mut s = store(&server, 2, 60_000).await;
        for h in 0..hosts {
            for i in 0..per_host {
                s.enqueue(
                    &format!("h{h}.test"),
                    &format!("https://h{h}.test/{i}"),
                    0,
                    0,
                    T0,
                )
                .await
                .expect("enqueue");
            }
        }
    }
    let owners: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let fetched: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut tasks = Vec::new();
    for w in 0..8usize {
        let mut s = store(&server, 2, 60_000).await;
        let owners = owners.clone();
        let fetched = fetched.clone();
        tasks.push(tokio::spawn(async move {
            let mut idle = 0;
            while idle < 50 {
                match s.claim(T0, 2).await.expect("claim") {
                    Some(Claimed::Host(c)) => {
                        idle = 0;
                        if let Some(other) = owners.lock().expect("lock").insert(c.key.clone(), w) {
                            panic!("{} claimed by {w} while {other} owns it", c.key);
                        }
                        fetched.lock().expect("lock").push(c.url.clone());
                        tokio::task::yield_now().await;
                        owners.lock().expect("lock").remove(&c.key);
                        // No delay here: the test is about ownership.
                        let commit = Commit {
                            delay: Duration::ZERO,
                            ..done("{}", T0)
                        };
                        assert!(s.commit(&c, commit).await.expect("commit"));
                    }
                    _ => {
                        idle += 1;
                        tokio::task::yield_now().await;
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("worker");
    }
    let mut got = fetched.lock().expect("lock").clone();
    got.sort();
    let mut want: Vec<String> = (0..hosts)
        .flat_map(|h| (0..per_host).map(move |i| format!("https://h{h}.test/{i}")))
        .collect();
    want.sort();
    assert_eq!(got, want, "every URL exactly once");
}

#[tokio::test]
async fn server_time_and_a_partition_count_that_differs() {
    let Some(server) = server() else { return };
    let client = redis::Client::open(server.url()).expect("client");
    let con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connection");
    let layout = Layout::new("clocked", 8).expect("layout");
    let mut s = FleetStore::open(
        con,
        &server.url(),
        layout,
        Duration::from_secs(30),
        TimeSource::Server,
    )
    .await
    .expect("open");
    s.enqueue("t.example", "https://t.example/", 0, 0, UnixMillis::EPOCH)
        .await
        .expect("enqueue");
    let p = s.layout().partition_of("t.example");
    // The caller's clock says 1970; the server's is what counts.
    let c = host(&s.claim_in(p, UnixMillis::EPOCH).await.expect("claim")).clone();
    let local = UnixMillis::now();
    assert!(
        c.now.as_millis().abs_diff(local.as_millis()) < 5_000,
        "{c:?}"
    );
    let con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connection");
    let other = Layout::new("clocked", 16).expect("layout");
    match FleetStore::open(
        con,
        &server.url(),
        other,
        Duration::from_secs(30),
        TimeSource::Server,
    )
    .await
    {
        Err(e @ FleetError::Partitions { .. }) => assert_eq!(
            e.to_string(),
            "crawl clocked was created with 8 partitions, not 16: join it with --partitions 8"
        ),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a different partition count was accepted"),
    }
}

#[tokio::test]
async fn what_is_queued_survives_a_server_kill_with_appendonly() {
    let Some(mut server) = server() else { return };
    let aof = ["--appendonly", "yes", "--appendfsync", "always"];
    server.restart(&aof);
    {
        let mut s = store(&server, 4, 30_000).await;
        for i in 0..20 {
            s.enqueue("k.example", &format!("https://k.example/{i}"), 0, 0, T0)
                .await
                .expect("enqueue");
        }
        let c = host(&s.claim(T0, 4).await.expect("claim").expect("some")).clone();
        assert!(s.commit(&c, done("{}", T0)).await.expect("commit"));
    }
    server.restart(&aof);
    let mut s = store(&server, 4, 30_000).await;
    assert_eq!(s.queued().await.ok(), Some(19));
    assert_eq!(
        s.enqueue("k.example", "https://k.example/0", 0, 0, T0)
            .await
            .ok(),
        Some(Enqueued::Duplicate),
        "the seen-set survived too"
    );
}
