//! A key's window of queued URLs, in sort order.
//!
//! Most keys hold a few URLs here (on disk, at most
//! [`FrontierConfig::window`](crate::frontier::FrontierConfig::window), 8 by
//! default; a seeded host waiting for its turn holds one). A `BTreeMap`
//! allocates a whole node of eleven entries for the first, some 380 bytes,
//! so a crawl of 100,000 seeded hosts spent about 36 MiB on nodes mostly
//! empty. A window of up to [`SMALL`] URLs is a sorted vector sized to
//! what it holds (40 bytes an entry); past that (a key with many URLs in
//! a frontier held in memory) it becomes a `BTreeMap`, for logarithmic
//! inserts and removals.

use std::collections::BTreeMap;

use crate::store::Sort;

use super::Queued;

/// The most URLs a window holds as a sorted vector.
pub(super) const SMALL: usize = 16;

#[derive(Debug)]
pub(super) enum Window {
    Small(Vec<(Sort, Queued)>),
    Big(BTreeMap<Sort, Queued>),
}

impl Default for Window {
    fn default() -> Window {
        Window::Small(Vec::new())
    }
}

impl Window {
    /// Puts `q` at `sort` (replacing what was there).
    pub(super) fn insert(&mut self, sort: Sort, q: Queued) {
        match self {
            Window::Small(v) => match v.binary_search_by(|(s, _)| s.cmp(&sort)) {
                Ok(i) => v[i].1 = q,
                Err(i) if v.len() < SMALL => {
                    if v.len() == v.capacity() {
                        // 1, 2, 4, 8, 16 entries: a lone URL costs one.
                        v.reserve_exact(v.len().max(1));
                    }
                    v.insert(i, (sort, q));
                }
                Err(_) => {
                    let mut map: BTreeMap<Sort, Queued> = std::mem::take(v).into_iter().collect();
                    map.insert(sort, q);
                    *self = Window::Big(map);
                }
            },
            Window::Big(m) => {
                m.insert(sort, q);
            }
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Window::Small(v) => v.len(),
            Window::Big(m) => m.len(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first entry.
    pub(super) fn first(&self) -> Option<(&Sort, &Queued)> {
        match self {
            Window::Small(v) => v.first().map(|(s, q)| (s, q)),
            Window::Big(m) => m.first_key_value(),
        }
    }

    /// The first entry's place.
    pub(super) fn first_key(&self) -> Option<&Sort> {
        self.first().map(|(s, _)| s)
    }

    /// The last entry's place.
    pub(super) fn last_key(&self) -> Option<&Sort> {
        match self {
            Window::Small(v) => v.last().map(|(s, _)| s),
            Window::Big(m) => m.last_key_value().map(|(s, _)| s),
        }
    }

    /// The URLs, in order.
    pub(super) fn values(&self) -> impl Iterator<Item = &Queued> {
        let (small, big) = match self {
            Window::Small(v) => (v.as_slice(), None),
            Window::Big(m) => (&[][..], Some(m)),
        };
        small
            .iter()
            .map(|(_, q)| q)
            .chain(big.into_iter().flat_map(|m| m.values()))
    }

    pub(super) fn pop_first(&mut self) -> Option<(Sort, Queued)> {
        match self {
            Window::Small(v) if v.is_empty() => None,
            Window::Small(v) => Some(v.remove(0)),
            Window::Big(m) => m.pop_first(),
        }
    }

    pub(super) fn pop_last(&mut self) -> Option<(Sort, Queued)> {
        match self {
            Window::Small(v) => v.pop(),
            Window::Big(m) => m.pop_last(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::{Queued, Window, SMALL};
    use crate::store::Sort;

    fn sort(n: u8) -> Sort {
        let mut s = [0; 9];
        s[8] = n;
        s
    }

    fn queued(tag: u32) -> Queued {
        Queued {
            tag,
            url: format!("https://a.test/{tag}").into(),
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u32),
        PopFirst,
        PopLast,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u8..40, any::<u32>()).prop_map(|(s, t)| Op::Insert(s, t)),
            1 => Just(Op::PopFirst),
            1 => Just(Op::PopLast),
        ]
    }

    fn seen(w: &Window) -> Vec<(Sort, u32)> {
        let keys: Vec<Sort> = match w {
            Window::Small(v) => v.iter().map(|(s, _)| *s).collect(),
            Window::Big(m) => m.keys().copied().collect(),
        };
        keys.into_iter().zip(w.values().map(|q| q.tag)).collect()
    }

    proptest! {
        /// Whatever is done to it, a window holds what a `BTreeMap` given
        /// the same operations holds, in the same order.
        #[test]
        fn a_window_agrees_with_a_btreemap(ops in proptest::collection::vec(op(), 0..200)) {
            let mut w = Window::default();
            let mut m: BTreeMap<Sort, u32> = BTreeMap::new();
            for o in ops {
                match o {
                    Op::Insert(s, t) => {
                        w.insert(sort(s), queued(t));
                        m.insert(sort(s), t);
                    }
                    Op::PopFirst => {
                        let got = w.pop_first().map(|(s, q)| (s, q.tag));
                        prop_assert_eq!(got, m.pop_first());
                    }
                    Op::PopLast => {
                        let got = w.pop_last().map(|(s, q)| (s, q.tag));
                        prop_assert_eq!(got, m.pop_last());
                    }
                }
                let want: Vec<(Sort, u32)> = m.iter().map(|(s, t)| (*s, *t)).collect();
                prop_assert_eq!(seen(&w), want);
                prop_assert_eq!(w.len(), m.len());
                prop_assert_eq!(w.is_empty(), m.is_empty());
                prop_assert_eq!(w.first().map(|(s, q)| (*s, q.tag)), m.first_key_value().map(|(s, t)| (*s, *t)));
                prop_assert_eq!(w.first_key(), m.first_key_value().map(|(s, _)| s));
                prop_assert_eq!(w.last_key(), m.last_key_value().map(|(s, _)| s));
            }
        }
    }

    #[test]
    fn a_lone_url_takes_room_for_one_and_many_take_a_tree() {
        let mut w = Window::default();
        w.insert(sort(1), queued(1));
        match &w {
            Window::Small(v) => assert_eq!(v.capacity(), 1),
            Window::Big(_) => panic!("one URL is a small window"),
        }
        for n in 2..=SMALL as u8 {
            w.insert(sort(n), queued(n.into()));
        }
        assert!(matches!(w, Window::Small(_)), "{SMALL} still fit");
        w.insert(sort(0), queued(0));
        assert!(matches!(w, Window::Big(_)), "one more makes a tree");
        assert_eq!(w.first().map(|(_, q)| q.tag), Some(0));
        assert_eq!(w.len(), SMALL + 1);
    }
}
