use super::*;
use crate::controller::Config;
use crate::frontier::block_on;

const T0: UnixMillis = UnixMillis::EPOCH;

fn ok() -> Outcome {
    Outcome::Status {
        status: 200,
        latency: 10,
        retry_after: None,
    }
}

/// Opens (and reopens) the frontier stored in `dir`.
fn opener(dir: &std::path::Path, config: FrontierConfig) -> impl Fn() -> LocalFrontier + '_ {
    move || {
        LocalFrontier::open(dir, Politeness::new(Config::default()), config.clone()).expect("open")
    }
}

fn no_gate() -> FrontierConfig {
    FrontierConfig {
        robots_gate: false,
        ..FrontierConfig::default()
    }
}

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
fn a_request_made_elsewhere_takes_the_host_slot_and_delay() {
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config {
            min_delay: 1_000,
            ..Config::default()
        }),
        no_gate(),
    );
    let t = T0.add_millis(10_000);
    block_on(f.enqueue("https://b.test/page", 1, t)).expect("enqueue");
    // A robots.txt fetch of a.test is redirected to b.test.
    assert_eq!(
        f.begin_request("https://b.test/robots.txt", t),
        Begin::Started
    );
    assert_eq!(
        block_on(f.next(t)).expect("next"),
        Next::Busy,
        "b.test's slot is taken while the redirected request is out"
    );
    assert!(matches!(
        f.begin_request("https://b.test/other", t),
        Begin::Wait { .. }
    ));
    let answered = Outcome::Status {
        status: 200,
        latency: 50,
        retry_after: None,
    };
    block_on(f.end_request("https://b.test/robots.txt", &answered, t.add_millis(50))).expect("end");
    assert_eq!(
        block_on(f.next(t.add_millis(50))).expect("next"),
        Next::Wait {
            until: t.add_millis(1_000)
        },
        "b.test's next request waits its delay from the redirected one"
    );
    assert!(matches!(
        block_on(f.next(t.add_millis(1_000))).expect("next"),
        Next::Fetch(_)
    ));
    assert!(matches!(
        f.begin_request("not a url", t),
        Begin::Refused { .. }
    ));
}

#[test]
fn busiest_lists_keys_by_queued_urls() {
    let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
    for (host, n) in [("a", 1), ("b", 3), ("c", 2)] {
        for i in 0..n {
            block_on(f.enqueue(&format!("https://{host}.test/{i}"), 1, T0)).expect("enqueue");
        }
    }
    let load = f.busiest(2);
    let got: Vec<(&str, u64)> = load.iter().map(|l| (l.key.as_str(), l.queued)).collect();
    assert_eq!(got, [("b.test", 3), ("c.test", 2)]);
    assert_eq!(load[0].head.as_deref(), Some("https://b.test/0"));
    let mut all = Vec::new();
    f.for_each_queued(|_, k, u| {
        all.push(format!("{k} {u}"));
        Ok(())
    })
    .expect("scan");
    assert_eq!(all.len(), 6);
    assert_eq!(all[0], "a.test https://a.test/0");
}

proptest::proptest! {
    /// The bounded selection names the same keys, in the same order, as
    /// sorting every key by (most queued, then key) would.
    #[test]
    fn busiest_agrees_with_sorting_every_key(
        counts in proptest::collection::vec(0u8..6, 0..40),
        n in 0usize..12,
    ) {
        let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
        let mut expected = Vec::new();
        for (h, &c) in counts.iter().enumerate() {
            for i in 0..c {
                block_on(f.enqueue(&format!("https://h{h}.test/{i}"), 1, T0)).expect("enqueue");
            }
            if c > 0 {
                expected.push((format!("h{h}.test"), u64::from(c)));
            }
        }
        expected.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        expected.truncate(n);
        let got: Vec<(String, u64)> = f.busiest(n).into_iter().map(|l| (l.key, l.queued)).collect();
        proptest::prop_assert_eq!(got, expected);
    }
}

