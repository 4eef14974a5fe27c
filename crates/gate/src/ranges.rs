//! The IP ranges crawlers' operators publish: files given per token
//! (`--ip-ranges TOKEN=FILE`) at start, and the operators' own files (as
//! the catalogue names them) loaded in the background from the cache or
//! the network, and again each day. Until an operator's file is loaded,
//! its crawler's requests are judged without it, never held.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use mannerly_audit::Catalogue;
use mannerly_botauth::fcrdns::IpRanges;
use mannerly_botauth::published::{range_file, FRESH};

/// Ranges by catalogue index.
#[derive(Default)]
pub struct Ranges {
    given: HashMap<String, IpRanges>,
    loaded: RwLock<HashMap<usize, IpRanges>>,
}

impl Ranges {
    /// Ranges given per token (any case).
    pub fn new(given: HashMap<String, IpRanges>) -> Arc<Ranges> {
        Arc::new(Ranges {
            given: given
                .into_iter()
                .map(|(t, r)| (t.to_ascii_lowercase(), r))
                .collect(),
            loaded: RwLock::default(),
        })
    }

    /// Whether `ip` is in the ranges of the crawler `token` (catalogue
    /// index `bot`); `None` when none are known.
    pub fn contains(&self, token: &str, bot: Option<usize>, ip: IpAddr) -> Option<bool> {
        if let Some(r) = self.given.get(&token.to_ascii_lowercase()) {
            return Some(r.contains(ip));
        }
        let loaded = self.loaded.read().unwrap_or_else(|p| p.into_inner());
        loaded.get(&bot?).map(|r| r.contains(ip))
    }

    /// Loads every operator's files in the background, then again each
    /// day; failures are logged and leave the crawler unchecked by range.
    pub fn load_in_background(
        self: &Arc<Self>,
        catalogue: &'static Catalogue,
        cache: PathBuf,
        offline: bool,
    ) {
        let ranges = self.clone();
        tokio::spawn(async move {
            loop {
                for index in 0..catalogue.len() {
                    let Some(known) = catalogue.get(index) else {
                        continue;
                    };
                    if known.ranges.is_empty()
                        || ranges.given.contains_key(&known.token.to_ascii_lowercase())
                    {
                        continue;
                    }
                    let mut merged: Option<IpRanges> = None;
                    for url in &known.ranges {
                        match range_file(url, &cache, offline)
                            .await
                            .map(|f| IpRanges::parse(&f.text))
                        {
                            Ok(Ok(r)) => merged = Some(merged.map_or(r.clone(), |m| m.merge(&r))),
                            Ok(Err(e)) => tracing::warn!("{}: {url}: {e}", known.token),
                            Err(e) => tracing::info!("{}: no ranges from {url}: {e}", known.token),
                        }
                    }
                    if let Some(r) = merged {
                        ranges
                            .loaded
                            .write()
                            .unwrap_or_else(|p| p.into_inner())
                            .insert(index, r);
                    }
                }
                tokio::time::sleep(FRESH.max(Duration::from_secs(60))).await;
            }
        });
    }
}
