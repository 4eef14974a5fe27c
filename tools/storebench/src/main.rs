//! The frontier's write pattern on redb, fjall and SQLite, to choose the
//! store for `mannerly-polite`'s persistent frontier (issue 6).
//!
//! Workload, per URL: enqueue (seen-set insert + queue insert), then
//! release (queue delete + in-flight insert), then complete (in-flight
//! delete + host-state upsert); one in five enqueues also looks a URL up in
//! the seen-set (a Bloom-filter hit). Writes are grouped into commits of
//! `batch` operations. Each store is run twice:
//! - "kill -9 safe": a commit survives the process dying (redb needs an
//!   fsync for that; fjall's journal and SQLite's WAL only need the write);
//! - "power-loss safe": every commit is fsynced.
//!
//! Usage: `cargo run --release -- [urls] [hosts] [batch]`
//! (defaults 200000 10000 1000).

use redb::ReadableTable;
use std::time::Instant;

trait Store {
    fn put(&mut self, table: u8, key: &[u8], value: &[u8]);
    fn del(&mut self, table: u8, key: &[u8]);
    fn get(&mut self, table: u8, key: &[u8]) -> bool;
    fn commit(&mut self);
}

const SEEN: u8 = 0;
const QUEUE: u8 = 1;
const FLIGHT: u8 = 2;
const HOSTS: u8 = 3;
const NAMES: [&str; 4] = ["seen", "queue", "flight", "hosts"];

// ---------------------------------------------------------------- redb
struct Redb {
    db: redb::Database,
    txn: Option<redb::WriteTransaction>,
    fsync: bool,
}

fn tdef(t: u8) -> redb::TableDefinition<'static, &'static [u8], &'static [u8]> {
    redb::TableDefinition::new(NAMES[t as usize])
}

impl Redb {
    fn txn(&mut self) -> &redb::WriteTransaction {
        if self.txn.is_none() {
            let mut t = self.db.begin_write().expect("begin");
            if !self.fsync {
                t.set_durability(redb::Durability::None).expect("durability");
            }
            self.txn = Some(t);
        }
        self.txn.as_ref().expect("txn")
    }
}

impl Store for Redb {
    fn put(&mut self, table: u8, key: &[u8], value: &[u8]) {
        let t = self.txn();
        let mut tab = t.open_table(tdef(table)).expect("table");
        tab.insert(key, value).expect("insert");
    }
    fn del(&mut self, table: u8, key: &[u8]) {
        let t = self.txn();
        let mut tab = t.open_table(tdef(table)).expect("table");
        tab.remove(key).expect("remove");
    }
    fn get(&mut self, table: u8, key: &[u8]) -> bool {
        let t = self.txn();
        let tab = t.open_table(tdef(table)).expect("table");
        let found = tab.get(key).expect("get").is_some();
        found
    }
    fn commit(&mut self) {
        if let Some(t) = self.txn.take() {
            t.commit().expect("commit");
        }
    }
}

// ---------------------------------------------------------------- fjall
struct Fjall {
    db: fjall::Database,
    ks: Vec<fjall::Keyspace>,
    batch: Option<fjall::OwnedWriteBatch>,
    fsync: bool,
}

impl Fjall {
    fn batch(&mut self) -> &mut fjall::OwnedWriteBatch {
        self.batch.get_or_insert_with(|| self.db.batch())
    }
}

impl Store for Fjall {
    fn put(&mut self, table: u8, key: &[u8], value: &[u8]) {
        let ks = self.ks[table as usize].clone();
        self.batch().insert(&ks, key, value);
    }
    fn del(&mut self, table: u8, key: &[u8]) {
        let ks = self.ks[table as usize].clone();
        self.batch().remove(&ks, key);
    }
    fn get(&mut self, table: u8, key: &[u8]) -> bool {
        self.ks[table as usize].get(key).expect("get").is_some()
    }
    fn commit(&mut self) {
        if let Some(b) = self.batch.take() {
            b.commit().expect("commit");
            if self.fsync {
                self.db.persist(fjall::PersistMode::SyncAll).expect("persist");
            }
        }
    }
}

// ---------------------------------------------------------------- SQLite
struct Sqlite {
    db: rusqlite::Connection,
    open: bool,
}

