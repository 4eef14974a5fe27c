//! The streaming parser: bytes in, entries out, limits enforced as it reads.

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::date::LastMod;
use crate::location::LocationRule;
use crate::{
    Alternate, ChangeFreq, Entry, Image, Kind, News, Options, SitemapRef, Stop, Summary, UrlEntry,
    Video,
};

/// Counts decoded bytes and ends the stream at the limit (setting a flag,
/// so a cut is told apart from a file that really ended).
struct Capped<R> {
    inner: R,
    left: u64,
    read: Rc<Cell<u64>>,
    hit: Rc<Cell<bool>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // Look one byte further: only a longer stream is a cut.
            let mut probe = [0u8; 1];
            if !self.hit.get() && self.inner.read(&mut probe)? > 0 {
                self.hit.set(true);
            }
            return Ok(0);
        }
        let max = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..max])?;
        self.left -= n as u64;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

type Source = Box<dyn BufRead>;

/// The longest run of text, or of markup (a tag with its attributes), the
/// XML reader is given; the rest of a longer run is dropped before it. No
/// valid sitemap has one (a `loc` is under 2,048 characters), and without
/// this cap one text node of 50 MB of whitespace is buffered whole.
pub const MAX_RUN: usize = 16 * 1024;

/// The longest value kept for one element (a `loc`, a title, a caption):
/// longer values are cut here and counted.
pub const MAX_FIELD: usize = 8 * 1024;

/// Extension data (images, videos, alternates, tags) kept per entry; past
/// it, further items of the entry are dropped and counted.
pub const MAX_EXTENSION_BYTES: usize = 256 * 1024;

/// Reads one line, keeping at most `cap` bytes of it (the rest is read
/// and dropped): a text sitemap's 50 MB line is never held. Returns the
/// bytes consumed.
fn read_line_capped(src: &mut Source, line: &mut Vec<u8>, cap: usize) -> io::Result<usize> {
    let mut total = 0;
    loop {
        let buf = src.fill_buf()?;
        if buf.is_empty() {
            return Ok(total);
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = cap.saturating_sub(line.len());
        line.extend_from_slice(&buf[..take.min(room)]);
        src.consume(take);
        total += take;
        if done {
            return Ok(total);
        }
    }
}

/// Cuts runs of text or markup at [`MAX_RUN`] bytes, counting the runs cut.
struct RunCap {
    inner: Source,
    in_markup: bool,
    run: usize,
    cut: Rc<Cell<u64>>,
}

impl Read for RunCap {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let chunk = self.inner.fill_buf()?;
            if chunk.is_empty() {
                return Ok(0);
            }
            let mut n = 0;
            let mut used = 0;
            for &b in chunk {
                if n == buf.len() {
                    break;
                }
                used += 1;
                match b {
                    b'<' => {
                        self.in_markup = true;
                        self.run = 0;
                    }
                    b'>' => {
                        self.in_markup = false;
                        self.run = 0;
                    }
                    _ => {
                        self.run += 1;
                        if self.run == MAX_RUN + 1 {
                            self.cut.set(self.cut.get() + 1);
                        }
                        if self.run > MAX_RUN {
                            continue;
                        }
                    }
                }
                buf[n] = b;
                n += 1;
            }
            self.inner.consume(used);
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
        }
    }
}

/// Peels gzip layers (detected by the magic bytes 1F 8B, up to
/// `max_layers`), then caps the decoded size.
fn decode(
    reader: Box<dyn Read>,
    options: &Options,
    read: Rc<Cell<u64>>,
    hit: Rc<Cell<bool>>,
) -> io::Result<(Source, u8)> {
    let mut src: Box<dyn BufRead> = Box::new(BufReader::with_capacity(64 * 1024, reader));
    let mut layers = 0u8;
    loop {
        let head = src.fill_buf()?;
        if head.len() >= 2 && head[0] == 0x1F && head[1] == 0x8B && layers < options.max_gzip_layers
        {
            layers += 1;
            src = Box::new(BufReader::with_capacity(
                64 * 1024,
                flate2::bufread::MultiGzDecoder::new(src),
            ));
            continue;
        }
        break;
    }
    let capped = Capped {
        inner: src,
        left: options.max_bytes,
        read,
        hit,
    };
    Ok((
        Box::new(BufReader::with_capacity(64 * 1024, capped)),
        layers,
    ))
}

/// Skips a BOM and leading whitespace; tells XML from text.
fn sniff(src: &mut Source) -> io::Result<bool> {
    let mut skipped = 0;
    loop {
        let buf = src.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        if buf.starts_with(b"\xEF\xBB\xBF") {
            src.consume(3);
            continue;
        }
        let ws = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        if ws == 0 {
            return Ok(buf[0] == b'<');
        }
        src.consume(ws);
        skipped += ws;
        if skipped > 1 << 20 {
            return Ok(false);
        }
    }
}

