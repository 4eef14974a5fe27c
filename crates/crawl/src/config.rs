//! What a crawl is asked to do ([`CrawlConfig`]), and what makes it the
//! crawl it is across resumes and workers ([`CrawlSettings`]).

use std::sync::Arc;
use std::time::Duration;

use mannerly_polite::controller::CrawlDelayProfile;

use crate::normalize::ScopeMode;

/// Adjusts the HTTP clients (tests add a resolver and a test CA).
pub type ClientHook = Arc<dyn Fn(reqwest::ClientBuilder) -> reqwest::ClientBuilder + Send + Sync>;

/// What a crawl does, and its bounds.
#[derive(Clone)]
pub struct CrawlConfig {
    /// The User-Agent header.
    pub user_agent: String,
    /// The product token matched against robots.txt.
    pub agent: String,
    /// Requests in flight across all hosts (64).
    pub concurrency: usize,
    /// Hosts in progress at once (`None`: 4 × `concurrency`); the others
    /// wait their turn on disk, so memory and open connections follow
    /// this, not the number of hosts. A host is in progress from its
    /// robots.txt request until its last page is done.
    pub open_hosts: Option<u64>,
    /// Smallest delay between two requests to a host, start to start (1 s).
    pub min_delay: Duration,
    /// How Crawl-delay is read.
    pub profile: CrawlDelayProfile,
    /// Body bytes kept per response (8 MiB); a longer body is cut and
    /// marked truncated.
    pub max_bytes: usize,
    /// Retries of a 429, 5xx or timeout (2).
    pub retries: u8,
    /// Redirect hops followed per chain (5).
    pub max_redirects: u8,
    /// The crawl ends when every URL left waits longer than this (600 s);
    /// a resumed crawl counts it from `timeout` after it opens, when the
    /// hosts held for requests a kill cut off are free.
    pub give_up_after: Duration,
    /// Which hosts to enter.
    pub scope: ScopeMode,
    /// Only URLs matching one of these (regex crate syntax).
    pub include: Vec<String>,
    /// No URL matching one of these.
    pub exclude: Vec<String>,
    /// Links followed from a seed.
    pub max_depth: Option<u32>,
    /// Pages fetched in all (a resumed crawl counts what it fetched before).
    pub max_pages: Option<u64>,
    /// Pages fetched per host.
    pub max_pages_per_host: Option<u64>,
    /// Follow `rel=nofollow` links.
    pub follow_rel_nofollow: bool,
    /// Media types kept (`text/html`, `image/*`); empty keeps every type.
    /// A 2xx page of another type is not downloaded past its head, not
    /// stored, and logged as such (robots.txt and sitemaps are always
    /// kept).
    pub content_types: Vec<String>,
    /// Rotate WARC files after this many bytes (1 GiB).
    pub warc_max_size: u64,
    /// Whole-request limit (30 s).
    pub timeout: Duration,
    /// Connection set-up limit (10 s).
    pub connect_timeout: Duration,
    /// Until the response head arrives (15 s).
    pub first_byte_timeout: Duration,
    /// A proxy for every request (`HTTP_PROXY` and friends are read
    /// otherwise).
    pub proxy: Option<String>,
    /// Adjusts the HTTP clients.
    pub client_hook: Option<ClientHook>,
    /// Queue the sitemaps robots.txt names (true).
    pub sitemaps: bool,
    /// Sign every request with Web Bot Auth: the key and the URL of the
    /// crawler's key directory (`Signature-Agent`).
    pub signing: Option<(mannerly_botauth::KeyPair, String)>,
    /// Keep evidence of every request, in `evidence/` (true): see
    /// `mannerly-evidence`.
    pub evidence: bool,
    /// An earlier crawl's pages: each is asked for conditionally, and an
    /// unchanged one is archived as a WARC `revisit` record naming the
    /// record that holds its payload (a recrawl).
    pub prior: Option<Arc<crate::revisit::Prior>>,
    /// The directories `prior` was read from. They go into the crawl's
    /// settings, so a fleet worker that joins reads them too.
    pub prior_dirs: Vec<std::path::PathBuf>,
    /// Count requests, delays and states into these Prometheus families
    /// (`None`: no metrics).
    pub metrics: Option<Arc<crate::metrics::CrawlMetrics>>,
    /// A recrawl requests a page whose sitemap lastmod has not moved when
    /// its last fetch is older than this (30 days).
    pub max_age: Duration,
    /// The options of the command that started (or resumed) the crawl,
    /// recorded in its settings so a resume sends as the crawl began:
    /// [`CrawlSettings::options`].
    pub options: std::collections::BTreeMap<String, Vec<String>>,
}

