//! The registry: every family a program exposes, in the order it was
//! made, written as Prometheus text (0.0.4) or OpenMetrics 1.0.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::family::{Family, Kind, Metric, Series};
use crate::metric::{Counter, Gauge, Histogram};

/// The two text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Prometheus text format 0.0.4 (what `promtool check metrics` and
    /// node_exporter's textfile collector read).
    Prometheus,
    /// OpenMetrics 1.0 (`# EOF` at the end; counter families named
    /// without `_total`).
    OpenMetrics,
}

impl Format {
    /// The format a scraper's `Accept` header asks for.
    pub fn from_accept(accept: &str) -> Format {
        match accept.contains("application/openmetrics-text") {
            true => Format::OpenMetrics,
            false => Format::Prometheus,
        }
    }

    /// Its `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

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

/// `# HELP` and `# TYPE`; OpenMetrics names a counter family without
/// `_total`.
pub(crate) fn head(out: &mut String, name: &str, help: &str, kind: Kind, format: Format) {
    let family = match (format, kind) {
        (Format::OpenMetrics, Kind::Counter) => name.strip_suffix("_total").unwrap_or(name),
        _ => name,
    };
    let _ = writeln!(out, "# HELP {family} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {family} {}", kind.as_str());
}

fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_value(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `{a="x",b="y"}` (with `extra` last), or nothing without labels.
fn labels(names: &[&str], values: &[&str], extra: Option<(&str, &str)>) -> String {
    let mut pairs: Vec<String> = names
        .iter()
        .zip(values)
        .map(|(n, v)| format!("{n}=\"{}\"", escape_value(v)))
        .collect();
    if let Some((n, v)) = extra {
        pairs.push(format!("{n}=\"{v}\""));
    }
    match pairs.is_empty() {
        true => String::new(),
        false => format!("{{{}}}", pairs.join(",")),
    }
}

/// A number as both formats read it.
pub(crate) fn number(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.1}");
    }
    format!("{v}")
}

fn sorted<M>(mut s: Series<M>) -> Series<M> {
    s.sort_by(|a, b| a.0.cmp(&b.0));
    s
}

/// A metric written as one sample: a counter's or a gauge's value.
trait Scalar: Metric {
    fn value(&self) -> i128;
}

impl Scalar for Counter {
    fn value(&self) -> i128 {
        i128::from(self.get())
    }
}

impl Scalar for Gauge {
    fn value(&self) -> i128 {
        i128::from(self.get())
    }
}

fn scalars<M: Scalar>(out: &mut String, f: &Family<M>, format: Format) {
    head(out, f.name, f.help, M::KIND, format);
    for (values, m) in sorted(f.snapshot()) {
        let _ = writeln!(
            out,
            "{}{} {}",
            f.name,
            labels(f.labels, &values, None),
            m.value()
        );
    }
}

fn histograms(out: &mut String, f: &Family<Histogram>, format: Format) {
    head(out, f.name, f.help, Kind::Histogram, format);
    for (values, h) in sorted(f.snapshot()) {
        let cumulative = h.cumulative();
        let les = h.bounds().iter().copied().chain([f64::INFINITY]);
        for (le, n) in les.zip(&cumulative) {
            let l = labels(f.labels, &values, Some(("le", &number(le))));
            let _ = writeln!(out, "{}_bucket{l} {n}", f.name);
        }
        let l = labels(f.labels, &values, None);
        let _ = writeln!(out, "{}_sum{l} {}", f.name, number(h.sum()));
        let _ = writeln!(out, "{}_count{l} {}", f.name, h.count());
    }
}
