//! Requests put back in time order. Logs are nearly in order, so most
//! arrive in order and wait in a queue (cheap); the few that arrive early
//! or late wait in a heap. Requests logged at the same instant are taken
//! in one canonical order, whatever file or position they came from, so a
//! log split into files gives the same audit as the whole.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Something with an instant, ordered canonically among its equals.
pub(crate) trait Timed: Ord {
    fn millis(&self) -> i64;
}

pub(crate) struct Reorder<T> {
    queue: VecDeque<T>,
    heap: BinaryHeap<Reverse<T>>,
    run: Vec<T>,
}

impl<T: Timed> Reorder<T> {
    pub(crate) fn new() -> Reorder<T> {
        Reorder {
            queue: VecDeque::new(),
            heap: BinaryHeap::new(),
            run: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, item: T) {
        match self.queue.back() {
            Some(last) if last.millis() > item.millis() => self.heap.push(Reverse(item)),
            _ => self.queue.push_back(item),
        }
    }

    fn earliest(&self) -> Option<i64> {
        let q = self.queue.front().map(Timed::millis);
        let h = self.heap.peek().map(|Reverse(t)| t.millis());
        match (q, h) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Takes every item at or before `watermark`, in order, into `out`.
    pub(crate) fn take_until(&mut self, watermark: i64, mut out: impl FnMut(T)) {
        while let Some(m) = self.earliest().filter(|m| *m <= watermark) {
            // The usual case: the queue's first item alone at its instant.
            let alone = self.queue.front().is_some_and(|t| t.millis() == m)
                && self.queue.get(1).is_none_or(|t| t.millis() != m)
                && self.heap.peek().is_none_or(|Reverse(t)| t.millis() != m);
            if alone {
                if let Some(t) = self.queue.pop_front() {
                    out(t);
                }
                continue;
            }
            while self.queue.front().is_some_and(|t| t.millis() == m) {
                self.run.extend(self.queue.pop_front());
            }
            while self.heap.peek().is_some_and(|Reverse(t)| t.millis() == m) {
                self.run.extend(self.heap.pop().map(|Reverse(t)| t));
            }
            self.run.sort_unstable();
            for t in self.run.drain(..) {
                out(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct At(i64, u8);

    impl Timed for At {
        fn millis(&self) -> i64 {
            self.0
        }
    }

    #[test]
    fn in_order_whatever_the_arrival() {
        let mut r = Reorder::new();
        for (m, k) in [(1, 2), (3, 0), (2, 9), (3, 1), (1, 1), (5, 0)] {
            r.push(At(m, k));
        }
        let mut got = Vec::new();
        r.take_until(3, |t| got.push((t.0, t.1)));
        assert_eq!(got, vec![(1, 1), (1, 2), (2, 9), (3, 0), (3, 1)]);
        r.take_until(i64::MAX, |t| got.push((t.0, t.1)));
        assert_eq!(got.last(), Some(&(5, 0)));
    }
}
