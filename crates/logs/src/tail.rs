//! Following a log as it is written ([`Tail`]): read to its end, then as
//! lines are appended, across rotation (the file renamed and a new one
//! made, or copied and truncated). Memory is the partial line and a
//! chunk: a long backlog is read [`CHUNK`] bytes at a time.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The most read from one file in one call of [`Tail::new_lines`].
pub const CHUNK: u64 = 8 << 20;
/// The first bytes kept to tell a file truncated and written again.
const HEAD: usize = 256;

/// One followed file.
#[derive(Debug)]
pub struct Tail {
    path: std::path::PathBuf,
    file: File,
    inode: u64,
    pos: u64,
    /// The start of a line whose end has not been written yet.
    partial: Vec<u8>,
    /// The file's first bytes as read: a file truncated and written again
    /// to the same length (copy-truncate) no longer starts with them.
    head: Vec<u8>,
}

impl Tail {
    /// Follows `path` from its start.
    pub fn open(path: &Path) -> std::io::Result<Tail> {
        let file = File::open(path)?;
        let inode = file.metadata().map(|m| m.ino()).unwrap_or(0);
        Ok(Tail {
            path: path.to_path_buf(),
            file,
            inode,
            pos: 0,
            partial: Vec::new(),
            head: Vec::new(),
        })
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes read from the file now followed.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// The complete lines written since the last call, across a rotation
    /// (at most [`CHUNK`] bytes of a backlog a call; a line over
    /// [`MAX_LINE`](crate::MAX_LINE) is dropped whole).
    pub fn new_lines(&mut self) -> Vec<String> {
        // Copied and truncated: from its start again. Checked before
        // reading on, which would otherwise take the end of the new text
        // past the old length for a line of its own.
        let truncated = self.file.metadata().is_ok_and(|m| m.len() < self.pos);
        if truncated || !self.starts_as_before() {
            let _ = self.file.seek(SeekFrom::Start(0));
            self.pos = 0;
            self.partial.clear();
            self.head.clear();
        }
        let mut lines = self.read_on();
        // Renamed away and made anew: the old file's rest, then the new.
        if let Ok(m) = std::fs::metadata(&self.path) {
            if m.ino() != self.inode {
                if let Ok(f) = File::open(&self.path) {
                    self.file = f;
                    self.inode = m.ino();
                    self.pos = 0;
                    self.partial.clear();
                    self.head.clear();
                    lines.extend(self.read_on());
                }
            }
        }
        lines
    }

    /// Whether the file still begins with the bytes first read from it.
    fn starts_as_before(&self) -> bool {
        use std::os::unix::fs::FileExt;
        if self.head.is_empty() {
            return true;
        }
        let mut now = vec![0; self.head.len()];
        match self.file.read_at(&mut now, 0) {
            Ok(n) => now[..n] == self.head[..n.min(self.head.len())] && n == self.head.len(),
            Err(_) => true,
        }
    }

    fn read_on(&mut self) -> Vec<String> {
        let mut buf = Vec::new();
        // A long backlog is read a chunk a poll, never whole.
        let _ = (&mut self.file).take(CHUNK).read_to_end(&mut buf);
        if self.head.len() < HEAD && self.pos < HEAD as u64 {
            let take = (HEAD - self.head.len()).min(buf.len());
            self.head.extend_from_slice(&buf[..take]);
        }
        self.pos += buf.len() as u64;
        self.partial.extend_from_slice(&buf);
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else {
            // A line past the cap is dropped whole, never held.
            if self.partial.len() > crate::MAX_LINE {
                self.partial.clear();
            }
            return Vec::new();
        };
        let rest = self.partial.split_off(end + 1);
        let done = std::mem::replace(&mut self.partial, rest);
        String::from_utf8_lossy(&done)
            .lines()
            .filter(|l| l.len() <= crate::MAX_LINE)
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Tail;
    use std::io::Write;

    fn append(path: &std::path::Path, text: &str) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open");
        f.write_all(text.as_bytes()).expect("write");
    }

    #[test]
    fn lines_are_read_across_a_rename_and_a_copy_truncate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("access.log");
        append(&log, "one\ntwo\nthr");
        let mut t = Tail::open(&log).expect("opens");
        assert_eq!(t.new_lines(), ["one", "two"]);
        append(&log, "ee\n");
        assert_eq!(t.new_lines(), ["three"]);
        // Renamed away, a line added to the old file, and a new one made.
        std::fs::rename(&log, dir.path().join("access.log.1")).expect("rename");
        append(&dir.path().join("access.log.1"), "four\n");
        append(&log, "five\n");
        assert_eq!(t.new_lines(), ["four", "five"]);
        // Copied and truncated, then written again.
        std::fs::write(&log, "six\n").expect("truncate");
        assert_eq!(t.new_lines(), ["six"]);
        assert_eq!(t.new_lines(), Vec::<String>::new());
    }
}
