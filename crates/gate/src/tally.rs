//! The gate's Prometheus families: decisions by class and action, and how
//! long each took (`mannerly gate --metrics`).

use std::sync::Arc;
use std::time::Duration;

use mannerly_metrics::{Counter, Family, Histogram, Registry};

use crate::class::Class;
use crate::decide::Verdict;

/// Decision times, in seconds: 10 µs to 100 ms.
const TIMES: &[f64] = &[
    0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.01, 0.1,
];

/// Decisions counted by class and action.
pub struct Tally {
    registry: Arc<Registry>,
    decisions: Arc<Family<Counter>>,
    duration: Arc<Histogram>,
}

impl std::fmt::Debug for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tally").finish_non_exhaustive()
    }
}

impl Default for Tally {
    fn default() -> Self {
        Tally::new(Registry::new(false))
    }
}

impl Tally {
    /// The families, registered in `registry`.
    pub fn new(registry: Arc<Registry>) -> Tally {
        let decisions = registry.counter(
            "mannerly_gate_decisions_total",
            "Requests decided, by the client's class and the action taken.",
            &["class", "action"],
        );
        for class in Class::ALL {
            for action in ["allow", "deny", "slow"] {
                decisions.with(&[class.as_str(), action]);
            }
        }
        let duration = registry
            .histogram(
                "mannerly_gate_decision_duration_seconds",
                "From a request's arrival at the gate to its decision (a key directory's first fetch included).",
                &[],
                TIMES,
            )
            .with(&[]);
        Tally {
            registry,
            decisions,
            duration,
        }
    }

    /// Counts one decision, which took `took`.
    pub fn count(&self, class: Class, verdict: Verdict, took: Duration) {
        self.decisions
            .with(&[class.as_str(), verdict.as_str()])
            .inc();
        self.duration.observe(took.as_secs_f64());
    }

    /// The decisions made so far for `class` and `action` (`allow`, `deny`, `slow`).
    pub fn get(&self, class: Class, action: &'static str) -> u64 {
        self.decisions.with(&[class.as_str(), action]).get()
    }

    /// The registry the families are in.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
}
