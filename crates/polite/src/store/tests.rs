//! The store's own tests.

use super::*;

/// Thousands of small batches past the memtable size, as fast as one
/// thread commits them, while fjall's one worker flushes: every commit
/// leaves each memtable at most [`MEMTABLE_BYTES`] (the store sealed
/// it; fjall's own rotation requests, which could hang the store, never
/// start), and they all end.
#[test]
fn a_burst_of_commits_past_the_memtable_size_never_hangs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_owned();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut store = Store::open(&path, 1).expect("open");
        let value = vec![7u8; 500];
        let url = format!("http://h.test/{}", "p".repeat(400));
        for i in 0..40_000u32 {
            let key = format!("h{}", i % 5_000);
            let sort = sort_key(1, u64::from(i));
            store.put_host(&key, &value);
            store.put_queue(&key, &sort, 0, &url);
            store.put_flight(u64::from(i), &key, &sort, 0, &url);
            store.put_seen(u128::from(i));
            store.commit().expect("commit");
            // Sealed by the store itself, never left to fjall's pokes.
            for ks in store.keyspaces() {
                assert!(ks.tree.active_memtable().size() <= MEMTABLE_BYTES);
            }
        }
        drop(store);
        let _ = tx.send(());
    });
    rx.recv_timeout(std::time::Duration::from_secs(120))
        .expect("80 MB of commits end within two minutes");
}

#[test]
fn sort_keys_order_by_priority_then_arrival() {
    let a = sort_key(9, 5);
    let b = sort_key(9, 6);
    let c = sort_key(1, 1);
    assert!(a < b && b < c);
    assert_eq!((sort_priority(&a), sort_seq(&a)), (9, 5));
}

fn journals(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jnl"))
        .count()
}

/// The journals in `dir` once fjall's worker has deleted those it may:
/// it does so just after writing out the memtables a flush waits for, so
/// a count taken at once can race it. Waits (at most 10 s) for `want`.
fn journals_after_upkeep(dir: &Path, want: usize) -> usize {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let n = journals(dir);
        if n == want || std::time::Instant::now() >= until {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// How many URLs the store's queue holds.
fn queued(store: &Store) -> usize {
    let mut n = 0;
    store
        .scan_queue_raw(|_, _, _, _| {
            n += 1;
            Ok(())
        })
        .expect("scan");
    n
}

/// A journal sealed while the filler's keyspace had entries, which
/// were then cleared (no tables left), is still deleted at the next
/// flush: the marker gives each keyspace a table as new as that flush.
/// Without it fjall kept the journal, and replayed it at every open.
#[test]
fn an_emptied_keyspace_does_not_pin_old_journals() {
    let dir = tempfile::tempdir().expect("dir");
    let mut store = Store::open(dir.path(), 1).expect("open");
    let sort = sort_key(0, 1);
    store.put_flight(1, "h.test", &sort, 0, "https://h.test/");
    store.end_op().expect("op");
    store.del_flight(1);
    store.end_op().expect("op");
    assert!(
        store.pad.is_none(),
        "no filler keyspace until one is needed"
    );
    store.pad = Some(open_pad(&store.db).expect("pad"));
    // A rotation while the work keyspace's memtable holds those entries.
    let (before, bytes) = active_journal(dir.path()).expect("journal");
    store.pad_journal(bytes).expect("pad");
    let (after, _) = active_journal(dir.path()).expect("journal");
    assert!(after > before, "the journal rotated: {before} → {after}");
    store.work.rotate_memtable_and_wait().expect("flush");
    store.work.major_compact().expect("compact");
    store.flush_memtables().expect("flush");
    assert_eq!(
        journals_after_upkeep(dir.path(), 1),
        1,
        "the sealed journal was deleted"
    );
    assert!(store.scan_flight().expect("scan").is_empty());
    assert_eq!(queued(&store), 0, "the marker is not an entry");
}

/// A clean close writes out the memtable only when it is worth it: a
/// few host states stay for the next open to replay, a queue past
/// [`FLUSH_WORTH`] goes to a table, and both read back the same.
#[test]
fn a_close_writes_out_only_a_memtable_worth_a_flush() {
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("https://big.test/{}", "p".repeat(200));
    {
        let mut store = Store::open(dir.path(), 1).expect("open");
        store.put_host("small.test", b"state");
        store.commit().expect("commit");
        store.flush_large_memtables().expect("flush");
        assert!(store.tables.tree.active_memtable().size() > 0);
    }
    {
        let mut store = Store::open(dir.path(), 1).expect("reopen");
        for i in 0..2_000u64 {
            store.put_queue("big.test", &sort_key(0, i), 0, &url);
        }
        store.commit().expect("commit");
        assert!(store.work.tree.active_memtable().size() >= FLUSH_WORTH);
        store.flush_large_memtables().expect("flush");
        assert_eq!(store.work.tree.active_memtable().size(), 0);
    }
    let store = Store::open(dir.path(), 1).expect("reopen");
    assert_eq!(queued(&store), 2_000);
    assert_eq!(
        store.get_host("small.test").expect("get").as_deref(),
        Some(&b"state"[..])
    );
}

/// Creating the store makes three keyspaces; the filler's waits until a
/// journal is rotated, and the seen-set's count survives a reopen.
#[test]
fn a_new_store_is_three_keyspaces_and_counts_its_seen_set() {
    let dir = tempfile::tempdir().expect("dir");
    {
        let mut store = Store::open(dir.path(), 1).expect("open");
        assert_eq!(store.db.keyspace_count(), 3);
        for fp in 0..5u128 {
            store.put_seen(fp);
        }
        store.commit().expect("commit");
        store.put_seen(9);
        store.end_op().expect("op");
        assert_eq!(store.seen_estimate(), 6);
        assert!(store.rotate_journal(0).expect("rotate"), "rotated");
        assert_eq!(store.db.keyspace_count(), 4);
    }
    let store = Store::open(dir.path(), 1).expect("reopen");
    assert_eq!(store.seen_estimate(), 6);
    assert_eq!(store.sample_seen(3).expect("sample"), [0, 1, 2]);
}

/// A flush that never ends is an error naming the likely cause, not a
/// hang (the limit is zero here: nothing sleeps).
#[test]
fn a_flush_that_never_ends_is_an_error() {
    assert!(wait_flushed(Duration::ZERO, || true).is_ok());
    let e = wait_flushed(Duration::ZERO, || false).expect_err("never done");
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    assert!(e.to_string().contains("disk full"), "{e}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// `seen` answers as the set of fingerprints ever put, whether the
    /// answer comes from the pending batch, the recent ones (bounded here
    /// to 8, so they fill and are emptied often) or the keyspace; and
    /// the recent ones stay within their bound.
    #[test]
    fn seen_answers_as_every_fingerprint_put(
        ops in proptest::collection::vec((0u8..3, 0u128..40), 1..160),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path(), 1_000).expect("open");
        store.recent_cap = 8;
        let mut model = std::collections::HashSet::new();
        for (op, fp) in ops {
            match op {
                0 => {
                    store.put_seen(fp);
                    model.insert(fp);
                }
                1 => store.commit().expect("commit"),
                _ => proptest::prop_assert_eq!(
                    store.seen(fp).expect("seen"),
                    model.contains(&fp)
                ),
            }
            proptest::prop_assert!(store.recent_seen.len() <= 8);
        }
        store.commit().expect("commit");
        for fp in 0..40 {
            proptest::prop_assert_eq!(store.seen(fp).expect("seen"), model.contains(&fp));
        }
    }
}
