//! Opening a log (a file or stdin; plain, gzip or zstd, told by the first
//! bytes) and cutting it into batches of whole lines, each line at most
//! [`MAX_LINE`] bytes: a longer line is skipped as it streams past, never
//! held, and left as an empty line in its place so line numbers stay true.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// The longest line read, in bytes.
pub const MAX_LINE: usize = 64 * 1024;

/// Bytes read from the source at a time.
const CHUNK: usize = 1 << 16;

/// A log could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {path}: {source}")]
pub struct OpenError {
    /// The path given (`-` for stdin).
    pub path: String,
    /// Why.
    #[source]
    pub source: io::Error,
}

/// Opens a log, `-` for stdin, decompressing gzip and zstd by their magic
/// bytes.
pub fn open(path: &str) -> Result<Box<dyn Read + Send>, OpenError> {
    let err = |source| OpenError {
        path: path.to_owned(),
        source,
    };
    let raw: Box<dyn Read + Send> = if path == "-" {
        Box::new(io::stdin())
    } else {
        Box::new(File::open(Path::new(path)).map_err(err)?)
    };
    let mut buffered = BufReader::with_capacity(1 << 16, raw);
    let magic = buffered.fill_buf().map_err(err)?;
    Ok(match magic {
        [0x1f, 0x8b, ..] => Box::new(flate2::read::MultiGzDecoder::new(buffered)),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Box::new(
            ruzstd::decoding::StreamingDecoder::new(buffered)
                .map_err(|e| err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())))?,
        ),
        _ => Box::new(buffered),
    })
}

/// Whole lines of a log, a batch at a time.
pub struct Lines<R> {
    inner: R,
    carry: Vec<u8>,
    next_line: u64,
    /// Skipping the rest of a line longer than [`MAX_LINE`].
    skipping: bool,
    eof: bool,
    /// Lines ended in the batch being read (its carried start has none).
    ended: u64,
    /// A batch's buffer handed back, for the next batch to fill.
    spare: Option<Vec<u8>>,
}

/// Some whole lines of a log.
#[derive(Debug, Default)]
pub struct Batch {
    /// The lines, each ending in `\n` (the last may not).
    pub text: Vec<u8>,
    /// The number (1-based) of the first line.
    pub first_line: u64,
    /// Lines longer than [`MAX_LINE`], by number: each is an empty line in
    /// `text`.
    pub too_long: Vec<u64>,
}

impl<R: Read> Lines<R> {
    /// Lines of `inner`.
    pub fn new(inner: R) -> Lines<R> {
        Lines {
            inner,
            carry: Vec::new(),
            next_line: 1,
            skipping: false,
            eof: false,
            ended: 0,
            spare: None,
        }
    }

    /// Hands back a batch's text once it is used, so the next batch fills
    /// the same memory rather than newly allocated pages.
    pub fn give_back(&mut self, text: Vec<u8>) {
        self.spare = Some(text);
    }

