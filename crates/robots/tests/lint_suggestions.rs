//! Every lint suggestion that can be applied mechanically (a replacement
//! line, or deleting the line) is applied to the real-world corpus files
//! it fires on, and the verdicts before and after are compared for every
//! agent and URL the corpus tests: a verdict may change only for a crawler
//! the change concerns (one the new line names, or one the edited line's
//! group already governed). Advice that would re-aim a group at other
//! crawlers (`MJ12bot` renamed `MJ`) fails here.
//!
//! Needs `../shared` (the corpus); says SKIPPED without it, and fails in CI
//! without it.

use std::path::Path;

use mannerly_robots::{lint, Robots};
use serde_json::Value;

/// The body with line `line` (1-based, lines ended by LF, CR or CRLF as
/// the parser counts them) replaced by `with`, or removed.
fn edit(body: &[u8], line: u32, with: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 64);
    let (mut n, mut start, mut i) = (1u32, 0usize, 0usize);
    while start < body.len() {
        // The end of this line, terminator included.
        let mut end = body.len();
        while i < body.len() {
            if body[i] == b'\n' {
                end = i + 1;
                break;
            }
            if body[i] == b'\r' {
                end = if body.get(i + 1) == Some(&b'\n') {
                    i + 2
                } else {
                    i + 1
                };
                break;
            }
            i += 1;
        }
        if n == line {
            if let Some(w) = with {
                out.extend_from_slice(w.as_bytes());
                out.push(b'\n');
            }
        } else {
            out.extend_from_slice(&body[start..end]);
        }
        n += 1;
        start = end;
        i = end;
    }
    out
}

/// The text of line `line` (1-based), without its terminator.
fn line_text(body: &[u8], line: u32) -> Option<String> {
    let edited = edit(body, line, Some("\u{0}MARK"));
    let text = String::from_utf8_lossy(body);
    let marked = String::from_utf8_lossy(&edited);
    // The original line is what stands where the mark does.
    let at = marked.find("\u{0}MARK")?;
    let rest = &text[at.min(text.len())..];
    Some(rest.split(['\r', '\n']).next().unwrap_or("").to_owned())
}

/// A suggestion that is a whole robots.txt line (`Key: value`).
fn as_line(s: &str) -> Option<&str> {
    let (key, _) = s.split_once(':')?;
    let directive = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
        && !s.contains('`');
    directive.then_some(s)
}

/// The line of the first User-agent of the group holding `line`, if any.
fn group_of(robots: &Robots, line: u32) -> Option<u32> {
    robots
        .groups()
        .iter()
        .map(|g| g.line())
        .filter(|&start| start != 0 && start <= line)
        .max()
}

fn token(agent_line: &str) -> String {
    agent_line
        .split_once(':')
        .map_or("", |(_, v)| v.trim())
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '-' || *c == '_')
        .collect::<String>()
        .to_ascii_lowercase()
}

fn run(dir: &Path) -> (usize, usize, Vec<String>) {
    let corpus = dir.join("corpus");
    let expected = std::fs::read_to_string(corpus.join("expected.jsonl")).expect("expected.jsonl");
    let (mut applied, mut checks, mut harm) = (0usize, 0usize, Vec::new());
    for line in expected.lines() {
        let entry: Value = serde_json::from_str(line).expect("json line");
        let id = entry["id"].as_str().expect("id");
        let body = std::fs::read(corpus.join("files").join(format!("{id}.txt"))).expect("file");
        let urls: Vec<String> = entry["urls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|u| u.as_str())
            .map(|p| format!("http://example.com{p}"))
            .collect();
        let agents: Vec<&str> = entry["expect"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let before = Robots::parse(&body);
        for d in lint(&body) {
            let Some(s) = d.suggestion.as_deref() else {
                continue;
            };
            let replacement = match (as_line(s), s == "delete this line") {
                (Some(l), _) => Some(Some(l)),
                (None, true) => Some(None),
                _ => None,
            };
            let Some(with) = replacement else { continue };
            applied += 1;
            // A crawler may match its cut name (as Google's parser reads
            // it) or its full name (digits included, as Majestic's MJ12bot
            // does). A renamed User-agent line must keep both: only a
            // version after the name (`Googlebot/2.1`) may go.
            if let (Some(new), Some(old)) = (
                with.filter(|l| l.to_ascii_lowercase().starts_with("user-agent")),
                line_text(&body, d.line),
            ) {
                // The value after the key, with or without its colon (the
                // parser accepts `User-agent *`).
                let value = |l: &str| match l.split_once(':') {
                    Some((_, v)) => v.trim().to_owned(),
                    None => l
                        .trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '-')
                        .trim()
                        .to_owned(),
                };
                let (old_v, new_v) = (value(&old), value(new));
                // `*` followed by anything is read as `*` by every parser.
                let kept = old_v == new_v
                    || (new_v == "*" && old_v.starts_with('*'))
                    || old_v
                        .strip_prefix(&new_v)
                        .is_some_and(|rest| rest.starts_with('/'));
                if !kept && harm.len() < 20 {
                    harm.push(format!(
                        "{id}: line {} suggests `{new}` for `{}`: a crawler matching its full name `{old_v}` would no longer match",
                        d.line,
                        old.trim()
                    ));
                }
            }
            let after = Robots::parse(&edit(&body, d.line, with));
            let named = with
                .filter(|l| l.to_ascii_lowercase().starts_with("user-agent"))
                .map(token);
            let group = group_of(&before, d.line);
            for agent in &agents {
                // Each crawler's view of both files, compiled once for its
                // URLs; a verdict is explained (the groups that decided)
                // only when the two differ.
                let (view_a, view_b) = (before.for_agent(agent), after.for_agent(agent));
                for url in &urls {
                    checks += 1;
                    if view_a.is_allowed(url) == view_b.is_allowed(url) {
                        continue;
                    }
                    let (a, b) = (before.explain(agent, url), after.explain(agent, url));
                    let concerned = named.as_deref().is_some_and(|t| {
                        agent.to_ascii_lowercase().starts_with(t) && !t.is_empty()
                    }) || group
                        .is_some_and(|g| a.groups.contains(&g) || b.groups.contains(&g));
                    if !concerned && harm.len() < 20 {
                        harm.push(format!(
                            "{id}: line {} [{}] suggestion `{s}` changes {agent} on {url} ({} -> {})",
                            d.line, d.code, a.allowed, b.allowed
                        ));
                    }
                }
            }
        }
    }
    (applied, checks, harm)
}

fn main() {
    let Some(dir) = mannerly_testsupport::shared_dir("the lint-suggestion corpus check") else {
        println!("SKIPPED: ../shared not found beside the checkout, so lint suggestions were not checked against the corpus (set MANNERLY_SHARED)");
        return;
    };
    let (applied, checks, harm) = run(&dir);
    println!(
        "lint suggestions: {applied} applied to the corpus files they fire on, {checks} verdicts compared, {} changed for a crawler the suggestion does not concern",
        harm.len()
    );
    for h in &harm {
        println!("  {h}");
    }
    if applied == 0 || !harm.is_empty() {
        std::process::exit(1);
    }
}