/// Drives the frontier: each request takes 10 ms.
fn drain(f: &mut LocalFrontier) -> Vec<(u64, String)> {
    let (mut order, mut now) = (Vec::new(), UnixMillis::EPOCH);
    loop {
        match block_on(f.next(now)).expect("next") {
            Next::Fetch(r) => {
                order.push((now.as_millis(), r.url.clone()));
                if r.kind == Kind::Robots {
                    let origin = r.url.trim_end_matches("/robots.txt").to_owned();
                    block_on(f.robots_known(
                        &origin,
                        RobotsPacing::default(),
                        UnixMillis(86_400_000),
                        now.add_millis(10),
                    ))
                    .expect("robots");
                }
                block_on(f.complete(&r, &ok(), now.add_millis(10))).expect("complete");
            }
            Next::Wait { until } => now = until,
            Next::Empty => return order,
            Next::Busy => panic!("busy with nothing in flight"),
        }
    }
}

#[test]
fn priorities_within_a_host_and_hosts_interleave() {
    let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
    let q = |f: &mut LocalFrontier, u: &str, p| block_on(f.enqueue(u, p, T0)).expect("enqueue");
    assert_eq!(q(&mut f, "https://a.test/low", 1), Admission::Queued);
    assert_eq!(q(&mut f, "https://a.test/high", 9), Admission::Queued);
    assert_eq!(q(&mut f, "https://b.test/x", 1), Admission::Queued);
    assert_eq!(
        q(&mut f, "https://a.test/high#frag", 9),
        Admission::Duplicate
    );
    let order = drain(&mut f);
    let want: Vec<(u64, String)> = vec![
        (0, "https://a.test/high".into()),
        (0, "https://b.test/x".into()),
        (1_000, "https://a.test/low".into()),
    ];
    assert_eq!(order, want);
}

#[test]
fn ready_hosts_go_in_priority_order() {
    let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
    for (u, p) in [
        ("https://a.test/", 1),
        ("https://b.test/", 5),
        ("https://c.test/", 3),
    ] {
        block_on(f.enqueue(u, p, T0)).expect("enqueue");
    }
    let order: Vec<String> = drain(&mut f).into_iter().map(|(_, u)| u).collect();
    assert_eq!(
        order,
        ["https://b.test/", "https://c.test/", "https://a.test/"]
    );
}

#[test]
fn robots_txt_is_fetched_first_and_counts_as_a_request() {
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig::default(),
    );
    block_on(f.enqueue("https://a.test/page", 0, T0)).expect("enqueue");
    block_on(f.enqueue("http://a.test/other", 0, T0)).expect("enqueue");
    let order = drain(&mut f);
    let want: Vec<(u64, String)> = vec![
        (0, "https://a.test/robots.txt".into()),
        (1_000, "https://a.test/page".into()),
        (2_000, "http://a.test/robots.txt".into()),
        (3_000, "http://a.test/other".into()),
    ];
    assert_eq!(order, want);
}

#[test]
fn cancel_hands_the_slot_back() {
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig::default(),
    );
    block_on(f.enqueue("https://a.test/page", 0, T0)).expect("enqueue");
    let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
        panic!("robots first")
    };
    assert_eq!(r.kind, Kind::Robots);
    // The caller's cache knew the rules: no request was made.
    block_on(f.robots_known(
        "https://a.test",
        RobotsPacing::default(),
        UnixMillis(60_000),
        T0,
    ))
    .expect("known");
    block_on(f.cancel(&r, T0)).expect("cancel");
    let Next::Fetch(p) = block_on(f.next(T0)).expect("next") else {
        panic!("page now")
    };
    assert_eq!(p.url, "https://a.test/page");
    // A page cancelled goes back to the head of its queue.
    block_on(f.cancel(&p, T0)).expect("cancel");
    assert_eq!(f.stats().queued, 1);
    assert!(matches!(block_on(f.next(T0)).expect("next"), Next::Fetch(r) if r.url == p.url));
    assert!(matches!(
        block_on(f.complete(&r, &ok(), UnixMillis(5))),
        Err(FrontierError::UnknownLease { .. })
    ));
}

