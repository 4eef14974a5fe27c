//! One bot's requests to one host, taken in time order: gaps against the
//! Crawl-delay, Retry-After windows, robots.txt read first and available,
//! and the pace (peak per minute, median gap).

use std::collections::VecDeque;

use crate::report::{Counts, Violation};

/// A request as the ordered stage needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub millis: i64,
    pub precision_ms: u32,
    pub robots: bool,
    pub status: Option<u16>,
    /// Until when the site asked it to wait, when it answered 429 or 503,
    /// and how the audit knows.
    pub retry_until: Option<(i64, WindowSource)>,
    /// The Crawl-delay in force, in milliseconds (0: none).
    pub delay_ms: u64,
    /// A Crawl-delay in force that the bot's operator documents it does
    /// not read (0: none): gaps under it are counted, never charged.
    pub ignored_delay_ms: u64,
}

/// Where a Retry-After window's length came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WindowSource {
    /// The log records the Retry-After header.
    Logged,
    /// The crawler's own evidence recorded it.
    Evidence,
    /// Neither: the audit's `--retry-after` was assumed.
    Assumed,
}

/// A Retry-After window a 429 or 503 opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// When the answer that opened it was logged, and how precisely.
    pub from: i64,
    pub precision_ms: u32,
    /// The answer's status.
    pub status: u16,
    /// When it closes.
    pub until: i64,
    pub source: WindowSource,
}

impl Window {
    /// A request at `at` inside the window, in words: how long after the
    /// answer (to the log's precision), the wait it asked for (as given),
    /// and how the audit knows that wait.
    pub(crate) fn detail(&self, at: i64) -> String {
        let precision = self.precision_ms;
        let after = crate::words::seconds(at - self.from, precision);
        let wait = crate::words::exact_seconds(self.until - self.from);
        let status = self.status;
        match self.source {
            WindowSource::Logged => {
                format!("{after} after a {status} whose Retry-After asked for {wait}")
            }
            WindowSource::Evidence => format!(
                "{after} after a {status} whose Retry-After asked for {wait} (as the crawler's own evidence records)"
            ),
            WindowSource::Assumed => format!(
                "{after} after a {status}; the log does not record Retry-After, so a wait of {wait} is assumed (--retry-after)"
            ),
        }
    }
}

/// How long a robots.txt read stays good (RFC 9309 §2.4: a crawler
/// should not use a cached copy for more than 24 hours).
pub(crate) const ROBOTS_CACHE_MS: i64 = 24 * 3600 * 1000;

/// Gap histogram buckets: powers of two of milliseconds.
const BUCKETS: usize = 40;

#[derive(Debug, Clone, Default)]
pub(crate) struct Pace {
    last: Option<(i64, u32)>,
    /// When robots.txt was last read.
    robots_read: Option<i64>,
    robots_unavailable: bool,
    /// The Retry-After window the latest 429 or 503 opened.
    retry: Option<Window>,
    pub counts: Counts,
    pub delay_ms: u64,
    minute: VecDeque<i64>,
    pub peak_per_minute: u64,
    gaps: Option<Box<[u64; BUCKETS]>>,
}

/// What the whole log says to one bot's step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogState {
    /// Allowance on every gap and window.
    pub slack_ms: i64,
    /// Since when the log holds every request (see [`Pace::step`]).
    pub whole_since: i64,
    /// Another verified crawler of the same operator's latest robots.txt
    /// read of the host.
    pub shared_read: Option<i64>,
}

/// What judging a step found: the rules it broke and, for `too_soon`, the
/// gap; for a request inside a Retry-After window, the window.
pub(crate) struct Judged {
    pub broke: Vec<Violation>,
    pub gap_ms: Option<i64>,
    pub window: Option<Window>,
}

