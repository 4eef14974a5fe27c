//! A request that ends well on a host at its base delay leaves its host's
//! state in the store as the release wrote it (the request still in
//! flight): one write a request instead of two. These check what that
//! must never cost:
//! - after a crash, the host is held at least as long as its true state
//!   would hold it (longer: as if the request were still in flight), and
//!   the releases counted re-issued are only the ones really in flight;
//! - an answer that changes the pacing (a Retry-After) is in the store
//!   at once, so a crash cannot shorten it;
//! - after a clean close, every state is exactly what memory held.
//!
//! The crash is a child process that aborts (no destructor runs, as with
//! kill -9) after committing, as the crawler's loop commits every turn.

use std::path::Path;
use std::process::Command;

use mannerly_polite::controller::{Config, Outcome, Politeness, UnixMillis};
use mannerly_polite::frontier::{block_on, Frontier as _, FrontierConfig, LocalFrontier, Next};

const CHILD_ENV: &str = "MANNERLY_PACED_WRITES_CHILD";

/// The start of the test's clock.
const T: UnixMillis = UnixMillis(1_000_000_000);
/// The hosts' delay (the default configuration's).
const DELAY: u64 = 1_000;
/// How long a request in flight at a crash holds its host (the default).
const BOUND: u64 = 30_000;
/// The Retry-After `b.test` answers with, in seconds.
const RETRY_AFTER: u64 = 120;

fn open(dir: &Path) -> LocalFrontier {
    let config = FrontierConfig {
        robots_gate: false,
        commit_every: 256,
        ..FrontierConfig::on_disk()
    };
    LocalFrontier::open(dir, Politeness::new(Config::default()), config).expect("open")
}

fn released_at(f: &mut LocalFrontier, now: UnixMillis) -> Vec<String> {
    let mut out = Vec::new();
    while let Next::Fetch(r) = block_on(f.next(now)).expect("next") {
        out.push(r.url);
    }
    out.sort();
    out
}

/// Two URLs on each of two hosts; the first of each released at `T`;
/// `a.test`'s goes out at `T + 45` (held 45 ms after its release) and
/// ends well at `T + 50`; `b.test`'s ends with a 503 and a Retry-After;
/// everything committed.
fn first_requests(f: &mut LocalFrontier) {
    for url in ["a.test/1", "a.test/2", "b.test/1", "b.test/2"] {
        block_on(f.enqueue(&format!("https://{url}"), 1, T)).expect("enqueue");
    }
    let mut released = Vec::new();
    while let Next::Fetch(r) = block_on(f.next(T)).expect("next") {
        released.push(r);
    }
    assert_eq!(released.len(), 2, "one a host");
    let now = T.add_millis(50);
    for r in &released {
        let outcome = match r.key.as_str() {
            "a.test" => Outcome::Status {
                status: 200,
                latency: 5,
                retry_after: None,
            },
            _ => Outcome::Status {
                status: 503,
                latency: 5,
                retry_after: Some(RETRY_AFTER.to_string()),
            },
        };
        block_on(f.complete(r, &outcome, now)).expect("complete");
    }
    f.commit().expect("commit");
}

/// The child's side: it only does something when the parent starts it,
/// with `dir|sync` to sync before it dies.
#[test]
fn paced_writes_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (dir, mode) = spec.split_once('|').expect("dir|mode");
    let mut f = open(Path::new(dir));
    first_requests(&mut f);
    if mode == "sync" {
        block_on(f.sync()).expect("sync");
    }
    // No destructor, no clean close: what the last commit left.
    std::process::abort();
}

/// Runs the child on `dir`, which dies after its requests (and a sync).
fn crash(dir: &Path, mode: &str) {
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args(["--exact", "paced_writes_child", "--nocapture"])
        .env(CHILD_ENV, format!("{}|{mode}", dir.display()))
        .output()
        .expect("child");
    assert!(!out.status.success(), "the child aborts");
}

#[test]
fn after_a_crash_no_host_is_fetched_sooner_and_no_ended_request_counts_as_reissued() {
    let dir = tempfile::tempdir().expect("tempdir");
    crash(dir.path(), "commit");
    let mut f = open(dir.path());
    assert_eq!(f.stats().reissued, 0, "both requests had ended");
    assert_eq!(f.stats().queued, 2);
    // Its true state would let a.test go at T + 1.045 s: held longer,
    // never sooner. The state is the one its release wrote (the request
    // in flight): the request's end wrote nothing.
    assert!(released_at(&mut f, T.add_millis(BOUND + DELAY - 1)).is_empty());
    assert_eq!(
        released_at(&mut f, T.add_millis(BOUND + DELAY)),
        ["https://a.test/2"]
    );
    // b.test's Retry-After was written when its answer came.
    let retry_at = T.add_millis(50 + RETRY_AFTER * 1000);
    assert!(released_at(&mut f, retry_at.sub_millis(1)).is_empty());
    assert_eq!(released_at(&mut f, retry_at), ["https://b.test/2"]);
}

/// a.test's state is what memory held: nothing in flight, free a delay
/// after its request went out.
fn exact(dir: &Path) {
    let mut f = open(dir);
    assert_eq!(f.stats().reissued, 0);
    let a = f.politeness.get("a.test").expect("a.test's state");
    let free = T.add_millis(45 + DELAY);
    assert_eq!((a.in_flight, a.next_allowed), (0, free));
    assert!(released_at(&mut f, free.sub_millis(1)).is_empty());
    assert_eq!(released_at(&mut f, free), ["https://a.test/2"]);
}

#[test]
fn after_a_clean_close_every_state_is_exact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut f = open(dir.path());
    first_requests(&mut f);
    drop(f);
    exact(dir.path());
}

#[test]
fn a_crash_after_a_sync_leaves_every_state_exact() {
    let dir = tempfile::tempdir().expect("tempdir");
    crash(dir.path(), "sync");
    exact(dir.path());
}
