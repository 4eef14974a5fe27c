//! The XML side of the parser: what each element, text and reference
//! does to the entry being built ([`XmlState`]), from the root (which
//! decides the kind) to the extensions (images, videos, news, alternates).

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::{Source, MAX_EXTENSION_BYTES, MAX_FIELD};
use crate::date::LastMod;
use crate::{
    Alternate, ChangeFreq, Entry, Image, Kind, News, SitemapRef, Summary, UrlEntry, Video,
};

#[derive(Default)]
pub(super) struct UrlBuilder {
    loc: Option<String>,
    loc_closed: bool,
    lastmod: Option<LastMod>,
    changefreq: Option<ChangeFreq>,
    priority: Option<f32>,
    images: Vec<Image>,
    videos: Vec<Video>,
    news: Option<News>,
    alternates: Vec<Alternate>,
    /// RSS `<guid>`, the location when an item has no `<link>`.
    guid: Option<String>,
    /// Extension bytes kept so far (see [`MAX_EXTENSION_BYTES`]).
    extension_bytes: usize,
}

impl UrlBuilder {
    /// Whether `size` more bytes of extension data fit this entry's budget
    /// (and takes them if so).
    fn budget(&mut self, size: usize) -> bool {
        let after = self.extension_bytes.saturating_add(size.max(1));
        if after > MAX_EXTENSION_BYTES {
            return false;
        }
        self.extension_bytes = after;
        true
    }
}

pub(super) struct XmlState {
    pub(super) reader: Reader<Source>,
    pub(super) buf: Vec<u8>,
    /// Local names of open elements.
    pub(super) stack: Vec<Vec<u8>>,
    pub(super) text: String,
    /// The current leaf value contains an entity we refuse to expand.
    pub(super) bad_entity: bool,
    /// The current value was cut at [`MAX_FIELD`].
    pub(super) text_cut: bool,
    pub(super) url: Option<UrlBuilder>,
    pub(super) image: Option<Image>,
    pub(super) video: Option<Video>,
    pub(super) in_news: bool,
    pub(super) pending: Vec<Entry>,
    /// Values cut at [`MAX_FIELD`].
    pub(super) fields_cut: u64,
    /// Extension items dropped at [`MAX_EXTENSION_BYTES`].
    pub(super) extensions_dropped: u64,
}

impl XmlState {
    /// Adds to the current value, up to [`MAX_FIELD`] bytes.
    fn push_text(&mut self, s: &str) {
        let room = MAX_FIELD.saturating_sub(self.text.len());
        if s.len() <= room {
            self.text.push_str(s);
            return;
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&s[..end]);
        if !self.text_cut {
            self.fields_cut += 1;
            self.text_cut = true;
        }
    }
}

/// What the parser does after an XML event.
pub(super) enum Flow {
    /// Go on reading.
    Go,
    /// Stop: the document is refused before anything of it is read.
    Refused(String),
    /// Stop with this error.
    Stop(String),
    /// The XML broke off: keep what was read, with this error.
    Broken(String),
    /// The end of the document.
    Eof,
}

/// One XML event: elements opened, closed or empty, text, and references.
pub(super) fn on_event(
    x: &mut XmlState,
    summary: &mut Summary,
    max_depth: usize,
    event: Event<'static>,
) -> Flow {
    match event {
        Event::DocType(_) => Flow::Refused(
            "the sitemap has a DOCTYPE; DTDs and entity definitions are refused (billion-laughs and XXE protection)".into(),
        ),
        Event::Start(e) => on_start(x, summary, max_depth, &e),
        Event::Empty(e) => on_empty(x, summary, &e),
        Event::End(e) => {
            on_end(x, summary, &e.local_name().as_ref().to_ascii_lowercase());
            Flow::Go
        }
        Event::Text(t) => {
            if let Ok(s) = t.decode() {
                x.push_text(&s);
            }
            Flow::Go
        }
        Event::CData(c) => {
            if let Ok(s) = c.decode() {
                x.push_text(&s);
            }
            Flow::Go
        }
        Event::GeneralRef(r) => {
            on_reference(x, &r);
            Flow::Go
        }
        Event::Eof => Flow::Eof,
        Event::Decl(_) | Event::PI(_) | Event::Comment(_) => Flow::Go,
    }
}

