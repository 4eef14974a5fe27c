//! Hostile input stays bounded: a gigabyte-long line streams past without
//! being held, a gzip bomb is read as it inflates, binary garbage is
//! counted as unreadable lines and never panics; gzip and zstd logs are
//! read by their magic bytes.

use std::io::{Read, Write};

use mannerly_logs::{detect, open, Format, Lines, Parser, MAX_LINE};
use proptest::prelude::*;

/// `len` bytes of `x`, then a newline and a readable line.
struct LongLine {
    left: u64,
    tail: &'static [u8],
}

impl Read for LongLine {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left > 0 {
            let n = (buf.len() as u64).min(self.left) as usize;
            buf[..n].fill(b'x');
            self.left -= n as u64;
            return Ok(n);
        }
        let n = self.tail.len().min(buf.len());
        buf[..n].copy_from_slice(&self.tail[..n]);
        self.tail = &self.tail[n..];
        Ok(n)
    }
}

const LINE: &str =
    r#"192.0.2.1 - - [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "Bot/1""#;

#[test]
fn a_gigabyte_line_streams_past() {
    let tail = format!("\n{LINE}\n").leak().as_bytes();
    let mut lines = Lines::new(LongLine {
        left: 1 << 30,
        tail,
    });
    let (mut biggest, mut too_long, mut text) = (0, Vec::new(), Vec::new());
    while let Some(b) = lines.next_batch(1 << 20).expect("reads") {
        biggest = biggest.max(b.text.capacity());
        too_long.extend(b.too_long);
        text.extend(b.text);
    }
    assert_eq!(too_long, vec![1]);
    assert!(biggest < 8 << 20, "a batch held {biggest} bytes");
    let text = String::from_utf8(text).expect("utf-8");
    let mut p = Parser::new(Format::Combined).expect("parser");
    let read: Vec<_> = text
        .lines()
        .filter_map(|l| p.parse(l).ok().flatten())
        .collect();
    assert_eq!(read.len(), 1);
    assert!(mannerly_testsupport::peak_rss_kb() / 1024 < 256, "peak RSS");
}

#[test]
fn compressed_logs_are_read_by_their_magic_bytes() {
    let dir = tempfile::tempdir().expect("tmp");
    let plain = format!("{LINE}\n{LINE}\n");
    let gz = dir.path().join("a.log.1");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(plain.as_bytes()).expect("gz");
    std::fs::write(&gz, e.finish().expect("gz")).expect("write");
    let zst = dir.path().join("b.log.2");
    let z = ruzstd::encoding::compress_to_vec(
        plain.as_bytes(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    std::fs::write(&zst, z).expect("write");
    for path in [gz, zst] {
        let mut s = String::new();
        open(path.to_str().expect("utf-8"))
            .expect("opens")
            .read_to_string(&mut s)
            .expect("inflates");
        assert_eq!(s, plain);
    }
}

#[test]
fn a_gzip_bomb_is_read_as_it_inflates() {
    let dir = tempfile::tempdir().expect("tmp");
    let bomb = dir.path().join("bomb.log.gz");
    // 256 MiB of zeros, no newline: one line far over the cap.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..256 {
        e.write_all(&zeros).expect("gz");
    }
    e.write_all(format!("\n{LINE}\n").as_bytes()).expect("gz");
    let packed = e.finish().expect("gz");
    assert!(packed.len() < 1 << 20);
    std::fs::write(&bomb, packed).expect("write");
    let mut lines = Lines::new(open(bomb.to_str().expect("utf-8")).expect("opens"));
    let (mut batches, mut too_long, mut biggest) = (0, 0, 0);
    while let Some(b) = lines.next_batch(1 << 20).expect("reads") {
        batches += 1;
        too_long += b.too_long.len();
        biggest = biggest.max(b.text.len());
    }
    assert_eq!(too_long, 1);
    assert!(biggest <= (1 << 20) + MAX_LINE, "{biggest}");
    assert!(batches >= 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Bytes of any kind: every parser answers each line, never panics.
    #[test]
    fn binary_garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let text = String::from_utf8_lossy(&data);
        let lines: Vec<&str> = text.lines().collect();
        let _ = detect(&lines);
        for f in Format::names().filter_map(|n| n.parse::<Format>().ok()) {
            if let Ok(mut p) = Parser::new(f) {
                for l in &lines {
                    let _ = p.parse(l);
                }
            }
        }
    }
}
