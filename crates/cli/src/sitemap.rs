//! `mannerly sitemap`.

use std::io::{self, BufWriter, Write};

use anyhow::{bail, Context, Result};
use mannerly_fetch::{FetchConfig, HttpFetcher};
use mannerly_sitemap::walk::{Found, Start, VisitResult, WalkConfig, WalkReport, Walker};
use mannerly_sitemap::{Entry, LocationRule, Options, SitemapParser, Stop, Summary};

use crate::input::is_url;
use crate::text::clean;

#[derive(clap::Args)]
pub struct Args {
    /// A sitemap file (`-` for standard input) or URL. With --discover, a
    /// URL on the site whose robots.txt names the sitemaps.
    #[arg(value_name = "FILE|URL")]
    source: String,
    /// Read the site's robots.txt and walk every sitemap it names.
    #[arg(long)]
    discover: bool,
    /// With --discover, also try well-known paths such as /sitemap.xml
    /// (a dozen extra requests).
    #[arg(long, requires = "discover")]
    probe_known_paths: bool,
    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,
    /// For a file: the URL it was served from, so entries outside its
    /// location are dropped as crawlers must.
    #[arg(long, value_name = "URL")]
    base: Option<String>,
    /// Index nesting to follow.
    #[arg(long, value_name = "N", default_value_t = 5)]
    max_depth: usize,
    /// Entries per sitemap (the protocol's limit is 50,000).
    #[arg(long, value_name = "N", default_value_t = 50_000, value_parser = crate::counts::at_least_one::<u64>)]
    max_entries: u64,
}

#[derive(serde::Serialize)]
struct JsonEntry<'a> {
    #[serde(flatten)]
    entry: &'a Entry,
    source: &'a str,
}

fn text_line(e: &Entry, source: &str) -> String {
    let dash = |s: Option<String>| s.unwrap_or_else(|| "-".into());
    match e {
        Entry::Url(u) => format!(
            "{}\t{}\t{}\t{}\t{}",
            clean(&u.loc),
            dash(u.lastmod.as_ref().map(|l| clean(&l.raw).into_owned())),
            dash(u.changefreq.map(|c| format!("{c:?}").to_ascii_lowercase())),
            dash(u.priority.map(|p| p.to_string())),
            clean(source),
        ),
        Entry::Sitemap(s) => format!(
            "sitemap\t{}\t{}\t{}",
            clean(&s.loc),
            dash(s.lastmod.as_ref().map(|l| clean(&l.raw).into_owned())),
            clean(source)
        ),
    }
}

fn lost(s: &Summary) -> bool {
    s.truncated || s.stop.is_some() || s.dropped_total() > 0
}

pub fn run(args: Args) -> Result<u8> {
    let options = Options {
        max_entries: usize::try_from(args.max_entries).unwrap_or(usize::MAX),
        ..Options::default()
    };
    if args.discover || is_url(&args.source) {
        if let Some(base) = &args.base {
            bail!(
                "--base {base} is for a file: a sitemap fetched from a URL is judged by that URL"
            );
        }
        return walk(&args, options);
    }
    if std::path::Path::new(&args.source).is_dir() {
        bail!(
            "cannot read sitemap file '{}': it is a directory",
            args.source
        );
    }
    // A local file.
    let reader: Box<dyn io::Read> = if args.source == "-" {
        Box::new(io::stdin())
    } else {
        Box::new(
            std::fs::File::open(&args.source)
                .with_context(|| format!("cannot read sitemap file '{}'", args.source))?,
        )
    };
    let rule = match &args.base {
        Some(b) => {
            let u = url::Url::parse(b).with_context(|| format!("--base '{b}' is not a URL"))?;
            Some(LocationRule::new(&u))
        }
        None => None,
    };
    let mut parser = SitemapParser::new(reader, options, rule);
    let mut out = BufWriter::new(io::stdout().lock());
    let source = args.base.clone().unwrap_or_else(|| args.source.clone());
    for entry in parser.by_ref() {
        write_entry(&mut out, &entry, &source, args.json)?;
    }
    out.flush()?;
    let summary = parser.finish();
    eprintln!("{}: {}", args.source, summary.describe());
    if summary.dropped.contains_key(mannerly_sitemap::ROBOTS_LINE) {
        eprintln!(
            "{}: it holds robots.txt lines: `mannerly sitemap --discover https://SITE/` reads the sitemaps a site's robots.txt names, and `mannerly lint` checks the file",
            args.source
        );
    }
    if matches!(summary.stop, Some(Stop::Error(_))) && summary.entries == 0 {
        return Ok(1);
    }
    Ok(u8::from(lost(&summary)))
}

/// One entry on stdout, as JSON or as a text line.
fn write_entry(out: &mut impl Write, entry: &Entry, source: &str, json: bool) -> io::Result<()> {
    if json {
        serde_json::to_writer(&mut *out, &JsonEntry { entry, source })?;
        writeln!(out)
    } else {
        writeln!(out, "{}", text_line(entry, source))
    }
}

/// Walks sitemaps from a URL (or from robots.txt with `--discover`),
/// printing entries as they are found and a report of each sitemap.
fn walk(args: &Args, options: Options) -> Result<u8> {
    let start_url =
        url::Url::parse(&args.source).with_context(|| format!("'{}' is not a URL", args.source))?;
    if start_url.scheme() != "http" && start_url.scheme() != "https" {
        bail!("'{}' is not an http(s) URL", args.source);
    }
    let start = if args.discover {
        Start::Robots(start_url)
    } else {
        Start::Sitemaps(vec![start_url])
    };
    let walker = Walker::new(
        HttpFetcher::new(FetchConfig::default())?,
        WalkConfig {
            options,
            max_depth: args.max_depth,
            probe_known_paths: args.probe_known_paths,
            ..WalkConfig::default()
        },
    );
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let json = args.json;
    let (report, write_err) = runtime.block_on(async move {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Found>(256);
        let printer = tokio::task::spawn_blocking(move || -> io::Result<()> {
            let mut out = BufWriter::new(io::stdout());
            while let Some(f) = rx.blocking_recv() {
                write_entry(&mut out, &Entry::Url(f.entry), &f.sitemap, json)?;
            }
            out.flush()
        });
        let report = walker.walk(start, tx).await;
        let write_err = printer.await.ok().and_then(Result::err);
        (report, write_err)
    });
    if let Some(e) = write_err {
        return Err(e.into());
    }
    Ok(u8::from(print_walk(&report)))
}

/// The walk's report on stderr; whether anything was lost or failed.
fn print_walk(report: &WalkReport) -> bool {
    let mut problems = false;
    if let Some(r) = &report.robots {
        // Its sitemaps are unknown: the walk did not do what was asked.
        problems |= r.unreadable;
        eprintln!(
            "robots.txt {}: {} ({} sitemap(s) named)",
            r.url,
            r.reason,
            r.sitemaps.len()
        );
    }
    for v in &report.sitemaps {
        let line = match &v.result {
            VisitResult::Parsed { summary } => {
                problems |= lost(summary);
                summary.describe()
            }
            VisitResult::Skipped { reason } => format!("skipped: {reason}"),
            VisitResult::Failed { reason } => {
                problems = true;
                format!("failed: {reason}")
            }
        };
        eprintln!(
            "{} (depth {}): {line}",
            v.final_url.as_deref().unwrap_or(&v.url),
            v.depth
        );
    }
    if !report.skipped.is_empty() {
        let counts: Vec<String> = report
            .skipped
            .iter()
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        eprintln!("sitemaps not fetched: {}", counts.join(", "));
    }
    problems
}
