//! The self-contained HTML report.

use std::fmt::Write;

use super::{
    apart_kinds, clean_crawlers, counts_text, coverage_note, graded, ignores_note, name, on_host,
    plural, unchecked_note, OTHERS,
};
use crate::kinds::BotKind;
use crate::report::{BotReport, Report, Timeline};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A bar chart of one series as inline SVG, scaled to `max`.
fn bars(values: &[u64], max: u64, color: &str) -> String {
    let n = values.len().max(1);
    let mut svg = format!(
        "<svg viewBox=\"0 0 {n} 40\" preserveAspectRatio=\"none\" role=\"img\" class=\"chart\">"
    );
    for (i, v) in values.iter().enumerate().filter(|(_, v)| **v > 0) {
        let h = (*v as f64 / max.max(1) as f64 * 40.0).max(1.0);
        let _ = write!(
            svg,
            "<rect x=\"{i}\" y=\"{:.2}\" width=\"1\" height=\"{h:.2}\" fill=\"{color}\"/>",
            40.0 - h
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The pace of a host against its Crawl-delay: a bar for the median gap,
/// a line at the delay.
fn pace(median: f64, delay: f64) -> String {
    let scale = (delay.max(median) * 1.2).max(0.001);
    let w = |x: f64| x / scale * 200.0;
    format!(
        "<svg viewBox=\"0 0 200 16\" class=\"pace\" role=\"img\"><rect x=\"0\" y=\"3\" width=\"{:.1}\" height=\"10\" fill=\"#c0392b\"/><line x1=\"{d:.1}\" x2=\"{d:.1}\" y1=\"0\" y2=\"16\" stroke=\"#222\" stroke-width=\"2\"/></svg>",
        w(median),
        d = w(delay)
    )
}

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:960px;padding:12px;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}table{border-collapse:collapse;width:100%}\
td,th{padding:4px 6px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}td{overflow-wrap:anywhere}\
.chart{width:100%;height:48px;background:#f6f6f6;display:block}.pace{width:100%;max-width:260px;height:16px}\
.bad{color:#c0392b;font-weight:600}.card{border:1px solid #ddd;border-radius:6px;padding:8px 10px;margin:10px 0}\
small{color:#666}.wide{overflow-x:auto}.axis{display:flex;justify-content:space-between}@media (max-width:600px){body{font-size:14px}td,th{padding:3px}}";

/// The self-contained HTML report.
pub fn html(r: &Report) -> String {
    let mut out = String::from("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>mannerly audit</title><style>");
    out.push_str(STYLE);
    out.push_str(
        "</style></head><body><h1>Who crawled this site, and did they keep its rules?</h1>",
    );
    let span = r
        .span
        .as_ref()
        .map(|(a, b)| format!(" from {} to {}", esc(a), esc(b)))
        .unwrap_or_default();
    let _ = write!(
        out,
        "<p>{} read{span}; {} unread; {}, {} broke rules; {}; {}.</p>",
        plural(r.lines, "line", "lines"),
        r.unparsed,
        plural(r.bots.len() as u64, "client", "clients"),
        r.rule_breakers().count(),
        plural(r.spoofers().count() as u64, "spoofer", "spoofers"),
        plural(r.suspects.len() as u64, "suspect", "suspects")
    );
    let max = r
        .bots
        .iter()
        .flat_map(|b| b.timeline.requests.iter())
        .copied()
        .max()
        .unwrap_or(1);
    let vmax = r
        .bots
        .iter()
        .flat_map(|b| b.timeline.violations.iter())
        .copied()
        .max()
        .unwrap_or(1);
    if let Some(note) = coverage_note(r) {
        let _ = write!(out, "<p class=\"bad\">{}</p>", esc(&note));
    }
    overview(&mut out, r);
    out.push_str("<h2>Crawlers that broke rules, worst first</h2>");
    for b in r.rule_breakers() {
        bot_card(&mut out, b, max, vmax);
    }
    out.push_str("<h2>Spoofers: claimed a crawler, failed its operator's check</h2>");
    let mut spoofers = r.spoofers().peekable();
    if spoofers.peek().is_none() {
        out.push_str("<p>none</p>");
    }
    for b in spoofers {
        bot_card(&mut out, b, max, vmax);
    }
    out.push_str("<h2>Suspects: a browser's User-Agent, a crawler's behaviour</h2><table><tr><th>client</th><th>User-Agent</th><th>evidence</th></tr>");
    for s in &r.suspects {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&s.client),
            esc(&s.user_agent),
            esc(&s.evidence.join("; "))
        );
    }
    out.push_str("</table>");
    html_proposed(&mut out, r);
    if let Some((server, text)) = &r.rules {
        let _ = write!(
            out,
            "<h2>Server rules ({})</h2><div class=\"wide\"><pre>{}</pre></div>",
            esc(server),
            esc(text)
        );
    }
    html_evidence(&mut out, r);
    html_gate(&mut out, r);
    for kind in apart_kinds() {
        let mut of = r.of_kind(kind).peekable();
        if of.peek().is_none() {
            continue;
        }
        let _ = write!(out, "<h2>{}</h2>", esc(kind.heading()));
        for b in of.take(OTHERS) {
            bot_card(&mut out, b, max, vmax);
        }
    }
    out.push_str("<h2>Crawlers that kept the rules</h2>");
    for b in clean_crawlers(r).take(OTHERS) {
        bot_card(&mut out, b, max, vmax);
    }
    html_practices(&mut out, r);
    timeline_note(&mut out, r);
    out.push_str("</body></html>\n");
    out
}

/// Each crawler against the Crawler Best Practices: a row each, a cell a
/// practice (what the log showed in its title).
fn html_practices(out: &mut String, r: &Report) {
    let graded = graded(r);
    if graded.is_empty() {
        return;
    }
    out.push_str("<h2>Crawler Best Practices, as this log shows them</h2><div class=\"wide\"><table><tr><th>crawler</th>");
    for p in &graded[0].practices {
        let _ = write!(out, "<th>{}</th>", esc(p.practice));
    }
    out.push_str("</tr>");
    for b in graded.iter().take(OTHERS) {
        let _ = write!(out, "<tr><td>{}</td>", esc(&name(b)));
        for p in &b.practices {
            let class = match p.grade {
                crate::practices::Grade::NotMet => " class=\"bad\"",
                _ => "",
            };
            let _ = write!(
                out,
                "<td{class} title=\"{}\">{}</td>",
                esc(&p.shown),
                esc(p.grade.as_str())
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
}

/// What a proposed robots.txt would change, as HTML.
fn html_proposed(out: &mut String, r: &Report) {
    let Some(p) = &r.proposed else { return };
    let _ = write!(
        out,
        "<h2>What the proposed robots.txt would change</h2><p>{} requests newly disallowed, {} newly allowed.</p><div class=\"wide\"><table><tr><th>bot</th><th>newly disallowed</th><th>newly allowed</th><th>for example</th></tr>",
        p.newly_disallowed, p.newly_allowed
    );
    for b in &p.bots {
        let example = b
            .examples
            .first()
            .map(|x| format!("{}{}: {}", on_host(&x.host), x.path, x.detail))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&b.token),
            b.newly_disallowed,
            b.newly_allowed,
            esc(&example)
        );
    }
    out.push_str("</table></div>");
}

/// What `mannerly gate` answered each bot, as HTML.
fn html_gate(out: &mut String, r: &Report) {
    let with: Vec<(&BotReport, crate::GateCounts)> =
        r.bots.iter().filter_map(|b| Some((b, b.gate?))).collect();
    if with.is_empty() {
        return;
    }
    out.push_str("<h2>At the door (mannerly gate's answers, as logged)</h2><div class=\"wide\"><table><tr><th>bot</th><th>allowed</th><th>slowed</th><th>refused</th></tr>");
    for (b, g) in with {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&name(b)),
            g.allowed,
            g.slowed,
            g.denied
        );
    }
    out.push_str("</table></div>");
}

/// Crawlers' evidence against the log, as HTML.
fn html_evidence(out: &mut String, r: &Report) {
    let with: Vec<&BotReport> = r.bots.iter().filter(|b| b.evidence.is_some()).collect();
    if with.is_empty() {
        return;
    }
    out.push_str("<h2>Crawlers' evidence, checked against this log</h2>");
    for b in with {
        let Some(e) = &b.evidence else { continue };
        let class = if e.is_clean() { "" } else { "bad" };
        let _ = write!(
            out,
            "<div class=\"card\"><div class=\"{class}\">{}</div><small>{}</small><table>",
            esc(&name(b)),
            esc(&e.summary())
        );
        for x in &e.examples {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&x.time),
                esc(&on_host(&x.host)),
                esc(&x.request),
                x.kind,
                esc(&x.detail)
            );
        }
        out.push_str("</table></div>");
    }
}

