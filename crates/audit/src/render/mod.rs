//! A report for people: the terminal text (crawlers that broke rules
//! worst first, then spoofers, suspects, the clients robots.txt does not
//! govern, everyone else) and a self-contained HTML page with charts
//! drawn as inline SVG (no script, no outside request). Both say the same
//! things in the same words, from the helpers here.

mod html;
mod text;

pub use crate::words::plural;
pub use html::html;
pub use text::text;

use crate::kinds::BotKind;
use crate::report::{BotReport, Counts, Identity, Report};

/// Bots listed under "everyone else", at most.
const OTHERS: usize = 30;

/// User-Agents of signed-in requests shown, at most (the JSON has more).
const SIGNED_IN_SHOWN: usize = 5;

/// What a client did, with the rules it broke, in words.
fn counts_text(c: &Counts) -> String {
    let mut parts = vec![plural(c.requests, "request", "requests")];
    let mut add = |n: u64, one: &str, many: &str| {
        if n > 0 {
            parts.push(plural(n, one, many));
        }
    };
    add(c.robots_fetches, "robots.txt read", "robots.txt reads");
    add(c.disallowed, "to a disallowed path", "to disallowed paths");
    add(
        c.too_soon,
        "sooner than Crawl-delay",
        "sooner than Crawl-delay",
    );
    let retry = match c.ignored_retry_after_assumed {
        0 => "inside Retry-After".to_owned(),
        n if n == c.ignored_retry_after => "inside Retry-After (the wait assumed)".to_owned(),
        n => format!("inside Retry-After ({n} of the waits assumed)"),
    };
    add(c.ignored_retry_after, &retry, &retry);
    add(
        c.before_robots,
        "before reading robots.txt",
        "before reading robots.txt",
    );
    add(
        c.while_robots_unavailable,
        "while robots.txt was unavailable",
        "while robots.txt was unavailable",
    );
    parts.join(", ")
}

/// A client's name as a report says it: who, from where, how sure, whose.
fn name(b: &BotReport) -> String {
    let who = if b.kind == BotKind::Anonymous {
        "no User-Agent"
    } else {
        &b.token
    };
    let from = b
        .address
        .as_deref()
        .map(|a| format!(" from {a}"))
        .unwrap_or_default();
    // "unverified" says something only of a name its operator lets one
    // check; of anyone's tool or an unknown name it is noise.
    let mut about = Vec::new();
    if b.verifiable || b.identity != Identity::Unverified {
        about.push(b.identity.as_str().to_owned());
    }
    if b.kind != BotKind::Crawler {
        about.push(b.kind.as_str().replace('-', " "));
    }
    // A scanner probes for weaknesses; a site owner reads it apart from
    // a crawler that indexes.
    if b.category == Some(crate::kinds::Category::SecurityScanner) {
        about.push("security scanner".into());
    }
    // Not `Hatena (Hatena)`: an operator named as the crawler is not
    // said twice.
    match &b.operator {
        Some(o) if !o.eq_ignore_ascii_case(&b.token) => about.push(o.clone()),
        _ => {}
    }
    if about.is_empty() {
        format!("{who}{from}")
    } else {
        format!("{who}{from} ({})", about.join(", "))
    }
}

/// Why an unverified verdict may not be the crawler's: its operator
/// publishes a check that could not be made.
fn unchecked_note(b: &BotReport) -> Option<&'static str> {
    (b.identity == Identity::Unverified && b.verifiable).then_some(
        "identity not checked (no ranges, keys or DNS answer): these requests may be anyone's using the name",
    )
}

/// What a crawler does not read, as its operator documents, and what the
/// site can do instead.
fn ignores_note(b: &BotReport) -> Option<String> {
    let source = b.ignores.get("crawl-delay")?;
    let delayed = b.hosts.iter().any(|h| h.crawl_delay.is_some());
    if !delayed && b.counts.under_ignored_delay == 0 {
        return None;
    }
    Some(format!(
        "ignores Crawl-delay, as its operator documents ({source}); {} came sooner than it. To slow it, answer 429 or 503 while busy (it backs off), or set its rate where its operator offers",
        plural(b.counts.under_ignored_delay, "request", "requests")
    ))
}

/// How much of its span the log covers, when holes were found.
fn coverage_note(r: &Report) -> Option<String> {
    let c = r.coverage.filter(|c| c.holes > 0)?;
    Some(format!(
        "the log covers {} of its span ({}, the longest {}): pace and robots.txt verdicts a hole could hide are withheld",
        share(c.covered()),
        plural(c.holes, "hole", "holes"),
        duration(c.longest_hole_seconds)
    ))
}

/// A share of a log with holes, as a percentage that never rounds to
/// none or to all of it.
fn share(covered: f64) -> String {
    if covered < 0.0005 {
        "under 0.1%".into()
    } else if covered >= 0.9995 {
        "over 99.9%".into()
    } else {
        format!("{:.1}%", covered * 100.0)
    }
}

/// The robots.txt files judged against, a line each: for which host,
/// from when, and where from.
fn robots_used(r: &Report) -> Vec<String> {
    if r.robots.is_empty() {
        return vec!["no robots.txt given: paths and Crawl-delay were not judged".into()];
    }
    r.robots
        .iter()
        .map(|s| {
            let since = s
                .since
                .as_deref()
                .map(|t| format!(" from {t}"))
                .unwrap_or_default();
            format!("robots.txt for {}{since}: {}", s.host, s.source)
        })
        .collect()
}

/// How identities were checked, in a line.
fn identity_checked(r: &Report) -> &'static str {
    if r.identity_online {
        "identity checked online (operators' ranges and keys, reverse DNS, crawlers' pages)"
    } else {
        "identity checked offline: only against the ranges and keys given, and those cached"
    }
}

/// Seconds as people say them.
fn duration(seconds: f64) -> String {
    if seconds >= 2.0 * 86_400.0 {
        format!("{:.0} days", seconds / 86_400.0)
    } else if seconds >= 7200.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else if seconds >= 120.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{seconds:.1} s")
    }
}

/// Crawlers that broke nothing and are not spoofers.
fn clean_crawlers(r: &Report) -> impl Iterator<Item = &BotReport> {
    r.of_kind(BotKind::Crawler)
        .filter(|b| b.counts.violations() == 0)
}

/// The kinds robots.txt does not govern, each listed apart.
fn apart_kinds() -> impl Iterator<Item = BotKind> {
    BotKind::ALL.into_iter().filter(|k| !k.judged())
}

/// The host as a report shows it: nothing when the log names none.
fn on_host(host: &str) -> String {
    if host == "-" {
        String::new()
    } else {
        format!("{host} ")
    }
}

/// The crawlers graded against the Crawler Best Practices, the busiest
/// first.
fn graded(r: &Report) -> Vec<&BotReport> {
    let mut graded: Vec<&BotReport> = r
        .bots
        .iter()
        .filter(|b| !b.practices.is_empty() && b.counts.requests > 0 && b.kind.judged())
        .collect();
    graded.sort_by(|x, y| {
        y.counts
            .requests
            .cmp(&x.counts.requests)
            .then(x.token.cmp(&y.token))
    });
    graded
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn a_share_with_holes_never_reads_as_none_or_all() {
        assert_eq!(share(0.0), "under 0.1%");
        assert_eq!(share(0.0004), "under 0.1%");
        assert_eq!(share(0.0005), "0.1%");
        assert_eq!(share(0.016), "1.6%");
        assert_eq!(share(0.9994), "99.9%");
        assert_eq!(share(0.99998), "over 99.9%");
    }
}