/// An element opened (markup inside `<loc>` is not read, only kept on
/// the stack so its end is matched).
fn on_start(x: &mut XmlState, summary: &mut Summary, max_depth: usize, e: &BytesStart<'_>) -> Flow {
    if x.stack.len() >= max_depth {
        return Flow::Stop(format!("XML nested deeper than {max_depth} elements"));
    }
    let name = e.local_name().as_ref().to_ascii_lowercase();
    let in_loc = x.stack.iter().any(|n| n == b"loc");
    if !in_loc {
        if let Err(msg) = start(x, summary, &name, e) {
            return Flow::Stop(msg);
        }
    }
    x.stack.push(name);
    Flow::Go
}

/// An empty element (`<url/>`, or a root with nothing in it).
fn on_empty(x: &mut XmlState, summary: &mut Summary, e: &BytesStart<'_>) -> Flow {
    let name = e.local_name().as_ref().to_ascii_lowercase();
    if x.stack.iter().any(|n| n == b"loc") {
        return Flow::Go;
    }
    if x.stack.is_empty() {
        if let Err(msg) = start(x, summary, &name, e) {
            return Flow::Stop(msg);
        }
    } else {
        empty(x, summary, &name, e);
    }
    Flow::Go
}

/// An element closed; inside `<loc>` only its text counts, so markup
/// there is popped without being read.
fn on_end(x: &mut XmlState, summary: &Summary, name: &[u8]) {
    if name != b"loc" {
        if let Some(loc_at) = x.stack.iter().rposition(|n| n == b"loc") {
            if let Some(pos) = x
                .stack
                .iter()
                .rposition(|n| *n == name)
                .filter(|p| *p > loc_at)
            {
                x.stack.truncate(pos);
            }
            return;
        }
    }
    end(x, summary, name);
    if let Some(pos) = x.stack.iter().rposition(|n| *n == name) {
        x.stack.truncate(pos);
    }
}

/// A character or entity reference: the five XML entities and character
/// references are text; any other entity marks the value bad.
fn on_reference(x: &mut XmlState, r: &quick_xml::events::BytesRef<'_>) {
    if let Ok(Some(ch)) = r.resolve_char_ref() {
        x.push_text(ch.encode_utf8(&mut [0; 4]));
        return;
    }
    match r.as_ref() {
        b"amp" => x.push_text("&"),
        b"lt" => x.push_text("<"),
        b"gt" => x.push_text(">"),
        b"quot" => x.push_text("\""),
        b"apos" => x.push_text("'"),
        _ => x.bad_entity = true,
    }
}

fn attr(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.local_name().as_ref().eq_ignore_ascii_case(name))
            .then(|| {
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map(|v| v.into_owned())
                    .ok()
            })
            .flatten()
    })
}

/// An element starts (for the root: decides the kind).
fn start(
    x: &mut XmlState,
    summary: &mut Summary,
    name: &[u8],
    e: &BytesStart<'_>,
) -> Result<(), String> {
    x.text.clear();
    x.bad_entity = false;
    if x.stack.is_empty() && summary.kind.is_some() {
        // A second root element (two documents in one file): read it too.
        let next = match name {
            b"urlset" => Some(Kind::UrlSet),
            b"sitemapindex" => Some(Kind::Index),
            _ => None,
        };
        if let Some(k) = next {
            flush_open(x, summary);
            summary.kind = Some(k);
            summary.error = Some(format!(
                "a second root element <{}> follows the first; it was read too",
                String::from_utf8_lossy(name)
            ));
            return Ok(());
        }
    }
    let Some(kind) = summary.kind else {
        summary.kind = Some(match name {
            b"urlset" => Kind::UrlSet,
            b"sitemapindex" => Kind::Index,
            b"rss" | b"rdf" => Kind::Rss,
            b"feed" => Kind::Atom,
            other => {
                return Err(format!(
                "not a sitemap: the root element is <{}>, not urlset, sitemapindex, rss or feed",
                String::from_utf8_lossy(other)
            ))
            }
        });
        return Ok(());
    };
    match (kind, name) {
        (Kind::UrlSet, b"url")
        | (Kind::Index, b"sitemap")
        | (Kind::Rss, b"item")
        | (Kind::Atom, b"entry") => {
            flush_open(x, summary);
            let mut b = UrlBuilder::default();
            if kind == Kind::Rss {
                // RSS 1.0: <item rdf:about="...">.
                if let Some(about) = attr(e, b"about") {
                    b.loc = Some(clean(&about));
                }
            }
            x.url = Some(b);
        }
        (Kind::UrlSet, b"image") if x.url.is_some() => x.image = Some(Image::default()),
        (Kind::UrlSet, b"video") if x.url.is_some() => x.video = Some(Video::default()),
        (Kind::UrlSet, b"news") if x.url.is_some() => {
            x.in_news = true;
            if let Some(u) = x.url.as_mut() {
                u.news.get_or_insert_with(News::default);
            }
        }
        (Kind::UrlSet, b"link") | (Kind::Atom, b"link") => empty(x, summary, name, e),
        _ => {}
    }
    Ok(())
}

