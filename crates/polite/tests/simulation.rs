//! Deterministic simulations on a fake clock: 1,000 hosts with random
//! latencies and Crawl-delays, 429 storms with Retry-After, 5xx bursts and
//! timeouts. Invariants are checked at every start.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use mannerly_polite::controller::{
    Config, CrawlDelayProfile, Millis, Outcome, Politeness, RobotsPacing, UnixMillis, Wait,
};
use proptest::prelude::*;

mod common;
use common::Rng;

struct Host {
    key: String,
    queue: u32,
    latency: Millis,
    crawl_delay: Option<f64>,
    /// Server behaviour: chance (per 1000) of 429 with Retry-After, of 5xx, of timeout.
    p429: u64,
    p5xx: u64,
    ptimeout: u64,
}

struct Report {
    released: u64,
    skipped: Vec<(String, String, u32)>,
    end: Millis,
}

fn simulate(seed: u64, hosts_n: usize, urls_per_host: u32, profile: CrawlDelayProfile) -> Report {
    let mut rng = Rng(seed | 1);
    let config = Config {
        profile,
        max_in_flight: 1,
        ..Config::default()
    };
    let max_in_flight = config.max_in_flight;
    let mut p = Politeness::new(config);
    let mut hosts: Vec<Host> = (0..hosts_n)
        .map(|i| Host {
            key: format!("h{i}.test"),
            queue: urls_per_host,
            latency: 20 + rng.below(3_000),
            crawl_delay: match rng.below(10) {
                0..=5 => None,
                6..=8 => Some(rng.below(20) as f64 + 0.5),
                _ => Some(120.0), // above the maximum
            },
            p429: if rng.below(10) == 0 { 400 } else { 5 },
            p5xx: if rng.below(10) == 0 { 300 } else { 5 },
            ptimeout: 10,
        })
        .collect();
    for h in &hosts {
        p.set_robots(
            &h.key,
            RobotsPacing {
                crawl_delay: h.crawl_delay,
                request_rate: None,
            },
        );
    }
    // Ground truth the invariants are checked against.
    let mut in_flight: HashMap<usize, u32> = HashMap::new();
    let mut retry_deadline: HashMap<usize, Millis> = HashMap::new();
    let mut completions: BinaryHeap<Reverse<(Millis, usize, u64)>> = BinaryHeap::new();
    let mut wakeups: BinaryHeap<Reverse<(Millis, usize)>> =
        (0..hosts.len()).map(|i| Reverse((0, i))).collect();
    let (mut released, mut skipped) = (0u64, Vec::new());
    let mut now: Millis = 0;
    loop {
        let next_c = completions.peek().map(|Reverse((t, _, _))| *t);
        let next_w = wakeups.peek().map(|Reverse((t, _))| *t);
        let Some(t) = [next_c, next_w].into_iter().flatten().min() else {
            break;
        };
        assert!(t >= now, "time never goes backwards");
        now = t;
        if next_c == Some(t) {
            let Some(Reverse((_, i, roll))) = completions.pop() else {
                continue;
            };
            let h = &hosts[i];
            let outcome = if roll % 1000 < h.ptimeout {
                Outcome::Failed { latency: h.latency }
            } else if roll % 1000 < h.ptimeout + h.p429 {
                let ra = 1 + roll % 300;
                retry_deadline.insert(i, now + ra.min(3_600) * 1000);
                Outcome::Status {
                    status: 429,
                    latency: h.latency,
                    retry_after: Some(ra.to_string()),
                }
            } else if roll % 1000 < h.ptimeout + h.p429 + h.p5xx {
                Outcome::Status {
                    status: [500, 502, 503, 504][(roll % 4) as usize],
                    latency: h.latency,
                    retry_after: None,
                }
            } else {
                Outcome::Status {
                    status: 200,
                    latency: h.latency,
                    retry_after: None,
                }
            };
            p.finish(&h.key, UnixMillis(now), &outcome);
            *in_flight.entry(i).or_default() -= 1;
            wakeups.push(Reverse((now, i)));
            continue;
        }
        let Some(Reverse((_, i))) = wakeups.pop() else {
            continue;
        };
        if hosts[i].queue == 0 {
            continue;
        }
        match p.check(&hosts[i].key, UnixMillis(now)) {
            Ok(()) => {
                // The invariants, checked against ground truth and state.
                let state = p.get(&hosts[i].key).cloned().unwrap_or_default();
                assert!(
                    UnixMillis(now) >= state.next_allowed,
                    "{}: started before next-allowed",
                    hosts[i].key
                );
                assert!(
                    in_flight.get(&i).copied().unwrap_or(0) < max_in_flight,
                    "{}: over the in-flight limit",
                    hosts[i].key
                );
                if let Some(d) = retry_deadline.get(&i) {
                    assert!(
                        now >= *d,
                        "{}: Retry-After not honoured ({now} < {d})",
                        hosts[i].key
                    );
                }
                p.start(&hosts[i].key, UnixMillis(now));
                *in_flight.entry(i).or_default() += 1;
                hosts[i].queue -= 1;
                released += 1;
                let roll = rng.next();
                completions.push(Reverse((now + hosts[i].latency, i, roll)));
            }
            Err(Wait::Until { at, .. }) => wakeups.push(Reverse((at.as_millis().max(now + 1), i))),
            Err(Wait::Skipped { reason }) => {
                skipped.push((hosts[i].key.clone(), reason, hosts[i].queue));
                hosts[i].queue = 0;
            }
        }
    }
    Report {
        released,
        skipped,
        end: now,
    }
}