    /// The next batch of about `size` bytes of whole lines; `None` at the
    /// end.
    ///
    /// The source reads straight into the batch's buffer, and lines are
    /// checked where they landed: a buffer handed back keeps its length,
    /// so its bytes are overwritten rather than zeroed again, and only a
    /// line too long moves what follows it (copying each read into the
    /// batch was some 4 % of an audit's instructions).
    pub fn next_batch(&mut self, size: usize) -> io::Result<Option<Batch>> {
        let size = size.max(MAX_LINE + 1);
        let mut text = self.spare.take().unwrap_or_default();
        // Room for the whole batch at once: growing it by doubling copied
        // it some twenty times.
        text.reserve((size + CHUNK).saturating_sub(text.len()));
        let mut filled = self.carry.len();
        if text.len() < filled {
            text.resize(filled, 0);
        }
        text[..filled].copy_from_slice(&self.carry);
        self.carry.clear();
        let mut too_long = Vec::new();
        let first_line = self.next_line;
        self.ended = 0;
        while filled < size && !self.eof {
            if text.len() < filled + CHUNK {
                text.resize(filled + CHUNK, 0);
            }
            let n = match self.inner.read(&mut text[filled..filled + CHUNK]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            filled = self.take(&mut text, filled, filled + n, &mut too_long);
        }
        if !self.eof {
            // Carry the unfinished last line into the next batch.
            let cut = memchr::memrchr(b'\n', &text[..filled]).map_or(0, |i| i + 1);
            self.carry.extend_from_slice(&text[cut..filled]);
            filled = cut;
        }
        text.truncate(filled);
        self.next_line += self.ended;
        if self.eof && text.last().is_some_and(|&b| b != b'\n') {
            self.next_line += 1;
        }
        let batch = Batch {
            text,
            first_line,
            too_long,
        };
        Ok((!batch.text.is_empty() || !batch.too_long.is_empty()).then_some(batch))
    }

    /// Keeps the bytes `text[kept..end]` just read after the kept text
    /// `text[..kept]`, each line at most [`MAX_LINE`] bytes (a longer one
    /// becomes an empty line), and says where the kept text now ends.
    /// What is kept never passes what is read (`kept <= read`), so moving
    /// it overwrites only bytes already looked at.
    fn take(
        &mut self,
        text: &mut [u8],
        mut kept: usize,
        end: usize,
        too_long: &mut Vec<u64>,
    ) -> usize {
        let mut read = kept;
        while read < end {
            if self.skipping {
                match memchr::memchr(b'\n', &text[read..end]) {
                    Some(i) => {
                        self.skipping = false;
                        text[kept] = b'\n';
                        kept += 1;
                        self.ended += 1;
                        read += i + 1;
                    }
                    None => return kept,
                }
                continue;
            }
            let line_start = memchr::memrchr(b'\n', &text[..kept]).map_or(0, |i| i + 1);
            // Whole lines that fit are kept together, moved (if at all) in
            // one copy.
            let (fits, lines) = fitting(kept - line_start, &text[read..end]);
            text.copy_within(read..read + fits, kept);
            self.ended += lines;
            let line_start = if fits > 0 { kept + fits } else { line_start };
            kept += fits;
            read += fits;
            if read == end {
                return kept;
            }
            let open = kept - line_start;
            let piece_end = memchr::memchr(b'\n', &text[read..end]).map_or(end, |i| read + i + 1);
            let ends = text[piece_end - 1] == b'\n';
            if open + (piece_end - read) > MAX_LINE + usize::from(ends) {
                too_long.push(self.next_line + self.ended);
                kept = line_start;
                if ends {
                    text[kept] = b'\n';
                    kept += 1;
                } else {
                    self.skipping = true;
                }
            } else {
                text.copy_within(read..piece_end, kept);
                kept += piece_end - read;
            }
            self.ended += u64::from(ends);
            read = piece_end;
        }
        kept
    }
}

/// How many of `bytes`' first bytes are whole lines of at most
/// [`MAX_LINE`] bytes (the first continuing a line `open` bytes long),
/// and how many lines that is.
fn fitting(mut open: usize, bytes: &[u8]) -> (usize, u64) {
    let (mut fits, mut lines) = (0, 0);
    for i in memchr::memchr_iter(b'\n', bytes) {
        if open + (i - fits) > MAX_LINE {
            break;
        }
        (fits, open, lines) = (i + 1, 0, lines + 1);
    }
    (fits, lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], size: usize) -> (Vec<u8>, Vec<u64>) {
        let mut lines = Lines::new(input);
        let (mut text, mut long) = (Vec::new(), Vec::new());
        while let Some(b) = lines.next_batch(size).expect("reads") {
            assert_eq!(
                b.first_line,
                1 + memchr::memchr_iter(b'\n', &text).count() as u64
            );
            text.extend(b.text);
            long.extend(b.too_long);
        }
        (text, long)
    }

    /// A source that hands out at most `step` bytes a read.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Batches hold every line that fits as it was, and an empty line
        /// numbered in `too_long` for each that does not, however the
        /// source's reads and the batches fall, each batch in the buffer
        /// the one before it handed back.
        #[test]
        fn batches_keep_every_line_that_fits(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![0..40usize, MAX_LINE - 2..MAX_LINE + 3],
                0..12,
            ),
            ends_open in proptest::bool::ANY,
            step in proptest::prop_oneof![1..300usize, 60_000..140_000usize],
            size in 1..200_000usize,
        ) {
            let mut input = Vec::new();
            let (mut text, mut long) = (Vec::new(), Vec::new());
            for (n, len) in lengths.iter().enumerate() {
                let line = vec![b'a' + (n % 26) as u8; *len];
                input.extend(&line);
                let open = ends_open && n + 1 == lengths.len();
                if !open {
                    input.push(b'\n');
                }
                if *len > MAX_LINE {
                    long.push(n as u64 + 1);
                } else {
                    text.extend(&line);
                }
                if !open {
                    text.push(b'\n');
                }
            }
            let mut lines = Lines::new(Trickle { bytes: &input, step });
            let (mut got, mut got_long) = (Vec::new(), Vec::new());
            while let Some(b) = lines.next_batch(size).expect("reads") {
                proptest::prop_assert_eq!(
                    b.first_line,
                    1 + memchr::memchr_iter(b'\n', &got).count() as u64
                );
                got.extend_from_slice(&b.text);
                got_long.extend(b.too_long);
                // Its buffer filled again, over the old lines' bytes.
                lines.give_back(b.text);
            }
            proptest::prop_assert_eq!(got, text);
            proptest::prop_assert_eq!(got_long, long);
        }
    }

    #[test]
    fn long_lines_are_left_out() {
        let mut input = b"a\n".to_vec();
        input.extend(vec![b'x'; MAX_LINE * 3]);
        input.extend(b"\nb\n");
        input.extend(vec![b'y'; MAX_LINE + 1]);
        let (text, long) = all(&input, 1000);
        assert_eq!(text, b"a\n\nb\n");
        assert_eq!(long, vec![2, 4]);
        let (text, long) = all(b"a\nb", 1000);
        assert_eq!((text.as_slice(), long.len()), (&b"a\nb"[..], 0));
    }
}