#[test]
fn backpressure_and_skips_are_reported() {
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig {
            max_per_key: 2,
            max_total: 3,
            ..no_gate()
        },
    );
    let mut q = |u: &str| block_on(f.enqueue(u, 0, T0)).expect("enqueue");
    assert_eq!(q("https://a.test/1"), Admission::Queued);
    assert_eq!(q("https://a.test/2"), Admission::Queued);
    assert!(
        matches!(q("https://a.test/3"), Admission::Backpressure { reason } if reason.contains("a.test has 2 URLs waiting"))
    );
    assert_eq!(q("https://b.test/1"), Admission::Queued);
    assert!(
        matches!(q("https://c.test/1"), Admission::Backpressure { reason } if reason.contains("holds 3 URLs"))
    );
    // A URL queued once is a duplicate, whatever the bounds say now.
    assert_eq!(q("https://a.test/1"), Admission::Duplicate);
    assert_eq!(q("https://b.test/1"), Admission::Duplicate);
    // Pushed back, not remembered: offered again later, it is queued.
    assert!(
        matches!(q("not a url"), Admission::Skipped { reason } if reason.contains("not an absolute URL"))
    );
    f.politeness.set_robots(
        "b.test",
        RobotsPacing {
            crawl_delay: Some(3600.0),
            request_rate: None,
        },
    );
    assert!(matches!(
        block_on(f.enqueue("https://b.test/2", 0, T0)).expect("enqueue"),
        Admission::Skipped { .. }
    ));
    // The queued b.test URL is reported when its turn comes.
    let _ = drain(&mut f);
    let skipped = f.take_skipped();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].url, "https://b.test/1");
    assert!(skipped[0].reason.contains("3600 s"));
    assert_eq!(
        block_on(f.enqueue("https://c.test/1", 0, T0)).expect("enqueue"),
        Admission::Queued
    );
}

#[test]
fn shared_servers_share_one_budget() {
    use crate::key::KeyMode;
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig {
            key_mode: KeyMode::Ip,
            ..no_gate()
        },
    );
    assert_eq!(
        block_on(f.enqueue("https://a.test/", 0, T0)).expect("enqueue"),
        Admission::Unresolved {
            host: "a.test".into()
        }
    );
    let ip = "192.0.2.1".parse().expect("ip");
    f.keyer.set_address("a.test", ip);
    f.keyer.set_address("b.test", ip);
    for u in ["https://a.test/", "https://b.test/"] {
        assert_eq!(
            block_on(f.enqueue(u, 0, T0)).expect("enqueue"),
            Admission::Queued
        );
    }
    let times: Vec<u64> = drain(&mut f).into_iter().map(|(t, _)| t).collect();
    assert_eq!(times, [0, 1_000], "one server, one request per second");

    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig {
            key_mode: KeyMode::RegisteredDomain,
            ..no_gate()
        },
    );
    for u in [
        "https://a.example.com/",
        "https://b.example.com/",
        "https://example.org/",
    ] {
        assert_eq!(
            block_on(f.enqueue(u, 0, T0)).expect("enqueue"),
            Admission::Queued
        );
    }
    let order = drain(&mut f);
    assert_eq!(
        order.iter().filter(|(t, _)| *t == 0).count(),
        2,
        "{order:?}"
    );
    assert_eq!(order.last().map(|(t, _)| *t), Some(1_000), "{order:?}");
}

#[test]
fn key_bound_counts_only_keys_with_urls() {
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig {
            max_keys: 1,
            ..no_gate()
        },
    );
    assert_eq!(
        block_on(f.enqueue("https://a.test/", 0, T0)).expect("enqueue"),
        Admission::Queued
    );
    assert!(matches!(
        block_on(f.enqueue("https://b.test/", 0, T0)).expect("enqueue"),
        Admission::Backpressure { reason } if reason.contains("1 hosts have URLs waiting")
    ));
    drain(&mut f);
    assert_eq!(f.stats().keys, 0);
    assert_eq!(
        block_on(f.enqueue("https://b.test/", 0, T0)).expect("enqueue"),
        Admission::Queued
    );
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

#[test]
fn discard_drops_the_page_and_hands_the_slot_back() {
    let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
    block_on(f.enqueue("https://a.test/1", 0, T0)).expect("enqueue");
    block_on(f.enqueue("https://a.test/2", 0, T0)).expect("enqueue");
    let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
        panic!("a page")
    };
    block_on(f.discard(&r, T0)).expect("discard");
    // No request was made: the next page may go at once.
    let Next::Fetch(n) = block_on(f.next(T0)).expect("next") else {
        panic!("the next page at once")
    };
    assert_eq!(n.url, "https://a.test/2");
    assert_eq!(f.stats().queued, 0);
    assert_eq!(
        block_on(f.enqueue("https://a.test/1", 0, T0)).expect("enqueue"),
        Admission::Duplicate,
        "a discarded URL stays seen"
    );
}

