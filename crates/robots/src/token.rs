//! The product token a User-Agent header names: the one name every part of
//! mannerly reads from a User-Agent (the crawler to pick its robots.txt
//! group, the audit and the gate to name a client, the bindings).

/// The product token of a `User-Agent` header, or `None` when it names
/// nothing.
///
/// Words are split at spaces, `;`, `(`, `)`, `,` and `+`, each cut at its
/// `/`. `Mozilla`, `compatible` and URLs are passed over; the first word
/// that says it is a crawler (`bot`, `crawl`, `spider`, `slurp`, `fetch`,
/// `scrap`) is the token, else the first word left. The token is the
/// word's leading run of ASCII letters, digits, `-`, `_` and `.`, at most
/// 64 of them.
///
/// ```
/// use mannerly_robots::product_token;
/// let ua = "Mozilla/5.0 (compatible; MyBot/1.0; +https://example.com/bot)";
/// assert_eq!(product_token(ua).as_deref(), Some("MyBot"));
/// assert_eq!(product_token("ExampleBot/2.1").as_deref(), Some("ExampleBot"));
/// assert_eq!(product_token("  "), None);
/// ```
pub fn product_token(user_agent: &str) -> Option<String> {
    let names = user_agent
        .split([' ', ';', '(', ')', ',', '+'])
        .map(|p| p.split('/').next().unwrap_or(p))
        .map(|p| p.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|p| !p.is_empty() && !p.contains(':'));
    let mut first = None;
    for name in names {
        let lower = name.to_ascii_lowercase();
        if lower == "mozilla" || lower == "compatible" || lower.starts_with("http") {
            continue;
        }
        if ["bot", "crawl", "spider", "slurp", "fetch", "scrap"]
            .iter()
            .any(|m| lower.contains(m))
        {
            return Some(clean(name));
        }
        first.get_or_insert(name);
    }
    first.map(clean).filter(|t| !t.is_empty())
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
}
