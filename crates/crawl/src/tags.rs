//! An HTML page's start tags and their attributes, read by the
//! tokenizer's rules (WHATWG HTML, 13.2.5) for where a tag, a comment or
//! a raw-text element begins and ends, without building anything: the
//! fast path of [`crate::links`], which needs only the start tags of
//! eight elements.
//!
//! It reads what `lol_html` reads: the contents of `script` and `style`
//! (and `iframe`, `noscript`, `xmp`, `noembed`, `noframes`) are raw text,
//! of `title` and `textarea` text without tags, of `plaintext` text to
//! the end; comments, `<!DOCTYPE>`, `<?…>` and (in HTML content)
//! `<![CDATA[…` hold no tags; a tag cut by the end of the page is not
//! read. What the tree builder tells the tokenizer, `lol_html`'s
//! simulation of it without a tree, is in [`tree`]: foreign content
//! (`<svg>`, `<math>`) and where reading stops (a raw-text element in a
//! `<select>`). Two cases it leaves to `lol_html` ([`Unsupported`]): a
//! script holding `<!--` (the script's escaped states), and a tag ended
//! by `NAME=>`, which `lol_html` reads otherwise. Tests hold the two
//! readers to the same tags on generated pages.
//!
//! Values are given as written (character references not decoded, no
//! byte replaced), as `lol_html` gives them.

mod tree;

use std::ops::Range;

use tree::Tree;

/// An attribute's name and value, as places in the page.
type Attr = (Range<usize>, Range<usize>);

/// The page uses what [`start_tags`] leaves to a full parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unsupported;

/// One start tag: its name and attributes as written.
pub(crate) struct Tag<'a> {
    page: &'a [u8],
    name: Range<usize>,
    attrs: &'a [Attr],
}

impl Tag<'_> {
    /// Whether the tag's name is `name` (ASCII, lower case), in any case.
    pub(crate) fn is(&self, name: &str) -> bool {
        self.page[self.name.clone()].eq_ignore_ascii_case(name.as_bytes())
    }

    /// The value of the first attribute named `name` (in any case), as
    /// written; an attribute without a value has an empty one.
    pub(crate) fn get(&self, name: &str) -> Option<&[u8]> {
        self.attrs
            .iter()
            .find(|(n, _)| self.page[n.clone()].eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| &self.page[v.clone()])
    }

    /// Whether any attribute, duplicates included, satisfies `f` (its
    /// name and value as written).
    fn any_attr(&self, f: impl Fn(&[u8], &[u8]) -> bool) -> bool {
        self.attrs
            .iter()
            .any(|(n, v)| f(&self.page[n.clone()], &self.page[v.clone()]))
    }
}

/// HTML's whitespace between a tag's parts (a carriage return is a line
/// feed once the input stream is normalised).
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// How an element's content is read once its start tag is.
enum Content {
    Markup,
    /// Raw text or RCDATA up to the element's own end tag.
    TextUntilEnd,
    /// Script data: up to `</script`, unless `<!--` comes first.
    Script,
    /// Text to the end of the page.
    Plaintext,
}

fn content(tag: &Tag<'_>) -> Content {
    const UNTIL_END: [&str; 8] = [
        "style", "iframe", "xmp", "noembed", "noframes", "noscript", "title", "textarea",
    ];
    if UNTIL_END.iter().any(|n| tag.is(n)) {
        Content::TextUntilEnd
    } else if tag.is("script") {
        Content::Script
    } else if tag.is("plaintext") {
        Content::Plaintext
    } else {
        Content::Markup
    }
}

/// Whether HTML content after `tag` is read as text (where the tree
/// builder lets it switch the tokenizer).
fn switches_to_text(tag: &Tag<'_>) -> bool {
    !matches!(content(tag), Content::Markup)
}

