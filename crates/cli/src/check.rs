//! `mannerly check`.

use std::io::{self, BufRead, BufWriter, Write};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use mannerly_fetch::{Access, Origin};
use mannerly_robots::{agent_note, as_requested, AgentMatch, Robots, Severity, Verdict};

use crate::fetch::fetch_origin;
use crate::input::{is_url, read_robots, RobotsArgs};
use crate::text::clean;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: RobotsArgs,
    /// The crawler's product token, e.g. `Googlebot` (compared whole and
    /// case-insensitively with each group's user-agent).
    #[arg(long, short = 'a', value_name = "UA", value_parser = agent_value)]
    agent: String,
    /// URLs (or paths) to check; when none are given, one per line from
    /// standard input.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
}

pub fn run(args: Args) -> Result<u8> {
    let src = &args.source;
    if src.robots == "-" && args.urls.is_empty() {
        bail!("robots.txt comes from standard input ('-'), so give the URLs to check as arguments");
    }
    let options = src.options()?;
    let mut stderr = io::stderr();
    warn_about_agent(&args.agent, &mut stderr)?;
    let origin = if is_url(&src.robots) {
        Some(Origin::of(&src.robots)?)
    } else {
        None
    };
    let is_error = |d: &mannerly_robots::Diagnostic| d.severity == Severity::Error;
    let (robots, name, errors): (Arc<Robots>, String, usize) = if let Some(origin) = &origin {
        let (decision, _) = fetch_origin(origin, src.rfc, None, 30, src.max_bytes)?;
        match decision.access {
            Access::Rules(r) => {
                let errors = r.diagnostics().iter().filter(|d| is_error(d)).count();
                (r, origin.robots_url(), errors)
            }
            Access::AllowAll => return fixed_verdicts(&args, origin, true, &decision.reason),
            Access::DisallowAll => return fixed_verdicts(&args, origin, false, &decision.reason),
        }
    } else {
        let source = read_robots(&src.robots, src.max_bytes)?;
        // As many as `mannerly lint` will show (a UTF-16 file is one
        // error, not a NUL byte a line).
        let robots = Robots::parse_with(&source.body, options);
        let lint = mannerly_robots::lint_parsed(&robots, &source.body);
        let errors = lint.iter().filter(|d| is_error(d)).count();
        (Arc::new(robots), source.name, errors)
    };
    if errors > 0 {
        writeln!(
            stderr,
            "mannerly: note: {name} has {errors} error(s) that change what it means; run `mannerly lint {}` to see them",
            src.robots
        )?;
    }
    let view = robots.for_agent(&args.agent);
    let mut any_disallowed = false;
    let foreign = for_each_url(&args, origin.as_ref(), |url, out| {
        // Judged as a crawler requests it (`/wiki/Käyttäjä:` is sent
        // percent-encoded); the answer names that form when it differs.
        let judged = as_requested(url);
        let requested = (judged != url).then_some(judged.as_ref());
        let verdict = view.explain(&judged);
        any_disallowed |= !verdict.allowed;
        let content_usage = robots
            .content_usage(&args.agent, &judged)
            .filter(|u| !u.lines.is_empty());
        if args.source.json {
            serde_json::to_writer(
                &mut *out,
                &JsonVerdict {
                    url,
                    requested,
                    agent: &args.agent,
                    verdict: &verdict,
                    content_usage,
                },
            )?;
            writeln!(out)?;
        } else {
            let mut line = text_line(url, requested, &verdict);
            if let Some(u) = &content_usage {
                let lines: Vec<String> = u.lines.iter().map(u32::to_string).collect();
                line.push_str(&format!(
                    "\tcontent-usage {} (line {})",
                    u.summary(),
                    lines.join(", ")
                ));
            }
            writeln!(out, "{line}")?;
        }
        Ok(())
    })?;
    Ok(exit_code(any_disallowed, foreign))
}

/// 1 when a URL is disallowed; 2 when some were not checked (another
/// origin's), which is a usage error.
fn exit_code(any_disallowed: bool, foreign: usize) -> u8 {
    if foreign > 0 {
        2
    } else {
        u8::from(any_disallowed)
    }
}

/// `--agent`: not blank (a blank one names no group, so every answer
/// would be the `*` group's without a word).
fn agent_value(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("name a crawler's product token, e.g. Googlebot".into());
    }
    Ok(s.to_owned())
}

fn warn_about_agent(agent: &str, stderr: &mut io::Stderr) -> Result<()> {
    if let Some(note) = agent_note(agent) {
        writeln!(stderr, "mannerly: note: {note}")?;
    }
    Ok(())
}

