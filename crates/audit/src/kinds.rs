//! What sort of agent a bot is, and what it is for: the closed sets the
//! catalogue and the report use.

use serde::{Deserialize, Serialize};

/// Whether robots.txt governs an agent, and how it is judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum BotKind {
    /// robots.txt governs it (any automated agent not known otherwise).
    #[default]
    Crawler,
    /// Its operator states that robots.txt does not govern it: it fetches
    /// only when a person asks (a link preview, a feed added by a user).
    /// Reported apart; it breaks no rule.
    UserTriggered,
    /// An HTTP library or command-line tool (curl, python-requests,
    /// Go-http-client): not one crawler but anyone's tool, so each client
    /// address is judged on its own.
    ClientLibrary,
}

impl BotKind {
    /// The word reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            BotKind::Crawler => "crawler",
            BotKind::UserTriggered => "user-triggered",
            BotKind::ClientLibrary => "client-library",
        }
    }
}

/// What a crawler is for: one closed set, which `data/bots.json` keeps
/// to (its builder maps each source catalogue's words into it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Category {
    /// Search engines' crawlers.
    SearchEngine,
    /// AI training, search or assistants.
    Ai,
    /// SEO and backlink tools.
    Seo,
    /// Advertising and ad verification.
    Advertising,
    /// Uptime, performance and change monitors, webhooks.
    Monitoring,
    /// Feed readers and aggregators.
    FeedReader,
    /// Link previews of social networks and chat apps.
    LinkPreview,
    /// Web archives.
    Archiver,
    /// Research crawlers.
    Academic,
    /// Security and vulnerability scanners.
    SecurityScanner,
    /// Crawling software and HTTP tools anyone runs (Scrapy, Nutch,
    /// Puppeteer, curl).
    CrawlerSoftware,
    /// Anything else, or not known.
    Other,
}

/// HTTP libraries and command-line tools, by product token, lower-case:
/// [`BotKind::ClientLibrary`].
pub const CLIENT_LIBRARIES: [&str; 27] = [
    "ahc",
    "aiohttp",
    "apache-httpclient",
    "axios",
    "curl",
    "dart",
    "faraday",
    "go-http-client",
    "got",
    "guzzlehttp",
    "httpie",
    "httpurlconnection",
    "httpx",
    "java",
    "libwww-perl",
    "lwp-trivial",
    "node",
    "node-fetch",
    "okhttp",
    "php",
    "postmanruntime",
    "python",
    "python-httpx",
    "python-requests",
    "python-urllib",
    "ruby",
    "wget",
];

/// Whether a product token names an HTTP library or tool.
pub fn is_client_library(token: &str) -> bool {
    let lower = token.to_ascii_lowercase();
    CLIENT_LIBRARIES.binary_search(&lower.as_str()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_libraries_are_sorted_for_the_search() {
        assert!(CLIENT_LIBRARIES.windows(2).all(|w| w[0] < w[1]));
        assert!(is_client_library("Python-Requests"));
        assert!(!is_client_library("Googlebot"));
    }
}
