//! The registry: every family a program exposes, in the order it was
//! made, written as Prometheus text (0.0.4) or OpenMetrics 1.0.

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::family::{Family, Metric};
use crate::metric::{Counter, Gauge, Histogram};
use crate::text::{histograms, scalars, Format};

enum Entry {
    Counter(Arc<Family<Counter>>),
    Gauge(Arc<Family<Gauge>>),
    Histogram(Arc<Family<Histogram>>),
}

/// Every family of a program.
#[derive(Default)]
pub struct Registry {
    entries: Mutex<Vec<Entry>>,
    process: bool,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").finish_non_exhaustive()
    }
}

fn family<M: Metric>(
    name: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
    bounds: &'static [f64],
) -> Arc<Family<M>> {
    debug_assert!(crate::valid_name(name), "{name}");
    Arc::new(Family {
        name,
        help,
        labels,
        bounds,
        series: Mutex::new(Vec::new()),
    })
}

impl Registry {
    /// An empty registry; with `process`, the standard process families
    /// (`process_cpu_seconds_total`, `process_resident_memory_bytes`) are
    /// read from `/proc` at every encoding.
    pub fn new(process: bool) -> Arc<Registry> {
        Arc::new(Registry {
            entries: Mutex::new(Vec::new()),
            process,
        })
    }

    fn push(&self, e: Entry) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e);
    }

    /// A counter family (its name ends in `_total`).
    pub fn counter(
        &self,
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
    ) -> Arc<Family<Counter>> {
        debug_assert!(name.ends_with("_total"), "{name}");
        let f = family(name, help, labels, &[]);
        self.push(Entry::Counter(f.clone()));
        f
    }

    /// A gauge family.
    pub fn gauge(
        &self,
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
    ) -> Arc<Family<Gauge>> {
        let f = family(name, help, labels, &[]);
        self.push(Entry::Gauge(f.clone()));
        f
    }

    /// A histogram family over `bounds`.
    pub fn histogram(
        &self,
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
        bounds: &'static [f64],
    ) -> Arc<Family<Histogram>> {
        let f = family(name, help, labels, bounds);
        self.push(Entry::Histogram(f.clone()));
        f
    }

    /// Every family's name, in order (the process families included).
    pub fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|e| match e {
                Entry::Counter(f) => f.name(),
                Entry::Gauge(f) => f.name(),
                Entry::Histogram(f) => f.name(),
            })
            .collect();
        if self.process {
            names.extend(["process_cpu_seconds_total", "process_resident_memory_bytes"]);
        }
        names
    }

    /// The series exposed now, in all (a histogram's buckets, sum and
    /// count each counted).
    pub fn series(&self) -> usize {
        self.encode(Format::Prometheus)
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .count()
    }

    /// Every family as text in `format`.
    pub fn encode(&self, format: Format) -> String {
        let mut out = String::new();
        for e in self
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            match e {
                Entry::Counter(f) => scalars(&mut out, f, format),
                Entry::Gauge(f) => scalars(&mut out, f, format),
                Entry::Histogram(f) => histograms(&mut out, f, format),
            }
        }
        if self.process {
            crate::process::encode(&mut out, format);
        }
        if format == Format::OpenMetrics {
            out.push_str("# EOF\n");
        }
        out
    }

    /// Writes the Prometheus text to `path` whole (a file beside it, then
    /// renamed), as node_exporter's textfile collector wants it.
    pub fn write_textfile(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("prom.tmp");
        std::fs::write(&tmp, self.encode(Format::Prometheus))?;
        std::fs::rename(&tmp, path)
    }
}
