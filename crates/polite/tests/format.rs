//! The store's format version: stores written by earlier formats (format
//! 1, which recorded no version, and format 5, the last with a keyspace per
//! table; `tests/fixtures/format1` and `format5` were written by those
//! releases' code) open, their entries are copied to the current layout,
//! and they read on; a store from a newer format is refused with a clear
//! error.

use std::path::Path;

use mannerly_polite::controller::{Config, Outcome, Politeness};
use mannerly_polite::frontier::block_on;
use mannerly_polite::frontier::Frontier as _;
use mannerly_polite::frontier::{
    Admission, FrontierConfig, FrontierError, Kind, LocalFrontier, Next,
};

/// When the fixture's crawl started (2026-11-20T10:00Z).
use mannerly_testsupport::T0;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read fixture") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}

fn open(dir: &Path) -> Result<LocalFrontier, FrontierError> {
    LocalFrontier::open(
        dir,
        Politeness::new(Config::default()),
        FrontierConfig::on_disk(),
    )
}

/// A page answered 200 in 50 ms.
fn ok() -> Outcome {
    Outcome::Status {
        status: 200,
        latency: 50,
        retry_after: None,
    }
}

/// A copy of the fixture `name` in a new temporary directory.
fn fixture(name: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
        tmp.path(),
    );
    tmp
}

/// The fixtures' story: five URLs on a.test and b.test, both robots.txt
/// known with Crawl-delay 2; b.test/x and a.test/1 done at 2 s; b.test/y
/// in flight (since 4 s) when the process exited without completing it.
/// Checks that `f` carries all of it on.
fn check_story(mut f: LocalFrontier) {
    let stats = f.stats();
    assert_eq!((stats.queued, stats.reissued), (3, 1), "{stats:?}");
    // The seen-set survived: finished URLs are not queued again.
    assert_eq!(
        block_on(f.enqueue("https://b.test/x", 1, T0)).expect("enqueue"),
        Admission::Duplicate
    );
    // robots.txt validity and Crawl-delay survived: pages come without a
    // robots.txt fetch, 2 s apart per host.
    assert_eq!(
        pages(&mut f),
        [
            (4_000, "https://a.test/2".to_owned()),
            (6_000, "https://a.test/3".to_owned()),
            // In flight when the process exited: its host waits until that
            // request cannot be running any more (its start plus the 30 s
            // bound), then its Crawl-delay.
            (36_000, "https://b.test/y".to_owned()),
        ]
    );
}

/// Every page `f` releases from T0 on, each completed as it comes, with
/// when (milliseconds after T0), in that order.
fn pages(f: &mut LocalFrontier) -> Vec<(u64, String)> {
    let ok = ok();
    let (mut now, mut pages) = (T0, Vec::new());
    loop {
        match block_on(f.next(now)).expect("next") {
            Next::Fetch(r) => {
                assert_eq!(r.kind, Kind::Page, "{}", r.url);
                pages.push((now.millis_since(T0), r.url.clone()));
                block_on(f.complete(&r, &ok, now)).expect("complete");
            }
            Next::Wait { until } => now = until,
            Next::Empty => break,
            Next::Busy => panic!("busy with nothing in flight"),
        }
    }
    pages.sort();
    pages
}

/// The fixture `name` opens and carries its story on; reopened, it is a
/// current-format store, its tables in `meta`.
fn opens_and_keeps_its_state(name: &str) {
    let tmp = fixture(name);
    check_story(open(tmp.path()).expect("the old store opens"));
    drop(open(tmp.path()).expect("reopen"));
    assert_eq!(format_of(tmp.path()), 7);
    assert_eq!(old_keyspaces(tmp.path()), Vec::<String>::new());
}

#[test]
fn a_format_1_store_opens_and_keeps_its_state() {
    opens_and_keeps_its_state("format1");
}

#[test]
fn a_format_5_store_opens_and_keeps_its_state() {
    opens_and_keeps_its_state("format5");
}

