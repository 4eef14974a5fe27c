//! Splitting a robots.txt body into lines and lines into key and value,
//! exactly as Google's reference parser does.
//!
//! Everything here works on bytes and indexes, never allocates per line, and
//! is linear in the size of the body.

/// The reference keeps at most this many bytes of each line; the rest of an
/// over-long line is dropped (the line still ends at its terminator).
pub const MAX_LINE_BYTES: usize = 16_663;

use crate::fold::{lower, word};

const UTF8_BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One physical line of the body.
#[derive(Debug, Clone, Copy)]
pub struct RawLine {
    /// 1-based line number.
    pub number: u32,
    /// Byte offset of the line's first kept byte in the body.
    pub start: usize,
    /// Byte offset one past the line's last kept byte (at most
    /// [`MAX_LINE_BYTES`] after `start`).
    pub end: usize,
    /// The line held more than [`MAX_LINE_BYTES`] bytes.
    pub too_long: bool,
    /// Byte offset of the first NUL among the kept bytes.
    pub nul: Option<usize>,
    /// Byte offset of the first `#` before `nul` (or the end).
    pub hash: Option<usize>,
}

/// Iterates the lines of a body: `\n`, `\r` and `\r\n` end a line, a prefix
/// of a UTF-8 BOM at the very start is skipped, and the text after the last
/// terminator is always one more line (possibly empty).
pub struct Lines<'a> {
    body: &'a [u8],
    pos: usize,
    number: u32,
    done: bool,
    nul: Ahead,
    hash: Ahead,
}

/// The next place a byte occurs at or after the line being read, searched
/// again only once a line starts past it: a body is searched once per
/// occurrence, not once per line (NULs and comments are rare, lines many).
struct Ahead {
    byte: u8,
    /// Where the byte next occurs (`usize::MAX`: nowhere); `None` before
    /// the first search. Lines come in order, so an occurrence at or after
    /// a line's start is the first one from there.
    at: Option<usize>,
}

impl Ahead {
    fn new(byte: u8) -> Ahead {
        Ahead { byte, at: None }
    }

    /// The first occurrence in `body[start..end]`.
    fn within(&mut self, body: &[u8], start: usize, end: usize) -> Option<usize> {
        let at = match self.at {
            Some(at) if at >= start => at,
            _ => {
                let at =
                    memchr::memchr(self.byte, &body[start..]).map_or(usize::MAX, |i| start + i);
                self.at = Some(at);
                at
            }
        };
        (at < end).then_some(at)
    }
}

impl<'a> Lines<'a> {
    pub fn new(body: &'a [u8]) -> Self {
        // Skip the longest prefix of the body that is a prefix of the BOM.
        let bom = body
            .iter()
            .zip(UTF8_BOM.iter())
            .take_while(|(a, b)| a == b)
            .count();
        Lines {
            body,
            pos: bom,
            number: 0,
            done: false,
            nul: Ahead::new(0),
            hash: Ahead::new(b'#'),
        }
    }
}

impl Iterator for Lines<'_> {
    type Item = RawLine;

    fn next(&mut self) -> Option<RawLine> {
        if self.done {
            return None;
        }
        let rest = &self.body[self.pos..];
        let start = self.pos;
        let (len, next) = match crate::find::byte2(rest, b'\n', b'\r') {
            Some(i) => {
                let mut next = start + i + 1;
                if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') {
                    next += 1;
                }
                (i, next)
            }
            None => {
                self.done = true;
                (rest.len(), self.body.len())
            }
        };
        self.pos = next;
        self.number = self.number.saturating_add(1);
        let end = start + len.min(MAX_LINE_BYTES);
        let nul = self.nul.within(self.body, start, end);
        let hash = self.hash.within(self.body, start, nul.unwrap_or(end));
        Some(RawLine {
            number: self.number,
            start,
            end,
            too_long: len > MAX_LINE_BYTES,
            nul,
            hash,
        })
    }
}

/// The directive a key names, as the reference classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// `User-agent`.
    UserAgent,
    /// `Allow`.
    Allow,
    /// `Disallow`.
    Disallow,
    /// `Sitemap`.
    Sitemap,
    /// Any other key (extensions such as Crawl-delay are recognised later).
    Other,
}

