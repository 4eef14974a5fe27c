//! Token buckets for `do = "slow"`, in memory bounded by [`Recent`]: a
//! bucket forgotten is one that was idle longest, and forgetting it gives
//! that client a full bucket, which is what a long idle would have given
//! it anyway unless it was idle for less than a refill.

use std::net::IpAddr;

use mannerly_time::UnixMillis;

use crate::recent::Recent;

/// Whose bucket: a rule (by index), the token (lower case), and the
/// address when the identity is not verified (a spoofer or an unknown bot
/// is held per address, so one cannot spend another's allowance).
pub type BucketKey = (usize, String, Option<IpAddr>);

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: UnixMillis,
}

/// The buckets of every slowed client.
#[derive(Debug)]
pub struct Buckets {
    map: Recent<BucketKey, Bucket>,
}

impl Buckets {
    /// At most `cap` buckets.
    pub fn new(cap: usize) -> Buckets {
        Buckets {
            map: Recent::new(cap),
        }
    }

    /// Takes one token at `now` from the bucket for `key`, filled at `rate`
    /// per second up to `burst`. `Err` holds the whole seconds until a
    /// token will be there (at least 1), for `Retry-After`.
    pub fn take(
        &mut self,
        key: BucketKey,
        rate: f64,
        burst: f64,
        now: UnixMillis,
    ) -> Result<(), u64> {
        let b = self.map.entry(key, || Bucket {
            tokens: burst,
            at: now,
        });
        let elapsed = now.0.saturating_sub(b.at.0) as f64 / 1000.0;
        b.tokens = (b.tokens + elapsed * rate).min(burst);
        b.at = UnixMillis(now.0.max(b.at.0));
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            return Ok(());
        }
        let wait = (1.0 - b.tokens) / rate;
        Err((wait.ceil() as u64).max(1))
    }

    /// Buckets held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(addr: Option<IpAddr>) -> BucketKey {
        (0, "greedybot".into(), addr)
    }

    #[test]
    fn two_a_second_lets_a_burst_through_then_says_when_to_come_back() {
        let mut b = Buckets::new(100);
        let t = UnixMillis(1_000_000);
        assert_eq!(b.take(key(None), 2.0, 2.0, t), Ok(()));
        assert_eq!(b.take(key(None), 2.0, 2.0, t), Ok(()));
        assert_eq!(b.take(key(None), 2.0, 2.0, t), Err(1));
        assert_eq!(b.take(key(None), 2.0, 2.0, UnixMillis(t.0 + 500)), Ok(()));
        let other = (1, "greedybot".to_owned(), None);
        assert_eq!(b.take(other.clone(), 0.1, 1.0, t), Ok(()));
        assert_eq!(b.take(other, 0.1, 1.0, t), Err(10));
    }

    proptest! {
        /// Over any span, a bucket lets through at most burst + rate × span.
        #[test]
        fn never_more_than_the_rate_allows(
            gaps in proptest::collection::vec(0u64..2_000, 1..300),
            rate in 0.5f64..20.0,
            burst in 1.0f64..10.0,
        ) {
            let mut b = Buckets::new(16);
            let mut now = 5_000u64;
            let start = now;
            let mut passed = 0u32;
            for g in gaps {
                now += g;
                if b.take(key(None), rate, burst, UnixMillis(now)).is_ok() {
                    passed += 1;
                }
            }
            let span = (now - start) as f64 / 1000.0;
            prop_assert!(f64::from(passed) <= burst + rate * span + 1e-9);
        }
    }
}
