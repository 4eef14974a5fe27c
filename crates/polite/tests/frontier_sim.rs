//! The frontier under a 1,000-host simulation on a fake clock, in memory
//! and on disk. Each host's robots.txt is released first (and counts as a
//! request); its Crawl-delay arrives with it. On every release the test
//! checks: nothing else in flight for the host, the previous start at least
//! the host's delay ago, and any Retry-After passed. At the end every
//! queued URL was released or reported skipped with a reason.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use mannerly_polite::controller::{Config, Millis, Outcome, Politeness, RobotsPacing, UnixMillis};
use mannerly_polite::frontier::{
    Admission, Frontier, FrontierConfig, Kind, LocalFrontier, Next, Released,
};
use mannerly_polite::testing::block_on;

/// When the simulation starts (2026-11-20T10:00Z).
use mannerly_testsupport::T0;

mod common;
use common::Rng;

struct Host {
    latency: Millis,
    stormy: bool,
    crawl_delay: Option<f64>,
}

/// Drives any backend through the [`Frontier`] trait; times are
/// milliseconds since the simulation started.
fn simulate<F: Frontier>(f: &mut F, seed: u64) -> u64 {
    let at = |ms: u64| UnixMillis(T0.as_millis() + ms);
    let mut rng = Rng(seed);
    let hosts = 1_000u64;
    let per_host = 15u64;
    let mut world: HashMap<String, Host> = HashMap::new();
    let mut queued = 0u64;
    for h in 0..hosts {
        let key = format!("h{h}.test");
        let crawl_delay = match rng.next() % 10 {
            0..=6 => None,
            7 | 8 => Some((rng.next() % 10) as f64 + 0.25),
            _ => Some(600.0),
        };
        world.insert(
            key.clone(),
            Host {
                latency: 10 + rng.next() % 2_000,
                stormy: rng.next().is_multiple_of(8),
                crawl_delay,
            },
        );
        for u in 0..per_host {
            match block_on(f.enqueue(&format!("https://{key}/p{u}"), (u % 3) as u8, at(0))) {
                Ok(Admission::Queued) => queued += 1,
                other => panic!("{other:?}"),
            }
        }
    }
    let mut in_flight: HashMap<String, u32> = HashMap::new();
    let mut last_start: HashMap<String, Millis> = HashMap::new();
    let mut retry_until: HashMap<String, Millis> = HashMap::new();
    let mut robots_fetches = 0u64;
    let mut completions: BinaryHeap<Reverse<(Millis, u64)>> = BinaryHeap::new();
    let mut pending: HashMap<u64, Released> = HashMap::new();
    let (mut now, mut released, mut seq) = (0, 0u64, 0u64);
    loop {
        while let Some(Reverse((t, id))) = completions.peek().copied() {
            if t > now {
                break;
            }
            completions.pop();
            let r = pending.remove(&id).expect("pending");
            let host = &world[&r.key];
            let storm = host.stormy && rng.next().is_multiple_of(2);
            let outcome = if r.kind == Kind::Robots {
                Outcome::Status {
                    status: 200,
                    latency: host.latency,
                    retry_after: None,
                }
            } else if storm {
                let ra = 1 + rng.next() % 120;
                retry_until.insert(r.key.clone(), t + ra * 1000);
                Outcome::Status {
                    status: 429,
                    latency: host.latency,
                    retry_after: Some(ra.to_string()),
                }
            } else if rng.next().is_multiple_of(50) {
                Outcome::Status {
                    status: 503,
                    latency: host.latency,
                    retry_after: None,
                }
            } else {
                Outcome::Status {
                    status: 200,
                    latency: host.latency,
                    retry_after: None,
                }
            };
            if r.kind == Kind::Robots {
                let pacing = RobotsPacing {
                    crawl_delay: host.crawl_delay,
                    request_rate: None,
                };
                let origin = r.url.trim_end_matches("/robots.txt");
                block_on(f.robots_known(origin, pacing, at(t + 86_400_000), at(t)))
                    .expect("robots");
            }
            *in_flight.entry(r.key.clone()).or_default() -= 1;
            block_on(f.complete(&r, &outcome, at(t))).expect("complete");
        }
        match block_on(f.next(at(now))).expect("next") {
            Next::Fetch(r) => {
                let flying = in_flight.entry(r.key.clone()).or_default();
                assert_eq!(*flying, 0, "{}: two in flight", r.key);
                if let Some(until) = retry_until.get(&r.key) {
                    assert!(now >= *until, "{}: Retry-After not honoured", r.key);
                }
                if let Some(prev) = last_start.get(&r.key) {
                    let cd = world[&r.key].crawl_delay.unwrap_or(0.0);
                    let delay = ((cd * 1000.0) as Millis).max(1_000);
                    assert!(
                        now - prev >= delay,
                        "{}: started {} ms after the last",
                        r.key,
                        now - prev
                    );
                }
                last_start.insert(r.key.clone(), now);
                *flying += 1;
                match r.kind {
                    Kind::Robots => robots_fetches += 1,
                    Kind::Page => released += 1,
                }
                seq += 1;
                let done = now + world[&r.key].latency;
                completions.push(Reverse((done, seq)));
                pending.insert(seq, r);
            }
            Next::Wait { until } => {
                let until = until.millis_since(T0);
                let c = completions.peek().map(|Reverse((t, ..))| *t);
                now = c.map_or(until, |c| c.min(until)).max(now + 1);
            }
            Next::Busy => {
                // Wait for the next completion; there must be one.
                let Some(Reverse((t, ..))) = completions.peek() else {
                    panic!("busy with nothing in flight");
                };
                now = (*t).max(now);
            }
            Next::Empty => {
                if let Some(Reverse((t, ..))) = completions.peek() {
                    now = *t;
                    continue;
                }
                break;
            }
        }
    }
    let skipped = block_on(f.take_skipped()).expect("skipped");
    for s in &skipped {
        assert!(s.reason.contains("host skipped"), "{}", s.reason);
    }
    assert_eq!(
        released + skipped.len() as u64,
        queued,
        "every queued URL released or skipped"
    );
    assert_eq!(robots_fetches, hosts, "one robots.txt per origin");
    assert_eq!(block_on(f.stats()).expect("stats").queued, 0);
    assert!(released > 10_000, "{released}");
    released
}

#[test]
fn a_thousand_hosts_in_memory() {
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig::default(),
    );
    simulate(&mut f, 0x5eed);
}

#[test]
fn a_thousand_hosts_on_disk_release_the_same_urls() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = FrontierConfig {
        window: 3, // small, so windows are refilled from disk often
        ..FrontierConfig::on_disk()
    };
    let mut disk =
        LocalFrontier::open(dir.path(), Politeness::new(Config::default()), config).expect("open");
    let on_disk = simulate(&mut disk, 0xd15c);
    let mut mem = LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig::default(),
    );
    assert_eq!(simulate(&mut mem, 0xd15c), on_disk);
}
