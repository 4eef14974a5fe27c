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
    /// Revisit only the pages likely to have changed: each page's change
    /// rate is estimated from its visits (Cho and Garcia-Molina), and a
    /// page is due when its chance of having changed since its last fetch
    /// is at least --due-threshold; the most likely go first. The others
    /// are carried over as they were.
    #[arg(long)]
    due: bool,
    /// With --due: the chance of change that makes a page due.
    #[arg(long, value_name = "P", default_value_t = 0.5, requires = "due")]
    due_threshold: f64,
    #[command(flatten)]
    crawl: crate::crawl::Args,
}

pub fn run(args: RecrawlArgs) -> Result<u8> {
    let max_age = Duration::from_secs(args.max_age.saturating_mul(86_400));
    if !(0.0..=1.0).contains(&args.due_threshold) {
        bail!(
            "--due-threshold {}: a chance, between 0 and 1",
            args.due_threshold
        );
    }
    let due = args.due.then_some(args.due_threshold);
    crate::crawl::run_with(args.crawl, Some((args.old, max_age, due)))
}

/// What a recrawl revisits: the earlier crawl's pages, and how old a
/// fetch may be before its lastmod is not enough.
pub(crate) struct Revisiting {
    pub(crate) prior: Arc<Prior>,
    pub(crate) max_age: Duration,
}

/// The pages to revisit: all (in URL order), or with `due` those whose
/// chance of having changed is at least that, most likely first; the
/// others go into NEW's `pages.jsonl` as they were.
fn due_pages(prior: &Prior, due: Option<f64>, out: &Path) -> Result<Vec<String>> {
    let Some(threshold) = due else {
        let mut urls: Vec<String> = prior.pages().map(|p| p.url.clone()).collect();
        urls.sort_unstable();
        return Ok(urls);
    };
    let now = mannerly_botauth::UnixMillis::now().0;
    let mut scored: Vec<(f64, &mannerly_crawl::PageState)> = prior
        .pages()
        .map(|p| (mannerly_crawl::due::change_probability(&p.visits, now), p))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.url.cmp(&b.1.url)));
    let (due, later): (Vec<_>, Vec<_>) = scored.into_iter().partition(|(p, _)| *p >= threshold);
    let path = out.join(mannerly_crawl::revisit::PAGES_FILE);
    let mut carried = String::new();
    for (_, p) in &later {
        carried.push_str(&serde_json::to_string(p)?);
        carried.push('\n');
    }
    std::fs::write(&path, carried).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!(
        "recrawl: {} of {} pages are due (a chance of change of {threshold} or more); the others are carried over",
        due.len(),
        due.len() + later.len()
    );
    Ok(due.into_iter().map(|(_, p)| p.url.clone()).collect())
}

/// The earlier crawl's pages (from `old`, or for a resumed recrawl from
/// the `recrawl.json` it left), and the seeds with its pages added.
pub(crate) fn prior_and_seeds(
    mut seeds: Vec<String>,
    old: Option<(PathBuf, Duration, Option<f64>)>,
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
            v["old"].as_str().map(|o| (PathBuf::from(o), max_age, None))
        }
        None => None,
    };
    let Some((old, max_age, due)) = old else {
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
        seeds.extend(due_pages(&prior, due, out)?);
    }
    Ok((
        seeds,
        Some(Revisiting {
            prior: Arc::new(prior),
            max_age,
        }),
    ))
}

/// The body bytes the crawl a recrawl in `out` revisited downloaded (from
/// that crawl's `status.json`).
pub(crate) fn earlier_bytes(out: &Path) -> Option<u64> {
    let note: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(RECRAWL_FILE)).ok()?).ok()?;
    let old = PathBuf::from(note["old"].as_str()?);
    let status: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(old.join("status.json")).ok()?).ok()?;
    status["bytes"].as_u64()
}
