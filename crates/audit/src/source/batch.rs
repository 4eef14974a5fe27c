//! One log read a batch at a time: its format found (or given) from the
//! first batch, each batch cut into pieces that are checked as UTF-8 and
//! parsed on the cores the judging leaves, the entries kept with the
//! bytes they point into (so a batch can be parsed on one thread and
//! judged on another).

use std::io::Read;

use mannerly_logs::{detect, open, Entry, Format, LineError, Lines, Parser};

use super::{LogSource, SourceError};

/// Bytes of a piece of a batch parsed on one core.
const CHUNK_BYTES: usize = 256 << 10;

/// Lines looked at to find a file's format.
const DETECT_LINES: usize = 50;

/// A line's outcome: its number and entry, or why it was not read.
pub(crate) type Line<'a> = (u64, Result<Option<Entry<'a>>, LineError>);

/// A piece's lines, in order.
pub(crate) type Parsed<'a> = Vec<Line<'a>>;

/// A batch's pieces, in order: kept apart, not copied into one list.
pub(crate) type Pieces<'a> = Vec<Parsed<'a>>;

/// Lists of lines kept empty between batches, so a batch's lines fill
/// memory already in use rather than newly allocated pages.
pub(crate) type Spare = Vec<Parsed<'static>>;

/// An emptied list, its memory kept, for lines of another lifetime (it
/// holds none, so none changes lifetime: collecting a vector's own
/// iterator into a vector of the same layout reuses its allocation, and
/// the `filter_map` over no lines is what makes the types meet).
#[allow(clippy::unnecessary_filter_map)]
fn relabel<'a, 'b>(mut list: Parsed<'a>) -> Parsed<'b> {
    list.clear();
    list.into_iter().filter_map(|_| None).collect()
}

/// A batch's bytes and what it says besides its lines.
pub(crate) struct Owned {
    bytes: Vec<u8>,
    /// Lines longer than the cap, by number (empty lines in `bytes`).
    pub too_long: Vec<u64>,
    /// The format its lines were read in (`None`: no format found).
    pub format: Option<Format>,
}

self_cell::self_cell!(
    /// A batch and its lines parsed: entries point into its bytes.
    pub(crate) struct ParsedBatch {
        owner: Owned,
        #[covariant]
        dependent: Pieces,
    }
);

/// One log being read.
pub(crate) struct Reader {
    path: String,
    lines: Lines<Box<dyn Read + Send>>,
    parser: Option<Parser>,
    batch_bytes: usize,
    spare: Spare,
}

impl Reader {
    pub(crate) fn open(source: &LogSource, batch_bytes: usize) -> Result<Reader, SourceError> {
        let parser = match (&source.layout, source.format) {
            (Some(l), _) => Some(Parser::layout(l)?),
            (None, Some(f)) => Parser::new(f).ok(),
            (None, None) => None,
        };
        Ok(Reader {
            path: source.path.clone(),
            lines: Lines::new(open(&source.path)?),
            parser,
            batch_bytes,
            spare: Spare::new(),
        })
    }

    /// Takes back a used batch's memory, for the next batch.
    pub(crate) fn give_back(&mut self, (text, lists): (Vec<u8>, Spare)) {
        self.lines.give_back(text);
        self.spare = lists;
    }

    /// The next batch, parsed; `None` at the end.
    pub(crate) fn next(&mut self) -> Result<Option<ParsedBatch>, SourceError> {
        let batch =
            self.lines
                .next_batch(self.batch_bytes)
                .map_err(|source| SourceError::Read {
                    path: self.path.clone(),
                    source,
                })?;
        let Some(batch) = batch else {
            return Ok(None);
        };
        if self.parser.is_none() {
            let text = String::from_utf8_lossy(&batch.text);
            let first: Vec<&str> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(DETECT_LINES)
                .collect();
            self.parser = detect(&first).ok();
        }
        let parser = self.parser.clone();
        let owned = Owned {
            bytes: batch.text,
            too_long: batch.too_long,
            format: parser.as_ref().map(Parser::format),
        };
        let first_line = batch.first_line;
        let spare = &mut self.spare;
        let parsed = ParsedBatch::new(owned, |o| {
            parse(
                parser.as_ref(),
                &o.bytes,
                first_line,
                spare,
                parse_threads(),
            )
        });
        if let Some(p) = &mut self.parser {
            advance(p, parsed.borrow_owner());
        }
        Ok(Some(parsed))
    }
}

impl ParsedBatch {
    /// Its text and its emptied lists of lines, for the reader to fill
    /// again.
    pub(crate) fn into_parts(mut self) -> (Vec<u8>, Spare) {
        let lists = self.with_dependent_mut(|_, pieces| {
            std::mem::take(pieces).into_iter().map(relabel).collect()
        });
        (self.into_owner().bytes, lists)
    }

    /// What the batch says besides its lines.
    pub(crate) fn facts(&self) -> &Owned {
        self.borrow_owner()
    }

    /// Its lines, in order.
    pub(crate) fn lines(&self) -> impl Iterator<Item = &Line<'_>> {
        self.borrow_dependent().iter().flatten()
    }
}

