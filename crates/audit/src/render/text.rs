//! The terminal report.

use std::fmt::Write;

use crate::practices::Grade;

use super::{
    apart_kinds, clean_crawlers, counts_text, coverage_note, graded, ignores_note, name, on_host,
    plural, unchecked_note, OTHERS, SIGNED_IN_SHOWN,
};
use crate::report::{BotReport, Report};

/// The terminal report: what was read, then the rule breakers, the
/// spoofers, the suspects, the clients robots.txt does not govern and
/// everyone else.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    text_head(&mut out, r);
    text_breakers(&mut out, r);
    text_impostors(&mut out, r);
    text_evidence(&mut out, r);
    text_gate(&mut out, r);
    text_apart(&mut out, r);
    text_proposed(&mut out, r);
    text_others(&mut out, r);
    text_practices(&mut out, r);
    unread(&mut out, r);
    out
}

/// The files read, the span of time, and the robots.txt versions judged by.
fn text_head(out: &mut String, r: &Report) {
    let formats: Vec<String> = r
        .files
        .iter()
        .map(|f| format!("{} ({})", f.path, f.format))
        .collect();
    let _ = writeln!(
        out,
        "mannerly audit: {} in {}; {} unread",
        plural(r.lines, "line", "lines"),
        formats.join(", "),
        r.unparsed
    );
    if let Some((a, b)) = &r.span {
        let _ = writeln!(out, "from {a} to {b}");
    }
    if let Some(note) = coverage_note(r) {
        let _ = writeln!(out, "{note}");
    }
    let _ = writeln!(out, "{}", super::identity_checked(r));
    for line in super::robots_used(r) {
        let _ = writeln!(out, "{line}");
    }
}

