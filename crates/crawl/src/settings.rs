//! A crawl's settings as stored (`crawl.json`, or a fleet's store) with
//! the seeds given now added, and the scope made from them.

use std::collections::HashSet;

use crate::backend::Backend;
use crate::config::{CrawlConfig, CrawlSettings, RecrawlOf};
use crate::dir::{read_json, write_json, CrawlDir};
use crate::error::CrawlError;
use crate::normalize::{CrawlUrl, Scope};

/// The crawl's settings as stored with `seeds` added (one record for a
/// resume or a fleet), its scope, and every seed to offer: all the crawl's,
/// not only those given now, since the worker that started a crawl (or a
/// crawl killed while queueing its seeds) may have died before queueing
/// them all, and the seen-set makes the rest a no-op.
pub(crate) async fn settle_settings<B: Backend>(
    backend: &B,
    config: &CrawlConfig,
    seeds: Vec<String>,
    dir: &CrawlDir,
) -> Result<(Scope, Vec<String>, Option<RecrawlOf>), CrawlError> {
    let mut given = Vec::new();
    let mut bad = Vec::new();
    for s in seeds {
        match CrawlUrl::parse(&s) {
            // Kept as text: a seed list can hold millions.
            Ok(u) => given.push(String::from(u.as_str())),
            Err(e) => bad.push(e.to_string()),
        }
    }
    if given.is_empty() && !backend.resumable(dir) {
        let why = if bad.is_empty() {
            "none given".into()
        } else {
            bad.join("; ")
        };
        return Err(CrawlError::NoSeeds(why));
    }
    // A pattern that does not compile is refused before the directory
    // holds a record of a crawl that never started.
    Scope::new(config.scope, &[], &config.include, &config.exclude, None)?;
    dir.create()?;
    let fresh = CrawlSettings {
        seeds: Vec::new(),
        scope: config.scope,
        include: config.include.clone(),
        exclude: config.exclude.clone(),
        max_depth: config.max_depth,
        recrawl: (config.prior.is_some() && !config.prior_dirs.is_empty()).then(|| RecrawlOf {
            dirs: config.prior_dirs.clone(),
            max_age_secs: config.max_age.as_secs(),
        }),
        options: config.options.clone(),
        agent: Some(config.agent.clone()),
    };
    let settings = backend.settings(dir, fresh, &given).await?;
    drop(given);
    // The scope needs one seed per host.
    let mut scope_hosts = HashSet::new();
    let scope_seeds: Vec<CrawlUrl> = settings
        .seeds
        .iter()
        .filter_map(|s| CrawlUrl::parse(s).ok())
        .filter(|u| scope_hosts.insert(u.host().to_owned()))
        .collect();
    let scope = Scope::new(
        settings.scope,
        &scope_seeds,
        &settings.include,
        &settings.exclude,
        settings.max_depth,
    )?;
    Ok((scope, settings.seeds, settings.recrawl))
}

/// The settings in a crawl's directory (`crawl.json`); `Ok(None)` when
/// there are none yet.
pub fn read_settings(dir: &CrawlDir) -> Result<Option<CrawlSettings>, CrawlError> {
    read_json(&dir.settings())
}

/// Replaces a crawl directory's `crawl.json` whole (written aside, then
/// renamed).
pub fn write_settings(dir: &CrawlDir, settings: &CrawlSettings) -> Result<(), CrawlError> {
    write_json(&dir.settings(), settings)
}
