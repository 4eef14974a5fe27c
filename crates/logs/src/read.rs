//! Opening a log (a file or stdin; plain, gzip or zstd, told by the first
//! bytes) and cutting it into batches of whole lines, each line at most
//! [`MAX_LINE`] bytes: a longer line is skipped as it streams past, never
//! held, and left as an empty line in its place so line numbers stay true.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// The longest line read, in bytes.
pub const MAX_LINE: usize = 64 * 1024;

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
        }
    }

    /// The next batch of about `size` bytes of whole lines; `None` at the
    /// end.
    pub fn next_batch(&mut self, size: usize) -> io::Result<Option<Batch>> {
        let size = size.max(MAX_LINE + 1);
        let mut batch = Batch {
            text: std::mem::take(&mut self.carry),
            first_line: self.next_line,
            too_long: Vec::new(),
        };
        let mut chunk = vec![0u8; 1 << 16];
        while batch.text.len() < size && !self.eof {
            let n = match self.inner.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            self.take(&chunk[..n], &mut batch);
        }
        if !self.eof {
            // Carry the unfinished last line into the next batch.
            let cut = memchr::memrchr(b'\n', &batch.text).map_or(0, |i| i + 1);
            self.carry = batch.text.split_off(cut);
        }
        self.next_line += memchr::memchr_iter(b'\n', &batch.text).count() as u64;
        if self.eof && batch.text.last().is_some_and(|&b| b != b'\n') {
            self.next_line += 1;
        }
        Ok((!batch.text.is_empty() || !batch.too_long.is_empty()).then_some(batch))
    }

    /// Appends `bytes`, dropping what is past [`MAX_LINE`] in any line.
    fn take(&mut self, mut bytes: &[u8], batch: &mut Batch) {
        while !bytes.is_empty() {
            if self.skipping {
                match memchr::memchr(b'\n', bytes) {
                    Some(i) => {
                        self.skipping = false;
                        batch.text.push(b'\n');
                        bytes = &bytes[i + 1..];
                    }
                    None => return,
                }
                continue;
            }
            let line_start = memchr::memrchr(b'\n', &batch.text).map_or(0, |i| i + 1);
            let open = batch.text.len() - line_start;
            let (piece, rest) = match memchr::memchr(b'\n', bytes) {
                Some(i) => bytes.split_at(i + 1),
                None => (bytes, &[][..]),
            };
            if open + piece.len() > MAX_LINE + usize::from(piece.last() == Some(&b'\n')) {
                let number = self.next_line
                    + memchr::memchr_iter(b'\n', &batch.text[..line_start]).count() as u64;
                batch.too_long.push(number);
                batch.text.truncate(line_start);
                if piece.last() == Some(&b'\n') {
                    batch.text.push(b'\n');
                } else {
                    self.skipping = true;
                }
            } else {
                batch.text.extend_from_slice(piece);
            }
            bytes = rest;
        }
    }
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