/// A bot's rule-breaking hosts and examples, indented under it.
fn text_detail(out: &mut String, b: &BotReport) {
    for h in b.hosts.iter().filter(|h| h.counts.violations() > 0).take(5) {
        if h.host == "-" && b.hosts.len() == 1 {
            break;
        }
        let delay = h
            .crawl_delay
            .map(|d| format!(", Crawl-delay {d} s"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    on {}: {}{delay}, peak {}/min",
            h.host,
            counts_text(&h.counts),
            h.peak_per_minute
        );
    }
    for e in &b.examples {
        let _ = writeln!(
            out,
            "    {} {}{}{}: {}; {}",
            e.time,
            on_host(&e.host),
            e.path,
            e.status.map(|s| format!(" ({s})")).unwrap_or_default(),
            e.rule.words(),
            e.detail
        );
    }
}

/// Crawlers that broke rules, each with its worst hosts and examples.
fn text_breakers(out: &mut String, r: &Report) {
    let breakers: Vec<&BotReport> = r.rule_breakers().collect();
    section(
        out,
        "Crawlers that broke rules, worst first",
        breakers.is_empty(),
    );
    for b in &breakers {
        let _ = writeln!(out, "  {}: {}", name(b), counts_text(&b.counts));
        if let Some(note) = unchecked_note(b) {
            let _ = writeln!(out, "    {note}");
        }
        if let Some(note) = ignores_note(b) {
            let _ = writeln!(out, "    {note}");
        }
        text_detail(out, b);
    }
}

/// Crawlers' evidence, checked against the log.
fn text_evidence(out: &mut String, r: &Report) {
    let with: Vec<&BotReport> = r.bots.iter().filter(|b| b.evidence.is_some()).collect();
    if with.is_empty() {
        return;
    }
    section(out, "Crawlers' evidence, checked against this log", false);
    for b in with {
        let Some(e) = &b.evidence else { continue };
        let _ = writeln!(out, "  {}: {}", name(b), e.summary());
        for x in &e.examples {
            let _ = writeln!(
                out,
                "    {} {}{} [{}] {}",
                x.time,
                on_host(&x.host),
                x.request,
                x.kind,
                x.detail
            );
        }
    }
}

/// What `mannerly gate` answered each bot, as the log recorded it.
fn text_gate(out: &mut String, r: &Report) {
    let with: Vec<(&BotReport, crate::GateCounts)> =
        r.bots.iter().filter_map(|b| Some((b, b.gate?))).collect();
    if with.is_empty() {
        return;
    }
    section(
        out,
        "At the door (mannerly gate's answers, as logged)",
        false,
    );
    for (b, g) in with {
        let _ = writeln!(
            out,
            "  {}: {} allowed, {} slowed, {} refused",
            name(b),
            g.allowed,
            g.slowed,
            g.denied
        );
    }
}

/// Spoofers (a crawler's name, not its operator's addresses), with what
/// they did, and suspects (a browser's name, a crawler's behaviour).
fn text_impostors(out: &mut String, r: &Report) {
    let spoofers: Vec<&BotReport> = r.spoofers().collect();
    section(
        out,
        "Spoofers (claimed a crawler, failed its operator's check)",
        spoofers.is_empty(),
    );
    for b in spoofers {
        let _ = writeln!(out, "  {}: {}", name(b), counts_text(&b.counts));
        text_detail(out, b);
    }
    section(
        out,
        "Suspects (a browser's User-Agent, a crawler's behaviour)",
        r.suspects.is_empty(),
    );
    for s in &r.suspects {
        let _ = writeln!(
            out,
            "  {} \"{}\": {}",
            s.client,
            s.user_agent,
            s.evidence.join("; ")
        );
    }
}

/// What a proposed robots.txt would change, when one was given.
fn text_proposed(out: &mut String, r: &Report) {
    let Some(p) = &r.proposed else { return };
    section(
        out,
        &format!(
            "What the proposed robots.txt would change: {} newly disallowed, {} newly allowed",
            plural(p.newly_disallowed, "request", "requests"),
            p.newly_allowed
        ),
        p.bots.is_empty(),
    );
    for b in &p.bots {
        let _ = writeln!(
            out,
            "  {} ({}, {}): {} newly disallowed, {} newly allowed",
            b.token,
            b.identity.as_str(),
            b.kind.as_str(),
            b.newly_disallowed,
            b.newly_allowed
        );
        for x in &b.examples {
            let from = x
                .client
                .as_deref()
                .map(|c| format!(" from {c}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    {} {}{}{from}: {} (in force: {})",
                x.time,
                on_host(&x.host),
                x.path,
                x.detail,
                x.before
            );
        }
    }
}

/// The clients robots.txt does not govern, each kind under its heading:
/// what they did, judged by no rule.
fn text_apart(out: &mut String, r: &Report) {
    for kind in apart_kinds() {
        let of: Vec<&BotReport> = r.of_kind(kind).collect();
        if of.is_empty() {
            continue;
        }
        section(out, kind.heading(), false);
        for b in of.iter().take(OTHERS) {
            let source = b
                .kind_source
                .as_deref()
                .map(|s| format!("; see {s}"))
                .unwrap_or_default();
            let _ = writeln!(out, "  {}: {}{source}", name(b), counts_text(&b.counts));
        }
        if of.len() > OTHERS {
            let _ = writeln!(
                out,
                "  ... and {} more (--json lists them all)",
                of.len() - OTHERS
            );
        }
    }
}

/// Crawlers that broke nothing, and the browsers' requests. Without a
/// robots.txt their paths and pace were not judged, and the heading says
/// so rather than vouch for them.
fn text_others(out: &mut String, r: &Report) {
    let others: Vec<&BotReport> = clean_crawlers(r).collect();
    let title = if r.robots.is_empty() {
        "Crawlers with nothing against them (no robots.txt given to judge them by)"
    } else {
        "Crawlers that kept the rules"
    };
    section(out, title, others.is_empty());
    for b in others.iter().take(OTHERS) {
        let _ = writeln!(out, "  {}: {}", name(b), counts_text(&b.counts));
        if let Some(note) = ignores_note(b) {
            let _ = writeln!(out, "    {note}");
        }
    }
    if others.len() > OTHERS {
        let _ = writeln!(
            out,
            "  ... and {} more (--json lists them all)",
            others.len() - OTHERS
        );
    }
    let _ = writeln!(
        out,
        "  browsers: {}",
        plural(r.browser_requests, "request", "requests")
    );
    if r.signed_in_requests > 0 {
        let _ = writeln!(
            out,
            "  signed in: {} (credentials the server accepted: the site's own users, not judged)",
            plural(r.signed_in_requests, "request", "requests")
        );
        for s in r.signed_in.iter().take(SIGNED_IN_SHOWN) {
            let ua = if s.user_agent.is_empty() {
                "no User-Agent"
            } else {
                &s.user_agent
            };
            let _ = writeln!(
                out,
                "    {ua}: {}",
                plural(s.requests, "request", "requests")
            );
        }
    }
}

/// Each crawler against the Crawler Best Practices (the busiest first),
/// one line each, what is not met said under it.
fn text_practices(out: &mut String, r: &Report) {
    let graded = graded(r);
    section(
        out,
        "Crawler Best Practices, as this log shows them",
        graded.is_empty(),
    );
    for b in graded.iter().take(OTHERS) {
        let line: Vec<String> = b
            .practices
            .iter()
            .map(|p| format!("{} {}", p.practice, p.grade.as_str()))
            .collect();
        let _ = writeln!(out, "  {}: {}", name(b), line.join(", "));
        for p in b.practices.iter().filter(|p| p.grade == Grade::NotMet) {
            let _ = writeln!(out, "    {} not met: {}", p.practice, p.shown);
        }
    }
    if graded.len() > OTHERS {
        let _ = writeln!(
            out,
            "  ... and {} more (--json grades them all)",
            graded.len() - OTHERS
        );
    }
}

fn section(out: &mut String, title: &str, empty: bool) {
    let _ = writeln!(out, "\n{title}:{}", if empty { " none" } else { "" });
}

fn unread(out: &mut String, r: &Report) {
    if r.unparsed == 0 && r.identity_notes.is_empty() && r.late == 0 {
        return;
    }
    let _ = writeln!(out);
    for f in r.files.iter().filter(|f| f.unparsed > 0) {
        let _ = writeln!(
            out,
            "{}: {} unread, such as:",
            f.path,
            plural(f.unparsed, "line", "lines")
        );
        for (n, why) in &f.unparsed_examples {
            let _ = writeln!(out, "  line {n}: {why}");
        }
    }
    if r.late > 0 {
        let _ = writeln!(
            out,
            "{} came later than --window allows; judged as they came",
            plural(r.late, "request", "requests")
        );
    }
    for n in &r.identity_notes {
        let _ = writeln!(out, "identity: {n}");
    }
}
