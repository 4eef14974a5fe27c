//! Outlinks and robots directives from a page, pure: bytes in, a
//! [`PageLinks`] out. A page's start tags are read by the crate's own
//! reader (module `tags`), by HTML's tokenizer rules and `lol_html`'s
//! simulation of the tree builder, or, in the two cases it leaves
//! (`<!--` in a script, a tag ended by `NAME=>`), by `lol_html` itself,
//! a streaming parser: a page is never held as a tree, and the number of
//! links kept is bounded. Both readers give the same links (tests hold
//! them to it on generated pages); the first does a sixth of the work.
//!
//! Links come from `a[href]`, `area[href]`, `link[href]`, `frame[src]` and
//! `iframe[src]`, resolved against the first `<base href>` (which applies
//! to the whole document, links before it included, as in HTML) or the
//! page's URL. `javascript:`, `mailto:`, `data:` and other non-http links
//! are dropped. `rel="nofollow"` on `a` and `area` skips the link unless
//! the crawl follows them. Attribute values are read with their character
//! references decoded (`&amp;` is `&`), as a browser reads them.
//!
//! Robots directives: `<meta name="robots">` and `<meta name="TOKEN">` for
//! the crawler's own token, and the `X-Robots-Tag` header, in both its
//! global form (`noindex, nofollow`) and its per-crawler form
//! (`TOKEN: nofollow`). `none` means `noindex, nofollow`.

use std::cell::RefCell;

use crate::normalize::CrawlUrl;

/// The most links kept from one page; the rest are counted.
pub const MAX_LINKS: usize = 10_000;

/// Robots directives that apply to the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Directives {
    /// Do not follow this page's links.
    pub nofollow: bool,
    /// Do not index this page (recorded; a crawler still stores it).
    pub noindex: bool,
}

impl Directives {
    fn apply(&mut self, list: &str) {
        for d in list.split(',') {
            match d.trim().to_ascii_lowercase().as_str() {
                "nofollow" => self.nofollow = true,
                "noindex" => self.noindex = true,
                "none" => {
                    self.nofollow = true;
                    self.noindex = true;
                }
                _ => {}
            }
        }
    }
}

/// What a page links to, and what it says about following.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// Crawlable links, normalised, in document order, without repeats.
    pub links: Vec<CrawlUrl>,
    /// `rel=nofollow` links skipped (when they are not followed).
    pub rel_nofollow: Vec<CrawlUrl>,
    /// Links dropped: not http(s), or not a URL.
    pub dropped: usize,
    /// Links past [`MAX_LINKS`], not kept.
    pub over_limit: usize,
    /// The page holds a password field: a login form.
    pub login_form: bool,
    /// From meta tags and `X-Robots-Tag`.
    pub directives: Directives,
}

/// Reads `X-Robots-Tag` values for the crawler with product token `agent`.
pub fn x_robots_tag<'a>(values: impl IntoIterator<Item = &'a str>, agent: &str) -> Directives {
    // Directives that carry a value after a colon; anything else before a
    // colon is a crawler's token.
    const VALUED: [&str; 4] = [
        "unavailable_after",
        "max-snippet",
        "max-image-preview",
        "max-video-preview",
    ];
    let mut d = Directives::default();
    for v in values {
        match v.split_once(':') {
            Some((who, rest)) => {
                let who = who.trim();
                if VALUED.iter().any(|k| who.eq_ignore_ascii_case(k)) {
                    d.apply(v);
                } else if who.eq_ignore_ascii_case(agent) {
                    d.apply(rest);
                }
            }
            None => d.apply(v),
        }
    }
    d
}

/// The elements a page's links and directives come from.
const READ: [&str; 8] = [
    "a", "area", "link", "frame", "iframe", "base", "meta", "input",
];

/// [`READ`], as one selector parsed once: each selector a rewriter holds
/// is compiled again for every page, and building the rewriter cost more
/// than reading a small page.
static SELECTOR: std::sync::LazyLock<lol_html::Selector> =
    std::sync::LazyLock::new(|| READ.join(", ").parse().expect("a constant, valid selector"));