/// A batch's lines parsed on `threads` threads, numbered from
/// `first_line`; with no parser, every line that is not blank is an error.
///
/// The pieces are shared out in runs, one a thread: this thread parses
/// the first and a thread of the batch's own each of the others. Threads
/// that live only as long as their batch wait for nothing between
/// batches (a pool's idle workers spun and yielded the core, some 4,500
/// times an audit of a million lines).
fn parse<'a>(
    parser: Option<&Parser>,
    bytes: &'a [u8],
    first_line: u64,
    spare: &mut Spare,
    threads: usize,
) -> Pieces<'a> {
    let whole = parser.is_none_or(|p| p.format() == Format::W3c);
    let mut jobs: Vec<(&[u8], Parsed<'a>)> = chunks(bytes, whole)
        .into_iter()
        .map(|chunk| (chunk, spare.pop().map(relabel).unwrap_or_default()))
        .collect();
    let per_thread = jobs.len().div_ceil(threads.max(1));
    let pieces: Vec<(u64, Parsed<'a>)> = std::thread::scope(|scope| {
        let mut runs = Vec::new();
        while jobs.len() > per_thread {
            let run = jobs.split_off(jobs.len() - per_thread);
            runs.push(scope.spawn(move || parse_run(parser, run)));
        }
        let mut all = parse_run(parser, jobs);
        for run in runs.into_iter().rev() {
            // A parse that panicked (a bug) panics here, as it would
            // have on this thread: no lines are dropped unsaid.
            all.extend(run.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        all
    });
    let mut out = Pieces::with_capacity(pieces.len());
    let mut base = first_line;
    for (lines, mut parsed) in pieces {
        for (i, _) in &mut parsed {
            *i += base;
        }
        out.push(parsed);
        base += lines;
    }
    out
}

/// The threads a batch is parsed on: every core but the one the audit
/// judges on, and at least one. On two cores the reader parses alone
/// while the judge works: a second parsing thread only took turns with
/// them (4-6 % more CPU, 3-8 % more wall time on a million lines).
fn parse_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism().map_or(1, |n| usize::from(n).saturating_sub(1).max(1))
    })
}

/// A run of pieces, each parsed in order.
fn parse_run<'a>(
    parser: Option<&Parser>,
    run: Vec<(&'a [u8], Parsed<'a>)>,
) -> Vec<(u64, Parsed<'a>)> {
    run.into_iter()
        .map(|(chunk, list)| match std::str::from_utf8(chunk) {
            Ok(text) => parse_piece(parser, text, list),
            // A piece with stray bytes is read with them replaced; its
            // entries then own their text.
            Err(_) => {
                let text = String::from_utf8_lossy(chunk);
                let (n, parsed) = parse_piece(parser, &text, relabel(list));
                let owned = parsed
                    .into_iter()
                    .map(|(i, r)| (i, r.map(|e| e.map(Entry::into_owned))))
                    .collect();
                (n, owned)
            }
        })
        .collect()
}