#[test]
fn an_unavailable_robots_txt_holds_its_pages_then_is_fetched_again() {
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig::default(),
    );
    block_on(f.enqueue("https://a.test/page", 0, T0)).expect("enqueue");
    let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
        panic!("robots first")
    };
    assert_eq!(r.kind, Kind::Robots);
    let hold = T0.add_millis(3_600_000);
    block_on(f.robots_unavailable(
        "https://a.test",
        hold,
        "503 since 10:00, complete disallow",
        T0,
    ))
    .expect("unavailable");
    block_on(f.complete(
        &r,
        &Outcome::Status {
            status: 503,
            latency: 10,
            retry_after: None,
        },
        T0.add_millis(10),
    ))
    .expect("complete");
    // The page waits for the hold, not just the host's delay.
    assert_eq!(
        block_on(f.next(T0.add_millis(60_000))).expect("next"),
        Next::Wait { until: hold }
    );
    let why = f
        .why_not_now("https://a.test/page", T0.add_millis(60_000))
        .expect("held");
    assert!(
        matches!(&why, Hold::RobotsUnavailable { reason, next_in: 3_540_000, .. } if reason.contains("503 since 10:00")),
        "{why:?}"
    );
    assert!(why.to_string().contains("+3540 s"), "{why}");
    let Next::Fetch(again) = block_on(f.next(hold)).expect("next") else {
        panic!("robots.txt again")
    };
    assert_eq!(
        (again.kind, again.url.as_str()),
        (Kind::Robots, "https://a.test/robots.txt")
    );
    assert!(matches!(
        block_on(f.requeue(&again, &ok(), 0, hold)),
        Err(FrontierError::NotAPage { .. })
    ));
}

#[test]
fn origin_without_reparsing() {
    assert_eq!(origin_str("https://a.test/x?y"), "https://a.test");
    assert_eq!(origin_str("http://a.test:8080"), "http://a.test:8080");
    assert_eq!(origin_str("https://u:p@a.test/x"), "https://a.test");
}

#[test]
fn the_census_puts_each_host_in_one_state() {
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config {
            min_delay: 1_000,
            ..Config::default()
        }),
        no_gate(),
    );
    let t = T0.add_millis(100_000);
    for url in [
        "https://a.test/1",
        "https://a.test/2",
        "https://b.test/1",
        "https://c.test/1",
    ] {
        block_on(f.enqueue(url, 1, t)).expect("enqueue");
    }
    assert_eq!(
        f.census(t).ready,
        3,
        "nothing started yet: {:?}",
        f.census(t)
    );
    let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
        panic!("a release")
    };
    let c = f.census(t);
    assert_eq!((c.in_flight, c.ready), (1, 2), "{c:?}");
    block_on(f.complete(&r, &ok(), t.add_millis(10))).expect("complete");
    let c = f.census(t.add_millis(10));
    let waiting_or_done = c.waiting + c.done;
    assert_eq!((c.in_flight, c.ready, waiting_or_done), (0, 2, 1), "{c:?}");
    let total: u64 = c.states().iter().map(|s| s.1).sum();
    assert_eq!(total, 3, "each host counted once: {c:?}");
}

fn bounded(open: u64) -> LocalFrontier {
    LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig {
            max_open_keys: open,
            ..no_gate()
        },
    )
}

#[test]
fn at_most_the_bound_of_hosts_is_in_progress() {
    let mut f = bounded(2);
    for h in ["a", "b", "c", "d", "e"] {
        for p in 0..3 {
            let url = format!("https://{h}.test/{p}");
            block_on(f.enqueue(&url, 1, T0)).expect("enqueue");
        }
    }
    let order = drain(&mut f);
    assert_eq!(order.len(), 15, "every page is released: {order:?}");
    // Each host's span, in release order (`drain` completes each release
    // before asking for the next): its first release to its last.
    let mut span: HashMap<String, (usize, usize)> = HashMap::new();
    for (i, (_, url)) in order.iter().enumerate() {
        let host = url.split('/').nth(2).unwrap_or_default().to_owned();
        span.entry(host).or_insert((i, i)).1 = i;
    }
    for i in 0..order.len() {
        let open = span.values().filter(|(a, b)| *a <= i && i <= *b).count();
        assert!(
            open <= 2,
            "{open} hosts in progress at release {i}: {span:?}"
        );
    }
    assert_eq!(f.open_keys(), 0);
}

