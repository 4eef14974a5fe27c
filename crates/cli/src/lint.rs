//! `mannerly lint`.

use std::io::{self, BufWriter, Write};

use anyhow::{bail, Result};
use mannerly_robots::{lint_with, Mode, ParseOptions, Severity, DEFAULT_MAX_BYTES};

use crate::fetch::fetch_origin;
use crate::input::{is_url, read_robots, Source};

#[derive(clap::Args)]
pub struct Args {
    /// robots.txt file to lint, `-` for standard input, or an http(s) URL on
    /// the origin to fetch it from.
    #[arg(value_name = "ROBOTS")]
    robots: String,
    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,
    /// Judge by strict RFC 9309 rules instead of Google's.
    #[arg(long)]
    rfc: bool,
    /// Bytes of robots.txt to read (at least 512000, the RFC 9309 minimum).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BYTES)]
    max_bytes: usize,
}

pub fn run(args: Args) -> Result<u8> {
    if args.max_bytes < DEFAULT_MAX_BYTES {
        bail!(
            "--max-bytes {} is below the RFC 9309 minimum of {DEFAULT_MAX_BYTES} bytes",
            args.max_bytes
        );
    }
    let source = if is_url(&args.robots) {
        let origin = mannerly_fetch::Origin::of(&args.robots)?;
        let (decision, state) = fetch_origin(&origin, args.rfc, None, 30)?;
        let Some(good) = state.good else {
            anyhow::bail!(
                "{} has no robots.txt to lint: {}",
                origin.robots_url(),
                decision.reason
            );
        };
        Source {
            name: origin.robots_url(),
            body: good.body,
        }
    } else {
        read_robots(&args.robots)?
    };
    let options = ParseOptions {
        mode: if args.rfc {
            Mode::Rfc9309
        } else {
            Mode::Google
        },
        max_bytes: args.max_bytes,
    };
    let diags = lint_with(&source.body, options);
    let mut out = BufWriter::new(io::stdout().lock());
    for d in &diags {
        if args.json {
            #[derive(serde::Serialize)]
            struct Json<'a> {
                file: &'a str,
                #[serde(flatten)]
                diagnostic: &'a mannerly_robots::Diagnostic,
            }
            serde_json::to_writer(
                &mut out,
                &Json {
                    file: &source.name,
                    diagnostic: d,
                },
            )?;
            writeln!(out)?;
        } else {
            writeln!(
                out,
                "{}:{}:{}: {}[{}]: {}",
                source.name, d.line, d.column, d.severity, d.code, d.message
            )?;
            if let Some(s) = &d.suggestion {
                writeln!(out, "    suggestion: {s}")?;
            }
        }
    }
    out.flush()?;
    let count = |s: Severity| diags.iter().filter(|d| d.severity == s).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    if !args.json {
        eprintln!(
            "{}: {errors} error(s), {warnings} warning(s), {} note(s)",
            source.name,
            count(Severity::Info)
        );
    }
    Ok(u8::from(errors > 0))
}