impl CrawlConfig {
    /// The bound on hosts in progress at once.
    pub fn open_hosts(&self) -> u64 {
        self.open_hosts
            .unwrap_or(self.concurrency as u64 * OPEN_HOSTS_PER_REQUEST)
            .max(1)
    }
}

/// The robots.txt cache of a crawl: the hosts in progress need their rules
/// at hand; the others' wait on disk (`out/robots/`). Room for twice the
/// hosts in progress: a host just done was used more recently than a
/// host in progress waiting out its delay, so with room for only the
/// hosts in progress, each new host's rules pushed out a host still in
/// progress, whose next page read and parsed its rules from disk again
/// (some 0.6–0.8 times a page at 20,000 to 100,000 hosts).
pub(crate) fn robots_cache(config: &CrawlConfig) -> mannerly_fetch::CacheConfig {
    mannerly_fetch::CacheConfig {
        max_entries: usize::try_from(config.open_hosts().saturating_mul(2))
            .unwrap_or(usize::MAX)
            .max(512),
        max_bytes: 32 << 20,
        ..mannerly_fetch::CacheConfig::default()
    }
}

/// Hosts in progress per request in flight, by default: at a 1 s delay and
/// a 250 ms answer, 4 hosts keep one request slot busy.
const OPEN_HOSTS_PER_REQUEST: u64 = 4;

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            user_agent: format!(
                "mannerly/{} (+https://example.invalid/mannerly)",
                env!("CARGO_PKG_VERSION")
            ),
            agent: "mannerly".into(),
            concurrency: 64,
            open_hosts: None,
            min_delay: Duration::from_secs(1),
            profile: CrawlDelayProfile::default(),
            max_bytes: 8 << 20,
            retries: 2,
            max_redirects: 5,
            give_up_after: Duration::from_secs(600),
            scope: ScopeMode::Host,
            include: Vec::new(),
            exclude: Vec::new(),
            max_depth: None,
            max_pages: None,
            max_pages_per_host: None,
            follow_rel_nofollow: false,
            content_types: Vec::new(),
            warc_max_size: 1 << 30,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(15),
            proxy: None,
            client_hook: None,
            sitemaps: true,
            signing: None,
            evidence: true,
            prior: None,
            prior_dirs: Vec::new(),
            metrics: None,
            max_age: Duration::from_secs(30 * 86_400),
            options: std::collections::BTreeMap::new(),
        }
    }
}

/// The settings that make a crawl what it is (its seeds and scope), kept
/// where its frontier is (`out/crawl.json`, or the fleet's store), so a
/// resumed crawl or a worker that joins goes on with the same scope.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CrawlSettings {
    /// Every seed given so far.
    pub seeds: Vec<String>,
    /// Which hosts the crawl may enter.
    pub scope: ScopeMode,
    /// Only URLs matching one of these.
    pub include: Vec<String>,
    /// No URL matching one of these.
    pub exclude: Vec<String>,
    /// Links followed from a seed.
    pub max_depth: Option<u32>,
    /// A recrawl: the earlier crawl's directories, read by every worker
    /// (absent in settings written before recrawls were shared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recrawl: Option<RecrawlOf>,
    /// The options the command that started the crawl was given, each
    /// with its values as given (none: not set), opaque to this crate:
    /// what `mannerly crawl --resume` sends with, unless told to change
    /// them. Absent in files written before they were kept. In a fleet,
    /// each worker's are in its own directory's `crawl.json`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub options: std::collections::BTreeMap<String, Vec<String>>,
    /// The robots.txt product token the crawl obeys (absent in files
    /// written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// The earlier crawl a recrawl revisits, as its settings keep it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RecrawlOf {
    /// Its directories (a fleet's: one per worker).
    pub dirs: Vec<std::path::PathBuf>,
    /// See [`CrawlConfig::max_age`], in seconds.
    pub max_age_secs: u64,
}

impl CrawlSettings {
    /// Adds `seeds` not already there (a set, not a scan per seed: a seed
    /// file can hold millions).
    pub fn add_seeds(&mut self, seeds: &[String]) {
        let mut known: std::collections::HashSet<&str> =
            self.seeds.iter().map(String::as_str).collect();
        let added: Vec<String> = seeds
            .iter()
            .filter(|u| known.insert(u.as_str()))
            .cloned()
            .collect();
        drop(known);
        self.seeds.extend(added);
    }
}

#[cfg(test)]
mod tests;