#[test]
fn a_freed_slot_goes_to_the_best_parked_host() {
    let mut f = bounded(1);
    block_on(f.enqueue("https://a.test/", 1, T0)).expect("enqueue");
    let Next::Fetch(a) = block_on(f.next(T0)).expect("next") else {
        panic!("a opens")
    };
    block_on(f.enqueue("https://b.test/", 1, T0)).expect("enqueue");
    block_on(f.enqueue("https://c.test/", 1, T0)).expect("enqueue");
    block_on(f.enqueue("https://c.test/urgent", 9, T0)).expect("enqueue");
    assert_eq!(block_on(f.next(T0)).expect("next"), Next::Busy);
    let why = f.why_not_now("https://b.test/", T0);
    assert_eq!(why, Some(Hold::Parked { open: 1 }), "{why:?}");
    // Parked hosts are counted apart: a busy crawl does not look stalled.
    let c = f.census(T0);
    assert_eq!((c.in_flight, c.parked, c.ready), (1, 2, 0), "{c:?}");
    block_on(f.complete(&a, &ok(), T0.add_millis(5))).expect("complete");
    let Next::Fetch(c) = block_on(f.next(T0.add_millis(5))).expect("next") else {
        panic!("a parked host opens when a closes")
    };
    assert_eq!(c.url, "https://c.test/urgent");
    assert_eq!(f.open_keys(), 1);
}

#[test]
fn a_host_given_more_urls_while_in_flight_stays_open() {
    let mut f = bounded(1);
    block_on(f.enqueue("https://a.test/", 1, T0)).expect("enqueue");
    block_on(f.enqueue("https://b.test/", 1, T0)).expect("enqueue");
    let Next::Fetch(first) = block_on(f.next(T0)).expect("next") else {
        panic!("one opens")
    };
    let host = first.url.clone();
    // A link found on the page, for the same host: it stays open for it.
    block_on(f.enqueue(&format!("{host}next"), 1, T0)).expect("enqueue");
    block_on(f.complete(&first, &ok(), T0.add_millis(10))).expect("complete");
    let Next::Wait { until } = block_on(f.next(T0.add_millis(10))).expect("next") else {
        panic!("the open host waits its delay; the other stays parked")
    };
    let Next::Fetch(second) = block_on(f.next(until)).expect("next") else {
        panic!("released")
    };
    assert_eq!(second.url, format!("{host}next"));
}

