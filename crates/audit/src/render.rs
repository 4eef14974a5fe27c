//! A report for people: the terminal text (rule-breakers worst first,
//! then spoofers, suspects, everyone else) and a self-contained HTML page
//! with charts drawn as inline SVG (no script, no outside request).

use std::fmt::Write;

use crate::kinds::BotKind;
use crate::report::{BotReport, Counts, Identity, Report, Timeline};

/// Bots listed under "everyone else", at most.
const OTHERS: usize = 30;

fn counts_text(c: &Counts) -> String {
    let mut parts = vec![format!("{} requests", c.requests)];
    let mut add = |n: u64, what: &str| {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    };
    add(c.robots_fetches, "robots.txt reads");
    add(c.disallowed, "disallowed");
    add(c.too_soon, "too soon");
    add(c.ignored_retry_after, "inside Retry-After");
    add(c.before_robots, "before robots.txt");
    add(
        c.while_robots_unavailable,
        "while robots.txt was unavailable",
    );
    parts.join(", ")
}

fn name(b: &BotReport) -> String {
    let operator = b
        .operator
        .as_deref()
        .map(|o| format!(", {o}"))
        .unwrap_or_default();
    let from = b
        .address
        .as_deref()
        .map(|a| format!(" from {a}"))
        .unwrap_or_default();
    format!("{}{from} ({}{operator})", b.token, b.identity.as_str())
}

/// The terminal report: what was read, then the rule breakers, the
/// spoofers, the suspects and everyone else.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    text_head(&mut out, r);
    text_breakers(&mut out, r);
    text_impostors(&mut out, r);
    text_evidence(&mut out, r);
    text_gate(&mut out, r);
    text_user_triggered(&mut out, r);
    text_proposed(&mut out, r);
    text_others(&mut out, r);
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
        "mannerly audit: {} lines in {}; {} unread",
        r.lines,
        formats.join(", "),
        r.unparsed
    );
    if let Some((a, b)) = &r.span {
        let _ = writeln!(out, "from {a} to {b}");
    }
    if r.robots.is_empty() {
        let _ = writeln!(
            out,
            "no robots.txt given: paths and Crawl-delay were not judged"
        );
    }
    for s in &r.robots {
        let since = s
            .since
            .as_deref()
            .map(|t| format!(" from {t}"))
            .unwrap_or_default();
        let _ = writeln!(out, "robots.txt for {}{since}: {}", s.host, s.source);
    }
}

