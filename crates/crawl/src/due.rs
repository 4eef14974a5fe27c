//! When a page is due for a revisit: its change rate estimated from its
//! visits, then the chance it has changed since the last one.
//!
//! A crawler sees only whether a page changed between two visits, not how
//! often: a page that changed three times between visits looks like one
//! that changed once. Cho and Garcia-Molina's estimator ("Estimating
//! frequency of change", 2003) corrects for that. With `n` intervals
//! between visits, `x` of them showing a change, and `t` their mean
//! length, the rate is `λ = -ln((n - x + 0.5) / (n + 0.5)) / t`; the
//! `0.5`s keep it finite when every interval shows a change and make it
//! nearly unbiased. With irregular intervals, the mean interval stands in
//! for the regular one. A page changes as a Poisson process, so the chance
//! it has changed `e` after its last visit is `1 - exp(-λ e)`.

/// The estimated changes per millisecond, from `(when, changed)` visits in
/// order (the first visit's flag is not a change: nothing came before it).
/// `None` with fewer than two visits.
pub fn change_rate(visits: &[(u64, bool)]) -> Option<f64> {
    let (first, last) = (visits.first()?.0, visits.last()?.0);
    let n = visits.len().checked_sub(1).filter(|n| *n > 0)? as f64;
    let x = visits.iter().skip(1).filter(|(_, c)| *c).count() as f64;
    let mean = (last.saturating_sub(first) as f64 / n).max(1.0);
    Some(-((n - x + 0.5) / (n + 0.5)).ln() / mean)
}

/// The chance a page has changed at `now`: 1 when its rate is not known
/// yet (fewer than two visits).
pub fn change_probability(visits: &[(u64, bool)], now: u64) -> f64 {
    let (Some(rate), Some((last, _))) = (change_rate(visits), visits.last()) else {
        return 1.0;
    };
    let elapsed = now.saturating_sub(*last) as f64;
    1.0 - (-rate * elapsed).exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Visits every `interval` ms to a page that changes as a Poisson
    /// process at `rate` per ms (a seeded generator, so runs repeat).
    fn simulate(rate: f64, interval: u64, visits: usize, seed: u64) -> Vec<(u64, bool)> {
        let mut s = seed | 1;
        let mut uniform = || {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut next_change = -uniform().ln() / rate;
        let mut out = vec![(0, true)];
        for i in 1..visits as u64 {
            let t = (i * interval) as f64;
            let mut changed = false;
            while next_change <= t {
                changed = true;
                next_change += -uniform().ln() / rate;
            }
            out.push((i * interval, changed));
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        /// Over many visits the estimate converges to the true rate, even
        /// when several changes fall between two visits.
        #[test]
        fn the_estimate_converges_to_the_true_rate(
            per_interval in 0.05f64..1.5,
            seed in any::<u64>(),
        ) {
            let interval = 86_400_000u64;
            let rate = per_interval / interval as f64;
            let visits = simulate(rate, interval, 20_000, seed);
            let got = change_rate(&visits).expect("a rate");
            let error = (got - rate).abs() / rate;
            prop_assert!(error < 0.12, "estimated {got:e}, true {rate:e} ({:.1} % off)", error * 100.0);
        }
    }

    #[test]
    fn due_pages_are_the_likely_changed() {
        assert_eq!(change_probability(&[(0, true)], 10), 1.0);
        let day = 86_400_000;
        let often: Vec<(u64, bool)> = (0..10).map(|i| (i * day, true)).collect();
        let never: Vec<(u64, bool)> = (0..10).map(|i| (i * day, i == 0)).collect();
        let now = 10 * day;
        assert!(change_probability(&often, now) > 0.9);
        assert!(change_probability(&never, now) < 0.1);
    }
}
