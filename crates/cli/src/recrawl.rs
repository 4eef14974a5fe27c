//! `mannerly recrawl OLD --out NEW`: revisit an earlier crawl, fetching
//! only what changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use mannerly_crawl::Prior;

/// Where a recrawl remembers the crawl it revisits (so `--resume` can).
const RECRAWL_FILE: &str = "recrawl.json";

#[derive(clap::Args)]
pub struct RecrawlArgs {
    /// The earlier crawl's directory (left as it is).
    #[arg(value_name = "OLD")]
    old: PathBuf,
    /// A page whose sitemap lastmod has not moved is requested anyway when
    /// its last fetch is older than this many days.
    #[arg(long, value_name = "DAYS", default_value_t = 30)]
    max_age: u64,
    #[command(flatten)]
    crawl: crate::crawl::Args,
}

pub fn run(args: RecrawlArgs) -> Result<u8> {
    let max_age = Duration::from_secs(args.max_age.saturating_mul(86_400));
    crate::crawl::run_with(args.crawl, Some((args.old, max_age)))
}

/// What a recrawl revisits: the earlier crawl's pages, and how old a
/// fetch may be before its lastmod is not enough.
pub(crate) struct Revisiting {
    pub(crate) prior: Arc<Prior>,
    pub(crate) max_age: Duration,
}

/// The earlier crawl's pages (from `old`, or for a resumed recrawl from
/// the `recrawl.json` it left), and the seeds with its pages added.
pub(crate) fn prior_and_seeds(
    mut seeds: Vec<String>,
    old: Option<(PathBuf, Duration)>,
    out: &Path,
    resuming: bool,
) -> Result<(Vec<String>, Option<Revisiting>)> {
    let remembered = out.join(RECRAWL_FILE);
    let old = match old {
        Some(o) => Some(o),
        None if resuming && remembered.exists() => {
            let text = std::fs::read_to_string(&remembered)
                .with_context(|| format!("cannot read {}", remembered.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", remembered.display()))?;
            let max_age = Duration::from_secs(v["max_age_secs"].as_u64().unwrap_or(30 * 86_400));
            v["old"].as_str().map(|o| (PathBuf::from(o), max_age))
        }
        None => None,
    };
    let Some((old, max_age)) = old else {
        return Ok((seeds, None));
    };
    let old = old
        .canonicalize()
        .with_context(|| format!("recrawl: no crawl at {}", old.display()))?;
    if out.canonicalize().is_ok_and(|o| o == old) {
        bail!(
            "recrawl: NEW must be another directory than OLD ({}), which stays as it is",
            old.display()
        );
    }
    let prior = Prior::load(&old).with_context(|| {
        format!(
            "recrawl: {} holds no pages.jsonl (not a crawl, or one too old to revisit)",
            old.display()
        )
    })?;
    if !resuming {
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        let note = serde_json::json!({
            "old": old.display().to_string(),
            "max_age_secs": max_age.as_secs(),
        });
        std::fs::write(&remembered, note.to_string())
            .with_context(|| format!("cannot write {}", remembered.display()))?;
        let mut urls: Vec<&str> = prior.pages().map(|p| p.url.as_str()).collect();
        urls.sort_unstable();
        seeds.extend(urls.into_iter().map(str::to_owned));
    }
    Ok((
        seeds,
        Some(Revisiting {
            prior: Arc::new(prior),
            max_age,
        }),
    ))
}