#[test]
fn a_host_held_back_long_gives_its_slot_up() {
    let mut f = bounded(1);
    block_on(f.enqueue("https://a.test/1", 1, T0)).expect("enqueue");
    block_on(f.enqueue("https://a.test/2", 1, T0)).expect("enqueue");
    let Next::Fetch(first) = block_on(f.next(T0)).expect("next") else {
        panic!("a opens")
    };
    block_on(f.enqueue("https://b.test/", 1, T0)).expect("enqueue");
    // a.test answers 429 with an hour's Retry-After: b.test goes meanwhile.
    let busy = Outcome::Status {
        status: 429,
        latency: 10,
        retry_after: Some("3600".into()),
    };
    block_on(f.complete(&first, &busy, T0.add_millis(10))).expect("complete");
    let Next::Fetch(b) = block_on(f.next(T0.add_millis(10))).expect("next") else {
        panic!("the parked host opens while a.test waits its hour")
    };
    assert_eq!(b.url, "https://b.test/");
    block_on(f.complete(&b, &ok(), T0.add_millis(20))).expect("complete");
    // Then a.test comes back when its hour is over.
    let Next::Wait { until } = block_on(f.next(T0.add_millis(20))).expect("next") else {
        panic!("a.test waits")
    };
    assert!(until.millis_since(T0) >= 3_600_000, "{until:?}");
    let Next::Fetch(again) = block_on(f.next(until)).expect("next") else {
        panic!("a.test goes on")
    };
    assert_eq!(again.url, "https://a.test/2");
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

#[test]
fn a_heap_gives_back_the_room_a_burst_took_and_keeps_a_little() {
    let mut heap: BinaryHeap<u64> = (0..100_000).collect();
    for _ in 0..99_000 {
        heap.pop();
    }
    trim(&mut heap);
    assert!(heap.capacity() < 10_000, "{}", heap.capacity());
    assert_eq!(heap.len(), 1_000);
    // A heap that fills and drains every turn keeps its room.
    heap.clear();
    trim(&mut heap);
    assert!(heap.capacity() >= HEAP_KEPT, "{}", heap.capacity());
    let kept = heap.capacity();
    heap.extend(0..3_000);
    heap.clear();
    trim(&mut heap);
    assert_eq!(heap.capacity(), kept);
}

#[test]
fn a_crawl_start_of_many_hosts_leaves_the_heaps_small() {
    let mut f = bounded(4);
    for h in 0..20_000 {
        block_on(f.enqueue(&format!("https://h{h}.test/"), 1, T0)).expect("enqueue");
    }
    // Asking passes every host through the time and ready heaps: four
    // open, the rest are parked.
    let mut released = 0;
    while let Next::Fetch(_) = block_on(f.next(T0)).expect("next") {
        released += 1;
    }
    assert_eq!(released, 4);
    assert!(f.time.capacity() <= 4 * HEAP_KEPT, "{}", f.time.capacity());
    assert!(
        f.ready.capacity() <= 4 * HEAP_KEPT,
        "{}",
        f.ready.capacity()
    );
    assert!(f.parked.len() >= 19_990);
}

/// A host done rests (its state only in the store) and comes back as it
/// was: the Retry-After it was given holds its next page and a request
/// begun elsewhere exactly as if it had stayed in memory.
#[test]
fn a_done_host_rests_on_disk_and_wakes_with_its_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let politeness = || {
        Politeness::new(Config {
            min_delay: 1_000,
            ..Config::default()
        })
    };
    let on_disk = FrontierConfig {
        robots_gate: false,
        ..FrontierConfig::on_disk()
    };
    let mut disk = LocalFrontier::open(dir.path(), politeness(), on_disk).expect("open");
    let mut memory = LocalFrontier::in_memory(politeness(), no_gate());
    let t = T0.add_millis(100_000);
    let busy = Outcome::Status {
        status: 503,
        latency: 10,
        retry_after: Some("60".into()),
    };
    for f in [&mut disk, &mut memory] {
        block_on(f.enqueue("https://a.test/1", 1, t)).expect("enqueue");
        let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
            panic!("a release")
        };
        block_on(f.complete(&r, &busy, t.add_millis(10))).expect("complete");
        f.commit().expect("commit");
    }
    assert!(disk.politeness.get("a.test").is_none(), "at rest");
    assert_eq!(disk.resting_keys(), 1);
    assert_eq!(
        memory.resting_keys(),
        0,
        "in memory there is nowhere to rest"
    );
    let again = block_on(disk.enqueue("https://a.test/1", 1, t)).expect("enqueue");
    assert_eq!(again, Admission::Duplicate);
    assert_eq!(disk.resting_keys(), 1, "a duplicate does not wake it");
    let later = t.add_millis(5_000);
    assert_eq!(disk.census(later).done, 1);
    assert_eq!(
        disk.begin_request("https://a.test/elsewhere", later),
        memory.begin_request("https://a.test/elsewhere", later),
    );
    assert!(disk.politeness.get("a.test").is_some(), "awake");
    for f in [&mut disk, &mut memory] {
        block_on(f.enqueue("https://a.test/2", 1, later)).expect("enqueue");
    }
    let (d, m) = (block_on(disk.next(later)), block_on(memory.next(later)));
    assert_eq!(d.expect("next"), m.expect("next"));
    let at = disk.politeness.get("a.test").map(|h| h.next_allowed);
    assert!(at >= Some(t.add_millis(60_000)), "the Retry-After holds");
}

/// A done host's robots.txt gate rests with it and comes back from the
/// store: its next page goes without its robots.txt being asked for again
/// while the rules are known, and with it once they are not.
#[test]
fn a_resting_hosts_robots_gate_comes_back_from_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut f = LocalFrontier::open(
        dir.path(),
        Politeness::new(Config::default()),
        FrontierConfig::on_disk(),
    )
    .expect("open");
    let until = UnixMillis(86_400_000);
    block_on(f.enqueue("https://a.test/1", 0, T0)).expect("enqueue");
    assert_eq!(drain(&mut f).len(), 2, "robots.txt, then the page");
    f.commit().expect("commit");
    assert_eq!(f.resting_keys(), 1);
    assert!(f.robots.is_empty(), "the gate rests too");
    let later = T0.add_millis(60_000);
    block_on(f.enqueue("https://a.test/2", 0, later)).expect("enqueue");
    let Next::Fetch(r) = block_on(f.next(later)).expect("next") else {
        panic!("a release")
    };
    assert_eq!(r.url, "https://a.test/2", "its rules are still known");
    assert_eq!(
        f.robots.get("https://a.test"),
        Some(&RobotsGate::Known { until })
    );
    block_on(f.complete(&r, &ok(), later)).expect("complete");
    f.commit().expect("commit");
    // Past the rules' expiry, the robots.txt goes first again.
    let expired = until.add_millis(1);
    block_on(f.enqueue("https://a.test/3", 0, expired)).expect("enqueue");
    let Next::Fetch(r) = block_on(f.next(expired)).expect("next") else {
        panic!("a release")
    };
    assert_eq!(r.kind, Kind::Robots);
}

