//! The three kinds of metric, each safe to update from any thread without
//! a lock: counters and gauges are one atomic, a histogram one atomic per
//! bucket plus its sum (an `f64` kept as bits, added by compare-exchange).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// A count that only goes up.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// Adds one.
    pub fn inc(&self) {
        self.add(1);
    }

    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// The count.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A value that goes up and down.
#[derive(Debug, Default)]
pub struct Gauge(AtomicI64);

impl Gauge {
    /// Sets it.
    pub fn set(&self, v: i64) {
        self.0.store(v, Ordering::Relaxed);
    }

    /// Adds `d` (negative to take away).
    pub fn add(&self, d: i64) {
        self.0.fetch_add(d, Ordering::Relaxed);
    }

    /// The value.
    pub fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Observations counted into fixed buckets (upper bounds, ascending), with
/// their sum and count.
#[derive(Debug)]
pub struct Histogram {
    bounds: &'static [f64],
    /// Per bucket, not cumulative; the last is +Inf.
    counts: Vec<AtomicU64>,
    sum: AtomicU64,
}

impl Histogram {
    /// A histogram over `bounds` (ascending upper bounds; +Inf is added).
    pub fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0f64.to_bits()),
        }
    }

    /// Counts one observation (NaN is ignored).
    pub fn observe(&self, v: f64) {
        if v.is_nan() {
            return;
        }
        let i = self.bounds.partition_point(|b| *b < v);
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        let mut old = self.sum.load(Ordering::Relaxed);
        loop {
            let new = (f64::from_bits(old) + v).to_bits();
            match self
                .sum
                .compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => old = now,
            }
        }
    }

    /// The upper bounds (without +Inf).
    pub fn bounds(&self) -> &'static [f64] {
        self.bounds
    }

    /// Cumulative counts per bound, +Inf last (its value is the count).
    pub fn cumulative(&self) -> Vec<u64> {
        let mut total = 0;
        self.counts
            .iter()
            .map(|c| {
                total += c.load(Ordering::Relaxed);
                total
            })
            .collect()
    }

    /// The sum of the observations.
    pub fn sum(&self) -> f64 {
        f64::from_bits(self.sum.load(Ordering::Relaxed))
    }

    /// How many observations.
    pub fn count(&self) -> u64 {
        self.cumulative().last().copied().unwrap_or(0)
    }
}

/// Seconds, for durations: 1 ms to a minute.
pub const SECONDS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_upper_bounds_inclusive_and_cumulative() {
        let h = Histogram::new(&[0.1, 1.0]);
        for v in [0.05, 0.1, 0.5, 1.0, 7.0, f64::NAN] {
            h.observe(v);
        }
        assert_eq!(h.cumulative(), vec![2, 4, 5]);
        assert_eq!(h.count(), 5);
        assert!((h.sum() - 8.65).abs() < 1e-9);
    }
}
