//! Why a crawl can fail ([`CrawlError`]): one error type for the whole
//! crate, below every module that returns it, so none of them depends on
//! another for its errors.

use std::path::PathBuf;

use mannerly_polite::frontier::FrontierError;

use crate::warc::WarcError;

/// Why a crawl could not run or go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrawlError {
    /// No seed is a crawlable URL.
    #[error("no usable seed: {0}")]
    NoSeeds(String),
    /// An `--include` or `--exclude` pattern does not compile.
    #[error("an --include or --exclude pattern does not compile: {0}")]
    Pattern(#[from] regex::Error),
    /// The frontier failed.
    #[error(transparent)]
    Frontier(#[from] FrontierError),
    /// Writing WARC failed.
    #[error(transparent)]
    Warc(#[from] WarcError),
    /// The output directory or the log.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file of the crawl's directory is not what the crawler
    /// writes there.
    #[error("{path}: not what mannerly writes there: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// What the JSON parser found.
        #[source]
        source: serde_json::Error,
    },
    /// The `proxy` setting is not a proxy URL.
    #[error("--proxy {proxy}: {source}")]
    Proxy {
        /// The proxy as given.
        proxy: String,
        /// Why the HTTP client refused it.
        #[source]
        source: reqwest::Error,
    },
    /// The HTTP client could not be built (TLS set-up).
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The configured User-Agent cannot go in a header: it holds a
    /// control character (other than tab).
    #[error("the User-Agent {agent:?} cannot be sent as a header: it holds a control character")]
    UserAgent {
        /// The User-Agent configured.
        agent: String,
    },
    /// The crawl's evidence could not be written (or an earlier run's
    /// read back).
    #[error("evidence: {0}")]
    Evidence(#[from] mannerly_evidence::EvidenceError),
    /// The evidence log is unusable: a task panicked while writing to it.
    #[error("the evidence log is unusable: a task panicked while writing to it")]
    EvidencePoisoned,
    /// The WARC writer is unusable: a task panicked while it wrote.
    #[error("the WARC writer is unusable: a task panicked while writing to it")]
    WarcPoisoned,
    /// The backend (a fleet's shared store, say) cannot serve this crawl
    /// as asked; its own error is the source.
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync>),
}
