//! A crawl's word kept across a resume: the options that change what is
//! sent or how are recorded in `crawl.json` when the crawl starts, and a
//! resume (`--resume DIR`, or `--out DIR` where a crawl is) sends with
//! them. An option given again with another value is refused, naming
//! both, unless `--change` says to take it; options that change nothing
//! sent (`--metrics`, `--json`, `--threads`, seeds) are free.

use std::collections::BTreeMap;
use std::ffi::OsString;

use anyhow::{bail, Context, Result};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use super::Args;

/// The options a crawl records, by clap id: identity, pace, bounds,
/// scope, transport, signing, evidence and the fleet it belongs to.
pub(super) const KEPT: [&str; 29] = [
    "user_agent",
    "agent",
    "card",
    "min_delay",
    "concurrency",
    "open_hosts",
    "max_bytes",
    "max_pages",
    "max_pages_per_host",
    "max_depth",
    "scope",
    "include",
    "exclude",
    "follow_rel_nofollow",
    "content_types",
    "retries",
    "give_up_after",
    "timeout",
    "warc_max_size",
    "proxy",
    "no_sitemaps",
    "no_evidence",
    "sign_key",
    "signature_agent",
    "frontier",
    "crawl_name",
    "partitions",
    "lease",
    "claim",
];

/// The kept options' values as the command line (or its defaults) set
/// them: what `crawl.json` records. An unset option is recorded empty.
pub(super) fn recorded(m: &ArgMatches) -> BTreeMap<String, Vec<String>> {
    let fleet = m.get_raw("frontier").is_some();
    KEPT.iter()
        .map(|id| {
            // A fleet's options, defaulted outside a fleet, mean nothing.
            let value = match FLEET_ONLY.contains(id) && !fleet {
                true => Vec::new(),
                false => raw(m, id),
            };
            (id.to_string(), value)
        })
        .collect()
}

/// Options that need `--frontier`.
const FLEET_ONLY: [&str; 4] = ["crawl_name", "partitions", "lease", "claim"];

fn raw(m: &ArgMatches, id: &str) -> Vec<String> {
    m.get_raw(id)
        .map(|v| v.map(|s| s.to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// `args` with the options its crawl recorded: when the directory holds a
/// crawl that recorded options, the command line is parsed again with
/// them put back (those given now win only with `--change`), and the
/// options to record are those of the result.
pub(super) fn with_recorded(args: Args, m: &ArgMatches) -> Result<Args> {
    let dir = args.resume.as_ref().or(args.out.as_ref());
    let kept = match dir {
        Some(d) if args.status.is_none() => {
            mannerly_crawl::read_settings(&mannerly_crawl::CrawlDir::new(d))
                .with_context(|| format!("cannot read the crawl's settings in '{}'", d.display()))?
                .map(|s| s.options)
                .unwrap_or_default()
        }
        _ => BTreeMap::new(),
    };
    if kept.is_empty() {
        return Ok(Args {
            options: recorded(m),
            ..args
        });
    }
    let argv = with_kept(&kept, m, args.change)?;
    let cli = crate::Cli::command()
        .try_get_matches_from(&argv)
        .context("the recorded options no longer parse")?;
    let crawl = cli
        .subcommand_matches("crawl")
        .context("the command is not a crawl")?;
    let again = Args::from_arg_matches(crawl)?;
    // A fleet worker resumed rejoins its fleet's crawl.
    let join = again.join || again.resume.is_some() && again.frontier.is_some();
    Ok(Args {
        options: recorded(crawl),
        join,
        ..again
    })
}

/// The command line with each recorded option not given now put back, or
/// an error naming every option given now with another value (unless
/// `change`, when each change is said).
fn with_kept(
    kept: &BTreeMap<String, Vec<String>>,
    m: &ArgMatches,
    change: bool,
) -> Result<Vec<OsString>> {
    let command = crate::Cli::command();
    let crawl = command
        .find_subcommand("crawl")
        .context("no crawl subcommand")?;
    let mut put_back: Vec<OsString> = Vec::new();
    let mut differ = Vec::new();
    for (id, old) in kept {
        let Some(arg) = crawl.get_arguments().find(|a| a.get_id() == id.as_str()) else {
            continue; // an option this version no longer has
        };
        let long = format!("--{}", arg.get_long().unwrap_or(id.as_str()));
        if m.value_source(id) == Some(ValueSource::CommandLine) {
            let now = raw(m, id);
            if &now != old {
                differ.push(format!(
                    "{long} {} (the crawl's: {})",
                    shown(&now),
                    shown(old)
                ));
            }
            continue;
        }
        if arg.get_action().takes_values() {
            put_back.extend(old.iter().map(|v| OsString::from(format!("{long}={v}"))));
        } else if old.iter().any(|v| v == "true") {
            put_back.push(long.into());
        }
    }
    match (differ.is_empty(), change) {
        (true, _) => {}
        (false, true) => {
            for d in &differ {
                eprintln!("mannerly: changed: {d}");
            }
        }
        (false, false) => bail!(
            "this crawl was started with other options; give --change to change them:\n  {}",
            differ.join("\n  ")
        ),
    }
    let mut argv: Vec<OsString> = std::env::args_os().collect();
    let at = argv
        .iter()
        .position(|a| a == "crawl")
        .context("no `crawl` on the command line")?;
    argv.splice(at + 1..at + 1, put_back);
    Ok(argv)
}

fn shown(values: &[String]) -> String {
    if values.is_empty() {
        "default".into()
    } else {
        values.join(",")
    }
}
