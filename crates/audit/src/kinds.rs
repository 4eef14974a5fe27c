//! What sort of agent a bot is, and what it is for: the closed sets the
//! catalogue and the report use.

use serde::{Deserialize, Serialize};

/// What sort of client a request came from, and so whether robots.txt
/// governs it. Only a [`Crawler`](BotKind::Crawler) is judged against
/// robots.txt and Crawl-delay (unless the audit is asked to judge every
/// kind); the others are listed with what they did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum BotKind {
    /// robots.txt governs it (any automated agent not known otherwise).
    #[default]
    Crawler,
    /// Its operator states that robots.txt does not govern it: it fetches
    /// only when a person asks. Reported apart; it breaks no rule.
    UserTriggered,
    /// A feed reader or aggregator fetching feeds people subscribed to.
    FeedReader,
    /// A chat app's or social network's link preview, fetched when a
    /// person shares a link.
    LinkPreview,
    /// An uptime, performance or change monitor a site's owner set up.
    Monitor,
    /// An HTTP library or command-line tool (curl, python-requests,
    /// Go-http-client): not one crawler but anyone's tool, so each client
    /// address is judged on its own.
    ClientLibrary,
    /// No User-Agent at all (empty or `-`): each address on its own.
    Anonymous,
}

impl BotKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [BotKind; 7] = [
        BotKind::Crawler,
        BotKind::UserTriggered,
        BotKind::FeedReader,
        BotKind::LinkPreview,
        BotKind::Monitor,
        BotKind::ClientLibrary,
        BotKind::Anonymous,
    ];

    /// The word reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            BotKind::Crawler => "crawler",
            BotKind::UserTriggered => "user-triggered",
            BotKind::FeedReader => "feed-reader",
            BotKind::LinkPreview => "link-preview",
            BotKind::Monitor => "monitor",
            BotKind::ClientLibrary => "client-library",
            BotKind::Anonymous => "anonymous",
        }
    }

    /// The heading a report lists this kind under, plural.
    pub fn heading(self) -> &'static str {
        match self {
            BotKind::Crawler => "Crawlers",
            BotKind::UserTriggered => {
                "User-triggered fetchers (a person asked; their operators state robots.txt does not govern them)"
            }
            BotKind::FeedReader => "Feed readers (fetch the feeds people subscribed to)",
            BotKind::LinkPreview => "Link previews (fetch a link a person shared)",
            BotKind::Monitor => "Monitors (uptime and performance checks a site's owner set up)",
            BotKind::ClientLibrary => "HTTP libraries and tools, by address",
            BotKind::Anonymous => "No User-Agent, by address",
        }
    }

    /// Whether robots.txt governs this kind, so its requests are judged
    /// by default: crawlers only.
    pub fn judged(self) -> bool {
        self == BotKind::Crawler
    }

    /// Whether the name is anyone's, so each address is one client.
    pub fn per_address(self) -> bool {
        matches!(self, BotKind::ClientLibrary | BotKind::Anonymous)
    }

    /// The kind a catalogue's category implies for a crawler entry.
    pub fn of_category(category: Option<Category>) -> BotKind {
        match category {
            Some(Category::Monitoring) => BotKind::Monitor,
            Some(Category::FeedReader) => BotKind::FeedReader,
            Some(Category::LinkPreview) => BotKind::LinkPreview,
            _ => BotKind::Crawler,
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
/// [`BotKind::ClientLibrary`] (the list is `mannerly-robots`'s, which the
/// identity checks read too).
pub use mannerly_robots::{is_client_library, CLIENT_LIBRARIES};