/// Calls `on_tag` with each start tag of `page`, in order.
pub(crate) fn start_tags(page: &[u8], mut on_tag: impl FnMut(&Tag<'_>)) -> Result<(), Unsupported> {
    let mut attrs = Vec::new();
    let mut tree = Tree::default();
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'<', &page[at..]) {
        let lt = at + found;
        at = match page.get(lt + 1) {
            Some(b'!') if tree.cdata() && page[lt + 2..].starts_with(b"[CDATA[") => {
                let from = lt + 9;
                memchr::memmem::find(&page[from..], b"]]>").map_or(page.len(), |i| from + i + 3)
            }
            Some(b'!') => markup_declaration(page, lt + 2),
            Some(b'?') => bogus_comment(page, lt + 2),
            Some(b'/') => end_tag_open(page, lt + 2, &mut attrs, &mut tree)?,
            Some(c) if c.is_ascii_alphabetic() => {
                match start_tag(page, lt + 1, &mut attrs, &mut tree, &mut on_tag)? {
                    Some(end) => end,
                    None => return Ok(()),
                }
            }
            _ => lt + 1,
        };
    }
    Ok(())
}

/// The start tag whose name begins at `at`, given to `on_tag`, and the
/// content of an element whose content is text: where reading goes on,
/// or `None` where it ends (the page's end, `plaintext`, `lol_html`'s
/// guard).
fn start_tag(
    page: &[u8],
    at: usize,
    attrs: &mut Vec<Attr>,
    tree: &mut Tree,
    on_tag: &mut impl FnMut(&Tag<'_>),
) -> Result<Option<usize>, Unsupported> {
    let Some(read) = read_tag(page, at, attrs)? else {
        return Ok(None);
    };
    let tag = Tag {
        page,
        name: read.name.clone(),
        attrs,
    };
    let Ok(html) = tree.start(&tag, read.self_closing) else {
        return Ok(None);
    };
    on_tag(&tag);
    let kind = if html { content(&tag) } else { Content::Markup };
    let script = match kind {
        Content::Markup => return Ok(Some(read.end)),
        Content::Plaintext => return Ok(None),
        Content::TextUntilEnd => false,
        Content::Script => true,
    };
    let close = end_tag_at(page, read.end, read.name);
    let body = &page[read.end..close.unwrap_or(page.len())];
    if script && memchr::memmem::find(body, b"<!--").is_some() {
        return Err(Unsupported);
    }
    match close {
        Some(lt) => end_tag(page, lt + 2, attrs, tree).map(Some),
        None => Ok(None),
    }
}

/// The end tag whose name begins at `at`, told to `tree`: where it ends.
fn end_tag(
    page: &[u8],
    at: usize,
    attrs: &mut Vec<Attr>,
    tree: &mut Tree,
) -> Result<usize, Unsupported> {
    let Some(read) = read_tag(page, at, attrs)? else {
        return Ok(page.len());
    };
    tree.end(&Tag {
        page,
        name: read.name,
        attrs,
    });
    Ok(read.end)
}

/// Where, from `from`, the first `</NAME` followed by whitespace, `/` or
/// `>` begins (the "appropriate end tag" of raw text), NAME being
/// `page[name]` in any case.
fn end_tag_at(page: &[u8], mut from: usize, name: Range<usize>) -> Option<usize> {
    let want = &page[name];
    while let Some(found) = memchr::memchr(b'<', &page[from..]) {
        let lt = from + found;
        let after = lt + 2 + want.len();
        if page.get(lt + 1) == Some(&b'/')
            && page
                .get(lt + 2..after)
                .is_some_and(|n| n.eq_ignore_ascii_case(want))
            && page
                .get(after)
                .is_some_and(|&c| is_space(c) || c == b'/' || c == b'>')
        {
            return Some(lt);
        }
        from = lt + 1;
    }
    None
}

/// After `<!`: a comment, or (a doctype, CDATA in HTML content, anything
/// else) a bogus comment to the next `>`.
fn markup_declaration(page: &[u8], at: usize) -> usize {
    if page.get(at..at + 2) == Some(b"--") {
        comment(page, at + 2)
    } else {
        bogus_comment(page, at)
    }
}

/// After `<!--`: the comment's end, just past its `-->` or `--!>` (or
/// the `>` of `<!-->` and `<!--->`); the page's end without one.
fn comment(page: &[u8], at: usize) -> usize {
    match page.get(at..) {
        Some([b'>', ..]) => return at + 1,
        Some([b'-', b'>', ..]) => return at + 2,
        _ => {}
    }
    let mut from = at;
    while let Some(found) = memchr::memmem::find(&page[from..], b"--") {
        let mut j = from + found + 2;
        while page.get(j) == Some(&b'-') {
            j += 1;
        }
        match page.get(j..) {
            Some([b'>', ..]) => return j + 1,
            Some([b'!', b'>', ..]) => return j + 2,
            _ => from = j,
        }
    }
    page.len()
}

/// A bogus comment from `at`: up to and past the next `>`.
fn bogus_comment(page: &[u8], at: usize) -> usize {
    let rest = page.get(at..).unwrap_or_default();
    memchr::memchr(b'>', rest).map_or(page.len(), |i| at + i + 1)
}

/// After `</`: an end tag (read, attributes and all, told to `tree`),
/// `</>` (nothing), or a bogus comment.
fn end_tag_open(
    page: &[u8],
    at: usize,
    attrs: &mut Vec<Attr>,
    tree: &mut Tree,
) -> Result<usize, Unsupported> {
    Ok(match page.get(at) {
        Some(c) if c.is_ascii_alphabetic() => end_tag(page, at, attrs, tree)?,
        Some(b'>') => at + 1,
        Some(_) => bogus_comment(page, at),
        None => page.len(),
    })
}

/// A tag read: its name, where it ends (past its `>`), and whether it
/// ends with `/>` or with the `>` of `NAME=>`.
struct Read {
    name: Range<usize>,
    end: usize,
    self_closing: bool,
    missing_value: bool,
}

/// A tag whose name begins at `at`, its attributes in `attrs`; `None` if
/// the page ends first.
/// [`Unsupported`] for a tag ended by the `>` of `NAME=>` (an attribute
/// without its value), which `lol_html` reads as the tokenizer does not
/// (a `<script x=>` its `</script>` does not end).
fn read_tag(page: &[u8], at: usize, attrs: &mut Vec<Attr>) -> Result<Option<Read>, Unsupported> {
    match read_tag_parts(page, at, attrs) {
        Some(read) if read.missing_value => Err(Unsupported),
        read => Ok(read),
    }
}

/// [`read_tag`], `NAME=>` included.
fn read_tag_parts(page: &[u8], at: usize, attrs: &mut Vec<Attr>) -> Option<Read> {
    attrs.clear();
    let ends_name = |c: u8| is_space(c) || c == b'/' || c == b'>';
    let mut i = at;
    while !ends_name(*page.get(i)?) {
        i += 1;
    }
    let name = at..i;
    // A `/` just skipped: before `>`, it makes the tag self-closing.
    let mut slash = false;
    loop {
        // Before an attribute's name: a `/` not before `>` is skipped
        // as whitespace is.
        let c = *page.get(i)?;
        if c == b'>' {
            return Some(Read {
                name,
                end: i + 1,
                self_closing: slash,
                missing_value: false,
            });
        }
        slash = c == b'/';
        if is_space(c) || slash {
            i += 1;
            continue;
        }
        // The name: its first character may be `=`.
        let n = i;
        i += 1;
        while !ends_name(*page.get(i)?) && page[i] != b'=' {
            i += 1;
        }
        let n = n..i;
        while is_space(*page.get(i)?) {
            i += 1;
        }
        if page[i] != b'=' {
            attrs.push((n, i..i));
            continue;
        }
        i += 1;
        while is_space(*page.get(i)?) {
            i += 1;
        }
        match page[i] {
            q @ (b'"' | b'\'') => {
                let close = i + 1 + memchr::memchr(q, &page[i + 1..])?;
                attrs.push((n, i + 1..close));
                i = close + 1;
            }
            b'>' => {
                return Some(Read {
                    name,
                    end: i + 1,
                    self_closing: false,
                    missing_value: true,
                });
            }
            _ => {
                let v = i;
                while !is_space(*page.get(i)?) && page[i] != b'>' {
                    i += 1;
                }
                attrs.push((n, v..i));
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Pieces of HTML the two readers must read alike: tags of the
    /// elements read and of those that change how what follows is read,
    /// attributes in every form, comments, doctypes, bogus comments,
    /// text, and bytes that are not UTF-8.
    pub(crate) fn piece() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let name = prop_oneof![
            6 => proptest::sample::select(vec!["a", "A", "link", "meta"]),
            6 => proptest::sample::select(vec![
                "a", "A", "area", "link", "base", "meta", "Meta", "input", "frame", "iframe",
                "script", "SCRIPT", "style", "title", "textarea", "plaintext", "noscript",
                "xmp", "noembed", "noframes", "p", "div", "template", "a:b", "br",
            ]),
            4 => proptest::sample::select(vec![
                "svg", "SVG", "math", "select", "frameset", "foreignObject", "desc", "mi",
                "mtext", "annotation-xml", "font", "template", "keygen", "noframes", "span",
            ]),
        ];
        let value = prop_oneof![
            proptest::sample::select(vec![
                "nofollow",
                "x NOFOLLOW",
                "robots",
                "password",
                "none",
                "noindex,nofollow",
                "a?x=1&amp;y=2",
                "/p",
                "mannerly",
                "text/html",
                "TEXT/HTML",
            ])
            .prop_map(str::to_owned),
            "[a-z/&;#<>\"'= \t\r\n!?-]{0,8}",
        ];
        let attr = (
            proptest::sample::select(vec![
                "href", "href", "HREF", "rel", "src", "name", "content", "color", "encoding",
                "href", "HREF", "rel", "src", "name", "content", "type", "=x", "data-x", "/",
            ]),
            proptest::sample::select(vec!["", "=", " = ", "=\"", "='", "=\t"]),
            value,
        )
            .prop_map(|(n, eq, v)| {
                let close = if eq.ends_with('"') {
                    "\""
                } else if eq.ends_with('\'') {
                    "'"
                } else {
                    ""
                };
                if eq.is_empty() {
                    format!(" {n}")
                } else {
                    format!(" {n}{eq}{v}{close}")
                }
            });
        let tag = (
            proptest::sample::select(vec!["<", "</"]),
            name,
            proptest::collection::vec(attr, 0..3),
            proptest::sample::select(vec![">", "/>", " >", ""]),
        )
            .prop_map(|(open, n, attrs, close)| format!("{open}{n}{}{close}", attrs.concat()));
        // Whole tags of foreign content, integration points and the
        // guard, so that they meet often enough.
        let context = proptest::sample::select(vec![
            "<svg>",
            "</svg>",
            "<math>",
            "</math>",
            "<p>",
            "</p>",
            "<br>",
            "</br>",
            "<b>",
            "<foreignObject>",
            "<foreignObject/>",
            "</foreignObject>",
            "<title>",
            "</title>",
            "<desc>",
            "</desc>",
            "<mi>",
            "<mi/>",
            "</mi>",
            "<annotation-xml encoding=text/html>",
            "<annotation-xml encoding='TEXT/HTML'/>",
            "</annotation-xml>",
            "<font color=x>",
            "<annotation-xml encoding=application/xhtml+xml>",
            "<font>",
            "<select>",
            "</select>",
            "<template>",
            "</template>",
            "<frameset>",
            "<style>",
            "</style>",
            "<textarea>",
            "</textarea>",
            "<script>",
            "</script>",
            "<a href=1>",
            "<a href=2>",
            "<meta name=robots content=nofollow>",
        ]);
        prop_oneof![
            6 => tag.prop_map(String::into_bytes),
            6 => context.prop_map(|s| s.as_bytes().to_vec()),
            3 => proptest::sample::select(vec![
                "<!--", "-->", "--!>", "<!-->", "<!--->", "<!---->", "--", "-", "!", "<!",
                "<!DOCTYPE html>", "<?x a>", "<![CDATA[", "<![cdata[", "]]>", "</>", "</ x>",
                "</", "<",
                ">", "<a", " ", "\r\n", "'", "\"",
            ])
            .prop_map(|s| s.as_bytes().to_vec()),
            2 => "[a-z <>/!=-]{0,6}".prop_map(String::into_bytes),
            1 => proptest::collection::vec(any::<u8>(), 1..4),
        ]
    }

    /// Each start tag as `name attr=value ...`, or `Unsupported`.
    fn read(page: &str) -> Result<Vec<String>, Unsupported> {
        let mut out = Vec::new();
        start_tags(page.as_bytes(), |t| {
            let mut s = String::from_utf8_lossy(&t.page[t.name.clone()]).into_owned();
            for (n, v) in t.attrs {
                s.push_str(&format!(
                    " {}={}",
                    String::from_utf8_lossy(&t.page[n.clone()]),
                    String::from_utf8_lossy(&t.page[v.clone()])
                ));
            }
            out.push(s);
        })?;
        Ok(out)
    }

    #[test]
    fn attributes_in_every_form() {
        assert_eq!(
            read(r#"<a href=x/ rel = 'a b' data-x="1>2" hidden =y/><A/HREF=z>"#),
            Ok(vec![
                "a href=x/ rel=a b data-x=1>2 hidden=y/".to_owned(),
                "A HREF=z".to_owned(),
            ])
        );
        assert_eq!(read("<a =x b\"c=d>"), Ok(vec!["a =x= b\"c=d".to_owned()]));
    }

    #[test]
    fn comments_doctypes_and_raw_text_hold_no_tags() {
        let page = "<!DOCTYPE html><!-- <a href=1> --><!--><a href=2><!---><a href=3>\
            <!-- x --!><a href=4><?php <a href=5> ?><![CDATA[<a href=6>]]>\
            <script>document.write('<a href=7>')</script ><a href=8>\
            <title><a href=9></TITLE><textarea><a></textarea x='>'><a href=10>\
            </ b><a href=11></>";
        let tags = read(page).expect("read");
        let hrefs: Vec<&str> = tags
            .iter()
            .filter_map(|t| t.strip_prefix("a href="))
            .collect();
        assert_eq!(hrefs, ["2", "3", "4", "8", "10", "11"]);
    }

    #[test]
    fn what_lol_html_reads_its_own_way_is_left_to_it() {
        for page in [
            "<script><!-- <script></script> --></script>",
            "<a x=>",
            "<p></p x=>",
        ] {
            assert_eq!(read(page), Err(Unsupported), "{page}");
        }
    }

    /// Foreign content reads `<style>` as markup and CDATA as text, up to
    /// its end or an HTML integration point; raw text in a `<select>`
    /// stops the reading, as `lol_html` stops.
    #[test]
    fn foreign_content_and_the_guard() {
        let hrefs = |page: &str| {
            let tags = read(page).expect("read");
            tags.iter()
                .filter_map(|t| t.strip_prefix("a href="))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            hrefs("<svg><style><a href=1></style><![CDATA[<a href=2>]]><a href=3></svg>"),
            ["1", "3"]
        );
        assert_eq!(
            hrefs("<svg><foreignObject><style><a href=1></style></foreignObject><a href=2>"),
            ["2"]
        );
        assert_eq!(hrefs("<![CDATA[<a href=1>]]><a href=2>"), ["2"]);
        assert_eq!(hrefs("<select><a href=1><style><a href=2>"), ["1"]);
        assert_eq!(hrefs("<select></select><style></style><a href=1>"), ["1"]);
    }

    #[test]
    fn a_tag_cut_by_the_end_is_not_read() {
        assert_eq!(
            read("<a href=1><a href=\"2"),
            Ok(vec!["a href=1".to_owned()])
        );
        assert_eq!(
            read("<plaintext><a href=1>"),
            Ok(vec!["plaintext".to_owned()])
        );
        assert_eq!(read("<a href=1"), Ok(vec![]));
    }

    /// Every start tag of `page` as lol_html reads it: its name and the
    /// attributes the links' reader asks for, as written.
    fn full(page: &[u8]) -> Vec<String> {
        use lol_html::html_content::Element;
        use lol_html::{element, HtmlRewriter, Settings};
        let out = std::cell::RefCell::new(Vec::new());
        let settings =
            Settings::new().append_element_content_handler(element!("*", |el: &mut Element<
                '_,
                '_,
            >| {
                out.borrow_mut()
                    .push(shown(&el.tag_name(), |a| el.get_attribute(a)));
                Ok(())
            }));
        {
            let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
            let _ = rewriter.write(page).and_then(|()| rewriter.end());
        }
        out.into_inner()
    }

    fn shown(name: &str, get: impl Fn(&str) -> Option<String>) -> String {
        let mut s = name.to_ascii_lowercase();
        for a in ["href", "rel", "src", "name", "content", "type", "data-x"] {
            s.push_str(&format!(" {a}={:?}", get(a)));
        }
        s
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        /// On a page it does not leave to lol_html, cut anywhere, the
        /// reader finds every start tag lol_html finds, with the same
        /// attributes.
        #[test]
        fn every_start_tag_as_lol_html_reads_it(
            pieces in proptest::collection::vec(piece(), 0..24),
            cut in 0usize..400,
        ) {
            let page = pieces.concat();
            let page = &page[..cut.min(page.len())];
            let mut fast = Vec::new();
            let read = start_tags(page, |t| {
                let name = String::from_utf8_lossy(&t.page[t.name.clone()]).into_owned();
                fast.push(shown(&name, |a| t.get(a).map(|v| String::from_utf8_lossy(v).into_owned())));
            });
            if read.is_ok() {
                proptest::prop_assert_eq!(fast, full(page));
            }
        }
    }

    /// Pages where the tree builder's state decides, each read as
    /// lol_html reads it: integration points entered and left, foreign
    /// content left by an HTML tag, CDATA, the guard in `<select>`,
    /// `<template>` and `<frameset>`.
    #[test]
    fn known_pages_read_as_lol_html_reads_them() {
        for page in [
            "<math><annotation-xml encoding=text/html></annotation-xml><style><a href=1>",
            "<math><annotation-xml encoding=application/xhtml+xml><style><a href=1>",
            "<math><annotation-xml encoding=text/html/><style><a href=1>",
            "<math><mi></mi><style><a href=1>",
            "<math><mi/><style><a href=1>",
            "<svg><desc></desc><style><a href=1>",
            "<svg><title/><style><a href=1>",
            "<svg><title><style><a href=1></style></title><style><a href=2>",
            "<svg><p><style><a href=1>",
            "<svg></p><style><a href=1>",
            "<svg><font color=red><style><a href=1>",
            "<svg><font><style><a href=1>",
            "<svg><![CDATA[<a href=1>]]><![cdata[<a href=2>]]><a href=3>",
            "<svg><svg></svg><style><a href=1>",
            "<select><template><template></template><style><a href=1>",
            "<select><template></template></select><style></style><a href=1>",
            "<select><keygen><style></style><a href=1>",
            "<select><script></script><a href=1>",
            "<frameset><noframes><a href=1></noframes><style><a href=2>",
        ] {
            let mut fast = Vec::new();
            start_tags(page.as_bytes(), |t| {
                let name = String::from_utf8_lossy(&t.page[t.name.clone()]).into_owned();
                fast.push(shown(&name, |a| {
                    t.get(a).map(|v| String::from_utf8_lossy(v).into_owned())
                }));
            })
            .expect("read");
            assert_eq!(fast, full(page.as_bytes()), "{page}");
        }
    }
}
