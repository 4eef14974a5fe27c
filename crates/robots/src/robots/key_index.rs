//! A view's index keys (a literal prefix's first three bytes) to where
//! their rules are in the view's list: a small open-addressed table, at
//! most half full, so a check finds its key with one multiply and a
//! compare or two, and a view is built without a general hash map's
//! growth. Keys come from the file, which may be built to collide: each
//! table multiplies by its own random odd number, so no file can know
//! which keys share a slot.

use std::hash::BuildHasher;

/// Keys to `(start, end)` ranges.
#[derive(Debug, Clone, Default)]
pub(super) struct KeyIndex {
    /// A power of two of slots (none when no rule is indexed).
    slots: Vec<Slot>,
    /// How far a key's product is shifted to give its home slot.
    shift: u32,
    /// The table's odd multiplier, drawn at random when it is built.
    multiplier: u64,
}

/// A key (with [`TAKEN`] set; an empty slot is all zeros) and its range.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    tag: u32,
    start: u32,
    end: u32,
}

/// Marks a slot as holding a key: keys are three bytes, so the top bit is
/// free.
const TAKEN: u32 = 1 << 31;

impl KeyIndex {
    /// The index of `items` (each a key and what it indexes, in list
    /// order), and the items grouped by key, each group in the order its
    /// items came. Counted in a table sized for the items, then kept in
    /// one sized for the distinct keys (many rules often share a few
    /// keys), then placed: nothing grows.
    pub(super) fn build<T: Copy + Default>(items: &[(u32, T)]) -> (KeyIndex, Vec<T>) {
        if items.is_empty() {
            return (KeyIndex::default(), Vec::new());
        }
        let mut counts = KeyIndex::with_room(items.len());
        for (key, _) in items {
            counts.claim(*key).end += 1;
        }
        let counted = || counts.slots.iter().filter(|s| s.tag != 0);
        // Each key's start, and a cursor (from its start) that placing
        // moves to its end.
        let mut index = KeyIndex::with_room(counted().count());
        let mut next = 0;
        for count in counted() {
            let slot = index.claim(count.tag & !TAKEN);
            (slot.start, slot.end) = (next, next);
            next += count.end;
        }
        let mut grouped = vec![T::default(); items.len()];
        for (key, item) in items {
            let slot = index.claim(*key);
            if let Some(place) = grouped.get_mut(slot.end as usize) {
                *place = *item;
            }
            slot.end += 1;
        }
        (index, grouped)
    }

    /// An empty table for up to `keys` keys (at least one), at most half
    /// full, with its own multiplier.
    fn with_room(keys: usize) -> KeyIndex {
        let size = (keys.max(1) * 2).next_power_of_two();
        KeyIndex {
            slots: vec![Slot::default(); size],
            shift: 64 - size.trailing_zeros(),
            multiplier: std::collections::hash_map::RandomState::new().hash_one(size) | 1,
        }
    }

    /// Where `key`'s items are, if any rule has it.
    pub(super) fn get(&self, key: u32) -> Option<(u32, u32)> {
        let slot = self.slots.get(self.probe(key))?;
        (slot.tag == key | TAKEN).then_some((slot.start, slot.end))
    }

    /// `key`'s slot, taken if it was free (the table is never full).
    fn claim(&mut self, key: u32) -> &mut Slot {
        let i = self.probe(key);
        let slot = &mut self.slots[i];
        slot.tag = key | TAKEN;
        slot
    }

    /// Where `key` is, or the free slot where it would go: from its home
    /// slot on, the first that holds it or is empty (a table is at most
    /// half full, so one is). Past the end for a table without slots.
    fn probe(&self, key: u32) -> usize {
        let tag = key | TAKEN;
        let mask = self.slots.len().wrapping_sub(1);
        let mut i = self.home(key);
        while let Some(slot) = self.slots.get(i) {
            if slot.tag == tag || slot.tag == 0 {
                return i;
            }
            i = (i + 1) & mask;
        }
        i
    }

    /// The slot a key is looked for first: the top bits of its product
    /// with the table's multiplier (they depend on all of its bytes).
    fn home(&self, key: u32) -> usize {
        (u64::from(key).wrapping_mul(self.multiplier) >> self.shift) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every key's items are grouped together in the order they
        /// came, each range holds exactly that key's items, keys not
        /// given are not found, and the table is sized by the keys.
        #[test]
        fn ranges_hold_each_keys_items(
            keys in proptest::collection::vec(0u32..40, 0..120),
            absent in 40u32..(1 << 24),
        ) {
            let items: Vec<(u32, usize)> = keys.iter().copied().zip(0..).collect();
            let (index, grouped) = KeyIndex::build(&items);
            prop_assert_eq!(grouped.len(), keys.len());
            for &key in &keys {
                let (start, end) = index.get(key).expect("a given key is found");
                let want: Vec<usize> = items.iter().filter(|i| i.0 == key).map(|i| i.1).collect();
                prop_assert_eq!(&grouped[start as usize..end as usize], &want[..]);
            }
            prop_assert_eq!(index.get(absent), None);
            // Sized by the distinct keys, not the items.
            let mut distinct = keys.clone();
            distinct.sort_unstable();
            distinct.dedup();
            let room = (distinct.len() * 2).next_power_of_two();
            prop_assert!(index.slots.len() <= room.max(2), "{} slots", index.slots.len());
        }
    }
}
