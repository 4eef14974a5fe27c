//! A cursor over a log line's fields: bare, `"quoted"` (with `\"` and
//! `\\` escapes), and `[bracketed]`.

use std::borrow::Cow;

pub(crate) struct Scan<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scan<'a> {
    pub(crate) fn new(text: &'a str) -> Scan<'a> {
        Scan { text, pos: 0 }
    }

    fn skip_spaces(&mut self) {
        let b = self.text.as_bytes();
        while self.pos < b.len() && b[self.pos] == b' ' {
            self.pos += 1;
        }
    }

    /// The next byte after spaces, without taking it.
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.skip_spaces();
        self.text.as_bytes().get(self.pos).copied()
    }

    /// The next space-separated field.
    pub(crate) fn field(&mut self) -> Option<&'a str> {
        self.skip_spaces();
        let b = self.text.as_bytes();
        let start = self.pos;
        // Fields are short: a plain scan beats a call to memchr.
        let len = b[start..]
            .iter()
            .position(|&c| c == b' ')
            .unwrap_or(b.len() - start);
        if len == 0 {
            return None;
        }
        self.pos = start + len;
        Some(&self.text[start..start + len])
    }

    /// The next `N` space-separated fields; on a short line, how many
    /// there were.
    pub(crate) fn fields<const N: usize>(&mut self) -> Result<[&'a str; N], usize> {
        let mut out = [""; N];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = self.field().ok_or(i)?;
        }
        Ok(out)
    }

    /// A `"quoted"` field; `\"` and `\\` are unescaped.
    pub(crate) fn quoted(&mut self) -> Option<Cow<'a, str>> {
        self.skip_spaces();
        let b = self.text.as_bytes();
        if b.get(self.pos) != Some(&b'"') {
            return None;
        }
        let start = self.pos + 1;
        // `""` and `"-"` (no Referer, no User-Agent) are common: read
        // without a search.
        for len in 0..2 {
            if b.get(start + len) == Some(&b'"') && b[start..start + len] != *b"\\" {
                self.pos = start + len + 1;
                return Some(Cow::Borrowed(&self.text[start..start + len]));
            }
        }
        let mut i = start;
        let mut escaped = false;
        loop {
            let next = memchr::memchr2(b'"', b'\\', &b[i..])? + i;
            if b[next] == b'\\' {
                escaped = true;
                i = next + 2;
                if i > b.len() {
                    return None;
                }
                continue;
            }
            self.pos = next + 1;
            let raw = &self.text[start..next];
            return Some(if escaped {
                Cow::Owned(unescape(raw))
            } else {
                Cow::Borrowed(raw)
            });
        }
    }

    /// A `[bracketed]` field, without its brackets.
    pub(crate) fn bracketed(&mut self) -> Option<&'a str> {
        self.skip_spaces();
        let b = self.text.as_bytes();
        if b.get(self.pos) != Some(&b'[') {
            return None;
        }
        let end = memchr::memchr(b']', &b[self.pos..])? + self.pos;
        let inner = &self.text[self.pos + 1..end];
        self.pos = end + 1;
        Some(inner)
    }

    /// A `{braced}` field (HAProxy's captured headers), without its braces.
    pub(crate) fn braced(&mut self) -> Option<&'a str> {
        self.skip_spaces();
        let b = self.text.as_bytes();
        if b.get(self.pos) != Some(&b'{') {
            return None;
        }
        let end = memchr::memchr(b'}', &b[self.pos..])? + self.pos;
        let inner = &self.text[self.pos + 1..end];
        self.pos = end + 1;
        Some(inner)
    }

    /// A quoted field if one comes next, else a bare one.
    pub(crate) fn any(&mut self) -> Option<Cow<'a, str>> {
        if self.peek() == Some(b'"') {
            self.quoted()
        } else {
            self.field().map(Cow::Borrowed)
        }
    }
}

fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n @ ('"' | '\\')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let mut s = Scan::new(r#"a  [b c] "d \"e\" \x22" f"#);
        assert_eq!(s.field(), Some("a"));
        assert_eq!(s.bracketed(), Some("b c"));
        assert_eq!(s.quoted().as_deref(), Some(r#"d "e" \x22"#));
        assert_eq!(s.any().as_deref(), Some("f"));
        assert_eq!(s.peek(), None);
        let mut s = Scan::new(r#""" "-" "\"" "\\" "x"#);
        assert_eq!(s.quoted().as_deref(), Some(""));
        assert_eq!(s.quoted().as_deref(), Some("-"));
        assert_eq!(s.quoted().as_deref(), Some("\""));
        assert_eq!(s.quoted().as_deref(), Some("\\"));
        assert_eq!(s.quoted(), None);
        assert_eq!(Scan::new(r#""open"#).quoted(), None);
        assert_eq!(Scan::new(r#""ends in \"#).quoted(), None);
    }
}
