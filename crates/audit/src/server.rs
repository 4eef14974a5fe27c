//! The audit of a test server's records: a crawler's requests as the
//! server saw them, against what each host asked for (`mannerly demo` and
//! the crawler's own tests). It knows what a log cannot: how many requests
//! were in flight at once, which links were nofollow.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

/// Violations described in a [`ServerReport`], at most.
pub const MAX_SERVER_EXAMPLES: usize = 5;

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The host, lower-case, without the port.
    pub host: String,
    /// Path and query.
    pub path: String,
    /// When it started, on the server's clock (from any fixed origin).
    pub started: Duration,
}

/// What a host asked of crawlers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expect {
    /// The least start-to-start gap between two of its requests.
    pub delay: Duration,
    /// Path prefixes its robots.txt disallows.
    pub disallowed: Vec<String>,
    /// The Retry-After windows it answered, in order, for one path: after
    /// the n-th request to `path`, the next waits at least the n-th
    /// duration.
    pub retry_after: Vec<(String, Duration)>,
    /// Its robots.txt was unavailable throughout: nothing else may be
    /// requested.
    pub robots_unavailable: bool,
    /// Paths only a nofollow page or a `rel=nofollow` link leads to.
    pub nofollow: Vec<String>,
}

/// What the requests did, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerReport {
    /// The first violations, described.
    pub examples: Vec<String>,
    /// Requests in all.
    pub requests: usize,
    /// Requests other than robots.txt.
    pub pages: usize,
    /// Distinct URLs among them (a fleet that re-fetches after a lapsed
    /// lease asks some twice; none may be missing).
    pub distinct_pages: usize,
    /// Hosts that had more than one request in flight at once.
    pub concurrent: usize,
    /// Requests sooner than their host's delay after the previous one.
    pub too_soon: usize,
    /// Of `too_soon`, those more than 100 ms short of the delay.
    pub too_soon_far: usize,
    /// Requests inside a Retry-After window.
    pub retry_after: usize,
    /// Requests to nofollow links.
    pub nofollow: usize,
    /// Requests to disallowed paths.
    pub disallowed: usize,
    /// Hosts whose first request was not robots.txt.
    pub robots_not_first: usize,
    /// Page requests to hosts whose robots.txt was unavailable.
    pub unavailable_pages: usize,
    /// Pages requested more than once (`host path`), each with the
    /// shortest start-to-start gap between two of its requests, in ms: a
    /// retry, or in a fleet a URL given back when its worker's lease
    /// lapsed. Not a violation by itself.
    pub refetched: BTreeMap<String, u64>,
}

impl ServerReport {
    /// Every violation counted (refetches are not violations).
    pub fn violations(&self) -> usize {
        self.concurrent
            + self.too_soon
            + self.retry_after
            + self.disallowed
            + self.robots_not_first
            + self.unavailable_pages
            + self.nofollow
    }

    fn example(&mut self, text: impl FnOnce() -> String) {
        if self.examples.len() < MAX_SERVER_EXAMPLES {
            self.examples.push(text());
        }
    }
}