/// What the lexer found on one line. Ranges are byte offsets into the body.
#[derive(Debug, Clone, Copy)]
pub struct LexedLine {
    /// The line's content stops early at a NUL byte.
    pub has_nul: bool,
    /// Byte offset of a `#` that starts a comment, if any.
    pub comment: Option<usize>,
    /// Key and value, when the line has a directive.
    pub directive: Option<Directive>,
}

#[derive(Debug, Clone, Copy)]
pub struct Directive {
    pub key: (usize, usize),
    pub value: (usize, usize),
    pub kind: KeyKind,
    /// The key is one of the misspellings the reference accepts
    /// (`useragent`, `disalow`, `site-map`, ...).
    pub typo: bool,
    /// The key matched by prefix only (`Disallowed: /x` counts as Disallow).
    pub key_is_prefix: bool,
    /// There was no colon; whitespace separated exactly two tokens.
    pub missing_colon: bool,
}

/// `absl::ascii_isspace`: space, `\t`, `\n`, `\v`, `\f`, `\r`.
#[inline]
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// `body[s..e]` without the spaces at either end, as a range.
fn trim(body: &[u8], s: usize, e: usize) -> (usize, usize) {
    let s = trim_start(body, s, e);
    (s, trim_end(body, s, e))
}

/// Where `body[s..e]` starts without its leading spaces.
fn trim_start(body: &[u8], mut s: usize, e: usize) -> usize {
    while s < e && is_space(body[s]) {
        s += 1;
    }
    s
}

/// Where `body[s..e]` ends without its trailing spaces.
fn trim_end(body: &[u8], s: usize, mut e: usize) -> usize {
    while e > s && is_space(body[e - 1]) {
        e -= 1;
    }
    e
}

/// Splits one line into key and value the way the reference does.
pub fn lex_line(body: &[u8], line: RawLine) -> LexedLine {
    let end = line.hash.or(line.nul).unwrap_or(line.end);
    let (s, e) = trim(body, line.start, end);
    let mut out = LexedLine {
        has_nul: line.nul.is_some(),
        comment: line.hash,
        directive: None,
    };
    if s == e {
        return out;
    }
    let text = &body[s..e];
    let mut missing_colon = false;
    let sep = match crate::find::byte(text, b':') {
        Some(i) => s + i,
        None => {
            // No colon: accept a single run of spaces or tabs as the
            // separator, but only when exactly two tokens remain.
            let Some(i) = memchr::memchr2(b' ', b'\t', text) else {
                return out;
            };
            let mut v = i;
            while v < text.len() && matches!(text[v], b' ' | b'\t') {
                v += 1;
            }
            if memchr::memchr2(b' ', b'\t', &text[v..]).is_some() {
                return out;
            }
            missing_colon = true;
            s + i
        }
    };
    // The line is trimmed: its key starts, and its value ends, with a
    // byte that is not a space.
    let key = (s, trim_end(body, s, sep));
    if key.0 == key.1 {
        return out;
    }
    let value = (trim_start(body, sep + 1, e), e);
    let (kind, typo, key_is_prefix) = classify_key(&body[key.0..key.1]);
    out.directive = Some(Directive {
        key,
        value,
        kind,
        typo,
        key_is_prefix,
        missing_colon,
    });
    out
}

/// A directive's name (or an accepted misspelling), as [`classify_key`]
/// compares a key's start with it: its bytes (small letters) as two
/// words, zero past its end, and which bytes of each it fixes.
struct Name {
    len: usize,
    words: [u64; 2],
    masks: [u64; 2],
}

impl Name {
    /// `name`: ASCII without capitals or NUL, at most sixteen bytes.
    const fn new(name: &[u8]) -> Name {
        let mut words = [0; 2];
        let mut masks = [0; 2];
        let mut i = 0;
        while i < name.len() {
            words[i / 8] |= (name[i] as u64) << (8 * (i % 8));
            masks[i / 8] |= 0xFF << (8 * (i % 8));
            i += 1;
        }
        Name {
            len: name.len(),
            words,
            masks,
        }
    }

    /// Whether a key whose first sixteen bytes, made small, are `key`
    /// (zero past its end) starts with this name: a key shorter than the
    /// name has a zero where the name has a letter.
    fn starts(&self, key: [u64; 2]) -> bool {
        key[0] & self.masks[0] == self.words[0] && key[1] & self.masks[1] == self.words[1]
    }
}

