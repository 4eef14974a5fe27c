//! URL normalisation before deduplication (RFC 3986 §6.2.2 and §6.2.3),
//! and the crawl's scope.
//!
//! Two URLs that name the same resource must meet in the seen-set, and
//! two that may name different resources must stay apart, so only the
//! rules that never change the resource apply:
//!
//! | rule | example | RFC 3986 |
//! |---|---|---|
//! | scheme to lower case | `HTTP://a/` → `http://a/` | §6.2.2.1 |
//! | host to lower case | `http://A.Example/` → `http://a.example/` | §6.2.2.1 |
//! | international host to IDNA (punycode) | `http://bücher.example/` → `http://xn--bcher-kva.example/` | §6.2.2.1 (with RFC 5891) |
//! | default port dropped | `http://a:80/`, `https://a:443/` → no port | §6.2.3 |
//! | dot segments removed | `/a/./b/../c` → `/a/c` | §6.2.2.3 |
//! | percent-encoding hex to upper case | `%7e%2f` → `~%2F` (see next row for `%7e`) | §6.2.2.1 |
//! | unreserved characters decoded | `%41%7E%2D` → `A~-` | §6.2.2.2 |
//! | empty path to `/` | `http://a` → `http://a/` | §6.2.3 |
//! | fragment dropped | `/a#top` → `/a` | (a fragment is never sent) |
//!
//! And the rules that are **not** applied, because they may change which
//! resource a URL names: query parameters are not sorted or removed, a
//! trailing slash is not added or removed, `index.html` is not dropped,
//! `www.` is not added or removed, the path's case is kept, an empty query
//! (`/a?`) stays distinct from none (`/a`), and reserved characters stay
//! encoded or not as they came (`%2F` is not `/`).
//!
//! Only `http` and `https` URLs with a host are crawlable; anything else
//! (`mailto:`, `javascript:`, `data:`, `ftp:`) is refused with a reason.

use std::fmt;

