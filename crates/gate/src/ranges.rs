//! The IP ranges crawlers' operators publish: files given per token
//! (`--ip-ranges TOKEN=FILE`) at start, and the operators' own files (as
//! the catalogue names them) loaded in the background from the cache or
//! the network, and again each day. Until an operator's file is loaded,
//! its crawler's requests are judged without it, never held. A crawler no
//! catalogue lists, whose User-Agent names its page, is judged by the
//! ranges that page links (`client-ranges`, JAFAR) once they are loaded,
//! in the background, at most [`MAX_PAGES`] pages.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use mannerly_audit::Catalogue;
use mannerly_botauth::fcrdns::IpRanges;
use mannerly_botauth::identity_check::{self, CheckOptions};
use mannerly_botauth::published::{range_file, FRESH};

/// The most unlisted crawlers' pages a gate follows.
pub const MAX_PAGES: usize = 64;

/// The ranges of one unlisted crawler's page, by (token, page); `None`
/// while loading, or when it links none that could be read.
type PageRanges = RwLock<HashMap<(String, String), Option<IpRanges>>>;

/// Ranges by catalogue index.
#[derive(Default)]
pub struct Ranges {
    given: HashMap<String, IpRanges>,
    loaded: RwLock<HashMap<usize, IpRanges>>,
    pages: Arc<PageRanges>,
    /// How unlisted crawlers' pages are fetched (`None`: they are not).
    page_options: Option<CheckOptions>,
}

impl Ranges {
    /// Ranges given per token (any case).
    pub fn new(given: HashMap<String, IpRanges>) -> Arc<Ranges> {
        Ranges::following_pages(given, None)
    }

    /// As [`new`](Self::new), and unlisted crawlers' pages followed as
    /// `pages` says.
    pub fn following_pages(
        given: HashMap<String, IpRanges>,
        pages: Option<CheckOptions>,
    ) -> Arc<Ranges> {
        Arc::new(Ranges {
            given: given
                .into_iter()
                .map(|(t, r)| (t.to_ascii_lowercase(), r))
                .collect(),
            page_options: pages,
            ..Ranges::default()
        })
    }

    /// Whether `ip` is in the ranges of the crawler `token` (catalogue
    /// index `bot`, its User-Agent `ua`); `None` when none are known (an
    /// unlisted crawler's page is then loaded in the background).
    pub fn contains(&self, token: &str, bot: Option<usize>, ua: &str, ip: IpAddr) -> Option<bool> {
        if let Some(r) = self.given.get(&token.to_ascii_lowercase()) {
            return Some(r.contains(ip));
        }
        if let Some(bot) = bot {
            let loaded = self.loaded.read().unwrap_or_else(|p| p.into_inner());
            return loaded.get(&bot).map(|r| r.contains(ip));
        }
        let page = mannerly_robots::page_named(ua)?;
        let k = (token.to_ascii_lowercase(), page.to_owned());
        {
            let pages = self.pages.read().unwrap_or_else(|p| p.into_inner());
            if let Some(known) = pages.get(&k) {
                return known.as_ref().map(|r| r.contains(ip));
            }
        }
        self.load_page(k);
        None
    }

    /// Loads an unlisted crawler's page's ranges in the background.
    fn load_page(&self, k: (String, String)) {
        let Some(o) = self.page_options.clone() else {
            return;
        };
        let mut pages = self.pages.write().unwrap_or_else(|p| p.into_inner());
        if pages.len() >= MAX_PAGES || pages.contains_key(&k) {
            return;
        }
        pages.insert(k.clone(), None);
        drop(pages);
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let pages = self.pages.clone();
        handle.spawn(async move {
            let (token, page) = k.clone();
            match identity_check::page_ranges(&page, &token, &o).await {
                Ok(r) if !r.is_empty() => {
                    tracing::info!("{token}: {} IP ranges linked from {page}", r.len());
                    pages
                        .write()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(k, Some(r));
                }
                Ok(_) => tracing::info!("{token}: {page} links no ranges for it"),
                Err(e) => tracing::info!("{token}: no ranges from its page: {e}"),
            }
        });
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