#[derive(Default)]
struct UrlBuilder {
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

/// A streaming sitemap parser: an iterator of [`Entry`]s. Problems never
/// end the iteration with an error; they are counted in the [`Summary`],
/// and everything read up to a problem is kept.
pub struct SitemapParser {
    inner: Inner,
    summary: Summary,
    options: Options,
    rule: Option<LocationRule>,
    read: Rc<Cell<u64>>,
    hit: Rc<Cell<bool>>,
    /// Runs cut at [`MAX_RUN`].
    runs_cut: Rc<Cell<u64>>,
    done: bool,
}

enum Inner {
    Xml(Box<XmlState>),
    Text(Source),
    None,
}

struct XmlState {
    reader: Reader<Source>,
    buf: Vec<u8>,
    /// Local names of open elements.
    stack: Vec<Vec<u8>>,
    text: String,
    /// The current leaf value contains an entity we refuse to expand.
    bad_entity: bool,
    /// The current value was cut at [`MAX_FIELD`].
    text_cut: bool,
    url: Option<UrlBuilder>,
    image: Option<Image>,
    video: Option<Video>,
    in_news: bool,
    pending: Vec<Entry>,
    /// Values cut at [`MAX_FIELD`].
    fields_cut: u64,
    /// Extension items dropped at [`MAX_EXTENSION_BYTES`].
    extensions_dropped: u64,
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

impl SitemapParser {
    /// Parses `reader` with these options. `rule` (the sitemap's own URL,
    /// and origins that cross-submitted it) drops entries outside the
    /// sitemap's location; `None` keeps every absolute URL.
    pub fn new(
        reader: impl Read + 'static,
        options: Options,
        rule: Option<LocationRule>,
    ) -> SitemapParser {
        let read = Rc::new(Cell::new(0));
        let hit = Rc::new(Cell::new(false));
        let runs_cut = Rc::new(Cell::new(0));
        let mut summary = Summary::default();
        let inner = match decode(Box::new(reader), &options, read.clone(), hit.clone()) {
            Ok((mut src, layers)) => {
                summary.gzip_layers = layers;
                match sniff(&mut src) {
                    Ok(true) => {
                        let capped: Source = Box::new(BufReader::with_capacity(
                            64 * 1024,
                            RunCap {
                                inner: src,
                                in_markup: false,
                                run: 0,
                                cut: runs_cut.clone(),
                            },
                        ));
                        let mut reader = Reader::from_reader(capped);
                        let cfg = reader.config_mut();
                        cfg.check_end_names = false;
                        cfg.allow_unmatched_ends = true;
                        cfg.allow_dangling_amp = true;
                        cfg.expand_empty_elements = false;
                        Inner::Xml(Box::new(XmlState {
                            reader,
                            buf: Vec::with_capacity(4096),
                            stack: Vec::new(),
                            text: String::new(),
                            bad_entity: false,
                            text_cut: false,
                            url: None,
                            image: None,
                            video: None,
                            in_news: false,
                            pending: Vec::new(),
                            fields_cut: 0,
                            extensions_dropped: 0,
                        }))
                    }
                    Ok(false) => {
                        summary.kind = Some(Kind::Text);
                        Inner::Text(src)
                    }
                    Err(e) => {
                        summary.stop = Some(Stop::Error(format!("cannot read the sitemap: {e}")));
                        Inner::None
                    }
                }
            }
            Err(e) => {
                summary.stop = Some(Stop::Error(format!("cannot read the sitemap: {e}")));
                Inner::None
            }
        };
        SitemapParser {
            inner,
            summary,
            options,
            rule,
            read,
            hit,
            runs_cut,
            done: false,
        }
    }

    /// Parses a byte slice.
    pub fn from_bytes(bytes: &[u8], options: Options, rule: Option<LocationRule>) -> SitemapParser {
        SitemapParser::new(io::Cursor::new(bytes.to_vec()), options, rule)
    }

    /// What happened so far (complete once the iterator is exhausted).
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Reads everything that is left and returns the summary.
    pub fn finish(mut self) -> Summary {
        for _ in self.by_ref() {}
        self.summary
    }

    fn drop_entry(&mut self, reason: &str) {
        *self.summary.dropped.entry(reason.to_owned()).or_insert(0) += 1;
    }

    /// Validates a location and applies the limits; `Some` to emit.
    fn accept(&mut self, mut entry: Entry) -> Option<Entry> {
        let loc = entry.loc();
        if loc.is_empty() {
            self.drop_entry("no <loc>");
            return None;
        }
        if loc.chars().count() >= self.options.max_loc_len {
            self.drop_entry("loc of 2,048 characters or more");
            return None;
        }
        let Ok(parsed) = url::Url::parse(loc) else {
            self.drop_entry("not an absolute URL");
            return None;
        };
        if parsed.scheme() != "http" && parsed.scheme() != "https" {
            self.drop_entry("not an http(s) URL");
            return None;
        }
        // The location rule is for pages; an index's children are each
        // held to their own location when they are read.
        if let (Some(rule), Entry::Url(_)) = (&self.rule, &entry) {
            if !rule.allows(&parsed) {
                self.drop_entry("outside the sitemap's location (not cross-submitted)");
                return None;
            }
        }
        if self.summary.entries >= self.options.max_entries {
            if self.summary.stop.is_none() {
                self.summary.stop = Some(Stop::MaxEntries(self.options.max_entries));
            }
            self.done = true;
            return None;
        }
        self.summary.entries += 1;
        // The URL as parsed, not the raw text: the parser drops tabs and
        // newlines (a `&#10;` in <loc> could otherwise start a second,
        // fake line in line-based output) and escapes control bytes.
        let normal = String::from(parsed);
        match &mut entry {
            Entry::Url(u) => u.loc = normal,
            Entry::Sitemap(s) => s.loc = normal,
        }
        Some(entry)
    }