/// A self-closing element (`<xhtml:link .../>`, Atom `<link href/>`).
fn empty(x: &mut XmlState, summary: &Summary, name: &[u8], e: &BytesStart<'_>) {
    if name != b"link" {
        return;
    }
    let Some(u) = x.url.as_mut() else { return };
    match summary.kind {
        Some(Kind::Atom) => {
            let rel = attr(e, b"rel");
            if let Some(href) = attr(e, b"href") {
                if rel.as_deref().is_none_or(|r| r == "alternate") && u.loc.is_none() {
                    u.loc = Some(clean(&href));
                    u.loc_closed = true;
                }
            }
        }
        Some(Kind::UrlSet) if attr(e, b"rel").as_deref() == Some("alternate") => {
            if let Some(href) = attr(e, b"href") {
                let alt = Alternate {
                    hreflang: attr(e, b"hreflang"),
                    href: clean(&href),
                };
                if u.budget(alt.href.len() + alt.hreflang.as_ref().map_or(0, String::len)) {
                    u.alternates.push(alt);
                } else {
                    x.extensions_dropped += 1;
                }
            }
        }
        _ => {}
    }
}

/// Trims whitespace (Unicode included) around a value.
fn clean(s: &str) -> String {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}' || c == '\u{200b}')
        .to_owned()
}

/// An element ends: store its text where it belongs, emit finished entries.
fn end(x: &mut XmlState, summary: &Summary, name: &[u8]) {
    let text = clean(&std::mem::take(&mut x.text));
    let bad = std::mem::take(&mut x.bad_entity);
    x.text_cut = false;
    if x.image.is_some() {
        end_image(x, name, text);
    } else if x.video.is_some() {
        end_video(x, name, text);
    } else if x.in_news {
        end_news(x, name, text);
    } else {
        end_entry(x, summary.kind, name, text, bad);
    }
}

/// Inside `<image:image>`.
fn end_image(x: &mut XmlState, name: &[u8], text: String) {
    let Some(img) = x.image.as_mut() else { return };
    match name {
        b"loc" => img.loc = text,
        b"caption" => img.caption = Some(text),
        b"title" => img.title = Some(text),
        b"geo_location" => img.geo_location = Some(text),
        b"license" => img.license = Some(text),
        b"image" => {
            if let (Some(img), Some(u)) = (x.image.take(), x.url.as_mut()) {
                let size = img.loc.len()
                    + [&img.caption, &img.title, &img.geo_location, &img.license]
                        .iter()
                        .map(|f| f.as_ref().map_or(0, String::len))
                        .sum::<usize>();
                if u.budget(size) {
                    u.images.push(img);
                } else {
                    x.extensions_dropped += 1;
                }
            }
        }
        _ => {}
    }
}

/// Inside `<video:video>`.
fn end_video(x: &mut XmlState, name: &[u8], text: String) {
    let Some(v) = x.video.as_mut() else { return };
    match name {
        b"thumbnail_loc" => v.thumbnail_loc = Some(text),
        b"title" => v.title = Some(text),
        b"description" => v.description = Some(text),
        b"content_loc" => v.content_loc = Some(text),
        b"player_loc" => v.player_loc = Some(text),
        b"duration" => v.duration = text.parse().ok(),
        b"publication_date" => v.publication_date = Some(LastMod::w3c(&text)),
        // The video's own budget is checked when it closes.
        b"tag" if v.tags.len() < 32 => v.tags.push(text),
        b"tag" => x.extensions_dropped += 1,
        b"category" => v.category = Some(text),
        b"family_friendly" => v.family_friendly = Some(text.eq_ignore_ascii_case("yes")),
        b"video" => {
            if let (Some(v), Some(u)) = (x.video.take(), x.url.as_mut()) {
                let size = [
                    &v.thumbnail_loc,
                    &v.title,
                    &v.description,
                    &v.content_loc,
                    &v.player_loc,
                    &v.category,
                ]
                .iter()
                .map(|f| f.as_ref().map_or(0, String::len))
                .sum::<usize>()
                    + v.tags.iter().map(String::len).sum::<usize>();
                if u.budget(size) {
                    u.videos.push(v);
                } else {
                    x.extensions_dropped += 1;
                }
            }
        }
        _ => {}
    }
}

