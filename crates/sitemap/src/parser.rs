//! The streaming parser: bytes in, entries out, limits enforced as it reads.
//! This module reads (gzip, caps, text or XML) and drives; `xml` knows what
//! each XML element means.

mod xml;

use xml::{flush_open, on_event, Flow, XmlState};

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use quick_xml::Reader;

use crate::location::LocationRule;
use crate::{Entry, Kind, Options, Stop, Summary, UrlEntry};

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
                    let count = |reason| self.summary.dropped.get(reason).copied().unwrap_or(0);
                    let (junk, robots) = (count("not an absolute URL"), count(ROBOTS_LINE));
                    if self.summary.entries == 0 && robots > 0 {
                        self.summary.stop = Some(Stop::Error(
                            "not a sitemap: a robots.txt (User-agent, Disallow, Sitemap lines)"
                                .into(),
                        ));
                    } else if self.summary.entries == 0 && junk > 0 {
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
            if is_robots_line(text) {
                self.drop_entry(ROBOTS_LINE);
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

/// The reason a text sitemap's line is dropped when it is a robots.txt
/// directive (`Sitemap: https://...` parses as a URL of scheme `sitemap`).
pub const ROBOTS_LINE: &str = "not a URL: a robots.txt line";

/// Whether a text line is a robots.txt directive: a record name of
/// robots.txt before its colon, or any name followed by `: ` (a URL's
/// scheme is never followed by a space).
fn is_robots_line(text: &str) -> bool {
    const NAMES: [&str; 9] = [
        "user-agent",
        "disallow",
        "allow",
        "sitemap",
        "crawl-delay",
        "request-rate",
        "host",
        "content-usage",
        "clean-param",
    ];
    text.split_once(':').is_some_and(|(name, value)| {
        let name = name.trim();
        let token = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        NAMES.iter().any(|n| name.eq_ignore_ascii_case(n))
            || token && (value.is_empty() || value.starts_with([' ', '\t']))
    })
}
