//! `mannerly recrawl OLD... --out NEW`: revisit an earlier crawl, fetching
//! only what changed. The flags make a [`RecrawlPlan`]; the crawl is
//! `mannerly crawl`'s.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use mannerly_crawl::RecrawlPlan;

#[derive(clap::Args)]
pub struct RecrawlArgs {
    /// The earlier crawl's directory (left as it is). A fleet's crawl: every
    /// worker's directory, one after another (arguments with `://` after
    /// OLD are seed URLs). With --frontier, workers that --join the recrawl
    /// read the same directories.
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
    #[arg(long, value_name = "P", default_value_t = 0.5, requires = "due", value_parser = chance)]
    due_threshold: f64,
    #[command(flatten)]
    crawl: crate::crawl::Args,
}

/// A `--due-threshold`: a chance, between 0 and 1.
fn chance(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("{s}: a chance, between 0 and 1")),
    }
}

pub fn run(mut args: RecrawlArgs) -> Result<u8> {
    let (urls, more): (Vec<String>, Vec<String>) = std::mem::take(&mut args.crawl.urls)
        .into_iter()
        .partition(|a| a.contains("://"));
    args.crawl.urls = urls;
    let plan = RecrawlPlan {
        old: std::iter::once(args.old)
            .chain(more.into_iter().map(PathBuf::from))
            .collect(),
        max_age: Duration::from_secs(args.max_age.saturating_mul(86_400)),
        due: args.due.then_some(args.due_threshold),
    };
    crate::crawl::run_with(args.crawl, Some(plan))
}
