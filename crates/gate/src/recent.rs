//! A map that keeps at most a fixed number of entries, forgetting the
//! least recently used generation: entries live in a young map until it
//! fills, then the young map becomes the old one and the old one is
//! dropped. A lookup that finds an entry in the old map brings it back.
//! Memory is bounded by the cap whatever the keys (a million distinct
//! addresses cost no more than the cap), and every operation is O(1).

use std::collections::HashMap;
use std::hash::Hash;

/// A bounded map that forgets what was not used lately.
#[derive(Debug)]
pub struct Recent<K, V> {
    young: HashMap<K, V>,
    old: HashMap<K, V>,
    half: usize,
}

impl<K: Hash + Eq + Clone, V> Recent<K, V> {
    /// A map of at most `cap` entries (at least 2).
    pub fn new(cap: usize) -> Self {
        Recent {
            young: HashMap::new(),
            old: HashMap::new(),
            half: (cap / 2).max(1),
        }
    }

    /// The entry for `key`, if it is still remembered.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        if !self.young.contains_key(key) {
            let v = self.old.remove(key)?;
            self.make_room();
            self.young.insert(key.clone(), v);
        }
        self.young.get_mut(key)
    }

    /// The entry for `key`, made with `make` when it is not remembered.
    pub fn entry(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        if self.young.contains_key(&key) {
            return self.young.entry(key).or_insert_with(make);
        }
        let v = self.old.remove(&key).unwrap_or_else(make);
        self.make_room();
        self.young.entry(key).or_insert(v)
    }

    /// Remembers `value` under `key`.
    pub fn insert(&mut self, key: K, value: V) {
        if !self.young.contains_key(&key) {
            self.old.remove(&key);
            self.make_room();
        }
        self.young.insert(key, value);
    }

    /// Entries remembered (at most the cap).
    pub fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn make_room(&mut self) {
        if self.young.len() >= self.half {
            self.old = std::mem::take(&mut self.young);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_million_keys_never_hold_more_than_the_cap_and_recent_ones_stay() {
        let mut m = Recent::new(1000);
        for i in 0..1_000_000u32 {
            *m.entry(i, || 0) += 1;
            *m.entry(7, || 0) += 1;
            assert!(m.len() <= 1000);
        }
        assert_eq!(m.get_mut(&7), Some(&mut 1_000_001), "counted on every step");
        assert_eq!(m.get_mut(&3), None, "long unused: forgotten");
        assert!(m.get_mut(&999_999).is_some());
    }
}