/// One piece's lines: how many, and each parsed (numbered from 0).
fn parse_piece<'a>(
    parser: Option<&Parser>,
    text: &'a str,
    mut parsed: Parsed<'a>,
) -> (u64, Parsed<'a>) {
    let mut p = parser.cloned();
    let b = text.as_bytes();
    let last = (!b.is_empty() && b.last() != Some(&b'\n')).then_some(b.len());
    // Sized for lines of 128 bytes or more (most logs' are longer): a
    // line's outcome is some 250 bytes, and growing the list by doubling
    // copied each several times.
    parsed.reserve(b.len() / 128 + 1);
    let (mut start, mut i) = (0, 0);
    for end in memchr::memchr_iter(b'\n', b).chain(last) {
        let line = &text[start..end];
        let result = match &mut p {
            Some(p) => p.parse(line),
            None if line.trim().is_empty() => Ok(None),
            None => Err(LineError::Field {
                field: "format",
                problem: "no known format reads the file's first lines".into(),
            }),
        };
        parsed.push((i, result));
        start = end + 1;
        i += 1;
    }
    (i, parsed)
}

/// A batch cut into pieces of whole lines (one piece for W3C, whose
/// `#Fields` lines change how later lines read).
fn chunks(bytes: &[u8], whole: bool) -> Vec<&[u8]> {
    if whole {
        return vec![bytes];
    }
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let target = (start + CHUNK_BYTES).min(bytes.len());
        let end = memchr::memchr(b'\n', &bytes[target..]).map_or(bytes.len(), |i| target + i + 1);
        out.push(&bytes[start..end]);
        start = end;
    }
    out
}

/// The parser's state after a batch (a W3C `#Fields` line changes it).
fn advance(parser: &mut Parser, owned: &Owned) {
    if parser.format() == Format::W3c {
        let text = String::from_utf8_lossy(&owned.bytes);
        for l in text.lines().filter(|l| l.starts_with('#')) {
            let _ = parser.parse(l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch cut into more pieces than there are threads reads, line
    /// by line and in order, as each line parsed alone: the runs given to
    /// other threads come back in their place, a piece with stray bytes
    /// included.
    #[test]
    fn pieces_parsed_on_several_threads_come_back_in_order() {
        let mut text = Vec::new();
        for i in 0..30_000 {
            text.extend_from_slice(
                format!("192.0.2.{} - - [08/Jun/2020:08:04:43 +0000] \"GET /p/{i} HTTP/1.1\" 200 {i} \"-\" \"UA\"\n", i % 250)
                    .as_bytes(),
            );
            if i == 20_000 {
                text.extend_from_slice(b"192.0.2.9 - - [08/Jun/2020:08:04:43 +0000] \"GET /\xff HTTP/1.1\" 200 1 \"-\" \"UA\"\n");
            }
        }
        let mut parser = Parser::new(Format::Combined).ok();
        let lossy = String::from_utf8_lossy(&text);
        let want: Vec<Line<'_>> = lossy
            .lines()
            .zip(7..)
            .map(|(l, n)| (n, parser.as_mut().map_or(Ok(None), |p| p.parse(l))))
            .collect();
        for threads in [1, 2, 3, 16] {
            let pieces = parse(parser.as_ref(), &text, 7, &mut Spare::new(), threads);
            assert!(pieces.len() > 4, "cut into {} pieces", pieces.len());
            let got: Vec<&Line<'_>> = pieces.iter().flatten().collect();
            assert_eq!(got.len(), want.len(), "{threads} threads");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(*g, w, "{threads} threads");
            }
        }
    }

    /// A list handed back keeps its memory for the next batch's lines,
    /// and a batch parsed into kept lists reads as one parsed afresh.
    #[test]
    fn kept_lists_keep_their_memory_and_change_nothing() {
        let mut list: Parsed<'_> = Parsed::with_capacity(1000);
        list.push((1, Ok(None)));
        let kept: Parsed<'static> = relabel(list);
        assert!(kept.is_empty() && kept.capacity() >= 1000);
        let text =
            b"192.0.2.1 - - [08/Jun/2020:08:04:43 +0000] \"GET /x HTTP/1.1\" 200 5 \"-\" \"UA\"\n\
            not a line\n"
                .repeat(4000);
        let parser = Parser::new(Format::Combined).ok();
        let fresh = parse(parser.as_ref(), &text, 1, &mut Spare::new(), 2);
        let mut spare = vec![kept, Parsed::with_capacity(5)];
        let again = parse(parser.as_ref(), &text, 1, &mut spare, 2);
        assert!(fresh.len() > 1, "cut into pieces");
        assert_eq!(fresh, again);
        assert!(
            again.iter().any(|p| p.capacity() >= 1000),
            "a kept list filled"
        );
    }
}
