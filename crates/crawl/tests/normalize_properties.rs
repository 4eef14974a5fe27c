//! URL normalisation properties: it is idempotent; URLs that RFC 3986 §6
//! makes equivalent (case of scheme and host, default port, dot segments,
//! percent-encoding of unreserved characters and hex case, fragments)
//! meet; URLs that may name different resources (path case, query) stay
//! apart.

use mannerly_crawl::normalize::CrawlUrl;
use proptest::prelude::*;

/// A canonical URL's parts: lower-case host, path segments of unreserved
/// characters, an optional query.
#[derive(Debug, Clone)]
struct Parts {
    https: bool,
    host: String,
    segments: Vec<String>,
    query: Option<String>,
}

fn parts() -> impl Strategy<Value = Parts> {
    (
        any::<bool>(),
        "[a-z][a-z0-9]{0,8}(\\.[a-z][a-z0-9]{0,8}){1,2}",
        proptest::collection::vec("[A-Za-z0-9_~-]{1,8}", 0..5),
        proptest::option::of("[a-z0-9=&]{0,10}"),
    )
        .prop_map(|(https, host, segments, query)| Parts {
            https,
            host,
            segments,
            query,
        })
}

fn canonical(p: &Parts) -> String {
    let mut s = format!(
        "{}://{}/{}",
        if p.https { "https" } else { "http" },
        p.host,
        p.segments.join("/")
    );
    if let Some(q) = &p.query {
        s.push('?');
        s.push_str(q);
    }
    s
}

/// An equivalent spelling, driven by `choices`.
fn variant(p: &Parts, choices: &[u8]) -> String {
    let mut c = choices.iter().copied().cycle();
    let mut next = || c.next().unwrap_or(0);
    let scheme = if p.https { "HtTpS" } else { "HTTP" };
    let host: String = p
        .host
        .chars()
        .map(|ch| {
            if next() % 2 == 0 {
                ch.to_ascii_uppercase()
            } else {
                ch
            }
        })
        .collect();
    let port = match (next() % 2, p.https) {
        (0, true) => ":443",
        (0, false) => ":80",
        _ => "",
    };
    let mut path = String::new();
    for seg in &p.segments {
        path.push('/');
        if next() % 3 == 0 {
            path.push_str("./");
        }
        if next() % 4 == 0 {
            path.push_str("zz/../");
        }
        for ch in seg.chars() {
            if next() % 3 == 0 {
                let enc = format!("%{:02X}", ch as u32);
                path.push_str(&if next() % 2 == 0 {
                    enc.to_lowercase()
                } else {
                    enc
                });
            } else {
                path.push(ch);
            }
        }
    }
    if p.segments.is_empty() && next() % 2 == 0 {
        // `http://host` and `http://host/` are the same.
    } else if path.is_empty() {
        path.push('/');
    }
    let mut s = format!("{scheme}://{host}{port}{path}");
    if let Some(q) = &p.query {
        s.push('?');
        s.push_str(q);
    }
    if next() % 2 == 0 {
        s.push_str("#section-2");
    }
    s
}

fn norm(s: &str) -> Result<String, String> {
    CrawlUrl::parse(s)
        .map(|u| u.to_string())
        .map_err(|e| e.to_string())
}

proptest! {
    #[test]
    fn idempotent(s in "(https?|HTTP)://[a-zA-Z0-9.%-]{1,12}(:[0-9]{1,5})?(/[a-zA-Z0-9%._~!$&'()*+,;=:@-]{0,6}){0,5}(\\?[a-zA-Z0-9%=&/?-]{0,10})?(#.{0,5})?") {
        if let Ok(once) = norm(&s) {
            prop_assert_eq!(norm(&once), Ok(once.clone()), "from {}", s);
        }
    }

    /// An HTML page's links come out of `links::extract` resolved and
    /// normalised, and the crawl keeps them without resolving them again:
    /// resolving one again against its page must change nothing.
    #[test]
    fn a_resolved_link_resolves_to_itself(link in "(https?://[a-z0-9.-]{1,8}|//[a-z.]{1,6})?(/|\\.\\./|\\./)?([a-zA-Z0-9%._~!$&'()*+,;=:@-]{0,6}/){0,4}(\\?[a-zA-Z0-9%=&/?-]{0,10})?(#.{0,5})?") {
        let page = url::Url::parse("https://a.example/dir/sub/page.html").expect("page");
        if let Ok(once) = CrawlUrl::join(Some(&page), &link) {
            let again = CrawlUrl::join(Some(&page), once.as_str()).ok().map(CrawlUrl::into_string);
            prop_assert_eq!(again.as_deref(), Some(once.as_str()), "from {}", link);
        }
    }

    #[test]
    fn equivalent_urls_meet(p in parts(), choices in proptest::collection::vec(any::<u8>(), 1..64)) {
        let want = norm(&canonical(&p));
        prop_assert!(want.is_ok());
        prop_assert_eq!(norm(&variant(&p, &choices)), want, "{}", variant(&p, &choices));
    }

    #[test]
    fn different_resources_stay_apart(p in parts(), which in any::<usize>()) {
        let a = norm(&canonical(&p));
        // Change the case of one letter in the path: another resource.
        let mut q = p.clone();
        let letters: Vec<(usize, usize)> = q.segments.iter().enumerate()
            .flat_map(|(i, s)| s.char_indices().filter(|(_, c)| c.is_ascii_alphabetic()).map(move |(j, _)| (i, j)))
            .collect();
        if let Some(&(i, j)) = letters.get(which % letters.len().max(1)) {
            let seg = &mut q.segments[i];
            let ch = seg.as_bytes()[j] as char;
            let flipped = if ch.is_ascii_uppercase() { ch.to_ascii_lowercase() } else { ch.to_ascii_uppercase() };
            seg.replace_range(j..=j, &flipped.to_string());
            prop_assert_ne!(norm(&canonical(&q)), a.clone());
        }
        // Another query: another resource.
        let mut r = p.clone();
        r.query = Some(format!("{}x", p.query.clone().unwrap_or_default()));
        prop_assert_ne!(norm(&canonical(&r)), a);
    }
}
