//! Arbitrary bytes as an HTML page (and its first line as a URL to
//! normalise): link extraction and URL normalisation never panic, every
//! link is crawlable and already normalised (normalising again changes
//! nothing), and the number of links kept is bounded.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mannerly_crawl::links::{extract, x_robots_tag, MAX_LINKS};
use mannerly_crawl::normalize::CrawlUrl;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let first = text.lines().next().unwrap_or("");
    if let Ok(u) = CrawlUrl::parse(first) {
        let again = CrawlUrl::parse(u.as_str()).expect("a normalised URL parses");
        assert_eq!(again, u, "normalisation is idempotent");
    }
    let _ = x_robots_tag(text.lines().take(4), "mannerly");
    let page = url::Url::parse("https://example.com/dir/page.html").expect("static URL");
    let found = extract(
        data,
        &page,
        "mannerly",
        data.first().is_some_and(|b| b % 2 == 0),
    );
    assert!(found.links.len() + found.rel_nofollow.len() <= MAX_LINKS);
    for l in found.links.iter().chain(&found.rel_nofollow) {
        assert!(l.as_str().starts_with("http://") || l.as_str().starts_with("https://"));
        assert_eq!(
            CrawlUrl::parse(l.as_str()).as_ref(),
            Ok(l),
            "links come out normalised"
        );
    }
});