/// An attribute's value as the page means it: the value as written, with
/// its character references (`&amp;` between a query's parameters above
/// all) decoded by HTML's rules for attribute values, as a browser reads
/// them (`&copy=2` stays as it is: a reference without its `;` before
/// `=` or a letter is text there).
fn unescape(value: &str) -> String {
    htmlize::unescape_attribute(value).into_owned()
}

/// What a page's elements gave, before links are resolved.
#[derive(Debug, Default, PartialEq, Eq)]
struct Raw {
    links: Vec<(String, bool)>,
    base: Option<String>,
    over: usize,
    directives: Directives,
    password: bool,
}

impl Raw {
    fn push(&mut self, href: String, nofollow: bool) {
        if self.links.len() < MAX_LINKS {
            self.links.push((href, nofollow));
        } else {
            self.over += 1;
        }
    }

    /// One element named `tag` (lower case), its attributes' values by
    /// `attr`, decoded.
    fn element(&mut self, tag: &str, attr: impl Fn(&str) -> Option<String>, agent: &str) {
        match tag {
            "a" | "area" => {
                if let Some(h) = attr("href") {
                    let nofollow = attr("rel").is_some_and(|r| {
                        r.split_ascii_whitespace()
                            .any(|t| t.eq_ignore_ascii_case("nofollow"))
                    });
                    self.push(h, nofollow);
                }
            }
            "link" => {
                if let Some(h) = attr("href") {
                    self.push(h, false);
                }
            }
            "frame" | "iframe" => {
                if let Some(h) = attr("src") {
                    self.push(h, false);
                }
            }
            "base" if self.base.is_none() => self.base = attr("href"),
            "input" => {
                let kind = attr("type").unwrap_or_default();
                if kind.trim().eq_ignore_ascii_case("password") {
                    self.password = true;
                }
            }
            "meta" => {
                let name = attr("name").unwrap_or_default();
                if name.eq_ignore_ascii_case("robots") || name.eq_ignore_ascii_case(agent) {
                    if let Some(c) = attr("content") {
                        self.directives.apply(&c);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The elements read of `html` by the reader of start tags
/// ([`crate::tags`]), or `None` where the page needs `lol_html`.
fn read_fast(html: &[u8], agent: &str) -> Option<Raw> {
    let mut raw = Raw::default();
    crate::tags::start_tags(html, |tag| {
        if let Some(name) = READ.iter().find(|n| tag.is(n)) {
            let attr = |a: &str| tag.get(a).map(|v| unescape(&String::from_utf8_lossy(v)));
            raw.element(name, attr, agent);
        }
    })
    .ok()?;
    Some(raw)
}

/// The elements read of `html` by `lol_html`.
fn read_full(html: &[u8], agent: &str) -> Raw {
    use lol_html::html_content::Element;
    use lol_html::{ElementContentHandlers, HtmlRewriter, Settings};
    let raw = RefCell::new(Raw::default());
    let handler = ElementContentHandlers::default().element(|el: &mut Element<'_, '_>| {
        let attr = |a: &str| el.get_attribute(a).map(|v| unescape(&v));
        raw.borrow_mut().element(&el.tag_name(), attr, agent);
        Ok(())
    });
    let settings = Settings::new()
        .append_element_content_handler((std::borrow::Cow::Borrowed(&*SELECTOR), handler));
    {
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        // A parse error (bad encoding, memory limit) keeps what was read.
        let _ = rewriter.write(html).and_then(|()| rewriter.end());
    }
    raw.into_inner()
}

/// Extracts links and directives from an HTML page fetched from `page`.
/// `html` may be cut (a capped body): what was read is used.
pub fn extract(html: &[u8], page: &url::Url, agent: &str, follow_rel_nofollow: bool) -> PageLinks {
    let raw = read_fast(html, agent).unwrap_or_else(|| read_full(html, agent));
    let base = raw
        .base
        .and_then(|b| page.join(b.trim()).ok())
        .unwrap_or_else(|| page.clone());
    let mut out = PageLinks {
        over_limit: raw.over,
        directives: raw.directives,
        login_form: raw.password,
        ..PageLinks::default()
    };
    let mut resolved = Vec::with_capacity(raw.links.len());
    for (href, nofollow) in raw.links {
        match CrawlUrl::join(Some(&base), &href) {
            Ok(u) => resolved.push((u, nofollow)),
            Err(_) => out.dropped += 1,
        }
    }
    // Repeats are found by borrowing the resolved URLs, not copying them
    // (foldhash, seeded per table: see the note on `Hasher` in mannerly-polite).
    let mut seen = std::collections::HashSet::with_capacity_and_hasher(
        resolved.len(),
        foldhash::fast::RandomState::default(),
    );
    let first: Vec<bool> = resolved
        .iter()
        .map(|(u, _)| seen.insert(u.as_str()))
        .collect();
    drop(seen);
    for ((u, nofollow), first) in resolved.into_iter().zip(first) {
        if !first {
            continue;
        }
        if nofollow && !follow_rel_nofollow {
            out.rel_nofollow.push(u);
        } else {
            out.links.push(u);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> url::Url {
        url::Url::parse("https://a.example/dir/page.html").expect("url")
    }

    fn urls(v: &[CrawlUrl]) -> Vec<&str> {
        v.iter().map(CrawlUrl::as_str).collect()
    }

    #[test]
    fn every_kind_of_link_resolved_and_deduplicated() {
        let html = br#"<html><head><link rel="stylesheet" href="/s.css">
            <base href="https://cdn.example/base/"></head><body>
            <a href="one.html">1</a> <a href="ONE.html#x">dup?</a> <a href="one.html#y">dup</a>
            <area href="/map"> <iframe src="frame.html"></iframe> <frame src="//b.example/f">
            <a href="javascript:void(0)">js</a> <a href="mailto:x@y.example">m</a>
            <a href="data:text/plain,x">d</a> <a href="http://[bad">bad</a>
            <a href="nf" rel="external NoFollow">nf</a></body></html>"#;
        let l = extract(html, &page(), "mannerly", false);
        assert_eq!(
            urls(&l.links),
            [
                "https://cdn.example/s.css",
                "https://cdn.example/base/one.html",
                "https://cdn.example/base/ONE.html",
                "https://cdn.example/map",
                "https://cdn.example/base/frame.html",
                "https://b.example/f",
            ]
        );
        assert_eq!(urls(&l.rel_nofollow), ["https://cdn.example/base/nf"]);
        assert_eq!(l.dropped, 4);
        assert_eq!(l.directives, Directives::default());
        let l = extract(html, &page(), "mannerly", true);
        assert!(urls(&l.links).contains(&"https://cdn.example/base/nf"));
    }

    #[test]
    fn meta_robots_for_everyone_and_for_our_token() {
        let d = |html: &str, agent| extract(html.as_bytes(), &page(), agent, false).directives;
        let both = Directives {
            nofollow: true,
            noindex: true,
        };
        let noindex = Directives {
            nofollow: false,
            noindex: true,
        };
        assert_eq!(
            d(r#"<meta name="ROBOTS" content="noindex">"#, "mannerly"),
            noindex
        );
        assert!(
            d(
                r#"<meta name="mannerly" content="nofollow"><a href=x>x</a>"#,
                "Mannerly"
            )
            .nofollow
        );
        assert_eq!(
            d(r#"<meta name="otherbot" content="none">"#, "mannerly"),
            Directives::default()
        );
        assert_eq!(
            d(r#"<meta name="robots" content="none">"#, "mannerly"),
            both
        );
    }

    /// Character references in attribute values are read as a browser
    /// reads them, in links, `<base>`, `rel` and meta content alike: a
    /// query's `&amp;` is `&`, a numeric reference its character, and a
    /// parameter named like a reference (`&copy=`, no `;`) stays text.
    #[test]
    fn character_references_in_attributes_are_decoded() {
        let html = br#"<base href="https://b.example/x&#47;">
            <a href="list?page=2&amp;sort=asc">a</a>
            <a href="q?a=1&copy=2&amp;lang=en">b</a>
            <a href='q?x=&lt;y&gt;&quot;'>c</a>
            <a href="nf" rel="no&#x66;ollow">nf</a>
            <meta name="robots" content="noindex&#44;nofollow">"#;
        let l = extract(html, &page(), "mannerly", false);
        assert_eq!(
            urls(&l.links),
            [
                "https://b.example/x/list?page=2&sort=asc",
                "https://b.example/x/q?a=1&copy=2&lang=en",
                "https://b.example/x/q?x=%3Cy%3E%22",
            ]
        );
        assert_eq!(urls(&l.rel_nofollow), ["https://b.example/x/nf"]);
        assert_eq!(
            l.directives,
            Directives {
                nofollow: true,
                noindex: true
            }
        );
    }

    proptest::proptest! {
        /// Any link text, written into a page as HTML escapes it (`&` and
        /// `"` as references), is the link the text itself gives: what a
        /// page escapes is read back unescaped, and nothing else changes.
        #[test]
        fn an_escaped_link_is_read_as_its_text(
            text in r#"[a-z0-9/?=&;#%:. "'<>\x{e4}\x{3b1}-]{0,40}"#,
        ) {
            let escaped = text.replace('&', "&amp;").replace('"', "&quot;");
            let html = format!(r#"<a href="{escaped}">x</a>"#);
            let l = extract(html.as_bytes(), &page(), "mannerly", false);
            let want = CrawlUrl::join(Some(&page()), &text).ok();
            let want: Vec<&str> = want.iter().map(CrawlUrl::as_str).collect();
            proptest::prop_assert_eq!(urls(&l.links), want.clone());
            proptest::prop_assert_eq!(l.dropped, usize::from(want.is_empty()));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        /// The reader of start tags finds what lol_html finds on any page
        /// it does not leave to lol_html, cut anywhere.
        #[test]
        fn the_fast_reader_reads_as_lol_html_does(
            pieces in proptest::collection::vec(crate::tags::tests::piece(), 0..24),
            cut in 0usize..400,
        ) {
            let page = pieces.concat();
            let page = &page[..cut.min(page.len())];
            if let Some(fast) = read_fast(page, "mannerly") {
                proptest::prop_assert_eq!(fast, read_full(page, "mannerly"));
            }
        }
    }

    /// Everyday pages take the fast path.
    #[test]
    fn ordinary_pages_are_read_without_a_full_parser() {
        let page = br#"<!DOCTYPE html><html><head><title>T</title>
            <script>var a = "<a href=x>";</script><style>a>b{}</style>
            <meta name=robots content="noindex"></head><body><!-- menu -->
            <a href="/one">1</a><iframe src="/f"></iframe><form><input type=password></form>"#;
        let raw = read_fast(page, "mannerly").expect("read fast");
        assert_eq!(raw, read_full(page, "mannerly"));
        assert_eq!(raw.links.len(), 2);
        assert!(raw.password && raw.directives.noindex);
        assert!(read_fast(b"<script><!-- x --></script>", "mannerly").is_none());
    }

    #[test]
    fn x_robots_tag_forms() {
        assert!(x_robots_tag(["noindex, nofollow"], "mannerly").nofollow);
        assert!(x_robots_tag(["mannerly: nofollow"], "Mannerly").nofollow);
        assert!(!x_robots_tag(["googlebot: nofollow"], "mannerly").nofollow);
        let d = x_robots_tag(
            ["unavailable_after: 25 Jun 2010 15:00:00 PST", "noindex"],
            "mannerly",
        );
        assert_eq!(
            d,
            Directives {
                nofollow: false,
                noindex: true
            }
        );
        assert!(x_robots_tag(["googlebot: noindex", "mannerly: none"], "mannerly").nofollow);
    }

    #[test]
    fn links_are_bounded_and_cut_pages_keep_what_was_read() {
        let many: String = (0..MAX_LINKS + 5)
            .map(|i| format!("<a href=/p{i}>"))
            .collect();
        let l = extract(many.as_bytes(), &page(), "mannerly", false);
        assert_eq!((l.links.len(), l.over_limit), (MAX_LINKS, 5));
        let l = extract(
            b"<a href=/one>1</a><a href=\"/tw",
            &page(),
            "mannerly",
            false,
        );
        assert_eq!(urls(&l.links), ["https://a.example/one"]);
    }
}
