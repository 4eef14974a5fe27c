//! Every client in one sortable table, and the spoofers in theirs.

use std::fmt::Write;

use super::super::{name, plural, SIGNED_IN_SHOWN};
use super::{anchor, linked, text};
use crate::kinds::BotKind;
use crate::report::Report;

/// Every client: kind, identity, requests and each verdict's count, its
/// name linking to its card.
pub(super) fn table(out: &mut String, r: &Report) {
    out.push_str("<h2>Every client</h2><small>Click a heading to sort.</small><div class=\"wide\"><table id=\"clients\"><thead><tr>");
    for (h, numeric) in [
        ("client", false),
        ("kind", false),
        ("identity", false),
        ("requests", true),
        ("disallowed", true),
        ("too soon", true),
        ("in Retry-After", true),
        ("before robots.txt", true),
        ("robots.txt unavailable", true),
    ] {
        let class = if numeric { " class=\"n\"" } else { "" };
        let _ = write!(out, "<th{class} data-sort>{}</th>", text(h));
    }
    out.push_str("</tr></thead><tbody>");
    for (i, b) in r.bots.iter().enumerate() {
        let c = &b.counts;
        let who = match b.kind {
            BotKind::Anonymous => "no User-Agent".to_owned(),
            _ => b.token.clone(),
        };
        let from = b
            .address
            .as_deref()
            .map(|a| format!(" {a}"))
            .unwrap_or_default();
        let class = if c.violations() > 0 || b.spoofed() {
            " class=\"bad\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<tr><td{class}>{}<small>{}</small></td><td>{}</td><td>{}</td>",
            linked(r, i, &who),
            text(&from),
            b.kind.as_str().replace('-', " "),
            b.identity.as_str()
        );
        for n in [
            c.requests,
            c.disallowed,
            c.too_soon,
            c.ignored_retry_after,
            c.before_robots,
            c.while_robots_unavailable,
        ] {
            let _ = write!(out, "<td class=\"n\">{n}</td>");
        }
        out.push_str("</tr>");
    }
    let _ = write!(
        out,
        "</tbody></table></div><small>Browsers made {} besides",
        plural(r.browser_requests, "request", "requests")
    );
    if r.signed_in_requests > 0 {
        let _ = write!(
            out,
            "; {} came with credentials the server accepted (the site's own users, not judged",
            plural(r.signed_in_requests, "request", "requests")
        );
        let agents: Vec<String> = r
            .signed_in
            .iter()
            .take(SIGNED_IN_SHOWN)
            .map(|s| format!("{}: {}", text(&s.user_agent), s.requests))
            .collect();
        if !agents.is_empty() {
            let _ = write!(out, "; by User-Agent, {}", agents.join(", "));
        }
        out.push(')');
    }
    out.push_str(".</small>");
}

/// Requests in a crawler's name that failed its operator's check: a row
/// each, with what they did.
pub(super) fn spoofers(out: &mut String, r: &Report) {
    out.push_str(
        "<h2 id=\"spoofers\">Spoofers: a crawler's name, from outside its operator's ranges</h2>",
    );
    let rows: Vec<(usize, &crate::report::BotReport)> = r
        .bots
        .iter()
        .enumerate()
        .filter(|(_, b)| b.spoofed())
        .collect();
    if rows.is_empty() {
        out.push_str("<p>None: every request in a checkable crawler's name checked out, or could not be checked (said in its card).</p>");
        return;
    }
    out.push_str("<div class=\"wide\"><table><thead><tr><th>claimed</th><th>from</th><th class=\"n\">requests</th><th>what it did</th></tr></thead><tbody>");
    for (i, b) in rows {
        let _ = write!(
            out,
            "<tr id=\"{}\"><td class=\"bad\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            anchor(i),
            text(&name(b)),
            text(b.address.as_deref().unwrap_or("-")),
            b.counts.requests,
            text(&super::super::counts_text(&b.counts))
        );
    }
    out.push_str("</tbody></table></div>");
}
