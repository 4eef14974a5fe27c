//! Evidence records archived in batches: one `metadata` record holds up to
//! [`MAX_RECORDS`] of them, one a line, with one `WARC-Concurrent-To` per
//! line naming, in the same order, the `request` record the line is the
//! evidence of.
//!
//! Why batches: a record alone is a gzip member of its own (warcio reads
//! one record per member), and its hashes and ids leave about 580 bytes of
//! it after compression, more than the page's request record. Batched, the
//! records share one member and one dictionary: about 120 bytes each at 64
//! to a batch, and the compressor's fixed cost (clearing its tables) is
//! paid once per batch instead of once per request.
//!
//! The WARC copy lags: a batch is written when it is full, when its first
//! record is a minute old (checked as records arrive), and when the writer
//! syncs or is dropped. A kill loses at most the batch in memory; the
//! crawl's `evidence/records.jsonl`, written before each request leaves,
//! keeps every record.

use mannerly_time::UnixMillis;

/// Records in one batch, at most.
pub(crate) const MAX_RECORDS: usize = 64;

/// How long a batch's first record waits, at most, while records arrive.
const MAX_AGE_MS: u64 = 60_000;

/// Evidence records waiting for their `metadata` record.
#[derive(Default)]
pub(crate) struct Batch {
    /// The records, each ending with a newline.
    lines: Vec<u8>,
    /// The `WARC-Record-ID` of each record's `request` record, in order.
    requests: Vec<String>,
    /// When the first record's request was sent.
    first: Option<UnixMillis>,
}

/// A batch to archive: its records and their request records.
pub(crate) struct Due<'a> {
    /// The records, one a line.
    pub(crate) lines: &'a [u8],
    /// The `request` record of each line, in order.
    pub(crate) requests: &'a [String],
    /// When the first record's request was sent.
    pub(crate) date: UnixMillis,
}

impl Batch {
    /// Adds the evidence `line` of the request archived as `request` (sent
    /// at `date`).
    pub(crate) fn push(&mut self, line: &[u8], request: String, date: UnixMillis) {
        if self.lines.capacity() == 0 {
            self.lines.reserve(MAX_RECORDS * (line.len() + 64));
        }
        self.lines.extend_from_slice(line);
        if line.last() != Some(&b'\n') {
            self.lines.push(b'\n');
        }
        self.requests.push(request);
        self.first.get_or_insert(date);
    }

    /// Whether the batch is due at `now`: full, or its first record a
    /// minute old.
    pub(crate) fn is_due(&self, now: UnixMillis) -> bool {
        let old = self
            .first
            .is_some_and(|t| now.0.saturating_sub(t.0) >= MAX_AGE_MS);
        self.requests.len() >= MAX_RECORDS || old
    }

    /// Whatever the batch holds, to archive before [`Batch::clear`].
    pub(crate) fn due(&self) -> Option<Due<'_>> {
        Some(Due {
            lines: &self.lines,
            requests: &self.requests,
            date: self.first?,
        })
    }

    /// Empties the batch, keeping its buffer for the next.
    pub(crate) fn clear(&mut self) {
        self.lines.clear();
        self.requests.clear();
        self.first = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_due_when_full_or_a_minute_old_and_keeps_order() {
        let mut b = Batch::default();
        assert!(b.due().is_none(), "nothing to take");
        let t0 = UnixMillis(1_795_168_800_000);
        for i in 0..MAX_RECORDS - 1 {
            b.push(format!("{{\"seq\":{i}}}").as_bytes(), format!("<r{i}>"), t0);
            assert!(!b.is_due(t0));
        }
        assert!(!b.is_due(UnixMillis(t0.0 + MAX_AGE_MS - 1)));
        b.push(b"{\"seq\":63}\n", "<r63>".into(), t0);
        assert!(b.is_due(t0), "full");
        let full = b.due().expect("records");
        assert_eq!(full.date, t0);
        assert_eq!(full.requests.len(), MAX_RECORDS);
        let lines: Vec<&[u8]> = full.lines.split(|&c| c == b'\n').collect();
        assert_eq!(lines.len(), MAX_RECORDS + 1, "one a line, each ended");
        for (i, (line, request)) in lines.iter().zip(full.requests).enumerate() {
            assert_eq!(*line, format!("{{\"seq\":{i}}}").as_bytes());
            assert_eq!(request, &format!("<r{i}>"));
        }
        b.clear();
        assert!(b.due().is_none(), "cleared");
        b.push(b"{}", "<r>".into(), t0);
        assert!(b.is_due(UnixMillis(t0.0 + MAX_AGE_MS)), "old");
    }
}
