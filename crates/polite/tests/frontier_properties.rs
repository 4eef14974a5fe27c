//! The on-disk frontier must behave exactly as the in-memory one: random
//! sequences of enqueues (random hosts and priorities, duplicates
//! included), releases, completions with random statuses, cancellations
//! and robots.txt reports run against both, with a one-URL window on disk
//! (so nearly every release refills from disk) and the disk frontier
//! closed and reopened at random points with nothing in flight. Every
//! answer must be the same.

use mannerly_polite::controller::{Config, Outcome, Politeness, RobotsPacing};
use mannerly_polite::frontier::{Frontier, FrontierConfig, Kind, LocalFrontier, Next, Released};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Enqueue { host: u8, page: u8, priority: u8 },
    Next,
    Complete { which: u8, status: u16 },
    Cancel { which: u8 },
    Advance { ms: u16 },
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, 0u8..40, 0u8..4).prop_map(|(host, page, priority)| Op::Enqueue { host, page, priority }),
        4 => Just(Op::Next),
        3 => (any::<u8>(), prop_oneof![Just(200u16), Just(404), Just(429), Just(503)])
            .prop_map(|(which, status)| Op::Complete { which, status }),
        1 => any::<u8>().prop_map(|which| Op::Cancel { which }),
        2 => (0u16..3_000).prop_map(|ms| Op::Advance { ms }),
        1 => Just(Op::Reopen),
    ]
}

fn config(window: usize) -> FrontierConfig {
    FrontierConfig {
        window,
        max_per_key: 25,
        ..FrontierConfig::on_disk()
    }
}

fn finish(f: &mut LocalFrontier, r: &Released, status: u16, now: u64) -> String {
    if r.kind == Kind::Robots {
        let origin = r.url.trim_end_matches("/robots.txt");
        let pacing = RobotsPacing {
            crawl_delay: Some(f64::from(u8::try_from(r.key.len() % 3).unwrap_or(0))),
            request_rate: None,
        };
        f.robots_known(origin, pacing, now + 20_000, now)
            .expect("robots");
    }
    let outcome = Outcome::Status {
        status,
        latency: 30,
        retry_after: (status == 429).then(|| "2".to_owned()),
    };
    format!(
        "{:?}",
        f.complete(r, &outcome, now, 0).map_err(|e| e.to_string())
    )
}

/// Releases and completes everything; the pages released, sorted.
fn drain_pages(f: &mut LocalFrontier, mut now: u64) -> Vec<String> {
    let mut pages = Vec::new();
    loop {
        match f.next(now).expect("next") {
            Next::Fetch(r) => {
                if r.kind == Kind::Page {
                    pages.push(r.url.clone());
                }
                finish(f, &r, 200, now);
            }
            Next::Wait { until } => now = until,
            Next::Empty => break,
            Next::Busy => panic!("busy with nothing in flight"),
        }
    }
    pages.sort();
    pages
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn disk_and_memory_agree(ops in proptest::collection::vec(op(), 1..250)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut mem = LocalFrontier::in_memory(Politeness::new(Config::default()), config(1));
        let mut disk = Some(LocalFrontier::open(dir.path(), Politeness::new(Config::default()), config(1)).expect("open"));
        let mut flying: Vec<Released> = Vec::new();
        let mut now = 0u64;
        let mut reopened = false;
        for (i, op) in ops.iter().enumerate() {
            let d = disk.as_mut().expect("open");
            match op {
                Op::Enqueue { host, page, priority } => {
                    let url = format!("https://h{host}.test/p{page}");
                    let a = mem.enqueue(&url, *priority, now).expect("mem");
                    let b = d.enqueue(&url, *priority, now).expect("disk");
                    prop_assert_eq!(a, b, "op {}: enqueue {}", i, url);
                }
                Op::Next => {
                    let a = mem.next(now).expect("mem");
                    let b = d.next(now).expect("disk");
                    prop_assert_eq!(&a, &b, "op {}: next", i);
                    if let Next::Fetch(r) = a {
                        flying.push(r);
                    }
                }
                Op::Complete { which, status } => {
                    if !flying.is_empty() {
                        let r = flying.remove(usize::from(*which) % flying.len());
                        let a = finish(&mut mem, &r, *status, now);
                        let b = finish(d, &r, *status, now);
                        prop_assert_eq!(a, b, "op {}: complete", i);
                    }
                }
                Op::Cancel { which } => {
                    if !flying.is_empty() {
                        let r = flying.remove(usize::from(*which) % flying.len());
                        let a = mem.cancel(&r, now).map_err(|e| e.to_string());
                        let b = d.cancel(&r, now).map_err(|e| e.to_string());
                        prop_assert_eq!(a, b, "op {}: cancel", i);
                    }
                }
                Op::Advance { ms } => now += u64::from(*ms),
                Op::Reopen => {
                    // Only with nothing in flight: reopening re-issues
                    // in-flight URLs, which memory cannot mirror. Keys are
                    // rescheduled on reopen, so the order among hosts may
                    // differ from here on; what must hold is checked below.
                    if flying.is_empty() {
                        drop(disk.take());
                        disk = Some(LocalFrontier::open(dir.path(), Politeness::new(Config::default()), config(1)).expect("reopen"));
                        reopened = true;
                    }
                }
            }
            if reopened {
                break;
            }
            let d = disk.as_ref().expect("open");
            prop_assert_eq!(mem.stats().queued, d.stats().queued, "op {}: queued", i);
        }
        // Drain both the same way.
        for r in flying.drain(..) {
            finish(&mut mem, &r, 200, now);
            finish(disk.as_mut().expect("open"), &r, 200, now);
        }
        let d = disk.as_mut().expect("open");
        if reopened {
            // After a reopen: the same pages, each released once.
            let a = drain_pages(&mut mem, now);
            let b = drain_pages(d, now);
            prop_assert_eq!(a, b);
            return Ok(());
        }
        let mut n = 0;
        loop {
            let a = mem.next(now).expect("mem");
            let b = d.next(now).expect("disk");
            prop_assert_eq!(&a, &b, "drain {}", n);
            match a {
                Next::Fetch(r) => {
                    finish(&mut mem, &r, 200, now);
                    finish(d, &r, 200, now);
                }
                Next::Wait { until } => now = until,
                Next::Empty => break,
                Next::Busy => panic!("busy with nothing in flight"),
            }
            n += 1;
        }
    }
}
