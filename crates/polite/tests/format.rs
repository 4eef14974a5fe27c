//! The store's format version: a store written by the previous format
//! (format 1, which recorded no version; `tests/fixtures/format1` was
//! written by that release's code) opens, its entries are rewritten to
//! the current layout, and it reads on, and a store from a
//! newer format is refused with a clear error.

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

/// Opens without the robots.txt gate: pages are released at once.
fn open_ungated(dir: &Path) -> Result<LocalFrontier, FrontierError> {
    let config = FrontierConfig {
        robots_gate: false,
        ..FrontierConfig::on_disk()
    };
    LocalFrontier::open(dir, Politeness::new(Config::default()), config)
}

/// A page answered 200 in 50 ms.
fn ok() -> Outcome {
    Outcome::Status {
        status: 200,
        latency: 50,
        retry_after: None,
    }
}

#[test]
fn a_format_1_store_opens_and_keeps_its_state() {
    // The fixture's story: five URLs on a.test and b.test, both robots.txt
    // known with Crawl-delay 2; b.test/x and a.test/1 done; b.test/y in
    // flight when the process exited without completing it.
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format1"),
        tmp.path(),
    );
    let mut f = open(tmp.path()).expect("a format-1 store opens");
    let stats = f.stats();
    assert_eq!((stats.queued, stats.reissued), (3, 1), "{stats:?}");
    // The seen-set survived: finished URLs are not queued again.
    assert_eq!(
        block_on(f.enqueue("https://b.test/x", 1, T0)).expect("enqueue"),
        Admission::Duplicate
    );
    // robots.txt validity and Crawl-delay survived: pages come without a
    // robots.txt fetch, 2 s apart per host.
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
    assert_eq!(
        pages,
        [
            (4_000, "https://a.test/2".to_owned()),
            (6_000, "https://a.test/3".to_owned()),
            // In flight when the process exited: its host waits until that
            // request cannot be running any more (its start plus the 30 s
            // bound), then its Crawl-delay.
            (36_000, "https://b.test/y".to_owned()),
        ]
    );
    drop(f);
    // Reopened, it is now a current-format store.
    assert!(open(tmp.path()).is_ok());
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
            supported: 5,
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

fn set_format(dir: &Path, format: u32) {
    let db = fjall::Database::builder(dir).open().expect("fjall");
    let meta = db
        .keyspace("meta", fjall::KeyspaceCreateOptions::default)
        .expect("meta");
    meta.insert(b"format", format.to_be_bytes()).expect("write");
    db.persist(fjall::PersistMode::SyncAll).expect("sync");
}

fn format_of(dir: &Path) -> u32 {
    let db = fjall::Database::builder(dir).open().expect("fjall");
    let meta = db
        .keyspace("meta", fjall::KeyspaceCreateOptions::default)
        .expect("meta");
    let v = meta.get(b"format").expect("read").expect("a format");
    u32::from_be_bytes(v.as_ref().try_into().expect("4 bytes"))
}

/// Format 3 is format 4 without the marker `queue` and `flight` keep (the
/// next flush writes it): such a store opens as it is, keeps its entries,
/// and records 5.
#[test]
fn a_format_3_store_opens_and_records_5() {
    let tmp = tempfile::tempdir().expect("tempdir");
    {
        let mut f = open_ungated(tmp.path()).expect("create");
        for u in ["https://a.test/1", "https://a.test/2", "https://b.test/1"] {
            assert_eq!(
                block_on(f.enqueue(u, 0, T0)).expect("enqueue"),
                Admission::Queued
            );
        }
    }
    assert_eq!(format_of(tmp.path()), 5);
    set_format(tmp.path(), 3);
    {
        let mut f = open_ungated(tmp.path()).expect("a format-3 store opens");
        let mut urls: Vec<String> = f
            .queued_urls()
            .expect("scan")
            .into_iter()
            .map(|(_, u)| u)
            .collect();
        urls.sort();
        assert_eq!(
            urls,
            ["https://a.test/1", "https://a.test/2", "https://b.test/1"]
        );
    }
    assert_eq!(format_of(tmp.path()), 5);
}

/// Format 4 kept each host's politeness state as JSON: such a store opens,
/// its hosts keep their pacing, and it records 5.
#[test]
fn a_format_4_store_keeps_its_json_pacing() {
    use mannerly_polite::controller::HostState;
    let tmp = tempfile::tempdir().expect("tempdir");
    {
        let mut f = open_ungated(tmp.path()).expect("create");
        for u in ["https://a.test/1", "https://a.test/2"] {
            block_on(f.enqueue(u, 0, T0)).expect("enqueue");
        }
        let Next::Fetch(r) = block_on(f.next(T0)).expect("next") else {
            panic!("a.test/1 is due");
        };
        block_on(f.complete(&r, &ok(), T0)).expect("complete");
    }
    // Rewrite the host's state as format 4 wrote it: JSON, here holding
    // the host back for a minute with a 5 s delay.
    {
        let db = fjall::Database::builder(tmp.path()).open().expect("fjall");
        let hosts = db
            .keyspace("hosts", fjall::KeyspaceCreateOptions::default)
            .expect("hosts");
        let keys: Vec<Vec<u8>> = hosts
            .iter()
            .map(|kv| kv.key().expect("key").to_vec())
            .collect();
        assert_eq!(keys.len(), 1, "one host state");
        let state = HostState {
            next_allowed: T0.add_millis(60_000),
            base_delay: 5_000,
            delay: 5_000,
            started: 1,
            last_start: Some(T0),
            ..HostState::default()
        };
        let json = serde_json::to_vec(&state).expect("json");
        hosts.insert(&keys[0], json).expect("write");
        db.persist(fjall::PersistMode::SyncAll).expect("sync");
    }
    set_format(tmp.path(), 4);
    let mut f = open_ungated(tmp.path()).expect("a format-4 store opens");
    assert_eq!(
        block_on(f.next(T0.add_millis(1_000))).expect("next"),
        Next::Wait {
            until: T0.add_millis(60_000)
        }
    );
    let Next::Fetch(r) = block_on(f.next(T0.add_millis(60_000))).expect("next") else {
        panic!("a.test/2 is due at the minute");
    };
    assert_eq!(r.url, "https://a.test/2");
    drop(f);
    assert_eq!(format_of(tmp.path()), 5);
}
