//! The count of hosts that answered, kept without their names.

/// The hosts that answered, counted: each kept as a 64-bit keyed hash, not
/// its name (8 bytes a host in place of some 60; two of 100,000 hosts
/// share a hash with odds of about 3 in 10 billion, and the count is then
/// one short).
#[derive(Default)]
pub(crate) struct HostTally {
    seen: std::collections::HashSet<u64>,
    keys: std::hash::RandomState,
}

impl HostTally {
    /// Counts `host` (once, however often it answers).
    pub(crate) fn insert(&mut self, host: &str) {
        use std::hash::BuildHasher;
        self.seen.insert(self.keys.hash_one(host));
    }

    /// The hosts counted.
    pub(crate) fn len(&self) -> usize {
        self.seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::HostTally;

    #[test]
    fn a_host_that_answers_twice_counts_once() {
        let mut t = HostTally::default();
        for h in ["a.test", "b.test", "a.test", "A.test", "b.test"] {
            t.insert(h);
        }
        // Names are counted as given: the crawl's are already lower-case.
        assert_eq!(t.len(), 3);
        let mut many = HostTally::default();
        for i in 0..50_000 {
            many.insert(&format!("h{i}.test"));
            many.insert(&format!("h{i}.test"));
        }
        assert_eq!(many.len(), 50_000);
    }
}
