//! Who a User-Agent says it is: a browser, or a bot with a product token
//! (the name its robots.txt group is written for), found in a catalogue
//! of known crawlers (built from public catalogues; see
//! `data/CREDITS.md`) or read from the User-Agent itself.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::kinds::{is_client_library, BotKind, Category};

/// A crawler the catalogue knows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct Known {
    /// Its product token, as its robots.txt group names it.
    pub token: String,
    /// Who runs it.
    pub operator: Option<String>,
    /// What it is for.
    pub category: Option<Category>,
    /// Whether robots.txt governs it: a crawler, or a fetcher whose
    /// operator states that it does not (user-triggered).
    #[serde(default)]
    pub kind: BotKind,
    /// Where the operator says so, for a user-triggered fetcher.
    #[serde(default)]
    pub kind_source: Option<String>,
    /// Domains its addresses reverse-resolve under (forward-confirmed
    /// reverse DNS).
    pub rdns: Vec<String>,
    /// IP-range files its operator publishes (Google's `prefixes` format).
    pub ranges: Vec<String>,
    /// robots.txt directives its operator documents it does not read
    /// (lower-case, e.g. `crawl-delay`), each with where it says so.
    #[serde(default)]
    pub ignores: std::collections::BTreeMap<String, String>,
}

/// The kind of a client by its name, its User-Agent (lower-case) and its
/// catalogue entry: an HTTP library or tool by name; else what the
/// catalogue says (a user-triggered fetcher, or its category: monitor,
/// feed reader, link preview); else the User-Agent's words; else a
/// crawler.
pub fn kind_of(token: &str, known: Option<&Known>) -> BotKind {
    kind_with(token, "", known)
}

fn kind_with(token: &str, lower_ua: &str, known: Option<&Known>) -> BotKind {
    if token == "-" {
        return BotKind::Anonymous;
    }
    if is_client_library(token) {
        return BotKind::ClientLibrary;
    }
    if let Some(k) = known {
        if k.kind != BotKind::Crawler {
            return k.kind;
        }
        let by_category = BotKind::of_category(k.category);
        if by_category != BotKind::Crawler || !matches!(k.category, None | Some(Category::Other)) {
            return by_category;
        }
    }
    kind_by_words(lower_ua)
}

/// Words of monitors' and health checks' User-Agents, lower-case: the
/// probes a site's own infrastructure sends (load balancers, orchestrators,
/// DNS failover, metrics scrapers), often to a path robots.txt disallows
/// and faster than any Crawl-delay. Judged as crawlers they would be
/// accused, and rules written from the verdict would refuse them at the
/// door, taking the site out of its load balancer. Each word is specific
/// enough not to catch a crawler (`health` alone would catch
/// `MentalHealthLeadBot`, `probe` alone SEO4Ajax's `s4a-probe`).
const MONITOR_WORDS: [&str; 21] = [
    "uptime",
    "monitor",
    "pingdom",
    "statuscake",
    "healthcheck",
    "health check",
    "health-check",
    "health_check",
    "health probe",
    "healthservice",
    "synthetics",
    "kube-probe",
    "googlehc/",
    "googleprober",
    "prometheus/",
    "blackbox exporter",
    "check_http",
    "nagios",
    "icinga",
    "monit/",
    "newrelicpinger",
];

/// The kind a User-Agent's own words say (lower-case), for a client the
/// catalogue does not place.
fn kind_by_words(lower: &str) -> BotKind {
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if has(&["feed", "rss", "atom/", "subscriber", "podcast"]) {
        BotKind::FeedReader
    } else if has(&MONITOR_WORDS) {
        BotKind::Monitor
    } else if has(&["preview", "linkexpand", "unfurl", "embed"]) {
        BotKind::LinkPreview
    } else {
        BotKind::Crawler
    }
}

impl Known {
    /// Whether its operator publishes a way to check its requests.
    pub fn verifiable(&self) -> bool {
        !self.rdns.is_empty() || !self.ranges.is_empty()
    }
}

/// What a User-Agent is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agent {
    /// A browser (or an app's web view): not a bot by what it says.
    Browser,
    /// A bot, with its product token and, when the catalogue knows it,
    /// its entry.
    Bot {
        /// Its name: the product token, or the catalogue's name (`-`
        /// when the User-Agent names nothing).
        token: String,
        /// Its index in the catalogue.
        known: Option<usize>,
        /// What sort of client it is.
        kind: BotKind,
    },
}

/// The crawlers known by name.
pub struct Catalogue {
    entries: Vec<Known>,
    matcher: AhoCorasick,
}

