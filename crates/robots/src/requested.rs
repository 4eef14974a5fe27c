//! A URL as a crawler requests it.
//!
//! Google's reference library, and this crate's matcher after it, take the
//! URL as the crawler will send it: percent-encoded by the caller. A person
//! typing a path into a checker, or a framework handing over what a page
//! linked to, has `/wiki/Käyttäjä:`, while a crawler requests
//! `/wiki/K%C3%A4ytt%C3%A4j%C3%A4:`. [`as_requested`] turns the one into
//! the other, as a browser serialises a URL, and changes nothing else.

use std::borrow::Cow;

/// The URL as a crawler requests it: in its path and query, the bytes a
/// browser percent-encodes (every non-ASCII character as its UTF-8 bytes,
/// controls, space, `"`, `<`, `>`, `` ` ``, `{`, `}`, and `'` in the
/// query) become `%XX`. Nothing else changes: not the scheme, the host or
/// the fragment, not `%` escapes already there, not dot segments, not
/// case. Borrowed when there was nothing to encode.
///
/// ```
/// use mannerly_robots::{as_requested, Robots};
/// assert_eq!(as_requested("/wiki/Käyttäjä:"), "/wiki/K%C3%A4ytt%C3%A4j%C3%A4:");
/// assert_eq!(as_requested("https://site.test/a b?q=\"x\"#frag ment"),
///            "https://site.test/a%20b?q=%22x%22#frag ment");
/// assert_eq!(as_requested("/already%20encoded/%zz"), "/already%20encoded/%zz");
///
/// let robots = Robots::parse("User-agent: *\nDisallow: /wiki/Käyttäjä:\n".as_bytes());
/// assert!(robots.is_allowed("bot", "/wiki/Käyttäjä:")); // the raw contract
/// assert!(!robots.is_allowed("bot", &as_requested("/wiki/Käyttäjä:")));
/// ```
pub fn as_requested(url: &str) -> Cow<'_, str> {
    let b = url.as_bytes();
    let start = path_start(b);
    let end = memchr::memchr(b'#', &b[start..]).map_or(b.len(), |i| start + i);
    let query = memchr::memchr(b'?', &b[start..end]).map_or(end, |i| start + i);
    let encode = |i: usize, c: u8| needs_encoding(c, i > query);
    if !b[start..end]
        .iter()
        .enumerate()
        .any(|(k, &c)| encode(start + k, c))
    {
        return Cow::Borrowed(url);
    }
    let mut out = String::with_capacity(url.len() + 16);
    out.push_str(&url[..start]);
    for (k, &c) in b[start..end].iter().enumerate() {
        if encode(start + k, c) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(char::from(c));
        }
    }
    out.push_str(&url[end..]);
    Cow::Owned(out)
}

/// Whether a browser percent-encodes this byte of a path (or a query).
fn needs_encoding(c: u8, in_query: bool) -> bool {
    !(0x20..0x7F).contains(&c)
        || matches!(c, b' ' | b'"' | b'<' | b'>' | b'`' | b'{' | b'}')
        || (in_query && c == b'\'')
}

/// Where the path (or, without one, the query) begins: after
/// `scheme://authority`, or at once for a bare path.
fn path_start(b: &[u8]) -> usize {
    let structural = |s: &[u8]| memchr::memchr3(b'/', b'?', b'#', s);
    match memchr::memmem::find(b, b"://") {
        // A scheme: its name holds no `/`, `?` or `#`.
        Some(sep) if structural(&b[..sep]).is_none() => {
            let authority = sep + 3;
            structural(&b[authority..]).map_or(b.len(), |i| authority + i)
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_the_path_and_query_are_encoded() {
        assert_eq!(
            as_requested("https://bücher.test/ä?ö='x'#ü"),
            "https://bücher.test/%C3%A4?%C3%B6=%27x%27#ü"
        );
        assert_eq!(as_requested("https://site.test"), "https://site.test");
        assert_eq!(as_requested("//site.test/ä"), "//site.test/%C3%A4");
        assert_eq!(as_requested("/a'b?c'd"), "/a'b?c%27d");
        assert_eq!(as_requested("/{x}|^[y]"), "/%7Bx%7D|^[y]");
        assert!(matches!(as_requested("/plain/ascii?x=1"), Cow::Borrowed(_)));
    }

    proptest! {
        /// Encoding twice changes nothing more, and each byte encoded
        /// adds two characters.
        #[test]
        fn encoding_is_idempotent(s in "\\PC{0,40}") {
            let once = as_requested(&s).into_owned();
            prop_assert_eq!(as_requested(&once).into_owned(), once.clone());
            prop_assert_eq!((once.len() - s.len()) % 2, 0);
        }
    }
}
