//! A client's card: what it did over time, on which hosts, and the
//! requests that broke rules with the robots.txt line that decided. The
//! rule-breakers' cards are open; the others are folded, by kind.

use std::fmt::Write;

use super::super::{apart_kinds, counts_text, ignores_note, name, on_host, unchecked_note, OTHERS};
use super::{anchor, has_card, text, tick};
use crate::kinds::BotKind;
use crate::report::{BotReport, Report, Timeline};

/// Rows of hosts and of examples a card shows, at most.
const ROWS: usize = 3;

/// The rule-breakers' cards, open, worst first.
pub(super) fn breakers(out: &mut String, r: &Report) {
    out.push_str("<h2>Crawlers that broke rules, worst first</h2>");
    let mut any = false;
    for (i, b) in r.bots.iter().enumerate() {
        if b.broke_rules() {
            card(out, r, i, true);
            any = true;
        }
    }
    if !any {
        out.push_str("<p>None.</p>");
    }
}

/// Everyone else with something to show, folded, crawlers first and
/// then each kind robots.txt does not govern; quiet clients are in the
/// table only.
pub(super) fn others(out: &mut String, r: &Report) {
    let kinds = std::iter::once(BotKind::Crawler).chain(apart_kinds());
    let mut shown: Vec<usize> = Vec::new();
    for kind in kinds {
        shown.extend(
            (0..r.bots.len())
                .filter(|i| {
                    let b = &r.bots[*i];
                    b.kind == kind && b.counts.violations() == 0 && has_card(b)
                })
                .take(OTHERS),
        );
    }
    if shown.is_empty() {
        return;
    }
    out.push_str("<h2>Everyone else</h2><small>Folded, crawlers first; quieter clients are in the table only.</small><div class=\"folded\">");
    for i in shown {
        card(out, r, i, false);
    }
    out.push_str("</div>");
}

fn card(out: &mut String, r: &Report, i: usize, open: bool) {
    let b = &r.bots[i];
    let bad = b.counts.violations() > 0;
    let _ = write!(
        out,
        "<details class=\"card\" id=\"{}\"{}><summary><span class=\"{}\">{}</span> <small>{}</small></summary>",
        anchor(i),
        if open { " open" } else { "" },
        if bad { "bad" } else { "" },
        text(&name(b)),
        text(&if open {
            counts_text(&b.counts)
        } else {
            super::super::plural(b.counts.requests, "request", "requests")
        })
    );
    if !open {
        let _ = write!(
            out,
            "<p><small>{}</small></p>",
            text(&counts_text(&b.counts))
        );
    }
    for note in [unchecked_note(b).map(str::to_owned), ignores_note(b)]
        .into_iter()
        .flatten()
    {
        let _ = write!(out, "<p><small>{}</small></p>", text(&note));
    }
    if let Some(ua) = b.user_agents.first() {
        let _ = write!(
            out,
            "<p><small>User-Agent</small> <code>{}</code></p>",
            text(ua)
        );
    }
    let _ = write!(
        out,
        "<small>requests over time{}</small>",
        if bad { " (rule broken: red)" } else { "" }
    );
    out.push_str(&chart(&b.timeline));
    if bad {
        hosts(out, b);
        examples(out, b);
    }
    out.push_str("</details>");
}

/// Requests per bucket in blue, those that broke a rule in red over
/// them, scaled to the busiest bucket; the time axis under it.
fn chart(t: &Timeline) -> String {
    let n = t.requests.len().max(1);
    let max = t.requests.iter().copied().max().unwrap_or(0).max(1);
    let mut svg = format!(
        "<svg viewBox=\"0 0 {n} 40\" preserveAspectRatio=\"none\" role=\"img\" class=\"chart\">"
    );
    for (series, color) in [(&t.requests, "#2c7be5"), (&t.violations, "#c0392b")] {
        for (i, v) in series.iter().enumerate().filter(|(_, v)| **v > 0) {
            let h = (*v as f64 / max as f64 * 40.0).max(1.0);
            let _ = write!(
                svg,
                "<rect x=\"{i}\" y=\"{:.2}\" width=\"1\" height=\"{h:.2}\" fill=\"{color}\"/>",
                40.0 - h
            );
        }
    }
    svg.push_str("</svg>");
    if t.width > 0 {
        let end = t.start + t.width * t.requests.len() as i64;
        let _ = write!(
            svg,
            "<div class=\"axis\">{}<small class=\"w\">busiest: {max}</small>{}</div>",
            tick(t.start),
            tick(end)
        );
    }
    svg
}

/// The pace of a host against its Crawl-delay: a bar for the median gap
/// (red only when it is shorter than the delay), a line at the delay.
fn pace(median: f64, delay: f64) -> String {
    let scale = (delay.max(median) * 1.2).max(0.001);
    let w = |x: f64| x / scale * 200.0;
    let color = if median < delay { "#c0392b" } else { "#27ae60" };
    format!(
        "<svg viewBox=\"0 0 200 16\" class=\"pace\" role=\"img\"><rect x=\"0\" y=\"3\" width=\"{:.1}\" height=\"10\" fill=\"{color}\"/><line x1=\"{d:.1}\" x2=\"{d:.1}\" y1=\"0\" y2=\"16\" stroke=\"#222\" stroke-width=\"2\"/></svg>",
        w(median),
        d = w(delay)
    )
}

/// The hosts it broke rules on, with its pace against each one's
/// Crawl-delay: a line when there is one host, a table for more.
fn hosts(out: &mut String, b: &BotReport) {
    let bad: Vec<_> = b
        .hosts
        .iter()
        .filter(|h| h.counts.violations() > 0)
        .collect();
    let gap = |h: &crate::report::HostReport| match (h.median_gap, h.crawl_delay) {
        (Some(m), Some(d)) => format!(
            "{} <small>median gap {m:.2} s against Crawl-delay {d} s</small>",
            pace(m, d)
        ),
        _ => String::new(),
    };
    if let [one] = bad.as_slice() {
        if one.host == "-" || b.hosts.len() == 1 {
            let _ = write!(out, "<div>{}</div>", gap(one));
            return;
        }
    }
    out.push_str("<div class=\"wide\"><table><tr><th>host</th><th>what</th><th>pace</th></tr>");
    for h in bad.iter().take(ROWS) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            text(&h.host),
            text(&counts_text(&h.counts)),
            gap(h)
        );
    }
    out.push_str("</table></div>");
}

fn examples(out: &mut String, b: &BotReport) {
    out.push_str("<div class=\"wide\"><table><tr><th>when</th><th>request</th><th>why</th></tr>");
    for e in b.examples.iter().take(ROWS) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}{}</td><td>{}: {}</td></tr>",
            text(&e.time.get(..19).unwrap_or(&e.time).replacen('T', " ", 1)),
            text(&on_host(&e.host)),
            text(&e.path),
            text(e.rule.words()),
            text(&e.detail)
        );
    }
    out.push_str("</table></div>");
}
