//! `mannerly lint`.

use std::io::{self, BufWriter, Write};

use anyhow::Result;
use mannerly_robots::{lint_with, Severity};

use crate::fetch::fetch_origin;
use crate::input::{is_url, read_robots, RobotsArgs, Source};
use crate::text::clean;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: RobotsArgs,
}

pub fn run(args: Args) -> Result<u8> {
    let args = args.source;
    let options = args.options()?;
    let source = if is_url(&args.robots) {
        let origin = mannerly_fetch::Origin::of(&args.robots)?;
        let (decision, state) = fetch_origin(&origin, args.rfc, None, 30, args.max_bytes)?;
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
        read_robots(&args.robots, args.max_bytes)?
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
                clean(&source.name),
                d.line,
                d.column,
                d.severity,
                d.code,
                clean(&d.message)
            )?;
            if let Some(s) = &d.suggestion {
                writeln!(out, "    suggestion: {}", clean(s))?;
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
