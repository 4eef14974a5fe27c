//! The Bloom filter in front of an on-disk seen-set, sized to what the
//! crawl has seen: it starts small and, once it holds as many URLs as it
//! was sized for, is rebuilt four times larger from the store's seen
//! fingerprints, up to [`FrontierConfig::expected_urls`].
//!
//! A filter sized for the most a crawl may see costs its full size as soon
//! as a few thousand URLs have touched every page of it (2.4 MiB for 2
//! million URLs, most of a small crawl's heap). The filter only spares
//! store reads: an answer never depends on it, so one that could not be
//! rebuilt is dropped and every lookup asks the store.
//!
//! [`FrontierConfig::expected_urls`]: crate::frontier::FrontierConfig::expected_urls

use fastbloom::BloomFilter;

use crate::frontier::summary::BLOOM_SEED;
use crate::frontier::FrontierError;
use crate::store::Store;

/// URLs a new filter is sized for (about 78 KiB at 1 % false positives).
pub(super) const FIRST_CAPACITY: u64 = 65_536;

/// Bits per URL at 1 % false positives (−ln 0.01 / ln² 2).
const BITS_PER_ITEM: f64 = 9.585;

/// The filter, how many URLs it holds and how many it was sized for.
pub(super) struct SeenFilter {
    bloom: BloomFilter,
    items: u64,
    capacity: u64,
    max: u64,
}

impl SeenFilter {
    /// An empty filter for `capacity` URLs (at least the first size, at
    /// most `max`).
    pub(super) fn new(capacity: u64, max: u64) -> SeenFilter {
        let max = max.max(FIRST_CAPACITY);
        let capacity = capacity.clamp(FIRST_CAPACITY, max);
        let bloom = BloomFilter::with_false_pos(0.01)
            .seed(&BLOOM_SEED)
            .expected_items(usize::try_from(capacity).unwrap_or(usize::MAX));
        SeenFilter {
            bloom,
            items: 0,
            capacity,
            max,
        }
    }

    /// A filter saved in a summary (`hashes`, `words`). How many URLs it
    /// holds is not saved: taken as half what its size was made for.
    pub(super) fn restored(hashes: u32, words: Vec<u64>, max: u64) -> SeenFilter {
        let bits = words.len() as f64 * 64.0;
        let capacity = ((bits / BITS_PER_ITEM) as u64).max(1);
        let bloom = BloomFilter::from_vec(words)
            .seed(&BLOOM_SEED)
            .hashes(hashes);
        SeenFilter {
            bloom,
            items: capacity / 2,
            capacity,
            max: max.max(capacity),
        }
    }

    /// Whether `fp` may have been seen (never a false "no").
    pub(super) fn contains(&self, fp: &u128) -> bool {
        self.bloom.contains(fp)
    }

    /// Adds `fp`; true when the filter now holds more than it was sized
    /// for and may grow ([`larger`](Self::larger)).
    pub(super) fn insert(&mut self, fp: &u128) -> bool {
        self.bloom.insert(fp);
        self.items += 1;
        self.items > self.capacity && self.capacity < self.max
    }

    /// This filter with every fingerprint `store` has seen added, those
    /// committed and those still pending in its batch.
    pub(super) fn filled_from(mut self, store: &Store) -> Result<SeenFilter, FrontierError> {
        store.scan_seen(|fp| {
            self.insert(&fp);
        })?;
        for fp in store.pending_seen() {
            self.insert(fp);
        }
        Ok(self)
    }

    /// An empty filter four times this one's size (at most the maximum),
    /// to be filled from the store.
    pub(super) fn larger(&self) -> SeenFilter {
        SeenFilter::new(self.capacity.saturating_mul(4), self.max)
    }

    /// What a summary saves of it: the hash count and the bits.
    pub(super) fn saved(&self) -> (u32, Vec<u64>) {
        (self.bloom.num_hashes(), self.bloom.as_slice().to_vec())
    }

    /// The filter's memory, in bytes.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.bloom.as_slice().len() * 8
    }

    /// The URLs it was sized for.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> u64 {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_filter_is_small_and_asks_to_grow_once_full() {
        let mut f = SeenFilter::new(0, 2_000_000);
        assert_eq!(f.capacity(), FIRST_CAPACITY);
        assert!(f.bytes() < 100 << 10, "{} bytes", f.bytes());
        let full = (0..=FIRST_CAPACITY as u128).map(|i| f.insert(&i)).last();
        assert_eq!(full, Some(true));
        assert!((0..=FIRST_CAPACITY as u128).all(|i| f.contains(&i)));
        let g = f.larger();
        assert_eq!(g.capacity(), 4 * FIRST_CAPACITY);
    }

    #[test]
    fn growth_stops_at_the_maximum() {
        let mut f = SeenFilter::new(100_000, 100_000);
        assert_eq!(f.capacity(), 100_000);
        assert!(!(0..200_000u128).any(|i| f.insert(&i)));
        assert_eq!(f.larger().capacity(), 100_000);
    }

    #[test]
    fn a_saved_filter_answers_as_before() {
        let mut f = SeenFilter::new(0, 1_000_000);
        for i in 0..1_000u128 {
            f.insert(&(i * 7919));
        }
        let (hashes, words) = f.saved();
        let r = SeenFilter::restored(hashes, words, 1_000_000);
        assert!((0..1_000u128).all(|i| r.contains(&(i * 7919))));
        // Its size says about what it was made for (fastbloom rounds the
        // bits up to whole blocks).
        let ratio = r.capacity() as f64 / f.capacity() as f64;
        assert!((0.9..1.2).contains(&ratio), "{ratio}");
    }
}
