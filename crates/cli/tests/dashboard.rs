//! The Grafana dashboard (`docs/grafana/mannerly.json`) asks only for
//! families mannerly exports, and shows what an operator watches: the
//! politeness slack, requests by status, hosts by state, robots.txt
//! outcomes, throughput, CPU and memory. The Prometheus example
//! (`docs/prometheus.yml`) is a valid configuration (checked by promtool
//! where it is installed; CI installs it).

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use mannerly_metrics::Registry;

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// Every family the crawler, the gate, the tester and the live audit
/// export, with the process ones.
fn exported() -> BTreeSet<String> {
    let registry = Registry::new(true);
    let _crawl = mannerly_crawl::metrics::CrawlMetrics::new(registry.clone());
    let _gate = mannerly_gate::Tally::new(registry.clone());
    let _serve = mannerly_serve::metrics::ServeMetrics::new(&registry);
    let _audit = mannerly_audit::metrics::FollowMetrics::new(&registry);
    registry.names().into_iter().map(str::to_owned).collect()
}

/// The metric names a PromQL expression reads.
fn names_in(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_quotes = false;
    for c in expr.chars().chain([' ']) {
        if c == '"' {
            in_quotes = !in_quotes;
        }
        if !in_quotes && (c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            word.push(c);
            continue;
        }
        if word.starts_with("mannerly_") || word.starts_with("process_") {
            out.push(std::mem::take(&mut word));
        }
        word.clear();
    }
    out
}

#[test]
fn every_dashboard_query_names_an_exported_family() {
    let text = std::fs::read_to_string(docs().join("grafana/mannerly.json")).expect("dashboard");
    let dashboard: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let families = exported();
    let mut used = BTreeSet::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            for name in names_in(expr) {
                let family = ["_bucket", "_sum", "_count"]
                    .iter()
                    .find_map(|s| name.strip_suffix(s).filter(|f| families.contains(*f)))
                    .map_or(name.clone(), str::to_owned);
                assert!(
                    families.contains(&family),
                    "panel {:?} asks for {name}, which nothing exports ({families:?})",
                    panel["title"]
                );
                used.insert(family);
            }
        }
    }
    for needed in [
        "mannerly_delay_slack_seconds",
        "mannerly_requests_total",
        "mannerly_hosts",
        "mannerly_robots_fetches_total",
        "mannerly_response_bytes_total",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "mannerly_gate_decisions_total",
    ] {
        assert!(used.contains(needed), "the dashboard shows {needed}");
    }
    let unused: Vec<_> = families.difference(&used).collect();
    assert!(unused.is_empty(), "exported but on no panel: {unused:?}");
}

#[test]
fn the_prometheus_example_is_a_valid_configuration() {
    let file = docs().join("prometheus.yml");
    let text = std::fs::read_to_string(&file).expect("prometheus.yml");
    assert!(text.contains("scrape_configs:"), "{text}");
    if common::need("promtool") {
        let o = std::process::Command::new("promtool")
            .args(["check", "config"])
            .arg(&file)
            .output()
            .expect("promtool");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    }
}

#[test]
fn the_job_variable_is_mannerlys_and_the_slack_never_shows_an_early_request_that_did_not_happen() {
    let text = std::fs::read_to_string(docs().join("grafana/mannerly.json")).expect("dashboard");
    let dashboard: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let job = dashboard["templating"]["list"]
        .as_array()
        .expect("variables")
        .iter()
        .find(|v| v["name"] == "job")
        .expect("a $job variable");
    let query = job["query"].as_str().expect("query");
    assert!(
        query.contains("__name__=~\"mannerly_"),
        "$job lists only jobs exporting mannerly's families: {query}"
    );
    let slack = dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .find(|p| {
            p["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("Politeness slack"))
        })
        .expect("the slack panel");
    for t in slack["targets"].as_array().expect("targets") {
        let expr = t["expr"].as_str().expect("expr");
        if expr.contains("histogram_quantile") {
            // Interpolation inside (-0.001, 0] would draw an early request
            // no one made; real early requests are the exact count.
            assert!(expr.starts_with("clamp_min("), "{expr}");
        }
    }
}