/// Every bot in one table, worst first: read this first.
fn overview(out: &mut String, r: &Report) {
    out.push_str("<h2>Every bot, worst first</h2><div class=\"wide\"><table><tr><th>bot</th><th>kind</th><th>identity</th><th>requests</th><th>disallowed</th><th>too soon</th><th>Retry-After ignored</th><th>before robots.txt</th><th>while robots.txt unavailable</th></tr>");
    for b in &r.bots {
        let c = &b.counts;
        let class = if c.violations() > 0 {
            " class=\"bad\""
        } else {
            ""
        };
        let from = b
            .address
            .as_deref()
            .map(|a| format!(" from {a}"))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td{class}>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(if b.kind == BotKind::Anonymous { "no User-Agent" } else { &b.token }),
            esc(&from),
            b.kind.as_str(),
            b.identity.as_str(),
            c.requests,
            c.disallowed,
            c.too_soon,
            c.ignored_retry_after,
            c.before_robots,
            c.while_robots_unavailable
        );
    }
    out.push_str("</table></div>");
}

/// A chart of counts over a timeline, with its time axis (first and last
/// instant) under it.
fn chart(t: &Timeline, values: &[u64], max: u64, color: &str) -> String {
    let axis = if t.width > 0 {
        let end = t.start + t.width * values.len() as i64;
        format!(
            "<div class=\"axis\"><small>{}</small><small>{}</small></div>",
            crate::stamp::rfc3339(t.start),
            crate::stamp::rfc3339(end)
        )
    } else {
        String::new()
    };
    format!("{}{axis}", bars(values, max, color))
}