/// Calls `f` for each URL: the arguments, or the lines of standard input.
/// When robots.txt came from `origin`, a full URL of another origin is not
/// checked (that origin's own robots.txt rules it): it is named on stderr
/// and counted, and the count returned.
fn for_each_url(
    args: &Args,
    origin: Option<&Origin>,
    mut f: impl FnMut(&str, &mut BufWriter<io::StdoutLock<'_>>) -> Result<()>,
) -> Result<usize> {
    let mut out = BufWriter::new(io::stdout().lock());
    let mut foreign = 0;
    let mut f = |url: &str, out: &mut BufWriter<io::StdoutLock<'_>>| -> Result<()> {
        if let Some(o) = origin {
            if is_url(url) && Origin::of(url).ok().as_ref() != Some(o) {
                foreign += 1;
                eprintln!(
                    "mannerly: {}: not checked: it is not on {o}, and a robots.txt rules only its own origin",
                    crate::text::clean(url)
                );
                return Ok(());
            }
        }
        f(url, out)
    };
    if args.urls.is_empty() {
        let stdin = io::stdin();
        for (i, line) in stdin.lock().split(b'\n').enumerate() {
            let line = line.context("cannot read URLs from standard input")?;
            let Ok(text) = std::str::from_utf8(&line) else {
                bail!("line {} of standard input is not UTF-8; URLs must be text (percent-encode other bytes)", i + 1);
            };
            let url = text.trim();
            if url.is_empty() {
                continue;
            }
            f(url, &mut out)?;
        }
    } else {
        for url in &args.urls {
            f(url, &mut out)?;
        }
    }
    out.flush()?;
    Ok(foreign)
}

/// Every URL gets the same answer: robots.txt was unavailable (allow-all)
/// or unreachable (disallow-all). The reason says which and why.
fn fixed_verdicts(args: &Args, origin: &Origin, allowed: bool, reason: &str) -> Result<u8> {
    #[derive(serde::Serialize)]
    struct Json<'a> {
        url: &'a str,
        agent: &'a str,
        allowed: bool,
        rule: Option<()>,
        access: &'static str,
        reason: &'a str,
    }
    let word = if allowed { "allowed" } else { "disallowed" };
    let access = if allowed { "allow-all" } else { "disallow-all" };
    let foreign = for_each_url(args, Some(origin), |url, out| {
        if args.source.json {
            let json = Json {
                url,
                agent: &args.agent,
                allowed,
                rule: None,
                access,
                reason,
            };
            serde_json::to_writer(&mut *out, &json)?;
            writeln!(out)?;
        } else {
            writeln!(out, "{word}\t{}\trobots.txt: {}", clean(url), clean(reason))?;
        }
        Ok(())
    })?;
    Ok(exit_code(!allowed, foreign))
}

#[derive(serde::Serialize)]
struct JsonVerdict<'a> {
    url: &'a str,
    /// The URL as a crawler requests it, when that differs from `url`.
    #[serde(skip_serializing_if = "Option::is_none")]
    requested: Option<&'a str>,
    agent: &'a str,
    #[serde(flatten)]
    verdict: &'a Verdict,
    /// The AIPREF Content-Usage rules that apply, when any do.
    #[serde(skip_serializing_if = "Option::is_none")]
    content_usage: Option<mannerly_robots::ContentUsage>,
}

fn text_line(url: &str, requested: Option<&str>, v: &Verdict) -> String {
    let word = if v.allowed { "allowed" } else { "disallowed" };
    let why = match &v.rule {
        Some(r)
            if r.effective_pattern != r.pattern
                && r.effective_pattern.ends_with('$')
                && r.pattern.contains("index.htm") =>
        {
            format!(
                "line {}: {}: {} (which also allows {})",
                r.line,
                r.kind.directive(),
                r.pattern,
                r.effective_pattern.trim_end_matches('$')
            )
        }
        Some(r) if r.pattern.is_empty() => format!(
            "line {}: {}: (empty, blocks nothing)",
            r.line,
            r.kind.directive()
        ),
        Some(r) => format!("line {}: {}: {}", r.line, r.kind.directive(), r.pattern),
        None => match v.agent_match {
            AgentMatch::None => "no group applies to this agent".to_owned(),
            _ => "no rule matched".to_owned(),
        },
    };
    let why = match requested {
        Some(r) => format!("{why} (requested as {r})"),
        None => why,
    };
    format!("{word}\t{}\t{}", clean(url), clean(&why))
}
