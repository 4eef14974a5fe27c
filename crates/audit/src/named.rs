//! What a User-Agent names besides its token, for finding the crawler's
//! operator: a page (`+https://...`), a site written without its scheme
//! (`twingly.com`, `www.example.com/bot.htm`), a contact address
//! (`crawler@example.com`). A site or an address counts only under a
//! suffix the Public Suffix List knows, so `node.js` or `Safari/537.36`
//! names nothing.

/// How a User-Agent lets its operator be found, the best way first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Named<'a> {
    /// An http(s) URL.
    Page(&'a str),
    /// A site without `http(s)://`.
    Site(&'a str),
    /// An e-mail address.
    Contact(&'a str),
}

/// The best thing `ua` names to find its operator by, if any.
pub(crate) fn named(ua: &str) -> Option<Named<'_>> {
    if let Some(page) = mannerly_robots::page_named(ua) {
        return Some(Named::Page(page));
    }
    let words = || {
        ua.split(|c: char| c.is_whitespace() || c == ';' || c == '(' || c == ')')
            .map(|w| w.trim_start_matches('+').trim_end_matches([',', '.', ':']))
    };
    if let Some(site) = words().find(|w| is_site(w)) {
        return Some(Named::Site(site));
    }
    words()
        .map(|w| w.strip_prefix("mailto:").unwrap_or(w))
        .find(|w| is_contact(w))
        .map(Named::Contact)
}

/// `host[/path]` whose host is a registrable domain under a known suffix.
fn is_site(word: &str) -> bool {
    let host = word.split('/').next().unwrap_or_default();
    // `com.google.android.youtube/17.36` or `jp.naver.line` is an app's
    // id, not a site; `kb.dk` is a site.
    let first = host
        .split('.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let top =
        first.len() == 2 || ["com", "org", "net", "edu", "gov", "io"].contains(&first.as_str());
    let reversed = top && host.split('.').count() >= 3;
    !reversed && is_domain(host)
}

/// Whether `ua` names a site or a contact address as only automated
/// clients do: not a product of dotted name and a version
/// (`UP.Link/6.3`, an old phone browser's gateway; `ricardo.ch/8.28`, an
/// app), which browsers and apps carry too.
pub(crate) fn names_its_operator(ua: &str) -> bool {
    match named(ua) {
        Some(Named::Contact(_)) => true,
        Some(Named::Site(w)) => !w
            .split_once('/')
            .is_some_and(|(_, v)| v.starts_with(|c: char| c.is_ascii_digit())),
        _ => false,
    }
}

/// `local@domain`, the domain under a known suffix.
fn is_contact(word: &str) -> bool {
    match word.split_once('@') {
        Some((local, domain)) => !local.is_empty() && is_domain(domain),
        None => false,
    }
}

fn is_domain(host: &str) -> bool {
    let lower = host.to_ascii_lowercase();
    let plain = lower
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    if !plain || !lower.contains('.') || lower.starts_with('.') || lower.contains("..") {
        return false;
    }
    let known = psl::suffix(lower.as_bytes()).is_some_and(|s| s.is_known());
    known && psl::domain(lower.as_bytes()).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_way_to_find_the_operator_is_taken() {
        use Named::*;
        for (ua, found) in [
            (
                "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)",
                Some(Page("https://example.com/bot")),
            ),
            (
                "Mozilla/5.0 (compatible; Twingly Recon; twingly.com)",
                Some(Site("twingly.com")),
            ),
            ("mindUpBot (datenbutler.de)", Some(Site("datenbutler.de"))),
            (
                "GingerCrawler/1.0 (Language Assistant for Dyslexics; www.gingersoftware.com/crawler_agent.htm; support at ginger software dot com)",
                Some(Site("www.gingersoftware.com/crawler_agent.htm")),
            ),
            ("Bot.AraTurka.com/0.0.1", Some(Site("Bot.AraTurka.com/0.0.1"))),
            (
                "Mozilla/5.0 (compatible; NaverBot/1.0; nhnbot@naver.com)",
                Some(Contact("nhnbot@naver.com")),
            ),
            (
                "OpBot/1.0 (mailto:op@example.com)",
                Some(Contact("op@example.com")),
            ),
            // Versions, platforms and made-up suffixes name nothing.
            ("RudeBot/2.0", None),
            ("Jersey/2.25.1 (HttpUrlConnection 1.8.0_141)", None),
            ("kb.dk_bot", None),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", None),
            ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; .NET CLR 2.0.50727)", None),
            ("node.js/18 undici", None),
            ("Bot (@handle)", None),
            ("Bot 192.168.1.1", None),
            ("com.google.android.youtube/17.36.4 (Linux; U; Android 12) gzip", None),
            ("Line/13.1 jp.naver.line.android", None),
            ("kb.dk-crawler (kb.dk)", Some(Site("kb.dk"))),
        ] {
            assert_eq!(named(ua), found, "{ua}");
        }
    }
}
