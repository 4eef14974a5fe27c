//! The product token a User-Agent header names: the one name every part of
//! mannerly reads from a User-Agent (the crawler to pick its robots.txt
//! group, the audit and the gate to name a client, the bindings).

/// The product token of a `User-Agent` header, or `None` when it names
/// nothing.
///
/// Words are split at spaces, `;`, `(`, `)`, `,` and `+`, each cut at its
/// `/`. Words that name no client are passed over: `Mozilla`,
/// `compatible`, platforms and engines (`X11`, `Windows`, `Linux`,
/// `MSIE`, `AppleWebKit`, …), versions, URLs, a word after `like` (a
/// compatibility, never the client), and words that alone name no one
/// (`spider`, `bot`, `fetcher`). The first word left that says it is a
/// crawler (`bot`, `crawl`, `spider`, `slurp`, `fetch`, `scrap`) is the
/// token, else the first word left. The token is the word's leading run
/// of ASCII letters, digits, `-`, `_` and `.`, at most 64 of them.
///
/// ```
/// use mannerly_robots::product_token;
/// let ua = "Mozilla/5.0 (compatible; MyBot/1.0; +https://example.com/bot)";
/// assert_eq!(product_token(ua).as_deref(), Some("MyBot"));
/// assert_eq!(product_token("ExampleBot/2.1").as_deref(), Some("ExampleBot"));
/// assert_eq!(product_token("FreshRSS/1.11 (Linux; https://freshrss.org) like Googlebot").as_deref(), Some("FreshRSS"));
/// assert_eq!(product_token("  "), None);
/// ```
pub fn product_token(user_agent: &str) -> Option<String> {
    let mut first = None;
    let mut after_like = false;
    for name in words(user_agent) {
        let lower = name.to_ascii_lowercase();
        if std::mem::replace(&mut after_like, lower == "like") || names_no_client(&lower) {
            continue;
        }
        if ["bot", "crawl", "spider", "slurp", "fetch", "scrap"]
            .iter()
            .any(|m| lower.contains(m))
        {
            return Some(clean(name)).filter(|t| !t.is_empty());
        }
        first.get_or_insert(name);
    }
    first.map(clean).filter(|t| !t.is_empty())
}

/// A User-Agent's words: split at spaces and separators, cut at `/`,
/// trimmed of punctuation, with URLs, addresses and `key:value` words
/// left out.
fn words(user_agent: &str) -> impl Iterator<Item = &str> {
    user_agent
        .split([' ', ';', '(', ')', ',', '+'])
        .map(|p| p.split('/').next().unwrap_or(p))
        .map(|p| p.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|p| !p.is_empty() && !p.contains([':', '@']))
}

/// Words of platforms, engines and browsers, lower-case: they describe
/// what a client runs on or imitates, never who it is.
const PLATFORM_WORDS: [&str; 48] = [
    "amd64",
    "android",
    "applewebkit",
    "arm",
    "bot",
    "build",
    "chrome",
    "chromium",
    "compatible",
    "cpu",
    "crawler",
    "edg",
    "edge",
    "en",
    "en-us",
    "fetcher",
    "firefox",
    "gecko",
    "i686",
    "intel",
    "ipad",
    "iphone",
    "khtml",
    "like",
    "linux",
    "mac",
    "macintosh",
    "mobile",
    "mozilla",
    "msie",
    "nt",
    "opera",
    "os",
    "robot",
    "rv",
    "safari",
    "spider",
    "touch",
    "trident",
    "u",
    "ubuntu",
    "version",
    "win64",
    "windows",
    "wow64",
    "x11",
    "x64",
    "x86_64",
];

/// Whether a word (lower-case) can name no client: a platform word, a
/// generic word, a version, a URL.
fn names_no_client(lower: &str) -> bool {
    lower.starts_with("http")
        || lower.starts_with("www.")
        || !lower.bytes().any(|b| b.is_ascii_alphabetic())
        || PLATFORM_WORDS.binary_search(&lower).is_ok()
}

/// The name's leading run of token characters: a character outside them
/// ends the token (`UnicödeBöt` is `Unic`, as Google's matcher reads a
/// User-agent line), never dropped from its middle.
fn clean(name: &str) -> String {
    name.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::product_token;

    #[test]
    fn the_crawler_word_wins_over_the_browser_words_before_it() {
        let t = |ua: &str| product_token(ua);
        assert_eq!(
            t("Mozilla/5.0 (compatible; MyBot/1.0; +https://x)").as_deref(),
            Some("MyBot")
        );
        assert_eq!(
            t("OpBot/1.0 (+http://op.example/bot)").as_deref(),
            Some("OpBot")
        );
        assert_eq!(t("Googlebot-Image/1.0").as_deref(), Some("Googlebot-Image"));
        assert_eq!(t("curl/8.5.0").as_deref(), Some("curl"));
        assert_eq!(t("Mozilla/5.0 (compatible)"), None);
        assert_eq!(t("UnicödeBöt").as_deref(), Some("Unic"));
        assert_eq!(t(""), None);
    }

    #[test]
    fn platform_words_and_compatibilities_never_name_a_client() {
        let t = |ua: &str| product_token(ua);
        let spinn3r = "Mozilla/5.0 (X11; U; Linux x86_64; en-US; rv:1.9.0.19; aggregator:Spinn3r (Spinn3r 3.1); http://spinn3r.com/robot) Gecko/2010040121 Firefox/3.0.19";
        assert_eq!(t(spinn3r).as_deref(), Some("Spinn3r"));
        assert_eq!(
            t("Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)").as_deref(),
            Some("Sogou")
        );
        assert_eq!(
            t("Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)")
                .as_deref(),
            Some("Feedly")
        );
        assert_eq!(
            t("TelegramBot (like TwitterBot)").as_deref(),
            Some("TelegramBot")
        );
        assert_eq!(
            t("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"),
            None
        );
        assert!(super::PLATFORM_WORDS.windows(2).all(|w| w[0] < w[1]));
    }
}
