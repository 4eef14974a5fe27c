//! The cache's recency order, kept lazily.
//!
//! A use only stamps its entry with a fresh tick; the order is a map from
//! tick to key that is put right only when something must be evicted. An
//! order entry whose tick is older than its key's stamp is stale: eviction
//! files it again under the stamp instead of evicting it. A lookup, the
//! common case by far, is one hash probe and no reordering.
//!
//! Invariant: every key in `map` has exactly one order entry, filed under
//! a tick no later than its stamp; ticks are never reused.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

struct Entry<V> {
    value: V,
    stamp: u64,
    bytes: usize,
}

/// Entries by key, with the bytes each is charged and their recency.
pub(super) struct Lru<K, V> {
    /// Looked up on every check (foldhash, seeded per table: origins come
    /// from the crawled web, and no hash leaves the process).
    map: HashMap<K, Entry<V>, foldhash::fast::RandomState>,
    order: BTreeMap<u64, K>,
    tick: u64,
    bytes: usize,
}

impl<K, V> Default for Lru<K, V> {
    fn default() -> Self {
        Lru {
            map: HashMap::default(),
            order: BTreeMap::new(),
            tick: 0,
            bytes: 0,
        }
    }
}

impl<K: Eq + Hash + Clone, V: Clone> Lru<K, V> {
    /// Entries held.
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// The bytes charged to all entries.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The entry's value, marked as the most recently used.
    pub(super) fn touch(&mut self, key: &K) -> Option<V> {
        self.tick += 1;
        let entry = self.map.get_mut(key)?;
        entry.stamp = self.tick;
        Some(entry.value.clone())
    }

    /// Adds a new entry as the most recently used, charged nothing yet.
    /// An entry already under `key` is replaced (its order entry stays and
    /// is re-filed under the new stamp).
    pub(super) fn insert(&mut self, key: K, value: V) {
        self.tick += 1;
        let stamp = self.tick;
        let entry = Entry {
            value,
            stamp,
            bytes: 0,
        };
        match self.map.insert(key.clone(), entry) {
            Some(old) => self.bytes = self.bytes.saturating_sub(old.bytes),
            None => {
                self.order.insert(stamp, key);
            }
        }
    }

    /// Charges the entry `bytes` in place of what it was charged before.
    pub(super) fn set_bytes(&mut self, key: &K, bytes: usize) {
        if let Some(entry) = self.map.get_mut(key) {
            self.bytes = self.bytes.saturating_sub(entry.bytes) + bytes;
            entry.bytes = bytes;
        }
    }

    /// Evicts the least recently used entries other than `keep` while
    /// `over` says the cache (entries, bytes) is over its bounds.
    pub(super) fn evict(&mut self, keep: &K, over: impl Fn(usize, usize) -> bool) {
        while over(self.map.len(), self.bytes) {
            let Some((tick, key)) = self.order.pop_first() else {
                break;
            };
            let Some(entry) = self.map.get(&key) else {
                continue;
            };
            if entry.stamp > tick {
                // Used since it was filed: file it under its last use.
                self.order.insert(entry.stamp, key);
                continue;
            }
            if key == *keep {
                // The oldest is the one to keep: it is the only entry.
                self.order.insert(tick, key);
                break;
            }
            if let Some(gone) = self.map.remove(&key) {
                self.bytes = self.bytes.saturating_sub(gone.bytes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn keys(lru: &Lru<u8, u8>) -> Vec<u8> {
        let mut k: Vec<u8> = lru.map.keys().copied().collect();
        k.sort_unstable();
        k
    }

    #[test]
    fn a_touched_entry_outlives_an_older_untouched_one() {
        let mut lru = Lru::default();
        lru.insert(1u8, 10u8);
        lru.insert(2, 20);
        lru.insert(3, 30);
        assert_eq!(lru.touch(&1), Some(10));
        lru.insert(4, 40);
        lru.evict(&4, |n, _| n > 3);
        assert_eq!(keys(&lru), vec![1, 3, 4]);
        lru.evict(&4, |n, _| n > 1);
        assert_eq!(keys(&lru), vec![4]);
    }

    #[test]
    fn bytes_follow_charges_and_evictions() {
        let mut lru = Lru::default();
        lru.insert(1u8, 0u8);
        lru.insert(2, 0);
        lru.set_bytes(&1, 700);
        lru.set_bytes(&2, 500);
        lru.set_bytes(&2, 300);
        assert_eq!(lru.bytes(), 1000);
        lru.evict(&2, |n, b| b > 500 && n > 1);
        assert_eq!((lru.len(), lru.bytes()), (1, 300));
        // The one to keep stays even when it alone is over the bound.
        lru.evict(&2, |_, b| b > 100);
        assert_eq!((lru.len(), lru.bytes()), (1, 300));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Use(u8),
        Charge(u8, u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..12).prop_map(Op::Use),
            (0u8..12, 0u16..400).prop_map(|(k, b)| Op::Charge(k, b)),
        ]
    }

    proptest! {
        /// Against a plain list kept in order of use: the same entries
        /// survive under any sequence of uses, charges and evictions.
        #[test]
        fn evicts_as_a_strict_recency_list_would(
            ops in proptest::collection::vec(op(), 0..200),
            max_entries in 1usize..6,
            max_bytes in 0usize..1200,
        ) {
            let mut lru: Lru<u8, u8> = Lru::default();
            let mut model: Vec<(u8, usize)> = Vec::new(); // oldest first
            let over = |n: usize, b: usize| n > max_entries || (b > max_bytes && n > 1);
            for op in ops {
                let key = match op { Op::Use(k) | Op::Charge(k, _) => k };
                if lru.touch(&key).is_none() {
                    lru.insert(key, key);
                }
                let pos = model.iter().position(|(k, _)| *k == key);
                let charged = pos.map_or(0, |p| model.remove(p).1);
                model.push((key, charged));
                if let Op::Charge(_, b) = op {
                    lru.set_bytes(&key, b as usize);
                    if let Some(last) = model.last_mut() { last.1 = b as usize; }
                }
                lru.evict(&key, over);
                while over(model.len(), model.iter().map(|e| e.1).sum()) && model.len() > 1 {
                    model.remove(0);
                }
                let mut want: Vec<u8> = model.iter().map(|e| e.0).collect();
                want.sort_unstable();
                prop_assert_eq!(keys(&lru), want);
                prop_assert_eq!(lru.bytes(), model.iter().map(|e| e.1).sum::<usize>());
                prop_assert_eq!(lru.order.len(), lru.map.len());
            }
        }
    }
}
