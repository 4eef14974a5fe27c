//! What the store keeps across a crash or a reopen: pages in flight,
//! the key mode, tags, the seen-set.

use super::*;

#[test]
fn a_request_in_flight_at_a_crash_holds_its_host_until_it_cannot_be_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        min_delay: 1_000,
        in_flight_bound: 30_000,
        ..Config::default()
    };
    let on_disk = FrontierConfig {
        robots_gate: false,
        ..FrontierConfig::on_disk()
    };
    let t = T0.add_millis(100_000);
    let open = || {
        LocalFrontier::open(dir.path(), Politeness::new(config.clone()), on_disk.clone())
            .expect("open")
    };
    let mut f = open();
    for url in ["https://slow.test/a", "https://idle.test/a"] {
        block_on(f.enqueue(url, 1, t)).expect("enqueue");
    }
    // slow.test's page goes out at t; idle.test's is left queued.
    let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
        panic!("a release")
    };
    let (slow, idle) = if r.url.contains("slow") {
        (r.url.clone(), "https://idle.test/a")
    } else {
        (r.url.clone(), "https://slow.test/a")
    };
    f.commit().expect("commit");
    // The process ends 2 s later, the request still out (what a kill
    // leaves on disk: the flight and the host's state), and restarts.
    drop(f);
    let mut g = open();
    let later = t.add_millis(2_000);
    // The other host goes at once; the one with a request in flight
    // waits for that request's start plus the bound, then its delay.
    let Next::Fetch(first) = block_on(g.next(later)).expect("next") else {
        panic!("the other host is not held up")
    };
    assert_eq!(first.url, idle);
    block_on(g.complete(&first, &ok(), later)).expect("complete");
    assert_eq!(
        block_on(g.next(later)).expect("next"),
        Next::Wait {
            until: t.add_millis(30_000 + 1_000)
        }
    );
    let Next::Fetch(again) = block_on(g.next(t.add_millis(31_000))).expect("next") else {
        panic!("released after the bound")
    };
    assert_eq!(again.url, slow, "the page in flight is fetched again");
}

#[test]
fn a_store_keeps_its_key_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open = |mode| {
        LocalFrontier::open(
            dir.path(),
            Politeness::new(Config::default()),
            FrontierConfig {
                key_mode: mode,
                ..FrontierConfig::on_disk()
            },
        )
    };
    drop(open(crate::key::KeyMode::Host).expect("create"));
    let err = open(crate::key::KeyMode::RegisteredDomain)
        .err()
        .expect("refused");
    assert!(
        err.to_string()
            .contains("it keys URLs by host, not registered-domain"),
        "{err}"
    );
    assert!(open(crate::key::KeyMode::Host).is_ok());
}

#[test]
fn tags_round_trip_through_disk_and_requeue() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open = opener(
        dir.path(),
        FrontierConfig {
            window: 1,
            ..no_gate()
        },
    );
    let mut f = open();
    for (i, u) in ["https://a.test/1", "https://a.test/2"].iter().enumerate() {
        block_on(f.enqueue_tagged(u, 0, 40 + i as u32, T0)).expect("enqueue");
    }
    let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
        panic!("a page")
    };
    assert_eq!((r.url.as_str(), r.tag), ("https://a.test/1", 40));
    // A 503: the page goes back to the head with a new tag, and the
    // host backs off (the delay doubles from 1 s).
    let failed = Outcome::Status {
        status: 503,
        latency: 10,
        retry_after: None,
    };
    block_on(f.requeue(&r, &failed, 41, T0.add_millis(10))).expect("requeue");
    assert_eq!(f.stats().queued, 2);
    assert_eq!(f.politeness.get("a.test").map(|h| h.delay), Some(2_000));
    drop(f);
    let mut f = open();
    assert_eq!(
        block_on(f.next(T0.add_millis(10))).expect("next"),
        Next::Wait {
            until: T0.add_millis(2_010)
        }
    );
    let Next::Fetch(r) = block_on(f.next(T0.add_millis(2_010))).expect("next") else {
        panic!("the retry")
    };
    assert_eq!((r.url.as_str(), r.tag), ("https://a.test/1", 41));
    assert!(matches!(
        block_on(f.requeue(&r, &failed, 0, T0)).and(block_on(f.requeue(&r, &failed, 0, T0))),
        Err(FrontierError::UnknownLease { .. })
    ));
}

/// The seen filter starts small and grows as URLs come (rebuilt from the
/// store, pending fingerprints included); whatever its size, every URL
/// seen stays seen, across a reopen too, and new ones are queued.
#[test]
fn the_seen_filter_grows_with_the_crawl_and_forgets_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open = opener(
        dir.path(),
        FrontierConfig {
            // Not a divisor of the filter's size: fingerprints are pending
            // (uncommitted) when it grows.
            commit_every: 100,
            ..no_gate()
        },
    );
    let url = |i: u64| format!("https://h{}.test/p{i}", i % 997);
    let first = seen_filter::FIRST_CAPACITY + 5_000;
    let mut f = open();
    let filter_capacity = |f: &LocalFrontier| match &f.seen {
        Seen::Disk(Some(s)) => s.capacity(),
        _ => 0,
    };
    assert_eq!(filter_capacity(&f), seen_filter::FIRST_CAPACITY);
    for i in 0..first {
        let a = block_on(f.enqueue_tagged(&url(i), 0, 0, T0)).expect("enqueue");
        assert_eq!(a, Admission::Queued, "{}", url(i));
    }
    assert_eq!(filter_capacity(&f), 4 * seen_filter::FIRST_CAPACITY);
    for i in 0..first {
        let a = block_on(f.enqueue_tagged(&url(i), 0, 0, T0)).expect("enqueue");
        assert_eq!(a, Admission::Duplicate, "{}", url(i));
    }
    drop(f);
    let mut f = open();
    for i in (0..first).step_by(11) {
        let a = block_on(f.enqueue_tagged(&url(i), 0, 0, T0)).expect("enqueue");
        assert_eq!(a, Admission::Duplicate, "after reopening: {}", url(i));
    }
    let a = block_on(f.enqueue_tagged(&url(first), 0, 0, T0)).expect("enqueue");
    assert_eq!(a, Admission::Queued);
}
