//! The two text formats, Prometheus 0.0.4 and OpenMetrics 1.0: a family's
//! head, its samples, label escaping and numbers.

use std::fmt::Write as _;

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
pub(crate) trait Scalar: Metric {
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

pub(crate) fn scalars<M: Scalar>(out: &mut String, f: &Family<M>, format: Format) {
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

pub(crate) fn histograms(out: &mut String, f: &Family<Histogram>, format: Format) {
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
