//! The report's other sections: suspects, what a proposed robots.txt
//! would change, the server rules written, crawlers' evidence, the gate's
//! answers, and the Crawler Best Practices grades.

use std::fmt::Write;

use super::super::{graded, name, on_host, OTHERS};
use super::{esc, linked, text};
use crate::report::{BotReport, Report};

/// Browsers' User-Agents that behaved like crawlers.
pub(super) fn suspects(out: &mut String, r: &Report) {
    if r.suspects.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"suspects\">Suspects: a browser's User-Agent, a crawler's behaviour</h2><div class=\"wide\"><table><tr><th>client</th><th>User-Agent</th><th>evidence</th></tr>");
    for s in &r.suspects {
        let _ = write!(
            out,
            "<tr><td>{}</td><td><small>{}</small></td><td>{}</td></tr>",
            text(&s.client),
            text(&s.user_agent),
            text(&s.evidence.join("; "))
        );
    }
    out.push_str("</table></div>");
}

/// What a proposed robots.txt would change.
pub(super) fn proposed(out: &mut String, r: &Report) {
    let Some(p) = &r.proposed else { return };
    let _ = write!(
        out,
        "<h2>What the proposed robots.txt would change</h2><p>{} requests newly disallowed, {} newly allowed.</p><div class=\"wide\"><table><tr><th>bot</th><th>kind</th><th>identity</th><th class=\"n\">newly disallowed</th><th class=\"n\">newly allowed</th><th>for example</th></tr>",
        p.newly_disallowed, p.newly_allowed
    );
    for b in &p.bots {
        let example = b
            .examples
            .first()
            .map(|x| {
                let from = x
                    .client
                    .as_deref()
                    .map(|c| format!(" from {c}"))
                    .unwrap_or_default();
                format!(
                    "{}{}{from}: {} (in force: {})",
                    on_host(&x.host),
                    x.path,
                    x.detail,
                    x.before
                )
            })
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            text(&b.token),
            text(&b.kind.as_str().replace('-', " ")),
            b.identity.as_str(),
            b.newly_disallowed,
            b.newly_allowed,
            text(&example)
        );
    }
    out.push_str("</table></div>");
}

/// The server rules written, as the file says them.
pub(super) fn rules(out: &mut String, r: &Report) {
    if let Some((server, file)) = &r.rules {
        let _ = write!(
            out,
            "<h2>Server rules ({})</h2><details><summary>the file</summary><div class=\"wide\"><pre>{}</pre></div></details>",
            text(server),
            esc(file)
        );
    }
}

/// What `mannerly gate` answered each bot, as logged.
pub(super) fn gate(out: &mut String, r: &Report) {
    let with: Vec<(usize, crate::GateCounts)> = r
        .bots
        .iter()
        .enumerate()
        .filter_map(|(i, b)| Some((i, b.gate?)))
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str("<h2>At the door (mannerly gate's answers, as logged)</h2><div class=\"wide\"><table><tr><th>bot</th><th class=\"n\">allowed</th><th class=\"n\">slowed</th><th class=\"n\">refused</th></tr>");
    for (i, g) in with {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            linked(r, i, &name(&r.bots[i])),
            g.allowed,
            g.slowed,
            g.denied
        );
    }
    out.push_str("</table></div>");
}

/// Crawlers' evidence, checked against the log.
pub(super) fn evidence(out: &mut String, r: &Report) {
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
            "<details class=\"card\" open><summary><span class=\"{class}\">{}</span> <small>{}</small></summary><div class=\"wide\"><table>",
            text(&name(b)),
            text(&e.summary())
        );
        for x in &e.examples {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                text(&x.time),
                text(&on_host(&x.host)),
                text(&x.request),
                x.kind,
                text(&x.detail)
            );
        }
        out.push_str("</table></div></details>");
    }
}

/// Each crawler against the Crawler Best Practices: a row each, a cell
/// a practice, what the log showed under the grade.
pub(super) fn practices(out: &mut String, r: &Report) {
    let graded = graded(r);
    if graded.is_empty() {
        return;
    }
    out.push_str("<h2>Crawler Best Practices, as this log shows them</h2><details><summary>every crawler's grades</summary><div class=\"wide\"><table><tr><th>crawler</th>");
    for p in &graded[0].practices {
        let _ = write!(out, "<th>{}</th>", text(p.practice));
    }
    out.push_str("</tr>");
    for b in graded.iter().take(OTHERS) {
        let i = r.bots.iter().position(|x| std::ptr::eq(x, *b)).unwrap_or(0);
        let _ = write!(out, "<tr><td>{}</td>", linked(r, i, &name(b)));
        for p in &b.practices {
            let class = match p.grade {
                crate::practices::Grade::NotMet => " class=\"bad\"",
                _ => "",
            };
            let _ = write!(
                out,
                "<td{class}>{}<br><small>{}</small></td>",
                text(p.grade.as_str()),
                text(&p.shown)
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div></details>");
}