/// Bots that broke rules, each with its worst hosts and examples.
fn text_breakers(out: &mut String, r: &Report) {
    let breakers: Vec<&BotReport> = r.rule_breakers().collect();
    section(
        out,
        "Bots that broke rules, worst first",
        breakers.is_empty(),
    );
    for b in &breakers {
        let _ = writeln!(out, "  {}: {}", name(b), counts_text(&b.counts));
        for h in b.hosts.iter().filter(|h| h.counts.violations() > 0).take(5) {
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
                "    {} {} {}{} [{}] {}",
                e.time,
                e.host,
                e.path,
                e.status.map(|s| format!(" {s}")).unwrap_or_default(),
                e.rule.as_str(),
                e.detail
            );
        }
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
                "    {} {} {} [{}] {}",
                x.time, x.host, x.request, x.kind, x.detail
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

/// Spoofers (a crawler's name, not its operator's addresses) and suspects
/// (a browser's name, a crawler's behaviour).
fn text_impostors(out: &mut String, r: &Report) {
    let spoofers: Vec<&BotReport> = r
        .bots
        .iter()
        .filter(|b| b.identity == Identity::Spoofed && b.counts.violations() == 0)
        .collect();
    section(
        out,
        "Spoofers (claimed a crawler, failed its operator's check)",
        spoofers.is_empty(),
    );
    for b in spoofers {
        let _ = writeln!(
            out,
            "  {}: {} from {} addresses",
            name(b),
            counts_text(&b.counts),
            b.clients
        );
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

/// Bots that broke nothing, and the browsers' requests.
/// What a proposed robots.txt would change, when one was given.
fn text_proposed(out: &mut String, r: &Report) {
    let Some(p) = &r.proposed else { return };
    section(
        out,
        &format!(
            "What the proposed robots.txt would change: {} requests newly disallowed, {} newly allowed",
            p.newly_disallowed, p.newly_allowed
        ),
        p.bots.is_empty(),
    );
    for b in &p.bots {
        let _ = writeln!(
            out,
            "  {}: {} newly disallowed, {} newly allowed",
            b.token, b.newly_disallowed, b.newly_allowed
        );
        for x in &b.examples {
            let _ = writeln!(out, "    {} {} {} {}", x.time, x.host, x.path, x.detail);
        }
    }
}

/// Fetchers whose operators state robots.txt does not govern them: what
/// they did, apart, judged by no rule.
fn text_user_triggered(out: &mut String, r: &Report) {
    let apart: Vec<&BotReport> = r
        .bots
        .iter()
        .filter(|b| b.kind == BotKind::UserTriggered)
        .collect();
    if apart.is_empty() {
        return;
    }
    section(
        out,
        "User-triggered fetchers (a person asked; their operators state robots.txt does not govern them)",
        false,
    );
    for b in apart {
        let _ = writeln!(
            out,
            "  {}: {} requests, {} robots.txt reads; see {}",
            name(b),
            b.counts.requests,
            b.counts.robots_fetches,
            b.kind_source
                .as_deref()
                .unwrap_or("its operator's documentation")
        );
    }
}

fn text_others(out: &mut String, r: &Report) {
    let others: Vec<&BotReport> = r
        .bots
        .iter()
        .filter(|b| {
            b.counts.violations() == 0
                && b.identity != Identity::Spoofed
                && b.kind != BotKind::UserTriggered
        })
        .collect();
    section(out, "Everyone else", others.is_empty());
    for b in others.iter().take(OTHERS) {
        let _ = writeln!(out, "  {}: {}", name(b), counts_text(&b.counts));
    }
    if others.len() > OTHERS {
        let _ = writeln!(
            out,
            "  ... and {} more (--json lists them all)",
            others.len() - OTHERS
        );
    }
    let _ = writeln!(out, "  browsers: {} requests", r.browser_requests);
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
        let _ = writeln!(out, "{}: {} lines unread, such as:", f.path, f.unparsed);
        for (n, why) in &f.unparsed_examples {
            let _ = writeln!(out, "  line {n}: {why}");
        }
    }
    if r.late > 0 {
        let _ = writeln!(
            out,
            "{} requests came later than --window allows; judged as they came",
            r.late
        );
    }
    for n in &r.identity_notes {
        let _ = writeln!(out, "identity: {n}");
    }
}

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
        "<p>{} lines read{span}; {} unread; {} bots, {} broke rules; {} suspects.</p>",
        r.lines,
        r.unparsed,
        r.bots.len(),
        r.rule_breakers().count(),
        r.suspects.len()
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
    overview(&mut out, r);
    out.push_str("<h2>Violation-breakers, worst first</h2>");
    for b in r.rule_breakers() {
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
    let user_triggered = |b: &&BotReport| b.kind == BotKind::UserTriggered;
    if r.bots.iter().any(|b| user_triggered(&b)) {
        out.push_str("<h2>User-triggered fetchers: a person asked, and their operators state robots.txt does not govern them</h2>");
        for b in r.bots.iter().filter(user_triggered) {
            bot_card(&mut out, b, max, vmax);
        }
    }
    out.push_str("<h2>Everyone else</h2>");
    for b in r
        .bots
        .iter()
        .filter(|b| b.counts.violations() == 0 && !user_triggered(b))
        .take(OTHERS)
    {
        bot_card(&mut out, b, max, vmax);
    }
    timeline_note(&mut out, r);
    out.push_str("</body></html>\n");
    out
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
            .map(|x| format!("{} {}: {}", x.host, x.path, x.detail))
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
                esc(&x.host),
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
            esc(&b.token),
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
                "<tr><td>{}</td><td>{} {}</td><td>{}: {}</td></tr>",
                esc(&e.time),
                esc(&e.host),
                esc(&e.path),
                e.rule.as_str(),
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