/// Why a catalogue cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogueError {
    /// The JSON is not a list of crawlers.
    #[error("not a crawler catalogue: {0}")]
    Json(#[from] serde_json::Error),
    /// The tokens cannot be made into one matcher (too many, or too long).
    #[error("the catalogue's tokens cannot be matched: {0}")]
    Matcher(#[from] aho_corasick::BuildError),
}

/// The catalogue shipped in `data/bots.json`, checked when built: the
/// test `the_builtin_catalogue_loads_whole` fails the build's tests on a
/// broken file, so this never panics in a release.
static BUILTIN: LazyLock<Catalogue> = LazyLock::new(|| {
    Catalogue::from_json(include_str!("../data/bots.json"))
        .unwrap_or_else(|e| panic!("the built-in crawler catalogue (data/bots.json): {e}"))
});

/// Parts of a word that mark a User-Agent as automated, lower-case.
const WORD_MARKS: [&str; 8] = [
    "crawl",
    "spider",
    "slurp",
    "scrape",
    "fetcher",
    "archiver",
    "headless",
    "phantomjs",
];

/// HTTP clients, libraries and scanners, by product name, lower-case.
const CLIENTS: [&str; 31] = [
    "curl",
    "wget",
    "python-requests",
    "python-urllib",
    "python-httpx",
    "python",
    "aiohttp",
    "httpx",
    "go-http-client",
    "java",
    "okhttp",
    "libwww-perl",
    "lwp",
    "apache-httpclient",
    "axios",
    "node-fetch",
    "node",
    "undici",
    "guzzlehttp",
    "ruby",
    "php",
    "scrapy",
    "httpie",
    "postmanruntime",
    "nikto",
    "sqlmap",
    "nmap",
    "masscan",
    "zgrab",
    "nuclei",
    "wpscan",
];

/// How browsers and apps write their User-Agents, lower-case.
const BROWSER_MARKS: [&str; 32] = [
    "mozilla/",
    "opera",
    "applewebkit/",
    "gecko/",
    "safari/",
    "chrome/",
    "dalvik/",
    "lynx/",
    "w3m/",
    "links",
    "cfnetwork/",
    "darwin/",
    "profile/midp",
    "[fban",
    "ibrowse",
    "amiga",
    "browser",
    "msie",
    "trident/",
    "windows nt",
    "microsoft office",
    "outlook",
    "quicktime",
    "playstation",
    "(x11;",
    "mosaic",
    "mozac",
    "midp",
    "upnp",
    "roku",
    "googleapp",
    "player",
];

/// Whether a User-Agent says it is automated: a word that ends in `bot`
/// before a version, a `;` or its end; a crawling word; a contact URL; or
/// a known HTTP client or scanner as a product.
fn says_automated(lower: &str) -> bool {
    let b = lower.as_bytes();
    let bot_word = lower.match_indices("bot").any(|(i, _)| {
        let after = b.get(i + 3);
        let word_start = lower[..i]
            .rfind(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_')
            .map_or(0, |j| j + 1);
        i > word_start && matches!(after, None | Some(b'/' | b';' | b')' | b','))
            || i == word_start && matches!(after, None | Some(b'/' | b';' | b')'))
    });
    bot_word
        || WORD_MARKS.iter().any(|m| lower.contains(m))
        || ["http://", "https://", "+http", "www."]
            .iter()
            .any(|m| lower.contains(m))
        || crate::named::names_its_operator(lower)
        || lower.split([' ', ';', '(', ')']).any(|part| {
            part.split_once('/')
                .is_some_and(|(name, _)| CLIENTS.contains(&name))
        })
}

impl Catalogue {
    /// A catalogue of these entries.
    pub fn new(entries: Vec<Known>) -> Result<Catalogue, CatalogueError> {
        let patterns: Vec<&str> = entries.iter().map(|e| e.token.as_str()).collect();
        let matcher = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)?;
        Ok(Catalogue { entries, matcher })
    }

    /// A catalogue from JSON in `data/bots.json`'s format.
    pub fn from_json(json: &str) -> Result<Catalogue, CatalogueError> {
        Catalogue::new(serde_json::from_str(json)?)
    }

    /// The catalogue shipped with mannerly.
    pub fn builtin() -> &'static Catalogue {
        &BUILTIN
    }

    /// An entry by index.
    pub fn get(&self, index: usize) -> Option<&Known> {
        self.entries.get(index)
    }

    /// How many crawlers it knows.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it knows none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What a User-Agent is: a browser, or a client with its name, its
    /// catalogue entry and its kind.
    pub fn classify(&self, user_agent: &str) -> Agent {
        let lower = user_agent.to_ascii_lowercase();
        if let Some((m, start, end)) = self.known_in(user_agent) {
            let known = &self.entries[m];
            // The client's own spelling of the catalogue's name, unless it
            // is only in a URL (`www.feedspot.com`): then the name it gives.
            let token = if in_url(&user_agent[..start]) {
                client_name(user_agent)
            } else {
                extended(&user_agent[start..end], &user_agent[end..])
            };
            return Agent::Bot {
                kind: kind_with(&token, &lower, Some(known)),
                token,
                known: Some(m),
            };
        }
        let trimmed = user_agent.trim();
        if !trimmed.is_empty()
            && trimmed != "-"
            && !says_automated(&lower)
            && (BROWSER_MARKS.iter().any(|m| lower.contains(m)) || looks_like_app(&lower))
        {
            return Agent::Browser;
        }
        let token = client_name(user_agent);
        Agent::Bot {
            kind: kind_with(&token, &lower, None),
            token,
            known: None,
        }
    }

    /// The catalogue name in the User-Agent, on word boundaries, and not
    /// a compatibility it claims (`like Googlebot`): the one that is the
    /// User-Agent's own product token (`LinkedInBot/1.0 (compatible;
    /// Mozilla/5.0; Apache-HttpClient …)` is LinkedInBot, not the library
    /// it is built with), else the longest.
    fn known_in(&self, ua: &str) -> Option<(usize, usize, usize)> {
        let b = ua.as_bytes();
        let found: Vec<aho_corasick::Match> = self
            .matcher
            .find_iter(ua)
            .filter(|m| m.start() == 0 || !b[m.start() - 1].is_ascii_alphanumeric())
            .filter(|m| m.end() == b.len() || !b[m.end()].is_ascii_alphabetic())
            .filter(|m| !ua[..m.start()].to_ascii_lowercase().ends_with("like "))
            .collect();
        // Read only when there is a choice to make.
        let own = (found.len() > 1)
            .then(|| mannerly_robots::product_token(ua))
            .flatten();
        let is_own = |m: &aho_corasick::Match| {
            own.as_deref()
                .is_some_and(|t| ua[m.start()..m.end()].eq_ignore_ascii_case(t))
        };
        found
            .into_iter()
            // Of equals, the first (a name before its URL).
            .max_by_key(|m| (is_own(m), m.end() - m.start(), std::cmp::Reverse(m.start())))
            .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
    }
}