/// Why a URL cannot be crawled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Not a URL, even relative to its base.
    #[error("`{url}` is not a URL: {reason}")]
    Unparsable {
        /// The text.
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// Not http or https.
    #[error("`{url}`: only http and https URLs are crawled, not {scheme}:")]
    Scheme {
        /// The URL.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// No host.
    #[error("`{url}` has no host")]
    NoHost {
        /// The URL.
        url: String,
    },
    /// Longer than the crawler keeps.
    #[error("a URL of {len} bytes is longer than the {max}-byte limit")]
    TooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
}

/// The longest URL the crawler keeps (after normalisation).
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// A normalised, crawlable URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CrawlUrl(url::Url);

impl CrawlUrl {
    /// Parses and normalises an absolute URL.
    pub fn parse(text: &str) -> Result<CrawlUrl, UrlError> {
        Self::join(None, text)
    }

    /// Resolves `text` against `base` (a link on a page), then normalises.
    pub fn join(base: Option<&url::Url>, text: &str) -> Result<CrawlUrl, UrlError> {
        let unparsable = |e: url::ParseError| UrlError::Unparsable {
            url: text.to_owned(),
            reason: e.to_string(),
        };
        let parsed = match base {
            Some(b) => b.join(text.trim()).map_err(unparsable)?,
            None => url::Url::parse(text.trim()).map_err(unparsable)?,
        };
        normalise(parsed)
    }

    /// The URL as a string.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The URL as a string, without copying it.
    pub fn into_string(self) -> String {
        self.0.into()
    }

    /// The parsed URL.
    pub fn url(&self) -> &url::Url {
        &self.0
    }

    /// The host (lower case, IDNA).
    pub fn host(&self) -> &str {
        self.0.host_str().unwrap_or("")
    }
}

impl fmt::Display for CrawlUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

fn normalise(mut u: url::Url) -> Result<CrawlUrl, UrlError> {
    let scheme = u.scheme().to_owned();
    if scheme != "http" && scheme != "https" {
        return Err(UrlError::Scheme {
            url: u.to_string(),
            scheme,
        });
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err(UrlError::NoHost { url: u.to_string() });
    }
    u.set_fragment(None);
    // Never credentials: a URL's `user:password@` would be sent as Basic
    // authentication.
    let _ = u.set_username("");
    let _ = u.set_password(None);
    // Decoding an unreserved character can form a dot segment (`%2E%2E`),
    // which parsing again removes; two rounds reach the fixed point, and a
    // third would change nothing (the property tests check idempotence).
    for _ in 0..3 {
        let path = percent_normalise(u.path());
        let query = u.query().map(percent_normalise);
        let changed = path.as_deref().is_some() || query.as_ref().is_some_and(Option::is_some);
        if !changed {
            break;
        }
        let mut s = format!(
            "{}://{}",
            u.scheme(),
            &u[url::Position::BeforeUsername..url::Position::AfterPort]
        );
        s.push_str(path.as_deref().unwrap_or(u.path()));
        if let Some(q) = u.query() {
            s.push('?');
            s.push_str(query.as_ref().and_then(Option::as_deref).unwrap_or(q));
        }
        u = url::Url::parse(&s).map_err(|e| UrlError::Unparsable {
            url: s.clone(),
            reason: e.to_string(),
        })?;
    }
    let len = u.as_str().len();
    if len > MAX_URL_BYTES {
        return Err(UrlError::TooLong {
            len,
            max: MAX_URL_BYTES,
        });
    }
    Ok(CrawlUrl(u))
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Upper-cases percent-encoding hex and decodes unreserved characters;
/// `None` when nothing changes.
fn percent_normalise(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                let v = h * 16 + l;
                // A hex digit decoded right after a stray `%` (or `%` and one
                // hex digit) would form a new escape, which the next round
                // would decode again: it stays encoded, so one round is a
                // fixed point however long the run of `%`.
                let prev = out.as_deref().unwrap_or(&s[..i]).as_bytes();
                let joins = v.is_ascii_hexdigit()
                    && (prev.ends_with(b"%")
                        || prev.len() >= 2
                            && prev[prev.len() - 2] == b'%'
                            && prev[prev.len() - 1].is_ascii_hexdigit());
                let replacement = if is_unreserved(v) && !joins {
                    Some((v as char).to_string())
                } else if b[i + 1].is_ascii_lowercase() || b[i + 2].is_ascii_lowercase() {
                    Some(format!("%{v:02X}"))
                } else {
                    None
                };
                if let Some(r) = replacement {
                    let o = out.get_or_insert_with(|| s[..i].to_owned());
                    o.push_str(&r);
                } else if let Some(o) = out.as_mut() {
                    o.push_str(&s[i..i + 3]);
                }
                i += 3;
                continue;
            }
        }
        // Copy one UTF-8 character.
        let ch_len = s[i..].chars().next().map_or(1, char::len_utf8);
        if let Some(o) = out.as_mut() {
            o.push_str(&s[i..i + ch_len]);
        }
        i += ch_len;
    }
    out
}

/// Which hosts a crawl may enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScopeMode {
    /// The seeds' hosts only (the default).
    #[default]
    Host,
    /// The seeds' registered domains (public suffix list).
    Domain,
    /// Any host.
    Any,
}

/// The crawl's scope: hosts, include and exclude patterns, depth.
#[derive(Debug, Clone)]
pub struct Scope {
    mode: ScopeMode,
    /// The seeds' hosts (names as boxed text: 16 bytes a slot, not 24),
    /// asked of every link: hashed with foldhash, seeded per table (see
    /// the note on `Hasher` in mannerly-polite).
    hosts: std::collections::HashSet<Box<str>, foldhash::fast::RandomState>,
    include: Option<regex::RegexSet>,
    exclude: Option<regex::RegexSet>,
    max_depth: Option<u32>,
}

/// Why a URL is out of scope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutOfScope {
    /// Its host (or registered domain) is not a seed's.
    #[error("{host} is not a seed's {what}")]
    Host {
        /// The host.
        host: String,
        /// `host` or `registered domain`.
        what: &'static str,
    },
    /// No `--include` pattern matches.
    #[error("no --include pattern matches")]
    NotIncluded,
    /// An `--exclude` pattern matches.
    #[error("an --exclude pattern matches")]
    Excluded,
    /// Deeper than `--max-depth`.
    #[error("depth {depth} is over --max-depth {max}")]
    TooDeep {
        /// The URL's depth (seeds are 0).
        depth: u32,
        /// The limit.
        max: u32,
    },
}

