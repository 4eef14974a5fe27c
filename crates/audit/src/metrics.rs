//! A live audit's Prometheus families (`mannerly audit --follow
//! --metrics`): lines read and unread, findings by rule and by the kind of
//! bot that broke them.

use std::sync::Arc;

use mannerly_metrics::{Counter, Family, Registry};

use crate::kinds::BotKind;
use crate::report::{Finding, Violation};

/// A live audit's families.
#[derive(Debug)]
pub struct FollowMetrics {
    lines: Arc<Counter>,
    unread: Arc<Counter>,
    findings: Arc<Family<Counter>>,
}

impl FollowMetrics {
    /// The families, registered in `registry`.
    pub fn new(registry: &Registry) -> FollowMetrics {
        let findings = registry.counter(
            "mannerly_audit_findings_total",
            "Rules broken, by rule and by the kind of bot that broke them.",
            &["rule", "kind"],
        );
        for rule in [
            Violation::Disallowed,
            Violation::TooSoon,
            Violation::IgnoredRetryAfter,
        ] {
            findings.with(&[rule.as_str(), BotKind::Crawler.as_str()]);
        }
        FollowMetrics {
            lines: registry
                .counter("mannerly_audit_lines_total", "Log lines read.", &[])
                .with(&[]),
            unread: registry
                .counter(
                    "mannerly_audit_lines_unread_total",
                    "Log lines no request could be read from.",
                    &[],
                )
                .with(&[]),
            findings,
        }
    }

    /// Lines read, and how many of them could not be.
    pub fn read(&self, lines: u64, unread: u64) {
        self.lines.add(lines);
        self.unread.add(unread);
    }

    /// One finding.
    pub fn finding(&self, f: &Finding) {
        self.findings
            .with(&[f.example.rule.as_str(), f.kind.as_str()])
            .inc();
    }
}
