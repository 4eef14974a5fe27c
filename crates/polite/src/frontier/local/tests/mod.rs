//! The local frontier's own tests: scheduling, robots.txt first, slots,
//! skips and offers here; the store, the bound on open hosts and resting
//! hosts in the modules below.

use super::*;
use crate::controller::Config;
use crate::frontier::block_on;

mod disk;
mod open_hosts;
mod rest;

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