/// The registered domain of a host (itself when the suffix list has none).
pub fn registered_domain(host: &str) -> String {
    psl::domain_str(host).unwrap_or(host).to_owned()
}

impl Scope {
    /// A scope around the seeds. Patterns are `regex` crate syntax, which
    /// matches in linear time (no backtracking), so no URL can make a
    /// pattern blow up.
    pub fn new(
        mode: ScopeMode,
        seeds: &[CrawlUrl],
        include: &[String],
        exclude: &[String],
        max_depth: Option<u32>,
    ) -> Result<Scope, regex::Error> {
        let set = |p: &[String]| -> Result<Option<regex::RegexSet>, regex::Error> {
            if p.is_empty() {
                Ok(None)
            } else {
                regex::RegexSetBuilder::new(p)
                    .size_limit(1 << 22)
                    .build()
                    .map(Some)
            }
        };
        let hosts = seeds
            .iter()
            .map(|s| match mode {
                ScopeMode::Domain => registered_domain(s.host()).into_boxed_str(),
                _ => s.host().into(),
            })
            .collect();
        Ok(Scope {
            mode,
            hosts,
            include: set(include)?,
            exclude: set(exclude)?,
            max_depth,
        })
    }

    /// Whether `url`, found at `depth`, may be crawled.
    pub fn check(&self, url: &CrawlUrl, depth: u32) -> Result<(), OutOfScope> {
        match self.mode {
            ScopeMode::Any => {}
            ScopeMode::Host => {
                if !self.hosts.contains(url.host()) {
                    return Err(OutOfScope::Host {
                        host: url.host().to_owned(),
                        what: "host",
                    });
                }
            }
            ScopeMode::Domain => {
                if !self.hosts.contains(registered_domain(url.host()).as_str()) {
                    return Err(OutOfScope::Host {
                        host: url.host().to_owned(),
                        what: "registered domain",
                    });
                }
            }
        }
        if let Some(max) = self.max_depth {
            if depth > max {
                return Err(OutOfScope::TooDeep { depth, max });
            }
        }
        if let Some(inc) = &self.include {
            if !inc.is_match(url.as_str()) {
                return Err(OutOfScope::NotIncluded);
            }
        }
        if let Some(exc) = &self.exclude {
            if exc.is_match(url.as_str()) {
                return Err(OutOfScope::Excluded);
            }
        }
        Ok(())
    }
}

