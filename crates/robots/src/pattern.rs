//! Path patterns: escaping, normalising and matching.
//!
//! # Worst-case bound
//!
//! [`matches()`] runs in `O(|pattern| + |path|)` time and constant extra
//! space, whatever the input. The reference library keeps a set of every
//! position the pattern could have reached, which costs
//! `O(|pattern| × |path|)`: ten thousand `*` against a 100 KiB URL is a
//! billion steps there. Here runs of `*` collapse, the literal pieces
//! between stars are placed leftmost one after another (greedy placement is
//! exact for patterns whose only wildcard is `*`), each piece is found with
//! `memchr::memmem` (or, for a short piece, a first-byte scan doing at most
//! 32 comparisons a byte), linear in the haystack, and each search
//! starts where the previous piece ended. A trailing `$` pins the last piece
//! to the end of the path. No backtracking happens anywhere.

use std::borrow::Cow;

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Percent-normalises a pattern the way the reference does: `%xx` escapes
/// get upper-case hex digits and bytes ≥ 0x80 become `%XX`. Everything else,
/// including `%` not followed by two hex digits, is kept as it is.
pub fn escape_pattern(src: &[u8]) -> Cow<'_, [u8]> {
    let needs = src.iter().any(|&b| b >= 0x80) || has_lower_hex_escape(src);
    if !needs {
        return Cow::Borrowed(src);
    }
    Cow::Owned(percent_normalize(src, false))
}

/// RFC 9309 §2.2.2 normalisation, used by the strict mode for both patterns
/// and URL paths: `%XX` of an unreserved character (RFC 3986 §2.3) is
/// decoded, every other `%xx` gets upper-case hex, and bytes ≥ 0x80 are
/// percent-encoded. `*` and `$` are left alone.
pub fn rfc_normalize(src: &[u8]) -> Cow<'_, [u8]> {
    let needs = src.iter().any(|&b| b >= 0x80 || b == b'%');
    if !needs {
        return Cow::Borrowed(src);
    }
    Cow::Owned(percent_normalize(src, true))
}

/// A URL path for the strict mode: [`rfc_normalize`], then a literal `*`
/// or `$` is written `%2A` / `%24`. RFC 9309 §2.2.3: in a pattern those
/// escapes stand for the characters themselves (never a wildcard or an
/// anchor), so `/a-%2A` must match the path `/a-*`; with both sides in
/// escaped form, that is a plain comparison.
///
/// In the query (after the first `?`), the general delimiters `:` `/` `?`
/// `@` `[` `]` are data, and are written percent-encoded on both sides, so
/// `Disallow: /foo/bar?baz=https://foo.bar` meets the URL
/// `/foo/bar?baz=https%3A%2F%2Ffoo.bar` (RFC 9309 §2.2.2, Figure 4).
pub fn rfc_normalize_path(src: &[u8]) -> Cow<'_, [u8]> {
    let normal = rfc_normalize(src);
    let query = memchr::memchr(b'?', &normal);
    escape_where(normal, |i, b| {
        b == b'*' || b == b'$' || query.is_some_and(|q| i > q && is_query_delim(b))
    })
}

/// `normal` with every byte for which `special(index, byte)` holds written
/// `%XX`; borrowed as it was when there is none.
fn escape_where(normal: Cow<'_, [u8]>, special: impl Fn(usize, u8) -> bool) -> Cow<'_, [u8]> {
    if !normal.iter().enumerate().any(|(i, &b)| special(i, b)) {
        return normal;
    }
    let mut out = Vec::with_capacity(normal.len() + 8);
    for (i, &b) in normal.iter().enumerate() {
        if special(i, b) {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]);
        } else {
            out.push(b);
        }
    }
    Cow::Owned(out)
}

/// A general delimiter (RFC 3986 §2.2) other than `#`, which in a query is
/// data.
fn is_query_delim(b: u8) -> bool {
    matches!(b, b':' | b'/' | b'?' | b'@' | b'[' | b']')
}

/// A pattern for the strict mode: [`rfc_normalize`] (which keeps `%2A`
/// and `%24` escaped, so they stay literal), and a `$` anywhere but at the
/// end, which is no anchor, written `%24` to meet the path's form (see
/// [`rfc_normalize_path`]).
pub fn rfc_normalize_pattern(src: &[u8]) -> Cow<'_, [u8]> {
    let normal = rfc_normalize(src);
    let last = normal.len().saturating_sub(1);
    let query = memchr::memchr(b'?', &normal);
    escape_where(normal, |i, b| {
        (b == b'$' && i != last) || query.is_some_and(|q| i > q && is_query_delim(b))
    })
}

