//! A web that changes, for recrawls: generated pages carry validators
//! (ETag, Last-Modified) and answer conditional requests with 304, or
//! ignore them; a page changes when a test says so ([`crate::TestWeb::change`])
//! or on a schedule; a host's sitemap gives each page's lastmod honestly,
//! or lies.

use mannerly_time::{fmt_http_date, parse_http_date, UnixMillis};

/// How a host's generated pages answer conditional requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Validators {
    /// No ETag, no Last-Modified.
    #[default]
    None,
    /// An ETag; `If-None-Match` is answered 304 when it matches.
    ETag,
    /// A Last-Modified; `If-Modified-Since` is answered 304 when the page
    /// has not changed since.
    LastModified,
    /// Both.
    Both,
    /// Both sent, but conditional requests always get the whole page.
    Ignored,
}

/// What a host's `/sitemap.xml` says of its generated pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SitemapLastmod {
    /// No sitemap.
    #[default]
    None,
    /// Each page's lastmod is when it last changed.
    Honest,
    /// Every page's lastmod is the time of the request: always new.
    Moving,
    /// Every page's lastmod is the first one: it never moves.
    Frozen,
}

/// The day a page at version 0 was last modified: 2026-01-01T00:00:00Z.
const BASE: u64 = 1_767_225_600_000;
const DAY: u64 = 86_400_000;

/// When a page at `version` was last modified.
pub(crate) fn modified(version: u32) -> UnixMillis {
    UnixMillis(BASE + u64::from(version) * DAY)
}

/// The ETag of a page at `version`.
pub(crate) fn etag(host: &str, path: &str, version: u32) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in host.bytes().chain(path.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    format!("\"{h:016x}-v{version}\"")
}

/// The changes a page's schedule has made `elapsed_ms` after the web
/// started, one every `every_ms` (0: none).
pub(crate) fn scheduled(elapsed_ms: u64, every_ms: u64) -> u32 {
    match every_ms {
        0 => 0,
        ms => u32::try_from(elapsed_ms / ms).unwrap_or(u32::MAX),
    }
}

/// The validators a page at `version` sends.
pub(crate) fn headers(
    v: Validators,
    host: &str,
    path: &str,
    version: u32,
) -> Vec<(String, String)> {
    let mut h = Vec::new();
    if matches!(v, Validators::ETag | Validators::Both | Validators::Ignored) {
        h.push(("ETag".to_owned(), etag(host, path, version)));
    }
    if matches!(
        v,
        Validators::LastModified | Validators::Both | Validators::Ignored
    ) {
        h.push(("Last-Modified".to_owned(), fmt_http_date(modified(version))));
    }
    h
}

/// Whether a conditional request may be answered 304: its validator
/// matches the page as it is now.
pub(crate) fn not_modified(
    v: Validators,
    host: &str,
    path: &str,
    version: u32,
    if_none_match: Option<&str>,
    if_modified_since: Option<&str>,
) -> bool {
    let etag_ok = matches!(v, Validators::ETag | Validators::Both);
    let date_ok = matches!(v, Validators::LastModified | Validators::Both);
    if let (true, Some(tags)) = (etag_ok, if_none_match) {
        let mine = etag(host, path, version);
        return tags.split(',').any(|t| t.trim() == mine || t.trim() == "*");
    }
    match (date_ok, if_modified_since.and_then(parse_http_date)) {
        (true, Some(since)) => modified(version).0 <= since.0,
        _ => false,
    }
}

/// `/sitemap.xml` of a host whose pages are `/p0.html` to `/p{n-1}.html`
/// under `origin`; `version(path)` gives each page's version and `now`
/// the request's time.
pub(crate) fn sitemap(
    mode: SitemapLastmod,
    origin: &str,
    pages: u32,
    version: impl Fn(&str) -> u32,
    now: UnixMillis,
) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for n in 0..pages {
        let path = format!("/p{n}.html");
        let lastmod = match mode {
            SitemapLastmod::Moving => now,
            SitemapLastmod::Frozen => modified(0),
            _ => modified(version(&path)),
        };
        xml.push_str(&format!(
            "<url><loc>{origin}{path}</loc><lastmod>{}</lastmod></url>\n",
            lastmod.to_rfc3339_millis()
        ));
    }
    xml.push_str("</urlset>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditional_answers() {
        let tag = etag("a.test", "/p1.html", 0);
        assert!(not_modified(
            Validators::ETag,
            "a.test",
            "/p1.html",
            0,
            Some(&tag),
            None
        ));
        assert!(!not_modified(
            Validators::ETag,
            "a.test",
            "/p1.html",
            1,
            Some(&tag),
            None
        ));
        let since = fmt_http_date(modified(0));
        assert!(not_modified(
            Validators::LastModified,
            "a.test",
            "/p1.html",
            0,
            None,
            Some(&since)
        ));
        assert!(!not_modified(
            Validators::LastModified,
            "a.test",
            "/p1.html",
            2,
            None,
            Some(&since)
        ));
        assert!(!not_modified(
            Validators::Ignored,
            "a.test",
            "/p1.html",
            0,
            Some(&tag),
            Some(&since)
        ));
        assert_eq!(headers(Validators::None, "a", "/", 0), Vec::new());
    }

    #[test]
    fn a_schedule_changes_a_page_every_period() {
        assert_eq!(scheduled(5_000, 0), 0, "no schedule");
        assert_eq!(scheduled(999, 1_000), 0);
        assert_eq!(scheduled(1_000, 1_000), 1);
        assert_eq!(scheduled(3_500, 1_000), 3);
        assert_eq!(scheduled(u64::MAX, 1), u32::MAX);
    }
}