    fn finish_stream(&mut self, truncated: bool) {
        self.done = true;
        self.summary.bytes = self.read.get();
        let mut count = |what: &str, n: u64| {
            if n > 0 {
                *self.summary.dropped.entry(what.to_owned()).or_insert(0) +=
                    usize::try_from(n).unwrap_or(usize::MAX);
            }
        };
        count(
            "a run of text or markup over 16 KiB (the rest skipped)",
            self.runs_cut.get(),
        );
        if let Inner::Xml(x) = &self.inner {
            count("a value over 8 KiB (cut)", x.fields_cut);
            count(
                "extension data past 256 KiB in one entry (images, videos, alternates, tags)",
                x.extensions_dropped,
            );
        }
        if self.hit.get() {
            if self.summary.stop.is_none() {
                self.summary.stop = Some(Stop::MaxBytes(self.options.max_bytes));
            }
        } else if truncated {
            self.summary.truncated = true;
        }
    }

    fn next_text(&mut self) -> Option<Entry> {
        loop {
            let Inner::Text(src) = &mut self.inner else {
                return None;
            };
            let mut line = Vec::new();
            match read_line_capped(src, &mut line, MAX_RUN) {
                Ok(0) => {
                    let junk = self
                        .summary
                        .dropped
                        .get("not an absolute URL")
                        .copied()
                        .unwrap_or(0);
                    if self.summary.entries == 0 && junk > 0 {
                        self.summary.stop = Some(Stop::Error(
                            "not a sitemap: neither XML nor a single absolute URL in the text"
                                .into(),
                        ));
                    }
                    self.finish_stream(false);
                    return None;
                }
                Ok(_) => {}
                Err(e) => {
                    self.summary.stop = Some(Stop::Error(format!("read error: {e}")));
                    self.finish_stream(true);
                    return None;
                }
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let entry = Entry::Url(UrlEntry::new(text.to_owned()));
            if let Some(e) = self.accept(entry) {
                return Some(e);
            }
            if self.done {
                return None;
            }
        }
    }

    fn next_xml(&mut self) -> Option<Entry> {
        loop {
            if let Inner::Xml(x) = &mut self.inner {
                if let Some(e) = x.pending.pop() {
                    if let Some(e) = self.accept(e) {
                        return Some(e);
                    }
                    if self.done {
                        return None;
                    }
                    continue;
                }
            }
            if self.done {
                return None;
            }
            self.step_xml();
        }
    }

    /// Reads one XML event, possibly queueing finished entries.
    fn step_xml(&mut self) {
        let Inner::Xml(x) = &mut self.inner else {
            self.done = true;
            return;
        };
        x.buf.clear();
        let read = x.reader.read_event_into(&mut x.buf).map(|e| e.into_owned());
        let flow = match read {
            Ok(e) => on_event(x, &mut self.summary, self.options.max_xml_depth, e),
            Err(e) => Flow::Broken(format!(
                "XML error at byte {}: {e}",
                x.reader.buffer_position()
            )),
        };
        match flow {
            Flow::Go => {}
            Flow::Refused(msg) => {
                self.summary.stop = Some(Stop::Error(msg));
                self.done = true;
                self.summary.bytes = self.read.get();
            }
            Flow::Stop(msg) => {
                self.summary.stop = Some(Stop::Error(msg));
                self.done = true;
            }
            Flow::Broken(msg) => {
                let truncated = !x.stack.is_empty();
                flush_open(x, &mut self.summary);
                if self.summary.kind.is_none() {
                    self.summary.stop = Some(Stop::Error(msg));
                } else {
                    self.summary.error = Some(msg);
                }
                self.finish_stream(truncated);
            }
            Flow::Eof => {
                let truncated = !x.stack.is_empty();
                flush_open(x, &mut self.summary);
                if self.summary.kind.is_none() {
                    self.summary.stop = Some(Stop::Error("not a sitemap: no root element".into()));
                }
                self.finish_stream(truncated);
            }
        }
    }
}

/// What the parser does after an XML event.
enum Flow {
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
fn on_event(
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

impl Iterator for SitemapParser {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        let pending = matches!(&self.inner, Inner::Xml(x) if !x.pending.is_empty());
        if self.done && !pending {
            return None;
        }
        match self.inner {
            Inner::Xml(_) => self.next_xml(),
            Inner::Text(_) => self.next_text(),
            Inner::None => None,
        }
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
fn flush_open(x: &mut XmlState, summary: &mut Summary) {
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