impl Pace {
    /// Judges the next request (in time order) and counts it.
    ///
    /// `log.whole_since` is when the log became whole (it began, or its
    /// latest hole ended): a gap or a Retry-After window that reaches back
    /// past it is not judged, and a page is blamed for a missing
    /// robots.txt read only when the log holds the whole 24 hours before
    /// it. `log.shared_read` is the latest robots.txt read of the host by
    /// another verified crawler of the same operator.
    pub(crate) fn step(&mut self, s: &Step, log: &LogState) -> Judged {
        let mut broke = Vec::new();
        let mut gap_ms = None;
        let whole = |t: i64| t >= log.whole_since;
        if let (Some((last, last_precision)), false) = (self.last, s.robots) {
            let gap = s.millis - last;
            gap_ms = Some(gap);
            let tolerance = i64::from(s.precision_ms.max(last_precision)) + log.slack_ms;
            if whole(last) && s.delay_ms > 0 && gap + tolerance <= s.delay_ms as i64 {
                broke.push(Violation::TooSoon);
            }
            if s.ignored_delay_ms > 0 && gap + tolerance <= s.ignored_delay_ms as i64 {
                self.counts.under_ignored_delay += 1;
            }
            self.gap(gap);
        }
        let mut window = None;
        if let Some(w) = self.retry {
            // Certainly after the answer that asked for the wait, and
            // certainly before the wait was over.
            let precision = i64::from(s.precision_ms.max(w.precision_ms));
            let tolerance = precision + log.slack_ms;
            if whole(w.from) && s.millis - w.from >= precision && s.millis + tolerance <= w.until {
                broke.push(Violation::IgnoredRetryAfter);
                let assumed = w.source == WindowSource::Assumed;
                self.counts.ignored_retry_after_assumed += u64::from(assumed);
                window = Some(w);
            }
        }
        let read_lately = self
            .robots_read
            .max(log.shared_read)
            .is_some_and(|t| s.millis - t <= ROBOTS_CACHE_MS);
        if s.robots {
            self.robots_read = Some(s.millis);
            self.robots_unavailable = matches!(s.status, Some(429 | 500..=599));
        } else if !read_lately && whole(s.millis.saturating_sub(ROBOTS_CACHE_MS)) {
            broke.push(Violation::BeforeRobots);
        } else if self.robots_unavailable {
            broke.push(Violation::WhileRobotsUnavailable);
        }
        if let (Some((until, source)), Some(status)) = (s.retry_until, s.status) {
            self.retry = Some(Window {
                from: s.millis,
                precision_ms: s.precision_ms,
                status,
                until,
                source,
            });
        }
        if !s.robots {
            self.last = Some((s.millis, s.precision_ms));
        }
        self.delay_ms = s.delay_ms.max(s.ignored_delay_ms);
        self.peak(s.millis);
        self.counts.requests += 1;
        if s.robots {
            self.counts.robots_fetches += 1;
        } else {
            self.counts.pages += 1;
        }
        for &rule in &broke {
            self.counts.count(rule);
        }
        self.counts.requests_breaking_rules += u64::from(!broke.is_empty());
        Judged {
            broke,
            gap_ms,
            window,
        }
    }

    fn peak(&mut self, millis: i64) {
        self.minute.push_back(millis);
        while self.minute.front().is_some_and(|&t| t <= millis - 60_000) {
            self.minute.pop_front();
        }
        self.peak_per_minute = self.peak_per_minute.max(self.minute.len() as u64);
    }

    fn gap(&mut self, gap: i64) {
        let bucket = crate::histogram::bucket(gap, BUCKETS);
        self.gaps.get_or_insert_with(|| Box::new([0; BUCKETS]))[bucket] += 1;
    }

    /// The median gap, in seconds, to the bucket's geometric middle.
    pub(crate) fn median_gap(&self) -> Option<f64> {
        let b = crate::histogram::median_bucket(self.gaps.as_deref()?)?;
        let (lo, hi) = if b == 0 {
            (0.0, 0.0)
        } else {
            ((1u64 << (b - 1)) as f64, ((1u64 << b) - 1) as f64)
        };
        Some(((lo * hi.max(1.0)).sqrt()).max(lo) / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(millis: i64, robots: bool, delay_ms: u64) -> Step {
        Step {
            millis,
            precision_ms: 1,
            robots,
            status: Some(200),
            retry_until: None,
            delay_ms,
            ignored_delay_ms: 0,
        }
    }

    const WHOLE: LogState = LogState {
        slack_ms: 0,
        whole_since: i64::MIN,
        shared_read: None,
    };

    #[test]
    fn gaps_and_robots() {
        let mut p = Pace::default();
        assert_eq!(
            p.step(&step(0, false, 0), &WHOLE).broke,
            vec![Violation::BeforeRobots]
        );
        // A robots.txt read is never too soon, and a page's gap is
        // measured from the page before it.
        assert!(p.step(&step(2000, true, 1000), &WHOLE).broke.is_empty());
        assert!(p.step(&step(2100, true, 1000), &WHOLE).broke.is_empty());
        assert!(p.step(&step(2500, false, 1000), &WHOLE).broke.is_empty());
        assert_eq!(
            p.step(&step(3000, false, 1000), &WHOLE).broke,
            vec![Violation::TooSoon]
        );
        assert!(p.step(&step(4000, false, 1000), &WHOLE).broke.is_empty());
        let mut s = step(5000, false, 1000);
        s.status = Some(429);
        s.retry_until = Some((64_600, WindowSource::Logged));
        assert!(p.step(&s, &WHOLE).broke.is_empty());
        let broke = p.step(&step(30_000, false, 1000), &WHOLE).broke;
        assert_eq!(broke, vec![Violation::IgnoredRetryAfter]);
        assert!(p.step(&step(64_600, false, 1000), &WHOLE).broke.is_empty());
        assert_eq!(p.counts.violations(), 3);
        assert_eq!(p.peak_per_minute, 8);
    }

    #[test]
    fn second_precision_forgives_a_second() {
        let mut p = Pace::default();
        let s = |m| Step {
            precision_ms: 1000,
            ..step(m, false, 2000)
        };
        p.step(&step(0, true, 2000), &WHOLE);
        p.step(&s(0), &WHOLE);
        // Logged 2 s apart: really between 1 and 3 s, so not proven short.
        assert!(p.step(&s(2000), &WHOLE).broke.is_empty());
        // Logged 1 s apart: really under 2 s, certainly short.
        assert_eq!(p.step(&s(3000), &WHOLE).broke, vec![Violation::TooSoon]);
    }
}
