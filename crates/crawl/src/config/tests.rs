//! The robots.txt cache's size against the crawl's pattern of use.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mannerly_fetch::policy::{NetworkError, StoredState};
use mannerly_fetch::{
    CacheConfig, FakeClock, FetchOutcome, Fetcher, MemoryStore, Origin, RobotsCache, Store,
    StoreFuture, UnixMillis, Validators,
};

use super::{robots_cache, CrawlConfig};

/// Every robots.txt fetch fails to connect (what it answers does not
/// matter here: only when the cache goes to its store does).
struct Down;

impl Fetcher for Down {
    fn fetch(
        &self,
        _: &Origin,
        _: &Validators,
    ) -> impl std::future::Future<Output = FetchOutcome> + Send {
        std::future::ready(FetchOutcome::Network {
            error: NetworkError::Connect,
            detail: "refused".into(),
            redirects: Vec::new(),
        })
    }
}

/// A store that counts its loads.
#[derive(Default)]
struct Counted {
    inner: MemoryStore,
    loads: AtomicUsize,
}

impl Store for Counted {
    fn load<'a>(&'a self, origin: &'a Origin) -> StoreFuture<'a, Option<StoredState>> {
        self.loads.fetch_add(1, Ordering::Relaxed);
        self.inner.load(origin)
    }
    fn save<'a>(&'a self, state: &'a StoredState) -> StoreFuture<'a, ()> {
        self.inner.save(state)
    }
}

/// Plays a crawl's use of the cache: `open` hosts in progress asked in
/// turn (each once a round, as its delay allows), each done after 3 to 7
/// pages and its slot given at once to a new host, 2,000 hosts in all
/// (so hosts done long ago do leave the cache). Returns how often the cache read an origin from its store.
fn loads_with(cache: CacheConfig, open: usize) -> usize {
    let store = Arc::new(Counted::default());
    let clock = Arc::new(FakeClock::new(UnixMillis::from_secs(1_795_168_800)));
    let cache = RobotsCache::new(Down, clock, store.clone(), cache);
    let origin = |i: usize| Origin::of(&format!("http://h{i}.test/")).expect("origin");
    let hosts = 2_000;
    let mut in_progress: Vec<(usize, usize)> = (0..open).map(|i| (i, 3 + i % 5)).collect();
    let mut next = open;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        while !in_progress.is_empty() {
            for slot in in_progress.iter_mut() {
                cache.decision(&origin(slot.0)).await;
                slot.1 -= 1;
                if slot.1 == 0 && next < hosts {
                    *slot = (next, 3 + next % 5);
                    cache.decision(&origin(next)).await;
                    next += 1;
                }
            }
            in_progress.retain(|s| s.1 > 0);
        }
    });
    store.loads.load(Ordering::Relaxed)
}

#[test]
fn a_host_in_progress_reads_its_rules_from_disk_once() {
    let config = CrawlConfig {
        concurrency: 64,
        ..CrawlConfig::default()
    };
    let open = config.open_hosts() as usize;
    assert_eq!(loads_with(robots_cache(&config), open), 2_000);
    // With room for only the hosts in progress, the host just done holds
    // a place a host in progress needs.
    let tight = CacheConfig {
        max_entries: open,
        ..robots_cache(&config)
    };
    let loads = loads_with(tight, open);
    assert!(loads > 5_000, "{loads} loads");
}
