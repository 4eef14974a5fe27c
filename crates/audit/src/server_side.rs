//! What only a server knows of a crawl, and no access log records: how
//! many requests were in flight at once, which links only a nofollow page
//! or a `rel=nofollow` link led to, which pages were asked twice. The
//! rules a log shows (paths, gaps, Retry-After, robots.txt first and
//! available) are judged from the log, by [`audit_logs`](crate::audit_logs);
//! `mannerly demo` and the crawler's own crawl test do both.
//!
//! ```
//! use std::time::Duration;
//! use mannerly_audit::{judge, Expect, Seen};
//!
//! let seen = |path: &str, ms: u64| Seen {
//!     host: "a.test".into(),
//!     path: path.into(),
//!     started: Duration::from_millis(ms),
//! };
//! let requests = [seen("/robots.txt", 0), seen("/", 1_000), seen("/ad", 2_000)];
//! let expect = |_: &str| Expect { nofollow: vec!["/ad".into()], ..Expect::default() };
//! let report = judge(&requests, expect, |_| 1);
//! assert_eq!((report.nofollow, report.concurrent), (1, 0));
//! ```

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

/// What a host's pages asked of crawlers that a log cannot show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expect {
    /// Paths only a nofollow page or a `rel=nofollow` link leads to.
    pub nofollow: Vec<String>,
    /// Paths a redirect of the host's robots.txt leads to: robots.txt
    /// requests, not pages.
    pub robots_hops: Vec<String>,
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
    /// Requests to nofollow links.
    pub nofollow: usize,
    /// Pages requested more than once (`host path`), each with the
    /// shortest start-to-start gap between two of its requests, in ms: a
    /// retry, or in a fleet a URL given back when its worker's lease
    /// lapsed. Not a violation by itself.
    pub refetched: BTreeMap<String, u64>,
}

impl ServerReport {
    /// Every violation counted (refetches are not violations).
    pub fn violations(&self) -> usize {
        self.concurrent + self.nofollow
    }

    fn example(&mut self, text: impl FnOnce() -> String) {
        if self.examples.len() < MAX_SERVER_EXAMPLES {
            self.examples.push(text());
        }
    }
}

/// Judges `requests` host by host against what `expect` says each host's
/// pages asked for; `max_in_flight` gives the most requests a host had in
/// flight at once (the server counts it exactly).
pub fn judge(
    requests: &[Seen],
    expect: impl Fn(&str) -> Expect,
    max_in_flight: impl Fn(&str) -> usize,
) -> ServerReport {
    let mut by_host: BTreeMap<&str, Vec<&Seen>> = BTreeMap::new();
    for r in requests {
        by_host.entry(r.host.as_str()).or_default().push(r);
    }
    let expected: BTreeMap<&str, Expect> = by_host.keys().map(|h| (*h, expect(h))).collect();
    let pages: Vec<&Seen> = requests
        .iter()
        .filter(|r| {
            !is_robots(r)
                && !expected
                    .get(r.host.as_str())
                    .is_some_and(|e| e.robots_hops.contains(&r.path))
        })
        .collect();
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
    for (host, mut reqs) in by_host {
        reqs.sort_by_key(|r| r.started);
        let in_flight = max_in_flight(host);
        if in_flight > 1 {
            report.concurrent += 1;
            report.example(|| format!("{host}: {in_flight} requests in flight at once"));
        }
        let expect = expected.get(host).cloned().unwrap_or_default();
        refetches(&mut report, host, &reqs, &expect.robots_hops);
        for r in reqs.iter().filter(|r| expect.nofollow.contains(&r.path)) {
            report.nofollow += 1;
            report.example(|| format!("{host}: {} followed a nofollow link", r.path));
        }
    }
    report
}

fn is_robots(r: &Seen) -> bool {
    r.path == "/robots.txt"
}

/// Pages asked more than once, with their shortest gap.
fn refetches(report: &mut ServerReport, host: &str, reqs: &[&Seen], hops: &[String]) {
    let mut last: HashMap<&str, Duration> = HashMap::new();
    for r in reqs
        .iter()
        .filter(|r| !is_robots(r) && !hops.contains(&r.path))
    {
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

    #[test]
    fn in_flight_and_nofollow_are_counted_with_examples() {
        let requests = [
            seen("a.test", "/robots.txt", 0),
            seen("a.test", "/", 1_000),
            seen("a.test", "/never", 4_000),
            seen("b.test", "/robots.txt", 0),
        ];
        let expect = |h: &str| Expect {
            nofollow: if h == "a.test" {
                vec!["/never".into()]
            } else {
                Vec::new()
            },
            ..Expect::default()
        };
        let r = judge(&requests, expect, |h| usize::from(h == "b.test") + 1);
        assert_eq!((r.requests, r.pages, r.distinct_pages), (4, 2, 2));
        assert_eq!((r.concurrent, r.nofollow, r.violations()), (1, 1, 2));
        assert_eq!(r.examples.len(), 2, "{:?}", r.examples);
        // A robots.txt redirect's target is robots.txt, not a page.
        let hops = [
            seen("c.test", "/robots.txt", 0),
            seen("c.test", "/real-robots.txt", 10),
            seen("c.test", "/", 1_000),
        ];
        let expect = |_: &str| Expect {
            robots_hops: vec!["/real-robots.txt".into()],
            ..Expect::default()
        };
        let r = judge(&hops, expect, |_| 1);
        assert_eq!((r.requests, r.pages), (3, 1));
    }

    #[test]
    fn refetches_keep_their_shortest_gap_and_are_no_violation() {
        let requests = [
            seen("a.test", "/robots.txt", 0),
            seen("a.test", "/p", 1_000),
            seen("a.test", "/p", 5_000),
            seen("a.test", "/p", 7_000),
        ];
        let r = judge(&requests, |_| Expect::default(), |_| 1);
        assert_eq!(r.refetched.get("a.test /p"), Some(&2_000));
        assert_eq!(r.distinct_pages, 1);
        assert_eq!(r.violations(), 0);
    }

    #[test]
    fn examples_stay_bounded() {
        let requests: Vec<Seen> = (0..100)
            .map(|i| seen(&format!("h{i}.test"), "/", i))
            .collect();
        let r = judge(&requests, |_| Expect::default(), |_| 2);
        assert_eq!(r.concurrent, 100);
        assert_eq!(r.examples.len(), MAX_SERVER_EXAMPLES);
    }
}
