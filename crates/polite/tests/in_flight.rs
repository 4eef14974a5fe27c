//! A page in flight keeps its entry queued on disk until it settles: a
//! kill then leaves it queued with nothing to undo. These check what that
//! asks of the rest: a window refilled while a host has pages in flight
//! leaves them out (each page is released once), the queued URLs listed
//! are the ones not in flight, and a reopen (from the summary a close
//! wrote, or from the store alone) has every page in flight queued again.

use std::path::Path;

use mannerly_polite::controller::{Config, Outcome, Politeness, UnixMillis};
use mannerly_polite::frontier::{block_on, Frontier as _};
use mannerly_polite::frontier::{FrontierConfig, LocalFrontier, Next, Released};

/// Four requests a host at once, no delay, a one-URL window.
fn open(dir: &Path) -> LocalFrontier {
    let politeness = Config {
        max_in_flight: 4,
        min_delay: 0,
        ..Config::default()
    };
    let config = FrontierConfig {
        robots_gate: false,
        window: 1,
        ..FrontierConfig::on_disk()
    };
    LocalFrontier::open(dir, Politeness::new(politeness), config).expect("open")
}

const T: UnixMillis = UnixMillis::EPOCH;

fn release(f: &mut LocalFrontier) -> Option<Released> {
    release_at(f, T)
}

fn release_at(f: &mut LocalFrontier, now: UnixMillis) -> Option<Released> {
    match block_on(f.next(now)).expect("next") {
        Next::Fetch(r) => Some(r),
        _ => None,
    }
}

/// `w` in flight (priority 1), then two URLs of priority 3 and one more
/// of priority 1: the later ones sort before `w` and after it, so the
/// window's refills read across `w`'s entry.
fn across_a_page_in_flight(f: &mut LocalFrontier) -> Vec<Released> {
    block_on(f.enqueue("https://a.test/w", 1, T)).expect("enqueue");
    let mut out = vec![release(f).expect("w")];
    for (url, priority) in [("x1", 3), ("x2", 3), ("y", 1)] {
        block_on(f.enqueue(&format!("https://a.test/{url}"), priority, T)).expect("enqueue");
    }
    out.extend(std::iter::from_fn(|| release(f)));
    out
}

fn urls(released: &[Released]) -> Vec<&str> {
    released.iter().map(|r| r.url.as_str()).collect()
}

#[test]
fn a_refilled_window_leaves_out_the_pages_in_flight() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut f = open(dir.path());
    let out = across_a_page_in_flight(&mut f);
    assert_eq!(
        urls(&out),
        [
            "https://a.test/w",
            "https://a.test/x1",
            "https://a.test/x2",
            "https://a.test/y"
        ]
    );
    let ok = Outcome::Status {
        status: 200,
        latency: 5,
        retry_after: None,
    };
    for r in &out {
        block_on(f.complete(r, &ok, T)).expect("complete");
    }
    assert_eq!(block_on(f.next(T)).expect("next"), Next::Empty);
}

#[test]
fn the_queued_urls_listed_are_the_ones_not_in_flight() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut f = open(dir.path());
    for url in ["w", "x", "y"] {
        block_on(f.enqueue(&format!("https://a.test/{url}"), 1, T)).expect("enqueue");
    }
    let first = release(&mut f).expect("w");
    assert_eq!(first.url, "https://a.test/w");
    let listed: Vec<String> = f
        .queued_urls()
        .expect("list")
        .into_iter()
        .map(|(_, u)| u)
        .collect();
    assert_eq!(listed, ["https://a.test/x", "https://a.test/y"]);
    assert_eq!(f.stats().queued, 2);
}

/// Every URL released from `f` at `now`, none completed.
fn all_released(mut f: LocalFrontier, now: UnixMillis) -> Vec<String> {
    std::iter::from_fn(|| release_at(&mut f, now))
        .map(|r| r.url)
        .collect()
}

#[test]
fn pages_in_flight_at_a_close_are_queued_after_it_with_or_without_the_summary() {
    for summary in [true, false] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut f = open(dir.path());
        let flying = across_a_page_in_flight(&mut f);
        assert_eq!(flying.len(), 4);
        block_on(f.enqueue("https://a.test/z", 0, T)).expect("enqueue");
        drop(f);
        if !summary {
            std::fs::remove_file(dir.path().join("summary.bin")).expect("the close wrote one");
        }
        let mut g = open(dir.path());
        assert_eq!(g.opened_from_summary(), summary);
        let stats = g.stats();
        assert_eq!((stats.queued, stats.reissued), (5, 4), "{stats:?}");
        // The host waits out the requests it had in flight (30 s) first.
        assert!(release_at(&mut g, T).is_none());
        let mut again = all_released(g, T.add_millis(30_000));
        again.sort();
        assert_eq!(
            again,
            ["w", "x1", "x2", "y"]
                .iter()
                .map(|u| format!("https://a.test/{u}"))
                .collect::<Vec<_>>(),
            "summary: {summary} (the fifth waits for a slot)"
        );
    }
}