#[test]
fn a_thousand_hosts_every_url_released_or_skipped_with_a_reason() {
    for seed in [1, 2, 3] {
        let r = simulate(seed, 1_000, 20, CrawlDelayProfile::Conservative);
        let skipped: u64 = r.skipped.iter().map(|(_, _, n)| u64::from(*n)).sum();
        assert_eq!(
            r.released + skipped,
            20_000,
            "seed {seed}: every URL accounted for"
        );
        assert!(
            r.skipped
                .iter()
                .all(|(_, reason, _)| reason.contains("host skipped")),
            "a reason for each skip"
        );
        assert!(
            !r.skipped.is_empty() && r.released > 15_000,
            "seed {seed}: {} released",
            r.released
        );
        assert!(r.end > 0);
    }
}

#[test]
fn every_profile_keeps_the_invariants() {
    for profile in [
        CrawlDelayProfile::Ignore,
        CrawlDelayProfile::Window,
        CrawlDelayProfile::Literal,
        CrawlDelayProfile::Conservative,
    ] {
        let r = simulate(42, 200, 10, profile);
        let skipped: u64 = r.skipped.iter().map(|(_, _, n)| u64::from(*n)).sum();
        assert_eq!(r.released + skipped, 2_000, "{profile:?}");
    }
}