fn bot_card(out: &mut String, b: &BotReport, max: u64, vmax: u64) {
    let class = if b.counts.violations() > 0 { "bad" } else { "" };
    let _ = write!(
        out,
        "<div class=\"card\"><div class=\"{class}\">{}</div><small>{}</small>",
        esc(&name(b)),
        esc(&counts_text(&b.counts))
    );
    for note in [unchecked_note(b).map(str::to_owned), ignores_note(b)]
        .into_iter()
        .flatten()
    {
        let _ = write!(out, "<p><small>{}</small></p>", esc(&note));
    }
    let _ = write!(
        out,
        "<div><small>requests over time</small>{}</div>",
        chart(&b.timeline, &b.timeline.requests, max, "#2c7be5")
    );
    if b.counts.violations() > 0 {
        let _ = write!(
            out,
            "<div><small>violations over time</small>{}</div>",
            chart(&b.timeline, &b.timeline.violations, vmax, "#c0392b")
        );
        out.push_str(
            "<table><tr><th>host</th><th>what</th><th>median gap against Crawl-delay</th></tr>",
        );
        for h in b
            .hosts
            .iter()
            .filter(|h| h.counts.violations() > 0)
            .take(10)
        {
            let chart = match (h.median_gap, h.crawl_delay) {
                (Some(m), Some(d)) => {
                    format!("{} <small>{m:.2} s against {d} s</small>", pace(m, d))
                }
                _ => "<small>no Crawl-delay</small>".into(),
            };
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{chart}</td></tr>",
                esc(&h.host),
                esc(&counts_text(&h.counts))
            );
        }
        out.push_str("</table><table><tr><th>time</th><th>request</th><th>why</th></tr>");
        for e in &b.examples {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}{}</td><td>{}: {}</td></tr>",
                esc(&e.time),
                esc(&on_host(&e.host)),
                esc(&e.path),
                e.rule.words(),
                esc(&e.detail)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</div>");
}

fn timeline_note(out: &mut String, r: &Report) {
    if let Some(t) = r
        .bots
        .first()
        .map(|b| &b.timeline)
        .filter(|t: &&Timeline| t.width > 0)
    {
        let _ = write!(
            out,
            "<p><small>Charts share one axis: bars of {} minutes each.</small></p>",
            t.width / 60_000
        );
    }
}
