//! The frontier under a 1,000-host simulation on a fake clock: every URL is
//! released or reported skipped with a reason; at every release the host
//! has nothing in flight, its next-allowed time has come, and any
//! Retry-After has passed.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use mannerly_polite::controller::{Config, Millis, Outcome, Politeness, RobotsPacing};
use mannerly_polite::frontier::{
    Admission, Frontier, FrontierConfig, MemoryFrontier, Next, Released,
};

mod common;
use common::Rng;

#[test]
fn a_thousand_hosts_through_the_frontier() {
    let mut rng = Rng(0x5eed);
    let mut f = MemoryFrontier::new(
        Politeness::new(Config::default()),
        FrontierConfig::default(),
    );
    let hosts = 1_000u64;
    let per_host = 15u64;
    let mut latency: HashMap<String, Millis> = HashMap::new();
    let mut stormy: HashMap<String, bool> = HashMap::new();
    let mut queued = 0u64;
    for h in 0..hosts {
        let key = format!("h{h}.test");
        latency.insert(key.clone(), 10 + rng.next() % 2_000);
        stormy.insert(key.clone(), rng.next() % 8 == 0);
        let cd = match rng.next() % 10 {
            0..=6 => None,
            7 | 8 => Some((rng.next() % 10) as f64 + 0.25),
            _ => Some(600.0),
        };
        f.politeness.set_robots(
            &key,
            RobotsPacing {
                crawl_delay: cd,
                request_rate: None,
            },
        );
        for u in 0..per_host {
            match f.enqueue(&format!("https://{key}/p{u}"), (u % 3) as u8, 0) {
                Admission::Queued => queued += 1,
                Admission::Skipped { reason } => assert!(reason.contains("host skipped")),
                other => panic!("{other:?}"),
            }
        }
    }
    let mut in_flight: HashMap<String, u32> = HashMap::new();
    let mut retry_until: HashMap<String, Millis> = HashMap::new();
    let mut completions: BinaryHeap<Reverse<(Millis, u64, String, String)>> = BinaryHeap::new();
    let (mut now, mut released, mut seq) = (0, 0u64, 0u64);
    loop {
        // Deliver completions due now.
        while let Some(Reverse((t, _, key, url))) = completions.peek().cloned() {
            if t > now {
                break;
            }
            completions.pop();
            let storm = stormy[&key] && rng.next() % 2 == 0;
            let outcome = if storm {
                let ra = 1 + rng.next() % 120;
                retry_until.insert(key.clone(), t + ra * 1000);
                Outcome::Status {
                    status: 429,
                    latency: latency[&key],
                    retry_after: Some(ra.to_string()),
                }
            } else if rng.next() % 50 == 0 {
                Outcome::Status {
                    status: 503,
                    latency: latency[&key],
                    retry_after: None,
                }
            } else {
                Outcome::Status {
                    status: 200,
                    latency: latency[&key],
                    retry_after: None,
                }
            };
            *in_flight.entry(key.clone()).or_default() -= 1;
            f.complete(
                &Released {
                    url,
                    key,
                    priority: 0,
                },
                &outcome,
                t,
                0,
            );
        }
        match f.next(now) {
            Next::Fetch(r) => {
                assert_eq!(
                    in_flight.get(&r.key).copied().unwrap_or(0),
                    0,
                    "{}: two in flight",
                    r.key
                );
                if let Some(until) = retry_until.get(&r.key) {
                    assert!(now >= *until, "{}: Retry-After not honoured", r.key);
                }
                *in_flight.entry(r.key.clone()).or_default() += 1;
                released += 1;
                seq += 1;
                completions.push(Reverse((now + latency[&r.key], seq, r.key, r.url)));
            }
            Next::Wait { until } => {
                let c = completions.peek().map(|Reverse((t, ..))| *t);
                now = c.map_or(until, |c| c.min(until)).max(now + 1);
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
    let skipped = f.take_skipped();
    assert_eq!(
        released + skipped.len() as u64,
        queued,
        "every queued URL released or skipped"
    );
    assert_eq!(f.queued(), 0);
    assert!(released > 10_000, "{released}");
}