/// Judges `requests` host by host against what `expect` says each host
/// asked for; `max_in_flight` gives the most requests a host had in
/// flight at once; a gap may fall short of a delay by `jitter`.
pub fn judge(
    requests: &[Seen],
    expect: impl Fn(&str) -> Expect,
    max_in_flight: impl Fn(&str) -> usize,
    jitter: Duration,
) -> ServerReport {
    let pages: Vec<&Seen> = requests.iter().filter(|r| !is_robots(r)).collect();
    let mut report = ServerReport {
        requests: requests.len(),
        pages: pages.len(),
        distinct_pages: pages
            .iter()
            .map(|r| (r.host.as_str(), r.path.as_str()))
            .collect::<HashSet<_>>()
            .len(),
        ..ServerReport::default()
    };
    let mut by_host: BTreeMap<&str, Vec<&Seen>> = BTreeMap::new();
    for r in requests {
        by_host.entry(r.host.as_str()).or_default().push(r);
    }
    for (host, mut reqs) in by_host {
        reqs.sort_by_key(|r| r.started);
        let expect = expect(host);
        if max_in_flight(host) > 1 {
            report.concurrent += 1;
        }
        if reqs.first().is_some_and(|r| !is_robots(r)) {
            report.robots_not_first += 1;
        }
        refetches(&mut report, host, &reqs);
        gaps(&mut report, host, &reqs, expect.delay, jitter);
        retry_after(&mut report, host, &reqs, &expect.retry_after, jitter);
        let disallowed = |r: &&&Seen| expect.disallowed.iter().any(|d| r.path.starts_with(d));
        report.disallowed += reqs.iter().filter(disallowed).count();
        if expect.robots_unavailable {
            report.unavailable_pages += reqs.iter().filter(|r| !is_robots(r)).count();
        }
        report.nofollow += reqs
            .iter()
            .filter(|r| expect.nofollow.contains(&r.path))
            .count();
    }
    report
}

fn is_robots(r: &Seen) -> bool {
    r.path == "/robots.txt"
}

/// Pages asked more than once, with their shortest gap.
fn refetches(report: &mut ServerReport, host: &str, reqs: &[&Seen]) {
    let mut last: HashMap<&str, Duration> = HashMap::new();
    for r in reqs.iter().filter(|r| !is_robots(r)) {
        if let Some(prev) = last.insert(r.path.as_str(), r.started) {
            let gap = u64::try_from(r.started.saturating_sub(prev).as_millis()).unwrap_or(u64::MAX);
            let min = report
                .refetched
                .entry(format!("{host} {}", r.path))
                .or_insert(gap);
            *min = (*min).min(gap);
        }
    }
}

/// Start-to-start gaps shorter than the host's delay.
fn gaps(report: &mut ServerReport, host: &str, reqs: &[&Seen], delay: Duration, jitter: Duration) {
    for w in reqs.windows(2) {
        let gap = w[1].started.saturating_sub(w[0].started);
        if gap + jitter < delay {
            report.too_soon += 1;
            if gap + Duration::from_millis(100) < delay {
                report.too_soon_far += 1;
            }
            report.example(|| format!("{host}: {} {:?} after {}", w[1].path, gap, w[0].path));
        }
    }
}

