//! The reopen summary: used after a clean close, ignored once the store has
//! moved on (a later operation), when damaged, or when removed; and a
//! frontier reopened from it releases exactly what a rebuilt one does.

use std::path::Path;

use mannerly_polite::controller::{Config, Outcome, Politeness, UnixMillis};
use mannerly_polite::frontier::block_on;
use mannerly_polite::frontier::Frontier as _;
use mannerly_polite::frontier::{Admission, FrontierConfig, LocalFrontier, Next};

fn config() -> FrontierConfig {
    FrontierConfig {
        robots_gate: false,
        window: 2,
        ..FrontierConfig::on_disk()
    }
}

fn open(dir: &Path) -> LocalFrontier {
    LocalFrontier::open(dir, Politeness::new(Config::default()), config()).expect("open")
}

fn fill(dir: &Path) {
    let mut f = open(dir);
    for i in 0..300u64 {
        let url = format!("https://h{}.test/p{i}", i % 7);
        assert_eq!(
            block_on(f.enqueue(&url, (i % 3) as u8, UnixMillis::EPOCH)).expect("enqueue"),
            Admission::Queued
        );
    }
    block_on(f.sync()).expect("sync");
}

/// Every URL in release order, and a duplicate check against the seen-set.
fn drain(mut f: LocalFrontier) -> Vec<String> {
    assert_eq!(
        block_on(f.enqueue("https://h1.test/p1", 0, UnixMillis::EPOCH)).expect("enqueue"),
        Admission::Duplicate,
        "the seen-set survived"
    );
    drain_all(f)
}

#[test]
fn a_clean_close_reopens_from_the_summary_and_releases_the_same() {
    let a = tempfile::tempdir().expect("dir");
    let b = tempfile::tempdir().expect("dir");
    fill(a.path());
    fill(b.path());
    let fast = open(a.path());
    assert!(fast.opened_from_summary());
    // The same store without its summary: rebuilt by reading everything.
    std::fs::remove_file(b.path().join("summary.bin")).expect("remove");
    let slow = open(b.path());
    assert!(!slow.opened_from_summary());
    assert_eq!(fast.stats().queued, 300);
    assert_eq!(slow.stats().queued, 300);
    let (x, y) = (drain(fast), drain(slow));
    assert_eq!(x.len(), 300);
    assert_eq!(x, y, "the same URLs in the same order");
}

#[test]
fn a_summary_older_than_the_store_is_not_trusted() {
    let dir = tempfile::tempdir().expect("dir");
    fill(dir.path());
    let saved = std::fs::read(dir.path().join("summary.bin")).expect("summary");
    {
        let mut f = open(dir.path());
        block_on(f.enqueue("https://h9.test/new", 0, UnixMillis::EPOCH)).expect("enqueue");
        block_on(f.sync()).expect("sync");
    }
    // Put the old summary back, as if the process died before writing a
    // new one: the store's generation moved on, so it is ignored.
    std::fs::write(dir.path().join("summary.bin"), &saved).expect("write");
    let f = open(dir.path());
    assert!(!f.opened_from_summary());
    assert_eq!(f.stats().queued, 301);
    let urls = drain(f);
    assert!(urls.iter().any(|u| u == "https://h9.test/new"));
}

#[test]
fn a_damaged_summary_is_rebuilt_not_trusted() {
    let dir = tempfile::tempdir().expect("dir");
    fill(dir.path());
    let path = dir.path().join("summary.bin");
    let mut bytes = std::fs::read(&path).expect("summary");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&path, &bytes).expect("write");
    let f = open(dir.path());
    assert!(!f.opened_from_summary());
    assert_eq!(drain(f).len(), 300);
}

/// The active fjall journal in `dir` (the highest-numbered `N.jnl`) and
/// the bytes it holds at most (a new one is preallocated sparse, a reopened
/// one truncated to its contents). This peeks at fjall's layout on purpose:
/// what is measured is how much the next open must replay.
fn journal(dir: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let mut best = (0, 0);
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(n) = name.strip_suffix(".jnl").and_then(|n| n.parse().ok()) {
            let m = e.metadata().expect("metadata");
            if n >= best.0 {
                best = (n, m.len().min(m.blocks() * 512));
            }
        }
    }
    best
}

#[test]
fn a_clean_close_leaves_a_short_journal_when_it_was_long() {
    let rotated = tempfile::tempdir().expect("dir");
    let kept = tempfile::tempdir().expect("dir");
    let long = "x".repeat(400);
    for (dir, above) in [(rotated.path(), 256 << 10), (kept.path(), u64::MAX)] {
        let mut f = LocalFrontier::open(
            dir,
            Politeness::new(Config::default()),
            FrontierConfig {
                rotate_journal_above: above,
                ..config()
            },
        )
        .expect("open");
        for i in 0..3_000u64 {
            let url = format!("https://h{}.test/{long}/{i}", i % 11);
            block_on(f.enqueue(&url, (i % 3) as u8, UnixMillis::EPOCH)).expect("enqueue");
        }
        // A URL in flight at the close comes back on reopen.
        assert!(matches!(
            block_on(f.next(UnixMillis::EPOCH)).expect("next"),
            Next::Fetch(_)
        ));
    }
    let (before, long_bytes) = journal(kept.path());
    assert!(
        long_bytes > 1 << 20,
        "the fill wrote a long journal: {long_bytes}"
    );
    let (after, short_bytes) = journal(rotated.path());
    assert!(
        after > before,
        "a new journal was started: {before} → {after}"
    );
    assert!(
        short_bytes <= 16 << 10,
        "the new journal is short: {short_bytes} bytes"
    );
    assert_eq!(journal(kept.path()).0, before);
    let x = open(rotated.path());
    let y = open(kept.path());
    assert!(x.opened_from_summary() && y.opened_from_summary());
    assert_eq!(x.stats().queued, 3_000);
    assert_eq!(x.stats().reissued, 1);
    let (x, y) = (drain_all(x), drain_all(y));
    assert_eq!(x.len(), 3_000);
    assert_eq!(x, y, "the same URLs in the same order");
}

/// Every URL in release order.
fn drain_all(mut f: LocalFrontier) -> Vec<String> {
    let ok = Outcome::Status {
        status: 200,
        latency: 10,
        retry_after: None,
    };
    let (mut now, mut out) = (UnixMillis::EPOCH, Vec::new());
    loop {
        match block_on(f.next(now)).expect("next") {
            Next::Fetch(r) => {
                out.push(r.url.clone());
                block_on(f.complete(&r, &ok, now)).expect("complete");
            }
            Next::Wait { until } => now = until,
            Next::Empty => break,
            Next::Busy => panic!("busy with nothing in flight"),
        }
    }
    out
}