/// Inside `<news:news>`.
fn end_news(x: &mut XmlState, name: &[u8], text: String) {
    if let Some(n) = x.url.as_mut().and_then(|u| u.news.as_mut()) {
        match name {
            b"name" => n.name = Some(text),
            b"language" => n.language = Some(text),
            b"publication_date" => n.publication_date = Some(LastMod::w3c(&text)),
            b"title" => n.title = Some(text),
            b"keywords" => {
                n.keywords = text
                    .split(',')
                    .map(|k| k.trim().to_owned())
                    .filter(|k| !k.is_empty())
                    .collect()
            }
            b"news" => x.in_news = false,
            _ => {}
        }
    }
}

/// An entry's own elements, and the entry's end. `bad`: its text held an
/// entity that could not be read.
fn end_entry(x: &mut XmlState, kind: Option<Kind>, name: &[u8], text: String, bad: bool) {
    let Some(u) = x.url.as_mut() else { return };
    match (kind, name) {
        (Some(Kind::UrlSet | Kind::Index), b"loc") | (Some(Kind::Rss), b"link") => {
            if bad {
                u.loc = Some(String::new());
                u.loc_closed = true;
                return;
            }
            if u.loc.is_some() && u.loc_closed && kind != Some(Kind::Rss) {
                // A second <loc> in one entry: the first stands alone.
                let prev = std::mem::take(u);
                x.pending.insert(0, build(prev, kind));
                let u = x.url.get_or_insert_with(UrlBuilder::default);
                u.loc = Some(text);
                u.loc_closed = true;
                return;
            }
            if kind != Some(Kind::Rss) || u.loc.is_none() {
                u.loc = Some(text);
                u.loc_closed = true;
            }
        }
        (Some(Kind::UrlSet | Kind::Index), b"lastmod") => u.lastmod = Some(LastMod::w3c(&text)),
        (Some(Kind::UrlSet), b"changefreq") => u.changefreq = ChangeFreq::parse(&text),
        (Some(Kind::UrlSet), b"priority") => {
            u.priority = text.parse::<f32>().ok().filter(|p| (0.0..=1.0).contains(p));
        }
        (Some(Kind::Rss), b"pubdate") | (Some(Kind::Rss), b"date") => {
            u.lastmod = Some(LastMod::rfc822(&text))
        }
        (Some(Kind::Rss), b"guid") if u.guid.is_none() => u.guid = Some(text),
        (Some(Kind::Atom), b"updated" | b"modified") => u.lastmod = Some(LastMod::w3c(&text)),
        (Some(Kind::Atom), b"published" | b"issued") if u.lastmod.is_none() => {
            u.lastmod = Some(LastMod::w3c(&text))
        }
        (Some(Kind::UrlSet), b"url")
        | (Some(Kind::Index), b"sitemap")
        | (Some(Kind::Rss), b"item")
        | (Some(Kind::Atom), b"entry") => {
            if let Some(mut done) = x.url.take() {
                // A URL written straight inside the entry, without <loc>.
                if done.loc.is_none()
                    && (text.starts_with("http://") || text.starts_with("https://"))
                {
                    done.loc = Some(text);
                    done.loc_closed = true;
                }
                x.pending.insert(0, build(done, kind));
            }
        }
        _ => {}
    }
}

/// At a new entry or the end of the file: an entry still open is emitted if
/// its `<loc>` was complete (a cut-off `<loc>` may hold half a URL).
pub(super) fn flush_open(x: &mut XmlState, summary: &mut Summary) {
    if let Some(u) = x.url.take() {
        if u.loc_closed {
            x.pending.insert(0, build(u, summary.kind));
        } else if u.loc.is_some() || x.stack.last().is_some_and(|n| n == b"loc") {
            *summary
                .dropped
                .entry("cut off inside <loc> (the URL may be incomplete)".to_owned())
                .or_insert(0) += 1;
        }
    }
    x.image = None;
    x.video = None;
    x.in_news = false;
}

fn build(u: UrlBuilder, kind: Option<Kind>) -> Entry {
    let guid = u
        .guid
        .filter(|g| g.starts_with("http://") || g.starts_with("https://"));
    let loc = u.loc.filter(|l| !l.is_empty()).or(guid).unwrap_or_default();
    match kind {
        Some(Kind::Index) => Entry::Sitemap(SitemapRef {
            loc,
            lastmod: u.lastmod,
        }),
        _ => Entry::Url(UrlEntry {
            loc,
            lastmod: u.lastmod,
            changefreq: u.changefreq,
            priority: u.priority,
            images: u.images,
            videos: u.videos,
            news: u.news,
            alternates: u.alternates,
        }),
    }
}