/// The host of a URL, or "" (the per-host page counts' key).
pub(crate) fn host_of(url: &str) -> String {
    if let Some(host) = plain_host(url) {
        return host.to_owned();
    }
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The host of an `http(s)` URL already in the form the URL parser
/// writes (lowercase ASCII name, no user info, no IPv6 brackets), read
/// without parsing the URL again: the crawl asks it of every page it
/// sends. `None` when anything could make the parser answer otherwise.
fn plain_host(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))?;
    let end = rest.find(['/', '?', '#', ':']).unwrap_or(rest.len());
    let host = &rest[..end];
    let plain = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.';
    // A name that ends in a number may be an IPv4 address in another
    // form (`1.2.3.010`, `0x7f.1`), which the parser rewrites.
    let last = host.rsplit('.').next().unwrap_or(host);
    let numeric = last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x");
    let cut = rest.as_bytes().get(end).copied();
    (!host.is_empty()
        && !numeric
        && host.bytes().all(plain)
        && !host.starts_with("xn--")
        && !host.contains(".xn--")
        && cut != Some(b':'))
    .then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The quick read of a page's host agrees with the URL parser on
        /// any URL the parser has written.
        #[test]
        fn a_plain_hosts_quick_read_agrees_with_the_parser(
            scheme in "https?",
            host in "[a-zA-Z0-9.\\-_]{0,12}(\\.[a-z0-9]{1,4}|\\.0x[0-9a-f]{1,3}|)",
            port in proptest::option::of(0u16..100),
            path in "[/?#a-z0-9:@%.]{0,12}",
        ) {
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            let text = format!("{scheme}://{host}{port}/{path}");
            if let Ok(u) = url::Url::parse(&text) {
                let written = u.to_string();
                let slow = u.host_str().unwrap_or_default().to_owned();
                if let Some(quick) = plain_host(&written) {
                    proptest::prop_assert_eq!(quick, slow.as_str(), "{}", written);
                }
                proptest::prop_assert_eq!(host_of(&written), slow);
            }
        }
    }

    #[test]
    fn a_hosts_quick_read_leaves_what_the_parser_rewrites_to_it() {
        for url in [
            "http://1.2.3.4/",
            "http://0x7f.1/",
            "http://xn--bcher-kva.test/",
            "http://a.test:8080/",
            "http://[::1]/",
            "http://u:p@a.test/",
            "http://A.test/",
        ] {
            assert_eq!(plain_host(url), None, "{url}");
        }
        assert_eq!(plain_host("https://h1.test/p?q#f"), Some("h1.test"));
        assert_eq!(host_of("http://a.test:8080/x"), "a.test");
        assert_eq!(host_of("http://[::1]/"), "[::1]");
    }

    #[test]
    fn a_run_of_stray_percents_normalises_in_one_step() {
        // Found by the fuzzer: each round decoded a `%33` that the previous
        // round had formed, and three rounds were not enough.
        for url in [
            "https://a.example/%%%%%%%%%%%%3333333;6666%%%%s",
            "https://a.example/%3%33x?q=%%%%%41%41",
            "https://a.example/%2E%2E%%33",
        ] {
            let once = CrawlUrl::parse(url).expect("parses");
            let twice = CrawlUrl::parse(once.as_str()).expect("parses again");
            assert_eq!(once, twice, "{url}");
        }
        // Escapes that join nothing are still decoded.
        let u = CrawlUrl::parse("https://a.example/%41%7e").expect("parses");
        assert_eq!(u.as_str(), "https://a.example/A~");
    }

    /// Seeds and links are requested percent-encoded, as a browser sends
    /// them, and robots.txt judges that form (a rule written with the
    /// characters themselves matches it).
    #[test]
    fn unicode_seeds_and_links_are_requested_and_judged_encoded() {
        let seed = CrawlUrl::parse("https://site.test/wiki/Käyttäjä:").expect("seed");
        assert_eq!(
            seed.as_str(),
            "https://site.test/wiki/K%C3%A4ytt%C3%A4j%C3%A4:"
        );
        let link = CrawlUrl::join(Some(seed.url()), "/wiki/Päivä?q=ö").expect("link");
        assert_eq!(
            link.as_str(),
            "https://site.test/wiki/P%C3%A4iv%C3%A4?q=%C3%B6"
        );
        let robots =
            mannerly_robots::Robots::parse("User-agent: *\nDisallow: /wiki/Käyttäjä:\n".as_bytes());
        assert!(!robots.is_allowed("mannerly", seed.as_str()));
        assert_eq!(mannerly_robots::as_requested(seed.as_str()), seed.as_str());
    }

    fn n(s: &str) -> String {
        CrawlUrl::parse(s)
            .map(|u| u.to_string())
            .unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn every_rule_in_the_table() {
        assert_eq!(n("HTTP://a.example/"), "http://a.example/");
        assert_eq!(n("http://A.Example/"), "http://a.example/");
        assert_eq!(n("http://bücher.example/"), "http://xn--bcher-kva.example/");
        assert_eq!(n("http://a.example:80/x"), "http://a.example/x");
        assert_eq!(n("https://a.example:443/x"), "https://a.example/x");
        assert_eq!(n("https://a.example:8443/x"), "https://a.example:8443/x");
        assert_eq!(n("http://a.example/a/./b/../c"), "http://a.example/a/c");
        assert_eq!(n("http://a.example/%7e%2f%3a"), "http://a.example/~%2F%3A");
        assert_eq!(
            n("http://a.example/%41%7E%2D%5f?q=%61%2b"),
            "http://a.example/A~-_?q=a%2B"
        );
        assert_eq!(n("http://a.example"), "http://a.example/");
        assert_eq!(n("http://a.example/a#top"), "http://a.example/a");
        // Decoding can form a dot segment: removed too.
        assert_eq!(n("http://a.example/x/%2E%2E/y"), "http://a.example/y");
    }

    #[test]
    fn nothing_that_changes_the_resource() {
        assert_eq!(
            n("http://a.example/b?z=1&a=2"),
            "http://a.example/b?z=1&a=2"
        );
        assert_eq!(n("http://a.example/Dir/"), "http://a.example/Dir/");
        assert_eq!(n("http://a.example/dir"), "http://a.example/dir");
        assert_eq!(
            n("http://a.example/index.html"),
            "http://a.example/index.html"
        );
        assert_eq!(n("http://a.example/a?"), "http://a.example/a?");
        assert_eq!(n("http://a.example/a%2Fb"), "http://a.example/a%2Fb");
        assert_eq!(n("http://www.a.example/"), "http://www.a.example/");
    }

    #[test]
    fn uncrawlable_urls_say_why() {
        assert!(n("mailto:a@b.example").contains("only http and https"));
        assert!(n("javascript:alert(1)").contains("only http and https"));
        assert!(n("data:text/plain,x").contains("only http and https"));
        assert!(n("not a url").contains("is not a URL"));
        let long = format!("http://a.example/{}", "x".repeat(MAX_URL_BYTES));
        assert!(n(&long).contains("longer than"));
    }

    #[test]
    fn links_resolve_against_their_page() {
        let base = url::Url::parse("https://a.example/dir/page.html").expect("base");
        let j = |t: &str| CrawlUrl::join(Some(&base), t).map(|u| u.to_string());
        assert_eq!(
            j("other.html").as_deref(),
            Ok("https://a.example/dir/other.html")
        );
        assert_eq!(j("../up").as_deref(), Ok("https://a.example/up"));
        assert_eq!(j("//b.example/x").as_deref(), Ok("https://b.example/x"));
        assert_eq!(
            j("?q=1").as_deref(),
            Ok("https://a.example/dir/page.html?q=1")
        );
        assert_eq!(j("#frag").as_deref(), Ok("https://a.example/dir/page.html"));
    }

    #[test]
    fn scope_by_host_domain_patterns_and_depth() {
        let seeds = [CrawlUrl::parse("https://www.shop-a.co.uk/").expect("seed")];
        let u = |s: &str| CrawlUrl::parse(s).expect("url");
        let host = Scope::new(ScopeMode::Host, &seeds, &[], &[], Some(2)).expect("scope");
        assert_eq!(host.check(&u("https://www.shop-a.co.uk/x"), 1), Ok(()));
        assert!(matches!(
            host.check(&u("https://blog.shop-a.co.uk/x"), 1),
            Err(OutOfScope::Host { .. })
        ));
        assert_eq!(
            host.check(&u("https://www.shop-a.co.uk/x"), 3),
            Err(OutOfScope::TooDeep { depth: 3, max: 2 })
        );
        let domain =
            Scope::new(ScopeMode::Domain, &seeds, &[], &["/private/".into()], None).expect("scope");
        assert_eq!(domain.check(&u("https://blog.shop-a.co.uk/x"), 9), Ok(()));
        assert!(domain.check(&u("https://shop-b.co.uk/x"), 0).is_err());
        assert_eq!(
            domain.check(&u("https://shop-a.co.uk/private/1"), 0),
            Err(OutOfScope::Excluded)
        );
        let inc =
            Scope::new(ScopeMode::Any, &seeds, &[r"\.html$".into()], &[], None).expect("scope");
        assert_eq!(inc.check(&u("https://z.example/a.html"), 0), Ok(()));
        assert_eq!(
            inc.check(&u("https://z.example/a.pdf"), 0),
            Err(OutOfScope::NotIncluded)
        );
        assert!(Scope::new(ScopeMode::Any, &seeds, &["(".into()], &[], None).is_err());
    }
}
