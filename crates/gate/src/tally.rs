//! Decisions counted by class and action, without a lock.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::class::Class;
use crate::decide::Verdict;

/// The actions, in the order they are counted.
pub const ACTIONS: [&str; 3] = ["allow", "deny", "slow"];

/// Decisions by class and action.
#[derive(Debug, Default)]
pub struct Tally {
    counts: [[AtomicU64; 3]; 4],
}

impl Tally {
    /// Counts one decision.
    pub fn count(&self, class: Class, verdict: Verdict) {
        self.counts[class as usize][action(verdict)].fetch_add(1, Ordering::Relaxed);
    }

    /// The decisions made so far for `class` and `action` (`allow`, `deny`, `slow`).
    pub fn get(&self, class: Class, action: &str) -> u64 {
        ACTIONS.iter().position(|a| *a == action).map_or(0, |i| {
            self.counts[class as usize][i].load(Ordering::Relaxed)
        })
    }

    /// Every (class, action, count), in a fixed order.
    pub fn all(&self) -> Vec<(Class, &'static str, u64)> {
        Class::ALL
            .iter()
            .flat_map(|c| ACTIONS.iter().map(move |a| (*c, *a, self.get(*c, a))))
            .collect()
    }
}

fn action(v: Verdict) -> usize {
    match v {
        Verdict::Allow => 0,
        Verdict::Deny => 1,
        Verdict::Slow { .. } => 2,
    }
}
