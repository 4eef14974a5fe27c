//! Done hosts resting in the store and waking with their state.

use super::*;

/// A host done rests (its state only in the store) and comes back as it
/// was: the Retry-After it was given holds its next page and a request
/// begun elsewhere exactly as if it had stayed in memory.
#[test]
fn a_done_host_rests_on_disk_and_wakes_with_its_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let politeness = || {
        Politeness::new(Config {
            min_delay: 1_000,
            ..Config::default()
        })
    };
    let on_disk = FrontierConfig {
        robots_gate: false,
        ..FrontierConfig::on_disk()
    };
    let mut disk = LocalFrontier::open(dir.path(), politeness(), on_disk).expect("open");
    let mut memory = LocalFrontier::in_memory(politeness(), no_gate());
    let t = T0.add_millis(100_000);
    let busy = Outcome::Status {
        status: 503,
        latency: 10,
        retry_after: Some("60".into()),
    };
    for f in [&mut disk, &mut memory] {
        block_on(f.enqueue("https://a.test/1", 1, t)).expect("enqueue");
        let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
            panic!("a release")
        };
        block_on(f.complete(&r, &busy, t.add_millis(10))).expect("complete");
        f.commit().expect("commit");
    }
    assert!(disk.politeness.get("a.test").is_none(), "at rest");
    assert_eq!(disk.resting_keys(), 1);
    assert_eq!(
        memory.resting_keys(),
        0,
        "in memory there is nowhere to rest"
    );
    let again = block_on(disk.enqueue("https://a.test/1", 1, t)).expect("enqueue");
    assert_eq!(again, Admission::Duplicate);
    assert_eq!(disk.resting_keys(), 1, "a duplicate does not wake it");
    let later = t.add_millis(5_000);
    assert_eq!(disk.census(later).done, 1);
    assert_eq!(
        disk.begin_request("https://a.test/elsewhere", later),
        memory.begin_request("https://a.test/elsewhere", later),
    );
    assert!(disk.politeness.get("a.test").is_some(), "awake");
    for f in [&mut disk, &mut memory] {
        block_on(f.enqueue("https://a.test/2", 1, later)).expect("enqueue");
    }
    let (d, m) = (block_on(disk.next(later)), block_on(memory.next(later)));
    assert_eq!(d.expect("next"), m.expect("next"));
    let at = disk.politeness.get("a.test").map(|h| h.next_allowed);
    assert!(at >= Some(t.add_millis(60_000)), "the Retry-After holds");
}

/// A done host's robots.txt gate rests with it and comes back from the
/// store: its next page goes without its robots.txt being asked for again
/// while the rules are known, and with it once they are not.
#[test]
fn a_resting_hosts_robots_gate_comes_back_from_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut f = LocalFrontier::open(
        dir.path(),
        Politeness::new(Config::default()),
        FrontierConfig::on_disk(),
    )
    .expect("open");
    let until = UnixMillis(86_400_000);
    block_on(f.enqueue("https://a.test/1", 0, T0)).expect("enqueue");
    assert_eq!(drain(&mut f).len(), 2, "robots.txt, then the page");
    f.commit().expect("commit");
    assert_eq!(f.resting_keys(), 1);
    assert!(f.robots.is_empty(), "the gate rests too");
    let later = T0.add_millis(60_000);
    block_on(f.enqueue("https://a.test/2", 0, later)).expect("enqueue");
    let Next::Fetch(r) = block_on(f.next(later)).expect("next") else {
        panic!("a release")
    };
    assert_eq!(r.url, "https://a.test/2", "its rules are still known");
    assert_eq!(
        f.robots.get("https://a.test"),
        Some(&RobotsGate::Known { until })
    );
    block_on(f.complete(&r, &ok(), later)).expect("complete");
    f.commit().expect("commit");
    // Past the rules' expiry, the robots.txt goes first again.
    let expired = until.add_millis(1);
    block_on(f.enqueue("https://a.test/3", 0, expired)).expect("enqueue");
    let Next::Fetch(r) = block_on(f.next(expired)).expect("next") else {
        panic!("a release")
    };
    assert_eq!(r.kind, Kind::Robots);
}

/// A resumed crawl rests the hosts it had finished: reopened, their
/// states leave memory at the first commit and come back when used.
#[test]
fn a_reopened_frontier_rests_the_hosts_it_had_finished() {
    let dir = tempfile::tempdir().expect("tempdir");
    let on_disk = FrontierConfig {
        robots_gate: false,
        ..FrontierConfig::on_disk()
    };
    let open = opener(dir.path(), on_disk);
    let t = T0.add_millis(100_000);
    {
        let mut f = open();
        for url in [
            "https://done.test/1",
            "https://waiting.test/1",
            "https://waiting.test/2",
        ] {
            block_on(f.enqueue(url, 1, t)).expect("enqueue");
        }
        // done.test's only page and waiting.test's first go out.
        for _ in 0..2 {
            let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
                panic!("a release")
            };
            block_on(f.complete(&r, &ok(), t)).expect("complete");
        }
        drop(f);
    }
    let mut f = open();
    assert!(f.politeness.get("done.test").is_some(), "restored at open");
    f.commit().expect("commit");
    assert_eq!(f.resting_keys(), 1, "the finished host rests");
    assert!(f.politeness.get("done.test").is_none());
    assert!(
        f.politeness.get("waiting.test").is_some(),
        "a host with a queue stays"
    );
    block_on(f.enqueue("https://done.test/2", 1, t)).expect("enqueue");
    assert!(
        f.politeness.get("done.test").is_some(),
        "woken for its new page"
    );
}

/// A store that commits every operation (a caller that never calls
/// `commit`) rests its done hosts as it goes.
#[test]
fn a_frontier_committing_every_operation_rests_done_hosts_without_a_commit_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = FrontierConfig {
        robots_gate: false,
        commit_every: 1,
        ..FrontierConfig::on_disk()
    };
    let mut f = opener(dir.path(), config)();
    let t = T0.add_millis(100_000);
    block_on(f.enqueue("https://a.test/1", 1, t)).expect("enqueue");
    let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
        panic!("a release")
    };
    block_on(f.complete(&r, &ok(), t)).expect("complete");
    block_on(f.enqueue("https://b.test/1", 1, t)).expect("enqueue");
    assert_eq!(
        f.resting_keys(),
        1,
        "a.test rests at the next operation's commit"
    );
}