/// A resumed crawl rests the hosts it had finished: reopened, their
/// states leave memory at the first commit and come back when used.
#[test]
fn a_reopened_frontier_rests_the_hosts_it_had_finished() {
    let dir = tempfile::tempdir().expect("tempdir");
    let on_disk = FrontierConfig {
        robots_gate: false,
        ..FrontierConfig::on_disk()
    };
    let open = opener(dir.path(), on_disk);
    let t = T0.add_millis(100_000);
    {
        let mut f = open();
        for url in [
            "https://done.test/1",
            "https://waiting.test/1",
            "https://waiting.test/2",
        ] {
            block_on(f.enqueue(url, 1, t)).expect("enqueue");
        }
        // done.test's only page and waiting.test's first go out.
        for _ in 0..2 {
            let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
                panic!("a release")
            };
            block_on(f.complete(&r, &ok(), t)).expect("complete");
        }
        drop(f);
    }
    let mut f = open();
    assert!(f.politeness.get("done.test").is_some(), "restored at open");
    f.commit().expect("commit");
    assert_eq!(f.resting_keys(), 1, "the finished host rests");
    assert!(f.politeness.get("done.test").is_none());
    assert!(
        f.politeness.get("waiting.test").is_some(),
        "a host with a queue stays"
    );
    block_on(f.enqueue("https://done.test/2", 1, t)).expect("enqueue");
    assert!(
        f.politeness.get("done.test").is_some(),
        "woken for its new page"
    );
}

/// A store that commits every operation (a caller that never calls
/// `commit`) rests its done hosts as it goes.
#[test]
fn a_frontier_committing_every_operation_rests_done_hosts_without_a_commit_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = FrontierConfig {
        robots_gate: false,
        commit_every: 1,
        ..FrontierConfig::on_disk()
    };
    let mut f = opener(dir.path(), config)();
    let t = T0.add_millis(100_000);
    block_on(f.enqueue("https://a.test/1", 1, t)).expect("enqueue");
    let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
        panic!("a release")
    };
    block_on(f.complete(&r, &ok(), t)).expect("complete");
    block_on(f.enqueue("https://b.test/1", 1, t)).expect("enqueue");
    assert_eq!(
        f.resting_keys(),
        1,
        "a.test rests at the next operation's commit"
    );
}

#[test]
fn a_url_offered_parsed_is_the_url_offered_as_text() {
    let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
    let link = url::Url::parse("https://a.example/page?q=1").expect("url");
    let offers = [
        Offer::parsed(&link, 7, 42),
        Offer::new("https://a.example/page?q=1", 7, 42),
    ];
    let answers = block_on(f.enqueue_many(&offers, T0)).expect("enqueue");
    assert_eq!(answers, [Admission::Queued, Admission::Duplicate]);
    let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
        panic!("a page is due")
    };
    assert_eq!(
        (r.url.as_str(), r.key.as_str(), r.priority, r.tag),
        ("https://a.example/page?q=1", "a.example", 7, 42)
    );
}

#[test]
fn an_offer_whose_text_was_changed_is_judged_by_its_text() {
    let mut f = LocalFrontier::in_memory(Politeness::new(Config::default()), no_gate());
    let link = url::Url::parse("https://a.example/").expect("url");
    let mut changed = Offer::parsed(&link, 0, 0);
    changed.url = "https://b.example/other";
    let mut bad = Offer::parsed(&link, 0, 0);
    bad.url = "not a url";
    let answers = block_on(f.enqueue_many(&[changed, bad], T0)).expect("enqueue");
    assert_eq!(answers[0], Admission::Queued);
    assert!(
        matches!(&answers[1], Admission::Skipped { reason } if reason.contains("not an absolute URL")),
        "{answers:?}"
    );
    let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
        panic!("a page is due")
    };
    assert_eq!(
        (r.url.as_str(), r.key.as_str()),
        ("https://b.example/other", "b.example")
    );
}