/// Start times of `n` successful requests to one host under a profile.
fn starts(
    profile: CrawlDelayProfile,
    pacing: RobotsPacing,
    latency: Millis,
    n: usize,
) -> Vec<Millis> {
    let mut p = Politeness::new(Config {
        profile,
        ..Config::default()
    });
    p.set_robots("h", pacing);
    let mut now = 0;
    let mut out = Vec::new();
    while out.len() < n {
        match p.check("h", UnixMillis(now)) {
            Ok(()) => {
                p.start("h", UnixMillis(now));
                out.push(now);
                now += latency;
                p.finish(
                    "h",
                    UnixMillis(now),
                    &Outcome::Status {
                        status: 200,
                        latency,
                        retry_after: None,
                    },
                );
            }
            Err(Wait::Until { at, .. }) => now = at.as_millis().max(now + 1),
            Err(Wait::Skipped { .. }) => break,
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn literal_waits_the_crawl_delay(cd in 0.0f64..29.0, latency in 1u64..5_000) {
        let s = starts(CrawlDelayProfile::Literal, RobotsPacing { crawl_delay: Some(cd), request_rate: None }, latency, 6);
        for w in s.windows(2) {
            prop_assert!(w[1] - w[0] >= (cd * 1000.0) as u64, "gap {} < {cd} s", w[1] - w[0]);
        }
    }

    #[test]
    fn conservative_takes_the_largest(cd in proptest::option::of(0.0f64..29.0), rate in proptest::option::of((1u32..10, 1u64..60)), latency in 1u64..3_000) {
        let pacing = RobotsPacing { crawl_delay: cd, request_rate: rate };
        let s = starts(CrawlDelayProfile::Conservative, pacing, latency, 6);
        let want = 1_000u64
            .max(cd.map_or(0, |d| (d * 1000.0) as u64))
            .max(rate.map_or(0, |(n, m)| m * 1000 / u64::from(n)));
        if want <= 30_000 {
            for w in s.windows(2) {
                prop_assert!(w[1] - w[0] >= want, "gap {} < {want}", w[1] - w[0]);
            }
        } else {
            prop_assert!(s.is_empty(), "over the maximum: skipped");
        }
    }

    #[test]
    fn window_allows_one_start_per_window(cd in 0.5f64..60.0, latency in 1u64..3_000) {
        let s = starts(CrawlDelayProfile::Window, RobotsPacing { crawl_delay: Some(cd), request_rate: None }, latency, 8);
        let window = ((cd * 1000.0) as u64).clamp(1_000, 30_000);
        let mut seen = std::collections::HashSet::new();
        for t in &s {
            prop_assert!(seen.insert(t / window), "two starts in window {}", t / window);
        }
    }

    #[test]
    fn ignore_uses_only_the_minimum_delay(cd in 0.0f64..1000.0, latency in 1u64..3_000) {
        let s = starts(CrawlDelayProfile::Ignore, RobotsPacing { crawl_delay: Some(cd), request_rate: None }, latency, 5);
        prop_assert_eq!(s.len(), 5, "never skipped for Crawl-delay");
        for w in s.windows(2) {
            prop_assert!(w[1] - w[0] >= 1_000);
        }
    }

    /// After any run of answers, a request that stalled in the crawler
    /// (its timer fired late) changes nothing of the host but the request
    /// in flight: no failure, no backoff, no recovery, no latency learnt,
    /// and the delay still runs from its start.
    #[test]
    fn a_stall_is_not_the_hosts_failure(history in prop::collection::vec((prop::sample::select(vec![200u16, 429, 500, 503, 0]), 1u64..3_000), 0..12), stall in 1u64..60_000) {
        let mut p = Politeness::new(Config::default());
        let mut now = UnixMillis(1_000_000);
        for (status, latency) in history {
            now = p.get("h").map_or(now, |h| h.next_allowed.max(now)).max(now);
            p.start("h", now);
            now = now.add_millis(latency);
            let outcome = match status {
                0 => Outcome::Failed { latency },
                s => Outcome::Status { status: s, latency, retry_after: None },
            };
            p.finish("h", now, &outcome);
        }
        now = p.get("h").map_or(now, |h| h.next_allowed.max(now)).max(now);
        p.start("h", now);
        let before = p.get("h").cloned().expect("state");
        p.finish("h", now.add_millis(stall), &Outcome::Stalled { latency: stall });
        let after = p.get("h").cloned().expect("state");
        prop_assert_eq!(after.in_flight + 1, before.in_flight);
        prop_assert_eq!(mannerly_polite::controller::HostState { in_flight: before.in_flight, ..after }, before);
    }

    #[test]
    fn retry_after_delta_seconds_parse(secs in 0u64..100_000_000) {
        prop_assert_eq!(mannerly_time::parse_retry_after(&secs.to_string(), UnixMillis::EPOCH), Some(UnixMillis(secs * 1000)));
    }
}
