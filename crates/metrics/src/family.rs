//! A family: one metric name, its help, its label names, and a series per
//! combination of label values. Label values are `&'static str`, so a
//! family can only ever hold the combinations the program spells out: no
//! host, URL or other unbounded value can become a label, and the number
//! of series is known when the code is read.

use std::sync::{Arc, Mutex};

use crate::metric::{Counter, Gauge, Histogram};

/// What kind of metric a family holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up.
    Counter,
    /// Goes up and down.
    Gauge,
    /// Bucketed observations.
    Histogram,
}

impl Kind {
    /// The `# TYPE` word.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// A metric a family can hold.
pub trait Metric: Send + Sync + 'static {
    /// Its kind.
    const KIND: Kind;
    /// A fresh one (a histogram takes its family's bounds).
    fn fresh(bounds: &'static [f64]) -> Self;
}

impl Metric for Counter {
    const KIND: Kind = Kind::Counter;
    fn fresh(_: &'static [f64]) -> Self {
        Counter::default()
    }
}

impl Metric for Gauge {
    const KIND: Kind = Kind::Gauge;
    fn fresh(_: &'static [f64]) -> Self {
        Gauge::default()
    }
}

impl Metric for Histogram {
    const KIND: Kind = Kind::Histogram;
    fn fresh(bounds: &'static [f64]) -> Self {
        Histogram::new(bounds)
    }
}

/// The series of a family, by label values.
pub type Series<M> = Vec<(Vec<&'static str>, Arc<M>)>;

/// One metric name and its series.
#[derive(Debug)]
pub struct Family<M> {
    pub(crate) name: &'static str,
    pub(crate) help: &'static str,
    pub(crate) labels: &'static [&'static str],
    pub(crate) bounds: &'static [f64],
    pub(crate) series: Mutex<Series<M>>,
}

impl<M: Metric> Family<M> {
    /// The series for these label values (one per label name, in order),
    /// made on first use. Keep the handle for a hot path.
    pub fn with(&self, values: &[&'static str]) -> Arc<M> {
        debug_assert_eq!(values.len(), self.labels.len(), "{}", self.name);
        let mut series = self.series.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, m)) = series.iter().find(|(v, _)| v.as_slice() == values) {
            return m.clone();
        }
        let m = Arc::new(M::fresh(self.bounds));
        series.push((values.to_vec(), m.clone()));
        m
    }

    /// The family's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// A copy of the series, for encoding.
    pub(crate) fn snapshot(&self) -> Series<M> {
        self.series
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Family<Counter> {
    /// The sum over every series.
    pub fn sum(&self) -> u64 {
        self.snapshot().iter().map(|(_, c)| c.get()).sum()
    }
}
