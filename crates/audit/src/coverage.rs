//! How much of its time a log covers: the holes in it (a sampled log that
//! keeps one minute an hour, a gap between rotated files), found from the
//! gaps between all its requests, so verdicts that a hole could hide are
//! withheld and the report says how much it covers.

use serde::Serialize;

/// A gap is a hole when it is longer than this many times the log's
/// median gap...
const HOLE_TIMES_MEDIAN: i64 = 64;
/// ...and longer than this (so a busy log's quiet minute is not one).
const HOLE_AT_LEAST_MS: i64 = 10 * 60 * 1000;
/// Until this many gaps are known, a hole is a gap over an hour.
const GAPS_BEFORE_MEDIAN: u64 = 50;
const HOLE_EARLY_MS: i64 = 3600 * 1000;
const BUCKETS: usize = 48;
/// How often the median is taken again, in gaps.
const RECOUNT: u64 = 64;

/// The log's holes, found in time order.
#[derive(Debug, Clone)]
pub(crate) struct Holes {
    /// The first and the latest request taken in time order: the span
    /// the holes are measured in (a request later than the reorder window
    /// lets through is outside it, and may lie before `first`).
    first: Option<i64>,
    last: Option<i64>,
    gaps: [u64; BUCKETS],
    count: u64,
    /// The hole threshold, recomputed every `RECOUNT` gaps.
    threshold_ms: i64,
    /// When the latest hole ended: the log is whole since then.
    pub whole_since: i64,
    holes: u64,
    missing_ms: i64,
    longest_ms: i64,
}

/// What a report says of the log's coverage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Coverage {
    /// Holes found (gaps the log's own pace says are missing lines).
    pub holes: u64,
    /// Seconds from the first request to the last, taken in time order.
    pub span_seconds: f64,
    /// Seconds of that span inside holes.
    pub missing_seconds: f64,
    /// The longest hole, in seconds.
    pub longest_hole_seconds: f64,
}

impl Coverage {
    /// The share of the span the log covers, from 0 to 1.
    pub fn covered(&self) -> f64 {
        if self.span_seconds <= 0.0 {
            1.0
        } else {
            1.0 - self.missing_seconds / self.span_seconds
        }
    }
}

impl Holes {
    /// Holes of a log whose coverage is known from `whole_since` (the
    /// first request, or the beginning of time when the log starts with
    /// the site).
    pub(crate) fn new(whole_since: i64) -> Holes {
        Holes {
            first: None,
            last: None,
            gaps: [0; BUCKETS],
            count: 0,
            threshold_ms: HOLE_EARLY_MS,
            whole_since,
            holes: 0,
            missing_ms: 0,
            longest_ms: 0,
        }
    }

    /// Takes the next request's time (in time order; a late one is
    /// ignored).
    pub(crate) fn step(&mut self, millis: i64) {
        let Some(last) = self.last else {
            self.first = Some(millis);
            self.last = Some(millis);
            return;
        };
        if millis <= last {
            return;
        }
        let gap = millis - last;
        self.last = Some(millis);
        if gap > self.threshold_ms {
            self.holes += 1;
            self.missing_ms += gap;
            self.longest_ms = self.longest_ms.max(gap);
            self.whole_since = self.whole_since.max(millis);
            return;
        }
        let bucket = crate::histogram::bucket(gap, BUCKETS);
        self.gaps[bucket] += 1;
        self.count += 1;
        if self.count.is_multiple_of(RECOUNT) || self.count == GAPS_BEFORE_MEDIAN {
            self.threshold_ms = self.threshold();
        }
    }

    fn threshold(&self) -> i64 {
        if self.count < GAPS_BEFORE_MEDIAN {
            return HOLE_EARLY_MS;
        }
        let median = match crate::histogram::median_bucket(&self.gaps) {
            Some(b) if b > 0 => 1i64 << b,
            _ => 0,
        };
        (median * HOLE_TIMES_MEDIAN).max(HOLE_AT_LEAST_MS)
    }

    /// The coverage of the requests taken so far.
    pub(crate) fn coverage(&self) -> Coverage {
        let span_ms = match (self.first, self.last) {
            (Some(first), Some(last)) => last - first,
            _ => 0,
        };
        Coverage {
            holes: self.holes,
            span_seconds: span_ms as f64 / 1000.0,
            missing_seconds: self.missing_ms as f64 / 1000.0,
            longest_hole_seconds: self.longest_ms as f64 / 1000.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampled_log_has_a_hole_each_hour_and_a_busy_quiet_minute_is_none() {
        let mut h = Holes::new(0);
        // One minute an hour, a request a second, for five hours.
        for hour in 0..5i64 {
            for s in 0..60i64 {
                h.step(hour * 3_600_000 + s * 1000);
            }
        }
        let c = h.coverage();
        assert_eq!(c.span_seconds, (4 * 3_600 + 59) as f64);
        assert_eq!(c.holes, 4);
        assert!(c.covered() < 0.05, "{c:?}");
        assert_eq!(h.whole_since, 4 * 3_600_000);
        // A steady log with one quiet five minutes has no hole.
        let mut h = Holes::new(0);
        for s in 0..600i64 {
            h.step(s * 1000);
        }
        h.step(900_000);
        assert_eq!(h.coverage().holes, 0);
    }
}