/// A copy cut by a kill (some entries copied, the old format still
/// recorded, the old keyspaces all there) is done again at the next open;
/// one cut after the format, before the old keyspaces were deleted, has
/// them deleted.
#[test]
fn a_copy_cut_by_a_kill_is_finished_at_the_next_open() {
    let tmp = fixture("format5");
    {
        let db = fjall::Database::builder(tmp.path()).open().expect("fjall");
        // The copy's first batch puts queued entries in `work`.
        let work = keyspace(&db, "work");
        // The first queued entry, as that batch wrote it.
        let queue = keyspace(&db, "queue");
        let (k, v) = queue
            .range(&[0u8, 0][..]..)
            .next()
            .expect("an entry")
            .into_inner()
            .expect("read");
        let mut key = vec![1u8];
        key.extend_from_slice(&k);
        work.insert(key, v).expect("write");
        db.persist(fjall::PersistMode::SyncAll).expect("sync");
    }
    check_story(open(tmp.path()).expect("the copy is done again"));
    let tmp = fixture("format5");
    drop(open(tmp.path()).expect("copied"));
    {
        let db = fjall::Database::builder(tmp.path()).open().expect("fjall");
        // An old keyspace left behind.
        keyspace(&db, "hosts");
        db.persist(fjall::PersistMode::SyncAll).expect("sync");
    }
    drop(open(tmp.path()).expect("reopen"));
    assert_eq!(old_keyspaces(tmp.path()), Vec::<String>::new());
}

/// A release of format 2 to 5 reads `format` from `meta`, as this one
/// records it: it refuses this store (after making its other keyspaces,
/// empty), and this release then opens the store as it was.
#[test]
fn an_older_release_refuses_a_current_store_and_leaves_it_whole() {
    let tmp = fixture("format5");
    drop(open(tmp.path()).expect("copied"));
    {
        // What a format-5 release does before it reads the format.
        let db = fjall::Database::builder(tmp.path()).open().expect("fjall");
        for name in ["queue", "flight", "seen", "hosts", "robots", "pad"] {
            keyspace(&db, name);
        }
        db.persist(fjall::PersistMode::SyncAll).expect("sync");
    }
    assert_eq!(format_of(tmp.path()), 7, "what a format-5 release refuses");
    let mut f = open(tmp.path()).expect("reopen");
    // b.test/y went back to the queue at the first open.
    assert_eq!(f.stats().queued, 3);
    assert_eq!(
        block_on(f.enqueue("https://b.test/x", 1, T0)).expect("enqueue"),
        Admission::Duplicate
    );
    drop(f);
    assert_eq!(old_keyspaces(tmp.path()), Vec::<String>::new());
}

#[test]
fn a_newer_format_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    drop(open(tmp.path()).expect("create"));
    // Record a future format, as a newer release would.
    set_format(tmp.path(), 99);
    match open(tmp.path()) {
        Err(FrontierError::NewerFormat {
            found: 99,
            supported: 7,
            ..
        }) => {}
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a newer format was opened"),
    }
    let msg = open(tmp.path())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        msg.contains("written in format 99") && msg.contains("upgrade mannerly"),
        "{msg}"
    );
}

/// A keyspace of the store's fjall database, made if it is not there.
fn keyspace(db: &fjall::Database, name: &str) -> fjall::Keyspace {
    db.keyspace(name, fjall::KeyspaceCreateOptions::default)
        .unwrap_or_else(|e| panic!("keyspace {name}: {e}"))
}

/// Records `format` in a store, where every release reads it (`meta`).
fn set_format(dir: &Path, format: u32) {
    let db = fjall::Database::builder(dir).open().expect("fjall");
    let meta = keyspace(&db, "meta");
    meta.insert(b"format", format.to_be_bytes()).expect("write");
    db.persist(fjall::PersistMode::SyncAll).expect("sync");
}

fn format_of(dir: &Path) -> u32 {
    let db = fjall::Database::builder(dir).open().expect("fjall");
    let meta = keyspace(&db, "meta");
    let v = meta.get(b"format").expect("read").expect("a format");
    u32::from_be_bytes(v.as_ref().try_into().expect("4 bytes"))
}

