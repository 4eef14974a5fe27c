//! What the fleet's test files share: workers racing for hosts, and the
//! contract's frontier.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mannerly_fleet::client::FleetConnection;
use mannerly_fleet::{FleetConfig, FleetFrontier, Layout, TimeSource};
use mannerly_polite::controller::Outcome;
use mannerly_polite::frontier::{Frontier, FrontierConfig, FrontierError, Next};
use mannerly_polite::testing::contract_politeness;

pub use mannerly_testsupport::T0;

pub fn ok() -> Outcome {
    Outcome::Status {
        status: 200,
        latency: 10,
        retry_after: None,
    }
}

/// `https://h{h}.test/{i}` for every host and page, sorted.
pub fn grid(hosts: u64, per_host: u64) -> Vec<String> {
    let mut want: Vec<String> = (0..hosts)
        .flat_map(|h| (0..per_host).map(move |i| format!("https://h{h}.test/{i}")))
        .collect();
    want.sort();
    want
}

/// Runs `workers` at once on the caller's clock at [`T0`] until each has
/// found nothing to do 30 times running, asserting that no host is ever
/// held by two of them; returns every URL released, sorted.
pub async fn race<C: FleetConnection>(workers: Vec<FleetFrontier<C>>) -> Vec<String> {
    let holders: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let fetched: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut tasks = Vec::new();
    for (id, mut w) in workers.into_iter().enumerate() {
        let (holders, fetched) = (holders.clone(), fetched.clone());
        tasks.push(tokio::spawn(async move {
            let mut idle = 0;
            while idle < 30 {
                match w.next(T0).await.expect("next") {
                    Next::Fetch(r) => {
                        idle = 0;
                        let prev = holders.lock().expect("lock").insert(r.key.clone(), id);
                        assert!(prev.is_none(), "{} held by {prev:?} and {id}", r.key);
                        fetched.lock().expect("lock").push(r.url.clone());
                        tokio::task::yield_now().await;
                        holders.lock().expect("lock").remove(&r.key);
                        w.complete(&r, &ok(), T0).await.expect("complete");
                    }
                    _ => {
                        idle += 1;
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("worker");
    }
    let mut got = fetched.lock().expect("lock").clone();
    got.sort();
    got
}

/// The frontier the contract suite compares with the embedded one: one
/// partition, the caller's clock, a lease that never lapses in a test.
pub async fn contract_frontier<C: FleetConnection>(
    con: C,
    url: &str,
    crawl: &str,
    config: FrontierConfig,
) -> Result<FleetFrontier<C>, FrontierError> {
    FleetFrontier::open(
        con,
        url,
        Layout::new(crawl, 1).expect("layout"),
        contract_politeness(),
        config,
        FleetConfig {
            lease: Duration::from_secs(3_600),
            time: TimeSource::Caller,
            claim: 1,
            // Every answer is compared with the embedded frontier's: the
            // worker's memory answers "duplicate" where the store may say
            // the host is skipped (tests/fleet.rs covers it).
            seen_cache: 0,
            ..FleetConfig::default()
        },
    )
    .await
}
