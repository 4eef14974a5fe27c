//! `mannerly check`.

use std::io::{self, BufRead, BufWriter, Write};

use anyhow::{bail, Context, Result};
use mannerly_robots::{
    is_valid_user_agent, Mode, ParseOptions, Robots, Severity, Verdict, DEFAULT_MAX_BYTES,
};

use crate::input::read_robots;

#[derive(clap::Args)]
pub struct Args {
    /// robots.txt file to read, or `-` for standard input.
    #[arg(value_name = "ROBOTS")]
    robots: String,
    /// The crawler's product token, e.g. `Googlebot` (compared whole and
    /// case-insensitively with each group's user-agent).
    #[arg(long, short = 'a', value_name = "UA")]
    agent: String,
    /// URLs (or paths) to check; when none are given, one per line from
    /// standard input.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,
    /// Strict RFC 9309 mode: percent-normalise URLs, no Google leniencies.
    #[arg(long)]
    rfc: bool,
    /// Bytes of robots.txt to read (at least 512000, the RFC 9309 minimum).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BYTES)]
    max_bytes: usize,
}

pub fn run(args: Args) -> Result<u8> {
    if args.robots == "-" && args.urls.is_empty() {
        bail!("robots.txt comes from standard input ('-'), so give the URLs to check as arguments");
    }
    if args.max_bytes < DEFAULT_MAX_BYTES {
        bail!(
            "--max-bytes {} is below the RFC 9309 minimum of {DEFAULT_MAX_BYTES} bytes",
            args.max_bytes
        );
    }
    let source = read_robots(&args.robots)?;
    let options = ParseOptions {
        mode: if args.rfc {
            Mode::Rfc9309
        } else {
            Mode::Google
        },
        max_bytes: args.max_bytes,
    };
    let robots = Robots::parse_with(&source.body, options);
    let mut stderr = io::stderr();
    if !is_valid_user_agent(&args.agent) {
        let token: String = args
            .agent
            .chars()
            .take_while(|c| c.is_ascii_alphabetic() || *c == '-' || *c == '_')
            .collect();
        let hint = if token.is_empty() {
            String::new()
        } else {
            format!(" Did you mean --agent {token}?")
        };
        writeln!(
            stderr,
            "mannerly: note: '{}' is not a product token (letters, '-' and '_'); it is compared whole, so only a group naming exactly that matches.{hint}",
            args.agent
        )?;
    }
    let errors = robots
        .diagnostics()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if errors > 0 {
        writeln!(
            stderr,
            "mannerly: note: {} has {errors} error(s) that change what it means; run `mannerly lint {}` to see them",
            source.name, args.robots
        )?;
    }
    let view = robots.for_agent(&args.agent);
    let mut out = BufWriter::new(io::stdout().lock());
    let mut any_disallowed = false;
    let mut check = |url: &str, out: &mut BufWriter<io::StdoutLock<'_>>| -> Result<()> {
        let verdict = view.explain(url);
        any_disallowed |= !verdict.allowed;
        if args.json {
            serde_json::to_writer(
                &mut *out,
                &JsonVerdict {
                    url,
                    agent: &args.agent,
                    verdict: &verdict,
                },
            )?;
            writeln!(out)?;
        } else {
            writeln!(out, "{}", text_line(url, &verdict))?;
        }
        Ok(())
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
            check(url, &mut out)?;
        }
    } else {
        for url in &args.urls {
            check(url, &mut out)?;
        }
    }
    out.flush()?;
    Ok(u8::from(any_disallowed))
}

#[derive(serde::Serialize)]
struct JsonVerdict<'a> {
    url: &'a str,
    agent: &'a str,
    #[serde(flatten)]
    verdict: &'a Verdict,
}

fn text_line(url: &str, v: &Verdict) -> String {
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
            mannerly_robots::AgentMatch::None => "no group applies to this agent".to_owned(),
            _ => "no rule matched".to_owned(),
        },
    };
    format!("{word}\t{url}\t{why}")
}