impl Store for Sqlite {
    fn put(&mut self, table: u8, key: &[u8], value: &[u8]) {
        if !self.open {
            self.db.execute_batch("BEGIN").expect("begin");
            self.open = true;
        }
        let sql = format!("INSERT OR REPLACE INTO {} (k, v) VALUES (?1, ?2)", NAMES[table as usize]);
        self.db
            .prepare_cached(&sql)
            .expect("prepare")
            .execute((key, value))
            .expect("insert");
    }
    fn del(&mut self, table: u8, key: &[u8]) {
        if !self.open {
            self.db.execute_batch("BEGIN").expect("begin");
            self.open = true;
        }
        let sql = format!("DELETE FROM {} WHERE k = ?1", NAMES[table as usize]);
        self.db
            .prepare_cached(&sql)
            .expect("prepare")
            .execute([key])
            .expect("delete");
    }
    fn get(&mut self, table: u8, key: &[u8]) -> bool {
        let sql = format!("SELECT 1 FROM {} WHERE k = ?1", NAMES[table as usize]);
        let mut st = self.db.prepare_cached(&sql).expect("prepare");
        st.exists([key]).expect("get")
    }
    fn commit(&mut self) {
        if self.open {
            self.db.execute_batch("COMMIT").expect("commit");
            self.open = false;
        }
    }
}

fn open(kind: &str, fsync: bool, dir: &std::path::Path) -> Box<dyn Store> {
    match kind {
        "redb" => {
            let db = redb::Database::create(dir.join("db.redb")).expect("redb");
            Box::new(Redb { db, txn: None, fsync })
        }
        "fjall" => {
            let db = fjall::Database::builder(dir.join("fjall")).open().expect("fjall");
            let ks = NAMES
                .iter()
                .map(|n| db.keyspace(n, fjall::KeyspaceCreateOptions::default).expect("ks"))
                .collect();
            Box::new(Fjall { db, ks, batch: None, fsync })
        }
        _ => {
            let db = rusqlite::Connection::open(dir.join("db.sqlite")).expect("sqlite");
            let sync = if fsync { "FULL" } else { "NORMAL" };
            db.execute_batch(&format!("PRAGMA journal_mode=WAL; PRAGMA synchronous={sync};"))
                .expect("pragmas");
            for n in NAMES {
                db.execute_batch(&format!(
                    "CREATE TABLE {n} (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID"
                ))
                .expect("create");
            }
            Box::new(Sqlite { db, open: false })
        }
    }
}

fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn run(store: &mut dyn Store, urls: u64, hosts: u64, batch: u64) -> (f64, f64) {
    let mut ops = 0u64;
    let mut tick = |s: &mut dyn Store| {
        ops += 1;
        if ops % batch == 0 {
            s.commit();
        }
    };
    let qkey = |i: u64| {
        let mut k = Vec::with_capacity(17);
        k.extend_from_slice(&mix(i % hosts).to_be_bytes());
        k.push(128);
        k.extend_from_slice(&i.to_be_bytes());
        k
    };
    let t = Instant::now();
    for i in 0..urls {
        let url = format!("https://h{}.example.test/path/to/page-{i}.html", i % hosts);
        if i % 5 == 0 {
            store.get(SEEN, &mix(i / 2).to_be_bytes());
        }
        store.put(SEEN, &mix(i).to_be_bytes(), b"");
        store.put(QUEUE, &qkey(i), url.as_bytes());
        tick(store);
    }
    store.commit();
    let enq = urls as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    let state = [7u8; 64];
    for i in 0..urls {
        store.del(QUEUE, &qkey(i));
        store.put(FLIGHT, &i.to_be_bytes(), b"https://h.example.test/x");
        tick(store);
        store.del(FLIGHT, &i.to_be_bytes());
        store.put(HOSTS, &mix(i % hosts).to_be_bytes(), &state);
        tick(store);
    }
    store.commit();
    let rel = urls as f64 / t.elapsed().as_secs_f64();
    (enq, rel)
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let urls = args.first().copied().unwrap_or(200_000);
    let hosts = args.get(1).copied().unwrap_or(10_000);
    let batch = args.get(2).copied().unwrap_or(1_000);
    println!("{urls} URLs over {hosts} hosts, a commit every {batch} operations");
    println!("{:<6} {:<16} {:>14} {:>20} {:>10}", "store", "durability", "enqueue URL/s", "release+done URL/s", "disk MiB");
    for kind in ["redb", "fjall", "sqlite"] {
        for fsync in [false, true] {
            let dir = std::env::temp_dir().join(format!("storebench-{kind}-{fsync}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("dir");
            let mut s = open(kind, fsync, &dir);
            // redb without fsync is not kill -9 safe: only its fsynced commits survive.
            let label = match (kind, fsync) {
                ("redb", false) => "none (unsafe)",
                (_, false) => "kill -9 safe",
                (_, true) => "power-loss safe",
            };
            let (enq, rel) = run(s.as_mut(), urls, hosts, batch);
            drop(s);
            let size: u64 = walk(&dir);
            println!("{kind:<6} {label:<16} {enq:>14.0} {rel:>20.0} {:>10.1}", size as f64 / 1048576.0);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

fn walk(p: &std::path::Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else { return 0 };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => walk(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