/// The keyspaces of the old layout the store still has.
fn old_keyspaces(dir: &Path) -> Vec<String> {
    let db = fjall::Database::builder(dir).open().expect("fjall");
    ["queue", "flight", "hosts", "robots"]
        .into_iter()
        .filter(|name| db.keyspace_exists(name))
        .map(str::to_owned)
        .collect()
}

/// Format 3 is format 4 without the marker `queue` and `flight` kept (the
/// next flush wrote it): such a store opens, keeps its story, and records
/// the current format.
#[test]
fn a_format_3_store_opens_and_records_the_current_format() {
    let tmp = fixture("format5");
    {
        let db = fjall::Database::builder(tmp.path()).open().expect("fjall");
        for name in ["queue", "flight"] {
            keyspace(&db, name)
                .remove([0u8])
                .expect("remove the marker");
        }
        db.persist(fjall::PersistMode::SyncAll).expect("sync");
    }
    set_format(tmp.path(), 3);
    check_story(open(tmp.path()).expect("a format-3 store opens"));
    assert_eq!(format_of(tmp.path()), 7);
}

/// Format 4 kept each host's politeness state as JSON: such a store opens,
/// its hosts keep their pacing, and it records the current format.
#[test]
fn a_format_4_store_keeps_its_json_pacing() {
    use mannerly_polite::controller::HostState;
    let tmp = fixture("format5");
    // Rewrite a.test's state as format 4 wrote it: JSON, here holding the
    // host back for a minute with a 5 s delay.
    {
        let db = fjall::Database::builder(tmp.path()).open().expect("fjall");
        let hosts = keyspace(&db, "hosts");
        assert!(
            hosts.get("a.test").expect("read").is_some(),
            "a.test's state"
        );
        let state = HostState {
            next_allowed: T0.add_millis(60_000),
            base_delay: 5_000,
            delay: 5_000,
            started: 1,
            last_start: Some(T0),
            ..HostState::default()
        };
        let json = serde_json::to_vec(&state).expect("json");
        hosts.insert("a.test", json).expect("write");
        db.persist(fjall::PersistMode::SyncAll).expect("sync");
    }
    set_format(tmp.path(), 4);
    let mut f = open(tmp.path()).expect("a format-4 store opens");
    assert_eq!(
        pages(&mut f),
        [
            (36_000, "https://b.test/y".to_owned()),
            (60_000, "https://a.test/2".to_owned()),
            (65_000, "https://a.test/3".to_owned()),
        ]
    );
    drop(f);
    assert_eq!(format_of(tmp.path()), 7);
}

/// Format 6 recorded the generation alone, and wrote a host's state when
/// each of its requests ended: such a store opens, the requests its hosts'
/// states show in flight counted re-issued, and records 7, its generation
/// carried on.
#[test]
fn a_format_6_store_counts_its_reissued_from_its_hosts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut f = open(tmp.path()).expect("create");
    block_on(f.enqueue("https://a.test/1", 1, T0)).expect("enqueue");
    assert!(matches!(block_on(f.next(T0)), Ok(Next::Fetch(_))));
    drop(f);
    let generation = {
        let db = fjall::Database::builder(tmp.path()).open().expect("fjall");
        let meta = keyspace(&db, "meta");
        let gen = meta.get(b"gen").expect("read").expect("a generation");
        assert_eq!(gen.len(), 16, "the generation, then the releases in flight");
        assert_eq!(gen[8..], 1u64.to_be_bytes());
        // As format 6 wrote it.
        meta.insert(b"gen", &gen[..8]).expect("write");
        db.persist(fjall::PersistMode::SyncAll).expect("sync");
        u64::from_be_bytes(gen[..8].try_into().expect("8 bytes"))
    };
    set_format(tmp.path(), 6);
    let f = open(tmp.path()).expect("a format-6 store opens");
    assert_eq!(f.stats().reissued, 1);
    assert_eq!(f.stats().queued, 1);
    drop(f);
    assert_eq!(format_of(tmp.path()), 7);
    let db = fjall::Database::builder(tmp.path()).open().expect("fjall");
    let gen = keyspace(&db, "meta")
        .get(b"gen")
        .expect("read")
        .expect("gen");
    assert!(u64::from_be_bytes(gen[..8].try_into().expect("8 bytes")) > generation);
}