/// The shared loop: upper-case `%xx`, encode bytes ≥ 0x80, and (for the
/// RFC mode) decode escapes of unreserved characters.
fn percent_normalize(src: &[u8], decode_unreserved: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() + 8);
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        if b == b'%' && is_hex_at(src, i + 1) && is_hex_at(src, i + 2) {
            let v = hex_val(src[i + 1]) << 4 | hex_val(src[i + 2]);
            if decode_unreserved && is_unreserved(v) {
                out.push(v);
            } else {
                out.extend_from_slice(&[
                    b'%',
                    src[i + 1].to_ascii_uppercase(),
                    src[i + 2].to_ascii_uppercase(),
                ]);
            }
            i += 3;
        } else {
            if b >= 0x80 {
                out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]);
            } else {
                out.push(b);
            }
            i += 1;
        }
    }
    out
}

fn has_lower_hex_escape(src: &[u8]) -> bool {
    let mut i = 0;
    while let Some(p) = memchr::memchr(b'%', &src[i..]) {
        let at = i + p;
        if is_hex_at(src, at + 1) && is_hex_at(src, at + 2) {
            if src[at + 1].is_ascii_lowercase() || src[at + 2].is_ascii_lowercase() {
                return true;
            }
            i = at + 3;
        } else {
            i = at + 1;
        }
    }
    false
}

fn is_hex_at(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_hexdigit)
}

fn hex_val(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b.wrapping_sub(b'A').wrapping_add(10),
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Takes the path, parameters and query from a URL the way the reference
/// does (`GetPathParamsQuery`): the scheme and authority are dropped, the
/// fragment is dropped, and the result always starts with `/`. A bare path
/// is returned as it is.
///
/// ```
/// use mannerly_robots::path_params_query;
/// assert_eq!(path_params_query("https://example.com/a/b?c=d#frag"), "/a/b?c=d");
/// assert_eq!(path_params_query("example.com?x"), "/?x");
/// assert_eq!(path_params_query("/just/a/path"), "/just/a/path");
/// assert_eq!(path_params_query(""), "/");
/// ```
pub fn path_params_query(url: &str) -> Cow<'_, str> {
    // The usual case first: the scheme's end is known without a search.
    let b = url.as_bytes();
    if b.starts_with(b"http://") {
        return after_scheme(url, 7);
    }
    if b.starts_with(b"https://") {
        return after_scheme(url, 8);
    }
    // A path already (what logs hold): it runs to any `#`.
    if b.first() == Some(&b'/') && b.get(1) != Some(&b'/') {
        let end = crate::find::byte(b, b'#').unwrap_or(b.len());
        return Cow::Borrowed(&url[..end]);
    }
    any_path_params_query(url)
}

/// [`path_params_query`] of any `url`, searching for its scheme.
fn any_path_params_query(url: &str) -> Cow<'_, str> {
    let b = url.as_bytes();
    let search_start = if b.starts_with(b"//") { 2 } else { 0 };
    let early_path = path_delimiter(b, search_start);
    let mut protocol_end = find_scheme_separator(b, search_start);
    if let (Some(e), Some(p)) = (early_path, protocol_end) {
        if e < p {
            protocol_end = None;
        }
    }
    let protocol_end = protocol_end.map_or(search_start, |p| p + 3);
    // A `#` in the scheme is before any path: nothing but `/` is left.
    if b.get(search_start..protocol_end)
        .is_some_and(|scheme| crate::find::byte(scheme, b'#').is_some())
    {
        return Cow::Borrowed("/");
    }
    after_scheme(url, protocol_end)
}