/// Requests to a path inside the Retry-After window its previous answer
/// opened.
fn retry_after(
    report: &mut ServerReport,
    host: &str,
    reqs: &[&Seen],
    waits: &[(String, Duration)],
    jitter: Duration,
) {
    let Some((path, _)) = waits.first() else {
        return;
    };
    let asked: Vec<_> = reqs.iter().filter(|r| r.path == *path).collect();
    for (w, (_, wait)) in asked.windows(2).zip(waits) {
        let gap = w[1].started.saturating_sub(w[0].started);
        if gap + jitter < *wait {
            report.retry_after += 1;
            report.example(|| {
                let secs = wait.as_secs_f64();
                format!("{host}: {path} again {gap:?} after a 429 asking for {secs} s")
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(host: &str, path: &str, ms: u64) -> Seen {
        Seen {
            host: host.into(),
            path: path.into(),
            started: Duration::from_millis(ms),
        }
    }

    const JITTER: Duration = Duration::from_millis(15);

    #[test]
    fn a_polite_crawl_has_no_violation() {
        let requests = [
            seen("a.test", "/robots.txt", 0),
            seen("b.test", "/robots.txt", 10),
            seen("a.test", "/", 1_000),
            seen("b.test", "/", 2_010),
            seen("a.test", "/x", 1_990),
        ];
        let expect = |h: &str| Expect {
            delay: Duration::from_secs(if h == "b.test" { 2 } else { 1 }),
            ..Expect::default()
        };
        let r = judge(&requests, expect, |_| 1, JITTER);
        assert_eq!(r.violations(), 0, "{r:?}");
        assert_eq!((r.requests, r.pages, r.distinct_pages), (5, 3, 3));
        assert!(r.examples.is_empty());
    }

    #[test]
    fn each_rule_is_counted_with_an_example() {
        let requests = [
            seen("a.test", "/", 0),
            seen("a.test", "/robots.txt", 50),
            seen("a.test", "/private/1", 2_000),
            seen("a.test", "/never", 4_000),
            seen("busy.test", "/robots.txt", 0),
            seen("busy.test", "/robots.txt", 1_000),
            seen("busy.test", "/page", 5_000),
        ];
        let expect = |h: &str| match h {
            "busy.test" => Expect {
                retry_after: vec![("/robots.txt".into(), Duration::from_secs(3_600))],
                robots_unavailable: true,
                ..Expect::default()
            },
            _ => Expect {
                delay: Duration::from_secs(1),
                disallowed: vec!["/private/".into()],
                nofollow: vec!["/never".into()],
                ..Expect::default()
            },
        };
        let r = judge(
            &requests,
            expect,
            |h| usize::from(h == "a.test") + 1,
            JITTER,
        );
        assert_eq!(r.robots_not_first, 1);
        assert_eq!((r.too_soon, r.too_soon_far), (1, 1));
        assert_eq!(r.disallowed, 1);
        assert_eq!(r.nofollow, 1);
        assert_eq!(r.retry_after, 1);
        assert_eq!(r.unavailable_pages, 1);
        assert_eq!(r.concurrent, 1);
        assert_eq!(r.violations(), 7);
        assert_eq!(r.examples.len(), 2, "{:?}", r.examples);
        assert!(r.examples[0].starts_with("a.test: /robots.txt 50ms after /"));
    }

    #[test]
    fn refetches_keep_their_shortest_gap_and_are_no_violation() {
        let requests = [
            seen("a.test", "/robots.txt", 0),
            seen("a.test", "/p", 1_000),
            seen("a.test", "/p", 5_000),
            seen("a.test", "/p", 7_000),
        ];
        let r = judge(&requests, |_| Expect::default(), |_| 1, JITTER);
        assert_eq!(r.refetched.get("a.test /p"), Some(&2_000));
        assert_eq!(r.distinct_pages, 1);
        assert_eq!(r.violations(), 0);
    }

    #[test]
    fn examples_stay_bounded() {
        let requests: Vec<Seen> = (0..100).map(|i| seen("a.test", "/", i)).collect();
        let expect = |_: &str| Expect {
            delay: Duration::from_secs(1),
            ..Expect::default()
        };
        let r = judge(&requests, expect, |_| 1, JITTER);
        assert_eq!(r.too_soon, 99);
        assert_eq!(r.examples.len(), MAX_SERVER_EXAMPLES);
    }

    proptest::proptest! {
        /// The order the requests come in does not change the report.
        #[test]
        fn the_order_of_the_log_does_not_matter(
            times in proptest::collection::vec((0u8..3, 0u8..4, 0u64..5_000), 0..40),
            seed in proptest::prelude::any::<u64>(),
        ) {
            let requests: Vec<Seen> = times
                .iter()
                .map(|(h, p, t)| seen(&format!("h{h}.test"), &format!("/p{p}"), *t))
                .collect();
            let mut shuffled = requests.clone();
            // A fixed permutation derived from the seed.
            shuffled.sort_by_key(|r| (r.started.as_millis() as u64).wrapping_mul(seed | 1) ^ seed);
            let expect = |_: &str| Expect { delay: Duration::from_millis(700), ..Expect::default() };
            let a = judge(&requests, expect, |_| 1, JITTER);
            let b = judge(&shuffled, expect, |_| 1, JITTER);
            proptest::prop_assert_eq!(a.violations(), b.violations());
            proptest::prop_assert_eq!(a.refetched, b.refetched);
        }
    }
}
