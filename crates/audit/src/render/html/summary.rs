//! The first screen: whether anything went wrong and who, in counters,
//! a chart of requests over time by kind, the worst offenders a line
//! each, and what the audit read.

use std::fmt::Write;

use super::super::{coverage_note, identity_checked, plural, robots_used};
use super::{linked, text, tick};
use crate::kinds::BotKind;
use crate::report::{BotReport, Identity, Report};

/// Offenders listed on the first screen, at most.
const WORST: usize = 6;

pub(super) fn first_screen(out: &mut String, r: &Report) {
    let breakers: Vec<&BotReport> = r.rule_breakers().collect();
    let broke: u64 = breakers
        .iter()
        .map(|b| b.counts.requests_breaking_rules)
        .sum();
    let spoofers: Vec<&BotReport> = r.spoofers().collect();
    let mut verdict = match (breakers.len(), spoofers.len()) {
        (0, 0) => "No crawler broke a rule, and none used another's name.".to_owned(),
        (b, s) => format!(
            "{} broke rules ({} of their requests); {} used a crawler's name from outside its operator's ranges.",
            plural(b as u64, "crawler", "crawlers"),
            broke,
            plural(s as u64, "client", "clients")
        ),
    };
    if r.robots.is_empty() {
        verdict.push_str(
            " No robots.txt was given: disallowed paths and Crawl-delay were not judged.",
        );
    }
    let _ = write!(
        out,
        "<p class=\"{}\">{}</p>",
        if broke > 0 || !spoofers.is_empty() {
            "bad"
        } else {
            ""
        },
        text(&verdict)
    );
    counters(out, r, broke, &spoofers);
    by_kind(out, r);
    offenders(out, r);
    inputs(out, r);
}

fn counter(out: &mut String, value: u64, label: &str, more: &str, bad: bool) {
    let mut class = if bad { "counter bad" } else { "counter" }.to_owned();
    if more.len() > 60 {
        class.push_str(" two");
    }
    let _ = write!(
        out,
        "<div class=\"{class}\"><b>{value}</b>{}<small>{}</small></div>",
        text(label),
        text(more)
    );
}

fn counters(out: &mut String, r: &Report, broke: u64, spoofers: &[&BotReport]) {
    let bot_requests: u64 = r.bots.iter().map(|b| b.counts.requests).sum();
    out.push_str("<div class=\"counters\">");
    let mut browsers = format!("{} by browsers", r.browser_requests);
    if r.signed_in_requests > 0 {
        browsers.push_str(&format!(", {} signed in", r.signed_in_requests));
    }
    counter(
        out,
        bot_requests + r.browser_requests + r.signed_in_requests,
        "requests",
        &browsers,
        false,
    );
    let by_kind: Vec<String> = BotKind::ALL
        .into_iter()
        .filter_map(|k| match r.of_kind(k).count() {
            0 => None,
            n => Some(format!("{n} {}", kind_words(k, n))),
        })
        .collect();
    counter(
        out,
        r.bots.len() as u64,
        "clients",
        &by_kind.join(", "),
        false,
    );
    let verified = r
        .bots
        .iter()
        .filter(|b| b.identity == Identity::Verified)
        .count() as u64;
    counter(
        out,
        verified,
        "verified crawlers",
        "by their operators' ranges, keys or DNS",
        false,
    );
    let spoofed: u64 = spoofers.iter().map(|b| b.counts.requests).sum();
    let spoofed = plural(spoofed, "request", "requests");
    counter(
        out,
        spoofers.len() as u64,
        "spoofers",
        &spoofed,
        !spoofers.is_empty(),
    );
    let broken = format!("{broke} requests broke rules");
    let breakers = r.rule_breakers().count() as u64;
    counter(out, breakers, "crawlers broke rules", &broken, broke > 0);
    let suspects = r.suspects.len() as u64;
    counter(
        out,
        suspects,
        "suspects",
        "browsers' names, crawlers' ways",
        suspects > 0,
    );
    let versions = r.robots.len() as u64;
    counter(
        out,
        versions,
        "robots.txt versions",
        "judged against",
        false,
    );
    out.push_str("</div>");
}

/// A kind's clients, as the counter says them.
fn kind_words(kind: BotKind, n: usize) -> String {
    let one = match kind {
        BotKind::Crawler => "crawler",
        BotKind::UserTriggered => "user-triggered fetcher",
        BotKind::FeedReader => "feed reader",
        BotKind::LinkPreview => "link preview",
        BotKind::Monitor => "monitor",
        BotKind::ClientLibrary => "HTTP tool",
        BotKind::Anonymous => "without a User-Agent",
    };
    match (kind, n) {
        (BotKind::Anonymous, _) | (_, 1) => one.to_owned(),
        _ => format!("{one}s"),
    }
}

/// The kinds the chart stacks, with their colours: crawlers, spoofers,
/// then each kind robots.txt does not govern.
const SERIES: [(&str, &str); 8] = [
    ("crawlers", "#2c7be5"),
    ("spoofers", "#c0392b"),
    ("user-triggered", "#8e44ad"),
    ("feed readers", "#27ae60"),
    ("link previews", "#f39c12"),
    ("monitors", "#16a085"),
    ("HTTP tools", "#7f8c8d"),
    ("no User-Agent", "#34495e"),
];