/// The path, params and query of `url`, whose authority starts at
/// `protocol_end` (its scheme holds no `#`).
fn after_scheme(url: &str, protocol_end: usize) -> Cow<'_, str> {
    let b = url.as_bytes();
    // A `#` in the authority, or no path, leaves only `/`.
    let Some(path_start) = b
        .get(protocol_end..)
        .and_then(crate::find::authority_end)
        .map(|i| protocol_end + i)
        .filter(|&i| b[i] != b'#')
    else {
        return Cow::Borrowed("/");
    };
    let path_end = crate::find::byte(&b[path_start..], b'#').map_or(b.len(), |i| path_start + i);
    // All delimiters are ASCII, so these are char boundaries.
    let path = &url[path_start..path_end];
    if b[path_start] != b'/' {
        return Cow::Owned(format!("/{path}"));
    }
    Cow::Borrowed(path)
}

/// Position of the first `/`, `?` or `;` at or after `from`: where a
/// path (or its params or query) starts.
fn path_delimiter(b: &[u8], from: usize) -> Option<usize> {
    b.get(from..)
        .and_then(|s| memchr::memchr3(b'/', b'?', b';', s))
        .map(|i| from + i)
}

/// Position of the first `://` at or after `from` (a hand scan: cheaper
/// than building a substring searcher for every URL).
fn find_scheme_separator(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(p) = b.get(i..).and_then(|s| memchr::memchr(b':', s)) {
        let at = i + p;
        if b.get(at + 1..at + 3) == Some(b"//") {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// Pieces up to this long are found by a first-byte scan and compare; the
/// cost is at most this many byte comparisons per haystack byte, so the
/// search stays linear. Longer pieces use `memmem` (linear by design).
/// Building `memmem`'s searcher costs about as much as comparing 32 bytes
/// at each of a URL's few candidate places, so it is kept for longer ones.
const SHORT_PIECE: usize = 32;

/// Beyond this many bytes `memmem`'s vectorised prefilter beats the
/// first-byte scan even after paying for building its searcher.
const LONG_HAYSTACK: usize = 256;

/// Leftmost occurrence of `needle` (non-empty) in `hay`.
fn find_piece(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.len() > SHORT_PIECE || hay.len() > LONG_HAYSTACK {
        return memchr::memmem::find(hay, needle);
    }
    let (&first, rest) = needle.split_first()?;
    let last_start = hay.len().checked_sub(needle.len())?;
    let mut i = 0;
    while i <= last_start {
        let at = i + crate::find::byte(&hay[i..=last_start], first)?;
        if hay[at + 1..at + needle.len()] == *rest {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// Does `pattern` match `path`? `*` matches any run of bytes, a `$` that is
/// the last byte of the pattern anchors it at the end of the path, any other
/// byte (including a `$` elsewhere) matches itself. Without a final `$` the
/// pattern only has to match a prefix of the path. An empty pattern matches
/// everything.
///
/// Linear time; see the module documentation.
pub fn matches(pattern: &[u8], path: &[u8]) -> bool {
    let (body, anchored) = match pattern.split_last() {
        Some((b'$', rest)) => (rest, true),
        _ => (pattern, false),
    };
    let Some(first_star) = crate::find::byte(body, b'*') else {
        return if anchored {
            path == body
        } else {
            path.starts_with(body)
        };
    };
    let first = &body[..first_star];
    if !path.starts_with(first) {
        return false;
    }
    let mut pos = first.len();
    let mut rest = &body[first_star + 1..];
    loop {
        match crate::find::byte(rest, b'*') {
            Some(i) => {
                let piece = &rest[..i];
                rest = &rest[i + 1..];
                if !piece.is_empty() {
                    match find_piece(&path[pos..], piece) {
                        Some(f) => pos += f + piece.len(),
                        None => return false,
                    }
                }
            }
            None => {
                let piece = rest;
                return if anchored {
                    path.len() - pos >= piece.len() && path.ends_with(piece)
                } else {
                    piece.is_empty() || find_piece(&path[pos..], piece).is_some()
                };
            }
        }
    }
}

/// The reference's own matching algorithm, kept as the oracle that the
/// linear matcher is tested against. Quadratic; not for production use.
#[doc(hidden)]
pub fn matches_reference_quadratic(pattern: &[u8], path: &[u8]) -> bool {
    let pathlen = path.len();
    let mut pos = vec![0usize; pathlen + 1];
    let mut numpos = 1;
    for (k, &p) in pattern.iter().enumerate() {
        if p == b'$' && k + 1 == pattern.len() {
            return pos[numpos - 1] == pathlen;
        }
        if p == b'*' {
            numpos = pathlen - pos[0] + 1;
            for i in 1..numpos {
                pos[i] = pos[i - 1] + 1;
            }
        } else {
            let mut n = 0;
            for i in 0..numpos {
                if pos[i] < pathlen && path[pos[i]] == p {
                    pos[n] = pos[i] + 1;
                    n += 1;
                }
            }
            numpos = n;
            if numpos == 0 {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn http_urls_and_paths_take_the_short_way_to_the_same_path(
            scheme in prop::sample::select(vec!["http://", "https://", "http:///", "https:", "/", "//", ""]),
            rest in "[a-z/?;#:.@%]{0,80}",
        ) {
            let url = format!("{scheme}{rest}");
            let want = step_by_step_path(&url);
            prop_assert_eq!(&*super::path_params_query(&url), want.as_str());
            prop_assert_eq!(&*super::any_path_params_query(&url), want.as_str());
        }
    }

    /// The reference's `GetPathParamsQuery`, one plain search after
    /// another: the oracle for the word-at-a-time searches.
    fn step_by_step_path(url: &str) -> String {
        let b = url.as_bytes();
        let search_start = if url.starts_with("//") { 2 } else { 0 };
        let first = |from: usize, set: &[u8]| (from..b.len()).find(|&i| set.contains(&b[i]));
        let early_path = first(search_start, b"/?;");
        let scheme_end = url[search_start..].find("://").map(|i| search_start + i);
        let protocol_end = match (early_path, scheme_end) {
            (Some(e), Some(p)) if e < p => search_start,
            (_, Some(p)) => p + 3,
            (_, None) => search_start,
        };
        let Some(path_start) = first(protocol_end, b"/?;") else {
            return "/".into();
        };
        let hash = first(search_start, b"#");
        if hash.is_some_and(|h| h < path_start) {
            return "/".into();
        }
        let path = &url[path_start..hash.unwrap_or(b.len())];
        if path.starts_with('/') {
            path.into()
        } else {
            format!("/{path}")
        }
    }

    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(&*escape_pattern(b"/a/b/c"), b"/a/b/c");
        assert_eq!(&*escape_pattern("á".as_bytes()), b"%C3%A1");
        assert_eq!(&*escape_pattern(b"%aa%2f%zz%"), b"%AA%2F%zz%");
    }

    #[test]
    fn rfc_normalisation() {
        assert_eq!(&*rfc_normalize(b"/%7Efoo"), b"/~foo");
        assert_eq!(&*rfc_normalize(b"/a%2fb"), b"/a%2Fb");
        assert_eq!(&*rfc_normalize("/é".as_bytes()), b"/%C3%A9");
        assert_eq!(&*rfc_normalize(b"/%41%"), b"/A%");
    }

    #[test]
    fn matching_basics() {
        assert!(matches(b"", b"/anything"));
        assert!(matches(b"/fish", b"/fish.html"));
        assert!(!matches(b"/fish", b"/Fish"));
        assert!(matches(b"/*.php$", b"/a/b.php"));
        assert!(!matches(b"/*.php$", b"/a/b.php?x"));
        assert!(matches(b"/a$b", b"/a$b/c"));
        assert!(matches(b"/*", b"/"));
        assert!(!matches(b"$", b"/"));
        assert!(matches(b"/a*b*c$", b"/aXbYbc"));
        assert!(!matches(b"/a*bc*bc$", b"/abc"));
        assert!(matches(b"*", b""));
    }

    #[test]
    fn short_piece_search() {
        assert_eq!(find_piece(b"abcabd", b"abd"), Some(3));
        assert_eq!(find_piece(b"ab", b"abc"), None);
        assert_eq!(find_piece(b"xxa", b"a"), Some(2));
        assert_eq!(find_piece(b"aaaaaaaaab", b"aaaab"), Some(5));
        assert_eq!(find_piece(b"0123456789abcdef", b"89abcdef0"), None);
    }

    #[test]
    fn path_extraction() {
        let cases = [
            ("", "/"),
            ("http://www.example.com", "/"),
            (
                "http://www.example.com/a/b?c=http://d.e/",
                "/a/b?c=http://d.e/",
            ),
            ("a/b", "/b"),
            ("//a/b/c", "/b/c"),
            ("example.com/a;b#c", "/a;b"),
            ("http://x#y/z", "/"),
        ];
        for (url, want) in cases {
            assert_eq!(path_params_query(url), want, "{url}");
        }
    }
}
