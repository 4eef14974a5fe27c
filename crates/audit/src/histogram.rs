//! Gaps counted in powers of two of milliseconds: bucket `b` holds gaps
//! from 2^(b-1) to 2^b - 1 (bucket 0: none). The pace of a bot and the
//! holes of a log both keep one, and take its median the same way.

/// The bucket of a gap, in a histogram of `buckets` buckets (the last
/// takes every longer gap; a negative gap counts as none).
pub(crate) fn bucket(gap_ms: i64, buckets: usize) -> usize {
    let g = gap_ms.max(0) as u64;
    (64 - g.leading_zeros() as usize).min(buckets - 1)
}

/// The bucket that holds the median gap, if any gap was counted.
pub(crate) fn median_bucket(counts: &[u64]) -> Option<usize> {
    let total: u64 = counts.iter().sum();
    let mut seen = 0;
    counts.iter().position(|n| {
        seen += n;
        total > 0 && seen * 2 >= total
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two_and_the_median_is_the_middle_count() {
        assert_eq!(
            (bucket(0, 8), bucket(1, 8), bucket(3, 8), bucket(4, 8)),
            (0, 1, 2, 3)
        );
        assert_eq!((bucket(-5, 8), bucket(1 << 20, 8)), (0, 7));
        assert_eq!(median_bucket(&[0, 1, 1, 5]), Some(3));
        assert_eq!(median_bucket(&[2, 0, 2]), Some(0));
        assert_eq!(median_bucket(&[0, 0]), None);
    }
}
