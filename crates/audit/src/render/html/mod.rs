//! The self-contained HTML report: the answer on the first screen (what
//! went wrong and who, the counters, requests over time by kind, the
//! inputs), then every client in one sortable table, its name linking to
//! its card; cards of rule-breakers open, others folded, quiet clients in
//! the table only. Readable without script (a small inline one sorts the
//! table), and fit for any screen: wide tables scroll in their own box and
//! no word is broken inside.

use std::fmt::Write;

use crate::report::{BotReport, Report};

mod cards;
mod clients;
mod sections;
mod summary;

/// Requests below which a client that broke nothing has no card: the
/// table says all there is.
const QUIET: u64 = 20;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Visible text, escaped, each word that holds a hyphen, a slash or a
/// dot kept whole (a browser would break a line after a hyphen: a token,
/// a path, an address must not be split).
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for (i, word) in s.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let inner = word.trim_end_matches([',', ';', ':', '.']);
        if inner.contains(['-', '/', '.', '_', '=', '?', '&']) {
            out.push_str("<span class=\"w\">");
            out.push_str(&esc(word));
            out.push_str("</span>");
        } else {
            out.push_str(&esc(word));
        }
    }
    out
}

/// An instant on a chart's axis, to the minute (UTC), kept on one line.
fn tick(ms: i64) -> String {
    let t = crate::stamp::rfc3339(ms);
    let minute = t.get(..16).unwrap_or(&t).replacen('T', " ", 1);
    format!("<small class=\"w\">{minute}</small>")
}

/// The anchor of a client's card (or row), by its place in the report.
fn anchor(i: usize) -> String {
    format!("c{i}")
}

/// Whether a client has a card: any but a spoofer (they have their own
/// table) that broke a rule, is not quiet, or has a note to read (what
/// its operator documents it ignores).
fn has_card(b: &BotReport) -> bool {
    let said =
        b.counts.violations() > 0 || b.counts.requests >= QUIET || super::ignores_note(b).is_some();
    !b.spoofed() && said
}

/// A name linked to where the report says more of it (its card, or its
/// row among the spoofers), or plain.
fn linked(r: &Report, i: usize, text: &str) -> String {
    let b = &r.bots[i];
    if has_card(b) || b.spoofed() {
        format!("<a href=\"#{}\">{}</a>", anchor(i), self::text(text))
    } else {
        self::text(text)
    }
}

const STYLE: &str = "*{box-sizing:border-box}body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1220px;padding:12px;color:#222}\
h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.15em;margin:1em 0 .4em}h3{font-size:1em;margin:.8em 0 .3em}a{color:#1a5fb4}\
table{border-collapse:collapse;font-size:14px;line-height:1.25}td,th{padding:2px 8px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.wide{overflow-x:auto;max-width:100%}#clients td{white-space:nowrap}\
.counters{display:grid;grid-template-columns:repeat(auto-fill,minmax(125px,1fr));gap:8px;margin:10px 0}\
.counter{border:1px solid #ddd;border-radius:6px;padding:4px 10px}.counter b{display:block;font-size:1.5em}.counter.bad b{color:#c0392b}\
.counter small{display:block}.counter.two{grid-column:span 2}.chart{width:100%;height:40px;background:#f6f6f6;display:block}.kinds{width:100%;height:90px;background:#f6f6f6;display:block}\
.axis{display:flex;justify-content:space-between;gap:8px}.legend span{display:inline-block;margin-right:12px}\
.sw{display:inline-block;width:10px;height:10px;margin-right:4px}.pace{width:100%;max-width:200px;height:14px}\
.bad{color:#c0392b;font-weight:600}details.card{border:1px solid #ddd;border-radius:6px;padding:4px 8px;margin:4px 0;overflow-x:auto}\
.folded{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:0 8px;align-items:start}.folded details.card[open]{grid-column:1/-1}.folded summary{font-size:14px}\
summary{cursor:pointer}small{color:#666}code{font-size:.9em}th[data-sort]{cursor:pointer}.w{white-space:nowrap}th{vertical-align:bottom}ul{margin:.3em 0}p{margin:.4em 0}.pace{vertical-align:middle}\
@media (max-width:600px){body{font-size:14px;padding:8px}td,th{padding:2px 5px}}";

/// Sorts the clients' table by the column clicked (numbers as numbers).
const SCRIPT: &str = "document.querySelectorAll('th[data-sort]').forEach(function(th){th.addEventListener('click',function(){\
var t=th.closest('table'),b=t.tBodies[0],i=th.cellIndex,d=th.dataset.dir==='a'?'d':'a';th.dataset.dir=d;\
var rows=Array.prototype.slice.call(b.rows);rows.sort(function(x,y){var p=x.cells[i].innerText,q=y.cells[i].innerText,\
m=parseFloat(p),n=parseFloat(q),c=isNaN(m)||isNaN(n)?p.localeCompare(q):m-n;return d==='a'?c:-c;});\
rows.forEach(function(r){b.appendChild(r);});});});";

/// The self-contained HTML report.
pub fn html(r: &Report) -> String {
    let mut out = String::from("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>mannerly audit</title><style>");
    out.push_str(STYLE);
    out.push_str(
        "</style></head><body><h1>Who crawled this site, and did they keep its rules?</h1>",
    );
    summary::first_screen(&mut out, r);
    clients::table(&mut out, r);
    cards::breakers(&mut out, r);
    clients::spoofers(&mut out, r);
    sections::suspects(&mut out, r);
    sections::proposed(&mut out, r);
    sections::rules(&mut out, r);
    sections::evidence(&mut out, r);
    sections::gate(&mut out, r);
    cards::others(&mut out, r);
    sections::practices(&mut out, r);
    let _ = writeln!(out, "<script>{SCRIPT}</script></body></html>");
    out
}