/// A directive, its name and the misspellings of it that are accepted.
type Known = (KeyKind, Name, &'static [Name]);

const USER_AGENT: Known = (
    KeyKind::UserAgent,
    Name::new(b"user-agent"),
    &[Name::new(b"useragent"), Name::new(b"user agent")],
);
const ALLOW: Known = (KeyKind::Allow, Name::new(b"allow"), &[]);
const DISALLOW: Known = (
    KeyKind::Disallow,
    Name::new(b"disallow"),
    &[
        Name::new(b"dissallow"),
        Name::new(b"dissalow"),
        Name::new(b"disalow"),
        Name::new(b"diasllow"),
        Name::new(b"disallaw"),
    ],
);
const SITEMAP: Known = (
    KeyKind::Sitemap,
    Name::new(b"sitemap"),
    &[Name::new(b"site-map")],
);

/// Classifies a key by case-insensitive prefix, as the reference does:
/// user-agent, allow, disallow, sitemap, each before its misspellings.
/// Returns (kind, typo, prefix-only). The key's first sixteen bytes are
/// read as two words and made small once; its first letter picks the one
/// directive it can name (no two directives' names, misspellings included,
/// share one), and each name is two masked comparisons.
pub fn classify_key(key: &[u8]) -> (KeyKind, bool, bool) {
    let (first, rest) = key.split_at(key.len().min(8));
    let folded = [lower(word(first)), lower(word(rest))];
    let (kind, name, typos) = match folded[0] as u8 {
        b'u' => &USER_AGENT,
        b'a' => &ALLOW,
        b'd' => &DISALLOW,
        b's' => &SITEMAP,
        _ => return (KeyKind::Other, false, false),
    };
    if name.starts(folded) {
        return (*kind, false, key.len() != name.len);
    }
    match typos.iter().find(|t| t.starts(folded)) {
        Some(t) => (*kind, true, key.len() != t.len),
        None => (KeyKind::Other, false, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(body: &[u8]) -> Vec<&[u8]> {
        Lines::new(body).map(|l| &body[l.start..l.end]).collect()
    }

    #[test]
    fn line_endings() {
        assert_eq!(lines(b"a\nb\r\nc\rd"), vec![&b"a"[..], b"b", b"c", b"d"]);
        assert_eq!(lines(b"a\n"), vec![&b"a"[..], b""]);
        assert_eq!(lines(b"\r\r\n"), vec![&b""[..], b"", b""]);
        assert_eq!(lines(b""), vec![&b""[..]]);
    }

    #[test]
    fn bom_prefixes_are_skipped_only_at_start() {
        assert_eq!(lines(b"\xEF\xBB\xBFa"), vec![&b"a"[..]]);
        assert_eq!(lines(b"\xEF\xBBa"), vec![&b"a"[..]]);
        assert_eq!(lines(b"\xEF\x11\xBFa"), vec![&b"\x11\xBFa"[..]]);
        assert_eq!(lines(b"a\n\xEF\xBB\xBFb")[1], b"\xEF\xBB\xBFb");
    }

    #[test]
    fn long_lines_are_cut() {
        let body = vec![b'a'; MAX_LINE_BYTES + 10];
        let l: Vec<_> = Lines::new(&body).collect();
        assert_eq!(l[0].end - l[0].start, MAX_LINE_BYTES);
        assert!(l[0].too_long);
        // A `#` or NUL in the cut part belongs to no line.
        let mut body = vec![b'a'; MAX_LINE_BYTES + 10];
        body.extend_from_slice(b"#\0\nb#");
        let l: Vec<_> = Lines::new(&body).collect();
        assert_eq!((l[0].hash, l[0].nul), (None, None));
        assert_eq!((l[1].hash, l[1].nul), (Some(body.len() - 1), None));
    }

    fn kv(line: &str) -> Option<(String, String, KeyKind, bool)> {
        let body = line.as_bytes();
        let raw = Lines::new(body).next().expect("one line at least");
        lex_line(body, raw).directive.map(|d| {
            (
                line[d.key.0..d.key.1].to_string(),
                line[d.value.0..d.value.1].to_string(),
                d.kind,
                d.typo,
            )
        })
    }

    #[test]
    fn key_value_split() {
        assert_eq!(
            kv("  Disallow :  /a b # c"),
            Some(("Disallow".into(), "/a b".into(), KeyKind::Disallow, false))
        );
        assert_eq!(
            kv("useragent foo"),
            Some(("useragent".into(), "foo".into(), KeyKind::UserAgent, true))
        );
        assert_eq!(kv("user-agent foo bar"), None);
        assert_eq!(kv(": /x"), None);
        assert_eq!(kv("# only a comment"), None);
        assert_eq!(
            kv("Disallowed: /x"),
            Some(("Disallowed".into(), "/x".into(), KeyKind::Disallow, false))
        );
        assert_eq!(
            kv("Allow: /a\0b"),
            Some(("Allow".into(), "/a".into(), KeyKind::Allow, false))
        );
    }

    /// [`classify_key`] as the reference writes it: each name tried in
    /// turn, byte by byte.
    fn classify_byte_by_byte(key: &[u8]) -> (KeyKind, bool, bool) {
        type Spellings = (&'static [u8], &'static [&'static [u8]], KeyKind);
        let names: [Spellings; 4] = [
            (
                b"user-agent",
                &[b"useragent", b"user agent"],
                KeyKind::UserAgent,
            ),
            (b"allow", &[], KeyKind::Allow),
            (
                b"disallow",
                &[
                    b"dissallow",
                    b"dissalow",
                    b"disalow",
                    b"diasllow",
                    b"disallaw",
                ],
                KeyKind::Disallow,
            ),
            (b"sitemap", &[b"site-map"], KeyKind::Sitemap),
        ];
        let starts =
            |name: &[u8]| key.len() >= name.len() && key[..name.len()].eq_ignore_ascii_case(name);
        for (name, typos, kind) in names {
            if starts(name) {
                return (kind, false, key.len() != name.len());
            }
            if let Some(t) = typos.iter().find(|t| starts(t)) {
                return (kind, true, key.len() != t.len());
            }
        }
        (KeyKind::Other, false, false)
    }

    #[test]
    fn keys_of_every_spelling_are_classified() {
        for (key, want) in [
            (&b"User-Agent"[..], (KeyKind::UserAgent, false, false)),
            (b"USER AGENT", (KeyKind::UserAgent, true, false)),
            (b"useragents", (KeyKind::UserAgent, true, true)),
            (b"Disallowed", (KeyKind::Disallow, false, true)),
            (b"DISALLAW", (KeyKind::Disallow, true, false)),
            (b"Allow", (KeyKind::Allow, false, false)),
            (b"Site-map", (KeyKind::Sitemap, true, false)),
            (b"sitemaps", (KeyKind::Sitemap, false, true)),
            (b"disal", (KeyKind::Other, false, false)),
            (b"crawl-delay", (KeyKind::Other, false, false)),
            (b"\xC4llow", (KeyKind::Other, false, false)),
            (b"", (KeyKind::Other, false, false)),
        ] {
            assert_eq!(classify_key(key), want, "{}", String::from_utf8_lossy(key));
        }
    }

    proptest::proptest! {
        /// Each line's NUL and `#` are where a search of that line alone
        /// finds them, though the body is searched once per occurrence.
        /// Keys made of pieces of the names, in any case, with bytes
        /// around the letters' case boundaries and past ASCII, are read as
        /// the byte-by-byte comparison reads them.
        #[test]
        fn keys_classify_as_byte_by_byte(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "user", "USER", "-", " ", "agent", "Agent", "dis", "DIS", "s", "allow",
                    "ALLAW", "alow", "ia", "sitemap", "Site", "map", "@", "[", "`", "{",
                    "\u{e9}", "x", "\0",
                ]),
                0..6,
            )
        ) {
            let key = pieces.concat();
            proptest::prop_assert_eq!(
                classify_key(key.as_bytes()),
                classify_byte_by_byte(key.as_bytes())
            );
        }

        #[test]
        fn marks_are_each_lines_own(
            body in proptest::collection::vec(
                proptest::sample::select(vec![0u8, b'#', b':', b' ', b'a', b'\n', b'\r']),
                0..200,
            )
        ) {
            for l in Lines::new(&body) {
                let line = &body[l.start..l.end];
                let nul = memchr::memchr(0, line);
                let content = &line[..nul.unwrap_or(line.len())];
                let hash = memchr::memchr(b'#', content);
                proptest::prop_assert_eq!(l.nul, nul.map(|i| l.start + i));
                proptest::prop_assert_eq!(l.hash, hash.map(|i| l.start + i));
            }
        }
    }
}
