//! Counts over time in at most [`MAX_BUCKETS`] buckets, widened (two
//! merged into one) as the span grows, so a log of any length costs the
//! same.

use crate::report::Timeline;

/// Buckets kept, at most.
pub const MAX_BUCKETS: usize = 720;

const MINUTE: i64 = 60_000;

impl Timeline {
    /// Counts one request (and whether it broke a rule) at `millis`;
    /// requests come in time order (earlier ones land in the first bucket).
    pub(crate) fn add(&mut self, millis: i64, violations: u64) {
        if self.width == 0 {
            self.width = MINUTE;
            self.start = millis.div_euclid(MINUTE) * MINUTE;
        }
        let mut i = ((millis - self.start).max(0) / self.width) as usize;
        while i >= MAX_BUCKETS {
            self.widen();
            i = ((millis - self.start).max(0) / self.width) as usize;
        }
        if self.requests.len() <= i {
            self.requests.resize(i + 1, 0);
            self.violations.resize(i + 1, 0);
        }
        self.requests[i] += 1;
        self.violations[i] += violations;
    }

    fn widen(&mut self) {
        let merge = |v: &[u64]| v.chunks(2).map(|c| c.iter().sum()).collect::<Vec<u64>>();
        self.requests = merge(&self.requests);
        self.violations = merge(&self.violations);
        self.width *= 2;
    }

    /// The same counts in the buckets of `start` and `width` (coarser or
    /// equal), for charts that share an axis.
    pub fn rebucket(&self, start: i64, width: i64, len: usize) -> Timeline {
        let mut out = Timeline {
            start,
            width,
            requests: vec![0; len],
            violations: vec![0; len],
        };
        for (i, (r, v)) in self.requests.iter().zip(&self.violations).enumerate() {
            let t = self.start + i as i64 * self.width;
            let j = (((t - start).max(0)) / width.max(1)) as usize;
            if let Some(slot) = out.requests.get_mut(j) {
                *slot += r;
                out.violations[j] += v;
            }
        }
        out
    }

    /// When the last bucket ends.
    pub fn end(&self) -> i64 {
        self.start + self.requests.len() as i64 * self.width
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widens_and_keeps_every_count() {
        let mut t = Timeline::default();
        for m in 0..10_000 {
            t.add(m * MINUTE, u64::from(m % 7 == 0));
        }
        assert!(t.requests.len() <= MAX_BUCKETS);
        assert_eq!(t.requests.iter().sum::<u64>(), 10_000);
        assert_eq!(t.violations.iter().sum::<u64>(), 1429);
        let r = t.rebucket(t.start, t.width * 4, 200);
        assert_eq!(r.requests.iter().sum::<u64>(), 10_000);
    }
}
