//! The reopen summary: used after a clean close, ignored once the store has
//! moved on (a later operation), when damaged, or when removed; and a
//! frontier reopened from it releases exactly what a rebuilt one does.

use std::path::Path;

use mannerly_polite::controller::{Config, Outcome, Politeness, UnixMillis};
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
            f.enqueue(&url, (i % 3) as u8, UnixMillis::EPOCH)
                .expect("enqueue"),
            Admission::Queued
        );
    }
    f.sync().expect("sync");
}

/// Every URL in release order, and a duplicate check against the seen-set.
fn drain(mut f: LocalFrontier) -> Vec<String> {
    assert_eq!(
        f.enqueue("https://h1.test/p1", 0, UnixMillis::EPOCH)
            .expect("enqueue"),
        Admission::Duplicate,
        "the seen-set survived"
    );
    let ok = Outcome::Status {
        status: 200,
        latency: 10,
        retry_after: None,
    };
    let (mut now, mut out) = (UnixMillis::EPOCH, Vec::new());
    loop {
        match f.next(now).expect("next") {
            Next::Fetch(r) => {
                out.push(r.url.clone());
                f.complete(&r, &ok, now).expect("complete");
            }
            Next::Wait { until } => now = until,
            Next::Empty => break,
            Next::Busy => panic!("busy with nothing in flight"),
        }
    }
    out
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
        f.enqueue("https://h9.test/new", 0, UnixMillis::EPOCH)
            .expect("enqueue");
        f.sync().expect("sync");
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