fn series_of(b: &BotReport) -> usize {
    if b.spoofed() {
        return 1;
    }
    match b.kind {
        BotKind::Crawler => 0,
        BotKind::UserTriggered => 2,
        BotKind::FeedReader => 3,
        BotKind::LinkPreview => 4,
        BotKind::Monitor => 5,
        BotKind::ClientLibrary => 6,
        BotKind::Anonymous => 7,
    }
}

/// Requests over time by kind, stacked, with both axes labelled.
fn by_kind(out: &mut String, r: &Report) {
    let Some(t) = r.bots.iter().map(|b| &b.timeline).find(|t| t.width > 0) else {
        return;
    };
    let n = r
        .bots
        .iter()
        .map(|b| b.timeline.requests.len())
        .max()
        .unwrap_or(0);
    let mut stacks = vec![[0u64; 8]; n];
    for b in &r.bots {
        let s = series_of(b);
        for (i, v) in b.timeline.requests.iter().enumerate() {
            stacks[i][s] += v;
        }
    }
    let top = stacks
        .iter()
        .map(|s| s.iter().sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let _ = write!(
        out,
        "<div id=\"by-kind\"><h2>Automated requests over time, by kind</h2><small>requests per {} minutes, UTC (the top of the chart is {top})</small>",
        t.width / 60_000
    );
    let _ = write!(
        out,
        "<svg viewBox=\"0 0 {} 100\" preserveAspectRatio=\"none\" role=\"img\" class=\"kinds\">",
        n.max(1)
    );
    for (i, stack) in stacks.iter().enumerate() {
        let mut y = 100.0;
        for (s, v) in stack.iter().enumerate().filter(|(_, v)| **v > 0) {
            let h = *v as f64 / top as f64 * 100.0;
            y -= h;
            let _ = write!(
                out,
                "<rect x=\"{i}\" y=\"{y:.2}\" width=\"1\" height=\"{h:.2}\" fill=\"{}\"/>",
                SERIES[s].1
            );
        }
    }
    out.push_str("</svg>");
    let end = t.start + t.width * n as i64;
    let mid = t.start + t.width * n as i64 / 2;
    let _ = write!(
        out,
        "<div class=\"axis\">{}{}{}</div><div class=\"legend\">",
        tick(t.start),
        tick(mid),
        tick(end)
    );
    let shown: Vec<usize> = (0..8)
        .filter(|s| stacks.iter().any(|st| st[*s] > 0))
        .collect();
    for s in shown {
        let _ = write!(
            out,
            "<span><i class=\"sw\" style=\"background:{}\"></i>{}</span>",
            SERIES[s].1, SERIES[s].0
        );
    }
    out.push_str("</div></div>");
}

/// The worst offenders, a line each: rule-breakers, then spoofers, then
/// suspects.
fn offenders(out: &mut String, r: &Report) {
    let mut lines: Vec<String> = Vec::new();
    for (i, b) in r.bots.iter().enumerate() {
        if !b.broke_rules() {
            continue;
        }
        let why = b
            .examples
            .first()
            .map(|e| format!(" For example {}: {}", e.rule.words(), e.detail))
            .unwrap_or_default();
        lines.push(format!(
            "{}: {} of its {} requests broke rules.{}",
            linked(r, i, &super::super::name(b)),
            b.counts.requests_breaking_rules,
            b.counts.requests,
            text(&why)
        ));
    }
    let mut spoofers: Vec<(usize, &BotReport)> = r
        .bots
        .iter()
        .enumerate()
        .filter(|(_, b)| b.spoofed())
        .collect();
    spoofers.sort_by_key(|(_, b)| std::cmp::Reverse(b.counts.requests));
    for (i, b) in spoofers.into_iter().take(3) {
        lines.push(format!(
            "{}: {} in {}'s name, from outside its operator's ranges.",
            linked(r, i, &super::super::name(b)),
            plural(b.counts.requests, "request", "requests"),
            text(&b.token)
        ));
    }
    for s in r.suspects.iter().take(2) {
        lines.push(format!(
            "<a href=\"#suspects\">{}</a>: a browser's User-Agent, a crawler's behaviour ({} pages, {} assets).",
            text(&s.client),
            s.pages,
            s.assets
        ));
    }
    if lines.is_empty() {
        return;
    }
    out.push_str("<h2>Worst first</h2><ol id=\"offenders\">");
    for l in lines.into_iter().take(WORST) {
        let _ = write!(out, "<li>{l}</li>");
    }
    out.push_str("</ol>");
}

/// What the audit read: the logs, the robots.txt versions and where from,
/// how identity was checked.
fn inputs(out: &mut String, r: &Report) {
    out.push_str("<details id=\"inputs\" open><summary><b>What this report read</b></summary><ul>");
    for f in &r.files {
        let _ = write!(
            out,
            "<li>log <code>{}</code> ({}): {} read, {} unread</li>",
            text(&f.path),
            text(&f.format),
            plural(f.lines, "line", "lines"),
            f.unparsed
        );
    }
    if let Some((a, b)) = &r.span {
        let _ = write!(out, "<li>from {} to {}</li>", text(a), text(b));
    }
    if let Some(note) = coverage_note(r) {
        let _ = write!(out, "<li class=\"bad\">{}</li>", text(&note));
    }
    for line in robots_used(r) {
        let _ = write!(out, "<li>{}</li>", text(&line));
    }
    let _ = write!(out, "<li>{}</li>", text(identity_checked(r)));
    for n in &r.identity_notes {
        let _ = write!(out, "<li><small>{}</small></li>", text(n));
    }
    out.push_str("</ul></details>");
}
