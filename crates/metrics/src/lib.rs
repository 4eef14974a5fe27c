//! Prometheus metrics for mannerly's long-running commands: the crawler
//! and fleet workers, the gate, the tester and the audit's follow mode.
//!
//! ```
//! use mannerly_metrics::{Format, Registry};
//! let registry = Registry::new(false);
//! let requests = registry.counter("demo_requests_total", "Requests sent.", &["code"]);
//! requests.with(&["2xx"]).inc();
//! assert!(registry.encode(Format::Prometheus).contains("demo_requests_total{code=\"2xx\"} 1"));
//! ```
//!
//! # Design notes
//!
//! - **Bounded by type.** Label values are `&'static str`: only values the
//!   program spells out can become series, never a host or a URL, so the
//!   number of series is fixed by the code ([`family`]).
//! - **No lock on the hot path.** A series handle is an atomic; a family's
//!   lock is taken only to find or make a series, and handles can be kept.
//! - **Two formats.** Prometheus text 0.0.4 by default (what `promtool
//!   check metrics` and node_exporter's textfile collector read), and
//!   OpenMetrics 1.0 when the scraper's `Accept` asks for it
//!   ([`Format::from_accept`]).
//! - The endpoint ([`serve`], feature `serve`) is the only I/O besides
//!   reading `/proc/self` for the process families.

#![deny(missing_docs)]

pub mod family;
pub mod metric;
pub mod process;
mod registry;
#[cfg(feature = "serve")]
pub mod serve;
mod text;

pub use family::{Family, Kind, Metric};
pub use metric::{Counter, Gauge, Histogram, SECONDS};
pub use registry::Registry;
pub use text::Format;

/// The `code` label of an HTTP answer: `2xx` for 200, ...; `error` for
/// none (the request failed before a status came back).
pub fn status_class(status: Option<u16>) -> &'static str {
    match status.map(|s| s / 100) {
        Some(1) => "1xx",
        Some(2) => "2xx",
        Some(3) => "3xx",
        Some(4) => "4xx",
        Some(5) => "5xx",
        _ => "error",
    }
}

/// Whether `name` is a valid metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_name_counter_families_as_each_expects() {
        let r = Registry::new(true);
        let c = r.counter("x_requests_total", "Requests.", &["kind", "code"]);
        c.with(&["page", "2xx"]).add(3);
        c.with(&["robots", "4xx"]).inc();
        let h = r.histogram("x_duration_seconds", "Time.", &["kind"], &[0.1, 1.0]);
        h.with(&["page"]).observe(0.5);
        r.gauge("x_hosts", "Hosts.", &["state"])
            .with(&["ready"])
            .set(7);
        let p = r.encode(Format::Prometheus);
        assert!(p.contains("# TYPE x_requests_total counter\n"), "{p}");
        assert!(
            p.contains("x_requests_total{kind=\"page\",code=\"2xx\"} 3\n"),
            "{p}"
        );
        assert!(
            p.contains("x_duration_seconds_bucket{kind=\"page\",le=\"0.1\"} 0\n"),
            "{p}"
        );
        assert!(
            p.contains("x_duration_seconds_bucket{kind=\"page\",le=\"+Inf\"} 1\n"),
            "{p}"
        );
        assert!(
            p.contains("x_duration_seconds_sum{kind=\"page\"} 0.5\n"),
            "{p}"
        );
        assert!(p.contains("x_hosts{state=\"ready\"} 7\n"), "{p}");
        assert!(p.contains("process_resident_memory_bytes "), "{p}");
        let o = r.encode(Format::OpenMetrics);
        assert!(
            o.contains("# TYPE x_requests counter\n") && o.ends_with("# EOF\n"),
            "{o}"
        );
        assert!(
            o.contains("x_requests_total{kind=\"robots\",code=\"4xx\"} 1\n"),
            "{o}"
        );
        assert_eq!(r.series(), 2 + 3 + 2 + 1 + 2);
    }

    #[test]
    fn names_are_checked() {
        assert!(valid_name("mannerly_requests_total"));
        assert!(!valid_name("9x") && !valid_name("a-b") && !valid_name(""));
    }
}