/// Whether what comes before a match, back to the word's start, makes it
/// part of a URL or an address.
fn in_url(before: &str) -> bool {
    let word = before.rsplit([' ', '(', ';', '+']).next().unwrap_or(before);
    word.contains("://") || word.contains('@') || word.to_ascii_lowercase().starts_with("www.")
}

/// A catalogue name as the User-Agent extends it (`Slackbot` in
/// `Slackbot-LinkExpanding`): the client's own token, which its robots.txt
/// group is matched by.
fn extended(name: &str, rest: &str) -> String {
    if !rest.starts_with(['-', '_']) {
        return name.to_owned();
    }
    let more: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(64)
        .collect();
    format!("{name}{}", more.trim_end_matches(['-', '_', '.']))
}

/// A phone or desktop app naming its platform (`App/1 CFNetwork/808.3
/// Darwin/16.3.0`), which bot catalogues do not count as bots.
fn looks_like_app(lower: &str) -> bool {
    [
        "cfnetwork/",
        "darwin/",
        "android",
        "iphone",
        "ipad",
        "windows phone",
        "amiga",
        "ibrowse",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

/// The product token a User-Agent names ([`mannerly_robots::product_token`]),
/// or `-` when it names none.
pub fn product_token(user_agent: &str) -> String {
    mannerly_robots::product_token(user_agent).unwrap_or_else(|| "-".to_owned())
}

/// The audit's name for a client the catalogue does not know: the name
/// of several words it opens with (`Tiny Tiny RSS/21.0`, `Better Uptime
/// Bot Mozilla/5.0 …`), else its product token, else the host of a URL it
/// holds, else `-` (it names nothing).
pub fn client_name(user_agent: &str) -> String {
    if let Some(name) = leading_name(user_agent) {
        return name;
    }
    if let Some(token) = mannerly_robots::product_token(user_agent) {
        return token;
    }
    url_host(user_agent).unwrap_or_else(|| "-".to_owned())
}

/// The words a User-Agent opens with, up to its first product
/// (`Name/version`), when they are two to five plain words and not a
/// platform's.
fn leading_name(user_agent: &str) -> Option<String> {
    let mut words = Vec::new();
    for word in user_agent.split(' ').take(6) {
        let (name, product) = match word.split_once('/') {
            Some((n, _)) => (n, true),
            None => (word, false),
        };
        let plain = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !plain || name.eq_ignore_ascii_case("mozilla") {
            break;
        }
        words.push(name);
        if product {
            break;
        }
    }
    (words.len() >= 2 && words.len() <= 5).then(|| words.join(" "))
}

/// The host of the first URL in a User-Agent, without `www.`.
fn url_host(user_agent: &str) -> Option<String> {
    let at = user_agent.find("://")? + 3;
    let host: String = user_agent[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        .collect();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    host.contains('.').then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_catalogue_loads_whole() {
        let raw: Vec<serde_json::Value> =
            serde_json::from_str(include_str!("../data/bots.json")).expect("bots.json is JSON");
        let built = Catalogue::from_json(include_str!("../data/bots.json")).expect("it loads");
        assert_eq!(built.len(), raw.len(), "every entry is read");
        assert!(built.len() > 100, "{} crawlers", built.len());
        assert_eq!(Catalogue::builtin().len(), raw.len());
        // Every token is found by the matcher.
        for i in 0..built.len() {
            let token = &built.get(i).expect("entry").token;
            let ua = format!("{token}/1.0 (+https://example.com/bot)");
            assert!(
                matches!(built.classify(&ua), Agent::Bot { known: Some(_), .. }),
                "{ua}"
            );
        }
    }

    #[test]
    fn categories_are_one_closed_set_and_user_triggered_fetchers_cite_their_operator() {
        // An unknown category is refused when the catalogue loads.
        let odd = r#"[{"token":"X","operator":null,"category":"monitor","rdns":[],"ranges":[]}]"#;
        assert!(Catalogue::from_json(odd).is_err());
        let c = Catalogue::builtin();
        let mut user_triggered = 0;
        for i in 0..c.len() {
            let k = c.get(i).expect("entry");
            if k.kind == BotKind::UserTriggered {
                user_triggered += 1;
                let source = k.kind_source.as_deref().unwrap_or("");
                assert!(source.starts_with("https://"), "{}: {source:?}", k.token);
            } else {
                assert!(k.kind_source.is_none(), "{}", k.token);
            }
        }
        assert!(user_triggered >= 5, "{user_triggered}");
        for token in ["FeedFetcher-Google", "ChatGPT-User", "facebookexternalhit"] {
            let Agent::Bot { known: Some(i), .. } = c.classify(&format!("{token}/1.0")) else {
                panic!("{token} is known");
            };
            assert_eq!(
                c.get(i).map(|k| k.kind),
                Some(BotKind::UserTriggered),
                "{token}"
            );
        }
        assert_eq!(kind_of("python-requests", None), BotKind::ClientLibrary);
        assert_eq!(kind_of("SomeNewBot", None), BotKind::Crawler);
    }

    #[test]
    fn a_broken_catalogue_is_an_error() {
        let err = Catalogue::from_json("[{\"token\": 7}]")
            .err()
            .expect("refused");
        assert!(err.to_string().contains("not a crawler catalogue"), "{err}");
    }

    fn token(ua: &str) -> Option<String> {
        match Catalogue::builtin().classify(ua) {
            Agent::Browser => None,
            Agent::Bot { token, .. } => Some(token),
        }
    }

    #[test]
    fn tokens() {
        let g = "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0.2272.96 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
        assert_eq!(token(g).as_deref(), Some("Googlebot"));
        assert_eq!(
            token("Googlebot-Image/1.0").as_deref(),
            Some("Googlebot-Image")
        );
        assert_eq!(token("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)").as_deref(), Some("GPTBot"));
        assert_eq!(token("curl/8.5.0").as_deref(), Some("curl"));
        assert_eq!(token("").as_deref(), Some("-"));
        assert_eq!(
            token("Mozilla/5.0 (compatible; NewThingBot/0.1)").as_deref(),
            Some("NewThingBot")
        );
        let chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
        assert_eq!(token(chrome), None);
        // A site or a contact address named the way crawlers name their
        // operator: a crawler, not a browser; a dotted product with its
        // version (an old phone's gateway) still a browser.
        assert!(token("Mozilla/5.0 (compatible; MonTools.com)").is_some());
        assert!(token("Mozilla/5.0 (compatible; Lumen; lumen@example.com)").is_some());
        let phone = "MOT-V177/0.1.75 UP.Browser/6.2.3.9.c.12 (GUI) MMP/2.0 UP.Link/6.3.1.13.0";
        assert_eq!(token(phone), None);
    }
}
