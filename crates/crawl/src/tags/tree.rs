//! What HTML's tree builder tells the tokenizer, as `lol_html` simulates
//! it without a tree: the namespace a tag opens in (`<svg>` and `<math>`
//! and their integration points, where CDATA sections are read and
//! `<style>` holds markup), and the ambiguity guard that stops reading
//! where a raw-text element's effect cannot be known without one (inside
//! `<select>`, after `<frameset>`).

use super::{switches_to_text, Tag};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    Html,
    Svg,
    MathMl,
}

/// The guard's state, as `lol_html` keeps it.
#[derive(Debug, Clone, Copy)]
enum Guard {
    Default,
    InSelect,
    InTemplateInSelect(u64),
    InOrAfterFrameset,
}

/// Reading stops here: `lol_html` gives up on the page at this tag.
#[derive(Debug)]
pub(super) struct Stop;

/// Start tags that end foreign content.
const LEAVE_FOREIGN: [&str; 44] = [
    "b",
    "big",
    "blockquote",
    "body",
    "br",
    "center",
    "code",
    "dd",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "hr",
    "i",
    "img",
    "li",
    "listing",
    "menu",
    "meta",
    "nobr",
    "ol",
    "p",
    "pre",
    "ruby",
    "s",
    "small",
    "span",
    "strong",
    "strike",
    "sub",
    "sup",
    "table",
    "tt",
    "u",
    "ul",
    "var",
];

const SVG_HTML_POINTS: [&str; 3] = ["desc", "title", "foreignobject"];
const MATHML_TEXT_POINTS: [&str; 5] = ["mi", "mo", "mn", "ms", "mtext"];

fn one_of(tag: &Tag<'_>, names: &[&str]) -> bool {
    names.iter().any(|n| tag.is(n))
}

/// The tree builder's feedback to the tokenizer.
#[derive(Debug)]
pub(super) struct Tree {
    stack: Vec<Ns>,
    ns: Ns,
    guard: Guard,
}

impl Default for Tree {
    fn default() -> Self {
        Tree {
            stack: vec![Ns::Html],
            ns: Ns::Html,
            guard: Guard::Default,
        }
    }
}

impl Tree {
    /// Whether `<![CDATA[` opens a CDATA section (in foreign content).
    pub(super) fn cdata(&self) -> bool {
        self.ns != Ns::Html
    }

    /// A start tag read: whether HTML's text elements switch the
    /// tokenizer after it (in HTML content), or [`Stop`].
    pub(super) fn start(&mut self, tag: &Tag<'_>, self_closing: bool) -> Result<bool, Stop> {
        self.guard_start(tag)?;
        if tag.is("svg") {
            self.enter(Ns::Svg);
        } else if tag.is("math") {
            self.enter(Ns::MathMl);
        } else if self.ns != Ns::Html {
            self.foreign_start(tag, self_closing);
        } else {
            return Ok(true);
        }
        Ok(false)
    }

    /// An end tag read.
    pub(super) fn end(&mut self, tag: &Tag<'_>) {
        self.guard_end(tag);
        if self.ns == Ns::Html {
            let Some(&prev) = self
                .stack
                .len()
                .checked_sub(2)
                .and_then(|i| self.stack.get(i))
            else {
                return;
            };
            let leaves = match prev {
                Ns::MathMl => one_of(tag, &MATHML_TEXT_POINTS) || tag.is("annotation-xml"),
                Ns::Svg => one_of(tag, &SVG_HTML_POINTS),
                Ns::Html => false,
            };
            if leaves {
                self.leave();
            }
        } else if (self.ns == Ns::Svg && tag.is("svg"))
            || (self.ns == Ns::MathMl && tag.is("math"))
            || tag.is("p")
            || tag.is("br")
        {
            self.leave();
        }
    }

    fn foreign_start(&mut self, tag: &Tag<'_>, self_closing: bool) {
        if one_of(tag, &LEAVE_FOREIGN) {
            self.leave();
            return;
        }
        let point = match self.ns {
            Ns::Svg => one_of(tag, &SVG_HTML_POINTS),
            Ns::MathMl => one_of(tag, &MATHML_TEXT_POINTS),
            Ns::Html => false,
        };
        if point {
            if !self_closing {
                self.enter(Ns::Html);
            }
        } else if tag.is("font") {
            if tag.any_attr(|n, _| {
                ["color", "size", "face"]
                    .iter()
                    .any(|a| n.eq_ignore_ascii_case(a.as_bytes()))
            }) {
                self.leave();
            }
        } else if self.ns == Ns::MathMl
            && tag.is("annotation-xml")
            && !self_closing
            && tag.any_attr(|n, v| {
                n.eq_ignore_ascii_case(b"encoding")
                    && (v.eq_ignore_ascii_case(b"text/html")
                        || v.eq_ignore_ascii_case(b"application/xhtml+xml"))
            })
        {
            self.enter(Ns::Html);
        }
    }

    fn enter(&mut self, ns: Ns) {
        self.stack.push(ns);
        self.ns = ns;
    }

    fn leave(&mut self) {
        self.stack.pop();
        if let Some(&ns) = self.stack.last() {
            self.ns = ns;
        }
    }

    fn guard_start(&mut self, tag: &Tag<'_>) -> Result<(), Stop> {
        // A start tag that switches the tokenizer to text, where the
        // guard cannot tell whether it does.
        let ambiguous = || {
            if switches_to_text(tag) {
                Err(Stop)
            } else {
                Ok(())
            }
        };
        match self.guard {
            Guard::Default => {
                if tag.is("select") {
                    self.guard = Guard::InSelect;
                } else if tag.is("frameset") {
                    self.guard = Guard::InOrAfterFrameset;
                }
            }
            Guard::InSelect => {
                if one_of(tag, &["select", "textarea", "input", "keygen"]) {
                    self.guard = Guard::Default;
                } else if tag.is("template") {
                    self.guard = Guard::InTemplateInSelect(1);
                } else if !tag.is("script") {
                    ambiguous()?;
                }
            }
            Guard::InTemplateInSelect(depth) => {
                if tag.is("template") {
                    self.guard = Guard::InTemplateInSelect(depth + 1);
                } else {
                    ambiguous()?;
                }
            }
            Guard::InOrAfterFrameset => {
                if !tag.is("noframes") {
                    ambiguous()?;
                }
            }
        }
        Ok(())
    }

    fn guard_end(&mut self, tag: &Tag<'_>) {
        match self.guard {
            Guard::InSelect if tag.is("select") => self.guard = Guard::Default,
            Guard::InTemplateInSelect(depth) if tag.is("template") => {
                self.guard = if depth == 1 {
                    Guard::InSelect
                } else {
                    Guard::InTemplateInSelect(depth - 1)
                };
            }
            _ => {}
        }
    }
}
